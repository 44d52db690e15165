//===- Passes.h - analysis test passes --------------------------*- C++ -*-===//

#ifndef VRAM_ANALYSIS_PASSES_H
#define VRAM_ANALYSIS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace vram {

#define GEN_PASS_DECL
#include "vram/Analysis/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "vram/Analysis/Passes.h.inc"

} // namespace vram

#endif // VRAM_ANALYSIS_PASSES_H
