// Invalid nn.conv_transpose2d, nn.upsample_nearest2d and
// nn.upsample_bilinear2d, one per split.

// RUN: vram-opt %s -split-input-file -verify-diagnostics

// conv_transpose2d: the weight's first dimension is the input's channels.
func.func @f(%x: tensor<2x16x8x8xf32>, %w: tensor<8x16x2x2xf32>) {
  // expected-error @+2 {{weight [8, ...] must have the input's 16 channels, divisible by groups (1)}}
  // expected-error @+1 {{'nn.conv_transpose2d' op failed to infer returned types}}
  %0 = nn.conv_transpose2d %x, %w : (tensor<2x16x8x8xf32>, tensor<8x16x2x2xf32>) -> tensor<2x16x9x9xf32>
  return
}

// -----

// conv_transpose2d: output_padding must be smaller than the stride.
func.func @f(%x: tensor<2x16x8x8xf32>, %w: tensor<16x8x2x2xf32>) {
  // expected-error @+2 {{output_padding must be smaller than the stride or the dilation}}
  // expected-error @+1 {{'nn.conv_transpose2d' op failed to infer returned types}}
  %0 = nn.conv_transpose2d %x, %w {output_padding = array<i64: 1, 1>} : (tensor<2x16x8x8xf32>, tensor<16x8x2x2xf32>) -> tensor<2x8x10x10xf32>
  return
}

// -----

// conv_transpose2d: padding larger than the output.
func.func @f(%x: tensor<2x16x1x1xf32>, %w: tensor<16x8x1x1xf32>) {
  // expected-error @+2 {{the output would be empty or overflow (spatial dim 0)}}
  // expected-error @+1 {{'nn.conv_transpose2d' op failed to infer returned types}}
  %0 = nn.conv_transpose2d %x, %w {padding = array<i64: 1, 1>} : (tensor<2x16x1x1xf32>, tensor<16x8x1x1xf32>) -> tensor<2x8x1x1xf32>
  return
}

// -----

// upsample_nearest2d keeps N and C.
func.func @f(%x: tensor<2x8x16x16xf32>) {
  // expected-error @+1 {{'nn.upsample_nearest2d' op keeps N and C}}
  %0 = nn.upsample_nearest2d %x : (tensor<2x8x16x16xf32>) -> tensor<2x4x32x32xf32>
  return
}

// -----

// upsample_bilinear2d resizes H and W only.
func.func @f(%x: tensor<2x8x4x4xf32>) {
  // expected-error @+1 {{'nn.upsample_bilinear2d' op keeps N and C}}
  %0 = nn.upsample_bilinear2d %x : (tensor<2x8x4x4xf32>) -> tensor<2x4x8x8xf32>
  return
}

// -----

// upsample_bilinear2d: scales are (height, width) factors.
func.func @f(%x: tensor<2x8x4x4xf32>) {
  // expected-error @+1 {{'nn.upsample_bilinear2d' op scales are (height, width), got 1 values}}
  %0 = nn.upsample_bilinear2d %x {scales = array<f64: 2.0>} : (tensor<2x8x4x4xf32>) -> tensor<2x8x8x8xf32>
  return
}

// -----

func.func @f(%x: tensor<2x8x4x4xf32>) {
  // expected-error @+1 {{'nn.upsample_bilinear2d' op scales must be positive, got 0}}
  %0 = nn.upsample_bilinear2d %x {scales = array<f64: 0.0, 2.0>} : (tensor<2x8x4x4xf32>) -> tensor<2x8x8x8xf32>
  return
}
