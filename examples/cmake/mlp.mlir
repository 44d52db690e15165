// A 2-layer MLP classifier: 784 -> 512 -> 10, batch 64.
func.func @forward(%x: tensor<64x784xf32>) -> tensor<64x10xf32> {
  %w1 = nn.param "fc1.weight" : tensor<512x784xf32>
  %b1 = nn.param "fc1.bias" : tensor<512xf32>
  %h = nn.linear %x, %w1, %b1 : (tensor<64x784xf32>, tensor<512x784xf32>, tensor<512xf32>) -> tensor<64x512xf32>
  %r = nn.relu %h {inplace} : tensor<64x512xf32>
  %w2 = nn.param "fc2.weight" : tensor<10x512xf32>
  %b2 = nn.param "fc2.bias" : tensor<10xf32>
  %y = nn.linear %r, %w2, %b2 : (tensor<64x512xf32>, tensor<10x512xf32>, tensor<10xf32>) -> tensor<64x10xf32>
  return %y : tensor<64x10xf32>
}
