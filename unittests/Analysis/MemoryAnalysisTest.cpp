//===- MemoryAnalysisTest.cpp - event stream and allocator models ---------===//
//
// The event stream's order and the allocator-model interface, on small steps
// whose every number is computed by hand in the comments.
//
//===----------------------------------------------------------------------===//

#include "vram/Analysis/MemoryAnalysis.h"
#include "vram/Analysis/Allocator.h"
#include "vram/Dialect/NN/NNDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace vram;

namespace {

// x (2x8 f32, 64 B) and fc.weight (4x8, 128 B) are persistent; linear
// allocates 32 B, relu_ aliases it, relu allocates 32 B and frees the linear
// output; the result is freed at step exit.
constexpr const char *kChain = R"mlir(
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %w = nn.param "fc.weight" : tensor<4x8xf32>
  %y = nn.linear %x, %w : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  %r = nn.relu %y {inplace} : tensor<2x4xf32>
  %z = nn.relu %r : tensor<2x4xf32>
  return %z : tensor<2x4xf32>
}
)mlir";

class MemoryAnalysisTest : public ::testing::Test {
protected:
  MemoryAnalysisTest() {
    context.loadDialect<nn::NNDialect, func::FuncDialect>();
  }
  func::FuncOp parse(const char *source) {
    module = parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module);
    return cast<func::FuncOp>(module->getBody()->front());
  }
  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(MemoryAnalysisTest, EventStreamOrder) {
  MemoryAnalysis memory(parse(kChain));
  ASSERT_FALSE(memory.failed());
  using K = MemoryEvent::Kind;
  struct Expected {
    K kind;
    unsigned storage, opIndex;
  };
  // Entry allocations in definition order, then per op its allocations
  // before its frees, then the exit frees.
  std::vector<Expected> expected = {
      {K::Alloc, 0, 0}, {K::Alloc, 1, 0}, {K::Alloc, 2, 2},
      {K::Alloc, 3, 4}, {K::Free, 2, 4},  {K::Free, 3, 6},
  };
  ASSERT_EQ(memory.getEvents().size(), expected.size());
  for (auto [event, want] : llvm::zip(memory.getEvents(), expected)) {
    EXPECT_EQ(event.kind, want.kind);
    EXPECT_EQ(event.storage, want.storage);
    EXPECT_EQ(event.opIndex, want.opIndex);
  }
  EXPECT_EQ(memory.getStorages()[1].category, MemoryCategory::Parameters);
  EXPECT_TRUE(memory.getStorages()[0].persistent);
  EXPECT_EQ(memory.getPeakBytes(), 64 + 128 + 32 + 32);
  EXPECT_EQ(memory.getPeakIndex(), 4u);
  EXPECT_EQ(memory.getLiveBytes(3), 64 + 128 + 32);
}

TEST_F(MemoryAnalysisTest, ExactAllocatorAgreesWithTheAnalysis) {
  MemoryAnalysis memory(parse(kChain));
  ExactAllocator exact;
  AllocatorPeaks peaks = runAllocator(memory, exact, /*iterations=*/3);
  EXPECT_EQ(peaks.allocated, memory.getPeakBytes());
  EXPECT_EQ(peaks.reserved, memory.getPeakBytes());
  EXPECT_EQ(peaks.allocatedIndex, memory.getPeakIndex());
  // Everything but the persistent storage is freed by step exit.
  EXPECT_EQ(exact.getAllocatedBytes(), 64 + 128);
}

/// A model that rounds every request up to 512 bytes and never returns
/// memory: allocated is the rounded live sum, reserved its high-water mark.
class RoundingAllocator final : public AllocatorModel {
public:
  llvm::StringRef getName() const override { return "rounding"; }
  void allocate(unsigned id, int64_t bytes) override {
    int64_t rounded = (bytes + 511) / 512 * 512;
    live[id] = rounded;
    allocated += rounded;
    reserved = std::max(reserved, allocated);
  }
  void free(unsigned id) override {
    allocated -= live[id];
    live.erase(id);
  }
  int64_t getAllocatedBytes() const override { return allocated; }
  int64_t getReservedBytes() const override { return reserved; }
  std::unique_ptr<AllocatorModel> createEmpty() const override {
    return std::make_unique<RoundingAllocator>();
  }

private:
  llvm::DenseMap<unsigned, int64_t> live;
  int64_t allocated = 0, reserved = 0;
};

TEST_F(MemoryAnalysisTest, AllocatorModelsConsumeTheSameStream) {
  MemoryAnalysis memory(parse(kChain));
  RoundingAllocator rounding;
  AllocatorPeaks peaks = runAllocator(memory, rounding);
  // Four storages of 64, 128, 32 and 32 bytes: 512 each once rounded.
  EXPECT_EQ(peaks.allocated, 4 * 512);
  EXPECT_EQ(peaks.reserved, 4 * 512);
  EXPECT_EQ(peaks.allocatedIndex, 4u);
}

TEST_F(MemoryAnalysisTest, WorkspaceIsAnAllocFreePairAroundItsOp) {
  MemoryAnalysis memory(parse(R"mlir(
func.func @update(%g: tensor<4xf32>) {
  %p = nn.param "w" : tensor<4xf32>
  %m = nn.optimizer_state exp_avg of %p : tensor<4xf32> -> tensor<4xf32>
  %v = nn.optimizer_state exp_avg_sq of %p : tensor<4xf32> -> tensor<4xf32>
  nn.optimizer_step adam foreach params(%p) grads(%g) state(%m, %v) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> ()
  return
}
)mlir"));
  ASSERT_FALSE(memory.failed());
  llvm::ArrayRef<MemoryEvent> allocs = memory.getAllocEvents(4);
  llvm::ArrayRef<MemoryEvent> frees = memory.getFreeEvents(4);
  ASSERT_EQ(allocs.size(), 1u);
  ASSERT_EQ(frees.size(), 1u);
  EXPECT_EQ(allocs[0].storage, frees[0].storage);
  const Storage &ws = memory.getStorages()[allocs[0].storage];
  EXPECT_TRUE(ws.workspace);
  EXPECT_EQ(ws.bytes, 16); // foreach Adam's sqrt list: params-sized
  // Persistent: g 16 + w 16 + two states 32.
  EXPECT_EQ(memory.getPersistentBytes(), 64);
  EXPECT_EQ(memory.getPeakBytes(), 80);
}

} // namespace

//===----------------------------------------------------------------------===//
// The CUDA caching allocator model, by hand (MiB = 1 << 20).
//===----------------------------------------------------------------------===//

namespace {
constexpr int64_t MiB = 1 << 20;

TEST(CudaCachingAllocatorTest, RoundsRequestsTo512Bytes) {
  EXPECT_EQ(CudaCachingAllocator::roundSize(1), 512);
  EXPECT_EQ(CudaCachingAllocator::roundSize(512), 512);
  EXPECT_EQ(CudaCachingAllocator::roundSize(513), 1024);
  // Segment sizes: 2 MiB for the small pool, 20 MiB below 10 MiB, else the
  // request rounded up to 2 MiB.
  EXPECT_EQ(CudaCachingAllocator::segmentSize(1024), 2 * MiB);
  EXPECT_EQ(CudaCachingAllocator::segmentSize(MiB), 2 * MiB);
  EXPECT_EQ(CudaCachingAllocator::segmentSize(MiB + 512), 20 * MiB);
  EXPECT_EQ(CudaCachingAllocator::segmentSize(10 * MiB), 10 * MiB);
  EXPECT_EQ(CudaCachingAllocator::segmentSize(11 * MiB + 1), 12 * MiB);
}

TEST(CudaCachingAllocatorTest, SmallPoolSplitsA2MiBSegment) {
  CudaCachingAllocator cuda;
  cuda.allocate(0, 1000); // 1024 bytes of a new 2 MiB segment
  EXPECT_EQ(cuda.getAllocatedBytes(), 1024);
  EXPECT_EQ(cuda.getReservedBytes(), 2 * MiB);
  cuda.allocate(1, 1000); // from the cached remainder
  EXPECT_EQ(cuda.getAllocatedBytes(), 2048);
  EXPECT_EQ(cuda.getReservedBytes(), 2 * MiB);
  EXPECT_EQ(cuda.getNumSegments(), 1u);
}

TEST(CudaCachingAllocatorTest, LargePoolSegmentsAndBestFit) {
  CudaCachingAllocator cuda;
  cuda.allocate(0, 3 * MiB); // 20 MiB segment, 17 MiB cached
  EXPECT_EQ(cuda.getReservedBytes(), 20 * MiB);
  cuda.allocate(1, 5 * MiB); // from the 17 MiB block, 12 MiB left cached
  EXPECT_EQ(cuda.getReservedBytes(), 20 * MiB);
  cuda.allocate(2, 16 * MiB); // no cached block fits: a 16 MiB segment
  EXPECT_EQ(cuda.getReservedBytes(), 36 * MiB);
  EXPECT_EQ(cuda.getAllocatedBytes(), 24 * MiB);
  EXPECT_EQ(cuda.getNumSegments(), 2u);
}

TEST(CudaCachingAllocatorTest, UnsplitBlockIsAllocatedWhole) {
  CudaCachingAllocator cuda;
  int64_t a = 5 * MiB / 2;        // 2.5 MiB
  cuda.allocate(0, a);            // 20 MiB segment: a + 17.5 MiB cached
  cuda.allocate(1, 20 * MiB - a); // the remainder, exactly
  cuda.free(0);                   // a cached, its neighbour allocated
  cuda.allocate(2, 2 * MiB);      // best fit: the 2.5 MiB block; 0.5 MiB
                                  // left is not > 1 MiB: no split
  EXPECT_EQ(cuda.getAllocatedBytes(), 20 * MiB);
  EXPECT_EQ(cuda.getReservedBytes(), 20 * MiB);
  // Freeing both merges the segment back into one 20 MiB block.
  cuda.free(1);
  cuda.free(2);
  EXPECT_EQ(cuda.getAllocatedBytes(), 0);
  cuda.allocate(3, 19 * MiB);
  EXPECT_EQ(cuda.getReservedBytes(), 20 * MiB);
  EXPECT_EQ(cuda.getNumSegments(), 1u);
}

TEST(CudaCachingAllocatorTest, CachedSegmentsServeTheNextIteration) {
  // A 3 MiB activation allocated and freed every step: the first step
  // reserves a 20 MiB segment, the second reuses it.
  MLIRContext context;
  context.loadDialect<nn::NNDialect, func::FuncDialect>();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"mlir(
func.func @step(%x: tensor<786432xf32>) -> tensor<f32> {
  %y = nn.relu %x : tensor<786432xf32>
  %m = nn.mean %y {dims = array<i64: 0>} : (tensor<786432xf32>) -> tensor<f32>
  return %m : tensor<f32>
}
)mlir",
                                                             &context);
  ASSERT_TRUE(module);
  MemoryAnalysis memory(&module->getBody()->front());
  CudaCachingAllocator cuda;
  AllocatorPeaks peaks = runAllocator(memory, cuda, /*iterations=*/2);
  // Input 3 MiB: its own 20 MiB segment (17 MiB cached). relu's 3 MiB comes
  // from the cache; the 4-byte mean a 2 MiB small segment. Steady state:
  // allocated 3 + 3 MiB + 512 B, reserved 22 MiB.
  EXPECT_EQ(peaks.allocated, 6 * MiB + 512);
  EXPECT_EQ(peaks.reserved, 22 * MiB);
}
} // namespace
