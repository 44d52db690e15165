// vram-onnx-raise on nn.Linear as torch.onnx exports it on >2-D inputs:
// MatMul with an [in, out] initializer or a Transpose of the [out, in] one,
// then Add of the bias.
// REQUIRES: onnx
// RUN: vram-opt %s -split-input-file --vram-onnx-raise | FileCheck %s
// The whole ONNX import pipeline (in-place inference first) gives the same.
// RUN: vram-opt %s -split-input-file --vram-onnx-import | FileCheck %s

// [in, out] weight: the parameter is stored [out, in] under its name, in
// its place among the parameters; the bias Add folds in.
// CHECK-LABEL: func.func @matmul_in_out
// CHECK-NEXT: %[[W:.*]] = nn.param "onnx::MatMul_7" : tensor<64x16xf32>
// CHECK-NEXT: %[[B:.*]] = nn.param "fc.bias" : tensor<64xf32>
// CHECK-NEXT: %[[L:.*]] = nn.linear %arg0, %[[W]], %[[B]] : (tensor<2x8x16xf32>, tensor<64x16xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
// CHECK-NEXT: return %[[L]]
func.func @matmul_in_out(%x: tensor<2x8x16xf32>) -> tensor<2x8x64xf32> {
  %w = nn.param "onnx::MatMul_7" : tensor<16x64xf32>
  %b = nn.param "fc.bias" : tensor<64xf32>
  %m = nn.matmul %x, %w : (tensor<2x8x16xf32>, tensor<16x64xf32>) -> tensor<2x8x64xf32>
  %y = nn.add %b, %m : (tensor<64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  return %y : tensor<2x8x64xf32>
}

// -----

// Transpose of an [out, in] weight, no bias.
// CHECK-LABEL: func.func @transpose_matmul
// CHECK-NEXT: %[[W:.*]] = nn.param "fc.weight" : tensor<64x16xf32>
// CHECK-NEXT: %[[L:.*]] = nn.linear %arg0, %[[W]] : (tensor<2x16xf32>, tensor<64x16xf32>) -> tensor<2x64xf32>
// CHECK-NEXT: return %[[L]]
func.func @transpose_matmul(%x: tensor<2x16xf32>) -> tensor<2x64xf32> {
  %w = nn.param "fc.weight" : tensor<64x16xf32>
  %t = nn.permute %w {dims = array<i64: 1, 0>} : (tensor<64x16xf32>) -> tensor<16x64xf32>
  %m = nn.matmul %x, %t : (tensor<2x16xf32>, tensor<16x64xf32>) -> tensor<2x64xf32>
  return %m : tensor<2x64xf32>
}

// -----

// A weight also used elsewhere (tied embedding) stays [in, out] and is
// viewed transposed; a 2-D bias stays an add.
// CHECK-LABEL: func.func @tied_weight
// CHECK-NEXT: %[[W:.*]] = nn.param "tok.weight" : tensor<16x32xf32>
// CHECK-NEXT: %[[B:.*]] = nn.param "b" : tensor<1x32xf32>
// CHECK-NEXT: %[[T:.*]] = nn.permute %[[W]] {dims = array<i64: 1, 0>} : (tensor<16x32xf32>) -> tensor<32x16xf32>
// CHECK-NEXT: %[[L:.*]] = nn.linear %arg0, %[[T]] : (tensor<2x16xf32>, tensor<32x16xf32>) -> tensor<2x32xf32>
// CHECK-NEXT: %[[A:.*]] = nn.add %[[L]], %[[B]]
// CHECK-NEXT: return %[[A]], %[[W]]
func.func @tied_weight(%x: tensor<2x16xf32>) -> (tensor<2x32xf32>, tensor<16x32xf32>) {
  %w = nn.param "tok.weight" : tensor<16x32xf32>
  %b = nn.param "b" : tensor<1x32xf32>
  %m = nn.matmul %x, %w : (tensor<2x16xf32>, tensor<16x32xf32>) -> tensor<2x32xf32>
  %y = nn.add %m, %b : (tensor<2x32xf32>, tensor<1x32xf32>) -> tensor<2x32xf32>
  return %y, %w : tensor<2x32xf32>, tensor<16x32xf32>
}

// -----

// A matmul of two activations, or of a buffer, is not a Linear.
// CHECK-LABEL: func.func @not_linear
// CHECK-NOT: nn.linear
// CHECK: return
func.func @not_linear(%x: tensor<2x16xf32>, %y: tensor<16x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %c = nn.buffer "proj" : tensor<16x8xf32>
  %m = nn.matmul %x, %y : (tensor<2x16xf32>, tensor<16x8xf32>) -> tensor<2x8xf32>
  %n = nn.matmul %x, %c : (tensor<2x16xf32>, tensor<16x8xf32>) -> tensor<2x8xf32>
  return %m, %n : tensor<2x8xf32>, tensor<2x8xf32>
}
