//===- DeviceScratch.cpp - stack scratch as device memory -----------------===//
//
// A kernel cannot address the host's memory: each top-level memref.alloca
// of the step becomes a memref.alloc that a marker call announces (the GPU
// runner takes it from the driver, not from the caching allocator), and
// each memref.get_global a copy the runner fills from the global; both are
// freed where the stack frame would end.
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
      SmallVector<memref::GetGlobalOp> constants;
      for (Block &block : step.getBody())
        for (auto global : block.getOps<memref::GetGlobalOp>())
          constants.push_back(global);
      if (scratch.empty() && constants.empty())
        continue;
      if (!marker)
        marker = getOrInsertMarker(module);
      SmallVector<Value> buffers;
      // A constant (memref.global: position ids, a causal mask) is host
      // memory too: the runner copies it into the allocation that a call
      // with its host address announces.
      for (memref::GetGlobalOp global : constants) {
        OpBuilder b(global);
        b.setInsertionPointAfter(global);
        Location loc = global.getLoc();
        Value address = memref::ExtractAlignedPointerAsIndexOp::create(
            b, loc, global.getResult());
        Value address64 =
            arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
        func::CallOp::create(b, loc, getOrInsertConstantMarker(module),
                             address64);
        auto copy = memref::AllocOp::create(b, loc, global.getType());
        global.getResult().replaceAllUsesExcept(copy.getResult(),
                                                address.getDefiningOp());
        buffers.push_back(copy);
      }
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

  static func::FuncOp getOrInsertConstantMarker(ModuleOp module) {
    if (auto marker =
            module.lookupSymbol<func::FuncOp>(vram::kDeviceConstantMarkerName))
      return marker;
    OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
    auto marker = func::FuncOp::create(b, module.getLoc(),
                                       vram::kDeviceConstantMarkerName,
                                       b.getFunctionType({b.getI64Type()}, {}));
    marker.setPrivate();
    return marker;
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
