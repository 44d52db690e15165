// Sampling's choice of a token (nn.next_token {sample}), by hand: batch 1,
// vocab 16, top-k 4 then top-p 0.9 (GenerationMixin._sample with
// TopKLogitsWarper and TopPLogitsWarper). A [1, 16] float32 tensor is 64 B,
// int64 128 B, bool 16 B; top-k's values 16 B and indices 32 B; a token 8 B.
// The logits are the program's arguments (persistent: 2 x 64 = 128).
//
// The first choice, in _sample's order (bytes alive above the persistent):
//   next_token_logits 64; topk 48 (112), its indices dropped (80), the mask
//   16 (96), the values dropped (80), masked_fill 64 (144), the mask
//   dropped (128); top-p: sort 64 + 128 (320), softmax 64 (384), cumsum 64
//   (448), the softmax dropped (384), two masks 16 + 16 (416), masked_fill
//   64 (480, the peak), its locals dropped (192), top-k's output dropped
//   (128); probs 64 (192), multinomial's exponentials 64 (256) and the
//   token 8 (264), the exponentials dropped (200): scores, warped scores,
//   probs and token.
// Prefill peak: 128 + 480 = 608.
// The second choice replaces the first's scores, warped scores and probs
// (192, its `previous`): the copy 64 (256), the first's scores dropped
// (192); top-k as above to 256 (its output 64 over the 192); top-p from
// there to 256 + 352 = 608 (the peak); then 256, the first's warped scores
// dropped (192), probs 64 (256), the first's dropped (192), exponentials
// and token (264), 200 at the end.
// Decode peak: 128 + 608 = 736.
// RUN: vram-opt %s --mode=generate --device=cpu --format=json > %t.json
// RUN: %check-json %t.json memory.persistent_bytes 128 memory.prefill_peak_bytes 608 memory.decode_peak_bytes 736 memory.peak_bytes 736 config.generate.top_k 4 config.generate.top_p 0.9 config.generate.temperature 1
// RUN: FileCheck %s --input-file=%t.json --check-prefix=JSON
// JSON: "do_sample": true,
// RUN: vram-opt %s --mode=generate --device=cpu | FileCheck %s --check-prefix=TEXT
// TEXT: generation: 1 sequences x (0 prompt + 2 new tokens), sampling (top-k 4, top-p 0.90), DynamicCache

module {
  func.func @forward(%l1: tensor<1x1x16xf32>, %l2: tensor<1x1x16xf32>) -> (tensor<1x1xi64>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>)
      attributes {nn.max_new_tokens = 2 : i64} {
    %s, %t, %w, %p = nn.next_token %l1 {sample, top_k = 4 : i64, top_p = 9.000000e-01 : f64} : tensor<1x1x16xf32> -> (tensor<1x16xf32>, tensor<1x1xi64>, tensor<1x16xf32>, tensor<1x16xf32>)
    %s2, %t2, %w2, %p2 = nn.next_token %l2 previous(%s, %w, %p : tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>) {sample, top_k = 4 : i64, top_p = 9.000000e-01 : f64} : tensor<1x1x16xf32> -> (tensor<1x16xf32>, tensor<1x1xi64>, tensor<1x16xf32>, tensor<1x16xf32>)
    return %t2, %s2, %w2, %p2 : tensor<1x1xi64>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>
  }
}

