//===- FlopAnalysis.h - FLOPs per op and phase ------------------*- C++ -*-===//

#ifndef VRAM_ANALYSIS_FLOPANALYSIS_H
#define VRAM_ANALYSIS_FLOPANALYSIS_H

#include "vram/Analysis/StepInfo.h"
#include "vram/Dialect/NN/NNInterfaces.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <array>

namespace vram {

struct FlopResult {
  nn::FlopConvention convention;
  std::array<int64_t, 3> perPhase = {}; ///< indexed by StepPhase
  int64_t total() const { return perPhase[0] + perPhase[1] + perPhase[2]; }
};

/// Sums CostOpInterface::getFlops over the ops of `step` (a built step or a
/// forward function, which counts as a forward pass in inference form).
FlopResult analyzeFlops(mlir::func::FuncOp step, nn::FlopConvention convention);

} // namespace vram

#endif // VRAM_ANALYSIS_FLOPANALYSIS_H
