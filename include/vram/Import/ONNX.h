//===- ONNX.h - ONNX ModelProto importer ------------------------*- C++ -*-===//

#ifndef VRAM_IMPORT_ONNX_H
#define VRAM_IMPORT_ONNX_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace vram::onnx_import {

struct OnnxImportOptions {
  std::optional<int64_t> batch;  ///< binds a symbolic dim named like a batch
  std::optional<int64_t> seq;    ///< binds a symbolic dim named like a sequence
  llvm::StringMap<int64_t> dims; ///< --dim NAME=VALUE
  std::vector<std::string> bufferPatterns; ///< --onnx-buffers= name patterns
};

/// The ONNX op types the importer maps, sorted.
llvm::ArrayRef<llvm::StringLiteral> supportedOps();

/// Imports the ONNX model in `buffer` (named `filename` for locations) as a
/// module holding `func.func @forward`. Errors are emitted as MLIR
/// diagnostics (with file and node locations); returns null on failure.
mlir::OwningOpRef<mlir::ModuleOp>
importOnnxModel(mlir::MLIRContext *context, llvm::StringRef bytes,
                llvm::StringRef filename, const OnnxImportOptions &options);

} // namespace vram::onnx_import

#endif // VRAM_IMPORT_ONNX_H
