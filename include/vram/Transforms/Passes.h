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

#define GEN_PASS_REGISTRATION
#include "vram/Transforms/Passes.h.inc"

} // namespace vram

#endif // VRAM_TRANSFORMS_PASSES_H
