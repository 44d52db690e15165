//===- Allocator.h - allocator models over the event stream ----*- C++ -*-===//
//
// An allocator model consumes the memory analysis's alloc/free stream and
// tells how many bytes are allocated (what torch.cuda.memory_allocated
// reports) and reserved (held from the device, memory_reserved) after each
// event. `exact` is the sum of the live storages. A model of PyTorch's CUDA
// caching allocator implements the same interface.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_ANALYSIS_ALLOCATOR_H
#define VRAM_ANALYSIS_ALLOCATOR_H

#include "vram/Analysis/MemoryAnalysis.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"

namespace vram {

class AllocatorModel {
public:
  virtual ~AllocatorModel();
  virtual llvm::StringRef getName() const = 0;
  /// Storage `id` requests `bytes`.
  virtual void allocate(unsigned id, int64_t bytes) = 0;
  /// Storage `id`, allocated before, is released.
  virtual void free(unsigned id) = 0;
  virtual int64_t getAllocatedBytes() const = 0;
  virtual int64_t getReservedBytes() const = 0;
};

/// Allocated = reserved = the sum of the live requests.
class ExactAllocator final : public AllocatorModel {
public:
  llvm::StringRef getName() const override { return "exact"; }
  void allocate(unsigned id, int64_t bytes) override;
  void free(unsigned id) override;
  int64_t getAllocatedBytes() const override { return allocated; }
  int64_t getReservedBytes() const override { return allocated; }

private:
  llvm::DenseMap<unsigned, int64_t> live;
  int64_t allocated = 0;
};

struct AllocatorPeaks {
  int64_t allocated = 0;
  int64_t reserved = 0;
  /// Op index at which each peak is first reached.
  unsigned allocatedIndex = 0;
  unsigned reservedIndex = 0;
};

/// Feeds the step's events to `model`: the entry allocations once, then the
/// per-op events `iterations` times (a training loop's steady state), and
/// returns the peaks seen during the last iteration. Every non-persistent
/// storage is freed by step exit, so an iteration reuses the storage ids.
AllocatorPeaks runAllocator(const MemoryAnalysis &memory, AllocatorModel &model,
                            unsigned iterations = 1);

} // namespace vram

#endif // VRAM_ANALYSIS_ALLOCATOR_H
