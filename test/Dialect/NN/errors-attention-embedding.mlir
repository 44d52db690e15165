// Invalid nn.embedding, nn.vocab_parallel_embedding and
// nn.scaled_dot_product_attention: one invalid op per split. Ops that infer
// their result type report the specific problem, then "failed to infer
// returned types".

// RUN: vram-opt %s -split-input-file -verify-diagnostics

// embedding: float indices
func.func @f(%w: tensor<100x16xf32>, %i: tensor<4xf32>) {
  // expected-error @+1 {{'nn.embedding' op operand #1 must be statically shaped tensor of signless integer values, but got 'tensor<4xf32>'}}
  %0 = nn.embedding %w, %i : (tensor<100x16xf32>, tensor<4xf32>) -> tensor<4x16xf32>
  return
}

// -----

// embedding: integer weight
func.func @f(%w: tensor<100x16xi32>, %i: tensor<4xi64>) {
  // expected-error @+1 {{'nn.embedding' op operand #0 must be statically shaped tensor of floating-point values, but got 'tensor<100x16xi32>'}}
  %0 = nn.embedding %w, %i : (tensor<100x16xi32>, tensor<4xi64>) -> tensor<4x16xi32>
  return
}

// -----

// embedding: weight of rank 3
func.func @f(%w: tensor<100x16x2xf32>, %i: tensor<4xi64>) {
  // expected-error @+2 {{expects a 2-D weight [num_embeddings, dim], got rank 3}}
  // expected-error @+1 {{'nn.embedding' op failed to infer returned types}}
  %0 = nn.embedding %w, %i : (tensor<100x16x2xf32>, tensor<4xi64>) -> tensor<4x16xf32>
  return
}

// -----

// embedding: padding_idx past the table
func.func @f(%w: tensor<100x16xf32>, %i: tensor<4xi64>) {
  // expected-error @+2 {{padding_idx 100 is out of range}}
  // expected-error @+1 {{'nn.embedding' op failed to infer returned types}}
  %0 = nn.embedding %w, %i {padding_idx = 100 : i64} : (tensor<100x16xf32>, tensor<4xi64>) -> tensor<4x16xf32>
  return
}

// -----

// embedding: negative padding_idx past the table
func.func @f(%w: tensor<100x16xf32>, %i: tensor<4xi64>) {
  // expected-error @+2 {{padding_idx -101 is out of range}}
  // expected-error @+1 {{'nn.embedding' op failed to infer returned types}}
  %0 = nn.embedding %w, %i {padding_idx = -101 : i64} : (tensor<100x16xf32>, tensor<4xi64>) -> tensor<4x16xf32>
  return
}

// -----

// embedding: wrong result shape
func.func @f(%w: tensor<100x16xf32>, %i: tensor<2x4xi64>) {
  // expected-error @+2 {{'nn.embedding' op inferred type(s) 'tensor<2x4x16xf32>' are incompatible with return type(s) of operation 'tensor<8x16xf32>'}}
  // expected-error @+1 {{'nn.embedding' op failed to infer returned types}}
  %0 = nn.embedding %w, %i : (tensor<100x16xf32>, tensor<2x4xi64>) -> tensor<8x16xf32>
  return
}

// -----

// sdpa: ranks differ
func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<4x8x16xf32>) {
  // expected-error @+2 {{query, key and value must have the same rank >= 2}}
  // expected-error @+1 {{'nn.scaled_dot_product_attention' op failed to infer returned types}}
  %0 = nn.scaled_dot_product_attention %q, %k, %k : (tensor<2x4x8x16xf32>, tensor<4x8x16xf32>, tensor<4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

// sdpa: rank 1
func.func @f(%q: tensor<16xf32>) {
  // expected-error @+2 {{query, key and value must have the same rank >= 2}}
  // expected-error @+1 {{'nn.scaled_dot_product_attention' op failed to infer returned types}}
  %0 = nn.scaled_dot_product_attention %q, %q, %q : (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return
}

// -----

// sdpa: query and key head dims differ
func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x32xf32>) {
  // expected-error @+2 {{query and key head dims differ: 16 vs 32}}
  // expected-error @+1 {{'nn.scaled_dot_product_attention' op failed to infer returned types}}
  %0 = nn.scaled_dot_product_attention %q, %k, %q : (tensor<2x4x8x16xf32>, tensor<2x4x8x32xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

// sdpa: key and value sequence lengths differ
func.func @f(%q: tensor<2x4x8x16xf32>, %v: tensor<2x4x9x16xf32>) {
  // expected-error @+2 {{key and value sequence lengths differ: 8 vs 9}}
  // expected-error @+1 {{'nn.scaled_dot_product_attention' op failed to infer returned types}}
  %0 = nn.scaled_dot_product_attention %q, %q, %v : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x9x16xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

// sdpa: head counts differ
func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>) {
  // expected-error @+2 {{batch/head dimensions differ}}
  // expected-error @+1 {{'nn.scaled_dot_product_attention' op failed to infer returned types}}
  %0 = nn.scaled_dot_product_attention %q, %k, %k : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

// sdpa: element types differ
func.func @f(%q: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf16>) {
  // expected-error @+2 {{query, key and value element types differ}}
  // expected-error @+1 {{'nn.scaled_dot_product_attention' op failed to infer returned types}}
  %0 = nn.scaled_dot_product_attention %q, %q, %v : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf16>) -> tensor<2x4x8x16xf32>
  return
}

// -----

// sdpa: unknown backend
func.func @f(%q: tensor<2x4x8x16xf32>) {
  // expected-error @+1 {{'nn.scaled_dot_product_attention' op attribute 'backend' failed to satisfy constraint: the scaled_dot_product_attention kernel}}
  %0 = nn.scaled_dot_product_attention %q, %q, %q {backend = "cudnn"} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

// sdpa: wrong result shape (the value head dim)
func.func @f(%q: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x32xf32>) {
  // expected-error @+2 {{'nn.scaled_dot_product_attention' op inferred type(s) 'tensor<2x4x8x32xf32>' are incompatible with return type(s) of operation 'tensor<2x4x8x16xf32>'}}
  // expected-error @+1 {{'nn.scaled_dot_product_attention' op failed to infer returned types}}
  %0 = nn.scaled_dot_product_attention %q, %q, %v : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x32xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

// sdpa: scale is an f64
func.func @f(%q: tensor<2x4x8x16xf32>) {
  // expected-error @+1 {{custom op 'nn.scaled_dot_product_attention' 'nn.scaled_dot_product_attention' op attribute 'scale' failed to satisfy constraint: 64-bit float attribute}}
  %0 = nn.scaled_dot_product_attention %q, %q, %q {scale = 1 : i64} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

// sdpa: mask that does not broadcast to the scores
func.func @f(%q: tensor<2x4x8x16xf32>, %m: tensor<8x9xi1>) {
  // expected-error @+1 {{'nn.scaled_dot_product_attention' op mask [8, 9] does not broadcast to the attention scores [2, 4, 8, 8]}}
  %0 = nn.scaled_dot_product_attention %q, %q, %q mask %m : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<8x9xi1>) -> tensor<2x4x8x16xf32>
  return
}

// -----

// sdpa: mask of a higher rank than the scores
func.func @f(%q: tensor<2x4x8x16xf32>, %m: tensor<1x1x1x8x8xi1>) {
  // expected-error @+1 {{'nn.scaled_dot_product_attention' op mask [1, 1, 1, 8, 8] does not broadcast to the attention scores [2, 4, 8, 8]}}
  %0 = nn.scaled_dot_product_attention %q, %q, %q mask %m : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<1x1x1x8x8xi1>) -> tensor<2x4x8x16xf32>
  return
}

// -----

// sdpa: float mask of another element type
func.func @f(%q: tensor<2x4x8x16xf32>, %m: tensor<8x8xf16>) {
  // expected-error @+1 {{'nn.scaled_dot_product_attention' op mask element type must be i1 or the query element type 'f32', got 'f16'}}
  %0 = nn.scaled_dot_product_attention %q, %q, %q mask %m : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<8x8xf16>) -> tensor<2x4x8x16xf32>
  return
}

// -----

// sdpa: integer mask
func.func @f(%q: tensor<2x4x8x16xf32>, %m: tensor<8x8xi8>) {
  // expected-error @+1 {{'nn.scaled_dot_product_attention' op mask element type must be i1 or the query element type 'f32', got 'i8'}}
  %0 = nn.scaled_dot_product_attention %q, %q, %q mask %m : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<8x8xi8>) -> tensor<2x4x8x16xf32>
  return
}

// -----

// sdpa: mask together with causal
func.func @f(%q: tensor<2x4x8x16xf32>, %m: tensor<8x8xi1>) {
  // expected-error @+1 {{'nn.scaled_dot_product_attention' op takes a mask or causal, not both}}
  %0 = nn.scaled_dot_product_attention %q, %q, %q mask %m {causal} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<8x8xi1>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @vocab_parallel_embedding_over_one_rank(%w: tensor<8x4xf32>, %ids: tensor<4xi64>) {
  // expected-error @+2 {{needs 2 <= ranks <= 262144, got 1}}
  // expected-error @+1 {{'nn.vocab_parallel_embedding' op failed to infer returned types}}
  %y = nn.vocab_parallel_embedding %w, %ids {ranks = 1 : i64} : (tensor<8x4xf32>, tensor<4xi64>) -> tensor<4x4xf32>
  return
}

// -----

func.func @vocab_parallel_embedding_flat_table(%w: tensor<8xf32>, %ids: tensor<4xi64>) {
  // expected-error @+2 {{expects a 2-D weight [num_embeddings / ranks, dim], got rank 1}}
  // expected-error @+1 {{'nn.vocab_parallel_embedding' op failed to infer returned types}}
  %y = nn.vocab_parallel_embedding %w, %ids {ranks = 2 : i64} : (tensor<8xf32>, tensor<4xi64>) -> tensor<4x4xf32>
  return
}
