//===- FlopAnalysis.h - FLOPs per op and phase ------------------*- C++ -*-===//
//
// Sums CostOpInterface::getFlops over the ops of a step (or of a forward
// function, which counts as a forward pass in inference form) under all three
// counting conventions at once, per op and per phase. Sums are checked: a
// total that does not fit in 64 bits is a located error and marks the
// analysis failed. Linear in the number of ops.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_ANALYSIS_FLOPANALYSIS_H
#define VRAM_ANALYSIS_FLOPANALYSIS_H

#include "vram/Analysis/StepInfo.h"
#include "vram/Dialect/NN/NNInterfaces.h"

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseMap.h"

#include <array>

namespace vram {

class FlopAnalysis {
public:
  static constexpr unsigned kNumConventions = 3;
  static constexpr unsigned kNumPhases = 4;
  using Counts = std::array<int64_t, kNumConventions>;

  /// Analyzes `op`: a `func.func`. Emits an error on overflow.
  explicit FlopAnalysis(mlir::Operation *op);
  /// The same, with the ops of `op` collected (collectOps).
  FlopAnalysis(mlir::Operation *op, llvm::ArrayRef<mlir::Operation *> ops);

  bool failed() const { return hasFailed; }
  int64_t getPhaseFlops(nn::FlopConvention convention, StepPhase phase) const {
    return perPhase[static_cast<unsigned>(phase)]
                   [static_cast<unsigned>(convention)];
  }
  int64_t getTotal(nn::FlopConvention convention) const {
    return total[static_cast<unsigned>(convention)];
  }
  /// The FLOPs of one op (0 for ops without a cost).
  int64_t getOpFlops(mlir::Operation *op, nn::FlopConvention convention) const;

  /// One line per op with a non-zero cost, then the totals per phase.
  void print(llvm::raw_ostream &os) const;

private:
  mlir::Operation *root;
  bool hasFailed = false;
  llvm::DenseMap<mlir::Operation *, Counts> perOp;
  std::array<Counts, kNumPhases> perPhase = {};
  Counts total = {};
};

} // namespace vram

#endif // VRAM_ANALYSIS_FLOPANALYSIS_H
