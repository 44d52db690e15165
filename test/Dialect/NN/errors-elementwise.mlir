// Invalid elementwise ops: activations, softmax/log_softmax, dropout and the
// broadcasting binary ops. One invalid op per split; ops that infer their
// result type report the specific problem, then "failed to infer returned
// types".

// RUN: vram-opt %s -split-input-file -verify-diagnostics

// relu: integer tensor
func.func @f(%x: tensor<4xi32>) {
  // expected-error @+1 {{'nn.relu' op operand #0 must be statically shaped tensor of floating-point values, but got 'tensor<4xi32>'}}
  %0 = nn.relu %x : tensor<4xi32>
  return
}

// -----

// relu6: result type differs from the operand type (generic form)
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.relu6' op requires the same type for all operands and results}}
  %0 = "nn.relu6"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

// silu: inplace is a unit attribute
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{custom op 'nn.silu' 'nn.silu' op attribute 'inplace' failed to satisfy constraint: unit attribute}}
  %0 = nn.silu %x {inplace = true} : tensor<4xf32>
  return
}

// -----

// hardswish: unranked tensor
func.func @f(%x: tensor<*xf32>) {
  // expected-error @+1 {{custom op 'nn.hardswish' invalid kind of type specified: expected builtin.tensor, but found 'tensor<*xf32>'}}
  %0 = nn.hardswish %x : tensor<*xf32>
  return
}

// -----

// hardsigmoid: result shape differs (generic form)
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.hardsigmoid' op requires the same type for all operands and results}}
  %0 = "nn.hardsigmoid"(%x) : (tensor<4xf32>) -> tensor<2x2xf32>
  return
}

// -----

// gelu: unknown approximation
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+2 {{expected ::vram::nn::GeluApproximation to be one of: none, tanh}}
  // expected-error @+1 {{failed to parse NN_GeluApproximationAttr parameter 'value'}}
  %0 = nn.gelu %x {approximate = #nn<approximate erf>} : tensor<4xf32>
  return
}

// -----

// gelu: approximation is a string
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{custom op 'nn.gelu' 'nn.gelu' op attribute 'approximate' failed to satisfy constraint: F.gelu(approximate=...)}}
  %0 = nn.gelu %x {approximate = 1 : i64} : tensor<4xf32>
  return
}

// -----

// sigmoid: integer tensor
func.func @f(%x: tensor<4xi1>) {
  // expected-error @+1 {{'nn.sigmoid' op operand #0 must be statically shaped tensor of floating-point values, but got 'tensor<4xi1>'}}
  %0 = nn.sigmoid %x : tensor<4xi1>
  return
}

// -----

// tanh: not a tensor
func.func @f(%x: f32) {
  // expected-error @+1 {{custom op 'nn.tanh' invalid kind of type specified: expected builtin.tensor, but found 'f32'}}
  %0 = nn.tanh %x : f32
  return
}

// -----

// softmax: dim out of range
func.func @f(%x: tensor<2x10xf32>) {
  // expected-error @+1 {{'nn.softmax' op dim 2 is out of range for rank 2}}
  %0 = nn.softmax %x {dim = 2 : i64} : tensor<2x10xf32>
  return
}

// -----

// softmax: negative dim out of range
func.func @f(%x: tensor<2x10xf32>) {
  // expected-error @+1 {{'nn.softmax' op dim -3 is out of range for rank 2}}
  %0 = nn.softmax %x {dim = -3 : i64} : tensor<2x10xf32>
  return
}

// -----

// softmax: missing dim
func.func @f(%x: tensor<2x10xf32>) {
  // expected-error @+1 {{'nn.softmax' op requires attribute 'dim'}}
  %0 = nn.softmax %x : tensor<2x10xf32>
  return
}

// -----

// log_softmax: dim out of range
func.func @f(%x: tensor<2x8x10xf32>) {
  // expected-error @+1 {{'nn.log_softmax' op dim 3 is out of range for rank 3}}
  %0 = nn.log_softmax %x {dim = 3 : i64} : tensor<2x8x10xf32>
  return
}

// -----

// dropout: p > 1
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.dropout' op p must be in [0, 1], got 1.500000e+00}}
  %0 = nn.dropout %x {p = 1.5 : f64} : tensor<4xf32>
  return
}

// -----

// dropout: p < 0
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.dropout' op p must be in [0, 1], got -1.000000e-01}}
  %0 = nn.dropout %x {p = -1.000000e-01 : f64} : tensor<4xf32>
  return
}

// -----

// dropout: p is NaN
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.dropout' op p must be in [0, 1], got nan}}
  %0 = nn.dropout %x {p = 0x7FF8000000000000 : f64} : tensor<4xf32>
  return
}

// -----

// dropout: missing p
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.dropout' op requires attribute 'p'}}
  %0 = nn.dropout %x : tensor<4xf32>
  return
}

// -----

// dropout: p is an f64
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{custom op 'nn.dropout' 'nn.dropout' op attribute 'p' failed to satisfy constraint: 64-bit float attribute}}
  %0 = nn.dropout %x {p = 0.5 : f32} : tensor<4xf32>
  return
}

// -----

// add: shapes do not broadcast
func.func @f(%a: tensor<4x8xf32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{shapes do not broadcast: [4, 8] vs [4]}}
  // expected-error @+1 {{'nn.add' op failed to infer returned types}}
  %0 = nn.add %a, %b : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  return
}

// -----

// sub: shapes do not broadcast
func.func @f(%a: tensor<2x3x4xf32>, %b: tensor<3x3x1xf32>) {
  // expected-error @+2 {{shapes do not broadcast: [2, 3, 4] vs [3, 3, 1]}}
  // expected-error @+1 {{'nn.sub' op failed to infer returned types}}
  %0 = nn.sub %a, %b : (tensor<2x3x4xf32>, tensor<3x3x1xf32>) -> tensor<3x3x4xf32>
  return
}

// -----

// mul: mixed dtypes promote (fp16 * fp32 is fp32), so the result type is
// checked against the promoted one.
func.func @f(%a: tensor<4x8xf32>, %b: tensor<4x8xf16>) {
  // expected-error @+2 {{'nn.mul' op inferred type(s) 'tensor<4x8xf32>' are incompatible with return type(s) of operation 'tensor<4x8xf16>'}}
  // expected-error @+1 {{'nn.mul' op failed to infer returned types}}
  %0 = nn.mul %a, %b : (tensor<4x8xf32>, tensor<4x8xf16>) -> tensor<4x8xf16>
  return
}

// -----

// mul in place: `a *= b` keeps a's dtype, so b cannot be wider.
func.func @f(%a: tensor<4x8xf16>, %b: tensor<4x8xf32>) {
  // expected-error @+1 {{in place needs the result to have the lhs type}}
  %0 = nn.mul %a, %b {inplace} : (tensor<4x8xf16>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

// div: integer operand
func.func @f(%a: tensor<4x8xf32>, %b: tensor<4x8xi32>) {
  // expected-error @+1 {{'nn.div' op operand #1 must be statically shaped tensor of floating-point values, but got 'tensor<4x8xi32>'}}
  %0 = nn.div %a, %b : (tensor<4x8xf32>, tensor<4x8xi32>) -> tensor<4x8xf32>
  return
}

// -----

// add: result not of the broadcast shape
func.func @f(%a: tensor<4x1xf32>, %b: tensor<1x8xf32>) {
  // expected-error @+2 {{'nn.add' op inferred type(s) 'tensor<4x8xf32>' are incompatible with return type(s) of operation 'tensor<4x1xf32>'}}
  // expected-error @+1 {{'nn.add' op failed to infer returned types}}
  %0 = nn.add %a, %b : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x1xf32>
  return
}

// -----

// mul: result of the wrong element type
func.func @f(%a: tensor<4x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+2 {{'nn.mul' op inferred type(s) 'tensor<4x8xf32>' are incompatible with return type(s) of operation 'tensor<4x8xbf16>'}}
  // expected-error @+1 {{'nn.mul' op failed to infer returned types}}
  %0 = nn.mul %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xbf16>
  return
}

// -----

// add: in place into an lhs smaller than the result
func.func @f(%a: tensor<8xf32>, %b: tensor<4x8xf32>) {
  // expected-error @+1 {{'nn.add' op in place needs the result to have the lhs type, got 'tensor<4x8xf32>' for lhs 'tensor<8xf32>'}}
  %0 = nn.add %a, %b {inplace} : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

// div: in place into a broadcast lhs
func.func @f(%a: tensor<4x1xf32>, %b: tensor<1x8xf32>) {
  // expected-error @+1 {{'nn.div' op in place needs the result to have the lhs type, got 'tensor<4x8xf32>' for lhs 'tensor<4x1xf32>'}}
  %0 = nn.div %a, %b {inplace} : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

// leaky_relu: the in-place form's backward reads the result, which a
// negative slope does not let it invert
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.leaky_relu' op in-place with a negative slope -5.000000e-01 has no backward in PyTorch}}
  %0 = nn.leaky_relu %x {negative_slope = -5.0e-01 : f64, inplace} : tensor<4xf32>
  return
}

// -----

// leaky_relu: the slope is finite
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.leaky_relu' op negative_slope must be finite, got nan}}
  %0 = nn.leaky_relu %x {negative_slope = 0x7FF8000000000000 : f64} : tensor<4xf32>
  return
}

// -----

// prelu: a weight neither [1] nor [C]
func.func @f(%x: tensor<2x3x4x4xf32>, %w: tensor<4xf32>) {
  // expected-error @+2 {{weight must be [1] or [3] (one slope, or one per channel of dimension 1), got [4]}}
  // expected-error @+1 {{'nn.prelu' op failed to infer returned types}}
  %0 = nn.prelu %x, %w : (tensor<2x3x4x4xf32>, tensor<4xf32>) -> tensor<2x3x4x4xf32>
  return
}

// -----

// prelu: a rank-1 input has one channel
func.func @f(%x: tensor<5xf32>, %w: tensor<5xf32>) {
  // expected-error @+2 {{weight must be [1] (one slope, or one per channel of dimension 1), got [5]}}
  // expected-error @+1 {{'nn.prelu' op failed to infer returned types}}
  %0 = nn.prelu %x, %w : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  return
}

// -----

// prelu: the weight is 1-D (the front ends view a 0-d weight as [1], and
// torch.onnx's [C, 1, 1] as [C])
func.func @f(%x: tensor<2x3x4x4xf32>, %w: tensor<3x1x1xf32>) {
  // expected-error @+2 {{weight must be 1-D, got [3, 1, 1]}}
  // expected-error @+1 {{'nn.prelu' op failed to infer returned types}}
  %0 = nn.prelu %x, %w : (tensor<2x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<2x3x4x4xf32>
  return
}

// -----

// prelu: weight and input of one element type (PyTorch does not promote)
func.func @f(%x: tensor<2x3xf16>, %w: tensor<3xf32>) {
  // expected-error @+2 {{weight element type 'f32' does not match input element type 'f16'}}
  // expected-error @+1 {{'nn.prelu' op failed to infer returned types}}
  %0 = nn.prelu %x, %w : (tensor<2x3xf16>, tensor<3xf32>) -> tensor<2x3xf16>
  return
}

// -----

// prelu: a 0-d input
func.func @f(%x: tensor<f32>, %w: tensor<1xf32>) {
  // expected-error @+2 {{expects an input of rank >= 1}}
  // expected-error @+1 {{'nn.prelu' op failed to infer returned types}}
  %0 = nn.prelu %x, %w : (tensor<f32>, tensor<1xf32>) -> tensor<f32>
  return
}

// -----

// elu: the in-place form with a negative alpha
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.elu' op in-place with a negative alpha -1.000000e+00 has no backward in PyTorch}}
  %0 = nn.elu %x {alpha = -1.0 : f64, inplace} : tensor<4xf32>
  return
}

// -----

// elu: an infinite scale
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.elu' op scale must be finite, got INF}}
  %0 = nn.elu %x {scale = 0x7FF0000000000000 : f64} : tensor<4xf32>
  return
}

// -----

// softplus: beta divides
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.softplus' op beta must not be zero}}
  %0 = nn.softplus %x {beta = 0.0 : f64} : tensor<4xf32>
  return
}

// -----

// mish: integer tensor
func.func @f(%x: tensor<4xi32>) {
  // expected-error @+1 {{'nn.mish' op operand #0 must be statically shaped tensor of floating-point values, but got 'tensor<4xi32>'}}
  %0 = nn.mish %x : tensor<4xi32>
  return
}

// -----

// A model-dtype constant has one floating-point value to convert.
func.func @model_dtype_not_splat() -> tensor<2xf32> {
  // expected-error @+1 {{'nn.constant' op model_dtype needs a floating-point splat value}}
  %c = nn.constant dense<[0.0, 1.0]> : tensor<2xf32> {model_dtype}
  return %c : tensor<2xf32>
}

// -----

func.func @model_dtype_integer() -> tensor<2xi64> {
  // expected-error @+1 {{'nn.constant' op model_dtype needs a floating-point splat value}}
  %c = nn.constant dense<0> : tensor<2xi64> {model_dtype}
  return %c : tensor<2xi64>
}

// -----

// torch.where makes a new tensor: never in place.
func.func @where_inplace(%x: tensor<2x8xf32>, %m: tensor<8xi1>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'nn.masked_fill' op is either in place (masked_fill_) or a where, not both}}
  %y = nn.masked_fill %x, %m {value = 0.0 : f64, inplace, where} : (tensor<2x8xf32>, tensor<8xi1>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}
