//===- PrintAnalyses.cpp - test passes that print the analyses ------------===//

#include "vram/Analysis/Allocator.h"
#include "vram/Analysis/FlopAnalysis.h"
#include "vram/Analysis/MemoryAnalysis.h"
#include "vram/Analysis/Passes.h"

namespace vram {
#define GEN_PASS_DEF_PRINTMEMORY
#define GEN_PASS_DEF_PRINTFLOPS
#include "vram/Analysis/Passes.h.inc"
} // namespace vram

using namespace mlir;
using namespace vram;

namespace {
struct PrintMemoryPass : public vram::impl::PrintMemoryBase<PrintMemoryPass> {
  using PrintMemoryBase::PrintMemoryBase;
  void runOnOperation() override {
    auto &memory = getAnalysis<MemoryAnalysis>();
    memory.print(llvm::outs());
    if (memory.failed())
      return signalPassFailure();
    if (iterations > 1) {
      ExactAllocator exact;
      AllocatorPeaks peaks = runAllocator(memory, exact, iterations);
      llvm::outs() << "exact allocator, iteration " << iterations
                   << ": allocated peak " << peaks.allocated << " at ["
                   << peaks.allocatedIndex << "], reserved peak "
                   << peaks.reserved << "\n";
    }
    markAllAnalysesPreserved();
  }
};

struct PrintFlopsPass : public vram::impl::PrintFlopsBase<PrintFlopsPass> {
  void runOnOperation() override {
    auto &flops = getAnalysis<FlopAnalysis>();
    flops.print(llvm::outs());
    if (flops.failed())
      return signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
