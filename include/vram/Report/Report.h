//===- Report.h - text and JSON reports -------------------------*- C++ -*-===//
//
// Assembles the analyses of a module (parameters, FLOPs, memory, per-layer
// table) into the report documented in docs/Report.md.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_REPORT_REPORT_H
#define VRAM_REPORT_REPORT_H

#include "vram/Analysis/Device.h"
#include "vram/Dialect/NN/NNInterfaces.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace vram {

enum class ReportFormat { Text, Json, Markdown, Sarif, Html };

/// A change to the step that was measured against the budget (over it):
/// the flags that make it ("--optimizer=adamw8bit"), why it saves memory
/// (may be empty) and the memory the step needs with it.
struct BudgetChange {
  std::string flags;
  std::string reason;
  int64_t needs = 0;
};

/// A budget check's outcome (--budget, --gpu): every report format shows it.
struct BudgetFinding {
  int64_t budget = 0;
  int64_t used = 0;
  std::string metric;
  /// Over budget, when the step could be rebuilt at other batch sizes: the
  /// largest batch that fits (0: not even batch 1), else unset.
  std::optional<int64_t> fittingBatch;
  /// Over budget: the single changes that save memory at the current
  /// batch, least memory first (those that fit have needs <= budget).
  std::vector<BudgetChange> changes;
  bool fits() const { return used <= budget; }
};

/// Validation by execution (--validate): measured against predicted memory.
struct ValidationPhase {
  std::string phase;
  int64_t measuredPeakBytes = 0;
  int64_t predictedPeakBytes = 0;
};
/// What --validate=gpu measured on the device (docs/Execution.md).
struct GpuValidationFinding {
  std::string deviceName; ///< the driver's name of the device
  std::string arch;       ///< the kernels' target, sm_90
  int64_t measuredAllocatedBytes = 0, predictedAllocatedBytes = 0;
  int64_t measuredReservedBytes = 0, predictedReservedBytes = 0;
  /// NVML's process memory against reserved + the modelled context.
  std::optional<int64_t> measuredDeviceBytes;
  int64_t predictedDeviceBytes = 0;
  /// cuMemGetInfo's used bytes (every process) at start and at the peak.
  std::optional<int64_t> deviceUsedBeforeBytes, deviceUsedPeakBytes;
  unsigned kernels = 0, launches = 0;
  double stepMs = 0; ///< CUDA events
  int64_t flops = 0;
  double achievedFlopsPerSecond = 0;
};
struct ValidationFinding {
  std::string device;         ///< "cpu" or "gpu"
  std::string allocationMode; ///< "pytorch"
  int64_t measuredPeakBytes = 0;
  int64_t predictedPeakBytes = 0;
  int64_t allocations = 0;
  std::optional<double> loss;
  double wallSeconds = 0;
  std::vector<ValidationPhase> phases;
  std::optional<GpuValidationFinding> gpu;
};

/// Writes the validation alone as text: predicted and measured side by side.
void writeValidationText(const ValidationFinding &v, llvm::raw_ostream &os);

/// A front end's warning about the model.
struct ImportFinding {
  std::string rule; ///< a rule id of vram/Support/Findings.h, or empty
  std::string message;
  mlir::LocationAttr location;
};

/// A file and a line (1-based).
struct SourceLine {
  std::string file;
  unsigned line = 1;
};

/// The figures of one rank of a job whose ranks run different steps (a
/// pipeline's stages), read off its own step: the report lists them beside
/// the rank the step is.
struct RankFigures {
  std::vector<int64_t> rankIds;
  int64_t peak = 0, allocated = 0, reserved = 0, persistent = 0;
  /// With a GPU model (the caching allocator on CUDA).
  std::optional<int64_t> device;
  /// Bytes per memory category at the peak, in MemoryCategory order.
  std::vector<int64_t> atPeak;
  /// Point-to-point bytes sent and received per step.
  int64_t p2pSent = 0, p2pReceived = 0;
};

class StepMemory;
/// `module`'s rank `rank`, measured by `memory` (its step's figures).
RankFigures collectRankFigures(mlir::ModuleOp module, const StepMemory &memory,
                               int64_t rank);

struct ReportOptions {
  std::string modelName;
  nn::FlopConvention flops = nn::FlopConvention::Flops;
  /// The allocator model of `allocated_peak_bytes` / `reserved_peak_bytes`,
  /// simulated over two iterations (a training loop's steady state).
  nn::AllocatorKind allocator = nn::AllocatorKind::Exact;
  /// With the pytorch-cuda allocator: the GPU, whose library workspaces the
  /// simulation holds and whose context the device figure adds.
  std::optional<DeviceModel> device;
  bool timeline = false;
  /// Layer rows summed per module at this depth of the module path (0: one
  /// row per layer call).
  unsigned depth = 0;
  /// Markdown: a baseline JSON report (this schema) to compare against, and
  /// the relative growth of the peak reported as a regression.
  std::string comparePath;
  double regressionThreshold = 0.05;
  /// Markdown with a baseline: a regression is also an error (the writer
  /// fails after writing, exit code 1), for CI gates.
  bool failOnRegression = false;
  /// Set when --budget was checked.
  std::optional<BudgetFinding> budget;
  /// Warnings the front end gave about the model, shown as SARIF results:
  /// each of the rule it was tagged with (vram/Support/Findings.h), untagged
  /// ones as vram/import-warning.
  std::vector<ImportFinding> importFindings;
  /// The file analyzed (SARIF artifact of locations without a file).
  std::string inputPath;
  /// SARIF: where results without a source line of their own point, instead
  /// of `inputPath` at line 1 (--sarif-location).
  std::optional<SourceLine> sarifLocation;
  unsigned topTensors = 10;
  /// Set when the step was executed (--validate).
  std::optional<ValidationFinding> validation;
  /// Under pipeline parallelism: every other stage's figures, by stage.
  std::vector<RankFigures> otherRanks;
};

/// Writes the report of `module`: its `@step` (built by vram-build-step) or,
/// failing that, its `@forward`. Fails with an MLIR error when the sizes
/// overflow or the module holds no model.
mlir::LogicalResult writeReport(mlir::ModuleOp module,
                                const ReportOptions &options,
                                ReportFormat format, llvm::raw_ostream &os);

/// Writes the step's memory as Chrome trace events (chrome://tracing,
/// Perfetto): a counter track per memory category over the op sequence (one
/// op per microsecond) and an instant event per allocation and release.
mlir::LogicalResult writeTrace(mlir::ModuleOp module,
                               const ReportOptions &options,
                               llvm::raw_ostream &os);

} // namespace vram

#endif // VRAM_REPORT_REPORT_H
