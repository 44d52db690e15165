// nn.conv_transpose2d, nn.upsample_nearest2d and nn.upsample_bilinear2d:
// the round trip (default
// attributes elided), the inferred output size of a transposed convolution
// (torch.nn.ConvTranspose2d's formula), and verifier errors.

// RUN: vram-opt --format=mlir %s -split-input-file | FileCheck %s
// RUN: vram-opt --format=mlir %s -split-input-file -mlir-print-op-generic | vram-opt --format=mlir - -split-input-file | FileCheck %s

// (16 - 1) * 2 - 2 * 0 + 1 * (2 - 1) + 0 + 1 = 32;
// with padding 1, output_padding 1, kernel 3: (16 - 1) * 2 - 2 + 2 + 1 + 1 = 32.
// CHECK-LABEL: func.func @conv_transpose
// CHECK: nn.conv_transpose2d %{{.*}}, %{{.*}}, %{{.*}} {strides = array<i64: 2, 2>} : (tensor<2x16x16x16xf32>, tensor<16x8x2x2xf32>, tensor<8xf32>) -> tensor<2x8x32x32xf32>
// CHECK: nn.conv_transpose2d %{{.*}}, %{{.*}} {output_padding = array<i64: 1, 1>, padding = array<i64: 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x16x16x16xf32>, tensor<16x4x3x3xf32>) -> tensor<2x4x32x32xf32>
// Groups: weight [Cin, Cout/groups, kh, kw], Cout = 2 x 2.
// CHECK: nn.conv_transpose2d %{{.*}}, %{{.*}} {groups = 2 : i64} : (tensor<2x16x16x16xf32>, tensor<16x2x1x1xf32>) -> tensor<2x4x16x16xf32>
func.func @conv_transpose(%x: tensor<2x16x16x16xf32>, %w: tensor<16x8x2x2xf32>,
                          %b: tensor<8xf32>, %w3: tensor<16x4x3x3xf32>,
                          %wg: tensor<16x2x1x1xf32>) {
  %0 = nn.conv_transpose2d %x, %w, %b {strides = array<i64: 2, 2>} : (tensor<2x16x16x16xf32>, tensor<16x8x2x2xf32>, tensor<8xf32>) -> tensor<2x8x32x32xf32>
  %1 = nn.conv_transpose2d %x, %w3 {strides = array<i64: 2, 2>, padding = array<i64: 1, 1>, output_padding = array<i64: 1, 1>} : (tensor<2x16x16x16xf32>, tensor<16x4x3x3xf32>) -> tensor<2x4x32x32xf32>
  %2 = nn.conv_transpose2d %x, %wg {groups = 2 : i64} : (tensor<2x16x16x16xf32>, tensor<16x2x1x1xf32>) -> tensor<2x4x16x16xf32>
  return
}

// CHECK-LABEL: func.func @upsample
// CHECK: nn.upsample_nearest2d %{{.*}} : (tensor<2x8x16x16xf32>) -> tensor<2x8x32x32xf32>
func.func @upsample(%x: tensor<2x8x16x16xf32>) {
  %0 = nn.upsample_nearest2d %x : (tensor<2x8x16x16xf32>) -> tensor<2x8x32x32xf32>
  return
}

// -----

// CHECK-LABEL: func.func @bilinear
// CHECK: nn.upsample_bilinear2d %{{.*}} : (tensor<2x8x16x16xf32>) -> tensor<2x8x32x32xf32>
// CHECK: nn.upsample_bilinear2d %{{.*}} {align_corners} : (tensor<2x8x16x16xf32>) -> tensor<2x8x7x9xf32>
// CHECK: nn.upsample_bilinear2d %{{.*}} {scales = array<f64: 1.500000e+00, 2.000000e+00>} : (tensor<2x8x16x16xf32>) -> tensor<2x8x24x32xf32>
func.func @bilinear(%x: tensor<2x8x16x16xf32>) {
  %0 = nn.upsample_bilinear2d %x : (tensor<2x8x16x16xf32>) -> tensor<2x8x32x32xf32>
  %1 = nn.upsample_bilinear2d %x {align_corners} : (tensor<2x8x16x16xf32>) -> tensor<2x8x7x9xf32>
  %2 = nn.upsample_bilinear2d %x {scales = array<f64: 1.5, 2.0>} : (tensor<2x8x16x16xf32>) -> tensor<2x8x24x32xf32>
  return
}
