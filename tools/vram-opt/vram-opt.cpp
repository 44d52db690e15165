//===- vram-opt.cpp - the vram-opt driver ---------------------------------===//
//
// An mlir-opt style driver: reads a model (.mlir, .onnx or a built-in zoo
// model), runs a pass pipeline and prints IR, or a report when --format is
// given. The friendly options (--mode, --optimizer, ...) only assemble the
// pipeline (vram-build-step); the logic lives in the passes and analyses.
//
// Exit codes: 0 success, 1 invalid IR or a failed pass/analysis, 2 a usage
// error (bad option value, missing file, unknown zoo model).
//
//===----------------------------------------------------------------------===//

#include "vram/Analysis/Passes.h"
#include "vram/Analysis/StepInfo.h"
#include "vram/Dialect/NN/NNDialect.h"
#include "vram/Dialect/NN/NNOps.h"
#include "vram/Dialect/NN/TorchSemantics.h"
#include "vram/Report/Report.h"
#include "vram/Transforms/Passes.h"
#include "vram/Zoo/Zoo.h"
#ifdef VRAM_ENABLE_ONNX
#include "vram/Import/ONNX.h"
#endif

#include "mlir/Debug/CLOptionsSetup.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Support/ToolUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

#include <cmath>

using namespace mlir;
namespace cl = llvm::cl;

namespace {
enum class OutputFormat { Mlir, Text, Json };
enum class InputKind { Auto, Mlir, Onnx };

cl::OptionCategory modelCat("Model");
cl::OptionCategory stepCat("Step and report");

cl::opt<std::string> inputFilename(cl::Positional, cl::desc("<model file>"),
                                   cl::init("-"));
cl::opt<std::string> outputFilename("o", cl::desc("Output filename"),
                                    cl::value_desc("filename"), cl::init("-"));
cl::opt<std::string>
    zooName("zoo", cl::desc("Use a built-in model (--zoo=list lists them)"),
            cl::value_desc("name"), cl::cat(modelCat));
cl::opt<InputKind> importKind(
    "import", cl::desc("Input format (default: from the file extension)"),
    cl::values(clEnumValN(InputKind::Mlir, "mlir", "MLIR (nn dialect)"),
               clEnumValN(InputKind::Onnx, "onnx", "ONNX ModelProto")),
    cl::init(InputKind::Auto), cl::cat(modelCat));
cl::opt<int64_t> batch("batch", cl::desc("Batch size"), cl::init(-1),
                       cl::cat(modelCat));
cl::opt<int64_t> imageSize("image-size",
                           cl::desc("Image side for vision models"),
                           cl::init(-1), cl::cat(modelCat));
cl::opt<int64_t> seqLen("seq", cl::desc("Sequence length for language models"),
                        cl::init(-1), cl::cat(modelCat));
cl::opt<int64_t> numClasses("num-classes", cl::desc("Classifier classes"),
                            cl::init(-1), cl::cat(modelCat));
cl::list<std::string>
    dimBindings("dim", cl::desc("Bind a symbolic dimension: NAME=VALUE"),
                cl::value_desc("NAME=VALUE"), cl::cat(modelCat));
cl::list<std::string>
    onnxBuffers("onnx-buffers",
                cl::desc("ONNX initializers to treat as buffers (globs)"),
                cl::CommaSeparated, cl::cat(modelCat));

// The choices below take their accepted values from the dialect's enums
// (NNAttributes.td): CommandLine validates them, nothing here does.
using vram::nn::EnumValues;
cl::opt<vram::nn::StepMode> mode("mode", cl::desc("Step to build"),
                                 EnumValues<vram::nn::StepMode>(),
                                 cl::init(vram::nn::StepMode::Train),
                                 cl::cat(stepCat));
cl::opt<vram::nn::OptimizerKind>
    optimizer("optimizer", cl::desc("Optimizer (default adam)"),
              EnumValues<vram::nn::OptimizerKind>(),
              cl::init(vram::nn::OptimizerKind::Adam), cl::cat(stepCat));
cl::opt<vram::nn::OptimizerImpl>
    optimizerImpl("optimizer-impl",
                  cl::desc("Optimizer implementation (default: what the "
                           "modelled PyTorch picks, foreach for 2.x on CUDA, "
                           "else for-loop)"),
                  EnumValues<vram::nn::OptimizerImpl>(),
                  cl::init(vram::nn::OptimizerImpl::Foreach), cl::cat(stepCat));
cl::opt<double> weightDecay("weight-decay", cl::desc("Optimizer weight decay"),
                            cl::init(0.0), cl::cat(stepCat));
cl::opt<vram::nn::LossKind> lossKind("loss",
                                     cl::desc("Loss (default cross_entropy)"),
                                     EnumValues<vram::nn::LossKind>(),
                                     cl::init(vram::nn::LossKind::CrossEntropy),
                                     cl::cat(stepCat));
cl::opt<bool> flattenLogits(
    "flatten-logits",
    cl::desc("Flatten [B, T, V] logits to [B*T, V] for the loss (language "
             "models; the zoo's say so themselves)"),
    cl::init(false), cl::cat(stepCat));
cl::list<std::string> freezePatterns(
    "freeze",
    cl::desc("Freeze parameters: globs on their names or module paths "
             "(layer1,layer2.0.*)"),
    cl::value_desc("PATTERN"), cl::CommaSeparated, cl::cat(stepCat));
cl::opt<double> freezeFirst(
    "freeze-first",
    cl::desc("Freeze the parameters of the first FRACTION of the modules "
             "(named_modules order), as seed article 001 meant to"),
    cl::value_desc("FRACTION"), cl::init(0.0), cl::cat(stepCat));
cl::opt<bool> setToNone("set-to-none", cl::desc("zero_grad(set_to_none=...)"),
                        cl::init(true), cl::cat(stepCat));
cl::opt<bool> inputRequiresGrad("input-requires-grad",
                                cl::desc("Model inputs require grad"),
                                cl::init(false), cl::cat(stepCat));
cl::opt<vram::nn::TorchVersion> torchVersion(
    "torch-version",
    cl::desc("The PyTorch release modelled (default 2; 1.13 is Debian's)"),
    EnumValues<vram::nn::TorchVersion>(),
    cl::init(vram::nn::TorchVersion::V2), cl::cat(stepCat));
cl::opt<vram::nn::Device>
    device("device", cl::desc("The device whose kernels are modelled"),
           EnumValues<vram::nn::Device>(), cl::init(vram::nn::Device::Cuda),
           cl::cat(stepCat));
cl::opt<vram::nn::AllocatorKind> allocatorKind(
    "allocator",
    cl::desc("Allocator model for allocated/reserved peaks (default exact)"),
    EnumValues<vram::nn::AllocatorKind>(),
    cl::init(vram::nn::AllocatorKind::Exact), cl::cat(stepCat));
cl::opt<vram::nn::FlopConvention>
    flopConvention("flops", cl::desc("FLOP convention (default flops)"),
                   EnumValues<vram::nn::FlopConvention>(),
                   cl::init(vram::nn::FlopConvention::Flops), cl::cat(stepCat));
cl::opt<OutputFormat>
    format("format", cl::desc("Output: IR (default) or a report"),
           cl::values(clEnumValN(OutputFormat::Mlir, "mlir", "print IR"),
                      clEnumValN(OutputFormat::Text, "text", "text report"),
                      clEnumValN(OutputFormat::Json, "json",
                                 "JSON report (docs/Report.md)")),
           cl::init(OutputFormat::Mlir), cl::cat(stepCat));
cl::opt<bool> timeline("timeline",
                       cl::desc("Add the live-bytes timeline to the report"),
                       cl::init(false), cl::cat(stepCat));
cl::opt<unsigned> topTensors("top-tensors",
                             cl::desc("Tensors listed at the peak"),
                             cl::init(10), cl::cat(stepCat));

cl::opt<bool>
    splitInputFile("split-input-file",
                   cl::desc("Process each chunk of the input separately"),
                   cl::init(false));
cl::opt<bool>
    verifyDiagnostics("verify-diagnostics",
                      cl::desc("Check expected-* diagnostics in the input"),
                      cl::init(false));

/// A usage error: one line on stderr and exit code 2.
[[noreturn]] void usageError(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "vram-opt") << message << "\n";
  std::exit(2);
}

void checkOptions() {
  auto positive = [](const cl::opt<int64_t> &opt, llvm::StringRef name) {
    if (opt.getNumOccurrences() && opt <= 0)
      usageError("--" + name + " must be a positive integer, got " +
                 std::to_string(opt));
  };
  positive(batch, "batch");
  positive(imageSize, "image-size");
  positive(seqLen, "seq");
  positive(numClasses, "num-classes");
  if (!(weightDecay >= 0) || std::isinf(weightDecay))
    usageError("--weight-decay must be a finite number >= 0, got " +
               std::to_string(weightDecay));
  if (freezeFirst.getNumOccurrences() && !(freezeFirst >= 0 && freezeFirst <= 1))
    usageError("--freeze-first must be a fraction in [0, 1], got " +
               std::to_string(freezeFirst));
  if (timeline && format == OutputFormat::Mlir)
    usageError("--timeline is part of a report: add --format=text or "
               "--format=json");

  // Options that the chosen front end cannot apply are errors, not ignored.
  bool fromZoo = !zooName.empty();
  bool hasFile = inputFilename.getNumOccurrences() > 0;
  if (fromZoo && hasFile)
    usageError("give a model file or --zoo, not both");
  if (fromZoo && zooName == "list")
    return;
  bool onnx = !fromZoo && (importKind == InputKind::Onnx ||
                           (importKind == InputKind::Auto &&
                            llvm::sys::path::extension(inputFilename) ==
                                ".onnx"));
  auto notFor = [](const cl::Option &opt, llvm::StringRef what) {
    if (opt.getNumOccurrences())
      usageError("--" + opt.ArgStr + " does not apply to " + what);
  };
  if (fromZoo) {
    notFor(dimBindings, "zoo models (use --batch, --seq, --image-size)");
    notFor(onnxBuffers, "zoo models");
  } else if (onnx) {
    notFor(imageSize, "an ONNX model: its input shapes are in the file "
                      "(bind symbolic dimensions with --batch, --seq or --dim)");
    notFor(numClasses, "an ONNX model: its classifier is in the file");
  } else {
    llvm::StringRef mlir = "an .mlir model: its shapes are static";
    notFor(imageSize, mlir);
    notFor(seqLen, mlir);
    notFor(numClasses, mlir);
    notFor(dimBindings, mlir);
    notFor(onnxBuffers, "an .mlir model");
  }
}

vram::BuildStepOptions buildStepOptions() {
  vram::BuildStepOptions options;
  options.mode = mode;
  options.optimizer = optimizer;
  // Without --optimizer-impl, the implementation the modelled PyTorch picks.
  options.implementation =
      optimizerImpl.getNumOccurrences()
          ? optimizerImpl.getValue()
          : vram::nn::getDefaultOptimizerImpl({torchVersion, device});
  options.weightDecay = weightDecay;
  options.loss = lossKind;
  options.flattenLogits = flattenLogits;
  options.setToNone = setToNone;
  options.inputRequiresGrad = inputRequiresGrad;
  options.torchVersion = torchVersion;
  options.device = device;
  return options;
}

/// Runs the pipeline on `module` and writes IR or the report.
LogicalResult processModule(ModuleOp module,
                            const PassPipelineCLParser &passPipeline,
                            llvm::StringRef modelName, llvm::raw_ostream &os) {
  MLIRContext *ctx = module.getContext();
  // --batch must have bound the model's batch dimension: a model whose batch
  // is static and different (or that has none) cannot apply it.
  if (batch.getNumOccurrences())
    if (auto forward = module.lookupSymbol<func::FuncOp>("forward")) {
      std::optional<int64_t> modelBatch = vram::getBatchSize(forward);
      if (modelBatch != batch.getValue())
        usageError(llvm::formatv("--batch={0} does not apply: the model's "
                                 "batch dimension is {1}",
                                 batch.getValue(),
                                 modelBatch ? std::to_string(*modelBatch)
                                            : std::string("absent"))
                       .str());
    }
  PassManager pm(ctx, ModuleOp::getOperationName(),
                 OpPassManager::Nesting::Implicit);
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  auto errorHandler = [&](const llvm::Twine &msg) {
    emitError(UnknownLoc::get(ctx)) << msg;
    return failure();
  };
  if (failed(passPipeline.addToPipeline(pm, errorHandler)))
    return failure();
  // A report, or an explicit --mode, builds the step when the pipeline did
  // not; a report without --mode is about training.
  bool wantsStep = format != OutputFormat::Mlir || mode.getNumOccurrences();
  if (failed(pm.run(module)))
    return failure();
  // Scenario flags transform the forward model, before the step is built.
  if (!freezePatterns.empty() || freezeFirst > 0) {
    if (module.lookupSymbol("step"))
      usageError("--freeze and --freeze-first apply to the forward model: "
                 "the pipeline already built the step");
    PassManager freezePm(ctx, ModuleOp::getOperationName());
    if (failed(applyPassManagerCLOptions(freezePm)))
      return failure();
    vram::FreezeOptions freeze;
    freeze.patterns.assign(freezePatterns.begin(), freezePatterns.end());
    freeze.firstFraction = freezeFirst;
    freezePm.addPass(vram::createFreeze(freeze));
    if (failed(freezePm.run(module)))
      return failure();
  }
  if (wantsStep && !module.lookupSymbol("step")) {
    PassManager stepPm(ctx, ModuleOp::getOperationName());
    if (failed(applyPassManagerCLOptions(stepPm)))
      return failure();
    stepPm.addPass(vram::createBuildStep(buildStepOptions()));
    if (failed(stepPm.run(module)))
      return failure();
  }
  if (format == OutputFormat::Mlir) {
    module.print(os);
    os << "\n";
    return success();
  }
  vram::ReportOptions options;
  options.modelName = modelName.str();
  if (auto name = module->getAttrOfType<StringAttr>(
          vram::nn::NNDialect::kModelAttrName))
    options.modelName = name.str();
  options.optimizer = vram::nn::stringifyEnum(optimizer.getValue()).str();
  options.flops = flopConvention;
  options.allocator = allocatorKind;
  options.timeline = timeline;
  options.topTensors = topTensors;
  return vram::writeReport(module, options,
                           format == OutputFormat::Json
                               ? vram::ReportFormat::Json
                               : vram::ReportFormat::Text,
                           os);
}

/// Whether `loc` names a position in a file.
bool hasFileLocation(Location loc) {
  bool found = false;
  loc->walk([&](Location inner) {
    found |= isa<FileLineColLoc>(inner);
    return found ? WalkResult::interrupt() : WalkResult::advance();
  });
  return found;
}

/// Prints diagnostics whose location has no file (a zoo layer, an .mlir
/// `loc("name")`) as "<input>: error: <name>: message", so that every message
/// names what was analyzed; others go on to the SourceMgr handler.
class NamedLocationDiagnostics {
public:
  NamedLocationDiagnostics(MLIRContext *ctx, std::string input)
      : handler(ctx, [input = std::move(input)](Diagnostic &d) {
          if (hasFileLocation(d.getLocation()))
            return failure();
          auto print = [&](Diagnostic &diag) {
            llvm::raw_ostream &os = llvm::errs();
            os << input << ": ";
            switch (diag.getSeverity()) {
            case DiagnosticSeverity::Error:
              os << "error: ";
              break;
            case DiagnosticSeverity::Warning:
              os << "warning: ";
              break;
            case DiagnosticSeverity::Note:
              os << "note: ";
              break;
            case DiagnosticSeverity::Remark:
              os << "remark: ";
              break;
            }
            if (auto name = dyn_cast<NameLoc>(diag.getLocation()))
              os << name.getName().getValue() << ": ";
            os << diag.str() << "\n";
          };
          print(d);
          for (Diagnostic &note : d.getNotes())
            print(note);
          return success();
        }) {}

private:
  ScopedDiagnosticHandler handler;
};

void registerDialects(DialectRegistry &registry) {
  registry.insert<vram::nn::NNDialect, func::FuncDialect>();
}

/// Parses and processes one .mlir buffer (one chunk with --split-input-file).
LogicalResult processMlirBuffer(std::unique_ptr<llvm::MemoryBuffer> buffer,
                                llvm::raw_ostream &os,
                                const PassPipelineCLParser &passPipeline,
                                const DialectRegistry &registry,
                                llvm::StringRef modelName) {
  MLIRContext context(registry);
  context.allowUnregisteredDialects(false);
  auto sourceMgr = std::make_shared<llvm::SourceMgr>();
  sourceMgr->AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  auto run = [&]() -> LogicalResult {
    OwningOpRef<ModuleOp> module =
        parseSourceFile<ModuleOp>(*sourceMgr, &context);
    if (!module)
      return failure();
    return processModule(*module, passPipeline, modelName, os);
  };
  if (!verifyDiagnostics) {
    SourceMgrDiagnosticHandler handler(*sourceMgr, &context);
    NamedLocationDiagnostics named(&context, inputFilename);
    return run();
  }
  SourceMgrDiagnosticVerifierHandler handler(*sourceMgr, &context);
  context.printOpOnDiagnostic(false);
  (void)run();
  return handler.verify();
}

void listZoo(llvm::raw_ostream &os) {
  for (const vram::zoo::ZooModelInfo &info : vram::zoo::listModels())
    os << llvm::formatv("{0,-16} {1}\n", info.name, info.description);
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
  PassPipelineCLParser passPipeline("", "Compiler passes to run");

  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  if (!cl::ParseCommandLineOptions(argc, argv,
                                   "vram-opt: GPU memory and FLOPs of models\n",
                                   &errorStream)) {
    llvm::errs() << errors;
    return 2;
  }
  checkOptions();

  DialectRegistry registry;
  registerDialects(registry);

  if (zooName == "list") {
    listZoo(llvm::outs());
    return 0;
  }

  std::string errorMessage;
  auto output = openOutputFile(outputFilename, &errorMessage);
  if (!output)
    usageError(errorMessage);

  // Built-in model.
  if (!zooName.empty()) {
    MLIRContext context(registry);
    context.loadAllAvailableDialects();
    llvm::SourceMgr sourceMgr;
    SourceMgrDiagnosticHandler handler(sourceMgr, &context);
    NamedLocationDiagnostics named(&context, "zoo:" + zooName);
    // The user did not write this IR: no op dumps in messages.
    context.printOpOnDiagnostic(false);
    vram::zoo::ZooOptions zooOptions;
    zooOptions.target = {torchVersion, device};
    if (batch > 0)
      zooOptions.batch = batch;
    if (imageSize > 0)
      zooOptions.imageSize = imageSize;
    if (seqLen > 0)
      zooOptions.seq = seqLen;
    if (numClasses > 0)
      zooOptions.numClasses = numClasses;
    auto module = vram::zoo::buildModel(&context, zooName, zooOptions);
    if (!module)
      usageError(llvm::toString(module.takeError()));
    if (failed(processModule(**module, passPipeline, zooName, output->os())))
      return 1;
    output->keep();
    return 0;
  }

  auto file = openInputFile(inputFilename, &errorMessage);
  if (!file)
    usageError(errorMessage);
  llvm::StringRef stem = llvm::sys::path::stem(inputFilename);

  bool isOnnx = importKind == InputKind::Onnx ||
                (importKind == InputKind::Auto &&
                 llvm::sys::path::extension(inputFilename) == ".onnx");
  if (isOnnx) {
#ifdef VRAM_ENABLE_ONNX
    MLIRContext context(registry);
    context.loadAllAvailableDialects();
    llvm::SourceMgr sourceMgr;
    SourceMgrDiagnosticHandler handler(sourceMgr, &context);
    NamedLocationDiagnostics named(&context, inputFilename);
    context.printOpOnDiagnostic(false);
    vram::onnx_import::OnnxImportOptions onnxOptions;
    if (batch > 0)
      onnxOptions.batch = batch;
    if (seqLen > 0)
      onnxOptions.seq = seqLen;
    for (const std::string &binding : dimBindings) {
      auto [name, value] = llvm::StringRef(binding).split('=');
      int64_t v;
      if (name.empty() || value.getAsInteger(10, v) || v <= 0)
        usageError("--dim expects NAME=VALUE with a positive VALUE, got '" +
                   binding + "'");
      onnxOptions.dims[name] = v;
    }
    onnxOptions.bufferPatterns.assign(onnxBuffers.begin(), onnxBuffers.end());
    OwningOpRef<ModuleOp> module = vram::onnx_import::importOnnxModel(
        &context, file->getBuffer(), inputFilename, onnxOptions);
    if (!module)
      return 1;
    if (failed(processModule(*module, passPipeline, stem, output->os())))
      return 1;
    output->keep();
    return 0;
#else
    usageError("this vram-opt was built without the ONNX importer");
#endif
  }

  auto processChunk = [&](std::unique_ptr<llvm::MemoryBuffer> chunk,
                          llvm::MemoryBufferRef, llvm::raw_ostream &os) {
    return processMlirBuffer(std::move(chunk), os, passPipeline, registry,
                             stem);
  };
  if (failed(splitAndProcessBuffer(std::move(file), processChunk, output->os(),
                                   splitInputFile ? kDefaultSplitMarker : "",
                                   kDefaultSplitMarker)))
    return 1;
  output->keep();
  return 0;
}
