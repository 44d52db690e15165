func.func @forward(%x: tensor<4x8xf32>) -> tensor<4x3xf32> {
  %w1 = nn.param "fc1.weight" : tensor<16x8xf32>
  %b1 = nn.param "fc1.bias" : tensor<16xf32>
  %h = nn.linear %x, %w1, %b1 : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %r = nn.relu %h : tensor<4x16xf32>
  %w2 = nn.param "fc2.weight" : tensor<16x16xf32>
  %b2 = nn.param "fc2.bias" : tensor<16xf32>
  %h2 = nn.linear %r, %w2, %b2 : (tensor<4x16xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %s = nn.add %h2, %r : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %r2 = nn.relu %s : tensor<4x16xf32>
  %w3 = nn.param "fc3.weight" : tensor<3x16xf32>
  %b3 = nn.param "fc3.bias" : tensor<3xf32>
  %o = nn.linear %r2, %w3, %b3 : (tensor<4x16xf32>, tensor<3x16xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %o : tensor<4x3xf32>
}
