// RUN: vram-opt %s --vram-build-step="mode=train optimizer=sgd loss=mse" | FileCheck %s

// relu6_ on a tensor that needs a gradient: hardtanh_ has no formula of its
// own, so autograd clones the input (VariableType's self.clone()) before
// the op overwrites it and its backward reads the clone. The clone is an
// nn.saved {before_op} of the op's operands, right before the op, where
// the memory analysis allocates it too.
// CHECK-LABEL: func.func @step
// CHECK: %[[H:.*]] = nn.mul
// CHECK-NEXT: %[[CLONE:.*]] = nn.saved "self_clone" of "nn.relu6"(%[[H]]) {before_op, forward_attrs = {inplace}}
// CHECK-NEXT: %[[Y:.*]] = nn.relu6 %[[H]] {inplace}
// CHECK: nn.backward "nn.relu6" saved(%[[CLONE]])
func.func @forward() -> tensor<2x5xf32> {
  %x = nn.param "x" : tensor<2x5xf32>
  %c = nn.constant dense<2.000000e+00> : tensor<f32>
  %h = nn.mul %x, %c : (tensor<2x5xf32>, tensor<f32>) -> tensor<2x5xf32>
  %y = nn.relu6 %h {inplace} : tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}
