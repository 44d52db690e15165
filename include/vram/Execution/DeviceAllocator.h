//===- DeviceAllocator.h - PyTorch's caching allocator, backed --*- C++ -*-===//
//
// The device allocator of `--validate=gpu`: every decision (rounding, pools,
// segment sizes, best fit, splitting, merging) is CudaCachingAllocator's, the
// model the memory report simulates; this class only backs each segment the
// model creates with real memory from a SegmentBacking (cuMemAlloc on a GPU,
// a fake in the unit tests) and hands out segment base + block offset. So the
// allocated and reserved bytes measured while the step runs are the model's
// over the step's real alloc/free stream, and the bytes the backing holds
// are the reserved bytes.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_EXECUTION_DEVICEALLOCATOR_H
#define VRAM_EXECUTION_DEVICEALLOCATOR_H

#include "vram/Analysis/Allocator.h"

#include "llvm/ADT/DenseMap.h"

#include <cstdint>
#include <string>
#include <vector>

namespace vram {

/// Where segments come from.
class SegmentBacking {
public:
  virtual ~SegmentBacking();
  /// A new segment of `bytes`, or nullptr when the device is out of memory.
  virtual void *allocateSegment(int64_t bytes) = 0;
  virtual void releaseSegment(void *base, int64_t bytes) = 0;
};

class CachingDeviceAllocator {
public:
  explicit CachingDeviceAllocator(SegmentBacking &backing);
  ~CachingDeviceAllocator();

  /// A block of at least `bytes` (the rounded request), or nullptr when the
  /// backing could not provide a segment (the allocator is then failed).
  void *allocate(int64_t bytes);
  /// Frees a pointer `allocate` returned; false for any other pointer.
  bool release(void *p);
  /// torch.cuda.empty_cache().
  void emptyCache() { model.emptyCache(); }

  int64_t getAllocatedBytes() const { return model.getAllocatedBytes(); }
  int64_t getReservedBytes() const { return model.getReservedBytes(); }
  int64_t getPeakAllocatedBytes() const { return peakAllocated; }
  int64_t getPeakReservedBytes() const { return peakReserved; }
  /// The bytes the backing holds now (what cuMemAlloc returned, not freed).
  int64_t getBackedBytes() const { return backed; }
  int64_t getNumAllocations() const { return numAllocations; }
  unsigned getNumLive() const { return idOf.size(); }
  bool failed() const { return hasFailed; }

private:
  SegmentBacking &backing;
  CudaCachingAllocator model;
  /// Segment number -> base (nullptr once released).
  std::vector<char *> segmentBase;
  llvm::DenseMap<void *, unsigned> idOf;
  unsigned nextId = 0;
  int64_t peakAllocated = 0, peakReserved = 0, backed = 0;
  int64_t numAllocations = 0;
  bool hasFailed = false;
};

} // namespace vram

#endif // VRAM_EXECUTION_DEVICEALLOCATOR_H
