// vram-build-step's grad-accum option: a count of micro-batches, for a
// training step only (errors at the module).
// RUN: vram-opt %s -verify-diagnostics --vram-build-step="mode=train grad-accum=0"
// RUN: not vram-opt %s --vram-build-step="mode=inference grad-accum=2" 2>&1 | FileCheck %s --check-prefix=INFER
// INFER: error: grad-accum applies to a training step (mode=train)

// expected-error @below {{grad-accum must be at least 1, got 0}}
module {
  func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %w = nn.param "w" : tensor<8x8xf32>
    %y = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
    return %y : tensor<2x8xf32>
  }
}
