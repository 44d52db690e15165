//===- Parallel.cpp - one rank's step of a data-parallel job --------------===//
//
// DistributedDataParallel (torch/nn/parallel/distributed.py and the C++
// Reducer) wraps a model whose every rank holds all of it. At construction
// the reducer allocates flat gradient buckets; after the first iteration it
// rebuilds them in the order the gradients became ready, with the limits
// [first_bucket_bytes_cap, bucket_bytes_cap] (1 MiB, then 25 MiB by
// default): per dtype, parameters join the open bucket in ready order and
// the bucket closes as soon as it holds at least the current limit
// (compute_bucket_assignment_by_size). The buckets then live as long as the
// model. Each finished gradient is written into its bucket (scaled by
// 1/world_size), the bucket is all-reduced in place, and copied back into
// `.grad`; with gradient_as_bucket_view `.grad` is the bucket view itself and
// the gradient autograd produced is dropped once copied.
//
// FSDP2 (torch/distributed/fsdp/_fully_shard) shards every parameter on
// dim 0 in chunks of ceil(dim0 / ranks) rows (rank 0 holds full chunks: its
// figures are the largest). Per fully_shard unit, in forward: all-gather
// into one flat buffer, copy out into the unsharded parameters, and free
// them after the unit's forward (reshard_after_forward; the root keeps its
// parameters for backward); the flat buffer of a unit is kept until the next
// unit's copy-out (implicit prefetching) and the last one until forward
// ends. In backward, the root's pre-backward prefetches the all-gather of
// the first unit to run, each unit's pre-backward copies its parameters out
// (freeing the flat buffer) and prefetches the next unit's; after the
// unit's backward the unsharded gradients are copied into one flat
// reduce-scatter input (and dropped), reduced into this rank's flat shard
// of gradients (the sharded .grad are views into it), and the input is kept
// until the next unit's reduce-scatter or the end of backward. The
// optimizer updates the shards. HSDP (dp x fsdp ranks) is the same step:
// the gradient shards are all-reduced across the replicas in place. Under a
// MixedPrecisionPolicy the step was built in param_dtype: the shards, their
// gradients, optimizer state and the forward inputs stay fp32, each
// all-gather first casts its unit's shards into one flat param_dtype input.
// Measured against torch 2.15 with gloo on the CPU:
// benchmarks/accuracy/fsdp.py.
//
// On the step: a gradient is ready when the op that finishes it runs (the
// value the optimizer reads), so the ready order is the order of those ops.
// The buckets become `nn.grad_bucket` ops (persistent gradients) at the top
// of `@step`; the step gets `nn.parallel`, which the memory analysis reads
// for the bucket view. Measured against torch 2.15 with gloo on the CPU:
// benchmarks/accuracy/ddp.py.
//
//===----------------------------------------------------------------------===//

#include "vram/Analysis/StepInfo.h"
#include "vram/Dialect/NN/NNDialect.h"
#include "vram/Dialect/NN/NNOps.h"
#include "vram/Transforms/ModulePatterns.h"
#include "vram/Transforms/Passes.h"
#include "vram/Transforms/PipelineParallel.h"
#include "vram/Transforms/Zero.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

namespace vram {
#define GEN_PASS_DEF_PARALLEL
#include "vram/Transforms/Passes.h.inc"
} // namespace vram

using namespace mlir;
using namespace vram;
using namespace vram::nn;

namespace {

/// A gradient the reducer buckets: its parameter's name, its type and the
/// position of the op that finishes it.
struct ReadyGradient {
  std::string param;
  RankedTensorType type;
  unsigned readyAt;
  /// A tensor-parallel shard: its gradient reaches DDP last (below).
  bool tensorParallelShard = false;
  /// The parameter's place in the model's parameters (registration order).
  unsigned paramIndex = 0;
};

/// A bucket being filled or closed: the parameters it holds, in order.
struct Bucket {
  Type elementType;
  SmallVector<Attribute> params;
  int64_t elements = 0, bytes = 0;
};

struct ParallelPass : public vram::impl::ParallelBase<ParallelPass> {
  using ParallelBase::ParallelBase;

  void runOnOperation() override;

private:
  LogicalResult addGradBuckets(func::FuncOp step);
  LogicalResult shardStep(func::FuncOp step);
};

/// A fully_shard unit of a sharded step: its module ("" for the root) and
/// its parameters, with where the step first and last runs it.
struct ShardUnit {
  std::string module;
  SmallVector<ParamOp> params;
  Operation *firstForward = nullptr, *lastForward = nullptr,
            *firstBackward = nullptr, *lastBackward = nullptr;
  /// The unsharded parameters forward and backward gather.
  UnshardOp forwardUnshard, backwardUnshard;
};

} // namespace

void ParallelPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto step = module.lookupSymbol<func::FuncOp>(entry);
  if (!step || step.isExternal() || !step.getBody().hasOneBlock()) {
    emitError(module.getLoc()) << "vram-parallel needs a built step @" << entry
                               << " (run vram-build-step first)";
    return signalPassFailure();
  }
  if (dp < 1 || bucketCap < 1 || firstBucket < 1) {
    emitError(step.getLoc())
        << "vram-parallel needs dp >= 1 and bucket sizes >= 1 byte, got dp="
        << static_cast<int64_t>(dp)
        << " bucket-cap=" << static_cast<int64_t>(bucketCap)
        << " first-bucket=" << static_cast<int64_t>(firstBucket);
    return signalPassFailure();
  }
  if (step->hasAttr(NNDialect::kOptimizerInBackwardAttrName)) {
    step.emitError() << "vram-parallel with the optimizer in backward ('"
                     << NNDialect::kOptimizerInBackwardAttrName
                     << "') is not modelled yet";
    return signalPassFailure();
  }
  // bitsandbytes' paged state (CUDA unified memory) over shards or
  // partitions: not modelled.
  for (auto state : step.getOps<OptimizerStateOp>())
    if (state.getPaged()) {
      state.emitError() << "vram-parallel with a paged optimizer's state "
                           "(paged_adamw, paged_adamw8bit) is not modelled yet";
      return signalPassFailure();
    }
  if (step->hasAttr(NNDialect::kParallelAttrName)) {
    step.emitError() << "the step is already parallel ('"
                     << NNDialect::kParallelAttrName << "')";
    return signalPassFailure();
  }
  if (fsdp < 1 || tp < 1 || dp > ParallelAttr::kMaxWorldSize ||
      fsdp > ParallelAttr::kMaxWorldSize / dp ||
      tp > ParallelAttr::kMaxWorldSize / (dp * fsdp)) {
    emitError(step.getLoc())
        << "vram-parallel needs fsdp >= 1, tp >= 1 and at most "
        << ParallelAttr::kMaxWorldSize
        << " ranks, got dp=" << static_cast<int64_t>(dp)
        << " fsdp=" << static_cast<int64_t>(fsdp)
        << " tp=" << static_cast<int64_t>(tp);
    return signalPassFailure();
  }
  // Tensor parallelism is a property of the model the step was built from:
  // its front end made the shards and the collectives.
  int64_t builtFor = 1;
  if (auto ranks =
          step->getAttrOfType<IntegerAttr>(NNDialect::kTensorParallelAttrName))
    builtFor = ranks.getInt();
  if (tp != builtFor) {
    InFlightDiagnostic diag = step.emitError();
    if (builtFor == 1)
      diag << "vram-parallel tp=" << static_cast<int64_t>(tp)
           << " needs a step built from one rank's tensor-parallel model "
              "(its front end sets '"
           << NNDialect::kTensorParallelAttrName << "')";
    else
      diag << "the step's model was built for tp=" << builtFor
           << " tensor-parallel ranks ('" << NNDialect::kTensorParallelAttrName
           << "'), not tp=" << static_cast<int64_t>(tp);
    return signalPassFailure();
  }
  if (zero < 0 || zero > 3 || (zero > 0 && (fsdp > 1 || tp > 1)) ||
      reduceBucket < 1 || (overlapComm && (zero == 0 || zero == 3))) {
    emitError(step.getLoc())
        << "vram-parallel zero is a ZeRO stage 1, 2 or 3 over dp alone with "
           "a reduce-bucket-size >= 1 (and overlap-comm at stage 1 or 2), "
           "got zero="
        << static_cast<int64_t>(zero) << " fsdp=" << static_cast<int64_t>(fsdp)
        << " tp=" << static_cast<int64_t>(tp)
        << " reduce-bucket-size=" << static_cast<int64_t>(reduceBucket)
        << " overlap-comm=" << (overlapComm ? "true" : "false");
    return signalPassFailure();
  }
  bool interleaved = ppSchedule == "interleaved-1f1b";
  if (pp < 1 || pp > ParallelAttr::kMaxWorldSize || microbatches < 0 ||
      (ppSchedule != "gpipe" && ppSchedule != "1f1b" && !interleaved)) {
    emitError(step.getLoc())
        << "vram-parallel needs pp >= 1 (at most "
        << ParallelAttr::kMaxWorldSize
        << "), microbatches >= 0 and pp-schedule gpipe, 1f1b or "
           "interleaved-1f1b, got pp="
        << static_cast<int64_t>(pp)
        << " microbatches=" << static_cast<int64_t>(microbatches)
        << " pp-schedule=" << ppSchedule;
    return signalPassFailure();
  }
  // ScheduleInterleaved1F1B: each rank holds several stages (torchtitan's
  // default for interleaved schedules is two).
  int64_t stagesPerRank =
      interleaved ? (ppStagesPerRank == 0 ? 2 : ppStagesPerRank) : 1;
  if ((interleaved && (stagesPerRank < 2 ||
                       stagesPerRank > ParallelAttr::kMaxWorldSize / pp)) ||
      (!interleaved && ppStagesPerRank > 1) || ppStagesPerRank < 0) {
    emitError(step.getLoc())
        << "vram-parallel pp-stages-per-rank is the stages each rank holds "
           "under pp-schedule=interleaved-1f1b, 2 or more (0: 2), got "
        << static_cast<int64_t>(ppStagesPerRank)
        << " with pp-schedule=" << ppSchedule;
    return signalPassFailure();
  }
  int64_t numMicrobatches = microbatches == 0 ? pp : microbatches;
  bool gpipe = pp > 1 && ppSchedule == "gpipe";
  int64_t stage = 0;
  if (pp > 1) {
    if (dp > 1 || fsdp > 1 || tp > 1 || zero > 0 || !shard.empty()) {
      step.emitError() << "vram-parallel: pipeline parallelism with dp, "
                          "fsdp, tp or ZeRO is not modelled yet";
      return signalPassFailure();
    }
    if (getStepMode(step) != StepMode::Train) {
      step.emitError() << "vram-parallel pp=" << static_cast<int64_t>(pp)
                       << " models a training step; pipelined inference "
                          "and generation are not modelled yet";
      return signalPassFailure();
    }
    if (step->hasAttr(NNDialect::kPersistentGradsAttrName)) {
      step.emitError()
          << "vram-parallel pp with .grad kept across steps or gradient "
             "accumulation (nn.persistent_grads) is not modelled yet: the "
             "micro-batches are the pipeline's";
      return signalPassFailure();
    }
    // Schedule1F1B raises ValueError with fewer micro-batches than stages,
    // ScheduleInterleaved1F1B with micro-batches that are not a multiple
    // of its rounds.
    int64_t rounds = std::max<int64_t>(1, numMicrobatches / pp);
    if (interleaved && numMicrobatches % rounds != 0) {
      step.emitError() << "the interleaved 1F1B schedule needs micro-batches "
                          "that are a multiple of its rounds (max(1, "
                          "microbatches / pp) = "
                       << rounds << "), got microbatches=" << numMicrobatches
                       << " for pp=" << static_cast<int64_t>(pp);
      return signalPassFailure();
    }
    if (!gpipe && !interleaved && numMicrobatches < pp) {
      step.emitError() << "the 1F1B schedule needs at least as many "
                          "micro-batches as stages, got microbatches="
                       << numMicrobatches
                       << " for pp=" << static_cast<int64_t>(pp);
      return signalPassFailure();
    }
    if (ppStage < -1 || ppStage >= pp) {
      step.emitError() << "vram-parallel pp-stage must be a stage of pp="
                       << static_cast<int64_t>(pp) << " (or -1), got "
                       << static_cast<int64_t>(ppStage);
      return signalPassFailure();
    }
    stage = ppStage;
    PipelineLayout layout{
        pp * stagesPerRank, numMicrobatches, gpipe, {}, stagesPerRank};
    layout.blocksPerStage.assign(ppLayers.begin(), ppLayers.end());
    if (failed(partitionForPipeline(step, layout, stage)))
      return signalPassFailure();
  } else if (microbatches > 1 || ppSchedule != "1f1b" || ppStage != -1 ||
             !ppLayers.empty() || ppStagesPerRank != 0) {
    step.emitError() << "vram-parallel microbatches, pp-schedule, pp-stage, "
                        "pp-layers and pp-stages-per-rank configure pipeline "
                        "parallelism: they need pp > 1";
    return signalPassFailure();
  }
  MLIRContext *ctx = &getContext();
  SmallVector<Attribute> shardPatterns;
  for (const std::string &pattern : shard)
    shardPatterns.push_back(StringAttr::get(ctx, pattern));
  if (zero == 3 &&
      (prefetchBucket < 0 || maxLiveParameters < 0 || maxReuseDistance < 0 ||
       persistenceThreshold < 0 || subGroupSize < 1)) {
    emitError(step.getLoc())
        << "vram-parallel's ZeRO-3 sizes are elements >= 0 (sub-group-size "
           ">= 1), got prefetch-bucket-size="
        << static_cast<int64_t>(prefetchBucket)
        << " max-live-parameters=" << static_cast<int64_t>(maxLiveParameters)
        << " max-reuse-distance=" << static_cast<int64_t>(maxReuseDistance)
        << " param-persistence-threshold="
        << static_cast<int64_t>(persistenceThreshold)
        << " sub-group-size=" << static_cast<int64_t>(subGroupSize);
    return signalPassFailure();
  }
  // ZeRO-1/2 replace DDP on the dp ranks; in inference they are replicas.
  // ZeRO-3 partitions the parameters in inference too (ZeRO-Inference).
  // ZeRO-1/2: the worst rank, found by analysing each rank's step.
  int64_t zeroRank = -1;
  if (zero == 3 && getStepMode(step) == StepMode::Generate) {
    step.emitError() << "vram-parallel zero=3 models training and inference "
                        "steps; ZeRO-3 generation is not modelled yet";
    return signalPassFailure();
  }
  if (zero == 3 &&
      failed(partitionForZero3(step, {dp, reduceBucket, prefetchBucket,
                                      maxLiveParameters, maxReuseDistance,
                                      persistenceThreshold, subGroupSize})))
    return signalPassFailure();
  if (zero > 0 && zero < 3 && getStepMode(step) == StepMode::Train &&
      failed(partitionForZero(step, {zero, dp, reduceBucket, overlapComm},
                              zeroRank)))
    return signalPassFailure();
  step->setAttr(NNDialect::kParallelAttrName,
                ParallelAttr::get(ctx, dp, fsdp,
                                  ArrayAttr::get(ctx, shardPatterns), bucketCap,
                                  firstBucket, bucketView, tp, zero,
                                  reduceBucket, std::max<int64_t>(zeroRank, 0),
                                  overlapComm, pp, pp > 1 ? numMicrobatches : 1,
                                  gpipe, stage, pp > 1 ? stagesPerRank : 1));
  if (zero > 0 || pp > 1)
    return;
  // FSDP2 over a (fsdp, tp) mesh shards each rank's tensor-parallel
  // shards further; the collectives of the two axes are independent.
  if (fsdp > 1 || !shard.empty()) {
    if (failed(shardStep(step)))
      return signalPassFailure();
    return;
  }
  // DDP over tensor-parallel groups (dp with tp): each rank's buckets hold
  // its own shards' gradients (_pre_dp_module_transform hands DDP the
  // DTensors' local tensors), all-reduced across the dp replicas.
  if (tp > 1 && dp == 1)
    return;
  if (getStepMode(step) == StepMode::Train && failed(addGradBuckets(step)))
    signalPassFailure();
}

LogicalResult ParallelPass::addGradBuckets(func::FuncOp step) {
  MLIRContext *ctx = &getContext();
  Block &body = step.getBody().front();
  DenseMap<Operation *, unsigned> position;
  for (auto [i, op] : llvm::enumerate(body))
    position[&op] = i;
  // Over tensor-parallel groups, _pre_dp_module_transform rebuilds each
  // sharded parameter as a DTensor (DTensor.from_local) at the start of
  // every forward: the autograd engine runs those nodes, created first, after
  // every other ready node, so the shards' gradients reach DDP after the
  // replicated parameters' (measured: tp.py's ddp2_tp2 bucket sizes). The
  // shards are the weights of the column-parallel linears (reading an
  // nn.all_reduce_grad, or under sequence parallelism lm_head's gathered
  // DTensor input) and the row-parallel ones (feeding an nn.all_reduce, or
  // the sequence's nn.reduce_scatter_output), and a vocabulary-parallel
  // embedding's.
  llvm::DenseSet<Value> shards;
  for (auto embedding : body.getOps<VocabParallelEmbeddingOp>())
    shards.insert(embedding.getWeight());
  for (auto linear : body.getOps<LinearOp>()) {
    Operation *input = linear.getInput().getDefiningOp();
    auto gather = dyn_cast_or_null<AllGatherOutputOp>(input);
    bool column = isa_and_nonnull<AllReduceGradOp>(input) ||
                  (gather && gather.getScatterGrad());
    bool row = llvm::any_of(linear->getUsers(), [](Operation *user) {
      return isa<AllReduceOp, ReduceScatterOutputOp>(user);
    });
    if (!column && !row)
      continue;
    shards.insert(linear.getWeight());
    if (Value bias = linear.getBias())
      shards.insert(bias);
  }
  // Under sequence parallelism the modules that run on the positions'
  // shards (SequenceParallel: the norms) hold their parameters as
  // replicated DTensors, rebuilt at the forward's start like the shards
  // (measured: tp.py's llama-mha_ddp2_tp2_adam_sp buckets): the parameters
  // the forward reads between a split or reduce-scatter along the sequence
  // and the next gather, directly or through an op of parameters alone
  // (Gemma's 1 + weight, a precision cast).
  SmallVector<Operation *> worklist;
  for (Operation &op : body)
    if (isa<ReduceScatterOutputOp>(op) ||
        (isa<SplitInputOp>(op) && cast<SplitInputOp>(op).getDim()))
      worklist.push_back(&op);
  llvm::DenseSet<Operation *> onShards(worklist.begin(), worklist.end());
  while (!worklist.empty())
    for (Operation *user : worklist.pop_back_val()->getUsers())
      if (!isa<AllGatherOutputOp, BackwardOp>(user) &&
          onShards.insert(user).second)
        worklist.push_back(user);
  auto isParam = [](Value v) { return v.getDefiningOp<ParamOp>() != nullptr; };
  for (Operation *op : onShards)
    for (Value operand : op->getOperands()) {
      if (isParam(operand)) {
        shards.insert(operand);
        continue;
      }
      Operation *def = operand.getDefiningOp();
      if (def && def->getNumOperands() &&
          llvm::all_of(def->getOperands(), [&](Value v) {
            return isParam(v) || v.getDefiningOp<ConstantOp>();
          }))
        for (Value v : def->getOperands())
          if (isParam(v))
            shards.insert(v);
    }
  std::vector<ReadyGradient> ready;
  for (auto update : body.getOps<OptimizerStepOp>())
    for (auto [param, grad] :
         llvm::zip(update.getParams(), update.getGrads())) {
      std::string name = "?";
      if (auto owner = param.getDefiningOp<PersistentStorageOpInterface>())
        name = owner.getStorageName();
      Operation *def = grad.getDefiningOp();
      ready.push_back({name, cast<RankedTensorType>(grad.getType()),
                       def ? position.lookup(def) : 0, shards.contains(param),
                       static_cast<unsigned>(ready.size())});
    }
  // The shards' from_local nodes were all created at the forward's start in
  // the parameters' order; the engine runs the latest-created ready node
  // first, so the shards reach DDP in reverse parameter order (a linear's
  // bias before its weight: measured, tp.py's gpt_neox_ddp2_tp2 buckets).
  std::stable_sort(ready.begin(), ready.end(),
                   [](const ReadyGradient &a, const ReadyGradient &b) {
                     if (a.tensorParallelShard != b.tensorParallelShard)
                       return b.tensorParallelShard;
                     if (a.tensorParallelShard)
                       return a.paramIndex > b.paramIndex;
                     return a.readyAt < b.readyAt;
                   });

  // compute_bucket_assignment_by_size over the ready order, one open bucket
  // and one limit per dtype.
  std::vector<Bucket> closed;
  llvm::MapVector<Type, std::pair<Bucket, bool>> open; // bucket, past first
  for (const ReadyGradient &g : ready) {
    std::optional<int64_t> bytes = getTensorBytes(g.type);
    auto &[bucket, pastFirst] = open[g.type.getElementType()];
    bucket.elementType = g.type.getElementType();
    bucket.params.push_back(StringAttr::get(ctx, g.param));
    if (!bytes ||
        llvm::AddOverflow(bucket.elements, g.type.getNumElements(),
                          bucket.elements) ||
        llvm::AddOverflow(bucket.bytes, *bytes, bucket.bytes)) {
      return step.emitError() << "the gradient bucket holding '" << g.param
                              << "' does not fit in 64 bits";
    }
    if (bucket.bytes >= (pastFirst ? bucketCap : firstBucket)) {
      closed.push_back(std::move(bucket));
      bucket = Bucket();
      pastFirst = true;
    }
  }
  for (auto &entry : open)
    if (!entry.second.first.params.empty())
      closed.push_back(std::move(entry.second.first));

  OpBuilder builder = OpBuilder::atBlockBegin(&body);
  for (auto [i, bucket] : llvm::enumerate(closed))
    GradBucketOp::create(
        builder, step.getLoc(),
        RankedTensorType::get({bucket.elements}, bucket.elementType),
        builder.getStringAttr("ddp.bucket" + std::to_string(i)),
        builder.getArrayAttr(bucket.params));
  numBuckets += closed.size();
  return success();
}

/// `type` with dim 0 in chunks of ceil(dim0 / ranks): one rank's padded
/// shard, in `element` (default: the type's).
static RankedTensorType shardType(RankedTensorType type, int64_t ranks,
                                  Type element = {}) {
  SmallVector<int64_t> shape(type.getShape());
  shape[0] = llvm::divideCeil(shape[0], ranks);
  return RankedTensorType::get(shape,
                               element ? element : type.getElementType());
}

LogicalResult ParallelPass::shardStep(func::FuncOp step) {
  MLIRContext *ctx = &getContext();
  Block &body = step.getBody().front();
  if (step->hasAttr(NNDialect::kPersistentGradsAttrName))
    return step.emitError()
           << "FSDP with .grad kept across steps or micro-batches "
              "(nn.persistent_grads) is not modelled yet";
  if (step->hasAttr(NNDialect::kAutocastAttrName))
    return step.emitError() << "FSDP under autocast is not modelled yet (its "
                               "MixedPrecisionPolicy neither)";
  // The optimizer runs on each rank's shards (DTensors): an elementwise
  // state is sharded with its parameter; a factored or block-wise one is
  // laid out by the optimizer over the shard, which is not modelled.
  for (auto update : body.getOps<OptimizerStepOp>())
    if (update.getOptimizer() == OptimizerKind::Adafactor ||
        update.getOptimizer() == OptimizerKind::AdamW8bit)
      return update.emitError()
             << "FSDP with " << stringifyEnum(update.getOptimizer())
             << " (state laid out over each shard) is not modelled yet";
  ModulePatterns patterns;
  if (failed(patterns.compile(shard, step.getLoc())))
    return failure();

  // 1. Units, the root first, then in the order their modules appear.
  llvm::MapVector<StringRef, ShardUnit> units;
  units[""].module = "";
  DenseMap<Operation *, ShardUnit *> unitOfParam;
  SmallVector<std::string> moduleNames;
  for (ParamOp param : body.getOps<ParamOp>()) {
    auto type = cast<RankedTensorType>(param.getType());
    if (type.getRank() < 1)
      return param.emitError()
             << "FSDP shards dim 0: a 0-d parameter is not modelled";
    StringRef module = moduleOfParameter(param.getName());
    moduleNames.push_back(module.str());
    StringRef unit = patterns.empty() ? "" : patterns.matchingModule(module);
    ShardUnit &u = units[unit];
    u.module = unit.str();
    u.params.push_back(param);
  }
  if (SmallVector<StringRef> unmatched = patterns.getUnmatched();
      !unmatched.empty()) {
    InFlightDiagnostic diag = step.emitError()
                              << "--shard pattern '" << unmatched.front()
                              << "' matches no module";
    SmallVector<std::string> near =
        getNearestNames(unmatched.front(), moduleNames);
    if (!near.empty())
      diag << " (nearest: " << llvm::join(near, ", ") << ")";
    return diag;
  }
  for (auto &[name, u] : units)
    for (ParamOp param : u.params)
      unitOfParam[param] = &u;
  auto unitOfOp = [&](Operation *op) -> ShardUnit * {
    if (patterns.empty())
      return &units[""];
    // The layer name outlives the module name that points into it.
    std::string layer = getLayerName(op->getLoc());
    auto it = units.find(patterns.matchingModule(layer));
    return it == units.end() ? &units[""] : &it->second;
  };

  auto before = [](Operation *a, Operation *b) {
    return !b || (a && a->isBeforeInBlock(b));
  };
  auto isBackward = [](Operation *op) {
    StepPhase phase = getStepPhase(op);
    return phase == StepPhase::Backward || phase == StepPhase::Recompute;
  };

  // 2. Where each unit runs: forward ops using its parameters, backward ops
  // of its modules or using its parameters, and the ops finishing its
  // gradients (their post-backward waits for them).
  Operation *firstForwardOp = nullptr, *forwardEnd = nullptr,
            *firstBackwardOp = nullptr, *lastBackwardOp = nullptr;
  DenseMap<Value, Value> finalGrad; // param -> its full gradient
  for (Operation &op : body.without_terminator()) {
    if (isa<PersistentStorageOpInterface>(op))
      continue;
    if (auto update = dyn_cast<OptimizerStepOp>(op)) {
      for (auto [param, grad] :
           llvm::zip(update.getParams(), update.getGrads()))
        finalGrad[param] = grad;
      continue;
    }
    StepPhase phase = getStepPhase(&op);
    if (phase == StepPhase::Forward) {
      if (!firstForwardOp)
        firstForwardOp = &op;
      if (!forwardEnd && op.hasTrait<LossOpTrait>())
        forwardEnd = &op;
      if (!forwardEnd)
        unitOfOp(&op)->lastForward = &op;
    } else if (isBackward(&op)) {
      if (!forwardEnd)
        forwardEnd = &op;
      if (!firstBackwardOp)
        firstBackwardOp = &op;
      lastBackwardOp = &op;
      ShardUnit *u = unitOfOp(&op);
      if (!u->firstBackward)
        u->firstBackward = &op;
      u->lastBackward = &op;
    }
    for (Value operand : op.getOperands())
      if (auto param = operand.getDefiningOp<ParamOp>()) {
        ShardUnit *u = unitOfParam.lookup(param);
        if (phase == StepPhase::Forward && !u->firstForward)
          u->firstForward = &op;
        if (phase == StepPhase::Forward && !before(&op, u->lastForward))
          u->lastForward = &op;
        if (isBackward(&op) && before(&op, u->firstBackward))
          u->firstBackward = &op;
        if (isBackward(&op) && !before(&op, u->lastBackward))
          u->lastBackward = &op;
      }
  }
  if (!forwardEnd)
    forwardEnd = body.getTerminator();
  for (auto &[name, u] : units)
    for (ParamOp param : u.params)
      if (Value grad = finalGrad.lookup(param.getResult()))
        if (Operation *def = grad.getDefiningOp();
            def && !before(def, u.lastBackward))
          u.lastBackward = def;

  // 3. The shards: persistent, with their parameters at the top of the step
  // (a unit's gathers read all of its shards before its first op). Under a
  // MixedPrecisionPolicy the step computes in param_dtype (the parameters'
  // type) while the shards, their gradients and optimizer state stay fp32.
  int64_t ranks = fsdp;
  Type shardElement = mixedPrecision ? Builder(ctx).getF32Type() : Type();
  // reduce_dtype=None reduces in the promotion of the gradients'
  // accumulation dtypes, the shards' (torch 2.15, _get_reduce_dtype).
  auto reduceElementOf = [&](ParamOp param) -> Type {
    return reduceInParamDtype || !shardElement
               ? cast<RankedTensorType>(param.getType()).getElementType()
               : shardElement;
  };
  OpBuilder builder = OpBuilder::atBlockBegin(&body);
  DenseMap<Value, Value> shardOf;
  for (auto &[name, u] : units)
    for (ParamOp param : u.params) {
      auto type = cast<RankedTensorType>(param.getType());
      if (builder.getInsertionPoint() == body.end() ||
          &*builder.getInsertionPoint() != param.getOperation())
        param->moveBefore(&body, builder.getInsertionPoint());
      builder.setInsertionPointAfter(param);
      shardOf[param.getResult()] = ShardOp::create(
          builder, param.getLoc(), shardType(type, ranks, shardElement),
          param.getResult(), builder.getI64IntegerAttr(ranks));
      param->setAttr(NNDialect::kShardedAttrName, UnitAttr::get(ctx));
    }
  // A unit's padded shards, `factor` times, flat, in `element` (default:
  // the parameters').
  auto flatType = [&](const ShardUnit &u, int64_t factor, Type element = {}) {
    int64_t elements = 0;
    for (ParamOp param : u.params)
      elements += shardType(param.getType(), ranks).getNumElements();
    return RankedTensorType::get(
        {elements * factor},
        element ? element
                : cast<RankedTensorType>(ParamOp(u.params.front()).getType())
                      .getElementType());
  };
  auto phaseAttr = [&](StepPhase phase) {
    return StepPhaseAttr::get(ctx, phase);
  };
  // Copies a unit's parameters out of `flat` at the builder's point; the
  // unsharded parameters, each `ranks` padded shards, viewed at their size.
  auto unshardAt = [&](ShardUnit &u, Value flat, StepPhase phase,
                       Operation *&last, UnshardOp &made) {
    SmallVector<Type> padded;
    for (ParamOp param : u.params) {
      auto type = cast<RankedTensorType>(param.getType());
      SmallVector<int64_t> shape(type.getShape());
      shape[0] = shardType(type, ranks).getDimSize(0) * ranks;
      padded.push_back(RankedTensorType::get(shape, type.getElementType()));
    }
    auto unshard =
        UnshardOp::create(builder, u.params.front().getLoc(), padded, flat,
                          builder.getStringAttr(u.module), phaseAttr(phase));
    last = unshard;
    made = unshard;
    DenseMap<Value, Value> full;
    for (auto [param, gathered] : llvm::zip(u.params, unshard.getResults())) {
      Value value = gathered;
      int64_t rows = param.getType().getDimSize(0);
      if (cast<RankedTensorType>(gathered.getType()).getDimSize(0) != rows) {
        auto view =
            SliceOp::create(builder, param.getLoc(), gathered, 0, 0, rows, 1);
        if (phase != StepPhase::Forward)
          view->setAttr(NNDialect::kPhaseAttrName, phaseAttr(phase));
        value = view;
        last = view;
      }
      full[param.getResult()] = value;
    }
    return full;
  };
  auto gather = [&](ShardUnit &u, StepPhase phase) {
    SmallVector<Value> shards;
    for (ParamOp param : u.params)
      shards.push_back(shardOf.lookup(param.getResult()));
    return AllGatherOp::create(
               builder, u.params.front().getLoc(), flatType(u, ranks), shards,
               builder.getStringAttr(u.module), phaseAttr(phase),
               /*params=*/ArrayAttr())
        .getResult();
  };
  auto replaceUses = [&](const DenseMap<Value, Value> &full,
                         llvm::function_ref<bool(Operation *)> where) {
    for (auto [param, value] : full)
      param.replaceUsesWithIf(
          value, [&](OpOperand &use) { return where(use.getOwner()); });
  };

  // cast_forward_inputs: the root's pre-forward casts the floating-point
  // forward inputs (arguments a forward op other than the loss reads),
  // given in the shards' dtype, to param_dtype before its all-gather.
  if (mixedPrecision && firstForwardOp) {
    builder.setInsertionPoint(firstForwardOp);
    SmallVector<Type> argTypes(step.getArgumentTypes());
    for (BlockArgument arg : body.getArguments()) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type || !isa<FloatType>(type.getElementType()) ||
          type.getElementType() == shardElement ||
          llvm::none_of(arg.getUsers(), [&](Operation *user) {
            return getStepPhase(user) == StepPhase::Forward &&
                   !user->hasTrait<LossOpTrait>();
          }))
        continue;
      auto given = RankedTensorType::get(type.getShape(), shardElement);
      arg.setType(given);
      argTypes[arg.getArgNumber()] = given;
      auto castOp = CastOp::create(builder, step.getLoc(), type, arg);
      arg.replaceAllUsesExcept(castOp.getResult(), castOp);
    }
    step.setType(FunctionType::get(ctx, argTypes, step.getResultTypes()));
  }

  // The root keeps its gathered parameters for backward; so does every
  // unit without reshard_after_forward.
  auto keepsForBackward = [&](const ShardUnit *u) {
    return u->module.empty() || !reshardAfterForward;
  };

  // 4. Forward: the root's parameters first, then each unit's before its
  // first use; each flat buffer lives until the next copy-out.
  SmallVector<ShardUnit *> forwardOrder;
  for (auto &[name, u] : units)
    if (!u.params.empty() && (u.firstForward || name.empty()))
      forwardOrder.push_back(&u);
  llvm::stable_sort(forwardOrder, [&](ShardUnit *a, ShardUnit *b) {
    if (a->module.empty() != b->module.empty())
      return a->module.empty();
    return before(a->firstForward, b->firstForward);
  });
  Value previousFlat;
  for (ShardUnit *u : forwardOrder) {
    Operation *at = u->module.empty() ? firstForwardOp : u->firstForward;
    builder.setInsertionPoint(at ? at : forwardEnd);
    Value flat = gather(*u, StepPhase::Forward);
    if (previousFlat)
      ReleaseOp::create(builder, step.getLoc(), ValueRange{previousFlat},
                        phaseAttr(StepPhase::Forward));
    Operation *last = nullptr;
    auto full =
        unshardAt(*u, flat, StepPhase::Forward, last, u->forwardUnshard);
    // A unit that reshards after forward gathers again in backward.
    replaceUses(full, [&](Operation *op) {
      return !isa<PersistentStorageOpInterface>(op) &&
             (getStepPhase(op) == StepPhase::Forward ||
              (keepsForBackward(u) && isBackward(op)));
    });
    previousFlat = flat;
  }
  // post_forward reshards a unit (reshard_after_forward; never the root):
  // its gathered parameters are freed after its forward.
  for (ShardUnit *u : forwardOrder)
    if (!keepsForBackward(u) && u->lastForward) {
      builder.setInsertionPointAfter(u->lastForward);
      ReleaseOp::create(builder, step.getLoc(), u->forwardUnshard.getResults(),
                        phaseAttr(StepPhase::Forward));
    }
  if (previousFlat) {
    builder.setInsertionPoint(forwardEnd);
    ReleaseOp::create(builder, step.getLoc(), ValueRange{previousFlat},
                      phaseAttr(StepPhase::Forward));
  }

  // 5. Backward: units in the order their backward starts; each all-gather
  // is prefetched by the pre-backward before it (the root's, at the start
  // of backward, when the root has parameters).
  SmallVector<ShardUnit *> backwardOrder;
  for (auto &[name, u] : units)
    if (!keepsForBackward(&u) && !u.params.empty() && u.firstBackward)
      backwardOrder.push_back(&u);
  llvm::stable_sort(backwardOrder, [&](ShardUnit *a, ShardUnit *b) {
    return before(a->firstBackward, b->firstBackward);
  });
  bool rootPrefetches = !units[""].params.empty() && firstBackwardOp;
  // The root's pre-backward hook is on the forward's outputs: it runs once
  // their gradient exists, after the loss's backward.
  Operation *rootPrefetchAt = firstBackwardOp;
  while (rootPrefetchAt && rootPrefetchAt != body.getTerminator())
    if (auto backward = dyn_cast<BackwardOp>(rootPrefetchAt); backward && [&] {
          auto name =
              RegisteredOperationName::lookup(backward.getForwardOp(), ctx);
          return name && name->hasTrait<LossOpTrait>();
        }())
      rootPrefetchAt = rootPrefetchAt->getNextNode();
    else
      break;
  Operation *previousUnshard = nullptr;
  for (auto [i, u] : llvm::enumerate(backwardOrder)) {
    if (previousUnshard)
      builder.setInsertionPointAfter(previousUnshard);
    else
      builder.setInsertionPoint(rootPrefetches ? rootPrefetchAt
                                               : u->firstBackward);
    Value flat = gather(*u, StepPhase::Backward);
    builder.setInsertionPoint(u->firstBackward);
    auto full = unshardAt(*u, flat, StepPhase::Backward, previousUnshard,
                          u->backwardUnshard);
    replaceUses(full, [&](Operation *op) {
      return !isa<PersistentStorageOpInterface>(op) && isBackward(op) &&
             !before(op, u->firstBackward);
    });
  }

  // 6. Post-backward: each unit's gradients into one flat reduce-scatter
  // input, reduced into this rank's shards; the input is kept until the
  // next unit's reduce-scatter, the last until backward ends.
  // Every unit that ran backward has a post-backward: it frees the
  // gathered parameters (the root's, gathered in forward, at the end of
  // backward), then reduce-scatters the gradients it has.
  SmallVector<ShardUnit *> reduceOrder;
  for (auto &[name, u] : units) {
    bool hasGrads = llvm::any_of(
        u.params, [&](ParamOp p) { return finalGrad.count(p.getResult()); });
    if (name.empty() ? lastBackwardOp && !u.params.empty()
                     : (hasGrads || u.backwardUnshard ||
                        (keepsForBackward(&u) && u.forwardUnshard)))
      reduceOrder.push_back(&u);
  }
  for (ShardUnit *u : reduceOrder)
    if (u->module.empty() || !u->lastBackward)
      u->lastBackward = lastBackwardOp;
  llvm::erase_if(reduceOrder, [](ShardUnit *u) { return !u->lastBackward; });
  llvm::stable_sort(reduceOrder, [](ShardUnit *a, ShardUnit *b) {
    return a->lastBackward->isBeforeInBlock(b->lastBackward);
  });
  DenseMap<Value, Value> shardedGrad; // full gradient -> its shard
  Value previousInput;
  Operation *cursor = nullptr; // the last op this step inserted
  for (ShardUnit *u : reduceOrder) {
    Operation *after = u->lastBackward;
    if (cursor && !cursor->isBeforeInBlock(after))
      after = cursor;
    builder.setInsertionPointAfter(after);
    UnshardOp gathered =
        keepsForBackward(u) ? u->forwardUnshard : u->backwardUnshard;
    if (gathered)
      cursor = ReleaseOp::create(builder, step.getLoc(), gathered.getResults(),
                                 phaseAttr(StepPhase::Backward));
    SmallVector<Value> grads;
    SmallVector<ParamOp> trained;
    for (ParamOp param : u->params)
      if (Value grad = finalGrad.lookup(param.getResult())) {
        grads.push_back(grad);
        trained.push_back(param);
      }
    if (trained.empty())
      continue;
    if (previousInput)
      ReleaseOp::create(builder, step.getLoc(), ValueRange{previousInput},
                        phaseAttr(StepPhase::Backward));
    ShardUnit reduced;
    reduced.module = u->module;
    reduced.params = trained;
    // The gradients are copied into the input in reduce_dtype (upcast on
    // the way in), reduced, and, when the shards' dtype differs, the output
    // is cast into a new flat buffer of it (_cast_and_view_sharded_grads;
    // the reduce-scatter output is freed).
    auto input = ReduceScatterInputOp::create(
        builder, u->params.front().getLoc(),
        flatType(reduced, ranks, reduceElementOf(trained.front())), grads,
        builder.getStringAttr(u->module), phaseAttr(StepPhase::Backward));
    Value output = ReduceScatterOp::create(
        builder, u->params.front().getLoc(),
        flatType(reduced, 1, reduceElementOf(trained.front())), input,
        builder.getStringAttr(u->module), phaseAttr(StepPhase::Backward));
    Type gradElement =
        cast<RankedTensorType>(
            shardOf.lookup(trained.front().getResult()).getType())
            .getElementType();
    if (cast<RankedTensorType>(output.getType()).getElementType() !=
        gradElement) {
      output = CastOp::create(builder, u->params.front().getLoc(),
                              flatType(reduced, 1, gradElement), output);
      output.getDefiningOp()->setAttr(NNDialect::kPhaseAttrName,
                                      phaseAttr(StepPhase::Backward));
    }
    cursor = output.getDefiningOp();
    int64_t offset = 0;
    for (ParamOp param : trained) {
      RankedTensorType type = shardType(cast<RankedTensorType>(param.getType()),
                                        ranks, gradElement);
      Value view = SliceOp::create(builder, param.getLoc(), output, 0, offset,
                                   offset + type.getNumElements(), 1);
      view.getDefiningOp()->setAttr(NNDialect::kPhaseAttrName,
                                    phaseAttr(StepPhase::Backward));
      offset += type.getNumElements();
      if (type.getRank() != 1) {
        view = ReshapeOp::create(builder, param.getLoc(), type, view);
        view.getDefiningOp()->setAttr(NNDialect::kPhaseAttrName,
                                      phaseAttr(StepPhase::Backward));
      }
      cursor = view.getDefiningOp();
      shardedGrad[finalGrad.lookup(param.getResult())] = view;
    }
    previousInput = input;
  }
  if (previousInput) {
    builder.setInsertionPointAfter(cursor);
    ReleaseOp::create(builder, step.getLoc(), ValueRange{previousInput},
                      phaseAttr(StepPhase::Backward));
  }

  // 7. The optimizer updates this rank's shards with their gradients,
  // which zero_grad then drops.
  for (auto update :
       llvm::make_early_inc_range(body.getOps<OptimizerStepOp>())) {
    for (OpOperand &operand : update.getParamsMutable())
      operand.set(shardOf.lookup(operand.get()));
    for (OpOperand &operand : update.getGradsMutable())
      if (Value shard = shardedGrad.lookup(operand.get()))
        operand.set(shard);
  }
  for (auto release : body.getOps<ReleaseOp>())
    if (release->hasAttr(NNDialect::kZeroGradAttrName))
      for (OpOperand &operand : release.getBuffersMutable())
        if (Value shard = shardedGrad.lookup(operand.get()))
          operand.set(shard);
  for (auto state :
       llvm::make_early_inc_range(body.getOps<OptimizerStateOp>())) {
    Value shard = shardOf.lookup(state.getParam());
    if (!shard)
      continue;
    // An elementwise state, as the optimizer keeps it for the shard.
    auto config =
        step->getAttrOfType<OptimizerConfigAttr>(NNDialect::kOptimizerAttrName);
    SmallVector<OptimizerStateSlot> slots;
    if (config)
      getOptimizerStateSlots(config.getKind(),
                             cast<RankedTensorType>(shard.getType()), slots);
    const auto *slot = llvm::find_if(slots, [&](const OptimizerStateSlot &s) {
      return s.kind == state.getKind();
    });
    if (slot == slots.end())
      return state.emitError() << "no " << stringifyEnum(state.getKind())
                               << " state for the optimizer of this shard";
    builder.setInsertionPoint(state);
    auto sharded = OptimizerStateOp::create(builder, state.getLoc(), slot->type,
                                            state.getKindAttr(), shard);
    state.getResult().replaceAllUsesWith(sharded.getResult());
    state.erase();
  }
  return success();
}
