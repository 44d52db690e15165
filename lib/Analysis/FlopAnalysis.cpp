//===- FlopAnalysis.cpp - FLOPs per op and phase --------------------------===//

#include "vram/Analysis/FlopAnalysis.h"
#include "vram/Dialect/NN/NNOps.h"

using namespace mlir;
using namespace vram;

FlopResult vram::analyzeFlops(func::FuncOp step,
                              nn::FlopConvention convention) {
  FlopResult result;
  result.convention = convention;
  auto mode = step->getAttrOfType<StringAttr>(kStepModeAttr);
  bool training = mode && mode.getValue() == "train";
  step.walk([&](nn::CostOpInterface op) {
    result.perPhase[static_cast<unsigned>(getStepPhase(op))] +=
        op.getFlops(convention, training);
  });
  return result;
}
