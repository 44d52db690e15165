//===- FreeAfterLastUse.cpp - PyTorch's frees on a bufferized step --------===//
//
// One walk numbers the body's ops by step op (the marker calls); for each
// heap allocation a worklist over its views finds the last top-level op
// that uses it, and the dealloc goes before the next marker after that op
// (the end of the step op), or right after it without markers.
//
//===----------------------------------------------------------------------===//

#include "vram/Conversion/NNToTensor.h"
#include "vram/Execution/Passes.h"

#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseMap.h"

namespace vram {
#define GEN_PASS_DEF_FREEAFTERLASTUSE
#include "vram/Execution/Passes.h.inc"
} // namespace vram

using namespace mlir;

namespace {

bool isMarker(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  return call && call.getCallee() == vram::kOpMarkerName;
}

struct FreeAfterLastUsePass
    : public vram::impl::FreeAfterLastUseBase<FreeAfterLastUsePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    if (!func.getBody().hasOneBlock()) {
      func.emitError("vram-free-after-last-use needs a single-block function");
      return signalPassFailure();
    }
    Block &body = func.getBody().front();
    DenseMap<Operation *, unsigned> position;
    bool hasMarkers = false;
    for (auto [i, op] : llvm::enumerate(body)) {
      position[&op] = i;
      hasMarkers |= isMarker(&op);
    }
    SmallVector<memref::AllocOp> allocs;
    for (Operation &op : body)
      if (auto alloc = dyn_cast<memref::AllocOp>(op))
        allocs.push_back(alloc);

    for (memref::AllocOp alloc : allocs) {
      Operation *last = alloc;
      bool escapes = false;
      SmallVector<Value> worklist = {alloc.getResult()};
      while (!worklist.empty()) {
        Value v = worklist.pop_back_val();
        for (OpOperand &use : v.getUses()) {
          Operation *user = body.findAncestorOpInBlock(*use.getOwner());
          if (!user)
            continue;
          if (isa<func::ReturnOp>(user))
            escapes = true;
          if (position.lookup(user) > position.lookup(last))
            last = user;
          if (auto view = dyn_cast<ViewLikeOpInterface>(use.getOwner()))
            if (view.getViewSource() == v)
              for (Value r : use.getOwner()->getResults())
                worklist.push_back(r);
        }
      }
      if (escapes)
        continue;
      // The end of the step op of `last`: just before the next marker.
      Operation *insertBefore = last->getNextNode();
      if (hasMarkers)
        while (insertBefore != body.getTerminator() && !isMarker(insertBefore))
          insertBefore = insertBefore->getNextNode();
      OpBuilder b(insertBefore);
      memref::DeallocOp::create(b, alloc.getLoc(), alloc.getResult());
    }
  }
};

} // namespace
