//===- NNDialect.h - the nn model dialect -----------------------*- C++ -*-===//

#ifndef VRAM_DIALECT_NN_NNDIALECT_H
#define VRAM_DIALECT_NN_NNDIALECT_H

#include "mlir/IR/Dialect.h"

#include "vram/Dialect/NN/NNOpsDialect.h.inc"

#endif // VRAM_DIALECT_NN_NNDIALECT_H
