//===- OutlineKernels.cpp - one function per distinct loop nest -----------===//
//
// Each top-level nest becomes a function of the values it captures; the
// function's printed form is the key that makes equal nests share one.
//
//===----------------------------------------------------------------------===//

#include "vram/Execution/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

namespace vram {
#define GEN_PASS_DEF_OUTLINEKERNELS
#include "vram/Execution/Passes.h.inc"
} // namespace vram

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kKernelPrefix = "__vram_kernel_";

bool isNest(Operation &op) {
  return isa<linalg::LinalgOp>(op) ||
         (op.getNumRegions() > 0 && !op.hasTrait<OpTrait::SymbolTable>() &&
          !isa<FunctionOpInterface>(op));
}

/// Buffers the bare-pointer calling convention can pass: a static shape and
/// static strides and offset, which the callee rebuilds from the type.
bool isPassable(Type type) {
  if (isa<UnrankedMemRefType>(type))
    return false;
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref)
    return true;
  SmallVector<int64_t> strides;
  int64_t offset;
  return memref.hasStaticShape() &&
         succeeded(memref.getStridesAndOffset(strides, offset)) &&
         llvm::none_of(strides, ShapedType::isDynamic) &&
         !ShapedType::isDynamic(offset);
}

struct OutlineKernelsPass
    : public vram::impl::OutlineKernelsBase<OutlineKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> bodies;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && !func.getSymName().starts_with(kKernelPrefix))
        bodies.push_back(func);
    // Printed kernel (without its name) -> the function that has it.
    llvm::StringMap<func::FuncOp> kernels;
    unsigned next = 0;
    OpBuilder moduleBuilder = OpBuilder::atBlockEnd(module.getBody());
    MLIRContext *ctx = &getContext();
    for (func::FuncOp func : bodies)
      for (Block &block : func.getBody())
        for (Operation &op : llvm::make_early_inc_range(block)) {
          if (!isNest(op))
            continue;
          // What the nest reads from outside: its operands and the values
          // its regions capture. Constants are cloned into the kernel.
          llvm::SetVector<Value> captured;
          for (Value v : op.getOperands())
            captured.insert(v);
          getUsedValuesDefinedAbove(op.getRegions(), captured);
          SmallVector<Value> inputs;
          SmallVector<Operation *> constants;
          for (Value v : captured) {
            if (matchPattern(v, m_Constant()))
              constants.push_back(v.getDefiningOp());
            else
              inputs.push_back(v);
          }
          if (!llvm::all_of(TypeRange(ValueRange(inputs)), isPassable) ||
              !llvm::all_of(op.getResultTypes(), isPassable))
            continue;

          auto type = FunctionType::get(ctx, TypeRange(ValueRange(inputs)),
                                        op.getResultTypes());
          auto kernel = func::FuncOp::create(op.getLoc(), "kernel", type);
          Block *entry = kernel.addEntryBlock();
          IRMapping mapping;
          mapping.map(inputs, entry->getArguments());
          OpBuilder b = OpBuilder::atBlockBegin(entry);
          for (Operation *constant : constants)
            b.clone(*constant, mapping);
          Operation *clone = b.clone(op, mapping);
          func::ReturnOp::create(b, op.getLoc(), clone->getResults());

          std::string key;
          llvm::raw_string_ostream os(key);
          kernel.print(os, OpPrintingFlags().useLocalScope());
          auto [it, inserted] = kernels.try_emplace(key, kernel);
          if (inserted) {
            kernel.setSymName((kKernelPrefix + Twine(next++)).str());
            kernel.setPrivate();
            kernel->setAttr("llvm.linkage", LLVM::LinkageAttr::get(
                                                ctx, LLVM::Linkage::Internal));
            // LLVM's inliner would put the nests back into one function.
            kernel->setAttr(
                "passthrough",
                ArrayAttr::get(ctx, {StringAttr::get(ctx, "noinline")}));
            moduleBuilder.insert(kernel);
          } else {
            kernel.erase();
          }
          OpBuilder at(&op);
          auto call = func::CallOp::create(at, op.getLoc(), it->second, inputs);
          op.replaceAllUsesWith(call.getResults());
          op.erase();
        }
  }
};

} // namespace
