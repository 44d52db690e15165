// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=sgd" --vram-lower-to-tensor="lr=0.5 markers=true" | FileCheck %s
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=adam" --vram-lower-to-tensor | FileCheck %s --check-prefix=ADAM

// Linear -> relu -> cross-entropy, SGD. Parameters become arguments after
// the step's own (input, labels); the function returns the loss, then the
// parameters the update wrote in place.
// CHECK-LABEL: func.func private @__vram_op(i64)
// CHECK: func.func @step(%[[X:.*]]: tensor<2x4xf32> {vram.name = "input0", vram.storage = "inputs"}, %[[T:.*]]: tensor<2xi64> {vram.name = "labels", vram.storage = "inputs"}, %[[W:.*]]: tensor<3x4xf32> {vram.name = "fc.weight", vram.storage = "parameters"}, %[[B:.*]]: tensor<3xf32> {vram.name = "fc.bias", vram.storage = "parameters"}) -> (tensor<f32> {vram.name = "loss"}, tensor<3x4xf32> {vram.name = "fc.weight"}, tensor<3xf32> {vram.name = "fc.bias"})
// The marker names op 3 of the step (after the two nn.param ops).
// CHECK: %[[C3:.*]] = arith.constant 3 : i64
// CHECK-NEXT: call @__vram_op(%[[C3]])
// nn.linear: a new [2, 3] tensor, the bias broadcast into it, then x W^T.
// CHECK-NEXT: %[[Y0:.*]] = bufferization.alloc_tensor() : tensor<2x3xf32>
// CHECK-NEXT: %[[Y1:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<3xf32>) outs(%[[Y0]] : tensor<2x3xf32>)
// CHECK: %[[Y:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%[[X]], %[[W]] : tensor<2x4xf32>, tensor<3x4xf32>) outs(%[[Y1]] : tensor<2x3xf32>)
// CHECK: arith.mulf
// CHECK-NEXT: arith.addf
// nn.relu: a new tensor.
// CHECK: call @__vram_op
// CHECK-NEXT: %[[R0:.*]] = bufferization.alloc_tensor() : tensor<2x3xf32>
// CHECK-NEXT: %[[R:.*]] = linalg.generic {{.*}} ins(%[[Y]] : tensor<2x3xf32>) outs(%[[R0]] : tensor<2x3xf32>)
// CHECK: arith.maximumf
// nn.cross_entropy: per-row max and sum of exp on the stack, the loss a new
// scalar: sum_n (log sum + max - x[n, t[n]]), times 1/N = 0.5.
// CHECK: call @__vram_op
// CHECK-NEXT: memref.alloca() : memref<2xf32>
// CHECK-NEXT: bufferization.to_tensor {{.*}} restrict writable
// CHECK: math.exp
// CHECK: bufferization.alloc_tensor() : tensor<f32>
// CHECK: tensor.extract %[[R]]
// CHECK: math.log
// CHECK: arith.constant 5.000000e-01 : f32
// The saved log-probabilities (nn.saved), a new [2, 3] tensor.
// CHECK: call @__vram_op
// CHECK: %[[LP0:.*]] = bufferization.alloc_tensor() : tensor<2x3xf32>
// CHECK: %[[LP:.*]] = linalg.generic {{.*}} outs(%[[LP0]] : tensor<2x3xf32>)
// Its backward: the dense nll gradient (-1/N at the target), then
// g - exp(logp) * sum(g).
// CHECK: call @__vram_op
// CHECK-NEXT: %[[D0:.*]] = bufferization.alloc_tensor() : tensor<2x3xf32>
// CHECK-NEXT: %[[D:.*]] = linalg.generic {{.*}} ins(%[[T]] : tensor<2xi64>) outs(%[[D0]] : tensor<2x3xf32>)
// CHECK: arith.constant -5.000000e-01 : f32
// CHECK: %[[GL:.*]] = linalg.generic {{.*}} ins(%[[D]], %[[LP]], %{{.*}} : {{.*}}) outs(%{{.*}} : tensor<2x3xf32>)
// relu's backward reads its saved output.
// CHECK: call @__vram_op
// CHECK: %[[GR:.*]] = linalg.generic {{.*}} ins(%[[GL]], %[[R]] : tensor<2x3xf32>, tensor<2x3xf32>)
// CHECK: arith.cmpf ogt
// linear's backward: g^T x for the weight, the row sum for the bias (the
// input needs no gradient).
// CHECK: call @__vram_op
// CHECK: %[[GW:.*]] = linalg.generic {{.*}} ins(%[[GR]], %[[X]] : tensor<2x3xf32>, tensor<2x4xf32>) outs(%{{.*}} : tensor<3x4xf32>)
// CHECK: %[[GB:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]{{.*}} ins(%[[GR]] : tensor<2x3xf32>) outs(%{{.*}} : tensor<3xf32>)
// SGD: p += -lr * g, in place into the parameter.
// CHECK: call @__vram_op
// CHECK-NEXT: %[[NW:.*]] = linalg.generic {{.*}} ins(%[[GW]] : tensor<3x4xf32>) outs(%[[W]] : tensor<3x4xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.constant -5.000000e-01 : f32
// CHECK: %[[NB:.*]] = linalg.generic {{.*}} ins(%[[GB]] : tensor<3xf32>) outs(%[[B]] : tensor<3xf32>)
// CHECK: return %{{.*}}, %[[NW]], %[[NB]] : tensor<f32>, tensor<3x4xf32>, tensor<3xf32>

// Adam (foreach, torch 2): the moments in place into the state, one new
// sqrt(v)/sqrt(bc2)+eps list per parameter, then param -= lr/bc1 * m/denom.
// ADAM: func.func @step({{.*}}%[[W:arg[0-9]+]]: tensor<3x4xf32> {vram.name = "fc.weight", vram.storage = "parameters"}, %[[M:arg[0-9]+]]: tensor<3x4xf32> {vram.name = "fc.weight.exp_avg", vram.storage = "optimizer_state"}, %[[V:arg[0-9]+]]: tensor<3x4xf32> {vram.name = "fc.weight.exp_avg_sq", vram.storage = "optimizer_state"}
// ADAM: %[[NM:.*]] = linalg.generic {{.*}} outs(%[[M]] : tensor<3x4xf32>)
// ADAM: %[[NV:.*]] = linalg.generic {{.*}} outs(%[[V]] : tensor<3x4xf32>)
// ADAM: %[[DEN0:.*]] = bufferization.alloc_tensor() : tensor<3x4xf32>
// ADAM-NEXT: %[[DEN:.*]] = linalg.generic {{.*}} ins(%[[NV]] : tensor<3x4xf32>) outs(%[[DEN0]] : tensor<3x4xf32>)
// ADAM: math.sqrt
// ADAM: %[[NW:.*]] = linalg.generic {{.*}} ins(%[[NM]], %[[DEN]] : tensor<3x4xf32>, tensor<3x4xf32>) outs(%[[W]] : tensor<3x4xf32>)
// lr / (1 - 0.9) = 0.1
// ADAM: arith.constant -1.000000e-01 : f32
// ADAM: return %{{.*}}, %[[NW]], %[[NM]], %[[NV]]
func.func @forward(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = nn.param "fc.weight" : tensor<3x4xf32>
  %b = nn.param "fc.bias" : tensor<3xf32>
  %h = nn.linear %x, %w, %b : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %r = nn.relu %h : tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
