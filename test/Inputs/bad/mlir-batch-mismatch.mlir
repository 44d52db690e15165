// EXIT: 1
// ERROR: error: 'nn.batch' is 64 but no input has a dimension of that size (input shapes: [2, 4])
// The batch attribute of a batch-2 model was reported as batch 64.
func.func @forward(%x: tensor<2x4xf32>) -> tensor<2x3xf32> attributes {nn.batch = 64 : i64} {
  %w = nn.param "fc.weight" : tensor<3x4xf32>
  %y = nn.linear %x, %w : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
