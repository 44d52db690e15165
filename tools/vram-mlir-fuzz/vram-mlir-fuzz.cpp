//===- vram-mlir-fuzz.cpp - libFuzzer target for nn IR text ---------------===//
//
// Feeds arbitrary bytes to MLIR's parser in a context with the nn and func
// dialects (the nn dialect's custom parsers and verifiers run there), then,
// for a module that parses and verifies, runs what a report needs: the
// vram-build-step pass (a training or inference step, picked by the input,
// then one rank's under ZeRO-3 for some inputs) and the memory and FLOP
// analyses of the step. Each must either succeed or
// emit diagnostics: never crash, hang, or trip a sanitizer. Diagnostics are
// swallowed.
//
//   vram-mlir-fuzz -max_total_time=60 CORPUS_DIR [SEED_DIRS...]
//
// Inputs are bounded so that each run is short: at most kMaxInputBytes, and
// no bracket nested deeper than kMaxNesting (MLIR's parser recurses per
// level: 100,000 nested `[` overflow the stack, a known limit that the
// driver checks before parsing).
//
//===----------------------------------------------------------------------===//

#include "vram/Analysis/FlopAnalysis.h"
#include "vram/Analysis/MemoryAnalysis.h"
#include "../FuzzContext.h"
#include "vram/Dialect/NN/NNDialect.h"
#include "vram/Support/ParseLimits.h"
#include "vram/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <cstddef>
#include <cstdint>
#include <memory>

using namespace mlir;

namespace {

constexpr size_t kMaxInputBytes = 4096;
constexpr unsigned kMaxNesting = 256;

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  if (size > kMaxInputBytes || vram::findExcessiveNesting(text, kMaxNesting))
    return 0;

  // The context uniques every attribute and type it sees and never frees
  // them: start a fresh one now and then so that long runs stay bounded.
  static std::unique_ptr<MLIRContext> ctx;
  static unsigned runs = 0;
  if (!ctx || ++runs % 4096 == 0)
    ctx = vram::makeFuzzContext();

  // MLIR's lexer reads the byte past the end of its buffer (a null
  // terminator in the files vram-opt reads): parse a null-terminated copy,
  // as the driver does. Parsing verifies the module (verifyAfterParse).
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "fuzz.mlir"), llvm::SMLoc());
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(ctx.get()));
  if (!module)
    return 0;

  // A forward model: build a step, training or inference by the input's
  // last byte, with the defaults of vram-opt.
  if (!module->lookupSymbol("step") && module->lookupSymbol("forward")) {
    vram::BuildStepOptions options;
    options.mode = data[size - 1] & 1 ? vram::nn::StepMode::Train
                                      : vram::nn::StepMode::Inference;
    PassManager pm(ctx.get(), ModuleOp::getOperationName());
    pm.addPass(vram::createBuildStep(options));
    // The next bit rewrites the step into one rank's under ZeRO-3 (its
    // coordinator replay reads every op's layer and parameter uses).
    if (data[size - 1] & 2) {
      vram::ParallelOptions parallel;
      parallel.dp = 2;
      parallel.zero = 3;
      parallel.prefetchBucket = data[size - 1] & 4 ? 0 : 1000;
      parallel.persistenceThreshold = 0;
      pm.addPass(vram::createParallel(parallel));
    }
    if (failed(pm.run(*module)) || failed(verify(*module)))
      return 0;
  }

  auto step = module->lookupSymbol<func::FuncOp>("step");
  if (!step)
    step = module->lookupSymbol<func::FuncOp>("forward");
  if (!step || step.isExternal())
    return 0;
  vram::MemoryAnalysis memory(step);
  if (!memory.failed()) {
    (void)memory.getBreakdown(memory.getPeakIndex());
    (void)memory.getTopStoragesAtPeak(10);
    (void)memory.getSavedForBackwardBytes();
  }
  vram::FlopAnalysis flops(step);
  (void)flops.failed();
  return 0;
}
