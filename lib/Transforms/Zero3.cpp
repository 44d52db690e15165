//===- Zero3.cpp - one rank's step under DeepSpeed ZeRO-3 -----------------===//
//
// DeepSpeedZeroOptimizer_Stage3 (deepspeed/runtime/zero/stage3.py, 0.19)
// with a client torch optimizer, no offload, a model built before
// deepspeed.initialize, in the steady state (the third step on: the
// parameter coordinator replays the trace it recorded). The reading of the
// sources this follows, with file and line references, and the measured
// cases are in benchmarks/accuracy/notes/zero3-deepspeed-0.19.8.md.
//
// Every parameter, frozen ones too, is partitioned: each rank keeps
// ceil(n / ranks) elements of it (the trainable ones flattened into one
// buffer per sub-group of sub_group_size elements, `lp_param_buffer`), plus
// per sub-group an fp32 copy that the optimizer updates, and from
// initialization on a buffer of every gradient's partition and the
// reduce_bucket_size gradient buffer (`ipg_buffer`). Parameters of at most
// stage3_param_persistence_threshold elements stay gathered as well.
//
// Forward and backward: every module's pre-forward and pre-backward hook
// fetches the parameters it uses, its post-forward and post-backward hook
// releases them. A fetch all-gathers the module's parameters that are not
// gathered, waits for those in flight, then prefetches: it pops the trace
// of parameter uses until it has prefetch_bucket_size elements (at most
// stage3_max_live_parameters gathered in all) and all-gathers them as one
// handle. A handle of several parameters is one flat buffer; waiting for
// any of them copies all of them out (torch.cat of their partitions), and
// the flat buffer is freed once every one of them was waited for. A handle
// of one parameter is its gathered storage. A release frees a parameter
// unless the trace's prefetch already popped a later use of it, or it is
// used again within stage3_max_reuse_distance elements of fetches; modules
// whose inputs need no gradient run no post-backward hook, so theirs are
// freed after backward. On a small model the root's fetch prefetches all
// of it at the start of forward, and it stays gathered until backward.
//
// DeepSpeed replaces F.linear with LinearFunctionForZeroStage3
// (memory_efficient_linear, the default), which saves its input whether or
// not the weight needs a gradient: a frozen linear layer keeps its input for
// backward (LoRA's base layers).
//
// Gradients: as each is finished it is copied into the ipg buffer (and
// dropped) unless it does not fit; before a gradient that would overflow
// the buffer, and after backward, the buffer's gradients are
// reduce-scattered (reduce_scatter_coalesced: one new flat buffer of the
// bucket's gradients padded to a multiple of ranks, unless the bucket is
// one gradient whose size ranks divides) into the gradient partitions.
//
// Step: the persistent parameters are freed (and gathered again after the
// step); the global norm converts each parameter's gradient partition to
// float64 in turn; per sub-group the gradient partitions are flattened
// (a view for a single parameter), cast to fp32 when they are not, and
// the optimizer steps the fp32 partition.
//
// Inference (deepspeed.initialize without an optimizer: DeepSpeedZeRoOffload
// alone) keeps the partitions and the persistent parameters, no gradient
// buffers, and gathers and releases by the same rules in forward.
//
// Modules are the step's layer names (the ops' locations), nested by
// their dotted prefixes; a module's fetch takes its own parameters (by
// name) and any other its ops read. Measured against DeepSpeed 0.19.8 on
// torch 2.15 with gloo on the CPU: benchmarks/accuracy/zero.py.
//
//===----------------------------------------------------------------------===//

#include "vram/Transforms/Zero.h"

#include "vram/Analysis/StepInfo.h"
#include "vram/Dialect/NN/NNDialect.h"
#include "vram/Dialect/NN/NNOps.h"
#include "vram/Transforms/ModulePatterns.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace vram;
using namespace vram::nn;

namespace {

enum class Gathered { No, InFlight, Yes };

/// A parameter of the partitioned model.
struct Zero3Param {
  ParamOp op;
  int64_t elements = 0, partition = 0;
  bool persistent = false;
  /// The buffer holding this rank's partition.
  Value partitionStorage;
  /// Trainable: the gradient the optimizer read and the op finishing it.
  Value grad;
  int64_t trainableIndex = -1;
  /// The fetches (trace steps) that use it, in order.
  std::vector<int64_t> uses;

  // The coordinator's state for it.
  Gathered gathered = Gathered::No;
  int handle = -1;
  /// The gathered value the step computes with, and its storage.
  Value current, storage;
  unsigned activeModules = 0;
  int64_t latestPopped = INT64_MIN;
};

/// An all-gather in flight: a flat buffer of one or several parameters.
struct Handle {
  Value flat;
  SmallVector<unsigned> params;
  unsigned waiting = 0;
  bool copiedOut = false;
};

/// One call of a module's hook.
struct ModuleCall {
  enum Kind { Fetch, Release } kind;
  std::string module;
  /// Fetch: the parameters the module's own ops read in this call.
  SmallVector<unsigned> params;
  /// Release: the call of `calls` whose fetch it ends.
  int64_t fetch = -1;
  StepPhase phase;
};

int64_t saturatingAdd(int64_t a, int64_t b) {
  int64_t sum;
  return llvm::AddOverflow(a, b, sum) ? INT64_MAX : sum;
}

/// The dotted prefixes of a layer name, the root "" first. A name with a
/// colon (file:line of a plain .mlir input) is one module.
SmallVector<std::string> moduleChain(StringRef layer) {
  SmallVector<std::string> chain = {""};
  if (layer.empty())
    return chain;
  if (!layer.contains(':'))
    for (size_t dot = layer.find('.'); dot != StringRef::npos;
         dot = layer.find('.', dot + 1))
      chain.push_back(layer.take_front(dot).str());
  chain.push_back(layer.str());
  return chain;
}

class Zero3Rewriter {
public:
  Zero3Rewriter(func::FuncOp step, const Zero3Layout &layout)
      : step(step), layout(layout), builder(step.getContext()),
        training(getStepMode(step) == StepMode::Train) {}

  LogicalResult run();

private:
  void saveLinearInputs();
  LogicalResult collectParams();
  void addPartitions();
  LogicalResult traceModules();
  LogicalResult rewrite();
  LogicalResult rewriteOptimizer();

  // The coordinator.
  void fetch(const ModuleCall &call, int64_t traceStep);
  void release(const ModuleCall &call, int64_t traceStep);
  void gather(ArrayRef<unsigned> params, StringRef module, StepPhase phase);
  void wait(unsigned p, StringRef module, StepPhase phase);
  void free(unsigned p, StepPhase phase);
  bool reusedSoon(const Zero3Param &p, int64_t traceStep) const;

  // The gradients.
  void gradientReady(unsigned p);
  void reduceBucket();

  StepPhaseAttr phaseAttr(StepPhase p) {
    return StepPhaseAttr::get(step.getContext(), p);
  }
  Location loc() { return step.getLoc(); }
  /// Where a module's hook runs: the module, as the front ends name layers.
  Location moduleLoc(StringRef module) {
    if (module.empty())
      return loc();
    return NameLoc::get(builder.getStringAttr(module), loc());
  }

  func::FuncOp step;
  const Zero3Layout &layout;
  OpBuilder builder;
  /// A training step; else inference (no gradients, no optimizer).
  bool training;
  Type element;
  std::vector<Zero3Param> params;
  DenseMap<Value, unsigned> paramOf;
  SmallVector<unsigned> trainable;
  /// Per sub-group: its trainable parameters and their flat partitions.
  SmallVector<SmallVector<unsigned>> subGroups;
  SmallVector<Value> subGroupFlats;
  Value gradPartitions;
  std::vector<Operation *> ops;
  /// The hooks' calls, and those that run before ops[i] (releases first,
  /// then fetches).
  std::vector<ModuleCall> calls;
  std::vector<SmallVector<unsigned, 2>> callsBefore;
  /// Elements fetched before each trace step (prefix sums), for the reuse
  /// distance.
  std::vector<int64_t> fetchedBefore;
  /// The trace of parameter uses (parameter, trace step) and its head.
  std::vector<std::pair<unsigned, int64_t>> queue;
  size_t queueHead = 0;
  int64_t available = 0;
  std::vector<Handle> handles;
  /// The parameters whose gradient each op finishes, and the last op of
  /// backward (of the forward in inference): after it the last bucket is
  /// reduced and what stays gathered is freed.
  DenseMap<Operation *, SmallVector<unsigned>> readyAfter;
  size_t lastBackward = 0;
  // The ipg bucket.
  SmallVector<unsigned> bucket;
  SmallVector<Value> pendingGrads;
  int64_t bucketElements = 0;
};

} // namespace

LogicalResult Zero3Rewriter::collectParams() {
  Block &body = step.getBody().front();
  SmallVector<OptimizerStepOp> updates(body.getOps<OptimizerStepOp>());
  if (training && updates.empty())
    return step.emitError() << "ZeRO needs a training step with an optimizer";
  int64_t gatheredTotal = 0;
  // bitsandbytes' packed weights are not nn.param: ZeRO-3 would partition
  // them too (quant_storage), which is not modelled.
  if (auto packed = body.getOps<QuantizedWeightOp>(); !packed.empty())
    return (*packed.begin()).emitError()
           << "ZeRO-3 with 4-bit quantized weights is not modelled yet";
  if (!updates.empty() && failed(checkZeroOptimizer(updates.front())))
    return failure();
  for (ParamOp param : body.getOps<ParamOp>()) {
    if (failed(checkZeroParamType(param, element)))
      return failure();
    auto type = cast<RankedTensorType>(param.getType());
    Zero3Param p;
    p.op = param;
    p.elements = type.getNumElements();
    if (p.elements == 0)
      return param.emitError() << "ZeRO-3: an empty parameter is not modelled";
    p.partition = llvm::divideCeil(p.elements, layout.ranks);
    p.persistent = p.elements <= layout.persistenceThreshold;
    // Every sum below (partitions, gathers, buckets) is at most this.
    int64_t gathered;
    if (llvm::MulOverflow(p.partition, layout.ranks, gathered) ||
        llvm::AddOverflow(gatheredTotal, gathered, gatheredTotal))
      return param.emitError()
             << "ZeRO-3: the partitioned parameters' elements do not fit in "
                "64 bits";
    paramOf[param.getResult()] = params.size();
    params.push_back(p);
  }
  for (OptimizerStepOp update : updates)
    for (auto [param, grad] :
         llvm::zip(update.getParams(), update.getGrads())) {
      auto it = paramOf.find(param);
      if (it == paramOf.end())
        return update.emitError() << "ZeRO partitions nn.param parameters; "
                                     "this update's parameter is not one";
      Zero3Param &p = params[it->second];
      if (p.trainableIndex >= 0)
        continue;
      p.grad = grad;
      p.trainableIndex = trainable.size();
      trainable.push_back(it->second);
      if (!grad.getDefiningOp())
        return p.op.emitError() << "ZeRO: no op finishes this gradient";
    }
  if (training && trainable.empty())
    return step.emitError() << "ZeRO needs trainable parameters";
  if (params.empty())
    return step.emitError() << "ZeRO-3 needs parameters to partition";
  return success();
}

void Zero3Rewriter::addPartitions() {
  MLIRContext *ctx = step.getContext();
  // The parameters first (they have no operands), then their partitions:
  // the first fetch reads them before the first forward op.
  Block &body = step.getBody().front();
  Operation *lastParam = nullptr;
  for (Zero3Param &p : params) {
    if (lastParam)
      p.op->moveAfter(lastParam);
    else
      p.op->moveBefore(&body, body.begin());
    lastParam = p.op;
  }
  builder.setInsertionPointAfter(lastParam);
  auto ranks = builder.getI64IntegerAttr(layout.ranks);
  auto flatten = [&](ArrayRef<unsigned> members) {
    SmallVector<Value> values;
    int64_t elements = 0;
    for (unsigned i : members) {
      values.push_back(params[i].op.getResult());
      elements += params[i].partition;
    }
    auto flat = ZeroFlatParamsOp::create(
        builder, loc(), RankedTensorType::get({elements}, element), values);
    flat.setRanksAttr(ranks);
    for (unsigned i : members)
      params[i].partitionStorage = flat;
    return flat.getResult();
  };
  // Sub-groups close once they reach sub_group_size elements.
  int64_t open = 0;
  for (unsigned i : trainable) {
    if (subGroups.empty() || open >= layout.subGroupSize) {
      subGroups.emplace_back();
      open = 0;
    }
    subGroups.back().push_back(i);
    open += params[i].partition;
  }
  for (auto &group : subGroups)
    subGroupFlats.push_back(flatten(group));
  for (auto [i, p] : llvm::enumerate(params))
    if (p.trainableIndex < 0)
      flatten({static_cast<unsigned>(i)});
  // A gathered parameter lives in its gathered copies; a persistent one
  // stays gathered in its own storage.
  for (Zero3Param &p : params)
    if (!p.persistent)
      p.op->setAttr(NNDialect::kFlatParamAttrName, UnitAttr::get(ctx));

  // Inference (DeepSpeedZeRoOffload alone) keeps no gradient buffers.
  if (!training)
    return;
  int64_t partitionElements = 0;
  SmallVector<Attribute> names;
  for (unsigned i : trainable) {
    partitionElements += params[i].partition;
    names.push_back(params[i].op.getNameAttr());
  }
  gradPartitions = GradBucketOp::create(
      builder, loc(), RankedTensorType::get({partitionElements}, element),
      builder.getStringAttr("zero.grad_partitions"),
      builder.getArrayAttr(names));
  // The ipg buffer: persistent, the reductions' bucket.
  GradBucketOp::create(
      builder, loc(), RankedTensorType::get({layout.reduceBucket}, element),
      builder.getStringAttr("zero.ipg_buffer"), builder.getArrayAttr(names));
}

LogicalResult Zero3Rewriter::traceModules() {
  Block &body = step.getBody().front();
  for (Operation &op : body)
    ops.push_back(&op);
  callsBefore.assign(ops.size() + 1, {});
  auto isBackward = [](Operation *op) {
    StepPhase phase = getStepPhase(op);
    return phase == StepPhase::Backward || phase == StepPhase::Recompute;
  };
  auto computes = [](Operation *op) {
    return !isa<PersistentStorageOpInterface, OptimizerStepOp>(op) &&
           !op->hasTrait<OpTrait::IsTerminator>();
  };
  DenseMap<Operation *, size_t> indexOf;
  for (auto [i, op] : llvm::enumerate(ops))
    indexOf[op] = i;

  // Values that need a gradient: the trainable parameters and what forward
  // computes from them. A module none of whose inputs needs one runs no
  // post-backward hook.
  DenseSet<Value> needsGrad;
  for (unsigned i : trainable)
    needsGrad.insert(params[i].op.getResult());
  llvm::StringSet<> inputsNeedGrad;

  // A module's hooks fetch its own parameters (DeepSpeed's
  // iter_params(recurse=False)), whether or not its ops read them (a first
  // layer's backward needs no weight), and any other its ops read (tied
  // weights).
  llvm::StringMap<SmallVector<unsigned>> directParams;
  for (auto [i, p] : llvm::enumerate(params))
    directParams[moduleOfParameter(p.op.getName())].push_back(i);

  // One walk per direction over the ops computing in it: a module's hooks
  // run before the first op of it (or of a module inside it) and after the
  // last one.
  struct Open {
    std::string module;
    size_t first;
    unsigned fetch;
    bool inputsNeedGrad = false;
  };
  auto walk = [&](bool backward) {
    SmallVector<Open> stack;
    size_t previous = 0;
    StepPhase phase = backward ? StepPhase::Backward : StepPhase::Forward;
    auto close = [&](size_t keep) {
      while (stack.size() > keep) {
        Open top = stack.pop_back_val();
        if (!backward && top.inputsNeedGrad)
          inputsNeedGrad.insert(top.module);
        if (backward && !inputsNeedGrad.contains(top.module))
          continue;
        callsBefore[previous + 1].push_back(calls.size());
        calls.push_back(
            {ModuleCall::Release, top.module, {}, top.fetch, phase});
      }
    };
    for (auto [i, op] : llvm::enumerate(ops)) {
      if (!computes(op) || isBackward(op) != backward ||
          (!backward && getStepPhase(op) != StepPhase::Forward))
        continue;
      SmallVector<std::string> chain = moduleChain(getLayerName(op->getLoc()));
      size_t common = 0;
      while (common < stack.size() && common < chain.size() &&
             stack[common].module == chain[common])
        ++common;
      close(common);
      for (size_t k = common; k < chain.size(); ++k) {
        stack.push_back({chain[k], i, static_cast<unsigned>(calls.size())});
        callsBefore[i].push_back(calls.size());
        calls.push_back({ModuleCall::Fetch, chain[k],
                         directParams.lookup(chain[k]), -1, phase});
      }
      for (Value operand : op->getOperands()) {
        if (auto it = paramOf.find(operand); it != paramOf.end()) {
          calls[stack.back().fetch].params.push_back(it->second);
          continue;
        }
        if (backward || !needsGrad.contains(operand))
          continue;
        // An input of every open module it was computed before.
        Operation *def = operand.getDefiningOp();
        for (Open &open : stack)
          if (!def || indexOf.lookup(def) < open.first)
            open.inputsNeedGrad = true;
      }
      if (!backward && llvm::any_of(op->getOperands(), [&](Value v) {
            return needsGrad.contains(v);
          }))
        for (Value result : op->getResults())
          needsGrad.insert(result);
      previous = i;
    }
    close(0);
  };
  walk(/*backward=*/false);
  walk(/*backward=*/true);

  // The trace: the fetches in the order they run (trace steps), with the
  // parameters each uses in parameter order.
  int64_t traceStep = 0, fetched = 0;
  for (auto &slot : callsBefore)
    for (unsigned c : slot) {
      ModuleCall &call = calls[c];
      if (call.kind != ModuleCall::Fetch)
        continue;
      llvm::sort(call.params);
      call.params.erase(llvm::unique(call.params), call.params.end());
      fetchedBefore.push_back(fetched);
      for (unsigned p : call.params) {
        queue.push_back({p, traceStep});
        params[p].uses.push_back(traceStep);
        fetched = saturatingAdd(fetched, params[p].elements);
      }
      ++traceStep;
    }
  fetchedBefore.push_back(fetched);

  // Where each gradient is finished, and where backward ends.
  for (Zero3Param &p : params)
    if (p.trainableIndex >= 0) {
      Operation *ready = p.grad.getDefiningOp();
      readyAfter[ready].push_back(&p - params.data());
      lastBackward = std::max(lastBackward, indexOf.lookup(ready));
    }
  for (auto [i, op] : llvm::enumerate(ops))
    if (isBackward(op) || (!training && computes(op)))
      lastBackward = std::max(lastBackward, i);
  // Of one op's gradients the hooks run the later parameter's first (a
  // linear layer's bias before its weight, measured for ZeRO-2).
  for (auto &entry : readyAfter)
    llvm::sort(entry.second, std::greater<unsigned>());
  return success();
}

void Zero3Rewriter::gather(ArrayRef<unsigned> members, StringRef module,
                           StepPhase phase) {
  SmallVector<unsigned> sorted(members);
  llvm::sort(sorted);
  int64_t elements = 0;
  SmallVector<Value> shards;
  for (unsigned i : sorted) {
    Zero3Param &p = params[i];
    elements += p.partition * layout.ranks;
    if (!llvm::is_contained(shards, p.partitionStorage))
      shards.push_back(p.partitionStorage);
    available += p.elements;
  }
  SmallVector<Attribute> names;
  for (unsigned i : sorted)
    names.push_back(params[i].op.getNameAttr());
  Value flat = AllGatherOp::create(
      builder, moduleLoc(module), RankedTensorType::get({elements}, element),
      shards, builder.getStringAttr(module), phaseAttr(phase),
      builder.getArrayAttr(names));
  Handle handle;
  handle.flat = flat;
  handle.params = sorted;
  handle.waiting = sorted.size();
  // One parameter is gathered into its own (aligned) storage, viewed at
  // its size.
  if (sorted.size() == 1) {
    Zero3Param &p = params[sorted.front()];
    Value view =
        SliceOp::create(builder, moduleLoc(module), flat, 0, 0, p.elements, 1);
    auto type = cast<RankedTensorType>(p.op.getType());
    if (type.getRank() != 1)
      view = ReshapeOp::create(builder, moduleLoc(module), type, view);
    if (phase != StepPhase::Forward)
      for (Operation *op = view.getDefiningOp(); op;
           op = op->getNumOperands() ? op->getOperand(0).getDefiningOp()
                                     : nullptr) {
        if (op == flat.getDefiningOp())
          break;
        op->setAttr(NNDialect::kPhaseAttrName, phaseAttr(phase));
      }
    p.current = view;
    p.storage = flat;
    handle.copiedOut = true;
  }
  for (unsigned i : sorted) {
    params[i].gathered = Gathered::InFlight;
    params[i].handle = handles.size();
  }
  handles.push_back(handle);
}

void Zero3Rewriter::wait(unsigned i, StringRef module, StepPhase phase) {
  Zero3Param &p = params[i];
  if (p.gathered != Gathered::InFlight)
    return;
  Handle &handle = handles[p.handle];
  // Waiting for a handle of several parameters copies all of them out.
  if (!handle.copiedOut) {
    SmallVector<Type> types;
    for (unsigned member : handle.params)
      types.push_back(params[member].op.getType());
    auto copies =
        UnshardOp::create(builder, moduleLoc(module), types, handle.flat,
                          builder.getStringAttr(module), phaseAttr(phase));
    for (auto [member, copy] : llvm::zip(handle.params, copies.getResults())) {
      params[member].current = copy;
      params[member].storage = copy;
    }
    handle.copiedOut = true;
  }
  p.gathered = Gathered::Yes;
  if (--handle.waiting == 0 && handle.params.size() > 1)
    ReleaseOp::create(builder, loc(), ValueRange{handle.flat},
                      phaseAttr(phase));
}

void Zero3Rewriter::free(unsigned i, StepPhase phase) {
  Zero3Param &p = params[i];
  ReleaseOp::create(builder, loc(), ValueRange{p.storage}, phaseAttr(phase));
  p.gathered = Gathered::No;
  p.current = p.storage = Value();
  available -= p.elements;
}

void Zero3Rewriter::fetch(const ModuleCall &call, int64_t traceStep) {
  SmallVector<unsigned> missing;
  for (unsigned i : call.params)
    if (!params[i].persistent && params[i].gathered == Gathered::No)
      missing.push_back(i);
  if (!missing.empty())
    gather(missing, call.module, call.phase);
  for (unsigned i : call.params)
    if (!params[i].persistent) {
      ++params[i].activeModules;
      wait(i, call.module, call.phase);
    }
  // Pop this module's uses off the trace (unless a prefetch did), then
  // prefetch the next ones.
  size_t own = llvm::count_if(call.params, [&](unsigned i) {
    return params[i].latestPopped < traceStep;
  });
  for (; own > 0 && queueHead < queue.size(); --own, ++queueHead)
    params[queue[queueHead].first].latestPopped = queue[queueHead].second;
  if (layout.prefetchBucket <= 0)
    return;
  int64_t limit =
      std::min(layout.maxLiveParameters - available, layout.prefetchBucket);
  SmallVector<unsigned> prefetch;
  llvm::SmallDenseSet<unsigned, 16> chosen;
  int64_t prefetching = 0;
  while (queueHead < queue.size() && prefetching < limit) {
    auto [i, use] = queue[queueHead++];
    Zero3Param &p = params[i];
    p.latestPopped = std::max(p.latestPopped, use);
    if (p.persistent || p.gathered != Gathered::No || !chosen.insert(i).second)
      continue;
    prefetch.push_back(i);
    prefetching = saturatingAdd(prefetching, p.elements);
  }
  if (!prefetch.empty())
    gather(prefetch, call.module, call.phase);
}

bool Zero3Rewriter::reusedSoon(const Zero3Param &p, int64_t traceStep) const {
  auto next = llvm::lower_bound(p.uses, traceStep);
  return next != p.uses.end() &&
         fetchedBefore[*next] - fetchedBefore[traceStep] <
             layout.maxReuseDistance;
}

void Zero3Rewriter::release(const ModuleCall &call, int64_t traceStep) {
  for (unsigned i : calls[call.fetch].params) {
    Zero3Param &p = params[i];
    if (p.persistent)
      continue;
    if (p.activeModules > 0)
      --p.activeModules;
    if (p.latestPopped > traceStep || reusedSoon(p, traceStep) ||
        p.gathered != Gathered::Yes || p.activeModules > 0)
      continue;
    free(i, call.phase);
  }
}

void Zero3Rewriter::gradientReady(unsigned i) {
  Zero3Param &p = params[i];
  if (bucketElements + p.elements > layout.reduceBucket && bucketElements > 0)
    reduceBucket();
  bucket.push_back(i);
  // Copied into the ipg buffer and dropped, unless it does not fit.
  if (bucketElements + p.elements <= layout.reduceBucket)
    ReleaseOp::create(builder, loc(), ValueRange{p.grad},
                      phaseAttr(StepPhase::Backward));
  else
    pendingGrads.push_back(p.grad);
  bucketElements += p.elements;
}

void Zero3Rewriter::reduceBucket() {
  if (bucket.empty())
    return;
  auto backward = phaseAttr(StepPhase::Backward);
  // reduce_scatter_coalesced reduces one gradient that ranks divides in
  // place; otherwise a padded, interleaved copy of the bucket.
  Value flat;
  if (bucket.size() > 1 || params[bucket.front()].elements % layout.ranks) {
    int64_t elements = 0;
    for (unsigned i : bucket)
      elements += params[i].partition * layout.ranks;
    flat = ZeroBufferOp::create(
        builder, loc(), RankedTensorType::get({elements}, element),
        builder.getStringAttr("reduce_scatter_flat"), Value(), backward);
  }
  if (!pendingGrads.empty())
    ReleaseOp::create(builder, loc(), pendingGrads, backward);
  if (flat)
    ReleaseOp::create(builder, loc(), ValueRange{flat}, backward);
  bucket.clear();
  pendingGrads.clear();
  bucketElements = 0;
}

LogicalResult Zero3Rewriter::rewrite() {
  int64_t traceStep = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    Operation *op = ops[i];
    builder.setInsertionPoint(op);
    for (unsigned c : callsBefore[i]) {
      const ModuleCall &call = calls[c];
      if (call.kind == ModuleCall::Fetch)
        fetch(call, traceStep++);
      else
        release(call, traceStep);
    }
    // After backward: the last bucket is reduced while what backward left
    // gathered is still, then that is freed (release_backward_leftovers).
    if (i == lastBackward + 1) {
      reduceBucket();
      for (Handle &handle : handles) {
        if (!handle.waiting)
          continue;
        for (unsigned member : handle.params) {
          Zero3Param &p = params[member];
          if (p.gathered != Gathered::InFlight)
            continue;
          p.gathered = handle.copiedOut ? Gathered::Yes : Gathered::No;
          if (!handle.copiedOut)
            available -= p.elements;
        }
        if (handle.params.size() > 1)
          ReleaseOp::create(builder, loc(), ValueRange{handle.flat},
                            phaseAttr(StepPhase::Backward));
        handle.waiting = 0;
      }
      for (auto [index, p] : llvm::enumerate(params))
        if (p.gathered == Gathered::Yes)
          free(index, StepPhase::Backward);
    }
    if (op->hasTrait<OpTrait::IsTerminator>())
      break;
    if (!isa<PersistentStorageOpInterface, OptimizerStepOp>(op))
      for (OpOperand &operand : op->getOpOperands()) {
        auto it = paramOf.find(operand.get());
        if (it == paramOf.end() || params[it->second].persistent)
          continue;
        Zero3Param &p = params[it->second];
        if (!p.current)
          return op->emitError()
                 << "ZeRO-3: parameter '" << p.op.getName()
                 << "' is read where no module's hook has gathered it";
        operand.set(p.current);
      }
    if (auto it = readyAfter.find(op); it != readyAfter.end()) {
      builder.setInsertionPoint(ops[i + 1]);
      for (unsigned p : it->second)
        gradientReady(p);
    }
  }
  return success();
}

LogicalResult Zero3Rewriter::rewriteOptimizer() {
  MLIRContext *ctx = step.getContext();
  Block &body = step.getBody().front();
  SmallVector<OptimizerStepOp> updates(body.getOps<OptimizerStepOp>());
  OptimizerStepOp first = updates.front();
  auto optimizerPhase = phaseAttr(StepPhase::Optimizer);
  builder.setInsertionPoint(first);
  // The step first frees every gathered parameter, the persistent ones
  // too, and gathers those again after the update (_post_step).
  SmallVector<Value> persistent;
  for (Zero3Param &p : params)
    if (p.persistent)
      persistent.push_back(p.op.getResult());
  if (!persistent.empty())
    ReleaseOp::create(builder, loc(), persistent, optimizerPhase);
  int64_t largest = 0;
  for (unsigned i : trainable)
    largest = std::max(largest, params[i].partition);
  ZeroGradNormOp::create(builder, loc(), gradPartitions,
                         builder.getI64IntegerAttr(largest), optimizerPhase);
  int64_t offset = 0;
  for (auto [group, flat] : llvm::zip(subGroups, subGroupFlats)) {
    int64_t elements = 0;
    for (unsigned i : group)
      elements += params[i].partition;
    // The fp32 partition and its optimizer state, persistent.
    Value master;
    SmallVector<Value> states;
    {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointAfter(flat.getDefiningOp());
      master = ZeroPartitionOp::create(
          builder, loc(),
          RankedTensorType::get({elements}, builder.getF32Type()), flat,
          builder.getI64IntegerAttr(1));
      SmallVector<OptimizerStateSlot> slots;
      getOptimizerStateSlots(first.getOptimizer(),
                             cast<RankedTensorType>(master.getType()), slots);
      for (const OptimizerStateSlot &slot : slots)
        states.push_back(OptimizerStateOp::create(
            builder, loc(), slot.type,
            OptimizerStateKindAttr::get(ctx, slot.kind), master));
    }
    // The sub-group's gradient partitions flattened (a view of a single
    // one), then cast to fp32 (a new tensor unless they are fp32).
    Value flatGrad;
    bool copied = group.size() > 1;
    if (!copied) {
      flatGrad = SliceOp::create(builder, loc(), gradPartitions, 0, offset,
                                 offset + elements, 1);
      flatGrad.getDefiningOp()->setAttr(NNDialect::kPhaseAttrName,
                                        optimizerPhase);
    } else {
      flatGrad = ZeroBufferOp::create(
          builder, loc(), RankedTensorType::get({elements}, element),
          builder.getStringAttr(element.isF32() ? "single_grad_partition"
                                                : "flat_grad_partition"),
          gradPartitions, optimizerPhase);
    }
    Value masterGrad = flatGrad;
    if (!element.isF32()) {
      masterGrad = ZeroBufferOp::create(
          builder, loc(),
          RankedTensorType::get({elements}, builder.getF32Type()),
          builder.getStringAttr("single_grad_partition"), flatGrad,
          optimizerPhase);
      if (copied)
        ReleaseOp::create(builder, loc(), ValueRange{flatGrad}, optimizerPhase);
    }
    OptimizerStepOp::create(builder, first.getLoc(), first.getOptimizerAttr(),
                            first.getImplementationAttr(), ValueRange{master},
                            ValueRange{masterGrad}, states,
                            first.getWeightDecayAttr());
    offset += elements;
  }
  eraseClientOptimizer(body, updates);
  return success();
}

void Zero3Rewriter::saveLinearInputs() {
  MLIRContext *ctx = step.getContext();
  Block &body = step.getBody().front();
  // A forward linear layer by its location and weight; its backward node
  // has both.
  DenseMap<std::pair<const void *, Value>, Value> inputOf;
  for (auto linear : body.getOps<LinearOp>())
    if (getStepPhase(linear) == StepPhase::Forward)
      inputOf[{linear.getLoc().getAsOpaquePointer(), linear->getOperand(1)}] =
          linear->getOperand(0);
  auto role = [&](SavedKind kind, int64_t index) {
    return SavedRoleAttr::get(ctx, kind, index);
  };
  for (auto node : llvm::make_early_inc_range(body.getOps<BackwardOp>())) {
    if (node.getForwardOp() != LinearOp::getOperationName())
      continue;
    ArrayRef<Attribute> roles = node.getSavedRoles().getValue();
    if (llvm::is_contained(roles, role(SavedKind::Operand, 0)))
      continue;
    const auto *weight =
        llvm::find(roles, Attribute(role(SavedKind::Operand, 1)));
    if (weight == roles.end())
      continue;
    Value input =
        inputOf.lookup({node.getLoc().getAsOpaquePointer(),
                        node.getSaved()[std::distance(roles.begin(), weight)]});
    if (!input)
      continue;
    SmallVector<Value> saved(node.getSaved());
    SmallVector<Attribute> newRoles(roles);
    saved.insert(saved.begin(), input);
    newRoles.insert(newRoles.begin(), role(SavedKind::Operand, 0));
    OpBuilder b(node);
    auto replacement = BackwardOp::create(
        b, node.getLoc(), node.getResultTypes(), node.getForwardOpAttr(),
        node.getForwardAttrsAttr(), node.getForwardTypeAttr(), saved,
        b.getArrayAttr(newRoles), node.getGrads(), node.getGradOperandsAttr(),
        node.getParamGradsAttr(), node.getFlopCountsAttr());
    replacement->setDiscardableAttrs(node->getDiscardableAttrDictionary());
    replacement.setWorkspaceAttr(node.getWorkspaceAttr());
    node.replaceAllUsesWith(replacement.getResults());
    node.erase();
  }
}

LogicalResult Zero3Rewriter::run() {
  // Gradient accumulation: DeepSpeed reduce-scatters each micro-batch's
  // gradients into the partitions (copied at the first, added after), so
  // no .grad outlives its micro-batch: the step is the last micro-batch's,
  // as without accumulation (measured). .grad kept across steps
  // (zero_grad(set_to_none=False)) is the client optimizer's, which
  // DeepSpeed does not use.
  auto accumulated =
      step->getAttrOfType<IntegerAttr>(NNDialect::kGradAccumAttrName);
  if (step->hasAttr(NNDialect::kPersistentGradsAttrName)) {
    if (!accumulated || accumulated.getInt() < 2)
      return step.emitError()
             << "ZeRO-3 with gradients kept across steps "
                "(nn.persistent_grads without nn.grad_accum) is not modelled";
    step->removeAttr(NNDialect::kPersistentGradsAttrName);
  }
  if (step->hasAttr(NNDialect::kAutocastAttrName))
    return step.emitError() << "ZeRO under autocast is not modelled yet";
  saveLinearInputs();
  if (failed(collectParams()))
    return failure();
  addPartitions();
  if (failed(traceModules()) || failed(rewrite()))
    return failure();
  return training ? rewriteOptimizer() : success();
}

LogicalResult vram::partitionForZero3(func::FuncOp step,
                                      const Zero3Layout &layout) {
  Zero3Rewriter rewriter(step, layout);
  return rewriter.run();
}
