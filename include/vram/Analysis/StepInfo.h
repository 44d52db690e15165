//===- StepInfo.h - facts about a built step shared by analyses -*- C++ -*-===//

#ifndef VRAM_ANALYSIS_STEPINFO_H
#define VRAM_ANALYSIS_STEPINFO_H

#include "vram/Dialect/NN/NNInterfaces.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace vram {

using nn::StepPhase;

/// The phase of an op of a built step: its `nn.phase` attribute (an op
/// recomputed by activation checkpointing), else its StepPhaseOpInterface's,
/// else forward.
StepPhase getStepPhase(mlir::Operation *op);

/// The layer (module path) an op belongs to, from its location: the name of
/// its NameLoc (possibly fused or nested; torch.onnx's scope names
/// `/layer1/layer1.0/conv1/Conv` read as `layer1.0.conv1`), else
/// "file:line" of a file location, else "".
std::string getLayerName(mlir::Location loc);

/// The layer name of the criterion vram-build-step appends to a training
/// step (cross-entropy, MSE and their casts and flattening): it runs outside
/// the model, in no module of it.
inline constexpr llvm::StringLiteral kLossLayerName = "loss";

/// Bytes of a tensor value (elements x ceil(bits / 8)), or nullopt when the
/// count does not fit in 64 bits.
std::optional<int64_t> getTensorBytes(mlir::Type type);

/// Parameters and buffers of a model or step, counted over its nn.param /
/// nn.buffer ops.
struct ParameterSummary {
  int64_t count = 0, trainable = 0, bytes = 0;
  /// The parameters each token's forward uses: all but, in a mixture of
  /// experts, the E - k of E routed experts it is not sent to (an
  /// nn.grouped_mm's weight whose groups an nn.moe_dispatch of top-k indices
  /// made), as model cards count "active" parameters (Mixtral-8x7B: 12.9B
  /// of 46.7B). Equal to `count` for a dense model.
  int64_t active = 0;
  int64_t bufferCount = 0, bufferBytes = 0;
};
/// Fails with an error at the tensor whose count overflows 64 bits.
mlir::FailureOr<ParameterSummary> summarizeParameters(mlir::Operation *func);
/// The same over `ops`, every op of a model or step (collectOps).
mlir::FailureOr<ParameterSummary>
summarizeParameters(llvm::ArrayRef<mlir::Operation *> ops);

/// Every op nested in `func`, in walk order. Analyses that each read every
/// op of a large step share this array: iterating it costs a few
/// nanoseconds an op where walking the block's list costs a cache miss.
std::vector<mlir::Operation *> collectOps(mlir::Operation *func);

/// The nn.param whose value `v` is: the parameter itself, or, in a step
/// sharded by vram-parallel, its gathered copy (nn.unshard, viewed to its
/// size by nn.slice); with `paramsByName` (the step's nn.param ops by
/// name), also ZeRO-3's gathered copies (views of an nn.all_gather, or
/// nn.unshard copies of one, that names its parameters); null for any other
/// value.
mlir::Operation *getParameterOf(
    mlir::Value v,
    const llvm::StringMap<mlir::Operation *> *paramsByName = nullptr);

/// The batch size of a model or step: its `nn.batch` attribute (set by the
/// front end that bound it), else the leading dimension of its first
/// ranked argument, else nullopt.
std::optional<int64_t> getBatchSize(mlir::Operation *func);

/// The floating-point precision of a model or step: "amp-fp16"/"amp-bf16"
/// under autocast, else from the element types of its parameters (else of
/// its floating-point arguments): "fp32", "fp16", "bf16", "fp64", "mixed", or
/// "none" when it has no floating-point tensor.
std::string getPrecision(mlir::Operation *func);
/// The same, with the ops of `func` collected (collectOps).
std::string getPrecision(mlir::Operation *func,
                         llvm::ArrayRef<mlir::Operation *> ops);
/// A floating-point element type as --precision spells it (fp32, bf16, fp16,
/// fp64; other types as MLIR prints them).
std::string getPrecisionName(mlir::Type type);

/// The PyTorch a built step models (`nn.torch_version`, `nn.device`); the
/// defaults (2, CUDA) for a forward model.
nn::TorchTarget getTorchTarget(mlir::Operation *func);

/// The step mode of a built step (`nn.mode`), nullopt for a forward model.
std::optional<nn::StepMode> getStepMode(mlir::Operation *func);

} // namespace vram

#endif // VRAM_ANALYSIS_STEPINFO_H
