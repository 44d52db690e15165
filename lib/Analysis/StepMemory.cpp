//===- StepMemory.cpp - a step's memory figures, computed once ------------===//

#include "vram/Analysis/StepMemory.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace vram;

BudgetMetric vram::getDefaultBudgetMetric(bool cachingAllocator, bool onCuda) {
  if (!cachingAllocator)
    return BudgetMetric::Exact;
  return onCuda ? BudgetMetric::Device : BudgetMetric::Reserved;
}

DeviceModel MemoryModel::getDevice() const {
  DeviceModel model = makeDeviceModel(gpu, cudaLazyLoading);
  if (contextBytes)
    model.contextBytes = *contextBytes;
  return model;
}

std::optional<DeviceModel> MemoryModel::getDeviceFor(nn::Device device) const {
  if (!usesCachingAllocator() || device != nn::Device::Cuda)
    return std::nullopt;
  return getDevice();
}

std::unique_ptr<AllocatorModel> MemoryModel::makeAllocator() const {
  if (usesCachingAllocator())
    return std::make_unique<CudaCachingAllocator>();
  return std::make_unique<ExactAllocator>();
}

int64_t MemoryMetrics::get(BudgetMetric metric) const {
  switch (metric) {
  case BudgetMetric::Exact:
    return exact;
  case BudgetMetric::Allocated:
    return allocated;
  case BudgetMetric::Reserved:
    return reserved;
  case BudgetMetric::Device:
    return device;
  }
  llvm_unreachable("unknown metric");
}

StepMemory::StepMemory(Operation *step, nn::AllocatorKind allocator,
                       std::optional<DeviceModel> device)
    : StepMemory(step, collectOps(step), allocator, std::move(device)) {}

StepMemory::StepMemory(Operation *step, ArrayRef<Operation *> ops,
                       nn::AllocatorKind allocator,
                       std::optional<DeviceModel> device)
    : analysis(std::make_unique<MemoryAnalysis>(step, ops)),
      allocator(allocator), device(std::move(device)) {
  if (analysis->failed()) {
    hasFailed = true;
    return;
  }
  MemoryModel model;
  model.allocator = allocator;
  std::unique_ptr<AllocatorModel> allocatorModel = model.makeAllocator();
  allocatorName = allocatorModel->getName().str();
  if (this->device) {
    // Each workspace is taken during its first user's op (an op of the step
    // or inside one: a checkpointed region's recomputation).
    llvm::DenseMap<Operation *, unsigned> opIndex;
    for (unsigned i = 1; i <= analysis->getNumOps(); ++i)
      opIndex[analysis->getOp(i)] = i;
    for (const LibraryWorkspace &w :
         vram::getLibraryWorkspaces(step, *this->device)) {
      unsigned index = 0;
      for (Operation *op = w.firstUser; op && !index; op = op->getParentOp())
        index = opIndex.lookup(op);
      library.push_back({w.bytes, index});
    }
  }
  // Two iterations: a training loop's steady state.
  peaks = runAllocatorBounded(*analysis, *allocatorModel, /*iterations=*/2,
                              library);
  metrics.exact = analysis->getPeakBytes();
  metrics.allocated = peaks.allocated;
  metrics.reserved = peaks.reserved;
  metrics.device = peaks.reserved;
  if (this->device &&
      llvm::AddOverflow(peaks.reserved, this->device->contextBytes,
                        metrics.device)) {
    step->emitError("device memory does not fit in 64 bits");
    hasFailed = true;
  }
}

int64_t StepMemory::getLibraryBytes() const {
  int64_t bytes = 0;
  for (const LibraryAllocation &b : library)
    bytes += b.bytes;
  return bytes;
}

std::vector<StageMemory> StepMemory::computeStages() const {
  if (allocator != nn::AllocatorKind::PytorchCuda)
    return {};
  CudaCachingAllocator fresh;
  return runStagesWithEmptyCache(*analysis, fresh, library);
}
