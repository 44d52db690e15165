//===- FlopAnalysis.cpp - FLOPs per op and phase --------------------------===//

#include "vram/Analysis/FlopAnalysis.h"
#include "vram/Dialect/NN/NNDialect.h"
#include "vram/Dialect/NN/NNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace vram;
using nn::FlopConvention;

static bool isTrainingStep(Operation *op) {
  auto mode = op->getAttrOfType<nn::StepModeAttr>(nn::NNDialect::kModeAttrName);
  return mode && mode.getValue() == nn::StepMode::Train;
}

FlopAnalysis::FlopAnalysis(Operation *op) : FlopAnalysis(op, collectOps(op)) {}

FlopAnalysis::FlopAnalysis(Operation *op, ArrayRef<Operation *> ops)
    : root(op) {
  bool training = isTrainingStep(op);
  auto add = [&](int64_t &sum, int64_t value, Operation *at) {
    if (hasFailed)
      return;
    // Ops saturate their arithmetic at INT64_MAX (satMul/satAdd in
    // lib/Dialect/NN/NNOpsDetail.h).
    if (value < 0 || value == INT64_MAX || llvm::AddOverflow(sum, value, sum)) {
      at->emitError("FLOP count does not fit in 64 bits");
      hasFailed = true;
    }
  };
  perOp.reserve(ops.size());
  for (Operation *nested : ops) {
    auto costOp = dyn_cast<nn::CostOpInterface>(nested);
    if (!costOp)
      continue;
    Counts counts;
    unsigned phase = static_cast<unsigned>(getStepPhase(costOp));
    for (unsigned c = 0; c < kNumConventions; ++c) {
      counts[c] = costOp.getFlops(static_cast<FlopConvention>(c), training);
      add(perPhase[phase][c], counts[c], costOp);
      add(total[c], counts[c], costOp);
    }
    perOp[costOp] = counts;
  }
}

int64_t FlopAnalysis::getOpFlops(Operation *op,
                                 FlopConvention convention) const {
  auto it = perOp.find(op);
  return it == perOp.end() ? 0 : it->second[static_cast<unsigned>(convention)];
}

void FlopAnalysis::print(raw_ostream &os) const {
  os << "FLOPs (macs flops full)";
  if (auto func = dyn_cast<func::FuncOp>(root))
    os << " of @" << func.getSymName();
  os << "\n";
  unsigned index = 0;
  root->walk([&](Operation *op) {
    if (op == root)
      return;
    ++index;
    auto it = perOp.find(op);
    if (it == perOp.end() ||
        (it->second[0] == 0 && it->second[1] == 0 && it->second[2] == 0))
      return;
    os << llvm::formatv("  [{0}] {1} ({2}): {3} {4} {5}\n", index,
                        op->getName(), stringifyEnum(getStepPhase(op)),
                        it->second[0], it->second[1], it->second[2]);
  });
  for (unsigned p = 0; p < kNumPhases; ++p)
    os << llvm::formatv("  {0}: {1} {2} {3}\n",
                        stringifyEnum(static_cast<StepPhase>(p)),
                        perPhase[p][0], perPhase[p][1], perPhase[p][2]);
  os << llvm::formatv("  total: {0} {1} {2}\n", total[0], total[1], total[2]);
}
