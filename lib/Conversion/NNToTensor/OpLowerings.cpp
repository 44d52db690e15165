//===- OpLowerings.cpp - nn ops on linalg/tensor/arith/math ---------------===//
//
// One LowerToTensorOpInterface model per op: its forward formula, the extra
// tensors it saves and its backward formula, next to each other. The
// formulas are PyTorch's (tools/autograd/derivatives.yaml and the ATen CPU
// kernels); every tensor PyTorch allocates is a new tensor here (and only
// those: per-row reductions a kernel keeps on its stack are stack scratch),
// so the bufferized step allocates what the memory analysis predicts.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "vram/Conversion/NNToTensor.h"
#include "vram/Dialect/NN/NNOps.h"
#include "vram/Dialect/NN/TorchSemantics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"

#include <cmath>

using namespace mlir;
using namespace vram;
using namespace vram::nn;
using namespace vram::lowering;

namespace {

/// A [rows, cols] tensor, or a located error naming the op.
LogicalResult expectMatrix(Location loc, StringRef opName, Value v,
                           StringRef what) {
  if (tensorType(v).getRank() == 2)
    return success();
  return emitError(loc) << opName << ": the lowering supports a 2-D " << what
                        << " only, got " << v.getType();
}

//===----------------------------------------------------------------------===//
// nn.linear: y = x W^T + b
//===----------------------------------------------------------------------===//

/// [0, n) followed by `tail`.
SmallVector<unsigned> leadThen(unsigned n, ArrayRef<unsigned> tail) {
  SmallVector<unsigned> dims;
  for (unsigned d = 0; d < n; ++d)
    dims.push_back(d);
  dims.append(tail.begin(), tail.end());
  return dims;
}

struct LinearLowering : ExternalModel<LinearLowering, LinearOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    Location loc = op->getLoc();
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    Value out = newTensor(b, loc, resultType);
    Value init = operands.size() > 2
                     ? elementwise(b, loc, operands[2], out,
                                   [](OpBuilder &, Location, ValueRange a) {
                                     return a[0];
                                   })
                     : fill(b, loc, out, 0.0);
    // (lead..., o, i): y[lead, o] += x[lead, i] * W[o, i]
    MLIRContext *ctx = b.getContext();
    unsigned lead = resultType.getRank() - 1, o = lead, i = lead + 1;
    unsigned n = lead + 2;
    results.push_back(
        contract(b, loc, operands[0], operands[1], init,
                 {dimMap(ctx, n, leadThen(lead, {i})), dimMap(ctx, n, {o, i}),
                  dimMap(ctx, n, leadThen(lead, {o}))}));
    return success();
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    MLIRContext *ctx = b.getContext();
    Value g = node.grads[0];
    unsigned lead = tensorType(g).getRank() - 1;
    for (int64_t k : node.gradOperands) {
      auto type = cast<RankedTensorType>(node.forwardType.getInput(k));
      Value init = fill(b, loc, newTensor(b, loc, type), 0.0);
      if (k == 0) {
        // (lead..., i, o): gx[lead, i] += g[lead, o] * W[o, i]
        unsigned i = lead, o = lead + 1, n = lead + 2;
        grads.push_back(contract(b, loc, g, node.savedOperands[1], init,
                                 {dimMap(ctx, n, leadThen(lead, {o})),
                                  dimMap(ctx, n, {o, i}),
                                  dimMap(ctx, n, leadThen(lead, {i}))}));
      } else if (k == 1) {
        // (o, i, lead...): gW[o, i] += g[lead, o] * x[lead, i]
        unsigned o = 0, i = 1, n = lead + 2;
        SmallVector<unsigned> rows;
        for (unsigned d = 2; d < n; ++d)
          rows.push_back(d);
        SmallVector<unsigned> gDims(rows), xDims(rows);
        gDims.push_back(o);
        xDims.push_back(i);
        grads.push_back(contract(b, loc, g, node.savedOperands[0], init,
                                 {dimMap(ctx, n, gDims), dimMap(ctx, n, xDims),
                                  dimMap(ctx, n, {o, i})}));
      } else {
        grads.push_back(sumInto(b, loc, g, init));
      }
    }
    return success();
  }
};

//===----------------------------------------------------------------------===//
// nn.relu: max(x, 0); backward threshold_backward(g, y) = g * (y > 0)
//===----------------------------------------------------------------------===//

struct ReluLowering : ExternalModel<ReluLowering, ReluOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    Location loc = op->getLoc();
    bool inplace = cast<ReluOp>(op).getInplace();
    Value x = operands[0];
    auto relu = [](OpBuilder &nb, Location nloc, ValueRange a) {
      Value zero = floatConstant(nb, nloc, a[0].getType(), 0.0);
      return arith::MaximumFOp::create(nb, nloc, a[0], zero).getResult();
    };
    // relu_ writes its operand's storage.
    results.push_back(
        inplace
            ? elementwise(b, loc, {}, x, relu, true)
            : elementwise(b, loc, x, newTensor(b, loc, tensorType(x)), relu));
    return success();
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    Value y = node.savedResults[0];
    grads.push_back(elementwise(
        b, loc, {node.grads[0], y}, newTensor(b, loc, tensorType(y)),
        [](OpBuilder &nb, Location nloc, ValueRange a) {
          Value zero = floatConstant(nb, nloc, a[0].getType(), 0.0);
          Value pos = arith::CmpFOp::create(nb, nloc, arith::CmpFPredicate::OGT,
                                            a[1], zero);
          return arith::SelectOp::create(nb, nloc, pos, a[0], zero).getResult();
        }));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// nn.add: lhs + rhs with broadcasting; backward sums the gradient over the
// dimensions an operand was broadcast along (same-shape operands take the
// gradient itself, with no node).
//===----------------------------------------------------------------------===//

struct AddLowering : ExternalModel<AddLowering, AddOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    Location loc = op->getLoc();
    auto add = [](OpBuilder &nb, Location nloc, ValueRange a) {
      return arith::AddFOp::create(nb, nloc, a[0], a[1]).getResult();
    };
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    if (cast<AddOp>(op).getInplace()) {
      // lhs += rhs: the body reads rhs then lhs (the destination).
      results.push_back(elementwise(
          b, loc, operands[1], operands[0],
          [](OpBuilder &nb, Location nloc, ValueRange a) {
            return arith::AddFOp::create(nb, nloc, a[1], a[0]).getResult();
          },
          true));
      return success();
    }
    results.push_back(
        elementwise(b, loc, operands, newTensor(b, loc, resultType), add));
    return success();
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    for (int64_t i : node.gradOperands) {
      auto type = cast<RankedTensorType>(node.forwardType.getInput(i));
      grads.push_back(sumInto(b, loc, node.grads[0],
                              fill(b, loc, newTensor(b, loc, type), 0.0)));
    }
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Views: nn.flatten and nn.reshape alias their operand.
//===----------------------------------------------------------------------===//

template <typename OpTy>
struct ReshapeLikeLowering : ExternalModel<ReshapeLikeLowering<OpTy>, OpTy> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    // vram-insert-contiguous copied the operands whose strides cannot
    // express the view, so this is a view.
    results.push_back(
        reshapeOrCopy(b, op->getLoc(), operands[0],
                      cast<RankedTensorType>(op->getResult(0).getType())));
    return success();
  }
  // The gradient is a view of the output gradient (no backward node),
  // unless it arrives through a transposing view whose strides cannot
  // express the input's shape: then ViewBackward's reshape copies it.
  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    auto type = cast<RankedTensorType>(node.forwardType.getInput(0));
    grads.push_back(
        reshapeView(b, loc, copyToNewTensor(b, loc, node.grads[0]), type));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// nn.cross_entropy: log_softmax (keeps its [N, C] output) + nll_loss (mean).
//===----------------------------------------------------------------------===//

struct CrossEntropyLowering
    : ExternalModel<CrossEntropyLowering, CrossEntropyOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    Location loc = op->getLoc();
    Value x = operands[0], target = operands[1];
    if (failed(expectMatrix(loc, "nn.cross_entropy", x, "input")))
      return failure();
    MLIRContext *ctx = b.getContext();
    Value rowMax, rowSum;
    rowSoftmaxStats(b, loc, x, rowMax, rowSum);
    auto lossType = cast<RankedTensorType>(op->getResult(0).getType());
    Value loss = fill(b, loc, newTensor(b, loc, lossType), 0.0);
    // loss = sum_n (log sum_c exp(x - max) + max - x[n, t[n]]) / N
    AffineMap id = AffineMap::getMultiDimIdentityMap(1, ctx);
    AffineMap scalar = AffineMap::get(1, 0, {}, ctx);
    loss = linalg::GenericOp::create(
               b, loc, lossType, ValueRange{rowMax, rowSum, target}, loss,
               {id, id, id, scalar}, {utils::IteratorType::reduction},
               [&](OpBuilder &nb, Location nloc, ValueRange a) {
                 Value n = linalg::IndexOp::create(nb, nloc, 0);
                 Value t = arith::IndexCastOp::create(nb, nloc,
                                                      nb.getIndexType(), a[2]);
                 Value xt =
                     tensor::ExtractOp::create(nb, nloc, x, ValueRange{n, t});
                 Value lse = arith::AddFOp::create(
                     nb, nloc, math::LogOp::create(nb, nloc, a[1]), a[0]);
                 Value nll = arith::SubFOp::create(nb, nloc, lse, xt);
                 linalg::YieldOp::create(
                     nb, nloc,
                     arith::AddFOp::create(nb, nloc, a[3], nll).getResult());
               })
               .getResult(0);
    double invN = 1.0 / tensorType(x).getDimSize(0);
    results.push_back(elementwise(
        b, loc, {}, loss,
        [&](OpBuilder &nb, Location nloc, ValueRange a) {
          Value s = floatConstant(nb, nloc, a[0].getType(), invN);
          return arith::MulFOp::create(nb, nloc, a[0], s).getResult();
        },
        true));
    return success();
  }

  static FailureOr<Value> lowerSavedTensor(OpBuilder &b, Location loc,
                                           const SavedTensorLowering &saved) {
    if (saved.kind != "log_probs")
      return emitError(loc) << "nn.cross_entropy: no lowering of the saved "
                               "tensor '"
                            << saved.kind << "'";
    Value x = saved.operands[0];
    if (failed(expectMatrix(loc, "nn.cross_entropy", x, "input")))
      return failure();
    Value rowMax, rowSum;
    rowSoftmaxStats(b, loc, x, rowMax, rowSum);
    MLIRContext *ctx = b.getContext();
    AffineMap id = AffineMap::getMultiDimIdentityMap(2, ctx);
    AffineMap row = AffineMap::get(2, 0, {getAffineDimExpr(0, ctx)}, ctx);
    return linalg::GenericOp::create(
               b, loc, x.getType(), ValueRange{x, rowMax, rowSum},
               newTensor(b, loc, tensorType(x)), {id, row, row, id},
               {utils::IteratorType::parallel, utils::IteratorType::parallel},
               [&](OpBuilder &nb, Location nloc, ValueRange a) {
                 Value shifted = arith::SubFOp::create(nb, nloc, a[0], a[1]);
                 Value lp = arith::SubFOp::create(
                     nb, nloc, shifted, math::LogOp::create(nb, nloc, a[2]));
                 linalg::YieldOp::create(nb, nloc, lp);
               })
        .getResult(0);
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    Value logProbs = node.savedExtras[0], target = node.savedOperands[1];
    RankedTensorType type = tensorType(logProbs);
    MLIRContext *ctx = b.getContext();
    AffineMap id = AffineMap::getMultiDimIdentityMap(2, ctx);
    AffineMap row = AffineMap::get(2, 0, {getAffineDimExpr(0, ctx)}, ctx);
    SmallVector<utils::IteratorType> parallel(2, utils::IteratorType::parallel);
    // nll_loss_backward: a dense gradient of the log-probabilities, -1/N at
    // each row's target (the node's workspace).
    double scale = -1.0 / type.getDimSize(0);
    Value dense =
        linalg::GenericOp::create(
            b, loc, type, target, newTensor(b, loc, type), {row, id}, parallel,
            [&](OpBuilder &nb, Location nloc, ValueRange a) {
              Value c = arith::IndexCastOp::create(
                  nb, nloc, a[0].getType(),
                  linalg::IndexOp::create(nb, nloc, 1));
              Value hit = arith::CmpIOp::create(
                  nb, nloc, arith::CmpIPredicate::eq, c, a[0]);
              Value v = floatConstant(nb, nloc, a[1].getType(), scale);
              Value zero = floatConstant(nb, nloc, a[1].getType(), 0.0);
              linalg::YieldOp::create(
                  nb, nloc,
                  arith::SelectOp::create(nb, nloc, hit, v, zero).getResult());
            })
            .getResult(0);
    // log_softmax_backward: g - exp(logp) * sum_c g.
    auto rowType =
        RankedTensorType::get({type.getDimSize(0)}, type.getElementType());
    Value rowSum =
        linalg::GenericOp::create(
            b, loc, rowType, dense,
            fill(b, loc, stackScratch(b, loc, rowType), 0.0), {id, row},
            {utils::IteratorType::parallel, utils::IteratorType::reduction},
            [&](OpBuilder &nb, Location nloc, ValueRange a) {
              linalg::YieldOp::create(
                  nb, nloc,
                  arith::AddFOp::create(nb, nloc, a[1], a[0]).getResult());
            })
            .getResult(0);
    grads.push_back(
        linalg::GenericOp::create(
            b, loc, type, ValueRange{dense, logProbs, rowSum},
            newTensor(b, loc, type), {id, id, row, id}, parallel,
            [&](OpBuilder &nb, Location nloc, ValueRange a) {
              Value p = math::ExpOp::create(nb, nloc, a[1]);
              Value ps = arith::MulFOp::create(nb, nloc, p, a[2]);
              linalg::YieldOp::create(
                  nb, nloc,
                  arith::SubFOp::create(nb, nloc, a[0], ps).getResult());
            })
            .getResult(0));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// nn.mse_loss: mean((x - t)^2); backward 2 (x - t) / numel.
//===----------------------------------------------------------------------===//

struct MseLossLowering : ExternalModel<MseLossLowering, MseLossOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    Location loc = op->getLoc();
    MLIRContext *ctx = b.getContext();
    RankedTensorType type = tensorType(operands[0]);
    auto lossType = cast<RankedTensorType>(op->getResult(0).getType());
    Value loss = fill(b, loc, newTensor(b, loc, lossType), 0.0);
    unsigned rank = type.getRank();
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
    loss = linalg::GenericOp::create(
               b, loc, lossType, operands, loss,
               {id, id, AffineMap::get(rank, 0, {}, ctx)},
               SmallVector<utils::IteratorType>(rank,
                                                utils::IteratorType::reduction),
               [&](OpBuilder &nb, Location nloc, ValueRange a) {
                 Value d = arith::SubFOp::create(nb, nloc, a[0], a[1]);
                 Value sq = arith::MulFOp::create(nb, nloc, d, d);
                 linalg::YieldOp::create(
                     nb, nloc,
                     arith::AddFOp::create(nb, nloc, a[2], sq).getResult());
               })
               .getResult(0);
    double inv = 1.0 / type.getNumElements();
    results.push_back(elementwise(
        b, loc, {}, loss,
        [&](OpBuilder &nb, Location nloc, ValueRange a) {
          Value s = floatConstant(nb, nloc, a[0].getType(), inv);
          return arith::MulFOp::create(nb, nloc, a[0], s).getResult();
        },
        true));
    return success();
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    Value x = node.savedOperands[0], t = node.savedOperands[1];
    double scale = 2.0 / tensorType(x).getNumElements();
    for (int64_t i : node.gradOperands) {
      double sign = i == 0 ? 1.0 : -1.0;
      grads.push_back(elementwise(
          b, loc, {x, t}, newTensor(b, loc, tensorType(x)),
          [&](OpBuilder &nb, Location nloc, ValueRange a) {
            Value d = arith::SubFOp::create(nb, nloc, a[0], a[1]);
            Value s = floatConstant(nb, nloc, d.getType(), sign * scale);
            return arith::MulFOp::create(nb, nloc, d, s).getResult();
          }));
    }
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Step ops: nn.saved and nn.backward run the forward op's formulas.
//===----------------------------------------------------------------------===//

/// The LowerToTensorOpInterface of the op named `name`, or a located error.
FailureOr<const LowerToTensorOpInterface::Concept *>
lookupLowering(Location loc, StringRef name, MLIRContext *ctx) {
  std::optional<RegisteredOperationName> op =
      RegisteredOperationName::lookup(name, ctx);
  if (!op)
    return emitError(loc) << "unknown forward op '" << name << "'";
  auto *concept = op->getInterface<LowerToTensorOpInterface>();
  if (!concept)
    return emitError(loc) << "'" << name
                          << "' has no lowering to tensors "
                             "(LowerToTensorOpInterface)";
  return concept;
}

struct SavedLowering : ExternalModel<SavedLowering, SavedOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    auto saved = cast<SavedOp>(op);
    auto concept =
        lookupLowering(op->getLoc(), saved.getForwardOp(), op->getContext());
    if (failed(concept))
      return failure();
    // The sources are the forward op's operands, then its results.
    SavedTensorLowering info;
    info.kind = saved.getKind();
    info.forwardAttrs = saved.getForwardAttrs();
    info.resultType = saved.getType();
    // The forward ops that keep extra tensors have one result; a tensor
    // made before the op has only its operands.
    unsigned numResults = saved.getBeforeOp() ? 0 : 1;
    unsigned numOperands = operands.size() - numResults;
    info.operands.assign(operands.begin(), operands.begin() + numOperands);
    info.results.assign(operands.begin() + numOperands, operands.end());
    FailureOr<Value> value =
        (*concept)->lowerSavedTensor(b, op->getLoc(), info);
    if (failed(value))
      return failure();
    // The kernel computes the tensor with its operands and results alive
    // (the memory analysis's uses): a formula that needs none of them (a
    // dropout mask) still reads them.
    readOneElement(b, op->getLoc(), operands);
    results.push_back(*value);
    return success();
  }
};

/// Python references (nn.keep_alive) and the point where they are dropped
/// (nn.release: zero_grad's end of the gradients): the executed program
/// keeps the tensors alive until here, as PyTorch does.
template <typename OpTy>
struct KeepAliveLowering : ExternalModel<KeepAliveLowering<OpTy>, OpTy> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    readOneElement(b, op->getLoc(), operands);
    return success();
  }
};

struct BackwardNodeLowering : ExternalModel<BackwardNodeLowering, BackwardOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &options, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    auto node = cast<BackwardOp>(op);
    Location loc = op->getLoc();
    auto concept = lookupLowering(loc, node.getForwardOp(), op->getContext());
    if (failed(concept))
      return failure();
    BackwardLowering info;
    info.target = options.target;
    info.forwardAttrs = node.getForwardAttrs();
    info.forwardType = node.getForwardType();
    info.savedOperands.resize(info.forwardType.getNumInputs());
    info.savedResults.resize(info.forwardType.getNumResults());
    unsigned numSaved = node.getSaved().size();
    for (auto [value, role] :
         llvm::zip(operands.take_front(numSaved), node.getSavedRoles())) {
      auto r = cast<SavedRoleAttr>(role);
      switch (r.getKind()) {
      case SavedKind::Operand:
        info.savedOperands[r.getIndex()] = value;
        break;
      case SavedKind::Result:
        info.savedResults[r.getIndex()] = value;
        break;
      case SavedKind::Extra:
        if (info.savedExtras.size() <= (size_t)r.getIndex())
          info.savedExtras.resize(r.getIndex() + 1);
        info.savedExtras[r.getIndex()] = value;
        break;
      }
    }
    // A gradient handed through views has the last view's layout: the
    // inverse views (nn.grad_views) give the forward result's, a reshape
    // when they are only re-chunking.
    auto chains = op->getAttrOfType<ArrayAttr>(NNDialect::kGradViewsAttrName);
    if (ArrayRef<bool> of = node.getGradResults(); !of.empty())
      info.resultHasGrad.assign(of.begin(), of.end());
    else
      info.resultHasGrad.assign(info.forwardType.getNumResults(), true);
    SmallVector<unsigned> gradResults;
    for (auto [r, has] : llvm::enumerate(info.resultHasGrad))
      if (has)
        gradResults.push_back(r);
    for (auto [i, g] : llvm::enumerate(operands.drop_front(numSaved))) {
      auto want =
          cast<RankedTensorType>(info.forwardType.getResult(gradResults[i]));
      if (chains && i < chains.size())
        g = applyViewChain(b, loc, g, cast<ArrayAttr>(chains[i]));
      if (g.getType() != want) {
        if (tensorType(g).getNumElements() != want.getNumElements())
          return emitError(loc)
                 << "gradient of type " << g.getType()
                 << " does not match the forward result " << want;
        g = reshapeOrCopy(b, loc, g, want);
      }
      info.grads.push_back(g);
    }
    llvm::append_range(info.gradOperands, node.getGradOperands());
    if (failed((*concept)->lowerBackward(b, loc, info, results)))
      return failure();
    // Autograd holds what the node saved until the node has run, whether
    // or not its formula reads all of it (a pool's input, kept for its
    // sizes): one read of each keeps the buffer alive to here.
    for (Value saved : operands.take_front(numSaved)) {
      SmallVector<Value> zeros(tensorType(saved).getRank(),
                               arith::ConstantIndexOp::create(b, loc, 0));
      if (tensorType(saved).getNumElements() > 0)
        tensor::ExtractOp::create(b, loc, saved, zeros);
    }
    if (results.size() != op->getNumResults())
      return emitError(loc)
             << "the backward lowering of " << node.getForwardOp()
             << " returned " << results.size() << " gradients for "
             << op->getNumResults();
    for (auto [value, result] : llvm::zip(results, op->getResults()))
      if (value.getType() != result.getType())
        return emitError(loc)
               << "the backward lowering of " << node.getForwardOp()
               << " returned a " << value.getType() << " gradient for "
               << result.getType();
    return success();
  }
};

//===----------------------------------------------------------------------===//
// nn.accumulate_grad: acc + addend (in place into acc with `inplace`).
//===----------------------------------------------------------------------===//

struct AccumulateGradLowering
    : ExternalModel<AccumulateGradLowering, AccumulateGradOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    Location loc = op->getLoc();
    Value acc = operands[0], addend = operands[1];
    RankedTensorType type = tensorType(acc);
    // A gradient handed through views may have the last view's layout
    // (nn.grad_views: the accumulated gradient's, the addend's chain).
    if (auto chains =
            op->getAttrOfType<ArrayAttr>(NNDialect::kGradViewsAttrName)) {
      if (!cast<ArrayAttr>(chains[0]).empty())
        return op->emitError() << "nn.accumulate_grad: the lowering does not "
                                  "support accumulating into a gradient held "
                                  "through a transposing view";
      addend = applyViewChain(b, loc, addend, cast<ArrayAttr>(chains[1]));
    }
    if (tensorType(addend).getNumElements() == type.getNumElements() &&
        tensorType(addend).getShape() != type.getShape())
      addend = reshapeOrCopy(b, loc, addend, type);
    bool inplace = cast<AccumulateGradOp>(op).getInplace();
    if (inplace) {
      results.push_back(elementwise(
          b, loc, addend, acc,
          [](OpBuilder &nb, Location nloc, ValueRange a) {
            return arith::AddFOp::create(nb, nloc, a[1], a[0]).getResult();
          },
          true));
      return success();
    }
    results.push_back(elementwise(
        b, loc, {acc, addend}, newTensor(b, loc, type),
        [](OpBuilder &nb, Location nloc, ValueRange a) {
          return arith::AddFOp::create(nb, nloc, a[0], a[1]).getResult();
        }));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// nn.optimizer_step: torch.optim's update of the first step, in place into
// the parameters and state (torch/optim/sgd.py, adam.py, adamw.py).
//===----------------------------------------------------------------------===//

struct OptimizerStepLowering
    : ExternalModel<OptimizerStepLowering, OptimizerStepOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &options, SmallVectorImpl<Value> &,
                SmallVectorImpl<std::pair<unsigned, Value>> &updates) const {
    auto step = cast<OptimizerStepOp>(op);
    Location loc = op->getLoc();
    unsigned n = step.getParams().size();
    ValueRange params = operands.take_front(n);
    ValueRange grads = operands.slice(n, n);
    ValueRange state = operands.drop_front(2 * n);
    OptimizerKind kind = step.getOptimizer();
    OptimizerImpl impl = step.getImplementation();
    double wd = step.getWeightDecay().convertToDouble();
    double lr = options.lr;

    // Coupled weight decay: grad + wd * param, a new tensor per parameter.
    SmallVector<Value> effective(grads.begin(), grads.end());
    if (wd != 0 && kind != OptimizerKind::AdamW && kind != OptimizerKind::Lion)
      for (unsigned i = 0; i < n; ++i)
        effective[i] = elementwise(
            b, loc, {grads[i], params[i]},
            newTensor(b, loc, tensorType(params[i])),
            [&](OpBuilder &nb, Location nloc, ValueRange a) {
              Value w = floatConstant(nb, nloc, a[0].getType(), wd);
              Value d = arith::MulFOp::create(nb, nloc, a[1], w);
              return arith::AddFOp::create(nb, nloc, a[0], d).getResult();
            });

    auto axpy = [&](Value dest, Value x, double scale) {
      // dest += scale * x, in place
      return elementwise(
          b, loc, x, dest,
          [&](OpBuilder &nb, Location nloc, ValueRange a) {
            Value s = floatConstant(nb, nloc, a[0].getType(), scale);
            Value d = arith::MulFOp::create(nb, nloc, a[0], s);
            return arith::AddFOp::create(nb, nloc, a[1], d).getResult();
          },
          true);
    };

    if (kind == OptimizerKind::Sgd) {
      for (unsigned i = 0; i < n; ++i)
        updates.push_back({i, axpy(params[i], effective[i], -lr)});
      return success();
    }
    if (kind == OptimizerKind::Adafactor || kind == OptimizerKind::AdamW8bit ||
        isPagedOptimizer(kind))
      return op->emitError()
             << "executing " << stringifyEnum(kind)
             << "'s update is not supported (its memory is predicted)";
    if (kind == OptimizerKind::Lion) {
      // bitsandbytes' Lion kernel, in place: p = p * (1 - lr * wd)
      // - lr * sign(b1 * m + (1 - b1) * g); m = b2 * m + (1 - b2) * g, with
      // Lion's default betas (0.9, 0.99), not Adam's.
      double b1 = 0.9, b2 = 0.99;
      for (unsigned i = 0; i < n; ++i) {
        Value newParam = elementwise(
            b, loc, {grads[i], state[i]}, params[i],
            [&](OpBuilder &nb, Location nloc, ValueRange a) {
              Type t = a[0].getType();
              Value c = arith::AddFOp::create(
                  nb, nloc,
                  arith::MulFOp::create(nb, nloc, a[1],
                                        floatConstant(nb, nloc, t, b1)),
                  arith::MulFOp::create(nb, nloc, a[0],
                                        floatConstant(nb, nloc, t, 1 - b1)));
              Value zero = floatConstant(nb, nloc, t, 0);
              Value sign = arith::SelectOp::create(
                  nb, nloc,
                  arith::CmpFOp::create(nb, nloc, arith::CmpFPredicate::OGT, c,
                                        zero),
                  floatConstant(nb, nloc, t, 1),
                  arith::SelectOp::create(
                      nb, nloc,
                      arith::CmpFOp::create(nb, nloc, arith::CmpFPredicate::OLT,
                                            c, zero),
                      floatConstant(nb, nloc, t, -1), zero));
              Value decayed = arith::MulFOp::create(
                  nb, nloc, a[2], floatConstant(nb, nloc, t, 1 - lr * wd));
              return arith::SubFOp::create(
                         nb, nloc, decayed,
                         arith::MulFOp::create(nb, nloc, sign,
                                               floatConstant(nb, nloc, t, lr)))
                  .getResult();
            },
            true);
        Value m = elementwise(
            b, loc, grads[i], state[i],
            [&](OpBuilder &nb, Location nloc, ValueRange a) {
              Type t = a[0].getType();
              Value s = arith::MulFOp::create(nb, nloc, a[1],
                                              floatConstant(nb, nloc, t, b2));
              Value g = arith::MulFOp::create(
                  nb, nloc, a[0], floatConstant(nb, nloc, t, 1 - b2));
              return arith::AddFOp::create(nb, nloc, s, g).getResult();
            },
            true);
        updates.push_back({i, newParam});
        updates.push_back({2 * n + i, m});
      }
      return success();
    }
    if (kind == OptimizerKind::Momentum || kind == OptimizerKind::SgdNesterov) {
      double mu = options.momentum;
      for (unsigned i = 0; i < n; ++i) {
        // buf = mu * buf + grad (the first step's clone(grad) when buf = 0)
        Value buf = elementwise(
            b, loc, effective[i], state[i],
            [&](OpBuilder &nb, Location nloc, ValueRange a) {
              Value m = floatConstant(nb, nloc, a[0].getType(), mu);
              Value s = arith::MulFOp::create(nb, nloc, a[1], m);
              return arith::AddFOp::create(nb, nloc, s, a[0]).getResult();
            },
            true);
        updates.push_back({2 * n + i, buf});
        if (kind == OptimizerKind::Momentum) {
          updates.push_back({i, axpy(params[i], buf, -lr)});
          continue;
        }
        // Nesterov: p -= lr * (g + mu * buf). The for-loop form makes
        // grad.add(buf, alpha=mu) a new tensor; foreach and fused do not.
        auto nesterov = [&](OpBuilder &nb, Location nloc, Value g, Value bv) {
          Value s = arith::MulFOp::create(
              nb, nloc, bv, floatConstant(nb, nloc, bv.getType(), mu));
          return arith::AddFOp::create(nb, nloc, g, s).getResult();
        };
        if (impl == OptimizerImpl::ForLoop) {
          Value step =
              elementwise(b, loc, {effective[i], buf},
                          newTensor(b, loc, tensorType(params[i])),
                          [&](OpBuilder &nb, Location nloc, ValueRange a) {
                            return nesterov(nb, nloc, a[0], a[1]);
                          });
          updates.push_back({i, axpy(params[i], step, -lr)});
          continue;
        }
        updates.push_back(
            {i,
             elementwise(
                 b, loc, {effective[i], buf}, params[i],
                 [&](OpBuilder &nb, Location nloc, ValueRange a) {
                   Value st = nesterov(nb, nloc, a[0], a[1]);
                   Value d = arith::MulFOp::create(
                       nb, nloc, st,
                       floatConstant(nb, nloc, st.getType(), -lr));
                   return arith::AddFOp::create(nb, nloc, a[2], d).getResult();
                 },
                 true)});
      }
      return success();
    }

    // Adam / AdamW.
    double b1 = options.beta1, b2 = options.beta2, eps = options.eps;
    double t = options.step;
    double stepSize = lr / (1 - std::pow(b1, t));
    double bc2Sqrt = std::sqrt(1 - std::pow(b2, t));
    SmallVector<Value> newParams(params.begin(), params.end());
    SmallVector<Value> m(n), v(n);
    for (unsigned i = 0; i < n; ++i) {
      if (kind == OptimizerKind::AdamW && wd != 0)
        newParams[i] = elementwise(
            b, loc, {}, newParams[i],
            [&](OpBuilder &nb, Location nloc, ValueRange a) {
              Value s = floatConstant(nb, nloc, a[0].getType(), 1 - lr * wd);
              return arith::MulFOp::create(nb, nloc, a[0], s).getResult();
            },
            true);
      // exp_avg.mul_(b1).add_(g, alpha=1-b1);
      // exp_avg_sq.mul_(b2).addcmul_(g, g, value=1-b2)
      m[i] = elementwise(
          b, loc, effective[i], state[2 * i],
          [&](OpBuilder &nb, Location nloc, ValueRange a) {
            Value s = arith::MulFOp::create(
                nb, nloc, a[1], floatConstant(nb, nloc, a[0].getType(), b1));
            Value g = arith::MulFOp::create(
                nb, nloc, a[0],
                floatConstant(nb, nloc, a[0].getType(), 1 - b1));
            return arith::AddFOp::create(nb, nloc, s, g).getResult();
          },
          true);
      v[i] = elementwise(
          b, loc, effective[i], state[2 * i + 1],
          [&](OpBuilder &nb, Location nloc, ValueRange a) {
            Value s = arith::MulFOp::create(
                nb, nloc, a[1], floatConstant(nb, nloc, a[0].getType(), b2));
            Value gg = arith::MulFOp::create(nb, nloc, a[0], a[0]);
            Value g = arith::MulFOp::create(
                nb, nloc, gg, floatConstant(nb, nloc, a[0].getType(), 1 - b2));
            return arith::AddFOp::create(nb, nloc, s, g).getResult();
          },
          true);
    }
    // denom = exp_avg_sq.sqrt() / sqrt(bc2) + eps: foreach materializes the
    // list(s) for all parameters (TorchSemantics), the for-loop form one
    // parameter's root and quotient, fused none.
    unsigned lists = impl == OptimizerImpl::Foreach
                         ? getForeachAdamTemporaryLists(options.target)
                     : impl == OptimizerImpl::ForLoop ? 2
                                                      : 0;
    SmallVector<Value> denom(n);
    auto sqrtDiv = [&](OpBuilder &nb, Location nloc, Value x) {
      Value r = math::SqrtOp::create(nb, nloc, x);
      return arith::DivFOp::create(
                 nb, nloc, r, floatConstant(nb, nloc, x.getType(), bc2Sqrt))
          .getResult();
    };
    auto plusEps = [&](OpBuilder &nb, Location nloc, Value x) {
      return arith::AddFOp::create(nb, nloc, x,
                                   floatConstant(nb, nloc, x.getType(), eps))
          .getResult();
    };
    // The previous for-loop update's denom, still bound in PyTorch while
    // this one computes its own: a tensor of its size, alive until this
    // denom is (OptimizerStepOp::getHeldDenomParam).
    Value held;
    if (Value param = step.getHeldDenomParam())
      held =
          fill(b, loc,
               newTensor(b, loc, cast<RankedTensorType>(param.getType())), 0.0);
    for (unsigned i = 0; i < n && lists > 0; ++i) {
      RankedTensorType type = tensorType(params[i]);
      if (lists == 1) {
        denom[i] =
            elementwise(b, loc, v[i], newTensor(b, loc, type),
                        [&](OpBuilder &nb, Location nloc, ValueRange a) {
                          return plusEps(nb, nloc, sqrtDiv(nb, nloc, a[0]));
                        });
        continue;
      }
      // torch 1.13 foreach: _foreach_sqrt, _foreach_div_, then an
      // out-of-place _foreach_add of eps; the for-loop form: sqrt(), then
      // an out-of-place division: two tensors alive together.
      Value root = elementwise(b, loc, v[i], newTensor(b, loc, type),
                               [&](OpBuilder &nb, Location nloc, ValueRange a) {
                                 return sqrtDiv(nb, nloc, a[0]);
                               });
      denom[i] = elementwise(b, loc, root, newTensor(b, loc, type),
                             [&](OpBuilder &nb, Location nloc, ValueRange a) {
                               return plusEps(nb, nloc, a[0]);
                             });
    }
    if (held)
      readOneElement(b, loc, held);
    for (unsigned i = 0; i < n; ++i) {
      // param.addcdiv_(exp_avg, denom, value=-step_size)
      SmallVector<Value> ins = {m[i]};
      ins.push_back(lists > 0 ? denom[i] : v[i]);
      bool fused = lists == 0;
      newParams[i] = elementwise(
          b, loc, ins, newParams[i],
          [&](OpBuilder &nb, Location nloc, ValueRange a) {
            Value d = fused ? plusEps(nb, nloc, sqrtDiv(nb, nloc, a[1])) : a[1];
            Value q = arith::DivFOp::create(nb, nloc, a[0], d);
            Value s = arith::MulFOp::create(
                nb, nloc, q, floatConstant(nb, nloc, q.getType(), -stepSize));
            return arith::AddFOp::create(nb, nloc, a[2], s).getResult();
          },
          true);
      updates.push_back({i, newParams[i]});
      updates.push_back({2 * n + 2 * i, m[i]});
      updates.push_back({2 * n + 2 * i + 1, v[i]});
    }
    return success();
  }
};

//===----------------------------------------------------------------------===//
// nn.clip_grad_norm: torch.nn.utils.clip_grad_norm_ (torch 2.x
// _get_total_norm, then _clip_grads_with_norm_), the gradients scaled in
// place.
//===----------------------------------------------------------------------===//

struct ClipGradNormLowering
    : ExternalModel<ClipGradNormLowering, ClipGradNormOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &,
                SmallVectorImpl<std::pair<unsigned, Value>> &updates) const {
    auto clip = cast<ClipGradNormOp>(op);
    Location loc = op->getLoc();
    MLIRContext *ctx = op->getContext();
    auto scalarType = RankedTensorType::get({}, b.getF32Type());
    for (Value grad : operands)
      if (!tensorType(grad).getElementType().isF32())
        return op->emitError("executing clip_grad_norm_ over ")
               << tensorType(grad).getElementType()
               << " gradients is not supported (float32 only)";
    // ||x||_2 of `input` into a new 0-d tensor.
    auto norm = [&](Value input) {
      unsigned rank = tensorType(input).getRank();
      Value acc = linalg::FillOp::create(
                      b, loc, floatConstant(b, loc, b.getF32Type(), 0),
                      newTensor(b, loc, scalarType))
                      .getResult(0);
      AffineMap all = AffineMap::getMultiDimIdentityMap(rank, ctx);
      AffineMap none = AffineMap::get(rank, 0, ctx);
      Value squares = generic(
          b, loc, input, acc, {all, none},
          [](OpBuilder &nb, Location nloc, ValueRange a) {
            Value sq = arith::MulFOp::create(nb, nloc, a[0], a[0]);
            return arith::AddFOp::create(nb, nloc, a[1], sq).getResult();
          });
      return elementwise(
          b, loc, ValueRange{}, squares,
          [](OpBuilder &nb, Location nloc, ValueRange a) {
            return math::SqrtOp::create(nb, nloc, a[0]).getResult();
          },
          /*readInit=*/true);
    };
    // torch._foreach_norm: a 0-d norm per gradient; torch.stack of them;
    // the norm of the stack. All alive together, as the analysis counts
    // them (the op's workspace).
    int64_t n = operands.size();
    Value stack = newTensor(b, loc, RankedTensorType::get({n}, b.getF32Type()));
    for (auto [i, grad] : llvm::enumerate(operands)) {
      Value g = norm(grad);
      Value v = tensor::ExtractOp::create(b, loc, g, ValueRange{});
      Value idx = arith::ConstantIndexOp::create(b, loc, i);
      stack = tensor::InsertOp::create(b, loc, v, stack, ValueRange{idx});
    }
    Value total = norm(stack);
    readOneElement(b, loc, stack);
    // clip_coef = max_norm / (total + 1e-6), clamped to 1, on a scalar.
    Value t = tensor::ExtractOp::create(b, loc, total, ValueRange{});
    Type f32 = b.getF32Type();
    Value coef = arith::DivFOp::create(
        b, loc, floatConstant(b, loc, f32, clip.getMaxNorm().convertToDouble()),
        arith::AddFOp::create(b, loc, t, floatConstant(b, loc, f32, 1e-6)));
    coef = arith::MinimumFOp::create(b, loc, coef,
                                     floatConstant(b, loc, f32, 1.0));
    for (auto [i, grad] : llvm::enumerate(operands))
      updates.push_back(
          {static_cast<unsigned>(i),
           elementwise(
               b, loc, ValueRange{}, grad,
               [&](OpBuilder &nb, Location nloc, ValueRange a) {
                 return arith::MulFOp::create(nb, nloc, a[0], coef).getResult();
               },
               /*readInit=*/true)});
    return success();
  }
};

} // namespace

void vram::registerLowerToTensorInterfaces(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, NNDialect *) {
    LinearOp::attachInterface<LinearLowering>(*ctx);
    ReluOp::attachInterface<ReluLowering>(*ctx);
    AddOp::attachInterface<AddLowering>(*ctx);
    FlattenOp::attachInterface<ReshapeLikeLowering<FlattenOp>>(*ctx);
    ReshapeOp::attachInterface<ReshapeLikeLowering<ReshapeOp>>(*ctx);
    CrossEntropyOp::attachInterface<CrossEntropyLowering>(*ctx);
    MseLossOp::attachInterface<MseLossLowering>(*ctx);
    SavedOp::attachInterface<SavedLowering>(*ctx);
    KeepAliveOp::attachInterface<KeepAliveLowering<KeepAliveOp>>(*ctx);
    ReleaseOp::attachInterface<KeepAliveLowering<ReleaseOp>>(*ctx);
    BackwardOp::attachInterface<BackwardNodeLowering>(*ctx);
    AccumulateGradOp::attachInterface<AccumulateGradLowering>(*ctx);
    OptimizerStepOp::attachInterface<OptimizerStepLowering>(*ctx);
    ClipGradNormOp::attachInterface<ClipGradNormLowering>(*ctx);
    attachVisionLowerings(ctx);
    attachElementwiseLowerings(ctx);
    attachTransformerLowerings(ctx);
    attachRoutingLowerings(ctx);
  });
}
