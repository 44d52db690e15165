// ARGS: --format=mlir
// EXIT: 0
// STDOUT: -> tensor<2x3x1x5xf32>
// ceil_mode pooling with a stride of INT64_MAX: rounding up as
// (span + stride - 1) / stride overflowed (signed-overflow UB). By hand,
// PyTorch's pooling_output_shape: dim 0: span = 8 + 2*1 - 1*(2-1) - 1 = 8,
// ceil(8 / (2^63-1)) + 1 = 2, and the last window would start at
// 1 * (2^63-1) >= 8 + 1, past the input: 1. Dim 1 (stride 2):
// ceil(8 / 2) + 1 = 5, the last window starts at 8 < 9: 5.
func.func @forward(%x: tensor<2x3x8x8xf32>) -> tensor<2x3x1x5xf32> {
  %y = nn.max_pool2d %x {kernel_size = array<i64: 2, 2>, strides = array<i64: 9223372036854775807, 2>, padding = array<i64: 1, 1>, ceil_mode} : (tensor<2x3x8x8xf32>) -> tensor<2x3x1x5xf32>
  return %y : tensor<2x3x1x5xf32>
}
