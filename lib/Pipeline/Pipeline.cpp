//===- Pipeline.cpp - the vram pipeline as a library ----------------------===//

#include "vram/Pipeline/Pipeline.h"
#include "vram/Analysis/StepInfo.h"
#include "vram/Dialect/NN/TorchSemantics.h"
#include "vram/Lint/Budget.h"
#include "vram/Pipeline/ModelSource.h"
#include "vram/Transforms/ModulePatterns.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace vram;

ModelSource::~ModelSource() = default;

namespace {
/// A module the caller parsed (.mlir input): built once, never rebuilt.
class ModuleSource : public ModelSource {
public:
  ModuleSource(OwningOpRef<ModuleOp> module, std::string name,
               std::string inputPath)
      : module(std::move(module)), name(std::move(name)),
        inputPath(std::move(inputPath)) {
    context = (*this->module)->getContext();
  }

  StringRef getName() const override { return name; }
  StringRef getInputPath() const override { return inputPath; }
  MLIRContext *getContext() const override { return context; }
  bool canRebuild() const override { return false; }

  llvm::Expected<OwningOpRef<ModuleOp>>
  build(std::optional<int64_t> batch) override {
    if (batch || !module)
      return makeUsageError("--fit-batch needs a model whose batch can be "
                            "bound: a zoo model or an ONNX graph with a "
                            "symbolic batch dimension");
    return std::move(module);
  }

private:
  OwningOpRef<ModuleOp> module;
  MLIRContext *context;
  std::string name, inputPath;
};

} // namespace

std::unique_ptr<ModelSource>
vram::createModuleSource(OwningOpRef<ModuleOp> module, std::string name,
                         std::string inputPath) {
  return std::make_unique<ModuleSource>(std::move(module), std::move(name),
                                        std::move(inputPath));
}

char UsageError::ID;
char DiagnosedError::ID;

std::error_code UsageError::convertToErrorCode() const {
  return llvm::inconvertibleErrorCode();
}
std::error_code DiagnosedError::convertToErrorCode() const {
  return llvm::inconvertibleErrorCode();
}

llvm::Error vram::makeUsageError(const llvm::Twine &message) {
  return llvm::make_error<UsageError>(message.str());
}
llvm::Error vram::makeDiagnosedError() {
  return llvm::make_error<DiagnosedError>();
}
llvm::Error vram::toError(LogicalResult result) {
  return failed(result) ? makeDiagnosedError() : llvm::Error::success();
}

nn::OptimizerImpl PipelineOptions::getImplementation() const {
  return implementation.value_or(nn::getDefaultOptimizerImpl(
      step.optimizer, {step.torchVersion, step.device}));
}

BudgetMetric PipelineOptions::getBudgetMetric() const {
  return budgetMetric.value_or(getDefaultBudgetMetric(
      memoryModel.usesCachingAllocator(), step.device == nn::Device::Cuda));
}

BuildStepOptions PipelineOptions::getBuildStepOptions() const {
  BuildStepOptions options = step;
  options.implementation = getImplementation();
  return options;
}

/// Runs `pm` on `module`, with the pass manager flags (--mlir-print-ir-*)
/// applied when the options say they are registered, its passes timed under
/// `timing`.
static LogicalResult runPasses(PassManager &pm, ModuleOp module,
                               const PipelineOptions &options,
                               TimingScope &timing) {
  if (options.usePassManagerCLOptions && failed(applyPassManagerCLOptions(pm)))
    return failure();
  pm.enableTiming(timing);
  return pm.run(module);
}

llvm::Error vram::runPipeline(ModuleOp module, const PipelineOptions &options) {
  TimingScope untimed;
  return runPipeline(module, options, untimed);
}

llvm::Error vram::runPipeline(ModuleOp module, const PipelineOptions &options,
                              TimingScope &timing) {
  MLIRContext *ctx = module.getContext();
  if (options.userPasses && options.userPasses->size()) {
    PassManager pm(ctx, ModuleOp::getOperationName(),
                   OpPassManager::Nesting::Implicit);
    static_cast<OpPassManager &>(pm) = *options.userPasses;
    if (failed(runPasses(pm, module, options, timing)))
      return makeDiagnosedError();
  }
  PassManager scenarioPm(ctx, ModuleOp::getOperationName());
  if (!options.freezePatterns.empty() || options.freezeFirst > 0) {
    FreezeOptions freeze;
    freeze.patterns.assign(options.freezePatterns.begin(),
                           options.freezePatterns.end());
    freeze.firstFraction = options.freezeFirst;
    scenarioPm.addPass(createFreeze(freeze));
  }
  bool autocast = options.precision == nn::Precision::AmpFp16 ||
                  options.precision == nn::Precision::AmpBf16;
  auto addPrecision = [&] {
    PrecisionOptions precision;
    precision.precision = options.precision;
    scenarioPm.addPass(createPrecision(precision));
  };
  if (options.precision != nn::Precision::Fp32 && !autocast)
    addPrecision();
  if (options.quantize)
    scenarioPm.addPass(createQuantize(*options.quantize));
  if (options.lora)
    scenarioPm.addPass(createLora(*options.lora));
  if (autocast)
    addPrecision();
  if (scenarioPm.size()) {
    if (module.lookupSymbol("step"))
      return makeUsageError(
          "--freeze, --freeze-first, --quantize, --lora and --precision "
          "apply to the forward model: the pipeline already built the step");
    if (failed(runPasses(scenarioPm, module, options, timing)))
      return makeDiagnosedError();
  }
  if (options.buildStep && !module.lookupSymbol("step")) {
    PassManager stepPm(ctx, ModuleOp::getOperationName());
    stepPm.addPass(createBuildStep(options.getBuildStepOptions()));
    if (failed(runPasses(stepPm, module, options, timing)))
      return makeDiagnosedError();
  }
  if (!options.checkpointModules.empty()) {
    auto step = module.lookupSymbol<func::FuncOp>("step");
    if (!step || getStepMode(step) != nn::StepMode::Train)
      return makeUsageError(
          "--checkpoint applies to a training step (--mode=train)");
    PassManager checkpointPm(ctx, ModuleOp::getOperationName());
    CheckpointOptions checkpoint;
    checkpoint.modules.assign(options.checkpointModules.begin(),
                              options.checkpointModules.end());
    checkpointPm.addPass(createCheckpoint(checkpoint));
    if (failed(runPasses(checkpointPm, module, options, timing)))
      return makeDiagnosedError();
  }
  if (options.parallel) {
    if (!module.lookupSymbol("step"))
      return makeUsageError("--parallel applies to a built step");
    PassManager parallelPm(ctx, ModuleOp::getOperationName());
    parallelPm.addPass(createParallel(*options.parallel));
    if (failed(runPasses(parallelPm, module, options, timing)))
      return makeDiagnosedError();
  }
  return llvm::Error::success();
}

FailureOr<func::FuncOp> vram::getMeasuredFunction(ModuleOp module) {
  auto step = module.lookupSymbol<func::FuncOp>("step");
  if (!step)
    step = module.lookupSymbol<func::FuncOp>("forward");
  if (!step)
    return module.emitError("no @step or @forward function to check");
  return step;
}

std::unique_ptr<StepMemory>
vram::computeStepMemory(ModuleOp module, const PipelineOptions &options) {
  FailureOr<func::FuncOp> step = getMeasuredFunction(module);
  if (failed(step))
    return nullptr;
  auto memory = std::make_unique<StepMemory>(
      *step, options.memoryModel.allocator,
      options.memoryModel.getDeviceFor(options.step.device));
  if (memory->failed())
    return nullptr;
  return memory;
}

/// The --parallel spec of the data- and tensor-parallel axes of `p`
/// (hsdp=RxS, fsdp=S or dp=R, then tp=N).
static std::string getParallelSpec(const ParallelOptions &p) {
  std::string spec;
  llvm::raw_string_ostream os(spec);
  if (p.dp > 1 && p.fsdp > 1)
    os << "hsdp=" << p.dp << "x" << p.fsdp << ",";
  else if (p.fsdp > 1)
    os << "fsdp=" << p.fsdp << ",";
  else if (p.dp > 1)
    os << "dp=" << p.dp << ",";
  os << "tp=" << p.tp;
  return spec;
}

FailureOr<int64_t> vram::measureBudgetMetric(ModuleOp module,
                                             const PipelineOptions &options) {
  std::unique_ptr<StepMemory> memory = computeStepMemory(module, options);
  if (!memory)
    return failure();
  return memory->get(options.getBudgetMetric());
}

void vram::syncModelSource(ModelSource &source,
                           const PipelineOptions &options) {
  source.setTensorParallel(
      options.parallel ? options.parallel->tp : 1, options.tensorParallelLmHead,
      options.tensorParallelEmbedding, options.sequenceParallel);
  source.setTrainingCache(options.useCache &&
                          options.step.mode == nn::StepMode::Train &&
                          options.checkpointModules.empty());
  source.setLiger(options.liger);
}

bool vram::isLigerModelledWith(const std::optional<ParallelOptions> &parallel) {
  return !parallel ||
         (parallel->tp == 1 && parallel->zero != 3 && parallel->pp == 1);
}

FailureOr<int64_t> vram::measureModel(ModelSource &source,
                                      const PipelineOptions &options,
                                      std::optional<int64_t> batch) {
  ScopedDiagnosticHandler quiet(source.getContext(),
                                [](Diagnostic &) { return success(); });
  syncModelSource(source, options);
  llvm::Expected<OwningOpRef<ModuleOp>> module = source.build(batch);
  if (!module) {
    llvm::consumeError(module.takeError());
    return failure();
  }
  PipelineOptions withStep = options;
  withStep.buildStep = true;
  if (llvm::Error error = runPipeline(**module, withStep)) {
    llvm::consumeError(std::move(error));
    return failure();
  }
  return measureBudgetMetric(**module, withStep);
}

/// The largest candidate in [1, limit] whose step fits `options.budget`,
/// each built by `buildAt` and run through the pipeline. Candidate 1's
/// diagnostics are the user's; a larger candidate that fails (sizes that
/// overflow) does not fit. A UsageError stops the search, for a larger
/// candidate too when `usageStops` (a graph whose batch is static).
static llvm::Expected<std::optional<int64_t>> findLargestFitting(
    ModelSource &source, const PipelineOptions &options, int64_t limit,
    bool usageStops,
    llvm::function_ref<llvm::Expected<OwningOpRef<ModuleOp>>(int64_t)>
        buildAt) {
  assert(options.budget && "the fit search needs a budget");
  // Each candidate is one rank's model (tensor parallelism) as the run's.
  syncModelSource(source, options);
  PipelineOptions withStep = options;
  withStep.buildStep = true;
  std::optional<llvm::Error> usage;
  auto measure = [&](int64_t candidate) -> FailureOr<int64_t> {
    std::optional<ScopedDiagnosticHandler> quiet;
    if (candidate > 1)
      quiet.emplace(source.getContext(),
                    [](Diagnostic &) { return success(); });
    auto giveUp = [&](llvm::Error error) -> FailureOr<int64_t> {
      if (error.isA<UsageError>() && (usageStops || candidate == 1)) {
        usage = std::move(error);
        return failure();
      }
      llvm::consumeError(std::move(error));
      if (candidate > 1)
        return INT64_MAX;
      return failure();
    };
    llvm::Expected<OwningOpRef<ModuleOp>> module = buildAt(candidate);
    if (!module)
      return giveUp(module.takeError());
    if (llvm::Error error = runPipeline(**module, withStep))
      return giveUp(std::move(error));
    FailureOr<int64_t> used = measureBudgetMetric(**module, withStep);
    if (failed(used) && candidate > 1)
      return INT64_MAX;
    return used;
  };
  FailureOr<std::optional<int64_t>> best =
      findLargestBatch(measure, *options.budget, limit);
  if (usage)
    return std::move(*usage);
  if (failed(best))
    return makeDiagnosedError();
  return *best;
}

llvm::Expected<std::optional<int64_t>>
vram::findFittingBatch(ModelSource &source, const PipelineOptions &options) {
  return findLargestFitting(source, options, int64_t(1) << 40,
                            /*usageStops=*/true,
                            [&](int64_t batch) { return source.build(batch); });
}

/// The sequence length of a built language model: dimension 1 of its first
/// integer (token id) input.
static std::optional<int64_t> getSequenceLength(ModuleOp module) {
  auto forward = module.lookupSymbol<func::FuncOp>("forward");
  if (!forward)
    return std::nullopt;
  for (Type type : forward.getArgumentTypes())
    if (auto tensor = dyn_cast<RankedTensorType>(type);
        tensor && tensor.getRank() >= 2 &&
        isa<IntegerType>(tensor.getElementType()))
      return tensor.getDimSize(1);
  return std::nullopt;
}

llvm::Expected<std::optional<int64_t>>
vram::findFittingSequence(ModelSource &source, const PipelineOptions &options) {
  auto noSequence = [&] {
    return makeUsageError("--fit-context needs a language model whose "
                          "sequence length --seq binds (token ids [batch, "
                          "seq]); " +
                          source.getName() + " has none");
  };
  if (!source.canVarySequence())
    return noSequence();
  // Sequence parallelism splits the positions evenly: the candidates are
  // multiples of the tensor-parallel ranks.
  int64_t unit = options.sequenceParallel && options.parallel
                     ? std::max<int64_t>(options.parallel->tp, 1)
                     : 1;
  // A sequence past the model's learned positions is a usage error of
  // that length only: it does not fit.
  llvm::Expected<std::optional<int64_t>> units = findLargestFitting(
      source, options, (int64_t(1) << 24) / unit, /*usageStops=*/false,
      [&](int64_t count) -> llvm::Expected<OwningOpRef<ModuleOp>> {
        int64_t seq = count * unit;
        source.setSequenceLength(seq);
        llvm::Expected<OwningOpRef<ModuleOp>> module =
            source.build(std::nullopt);
        if (module && getSequenceLength(**module) != seq)
          return noSequence();
        return module;
      });
  if (!units || !*units)
    return units;
  return std::optional<int64_t>(**units * unit);
}

/// Remarks at the peak op saying what would fit, each evaluated by running
/// the pipeline again: the largest batch size, then the scenario changes
/// that fit at the current batch, least memory first. A change that saves
/// nothing or still does not fit is not suggested; when none fits, one
/// remark names the change that saves the most.
static void suggestFixes(func::FuncOp step, const MemoryAnalysis &memory,
                         int64_t used, const PipelineOptions &options,
                         ModelSource &source, BudgetFinding &finding) {
  int64_t limit = *options.budget;
  Location loc =
      memory.getPeakOp() ? memory.getPeakOp()->getLoc() : step.getLoc();
  std::optional<int64_t> current = getBatchSize(step);
  auto measure = [&](int64_t b) -> FailureOr<int64_t> {
    FailureOr<int64_t> used = measureModel(source, options, b);
    return failed(used) ? FailureOr<int64_t>(INT64_MAX) : used;
  };
  FailureOr<std::optional<int64_t>> best = findLargestBatch(
      measure, limit, current ? std::max<int64_t>(*current, 1) : 1 << 20);
  if (succeeded(best))
    finding.fittingBatch = best->value_or(0);
  if (succeeded(best) && *best)
    emitRemark(loc) << "batch size " << **best << " fits the budget";
  else if (succeeded(best))
    emitRemark(loc) << "not even batch size 1 fits the budget";
  bool generating = options.step.mode == nn::StepMode::Generate;
  if ((options.step.mode != nn::StepMode::Train && !generating) || !current)
    return;
  // A change: the flags that make it, why it saves memory (may be empty),
  // and what the step then needs.
  struct Change {
    std::string flags, reason;
    int64_t used;
    /// "FLAGS (reason)", as the remarks spell it.
    std::string spelled() const {
      return reason.empty() ? flags : flags + " (" + reason + ")";
    }
  };
  SmallVector<Change> changes;
  auto tryChangeAt = [&](int64_t batch, const llvm::Twine &flags,
                         const llvm::Twine &reason,
                         llvm::function_ref<void(PipelineOptions &)> change) {
    PipelineOptions changed = options;
    change(changed);
    FailureOr<int64_t> needs = measureModel(source, changed, batch);
    if (succeeded(needs) && *needs < used)
      changes.push_back({flags.str(), reason.str(), *needs});
  };
  auto tryChange = [&](const llvm::Twine &flags, const llvm::Twine &reason,
                       llvm::function_ref<void(PipelineOptions &)> change) {
    tryChangeAt(*current, flags, reason, change);
  };
  // The model's repeated blocks (from @forward when the step kept it).
  auto repeatedBlocks = [&] {
    auto forward =
        step->getParentOfType<ModuleOp>().lookupSymbol<func::FuncOp>("forward");
    return getRepeatedBlockPatterns(forward ? forward : step);
  };
  // bitsandbytes' 4-bit weights: nf4 with double quantization.
  auto useNf4DoubleQuant = [](PipelineOptions &o) {
    QuantizeOptions quantize;
    quantize.quantType = nn::QuantType::Nf4;
    quantize.doubleQuant = true;
    o.quantize = quantize;
  };
  bool autocast = options.precision == nn::Precision::AmpFp16 ||
                  options.precision == nn::Precision::AmpBf16;
  // Serving: the weights in 16, 8 or 4 bits (bitsandbytes' Linear8bitLt
  // and Linear4bit, as BitsAndBytesConfig(load_in_8bit=True) or
  // load_in_4bit=True loads them).
  if (generating) {
    if (options.precision == nn::Precision::Fp32)
      tryChange("--precision=bf16", "the weights in bfloat16",
                [](PipelineOptions &o) { o.precision = nn::Precision::Bf16; });
    if (!options.quantize && !autocast &&
        options.step.torchVersion == nn::TorchVersion::V2) {
      tryChange("--quantize=nf4 --double-quant", "4-bit weights",
                useNf4DoubleQuant);
      // LLM.int8() (load_in_8bit=True): a byte a weight and a float32 scale
      // a row, its outliers in 16 bits.
      tryChange("--quantize=int8", "LLM.int8() 8-bit weights",
                [](PipelineOptions &o) {
                  QuantizeOptions quantize;
                  quantize.quantType = nn::QuantType::Int8;
                  o.quantize = quantize;
                });
    }
  }
  // One GPU's job over 2, 4 or 8 GPUs: the fewest that fit, else the most
  // that help. `layout` sets the layout over `ranks` and returns the batch
  // to build at, or nullopt when it does not apply.
  auto trySplit =
      [&](llvm::function_ref<std::optional<int64_t>(PipelineOptions &,
                                                    int64_t ranks)>
              layout,
          llvm::function_ref<Change(int64_t ranks, int64_t needs)> describe) {
        std::optional<Change> split;
        for (int64_t ranks : {2, 4, 8}) {
          PipelineOptions changed = options;
          changed.parallel = ParallelOptions();
          std::optional<int64_t> batch = layout(changed, ranks);
          if (!batch)
            continue;
          FailureOr<int64_t> needs = measureModel(source, changed, *batch);
          if (failed(needs) || *needs >= used)
            continue;
          split = describe(ranks, *needs);
          if (*needs <= limit)
            break;
        }
        syncModelSource(source, options);
        if (split)
          changes.push_back(*split);
      };
  // Tensor parallelism, for a model whose front end splits its layers (a
  // build that cannot, or whose heads a group does not divide, does not
  // measure).
  if (!options.parallel && source.canVarySequence())
    trySplit(
        [&](PipelineOptions &o, int64_t ranks) -> std::optional<int64_t> {
          o.parallel->tp = ranks;
          return *current;
        },
        [](int64_t ranks, int64_t needs) {
          return Change{"--parallel=tp=" + std::to_string(ranks),
                        "tensor parallelism over " + std::to_string(ranks) +
                            " GPUs, each holding its share",
                        needs};
        });
  // Training: the repeated blocks in pipeline stages (one a GPU, 1F1B), the
  // same samples per step in as many micro-batches; a stage calls its
  // layers without a cache.
  if (!options.parallel && !generating && source.canRebuild())
    trySplit(
        [&](PipelineOptions &o, int64_t stages) -> std::optional<int64_t> {
          if (*current % stages != 0)
            return std::nullopt;
          o.parallel->pp = stages;
          o.parallel->microbatches = stages;
          o.useCache = false;
          return *current / stages;
        },
        [&](int64_t stages, int64_t needs) {
          return Change{llvm::formatv("--parallel=pp={0} --batch={1} "
                                      "--microbatches={0}",
                                      stages, *current / stages)
                            .str(),
                        "pipeline parallelism over " + std::to_string(stages) +
                            " GPUs, the same samples per step",
                        needs};
        });
  // Training: its state, its activations, its precision.
  if (!generating) {
    // The same samples per update in smaller micro-batches.
    for (int64_t split : {2, 4})
      if (*current % split == 0 && source.canRebuild()) {
        int64_t accum = options.step.gradAccum * split;
        tryChangeAt(*current / split,
                    "--batch=" + llvm::Twine(*current / split) +
                        " --grad-accum=" + llvm::Twine(accum),
                    llvm::Twine(*current * options.step.gradAccum) +
                        " samples per update, as now",
                    [&](PipelineOptions &o) { o.step.gradAccum = accum; });
      }
    // FSDP with the root as its only unit gathers the whole model at once:
    // a unit per repeated block gathers one block at a time.
    if (options.parallel && options.parallel->fsdp > 1 &&
        options.parallel->shard.empty()) {
      SmallVector<std::string> blocks = repeatedBlocks();
      if (!blocks.empty())
        tryChange("--shard=" + llvm::join(blocks, ","),
                  "fully_shard each repeated block", [&](PipelineOptions &o) {
                    o.parallel->shard.assign(blocks.begin(), blocks.end());
                  });
    }
    // DDP's replicas: DeepSpeed's ZeRO partitions the optimizer state (1),
    // the gradients (2) and the parameters (3) over them instead.
    if (options.parallel && options.parallel->dp > 1 &&
        options.parallel->fsdp == 1 && options.parallel->tp == 1)
      for (int64_t stage = options.parallel->zero + 1; stage <= 3; ++stage)
        tryChange("--strategy=zero" + llvm::Twine(stage),
                  stage == 1   ? "DeepSpeed ZeRO-1: optimizer state partitioned"
                  : stage == 2 ? "DeepSpeed ZeRO-2: optimizer state and "
                                 "gradients partitioned"
                               : "DeepSpeed ZeRO-3: parameters partitioned too",
                  [&](PipelineOptions &o) {
                    o.parallel->zero = stage;
                    o.parallel->overlapComm &= stage < 3;
                  });
    // A pipeline: GPipe holds every micro-batch's activations at once, 1F1B
    // at most as many as there are stages; the same samples per step in
    // smaller micro-batches, more of them.
    if (options.parallel && options.parallel->pp > 1) {
      int64_t stages = options.parallel->pp;
      int64_t microbatches = options.parallel->microbatches
                                 ? options.parallel->microbatches
                                 : stages;
      if (options.parallel->ppSchedule == "gpipe" && microbatches >= stages)
        tryChange("--pp-schedule=1f1b",
                  "1F1B holds at most " + llvm::Twine(stages) +
                      " micro-batches' activations on a stage",
                  [](PipelineOptions &o) { o.parallel->ppSchedule = "1f1b"; });
      // Interleaving trades memory for a smaller bubble: its warm-up runs
      // (stages per rank - 1) rounds of forwards more than 1F1B's before
      // the first backward. (Explicit --pp-layers count its stages.)
      bool interleaved = options.parallel->ppSchedule == "interleaved-1f1b";
      if (interleaved && microbatches >= stages &&
          options.parallel->ppLayers.empty())
        tryChange("--pp-schedule=1f1b",
                  "one stage a rank: 1F1B holds at most " +
                      llvm::Twine(stages) + " micro-batches' activations",
                  [](PipelineOptions &o) {
                    o.parallel->ppSchedule = "1f1b";
                    o.parallel->ppStagesPerRank = 0;
                  });
      // ScheduleInterleaved1F1B needs micro-batches that are a multiple of
      // its rounds, max(1, M / stages).
      auto runs = [&](int64_t m) {
        return !interleaved || m % std::max<int64_t>(1, m / stages) == 0;
      };
      for (int64_t split : {2, 4})
        if (*current % split == 0 && source.canRebuild() &&
            runs(microbatches * split))
          tryChangeAt(
              *current / split,
              "--batch=" + llvm::Twine(*current / split) +
                  " --microbatches=" + llvm::Twine(microbatches * split),
              llvm::Twine(*current * microbatches) +
                  " samples per step, as now",
              [&](PipelineOptions &o) {
                o.parallel->microbatches = microbatches * split;
              });
    }
    // DDP: .grad as a view into its bucket instead of a second copy.
    if (options.parallel && options.parallel->zero == 0 &&
        !options.parallel->bucketView)
      tryChange("--gradient-as-bucket-view", "DDP's .grad views its bucket",
                [](PipelineOptions &o) { o.parallel->bucketView = true; });
    // Tensor parallelism with lm_head split: the logits left sharded for
    // the loss (torch's loss_parallel()), and the embedding split over the
    // vocabulary as well.
    bool lmHeadSplit = options.parallel && options.parallel->tp > 1 &&
                       options.tensorParallelLmHead;
    if (lmHeadSplit && !options.step.lossParallel && !options.step.keepOutput &&
        (options.step.loss == nn::LossKind::CrossEntropy ||
         options.step.loss == nn::LossKind::CausalLm))
      tryChange("--loss-parallel",
                "torch's loss_parallel(): the logits stay sharded over the "
                "vocabulary",
                [](PipelineOptions &o) { o.step.lossParallel = true; });
    if (lmHeadSplit && !options.tensorParallelEmbedding)
      tryChange("--tp-plan=vocab",
                "the embedding split over the vocabulary too",
                [](PipelineOptions &o) { o.tensorParallelEmbedding = true; });
    // Sequence parallelism under transformers' plan (the front end refuses
    // the layouts it does not model; so does measureModel then).
    if (lmHeadSplit && !options.sequenceParallel &&
        !options.tensorParallelEmbedding && !options.step.lossParallel &&
        !generating)
      tryChange("--parallel=" + getParallelSpec(*options.parallel) + ",sp",
                "sequence parallelism: the norms and residuals over the "
                "positions",
                [](PipelineOptions &o) { o.sequenceParallel = true; });
    if (options.getImplementation() != nn::OptimizerImpl::Fused)
      tryChange("--optimizer-impl=fused", "", [](PipelineOptions &o) {
        o.implementation = nn::OptimizerImpl::Fused;
      });
    // Adam's two fp32 moments (8 bytes a parameter) in 8 bits (2 bytes and
    // a scale per 256).
    if (options.step.optimizer == nn::OptimizerKind::Adam ||
        options.step.optimizer == nn::OptimizerKind::AdamW)
      tryChange("--optimizer=adamw8bit", "bitsandbytes' 8-bit AdamW",
                [](PipelineOptions &o) {
                  o.step.optimizer = nn::OptimizerKind::AdamW8bit;
                  o.implementation.reset();
                });
    // Its large states in CUDA unified memory, which pages out to the host
    // rather than failing.
    if ((options.step.optimizer == nn::OptimizerKind::Adam ||
         options.step.optimizer == nn::OptimizerKind::AdamW ||
         options.step.optimizer == nn::OptimizerKind::AdamW8bit) &&
        options.step.device == nn::Device::Cuda && !options.parallel)
      tryChange("--optimizer=paged-adamw8bit",
                "bitsandbytes' paged 8-bit AdamW, its large states in "
                "unified memory",
                [](PipelineOptions &o) {
                  o.step.optimizer = nn::OptimizerKind::PagedAdamW8bit;
                  o.implementation.reset();
                });
    // QLoRA: the frozen base weights of a LoRA model in 4 bits (about half
    // a byte a weight instead of two or four).
    if (options.lora && !options.quantize && !autocast && !options.parallel &&
        options.step.torchVersion == nn::TorchVersion::V2)
      tryChange("--quantize=nf4 --double-quant", "QLoRA: 4-bit base weights",
                useNf4DoubleQuant);
    // Each gradient freed by its update, inside backward.
    if (!options.step.optimizerInBackward && options.step.setToNone &&
        options.step.gradAccum == 1 && !options.parallel)
      tryChange("--optimizer-in-backward",
                "each gradient freed after its update",
                [](PipelineOptions &o) { o.step.optimizerInBackward = true; });
    bool ligerParallel = isLigerModelledWith(options.parallel);
    // A language model's lm_head and loss as Liger's fused linear
    // cross-entropy: no [tokens, vocab] logits, nor their float32 copy (a
    // model whose output is not a bias-free linear does not build).
    if ((options.step.loss == nn::LossKind::CausalLm ||
         step->hasAttr(nn::NNDialect::kSequenceLogitsAttrName)) &&
        !autocast && ligerParallel && !options.step.keepOutput)
      tryChange("--loss=fused_linear_cross_entropy",
                "Liger-Kernel's: no [tokens, vocab] logits",
                [](PipelineOptions &o) {
                  o.step.loss = nn::LossKind::FusedLinearCrossEntropy;
                });
    // Liger-Kernel's kernels in a LLaMA-layout decoder (Trainer's
    // use_liger_kernel=True): its RMSNorm, SwiGLU and RoPE keep less for
    // backward and its fused loss makes no logits (other models do not
    // build with them).
    if (!options.liger.any() &&
        (options.step.loss == nn::LossKind::CausalLm ||
         options.step.loss == nn::LossKind::FusedLinearCrossEntropy ||
         step->hasAttr(nn::NNDialect::kSequenceLogitsAttrName)) &&
        !autocast && ligerParallel && !options.step.keepOutput)
      tryChange("--liger=all",
                "Liger-Kernel's RMSNorm, SwiGLU, RoPE and fused loss",
                [&](PipelineOptions &o) {
                  o.liger.rmsNorm = o.liger.swiglu = o.liger.rope = true;
                  if (o.step.device == nn::Device::Cuda)
                    o.liger.rmsNormPartialRows =
                        o.memoryModel.getDevice().multiprocessors;
                  o.step.loss = nn::LossKind::FusedLinearCrossEntropy;
                });
    if (options.precision == nn::Precision::Fp32 &&
        options.step.device == nn::Device::Cuda)
      tryChange("--precision=amp-fp16", "", [](PipelineOptions &o) {
        o.precision = nn::Precision::AmpFp16;
      });
    if (options.freezePatterns.empty() && options.freezeFirst == 0 &&
        !options.lora)
      tryChange("--freeze-first=0.5", "freezing the first half of the modules",
                [](PipelineOptions &o) { o.freezeFirst = 0.5; });
    // transformers' DynamicCache in training: copies of the keys and
    // values that saving views would avoid (GPT-2's fused c_attn).
    if (options.useCache && options.checkpointModules.empty())
      tryChange("--use-cache=false",
                "model(..., use_cache=False): no DynamicCache copies of the "
                "keys and values",
                [](PipelineOptions &o) { o.useCache = false; });
    if (options.checkpointModules.empty()) {
      // '*': each repeated block (vram-checkpoint), else every top-level
      // module.
      SmallVector<std::string> blocks = repeatedBlocks();
      tryChange("--checkpoint='*'",
                blocks.empty() ? "checkpointing every top-level module"
                               : "checkpointing each repeated block: " +
                                     llvm::join(blocks, ", "),
                [](PipelineOptions &o) { o.checkpointModules = {"*"}; });
    }
  }
  llvm::stable_sort(changes, [](const Change &a, const Change &b) {
    return a.used < b.used;
  });
  for (const Change &change : changes)
    finding.changes.push_back({change.flags, change.reason, change.used});
  bool anyFits = false;
  for (const Change &change : changes)
    if (change.used <= limit) {
      anyFits = true;
      emitRemark(loc) << change.spelled() << " needs "
                      << formatByteSize(change.used) << ": fits";
    }
  if (!anyFits && !changes.empty())
    emitRemark(loc) << "no single change fits at batch size " << *current
                    << "; the one that saves most is "
                    << changes.front().spelled() << " (needs "
                    << formatByteSize(changes.front().used) << ")";
}

LogicalResult vram::lintBudget(ModuleOp module, const PipelineOptions &options,
                               ModelSource *source,
                               std::optional<BudgetFinding> *findingOut) {
  assert(options.budget && "the lint needs a budget");
  FailureOr<func::FuncOp> step = getMeasuredFunction(module);
  if (failed(step))
    return failure();
  std::unique_ptr<StepMemory> memory = computeStepMemory(module, options);
  if (!memory)
    return failure();
  BudgetMetric metric = options.getBudgetMetric();
  int64_t used = memory->get(metric);
  int64_t limit = *options.budget;
  BudgetFinding finding;
  finding.budget = limit;
  finding.used = used;
  finding.metric = stringifyBudgetMetric(metric).str();
  LogicalResult fits = checkBudget(*step, memory->getAnalysis(), used, limit,
                                   stringifyBudgetMetric(metric));
  if (failed(fits) && source && source->canRebuild())
    suggestFixes(*step, memory->getAnalysis(), used, options, *source, finding);
  if (findingOut)
    *findingOut = std::move(finding);
  if (failed(fits))
    return failure();
  llvm::errs() << llvm::formatv("within budget: {0} of {1} ({2}), margin {3}\n",
                                formatByteSize(used), formatByteSize(limit),
                                stringifyBudgetMetric(metric),
                                formatByteSize(limit - used));
  return success();
}
