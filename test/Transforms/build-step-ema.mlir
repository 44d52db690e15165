// RUN: vram-opt %s --vram-build-step="optimizer=sgd ema=true" | FileCheck %s
// RUN: not vram-opt %s --vram-build-step="mode=inference ema=true" 2>&1 | FileCheck %s --check-prefix=INF

// AveragedModel: a copy of every parameter (trainable or not) and buffer,
// the n_averaged counter, and after the optimizer an in-place lerp of every
// parameter's copy.
// CHECK-LABEL: func.func @step
// CHECK-SAME: nn.ema
// CHECK: nn.optimizer_buffer "ema.n_averaged" : tensor<i64>
// CHECK: %[[F:.*]] = nn.param "frozen.weight" {trainable = false} : tensor<8x8xf32>
// CHECK-NEXT: %[[EF:.*]] = nn.ema_copy %[[F]] : tensor<8x8xf32>
// CHECK: %[[W:.*]] = nn.param "fc.weight" : tensor<4x8xf32>
// CHECK-NEXT: %[[EW:.*]] = nn.ema_copy %[[W]] : tensor<4x8xf32>
// CHECK: nn.optimizer_step sgd
// CHECK: nn.ema_update params(%[[F]], %[[W]]) averaged(%[[EF]], %[[EW]])
// CHECK-NEXT: return
// INF: ema applies to a training step
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %f = nn.param "frozen.weight" {trainable = false} : tensor<8x8xf32>
  %h = nn.linear %x, %f : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %w = nn.param "fc.weight" : tensor<4x8xf32>
  %y = nn.linear %h, %w : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

