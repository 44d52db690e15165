//===- MemoryAnalysis.cpp - liveness-based memory of a step ---------------===//
//
// One pass over the body finds storage roots, last uses and categories; the
// events are then bucketed by op index (counting sort, linear), and one walk
// over the stream gives the live bytes per op.
//
//===----------------------------------------------------------------------===//

#include "vram/Analysis/MemoryAnalysis.h"
#include "vram/Dialect/NN/NNDialect.h"
#include "vram/Dialect/NN/NNOps.h"
#include "vram/Dialect/NN/TorchSemantics.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace vram;

MemoryAnalysis::MemoryAnalysis(Operation *op)
    : MemoryAnalysis(op, collectOps(op)) {}

MemoryAnalysis::MemoryAnalysis(Operation *op, ArrayRef<Operation *> nestedOps)
    : root(op) {
  if (mlir::failed(build(op, nestedOps))) {
    hasFailed = true;
    storages.clear();
    ops.clear();
  }
  buildEvents();
}

LogicalResult MemoryAnalysis::build(Operation *op,
                                    ArrayRef<Operation *> nestedOps) {
  auto func = dyn_cast<func::FuncOp>(op);
  if (!func || func.isExternal())
    return op->emitError("memory analysis needs a function with a body");
  if (!func.getBody().hasOneBlock())
    return func.emitError("memory analysis needs a single-block function");
  Block &body = func.getBody().front();
  bool persistentGrads = func->hasAttr(nn::NNDialect::kPersistentGradsAttrName);
  // DDP with gradient_as_bucket_view: .grad is a view into a gradient
  // bucket (nn.grad_bucket, persistent), not a tensor of its own.
  auto parallel =
      func->getAttrOfType<nn::ParallelAttr>(nn::NNDialect::kParallelAttrName);
  bool gradsInBuckets = parallel && parallel.getBucketView();
  nn::TorchTarget target = getTorchTarget(func);
  // cuDNN's workspaces (a CUDA convolution's, forward and backward) are an
  // assumption of the step, not a fact.
  auto isAssumedWorkspace = [&](Operation *op) {
    if (target.device != nn::Device::Cuda ||
        target.cudnnWorkspace == nn::CudnnWorkspace::None)
      return false;
    if (auto backward = dyn_cast<nn::BackwardOp>(op))
      return backward.getForwardOp() == nn::Conv2dOp::getOperationName();
    return isa<nn::Conv2dOp>(op);
  };

  // Sized once: on a step of a million ops, growing these (rehashing the
  // map) costs more than filling them.
  size_t numOps = nestedOps.size();
  ops.reserve(numOps);
  storages.reserve(numOps + body.getNumArguments());
  // Each value's storage and the index of the op that defines it (0: an
  // argument of the step).
  struct ValueInfo {
    unsigned storage, definedAt;
  };
  DenseMap<Value, ValueInfo> storageOf;
  storageOf.reserve(numOps + body.getNumArguments());
  auto addStorage = [&](Value v, Operation *owner, unsigned index,
                        unsigned definedAt, bool persistent) -> LogicalResult {
    std::optional<int64_t> bytes = getTensorBytes(v.getType());
    if (!bytes)
      return emitError(v.getLoc())
             << "tensor size of " << v.getType()
             << " is not static or does not fit in 64 bits";
    storageOf[v] = {static_cast<unsigned>(storages.size()), definedAt};
    Storage s;
    s.root = v;
    s.op = owner;
    s.bytes = *bytes;
    // A Python number lives on the host (nn.constant's wrapped_number).
    if (auto constant = dyn_cast_or_null<nn::ConstantOp>(owner);
        constant && constant.getWrappedNumber())
      s.bytes = nn::getWrappedNumberBytes(target);
    // A sharded parameter is held as its shards (nn.shard) and gathered
    // copies (nn.unshard), never whole; a ZeRO parameter is a view into the
    // flat buffer (nn.zero_flat_params).
    if (isa_and_nonnull<nn::ParamOp>(owner) &&
        (owner->hasAttr(nn::NNDialect::kShardedAttrName) ||
         owner->hasAttr(nn::NNDialect::kFlatParamAttrName)))
      s.bytes = 0;
    // A paged optimizer's state lives in CUDA unified memory, which the
    // caching allocator never sees: counted apart.
    if (auto state = dyn_cast_or_null<nn::OptimizerStateOp>(owner);
        state && state.getPaged()) {
      if (llvm::AddOverflow(pagedBytes, s.bytes, pagedBytes))
        return emitError(v.getLoc()) << "paged memory does not fit in 64 bits";
      s.bytes = 0;
    }
    s.def = s.lastUse = index;
    s.persistent = persistent;
    if (isa<BlockArgument>(v))
      s.category = MemoryCategory::Inputs;
    else if (auto p = dyn_cast<nn::PersistentStorageOpInterface>(owner))
      s.category = p.getMemoryCategory();
    else if (owner && owner->hasTrait<nn::KvCacheTrait>())
      s.category = MemoryCategory::KvCache;
    // FSDP's gathered copies of parameters are parameters while they live,
    // ZeRO's gradient buffers gradients.
    else if (isa_and_nonnull<nn::UnshardOp>(owner))
      s.category = MemoryCategory::Parameters;
    else if (isa_and_nonnull<nn::ZeroBufferOp>(owner))
      s.category = MemoryCategory::Gradients;
    storages.push_back(s);
    return success();
  };

  for (BlockArgument arg : body.getArguments())
    if (mlir::failed(addStorage(arg, nullptr, 0, 0, /*persistent=*/true)))
      return failure();

  // Each parameter's gradient as the optimizer reads it: its storage and the
  // index of the op that finishes it.
  std::vector<std::pair<unsigned, unsigned>> gradients;
  for (Operation *nested : nestedOps) {
    // An op inside another (walked first) or with regions of its own.
    Operation *ancestor = body.findAncestorOpInBlock(*nested);
    assert(ancestor && "nestedOps are the ops nested in the function");
    Operation &bodyOp = *ancestor;
    if (&bodyOp != nested || bodyOp.getNumRegions())
      return bodyOp.emitError("memory analysis does not support ops with "
                              "regions; the step must be a single block of "
                              "nn ops");
    ops.push_back(&bodyOp);
    unsigned index = ops.size();
    for (Value operand : bodyOp.getOperands())
      if (auto it = storageOf.find(operand); it != storageOf.end())
        storages[it->second.storage].lastUse =
            std::max(storages[it->second.storage].lastUse, index);
    bool persistent = isa<nn::PersistentStorageOpInterface>(bodyOp);
    auto aliasing = dyn_cast<nn::AliasingOpInterface>(bodyOp);
    for (OpResult result : bodyOp.getResults()) {
      Value aliased = aliasing
                          ? aliasing.getAliasedOperand(result.getResultNumber())
                          : Value();
      if (auto it = aliased ? storageOf.find(aliased) : storageOf.end();
          it != storageOf.end()) {
        storageOf[result] = {it->second.storage, index};
        continue;
      }
      if (mlir::failed(addStorage(result, &bodyOp, persistent ? 0 : index,
                                  index, persistent)))
        return failure();
    }
    if (auto ws = dyn_cast<nn::WorkspaceOpInterface>(bodyOp)) {
      SmallVector<int64_t> sizes;
      ws.getWorkspaceAllocations(target, sizes);
      for (int64_t bytes : sizes) {
        // Ops saturate their size arithmetic at INT64_MAX.
        if (bytes < 0 || bytes == INT64_MAX)
          return bodyOp.emitError("workspace size does not fit in 64 bits");
        if (bytes == 0)
          continue;
        Storage s;
        s.op = &bodyOp;
        s.bytes = bytes;
        s.def = s.lastUse = index;
        s.workspace = true;
        s.assumed = isAssumedWorkspace(&bodyOp);
        storages.push_back(s);
      }
    }
    // What the forward pass leaves for backward: tensors its backward nodes
    // keep, and the inputs of checkpointed segments, which the recomputation
    // reads. Tensors the recomputation itself makes are activations too, but
    // are not alive at the end of the forward pass.
    auto keptForBackward = [&](Value v, bool byModel) {
      Storage &s = storages[storageOf.lookup(v).storage];
      if (s.category == MemoryCategory::Temporaries)
        s.category = MemoryCategory::Activations;
      if (byModel && (!s.op || getStepPhase(s.op) == StepPhase::Forward)) {
        s.savedByModel = true;
        s.savedBy = &bodyOp;
      }
    };
    if (auto backward = dyn_cast<nn::BackwardOp>(bodyOp)) {
      auto forwardName = RegisteredOperationName::lookup(
          backward.getForwardOp(), bodyOp.getContext());
      bool isLoss = forwardName && forwardName->hasTrait<nn::LossOpTrait>();
      for (Value saved : backward.getSaved())
        keptForBackward(saved, !isLoss);
    } else if (getStepPhase(&bodyOp) == StepPhase::Recompute) {
      for (Value operand : bodyOp.getOperands())
        if (auto it = storageOf.find(operand);
            it != storageOf.end() && !storages[it->second.storage].persistent &&
            storages[it->second.storage].op &&
            getStepPhase(storages[it->second.storage].op) == StepPhase::Forward)
          keptForBackward(operand, /*byModel=*/true);
    }
    // A persistent parameter's storage the step frees (ZeRO-3 frees its
    // persistent parameters before the optimizer step and gathers them
    // again after it).
    if (auto release = dyn_cast<nn::ReleaseOp>(bodyOp))
      for (Value buffer : release.getBuffers())
        if (auto it = storageOf.find(buffer); it != storageOf.end()) {
          Storage &s = storages[it->second.storage];
          if (s.persistent && isa_and_nonnull<nn::ParamOp>(s.op) &&
              !s.releasedAt)
            s.releasedAt = index;
        }
    if (auto update = dyn_cast<nn::OptimizerStepOp>(bodyOp))
      for (Value grad : update.getGrads()) {
        ValueInfo info = storageOf.lookup(grad);
        gradients.push_back({info.storage, info.definedAt});
      }
  }
  // A parameter's gradient is a gradient even when something also saved it.
  for (auto [g, finished] : gradients) {
    Storage &s = storages[g];
    if (s.category == MemoryCategory::Temporaries ||
        s.category == MemoryCategory::Activations)
      s.category = MemoryCategory::Gradients;
    if (!persistentGrads && !gradsInBuckets)
      continue;
    // .grad kept across steps (zero_grad(set_to_none=False)) or
    // micro-batches (gradient accumulation) is allocated before the step,
    // as is a DDP bucket that .grad views. What backward computes is still
    // a new tensor: AccumulateGrad adds it into .grad in place (DDP's
    // reducer copies it into the bucket) and drops it once the parameter's
    // gradient is complete (torch/csrc/autograd/functions/accumulate_grad.h).
    if (finished)
      s.lastUse = std::max(s.def, finished);
    if (gradsInBuckets)
      continue;
    Storage kept = s;
    kept.def = 0;
    kept.lastUse = 0;
    kept.persistent = true;
    kept.savedByModel = false;
    storages.push_back(kept);
  }
  // Values returned by the step outlive it.
  unsigned exit = ops.size() + 1;
  if (!body.empty() && body.back().hasTrait<OpTrait::IsTerminator>())
    for (Value v : body.back().getOperands())
      if (auto it = storageOf.find(v); it != storageOf.end())
        storages[it->second.storage].lastUse = exit;
  for (const Storage &s : storages) {
    if (s.persistent &&
        llvm::AddOverflow(persistentBytes, s.bytes, persistentBytes))
      return func.emitError("persistent memory does not fit in 64 bits");
    // A training forward's DynamicCache copies are what attention saves.
    bool modelOwned = s.category == MemoryCategory::Activations ||
                      s.category == MemoryCategory::Temporaries ||
                      s.category == MemoryCategory::Gradients ||
                      s.category == MemoryCategory::KvCache;
    if (s.savedByModel && modelOwned &&
        llvm::AddOverflow(savedForBackwardBytes, s.bytes,
                          savedForBackwardBytes))
      return func.emitError("saved-for-backward memory does not fit in 64 "
                            "bits");
  }
  return success();
}

void MemoryAnalysis::buildEvents() {
  unsigned numIndices = ops.size() + 2; // entry, ops, exit
  // Count, then place: allocs of an op before its frees; within a group in
  // storage order, which is definition order.
  std::vector<unsigned> allocCount(numIndices), freeCount(numIndices);
  unsigned exit = numIndices - 1;
  for (const Storage &s : storages) {
    ++allocCount[s.def];
    if (!s.persistent)
      ++freeCount[s.lastUse];
    // Freed in the step, allocated again at its exit.
    if (s.persistent && s.releasedAt) {
      ++freeCount[s.releasedAt];
      ++allocCount[exit];
    }
  }
  eventRanges.assign(numIndices, {0, 0, 0});
  unsigned next = 0;
  for (unsigned i = 0; i < numIndices; ++i) {
    eventRanges[i] = {next, next + allocCount[i],
                      next + allocCount[i] + freeCount[i]};
    next = eventRanges[i][2];
  }
  events.resize(next);
  std::vector<unsigned> allocPos(numIndices), freePos(numIndices);
  for (unsigned i = 0; i < numIndices; ++i) {
    allocPos[i] = eventRanges[i][0];
    freePos[i] = eventRanges[i][1];
  }
  for (auto [i, s] : llvm::enumerate(storages)) {
    events[allocPos[s.def]++] = {MemoryEvent::Kind::Alloc, (unsigned)i, s.def};
    if (!s.persistent)
      events[freePos[s.lastUse]++] = {MemoryEvent::Kind::Free, (unsigned)i,
                                      s.lastUse};
    if (s.persistent && s.releasedAt) {
      events[freePos[s.releasedAt]++] = {MemoryEvent::Kind::Free, (unsigned)i,
                                         s.releasedAt};
      events[allocPos[exit]++] = {MemoryEvent::Kind::Alloc, (unsigned)i, exit};
    }
  }

  // The exact allocator over the stream. Sums of storages that each fit in
  // 64 bits can still overflow: saturate and fail.
  liveAt.assign(numIndices, 0);
  int64_t live = 0;
  for (unsigned i = 0; i < numIndices; ++i) {
    for (const MemoryEvent &e : getAllocEvents(i))
      if (llvm::AddOverflow(live, storages[e.storage].bytes, live)) {
        if (!hasFailed)
          emitError(getOp(i) ? getOp(i)->getLoc() : root->getLoc())
              << "live memory does not fit in 64 bits";
        hasFailed = true;
        live = INT64_MAX;
      }
    liveAt[i] = live;
    if (live > liveAt[peakIndex])
      peakIndex = i;
    for (const MemoryEvent &e : getFreeEvents(i))
      live -= storages[e.storage].bytes;
  }
}

ArrayRef<MemoryEvent> MemoryAnalysis::getAllocEvents(unsigned i) const {
  return ArrayRef<MemoryEvent>(events).slice(
      eventRanges[i][0], eventRanges[i][1] - eventRanges[i][0]);
}

ArrayRef<MemoryEvent> MemoryAnalysis::getFreeEvents(unsigned i) const {
  return ArrayRef<MemoryEvent>(events).slice(
      eventRanges[i][1], eventRanges[i][2] - eventRanges[i][1]);
}

std::vector<unsigned> MemoryAnalysis::getLiveStorages(unsigned index) const {
  std::vector<unsigned> live;
  for (auto [i, s] : llvm::enumerate(storages))
    if (s.persistent
            ? !s.releasedAt || index < s.releasedAt || index == getNumOps() + 1
            : s.def <= index && s.lastUse >= index)
      live.push_back(i);
  return live;
}

CategoryBytes MemoryAnalysis::getBreakdown(unsigned index) const {
  CategoryBytes bytes = {};
  for (unsigned i : getLiveStorages(index))
    bytes[static_cast<unsigned>(storages[i].category)] += storages[i].bytes;
  return bytes;
}

std::vector<unsigned> MemoryAnalysis::getTopStoragesAtPeak(unsigned k) const {
  std::vector<unsigned> live = getLiveStorages(peakIndex);
  unsigned keep = std::min<size_t>(k, live.size());
  std::partial_sort(live.begin(), live.begin() + keep, live.end(),
                    [&](unsigned a, unsigned b) {
                      if (storages[a].bytes != storages[b].bytes)
                        return storages[a].bytes > storages[b].bytes;
                      return a < b;
                    });
  live.resize(keep);
  return live;
}

/// `%name`-free description of a storage for the test printer: the op that
/// allocates it and its type, or the argument number.
static void printStorage(raw_ostream &os, const Storage &s, unsigned index) {
  os << "#" << index << " " << s.bytes << " " << stringifyEnum(s.category);
  if (s.workspace) {
    os << " workspace of " << s.op->getName();
    return;
  }
  if (auto arg = dyn_cast<BlockArgument>(s.root)) {
    os << " arg" << arg.getArgNumber();
  } else if (auto p = dyn_cast<nn::PersistentStorageOpInterface>(s.op)) {
    os << " \"" << p.getStorageName() << "\"";
  } else {
    os << " " << s.op->getName();
    if (s.op->getNumResults() > 1)
      os << "#" << cast<OpResult>(s.root).getResultNumber();
  }
  os << " " << s.root.getType();
}

void MemoryAnalysis::print(raw_ostream &os) const {
  os << "memory";
  if (auto func = dyn_cast<func::FuncOp>(root))
    os << " of @" << func.getSymName();
  if (hasFailed) {
    os << ": failed\n";
    return;
  }
  os << llvm::formatv(": {0} ops, {1} storages, {2} events\n", ops.size(),
                      storages.size(), events.size());
  auto printEvents = [&](unsigned i) {
    for (const MemoryEvent &e : getAllocEvents(i)) {
      os << "  alloc ";
      printStorage(os, storages[e.storage], e.storage);
      os << "\n";
    }
    if (i > 0 && i <= ops.size())
      os << "  live " << liveAt[i] << "\n";
    for (const MemoryEvent &e : getFreeEvents(i))
      os << "  free #" << e.storage << "\n";
  };
  os << "entry:\n";
  printEvents(0);
  os << "  live " << liveAt[0] << "\n";
  for (unsigned i = 1; i <= ops.size(); ++i) {
    os << "[" << i << "] " << ops[i - 1]->getName() << " ("
       << stringifyEnum(getStepPhase(ops[i - 1])) << "):\n";
    printEvents(i);
  }
  os << "exit:\n";
  printEvents(ops.size() + 1);
  os << "peak " << getPeakBytes() << " at [" << peakIndex << "]";
  if (Operation *op = getPeakOp())
    os << " " << op->getName();
  os << "\n";
  CategoryBytes breakdown = getBreakdown(peakIndex);
  os << "  at peak:";
  for (unsigned c = 0; c < kNumMemoryCategories; ++c)
    os << " " << stringifyEnum(static_cast<MemoryCategory>(c)) << "="
       << breakdown[c];
  os << "\n";
  os << "persistent " << persistentBytes << "\n";
  os << "saved for backward " << savedForBackwardBytes << "\n";
  if (pagedBytes)
    os << "paged (outside the allocator) " << pagedBytes << "\n";
}
