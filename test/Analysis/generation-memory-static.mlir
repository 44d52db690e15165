// generation-memory.mlir's program with transformers' StaticCache
// (nn.kv_cache_update {static_cache}), by hand: the prefill's update
// allocates the whole buffer, 4 + 3 - 1 = 6 positions, and the decode
// step's writes into it in place (no nn.kv_cache_past, no copy).
//
// Persistent: embed.weight 512, the ids 32: 544.
// Prefill: embedding %h 128 (672); the buffer %ck, 6 x 8 x 4 = 192 (864);
// the logits 64 (928, the prefill's peak; %h freed: 800); next_token's
// scores 64 and token 8 (872; the logits freed: 808).
// Decode: the token's embedding 32 (840; the token freed: 832); the update
// writes into %ck (832: nothing allocated); logits 64 (896; %h2 freed:
// 864); scores and token 72 (936, the decode peak; logits freed: 872).
// The cache at the end: the buffer, 192; at the peak it is all the cache.

// RUN: vram-opt %s --mode=generate --device=cpu --format=json > %t.json
// RUN: %check-json %t.json memory.persistent_bytes 544 memory.prefill_peak_bytes 928 memory.decode_peak_bytes 936 memory.peak_bytes 936 memory.kv_cache_bytes 192 memory.at_peak.kv_cache 192
// RUN: FileCheck %s < %t.json
// CHECK: "kv_cache": "static"

module {
  func.func @forward(%ids: tensor<1x4xi64>) -> (tensor<1x1xi64>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x1x6x8xf32>)
      attributes {nn.max_new_tokens = 3 : i64} {
    %w = nn.param "embed.weight" : tensor<16x8xf32>
    %h = nn.embedding %w, %ids : (tensor<16x8xf32>, tensor<1x4xi64>) -> tensor<1x4x8xf32>
    %k = nn.reshape %h : tensor<1x4x8xf32> -> tensor<1x1x4x8xf32>
    %ck = nn.kv_cache_update %k {static_cache} : (tensor<1x1x4x8xf32>) -> tensor<1x1x6x8xf32>
    %last = nn.slice %h {dim = 1 : i64, start = 3 : i64, end = 4 : i64} : (tensor<1x4x8xf32>) -> tensor<1x1x8xf32>
    %logits = nn.linear %last, %w : (tensor<1x1x8xf32>, tensor<16x8xf32>) -> tensor<1x1x16xf32>
    %s, %t = nn.next_token %logits : tensor<1x1x16xf32> -> (tensor<1x16xf32>, tensor<1x1xi64>)
    %h2 = nn.embedding %w, %t : (tensor<16x8xf32>, tensor<1x1xi64>) -> tensor<1x1x8xf32>
    %k2 = nn.reshape %h2 : tensor<1x1x8xf32> -> tensor<1x1x1x8xf32>
    %ck2 = nn.kv_cache_update past %ck, %k2 {static_cache} : (tensor<1x1x6x8xf32>, tensor<1x1x1x8xf32>) -> tensor<1x1x6x8xf32>
    %l2 = nn.linear %h2, %w : (tensor<1x1x8xf32>, tensor<16x8xf32>) -> tensor<1x1x16xf32>
    %s2, %t2 = nn.next_token %l2 : tensor<1x1x16xf32> -> (tensor<1x16xf32>, tensor<1x1xi64>)
    return %t2, %s, %s2, %ck2 : tensor<1x1xi64>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x1x6x8xf32>
  }
}
