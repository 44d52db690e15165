//===- MemoryAnalysis.h - liveness-based memory of a step -------*- C++ -*-===//
//
// Liveness over a built step (or a forward function) in program order. Every
// tensor value maps to a storage: views and in-place results share the
// storage of an operand (AliasingOpInterface), every other result allocates
// one. A storage is allocated when its defining op runs and freed after the
// last op that uses any of its aliases; persistent storage (step arguments,
// parameters, buffers, optimizer state, gradients with set_to_none=False) is
// allocated at step entry, in definition order, and outlives the step, as do
// values the step returns (freed at step exit). An op's workspace
// (WorkspaceOpInterface) is a storage allocated and freed around that op.
//
// The result is an ordered stream of alloc/free events, grouped per op as
// "allocs, then frees": the op runs between the two groups, so the live
// bytes while it runs are the sum after its allocs. Allocator models consume
// that stream (Analysis/Allocator.h); the exact model's per-op live bytes
// (the timeline), its peak and the breakdown at the peak are computed here
// from the same stream. Everything is linear in ops + uses, except the
// top-K selection at the peak (n log K).
//
// Each storage's category: inputs, the category of its persistent defining
// op, gradients (a parameter gradient the optimizer consumes), activations
// (kept by a backward node, or kept for the recomputation of a checkpointed
// segment), else temporaries. Ops with regions are not
// supported and are a located error.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_ANALYSIS_MEMORYANALYSIS_H
#define VRAM_ANALYSIS_MEMORYANALYSIS_H

#include "vram/Analysis/StepInfo.h"

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

#include <array>
#include <vector>

namespace vram {

using nn::MemoryCategory;
constexpr unsigned kNumMemoryCategories = 8;
using CategoryBytes = std::array<int64_t, kNumMemoryCategories>;

/// A buffer: the storage of a value and its aliases, or an op's workspace.
struct Storage {
  /// The value that allocates it; null for a workspace.
  mlir::Value root;
  /// The op that allocates it: the defining op of `root`, the op owning the
  /// workspace, null for a step argument.
  mlir::Operation *op = nullptr;
  int64_t bytes = 0;
  MemoryCategory category = MemoryCategory::Temporaries;
  /// Op index of the allocation (0: step entry).
  unsigned def = 0;
  /// Op index after which it is freed (getNumOps() + 1: step exit).
  unsigned lastUse = 0;
  bool persistent = false;
  /// A persistent parameter the step frees (an `nn.release` of it, ZeRO-3's
  /// persistent parameters before the optimizer step) is freed there and
  /// allocated again at the step's exit (gathered again after the step):
  /// the op index of that release, 0 when it is never freed.
  unsigned releasedAt = 0;
  bool workspace = false;
  /// A workspace the step assumes rather than one PyTorch is known to
  /// allocate: cuDNN's convolution workspace under nn.cudnn_workspace
  /// (docs/Device.md). Allocator models bound it (runAllocatorBounded).
  bool assumed = false;
  /// Made in the forward pass and kept for backward by the model (not by
  /// the loss): by a backward node, or as the input of a checkpointed
  /// segment that is recomputed.
  bool savedByModel = false;
  /// The last op in step order that keeps it (a backward node, i.e. the one
  /// of the earliest forward op, or a recomputed op).
  mlir::Operation *savedBy = nullptr;
};

struct MemoryEvent {
  enum class Kind : uint8_t { Alloc, Free };
  Kind kind;
  unsigned storage; ///< index into MemoryAnalysis::getStorages()
  unsigned opIndex; ///< 0: step entry, 1..getNumOps(): ops, then step exit
};

class MemoryAnalysis {
public:
  /// Analyzes `op`, a `func.func` with one block. Emits an error and marks
  /// the analysis failed on unsupported IR or sizes that overflow 64 bits.
  explicit MemoryAnalysis(mlir::Operation *op);
  /// The same, with every op nested in `op` collected (collectOps): a
  /// caller running several analyses walks the step once.
  MemoryAnalysis(mlir::Operation *op, llvm::ArrayRef<mlir::Operation *> ops);

  bool failed() const { return hasFailed; }

  llvm::ArrayRef<Storage> getStorages() const { return storages; }
  llvm::ArrayRef<MemoryEvent> getEvents() const { return events; }
  /// The ops of the body in order (terminator included); op index i is
  /// getOps()[i - 1].
  llvm::ArrayRef<mlir::Operation *> getOps() const { return ops; }
  unsigned getNumOps() const { return ops.size(); }
  mlir::Operation *getOp(unsigned opIndex) const {
    return opIndex >= 1 && opIndex <= ops.size() ? ops[opIndex - 1] : nullptr;
  }
  /// The events of op index `opIndex` (0 to getNumOps() + 1).
  llvm::ArrayRef<MemoryEvent> getAllocEvents(unsigned opIndex) const;
  llvm::ArrayRef<MemoryEvent> getFreeEvents(unsigned opIndex) const;

  // --- The exact allocator: live bytes are the sum of live storages.
  /// Live bytes while op `opIndex` runs (after its allocs, before its frees).
  int64_t getLiveBytes(unsigned opIndex) const { return liveAt[opIndex]; }
  int64_t getPeakBytes() const { return liveAt[peakIndex]; }
  /// The op index of the first op at which the peak is reached (0 when the
  /// persistent storage alone is the peak).
  unsigned getPeakIndex() const { return peakIndex; }
  mlir::Operation *getPeakOp() const { return getOp(peakIndex); }
  /// Storages alive while op `opIndex` runs.
  std::vector<unsigned> getLiveStorages(unsigned opIndex) const;
  CategoryBytes getBreakdown(unsigned opIndex) const;
  /// The `k` largest storages alive at the peak, largest first.
  std::vector<unsigned> getTopStoragesAtPeak(unsigned k) const;
  int64_t getPersistentBytes() const { return persistentBytes; }
  /// The analyzed function.
  mlir::Operation *getRoot() const { return root; }
  /// Unique storages the forward pass leaves for the model's backward (the
  /// loss's excluded), parameters, buffers and inputs excluded: what
  /// torch.autograd.graph.saved_tensors_hooks sees at the end of forward,
  /// except that with activation checkpointing it is the segments' inputs
  /// (kept by the checkpoint for the recomputation) instead of the
  /// segments' saved tensors.
  int64_t getSavedForBackwardBytes() const { return savedForBackwardBytes; }
  /// Bytes of optimizer state in CUDA unified memory (a paged optimizer's
  /// `nn.optimizer_state {paged}`): outside the allocator, so in no live
  /// figure; on the GPU while it fits.
  int64_t getPagedBytes() const { return pagedBytes; }

  /// A stable, op-by-op listing of the event stream and the live bytes, for
  /// the test pass --vram-print-memory.
  void print(llvm::raw_ostream &os) const;

private:
  mlir::LogicalResult build(mlir::Operation *op,
                            llvm::ArrayRef<mlir::Operation *> nestedOps);
  void buildEvents();

  mlir::Operation *root;
  bool hasFailed = false;
  std::vector<mlir::Operation *> ops;
  std::vector<Storage> storages;
  std::vector<MemoryEvent> events;
  /// Per op index: the first event, the first free event, and the end.
  std::vector<std::array<unsigned, 3>> eventRanges;
  std::vector<int64_t> liveAt;
  unsigned peakIndex = 0;
  int64_t persistentBytes = 0;
  int64_t savedForBackwardBytes = 0;
  int64_t pagedBytes = 0;
};

} // namespace vram

#endif // VRAM_ANALYSIS_MEMORYANALYSIS_H
