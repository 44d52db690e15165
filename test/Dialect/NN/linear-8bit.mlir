// RUN: vram-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// bitsandbytes' Int8Params of a [688, 256] weight: CB, the weight in int8
// (176,128 B), and SCB, a float32 scale per row (688 x 4 = 2,752 B);
// measured: benchmarks/accuracy/int8.py's layer rows read weight_bytes
// 178,880 from state.CB and state.SCB.
// CHECK-LABEL: func.func @int8
// CHECK: nn.quantized_weight "mlp.up.weight" <int8, blocksize = 0, double_quant = false, threshold = 6.000000e+00> shape [688, 256] from f16 : tensor<688x256xi8>, tensor<688xf32>
// CHECK: nn.linear_8bit %arg0, %{{.*}} : (tensor<2x8x256xf16>, tensor<688x256xi8>) -> tensor<2x8x688xf16>
func.func @int8(%x: tensor<2x8x256xf16>) -> tensor<2x8x688xf16> {
  %cb, %scb = nn.quantized_weight "mlp.up.weight" #nn.quantize<int8, blocksize = 0, double_quant = false, threshold = 6.0> shape [688, 256] from f16 : tensor<688x256xi8>, tensor<688xf32>
  %y = nn.linear_8bit %x, %cb : (tensor<2x8x256xf16>, tensor<688x256xi8>) -> tensor<2x8x688xf16>
  return %y : tensor<2x8x688xf16>
}

// -----

// Assumed outlier columns and a bias; no threshold is printed when it is 0.
// CHECK-LABEL: func.func @outliers
// CHECK: <int8, blocksize = 0, double_quant = false, threshold = 4.000000e+00, outlier_cols = 3>
// CHECK: <int8, blocksize = 0, double_quant = false> shape [4, 8]
func.func @outliers(%x: tensor<4x8xbf16>, %b: tensor<4xbf16>) -> tensor<4x4xbf16> {
  %cb, %scb = nn.quantized_weight "w" #nn.quantize<int8, blocksize = 0, double_quant = false, threshold = 4.0, outlier_cols = 3> shape [4, 8] from bf16 : tensor<4x8xi8>, tensor<4xf32>
  %y = nn.linear_8bit %x, %cb, %b : (tensor<4x8xbf16>, tensor<4x8xi8>, tensor<4xbf16>) -> tensor<4x4xbf16>
  %cb2, %scb2 = nn.quantized_weight "w2" #nn.quantize<int8, blocksize = 0, double_quant = false> shape [4, 8] from bf16 : tensor<4x8xi8>, tensor<4xf32>
  return %y : tensor<4x4xbf16>
}

// -----

func.func @int8_blocks() {
  // expected-error @+1 {{int8 (LLM.int8) weights have no blocks and no double quantization: blocksize = 0, double_quant = false}}
  %cb, %scb = nn.quantized_weight "w" #nn.quantize<int8, blocksize = 64, double_quant = false> shape [4, 8] from f32 : tensor<4x8xi8>, tensor<4xf32>
  return
}

// -----

func.func @negative_threshold() {
  // expected-error @+1 {{the int8 outlier threshold must be finite and non-negative, got -1}}
  %cb, %scb = nn.quantized_weight "w" #nn.quantize<int8, blocksize = 0, double_quant = false, threshold = -1.0> shape [4, 8] from f32 : tensor<4x8xi8>, tensor<4xf32>
  return
}

// -----

func.func @outliers_without_threshold() {
  // expected-error @+1 {{outlier_cols must be non-negative, and 0 without a threshold, got 2}}
  %cb, %scb = nn.quantized_weight "w" #nn.quantize<int8, blocksize = 0, double_quant = false, threshold = 0.0, outlier_cols = 2> shape [4, 8] from f32 : tensor<4x8xi8>, tensor<4xf32>
  return
}

// -----

func.func @threshold_on_4bit() {
  // expected-error @+1 {{threshold and outlier_cols are LLM.int8's (int8), not 4-bit weights'}}
  %w, %absmax, %code = nn.quantized_weight "w" #nn.quantize<nf4, blocksize = 64, double_quant = false, threshold = 6.0> shape [8, 8] from f32 : tensor<32x1xui8>, tensor<1xf32>, tensor<16xf32>
  return
}

// -----

func.func @wrong_int8_state() {
  // expected-error @+1 {{results must be 'tensor<4x8xi8>', 'tensor<4xf32>' for a 32-element weight}}
  %cb, %scb = nn.quantized_weight "w" #nn.quantize<int8, blocksize = 0, double_quant = false> shape [4, 8] from f32 : tensor<32xi8>, tensor<4xf32>
  return
}

// -----

func.func @scales_as_weight(%x: tensor<2x8xf32>) {
  %cb, %scb = nn.quantized_weight "w" #nn.quantize<int8, blocksize = 0, double_quant = false> shape [4, 8] from f32 : tensor<4x8xi8>, tensor<4xf32>
  // expected-error @+1 {{weight must be the int8 weight (#0, CB) of its nn.quantized_weight, not its row scales}}
  %y = "nn.linear_8bit"(%x, %scb) : (tensor<2x8xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @four_bit_weight(%x: tensor<2x8xf32>) {
  %w, %absmax, %code = nn.quantized_weight "w" #nn.quantize<nf4, blocksize = 64, double_quant = false> shape [8, 8] from f32 : tensor<32x1xui8>, tensor<1xf32>, tensor<16xf32>
  // expected-error @+2 {{weight must be the int8 weight (CB) of an nn.quantized_weight with an int8 config}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = nn.linear_8bit %x, %w : (tensor<2x8xf32>, tensor<32x1xui8>) -> tensor<2x8xf32>
  return
}

// -----

func.func @wrong_in_features(%x: tensor<2x6xf32>) {
  %cb, %scb = nn.quantized_weight "w" #nn.quantize<int8, blocksize = 0, double_quant = false> shape [4, 8] from f32 : tensor<4x8xi8>, tensor<4xf32>
  // expected-error @+2 {{input [2, 6] does not end in the weight's in_features (8)}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = nn.linear_8bit %x, %cb : (tensor<2x6xf32>, tensor<4x8xi8>) -> tensor<2x4xf32>
  return
}
