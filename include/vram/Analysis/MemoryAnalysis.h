//===- MemoryAnalysis.h - liveness-based peak memory ------------*- C++ -*-===//
//
// Liveness over a built step in program order: every value's bytes, its
// storage root (views and in-place results alias an operand), its category,
// its definition and its last use. Persistent storage (parameters, buffers,
// inputs, optimizer state) lives throughout. The allocator model is `exact`:
// the live bytes are the sum of the live storages.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_ANALYSIS_MEMORYANALYSIS_H
#define VRAM_ANALYSIS_MEMORYANALYSIS_H

#include "vram/Analysis/StepInfo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/ADT/StringMap.h"

#include <array>
#include <vector>

namespace vram {

enum class MemoryCategory {
  Parameters,
  Buffers,
  Inputs,
  Activations, ///< saved for backward
  Gradients,   ///< parameter gradients (.grad)
  OptimizerState,
  Temporaries, ///< everything else: outputs not kept, activation grads,
               ///< workspaces
};
constexpr unsigned kNumMemoryCategories = 7;
llvm::StringRef stringify(MemoryCategory category);

struct LiveTensor {
  mlir::Value value; ///< the storage root
  int64_t bytes;
  MemoryCategory category;
};

struct TimelinePoint {
  mlir::Operation *op;
  StepPhase phase;
  int64_t liveBytes; ///< while the op runs: inputs, outputs and workspace
};

struct MemoryResult {
  int64_t peakBytes = 0;
  mlir::Operation *peakOp = nullptr;
  StepPhase peakPhase = StepPhase::Forward;
  std::array<int64_t, kNumMemoryCategories> atPeak = {};
  /// Unique storages the model's backward nodes keep at the end of its
  /// forward pass (the loss's excluded), parameters, buffers and inputs
  /// excluded: what torch.autograd.graph.saved_tensors_hooks sees.
  int64_t savedForBackwardBytes = 0;
  int64_t persistentBytes = 0;
  std::vector<LiveTensor> topTensors; ///< alive at the peak, largest first
  std::vector<TimelinePoint> timeline;
  /// Bytes saved for backward by layer name: each saved storage counts once,
  /// for the first layer (in forward order) whose backward node keeps it.
  llvm::StringMap<int64_t> savedBytesByLayer;
};

/// Runs the analysis on `step`; emits an error and fails on a size that does
/// not fit in 64 bits.
mlir::FailureOr<MemoryResult> analyzeMemory(mlir::func::FuncOp step,
                                            unsigned topTensors = 10);

/// A short name for a storage: the parameter/buffer name, the input index, or
/// the defining op and its layer.
std::string describeTensor(mlir::Value value);

} // namespace vram

#endif // VRAM_ANALYSIS_MEMORYANALYSIS_H
