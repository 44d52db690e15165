//===- RaiseDecompositions.cpp - the vram-onnx-raise pass -----------------===//
//
// torch.onnx decomposes GELU, SiLU, HardSwish, Mish (before opset 18),
// LayerNorm (before opset 17), GroupNorm and nn.Linear on >2-D inputs; the
// importer converts those nodes 1:1 and these patterns raise them back to
// the nn layer, because what a layer saves for backward differs from what its
// decomposition saves. Every match requires its intermediates to have no
// other use, so a value the model reads elsewhere is never lost. A raised
// op takes the location of the last op of its decomposition (where the
// layer's result is), except nn.linear, which stays where its matmul was.
//
//===----------------------------------------------------------------------===//

#include "vram/Import/Passes.h"

#include "FloatRounding.h"

#include "vram/Dialect/NN/NNOps.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace vram::onnx_import {
#define GEN_PASS_DEF_ONNXRAISEDECOMPOSITIONS
#include "vram/Import/Passes.h.inc"
} // namespace vram::onnx_import

using namespace mlir;
namespace nn = vram::nn;

namespace {

//===----------------------------------------------------------------------===//
// Matching helpers
//===----------------------------------------------------------------------===//

/// The value of a one-element nn.constant.
std::optional<double> scalarOf(Value v) {
  auto c = v.getDefiningOp<nn::ConstantOp>();
  if (!c)
    return std::nullopt;
  auto attr = dyn_cast<DenseElementsAttr>(c.getValue());
  if (!attr || attr.getNumElements() != 1)
    return std::nullopt;
  if (isa<FloatType>(attr.getElementType()))
    return (*attr.value_begin<APFloat>()).convertToDouble();
  if (attr.getElementType().isInteger(1))
    return (double)*attr.value_begin<bool>();
  if (isa<IntegerType>(attr.getElementType()))
    return (double)(*attr.value_begin<APInt>()).getSExtValue();
  return std::nullopt;
}

/// Within a relative 1e-3 (the exporters' constants are rounded to float).
bool near(std::optional<double> v, double want) {
  return v && std::fabs(*v - want) <= 1e-3 * std::fabs(want);
}

/// The op defining `v` when it is an `OpTy` whose result nothing else uses.
template <typename OpTy> OpTy soleUse(Value v) {
  auto op = v.getDefiningOp<OpTy>();
  return op && v.hasOneUse() ? op : OpTy();
}

/// The operand of binary `op` that is not `v` (null when `v` is neither).
Value otherOperand(Operation *op, Value v) {
  if (op->getOperand(0) == v)
    return op->getOperand(1);
  if (op->getOperand(1) == v)
    return op->getOperand(0);
  return Value();
}

/// For a commutative binary op, calls `match(a, b)` with both orders of its
/// operands; true when one matched.
template <typename Fn> bool eitherOrder(Operation *op, Fn match) {
  return match(op->getOperand(0), op->getOperand(1)) ||
         match(op->getOperand(1), op->getOperand(0));
}

bool isParam(Value v, int64_t rank) {
  return v.getDefiningOp<nn::ParamOp>() &&
         cast<RankedTensorType>(v.getType()).getRank() == rank;
}

//===----------------------------------------------------------------------===//
// GELU
//===----------------------------------------------------------------------===//

/// x of `erf(x / sqrt(2))` or `erf(x * (1 / sqrt(2)))`.
Value geluErfInput(nn::ErfOp erf) {
  Value in = erf.getInput();
  if (!in.hasOneUse())
    return Value();
  if (auto d = in.getDefiningOp<nn::DivOp>())
    return near(scalarOf(d.getRhs()), M_SQRT2) ? d.getLhs() : Value();
  if (auto m = in.getDefiningOp<nn::MulOp>()) {
    if (near(scalarOf(m.getRhs()), M_SQRT1_2))
      return m.getLhs();
    if (near(scalarOf(m.getLhs()), M_SQRT1_2))
      return m.getRhs();
  }
  return Value();
}

/// x of `tanh(sqrt(2/pi) * (x + 0.044715 * x^3))`.
Value geluTanhInput(nn::TanhOp tanh) {
  auto scaled = soleUse<nn::MulOp>(tanh.getInput());
  if (!scaled)
    return Value();
  Value inner;
  eitherOrder(scaled, [&](Value c, Value v) {
    if (!near(scalarOf(c), 0.7978845608))
      return false;
    inner = v;
    return true;
  });
  auto sum = inner ? soleUse<nn::AddOp>(inner) : nn::AddOp();
  if (!sum)
    return Value();
  Value x;
  eitherOrder(sum, [&](Value cand, Value cube) {
    auto mc = soleUse<nn::MulOp>(cube);
    if (!mc)
      return false;
    Value powered;
    eitherOrder(mc, [&](Value c, Value p) {
      if (!near(scalarOf(c), 0.044715))
        return false;
      powered = p;
      return true;
    });
    auto pw = powered ? soleUse<nn::PowOp>(powered) : nn::PowOp();
    if (!pw || pw.getInput() != cand ||
        !near(pw.getExponent().convertToDouble(), 3.0))
      return false;
    x = cand;
    return true;
  });
  return x;
}

/// `0.5 * x * (1 + t)` in any association, t = erf(...) or tanh(...):
///   (x * (1 + t)) * 0.5, ((1 + t) * 0.5) * x, or (1 + t) * (x * 0.5).
struct RaiseGelu : OpRewritePattern<nn::MulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(nn::MulOp root,
                                PatternRewriter &rewriter) const override {
    // `onePlusT` is the single-use 1 + t, `x` the input the tail multiplies.
    auto tryTail = [&](Value onePlusT, Value x) -> LogicalResult {
      auto a = soleUse<nn::AddOp>(onePlusT);
      if (!a)
        return failure();
      Value t;
      eitherOrder(a, [&](Value c, Value v) {
        if (!near(scalarOf(c), 1.0))
          return false;
        t = v;
        return true;
      });
      if (!t || !t.hasOneUse())
        return failure();
      Value inner;
      auto approximate = nn::GeluApproximation::None;
      if (auto erf = t.getDefiningOp<nn::ErfOp>()) {
        inner = geluErfInput(erf);
      } else if (auto tanh = t.getDefiningOp<nn::TanhOp>()) {
        inner = geluTanhInput(tanh);
        approximate = nn::GeluApproximation::Tanh;
      }
      if (!inner || inner != x)
        return failure();
      rewriter.replaceOpWithNewOp<nn::GeluOp>(root, x.getType(), x,
                                              approximate);
      return success();
    };
    bool matched = eitherOrder(root, [&](Value p, Value q) {
      // (1 + t) * (x * 0.5) / (1 + t) * (0.5 * x)
      if (auto h = soleUse<nn::MulOp>(q)) {
        Value hx;
        eitherOrder(h, [&](Value c, Value v) {
          if (!near(scalarOf(c), 0.5))
            return false;
          hx = v;
          return true;
        });
        if (hx && succeeded(tryTail(p, hx)))
          return true;
      }
      // m1 * s with m1 = (1 + t) * o: o = x and s = 0.5, or o = 0.5, s = x.
      auto m1 = soleUse<nn::MulOp>(p);
      if (!m1)
        return false;
      return eitherOrder(m1, [&](Value onePlusT, Value o) {
        if (near(scalarOf(q), 0.5) && !scalarOf(o))
          return succeeded(tryTail(onePlusT, o));
        if (near(scalarOf(o), 0.5))
          return succeeded(tryTail(onePlusT, q));
        return false;
      });
    });
    return success(matched);
  }
};

//===----------------------------------------------------------------------===//
// SiLU, HardSwish, Mish, clamp
//===----------------------------------------------------------------------===//

/// `x * Gate(x)` -> `Fused(x)`: SiLU (sigmoid) and HardSwish (hardsigmoid,
/// how torch.onnx exports hardswish before opset 14).
template <typename GateOp, typename FusedOp>
struct RaiseGatedActivation : OpRewritePattern<nn::MulOp> {
  using OpRewritePattern<nn::MulOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(nn::MulOp mul,
                                PatternRewriter &rewriter) const override {
    Value x;
    eitherOrder(mul, [&](Value gate, Value in) {
      auto g = soleUse<GateOp>(gate);
      if (!g || g.getInput() != in)
        return false;
      x = in;
      return true;
    });
    if (!x)
      return failure();
    rewriter.replaceOpWithNewOp<FusedOp>(mul, x.getType(), x,
                                         /*inplace=*/false);
    return success();
  }
};

/// `x * Tanh(Softplus(x))` -> `nn.mish(x)`: how torch.onnx exports mish
/// before opset 18 (Mish became an ONNX operator then).
struct RaiseMish : OpRewritePattern<nn::MulOp> {
  using OpRewritePattern<nn::MulOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(nn::MulOp mul,
                                PatternRewriter &rewriter) const override {
    Value x;
    eitherOrder(mul, [&](Value gate, Value in) {
      auto tanh = soleUse<nn::TanhOp>(gate);
      auto softplus =
          tanh ? soleUse<nn::SoftplusOp>(tanh.getInput()) : nn::SoftplusOp();
      if (!softplus || softplus.getInput() != in ||
          softplus.getBeta().convertToDouble() != 1.0)
        return false;
      x = in;
      return true;
    });
    if (!x)
      return failure();
    rewriter.replaceOpWithNewOp<nn::MishOp>(mul, x.getType(), x,
                                            /*inplace=*/false);
    return success();
  }
};

/// Clip(0, 6) is ReLU6 and Clip(0, inf) ReLU (how torch.onnx exports them).
struct RaiseClamp : OpRewritePattern<nn::ClampOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(nn::ClampOp clamp,
                                PatternRewriter &rewriter) const override {
    std::optional<APFloat> lo = clamp.getMin(), hi = clamp.getMax();
    if (!lo || !lo->isZero() || lo->isNegative())
      return failure();
    Type type = clamp.getType();
    if (!hi) {
      rewriter.replaceOpWithNewOp<nn::ReluOp>(clamp, type, clamp.getInput(),
                                              /*inplace=*/false);
      return success();
    }
    if (hi->convertToDouble() != 6.0)
      return failure();
    rewriter.replaceOpWithNewOp<nn::Relu6Op>(clamp, type, clamp.getInput(),
                                             /*inplace=*/false);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// GroupNorm
//===----------------------------------------------------------------------===//

/// torch.onnx's GroupNorm (every opset before 18):
///   r = Reshape(x, [N, G, -1]); n = InstanceNormalization(r) (imported as
///   nn.group_norm with one group per channel, no affine);
///   y = Reshape(n, shape(x)) * Unsqueeze(weight) + Unsqueeze(bias)
/// -> nn.group_norm(x, weight, bias, G). Imported 1:1 the Mul and the Add
/// would keep their inputs; PyTorch's group norm keeps x and the statistics.
struct RaiseGroupNorm : OpRewritePattern<nn::AddOp> {
  using OpRewritePattern::OpRewritePattern;

  /// The 1-D [C] tensor that `v`, of shape [C, 1, ..., 1], views.
  static Value perChannel(Value v, int64_t channels) {
    auto view = v.getDefiningOp<nn::ReshapeOp>();
    if (!view)
      return Value();
    auto type = cast<RankedTensorType>(view.getInput().getType());
    if (type.getRank() != 1 || type.getDimSize(0) != channels)
      return Value();
    return view.getInput();
  }

  LogicalResult matchAndRewrite(nn::AddOp add,
                                PatternRewriter &rewriter) const override {
    nn::GroupNormOp norm;
    Value x, weight, bias;
    int64_t groups = 0;
    eitherOrder(add, [&](Value scaled, Value b) {
      auto mul = soleUse<nn::MulOp>(scaled);
      if (!mul)
        return false;
      return eitherOrder(mul, [&](Value normed, Value w) {
        auto back = soleUse<nn::ReshapeOp>(normed);
        norm = back ? soleUse<nn::GroupNormOp>(back.getInput())
                    : nn::GroupNormOp();
        auto grouped =
            norm ? soleUse<nn::ReshapeOp>(norm.getInput()) : nn::ReshapeOp();
        if (!grouped || norm.getWeight() || norm.getBias())
          return false;
        x = grouped.getInput();
        auto xt = cast<RankedTensorType>(x.getType());
        auto gt = cast<RankedTensorType>(grouped.getType());
        groups = gt.getRank() == 3 ? gt.getDimSize(1) : 0;
        if (back.getType() != xt || xt.getRank() < 3 || groups < 1 ||
            norm.getNumGroups() != groups ||
            gt.getDimSize(0) != xt.getDimSize(0) || xt.getDimSize(1) % groups)
          return false;
        weight = perChannel(w, xt.getDimSize(1));
        bias = perChannel(b, xt.getDimSize(1));
        return weight && bias;
      });
    });
    if (!weight || !bias)
      return failure();
    auto y = nn::GroupNormOp::create(
        rewriter, add.getLoc(), add.getType(), x, weight, bias,
        rewriter.getI64IntegerAttr(groups), norm.getEpsAttr());
    rewriter.replaceOp(add, y.getResult());
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// torch.onnx exports `avg_pool2d(x, k, s, padding=p, count_include_pad=True)`
/// as a zero Pad followed by an unpadded AveragePool. Imported 1:1 the
/// padded copy is a tensor of its own that the pool's backward keeps;
/// PyTorch keeps x. The raise applies to a symmetric zero pad of the two
/// spatial dims used only by the pool, within avg_pool2d's limit (p <= k/2).
struct RaisePaddedAvgPool : OpRewritePattern<nn::AvgPool2dOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(nn::AvgPool2dOp pool,
                                PatternRewriter &rewriter) const override {
    auto pad = pool.getInput().getDefiningOp<nn::PadOp>();
    if (!pad || !pad->hasOneUse() || pad.getValue().convertToDouble() != 0)
      return failure();
    if (llvm::any_of(pool.getPadding(), [](int64_t p) { return p != 0; }))
      return failure();
    ArrayRef<int64_t> low = pad.getLow(), high = pad.getHigh();
    ArrayRef<int64_t> kernel = pool.getKernelSize();
    size_t rank = low.size();
    if (rank != 4 || high.size() != 4 || low[0] || low[1] || high[0] ||
        high[1] || kernel.size() != 2)
      return failure();
    SmallVector<int64_t> padding;
    for (unsigned i = 0; i < 2; ++i) {
      if (low[2 + i] != high[2 + i] || 2 * low[2 + i] > kernel[i])
        return failure();
      padding.push_back(low[2 + i]);
    }
    rewriter.replaceOpWithNewOp<nn::AvgPool2dOp>(
        pool, pool.getType(), pad.getInput(), pool.getKernelSizeAttr(),
        pool.getStridesAttr(), rewriter.getDenseI64ArrayAttr(padding),
        pool.getCeilModeAttr(), rewriter.getBoolAttr(true));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// LayerNorm
//===----------------------------------------------------------------------===//

/// The number of trailing dims a keepdim nn.mean reduces, or 0.
int64_t trailingMeanRank(nn::MeanOp mean) {
  if (!mean.getKeepdim())
    return 0;
  ArrayRef<int64_t> dims = mean.getDims();
  int64_t rank = cast<RankedTensorType>(mean.getInput().getType()).getRank();
  int64_t k = dims.size();
  for (int64_t i = 0; i < k; ++i)
    if (dims[i] != rank - k + i)
      return 0;
  return k;
}

/// `(x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps)` over trailing dims,
/// then an optional `* weight` and `+ bias` (1-D parameters).
struct RaiseLayerNorm : OpRewritePattern<nn::DivOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(nn::DivOp div,
                                PatternRewriter &rewriter) const override {
    Value d = div.getLhs();
    auto sub = d.getDefiningOp<nn::SubOp>();
    auto sq = soleUse<nn::SqrtOp>(div.getRhs());
    if (!sub || !sq)
      return failure();
    auto m1 = soleUse<nn::MeanOp>(sub.getRhs());
    Value x = sub.getLhs();
    if (!m1 || m1.getInput() != x)
      return failure();
    int64_t normalizedRank = trailingMeanRank(m1);
    if (!normalizedRank)
      return failure();
    // d feeds exactly the variance's pow and the division.
    nn::PowOp pw;
    for (OpOperand &use : d.getUses())
      if (auto p = dyn_cast<nn::PowOp>(use.getOwner()))
        pw = p;
    if (!pw || !pw.getResult().hasOneUse() ||
        std::distance(d.use_begin(), d.use_end()) != 2 ||
        std::fabs(pw.getExponent().convertToDouble() - 2.0) > 1e-6)
      return failure();
    auto add = soleUse<nn::AddOp>(sq.getInput());
    if (!add)
      return failure();
    std::optional<double> eps;
    nn::MeanOp m2;
    eitherOrder(add, [&](Value var, Value e) {
      auto m = soleUse<nn::MeanOp>(var);
      if (!m || m.getInput() != pw.getResult())
        return false;
      eps = scalarOf(e);
      m2 = m;
      return eps.has_value();
    });
    if (!m2 || !(*eps >= 0) || m2.getDims() != m1.getDims() ||
        m2.getKeepdim() != m1.getKeepdim())
      return failure();

    // The affine tail: `* weight` then `+ bias`, each optional.
    Operation *last = div;
    Value weight, bias;
    auto affine = [&](auto opTag, Value &operand) {
      using AffineOp = decltype(opTag);
      Value r = last->getResult(0);
      if (!r.hasOneUse())
        return;
      auto next = dyn_cast<AffineOp>(*r.user_begin());
      if (!next)
        return;
      Value other = otherOperand(next, r);
      if (other && isParam(other, 1)) {
        operand = other;
        last = next;
      }
    };
    affine(nn::MulOp(), weight);
    affine(nn::AddOp(), bias);

    rewriter.setInsertionPoint(last);
    auto ln = nn::LayerNormOp::create(
        rewriter, last->getLoc(), x.getType(), x, weight, bias,
        rewriter.getI64IntegerAttr(normalizedRank),
        rewriter.getF64FloatAttr(vram::onnx_import::roundToFloat(*eps)));
    rewriter.replaceOp(last, ln.getResult());
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Linear
//===----------------------------------------------------------------------===//

/// `matmul(x, W)` with W a 2-D parameter ([in, out], as torch.onnx stores
/// nn.Linear weights for MatMul) or a transpose of one ([out, in]), and the
/// `+ b` of a 1-D initializer of the output size that may follow.
struct RaiseLinear : OpRewritePattern<nn::MatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(nn::MatmulOp mm,
                                PatternRewriter &rewriter) const override {
    Value rhs = mm.getRhs();
    Value weight; // [out, in]
    auto perm = rhs.getDefiningOp<nn::PermuteOp>();
    if (perm && perm.getDims() == ArrayRef<int64_t>{1, 0} &&
        isParam(perm.getInput(), 2))
      weight = perm.getInput();
    else if (!isParam(rhs, 2))
      return failure();

    rewriter.setInsertionPoint(mm);
    if (!weight)
      weight = nn::PermuteOp::create(rewriter, mm.getLoc(), rhs,
                                     ArrayRef<int64_t>{1, 0});
    int64_t outFeatures =
        cast<RankedTensorType>(weight.getType()).getDimSize(0);

    // The bias: an initializer (parameter or buffer) of [out].
    Operation *last = mm;
    Value bias;
    Value r = mm.getResult();
    if (r.hasOneUse())
      if (auto add = dyn_cast<nn::AddOp>(*r.user_begin())) {
        Value b = otherOperand(add, r);
        auto bt =
            b ? dyn_cast<RankedTensorType>(b.getType()) : RankedTensorType();
        if (bt && bt.getRank() == 1 && bt.getDimSize(0) == outFeatures &&
            (b.getDefiningOp<nn::ParamOp>() ||
             b.getDefiningOp<nn::BufferOp>())) {
          bias = b;
          last = add;
        }
      }
    auto linear = nn::LinearOp::create(rewriter, mm.getLoc(), mm.getType(),
                                       mm.getLhs(), weight, bias);
    if (last != mm)
      rewriter.replaceOp(last, linear.getResult());
    else
      rewriter.replaceOp(mm, linear.getResult());
    return success();
  }
};

/// nn.linear's weight `permute(W, [1, 0])` of a parameter nothing else
/// uses becomes the parameter itself, stored transposed (it keeps its name
/// and place among the parameters): PyTorch's nn.Linear holds [out, in].
struct TransposedLinearWeight : OpRewritePattern<nn::LinearOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(nn::LinearOp linear,
                                PatternRewriter &rewriter) const override {
    auto perm = soleUse<nn::PermuteOp>(linear.getWeight());
    if (!perm || perm.getDims() != ArrayRef<int64_t>{1, 0})
      return failure();
    auto param = soleUse<nn::ParamOp>(perm.getInput());
    if (!param)
      return failure();
    rewriter.setInsertionPoint(param);
    Operation *transposed = rewriter.clone(*param);
    transposed->getResult(0).setType(perm.getType());
    rewriter.modifyOpInPlace(linear, [&] {
      linear.getWeightMutable().assign(transposed->getResult(0));
    });
    rewriter.eraseOp(perm);
    rewriter.eraseOp(param);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// Counts the ops the patterns create that are layers (not the clones of
/// parameters or the permutes of weights).
struct RaisedCounter : RewriterBase::Listener {
  int64_t count = 0;
  void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) override {
    if (isa<nn::GeluOp, nn::SiluOp, nn::HardswishOp, nn::MishOp, nn::ReluOp,
            nn::Relu6Op, nn::LayerNormOp, nn::GroupNormOp, nn::LinearOp,
            nn::AvgPool2dOp>(op))
      ++count;
  }
};

struct OnnxRaiseDecompositionsPass
    : vram::onnx_import::impl::OnnxRaiseDecompositionsBase<
          OnnxRaiseDecompositionsPass> {
  using OnnxRaiseDecompositionsBase::OnnxRaiseDecompositionsBase;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    if (raiseActivations) {
      patterns.add<RaiseGelu, RaiseClamp, RaiseMish,
                   RaiseGatedActivation<nn::SigmoidOp, nn::SiluOp>,
                   RaiseGatedActivation<nn::HardsigmoidOp, nn::HardswishOp>>(
          ctx);
    }
    if (raiseLayerNorm)
      patterns.add<RaiseLayerNorm, RaiseGroupNorm>(ctx);
    if (raisePooling)
      patterns.add<RaisePaddedAvgPool>(ctx);
    if (raiseLinear)
      patterns.add<RaiseLinear, TransposedLinearWeight>(ctx);

    // No folding and no constant CSE: the IR keeps its order (constants
    // where they are used, parameters in order of first use). The driver
    // erases what a rewrite leaves dead (the decomposition, its constants).
    RaisedCounter counter;
    GreedyRewriteConfig config;
    config.enableFolding(false)
        .enableConstantCSE(false)
        .setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled)
        .setUseTopDownTraversal(true)
        .setListener(&counter);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
    numRaised += counter.count;
  }
};

} // namespace
