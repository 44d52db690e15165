//===- NNToTensor.h - the step on upstream tensor dialects ------*- C++ -*-===//
//
// The lowering of a built step to linalg/tensor/arith/math: the per-op
// LowerToTensorOpInterface models and the vram-lower-to-tensor pass.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_CONVERSION_NNTOTENSOR_H
#define VRAM_CONVERSION_NNTOTENSOR_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace vram {

/// Attaches the LowerToTensorOpInterface models to the nn ops (when the nn
/// dialect loads).
void registerLowerToTensorInterfaces(mlir::DialectRegistry &registry);

/// The name of the marker function the lowering calls before each op.
inline constexpr llvm::StringLiteral kOpMarkerName = "__vram_op";

#define GEN_PASS_DECL
#include "vram/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "vram/Conversion/Passes.h.inc"

} // namespace vram

#endif // VRAM_CONVERSION_NNTOTENSOR_H
