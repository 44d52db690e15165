// RUN: vram-opt %s --vram-precision="precision=amp-fp16" --vram-build-step="optimizer=sgd" | FileCheck %s
// RUN: vram-opt %s --vram-precision="precision=amp-fp16" --vram-build-step="optimizer=sgd" --vram-print-memory -o /dev/null | FileCheck %s --check-prefix=MEM
// RUN: vram-opt %s --vram-precision="precision=amp-fp16" --vram-build-step="optimizer=sgd loss=mse" | FileCheck %s --check-prefix=MSE
// RUN: not vram-opt %s --vram-precision="precision=amp-fp16" --vram-precision="precision=amp-bf16" 2>&1 | FileCheck %s --check-prefix=TWICE

// The loss runs inside the autocast region, before it exits: cross_entropy
// with dtype=float, so log_softmax keeps fp32 log-probabilities of the fp16
// logits. Backward runs outside it; each cast's backward turns the fp16
// gradient of a weight copy into the fp32 .grad of the master weight.
// CHECK-LABEL: func.func @step(%arg0: tensor<2x4xf32>, %arg1: tensor<2xi64>) -> tensor<f32> attributes {nn.autocast = f16
// CHECK: %[[L:.*]] = nn.cross_entropy %{{.*}}, %arg1 {dtype = f32} : (tensor<2x3xf16>, tensor<2xi64>) -> tensor<f32>
// CHECK-NEXT: nn.saved "log_probs" {{.*}} -> tensor<2x3xf32>
// CHECK-NEXT: nn.autocast_exit
// CHECK-NEXT: nn.backward "nn.cross_entropy" {{.*}} -> tensor<2x3xf16>
// CHECK: nn.backward "nn.cast" {{.*}} : (tensor<3x8xf16>) -> tensor<3x8xf32>
// CHECK: nn.optimizer_step sgd foreach params({{.*}}) : (tensor<8x4xf32>, tensor<8xf32>, tensor<3x8xf32>, tensor<8x4xf32>, tensor<8xf32>, tensor<3x8xf32>) -> ()

// The cached copies of fc1.weight (64 B) and fc1.bias (16 B) live until the
// region exits; fc2's copy is saved by its linear and lives until its
// backward. Peak by hand, at the cast backward that makes fc1.weight's fp32
// gradient: inputs 32 + 16, parameters 128 + 32 + 96, .grad of fc2.weight 96
// and fc1.bias 32, the loss 4, fc1.weight's fp16 gradient 64 and its fp32
// .grad 128 = 628.
// MEM: nn.autocast_exit (forward):
// MEM-NEXT: live 508
// MEM-NEXT: free #5
// MEM-NEXT: free #6
// MEM: peak 628 at [20] nn.backward

// Targets are fp32, and mse_loss is on autocast's fp32 list: the fp16
// output is cast to fp32 first.
// MSE-LABEL: func.func @step(%arg0: tensor<2x4xf32>, %arg1: tensor<2x3xf32>)
// MSE: %[[Y32:.*]] = nn.cast %{{.*}} : tensor<2x3xf16> to tensor<2x3xf32>
// MSE-NEXT: nn.mse_loss %[[Y32]], %arg1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<f32>
// MSE: nn.backward "nn.mse_loss"
// MSE-NEXT: nn.backward "nn.cast" {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf16>

// TWICE: error: the model already runs under autocast
func.func @forward(%x: tensor<2x4xf32>) -> tensor<2x3xf32> attributes {nn.batch = 2 : i64} {
  %w1 = nn.param "fc1.weight" : tensor<8x4xf32>
  %b1 = nn.param "fc1.bias" : tensor<8xf32>
  %h = nn.linear %x, %w1, %b1 : (tensor<2x4xf32>, tensor<8x4xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %r = nn.relu %h : tensor<2x8xf32>
  %w2 = nn.param "fc2.weight" : tensor<3x8xf32>
  %y = nn.linear %r, %w2 : (tensor<2x8xf32>, tensor<3x8xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
