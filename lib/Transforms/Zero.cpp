//===- Zero.cpp - one rank's step under DeepSpeed ZeRO-1/2 ----------------===//
//
// DeepSpeedZeroOptimizer (deepspeed/runtime/zero/stage_1_and_2.py, 0.19)
// with its defaults: contiguous_gradients, reduce_scatter and
// use_multi_rank_bucket_allreduce on, overlap_comm and offload off.
//
// Wrapping: the trainable parameters, in their order, are flattened into one
// buffer padded to a multiple of 2 x ranks elements (nccl_start_alignment_
// factor), of which the parameters become views; each rank clones its 1/ranks
// partition in float32 (even from float32 parameters) and hands only that to
// the optimizer, so the optimizer's state is the partition's.
//
// Backward: the first gradient hook allocates the gradient buffer
// (reduce_bucket_size elements, `ipg_buffer`; with overlap_comm two, taking
// the buckets in turn). Stage 2 copies each gradient into it as backward
// finishes it and drops the gradient; stage 1 keeps the gradients until
// backward ends and then copies them, in parameter order (with
// overlap_comm it copies them as stage 2 does).
// Before a gradient that would overflow the buffer, and after backward, the
// buffer is reduced (reduce_ipg_grads; a gradient larger than the buffer is
// not copied but reduced on its own at the next reduction): cut into one
// slice per run of
// the same rank's partition, flattened into a new tensor when
// there is more than one slice (torch's _flatten_dense_tensors of a single
// tensor is a view), all-reduced; then the gradients of parameters that
// overlap this rank's partition are copied into `grads_in_partition` (the
// whole parameters' elements), allocated at the first such copy. The buffer
// is freed after backward.
//
// Step: the global norm converts each of this rank's gradient slices to
// float64 in turn; the slices are flattened into the fp32 partition's
// gradient (`single_grad_partition`), `grads_in_partition` is dropped, the
// optimizer updates the partition, and the partition is copied back into
// the flat parameters and all-gathered into them in place (NCCL).
//
// Ranks differ in what overlaps their partition and when it is first
// reduced: each rank's step is built and analysed, and the step is the
// rank whose peak is highest.
// Measured against DeepSpeed 0.19.8 on torch 2.15 with gloo on the CPU:
// benchmarks/accuracy/zero.py.
//
//===----------------------------------------------------------------------===//

#include "vram/Transforms/Zero.h"

#include "vram/Analysis/MemoryAnalysis.h"
#include "vram/Analysis/StepInfo.h"
#include "vram/Dialect/NN/NNDialect.h"
#include "vram/Dialect/NN/NNOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace vram;
using namespace vram::nn;

namespace {

/// A trainable parameter: its nn.param, its gradient as the optimizer reads
/// it, and its elements' place in the flat buffer.
struct FlatParam {
  ParamOp param;
  Value grad;
  int64_t offset = 0, elements = 0;
  /// The op that finishes the gradient and its position in the step.
  Operation *ready = nullptr;
  size_t readyAt = 0;
};

} // namespace

LogicalResult vram::checkZeroParamType(ParamOp param, Type &element) {
  Type type = cast<RankedTensorType>(param.getType()).getElementType();
  if (!type.isF32() && !type.isBF16())
    return param.emitError()
           << "ZeRO with " << type
           << " parameters (DeepSpeed's fp16 loss scaling) is not modelled yet";
  if (element && element != type)
    return param.emitError() << "ZeRO flattens parameters of one dtype, got "
                             << type << " and " << element;
  element = type;
  return success();
}

void vram::eraseClientOptimizer(Block &body,
                                ArrayRef<OptimizerStepOp> updates) {
  for (OptimizerStepOp update : updates)
    update.erase();
  // DeepSpeed drops each .grad itself (the releases above).
  for (auto release : llvm::make_early_inc_range(body.getOps<ReleaseOp>()))
    if (release->hasAttr(NNDialect::kZeroGradAttrName))
      release.erase();
  for (auto state : llvm::make_early_inc_range(body.getOps<OptimizerStateOp>()))
    if (!state.getParam().getDefiningOp<ZeroPartitionOp>() &&
        state->use_empty())
      state.erase();
}

LogicalResult vram::checkZeroOptimizer(OptimizerStepOp update) {
  if (update.getOptimizer() == OptimizerKind::Adafactor ||
      isBitsAndBytesOptimizer(update.getOptimizer()))
    return update.emitError()
           << "ZeRO with " << stringifyEnum(update.getOptimizer())
           << " (state laid out per parameter) is not modelled yet";
  return success();
}

/// Rewrites `step` into rank `rank`'s step.
static LogicalResult partitionRank(func::FuncOp step, const ZeroLayout &layout,
                                   int64_t rank) {
  MLIRContext *ctx = step.getContext();
  Block &body = step.getBody().front();
  // Gradient accumulation: the step is the last micro-batch's (the
  // accumulation boundary) with what the earlier ones left (measured,
  // zero.py --trace): stage 2 their grads_in_partition, which this
  // micro-batch's replaces after backward; stage 1 every .grad (its hooks
  // reduce only at the boundary) and the gradient buffer their first hook
  // allocated. Each new gradient is added into its .grad and dropped.
  auto accumulated =
      step->getAttrOfType<IntegerAttr>(NNDialect::kGradAccumAttrName);
  bool accumulating = accumulated && accumulated.getInt() > 1;
  if (step->hasAttr(NNDialect::kPersistentGradsAttrName)) {
    if (!accumulating)
      return step.emitError()
             << "ZeRO with gradients kept across steps (nn.persistent_grads "
                "without nn.grad_accum) is not modelled yet";
    step->removeAttr(NNDialect::kPersistentGradsAttrName);
  }
  if (accumulating && layout.overlapComm)
    return step.emitError() << "ZeRO-1/2 with gradient accumulation and "
                               "overlap_comm is not modelled yet";
  if (step->hasAttr(NNDialect::kAutocastAttrName))
    return step.emitError() << "ZeRO under autocast is not modelled yet";

  // 1. The trainable parameters in the optimizer's order, the order of the
  // flat buffer.
  SmallVector<OptimizerStepOp> updates(body.getOps<OptimizerStepOp>());
  if (updates.empty())
    return step.emitError() << "ZeRO needs a training step with an optimizer";
  OptimizerStepOp first = updates.front();
  if (failed(checkZeroOptimizer(first)))
    return failure();
  DenseMap<Operation *, size_t> position;
  for (auto [i, op] : llvm::enumerate(body))
    position[&op] = i;
  std::vector<FlatParam> flat;
  int64_t total = 0;
  Type element;
  for (OptimizerStepOp update : updates)
    for (auto [param, grad] :
         llvm::zip(update.getParams(), update.getGrads())) {
      auto owner = param.getDefiningOp<ParamOp>();
      if (!owner)
        return update.emitError() << "ZeRO flattens nn.param parameters; "
                                     "this update's parameter is not one";
      if (failed(checkZeroParamType(owner, element)))
        return failure();
      auto type = cast<RankedTensorType>(param.getType());
      FlatParam p;
      p.param = owner;
      p.grad = grad;
      p.offset = total;
      p.elements = type.getNumElements();
      p.ready = grad.getDefiningOp();
      p.readyAt = p.ready ? position.lookup(p.ready) : 0;
      if (llvm::AddOverflow(total, p.elements, total))
        return step.emitError() << "the flat parameters do not fit in 64 bits";
      flat.push_back(p);
    }
  int64_t ranks = layout.ranks;
  int64_t alignment = 2 * ranks;
  int64_t padded = 0;
  if (total == 0 || llvm::MulOverflow(static_cast<int64_t>(
                                          llvm::divideCeil(total, alignment)),
                                      alignment, padded))
    return step.emitError() << "ZeRO needs trainable parameters whose "
                               "elements fit in 64 bits, got "
                            << total;
  int64_t partition = padded / ranks;
  // The partitions a parameter's elements fall in.
  auto firstRank = [&](const FlatParam &p) { return p.offset / partition; };
  auto endRank = [&](const FlatParam &p) {
    return std::min<int64_t>(
        ranks, llvm::divideCeil(p.offset + p.elements, partition));
  };
  // Whether some of `p`'s elements are in the modelled rank's partition.
  auto inRankPartition = [&](const FlatParam &p) {
    return firstRank(p) <= rank && rank < endRank(p);
  };

  // 2. The order the gradients enter the buffer: stage 2 as the hooks run
  // (as backward finishes them; of one op's, PyTorch runs the later
  // parameter's first: a linear layer's bias, measured), stage 1 in
  // parameter order after backward. A reduction runs before a gradient that
  // would overflow the buffer and after backward: the gradients between
  // two are a bucket. A parameter larger than the buffer is reduced on its
  // own, from its gradient, at the next reduction.
  std::vector<const FlatParam *> readyOrder;
  for (const FlatParam &p : flat)
    readyOrder.push_back(&p);
  std::stable_sort(readyOrder.begin(), readyOrder.end(),
                   [](const FlatParam *a, const FlatParam *b) {
                     if (a->readyAt != b->readyAt)
                       return a->readyAt < b->readyAt;
                     return a->offset > b->offset;
                   });
  // Stage 1 without overlap_comm copies after backward.
  bool afterBackward = layout.stage == 1 && !layout.overlapComm;
  std::vector<const FlatParam *> copyOrder = readyOrder;
  if (afterBackward)
    for (auto [i, p] : llvm::enumerate(flat))
      copyOrder[i] = &p;
  std::vector<std::vector<const FlatParam *>> buckets(1);
  int64_t bucketElements = 0;
  for (const FlatParam *p : copyOrder) {
    if (bucketElements + p->elements > layout.reduceBucket &&
        !buckets.back().empty()) {
      buckets.emplace_back();
      bucketElements = 0;
    }
    buckets.back().push_back(p);
    bucketElements += p->elements;
  }

  // 3. What the rank's partition holds: grads_in_partition is the whole
  // of every parameter that overlaps it, allocated at the first reduction
  // of one; the norm converts the slices one at a time.
  std::vector<int64_t> inPartition(ranks, 0), largestSlice(ranks, 0);
  for (const std::vector<const FlatParam *> &bucket : buckets)
    for (const FlatParam *p : bucket)
      for (int64_t r = firstRank(*p); r < endRank(*p); ++r) {
        int64_t slice = std::min(p->offset + p->elements, (r + 1) * partition) -
                        std::max(p->offset, r * partition);
        inPartition[r] += p->elements;
        largestSlice[r] = std::max(largestSlice[r], slice);
      }

  // 4. The flat buffer and this rank's fp32 partition, persistent.
  OpBuilder builder(ctx);
  Operation *lastParam = flat.front().param;
  SmallVector<Value> params;
  for (FlatParam &p : flat) {
    params.push_back(p.param.getResult());
    p.param->setAttr(NNDialect::kFlatParamAttrName, UnitAttr::get(ctx));
    if (lastParam->isBeforeInBlock(p.param))
      lastParam = p.param;
  }
  builder.setInsertionPointAfter(lastParam);
  Location loc = step.getLoc();
  auto flatParams = ZeroFlatParamsOp::create(
      builder, loc, RankedTensorType::get({padded}, element), params);
  auto master = ZeroPartitionOp::create(
      builder, loc, RankedTensorType::get({partition}, builder.getF32Type()),
      flatParams, builder.getI64IntegerAttr(ranks));

  // 5. Backward: the buffer at the first hook, each gradient copied into it
  // (and dropped), the buckets reduced.
  auto phase = [&](StepPhase p) { return StepPhaseAttr::get(ctx, p); };
  auto backward = phase(StepPhase::Backward);
  // overlap_comm's two buffers take the buckets in turn.
  SmallVector<Value, 2> ipg;
  // What earlier micro-batches left, alive from the step's start.
  Value accumulatedPartition;
  if (accumulating) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&body);
    auto forward = phase(StepPhase::Forward);
    auto hold = [&](int64_t elements, StringRef name) {
      return ZeroBufferOp::create(builder, loc,
                                  RankedTensorType::get({elements}, element),
                                  builder.getStringAttr(name), Value(), forward)
          .getResult();
    };
    if (afterBackward) {
      for (FlatParam &p : flat) {
        Value held = hold(p.elements, "accumulated_grad");
        // This micro-batch's gradient, added into .grad, dropped.
        OpBuilder::InsertionGuard after(builder);
        builder.setInsertionPointAfter(p.ready);
        ReleaseOp::create(builder, loc, ValueRange{p.grad}, backward);
        p.grad = held;
      }
      ipg.push_back(hold(layout.reduceBucket, "ipg_buffer"));
    } else {
      accumulatedPartition =
          hold(inPartition[rank], "accumulated_grads_in_partition");
    }
  }
  Value gradsInPartition;
  auto reduce = [&](size_t b) {
    ArrayRef<const FlatParam *> bucket = buckets[b];
    // One slice per run of consecutive gradients bound for the same rank.
    int64_t slices = 0, lastOwner = -1, elements = 0;
    for (const FlatParam *p : bucket) {
      elements += p->elements;
      for (int64_t r = firstRank(*p); r < endRank(*p); ++r)
        if (r != lastOwner) {
          ++slices;
          lastOwner = r;
        }
    }
    bool large = bucket.front()->elements > layout.reduceBucket;
    ZeroReduceOp::create(builder, loc,
                         large ? bucket.front()->grad : ipg[b % ipg.size()],
                         builder.getI64IntegerAttr(elements),
                         builder.getBoolAttr(slices > 1), backward);
    if (!gradsInPartition && llvm::any_of(bucket, [&](const FlatParam *p) {
          return inRankPartition(*p);
        }))
      gradsInPartition =
          ZeroBufferOp::create(
              builder, loc, RankedTensorType::get({inPartition[rank]}, element),
              builder.getStringAttr("grads_in_partition"), Value(), backward)
              .getResult();
    if (large)
      ReleaseOp::create(builder, loc, ValueRange{bucket.front()->grad},
                        backward);
  };
  // Where each gradient enters its bucket, and the bucket it closes.
  DenseMap<const FlatParam *, size_t> opens;
  for (auto [b, bucket] : llvm::enumerate(buckets))
    opens[bucket.front()] = b;
  auto copy = [&](const FlatParam &p) {
    auto it = opens.find(&p);
    if (it != opens.end() && it->second > 0)
      reduce(it->second - 1);
    // A gradient larger than the buffer stays until its own reduction.
    if (p.elements <= layout.reduceBucket)
      ReleaseOp::create(builder, loc, ValueRange{p.grad}, backward);
  };

  Operation *lastBackward = nullptr;
  for (Operation &op : body.without_terminator()) {
    StepPhase p = getStepPhase(&op);
    if (p == StepPhase::Backward || p == StepPhase::Recompute)
      lastBackward = &op;
  }
  for (const FlatParam &p : flat) {
    if (!p.ready)
      return ParamOp(p.param).emitError()
             << "ZeRO: no op finishes this gradient";
    if (!lastBackward || lastBackward->isBeforeInBlock(p.ready))
      lastBackward = p.ready;
  }
  Operation *previousReady = nullptr;
  for (const FlatParam *p : readyOrder) {
    // After the op, or after what this loop inserted after it.
    if (p->ready != previousReady)
      builder.setInsertionPointAfter(p->ready);
    previousReady = p->ready;
    for (int i = ipg.empty() ? (layout.overlapComm ? 2 : 1) : 0; i > 0; --i)
      ipg.push_back(ZeroBufferOp::create(
                        builder, loc,
                        RankedTensorType::get({layout.reduceBucket}, element),
                        builder.getStringAttr("ipg_buffer"), Value(), backward)
                        .getResult());
    if (afterBackward)
      break;
    copy(*p);
  }
  // After backward (overlapping_partition_gradients_reduce_epilogue): stage
  // 1 without overlap_comm copies every gradient now; the last bucket is
  // reduced, the buffers freed.
  Operation *inserted = &*std::prev(builder.getInsertionPoint());
  builder.setInsertionPointAfter(
      inserted->isBeforeInBlock(lastBackward) ? lastBackward : inserted);
  if (afterBackward)
    for (const FlatParam &p : flat)
      copy(p);
  reduce(buckets.size() - 1);
  ReleaseOp::create(builder, loc, ipg, backward);
  if (accumulatedPartition)
    ReleaseOp::create(builder, loc, ValueRange{accumulatedPartition}, backward);

  // 6. The step on this rank's partition.
  builder.setInsertionPoint(first);
  auto optimizerPhase = phase(StepPhase::Optimizer);
  if (!gradsInPartition)
    return step.emitError()
           << "ZeRO: rank " << rank << "'s partition holds no gradient";
  ZeroGradNormOp::create(builder, loc, gradsInPartition,
                         builder.getI64IntegerAttr(largestSlice[rank]),
                         optimizerPhase);
  // The slices flattened (torch's flatten of one tensor is a view of it; the
  // last rank's slices end with the padding), then cast to fp32 (a new
  // tensor unless the parameters are fp32).
  SmallVector<const FlatParam *> overlapping;
  for (const FlatParam &p : flat)
    if (inRankPartition(p))
      overlapping.push_back(&p);
  bool padding = rank == ranks - 1 && padded > total;
  Value flatGrad;
  if (overlapping.size() == 1 && !padding) {
    int64_t start = rank * partition - overlapping.front()->offset;
    flatGrad = SliceOp::create(builder, loc, gradsInPartition, 0, start,
                               start + partition, 1);
    flatGrad.getDefiningOp()->setAttr(NNDialect::kPhaseAttrName,
                                      optimizerPhase);
  } else {
    flatGrad =
        ZeroBufferOp::create(
            builder, loc, RankedTensorType::get({partition}, element),
            builder.getStringAttr(element.isF32() ? "single_grad_partition"
                                                  : "flat_grad_partition"),
            gradsInPartition, optimizerPhase)
            .getResult();
  }
  Value masterGrad = flatGrad;
  if (!element.isF32())
    masterGrad = ZeroBufferOp::create(
                     builder, loc,
                     RankedTensorType::get({partition}, builder.getF32Type()),
                     builder.getStringAttr("single_grad_partition"), flatGrad,
                     optimizerPhase)
                     .getResult();
  SmallVector<Value, 2> dropped = {gradsInPartition};
  if (masterGrad != flatGrad)
    dropped.push_back(flatGrad);
  ReleaseOp::create(builder, loc, dropped, optimizerPhase);
  SmallVector<OptimizerStateSlot> slots;
  getOptimizerStateSlots(first.getOptimizer(), master.getType(), slots);
  SmallVector<Value> states;
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointAfter(master);
    for (const OptimizerStateSlot &slot : slots)
      states.push_back(OptimizerStateOp::create(
          builder, loc, slot.type, OptimizerStateKindAttr::get(ctx, slot.kind),
          master));
  }
  OptimizerStepOp::create(
      builder, first.getLoc(), first.getOptimizerAttr(),
      first.getImplementationAttr(), ValueRange{master.getResult()},
      ValueRange{masterGrad}, states, first.getWeightDecayAttr());
  eraseClientOptimizer(body, updates);
  return success();
}

LogicalResult vram::partitionForZero(func::FuncOp step,
                                     const ZeroLayout &layout, int64_t &rank) {
  if (rank >= layout.ranks)
    return step.emitError()
           << "ZeRO rank " << rank << " of " << layout.ranks << " ranks";
  // Ranks differ in which gradients their partition holds and when their
  // buffers are made: each rank's step is built and analysed, and the step
  // is the one whose peak is highest (the lowest such rank).
  SmallVector<int64_t> peaks;
  if (rank < 0) {
    for (int64_t r = 0; r < layout.ranks; ++r) {
      OwningOpRef<func::FuncOp> trial = step.clone();
      if (failed(partitionRank(*trial, layout, r)))
        return failure();
      MemoryAnalysis memory(*trial);
      if (memory.failed())
        return failure();
      peaks.push_back(memory.getPeakBytes());
      if (rank < 0 || peaks.back() > peaks[rank])
        rank = r;
    }
  }
  if (failed(partitionRank(step, layout, rank)))
    return failure();
  if (!peaks.empty())
    step->setAttr(NNDialect::kRankPeaksAttrName,
                  DenseI64ArrayAttr::get(step.getContext(), peaks));
  return success();
}
