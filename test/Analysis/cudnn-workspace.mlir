// --cudnn-workspace=im2col: each cuDNN convolution call holds the batch's
// column matrix while it runs. conv 3 -> 4 channels, 3x3, padding 1, on
// 2x3x8x8: C_in * kh * kw * H_out * W_out = 3 * 9 * 64 = 1728 elements per
// sample, x 2 samples x 4 bytes = 13824 bytes, in forward and in backward.
// RUN: vram-opt %s --vram-build-step="optimizer=sgd cudnn-workspace=im2col" --vram-print-memory -o /dev/null | FileCheck %s
// CHECK: nn.conv2d (forward):
// CHECK: alloc #{{[0-9]+}} 13824 temporaries workspace of nn.conv2d
// CHECK: nn.backward (backward):
// CHECK: alloc #{{[0-9]+}} 13824 temporaries workspace of nn.backward
// RUN: vram-opt %s --vram-build-step="optimizer=sgd" --vram-print-memory -o /dev/null | FileCheck %s --check-prefix=NONE
// NONE-NOT: workspace of nn.conv2d
// The driver flag and the step attribute it sets.
// RUN: vram-opt %s --mode=train --cudnn-workspace=im2col | FileCheck %s --check-prefix=ATTR
// ATTR: nn.cudnn_workspace = "im2col"
func.func @forward(%x: tensor<2x3x8x8xf32>) -> tensor<2x32xf32> {
  %w = nn.param "conv.weight" : tensor<4x3x3x3xf32>
  %y = nn.conv2d %x, %w {padding = array<i64: 1, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32>
  %p = nn.max_pool2d %y {kernel_size = array<i64: 4, 4>, stride = array<i64: 4, 4>} : (tensor<2x4x8x8xf32>) -> tensor<2x4x2x2xf32>
  %f = nn.flatten %p {start_dim = 1 : i64} : (tensor<2x4x2x2xf32>) -> tensor<2x16xf32>
  %c = nn.concat %f, %f {dim = 1 : i64} : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x32xf32>
  return %c : tensor<2x32xf32>
}
