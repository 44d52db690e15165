//===- Zero.h - one rank's step under DeepSpeed ZeRO-1/2 --------*- C++ -*-===//
//
// The rewrite vram-parallel applies for `zero=1|2` (--strategy=zero1|zero2):
// DeepSpeedZeroOptimizer (deepspeed/runtime/zero/stage_1_and_2.py) over the
// dp ranks, as DeepSpeed 0.19 runs it with its defaults
// (contiguous_gradients, reduce_scatter, no overlap_comm, no offload).
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_TRANSFORMS_ZERO_H
#define VRAM_TRANSFORMS_ZERO_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"

namespace vram {

struct ZeroLayout {
  /// ZeRO stage: 1 partitions the optimizer state, 2 the gradients too.
  int64_t stage = 1;
  /// Data-parallel ranks the partitions are spread over.
  int64_t ranks = 1;
  /// reduce_bucket_size: elements of the gradient buffer.
  int64_t reduceBucket = 500000000;
  /// overlap_comm: two buffers, used in turn; stage 1 reduces in the
  /// gradient hooks as stage 2 does.
  bool overlapComm = false;
};

/// Rewrites the built training step `step` into the step of the rank whose
/// gradient partition is largest (its figures are the worst rank's) and
/// returns that rank in `rank`.
mlir::LogicalResult partitionForZero(mlir::func::FuncOp step,
                                     const ZeroLayout &layout, int64_t &rank);

} // namespace vram

#endif // VRAM_TRANSFORMS_ZERO_H
