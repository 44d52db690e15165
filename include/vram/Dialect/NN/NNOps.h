//===- NNOps.h - nn dialect ops ---------------------------------*- C++ -*-===//

#ifndef VRAM_DIALECT_NN_NNOPS_H
#define VRAM_DIALECT_NN_NNOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "vram/Dialect/NN/NNDialect.h"
#include "vram/Dialect/NN/NNInterfaces.h"

namespace vram::nn {
/// The state of the random generator that dropout draws from.
struct RandomGeneratorResource
    : public mlir::SideEffects::Resource::Base<RandomGeneratorResource> {
  llvm::StringRef getName() final { return "nn::RandomGenerator"; }
};

/// The effects of an op with an in-place form: a write when `inplace`.
void getInplaceEffects(bool inplace,
                       llvm::SmallVectorImpl<mlir::SideEffects::EffectInstance<
                           mlir::MemoryEffects::Effect>> &effects);
} // namespace vram::nn

#define GET_OP_CLASSES
#include "vram/Dialect/NN/NNOps.h.inc"

#endif // VRAM_DIALECT_NN_NNOPS_H
