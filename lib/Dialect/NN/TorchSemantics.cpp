//===- TorchSemantics.cpp - version- and device-dependent facts -----------===//
//
// The table of TorchSemantics.h. "Measured" means with Debian 12's torch
// 1.13 on the CPU (benchmarks/accuracy/facts.py and shared/reference/
// pytorch.md); other entries cite derivatives.yaml or the 2.x sources.
//
//===----------------------------------------------------------------------===//

#include "vram/Dialect/NN/TorchSemantics.h"
#include "vram/Dialect/NN/NNOps.h"
#include "vram/Support/CheckedMath.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace vram;
using namespace vram::nn;

int64_t vram::nn::getWrappedNumberBytes(const TorchTarget &target) {
  // 1.13 saves the wrapped number as a double tensor on the host; only the
  // CPU device counts host memory.
  return target.version == TorchVersion::V1_13 && target.device == Device::Cpu
             ? 8
             : 0;
}

bool vram::nn::meanSavesInput(const TorchTarget &target) {
  // 1.13: measured (a hand-written RMSNorm keeps x.pow(2)). 2.x:
  // derivatives.yaml's mean.dim formula needs only self's sizes and numel.
  return target.version == TorchVersion::V1_13;
}

bool vram::nn::adaptiveAvgPoolToOneRunsAsMean(const TorchTarget &target) {
  // The CUDA kernel takes the mean(-1, -2) shortcut for a 1x1 output. On
  // the CPU, 1.13 keeps the input (measured); 2.x keeps nothing, as the
  // shortcut does (measured with torch 2.15: benchmarks/accuracy/results/
  // facts-torch-2.15-cpu.json, "nn.AdaptiveAvgPool2d(1)"; mobilenet_v2's
  // last [1, 1280, 7, 7] features are no longer kept).
  return target.device == Device::Cuda || target.version == TorchVersion::V2;
}

Type vram::nn::getDropoutMaskElementType(const TorchTarget &target,
                                         Type elementType) {
  // CUDA's fused dropout keeps a bool mask; the CPU path multiplies by a
  // noise tensor of the input's dtype and keeps it (measured, 1.13).
  if (target.device == Device::Cuda)
    return IntegerType::get(elementType.getContext(), 1);
  return elementType;
}

bool vram::nn::multiheadAttentionRunsDecomposed(const TorchTarget &target) {
  // 1.13's F.multi_head_attention_forward computes the weights itself in
  // training (measured: torchvision's vit_b_16 keeps the L x L weights and
  // the packed q/k/v, not a scaled copy of q).
  return target.version == TorchVersion::V1_13;
}

AttentionBackend
vram::nn::getMultiheadAttentionBackend(const TorchTarget &target,
                                       Type elementType) {
  // 2.x's scaled_dot_product_attention picks flash for fp16/bf16 on CUDA,
  // memory-efficient for fp32 on CUDA (no flash kernel for fp32), and on the
  // CPU its flash kernel (_scaled_dot_product_flash_attention_for_cpu, any
  // float dtype): measured with torch 2.15, torchvision's vit_b_16 keeps q,
  // k, v, the output and a [B, H, L] logsumexp per layer, no L x L weights
  // (benchmarks/accuracy/results/torch-2.15-cpu.json).
  if (target.device == Device::Cpu)
    return AttentionBackend::Flash;
  if (elementType.isF16() || elementType.isBF16())
    return AttentionBackend::Flash;
  return AttentionBackend::Efficient;
}

AttentionBackend vram::nn::getSdpaBackend(const TorchTarget &target,
                                          Type elementType, double dropoutP,
                                          bool hasMask) {
  if (dropoutP > 0 && target.device == Device::Cpu)
    return AttentionBackend::Math;
  if (hasMask && target.device == Device::Cuda)
    return AttentionBackend::Efficient;
  return getMultiheadAttentionBackend(target, elementType);
}

/// The CPU convolution kernel, as ConvParams::use_mkldnn picks it
/// (consistent with every shape probed with torch 1.13): oneDNN when the
/// batch is > 1, or groups > 1, or the kernel is larger than 3x3, or the
/// input has more than 20480 elements; else the slow (im2col) path.
static bool convUsesOneDnn(const ConvBackwardSizes &s) {
  return s.batch > 1 || s.groups > 1 || s.kernelH > 3 || s.kernelW > 3 ||
         s.inputElements > 20480;
}

/// The workspace of one cuDNN convolution call under the step's assumption.
static int64_t getCudnnWorkspaceBytes(const TorchTarget &target,
                                      const ConvBackwardSizes &s) {
  if (target.cudnnWorkspace == CudnnWorkspace::None)
    return 0;
  int64_t bytes;
  return llvm::MulOverflow(s.columns, s.batch, bytes) ? INT64_MAX : bytes;
}

int64_t vram::nn::getConvForwardWorkspaceBytes(const TorchTarget &target,
                                               const ConvBackwardSizes &s) {
  if (target.device == Device::Cuda)
    return getCudnnWorkspaceBytes(target, s);
  // The slow path's forward unfolds one sample into a column buffer
  // (measured: 589,824 bytes for resnet18's layer1 at 64 px, batch 1).
  if (convUsesOneDnn(s))
    return 0;
  return s.columns;
}

int64_t vram::nn::getConvBackwardWorkspaceBytes(const TorchTarget &target,
                                                const ConvBackwardSizes &s,
                                                bool gi, bool gw) {
  // cuDNN's workspace depends on the algorithm its heuristics pick at run
  // time: the assumption the step names. Data and filter gradients run one
  // after the other, each with its own workspace.
  if (target.device == Device::Cuda)
    return getCudnnWorkspaceBytes(target, s);
  // Measured with torch 1.13 on the CPU (benchmarks/accuracy/results/
  // peak-anatomy-1.13-cpu.md).
  bool oneDnn = convUsesOneDnn(s);
  int64_t results = (gi ? s.input : 0) + (gw ? s.weight : 0);
  int64_t peak;
  if (!oneDnn) {
    // grad_input and grad_weight written in place, plus one sample's column
    // buffer.
    peak = results + s.columns;
  } else {
    // grad_input: reorders of gO and W and oneDNN's grad_input, then the
    // final grad_input copied out of it: max(gO + W + I, 2I).
    int64_t inputPart =
        gi ? std::max(s.gradOutput + s.weight + s.input, 2 * s.input) : 0;
    // grad_weight, on top of the final grad_input: reorders of gO and I and
    // oneDNN's grad_weight, then the final .grad while that buffer lives.
    int64_t weightPart =
        gw ? (gi ? s.input : 0) +
                 (gi ? std::max(s.gradOutput + s.input + s.weight, 2 * s.weight)
                     : std::max(s.gradOutput + s.weight, 2 * s.weight))
           : 0;
    peak = std::max(inputPart, weightPart);
  }
  return std::max<int64_t>(peak - results, 0);
}

int64_t vram::nn::getBatchNormBackwardWorkspaceBytes(const TorchTarget &target,
                                                     int64_t inputBytes) {
  // native_batch_norm_backward on the CPU allocates grad_input and then a
  // second input-sized buffer it frees before returning (measured, 1.13).
  return target.device == Device::Cpu ? inputBytes : 0;
}

unsigned vram::nn::getForeachAdamTemporaryLists(const TorchTarget &target) {
  // 1.13's _multi_tensor_adam: denom = _foreach_add(_foreach_sqrt(v), eps)
  // keeps two lists (measured: resnet18 b2 peaks at grads + 2 x params).
  // 2.x adds eps in place: one list ("~ sizeof(params) more peak memory").
  return target.version == TorchVersion::V1_13 ? 2 : 1;
}

OptimizerImpl vram::nn::getDefaultOptimizerImpl(OptimizerKind optimizer,
                                                const TorchTarget &target) {
  // 2.x defaults to foreach when the parameters are on CUDA; 1.13 and the
  // CPU run the for-loop implementation, bitsandbytes a kernel per
  // parameter.
  if (isBitsAndBytesOptimizer(optimizer))
    return OptimizerImpl::ForLoop;
  if (target.version == TorchVersion::V2 && target.device == Device::Cuda)
    return OptimizerImpl::Foreach;
  return OptimizerImpl::ForLoop;
}

bool vram::nn::gemm4bitDequantizes(const TorchTarget &target, int64_t rows,
                                   int64_t inFeatures, int64_t blocksize) {
  // backends/cuda/ops.py: _GEMM_4BIT_CUSTOM_FLOOR_M = 4 and
  // _gemm_4bit_custom_max_m = 1536; backends/default/ops.py on the CPU.
  if (target.device == Device::Cpu)
    return true;
  return rows > 4 || inFeatures % blocksize != 0;
}

Int8Matmul vram::nn::getInt8Matmul(const TorchTarget &target, bool training) {
  // "MatMul8bitLt is slower because no fast kernel for quant/dequant 8bit in
  // CPU/XPU": training on those devices dequantizes instead.
  if (training && target.device == Device::Cpu)
    return Int8Matmul::Dequantize;
  return Int8Matmul::Int8Product;
}

int64_t vram::nn::getGemm4bitNestedAbsmaxCopies(const TorchTarget &target) {
  // cuda/ops.py _dequant_linear_fallback: absmax_dq = empty_like(...);
  // absmax = absmax_dq + offset. default/ops.py: dequantize_blockwise(...)
  // + offset, the first a temporary of the expression.
  return target.device == Device::Cpu ? 1 : 2;
}

/// `x` rounded up to a multiple of `to`, saturating.
static int64_t roundUpSaturating(int64_t x, int64_t to) {
  return x > INT64_MAX - to ? INT64_MAX : (x + to - 1) / to * to;
}

/// oneDNN's leading dimension of a GEMM operand (rnn_utils::get_good_ld):
/// 64-byte aligned, and not a multiple of 256 elements (4K aliasing).
static int64_t goodLeadingDim(int64_t dim) {
  int64_t ld = roundUpSaturating(dim, 16); // 64 bytes of float32
  return ld % 256 == 0 ? saturatingAdd(ld, 16) : ld;
}

LstmLayerBuffers vram::nn::getLstmLayerBuffers(int64_t seq, int64_t batch,
                                               int64_t input, int64_t hidden) {
  // oneDNN's rnn_utils (set_rnn_conf, set_workspace_sizes, set_offsets) for
  // one layer, one direction, float32: every part starts on a 4 KiB page.
  // What follows was checked allocation by allocation with torch 2.15
  // (oneDNN 3.13.3) over 34 shapes (benchmarks/accuracy/lstm.py).
  constexpr int64_t page = 4096, f32 = 4;
  auto pages = [](int64_t bytes) { return roundUpSaturating(bytes, page); };
  auto layout = [&](std::initializer_list<int64_t> parts) {
    int64_t offset = 0;
    for (int64_t part : parts)
      offset = saturatingAdd(pages(offset), part);
    return pages(offset);
  };
  int64_t gates = saturatingMul(4, hidden);
  int64_t statesLd = goodLeadingDim(std::max(input, hidden));
  int64_t gatesLd = goodLeadingDim(gates), hiddenLd = goodLeadingDim(hidden);
  // (n_layer + 1) x (n_iter + 1) rows of states, as oneDNN keeps them.
  int64_t stateRows = saturatingMul(2, saturatingAdd(seq, 1), batch);
  int64_t states = saturatingMul(stateRows, statesLd, f32);
  int64_t cells = saturatingMul(stateRows, hidden, f32);
  LstmLayerBuffers buffers;
  // ws_gates, ws_ht, ws_states_layer, ws_states_iter_c, ws_diff_states_layer,
  // ws_diff_states_iter, ws_diff_states_iter_c.
  buffers.workspace = layout({saturatingMul(seq, batch, gatesLd, f32),
                              saturatingMul(seq, batch, hiddenLd, f32), states,
                              cells, states, states, cells});
  // A one-row weight ([1, 4H]) has no leading dimension to pad: the
  // forward reads PyTorch's, the backward reorders it unpadded.
  auto reordered = [&](int64_t rows, bool forward) -> int64_t {
    if (rows == 1)
      return forward ? 0 : saturatingMul(gates, f32);
    return saturatingMul(rows, gatesLd, f32);
  };
  buffers.forwardWeightsIh = reordered(input, true);
  buffers.forwardWeightsHh = reordered(hidden, true);
  buffers.backwardWeightsIh = reordered(input, false);
  buffers.backwardWeightsHh = reordered(hidden, false);
  int64_t inputLd = goodLeadingDim(input);
  buffers.transposedIh =
      inputLd == input ? 0 : saturatingMul(gates, inputLd, f32);
  buffers.transposedHh =
      hiddenLd == hidden ? 0 : saturatingMul(gates, hiddenLd, f32);
  buffers.backwardBias = saturatingMul(gates, f32);
  // The scratchpad: scratch_gates (every step's when oneDNN merges the layer
  // GEMM: the forward below 128 rows, the backward always), scratch_ht,
  // scratch_diff_ht, one more page, and 568 bytes after them.
  auto scratchpad = [&](int64_t gateSteps) {
    int64_t bytes = 0;
    for (int64_t part : {saturatingMul(gateSteps, batch, gatesLd, f32),
                         saturatingMul(batch, hiddenLd, f32),
                         saturatingMul(batch, hiddenLd, f32), page})
      bytes = saturatingAdd(bytes, pages(part));
    return saturatingAdd(bytes, 568);
  };
  buffers.forwardScratchpad = scratchpad(batch < 128 ? seq : 1);
  buffers.backwardScratchpad = scratchpad(seq);
  return buffers;
}

std::string vram::nn::getLstmUnmodelledReason(const TorchTarget &target,
                                              StepMode mode, bool autocast,
                                              Type elementType) {
  if (target.device == Device::Cuda)
    return "on CUDA (cuDNN's RNN reserve space is not measured; analyse "
           "with --device=cpu)";
  if (mode != StepMode::Train)
    return "in inference (oneDNN's inference scratchpad is not measured)";
  if (autocast || !elementType.isF32())
    return "in another dtype than float32 (measured: float32)";
  return "";
}
