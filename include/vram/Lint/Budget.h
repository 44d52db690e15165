//===- Budget.h - memory budget lint and fit search -------------*- C++ -*-===//
//
// Checks a step's memory against a budget: over budget is an MLIR error at the
// op where the peak occurs, with notes at the largest storages alive there.
// The fit search finds the largest batch size whose step fits by re-running
// the pipeline (through a callback): the peak is assumed to grow with the
// batch, not to grow linearly.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_LINT_BUDGET_H
#define VRAM_LINT_BUDGET_H

#include "vram/Analysis/MemoryAnalysis.h"
#include "vram/Analysis/StepMemory.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/FunctionExtras.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace vram {

/// Parses "8GiB", "1.5 GB", "512MiB", "1000000" (bytes): B, KB/MB/GB/TB
/// (powers of 1000) and KiB/MiB/GiB/TiB (powers of 1024), with decimals.
/// Nullopt for anything else or a size beyond 64 bits.
std::optional<int64_t> parseByteSize(llvm::StringRef text);

/// "9.31 GiB".
std::string formatByteSize(int64_t bytes);

/// Emits, when `used` exceeds `budget`, an error at the peak op ("peak
/// training memory 9.31 GiB exceeds the budget of 8 GiB by 1.31 GiB") with
/// notes at the `notes` largest storages alive at the peak; returns failure
/// then. `what` names the step ("training", "inference").
mlir::LogicalResult checkBudget(mlir::Operation *step,
                                const MemoryAnalysis &memory, int64_t used,
                                int64_t budget, llvm::StringRef metricName,
                                unsigned notes = 3);

/// The largest batch size in [1, limit] whose step's memory (`measure`) fits
/// `budget`, searching by doubling then bisecting; nullopt when even batch 1
/// does not fit. `measure` fails when the pipeline fails for that batch.
mlir::FailureOr<std::optional<int64_t>>
findLargestBatch(llvm::function_ref<mlir::FailureOr<int64_t>(int64_t)> measure,
                 int64_t budget, int64_t limit = int64_t(1) << 40);

} // namespace vram

#endif // VRAM_LINT_BUDGET_H
