// Two named layers; the last byte (s: training, ZeRO-3) picks the path.
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w0 = nn.param "a.weight" : tensor<8x8xf32> loc("a")
  %b0 = nn.param "a.bias" : tensor<8xf32> loc("a")
  %h = nn.linear %x, %w0, %b0 : (tensor<2x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x8xf32> loc("a")
  %r = nn.relu %h : tensor<2x8xf32> loc("act")
  %w1 = nn.param "b.weight" : tensor<8x8xf32> loc("b")
  %y = nn.linear %r, %w1 : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32> loc("b")
  return %y : tensor<2x8xf32>
}
// s