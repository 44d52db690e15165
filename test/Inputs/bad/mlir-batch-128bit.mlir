// EXIT: 1
// ERROR: mlir-batch-128bit.mlir:4:1: error: 'nn.batch' must be a positive i64 integer, got 18446744073709551621 : i128
// A batch of 2^64 + 5 as an i128 attribute was read as batch 5.
func.func @forward(%x: tensor<5x4xf32>) -> tensor<5x3xf32> attributes {nn.batch = 18446744073709551621 : i128} {
  %w = nn.param "fc.weight" : tensor<3x4xf32>
  %y = nn.linear %x, %w : (tensor<5x4xf32>, tensor<3x4xf32>) -> tensor<5x3xf32>
  return %y : tensor<5x3xf32>
}
