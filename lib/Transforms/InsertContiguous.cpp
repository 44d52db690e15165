//===- InsertContiguous.cpp - explicit copies of strided views ------------===//
//
// One walk in program order: each value's strides are its LayoutOpInterface
// result strides, or contiguous. Before an op that views an operand as a
// shape the operand's strides cannot express, an nn.contiguous copy replaces
// that operand. Linear in the number of ops (times the rank).
//
//===----------------------------------------------------------------------===//

#include "vram/Dialect/NN/NNOps.h"
#include "vram/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

namespace vram {
#define GEN_PASS_DEF_INSERTCONTIGUOUS
#include "vram/Transforms/Passes.h.inc"
} // namespace vram

using namespace mlir;
using namespace vram;
using namespace vram::nn;

unsigned vram::insertContiguousCopies(func::FuncOp func) {
  DenseMap<Value, SmallVector<int64_t>> stridesOf;
  auto strides = [&](Value v) -> SmallVector<int64_t> {
    if (auto it = stridesOf.find(v); it != stridesOf.end())
      return it->second;
    return getContiguousStrides(cast<RankedTensorType>(v.getType()).getShape());
  };
  unsigned copies = 0;
  OpBuilder b(func.getContext());
  func.walk([&](LayoutOpInterface op) {
    SmallVector<OperandView> views;
    op.getOperandViews(views);
    for (const OperandView &view : views) {
      Value operand = op->getOperand(view.operand);
      auto type = cast<RankedTensorType>(operand.getType());
      if (getViewStrides(type.getShape(), strides(operand), view.shape))
        continue;
      b.setInsertionPoint(op);
      Value copy = ContiguousOp::create(b, op->getLoc(), type, operand);
      op->setOperand(view.operand, copy);
      ++copies;
    }
    if (op->getNumOperands() == 0 || op->getNumResults() == 0 ||
        !isa<RankedTensorType>(op->getOperand(0).getType()))
      return;
    SmallVector<int64_t> input = strides(op->getOperand(0));
    for (unsigned i = 0, e = op->getNumResults(); i < e; ++i)
      if (std::optional<SmallVector<int64_t>> result =
              op.getResultStridesAt(i, input))
        stridesOf[op->getResult(i)] = std::move(*result);
  });
  return copies;
}

namespace {
struct InsertContiguousPass
    : public vram::impl::InsertContiguousBase<InsertContiguousPass> {
  void runOnOperation() override {
    numCopies += insertContiguousCopies(getOperation());
  }
};
} // namespace
