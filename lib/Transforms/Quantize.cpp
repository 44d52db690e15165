//===- Quantize.cpp - bitsandbytes 4-bit and int8 base weights ------------===//
//
// Replaces the model's linear layers by bitsandbytes' Linear4bit or
// Linear8bitLt, as transformers does when it loads a model with
// BitsAndBytesConfig(load_in_4bit=True) or (load_in_8bit=True)
// (integrations/bitsandbytes.py replace_with_bnb_linear, skipping
// get_keys_to_not_convert's output layer and tied weights). What the layers
// cost (the quantized weights and their state, the dequantized or quantized
// temporaries in forward and backward, what autograd keeps) follows from
// nn.quantized_weight, nn.linear_4bit and nn.linear_8bit.
//
//===----------------------------------------------------------------------===//

#include "vram/Dialect/NN/NNOps.h"
#include "vram/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"

namespace vram {
#define GEN_PASS_DEF_QUANTIZE
#include "vram/Transforms/Passes.h.inc"
} // namespace vram

using namespace mlir;
using namespace vram;
using namespace vram::nn;

namespace {

struct QuantizePass : public vram::impl::QuantizeBase<QuantizePass> {
  using QuantizeBase::QuantizeBase;

  void runOnOperation() override;

private:
  /// Linear4bit's compute dtype for an input of `inputType`.
  Type getComputeType(Type inputType);
  /// Replaces `weight` by its 4-bit storage and each of `linears` (its
  /// readers) by Linear4bit.
  LogicalResult quantize(ParamOp weight, ArrayRef<LinearOp> linears,
                         QuantizationAttr config);
  LogicalResult replaceByLinear4bit(LinearOp linear, Value packed);
  LogicalResult replaceByLinear8bit(LinearOp linear, Value weight);
};

} // namespace

Type QuantizePass::getComputeType(Type inputType) {
  // Linear4bit.set_compute_type: float32 and bfloat16 inputs compute in
  // their own dtype; float16 ones in bnb_4bit_compute_dtype.
  if (!inputType.isF16())
    return inputType;
  Builder b(&getContext());
  switch (computeDtype) {
  case Precision::Fp16:
    return b.getF16Type();
  case Precision::Bf16:
    return b.getBF16Type();
  default:
    return b.getF32Type();
  }
}

void QuantizePass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  auto forward = module.lookupSymbol<func::FuncOp>(entry);
  if (!forward || forward.isExternal()) {
    emitError(module.getLoc())
        << "no function @" << entry
        << " to quantize (vram-quantize runs before vram-build-step)";
    return signalPassFailure();
  }
  if (forward->hasAttr(NNDialect::kAutocastAttrName)) {
    forward.emitError("quantized weights under torch.autocast are not "
                      "modelled: load the model in its compute dtype "
                      "(--precision=bf16)");
    return signalPassFailure();
  }
  if (forward->hasAttr(NNDialect::kLoraAttrName)) {
    forward.emitError("vram-quantize runs before vram-lora: peft adapts the "
                      "layers of a quantized model");
    return signalPassFailure();
  }
  if (computeDtype != Precision::Fp32 && computeDtype != Precision::Fp16 &&
      computeDtype != Precision::Bf16) {
    emitError(module.getLoc())
        << "the 4-bit compute dtype is fp32, fp16 or bf16, not "
        << stringifyEnum(computeDtype);
    return signalPassFailure();
  }
  bool int8 = quantType == QuantType::Int8;
  if (int8 && doubleQuant) {
    emitError(module.getLoc())
        << "int8 (LLM.int8) weights are not quantized twice: double-quant "
           "is a 4-bit option";
    return signalPassFailure();
  }
  auto config = QuantizationAttr::getChecked(
      [&] { return emitError(module.getLoc()); }, ctx,
      static_cast<QuantType>(quantType),
      int8 ? 0 : static_cast<int64_t>(blocksize),
      static_cast<bool>(doubleQuant), APFloat(int8 ? double(threshold) : 0.0),
      int8 ? static_cast<int64_t>(outlierCols) : 0);
  if (!config)
    return signalPassFailure();

  // Each weight with the linear layers reading it: one layer, read once,
  // or once per forward pass of a generation program (the same module).
  llvm::MapVector<Operation *, SmallVector<LinearOp>> readers;
  // replace_with_bnb_linear replaces torch.nn.Linear modules: an F.linear
  // in a module of the model's own (nn.functional) keeps its weight.
  forward.walk([&](LinearOp linear) {
    if (linear->hasAttr(NNDialect::kFunctionalAttrName))
      return;
    if (auto weight = linear.getWeight().getDefiningOp<ParamOp>())
      readers[weight].push_back(linear);
  });
  SmallVector<std::pair<ParamOp, SmallVector<LinearOp>>> chosen;
  for (auto &[weightOp, linears] : readers) {
    auto weight = cast<ParamOp>(weightOp);
    // get_keys_to_not_convert: the output layer (lm_head: what the model
    // returns, or what generation picks the next token from) and tied
    // weights (read by another module or another op) keep their dtype.
    bool isOutput = llvm::any_of(linears, [](LinearOp linear) {
      return llvm::any_of(linear->getUsers(), [](Operation *user) {
        return isa<func::ReturnOp, NextTokenOp>(user);
      });
    });
    Location layer = linears.front().getLoc();
    bool tied = !llvm::all_of(weight->getUsers(), [&](Operation *user) {
      auto linear = dyn_cast<LinearOp>(user);
      return linear && linear.getWeight() == weight.getResult() &&
             linear.getLoc() == layer;
    });
    if (!isOutput && !tied)
      chosen.push_back({weight, linears});
  }
  if (chosen.empty()) {
    forward.emitError("no linear layer to quantize: quantized weights "
                      "replace the linear layers whose weight is a parameter, "
                      "except the output layer and tied weights");
    return signalPassFailure();
  }
  for (auto &[weight, linears] : chosen) {
    if (failed(quantize(weight, linears, config)))
      return signalPassFailure();
    ++numQuantized;
  }
  forward->setAttr(NNDialect::kQuantizeAttrName, config);
}

LogicalResult QuantizePass::quantize(ParamOp weight, ArrayRef<LinearOp> linears,
                                     QuantizationAttr config) {
  auto weightType = cast<RankedTensorType>(weight.getType());
  Type dtype = weightType.getElementType();
  if (!dtype.isF32() && !dtype.isF16() && !dtype.isBF16())
    return weight.emitError("bitsandbytes quantizes float32, float16 or "
                            "bfloat16 weights, not ")
           << dtype;
  OpBuilder b(weight);
  SmallVector<RankedTensorType> types;
  getQuantizedWeightTypes(config, weightType.getShape(), types);
  auto quantized = QuantizedWeightOp::create(
      b, weight.getLoc(), SmallVector<Type>(types.begin(), types.end()),
      weight.getName(), config, weightType.getShape(), dtype);
  for (LinearOp linear : linears)
    if (failed(config.isInt8()
                   ? replaceByLinear8bit(linear, quantized.getPacked())
                   : replaceByLinear4bit(linear, quantized.getPacked())))
      return failure();
  weight.erase();
  return success();
}

LogicalResult QuantizePass::replaceByLinear4bit(LinearOp linear, Value packed) {
  Value input = linear.getInput();
  Type inputType = getElementTypeOrSelf(input.getType());
  Type compute = getComputeType(inputType);
  Value bias = linear.getBias();
  // Linear4bit.forward converts a bias of another dtype in place (its
  // parameter's .data), which changes the model's dtype: not modelled.
  if (bias && getElementTypeOrSelf(bias.getType()) != compute)
    return linear.emitError("a bias in ")
           << getElementTypeOrSelf(bias.getType())
           << " under a 4-bit layer computing in " << compute
           << " is not modelled (Linear4bit converts it in place)";

  OpBuilder b(linear);
  Location loc = linear.getLoc();
  if (compute != inputType)
    input = CastOp::create(
        b, loc, cast<RankedTensorType>(input.getType()).clone(compute), input);
  Value output = Linear4bitOp::create(b, loc, input, packed, bias);
  // matmul_4bit(...).to(inp_dtype).
  if (compute != inputType)
    output = CastOp::create(b, loc, linear.getType(), output);
  linear.replaceAllUsesWith(output);
  linear.erase();
  return success();
}

LogicalResult QuantizePass::replaceByLinear8bit(LinearOp linear, Value weight) {
  OpBuilder b(linear);
  // bnb.matmul computes in the input's dtype, whatever it is, which an
  // nn.linear's bias already shares (Linear8bitLt's in-place conversion of
  // another bias dtype never applies).
  Value output = Linear8bitOp::create(b, linear.getLoc(), linear.getInput(),
                                      weight, linear.getBias());
  linear.replaceAllUsesWith(output);
  linear.erase();
  return success();
}
