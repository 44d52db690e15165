// RUN: vram-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// bitsandbytes' Params4bit of a [688, 256] weight (176,128 elements) in
// blocks of 64: 88,064 packed bytes ([(n + 1) / 2, 1] uint8), 2,752 float32
// absmax and the 16-entry code (measured: benchmarks/accuracy/qlora.py
// reads absmax (2752,) float32 11,008 B and code (16,) float32 64 B).
// CHECK-LABEL: func.func @nf4
// CHECK: nn.quantized_weight "mlp.up.weight" <nf4, blocksize = 64, double_quant = false> shape [688, 256] from f32 : tensor<88064x1xui8>, tensor<2752xf32>, tensor<16xf32>
// CHECK: nn.linear_4bit %arg0, %{{.*}} : (tensor<2x8x256xf32>, tensor<88064x1xui8>) -> tensor<2x8x688xf32>
func.func @nf4(%x: tensor<2x8x256xf32>) -> tensor<2x8x688xf32> {
  %w, %absmax, %code = nn.quantized_weight "mlp.up.weight" #nn.quantize<nf4, blocksize = 64, double_quant = false> shape [688, 256] from f32 : tensor<88064x1xui8>, tensor<2752xf32>, tensor<16xf32>
  %y = nn.linear_4bit %x, %w : (tensor<2x8x256xf32>, tensor<88064x1xui8>) -> tensor<2x8x688xf32>
  return %y : tensor<2x8x688xf32>
}

// -----

// Double quantization: the absmax in 8 bits, plus the offset, a float32
// absmax per 256 blocks (ceil(2752 / 256) = 11) and a 256-entry code.
// CHECK-LABEL: func.func @double_quant
// CHECK: nn.quantized_weight "down.weight" <fp4, blocksize = 64, double_quant = true> shape [256, 688] from bf16 : tensor<88064x1xui8>, tensor<2752xui8>, tensor<16xf32>, tensor<f32>, tensor<11xf32>, tensor<256xf32>
// CHECK: nn.linear_4bit %arg0, %{{.*}}, %{{.*}} : (tensor<4x688xbf16>, tensor<88064x1xui8>, tensor<256xbf16>) -> tensor<4x256xbf16>
func.func @double_quant(%x: tensor<4x688xbf16>, %b: tensor<256xbf16>) -> tensor<4x256xbf16> {
  %w, %s:5 = nn.quantized_weight "down.weight" #nn.quantize<fp4, blocksize = 64, double_quant = true> shape [256, 688] from bf16 : tensor<88064x1xui8>, tensor<2752xui8>, tensor<16xf32>, tensor<f32>, tensor<11xf32>, tensor<256xf32>
  %y = nn.linear_4bit %x, %w, %b : (tensor<4x688xbf16>, tensor<88064x1xui8>, tensor<256xbf16>) -> tensor<4x256xbf16>
  return %y : tensor<4x256xbf16>
}

// -----

func.func @wrong_state() {
  // expected-error @+1 {{results must be 'tensor<32x1xui8>', 'tensor<1xf32>', 'tensor<16xf32>' for a 64-element weight}}
  %w, %absmax, %code = nn.quantized_weight "w" #nn.quantize<nf4, blocksize = 64, double_quant = false> shape [8, 8] from f32 : tensor<32x1xui8>, tensor<1xui8>, tensor<16xf32>
  return
}

// -----

func.func @f64_weight() {
  // expected-error @+1 {{bitsandbytes quantizes float32, float16 or bfloat16 weights, not 'f64'}}
  %w, %absmax, %code = nn.quantized_weight "w" #nn.quantize<nf4, blocksize = 64, double_quant = false> shape [8, 8] from f64 : tensor<32x1xui8>, tensor<1xf32>, tensor<16xf32>
  return
}

// -----

func.func @bad_shape() {
  // expected-error @+1 {{shape must be [out_features, in_features] of positive sizes}}
  %w, %absmax, %code = nn.quantized_weight "w" #nn.quantize<nf4, blocksize = 64, double_quant = false> shape [64] from f32 : tensor<32x1xui8>, tensor<1xf32>, tensor<16xf32>
  return
}

// -----

func.func @bad_blocksize() {
  // expected-error @+1 {{4-bit quantization blocksize must be a power of two in [32, 4096], got 48}}
  %w, %absmax, %code = nn.quantized_weight "w" #nn.quantize<nf4, blocksize = 48, double_quant = false> shape [8, 8] from f32 : tensor<32x1xui8>, tensor<2xf32>, tensor<16xf32>
  return
}

// -----

func.func @overflow() {
  // expected-error @+1 {{weight size overflows 64 bits}}
  %w, %absmax, %code = nn.quantized_weight "w" #nn.quantize<nf4, blocksize = 64, double_quant = false> shape [4294967296, 4294967296] from f32 : tensor<32x1xui8>, tensor<1xf32>, tensor<16xf32>
  return
}

// -----

func.func @param_weight(%x: tensor<2x8xf32>, %w: tensor<32x1xui8>) {
  // expected-error @+1 {{weight must be the packed 4-bit weight of an nn.quantized_weight}}
  %y = nn.linear_4bit %x, %w : (tensor<2x8xf32>, tensor<32x1xui8>) -> tensor<2x8xf32>
  return
}

// -----

func.func @state_as_weight(%x: tensor<2x8xf32>) {
  %w, %absmax, %code = nn.quantized_weight "w" #nn.quantize<nf4, blocksize = 64, double_quant = false> shape [8, 8] from f32 : tensor<32x1xui8>, tensor<1xf32>, tensor<16xf32>
  // expected-error @+1 {{weight must be the packed result (#0) of its nn.quantized_weight, not its quantization state}}
  %y = nn.linear_4bit %x, %code : (tensor<2x8xf32>, tensor<16xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @in_features(%x: tensor<2x6xf32>) {
  %w, %absmax, %code = nn.quantized_weight "w" #nn.quantize<nf4, blocksize = 64, double_quant = false> shape [8, 8] from f32 : tensor<32x1xui8>, tensor<1xf32>, tensor<16xf32>
  // expected-error @+2 {{input [2, 6] does not end in the weight's in_features (8)}}
  // expected-error @+1 {{'nn.linear_4bit' op failed to infer returned types}}
  %y = nn.linear_4bit %x, %w : (tensor<2x6xf32>, tensor<32x1xui8>) -> tensor<2x8xf32>
  return
}
