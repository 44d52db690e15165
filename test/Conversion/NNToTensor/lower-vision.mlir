// RUN: vram-opt %S/../../Execution/Inputs/cnn.mlir --vram-build-step="mode=train optimizer=sgd" --vram-lower-to-tensor | FileCheck %s

// conv1 (no bias): one new output tensor, zero-filled, viewed (with the
// weight) as one group, then an 8-D loop nest (n, g, f, oh, ow, c, kh, kw)
// whose padded reads are bounds-checked selects: no padded copy, and the
// result is the new tensor itself (a view back to NCHW).
// CHECK-LABEL: func.func @step
// CHECK: %[[C0:.*]] = bufferization.alloc_tensor() : tensor<2x4x8x8xf32>
// CHECK-NEXT: arith.constant 0.000000e+00
// CHECK-NEXT: %[[C1:.*]] = linalg.fill {{.*}} outs(%[[C0]] : tensor<2x4x8x8xf32>)
// CHECK-NEXT: %[[Y5:.*]] = tensor.expand_shape %[[C1]] {{.*}} into tensor<2x1x4x8x8xf32>
// CHECK-NEXT: %[[W5:.*]] = tensor.expand_shape %arg2 {{.*}} into tensor<1x4x3x3x3xf32>
// CHECK-NEXT: %[[Y:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]{{.*}} ins(%[[W5]] : tensor<1x4x3x3x3xf32>) outs(%[[Y5]] : tensor<2x1x4x8x8xf32>)
// CHECK: tensor.extract %arg0
// CHECK: arith.select
// CHECK: tensor.collapse_shape %[[Y]] {{.*}} into tensor<2x4x8x8xf32>
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
