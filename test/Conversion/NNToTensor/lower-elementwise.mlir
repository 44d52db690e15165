// RUN: vram-opt %s --vram-build-step="mode=train optimizer=sgd loss=mse" --vram-lower-to-tensor | FileCheck %s

// A broadcasting mul then a sigmoid: each op and each backward node writes
// one new tensor (what the memory analysis allocates). The gradient of the
// broadcast operand is computed at the output's shape and then summed over
// the broadcast dimensions, as MulBackward0 and the autograd engine's
// sum_to do (the full-size temporary is the node's workspace).
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[BC:.*]] = affine_map<(d0, d1, d2) -> (0, d2)>
// CHECK-LABEL: func.func @step
// nn.mul: a * b, b read at (0, d2).
// CHECK: %[[M0:.*]] = bufferization.alloc_tensor() : tensor<2x3x5xf32>
// CHECK-NEXT: %[[M:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[BC]], #[[ID]]], {{.*}} ins(%arg1, %arg2 : {{.*}}) outs(%[[M0]] : tensor<2x3x5xf32>)
// CHECK: arith.mulf
// nn.sigmoid: 1 / (1 + exp(-x)) into a new tensor, kept for backward.
// CHECK: %[[S0:.*]] = bufferization.alloc_tensor() : tensor<2x3x5xf32>
// CHECK-NEXT: %[[S:.*]] = linalg.generic {{.*}} ins(%[[M]] : tensor<2x3x5xf32>) outs(%[[S0]] : tensor<2x3x5xf32>)
// CHECK: math.exp
// mse_loss's backward (its node reads the saved target last), then
// sigmoid's: g * (1 - y) * y from the saved y.
// CHECK: tensor.extract %arg0[
// CHECK-NEXT: %[[GS0:.*]] = bufferization.alloc_tensor() : tensor<2x3x5xf32>
// CHECK-NEXT: %[[GS:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[S]] : tensor<2x3x5xf32>, tensor<2x3x5xf32>) outs(%[[GS0]] : tensor<2x3x5xf32>)
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: arith.mulf
// mul's backward: grad a = g * b and g * a, both at [2, 3, 5], then grad b
// = the latter summed over (d0, d1) into a zero-filled [1, 5] tensor.
// CHECK: %[[GA0:.*]] = bufferization.alloc_tensor() : tensor<2x3x5xf32>
// CHECK-NEXT: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]{{.*}} ins(%[[GS]], %arg1, %arg2 : {{.*}}) outs(%[[GA0]] : tensor<2x3x5xf32>)
// CHECK: %[[GF0:.*]] = bufferization.alloc_tensor() : tensor<2x3x5xf32>
// CHECK-NEXT: %[[GF:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]{{.*}} ins(%[[GS]], %arg1, %arg2 : {{.*}}) outs(%[[GF0]] : tensor<2x3x5xf32>)
// CHECK: %[[GB0:.*]] = bufferization.alloc_tensor() : tensor<1x5xf32>
// CHECK: %[[GB1:.*]] = linalg.fill {{.*}} outs(%[[GB0]] : tensor<1x5xf32>)
// CHECK-NEXT: linalg.generic {indexing_maps = [#[[ID]], #[[BC]]], iterator_types = ["reduction", "reduction", "parallel"]} ins(%[[GF]] : tensor<2x3x5xf32>) outs(%[[GB1]] : tensor<1x5xf32>)
// CHECK-NOT: bufferization.alloc_tensor
// CHECK: return
func.func @forward() -> tensor<2x3x5xf32> {
  %a = nn.param "a" : tensor<2x3x5xf32>
  %b = nn.param "b" : tensor<1x5xf32>
  %m = nn.mul %a, %b : (tensor<2x3x5xf32>, tensor<1x5xf32>) -> tensor<2x3x5xf32>
  %y = nn.sigmoid %m : tensor<2x3x5xf32>
  return %y : tensor<2x3x5xf32>
}
