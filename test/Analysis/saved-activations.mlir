// What the activations of issue 22 keep for backward, through the memory
// analysis's print pass. Hand computation: %h = linear(x) is 2x8 f32 = 64 B
// and requires grad; the linear keeps only the model input (not counted).
// Saved-tensor facts as torch 1.13 and 2.15 record them (grad_fn._saved_*,
// the same in both): leaky_relu, elu (selu, celu), softplus and mish keep
// their input; leaky_relu_ and elu_ their result, which shares the input's
// storage; mish_ a clone of its input, made before the op writes it.
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=sgd" --vram-print-memory -o /dev/null | FileCheck %s
// RUN: vram-opt %s -split-input-file --vram-print-flops -o /dev/null | FileCheck %s --check-prefix=FLOPS
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=sgd" | FileCheck %s --check-prefix=STEP

// leaky_relu keeps its input %h: 64 B.
// CHECK-LABEL: memory of @step
// CHECK: saved for backward 64
// Activations cost one FLOP per element under `full` only: 2x8 = 16 (the
// linear is 2x8x8 = 128 multiply-adds, 256 FLOPs).
// FLOPS: nn.leaky_relu {{.*}} 0 0 16
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = nn.param "w" : tensor<8x8xf32>
  %h = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %y = nn.leaky_relu %h {negative_slope = 2.0e-01 : f64} : tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// leaky_relu_ keeps its result, the storage of %h: 64 B, nothing new.
// CHECK-LABEL: memory of @step
// CHECK: saved for backward 64
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = nn.param "w" : tensor<8x8xf32>
  %h = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %y = nn.leaky_relu %h {inplace} : tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// elu keeps its input, selu_ (elu_ with SELU's coefficients) its result,
// which is %e's storage: 64 + 64 = 128 B.
// CHECK-LABEL: memory of @step
// CHECK: saved for backward 128
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = nn.param "w" : tensor<8x8xf32>
  %h = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %e = nn.elu %h : tensor<2x8xf32>
  %y = nn.elu %e {alpha = 1.6732632423543772 : f64, scale = 1.0507009873554805 : f64, inplace} : tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// softplus keeps its input, mish keeps its input (softplus's result):
// 64 + 64 = 128 B.
// CHECK-LABEL: memory of @step
// CHECK: saved for backward 128
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = nn.param "w" : tensor<8x8xf32>
  %h = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %s = nn.softplus %h {beta = 2.0 : f64} : tensor<2x8xf32>
  %y = nn.mish %s : tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// mish_ keeps a clone of %h (64 B, new memory) and overwrites %h.
// CHECK-LABEL: memory of @step
// CHECK: alloc #{{[0-9]+}} 64 activations nn.saved tensor<2x8xf32>
// CHECK: saved for backward 64
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = nn.param "w" : tensor<8x8xf32>
  %h = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %y = nn.mish %h {inplace} : tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// prelu keeps its input %h (64 B) and its weight, a parameter (PyTorch
// keeps F.prelu's [1, 8] view of it: no new memory): derivatives.yaml
// `_prelu_kernel(self, weight)`, `self, weight: _prelu_kernel_backward(grad,
// self, weight)`. Its backward computes the weight's gradient at %h's
// shape, 2x8 f32 = 64 B, which the engine sums into [8] (the workspace).
// FLOPs under `full`: forward 16; backward 16 (the input's gradient) + 16
// (the weight's, at %h's shape) + 16 (its sum) = 48.
// CHECK-LABEL: memory of @step
// CHECK: saved for backward 64
// FLOPS: nn.prelu {{.*}} 0 0 16
// STEP: nn.backward "nn.prelu" saved(%{{[0-9]+}}, %{{[0-9]+}}) {{.*}}flop_counts = array<i64: 0, 0, 48>, {{.*}}grad_operands = array<i64: 0, 1>, param_grads = array<i1: false, true>, saved_roles = [#nn.saved<operand 0>, #nn.saved<operand 1>], workspace = array<i64: 64>}
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = nn.param "w" : tensor<8x8xf32>
  %a = nn.param "a" : tensor<8xf32>
  %h = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %y = nn.prelu %h, %a : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// prelu with a frozen weight keeps the same; its backward still computes
// the weight's gradient at %h's shape (64 B), freed when the node ends
// (measured with torch 2.15: two [2, 3, 4, 4] tensors allocated, one freed
// at the node's end). FLOPs under `full`: 16 + 16 = 32.
// CHECK-LABEL: memory of @step
// CHECK: saved for backward 64
// STEP: nn.backward "nn.prelu" {{.*}}flop_counts = array<i64: 0, 0, 32>, {{.*}}grad_operands = array<i64: 0>, param_grads = array<i1: false>, saved_roles = [#nn.saved<operand 0>, #nn.saved<operand 1>], workspace = array<i64: 64>}
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = nn.param "w" : tensor<8x8xf32>
  %a = nn.param "a" {trainable = false} : tensor<1xf32>
  %h = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %y = nn.prelu %h, %a : (tensor<2x8xf32>, tensor<1xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}
