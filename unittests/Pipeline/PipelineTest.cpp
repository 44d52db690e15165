//===- PipelineTest.cpp - the pipeline library's contract -----------------===//
//
// What every entry point relies on: scenario options that cannot apply are
// usage errors (not ignored), a module parsed by the caller cannot be
// rebuilt at another batch, and the figures come from one StepMemory whose
// numbers are computed by hand below.
//
//===----------------------------------------------------------------------===//

#include "vram/Pipeline/Pipeline.h"
#include "vram/Pipeline/ModelSource.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace vram;

namespace {

// x (2x8 f32, 64 B) and fc.weight (4x8, 128 B) are persistent; linear
// allocates 32 B and relu another 32 B while it is alive: the forward's
// exact peak is 64 + 128 + 32 + 32 = 256 B.
constexpr const char *kForward = R"mlir(
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %w = nn.param "fc.weight" : tensor<4x8xf32>
  %y = nn.linear %x, %w : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  %z = nn.relu %y : tensor<2x4xf32>
  return %z : tensor<2x4xf32>
}
)mlir";

class PipelineTest : public ::testing::Test {
protected:
  PipelineTest() { context.loadDialect<nn::NNDialect, func::FuncDialect>(); }

  OwningOpRef<ModuleOp> parse() {
    return parseSourceString<ModuleOp>(kForward, &context);
  }

  /// The message of a UsageError, or "" for any other result.
  static std::string usageMessage(llvm::Error error) {
    std::string message;
    llvm::handleAllErrors(
        std::move(error),
        [&](const UsageError &usage) { message = usage.message(); },
        [](const llvm::ErrorInfoBase &) {});
    return message;
  }

  MLIRContext context;
};

TEST_F(PipelineTest, MeasuresTheForwardWithoutBuildingAStep) {
  OwningOpRef<ModuleOp> module = parse();
  ASSERT_TRUE(module);
  PipelineOptions options;
  options.buildStep = false;
  ASSERT_FALSE(llvm::errorToBool(runPipeline(*module, options)));
  EXPECT_FALSE(module->lookupSymbol("step"));
  FailureOr<int64_t> exact = measureBudgetMetric(*module, options);
  ASSERT_TRUE(succeeded(exact));
  EXPECT_EQ(*exact, 64 + 128 + 32 + 32);
}

TEST_F(PipelineTest, DeviceIsReservedPlusTheContext) {
  OwningOpRef<ModuleOp> module = parse();
  ASSERT_TRUE(module);
  PipelineOptions options;
  options.buildStep = false;
  options.memoryModel.allocator = nn::AllocatorKind::PytorchCuda;
  options.memoryModel.contextBytes = 1000;
  std::unique_ptr<StepMemory> memory = computeStepMemory(*module, options);
  ASSERT_TRUE(memory);
  const MemoryMetrics &m = memory->getMetrics();
  EXPECT_EQ(m.exact, 256);
  // Four blocks rounded up to 512 B each, and the workspace the linear's
  // cuBLAS call holds through the allocator on the generic (sm_80) GPU:
  // 4096 KiB x 2 + 16 KiB x 8 = 8,519,680 B (one thread: no backward; no
  // bias, so no cuBLASLt call).
  EXPECT_EQ(m.allocated, 4 * 512 + 8519680);
  EXPECT_EQ(m.device, m.reserved + 1000);
  // The default metric with the caching allocator on CUDA is the device
  // figure (what nvidia-smi shows).
  EXPECT_EQ(options.getBudgetMetric(), BudgetMetric::Device);
}

TEST_F(PipelineTest, CheckpointingAnInferenceStepIsAUsageError) {
  OwningOpRef<ModuleOp> module = parse();
  ASSERT_TRUE(module);
  PipelineOptions options;
  options.step.mode = nn::StepMode::Inference;
  options.checkpointModules = {"*"};
  EXPECT_EQ(usageMessage(runPipeline(*module, options)),
            "--checkpoint applies to a training step (--mode=train)");
}

TEST_F(PipelineTest, ScenarioAfterTheStepIsAUsageError) {
  OwningOpRef<ModuleOp> module = parse();
  ASSERT_TRUE(module);
  PipelineOptions build;
  ASSERT_FALSE(llvm::errorToBool(runPipeline(*module, build)));
  ASSERT_TRUE(module->lookupSymbol("step"));
  PipelineOptions amp;
  amp.precision = nn::Precision::AmpBf16;
  EXPECT_NE(usageMessage(runPipeline(*module, amp)).find("forward model"),
            std::string::npos);
}

TEST_F(PipelineTest, AParsedModuleCannotBeRebuilt) {
  std::unique_ptr<ModelSource> source =
      createModuleSource(parse(), "chain", "chain.mlir");
  EXPECT_FALSE(source->canRebuild());
  PipelineOptions options;
  options.budget = 1 << 20;
  llvm::Expected<std::optional<int64_t>> best =
      findFittingBatch(*source, options);
  ASSERT_FALSE(best);
  EXPECT_NE(usageMessage(best.takeError()).find("--fit-batch"),
            std::string::npos);
}
} // namespace
