//===- TorchSemantics.h - version- and device-dependent facts ---*- C++ -*-===//
//
// Every fact about PyTorch that depends on its version or on the device is
// answered here, in one place, with its source (docs/Semantics.md lists the
// same table). Op interface implementations ask these functions; front ends
// and passes never decide such facts themselves.
//
//   fact                              2.x             1.13            source
//   mean(dims) keeps its input        no (sizes)      yes             1.13:
//   measured; 2.x: derivatives.yaml mean.dim adaptive_avg_pool2d to 1x1 CUDA:
//   as mean   CUDA: as mean   measured (CPU keeps the input)
//                                     CPU: input      CPU: input
//   dropout mask element type         CUDA: bool      CUDA: bool      measured
//   (CPU: input dtype)
//                                     CPU: input      CPU: input
//   conv backward temporaries         CPU: oneDNN reorders and buffers (see
//   below); 1.13: measured
//                                     CUDA: cuDNN workspace, not modelled here
//   batch_norm backward               CPU: a second input-sized buffer; CUDA:
//   0    1.13 CPU: measured foreach Adam temporary lists      1
//   2               1.13: measured; 2.x: adam.py
//                                                                     (_foreach_add_
//                                                                     in place)
//   default optimizer implementation  CUDA: foreach   for-loop torch.optim (2.x
//   defaults to
//                                     CPU: for-loop                   foreach
//                                     on CUDA only)
//   nn.MultiheadAttention (ViT)       sdpa: CUDA      decomposed,     1.13:
//   measured (keeps L x L,
//                                     efficient/flash scaled after    no scaled
//                                     q); 2.x: need_weights= CPU math        q
//                                     @ k^T         False calls sdpa
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_DIALECT_NN_TORCHSEMANTICS_H
#define VRAM_DIALECT_NN_TORCHSEMANTICS_H

#include "vram/Dialect/NN/NNInterfaces.h"

#include "mlir/IR/Types.h"

#include <string>

namespace vram::nn {

/// Whether `mean` over dimensions keeps its whole input for backward.
bool meanSavesInput(const TorchTarget &target);

/// Device bytes of a Python number in arithmetic (an nn.constant
/// `wrapped_number`, `x * 0.5`) while it exists: torch 1.13 keeps it for
/// backward as a 0-d double tensor on the host (8 bytes: CPU memory on the
/// CPU, none on CUDA); torch 2 keeps the Scalar itself (nothing). Measured
/// on gpt_mini's scale (docs/Semantics.md, benchmarks/accuracy/results).
int64_t getWrappedNumberBytes(const TorchTarget &target);

/// Whether adaptive_avg_pool2d with a 1x1 output runs as mean(-1, -2).
bool adaptiveAvgPoolToOneRunsAsMean(const TorchTarget &target);

/// The element type of dropout's saved mask for an input of `elementType`.
mlir::Type getDropoutMaskElementType(const TorchTarget &target,
                                     mlir::Type elementType);

/// Whether nn.MultiheadAttention runs its own decomposition (q @ k^T, scaled
/// afterwards, softmax, @ v: it keeps the L x S weights) rather than
/// scaled_dot_product_attention.
bool multiheadAttentionRunsDecomposed(const TorchTarget &target);

/// The scaled_dot_product_attention kernel nn.MultiheadAttention
/// (need_weights=False, as torchvision's ViT calls it) picks for inputs of
/// `elementType`, where it calls sdpa.
AttentionBackend getMultiheadAttentionBackend(const TorchTarget &target,
                                              mlir::Type elementType);

/// The kernel aten.scaled_dot_product_attention picks for inputs of
/// `elementType` with dropout probability `dropoutP`, with or without an
/// attn_mask: on the CPU the flash kernel (which takes a mask), or the math
/// one when dropout is on (the CPU flash kernel has none: GPT-2's attention
/// dropout, measured with torch 2.15); on CUDA as
/// getMultiheadAttentionBackend, the memory-efficient kernel with a mask
/// (flash takes none).
AttentionBackend getSdpaBackend(const TorchTarget &target,
                                mlir::Type elementType, double dropoutP,
                                bool hasMask = false);

/// The sizes a convolution's kernels work on (bytes of the input I, the
/// incoming gradient gO, the weight W).
struct ConvBackwardSizes {
  int64_t input, gradOutput, weight;
  /// [C_in * kh * kw, H_out * W_out] elements x element bytes of one sample:
  /// the slow path's column buffer.
  int64_t columns;
  int64_t batch, groups, kernelH, kernelW, inputElements;
};
/// What a convolution's forward kernel holds while it runs (the CPU slow
/// path's column buffer).
int64_t getConvForwardWorkspaceBytes(const TorchTarget &target,
                                     const ConvBackwardSizes &sizes);
int64_t getConvBackwardWorkspaceBytes(const TorchTarget &target,
                                      const ConvBackwardSizes &sizes,
                                      bool inputNeedsGrad,
                                      bool weightNeedsGrad);

/// A second input-sized buffer that batch_norm's backward allocates and
/// frees while it runs (bytes of `inputBytes`), 0 where it has none.
int64_t getBatchNormBackwardWorkspaceBytes(const TorchTarget &target,
                                           int64_t inputBytes);

/// How many params-sized temporary lists foreach Adam/AdamW holds at once
/// (exp_avg_sq.sqrt() and, in 1.13, its out-of-place `+ eps`).
unsigned getForeachAdamTemporaryLists(const TorchTarget &target);

/// The implementation `optimizer` runs when none is asked for.
OptimizerImpl getDefaultOptimizerImpl(OptimizerKind optimizer,
                                      const TorchTarget &target);

/// Whether bitsandbytes 0.50's gemm_4bit (a 4-bit linear's forward)
/// dequantizes the weight into a temporary and calls F.linear for `rows`
/// rows of input of `inFeatures` columns, rather than running its fused
/// 4-bit kernel. On CUDA the fused kernel always runs for at most 4 rows
/// and never for more than 1,536 or when the columns are not a multiple of
/// the blocksize; in between bitsandbytes picks per GPU architecture,
/// which is not modelled: the dequantized weight is counted, an upper
/// bound (backends/cuda/ops.py). Its CPU backend always dequantizes.
bool gemm4bitDequantizes(const TorchTarget &target, int64_t rows,
                         int64_t inFeatures, int64_t blocksize);

/// The float32 copies of the absmax that a double-quantized 4-bit weight's
/// forward holds while it multiplies: CUDA's fallback keeps the dequantized
/// absmax and its sum with the offset (2); the CPU path (the default
/// kernel) frees the first right after the sum (1).
int64_t getGemm4bitNestedAbsmaxCopies(const TorchTarget &target);

/// How bitsandbytes 0.50's `bnb.matmul` runs an int8 layer (Linear8bitLt).
enum class Int8Matmul {
  /// MatMul8bitLt: the input quantized to int8, an int8 product into int32,
  /// dequantized through float16 (LLM.int8's kernels).
  Int8Product,
  /// MatMul8bitFp: the weight dequantized into the input's dtype, F.linear.
  Dequantize,
};

/// bnb.matmul picks MatMul8bitFp for a training layer (module.training) on
/// the CPU and MatMul8bitLt otherwise (autograd/_functions.py matmul).
Int8Matmul getInt8Matmul(const TorchTarget &target, bool training);

/// What oneDNN's LSTM primitive allocates for one mkldnn_rnn_layer call of
/// a training step (PyTorch 2 on the CPU, float32; oneDNN 3.x's rnn_utils
/// with its 4 KiB-aligned parts, measured exactly with torch 2.15 / oneDNN
/// 3.13.3 on an AVX-512 CPU: benchmarks/accuracy/results/
/// lstm-torch-2.15.0-cpu.json).
struct LstmLayerBuffers {
  /// The workspace autograd keeps (every step's gates and states).
  int64_t workspace = 0;
  /// The weights reordered into the primitive's layout ([I, 4H] and
  /// [H, 4H] with a padded leading dimension), in forward and backward (a
  /// one-row weight: none in the forward, unpadded in the backward).
  int64_t forwardWeightsIh = 0, forwardWeightsHh = 0;
  int64_t backwardWeightsIh = 0, backwardWeightsHh = 0;
  /// The transposed weights the backward GEMMs read ([4H, I] and [4H, H]
  /// with a padded leading dimension): 0 where PyTorch's own layout is it.
  int64_t transposedIh = 0, transposedHh = 0;
  /// The float32 bias the backward primitive accumulates into ([4H]).
  int64_t backwardBias = 0;
  /// oneDNN's scratchpad in forward and backward.
  int64_t forwardScratchpad = 0, backwardScratchpad = 0;
};
/// The buffers of one LSTM layer over `seq` steps of `batch` rows, `input`
/// features in, `hidden` out (saturating).
LstmLayerBuffers getLstmLayerBuffers(int64_t seq, int64_t batch, int64_t input,
                                     int64_t hidden);

/// Why oneDNN's LSTM layer's memory is not modelled for `target` in a step
/// of `mode` on `elementType` (empty where it is): measured with torch 2 on
/// the CPU in float32 training only (cuDNN's reserve space and oneDNN's
/// inference scratchpad are not; torch 1.13's CPU runs LSTMCell instead,
/// which the step builder builds in the layer's place).
std::string getLstmUnmodelledReason(const TorchTarget &target, StepMode mode,
                                    bool autocast, mlir::Type elementType);

} // namespace vram::nn

#endif // VRAM_DIALECT_NN_TORCHSEMANTICS_H
