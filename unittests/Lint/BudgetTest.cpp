//===- BudgetTest.cpp - sizes and the fit search
//---------------------------===//

#include "vram/Lint/Budget.h"

#include <gtest/gtest.h>

using namespace vram;

namespace {
TEST(BudgetTest, ParsesDecimalAndBinaryUnits) {
  EXPECT_EQ(parseByteSize("1000000"), 1000000);
  EXPECT_EQ(parseByteSize("512B"), 512);
  EXPECT_EQ(parseByteSize("24GB"), 24000000000);
  EXPECT_EQ(parseByteSize("8GiB"), int64_t(8) << 30);
  EXPECT_EQ(parseByteSize("1.5 MiB"), 1572864);
  EXPECT_EQ(parseByteSize("2KB"), 2000);
  EXPECT_FALSE(parseByteSize("lots"));
  EXPECT_FALSE(parseByteSize("8 GiBs"));
  EXPECT_FALSE(parseByteSize("-1GB"));
  EXPECT_FALSE(parseByteSize("100000000TB")); // beyond 64 bits
}

TEST(BudgetTest, FindsTheLargestBatchThatFits) {
  // A made-up step: 1000 bytes per sample plus a 4096-byte bump from batch
  // 37 on (not linear): with 40000 bytes, 36 samples fit (36000), 37 do not
  // (41096).
  int calls = 0;
  auto measure = [&](int64_t batch) -> mlir::FailureOr<int64_t> {
    ++calls;
    return 1000 * batch + (batch >= 37 ? 4096 : 0);
  };
  mlir::FailureOr<std::optional<int64_t>> best =
      findLargestBatch(measure, 40000);
  ASSERT_TRUE(mlir::succeeded(best));
  ASSERT_TRUE(best->has_value());
  EXPECT_EQ(**best, 36);
  EXPECT_LT(calls, 20); // doubling then bisecting: logarithmic
  // Nothing fits.
  best = findLargestBatch(measure, 999);
  ASSERT_TRUE(mlir::succeeded(best));
  EXPECT_FALSE(best->has_value());
}
} // namespace
