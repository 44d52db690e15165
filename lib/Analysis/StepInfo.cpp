//===- StepInfo.cpp - facts about a built step shared by analyses ---------===//

#include "vram/Analysis/StepInfo.h"
#include "vram/Dialect/NN/NNOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace vram;

llvm::StringRef vram::stringify(StepPhase phase) {
  switch (phase) {
  case StepPhase::Forward:
    return "forward";
  case StepPhase::Backward:
    return "backward";
  case StepPhase::Optimizer:
    return "optimizer";
  }
  llvm_unreachable("unknown phase");
}

StepPhase vram::getStepPhase(Operation *op) {
  if (isa<nn::BackwardOp, nn::AccumulateGradOp>(op))
    return StepPhase::Backward;
  if (isa<nn::OptimizerStepOp>(op))
    return StepPhase::Optimizer;
  return StepPhase::Forward;
}

std::optional<int64_t> vram::getTensorBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return std::nullopt;
  int64_t bytes = llvm::divideCeil(tensor.getElementTypeBitWidth(), 8);
  for (int64_t dim : tensor.getShape()) {
    int64_t product;
    if (llvm::MulOverflow(bytes, dim, product))
      return std::nullopt;
    bytes = product;
  }
  return bytes;
}

std::string vram::getLayerName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (std::string n = getLayerName(inner); !n.empty())
        return n;
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    return getLayerName(callSite.getCallee());
  // Plain .mlir input: the op's line names it.
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return (llvm::sys::path::filename(file.getFilename().getValue()) + ":" +
            llvm::Twine(file.getLine()))
        .str();
  return "";
}
