//===- StepInfo.cpp - facts about a built step shared by analyses ---------===//

#include "vram/Analysis/StepInfo.h"
#include "vram/Dialect/NN/NNOps.h"
#include "vram/Support/CheckedMath.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace vram;

StepPhase vram::getStepPhase(Operation *op) {
  if (auto phase =
          op->getAttrOfType<nn::StepPhaseAttr>(nn::NNDialect::kPhaseAttrName))
    return phase.getValue();
  if (auto phased = dyn_cast<nn::StepPhaseOpInterface>(op))
    return phased.getStepPhase();
  return StepPhase::Forward;
}

std::optional<int64_t> vram::getTensorBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return std::nullopt;
  return checkedProduct(tensor.getShape(),
                        llvm::divideCeil(tensor.getElementTypeBitWidth(), 8));
}

std::vector<Operation *> vram::collectOps(Operation *func) {
  std::vector<Operation *> ops;
  func->walk([&](Operation *op) {
    if (op != func)
      ops.push_back(op);
  });
  return ops;
}

FailureOr<ParameterSummary> vram::summarizeParameters(Operation *func) {
  return summarizeParameters(collectOps(func));
}

FailureOr<ParameterSummary>
vram::summarizeParameters(ArrayRef<Operation *> ops) {
  ParameterSummary summary;
  // Each sum is checked: a model whose parameter count or bytes do not fit
  // in 64 bits is an error at the parameter that overflowed it.
  auto accumulate = [](int64_t &sum, std::optional<int64_t> term) {
    std::optional<int64_t> next = term ? checkedAdd(sum, *term) : std::nullopt;
    if (next)
      sum = *next;
    return next.has_value();
  };
  for (Operation *op : ops) {
    bool ok = true;
    auto numel = [](Value v) {
      return checkedProduct(cast<RankedTensorType>(v.getType()).getShape());
    };
    if (auto param = dyn_cast<nn::ParamOp>(op)) {
      ok = accumulate(summary.count, numel(param)) &&
           (!param.getTrainable() ||
            accumulate(summary.trainable, numel(param))) &&
           accumulate(summary.bytes, getTensorBytes(param.getType()));
    } else if (auto quantized = dyn_cast<nn::QuantizedWeightOp>(op)) {
      // The logical elements (as transformers counts a 4-bit weight) and
      // every byte it keeps: the packed codes and the QuantState.
      int64_t elements = quantized.getNumElements();
      ok = accumulate(summary.count, elements < 0
                                         ? std::nullopt
                                         : std::optional<int64_t>(elements));
      for (Value result : quantized->getResults())
        ok = ok && accumulate(summary.bytes, getTensorBytes(result.getType()));
    } else if (auto buffer = dyn_cast<nn::BufferOp>(op)) {
      ok = accumulate(summary.bufferCount, numel(buffer)) &&
           accumulate(summary.bufferBytes, getTensorBytes(buffer.getType()));
    }
    if (!ok)
      return op->emitError("the model's parameter or buffer count overflows "
                           "64 bits at this tensor");
  }
  // Each routed expert stack once (a checkpointed forward runs it twice):
  // k of its E experts are active for a token.
  summary.active = summary.count;
  llvm::SmallPtrSet<Operation *, 8> expertStacks;
  for (Operation *op : ops) {
    auto mm = dyn_cast<nn::GroupedMmOp>(op);
    if (!mm)
      continue;
    auto dispatch = mm.getOffsets().getDefiningOp<nn::MoeDispatchOp>();
    Operation *param = getParameterOf(mm.getWeight());
    if (!dispatch || !param || !expertStacks.insert(param).second)
      continue;
    int64_t experts = dispatch.getNumExperts();
    ArrayRef<int64_t> indices =
        cast<RankedTensorType>(dispatch.getIndices().getType()).getShape();
    int64_t perToken = indices.empty() ? 1 : indices.back();
    std::optional<int64_t> elements = checkedProduct(
        cast<RankedTensorType>(param->getResult(0).getType()).getShape());
    if (elements && experts > perToken)
      summary.active -= *elements / experts * (experts - perToken);
  }
  return summary;
}

Operation *vram::getParameterOf(Value v,
                                const llvm::StringMap<Operation *> *byName) {
  // ZeRO-3: the gathered buffer names its parameters, in order.
  if (byName) {
    Value gathered = v;
    while (
        isa_and_nonnull<nn::SliceOp, nn::ReshapeOp>(gathered.getDefiningOp()))
      gathered = gathered.getDefiningOp()->getOperand(0);
    unsigned index = 0;
    if (auto unshard = gathered.getDefiningOp<nn::UnshardOp>()) {
      index = cast<OpResult>(gathered).getResultNumber();
      gathered = unshard.getFlat();
    }
    if (auto gather = gathered.getDefiningOp<nn::AllGatherOp>())
      if (ArrayAttr names = gather.getParamsAttr())
        if (index < names.size())
          return byName->lookup(cast<StringAttr>(names[index]).getValue());
  }
  if (auto slice = v.getDefiningOp<nn::SliceOp>())
    v = slice.getInput();
  if (auto unshard = v.getDefiningOp<nn::UnshardOp>()) {
    auto gather = unshard.getFlat().getDefiningOp<nn::AllGatherOp>();
    unsigned i = cast<OpResult>(v).getResultNumber();
    if (!gather || i >= gather.getShards().size())
      return nullptr;
    auto shard = gather.getShards()[i].getDefiningOp<nn::ShardOp>();
    v = shard ? shard.getParam() : Value();
  }
  return v ? v.getDefiningOp<nn::ParamOp>() : nullptr;
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

std::string vram::getPrecisionName(Type type) {
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
  return getPrecision(func, collectOps(func));
}

std::string vram::getPrecision(Operation *func, ArrayRef<Operation *> ops) {
  if (auto autocast =
          func->getAttrOfType<TypeAttr>(nn::NNDialect::kAutocastAttrName))
    return "amp-" + getPrecisionName(autocast.getValue());
  llvm::SmallSetVector<Type, 2> types;
  for (Operation *op : ops)
    if (auto param = dyn_cast<nn::ParamOp>(op))
      types.insert(getElementTypeOrSelf(param.getType()));
  if (types.empty())
    if (auto f = dyn_cast<FunctionOpInterface>(func))
      for (Type t : f.getArgumentTypes())
        if (isa<FloatType>(getElementTypeOrSelf(t)))
          types.insert(getElementTypeOrSelf(t));
  if (types.empty())
    return "none";
  return types.size() == 1 ? getPrecisionName(types.front()) : "mixed";
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

/// The layer name an op belongs to: the name of its NameLoc (possibly fused
/// or nested), else "file:line" of a file location, else "".
/// torch.onnx's scope names, `/layer1/layer1.0/conv1/Conv`, as the module
/// path `layer1.0.conv1`: each scope either spells its full dotted path or
/// its attribute name under the previous one; the last part is the node.
static std::string modulePathOfOnnxName(StringRef name) {
  SmallVector<StringRef> parts;
  name.drop_front().split(parts, '/');
  if (parts.size() < 2)
    return name.str();
  std::string path;
  for (StringRef part : ArrayRef<StringRef>(parts).drop_back()) {
    if (part.empty())
      continue;
    if (path.empty() || part.starts_with(path + "."))
      path = part.str();
    else
      path += "." + part.str();
  }
  return path.empty() ? name.str() : path;
}

std::string vram::getLayerName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc)) {
    StringRef n = name.getName().getValue();
    return n.starts_with("/") ? modulePathOfOnnxName(n) : n.str();
  }
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
