//===- DeviceAllocator.cpp - PyTorch's caching allocator, backed ----------===//

#include "vram/Execution/DeviceAllocator.h"

#include <algorithm>

using namespace vram;

SegmentBacking::~SegmentBacking() = default;

CachingDeviceAllocator::CachingDeviceAllocator(SegmentBacking &backing)
    : backing(backing) {
  model.setSegmentCallbacks(
      [this](unsigned segment, int64_t bytes) {
        void *base = this->backing.allocateSegment(bytes);
        if (segment >= segmentBase.size())
          segmentBase.resize(segment + 1, nullptr);
        segmentBase[segment] = static_cast<char *>(base);
        if (!base) {
          hasFailed = true;
          return;
        }
        backed += bytes;
      },
      [this](unsigned segment, int64_t bytes) {
        if (segment < segmentBase.size() && segmentBase[segment]) {
          this->backing.releaseSegment(segmentBase[segment], bytes);
          segmentBase[segment] = nullptr;
          backed -= bytes;
        }
      });
}

CachingDeviceAllocator::~CachingDeviceAllocator() {
  // Everything goes back: the live blocks, then every (now free) segment.
  for (auto &entry : idOf)
    model.free(entry.second);
  idOf.clear();
  model.emptyCache();
}

void *CachingDeviceAllocator::allocate(int64_t bytes) {
  if (hasFailed)
    return nullptr;
  unsigned id = nextId++;
  model.allocate(id, bytes);
  if (hasFailed)
    return nullptr;
  CudaCachingAllocator::Placement place = model.getPlacement(id);
  char *p = segmentBase[place.segment] + place.offset;
  idOf[p] = id;
  ++numAllocations;
  peakAllocated = std::max(peakAllocated, model.getAllocatedBytes());
  peakReserved = std::max(peakReserved, model.getReservedBytes());
  return p;
}

bool CachingDeviceAllocator::release(void *p) {
  auto it = idOf.find(p);
  if (it == idOf.end())
    return false;
  model.free(it->second);
  idOf.erase(it);
  return true;
}
