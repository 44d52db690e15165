// Invalid nn.conv2d, nn.linear, nn.matmul and nn.bmm: one invalid op per split.
// Ops that infer their result type report the specific problem, then
// "failed to infer returned types".

// RUN: vram-opt %s -split-input-file -verify-diagnostics

// conv2d: input of rank 3
func.func @f(%x: tensor<3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{expects a 4-D NCHW input, got rank 3}}
  // expected-error @+1 {{'nn.conv2d' op failed to infer returned types}}
  %0 = nn.conv2d %x, %w : (tensor<3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<4x6x6xf32>
  return
}

// -----

// conv2d: weight of rank 2
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3xf32>) {
  // expected-error @+2 {{expects a 4-D weight [Cout, Cin/groups, kh, kw], got rank 2}}
  // expected-error @+1 {{'nn.conv2d' op failed to infer returned types}}
  %0 = nn.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3xf32>) -> tensor<1x4x8x8xf32>
  return
}

// -----

// conv2d: element types differ
func.func @f(%x: tensor<1x3x8x8xf16>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{input element type 'f16' does not match weight element type 'f32'}}
  // expected-error @+1 {{'nn.conv2d' op failed to infer returned types}}
  %0 = nn.conv2d %x, %w : (tensor<1x3x8x8xf16>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf16>
  return
}

// -----

// conv2d: integer input
func.func @f(%x: tensor<1x3x8x8xi32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'nn.conv2d' op operand #0 must be statically shaped tensor of floating-point values, but got 'tensor<1x3x8x8xi32>'}}
  %0 = nn.conv2d %x, %w : (tensor<1x3x8x8xi32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// conv2d: channel mismatch
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+2 {{channel mismatch: input has 3 channels but weight expects 2 x 1 groups}}
  // expected-error @+1 {{'nn.conv2d' op failed to infer returned types}}
  %0 = nn.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// conv2d: channel mismatch with groups
func.func @f(%x: tensor<1x8x8x8xf32>, %w: tensor<8x2x3x3xf32>) {
  // expected-error @+2 {{channel mismatch: input has 8 channels but weight expects 2 x 2 groups}}
  // expected-error @+1 {{'nn.conv2d' op failed to infer returned types}}
  %0 = nn.conv2d %x, %w {groups = 2 : i64} : (tensor<1x8x8x8xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x6x6xf32>
  return
}

// -----

// conv2d: groups do not divide the input channels
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x1x3x3xf32>) {
  // expected-error @+2 {{groups (2) must divide input channels (3) and output channels (4)}}
  // expected-error @+1 {{'nn.conv2d' op failed to infer returned types}}
  %0 = nn.conv2d %x, %w {groups = 2 : i64} : (tensor<1x3x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// conv2d: groups do not divide the output channels
func.func @f(%x: tensor<1x4x8x8xf32>, %w: tensor<6x1x3x3xf32>) {
  // expected-error @+2 {{groups (4) must divide input channels (4) and output channels (6)}}
  // expected-error @+1 {{'nn.conv2d' op failed to infer returned types}}
  %0 = nn.conv2d %x, %w {groups = 4 : i64} : (tensor<1x4x8x8xf32>, tensor<6x1x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

// conv2d: groups = 0
func.func @f(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  // expected-error @+2 {{groups (0) must divide input channels (4) and output channels (4)}}
  // expected-error @+1 {{'nn.conv2d' op failed to infer returned types}}
  %0 = nn.conv2d %x, %w {groups = 0 : i64} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// conv2d: zero stride
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{strides must be >= 1, got 0}}
  // expected-error @+1 {{'nn.conv2d' op failed to infer returned types}}
  %0 = nn.conv2d %x, %w {strides = array<i64: 1, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// conv2d: three strides
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{strides must have 2 values, got 3}}
  // expected-error @+1 {{'nn.conv2d' op failed to infer returned types}}
  %0 = nn.conv2d %x, %w {strides = array<i64: 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// conv2d: negative padding
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{padding must be >= 0, got -1}}
  // expected-error @+1 {{'nn.conv2d' op failed to infer returned types}}
  %0 = nn.conv2d %x, %w {padding = array<i64: -1, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x6xf32>
  return
}

// -----

// conv2d: one padding value
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{padding must have 2 values, got 1}}
  // expected-error @+1 {{'nn.conv2d' op failed to infer returned types}}
  %0 = nn.conv2d %x, %w {padding = array<i64: 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  return
}

// -----

// conv2d: zero dilation
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{dilation must be >= 1, got 0}}
  // expected-error @+1 {{'nn.conv2d' op failed to infer returned types}}
  %0 = nn.conv2d %x, %w {dilation = array<i64: 0, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// conv2d: kernel larger than the padded input
func.func @f(%x: tensor<1x3x4x4xf32>, %w: tensor<4x3x7x7xf32>) {
  // expected-error @+2 {{kernel does not fit the padded input (spatial dim 0)}}
  // expected-error @+1 {{'nn.conv2d' op failed to infer returned types}}
  %0 = nn.conv2d %x, %w {padding = array<i64: 1, 1>} : (tensor<1x3x4x4xf32>, tensor<4x3x7x7xf32>) -> tensor<1x4x0x0xf32>
  return
}

// -----

// conv2d: dilated kernel larger than the input
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{kernel does not fit the padded input (spatial dim 1)}}
  // expected-error @+1 {{'nn.conv2d' op failed to infer returned types}}
  %0 = nn.conv2d %x, %w {dilation = array<i64: 1, 4>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x1xf32>
  return
}

// -----

// conv2d: bias of the wrong size
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{bias must be [4], got [3]}}
  // expected-error @+1 {{'nn.conv2d' op failed to infer returned types}}
  %0 = nn.conv2d %x, %w, %b : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// conv2d: bias of rank 2
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<1x4xf32>) {
  // expected-error @+2 {{bias must be [4], got [1, 4]}}
  // expected-error @+1 {{'nn.conv2d' op failed to infer returned types}}
  %0 = nn.conv2d %x, %w, %b : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<1x4xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// conv2d: bias of another element type
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf16>) {
  // expected-error @+2 {{bias element type 'f16' does not match input element type 'f32'}}
  // expected-error @+1 {{'nn.conv2d' op failed to infer returned types}}
  %0 = nn.conv2d %x, %w, %b : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf16>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// conv2d: wrong result shape
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{'nn.conv2d' op inferred type(s) 'tensor<1x4x3x3xf32>' are incompatible with return type(s) of operation 'tensor<1x4x6x6xf32>'}}
  // expected-error @+1 {{'nn.conv2d' op failed to infer returned types}}
  %0 = nn.conv2d %x, %w {strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// conv2d: wrong result element type
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{'nn.conv2d' op inferred type(s) 'tensor<1x4x6x6xf32>' are incompatible with return type(s) of operation 'tensor<1x4x6x6xf16>'}}
  // expected-error @+1 {{'nn.conv2d' op failed to infer returned types}}
  %0 = nn.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf16>
  return
}

// -----

// linear: weight of rank 1
func.func @f(%x: tensor<2x512xf32>, %w: tensor<512xf32>) {
  // expected-error @+2 {{expects a 2-D weight [out, in], got rank 1}}
  // expected-error @+1 {{'nn.linear' op failed to infer returned types}}
  %0 = nn.linear %x, %w : (tensor<2x512xf32>, tensor<512xf32>) -> tensor<2xf32>
  return
}

// -----

// linear: scalar input
func.func @f(%x: tensor<f32>, %w: tensor<10x1xf32>) {
  // expected-error @+2 {{expects an input of rank >= 1}}
  // expected-error @+1 {{'nn.linear' op failed to infer returned types}}
  %0 = nn.linear %x, %w : (tensor<f32>, tensor<10x1xf32>) -> tensor<10xf32>
  return
}

// -----

// linear: in_features mismatch
func.func @f(%x: tensor<2x512xf32>, %w: tensor<10x256xf32>) {
  // expected-error @+2 {{input features (512) do not match weight in_features (256)}}
  // expected-error @+1 {{'nn.linear' op failed to infer returned types}}
  %0 = nn.linear %x, %w : (tensor<2x512xf32>, tensor<10x256xf32>) -> tensor<2x10xf32>
  return
}

// -----

// linear: weight transposed
func.func @f(%x: tensor<2x512xf32>, %w: tensor<512x10xf32>) {
  // expected-error @+2 {{input features (512) do not match weight in_features (10)}}
  // expected-error @+1 {{'nn.linear' op failed to infer returned types}}
  %0 = nn.linear %x, %w : (tensor<2x512xf32>, tensor<512x10xf32>) -> tensor<2x10xf32>
  return
}

// -----

// linear: element types differ
func.func @f(%x: tensor<2x512xbf16>, %w: tensor<10x512xf32>) {
  // expected-error @+2 {{input element type 'bf16' does not match weight element type 'f32'}}
  // expected-error @+1 {{'nn.linear' op failed to infer returned types}}
  %0 = nn.linear %x, %w : (tensor<2x512xbf16>, tensor<10x512xf32>) -> tensor<2x10xbf16>
  return
}

// -----

// linear: bias of the wrong size
func.func @f(%x: tensor<2x512xf32>, %w: tensor<10x512xf32>, %b: tensor<512xf32>) {
  // expected-error @+2 {{bias must be [10], got [512]}}
  // expected-error @+1 {{'nn.linear' op failed to infer returned types}}
  %0 = nn.linear %x, %w, %b : (tensor<2x512xf32>, tensor<10x512xf32>, tensor<512xf32>) -> tensor<2x10xf32>
  return
}

// -----

// linear: bias of another element type
func.func @f(%x: tensor<2x512xf32>, %w: tensor<10x512xf32>, %b: tensor<10xbf16>) {
  // expected-error @+2 {{bias element type 'bf16' does not match input element type 'f32'}}
  // expected-error @+1 {{'nn.linear' op failed to infer returned types}}
  %0 = nn.linear %x, %w, %b : (tensor<2x512xf32>, tensor<10x512xf32>, tensor<10xbf16>) -> tensor<2x10xf32>
  return
}

// -----

// linear: wrong result shape
func.func @f(%x: tensor<2x512xf32>, %w: tensor<10x512xf32>) {
  // expected-error @+2 {{'nn.linear' op inferred type(s) 'tensor<2x10xf32>' are incompatible with return type(s) of operation 'tensor<2x512xf32>'}}
  // expected-error @+1 {{'nn.linear' op failed to infer returned types}}
  %0 = nn.linear %x, %w : (tensor<2x512xf32>, tensor<10x512xf32>) -> tensor<2x512xf32>
  return
}

// -----

// matmul: operand of rank 1
func.func @f(%a: tensor<16xf32>, %b: tensor<16x5xf32>) {
  // expected-error @+2 {{expects operands of rank >= 2}}
  // expected-error @+1 {{'nn.matmul' op failed to infer returned types}}
  %0 = nn.matmul %a, %b : (tensor<16xf32>, tensor<16x5xf32>) -> tensor<5xf32>
  return
}

// -----

// matmul: contraction mismatch
func.func @f(%a: tensor<4x16xf32>, %b: tensor<8x5xf32>) {
  // expected-error @+2 {{contraction mismatch: lhs has 16 columns, rhs has 8 rows}}
  // expected-error @+1 {{'nn.matmul' op failed to infer returned types}}
  %0 = nn.matmul %a, %b : (tensor<4x16xf32>, tensor<8x5xf32>) -> tensor<4x5xf32>
  return
}

// -----

// matmul: batch dimensions do not broadcast
func.func @f(%a: tensor<2x4x16xf32>, %b: tensor<3x16x5xf32>) {
  // expected-error @+2 {{batch dimensions do not broadcast: [2, 4, 16] vs [3, 16, 5]}}
  // expected-error @+1 {{'nn.matmul' op failed to infer returned types}}
  %0 = nn.matmul %a, %b : (tensor<2x4x16xf32>, tensor<3x16x5xf32>) -> tensor<3x4x5xf32>
  return
}

// -----

// matmul: element types differ
func.func @f(%a: tensor<4x16xf16>, %b: tensor<16x5xf32>) {
  // expected-error @+2 {{element types differ: 'f16' vs 'f32'}}
  // expected-error @+1 {{'nn.matmul' op failed to infer returned types}}
  %0 = nn.matmul %a, %b : (tensor<4x16xf16>, tensor<16x5xf32>) -> tensor<4x5xf16>
  return
}

// -----

// matmul: result without the broadcast batch
func.func @f(%a: tensor<8x1x4x16xf32>, %b: tensor<3x16x5xf32>) {
  // expected-error @+2 {{'nn.matmul' op inferred type(s) 'tensor<8x3x4x5xf32>' are incompatible with return type(s) of operation 'tensor<8x1x4x5xf32>'}}
  // expected-error @+1 {{'nn.matmul' op failed to infer returned types}}
  %0 = nn.matmul %a, %b : (tensor<8x1x4x16xf32>, tensor<3x16x5xf32>) -> tensor<8x1x4x5xf32>
  return
}

// -----

// bmm: rank-2 operands
func.func @f(%a: tensor<16x8xf32>, %b: tensor<8x32xf32>) {
  // expected-error @+2 {{expects rank-3 operands}}
  // expected-error @+1 {{'nn.bmm' op failed to infer returned types}}
  %0 = nn.bmm %a, %b : (tensor<16x8xf32>, tensor<8x32xf32>) -> tensor<16x32xf32>
  return
}

// -----

// bmm: batch sizes differ (no broadcasting)
func.func @f(%a: tensor<1x16x8xf32>, %b: tensor<4x8x32xf32>) {
  // expected-error @+2 {{batch sizes differ: 1 vs 4}}
  // expected-error @+1 {{'nn.bmm' op failed to infer returned types}}
  %0 = nn.bmm %a, %b : (tensor<1x16x8xf32>, tensor<4x8x32xf32>) -> tensor<4x16x32xf32>
  return
}

// -----

// bmm: contraction mismatch
func.func @f(%a: tensor<4x16x8xf32>, %b: tensor<4x16x32xf32>) {
  // expected-error @+2 {{contraction mismatch: lhs has 8 columns, rhs has 16 rows}}
  // expected-error @+1 {{'nn.bmm' op failed to infer returned types}}
  %0 = nn.bmm %a, %b : (tensor<4x16x8xf32>, tensor<4x16x32xf32>) -> tensor<4x16x32xf32>
  return
}

// -----

// bmm: element types differ
func.func @f(%a: tensor<4x16x8xf32>, %b: tensor<4x8x32xbf16>) {
  // expected-error @+2 {{element types differ: 'f32' vs 'bf16'}}
  // expected-error @+1 {{'nn.bmm' op failed to infer returned types}}
  %0 = nn.bmm %a, %b : (tensor<4x16x8xf32>, tensor<4x8x32xbf16>) -> tensor<4x16x32xf32>
  return
}

// -----

// bmm: wrong result shape
func.func @f(%a: tensor<4x16x8xf32>, %b: tensor<4x8x32xf32>) {
  // expected-error @+2 {{'nn.bmm' op inferred type(s) 'tensor<4x16x32xf32>' are incompatible with return type(s) of operation 'tensor<4x32x16xf32>'}}
  // expected-error @+1 {{'nn.bmm' op failed to infer returned types}}
  %0 = nn.bmm %a, %b : (tensor<4x16x8xf32>, tensor<4x8x32xf32>) -> tensor<4x32x16xf32>
  return
}

// -----

// Shapes must be static: importers bind symbolic dimensions first.
func.func @dynamic_shape(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) {
  // expected-error @+1 {{'nn.linear' op operand #0 must be statically shaped tensor of floating-point values, but got 'tensor<?x8xf32>'}}
  %0 = nn.linear %x, %w : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  return
}

// -----

// A dilation of 2^62 + 1: dilation * (kernel - 1) overflows int64 (it once
// wrapped to a plausible output size); PyTorch rejects it too.
func.func @conv_dilation_overflow(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{the output size overflows int64 (spatial dim 0: padding, dilation or kernel too large)}}
  // expected-error @+1 {{'nn.conv2d' op failed to infer returned types}}
  %0 = nn.conv2d %x, %w {padding = array<i64: 1, 1>, dilation = array<i64: 4611686018427387905, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32>
  return
}

// -----

// Padding of 2^62: in + 2 * padding overflows int64.
func.func @conv_padding_overflow(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{the output size overflows int64 (spatial dim 1: padding, dilation or kernel too large)}}
  // expected-error @+1 {{'nn.conv2d' op failed to infer returned types}}
  %0 = nn.conv2d %x, %w {padding = array<i64: 1, 4611686018427387904>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32>
  return
}

// -----

// groups x weight channels overflows int64: no wrapped product matches Cin.
func.func @conv_groups_overflow(%x: tensor<2x4x8x8xf32>, %w: tensor<4x4611686018427387904x1x1xf32>) {
  // expected-error @+2 {{channel mismatch: input has 4 channels but weight expects 4611686018427387904 x 4 groups}}
  // expected-error @+1 {{'nn.conv2d' op failed to infer returned types}}
  %0 = nn.conv2d %x, %w {groups = 4 : i64} : (tensor<2x4x8x8xf32>, tensor<4x4611686018427387904x1x1xf32>) -> tensor<2x4x8x8xf32>
  return
}
