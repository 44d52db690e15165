//===- Run.cpp - one model through the pipeline to its outputs ------------===//

#include "vram/Pipeline/Run.h"
#include "vram/Analysis/StepInfo.h"
#include "vram/Dialect/NN/NNDialect.h"
#include "vram/Lint/Budget.h"
#ifdef VRAM_ENABLE_EXECUTION
#include "vram/Execution/CpuRunner.h"
#endif
#ifdef VRAM_ENABLE_CUDA_RUNTIME
#include "vram/Execution/GpuRunner.h"
#endif

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/BuryPointer.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
using namespace vram;

llvm::Error vram::runModel(ModelSource &source, const RunOptions &options,
                           llvm::raw_ostream &os) {
  TimingScope untimed;
  return runModel(source, options, os, untimed);
}

llvm::Error vram::runModel(ModelSource &source, const RunOptions &options,
                           llvm::raw_ostream &os, TimingScope &timing) {
  syncModelSource(source, options.pipeline);
  TimingScope buildTiming = timing.nest("Build model");
  llvm::Expected<OwningOpRef<ModuleOp>> module = source.build(std::nullopt);
  buildTiming.stop();
  if (!module)
    return module.takeError();
  llvm::Error result = processModule(**module, source, options, os, timing);
  if (!options.freeModule)
    llvm::BuryPointer(module->release().getOperation());
  return result;
}

#ifdef VRAM_ENABLE_EXECUTION
/// The values the executed step starts from: the model file's parameters.
static llvm::StringMap<NpyArray> getInitialValues(ModelSource &source) {
  llvm::StringMap<ParameterValue> values;
  llvm::StringMap<NpyArray> initial;
  if (llvm::Error error = source.readParameterValues(values)) {
    llvm::consumeError(std::move(error));
    return initial;
  }
  for (auto &entry : values) {
    NpyArray &array = initial[entry.getKey()];
    array.descr = entry.getValue().descr;
    array.shape = entry.getValue().shape;
    array.data = std::move(entry.getValue().bytes);
  }
  return initial;
}

/// The note at the op where the executed step first differs.
static void noteFirstMismatch(InFlightDiagnostic &diag, func::FuncOp step,
                              unsigned op, llvm::StringRef opName,
                              int64_t measured, int64_t predicted,
                              llvm::StringRef what) {
  diag.attachNote(MemoryAnalysis(step).getOp(op)->getLoc())
      << "first difference at op " << op << " (" << opName << "): measured "
      << measured << " bytes " << what << ", predicted " << predicted;
}

/// --validate=cpu / gpu-emulated.
static LogicalResult validateOnHost(ModuleOp module, const RunOptions &options,
                                    ModelSource &source,
                                    ValidationFinding &finding,
                                    bool &disagrees) {
  const ValidationOptions &validation = options.validation;
  bool emulated = validation.target == ValidationTarget::GpuEmulated;
  CpuValidationOptions run;
  if (emulated)
    run.loops = CpuValidationOptions::Loops::GpuKernels;
  run.lowering.lr = validation.learningRate;
  run.allocationMode = validation.compilerAllocation ? AllocationMode::Compiler
                                                     : AllocationMode::PyTorch;
  run.dumpDir = validation.dumpDir;
  for (const auto &entry : validation.inputFiles)
    run.inputFiles[entry.getKey()] = entry.getValue();
  run.initialValues = getInitialValues(source);
  FailureOr<CpuValidationResult> result = validateOnCpu(module, run);
  if (failed(result))
    return failure();
  finding.device = emulated ? "gpu-emulated" : "cpu";
  finding.allocationMode =
      validation.compilerAllocation ? "compiler" : "pytorch";
  finding.measuredPeakBytes = result->measuredPeakBytes;
  finding.predictedPeakBytes = result->predictedPeakBytes;
  finding.allocations = result->allocations;
  finding.loss = result->loss;
  finding.wallSeconds = result->wallSeconds;
  for (const PhaseComparison &p : result->phases)
    finding.phases.push_back({nn::stringifyEnum(p.phase).str(),
                              p.measuredPeakBytes, p.predictedPeakBytes});
  // The compiler mode measures a different policy: no equality expected.
  if (validation.compilerAllocation ||
      (result->measuredPeakBytes == result->predictedPeakBytes &&
       !result->firstMismatchOp))
    return success();
  disagrees = true;
  auto step = module.lookupSymbol<func::FuncOp>("step");
  InFlightDiagnostic diag = emitError(step.getLoc());
  if (result->measuredPeakBytes != result->predictedPeakBytes)
    diag << "validation: measured peak " << result->measuredPeakBytes
         << " bytes, predicted " << result->predictedPeakBytes
         << " bytes: the executed step and the memory analysis disagree";
  else
    diag << "validation: the peaks agree (" << result->measuredPeakBytes
         << " bytes) but the live bytes of an op differ: the executed step "
            "and the memory analysis disagree";
  if (result->firstMismatchOp)
    noteFirstMismatch(diag, step, *result->firstMismatchOp,
                      result->firstMismatchOpName, result->mismatchMeasured,
                      result->mismatchPredicted, "live");
  return success();
}
#endif

#ifdef VRAM_ENABLE_CUDA_RUNTIME
/// --validate=gpu.
static LogicalResult validateOnDevice(ModuleOp module,
                                      const RunOptions &options,
                                      ModelSource &source,
                                      ValidationFinding &finding,
                                      bool &disagrees) {
  const ValidationOptions &validation = options.validation;
  GpuValidationOptions run;
  run.step.lowering.lr = validation.learningRate;
  for (const auto &entry : validation.inputFiles)
    run.step.inputFiles[entry.getKey()] = entry.getValue();
  run.step.initialValues = getInitialValues(source);
  run.step.dumpDir = validation.dumpDir;
  run.lowering.chip = validation.gpuArch;
  run.lowering.format = validation.cubin ? "bin" : "isa";
  run.deviceOrdinal = validation.deviceOrdinal;
  run.flopConvention = options.report.flops;
  // The context the device model predicts (--gpu, --cuda-lazy-loading,
  // --context-bytes), on any allocator choice.
  run.predictedContextBytes =
      options.pipeline.memoryModel.getDevice().contextBytes;
  std::string noDevice;
  FailureOr<GpuValidationResult> result = validateOnGpu(module, run, noDevice);
  if (!noDevice.empty()) {
    llvm::WithColor::error(llvm::errs(), "vram-opt")
        << "no CUDA device: " << noDevice << "\n";
    return failure();
  }
  if (failed(result))
    return failure();
  finding.device = "gpu";
  finding.allocationMode = "pytorch";
  finding.measuredPeakBytes = result->measuredAllocatedBytes;
  finding.predictedPeakBytes = result->predictedAllocatedBytes;
  finding.allocations = result->allocations;
  finding.loss = result->loss;
  finding.wallSeconds = result->wallSeconds;
  GpuValidationFinding g;
  g.deviceName = result->deviceName;
  g.arch = result->arch;
  g.measuredAllocatedBytes = result->measuredAllocatedBytes;
  g.predictedAllocatedBytes = result->predictedAllocatedBytes;
  g.measuredReservedBytes = result->measuredReservedBytes;
  g.predictedReservedBytes = result->predictedReservedBytes;
  g.measuredDeviceBytes = result->measuredDeviceBytes;
  g.predictedDeviceBytes = result->predictedDeviceBytes;
  g.deviceUsedBeforeBytes = result->deviceUsedBeforeBytes;
  g.deviceUsedPeakBytes = result->deviceUsedPeakBytes;
  g.kernels = result->kernels;
  g.launches = result->launches;
  g.stepMs = result->stepMs;
  g.flops = result->flops;
  g.achievedFlopsPerSecond = result->achievedFlopsPerSecond;
  finding.gpu = g;
  // Allocated and reserved follow from the same allocator decisions over the
  // same alloc/free stream: any difference is a bug. The device figure
  // depends on the driver (context size): reported, not checked.
  if (result->measuredAllocatedBytes == result->predictedAllocatedBytes &&
      result->measuredReservedBytes == result->predictedReservedBytes &&
      !result->firstMismatchOp)
    return success();
  disagrees = true;
  auto step = module.lookupSymbol<func::FuncOp>("step");
  InFlightDiagnostic diag = emitError(step.getLoc());
  diag << "validation: measured allocated " << result->measuredAllocatedBytes
       << " / reserved " << result->measuredReservedBytes
       << " bytes, predicted " << result->predictedAllocatedBytes << " / "
       << result->predictedReservedBytes
       << ": the executed step and the memory analysis disagree";
  if (result->firstMismatchOp)
    noteFirstMismatch(diag, step, *result->firstMismatchOp,
                      result->firstMismatchOpName, result->mismatchMeasured,
                      result->mismatchPredicted, "allocated");
  return success();
}
#endif

LogicalResult vram::validateStep(ModuleOp module, const RunOptions &options,
                                 ModelSource &source,
                                 ValidationFinding &finding, bool &disagrees) {
  switch (options.validation.target) {
  case ValidationTarget::None:
    return success();
  case ValidationTarget::Cpu:
  case ValidationTarget::GpuEmulated:
#ifdef VRAM_ENABLE_EXECUTION
    return validateOnHost(module, options, source, finding, disagrees);
#else
    return module.emitError("built without the execution engine");
#endif
  case ValidationTarget::Gpu:
#ifdef VRAM_ENABLE_CUDA_RUNTIME
    return validateOnDevice(module, options, source, finding, disagrees);
#else
    return module.emitError("built without the CUDA runtime");
#endif
  }
  llvm_unreachable("unknown validation target");
}

static ReportFormat getReportFormat(OutputFormat format) {
  switch (format) {
  case OutputFormat::Json:
    return ReportFormat::Json;
  case OutputFormat::Markdown:
    return ReportFormat::Markdown;
  case OutputFormat::Sarif:
    return ReportFormat::Sarif;
  case OutputFormat::Html:
    return ReportFormat::Html;
  case OutputFormat::Text:
  case OutputFormat::Mlir:
    return ReportFormat::Text;
  }
  llvm_unreachable("unknown format");
}

/// Under pipeline parallelism the stages run different steps: each one
/// other than the step's is built again from `source` and measured, for
/// the report's `ranks`.
static llvm::Error measureOtherStages(ModuleOp module, ModelSource &source,
                                      const RunOptions &options,
                                      std::vector<RankFigures> &ranks) {
  const PipelineOptions &pipeline = options.pipeline;
  auto step = module.lookupSymbol<func::FuncOp>("step");
  auto layout = step ? step->getAttrOfType<nn::ParallelAttr>(
                           nn::NNDialect::kParallelAttrName)
                     : nullptr;
  if (!layout || layout.getPp() < 2 || !pipeline.parallel)
    return llvm::Error::success();
  for (int64_t stage = 0; stage < layout.getPp(); ++stage) {
    if (stage == layout.getPpStage())
      continue;
    PipelineOptions stageOptions = pipeline;
    stageOptions.buildStep = true;
    stageOptions.parallel->ppStage = stage;
    syncModelSource(source, stageOptions);
    llvm::Expected<OwningOpRef<ModuleOp>> built = source.build(options.batch);
    if (!built)
      return built.takeError();
    if (llvm::Error error = runPipeline(**built, stageOptions))
      return error;
    std::unique_ptr<StepMemory> memory =
        computeStepMemory(**built, stageOptions);
    if (!memory)
      return makeDiagnosedError();
    ranks.push_back(collectRankFigures(**built, *memory, stage));
  }
  return llvm::Error::success();
}

llvm::Error vram::processModule(ModuleOp module, ModelSource &source,
                                const RunOptions &options,
                                llvm::raw_ostream &os, TimingScope &timing) {
  const PipelineOptions &pipeline = options.pipeline;
  // --batch must have bound the model's batch dimension: a model whose batch
  // is static and different (or that has none) cannot apply it.
  if (options.batch)
    if (auto forward = module.lookupSymbol<func::FuncOp>("forward")) {
      std::optional<int64_t> modelBatch = getBatchSize(forward);
      if (modelBatch != options.batch)
        return makeUsageError(llvm::formatv(
            "--batch={0} does not apply: the model's batch dimension is {1}",
            *options.batch,
            modelBatch ? std::to_string(*modelBatch) : std::string("absent")));
    }
  {
    TimingScope passTiming = timing.nest("Pipeline");
    if (llvm::Error error = runPipeline(module, pipeline, passTiming))
      return error;
  }
  std::optional<BudgetFinding> budget;
  TimingScope budgetTiming = timing.nest("Budget");
  bool overBudget =
      pipeline.budget && failed(lintBudget(module, pipeline, &source, &budget));
  budgetTiming.stop();
  ReportOptions report = options.report;
  report.modelName = source.getName().str();
  if (auto name =
          module->getAttrOfType<StringAttr>(nn::NNDialect::kModelAttrName))
    report.modelName = name.str();
  report.inputPath = source.getInputPath().str();
  report.importFindings.assign(source.getFindings().begin(),
                               source.getFindings().end());
  report.budget = std::move(budget);
  if (options.format != OutputFormat::Mlir)
    if (llvm::Error error =
            measureOtherStages(module, source, options, report.otherRanks))
      return error;
  bool validationFailed = false;
  if (options.validation.target != ValidationTarget::None) {
    TimingScope validationTiming = timing.nest("Validation");
    ValidationFinding finding;
    if (failed(
            validateStep(module, options, source, finding, validationFailed)))
      return makeDiagnosedError();
    report.validation = finding;
  }
  llvm::Error verdict = toError(failure(overBudget || validationFailed));
  TimingScope outputTiming = timing.nest("Output");
  if (!options.traceFile.empty()) {
    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> trace =
        openOutputFile(options.traceFile, &error);
    if (!trace)
      return llvm::joinErrors(std::move(verdict), makeUsageError(error));
    if (failed(writeTrace(module, report, trace->os())))
      return llvm::joinErrors(std::move(verdict), makeDiagnosedError());
    trace->keep();
  }
  if (options.format == OutputFormat::Mlir) {
    // A lint, trace or validation run prints its output, not IR, unless IR
    // was asked for.
    if (report.validation && !options.formatGiven)
      writeValidationText(*report.validation, os);
    else if ((!pipeline.budget && options.traceFile.empty()) ||
             options.formatGiven) {
      module.print(os);
      os << "\n";
    }
    return verdict;
  }
  if (failed(writeReport(module, report, getReportFormat(options.format), os)))
    return llvm::joinErrors(std::move(verdict), makeDiagnosedError());
  return verdict;
}
