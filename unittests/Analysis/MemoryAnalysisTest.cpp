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
  %m = nn.optimizer_state exp_avg of %p : tensor<4xf32>
  %v = nn.optimizer_state exp_avg_sq of %p : tensor<4xf32>
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
