//===- PipelineSchedule.cpp - torch.distributed.pipelining's actions ------===//
//
// ScheduleInterleaved1F1B's action lists, computed as schedules.py of torch
// 2.15 computes them (every function below names its original), so a
// rank's step is rebuilt in the order its runtime executes it. What the
// lowering adds for FSDP (UNSHARD, RESHARD) and for the gradients
// (REDUCE_GRAD, WAIT_REDUCE_GRAD) allocates nothing without FSDP, but each
// takes a slot of the lockstep simulation that places the receives, so it
// is kept. Checked against torch's own lists:
// benchmarks/accuracy/pp_schedules.py, unittests/Transforms.
//
//===----------------------------------------------------------------------===//

#include "vram/Transforms/PipelineSchedule.h"

#include "mlir/Support/LLVM.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <set>
#include <tuple>

using namespace mlir;
using namespace vram;
using Kind = PipelineAction::Kind;

std::string PipelineAction::str() const {
  StringRef name;
  switch (kind) {
  case Kind::Forward:
    name = "F";
    break;
  case Kind::Backward:
    name = "B";
    break;
  case Kind::SendF:
    name = "SEND_F";
    break;
  case Kind::SendB:
    name = "SEND_B";
    break;
  case Kind::RecvF:
    name = "RECV_F";
    break;
  case Kind::RecvB:
    name = "RECV_B";
    break;
  case Kind::WaitSendF:
    name = "WAIT_SEND_F";
    break;
  case Kind::WaitSendB:
    name = "WAIT_SEND_B";
    break;
  case Kind::Unshard:
    name = "UNSHARD";
    break;
  case Kind::Reshard:
    name = "RESHARD";
    break;
  case Kind::ReduceGrad:
    name = "REDUCE_GRAD";
    break;
  case Kind::WaitReduceGrad:
    name = "WAIT_REDUCE_GRAD";
    break;
  }
  std::string s = std::to_string(stage) + name.str();
  if (microbatch >= 0)
    s += std::to_string(microbatch);
  return s;
}

namespace {
using Slot = std::optional<PipelineAction>;
using ActionList = SmallVector<PipelineAction>;
} // namespace

/// _get_warmup_ops with multiply_factor 2.
static int64_t getWarmupOps(int64_t rank, int64_t localStages, int64_t perRound,
                            int64_t ranks, int64_t microbatches) {
  int64_t lastStage = (localStages - 1) * perRound;
  return std::min(lastStage + 2 * ((ranks - 1) - rank),
                  microbatches * localStages);
}

/// ScheduleInterleaved1F1B._calculate_single_rank_operations through
/// _get_1f1b_rank_ops (no zero bubble): `nullopt` is an idle slot.
static SmallVector<Slot> getRankComputeOps(int64_t rank, int64_t ranks,
                                           int64_t localStages,
                                           int64_t microbatches,
                                           int64_t perRound) {
  int64_t warmup =
      getWarmupOps(rank, localStages, perRound, ranks, microbatches);
  int64_t microbatchOps = localStages * microbatches;
  int64_t fwdBwd = microbatchOps - warmup;
  int64_t cooldown = microbatchOps - fwdBwd;
  auto forwardStage = [&](int64_t step) {
    return ((step / perRound) % localStages) * ranks + rank;
  };
  auto backwardStage = [&](int64_t step) {
    return (localStages - 1 - ((step - warmup) / perRound) % localStages) *
               ranks +
           rank;
  };
  llvm::DenseMap<int64_t, int64_t> forwardNext, backwardNext;
  SmallVector<Slot> ops(rank, std::nullopt);
  int64_t postWarmup =
      (localStages * ranks + 2 * (ranks - 1 - rank)) - (warmup + rank);
  auto forward = [&](int64_t step) {
    int64_t stage = forwardStage(step);
    ops.push_back(PipelineAction{Kind::Forward, stage, forwardNext[stage]++});
  };
  auto backward = [&](int64_t step) {
    int64_t stage = backwardStage(step);
    ops.push_back(PipelineAction{Kind::Backward, stage, backwardNext[stage]++});
  };
  for (int64_t op = 0, e = warmup + fwdBwd + cooldown; op < e; ++op) {
    if (op < warmup) {
      forward(op);
      if (op == warmup - 1)
        ops.append(std::max<int64_t>(postWarmup, 0), std::nullopt);
    } else if (op < warmup + fwdBwd) {
      forward(op);
      backward(op);
    } else {
      ops.push_back(std::nullopt);
      backward(op);
    }
  }
  return ops;
}

/// _add_unshard_reshard (max_active_stages 3, unshard_lookahead "full"):
/// drops the idle slots; before each action, RESHARD the active stages
/// that are not among the next three stages to compute and UNSHARD those
/// that are and are not active.
static ActionList addUnshardReshard(ArrayRef<Slot> compute) {
  constexpr size_t kMaxActiveStages = 3;
  // The first kMaxActiveStages distinct stages of each suffix, in the order
  // they first compute (next_stage_indices), built back to front.
  SmallVector<SmallVector<int64_t, 3>> next(compute.size() + 1);
  for (size_t i = compute.size(); i-- > 0;) {
    if (!compute[i]) {
      next[i] = next[i + 1];
      continue;
    }
    next[i].push_back(compute[i]->stage);
    for (int64_t s : next[i + 1])
      if (next[i].size() < kMaxActiveStages && s != compute[i]->stage)
        next[i].push_back(s);
  }
  ActionList actions;
  SmallVector<int64_t> active; // insertion order, as the dict
  for (auto [i, slot] : llvm::enumerate(compute)) {
    if (!slot)
      continue;
    SmallVector<int64_t> evict;
    for (int64_t s : active)
      if (!llvm::is_contained(next[i], s))
        evict.push_back(s);
    for (int64_t s : evict) {
      llvm::erase(active, s);
      actions.push_back({Kind::Reshard, s, -1});
    }
    for (int64_t s : next[i])
      if (!llvm::is_contained(active, s)) {
        active.push_back(s);
        actions.push_back({Kind::Unshard, s, -1});
      }
    actions.push_back(*slot);
  }
  for (int64_t s : active)
    actions.push_back({Kind::Reshard, s, -1});
  return actions;
}

/// _add_reduce_grad: after a stage's last backward, its REDUCE_GRAD and
/// WAIT_REDUCE_GRAD.
static ActionList addReduceGrad(ArrayRef<PipelineAction> in,
                                int64_t microbatches) {
  ActionList out;
  llvm::DenseMap<int64_t, int64_t> backwards;
  for (const PipelineAction &a : in) {
    out.push_back(a);
    if (a.kind == Kind::Backward && ++backwards[a.stage] == microbatches) {
      out.push_back({Kind::ReduceGrad, a.stage, -1});
      out.push_back({Kind::WaitReduceGrad, a.stage, -1});
    }
  }
  return out;
}

/// _add_send_recv: simulates the ranks in lockstep (one action of each rank
/// per round, ranks in order); an action waits until the receive of its
/// input is on its rank, and a compute action whose result crosses to
/// another rank appends its send to its own list and the receive to the
/// peer's, where that rank's list is at that moment.
static FailureOr<SmallVector<ActionList>>
addSendRecv(SmallVector<ActionList> compute, int64_t ranks,
            int64_t localStages) {
  int64_t stages = ranks * localStages;
  auto rankOf = [&](int64_t stage) { return stage % ranks; };
  auto hasComms = [&](const PipelineAction &a) {
    if (a.kind == Kind::Forward)
      return a.stage != stages - 1 && rankOf(a.stage + 1) != rankOf(a.stage);
    if (a.kind == Kind::Backward)
      return a.stage != 0 && rankOf(a.stage - 1) != rankOf(a.stage);
    return false;
  };
  using Key = std::tuple<int, int64_t, int64_t>;
  auto key = [](const PipelineAction &a) {
    return Key{static_cast<int>(a.kind), a.stage, a.microbatch};
  };
  SmallVector<std::set<Key>> done(ranks);
  auto ready = [&](int64_t rank, const PipelineAction &a) {
    const std::set<Key> &prev = done[rank];
    if (a.kind == Kind::Forward && a.stage != 0)
      return prev.count(key({Kind::RecvF, a.stage, a.microbatch})) ||
             prev.count(key({Kind::Forward, a.stage - 1, a.microbatch}));
    if (a.kind == Kind::Backward && a.stage != stages - 1)
      return prev.count(key({Kind::RecvB, a.stage, a.microbatch})) ||
             prev.count(key({Kind::Backward, a.stage + 1, a.microbatch}));
    return true;
  };
  SmallVector<ActionList> out(ranks);
  SmallVector<size_t> next(ranks, 0);
  auto remaining = [&](int64_t r) { return next[r] < compute[r].size(); };
  while (llvm::any_of(llvm::seq<int64_t>(0, ranks), remaining)) {
    bool progress = false;
    for (int64_t r = 0; r < ranks; ++r) {
      if (!remaining(r))
        continue;
      const PipelineAction &a = compute[r][next[r]];
      if (!ready(r, a))
        continue;
      out[r].push_back(a);
      done[r].insert(key(a));
      if (hasComms(a)) {
        bool forward = a.kind == Kind::Forward;
        PipelineAction send{forward ? Kind::SendF : Kind::SendB, a.stage,
                            a.microbatch};
        PipelineAction recv{forward ? Kind::RecvF : Kind::RecvB,
                            forward ? a.stage + 1 : a.stage - 1, a.microbatch};
        out[r].push_back(send);
        done[r].insert(key(send));
        out[rankOf(recv.stage)].push_back(recv);
        done[rankOf(recv.stage)].insert(key(recv));
      }
      ++next[r];
      progress = true;
    }
    if (!progress)
      return failure(); // torch: "Malformed compute schedule"
  }
  return out;
}

/// _add_wait_send: a forward send is waited for right after the stage's
/// backward of that micro-batch; the rest at the end, in the order sent.
static ActionList addWaitSend(ArrayRef<PipelineAction> in) {
  ActionList out;
  SmallVector<PipelineAction> sent;
  SmallVector<bool> waited;
  llvm::DenseMap<std::pair<int64_t, int64_t>, size_t> forwardSend;
  for (const PipelineAction &a : in) {
    out.push_back(a);
    if (a.kind == Kind::SendF || a.kind == Kind::SendB) {
      if (a.kind == Kind::SendF)
        forwardSend[{a.stage, a.microbatch}] = sent.size();
      sent.push_back(a);
      waited.push_back(false);
    }
    if (a.kind != Kind::Backward)
      continue;
    auto it = forwardSend.find({a.stage, a.microbatch});
    if (it == forwardSend.end())
      continue;
    out.push_back({Kind::WaitSendF, a.stage, a.microbatch});
    waited[it->second] = true;
    forwardSend.erase(it);
  }
  for (auto [send, done] : llvm::zip(sent, waited))
    if (!done)
      out.push_back(
          {send.kind == Kind::SendF ? Kind::WaitSendF : Kind::WaitSendB,
           send.stage, send.microbatch});
  return out;
}

FailureOr<SmallVector<ActionList>>
vram::getInterleaved1F1BActions(int64_t ranks, int64_t stagesPerRank,
                                int64_t microbatches) {
  if (ranks < 1 || stagesPerRank < 1 || microbatches < 1)
    return failure();
  int64_t rounds = std::max<int64_t>(1, microbatches / ranks);
  if (microbatches % rounds != 0)
    return failure();
  int64_t perRound = microbatches / rounds;
  SmallVector<ActionList> lowered;
  for (int64_t r = 0; r < ranks; ++r)
    lowered.push_back(
        addReduceGrad(addUnshardReshard(getRankComputeOps(
                          r, ranks, stagesPerRank, microbatches, perRound)),
                      microbatches));
  FailureOr<SmallVector<ActionList>> comms =
      addSendRecv(std::move(lowered), ranks, stagesPerRank);
  if (failed(comms))
    return failure();
  for (ActionList &list : *comms)
    list = addWaitSend(list);
  return comms;
}
