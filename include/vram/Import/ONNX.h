//===- ONNX.h - ONNX ModelProto importer ------------------------*- C++ -*-===//

#ifndef VRAM_IMPORT_ONNX_H
#define VRAM_IMPORT_ONNX_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"

#include <optional>
#include <string>
#include <vector>

namespace vram::onnx_import {

struct OnnxImportOptions {
  std::optional<int64_t> batch;  ///< binds a symbolic dim named like a batch
  std::optional<int64_t> seq;    ///< binds a symbolic dim named like a sequence
  llvm::StringMap<int64_t> dims; ///< --dim NAME=VALUE
  std::vector<std::string> bufferPatterns; ///< --onnx-buffers= name patterns
  /// Runs the ONNX import pipeline (buildOnnxImportPipeline: in-place
  /// inference, raising of exporter decompositions) after the 1:1 import.
  bool runImportPipeline = true;
  /// When set, receives the names of the graph inputs' symbolic dimensions
  /// (so that a --dim for a name the model lacks can be rejected).
  llvm::StringSet<> *symbolicDims = nullptr;
  /// The elements all constants folded at import time (shape and mask
  /// arithmetic) may hold together, 2^26 (512 MiB as the folder's doubles);
  /// past it the import fails at the node. The fuzzer lowers it.
  int64_t maxFoldedElements = int64_t(1) << 26;
};

/// The ONNX op types the importer has a converter for, sorted: the keys of
/// its converter table (lib/Import/ONNX/ConverterTable.h). Ops that are only
/// folded on constant inputs are listed by foldOnlyOps().
llvm::ArrayRef<llvm::StringRef> supportedOps();

/// ONNX op types the importer folds when all their inputs are constants but
/// does not convert otherwise (shape and mask arithmetic), sorted.
llvm::ArrayRef<llvm::StringRef> foldOnlyOps();

/// Imports the ONNX model in `buffer` (named `filename` for locations) as a
/// module holding `func.func @forward`: each node converted 1:1, then (unless
/// disabled in `options`) the ONNX import pipeline. Errors are emitted as MLIR
/// diagnostics (with file and node locations); returns null on failure.
mlir::OwningOpRef<mlir::ModuleOp>
importOnnxModel(mlir::MLIRContext *context, llvm::StringRef bytes,
                llvm::StringRef filename, const OnnxImportOptions &options);

/// The value of an initializer, for running the model (--validate): its
/// dims and little-endian bytes with NumPy's dtype string ("<f4", "<f8",
/// "<i8", "<i4").
struct InitializerData {
  std::string descr;
  std::vector<int64_t> shape;
  std::vector<char> bytes;
};

/// Reads the fp32, fp64, int64 and int32 initializers of the model in
/// `bytes` by name. Initializers of other types or with external data are
/// left out. Fails with `error` when the file does not parse.
bool readInitializers(llvm::StringRef bytes,
                      llvm::StringMap<InitializerData> &initializers,
                      std::string &error);

/// Registers the ONNX import passes (include/vram/Import/Passes.td) and the
/// `vram-onnx-import` pipeline, for vram-opt on .mlir input.
void registerPasses();

} // namespace vram::onnx_import

#endif // VRAM_IMPORT_ONNX_H
