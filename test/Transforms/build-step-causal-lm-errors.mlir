// loss=causal_lm reads per-token logits [B, T, V]; anything else is an
// error at the model's output.
// RUN: vram-opt %s -split-input-file -verify-diagnostics --vram-build-step="mode=train loss=causal_lm"

func.func @forward(%x: tensor<2x8xbf16>) -> tensor<2x8xbf16> {
  %w = nn.param "w" : tensor<8x8xbf16>
  %y = nn.linear %x, %w : (tensor<2x8xbf16>, tensor<8x8xbf16>) -> tensor<2x8xbf16>
  // expected-error @+1 {{flattening sequence logits needs [B, T, V] logits, got 'tensor<2x8xbf16>'}}
  return %y : tensor<2x8xbf16>
}

// -----

// A sequence classifier (nn.sequence_classifier, as --hf's
// BertForSequenceClassification) takes its [B, labels] logits as they are.
func.func @forward(%x: tensor<2x8xbf16>) -> tensor<2x3xbf16> attributes {nn.sequence_classifier} {
  %w = nn.param "w" : tensor<3x8xbf16>
  %y = nn.linear %x, %w : (tensor<2x8xbf16>, tensor<3x8xbf16>) -> tensor<2x3xbf16>
  return %y : tensor<2x3xbf16>
}
