//===- NNOps.cpp - nn dialect ops: shapes, verifiers, semantics -----------===//
//
// Every op's semantics live here, next to each other: result type inference
// and verification, FLOPs (CostOpInterface) and what autograd saves
// (AutodiffOpInterface). The formulas follow ../shared/reference/flops.md and
// pytorch.md; docs/Flops.md lists them.
//
//===----------------------------------------------------------------------===//

#include "vram/Dialect/NN/NNOps.h"
#include "vram/Dialect/NN/TensorNames.h"
#include "vram/Dialect/NN/TorchSemantics.h"
#include "vram/Support/CheckedMath.h"

#include "mlir/Dialect/Traits.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace vram::nn;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

namespace {
using Conv = FlopConvention;

RankedTensorType tensorOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

// FLOP arithmetic saturates at INT64_MAX, which the FLOP analysis reports as
// an overflow: a count that does not fit in 64 bits is never a wrapped,
// plausible-looking number.
using vram::saturatingAdd;
using vram::saturatingMul;
template <typename... Args> int64_t satMul(Args... args) {
  return saturatingMul(args...);
}
int64_t satAdd(int64_t a, int64_t b) { return saturatingAdd(a, b); }

int64_t numel(Type type) {
  int64_t n = 1;
  for (int64_t d : cast<RankedTensorType>(type).getShape())
    n = satMul(n, d);
  return n;
}
int64_t numel(Value v) { return numel(v.getType()); }
/// Bytes of a tensor type, saturated.
int64_t tensorBytes(Type type) {
  return satMul(numel(type),
                llvm::divideCeil(
                    cast<RankedTensorType>(type).getElementTypeBitWidth(), 8));
}
int64_t tensorBytes(Value v) { return tensorBytes(v.getType()); }

/// Converts multiply-adds to the convention's unit for mm/conv/attention.
int64_t fromMacs(Conv convention, int64_t macs) {
  return convention == Conv::Macs ? macs : satMul(2, macs);
}

/// Normalizes a possibly negative dimension index; returns -1 if out of range.
int64_t normalizeDim(int64_t dim, int64_t rank) {
  if (dim < 0)
    dim += rank;
  return (dim < 0 || dim >= rank) ? -1 : dim;
}

LogicalResult checkPair(std::optional<Location> loc, StringRef what,
                        ArrayRef<int64_t> values, int64_t minValue) {
  if (values.size() != 2)
    return emitOptionalError(loc, what, " must have 2 values, got ",
                             values.size());
  for (int64_t v : values)
    if (v < minValue)
      return emitOptionalError(loc, what, " must be >= ", minValue, ", got ",
                               v);
  return success();
}

/// One spatial output size of a convolution or pooling window
/// (windowOutputSize), or an error: `misfit` when the window does not fit,
/// another when the sizes overflow int64.
FailureOr<int64_t> spatialOutputSize(std::optional<Location> loc, int dim,
                                     int64_t in, int64_t kernel, int64_t stride,
                                     int64_t pad, int64_t dilation,
                                     bool ceilMode, const std::string &misfit) {
  std::optional<int64_t> out =
      vram::windowOutputSize(in, kernel, stride, pad, dilation, ceilMode);
  if (!out)
    return emitOptionalError(loc,
                             "the output size overflows int64 (spatial "
                             "dim ",
                             dim, ": padding, dilation or kernel too large)");
  if (*out < 1)
    return emitOptionalError(loc, misfit);
  return *out;
}

/// numpy/PyTorch broadcasting of two shapes.
FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a,
                                                ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return failure();
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleaveComma(shape, os);
  os << "]";
  return s;
}

/// Whether a forward op with these operand flags records a backward node.
bool anyRequiresGrad(ArrayRef<bool> flags) {
  return llvm::is_contained(flags, true);
}

/// Row statistics of a normalization: the leading dims followed by ones.
RankedTensorType statsType(RankedTensorType input, int64_t normalizedRank) {
  SmallVector<int64_t> shape(input.getShape());
  for (int64_t i = shape.size() - normalizedRank; i < (int64_t)shape.size();
       ++i)
    shape[i] = 1;
  return RankedTensorType::get(shape, Float32Type::get(input.getContext()));
}
} // namespace

//===----------------------------------------------------------------------===//
// nn.param / nn.buffer
//===----------------------------------------------------------------------===//

LogicalResult ParamOp::verify() {
  if (getName().empty())
    return emitOpError("needs a non-empty name");
  return success();
}

LogicalResult BufferOp::verify() {
  if (getName().empty())
    return emitOpError("needs a non-empty name");
  return success();
}

//===----------------------------------------------------------------------===//
// nn.conv2d
//===----------------------------------------------------------------------===//

LogicalResult Conv2dOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  auto weight = cast<RankedTensorType>(adaptor.getWeight().getType());
  if (input.getRank() != 4)
    return emitOptionalError(loc, "expects a 4-D NCHW input, got rank ",
                             input.getRank());
  if (weight.getRank() != 4)
    return emitOptionalError(
        loc, "expects a 4-D weight [Cout, Cin/groups, kh, kw], got rank ",
        weight.getRank());
  if (input.getElementType() != weight.getElementType())
    return emitOptionalError(loc, "input element type ", input.getElementType(),
                             " does not match weight element type ",
                             weight.getElementType());
  if (failed(checkPair(loc, "strides", adaptor.getStrides(), 1)) ||
      failed(checkPair(loc, "padding", adaptor.getPadding(), 0)) ||
      failed(checkPair(loc, "dilation", adaptor.getDilation(), 1)))
    return failure();
  int64_t groups = adaptor.getGroups();
  int64_t cin = input.getDimSize(1), cout = weight.getDimSize(0);
  if (groups < 1 || cin % groups || cout % groups)
    return emitOptionalError(loc, "groups (", groups,
                             ") must divide input channels (", cin,
                             ") and output channels (", cout, ")");
  if (vram::checkedMul(weight.getDimSize(1), groups) != cin)
    return emitOptionalError(loc, "channel mismatch: input has ", cin,
                             " channels but weight expects ",
                             weight.getDimSize(1), " x ", groups, " groups");
  if (Value bias = adaptor.getBias()) {
    auto b = cast<RankedTensorType>(bias.getType());
    if (b.getRank() != 1 || b.getDimSize(0) != cout)
      return emitOptionalError(loc, "bias must be [", cout, "], got ",
                               shapeStr(b.getShape()));
    if (b.getElementType() != input.getElementType())
      return emitOptionalError(loc, "bias element type ", b.getElementType(),
                               " does not match input element type ",
                               input.getElementType());
  }
  SmallVector<int64_t> shape = {input.getDimSize(0), cout};
  for (int i = 0; i < 2; ++i) {
    FailureOr<int64_t> out = spatialOutputSize(
        loc, i, input.getDimSize(2 + i), weight.getDimSize(2 + i),
        adaptor.getStrides()[i], adaptor.getPadding()[i],
        adaptor.getDilation()[i], false,
        "kernel does not fit the padded input (spatial dim " +
            std::to_string(i) + ")");
    if (failed(out))
      return failure();
    shape.push_back(*out);
  }
  results.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

static int64_t convMacs(Conv2dOp op) {
  auto out = tensorOf(op.getOutput());
  return satMul(out.getDimSize(0), numel(op.getWeight()), out.getDimSize(2),
                out.getDimSize(3));
}

/// conv and linear: the products, plus the bias add under `full`.
static int64_t affineFlops(Conv c, int64_t macs, bool bias, Value output) {
  int64_t flops = fromMacs(c, macs);
  if (c == Conv::Full && bias)
    flops = satAdd(flops, numel(output));
  return flops;
}

/// One product per input or weight gradient, and the bias gradient's sum.
static int64_t affineBackwardFlops(Conv c, int64_t macs, ArrayRef<bool> needs,
                                   bool bias, Value output) {
  int64_t flops = satAdd(needs[0] ? fromMacs(c, macs) : 0,
                         needs[1] ? fromMacs(c, macs) : 0);
  if (c == Conv::Full && bias && needs.size() > 2 && needs[2])
    flops = satAdd(flops, numel(output));
  return flops;
}

int64_t Conv2dOp::getFlops(FlopConvention c, bool) {
  return affineFlops(c, convMacs(*this), static_cast<bool>(getBias()),
                     getOutput());
}

int64_t Conv2dOp::getBackwardFlops(FlopConvention c, ArrayRef<bool> needs) {
  return affineBackwardFlops(c, convMacs(*this), needs,
                             static_cast<bool>(getBias()), getOutput());
}

static ConvBackwardSizes convSizes(Conv2dOp op) {
  auto input = tensorOf(op.getInput()), weight = tensorOf(op.getWeight()),
       out = tensorOf(op.getOutput());
  int64_t elementBytes = llvm::divideCeil(input.getElementTypeBitWidth(), 8);
  ConvBackwardSizes sizes;
  sizes.input = tensorBytes(op.getInput());
  sizes.gradOutput = tensorBytes(op.getOutput());
  sizes.weight = tensorBytes(op.getWeight());
  sizes.columns =
      satMul(input.getDimSize(1), weight.getDimSize(2), weight.getDimSize(3),
             out.getDimSize(2), out.getDimSize(3), elementBytes);
  sizes.batch = input.getDimSize(0);
  sizes.groups = op.getGroups();
  sizes.kernelH = weight.getDimSize(2);
  sizes.kernelW = weight.getDimSize(3);
  sizes.inputElements = numel(op.getInput());
  return sizes;
}

int64_t Conv2dOp::getBackwardWorkspaceBytes(const TorchTarget &target,
                                            ArrayRef<bool> needs) {
  return getConvBackwardWorkspaceBytes(target, convSizes(*this), needs[0],
                                       needs[1]);
}

int64_t Conv2dOp::getWorkspaceBytes(const TorchTarget &target) {
  return getConvForwardWorkspaceBytes(target, convSizes(*this));
}

void Conv2dOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                               SmallVectorImpl<SavedTensor> &saved) {
  // convolution_backward needs input and weight whatever requires grad.
  saved.push_back(SavedTensor::operand(0));
  saved.push_back(SavedTensor::operand(1));
}

//===----------------------------------------------------------------------===//
// nn.linear / nn.matmul / nn.bmm
//===----------------------------------------------------------------------===//

LogicalResult LinearOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  auto weight = cast<RankedTensorType>(adaptor.getWeight().getType());
  if (input.getRank() < 1)
    return emitOptionalError(loc, "expects an input of rank >= 1");
  if (weight.getRank() != 2)
    return emitOptionalError(loc, "expects a 2-D weight [out, in], got rank ",
                             weight.getRank());
  if (input.getElementType() != weight.getElementType())
    return emitOptionalError(loc, "input element type ", input.getElementType(),
                             " does not match weight element type ",
                             weight.getElementType());
  int64_t in = input.getShape().back();
  if (weight.getDimSize(1) != in)
    return emitOptionalError(loc, "input features (", in,
                             ") do not match weight in_features (",
                             weight.getDimSize(1), ")");
  if (Value bias = adaptor.getBias()) {
    auto b = cast<RankedTensorType>(bias.getType());
    if (b.getRank() != 1 || b.getDimSize(0) != weight.getDimSize(0))
      return emitOptionalError(loc, "bias must be [", weight.getDimSize(0),
                               "], got ", shapeStr(b.getShape()));
    if (b.getElementType() != input.getElementType())
      return emitOptionalError(loc, "bias element type ", b.getElementType(),
                               " does not match input element type ",
                               input.getElementType());
  }
  SmallVector<int64_t> shape(input.getShape());
  shape.back() = weight.getDimSize(0);
  results.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

static int64_t linearMacs(LinearOp op) {
  return satMul(numel(op.getInput()), tensorOf(op.getWeight()).getDimSize(0));
}

int64_t LinearOp::getFlops(FlopConvention c, bool) {
  return affineFlops(c, linearMacs(*this), static_cast<bool>(getBias()),
                     getOutput());
}

int64_t LinearOp::getBackwardFlops(FlopConvention c, ArrayRef<bool> needs) {
  return affineBackwardFlops(c, linearMacs(*this), needs,
                             static_cast<bool>(getBias()), getOutput());
}

void LinearOp::getSavedTensors(const TorchTarget &, ArrayRef<bool> needs,
                               SmallVectorImpl<SavedTensor> &saved) {
  // grad_weight = grad^T x needs the input; grad_input = grad W needs W.
  if (needs[1])
    saved.push_back(SavedTensor::operand(0));
  if (needs[0])
    saved.push_back(SavedTensor::operand(1));
}

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  auto lhs = cast<RankedTensorType>(adaptor.getLhs().getType());
  auto rhs = cast<RankedTensorType>(adaptor.getRhs().getType());
  if (lhs.getRank() < 2 || rhs.getRank() < 2)
    return emitOptionalError(loc, "expects operands of rank >= 2");
  if (lhs.getElementType() != rhs.getElementType())
    return emitOptionalError(loc,
                             "element types differ: ", lhs.getElementType(),
                             " vs ", rhs.getElementType());
  int64_t k = lhs.getShape().back();
  if (rhs.getShape()[rhs.getRank() - 2] != k)
    return emitOptionalError(loc, "contraction mismatch: lhs has ", k,
                             " columns, rhs has ",
                             rhs.getShape()[rhs.getRank() - 2], " rows");
  auto batch =
      broadcastShapes(lhs.getShape().drop_back(2), rhs.getShape().drop_back(2));
  if (failed(batch))
    return emitOptionalError(
        loc, "batch dimensions do not broadcast: ", shapeStr(lhs.getShape()),
        " vs ", shapeStr(rhs.getShape()));
  SmallVector<int64_t> shape = *batch;
  shape.push_back(lhs.getShape()[lhs.getRank() - 2]);
  shape.push_back(rhs.getShape().back());
  results.push_back(RankedTensorType::get(shape, lhs.getElementType()));
  return success();
}

static int64_t matmulMacs(Value lhs, Value out) {
  // Every output element is a dot product of length k.
  return satMul(numel(out), tensorOf(lhs).getShape().back());
}

/// matmul and bmm: one product per gradient needed.
static int64_t matmulBackwardFlops(Conv c, Value lhs, Value out,
                                   ArrayRef<bool> needs) {
  int64_t macs = matmulMacs(lhs, out);
  return satAdd(needs[0] ? fromMacs(c, macs) : 0,
                needs[1] ? fromMacs(c, macs) : 0);
}

/// d(a @ b)/da needs b, d(a @ b)/db needs a.
static void saveMatmulOperands(ArrayRef<bool> needs,
                               SmallVectorImpl<SavedTensor> &saved) {
  if (needs[1])
    saved.push_back(SavedTensor::operand(0));
  if (needs[0])
    saved.push_back(SavedTensor::operand(1));
}

int64_t MatmulOp::getFlops(FlopConvention c, bool) {
  return fromMacs(c, matmulMacs(getLhs(), getOutput()));
}

int64_t MatmulOp::getBackwardFlops(FlopConvention c, ArrayRef<bool> needs) {
  return matmulBackwardFlops(c, getLhs(), getOutput(), needs);
}

void MatmulOp::getSavedTensors(const TorchTarget &, ArrayRef<bool> needs,
                               SmallVectorImpl<SavedTensor> &saved) {
  saveMatmulOperands(needs, saved);
}

LogicalResult BmmOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &results) {
  auto lhs = cast<RankedTensorType>(adaptor.getLhs().getType());
  auto rhs = cast<RankedTensorType>(adaptor.getRhs().getType());
  if (lhs.getRank() != 3 || rhs.getRank() != 3)
    return emitOptionalError(loc, "expects rank-3 operands");
  if (lhs.getElementType() != rhs.getElementType())
    return emitOptionalError(loc,
                             "element types differ: ", lhs.getElementType(),
                             " vs ", rhs.getElementType());
  if (lhs.getDimSize(0) != rhs.getDimSize(0))
    return emitOptionalError(loc, "batch sizes differ: ", lhs.getDimSize(0),
                             " vs ", rhs.getDimSize(0));
  if (lhs.getDimSize(2) != rhs.getDimSize(1))
    return emitOptionalError(loc, "contraction mismatch: lhs has ",
                             lhs.getDimSize(2), " columns, rhs has ",
                             rhs.getDimSize(1), " rows");
  results.push_back(RankedTensorType::get(
      {lhs.getDimSize(0), lhs.getDimSize(1), rhs.getDimSize(2)},
      lhs.getElementType()));
  return success();
}

int64_t BmmOp::getFlops(FlopConvention c, bool) {
  return fromMacs(c, matmulMacs(getLhs(), getOutput()));
}

int64_t BmmOp::getBackwardFlops(FlopConvention c, ArrayRef<bool> needs) {
  return matmulBackwardFlops(c, getLhs(), getOutput(), needs);
}

void BmmOp::getSavedTensors(const TorchTarget &, ArrayRef<bool> needs,
                            SmallVectorImpl<SavedTensor> &saved) {
  saveMatmulOperands(needs, saved);
}

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

int64_t BatchNormOp::getBackwardWorkspaceBytes(const TorchTarget &target,
                                               ArrayRef<bool> needs) {
  return needs[0] ? getBatchNormBackwardWorkspaceBytes(target,
                                                       tensorBytes(getInput()))
                  : 0;
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

void LayerNormOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                  SmallVectorImpl<SavedTensor> &saved) {
  for (unsigned i = 0, e = getNumOperands(); i < e; ++i)
    saved.push_back(SavedTensor::operand(i));
  auto stats = statsType(tensorOf(getInput()), getNormalizedRank());
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
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// Activations: under `full`, one FLOP per element; nothing under the other
// conventions (fvcore ignores them, flop_counter counts only mm/conv/sdpa).
#define NN_ELEMENTWISE_FLOPS(OP, PER_ELEMENT)                                  \
  int64_t OP::getFlops(FlopConvention c, bool) {                               \
    return c == Conv::Full ? (PER_ELEMENT)*numel(getInput()) : 0;              \
  }

NN_ELEMENTWISE_FLOPS(ReluOp, 1)
NN_ELEMENTWISE_FLOPS(Relu6Op, 1)
NN_ELEMENTWISE_FLOPS(SiluOp, 1)
NN_ELEMENTWISE_FLOPS(HardswishOp, 1)
NN_ELEMENTWISE_FLOPS(HardsigmoidOp, 1)
NN_ELEMENTWISE_FLOPS(GeluOp, 1)
NN_ELEMENTWISE_FLOPS(SigmoidOp, 1)
NN_ELEMENTWISE_FLOPS(TanhOp, 1)
NN_ELEMENTWISE_FLOPS(PowOp, 1)
NN_ELEMENTWISE_FLOPS(SqrtOp, 1)
NN_ELEMENTWISE_FLOPS(RsqrtOp, 1)
NN_ELEMENTWISE_FLOPS(ReciprocalOp, 1)
NN_ELEMENTWISE_FLOPS(ExpOp, 1)
NN_ELEMENTWISE_FLOPS(NegOp, 1)
NN_ELEMENTWISE_FLOPS(SoftmaxOp, 3)
NN_ELEMENTWISE_FLOPS(LogSoftmaxOp, 3)
#undef NN_ELEMENTWISE_FLOPS

void ReluOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                             SmallVectorImpl<SavedTensor> &saved) {
  // threshold_backward(grad, result): relu_ saves the mutated tensor itself.
  saved.push_back(SavedTensor::result(0));
}

/// An op whose backward formula uses its input `self`. Its in-place form has
/// no formula of its own (unlike relu_), so autograd clones the input before
/// the op overwrites it and keeps the clone: new memory of the input's size
/// (measured for relu6_ = hardtanh_ with torch 1.13; reference/pytorch.md).
template <typename OpTy>
static void saveSelf(OpTy op, SmallVectorImpl<SavedTensor> &saved) {
  if (op.getInplace())
    saved.push_back(
        SavedTensor::extraBeforeOp(op.getInput().getType(), "self_clone"));
  else
    saved.push_back(SavedTensor::operand(0));
}

void Relu6Op::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                              SmallVectorImpl<SavedTensor> &saved) {
  // hardtanh_backward(grad, self, 0, 6).
  saveSelf(*this, saved);
}

void SiluOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                             SmallVectorImpl<SavedTensor> &saved) {
  saveSelf(*this, saved);
}

void HardswishOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                  SmallVectorImpl<SavedTensor> &saved) {
  saveSelf(*this, saved);
}

void HardsigmoidOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                    SmallVectorImpl<SavedTensor> &saved) {
  saveSelf(*this, saved);
}

void PowOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                            SmallVectorImpl<SavedTensor> &saved) {
  saved.push_back(SavedTensor::operand(0));
}

void NegOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                            SmallVectorImpl<SavedTensor> &) {}

void GeluOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                             SmallVectorImpl<SavedTensor> &saved) {
  saved.push_back(SavedTensor::operand(0));
}

void SigmoidOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                SmallVectorImpl<SavedTensor> &saved) {
  saved.push_back(SavedTensor::result(0));
}

void TanhOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                             SmallVectorImpl<SavedTensor> &saved) {
  saved.push_back(SavedTensor::result(0));
}

static LogicalResult verifySoftmaxDim(Operation *op, int64_t dim) {
  int64_t rank = cast<RankedTensorType>(op->getOperand(0).getType()).getRank();
  if (normalizeDim(dim, rank) < 0)
    return op->emitOpError("dim ")
           << dim << " is out of range for rank " << rank;
  return success();
}

LogicalResult SoftmaxOp::verify() { return verifySoftmaxDim(*this, getDim()); }
LogicalResult LogSoftmaxOp::verify() {
  return verifySoftmaxDim(*this, getDim());
}

/// The result type of an op with torch's `dtype=` argument: the input's
/// shape in `dtype`'s element type when given.
static LogicalResult inferWithDtype(std::optional<Location> loc, Type input,
                                    TypeAttr dtype, ArrayRef<int64_t> shape,
                                    SmallVectorImpl<Type> &results) {
  Type et = cast<RankedTensorType>(input).getElementType();
  if (dtype) {
    if (!isa<FloatType>(dtype.getValue()))
      return emitOptionalError(loc, "dtype must be a floating-point type, got ",
                               dtype.getValue());
    et = dtype.getValue();
  }
  results.push_back(RankedTensorType::get(shape, et));
  return success();
}

/// softmax and log_softmax: the input's shape, in `dtype` when given.
template <typename Adaptor>
static LogicalResult inferSoftmaxLike(std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &results) {
  Type input = adaptor.getInput().getType();
  return inferWithDtype(loc, input, adaptor.getDtypeAttr(),
                        cast<RankedTensorType>(input).getShape(), results);
}

LogicalResult SoftmaxOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  return inferSoftmaxLike(loc, adaptor, results);
}

LogicalResult LogSoftmaxOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &results) {
  return inferSoftmaxLike(loc, adaptor, results);
}

void SoftmaxOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                SmallVectorImpl<SavedTensor> &saved) {
  saved.push_back(SavedTensor::result(0));
}

void LogSoftmaxOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                   SmallVectorImpl<SavedTensor> &saved) {
  saved.push_back(SavedTensor::result(0));
}

LogicalResult DropoutOp::verify() {
  // Written so that NaN fails too.
  if (!(getP().convertToDouble() >= 0 && getP().convertToDouble() <= 1))
    return emitOpError("p must be in [0, 1], got ") << getP().convertToDouble();
  return success();
}

Value DropoutOp::getAliasedOperand(unsigned) {
  // p = 0 is the identity: the output is the input.
  return (getInplace() || getP().convertToDouble() == 0) ? getInput() : Value();
}

bool DropoutOp::isGradPassthrough(unsigned) {
  return getP().convertToDouble() == 0;
}

int64_t DropoutOp::getFlops(FlopConvention c, bool training) {
  return (c == Conv::Full && training && getP().convertToDouble() > 0)
             ? numel(getInput())
             : 0;
}

void DropoutOp::getSavedTensors(const TorchTarget &target, ArrayRef<bool>,
                                SmallVectorImpl<SavedTensor> &saved) {
  if (getP().convertToDouble() == 0 || getP().convertToDouble() == 1)
    return;
  auto input = tensorOf(getInput());
  saved.push_back(SavedTensor::extra(
      RankedTensorType::get(
          input.getShape(),
          getDropoutMaskElementType(target, input.getElementType())),
      "mask"));
}

template <typename BinaryOp>
static LogicalResult inferBinary(std::optional<Location> loc,
                                 typename BinaryOp::Adaptor adaptor,
                                 SmallVectorImpl<Type> &results) {
  auto lhs = cast<RankedTensorType>(adaptor.getLhs().getType());
  auto rhs = cast<RankedTensorType>(adaptor.getRhs().getType());
  // torch.result_type: a zero-dim tensor (a Python scalar, `x * scaling`)
  // does not widen a dimensioned tensor of the same category.
  Type et = promoteFloatTypes(lhs.getElementType(), rhs.getElementType());
  if ((lhs.getRank() == 0) != (rhs.getRank() == 0) &&
      isa<FloatType>(lhs.getElementType()) &&
      isa<FloatType>(rhs.getElementType()))
    et = lhs.getRank() ? lhs.getElementType() : rhs.getElementType();
  auto shape = broadcastShapes(lhs.getShape(), rhs.getShape());
  if (failed(shape))
    return emitOptionalError(
        loc, "shapes do not broadcast: ", shapeStr(lhs.getShape()), " vs ",
        shapeStr(rhs.getShape()));
  results.push_back(RankedTensorType::get(*shape, et));
  return success();
}

template <typename BinaryOp> static LogicalResult verifyBinary(BinaryOp op) {
  // `a += b` keeps a's dtype, so b must not be wider (PyTorch: "result type
  // can't be cast to the desired output type").
  if (op.getInplace() && tensorOf(op.getOutput()) != tensorOf(op.getLhs()))
    return op.emitOpError(
               "in place needs the result to have the lhs type, got ")
           << op.getOutput().getType() << " for lhs " << op.getLhs().getType();
  return success();
}

#define NN_BINARY_OP(OP)                                                       \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> loc, Adaptor adaptor,             \
      SmallVectorImpl<Type> &results) {                                        \
    return inferBinary<OP>(loc, adaptor, results);                             \
  }                                                                            \
  LogicalResult OP::verify() { return verifyBinary(*this); }                   \
  int64_t OP::getFlops(FlopConvention c, bool) {                               \
    return c == Conv::Full ? numel(getOutput()) : 0;                           \
  }

NN_BINARY_OP(AddOp)
NN_BINARY_OP(SubOp)
NN_BINARY_OP(MulOp)
NN_BINARY_OP(DivOp)
#undef NN_BINARY_OP

// add/sub hand the output gradient itself to an operand of the output's
// shape; a broadcast operand gets a reduced (new) tensor.
static bool sameShapeAsOutput(Value operand, Value output) {
  return tensorOf(operand).getShape() == tensorOf(output).getShape();
}

bool AddOp::isGradPassthrough(unsigned i) {
  return sameShapeAsOutput(getOperand(i), getOutput());
}
bool SubOp::isGradPassthrough(unsigned i) {
  return i == 0 && sameShapeAsOutput(getLhs(), getOutput());
}
bool MulOp::isGradPassthrough(unsigned) { return false; }
bool DivOp::isGradPassthrough(unsigned) { return false; }

void AddOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                            SmallVectorImpl<SavedTensor> &) {}
void SubOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                            SmallVectorImpl<SavedTensor> &) {}

void MulOp::getSavedTensors(const TorchTarget &, ArrayRef<bool> needs,
                            SmallVectorImpl<SavedTensor> &saved) {
  // d(a*b)/da = b, d(a*b)/db = a.
  if (needs[0])
    saved.push_back(SavedTensor::operand(1));
  if (needs[1])
    saved.push_back(SavedTensor::operand(0));
}

void DivOp::getSavedTensors(const TorchTarget &, ArrayRef<bool> needs,
                            SmallVectorImpl<SavedTensor> &saved) {
  // d(a/b)/da = 1/b; d(a/b)/db = -a/b^2.
  if (needs[1])
    saved.push_back(SavedTensor::operand(0));
  if (needs[0] || needs[1])
    saved.push_back(SavedTensor::operand(1));
}

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

LogicalResult MeanOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &results) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t rank = input.getRank();
  SmallVector<bool> reduced(rank, false);
  if (adaptor.getDims().empty())
    return emitOptionalError(loc, "dims must not be empty");
  for (int64_t d : adaptor.getDims()) {
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
    else if (adaptor.getKeepdim())
      shape.push_back(1);
  }
  results.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
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

//===----------------------------------------------------------------------===//
// Embedding, attention, concat
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  auto weight = cast<RankedTensorType>(adaptor.getWeight().getType());
  auto indices = cast<RankedTensorType>(adaptor.getIndices().getType());
  if (weight.getRank() != 2)
    return emitOptionalError(
        loc, "expects a 2-D weight [num_embeddings, dim], got rank ",
        weight.getRank());
  if (auto pad = adaptor.getPaddingIdx())
    if (int64_t p = *pad;
        p < -weight.getDimSize(0) || p >= weight.getDimSize(0))
      return emitOptionalError(loc, "padding_idx ", p, " is out of range");
  SmallVector<int64_t> shape(indices.getShape());
  shape.push_back(weight.getDimSize(1));
  results.push_back(RankedTensorType::get(shape, weight.getElementType()));
  return success();
}

int64_t EmbeddingOp::getFlops(FlopConvention, bool) { return 0; }

int64_t EmbeddingOp::getBackwardFlops(FlopConvention c, ArrayRef<bool>) {
  // Scatter-add of the output gradient into the weight gradient.
  return c == Conv::Full ? numel(getOutput()) : 0;
}

void EmbeddingOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                  SmallVectorImpl<SavedTensor> &saved) {
  saved.push_back(SavedTensor::operand(1));
}

LogicalResult ScaledDotProductAttentionOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  auto q = cast<RankedTensorType>(adaptor.getQuery().getType());
  auto k = cast<RankedTensorType>(adaptor.getKey().getType());
  auto v = cast<RankedTensorType>(adaptor.getValue().getType());
  if (q.getRank() < 2 || q.getRank() != k.getRank() ||
      q.getRank() != v.getRank())
    return emitOptionalError(
        loc, "query, key and value must have the same rank >= 2");
  if (q.getElementType() != k.getElementType() ||
      q.getElementType() != v.getElementType())
    return emitOptionalError(loc, "query, key and value element types differ");
  int64_t r = q.getRank();
  if (q.getShape().back() != k.getShape().back())
    return emitOptionalError(loc, "query and key head dims differ: ",
                             q.getShape().back(), " vs ", k.getShape().back());
  if (k.getDimSize(r - 2) != v.getDimSize(r - 2))
    return emitOptionalError(loc, "key and value sequence lengths differ: ",
                             k.getDimSize(r - 2), " vs ", v.getDimSize(r - 2));
  if (q.getShape().drop_back(2) != k.getShape().drop_back(2) ||
      q.getShape().drop_back(2) != v.getShape().drop_back(2))
    return emitOptionalError(loc, "batch/head dimensions differ");
  SmallVector<int64_t> shape(q.getShape());
  shape.back() = v.getShape().back();
  results.push_back(RankedTensorType::get(shape, q.getElementType()));
  return success();
}

LogicalResult ScaledDotProductAttentionOp::verify() {
  if (Value mask = getMask()) {
    // PyTorch: a bool mask or one of the query's dtype, broadcastable to the
    // scores [..., L, S], and never together with is_causal.
    if (getCausal())
      return emitOpError("takes a mask or causal, not both");
    auto q = tensorOf(getQuery()), m = tensorOf(mask);
    if (!m.getElementType().isInteger(1) &&
        m.getElementType() != q.getElementType())
      return emitOpError(
                 "mask element type must be i1 or the query element type ")
             << q.getElementType() << ", got " << m.getElementType();
    SmallVector<int64_t> scores(q.getShape());
    scores.back() = tensorOf(getKey()).getShape().drop_back().back();
    auto shape = broadcastShapes(m.getShape(), scores);
    if (failed(shape) || ArrayRef<int64_t>(*shape) != ArrayRef<int64_t>(scores))
      return emitOpError("mask ")
             << shapeStr(m.getShape())
             << " does not broadcast to the attention scores "
             << shapeStr(scores);
  }
  return success();
}

/// Multiply-adds of q k^T (L x S x E) and p v (L x S x Ev).
static int64_t attentionMacs(ScaledDotProductAttentionOp op, int64_t qkFactor,
                             int64_t vFactor) {
  auto q = tensorOf(op.getQuery()), k = tensorOf(op.getKey()),
       v = tensorOf(op.getValue());
  int64_t r = q.getRank();
  int64_t batch = 1;
  for (int64_t d : q.getShape().drop_back(2))
    batch = satMul(batch, d);
  int64_t l = q.getDimSize(r - 2), s = k.getDimSize(r - 2);
  return satMul(batch, l, s,
                satAdd(satMul(qkFactor, q.getDimSize(r - 1)),
                       satMul(vFactor, v.getDimSize(r - 1))));
}

int64_t ScaledDotProductAttentionOp::getFlops(FlopConvention c, bool) {
  // fvcore does not count attention.
  if (c == Conv::Macs)
    return 0;
  return fromMacs(c, attentionMacs(*this, 1, 1));
}

int64_t ScaledDotProductAttentionOp::getBackwardFlops(FlopConvention c,
                                                      ArrayRef<bool>) {
  if (c == Conv::Macs)
    return 0;
  return fromMacs(c, attentionMacs(*this, 3, 2));
}

void ScaledDotProductAttentionOp::getSavedTensors(
    const TorchTarget &, ArrayRef<bool>, SmallVectorImpl<SavedTensor> &saved) {
  auto q = tensorOf(getQuery()), k = tensorOf(getKey());
  int64_t r = q.getRank();
  if (getMask())
    saved.push_back(SavedTensor::operand(3));
  if (getBackend() == AttentionBackend::Math) {
    // _scaled_dot_product_attention_math scales q and k^T by sqrt(scale)
    // before the product (two new tensors), and keeps them, the attention
    // probabilities (L x S) and v.
    saved.push_back(SavedTensor::extra(q, "scaled_query"));
    saved.push_back(SavedTensor::extra(k, "scaled_key"));
    saved.push_back(SavedTensor::operand(2));
    SmallVector<int64_t> probs(q.getShape());
    probs.back() = k.getDimSize(r - 2);
    saved.push_back(SavedTensor::extra(
        RankedTensorType::get(probs, q.getElementType()), "attention_probs"));
    return;
  }
  // Fused kernels keep q, k, v, the output and a logsumexp per row.
  for (unsigned i = 0; i < 3; ++i)
    saved.push_back(SavedTensor::operand(i));
  saved.push_back(SavedTensor::result(0));
  saved.push_back(
      SavedTensor::extra(RankedTensorType::get(q.getShape().drop_back(),
                                               Float32Type::get(getContext())),
                         "logsumexp"));
}

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

int64_t ContiguousOp::getFlops(FlopConvention, bool) { return 0; }
bool ContiguousOp::isGradPassthrough(unsigned) { return true; }
void ContiguousOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                   SmallVectorImpl<SavedTensor> &) {
  // CloneBackward hands the gradient through.
}

LogicalResult MaskedFillOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &results) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  auto mask = cast<RankedTensorType>(adaptor.getMask().getType());
  if (!mask.getElementType().isInteger(1))
    return emitOptionalError(loc, "mask must be a tensor of i1, got ", mask);
  auto shape = broadcastShapes(input.getShape(), mask.getShape());
  if (failed(shape) || ArrayRef<int64_t>(*shape) != input.getShape())
    return emitOptionalError(loc, "mask ", shapeStr(mask.getShape()),
                             " does not broadcast to the input ",
                             shapeStr(input.getShape()));
  results.push_back(input);
  return success();
}

int64_t MaskedFillOp::getFlops(FlopConvention c, bool) {
  return c == Conv::Full ? numel(getOutput()) : 0;
}

int64_t MaskedFillOp::getBackwardFlops(FlopConvention c, ArrayRef<bool>) {
  return c == Conv::Full ? numel(getOutput()) : 0;
}

void MaskedFillOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                   SmallVectorImpl<SavedTensor> &saved) {
  // grad.masked_fill(mask, 0) needs only the mask.
  saved.push_back(SavedTensor::operand(1));
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

//===----------------------------------------------------------------------===//
// Casts
//===----------------------------------------------------------------------===//

LogicalResult CastOp::verify() {
  auto in = tensorOf(getInput()), out = tensorOf(getOutput());
  if (in.getShape() != out.getShape())
    return emitOpError("changes the shape from ")
           << shapeStr(in.getShape()) << " to " << shapeStr(out.getShape());
  if (in.getElementType() == out.getElementType())
    return emitOpError("casts to its own element type ") << in.getElementType();
  return success();
}

int64_t CastOp::getFlops(FlopConvention c, bool) {
  return c == Conv::Full ? numel(getInput()) : 0;
}

void CastOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                             SmallVectorImpl<SavedTensor> &) {
  // ToCopyBackward keeps only the input's dtype and device.
}

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

int64_t CrossEntropyOp::getBackwardWorkspaceBytes(const TorchTarget &,
                                                  ArrayRef<bool>) {
  // cross_entropy = log_softmax + nll_loss: nll_loss_backward returns a dense
  // gradient of the log-probabilities, live while log_softmax's backward
  // allocates the logits' gradient (measured, 1.13 CPU: three logits-sized
  // tensors at the step peak of a language model).
  return tensorBytes(getLogProbsType(*this));
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

//===----------------------------------------------------------------------===//
// Training-step ops
//===----------------------------------------------------------------------===//

LogicalResult BackwardOp::verify() {
  if (getGradOperands().size() != getNumResults())
    return emitOpError("grad_operands has ")
           << getGradOperands().size() << " entries for " << getNumResults()
           << " results";
  if (getParamGrads().size() != getNumResults())
    return emitOpError("param_grads has ")
           << getParamGrads().size() << " entries for " << getNumResults()
           << " results";
  if (getFlopCounts().size() != 3)
    return emitOpError("flop_counts needs 3 entries (macs, flops, full)");
  if (getSavedRoles().size() != getSaved().size())
    return emitOpError("saved_roles has ")
           << getSavedRoles().size() << " entries for " << getSaved().size()
           << " saved tensors";
  FunctionType forward = getForwardType();
  for (auto [value, role] : llvm::zip(getSaved(), getSavedRoles())) {
    auto r = cast<SavedRoleAttr>(role);
    if (r.getKind() == SavedKind::Extra)
      continue;
    TypeRange types = r.getKind() == SavedKind::Operand ? forward.getInputs()
                                                        : forward.getResults();
    if (r.getIndex() < 0 || r.getIndex() >= (int64_t)types.size())
      return emitOpError("saved role ")
             << r << " is out of range for forward type " << forward;
    if (types[r.getIndex()] != value.getType())
      return emitOpError("saved tensor of type ")
             << value.getType() << " does not match its role " << r << " ("
             << types[r.getIndex()] << ")";
  }
  for (int64_t i : getGradOperands())
    if (i < 0 || i >= (int64_t)forward.getNumInputs())
      return emitOpError("grad operand ")
             << i << " is out of range for forward type " << forward;
  return success();
}

int64_t BackwardOp::getWorkspaceBytes(const TorchTarget &) {
  return getWorkspaceBytesAttr().getInt();
}

int64_t BackwardOp::getFlops(FlopConvention c, bool) {
  return getFlopCounts()[static_cast<unsigned>(c)];
}

Value AccumulateGradOp::getAliasedOperand(unsigned) {
  return getInplace() ? getAccumulator() : Value();
}

int64_t AccumulateGradOp::getFlops(FlopConvention c, bool) {
  return c == Conv::Full ? numel(getResult()) : 0;
}

/// Persistent state tensors per parameter (torch.optim's `state[p]`).
static unsigned statesPerParam(OptimizerKind kind) {
  switch (kind) {
  case OptimizerKind::Sgd:
    return 0;
  case OptimizerKind::Momentum:
    return 1;
  case OptimizerKind::Adam:
  case OptimizerKind::AdamW:
    return 2;
  }
  llvm_unreachable("unknown optimizer");
}

LogicalResult OptimizerStepOp::verify() {
  unsigned statesPerParam = ::statesPerParam(getOptimizer());
  if (getParams().size() != getGrads().size())
    return emitOpError("needs one gradient per parameter");
  if (getState().size() != statesPerParam * getParams().size())
    return emitOpError("needs ")
           << statesPerParam << " state tensors per parameter";
  for (auto [p, g] : llvm::zip(getParams(), getGrads()))
    if (p.getType() != g.getType())
      return emitOpError("gradient type ")
             << g.getType() << " does not match parameter type " << p.getType();
  // State tensors come grouped by parameter: statesPerParam for each.
  for (auto [i, s] : llvm::enumerate(getState()))
    if (s.getType() != getParams()[i / statesPerParam].getType())
      return emitOpError("state type ")
             << s.getType() << " does not match parameter type "
             << getParams()[i / statesPerParam].getType();
  return success();
}

static int64_t totalElements(ValueRange values) {
  int64_t n = 0;
  for (Value v : values)
    n = satAdd(n, numel(v));
  return n;
}

int64_t OptimizerStepOp::getFlops(FlopConvention c, bool) {
  // Only `full` counts optimizer arithmetic: per element, SGD p -= lr*g (2),
  // momentum adds buf = mu*buf + g (2 more), Adam ~12 (two moment updates,
  // bias corrections, sqrt, division, update), weight decay 2 more.
  if (c != Conv::Full)
    return 0;
  int64_t perElement = getOptimizer() == OptimizerKind::Sgd        ? 2
                       : getOptimizer() == OptimizerKind::Momentum ? 4
                                                                   : 12;
  if (getWeightDecay().convertToDouble() != 0)
    perElement += 2;
  return satMul(perElement, totalElements(getParams()));
}

int64_t OptimizerStepOp::getWorkspaceBytes(const TorchTarget &target) {
  SmallVector<int64_t> sizes;
  getWorkspaceAllocations(target, sizes);
  int64_t bytes = 0;
  for (int64_t size : sizes)
    bytes = satAdd(bytes, size);
  return bytes;
}

void OptimizerStepOp::getWorkspaceAllocations(const TorchTarget &target,
                                              SmallVectorImpl<int64_t> &sizes) {
  OptimizerKind opt = getOptimizer();
  if (getImplementation() == OptimizerImpl::Fused)
    return;
  // One tensor per parameter in each list: the caching allocator rounds
  // each (torch._foreach_sqrt returns a list of tensors).
  auto addList = [&](ValueRange values) {
    for (Value v : values)
      sizes.push_back(tensorBytes(v));
  };
  // foreach Adam/AdamW materializes exp_avg_sq.sqrt() (and in 1.13 its
  // out-of-place + eps) for all params at once; the for-loop form does the
  // same one parameter at a time (one op per parameter here), one list.
  if (opt == OptimizerKind::Adam || opt == OptimizerKind::AdamW) {
    unsigned lists = getImplementation() == OptimizerImpl::Foreach
                         ? getForeachAdamTemporaryLists(target)
                         : 1;
    for (unsigned l = 0; l < lists; ++l)
      addList(getParams());
  }
  // Coupled weight decay (SGD, Adam) adds grad + wd * param as a new tensor.
  if (getWeightDecay().convertToDouble() != 0 && opt != OptimizerKind::AdamW)
    addList(getGrads());
}

//===----------------------------------------------------------------------===//
// Strided layout
//===----------------------------------------------------------------------===//

std::optional<SmallVector<int64_t>>
TransposeOp::getResultStrides(ArrayRef<int64_t> in) {
  SmallVector<int64_t> strides(in);
  int64_t r = strides.size();
  std::swap(strides[normalizeDim(getDim0(), r)],
            strides[normalizeDim(getDim1(), r)]);
  return strides;
}

std::optional<SmallVector<int64_t>>
PermuteOp::getResultStrides(ArrayRef<int64_t> in) {
  SmallVector<int64_t> strides;
  for (int64_t d : getDims())
    strides.push_back(in[normalizeDim(d, in.size())]);
  return strides;
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

std::optional<SmallVector<int64_t>>
FlattenOp::getResultStrides(ArrayRef<int64_t> in) {
  return reshapeStrides(getInput(), getResult(), in);
}
void FlattenOp::getOperandViews(SmallVectorImpl<OperandView> &views) {
  views.push_back({0, llvm::to_vector(tensorOf(getResult()).getShape())});
}

/// Elements of `dims`, saturated (a 0 dimension allows any others).
static int64_t product(ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    if (llvm::MulOverflow(p, d, p))
      return INT64_MAX;
  return p;
}

void LinearOp::getOperandViews(SmallVectorImpl<OperandView> &views) {
  // F.linear folds a >2-D input to [-1, in] for the matrix multiply.
  ArrayRef<int64_t> shape = tensorOf(getInput()).getShape();
  if (shape.size() > 2)
    views.push_back({0, {product(shape.drop_back()), shape.back()}});
}

void MatmulOp::getOperandViews(SmallVectorImpl<OperandView> &views) {
  // torch.matmul beyond bmm (rank > 3, or a batched lhs and a 2-D rhs)
  // reshapes its operands to 3-D (2-D) for bmm (mm).
  auto lt = tensorOf(getLhs()), rt = tensorOf(getRhs());
  int64_t lr = lt.getRank(), rr = rt.getRank();
  if (lr >= 3 && rr == 2) {
    views.push_back(
        {0, {product(lt.getShape().drop_back()), lt.getShape().back()}});
    return;
  }
  if (lr < 3 || rr < 3 || (lr == 3 && rr == 3))
    return;
  SmallVector<int64_t> batch;
  if (!OpTrait::util::getBroadcastedShape(lt.getShape().drop_back(2),
                                          rt.getShape().drop_back(2), batch))
    return;
  int64_t numBatches = product(batch);
  if (ArrayRef<int64_t>(batch) == lt.getShape().drop_back(2))
    views.push_back(
        {0, {numBatches, lt.getDimSize(lr - 2), lt.getDimSize(lr - 1)}});
  if (ArrayRef<int64_t>(batch) == rt.getShape().drop_back(2))
    views.push_back(
        {1, {numBatches, rt.getDimSize(rr - 2), rt.getDimSize(rr - 1)}});
}

//===----------------------------------------------------------------------===//
// Phases, persistent storage and effects
//===----------------------------------------------------------------------===//

StepPhase BackwardOp::getStepPhase() { return StepPhase::Backward; }
StepPhase AccumulateGradOp::getStepPhase() { return StepPhase::Backward; }
StepPhase OptimizerStepOp::getStepPhase() { return StepPhase::Optimizer; }

MemoryCategory ParamOp::getMemoryCategory() {
  return MemoryCategory::Parameters;
}
std::string ParamOp::getStorageName() { return getName().str(); }
MemoryCategory BufferOp::getMemoryCategory() { return MemoryCategory::Buffers; }
std::string BufferOp::getStorageName() { return getName().str(); }
MemoryCategory OptimizerStateOp::getMemoryCategory() {
  return MemoryCategory::OptimizerState;
}
std::string OptimizerStateOp::getStorageName() {
  std::string param = "?";
  if (auto owner = getParam().getDefiningOp<PersistentStorageOpInterface>())
    param = owner.getStorageName();
  return param + "." + stringifyEnum(getKind()).str();
}

void vram::nn::getInplaceEffects(
    bool inplace,
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  if (inplace)
    effects.emplace_back(MemoryEffects::Write::get());
}

#define DEFINE_INPLACE_EFFECTS(OpTy)                                           \
  void OpTy::getEffects(                                                       \
      SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>      \
          &effects) {                                                          \
    getInplaceEffects(getInplace(), effects);                                  \
  }
DEFINE_INPLACE_EFFECTS(AddOp)
DEFINE_INPLACE_EFFECTS(SubOp)
DEFINE_INPLACE_EFFECTS(MulOp)
DEFINE_INPLACE_EFFECTS(DivOp)
#undef DEFINE_INPLACE_EFFECTS

void DropoutOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  // Drawing the mask advances the generator's state.
  effects.emplace_back(MemoryEffects::Read::get(),
                       RandomGeneratorResource::get());
  effects.emplace_back(MemoryEffects::Write::get(),
                       RandomGeneratorResource::get());
  getInplaceEffects(getInplace(), effects);
}

//===----------------------------------------------------------------------===//
// Erf, Clamp (the ONNX importer's 1:1 forms of Erf and Clip)
//===----------------------------------------------------------------------===//

// One FLOP per element under `full`, like the other activations.
int64_t ErfOp::getFlops(FlopConvention c, bool) {
  return c == Conv::Full ? numel(getInput()) : 0;
}

void ErfOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                            SmallVectorImpl<SavedTensor> &saved) {
  // derivatives.yaml: erf: 2.0 / sqrt(M_PI) * exp(-(self.pow(2))) * grad.
  saved.push_back(SavedTensor::operand(0));
}

int64_t ClampOp::getFlops(FlopConvention c, bool) {
  return c == Conv::Full ? numel(getInput()) : 0;
}

void ClampOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                              SmallVectorImpl<SavedTensor> &saved) {
  // derivatives.yaml: clamp: clamp_backward(grad, self, min, max).
  saved.push_back(SavedTensor::operand(0));
}

LogicalResult ClampOp::verify() {
  std::optional<llvm::APFloat> lo = getMin(), hi = getMax();
  if (!lo && !hi)
    return emitOpError("needs a min or a max bound");
  if (lo && hi && lo->convertToDouble() > hi->convertToDouble())
    return emitOpError("min ")
           << lo->convertToDouble() << " is greater than max "
           << hi->convertToDouble();
  return success();
}

#define GET_OP_CLASSES
#include "vram/Dialect/NN/NNOps.cpp.inc"

LogicalResult vram::nn::verifyUniqueTensorNames(Operation *func) {
  llvm::StringMap<Operation *> first;
  WalkResult walk = func->walk([&](Operation *op) {
    StringRef name;
    if (auto param = dyn_cast<ParamOp>(op))
      name = param.getName();
    else if (auto buffer = dyn_cast<BufferOp>(op))
      name = buffer.getName();
    else
      return WalkResult::advance();
    auto [it, inserted] = first.try_emplace(name, op);
    if (inserted)
      return WalkResult::advance();
    InFlightDiagnostic diag =
        op->emitError() << "duplicate tensor name '" << name
                        << "': every parameter and buffer needs a name of its "
                           "own";
    diag.attachNote(it->second->getLoc()) << "first defined here";
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}
