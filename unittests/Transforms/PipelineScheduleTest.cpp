//===- PipelineScheduleTest.cpp - interleaved 1F1B as torch lists it ------===//
//
// vram-opt's ScheduleInterleaved1F1B action lists against torch 2.15's own
// (benchmarks/accuracy/pp_schedules.py -> results/pp-schedules-torch-
// 2.15.0.txt): every rank of 18 layouts, action by action.
//
//===----------------------------------------------------------------------===//

#include "vram/Transforms/PipelineSchedule.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include "gtest/gtest.h"

using namespace vram;

namespace {

TEST(PipelineScheduleTest, Interleaved1F1BMatchesTorch) {
  auto file = llvm::MemoryBuffer::getFile(
      VRAM_SOURCE_DIR
      "/benchmarks/accuracy/results/pp-schedules-torch-2.15.0.txt");
  ASSERT_TRUE(static_cast<bool>(file));
  llvm::SmallVector<llvm::StringRef> lines;
  (*file)->getBuffer().split(lines, '\n', -1, /*KeepEmpty=*/false);
  int checked = 0;
  for (llvm::StringRef line : lines) {
    if (line.starts_with("#"))
      continue;
    auto [head, expected] = line.split(": ");
    llvm::SmallVector<llvm::StringRef> fields;
    head.split(fields, ' ');
    ASSERT_EQ(fields.size(), 4u) << line.str();
    int64_t ranks, local, microbatches, rank;
    ASSERT_FALSE(fields[0].getAsInteger(10, ranks) ||
                 fields[1].getAsInteger(10, local) ||
                 fields[2].getAsInteger(10, microbatches) ||
                 fields[3].getAsInteger(10, rank));
    auto actions = getInterleaved1F1BActions(ranks, local, microbatches);
    ASSERT_TRUE(succeeded(actions)) << head.str();
    std::string ours = llvm::join(
        llvm::map_range((*actions)[rank],
                        [](const PipelineAction &a) { return a.str(); }),
        " ");
    EXPECT_EQ(ours, expected.str()) << head.str();
    ++checked;
  }
  EXPECT_EQ(checked, 61);
}

// torch raises ValueError when the micro-batches are not a multiple of the
// rounds (max(1, microbatches / ranks)): 2 ranks, 5 micro-batches, 2 rounds.
TEST(PipelineScheduleTest, Interleaved1F1BRejectsUnevenRounds) {
  EXPECT_TRUE(failed(getInterleaved1F1BActions(2, 2, 5)));
  EXPECT_TRUE(succeeded(getInterleaved1F1BActions(2, 2, 6)));
}

} // namespace
