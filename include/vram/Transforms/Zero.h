//===- Zero.h - one rank's step under DeepSpeed ZeRO ------------*- C++ -*-===//
//
// The rewrite vram-parallel applies for `zero=1|2` (--strategy=zero1|zero2):
// DeepSpeedZeroOptimizer (deepspeed/runtime/zero/stage_1_and_2.py) over the
// dp ranks, as DeepSpeed 0.19 runs it with its defaults
// (contiguous_gradients, reduce_scatter, no overlap_comm, no offload).
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_TRANSFORMS_ZERO_H
#define VRAM_TRANSFORMS_ZERO_H

#include "vram/Dialect/NN/NNOps.h"

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

/// What every ZeRO stage needs of a parameter: fp32 or bf16 (fp16 needs
/// DeepSpeed's loss scaling) and one dtype for all (`element`, set by the
/// first parameter checked).
mlir::LogicalResult checkZeroParamType(nn::ParamOp param, mlir::Type &element);

/// What every ZeRO stage needs of the optimizer: state laid out elementwise
/// (not Adafactor's factors or bitsandbytes' blocks).
mlir::LogicalResult checkZeroOptimizer(nn::OptimizerStepOp update);

/// Drops the client optimizer once ZeRO's steps its partitions: its updates,
/// the releases of `.grad` (DeepSpeed drops each gradient itself) and its
/// state of anything but a `nn.zero_partition`.
void eraseClientOptimizer(mlir::Block &body,
                          llvm::ArrayRef<nn::OptimizerStepOp> updates);

/// Rewrites the built training step `step` into the step of rank `rank`,
/// or, when `rank` is negative, of the rank whose step peaks highest (its
/// figures are the worst rank's: each rank's step is built and analysed),
/// which it returns in `rank`.
mlir::LogicalResult partitionForZero(mlir::func::FuncOp step,
                                     const ZeroLayout &layout, int64_t &rank);

struct Zero3Layout {
  /// Data-parallel ranks the parameters are partitioned over.
  int64_t ranks = 1;
  /// reduce_bucket_size: elements of the gradient buffer.
  int64_t reduceBucket = 500000000;
  /// stage3_prefetch_bucket_size: elements a fetch may prefetch.
  int64_t prefetchBucket = 50000000;
  /// stage3_max_live_parameters: elements gathered beyond which nothing is
  /// prefetched.
  int64_t maxLiveParameters = 1000000000;
  /// stage3_max_reuse_distance: elements of fetches within which a
  /// parameter used again is kept.
  int64_t maxReuseDistance = 1000000000;
  /// stage3_param_persistence_threshold: parameters of at most this many
  /// elements stay gathered.
  int64_t persistenceThreshold = 100000;
  /// sub_group_size: elements of the partition stepped at a time.
  int64_t subGroupSize = 1000000000;
};

/// Rewrites the built training or inference step `step` into one rank's
/// step under DeepSpeed ZeRO-3 (DeepSpeedZeroOptimizer_Stage3, or
/// DeepSpeedZeRoOffload without an optimizer; ranks are alike).
mlir::LogicalResult partitionForZero3(mlir::func::FuncOp step,
                                      const Zero3Layout &layout);

} // namespace vram

#endif // VRAM_TRANSFORMS_ZERO_H
