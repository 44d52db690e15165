// generation-memory-static.mlir's program with a paged cache in blocks of
// 4 positions (nn.kv_cache_update {static_cache, block_size = 4}), by hand:
// the prefill's update allocates whole blocks for the 4 + 3 - 1 = 6
// positions the generation reaches, 2 blocks of 4 = 8 positions, and the
// decode step's writes into them in place.
//
// Persistent: embed.weight 512, the ids 32: 544.
// Prefill: embedding %h 128 (672); the buffer %ck, 8 x 8 x 4 = 256 (928);
// attention's view of the 4 positions written (%kr, no memory); the logits
// 64 (992, the prefill's peak; %h freed: 864); next_token's scores 64 and
// token 8 (936; the logits freed: 872).
// Decode: the token's embedding 32 (904; the token freed: 896); the update
// writes into %ck (896); logits 64 (960; %h2 freed: 928); scores and token
// 72 (1000, the decode peak; logits freed: 936).
// The cache at the end: the buffer, 256, 2 blocks of the one sequence.

// RUN: vram-opt %s --mode=generate --device=cpu --format=json > %t.json
// RUN: %check-json %t.json memory.persistent_bytes 544 memory.prefill_peak_bytes 992 memory.decode_peak_bytes 1000 memory.peak_bytes 1000 memory.kv_cache_bytes 256 memory.at_peak.kv_cache 256 config.generate.kv_block_size 4 config.generate.kv_cache_blocks 2
// RUN: FileCheck %s < %t.json
// CHECK: "kv_cache": "paged"
// RUN: vram-opt %s --mode=generate --device=cpu | FileCheck %s --check-prefix=TEXT
// TEXT: generation: 1 sequences x (4 prompt + 3 new tokens), greedy, paged cache (vLLM's blocks)
// TEXT-NEXT: KV cache: 256 (256 B), 2 blocks of 4 positions

module {
  func.func @forward(%ids: tensor<1x4xi64>) -> (tensor<1x1xi64>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x1x8x8xf32>)
      attributes {nn.max_new_tokens = 3 : i64} {
    %w = nn.param "embed.weight" : tensor<16x8xf32>
    %h = nn.embedding %w, %ids : (tensor<16x8xf32>, tensor<1x4xi64>) -> tensor<1x4x8xf32>
    %k = nn.reshape %h : tensor<1x4x8xf32> -> tensor<1x1x4x8xf32>
    %ck = nn.kv_cache_update %k {block_size = 4 : i64, static_cache} : (tensor<1x1x4x8xf32>) -> tensor<1x1x8x8xf32>
    %kr = nn.slice %ck {dim = 2 : i64, start = 0 : i64, end = 4 : i64} : (tensor<1x1x8x8xf32>) -> tensor<1x1x4x8xf32>
    %last = nn.slice %h {dim = 1 : i64, start = 3 : i64, end = 4 : i64} : (tensor<1x4x8xf32>) -> tensor<1x1x8xf32>
    %logits = nn.linear %last, %w : (tensor<1x1x8xf32>, tensor<16x8xf32>) -> tensor<1x1x16xf32>
    %s, %t = nn.next_token %logits : tensor<1x1x16xf32> -> (tensor<1x16xf32>, tensor<1x1xi64>)
    %h2 = nn.embedding %w, %t : (tensor<16x8xf32>, tensor<1x1xi64>) -> tensor<1x1x8xf32>
    %k2 = nn.reshape %h2 : tensor<1x1x8xf32> -> tensor<1x1x1x8xf32>
    %ck2 = nn.kv_cache_update past %ck, %k2 {block_size = 4 : i64, static_cache} : (tensor<1x1x8x8xf32>, tensor<1x1x1x8xf32>) -> tensor<1x1x8x8xf32>
    %l2 = nn.linear %h2, %w : (tensor<1x1x8xf32>, tensor<16x8xf32>) -> tensor<1x1x16xf32>
    %s2, %t2 = nn.next_token %l2 : tensor<1x1x16xf32> -> (tensor<1x16xf32>, tensor<1x1xi64>)
    return %t2, %s, %s2, %ck2 : tensor<1x1xi64>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x1x8x8xf32>
  }
}
