//===- TorchExport.h - torch.export archives (.pt2) -------------*- C++ -*-===//
//
// `vram-opt model.pt2` reads what PyTorch 2 users save with
//
//   torch.export.save(torch.export.export(model, example_args), "model.pt2")
//
// the PT2 archive (a zip, read with libzip) and the serialized
// ExportedProgram inside it (models/<name>.json, torch/_export/serde/
// schema.py). The graph signature gives parameters, buffers and user
// inputs; tensor metadata gives dtypes and sizes; symbolic sizes become
// dimensions bound with --batch, --seq or --dim; nn_module_stack names the
// layers. Each ATen op is converted by one registration in a table
// (lib/Import/TorchExport/ConverterTable.h). Weights are never read: an
// archive with its tensor data stripped imports the same.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_IMPORT_TORCHEXPORT_H
#define VRAM_IMPORT_TORCHEXPORT_H

#include "vram/Dialect/NN/NNInterfaces.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"

#include <optional>

namespace vram::torch_export {

/// The ExportedProgram schema major version this importer reads (minor
/// versions only add fields).
constexpr int64_t kSchemaMajorVersion = 8;

struct ExportImportOptions {
  /// Binds the symbolic sizes of dimension 0 of the user inputs.
  std::optional<int64_t> batch;
  /// Binds the symbolic sizes of dimension 1 of integer user inputs (token
  /// ids).
  std::optional<int64_t> seq;
  /// --dim NAME=VALUE: binds the symbol NAME (as the archive names it: s0,
  /// s77, ...).
  llvm::StringMap<int64_t> dims;
  /// The release and device whose kernels run the ops (the attention
  /// backend sdpa picks).
  nn::TorchTarget target;
  /// When set, receives the names of the user inputs' symbols.
  llvm::StringSet<> *symbols = nullptr;
};

/// The ATen ops (and symbolic-int operators) with a converter, sorted, as the
/// archive names them without "torch.ops.": "aten.conv2d.default".
llvm::ArrayRef<llvm::StringRef> supportedOps();

/// Imports the archive in `bytes` (named `filename` for locations) as a
/// module holding `func.func @forward`. Errors are emitted as MLIR
/// diagnostics, located at the op's source line when the archive records
/// it; returns null on failure.
mlir::OwningOpRef<mlir::ModuleOp>
importExportedProgram(mlir::MLIRContext *context, llvm::StringRef bytes,
                      llvm::StringRef filename,
                      const ExportImportOptions &options);

} // namespace vram::torch_export

#endif // VRAM_IMPORT_TORCHEXPORT_H
