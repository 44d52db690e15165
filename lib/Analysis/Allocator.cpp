//===- Allocator.cpp - allocator models over the event stream -------------===//

#include "vram/Analysis/Allocator.h"
#include "vram/Analysis/StepInfo.h"
#include "vram/Dialect/NN/NNOps.h"
#include "vram/Support/CheckedMath.h"

#include "llvm/Support/MathExtras.h"

#include <cassert>
#include <set>

using namespace vram;

AllocatorModel::~AllocatorModel() = default;

void ExactAllocator::allocate(unsigned id, int64_t bytes) {
  assert(!live.count(id) && "storage allocated twice");
  live[id] = bytes;
  allocated += bytes;
}

void ExactAllocator::free(unsigned id) {
  auto it = live.find(id);
  assert(it != live.end() && "freeing a storage that is not live");
  allocated -= it->second;
  live.erase(it);
}

/// The library allocations made during op `opIndex` (ids past the
/// storages').
static void allocateLibrary(const MemoryAnalysis &memory, AllocatorModel &model,
                            llvm::ArrayRef<LibraryAllocation> library,
                            unsigned opIndex) {
  for (auto [i, request] : llvm::enumerate(library))
    if (request.opIndex == opIndex)
      model.allocate(memory.getStorages().size() + i, request.bytes);
}

/// Replays the step's events on `model`, those of assumed workspaces only
/// when `withAssumed`.
static AllocatorPeaks
replay(const MemoryAnalysis &memory, AllocatorModel &model, unsigned iterations,
       llvm::ArrayRef<LibraryAllocation> libraryAllocations, bool withAssumed) {
  AllocatorPeaks peaks;
  llvm::ArrayRef<Storage> storages = memory.getStorages();
  auto sample = [&](unsigned opIndex) {
    if (model.getAllocatedBytes() > peaks.allocated) {
      peaks.allocated = model.getAllocatedBytes();
      peaks.allocatedIndex = opIndex;
    }
    if (model.getReservedBytes() > peaks.reserved) {
      peaks.reserved = model.getReservedBytes();
      peaks.reservedIndex = opIndex;
    }
  };
  auto skipped = [&](const MemoryEvent &e) {
    return !withAssumed && storages[e.storage].assumed;
  };
  for (const MemoryEvent &e : memory.getAllocEvents(0))
    model.allocate(e.storage, storages[e.storage].bytes);
  allocateLibrary(memory, model, libraryAllocations, 0);
  sample(0);
  unsigned exit = memory.getNumOps() + 1;
  for (unsigned it = 0; it < std::max(iterations, 1u); ++it) {
    if (it + 1 == std::max(iterations, 1u)) {
      peaks = AllocatorPeaks{};
      sample(0);
    }
    for (unsigned i = 1; i <= exit; ++i) {
      for (const MemoryEvent &e : memory.getAllocEvents(i))
        if (!skipped(e))
          model.allocate(e.storage, storages[e.storage].bytes);
      if (it == 0)
        allocateLibrary(memory, model, libraryAllocations, i);
      sample(i);
      for (const MemoryEvent &e : memory.getFreeEvents(i))
        if (!skipped(e))
          model.free(e.storage);
    }
  }
  return peaks;
}

AllocatorPeaks
vram::runAllocator(const MemoryAnalysis &memory, AllocatorModel &model,
                   unsigned iterations,
                   llvm::ArrayRef<LibraryAllocation> libraryAllocations) {
  return replay(memory, model, iterations, libraryAllocations,
                /*withAssumed=*/true);
}

static bool hasAssumedWorkspaces(const MemoryAnalysis &memory) {
  return llvm::any_of(memory.getStorages(),
                      [](const Storage &s) { return s.assumed; });
}

AllocatorPeaks vram::runAllocatorBounded(
    const MemoryAnalysis &memory, AllocatorModel &model, unsigned iterations,
    llvm::ArrayRef<LibraryAllocation> libraryAllocations) {
  AllocatorPeaks peaks =
      runAllocator(memory, model, iterations, libraryAllocations);
  if (!hasAssumedWorkspaces(memory))
    return peaks;
  std::unique_ptr<AllocatorModel> without = model.createEmpty();
  AllocatorPeaks other = replay(memory, *without, iterations,
                                libraryAllocations, /*withAssumed=*/false);
  if (other.allocated > peaks.allocated) {
    peaks.allocated = other.allocated;
    peaks.allocatedIndex = other.allocatedIndex;
  }
  if (other.reserved > peaks.reserved) {
    peaks.reserved = other.reserved;
    peaks.reservedIndex = other.reservedIndex;
  }
  return peaks;
}

//===----------------------------------------------------------------------===//
// CUDA caching allocator
//===----------------------------------------------------------------------===//

namespace {
/// A block of a segment: allocated or cached free. Blocks of a segment form
/// a list in address order.
struct Block {
  int64_t size;
  int64_t offset; ///< within the segment
  unsigned segment;
  bool small;
  bool allocated = false;
  Block *prev = nullptr, *next = nullptr;
};

/// Free blocks ordered as PyTorch's BlockComparator: by size, then address.
struct BySizeThenAddress {
  bool operator()(const Block *a, const Block *b) const {
    if (a->size != b->size)
      return a->size < b->size;
    if (a->segment != b->segment)
      return a->segment < b->segment;
    return a->offset < b->offset;
  }
};
} // namespace

struct CudaCachingAllocator::Impl {
  std::set<Block *, BySizeThenAddress> smallPool, largePool;
  llvm::DenseMap<unsigned, Block *> live;
  std::vector<std::unique_ptr<Block>> blocks;
  unsigned numSegments = 0;
  SegmentCallback segmentCreated, segmentReleased;

  std::set<Block *, BySizeThenAddress> &poolOf(bool small) {
    return small ? smallPool : largePool;
  }
  Block *newBlock(int64_t size, int64_t offset, unsigned segment, bool small) {
    blocks.push_back(
        std::make_unique<Block>(Block{size, offset, segment, small}));
    return blocks.back().get();
  }
};

CudaCachingAllocator::CudaCachingAllocator() : impl(std::make_unique<Impl>()) {}
CudaCachingAllocator::~CudaCachingAllocator() = default;

unsigned CudaCachingAllocator::getNumSegments() const {
  return impl->numSegments;
}

CudaCachingAllocator::Placement
CudaCachingAllocator::getPlacement(unsigned id) const {
  const Block *block = impl->live.lookup(id);
  assert(block && "the placement of a storage that is not live");
  return {block->segment, block->offset, block->size};
}

void CudaCachingAllocator::setSegmentCallbacks(SegmentCallback created,
                                               SegmentCallback released) {
  impl->segmentCreated = std::move(created);
  impl->segmentReleased = std::move(released);
}

int64_t CudaCachingAllocator::roundSize(int64_t bytes) {
  if (bytes < kMinBlockSize)
    return kMinBlockSize;
  // Rounded up without forming bytes + kMinBlockSize - 1, which overflows
  // near INT64_MAX; a size that cannot be rounded saturates.
  return saturatingMul(kMinBlockSize, llvm::divideCeil(bytes, kMinBlockSize));
}

int64_t CudaCachingAllocator::segmentSize(int64_t rounded) {
  if (rounded <= kSmallSize)
    return kSmallBuffer;
  if (rounded < kMinLargeAlloc)
    return kLargeBuffer;
  return saturatingMul(kRoundLarge, llvm::divideCeil(rounded, kRoundLarge));
}

void CudaCachingAllocator::allocate(unsigned id, int64_t bytes) {
  int64_t size = roundSize(bytes);
  bool small = size <= kSmallSize;
  auto &pool = impl->poolOf(small);
  // Best fit: the smallest cached block of at least `size` bytes.
  Block key{size, -1, 0, small};
  auto it = pool.lower_bound(&key);
  Block *block;
  if (it != pool.end()) {
    block = *it;
    pool.erase(it);
  } else {
    int64_t segment = segmentSize(size);
    block = impl->newBlock(segment, 0, impl->numSegments++, small);
    reserved += segment;
    if (impl->segmentCreated)
      impl->segmentCreated(block->segment, segment);
  }
  int64_t remaining = block->size - size;
  bool split = small ? remaining >= kMinBlockSize : remaining > kSmallSize;
  if (split) {
    Block *rest =
        impl->newBlock(remaining, block->offset + size, block->segment, small);
    rest->prev = block;
    rest->next = block->next;
    if (block->next)
      block->next->prev = rest;
    block->next = rest;
    block->size = size;
    pool.insert(rest);
  }
  block->allocated = true;
  allocated += block->size;
  impl->live[id] = block;
}

void CudaCachingAllocator::emptyCache() {
  for (auto *pool : {&impl->smallPool, &impl->largePool})
    for (auto it = pool->begin(); it != pool->end();) {
      Block *block = *it;
      if (block->prev || block->next) {
        ++it;
        continue;
      }
      reserved -= block->size; // a whole free segment
      if (impl->segmentReleased)
        impl->segmentReleased(block->segment, block->size);
      it = pool->erase(it);
    }
}

void CudaCachingAllocator::free(unsigned id) {
  auto it = impl->live.find(id);
  assert(it != impl->live.end() && "freeing a storage that is not live");
  Block *block = it->second;
  impl->live.erase(it);
  allocated -= block->size;
  block->allocated = false;
  auto &pool = impl->poolOf(block->small);
  // Merge with free neighbours of the same segment.
  auto absorb = [&](Block *neighbour) {
    if (!neighbour || neighbour->allocated)
      return;
    pool.erase(neighbour);
    if (neighbour == block->prev) {
      block->offset = neighbour->offset;
      block->prev = neighbour->prev;
      if (block->prev)
        block->prev->next = block;
    } else {
      block->next = neighbour->next;
      if (block->next)
        block->next->prev = block;
    }
    block->size += neighbour->size;
  };
  absorb(block->prev);
  absorb(block->next);
  pool.insert(block);
}

static std::vector<StageMemory>
replayStages(const MemoryAnalysis &memory, CudaCachingAllocator &model,
             llvm::ArrayRef<LibraryAllocation> libraryAllocations,
             bool withAssumed) {
  llvm::ArrayRef<Storage> storages = memory.getStorages();
  auto skipped = [&](const MemoryEvent &e) {
    return !withAssumed && storages[e.storage].assumed;
  };
  auto isState = [&](const MemoryEvent &e) {
    return storages[e.storage].category == nn::MemoryCategory::OptimizerState;
  };
  for (const MemoryEvent &e : memory.getAllocEvents(0))
    if (!isState(e))
      model.allocate(e.storage, storages[e.storage].bytes);
  allocateLibrary(memory, model, libraryAllocations, 0);
  std::vector<StageMemory> stages;
  auto stageOf = [&, seenLoss = false](mlir::Operation *op) mutable {
    nn::StepPhase phase = getStepPhase(op);
    if (phase != nn::StepPhase::Forward)
      return std::string(stringifyEnum(phase));
    seenLoss |= op->hasTrait<nn::LossOpTrait>();
    return std::string(seenLoss ? "loss" : "forward");
  };
  std::string current;
  bool stateCreated = false;
  for (unsigned i = 1; i <= memory.getNumOps(); ++i) {
    mlir::Operation *op = memory.getOp(i);
    if (op->hasTrait<mlir::OpTrait::IsTerminator>())
      break;
    std::string stage = stageOf(op);
    if (stage != current) {
      if (!current.empty()) {
        stages.push_back(
            {current, model.getAllocatedBytes(), model.getReservedBytes()});
        model.emptyCache();
      }
      current = stage;
    }
    if (stage == "optimizer" && !stateCreated) {
      stateCreated = true;
      for (const MemoryEvent &e : memory.getAllocEvents(0))
        if (isState(e))
          model.allocate(e.storage, storages[e.storage].bytes);
    }
    for (const MemoryEvent &e : memory.getAllocEvents(i))
      if (!skipped(e))
        model.allocate(e.storage, storages[e.storage].bytes);
    allocateLibrary(memory, model, libraryAllocations, i);
    for (const MemoryEvent &e : memory.getFreeEvents(i))
      if (!skipped(e))
        model.free(e.storage);
  }
  if (!current.empty())
    stages.push_back(
        {current, model.getAllocatedBytes(), model.getReservedBytes()});
  return stages;
}

std::vector<StageMemory> vram::runStagesWithEmptyCache(
    const MemoryAnalysis &memory, CudaCachingAllocator &model,
    llvm::ArrayRef<LibraryAllocation> libraryAllocations) {
  std::vector<StageMemory> stages =
      replayStages(memory, model, libraryAllocations, /*withAssumed=*/true);
  if (!hasAssumedWorkspaces(memory))
    return stages;
  CudaCachingAllocator without;
  std::vector<StageMemory> other =
      replayStages(memory, without, libraryAllocations, /*withAssumed=*/false);
  // The same ops in the same order: the same stages.
  assert(other.size() == stages.size() && "stages differ without workspaces");
  for (auto [s, o] : llvm::zip(stages, other)) {
    s.allocated = std::max(s.allocated, o.allocated);
    s.reserved = std::max(s.reserved, o.reserved);
  }
  return stages;
}
