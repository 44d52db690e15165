// RUN: vram-opt %s --vram-lora="r=4 alpha=8 targets=linear" | FileCheck %s
// RUN: vram-opt %s --vram-lora="r=4 alpha=8 targets=linear autocast-adapter-dtype=false" | FileCheck %s --check-prefix=BASE

// peft 0.21.2 over a bfloat16 layer: the adapters are made in float32 and
// kept there (get_peft_model's autocast_adapter_dtype=True), so lora.Linear
// casts its input to their dtype (a copy per layer), the sum promotes to
// float32 and result.to(torch_result_dtype) casts it back.
// CHECK-LABEL: func.func @forward
// CHECK: %[[Y:.*]] = nn.linear %arg0, %{{.*}} : (tensor<2x16xbf16>, tensor<8x16xbf16>) -> tensor<2x8xbf16>
// CHECK-NEXT: %[[X32:.*]] = nn.cast %arg0 : tensor<2x16xbf16> to tensor<2x16xf32>
// CHECK-NEXT: nn.param "fc.lora_A.default.weight" : tensor<4x16xf32>
// CHECK-NEXT: %[[A:.*]] = nn.linear %[[X32]]
// CHECK-NEXT: nn.param "fc.lora_B.default.weight" : tensor<8x4xf32>
// CHECK-NEXT: %[[B:.*]] = nn.linear %[[A]]
// CHECK-NEXT: %[[S:.*]] = nn.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[M:.*]] = nn.mul %[[B]], %[[S]] : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
// CHECK-NEXT: %[[SUM:.*]] = nn.add %[[Y]], %[[M]] : (tensor<2x8xbf16>, tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: %[[OUT:.*]] = nn.cast %[[SUM]] : tensor<2x8xf32> to tensor<2x8xbf16>
// The input and its float32 copy stay bound until the forward returns.
// CHECK-NEXT: nn.keep_alive %arg0, %[[X32]] : tensor<2x16xbf16>, tensor<2x16xf32>
// CHECK-NEXT: return %[[OUT]]

// autocast_adapter_dtype=False: the adapters take the layer's dtype, and
// nothing is cast.
// BASE: nn.param "fc.lora_A.default.weight" : tensor<4x16xbf16>
// BASE-NOT: nn.cast
// BASE: return
func.func @forward(%x: tensor<2x16xbf16>) -> tensor<2x8xbf16> {
  %w = nn.param "fc.weight" : tensor<8x16xbf16>
  %y = nn.linear %x, %w : (tensor<2x16xbf16>, tensor<8x16xbf16>) -> tensor<2x8xbf16>
  return %y : tensor<2x8xbf16>
}
