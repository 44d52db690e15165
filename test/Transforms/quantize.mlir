// RUN: vram-opt %s -split-input-file --vram-quantize | FileCheck %s --check-prefix=NF4
// RUN: vram-opt %s -split-input-file --vram-quantize="quant-type=fp4 double-quant=true" | FileCheck %s --check-prefix=DQ
// RUN: vram-opt %s -split-input-file --vram-quantize --vram-lora="r=8 alpha=16 dropout=0.05 targets=all-linear" | FileCheck %s --check-prefix=QLORA

// transformers' replace_with_bnb_linear: every linear whose weight is a
// parameter becomes a Linear4bit, except the output layer (get_keys_to_not_
// convert keeps lm_head). A float32 input computes in float32.
// NF4-LABEL: func.func @forward
// NF4-SAME: nn.quantize = #nn.quantize<nf4, blocksize = 64, double_quant = false>
// NF4: %[[W1:.*]], %{{.*}}:2 = nn.quantized_weight "model.up.weight" <nf4, blocksize = 64, double_quant = false> shape [688, 256] from f32 : tensor<88064x1xui8>, tensor<2752xf32>, tensor<16xf32>
// NF4-NEXT: %[[H:.*]] = nn.linear_4bit %arg0, %[[W1]] : (tensor<2x8x256xf32>, tensor<88064x1xui8>) -> tensor<2x8x688xf32>
// NF4: nn.quantized_weight "model.down.weight"
// NF4-NEXT: %[[B:.*]] = nn.param "model.down.bias" : tensor<256xf32>
// NF4-NEXT: nn.linear_4bit %[[H]], %{{.*}}, %[[B]]
// NF4: nn.param "lm_head.weight" : tensor<64x256xf32>
// NF4-NEXT: nn.linear
// DQ: nn.quantized_weight "model.up.weight" <fp4, blocksize = 64, double_quant = true> shape [688, 256] from f32 : tensor<88064x1xui8>, tensor<2752xui8>, tensor<16xf32>, tensor<f32>, tensor<11xf32>, tensor<256xf32>

// QLoRA: peft's lora.bnb.Linear4bit: result = base(x).clone(), then
// result + lora_B(lora_A(dropout(x))) * scaling; the adapters are float32
// (the base weight is uint8); every non-LoRA parameter is frozen.
// QLORA-LABEL: func.func @forward
// QLORA: %[[Y:.*]] = nn.linear_4bit %arg0
// QLORA-NEXT: %[[C:.*]] = nn.contiguous %[[Y]] : tensor<2x8x688xf32>
// QLORA-NEXT: %[[D:.*]] = nn.dropout %arg0
// QLORA-NEXT: nn.param "model.up.lora_A.default.weight" : tensor<8x256xf32>
// QLORA: %[[M:.*]] = nn.mul
// QLORA-NEXT: nn.add %[[C]], %[[M]]
// QLORA: nn.param "model.down.bias" {trainable = false}
// QLORA: nn.param "lm_head.weight" {trainable = false}
// QLORA-NOT: lm_head.lora
func.func @forward(%x: tensor<2x8x256xf32>) -> tensor<2x8x64xf32> {
  %w1 = nn.param "model.up.weight" : tensor<688x256xf32>
  %h = nn.linear %x, %w1 : (tensor<2x8x256xf32>, tensor<688x256xf32>) -> tensor<2x8x688xf32>
  %w2 = nn.param "model.down.weight" : tensor<256x688xf32>
  %b2 = nn.param "model.down.bias" : tensor<256xf32>
  %d = nn.linear %h, %w2, %b2 : (tensor<2x8x688xf32>, tensor<256x688xf32>, tensor<256xf32>) -> tensor<2x8x256xf32>
  %w3 = nn.param "lm_head.weight" : tensor<64x256xf32>
  %y = nn.linear %d, %w3 : (tensor<2x8x256xf32>, tensor<64x256xf32>) -> tensor<2x8x64xf32>
  return %y : tensor<2x8x64xf32>
}

// -----

// A float16 model computes in bnb_4bit_compute_dtype (float32 by default):
// x.to(compute_dtype), then matmul_4bit(...).to(inp_dtype). A tied weight
// (read by the embedding too) stays unquantized.
// NF4-LABEL: func.func @forward
// NF4: %[[WTE:.*]] = nn.param "wte.weight" : tensor<100x32xf16>
// NF4: nn.quantized_weight "proj.weight" <nf4, blocksize = 64, double_quant = false> shape [32, 32] from f16 : tensor<512x1xui8>, tensor<16xf32>, tensor<16xf32>
// NF4-NEXT: %[[X:.*]] = nn.cast %{{.*}} : tensor<4x32xf16> to tensor<4x32xf32>
// NF4-NEXT: %[[Y:.*]] = nn.linear_4bit %[[X]], %{{.*}} : (tensor<4x32xf32>, tensor<512x1xui8>) -> tensor<4x32xf32>
// NF4-NEXT: %[[Y16:.*]] = nn.cast %[[Y]] : tensor<4x32xf32> to tensor<4x32xf16>
// NF4-NEXT: nn.linear %[[Y16]], %[[WTE]]

// QLoRA over float16: the input is cast to the float32 adapters, and their
// scaled output back to float16 before the sum (output.to(expected_dtype)).
// QLORA-LABEL: func.func @forward
// QLORA: %[[B:.*]] = nn.cast %{{.*}} : tensor<4x32xf32> to tensor<4x32xf16>
// QLORA-NEXT: %[[C:.*]] = nn.contiguous %[[B]] : tensor<4x32xf16>
// QLORA-NEXT: %[[X32:.*]] = nn.cast %[[E:.*]] : tensor<4x32xf16> to tensor<4x32xf32>
// QLORA-NEXT: nn.dropout %[[X32]]
// QLORA: %[[M:.*]] = nn.mul %{{.*}}, %{{.*}} : (tensor<4x32xf32>, tensor<f32>) -> tensor<4x32xf32>
// QLORA-NEXT: %[[M16:.*]] = nn.cast %[[M]] : tensor<4x32xf32> to tensor<4x32xf16>
// QLORA-NEXT: nn.add %[[C]], %[[M16]] : (tensor<4x32xf16>, tensor<4x32xf16>) -> tensor<4x32xf16>
func.func @forward(%ids: tensor<4xi64>) -> tensor<4x100xf16> {
  %wte = nn.param "wte.weight" : tensor<100x32xf16>
  %e = nn.embedding %wte, %ids : (tensor<100x32xf16>, tensor<4xi64>) -> tensor<4x32xf16>
  %wp = nn.param "proj.weight" : tensor<32x32xf16>
  %p = nn.linear %e, %wp : (tensor<4x32xf16>, tensor<32x32xf16>) -> tensor<4x32xf16>
  %logits = nn.linear %p, %wte : (tensor<4x32xf16>, tensor<100x32xf16>) -> tensor<4x100xf16>
  return %logits : tensor<4x100xf16>
}
