//===- DeviceAllocatorTest.cpp - the caching allocator, backed ------------===//
//
// CachingDeviceAllocator over a fake segment backing (no GPU): the bytes the
// fake hands out must be the CudaCachingAllocator model's reserved bytes,
// the allocated bytes the model's, and the pointers disjoint blocks inside
// their segments. Hand-computed cases first (PyTorch's rules, as in
// Allocator.h), then a long random stream checked against an independent
// model instance fed the same requests.
//
//===----------------------------------------------------------------------===//

#include "vram/Execution/DeviceAllocator.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdint>
#include <map>
#include <random>

using namespace vram;

namespace {
constexpr int64_t kMiB = 1 << 20;

/// Segments at made-up, well separated addresses; never dereferenced.
struct FakeBacking : SegmentBacking {
  std::map<uintptr_t, int64_t> segments; ///< base -> bytes, live
  int64_t live = 0, created = 0;
  uintptr_t next = uintptr_t(1) << 40;
  int failAfter = -1; ///< fail the n-th segment (0-based); -1: never

  void *allocateSegment(int64_t bytes) override {
    if (failAfter >= 0 && created == failAfter)
      return nullptr;
    ++created;
    uintptr_t base = next;
    next += bytes + (uintptr_t(1) << 30);
    segments[base] = bytes;
    live += bytes;
    return reinterpret_cast<void *>(base);
  }
  void releaseSegment(void *base, int64_t bytes) override {
    auto it = segments.find(reinterpret_cast<uintptr_t>(base));
    ASSERT_NE(it, segments.end());
    EXPECT_EQ(it->second, bytes);
    live -= bytes;
    segments.erase(it);
  }
  /// The segment holding [p, p + size), or nullptr.
  bool contains(void *p, int64_t size) const {
    uintptr_t a = reinterpret_cast<uintptr_t>(p);
    auto it = segments.upper_bound(a);
    if (it == segments.begin())
      return false;
    --it;
    return a + size <= it->first + it->second;
  }
};

TEST(DeviceAllocator, HandComputedPoolsAndSegments) {
  FakeBacking fake;
  {
    CachingDeviceAllocator alloc(fake);
    // 1000 B -> 1024 B (512-byte rounding), small pool: a 2 MiB segment.
    void *a = alloc.allocate(1000);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(alloc.getAllocatedBytes(), 1024);
    EXPECT_EQ(fake.live, 2 * kMiB);
    // 100 B -> 512 B, split from the same segment right after a.
    void *b = alloc.allocate(100);
    EXPECT_EQ(reinterpret_cast<char *>(b) - reinterpret_cast<char *>(a), 1024);
    EXPECT_EQ(fake.live, 2 * kMiB);
    // 3 MiB: large pool, under 10 MiB: a 20 MiB segment.
    void *c = alloc.allocate(3 * kMiB);
    EXPECT_EQ(fake.live, 22 * kMiB);
    // 12 MiB + 1 -> 12 MiB + 512: best fit is the 17 MiB remainder of c's
    // segment (cached blocks of any size serve large requests), split again
    // (5 MiB - 512 left, over 1 MiB).
    void *d = alloc.allocate(12 * kMiB + 1);
    EXPECT_EQ(fake.live, 22 * kMiB);
    EXPECT_EQ(reinterpret_cast<char *>(d) - reinterpret_cast<char *>(c),
              3 * kMiB);
    EXPECT_EQ(alloc.getAllocatedBytes(),
              1024 + 512 + 3 * kMiB + (12 * kMiB + 512));
    // Freeing a and asking for 512 B: best fit is the freed 1024-byte block
    // (the segment's tail is larger), at a's address.
    EXPECT_TRUE(alloc.release(a));
    void *e = alloc.allocate(512);
    EXPECT_EQ(e, a);
    // 4 MiB takes the 5 MiB - 512 remainder whole: what would be left,
    // 1 MiB - 512, is not over 1 MiB, so the block is not split.
    void *f = alloc.allocate(4 * kMiB);
    EXPECT_EQ(reinterpret_cast<char *>(f) - reinterpret_cast<char *>(c),
              15 * kMiB + 512);
    EXPECT_EQ(alloc.getAllocatedBytes(),
              512 + 512 + 3 * kMiB + (12 * kMiB + 512) + (5 * kMiB - 512));
    EXPECT_EQ(fake.live, 22 * kMiB);
    // Nothing cached fits 12 MiB + 512 now: a new segment, rounded up to a
    // multiple of 2 MiB (requests of 10 MiB and more): 14 MiB.
    void *g = alloc.allocate(12 * kMiB + 1);
    EXPECT_EQ(fake.live, 36 * kMiB);
    EXPECT_EQ(alloc.getReservedBytes(), 36 * kMiB);
    EXPECT_EQ(alloc.getPeakReservedBytes(), 36 * kMiB);
    EXPECT_FALSE(alloc.release(reinterpret_cast<char *>(f) + 1));
    for (void *p : {b, c, d, e, f, g})
      EXPECT_TRUE(alloc.release(p));
    EXPECT_EQ(alloc.getAllocatedBytes(), 0);
    // Cached, not returned: reserved stays.
    EXPECT_EQ(fake.live, 36 * kMiB);
    alloc.emptyCache();
    EXPECT_EQ(fake.live, 0);
    EXPECT_EQ(alloc.getReservedBytes(), 0);
  }
  EXPECT_EQ(fake.live, 0);
}

TEST(DeviceAllocator, FailedSegmentFailsTheAllocator) {
  FakeBacking fake;
  fake.failAfter = 1;
  CachingDeviceAllocator alloc(fake);
  EXPECT_NE(alloc.allocate(1 << 10), nullptr);
  EXPECT_EQ(alloc.allocate(30 * kMiB), nullptr);
  EXPECT_TRUE(alloc.failed());
  EXPECT_EQ(alloc.allocate(10), nullptr);
}

TEST(DeviceAllocator, DestructionReturnsEverySegment) {
  FakeBacking fake;
  {
    CachingDeviceAllocator alloc(fake);
    alloc.allocate(5 * kMiB);
    alloc.allocate(100);
    alloc.allocate(40 * kMiB);
    EXPECT_EQ(fake.live, (20 + 2 + 40) * kMiB);
  }
  EXPECT_EQ(fake.live, 0);
  EXPECT_TRUE(fake.segments.empty());
}

TEST(DeviceAllocator, RandomStreamMatchesTheModel) {
  FakeBacking fake;
  CachingDeviceAllocator alloc(fake);
  CudaCachingAllocator model; // independent instance, same requests
  std::mt19937_64 rng(42);
  std::vector<std::pair<void *, unsigned>> live;
  std::map<uintptr_t, int64_t> blocks; // p -> rounded size
  unsigned nextId = 0;
  for (int step = 0; step < 4000; ++step) {
    bool doFree = !live.empty() && rng() % 100 < 45;
    if (doFree) {
      size_t k = rng() % live.size();
      auto [p, id] = live[k];
      live.erase(live.begin() + k);
      ASSERT_TRUE(alloc.release(p));
      model.free(id);
      blocks.erase(reinterpret_cast<uintptr_t>(p));
    } else {
      // Sizes from 1 B to 64 MiB, log-uniform: both pools, every segment
      // rule.
      int64_t bytes =
          std::max<int64_t>(1, int64_t(std::exp2(double(rng() % 2600) / 100)));
      void *p = alloc.allocate(bytes);
      ASSERT_NE(p, nullptr);
      unsigned id = nextId++;
      model.allocate(id, bytes);
      int64_t size = model.getPlacement(id).size;
      EXPECT_GE(size, bytes);
      EXPECT_TRUE(fake.contains(p, size));
      // Disjoint from its neighbours.
      uintptr_t a = reinterpret_cast<uintptr_t>(p);
      auto next = blocks.lower_bound(a);
      if (next != blocks.end())
        EXPECT_LE(a + size, next->first);
      if (next != blocks.begin()) {
        auto prev = std::prev(next);
        EXPECT_LE(prev->first + prev->second, a);
      }
      blocks[a] = size;
      live.push_back({p, id});
    }
    ASSERT_EQ(alloc.getAllocatedBytes(), model.getAllocatedBytes());
    ASSERT_EQ(alloc.getReservedBytes(), model.getReservedBytes());
    ASSERT_EQ(fake.live, model.getReservedBytes());
    ASSERT_EQ(alloc.getBackedBytes(), fake.live);
  }
  EXPECT_GT(model.getNumSegments(), 10u);
}
} // namespace
