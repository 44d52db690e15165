//===- CompilerBuffers.cpp - the step's buffers as a compiler chooses -----===//
//
// The `compiler` allocation mode: PyTorch's fresh buffers
// (bufferization.alloc_tensor) become tensor.empty, elementwise ops write
// into a dead input where one-shot bufferization's in-place analysis finds
// no conflict, and everything else is left to upstream bufferization and
// deallocation (CpuRunner.cpp).
//
//===----------------------------------------------------------------------===//

#include "vram/Execution/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotModuleBufferize.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"

namespace vram {
#define GEN_PASS_DEF_COMPILERBUFFERS
#include "vram/Execution/Passes.h.inc"
} // namespace vram

using namespace mlir;

namespace {

struct CompilerBuffersPass
    : public vram::impl::CompilerBuffersBase<CompilerBuffersPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    IRRewriter rewriter(&getContext());

    // 1. PyTorch's fresh buffers become ordinary empty tensors.
    SmallVector<bufferization::AllocTensorOp> allocs;
    module.walk([&](bufferization::AllocTensorOp op) {
      if (op.getDynamicSizes().empty() && !op.getCopy() && !op.getSizeHint() &&
          !op.getMemorySpace())
        allocs.push_back(op);
    });
    for (bufferization::AllocTensorOp op : allocs) {
      rewriter.setInsertionPoint(op);
      RankedTensorType type = op.getType();
      rewriter.replaceOpWithNewOp<tensor::EmptyOp>(op, type.getShape(),
                                                   type.getElementType());
    }

    // 2. Destination reuse: an elementwise op whose init is empty (never
    // read) writes into an input of the same type and map.
    struct Reuse {
      OpOperand *init;
      Value empty;
    };
    SmallVector<Reuse> reuses;
    module.walk([&](linalg::GenericOp op) {
      if (op.getNumDpsInits() != 1 ||
          op.getNumLoops() != op.getNumParallelLoops())
        return;
      OpOperand *init = op.getDpsInitOperand(0);
      if (!init->get().getDefiningOp<tensor::EmptyOp>() ||
          op.payloadUsesValueFromOperand(init))
        return;
      AffineMap outMap = op.getMatchingIndexingMap(init);
      for (OpOperand *in : op.getDpsInputOperands()) {
        Value v = in->get();
        if (v.getType() != init->get().getType() || isa<BlockArgument>(v) ||
            op.getMatchingIndexingMap(in) != outMap)
          continue;
        reuses.push_back({init, init->get()});
        init->set(v);
        break;
      }
    });
    if (reuses.empty())
      return;

    // 3. One-shot bufferization's analysis decides; a reuse it would have to
    // copy is undone.
    bufferization::OneShotBufferizationOptions options;
    options.bufferizeFunctionBoundaries = true;
    options.setFunctionBoundaryTypeConversion(
        bufferization::LayoutMapOption::IdentityLayoutMap);
    bufferization::OneShotAnalysisState state(module, options);
    bool analyzed = succeeded(bufferization::analyzeModuleOp(module, state));
    llvm::SetVector<Operation *> empties;
    for (Reuse &r : reuses) {
      if (analyzed && state.isInPlace(*r.init)) {
        ++numReused;
        continue;
      }
      r.init->set(r.empty);
      ++numUndone;
    }
    for (Reuse &r : reuses)
      empties.insert(r.empty.getDefiningOp());
    for (Operation *op : empties)
      if (op->use_empty())
        rewriter.eraseOp(op);
  }
};

} // namespace
