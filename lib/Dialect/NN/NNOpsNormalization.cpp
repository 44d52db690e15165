//===- NNOpsNormalization.cpp - batch, layer, rms, group norm -------------===//
//
// Normalizations: the checks of their affine and running-statistics
// vectors, fvcore's per-element FLOPs, and the fp32 statistics autograd
// keeps beside the operands.
//
//===----------------------------------------------------------------------===//

#include "NNOpsDetail.h"

#include "vram/Dialect/NN/NNOps.h"
#include "vram/Dialect/NN/TorchSemantics.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace vram::nn;
using namespace vram::nn::detail;

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

/// `mixedFloat32`: the kernel also takes fp32 vectors for an fp16/bf16 input
/// (batch_norm under autocast keeps fp32 weights and running statistics).
static LogicalResult checkChannelVector(std::optional<Location> loc, Value v,
                                        StringRef what, int64_t channels,
                                        Type elementType,
                                        bool mixedFloat32 = false) {
  if (!v)
    return success();
  auto t = cast<RankedTensorType>(v.getType());
  if (t.getRank() != 1 || t.getDimSize(0) != channels)
    return emitOptionalError(loc, what, " must be [", channels, "], got ",
                             shapeStr(t.getShape()));
  bool mixed = mixedFloat32 && t.getElementType().isF32() &&
               (elementType.isF16() || elementType.isBF16());
  if (t.getElementType() != elementType && !mixed)
    return emitOptionalError(loc, what, " element type ", t.getElementType(),
                             " does not match input element type ",
                             elementType);
  return success();
}

LogicalResult BatchNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  if (input.getRank() < 2)
    return emitOptionalError(loc, "expects an input of rank >= 2 (N, C, ...)");
  int64_t c = input.getDimSize(1);
  Type et = input.getElementType();
  auto check = [&](Value v, StringRef what) {
    return checkChannelVector(loc, v, what, c, et, /*mixedFloat32=*/true);
  };
  if (failed(check(adaptor.getWeight(), "weight")) ||
      failed(check(adaptor.getBias(), "bias")) ||
      failed(check(adaptor.getRunningMean(), "running_mean")) ||
      failed(check(adaptor.getRunningVar(), "running_var")))
    return failure();
  results.push_back(input);
  return success();
}

LogicalResult BatchNormOp::verify() {
  if (!getWeight() != !getBias())
    return emitOpError("needs both weight and bias, or neither");
  if (!getRunningMean() != !getRunningVar())
    return emitOpError("needs both running_mean and running_var, or neither");
  if (getEps().convertToDouble() <= 0)
    return emitOpError("eps must be positive");
  return success();
}

int64_t BatchNormOp::getFlops(FlopConvention c, bool training) {
  if (c == Conv::Flops)
    return 0;
  bool affine = static_cast<bool>(getWeight());
  int64_t perElement = training ? (affine ? 5 : 4) : (affine ? 2 : 1);
  return satMul(numel(getInput()), perElement);
}

void BatchNormOp::getBackwardWorkspace(const TorchTarget &target,
                                       ArrayRef<bool> needs,
                                       SmallVectorImpl<int64_t> &sizes) {
  if (needs[0])
    sizes.push_back(
        getBatchNormBackwardWorkspaceBytes(target, tensorBytes(getInput())));
}

void BatchNormOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                  SmallVectorImpl<SavedTensor> &saved) {
  // native_batch_norm_backward: input, weight, running stats (persistent) and
  // the per-channel batch mean and inverse std, always fp32.
  for (unsigned i = 0, e = getNumOperands(); i < e; ++i)
    saved.push_back(SavedTensor::operand(i));
  auto stat = RankedTensorType::get({tensorOf(getInput()).getDimSize(1)},
                                    Float32Type::get(getContext()));
  saved.push_back(SavedTensor::extra(stat, "save_mean"));
  saved.push_back(SavedTensor::extra(stat, "save_invstd"));
}

/// Row statistics of a normalization: the leading dims followed by ones.
static RankedTensorType statsType(RankedTensorType input,
                                  int64_t normalizedRank) {
  SmallVector<int64_t> shape(input.getShape());
  for (int64_t i = shape.size() - normalizedRank; i < (int64_t)shape.size();
       ++i)
    shape[i] = 1;
  return RankedTensorType::get(shape, Float32Type::get(input.getContext()));
}

static LogicalResult checkNormalizedShape(std::optional<Location> loc,
                                          RankedTensorType input, Value v,
                                          StringRef what,
                                          int64_t normalizedRank) {
  if (!v)
    return success();
  auto t = cast<RankedTensorType>(v.getType());
  ArrayRef<int64_t> tail = input.getShape().take_back(normalizedRank);
  if (t.getShape() != tail)
    return emitOptionalError(loc, what, " must have the normalized shape ",
                             shapeStr(tail), ", got ", shapeStr(t.getShape()));
  if (t.getElementType() != input.getElementType())
    return emitOptionalError(loc, what, " element type ", t.getElementType(),
                             " does not match input element type ",
                             input.getElementType());
  return success();
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t k = adaptor.getNormalizedRank();
  if (k < 1 || k > input.getRank())
    return emitOptionalError(loc, "normalized_rank must be in [1, ",
                             input.getRank(), "], got ", k);
  if (failed(
          checkNormalizedShape(loc, input, adaptor.getWeight(), "weight", k)) ||
      failed(checkNormalizedShape(loc, input, adaptor.getBias(), "bias", k)))
    return failure();
  results.push_back(input);
  return success();
}

/// fvcore counts a normalization as 4 (5 with the affine scale) per element;
/// flop_counter does not count it.
static int64_t normFlops(FlopConvention c, Value input, bool affine) {
  if (c == Conv::Flops)
    return 0;
  return satMul(numel(input), affine ? 5 : 4);
}

int64_t LayerNormOp::getFlops(FlopConvention c, bool) {
  return normFlops(c, getInput(), static_cast<bool>(getWeight()));
}

void LayerNormOp::getSavedTensors(const TorchTarget &target, ArrayRef<bool>,
                                  SmallVectorImpl<SavedTensor> &saved) {
  for (unsigned i = 0, e = getNumOperands(); i < e; ++i)
    saved.push_back(SavedTensor::operand(i));
  auto stats = statsType(tensorOf(getInput()), getNormalizedRank());
  // CUDA keeps the statistics in float32 (the accumulation type); the CPU
  // kernel in the input's dtype unless a bf16/fp16 input meets float32
  // parameters (layer_norm.cpp's param_scalar_type; measured with
  // transformers' GPT-2 and OPT in bf16, torch 2.15: benchmarks/accuracy/
  // results/hf-bf16-torch-2.15.0-transformers-5.25.0-cpu.json).
  Type input = tensorOf(getInput()).getElementType();
  bool mixed = getWeight() && tensorOf(getWeight()).getElementType().isF32() &&
               !input.isF32();
  if (target.device == Device::Cpu && !mixed)
    stats = stats.clone(input);
  saved.push_back(SavedTensor::extra(stats, "mean"));
  saved.push_back(SavedTensor::extra(stats, "rstd"));
}

LogicalResult RmsNormOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t k = adaptor.getNormalizedRank();
  if (k < 1 || k > input.getRank())
    return emitOptionalError(loc, "normalized_rank must be in [1, ",
                             input.getRank(), "], got ", k);
  if (failed(
          checkNormalizedShape(loc, input, adaptor.getWeight(), "weight", k)))
    return failure();
  results.push_back(input);
  return success();
}

int64_t RmsNormOp::getFlops(FlopConvention c, bool) {
  // fvcore has no rms_norm handle: 0 under macs.
  if (c != Conv::Full)
    return 0;
  return satMul(numel(getInput()), getWeight() ? 4 : 3);
}

void RmsNormOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                SmallVectorImpl<SavedTensor> &saved) {
  for (unsigned i = 0, e = getNumOperands(); i < e; ++i)
    saved.push_back(SavedTensor::operand(i));
  saved.push_back(SavedTensor::extra(
      statsType(tensorOf(getInput()), getNormalizedRank()), "rstd"));
}

LogicalResult LigerRmsNormOp::inferReturnTypes(MLIRContext *,
                                               std::optional<Location> loc,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &results) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  if (input.getRank() < 1)
    return emitOptionalError(loc, "expects an input of rank >= 1");
  if (failed(
          checkNormalizedShape(loc, input, adaptor.getWeight(), "weight", 1)))
    return failure();
  if (adaptor.getPartialRows() < 1)
    return emitOptionalError(loc, "partial_rows must be >= 1, got ",
                             adaptor.getPartialRows());
  results.push_back(input);
  return success();
}

int64_t LigerRmsNormOp::getFlops(FlopConvention c, bool) {
  // As aten's rms_norm: the kernel does the same arithmetic in one pass.
  return c == Conv::Full ? satMul(numel(getInput()), 4) : 0;
}

void LigerRmsNormOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                     SmallVectorImpl<SavedTensor> &saved) {
  // save_for_backward(X, W, RSTD): RSTD is one float32 per row.
  auto input = tensorOf(getInput());
  saved.push_back(SavedTensor::operand(0));
  saved.push_back(SavedTensor::operand(1));
  saved.push_back(SavedTensor::extra(
      RankedTensorType::get({numel(input) / input.getShape().back()},
                            Float32Type::get(getContext())),
      "rstd"));
}

// in_place=True: the backward writes dX over dY.
bool LigerRmsNormOp::isGradPassthrough(unsigned i) { return i == 0; }

void LigerRmsNormOp::getBackwardWorkspace(const TorchTarget &,
                                          ArrayRef<bool> operandNeedsGrad,
                                          SmallVectorImpl<int64_t> &sizes) {
  if (operandNeedsGrad.size() < 2 || !operandNeedsGrad[1])
    return; // a frozen weight: no partial sums
  // _dW [partial_rows, H] float32, then _dW.sum(0) (float32) and, for a
  // weight of another dtype, its .to(W.dtype) copy: the gradient.
  int64_t hidden = tensorOf(getWeight()).getShape().back();
  sizes.push_back(satMul(getPartialRows(), hidden, 4));
  if (!tensorOf(getWeight()).getElementType().isF32())
    sizes.push_back(satMul(hidden, 4));
}

LogicalResult GroupNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  if (input.getRank() < 2)
    return emitOptionalError(loc, "expects an input of rank >= 2 (N, C, ...)");
  int64_t c = input.getDimSize(1), g = adaptor.getNumGroups();
  if (g < 1 || c % g)
    return emitOptionalError(loc, "num_groups (", g, ") must divide channels (",
                             c, ")");
  if (adaptor.getInstance() && g != c)
    return emitOptionalError(loc,
                             "an instance norm has one group per "
                             "channel: num_groups (",
                             g, ") must be ", c);
  Type et = input.getElementType();
  if (failed(checkChannelVector(loc, adaptor.getWeight(), "weight", c, et)) ||
      failed(checkChannelVector(loc, adaptor.getBias(), "bias", c, et)))
    return failure();
  results.push_back(input);
  return success();
}

int64_t GroupNormOp::getFlops(FlopConvention c, bool) {
  return normFlops(c, getInput(), static_cast<bool>(getWeight()));
}

void GroupNormOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                  SmallVectorImpl<SavedTensor> &saved) {
  for (unsigned i = 0, e = getNumOperands(); i < e; ++i)
    saved.push_back(SavedTensor::operand(i));
  auto stat = RankedTensorType::get(
      {tensorOf(getInput()).getDimSize(0), (int64_t)getNumGroups()},
      Float32Type::get(getContext()));
  saved.push_back(SavedTensor::extra(stat, "mean"));
  saved.push_back(SavedTensor::extra(stat, "rstd"));
  if (getInstance() && getWeight()) {
    auto w = tensorOf(getWeight());
    int64_t n = tensorOf(getInput()).getDimSize(0);
    saved.push_back(SavedTensor::extraBeforeOp(
        w.clone({satMul(n, w.getDimSize(0))}), "repeated_weight"));
  }
}
