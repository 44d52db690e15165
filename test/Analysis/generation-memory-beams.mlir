// A generation program with beam search's cache reorder
// (nn.kv_cache_reorder: index_select by beam, a new tensor; the old one
// dropped after), by hand. Two rows (beams), one layer's keys only.
//
// Persistent: embed.weight 16 x 8 x 4 = 512, the ids [2, 4] 64: 576.
// Prefill: embedding %h [2, 4, 8] 256 (832); the cache %c [2, 1, 4, 8] 256
// (1,088); %last a view; logits [2, 1, 16] 128 (1,216, the prefill's
// peak; %h freed: 960); next_token's scores [2, 16] 128 and tokens 16
// (1,104; logits freed: 976).
// Reorder: %r, 256 beside %c (1,232; %c freed: 976).
// Decode: the tokens' embedding %h2 [2, 1, 8] 64 (1,040; the tokens freed:
// 1,024); the update %c2 [2, 1, 5, 8] 320 beside %r (1,344; %r freed:
// 1,088); logits 128 (1,216; %h2 freed: 1,152); scores and tokens 144
// (1,296; the logits and the previous scores freed: 1,040); the reorder
// %r2, 320 beside %c2 (1,360, the decode peak; %c2 freed: 1,040). The
// decode figures count every op after the prefill's nn.next_token, the
// reorders with them. The cache at the end is %r2, 320.

// RUN: vram-opt %s --mode=generate --device=cpu --format=json > %t.json
// RUN: %check-json %t.json memory.persistent_bytes 576 memory.prefill_peak_bytes 1216 memory.decode_peak_bytes 1360 memory.kv_cache_bytes 320 config.generate.num_beams 2

module {
  func.func @forward(%ids: tensor<2x4xi64>) -> (tensor<2x1xi64>, tensor<2x16xf32>, tensor<2x1x5x8xf32>)
      attributes {nn.max_new_tokens = 2 : i64, nn.num_beams = 2 : i64} {
    %w = nn.param "embed.weight" : tensor<16x8xf32>
    %h = nn.embedding %w, %ids : (tensor<16x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
    %k = nn.reshape %h : tensor<2x4x8xf32> -> tensor<2x1x4x8xf32>
    %c = nn.kv_cache_update %k : (tensor<2x1x4x8xf32>) -> tensor<2x1x4x8xf32>
    %last = nn.slice %h {dim = 1 : i64, start = 3 : i64, end = 4 : i64} : (tensor<2x4x8xf32>) -> tensor<2x1x8xf32>
    %logits = nn.linear %last, %w : (tensor<2x1x8xf32>, tensor<16x8xf32>) -> tensor<2x1x16xf32>
    %s, %t = nn.next_token %logits : tensor<2x1x16xf32> -> (tensor<2x16xf32>, tensor<2x1xi64>)
    %r = nn.kv_cache_reorder %c : tensor<2x1x4x8xf32>
    %h2 = nn.embedding %w, %t : (tensor<16x8xf32>, tensor<2x1xi64>) -> tensor<2x1x8xf32>
    %k2 = nn.reshape %h2 : tensor<2x1x8xf32> -> tensor<2x1x1x8xf32>
    %c2 = nn.kv_cache_update past %r, %k2 : (tensor<2x1x4x8xf32>, tensor<2x1x1x8xf32>) -> tensor<2x1x5x8xf32>
    %l2 = nn.linear %h2, %w : (tensor<2x1x8xf32>, tensor<16x8xf32>) -> tensor<2x1x16xf32>
    %s2, %t2 = nn.next_token %l2 previous(%s : tensor<2x16xf32>) : tensor<2x1x16xf32> -> (tensor<2x16xf32>, tensor<2x1xi64>)
    %r2 = nn.kv_cache_reorder %c2 : tensor<2x1x5x8xf32>
    return %t2, %s2, %r2 : tensor<2x1xi64>, tensor<2x16xf32>, tensor<2x1x5x8xf32>
  }
}
