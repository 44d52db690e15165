//===- StepInfo.cpp - facts about a built step shared by analyses ---------===//

#include "vram/Analysis/StepInfo.h"
#include "vram/Dialect/NN/NNOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace vram;

StepPhase vram::getStepPhase(Operation *op) {
  if (auto phased = dyn_cast<nn::StepPhaseOpInterface>(op))
    return phased.getStepPhase();
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

ParameterSummary vram::summarizeParameters(Operation *func) {
  ParameterSummary summary;
  func->walk([&](Operation *op) {
    auto numel = [](Value v) {
      return cast<RankedTensorType>(v.getType()).getNumElements();
    };
    if (auto param = dyn_cast<nn::ParamOp>(op)) {
      summary.count += numel(param);
      if (param.getTrainable())
        summary.trainable += numel(param);
      summary.bytes += getTensorBytes(param.getType()).value_or(0);
    } else if (auto buffer = dyn_cast<nn::BufferOp>(op)) {
      summary.bufferCount += numel(buffer);
      summary.bufferBytes += getTensorBytes(buffer.getType()).value_or(0);
    }
  });
  return summary;
}

std::optional<int64_t> vram::getBatchSize(Operation *func) {
  if (auto batch =
          func->getAttrOfType<IntegerAttr>(nn::NNDialect::kBatchAttrName))
    return batch.getInt();
  if (auto f = dyn_cast<FunctionOpInterface>(func))
    if (f.getNumArguments() > 0)
      if (auto t = dyn_cast<RankedTensorType>(f.getArgumentTypes()[0]))
        if (t.getRank() > 0)
          return t.getDimSize(0);
  return std::nullopt;
}

std::optional<nn::StepMode> vram::getStepMode(Operation *func) {
  if (auto mode =
          func->getAttrOfType<nn::StepModeAttr>(nn::NNDialect::kModeAttrName))
    return mode.getValue();
  return std::nullopt;
}

static std::string precisionName(Type type) {
  if (type.isF32())
    return "fp32";
  if (type.isF16())
    return "fp16";
  if (type.isBF16())
    return "bf16";
  if (type.isF64())
    return "fp64";
  std::string name;
  llvm::raw_string_ostream os(name);
  os << type;
  return name;
}

std::string vram::getPrecision(Operation *func) {
  if (auto autocast =
          func->getAttrOfType<TypeAttr>(nn::NNDialect::kAutocastAttrName))
    return "amp-" + precisionName(autocast.getValue());
  llvm::SmallSetVector<Type, 2> types;
  func->walk([&](nn::ParamOp param) {
    types.insert(getElementTypeOrSelf(param.getType()));
  });
  if (types.empty())
    if (auto f = dyn_cast<FunctionOpInterface>(func))
      for (Type t : f.getArgumentTypes())
        if (isa<FloatType>(getElementTypeOrSelf(t)))
          types.insert(getElementTypeOrSelf(t));
  if (types.empty())
    return "none";
  return types.size() == 1 ? precisionName(types.front()) : "mixed";
}

nn::TorchTarget vram::getTorchTarget(Operation *func) {
  nn::TorchTarget target;
  if (auto v =
          func->getAttrOfType<StringAttr>(nn::NNDialect::kTorchVersionAttrName))
    if (auto version = nn::symbolizeTorchVersion(v.getValue()))
      target.version = *version;
  if (auto d = func->getAttrOfType<StringAttr>(nn::NNDialect::kDeviceAttrName))
    if (auto device = nn::symbolizeDevice(d.getValue()))
      target.device = *device;
  if (auto w = func->getAttrOfType<StringAttr>(
          nn::NNDialect::kCudnnWorkspaceAttrName))
    if (auto workspace = nn::symbolizeCudnnWorkspace(w.getValue()))
      target.cudnnWorkspace = *workspace;
  return target;
}
