// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=sgd max-grad-norm=0.5" --vram-lower-to-tensor="lr=0.5" -verify-diagnostics | FileCheck %s

// nn.clip_grad_norm (clip_grad_norm_ in torch 2.x): the stack of the
// per-gradient norms is a new [1] tensor (one gradient here); each norm a
// new 0-d tensor, sqrt(sum g^2); the total the norm of the stack; then
// min(0.5 / (total + 1e-6), 1) on scalars, and the gradient scaled in
// place before SGD reads it.
// CHECK-LABEL: func.func @step
// CHECK: %[[STACK:.*]] = bufferization.alloc_tensor() : tensor<1xf32>
// CHECK: %[[N0:.*]] = bufferization.alloc_tensor() : tensor<f32>
// CHECK: %[[Z:.*]] = linalg.fill {{.*}} outs(%[[N0]] : tensor<f32>)
// CHECK: %[[SQ:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%[[G:.*]] : tensor<3x4xf32>) outs(%[[Z]] : tensor<f32>)
// CHECK: %[[NORM:.*]] = linalg.generic {{.*}} outs(%[[SQ]] : tensor<f32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: math.sqrt
// CHECK: %[[V:.*]] = tensor.extract %[[NORM]][] : tensor<f32>
// CHECK: %[[S:.*]] = tensor.insert %[[V]] into %[[STACK]]
// CHECK: bufferization.alloc_tensor() : tensor<f32>
// CHECK: ins(%[[S]] : tensor<1xf32>)
// CHECK: math.sqrt
// CHECK: arith.constant 5.000000e-01 : f32
// CHECK: arith.divf
// CHECK: %[[COEF:.*]] = arith.minimumf
// CHECK: %[[CLIPPED:.*]] = linalg.generic {{.*}} outs(%[[G]] : tensor<3x4xf32>)
// CHECK-NEXT: ^bb0(%[[OUT:.*]]: f32):
// CHECK-NEXT: arith.mulf %[[OUT]], %[[COEF]] : f32
// CHECK: linalg.generic {{.*}} ins(%[[CLIPPED]] : tensor<3x4xf32>) outs(%{{.*}} : tensor<3x4xf32>)
func.func @forward(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = nn.param "fc.weight" : tensor<3x4xf32>
  %y = nn.linear %x, %w : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// The lowering computes in float32 only: a bfloat16 model's gradients are
// one error at the clipping (placed at the step's return).
func.func @forward(%x: tensor<2x4xbf16>) -> tensor<2x3xbf16> {
  %w = nn.param "fc.weight" : tensor<3x4xbf16>
  %y = nn.linear %x, %w : (tensor<2x4xbf16>, tensor<3x4xbf16>) -> tensor<2x3xbf16>
  // expected-error @+1 {{executing clip_grad_norm_ over 'bf16' gradients is not supported (float32 only)}}
  return %y : tensor<2x3xbf16>
}
