// Invalid nn.mean, nn.pad, nn.roll and nn.contiguous: one invalid op per
// split. Ops that infer their result type report the specific problem, then
// "failed to infer returned types".

// RUN: vram-opt %s -split-input-file -verify-diagnostics

// mean: no dims
func.func @f(%x: tensor<2x8xf32>) {
  // expected-error @+2 {{dims must not be empty}}
  // expected-error @+1 {{'nn.mean' op failed to infer returned types}}
  %0 = nn.mean %x {dims = array<i64>} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return
}

// -----

// mean: dim out of range
func.func @f(%x: tensor<2x8xf32>) {
  // expected-error @+2 {{dim 2 is out of range for rank 2}}
  // expected-error @+1 {{'nn.mean' op failed to infer returned types}}
  %0 = nn.mean %x {dims = array<i64: 2>} : (tensor<2x8xf32>) -> tensor<2xf32>
  return
}

// -----

// mean: a dim listed twice (-1 is 1)
func.func @f(%x: tensor<2x8xf32>) {
  // expected-error @+2 {{dim -1 is listed twice}}
  // expected-error @+1 {{'nn.mean' op failed to infer returned types}}
  %0 = nn.mean %x {dims = array<i64: 1, -1>} : (tensor<2x8xf32>) -> tensor<2xf32>
  return
}

// -----

// mean: wrong declared result (keepdim keeps the dim)
func.func @f(%x: tensor<2x8xf32>) {
  // expected-error @+2 {{'nn.mean' op inferred type(s) 'tensor<2x1xf32>' are incompatible with return type(s) of operation 'tensor<2xf32>'}}
  // expected-error @+1 {{'nn.mean' op failed to infer returned types}}
  %0 = nn.mean %x {dims = array<i64: 1>, keepdim} : (tensor<2x8xf32>) -> tensor<2xf32>
  return
}

// -----

// mean: integer input
func.func @f(%x: tensor<2x8xi64>) {
  // expected-error @+1 {{'nn.mean' op operand #0 must be statically shaped tensor of floating-point values}}
  %0 = nn.mean %x {dims = array<i64: 1>} : (tensor<2x8xi64>) -> tensor<2xi64>
  return
}

// -----

// pad: one value per dimension
func.func @f(%x: tensor<2x8xf32>) {
  // expected-error @+2 {{low and high must have one value per dimension (2), got 1 and 2}}
  // expected-error @+1 {{'nn.pad' op failed to infer returned types}}
  %0 = nn.pad %x {low = array<i64: 1>, high = array<i64: 0, 0>} : (tensor<2x8xf32>) -> tensor<3x8xf32>
  return
}

// -----

// pad: negative padding
func.func @f(%x: tensor<2x8xf32>) {
  // expected-error @+2 {{padding must be >= 0, got 0 and -1 for dimension 1}}
  // expected-error @+1 {{'nn.pad' op failed to infer returned types}}
  %0 = nn.pad %x {low = array<i64: 0, 0>, high = array<i64: 0, -1>} : (tensor<2x8xf32>) -> tensor<2x7xf32>
  return
}

// -----

// pad: wrong declared result
func.func @f(%x: tensor<2x8xf32>) {
  // expected-error @+2 {{'nn.pad' op inferred type(s) 'tensor<2x10xf32>' are incompatible with return type(s) of operation 'tensor<2x9xf32>'}}
  // expected-error @+1 {{'nn.pad' op failed to infer returned types}}
  %0 = nn.pad %x {low = array<i64: 0, 1>, high = array<i64: 0, 1>} : (tensor<2x8xf32>) -> tensor<2x9xf32>
  return
}

// -----

// pad: missing attribute
func.func @f(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'nn.pad' op requires attribute 'high'}}
  %0 = nn.pad %x {low = array<i64: 0, 1>} : (tensor<2x8xf32>) -> tensor<2x9xf32>
  return
}

// -----

// contiguous: the copy keeps the type
func.func @f(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'nn.contiguous' op requires the same type for all operands and results}}
  %0 = "nn.contiguous"(%x) : (tensor<2x8xf32>) -> tensor<8x2xf32>
  return
}

// -----

// roll: one shift per rolled dimension
func.func @f(%x: tensor<2x7x7x8xf32>) {
  // expected-error @+1 {{'nn.roll' op needs one shift per dimension, got 1 shifts and 2 dims}}
  %0 = nn.roll %x {shifts = array<i64: 3>, dims = array<i64: 1, 2>} : tensor<2x7x7x8xf32>
  return
}

// -----

// roll: dim out of range
func.func @f(%x: tensor<2x7x7x8xf32>) {
  // expected-error @+1 {{'nn.roll' op dim 4 is out of range for rank 4}}
  %0 = nn.roll %x {shifts = array<i64: 3>, dims = array<i64: 4>} : tensor<2x7x7x8xf32>
  return
}

// -----

// roll: a dimension rolled twice
func.func @f(%x: tensor<2x7x7x8xf32>) {
  // expected-error @+1 {{'nn.roll' op dim 1 is rolled twice}}
  %0 = nn.roll %x {shifts = array<i64: 3, 1>, dims = array<i64: 1, 1>} : tensor<2x7x7x8xf32>
  return
}

// -----

// nn.amax / nn.amin reduce as nn.mean does.
func.func @amax_dim_range(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{dim 2 is out of range for rank 2}}
  // expected-error @+1 {{'nn.amax' op failed to infer returned types}}
  %y = nn.amax %x {dims = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<2xf32>
  return
}

// -----

// `evenly` is x.max() over every element: every dimension, none kept.
func.func @amax_evenly_every_dim(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'nn.amax' op evenly (x.max() over every element) reduces every dimension without keepdim}}
  %y = nn.amax %x {dims = array<i64: 1>, evenly} : (tensor<2x3xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @amin_evenly_keepdim(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'nn.amin' op evenly (x.max() over every element) reduces every dimension without keepdim}}
  %y = nn.amin %x {dims = array<i64: 0, 1>, evenly, keepdim} : (tensor<2x3xf32>) -> tensor<1x1xf32>
  return
}
