// A model with two outputs, built with loss-output=2 (out of range):
// build-step-errors.mlir.
// expected-error @+1 {{loss-output=2: the model has 2 outputs}}
func.func @forward(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %w = nn.param "w" : tensor<8x8xf32>
  %y = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  return %y, %x : tensor<2x8xf32>, tensor<2x8xf32>
}
