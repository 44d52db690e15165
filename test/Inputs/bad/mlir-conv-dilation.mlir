// EXIT: 1
// ERROR: error: the output size overflows int64 (spatial dim 0: padding, dilation or kernel too large)
// A dilation of 2^62 + 1 wrapped dilation * (kernel - 1) and was accepted
// with 9,600 FLOPs; PyTorch rejects it.
func.func @forward(%x: tensor<2x3x8x8xf32>) -> tensor<2x4x8x8xf32> {
  %w = nn.param "conv.weight" : tensor<4x3x3x3xf32>
  %y = nn.conv2d %x, %w {padding = array<i64: 1, 1>, dilation = array<i64: 4611686018427387905, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32>
  return %y : tensor<2x4x8x8xf32>
}
