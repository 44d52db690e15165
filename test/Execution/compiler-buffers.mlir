// RUN: vram-opt %s -split-input-file --vram-compiler-buffers | FileCheck %s
// REQUIRES: execution

// PyTorch's fresh buffers become tensor.empty; an elementwise op whose
// input is dead afterwards writes into it (one-shot bufferization's
// analysis finds no conflict); the sum's inputs are function arguments,
// which are never reused: it keeps its own (empty) buffer.
#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @dead_input
// CHECK-NOT: bufferization.alloc_tensor
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<4xf32>, tensor<4xf32>) outs(%[[E]] : tensor<4xf32>)
// CHECK-NOT: tensor.empty
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[S]] : tensor<4xf32>) outs(%[[S]] : tensor<4xf32>)
// CHECK: return %[[R]]
func.func @dead_input(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = bufferization.alloc_tensor() : tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%0 : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %v = arith.addf %x, %y : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %1 = bufferization.alloc_tensor() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%s : tensor<4xf32>) outs(%1 : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %v = arith.maximumf %x, %z : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// The input is still read after the op (returned): writing into it would
// clobber it, the analysis says so and the op keeps a new buffer.
#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @live_input
// CHECK: %[[S:.*]] = linalg.generic
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[S]] : tensor<4xf32>) outs(%[[E]] : tensor<4xf32>)
// CHECK: return %[[R]], %[[S]]
func.func @live_input(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = bufferization.alloc_tensor() : tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%0 : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %v = arith.addf %x, %y : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %1 = bufferization.alloc_tensor() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%s : tensor<4xf32>) outs(%1 : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %v = arith.maximumf %x, %z : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %r, %s : tensor<4xf32>, tensor<4xf32>
}

// -----

// A reduction (its init is read: the fill) is not rewritten; an input with
// another type than the result is not reused.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @not_elementwise
// CHECK: %[[T:.*]] = tensor.empty() : tensor<2x4xf32>
// CHECK: %[[S:.*]] = linalg.generic {{.*}} outs(%[[T]] : tensor<2x4xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK: %[[F:.*]] = linalg.fill {{.*}} outs(%[[E]] : tensor<4xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[S]] : tensor<2x4xf32>) outs(%[[F]] : tensor<4xf32>)
func.func @not_elementwise(%a: tensor<2x4xf32>) -> tensor<4xf32> {
  %t = bufferization.alloc_tensor() : tensor<2x4xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<2x4xf32>) outs(%t : tensor<2x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %v = arith.addf %x, %x : f32
    linalg.yield %v : f32
  } -> tensor<2x4xf32>
  %0 = bufferization.alloc_tensor() : tensor<4xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%0 : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["reduction", "parallel"]}
      ins(%s : tensor<2x4xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %v = arith.addf %o, %x : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
