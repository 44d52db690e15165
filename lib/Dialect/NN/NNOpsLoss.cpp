//===- NNOpsLoss.cpp - cross_entropy, mse_loss ----------------------------===//
//
// Losses: the scalar result's dtype, FLOPs, and what their backward keeps
// (cross_entropy's log-probabilities and its dense gradient workspace).
//
//===----------------------------------------------------------------------===//

#include "NNOpsDetail.h"

#include "vram/Dialect/NN/NNOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace vram::nn;
using namespace vram::nn::detail;

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

LogicalResult CrossEntropyOp::inferReturnTypes(MLIRContext *ctx,
                                               std::optional<Location> loc,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &results) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  auto target = cast<RankedTensorType>(adaptor.getTarget().getType());
  if (input.getRank() < 2)
    return emitOptionalError(loc, "expects logits [N, C, ...]");
  SmallVector<int64_t> expected(input.getShape());
  expected.erase(expected.begin() + 1);
  if (target.getShape() != ArrayRef<int64_t>(expected))
    return emitOptionalError(loc, "target must be ", shapeStr(expected),
                             ", got ", shapeStr(target.getShape()));
  return inferWithDtype(loc, input, adaptor.getDtypeAttr(), {}, results);
}

int64_t CrossEntropyOp::getFlops(FlopConvention c, bool) {
  return c == Conv::Full ? satMul(4, numel(getInput())) : 0;
}

int64_t CrossEntropyOp::getBackwardFlops(FlopConvention c, ArrayRef<bool>) {
  return c == Conv::Full ? satMul(2, numel(getInput())) : 0;
}

/// log_softmax's output: the logits' shape in the loss's dtype.
static RankedTensorType getLogProbsType(CrossEntropyOp op) {
  return RankedTensorType::get(tensorOf(op.getInput()).getShape(),
                               tensorOf(op.getLoss()).getElementType());
}

void CrossEntropyOp::getBackwardWorkspace(const TorchTarget &, ArrayRef<bool>,
                                          SmallVectorImpl<int64_t> &sizes) {
  // cross_entropy = log_softmax + nll_loss: nll_loss_backward returns a dense
  // gradient of the log-probabilities, live while log_softmax's backward
  // allocates the logits' gradient (measured, 1.13 CPU: three logits-sized
  // tensors at the step peak of a language model).
  sizes.push_back(tensorBytes(getLogProbsType(*this)));
}

void CrossEntropyOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                     SmallVectorImpl<SavedTensor> &saved) {
  // log_softmax keeps its output (in the loss's dtype); nll_loss keeps the
  // target.
  saved.push_back(SavedTensor::extra(getLogProbsType(*this), "log_probs"));
  saved.push_back(SavedTensor::operand(1));
}

LogicalResult MseLossOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  // The loss has the promoted dtype of input and target (an fp16 output
  // against fp32 targets gives an fp32 loss).
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  auto target = cast<RankedTensorType>(adaptor.getTarget().getType());
  if (target.getShape() != input.getShape())
    return emitOptionalError(loc, "target type ", target,
                             " does not match input type ", input);
  results.push_back(RankedTensorType::get(
      {}, promoteFloatTypes(input.getElementType(), target.getElementType())));
  return success();
}

int64_t MseLossOp::getFlops(FlopConvention c, bool) {
  return c == Conv::Full ? satMul(3, numel(getInput())) : 0;
}

int64_t MseLossOp::getBackwardFlops(FlopConvention c, ArrayRef<bool>) {
  return c == Conv::Full ? satMul(2, numel(getInput())) : 0;
}

void MseLossOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                SmallVectorImpl<SavedTensor> &saved) {
  saved.push_back(SavedTensor::operand(0));
  saved.push_back(SavedTensor::operand(1));
}
