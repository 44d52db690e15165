//===- Findings.h - front-end warnings tagged with a lint rule --*- C++ -*-===//
//
// A front end's warning that makes the model's numbers less reliable is a
// lint finding: reports such as SARIF give each kind its own rule. The kind
// travels with the MLIR diagnostic as metadata (a string attribute holding
// the rule id), so the front ends need no report dependency and the driver
// reads it from any diagnostic handler.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_SUPPORT_FINDINGS_H
#define VRAM_SUPPORT_FINDINGS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"

#include <optional>

namespace vram {

/// Rule ids of the front ends' findings (SARIF `ruleId`).
namespace rules {
/// An op or call the front end could not model and replaced by an
/// assumption (e.g. an unknown C++ function assumed to pass its input).
inline constexpr llvm::StringLiteral kApproximatedOp = "vram/approximated-op";
/// A symbolic dimension the user did not bind, bound to a default value.
inline constexpr llvm::StringLiteral kDefaultBoundDimension =
    "vram/default-bound-dimension";
/// A model exported for inference analyzed as a training step.
inline constexpr llvm::StringLiteral kInferenceExport = "vram/inference-export";
} // namespace rules

/// Emits a warning at `loc` tagged with `ruleId`.
inline mlir::InFlightDiagnostic emitFinding(mlir::Location loc,
                                            llvm::StringRef ruleId) {
  mlir::InFlightDiagnostic diag = mlir::emitWarning(loc);
  if (mlir::Diagnostic *d = diag.getUnderlyingDiagnostic())
    d->getMetadata().push_back(mlir::DiagnosticArgument(
        mlir::StringAttr::get(loc.getContext(), ruleId)));
  return diag;
}

/// The rule id `emitFinding` tagged `diag` with, if any.
inline std::optional<llvm::StringRef> getFindingRule(mlir::Diagnostic &diag) {
  for (const mlir::DiagnosticArgument &arg : diag.getMetadata())
    if (arg.getKind() ==
        mlir::DiagnosticArgument::DiagnosticArgumentKind::Attribute)
      if (auto id = llvm::dyn_cast<mlir::StringAttr>(arg.getAsAttribute()))
        if (id.getValue().starts_with("vram/"))
          return id.getValue();
  return std::nullopt;
}

} // namespace vram

#endif // VRAM_SUPPORT_FINDINGS_H
