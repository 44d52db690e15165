//===- NNOpsShape.cpp - concat, pad, contiguous, views --------------------===//
//
// Ops that only move or alias data: concat, pad, roll and contiguous copy it
// and count no FLOPs; the views (reshape, flatten, transpose, permute,
// slice, expand) share their input's storage and derive its strides
// (LayoutOpInterface).
//
//===----------------------------------------------------------------------===//

#include "NNOpsDetail.h"

#include "vram/Dialect/NN/NNOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace vram::nn;
using namespace vram::nn::detail;

//===----------------------------------------------------------------------===//
// Concatenation, padding, contiguous copies
//===----------------------------------------------------------------------===//

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  if (adaptor.getInputs().empty())
    return emitOptionalError(loc, "needs at least one input");
  auto first = cast<RankedTensorType>(adaptor.getInputs().front().getType());
  int64_t dim = normalizeDim(adaptor.getDim(), first.getRank());
  if (dim < 0)
    return emitOptionalError(loc, "dim ",
                             static_cast<int64_t>(adaptor.getDim()),
                             " is out of range for rank ", first.getRank());
  SmallVector<int64_t> shape(first.getShape());
  shape[dim] = 0;
  for (Value in : adaptor.getInputs()) {
    auto t = cast<RankedTensorType>(in.getType());
    if (t.getElementType() != first.getElementType())
      return emitOptionalError(loc, "inputs have different element types");
    if (t.getRank() != first.getRank())
      return emitOptionalError(loc, "inputs have different ranks");
    for (int64_t i = 0; i < t.getRank(); ++i)
      if (i != dim && t.getDimSize(i) != first.getDimSize(i))
        return emitOptionalError(loc, "inputs differ in dimension ", i, ": ",
                                 shapeStr(first.getShape()), " vs ",
                                 shapeStr(t.getShape()));
    shape[dim] += t.getDimSize(dim);
  }
  results.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

std::optional<GradSlice> ConcatOp::getGradSlice(unsigned index) {
  // cat_tensors_backward narrows the gradient, one view per input.
  int64_t rank = tensorOf(getOutput()).getRank();
  int64_t dim = normalizeDim(getDim(), rank), start = 0;
  for (Value in : getInputs().take_front(index))
    start += tensorOf(in).getDimSize(dim);
  return GradSlice{dim, start, tensorOf(getInputs()[index]).getDimSize(dim)};
}

int64_t ConcatOp::getFlops(FlopConvention, bool) { return 0; }
int64_t ConcatOp::getBackwardFlops(FlopConvention, ArrayRef<bool>) { return 0; }
void ConcatOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                               SmallVectorImpl<SavedTensor> &) {}

LogicalResult PadOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &results) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t rank = input.getRank();
  ArrayRef<int64_t> low = adaptor.getLow(), high = adaptor.getHigh();
  if ((int64_t)low.size() != rank || (int64_t)high.size() != rank)
    return emitOptionalError(loc,
                             "low and high must have one value per "
                             "dimension (",
                             rank, "), got ", low.size(), " and ", high.size());
  SmallVector<int64_t> shape(input.getShape());
  for (int64_t i = 0; i < rank; ++i) {
    if (low[i] < 0 || high[i] < 0)
      return emitOptionalError(loc, "padding must be >= 0, got ", low[i],
                               " and ", high[i], " for dimension ", i);
    if (llvm::AddOverflow(shape[i], low[i], shape[i]) ||
        llvm::AddOverflow(shape[i], high[i], shape[i]))
      return emitOptionalError(loc, "padded dimension ", i, " overflows int64");
  }
  results.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

int64_t PadOp::getFlops(FlopConvention, bool) { return 0; }
int64_t PadOp::getBackwardFlops(FlopConvention, ArrayRef<bool>) { return 0; }
void PadOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                            SmallVectorImpl<SavedTensor> &) {
  // constant_pad_nd's backward slices the gradient: nothing kept.
}

LogicalResult RollOp::verify() {
  ArrayRef<int64_t> shifts = getShifts(), dims = getDims();
  int64_t rank = cast<RankedTensorType>(getInput().getType()).getRank();
  if (shifts.empty() || shifts.size() != dims.size())
    return emitOpError("needs one shift per dimension, got ")
           << shifts.size() << " shifts and " << dims.size() << " dims";
  llvm::SmallBitVector seen(rank);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank)
      return emitOpError("dim ") << d << " is out of range for rank " << rank;
    if (seen.test(d))
      return emitOpError("dim ") << d << " is rolled twice";
    seen.set(d);
  }
  return success();
}

int64_t RollOp::getFlops(FlopConvention, bool) { return 0; }
int64_t RollOp::getBackwardFlops(FlopConvention, ArrayRef<bool>) { return 0; }
void RollOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                             SmallVectorImpl<SavedTensor> &) {
  // RollBackward0 keeps only the shifts and dims.
}

int64_t ContiguousOp::getFlops(FlopConvention, bool) { return 0; }
bool ContiguousOp::isGradPassthrough(unsigned) { return true; }
void ContiguousOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                   SmallVectorImpl<SavedTensor> &) {
  // CloneBackward hands the gradient through.
}

//===----------------------------------------------------------------------===//
// Views
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto in = tensorOf(getInput()), out = tensorOf(getOutput());
  if (in.getElementType() != out.getElementType())
    return emitOpError("cannot change the element type");
  if (in.getNumElements() != out.getNumElements())
    return emitOpError("cannot reshape ")
           << in.getNumElements() << " elements into " << out.getNumElements();
  return success();
}

/// reshape / flatten: a view when the input's strides allow it.
static std::optional<SmallVector<int64_t>>
reshapeStrides(Value input, Value result, ArrayRef<int64_t> in) {
  return getViewStrides(tensorOf(input).getShape(), in,
                        tensorOf(result).getShape());
}

std::optional<SmallVector<int64_t>>
ReshapeOp::getResultStrides(ArrayRef<int64_t> in) {
  return reshapeStrides(getInput(), getResult(), in);
}
void ReshapeOp::getOperandViews(SmallVectorImpl<OperandView> &views) {
  views.push_back({0, llvm::to_vector(tensorOf(getResult()).getShape())});
}

LogicalResult FlattenOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  auto in = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t rank = std::max<int64_t>(in.getRank(), 1);
  int64_t start = normalizeDim(adaptor.getStartDim(), rank);
  int64_t end = normalizeDim(adaptor.getEndDim(), rank);
  if (start < 0 || end < 0 || start > end)
    return emitOptionalError(
        loc,
        "invalid dims start_dim=", static_cast<int64_t>(adaptor.getStartDim()),
        " end_dim=", static_cast<int64_t>(adaptor.getEndDim()), " for rank ",
        in.getRank());
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < start; ++i)
    shape.push_back(in.getDimSize(i));
  int64_t merged = 1;
  for (int64_t i = start; i <= end && i < in.getRank(); ++i)
    merged *= in.getDimSize(i);
  shape.push_back(merged);
  for (int64_t i = end + 1; i < in.getRank(); ++i)
    shape.push_back(in.getDimSize(i));
  results.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

std::optional<SmallVector<int64_t>>
FlattenOp::getResultStrides(ArrayRef<int64_t> in) {
  return reshapeStrides(getInput(), getResult(), in);
}
void FlattenOp::getOperandViews(SmallVectorImpl<OperandView> &views) {
  views.push_back({0, llvm::to_vector(tensorOf(getResult()).getShape())});
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  auto in = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t d0 = normalizeDim(adaptor.getDim0(), in.getRank());
  int64_t d1 = normalizeDim(adaptor.getDim1(), in.getRank());
  if (d0 < 0 || d1 < 0)
    return emitOptionalError(loc, "dims (",
                             static_cast<int64_t>(adaptor.getDim0()), ", ",
                             static_cast<int64_t>(adaptor.getDim1()),
                             ") are out of range for rank ", in.getRank());
  SmallVector<int64_t> shape(in.getShape());
  std::swap(shape[d0], shape[d1]);
  results.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

std::optional<SmallVector<int64_t>>
TransposeOp::getResultStrides(ArrayRef<int64_t> in) {
  SmallVector<int64_t> strides(in);
  int64_t r = strides.size();
  std::swap(strides[normalizeDim(getDim0(), r)],
            strides[normalizeDim(getDim1(), r)]);
  return strides;
}

LogicalResult PermuteOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  auto in = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> dims = adaptor.getDims();
  if ((int64_t)dims.size() != in.getRank())
    return emitOptionalError(loc, "dims has ", dims.size(),
                             " entries for rank ", in.getRank());
  SmallVector<bool> seen(in.getRank(), false);
  SmallVector<int64_t> shape;
  for (int64_t d : dims) {
    int64_t n = normalizeDim(d, in.getRank());
    if (n < 0 || seen[n])
      return emitOptionalError(loc, "dims is not a permutation");
    seen[n] = true;
    shape.push_back(in.getDimSize(n));
  }
  results.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

std::optional<SmallVector<int64_t>>
PermuteOp::getResultStrides(ArrayRef<int64_t> in) {
  SmallVector<int64_t> strides;
  for (int64_t d : getDims())
    strides.push_back(in[normalizeDim(d, in.size())]);
  return strides;
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  auto in = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t dim = normalizeDim(adaptor.getDim(), in.getRank());
  if (dim < 0)
    return emitOptionalError(loc, "dim ",
                             static_cast<int64_t>(adaptor.getDim()),
                             " is out of range for rank ", in.getRank());
  int64_t size = in.getDimSize(dim), step = adaptor.getStep();
  if (step < 1)
    return emitOptionalError(loc, "step must be >= 1, got ", step);
  auto clampIndex = [&](int64_t i) {
    if (i < 0)
      i += size;
    return std::clamp<int64_t>(i, 0, size);
  };
  int64_t start = clampIndex(adaptor.getStart()),
          end = clampIndex(adaptor.getEnd());
  SmallVector<int64_t> shape(in.getShape());
  shape[dim] = end > start ? (end - start - 1) / step + 1 : 0;
  results.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

std::optional<SmallVector<int64_t>>
SliceOp::getResultStrides(ArrayRef<int64_t> in) {
  SmallVector<int64_t> strides(in);
  int64_t d = normalizeDim(getDim(), strides.size());
  int64_t scaled;
  strides[d] = llvm::MulOverflow(strides[d], (int64_t)getStep(), scaled)
                   ? INT64_MAX
                   : scaled;
  return strides;
}

//===----------------------------------------------------------------------===//
// nn.split
//===----------------------------------------------------------------------===//

/// The type of piece `size` of `input` along `dim`.
static RankedTensorType splitPieceType(RankedTensorType input, int64_t dim,
                                       int64_t size, bool squeeze) {
  SmallVector<int64_t> shape(input.getShape());
  if (squeeze)
    shape.erase(shape.begin() + dim);
  else
    shape[dim] = size;
  return RankedTensorType::get(shape, input.getElementType());
}

void SplitOp::build(OpBuilder &b, OperationState &state, Value input,
                    int64_t dim, ArrayRef<int64_t> sizes, bool squeeze) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t d = normalizeDim(dim, type.getRank());
  SmallVector<Type> pieces;
  for (int64_t size : sizes)
    pieces.push_back(
        splitPieceType(type, std::max<int64_t>(d, 0), size, squeeze));
  build(b, state, pieces, input, dim, sizes, squeeze);
}

LogicalResult SplitOp::verify() {
  auto in = tensorOf(getInput());
  int64_t dim = normalizeDim(getDim(), in.getRank());
  if (dim < 0)
    return emitOpError("dim ")
           << getDim() << " is out of range for rank " << in.getRank();
  ArrayRef<int64_t> sizes = getSizes();
  if (sizes.size() != getNumResults())
    return emitOpError("has ")
           << sizes.size() << " sizes for " << getNumResults() << " results";
  int64_t total = 0;
  for (auto [size, result] : llvm::zip(sizes, getResults())) {
    if (size < 0 || (getSqueeze() && size != 1))
      return emitOpError("piece sizes must be ")
             << (getSqueeze() ? "1 with squeeze" : "non-negative") << ", got "
             << size;
    total += size;
    if (result.getType() != splitPieceType(in, dim, size, getSqueeze()))
      return emitOpError("result of type ")
             << result.getType() << " is not a piece of " << size
             << " along dim " << dim << " of " << in;
  }
  if (total != in.getDimSize(dim))
    return emitOpError("pieces of ") << total << " elements do not cover dim "
                                     << dim << " of " << in.getDimSize(dim);
  return success();
}

Value SplitOp::getAliasedOperand(unsigned) { return getInput(); }

std::optional<SmallVector<int64_t>>
SplitOp::getResultStridesAt(unsigned, ArrayRef<int64_t> in) {
  SmallVector<int64_t> strides(in);
  if (getSqueeze())
    strides.erase(strides.begin() + normalizeDim(getDim(), in.size()));
  return strides;
}

int64_t SplitOp::getFlops(FlopConvention, bool) { return 0; }

void SplitOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                              SmallVectorImpl<SavedTensor> &) {}

void SplitOp::getBackwardWorkspace(const TorchTarget &target,
                                   ArrayRef<bool> operandNeedsGrad,
                                   SmallVectorImpl<int64_t> &sizes) {
  SmallVector<bool> all(getNumResults(), true);
  getBackwardWorkspaceForGrads(target, operandNeedsGrad, all, all, sizes);
}

void SplitOp::getBackwardWorkspaceForGrads(const TorchTarget &, ArrayRef<bool>,
                                           ArrayRef<bool> resultHasGrad,
                                           ArrayRef<bool>,
                                           SmallVectorImpl<int64_t> &sizes) {
  // split_backward / unbind_backward fill in a piece without a gradient
  // with zeros of its size before concatenating.
  for (auto [result, hasGrad] : llvm::zip(getResults(), resultHasGrad))
    if (!hasGrad)
      sizes.push_back(tensorBytes(result));
}

LogicalResult ExpandOp::verify() {
  auto in = tensorOf(getInput()), out = tensorOf(getOutput());
  if (in.getElementType() != out.getElementType())
    return emitOpError("cannot change the element type");
  if (out.getRank() < in.getRank())
    return emitOpError("cannot expand rank ")
           << in.getRank() << " to rank " << out.getRank();
  int64_t offset = out.getRank() - in.getRank();
  for (int64_t i = 0; i < in.getRank(); ++i)
    if (in.getDimSize(i) != 1 && in.getDimSize(i) != out.getDimSize(i + offset))
      return emitOpError("cannot expand dimension ")
             << i << " of size " << in.getDimSize(i) << " to "
             << out.getDimSize(i + offset);
  return success();
}

std::optional<SmallVector<int64_t>>
ExpandOp::getResultStrides(ArrayRef<int64_t> in) {
  auto input = tensorOf(getInput()), result = tensorOf(getResult());
  int64_t offset = result.getRank() - input.getRank();
  // New leading dimensions and broadcast size-1 dimensions get stride 0.
  SmallVector<int64_t> strides(result.getRank(), 0);
  for (int64_t k = 0; k < input.getRank(); ++k)
    if (input.getDimSize(k) == result.getDimSize(k + offset))
      strides[k + offset] = in[k];
  return strides;
}
