// RUN: vram-opt %s --vram-build-step="mode=train optimizer=sgd grad-accum=2" --vram-lower-to-tensor="lr=0.5" | FileCheck %s
// RUN: vram-opt %s --vram-build-step="mode=train optimizer=sgd set-to-none=false" --vram-lower-to-tensor="lr=0.5" | FileCheck %s

// .grad kept across micro-batches (grad-accum) or steps (set_to_none=False):
// each parameter's .grad is an argument after the parameters (storage
// "gradients"), the new gradient backward computes is added into it in
// place, and the update reads .grad; the step returns it with the
// parameters.
// CHECK: func.func @step(%[[X:.*]]: tensor<2x4xf32> {{{.*}}}, %{{.*}}: tensor<2xi64> {{{.*}}}, %[[W:.*]]: tensor<3x4xf32> {vram.name = "fc.weight", vram.storage = "parameters"}, %[[G:.*]]: tensor<3x4xf32> {vram.name = "fc.weight.grad", vram.storage = "gradients"}) -> (tensor<f32> {vram.name = "loss"}, tensor<3x4xf32> {vram.name = "fc.weight"}, tensor<3x4xf32> {vram.name = "fc.weight.grad"})
// The weight gradient g^T x, a new tensor.
// CHECK: %[[NEW:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[X]] : tensor<2x3xf32>, tensor<2x4xf32>) outs(%{{.*}} : tensor<3x4xf32>)
// .grad += it, in place.
// CHECK: %[[ACC:.*]] = linalg.generic {{.*}} ins(%[[NEW]] : tensor<3x4xf32>) outs(%[[G]] : tensor<3x4xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT: arith.addf %[[OUT]], %[[IN]] : f32
// SGD: p -= 0.5 .grad.
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins(%[[ACC]] : tensor<3x4xf32>) outs(%[[W]] : tensor<3x4xf32>)
// CHECK: arith.constant -5.000000e-01
// CHECK: return %{{.*}}, %[[P]], %[[ACC]] : tensor<f32>, tensor<3x4xf32>, tensor<3x4xf32>
func.func @forward(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = nn.param "fc.weight" : tensor<3x4xf32>
  %y = nn.linear %x, %w : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
