// RUN: vram-opt %s --vram-lora="r=2 alpha=2 targets=linear" | FileCheck %s

// A tied weight (GPT-2's lm_head reads the embedding's weight): the adapter
// is named by the layer's location, as peft names it by the module
// (`lm_head.lora_A.default.weight`), not by the weight's module.
// CHECK: nn.param "wte.weight" {trainable = false}
// CHECK: nn.embedding
// CHECK: nn.linear
// CHECK-NEXT: nn.param "lm_head.lora_A.default.weight" : tensor<2x8xf32>
// CHECK: nn.param "lm_head.lora_B.default.weight" : tensor<16x2xf32>
func.func @forward(%ids: tensor<2xi64>) -> tensor<2x16xf32> {
  %w = nn.param "wte.weight" : tensor<16x8xf32> loc("wte")
  %e = nn.embedding %w, %ids : (tensor<16x8xf32>, tensor<2xi64>) -> tensor<2x8xf32> loc("wte")
  %o = nn.linear %e, %w : (tensor<2x8xf32>, tensor<16x8xf32>) -> tensor<2x16xf32> loc("lm_head")
  return %o : tensor<2x16xf32>
}
