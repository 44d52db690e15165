//===- Passes.h - ONNX import passes ----------------------------*- C++ -*-===//

#ifndef VRAM_IMPORT_PASSES_H
#define VRAM_IMPORT_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

#include "vram/Dialect/NN/NNDialect.h"
#include "vram/Import/ONNX.h"

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace vram::onnx_import {

#define GEN_PASS_DECL
#include "vram/Import/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "vram/Import/Passes.h.inc"

/// The passes that follow the 1:1 import: vram-onnx-infer-inplace, then
/// vram-onnx-raise, on every function. importOnnxModel runs them.
void buildOnnxImportPipeline(mlir::OpPassManager &pm);

// registerPasses() (vram/Import/ONNX.h) registers these passes and the
// `vram-onnx-import` pipeline.

} // namespace vram::onnx_import

#endif // VRAM_IMPORT_PASSES_H
