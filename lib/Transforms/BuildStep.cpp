//===- BuildStep.cpp - inference / training step builder ------------------===//
//
// Builds `@step`, one iteration as PyTorch eager runs it, from `@forward`:
//
//   inference: the forward ops under no-grad semantics (dropout is the
//              identity);
//   train:     forward ops (+ `nn.saved` for the extra tensors kernels keep
//              for backward), the loss, `nn.backward` nodes in reverse order
//              with gradient accumulation, and the optimizer update with its
//              persistent state.
//
// What each node saves comes from the op's AutodiffOpInterface; this file has
// no per-op knowledge.
//
//===----------------------------------------------------------------------===//

#include "vram/Dialect/NN/NNOps.h"
#include "vram/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace vram {
#define GEN_PASS_DEF_BUILDSTEP
#include "vram/Transforms/Passes.h.inc"
} // namespace vram

using namespace mlir;
using namespace vram;
using namespace vram::nn;

namespace {

/// A forward op that records a backward node.
struct RecordedOp {
  Operation *op;
  SmallVector<bool> operandNeedsGrad;
  SmallVector<Value> saved;
};

struct BuildStepPass : public vram::impl::BuildStepBase<BuildStepPass> {
  using BuildStepBase::BuildStepBase;

  void runOnOperation() override;

private:
  LogicalResult checkOptions(Location loc);
  func::FuncOp cloneForward(func::FuncOp forward, OpBuilder &b,
                            Type extraArgType);
  LogicalResult buildTrainStep(func::FuncOp step);
  void buildInferenceStep(func::FuncOp step);
};

} // namespace

LogicalResult BuildStepPass::checkOptions(Location loc) {
  if (mode != "train" && mode != "inference")
    return emitError(loc) << "unknown mode '" << mode
                          << "' (expected inference or train)";
  if (optimizer != "sgd" && optimizer != "momentum" && optimizer != "adam" &&
      optimizer != "adamw")
    return emitError(loc) << "unknown optimizer '" << optimizer
                          << "' (expected sgd, momentum, adam or adamw)";
  if (implementation != "foreach" && implementation != "fused" &&
      implementation != "for-loop")
    return emitError(loc) << "unknown optimizer implementation '"
                          << implementation
                          << "' (expected foreach, fused or for-loop)";
  if (loss != "cross_entropy" && loss != "mse")
    return emitError(loc) << "unknown loss '" << loss
                          << "' (expected cross_entropy or mse)";
  return success();
}

void BuildStepPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto forward = module.lookupSymbol<func::FuncOp>(entry);
  if (!forward) {
    emitError(module.getLoc())
        << "no function @" << entry << " to build a step from";
    return signalPassFailure();
  }
  if (failed(checkOptions(forward.getLoc())))
    return signalPassFailure();
  if (!forward.getBody().hasOneBlock()) {
    forward.emitError("the model must be a single block");
    return signalPassFailure();
  }
  if (mode == "train" && forward.getFunctionType().getNumResults() != 1) {
    forward.emitError(
        "training needs a model with one output for the loss, got ")
        << forward.getFunctionType().getNumResults();
    return signalPassFailure();
  }

  OpBuilder b(forward);
  auto step = func::FuncOp::create(b, forward.getLoc(), "step",
                                   forward.getFunctionType());
  IRMapping mapping;
  forward.getBody().cloneInto(&step.getBody(), mapping);
  step->setAttr(kStepModeAttr, b.getStringAttr(mode));

  if (mode == "inference") {
    buildInferenceStep(step);
  } else if (failed(buildTrainStep(step))) {
    step.erase();
    return signalPassFailure();
  }
  forward.erase();
}

void BuildStepPass::buildInferenceStep(func::FuncOp step) {
  // Under model.eval() dropout is the identity and allocates nothing.
  SmallVector<DropoutOp> dropouts;
  step.walk([&](DropoutOp op) { dropouts.push_back(op); });
  for (DropoutOp op : dropouts) {
    op.getOutput().replaceAllUsesWith(op.getInput());
    op.erase();
  }
}

static bool isFloatTensor(Value v) {
  return isa<FloatType>(getElementTypeOrSelf(v.getType()));
}

LogicalResult BuildStepPass::buildTrainStep(func::FuncOp step) {
  MLIRContext *ctx = &getContext();
  Block &body = step.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  Value output = ret.getOperand(0);
  auto outType = cast<RankedTensorType>(output.getType());
  OpBuilder b(ctx);

  // 1. requires_grad propagates forward from trainable parameters.
  DenseSet<Value> requiresGrad;
  for (BlockArgument arg : body.getArguments())
    if (inputRequiresGrad && isFloatTensor(arg))
      requiresGrad.insert(arg);
  SmallVector<ParamOp> trainableParams;
  SmallVector<RecordedOp> recorded;
  auto recordIfNeeded = [&](Operation *op) {
    auto autodiff = dyn_cast<AutodiffOpInterface>(op);
    if (!autodiff)
      return;
    RecordedOp rec{op, {}, {}};
    bool any = false;
    for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
      bool needs =
          requiresGrad.contains(operand) && autodiff.isDifferentiableOperand(i);
      rec.operandNeedsGrad.push_back(needs);
      any |= needs;
    }
    if (!any)
      return; // no backward node: nothing is saved
    for (Value result : op->getResults())
      if (isFloatTensor(result))
        requiresGrad.insert(result);
    recorded.push_back(std::move(rec));
  };

  for (Operation &op : body.without_terminator()) {
    if (auto param = dyn_cast<ParamOp>(op)) {
      if (param.getTrainable()) {
        requiresGrad.insert(param.getResult());
        trainableParams.push_back(param);
      }
      continue;
    }
    recordIfNeeded(&op);
  }

  // 2. The loss. Language-model logits [B, T, V] are flattened to [B*T, V]
  // as training loops do (`logits.view(-1, V)`).
  b.setInsertionPoint(ret);
  Location lossLoc = NameLoc::get(b.getStringAttr("loss"), ret.getLoc());
  Value lossInput = output;
  Type targetType;
  Operation *lossOp;
  if (loss == "cross_entropy") {
    if (outType.getRank() < 2)
      return emitError(ret.getLoc())
             << "cross_entropy needs logits of rank >= 2, got " << outType;
    if (outType.getRank() == 3) {
      auto flat =
          RankedTensorType::get({outType.getDimSize(0) * outType.getDimSize(1),
                                 outType.getDimSize(2)},
                                outType.getElementType());
      lossInput = ReshapeOp::create(b, lossLoc, flat, output);
      if (requiresGrad.contains(output))
        recordIfNeeded(lossInput.getDefiningOp());
    }
    auto logits = cast<RankedTensorType>(lossInput.getType());
    SmallVector<int64_t> targetShape(logits.getShape());
    targetShape.erase(targetShape.begin() + 1);
    targetType = RankedTensorType::get(targetShape, b.getI64Type());
    BlockArgument target = body.addArgument(targetType, lossLoc);
    lossOp = CrossEntropyOp::create(b, lossLoc, lossInput, target);
  } else {
    targetType = outType;
    BlockArgument target = body.addArgument(targetType, lossLoc);
    lossOp = MseLossOp::create(b, lossLoc, lossInput, target);
  }
  recordIfNeeded(lossOp);
  Value lossValue = lossOp->getResult(0);
  if (recorded.empty() || recorded.back().op != lossOp)
    return emitError(ret.getLoc())
           << "nothing requires grad: the model has no trainable parameter "
              "on the path to the loss";

  // 3. Forward: materialize what each node saves, right after its op.
  for (RecordedOp &rec : recorded) {
    SmallVector<SavedTensor> saved;
    cast<AutodiffOpInterface>(rec.op).getSavedTensors(rec.operandNeedsGrad,
                                                      saved);
    b.setInsertionPointAfter(rec.op);
    for (const SavedTensor &s : saved) {
      switch (s.kind) {
      case SavedTensor::Kind::Operand:
        rec.saved.push_back(rec.op->getOperand(s.index));
        break;
      case SavedTensor::Kind::Result:
        rec.saved.push_back(rec.op->getResult(s.index));
        break;
      case SavedTensor::Kind::Extra:
        rec.saved.push_back(SavedOp::create(b, rec.op->getLoc(), s.type,
                                            b.getStringAttr(s.name),
                                            rec.op->getResult(0)));
        break;
      }
    }
  }

  // 4. Backward, in reverse order. `gradOf` holds the gradient buffer of each
  // forward value; `shared` marks buffers that are another value's gradient
  // too (pass-through), which the engine then adds out of place.
  b.setInsertionPoint(ret);
  DenseMap<Value, Value> gradOf;
  DenseSet<Value> shared;
  auto contribute = [&](Value forwardValue, Value grad, bool passthrough,
                        Location loc) {
    auto it = gradOf.find(forwardValue);
    if (it == gradOf.end()) {
      gradOf[forwardValue] = grad;
      if (passthrough)
        shared.insert(grad);
      return;
    }
    bool inplace = !shared.contains(it->second);
    auto acc = AccumulateGradOp::create(b, loc, it->second.getType(),
                                        it->second, grad, inplace);
    it->second = acc.getResult();
  };

  for (RecordedOp &rec : llvm::reverse(recorded)) {
    Operation *op = rec.op;
    auto autodiff = cast<AutodiffOpInterface>(op);
    SmallVector<Value> outGrads;
    for (Value result : op->getResults())
      if (Value g = gradOf.lookup(result))
        outGrads.push_back(g);
    if (op != lossOp && outGrads.empty())
      continue; // the result does not reach the loss

    SmallVector<int64_t> gradOperands;
    SmallVector<bool> paramGrads;
    SmallVector<Type> gradTypes;
    for (auto [i, needs] : llvm::enumerate(rec.operandNeedsGrad)) {
      if (!needs)
        continue;
      Value operand = op->getOperand(i);
      if (!outGrads.empty() && autodiff.isGradPassthrough(i)) {
        contribute(operand, outGrads.front(), /*passthrough=*/true,
                   op->getLoc());
        continue;
      }
      gradOperands.push_back(i);
      paramGrads.push_back(isa_and_nonnull<ParamOp>(operand.getDefiningOp()));
      gradTypes.push_back(operand.getType());
    }
    if (gradOperands.empty() && rec.saved.empty())
      continue;

    auto cost = dyn_cast<CostOpInterface>(op);
    SmallVector<int64_t> flops;
    for (FlopConvention c :
         {FlopConvention::Macs, FlopConvention::Flops, FlopConvention::Full})
      flops.push_back(cost ? cost.getBackwardFlops(c, rec.operandNeedsGrad)
                           : 0);

    auto node = BackwardOp::create(
        b, op->getLoc(), gradTypes,
        b.getStringAttr(op->getName().getStringRef()), rec.saved, outGrads,
        b.getDenseI64ArrayAttr(gradOperands),
        b.getDenseBoolArrayAttr(paramGrads), b.getDenseI64ArrayAttr(flops));
    for (auto [i, grad] : llvm::zip(gradOperands, node.getResults()))
      contribute(op->getOperand(i), grad, /*passthrough=*/false, op->getLoc());
  }

  // 5. Optimizer: persistent state next to each parameter, then the update.
  SmallVector<Value> params, grads, states;
  for (ParamOp param : trainableParams) {
    Value grad = gradOf.lookup(param.getResult());
    if (!grad)
      continue; // .grad stays None: optimizers skip the parameter
    params.push_back(param.getResult());
    grads.push_back(grad);
  }
  SmallVector<StringRef> stateKinds;
  if (optimizer == "momentum")
    stateKinds = {"momentum_buffer"};
  else if (optimizer == "adam" || optimizer == "adamw")
    stateKinds = {"exp_avg", "exp_avg_sq"};
  for (Value p : params) {
    b.setInsertionPointAfterValue(p);
    for (StringRef kind : stateKinds)
      states.push_back(
          OptimizerStateOp::create(b, p.getLoc(), b.getStringAttr(kind), p));
  }
  b.setInsertionPoint(ret);
  Location optLoc = NameLoc::get(b.getStringAttr("optimizer"), ret.getLoc());
  auto makeStep = [&](ValueRange ps, ValueRange gs, ValueRange ss) {
    OptimizerStepOp::create(b, optLoc, b.getStringAttr(optimizer),
                            b.getStringAttr(implementation), ps, gs, ss,
                            b.getF64FloatAttr(weightDecay));
  };
  if (implementation == "for-loop") {
    size_t k = stateKinds.size();
    for (size_t i = 0; i < params.size(); ++i)
      makeStep(ValueRange(params).slice(i, 1), ValueRange(grads).slice(i, 1),
               ValueRange(states).slice(i * k, k));
  } else if (!params.empty()) {
    makeStep(params, grads, states);
  }

  // The step returns the loss; the model output dies after the loss.
  ret->setOperands(lossValue);
  step.setType(
      FunctionType::get(ctx, body.getArgumentTypes(), {lossValue.getType()}));
  if (!setToNone)
    step->setAttr(kPersistentGradsAttr, b.getUnitAttr());
  return success();
}
