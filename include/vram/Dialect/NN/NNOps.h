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

#define GET_OP_CLASSES
#include "vram/Dialect/NN/NNOps.h.inc"

#endif // VRAM_DIALECT_NN_NNOPS_H
