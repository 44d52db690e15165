//===- DeviceScratch.cpp - stack scratch as device memory -----------------===//
//
// A kernel cannot address the host's stack: each top-level memref.alloca of
// the step becomes a memref.alloc that a marker call announces (the GPU
// runner takes it from the driver, not from the caching allocator), freed
// where the stack frame would end.
//
//===----------------------------------------------------------------------===//

#include "vram/Execution/Passes.h"

namespace vram {
#define GEN_PASS_DEF_DEVICESCRATCH
#include "vram/Execution/Passes.h.inc"
} // namespace vram

using namespace mlir;

namespace {

struct DeviceScratchPass
    : public vram::impl::DeviceScratchBase<DeviceScratchPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp marker;
    for (auto step : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (step.isExternal())
        continue;
      SmallVector<memref::AllocaOp> scratch;
      for (Block &block : step.getBody())
        for (auto alloca : block.getOps<memref::AllocaOp>())
          scratch.push_back(alloca);
      if (scratch.empty())
        continue;
      if (!marker)
        marker = getOrInsertMarker(module);
      SmallVector<Value> buffers;
      for (memref::AllocaOp alloca : scratch) {
        OpBuilder b(alloca);
        func::CallOp::create(b, alloca.getLoc(), marker);
        auto alloc = memref::AllocOp::create(
            b, alloca.getLoc(), alloca.getType(), alloca.getDynamicSizes(),
            alloca.getSymbolOperands(), alloca.getAlignmentAttr());
        alloca.replaceAllUsesWith(alloc.getResult());
        alloca.erase();
        buffers.push_back(alloc);
      }
      // Where the stack frame would end.
      step.walk([&](func::ReturnOp ret) {
        OpBuilder b(ret);
        for (Value buffer : buffers)
          memref::DeallocOp::create(b, ret.getLoc(), buffer);
      });
    }
  }

  static func::FuncOp getOrInsertMarker(ModuleOp module) {
    if (auto marker =
            module.lookupSymbol<func::FuncOp>(vram::kDeviceScratchMarkerName))
      return marker;
    OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
    auto marker =
        func::FuncOp::create(b, module.getLoc(), vram::kDeviceScratchMarkerName,
                             b.getFunctionType({}, {}));
    marker.setPrivate();
    return marker;
  }
};

} // namespace
