//===- MergeKernelModules.cpp - the outlined kernels in one gpu.module ----===//
//
// One module means one LLVM compilation, one ptxas run and one module load
// for the whole step; equal kernels (by their printed form, without their
// name) compile once.
//
//===----------------------------------------------------------------------===//

#include "vram/Execution/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"

namespace vram {
#define GEN_PASS_DEF_MERGEKERNELMODULES
#include "vram/Execution/Passes.h.inc"
} // namespace vram

using namespace mlir;

namespace {

/// The one kernel of an outlined module, or null.
gpu::GPUFuncOp getOnlyKernel(gpu::GPUModuleOp module) {
  Block &body = module.getBodyRegion().front();
  if (!llvm::hasSingleElement(body))
    return nullptr;
  auto kernel = dyn_cast<gpu::GPUFuncOp>(body.front());
  return kernel && kernel.isKernel() ? kernel : nullptr;
}

/// The kernel's printed form under a fixed name: equal keys, equal code.
std::string getKey(gpu::GPUFuncOp kernel) {
  StringAttr name = SymbolTable::getSymbolName(kernel);
  SymbolTable::setSymbolName(kernel, "k");
  std::string key;
  llvm::raw_string_ostream os(key);
  kernel->print(os, OpPrintingFlags().printGenericOpForm().useLocalScope());
  SymbolTable::setSymbolName(kernel, name);
  return key;
}

struct MergeKernelModulesPass
    : public vram::impl::MergeKernelModulesBase<MergeKernelModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> outlined;
    for (auto kernels : module.getOps<gpu::GPUModuleOp>())
      if (getOnlyKernel(kernels) && !kernels.getTargetsAttr())
        outlined.push_back(kernels);
    if (outlined.size() < 2)
      return;

    SymbolTable symbols(module);
    OpBuilder builder(outlined.front());
    auto merged = gpu::GPUModuleOp::create(builder, outlined.front().getLoc(),
                                           "step_kernels");
    symbols.insert(merged); // renamed if the name is taken
    OpBuilder inside = OpBuilder::atBlockEnd(&merged.getBodyRegion().front());
    // Old module name -> the merged function that replaces its kernel.
    llvm::StringMap<StringAttr> replacement;
    llvm::StringMap<StringAttr> byKey;
    for (gpu::GPUModuleOp kernels : outlined) {
      gpu::GPUFuncOp kernel = getOnlyKernel(kernels);
      auto [it, fresh] = byKey.try_emplace(getKey(kernel), nullptr);
      if (fresh) {
        // The module names are unique in the host module: so are these.
        SymbolTable::setSymbolName(kernel, kernels.getSymNameAttr());
        kernel->moveBefore(inside.getInsertionBlock(),
                           inside.getInsertionPoint());
        it->second = SymbolTable::getSymbolName(kernel);
      }
      replacement[kernels.getSymName()] = it->second;
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      auto it = replacement.find(launch.getKernelModuleName());
      if (it == replacement.end())
        return;
      launch.setKernelAttr(SymbolRefAttr::get(
          merged.getSymNameAttr(), {FlatSymbolRefAttr::get(it->second)}));
    });
    for (gpu::GPUModuleOp kernels : outlined)
      kernels.erase();
  }
};

} // namespace
