// RUN: vram-opt %S/../../Execution/Inputs/cnn.mlir --vram-build-step="mode=train optimizer=sgd" --vram-lower-to-tensor | FileCheck %s

// conv1 (no bias, 3x3, padding 1, 8x8): one new output tensor,
// zero-filled, viewed (with the weight) as one group, then 8-D loop nests
// (n, g, f, oh, ow, c, kh, kw) by output region, each written in place
// through a slice: the interior rows and columns 1..6 (every tap in
// bounds: ceil(1/1) = 1 to (8 - 1 + 1 - 2) / 1 = 6) read x through the
// affine map (d3 + d6, d4 + d7) = ((oh + 1) + kh - 1, ...), no check; the
// border strips (row 0, row 7, then column 0 and column 7 of rows 1..6)
// read it through bounds-checked selects. No padded copy; the result is
// the new tensor itself (a view back to NCHW).
// CHECK: #[[XMAP:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 * 3 + d5, d3 + d6, d4 + d7)>
// CHECK-LABEL: func.func @step
// CHECK: %[[C0:.*]] = bufferization.alloc_tensor() : tensor<2x4x8x8xf32>
// CHECK-NEXT: arith.constant 0.000000e+00
// CHECK-NEXT: %[[C1:.*]] = linalg.fill {{.*}} outs(%[[C0]] : tensor<2x4x8x8xf32>)
// CHECK-NEXT: %[[Y5:.*]] = tensor.expand_shape %[[C1]] {{.*}} into tensor<2x1x4x8x8xf32>
// CHECK-NEXT: %[[W5:.*]] = tensor.expand_shape %arg2 {{.*}} into tensor<1x4x3x3x3xf32>
// CHECK-NEXT: %[[IN:.*]] = tensor.extract_slice %[[Y5]][0, 0, 0, 1, 1] [2, 1, 4, 6, 6] [1, 1, 1, 1, 1]
// CHECK-NEXT: %[[YI:.*]] = linalg.generic {indexing_maps = [#[[XMAP]], {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]{{.*}} ins(%arg0, %[[W5]] : tensor<2x3x8x8xf32>, tensor<1x4x3x3x3xf32>) outs(%[[IN]] : tensor<2x1x4x6x6xf32>)
// CHECK-NOT: tensor.extract %arg0
// CHECK: %[[Y1:.*]] = tensor.insert_slice %[[YI]] into %[[Y5]][0, 0, 0, 1, 1] [2, 1, 4, 6, 6]
// CHECK-NEXT: tensor.extract_slice %[[Y1]][0, 0, 0, 0, 0] [2, 1, 4, 1, 8]
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[W5]] : tensor<1x4x3x3x3xf32>)
// CHECK: tensor.extract %arg0
// CHECK: arith.select
// CHECK: %[[Y2:.*]] = tensor.insert_slice {{.*}} into %[[Y1]][0, 0, 0, 0, 0] [2, 1, 4, 1, 8]
// CHECK-NEXT: tensor.extract_slice %[[Y2]][0, 0, 0, 7, 0] [2, 1, 4, 1, 8]
// CHECK: %[[Y3:.*]] = tensor.insert_slice {{.*}} into %[[Y2]][0, 0, 0, 7, 0] [2, 1, 4, 1, 8]
// CHECK-NEXT: tensor.extract_slice %[[Y3]][0, 0, 0, 1, 0] [2, 1, 4, 6, 1]
// CHECK: %[[Y4:.*]] = tensor.insert_slice {{.*}} into %[[Y3]][0, 0, 0, 1, 0] [2, 1, 4, 6, 1]
// CHECK-NEXT: tensor.extract_slice %[[Y4]][0, 0, 0, 1, 7] [2, 1, 4, 6, 1]
// CHECK: %[[Y:.*]] = tensor.insert_slice {{.*}} into %[[Y4]][0, 0, 0, 1, 7] [2, 1, 4, 6, 1]
// CHECK-NEXT: tensor.collapse_shape %[[Y]] {{.*}} into tensor<2x4x8x8xf32>
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
