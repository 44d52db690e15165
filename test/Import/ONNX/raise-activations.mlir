// vram-onnx-raise on activations: GELU (erf and tanh forms, each
// association of the tail), SiLU, HardSwish, clamp -> relu6/relu; and the
// near misses it must leave alone.
// REQUIRES: onnx
// RUN: vram-opt %s -split-input-file --vram-onnx-raise | FileCheck %s

// CHECK-LABEL: func.func @gelu_erf_div
// CHECK-NEXT: %[[G:.*]] = nn.gelu %arg0 : tensor<2x8xf32>
// CHECK-NEXT: return %[[G]]
func.func @gelu_erf_div(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %sqrt2 = nn.constant dense<1.41421354> : tensor<f32>
  %one = nn.constant dense<1.0> : tensor<f32>
  %half = nn.constant dense<0.5> : tensor<f32>
  %d = nn.div %x, %sqrt2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e = nn.erf %d : tensor<2x8xf32>
  %a = nn.add %e, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %m = nn.mul %x, %a : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %g = nn.mul %m, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  return %g : tensor<2x8xf32>
}

// -----

// (1 + erf(x * (1/sqrt 2))) * (0.5 * x)
// CHECK-LABEL: func.func @gelu_erf_mul_half_first
// CHECK-NEXT: %[[G:.*]] = nn.gelu %arg0 : tensor<2x8xf32>
// CHECK-NEXT: return %[[G]]
func.func @gelu_erf_mul_half_first(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %r = nn.constant dense<0.707106769> : tensor<f32>
  %one = nn.constant dense<1.0> : tensor<f32>
  %half = nn.constant dense<0.5> : tensor<f32>
  %h = nn.mul %half, %x : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %d = nn.mul %x, %r : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e = nn.erf %d : tensor<2x8xf32>
  %a = nn.add %one, %e : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %g = nn.mul %a, %h : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %g : tensor<2x8xf32>
}

// -----

// ((1 + erf(x / sqrt 2)) * 0.5) * x
// CHECK-LABEL: func.func @gelu_erf_half_then_x
// CHECK-NEXT: %[[G:.*]] = nn.gelu %arg0 : tensor<2x8xf32>
// CHECK-NEXT: return %[[G]]
func.func @gelu_erf_half_then_x(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %sqrt2 = nn.constant dense<1.41421354> : tensor<f32>
  %one = nn.constant dense<1.0> : tensor<f32>
  %half = nn.constant dense<0.5> : tensor<f32>
  %d = nn.div %x, %sqrt2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e = nn.erf %d : tensor<2x8xf32>
  %a = nn.add %e, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %m = nn.mul %a, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %g = nn.mul %m, %x : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %g : tensor<2x8xf32>
}

// -----

// CHECK-LABEL: func.func @gelu_tanh
// CHECK-NEXT: %[[G:.*]] = nn.gelu %arg0 {approximate = #nn<approximate tanh>} : tensor<2x8xf32>
// CHECK-NEXT: return %[[G]]
func.func @gelu_tanh(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %c = nn.constant dense<0.797884583> : tensor<f32>
  %k = nn.constant dense<4.471500e-02> : tensor<f32>
  %one = nn.constant dense<1.0> : tensor<f32>
  %half = nn.constant dense<0.5> : tensor<f32>
  %p = nn.pow %x {exponent = 3.0 : f64} : tensor<2x8xf32>
  %kp = nn.mul %k, %p : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %s = nn.add %x, %kp : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %cs = nn.mul %s, %c : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %t = nn.tanh %cs : tensor<2x8xf32>
  %a = nn.add %t, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %m = nn.mul %x, %a : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %g = nn.mul %m, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  return %g : tensor<2x8xf32>
}

// -----

// The erf result is also returned: the decomposition stays as written.
// CHECK-LABEL: func.func @gelu_intermediate_used
// CHECK-NOT: nn.gelu
// CHECK: nn.erf
// CHECK: return
func.func @gelu_intermediate_used(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %sqrt2 = nn.constant dense<1.41421354> : tensor<f32>
  %one = nn.constant dense<1.0> : tensor<f32>
  %half = nn.constant dense<0.5> : tensor<f32>
  %d = nn.div %x, %sqrt2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e = nn.erf %d : tensor<2x8xf32>
  %a = nn.add %e, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %m = nn.mul %x, %a : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %g = nn.mul %m, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  return %g, %e : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// 0.6 is not GELU's 0.5; the erf of another tensor is not x's.
// CHECK-LABEL: func.func @gelu_wrong_constants
// CHECK-NOT: nn.gelu
// CHECK: return
func.func @gelu_wrong_constants(%x: tensor<2x8xf32>, %y: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %sqrt2 = nn.constant dense<1.41421354> : tensor<f32>
  %one = nn.constant dense<1.0> : tensor<f32>
  %bad = nn.constant dense<0.6> : tensor<f32>
  %half = nn.constant dense<0.5> : tensor<f32>
  %d = nn.div %x, %sqrt2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e = nn.erf %d : tensor<2x8xf32>
  %a = nn.add %e, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %m = nn.mul %x, %a : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %g = nn.mul %m, %bad : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %d2 = nn.div %y, %sqrt2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e2 = nn.erf %d2 : tensor<2x8xf32>
  %a2 = nn.add %e2, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %m2 = nn.mul %x, %a2 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %g2 = nn.mul %m2, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  return %g, %g2 : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// CHECK-LABEL: func.func @silu
// CHECK-NEXT: %[[S:.*]] = nn.silu %arg0 : tensor<2x8xf32>
// CHECK-NEXT: %[[H:.*]] = nn.hardswish %arg0 : tensor<2x8xf32>
// CHECK-NEXT: return %[[S]], %[[H]]
func.func @silu(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %s = nn.sigmoid %x : tensor<2x8xf32>
  %y = nn.mul %s, %x : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %h = nn.hardsigmoid %x : tensor<2x8xf32>
  %z = nn.mul %x, %h : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %y, %z : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// x * sigmoid(y) is a gate, not SiLU; a sigmoid used twice stays.
// CHECK-LABEL: func.func @silu_negative
// CHECK-NOT: nn.silu
// CHECK: return
func.func @silu_negative(%x: tensor<2x8xf32>, %y: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
  %s = nn.sigmoid %y : tensor<2x8xf32>
  %g = nn.mul %x, %s : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %t = nn.sigmoid %x : tensor<2x8xf32>
  %u = nn.mul %x, %t : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %g, %u, %t : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// CHECK-LABEL: func.func @clamp
// CHECK-NEXT: %[[A:.*]] = nn.relu6 %arg0 : tensor<2x8xf32>
// CHECK-NEXT: %[[B:.*]] = nn.relu %[[A]] : tensor<2x8xf32>
// CHECK-NEXT: %[[C:.*]] = nn.clamp %[[B]] {max = 5.000000e+00 : f64, min = 0.000000e+00 : f64}
// CHECK-NEXT: %[[D:.*]] = nn.clamp %[[C]] {max = 6.000000e+00 : f64, min = -1.000000e+00 : f64}
// CHECK-NEXT: %[[E:.*]] = nn.clamp %[[D]] {max = 6.000000e+00 : f64}
// CHECK-NEXT: return %[[E]]
func.func @clamp(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %a = nn.clamp %x {max = 6.0 : f64, min = 0.0 : f64} : tensor<2x8xf32>
  %b = nn.clamp %a {min = 0.0 : f64} : tensor<2x8xf32>
  %c = nn.clamp %b {max = 5.0 : f64, min = 0.0 : f64} : tensor<2x8xf32>
  %d = nn.clamp %c {max = 6.0 : f64, min = -1.0 : f64} : tensor<2x8xf32>
  %e = nn.clamp %d {max = 6.0 : f64} : tensor<2x8xf32>
  return %e : tensor<2x8xf32>
}
