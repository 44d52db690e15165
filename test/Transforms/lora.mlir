// RUN: vram-opt %s -split-input-file --vram-lora="r=4 alpha=32 dropout=0.1 targets=conv2d" | FileCheck %s --check-prefix=CONV
// RUN: vram-opt %s -split-input-file --vram-lora="r=4 alpha=32 dropout=0.1 targets=conv2d" --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC
// RUN: vram-opt %s -split-input-file --vram-lora="r=2 alpha=4 targets=fc" | FileCheck %s --check-prefix=GLOB

// peft's lora.Conv2d: lora_A = Conv2d(3, 4, kernel 3, stride 2, padding 1,
// bias=False), lora_B = Conv2d(4, 8, 1x1, bias=False), lora_dropout =
// Dropout(0.1) on the layer's input, scaling = 32 / 4 = 8.0, and
// result = base(x) + lora_B(lora_A(dropout(x))) * scaling out of place.
// get_peft_model freezes every non-LoRA parameter (the classifier too).
// CONV-LABEL: func.func @forward
// CONV: %[[W:.*]] = nn.param "conv.weight" {trainable = false} : tensor<8x3x3x3xf32>
// CONV: %[[B:.*]] = nn.param "conv.bias" {trainable = false} : tensor<8xf32>
// CONV: %[[Y:.*]] = nn.conv2d %arg0, %[[W]], %[[B]] {padding = array<i64: 1, 1>, strides = array<i64: 2, 2>}
// CONV-NEXT: %[[D:.*]] = nn.dropout %arg0 {p = 1.000000e-01 : f64} : tensor<2x3x16x16xf32>
// CONV-NEXT: %[[A:.*]] = nn.param "conv.lora_A.default.weight" : tensor<4x3x3x3xf32>
// CONV-NEXT: %[[XA:.*]] = nn.conv2d %[[D]], %[[A]] {padding = array<i64: 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x3x16x16xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32>
// CONV-NEXT: %[[BW:.*]] = nn.param "conv.lora_B.default.weight" : tensor<8x4x1x1xf32>
// CONV-NEXT: %[[XB:.*]] = nn.conv2d %[[XA]], %[[BW]] : (tensor<2x4x8x8xf32>, tensor<8x4x1x1xf32>) -> tensor<2x8x8x8xf32>
// CONV-NEXT: %[[S:.*]] = nn.constant dense<8.000000e+00> : tensor<f32>
// CONV-NEXT: %[[M:.*]] = nn.mul %[[XB]], %[[S]] : (tensor<2x8x8x8xf32>, tensor<f32>) -> tensor<2x8x8x8xf32>
// CONV-NEXT: %[[SUM:.*]] = nn.add %[[Y]], %[[M]] : (tensor<2x8x8x8xf32>, tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
// The caller holds the layer's input until peft's forward returns.
// CONV-NEXT: nn.keep_alive %arg0 : tensor<2x3x16x16xf32>
// The layer's users read the sum.
// CONV-NEXT: %[[F:.*]] = nn.flatten %[[SUM]]
// CONV: nn.param "fc.weight" {trainable = false}
// CONV-NOT: lora
// CONV: return

// The new ops are named by their peft module, so report rows read
// `conv.lora_A`; the sum belongs to the layer itself.
// LOC: nn.dropout {{.*}} loc(#[[DROP:.*]])
// LOC: nn.param "conv.lora_A.default.weight" {{.*}} loc(#[[ALOC:.*]])
// LOC: nn.add {{.*}} loc(#[[BASE:.*]])
// LOC-DAG: #[[BASE]] = loc("conv")
// LOC-DAG: #[[DROP]] = loc("conv.lora_dropout"(#[[BASE]]))
// LOC-DAG: #[[ALOC]] = loc("conv.lora_A"(#[[BASE]]))

// A glob or module path selects layers by name; dropout 0 (peft's
// nn.Identity) adds no op; a linear layer gets linear adapters.
// GLOB-LABEL: func.func @forward
// GLOB: nn.param "conv.weight" {trainable = false}
// GLOB: nn.conv2d %arg0
// GLOB-NOT: lora
// GLOB: %[[FW:.*]] = nn.param "fc.weight" {trainable = false} : tensor<10x512xf32>
// GLOB: %[[O:.*]] = nn.linear %[[X:.*]], %[[FW]], %{{.*}} :
// GLOB-NOT: nn.dropout
// GLOB-NEXT: %[[A:.*]] = nn.param "fc.lora_A.default.weight" : tensor<2x512xf32>
// GLOB-NEXT: %[[XA:.*]] = nn.linear %[[X]], %[[A]] : (tensor<2x512xf32>, tensor<2x512xf32>) -> tensor<2x2xf32>
// GLOB-NEXT: %[[BW:.*]] = nn.param "fc.lora_B.default.weight" : tensor<10x2xf32>
// GLOB-NEXT: %[[XB:.*]] = nn.linear %[[XA]], %[[BW]] : (tensor<2x2xf32>, tensor<10x2xf32>) -> tensor<2x10xf32>
// GLOB-NEXT: nn.constant dense<2.000000e+00> : tensor<f32>
// GLOB-NEXT: nn.mul %[[XB]]
// GLOB-NEXT: %[[SUM:.*]] = nn.add %[[O]]
// GLOB-NEXT: nn.keep_alive %[[X]] : tensor<2x512xf32>
// GLOB-NEXT: return %[[SUM]]
func.func @forward(%x: tensor<2x3x16x16xf32>) -> tensor<2x10xf32> {
  %w = nn.param "conv.weight" : tensor<8x3x3x3xf32> loc("conv")
  %b = nn.param "conv.bias" : tensor<8xf32> loc("conv")
  %y = nn.conv2d %x, %w, %b {strides = array<i64: 2, 2>, padding = array<i64: 1, 1>} : (tensor<2x3x16x16xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<2x8x8x8xf32> loc("conv")
  %f = nn.flatten %y : (tensor<2x8x8x8xf32>) -> tensor<2x512xf32> loc("flatten")
  %fw = nn.param "fc.weight" : tensor<10x512xf32> loc("fc")
  %fb = nn.param "fc.bias" : tensor<10xf32> loc("fc")
  %o = nn.linear %f, %fw, %fb : (tensor<2x512xf32>, tensor<10x512xf32>, tensor<10xf32>) -> tensor<2x10xf32> loc("fc")
  return %o : tensor<2x10xf32>
}
