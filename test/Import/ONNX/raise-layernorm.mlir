// vram-onnx-raise on the LayerNorm decomposition of exports before opset 17.
// REQUIRES: onnx
// RUN: vram-opt %s -split-input-file --vram-onnx-raise | FileCheck %s

// Over the last dim, with weight and bias (1-D parameters); eps keeps the
// float value it had (1e-6 as f32).
// CHECK-LABEL: func.func @layer_norm_affine
// CHECK-NEXT: %[[W:.*]] = nn.param "ln.weight" : tensor<16xf32>
// CHECK-NEXT: %[[B:.*]] = nn.param "ln.bias" : tensor<16xf32>
// CHECK-NEXT: %[[LN:.*]] = nn.layer_norm %arg0 weight %[[W]] bias %[[B]] {eps = 9.9999999999999995E-7 : f64} : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
// CHECK-NEXT: return %[[LN]]
func.func @layer_norm_affine(%x: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %w = nn.param "ln.weight" : tensor<16xf32>
  %b = nn.param "ln.bias" : tensor<16xf32>
  %eps = nn.constant dense<9.99999997E-7> : tensor<f32>
  %m = nn.mean %x {dims = array<i64: 2>, keepdim} : (tensor<2x8x16xf32>) -> tensor<2x8x1xf32>
  %d = nn.sub %x, %m : (tensor<2x8x16xf32>, tensor<2x8x1xf32>) -> tensor<2x8x16xf32>
  %p = nn.pow %d {exponent = 2.0 : f64} : tensor<2x8x16xf32>
  %v = nn.mean %p {dims = array<i64: 2>, keepdim} : (tensor<2x8x16xf32>) -> tensor<2x8x1xf32>
  %ve = nn.add %v, %eps : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32>
  %s = nn.sqrt %ve : tensor<2x8x1xf32>
  %n = nn.div %d, %s : (tensor<2x8x16xf32>, tensor<2x8x1xf32>) -> tensor<2x8x16xf32>
  %y = nn.mul %n, %w : (tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  %z = nn.add %b, %y : (tensor<16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %z : tensor<2x8x16xf32>
}

// -----

// Over the last two dims: the 2-D scale is not a 1-D parameter, so the
// layer norm is raised without it and the product stays. eps 1e-5 is the
// default, not printed.
// CHECK-LABEL: func.func @layer_norm_2d_scale
// CHECK-NEXT: %[[W:.*]] = nn.param "ln.weight" : tensor<8x16xf32>
// CHECK-NEXT: %[[LN:.*]] = nn.layer_norm %arg0 {normalized_rank = 2 : i64} : (tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
// CHECK-NEXT: %[[Y:.*]] = nn.mul %[[LN]], %[[W]]
// CHECK-NEXT: return %[[Y]]
func.func @layer_norm_2d_scale(%x: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %w = nn.param "ln.weight" : tensor<8x16xf32>
  %eps = nn.constant dense<1.0E-5> : tensor<f32>
  %m = nn.mean %x {dims = array<i64: 1, 2>, keepdim} : (tensor<2x8x16xf32>) -> tensor<2x1x1xf32>
  %d = nn.sub %x, %m : (tensor<2x8x16xf32>, tensor<2x1x1xf32>) -> tensor<2x8x16xf32>
  %p = nn.pow %d {exponent = 2.0 : f64} : tensor<2x8x16xf32>
  %v = nn.mean %p {dims = array<i64: 1, 2>, keepdim} : (tensor<2x8x16xf32>) -> tensor<2x1x1xf32>
  %ve = nn.add %eps, %v : (tensor<f32>, tensor<2x1x1xf32>) -> tensor<2x1x1xf32>
  %s = nn.sqrt %ve : tensor<2x1x1xf32>
  %n = nn.div %d, %s : (tensor<2x8x16xf32>, tensor<2x1x1xf32>) -> tensor<2x8x16xf32>
  %y = nn.mul %n, %w : (tensor<2x8x16xf32>, tensor<8x16xf32>) -> tensor<2x8x16xf32>
  return %y : tensor<2x8x16xf32>
}

// -----

// Normalizing over a leading dim is not a layer norm; neither is a
// variance of another tensor.
// CHECK-LABEL: func.func @not_layer_norm
// CHECK-NOT: nn.layer_norm
// CHECK: return
func.func @not_layer_norm(%x: tensor<2x8x16xf32>, %y: tensor<2x8x16xf32>) -> (tensor<2x8x16xf32>, tensor<2x8x16xf32>) {
  %eps = nn.constant dense<1.0E-5> : tensor<f32>
  %m = nn.mean %x {dims = array<i64: 1>, keepdim} : (tensor<2x8x16xf32>) -> tensor<2x1x16xf32>
  %d = nn.sub %x, %m : (tensor<2x8x16xf32>, tensor<2x1x16xf32>) -> tensor<2x8x16xf32>
  %p = nn.pow %d {exponent = 2.0 : f64} : tensor<2x8x16xf32>
  %v = nn.mean %p {dims = array<i64: 1>, keepdim} : (tensor<2x8x16xf32>) -> tensor<2x1x16xf32>
  %ve = nn.add %v, %eps : (tensor<2x1x16xf32>, tensor<f32>) -> tensor<2x1x16xf32>
  %s = nn.sqrt %ve : tensor<2x1x16xf32>
  %n = nn.div %d, %s : (tensor<2x8x16xf32>, tensor<2x1x16xf32>) -> tensor<2x8x16xf32>
  %m2 = nn.mean %x {dims = array<i64: 2>, keepdim} : (tensor<2x8x16xf32>) -> tensor<2x8x1xf32>
  %d2 = nn.sub %x, %m2 : (tensor<2x8x16xf32>, tensor<2x8x1xf32>) -> tensor<2x8x16xf32>
  %p2 = nn.pow %y {exponent = 2.0 : f64} : tensor<2x8x16xf32>
  %v2 = nn.mean %p2 {dims = array<i64: 2>, keepdim} : (tensor<2x8x16xf32>) -> tensor<2x8x1xf32>
  %ve2 = nn.add %v2, %eps : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32>
  %s2 = nn.sqrt %ve2 : tensor<2x8x1xf32>
  %n2 = nn.div %d2, %s2 : (tensor<2x8x16xf32>, tensor<2x8x1xf32>) -> tensor<2x8x16xf32>
  return %n, %n2 : tensor<2x8x16xf32>, tensor<2x8x16xf32>
}
