// nn.erf and nn.clamp (the ONNX importer's 1:1 forms of Erf and Clip):
// round trip, then what their backward keeps and what they cost.
// RUN: vram-opt --format=mlir %s -split-input-file | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: vram-opt %s -split-input-file --mode=train --format=json | FileCheck %s --check-prefix=SAVED

// ROUNDTRIP-LABEL: func.func @forward
// ROUNDTRIP: nn.erf %{{.*}} : tensor<2x8xf32>
// ROUNDTRIP: nn.clamp %{{.*}} {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : tensor<2x8xf32>
// ROUNDTRIP: nn.clamp %{{.*}} {min = -1.000000e+00 : f64} : tensor<2x8xf32>
// ROUNDTRIP: nn.clamp %{{.*}} {max = 2.500000e+00 : f64} : tensor<2x8xf32>
// erf keeps its input (the linear output, 64 bytes = 2x8 f32;
// derivatives.yaml: 2 / sqrt(pi) * exp(-self^2) * grad) and each of the
// three clamps keeps its own input (64 each): 256.
// SAVED-NOT: "saved_for_backward_bytes"
// SAVED: "saved_for_backward_bytes": 256,
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = nn.param "w" : tensor<8x8xf32>
  %y = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %e = nn.erf %y : tensor<2x8xf32>
  %c = nn.clamp %e {max = 6.0 : f64, min = 0.0 : f64} : tensor<2x8xf32>
  %l = nn.clamp %c {min = -1.0 : f64} : tensor<2x8xf32>
  %h = nn.clamp %l {max = 2.5 : f64} : tensor<2x8xf32>
  return %h : tensor<2x8xf32>
}

// -----

// ROUNDTRIP-LABEL: func.func @forward
// clamp keeps its input (clamp_backward(grad, self, min, max)): the erf
// output, 64 bytes, besides the erf's own 64.
// SAVED-NOT: "saved_for_backward_bytes"
// SAVED: "saved_for_backward_bytes": 128,
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = nn.param "w" : tensor<8x8xf32>
  %y = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %e = nn.erf %y : tensor<2x8xf32>
  %c = nn.clamp %e {max = 6.0 : f64, min = 0.0 : f64} : tensor<2x8xf32>
  return %c : tensor<2x8xf32>
}
