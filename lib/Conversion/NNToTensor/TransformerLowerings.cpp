//===- TransformerLowerings.cpp - transformer ops on linalg/tensor --------===//
//
// LowerToTensorOpInterface models of the ops a transformer step uses:
// matmul / bmm (batch dimensions broadcast as torch.matmul does),
// layer_norm, GELU (erf and tanh), softmax / log_softmax along any
// dimension, scaled_dot_product_attention, dropout, embedding, the views
// (transpose, permute, slice, expand), contiguous, masked_fill, the 0-d
// constants of attention (mul / div by a scalar tensor, nn.constant).
//
// As in OpLowerings.cpp every tensor PyTorch allocates is a new tensor and
// only those: the per-row statistics a CPU kernel keeps in registers
// (softmax's max and sum, layer norm's moments when it recomputes them, the
// sums of a backward formula) are stack scratch. The formulas are those of
// tools/autograd/derivatives.yaml and the ATen kernels.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "vram/Dialect/NN/NNOps.h"
#include "vram/Dialect/NN/TorchSemantics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace vram;
using namespace vram::nn;
using namespace vram::lowering;

namespace {

using IterType = utils::IteratorType;

int64_t normalize(int64_t dim, int64_t rank) {
  return dim < 0 ? dim + rank : dim;
}

/// The iteration dimensions [0, n) without `drop`.
SmallVector<unsigned> allBut(unsigned n, ArrayRef<unsigned> drop) {
  SmallVector<unsigned> out;
  for (unsigned d = 0; d < n; ++d)
    if (!llvm::is_contained(drop, d))
      out.push_back(d);
  return out;
}

Value cst(OpBuilder &b, Location loc, Type type, double v) {
  return floatConstant(b, loc, type, v);
}

/// erf as math.erf: on the CPU, convert-math-to-libm makes it libm's erff
/// (LLVM has no erf intrinsic); in a GPU kernel, convert-gpu-to-nvvm makes
/// it libdevice's __nv_erff. (A call to erff in a kernel would be an
/// unresolved extern for ptxas.)
Value exactErf(OpBuilder &b, Location loc, Value x) {
  return math::ErfOp::create(b, loc, x);
}

/// An error naming the op for a case the lowering does not cover.
LogicalResult unsupported(Location loc, StringRef op, const Twine &what) {
  return emitError(loc) << op << ": the lowering does not support " << what;
}

//===----------------------------------------------------------------------===//
// nn.matmul / nn.bmm: out[batch, m, n] = sum_k lhs[batch, m, k] rhs[batch, k,
// n] with the operands' batch dimensions broadcast (torch.matmul). Backward:
// grad_lhs = g rhs^T and grad_rhs = lhs^T g, summed over the dimensions the
// operand was broadcast along (sum_to_size).
//===----------------------------------------------------------------------===//

/// The map of an operand's batch dimensions in an iteration space whose
/// first outBatch.size() dimensions are the output's batch, followed by
/// `tail`.
AffineMap batchMap(MLIRContext *ctx, ArrayRef<int64_t> operandBatch,
                   ArrayRef<int64_t> outBatch, unsigned numDims,
                   ArrayRef<unsigned> tail) {
  SmallVector<AffineExpr> exprs;
  int64_t offset = outBatch.size() - operandBatch.size();
  for (auto [i, size] : llvm::enumerate(operandBatch)) {
    int64_t d = offset + i;
    exprs.push_back(size == 1 && outBatch[d] != 1
                        ? getAffineConstantExpr(0, ctx)
                        : getAffineDimExpr(d, ctx));
  }
  for (unsigned d : tail)
    exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(numDims, 0, exprs, ctx);
}

/// init += a * b over `maps`.
Value contraction(OpBuilder &b, Location loc, Value lhs, Value rhs, Value init,
                  ArrayRef<AffineMap> maps) {
  return generic(b, loc, {lhs, rhs}, init, maps,
                 [](OpBuilder &nb, Location nloc, ValueRange a) {
                   return add(nb, nloc, a[2], mul(nb, nloc, a[0], a[1]));
                 });
}

template <typename OpTy>
struct MatmulLowering : ExternalModel<MatmulLowering<OpTy>, OpTy> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    Location loc = op->getLoc();
    auto outType = cast<RankedTensorType>(op->getResult(0).getType());
    MLIRContext *ctx = b.getContext();
    ArrayRef<int64_t> outBatch = outType.getShape().drop_back(2);
    unsigned nb = outBatch.size(), m = nb, n = nb + 1, k = nb + 2;
    unsigned numDims = nb + 3;
    Value lhs = operands[0], rhs = operands[1];
    AffineMap lhsMap = batchMap(ctx, tensorType(lhs).getShape().drop_back(2),
                                outBatch, numDims, {m, k});
    AffineMap rhsMap = batchMap(ctx, tensorType(rhs).getShape().drop_back(2),
                                outBatch, numDims, {k, n});
    SmallVector<unsigned> outDims = range(0, nb);
    outDims.append({m, n});
    Value init = fill(b, loc, newTensor(b, loc, outType), 0.0);
    results.push_back(
        contraction(b, loc, lhs, rhs, init,
                    {lhsMap, rhsMap, dimMap(ctx, numDims, outDims)}));
    return success();
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    MLIRContext *ctx = b.getContext();
    Value g = node.grads[0];
    ArrayRef<int64_t> outBatch = tensorType(g).getShape().drop_back(2);
    unsigned nb = outBatch.size(), m = nb, n = nb + 1, k = nb + 2;
    unsigned numDims = nb + 3;
    SmallVector<unsigned> gDims = range(0, nb);
    gDims.append({m, n});
    AffineMap gMap = dimMap(ctx, numDims, gDims);
    for (int64_t i : node.gradOperands) {
      auto type = cast<RankedTensorType>(node.forwardType.getInput(i));
      Value init = fill(b, loc, newTensor(b, loc, type), 0.0);
      ArrayRef<int64_t> batch = type.getShape().drop_back(2);
      if (i == 0) {
        // grad_lhs[batch, m, k] = sum_n g[batch, m, n] rhs[batch, k, n]
        Value rhs = node.savedOperands[1];
        AffineMap rhsMap =
            batchMap(ctx, tensorType(rhs).getShape().drop_back(2), outBatch,
                     numDims, {k, n});
        grads.push_back(contraction(
            b, loc, g, rhs, init,
            {gMap, rhsMap, batchMap(ctx, batch, outBatch, numDims, {m, k})}));
      } else {
        // grad_rhs[batch, k, n] = sum_m lhs[batch, m, k] g[batch, m, n]
        Value lhs = node.savedOperands[0];
        AffineMap lhsMap =
            batchMap(ctx, tensorType(lhs).getShape().drop_back(2), outBatch,
                     numDims, {m, k});
        grads.push_back(contraction(
            b, loc, lhs, g, init,
            {lhsMap, gMap, batchMap(ctx, batch, outBatch, numDims, {k, n})}));
      }
    }
    return success();
  }
};

//===----------------------------------------------------------------------===//
// nn.layer_norm over the trailing `normalized_rank` dimensions.
// Forward (native_layer_norm): mean and biased variance per row,
// y = (x - mean) * rstd * w + b; the kernel returns mean and rstd ([..., 1],
// the nn.saved tensors). Backward (native_layer_norm_backward), with
// xhat = (x - mean) rstd and dxhat = g w:
//   dx = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat)),
//   dw = sum_rows(g xhat), db = sum_rows(g).
//===----------------------------------------------------------------------===//

struct NormShape {
  unsigned rank, lead; // iteration rank, number of row dimensions
  int64_t count;       // elements per row
};

NormShape normShape(RankedTensorType x, int64_t normalizedRank) {
  NormShape s{(unsigned)x.getRank(), (unsigned)(x.getRank() - normalizedRank),
              1};
  for (int64_t d : x.getShape().drop_front(s.lead))
    s.count *= d;
  return s;
}

/// Row statistics of layer norm on the stack: sum(x) / N and
/// 1 / sqrt(sum((x - mean)^2) / N + eps), shaped [lead...].
void layerNormStats(OpBuilder &b, Location loc, Value x, NormShape s,
                    double eps, Value &mean, Value &rstd) {
  MLIRContext *ctx = b.getContext();
  auto xt = tensorType(x);
  auto rowType = RankedTensorType::get(xt.getShape().take_front(s.lead),
                                       xt.getElementType());
  AffineMap id = AffineMap::getMultiDimIdentityMap(s.rank, ctx);
  AffineMap row = dimMap(ctx, s.rank, range(0, s.lead));
  double invN = 1.0 / s.count;
  Value sum =
      generic(b, loc, x, fill(b, loc, stackScratch(b, loc, rowType), 0),
              {id, row}, [](OpBuilder &nb, Location nloc, ValueRange a) {
                return add(nb, nloc, a[1], a[0]);
              });
  mean = elementwise(
      b, loc, {}, sum,
      [&](OpBuilder &nb, Location nloc, ValueRange a) {
        return mul(nb, nloc, a[0], cst(nb, nloc, a[0].getType(), invN));
      },
      true);
  Value sq =
      generic(b, loc, {x, mean}, fill(b, loc, stackScratch(b, loc, rowType), 0),
              {id, row, row}, [](OpBuilder &nb, Location nloc, ValueRange a) {
                Value d = sub(nb, nloc, a[0], a[1]);
                return add(nb, nloc, a[2], mul(nb, nloc, d, d));
              });
  rstd = elementwise(
      b, loc, {}, sq,
      [&](OpBuilder &nb, Location nloc, ValueRange a) {
        Value var = mul(nb, nloc, a[0], cst(nb, nloc, a[0].getType(), invN));
        Value v = add(nb, nloc, var, cst(nb, nloc, var.getType(), eps));
        return math::RsqrtOp::create(nb, nloc, v).getResult();
      },
      true);
}

/// Which of weight / bias a layer norm has, from its operand segments.
void normAffine(DictionaryAttr attrs, unsigned numInputs, bool &hasWeight,
                bool &hasBias) {
  hasWeight = hasBias = numInputs == 3;
  if (numInputs != 2)
    return;
  auto segments = attrs.getAs<DenseI32ArrayAttr>("operandSegmentSizes");
  hasWeight = segments && segments[1] == 1;
  hasBias = !hasWeight;
}

/// A row statistic ([lead...], on the stack) copied into the kernel's
/// output tensor of `type` ([lead..., 1...] or [lead...]).
Value statToTensor(OpBuilder &b, Location loc, Value stat,
                   RankedTensorType type, unsigned lead) {
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> rowExprs;
  for (unsigned d = 0; d < lead; ++d)
    rowExprs.push_back(getAffineDimExpr(d, ctx));
  AffineMap row = AffineMap::get(type.getRank(), 0, rowExprs, ctx);
  return generic(b, loc, stat, newTensor(b, loc, type),
                 {row, AffineMap::getMultiDimIdentityMap(type.getRank(), ctx)},
                 [](OpBuilder &, Location, ValueRange a) { return a[0]; });
}

/// The backward of a normalization over the trailing dimensions, xhat =
/// (x - mean) rstd (layer_norm) or x rstd (rms_norm: no `mean`), y = xhat w
/// + b, with dxhat = g w and N the normalized count:
///   dx = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat)), without the
///        mean(dxhat) term when not centered;
///   dw = sum_rows(g xhat), db = sum_rows(g).
/// Pushes the gradient of each of node.gradOperands.
void rowNormBackward(OpBuilder &b, Location loc, const BackwardLowering &node,
                     Value mean, Value rstd, bool hasWeight, bool hasBias,
                     SmallVectorImpl<Value> &grads) {
  MLIRContext *ctx = b.getContext();
  Value x = node.savedOperands[0];
  auto xt = tensorType(x);
  auto rank = node.forwardAttrs.getAs<IntegerAttr>("normalized_rank");
  NormShape s = normShape(xt, rank ? rank.getInt() : 1);
  AffineMap id = AffineMap::getMultiDimIdentityMap(s.rank, ctx);
  AffineMap statMap =
      broadcastMap(tensorType(rstd).getShape(), xt.getShape(), ctx);
  AffineMap col = dimMap(ctx, s.rank, range(s.lead, s.rank));
  AffineMap row = dimMap(ctx, s.rank, range(0, s.lead));
  auto rowType = RankedTensorType::get(xt.getShape().take_front(s.lead),
                                       xt.getElementType());
  // At one element: x, rstd, g, then w and mean when there are.
  SmallVector<Value> ins = {x, rstd, node.grads[0]};
  SmallVector<AffineMap> maps = {id, statMap, id};
  if (hasWeight) {
    ins.push_back(node.savedOperands[1]);
    maps.push_back(col);
  }
  bool centered = (bool)mean;
  unsigned meanAt = ins.size();
  if (centered) {
    ins.push_back(mean);
    maps.push_back(statMap);
  }
  unsigned numIns = ins.size();
  auto xhat = [=](OpBuilder &nb, Location nloc, ValueRange a) {
    Value c = centered ? sub(nb, nloc, a[0], a[meanAt]) : a[0];
    return mul(nb, nloc, c, a[1]);
  };
  auto dxhat = [=](OpBuilder &nb, Location nloc, ValueRange a) {
    return hasWeight ? mul(nb, nloc, a[2], a[3]) : a[2];
  };
  unsigned numInputs = node.forwardType.getNumInputs();
  for (int64_t i : node.gradOperands) {
    auto type = cast<RankedTensorType>(node.forwardType.getInput(i));
    if (i == 0) {
      SmallVector<AffineMap> sumMaps(maps);
      sumMaps.push_back(row);
      SmallVector<Value> dxIns(ins);
      if (centered)
        dxIns.push_back(generic(
            b, loc, ins, fill(b, loc, stackScratch(b, loc, rowType), 0),
            sumMaps, [&](OpBuilder &nb, Location nloc, ValueRange a) {
              return add(nb, nloc, a.back(), dxhat(nb, nloc, a.drop_back()));
            }));
      dxIns.push_back(generic(
          b, loc, ins, fill(b, loc, stackScratch(b, loc, rowType), 0), sumMaps,
          [&](OpBuilder &nb, Location nloc, ValueRange a) {
            ValueRange e = a.drop_back();
            return add(nb, nloc, a.back(),
                       mul(nb, nloc, dxhat(nb, nloc, e), xhat(nb, nloc, e)));
          }));
      SmallVector<AffineMap> dxMaps(maps);
      dxMaps.append(dxIns.size() - numIns, row);
      dxMaps.push_back(id);
      double invN = 1.0 / s.count;
      grads.push_back(generic(
          b, loc, dxIns, newTensor(b, loc, type), dxMaps,
          [&](OpBuilder &nb, Location nloc, ValueRange a) {
            ValueRange e = a.take_front(numIns);
            Value sdx = a[a.size() - 2];
            Value n = cst(nb, nloc, sdx.getType(), invN);
            Value v = dxhat(nb, nloc, e);
            if (centered)
              v = sub(nb, nloc, v, mul(nb, nloc, a[numIns], n));
            v = sub(nb, nloc, v,
                    mul(nb, nloc, xhat(nb, nloc, e), mul(nb, nloc, sdx, n)));
            return mul(nb, nloc, e[1], v);
          }));
      continue;
    }
    // dw = sum_rows(g xhat), db = sum_rows(g): over the row dimensions.
    bool isBias = i == (int64_t)numInputs - 1 && hasBias;
    SmallVector<AffineMap> sumMaps(maps);
    sumMaps.push_back(col);
    grads.push_back(generic(
        b, loc, ins, fill(b, loc, newTensor(b, loc, type), 0), sumMaps,
        [&](OpBuilder &nb, Location nloc, ValueRange a) {
          ValueRange e = a.drop_back();
          Value term = isBias ? e[2] : mul(nb, nloc, e[2], xhat(nb, nloc, e));
          return add(nb, nloc, a.back(), term);
        }));
  }
}

struct LayerNormLowering : ExternalModel<LayerNormLowering, LayerNormOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    auto ln = cast<LayerNormOp>(op);
    Location loc = op->getLoc();
    MLIRContext *ctx = b.getContext();
    Value x = operands[0];
    Value w = ln.getWeight() ? operands[1] : Value();
    Value bias = ln.getBias() ? operands.back() : Value();
    NormShape s = normShape(tensorType(x), ln.getNormalizedRank());
    Value mean, rstd;
    layerNormStats(b, loc, x, s, ln.getEps().convertToDouble(), mean, rstd);
    AffineMap id = AffineMap::getMultiDimIdentityMap(s.rank, ctx);
    AffineMap row = dimMap(ctx, s.rank, range(0, s.lead));
    AffineMap col = dimMap(ctx, s.rank, range(s.lead, s.rank));
    SmallVector<Value> ins = {x, mean, rstd};
    SmallVector<AffineMap> maps = {id, row, row};
    if (w) {
      ins.push_back(w);
      maps.push_back(col);
    }
    if (bias) {
      ins.push_back(bias);
      maps.push_back(col);
    }
    maps.push_back(id);
    bool hasW = (bool)w, hasB = (bool)bias;
    results.push_back(
        generic(b, loc, ins, newTensor(b, loc, tensorType(x)), maps,
                [&](OpBuilder &nb, Location nloc, ValueRange a) {
                  Value y = mul(nb, nloc, sub(nb, nloc, a[0], a[1]), a[2]);
                  unsigned next = 3;
                  if (hasW)
                    y = mul(nb, nloc, y, a[next++]);
                  if (hasB)
                    y = add(nb, nloc, y, a[next++]);
                  return y;
                }));
    return success();
  }

  static FailureOr<Value> lowerSavedTensor(OpBuilder &b, Location loc,
                                           const SavedTensorLowering &saved) {
    if (saved.kind != "mean" && saved.kind != "rstd")
      return emitError(loc) << "nn.layer_norm: no lowering of the saved "
                               "tensor '"
                            << saved.kind << "'";
    Value x = saved.operands[0];
    auto rank = saved.forwardAttrs.getAs<IntegerAttr>("normalized_rank");
    auto eps = saved.forwardAttrs.getAs<FloatAttr>("eps");
    NormShape s = normShape(tensorType(x), rank ? rank.getInt() : 1);
    Value mean, rstd;
    layerNormStats(b, loc, x, s, eps ? eps.getValueAsDouble() : 1e-5, mean,
                   rstd);
    // The kernel's output tensor ([..., 1, ...]): a copy of the row value.
    return statToTensor(b, loc, saved.kind == "mean" ? mean : rstd,
                        cast<RankedTensorType>(saved.resultType), s.lead);
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    bool hasWeight, hasBias;
    normAffine(node.forwardAttrs, node.forwardType.getNumInputs(), hasWeight,
               hasBias);
    rowNormBackward(b, loc, node, /*mean=*/node.savedExtras[0],
                    /*rstd=*/node.savedExtras[1], hasWeight, hasBias, grads);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// nn.rms_norm over the trailing `normalized_rank` dimensions, as the fused
// kernel the analysis models (input, weight and rstd saved; torch 2.7's
// _fused_rms_norm): rstd = 1 / sqrt(mean(x^2) + eps) per row (fp32, the
// nn.saved `rstd`, [..., 1]), y = x rstd w. Backward, with xhat = x rstd
// and dxhat = g w:
//   dx = rstd (dxhat - xhat mean(dxhat xhat)), dw = sum_rows(g xhat).
//===----------------------------------------------------------------------===//

/// 1 / sqrt(sum(x^2) / N + eps) per row, on the stack, shaped [lead...].
Value rmsNormRstd(OpBuilder &b, Location loc, Value x, NormShape s,
                  double eps) {
  MLIRContext *ctx = b.getContext();
  auto xt = tensorType(x);
  auto rowType = RankedTensorType::get(xt.getShape().take_front(s.lead),
                                       xt.getElementType());
  AffineMap id = AffineMap::getMultiDimIdentityMap(s.rank, ctx);
  AffineMap row = dimMap(ctx, s.rank, range(0, s.lead));
  Value sq = generic(b, loc, x, fill(b, loc, stackScratch(b, loc, rowType), 0),
                     {id, row}, [](OpBuilder &nb, Location nloc, ValueRange a) {
                       return add(nb, nloc, a[1], mul(nb, nloc, a[0], a[0]));
                     });
  double invN = 1.0 / s.count;
  return elementwise(
      b, loc, {}, sq,
      [&](OpBuilder &nb, Location nloc, ValueRange a) {
        Value ms = mul(nb, nloc, a[0], cst(nb, nloc, a[0].getType(), invN));
        Value v = add(nb, nloc, ms, cst(nb, nloc, ms.getType(), eps));
        return math::RsqrtOp::create(nb, nloc, v).getResult();
      },
      true);
}

double epsOf(DictionaryAttr attrs, double otherwise) {
  auto eps = attrs.getAs<FloatAttr>("eps");
  return eps ? eps.getValueAsDouble() : otherwise;
}

struct RmsNormLowering : ExternalModel<RmsNormLowering, RmsNormOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    auto rn = cast<RmsNormOp>(op);
    Location loc = op->getLoc();
    MLIRContext *ctx = b.getContext();
    Value x = operands[0];
    Value w = rn.getWeight() ? operands[1] : Value();
    NormShape s = normShape(tensorType(x), rn.getNormalizedRank());
    Value rstd = rmsNormRstd(b, loc, x, s, rn.getEps().convertToDouble());
    AffineMap id = AffineMap::getMultiDimIdentityMap(s.rank, ctx);
    AffineMap row = dimMap(ctx, s.rank, range(0, s.lead));
    AffineMap col = dimMap(ctx, s.rank, range(s.lead, s.rank));
    SmallVector<Value> ins = {x, rstd};
    SmallVector<AffineMap> maps = {id, row};
    if (w) {
      ins.push_back(w);
      maps.push_back(col);
    }
    maps.push_back(id);
    bool hasW = (bool)w;
    results.push_back(generic(b, loc, ins, newTensor(b, loc, tensorType(x)),
                              maps,
                              [&](OpBuilder &nb, Location nloc, ValueRange a) {
                                Value y = mul(nb, nloc, a[0], a[1]);
                                return hasW ? mul(nb, nloc, y, a[2]) : y;
                              }));
    return success();
  }

  static FailureOr<Value> lowerSavedTensor(OpBuilder &b, Location loc,
                                           const SavedTensorLowering &saved) {
    if (saved.kind != "rstd")
      return emitError(loc) << "nn.rms_norm: no lowering of the saved tensor '"
                            << saved.kind << "'";
    Value x = saved.operands[0];
    auto rank = saved.forwardAttrs.getAs<IntegerAttr>("normalized_rank");
    NormShape s = normShape(tensorType(x), rank ? rank.getInt() : 1);
    Value rstd = rmsNormRstd(b, loc, x, s, epsOf(saved.forwardAttrs, 1e-6));
    return statToTensor(b, loc, rstd, cast<RankedTensorType>(saved.resultType),
                        s.lead);
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    bool hasWeight = node.forwardType.getNumInputs() == 2;
    rowNormBackward(b, loc, node, /*mean=*/Value(),
                    /*rstd=*/node.savedExtras[0], hasWeight,
                    /*hasBias=*/false, grads);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// nn.group_norm of [N, C, *]: the input viewed as [N, G, C/G, S] (S the
// spatial size), layer norm's statistics over the last two dimensions
// (native_group_norm: mean and rstd [N, G], the nn.saved tensors), the
// weight and bias viewed as [G, C/G]. Backward (native_group_norm_backward),
// per group, with xhat = (x - mean) rstd and dxhat = g w[c]:
//   dx = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat)),
//   dw[c] = sum_{n,s}(g xhat), db[c] = sum_{n,s}(g).
//===----------------------------------------------------------------------===//

struct GroupShape {
  int64_t n, groups, perGroup, spatial;
  RankedTensorType view(Type et) const {
    return RankedTensorType::get({n, groups, perGroup, spatial}, et);
  }
  RankedTensorType channels(Type et) const {
    return RankedTensorType::get({groups, perGroup}, et);
  }
  NormShape norm() const { return {4, 2, perGroup * spatial}; }
};

GroupShape groupShape(RankedTensorType x, int64_t groups) {
  GroupShape s{x.getDimSize(0), groups, x.getDimSize(1) / groups, 1};
  for (int64_t d : x.getShape().drop_front(2))
    s.spatial *= d;
  return s;
}

/// `v` ([N, C, *] or [C]) as the grouped view; a row-major tensor only (the
/// reshape is then a view, as in PyTorch's kernel).
FailureOr<Value> groupView(OpBuilder &b, Location loc, Value v,
                           RankedTensorType type, StringRef what) {
  if (!isContiguous(v))
    return unsupported(loc, "nn.group_norm", Twine("a non-contiguous ") + what);
  return reshapeView(b, loc, v, type);
}

struct GroupNormLowering : ExternalModel<GroupNormLowering, GroupNormOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    auto gn = cast<GroupNormOp>(op);
    Location loc = op->getLoc();
    MLIRContext *ctx = b.getContext();
    auto xt = tensorType(operands[0]);
    Type et = xt.getElementType();
    GroupShape gs = groupShape(xt, gn.getNumGroups());
    FailureOr<Value> x = groupView(b, loc, operands[0], gs.view(et), "input");
    if (failed(x))
      return failure();
    SmallVector<Value> affine;
    if (gn.getWeight())
      affine.push_back(operands[1]);
    if (gn.getBias())
      affine.push_back(operands.back());
    Value mean, rstd;
    layerNormStats(b, loc, *x, gs.norm(), gn.getEps().convertToDouble(), mean,
                   rstd);
    AffineMap id = AffineMap::getMultiDimIdentityMap(4, ctx);
    AffineMap row = dimMap(ctx, 4, {0, 1});
    AffineMap chan = dimMap(ctx, 4, {1, 2});
    SmallVector<Value> ins = {*x, mean, rstd};
    SmallVector<AffineMap> maps = {id, row, row};
    for (Value a : affine) {
      FailureOr<Value> v = groupView(b, loc, a, gs.channels(et), "weight");
      if (failed(v))
        return failure();
      ins.push_back(*v);
      maps.push_back(chan);
    }
    maps.push_back(id);
    bool hasW = (bool)gn.getWeight(), hasB = (bool)gn.getBias();
    Value y = generic(b, loc, ins, newTensor(b, loc, gs.view(et)), maps,
                      [&](OpBuilder &nb, Location nloc, ValueRange a) {
                        Value y =
                            mul(nb, nloc, sub(nb, nloc, a[0], a[1]), a[2]);
                        unsigned next = 3;
                        if (hasW)
                          y = mul(nb, nloc, y, a[next++]);
                        if (hasB)
                          y = add(nb, nloc, y, a[next++]);
                        return y;
                      });
    results.push_back(reshapeView(b, loc, y, xt));
    return success();
  }

  static FailureOr<Value> lowerSavedTensor(OpBuilder &b, Location loc,
                                           const SavedTensorLowering &saved) {
    if (saved.kind == "repeated_weight") {
      // An instance norm's weight.repeat(N): [N, C] broadcast, viewed flat.
      auto type = cast<RankedTensorType>(saved.resultType);
      Value weight = saved.operands[1];
      int64_t c = tensorType(weight).getDimSize(0);
      auto grid = RankedTensorType::get({type.getDimSize(0) / c, c},
                                        type.getElementType());
      MLIRContext *ctx = b.getContext();
      Value repeated = generic(
          b, loc, weight, newTensor(b, loc, grid),
          {dimMap(ctx, 2, {1}), AffineMap::getMultiDimIdentityMap(2, ctx)},
          [](OpBuilder &, Location, ValueRange a) { return a[0]; });
      return reshapeView(b, loc, repeated, type);
    }
    if (saved.kind != "mean" && saved.kind != "rstd")
      return emitError(loc) << "nn.group_norm: no lowering of the saved "
                               "tensor '"
                            << saved.kind << "'";
    auto xt = tensorType(saved.operands[0]);
    auto groups = saved.forwardAttrs.getAs<IntegerAttr>("num_groups");
    GroupShape gs = groupShape(xt, groups.getInt());
    FailureOr<Value> x = groupView(b, loc, saved.operands[0],
                                   gs.view(xt.getElementType()), "input");
    if (failed(x))
      return failure();
    Value mean, rstd;
    layerNormStats(b, loc, *x, gs.norm(), epsOf(saved.forwardAttrs, 1e-5), mean,
                   rstd);
    return statToTensor(b, loc, saved.kind == "mean" ? mean : rstd,
                        cast<RankedTensorType>(saved.resultType), 2);
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    MLIRContext *ctx = b.getContext();
    bool hasWeight, hasBias;
    normAffine(node.forwardAttrs, node.forwardType.getNumInputs(), hasWeight,
               hasBias);
    auto xt = cast<RankedTensorType>(node.forwardType.getInput(0));
    Type et = xt.getElementType();
    auto groups = node.forwardAttrs.getAs<IntegerAttr>("num_groups");
    GroupShape gs = groupShape(xt, groups.getInt());
    FailureOr<Value> x =
        groupView(b, loc, node.savedOperands[0], gs.view(et), "input");
    FailureOr<Value> g =
        groupView(b, loc, node.grads[0], gs.view(et), "gradient");
    if (failed(x) || failed(g))
      return failure();
    Value mean = node.savedExtras[0], rstd = node.savedExtras[1];
    AffineMap id = AffineMap::getMultiDimIdentityMap(4, ctx);
    AffineMap row = dimMap(ctx, 4, {0, 1});
    AffineMap chan = dimMap(ctx, 4, {1, 2});
    auto rowType = RankedTensorType::get({gs.n, gs.groups}, et);
    SmallVector<Value> ins = {*x, mean, rstd, *g};
    SmallVector<AffineMap> maps = {id, row, row, id};
    if (hasWeight) {
      FailureOr<Value> w =
          groupView(b, loc, node.savedOperands[1], gs.channels(et), "weight");
      if (failed(w))
        return failure();
      ins.push_back(*w);
      maps.push_back(chan);
    }
    auto xhat = [](OpBuilder &nb, Location nloc, ValueRange a) {
      return mul(nb, nloc, sub(nb, nloc, a[0], a[1]), a[2]);
    };
    auto dxhat = [hasWeight](OpBuilder &nb, Location nloc, ValueRange a) {
      return hasWeight ? mul(nb, nloc, a[3], a[4]) : a[3];
    };
    for (int64_t i : node.gradOperands) {
      auto type = cast<RankedTensorType>(node.forwardType.getInput(i));
      bool isBias = i == (int64_t)node.forwardType.getNumInputs() - 1 &&
                    hasBias && i != 0;
      if (i == 0) {
        SmallVector<AffineMap> sumMaps(maps);
        sumMaps.push_back(row);
        Value sumD = generic(
            b, loc, ins, fill(b, loc, stackScratch(b, loc, rowType), 0),
            sumMaps, [&](OpBuilder &nb, Location nloc, ValueRange a) {
              return add(nb, nloc, a.back(), dxhat(nb, nloc, a.drop_back()));
            });
        Value sumDX = generic(
            b, loc, ins, fill(b, loc, stackScratch(b, loc, rowType), 0),
            sumMaps, [&](OpBuilder &nb, Location nloc, ValueRange a) {
              ValueRange e = a.drop_back();
              return add(nb, nloc, a.back(),
                         mul(nb, nloc, dxhat(nb, nloc, e), xhat(nb, nloc, e)));
            });
        SmallVector<Value> dxIns(ins);
        dxIns.append({sumD, sumDX});
        SmallVector<AffineMap> dxMaps(maps);
        dxMaps.append({row, row, id});
        double invN = 1.0 / gs.norm().count;
        Value dx = generic(
            b, loc, dxIns, newTensor(b, loc, gs.view(et)), dxMaps,
            [&](OpBuilder &nb, Location nloc, ValueRange a) {
              ValueRange e = a.drop_back(3);
              Value sd = a[a.size() - 3], sdx = a[a.size() - 2];
              Value n = cst(nb, nloc, sd.getType(), invN);
              Value v = sub(nb, nloc, dxhat(nb, nloc, e), mul(nb, nloc, sd, n));
              v = sub(nb, nloc, v,
                      mul(nb, nloc, xhat(nb, nloc, e), mul(nb, nloc, sdx, n)));
              return mul(nb, nloc, e[2], v);
            });
        grads.push_back(reshapeView(b, loc, dx, type));
        continue;
      }
      // dw = sum_{n,s}(g xhat), db = sum_{n,s}(g), per channel.
      Value init = fill(b, loc, newTensor(b, loc, gs.channels(et)), 0);
      SmallVector<AffineMap> sumMaps(maps);
      sumMaps.push_back(chan);
      Value sum =
          generic(b, loc, ins, init, sumMaps,
                  [&](OpBuilder &nb, Location nloc, ValueRange a) {
                    ValueRange e = a.drop_back();
                    Value term =
                        isBias ? e[3] : mul(nb, nloc, e[3], xhat(nb, nloc, e));
                    return add(nb, nloc, a.back(), term);
                  });
      grads.push_back(reshapeView(b, loc, sum, type));
    }
    return success();
  }
};

//===----------------------------------------------------------------------===//
// nn.gelu: x Phi(x) with the exact erf, or PyTorch's tanh approximation;
// backward GeluBackward (aten/src/ATen/native/cpu/Activation.cpp).
//===----------------------------------------------------------------------===//

constexpr double kSqrt1_2 = 0.70710678118654752440;
constexpr double kAlpha = 0.39894228040143267794; // 1 / sqrt(2 pi)
constexpr double kBeta = 0.79788456080286535588;  // sqrt(2 / pi)
constexpr double kKappa = 0.044715;

Value geluForward(OpBuilder &b, Location loc, Value x, bool tanhForm) {
  Type t = x.getType();
  Value half = cst(b, loc, t, 0.5), one = cst(b, loc, t, 1.0);
  if (tanhForm) {
    Value cube = mul(b, loc, mul(b, loc, x, x), x);
    Value inner =
        mul(b, loc, cst(b, loc, t, kBeta),
            add(b, loc, x, mul(b, loc, cst(b, loc, t, kKappa), cube)));
    Value th = math::TanhOp::create(b, loc, inner);
    return mul(b, loc, mul(b, loc, half, x), add(b, loc, one, th));
  }
  Value e = exactErf(b, loc, mul(b, loc, x, cst(b, loc, t, kSqrt1_2)));
  return mul(b, loc, mul(b, loc, x, half), add(b, loc, one, e));
}

Value geluBackward(OpBuilder &b, Location loc, Value g, Value x,
                   bool tanhForm) {
  Type t = x.getType();
  Value half = cst(b, loc, t, 0.5), one = cst(b, loc, t, 1.0);
  if (tanhForm) {
    Value sq = mul(b, loc, x, x);
    Value cube = mul(b, loc, sq, x);
    Value inner =
        mul(b, loc, cst(b, loc, t, kBeta),
            add(b, loc, x, mul(b, loc, cst(b, loc, t, kKappa), cube)));
    Value th = math::TanhOp::create(b, loc, inner);
    Value left = mul(b, loc, half, x);
    Value right = add(b, loc, one, th);
    Value leftD = mul(b, loc, half, right);
    Value dth = sub(b, loc, one, mul(b, loc, th, th));
    Value innerD =
        mul(b, loc, cst(b, loc, t, kBeta),
            add(b, loc, one, mul(b, loc, cst(b, loc, t, 3 * kKappa), sq)));
    Value rightD = mul(b, loc, mul(b, loc, left, dth), innerD);
    return mul(b, loc, g, add(b, loc, leftD, rightD));
  }
  Value cdf =
      mul(b, loc, half,
          add(b, loc, one,
              exactErf(b, loc, mul(b, loc, x, cst(b, loc, t, kSqrt1_2)))));
  Value pdf =
      mul(b, loc, cst(b, loc, t, kAlpha),
          math::ExpOp::create(
              b, loc, mul(b, loc, cst(b, loc, t, -0.5), mul(b, loc, x, x))));
  return mul(b, loc, g, add(b, loc, cdf, mul(b, loc, x, pdf)));
}

bool isTanhGelu(DictionaryAttr attrs) {
  auto a = attrs.getAs<GeluApproximationAttr>("approximate");
  return a && a.getValue() == GeluApproximation::Tanh;
}

struct GeluLowering : ExternalModel<GeluLowering, GeluOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    bool tanhForm =
        cast<GeluOp>(op).getApproximate() == GeluApproximation::Tanh;
    Value x = operands[0];
    results.push_back(elementwise(
        b, op->getLoc(), x, newTensor(b, op->getLoc(), tensorType(x)),
        [&](OpBuilder &nb, Location nloc, ValueRange a) {
          return geluForward(nb, nloc, a[0], tanhForm);
        }));
    return success();
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    bool tanhForm = isTanhGelu(node.forwardAttrs);
    Value x = node.savedOperands[0];
    grads.push_back(elementwise(
        b, loc, {node.grads[0], x}, newTensor(b, loc, tensorType(x)),
        [&](OpBuilder &nb, Location nloc, ValueRange a) {
          return geluBackward(nb, nloc, a[0], a[1], tanhForm);
        }));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// nn.softmax / nn.log_softmax along `dim`: the row max and sum of
// exp(x - max) on the stack, the result a new tensor. Backward
// (_softmax_backward_data / _log_softmax_backward_data):
//   softmax:     gx = y (g - sum(g y))
//   log_softmax: gx = g - exp(y) sum(g)
//===----------------------------------------------------------------------===//

template <typename OpTy, bool Log>
struct SoftmaxLikeLowering
    : ExternalModel<SoftmaxLikeLowering<OpTy, Log>, OpTy> {
  static StringRef name() { return Log ? "nn.log_softmax" : "nn.softmax"; }

  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    Location loc = op->getLoc();
    Value x = operands[0];
    auto xt = tensorType(x);
    if (op->getResult(0).getType() != xt)
      return unsupported(loc, name(), "a dtype other than the input's");
    MLIRContext *ctx = b.getContext();
    unsigned rank = xt.getRank();
    unsigned d = normalize(cast<OpTy>(op).getDim(), rank);
    SmallVector<unsigned> rowDims = allBut(rank, {d});
    SmallVector<int64_t> rowShape;
    for (unsigned r : rowDims)
      rowShape.push_back(xt.getDimSize(r));
    auto rowType = RankedTensorType::get(rowShape, xt.getElementType());
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
    AffineMap row = dimMap(ctx, rank, rowDims);
    Value max = generic(
        b, loc, x,
        fill(b, loc, stackScratch(b, loc, rowType),
             -std::numeric_limits<double>::infinity()),
        {id, row}, [](OpBuilder &nb, Location nloc, ValueRange a) {
          return arith::MaximumFOp::create(nb, nloc, a[0], a[1]).getResult();
        });
    Value sum = generic(
        b, loc, {x, max}, fill(b, loc, stackScratch(b, loc, rowType), 0.0),
        {id, row, row}, [](OpBuilder &nb, Location nloc, ValueRange a) {
          Value e = math::ExpOp::create(nb, nloc, sub(nb, nloc, a[0], a[1]));
          return add(nb, nloc, a[2], e);
        });
    results.push_back(generic(
        b, loc, {x, max, sum}, newTensor(b, loc, xt), {id, row, row, id},
        [](OpBuilder &nb, Location nloc, ValueRange a) {
          Value shifted = sub(nb, nloc, a[0], a[1]);
          if (Log)
            return sub(nb, nloc, shifted,
                       math::LogOp::create(nb, nloc, a[2]).getResult());
          return div(nb, nloc, math::ExpOp::create(nb, nloc, shifted), a[2]);
        }));
    return success();
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    MLIRContext *ctx = b.getContext();
    Value y = node.savedResults[0], g = node.grads[0];
    auto yt = tensorType(y);
    unsigned rank = yt.getRank();
    auto dimAttr = node.forwardAttrs.getAs<IntegerAttr>("dim");
    unsigned d = normalize(dimAttr.getInt(), rank);
    SmallVector<unsigned> rowDims = allBut(rank, {d});
    SmallVector<int64_t> rowShape;
    for (unsigned r : rowDims)
      rowShape.push_back(yt.getDimSize(r));
    auto rowType = RankedTensorType::get(rowShape, yt.getElementType());
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
    AffineMap row = dimMap(ctx, rank, rowDims);
    Value sum = generic(
        b, loc, {g, y}, fill(b, loc, stackScratch(b, loc, rowType), 0.0),
        {id, id, row}, [](OpBuilder &nb, Location nloc, ValueRange a) {
          Value term = Log ? a[0] : mul(nb, nloc, a[0], a[1]);
          return add(nb, nloc, a[2], term);
        });
    grads.push_back(
        generic(b, loc, {g, y, sum}, newTensor(b, loc, yt), {id, id, row, id},
                [](OpBuilder &nb, Location nloc, ValueRange a) {
                  if (Log)
                    return sub(nb, nloc, a[0],
                               mul(nb, nloc,
                                   math::ExpOp::create(nb, nloc, a[1]), a[2]));
                  return mul(nb, nloc, a[1], sub(nb, nloc, a[0], a[2]));
                }));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// nn.dropout. p = 0 is the identity (the output is the input, nothing
// saved); otherwise out = x * mask / (1 - p) with a Bernoulli(1 - p) mask
// that the kernel keeps (the nn.saved "mask"), backward g * mask / (1 - p).
// The mask comes from a counter-based generator (SplitMix64 of the element
// index), so the forward op, the saved mask and the backward agree; it is
// not PyTorch's stream, so only p = 0 compares numerically with PyTorch.
//===----------------------------------------------------------------------===//

/// Whether element `linear` of a dropout with probability p is kept.
Value dropoutKeep(OpBuilder &b, Location loc, ValueRange ivs,
                  ArrayRef<int64_t> shape, double p) {
  Type i64 = b.getI64Type();
  Value linear = arith::ConstantIntOp::create(b, loc, i64, 0);
  for (auto [iv, size] : llvm::zip(ivs, shape)) {
    Value i = arith::IndexCastOp::create(b, loc, i64, iv);
    linear = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, linear,
                              arith::ConstantIntOp::create(b, loc, i64, size)),
        i);
  }
  auto c = [&](uint64_t v) {
    return arith::ConstantIntOp::create(b, loc, i64, (int64_t)v).getResult();
  };
  Value z = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, linear, c(0x9E3779B97F4A7C15ull)),
      c(0x2545F4914F6CDD1Dull));
  z = arith::MulIOp::create(
      b, loc,
      arith::XOrIOp::create(b, loc, z,
                            arith::ShRUIOp::create(b, loc, z, c(30))),
      c(0xBF58476D1CE4E5B9ull));
  z = arith::MulIOp::create(
      b, loc,
      arith::XOrIOp::create(b, loc, z,
                            arith::ShRUIOp::create(b, loc, z, c(27))),
      c(0x94D049BB133111EBull));
  z = arith::XOrIOp::create(b, loc, z,
                            arith::ShRUIOp::create(b, loc, z, c(31)));
  // The top 53 bits as a double in [0, 1).
  Value u = arith::UIToFPOp::create(b, loc, b.getF64Type(),
                                    arith::ShRUIOp::create(b, loc, z, c(11)));
  u = arith::MulFOp::create(
      b, loc, u, cst(b, loc, b.getF64Type(), 1.0 / 9007199254740992.0));
  return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, u,
                               cst(b, loc, b.getF64Type(), p));
}

SmallVector<Value> indices(OpBuilder &b, Location loc, unsigned rank) {
  SmallVector<Value> ivs;
  for (unsigned d = 0; d < rank; ++d)
    ivs.push_back(linalg::IndexOp::create(b, loc, d));
  return ivs;
}

struct DropoutLowering : ExternalModel<DropoutLowering, DropoutOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &options, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    auto dropout = cast<DropoutOp>(op);
    double p = dropout.getP().convertToDouble();
    Value x = operands[0];
    if (p == 0 || !options.training) {
      results.push_back(x);
      return success();
    }
    Location loc = op->getLoc();
    auto shape = tensorType(x).getShape();
    Value dest = dropout.getInplace() ? x : newTensor(b, loc, tensorType(x));
    double scale = p == 1 ? 0.0 : 1.0 / (1 - p);
    results.push_back(elementwise(
        b, loc, dropout.getInplace() ? ValueRange{} : ValueRange{x}, dest,
        [&](OpBuilder &nb, Location nloc, ValueRange a) {
          Value keep =
              dropoutKeep(nb, nloc, indices(nb, nloc, shape.size()), shape, p);
          Value v = mul(nb, nloc, a[0], cst(nb, nloc, a[0].getType(), scale));
          return arith::SelectOp::create(nb, nloc, keep, v,
                                         cst(nb, nloc, v.getType(), 0.0))
              .getResult();
        },
        dropout.getInplace()));
    return success();
  }

  static FailureOr<Value> lowerSavedTensor(OpBuilder &b, Location loc,
                                           const SavedTensorLowering &saved) {
    if (saved.kind != "mask")
      return emitError(loc) << "nn.dropout: no lowering of the saved tensor '"
                            << saved.kind << "'";
    auto p = saved.forwardAttrs.getAs<FloatAttr>("p").getValueAsDouble();
    auto type = cast<RankedTensorType>(saved.resultType);
    auto shape = type.getShape();
    Type et = type.getElementType();
    return elementwise(
        b, loc, {}, newTensor(b, loc, type),
        [&](OpBuilder &nb, Location nloc, ValueRange) -> Value {
          Value keep =
              dropoutKeep(nb, nloc, indices(nb, nloc, shape.size()), shape, p);
          if (et.isInteger(1))
            return keep;
          // The CPU's dropout keeps its noise, the mask scaled by 1/(1-p)
          // (`input * bernoulli_(1 - p).div_(1 - p)`).
          if (isa<FloatType>(et))
            return arith::SelectOp::create(
                nb, nloc, keep, cst(nb, nloc, et, p == 1 ? 0.0 : 1 / (1 - p)),
                cst(nb, nloc, et, 0.0));
          return arith::ExtUIOp::create(nb, nloc, et, keep);
        });
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    double p = node.forwardAttrs.getAs<FloatAttr>("p").getValueAsDouble();
    Value g = node.grads[0];
    double scale = p == 1 ? 0.0 : 1.0 / (1 - p);
    SmallVector<Value> ins = {g};
    if (!node.savedExtras.empty())
      ins.push_back(node.savedExtras[0]);
    bool hasMask = ins.size() == 2;
    grads.push_back(elementwise(
        b, loc, ins, newTensor(b, loc, tensorType(g)),
        [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
          // A float mask is the CPU's noise, already scaled by 1/(1-p).
          if (hasMask && isa<FloatType>(a[1].getType()))
            return mul(nb, nloc, a[0], a[1]);
          Value v = mul(nb, nloc, a[0], cst(nb, nloc, a[0].getType(), scale));
          if (!hasMask)
            return v;
          Value keep = a[1];
          if (!keep.getType().isInteger(1))
            keep = arith::CmpIOp::create(
                nb, nloc, arith::CmpIPredicate::ne, keep,
                arith::ConstantIntOp::create(nb, nloc, keep.getType(), 0));
          return arith::SelectOp::create(nb, nloc, keep, v,
                                         cst(nb, nloc, v.getType(), 0.0));
        }));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// nn.embedding: out[idx..., d] = W[ids[idx...], d] (index_select, a new
// tensor). Backward embedding_dense_backward: a new zero [V, D] gradient
// with each output row's gradient added at its index (padding_idx skipped),
// written as a sum over the positions in position order (index_add_'s).
// Indices outside [0, V) read (and receive) row 0 or V - 1, clamped.
//===----------------------------------------------------------------------===//

/// Whether id (an integer) is a row of this rank's [0, rows) (rank 0's
/// rows of a vocabulary-parallel table).
static Value isOwnRow(OpBuilder &b, Location loc, Value id, int64_t rows) {
  Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(), id);
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, i,
                               indexConstant(b, loc, rows));
}

/// out[idx..., d] = W[ids[idx...], d], ids outside W's rows clamped.
static Value lookupRows(OpBuilder &b, Location loc, Value w, Value ids,
                        RankedTensorType outType) {
  MLIRContext *ctx = b.getContext();
  unsigned rank = outType.getRank();
  int64_t vocab = tensorType(w).getDimSize(0);
  return generic(b, loc, ids, newTensor(b, loc, outType),
                 {dimMap(ctx, rank, range(0, rank - 1)),
                  AffineMap::getMultiDimIdentityMap(rank, ctx)},
                 [&](OpBuilder &nb, Location nloc, ValueRange a) {
                   Value row = clampIndex(nb, nloc, a[0], vocab);
                   Value col = linalg::IndexOp::create(nb, nloc, rank - 1);
                   return tensor::ExtractOp::create(nb, nloc, w,
                                                    ValueRange{row, col})
                       .getResult();
                 });
}

/// embedding_dense_backward: a new zero [V, D] gradient with each output
/// row's gradient added at its index (`padding` skipped; `masked`: ids
/// outside [0, V) skipped, else clamped), written as a sum over the
/// positions in position order (index_add_'s).
static Value embeddingGrad(OpBuilder &b, Location loc, Value ids, Value g,
                           RankedTensorType wType,
                           std::optional<int64_t> padding, bool masked) {
  MLIRContext *ctx = b.getContext();
  int64_t vocab = wType.getDimSize(0);
  unsigned idRank = tensorType(ids).getRank();
  // Iteration (v, d, positions...).
  unsigned numDims = 2 + idRank;
  SmallVector<unsigned> gDims = range(2, numDims);
  gDims.push_back(1);
  Value init = fill(b, loc, newTensor(b, loc, wType), 0.0);
  return generic(
      b, loc, {ids, g}, init,
      {dimMap(ctx, numDims, range(2, numDims)), dimMap(ctx, numDims, gDims),
       dimMap(ctx, numDims, {0, 1})},
      [&](OpBuilder &nb, Location nloc, ValueRange a) {
        Value v = linalg::IndexOp::create(nb, nloc, 0);
        Value row = clampIndex(nb, nloc, a[0], vocab);
        Value hit =
            arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::eq, row, v);
        if (padding)
          hit = arith::AndIOp::create(
              nb, nloc, hit,
              arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::ne, row,
                                    indexConstant(nb, nloc, *padding)));
        if (masked)
          hit = arith::AndIOp::create(nb, nloc, hit,
                                      isOwnRow(nb, nloc, a[0], vocab));
        Value sum = add(nb, nloc, a[2], a[1]);
        return arith::SelectOp::create(nb, nloc, hit, sum, a[2]).getResult();
      });
}

struct EmbeddingLowering : ExternalModel<EmbeddingLowering, EmbeddingOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    results.push_back(
        lookupRows(b, op->getLoc(), operands[0], operands[1],
                   cast<RankedTensorType>(op->getResult(0).getType())));
    return success();
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    auto wType = cast<RankedTensorType>(node.forwardType.getInput(0));
    int64_t vocab = wType.getDimSize(0);
    std::optional<int64_t> padding;
    if (auto attr = node.forwardAttrs.getAs<IntegerAttr>("padding_idx"))
      padding = attr.getInt() < 0 ? attr.getInt() + vocab : attr.getInt();
    grads.push_back(embeddingGrad(b, loc, node.savedOperands[1], node.grads[0],
                                  wType, padding,
                                  /*masked=*/false));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// nn.vocab_parallel_embedding on rank 0: the lookup of ids in its rows
// [0, V / ranks), zero rows for the others; backward the embedding's over
// those ids alone.
//===----------------------------------------------------------------------===//

struct VocabParallelEmbeddingLowering
    : ExternalModel<VocabParallelEmbeddingLowering, VocabParallelEmbeddingOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    Location loc = op->getLoc();
    Value w = operands[0], ids = operands[1];
    int64_t rows = tensorType(w).getDimSize(0);
    RankedTensorType idsType = tensorType(ids);
    // _MaskPartial._partition_value: the mask of the other ranks' ids and
    // the ids with those set to 0 (the op's workspace), then the lookup
    // with the masked rows zeroed.
    Value mask = elementwise(
        b, loc, ids, newTensor(b, loc, idsType.clone(b.getI1Type())),
        [&](OpBuilder &nb, Location nloc, ValueRange a) {
          return arith::XOrIOp::create(
                     nb, nloc, isOwnRow(nb, nloc, a[0], rows),
                     arith::ConstantIntOp::create(nb, nloc, nb.getI1Type(), 1))
              .getResult();
        });
    Value shifted =
        elementwise(b, loc, {ids, mask}, newTensor(b, loc, idsType),
                    [&](OpBuilder &nb, Location nloc, ValueRange a) {
                      Value zero = arith::ConstantOp::create(
                          nb, nloc, nb.getIntegerAttr(a[0].getType(), 0));
                      return arith::SelectOp::create(nb, nloc, a[1], zero, a[0])
                          .getResult();
                    });
    results.push_back(
        lookupRows(b, loc, w, shifted,
                   cast<RankedTensorType>(op->getResult(0).getType())));
    MLIRContext *ctx = b.getContext();
    unsigned rank = tensorType(results.back()).getRank();
    results.back() =
        generic(b, loc, mask, results.back(),
                {dimMap(ctx, rank, range(0, rank - 1)),
                 AffineMap::getMultiDimIdentityMap(rank, ctx)},
                [&](OpBuilder &nb, Location nloc, ValueRange a) {
                  return arith::SelectOp::create(
                             nb, nloc, a[0],
                             floatConstant(nb, nloc, a[1].getType(), 0.0), a[1])
                      .getResult();
                });
    return success();
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    grads.push_back(
        embeddingGrad(b, loc, node.savedOperands[1], node.grads[0],
                      cast<RankedTensorType>(node.forwardType.getInput(0)),
                      /*padding=*/std::nullopt, /*masked=*/true));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Views: transpose, permute, slice and expand are strided views of their
// input (no allocation). Transpose and permute hand the gradient back
// through a view (no node; nn.grad_views); slice's backward is a new
// zero tensor of the input's shape with the gradient in the slice
// (slice_backward), expand's the sum over the broadcast dimensions.
//===----------------------------------------------------------------------===//

struct TransposeLowering : ExternalModel<TransposeLowering, TransposeOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    auto t = cast<TransposeOp>(op);
    int64_t rank = tensorType(operands[0]).getRank();
    SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    std::swap(perm[normalize(t.getDim0(), rank)],
              perm[normalize(t.getDim1(), rank)]);
    results.push_back(permuteView(b, op->getLoc(), operands[0], perm));
    return success();
  }
};

struct PermuteLowering : ExternalModel<PermuteLowering, PermuteOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    int64_t rank = tensorType(operands[0]).getRank();
    SmallVector<int64_t> perm;
    for (int64_t d : cast<PermuteOp>(op).getDims())
      perm.push_back(normalize(d, rank));
    results.push_back(permuteView(b, op->getLoc(), operands[0], perm));
    return success();
  }
};

struct SplitLowering : ExternalModel<SplitLowering, SplitOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    auto split = cast<SplitOp>(op);
    Value x = operands[0];
    int64_t d = normalize(split.getDim(), tensorType(x).getRank());
    Layout l = getLayout(x);
    SmallVector<int64_t> strides(l.strides);
    int64_t step = strides[d];
    if (split.getSqueeze())
      strides.erase(strides.begin() + d);
    int64_t start = 0;
    for (auto [size, result] : llvm::zip(split.getSizes(), op->getResults())) {
      results.push_back(stridedView(b, op->getLoc(), x,
                                    cast<RankedTensorType>(result.getType()),
                                    strides, l.offset + start * step));
      start += size;
    }
    return success();
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    // The pieces' gradients concatenated, zeros for those without one.
    auto inType = cast<RankedTensorType>(node.forwardType.getInput(0));
    int64_t d = normalize(node.forwardAttrs.getAs<IntegerAttr>("dim").getInt(),
                          inType.getRank());
    bool squeeze = static_cast<bool>(node.forwardAttrs.get("squeeze"));
    ArrayRef<int64_t> sizes =
        node.forwardAttrs.getAs<DenseI64ArrayAttr>("sizes").asArrayRef();
    SmallVector<Value> pieces;
    auto grad = node.grads.begin();
    for (auto [i, size] : llvm::enumerate(sizes)) {
      SmallVector<int64_t> shape(inType.getShape());
      shape[d] = size;
      auto type = RankedTensorType::get(shape, inType.getElementType());
      if (!node.resultHasGrad[i]) {
        pieces.push_back(fill(b, loc, newTensor(b, loc, type), 0.0));
        continue;
      }
      Value g = *grad++;
      pieces.push_back(squeeze ? reshapeOrCopy(b, loc, g, type) : g);
    }
    grads.push_back(concatenate(b, loc, inType, d, pieces));
    return success();
  }
};

struct SliceLowering : ExternalModel<SliceLowering, SliceOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    auto slice = cast<SliceOp>(op);
    Value x = operands[0];
    auto xt = tensorType(x);
    int64_t d = normalize(slice.getDim(), xt.getRank());
    int64_t start = slice.getStart();
    if (start < 0)
      start += xt.getDimSize(d);
    Layout l = getLayout(x);
    SmallVector<int64_t> strides(l.strides);
    int64_t offset = l.offset + std::max<int64_t>(start, 0) * strides[d];
    strides[d] *= slice.getStep();
    results.push_back(stridedView(
        b, op->getLoc(), x, cast<RankedTensorType>(op->getResult(0).getType()),
        strides, offset));
    return success();
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    auto inType = cast<RankedTensorType>(node.forwardType.getInput(0));
    int64_t rank = inType.getRank();
    int64_t d =
        normalize(node.forwardAttrs.getAs<IntegerAttr>("dim").getInt(), rank);
    int64_t start = node.forwardAttrs.getAs<IntegerAttr>("start").getInt();
    if (start < 0)
      start += inType.getDimSize(d);
    start = std::max<int64_t>(start, 0);
    auto stepAttr = node.forwardAttrs.getAs<IntegerAttr>("step");
    int64_t step = stepAttr ? stepAttr.getInt() : 1;
    Value g = node.grads[0];
    int64_t count = tensorType(g).getDimSize(d);
    // zeros(input) with grad copied into the slice: every element written
    // once, from the gradient inside the slice, else 0.
    grads.push_back(elementwise(
        b, loc, {}, newTensor(b, loc, inType),
        [&](OpBuilder &nb, Location nloc, ValueRange) -> Value {
          SmallVector<Value> ivs = indices(nb, nloc, rank);
          Value rel = arith::SubIOp::create(nb, nloc, ivs[d],
                                            indexConstant(nb, nloc, start));
          Value zero = indexConstant(nb, nloc, 0);
          Value stepV = indexConstant(nb, nloc, step);
          Value q = arith::DivSIOp::create(nb, nloc, rel, stepV);
          Value r = arith::RemSIOp::create(nb, nloc, rel, stepV);
          Value in = arith::AndIOp::create(
              nb, nloc,
              arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::sge, rel,
                                    zero),
              arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::eq, r,
                                    zero));
          in = arith::AndIOp::create(
              nb, nloc, in,
              arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::slt, q,
                                    indexConstant(nb, nloc, count)));
          ivs[d] = q;
          Value pad = cst(nb, nloc, inType.getElementType(), 0.0);
          return extractOrPad(nb, nloc, g, ivs, {(unsigned)d}, pad, in);
        }));
    return success();
  }
};

struct ExpandLowering : ExternalModel<ExpandLowering, ExpandOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    Value x = operands[0];
    auto xt = tensorType(x);
    auto outType = cast<RankedTensorType>(op->getResult(0).getType());
    Layout l = getLayout(x);
    int64_t offset = outType.getRank() - xt.getRank();
    SmallVector<int64_t> strides(outType.getRank(), 0);
    for (int64_t i = 0; i < xt.getRank(); ++i)
      if (!(xt.getDimSize(i) == 1 && outType.getDimSize(offset + i) != 1))
        strides[offset + i] = l.strides[i];
    results.push_back(
        stridedView(b, op->getLoc(), x, outType, strides, l.offset));
    return success();
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    auto inType = cast<RankedTensorType>(node.forwardType.getInput(0));
    grads.push_back(sumInto(b, loc, node.grads[0],
                            fill(b, loc, newTensor(b, loc, inType), 0.0)));
    return success();
  }
};

/// The gradient in a new tensor: the backward of nn.all_reduce_grad (the
/// all-reduce's output, on one rank) and of nn.contiguous. The gradient
/// passes through a contiguous (no node); a node exists only to copy a
/// parameter's gradient that arrives through a transposing view into the
/// parameter's layout (AccumulateGrad's clone_obey_contract): the gradient,
/// seen through the node's nn.grad_views, in a new tensor.
static LogicalResult lowerGradientCopy(OpBuilder &b, Location loc,
                                       const BackwardLowering &node,
                                       SmallVectorImpl<Value> &grads) {
  grads.push_back(copyToNewTensor(b, loc, node.grads[0]));
  return success();
}

/// nn.contiguous, nn.all_reduce on one rank (the reduction into a new
/// tensor: the other ranks' partial sums are not there, the memory is the
/// same) and a training forward's nn.kv_cache_update (the DynamicCache's
/// first update, without `past`): a copy of the one operand into a new
/// tensor; the gradient passes through. Appending to a past cache is
/// generation's, which is not executed.
template <typename OpT>
struct CopyLowering : ExternalModel<CopyLowering<OpT>, OpT> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    if (operands.size() != 1)
      return unsupported(op->getLoc(), op->getName().getStringRef(),
                         "a copy of more than one operand (a past cache: "
                         "generation)");
    results.push_back(copyToNewTensor(b, op->getLoc(), operands[0]));
    return success();
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    return lowerGradientCopy(b, loc, node, grads);
  }
};

/// nn.all_reduce_grad on one rank: the input itself; its backward reduces
/// the gradient into a new tensor.
struct AllReduceGradLowering
    : ExternalModel<AllReduceGradLowering, AllReduceGradOp> {
  LogicalResult
  lowerToTensor(Operation *, OpBuilder &, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    results.push_back(operands[0]);
    return success();
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    return lowerGradientCopy(b, loc, node, grads);
  }
};

/// A rank's all-gather along `dim`, as if every rank held `shard`:
/// all_gather_into_tensor's [ranks x d0, ...] buffer (the shards stacked
/// along dim 0), then its chunks concatenated along `dim` into a new tensor
/// of `fullType`, which reads the buffer (freed after it, as DTensor's
/// _maybe_view_chunk_cat frees it). Where every dim before `dim` has size 1
/// the buffer, viewed as `fullType`, is the result.
static Value gatherAlongDim(OpBuilder &b, Location loc, Value shard,
                            int64_t ranks, RankedTensorType fullType,
                            int64_t dim) {
  RankedTensorType type = tensorType(shard);
  SmallVector<int64_t> stacked(type.getShape());
  stacked[0] *= ranks;
  SmallVector<Value> copies(ranks, shard);
  Value buffer = concatenate(
      b, loc, RankedTensorType::get(stacked, type.getElementType()), 0, copies);
  if (llvm::all_of(type.getShape().take_front(dim),
                   [](int64_t d) { return d == 1; }))
    return reshapeView(b, loc, buffer, fullType);
  int64_t rank = type.getRank(), rows = type.getDimSize(0),
          width = type.getDimSize(dim);
  return elementwise(
      b, loc, {}, newTensor(b, loc, fullType),
      [&](OpBuilder &nb, Location nl, ValueRange) {
        // out[i0, ..., j, ...] = buffer[(j / w) d0 + i0, ..., j mod w, ...]
        SmallVector<Value> idx;
        for (int64_t d = 0; d < rank; ++d)
          idx.push_back(linalg::IndexOp::create(nb, nl, d));
        Value j = idx[dim], w = indexConstant(nb, nl, width);
        idx[dim] = arith::RemUIOp::create(nb, nl, j, w);
        Value chunk = arith::DivUIOp::create(nb, nl, j, w);
        idx[0] = arith::AddIOp::create(
            nb, nl, idx[0],
            arith::MulIOp::create(nb, nl, chunk, indexConstant(nb, nl, rows)));
        return tensor::ExtractOp::create(nb, nl, buffer, idx).getResult();
      });
}

/// Rank 0's slice of `full` (its leading `shardType` block), cloned.
static Value cloneFirstSlice(OpBuilder &b, Location loc, Value full,
                             RankedTensorType shardType) {
  SmallVector<OpFoldResult> offsets(shardType.getRank(), b.getIndexAttr(0)),
      strides(shardType.getRank(), b.getIndexAttr(1)), sizes;
  for (int64_t size : shardType.getShape())
    sizes.push_back(b.getIndexAttr(size));
  return copyToNewTensor(b, loc,
                         tensor::ExtractSliceOp::create(
                             b, loc, shardType, full, offsets, sizes, strides));
}

/// A reduce-scatter along `dim` on one rank: the chunks concatenated along
/// dim 0 into a copy (none for dim 0; the copy's leading block is rank 0's
/// chunk either way), then rank 0's slice of it in a new tensor (the other
/// ranks' partial sums are not there; the memory is the same).
static Value reduceScatterAlongDim(OpBuilder &b, Location loc, Value partial,
                                   RankedTensorType shardType, int64_t dim) {
  Value input = dim == 0 ? partial : copyToNewTensor(b, loc, partial);
  return cloneFirstSlice(b, loc, input, shardType);
}

static int64_t forwardDim(const BackwardLowering &node) {
  auto dim = dyn_cast_or_null<IntegerAttr>(node.forwardAttrs.get("dim"));
  int64_t rank = cast<RankedTensorType>(node.forwardType.getInput(0)).getRank();
  int64_t d = dim ? dim.getInt() : -1;
  return d < 0 ? d + rank : d;
}

/// The backward of a split or a reduce-scatter along the forward's dim: the
/// gradient's slices gathered as if every rank held this one's.
static LogicalResult lowerGatheredGradient(OpBuilder &b, Location loc,
                                           const BackwardLowering &node,
                                           SmallVectorImpl<Value> &grads) {
  int64_t ranks = cast<IntegerAttr>(node.forwardAttrs.get("ranks")).getInt();
  grads.push_back(gatherAlongDim(
      b, loc, node.grads[0], ranks,
      cast<RankedTensorType>(node.forwardType.getInput(0)), forwardDim(node)));
  return success();
}

/// nn.all_gather_output on one rank: the gather; backward clones this
/// rank's slice of the gradient (rank 0's), or reduce-scatters it
/// (`scatter_grad`).
struct AllGatherOutputLowering
    : ExternalModel<AllGatherOutputLowering, AllGatherOutputOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    auto gather = cast<AllGatherOutputOp>(op);
    results.push_back(gatherAlongDim(
        b, op->getLoc(), operands[0], gather.getRanks(),
        cast<RankedTensorType>(gather.getType()), gather.getGatherDim()));
    return success();
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    auto shardType = cast<RankedTensorType>(node.forwardType.getInput(0));
    grads.push_back(node.forwardAttrs.get("scatter_grad")
                        ? reduceScatterAlongDim(b, loc, node.grads[0],
                                                shardType, forwardDim(node))
                        : cloneFirstSlice(b, loc, node.grads[0], shardType));
    return success();
  }
};

/// nn.split_input on one rank: rank 0's slice cloned; backward gathers
/// the gradient's slices as if every rank held these.
struct SplitInputLowering : ExternalModel<SplitInputLowering, SplitInputOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    results.push_back(
        cloneFirstSlice(b, op->getLoc(), operands[0],
                        cast<RankedTensorType>(op->getResult(0).getType())));
    return success();
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    return lowerGatheredGradient(b, loc, node, grads);
  }
};

/// nn.reduce_scatter_output on one rank: rank 0's slice of the partial sums
/// (after the copy); backward gathers the gradient as if every rank held it.
struct ReduceScatterOutputLowering
    : ExternalModel<ReduceScatterOutputLowering, ReduceScatterOutputOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    auto scatter = cast<ReduceScatterOutputOp>(op);
    results.push_back(reduceScatterAlongDim(
        b, op->getLoc(), operands[0], cast<RankedTensorType>(scatter.getType()),
        scatter.getDim()));
    return success();
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    return lowerGatheredGradient(b, loc, node, grads);
  }
};

//===----------------------------------------------------------------------===//
// nn.masked_fill: select(mask, value, x) (a new tensor, or x itself with
// `inplace`); backward grad.masked_fill(mask, 0), a new tensor.
//===----------------------------------------------------------------------===//

struct MaskedFillLowering : ExternalModel<MaskedFillLowering, MaskedFillOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    auto mf = cast<MaskedFillOp>(op);
    Location loc = op->getLoc();
    Value x = operands[0], mask = operands[1];
    double value = mf.getValue().convertToDouble();
    bool where = mf.getWhere();
    auto body = [&](OpBuilder &nb, Location nloc, ValueRange a) {
      // a = (mask, x): masked_fill selects the value where the mask is set,
      // torch.where the input.
      Value v = cst(nb, nloc, a[1].getType(), value);
      return arith::SelectOp::create(nb, nloc, a[0], where ? a[1] : v,
                                     where ? v : a[1])
          .getResult();
    };
    if (mf.getInplace()) {
      results.push_back(elementwise(b, loc, mask, x, body, true));
      return success();
    }
    results.push_back(
        elementwise(b, loc, {mask, x}, newTensor(b, loc, tensorType(x)), body));
    return success();
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    if (node.needsGrad(1))
      return unsupported(loc, "nn.masked_fill", "a gradient for the mask");
    Value mask = node.savedOperands[1], g = node.grads[0];
    auto type = cast<RankedTensorType>(node.forwardType.getInput(0));
    bool where = static_cast<bool>(node.forwardAttrs.get("where"));
    grads.push_back(elementwise(
        b, loc, {mask, g}, newTensor(b, loc, type),
        [&](OpBuilder &nb, Location nloc, ValueRange a) {
          // The gradient flows where the input was selected.
          Value zero = cst(nb, nloc, a[1].getType(), 0.0);
          return arith::SelectOp::create(nb, nloc, a[0], where ? a[1] : zero,
                                         where ? zero : a[1])
              .getResult();
        }));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// The 0-d constants of attention: nn.constant (a new tensor holding the
// value, as the forward pass creates it), and nn.mul / nn.div of a tensor
// by a 0-d tensor (the scale): a new tensor (or the lhs with `inplace`);
// backward g * c or g / c, a new tensor. These models are attached only
// when no other model of the op is (the elementwise lowerings cover the
// general broadcasting forms).
//===----------------------------------------------------------------------===//

struct ConstantLowering : ExternalModel<ConstantLowering, ConstantOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    Location loc = op->getLoc();
    auto attr = cast<TypedAttr>(cast<ConstantOp>(op).getValue());
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    Value value = arith::ConstantOp::create(b, loc, attr);
    results.push_back(
        elementwise(b, loc, value, newTensor(b, loc, type),
                    [](OpBuilder &, Location, ValueRange a) { return a[0]; }));
    return success();
  }
};

template <typename OpTy, bool Div>
struct ScalarMulDivLowering
    : ExternalModel<ScalarMulDivLowering<OpTy, Div>, OpTy> {
  static StringRef name() { return Div ? "nn.div" : "nn.mul"; }

  static LogicalResult check(Location loc, Type lhs, Type rhs, Type out) {
    auto c = cast<RankedTensorType>(rhs);
    if (c.getRank() != 0 || lhs != out ||
        c.getElementType() != cast<RankedTensorType>(lhs).getElementType())
      return unsupported(loc, name(),
                         "operands other than a tensor and a 0-d tensor of its "
                         "element type");
    return success();
  }

  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    Location loc = op->getLoc();
    if (failed(check(loc, operands[0].getType(), operands[1].getType(),
                     op->getResult(0).getType())))
      return failure();
    auto apply = [](OpBuilder &nb, Location nloc, Value x, Value c) {
      return Div ? div(nb, nloc, x, c) : mul(nb, nloc, x, c);
    };
    if (cast<OpTy>(op).getInplace()) {
      // rhs, then the destination lhs.
      results.push_back(elementwise(
          b, loc, operands[1], operands[0],
          [&](OpBuilder &nb, Location nloc, ValueRange a) {
            return apply(nb, nloc, a[1], a[0]);
          },
          true));
      return success();
    }
    results.push_back(elementwise(
        b, loc, operands, newTensor(b, loc, tensorType(operands[0])),
        [&](OpBuilder &nb, Location nloc, ValueRange a) {
          return apply(nb, nloc, a[0], a[1]);
        }));
    return success();
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    if (failed(check(loc, node.forwardType.getInput(0),
                     node.forwardType.getInput(1),
                     node.forwardType.getResult(0))))
      return failure();
    if (node.needsGrad(1))
      return unsupported(loc, name(), "a gradient for the 0-d operand");
    Value c = node.savedOperands[1], g = node.grads[0];
    grads.push_back(elementwise(
        b, loc, {g, c}, newTensor(b, loc, tensorType(g)),
        [](OpBuilder &nb, Location nloc, ValueRange a) {
          return Div ? div(nb, nloc, a[0], a[1]) : mul(nb, nloc, a[0], a[1]);
        }));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// nn.scaled_dot_product_attention: softmax(q k^T scale + mask) v, with a
// causal mask (j <= i kept) or an optional mask (bool: true takes part; a
// float mask is added). The forward op keeps the scores and probabilities
// on the stack (a fused kernel's tiles); what each backend saves is an
// nn.saved tensor: `math` (_scaled_dot_product_attention_math) the scaled
// query and key (x sqrt(scale), new tensors) and the probabilities, the
// fused kernels the logsumexp per row (fp32). Backward, with stack scratch
// for the [.., L, S] intermediates:
//   dv = P^T g, dP = g v^T, dS = P (dP - rowsum(dP P)),
//   dq = scale dS k, dk = scale dS^T q
// (math: the scaled operands, each product scaled by sqrt(scale)).
//===----------------------------------------------------------------------===//

struct Attention {
  unsigned nb;                // batch dimensions
  int64_t l, s;               // query and key lengths
  SmallVector<int64_t> batch; // batch shape
  double scale;
  bool causal;
  Value mask; // lowered, or null
  Type et;

  RankedTensorType scoresType() const {
    SmallVector<int64_t> shape(batch);
    shape.append({l, s});
    return RankedTensorType::get(shape, et);
  }
  RankedTensorType rowsType() const {
    SmallVector<int64_t> shape(batch);
    shape.push_back(l);
    return RankedTensorType::get(shape, et);
  }
  /// The batch dimensions then `tail` (offsets past them), in an iteration
  /// space of the batch dimensions and `extra` more.
  AffineMap map(MLIRContext *ctx, unsigned extra,
                ArrayRef<unsigned> tail) const {
    SmallVector<unsigned> d = range(0, nb);
    for (unsigned t : tail)
      d.push_back(nb + t);
    return dimMap(ctx, nb + extra, d);
  }
};

Attention attentionInfo(RankedTensorType q, RankedTensorType k, Value mask,
                        bool causal, FloatAttr scale) {
  Attention a;
  a.nb = q.getRank() - 2;
  a.batch.assign(q.getShape().begin(), q.getShape().end() - 2);
  a.l = q.getDimSize(q.getRank() - 2);
  a.s = k.getDimSize(k.getRank() - 2);
  a.scale = scale ? scale.getValueAsDouble()
                  : 1.0 / std::sqrt((double)q.getShape().back());
  a.causal = causal;
  a.mask = mask;
  a.et = q.getElementType();
  return a;
}

/// factor * q k^T, masked, on the stack.
Value attentionScores(OpBuilder &b, Location loc, const Attention &a, Value q,
                      Value k, double factor) {
  MLIRContext *ctx = b.getContext();
  // (batch, l, s, e)
  Value scores = contraction(
      b, loc, q, k, fill(b, loc, stackScratch(b, loc, a.scoresType()), 0),
      {a.map(ctx, 3, {0, 2}), a.map(ctx, 3, {1, 2}), a.map(ctx, 3, {0, 1})});
  SmallVector<Value> ins;
  if (a.mask)
    ins.push_back(a.mask);
  bool causal = a.causal, hasMask = (bool)a.mask;
  unsigned rank = a.nb + 2;
  return elementwise(
      b, loc, ins, scores,
      [&](OpBuilder &nb, Location nloc, ValueRange v) -> Value {
        Value x = v.back();
        x = mul(nb, nloc, x, cst(nb, nloc, x.getType(), factor));
        Value ninf = cst(nb, nloc, x.getType(),
                         -std::numeric_limits<double>::infinity());
        if (causal) {
          Value i = linalg::IndexOp::create(nb, nloc, rank - 2);
          Value j = linalg::IndexOp::create(nb, nloc, rank - 1);
          Value keep =
              arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::sle, j, i);
          x = arith::SelectOp::create(nb, nloc, keep, x, ninf);
        }
        if (hasMask) {
          Value m = v[0];
          x = m.getType().isInteger(1)
                  ? arith::SelectOp::create(nb, nloc, m, x, ninf).getResult()
                  : add(nb, nloc, x, m);
        }
        return x;
      },
      true);
}

/// The row logsumexp of the scores (stack, into `lse`) and
/// P = exp(S - lse), in place.
Value attentionProbs(OpBuilder &b, Location loc, const Attention &a,
                     Value scores, Value &lse) {
  MLIRContext *ctx = b.getContext();
  AffineMap id = a.map(ctx, 2, {0, 1}), row = a.map(ctx, 2, {0});
  auto rows = a.rowsType();
  Value max = generic(
      b, loc, scores,
      fill(b, loc, stackScratch(b, loc, rows),
           -std::numeric_limits<double>::infinity()),
      {id, row}, [](OpBuilder &nb, Location nloc, ValueRange v) {
        return arith::MaximumFOp::create(nb, nloc, v[0], v[1]).getResult();
      });
  Value sum = generic(
      b, loc, {scores, max}, fill(b, loc, stackScratch(b, loc, rows), 0.0),
      {id, row, row}, [](OpBuilder &nb, Location nloc, ValueRange v) {
        return add(nb, nloc, v[2],
                   math::ExpOp::create(nb, nloc, sub(nb, nloc, v[0], v[1])));
      });
  AffineMap rowId = a.map(ctx, 1, {0});
  lse = generic(b, loc, {max, sum}, stackScratch(b, loc, rows),
                {rowId, rowId, rowId},
                [](OpBuilder &nb, Location nloc, ValueRange v) {
                  return add(nb, nloc, v[0],
                             math::LogOp::create(nb, nloc, v[1]).getResult());
                });
  return generic(b, loc, lse, scores, {row, id},
                 [](OpBuilder &nb, Location nloc, ValueRange v) {
                   return math::ExpOp::create(nb, nloc,
                                              sub(nb, nloc, v[1], v[0]))
                       .getResult();
                 });
}

Value scaleInPlace(OpBuilder &b, Location loc, Value t, double factor) {
  return elementwise(
      b, loc, {}, t,
      [&](OpBuilder &nb, Location nloc, ValueRange v) {
        return mul(nb, nloc, v[0], cst(nb, nloc, v[0].getType(), factor));
      },
      true);
}

Attention attentionOf(DictionaryAttr attrs, RankedTensorType q,
                      RankedTensorType k, Value mask) {
  return attentionInfo(q, k, mask, (bool)attrs.get("causal"),
                       attrs.getAs<FloatAttr>("scale"));
}

struct AttentionLowering
    : ExternalModel<AttentionLowering, ScaledDotProductAttentionOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &options, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    auto sdpa = cast<ScaledDotProductAttentionOp>(op);
    Location loc = op->getLoc();
    MLIRContext *ctx = b.getContext();
    if (sdpa.getEnableGqa())
      return unsupported(loc, "nn.scaled_dot_product_attention",
                         "grouped KV heads (enable_gqa)");
    // In eval (an inference step) sdpa is called with dropout_p = 0: the
    // op's dropout_p is the module's, which only training applies.
    if (!sdpa.getDropoutP().isZero() && options.training)
      return unsupported(loc, "nn.scaled_dot_product_attention",
                         "attention dropout (dropout_p)");
    Attention a =
        attentionInfo(tensorType(operands[0]), tensorType(operands[1]),
                      sdpa.getMask() ? operands[3] : Value(), sdpa.getCausal(),
                      sdpa.getScaleAttr());
    Value lse;
    Value p = attentionProbs(
        b, loc, a,
        attentionScores(b, loc, a, operands[0], operands[1], a.scale), lse);
    auto outType = cast<RankedTensorType>(op->getResult(0).getType());
    // The fused kernels write [B, L, H, Ev] and return its transpose(1, 2)
    // (ScaledDotProductAttentionOp::getResultStrides): the merge of the heads
    // after them is a view.
    if (sdpa.getBackend() != AttentionBackend::Math && outType.getRank() == 4) {
      ArrayRef<int64_t> s = outType.getShape();
      auto physical = RankedTensorType::get({s[0], s[2], s[1], s[3]},
                                            outType.getElementType());
      Value out = contraction(b, loc, p, operands[2],
                              fill(b, loc, newTensor(b, loc, physical), 0),
                              {a.map(ctx, 3, {0, 2}), a.map(ctx, 3, {2, 1}),
                               dimMap(ctx, a.nb + 3, {0, a.nb, 1, a.nb + 1})});
      results.push_back(permuteView(b, loc, out, {0, 2, 1, 3}));
      return success();
    }
    // (batch, l, ev, s): out = P v
    results.push_back(contraction(
        b, loc, p, operands[2], fill(b, loc, newTensor(b, loc, outType), 0),
        {a.map(ctx, 3, {0, 2}), a.map(ctx, 3, {2, 1}), a.map(ctx, 3, {0, 1})}));
    return success();
  }

  static FailureOr<Value> lowerSavedTensor(OpBuilder &b, Location loc,
                                           const SavedTensorLowering &saved) {
    Value q = saved.operands[0], k = saved.operands[1];
    Value mask = saved.operands.size() > 3 ? saved.operands[3] : Value();
    Attention a =
        attentionOf(saved.forwardAttrs, tensorType(q), tensorType(k), mask);
    auto type = cast<RankedTensorType>(saved.resultType);
    if (saved.kind == "scaled_query" || saved.kind == "scaled_key") {
      double f = std::sqrt(a.scale);
      return elementwise(
          b, loc, saved.kind == "scaled_query" ? q : k, newTensor(b, loc, type),
          [&](OpBuilder &nb, Location nloc, ValueRange v) {
            return mul(nb, nloc, v[0], cst(nb, nloc, v[0].getType(), f));
          });
    }
    if (saved.kind != "attention_probs" && saved.kind != "logsumexp")
      return emitError(loc) << "nn.scaled_dot_product_attention: no lowering "
                               "of the saved tensor '"
                            << saved.kind << "'";
    Value lse;
    Value p = attentionProbs(b, loc, a,
                             attentionScores(b, loc, a, q, k, a.scale), lse);
    Type et = type.getElementType();
    return elementwise(
        b, loc, saved.kind == "logsumexp" ? lse : p, newTensor(b, loc, type),
        [&](OpBuilder &nb, Location nloc, ValueRange v) -> Value {
          if (v[0].getType() == et)
            return v[0];
          return arith::ExtFOp::create(nb, nloc, et, v[0]);
        });
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    MLIRContext *ctx = b.getContext();
    bool mathBackend = false;
    if (auto backend = node.forwardAttrs.getAs<AttentionBackendAttr>("backend"))
      mathBackend = backend.getValue() == AttentionBackend::Math;
    Value mask =
        node.forwardType.getNumInputs() > 3 ? node.savedOperands[3] : Value();
    Attention a = attentionOf(
        node.forwardAttrs, cast<RankedTensorType>(node.forwardType.getInput(0)),
        cast<RankedTensorType>(node.forwardType.getInput(1)), mask);
    Value g = node.grads[0];
    AffineMap id = a.map(ctx, 2, {0, 1}), row = a.map(ctx, 2, {0});
    Value q, k, v, p;
    double factor;
    if (mathBackend) {
      // The scaled query and key (extras 0, 1), v, the probabilities.
      q = node.savedExtras[0];
      k = node.savedExtras[1];
      v = node.savedOperands[2];
      p = node.savedExtras[2];
      factor = std::sqrt(a.scale);
    } else {
      q = node.savedOperands[0];
      k = node.savedOperands[1];
      v = node.savedOperands[2];
      Value scores = attentionScores(b, loc, a, q, k, a.scale);
      p = generic(b, loc, node.savedExtras[0], scores, {row, id},
                  [](OpBuilder &nb, Location nloc, ValueRange x) {
                    Value l = x[0];
                    if (l.getType() != x[1].getType())
                      l = arith::TruncFOp::create(nb, nloc, x[1].getType(), l);
                    return math::ExpOp::create(nb, nloc, sub(nb, nloc, x[1], l))
                        .getResult();
                  });
      factor = a.scale;
    }
    // dP = g v^T on the stack: (batch, l, s, ev)
    Value dp = contraction(
        b, loc, g, v, fill(b, loc, stackScratch(b, loc, a.scoresType()), 0),
        {a.map(ctx, 3, {0, 2}), a.map(ctx, 3, {1, 2}), a.map(ctx, 3, {0, 1})});
    Value d = generic(
        b, loc, {dp, p}, fill(b, loc, stackScratch(b, loc, a.rowsType()), 0),
        {id, id, row}, [](OpBuilder &nb, Location nloc, ValueRange x) {
          return add(nb, nloc, x[2], mul(nb, nloc, x[0], x[1]));
        });
    Value ds = generic(b, loc, {p, d}, dp, {id, row, id},
                       [](OpBuilder &nb, Location nloc, ValueRange x) {
                         return mul(nb, nloc, x[0], sub(nb, nloc, x[2], x[1]));
                       });
    for (int64_t i : node.gradOperands) {
      auto type = cast<RankedTensorType>(node.forwardType.getInput(i));
      Value init = fill(b, loc, newTensor(b, loc, type), 0);
      if (i == 0) {
        // dq[l, e] = factor sum_s dS[l, s] k[s, e]: (batch, l, e, s)
        grads.push_back(scaleInPlace(
            b, loc,
            contraction(b, loc, ds, k, init,
                        {a.map(ctx, 3, {0, 2}), a.map(ctx, 3, {2, 1}),
                         a.map(ctx, 3, {0, 1})}),
            factor));
      } else if (i == 1) {
        // dk[s, e] = factor sum_l dS[l, s] q[l, e]: (batch, s, e, l)
        grads.push_back(scaleInPlace(
            b, loc,
            contraction(b, loc, ds, q, init,
                        {a.map(ctx, 3, {2, 0}), a.map(ctx, 3, {2, 1}),
                         a.map(ctx, 3, {0, 1})}),
            factor));
      } else if (i == 2) {
        // dv[s, ev] = sum_l P[l, s] g[l, ev]: (batch, s, ev, l)
        grads.push_back(
            contraction(b, loc, p, g, init,
                        {a.map(ctx, 3, {2, 0}), a.map(ctx, 3, {2, 1}),
                         a.map(ctx, 3, {0, 1})}));
      } else {
        return unsupported(loc, "nn.scaled_dot_product_attention",
                           "a gradient for the mask");
      }
    }
    return success();
  }
};

template <typename OpTy, typename Model> void attachIfAbsent(MLIRContext *ctx) {
  std::optional<RegisteredOperationName> name =
      RegisteredOperationName::lookup(OpTy::getOperationName(), ctx);
  if (name && name->hasInterface<LowerToTensorOpInterface>())
    return;
  OpTy::template attachInterface<Model>(*ctx);
}

} // namespace

void vram::lowering::attachTransformerLowerings(MLIRContext *ctx) {
  MatmulOp::attachInterface<MatmulLowering<MatmulOp>>(*ctx);
  BmmOp::attachInterface<MatmulLowering<BmmOp>>(*ctx);
  LayerNormOp::attachInterface<LayerNormLowering>(*ctx);
  RmsNormOp::attachInterface<RmsNormLowering>(*ctx);
  GroupNormOp::attachInterface<GroupNormLowering>(*ctx);
  GeluOp::attachInterface<GeluLowering>(*ctx);
  SoftmaxOp::attachInterface<SoftmaxLikeLowering<SoftmaxOp, false>>(*ctx);
  LogSoftmaxOp::attachInterface<SoftmaxLikeLowering<LogSoftmaxOp, true>>(*ctx);
  DropoutOp::attachInterface<DropoutLowering>(*ctx);
  EmbeddingOp::attachInterface<EmbeddingLowering>(*ctx);
  VocabParallelEmbeddingOp::attachInterface<VocabParallelEmbeddingLowering>(
      *ctx);
  TransposeOp::attachInterface<TransposeLowering>(*ctx);
  PermuteOp::attachInterface<PermuteLowering>(*ctx);
  SliceOp::attachInterface<SliceLowering>(*ctx);
  SplitOp::attachInterface<SplitLowering>(*ctx);
  ExpandOp::attachInterface<ExpandLowering>(*ctx);
  ContiguousOp::attachInterface<CopyLowering<ContiguousOp>>(*ctx);
  KvCacheUpdateOp::attachInterface<CopyLowering<KvCacheUpdateOp>>(*ctx);
  AllReduceOp::attachInterface<CopyLowering<AllReduceOp>>(*ctx);
  AllReduceGradOp::attachInterface<AllReduceGradLowering>(*ctx);
  AllGatherOutputOp::attachInterface<AllGatherOutputLowering>(*ctx);
  SplitInputOp::attachInterface<SplitInputLowering>(*ctx);
  ReduceScatterOutputOp::attachInterface<ReduceScatterOutputLowering>(*ctx);
  MaskedFillOp::attachInterface<MaskedFillLowering>(*ctx);
  ScaledDotProductAttentionOp::attachInterface<AttentionLowering>(*ctx);
  attachIfAbsent<ConstantOp, ConstantLowering>(ctx);
  attachIfAbsent<MulOp, ScalarMulDivLowering<MulOp, false>>(ctx);
  attachIfAbsent<DivOp, ScalarMulDivLowering<DivOp, true>>(ctx);
}
