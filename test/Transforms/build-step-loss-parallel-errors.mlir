// loss-parallel (torch's loss_parallel()) computes the cross-entropy on the
// logits' shards: the model's output must be gathered from them (an
// nn.all_gather_output that nothing else reads), the loss a cross-entropy,
// the logits fp32; anything else is one error.
// RUN: vram-opt %s -split-input-file -verify-diagnostics --vram-build-step="mode=train loss-parallel"

func.func @forward(%x: tensor<4x8xf32>) -> tensor<4x16xf32> {
  %w = nn.param "lm_head.weight" : tensor<16x8xf32>
  %y = nn.linear %x, %w : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  // expected-error @+1 {{loss-parallel reads logits sharded over the vocabulary: the model's output must be gathered from them (nn.all_gather_output, lm_head column-parallel), got nn.linear}}
  return %y : tensor<4x16xf32>
}

// -----

func.func @forward(%x: tensor<4x8xf32>) -> tensor<4x16xf32> {
  %w = nn.param "lm_head.weight" : tensor<8x8xf32>
  %s = nn.linear %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  // expected-error @+1 {{loss-parallel leaves the logits sharded: nothing else may read the gathered logits (keep-output, other outputs)}}
  %y = nn.all_gather_output %s {ranks = 2 : i64} : tensor<4x8xf32> -> tensor<4x16xf32>
  %z = nn.relu %y : tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

func.func @forward(%x: tensor<4x8xbf16>) -> tensor<4x16xbf16> {
  %w = nn.param "lm_head.weight" : tensor<8x8xbf16>
  %s = nn.linear %x, %w : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
  %y = nn.all_gather_output %s {ranks = 2 : i64} : tensor<4x8xbf16> -> tensor<4x16xbf16>
  // expected-error @+1 {{loss-parallel is modelled on fp32 logits (an fp32 model's, or the logits.float() of transformers' loss, --loss=causal_lm), got 'bf16'}}
  return %y : tensor<4x16xbf16>
}
