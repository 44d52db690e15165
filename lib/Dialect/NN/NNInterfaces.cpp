//===- NNInterfaces.cpp - op semantics for the analyses -------------------===//

#include "vram/Dialect/NN/NNInterfaces.h"

using namespace vram::nn;

#include "vram/Dialect/NN/NNInterfaces.cpp.inc"
