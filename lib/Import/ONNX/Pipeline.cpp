//===- Pipeline.cpp - the ONNX import pipeline ----------------------------===//

#include "vram/Import/Passes.h"
#include "vram/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

void vram::onnx_import::buildOnnxImportPipeline(OpPassManager &pm) {
  OpPassManager &fn = pm.nest<func::FuncOp>();
  // In-place inference reads the 1:1 import (an exported Linear's bias Add
  // is still an nn.add), so it runs before raising.
  fn.addPass(createOnnxInferInplace());
  fn.addPass(createOnnxRaiseDecompositions());
  // PyTorch's implicit copies of strided views, as for every front end.
  fn.addPass(vram::createInsertContiguous());
}

void vram::onnx_import::registerPasses() {
  registerOnnxImportPasses();
  PassPipelineRegistration<>(
      "vram-onnx-import",
      "The passes that follow the 1:1 ONNX import (in-place inference, "
      "raising of exporter decompositions)",
      [](OpPassManager &pm) { buildOnnxImportPipeline(pm); });
}
