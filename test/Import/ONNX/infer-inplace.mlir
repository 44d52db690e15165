// vram-onnx-infer-inplace: ReLU and Add after batch_norm or add run in
// place (torchvision's ReLU(inplace=True) and `out += identity`), unless
// their input has another use or the add broadcasts its lhs.
// REQUIRES: onnx
// RUN: vram-opt %s --vram-onnx-infer-inplace | FileCheck %s
// RUN: vram-opt %s --vram-onnx-infer-inplace="add=false" | FileCheck %s --check-prefix=NOADD

// CHECK-LABEL: func.func @resnet_block
// NOADD-LABEL: func.func @resnet_block
func.func @resnet_block(%x: tensor<2x4x8x8xf32>, %w: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>, %s: tensor<1x4x1x1xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) {
  %bn = nn.batch_norm %x weight %w bias %b stats %m, %v : (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf32>
  // CHECK: nn.relu %{{.*}} {inplace}
  // NOADD: nn.relu %{{.*}} {inplace}
  %r = nn.relu %bn : tensor<2x4x8x8xf32>
  %bn2 = nn.batch_norm %r weight %w bias %b stats %m, %v : (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf32>
  // CHECK: nn.add %{{.*}}, %{{.*}} {inplace}
  // NOADD: nn.add %{{[0-9]+}}, %arg0 :
  %sum = nn.add %bn2, %x : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  // CHECK: nn.relu %{{.*}} {inplace}
  %out = nn.relu %sum : tensor<2x4x8x8xf32>
  // The input of this relu is also returned: not in place.
  // CHECK: nn.relu %{{[0-9]+}} : tensor
  %bn3 = nn.batch_norm %out weight %w bias %b stats %m, %v : (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf32>
  %r3 = nn.relu %bn3 : tensor<2x4x8x8xf32>
  // The input of this relu is a conv-less sigmoid: not in place.
  // CHECK: nn.relu %{{[0-9]+}} : tensor
  %sg = nn.sigmoid %r3 : tensor<2x4x8x8xf32>
  %r4 = nn.relu %sg : tensor<2x4x8x8xf32>
  return %r3, %bn3, %r4, %out : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>
}

// -----

// An add whose result is larger than its lhs (broadcast) cannot run in place.
// RUN: vram-opt %s -split-input-file --vram-onnx-infer-inplace | FileCheck %s --check-prefix=BCAST
// BCAST-LABEL: func.func @broadcast
// BCAST: nn.add %{{[0-9]+}}, %arg0 : (tensor<1x4x1x1xf32>, tensor<2x4x8x8xf32>)
func.func @broadcast(%x: tensor<2x4x8x8xf32>, %s: tensor<1x4x1x1xf32>) -> tensor<2x4x8x8xf32> {
  %a = nn.add %s, %s : (tensor<1x4x1x1xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x1x1xf32>
  %y = nn.add %a, %x : (tensor<1x4x1x1xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  return %y : tensor<2x4x8x8xf32>
}
