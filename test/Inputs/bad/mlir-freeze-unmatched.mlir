// ARGS: --freeze=fc1,encoder.*
// EXIT: 1
// ERROR: error: freeze patterns pattern 'encoder.*' matches no parameter
// A --freeze pattern that matches nothing was ignored (a typo, or another
// model's names); fc1 matches and is not reported.
func.func @forward(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w1 = nn.param "fc1.weight" : tensor<4x4xf32>
  %w2 = nn.param "fc2.weight" : tensor<4x4xf32>
  %y = nn.linear %x, %w1 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %z = nn.linear %y, %w2 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  return %z : tensor<2x4xf32>
}
