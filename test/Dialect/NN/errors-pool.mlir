// Invalid nn.max_pool2d, nn.avg_pool2d and nn.adaptive_avg_pool2d: one
// invalid op per split. Ops that infer their result type report the specific
// problem, then "failed to infer returned types".

// RUN: vram-opt %s -split-input-file -verify-diagnostics

// max_pool2d: input of rank 3
func.func @f(%x: tensor<64x8x8xf32>) {
  // expected-error @+2 {{expects a 4-D NCHW input, got rank 3}}
  // expected-error @+1 {{'nn.max_pool2d' op failed to infer returned types}}
  %0 = nn.max_pool2d %x {kernel_size = array<i64: 2, 2>} : (tensor<64x8x8xf32>) -> tensor<64x4x4xf32>
  return
}

// -----

// max_pool2d: missing kernel_size
func.func @f(%x: tensor<2x64x8x8xf32>) {
  // expected-error @+1 {{'nn.max_pool2d' op requires attribute 'kernel_size'}}
  %0 = nn.max_pool2d %x : (tensor<2x64x8x8xf32>) -> tensor<2x64x8x8xf32>
  return
}

// -----

// max_pool2d: one kernel_size value
func.func @f(%x: tensor<2x64x8x8xf32>) {
  // expected-error @+2 {{kernel_size must have 2 values, got 1}}
  // expected-error @+1 {{'nn.max_pool2d' op failed to infer returned types}}
  %0 = nn.max_pool2d %x {kernel_size = array<i64: 2>} : (tensor<2x64x8x8xf32>) -> tensor<2x64x4x4xf32>
  return
}

// -----

// max_pool2d: zero kernel_size
func.func @f(%x: tensor<2x64x8x8xf32>) {
  // expected-error @+2 {{kernel_size must be >= 1, got 0}}
  // expected-error @+1 {{'nn.max_pool2d' op failed to infer returned types}}
  %0 = nn.max_pool2d %x {kernel_size = array<i64: 0, 2>} : (tensor<2x64x8x8xf32>) -> tensor<2x64x4x4xf32>
  return
}

// -----

// max_pool2d: zero stride
func.func @f(%x: tensor<2x64x8x8xf32>) {
  // expected-error @+2 {{strides must be >= 1, got 0}}
  // expected-error @+1 {{'nn.max_pool2d' op failed to infer returned types}}
  %0 = nn.max_pool2d %x {kernel_size = array<i64: 2, 2>, strides = array<i64: 0, 2>} : (tensor<2x64x8x8xf32>) -> tensor<2x64x4x4xf32>
  return
}

// -----

// max_pool2d: negative padding
func.func @f(%x: tensor<2x64x8x8xf32>) {
  // expected-error @+2 {{padding must be >= 0, got -1}}
  // expected-error @+1 {{'nn.max_pool2d' op failed to infer returned types}}
  %0 = nn.max_pool2d %x {kernel_size = array<i64: 2, 2>, padding = array<i64: 0, -1>} : (tensor<2x64x8x8xf32>) -> tensor<2x64x4x4xf32>
  return
}

// -----

// max_pool2d: zero dilation
func.func @f(%x: tensor<2x64x8x8xf32>) {
  // expected-error @+2 {{dilation must be >= 1, got 0}}
  // expected-error @+1 {{'nn.max_pool2d' op failed to infer returned types}}
  %0 = nn.max_pool2d %x {kernel_size = array<i64: 2, 2>, dilation = array<i64: 1, 0>} : (tensor<2x64x8x8xf32>) -> tensor<2x64x4x4xf32>
  return
}

// -----

// max_pool2d: padding more than half the kernel
func.func @f(%x: tensor<2x64x8x8xf32>) {
  // expected-error @+2 {{padding (2) must be at most half the kernel size (3)}}
  // expected-error @+1 {{'nn.max_pool2d' op failed to infer returned types}}
  %0 = nn.max_pool2d %x {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>, padding = array<i64: 2, 2>} : (tensor<2x64x8x8xf32>) -> tensor<2x64x10x10xf32>
  return
}

// -----

// max_pool2d: window larger than the input
func.func @f(%x: tensor<2x64x8x8xf32>) {
  // expected-error @+2 {{pooling window does not fit the input}}
  // expected-error @+1 {{'nn.max_pool2d' op failed to infer returned types}}
  %0 = nn.max_pool2d %x {kernel_size = array<i64: 9, 9>} : (tensor<2x64x8x8xf32>) -> tensor<2x64x1x1xf32>
  return
}

// -----

// max_pool2d: dilated window larger than the input
func.func @f(%x: tensor<2x64x8x8xf32>) {
  // expected-error @+2 {{pooling window does not fit the input}}
  // expected-error @+1 {{'nn.max_pool2d' op failed to infer returned types}}
  %0 = nn.max_pool2d %x {kernel_size = array<i64: 3, 3>, dilation = array<i64: 4, 4>} : (tensor<2x64x8x8xf32>) -> tensor<2x64x1x1xf32>
  return
}

// -----

// max_pool2d: result of the floor mode with ceil_mode
func.func @f(%x: tensor<1x1x5x5xf32>) {
  // expected-error @+2 {{'nn.max_pool2d' op inferred type(s) 'tensor<1x1x3x3xf32>' are incompatible with return type(s) of operation 'tensor<1x1x2x2xf32>'}}
  // expected-error @+1 {{'nn.max_pool2d' op failed to infer returned types}}
  %0 = nn.max_pool2d %x {kernel_size = array<i64: 2, 2>, ceil_mode} : (tensor<1x1x5x5xf32>) -> tensor<1x1x2x2xf32>
  return
}

// -----

// max_pool2d: result of the ceil mode without ceil_mode
func.func @f(%x: tensor<1x1x5x5xf32>) {
  // expected-error @+2 {{'nn.max_pool2d' op inferred type(s) 'tensor<1x1x2x2xf32>' are incompatible with return type(s) of operation 'tensor<1x1x3x3xf32>'}}
  // expected-error @+1 {{'nn.max_pool2d' op failed to infer returned types}}
  %0 = nn.max_pool2d %x {kernel_size = array<i64: 2, 2>} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
  return
}

// -----

// max_pool2d: integer input
func.func @f(%x: tensor<1x1x4x4xi8>) {
  // expected-error @+1 {{'nn.max_pool2d' op operand #0 must be statically shaped tensor of floating-point values, but got 'tensor<1x1x4x4xi8>'}}
  %0 = nn.max_pool2d %x {kernel_size = array<i64: 2, 2>} : (tensor<1x1x4x4xi8>) -> tensor<1x1x2x2xi8>
  return
}

// -----

// avg_pool2d: input of rank 2
func.func @f(%x: tensor<8x8xf32>) {
  // expected-error @+2 {{expects a 4-D NCHW input, got rank 2}}
  // expected-error @+1 {{'nn.avg_pool2d' op failed to infer returned types}}
  %0 = nn.avg_pool2d %x {kernel_size = array<i64: 2, 2>} : (tensor<8x8xf32>) -> tensor<4x4xf32>
  return
}

// -----

// avg_pool2d: padding more than half the kernel
func.func @f(%x: tensor<2x64x8x8xf32>) {
  // expected-error @+2 {{padding (2) must be at most half the kernel size (2)}}
  // expected-error @+1 {{'nn.avg_pool2d' op failed to infer returned types}}
  %0 = nn.avg_pool2d %x {kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 2>} : (tensor<2x64x8x8xf32>) -> tensor<2x64x4x6xf32>
  return
}

// -----

// avg_pool2d: three strides
func.func @f(%x: tensor<2x64x8x8xf32>) {
  // expected-error @+2 {{strides must have 2 values, got 3}}
  // expected-error @+1 {{'nn.avg_pool2d' op failed to infer returned types}}
  %0 = nn.avg_pool2d %x {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2, 2>} : (tensor<2x64x8x8xf32>) -> tensor<2x64x4x4xf32>
  return
}

// -----

// avg_pool2d: window larger than the input
func.func @f(%x: tensor<1x1x2x2xf32>) {
  // expected-error @+2 {{pooling window does not fit the input}}
  // expected-error @+1 {{'nn.avg_pool2d' op failed to infer returned types}}
  %0 = nn.avg_pool2d %x {kernel_size = array<i64: 3, 1>} : (tensor<1x1x2x2xf32>) -> tensor<1x1x1x2xf32>
  return
}

// -----

// avg_pool2d: wrong result shape
func.func @f(%x: tensor<2x64x8x8xf32>) {
  // expected-error @+2 {{'nn.avg_pool2d' op inferred type(s) 'tensor<2x64x7x7xf32>' are incompatible with return type(s) of operation 'tensor<2x64x4x4xf32>'}}
  // expected-error @+1 {{'nn.avg_pool2d' op failed to infer returned types}}
  %0 = nn.avg_pool2d %x {kernel_size = array<i64: 2, 2>, strides = array<i64: 1, 1>} : (tensor<2x64x8x8xf32>) -> tensor<2x64x4x4xf32>
  return
}

// -----

// adaptive_avg_pool2d: input of rank 3
func.func @f(%x: tensor<512x7x7xf32>) {
  // expected-error @+2 {{expects a 4-D NCHW input, got rank 3}}
  // expected-error @+1 {{'nn.adaptive_avg_pool2d' op failed to infer returned types}}
  %0 = nn.adaptive_avg_pool2d %x {output_size = array<i64: 1, 1>} : (tensor<512x7x7xf32>) -> tensor<512x1x1xf32>
  return
}

// -----

// adaptive_avg_pool2d: zero output size
func.func @f(%x: tensor<2x64x8x8xf32>) {
  // expected-error @+2 {{output_size must be >= 1, got 0}}
  // expected-error @+1 {{'nn.adaptive_avg_pool2d' op failed to infer returned types}}
  %0 = nn.adaptive_avg_pool2d %x {output_size = array<i64: 0, 1>} : (tensor<2x64x8x8xf32>) -> tensor<2x64x0x1xf32>
  return
}

// -----

// adaptive_avg_pool2d: one output size value
func.func @f(%x: tensor<2x64x8x8xf32>) {
  // expected-error @+2 {{output_size must have 2 values, got 1}}
  // expected-error @+1 {{'nn.adaptive_avg_pool2d' op failed to infer returned types}}
  %0 = nn.adaptive_avg_pool2d %x {output_size = array<i64: 1>} : (tensor<2x64x8x8xf32>) -> tensor<2x64x1x1xf32>
  return
}

// -----

// adaptive_avg_pool2d: wrong result shape
func.func @f(%x: tensor<2x64x8x8xf32>) {
  // expected-error @+2 {{'nn.adaptive_avg_pool2d' op inferred type(s) 'tensor<2x64x1x1xf32>' are incompatible with return type(s) of operation 'tensor<2x64xf32>'}}
  // expected-error @+1 {{'nn.adaptive_avg_pool2d' op failed to infer returned types}}
  %0 = nn.adaptive_avg_pool2d %x {output_size = array<i64: 1, 1>} : (tensor<2x64x8x8xf32>) -> tensor<2x64xf32>
  return
}

// -----

// dilation * (kernel - 1) = (2^62 + 1) * 2 overflows int64.
func.func @f(%x: tensor<2x3x8x8xf32>) {
  // expected-error @+2 {{the output size overflows int64 (spatial dim 0: padding, dilation or kernel too large)}}
  // expected-error @+1 {{'nn.max_pool2d' op failed to infer returned types}}
  %0 = nn.max_pool2d %x {kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, dilation = array<i64: 4611686018427387905, 1>, ceil_mode} : (tensor<2x3x8x8xf32>) -> tensor<2x3x1x5xf32>
  return
}
