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

#include "vram/Analysis/StepInfo.h"
#include "vram/Dialect/NN/NNOps.h"
#include "vram/Dialect/NN/TensorNames.h"
#include "vram/Support/CheckedMath.h"
#include "vram/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/Sequence.h"

#include <cmath>

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
  Operation *op = nullptr;
  SmallVector<bool> operandNeedsGrad;
  SmallVector<Value> saved;
  SmallVector<Attribute> roles; ///< a SavedRoleAttr per saved value
  /// Operand index -> the position in `saved` of the tensor that is its
  /// gradient (SavedTensor::gradient).
  DenseMap<unsigned, int64_t> gradSaved;
};

/// What the phases of the training step share. Each phase reads what the
/// earlier ones filled in.
struct TrainStep {
  TrainStep(func::FuncOp step, TorchTarget target)
      : step(step), body(step.getBody().front()),
        ret(cast<func::ReturnOp>(body.getTerminator())), b(step.getContext()),
        target(target) {}

  /// Records a backward node for `op` when an operand requires grad, and
  /// marks its float results as requiring grad. Fails when gradients would
  /// have to flow through an op without an autograd formula.
  LogicalResult recordIfNeeded(Operation *op);
  /// Adds `grad` to the gradient of `forwardValue`, seen through `views`.
  /// `shares` says that the engine does not hold `grad`'s storage alone:
  /// a pass-through gradient (another value's too) or a view.
  void contribute(Value forwardValue, Value grad, bool shares, Location loc,
                  ArrayRef<Attribute> views = {});

  func::FuncOp step;
  Block &body;
  func::ReturnOp ret;
  OpBuilder b;
  TorchTarget target;

  // Forward: what autograd records.
  DenseSet<Value> requiresGrad;
  SmallVector<ParamOp> trainableParams;
  SmallVector<RecordedOp> recorded;
  Operation *lossOp = nullptr;

  // Backward. `gradOf` holds the gradient buffer of each forward value;
  // `shared` marks buffers whose storage the engine does not hold alone
  // (another value's gradient too, or a view of a tensor the backward
  // computed): it adds the next gradient to them out of place.
  DenseMap<Value, Value> gradOf;
  DenseSet<Value> shared;
  // The inverse views between each forward value's gradient buffer and the
  // value's own layout (pass-through views hand the gradient on as is), for
  // the lowering to compute with (NNDialect::kGradViewsAttrName).
  // Most chains are empty: no inline elements, so that the map's buckets
  // stay small on a model of a million ops.
  DenseMap<Value, SmallVector<Attribute, 0>> viewsOf;

  // The parameters that have a .grad, and that .grad.
  SmallVector<Value> params, grads;
};

struct BuildStepPass : public vram::impl::BuildStepBase<BuildStepPass> {
  using BuildStepBase::BuildStepBase;

  void runOnOperation() override;

private:
  LogicalResult buildTrainStep(func::FuncOp step);
  void buildInferenceStep(func::FuncOp step);

  // The phases of buildTrainStep, in the order they run.
  LogicalResult recordForward(TrainStep &s);
  LogicalResult buildLoss(TrainStep &s);
  LogicalResult buildCriterion(TrainStep &s, Value output, Location lossLoc);
  LogicalResult buildFusedLinearLoss(TrainStep &s, Value output,
                                     Location lossLoc);
  void saveForBackward(TrainStep &s);
  void buildBackward(TrainStep &s);
  void storeParamGrads(TrainStep &s);
  void buildOptimizerStep(TrainStep &s);
  void buildEmaUpdate(TrainStep &s);
  void finishStep(TrainStep &s);
};

} // namespace

void BuildStepPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto forward = module.lookupSymbol<func::FuncOp>(entry);
  if (!forward) {
    emitError(module.getLoc())
        << "no function @" << entry << " to build a step from";
    return signalPassFailure();
  }
  if (!forward.getBody().hasOneBlock()) {
    forward.emitError("the model must be a single block");
    return signalPassFailure();
  }
  if (failed(verifyUniqueTensorNames(forward)))
    return signalPassFailure();
  int64_t outputs = forward.getFunctionType().getNumResults();
  if (mode == StepMode::Train && (outputs == 0 || lossOutput >= outputs ||
                                  (lossOutput < 0 && outputs != 1))) {
    InFlightDiagnostic diag = forward.emitError();
    if (outputs == 0) {
      diag << "training needs a model output for the loss, got none";
    } else if (lossOutput >= outputs) {
      diag << "loss-output=" << static_cast<int64_t>(lossOutput)
           << ": the model has " << outputs << " outputs";
    } else {
      diag << "training needs to know which output the loss reads: the "
              "model returns "
           << outputs << " (";
      llvm::interleaveComma(
          llvm::enumerate(forward.getFunctionType().getResults()), diag,
          [&](auto result) {
            diag << "#" << result.index() << " " << result.value();
          });
      diag << "): choose one with loss-output=N (--loss-output=N)";
    }
    return signalPassFailure();
  }

  // A generation program (nn.max_new_tokens, made by its front end) is
  // what --mode=generate runs, and only that.
  bool isGenerationProgram = forward->hasAttr(NNDialect::kMaxNewTokensAttrName);
  if (mode == StepMode::Generate && !isGenerationProgram) {
    emitError(forward.getLoc(),
              "mode=generate needs a generation program (a model "
              "built for --mode=generate, with its KV cache), not a "
              "single forward pass");
    return signalPassFailure();
  }
  if (mode != StepMode::Generate && isGenerationProgram) {
    emitError(forward.getLoc(),
              "a generation program runs as mode=generate, not ")
        << stringifyEnum(mode.getValue());
    return signalPassFailure();
  }

  if (gradAccum < 1) {
    emitError(module.getLoc()) << "grad-accum must be at least 1, got "
                               << static_cast<int64_t>(gradAccum);
    return signalPassFailure();
  }
  if (optimizerInBackward &&
      (mode != StepMode::Train || !setToNone || gradAccum > 1)) {
    emitError(module.getLoc())
        << "optimizer-in-backward applies to a training step whose hooks "
           "free each gradient after its update (mode=train, set-to-none, "
           "no grad-accum)";
    return signalPassFailure();
  }
  if (ema && mode != StepMode::Train) {
    emitError(module.getLoc()) << "ema applies to a training step";
    return signalPassFailure();
  }
  if (!(maxGradNorm >= 0) || std::isinf(maxGradNorm)) {
    emitError(module.getLoc())
        << "max-grad-norm must be a finite number >= 0, got " << maxGradNorm;
    return signalPassFailure();
  }
  if (maxGradNorm > 0 && (mode != StepMode::Train || optimizerInBackward)) {
    emitError(module.getLoc())
        << "max-grad-norm clips every gradient before the update: it "
           "applies to a training step without optimizer-in-backward";
    return signalPassFailure();
  }
  if (gradAccum > 1 && mode != StepMode::Train) {
    emitError(module.getLoc())
        << "grad-accum applies to a training step (mode=train)";
    return signalPassFailure();
  }

  // bitsandbytes has one implementation: it is the default.
  if (!implementation.hasValue() && isBitsAndBytesOptimizer(optimizer))
    implementation = OptimizerImpl::ForLoop;
  if (mode == StepMode::Train && !hasOptimizerImpl(optimizer, implementation)) {
    emitError(module.getLoc())
        << stringifyEnum(optimizer.getValue()) << " has no "
        << stringifyEnum(implementation.getValue()) << " implementation"
        << (isBitsAndBytesOptimizer(optimizer) ? " (bitsandbytes runs a "
                                                 "kernel per parameter: "
                                                 "for_loop)"
                                               : "");
    return signalPassFailure();
  }

  if (mode == StepMode::Train && optimizer == OptimizerKind::Adafactor &&
      torchVersion == TorchVersion::V1_13) {
    emitError(module.getLoc())
        << "torch.optim.Adafactor does not exist in torch 1.13 (it came in "
           "2.5)";
    return signalPassFailure();
  }

  // Measured (benchmarks/accuracy, bitsandbytes 0.50.2): the CPU backend's
  // Lion and 8-bit AdamW add float32 copies of the state, gradient and
  // parameter (and int64 indices) during each update.
  if (mode == StepMode::Train && device == Device::Cpu &&
      isBitsAndBytesOptimizer(optimizer))
    emitWarning(module.getLoc())
        << "the update is modelled as bitsandbytes' CUDA kernels run it (in "
           "place); its CPU backend adds float32 temporaries that are not "
           "modelled, so the CPU step peak is a lower bound";

  if (!std::isfinite(weightDecay) || weightDecay < 0) {
    emitError(module.getLoc())
        << "weight-decay must be a finite number >= 0, got "
        << static_cast<double>(weightDecay);
    return signalPassFailure();
  }

  // Ops whose kernels are modelled on some targets only (measured there);
  // those the target runs as other ops become those ops first.
  TorchTarget target{torchVersion, device, cudnnWorkspace};
  SmallVector<TargetSupportOpInterface> targetOps;
  forward.walk([&](TargetSupportOpInterface op) { targetOps.push_back(op); });
  for (TargetSupportOpInterface op : targetOps) {
    OpBuilder builder(op);
    if (failed(op.decomposeForTarget(builder, target)))
      return signalPassFailure();
  }
  bool autocast =
      static_cast<bool>(forward->getAttr(NNDialect::kAutocastAttrName));
  WalkResult unsupported = forward.walk([&](Operation *op) {
    if (auto module = op->getAttrOfType<StringAttr>(
            NNDialect::kCpuDecompositionAttrName)) {
      if (device == Device::Cuda) {
        op->emitOpError("is part of ")
            << module.getValue()
            << " as the CPU runs it; CUDA runs cuDNN's fused kernel, whose "
               "reserve space is not measured (analyse with --device=cpu)";
        return WalkResult::interrupt();
      }
      if (autocast) {
        // Autocast casts the module's weights once at its call, not per op.
        op->emitOpError("is part of ")
            << module.getValue()
            << ", whose memory under torch.autocast is not measured";
        return WalkResult::interrupt();
      }
    }
    auto support = dyn_cast<TargetSupportOpInterface>(op);
    return support && failed(support.verifyTarget(target, mode, autocast))
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  if (unsupported.wasInterrupted())
    return signalPassFailure();

  OpBuilder b(forward);
  auto step = func::FuncOp::create(b, forward.getLoc(), "step",
                                   forward.getFunctionType());
  // The forward body becomes the step's (moved, not copied: a copy of a
  // million-op model costs more than building its backward).
  step.getBody().takeBody(forward.getBody());
  step->setAttr(NNDialect::kModeAttrName,
                StepModeAttr::get(&getContext(), mode));
  step->setAttr(NNDialect::kTorchVersionAttrName,
                b.getStringAttr(stringifyEnum(torchVersion.getValue())));
  step->setAttr(NNDialect::kDeviceAttrName,
                b.getStringAttr(stringifyEnum(device.getValue())));
  if (cudnnWorkspace != CudnnWorkspace::None)
    step->setAttr(NNDialect::kCudnnWorkspaceAttrName,
                  b.getStringAttr(stringifyEnum(cudnnWorkspace.getValue())));
  // The optimizer is a fact of the step (the report reads it from here),
  // also when no parameter trains and no nn.optimizer_step is built.
  if (mode == StepMode::Train)
    step->setAttr(NNDialect::kOptimizerAttrName,
                  OptimizerConfigAttr::get(
                      &getContext(), optimizer, implementation,
                      llvm::APFloat(static_cast<double>(weightDecay))));
  // The model's own facts travel with the step.
  for (StringRef name :
       {NNDialect::kBatchAttrName, NNDialect::kSequenceLogitsAttrName,
        NNDialect::kMaskedLmAttrName, NNDialect::kSeq2SeqLmAttrName,
        NNDialect::kTokenClassifierAttrName,
        NNDialect::kSequenceClassifierAttrName, NNDialect::kAutocastAttrName,
        NNDialect::kLoraAttrName, NNDialect::kQuantizeAttrName,
        NNDialect::kMaxNewTokensAttrName, NNDialect::kNumBeamsAttrName,
        NNDialect::kTensorParallelAttrName, NNDialect::kPackedTokensAttrName,
        NNDialect::kPaddedAttrName})
    if (Attribute attr = forward->getAttr(name))
      step->setAttr(name, attr);

  if (mode != StepMode::Train) {
    buildInferenceStep(step);
  } else if (failed(buildTrainStep(step))) {
    forward.getBody().takeBody(step.getBody());
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

/// Whether a chain of views permutes dimensions.
static bool permutes(ArrayRef<Attribute> chain) {
  return llvm::any_of(chain, llvm::IsaPred<DenseI64ArrayAttr>);
}

/// The strides of a gradient buffer (contiguous) seen through `views`, and
/// the shape it then has.
static std::pair<SmallVector<int64_t>, SmallVector<int64_t>>
gradViewLayout(Value grad, ArrayRef<Attribute> views) {
  auto gradType = cast<RankedTensorType>(grad.getType());
  SmallVector<int64_t> shape(gradType.getShape());
  SmallVector<int64_t> strides = getContiguousStrides(shape);
  for (Attribute view : views) {
    if (auto perm = dyn_cast<DenseI64ArrayAttr>(view)) {
      SmallVector<int64_t> s, t;
      for (int64_t d : perm.asArrayRef()) {
        s.push_back(shape[d]);
        t.push_back(strides[d]);
      }
      shape = s;
      strides = t;
      continue;
    }
    ArrayRef<int64_t> next =
        cast<RankedTensorType>(cast<TypeAttr>(view).getValue()).getShape();
    std::optional<SmallVector<int64_t>> viewed =
        getViewStrides(shape, strides, next);
    strides = viewed ? *viewed : getContiguousStrides(next);
    shape.assign(next.begin(), next.end());
  }
  return {shape, strides};
}

/// Whether a gradient buffer (contiguous) seen through `views` can be
/// viewed as `type` (at::detail::computeStride).
static bool gradStridesExpress(Value grad, ArrayRef<Attribute> views,
                               RankedTensorType type) {
  auto [shape, strides] = gradViewLayout(grad, views);
  return getViewStrides(shape, strides, type.getShape()).has_value();
}

/// Whether a gradient buffer seen through `views` is laid out as a
/// contiguous tensor of `type` (PyTorch's is_contiguous: the strides of
/// dimensions of size 1 do not matter), e.g. through reshapes only, or a
/// transpose that moves a dimension of size 1.
static bool gradContiguousAs(Value grad, ArrayRef<Attribute> views,
                             RankedTensorType type) {
  auto [shape, strides] = gradViewLayout(grad, views);
  std::optional<SmallVector<int64_t>> viewed =
      getViewStrides(shape, strides, type.getShape());
  if (!viewed)
    return false;
  SmallVector<int64_t> contiguous = getContiguousStrides(type.getShape());
  for (auto [size, stride, expected] :
       llvm::zip(type.getShape(), *viewed, contiguous))
    if (size != 1 && stride != expected)
      return false;
  return true;
}

/// The inverse of pass-through view `op` for its operand `i`, whose
/// gradient is `result`'s: a permutation, a reshape to the operand's type,
/// or none.
static Attribute inverseView(Builder &b, Operation *op, unsigned i,
                             Value result) {
  auto in = cast<RankedTensorType>(op->getOperand(i).getType());
  int64_t rank = in.getRank();
  if (auto t = dyn_cast<TransposeOp>(op)) {
    SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    std::swap(perm[(t.getDim0() + rank) % rank],
              perm[(t.getDim1() + rank) % rank]);
    return b.getDenseI64ArrayAttr(perm);
  }
  if (auto p = dyn_cast<PermuteOp>(op)) {
    SmallVector<int64_t> inverse(rank);
    for (auto [j, d] : llvm::enumerate(p.getDims()))
      inverse[(d + rank) % rank] = j;
    return b.getDenseI64ArrayAttr(inverse);
  }
  if (result.getType() != in)
    return TypeAttr::get(in);
  return {};
}

LogicalResult TrainStep::recordIfNeeded(Operation *op) {
  if (op->getNumResults() == 0)
    return success(); // nothing flows through it (nn.autocast_exit)
  auto autodiff = dyn_cast<AutodiffOpInterface>(op);
  if (!autodiff) {
    for (auto [i, operand] : llvm::enumerate(op->getOperands()))
      if (requiresGrad.contains(operand))
        return op->emitError("'")
               << op->getName() << "' has no autograd formula "
               << "(AutodiffOpInterface) but operand #" << i
               << " requires grad; gradients cannot flow through it";
    return success();
  }
  RecordedOp rec;
  rec.op = op;
  bool any = false;
  for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
    bool needs =
        requiresGrad.contains(operand) && autodiff.isDifferentiableOperand(i);
    rec.operandNeedsGrad.push_back(needs);
    any |= needs;
  }
  if (!any)
    return success(); // no backward node: nothing is saved
  for (Value result : op->getResults())
    if (isFloatTensor(result))
      requiresGrad.insert(result);
  recorded.push_back(std::move(rec));
  return success();
}

void TrainStep::contribute(Value forwardValue, Value grad, bool shares,
                           Location loc, ArrayRef<Attribute> views) {
  auto it = gradOf.find(forwardValue);
  if (it == gradOf.end()) {
    gradOf[forwardValue] = grad;
    viewsOf[forwardValue].assign(views.begin(), views.end());
    if (shares)
      shared.insert(grad);
    return;
  }
  bool inplace = !shared.contains(it->second);
  auto acc = AccumulateGradOp::create(b, loc, it->second.getType(), it->second,
                                      grad, inplace);
  ArrayRef<Attribute> accViews = viewsOf[forwardValue];
  if (permutes(accViews) || permutes(views))
    acc->setAttr(
        NNDialect::kGradViewsAttrName,
        b.getArrayAttr({b.getArrayAttr(accViews), b.getArrayAttr(views)}));
  it->second = acc.getResult();
}

LogicalResult BuildStepPass::buildTrainStep(func::FuncOp step) {
  TrainStep s(step, TorchTarget{torchVersion, device, cudnnWorkspace});
  if (failed(recordForward(s)) || failed(buildLoss(s)))
    return failure();
  saveForBackward(s);
  buildBackward(s);
  storeParamGrads(s);
  buildOptimizerStep(s);
  if (ema)
    buildEmaUpdate(s);
  finishStep(s);
  return success();
}

/// `output = model(input)`: as each op runs, autograd records a backward
/// node (grad_fn) for it when an operand requires grad, and its results
/// require grad in turn. The trainable parameters are the leaves that
/// requires_grad propagates forward from (and the inputs, with
/// input-requires-grad).
LogicalResult BuildStepPass::recordForward(TrainStep &s) {
  for (BlockArgument arg : s.body.getArguments())
    if (inputRequiresGrad && isFloatTensor(arg))
      s.requiresGrad.insert(arg);
  for (Operation &op : s.body.without_terminator()) {
    if (auto param = dyn_cast<ParamOp>(op)) {
      if (param.getTrainable()) {
        s.requiresGrad.insert(param.getResult());
        s.trainableParams.push_back(param);
      }
      continue;
    }
    if (failed(s.recordIfNeeded(&op)))
      return failure();
  }
  return success();
}

/// `loss = criterion(output, target)`: one more recorded op, the root that
/// backward starts from.
LogicalResult BuildStepPass::buildLoss(TrainStep &s) {
  OpBuilder &b = s.b;
  func::ReturnOp ret = s.ret;
  unsigned chosen = lossOutput < 0 ? 0 : static_cast<unsigned>(lossOutput);
  Value output = ret.getOperand(chosen);
  // The caller holds the model's other outputs (`out`) until the loss
  // returns.
  SmallVector<Value> others;
  for (auto [i, value] : llvm::enumerate(ret.getOperands()))
    if (i != chosen && value != output)
      others.push_back(value);
  if (!others.empty()) {
    b.setInsertionPoint(ret);
    KeepAliveOp::create(b,
                        NameLoc::get(b.getStringAttr("output"), ret.getLoc()),
                        others, /*model_frame=*/true);
  }
  // Under autocast the loss is computed inside the region, before it exits.
  Operation *lossPoint = ret;
  if (auto exit = dyn_cast_or_null<AutocastExitOp>(ret->getPrevNode()))
    lossPoint = exit;
  b.setInsertionPoint(lossPoint);
  Location lossLoc =
      NameLoc::get(b.getStringAttr(kLossLayerName), ret.getLoc());
  if (loss == LossKind::FusedLinearCrossEntropy) {
    if (failed(buildFusedLinearLoss(s, output, lossLoc)))
      return failure();
  } else if (failed(buildCriterion(s, output, lossLoc))) {
    return failure();
  }
  Operation *lossOp = s.lossOp;
  if (auto autocast =
          s.step->getAttrOfType<TypeAttr>(NNDialect::kAutocastAttrName)) {
    SmallVector<Operation *> casts;
    if (failed(
            autocastOp(lossOp, cast<FloatType>(autocast.getValue()), &casts)))
      return failure();
    for (Operation *c : casts)
      if (failed(s.recordIfNeeded(c)))
        return failure();
  }
  if (failed(s.recordIfNeeded(lossOp)))
    return failure();
  // The model's forward frame, which computes this loss inside it, holds
  // its references until the loss returns.
  for (auto held : llvm::make_early_inc_range(s.body.getOps<KeepAliveOp>()))
    if (held.getModelFrame())
      held->moveAfter(lossOp);
  if (s.recorded.empty() || s.recorded.back().op != lossOp)
    return emitError(ret.getLoc())
           << "nothing requires grad: the model has no trainable parameter "
              "on the path to the loss";
  return success();
}

/// `loss = criterion(output, target)` (s.lossOp), not yet recorded.
/// Language-model logits [B, T, V] are flattened to [B*T, V] as training
/// loops do (`logits.view(-1, V)`) when the model says its output is
/// per-token logits, or the option asks for it.
LogicalResult BuildStepPass::buildCriterion(TrainStep &s, Value output,
                                            Location lossLoc) {
  OpBuilder &b = s.b;
  func::ReturnOp ret = s.ret;
  auto outType = cast<RankedTensorType>(output.getType());
  Value lossInput = output;
  Type targetType;
  Operation *lossOp;
  // The model's own loss (causal_lm) flattens a language model's [B, T, V]
  // logits; a sequence classifier's [B, labels] are taken as they are.
  bool classifier = s.step->hasAttr(NNDialect::kSequenceClassifierAttrName);
  bool flatten = flattenLogits || (loss == LossKind::CausalLm && !classifier) ||
                 s.step->hasAttr(NNDialect::kSequenceLogitsAttrName);
  // loss_parallel(): the cross-entropy reads lm_head's shard, which is
  // then never gathered.
  int64_t vocabShards = 0;
  if (lossParallel) {
    auto gather = output.getDefiningOp<AllGatherOutputOp>();
    if (loss != LossKind::CrossEntropy && loss != LossKind::CausalLm)
      return emitError(ret.getLoc())
             << "loss-parallel computes a cross-entropy, not "
             << stringifyLossKind(loss);
    if (!gather)
      return emitError(ret.getLoc())
             << "loss-parallel reads logits sharded over the vocabulary: the "
                "model's output must be gathered from them "
                "(nn.all_gather_output, lm_head column-parallel), got "
             << (output.getDefiningOp()
                     ? output.getDefiningOp()->getName().getStringRef()
                     : StringRef("an argument"));
    if (keepOutput || !output.hasOneUse())
      return emitError(gather.getLoc())
             << "loss-parallel leaves the logits sharded: nothing else may "
                "read the gathered logits (keep-output, other outputs)";
    vocabShards = gather.getRanks();
    Value shard = gather.getInput();
    ret->replaceUsesOfWith(output, shard);
    llvm::erase_if(s.recorded,
                   [&](const RecordedOp &rec) { return rec.op == gather; });
    s.requiresGrad.erase(output);
    gather.erase();
    output = lossInput = shard;
    outType = cast<RankedTensorType>(shard.getType());
  }
  // transformers' ForCausalLMLoss computes on `logits.float()`, a copy when
  // the model runs in a lower precision; the model's frame keeps the logits
  // until the loss returns. A masked LM's, a token classifier's and an
  // encoder-decoder LM's own loss takes the logits as they are.
  Value keptLogits;
  if (loss == LossKind::CausalLm && outType.getRank() == 3 &&
      !outType.getElementType().isF32() &&
      !s.step->hasAttr(NNDialect::kMaskedLmAttrName) &&
      !s.step->hasAttr(NNDialect::kSeq2SeqLmAttrName) &&
      !s.step->hasAttr(NNDialect::kTokenClassifierAttrName)) {
    keptLogits = output;
    lossInput =
        CastOp::create(b, lossLoc, outType.clone(b.getF32Type()), output);
    if (s.requiresGrad.contains(output) &&
        failed(s.recordIfNeeded(lossInput.getDefiningOp())))
      return failure();
    outType = cast<RankedTensorType>(lossInput.getType());
  }
  if (loss == LossKind::CrossEntropy || loss == LossKind::CausalLm) {
    if (outType.getRank() < 2)
      return emitError(ret.getLoc())
             << "cross_entropy needs logits of rank >= 2, got " << outType;
    if (flatten && outType.getRank() != 3)
      return emitError(ret.getLoc())
             << "flattening sequence logits needs [B, T, V] logits, got "
             << outType;
    if (!flatten && outType.getRank() != 2)
      return emitError(ret.getLoc())
             << "cross_entropy over logits " << outType
             << " needs to know how to read them: mark @forward with "
             << NNDialect::kSequenceLogitsAttrName
             << " (or pass flatten-logits, --flatten-logits) for per-token "
                "[B, T, V] logits";
    if (flatten) {
      std::optional<int64_t> tokens =
          checkedMul(outType.getDimSize(0), outType.getDimSize(1));
      if (!tokens)
        return emitError(ret.getLoc()) << "flattening logits " << outType
                                       << ": batch x sequence overflows int64";
      auto flat = RankedTensorType::get({*tokens, outType.getDimSize(2)},
                                        outType.getElementType());
      lossInput = ReshapeOp::create(b, lossLoc, flat, lossInput);
      if (s.requiresGrad.contains(output) &&
          failed(s.recordIfNeeded(lossInput.getDefiningOp())))
        return failure();
    }
    auto logits = cast<RankedTensorType>(lossInput.getType());
    SmallVector<int64_t> targetShape(logits.getShape());
    targetShape.erase(targetShape.begin() + 1);
    targetType = RankedTensorType::get(targetShape, b.getI64Type());
    BlockArgument target = s.body.addArgument(targetType, lossLoc);
    if (vocabShards) {
      if (!logits.getElementType().isF32())
        return emitError(lossLoc)
               << "loss-parallel is modelled on fp32 logits (an fp32 model's, "
                  "or the logits.float() of transformers' loss, "
                  "--loss=causal_lm), got "
               << logits.getElementType();
      lossOp = VocabParallelCrossEntropyOp::create(b, lossLoc, lossInput,
                                                   target, vocabShards);
    } else {
      lossOp = CrossEntropyOp::create(b, lossLoc, lossInput, target,
                                      /*dtype=*/TypeAttr());
    }
    if (keptLogits)
      ReleaseOp::create(b, lossLoc, ValueRange{keptLogits},
                        StepPhaseAttr::get(b.getContext(), StepPhase::Forward));
  } else {
    // The data loader's targets are fp32 even when the model computes in a
    // lower precision under autocast.
    targetType = s.step->hasAttr(NNDialect::kAutocastAttrName)
                     ? outType.clone(b.getF32Type())
                     : outType;
    BlockArgument target = s.body.addArgument(targetType, lossLoc);
    lossOp = MseLossOp::create(b, lossLoc, lossInput, target);
  }
  s.lossOp = lossOp;
  return success();
}

/// Liger's fused linear cross-entropy (`--loss=fused_linear_cross_entropy`,
/// apply_liger_kernel_to_*(fused_linear_cross_entropy=True)): the model's
/// output must be lm_head's linear, which the loss replaces; it reads the
/// linear's input flattened to [B*T, H] and lm_head's weight, and no logits
/// are made (Liger's lce_forward returns none in training).
LogicalResult BuildStepPass::buildFusedLinearLoss(TrainStep &s, Value output,
                                                  Location lossLoc) {
  OpBuilder &b = s.b;
  if (s.step->hasAttr(NNDialect::kAutocastAttrName))
    return emitError(output.getLoc())
           << "the fused linear cross-entropy under autocast is not modelled "
              "yet: Liger's matmuls would run in the autocast dtype on fp32 "
              "operands";
  if (keepOutput)
    return emitError(output.getLoc())
           << "keep-output holds logits that the fused linear cross-entropy "
              "never makes";
  auto linear = output.getDefiningOp<LinearOp>();
  if (!linear || linear.getBias())
    return emitError(output.getLoc())
           << "the fused linear cross-entropy replaces lm_head: the model's "
              "output must be a linear layer without bias (nn.linear), got "
           << (output.getDefiningOp()
                   ? output.getDefiningOp()->getName().getStringRef()
                   : StringRef("an argument"))
           << (linear ? " with a bias" : "");
  if (!llvm::all_of(output.getUsers(),
                    [&](Operation *user) { return user == s.ret; }))
    return emitError(linear.getLoc())
           << "the fused linear cross-entropy replaces lm_head, whose logits "
              "something else in the model reads";
  Value hidden = linear.getInput();
  auto hiddenType = cast<RankedTensorType>(hidden.getType());
  if (hiddenType.getRank() < 2)
    return emitError(linear.getLoc())
           << "the fused linear cross-entropy needs hidden states [..., H], "
              "got "
           << hiddenType;
  std::optional<int64_t> tokens = 1;
  for (int64_t d : hiddenType.getShape().drop_back())
    tokens = tokens ? checkedMul(*tokens, d) : std::nullopt;
  if (!tokens)
    return emitError(linear.getLoc())
           << "flattening " << hiddenType << ": its tokens overflow int64";
  // lm_head is no longer computed: drop its node.
  llvm::erase_if(s.recorded,
                 [&](const RecordedOp &rec) { return rec.op == linear; });
  s.requiresGrad.erase(output);
  b.setInsertionPoint(linear);
  Value flat = hidden;
  if (hiddenType.getRank() != 2) {
    flat = ReshapeOp::create(
        b, lossLoc,
        RankedTensorType::get({*tokens, hiddenType.getShape().back()},
                              hiddenType.getElementType()),
        hidden);
    if (s.requiresGrad.contains(hidden) &&
        failed(s.recordIfNeeded(flat.getDefiningOp())))
      return failure();
  }
  BlockArgument target = s.body.addArgument(
      RankedTensorType::get({*tokens}, b.getI64Type()), lossLoc);
  auto lossOp = FusedLinearCrossEntropyOp::create(b, lossLoc, flat,
                                                  linear.getWeight(), target);
  for (OpOperand &use : llvm::make_early_inc_range(output.getUses()))
    use.set(lossOp.getLoss());
  linear.erase();
  s.lossOp = lossOp;
  return success();
}

/// Forward, as each node is recorded: its SavedVariables (operands,
/// results, or extra tensors the kernel computes) stay alive until backward
/// has run the node.
void BuildStepPass::saveForBackward(TrainStep &s) {
  MLIRContext *ctx = &getContext();
  OpBuilder &b = s.b;
  // Materialize what each node saves, right after its op. An extra tensor is
  // computed from the op's operands and results; one made before the op
  // (the clone of an in-place op's input) from its operands, right before
  // it.
  for (RecordedOp &rec : s.recorded) {
    SmallVector<SavedTensor> saved;
    cast<AutodiffOpInterface>(rec.op).getSavedTensors(
        s.target, rec.operandNeedsGrad, saved);
    SmallVector<Value> operands(rec.op->getOperands());
    SmallVector<Value> sources = operands;
    llvm::append_range(sources, rec.op->getResults());
    int64_t extras = 0;
    Operation *lastAfter = rec.op;
    for (const SavedTensor &tensor : saved) {
      switch (tensor.kind) {
      case SavedTensor::Kind::Operand:
        if (tensor.gradientOf >= 0)
          rec.gradSaved[tensor.gradientOf] = rec.saved.size();
        rec.saved.push_back(rec.op->getOperand(tensor.index));
        rec.roles.push_back(
            SavedRoleAttr::get(ctx, SavedKind::Operand, tensor.index));
        break;
      case SavedTensor::Kind::Result:
        rec.saved.push_back(rec.op->getResult(tensor.index));
        rec.roles.push_back(
            SavedRoleAttr::get(ctx, SavedKind::Result, tensor.index));
        break;
      case SavedTensor::Kind::Extra: {
        if (tensor.beforeOp)
          b.setInsertionPoint(rec.op);
        else
          b.setInsertionPointAfter(lastAfter);
        auto extra = SavedOp::create(
            b, rec.op->getLoc(), tensor.type, b.getStringAttr(tensor.name),
            b.getStringAttr(rec.op->getName().getStringRef()),
            rec.op->getAttrDictionary(), tensor.beforeOp ? operands : sources,
            tensor.beforeOp ? b.getUnitAttr() : UnitAttr());
        if (!tensor.beforeOp)
          lastAfter = extra;
        if (tensor.gradientOf >= 0)
          rec.gradSaved[tensor.gradientOf] = rec.saved.size();
        rec.saved.push_back(extra);
        rec.roles.push_back(
            SavedRoleAttr::get(ctx, SavedKind::Extra, extras++));
        break;
      }
      }
    }
  }
}

/// The gradient of operand `index` of `op` as a view of its result's
/// gradient, when the backward hands out a slice of it (CatBackward) that
/// is contiguous: a block of the gradient buffer, which may have reached
/// the result through views that keep it contiguous (a reshape). Null
/// otherwise: a strided slice stays a copy, which stands for the one most
/// backward kernels make of a strided gradient (which kernels accept one is
/// not modelled yet).
static Value sliceOfResultGrad(TrainStep &s, Operation *op, unsigned index) {
  std::optional<GradSlice> slice =
      cast<AutodiffOpInterface>(op).getGradSlice(index);
  if (!slice)
    return {};
  Value result = op->getResult(0);
  Value grad = s.gradOf.lookup(result);
  auto type = cast<RankedTensorType>(result.getType());
  if (!grad || llvm::any_of(type.getShape().take_front(slice->dim),
                            [](int64_t d) { return d != 1; }))
    return {};
  SmallVector<Attribute> views(s.viewsOf.lookup(result));
  if (!views.empty()) {
    if (!gradContiguousAs(grad, views, type))
      return {};
    if (grad.getType() != type)
      grad = ReshapeOp::create(s.b, op->getLoc(), type, grad);
  } else if (grad.getType() != type) {
    return {};
  }
  return SliceOp::create(s.b, op->getLoc(), op->getOperand(index).getType(),
                         grad, slice->dim, slice->start,
                         slice->start + slice->size, 1);
}

/// `loss.backward()`: the engine runs the recorded nodes in reverse order,
/// from the loss. A value used by several ops gets its gradients summed as
/// they arrive; a pass-through view hands its gradient on without a node.
void BuildStepPass::buildBackward(TrainStep &s) {
  OpBuilder &b = s.b;
  b.setInsertionPoint(s.ret);
  for (RecordedOp &rec : llvm::reverse(s.recorded)) {
    Operation *op = rec.op;
    auto autodiff = cast<AutodiffOpInterface>(op);
    SmallVector<Value> outGrads;
    for (Value result : op->getResults())
      if (Value g = s.gradOf.lookup(result))
        outGrads.push_back(g);
    if (op != s.lossOp && outGrads.empty())
      continue; // the result does not reach the loss

    SmallVector<int64_t> gradOperands;
    SmallVector<bool> paramGrads;
    SmallVector<Type> gradTypes;
    for (auto [i, needs] : llvm::enumerate(rec.operandNeedsGrad)) {
      if (!needs)
        continue;
      Value operand = op->getOperand(i);
      if (Value view = sliceOfResultGrad(s, op, i)) {
        s.contribute(operand, view, /*shares=*/true, op->getLoc());
        continue;
      }
      // A pass-through operand takes its result's gradient: the only
      // result's, or, for an op with a result per operand (Liger's RoPE
      // rotating q and k), result i's.
      Value passed = op->getResult(i < op->getNumResults() ? i : 0);
      Value passedGrad = s.gradOf.lookup(passed);
      if (passedGrad && autodiff.isGradPassthrough(i)) {
        SmallVector<Attribute> views(s.viewsOf.lookup(passed));
        Attribute inverse = inverseView(b, op, i, passed);
        // ViewBackward reshapes the gradient: when the gradient arrives
        // through a transposing view whose strides cannot express the
        // operand's shape, that reshape copies (a backward node).
        if (auto reshape = dyn_cast_or_null<TypeAttr>(inverse);
            !reshape ||
            gradStridesExpress(passedGrad, views,
                               cast<RankedTensorType>(reshape.getValue()))) {
          if (inverse)
            views.push_back(inverse);
          s.contribute(operand, passedGrad, /*shares=*/true, op->getLoc(),
                       views);
          continue;
        }
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
        b.getStringAttr(op->getName().getStringRef()), op->getAttrDictionary(),
        TypeAttr::get(
            b.getFunctionType(op->getOperandTypes(), op->getResultTypes())),
        rec.saved, b.getArrayAttr(rec.roles), outGrads,
        b.getDenseI64ArrayAttr(gradOperands),
        b.getDenseBoolArrayAttr(paramGrads), b.getDenseI64ArrayAttr(flops));
    SmallVector<bool> resultHasGrad, resultGradContiguous;
    for (Value result : op->getResults()) {
      resultHasGrad.push_back(static_cast<bool>(s.gradOf.lookup(result)));
      resultGradContiguous.push_back(!permutes(s.viewsOf.lookup(result)));
    }
    // The loss starts backward with no gradient of its own.
    if (!outGrads.empty() && outGrads.size() != op->getNumResults())
      node.setGradResults(resultHasGrad);
    SmallVector<int64_t> workspace;
    autodiff.getBackwardWorkspaceForGrads(s.target, rec.operandNeedsGrad,
                                          resultHasGrad, resultGradContiguous,
                                          workspace);
    llvm::erase(workspace, 0);
    if (!workspace.empty())
      node.setWorkspace(workspace);
    if (!rec.gradSaved.empty())
      node.setGradsSaved(llvm::map_to_vector(gradOperands, [&](int64_t i) {
        return rec.gradSaved.lookup_or(i, -1);
      }));
    SmallVector<Attribute> gradViews;
    bool anyPermutes = false;
    for (Value result : op->getResults())
      if (s.gradOf.lookup(result)) {
        ArrayRef<Attribute> views = s.viewsOf[result];
        anyPermutes |= permutes(views);
        gradViews.push_back(b.getArrayAttr(views));
      }
    if (anyPermutes)
      node->setAttr(NNDialect::kGradViewsAttrName, b.getArrayAttr(gradViews));
    for (auto [i, grad] : llvm::zip(gradOperands, node.getResults()))
      s.contribute(op->getOperand(i), grad, autodiff.isGradView(i),
                   op->getLoc());
  }
}

/// Backward ends at each parameter's AccumulateGrad, which stores the
/// gradient as the parameter's `.grad`, in the parameter's shape and layout.
void BuildStepPass::storeParamGrads(TrainStep &s) {
  OpBuilder &b = s.b;
  b.setInsertionPoint(s.ret);
  for (ParamOp param : s.trainableParams) {
    Value grad = s.gradOf.lookup(param.getResult());
    if (!grad)
      continue; // .grad stays None: optimizers skip the parameter
    // With the optimizer in backward, AccumulateGrad (which the engine runs
    // as soon as it is ready) and the hook's update follow the gradient.
    if (optimizerInBackward)
      b.setInsertionPointAfterValue(grad);
    // A gradient that passed through a reshape of the parameter (a Conv1d
    // weight viewed as 4-D for the 2-D kernel): ViewBackward gives .grad
    // the parameter's shape, a view of the same storage.
    auto paramType = cast<RankedTensorType>(param.getType());
    auto gradType = cast<RankedTensorType>(grad.getType());
    SmallVector<Attribute> views(s.viewsOf.lookup(param.getResult()));
    if (permutes(views)) {
      // A gradient that passed through a transposing view of the parameter
      // (`W.t()`): AccumulateGrad finds that its strides break the layout
      // contract and stores clone_obey_contract(grad), a new tensor in the
      // parameter's layout. A node of Tensor.contiguous makes that copy
      // through the inverse views.
      auto copy = BackwardOp::create(
          b, param.getLoc(), TypeRange{paramType},
          b.getStringAttr(ContiguousOp::getOperationName()),
          b.getDictionaryAttr({}),
          TypeAttr::get(b.getFunctionType({paramType}, {paramType})),
          ValueRange{}, b.getArrayAttr({}), ValueRange{grad},
          b.getDenseI64ArrayAttr({0}), b.getDenseBoolArrayAttr({true}),
          b.getDenseI64ArrayAttr({0, 0, 0}));
      copy->setAttr(NNDialect::kGradViewsAttrName,
                    b.getArrayAttr({b.getArrayAttr(views)}));
      grad = copy.getResult(0);
      gradType = paramType;
    }
    if (gradType != paramType &&
        gradType.getNumElements() == paramType.getNumElements())
      grad = ReshapeOp::create(b, param.getLoc(), paramType, grad);
    s.params.push_back(param.getResult());
    s.grads.push_back(grad);
  }
}

/// `optimizer.step()`: the optimizer's state (momentum buffer, Adam's
/// exp_avg and exp_avg_sq) persists across steps, so it lives next to each
/// parameter; the update runs per parameter (for-loop) or over all of them
/// at once (foreach, fused).
void BuildStepPass::buildOptimizerStep(TrainStep &s) {
  MLIRContext *ctx = &getContext();
  OpBuilder &b = s.b;
  SmallVector<Value> states;
  SmallVector<size_t> firstState; // per parameter, its first state tensor
  for (Value p : s.params) {
    firstState.push_back(states.size());
    b.setInsertionPointAfterValue(p);
    SmallVector<OptimizerStateSlot> slots;
    getOptimizerStateSlots(optimizer, cast<RankedTensorType>(p.getType()),
                           slots);
    for (const OptimizerStateSlot &slot : slots)
      states.push_back(OptimizerStateOp::create(
          b, p.getLoc(), slot.type, OptimizerStateKindAttr::get(ctx, slot.kind),
          p,
          isPagedOptimizerState(optimizer, s.target,
                                cast<RankedTensorType>(p.getType()), slot.kind)
              ? b.getUnitAttr()
              : UnitAttr()));
  }
  firstState.push_back(states.size());
  SmallVector<RankedTensorType> paramTypes;
  for (Value p : s.params)
    paramTypes.push_back(cast<RankedTensorType>(p.getType()));
  SmallVector<OptimizerBuffer> buffers;
  getOptimizerBuffers(optimizer, paramTypes, buffers);
  if (!buffers.empty())
    b.setInsertionPointAfterValue(s.params.front());
  for (const OptimizerBuffer &buffer : buffers)
    OptimizerBufferOp::create(b, s.params.front().getLoc(), buffer.type,
                              buffer.name);
  b.setInsertionPoint(s.ret);
  Location optLoc = NameLoc::get(b.getStringAttr("optimizer"), s.ret.getLoc());
  // clip_grad_norm_(model.parameters(), max_norm) between backward and
  // optimizer.step(), over every gradient at once.
  if (maxGradNorm > 0 && !s.grads.empty())
    ClipGradNormOp::create(
        b, NameLoc::get(b.getStringAttr("clip_grad_norm"), s.ret.getLoc()),
        s.grads, b.getF64FloatAttr(maxGradNorm));
  auto makeStep = [&](ValueRange ps, ValueRange gs,
                      ValueRange ss) -> Operation * {
    return OptimizerStepOp::create(b, optLoc,
                                   OptimizerKindAttr::get(ctx, optimizer),
                                   OptimizerImplAttr::get(ctx, implementation),
                                   ps, gs, ss, b.getF64FloatAttr(weightDecay));
  };
  if (optimizerInBackward) {
    // An optimizer per parameter, stepped by the parameter's
    // post-accumulate-grad hook, then zero_grad(set_to_none=True): the
    // update right after the gradient, which dies with it.
    // Gradients of one node are updated in parameter order.
    DenseMap<Operation *, Operation *> lastUpdateAfter;
    for (size_t i = 0; i < s.params.size(); ++i) {
      Operation *def = s.grads[i].getDefiningOp();
      if (Operation *last = lastUpdateAfter.lookup(def))
        b.setInsertionPointAfter(last);
      else
        b.setInsertionPointAfterValue(s.grads[i]);
      lastUpdateAfter[def] = makeStep(
          ValueRange(s.params).slice(i, 1), ValueRange(s.grads).slice(i, 1),
          ValueRange(states).slice(firstState[i],
                                   firstState[i + 1] - firstState[i]));
    }
  } else if (implementation == OptimizerImpl::ForLoop) {
    for (size_t i = 0; i < s.params.size(); ++i)
      makeStep(ValueRange(s.params).slice(i, 1),
               ValueRange(s.grads).slice(i, 1),
               ValueRange(states).slice(firstState[i],
                                        firstState[i + 1] - firstState[i]));
  } else if (!s.params.empty()) {
    makeStep(s.params, s.grads, states);
  }
  // zero_grad(set_to_none=True) drops .grad after the whole update: a
  // for-loop optimizer's per-parameter steps leave every gradient alive.
  if (!optimizerInBackward && !s.grads.empty()) {
    auto release = ReleaseOp::create(
        b, optLoc, s.grads, StepPhaseAttr::get(ctx, StepPhase::Optimizer));
    release->setAttr(NNDialect::kZeroGradAttrName, b.getUnitAttr());
  }
}

/// `ema_model = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(d))`
/// and, after each optimizer.step(), `ema_model.update_parameters(model)`:
/// copy.deepcopy keeps a copy of every parameter and buffer (and the
/// 8-byte n_averaged counter) across steps; the update lerps every
/// parameter's copy in place (_foreach_lerp_), with no temporaries.
void BuildStepPass::buildEmaUpdate(TrainStep &s) {
  OpBuilder &b = s.b;
  SmallVector<Value> params, averaged;
  SmallVector<Operation *> sources;
  for (Operation &op : s.body)
    if (isa<ParamOp, BufferOp>(op))
      sources.push_back(&op);
  for (Operation *source : sources) {
    b.setInsertionPointAfter(source);
    Value copy = EmaCopyOp::create(b, source->getLoc(), source->getResult(0));
    if (isa<ParamOp>(source)) {
      params.push_back(source->getResult(0));
      averaged.push_back(copy);
    }
  }
  b.setInsertionPointToStart(&s.body);
  OptimizerBufferOp::create(b, s.step.getLoc(),
                            RankedTensorType::get({}, b.getIntegerType(64)),
                            "ema.n_averaged");
  b.setInsertionPoint(s.ret);
  EmaUpdateOp::create(b, NameLoc::get(b.getStringAttr("ema"), s.ret.getLoc()),
                      params, averaged);
  s.step->setAttr(NNDialect::kEmaAttrName, b.getUnitAttr());
}

/// The step returns the loss; the model output dies after the loss, unless
/// the loop holds it (keep-output: nn.keep_alive at the step's end).
/// `optimizer.zero_grad(set_to_none=False)` keeps the .grad buffers from one
/// step to the next (zeroed in place) instead of freeing them. With
/// gradient accumulation over N micro-batches the step modelled is the last
/// micro-batch's, the highest: the earlier ones' gradients are held in .grad
/// while it runs, as with set_to_none=False (the first micro-batch's, which
/// allocates .grad, is the plain step's and lower). `nn.grad_accum` says how
/// many micro-batches one update covers (the report counts their FLOPs).
void BuildStepPass::finishStep(TrainStep &s) {
  Value lossValue = s.lossOp->getResult(0);
  if (keepOutput) {
    s.step->setAttr(NNDialect::kKeepOutputAttrName, s.b.getUnitAttr());
    s.b.setInsertionPoint(s.ret);
    KeepAliveOp::create(
        s.b, NameLoc::get(s.b.getStringAttr("output"), s.ret.getLoc()),
        s.ret.getOperands());
  }
  s.ret->setOperands(lossValue);
  s.step.setType(FunctionType::get(&getContext(), s.body.getArgumentTypes(),
                                   {lossValue.getType()}));
  if (!setToNone || gradAccum > 1)
    s.step->setAttr(NNDialect::kPersistentGradsAttrName, s.b.getUnitAttr());
  if (optimizerInBackward)
    s.step->setAttr(NNDialect::kOptimizerInBackwardAttrName, s.b.getUnitAttr());
  if (gradAccum > 1)
    s.step->setAttr(NNDialect::kGradAccumAttrName,
                    s.b.getI64IntegerAttr(gradAccum));
}
