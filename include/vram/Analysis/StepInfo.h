//===- StepInfo.h - facts about a built step shared by analyses -*- C++ -*-===//

#ifndef VRAM_ANALYSIS_STEPINFO_H
#define VRAM_ANALYSIS_STEPINFO_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace vram {

/// Attribute names the step builder leaves on `@step` for the analyses.
constexpr llvm::StringLiteral kStepModeAttr = "vram.mode";
constexpr llvm::StringLiteral kPersistentGradsAttr = "vram.persistent_grads";
/// Module attribute naming the model (set by the zoo and the importers).
constexpr llvm::StringLiteral kModelNameAttr = "vram.model";

/// Where an op runs in a training iteration.
enum class StepPhase { Forward, Backward, Optimizer };
llvm::StringRef stringify(StepPhase phase);

/// The phase of an op of a built step (backward nodes, gradient accumulation
/// and the optimizer are ops of their own).
StepPhase getStepPhase(mlir::Operation *op);

/// Bytes of a tensor value (elements x ceil(bits / 8)), or nullopt when the
/// count does not fit in 64 bits.
std::optional<int64_t> getTensorBytes(mlir::Type type);

/// The layer name an op belongs to: the name of its NameLoc (possibly fused
/// or nested), else "file:line" of a file location, else "".
std::string getLayerName(mlir::Location loc);

} // namespace vram

#endif // VRAM_ANALYSIS_STEPINFO_H
