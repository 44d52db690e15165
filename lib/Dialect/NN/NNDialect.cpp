//===- NNDialect.cpp - the nn model dialect -------------------------------===//

#include "vram/Dialect/NN/NNDialect.h"
#include "vram/Dialect/NN/NNOps.h"

using namespace mlir;
using namespace vram::nn;

#include "vram/Dialect/NN/NNOpsDialect.cpp.inc"

void NNDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "vram/Dialect/NN/NNOps.cpp.inc"
      >();
}
