// A small CNN with every lowered vision op: conv (padding, stride), batch
// norm (training statistics), relu_, max pool, a residual block with an
// in-place add, adaptive average pooling to 2x2, flatten and a classifier.
// generate_cnn.py builds the same model in PyTorch (same names).
func.func @forward(%x: tensor<2x3x8x8xf32>) -> tensor<2x5xf32> {
  %w1 = nn.param "conv1.weight" : tensor<4x3x3x3xf32>
  %c1 = nn.conv2d %x, %w1 {padding = array<i64: 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32>
  %g1 = nn.param "bn1.weight" : tensor<4xf32>
  %b1 = nn.param "bn1.bias" : tensor<4xf32>
  %m1 = nn.buffer "bn1.running_mean" : tensor<4xf32>
  %v1 = nn.buffer "bn1.running_var" : tensor<4xf32>
  %n1 = nn.batch_norm %c1 weight %g1 bias %b1 stats %m1, %v1 : (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf32>
  %r1 = nn.relu %n1 {inplace} : tensor<2x4x8x8xf32>
  %p = nn.max_pool2d %r1 {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1>} : (tensor<2x4x8x8xf32>) -> tensor<2x4x4x4xf32>
  %w2 = nn.param "conv2.weight" : tensor<4x4x3x3xf32>
  %bb2 = nn.param "conv2.bias" : tensor<4xf32>
  %c2 = nn.conv2d %p, %w2, %bb2 {padding = array<i64: 1, 1>} : (tensor<2x4x4x4xf32>, tensor<4x4x3x3xf32>, tensor<4xf32>) -> tensor<2x4x4x4xf32>
  %s = nn.add %c2, %p {inplace} : (tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
  %r2 = nn.relu %s {inplace} : tensor<2x4x4x4xf32>
  %a = nn.adaptive_avg_pool2d %r2 {output_size = array<i64: 2, 2>} : (tensor<2x4x4x4xf32>) -> tensor<2x4x2x2xf32>
  %f = nn.flatten %a : (tensor<2x4x2x2xf32>) -> tensor<2x16xf32>
  %fw = nn.param "fc.weight" : tensor<5x16xf32>
  %fb = nn.param "fc.bias" : tensor<5xf32>
  %o = nn.linear %f, %fw, %fb : (tensor<2x16xf32>, tensor<5x16xf32>, tensor<5xf32>) -> tensor<2x5xf32>
  return %o : tensor<2x5xf32>
}
