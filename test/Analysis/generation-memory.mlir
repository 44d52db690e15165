// The prefill and decode peaks and the KV cache of a generation program
// (Analysis/GenerationMemory.h), by hand. A one-layer "model" whose keys
// are its embeddings: a 4-token prompt, 3 new tokens (the cache reaches
// 4 + 3 - 1 = 6 positions), fp32, batch 1.
//
// Persistent: embed.weight 16 x 8 x 4 = 512, the ids 4 x 8 = 32: 544.
// Prefill: embedding %h 128 (672); the cache's first update %ck 128 (800);
// the logits of the last position 64 (864, the prefill's peak; %h freed);
// next_token's scores 64 and token 8 (808; the logits freed: 744).
// Decode: the cache grown to 5 positions %pk 160 (904; %ck freed: 776);
// the token's embedding 32 (808; the token freed: 800); the update to 6
// positions 192 (992, the decode peak; %pk freed: 832); logits 64 (896;
// %h2 freed: 864); scores and token 72 (936; logits freed: 872).
// The cache at the end: %ck2, 6 x 8 x 4 = 192.

// RUN: vram-opt %s --mode=generate --device=cpu --format=json > %t.json
// RUN: %check-json %t.json memory.persistent_bytes 544 memory.prefill_peak_bytes 864 memory.decode_peak_bytes 992 memory.peak_bytes 992 memory.kv_cache_bytes 192 memory.at_peak.kv_cache 352 config.generate.prompt_len 4 config.generate.max_new_tokens 3
// FLOPs: each forward's one linear, 2 x 1 x 16 x 8 = 256.
// RUN: %check-json %t.json flops.prefill 256 flops.decode_step 256 flops.total 512
// RUN: not vram-opt %s --mode=inference --format=json 2>&1 | FileCheck %s --check-prefix=NOT-INFERENCE
// NOT-INFERENCE: error: a generation program runs as mode=generate, not inference

module {
  func.func @forward(%ids: tensor<1x4xi64>) -> (tensor<1x1xi64>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x1x6x8xf32>)
      attributes {nn.max_new_tokens = 3 : i64} {
    %w = nn.param "embed.weight" : tensor<16x8xf32>
    %h = nn.embedding %w, %ids : (tensor<16x8xf32>, tensor<1x4xi64>) -> tensor<1x4x8xf32>
    %k = nn.reshape %h : tensor<1x4x8xf32> -> tensor<1x1x4x8xf32>
    %ck = nn.kv_cache_update %k : (tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
    %last = nn.slice %h {dim = 1 : i64, start = 3 : i64, end = 4 : i64} : (tensor<1x4x8xf32>) -> tensor<1x1x8xf32>
    %logits = nn.linear %last, %w : (tensor<1x1x8xf32>, tensor<16x8xf32>) -> tensor<1x1x16xf32>
    %s, %t = nn.next_token %logits : tensor<1x1x16xf32> -> (tensor<1x16xf32>, tensor<1x1xi64>)
    %pk = nn.kv_cache_past %ck : tensor<1x1x4x8xf32> -> tensor<1x1x5x8xf32>
    %h2 = nn.embedding %w, %t : (tensor<16x8xf32>, tensor<1x1xi64>) -> tensor<1x1x8xf32>
    %k2 = nn.reshape %h2 : tensor<1x1x8xf32> -> tensor<1x1x1x8xf32>
    %ck2 = nn.kv_cache_update past %pk, %k2 : (tensor<1x1x5x8xf32>, tensor<1x1x1x8xf32>) -> tensor<1x1x6x8xf32>
    %l2 = nn.linear %h2, %w : (tensor<1x1x8xf32>, tensor<16x8xf32>) -> tensor<1x1x16xf32>
    %s2, %t2 = nn.next_token %l2 : tensor<1x1x16xf32> -> (tensor<1x16xf32>, tensor<1x1xi64>)
    return %t2, %s, %s2, %ck2 : tensor<1x1xi64>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x1x6x8xf32>
  }
}
