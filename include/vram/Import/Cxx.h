//===- Cxx.h - LibTorch C++ front end (Clang LibTooling) --------*- C++ -*-===//
//
// Reads a C++ translation unit that defines LibTorch modules and extracts one
// of them as `nn` IR: its submodules (`register_module`) with options
// evaluated as constants, its parameters and buffers, and the dataflow of its
// `forward()`, every op located at the C++ call that creates it.
//
// Parsing the translation unit (seconds: LibTorch's headers are large) is
// separate from extracting a module from it (milliseconds), so that a driver
// can extract the same module at several batch sizes (--fit-batch).
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_IMPORT_CXX_H
#define VRAM_IMPORT_CXX_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace clang {
class ASTContext;
class ASTUnit;
} // namespace clang

namespace vram::cxx_import {

/// How to compile the source file.
struct CxxSourceOptions {
  std::string sourceFile;
  /// Compile flags (what follows `--` on the command line); used when no
  /// compilation database is given.
  std::vector<std::string> compileFlags;
  /// A compile_commands.json, or the directory holding one.
  std::string compileCommands;
  /// The Clang resource directory (builtin headers); empty: the one this
  /// library was configured with.
  std::string resourceDir;
};

/// One tensor argument of forward(): `--input=32x3x224x224` (fp32) or
/// `--input=8x128:i64` (token ids for an Embedding).
struct CxxInputSpec {
  llvm::SmallVector<int64_t> shape;
  /// The element type: f32 (the default), f16, bf16, f64, i64, i32 or i1
  /// (torch::kBool).
  std::string elementType = "f32";
};

/// Which module to extract and how it is called.
struct CxxModuleOptions {
  /// The TORCH_MODULE holder or the Impl class (`Net` or `NetImpl`).
  std::string moduleName;
  /// forward()'s tensor arguments, in order.
  std::vector<CxxInputSpec> inputs;
  /// Constructor arguments (--args), replacing those of the construction
  /// found in the translation unit: integers, reals, true/false.
  std::vector<std::string> constructorArgs;
  /// Overrides dimension 0 of every input (--batch, --fit-batch).
  std::optional<int64_t> batch;
  /// Whether the module is in training mode (is_training(), dropout).
  bool training = true;
};

/// A parsed translation unit.
class CxxTranslationUnit {
public:
  /// Parses `options.sourceFile`. Clang's own diagnostics go to stderr;
  /// returns null (after an MLIR error for anything else) on failure.
  static std::unique_ptr<CxxTranslationUnit>
  parse(mlir::MLIRContext *context, const CxxSourceOptions &options);
  ~CxxTranslationUnit();

  /// Extracts one module as a ModuleOp holding `func.func @forward`. Errors
  /// are MLIR diagnostics at C++ source locations; returns null on failure.
  mlir::OwningOpRef<mlir::ModuleOp>
  importModule(mlir::MLIRContext *context, const CxxModuleOptions &options);

private:
  explicit CxxTranslationUnit(std::unique_ptr<clang::ASTUnit> ast);
  std::unique_ptr<clang::ASTUnit> ast;
};

/// Extracts one module from an AST (the one a CxxTranslationUnit holds, or
/// the compiler's own in a Clang plugin).
mlir::OwningOpRef<mlir::ModuleOp> importModule(mlir::MLIRContext *context,
                                               clang::ASTContext &ast,
                                               const CxxModuleOptions &options);

/// Parses "90x3x224x224" (positive dimensions); nullopt if malformed.
std::optional<llvm::SmallVector<int64_t>> parseShape(llvm::StringRef text);
/// Parses "90x3x224x224" or "8x128:i64" (a shape, then optionally `:` and an
/// element type of CxxInputSpec); nullopt if malformed.
std::optional<CxxInputSpec> parseInputSpec(llvm::StringRef text);

} // namespace vram::cxx_import

#endif // VRAM_IMPORT_CXX_H
