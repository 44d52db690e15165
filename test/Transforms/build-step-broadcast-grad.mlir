// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=sgd loss=mse" | FileCheck %s

// A broadcast operand of a mul that needs a gradient: MulBackward0 computes
// it at the output's shape (grad * other, [2, 3, 5] f32 = 120 bytes) and
// the engine reduces it to [1, 5] afterwards (sum_to): the node's
// workspace. Measured with torch 2.15 on Qwen2-MoE's shared-expert gate
// (test/Import/HuggingFace/moe.test).
// CHECK-LABEL: func.func @step
// CHECK: nn.backward "nn.mul" {{.*}}workspace = array<i64: 120>
func.func @forward() -> tensor<2x3x5xf32> {
  %a = nn.param "a" : tensor<2x3x5xf32>
  %b = nn.param "b" : tensor<1x5xf32>
  %m = nn.mul %a, %b : (tensor<2x3x5xf32>, tensor<1x5xf32>) -> tensor<2x3x5xf32>
  %y = nn.sigmoid %m : tensor<2x3x5xf32>
  return %y : tensor<2x3x5xf32>
}

// -----

// Both broadcast (a [2, 1] x [1, 5] outer product): two [2, 5] gradients
// before the reductions, two allocations of 40 bytes.
// CHECK-LABEL: func.func @step
// CHECK: nn.backward "nn.mul" {{.*}}workspace = array<i64: 40, 40>
func.func @forward() -> tensor<2x5xf32> {
  %a = nn.param "a" : tensor<2x1xf32>
  %b = nn.param "b" : tensor<1x5xf32>
  %m = nn.mul %a, %b : (tensor<2x1xf32>, tensor<1x5xf32>) -> tensor<2x5xf32>
  %y = nn.sigmoid %m : tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

// -----

// Same shapes, or a broadcast operand that needs no gradient: no
// workspace. An add hands the gradient itself to the engine's reduction.
// CHECK-LABEL: func.func @step
// CHECK: nn.backward "nn.add"
// CHECK-NOT: workspace
// CHECK: nn.backward "nn.mul"
// CHECK-NOT: workspace
// CHECK: return
func.func @forward() -> tensor<2x3x5xf32> {
  %a = nn.param "a" : tensor<2x3x5xf32>
  %b = nn.constant dense<2.000000e+00> : tensor<1x5xf32>
  %c = nn.param "c" : tensor<1x5xf32>
  %m = nn.mul %a, %b : (tensor<2x3x5xf32>, tensor<1x5xf32>) -> tensor<2x3x5xf32>
  %s = nn.add %m, %c : (tensor<2x3x5xf32>, tensor<1x5xf32>) -> tensor<2x3x5xf32>
  %y = nn.sigmoid %s : tensor<2x3x5xf32>
  return %y : tensor<2x3x5xf32>
}
