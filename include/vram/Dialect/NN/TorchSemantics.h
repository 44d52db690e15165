//===- TorchSemantics.h - version- and device-dependent facts ---*- C++ -*-===//
//
// Every fact about PyTorch that depends on its version or on the device is
// answered here, in one place, with its source (docs/Semantics.md lists the
// same table). Op interface implementations ask these functions; front ends
// and passes never decide such facts themselves.
//
//   fact                              2.x             1.13            source
//   mean(dims) keeps its input        no (sizes)      yes             1.13: measured; 2.x: derivatives.yaml mean.dim
//   adaptive_avg_pool2d to 1x1        CUDA: as mean   CUDA: as mean   measured (CPU keeps the input)
//                                     CPU: input      CPU: input
//   dropout mask element type         CUDA: bool      CUDA: bool      measured (CPU: input dtype)
//                                     CPU: input      CPU: input
//   nn.MultiheadAttention (ViT)       sdpa: CUDA      decomposed,     1.13: measured (keeps L x L,
//                                     efficient/flash scaled after    no scaled q); 2.x: need_weights=
//                                     CPU math        q @ k^T         False calls sdpa
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_DIALECT_NN_TORCHSEMANTICS_H
#define VRAM_DIALECT_NN_TORCHSEMANTICS_H

#include "vram/Dialect/NN/NNInterfaces.h"

#include "mlir/IR/Types.h"

namespace vram::nn {

/// Whether `mean` over dimensions keeps its whole input for backward.
bool meanSavesInput(const TorchTarget &target);

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

} // namespace vram::nn

#endif // VRAM_DIALECT_NN_TORCHSEMANTICS_H
