// Invalid nn.erf and nn.clamp.
// RUN: vram-opt %s -split-input-file -verify-diagnostics

// erf: integer tensor
func.func @f(%x: tensor<4xi32>) {
  // expected-error @+1 {{'nn.erf' op operand #0 must be statically shaped tensor of floating-point values, but got 'tensor<4xi32>'}}
  %0 = nn.erf %x : tensor<4xi32>
  return
}

// -----

// clamp: no bound
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.clamp' op needs a min or a max bound}}
  %0 = nn.clamp %x : tensor<4xf32>
  return
}

// -----

// clamp: min above max
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.clamp' op min 6.000000e+00 is greater than max 0.000000e+00}}
  %0 = nn.clamp %x {max = 0.0 : f64, min = 6.0 : f64} : tensor<4xf32>
  return
}

// -----

// clamp: result type differs from the operand type (generic form)
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.clamp' op requires the same type for all operands and results}}
  %0 = "nn.clamp"(%x) {min = 0.0 : f64} : (tensor<4xf32>) -> tensor<4xf16>
  return
}
