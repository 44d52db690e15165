//===- Allocator.cpp - allocator models over the event stream -------------===//

#include "vram/Analysis/Allocator.h"

#include <cassert>

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

AllocatorPeaks vram::runAllocator(const MemoryAnalysis &memory,
                                  AllocatorModel &model, unsigned iterations) {
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
  for (const MemoryEvent &e : memory.getAllocEvents(0))
    model.allocate(e.storage, storages[e.storage].bytes);
  sample(0);
  unsigned exit = memory.getNumOps() + 1;
  for (unsigned it = 0; it < std::max(iterations, 1u); ++it) {
    if (it + 1 == std::max(iterations, 1u)) {
      peaks = AllocatorPeaks{};
      sample(0);
    }
    for (unsigned i = 1; i <= exit; ++i) {
      for (const MemoryEvent &e : memory.getAllocEvents(i))
        model.allocate(e.storage, storages[e.storage].bytes);
      sample(i);
      for (const MemoryEvent &e : memory.getFreeEvents(i))
        model.free(e.storage);
    }
  }
  return peaks;
}
