// RUN: vram-opt %s -split-input-file -verify-diagnostics --vram-quantize
// RUN: not vram-opt %s -split-input-file --vram-quantize="blocksize=100" 2>&1 | FileCheck %s --check-prefix=BLOCK
// BLOCK: 4-bit quantization blocksize must be a power of two in [32, 4096], got 100
// RUN: not vram-opt %s -split-input-file --vram-quantize="quant-type=int8 double-quant=true" 2>&1 | FileCheck %s --check-prefix=INT8-DQ
// INT8-DQ: int8 (LLM.int8) weights are not quantized twice: double-quant is a 4-bit option
// RUN: not vram-opt %s -split-input-file --vram-quantize="quant-type=int8 threshold=-2" 2>&1 | FileCheck %s --check-prefix=INT8-THRESHOLD
// INT8-THRESHOLD: the int8 outlier threshold must be finite and non-negative, got -2

// Only the output layer: nothing to quantize.
// expected-error @+1 {{no linear layer to quantize: quantized weights replace the linear layers whose weight is a parameter, except the output layer and tied weights}}
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %w = nn.param "head.weight" : tensor<4x8xf32>
  %y = nn.linear %x, %w : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// expected-error @+1 {{quantized weights under torch.autocast are not modelled: load the model in its compute dtype (--precision=bf16)}}
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x4xf32> attributes {nn.autocast = bf16} {
  %w = nn.param "fc.weight" : tensor<8x8xf32>
  %h = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %w2 = nn.param "head.weight" : tensor<4x8xf32>
  %y = nn.linear %h, %w2 : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// A bias of another dtype than the compute dtype: Linear4bit converts the
// parameter itself in place.
func.func @forward(%x: tensor<2x8xf16>) -> tensor<2x4xf16> {
  %w = nn.param "fc.weight" : tensor<8x8xf16>
  %b = nn.param "fc.bias" : tensor<8xf16>
  // expected-error @+1 {{a bias in 'f16' under a 4-bit layer computing in 'f32' is not modelled (Linear4bit converts it in place)}}
  %h = nn.linear %x, %w, %b : (tensor<2x8xf16>, tensor<8x8xf16>, tensor<8xf16>) -> tensor<2x8xf16>
  %w2 = nn.param "head.weight" : tensor<4x8xf16>
  %y = nn.linear %h, %w2 : (tensor<2x8xf16>, tensor<4x8xf16>) -> tensor<2x4xf16>
  return %y : tensor<2x4xf16>
}
