//===- PipelineSchedule.h - torch.distributed.pipelining's actions -*- C++
//-*-===//
//
// The per-rank action lists of torch.distributed.pipelining's multi-stage
// schedules (schedules.py of torch 2.15): which stage computes which
// micro-batch's forward or backward when, and where the runtime posts each
// receive and waits for each send. The pipeline rewrite replays a rank's
// list to build its step.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_TRANSFORMS_PIPELINESCHEDULE_H
#define VRAM_TRANSFORMS_PIPELINESCHEDULE_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace vram {

/// One entry of a rank's schedule, as schedules.py's _Action: computation
/// or communication `kind` for micro-batch `microbatch` of `stage`.
struct PipelineAction {
  enum class Kind {
    Forward,  // F
    Backward, // B (FULL_BACKWARD)
    SendF,    // the stage's output to stage + 1
    SendB,    // the gradient of its input to stage - 1
    RecvF,    // stage's input from stage - 1 (a new buffer)
    RecvB,    // the gradient of stage's output from stage + 1
    WaitSendF,
    WaitSendB,
    // FSDP's and the gradients' steps: nothing without FSDP, but a slot
    // each in the simulation that places the receives.
    Unshard,
    Reshard,
    ReduceGrad,
    WaitReduceGrad,
  };
  Kind kind;
  int64_t stage;
  /// -1 for the actions of no micro-batch (UNSHARD, REDUCE_GRAD, ...).
  int64_t microbatch;

  bool operator==(const PipelineAction &other) const {
    return kind == other.kind && stage == other.stage &&
           microbatch == other.microbatch;
  }
  /// schedules.py's spelling: "2RECV_F0" (stage, kind, micro-batch).
  std::string str() const;
};

/// ScheduleInterleaved1F1B over `ranks` ranks holding `stagesPerRank`
/// stages each (rank r: stages r, r + ranks, ...), `microbatches` per step:
/// every rank's compute actions (_calculate_single_rank_operations, its
/// idle slots included), lowered as _PipelineScheduleRuntime lowers them
/// for a model without FSDP: the receives placed where the lockstep
/// simulation of _add_send_recv puts them, each forward send waited for
/// after the stage's backward of that micro-batch and the backward sends at
/// the end (_add_wait_send). Fails where torch raises: micro-batches that
/// are not a multiple of the rounds (max(1, microbatches / ranks)).
mlir::FailureOr<llvm::SmallVector<llvm::SmallVector<PipelineAction>>>
getInterleaved1F1BActions(int64_t ranks, int64_t stagesPerRank,
                          int64_t microbatches);

} // namespace vram

#endif // VRAM_TRANSFORMS_PIPELINESCHEDULE_H
