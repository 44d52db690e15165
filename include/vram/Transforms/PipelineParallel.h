//===- PipelineParallel.h - one stage's step of a pipeline ------*- C++ -*-===//
//
// The rewrite vram-parallel applies for `pp=N`: torch.distributed.pipelining
// (PipelineStage, ScheduleGPipe / Schedule1F1B) over N ranks, one stage each,
// or ScheduleInterleaved1F1B with several stages a rank.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_TRANSFORMS_PIPELINEPARALLEL_H
#define VRAM_TRANSFORMS_PIPELINEPARALLEL_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

namespace vram {

struct PipelineLayout {
  /// Stages: ranks x stagesPerRank.
  int64_t stages = 1;
  /// Micro-batches per step, each the step's batch.
  int64_t microbatches = 1;
  /// ScheduleGPipe (every forward, then every backward) rather than
  /// Schedule1F1B.
  bool gpipe = false;
  /// Repeated blocks per stage, in order; empty: torchtitan's even split.
  llvm::SmallVector<int64_t> blocksPerStage;
  /// Stages each rank holds (rank r: r, r + ranks, ...); more than one:
  /// ScheduleInterleaved1F1B.
  int64_t stagesPerRank = 1;

  int64_t getRanks() const { return stages / stagesPerRank; }
};

/// Rewrites the built training step `step` into the step of pipeline rank
/// `rank` (its stage, or its stages under an interleaved schedule), or,
/// when `rank` is negative, of the rank whose step peaks highest, which it
/// returns in `rank`; each rank's step is built and analysed, and
/// `nn.rank_peaks` set to their peaks.
mlir::LogicalResult partitionForPipeline(mlir::func::FuncOp step,
                                         const PipelineLayout &layout,
                                         int64_t &rank);

} // namespace vram

#endif // VRAM_TRANSFORMS_PIPELINEPARALLEL_H
