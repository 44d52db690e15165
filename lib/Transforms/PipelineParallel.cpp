//===- PipelineParallel.cpp - one stage's step of a pipeline --------------===//
//
// torch.distributed.pipelining as torchtitan applies it to a decoder: the
// model's repeated blocks (`model.layers.*`) split into `stages` contiguous
// runs, the earlier stages one more when they do not divide; the ops before
// the blocks that read the input (the embedding) run on the first stage,
// the ops after them (final norm, head, loss) on the last; what the blocks
// read that depends on neither the input nor a parameter (the rotary
// tables) every stage computes itself. Each rank is one stage
// (PipelineStage) and runs a schedule over `microbatches` micro-batches of
// the step's batch (schedules.py):
//
//   - ScheduleGPipe: every micro-batch's forward, then every backward;
//   - Schedule1F1B: min(microbatches, stages - stage) forwards, then one
//     backward and one forward in turn, then the remaining backwards.
//   - ScheduleInterleaved1F1B: each rank holds several stages (rank r:
//     r, r + ranks, ...); its step replays the rank's action list as
//     torch's runtime lowers it (PipelineSchedule.cpp): receives where
//     the list posts them, a forward send held until the stage's backward
//     of that micro-batch, the backward sends until the step ends.
//
// What a stage holds, as stage.py does: a received activation is a buffer
// allocated right before the receive (nn.p2p_recv) and kept with the
// micro-batch's inputs until its backward ends; a stage's output is kept
// until its send completes (nn.p2p_send, at the end of the forward), the
// last stage's (the logits) until its backward ends (the schedule computes
// the loss outside the stage and backward starts from it); in backward the
// gradient of the output is received into a new buffer and the input's
// gradient sent. The first micro-batch's backward makes `.grad`; later
// ones add into it in place (AccumulateGrad), their gradients freed as
// soon as they are made. The optimizer then steps the stage's parameters.
// Measured against torch 2.15 with gloo on the CPU:
// benchmarks/accuracy/pp.py.
//
// The step is rebuilt from one micro-batch's: the stage's forward ops (and
// the shared ones it reads) and backward ops are cloned once per
// micro-batch in the schedule's order, so the memory analysis sees every
// micro-batch's activations alive exactly as long as the schedule keeps
// them.
//
//===----------------------------------------------------------------------===//

#include "vram/Transforms/PipelineParallel.h"

#include "vram/Analysis/MemoryAnalysis.h"
#include "vram/Analysis/StepInfo.h"
#include "vram/Dialect/NN/NNDialect.h"
#include "vram/Dialect/NN/NNOps.h"
#include "vram/Transforms/ModulePatterns.h"
#include "vram/Transforms/PipelineSchedule.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MathExtras.h"

#include <map>
#include <set>

using namespace mlir;
using namespace vram;
using namespace vram::nn;

namespace {

/// A forward op's stage: a stage index, or computed by every stage that
/// reads it.
constexpr int64_t kEveryStage = -1;

/// Where the ops of the step run.
struct StageAssignment {
  /// The repeated blocks' list (`model.layers`) and how many there are.
  std::string list;
  int64_t blocks = 0;
  DenseMap<Operation *, int64_t> stageOf;
};

} // namespace

/// The element index of `layer` under `list`, a repeated-block pattern
/// without its `*` (`model.layers.3.mlp` under `model.layers.`: 3;
/// `encoder.layers.encoder_layer_3.mlp` under
/// `encoder.layers.encoder_layer_`: 3).
static std::optional<int64_t> getBlockIndex(StringRef layer, StringRef list) {
  if (!layer.consume_front(list))
    return std::nullopt;
  unsigned index;
  if (layer.take_until([](char c) { return c == '.'; }).getAsInteger(10, index))
    return std::nullopt;
  return index;
}

/// The first block of each stage and the end: `blocksPerStage` when given,
/// else torchtitan's split of `blocks` over `stages` (contiguous runs, the
/// earlier stages one more when `stages` does not divide `blocks`).
static SmallVector<int64_t> getStageStarts(int64_t blocks, int64_t stages,
                                           ArrayRef<int64_t> blocksPerStage) {
  SmallVector<int64_t> starts{0};
  for (int64_t s = 0; s < stages; ++s)
    starts.push_back(starts.back() +
                     (blocksPerStage.empty()
                          ? blocks / stages + (s < blocks % stages ? 1 : 0)
                          : blocksPerStage[s]));
  return starts;
}

static int64_t getStageOfBlock(int64_t block, ArrayRef<int64_t> starts) {
  return std::upper_bound(starts.begin(), starts.end(), block) -
         starts.begin() - 1;
}

/// Whether every stage has `v`: a step argument or a persistent tensor.
static bool isEverywhere(Value v) {
  Operation *def = v.getDefiningOp();
  return !def || isa<PersistentStorageOpInterface>(def);
}

static bool isBackwardPhase(Operation *op) {
  StepPhase phase = getStepPhase(op);
  return phase == StepPhase::Backward || phase == StepPhase::Recompute;
}

static FailureOr<StageAssignment> assignStages(func::FuncOp step,
                                               const PipelineLayout &layout) {
  int64_t stages = layout.stages;
  Block &body = step.getBody().front();
  SmallVector<std::string> lists = getRepeatedBlockPatterns(step);
  if (lists.size() != 1) {
    InFlightDiagnostic diag = step.emitError()
                              << "pipeline parallelism splits one stack of "
                                 "repeated blocks into stages; the model has ";
    if (lists.empty())
      return diag << "none (no layer path with an element index)", failure();
    diag << lists.size() << ": " << llvm::join(lists, ", ");
    return failure();
  }
  StageAssignment a;
  a.list = StringRef(lists.front()).drop_back().str(); // drop "*"
  for (Operation &op : body.without_terminator())
    if (auto index = getBlockIndex(getLayerName(op.getLoc()), a.list))
      a.blocks = std::max(a.blocks, *index + 1);
  if (a.blocks < stages) {
    InFlightDiagnostic diag = step.emitError() << "pp=" << layout.getRanks();
    if (layout.stagesPerRank > 1)
      diag << " with " << layout.stagesPerRank << " stages per rank";
    return diag << " needs at least " << stages
                << " repeated blocks to split, the model has " << a.blocks
                << " (" << a.list << "*)",
           failure();
  }
  if (!layout.blocksPerStage.empty()) {
    // Counts past the blocks (or that overflow adding up) do not sum to them.
    int64_t sum = 0;
    bool overflow = false;
    for (int64_t n : layout.blocksPerStage)
      overflow |= llvm::AddOverflow(sum, n, sum);
    if (static_cast<int64_t>(layout.blocksPerStage.size()) != stages ||
        llvm::any_of(layout.blocksPerStage, [](int64_t n) { return n < 1; }) ||
        overflow || sum != a.blocks)
      return step.emitError()
                 << "pp-layers gives each of the " << stages
                 << " stages at least one of the model's " << a.blocks
                 << " repeated blocks (" << a.list << "*), got "
                 << llvm::join(llvm::map_range(
                                   layout.blocksPerStage,
                                   [](int64_t n) { return std::to_string(n); }),
                               ","),
             failure();
  }
  SmallVector<int64_t> starts =
      getStageStarts(a.blocks, stages, layout.blocksPerStage);

  // Forward ops: by block, else before the blocks on the first stage when
  // they read the input or a parameter (else every stage computes them),
  // after the blocks on the last.
  DenseSet<Value> readsData(body.getArguments().begin(),
                            body.getArguments().end());
  llvm::StringMap<int64_t> stageOfLayer;
  bool pastFirstBlock = false;
  for (Operation &op : body.without_terminator()) {
    if (auto param = dyn_cast<ParamOp>(op)) {
      readsData.insert(param.getResult());
      continue;
    }
    if (isa<PersistentStorageOpInterface>(op) ||
        getStepPhase(&op) != StepPhase::Forward)
      continue;
    bool data = llvm::any_of(op.getOperands(),
                             [&](Value v) { return readsData.contains(v); });
    if (data)
      readsData.insert(op.result_begin(), op.result_end());
    std::string layer = getLayerName(op.getLoc());
    int64_t stage;
    if (auto index = getBlockIndex(layer, a.list)) {
      pastFirstBlock = true;
      stage = getStageOfBlock(*index, starts);
    } else if (!pastFirstBlock) {
      stage = data ? 0 : kEveryStage;
    } else {
      stage = stages - 1;
    }
    a.stageOf[&op] = stage;
    if (stage != kEveryStage)
      stageOfLayer.try_emplace(layer, stage);
  }
  // A parameter is one stage's: tied weights (an embedding shared with
  // the head) would need their gradients summed across stages.
  for (ParamOp param : body.getOps<ParamOp>()) {
    std::set<int64_t> stagesUsing;
    for (Operation *user : param->getUsers())
      if (auto it = a.stageOf.find(user); it != a.stageOf.end() &&
                                          it->second != kEveryStage &&
                                          user->getNumResults() != 0)
        stagesUsing.insert(it->second);
    if (stagesUsing.size() > 1)
      return param.emitError()
                 << "pipeline parallelism with a parameter used on two "
                    "stages ('"
                 << param.getName() << "' on stages " << *stagesUsing.begin()
                 << " and " << *std::next(stagesUsing.begin())
                 << ": tied weights) is not modelled yet; untie it "
                    "(tie_word_embeddings: false)",
             failure();
  }
  // Backward ops run where their forward op did (they share its layer).
  // A release or keep-alive of no stage's layer runs on every stage
  // (with the operands it has there).
  for (Operation &op : body.without_terminator()) {
    if (!isBackwardPhase(&op))
      continue;
    auto it = stageOfLayer.find(getLayerName(op.getLoc()));
    if (op.getNumResults() == 0) {
      a.stageOf[&op] = it == stageOfLayer.end() ? kEveryStage : it->second;
      continue;
    }
    if (it == stageOfLayer.end())
      return op.emitError() << "pipeline parallelism cannot place this "
                               "backward op: no forward op of layer '"
                            << getLayerName(op.getLoc()) << "' runs on a stage",
             failure();
    a.stageOf[&op] = it->second;
  }
  return a;
}

namespace {

/// A send the schedule holds until it waits for it (its P2POp or work
/// keeps the tensor).
struct PendingSend {
  Value value;
  int64_t peer;
  StepPhase phase;
};

/// What one stage runs and keeps, and its clones per micro-batch.
struct StageOps {
  int64_t stage;
  /// The stage's forward ops (with the shared ones it reads) and backward
  /// ops, in step order.
  SmallVector<Operation *> forward, backward;
  llvm::SmallPtrSet<Operation *, 16> inForward, inBackward;
  /// Forward values that leave the stage: the activation it sends, and
  /// the values the loss reads (the last stage's output).
  llvm::SetVector<Value> sentForward, lossInputs;
  /// Each micro-batch's forward mapping (the backward reads its values),
  /// what it received in forward, and the gradients received ahead of its
  /// backward (an interleaved schedule's RECV_B).
  std::vector<IRMapping> forwardMaps, receivedGrads;
  std::vector<SmallVector<Value>> receivedForward;
};

/// Builds one rank's step: clones of its stages' forward and backward ops
/// per micro-batch, in the schedule's order.
class StageBuilder {
public:
  StageBuilder(func::FuncOp step, const StageAssignment &assignment,
               const PipelineLayout &layout, int64_t rank)
      : step(step), body(step.getBody().front()), assignment(assignment),
        layout(layout), rank(rank),
        builder(OpBuilder::atBlockTerminator(&body)) {}

  LogicalResult run();

private:
  bool isLast(const StageOps &s) const { return s.stage == layout.stages - 1; }
  /// The rank's StageOps of `stage`, or null when another rank holds it.
  StageOps *getLocal(int64_t stage);
  void selectOps(StageOps &s);
  /// The stage of the op defining `v`, or nullopt for a value every stage
  /// has (an argument, a persistent tensor, a shared op's result).
  std::optional<int64_t> getDefiningStage(Value v) const;
  /// Clones micro-batch `microbatch`'s forward (backward) of stage `s`;
  /// returns what it sends, which the schedule holds until it waits.
  SmallVector<PendingSend> cloneForward(StageOps &s, int64_t microbatch);
  SmallVector<PendingSend> cloneBackward(StageOps &s, int64_t microbatch);
  /// An interleaved schedule's RECV_F / RECV_B: the buffers the stage's
  /// forward (backward) of `microbatch` reads from other ranks.
  void receiveForward(StageOps &s, int64_t microbatch);
  void receiveGrads(StageOps &s, int64_t microbatch);
  /// `v` received from stage `from` into a new buffer (nn.p2p_recv, in
  /// `phase`), mapped in `mapping`.
  Value receive(Value v, int64_t from, StepPhase phase, IRMapping &mapping);
  void emitSends(SmallVectorImpl<PendingSend> &sends);
  /// The clone of `op` of stage `s` with its operands mapped (received
  /// when from another rank, in `phase`); result-less ops keep only the
  /// operands this stage has, and are dropped without any.
  void cloneOp(Operation *op, StageOps &s, int64_t microbatch,
               IRMapping &mapping, StepPhase phase,
               SmallVectorImpl<Value> &received);
  void runSingleStageSchedule(StageOps &s);
  LogicalResult runInterleavedSchedule();

  func::FuncOp step;
  Block &body;
  const StageAssignment &assignment;
  const PipelineLayout &layout;
  int64_t rank;
  OpBuilder builder;

  std::vector<StageOps> local;
  /// The ops after backward (the optimizer).
  SmallVector<Operation *> tail;
  /// The first micro-batch's values of every local stage: the optimizer
  /// reads the gradients its backward made (the others add into them).
  IRMapping firstBackward;
};

} // namespace

StageOps *StageBuilder::getLocal(int64_t stage) {
  for (StageOps &s : local)
    if (s.stage == stage)
      return &s;
  return nullptr;
}

std::optional<int64_t> StageBuilder::getDefiningStage(Value v) const {
  Operation *def = v.getDefiningOp();
  if (!def || isa<PersistentStorageOpInterface>(def))
    return std::nullopt;
  auto it = assignment.stageOf.find(def);
  if (it == assignment.stageOf.end() || it->second == kEveryStage)
    return std::nullopt;
  return it->second;
}

void StageBuilder::selectOps(StageOps &s) {
  int64_t stage = s.stage;
  // Backward ops first: the shared forward ops a stage needs are those its
  // forward or backward ops read.
  for (Operation &op : body.without_terminator()) {
    if (isa<PersistentStorageOpInterface>(op) || !isBackwardPhase(&op))
      continue;
    auto it = assignment.stageOf.find(&op);
    if (it != assignment.stageOf.end() &&
        (it->second == stage ||
         (op.getNumResults() == 0 && it->second == kEveryStage))) {
      s.backward.push_back(&op);
      s.inBackward.insert(&op);
    }
  }
  SmallVector<Operation *> reversed;
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    if (isa<PersistentStorageOpInterface>(op) ||
        getStepPhase(&op) != StepPhase::Forward)
      continue;
    auto it = assignment.stageOf.find(&op);
    bool take = it != assignment.stageOf.end() &&
                (it->second == stage ||
                 (op.getNumResults() == 0 && it->second == kEveryStage));
    if (!take && it != assignment.stageOf.end() && it->second == kEveryStage)
      take = llvm::any_of(op.getUsers(), [&](Operation *user) {
        return s.inForward.contains(user) || s.inBackward.contains(user);
      });
    if (!take)
      continue;
    reversed.push_back(&op);
    s.inForward.insert(&op);
  }
  s.forward.assign(reversed.rbegin(), reversed.rend());
  // What leaves the stage in forward: results read by another stage's
  // forward ops; on the last stage, what its loss reads from the model.
  // (Values every stage computes are not sent; a keep-alive or release
  // elsewhere is not a reader.)
  for (Operation *op : s.forward) {
    auto own = assignment.stageOf.find(op);
    if (own == assignment.stageOf.end() || own->second != stage)
      continue;
    for (Value result : op->getResults())
      for (Operation *user : result.getUsers()) {
        if (user->getNumResults() == 0 || isBackwardPhase(user) ||
            getStepPhase(user) != StepPhase::Forward)
          continue;
        auto it = assignment.stageOf.find(user);
        if (it != assignment.stageOf.end() && it->second > stage)
          s.sentForward.insert(result);
        if (isLast(s) && getLayerName(user->getLoc()) == kLossLayerName &&
            getLayerName(op->getLoc()) != kLossLayerName)
          s.lossInputs.insert(result);
      }
  }
  s.forwardMaps.resize(layout.microbatches);
  s.receivedGrads.resize(layout.microbatches);
  s.receivedForward.resize(layout.microbatches);
}

void StageBuilder::cloneOp(Operation *op, StageOps &s, int64_t microbatch,
                           IRMapping &mapping, StepPhase phase,
                           SmallVectorImpl<Value> &received) {
  if (op->getNumResults() == 0) {
    // A release, a keep-alive: the operands this stage has.
    SmallVector<Value> kept;
    for (Value v : op->getOperands())
      if (mapping.contains(v) || isEverywhere(v))
        kept.push_back(mapping.lookupOrDefault(v));
    if (kept.empty())
      return;
    Operation *clone = builder.clone(*op, mapping);
    clone->setOperands(kept);
    return;
  }
  for (Value v : op->getOperands()) {
    if (mapping.contains(v))
      continue;
    std::optional<int64_t> from = getDefiningStage(v);
    if (!from || *from == s.stage)
      continue;
    // From another stage of this rank: its value, no communication.
    if (StageOps *other = getLocal(*from);
        other && other->forwardMaps[microbatch].contains(v)) {
      mapping.map(v, other->forwardMaps[microbatch].lookup(v));
      continue;
    }
    // From another rank: received into a new buffer.
    received.push_back(receive(v, *from, phase, mapping));
  }
  builder.clone(*op, mapping);
}

Value StageBuilder::receive(Value v, int64_t from, StepPhase phase,
                            IRMapping &mapping) {
  auto recv = P2PRecvOp::create(
      builder, v.getLoc(), v.getType(), builder.getI64IntegerAttr(from),
      StepPhaseAttr::get(builder.getContext(), phase));
  mapping.map(v, recv.getResult());
  return recv.getResult();
}

void StageBuilder::receiveForward(StageOps &s, int64_t microbatch) {
  IRMapping &mapping = s.forwardMaps[microbatch];
  for (Operation *op : s.forward)
    for (Value v : op->getOperands()) {
      std::optional<int64_t> from = getDefiningStage(v);
      if (op->getNumResults() == 0 || mapping.contains(v) || !from ||
          *from == s.stage || getLocal(*from))
        continue;
      s.receivedForward[microbatch].push_back(
          receive(v, *from, StepPhase::Forward, mapping));
    }
}

void StageBuilder::receiveGrads(StageOps &s, int64_t microbatch) {
  IRMapping &grads = s.receivedGrads[microbatch];
  for (Operation *op : s.backward)
    for (Value v : op->getOperands()) {
      std::optional<int64_t> from = getDefiningStage(v);
      if (op->getNumResults() == 0 || grads.contains(v) || !from ||
          *from <= s.stage || getLocal(*from) ||
          !isBackwardPhase(v.getDefiningOp()))
        continue;
      receive(v, *from, StepPhase::Backward, grads);
    }
}

void StageBuilder::emitSends(SmallVectorImpl<PendingSend> &sends) {
  for (const PendingSend &send : sends)
    P2PSendOp::create(builder, send.value.getLoc(), send.value,
                      builder.getI64IntegerAttr(send.peer),
                      StepPhaseAttr::get(builder.getContext(), send.phase));
  sends.clear();
}

SmallVector<PendingSend> StageBuilder::cloneForward(StageOps &s,
                                                    int64_t microbatch) {
  IRMapping &mapping = s.forwardMaps[microbatch];
  SmallVectorImpl<Value> &received = s.receivedForward[microbatch];
  for (Operation *op : s.forward)
    cloneOp(op, s, microbatch, mapping, StepPhase::Forward, received);
  SmallVector<PendingSend> sends;
  for (Value sent : s.sentForward) {
    int64_t to = layout.stages - 1;
    for (Operation *user : sent.getUsers())
      if (auto it = assignment.stageOf.find(user);
          it != assignment.stageOf.end() && it->second > s.stage)
        to = std::min(to, it->second);
    if (!getLocal(to))
      sends.push_back({mapping.lookup(sent), to, StepPhase::Forward});
  }
  return sends;
}

SmallVector<PendingSend> StageBuilder::cloneBackward(StageOps &s,
                                                     int64_t microbatch) {
  IRMapping mapping = s.forwardMaps[microbatch];
  for (auto [from, to] : s.receivedGrads[microbatch].getValueMap())
    mapping.map(from, to);
  SmallVector<Value> received;
  for (Operation *op : s.backward)
    cloneOp(op, s, microbatch, mapping, StepPhase::Backward, received);
  // Gradients for the stages before.
  llvm::SetVector<Value> sent;
  for (Operation *op : s.backward)
    for (Value result : op->getResults())
      for (Operation *user : result.getUsers())
        if (auto it = assignment.stageOf.find(user);
            it != assignment.stageOf.end() && it->second < s.stage &&
            it->second != kEveryStage && isBackwardPhase(user))
          sent.insert(result);
  SmallVector<PendingSend> sends;
  for (Value grad : sent) {
    int64_t to = 0;
    for (Operation *user : grad.getUsers())
      if (auto it = assignment.stageOf.find(user);
          it != assignment.stageOf.end() && it->second >= 0 &&
          it->second < s.stage)
        to = std::max(to, it->second);
    sends.push_back({mapping.lookup(grad), to, StepPhase::Backward});
  }
  // The stage keeps the micro-batch's inputs until its backward ends (the
  // last stage until the step's: the loss it keeps holds its graph, whose
  // AccumulateGrad node holds the received leaf), and the last stage its
  // output (the logits).
  SmallVector<Value> held;
  if (!isLast(s))
    held.append(s.receivedForward[microbatch]);
  for (Value v : s.lossInputs)
    held.push_back(s.forwardMaps[microbatch].lookup(v));
  if (!held.empty())
    KeepAliveOp::create(builder, step.getLoc(), held);
  if (microbatch == 0)
    for (Operation *op : llvm::concat<Operation *const>(s.forward, s.backward))
      for (Value v : op->getResults())
        if (mapping.contains(v))
          firstBackward.map(v, mapping.lookup(v));
  return sends;
}

void StageBuilder::runSingleStageSchedule(StageOps &s) {
  int64_t m = layout.microbatches;
  int64_t nextForward = 0, nextBackward = 0;
  SmallVector<PendingSend> forwardSends, backwardSends;
  if (layout.gpipe) {
    // ScheduleGPipe waits for every forward send after the last forward,
    // and for each backward send at the end.
    for (; nextForward < m; ++nextForward)
      forwardSends.append(cloneForward(s, nextForward));
    emitSends(forwardSends);
    for (; nextBackward < m; ++nextBackward) {
      SmallVector<PendingSend> sends = cloneBackward(s, nextBackward);
      emitSends(sends);
    }
    return;
  }
  // Schedule1F1B: a warm-up forward's send is released after the next
  // forward; in the 1B1F loop a forward's send is released before the
  // next backward, and a backward's send list (`bwd_sends`) is replaced
  // only after the next backward.
  int64_t warmup = std::min(m, layout.stages - s.stage);
  for (; nextForward < warmup; ++nextForward) {
    SmallVector<PendingSend> sends = cloneForward(s, nextForward);
    emitSends(forwardSends);
    forwardSends = std::move(sends);
  }
  while (nextBackward < m) {
    emitSends(forwardSends);
    SmallVector<PendingSend> sends = cloneBackward(s, nextBackward++);
    emitSends(backwardSends);
    backwardSends = std::move(sends);
    if (nextForward < m)
      forwardSends = cloneForward(s, nextForward++);
  }
  emitSends(backwardSends);
}

LogicalResult StageBuilder::runInterleavedSchedule() {
  FailureOr<SmallVector<SmallVector<PipelineAction>>> actions =
      getInterleaved1F1BActions(layout.getRanks(), layout.stagesPerRank,
                                layout.microbatches);
  if (failed(actions))
    return step.emitError()
           << "the interleaved 1F1B schedule cannot run " << layout.microbatches
           << " micro-batches over " << layout.getRanks() << " ranks";
  // A send's tensor lives until the runtime waits for it: a forward send
  // after the stage's backward of that micro-batch, a backward send at
  // the end of the step.
  std::map<std::pair<int64_t, int64_t>, SmallVector<PendingSend>> forwardSends,
      backwardSends;
  using Kind = PipelineAction::Kind;
  for (const PipelineAction &a : (*actions)[rank]) {
    StageOps *s = getLocal(a.stage);
    if (!s)
      return step.emitError()
             << "the interleaved 1F1B schedule gives rank " << rank << " stage "
             << a.stage << ", which it does not hold";
    std::pair<int64_t, int64_t> key{a.stage, a.microbatch};
    switch (a.kind) {
    case Kind::Forward:
      forwardSends[key] = cloneForward(*s, a.microbatch);
      break;
    case Kind::Backward:
      backwardSends[key] = cloneBackward(*s, a.microbatch);
      break;
    case Kind::RecvF:
      receiveForward(*s, a.microbatch);
      break;
    case Kind::RecvB:
      receiveGrads(*s, a.microbatch);
      break;
    case Kind::WaitSendF:
      emitSends(forwardSends[key]);
      break;
    case Kind::WaitSendB:
      emitSends(backwardSends[key]);
      break;
    default:
      // The sends start where the stage computed; FSDP's and the
      // gradients' steps allocate nothing without FSDP.
      break;
    }
  }
  return success();
}

LogicalResult StageBuilder::run() {
  local.resize(layout.stagesPerRank);
  for (auto [k, s] : llvm::enumerate(local))
    s.stage = rank + static_cast<int64_t>(k) * layout.getRanks();
  for (StageOps &s : local)
    selectOps(s);
  for (Operation &op : body.without_terminator())
    if (!isa<PersistentStorageOpInterface>(op) && !isBackwardPhase(&op) &&
        getStepPhase(&op) != StepPhase::Forward)
      tail.push_back(&op);
  Operation *terminator = body.getTerminator();
  // The one micro-batch's step the clones are made from.
  SmallVector<Operation *> original;
  for (Operation &op : body.without_terminator())
    if (!isa<PersistentStorageOpInterface>(op))
      original.push_back(&op);
  builder.setInsertionPoint(terminator);

  // The schedule (schedules.py), with where it drops each send.
  if (layout.stagesPerRank == 1)
    runSingleStageSchedule(local.front());
  else if (failed(runInterleavedSchedule()))
    return failure();
  for (StageOps &s : local) {
    if (!isLast(s))
      continue;
    SmallVector<Value> held;
    for (ArrayRef<Value> received : s.receivedForward)
      held.append(received.begin(), received.end());
    if (!held.empty())
      KeepAliveOp::create(builder, step.getLoc(), held);
  }

  // The optimizer and what follows backward read the first backward's
  // gradients (the other micro-batches' were added into them).
  for (Operation *op : tail) {
    auto update = dyn_cast<OptimizerStepOp>(op);
    if (!update) {
      if (op->getNumResults() == 0) {
        SmallVector<Value> none;
        cloneOp(op, local.front(), 0, firstBackward, getStepPhase(op), none);
        continue;
      }
      // An update over every parameter's gradient (clipping's norm) would
      // need the stages' norms reduced across ranks.
      for (Value v : op->getOperands())
        if (!firstBackward.contains(v) && !isEverywhere(v))
          return op->emitError()
                 << "pipeline parallelism with '" << op->getName()
                 << "' after backward is not modelled yet";
      builder.clone(*op, firstBackward);
      continue;
    }
    // Only this rank's parameters.
    SmallVector<Value> params, grads, states;
    ValueRange state = update.getState();
    unsigned next = 0;
    for (auto [param, grad] :
         llvm::zip(update.getParams(), update.getGrads())) {
      SmallVector<OptimizerStateSlot> slots;
      getOptimizerStateSlots(update.getOptimizer(),
                             cast<RankedTensorType>(param.getType()), slots);
      ValueRange own = state.slice(next, slots.size());
      next += slots.size();
      if (!firstBackward.contains(grad))
        continue;
      params.push_back(param);
      grads.push_back(firstBackward.lookup(grad));
      states.append(own.begin(), own.end());
    }
    if (next != state.size())
      return update.emitError() << "pipeline parallelism: the optimizer's "
                                   "state does not match its parameters";
    if (params.empty())
      continue;
    auto clone = OptimizerStepOp::create(
        builder, update.getLoc(), update.getOptimizerAttr(),
        update.getImplementationAttr(), params, grads, states,
        update.getWeightDecayAttr());
    for (NamedAttribute attr : update->getDiscardableAttrs())
      clone->setAttr(attr.getName(), attr.getValue());
  }

  // The loss the step returns: the last micro-batch's, on the last stage.
  SmallVector<Value> results;
  for (Value v : terminator->getOperands())
    for (StageOps &s : local)
      if (s.forwardMaps.back().contains(v)) {
        results.push_back(s.forwardMaps.back().lookup(v));
        break;
      }
  terminator->setOperands(results);
  step.setType(FunctionType::get(step.getContext(),
                                 step.getFunctionType().getInputs(),
                                 ValueRange(results).getTypes()));

  // Drop the one micro-batch's step the clones were made from, and the
  // state of parameters this rank does not hold.
  for (Operation *op : llvm::reverse(original)) {
    op->dropAllUses();
    op->erase();
  }
  // Persistent tensors no op of the rank reads (other ranks' parameters,
  // their optimizer state).
  bool erased = true;
  while (erased) {
    erased = false;
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
      if (isa<PersistentStorageOpInterface>(op) && op.use_empty()) {
        op.erase();
        erased = true;
      }
  }
  return success();
}

static LogicalResult buildRank(func::FuncOp step,
                               const StageAssignment &assignment,
                               const PipelineLayout &layout, int64_t rank) {
  return StageBuilder(step, assignment, layout, rank).run();
}

LogicalResult vram::partitionForPipeline(func::FuncOp step,
                                         const PipelineLayout &layout,
                                         int64_t &rank) {
  int64_t ranks = layout.getRanks();
  if (rank >= ranks)
    return step.emitError()
           << "pipeline rank " << rank << " of " << ranks << " ranks";
  FailureOr<StageAssignment> assignment = assignStages(step, layout);
  if (failed(assignment))
    return failure();
  // Each rank's step holds a copy of its ops per micro-batch: a count
  // that would build more than kMaxOps ops is an error, not a hang.
  constexpr int64_t kMaxOps = int64_t(1) << 24;
  int64_t ops = 0;
  for (Operation &op : step.getBody().front())
    ops += !isa<PersistentStorageOpInterface>(op);
  if (layout.microbatches > kMaxOps / std::max<int64_t>(ops, 1))
    return step.emitError()
               << "pipeline parallelism over " << layout.microbatches
               << " micro-batches would build more than " << kMaxOps
               << " ops from the step's " << ops << "; give fewer",
           failure();
  // Every rank's step is built and analysed: the report lists their peaks.
  SmallVector<int64_t> peaks;
  bool pick = rank < 0;
  for (int64_t r = 0; r < ranks; ++r) {
    OwningOpRef<func::FuncOp> trial = step.clone();
    // The clone's ops are new: assign them again.
    FailureOr<StageAssignment> own = assignStages(*trial, layout);
    if (failed(own) || failed(buildRank(*trial, *own, layout, r)))
      return failure();
    MemoryAnalysis memory(*trial);
    if (memory.failed())
      return failure();
    peaks.push_back(memory.getPeakBytes());
    if (pick && (rank < 0 || peaks.back() > peaks[rank]))
      rank = r;
  }
  if (failed(buildRank(step, *assignment, layout, rank)))
    return failure();
  step->setAttr(NNDialect::kRankPeaksAttrName,
                DenseI64ArrayAttr::get(step.getContext(), peaks));
  return success();
}
