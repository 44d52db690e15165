//===- Run.h - one model through the pipeline to its outputs ----*- C++ -*-===//
//
// What `vram-opt MODEL` does once the flags are read: build the step, check
// the budget, validate by execution, then write the trace and the report (or
// the IR). The driver maps flags to RunOptions and calls runModel.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_PIPELINE_RUN_H
#define VRAM_PIPELINE_RUN_H

#include "vram/Pipeline/ModelSource.h"
#include "vram/Pipeline/Pipeline.h"
#include "vram/Report/Report.h"

#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringMap.h"

namespace vram {

enum class OutputFormat { Mlir, Text, Json, Markdown, Sarif, Html };

enum class ValidationTarget { None, Cpu, Gpu, GpuEmulated };

/// --validate: run the lowered step and compare with the prediction.
struct ValidationOptions {
  ValidationTarget target = ValidationTarget::None;
  /// PyTorch's buffers (one per tensor, freed after its last use) or MLIR's
  /// in-place bufferization (no equality expected).
  bool compilerAllocation = false;
  double learningRate = 0.01;
  /// Model inputs, labels or parameters by name, as .npy files.
  llvm::StringMap<std::string> inputFiles;
  std::string dumpDir;
  /// --validate=gpu: the kernels' target, PTX or cubins, the device.
  std::string gpuArch = "sm_90";
  bool cubin = false;
  unsigned deviceOrdinal = 0;
};

struct RunOptions {
  PipelineOptions pipeline;
  OutputFormat format = OutputFormat::Text;
  /// Whether the format was asked for: a lint, trace or validation run
  /// prints only its own output unless it was.
  bool formatGiven = false;
  /// The report's options; its model name, input path, budget, findings and
  /// validation are filled in by runModel.
  ReportOptions report;
  /// The Chrome trace's file, when asked for.
  std::string traceFile;
  ValidationOptions validation;
  /// --batch: the model's batch dimension must have taken it.
  std::optional<int64_t> batch;
  /// Whether runModel frees the module it built. A driver about to exit
  /// skips it, as clang's -disable-free does: freeing the 700k-op step of
  /// a 100k-layer chain took 4% of the run (perf).
  bool freeModule = true;
};

/// Builds `source`'s model at its own batch and processes it (processModule).
/// The phases (building the model, the pipeline's passes, the budget check,
/// validation, the report) are timed under `timing` (--mlir-timing).
llvm::Error runModel(ModelSource &source, const RunOptions &options,
                     llvm::raw_ostream &os, mlir::TimingScope &timing);
llvm::Error runModel(ModelSource &source, const RunOptions &options,
                     llvm::raw_ostream &os);

/// Runs the pipeline on `module`, checks the budget, validates, writes the
/// trace and the report or IR to `os`. `source` rebuilds the model for the
/// budget suggestions. A DiagnosedError when over budget or when validation
/// disagrees, after everything was written.
llvm::Error processModule(mlir::ModuleOp module, ModelSource &source,
                          const RunOptions &options, llvm::raw_ostream &os,
                          mlir::TimingScope &timing);

/// Executes the step and compares the measured memory with the prediction
/// (docs/Execution.md): sets `finding`, and emits an error when they
/// disagree (`disagrees` is set then). Fails when the step cannot run.
mlir::LogicalResult validateStep(mlir::ModuleOp module,
                                 const RunOptions &options, ModelSource &source,
                                 ValidationFinding &finding, bool &disagrees);

} // namespace vram

#endif // VRAM_PIPELINE_RUN_H
