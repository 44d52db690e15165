//===- InferredOp.h - ops whose result type is inferred, or an error -*- C++
//-*-===//
//
// The importers build nn ops from files: an op whose operands do not fit
// (a bad shape in the file) must become a located diagnostic, not the fatal
// error that OpTy::create's own type inference raises. createInferredOp runs
// the inference first and hands its message to the importer.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_IMPORT_INFERREDOP_H
#define VRAM_IMPORT_INFERREDOP_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>

namespace vram {

/// Builds OpTy at `loc` with its inferred result type; when inference fails,
/// erases the op, calls `onFailure` with the op's name and the inference's
/// own message (empty when it gave none), and fails.
template <typename OpTy, typename... Args>
mlir::FailureOr<mlir::Value> createInferredOp(
    mlir::OpBuilder &b, mlir::Location loc,
    llvm::function_ref<void(llvm::StringRef opName, const std::string &reason)>
        onFailure,
    Args &&...args) {
  mlir::MLIRContext *ctx = b.getContext();
  mlir::Type placeholder = mlir::NoneType::get(ctx);
  auto op = OpTy::create(b, loc, mlir::TypeRange{placeholder},
                         std::forward<Args>(args)...);
  llvm::SmallVector<mlir::Type, 1> types;
  std::string reason;
  mlir::LogicalResult inferred = mlir::failure();
  {
    // Catch the op's own message for the importer to prefix.
    mlir::ScopedDiagnosticHandler handler(ctx, [&](mlir::Diagnostic &d) {
      if (d.getSeverity() != mlir::DiagnosticSeverity::Error)
        return mlir::failure();
      reason = d.str();
      return mlir::success();
    });
    inferred = OpTy::inferReturnTypes(
        ctx, loc, op->getOperands(), op->getRawDictionaryAttrs(),
        op->getPropertiesStorage(), op->getRegions(), types);
  }
  if (mlir::failed(inferred) || types.size() != 1) {
    op->erase();
    onFailure(OpTy::getOperationName(), reason);
    return mlir::failure();
  }
  op->getResult(0).setType(types[0]);
  return op->getResult(0);
}

} // namespace vram

#endif // VRAM_IMPORT_INFERREDOP_H
