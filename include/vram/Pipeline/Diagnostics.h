//===- Diagnostics.h - how vram-opt prints diagnostics ----------*- C++ -*-===//

#ifndef VRAM_PIPELINE_DIAGNOSTICS_H
#define VRAM_PIPELINE_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/SourceMgr.h"

#include <string>

namespace vram {

/// Prints diagnostics whose location has no file (a zoo layer, an .mlir
/// `loc("name")`) as "<input>: error: <name>: message", so that every message
/// names what was analyzed; others go on to the next handler.
class NamedLocationDiagnostics {
public:
  NamedLocationDiagnostics(mlir::MLIRContext *context, std::string input);

private:
  mlir::ScopedDiagnosticHandler handler;
};

/// The diagnostics of a model vram-opt did not parse from text (a zoo model,
/// an import): file locations printed with their source line, file-less ones
/// named after the input, and no op dumps (the user did not write this IR).
class ModelDiagnostics {
public:
  ModelDiagnostics(mlir::MLIRContext *context, std::string input);

private:
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler fileHandler;
  NamedLocationDiagnostics named;
};

} // namespace vram

#endif // VRAM_PIPELINE_DIAGNOSTICS_H
