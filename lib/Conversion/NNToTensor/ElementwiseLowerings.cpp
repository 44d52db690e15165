//===- ElementwiseLowerings.cpp - activations, arithmetic, reductions -----===//
//
// LowerToTensorOpInterface models of the elementwise ops (activations,
// sub/mul/div with broadcasting, unary math), mean, concat, pad and
// constants. The formulas are PyTorch's (tools/autograd/derivatives.yaml and
// the ATen CPU kernels, torch 1.13): every unary backward is one fused
// elementwise kernel writing the input-sized gradient, and each tensor
// PyTorch allocates is a new tensor, so the step allocates what the memory
// analysis predicts.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "vram/Dialect/NN/NNOps.h"
#include "vram/Dialect/NN/TorchSemantics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;
using namespace vram;
using namespace vram::nn;
using namespace vram::lowering;

namespace {

Value cst(OpBuilder &b, Location loc, Value like, double v) {
  return floatConstant(b, loc, like.getType(), v);
}
Value cmp(OpBuilder &b, Location loc, arith::CmpFPredicate p, Value x,
          Value y) {
  return arith::CmpFOp::create(b, loc, p, x, y);
}
Value select(OpBuilder &b, Location loc, Value c, Value x, Value y) {
  return arith::SelectOp::create(b, loc, c, x, y);
}
/// min(max(x, lo), hi), NaN propagating as torch.clamp / hardtanh.
Value clampValue(OpBuilder &b, Location loc, Value x, std::optional<double> lo,
                 std::optional<double> hi) {
  if (lo)
    x = arith::MaximumFOp::create(b, loc, x, cst(b, loc, x, *lo));
  if (hi)
    x = arith::MinimumFOp::create(b, loc, x, cst(b, loc, x, *hi));
  return x;
}
Value sigmoidValue(OpBuilder &b, Location loc, Value x) {
  Value one = cst(b, loc, x, 1.0);
  Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
  return div(b, loc, one, add(b, loc, one, e));
}

std::optional<double> optionalF64(DictionaryAttr attrs, StringRef name) {
  if (auto a = attrs.getAs<FloatAttr>(name))
    return a.getValueAsDouble();
  return std::nullopt;
}

/// An in-place form overwrites `operand`: an error at `op` when a backward
/// node keeps that value (the step would read it after the write; PyTorch
/// keeps a clone of `self` for mul_ / div_, or refuses the write).
LogicalResult checkOverwriteNotSaved(Operation *op, Value operand) {
  for (Operation *user : operand.getUsers()) {
    auto node = dyn_cast<BackwardOp>(user);
    if (node && llvm::is_contained(node.getSaved(), operand))
      return op->emitError()
             << op->getName()
             << " {inplace}: the lowering cannot overwrite a tensor that "
                "the backward of "
             << node.getForwardOp() << " keeps";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Unary elementwise ops. A formula gives the forward value of an element and
// the gradient from the incoming gradient and the saved tensor (the input or
// the result, as the op's getSavedTensors says).
//===----------------------------------------------------------------------===//

/// The clone of `self` autograd keeps for an in-place op that overwrites
/// it (`self_clone`), the only saved tensor an elementwise op makes.
static FailureOr<Value> lowerSelfClone(StringRef opName, OpBuilder &b,
                                       Location loc,
                                       const SavedTensorLowering &saved) {
  if (saved.kind != "self_clone" || saved.operands.empty())
    return emitError(loc) << opName << ": no lowering of the saved tensor '"
                          << saved.kind << "'";
  return copyToNewTensor(b, loc, saved.operands[0]);
}

/// A formula whose PyTorch backward allocates tensors before its gradient
/// lowers them as tensors (`Formula::backwardTensors`) instead of one
/// elementwise body.
template <typename Formula>
using HasBackwardTensors = decltype(&Formula::backwardTensors);

template <typename OpTy, typename Formula>
struct UnaryLowering : ExternalModel<UnaryLowering<OpTy, Formula>, OpTy> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    Location loc = op->getLoc();
    DictionaryAttr attrs = op->getAttrDictionary();
    Value x = operands[0];
    auto body = [&](OpBuilder &nb, Location nloc, ValueRange a) {
      return Formula::forward(nb, nloc, attrs, a[0]);
    };
    // The in-place form (relu6_, silu_, ...) writes its operand's storage.
    if (attrs.contains("inplace") &&
        failed(checkOverwriteNotSaved(op, op->getOperand(0))))
      return failure();
    results.push_back(
        attrs.contains("inplace")
            ? elementwise(b, loc, {}, x, body, true)
            : elementwise(b, loc, x, newTensor(b, loc, tensorType(x)), body));
    return success();
  }

  /// The in-place form's `self_clone`: a copy of the input, made before the
  /// op overwrites it.
  static FailureOr<Value> lowerSavedTensor(OpBuilder &b, Location loc,
                                           const SavedTensorLowering &saved) {
    return lowerSelfClone(OpTy::getOperationName(), b, loc, saved);
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    Value saved;
    if (!node.savedResults.empty() && node.savedResults[0])
      saved = node.savedResults[0];
    else if (!node.savedOperands.empty() && node.savedOperands[0])
      saved = node.savedOperands[0];
    else if (!node.savedExtras.empty() && node.savedExtras[0])
      saved = node.savedExtras[0]; // the input's clone
    auto type = cast<RankedTensorType>(node.forwardType.getInput(0));
    SmallVector<Value> ins = {node.grads[0]};
    if (saved)
      ins.push_back(saved);
    DictionaryAttr attrs = node.forwardAttrs;
    if constexpr (llvm::is_detected<HasBackwardTensors, Formula>::value) {
      grads.push_back(
          Formula::backwardTensors(b, loc, attrs, node.grads[0], saved, type));
    } else {
      grads.push_back(
          elementwise(b, loc, ins, newTensor(b, loc, type),
                      [&](OpBuilder &nb, Location nloc, ValueRange a) {
                        return Formula::backward(nb, nloc, attrs, a[0],
                                                 a.size() > 1 ? a[1] : Value());
                      }));
    }
    return success();
  }
};

// sigmoid_backward(grad, result) = grad * (1 - y) * y.
struct SigmoidFormula {
  static Value forward(OpBuilder &b, Location l, DictionaryAttr, Value x) {
    return sigmoidValue(b, l, x);
  }
  static Value backward(OpBuilder &b, Location l, DictionaryAttr, Value g,
                        Value y) {
    return mul(b, l, g, mul(b, l, sub(b, l, cst(b, l, y, 1.0), y), y));
  }
};

// tanh_backward(grad, result) = grad * (1 - y^2).
struct TanhFormula {
  static Value forward(OpBuilder &b, Location l, DictionaryAttr, Value x) {
    return math::TanhOp::create(b, l, x);
  }
  static Value backward(OpBuilder &b, Location l, DictionaryAttr, Value g,
                        Value y) {
    return mul(b, l, g, sub(b, l, cst(b, l, y, 1.0), mul(b, l, y, y)));
  }
};

// silu_backward: s = sigmoid(x); grad * s * (1 + x * (1 - s)).
struct SiluFormula {
  static Value forward(OpBuilder &b, Location l, DictionaryAttr, Value x) {
    return mul(b, l, x, sigmoidValue(b, l, x));
  }
  static Value backward(OpBuilder &b, Location l, DictionaryAttr, Value g,
                        Value x) {
    Value s = sigmoidValue(b, l, x);
    Value one = cst(b, l, x, 1.0);
    Value t = add(b, l, one, mul(b, l, x, sub(b, l, one, s)));
    return mul(b, l, g, mul(b, l, s, t));
  }
};

// hardswish: x * min(max(x + 3, 0), 6) / 6. hardswish_backward (1.13 CPU):
// 0 below -3, grad * (x / 3 + 0.5) up to 3, grad above.
struct HardswishFormula {
  static Value forward(OpBuilder &b, Location l, DictionaryAttr, Value x) {
    Value r = clampValue(b, l, add(b, l, x, cst(b, l, x, 3.0)), 0.0, 6.0);
    return div(b, l, mul(b, l, x, r), cst(b, l, x, 6.0));
  }
  static Value backward(OpBuilder &b, Location l, DictionaryAttr, Value g,
                        Value x) {
    Value low = cmp(b, l, arith::CmpFPredicate::OLT, x, cst(b, l, x, -3.0));
    Value mid = cmp(b, l, arith::CmpFPredicate::OLE, x, cst(b, l, x, 3.0));
    Value slope = mul(
        b, l, g, add(b, l, div(b, l, x, cst(b, l, x, 3.0)), cst(b, l, x, 0.5)));
    return select(b, l, low, cst(b, l, g, 0.0), select(b, l, mid, slope, g));
  }
};

// hardsigmoid: min(max(x + 3, 0), 6) / 6; backward grad / 6 on (-3, 3).
struct HardsigmoidFormula {
  static Value forward(OpBuilder &b, Location l, DictionaryAttr, Value x) {
    Value r = clampValue(b, l, add(b, l, x, cst(b, l, x, 3.0)), 0.0, 6.0);
    return div(b, l, r, cst(b, l, x, 6.0));
  }
  static Value backward(OpBuilder &b, Location l, DictionaryAttr, Value g,
                        Value x) {
    Value gt = cmp(b, l, arith::CmpFPredicate::OGT, x, cst(b, l, x, -3.0));
    Value lt = cmp(b, l, arith::CmpFPredicate::OLT, x, cst(b, l, x, 3.0));
    Value in = arith::AndIOp::create(b, l, gt, lt);
    return select(b, l, in, div(b, l, g, cst(b, l, g, 6.0)), cst(b, l, g, 0.0));
  }
};

// relu6 = hardtanh(x, 0, 6); hardtanh_backward: 0 where x <= 0 or x >= 6.
struct Relu6Formula {
  static Value forward(OpBuilder &b, Location l, DictionaryAttr, Value x) {
    return clampValue(b, l, x, 0.0, 6.0);
  }
  static Value backward(OpBuilder &b, Location l, DictionaryAttr, Value g,
                        Value x) {
    Value le = cmp(b, l, arith::CmpFPredicate::ULE, x, cst(b, l, x, 0.0));
    Value ge = cmp(b, l, arith::CmpFPredicate::UGE, x, cst(b, l, x, 6.0));
    Value out = arith::OrIOp::create(b, l, le, ge);
    return select(b, l, out, cst(b, l, g, 0.0), g);
  }
};

/// A coefficient with a default value: ODS fills it in when the op is made.
double coefficient(DictionaryAttr attrs, StringRef name) {
  return attrs.getAs<FloatAttr>(name).getValueAsDouble();
}

// leaky_relu_backward(grad, self_or_result, slope): the result has the
// input's sign (the in-place form's slope is not negative).
struct LeakyReluFormula {
  static Value forward(OpBuilder &b, Location l, DictionaryAttr attrs,
                       Value x) {
    Value pos = cmp(b, l, arith::CmpFPredicate::OGT, x, cst(b, l, x, 0.0));
    Value slope = cst(b, l, x, coefficient(attrs, "negative_slope"));
    return select(b, l, pos, x, mul(b, l, x, slope));
  }
  static Value backward(OpBuilder &b, Location l, DictionaryAttr attrs, Value g,
                        Value saved) {
    Value pos =
        cmp(b, l, arith::CmpFPredicate::OGT, saved, cst(b, l, saved, 0.0));
    Value slope = cst(b, l, g, coefficient(attrs, "negative_slope"));
    return select(b, l, pos, g, mul(b, l, g, slope));
  }
};

// elu: scale * x above 0, alpha * scale * expm1(x * input_scale) below.
// elu_backward reads the input, or the result in the in-place form:
//   input:  grad * input_scale * alpha * scale * exp(x * input_scale)
//   result: grad * input_scale * (y + alpha * scale)
// below 0, grad * scale above (aten/src/ATen/native/cpu/Activation.cpp).
struct EluFormula {
  struct Coefficients {
    double negative, positive, inputScale;
  };
  static Coefficients coefficients(DictionaryAttr attrs) {
    double scale = coefficient(attrs, "scale");
    return {coefficient(attrs, "alpha") * scale, scale,
            coefficient(attrs, "input_scale")};
  }
  static Value forward(OpBuilder &b, Location l, DictionaryAttr attrs,
                       Value x) {
    Coefficients c = coefficients(attrs);
    Value neg = cmp(b, l, arith::CmpFPredicate::ULE, x, cst(b, l, x, 0.0));
    Value e =
        math::ExpM1Op::create(b, l, mul(b, l, x, cst(b, l, x, c.inputScale)));
    return select(b, l, neg, mul(b, l, e, cst(b, l, x, c.negative)),
                  mul(b, l, x, cst(b, l, x, c.positive)));
  }
  static Value backward(OpBuilder &b, Location l, DictionaryAttr attrs, Value g,
                        Value saved) {
    Coefficients c = coefficients(attrs);
    Value neg =
        cmp(b, l, arith::CmpFPredicate::ULE, saved, cst(b, l, saved, 0.0));
    Value slope =
        attrs.contains("inplace")
            ? mul(b, l, cst(b, l, g, c.inputScale),
                  add(b, l, saved, cst(b, l, saved, c.negative)))
            : mul(b, l, cst(b, l, g, c.inputScale * c.negative),
                  math::ExpOp::create(
                      b, l, mul(b, l, saved, cst(b, l, saved, c.inputScale))));
    return select(b, l, neg, mul(b, l, g, slope),
                  mul(b, l, g, cst(b, l, g, c.positive)));
  }
};

// softplus: x where beta * x > threshold, else log1p(exp(beta * x)) / beta;
// softplus_backward: grad * z / (z + 1), z = exp(beta * x), or grad.
struct SoftplusFormula {
  static Value forward(OpBuilder &b, Location l, DictionaryAttr attrs,
                       Value x) {
    Value beta = cst(b, l, x, coefficient(attrs, "beta"));
    Value bx = mul(b, l, x, beta);
    Value linear = cmp(b, l, arith::CmpFPredicate::OGT, bx,
                       cst(b, l, x, coefficient(attrs, "threshold")));
    Value soft = div(
        b, l, math::Log1pOp::create(b, l, math::ExpOp::create(b, l, bx)), beta);
    return select(b, l, linear, x, soft);
  }
  static Value backward(OpBuilder &b, Location l, DictionaryAttr attrs, Value g,
                        Value x) {
    Value bx = mul(b, l, x, cst(b, l, x, coefficient(attrs, "beta")));
    Value linear = cmp(b, l, arith::CmpFPredicate::OGT, bx,
                       cst(b, l, x, coefficient(attrs, "threshold")));
    Value z = math::ExpOp::create(b, l, bx);
    Value soft = div(b, l, mul(b, l, g, z), add(b, l, z, cst(b, l, z, 1.0)));
    return select(b, l, linear, g, soft);
  }
};

// mish: x * tanh(log1p(exp(x))); mish_backward:
// grad * (t + x * sigmoid(x) * (1 - t^2)), t = tanh(log1p(exp(x))).
struct MishFormula {
  static Value tanhSoftplus(OpBuilder &b, Location l, Value x) {
    return math::TanhOp::create(
        b, l, math::Log1pOp::create(b, l, math::ExpOp::create(b, l, x)));
  }
  static Value forward(OpBuilder &b, Location l, DictionaryAttr, Value x) {
    return mul(b, l, x, tanhSoftplus(b, l, x));
  }
  static Value backward(OpBuilder &b, Location l, DictionaryAttr, Value g,
                        Value x) {
    Value t = tanhSoftplus(b, l, x);
    Value oneMinusT2 = sub(b, l, cst(b, l, x, 1.0), mul(b, l, t, t));
    Value d = add(b, l, t,
                  mul(b, l, mul(b, l, x, sigmoidValue(b, l, x)), oneMinusT2));
    return mul(b, l, g, d);
  }
};

// clamp_backward: grad where min <= x <= max (each bound when set), else 0.
struct ClampFormula {
  static Value forward(OpBuilder &b, Location l, DictionaryAttr attrs,
                       Value x) {
    return clampValue(b, l, x, optionalF64(attrs, "min"),
                      optionalF64(attrs, "max"));
  }
  static Value backward(OpBuilder &b, Location l, DictionaryAttr attrs, Value g,
                        Value x) {
    Value in;
    auto both = [&](Value c) {
      in = in ? arith::AndIOp::create(b, l, in, c).getResult() : c;
    };
    if (auto lo = optionalF64(attrs, "min"))
      both(cmp(b, l, arith::CmpFPredicate::OGE, x, cst(b, l, x, *lo)));
    if (auto hi = optionalF64(attrs, "max"))
      both(cmp(b, l, arith::CmpFPredicate::OLE, x, cst(b, l, x, *hi)));
    return select(b, l, in, g, cst(b, l, g, 0.0));
  }
};

// pow(x, e): grad * e * x^(e - 1); zero for e = 0 (pow_backward).
struct PowFormula {
  static Value power(OpBuilder &b, Location l, Value x, double e) {
    if (e == 1.0)
      return x;
    if (e == 2.0)
      return mul(b, l, x, x);
    if (e == 0.5)
      return math::SqrtOp::create(b, l, x);
    return math::PowFOp::create(b, l, x, cst(b, l, x, e));
  }
  static double exponent(DictionaryAttr attrs) {
    return *optionalF64(attrs, "exponent");
  }
  static Value forward(OpBuilder &b, Location l, DictionaryAttr attrs,
                       Value x) {
    double e = exponent(attrs);
    if (e == 0.0)
      return cst(b, l, x, 1.0);
    return power(b, l, x, e);
  }
  /// pow_backward: zeros_like(self) for e = 0, else `grad * (e *
  /// self.pow(e - 1))`, whose two temporaries are tensors alive until the
  /// gradient is written (PowOp's backward workspace): the last generic
  /// reads `powered` only to keep it alive as C++ keeps it.
  static Value backwardTensors(OpBuilder &b, Location l, DictionaryAttr attrs,
                               Value g, Value x, RankedTensorType type) {
    double e = exponent(attrs);
    if (e == 0.0)
      return fill(b, l, newTensor(b, l, type), 0.0);
    Value powered = elementwise(b, l, x, newTensor(b, l, type),
                                [&](OpBuilder &nb, Location nl, ValueRange a) {
                                  return e == 1.0
                                             ? cst(nb, nl, a[0], 1.0)
                                             : power(nb, nl, a[0], e - 1.0);
                                });
    Value scaled = elementwise(b, l, powered, newTensor(b, l, type),
                               [&](OpBuilder &nb, Location nl, ValueRange a) {
                                 return mul(nb, nl, cst(nb, nl, a[0], e), a[0]);
                               });
    return elementwise(b, l, ValueRange{g, scaled, powered},
                       newTensor(b, l, type),
                       [&](OpBuilder &nb, Location nl, ValueRange a) {
                         return mul(nb, nl, a[0], a[1]);
                       });
  }
};

// erf: 2 / sqrt(pi) * exp(-x^2) * grad.
struct ErfFormula {
  static Value forward(OpBuilder &b, Location l, DictionaryAttr, Value x) {
    return math::ErfOp::create(b, l, x);
  }
  static Value backward(OpBuilder &b, Location l, DictionaryAttr, Value g,
                        Value x) {
    Value e =
        math::ExpOp::create(b, l, arith::NegFOp::create(b, l, mul(b, l, x, x)));
    return mul(b, l, mul(b, l, cst(b, l, x, 2.0 / std::sqrt(M_PI)), e), g);
  }
};

// neg: -grad (nothing saved).
struct NegFormula {
  static Value forward(OpBuilder &b, Location l, DictionaryAttr, Value x) {
    return arith::NegFOp::create(b, l, x);
  }
  static Value backward(OpBuilder &b, Location l, DictionaryAttr, Value g,
                        Value) {
    return arith::NegFOp::create(b, l, g);
  }
};

// exp: grad * result.
struct ExpFormula {
  static Value forward(OpBuilder &b, Location l, DictionaryAttr, Value x) {
    return math::ExpOp::create(b, l, x);
  }
  static Value backward(OpBuilder &b, Location l, DictionaryAttr, Value g,
                        Value y) {
    return mul(b, l, g, y);
  }
};

// sqrt: grad / (2 * result).
struct SqrtFormula {
  static Value forward(OpBuilder &b, Location l, DictionaryAttr, Value x) {
    return math::SqrtOp::create(b, l, x);
  }
  static Value backward(OpBuilder &b, Location l, DictionaryAttr, Value g,
                        Value y) {
    return div(b, l, g, mul(b, l, cst(b, l, y, 2.0), y));
  }
};

// rsqrt: -0.5 * grad * result^3.
struct RsqrtFormula {
  static Value forward(OpBuilder &b, Location l, DictionaryAttr, Value x) {
    return div(b, l, cst(b, l, x, 1.0), math::SqrtOp::create(b, l, x));
  }
  static Value backward(OpBuilder &b, Location l, DictionaryAttr, Value g,
                        Value y) {
    Value y3 = mul(b, l, mul(b, l, y, y), y);
    return mul(b, l, mul(b, l, cst(b, l, g, -0.5), g), y3);
  }
};

// reciprocal: -grad * result^2.
struct ReciprocalFormula {
  static Value forward(OpBuilder &b, Location l, DictionaryAttr, Value x) {
    return div(b, l, cst(b, l, x, 1.0), x);
  }
  static Value backward(OpBuilder &b, Location l, DictionaryAttr, Value g,
                        Value y) {
    return mul(b, l, arith::NegFOp::create(b, l, g), mul(b, l, y, y));
  }
};

//===----------------------------------------------------------------------===//
// nn.prelu: F.prelu views the [C] (or [1]) weight as [1, C, 1, ...] so that
// it broadcasts along dimension 1, and so do these lowerings. Forward
// `x > 0 ? x : w x`; _prelu_kernel_backward writes both gradients at the
// input's shape, `x > 0 ? g : w g` and `x > 0 ? 0 : x g` (the ATen CPU
// kernel), and the engine sums the weight's into the view's shape.
//===----------------------------------------------------------------------===//

/// The weight's shape as F.prelu broadcasts it over `input`.
RankedTensorType preluWeightView(RankedTensorType input,
                                 RankedTensorType weight) {
  SmallVector<int64_t> shape(input.getRank(), 1);
  if (input.getRank() > 1)
    shape[1] = weight.getNumElements();
  return RankedTensorType::get(shape, weight.getElementType());
}

struct PreluLowering : ExternalModel<PreluLowering, PreluOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    Location loc = op->getLoc();
    Value x = operands[0];
    RankedTensorType type = tensorType(x);
    Value w = reshapeOrCopy(b, loc, operands[1],
                            preluWeightView(type, tensorType(operands[1])));
    results.push_back(
        elementwise(b, loc, {x, w}, newTensor(b, loc, type),
                    [](OpBuilder &nb, Location nl, ValueRange a) {
                      Value pos = cmp(nb, nl, arith::CmpFPredicate::OGT, a[0],
                                      cst(nb, nl, a[0], 0));
                      return select(nb, nl, pos, a[0], mul(nb, nl, a[1], a[0]));
                    }));
    return success();
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    Value g = node.grads[0], x = node.savedOperands[0];
    Value weight = node.savedOperands[1];
    if (!x || !weight)
      return emitError(loc) << "nn.prelu: the backward needs the saved input "
                               "and weight";
    RankedTensorType type = tensorType(x);
    auto weightType = cast<RankedTensorType>(node.forwardType.getInput(1));
    RankedTensorType viewType = preluWeightView(type, weightType);
    Value w = reshapeOrCopy(b, loc, weight, viewType);
    Value gradInput =
        elementwise(b, loc, {g, x, w}, newTensor(b, loc, type),
                    [](OpBuilder &nb, Location nl, ValueRange a) {
                      Value pos = cmp(nb, nl, arith::CmpFPredicate::OGT, a[1],
                                      cst(nb, nl, a[1], 0));
                      return select(nb, nl, pos, a[0], mul(nb, nl, a[2], a[0]));
                    });
    Value gradWeight =
        elementwise(b, loc, {g, x}, newTensor(b, loc, type),
                    [](OpBuilder &nb, Location nl, ValueRange a) {
                      Value pos = cmp(nb, nl, arith::CmpFPredicate::OGT, a[1],
                                      cst(nb, nl, a[1], 0));
                      return select(nb, nl, pos, cst(nb, nl, a[0], 0),
                                    mul(nb, nl, a[1], a[0]));
                    });
    if (!node.needsGrad(0))
      readOneElement(b, loc, gradInput);
    if (!node.needsGrad(1))
      readOneElement(b, loc, gradWeight);
    for (int64_t i : node.gradOperands) {
      if (i == 0) {
        grads.push_back(gradInput);
        continue;
      }
      // sum_to into the view's shape, then ViewBackward's view as [C].
      Value reduced = gradWeight;
      if (viewType.getNumElements() != type.getNumElements())
        reduced = sumInto(b, loc, gradWeight,
                          fill(b, loc, newTensor(b, loc, viewType), 0.0));
      grads.push_back(reshapeView(b, loc, reduced, weightType));
    }
    return success();
  }
};

//===----------------------------------------------------------------------===//
// nn.sub, nn.mul, nn.div: broadcasting binary ops (also `lhs op= rhs`).
// Backward: the formula at each element of the output gradient, summed over
// the dimensions the operand was broadcast along, into the operand's shape.
//===----------------------------------------------------------------------===//

/// A new tensor of `type` holding, for each of its elements, the sum of
/// body(inputs...) over the iteration points of `iterShape` that broadcast
/// to it (just body(...) when `type` has the iteration shape).
Value reduceToShape(OpBuilder &b, Location loc, ValueRange inputs,
                    ArrayRef<int64_t> iterShape, RankedTensorType type,
                    ElementFn body) {
  if (type.getShape() == iterShape)
    return elementwise(b, loc, inputs, newTensor(b, loc, type), body);
  MLIRContext *ctx = b.getContext();
  Value init = fill(b, loc, newTensor(b, loc, type), 0.0);
  SmallVector<AffineMap> maps;
  for (Value in : inputs)
    maps.push_back(broadcastMap(tensorType(in).getShape(), iterShape, ctx));
  AffineMap outMap = broadcastMap(type.getShape(), iterShape, ctx);
  maps.push_back(outMap);
  SmallVector<utils::IteratorType> iterators(iterShape.size(),
                                             utils::IteratorType::reduction);
  for (AffineExpr e : outMap.getResults())
    if (auto d = dyn_cast<AffineDimExpr>(e))
      iterators[d.getPosition()] = utils::IteratorType::parallel;
  return linalg::GenericOp::create(
             b, loc, type, inputs, init, maps, iterators,
             [&](OpBuilder &nb, Location nloc, ValueRange a) {
               Value v = body(nb, nloc, a.drop_back());
               linalg::YieldOp::create(nb, nloc, add(nb, nloc, a.back(), v));
             })
      .getResult(0);
}

template <typename OpTy, typename Formula>
struct BinaryLowering : ExternalModel<BinaryLowering<OpTy, Formula>, OpTy> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    Location loc = op->getLoc();
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    // PyTorch computes in the result's dtype; the payloads do not convert.
    for (Value operand : op->getOperands())
      if (getElementTypeOrSelf(operand.getType()) !=
          resultType.getElementType())
        return op->emitError()
               << op->getName()
               << ": the lowering does not support operands of another "
                  "element type than the result ("
               << operand.getType() << " for " << resultType << ")";
    if (cast<OpTy>(op).getInplace()) {
      if (failed(checkOverwriteNotSaved(op, op->getOperand(0))))
        return failure();
      // lhs op= rhs: the body reads rhs then lhs (the destination).
      results.push_back(elementwise(
          b, loc, operands[1], operands[0],
          [](OpBuilder &nb, Location nloc, ValueRange a) {
            return Formula::forward(nb, nloc, a[1], a[0]);
          },
          true));
      return success();
    }
    results.push_back(
        elementwise(b, loc, operands, newTensor(b, loc, resultType),
                    [](OpBuilder &nb, Location nloc, ValueRange a) {
                      return Formula::forward(nb, nloc, a[0], a[1]);
                    }));
    return success();
  }

  /// The in-place form's `self_clone`: the lhs before `lhs op= rhs`.
  static FailureOr<Value> lowerSavedTensor(OpBuilder &b, Location loc,
                                           const SavedTensorLowering &saved) {
    return lowerSelfClone(OpTy::getOperationName(), b, loc, saved);
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    Value g = node.grads[0];
    ArrayRef<int64_t> iterShape = tensorType(g).getShape();
    // lhs and rhs as saved: the lhs of the in-place form is its clone.
    SmallVector<Value, 2> operands(2);
    for (unsigned k = 0; k < 2 && k < node.savedOperands.size(); ++k)
      operands[k] = node.savedOperands[k];
    if (!operands[0] && !node.savedExtras.empty())
      operands[0] = node.savedExtras[0];
    // Formulas that compute a broadcast operand's gradient at the output's
    // shape leave the reduction to the engine (sum_to after the node):
    // every gradient first, then the reductions.
    SmallVector<std::pair<size_t, RankedTensorType>> reduceAfter;
    for (int64_t i : node.gradOperands) {
      auto type = cast<RankedTensorType>(node.forwardType.getInput(i));
      if (Formula::kFullSizeGradients && type.getShape() != iterShape) {
        reduceAfter.push_back({grads.size(), type});
        type = RankedTensorType::get(iterShape, type.getElementType());
      }
      SmallVector<Value> ins = {g};
      // The saved operands, in operand order, follow the gradient.
      SmallVector<int> slot(2, -1);
      int next = 1;
      for (unsigned k = 0; k < 2; ++k)
        if (operands[k]) {
          ins.push_back(operands[k]);
          slot[k] = next++;
        }
      grads.push_back(
          reduceToShape(b, loc, ins, iterShape, type,
                        [&](OpBuilder &nb, Location nloc, ValueRange a) {
                          Value lhs = slot[0] >= 0 ? a[slot[0]] : Value();
                          Value rhs = slot[1] >= 0 ? a[slot[1]] : Value();
                          return Formula::backward(nb, nloc, i, a[0], lhs, rhs);
                        }));
    }
    for (auto [index, type] : reduceAfter)
      grads[index] = sumInto(b, loc, grads[index],
                             fill(b, loc, newTensor(b, loc, type), 0.0));
    return success();
  }
};

// sub: d/da = grad, d/db = -grad.
struct SubFormula {
  static constexpr bool kFullSizeGradients = false;
  static Value forward(OpBuilder &b, Location l, Value x, Value y) {
    return sub(b, l, x, y);
  }
  static Value backward(OpBuilder &b, Location l, int64_t i, Value g, Value,
                        Value) {
    return i == 0 ? g : arith::NegFOp::create(b, l, g).getResult();
  }
};

// mul: d/da = grad * b, d/db = grad * a.
struct MulFormula {
  /// MulBackward0 (mul_tensor_backward) computes grad * other at the
  /// output's shape; the engine reduces it (MulOp's backward workspace).
  static constexpr bool kFullSizeGradients = true;
  static Value forward(OpBuilder &b, Location l, Value x, Value y) {
    return mul(b, l, x, y);
  }
  static Value backward(OpBuilder &b, Location l, int64_t i, Value g, Value lhs,
                        Value rhs) {
    return mul(b, l, g, i == 0 ? rhs : lhs);
  }
};

// div: d/da = grad / b; d/db = -grad * ((a / b) / b)
// (div_tensor_other_backward).
struct DivFormula {
  static constexpr bool kFullSizeGradients = false;
  static Value forward(OpBuilder &b, Location l, Value x, Value y) {
    return div(b, l, x, y);
  }
  static Value backward(OpBuilder &b, Location l, int64_t i, Value g, Value lhs,
                        Value rhs) {
    if (i == 0)
      return div(b, l, g, rhs);
    return mul(b, l, arith::NegFOp::create(b, l, g),
               div(b, l, div(b, l, lhs, rhs), rhs));
  }
};

//===----------------------------------------------------------------------===//
// nn.mean over dims (keepdim): sum then scale; backward spreads grad / count.
//===----------------------------------------------------------------------===//

/// The reduced dimensions of a mean (normalized), and the map from the
/// input's iteration space to its result.
struct MeanShape {
  SmallVector<bool> reduced;
  int64_t count = 1;
  AffineMap resultMap;
};

MeanShape meanShape(RankedTensorType input, ArrayRef<int64_t> dims,
                    bool keepdim, MLIRContext *ctx) {
  MeanShape s;
  int64_t rank = input.getRank();
  s.reduced.assign(rank, false);
  for (int64_t d : dims)
    s.reduced[d < 0 ? d + rank : d] = true;
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < rank; ++i) {
    if (!s.reduced[i])
      exprs.push_back(getAffineDimExpr(i, ctx));
    else {
      s.count *= input.getDimSize(i);
      if (keepdim)
        exprs.push_back(getAffineConstantExpr(0, ctx));
    }
  }
  s.resultMap = AffineMap::get(rank, 0, exprs, ctx);
  return s;
}

/// nn.mean and nn.sum: the sum over the dims, divided by their count for a
/// mean.
template <typename OpTy, bool IsMean>
struct ReductionLowering
    : ExternalModel<ReductionLowering<OpTy, IsMean>, OpTy> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    Location loc = op->getLoc();
    auto mean = cast<OpTy>(op);
    MLIRContext *ctx = b.getContext();
    RankedTensorType in = tensorType(operands[0]);
    MeanShape s = meanShape(in, mean.getDims(), mean.getKeepdim(), ctx);
    auto outType = cast<RankedTensorType>(op->getResult(0).getType());
    SmallVector<utils::IteratorType> iterators;
    for (bool r : s.reduced)
      iterators.push_back(r ? utils::IteratorType::reduction
                            : utils::IteratorType::parallel);
    Value sum =
        linalg::GenericOp::create(
            b, loc, outType, operands[0],
            fill(b, loc, newTensor(b, loc, outType), 0.0),
            {AffineMap::getMultiDimIdentityMap(in.getRank(), ctx), s.resultMap},
            iterators,
            [](OpBuilder &nb, Location nloc, ValueRange a) {
              linalg::YieldOp::create(nb, nloc, add(nb, nloc, a[1], a[0]));
            })
            .getResult(0);
    if (!IsMean) {
      results.push_back(sum);
      return success();
    }
    double count = s.count;
    results.push_back(elementwise(
        b, loc, {}, sum,
        [&](OpBuilder &nb, Location nloc, ValueRange a) {
          return div(nb, nloc, a[0], cst(nb, nloc, a[0], count));
        },
        true));
    return success();
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    MLIRContext *ctx = b.getContext();
    auto in = cast<RankedTensorType>(node.forwardType.getInput(0));
    auto dims = node.forwardAttrs.getAs<DenseI64ArrayAttr>("dims");
    MeanShape s = meanShape(in, dims.asArrayRef(),
                            node.forwardAttrs.contains("keepdim"), ctx);
    double count = IsMean ? s.count : 1.0;
    // mean_backward: grad.expand(sizes) / numel, one new tensor; sum's the
    // expanded gradient (materialized here).
    grads.push_back(
        linalg::GenericOp::create(
            b, loc, in, node.grads[0], newTensor(b, loc, in),
            {s.resultMap, AffineMap::getMultiDimIdentityMap(in.getRank(), ctx)},
            SmallVector<utils::IteratorType>(in.getRank(),
                                             utils::IteratorType::parallel),
            [&](OpBuilder &nb, Location nloc, ValueRange a) {
              linalg::YieldOp::create(
                  nb, nloc, div(nb, nloc, a[0], cst(nb, nloc, a[0], count)));
            })
            .getResult(0));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// nn.amax / nn.amin: the largest (smallest) value over `dims`, NaN
// propagating; backward gives each element equal to the result an equal
// share of its gradient (scale_grad_by_count), from the saved input and
// result.
//===----------------------------------------------------------------------===//

template <typename OpTy>
struct ExtremumLowering : ExternalModel<ExtremumLowering<OpTy>, OpTy> {
  static Value pick(OpBuilder &b, Location loc, Value x, Value y) {
    if (OpTy::kSmallest)
      return arith::MinimumFOp::create(b, loc, x, y);
    return arith::MaximumFOp::create(b, loc, x, y);
  }

  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    Location loc = op->getLoc();
    auto reduce = cast<OpTy>(op);
    MLIRContext *ctx = b.getContext();
    RankedTensorType in = tensorType(operands[0]);
    MeanShape s = meanShape(in, reduce.getDims(), reduce.getKeepdim(), ctx);
    auto outType = cast<RankedTensorType>(op->getResult(0).getType());
    SmallVector<utils::IteratorType> iterators;
    for (bool r : s.reduced)
      iterators.push_back(r ? utils::IteratorType::reduction
                            : utils::IteratorType::parallel);
    double start = OpTy::kSmallest ? INFINITY : -INFINITY;
    results.push_back(
        linalg::GenericOp::create(
            b, loc, outType, operands[0],
            fill(b, loc, newTensor(b, loc, outType), start),
            {AffineMap::getMultiDimIdentityMap(in.getRank(), ctx), s.resultMap},
            iterators,
            [](OpBuilder &nb, Location nloc, ValueRange a) {
              linalg::YieldOp::create(nb, nloc, pick(nb, nloc, a[1], a[0]));
            })
            .getResult(0));
    return success();
  }

  /// A linalg.generic over the input's iteration space making a new tensor
  /// of `type` (`reduce`: over the reduced dimensions, into zeros).
  static Value
  generic(OpBuilder &b, Location loc, RankedTensorType type, ValueRange ins,
          ArrayRef<AffineMap> inMaps, AffineMap outMap,
          ArrayRef<utils::IteratorType> iters,
          function_ref<Value(OpBuilder &, Location, ValueRange)> body,
          Value init = Value()) {
    SmallVector<AffineMap> maps(inMaps);
    maps.push_back(outMap);
    if (!init)
      init = newTensor(b, loc, type);
    return linalg::GenericOp::create(
               b, loc, type, ins, init, maps, iters,
               [&](OpBuilder &nb, Location nloc, ValueRange a) {
                 linalg::YieldOp::create(nb, nloc, body(nb, nloc, a));
               })
        .getResult(0);
  }

  /// The gradient of each element equal to the result: an equal share. The
  /// tensors PyTorch's backward keeps until it returns are made as it makes
  /// them (the bool masks, the int64 count, the quotient, the CPU's float
  /// copy of the mask, the gradient: getExtremumBackwardBytes); the rest it
  /// frees on the way (the int64 copy of the mask, before the quotient
  /// exists), which the executed step, freeing at the op's end, holds as
  /// one scratch buffer of the largest phase's excess.
  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    MLIRContext *ctx = b.getContext();
    Value self = node.savedOperands[0], result = node.savedResults[0];
    auto in = cast<RankedTensorType>(self.getType());
    auto outType = cast<RankedTensorType>(result.getType());
    auto dims = node.forwardAttrs.getAs<DenseI64ArrayAttr>("dims");
    MeanShape s = meanShape(in, dims.asArrayRef(),
                            node.forwardAttrs.contains("keepdim"), ctx);
    bool cpu = node.target.device == Device::Cpu;
    bool evenly = node.forwardAttrs.contains("evenly");
    Type i1 = b.getI1Type(), i64 = b.getI64Type(), f = in.getElementType();
    int64_t elem = f.getIntOrFloatBitWidth() / 8;
    ExtremumBackwardBytes bytes =
        getExtremumBackwardBytes(in.getNumElements(), outType.getNumElements(),
                                 elem, evenly, node.target.device);

    AffineMap id = AffineMap::getMultiDimIdentityMap(in.getRank(), ctx);
    AffineMap r = s.resultMap;
    AffineMap outId = AffineMap::getMultiDimIdentityMap(outType.getRank(), ctx);
    auto iterators = [](ArrayRef<bool> reduced) {
      SmallVector<utils::IteratorType> its;
      for (bool red : reduced)
        its.push_back(red ? utils::IteratorType::reduction
                          : utils::IteratorType::parallel);
      return its;
    };
    SmallVector<bool> none(in.getRank(), false);
    SmallVector<utils::IteratorType> parallel = iterators(none);
    SmallVector<utils::IteratorType> outParallel(outType.getRank(),
                                                 utils::IteratorType::parallel);
    auto toFloat = [&](OpBuilder &nb, Location nl, Value v) -> Value {
      if (v.getType() == i1)
        return arith::UIToFPOp::create(nb, nl, f, v);
      return arith::SIToFPOp::create(nb, nl, f, v);
    };
    auto isNan = [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
      return cmp(nb, nl, arith::CmpFPredicate::UNO, a[0], a[0]);
    };

    SmallVector<Value> kept;
    SmallVector<AffineMap> keptMaps;
    if (bytes.nanMask) {
      kept.push_back(
          generic(b, loc, in.clone(i1), self, {id}, id, parallel, isNan));
      keptMaps.push_back(id);
      kept.push_back(generic(b, loc, outType.clone(i1), result, {outId}, outId,
                             outParallel, isNan));
      keptMaps.push_back(r);
    }
    Value mask =
        generic(b, loc, in.clone(i1), {self, result}, {id, r}, id, parallel,
                [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                  return cmp(nb, nl, arith::CmpFPredicate::OEQ, a[0], a[1]);
                });
    Value zeros =
        evenly && cpu ? fill(b, loc, newTensor(b, loc, in), 0.0) : Value();
    Value count = generic(
        b, loc, outType.clone(i64), mask, {id}, r, iterators(s.reduced),
        [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
          return arith::AddIOp::create(
              nb, nl, arith::ExtUIOp::create(nb, nl, i64, a[0]), a[1]);
        },
        fillInteger(b, loc, newTensor(b, loc, outType.clone(i64)), 0));
    Value quotient =
        generic(b, loc, outType, {node.grads[0], count}, {outId, outId}, outId,
                outParallel, [&](OpBuilder &nb, Location nl, ValueRange a) {
                  return div(nb, nl, a[0], toFloat(nb, nl, a[1]));
                });
    Value factor = mask;
    if (bytes.maskCopy)
      factor = generic(b, loc, in, mask, {id}, id, parallel,
                       [&](OpBuilder &nb, Location nl, ValueRange a) {
                         return toFloat(nb, nl, a[0]);
                       });
    if (bytes.scratch) {
      auto type = RankedTensorType::get({bytes.scratch}, b.getI8Type());
      kept.push_back(fillInteger(b, loc, newTensor(b, loc, type), 0));
      keptMaps.push_back(
          AffineMap::get(in.getRank(), 0, getAffineConstantExpr(0, ctx), ctx));
    }
    // The last generic reads what C++ keeps until the expression ends.
    SmallVector<Value> ins{factor, quotient, count, mask};
    SmallVector<AffineMap> maps{id, r, r, id};
    llvm::append_range(ins, kept);
    llvm::append_range(maps, keptMaps);
    auto body = [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
      if (zeros) // masked_fill_(mask, quotient) into the zeros
        return select(nb, nl, a[0], a[1], a.back());
      Value m = a[0].getType() == f ? a[0] : toFloat(nb, nl, a[0]);
      return mul(nb, nl, m, a[1]);
    };
    grads.push_back(generic(b, loc, in, ins, maps, id, parallel, body,
                            zeros ? zeros : Value()));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// nn.concat: copies into one new tensor; backward copies each input's slice
// of the gradient into a new tensor (the memory analysis's input gradients).
//===----------------------------------------------------------------------===//

int64_t concatDim(DictionaryAttr attrs, int64_t rank) {
  int64_t d = attrs.getAs<IntegerAttr>("dim").getInt();
  return d < 0 ? d + rank : d;
}

struct ConcatLowering : ExternalModel<ConcatLowering, ConcatOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    auto outType = cast<RankedTensorType>(op->getResult(0).getType());
    int64_t dim = concatDim(op->getAttrDictionary(), outType.getRank());
    results.push_back(concatenate(b, op->getLoc(), outType, dim, operands));
    return success();
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    Value g = node.grads[0];
    int64_t rank = tensorType(g).getRank();
    int64_t dim = concatDim(node.forwardAttrs, rank);
    SmallVector<int64_t> starts;
    int64_t offset = 0;
    for (Type t : node.forwardType.getInputs()) {
      starts.push_back(offset);
      offset += cast<RankedTensorType>(t).getDimSize(dim);
    }
    for (int64_t i : node.gradOperands) {
      auto type = cast<RankedTensorType>(node.forwardType.getInput(i));
      int64_t start = starts[i];
      // gx[..., j, ...] = g[..., start + j, ...]
      grads.push_back(elementwise(
          b, loc, {}, newTensor(b, loc, type),
          [&](OpBuilder &nb, Location nloc, ValueRange) {
            SmallVector<Value> idx;
            for (int64_t d = 0; d < rank; ++d) {
              Value v = linalg::IndexOp::create(nb, nloc, d);
              if (d == dim && start)
                v = arith::AddIOp::create(nb, nloc, v,
                                          indexConstant(nb, nloc, start));
              idx.push_back(v);
            }
            return tensor::ExtractOp::create(nb, nloc, g, idx).getResult();
          }));
    }
    return success();
  }
};

//===----------------------------------------------------------------------===//
// nn.pad (constant): a new tensor filled with the value, the input copied
// in; backward constant_pad_nd(grad, -pad), a new input-sized tensor.
//===----------------------------------------------------------------------===//

struct PadLowering : ExternalModel<PadLowering, PadOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    Location loc = op->getLoc();
    auto pad = cast<PadOp>(op);
    auto outType = cast<RankedTensorType>(op->getResult(0).getType());
    Value x = operands[0];
    ArrayRef<int64_t> low = pad.getLow();
    double value = pad.getValue().convertToDouble();
    int64_t rank = outType.getRank();
    results.push_back(elementwise(
        b, loc, {}, newTensor(b, loc, outType),
        [&](OpBuilder &nb, Location nloc, ValueRange) {
          SmallVector<Value> idx;
          SmallVector<unsigned> checked;
          for (int64_t d = 0; d < rank; ++d) {
            Value i = linalg::IndexOp::create(nb, nloc, d);
            if (low[d])
              i = arith::SubIOp::create(nb, nloc, i,
                                        indexConstant(nb, nloc, low[d]));
            idx.push_back(i);
            checked.push_back(d);
          }
          Value fillValue =
              floatConstant(nb, nloc, outType.getElementType(), value);
          return extractOrPad(nb, nloc, x, idx, checked, fillValue);
        }));
    return success();
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    auto type = cast<RankedTensorType>(node.forwardType.getInput(0));
    ArrayRef<int64_t> low =
        node.forwardAttrs.getAs<DenseI64ArrayAttr>("low").asArrayRef();
    Value g = node.grads[0];
    // gx[i] = g[i + low]
    grads.push_back(elementwise(
        b, loc, {}, newTensor(b, loc, type),
        [&](OpBuilder &nb, Location nloc, ValueRange) {
          SmallVector<Value> idx;
          for (int64_t d = 0; d < type.getRank(); ++d) {
            Value v = linalg::IndexOp::create(nb, nloc, d);
            if (low[d])
              v = arith::AddIOp::create(nb, nloc, v,
                                        indexConstant(nb, nloc, low[d]));
            idx.push_back(v);
          }
          return tensor::ExtractOp::create(nb, nloc, g, idx).getResult();
        }));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// nn.roll: out[i] = in[(i - shift) mod n] along each rolled dimension, one
// affine gather (mod by the constant extent); the backward rolls the
// gradient by -shift into a new tensor.
//===----------------------------------------------------------------------===//

Value roll(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> shifts,
           ArrayRef<int64_t> dims, int64_t sign) {
  MLIRContext *ctx = b.getContext();
  RankedTensorType type = tensorType(x);
  int64_t rank = type.getRank();
  SmallVector<AffineExpr> source;
  for (int64_t d = 0; d < rank; ++d)
    source.push_back(getAffineDimExpr(d, ctx));
  for (auto [shift, d] : llvm::zip_equal(shifts, dims)) {
    int64_t n = type.getDimSize(d);
    // (i - s) mod n with a non-negative offset: i + (n - s mod n).
    int64_t offset = n - ((sign * shift) % n + n) % n;
    source[d] = (source[d] + offset) % n;
  }
  SmallVector<utils::IteratorType> parallel(rank,
                                            utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, type, x, newTensor(b, loc, type),
             {AffineMap::get(rank, 0, source, ctx),
              AffineMap::getMultiDimIdentityMap(rank, ctx)},
             parallel,
             [](OpBuilder &nb, Location nloc, ValueRange a) {
               linalg::YieldOp::create(nb, nloc, a[0]);
             })
      .getResult(0);
}

struct RollLowering : ExternalModel<RollLowering, RollOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    auto r = cast<RollOp>(op);
    results.push_back(
        roll(b, op->getLoc(), operands[0], r.getShifts(), r.getDims(), 1));
    return success();
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    auto array = [&](StringRef name) {
      return node.forwardAttrs.getAs<DenseI64ArrayAttr>(name).asArrayRef();
    };
    grads.push_back(
        roll(b, loc, node.grads[0], array("shifts"), array("dims"), -1));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// nn.constant: a tensor the forward pass allocates and fills; a wrapped
// Python number, where it takes no tensor memory, a constant read in place.
//===----------------------------------------------------------------------===//

struct ConstantLowering : ExternalModel<ConstantLowering, ConstantOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange,
                const LoweringOptions &options, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    Location loc = op->getLoc();
    auto c = cast<ConstantOp>(op);
    auto type = cast<RankedTensorType>(c.getType());
    auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
    if (!dense)
      return emitError(loc) << "nn.constant: the lowering needs a dense "
                               "value, got "
                            << c.getValue();
    // `x + 1.0`: torch 2.x keeps the number as a wrapped scalar, no tensor
    // memory (getWrappedNumberBytes), so the step allocates nothing for it.
    if (c.getWrappedNumber() && getWrappedNumberBytes(options.target) == 0) {
      results.push_back(arith::ConstantOp::create(b, loc, dense));
      return success();
    }
    Value out = newTensor(b, loc, type);
    if (dense.isSplat()) {
      Value v = arith::ConstantOp::create(
          b, loc, cast<TypedAttr>(dense.getSplatValue<Attribute>()));
      results.push_back(linalg::FillOp::create(b, loc, v, out).getResult(0));
      return success();
    }
    // Copied from a read-only global into the new buffer.
    Value src = arith::ConstantOp::create(b, loc, dense);
    results.push_back(
        elementwise(b, loc, src, out,
                    [](OpBuilder &, Location, ValueRange a) { return a[0]; }));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// nn.cast: a copy in another float type; backward casts the gradient back
// (ToCopyBackward), a new tensor of the input's type.
//===----------------------------------------------------------------------===//

Value convertFloat(OpBuilder &b, Location loc, Value v, Type to) {
  unsigned from = v.getType().getIntOrFloatBitWidth();
  unsigned width = to.getIntOrFloatBitWidth();
  if (from > width)
    return arith::TruncFOp::create(b, loc, to, v);
  if (from < width)
    return arith::ExtFOp::create(b, loc, to, v);
  // fp16 <-> bf16: through fp32, as the copy kernel converts.
  Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
  return arith::TruncFOp::create(b, loc, to, wide);
}

Value castInto(OpBuilder &b, Location loc, Value v, RankedTensorType type) {
  Type et = type.getElementType();
  return elementwise(b, loc, v, newTensor(b, loc, type),
                     [&](OpBuilder &nb, Location nloc, ValueRange a) {
                       return convertFloat(nb, nloc, a[0], et);
                     });
}

struct CastLowering : ExternalModel<CastLowering, CastOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    results.push_back(
        castInto(b, op->getLoc(), operands[0],
                 cast<RankedTensorType>(op->getResult(0).getType())));
    return success();
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    grads.push_back(
        castInto(b, loc, node.grads[0],
                 cast<RankedTensorType>(node.forwardType.getInput(0))));
    return success();
  }
};

} // namespace

void vram::lowering::attachElementwiseLowerings(MLIRContext *ctx) {
  SigmoidOp::attachInterface<UnaryLowering<SigmoidOp, SigmoidFormula>>(*ctx);
  TanhOp::attachInterface<UnaryLowering<TanhOp, TanhFormula>>(*ctx);
  SiluOp::attachInterface<UnaryLowering<SiluOp, SiluFormula>>(*ctx);
  HardswishOp::attachInterface<UnaryLowering<HardswishOp, HardswishFormula>>(
      *ctx);
  HardsigmoidOp::attachInterface<
      UnaryLowering<HardsigmoidOp, HardsigmoidFormula>>(*ctx);
  Relu6Op::attachInterface<UnaryLowering<Relu6Op, Relu6Formula>>(*ctx);
  LeakyReluOp::attachInterface<UnaryLowering<LeakyReluOp, LeakyReluFormula>>(
      *ctx);
  PreluOp::attachInterface<PreluLowering>(*ctx);
  EluOp::attachInterface<UnaryLowering<EluOp, EluFormula>>(*ctx);
  SoftplusOp::attachInterface<UnaryLowering<SoftplusOp, SoftplusFormula>>(*ctx);
  MishOp::attachInterface<UnaryLowering<MishOp, MishFormula>>(*ctx);
  ClampOp::attachInterface<UnaryLowering<ClampOp, ClampFormula>>(*ctx);
  PowOp::attachInterface<UnaryLowering<PowOp, PowFormula>>(*ctx);
  ErfOp::attachInterface<UnaryLowering<ErfOp, ErfFormula>>(*ctx);
  NegOp::attachInterface<UnaryLowering<NegOp, NegFormula>>(*ctx);
  ExpOp::attachInterface<UnaryLowering<ExpOp, ExpFormula>>(*ctx);
  SqrtOp::attachInterface<UnaryLowering<SqrtOp, SqrtFormula>>(*ctx);
  RsqrtOp::attachInterface<UnaryLowering<RsqrtOp, RsqrtFormula>>(*ctx);
  ReciprocalOp::attachInterface<UnaryLowering<ReciprocalOp, ReciprocalFormula>>(
      *ctx);
  SubOp::attachInterface<BinaryLowering<SubOp, SubFormula>>(*ctx);
  MulOp::attachInterface<BinaryLowering<MulOp, MulFormula>>(*ctx);
  DivOp::attachInterface<BinaryLowering<DivOp, DivFormula>>(*ctx);
  MeanOp::attachInterface<ReductionLowering<MeanOp, true>>(*ctx);
  SumOp::attachInterface<ReductionLowering<SumOp, false>>(*ctx);
  AmaxOp::attachInterface<ExtremumLowering<AmaxOp>>(*ctx);
  AminOp::attachInterface<ExtremumLowering<AminOp>>(*ctx);
  ConcatOp::attachInterface<ConcatLowering>(*ctx);
  PadOp::attachInterface<PadLowering>(*ctx);
  RollOp::attachInterface<RollLowering>(*ctx);
  ConstantOp::attachInterface<ConstantLowering>(*ctx);
  CastOp::attachInterface<CastLowering>(*ctx);
}
