//===- RoutingLowerings.cpp - mixture-of-experts ops on linalg/tensor -----===//
//
// LowerToTensorOpInterface models of nn.topk, nn.moe_dispatch and
// nn.grouped_mm (NNOpsRouting.cpp, NNOpsLinearAlgebra.cpp). As in the other
// lowerings, every tensor PyTorch allocates is a new tensor and only those:
// topk's per-row columns, the dispatch's per-pair ranks and the rows'
// groups of grouped_mm are stack scratch.
//
// The sizes are static, the values data-dependent: each quantity is a
// linalg.generic over every candidate (the top k by k passes over each row,
// the pairs ordered by a counting sort that compares every pair with every
// other, each row's group by comparing it with every offset). Quadratic in
// the pairs, which is cheap at the sizes a validation runs.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "vram/Dialect/NN/NNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace vram;
using namespace vram::nn;
using namespace vram::lowering;

namespace {

/// The iteration index `dim` as an integer of `type`.
Value indexAs(OpBuilder &b, Location loc, unsigned dim, Type type) {
  return arith::IndexCastOp::create(b, loc, type,
                                    linalg::IndexOp::create(b, loc, dim));
}

Value eqInt(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, y);
}

/// acc + 1 where `hit`, else acc (an integer count).
Value countIf(OpBuilder &b, Location loc, Value hit, Value acc) {
  Value one = arith::ConstantOp::create(b, loc, acc.getType(),
                                        b.getIntegerAttr(acc.getType(), 1));
  return arith::SelectOp::create(b, loc, hit,
                                 arith::AddIOp::create(b, loc, acc, one), acc);
}

//===----------------------------------------------------------------------===//
// nn.topk over the last dimension: pass j finds the j-th largest (smallest)
// value of each row (the largest not chosen by an earlier pass) and its
// first index, as torch.topk(sorted=True) orders them. Backward: the gradient
// scattered into zeros of the input's shape at the indices
// (value_selecting_reduction_backward).
//===----------------------------------------------------------------------===//

/// The iteration dimension of each of a rank-`rank` tensor's dimensions
/// when the iteration runs over its other dimensions in order (0 ..
/// rank - 2) and puts dimension `dim` at `at`.
static SmallVector<unsigned> withReducedDim(unsigned rank, unsigned dim,
                                            unsigned at) {
  SmallVector<unsigned> dims;
  for (unsigned i = 0; i < rank; ++i)
    dims.push_back(i < dim ? i : i == dim ? at : i - 1);
  return dims;
}

struct TopkLowering : ExternalModel<TopkLowering, TopkOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    auto topk = cast<TopkOp>(op);
    Location loc = op->getLoc();
    MLIRContext *ctx = b.getContext();
    Value x = operands[0];
    RankedTensorType in = tensorType(x);
    unsigned rank = in.getRank();
    int64_t topkDim = static_cast<int64_t>(topk.getDim());
    unsigned dim = topkDim < 0 ? topkDim + rank : topkDim;
    int64_t k = topk.getK();
    Type i64 = b.getI64Type();
    SmallVector<int64_t> rowShape(in.getShape());
    rowShape.erase(rowShape.begin() + dim);
    auto rowsOf = [&](Type et) { return RankedTensorType::get(rowShape, et); };
    // Iteration (rows..., e): the rows are the input's other dimensions in
    // order, e its dimension `dim`; a column [rows] reads (rows...).
    AffineMap rowMap = dimMap(ctx, rank, range(0, rank - 1));
    AffineMap inMap = dimMap(ctx, rank, withReducedDim(rank, dim, rank - 1));
    SmallVector<Value> maxima, indices;
    for (int64_t j = 0; j < k; ++j) {
      // Whether no earlier pass took e (the block arguments after the
      // leading `skip` ones are the earlier indices).
      auto untaken = [&](OpBuilder &nb, Location nloc, ValueRange a,
                         unsigned skip) {
        Value e = indexAs(nb, nloc, rank - 1, i64);
        Value free = arith::ConstantOp::create(nb, nloc, nb.getBoolAttr(true));
        for (int64_t i = 0; i < j; ++i)
          free = arith::AndIOp::create(
              nb, nloc, free,
              arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::ne,
                                    a[skip + i], e));
        return free;
      };
      SmallVector<Value> ins{x};
      SmallVector<AffineMap> maps{inMap};
      for (Value idx : indices) {
        ins.push_back(idx);
        maps.push_back(rowMap);
      }
      maps.push_back(rowMap);
      bool smallest = topk.getSmallest();
      double worst = std::numeric_limits<double>::infinity();
      Value max = generic(
          b, loc, ins,
          fill(b, loc, stackScratch(b, loc, rowsOf(in.getElementType())),
               smallest ? worst : -worst),
          maps, [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
            Value acc = a.back();
            Value larger =
                arith::CmpFOp::create(nb, nloc,
                                      smallest ? arith::CmpFPredicate::OLT
                                               : arith::CmpFPredicate::OGT,
                                      a[0], acc);
            Value take = arith::AndIOp::create(nb, nloc, larger,
                                               untaken(nb, nloc, a, 1));
            return arith::SelectOp::create(nb, nloc, take, a[0], acc);
          });
      // The first index holding it that no earlier pass took.
      ins.insert(ins.begin() + 1, max);
      maps.insert(maps.begin() + 1, rowMap);
      Value index = generic(
          b, loc, ins,
          fillInteger(b, loc, stackScratch(b, loc, rowsOf(i64)),
                      in.getShape()[dim]),
          maps, [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
            Value acc = a.back();
            Value e = indexAs(nb, nloc, rank - 1, i64);
            Value hit = arith::CmpFOp::create(
                nb, nloc, arith::CmpFPredicate::OEQ, a[0], a[1]);
            hit = arith::AndIOp::create(nb, nloc, hit, untaken(nb, nloc, a, 2));
            hit = arith::AndIOp::create(
                nb, nloc, hit,
                arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::slt, e,
                                      acc));
            return arith::SelectOp::create(nb, nloc, hit, e, acc);
          });
      maxima.push_back(max);
      indices.push_back(index);
    }
    // Columns into the results, k at `dim` (iteration: the results'
    // dimensions; a column reads all but `dim`).
    SmallVector<unsigned> others = range(0, rank);
    others.erase(others.begin() + dim);
    AffineMap resultRowMap = dimMap(ctx, rank, others);
    auto gather = [&](ArrayRef<Value> columns, RankedTensorType type) {
      SmallVector<AffineMap> maps(columns.size(), resultRowMap);
      maps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));
      return generic(b, loc, columns, newTensor(b, loc, type), maps,
                     [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
                       Value j = linalg::IndexOp::create(nb, nloc, dim);
                       Value v = a[0];
                       for (int64_t i = 1; i < k; ++i)
                         v = arith::SelectOp::create(
                             nb, nloc,
                             arith::CmpIOp::create(nb, nloc,
                                                   arith::CmpIPredicate::eq, j,
                                                   indexConstant(nb, nloc, i)),
                             a[i], v);
                       return v;
                     });
    };
    results.push_back(
        gather(maxima, cast<RankedTensorType>(topk.getValues().getType())));
    results.push_back(
        gather(indices, cast<RankedTensorType>(topk.getIndices().getType())));
    return success();
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    MLIRContext *ctx = b.getContext();
    Value g = node.grads[0], idx = node.savedResults[1];
    auto in = cast<RankedTensorType>(node.forwardType.getInput(0));
    unsigned rank = in.getRank();
    auto dimAttr = node.forwardAttrs.getAs<IntegerAttr>("dim");
    int64_t topkDim = dimAttr ? dimAttr.getInt() : -1;
    unsigned dim = topkDim < 0 ? topkDim + rank : topkDim;
    // Iteration (rows..., e, j): gx[rows, e] += g[rows, j] where idx == e
    // (e and j at `dim` of gx and of g and idx).
    unsigned n = rank + 1;
    AffineMap byJ = dimMap(ctx, n, withReducedDim(rank, dim, rank));
    grads.push_back(generic(
        b, loc, {g, idx}, fill(b, loc, newTensor(b, loc, in), 0.0),
        {byJ, byJ, dimMap(ctx, n, withReducedDim(rank, dim, rank - 1))},
        [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
          Value e = indexAs(nb, nloc, rank - 1, nb.getI64Type());
          return arith::SelectOp::create(nb, nloc, eqInt(nb, nloc, a[1], e),
                                         add(nb, nloc, a[2], a[0]), a[2]);
        }));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// nn.moe_dispatch: a counting sort of the S flat expert ids. counts[e] =
// #{s : id[s] = e}, offsets their cumsum; pair s goes to position
// offsets[id[s]] - counts[id[s]] + #{s' < s : id[s'] = id[s]} (inverse[s]);
// perm[i] is the pair at position i, sorted[i] its id, token_index[i] =
// perm[i] / k. torch.sort need not be stable, but every order of equal ids
// gives the experts the same rows, whose products do not depend on it.
//===----------------------------------------------------------------------===//

struct MoeDispatchLowering : ExternalModel<MoeDispatchLowering, MoeDispatchOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    auto dispatch = cast<MoeDispatchOp>(op);
    Location loc = op->getLoc();
    MLIRContext *ctx = b.getContext();
    RankedTensorType in = tensorType(operands[0]);
    int64_t k = in.getDimSize(1), pairs = in.getDimSize(0) * k;
    int64_t experts = dispatch.getNumExperts();
    Type i64 = b.getI64Type(), i32 = b.getI32Type();
    auto pairType = RankedTensorType::get({pairs}, i64);
    Value ids = reshapeView(b, loc, operands[0], pairType);
    auto typeOf = [&](Value v) { return cast<RankedTensorType>(v.getType()); };
    AffineMap first = dimMap(ctx, 2, {0}), second = dimMap(ctx, 2, {1});
    AffineMap one = AffineMap::getMultiDimIdentityMap(1, ctx);
    auto expertOf = [&](OpBuilder &nb, Location nloc, Value id) {
      return clampIndex(nb, nloc, id, experts);
    };

    // (e, s): counts[e] = #{s : id[s] = e}.
    Value counts = generic(
        b, loc, ids,
        fillInteger(b, loc, newTensor(b, loc, typeOf(dispatch.getCounts())), 0),
        {second, first}, [&](OpBuilder &nb, Location nloc, ValueRange a) {
          Value e = indexAs(nb, nloc, 0, i64);
          return countIf(nb, nloc, eqInt(nb, nloc, a[0], e), a[1]);
        });
    // (e, e2): offsets[e] = sum_{e2 <= e} counts[e2].
    Value offsets = generic(
        b, loc, counts,
        fillInteger(b, loc, newTensor(b, loc, typeOf(dispatch.getOffsets())),
                    0),
        {second, first}, [&](OpBuilder &nb, Location nloc, ValueRange a) {
          Value upTo =
              arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::ule,
                                    linalg::IndexOp::create(nb, nloc, 1),
                                    linalg::IndexOp::create(nb, nloc, 0));
          return arith::SelectOp::create(
                     nb, nloc, upTo,
                     arith::AddIOp::create(nb, nloc, a[1], a[0]), a[1])
              .getResult();
        });
    // (s, s2): rank[s] = #{s2 < s : id[s2] = id[s]}.
    Value rank = generic(b, loc, {ids, ids},
                         fillInteger(b, loc, stackScratch(b, loc, pairType), 0),
                         {first, second, first},
                         [&](OpBuilder &nb, Location nloc, ValueRange a) {
                           Value before = arith::CmpIOp::create(
                               nb, nloc, arith::CmpIPredicate::ult,
                               linalg::IndexOp::create(nb, nloc, 1),
                               linalg::IndexOp::create(nb, nloc, 0));
                           Value hit = arith::AndIOp::create(
                               nb, nloc, before, eqInt(nb, nloc, a[0], a[1]));
                           return countIf(nb, nloc, hit, a[2]);
                         });
    // inverse[s]: the group's start plus the pair's rank in it.
    Value inverse = generic(
        b, loc, {ids, rank}, newTensor(b, loc, pairType), {one, one, one},
        [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
          Value e = expertOf(nb, nloc, a[0]);
          Value end = tensor::ExtractOp::create(nb, nloc, offsets, e);
          Value count = tensor::ExtractOp::create(nb, nloc, counts, e);
          Value start = arith::ExtSIOp::create(
              nb, nloc, i64, arith::SubIOp::create(nb, nloc, end, count));
          return arith::AddIOp::create(nb, nloc, start, a[1]);
        });
    // (i, s): perm[i] = the s with inverse[s] = i.
    Value perm = generic(
        b, loc, inverse, fillInteger(b, loc, newTensor(b, loc, pairType), 0),
        {second, first}, [&](OpBuilder &nb, Location nloc, ValueRange a) {
          Value i = indexAs(nb, nloc, 0, i64);
          return arith::SelectOp::create(nb, nloc, eqInt(nb, nloc, a[0], i),
                                         indexAs(nb, nloc, 1, i64), a[1])
              .getResult();
        });
    Value sorted =
        generic(b, loc, perm, newTensor(b, loc, pairType), {one, one},
                [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
                  Value s = clampIndex(nb, nloc, a[0], pairs);
                  return tensor::ExtractOp::create(nb, nloc, ids, s);
                });
    Value kValue =
        arith::ConstantOp::create(b, loc, i64, b.getIntegerAttr(i64, k));
    Value token =
        generic(b, loc, perm, newTensor(b, loc, pairType), {one, one},
                [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
                  return arith::DivSIOp::create(nb, nloc, a[0], kValue);
                });
    Value histogram = generic(
        b, loc, sorted, newTensor(b, loc, typeOf(dispatch.getHistogram())),
        {one, one}, [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
          return arith::TruncIOp::create(nb, nloc, i32, a[0]);
        });
    results.append({sorted, perm, token, histogram, counts, offsets, inverse});
    return success();
  }
};

//===----------------------------------------------------------------------===//
// nn.grouped_mm: y[s, o] = sum_i x[s, i] W[g(s), o, i], where the group
// g(s) = #{e : offsets[e] <= s} (rows past the last offset read the last
// group). Backward: gx[s, i] = sum_o g[s, o] W[g(s), o, i] and
// gW[e, o, i] = sum_{s in group e} g[s, o] x[s, i].
//===----------------------------------------------------------------------===//

struct GroupedMmLowering : ExternalModel<GroupedMmLowering, GroupedMmOp> {
  /// g(s) for each row, on the stack.
  static Value rowGroups(OpBuilder &b, Location loc, Value offsets,
                         int64_t rows) {
    MLIRContext *ctx = b.getContext();
    Type i64 = b.getI64Type();
    Value init = fillInteger(
        b, loc, stackScratch(b, loc, RankedTensorType::get({rows}, i64)), 0);
    return generic(b, loc, offsets, init,
                   {dimMap(ctx, 2, {1}), dimMap(ctx, 2, {0})},
                   [&](OpBuilder &nb, Location nloc, ValueRange a) {
                     Value s = indexAs(nb, nloc, 0, a[0].getType());
                     Value past = arith::CmpIOp::create(
                         nb, nloc, arith::CmpIPredicate::sle, a[0], s);
                     return countIf(nb, nloc, past, a[1]);
                   });
  }

  /// W[g(s), o, i] inside a body whose iteration names o and i.
  static Value weightAt(OpBuilder &b, Location loc, Value w, Value group,
                        unsigned oDim, unsigned iDim) {
    Value e = clampIndex(b, loc, group, tensorType(w).getDimSize(0));
    return tensor::ExtractOp::create(
        b, loc, w,
        ValueRange{e, linalg::IndexOp::create(b, loc, oDim),
                   linalg::IndexOp::create(b, loc, iDim)});
  }

  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    Location loc = op->getLoc();
    MLIRContext *ctx = b.getContext();
    Value x = operands[0], w = operands[1];
    auto outType = cast<RankedTensorType>(op->getResult(0).getType());
    Value groups = rowGroups(b, loc, operands[2], outType.getDimSize(0));
    // (s, o, i)
    results.push_back(generic(
        b, loc, {x, groups}, fill(b, loc, newTensor(b, loc, outType), 0.0),
        {dimMap(ctx, 3, {0, 2}), dimMap(ctx, 3, {0}), dimMap(ctx, 3, {0, 1})},
        [&](OpBuilder &nb, Location nloc, ValueRange a) {
          return add(nb, nloc, a[2],
                     mul(nb, nloc, a[0], weightAt(nb, nloc, w, a[1], 1, 2)));
        }));
    return success();
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    MLIRContext *ctx = b.getContext();
    Value g = node.grads[0], x = node.savedOperands[0],
          w = node.savedOperands[1];
    Value groups =
        rowGroups(b, loc, node.savedOperands[2], tensorType(g).getDimSize(0));
    for (int64_t operand : node.gradOperands) {
      auto type = cast<RankedTensorType>(node.forwardType.getInput(operand));
      Value init = fill(b, loc, newTensor(b, loc, type), 0.0);
      if (operand == 0) {
        // (s, i, o): gx[s, i] += g[s, o] W[g(s), o, i].
        grads.push_back(
            generic(b, loc, {g, groups}, init,
                    {dimMap(ctx, 3, {0, 2}), dimMap(ctx, 3, {0}),
                     dimMap(ctx, 3, {0, 1})},
                    [&](OpBuilder &nb, Location nloc, ValueRange a) {
                      return add(nb, nloc, a[2],
                                 mul(nb, nloc, a[0],
                                     weightAt(nb, nloc, w, a[1], 2, 1)));
                    }));
        continue;
      }
      // (e, o, i, s): gW[e, o, i] += g[s, o] x[s, i] for the rows of e.
      grads.push_back(generic(
          b, loc, {g, x, groups}, init,
          {dimMap(ctx, 4, {3, 1}), dimMap(ctx, 4, {3, 2}), dimMap(ctx, 4, {3}),
           dimMap(ctx, 4, {0, 1, 2})},
          [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
            Value e = clampIndex(nb, nloc, a[2], type.getDimSize(0));
            Value mine =
                arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::eq, e,
                                      linalg::IndexOp::create(nb, nloc, 0));
            return arith::SelectOp::create(
                nb, nloc, mine, add(nb, nloc, a[3], mul(nb, nloc, a[0], a[1])),
                a[3]);
          }));
    }
    return success();
  }
};

} // namespace

void vram::lowering::attachRoutingLowerings(MLIRContext *ctx) {
  TopkOp::attachInterface<TopkLowering>(*ctx);
  MoeDispatchOp::attachInterface<MoeDispatchLowering>(*ctx);
  GroupedMmOp::attachInterface<GroupedMmLowering>(*ctx);
}
