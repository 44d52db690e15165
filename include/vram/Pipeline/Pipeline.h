//===- Pipeline.h - the vram pipeline as a library --------------*- C++ -*-===//
//
// What every entry point shares (vram-opt, the Clang plugin, vram-bench), in
// the way CIRCT's lib/Firtool serves firtool: typed options, the one function
// that turns a forward model into the measured step (scenario passes in one
// documented order), the budget check with its suggestions and the fit-batch
// search. Front ends reach it through ModelSource (ModelSource.h).
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_PIPELINE_PIPELINE_H
#define VRAM_PIPELINE_PIPELINE_H

#include "vram/Analysis/StepMemory.h"
#include "vram/Report/Report.h"
#include "vram/Transforms/Passes.h"
#include "vram/Zoo/Zoo.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace vram {
class ModelSource;

/// Options that cannot apply to the model at hand (a `--checkpoint` of an
/// inference step, a `--batch` the model has no dimension for): the caller
/// reports the message (vram-opt: exit code 2).
class UsageError : public llvm::ErrorInfo<UsageError> {
public:
  static char ID;
  explicit UsageError(std::string text) : text(std::move(text)) {}
  void log(llvm::raw_ostream &os) const override { os << text; }
  std::error_code convertToErrorCode() const override;

private:
  std::string text;
};

/// A failure already reported through MLIR diagnostics (vram-opt: exit code
/// 1); nothing more to print.
class DiagnosedError : public llvm::ErrorInfo<DiagnosedError> {
public:
  static char ID;
  void log(llvm::raw_ostream &os) const override {
    os << "failed (see the diagnostics)";
  }
  std::error_code convertToErrorCode() const override;
};

llvm::Error makeUsageError(const llvm::Twine &message);
llvm::Error makeDiagnosedError();
/// A DiagnosedError when `result` failed.
llvm::Error toError(mlir::LogicalResult result);

/// Everything that decides which step is built and how it is measured.
struct PipelineOptions {
  /// Passes to run first, as `mlir-opt` would (vram-opt's pass pipeline
  /// flags); empty for none.
  std::optional<mlir::OpPassManager> userPasses;
  /// Whether MLIR's pass manager flags (--mlir-print-ir-*, --mlir-timing)
  /// apply to every pass manager: the caller registered them
  /// (registerPassManagerCLOptions), as vram-opt does.
  bool usePassManagerCLOptions = false;
  /// Whether the step is built when the module has none (a report, a budget
  /// or a validation needs it; printing IR does not).
  bool buildStep = true;
  /// vram-build-step's options. `step.implementation` is replaced by
  /// getImplementation().
  BuildStepOptions step;
  /// The optimizer implementation; none: the one the modelled PyTorch picks
  /// (getDefaultOptimizerImpl).
  std::optional<nn::OptimizerImpl> implementation;
  /// Scenario passes on the forward model (vram-freeze, vram-lora,
  /// vram-precision) and on the training step (vram-checkpoint).
  std::vector<std::string> freezePatterns;
  double freezeFirst = 0;
  std::optional<LoraOptions> lora;
  /// bitsandbytes 4-bit base weights (vram-quantize); none: as loaded.
  std::optional<QuantizeOptions> quantize;
  nn::Precision precision = nn::Precision::Fp32;
  std::vector<std::string> checkpointModules;
  /// transformers' use_cache in a training forward (--use-cache): the
  /// decoders the front ends build copy each layer's keys and values into
  /// a DynamicCache, unless checkpointing is on (transformers then turns
  /// the cache off).
  bool useCache = true;
  /// Liger-Kernel's kernels in the layers of a decoder the front end
  /// builds (--liger; its fused loss is step.loss).
  zoo::LigerKernels liger;
  /// --tp-plan: under --parallel=tp=N, whether lm_head is column-parallel
  /// too (transformers' tp_plan="auto"; false: "layers", the decoder
  /// layers' plan alone).
  bool tensorParallelLmHead = true;
  /// --tp-plan=vocab: the token embedding row-parallel over the vocabulary
  /// too.
  bool tensorParallelEmbedding = false;
  /// --parallel=tp=N,sp: sequence parallelism between the tensor-parallel
  /// regions.
  bool sequenceParallel = false;
  /// The multi-GPU layout (vram-parallel on the built step); none for one
  /// GPU.
  std::optional<ParallelOptions> parallel;
  /// How the figures are read off the step (allocator, device).
  MemoryModel memoryModel;
  /// A memory budget in bytes (--budget, or the capacity of --gpu) and the
  /// metric it is checked against (none: getDefaultBudgetMetric).
  std::optional<int64_t> budget;
  std::optional<BudgetMetric> budgetMetric;

  nn::OptimizerImpl getImplementation() const;
  BudgetMetric getBudgetMetric() const;
  /// vram-build-step's options with the implementation resolved.
  BuildStepOptions getBuildStepOptions() const;
};

/// Runs the pipeline on `module`, in this order: the user's passes; the
/// scenario passes on the forward model as a fine-tuning script applies
/// them: vram-freeze; the dtype the model is loaded in (vram-precision
/// fp16/bf16); its 4-bit weights (vram-quantize, from_pretrained's
/// quantization_config); vram-lora (get_peft_model, which freezes the
/// rest and adapts the loaded layers); then autocast (vram-precision amp-*,
/// which caches only the casts of trainable parameters); vram-build-step when
/// the module has no `@step` and the options ask for one; vram-checkpoint on
/// the built training step; then vram-parallel, which makes the step one
/// rank's. Scenario options on a module whose step the user's passes already
/// built, and checkpointing without a training step, are usage errors.
/// Each pass manager's pass timings nest under `timing` (--mlir-timing).
llvm::Error runPipeline(mlir::ModuleOp module, const PipelineOptions &options,
                        mlir::TimingScope &timing);
llvm::Error runPipeline(mlir::ModuleOp module, const PipelineOptions &options);

/// The function a budget is checked on: `@step`, else `@forward` (with an
/// error when there is neither).
mlir::FailureOr<mlir::func::FuncOp> getMeasuredFunction(mlir::ModuleOp module);

/// The figures of `module`'s measured function under the options' memory
/// model; null after an error.
std::unique_ptr<StepMemory> computeStepMemory(mlir::ModuleOp module,
                                              const PipelineOptions &options);

/// The memory of `module`'s measured function under the budget metric.
mlir::FailureOr<int64_t> measureBudgetMetric(mlir::ModuleOp module,
                                             const PipelineOptions &options);

/// Makes `source` build the model `options` describe: one rank's of the
/// tensor-parallel ranks they name (--parallel=tp=N; the whole model
/// without), and a training forward with or without transformers' cache.
void syncModelSource(ModelSource &source, const PipelineOptions &options);

/// Whether Liger-Kernel's kernels and fused loss are modelled with
/// `parallel`: on one GPU, under DDP (dp=N), ZeRO-1 and -2 and FSDP2
/// (fsdp=N, hsdp=RxS), as measured; not with ZeRO-3 (Liger's fused loss
/// reads lm_head.weight without calling lm_head, around whose call alone
/// ZeRO-3 gathers it) nor tensor parallelism (DTensor inputs, which
/// Liger's RMSNorm gathers).
bool isLigerModelledWith(const std::optional<ParallelOptions> &parallel);

/// `source`'s model at `batch` (its own when none) run through the pipeline
/// and measured, with diagnostics silenced; failure when that cannot be done.
mlir::FailureOr<int64_t> measureModel(ModelSource &source,
                                      const PipelineOptions &options,
                                      std::optional<int64_t> batch);

/// --fit-batch: the largest batch whose step fits `options.budget`, each
/// candidate built by `source` and run through the same pipeline; nullopt
/// when even batch 1 does not fit. Batch 1's diagnostics are the user's,
/// larger candidates fail quietly (sizes that overflow do not fit).
llvm::Expected<std::optional<int64_t>>
findFittingBatch(ModelSource &source, const PipelineOptions &options);

/// --fit-context: the longest sequence (tokens, --seq) whose step fits
/// `options.budget` at the source's batch, searched as findFittingBatch
/// does; a candidate the model cannot take (past its learned positions)
/// does not fit. A UsageError for a model without a sequence length.
llvm::Expected<std::optional<int64_t>>
findFittingSequence(ModelSource &source, const PipelineOptions &options);

/// Checks `module`'s step against `options.budget`: over it, an error at the
/// peak op with notes at the largest storages, then remarks saying what
/// would fit, each measured by running the pipeline again on a model from
/// `source` (when given): the largest batch size, then the changes that fit
/// at the current batch, least memory first (a fused optimizer, AMP,
/// freezing half the modules, checkpointing each repeated block or every
/// top-level module); changes that do not fit or save nothing are not
/// suggested. Within it, one line on stderr
/// with the margin. Fails when over budget or when the step cannot be
/// measured.
/// `finding`, when given, receives the outcome for the report: the step's
/// memory under the budget metric and what was measured to fit (unset when
/// the step could not be measured).
mlir::LogicalResult lintBudget(mlir::ModuleOp module,
                               const PipelineOptions &options,
                               ModelSource *source,
                               std::optional<BudgetFinding> *finding = nullptr);

} // namespace vram

#endif // VRAM_PIPELINE_PIPELINE_H
