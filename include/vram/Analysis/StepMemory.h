//===- StepMemory.h - a step's memory figures, computed once ----*- C++ -*-===//
//
// The four figures a user compares with a GPU: exact (the sum of live
// tensors), allocated and reserved (torch.cuda.max_memory_allocated /
// max_memory_reserved under the allocator model, a training loop's steady
// state) and device (reserved plus the CUDA context, what nvidia-smi shows).
// The report, the budget lint, the fit-batch search and the Clang plugin all
// read them from here, so they cannot disagree.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_ANALYSIS_STEPMEMORY_H
#define VRAM_ANALYSIS_STEPMEMORY_H

#include "vram/Analysis/Allocator.h"
#include "vram/Analysis/Device.h"
#include "vram/Analysis/MemoryAnalysis.h"
#include "vram/Dialect/NN/NNAttributes.h"
#include "vram/Dialect/NN/NNDialect.h"

#include <memory>
#include <optional>

namespace vram {

/// Which figure a budget is checked against: a dialect enum
/// (NNAttributes.td), so that --budget-metric's values come from its one
/// declaration.
using BudgetMetric = nn::BudgetMetric;

/// "exact", "allocated", "reserved", "device" (generated with the enum).
using nn::stringifyBudgetMetric;
/// The metric a spelling of stringifyBudgetMetric names, or nullopt.
inline std::optional<BudgetMetric> parseBudgetMetric(llvm::StringRef spelling) {
  return nn::parseEnumSpelling<BudgetMetric>(spelling);
}
/// The metric a budget is checked against when none is asked for: device
/// (what nvidia-smi shows) with the caching allocator on CUDA, reserved with
/// it on the CPU, exact without it.
BudgetMetric getDefaultBudgetMetric(bool cachingAllocator, bool onCuda);

/// How the figures are read off a step: the allocator modelled and, for the
/// caching allocator on CUDA, the GPU (its library workspaces and context).
struct MemoryModel {
  nn::AllocatorKind allocator = nn::AllocatorKind::Exact;
  /// The GPU named (--gpu); null: a generic one of unknown capacity.
  const GpuSpec *gpu = nullptr;
  bool cudaLazyLoading = true;
  /// The CUDA context's size when given (--context-bytes).
  std::optional<int64_t> contextBytes;

  bool usesCachingAllocator() const {
    return allocator == nn::AllocatorKind::PytorchCuda;
  }
  /// The GPU's model, whatever the allocator (--validate=gpu predicts its
  /// context).
  DeviceModel getDevice() const;
  /// The GPU a step on `device` is measured on: with the caching allocator
  /// on CUDA only.
  std::optional<DeviceModel> getDeviceFor(nn::Device device) const;
  std::unique_ptr<AllocatorModel> makeAllocator() const;
};

/// A step's memory figures.
struct MemoryMetrics {
  int64_t exact = 0, allocated = 0, reserved = 0, device = 0;
  int64_t get(BudgetMetric metric) const;
};

/// The memory analysis of a step and its figures under a memory model,
/// computed once. With a device, the allocator also holds the step's library
/// workspaces and the device figure adds the context; without, device equals
/// reserved.
class StepMemory {
public:
  StepMemory(mlir::Operation *step, nn::AllocatorKind allocator,
             std::optional<DeviceModel> device);
  /// The same, with every op nested in `step` collected (collectOps).
  StepMemory(mlir::Operation *step, llvm::ArrayRef<mlir::Operation *> ops,
             nn::AllocatorKind allocator, std::optional<DeviceModel> device);
  /// Fails (after an MLIR error) when the analysis fails or the device
  /// figure does not fit in 64 bits.
  bool failed() const { return hasFailed; }

  const MemoryAnalysis &getAnalysis() const { return *analysis; }
  const MemoryMetrics &getMetrics() const { return metrics; }
  int64_t get(BudgetMetric metric) const { return metrics.get(metric); }
  /// The allocator's peaks and where they are first reached.
  const AllocatorPeaks &getAllocatorPeaks() const { return peaks; }
  llvm::StringRef getAllocatorName() const { return allocatorName; }
  const std::optional<DeviceModel> &getDevice() const { return device; }
  /// The library workspaces held through the allocator (with a device).
  llvm::ArrayRef<LibraryAllocation> getLibraryAllocations() const {
    return library;
  }
  int64_t getLibraryBytes() const;
  /// With the caching allocator: the reading at the end of each stage of the
  /// first iteration from an empty cache (runStagesWithEmptyCache).
  std::vector<StageMemory> computeStages() const;

private:
  std::unique_ptr<MemoryAnalysis> analysis;
  nn::AllocatorKind allocator;
  std::optional<DeviceModel> device;
  llvm::SmallVector<LibraryAllocation> library;
  AllocatorPeaks peaks;
  std::string allocatorName;
  MemoryMetrics metrics;
  bool hasFailed = false;
};

} // namespace vram

#endif // VRAM_ANALYSIS_STEPMEMORY_H
