// RUN: vram-opt %s -split-input-file --vram-insert-contiguous | FileCheck %s

// reshape of a transposed tensor cannot be a view: PyTorch copies first.
// CHECK-LABEL: func.func @reshape_of_transpose
// CHECK: %[[T:.*]] = nn.transpose %arg0
// CHECK-NEXT: %[[C:.*]] = nn.contiguous %[[T]] : tensor<2x16x8xf32>
// CHECK-NEXT: nn.reshape %[[C]]
func.func @reshape_of_transpose(%x: tensor<2x8x16xf32>) -> tensor<2x128xf32> {
  %t = nn.transpose %x {dim0 = 1, dim1 = 2} : (tensor<2x8x16xf32>) -> tensor<2x16x8xf32>
  %r = nn.reshape %t : tensor<2x16x8xf32> -> tensor<2x128xf32>
  return %r : tensor<2x128xf32>
}

// -----

// Splitting one dimension of a transposed tensor is a view: [2, 16, 8] with
// strides [128, 1, 16] viewed as [2, 16, 2, 4] splits the last dim (8
// elements of stride 16) into 2 x 4 with strides 64 and 16. No copy.
// CHECK-LABEL: func.func @split_is_a_view
// CHECK-NOT: nn.contiguous
func.func @split_is_a_view(%x: tensor<2x8x16xf32>) -> tensor<2x16x2x4xf32> {
  %t = nn.transpose %x {dim0 = 1, dim1 = 2} : (tensor<2x8x16xf32>) -> tensor<2x16x8xf32>
  %r = nn.reshape %t : tensor<2x16x8xf32> -> tensor<2x16x2x4xf32>
  return %r : tensor<2x16x2x4xf32>
}

// -----

// A slice along the last dim keeps the row stride: flattening the first two
// dims ([2, 4] with strides [4*12, 12]) is a view; flattening all is not.
// CHECK-LABEL: func.func @slice_then_flatten
// CHECK: %[[S:.*]] = nn.slice
// CHECK-NEXT: nn.reshape %[[S]] : tensor<2x4x4xf32> -> tensor<8x4xf32>
// CHECK-NEXT: %[[C:.*]] = nn.contiguous %[[S]]
// CHECK-NEXT: nn.reshape %[[C]] : tensor<2x4x4xf32> -> tensor<32xf32>
func.func @slice_then_flatten(%x: tensor<2x4x12xf32>) -> (tensor<8x4xf32>, tensor<32xf32>) {
  %s = nn.slice %x {dim = 2, start = 0, end = 4} : (tensor<2x4x12xf32>) -> tensor<2x4x4xf32>
  %a = nn.reshape %s : tensor<2x4x4xf32> -> tensor<8x4xf32>
  %b = nn.reshape %s : tensor<2x4x4xf32> -> tensor<32xf32>
  return %a, %b : tensor<8x4xf32>, tensor<32xf32>
}

// -----

// F.linear folds a 3-D input to [-1, in]: a transposed input is copied; a
// contiguous one is not.
// CHECK-LABEL: func.func @linear_folds
// CHECK: %[[T:.*]] = nn.transpose
// CHECK-NEXT: %[[C:.*]] = nn.contiguous %[[T]]
// CHECK-NEXT: nn.linear %[[C]]
// CHECK-NEXT: nn.linear %arg0
func.func @linear_folds(%x: tensor<2x8x8xf32>) -> (tensor<2x8x4xf32>, tensor<2x8x4xf32>) {
  %w = nn.param "w" : tensor<4x8xf32>
  %t = nn.transpose %x {dim0 = 1, dim1 = 2} : (tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %a = nn.linear %t, %w : (tensor<2x8x8xf32>, tensor<4x8xf32>) -> tensor<2x8x4xf32>
  %b = nn.linear %x, %w : (tensor<2x8x8xf32>, tensor<4x8xf32>) -> tensor<2x8x4xf32>
  return %a, %b : tensor<2x8x4xf32>, tensor<2x8x4xf32>
}

// -----

// 3-D x 3-D is bmm on the views themselves: no copy.
// CHECK-LABEL: func.func @bmm_reads_views
// CHECK-NOT: nn.contiguous
func.func @bmm_reads_views(%q: tensor<4x8x16xf32>) -> tensor<4x8x8xf32> {
  %k = nn.transpose %q {dim0 = 1, dim1 = 2} : (tensor<4x8x16xf32>) -> tensor<4x16x8xf32>
  %s = nn.matmul %q, %k : (tensor<4x8x16xf32>, tensor<4x16x8xf32>) -> tensor<4x8x8xf32>
  return %s : tensor<4x8x8xf32>
}
