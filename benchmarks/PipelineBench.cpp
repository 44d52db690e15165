//===- PipelineBench.cpp - speed of the whole pipeline --------------------===//
//
// Zoo model -> vram-build-step (train, Adam) -> memory + FLOP analyses -> JSON,
// as `vram-opt --zoo=NAME --mode=train --format=json` runs it, plus a
// synthetic chain of N linear+relu layers to show how time grows with ops.
//
//   cmake --build build --target vram-bench && build/bin/vram-bench
//
//===----------------------------------------------------------------------===//

#include "vram/Dialect/NN/NNOps.h"
#include "vram/Pipeline/Pipeline.h"
#include "vram/Report/Report.h"
#include "vram/Transforms/Passes.h"
#include "vram/Zoo/Zoo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <benchmark/benchmark.h>

using namespace mlir;

static void
runPipeline(benchmark::State &state, MLIRContext &ctx,
            llvm::function_ref<OwningOpRef<ModuleOp>()> build,
            llvm::function_ref<void(vram::PipelineOptions &)> configure = {}) {
  for (auto _ : state) {
    OwningOpRef<ModuleOp> module = build();
    vram::PipelineOptions options;
    options.step.mode = vram::nn::StepMode::Train;
    options.step.optimizer = vram::nn::OptimizerKind::Adam;
    if (configure)
      configure(options);
    if (llvm::errorToBool(vram::runPipeline(*module, options))) {
      state.SkipWithError("pipeline failed");
      return;
    }
    std::string json;
    llvm::raw_string_ostream os(json);
    if (failed(vram::writeReport(*module, vram::ReportOptions(),
                                 vram::ReportFormat::Json, os))) {
      state.SkipWithError("report failed");
      return;
    }
    benchmark::DoNotOptimize(json);
  }
}

static MLIRContext &context() {
  static MLIRContext *ctx = [] {
    DialectRegistry registry;
    registry.insert<vram::nn::NNDialect, func::FuncDialect>();
    auto *c = new MLIRContext(registry);
    c->loadAllAvailableDialects();
    vram::registerVramPasses();
    return c;
  }();
  return *ctx;
}

static void BM_Zoo(benchmark::State &state, const char *name, int64_t batch,
                   std::optional<int64_t> seq) {
  MLIRContext &ctx = context();
  vram::zoo::ZooOptions options;
  options.batch = batch;
  options.seq = seq;
  runPipeline(state, ctx, [&] {
    return std::move(*vram::zoo::buildModel(&ctx, name, options));
  });
}

BENCHMARK_CAPTURE(BM_Zoo, resnet18, "resnet18", 32, std::nullopt)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Zoo, resnet50, "resnet50", 32, std::nullopt)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Zoo, resnet101, "resnet101", 32, std::nullopt)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Zoo, resnet152, "resnet152", 32, std::nullopt)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Zoo, llama7b_seq4096, "llama-7b", 1, 4096)
    ->Unit(benchmark::kMillisecond);

/// A chain of `layers` linear+relu layers of width `width`, as
/// benchmarks/generate_chain.py writes it; `modules` names each layer a
/// module (`lN`, its weight `lN.weight`; `prefix` replaces `l`), else the
/// ops have no location.
static OwningOpRef<ModuleOp> buildChain(MLIRContext &ctx, int64_t layers,
                                        int64_t width, bool modules,
                                        llvm::StringRef prefix = "l") {
  OpBuilder b(&ctx);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto type = RankedTensorType::get({8, width}, b.getF32Type());
  auto func = func::FuncOp::create(b, loc, "forward",
                                   b.getFunctionType({type}, {type}));
  b.setInsertionPointToStart(func.addEntryBlock());
  Value x = func.getArgument(0);
  auto weightType = RankedTensorType::get({width, width}, b.getF32Type());
  for (int64_t i = 0; i < layers; ++i) {
    std::string name = prefix.str() + std::to_string(i);
    Location layer =
        modules ? Location(NameLoc::get(b.getStringAttr(name))) : loc;
    Value w = vram::nn::ParamOp::create(
        b, layer, weightType,
        b.getStringAttr(modules ? name + ".weight" : name));
    x = vram::nn::LinearOp::create(b, layer, x, w, Value());
    x = vram::nn::ReluOp::create(b, layer, x, /*inplace=*/false);
  }
  func::ReturnOp::create(b, loc, x);
  return module;
}

/// Counters of a chain of `ops` forward ops: "per_op" is the time per
/// forward op, which should stay flat from 1k to 1M ops (issue 20).
static void setChainCounters(benchmark::State &state, int64_t ops) {
  state.SetComplexityN(ops);
  state.counters["ops"] = static_cast<double>(ops);
  // Seconds per forward op and iteration.
  state.counters["per_op"] = benchmark::Counter(
      static_cast<double>(ops), benchmark::Counter::kIsIterationInvariantRate |
                                    benchmark::Counter::kInvert);
}

/// The chain at width 64 with state.range(0) forward ops (an nn.param,
/// nn.linear and nn.relu per layer: range / 3 layers).
static void BM_Chain(benchmark::State &state) {
  MLIRContext &ctx = context();
  int64_t layers = state.range(0) / 3;
  runPipeline(state, ctx,
              [&] { return buildChain(ctx, layers, 64, /*modules=*/false); });
  setChainCounters(state, 3 * layers);
}
BENCHMARK(BM_Chain)
    ->RangeMultiplier(10)
    ->Range(1000, 1000000)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oN);

/// The chain of state.range(0) forward ops at `width`, its layers named
/// `prefix`N, through the pipeline as `configure` lays it out over ranks.
static void
runParallelChain(benchmark::State &state, int64_t width, llvm::StringRef prefix,
                 llvm::function_ref<void(vram::ParallelOptions &)> configure) {
  MLIRContext &ctx = context();
  int64_t layers = state.range(0) / 3;
  runPipeline(
      state, ctx,
      [&] { return buildChain(ctx, layers, width, /*modules=*/true, prefix); },
      [&](vram::PipelineOptions &options) {
        options.parallel = vram::ParallelOptions();
        configure(*options.parallel);
      });
  setChainCounters(state, 3 * layers);
}

/// The chain at width 512 (weights above ZeRO-3's persistence threshold)
/// under --parallel=dp=8 --strategy=zero3: the coordinator's replay
/// (lib/Transforms/Zero3.cpp) should keep the time per op flat too.
static void BM_ChainZero3(benchmark::State &state) {
  runParallelChain(state, 512, "l", [](vram::ParallelOptions &parallel) {
    parallel.dp = 8;
    parallel.zero = 3;
  });
}
BENCHMARK(BM_ChainZero3)
    ->RangeMultiplier(10)
    ->Range(1000, 100000)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oN);

/// The chain as 4 pipeline stages of repeated blocks (`layers.N`) under
/// 1F1B over 8 micro-batches: every stage's step is built (the micro-
/// batches' clones) and analysed, so the time per op should stay flat.
static void BM_ChainPipeline(benchmark::State &state) {
  runParallelChain(state, 64, "layers.", [](vram::ParallelOptions &parallel) {
    parallel.pp = 4;
    parallel.microbatches = 8;
  });
}
BENCHMARK(BM_ChainPipeline)
    ->RangeMultiplier(10)
    ->Range(1000, 100000)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oN);

/// The same under interleaved 1F1B, 2 stages a rank: the rank's action list
/// (PipelineSchedule.cpp's lockstep simulation of torch's lowering) is
/// replayed op by op, so the time per op should stay flat too.
static void BM_ChainInterleaved(benchmark::State &state) {
  runParallelChain(state, 64, "layers.", [](vram::ParallelOptions &parallel) {
    parallel.pp = 4;
    parallel.ppSchedule = "interleaved-1f1b";
    parallel.ppStagesPerRank = 2;
    parallel.microbatches = 8;
  });
}
BENCHMARK(BM_ChainInterleaved)
    ->RangeMultiplier(10)
    ->Range(1000, 100000)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oN);

BENCHMARK_MAIN();
