// A linear layer bitsandbytes quantizes, then the output layer.
func.func @forward(%x: tensor<2x8x256xf32>) -> tensor<2x8x64xf32> {
  %w = nn.param "model.up.weight" : tensor<688x256xf32> loc("model.up")
  %h = nn.linear %x, %w : (tensor<2x8x256xf32>, tensor<688x256xf32>) -> tensor<2x8x688xf32> loc("model.up")
  %o = nn.param "lm_head.weight" : tensor<64x688xf32> loc("lm_head")
  %y = nn.linear %h, %o : (tensor<2x8x688xf32>, tensor<64x688xf32>) -> tensor<2x8x64xf32> loc("lm_head")
  return %y : tensor<2x8x64xf32>
}
