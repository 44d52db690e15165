//===- Elementwise.cpp - activations, arithmetic, reductions --------------===//
//
// The in-place overloads (relu_, add_) set the nn op's `inplace`: its result
// shares the operand's storage, as PyTorch's does.
//
//===----------------------------------------------------------------------===//

#include "ConverterTable.h"
#include "Importer.h"

#include <cmath>

using namespace mlir;
using namespace vram;
using namespace vram::torch_export;

static FailureOr<Value> floatTensor(NodeBinder &op, llvm::StringRef name) {
  FailureOr<Value> x = op.tensor(name);
  if (failed(x))
    return failure();
  if (!isa<FloatType>(cast<RankedTensorType>(x->getType()).getElementType()))
    return op.error() << "expects a floating-point tensor, got "
                      << x->getType();
  return x;
}

/// OpTy(self) of the input's type: activations without an in-place form.
template <typename OpTy> static LogicalResult unary(NodeBinder &op) {
  FailureOr<Value> x = floatTensor(op, "self");
  if (failed(x))
    return failure();
  return op.setResult(
      OpTy::create(op.getBuilder(), op.getLoc(), x->getType(), *x));
}

/// neg(self): on an integer tensor (T5's relative-position buckets) a new
/// tensor without autograd.
static LogicalResult convertNeg(NodeBinder &op) {
  FailureOr<Value> x = op.tensor("self");
  if (failed(x))
    return failure();
  if (!isa<FloatType>(cast<RankedTensorType>(x->getType()).getElementType()))
    return op.setNoGradResult();
  return unary<nn::NegOp>(op);
}

/// OpTy(self, inplace): relu and relu_, silu and silu_.
template <typename OpTy, bool Inplace>
static LogicalResult unaryInplace(NodeBinder &op) {
  FailureOr<Value> x = floatTensor(op, "self");
  if (failed(x))
    return failure();
  OpBuilder &b = op.getBuilder();
  return op.setResult(OpTy::create(b, op.getLoc(), x->getType(), *x,
                                   Inplace ? b.getUnitAttr() : UnitAttr()));
}

/// hardtanh(x, 0, 6) is ReLU6 (torch.nn.ReLU6 calls it).
template <bool Inplace> static LogicalResult convertHardtanh(NodeBinder &op) {
  FailureOr<Value> x = floatTensor(op, "self");
  FailureOr<double> lo = op.real("min_val", -1.0), hi = op.real("max_val", 1.0);
  if (failed(x) || failed(lo) || failed(hi))
    return failure();
  if (*lo != 0 || *hi != 6)
    return op.error() << "only hardtanh(0, 6) (ReLU6) is modelled, got (" << *lo
                      << ", " << *hi << ")";
  OpBuilder &b = op.getBuilder();
  return op.setResult(
      nn::Relu6Op::create(b, op.getLoc(), x->getType(), *x,
                          Inplace ? b.getUnitAttr() : UnitAttr()));
}

template <bool Inplace> static LogicalResult convertLeakyRelu(NodeBinder &op) {
  FailureOr<Value> x = floatTensor(op, "self");
  FailureOr<double> slope = op.real("negative_slope", 0.01);
  if (failed(x) || failed(slope))
    return failure();
  OpBuilder &b = op.getBuilder();
  return op.setResult(nn::LeakyReluOp::create(
      b, op.getLoc(), x->getType(), *x, b.getF64FloatAttr(*slope),
      Inplace ? b.getUnitAttr() : UnitAttr()));
}

/// prelu(self, weight): nn.PReLU's [C] or [1] weight parameter (a 0-d
/// weight, which F.prelu also takes, viewed as [1]).
static LogicalResult convertPrelu(NodeBinder &op) {
  FailureOr<Value> x = floatTensor(op, "self");
  FailureOr<Value> weight = floatTensor(op, "weight");
  if (failed(x) || failed(weight))
    return failure();
  if (cast<RankedTensorType>(weight->getType()).getRank() == 0) {
    weight = op.reshape(*weight, {1});
    if (failed(weight))
      return failure();
  }
  FailureOr<Value> y = op.make<nn::PreluOp>(*x, *weight);
  if (failed(y))
    return failure();
  return op.setResult(*y);
}

/// nn.elu(x, alpha, scale, input_scale) and its in-place form.
static LogicalResult makeElu(NodeBinder &op, Value x, double alpha,
                             double scale, double inputScale, bool inplace) {
  OpBuilder &b = op.getBuilder();
  return op.setResult(nn::EluOp::create(
      b, op.getLoc(), x.getType(), x, b.getF64FloatAttr(alpha),
      b.getF64FloatAttr(scale), b.getF64FloatAttr(inputScale),
      inplace ? b.getUnitAttr() : UnitAttr()));
}

template <bool Inplace> static LogicalResult convertElu(NodeBinder &op) {
  FailureOr<Value> x = floatTensor(op, "self");
  FailureOr<double> alpha = op.real("alpha", 1.0),
                    scale = op.real("scale", 1.0),
                    inputScale = op.real("input_scale", 1.0);
  if (failed(x) || failed(alpha) || failed(scale) || failed(inputScale))
    return failure();
  return makeElu(op, *x, *alpha, *scale, *inputScale, Inplace);
}

/// selu = elu with SELU's alpha and scale (torch's constants).
template <bool Inplace> static LogicalResult convertSelu(NodeBinder &op) {
  FailureOr<Value> x = floatTensor(op, "self");
  if (failed(x))
    return failure();
  return makeElu(op, *x, 1.6732632423543772848170429916717,
                 1.0507009873554804934193349852946, 1.0, Inplace);
}

/// celu(x, alpha) = elu(x, alpha, 1, 1 / alpha).
template <bool Inplace> static LogicalResult convertCelu(NodeBinder &op) {
  FailureOr<Value> x = floatTensor(op, "self");
  FailureOr<double> alpha = op.real("alpha", 1.0);
  if (failed(x) || failed(alpha))
    return failure();
  if (*alpha == 0)
    return op.error() << "celu with alpha 0 divides by zero";
  return makeElu(op, *x, *alpha, 1.0, 1.0 / *alpha, Inplace);
}

static LogicalResult convertSoftplus(NodeBinder &op) {
  FailureOr<Value> x = floatTensor(op, "self");
  FailureOr<double> beta = op.real("beta", 1.0),
                    threshold = op.real("threshold", 20.0);
  if (failed(x) || failed(beta) || failed(threshold))
    return failure();
  OpBuilder &b = op.getBuilder();
  return op.setResult(nn::SoftplusOp::create(b, op.getLoc(), x->getType(), *x,
                                             b.getF64FloatAttr(*beta),
                                             b.getF64FloatAttr(*threshold)));
}

static LogicalResult convertGelu(NodeBinder &op) {
  FailureOr<Value> x = floatTensor(op, "self");
  FailureOr<std::string> approximate = op.string("approximate", "none");
  if (failed(x) || failed(approximate))
    return failure();
  std::optional<nn::GeluApproximation> kind =
      nn::symbolizeGeluApproximation(*approximate);
  if (!kind)
    return op.error() << "approximate='" << *approximate
                      << "' is not a GELU approximation";
  return op.setResult(nn::GeluOp::create(op.getBuilder(), op.getLoc(),
                                         x->getType(), *x, *kind));
}

/// self OP other (a tensor or a Python number), alpha = 1.
template <typename OpTy, bool Inplace>
static LogicalResult binary(NodeBinder &op) {
  FailureOr<Value> self = op.tensor("self");
  if (failed(self))
    return failure();
  Type elementType = cast<RankedTensorType>(self->getType()).getElementType();
  if (op.has("alpha")) {
    FailureOr<double> alpha = op.real("alpha");
    if (failed(alpha))
      return failure();
    if (*alpha != 1)
      return op.error() << "alpha=" << *alpha << " is not modelled";
  }
  // num_batches_tracked.add_(1): an integer counter updated in place has
  // no gradient and takes no new memory.
  if (Inplace && isa<IntegerType>(elementType)) {
    op.ignore("other");
    return op.setResult(*self);
  }
  // Integer arithmetic (positions, mask indices) runs without autograd.
  if (!isa<FloatType>(elementType))
    return op.setNoGradResult();
  FailureOr<Value> other = op.tensorOrNumber("other", elementType);
  if (failed(other))
    return failure();
  FailureOr<Value> y = op.make<OpTy>(
      *self, *other, Inplace ? op.getBuilder().getUnitAttr() : UnitAttr());
  return failed(y) ? failure() : op.setResult(*y);
}

static LogicalResult convertPow(NodeBinder &op) {
  FailureOr<Value> x = floatTensor(op, "self");
  FailureOr<double> exponent = op.real("exponent");
  if (failed(x) || failed(exponent))
    return failure();
  return op.setResult(
      nn::PowOp::create(op.getBuilder(), op.getLoc(), x->getType(), *x,
                        op.getBuilder().getF64FloatAttr(*exponent)));
}

/// The dimensions a reduction's `dim` argument names, normalized (all of
/// them when it is None or absent).
static FailureOr<SmallVector<int64_t>> reducedDims(NodeBinder &op, Value x) {
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  if (!op.has("dim"))
    return llvm::to_vector(llvm::seq<int64_t>(0, rank));
  FailureOr<SmallVector<int64_t>> dims = op.integers("dim");
  if (failed(dims))
    return failure();
  if (dims->empty()) // sum(x, []) reduces every dimension
    return llvm::to_vector(llvm::seq<int64_t>(0, rank));
  for (int64_t &d : *dims) {
    if (d < -rank || d >= rank)
      return op.error() << "dim " << d << " is out of range";
    d = d < 0 ? d + rank : d;
  }
  return dims;
}

/// aten.mean.dim and aten.sum.dim_IntList / aten.sum.default: nn.mean,
/// nn.sum (whose backward expands the gradient: nothing kept); aten.amax /
/// aten.amin (and aten.max / aten.min over every element): nn.amax,
/// nn.amin (input and result kept).
template <typename OpTy> static LogicalResult convertReduction(NodeBinder &op) {
  FailureOr<Value> x = floatTensor(op, "self");
  if (failed(x))
    return failure();
  FailureOr<SmallVector<int64_t>> dims = reducedDims(op, *x);
  FailureOr<bool> keepdim = op.boolean("keepdim", false);
  if (failed(dims) || failed(keepdim))
    return failure();
  if (op.has("dtype"))
    return op.error() << "a reduction with a dtype is not modelled";
  FailureOr<Value> y =
      op.make<OpTy>(*x, op.getBuilder().getDenseI64ArrayAttr(*dims),
                    *keepdim ? op.getBuilder().getUnitAttr() : UnitAttr());
  return failed(y) ? failure() : op.setResult(*y);
}

/// aten.max.default / aten.min.default: x.max() over every element,
/// nn.amax {evenly} (nn.amin): MaxBackward1's evenly_distribute_backward.
template <typename OpTy> static LogicalResult convertMaxAll(NodeBinder &op) {
  FailureOr<Value> x = floatTensor(op, "self");
  if (failed(x))
    return failure();
  int64_t rank = cast<RankedTensorType>(x->getType()).getRank();
  OpBuilder &b = op.getBuilder();
  FailureOr<Value> y = op.make<OpTy>(
      *x, b.getDenseI64ArrayAttr(llvm::to_vector(llvm::seq<int64_t>(0, rank))),
      UnitAttr(), b.getUnitAttr());
  return failed(y) ? failure() : op.setResult(*y);
}

/// nn.topk of the `k` largest (`smallest`) values of `x` along `dim`
/// (checked first: an error at the node, not a failed build).
static FailureOr<nn::TopkOp> buildTopk(NodeBinder &op, Value x, int64_t k,
                                       int64_t dim, bool smallest = false) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  if (dim < -rank || dim >= rank)
    return op.error() << "dim " << dim << " is out of range for rank " << rank;
  dim = dim < 0 ? dim + rank : dim;
  if (k < 1 || k > type.getDimSize(dim))
    return op.error() << "k = " << k << " must be in [1, "
                      << type.getDimSize(dim) << "] (dimension " << dim << ")";
  return nn::TopkOp::create(op.getBuilder(), op.getLoc(), x, k, dim, smallest);
}

/// aten.topk.default: nn.topk (autograd keeps the indices), of the `k`
/// smallest with largest=False.
static LogicalResult convertTopk(NodeBinder &op) {
  FailureOr<Value> x = floatTensor(op, "self");
  FailureOr<int64_t> k = op.integer("k"), dim = op.integer("dim", -1);
  FailureOr<bool> largest = op.boolean("largest", true);
  // sorted=False leaves the order unspecified: the sorted one is one.
  op.ignore("sorted");
  if (failed(x) || failed(k) || failed(dim) || failed(largest))
    return failure();
  FailureOr<nn::TopkOp> topk = buildTopk(op, *x, *k, *dim, !*largest);
  if (failed(topk))
    return failure();
  return op.setResults({topk->getValues(), topk->getIndices()});
}

/// aten.max.dim (aten.min.dim): the values and indices of the maximum
/// (minimum) along `dim`, which autograd handles as topk's k = 1
/// (value_selecting_reduction_backward keeps the indices and scatters into
/// zeros of the input's size): nn.topk with k = 1, its results viewed
/// without the dimension unless keepdim.
template <bool Smallest> static LogicalResult convertMaxDim(NodeBinder &op) {
  FailureOr<Value> x = floatTensor(op, "self");
  FailureOr<int64_t> dim = op.integer("dim");
  FailureOr<bool> keepdim = op.boolean("keepdim", false);
  if (failed(x) || failed(dim) || failed(keepdim))
    return failure();
  FailureOr<nn::TopkOp> topk = buildTopk(op, *x, 1, *dim, Smallest);
  if (failed(topk))
    return failure();
  SmallVector<Value> results = {topk->getValues(), topk->getIndices()};
  if (!*keepdim) {
    int64_t rank = cast<RankedTensorType>(x->getType()).getRank();
    int64_t d = *dim < 0 ? *dim + rank : *dim;
    for (Value &v : results) {
      SmallVector<int64_t> shape(
          cast<RankedTensorType>(v.getType()).getShape());
      shape.erase(shape.begin() + d);
      FailureOr<Value> view = op.reshape(v, shape);
      if (failed(view))
        return failure();
      v = *view;
    }
  }
  return op.setResults(results);
}

static LogicalResult convertSoftmax(NodeBinder &op) {
  FailureOr<Value> x = floatTensor(op, "self");
  FailureOr<int64_t> dim = op.integer("dim");
  if (failed(x) || failed(dim))
    return failure();
  if (op.has("dtype"))
    return op.error() << "softmax with a dtype is not modelled";
  FailureOr<Value> y = op.make<nn::SoftmaxOp>(
      *x, op.getBuilder().getI64IntegerAttr(*dim), TypeAttr());
  return failed(y) ? failure() : op.setResult(*y);
}

/// masked_fill(self, mask, value) and masked_fill_: without autograd on
/// masks and tables that do not require grad.
template <bool Inplace> static LogicalResult convertMaskedFill(NodeBinder &op) {
  FailureOr<Value> x = op.tensor("self");
  if (failed(x))
    return failure();
  if (!op.requiresGrad(*x)) {
    if (Inplace) {
      op.ignore("mask");
      op.ignore("value");
      return op.setResult(*x);
    }
    return op.setNoGradResult();
  }
  FailureOr<Value> mask = op.tensor("mask");
  FailureOr<double> value = op.real("value");
  if (failed(mask) || failed(value))
    return failure();
  OpBuilder &b = op.getBuilder();
  FailureOr<Value> y =
      op.make<nn::MaskedFillOp>(*x, *mask, b.getF64FloatAttr(*value),
                                Inplace ? b.getUnitAttr() : UnitAttr());
  return failed(y) ? failure() : op.setResult(*y);
}

/// where(condition, self, other) with a scalar `other`: without autograd
/// when `self` needs no gradient, else a new tensor that keeps the
/// condition (transformers' T5 masks its position bias so under sdpa).
static LogicalResult convertWhereScalarOther(NodeBinder &op) {
  FailureOr<Value> x = op.tensor("self");
  if (failed(x))
    return failure();
  if (!op.requiresGrad(*x))
    return op.setNoGradResult();
  FailureOr<Value> condition = op.tensor("condition");
  FailureOr<double> value = op.real("other");
  FailureOr<RankedTensorType> type = op.resultType();
  if (failed(condition) || failed(value) || failed(type))
    return failure();
  OpBuilder &b = op.getBuilder();
  // torch.where broadcasts its operands: `self` is read through an expanded
  // view (a bias [1, H, T, S] under a mask [B, 1, T, S]).
  Value input = *x;
  auto in = cast<RankedTensorType>(input.getType());
  if (in.getShape() != type->getShape())
    input =
        nn::ExpandOp::create(b, op.getLoc(), in.clone(type->getShape()), input);
  FailureOr<Value> y =
      op.make<nn::MaskedFillOp>(input, *condition, b.getF64FloatAttr(*value),
                                UnitAttr(), b.getUnitAttr());
  return failed(y) ? failure() : op.setResult(*y);
}

/// bernoulli_(p): fills its operand in place from the RNG (torchvision's
/// stochastic depth draws its per-sample mask so); no memory, no gradient.
static LogicalResult convertBernoulliInplace(NodeBinder &op) {
  FailureOr<Value> x = op.tensor("self");
  FailureOr<double> p = op.real("p", 0.5);
  if (failed(x) || failed(p))
    return failure();
  if (op.has("generator"))
    return op.error() << "an explicit generator is not modelled";
  return op.setResult(*x);
}

void vram::torch_export::registerElementwiseConverters(ConverterTable &table) {
  table.on("aten.relu.default", unaryInplace<nn::ReluOp, false>);
  table.on("aten.relu_.default", unaryInplace<nn::ReluOp, true>);
  table.on("aten.silu.default", unaryInplace<nn::SiluOp, false>);
  table.on("aten.silu_.default", unaryInplace<nn::SiluOp, true>);
  table.on("aten.hardswish.default", unaryInplace<nn::HardswishOp, false>);
  table.on("aten.hardswish_.default", unaryInplace<nn::HardswishOp, true>);
  table.on("aten.hardsigmoid.default", unaryInplace<nn::HardsigmoidOp, false>);
  table.on("aten.hardsigmoid_.default", unaryInplace<nn::HardsigmoidOp, true>);
  table.on("aten.hardtanh.default", convertHardtanh<false>);
  table.on("aten.hardtanh_.default", convertHardtanh<true>);
  table.on("aten.leaky_relu.default", convertLeakyRelu<false>);
  table.on("aten.leaky_relu_.default", convertLeakyRelu<true>);
  table.on("aten.prelu.default", convertPrelu);
  table.on("aten.elu.default", convertElu<false>);
  table.on("aten.elu_.default", convertElu<true>);
  table.on("aten.selu.default", convertSelu<false>);
  table.on("aten.selu_.default", convertSelu<true>);
  table.on("aten.celu.default", convertCelu<false>);
  table.on("aten.celu_.default", convertCelu<true>);
  table.on("aten.softplus.default", convertSoftplus);
  table.on("aten.mish.default", unaryInplace<nn::MishOp, false>);
  table.on("aten.mish_.default", unaryInplace<nn::MishOp, true>);
  table.on("aten.gelu.default", convertGelu);
  table.on("aten.sigmoid.default", unary<nn::SigmoidOp>);
  table.on("aten.sigmoid_.default", unaryInplace<nn::SigmoidOp, true>);
  table.on("aten.tanh.default", unary<nn::TanhOp>);
  table.on("aten.tanh_.default", unaryInplace<nn::TanhOp, true>);
  table.on("aten.exp.default", unary<nn::ExpOp>);
  table.on("aten.neg.default", convertNeg);
  table.on("aten.rsqrt.default", unary<nn::RsqrtOp>);
  table.on("aten.sqrt.default", unary<nn::SqrtOp>);
  table.on("aten.add.Tensor", binary<nn::AddOp, false>);
  table.on("aten.add_.Tensor", binary<nn::AddOp, true>);
  table.on("aten.sub.Tensor", binary<nn::SubOp, false>);
  table.on("aten.mul.Tensor", binary<nn::MulOp, false>);
  table.on("aten.mul_.Tensor", binary<nn::MulOp, true>);
  table.on("aten.div.Tensor", binary<nn::DivOp, false>);
  table.on("aten.div_.Tensor", binary<nn::DivOp, true>);
  table.on("aten.bernoulli_.float", convertBernoulliInplace);
  table.on("aten.masked_fill.Scalar", convertMaskedFill<false>);
  table.on("aten.masked_fill_.Scalar", convertMaskedFill<true>);
  table.on("aten.where.ScalarOther", convertWhereScalarOther);
  table.on("aten.pow.Tensor_Scalar", convertPow);
  table.on("aten.mean.dim", convertReduction<nn::MeanOp>);
  table.on("aten.sum.dim_IntList", convertReduction<nn::SumOp>);
  table.on("aten.sum.default", convertReduction<nn::SumOp>);
  table.on("aten.amax.default", convertReduction<nn::AmaxOp>);
  table.on("aten.amin.default", convertReduction<nn::AminOp>);
  table.on("aten.max.default", convertMaxAll<nn::AmaxOp>);
  table.on("aten.min.default", convertMaxAll<nn::AminOp>);
  table.on("aten.topk.default", convertTopk);
  table.on("aten.max.dim", convertMaxDim</*Smallest=*/false>);
  table.on("aten.min.dim", convertMaxDim</*Smallest=*/true>);
  table.on("aten.softmax.int", convertSoftmax);
}
