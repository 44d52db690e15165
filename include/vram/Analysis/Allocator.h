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

#include <functional>
#include <memory>

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
  /// A new model of the same kind with nothing allocated.
  virtual std::unique_ptr<AllocatorModel> createEmpty() const = 0;
};

/// Allocated = reserved = the sum of the live requests.
class ExactAllocator final : public AllocatorModel {
public:
  llvm::StringRef getName() const override { return "exact"; }
  void allocate(unsigned id, int64_t bytes) override;
  void free(unsigned id) override;
  int64_t getAllocatedBytes() const override { return allocated; }
  int64_t getReservedBytes() const override { return allocated; }
  std::unique_ptr<AllocatorModel> createEmpty() const override {
    return std::make_unique<ExactAllocator>();
  }

private:
  llvm::DenseMap<unsigned, int64_t> live;
  int64_t allocated = 0;
};

/// PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp, 2.x
/// defaults, one stream, no expandable segments):
///  - requests are rounded up to a multiple of 512 bytes;
///  - requests up to 1 MiB come from the small pool, whose segments are
///    2 MiB; larger ones from the large pool, whose segments are 20 MiB for
///    requests under 10 MiB and the request rounded up to 2 MiB above;
///  - a request takes the smallest cached free block of its pool that fits
///    (best fit), else a new segment (cudaMalloc);
///  - a block is split when the remainder is at least 512 bytes (small pool)
///    or more than 1 MiB (large pool); an unsplit block is allocated whole;
///  - a freed block merges with free neighbours of its segment and is
///    cached; segments are never returned (no empty_cache).
/// Allocated bytes are the sizes of allocated blocks
/// (torch.cuda.memory_allocated), reserved bytes the sizes of all segments
/// (memory_reserved).
class CudaCachingAllocator final : public AllocatorModel {
public:
  CudaCachingAllocator();
  ~CudaCachingAllocator() override;
  llvm::StringRef getName() const override { return "pytorch-cuda"; }
  void allocate(unsigned id, int64_t bytes) override;
  void free(unsigned id) override;
  int64_t getAllocatedBytes() const override { return allocated; }
  int64_t getReservedBytes() const override { return reserved; }
  std::unique_ptr<AllocatorModel> createEmpty() const override {
    return std::make_unique<CudaCachingAllocator>();
  }
  unsigned getNumSegments() const;
  /// torch.cuda.empty_cache(): releases the segments none of whose blocks
  /// is allocated.
  void emptyCache();

  /// Where a live storage's block lies: its segment (numbered in creation
  /// order from 0), offset in the segment and size (the rounded request, or
  /// the whole unsplit block). A runtime backs each segment with one device
  /// allocation and hands out segment base + offset (GpuRunner).
  struct Placement {
    unsigned segment;
    int64_t offset;
    int64_t size;
  };
  Placement getPlacement(unsigned id) const;
  /// Called when a segment is created (cudaMalloc) and when emptyCache
  /// releases one (cudaFree), with the segment's number and size.
  using SegmentCallback = std::function<void(unsigned segment, int64_t bytes)>;
  void setSegmentCallbacks(SegmentCallback created, SegmentCallback released);

  static constexpr int64_t kMinBlockSize = 512;
  static constexpr int64_t kSmallSize = 1 << 20;
  static constexpr int64_t kSmallBuffer = 2 << 20;
  static constexpr int64_t kLargeBuffer = 20 << 20;
  static constexpr int64_t kMinLargeAlloc = 10 << 20;
  static constexpr int64_t kRoundLarge = 2 << 20;
  /// The request size after rounding.
  static int64_t roundSize(int64_t bytes);
  /// The size of the segment cudaMalloc'ed for a request of `rounded` bytes.
  static int64_t segmentSize(int64_t rounded);

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
  int64_t allocated = 0;
  int64_t reserved = 0;
};

struct AllocatorPeaks {
  int64_t allocated = 0;
  int64_t reserved = 0;
  /// Op index at which each peak is first reached.
  unsigned allocatedIndex = 0;
  unsigned reservedIndex = 0;
};

/// A request a library makes through the allocator and holds for the
/// process's life (Device.h): made during op `opIndex` of the first
/// iteration, after that op's own allocations (0: at step entry).
struct LibraryAllocation {
  int64_t bytes = 0;
  unsigned opIndex = 0;
};

/// Feeds the step's events to `model`: the entry allocations once, then the
/// per-op events `iterations` times (a training loop's steady state), and
/// returns the peaks seen during the last iteration. Every non-persistent
/// storage is freed by step exit, so an iteration reuses the storage ids.
/// `libraryAllocations` are requests libraries make through the allocator
/// and hold for the process's life, each during its op of the first
/// iteration: in the steady state they exist from then on.
AllocatorPeaks
runAllocator(const MemoryAnalysis &memory, AllocatorModel &model,
             unsigned iterations = 1,
             llvm::ArrayRef<LibraryAllocation> libraryAllocations = {});

/// The figures of a step with assumed workspaces (Storage::assumed: cuDNN's
/// under nn.cudnn_workspace) as a bound: runAllocator with them on `model`
/// and without them on an empty model of the same kind, the larger of the
/// two for each figure. A caching allocator is not monotonic: a workspace's
/// freed block, cached, is split for later requests and can leave fewer or
/// smaller segments than the same step without it (resnet50, batch 256,
/// training, --gpu=rtx4090: 474 MiB less reserved with im2col's workspaces
/// than without), so the replay with the workspaces alone is no bound on
/// the step without them. Without assumed workspaces, runAllocator.
AllocatorPeaks
runAllocatorBounded(const MemoryAnalysis &memory, AllocatorModel &model,
                    unsigned iterations = 1,
                    llvm::ArrayRef<LibraryAllocation> libraryAllocations = {});

/// What torch.cuda.memory_reserved() reads at the end of one stage of a
/// training step (forward, loss, backward, optimizer).
struct StageMemory {
  std::string stage;
  int64_t allocated = 0, reserved = 0;
};

/// The first iteration from an empty cache, reading the allocator at the end
/// of each stage and calling empty_cache() after it, as a script that prints
/// memory_reserved() between stages does (seed article 001). Optimizer state
/// is created by the first optimizer step, not held from entry. With assumed
/// workspaces, each reading is the larger of the replay with them (on
/// `model`) and without them, as runAllocatorBounded.
std::vector<StageMemory> runStagesWithEmptyCache(
    const MemoryAnalysis &memory, CudaCachingAllocator &model,
    llvm::ArrayRef<LibraryAllocation> libraryAllocations = {});

} // namespace vram

#endif // VRAM_ANALYSIS_ALLOCATOR_H
