//===- NNOpsLinearAlgebra.cpp - conv2d, linear, matmul, bmm ---------------===//
//
// The cuBLAS/cuDNN ops: shapes, multiply-add FLOPs, the operands autograd
// keeps, convolution workspaces and the views linear and matmul take of
// their operands.
//
//===----------------------------------------------------------------------===//

#include "NNOpsDetail.h"

#include "vram/Dialect/NN/NNOps.h"
#include "vram/Dialect/NN/TorchSemantics.h"
#include "vram/Support/CheckedMath.h"

#include "mlir/Dialect/Traits.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace vram::nn;
using namespace vram::nn::detail;

//===----------------------------------------------------------------------===//
// nn.conv2d
//===----------------------------------------------------------------------===//

/// The checks conv2d and conv_transpose2d share: 4-D input and weight (laid
/// out as `weightLayout`) of one element type, and pairs of strides, padding
/// and dilation.
template <typename Adaptor>
static LogicalResult
checkConvOperands(std::optional<Location> loc, RankedTensorType input,
                  RankedTensorType weight, StringRef weightLayout,
                  Adaptor adaptor) {
  if (input.getRank() != 4)
    return emitOptionalError(loc, "expects a 4-D NCHW input, got rank ",
                             input.getRank());
  if (weight.getRank() != 4)
    return emitOptionalError(loc, "expects a 4-D weight ", weightLayout,
                             ", got rank ", weight.getRank());
  if (input.getElementType() != weight.getElementType())
    return emitOptionalError(loc, "input element type ", input.getElementType(),
                             " does not match weight element type ",
                             weight.getElementType());
  if (failed(checkPair(loc, "strides", adaptor.getStrides(), 1)) ||
      failed(checkPair(loc, "padding", adaptor.getPadding(), 0)) ||
      failed(checkPair(loc, "dilation", adaptor.getDilation(), 1)))
    return failure();
  return success();
}

LogicalResult Conv2dOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  auto weight = cast<RankedTensorType>(adaptor.getWeight().getType());
  if (failed(checkConvOperands(loc, input, weight, "[Cout, Cin/groups, kh, kw]",
                               adaptor)))
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

void Conv2dOp::getBackwardWorkspace(const TorchTarget &target,
                                    ArrayRef<bool> needs,
                                    SmallVectorImpl<int64_t> &sizes) {
  sizes.push_back(getConvBackwardWorkspaceBytes(target, convSizes(*this),
                                                needs[0], needs[1]));
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
// nn.conv_transpose2d
//===----------------------------------------------------------------------===//

LogicalResult
ConvTranspose2dOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                    Adaptor adaptor,
                                    SmallVectorImpl<Type> &results) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  auto weight = cast<RankedTensorType>(adaptor.getWeight().getType());
  if (failed(checkConvOperands(loc, input, weight, "[Cin, Cout/groups, kh, kw]",
                               adaptor)) ||
      failed(checkPair(loc, "output_padding", adaptor.getOutputPadding(), 0)))
    return failure();
  int64_t groups = adaptor.getGroups();
  int64_t cin = input.getDimSize(1);
  if (groups < 1 || weight.getDimSize(0) != cin || cin % groups)
    return emitOptionalError(loc, "weight [", weight.getDimSize(0),
                             ", ...] must have the input's ", cin,
                             " channels, divisible by groups (", groups, ")");
  int64_t cout = satMul(weight.getDimSize(1), groups);
  if (cout == INT64_MAX)
    return emitOptionalError(loc, "output channels overflow");
  if (Value bias = adaptor.getBias()) {
    auto b = cast<RankedTensorType>(bias.getType());
    if (b.getRank() != 1 || b.getDimSize(0) != cout)
      return emitOptionalError(loc, "bias must be [", cout, "], got ",
                               shapeStr(b.getShape()));
  }
  SmallVector<int64_t> shape = {input.getDimSize(0), cout};
  for (int i = 0; i < 2; ++i) {
    int64_t stride = adaptor.getStrides()[i], pad = adaptor.getPadding()[i],
            outPad = adaptor.getOutputPadding()[i],
            dilation = adaptor.getDilation()[i];
    if (outPad >= stride && outPad >= dilation)
      return emitOptionalError(loc, "output_padding must be smaller than the "
                                    "stride or the dilation");
    // (H - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1
    int64_t in = input.getDimSize(2 + i), k = weight.getDimSize(2 + i);
    int64_t grown =
        in < 1 || k < 1
            ? INT64_MAX
            : satAdd(satAdd(satMul(in - 1, stride), satMul(dilation, k - 1)),
                     outPad + 1);
    int64_t out = grown == INT64_MAX ? -1 : grown - satMul(2, pad);
    if (out < 1)
      return emitOptionalError(loc,
                               "the output would be empty or overflow "
                               "(spatial dim ",
                               i, ")");
    shape.push_back(out);
  }
  results.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

/// Each input element meets Cout/groups x kh x kw weights.
static int64_t convTransposeMacs(ConvTranspose2dOp op) {
  auto in = tensorOf(op.getInput());
  return satMul(in.getDimSize(0), numel(op.getWeight()), in.getDimSize(2),
                in.getDimSize(3));
}

int64_t ConvTranspose2dOp::getFlops(FlopConvention c, bool) {
  return affineFlops(c, convTransposeMacs(*this), static_cast<bool>(getBias()),
                     getOutput());
}

int64_t ConvTranspose2dOp::getBackwardFlops(FlopConvention c,
                                            ArrayRef<bool> needs) {
  return affineBackwardFlops(c, convTransposeMacs(*this), needs,
                             static_cast<bool>(getBias()), getOutput());
}

void ConvTranspose2dOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                        SmallVectorImpl<SavedTensor> &saved) {
  // convolution_backward (transposed) needs input and weight.
  saved.push_back(SavedTensor::operand(0));
  saved.push_back(SavedTensor::operand(1));
}

//===----------------------------------------------------------------------===//
// nn.linear / nn.matmul / nn.bmm
//===----------------------------------------------------------------------===//

/// Elements of `dims`, saturated (a 0 dimension allows any others).
static int64_t product(ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    if (llvm::MulOverflow(p, d, p))
      return INT64_MAX;
  return p;
}

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

bool LinearOp::isGradView(unsigned index) {
  // F.linear multiplies by weight.t() (TBackward hands back `grad.t()`), and
  // folds an input that is not 2-D to [-1, in] (a view, or matmul's
  // unsqueeze for a vector), whose backward reshapes the gradient back:
  // measured, torch 2.15 adds the first two such gradients out of place.
  if (index == 1)
    return true;
  return index == 0 && tensorOf(getInput()).getRank() != 2;
}

void LinearOp::getOperandViews(SmallVectorImpl<OperandView> &views) {
  // F.linear folds a >2-D input to [-1, in] for the matrix multiply.
  ArrayRef<int64_t> shape = tensorOf(getInput()).getShape();
  if (shape.size() > 2)
    views.push_back({0, {product(shape.drop_back()), shape.back()}});
}

//===----------------------------------------------------------------------===//
// nn.linear_4bit
//===----------------------------------------------------------------------===//

QuantizedWeightOp Linear4bitOp::getQuantizedWeight() {
  return getWeight().getDefiningOp<QuantizedWeightOp>();
}

/// A bitsandbytes layer's result over a quantized weight of logical shape
/// [out, in]: the input's leading dimensions and `out`, in the input's
/// dtype (which a bias must share).
static LogicalResult inferQuantizedLinearType(std::optional<Location> loc,
                                              RankedTensorType input,
                                              QuantizedWeightOp weight,
                                              Value bias,
                                              SmallVectorImpl<Type> &results) {
  int64_t out = weight.getShape()[0], in = weight.getShape()[1];
  if (input.getRank() < 1 || input.getShape().back() != in)
    return emitOptionalError(loc, "input ", shapeStr(input.getShape()),
                             " does not end in the weight's in_features (", in,
                             ")");
  if (bias) {
    auto b = cast<RankedTensorType>(bias.getType());
    if (b.getRank() != 1 || b.getDimSize(0) != out ||
        b.getElementType() != input.getElementType())
      return emitOptionalError(loc, "bias must be [", out, "] of the input's ",
                               input.getElementType(), ", got ", b);
  }
  SmallVector<int64_t> shape(input.getShape());
  shape.back() = out;
  results.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult Linear4bitOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &results) {
  auto weight = adaptor.getWeight().getDefiningOp<QuantizedWeightOp>();
  if (!weight || weight.getShape().size() != 2)
    return emitOptionalError(loc, "weight must be the packed 4-bit weight of "
                                  "an nn.quantized_weight");
  return inferQuantizedLinearType(
      loc, cast<RankedTensorType>(adaptor.getInput().getType()), weight,
      adaptor.getBias(), results);
}

LogicalResult Linear4bitOp::verify() {
  auto result = dyn_cast<OpResult>(getWeight());
  if (!result || !isa<QuantizedWeightOp>(result.getOwner()))
    return emitOpError("weight must be the packed 4-bit weight of an "
                       "nn.quantized_weight");
  if (result.getResultNumber() != 0)
    return emitOpError("weight must be the packed result (#0) of its "
                       "nn.quantized_weight, not its quantization state");
  return success();
}

/// A bitsandbytes layer counts its linear's FLOPs, whatever the weight's
/// storage.
template <typename OpTy>
static int64_t quantizedLinearFlops(OpTy op, FlopConvention c) {
  int64_t macs =
      satMul(numel(op.getInput()), tensorOf(op.getOutput()).getShape().back());
  return affineFlops(c, macs, static_cast<bool>(op.getBias()), op.getOutput());
}

/// Its frozen weight gets no gradient: grad_A only (and the bias's sum).
template <typename OpTy>
static int64_t quantizedLinearBackwardFlops(OpTy op, FlopConvention c,
                                            ArrayRef<bool> needs) {
  int64_t macs =
      satMul(numel(op.getInput()), tensorOf(op.getOutput()).getShape().back());
  SmallVector<bool> inputOnly(needs);
  inputOnly[1] = false;
  return affineBackwardFlops(c, macs, inputOnly,
                             static_cast<bool>(op.getBias()), op.getOutput());
}

int64_t Linear4bitOp::getFlops(FlopConvention c, bool) {
  return quantizedLinearFlops(*this, c);
}

int64_t Linear4bitOp::getBackwardFlops(FlopConvention c, ArrayRef<bool> needs) {
  return quantizedLinearBackwardFlops(*this, c, needs);
}

bool Linear4bitOp::isDifferentiableOperand(unsigned index) {
  return index != 1;
}

void Linear4bitOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                   SmallVectorImpl<SavedTensor> &) {
  // MatMul4Bit keeps the packed weight (a parameter) in ctx.tensors and
  // dequantizes it again in backward; grad_A needs nothing else.
}

static int64_t elementBytes(Type type) {
  return llvm::divideCeil(type.getIntOrFloatBitWidth(), 8);
}

void Linear4bitOp::getWorkspaceAllocations(const TorchTarget &target,
                                           SmallVectorImpl<int64_t> &sizes) {
  QuantizedWeightOp weight = getQuantizedWeight();
  QuantizationAttr config = weight.getConfig();
  int64_t in = weight.getShape()[1];
  int64_t rows = numel(getInput()) / in;
  if (!gemm4bitDequantizes(target, rows, in, config.getBlocksize()))
    return;
  // gemm_4bit's fallback: the float32 absmax of a double-quantized weight,
  // then the weight dequantized into the input's dtype for F.linear.
  int64_t elements = weight.getNumElements();
  int64_t blocks = llvm::divideCeil(elements, config.getBlocksize());
  if (config.getDoubleQuant())
    for (int64_t i = 0, e = getGemm4bitNestedAbsmaxCopies(target); i < e; ++i)
      sizes.push_back(satMul(blocks, 4));
  sizes.push_back(
      satMul(elements, elementBytes(tensorOf(getInput()).getElementType())));
}

int64_t Linear4bitOp::getWorkspaceBytes(const TorchTarget &target) {
  return sumWorkspaceAllocations(*this, target);
}

void Linear4bitOp::getBackwardWorkspace(const TorchTarget &,
                                        ArrayRef<bool> needs,
                                        SmallVectorImpl<int64_t> &sizes) {
  if (!needs[0])
    return;
  // MatMul4Bit.backward: matmul(grad_output, F.dequantize_4bit(B, state)
  // .to(grad_output.dtype)): the weight in the gradient's dtype is alive
  // with grad_A. Before it, dequantize_4bit's float32 absmax (double
  // quantization) and, when the weight was quantized from another dtype,
  // its copy in that dtype are freed as each call returns (measured on
  // the CPU: benchmarks/accuracy/qlora.py); they are not counted.
  QuantizedWeightOp weight = getQuantizedWeight();
  Type gradType = tensorOf(getOutput()).getElementType();
  sizes.push_back(satMul(weight.getNumElements(), elementBytes(gradType)));
}

void Linear4bitOp::getOperandViews(SmallVectorImpl<OperandView> &views) {
  // F.linear (the dequantize path) folds a >2-D input to [-1, in].
  ArrayRef<int64_t> shape = tensorOf(getInput()).getShape();
  if (shape.size() > 2)
    views.push_back({0, {product(shape.drop_back()), shape.back()}});
}

//===----------------------------------------------------------------------===//
// nn.linear_8bit
//===----------------------------------------------------------------------===//

QuantizedWeightOp Linear8bitOp::getQuantizedWeight() {
  return getWeight().getDefiningOp<QuantizedWeightOp>();
}

LogicalResult Linear8bitOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &results) {
  auto weight = adaptor.getWeight().getDefiningOp<QuantizedWeightOp>();
  if (!weight || !weight.getConfig().isInt8())
    return emitOptionalError(loc, "weight must be the int8 weight (CB) of an "
                                  "nn.quantized_weight with an int8 config");
  return inferQuantizedLinearType(
      loc, cast<RankedTensorType>(adaptor.getInput().getType()), weight,
      adaptor.getBias(), results);
}

LogicalResult Linear8bitOp::verify() {
  auto result = dyn_cast<OpResult>(getWeight());
  if (!result || !isa<QuantizedWeightOp>(result.getOwner()))
    return emitOpError("weight must be the int8 weight of an "
                       "nn.quantized_weight");
  if (result.getResultNumber() != 0)
    return emitOpError("weight must be the int8 weight (#0, CB) of its "
                       "nn.quantized_weight, not its row scales");
  return success();
}

int64_t Linear8bitOp::getFlops(FlopConvention c, bool) {
  return quantizedLinearFlops(*this, c);
}

int64_t Linear8bitOp::getBackwardFlops(FlopConvention c, ArrayRef<bool> needs) {
  return quantizedLinearBackwardFlops(*this, c, needs);
}

bool Linear8bitOp::isDifferentiableOperand(unsigned index) {
  return index != 1;
}

/// Linear8bitLt.forward sets state.is_training from module.training: the
/// layer trains in a training step (nn.mode = train on its function).
static bool inTrainingStep(Operation *op) {
  auto func = op->getParentOfType<FunctionOpInterface>();
  auto mode = func ? func->getAttrOfType<StepModeAttr>(NNDialect::kModeAttrName)
                   : StepModeAttr();
  return mode && mode.getValue() == StepMode::Train;
}

namespace {
/// The sizes an int8 layer's forward works with.
struct Int8Shapes {
  int64_t rows, in, out, elementBytes;
  bool f16;
  int64_t outlierCols;
  bool threshold;
};
} // namespace

static Int8Shapes getInt8Shapes(Linear8bitOp op) {
  QuantizedWeightOp weight = op.getQuantizedWeight();
  QuantizationAttr config = weight.getConfig();
  Int8Shapes s;
  s.in = weight.getShape()[1];
  s.out = weight.getShape()[0];
  s.rows = numel(op.getInput()) / s.in;
  Type dtype = tensorOf(op.getInput()).getElementType();
  s.elementBytes = elementBytes(dtype);
  s.f16 = dtype.isF16();
  s.threshold = !config.getThreshold().isZero();
  s.outlierCols = s.threshold ? config.getOutlierCols() : 0;
  return s;
}

void Linear8bitOp::getSavedTensors(const TorchTarget &target,
                                   ArrayRef<bool> needs,
                                   SmallVectorImpl<SavedTensor> &saved) {
  // Both autograd functions keep the input on ctx (ctx.A, ctx.tensors) for
  // as long as the node lives; MatMul8bitLt also `subA`, the input's
  // outlier columns (with no outlier an empty tensor). The frozen weight's
  // state is a parameter.
  if (!llvm::any_of(needs, [](bool b) { return b; }))
    return;
  saved.push_back(SavedTensor::operand(0));
  Int8Shapes s = getInt8Shapes(*this);
  if (getInt8Matmul(target, inTrainingStep(*this)) == Int8Matmul::Int8Product &&
      s.outlierCols > 0)
    saved.push_back(SavedTensor::extra(
        RankedTensorType::get({s.rows, s.outlierCols},
                              tensorOf(getInput()).getElementType()),
        "subA"));
}

/// CB.to(A.dtype).mul_(SCB.unsqueeze(1).mul(1 / 127)), as both autograd
/// functions dequantize the weight: the weight in the input's dtype (first
/// in `sizes`) and the float32 [out, 1] scales; on the CPU the in-place
/// product of a 16-bit weight and float32 scales computes in float32
/// through a copy of the weight and a result that is copied back (the
/// CPU's mixed-dtype binary op; measured, benchmarks/accuracy/int8.py),
/// where CUDA casts as it loads.
static void getInt8DequantizeMoment(const TorchTarget &target,
                                    const Int8Shapes &s,
                                    SmallVectorImpl<int64_t> &sizes) {
  int64_t elements = satMul(s.out, s.in);
  sizes.push_back(satMul(elements, s.elementBytes));
  sizes.push_back(satMul(s.out, 4));
  if (target.device == Device::Cpu && s.elementBytes != 4) {
    sizes.push_back(satMul(elements, 4));
    sizes.push_back(satMul(elements, 4));
  }
}

/// An int8 layer's temporaries at its fullest moment, forward or backward.
/// Each moment lists the tensors alive then; `withOutput` says the op's
/// result (the node's grad_A in backward) is allocated too. The analysis
/// counts that result beside the workspace, so a moment with it returns its
/// other tensors, and a moment before it exists its excess over the result
/// as one size.
namespace {
struct Int8Moments {
  int64_t outputBytes;
  int64_t bestPeak;
  SmallVector<int64_t> best;

  explicit Int8Moments(int64_t outputBytes)
      : outputBytes(outputBytes), bestPeak(outputBytes) {}

  void add(ArrayRef<int64_t> alive, bool withOutput) {
    int64_t peak = satAdd(sumAllocations(alive), withOutput ? outputBytes : 0);
    if (peak <= bestPeak)
      return;
    bestPeak = peak;
    if (withOutput)
      best.assign(alive.begin(), alive.end());
    else
      best = {peak - outputBytes};
  }
};
} // namespace

void Linear8bitOp::getWorkspaceAllocations(const TorchTarget &target,
                                           SmallVectorImpl<int64_t> &sizes) {
  Int8Shapes s = getInt8Shapes(*this);
  int64_t d = s.elementBytes, k = s.outlierCols;
  int64_t inputElems = satMul(s.rows, s.in);
  int64_t outputElems = satMul(s.rows, s.out);
  Int8Moments moments(satMul(outputElems, d));
  if (getInt8Matmul(target, inTrainingStep(*this)) == Int8Matmul::Dequantize) {
    // MatMul8bitFp: the weight dequantized (below), then F.linear.
    SmallVector<int64_t> dequantizing;
    getInt8DequantizeMoment(target, s, dequantizing);
    moments.add(dequantizing, /*withOutput=*/false);
    moments.add({dequantizing.front()}, /*withOutput=*/true);
    llvm::append_range(sizes, moments.best);
    return;
  }
  // MatMul8bitLt. F.int8_vectorwise_quant(A.to(float16), threshold): CA
  // (int8, as the input) and SCA (a float32 per row) stay bound in the
  // forward until it returns; the float16 copy dies with the call.
  int64_t half = s.f16 ? 0 : satMul(inputElems, 2);
  int64_t ca = inputElems, sca = satMul(s.rows, 4);
  // int8_mixed_scaled_mm with outlier columns: subA = A[:, cols] in the
  // input's dtype, subB the weight's columns dequantized into it.
  int64_t subA = satMul(satMul(s.rows, k), d);
  int64_t subB = satMul(satMul(s.out, k), d);
  int64_t int32 = satMul(outputElems, 4);
  int64_t mmOut = satMul(outputElems, d);
  if (target.device == Device::Cuda) {
    // backends/cuda/ops.py: row_stats and out_row first, then A.abs() >=
    // threshold (a float16 and a bool tensor as the input) for the outlier
    // columns, then the kernel.
    if (s.threshold)
      moments.add({half, sca, ca, satMul(inputElems, 2), inputElems},
                  /*withOutput=*/false);
    else
      moments.add({half, sca, ca}, /*withOutput=*/false);
    // int8_scaled_mm: the int32 product, int8_mm_dequant's float16 result,
    // then .to(A.dtype) (the same tensor for a float16 input).
    int64_t f16Out = satMul(outputElems, 2);
    if (k == 0) {
      if (s.f16)
        moments.add({ca, sca, int32}, /*withOutput=*/true);
      else
        moments.add({ca, sca, int32, f16Out}, /*withOutput=*/true);
    } else {
      moments.add({ca, sca, subA, subB, int32, f16Out, s.f16 ? 0 : mmOut},
                  /*withOutput=*/false);
      // output.addmm(subA, subB): a new tensor.
      moments.add({ca, sca, subA, subB, mmOut}, /*withOutput=*/true);
    }
  } else {
    // backends/default/ops.py (torch._int_mm for the product on AVX-512
    // CPUs). Quantizing: the outlier mask (bool) stays bound; A * (127 /
    // row_stats) computes in float32, which copies the float16 input
    // first (the CPU's mixed-dtype binary op).
    moments.add({half, s.threshold ? inputElems : 0, sca, sca,
                 satMul(inputElems, 4), satMul(inputElems, 4)},
                /*withOutput=*/false);
    // int8_mm_dequant: A * (row_stats * col_stats) * 6.2e-05: the outer
    // product of the scales, the int32 product's float32 copy and their
    // product, all float32, beside the int32 product.
    int64_t f32Out = satMul(outputElems, 4);
    moments.add({ca, sca, subA, subB, int32, f32Out, f32Out, f32Out},
                /*withOutput=*/false);
    if (k > 0)
      moments.add({ca, sca, subA, subB, mmOut}, /*withOutput=*/true);
  }
  llvm::append_range(sizes, moments.best);
}

int64_t Linear8bitOp::getWorkspaceBytes(const TorchTarget &target) {
  return sumWorkspaceAllocations(*this, target);
}

void Linear8bitOp::getBackwardWorkspace(const TorchTarget &target,
                                        ArrayRef<bool> needs,
                                        SmallVectorImpl<int64_t> &sizes) {
  if (!needs[0])
    return;
  // Both backwards: CB.to(dtype_A, copy=True).mul_(scales), then
  // matmul(grad_output, CB): the dequantized weight is alive with grad_A,
  // which the node's gradients count; dequantizing comes before it.
  Int8Shapes s = getInt8Shapes(*this);
  Int8Moments moments(satMul(numel(getInput()), s.elementBytes));
  SmallVector<int64_t> dequantizing;
  getInt8DequantizeMoment(target, s, dequantizing);
  moments.add(dequantizing, /*withOutput=*/false);
  moments.add({dequantizing.front()}, /*withOutput=*/true);
  llvm::append_range(sizes, moments.best);
}

void Linear8bitOp::getOperandViews(SmallVectorImpl<OperandView> &views) {
  // MatMul8bitLt reshapes a 3-D input to [-1, in] (F.linear too).
  ArrayRef<int64_t> shape = tensorOf(getInput()).getShape();
  if (shape.size() > 2)
    views.push_back({0, {product(shape.drop_back()), shape.back()}});
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

bool MatmulOp::isGradView(unsigned index) {
  // torch.matmul folds (reshape) or expands an operand that is not 2-D for
  // mm / bmm, and its backward reshapes the gradient back: a view, unless
  // the operand's batch dimensions were broadcast, whose ExpandBackward
  // sums into a new tensor (measured, grad_sums.py).
  auto self = tensorOf(getOperand(index));
  if (self.getRank() == 2)
    return false;
  if (self.getRank() < 2)
    return true;
  return self.getShape().drop_back(2) ==
         tensorOf(getOutput()).getShape().drop_back(2);
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
// nn.grouped_mm
//===----------------------------------------------------------------------===//

LogicalResult GroupedMmOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  auto weight = cast<RankedTensorType>(adaptor.getWeight().getType());
  auto offsets = cast<RankedTensorType>(adaptor.getOffsets().getType());
  if (input.getRank() != 2)
    return emitOptionalError(loc, "expects a 2-D input [rows, in], got ",
                             input);
  if (weight.getRank() != 3)
    return emitOptionalError(
        loc, "expects a 3-D weight [groups, out, in], got ", weight);
  if (input.getElementType() != weight.getElementType())
    return emitOptionalError(loc, "input element type ", input.getElementType(),
                             " does not match weight element type ",
                             weight.getElementType());
  if (weight.getDimSize(2) != input.getDimSize(1))
    return emitOptionalError(loc, "input features (", input.getDimSize(1),
                             ") do not match the weight's (",
                             weight.getDimSize(2), ")");
  if (offsets.getRank() != 1 || offsets.getDimSize(0) != weight.getDimSize(0) ||
      !offsets.getElementType().isInteger(32))
    return emitOptionalError(loc, "expects int32 offsets, one per group (",
                             weight.getDimSize(0), "), got ", offsets);
  results.push_back(RankedTensorType::get(
      {input.getDimSize(0), weight.getDimSize(1)}, input.getElementType()));
  return success();
}

/// Each row meets one group's weight: one [S, in] x [in, out] product.
/// (torch 2.15's flop_counter has no grouped_mm rule and counts nothing;
/// docs/Flops.md counts the product it is.)
static int64_t groupedMmMacs(GroupedMmOp op) {
  return satMul(numel(op.getInput()), tensorOf(op.getWeight()).getDimSize(1));
}

int64_t GroupedMmOp::getFlops(FlopConvention c, bool) {
  return fromMacs(c, groupedMmMacs(*this));
}

int64_t GroupedMmOp::getBackwardFlops(FlopConvention c, ArrayRef<bool> needs) {
  return affineBackwardFlops(c, groupedMmMacs(*this), needs, /*bias=*/false,
                             getOutput());
}

void GroupedMmOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                  SmallVectorImpl<SavedTensor> &saved) {
  // derivatives.yaml: "self, mat2: _grouped_mm_backward(grad, self, mat2,
  // offs, ...)", one formula for both, so it keeps all three whichever
  // needs a gradient.
  for (unsigned i = 0; i < 3; ++i)
    saved.push_back(SavedTensor::operand(i));
}
