// RUN: vram-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// torch.result_type: a zero-dim tensor (a Python scalar such as peft's
// `* scaling`) does not widen a dimensioned tensor of the same category;
// two dimensioned tensors promote to the wider dtype.
// CHECK-LABEL: func.func @scalar
// CHECK: nn.mul %arg0, %arg1 : (tensor<4xf16>, tensor<f32>) -> tensor<4xf16>
// CHECK: nn.add %arg1, %arg0 : (tensor<f32>, tensor<4xf16>) -> tensor<4xf16>
// CHECK: nn.mul %arg0, %arg2 : (tensor<4xf16>, tensor<1xf32>) -> tensor<4xf32>
func.func @scalar(%a: tensor<4xf16>, %s: tensor<f32>, %t: tensor<1xf32>) -> (tensor<4xf16>, tensor<4xf16>, tensor<4xf32>) {
  %0 = nn.mul %a, %s : (tensor<4xf16>, tensor<f32>) -> tensor<4xf16>
  %1 = nn.add %s, %a : (tensor<f32>, tensor<4xf16>) -> tensor<4xf16>
  %2 = nn.mul %a, %t : (tensor<4xf16>, tensor<1xf32>) -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xf16>, tensor<4xf16>, tensor<4xf32>
}

// -----

func.func @wrong(%a: tensor<4xf16>, %s: tensor<f32>) -> tensor<4xf32> {
  // expected-error @+2 {{'nn.mul' op inferred type(s) 'tensor<4xf16>' are incompatible with return type(s) of operation 'tensor<4xf32>'}}
  // expected-error @+1 {{'nn.mul' op failed to infer returned types}}
  %0 = nn.mul %a, %s : (tensor<4xf16>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
