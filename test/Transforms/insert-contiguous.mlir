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

// -----

// sdpa's flash kernel lays its output out as the query (empty_like; torch
// 2.15 on the CPU: a contiguous q gives a contiguous output). A query made
// by elementwise ops from a transposed [B, T, H, D] projection is laid out
// as that projection (TensorIterator keeps operand 0's order): the output
// is [B, T, H, D] in memory and merging the heads is a view. A query that
// torch.cat made contiguous (Phi-3's rotary) gives a contiguous output,
// and the merge copies.
// CHECK-LABEL: func.func @flash_output_follows_query
// CHECK: %[[Y1:.*]] = nn.scaled_dot_product_attention
// CHECK-NEXT: %[[T1:.*]] = nn.transpose %[[Y1]]
// CHECK-NEXT: nn.reshape %[[T1]] : tensor<2x4x8x16xf32> -> tensor<2x4x128xf32>
// CHECK-NEXT: nn.concat
// CHECK-NEXT: %[[Y2:.*]] = nn.scaled_dot_product_attention
// CHECK-NEXT: %[[T2:.*]] = nn.transpose %[[Y2]]
// CHECK-NEXT: %[[C2:.*]] = nn.contiguous %[[T2]]
// CHECK-NEXT: nn.reshape %[[C2]] : tensor<2x4x8x16xf32> -> tensor<2x4x128xf32>
func.func @flash_output_follows_query(%x: tensor<2x4x128xf32>, %cos: tensor<1x4x16xf32>) -> (tensor<2x4x128xf32>, tensor<2x4x128xf32>) {
  %v = nn.reshape %x : tensor<2x4x128xf32> -> tensor<2x4x8x16xf32>
  %t = nn.transpose %v {dim0 = 1, dim1 = 2} : (tensor<2x4x8x16xf32>) -> tensor<2x8x4x16xf32>
  %q = nn.mul %t, %cos : (tensor<2x8x4x16xf32>, tensor<1x4x16xf32>) -> tensor<2x8x4x16xf32>
  %y = nn.scaled_dot_product_attention %q, %t, %t {backend = #nn<backend flash>} : (tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>) -> tensor<2x8x4x16xf32>
  %m = nn.transpose %y {dim0 = 1, dim1 = 2} : (tensor<2x8x4x16xf32>) -> tensor<2x4x8x16xf32>
  %r = nn.reshape %m : tensor<2x4x8x16xf32> -> tensor<2x4x128xf32>
  %qc = nn.concat %q {dim = 3 : i64} : (tensor<2x8x4x16xf32>) -> tensor<2x8x4x16xf32>
  %y2 = nn.scaled_dot_product_attention %qc, %t, %t {backend = #nn<backend flash>} : (tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>) -> tensor<2x8x4x16xf32>
  %m2 = nn.transpose %y2 {dim0 = 1, dim1 = 2} : (tensor<2x8x4x16xf32>) -> tensor<2x4x8x16xf32>
  %r2 = nn.reshape %m2 : tensor<2x4x8x16xf32> -> tensor<2x4x128xf32>
  return %r, %r2 : tensor<2x4x128xf32>, tensor<2x4x128xf32>
}
