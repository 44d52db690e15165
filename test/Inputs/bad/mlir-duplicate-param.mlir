// EXIT: 1
// ERROR: mlir-duplicate-param.mlir:8:8: error: duplicate tensor name 'fc.weight': every parameter and buffer needs a name of its own
// ERROR: mlir-duplicate-param.mlir:7:8: note: first defined here
// Two parameters with one name: counted twice, frozen together, reported
// as one.
func.func @forward(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = nn.param "fc.weight" : tensor<4x4xf32>
  %v = nn.param "fc.weight" : tensor<4x4xf32>
  %y = nn.linear %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %z = nn.linear %y, %v : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  return %z : tensor<2x4xf32>
}
