// RUN: vram-opt %s --vram-build-step="mode=inference" | FileCheck %s

// Inference needs no loss: any number of outputs.
// CHECK-LABEL: func.func @step(%arg0: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) attributes {nn.device = "cuda", nn.mode = #nn<mode inference>, nn.torch_version = "2"}
// CHECK-NEXT: %[[R:.*]] = nn.relu %arg0
// CHECK-NEXT: return %[[R]], %arg0
func.func @forward(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %r = nn.relu %x : tensor<2x8xf32>
  return %r, %x : tensor<2x8xf32>, tensor<2x8xf32>
}
