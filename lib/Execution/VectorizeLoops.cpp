//===- VectorizeLoops.cpp - loop order, tiling and vectorization ----------===//
//
// Runs on the bufferized step: reorders window reductions outward
// (linalg::interchangeGenericOp), tiles the innermost loop of each op the
// linalg vectorizer accepts (scf::tileUsingSCF) and vectorizes the tiles
// (linalg::vectorize), then lowers the vector ops to 1-D transfers and
// reductions. Creates views and vector values only: the heap allocations
// the instrumented allocator sees are unchanged.
//
//===----------------------------------------------------------------------===//

#include "vram/Execution/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace vram {
#define GEN_PASS_DEF_VECTORIZELOOPS
#include "vram/Execution/Passes.h.inc"
} // namespace vram

using namespace mlir;

namespace {

/// The permutation (new position -> old loop) that moves the loops over the
/// output's trailing dimensions innermost, the reductions just
/// outside them, when the innermost loop is a reduction shorter than
/// `shortReduction`; empty when the order stays.
SmallVector<unsigned> windowInterchange(linalg::GenericOp op,
                                        int64_t shortReduction) {
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0)
    return {};
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned numLoops = iterators.size();
  if (iterators.back() != utils::IteratorType::reduction ||
      ShapedType::isDynamic(ranges.back()) || ranges.back() >= shortReduction)
    return {};
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  // At most two, and not the output's first dimension unless it is the
  // only one: y[n, f, oh, ow] runs over oh, ow innermost.
  unsigned maxInner =
      std::min<unsigned>(2, std::max<unsigned>(1, out.getNumResults() - 1));
  SmallVector<unsigned> inner;
  for (AffineExpr e : llvm::reverse(out.getResults())) {
    auto dim = dyn_cast<AffineDimExpr>(e);
    if (!dim || inner.size() == maxInner ||
        iterators[dim.getPosition()] != utils::IteratorType::parallel)
      break;
    inner.insert(inner.begin(), dim.getPosition());
  }
  if (inner.empty())
    return {};
  SmallVector<unsigned> perm;
  for (unsigned d = 0; d < numLoops; ++d)
    if (iterators[d] == utils::IteratorType::parallel &&
        !llvm::is_contained(inner, d))
      perm.push_back(d);
  for (unsigned d = 0; d < numLoops; ++d)
    if (iterators[d] == utils::IteratorType::reduction)
      perm.push_back(d);
  perm.append(inner.begin(), inner.end());
  return perm;
}

/// The vector width of an innermost loop of `extent` iterations: the
/// largest of 16, 8, 4 dividing it (no masks, no remainder loop), else 0.
int64_t vectorWidth(int64_t extent) {
  if (ShapedType::isDynamic(extent))
    return 0;
  for (int64_t v : {16, 8, 4})
    if (extent % v == 0)
      return v;
  return 0;
}

struct VectorizeLoopsPass
    : public vram::impl::VectorizeLoopsBase<VectorizeLoopsPass> {
  using VectorizeLoopsBase::VectorizeLoopsBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    IRRewriter rewriter(&getContext());

    // 1. Window reductions outward.
    SmallVector<linalg::GenericOp> generics;
    func.walk([&](linalg::GenericOp op) { generics.push_back(op); });
    for (linalg::GenericOp op : generics) {
      if (!op.hasPureBufferSemantics())
        continue;
      SmallVector<unsigned> perm = windowInterchange(op, shortReduction);
      if (perm.empty())
        continue;
      rewriter.setInsertionPoint(op);
      if (succeeded(linalg::interchangeGenericOp(rewriter, op, perm)))
        ++numInterchanged;
    }
    if (!vectorize)
      return;

    // 2. Tile the innermost loop to a vector and vectorize each tile.
    SmallVector<linalg::LinalgOp> ops;
    func.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    for (linalg::LinalgOp op : ops) {
      if (!op.hasPureBufferSemantics() || op.getNumLoops() == 0)
        continue;
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      int64_t width = vectorWidth(ranges.back());
      auto tileable = dyn_cast<TilingInterface>(op.getOperation());
      if (!width || !tileable || failed(linalg::vectorizeOpPrecondition(op)))
        continue;
      SmallVector<OpFoldResult> sizes(ranges.size(), rewriter.getIndexAttr(1));
      sizes.back() = rewriter.getIndexAttr(width);
      scf::SCFTilingOptions tiling;
      tiling.setTileSizes(sizes);
      rewriter.setInsertionPoint(op);
      FailureOr<scf::SCFTilingResult> tiled =
          scf::tileUsingSCF(rewriter, tileable, tiling);
      if (failed(tiled))
        continue;
      rewriter.eraseOp(op);
      Operation *tile = tiled->tiledOps.back();
      rewriter.setInsertionPoint(tile);
      FailureOr<linalg::VectorizationResult> vectorized =
          linalg::vectorize(rewriter, tile);
      if (failed(vectorized)) {
        // The scalar tile stays: still correct, only slower.
        continue;
      }
      rewriter.eraseOp(tile);
      ++numVectorized;
    }

    // 3. Down to 1-D transfers and reductions.
    RewritePatternSet patterns(&getContext());
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
    vector::populateVectorMultiReductionLoweringPatterns(
        patterns, vector::VectorMultiReductionLowering::InnerReduction);
    vector::populateVectorShapeCastLoweringPatterns(patterns);
    vector::populateVectorTransferLoweringPatterns(patterns,
                                                   /*maxTransferRank=*/1);
    vector::TransferReadOp::getCanonicalizationPatterns(patterns,
                                                        &getContext());
    vector::TransferWriteOp::getCanonicalizationPatterns(patterns,
                                                         &getContext());
    // Bounded: a pattern set that does not converge leaves valid vector IR
    // that convert-vector-to-scf / -llvm still lower.
    GreedyRewriteConfig config;
    config.setMaxIterations(8);
    (void)applyPatternsGreedily(func, std::move(patterns), config);
  }
};

} // namespace
