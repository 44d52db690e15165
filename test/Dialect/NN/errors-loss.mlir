// Invalid nn.cross_entropy, nn.vocab_parallel_cross_entropy and nn.mse_loss:
// one invalid op per split. The losses infer their result type: they report
// the specific problem, then "failed to infer returned types".

// RUN: vram-opt %s -split-input-file -verify-diagnostics

// cross_entropy: target with the class dimension
func.func @f(%x: tensor<2x10xf32>, %t: tensor<2x10xi64>) {
  // expected-error @+2 {{target must be [2], got [2, 10]}}
  // expected-error @+1 {{'nn.cross_entropy' op failed to infer returned types}}
  %0 = nn.cross_entropy %x, %t : (tensor<2x10xf32>, tensor<2x10xi64>) -> tensor<f32>
  return
}

// -----

// cross_entropy: target batch differs
func.func @f(%x: tensor<2x10xf32>, %t: tensor<3xi64>) {
  // expected-error @+2 {{target must be [2], got [3]}}
  // expected-error @+1 {{'nn.cross_entropy' op failed to infer returned types}}
  %0 = nn.cross_entropy %x, %t : (tensor<2x10xf32>, tensor<3xi64>) -> tensor<f32>
  return
}

// -----

// cross_entropy: spatial target of the wrong size
func.func @f(%x: tensor<2x21x8x8xf32>, %t: tensor<2x8x4xi64>) {
  // expected-error @+2 {{target must be [2, 8, 8], got [2, 8, 4]}}
  // expected-error @+1 {{'nn.cross_entropy' op failed to infer returned types}}
  %0 = nn.cross_entropy %x, %t : (tensor<2x21x8x8xf32>, tensor<2x8x4xi64>) -> tensor<f32>
  return
}

// -----

// cross_entropy: logits of rank 1
func.func @f(%x: tensor<10xf32>, %t: tensor<i64>) {
  // expected-error @+2 {{expects logits [N, C, ...]}}
  // expected-error @+1 {{'nn.cross_entropy' op failed to infer returned types}}
  %0 = nn.cross_entropy %x, %t : (tensor<10xf32>, tensor<i64>) -> tensor<f32>
  return
}

// -----

// cross_entropy: float target (class probabilities are not supported)
func.func @f(%x: tensor<2x10xf32>, %t: tensor<2x10xf32>) {
  // expected-error @+1 {{'nn.cross_entropy' op operand #1 must be statically shaped tensor of signless integer values, but got 'tensor<2x10xf32>'}}
  %0 = nn.cross_entropy %x, %t : (tensor<2x10xf32>, tensor<2x10xf32>) -> tensor<f32>
  return
}

// -----

// cross_entropy: non-scalar result
func.func @f(%x: tensor<2x10xf32>, %t: tensor<2xi64>) {
  // expected-error @+2 {{'nn.cross_entropy' op inferred type(s) 'tensor<f32>' are incompatible with return type(s) of operation 'tensor<2xf32>'}}
  // expected-error @+1 {{'nn.cross_entropy' op failed to infer returned types}}
  %0 = nn.cross_entropy %x, %t : (tensor<2x10xf32>, tensor<2xi64>) -> tensor<2xf32>
  return
}

// -----

// mse_loss: target shape differs
func.func @f(%x: tensor<2x10xf32>, %t: tensor<2x1xf32>) {
  // expected-error @+2 {{target type 'tensor<2x1xf32>' does not match input type 'tensor<2x10xf32>'}}
  // expected-error @+1 {{'nn.mse_loss' op failed to infer returned types}}
  %0 = nn.mse_loss %x, %t : (tensor<2x10xf32>, tensor<2x1xf32>) -> tensor<f32>
  return
}

// -----

// mse_loss: dtypes promote (an fp16 output against fp32 targets gives an
// fp32 loss), so an fp16 loss is wrong.
func.func @f(%x: tensor<2x10xf16>, %t: tensor<2x10xf32>) {
  // expected-error @+2 {{'nn.mse_loss' op inferred type(s) 'tensor<f32>' are incompatible with return type(s) of operation 'tensor<f16>'}}
  // expected-error @+1 {{'nn.mse_loss' op failed to infer returned types}}
  %0 = nn.mse_loss %x, %t : (tensor<2x10xf16>, tensor<2x10xf32>) -> tensor<f16>
  return
}

// -----

// mse_loss: result of another element type
func.func @f(%x: tensor<2x10xbf16>, %t: tensor<2x10xbf16>) {
  // expected-error @+2 {{'nn.mse_loss' op inferred type(s) 'tensor<bf16>' are incompatible with return type(s) of operation 'tensor<f32>'}}
  // expected-error @+1 {{'nn.mse_loss' op failed to infer returned types}}
  %0 = nn.mse_loss %x, %t : (tensor<2x10xbf16>, tensor<2x10xbf16>) -> tensor<f32>
  return
}

// -----

// fused_linear_cross_entropy: Liger's matmul runs in one dtype
func.func @f(%x: tensor<4x8xbf16>, %w: tensor<16x8xf32>, %t: tensor<4xi64>) {
  // expected-error @+2 {{hidden states and weight must have one dtype}}
  // expected-error @+1 {{'nn.fused_linear_cross_entropy' op failed to infer returned types}}
  %0 = nn.fused_linear_cross_entropy %x, %w, %t : (tensor<4x8xbf16>, tensor<16x8xf32>, tensor<4xi64>) -> tensor<f32>
  return
}

// -----

// fused_linear_cross_entropy: a target per token
func.func @f(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %t: tensor<2xi64>) {
  // expected-error @+2 {{target must be [4], got [2]}}
  // expected-error @+1 {{'nn.fused_linear_cross_entropy' op failed to infer returned types}}
  %0 = nn.fused_linear_cross_entropy %x, %w, %t : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<2xi64>) -> tensor<f32>
  return
}

// -----

// fused_linear_cross_entropy: hidden size
func.func @f(%x: tensor<4x8xf32>, %w: tensor<16x4xf32>, %t: tensor<4xi64>) {
  // expected-error @+2 {{hidden size 8 does not match the weight's 4}}
  // expected-error @+1 {{'nn.fused_linear_cross_entropy' op failed to infer returned types}}
  %0 = nn.fused_linear_cross_entropy %x, %w, %t : (tensor<4x8xf32>, tensor<16x4xf32>, tensor<4xi64>) -> tensor<f32>
  return
}

// -----

func.func @vocab_parallel_cross_entropy_bf16(%x: tensor<4x8xbf16>, %t: tensor<4xi64>) {
  // expected-error @+2 {{expects fp32 logits, got 'bf16'}}
  // expected-error @+1 {{'nn.vocab_parallel_cross_entropy' op failed to infer returned types}}
  %l = nn.vocab_parallel_cross_entropy %x, %t {ranks = 2 : i64} : (tensor<4x8xbf16>, tensor<4xi64>) -> tensor<f32>
  return
}

// -----

func.func @vocab_parallel_cross_entropy_target(%x: tensor<4x8xf32>, %t: tensor<8xi64>) {
  // expected-error @+2 {{target must be [4], got [8]}}
  // expected-error @+1 {{'nn.vocab_parallel_cross_entropy' op failed to infer returned types}}
  %l = nn.vocab_parallel_cross_entropy %x, %t {ranks = 2 : i64} : (tensor<4x8xf32>, tensor<8xi64>) -> tensor<f32>
  return
}

// -----

func.func @vocab_parallel_cross_entropy_over_one_rank(%x: tensor<4x8xf32>, %t: tensor<4xi64>) {
  // expected-error @+2 {{needs 2 <= ranks <= 262144, got 1}}
  // expected-error @+1 {{'nn.vocab_parallel_cross_entropy' op failed to infer returned types}}
  %l = nn.vocab_parallel_cross_entropy %x, %t {ranks = 1 : i64} : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<f32>
  return
}
