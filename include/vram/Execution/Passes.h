//===- Passes.h - passes of the execution pipeline --------------*- C++ -*-===//

#ifndef VRAM_EXECUTION_PASSES_H
#define VRAM_EXECUTION_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace vram {

/// The function vram-device-scratch calls before each scratch allocation:
/// the runner's allocation function takes the next request from the
/// driver, outside the caching allocator.
inline constexpr llvm::StringLiteral kDeviceScratchMarkerName =
    "__vram_device_scratch";
/// The function vram-device-scratch calls, with a constant's host address,
/// before the allocation that receives its device copy.
inline constexpr llvm::StringLiteral kDeviceConstantMarkerName =
    "__vram_device_constant";

#define GEN_PASS_DECL
#include "vram/Execution/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "vram/Execution/Passes.h.inc"

} // namespace vram

#endif // VRAM_EXECUTION_PASSES_H
