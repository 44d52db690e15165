//===- Elementwise.cpp - elementwise and activation converters ------------===//
//
// One nn op per node. Whether an op runs in place (nn.ReLU(inplace=True)) is
// not in the ONNX graph; the vram-onnx-infer-inplace pass decides it. The
// decompositions torch.onnx emits for GELU, SiLU, HardSwish and ReLU6 are
// raised back by the vram-onnx-raise pass.
//
//===----------------------------------------------------------------------===//

#include "ConverterTable.h"
#include "Importer.h"

#include <cmath>

using namespace mlir;
using namespace vram::onnx_import;
namespace nn = vram::nn;
using llvm::SmallVector;
using llvm::StringRef;

/// Both operands of a binary op; a constant operand takes the element type
/// of the other one.
static LogicalResult binaryOperands(OpBinder &op, Value &lhs, Value &rhs) {
  if (!op.hasInput(0) || !op.hasInput(1))
    return op.error() << "expects two inputs";
  const ConstTensor *c0 = op.constInput(0), *c1 = op.constInput(1);
  auto elemType = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getElementType();
  };
  if (c0 && !c1) {
    auto r = op.tensor(1);
    if (failed(r))
      return failure();
    auto l = op.tensor(0, elemType(*r));
    if (failed(l))
      return failure();
    lhs = *l;
    rhs = *r;
  } else {
    auto l = op.tensor(0);
    if (failed(l))
      return failure();
    auto r = op.tensor(1, elemType(*l));
    if (failed(r))
      return failure();
    lhs = *l;
    rhs = *r;
  }
  if (!isFloatTensor(lhs) || !isFloatTensor(rhs))
    return op.error() << "arithmetic on integer tensors is only supported "
                         "when it folds to a constant";
  return success();
}

template <typename OpTy> static LogicalResult convertBinary(OpBinder &op) {
  Value lhs, rhs;
  if (failed(binaryOperands(op, lhs, rhs)))
    return failure();
  return op.makeResult<OpTy>(lhs, rhs, /*inplace=*/false);
}

/// The float activation input of a unary op.
static FailureOr<Value> floatInput(OpBinder &op) {
  auto x = op.tensor(0);
  if (failed(x))
    return failure();
  if (!isFloatTensor(*x))
    return op.error() << "expects a floating-point tensor, got "
                      << x->getType();
  return x;
}

/// A unary op `OpTy(input, extra...)` of the same type as its input.
template <typename OpTy, typename... Extra>
static ConverterFn unary(Extra... extra) {
  return [=](OpBinder &op) -> LogicalResult {
    auto x = floatInput(op);
    if (failed(x))
      return failure();
    op.setResult(
        0, OpTy::create(op.builder(), op.loc, x->getType(), *x, extra...));
    return success();
  };
}

static LogicalResult convertHardSigmoid(OpBinder &op) {
  auto x = floatInput(op);
  if (failed(x))
    return failure();
  double alpha = op.floatAttr("alpha", 0.2), beta = op.floatAttr("beta", 0.5);
  if (std::fabs(alpha - 1.0 / 6) > 1e-4 || std::fabs(beta - 0.5) > 1e-6)
    return op.error() << "only alpha=1/6, beta=0.5 (torch.nn.Hardsigmoid) "
                         "is supported, got alpha="
                      << alpha << " beta=" << beta;
  op.setResult(0, nn::HardsigmoidOp::create(op.builder(), op.loc, x->getType(),
                                            *x, false));
  return success();
}

/// LeakyRelu (alpha: the negative slope, 0.01 by default).
static LogicalResult convertLeakyRelu(OpBinder &op) {
  auto x = floatInput(op);
  if (failed(x))
    return failure();
  OpBuilder &b = op.builder();
  op.setResult(
      0, nn::LeakyReluOp::create(b, op.loc, x->getType(), *x,
                                 b.getF64FloatAttr(op.floatAttr("alpha", 0.01)),
                                 UnitAttr()));
  return success();
}

/// PRelu(X, slope): the slope broadcasts to X from the right, which
/// torch.onnx makes channel-wise by exporting nn.PReLU's [C] weight as
/// [C, 1, 1] for an image (an initializer, hence a parameter). Any slope
/// that varies along dimension 1 only (or not at all) is nn.prelu's weight
/// viewed as [C] (or [1]); one that varies along another dimension is not
/// a PReLU.
static LogicalResult convertPRelu(OpBinder &op) {
  auto x = floatInput(op);
  if (failed(x))
    return failure();
  auto slope =
      op.tensor(1, cast<RankedTensorType>(x->getType()).getElementType());
  if (failed(slope))
    return failure();
  ArrayRef<int64_t> xs = cast<RankedTensorType>(x->getType()).getShape();
  ArrayRef<int64_t> ss = cast<RankedTensorType>(slope->getType()).getShape();
  int64_t offset = (int64_t)xs.size() - (int64_t)ss.size(), numel = 1;
  bool perChannel = offset >= 0;
  for (auto [k, d] : llvm::enumerate(ss)) {
    numel *= d;
    if (d != 1 && (offset + (int64_t)k != 1 || d != xs[1]))
      perChannel = false;
  }
  if (!perChannel)
    return op.error() << "only a slope of one value or one per channel "
                         "(dimension 1) is supported, got "
                      << slope->getType() << " for an input " << x->getType();
  auto weight = op.im.reshapeTo(*slope, {numel}, op.loc);
  if (failed(weight))
    return failure();
  return op.makeResult<nn::PreluOp>(*x, *weight);
}

/// Elu, Selu and Celu: nn.elu with each one's coefficients and defaults
/// (the ONNX operator specification; Selu's are torch.nn.SELU's in float).
static ConverterFn elu(StringRef kind) {
  return [=](OpBinder &op) -> LogicalResult {
    auto x = floatInput(op);
    if (failed(x))
      return failure();
    double alpha = 1.0, scale = 1.0, inputScale = 1.0;
    if (kind == "Elu") {
      alpha = op.floatAttr("alpha", 1.0);
    } else if (kind == "Selu") {
      alpha = op.floatAttr("alpha", 1.67326319217681884765625);
      scale = op.floatAttr("gamma", 1.05070102214813232421875);
    } else {
      alpha = op.floatAttr("alpha", 1.0);
      if (alpha == 0)
        return op.error() << "Celu with alpha 0 divides by zero";
      inputScale = 1.0 / alpha;
    }
    OpBuilder &b = op.builder();
    op.setResult(
        0, nn::EluOp::create(b, op.loc, x->getType(), *x,
                             b.getF64FloatAttr(alpha), b.getF64FloatAttr(scale),
                             b.getF64FloatAttr(inputScale), UnitAttr()));
    return success();
  };
}

/// Softplus: log(exp(x) + 1), torch's beta 1 and threshold 20 (torch.onnx
/// exports another beta as Mul, Softplus, Div).
static LogicalResult convertSoftplus(OpBinder &op) {
  auto x = floatInput(op);
  if (failed(x))
    return failure();
  OpBuilder &b = op.builder();
  op.setResult(0, nn::SoftplusOp::create(b, op.loc, x->getType(), *x,
                                         b.getF64FloatAttr(1.0),
                                         b.getF64FloatAttr(20.0)));
  return success();
}

/// Clip: bounds from inputs 1 and 2 (opset >= 11) or the min/max attributes.
static LogicalResult convertClip(OpBinder &op) {
  auto x = floatInput(op);
  if (failed(x))
    return failure();
  auto lo = op.scalarInputOrAttr(1, "min");
  if (failed(lo))
    return failure();
  auto hi = op.scalarInputOrAttr(2, "max");
  if (failed(hi))
    return failure();
  if (!*lo && !*hi) {
    op.setResult(0, *x);
    return success();
  }
  if (*lo && *hi && !(**lo <= **hi))
    return op.error() << "min " << **lo << " is greater than max " << **hi;
  OpBuilder &b = op.builder();
  auto attr = [&](std::optional<double> v) {
    return v ? b.getF64FloatAttr(*v) : FloatAttr();
  };
  op.setResult(0, nn::ClampOp::create(b, op.loc, x->getType(), *x, attr(*lo),
                                      attr(*hi)));
  return success();
}

/// Softmax/LogSoftmax. Before opset 13 the axis flattens the input to 2-D;
/// that only matches torch's softmax over the last axis.
template <typename OpTy> static ConverterFn softmax(int64_t sinceVersion) {
  return [=](OpBinder &op) -> LogicalResult {
    auto x = floatInput(op);
    if (failed(x))
      return failure();
    int64_t rank = cast<RankedTensorType>(x->getType()).getRank();
    int64_t axis = op.intAttr("axis", sinceVersion < 13 ? 1 : -1);
    int64_t norm = axis < 0 ? axis + rank : axis;
    if (norm < 0 || norm >= rank)
      return op.error() << "axis " << axis << " is out of range for rank "
                        << rank;
    if (sinceVersion < 13 && norm != rank - 1)
      return op.error() << "opset " << op.opset()
                        << " softmax over a non-last axis (flattening "
                           "semantics) is not supported";
    op.setResult(0, OpTy::create(op.builder(), op.loc, *x,
                                 op.builder().getI64IntegerAttr(norm),
                                 /*dtype=*/TypeAttr()));
    return success();
  };
}

static LogicalResult convertDropout(OpBinder &op) {
  auto x = floatInput(op);
  if (failed(x))
    return failure();
  auto p = op.scalarInputOrAttr(1, "ratio", 0.5);
  if (failed(p))
    return failure();
  if (op.outputUsed(1))
    return op.error() << "the mask output is not supported";
  if (!(**p >= 0 && **p <= 1))
    return op.error() << "ratio " << **p << " is not in [0, 1]";
  op.setResult(0, nn::DropoutOp::create(op.builder(), op.loc, x->getType(), *x,
                                        op.builder().getF64FloatAttr(**p),
                                        UnitAttr()));
  return success();
}

static LogicalResult convertGelu(OpBinder &op) {
  auto x = floatInput(op);
  if (failed(x))
    return failure();
  std::string approx = op.stringAttr("approximate", "none");
  std::optional<nn::GeluApproximation> kind =
      nn::symbolizeGeluApproximation(approx);
  if (!kind)
    return op.error() << "unknown approximate '" << approx << "'";
  op.setResult(
      0, nn::GeluOp::create(op.builder(), op.loc, x->getType(), *x, *kind));
  return success();
}

/// Cast of an activation to its own element type (what torch.onnx emits
/// around shape arithmetic and masks) is the identity.
static LogicalResult convertCast(OpBinder &op) {
  auto x = op.tensor(0);
  if (failed(x))
    return failure();
  auto et = op.im.elementType(op.intAttr("to", 0), op.loc, "Cast target");
  if (failed(et))
    return failure();
  Type from = cast<RankedTensorType>(x->getType()).getElementType();
  if (from != *et)
    return op.error() << "casting an activation from " << from << " to " << *et
                      << " is not supported (needs a cast op)";
  op.setResult(0, *x);
  return success();
}

static LogicalResult convertPow(OpBinder &op) {
  auto x = floatInput(op);
  if (failed(x))
    return failure();
  const ConstTensor *e = op.constInput(1);
  if (!e || e->numElements() != 1)
    return op.error() << "only a constant scalar exponent is supported";
  op.setResult(0, nn::PowOp::create(op.builder(), op.loc, x->getType(), *x,
                                    llvm::APFloat(e->getF(0))));
  return success();
}

/// Where(mask, fill, x) / Where(mask, x, fill) with a constant mask and a
/// constant scalar fill is x.masked_fill(mask, fill) (or ~mask).
static LogicalResult convertWhere(OpBinder &op) {
  const ConstTensor *cond = op.constInput(0);
  const ConstTensor *c1 = op.constInput(1), *c2 = op.constInput(2);
  if (!cond || (c1 && c2) || (!c1 && !c2))
    return op.error() << "only Where with a constant condition and one "
                         "constant branch (masked_fill) is supported";
  const ConstTensor *fill = c1 ? c1 : c2;
  if (fill->numElements() != 1)
    return op.error()
           << "only Where with a scalar fill (masked_fill) is supported";
  auto x = op.tensor(c1 ? 2 : 1);
  if (failed(x))
    return failure();
  if (!isFloatTensor(*x))
    return op.error() << "expects a floating-point tensor";
  // The fill goes where the condition holds when it is the first branch, and
  // where it does not when it is the second.
  ConstTensor mask = ConstTensor::make(DT_BOOL, cond->shape);
  for (int64_t k = 0, e = cond->numElements(); k < e; ++k)
    mask.i[k] = (cond->getI(k) != 0) == (c1 != nullptr);
  Value maskValue = op.im.materialize(mask, op.builder().getI1Type(), op.loc);
  return op.makeResult<nn::MaskedFillOp>(
      *x, maskValue, llvm::APFloat(fill->getF(0)), /*inplace=*/false);
}

void vram::onnx_import::registerElementwiseConverters(ConverterTable &table) {
  table.onOp("Add", 1, convertBinary<nn::AddOp>);
  table.onOp("Sub", 1, convertBinary<nn::SubOp>);
  table.onOp("Mul", 1, convertBinary<nn::MulOp>);
  table.onOp("Div", 1, convertBinary<nn::DivOp>);
  table.onOp("Relu", 1, unary<nn::ReluOp>(/*inplace=*/false));
  table.onOp("Sigmoid", 1, unary<nn::SigmoidOp>());
  table.onOp("Tanh", 1, unary<nn::TanhOp>());
  table.onOp("Erf", 1, unary<nn::ErfOp>());
  table.onOp("Sqrt", 1, unary<nn::SqrtOp>());
  table.onOp("Reciprocal", 1, unary<nn::ReciprocalOp>());
  table.onOp("Exp", 1, unary<nn::ExpOp>());
  table.onOp("Neg", 1, unary<nn::NegOp>());
  table.onOp("HardSwish", 14, unary<nn::HardswishOp>(/*inplace=*/false));
  table.onOp("HardSigmoid", 1, convertHardSigmoid);
  table.onOp("LeakyRelu", 1, convertLeakyRelu);
  table.onOp("PRelu", 1, convertPRelu);
  table.onOp("Elu", 1, elu("Elu"));
  table.onOp("Selu", 1, elu("Selu"));
  table.onOp("Celu", 12, elu("Celu"));
  table.onOp("Softplus", 1, convertSoftplus);
  table.onOp("Mish", 18, unary<nn::MishOp>(/*inplace=*/false));
  table.onOp("Clip", 1, convertClip);
  table.onOp("Softmax", 1, softmax<nn::SoftmaxOp>(1));
  table.onOp("Softmax", 13, softmax<nn::SoftmaxOp>(13));
  table.onOp("LogSoftmax", 1, softmax<nn::LogSoftmaxOp>(1));
  table.onOp("LogSoftmax", 13, softmax<nn::LogSoftmaxOp>(13));
  table.onOp("Dropout", 1, convertDropout);
  table.onOp("Gelu", 20, convertGelu);
  table.onOp("Cast", 1, convertCast);
  table.onOp("Pow", 1, convertPow);
  table.onOp("Where", 9, convertWhere);
}
