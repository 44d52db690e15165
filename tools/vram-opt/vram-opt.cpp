//===- vram-opt.cpp - the vram-opt driver ---------------------------------===//
//
// An mlir-opt style driver over lib/Pipeline: reads a model (.mlir, .onnx, a
// C++ source or a built-in zoo model), runs a pass pipeline and prints IR,
// or a report when --format is given. The flags are the library's
// (vram/Pipeline/CommandLine.h); this file reads the input and maps errors
// to exit codes.
//
// Exit codes: 0 success, 1 invalid IR or a failed pass/analysis (over budget,
// a validation that disagrees), 2 a usage error (bad option value, missing
// file, unknown zoo model, an option that does not apply to the model).
//
//===----------------------------------------------------------------------===//

#include "vram/Analysis/Passes.h"
#include "vram/Conversion/NNToTensor.h"
#include "vram/Dialect/NN/NNDialect.h"
#include "vram/Lint/Budget.h"
#include "vram/Pipeline/CommandLine.h"
#include "vram/Pipeline/Diagnostics.h"
#include "vram/Support/ParseLimits.h"
#include "vram/Transforms/Passes.h"
#include "vram/Zoo/Zoo.h"
#ifdef VRAM_ENABLE_ONNX
#include "vram/Import/ONNX.h"
#endif
#ifdef VRAM_ENABLE_EXECUTION
#include "vram/Execution/CpuRunner.h"
#include "vram/Execution/GpuLowering.h"
#include "vram/Execution/Passes.h"
#endif
#ifdef VRAM_ENABLE_CUDA_RUNTIME
#include "vram/Execution/CudaRuntime.h"
#endif

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Support/ToolUtilities.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

#ifndef VRAM_OPT_VERSION
#define VRAM_OPT_VERSION "0.2.0"
#endif

using namespace mlir;
namespace cl = llvm::cl;

namespace {
cl::opt<std::string> inputFilename(
    cl::Positional,
    cl::desc("<model file: .mlir, .onnx or C++ (LibTorch); - reads stdin>"),
    cl::init("-"));
cl::opt<std::string> outputFilename("o", cl::desc("Output filename"),
                                    cl::value_desc("filename"), cl::init("-"));
cl::opt<bool>
    splitInputFile("split-input-file",
                   cl::desc("Process each chunk of the input separately"),
                   cl::init(false));
cl::opt<bool>
    verifyDiagnostics("verify-diagnostics",
                      cl::desc("Check expected-* diagnostics in the input"),
                      cl::init(false));

/// The exit code of `error`: 2 for a usage error (printed here), else 1
/// (already reported through MLIR diagnostics).
int exitCodeOf(llvm::Error error) {
  int code = 0;
  llvm::handleAllErrors(
      std::move(error),
      [&](const vram::UsageError &usage) {
        llvm::WithColor::error(llvm::errs(), "vram-opt")
            << usage.message() << "\n";
        code = 2;
      },
      [&](const vram::DiagnosedError &) { code = std::max(code, 1); });
  return code;
}

[[noreturn]] void usageError(const llvm::Twine &message) {
  std::exit(exitCodeOf(vram::makeUsageError(message)));
}

/// Parses and processes one .mlir buffer (one chunk with --split-input-file).
LogicalResult processMlirBuffer(std::unique_ptr<llvm::MemoryBuffer> buffer,
                                llvm::raw_ostream &os,
                                const DialectRegistry &registry,
                                const vram::RunOptions &options,
                                TimingScope &timing) {
  MLIRContext context(registry);
  context.allowUnregisteredDialects(false);
  auto sourceMgr = std::make_shared<llvm::SourceMgr>();
  sourceMgr->AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  auto run = [&]() -> LogicalResult {
    TimingScope parserTiming = timing.nest("Parser");
    // MLIR's parser recurses per nesting level: too deep a file would
    // overflow the stack instead of getting an error.
    const llvm::MemoryBuffer *text =
        sourceMgr->getMemoryBuffer(sourceMgr->getMainFileID());
    if (std::optional<size_t> at = vram::findExcessiveNesting(
            text->getBuffer(), vram::kMaxMlirNestingDepth)) {
      auto [line, column] = sourceMgr->getLineAndColumn(
          llvm::SMLoc::getFromPointer(text->getBufferStart() + *at));
      return emitError(FileLineColLoc::get(
                 &context, text->getBufferIdentifier(), line, column))
             << "brackets nested more than " << vram::kMaxMlirNestingDepth
             << " levels deep";
    }
    OwningOpRef<ModuleOp> module =
        parseSourceFile<ModuleOp>(*sourceMgr, &context);
    parserTiming.stop();
    if (!module)
      return failure();
    std::unique_ptr<vram::ModelSource> source = vram::createModuleSource(
        std::move(module), llvm::sys::path::stem(inputFilename).str(),
        inputFilename);
    int code = exitCodeOf(vram::runModel(*source, options, os, timing));
    if (code == 2)
      std::exit(2);
    return failure(code != 0);
  };
  // One clear error: a failing pass's diagnostic names its location, not
  // the whole step it ran on.
  context.printOpOnDiagnostic(false);
  if (!verifyDiagnostics) {
    SourceMgrDiagnosticHandler handler(*sourceMgr, &context);
    vram::NamedLocationDiagnostics named(&context, inputFilename);
    return run();
  }
  SourceMgrDiagnosticVerifierHandler handler(*sourceMgr, &context);
  (void)run();
  return handler.verify();
}

#ifdef VRAM_ENABLE_CUDA_RUNTIME
int listCudaDevices() {
  llvm::Expected<std::vector<vram::CudaDeviceInfo>> devices =
      vram::listCudaDevices();
  if (!devices) {
    llvm::WithColor::error(llvm::errs(), "vram-opt")
        << "no CUDA device: " << toString(devices.takeError()) << "\n";
    return 1;
  }
  for (const vram::CudaDeviceInfo &d : *devices)
    llvm::outs() << llvm::formatv(
        "{0}: {1} (sm_{2}{3}, {4} MiB, driver {5}.{6})\n", d.ordinal, d.name,
        d.major, d.minor, d.totalBytes >> 20, d.driverVersion / 1000,
        d.driverVersion % 1000 / 10);
  return 0;
}
#endif

/// Rewrites argv: --help-mlir becomes --help with MLIR's options shown, and
/// the compile flags of a C++ model (after `--`) move to `cxxFlags`.
std::vector<char *> splitArguments(int argc, char **argv, bool &helpMlir,
                                   std::vector<std::string> &cxxFlags) {
  static std::string helpFlag = "--help";
  std::vector<char *> args(argv, argv + argc);
  for (char *&arg : args)
    if (llvm::StringRef(arg) == "--help-mlir" ||
        llvm::StringRef(arg) == "-help-mlir") {
      arg = helpFlag.data();
      helpMlir = true;
    }
  for (auto it = args.begin(); it != args.end(); ++it)
    if (llvm::StringRef(*it) == "--") {
      cxxFlags.assign(it + 1, args.end());
      args.erase(it, args.end());
      break;
    }
  return args;
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  vram::registerVramPasses();
  vram::registerVramAnalysisPasses();
  vram::registerVramConversionPasses();
#ifdef VRAM_ENABLE_EXECUTION
  vram::registerVramExecutionPasses();
  vram::registerLowerToGpuPipeline();
#endif
#ifdef VRAM_ENABLE_ONNX
  vram::onnx_import::registerPasses();
#endif
  vram::registerVramOptCLOptions();
  PassPipelineCLParser passPipeline("", "Compiler passes to run");

  // --help shows vram-opt's own options by group; --help-mlir also the MLIR
  // and LLVM ones (pass pipelines, IR printing, debugging).
  bool helpMlir = false;
  std::vector<std::string> cxxFlags;
  std::vector<char *> args = splitArguments(argc, argv, helpMlir, cxxFlags);
  if (!helpMlir)
    cl::HideUnrelatedOptions(vram::getVramOptCLCategories());
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "vram-opt " << VRAM_OPT_VERSION
       << ": GPU memory and FLOPs of models, built on MLIR\n";
    os << "  LLVM/MLIR " << LLVM_VERSION_STRING << "\n";
  });
  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  if (!cl::ParseCommandLineOptions(
          args.size(), args.data(),
          "vram-opt: GPU memory and FLOPs of models\n\n"
          "  --help-mlir also lists MLIR's options "
          "(pass pipelines, IR printing)\n",
          &errorStream)) {
    llvm::errs() << errors;
    return 2;
  }
  llvm::Expected<vram::RunOptions> options = vram::getRunOptionsFromCommandLine(
      inputFilename, inputFilename.getNumOccurrences() > 0, cxxFlags,
      passPipeline.hasAnyOccurrences() || verifyDiagnostics);
  if (!options)
    return exitCodeOf(options.takeError());
  // One model per process: leave its module for the exit to reclaim.
  options->freeModule = !splitInputFile;
#ifdef VRAM_ENABLE_CUDA_RUNTIME
  if (vram::isCudaDeviceListRequested())
    return listCudaDevices();
#endif

  DialectRegistry registry;
  registry.insert<vram::nn::NNDialect, func::FuncDialect>();
#ifdef VRAM_ENABLE_EXECUTION
  vram::registerExecutionDialects(registry);
#else
  vram::registerLowerToTensorInterfaces(registry);
#endif
  vram::ModelKind kind = vram::getModelKind(inputFilename);
  // Without a model there is nothing to analyze: standard input is read only
  // when asked for with `-`, so that a bare `vram-opt` does not wait.
  if (kind != vram::ModelKind::Zoo && kind != vram::ModelKind::ZooList &&
      kind != vram::ModelKind::HuggingFace &&
      !inputFilename.getNumOccurrences()) {
    llvm::errs() << "usage: vram-opt MODEL [options]   (MODEL: a .mlir, .onnx "
                    "or C++ file, or - for standard input)\n"
                    "       vram-opt --zoo=NAME [options]   (--zoo=list lists "
                    "the built-in models)\n"
                    "       vram-opt --hf=CONFIG [options]   (a Hugging Face "
                    "config.json or its directory)\n"
                    "See vram-opt --help.\n";
    return 2;
  }
  if (kind == vram::ModelKind::ZooList) {
    for (const vram::zoo::ZooModelInfo &info : vram::zoo::listModels())
      llvm::outs() << llvm::formatv("{0,-16} {1}\n", info.name,
                                    info.description);
    return 0;
  }
  // The user's passes, parsed once.
  {
    MLIRContext context(registry);
    OpPassManager userPasses(ModuleOp::getOperationName(),
                             OpPassManager::Nesting::Implicit);
    auto errorHandler = [&](const llvm::Twine &msg) {
      emitError(UnknownLoc::get(&context)) << msg;
      return failure();
    };
    if (failed(passPipeline.addToPipeline(userPasses, errorHandler)))
      return 1;
    options->pipeline.userPasses = std::move(userPasses);
  }

  // --mlir-timing: the phases and each pass, printed when main returns.
  DefaultTimingManager timingManager;
  applyDefaultTimingManagerCLOptions(timingManager);
  TimingScope timing = timingManager.getRootScope();

  std::string errorMessage;
  auto output = openOutputFile(outputFilename, &errorMessage);
  if (!output)
    usageError(errorMessage);
  std::unique_ptr<llvm::MemoryBuffer> file;
  if (kind == vram::ModelKind::HuggingFace) {
    file = openInputFile(vram::getHuggingFaceConfigPath(), &errorMessage);
    if (!file)
      usageError("--hf: " + errorMessage);
  } else if (kind != vram::ModelKind::Zoo) {
    file = openInputFile(inputFilename, &errorMessage);
    if (!file)
      usageError(errorMessage);
  }

  if (kind == vram::ModelKind::Mlir) {
    if (vram::isFitBatchRequested())
      usageError("--fit-batch needs a model whose batch can be bound: a zoo "
                 "model or an ONNX graph with a symbolic batch dimension");
    if (vram::isFitContextRequested())
      usageError("--fit-context needs a language model whose sequence "
                 "length --seq binds: a zoo or Hugging Face model, or an "
                 "ONNX graph or torch.export program with token-id inputs");
    auto processChunk = [&](std::unique_ptr<llvm::MemoryBuffer> chunk,
                            llvm::MemoryBufferRef, llvm::raw_ostream &os) {
      return processMlirBuffer(std::move(chunk), os, registry, *options,
                               timing);
    };
    if (failed(splitAndProcessBuffer(
            std::move(file), processChunk, output->os(),
            splitInputFile ? kDefaultSplitMarker : "", kDefaultSplitMarker)))
      return 1;
    output->keep();
    return 0;
  }

  // A zoo model or an import: built (and rebuilt at other batch sizes) by
  // its model source.
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  vram::ModelDiagnostics diagnostics(&context,
                                     vram::getInputPath(inputFilename));
  TimingScope importTiming = timing.nest("Import");
  llvm::Expected<std::unique_ptr<vram::ModelSource>> source =
      vram::createModelSourceFromCommandLine(&context, kind, inputFilename,
                                             std::move(file), cxxFlags);
  importTiming.stop();
  if (!source)
    return exitCodeOf(source.takeError());
  // --fit-batch / --fit-context: the number alone on stdout.
  auto printFit = [&](llvm::Expected<std::optional<int64_t>> best,
                      llvm::StringRef smallest) {
    if (!best)
      return exitCodeOf(best.takeError());
    if (!*best) {
      llvm::errs() << "vram-opt: even " << smallest << " exceeds the budget of "
                   << vram::formatByteSize(*options->pipeline.budget) << " ("
                   << vram::stringifyBudgetMetric(
                          options->pipeline.getBudgetMetric())
                   << ")\n";
      return 1;
    }
    llvm::outs() << **best << "\n";
    return 0;
  };
  if (vram::isFitBatchRequested())
    return printFit(vram::findFittingBatch(**source, options->pipeline),
                    "batch 1");
  if (vram::isFitContextRequested())
    return printFit(vram::findFittingSequence(**source, options->pipeline),
                    "a 1-token sequence");
  // Over budget or a validation that disagrees (exit 1) still writes the
  // requested report.
  int code =
      exitCodeOf(vram::runModel(**source, *options, output->os(), timing));
  if (code != 2)
    output->keep();
  return code;
}
