//===- NNInterfaces.cpp - op semantics for the analyses -------------------===//

#include "vram/Dialect/NN/NNInterfaces.h"

#include "llvm/ADT/StringSwitch.h"

using namespace vram::nn;

std::optional<FlopConvention>
vram::nn::parseFlopConvention(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<FlopConvention>>(name)
      .Case("macs", FlopConvention::Macs)
      .Case("flops", FlopConvention::Flops)
      .Case("full", FlopConvention::Full)
      .Default(std::nullopt);
}

llvm::StringRef vram::nn::stringify(FlopConvention convention) {
  switch (convention) {
  case FlopConvention::Macs:
    return "macs";
  case FlopConvention::Flops:
    return "flops";
  case FlopConvention::Full:
    return "full";
  }
  llvm_unreachable("unknown FLOP convention");
}

#include "vram/Dialect/NN/NNInterfaces.cpp.inc"
