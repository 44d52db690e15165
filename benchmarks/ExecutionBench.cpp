//===- ExecutionBench.cpp - speed of the executed training step -----------===//
//
// One training step (Adam) of a zoo model, lowered, JIT-compiled and run on
// the CPU as `vram-opt --validate=cpu` runs it. The time is the step's call
// alone (JIT compilation excluded; Google Benchmark's manual time); the
// counters are the step time and the achieved GFLOP/s: the FLOP analysis's
// total for the step (FLOPs convention, the report's) divided by the step
// time. Each benchmark runs with the loops tiled and vectorized
// (vram-vectorize-loops, the default) and without (the naive loop nests of
// convert-linalg-to-loops), for the before/after of docs/Execution.md.
//
//   ninja -C build vram-exec-bench && build/bin/vram-exec-bench
//
//===----------------------------------------------------------------------===//

#include "vram/Analysis/FlopAnalysis.h"
#include "vram/Dialect/NN/NNOps.h"
#include "vram/Execution/CpuRunner.h"
#include "vram/Transforms/Passes.h"
#include "vram/Zoo/Zoo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include <benchmark/benchmark.h>

#include <chrono>

using namespace mlir;

static MLIRContext &context() {
  static MLIRContext *ctx = [] {
    DialectRegistry registry;
    registry.insert<vram::nn::NNDialect, func::FuncDialect>();
    vram::registerExecutionDialects(registry);
    auto *c = new MLIRContext(registry);
    c->loadAllAvailableDialects();
    vram::registerVramPasses();
    return c;
  }();
  return *ctx;
}

/// state.range(0): batch, range(1): image size, range(2): the loops
/// (0 naive, 1 interchanged, 2 also vectorized), range(3): LLVM tuned for
/// the host CPU (1) or its generic cost model (0).
static void BM_Step(benchmark::State &state, const char *name) {
  MLIRContext &ctx = context();
  vram::zoo::ZooOptions zoo;
  zoo.batch = state.range(0);
  zoo.imageSize = state.range(1);
  double flops = 0, compileSeconds = 0;
  for (auto _ : state) {
    llvm::Expected<OwningOpRef<ModuleOp>> module =
        vram::zoo::buildModel(&ctx, name, zoo);
    if (!module) {
      llvm::consumeError(module.takeError());
      state.SkipWithError("unknown zoo model");
      return;
    }
    PassManager pm(&ctx);
    if (failed(parsePassPipeline("vram-build-step{mode=train optimizer=adam}",
                                 pm)) ||
        failed(pm.run(**module))) {
      state.SkipWithError("building the step failed");
      return;
    }
    auto step = (**module).lookupSymbol<func::FuncOp>("step");
    vram::FlopAnalysis analysis(step);
    flops = analysis.getTotal(vram::nn::FlopConvention::Flops);
    vram::CpuValidationOptions options;
    options.loops =
        static_cast<vram::CpuValidationOptions::Loops>(state.range(2));
    options.tuneForHost = state.range(3);
    auto start = std::chrono::steady_clock::now();
    FailureOr<vram::CpuValidationResult> result =
        vram::validateOnCpu(**module, options);
    auto end = std::chrono::steady_clock::now();
    if (failed(result)) {
      state.SkipWithError("the step failed");
      return;
    }
    state.SetIterationTime(result->wallSeconds);
    compileSeconds = std::chrono::duration<double>(end - start).count() -
                     result->wallSeconds;
    state.counters["step_ms"] = result->wallSeconds * 1e3;
    state.counters["GFLOP/s"] = flops / result->wallSeconds / 1e9;
  }
  state.counters["step_GFLOP"] = flops / 1e9;
  state.counters["compile_and_setup_s"] = compileSeconds;
}

// The small case: tiny_cnn at batch 2 (32 px).
BENCHMARK_CAPTURE(BM_Step, tiny_cnn, "tiny_cnn")
    ->ArgsProduct({{2}, {32}, {0, 1, 2}, {0, 1}})
    ->ArgNames({"batch", "px", "loops", "host"})
    ->UseManualTime()
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond);
// resnet18 at batch 2, 32 px and 224 px: one step per run (a compile each).
BENCHMARK_CAPTURE(BM_Step, resnet18, "resnet18")
    ->ArgsProduct({{2}, {32, 224}, {0, 1, 2}, {0, 1}})
    ->ArgNames({"batch", "px", "loops", "host"})
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
