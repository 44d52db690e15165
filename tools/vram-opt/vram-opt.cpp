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

#include "vram/Analysis/Allocator.h"
#include "vram/Analysis/MemoryAnalysis.h"
#include "vram/Analysis/Passes.h"
#include "vram/Analysis/StepInfo.h"
#include "vram/Dialect/NN/NNDialect.h"
#include "vram/Dialect/NN/NNOps.h"
#include "vram/Dialect/NN/TorchSemantics.h"
#include "vram/Import/Findings.h"
#include "vram/Lint/Budget.h"
#include "vram/Report/Report.h"
#include "vram/Support/ParseLimits.h"
#include "vram/Transforms/Passes.h"
#include "vram/Zoo/Zoo.h"
#ifdef VRAM_ENABLE_ONNX
#include "vram/Import/ONNX.h"
#endif
#ifdef VRAM_ENABLE_CXX
#include "vram/Import/Cxx.h"
#endif
#include "vram/Conversion/NNToTensor.h"
#ifdef VRAM_ENABLE_EXECUTION
#include "vram/Execution/CpuRunner.h"
#include "vram/Execution/GpuLowering.h"
#include "vram/Execution/Passes.h"
#endif
#ifdef VRAM_ENABLE_CUDA_RUNTIME
#include "vram/Execution/CudaRuntime.h"
#include "vram/Execution/GpuRunner.h"
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
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

#include "llvm/Config/llvm-config.h"

#include <cmath>

#ifndef VRAM_OPT_VERSION
#define VRAM_OPT_VERSION "0.2.0"
#endif

using namespace mlir;
namespace cl = llvm::cl;

namespace {
enum class OutputFormat { Mlir, Text, Json, Markdown, Sarif, Html };
enum class InputKind { Auto, Mlir, Onnx, Cxx };

cl::OptionCategory modelCat("Model");
cl::OptionCategory stepCat("Step (what one iteration runs)");
cl::OptionCategory scenarioCat("Scenario");
cl::OptionCategory outputCat("Output");

cl::opt<std::string>
    inputFilename(cl::Positional,
                  cl::desc("<model file: .mlir, .onnx or C++ (LibTorch)>"),
                  cl::cat(modelCat), cl::init("-"));
cl::opt<std::string> outputFilename("o", cl::desc("Output filename"),
                                    cl::value_desc("filename"), cl::init("-"),
                                    cl::cat(outputCat));
cl::opt<std::string>
    zooName("zoo", cl::desc("Use a built-in model (--zoo=list lists them)"),
            cl::value_desc("name"), cl::cat(modelCat));
cl::opt<InputKind> importKind(
    "import", cl::desc("Input format (default: from the file extension)"),
    cl::values(clEnumValN(InputKind::Mlir, "mlir", "MLIR (nn dialect)"),
               clEnumValN(InputKind::Onnx, "onnx", "ONNX ModelProto"),
               clEnumValN(InputKind::Cxx, "cxx",
                          "C++ source defining LibTorch modules (default "
                          "for .cpp, .cc, .cxx)")),
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

cl::OptionCategory
    cxxCat("C++ models (LibTorch sources; compile flags follow `--`)");
cl::opt<std::string> cxxModule(
    "module",
    cl::desc("The module to analyze: its TORCH_MODULE holder or Impl class"),
    cl::value_desc("NAME"), cl::cat(cxxCat));
cl::list<std::string>
    cxxInputs("input",
              cl::desc("Shapes of forward()'s tensor inputs (90x3x224x224; "
                       "an element type may follow: 8x128:i64)"),
              cl::value_desc("SHAPE"), cl::CommaSeparated, cl::cat(cxxCat));
cl::list<std::string> cxxArgs(
    "args",
    cl::desc("Constructor arguments (default: those of a construction with "
             "constant arguments in the translation unit)"),
    cl::value_desc("VALUE"), cl::CommaSeparated, cl::cat(cxxCat));
cl::opt<std::string> cxxCompileCommands(
    "compile-commands",
    cl::desc("compile_commands.json (or its directory) with the source's "
             "compile command"),
    cl::value_desc("PATH"), cl::cat(cxxCat));
/// The compile flags after `--`.
std::vector<std::string> cxxFlags;

bool isCxxSource(llvm::StringRef path) {
  llvm::StringRef ext = llvm::sys::path::extension(path);
  return ext == ".cpp" || ext == ".cc" || ext == ".cxx" || ext == ".C";
}

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
    cl::value_desc("PATTERN"), cl::CommaSeparated, cl::cat(scenarioCat));
cl::opt<double> freezeFirst(
    "freeze-first",
    cl::desc("Freeze the parameters of the first FRACTION of the modules "
             "(named_modules order), as seed article 001 meant to"),
    cl::value_desc("FRACTION"), cl::init(0.0), cl::cat(scenarioCat));
cl::opt<std::string> loraSpec(
    "lora",
    cl::desc("peft LoRA adapters: r=R,alpha=A,dropout=P,targets=T|T... "
             "(targets: conv2d, linear, or globs / module paths of layers); "
             "every other parameter is frozen"),
    cl::value_desc("r=4,alpha=32,dropout=0.1,targets=conv2d"),
    cl::cat(scenarioCat));
cl::list<std::string> checkpointModules(
    "checkpoint",
    cl::desc("Activation checkpointing (torch.utils.checkpoint, "
             "use_reentrant=False) of the modules matching these globs or "
             "module paths (layer1,layer2.*)"),
    cl::value_desc("MODULE"), cl::CommaSeparated, cl::cat(scenarioCat));
cl::opt<vram::nn::Precision> precision(
    "precision",
    cl::desc("fp32, AMP (torch.autocast over fp32 parameters: amp-fp16, "
             "amp-bf16) or the whole model in fp16/bf16"),
    EnumValues<vram::nn::Precision>(), cl::init(vram::nn::Precision::Fp32),
    cl::cat(scenarioCat));
cl::opt<bool> setToNone("set-to-none", cl::desc("zero_grad(set_to_none=...)"),
                        cl::init(true), cl::cat(stepCat));
cl::opt<bool> inputRequiresGrad("input-requires-grad",
                                cl::desc("Model inputs require grad"),
                                cl::init(false), cl::cat(stepCat));
cl::opt<vram::nn::TorchVersion> torchVersion(
    "torch-version",
    cl::desc("The PyTorch release modelled (default 2; 1.13 is Debian's)"),
    EnumValues<vram::nn::TorchVersion>(), cl::init(vram::nn::TorchVersion::V2),
    cl::cat(stepCat));
cl::opt<vram::nn::Device>
    device("device", cl::desc("The device whose kernels are modelled"),
           EnumValues<vram::nn::Device>(), cl::init(vram::nn::Device::Cuda),
           cl::cat(stepCat));
cl::opt<std::string> gpuName(
    "gpu",
    cl::desc("The GPU (h100, h200, a100, a100-40gb, l40s, a10, l4, rtx4090, "
             "rtx3090, v100, t4): its capacity is the default --budget, its "
             "architecture sizes the cuBLAS workspace; implies "
             "--allocator=pytorch-cuda"),
    cl::value_desc("NAME"), cl::cat(scenarioCat));
cl::opt<std::string> contextBytes(
    "context-bytes",
    cl::desc("The CUDA context's device memory (default 400MiB with lazy "
             "module loading, 1GiB without)"),
    cl::value_desc("SIZE"), cl::cat(scenarioCat));
cl::opt<bool> cudaLazyLoading(
    "cuda-lazy-loading",
    cl::desc("CUDA_MODULE_LOADING=LAZY (the default since CUDA 12.2)"),
    cl::init(true), cl::cat(scenarioCat));
cl::opt<vram::nn::CudnnWorkspace> cudnnWorkspace(
    "cudnn-workspace",
    cl::desc("The workspace assumed per cuDNN convolution call: none "
             "(implicit GEMM) or im2col (explicit GEMM's column matrix, a "
             "bound); cuDNN picks at run time"),
    EnumValues<vram::nn::CudnnWorkspace>(),
    cl::init(vram::nn::CudnnWorkspace::None), cl::cat(scenarioCat));
cl::opt<vram::nn::AllocatorKind> allocatorKind(
    "allocator",
    cl::desc("Allocator model for allocated/reserved peaks (default exact)"),
    EnumValues<vram::nn::AllocatorKind>(),
    cl::init(vram::nn::AllocatorKind::Exact), cl::cat(outputCat));
cl::opt<vram::nn::FlopConvention>
    flopConvention("flops", cl::desc("FLOP convention (default flops)"),
                   EnumValues<vram::nn::FlopConvention>(),
                   cl::init(vram::nn::FlopConvention::Flops),
                   cl::cat(outputCat));
cl::opt<OutputFormat>
    format("format",
           cl::desc("Output (default: the text report; IR when a pass "
                    "pipeline runs)"),
           cl::values(clEnumValN(OutputFormat::Mlir, "mlir", "print IR"),
                      clEnumValN(OutputFormat::Text, "text", "text report"),
                      clEnumValN(OutputFormat::Json, "json",
                                 "JSON report (docs/Report.md)"),
                      clEnumValN(OutputFormat::Markdown, "markdown",
                                 "a pull-request comment (with --compare)"),
                      clEnumValN(OutputFormat::Sarif, "sarif",
                                 "SARIF 2.1.0 for code scanning"),
                      clEnumValN(OutputFormat::Html, "html",
                                 "a page with the memory timeline (SVG)")),
           cl::init(OutputFormat::Mlir), cl::cat(outputCat));
cl::opt<bool> timeline("timeline",
                       cl::desc("Add the live-bytes timeline to the report"),
                       cl::init(false), cl::cat(outputCat));
cl::opt<std::string> compareWith(
    "compare",
    cl::desc("Markdown: compare with a baseline JSON report (deltas per "
             "category, regression line)"),
    cl::value_desc("BASELINE.json"), cl::cat(outputCat));
cl::opt<double> regressionThreshold(
    "regression-threshold",
    cl::desc("Markdown with --compare: peak growth reported as a regression, "
             "in percent (default 5)"),
    cl::init(5.0), cl::cat(outputCat));
cl::opt<std::string>
    traceFile("trace",
              cl::desc("Write the memory timeline as Chrome trace events "
                       "(chrome://tracing, Perfetto)"),
              cl::value_desc("FILE"), cl::cat(outputCat));
cl::opt<unsigned> layerDepth(
    "depth",
    cl::desc("Sum the layer table per module at this depth of the module "
             "path (torchinfo's depth; 0: every layer)"),
    cl::init(0), cl::cat(outputCat));
cl::opt<unsigned> topTensors("top-tensors",
                             cl::desc("Tensors listed at the peak"),
                             cl::init(10), cl::cat(outputCat));

cl::OptionCategory validateCat("Validation by execution");
enum class ValidateTarget { None, Cpu, Gpu, GpuEmulated };
cl::opt<ValidateTarget> validate(
    "validate",
    cl::desc("Run the lowered step and compare the measured peak with the "
             "prediction (exit 1 when they differ; docs/Execution.md)"),
    cl::values(clEnumValN(ValidateTarget::Cpu, "cpu",
                          "MLIR's ExecutionEngine on this CPU"),
               clEnumValN(ValidateTarget::Gpu, "gpu",
                          "generated kernels on a CUDA device (the driver is "
                          "loaded at run time; exit 1 without one)"),
               clEnumValN(ValidateTarget::GpuEmulated, "gpu-emulated",
                          "the GPU lowering's kernels run on this CPU, one "
                          "thread after another (no device needed; memory "
                          "as --validate=cpu)")),
    cl::init(ValidateTarget::None), cl::cat(validateCat));
cl::opt<std::string> gpuArch(
    "gpu-arch",
    cl::desc("Target of --validate=gpu's kernels (sm_90: H100, H200; sm_80: "
             "A100)"),
    cl::value_desc("sm_XY"), cl::init("sm_90"), cl::cat(validateCat));
enum class GpuBinary { Ptx, Cubin };
cl::opt<GpuBinary> gpuBinary(
    "gpu-binary", cl::desc("Form of --validate=gpu's kernels"),
    cl::values(clEnumValN(GpuBinary::Ptx, "ptx",
                          "PTX, compiled by the driver when the step loads "
                          "(default; no toolkit needed)"),
               clEnumValN(GpuBinary::Cubin, "cubin",
                          "cubins assembled by the CUDA toolkit's ptxas while "
                          "lowering (checks every kernel without a device)")),
    cl::init(GpuBinary::Ptx), cl::cat(validateCat));
cl::opt<unsigned>
    cudaDeviceOrdinal("cuda-device",
                      cl::desc("The CUDA device --validate=gpu runs on"),
                      cl::init(0), cl::cat(validateCat));
cl::opt<bool> listCudaDevices(
    "list-cuda-devices",
    cl::desc("List the CUDA devices the driver reports, one a line (exit 1 "
             "with \"no CUDA device: REASON\" when there is none)"),
    cl::init(false), cl::cat(validateCat));
enum class AllocationMode { PyTorch, Compiler };
cl::opt<AllocationMode> allocationMode(
    "allocation-mode", cl::desc("Buffers of the executed step"),
    cl::values(clEnumValN(AllocationMode::PyTorch, "pytorch",
                          "one buffer per tensor PyTorch allocates, freed "
                          "after its last use (default)"),
               clEnumValN(AllocationMode::Compiler, "compiler",
                          "MLIR's in-place bufferization and buffer "
                          "deallocation: what a compiler could save")),
    cl::init(AllocationMode::PyTorch), cl::cat(validateCat));
cl::list<std::string> inputData(
    "input-data",
    cl::desc("NAME=FILE.npy: a model input (by name), the loss target "
             "(labels) or a parameter; else a deterministic default"),
    cl::value_desc("NAME=FILE.npy"), cl::CommaSeparated, cl::cat(validateCat));
cl::opt<std::string> dumpDir(
    "dump",
    cl::desc("Write the loss, parameter gradients (NAME.grad.npy) and "
             "updated parameters (NAME.npy) of the executed step to DIR"),
    cl::value_desc("DIR"), cl::cat(validateCat));
cl::opt<double> learningRate("lr",
                             cl::desc("Learning rate of the executed update"),
                             cl::init(0.01), cl::cat(validateCat));

cl::OptionCategory lintCat("Lint");
cl::opt<std::string> budget(
    "budget",
    cl::desc("Memory budget (8GiB, 24GB, 1.5TiB, bytes): over it is an error "
             "at the peak op and exit code 1"),
    cl::value_desc("SIZE"), cl::cat(lintCat));
enum class BudgetMetricFlag { Default, Exact, Allocated, Reserved, Device };
cl::opt<BudgetMetricFlag> budgetMetric(
    "budget-metric",
    cl::desc("What --budget is checked against (default: device with "
             "--allocator=pytorch-cuda or --gpu, else exact)"),
    cl::values(clEnumValN(BudgetMetricFlag::Exact, "exact",
                          "the sum of live tensors"),
               clEnumValN(BudgetMetricFlag::Allocated, "allocated",
                          "torch.cuda.max_memory_allocated"),
               clEnumValN(BudgetMetricFlag::Reserved, "reserved",
                          "torch.cuda.max_memory_reserved"),
               clEnumValN(BudgetMetricFlag::Device, "device",
                          "reserved + CUDA context (nvidia-smi)")),
    cl::init(BudgetMetricFlag::Default), cl::cat(lintCat));
cl::opt<bool> fitBatch(
    "fit-batch",
    cl::desc("Print the largest batch size that fits --budget (re-runs the "
             "pipeline per candidate), alone on stdout"),
    cl::init(false), cl::cat(lintCat));

cl::opt<bool>
    splitInputFile("split-input-file",
                   cl::desc("Process each chunk of the input separately"),
                   cl::init(false));
cl::opt<bool>
    verifyDiagnostics("verify-diagnostics",
                      cl::desc("Check expected-* diagnostics in the input"),
                      cl::init(false));

/// Whether the caching allocator is modelled (--allocator=pytorch-cuda, or
/// implied by --gpu).
bool usesCudaAllocator() {
  return allocatorKind == vram::nn::AllocatorKind::PytorchCuda ||
         gpuName.getNumOccurrences();
}

/// The GPU a CUDA step's device figure is for: the --gpu spec, or a generic
/// one; none without the caching allocator or on the CPU.
std::optional<vram::DeviceModel> getDeviceModel() {
  if (!usesCudaAllocator() || device == vram::nn::Device::Cpu)
    return std::nullopt;
  vram::DeviceModel model = vram::makeDeviceModel(
      gpuName.getNumOccurrences() ? vram::lookupGpu(gpuName) : nullptr,
      cudaLazyLoading);
  if (contextBytes.getNumOccurrences())
    model.contextBytes = *vram::parseByteSize(contextBytes);
  return model;
}

/// Whether a budget is checked: --budget, or the capacity of --gpu.
bool hasBudget() {
  return budget.getNumOccurrences() || gpuName.getNumOccurrences();
}
int64_t getBudgetBytes() {
  if (budget.getNumOccurrences())
    return *vram::parseByteSize(budget);
  return vram::lookupGpu(gpuName)->capacityBytes;
}

#ifdef VRAM_ENABLE_EXECUTION
/// Parameter and buffer values the model file holds (ONNX initializers),
/// for --validate.
llvm::StringMap<vram::NpyArray> modelInitializers;
#endif

/// A usage error: one line on stderr and exit code 2.
[[noreturn]] void usageError(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "vram-opt") << message << "\n";
  std::exit(2);
}

/// --lora's value as vram-lora's options; a malformed value is a usage
/// error.
vram::LoraOptions parseLora(llvm::StringRef spec) {
  vram::LoraOptions options;
  auto bad = [&](const llvm::Twine &why) {
    usageError("--lora=" + spec + ": " + why +
               " (expected r=R,alpha=A,dropout=P,targets=T|T..., e.g. "
               "r=4,alpha=32,dropout=0.1,targets=conv2d)");
  };
  llvm::SmallVector<llvm::StringRef> items;
  spec.split(items, ',');
  llvm::StringSet<> seen;
  for (llvm::StringRef item : items) {
    auto [key, value] = item.split('=');
    key = key.trim();
    value = value.trim();
    if (!item.contains('=') || value.empty())
      bad("'" + item + "' is not KEY=VALUE");
    if (!seen.insert(key).second)
      bad("'" + key + "' given twice");
    if (key == "r") {
      if (value.getAsInteger(10, options.rank) || options.rank <= 0)
        bad("r must be a positive integer, got '" + value + "'");
    } else if (key == "alpha") {
      if (!llvm::to_float(value, options.alpha) ||
          !std::isfinite(options.alpha))
        bad("alpha must be a number, got '" + value + "'");
    } else if (key == "dropout") {
      if (!llvm::to_float(value, options.dropout) ||
          !(options.dropout >= 0 && options.dropout < 1))
        bad("dropout must be a probability in [0, 1), got '" + value + "'");
    } else if (key == "targets") {
      llvm::SmallVector<llvm::StringRef> targets;
      value.split(targets, '|');
      for (llvm::StringRef t : targets) {
        if (t.trim().empty())
          bad("an empty target in '" + value + "'");
        options.targets.push_back(t.trim().str());
      }
    } else {
      bad("unknown key '" + key + "'");
    }
  }
  if (options.targets.empty())
    bad("targets are required");
  return options;
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
  if (loraSpec.getNumOccurrences())
    (void)parseLora(loraSpec);
  if (freezeFirst.getNumOccurrences() &&
      !(freezeFirst >= 0 && freezeFirst <= 1))
    usageError("--freeze-first must be a fraction in [0, 1], got " +
               std::to_string(freezeFirst));
  if (budget.getNumOccurrences() && !vram::parseByteSize(budget))
    usageError("--budget expects a size such as 8GiB, 24GB or 1000000, got '" +
               budget + "'");
  if (contextBytes.getNumOccurrences() && !vram::parseByteSize(contextBytes))
    usageError("--context-bytes expects a size such as 500MiB, got '" +
               contextBytes + "'");
  if (gpuName.getNumOccurrences()) {
    if (!vram::lookupGpu(gpuName)) {
      std::string known;
      for (const vram::GpuSpec &gpu : vram::getGpuSpecs())
        known += (known.empty() ? "" : ", ") + gpu.name.str();
      usageError("unknown --gpu '" + gpuName + "' (known: " + known + ")");
    }
    if (allocatorKind.getNumOccurrences() &&
        allocatorKind != vram::nn::AllocatorKind::PytorchCuda)
      usageError("--gpu models a CUDA device's memory: it needs "
                 "--allocator=pytorch-cuda");
  }
  bool cudaOnly = gpuName.getNumOccurrences() ||
                  contextBytes.getNumOccurrences() ||
                  cudnnWorkspace.getNumOccurrences();
  if (cudaOnly && device == vram::nn::Device::Cpu)
    usageError("--gpu, --context-bytes and --cudnn-workspace model a CUDA "
               "device, not --device=cpu");
  if ((contextBytes.getNumOccurrences() ||
       cudaLazyLoading.getNumOccurrences()) &&
      !gpuName.getNumOccurrences() &&
      allocatorKind != vram::nn::AllocatorKind::PytorchCuda)
    usageError("--context-bytes and --cuda-lazy-loading are part of the "
               "device figure: add --gpu or --allocator=pytorch-cuda");
  if ((fitBatch || budgetMetric.getNumOccurrences()) && !hasBudget())
    usageError(std::string(fitBatch ? "--fit-batch" : "--budget-metric") +
               " needs --budget (or --gpu)");
  if (budgetMetric == BudgetMetricFlag::Device &&
      (device == vram::nn::Device::Cpu || !usesCudaAllocator()))
    usageError("--budget-metric=device needs --gpu or "
               "--allocator=pytorch-cuda");
  if (compareWith.getNumOccurrences() && format != OutputFormat::Markdown)
    usageError("--compare needs --format=markdown");
  if (validate == ValidateTarget::None &&
      (inputData.getNumOccurrences() || dumpDir.getNumOccurrences() ||
       allocationMode.getNumOccurrences() || learningRate.getNumOccurrences()))
    usageError("--input-data, --dump, --allocation-mode and --lr need "
               "--validate");
#ifndef VRAM_ENABLE_EXECUTION
  if (validate != ValidateTarget::None)
    usageError("this vram-opt was built without the execution engine "
               "(VRAM_ENABLE_EXECUTION=OFF)");
#endif
#ifndef VRAM_ENABLE_CUDA_RUNTIME
  if (validate == ValidateTarget::Gpu || listCudaDevices)
    usageError("this vram-opt was built without the CUDA runtime (cuda.h "
               "was not found at configure time)");
#endif
  {
    llvm::StringRef arch = gpuArch;
    unsigned sm = 0;
    if (!arch.consume_front("sm_") || arch.getAsInteger(10, sm) || sm < 50)
      usageError("--gpu-arch=" + gpuArch + ": expected sm_XY (sm_90, sm_80)");
  }
  if (validate != ValidateTarget::Gpu &&
      (gpuArch.getNumOccurrences() || cudaDeviceOrdinal.getNumOccurrences() ||
       gpuBinary.getNumOccurrences()))
    usageError("--gpu-arch, --gpu-binary and --cuda-device need "
               "--validate=gpu");
  if (validate == ValidateTarget::Gpu &&
      allocationMode == AllocationMode::Compiler)
    usageError("--validate=gpu does not support --allocation-mode=compiler "
               "yet");
  if (!(learningRate > 0) || std::isinf(learningRate))
    usageError("--lr must be a positive number");
  for (const std::string &item : inputData) {
    auto [name, file] = llvm::StringRef(item).split('=');
    if (name.empty() || file.empty())
      usageError("--input-data expects NAME=FILE.npy, got '" + item + "'");
    if (!llvm::sys::fs::exists(file))
      usageError("--input-data " + name + ": no file " + file);
  }
  if (!(regressionThreshold >= 0) || std::isinf(regressionThreshold))
    usageError("--regression-threshold must be a percentage >= 0");
  if (timeline && format == OutputFormat::Mlir)
    usageError("--timeline is part of a report: use --format=text or "
               "--format=json");

  // Options that the chosen front end cannot apply are errors, not ignored.
  bool fromZoo = !zooName.empty();
  bool hasFile = inputFilename.getNumOccurrences() > 0;
  if (fromZoo && hasFile)
    usageError("give a model file or --zoo, not both");
  if (fromZoo && zooName == "list")
    return;
  bool onnx =
      !fromZoo && (importKind == InputKind::Onnx ||
                   (importKind == InputKind::Auto &&
                    llvm::sys::path::extension(inputFilename) == ".onnx"));
  bool cxx = !fromZoo &&
             (importKind == InputKind::Cxx ||
              (importKind == InputKind::Auto && isCxxSource(inputFilename)));
  auto notFor = [](const cl::Option &opt, llvm::StringRef what) {
    if (opt.getNumOccurrences())
      usageError("--" + opt.ArgStr + " does not apply to " + what);
  };
  if (!cxx) {
    llvm::StringRef what = "this input: they are options of C++ models";
    notFor(cxxModule, what);
    notFor(cxxInputs, what);
    notFor(cxxArgs, what);
    notFor(cxxCompileCommands, what);
    if (!cxxFlags.empty())
      usageError("compile flags after `--` apply to C++ models only");
  }
  if (cxx) {
    llvm::StringRef what = "a C++ model: give forward()'s input shapes with "
                           "--input (and --batch to rebind dimension 0)";
    notFor(imageSize, what);
    notFor(seqLen, what);
    notFor(numClasses, what);
    notFor(dimBindings, what);
    notFor(onnxBuffers, "a C++ model");
    if (cxxModule.empty())
      usageError("a C++ model needs --module=NAME (its TORCH_MODULE holder "
                 "or Impl class)");
    if (cxxInputs.empty())
      usageError("a C++ model needs --input=SHAPE for each tensor argument "
                 "of forward() (e.g. --input=8x3x224x224)");
    if (!cxxCompileCommands.empty() && !cxxFlags.empty())
      usageError("give compile flags after `--` or --compile-commands, not "
                 "both");
  } else if (fromZoo) {
    notFor(dimBindings, "zoo models (use --batch, --seq, --image-size)");
    notFor(onnxBuffers, "zoo models");
  } else if (onnx) {
    notFor(imageSize,
           "an ONNX model: its input shapes are in the file "
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

/// Warnings the front end gave while importing (SARIF results).
std::vector<vram::ImportFinding> importFindings;

/// Rebuilds the model at another batch size (zoo and ONNX inputs), for the
/// budget lint's suggestions and --fit-batch; null for .mlir input.
std::function<OwningOpRef<ModuleOp>(int64_t)> rebuildModel;
/// Evaluates the step with another optimizer implementation (lint
/// suggestions); unset for the run the user asked for.
std::optional<vram::nn::OptimizerImpl> implementationOverride;
/// Scenario changes the budget lint tries in place of the flags' values.
std::optional<vram::nn::Precision> precisionOverride;
std::optional<double> freezeFirstOverride;
std::optional<std::vector<std::string>> checkpointOverride;

vram::BuildStepOptions buildStepOptions() {
  vram::BuildStepOptions options;
  options.mode = mode;
  options.optimizer = optimizer;
  // Without --optimizer-impl, the implementation the modelled PyTorch picks.
  options.implementation =
      implementationOverride ? *implementationOverride
      : optimizerImpl.getNumOccurrences()
          ? optimizerImpl.getValue()
          : vram::nn::getDefaultOptimizerImpl({torchVersion, device});
  options.weightDecay = weightDecay;
  options.loss = lossKind;
  options.flattenLogits = flattenLogits;
  options.setToNone = setToNone;
  options.inputRequiresGrad = inputRequiresGrad;
  options.torchVersion = torchVersion;
  options.cudnnWorkspace = cudnnWorkspace;
  options.device = device;
  return options;
}

/// Runs the pipeline on `module` and writes IR or the report.
/// The metric --budget is checked against.
vram::BudgetMetric getBudgetMetric() {
  switch (budgetMetric) {
  case BudgetMetricFlag::Exact:
    return vram::BudgetMetric::Exact;
  case BudgetMetricFlag::Allocated:
    return vram::BudgetMetric::Allocated;
  case BudgetMetricFlag::Reserved:
    return vram::BudgetMetric::Reserved;
  case BudgetMetricFlag::Device:
    return vram::BudgetMetric::Device;
  case BudgetMetricFlag::Default:
    break;
  }
  return vram::getDefaultBudgetMetric(usesCudaAllocator(),
                                      device == vram::nn::Device::Cuda);
}

llvm::StringRef getBudgetMetricName() {
  return vram::stringifyBudgetMetric(getBudgetMetric());
}

std::unique_ptr<vram::AllocatorModel> makeAllocator() {
  if (usesCudaAllocator())
    return std::make_unique<vram::CudaCachingAllocator>();
  return std::make_unique<vram::ExactAllocator>();
}

LogicalResult buildStep(ModuleOp module,
                        const PassPipelineCLParser &passPipeline,
                        bool wantsStep);

/// The function a budget is checked on: `@step`, else `@forward`.
FailureOr<func::FuncOp> findChecked(ModuleOp module) {
  auto step = module.lookupSymbol<func::FuncOp>("step");
  if (!step)
    step = module.lookupSymbol<func::FuncOp>("forward");
  if (!step)
    return module.emitError("no @step or @forward function to check");
  return step;
}

/// `memory`'s peak under the budget metric.
int64_t budgetMetricOf(const vram::MemoryAnalysis &memory) {
  std::unique_ptr<vram::AllocatorModel> allocator = makeAllocator();
  std::optional<vram::DeviceModel> gpu = getDeviceModel();
  return vram::computeMemoryMetrics(memory, *allocator, gpu ? &*gpu : nullptr)
      .get(getBudgetMetric());
}

/// The step's memory under the budget metric, or failure.
FailureOr<int64_t> measureBudgetMetric(ModuleOp module) {
  FailureOr<func::FuncOp> step = findChecked(module);
  if (failed(step))
    return failure();
  vram::MemoryAnalysis memory(*step);
  if (memory.failed())
    return failure();
  return budgetMetricOf(memory);
}

/// The step of `module` built again from a fresh model, measured; failure
/// (quietly) when that cannot be done.
FailureOr<int64_t> measureRebuilt(int64_t batchSize, MLIRContext *ctx,
                                  const PassPipelineCLParser *pipeline) {
  ScopedDiagnosticHandler quiet(ctx, [](Diagnostic &) { return success(); });
  OwningOpRef<ModuleOp> module = rebuildModel(batchSize);
  if (!module || failed(buildStep(*module, *pipeline, true)))
    return failure();
  return measureBudgetMetric(*module);
}

const PassPipelineCLParser *activePipeline = nullptr;

/// Remarks at the peak op saying what would fit, each evaluated by running
/// the pipeline again: the largest batch size, a fused optimizer.
void suggestFixes(func::FuncOp step, const vram::MemoryAnalysis &memory,
                  int64_t limit) {
  if (!rebuildModel || !activePipeline)
    return;
  MLIRContext *ctx = step.getContext();
  Location loc =
      memory.getPeakOp() ? memory.getPeakOp()->getLoc() : step.getLoc();
  std::optional<int64_t> current = vram::getBatchSize(step);
  auto measure = [&](int64_t b) -> FailureOr<int64_t> {
    FailureOr<int64_t> used = measureRebuilt(b, ctx, activePipeline);
    return failed(used) ? FailureOr<int64_t>(INT64_MAX) : used;
  };
  FailureOr<std::optional<int64_t>> best = vram::findLargestBatch(
      measure, limit, current ? std::max<int64_t>(*current, 1) : 1 << 20);
  if (succeeded(best) && *best)
    emitRemark(loc) << "batch size " << **best << " fits the budget";
  else if (succeeded(best))
    emitRemark(loc) << "not even batch size 1 fits the budget";
  if (mode != vram::nn::StepMode::Train || !current)
    return;
  // Each change is measured by building the step again with it.
  auto tryChange = [&](llvm::StringRef flag, auto &override, auto value) {
    override = value;
    FailureOr<int64_t> used = measureRebuilt(*current, ctx, activePipeline);
    override.reset();
    if (succeeded(used))
      emitRemark(loc) << flag << " needs " << vram::formatByteSize(*used)
                      << (*used <= limit ? ": fits" : ": does not fit either");
  };
  if (buildStepOptions().implementation != vram::nn::OptimizerImpl::Fused)
    tryChange("--optimizer-impl=fused", implementationOverride,
              vram::nn::OptimizerImpl::Fused);
  if (precision == vram::nn::Precision::Fp32 &&
      device == vram::nn::Device::Cuda)
    tryChange("--precision=amp-fp16", precisionOverride,
              vram::nn::Precision::AmpFp16);
  if (freezePatterns.empty() && freezeFirst == 0 &&
      !loraSpec.getNumOccurrences())
    tryChange("--freeze-first=0.5 (freezing the first half of the modules)",
              freezeFirstOverride, 0.5);
  if (checkpointModules.empty())
    tryChange("--checkpoint='*' (checkpointing every top-level module)",
              checkpointOverride, std::vector<std::string>{"*"});
}

/// --budget: an error at the peak op when over, a one-line margin otherwise.
LogicalResult lintBudget(ModuleOp module) {
  FailureOr<func::FuncOp> step = findChecked(module);
  if (failed(step))
    return failure();
  vram::MemoryAnalysis memory(*step);
  if (memory.failed())
    return failure();
  int64_t used = budgetMetricOf(memory);
  int64_t limit = getBudgetBytes();
  if (failed(vram::checkBudget(*step, memory, used, limit,
                               getBudgetMetricName()))) {
    suggestFixes(*step, memory, limit);
    return failure();
  }
  llvm::errs() << llvm::formatv(
      "within budget: {0} of {1} ({2}), margin {3}\n",
      vram::formatByteSize(used), vram::formatByteSize(limit),
      getBudgetMetricName(), vram::formatByteSize(limit - used));
  return success();
}

LogicalResult processModule(ModuleOp module,
                            const PassPipelineCLParser &passPipeline,
                            llvm::StringRef modelName, llvm::raw_ostream &os) {
  // A report, or an explicit --mode or --budget, builds the step when the
  // pipeline did not; a report without --mode is about training.
  bool wantsStep = format != OutputFormat::Mlir || mode.getNumOccurrences() ||
                   !checkpointModules.empty() || hasBudget() ||
                   traceFile.getNumOccurrences() ||
                   validate != ValidateTarget::None;
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
  if (failed(buildStep(module, passPipeline, wantsStep)))
    return failure();
  bool overBudget = hasBudget() && failed(lintBudget(module));
  vram::ReportOptions options;
  options.modelName = modelName.str();
  if (auto name = module->getAttrOfType<StringAttr>(
          vram::nn::NNDialect::kModelAttrName))
    options.modelName = name.str();
  options.flops = flopConvention;
  options.allocator = usesCudaAllocator() ? vram::nn::AllocatorKind::PytorchCuda
                                          : vram::nn::AllocatorKind::Exact;
  options.device = getDeviceModel();
  options.timeline = timeline;
  options.topTensors = topTensors;
  options.depth = layerDepth;
  options.comparePath = compareWith;
  options.regressionThreshold = regressionThreshold / 100;
  options.inputPath =
      zooName.empty() ? inputFilename.getValue() : "zoo:" + zooName.getValue();
  options.importFindings = importFindings;
  if (hasBudget())
    if (FailureOr<int64_t> used = measureBudgetMetric(module); succeeded(used))
      options.budget = vram::BudgetFinding{getBudgetBytes(), *used,
                                           getBudgetMetricName().str()};
  bool validationFailed = false;
#ifdef VRAM_ENABLE_EXECUTION
  if (validate == ValidateTarget::Cpu ||
      validate == ValidateTarget::GpuEmulated) {
    bool emulated = validate == ValidateTarget::GpuEmulated;
    vram::CpuValidationOptions run;
    if (emulated)
      run.loops = vram::CpuValidationOptions::Loops::GpuKernels;
    run.lowering.lr = learningRate;
    bool compilerMode = allocationMode == AllocationMode::Compiler;
    run.allocationMode = compilerMode ? vram::AllocationMode::Compiler
                                      : vram::AllocationMode::PyTorch;
    run.dumpDir = dumpDir;
    for (const std::string &item : inputData) {
      auto [name, file] = llvm::StringRef(item).split('=');
      run.inputFiles[name] = file.str();
    }
    for (const auto &entry : modelInitializers)
      run.initialValues[entry.getKey()] = entry.getValue();
    FailureOr<vram::CpuValidationResult> result =
        vram::validateOnCpu(module, run);
    if (failed(result))
      return failure();
    vram::ValidationFinding v;
    v.device = emulated ? "gpu-emulated" : "cpu";
    v.allocationMode = compilerMode ? "compiler" : "pytorch";
    v.measuredPeakBytes = result->measuredPeakBytes;
    v.predictedPeakBytes = result->predictedPeakBytes;
    v.allocations = result->allocations;
    v.loss = result->loss;
    v.wallSeconds = result->wallSeconds;
    for (const vram::PhaseComparison &p : result->phases)
      v.phases.push_back({vram::nn::stringifyEnum(p.phase).str(),
                          p.measuredPeakBytes, p.predictedPeakBytes});
    options.validation = v;
    // The compiler mode measures a different policy: no equality expected.
    if (!compilerMode &&
        (result->measuredPeakBytes != result->predictedPeakBytes ||
         result->firstMismatchOp)) {
      validationFailed = true;
      auto step = module.lookupSymbol<func::FuncOp>("step");
      InFlightDiagnostic diag = emitError(step.getLoc());
      if (result->measuredPeakBytes != result->predictedPeakBytes)
        diag << "validation: measured peak " << result->measuredPeakBytes
             << " bytes, predicted " << result->predictedPeakBytes
             << " bytes: the executed step and the memory analysis disagree";
      else
        diag << "validation: the peaks agree (" << result->measuredPeakBytes
             << " bytes) but the live bytes of an op differ: the executed "
                "step and the memory analysis disagree";
      if (result->firstMismatchOp)
        diag.attachNote(vram::MemoryAnalysis(step)
                            .getOp(*result->firstMismatchOp)
                            ->getLoc())
            << "first difference at op " << *result->firstMismatchOp << " ("
            << result->firstMismatchOpName << "): measured "
            << result->mismatchMeasured << " bytes live, predicted "
            << result->mismatchPredicted;
    }
  }
#endif
#ifdef VRAM_ENABLE_CUDA_RUNTIME
  if (validate == ValidateTarget::Gpu) {
    vram::GpuValidationOptions run;
    run.step.lowering.lr = learningRate;
    for (const std::string &item : inputData) {
      auto [name, file] = llvm::StringRef(item).split('=');
      run.step.inputFiles[name] = file.str();
    }
    for (const auto &entry : modelInitializers)
      run.step.initialValues[entry.getKey()] = entry.getValue();
    run.step.dumpDir = dumpDir;
    run.lowering.chip = gpuArch;
    run.lowering.format = gpuBinary == GpuBinary::Cubin ? "bin" : "isa";
    run.deviceOrdinal = cudaDeviceOrdinal;
    run.flopConvention = flopConvention;
    // The context the device model predicts (--gpu, --cuda-lazy-loading,
    // --context-bytes), on any device choice.
    vram::DeviceModel deviceModel = vram::makeDeviceModel(
        gpuName.getNumOccurrences() ? vram::lookupGpu(gpuName) : nullptr,
        cudaLazyLoading);
    if (contextBytes.getNumOccurrences())
      deviceModel.contextBytes = *vram::parseByteSize(contextBytes);
    run.predictedContextBytes = deviceModel.contextBytes;
    std::string noDevice;
    FailureOr<vram::GpuValidationResult> result =
        vram::validateOnGpu(module, run, noDevice);
    if (!noDevice.empty()) {
      llvm::WithColor::error(llvm::errs(), "vram-opt")
          << "no CUDA device: " << noDevice << "\n";
      return failure();
    }
    if (failed(result))
      return failure();
    vram::ValidationFinding v;
    v.device = "gpu";
    v.allocationMode = "pytorch";
    v.measuredPeakBytes = result->measuredAllocatedBytes;
    v.predictedPeakBytes = result->predictedAllocatedBytes;
    v.allocations = result->allocations;
    v.loss = result->loss;
    v.wallSeconds = result->wallSeconds;
    vram::GpuValidationFinding g;
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
    v.gpu = g;
    options.validation = v;
    // Allocated and reserved follow from the same allocator decisions over
    // the same alloc/free stream: any difference is a bug. The device
    // figure depends on the driver (context size): reported, not checked.
    if (result->measuredAllocatedBytes != result->predictedAllocatedBytes ||
        result->measuredReservedBytes != result->predictedReservedBytes ||
        result->firstMismatchOp) {
      validationFailed = true;
      auto step = module.lookupSymbol<func::FuncOp>("step");
      InFlightDiagnostic diag = emitError(step.getLoc());
      diag << "validation: measured allocated "
           << result->measuredAllocatedBytes << " / reserved "
           << result->measuredReservedBytes << " bytes, predicted "
           << result->predictedAllocatedBytes << " / "
           << result->predictedReservedBytes
           << ": the executed step and the memory analysis disagree";
      if (result->firstMismatchOp)
        diag.attachNote(vram::MemoryAnalysis(step)
                            .getOp(*result->firstMismatchOp)
                            ->getLoc())
            << "first difference at op " << *result->firstMismatchOp << " ("
            << result->firstMismatchOpName << "): measured "
            << result->mismatchMeasured << " bytes allocated, predicted "
            << result->mismatchPredicted;
    }
  }
#endif
  if (traceFile.getNumOccurrences()) {
    std::string error;
    auto trace = openOutputFile(traceFile, &error);
    if (!trace)
      usageError(error);
    if (failed(vram::writeTrace(module, options, trace->os())))
      return failure();
    trace->keep();
  }
  if (format == OutputFormat::Mlir) {
    // A lint, trace or validation run prints its output, not IR, unless IR
    // was asked for.
    if (options.validation && !format.getNumOccurrences())
      vram::writeValidationText(*options.validation, os);
    else if ((!hasBudget() && !traceFile.getNumOccurrences()) ||
             format.getNumOccurrences()) {
      module.print(os);
      os << "\n";
    }
    return failure(overBudget || validationFailed);
  }
  vram::ReportFormat reportFormat =
      format == OutputFormat::Json       ? vram::ReportFormat::Json
      : format == OutputFormat::Markdown ? vram::ReportFormat::Markdown
      : format == OutputFormat::Sarif    ? vram::ReportFormat::Sarif
      : format == OutputFormat::Html     ? vram::ReportFormat::Html
                                         : vram::ReportFormat::Text;
  if (failed(vram::writeReport(module, options, reportFormat, os)))
    return failure();
  return failure(overBudget || validationFailed);
}

LogicalResult buildStep(ModuleOp module,
                        const PassPipelineCLParser &passPipeline,
                        bool wantsStep) {
  MLIRContext *ctx = module.getContext();
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
  if (failed(pm.run(module)))
    return failure();
  // Scenario flags transform the forward model, before the step is built:
  // which parameters train (freezing, LoRA), then the precision (autocast
  // caches only the casts of trainable parameters).
  PassManager scenarioPm(ctx, ModuleOp::getOperationName());
  if (failed(applyPassManagerCLOptions(scenarioPm)))
    return failure();
  double firstFraction = freezeFirstOverride.value_or(freezeFirst);
  if (!freezePatterns.empty() || firstFraction > 0) {
    vram::FreezeOptions freeze;
    freeze.patterns.assign(freezePatterns.begin(), freezePatterns.end());
    freeze.firstFraction = firstFraction;
    scenarioPm.addPass(vram::createFreeze(freeze));
  }
  // LoRA adds its adapters and freezes the rest (get_peft_model), before
  // autocast decides which weight casts it caches.
  if (loraSpec.getNumOccurrences())
    scenarioPm.addPass(vram::createLora(parseLora(loraSpec)));
  vram::nn::Precision stepPrecision = precisionOverride.value_or(precision);
  if (stepPrecision != vram::nn::Precision::Fp32) {
    vram::PrecisionOptions options;
    options.precision = stepPrecision;
    scenarioPm.addPass(vram::createPrecision(options));
  }
  if (scenarioPm.size()) {
    if (module.lookupSymbol("step"))
      usageError("--freeze, --freeze-first, --lora and --precision apply to "
                 "the forward model: the pipeline already built the step");
    if (failed(scenarioPm.run(module)))
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
  // Checkpointing rewrites the built training step.
  std::vector<std::string> checkpointed(checkpointModules.begin(),
                                        checkpointModules.end());
  if (checkpointOverride)
    checkpointed = *checkpointOverride;
  if (!checkpointed.empty()) {
    auto step = module.lookupSymbol<func::FuncOp>("step");
    if (!step || vram::getStepMode(step) != vram::nn::StepMode::Train)
      usageError("--checkpoint applies to a training step (--mode=train)");
    PassManager checkpointPm(ctx, ModuleOp::getOperationName());
    if (failed(applyPassManagerCLOptions(checkpointPm)))
      return failure();
    vram::CheckpointOptions checkpoint;
    checkpoint.modules.assign(checkpointed.begin(), checkpointed.end());
    checkpointPm.addPass(vram::createCheckpoint(checkpoint));
    if (failed(checkpointPm.run(module)))
      return failure();
  }
  return success();
}

/// --fit-batch: the largest batch whose step fits --budget, each candidate
/// built by `makeModel` and run through the same pipeline.
int fitBatchSize(llvm::function_ref<OwningOpRef<ModuleOp>(int64_t)> makeModel,
                 const PassPipelineCLParser &passPipeline,
                 MLIRContext &context) {
  int64_t limit = getBudgetBytes();
  auto measure = [&](int64_t candidate) -> FailureOr<int64_t> {
    // A batch so large that sizes overflow does not fit; only batch 1's
    // errors are the user's.
    std::optional<ScopedDiagnosticHandler> quiet;
    if (candidate > 1)
      quiet.emplace(&context, [](Diagnostic &) { return success(); });
    OwningOpRef<ModuleOp> module = makeModel(candidate);
    if (!module || failed(buildStep(*module, passPipeline, true))) {
      if (candidate > 1)
        return INT64_MAX;
      return failure();
    }
    FailureOr<int64_t> used = measureBudgetMetric(*module);
    if (failed(used) && candidate > 1)
      return INT64_MAX;
    return used;
  };
  FailureOr<std::optional<int64_t>> best =
      vram::findLargestBatch(measure, limit);
  if (failed(best))
    return 1;
  if (!*best) {
    llvm::errs() << "vram-opt: even batch 1 exceeds the budget of "
                 << vram::formatByteSize(limit) << " (" << getBudgetMetricName()
                 << ")\n";
    return 1;
  }
  llvm::outs() << **best << "\n";
  return 0;
}

/// Whether `loc` names a position in a file (the ONNX importer's file
/// locations have line 0: they name the file, not a position).
bool hasFileLocation(Location loc) {
  bool found = false;
  loc->walk([&](Location inner) {
    auto file = dyn_cast<FileLineColLoc>(inner);
    found |= file && file.getLine() > 0;
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
            std::string message = diag.str();
            // Name the layer, unless the message already does (the ONNX
            // importer's "node '...' (Op): ...").
            if (auto name = dyn_cast<NameLoc>(diag.getLocation()))
              if (!StringRef(message).contains(name.getName().getValue()))
                os << name.getName().getValue() << ": ";
            os << message << "\n";
          };
          print(d);
          for (Diagnostic &note : d.getNotes())
            print(note);
          return success();
        }) {}

private:
  ScopedDiagnosticHandler handler;
};

/// The diagnostics of a front end's import: printed with their locations
/// (file-less ones named after the input), and warnings also recorded for
/// the SARIF report.
class ImportDiagnostics {
public:
  ImportDiagnostics(MLIRContext *ctx, std::string input)
      : handler(sourceMgr, ctx), named(ctx, std::move(input)),
        recordWarnings(ctx, [](Diagnostic &d) {
          if (d.getSeverity() == DiagnosticSeverity::Warning)
            importFindings.push_back(
                {vram::getFindingRule(d).value_or("").str(), d.str(),
                 d.getLocation()});
          return failure(); // and still print it
        }) {
    ctx->printOpOnDiagnostic(false);
  }

private:
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler;
  NamedLocationDiagnostics named;
  ScopedDiagnosticHandler recordWarnings;
};

void registerDialects(DialectRegistry &registry) {
  registry.insert<vram::nn::NNDialect, func::FuncDialect>();
#ifdef VRAM_ENABLE_EXECUTION
  vram::registerExecutionDialects(registry);
#else
  vram::registerLowerToTensorInterfaces(registry);
#endif
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
  vram::registerVramConversionPasses();
#ifdef VRAM_ENABLE_EXECUTION
  vram::registerVramExecutionPasses();
  vram::registerLowerToGpuPipeline();
#endif
#ifdef VRAM_ENABLE_ONNX
  vram::onnx_import::registerPasses();
#endif
  PassPipelineCLParser passPipeline("", "Compiler passes to run");

  // --help shows vram-opt's own options by group; --help-mlir also the MLIR
  // and LLVM ones (pass pipelines, IR printing, debugging).
  std::vector<char *> args(argv, argv + argc);
  std::string helpFlag = "--help";
  bool helpMlir = false;
  for (char *&arg : args)
    if (llvm::StringRef(arg) == "--help-mlir" ||
        llvm::StringRef(arg) == "-help-mlir") {
      arg = helpFlag.data();
      helpMlir = true;
    }
  if (!helpMlir)
    cl::HideUnrelatedOptions({&modelCat, &cxxCat, &stepCat, &scenarioCat,
                              &outputCat, &validateCat, &lintCat});
  // Compile flags of a C++ model follow `--`, as for Clang tools.
  for (auto it = args.begin(); it != args.end(); ++it)
    if (llvm::StringRef(*it) == "--") {
      cxxFlags.assign(it + 1, args.end());
      args.erase(it, args.end());
      break;
    }
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "vram-opt " << VRAM_OPT_VERSION
       << ": GPU memory and FLOPs of models, built on MLIR\n";
    os << "  LLVM/MLIR " << LLVM_VERSION_STRING << "\n";
  });
  argc = args.size();
  argv = args.data();

  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  if (!cl::ParseCommandLineOptions(
          argc, argv,
          "vram-opt: GPU memory and FLOPs of models\n\n"
          "  --help-mlir also lists MLIR's options "
          "(pass pipelines, IR printing)\n",
          &errorStream)) {
    llvm::errs() << errors;
    return 2;
  }
  // A model with no pass pipeline gets the text report; IR is printed with
  // --format=mlir, when passes run, in diagnostics tests, and a lint or trace
  // run prints just its own output.
  if (!format.getNumOccurrences() && !passPipeline.hasAnyOccurrences() &&
      !verifyDiagnostics && !hasBudget() && !traceFile.getNumOccurrences() &&
      validate == ValidateTarget::None)
    format = OutputFormat::Text;
  checkOptions();
#ifdef VRAM_ENABLE_CUDA_RUNTIME
  if (listCudaDevices) {
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
    auto zooModel = [&](int64_t candidate) -> OwningOpRef<ModuleOp> {
      vram::zoo::ZooOptions candidateOptions = zooOptions;
      candidateOptions.batch = candidate;
      auto module = vram::zoo::buildModel(&context, zooName, candidateOptions);
      if (!module) {
        llvm::consumeError(module.takeError());
        return nullptr;
      }
      return std::move(*module);
    };
    if (imageSize > 0)
      zooOptions.imageSize = imageSize;
    if (seqLen > 0)
      zooOptions.seq = seqLen;
    if (numClasses > 0)
      zooOptions.numClasses = numClasses;
    auto module = vram::zoo::buildModel(&context, zooName, zooOptions);
    if (!module)
      usageError(llvm::toString(module.takeError()));
    if (fitBatch)
      return fitBatchSize(zooModel, passPipeline, context);
    rebuildModel = zooModel;
    activePipeline = &passPipeline;
    if (failed(processModule(**module, passPipeline, zooName, output->os())))
      return 1;
    output->keep();
    return 0;
  }

  auto file = openInputFile(inputFilename, &errorMessage);
  if (!file)
    usageError(errorMessage);
  llvm::StringRef stem = llvm::sys::path::stem(inputFilename);

  bool isCxx = importKind == InputKind::Cxx ||
               (importKind == InputKind::Auto && isCxxSource(inputFilename));
  if (isCxx) {
#ifdef VRAM_ENABLE_CXX
    MLIRContext context(registry);
    context.loadAllAvailableDialects();
    ImportDiagnostics diagnostics(&context, inputFilename);
    vram::cxx_import::CxxModuleOptions moduleOptions;
    for (const std::string &text : cxxInputs) {
      auto spec = vram::cxx_import::parseInputSpec(text);
      if (!spec)
        usageError("--input expects a shape such as 8x3x224x224, got '" + text +
                   "' (an element type may follow: 8x128:i64; f32, f16, "
                   "bf16, f64, i64, i32, i1)");
      moduleOptions.inputs.push_back(*spec);
    }
    vram::cxx_import::CxxSourceOptions sourceOptions;
    sourceOptions.sourceFile = inputFilename;
    sourceOptions.compileFlags = cxxFlags;
    sourceOptions.compileCommands = cxxCompileCommands;
    std::unique_ptr<vram::cxx_import::CxxTranslationUnit> unit =
        vram::cxx_import::CxxTranslationUnit::parse(&context, sourceOptions);
    if (!unit)
      return 1;
    moduleOptions.moduleName = cxxModule;
    moduleOptions.constructorArgs.assign(cxxArgs.begin(), cxxArgs.end());
    if (batch > 0)
      moduleOptions.batch = batch;
    moduleOptions.training = mode == vram::nn::StepMode::Train;
    // The translation unit is parsed once; the module is extracted again at
    // each batch size the budget lint tries.
    auto cxxModel = [&](int64_t candidate) -> OwningOpRef<ModuleOp> {
      vram::cxx_import::CxxModuleOptions candidateOptions = moduleOptions;
      candidateOptions.batch = candidate;
      return unit->importModule(&context, candidateOptions);
    };
    if (fitBatch)
      return fitBatchSize(cxxModel, passPipeline, context);
    OwningOpRef<ModuleOp> module = unit->importModule(&context, moduleOptions);
    if (!module)
      return 1;
    rebuildModel = cxxModel;
    activePipeline = &passPipeline;
    if (failed(processModule(*module, passPipeline, cxxModule, output->os())))
      return 1;
    output->keep();
    return 0;
#else
    usageError("this vram-opt was built without the C++ front end");
#endif
  }

  bool isOnnx = importKind == InputKind::Onnx ||
                (importKind == InputKind::Auto &&
                 llvm::sys::path::extension(inputFilename) == ".onnx");
  if (isOnnx) {
#ifdef VRAM_ENABLE_ONNX
    MLIRContext context(registry);
    context.loadAllAvailableDialects();
    ImportDiagnostics diagnostics(&context, inputFilename);
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
    llvm::StringSet<> symbolicDims;
    onnxOptions.symbolicDims = &symbolicDims;
    if (fitBatch) {
      auto onnxModel = [&](int64_t candidate) -> OwningOpRef<ModuleOp> {
        vram::onnx_import::OnnxImportOptions candidateOptions = onnxOptions;
        candidateOptions.batch = candidate;
        OwningOpRef<ModuleOp> module = vram::onnx_import::importOnnxModel(
            &context, file->getBuffer(), inputFilename, candidateOptions);
        // A graph whose batch is static cannot be searched.
        if (module)
          if (auto forward = module->lookupSymbol<func::FuncOp>("forward"))
            if (vram::getBatchSize(forward) != candidate)
              usageError("--fit-batch needs a model whose batch dimension "
                         "can be bound; this graph's is static");
        return module;
      };
      return fitBatchSize(onnxModel, passPipeline, context);
    }
    OwningOpRef<ModuleOp> module = vram::onnx_import::importOnnxModel(
        &context, file->getBuffer(), inputFilename, onnxOptions);
#ifdef VRAM_ENABLE_EXECUTION
    // The executed step starts from the initializers' values.
    if (module && validate != ValidateTarget::None) {
      llvm::StringMap<vram::onnx_import::InitializerData> initializers;
      std::string error;
      if (vram::onnx_import::readInitializers(file->getBuffer(), initializers,
                                              error))
        for (auto &entry : initializers) {
          vram::NpyArray &value = modelInitializers[entry.getKey()];
          value.descr = entry.getValue().descr;
          value.shape = entry.getValue().shape;
          value.data = std::move(entry.getValue().bytes);
        }
    }
#endif
    // A --dim for a name the graph's inputs lack cannot apply.
    for (const auto &binding : onnxOptions.dims)
      if (!symbolicDims.contains(binding.getKey())) {
        std::string names;
        for (const auto &name : symbolicDims)
          names += (names.empty() ? "" : ", ") + name.getKey().str();
        usageError("--dim " + binding.getKey() +
                   " does not apply: the model's symbolic dimensions are " +
                   (names.empty() ? std::string("none") : names));
      }
    onnxOptions.symbolicDims = nullptr;
    if (!module)
      return 1;
    // Suggestions re-import the graph at other batch sizes when its batch
    // dimension is symbolic.
    rebuildModel = [&](int64_t candidate) -> OwningOpRef<ModuleOp> {
      vram::onnx_import::OnnxImportOptions candidateOptions = onnxOptions;
      candidateOptions.batch = candidate;
      OwningOpRef<ModuleOp> rebuilt = vram::onnx_import::importOnnxModel(
          &context, file->getBuffer(), inputFilename, candidateOptions);
      if (rebuilt)
        if (auto forward = rebuilt->lookupSymbol<func::FuncOp>("forward"))
          if (vram::getBatchSize(forward) != candidate)
            return nullptr;
      return rebuilt;
    };
    activePipeline = &passPipeline;
    if (failed(processModule(*module, passPipeline, stem, output->os())))
      return 1;
    output->keep();
    return 0;
#else
    usageError("this vram-opt was built without the ONNX importer");
#endif
  }

  if (fitBatch)
    usageError("--fit-batch needs a model whose batch can be bound: a zoo "
               "model or an ONNX graph with a symbolic batch dimension");
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
