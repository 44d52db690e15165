// RUN: vram-opt %s --vram-lora="r=4 alpha=32 dropout=0.1 targets=conv2d" --vram-precision="precision=amp-fp16" | FileCheck %s

// LoRA under autocast: the adapters' convolutions run in fp16 on cast
// copies of their fp32 weights, and `* scaling` (a Python float, a zero-dim
// tensor) keeps the fp16 result, so the sum stays fp16, as in PyTorch.
// CHECK: %[[Y:.*]] = nn.conv2d {{.*}} -> tensor<2x8x8x8xf16>
// CHECK: nn.param "conv.lora_A.default.weight" : tensor<4x3x3x3xf32>
// CHECK: nn.cast {{.*}} to tensor<4x3x3x3xf16>
// CHECK: nn.conv2d {{.*}} -> tensor<2x4x8x8xf16>
// CHECK: %[[B:.*]] = nn.conv2d {{.*}} -> tensor<2x8x8x8xf16>
// CHECK: %[[S:.*]] = nn.constant dense<8.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[M:.*]] = nn.mul %[[B]], %[[S]] : (tensor<2x8x8x8xf16>, tensor<f32>) -> tensor<2x8x8x8xf16>
// CHECK-NEXT: nn.add %[[Y]], %[[M]] : (tensor<2x8x8x8xf16>, tensor<2x8x8x8xf16>) -> tensor<2x8x8x8xf16>
func.func @forward(%x: tensor<2x3x8x8xf32>) -> tensor<2x10xf32> {
  %w = nn.param "conv.weight" : tensor<8x3x3x3xf32> loc("conv")
  %y = nn.conv2d %x, %w {padding = array<i64: 1, 1>} : (tensor<2x3x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<2x8x8x8xf32> loc("conv")
  %f = nn.flatten %y : (tensor<2x8x8x8xf32>) -> tensor<2x512xf32> loc("flatten")
  %fw = nn.param "fc.weight" : tensor<10x512xf32> loc("fc")
  %o = nn.linear %f, %fw : (tensor<2x512xf32>, tensor<10x512xf32>) -> tensor<2x10xf32> loc("fc")
  return %o : tensor<2x10xf32>
}
