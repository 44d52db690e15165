//===- CpuRunner.cpp - run a built step on the CPU, measured --------------===//
//
// The pipeline (see CpuRunner.h), the instrumented allocator the JIT-compiled
// step calls, the step's arguments (from .npy files or a documented
// deterministic initialisation, docs/Execution.md) and the comparison with
// the memory analysis, op by op.
//
//===----------------------------------------------------------------------===//

#include "vram/Execution/CpuRunner.h"
#include "vram/Analysis/MemoryAnalysis.h"
#include "vram/Analysis/StepInfo.h"
#include "vram/Conversion/NNToTensor.h"
#include "vram/Dialect/NN/NNOps.h"
#include "vram/Execution/GpuLowering.h"
#include "vram/Execution/Npy.h"
#include "vram/Execution/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Linalg/Transforms/TilingInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>

using namespace mlir;
using namespace vram;

void vram::registerExecutionDialects(DialectRegistry &registry) {
  registry.insert<affine::AffineDialect, arith::ArithDialect,
                  bufferization::BufferizationDialect, cf::ControlFlowDialect,
                  linalg::LinalgDialect, LLVM::LLVMDialect, math::MathDialect,
                  memref::MemRefDialect, scf::SCFDialect, tensor::TensorDialect,
                  ub::UBDialect, vector::VectorDialect>();
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  linalg::registerTilingInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  vector::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerLowerToTensorInterfaces(registry);
  registerGpuLoweringDialects(registry);
}

//===----------------------------------------------------------------------===//
// The instrumented allocator
//===----------------------------------------------------------------------===//

namespace {

/// Live bytes of the running step: every heap buffer counts its requested
/// size; `opPeak[i]` is the most alive while op i of the step ran.
struct AllocationTracker {
  int64_t live = 0, peak = 0, count = 0;
  unsigned op = 0;
  std::vector<int64_t> opPeak;
  std::vector<bool> opSeen;
  llvm::DenseMap<void *, int64_t> sizes;
  bool badFree = false;

  void *allocate(uint64_t bytes, uint64_t alignment) {
    alignment = std::max<uint64_t>(alignment, 64);
    uint64_t rounded =
        (std::max<uint64_t>(bytes, 1) + alignment - 1) / alignment * alignment;
    void *p = std::aligned_alloc(alignment, rounded);
    if (!p)
      return nullptr;
    sizes[p] = bytes;
    live += bytes;
    ++count;
    peak = std::max(peak, live);
    note();
    return p;
  }
  void release(void *p) {
    auto it = sizes.find(p);
    if (it == sizes.end()) {
      badFree = true;
      return;
    }
    live -= it->second;
    sizes.erase(it);
    std::free(p);
  }
  void enter(unsigned index) {
    op = index;
    if (index < opSeen.size())
      opSeen[index] = true;
    note();
  }
  void note() {
    if (op < opPeak.size())
      opPeak[op] = std::max(opPeak[op], live);
  }
};

AllocationTracker *activeTracker = nullptr;

extern "C" void *vramJitAlloc(uint64_t bytes) {
  return activeTracker->allocate(bytes, 64);
}
extern "C" void *vramJitAlignedAlloc(uint64_t alignment, uint64_t bytes) {
  return activeTracker->allocate(bytes, alignment);
}
extern "C" void vramJitFree(void *p) { activeTracker->release(p); }
extern "C" void vramJitOp(int64_t index) { activeTracker->enter(index); }

//===----------------------------------------------------------------------===//
// Arguments and results
//===----------------------------------------------------------------------===//

using Slot = StepSlot;

int64_t elementBytes(Type t) { return getElementBytes(t); }

std::string npyDescr(Type t) {
  if (t.isF32())
    return "<f4";
  if (t.isF64())
    return "<f8";
  if (t.isF16())
    return "<f2";
  if (t.isInteger(64))
    return "<i8";
  if (t.isInteger(32))
    return "<i4";
  if (t.isInteger(1))
    return "|b1";
  return "";
}

uint64_t fnv1a(StringRef s) {
  uint64_t h = 1469598103934665603ull;
  for (char c : s)
    h = (h ^ (unsigned char)c) * 1099511628211ull;
  return h;
}

/// SplitMix64: a uniform double in [-1, 1).
double nextUniform(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return (z >> 11) * 0x1.0p-53 * 2 - 1;
}

template <typename T>
void fillFloats(T *p, int64_t n, uint64_t seed, double scale) {
  for (int64_t i = 0; i < n; ++i)
    p[i] = static_cast<T>(nextUniform(seed) * scale);
}

/// The deterministic default of a slot (docs/Execution.md).
void initialise(Slot &slot, int64_t numClasses) {
  RankedTensorType t = slot.type;
  int64_t n = t.getNumElements();
  Type et = t.getElementType();
  std::memset(slot.data, 0, n * elementBytes(et));
  uint64_t seed = fnv1a(slot.name);
  double scale = 0;
  if (slot.storage == "parameters") {
    int64_t fanIn = t.getRank() >= 2   ? n / t.getDimSize(0)
                    : t.getRank() == 1 ? t.getDimSize(0)
                                       : 1;
    scale = 1.0 / std::sqrt((double)std::max<int64_t>(fanIn, 1));
  } else if (slot.storage == "inputs") {
    scale = 1.0;
  } else if (slot.storage == "buffers") {
    if (StringRef(slot.name).ends_with("running_var") && et.isF32())
      std::fill_n(static_cast<float *>(slot.data), n, 1.0f);
    return;
  } else {
    return; // optimizer state: zero, the first step's
  }
  if (et.isF32()) {
    fillFloats(static_cast<float *>(slot.data), n, seed, scale);
  } else if (et.isF64()) {
    fillFloats(static_cast<double *>(slot.data), n, seed, scale);
  } else if (et.isInteger(64) && slot.name == "labels" && numClasses > 0) {
    auto *p = static_cast<int64_t *>(slot.data);
    for (int64_t i = 0; i < n; ++i)
      p[i] = (i * 7 + 3) % numClasses;
  }
}

/// Loads `path` into `slot`, checking its shape and dtype.
LogicalResult loadSlot(Location loc, Slot &slot, StringRef path) {
  llvm::Expected<NpyArray> array = readNpy(path);
  if (!array)
    return emitError(loc) << "--input-data " << slot.name << ": "
                          << toString(array.takeError());
  std::string want = npyDescr(slot.type.getElementType());
  if (array->descr != want)
    return emitError(loc) << "--input-data " << slot.name << ": " << path
                          << " has dtype '" << array->descr << "', expected '"
                          << want << "' (" << slot.type << ")";
  if (ArrayRef<int64_t>(array->shape) != slot.type.getShape())
    return emitError(loc) << "--input-data " << slot.name << ": " << path
                          << " has shape " << formatShape(array->shape)
                          << ", expected " << formatShape(slot.type.getShape());
  std::memcpy(slot.data, array->data.data(), array->data.size());
  return success();
}

/// The classes of the cross-entropy whose target is `labels`, 0 if none.
int64_t numClassesOf(func::FuncOp step, Value labels) {
  int64_t classes = 0;
  step.walk([&](nn::CrossEntropyOp ce) {
    if (ce.getTarget() == labels)
      classes = ce.getInput().getType().getDimSize(1);
  });
  return classes;
}

} // namespace

//===----------------------------------------------------------------------===//
// The run
//===----------------------------------------------------------------------===//

int64_t vram::getNumClasses(ModuleOp module) {
  auto step = module.lookupSymbol<func::FuncOp>("step");
  if (!step)
    return 0;
  Block &body = step.getBody().front();
  return body.getNumArguments() && getStepMode(step) == nn::StepMode::Train
             ? numClassesOf(step, body.getArguments().back())
             : 0;
}

int64_t vram::getElementBytes(Type t) {
  return (t.getIntOrFloatBitWidth() + 7) / 8;
}

FailureOr<TensorStep>
vram::lowerStepToTensors(ModuleOp module, const CpuValidationOptions &options) {
  auto step = module.lookupSymbol<func::FuncOp>("step");
  Location loc = step.getLoc();
  OwningOpRef<ModuleOp> lowered = module.clone();
  MLIRContext *ctx = module.getContext();
  PassManager toTensor(ctx);
  LowerToTensorOptions lowerOptions;
  lowerOptions.lr = options.lowering.lr;
  lowerOptions.momentum = options.lowering.momentum;
  lowerOptions.beta1 = options.lowering.beta1;
  lowerOptions.beta2 = options.lowering.beta2;
  lowerOptions.eps = options.lowering.eps;
  lowerOptions.markers = true;
  lowerOptions.returnGrads = !options.dumpDir.empty();
  toTensor.addPass(createLowerToTensor(lowerOptions));
  if (failed(toTensor.run(*lowered)))
    return failure();
  // Only the step is executed.
  for (Operation &op :
       llvm::make_early_inc_range(lowered->getBody()->getOperations()))
    if (auto f = dyn_cast<func::FuncOp>(op))
      if (f.getSymName() != "step" && !f.isExternal())
        f.erase();
  auto loweredStep = lowered->lookupSymbol<func::FuncOp>("step");
  std::vector<Slot> args, results;
  for (auto [i, type] : llvm::enumerate(loweredStep.getArgumentTypes())) {
    Slot s;
    s.type = cast<RankedTensorType>(type);
    if (auto name = loweredStep.getArgAttrOfType<StringAttr>(i, "vram.name"))
      s.name = name.str();
    if (auto kind = loweredStep.getArgAttrOfType<StringAttr>(i, "vram.storage"))
      s.storage = kind.str();
    args.push_back(s);
  }
  for (auto [i, type] : llvm::enumerate(loweredStep.getResultTypes())) {
    Slot s;
    s.type = cast<RankedTensorType>(type);
    if (auto name = loweredStep.getResultAttrOfType<StringAttr>(i, "vram.name"))
      s.name = name.str();
    results.push_back(s);
  }
  for (const auto &entry : options.inputFiles)
    if (llvm::none_of(args, [&](const Slot &s) {
          return s.name == entry.getKey() && s.storage != "optimizer_state";
        })) {
      std::string names;
      for (const Slot &s : args)
        if (s.storage == "inputs")
          names += (names.empty() ? "" : ", ") + s.name;
      return emitError(loc) << "--input-data " << entry.getKey()
                            << ": the step has no input or parameter of "
                               "that name (inputs: "
                            << names << ")";
    }

  TensorStep result;
  result.module = std::move(lowered);
  result.args = std::move(args);
  result.results = std::move(results);
  return result;
}

LogicalResult vram::dumpSlot(Location loc, StringRef dir,
                             const StepSlot &slot) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return emitError(loc) << "--dump: cannot create " << dir << ": "
                          << ec.message();
  SmallString<256> path(dir);
  llvm::sys::path::append(path, slot.name + ".npy");
  Type element = slot.type.getElementType();
  if (llvm::Error e =
          writeNpy(path, npyDescr(element), slot.type.getShape(), slot.data,
                   slot.type.getNumElements() * elementBytes(element)))
    return emitError(loc) << "--dump: " << toString(std::move(e));
  return success();
}

LogicalResult vram::initialiseArguments(Location loc,
                                        MutableArrayRef<StepSlot> args,
                                        const CpuValidationOptions &options,
                                        int64_t numClasses) {
  for (Slot &s : args) {
    auto file = options.inputFiles.find(s.name);
    auto initial = options.initialValues.find(s.name);
    if (file != options.inputFiles.end()) {
      if (failed(loadSlot(loc, s, file->getValue())))
        return failure();
    } else if (initial != options.initialValues.end() &&
               s.storage != "optimizer_state" && s.storage != "inputs") {
      const NpyArray &value = initial->getValue();
      if (value.descr != npyDescr(s.type.getElementType()) ||
          ArrayRef<int64_t>(value.shape) != s.type.getShape())
        return emitError(loc)
               << "the model's initializer " << s.name << " (" << value.descr
               << ", " << formatShape(value.shape)
               << ") does not match the parameter (" << s.type << ")";
      std::memcpy(s.data, value.data.data(), value.data.size());
    } else {
      initialise(s, numClasses);
    }
  }
  // Class indices outside [0, C) would index out of bounds.
  if (numClasses > 0 && !args.empty() && args.size() > 0) {
    for (const Slot &s : args)
      if (s.name == "labels" && s.type.getElementType().isInteger(64)) {
        auto *p = static_cast<const int64_t *>(s.data);
        for (int64_t i = 0; i < s.type.getNumElements(); ++i)
          if (p[i] < 0 || p[i] >= numClasses)
            return emitError(loc) << "--input-data labels: class index " << p[i]
                                  << " at position " << i << " is outside [0, "
                                  << numClasses << ")";
      }
  }

  return success();
}

FailureOr<std::unique_ptr<ExecutionEngine>>
vram::createStepEngine(ModuleOp lowered, bool tuneForHost,
                       llvm::function_ref<void(JitSymbolAdder)> bindSymbols) {
  Location loc = lowered.getLoc();
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  // The host's target machine, so that LLVM's cost models know its vector
  // registers (without one, the loop and SLP vectorizers see none).
  std::unique_ptr<llvm::TargetMachine> targetMachine;
  if (tuneForHost) {
    auto host = llvm::orc::JITTargetMachineBuilder::detectHost();
    auto machine = host ? host->createTargetMachine()
                        : llvm::Expected<std::unique_ptr<llvm::TargetMachine>>(
                              host.takeError());
    if (!machine)
      return emitError(loc) << "no JIT target for this host: "
                            << toString(machine.takeError());
    targetMachine = std::move(*machine);
  }
  // O1: resnet18 compiled 2.5x faster than at O2 and ran as fast. The
  // options hold a function_ref: the transformer must outlive create.
  std::function<llvm::Error(llvm::Module *)> optimize =
      makeOptimizingTransformer(1, 0, targetMachine.get());
  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = optimize;
  auto engine = ExecutionEngine::create(lowered, engineOptions);
  if (!engine)
    return emitError(loc) << "JIT compilation failed: "
                          << toString(engine.takeError());
  (*engine)->registerSymbols([&](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap map;
    bindSymbols([&](StringRef name, void *fn) {
      map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn),
                             llvm::JITSymbolFlags::Exported};
    });
    return map;
  });
  return std::move(*engine);
}

LogicalResult vram::bufferizeStep(ModuleOp lowered, bool compilerBuffers) {
  PassManager pm(lowered.getContext());
  if (compilerBuffers)
    pm.addPass(createCompilerBuffers());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // No alignment request: the allocator sees each tensor's exact bytes.
  bufferize.bufferAlignment = 0;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  if (failed(pm.run(lowered)))
    return emitError(lowered.getLoc()) << "bufferizing the step failed";
  // A region written in place through extract_slice / insert_slice (conv's
  // interior and border strips) leaves a copy of a subview onto an equal
  // subview of the same buffer.
  lowered.walk([](memref::CopyOp copy) {
    auto from = copy.getSource().getDefiningOp<memref::SubViewOp>();
    auto to = copy.getTarget().getDefiningOp<memref::SubViewOp>();
    if (from && to && from.getSource() == to.getSource() &&
        from.getType() == to.getType() &&
        from.getStaticOffsets() == to.getStaticOffsets() &&
        from.getStaticSizes() == to.getStaticSizes() &&
        from.getStaticStrides() == to.getStaticStrides() &&
        from.getOffsets().empty() && to.getOffsets().empty())
      copy.erase();
  });
  return success();
}

FailureOr<func::FuncOp> vram::getRunnableStep(ModuleOp module) {
  auto step = module.lookupSymbol<func::FuncOp>("step");
  if (!step)
    return emitError(module.getLoc())
           << "--validate needs a built step (@step)";
  return step;
}

FailureOr<CpuValidationResult>
vram::validateOnCpu(ModuleOp module, const CpuValidationOptions &options) {
  FailureOr<func::FuncOp> runnable = getRunnableStep(module);
  if (failed(runnable))
    return failure();
  func::FuncOp step = *runnable;
  Location loc = step.getLoc();
  // The JIT has no bf16 conversion routines (__truncsfbf2).
  WalkResult bf16 = step.walk([](Operation *op) {
    auto isBf16 = [](Type t) {
      auto shaped = dyn_cast<ShapedType>(t);
      return shaped && shaped.getElementType().isBF16();
    };
    if (llvm::any_of(op->getOperandTypes(), isBf16) ||
        llvm::any_of(op->getResultTypes(), isBf16)) {
      op->emitError() << "--validate=cpu cannot execute bf16 tensors (the "
                         "JIT has no bf16 conversions); validate the fp32 "
                         "or fp16 step";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (bf16.wasInterrupted())
    return failure();
  // --dump executes the step returning its gradients (lowerStepToTensors):
  // the prediction is that program's, whose gradients outlive the update
  // (the for-loop form's later updates run with them) until it returns.
  // .grad kept across steps or micro-batches is returned anyway, as the
  // persistent storage it is.
  OwningOpRef<ModuleOp> dumped;
  func::FuncOp analyzed = step;
  if (!options.dumpDir.empty() &&
      !step->hasAttr(nn::NNDialect::kPersistentGradsAttrName)) {
    dumped = module.clone();
    analyzed = dumped->lookupSymbol<func::FuncOp>(step.getSymName());
    Operation *ret = analyzed.getBody().front().getTerminator();
    SmallVector<Value> returned(ret->getOperands());
    analyzed.walk([&](nn::OptimizerStepOp update) {
      llvm::append_range(returned, update.getGrads());
    });
    ret->setOperands(returned);
  }
  MemoryAnalysis analysis(analyzed);
  if (analysis.failed())
    return failure();
  Block &stepBody = step.getBody().front();
  int64_t numClasses =
      stepBody.getNumArguments() && getStepMode(step) == nn::StepMode::Train
          ? numClassesOf(step, stepBody.getArguments().back())
          : 0;

  // 1. Lower to tensors, read the signature.
  FailureOr<TensorStep> tensorStep = lowerStepToTensors(module, options);
  if (failed(tensorStep))
    return failure();
  OwningOpRef<ModuleOp> lowered = std::move(tensorStep->module);
  MLIRContext *ctx = module.getContext();
  std::vector<Slot> &args = tensorStep->args, &results = tensorStep->results;

  // 2. Bufferize, free as PyTorch frees (or as MLIR frees), lower to LLVM.
  bool compilerMode = options.allocationMode == AllocationMode::Compiler;
  if (failed(bufferizeStep(*lowered, compilerMode)))
    return failure();
  // Results that are one of the step's arguments (the in-place updates).
  // The compiler mode drops them from the signature
  // (drop-equivalent-buffer-results): the deallocation pipeline's ABI
  // forbids returning an argument, and would copy it.
  SmallVector<std::optional<unsigned>> resultArg(results.size());
  if (compilerMode) {
    auto loweredStep = lowered->lookupSymbol<func::FuncOp>("step");
    auto ret =
        cast<func::ReturnOp>(loweredStep.getBody().front().getTerminator());
    for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
      while (auto cast = v.getDefiningOp<memref::CastOp>())
        v = cast.getSource();
      if (auto arg = dyn_cast<BlockArgument>(v))
        if (arg.getOwner() == &loweredStep.getBody().front())
          resultArg[i] = arg.getArgNumber();
    }
    // (drop-equivalent-buffer-results keeps a public function's results.)
    llvm::BitVector drop(results.size());
    SmallVector<Value> kept;
    for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
      if (resultArg[i])
        drop.set(i);
      else
        kept.push_back(v);
    }
    ret->setOperands(kept);
    if (failed(loweredStep.eraseResults(drop)))
      return emitError(loc) << "dropping the in-place results failed";
  }
  PassManager pm(ctx);
  if (compilerMode) {
    bufferization::buildBufferDeallocationPipeline(pm);
    pm.addNestedPass<func::FuncOp>(
        bufferization::createOptimizeAllocationLivenessPass());
  } else {
    pm.addNestedPass<func::FuncOp>(createFreeAfterLastUse());
  }
  if (options.loops == CpuValidationOptions::Loops::GpuKernels) {
    buildGpuLaunchesPipeline(pm, GpuLoweringOptions().blockSize);
    pm.addNestedPass<func::FuncOp>(createGpuLaunchToLoops());
  } else if (options.loops != CpuValidationOptions::Loops::Naive) {
    VectorizeLoopsOptions loops;
    loops.vectorize = options.loops == CpuValidationOptions::Loops::Vectorize;
    pm.addNestedPass<func::FuncOp>(createVectorizeLoops(loops));
  }
  // One small function per distinct nest: LLVM's loop analyses are
  // quadratic in a function's size, and equal nests compile once.
  pm.addPass(createOutlineKernels());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  // Fully unrolled: no stack buffers for n-D transfers inside loops.
  pm.addPass(createConvertVectorToSCFPass(
      VectorTransferToSCFOptions().enableFullUnroll()));
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  FinalizeMemRefToLLVMConversionPassOptions memrefOptions;
  memrefOptions.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefOptions));
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createConvertMathToLLVMPass());
  // What has no LLVM intrinsic (tanh, erf) calls libm's tanhf, erff.
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  ConvertFuncToLLVMPassOptions funcOptions;
  funcOptions.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcOptions));
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  if (failed(pm.run(*lowered)))
    return emitError(loc) << "lowering the step to LLVM failed";

  // 3. JIT.
  auto engine =
      createStepEngine(*lowered, options.tuneForHost, [](JitSymbolAdder add) {
        add("_mlir_memref_to_llvm_alloc", (void *)&vramJitAlloc);
        add("_mlir_memref_to_llvm_aligned_alloc", (void *)&vramJitAlignedAlloc);
        add("_mlir_memref_to_llvm_free", (void *)&vramJitFree);
        add(kOpMarkerName, (void *)&vramJitOp);
      });
  if (failed(engine))
    return failure();

  // 4. Arguments, allocated at step entry like the analysis's persistent
  // storage.
  AllocationTracker tracker;
  unsigned exitIndex = analysis.getNumOps() + 1;
  tracker.opPeak.assign(exitIndex + 1, 0);
  tracker.opSeen.assign(exitIndex + 1, false);
  activeTracker = &tracker;
  llvm::scope_exit releaseAll([&] {
    for (auto &entry : llvm::make_early_inc_range(tracker.sizes))
      std::free(entry.first);
    activeTracker = nullptr;
  });
  for (Slot &s : args) {
    int64_t bytes =
        s.type.getNumElements() * elementBytes(s.type.getElementType());
    s.data = tracker.allocate(bytes, 64);
    if (!s.data)
      return emitError(loc) << "out of memory allocating " << s.name;
  }
  if (failed(initialiseArguments(loc, args, options, numClasses)))
    return failure();

  // 5. Run: bare pointers in, a struct of bare pointers out.
  SmallVector<void *> argPtrs, packed;
  for (Slot &s : args)
    argPtrs.push_back(s.data);
  unsigned numReturned = llvm::count_if(
      resultArg, [](std::optional<unsigned> a) { return !a.has_value(); });
  SmallVector<void *> resultPtrs(numReturned, nullptr);
  for (void *&p : argPtrs)
    packed.push_back(&p);
  if (numReturned)
    packed.push_back(resultPtrs.data());
  // Materialize the code before the clock starts.
  if (auto fn = (*engine)->lookupPacked("step"); !fn)
    return emitError(loc) << "JIT lookup of the step failed: "
                          << toString(fn.takeError());
  auto start = std::chrono::steady_clock::now();
  llvm::Error error = (*engine)->invokePacked("step", packed);
  auto end = std::chrono::steady_clock::now();
  if (error)
    return emitError(loc) << "running the step failed: "
                          << toString(std::move(error));
  tracker.enter(exitIndex);

  CpuValidationResult result;
  result.wallSeconds = std::chrono::duration<double>(end - start).count();
  llvm::DenseMap<void *, unsigned> argOf;
  for (auto [i, s] : llvm::enumerate(args))
    argOf[s.data] = i;
  llvm::SmallPtrSet<void *, 8> fresh;
  unsigned nextReturned = 0;
  for (auto [i, slot] : llvm::enumerate(results)) {
    slot.data =
        resultArg[i] ? args[*resultArg[i]].data : resultPtrs[nextReturned++];
    auto it = argOf.find(slot.data);
    bool persistentResult = i >= stepBody.getTerminator()->getNumOperands() &&
                            !StringRef(slot.name).ends_with(".grad");
    if (persistentResult &&
        (it == argOf.end() || args[it->second].name != slot.name))
      return emitError(loc)
             << "the update of " << slot.name << " was not made in place";
    if (it == argOf.end())
      fresh.insert(slot.data);
    if (i == 0 && slot.name == "loss" && slot.type.getElementType().isF32())
      result.loss = *static_cast<float *>(slot.data);
    if (!options.dumpDir.empty() &&
        failed(dumpSlot(loc, options.dumpDir, slot)))
      return failure();
  }
  // The step's fresh results are freed at step exit.
  for (void *p : fresh)
    tracker.release(p);
  if (tracker.badFree)
    return emitError(loc) << "the step freed a pointer it did not allocate";

  // 6. Compare with the prediction, op by op.
  result.measuredPeakBytes = tracker.peak;
  result.predictedPeakBytes = analysis.getPeakBytes();
  result.allocations = tracker.count;
  std::map<nn::StepPhase, PhaseComparison> phases;
  for (unsigned i = 1; i <= analysis.getNumOps(); ++i) {
    if (!tracker.opSeen[i])
      continue;
    Operation *op = analysis.getOp(i);
    int64_t measured = tracker.opPeak[i], predicted = analysis.getLiveBytes(i);
    if (measured != predicted && !compilerMode && !result.firstMismatchOp) {
      result.firstMismatchOp = i;
      result.firstMismatchOpName = op->getName().getStringRef().str();
      result.mismatchMeasured = measured;
      result.mismatchPredicted = predicted;
    }
    if (op->hasTrait<OpTrait::IsTerminator>())
      continue;
    nn::StepPhase phase = getStepPhase(op);
    PhaseComparison &p = phases[phase];
    p.phase = phase;
    p.measuredPeakBytes = std::max(p.measuredPeakBytes, measured);
    p.predictedPeakBytes = std::max(p.predictedPeakBytes, predicted);
  }
  for (auto &[phase, p] : phases)
    result.phases.push_back(p);
  return result;
}
