//===- TorchSemantics.cpp - version- and device-dependent facts -----------===//
//
// The table of TorchSemantics.h. "Measured" means with Debian 12's torch
// 1.13 on the CPU (benchmarks/accuracy/facts.py and shared/reference/
// pytorch.md); other entries cite derivatives.yaml or the 2.x sources.
//
//===----------------------------------------------------------------------===//

#include "vram/Dialect/NN/TorchSemantics.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace vram::nn;

bool vram::nn::meanSavesInput(const TorchTarget &target) {
  // 1.13: measured (a hand-written RMSNorm keeps x.pow(2)). 2.x:
  // derivatives.yaml's mean.dim formula needs only self's sizes and numel.
  return target.version == TorchVersion::V1_13;
}

bool vram::nn::adaptiveAvgPoolToOneRunsAsMean(const TorchTarget &target) {
  // The CUDA kernel takes the mean(-1, -2) shortcut for a 1x1 output; the
  // CPU kernel keeps its input (measured, 1.13).
  return target.device == Device::Cuda;
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
  // memory-efficient for fp32 on CUDA (no flash kernel for fp32), and the
  // math path on the CPU.
  if (target.device == Device::Cpu)
    return AttentionBackend::Math;
  if (elementType.isF16() || elementType.isBF16())
    return AttentionBackend::Flash;
  return AttentionBackend::Efficient;
}
