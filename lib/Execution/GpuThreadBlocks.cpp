//===- GpuThreadBlocks.cpp - outermost parallel loops as 1-D blocks
//--------===//
//
// Collapse, then tile: one grid dimension and one block dimension per loop,
// whatever its rank, so every iteration gets a thread of its own.
//
//===----------------------------------------------------------------------===//

#include "vram/Execution/Passes.h"

#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <numeric>

namespace vram {
#define GEN_PASS_DEF_GPUTHREADBLOCKS
#include "vram/Execution/Passes.h.inc"
} // namespace vram

using namespace mlir;

namespace {

struct GpuThreadBlocksPass
    : public vram::impl::GpuThreadBlocksBase<GpuThreadBlocksPass> {
  using GpuThreadBlocksBase::GpuThreadBlocksBase;

  void runOnOperation() override {
    if (blockSize < 1) {
      getOperation().emitError("vram-gpu-thread-blocks: block-size must be "
                               "at least 1, not ")
          << static_cast<int64_t>(blockSize);
      return signalPassFailure();
    }
    SmallVector<scf::ParallelOp> outermost;
    getOperation().walk([&](scf::ParallelOp loop) {
      if (!loop->getParentOfType<scf::ParallelOp>())
        outermost.push_back(loop);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp loop : outermost) {
      if (loop.getNumLoops() > 1) {
        std::vector<unsigned> all(loop.getNumLoops());
        std::iota(all.begin(), all.end(), 0);
        rewriter.setInsertionPoint(loop);
        // Replaces `loop` by a new 1-D loop: find it as the op before
        // which `loop` stood.
        Operation *next = loop->getNextNode();
        collapseParallelLoops(rewriter, loop, {all});
        loop = cast<scf::ParallelOp>(next->getPrevNode());
        foldIndexArithmetic();
      }
      // A loop shorter than a block (a serial nest offloaded as one
      // iteration) gets a block of its own length.
      int64_t threads = blockSize;
      std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound()[0]);
      std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound()[0]);
      std::optional<int64_t> step = getConstantIntValue(loop.getStep()[0]);
      if (lb && ub && step && *step > 0)
        threads = std::clamp<int64_t>(llvm::divideCeil(*ub - *lb, *step), 1,
                                      blockSize);
      scf::tileParallelLoop(loop, {threads}, /*noMinMaxBounds=*/true);
    }
    foldIndexArithmetic();
  }

  /// Folds the bound computations the utilities create (1 * 4 * 8), so the
  /// launch sizes are constants. Arith ops only: a canonicalizer would also
  /// erase allocations nothing reads, which the step must keep.
  void foldIndexArithmetic() {
    SmallVector<Operation *> arith;
    getOperation().walk([&](Operation *op) {
      if (isa<arith::ArithDialect>(op->getDialect()))
        arith.push_back(op);
    });
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingOps);
    (void)applyOpPatternsGreedily(arith, FrozenRewritePatternSet(), config);
  }
};

} // namespace
