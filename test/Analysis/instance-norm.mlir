// F.instance_norm as nn.group_norm {instance} (one group per channel):
// through the memory analysis's print pass. Hand computation: %h =
// linear(x) over the last dimension is [2, 8, 4, 4] f32 = 1,024 B and
// requires grad; the group norm keeps it, a float32 mean and inverse
// deviation per sample and channel ([2, 8] x 4 B = 64 B each) and, as
// F.instance_norm's batch_norm over [1, 16, 4, 4] does, the weight repeated
// per sample (weight.repeat(2): [16] x 4 B = 64 B). The .pt2 fixture
// norm_act measures the same (test/Import/TorchExport/small.test).
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=sgd loss=mse" --vram-print-memory -o /dev/null | FileCheck %s

// Affine: 1,024 + 64 + 64 + 64 = 1,216.
// CHECK-LABEL: memory of @step
// CHECK: saved for backward 1216
func.func @forward(%x: tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32> {
  %w = nn.param "w" : tensor<4x4xf32>
  %g = nn.param "norm.weight" : tensor<8xf32>
  %b = nn.param "norm.bias" : tensor<8xf32>
  %h = nn.linear %x, %w : (tensor<2x8x4x4xf32>, tensor<4x4xf32>) -> tensor<2x8x4x4xf32>
  %y = nn.group_norm %h weight %g bias %b {num_groups = 8 : i64, instance} : (tensor<2x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x4x4xf32>
  return %y : tensor<2x8x4x4xf32>
}

// -----

// Without affine parameters nothing is repeated: 1,024 + 64 + 64 = 1,152,
// what group_norm with one group per channel keeps.
// CHECK-LABEL: memory of @step
// CHECK: saved for backward 1152
func.func @forward(%x: tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32> {
  %w = nn.param "w" : tensor<4x4xf32>
  %h = nn.linear %x, %w : (tensor<2x8x4x4xf32>, tensor<4x4xf32>) -> tensor<2x8x4x4xf32>
  %y = nn.group_norm %h {num_groups = 8 : i64, instance} : (tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32>
  return %y : tensor<2x8x4x4xf32>
}
