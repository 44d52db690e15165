// max-grad-norm clips every gradient before the update: a negative or
// non-finite norm, inference, and optimizer-in-backward are errors.
// RUN: not vram-opt %s --vram-build-step="mode=train max-grad-norm=-1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NEG
// NEG: error: max-grad-norm must be a finite number >= 0, got -1
// RUN: not vram-opt %s --vram-build-step="mode=train optimizer-in-backward max-grad-norm=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=INBWD
// INBWD: error: max-grad-norm clips every gradient before the update: it applies to a training step without optimizer-in-backward
// RUN: not vram-opt %s --vram-build-step="mode=inference max-grad-norm=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=INBWD

func.func @forward(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = nn.param "fc.weight" : tensor<4x4xf32>
  %y = nn.linear %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
