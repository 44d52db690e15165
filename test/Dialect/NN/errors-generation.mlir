// RUN: vram-opt %s -split-input-file -verify-diagnostics

func.func @update_counts_tokens(%p: tensor<1x2x5x8xf32>, %k: tensor<1x2x1x8xf32>) {
  // expected-error @+1 {{'nn.kv_cache_update' op appends 1 tokens to 5: the result must have 6, not 7}}
  %c = nn.kv_cache_update past %p, %k : (tensor<1x2x5x8xf32>, tensor<1x2x1x8xf32>) -> tensor<1x2x7x8xf32>
  return
}

// -----

func.func @update_keeps_heads(%k: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'nn.kv_cache_update' op states and result 'tensor<1x2x4x8xf32>' and 'tensor<1x4x4x8xf32>' differ in more than their tokens}}
  %c = nn.kv_cache_update %k : (tensor<1x2x4x8xf32>) -> tensor<1x4x4x8xf32>
  return
}

// -----

func.func @update_rank(%k: tensor<2x4x8xf32>) {
  // expected-error @+1 {{'nn.kv_cache_update' op caches are [batch, kv heads, tokens, head dim], got states and result of rank 3 and 3}}
  %c = nn.kv_cache_update %k : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return
}

// -----

func.func @past_only_grows(%c: tensor<1x2x5x8xf32>) {
  // expected-error @+1 {{'nn.kv_cache_past' op a cache only grows: 5 tokens cannot become 4}}
  %p = nn.kv_cache_past %c : tensor<1x2x5x8xf32> -> tensor<1x2x4x8xf32>
  return
}

// -----

// A sliding window's layer may shrink to the window, not past it.
func.func @past_window(%c: tensor<1x2x9x8xf32>) {
  %s = nn.kv_cache_past %c {window = 4 : i64} : tensor<1x2x9x8xf32> -> tensor<1x2x4x8xf32>
  // expected-error @+1 {{'nn.kv_cache_past' op a sliding window of 4 keeps at most that many tokens, not 5}}
  %p = nn.kv_cache_past %c {window = 4 : i64} : tensor<1x2x9x8xf32> -> tensor<1x2x5x8xf32>
  return
}

// -----

func.func @past_keeps_dtype(%c: tensor<1x2x5x8xf32>) {
  // expected-error @+1 {{'nn.kv_cache_past' op cache and result 'tensor<1x2x5x8xf32>' and 'tensor<1x2x6x8xbf16>' differ in more than their tokens}}
  %p = nn.kv_cache_past %c : tensor<1x2x5x8xf32> -> tensor<1x2x6x8xbf16>
  return
}

// -----

func.func @next_token_of_the_last_position(%l: tensor<2x3x16xf32>) {
  // expected-error @+1 {{'nn.next_token' op takes the last position's logits [batch, 1, vocab], got 'tensor<2x3x16xf32>'}}
  %s, %t = nn.next_token %l : tensor<2x3x16xf32> -> (tensor<2x16xf32>, tensor<2x1xi64>)
  return
}

// -----

func.func @next_token_scores_are_float32(%l: tensor<2x1x16xbf16>) {
  // expected-error @+1 {{'nn.next_token' op scores are the float32 [batch, vocab] copy, got 'tensor<2x16xbf16>'}}
  %s, %t = nn.next_token %l : tensor<2x1x16xbf16> -> (tensor<2x16xbf16>, tensor<2x1xi64>)
  return
}

// -----

// generate() runs the warpers only when sampling.
func.func @warpers_need_sampling(%l: tensor<2x1x16xf32>) {
  // expected-error @+1 {{'nn.next_token' op temperature, top_k, top_p and min_p are sampling's warpers: they need `sample` (generate(do_sample=True))}}
  %s, %t = nn.next_token %l {top_k = 50 : i64} : tensor<2x1x16xf32> -> (tensor<2x16xf32>, tensor<2x1xi64>)
  return
}

// -----

func.func @temperature_positive(%l: tensor<2x1x16xf32>) {
  // expected-error @+1 {{'nn.next_token' op temperature must be a finite number > 0, got 0.000000e+00}}
  %s, %t, %w, %p = nn.next_token %l {sample, temperature = 0.0 : f64} : tensor<2x1x16xf32> -> (tensor<2x16xf32>, tensor<2x1xi64>, tensor<2x16xf32>, tensor<2x16xf32>)
  return
}

// -----

func.func @top_k_not_negative(%l: tensor<2x1x16xf32>) {
  // expected-error @+1 {{'nn.next_token' op top_k must be >= 0 (0: no top-k warper), got -1}}
  %s, %t, %w, %p = nn.next_token %l {sample, top_k = -1 : i64} : tensor<2x1x16xf32> -> (tensor<2x16xf32>, tensor<2x1xi64>, tensor<2x16xf32>, tensor<2x16xf32>)
  return
}

// -----

func.func @top_p_a_probability(%l: tensor<2x1x16xf32>) {
  // expected-error @+1 {{'nn.next_token' op top_p must be in (0, 1], got 1.500000e+00}}
  %s, %t, %p = nn.next_token %l {sample, top_p = 1.5 : f64} : tensor<2x1x16xf32> -> (tensor<2x16xf32>, tensor<2x1xi64>, tensor<2x16xf32>)
  return
}

// -----

// Sampling without a warper keeps the probabilities only (one `held`).
func.func @held_as_sampling_keeps(%l: tensor<2x1x16xf32>) {
  // expected-error @+2 {{'nn.next_token' op inferred type(s)}}
  // expected-error @+1 {{'nn.next_token' op failed to infer returned types}}
  %s, %t, %w, %p = nn.next_token %l {sample} : tensor<2x1x16xf32> -> (tensor<2x16xf32>, tensor<2x1xi64>, tensor<2x16xf32>, tensor<2x16xf32>)
  return
}

// -----

// The previous step's scores and held tensors, all of them.
func.func @previous_as_held(%l: tensor<2x1x16xf32>, %s0: tensor<2x16xf32>) {
  // expected-error @+1 {{'nn.next_token' op previous are the previous step's scores and held tensors: 2 values, got 1}}
  %s, %t, %p = nn.next_token %l previous(%s0 : tensor<2x16xf32>) {sample, top_k = 0 : i64} : tensor<2x1x16xf32> -> (tensor<2x16xf32>, tensor<2x1xi64>, tensor<2x16xf32>)
  return
}

// -----

func.func @min_p_a_probability(%l: tensor<2x1x16xf32>) {
  // expected-error @+1 {{'nn.next_token' op min_p must be in [0, 1], got 2.000000e+00}}
  %s, %t, %w, %p = nn.next_token %l {sample, min_p = 2.0 : f64} : tensor<2x1x16xf32> -> (tensor<2x16xf32>, tensor<2x1xi64>, tensor<2x16xf32>, tensor<2x16xf32>)
  return
}

// -----

// The penalty reads the sequences so far: their length is part of the op.
func.func @penalty_needs_length(%l: tensor<2x1x16xf32>) {
  // expected-error @+1 {{'nn.next_token' op repetition_penalty reads the sequences so far: it needs their input_length >= 1}}
  %s, %t, %w = nn.next_token %l {repetition_penalty = 1.2 : f64} : tensor<2x1x16xf32> -> (tensor<2x16xf32>, tensor<2x1xi64>, tensor<2x16xf32>)
  return
}

// -----

func.func @penalty_positive(%l: tensor<2x1x16xf32>) {
  // expected-error @+1 {{'nn.next_token' op repetition_penalty must be a finite number > 0, got -1.000000e+00}}
  %s, %t, %w = nn.next_token %l {repetition_penalty = -1.0 : f64, input_length = 4 : i64} : tensor<2x1x16xf32> -> (tensor<2x16xf32>, tensor<2x1xi64>, tensor<2x16xf32>)
  return
}

// -----

func.func @previous_like_scores(%l: tensor<2x1x16xf32>, %s0: tensor<2x8xf32>) {
  // expected-error @+1 {{'nn.next_token' op previous and held tensors are float32 [batch, vocab] as the scores, got 'tensor<2x8xf32>'}}
  %s, %t = nn.next_token %l previous(%s0 : tensor<2x8xf32>) : tensor<2x1x16xf32> -> (tensor<2x16xf32>, tensor<2x1xi64>)
  return
}

// -----

// expected-error @+1 {{'nn.max_new_tokens' must be an i64 >= 1 on a function, got 0 : i64}}
func.func @no_tokens() attributes {nn.max_new_tokens = 0 : i64} {
  return
}

// -----

// A static cache's update writes into its buffer: the result is the buffer.
func.func @static_update_in_place(%p: tensor<1x2x6x8xf32>, %k: tensor<1x2x1x8xf32>) {
  // expected-error @+1 {{'nn.kv_cache_update' op writes a static cache in place: the result must be the past buffer's type, 'tensor<1x2x6x8xf32>', not 'tensor<1x2x7x8xf32>'}}
  %c = nn.kv_cache_update past %p, %k {static_cache} : (tensor<1x2x6x8xf32>, tensor<1x2x1x8xf32>) -> tensor<1x2x7x8xf32>
  return
}

// -----

func.func @static_buffer_too_small(%k: tensor<1x2x8x8xf32>) {
  // expected-error @+1 {{'nn.kv_cache_update' op writes 8 tokens into a static cache of 6 positions}}
  %c = nn.kv_cache_update %k {static_cache} : (tensor<1x2x8x8xf32>) -> tensor<1x2x6x8xf32>
  return
}

// -----

// A paged cache is a buffer written in place: block_size needs static_cache.
func.func @paged_is_buffered(%k: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'nn.kv_cache_update' op has a block_size but no static_cache: a paged cache is a buffer written in place}}
  %c = nn.kv_cache_update %k {block_size = 4 : i64} : (tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @paged_block_positive(%k: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'nn.kv_cache_update' op block_size must be >= 1, got 0}}
  %c = nn.kv_cache_update %k {block_size = 0 : i64, static_cache} : (tensor<1x2x4x8xf32>) -> tensor<1x2x8x8xf32>
  return
}

// -----

// A paged cache holds whole blocks: 6 positions are not blocks of 4.
func.func @paged_whole_blocks(%k: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'nn.kv_cache_update' op holds whole blocks of 4 positions, not 6}}
  %c = nn.kv_cache_update %k {block_size = 4 : i64, static_cache} : (tensor<1x2x4x8xf32>) -> tensor<1x2x6x8xf32>
  return
}

// -----

// Beam search's reorder keeps a layer's cache shape.
func.func @reorder_is_cache(%c: tensor<8x32xf32>) {
  // expected-error @+1 {{'nn.kv_cache_reorder' op caches are [batch, kv heads, tokens, head dim], got cache of rank 2 and 2}}
  %r = nn.kv_cache_reorder %c : tensor<8x32xf32>
  return
}

// -----

// nn.num_beams marks a generation program.
// expected-error @+1 {{'nn.num_beams' must be an i64 >= 2 on a generation program, got 4 : i64}}
func.func @beams_without_tokens(%x: tensor<2x4xi64>) attributes {nn.num_beams = 4 : i64} {
  return
}
