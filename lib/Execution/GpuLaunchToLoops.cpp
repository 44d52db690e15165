//===- GpuLaunchToLoops.cpp - gpu.launch as host loops over its threads ---===//
//
// A kernel that never synchronizes computes the same thing whichever order
// its threads run in, so one after another on the host is a faithful run of
// it: the kernels' indexing and bounds checks can be checked without a GPU.
//
//===----------------------------------------------------------------------===//

#include "vram/Execution/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace vram {
#define GEN_PASS_DEF_GPULAUNCHTOLOOPS
#include "vram/Execution/Passes.h.inc"
} // namespace vram

using namespace mlir;

namespace {

Value select(const gpu::KernelDim3 &dims, gpu::Dimension dim) {
  switch (dim) {
  case gpu::Dimension::x:
    return dims.x;
  case gpu::Dimension::y:
    return dims.y;
  case gpu::Dimension::z:
    return dims.z;
  }
  llvm_unreachable("unknown gpu dimension");
}

/// Why `launch` cannot run as host loops, or "" when it can.
std::string whyNotSerial(gpu::LaunchOp launch) {
  if (!launch.getAsyncDependencies().empty() || launch.getAsyncToken())
    return "it is asynchronous";
  if (launch.hasClusterSize())
    return "it has thread-block clusters";
  if (launch.getDynamicSharedMemorySize() ||
      launch.getNumWorkgroupAttributions() ||
      launch.getNumPrivateAttributions())
    return "it has shared or private memory";
  if (!launch.getBody().hasOneBlock())
    return "its body has more than one block";
  std::string why;
  launch.getBody().walk([&](Operation *op) {
    if (isa<gpu::ThreadIdOp, gpu::BlockIdOp, gpu::BlockDimOp, gpu::GridDimOp,
            gpu::TerminatorOp>(op) ||
        !isa<gpu::GPUDialect>(op->getDialect()))
      return WalkResult::advance();
    why = "its body has '" + op->getName().getStringRef().str() +
          "', which needs the threads to run together";
    return WalkResult::interrupt();
  });
  return why;
}

struct GpuLaunchToLoopsPass
    : public vram::impl::GpuLaunchToLoopsBase<GpuLaunchToLoopsPass> {
  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation().walk(
        [&](gpu::LaunchOp launch) { launches.push_back(launch); });
    IRRewriter rewriter(&getContext());
    for (gpu::LaunchOp launch : launches) {
      if (std::string why = whyNotSerial(launch); !why.empty()) {
        launch.emitOpError("cannot run on the host one thread at a time: ")
            << why;
        return signalPassFailure();
      }
      runSerially(rewriter, launch);
    }
  }

  void runSerially(IRRewriter &rewriter, gpu::LaunchOp launch) {
    Location loc = launch.getLoc();
    gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
    gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
    rewriter.setInsertionPoint(launch);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    SmallVector<Value> upper = {grid.z,  grid.y,  grid.x,
                                block.z, block.y, block.x};
    scf::LoopNest nest =
        scf::buildLoopNest(rewriter, loc, SmallVector<Value>(6, zero), upper,
                           SmallVector<Value>(6, one));
    SmallVector<Value> iv;
    for (scf::ForOp loop : nest.loops)
      iv.push_back(loop.getInductionVar());
    gpu::KernelDim3 blockIds{iv[2], iv[1], iv[0]};
    gpu::KernelDim3 threadIds{iv[5], iv[4], iv[3]};

    // The ids and sizes as ops (a kernel's own form) become the same values
    // as the body's arguments.
    Block &body = launch.getBody().front();
    SmallVector<Operation *> idOps;
    body.walk([&](Operation *op) {
      if (isa<gpu::ThreadIdOp, gpu::BlockIdOp, gpu::BlockDimOp, gpu::GridDimOp>(
              op))
        idOps.push_back(op);
    });
    for (Operation *op : idOps) {
      Value value;
      if (auto id = dyn_cast<gpu::ThreadIdOp>(op))
        value = select(threadIds, id.getDimension());
      else if (auto id = dyn_cast<gpu::BlockIdOp>(op))
        value = select(blockIds, id.getDimension());
      else if (auto id = dyn_cast<gpu::BlockDimOp>(op))
        value = select(block, id.getDimension());
      else
        value = select(grid, cast<gpu::GridDimOp>(op).getDimension());
      rewriter.replaceOp(op, value);
    }
    // The body's arguments: block ids, thread ids, grid size, block size.
    SmallVector<Value> arguments = {blockIds.x,  blockIds.y,  blockIds.z,
                                    threadIds.x, threadIds.y, threadIds.z,
                                    grid.x,      grid.y,      grid.z,
                                    block.x,     block.y,     block.z};
    Block *inner = nest.loops.back().getBody();
    Operation *terminator = body.getTerminator();
    rewriter.inlineBlockBefore(&body, inner->getTerminator(), arguments);
    rewriter.eraseOp(terminator);
    rewriter.eraseOp(launch);
  }
};

} // namespace
