// nn.Sequential(Linear(512, 512), ReLU()) x 4, batch 8: the model of
// benchmarks/accuracy/fsdp.py's "mlp" case (each Linear a fully_shard unit).
func.func @forward(%x: tensor<8x512xf32>) -> tensor<8x512xf32> {
  %w0 = nn.param "0.weight" : tensor<512x512xf32> loc("0")
  %b0 = nn.param "0.bias" : tensor<512xf32> loc("0")
  %h0 = nn.linear %x, %w0, %b0 : (tensor<8x512xf32>, tensor<512x512xf32>, tensor<512xf32>) -> tensor<8x512xf32> loc("0")
  %r0 = nn.relu %h0 : tensor<8x512xf32> loc("1")
  %w2 = nn.param "2.weight" : tensor<512x512xf32> loc("2")
  %b2 = nn.param "2.bias" : tensor<512xf32> loc("2")
  %h2 = nn.linear %r0, %w2, %b2 : (tensor<8x512xf32>, tensor<512x512xf32>, tensor<512xf32>) -> tensor<8x512xf32> loc("2")
  %r2 = nn.relu %h2 : tensor<8x512xf32> loc("3")
  %w4 = nn.param "4.weight" : tensor<512x512xf32> loc("4")
  %b4 = nn.param "4.bias" : tensor<512xf32> loc("4")
  %h4 = nn.linear %r2, %w4, %b4 : (tensor<8x512xf32>, tensor<512x512xf32>, tensor<512xf32>) -> tensor<8x512xf32> loc("4")
  %r4 = nn.relu %h4 : tensor<8x512xf32> loc("5")
  %w6 = nn.param "6.weight" : tensor<512x512xf32> loc("6")
  %b6 = nn.param "6.bias" : tensor<512xf32> loc("6")
  %h6 = nn.linear %r4, %w6, %b6 : (tensor<8x512xf32>, tensor<512x512xf32>, tensor<512xf32>) -> tensor<8x512xf32> loc("6")
  %r6 = nn.relu %h6 : tensor<8x512xf32> loc("7")
  return %r6 : tensor<8x512xf32>
}
