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

/// A loss over [N, ...] rows with one class index per row in `target`:
/// a float32 scalar.
static LogicalResult inferRowsLoss(MLIRContext *ctx,
                                   std::optional<Location> loc,
                                   RankedTensorType input,
                                   RankedTensorType target,
                                   SmallVectorImpl<Type> &results) {
  if (target.getShape() != input.getShape().take_front())
    return emitOptionalError(loc, "target must be ",
                             shapeStr(input.getShape().take_front()), ", got ",
                             shapeStr(target.getShape()));
  results.push_back(RankedTensorType::get({}, Float32Type::get(ctx)));
  return success();
}

//===----------------------------------------------------------------------===//
// nn.vocab_parallel_cross_entropy (loss_parallel)
//===----------------------------------------------------------------------===//

LogicalResult VocabParallelCrossEntropyOp::inferReturnTypes(
    MLIRContext *ctx, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  auto target = cast<RankedTensorType>(adaptor.getTarget().getType());
  if (input.getRank() != 2)
    return emitOptionalError(loc, "expects logits [N, C / ranks]");
  // DTensor's _log_softmax computes in the logits' promoted dtype; only
  // fp32 logits (transformers' logits.float(), autocast's fp32 loss) are
  // measured.
  if (!input.getElementType().isF32())
    return emitOptionalError(loc, "expects fp32 logits, got ",
                             input.getElementType());
  if (failed(checkTensorParallelRanks(loc, adaptor.getRanks())))
    return failure();
  return inferRowsLoss(ctx, loc, input, target, results);
}

int64_t VocabParallelCrossEntropyOp::getFlops(FlopConvention c, bool) {
  return c == Conv::Full ? satMul(4, numel(getInput())) : 0;
}

int64_t VocabParallelCrossEntropyOp::getBackwardFlops(FlopConvention c,
                                                      ArrayRef<bool>) {
  return c == Conv::Full ? satMul(3, numel(getInput())) : 0;
}

void VocabParallelCrossEntropyOp::getSavedTensors(
    const TorchTarget &, ArrayRef<bool>, SmallVectorImpl<SavedTensor> &saved) {
  // log_softmax's output (the shard's log-probabilities) and the target.
  saved.push_back(SavedTensor::extra(getInput().getType(), "log_probs"));
  saved.push_back(SavedTensor::operand(1));
}

/// _log_softmax's `x - max` and `exp(x - max)`: input-sized, both alive
/// until the row sums are taken (measured, torch 2.15 CPU: three
/// shard-sized tensors at the forward's loss).
void VocabParallelCrossEntropyOp::getWorkspaceAllocations(
    const TorchTarget &, SmallVectorImpl<int64_t> &sizes) {
  sizes.append(2, tensorBytes(getInput()));
}

int64_t
VocabParallelCrossEntropyOp::getWorkspaceBytes(const TorchTarget &target) {
  return sumWorkspaceAllocations(*this, target);
}

/// _nll_loss_and_log_softmax_backward: the zero gradient the target's -1 is
/// scattered into, and `grad + exp(log_probs)`, alive while the gradient
/// (their product with grad_output) is allocated; with them a row's
/// int64 safe target, _MaskPartial's bool mask and int64 shifted target,
/// the fp32 update (mask - 1), arange(N) (int64), the masked fp32
/// grad_output, and grad_output / total_weight (measured, torch 2.15 CPU:
/// 33 bytes a row and 4 beside the three shard-sized tensors).
void VocabParallelCrossEntropyOp::getBackwardWorkspace(
    const TorchTarget &, ArrayRef<bool>, SmallVectorImpl<int64_t> &sizes) {
  sizes.append(2, tensorBytes(getInput()));
  int64_t rows = tensorOf(getInput()).getDimSize(0);
  for (int64_t bytesPerRow : {8, 1, 8, 4, 8, 4})
    sizes.push_back(satMul(rows, bytesPerRow));
  sizes.push_back(4);
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

//===----------------------------------------------------------------------===//
// nn.fused_linear_cross_entropy (Liger-Kernel)
//===----------------------------------------------------------------------===//

LogicalResult FusedLinearCrossEntropyOp::inferReturnTypes(
    MLIRContext *ctx, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  auto weight = cast<RankedTensorType>(adaptor.getWeight().getType());
  auto target = cast<RankedTensorType>(adaptor.getTarget().getType());
  if (input.getRank() != 2 || weight.getRank() != 2)
    return emitOptionalError(loc, "expects hidden states [N, H] and a weight "
                                  "[V, H]");
  if (input.getDimSize(1) != weight.getDimSize(1))
    return emitOptionalError(loc, "hidden size ", input.getDimSize(1),
                             " does not match the weight's ",
                             weight.getDimSize(1));
  if (input.getElementType() != weight.getElementType())
    return emitOptionalError(loc, "hidden states and weight must have one "
                                  "dtype (Liger's matmul runs in it)");
  // loss_1d is float32, whatever the logits' dtype.
  return inferRowsLoss(ctx, loc, input, target, results);
}

int64_t FusedLinearCrossEntropyOp::getChunkSize() {
  auto input = tensorOf(getInput()), weight = tensorOf(getWeight());
  int64_t tokens = input.getDimSize(0), hidden = input.getDimSize(1);
  int64_t vocab = weight.getDimSize(0);
  // fused_linear_cross_entropy_forward: inc_factor = cdiv(V, H), chunk_size
  // = min(next_power_of_2(cdiv(BT, inc_factor)), BT).
  int64_t factor = llvm::divideCeil(vocab, std::max<int64_t>(hidden, 1));
  int64_t chunk = llvm::divideCeil(tokens, std::max<int64_t>(factor, 1));
  return std::min<int64_t>(llvm::PowerOf2Ceil(std::max<int64_t>(chunk, 1)),
                           tokens);
}

/// M = N x V x H multiply-adds per product: the chunks' logits.
static int64_t flceMacs(FusedLinearCrossEntropyOp op) {
  return satMul(numel(op.getInput()), tensorOf(op.getWeight()).getDimSize(0));
}

static int64_t flceLogits(FusedLinearCrossEntropyOp op) {
  return satMul(tensorOf(op.getInput()).getDimSize(0),
                tensorOf(op.getWeight()).getDimSize(0));
}

int64_t FusedLinearCrossEntropyOp::getFlops(FlopConvention c, bool) {
  int64_t flops = fromMacs(c, flceMacs(*this));
  return c == Conv::Full ? satAdd(flops, satMul(4, flceLogits(*this))) : flops;
}

int64_t FusedLinearCrossEntropyOp::getBackwardFlops(FlopConvention c,
                                                    ArrayRef<bool> needs) {
  // The gradients are computed in the forward, a product each, as a plain
  // lm_head's backward computes them; they are counted here, where a
  // linear's backward would count them.
  int64_t flops = satAdd(needs[0] ? fromMacs(c, flceMacs(*this)) : 0,
                         needs[1] ? fromMacs(c, flceMacs(*this)) : 0);
  return c == Conv::Full ? satAdd(flops, satMul(2, flceLogits(*this))) : flops;
}

void FusedLinearCrossEntropyOp::getSavedTensors(
    const TorchTarget &, ArrayRef<bool> needs,
    SmallVectorImpl<SavedTensor> &saved) {
  // ctx.save_for_backward(grad_input, grad_weight): the gradients computed
  // in the forward (zeros_like each, filled chunk by chunk), which backward
  // returns.
  if (needs[0])
    saved.push_back(SavedTensor::gradient(getInput().getType(), "grad_input",
                                          /*operand=*/0));
  if (needs[1])
    saved.push_back(SavedTensor::gradient(getWeight().getType(), "grad_weight",
                                          /*operand=*/1));
}

void FusedLinearCrossEntropyOp::getWorkspaceAllocations(
    const TorchTarget &target, SmallVectorImpl<int64_t> &sizes) {
  auto input = tensorOf(getInput()), weight = tensorOf(getWeight());
  int64_t tokens = input.getDimSize(0), hidden = input.getDimSize(1);
  int64_t vocab = weight.getDimSize(0);
  Type dtype = input.getElementType();
  int64_t bytes = llvm::divideCeil(dtype.getIntOrFloatBitWidth(), 8);
  auto param = getWeight().getDefiningOp<ParamOp>();
  bool weightGrad = param && param.getTrainable();
  // Alive through the chunks: loss_1d (float32) and target != ignore_index.
  sizes.push_back(satMul(tokens, 4));
  sizes.push_back(tokens);
  // One chunk's logits, in the matmul's dtype (on CUDA the preallocated
  // logits_storage that torch.mm(out=) fills).
  int64_t chunk = getChunkSize();
  sizes.push_back(satMul(satMul(chunk, vocab), bytes));
  int64_t weightElements = satMul(vocab, hidden);
  if (target.device == Device::Cuda) {
    // torch.mm(out=grad_input[...]) and, for fp16/bf16 (sm80 and later),
    // torch.addmm(out=grad_weight): no temporaries. A float32 grad_weight
    // takes the fallback's mm, float32 already.
    if (weightGrad && dtype.isF32())
      sizes.push_back(satMul(weightElements, 4));
    return;
  }
  // The CPU: `grad_input[s:e] = grad_logits_chunk @ weight` makes the
  // chunk's [chunk, H] product and copies it; then the fallback
  // `grad_weight += torch.mm(grad_logits_chunk.t(), _input_chunk).float()`
  // makes a [V, H] product. Below float32 its float32 copy outlives it, and
  // the in-place add into the lower-precision grad_weight computes in
  // float32 through two more [V, H] float32 temporaries (measured, torch
  // 2.15 CPU, bf16). The larger of the two moments counts.
  int64_t inputChunk = satMul(satMul(chunk, hidden), bytes);
  SmallVector<int64_t, 3> weightTemps;
  if (weightGrad && dtype.isF32())
    weightTemps.push_back(satMul(weightElements, 4));
  else if (weightGrad)
    weightTemps.append(3, satMul(weightElements, 4));
  if (inputChunk >= sumAllocations(weightTemps))
    sizes.push_back(inputChunk);
  else
    llvm::append_range(sizes, weightTemps);
}

int64_t
FusedLinearCrossEntropyOp::getWorkspaceBytes(const TorchTarget &target) {
  return sumWorkspaceAllocations(*this, target);
}
