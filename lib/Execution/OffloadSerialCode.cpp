//===- OffloadSerialCode.cpp - serial loops into one-thread kernels -------===//
//
// The top level of the step's body is host code: allocation, views, the op
// markers and the parallel loops that become kernels. Everything else that
// touches buffer contents must run on the device. One pass over the body
// collects runs of such ops (and the pure ops computing on their results),
// and each run moves into an scf.parallel of one iteration. memref.copy,
// which the host would run through the runtime's memrefCopy, becomes a
// parallel loop of loads and stores.
//
//===----------------------------------------------------------------------===//

#include "vram/Execution/Passes.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace vram {
#define GEN_PASS_DEF_OFFLOADSERIALCODE
#include "vram/Execution/Passes.h.inc"
} // namespace vram

using namespace mlir;

namespace {

/// Whether `op` reads or writes the contents of a buffer (itself or in one
/// of its regions).
bool touchesBufferContents(Operation *op) {
  WalkResult result = op->walk([](Operation *inner) {
    auto effects = dyn_cast<MemoryEffectOpInterface>(inner);
    if (!effects)
      return inner->getNumRegions() == 0 && !isPure(inner)
                 ? WalkResult::interrupt() // unknown effects: be safe
                 : WalkResult::advance();
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (const auto &e : instances)
      if (isa<MemoryEffects::Read, MemoryEffects::Write>(e.getEffect()))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

/// Ops that stay on the host whatever they compute on.
bool isHostOp(Operation *op) {
  return isa<scf::ParallelOp, func::CallOp, func::ReturnOp, memref::AllocOp,
             memref::AllocaOp, memref::DeallocOp, memref::GetGlobalOp>(op) ||
         isa<ViewLikeOpInterface>(op);
}

/// memref.copy as a parallel loop nest of loads and stores.
LogicalResult expandCopy(memref::CopyOp copy) {
  auto type = dyn_cast<MemRefType>(copy.getSource().getType());
  if (!type || !type.hasStaticShape())
    return copy.emitError("a copy of a dynamically shaped buffer cannot be "
                          "offloaded");
  OpBuilder b(copy);
  Location loc = copy.getLoc();
  if (type.getRank() == 0) {
    Value v = memref::LoadOp::create(b, loc, copy.getSource());
    memref::StoreOp::create(b, loc, v, copy.getTarget());
    copy.erase();
    return success();
  }
  SmallVector<Value> lower, upper, steps;
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  for (int64_t size : type.getShape()) {
    lower.push_back(zero);
    upper.push_back(arith::ConstantIndexOp::create(b, loc, size));
    steps.push_back(one);
  }
  Value source = copy.getSource(), target = copy.getTarget();
  scf::ParallelOp::create(b, loc, lower, upper, steps,
                          [&](OpBuilder &nested, Location l, ValueRange ivs) {
                            Value v =
                                memref::LoadOp::create(nested, l, source, ivs);
                            memref::StoreOp::create(nested, l, v, target, ivs);
                          });
  copy.erase();
  return success();
}

struct OffloadSerialCodePass
    : vram::impl::OffloadSerialCodeBase<OffloadSerialCodePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Block &body = func.getBody().front();
    for (Operation &op : llvm::make_early_inc_range(body))
      if (auto copy = dyn_cast<memref::CopyOp>(op))
        if (failed(expandCopy(copy)))
          return signalPassFailure();

    SmallVector<SmallVector<Operation *>> runs;
    SmallVector<Operation *> run;
    llvm::SmallPtrSet<Operation *, 16> inRun;
    auto close = [&] {
      if (!run.empty())
        runs.push_back(std::move(run));
      run.clear();
      inRun.clear();
    };
    for (Operation &op : body) {
      bool dependsOnRun = llvm::any_of(op.getOperands(), [&](Value v) {
        Operation *def = v.getDefiningOp();
        return def && inRun.contains(def);
      });
      if (isHostOp(&op) || op.hasTrait<OpTrait::IsTerminator>()) {
        close();
      } else if (touchesBufferContents(&op) || (dependsOnRun && isPure(&op))) {
        run.push_back(&op);
        inRun.insert(&op);
      }
      // Other pure ops (constants, index arithmetic) stay on the host; the
      // kernel captures their values.
    }
    close();

    for (SmallVector<Operation *> &ops : runs) {
      llvm::SmallPtrSet<Operation *, 16> members(ops.begin(), ops.end());
      for (Operation *op : ops)
        for (Value result : op->getResults())
          for (Operation *user : result.getUsers())
            if (Operation *top = body.findAncestorOpInBlock(*user);
                !top || !members.contains(top)) {
              InFlightDiagnostic diag = op->emitError(
                  "the host needs this value, read from device memory");
              diag.attachNote(user->getLoc()) << "used here";
              return signalPassFailure();
            }
      Operation *last = ops.back();
      OpBuilder b(last->getContext());
      b.setInsertionPointAfter(last);
      Location loc = ops.front()->getLoc();
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      auto parallel = scf::ParallelOp::create(b, loc, ValueRange{zero},
                                              ValueRange{one}, ValueRange{one});
      Operation *terminator = parallel.getBody()->getTerminator();
      for (Operation *op : ops)
        op->moveBefore(terminator);
    }
  }
};

} // namespace
