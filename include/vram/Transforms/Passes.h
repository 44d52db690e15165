//===- Passes.h - vram-opt passes -------------------------------*- C++ -*-===//

#ifndef VRAM_TRANSFORMS_PASSES_H
#define VRAM_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include "vram/Analysis/StepInfo.h"
#include "vram/Dialect/NN/NNDialect.h"

namespace vram {

#define GEN_PASS_DECL
#include "vram/Transforms/Passes.h.inc"

/// Inserts `nn.contiguous` where PyTorch copies a strided view (the
/// vram-insert-contiguous pass, for front ends that build IR directly).
/// Returns the number of copies inserted.
unsigned insertContiguousCopies(mlir::func::FuncOp func);

/// Applies torch.autocast's policy for `lowType` to `op` (the step builder's
/// loss, which runs inside the autocast region): casts its operands before
/// it as its policy trait says and recomputes its result types. The casts
/// created are appended to `casts`.
mlir::LogicalResult
autocastOp(mlir::Operation *op, mlir::FloatType lowType,
           llvm::SmallVectorImpl<mlir::Operation *> *casts = nullptr);

#define GEN_PASS_REGISTRATION
#include "vram/Transforms/Passes.h.inc"

} // namespace vram

#endif // VRAM_TRANSFORMS_PASSES_H
