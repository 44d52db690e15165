//===- Lora.cpp - peft LoRA adapters --------------------------------------===//
//
// Inserts peft's LoraLayer structure after each targeted conv2d / linear of
// the forward model (peft/tuners/lora/layer.py, _ConvNd and Linear):
//
//   result = base(x) + lora_B(lora_A(lora_dropout(x))) * scaling
//
// and freezes every parameter that is not a LoRA parameter, as
// get_peft_model does with bias="none". What autograd then keeps (the base
// conv's input and frozen weight, lora_A's input, the dropout mask, lora_B's
// input) follows from the ops' interfaces when the step is built.
//
//===----------------------------------------------------------------------===//

#include "vram/Analysis/StepInfo.h"
#include "vram/Dialect/NN/NNOps.h"
#include "vram/Transforms/ModulePatterns.h"
#include "vram/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>

namespace vram {
#define GEN_PASS_DEF_LORA
#include "vram/Transforms/Passes.h.inc"
} // namespace vram

using namespace mlir;
using namespace vram;
using namespace vram::nn;

namespace {

/// A layer to adapt: its base op and the layer (module) name.
struct Target {
  Operation *base;
  std::string layer;
};

struct LoraPass : public vram::impl::LoraBase<LoraPass> {
  using LoraBase::LoraBase;

  void runOnOperation() override;

private:
  /// The layer name of a conv2d / linear: the module its location names
  /// (the zoo's layer, torch.onnx's scope), else the module of its weight
  /// parameter; "" when the weight is not a parameter (then it cannot carry
  /// an adapter). The location wins for a tied weight (GPT-2's lm_head
  /// reads transformer.wte.weight).
  static std::string layerOf(Operation *op, Value weight) {
    StringRef weightName;
    if (auto param = weight.getDefiningOp<ParamOp>())
      weightName = param.getName();
    else if (auto quantized = weight.getDefiningOp<QuantizedWeightOp>())
      weightName = quantized.getName();
    else
      return std::string();
    if (isa<NameLoc>(op->getLoc()))
      if (std::string name = getLayerName(op->getLoc()); !name.empty())
        return name;
    return moduleOfParameter(weightName).str();
  }

  /// The adapters' dtype over a base layer whose weight is `weight`: peft
  /// creates them in float32, moves them to a floating-point base weight's
  /// dtype (_move_adapter_to_device_of_base_layer; a 4-bit weight is
  /// uint8, so they stay float32), and get_peft_model's
  /// autocast_adapter_dtype then casts float16/bfloat16 ones back to
  /// float32.
  Type getAdapterType(Value weight) const {
    Type f32 = Float32Type::get(weight.getContext());
    Type type = getElementTypeOrSelf(weight.getType());
    if (!isa<FloatType>(type))
      return f32;
    if (autocastAdapterDtype && (type.isF16() || type.isBF16()))
      return f32;
    return type;
  }

  LogicalResult adapt(const Target &target, OpBuilder &b, double scaling);

  /// The adapters' parameters, which stay trainable.
  DenseSet<Operation *> adapterParams;
};

} // namespace

void LoraPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto forward = module.lookupSymbol<func::FuncOp>(entry);
  if (!forward) {
    emitError(module.getLoc())
        << "no function @" << entry
        << " to add LoRA adapters to (vram-lora runs before vram-build-step)";
    return signalPassFailure();
  }
  if (rank <= 0) {
    emitError(module.getLoc())
        << "LoRA rank r must be > 0, got " << static_cast<int64_t>(rank);
    return signalPassFailure();
  }
  if (!(dropout >= 0 && dropout < 1)) {
    emitError(module.getLoc()) << "LoRA dropout must be in [0, 1), got "
                               << static_cast<double>(dropout);
    return signalPassFailure();
  }
  if (!std::isfinite(alpha)) {
    emitError(module.getLoc())
        << "LoRA alpha must be finite, got " << static_cast<double>(alpha);
    return signalPassFailure();
  }
  if (targets.empty() ||
      llvm::any_of(targets, [](const std::string &t) { return t.empty(); })) {
    emitError(module.getLoc())
        << "LoRA needs targets: op kinds (conv2d, linear, all-linear) or layer "
           "names";
    return signalPassFailure();
  }
  // Op kinds are targets of their own; everything else is a name pattern.
  bool allConvs = false, allLinears = false, allButOutput = false;
  SmallVector<std::string> names;
  for (const std::string &t : targets) {
    if (t == "conv2d")
      allConvs = true;
    else if (t == "linear")
      allLinears = true;
    else if (t == "all-linear")
      allButOutput = true;
    else
      names.push_back(t);
  }
  // peft's target_modules: a plain name also matches every layer whose path
  // ends with it (`q_proj` selects `model.layers.0.self_attn.q_proj`).
  ModulePatterns patterns;
  if (failed(patterns.compile(names, module.getLoc(), /*suffixes=*/true)))
    return signalPassFailure();

  SmallVector<Target> chosen;
  std::vector<std::string> layers, parameterTargets;
  forward.walk([&](Operation *op) {
    Value weight;
    bool kindSelected = false;
    if (auto conv = dyn_cast<Conv2dOp>(op)) {
      weight = conv.getWeight();
      kindSelected = allConvs;
    } else if (isa<GroupedMmOp>(op) ||
               op->hasAttr(NNDialect::kFunctionalAttrName)) {
      // A mixture of experts' router (an F.linear in a module of the
      // model's own, nn.functional) and its experts' 3-D weights: peft
      // adapts them as parameters (ParamWrapper), which is not modelled.
      std::string layer = layerOf(op, op->getOperand(1));
      if (!layer.empty())
        parameterTargets.push_back(layer);
      return;
    } else if (isa<LinearOp, Linear4bitOp, Linear8bitOp>(op)) {
      weight = op->getOperand(1);
      // peft's all-linear leaves out the output layer: the linear whose
      // result the model returns (an LM head, a classifier).
      bool isOutput = llvm::any_of(op->getUsers(), [](Operation *user) {
        return isa<func::ReturnOp>(user);
      });
      kindSelected = allLinears || (allButOutput && !isOutput);
    } else {
      return;
    }
    std::string layer = layerOf(op, weight);
    if (layer.empty())
      return;
    layers.push_back(layer);
    // Every pattern sees every layer, so that an unmatched one is reported
    // even when an op kind selected the layer too.
    bool named = patterns.matches(layer);
    if (kindSelected || named)
      chosen.push_back({op, layer});
  });
  // peft's all-linear also selects a mixture of experts' router and
  // experts (as parameters), and so does a name that reaches them.
  llvm::sort(parameterTargets);
  parameterTargets.erase(llvm::unique(parameterTargets),
                         parameterTargets.end());
  auto parameterWrapped = [&](StringRef target, StringRef layer) {
    emitError(forward.getLoc())
        << "LoRA target '" << target << "' selects " << layer
        << ", a mixture of experts' router or experts, which peft adapts as "
           "parameters (ParamWrapper): not modelled; name the layers to "
           "adapt (e.g. targets=q_proj|k_proj|v_proj|o_proj)";
    return signalPassFailure();
  };
  if (allButOutput && !parameterTargets.empty())
    return parameterWrapped("all-linear", parameterTargets.front());
  for (StringRef pattern : patterns.getUnmatched()) {
    ModulePatterns single;
    if (failed(single.compile({pattern.str()}, module.getLoc(),
                              /*suffixes=*/true)))
      continue;
    for (StringRef layer : parameterTargets)
      if (single.matches(layer))
        return parameterWrapped(pattern, layer);
  }

  // A target name that selects nothing is a typo, not a no-op.
  bool unmatched = false;
  for (StringRef pattern : patterns.getUnmatched()) {
    InFlightDiagnostic diag = emitError(forward.getLoc())
                              << "LoRA target '" << pattern
                              << "' matches no conv2d or linear layer";
    SmallVector<std::string> nearest = getNearestNames(pattern, layers);
    if (!nearest.empty())
      diag << " (nearest layer names: " << llvm::join(nearest, ", ") << ")";
    unmatched = true;
  }
  if (unmatched)
    return signalPassFailure();
  if (chosen.empty()) {
    emitError(forward.getLoc())
        << "no conv2d or linear layer with a weight parameter matches the "
           "LoRA targets";
    return signalPassFailure();
  }

  // peft: scaling = lora_alpha / r (a Python float).
  double scaling = alpha / static_cast<double>(rank);
  OpBuilder b(&getContext());
  for (const Target &target : chosen) {
    if (failed(adapt(target, b, scaling)))
      return signalPassFailure();
    ++numAdapted;
  }
  // get_peft_model(bias="none"): only the adapters train.
  forward.walk([&](ParamOp param) {
    if (!adapterParams.contains(param))
      param.setTrainable(false);
  });
  // The configuration is a fact of the model from now on (the report reads
  // it); vram-build-step carries it to the step.
  SmallVector<Attribute> targetNames;
  for (const std::string &t : targets)
    targetNames.push_back(StringAttr::get(&getContext(), t));
  forward->setAttr(
      NNDialect::kLoraAttrName,
      LoraConfigAttr::get(&getContext(), rank,
                          llvm::APFloat(static_cast<double>(alpha)),
                          llvm::APFloat(static_cast<double>(dropout)),
                          ArrayAttr::get(&getContext(), targetNames)));
}

LogicalResult LoraPass::adapt(const Target &target, OpBuilder &b,
                              double scaling) {
  MLIRContext *ctx = &getContext();
  Operation *base = target.base;
  Value x = base->getOperand(0);
  Value y = base->getResult(0);
  auto quantizedBase = dyn_cast<Linear4bitOp>(base);
  bool int8Base = isa<Linear8bitOp>(base);
  // A float16 input to a 4-bit layer is cast to its compute dtype and the
  // result back (vram-quantize): those casts are inside Linear4bit.forward,
  // so peft's layer sees the float16 tensors around them.
  if (quantizedBase)
    if (auto in = x.getDefiningOp<CastOp>(); in && y.hasOneUse())
      if (auto out = dyn_cast<CastOp>(*y.getUsers().begin());
          out &&
          out.getType() == cast<RankedTensorType>(y.getType())
                               .clone(getElementTypeOrSelf(in.getInput())))
        std::tie(x, y) = std::make_pair(in.getInput(), out.getResult());
  auto xType = cast<RankedTensorType>(x.getType());
  auto yType = cast<RankedTensorType>(y.getType());
  Type elementType = getAdapterType(base->getOperand(1));
  auto loc = [&](StringRef leaf) -> Location {
    return NameLoc::get(StringAttr::get(ctx, target.layer + "." + leaf),
                        base->getLoc());
  };
  auto newParam = [&](StringRef leaf, ArrayRef<int64_t> shape) -> Value {
    auto param =
        ParamOp::create(b, loc(leaf), RankedTensorType::get(shape, elementType),
                        target.layer + "." + leaf.str() + ".default.weight");
    adapterParams.insert(param);
    return param;
  };

  b.setInsertionPointAfter(y.getDefiningOp());
  // lora.bnb.Linear4bit: "for 4bit, we need to defensively clone here".
  Value result = y;
  if (quantizedBase)
    result = ContiguousOp::create(b, base->getLoc(), y);
  // _cast_input_dtype(x, lora_A.weight.dtype): a copy per adapted layer.
  Value input = x;
  if (xType.getElementType() != elementType)
    input = CastOp::create(b, loc("lora_A"), xType.clone(elementType), x);
  // Both stay bound until peft's forward returns: the argument in the
  // caller, its cast copy in the local `x` it rebinds.
  SmallVector<Value, 2> held = {x};
  if (input != x)
    held.push_back(input);
  if (dropout > 0)
    input = DropoutOp::create(b, loc("lora_dropout"), input,
                              llvm::APFloat(static_cast<double>(dropout)),
                              /*inplace=*/false);
  Value delta;
  if (auto conv = dyn_cast<Conv2dOp>(base)) {
    auto weight = cast<RankedTensorType>(conv.getWeight().getType());
    int64_t in = xType.getDimSize(1), out = weight.getDimSize(0);
    int64_t groups = conv.getGroups();
    // peft: "support is limited to conv layers where the rank is divisible
    // by groups".
    if (rank % groups != 0)
      return base->emitError("LoRA rank ")
             << static_cast<int64_t>(rank)
             << " is not divisible by the convolution's groups (" << groups
             << "), which peft requires";
    // lora_A = Conv2d(in, r, kernel_size, stride, padding, bias=False):
    // neither dilation nor groups are passed on.
    Value wA = newParam("lora_A",
                        {rank, in, weight.getDimSize(2), weight.getDimSize(3)});
    auto a = Conv2dOp::create(b, loc("lora_A"), input, wA, Value(),
                              conv.getStrides(), conv.getPadding(),
                              ArrayRef<int64_t>{1, 1}, /*groups=*/1);
    if (cast<RankedTensorType>(a.getType()).getShape().drop_front(2) !=
        yType.getShape().drop_front(2))
      return base->emitError("LoRA's lora_A (the base kernel, stride and "
                             "padding without its dilation, as peft builds "
                             "it) gives ")
             << a.getType() << ", which cannot be added to the layer's "
             << yType;
    // lora_B = Conv2d(r, out, 1, 1, groups=base.groups, bias=False).
    Value wB = newParam("lora_B", {out, rank / groups, 1, 1});
    delta = Conv2dOp::create(b, loc("lora_B"), a, wB, Value(),
                             ArrayRef<int64_t>{1, 1}, ArrayRef<int64_t>{0, 0},
                             ArrayRef<int64_t>{1, 1}, groups);
  } else {
    int64_t in = xType.getShape().back(), out = yType.getShape().back();
    Value wA = newParam("lora_A", {rank, in});
    auto a = LinearOp::create(b, loc("lora_A"), input, wA, Value());
    Value wB = newParam("lora_B", {out, rank});
    delta = LinearOp::create(b, loc("lora_B"), a, wB, Value());
  }
  // `* scaling`: a Python float, a wrapped number (no device memory, nothing
  // kept); then `result + ...`, out of place.
  Value factor = ConstantOp::create(
      b, loc("lora_B"),
      DenseElementsAttr::get(RankedTensorType::get({}, elementType),
                             b.getFloatAttr(elementType, scaling)),
      /*wrapped_number=*/true);
  Value scaled = MulOp::create(b, loc("lora_B"), delta, factor,
                               /*inplace=*/false);
  // lora.bnb.Linear4bit and Linear8bitLt cast the scaled output back
  // before the sum (output.to(expected_dtype)); Linear and Conv2d add
  // first, which promotes to the adapters' dtype, and cast the sum
  // (result.to(torch_result_dtype)).
  Type resultType = yType.getElementType();
  if ((quantizedBase || int8Base) && elementType != resultType)
    scaled = CastOp::create(b, loc("lora_B"), yType, scaled);
  auto add =
      AddOp::create(b, base->getLoc(), result, scaled, /*inplace=*/false);
  Value sum = add;
  if (getElementTypeOrSelf(sum.getType()) != resultType)
    sum = CastOp::create(b, base->getLoc(), yType, sum);
  SmallPtrSet<Operation *, 2> keep = {add};
  if (result != y)
    keep.insert(result.getDefiningOp());
  y.replaceAllUsesExcept(sum, keep);
  // The caller holds the argument it passed until peft's forward returns,
  // and the forward its cast copy: both stay allocated through the
  // adapter's path and the sum (an MLP's down_proj input, a temporary of
  // `act(gate(x)) * up(x)`, would otherwise be freed by its last reader;
  // measured, torch 2.15 + peft 0.21: the forward's peak with Liger's loss
  // is there).
  b.setInsertionPointAfter(sum.getDefiningOp());
  KeepAliveOp::create(b, base->getLoc(), held);
  return success();
}
