// loss=fused_linear_cross_entropy replaces lm_head: the model's output must
// be a linear layer without bias that nothing else reads; anything else is
// one error at the output.
// RUN: vram-opt %s -split-input-file -verify-diagnostics --vram-build-step="mode=train loss=fused_linear_cross_entropy"

func.func @forward(%x: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %w = nn.param "w" : tensor<4x4xf32>
  %h = nn.linear %x, %w : (tensor<2x8x4xf32>, tensor<4x4xf32>) -> tensor<2x8x4xf32>
  // expected-error @+1 {{the fused linear cross-entropy replaces lm_head: the model's output must be a linear layer without bias (nn.linear), got nn.relu}}
  %y = nn.relu %h : tensor<2x8x4xf32>
  return %y : tensor<2x8x4xf32>
}

// -----

func.func @forward(%x: tensor<2x8x4xf32>) -> tensor<2x8x16xf32> {
  %w = nn.param "lm_head.weight" : tensor<16x4xf32>
  %b = nn.param "lm_head.bias" : tensor<16xf32>
  // expected-error @+1 {{the model's output must be a linear layer without bias (nn.linear), got nn.linear with a bias}}
  %y = nn.linear %x, %w, %b : (tensor<2x8x4xf32>, tensor<16x4xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  return %y : tensor<2x8x16xf32>
}

// -----

func.func @forward(%x: tensor<2x8x4xf32>) -> tensor<2x8x16xf32> {
  %w = nn.param "lm_head.weight" : tensor<16x4xf32>
  // expected-error @+1 {{the fused linear cross-entropy replaces lm_head, whose logits something else in the model reads}}
  %y = nn.linear %x, %w : (tensor<2x8x4xf32>, tensor<16x4xf32>) -> tensor<2x8x16xf32>
  %z = nn.relu %y : tensor<2x8x16xf32>
  return %y : tensor<2x8x16xf32>
}
