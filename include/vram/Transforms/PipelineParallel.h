//===- PipelineParallel.h - one stage's step of a pipeline ------*- C++ -*-===//
//
// The rewrite vram-parallel applies for `pp=N`: torch.distributed.pipelining
// (PipelineStage, ScheduleGPipe / Schedule1F1B) over N ranks, one stage each.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_TRANSFORMS_PIPELINEPARALLEL_H
#define VRAM_TRANSFORMS_PIPELINEPARALLEL_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

namespace vram {

struct PipelineLayout {
  /// Stages, one per rank.
  int64_t stages = 1;
  /// Micro-batches per step, each the step's batch.
  int64_t microbatches = 1;
  /// ScheduleGPipe (every forward, then every backward) rather than
  /// Schedule1F1B.
  bool gpipe = false;
  /// Repeated blocks per stage, in order; empty: torchtitan's even split.
  llvm::SmallVector<int64_t> blocksPerStage;
};

/// Rewrites the built training step `step` into the step of pipeline stage
/// `stage`, or, when `stage` is negative, of the stage whose step peaks
/// highest, which it returns in `stage`; each stage's step is built and
/// analysed, and `nn.rank_peaks` set to their peaks.
mlir::LogicalResult partitionForPipeline(mlir::func::FuncOp step,
                                         const PipelineLayout &layout,
                                         int64_t &stage);

} // namespace vram

#endif // VRAM_TRANSFORMS_PIPELINEPARALLEL_H
