// RUN: vram-opt %s -split-input-file --vram-quantize="quant-type=int8" | FileCheck %s --check-prefix=INT8
// RUN: vram-opt %s -split-input-file --vram-quantize="quant-type=int8 threshold=0" | FileCheck %s --check-prefix=NOTHRESH
// RUN: vram-opt %s -split-input-file --vram-quantize="quant-type=int8" --vram-lora="r=8 alpha=16 dropout=0.05 targets=all-linear" | FileCheck %s --check-prefix=LORA

// BitsAndBytesConfig(load_in_8bit=True): transformers' replace_with_bnb_linear
// makes every linear whose weight is a parameter a Linear8bitLt, except the
// output layer (lm_head): the weight in int8 with its float32 row scales,
// computing in the input's dtype (no casts, unlike Linear4bit's compute
// dtype). llm_int8_threshold is 6.0 unless given.
// INT8-LABEL: func.func @forward
// INT8-SAME: nn.quantize = #nn.quantize<int8, blocksize = 0, double_quant = false, threshold = 6.000000e+00>
// INT8: %[[W1:.*]], %{{.*}} = nn.quantized_weight "model.up.weight" <int8, blocksize = 0, double_quant = false, threshold = 6.000000e+00> shape [688, 256] from f16 : tensor<688x256xi8>, tensor<688xf32>
// INT8-NEXT: %[[H:.*]] = nn.linear_8bit %arg0, %[[W1]] : (tensor<2x8x256xf16>, tensor<688x256xi8>) -> tensor<2x8x688xf16>
// INT8: nn.quantized_weight "model.down.weight"
// INT8-NEXT: %[[B:.*]] = nn.param "model.down.bias" : tensor<256xf16>
// INT8-NEXT: nn.linear_8bit %[[H]], %{{.*}}, %[[B]]
// INT8: nn.param "lm_head.weight" : tensor<64x256xf16>
// INT8-NEXT: nn.linear
// NOTHRESH: nn.quantized_weight "model.up.weight" <int8, blocksize = 0, double_quant = false> shape [688, 256]

// peft's lora.bnb.Linear8bitLt: result = base(x) (no clone, unlike the 4-bit
// layer), the input cast to the float32 adapters (autocast_adapter_dtype),
// the scaled output cast back to float16 before the sum; the argument and
// its cast copy held until the layer returns.
// LORA-LABEL: func.func @forward
// LORA: %[[Y:.*]] = nn.linear_8bit %arg0
// LORA-NEXT: %[[X32:.*]] = nn.cast %arg0 : tensor<2x8x256xf16> to tensor<2x8x256xf32>
// LORA-NEXT: nn.dropout %[[X32]]
// LORA: nn.param "model.up.lora_A.default.weight" : tensor<8x256xf32>
// LORA: %[[M:.*]] = nn.mul %{{.*}}, %{{.*}} : (tensor<2x8x688xf32>, tensor<f32>) -> tensor<2x8x688xf32>
// LORA-NEXT: %[[M16:.*]] = nn.cast %[[M]] : tensor<2x8x688xf32> to tensor<2x8x688xf16>
// LORA-NEXT: %[[S:.*]] = nn.add %[[Y]], %[[M16]] : (tensor<2x8x688xf16>, tensor<2x8x688xf16>) -> tensor<2x8x688xf16>
// LORA-NEXT: nn.keep_alive %arg0, %[[X32]]
// LORA: nn.param "lm_head.weight" {trainable = false}
func.func @forward(%x: tensor<2x8x256xf16>) -> tensor<2x8x64xf16> {
  %w1 = nn.param "model.up.weight" : tensor<688x256xf16>
  %h = nn.linear %x, %w1 : (tensor<2x8x256xf16>, tensor<688x256xf16>) -> tensor<2x8x688xf16>
  %w2 = nn.param "model.down.weight" : tensor<256x688xf16>
  %b2 = nn.param "model.down.bias" : tensor<256xf16>
  %d = nn.linear %h, %w2, %b2 : (tensor<2x8x688xf16>, tensor<256x688xf16>, tensor<256xf16>) -> tensor<2x8x256xf16>
  %w3 = nn.param "lm_head.weight" : tensor<64x256xf16>
  %y = nn.linear %d, %w3 : (tensor<2x8x256xf16>, tensor<64x256xf16>) -> tensor<2x8x64xf16>
  return %y : tensor<2x8x64xf16>
}
