//===- GpuRunner.cpp - run a built step on an NVIDIA GPU, measured --------===//
//
// The front half is the CPU runner's (lowerStepToTensors,
// initialiseArguments); then bufferization and freeing as on the CPU,
// vram-lower-to-gpu, the JIT, and one run with the device allocator and the
// CUDA runtime bound to the host code.
//
//===----------------------------------------------------------------------===//

#include "vram/Execution/GpuRunner.h"
#include "vram/Analysis/Allocator.h"
#include "vram/Analysis/FlopAnalysis.h"
#include "vram/Analysis/MemoryAnalysis.h"
#include "vram/Analysis/StepInfo.h"
#include "vram/Conversion/NNToTensor.h"
#include "vram/Dialect/NN/NNOps.h"
#include "vram/Execution/CudaRuntime.h"
#include "vram/Execution/DeviceAllocator.h"
#include "vram/Execution/Passes.h"

#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"

#include <chrono>

using namespace mlir;
using namespace vram;

namespace {
/// The state the JIT-compiled host code's allocation and marker calls see.
struct DeviceTracker {
  CachingDeviceAllocator *allocator = nullptr;
  CudaRuntime *runtime = nullptr;
  unsigned op = 0;
  /// The most allocated bytes while op i of the step ran.
  std::vector<int64_t> opPeak;
  std::vector<bool> opSeen;
  bool badFree = false, outOfMemory = false;
  /// The next request is stack scratch (vram-device-scratch): from the
  /// driver, not the caching allocator, which PyTorch's kernels never ask
  /// for it.
  bool nextIsScratch = false;
  /// The next request is the device copy of the constant at this host
  /// address (vram-device-scratch), outside the caching allocator too.
  const void *nextConstant = nullptr;
  llvm::SmallPtrSet<void *, 16> scratch;
  std::optional<int64_t> usedPeak;

  void note() {
    if (op < opPeak.size())
      opPeak[op] = std::max(opPeak[op], allocator->getAllocatedBytes());
  }
  void *allocate(uint64_t bytes) {
    bool failedBefore = runtime && runtime->hasError();
    const void *constant = std::exchange(nextConstant, nullptr);
    if (std::exchange(nextIsScratch, false) || constant) {
      void *p = runtime ? runtime->allocateSegment(
                              std::max<int64_t>(static_cast<int64_t>(bytes), 1))
                        : nullptr;
      if (!p) {
        outOfMemory |= !failedBefore;
        return nullptr;
      }
      scratch.insert(p);
      if (constant && !runtime->copyToDevice(p, constant, bytes))
        return nullptr;
      return p;
    }
    int64_t reservedBefore = allocator->getReservedBytes();
    void *p = allocator->allocate(static_cast<int64_t>(bytes));
    if (!p) {
      // After a kernel's fault every allocation fails with that fault's
      // (sticky) error: that is not the device running out of memory.
      outOfMemory |= !failedBefore;
      return nullptr;
    }
    // A new segment: what the driver now says the device holds.
    if (runtime && allocator->getReservedBytes() != reservedBefore)
      if (std::optional<int64_t> used = runtime->getDeviceUsedBytes())
        usedPeak = std::max(usedPeak.value_or(0), *used);
    note();
    return p;
  }
  void release(void *p) {
    if (scratch.erase(p)) {
      runtime->releaseSegment(p, 0);
      return;
    }
    if (p && !allocator->release(p))
      badFree = true;
  }
  void enter(unsigned index) {
    op = index;
    if (index < opSeen.size())
      opSeen[index] = true;
    note();
  }
};

DeviceTracker *activeDeviceTracker = nullptr;

extern "C" void *vramGpuJitAlloc(uint64_t bytes) {
  return activeDeviceTracker->allocate(bytes);
}
extern "C" void *vramGpuJitAlignedAlloc(uint64_t, uint64_t bytes) {
  // Blocks are 512-byte aligned (the caching allocator's rounding).
  return activeDeviceTracker->allocate(bytes);
}
extern "C" void vramGpuJitFree(void *p) { activeDeviceTracker->release(p); }
extern "C" void vramGpuJitOp(int64_t index) {
  activeDeviceTracker->enter(index);
}
extern "C" void vramGpuJitScratch() {
  activeDeviceTracker->nextIsScratch = true;
}
extern "C" void vramGpuJitConstant(int64_t hostAddress) {
  activeDeviceTracker->nextConstant =
      reinterpret_cast<const void *>(static_cast<intptr_t>(hostAddress));
}
} // namespace

FailureOr<GpuValidationResult>
vram::validateOnGpu(ModuleOp module, const GpuValidationOptions &options,
                    std::string &noDevice) {
  noDevice.clear();
  FailureOr<func::FuncOp> runnable = getRunnableStep(module);
  if (failed(runnable))
    return failure();
  func::FuncOp step = *runnable;
  Location loc = step.getLoc();
  if (options.step.allocationMode != AllocationMode::PyTorch)
    return emitError(loc) << "--validate=gpu supports the pytorch allocation "
                             "mode only";
  MemoryAnalysis analysis(step);
  if (analysis.failed())
    return failure();
  FlopAnalysis flops(step);
  if (flops.failed())
    return failure();
  int64_t numClasses = getNumClasses(module);

  // 1. Lower to tensors, bufferize and free as the CPU runner does.
  FailureOr<TensorStep> tensorStep = lowerStepToTensors(module, options.step);
  if (failed(tensorStep))
    return failure();
  OwningOpRef<ModuleOp> lowered = std::move(tensorStep->module);
  std::vector<StepSlot> &args = tensorStep->args;
  std::vector<StepSlot> &results = tensorStep->results;
  MLIRContext *ctx = module.getContext();
  if (failed(bufferizeStep(*lowered, /*compilerBuffers=*/false)))
    return failure();

  // 2. The GPU lowering: kernels for the chip, host code in LLVM. Their
  // math calls libdevice, which comes with the toolkit, not the driver.
  std::string toolkit = options.lowering.toolkitPath.empty()
                            ? getCudaToolkitPath()
                            : options.lowering.toolkitPath;
  std::string libdevice = toolkit + "/nvvm/libdevice/libdevice.10.bc";
  if (!llvm::sys::fs::exists(libdevice))
    return emitError(loc) << "--validate=gpu needs the CUDA toolkit's "
                             "libdevice (the kernels' math functions): no "
                          << libdevice << " (set CUDA_HOME to a CUDA toolkit)";
  PassManager pm(ctx);
  // --mlir-print-ir-after-all and friends show this lowering too.
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  pm.addNestedPass<func::FuncOp>(createFreeAfterLastUse());
  buildLowerToGpuPipeline(pm, options.lowering);
  if (failed(pm.run(*lowered)))
    return emitError(loc) << "lowering the step to the GPU ("
                          << options.lowering.chip << ") failed";
  if (failed(verifyKernelsLinked(*lowered, toolkit)))
    return failure();
  GpuValidationResult result;
  result.arch = options.lowering.chip;
  // Distinct kernels (vram-merge-kernel-modules keeps one of equal ones).
  llvm::DenseSet<Attribute> kernels;
  lowered->walk(
      [&](gpu::LaunchFuncOp launch) { kernels.insert(launch.getKernel()); });
  result.kernels = kernels.size();

  // 3. The device, before the JIT runs the module loads (global ctors).
  llvm::Expected<std::unique_ptr<CudaRuntime>> runtimeOr =
      CudaRuntime::open(options.deviceOrdinal);
  std::unique_ptr<CudaRuntime> runtime;
  std::string openError;
  if (runtimeOr)
    runtime = std::move(*runtimeOr);
  else
    openError = toString(runtimeOr.takeError());
  std::optional<CachingDeviceAllocator> allocator;
  DeviceTracker tracker;
  if (runtime) {
    allocator.emplace(*runtime);
    runtime->activate(&*allocator);
    tracker.allocator = &*allocator;
    tracker.runtime = runtime.get();
    result.deviceName = runtime->getDevice().name;
    result.deviceUsedBeforeBytes = runtime->getDeviceUsedBytes();
  }
  llvm::scope_exit deactivate([&] {
    activeDeviceTracker = nullptr;
    if (runtime)
      runtime->deactivate();
  });

  // 4. JIT (the host code only launches kernels: no tuning for the host).
  auto engine =
      createStepEngine(*lowered, /*tuneForHost=*/false, [](JitSymbolAdder add) {
        add("_mlir_memref_to_llvm_alloc", (void *)&vramGpuJitAlloc);
        add("_mlir_memref_to_llvm_aligned_alloc",
            (void *)&vramGpuJitAlignedAlloc);
        add("_mlir_memref_to_llvm_free", (void *)&vramGpuJitFree);
        add(kOpMarkerName, (void *)&vramGpuJitOp);
        add(kDeviceScratchMarkerName, (void *)&vramGpuJitScratch);
        add(kDeviceConstantMarkerName, (void *)&vramGpuJitConstant);
        CudaRuntime::forEachEntryPoint(add);
      });
  if (failed(engine))
    return failure();
  // The kernel modules load here (cuModuleLoadDataEx: the driver compiles
  // the PTX); without a device the entry points do nothing.
  (*engine)->initialize();
  if (auto fn = (*engine)->lookupPacked("step"); !fn)
    return emitError(loc) << "JIT lookup of the step failed: "
                          << toString(fn.takeError());
  if (!runtime) {
    noDevice =
        openError + " (the step was lowered to " +
        std::to_string(result.kernels) + " kernels for " + result.arch +
        (options.lowering.format == "bin" ? ", assembled by ptxas," : "") +
        " and JIT-compiled; nothing ran)";
    return failure();
  }
  if (runtime->hasError())
    return emitError(loc) << "loading the kernels for " << result.arch << " on "
                          << result.deviceName
                          << " failed: " << runtime->getError();

  // 5. Arguments: allocated at step entry through the device allocator (as
  // the analysis allocates persistent storage), filled on the host, copied.
  unsigned exitIndex = analysis.getNumOps() + 1;
  tracker.opPeak.assign(exitIndex + 1, 0);
  tracker.opSeen.assign(exitIndex + 1, false);
  activeDeviceTracker = &tracker;
  std::vector<std::vector<char>> hostData(args.size());
  for (auto [i, s] : llvm::enumerate(args)) {
    int64_t bytes =
        s.type.getNumElements() * getElementBytes(s.type.getElementType());
    hostData[i].assign(std::max<int64_t>(bytes, 1), 0);
    s.data = hostData[i].data();
  }
  if (failed(initialiseArguments(loc, args, options.step, numClasses)))
    return failure();
  // The caching allocator's choices depend on the order of requests, and
  // only on their sizes: the arguments are requested in the order of the
  // analysis's step-entry allocations, each taking an argument of the same
  // size (equal sizes are interchangeable); what does not match goes last,
  // in signature order, and shows as a difference.
  SmallVector<unsigned> order;
  {
    std::vector<bool> taken(args.size(), false);
    auto argBytes = [&](unsigned i) {
      return args[i].type.getNumElements() *
             getElementBytes(args[i].type.getElementType());
    };
    for (const MemoryEvent &e : analysis.getAllocEvents(0))
      for (unsigned i = 0; i < args.size(); ++i)
        if (!taken[i] &&
            argBytes(i) == analysis.getStorages()[e.storage].bytes) {
          taken[i] = true;
          order.push_back(i);
          break;
        }
    for (unsigned i = 0; i < args.size(); ++i)
      if (!taken[i])
        order.push_back(i);
  }
  SmallVector<void *> devicePtrs(args.size(), nullptr);
  for (unsigned i : order) {
    StepSlot &s = args[i];
    int64_t bytes =
        s.type.getNumElements() * getElementBytes(s.type.getElementType());
    void *p = tracker.allocate(bytes);
    if (!p)
      return emitError(loc) << "out of device memory allocating " << s.name
                            << ": " << runtime->getError();
    if (!runtime->copyToDevice(p, hostData[i].data(), bytes))
      return emitError(loc) << "copying " << s.name
                            << " to the device failed: " << runtime->getError();
    devicePtrs[i] = p;
  }

  // 6. Run: bare device pointers in, a struct of bare pointers out.
  SmallVector<void *> argPtrs(devicePtrs.begin(), devicePtrs.end()), packed;
  SmallVector<void *> resultPtrs(results.size(), nullptr);
  for (void *&p : argPtrs)
    packed.push_back(&p);
  if (!results.empty())
    packed.push_back(resultPtrs.data());
  if (!runtime->synchronize() || !runtime->recordStart())
    return emitError(loc) << "starting the step failed: "
                          << runtime->getError();
  auto start = std::chrono::steady_clock::now();
  llvm::Error error = (*engine)->invokePacked("step", packed);
  std::optional<double> ms = runtime->recordStopMs();
  auto end = std::chrono::steady_clock::now();
  if (error)
    return emitError(loc) << "running the step failed: "
                          << toString(std::move(error));
  tracker.enter(exitIndex);
  if (tracker.outOfMemory)
    return emitError(loc) << "the step ran out of device memory: "
                          << runtime->getError();
  if (runtime->hasError() || !ms)
    return emitError(loc) << "the step failed on " << result.deviceName << ": "
                          << runtime->getError();
  if (tracker.badFree)
    return emitError(loc) << "the step freed a pointer it did not allocate";
  result.stepMs = *ms;
  result.wallSeconds = std::chrono::duration<double>(end - start).count();
  result.launches = runtime->getNumLaunches();
  // The process's device memory at the peak's end, before anything is
  // freed: the segments stay reserved (no empty_cache).
  result.measuredDeviceBytes = runtime->getProcessDeviceBytes();
  if (std::optional<int64_t> used = runtime->getDeviceUsedBytes())
    tracker.usedPeak = std::max(tracker.usedPeak.value_or(0), *used);
  result.deviceUsedPeakBytes = tracker.usedPeak;

  // 7. Results: the loss comes back, and with --dump every result (the
  // gradients, which the step then returns, and the updated parameters);
  // fresh results are freed at step exit.
  llvm::SmallPtrSet<void *, 8> argSet(devicePtrs.begin(), devicePtrs.end());
  for (auto [i, slot] : llvm::enumerate(results)) {
    if (i == 0 && slot.name == "loss" && slot.type.getElementType().isF32()) {
      float loss = 0;
      if (!runtime->copyToHost(&loss, resultPtrs[i], sizeof(float)))
        return emitError(loc)
               << "reading the loss failed: " << runtime->getError();
      result.loss = loss;
    }
    if (!options.step.dumpDir.empty()) {
      int64_t bytes = slot.type.getNumElements() *
                      getElementBytes(slot.type.getElementType());
      std::vector<char> host(std::max<int64_t>(bytes, 1));
      if (!runtime->copyToHost(host.data(), resultPtrs[i], bytes))
        return emitError(loc) << "reading " << slot.name
                              << " back failed: " << runtime->getError();
      slot.data = host.data();
      if (failed(dumpSlot(loc, options.step.dumpDir, slot)))
        return failure();
      slot.data = nullptr;
    }
    if (!argSet.count(resultPtrs[i]))
      tracker.release(resultPtrs[i]);
  }
  for (void *p : devicePtrs)
    tracker.release(p);

  // 8. The prediction: the caching allocator model over the analysis's
  // events (no library workspaces: the generated kernels call no cuBLAS).
  CudaCachingAllocator model;
  AllocatorPeaks peaks = runAllocator(analysis, model, /*iterations=*/1);
  result.measuredAllocatedBytes = allocator->getPeakAllocatedBytes();
  result.measuredReservedBytes = allocator->getPeakReservedBytes();
  result.predictedAllocatedBytes = peaks.allocated;
  result.predictedReservedBytes = peaks.reserved;
  result.predictedDeviceBytes = peaks.reserved + options.predictedContextBytes;
  result.allocations = allocator->getNumAllocations();
  result.flops = flops.getTotal(options.flopConvention);
  if (result.stepMs > 0)
    result.achievedFlopsPerSecond = result.flops / (result.stepMs * 1e-3);
  // Op by op, as runAllocator samples: after the op's allocations.
  CudaCachingAllocator replay;
  ArrayRef<Storage> storages = analysis.getStorages();
  for (const MemoryEvent &e : analysis.getAllocEvents(0))
    replay.allocate(e.storage, storages[e.storage].bytes);
  for (unsigned i = 1; i <= analysis.getNumOps(); ++i) {
    for (const MemoryEvent &e : analysis.getAllocEvents(i))
      replay.allocate(e.storage, storages[e.storage].bytes);
    int64_t predicted = replay.getAllocatedBytes();
    for (const MemoryEvent &e : analysis.getFreeEvents(i))
      replay.free(e.storage);
    // --dump returns the gradients, so they outlive the update until the
    // step returns: the return is not compared then (as on the CPU).
    bool gradsKept = !options.step.dumpDir.empty() &&
                     analysis.getOp(i)->hasTrait<OpTrait::IsTerminator>();
    if (!tracker.opSeen[i] || result.firstMismatchOp || gradsKept)
      continue;
    if (tracker.opPeak[i] != predicted) {
      result.firstMismatchOp = i;
      result.firstMismatchOpName =
          analysis.getOp(i)->getName().getStringRef().str();
      result.mismatchMeasured = tracker.opPeak[i];
      result.mismatchPredicted = predicted;
    }
  }
  return result;
}
