//===- NNOpsPooling.cpp - max/avg/adaptive pooling, mean ------------------===//
//
// Pooling windows and the mean reduction: output sizes, FLOPs, and what
// autograd keeps (max_pool's int64 indices; mean's input only where the
// torch version's mean_backward needs it).
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
// Pooling
//===----------------------------------------------------------------------===//

static LogicalResult inferPool(std::optional<Location> loc,
                               RankedTensorType input, ArrayRef<int64_t> kernel,
                               std::optional<ArrayRef<int64_t>> strides,
                               ArrayRef<int64_t> padding,
                               ArrayRef<int64_t> dilation, bool ceilMode,
                               SmallVectorImpl<Type> &results) {
  if (input.getRank() != 4)
    return emitOptionalError(loc, "expects a 4-D NCHW input, got rank ",
                             input.getRank());
  if (failed(checkPair(loc, "kernel_size", kernel, 1)) ||
      (strides && failed(checkPair(loc, "strides", *strides, 1))) ||
      failed(checkPair(loc, "padding", padding, 0)) ||
      failed(checkPair(loc, "dilation", dilation, 1)))
    return failure();
  SmallVector<int64_t> shape = {input.getDimSize(0), input.getDimSize(1)};
  for (int i = 0; i < 2; ++i) {
    if (padding[i] > kernel[i] / 2)
      return emitOptionalError(loc, "padding (", padding[i],
                               ") must be at most half the kernel size (",
                               kernel[i], ")");
    int64_t stride = strides ? (*strides)[i] : kernel[i];
    FailureOr<int64_t> out = spatialOutputSize(
        loc, i, input.getDimSize(2 + i), kernel[i], stride, padding[i],
        dilation[i], ceilMode, "pooling window does not fit the input");
    if (failed(out))
      return failure();
    shape.push_back(*out);
  }
  results.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult MaxPool2dOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  return inferPool(loc, cast<RankedTensorType>(adaptor.getInput().getType()),
                   adaptor.getKernelSize(), adaptor.getStrides(),
                   adaptor.getPadding(), adaptor.getDilation(),
                   adaptor.getCeilMode(), results);
}

int64_t MaxPool2dOp::getFlops(FlopConvention c, bool) {
  if (c != Conv::Full)
    return 0;
  ArrayRef<int64_t> k = getKernelSize();
  return satMul(numel(getOutput()), k[0], k[1]);
}

int64_t MaxPool2dOp::getBackwardFlops(FlopConvention c, ArrayRef<bool>) {
  return c == Conv::Full ? numel(getOutput()) : 0;
}

void MaxPool2dOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                  SmallVectorImpl<SavedTensor> &saved) {
  saved.push_back(SavedTensor::operand(0));
  saved.push_back(SavedTensor::extra(
      RankedTensorType::get(tensorOf(getOutput()).getShape(),
                            IntegerType::get(getContext(), 64)),
      "indices"));
}

LogicalResult AvgPool2dOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  SmallVector<int64_t, 2> noDilation = {1, 1};
  return inferPool(loc, cast<RankedTensorType>(adaptor.getInput().getType()),
                   adaptor.getKernelSize(), adaptor.getStrides(),
                   adaptor.getPadding(), noDilation, adaptor.getCeilMode(),
                   results);
}

int64_t AvgPool2dOp::getFlops(FlopConvention c, bool) {
  if (c != Conv::Full)
    return 0;
  ArrayRef<int64_t> k = getKernelSize();
  return satMul(numel(getOutput()), k[0], k[1]);
}

int64_t AvgPool2dOp::getBackwardFlops(FlopConvention c, ArrayRef<bool>) {
  return c == Conv::Full ? numel(getInput()) : 0;
}

void AvgPool2dOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                  SmallVectorImpl<SavedTensor> &saved) {
  saved.push_back(SavedTensor::operand(0));
}

/// A resize of NCHW `in` to `out`: only the spatial sizes change.
static LogicalResult verifyResize(Operation *op, RankedTensorType in,
                                  RankedTensorType out) {
  if (in.getRank() != 4 || out.getRank() != 4)
    return op->emitOpError("expects 4-D NCHW input and output");
  if (in.getDimSize(0) != out.getDimSize(0) ||
      in.getDimSize(1) != out.getDimSize(1))
    return op->emitOpError("keeps N and C: ") << in << " -> " << out;
  if (out.getElementType() != in.getElementType())
    return op->emitOpError("keeps the element type");
  if (in.getDimSize(2) < 1 || in.getDimSize(3) < 1 || out.getDimSize(2) < 1 ||
      out.getDimSize(3) < 1)
    return op->emitOpError("needs non-empty spatial sizes");
  return success();
}

LogicalResult UpsampleNearest2dOp::verify() {
  return verifyResize(*this, tensorOf(getInput()), tensorOf(getOutput()));
}

int64_t UpsampleNearest2dOp::getFlops(FlopConvention c, bool) {
  // fvcore counts one per output element (elementwise_flop_counter(0, 1)).
  return c == Conv::Macs ? numel(getOutput()) : 0;
}

int64_t UpsampleNearest2dOp::getBackwardFlops(FlopConvention c,
                                              ArrayRef<bool>) {
  // The gradient of each output element is added to its source.
  return c == Conv::Full ? numel(getOutput()) : 0;
}

void UpsampleNearest2dOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                          SmallVectorImpl<SavedTensor> &) {
  // upsample_nearest2d_backward needs only the sizes.
}

LogicalResult UpsampleBilinear2dOp::verify() {
  if (failed(verifyResize(*this, tensorOf(getInput()), tensorOf(getOutput()))))
    return failure();
  if (std::optional<ArrayRef<double>> scales = getScales()) {
    if (scales->size() != 2)
      return emitOpError("scales are (height, width), got ")
             << scales->size() << " values";
    for (double s : *scales)
      if (!(s > 0))
        return emitOpError("scales must be positive, got ") << s;
  }
  return success();
}

int64_t UpsampleBilinear2dOp::getFlops(FlopConvention c, bool) {
  // fvcore: four per output element (elementwise_flop_counter(0, 4));
  // `full`: a multiply-add for each of the four inputs.
  switch (c) {
  case Conv::Macs:
    return satMul(4, numel(getOutput()));
  case Conv::Flops:
    return 0;
  case Conv::Full:
    return satMul(8, numel(getOutput()));
  }
  llvm_unreachable("unknown FLOP convention");
}

int64_t UpsampleBilinear2dOp::getBackwardFlops(FlopConvention c,
                                               ArrayRef<bool>) {
  // Each output gradient is scattered to four inputs with its weights.
  return c == Conv::Full ? satMul(8, numel(getOutput())) : 0;
}

void UpsampleBilinear2dOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                           SmallVectorImpl<SavedTensor> &) {
  // upsample_bilinear2d_backward needs only the sizes.
}

LogicalResult AdaptiveAvgPool2dOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  if (input.getRank() != 4)
    return emitOptionalError(loc, "expects a 4-D NCHW input, got rank ",
                             input.getRank());
  if (failed(checkPair(loc, "output_size", adaptor.getOutputSize(), 1)))
    return failure();
  results.push_back(RankedTensorType::get(
      {input.getDimSize(0), input.getDimSize(1), adaptor.getOutputSize()[0],
       adaptor.getOutputSize()[1]},
      input.getElementType()));
  return success();
}

int64_t AdaptiveAvgPool2dOp::getFlops(FlopConvention c, bool) {
  // fvcore counts one per input element.
  return c == Conv::Flops ? 0 : numel(getInput());
}

int64_t AdaptiveAvgPool2dOp::getBackwardFlops(FlopConvention c,
                                              ArrayRef<bool>) {
  return c == Conv::Full ? numel(getInput()) : 0;
}

void AdaptiveAvgPool2dOp::getSavedTensors(const TorchTarget &target,
                                          ArrayRef<bool>,
                                          SmallVectorImpl<SavedTensor> &saved) {
  // Where a 1x1 output runs as mean(-1, -2), it keeps what mean keeps.
  ArrayRef<int64_t> out = getOutputSize();
  if (out[0] == 1 && out[1] == 1 && adaptiveAvgPoolToOneRunsAsMean(target) &&
      !meanSavesInput(target))
    return;
  saved.push_back(SavedTensor::operand(0));
}

/// The type of a reduction of `input` over `dims` (mean, sum).
static LogicalResult inferReduction(std::optional<Location> loc,
                                    RankedTensorType input,
                                    ArrayRef<int64_t> dims, bool keepdim,
                                    SmallVectorImpl<Type> &results) {
  int64_t rank = input.getRank();
  SmallVector<bool> reduced(rank, false);
  if (dims.empty())
    return emitOptionalError(loc, "dims must not be empty");
  for (int64_t d : dims) {
    int64_t n = normalizeDim(d, rank);
    if (n < 0)
      return emitOptionalError(loc, "dim ", d, " is out of range for rank ",
                               rank);
    if (reduced[n])
      return emitOptionalError(loc, "dim ", d, " is listed twice");
    reduced[n] = true;
  }
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < rank; ++i) {
    if (!reduced[i])
      shape.push_back(input.getDimSize(i));
    else if (keepdim)
      shape.push_back(1);
  }
  results.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

/// The result type of nn.mean, nn.sum, nn.amax and nn.amin.
template <typename Adaptor>
static LogicalResult inferReductionOf(std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &results) {
  return inferReduction(loc,
                        cast<RankedTensorType>(adaptor.getInput().getType()),
                        adaptor.getDims(), adaptor.getKeepdim(), results);
}

LogicalResult MeanOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &results) {
  return inferReductionOf(loc, adaptor, results);
}

int64_t MeanOp::getFlops(FlopConvention c, bool) {
  // One add per input element (as adaptive_avg_pool2d to 1x1, which runs as
  // a mean); flop_counter counts no reductions.
  return c == Conv::Flops ? 0 : numel(getInput());
}

int64_t MeanOp::getBackwardFlops(FlopConvention c, ArrayRef<bool>) {
  return c == Conv::Full ? numel(getInput()) : 0;
}

void MeanOp::getSavedTensors(const TorchTarget &target, ArrayRef<bool>,
                             SmallVectorImpl<SavedTensor> &saved) {
  // 2.x's mean_backward expands the gradient to the input's sizes and keeps
  // nothing; 1.13 keeps the input.
  if (meanSavesInput(target))
    saved.push_back(SavedTensor::operand(0));
}

LogicalResult SumOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &results) {
  return inferReductionOf(loc, adaptor, results);
}

int64_t SumOp::getFlops(FlopConvention c, bool) {
  // One add per input element; flop_counter counts no reductions.
  return c == Conv::Full ? numel(getInput()) : 0;
}

void SumOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                            SmallVectorImpl<SavedTensor> &) {
  // sum_backward: grad.expand(sizes), from sizes alone.
}

LogicalResult AmaxOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &results) {
  return inferReductionOf(loc, adaptor, results);
}

LogicalResult AminOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &results) {
  return inferReductionOf(loc, adaptor, results);
}

// One comparison per input element; flop_counter counts no reductions.
int64_t AmaxOp::getFlops(FlopConvention c, bool) {
  return c == Conv::Full ? numel(getInput()) : 0;
}
int64_t AminOp::getFlops(FlopConvention c, bool) {
  return c == Conv::Full ? numel(getInput()) : 0;
}

// AmaxBackward0 / AminBackward0 (and MaxBackward1 / MinBackward1 over
// every element): `self` and `result`.
void AmaxOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                             SmallVectorImpl<SavedTensor> &saved) {
  saved.push_back(SavedTensor::operand(0));
  saved.push_back(SavedTensor::result(0));
}
void AminOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                             SmallVectorImpl<SavedTensor> &saved) {
  saved.push_back(SavedTensor::operand(0));
  saved.push_back(SavedTensor::result(0));
}

/// What AmaxBackward0 / AminBackward0 allocate beside the input's
/// gradient (`grad`, which the analysis counts at the node): each phase's
/// bytes, less the gradient where it is not yet allocated.
///
/// scale_grad_by_count: `mask = result == self` (bool, n_in), then
/// `(grad / mask.sum(dims, true)) * mask`: the sum copies the mask to int64
/// (8 n_in, freed after it) into an int64 count (8 n_out); the quotient is
/// the result's size; the count and quotient live to the end of the
/// expression, with the product (the gradient). On the CPU the division
/// reads a copy of the count and the product a copy of the mask in the
/// gradient's dtype. Measured with torch 2.15 on the CPU (export_pt2.py's
/// reductions_extremes; the profiler's memory events).
///
/// evenly_distribute_backward (x.max() over every element): on the CPU the
/// mask, zeros of the input's size (the gradient) and mask.sum() (its int64
/// copy and count), then a float copy of the count and the quotient; on
/// CUDA two bool masks of the input (isnan and eq, a 1-byte isnan of the
/// result) and `mask * (grad / mask.sum())`.
ExtremumBackwardBytes
vram::nn::getExtremumBackwardBytes(int64_t nIn, int64_t nOut, int64_t elem,
                                   bool evenly, Device device) {
  int64_t grad = nIn * elem, sumCopy = 8 * nIn;
  bool cpu = device == Device::Cpu;
  ExtremumBackwardBytes bytes;
  bytes.mask = nIn;
  bytes.count = 8 * nOut;
  bytes.quotient = nOut * elem;
  // The largest phase's temporaries but the mask, less the gradient where
  // the phase runs before it exists.
  int64_t phase;
  if (evenly && cpu) {
    // The zeros (the gradient) are alive through the sum; the float copy
    // of the count and the quotient come after the int64 copy.
    phase = std::max(sumCopy, elem + bytes.quotient) + bytes.count;
  } else if (evenly) {
    bytes.nanMask = nIn;
    bytes.nanValue = 1;
    phase =
        std::max(sumCopy + bytes.count - grad, bytes.count + bytes.quotient);
  } else {
    bytes.maskCopy = cpu ? nIn * elem : 0;
    int64_t summing = sumCopy + bytes.count - grad;
    int64_t dividing =
        bytes.count + (cpu ? nOut * elem : 0) + bytes.quotient - grad;
    int64_t multiplying = bytes.count + bytes.quotient + bytes.maskCopy;
    phase = std::max({summing, dividing, multiplying});
  }
  bytes.scratch = std::max<int64_t>(
      phase - bytes.count - bytes.quotient - bytes.maskCopy, 0);
  return bytes;
}

template <typename OpTy>
static void getExtremumBackwardWorkspace(OpTy op, const TorchTarget &target,
                                         SmallVectorImpl<int64_t> &sizes) {
  int64_t nOut = numel(op.getOutput());
  ExtremumBackwardBytes bytes = getExtremumBackwardBytes(
      numel(op.getInput()), nOut,
      tensorBytes(op.getOutput()) / std::max<int64_t>(nOut, 1), op.getEvenly(),
      target.device);
  sizes.append({bytes.nanMask, bytes.nanValue, bytes.mask, bytes.count,
                bytes.quotient, bytes.maskCopy, bytes.scratch});
}

void AmaxOp::getBackwardWorkspace(const TorchTarget &target,
                                  ArrayRef<bool> needs,
                                  SmallVectorImpl<int64_t> &sizes) {
  if (needs[0])
    getExtremumBackwardWorkspace(*this, target, sizes);
}
void AminOp::getBackwardWorkspace(const TorchTarget &target,
                                  ArrayRef<bool> needs,
                                  SmallVectorImpl<int64_t> &sizes) {
  if (needs[0])
    getExtremumBackwardWorkspace(*this, target, sizes);
}

/// `evenly` is x.max() over every element: all dimensions, none kept.
template <typename OpTy> static LogicalResult verifyExtremum(OpTy op) {
  if (!op.getEvenly())
    return success();
  if (op.getKeepdim() ||
      static_cast<int64_t>(op.getDims().size()) !=
          cast<RankedTensorType>(op.getInput().getType()).getRank())
    return op.emitOpError("evenly (x.max() over every element) reduces "
                          "every dimension without keepdim");
  return success();
}
LogicalResult AmaxOp::verify() { return verifyExtremum(*this); }
LogicalResult AminOp::verify() { return verifyExtremum(*this); }
