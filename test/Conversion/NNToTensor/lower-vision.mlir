// RUN: vram-opt %S/../../Execution/Inputs/cnn.mlir --vram-build-step="mode=train optimizer=sgd" --vram-lower-to-tensor | FileCheck %s

// conv1 (no bias): one new output tensor, zero-filled, then a 7-D loop nest
// (n, f, oh, ow, c, kh, kw) whose padded reads are bounds-checked selects:
// no padded copy.
// CHECK-LABEL: func.func @step
// CHECK: %[[C0:.*]] = bufferization.alloc_tensor() : tensor<2x4x8x8xf32>
// CHECK-NEXT: arith.constant 0.000000e+00
// CHECK-NEXT: %[[C1:.*]] = linalg.fill {{.*}} outs(%[[C0]] : tensor<2x4x8x8xf32>)
// CHECK-NEXT: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]{{.*}} ins(%arg2 : tensor<4x3x3x3xf32>) outs(%[[C1]] : tensor<2x4x8x8xf32>)
// CHECK: tensor.extract %arg0
// CHECK: arith.select
// batch_norm: batch statistics on the stack, a new output, the running
// statistics updated in place.
// CHECK: memref.alloca() : memref<4xf32>
// CHECK: memref.alloca() : memref<4xf32>
// CHECK: bufferization.alloc_tensor() : tensor<2x4x8x8xf32>
// CHECK: math.rsqrt
// CHECK: outs(%arg5 : tensor<4xf32>)
// CHECK: outs(%arg6 : tensor<4xf32>)
// The saved per-channel mean and inverse std are new fp32 tensors.
// CHECK: bufferization.alloc_tensor() : tensor<4xf32>
// CHECK: bufferization.alloc_tensor() : tensor<4xf32>
// relu_ writes the batch norm's output.
// max_pool2d: a new output, then the saved int64 indices.
// CHECK: bufferization.alloc_tensor() : tensor<2x4x4x4xf32>
// CHECK: bufferization.alloc_tensor() : tensor<2x4x4x4xi64>
// The residual += writes conv2's output.
// adaptive_avg_pool2d to 2x2: a 2x2 window over an affine map.
// CHECK: bufferization.alloc_tensor() : tensor<2x4x2x2xf32>
