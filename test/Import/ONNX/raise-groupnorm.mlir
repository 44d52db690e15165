// vram-onnx-raise on torch.onnx's GroupNorm: Reshape [N, G, -1],
// InstanceNormalization (imported as nn.group_norm with one group per
// channel, no affine), Reshape back, Mul by the weight, Add the bias.
// REQUIRES: onnx
// RUN: vram-opt %s -split-input-file --vram-onnx-raise | FileCheck %s

// GroupNorm(4, 16) on [2, 16, 8, 8]: one nn.group_norm of x with 4 groups,
// the weight and bias (1-D parameters) and the instance norm's eps.
// CHECK-LABEL: func.func @group_norm
// CHECK: %[[W:.*]] = nn.param "norm.weight" : tensor<16xf32>
// CHECK: %[[B:.*]] = nn.param "norm.bias" : tensor<16xf32>
// CHECK: %[[GN:.*]] = nn.group_norm %arg0 weight %[[W]] bias %[[B]] {eps = 1.000000e-03 : f64, num_groups = 4 : i64} : (tensor<2x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x16x8x8xf32>
// CHECK-NEXT: return %[[GN]]
func.func @group_norm(%x: tensor<2x16x8x8xf32>) -> tensor<2x16x8x8xf32> {
  %w = nn.param "norm.weight" : tensor<16xf32>
  %b = nn.param "norm.bias" : tensor<16xf32>
  %r = nn.reshape %x : tensor<2x16x8x8xf32> -> tensor<2x4x256xf32>
  %n = nn.group_norm %r {num_groups = 4 : i64, eps = 1.0e-3 : f64} : (tensor<2x4x256xf32>) -> tensor<2x4x256xf32>
  %back = nn.reshape %n : tensor<2x4x256xf32> -> tensor<2x16x8x8xf32>
  %wv = nn.reshape %w : tensor<16xf32> -> tensor<16x1x1xf32>
  %y = nn.mul %back, %wv : (tensor<2x16x8x8xf32>, tensor<16x1x1xf32>) -> tensor<2x16x8x8xf32>
  %bv = nn.reshape %b : tensor<16xf32> -> tensor<16x1x1xf32>
  %z = nn.add %y, %bv : (tensor<2x16x8x8xf32>, tensor<16x1x1xf32>) -> tensor<2x16x8x8xf32>
  return %z : tensor<2x16x8x8xf32>
}

// -----

// The normalized value is read elsewhere too: nothing is raised (the
// decomposition keeps what the model reads).
// CHECK-LABEL: func.func @group_norm_shared
// CHECK: nn.group_norm %{{.*}} {eps = 1.000000e-03 : f64, num_groups = 4 : i64} : (tensor<2x4x256xf32>) -> tensor<2x4x256xf32>
// CHECK: nn.mul
// CHECK: nn.add
func.func @group_norm_shared(%x: tensor<2x16x8x8xf32>) -> (tensor<2x16x8x8xf32>, tensor<2x16x8x8xf32>) {
  %w = nn.param "norm.weight" : tensor<16xf32>
  %b = nn.param "norm.bias" : tensor<16xf32>
  %r = nn.reshape %x : tensor<2x16x8x8xf32> -> tensor<2x4x256xf32>
  %n = nn.group_norm %r {num_groups = 4 : i64, eps = 1.0e-3 : f64} : (tensor<2x4x256xf32>) -> tensor<2x4x256xf32>
  %back = nn.reshape %n : tensor<2x4x256xf32> -> tensor<2x16x8x8xf32>
  %wv = nn.reshape %w : tensor<16xf32> -> tensor<16x1x1xf32>
  %y = nn.mul %back, %wv : (tensor<2x16x8x8xf32>, tensor<16x1x1xf32>) -> tensor<2x16x8x8xf32>
  %bv = nn.reshape %b : tensor<16xf32> -> tensor<16x1x1xf32>
  %z = nn.add %y, %bv : (tensor<2x16x8x8xf32>, tensor<16x1x1xf32>) -> tensor<2x16x8x8xf32>
  return %z, %back : tensor<2x16x8x8xf32>, tensor<2x16x8x8xf32>
}
