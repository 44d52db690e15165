// An LLM.int8 layer (nn.linear_8bit, bitsandbytes 0.50's Linear8bitLt)
// through the memory analysis's print pass: one [688, 256] int8 weight
// (CB 176,128 B, SCB 688 x 4 = 2,752 B) over an input of R = 128 rows,
// llm_int8_threshold 6.0. In inference the layer runs MatMul8bitLt:
//   F.int8_vectorwise_quant(A.to(float16)): CA [128, 256] int8 (32,768 B)
//   and SCA [128] float32 (512 B), bound until the forward returns;
//   int8_scaled_mm: the int32 product [128, 688] (352,256 B), dequantized.
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=inference device=cpu" --vram-print-memory -o /dev/null | FileCheck %s --check-prefix=CPU
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=inference device=cuda" --vram-print-memory -o /dev/null | FileCheck %s --check-prefix=CUDA

// float32, no outlier column. The CPU (backends/default/ops.py)
// dequantizes in float32: the outer product of the scales, the int32
// product's float32 copy and their product, beside the int32 product:
// 32,768 + 512 + 4 x 352,256 = 1,442,304 B before the output exists; the
// workspace is that minus the output (352,256): 1,090,048. Measured
// (benchmarks/accuracy/int8.py, layer_fp32_r128_k0_th6 and _th0): the
// call's peak above the layer and its input is 1,442,304 with and
// without the threshold.
// CPU-LABEL: memory of @step
// CPU: nn.linear_8bit (forward):
// CPU-NEXT: alloc #{{[0-9]+}} 352256 temporaries nn.linear_8bit tensor<128x688xf32>
// CPU-NEXT: alloc #{{[0-9]+}} 1090048 temporaries workspace of nn.linear_8bit
// CPU: at peak: {{.*}} temporaries=1442304
// On CUDA (backends/cuda/ops.py) int8_mm_dequant's float16 result (176,128)
// is cast to float32 (the output) beside the int32 product: CA, SCA, the
// product and the float16 result are the workspace (561,664 B). Quantizing
// (a float16 copy 65,536, SCA, CA, abs() 65,536 and its bool mask 32,768)
// holds less.
// CUDA-LABEL: memory of @step
// CUDA: nn.linear_8bit (forward):
// CUDA-NEXT: alloc #{{[0-9]+}} 352256 temporaries nn.linear_8bit tensor<128x688xf32>
// CUDA-NEXT: alloc #{{[0-9]+}} 32768 temporaries workspace of nn.linear_8bit
// CUDA-NEXT: alloc #{{[0-9]+}} 512 temporaries workspace of nn.linear_8bit
// CUDA-NEXT: alloc #{{[0-9]+}} 352256 temporaries workspace of nn.linear_8bit
// CUDA-NEXT: alloc #{{[0-9]+}} 176128 temporaries workspace of nn.linear_8bit
// CUDA-NEXT: live
func.func @forward(%x: tensor<128x256xf32>) -> tensor<128x688xf32> {
  %cb, %scb = nn.quantized_weight "up.weight" #nn.quantize<int8, blocksize = 0, double_quant = false, threshold = 6.0> shape [688, 256] from f32 : tensor<688x256xi8>, tensor<688xf32>
  %y = nn.linear_8bit %x, %cb : (tensor<128x256xf32>, tensor<688x256xi8>) -> tensor<128x688xf32>
  return %y : tensor<128x688xf32>
}

// -----

// bfloat16 with 4 outlier columns: int8_mixed_scaled_mm adds subA = A[:,
// cols] (128 x 4 x 2 = 1,024 B) and the weight's columns dequantized into
// bfloat16 (688 x 4 x 2 = 5,504 B) to the dequantizing moment: 1,442,304 +
// 6,528 = 1,448,832, the workspace 1,448,832 - 176,128 = 1,272,704.
// Measured: layer_bf16_r128_k4_th6, 1,448,832 (fp16 the same; float32,
// layer_fp32_r128_k4_th6: 1,455,360 = 1,442,304 + 2,048 + 11,008).
// CPU-LABEL: memory of @step
// CPU: nn.linear_8bit (forward):
// CPU-NEXT: alloc #{{[0-9]+}} 176128 temporaries nn.linear_8bit tensor<128x688xbf16>
// CPU-NEXT: alloc #{{[0-9]+}} 1272704 temporaries workspace of nn.linear_8bit
// CPU: at peak: {{.*}} temporaries=1448832
// On CUDA the dequantizing moment holds CA, SCA, subA, subB, the int32 product
// and the float16 result and its bfloat16 copy (not yet the output):
// 32,768 + 512 + 1,024 + 5,504 + 352,256 + 176,128 + 176,128 = 744,320 B;
// then output.addmm(subA, subB) holds CA, SCA, subA, subB and that copy
// beside the output (392,064 B). The workspace: 744,320 - 176,128.
// CUDA-LABEL: memory of @step
// CUDA: nn.linear_8bit (forward):
// CUDA-NEXT: alloc #{{[0-9]+}} 176128 temporaries nn.linear_8bit tensor<128x688xbf16>
// CUDA-NEXT: alloc #{{[0-9]+}} 568192 temporaries workspace of nn.linear_8bit
// CUDA-NEXT: live
func.func @forward(%x: tensor<128x256xbf16>) -> tensor<128x688xbf16> {
  %cb, %scb = nn.quantized_weight "up.weight" #nn.quantize<int8, blocksize = 0, double_quant = false, threshold = 6.0, outlier_cols = 4> shape [688, 256] from bf16 : tensor<688x256xi8>, tensor<688xf32>
  %y = nn.linear_8bit %x, %cb : (tensor<128x256xbf16>, tensor<688x256xi8>) -> tensor<128x688xbf16>
  return %y : tensor<128x688xbf16>
}

// -----

// float16, no outlier column: on CUDA int8_mm_dequant's float16 result is
// the output (.to(float16) returns it): the workspace is CA, SCA and the
// int32 product.
// CUDA-LABEL: memory of @step
// CUDA: nn.linear_8bit (forward):
// CUDA-NEXT: alloc #{{[0-9]+}} 176128 temporaries nn.linear_8bit tensor<128x688xf16>
// CUDA-NEXT: alloc #{{[0-9]+}} 32768 temporaries workspace of nn.linear_8bit
// CUDA-NEXT: alloc #{{[0-9]+}} 512 temporaries workspace of nn.linear_8bit
// CUDA-NEXT: alloc #{{[0-9]+}} 352256 temporaries workspace of nn.linear_8bit
// CUDA-NEXT: live
// CPU-LABEL: memory of @step
// CPU: at peak: {{.*}} temporaries=1442304
func.func @forward(%x: tensor<128x256xf16>) -> tensor<128x688xf16> {
  %cb, %scb = nn.quantized_weight "up.weight" #nn.quantize<int8, blocksize = 0, double_quant = false, threshold = 6.0> shape [688, 256] from f16 : tensor<688x256xi8>, tensor<688xf32>
  %y = nn.linear_8bit %x, %cb : (tensor<128x256xf16>, tensor<688x256xi8>) -> tensor<128x688xf16>
  return %y : tensor<128x688xf16>
}
