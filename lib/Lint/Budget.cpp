//===- Budget.cpp - memory budget lint and fit search ---------------------===//

#include "vram/Lint/Budget.h"
#include "vram/Analysis/StepInfo.h"
#include "vram/Dialect/NN/NNOps.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace vram;

std::optional<int64_t> vram::parseByteSize(StringRef text) {
  text = text.trim();
  size_t split = text.find_first_not_of("0123456789.");
  StringRef number = text.take_front(split),
            unit = text.drop_front(std::min(split, text.size())).trim();
  double value;
  if (number.empty() || number.getAsDouble(value) || !(value >= 0))
    return std::nullopt;
  std::optional<double> scale = llvm::StringSwitch<std::optional<double>>(unit)
                                    .Cases({"", "B"}, 1.0)
                                    .Case("KB", 1e3)
                                    .Case("MB", 1e6)
                                    .Case("GB", 1e9)
                                    .Case("TB", 1e12)
                                    .Case("KiB", 1024.0)
                                    .Case("MiB", 1024.0 * 1024)
                                    .Case("GiB", 1024.0 * 1024 * 1024)
                                    .Case("TiB", 1024.0 * 1024 * 1024 * 1024)
                                    .Default(std::nullopt);
  if (!scale)
    return std::nullopt;
  double bytes = std::round(value * *scale);
  if (bytes >= 9.2e18)
    return std::nullopt;
  return static_cast<int64_t>(bytes);
}

std::string vram::formatByteSize(int64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = bytes;
  unsigned u = 0;
  while (std::abs(v) >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? llvm::formatv("{0} B", bytes).str()
                : llvm::formatv("{0:f2} {1}", v, units[u]).str();
}

/// "8", "0.56": a per-parameter byte count, two decimals when fractional.
static std::string formatPerElement(double bytes) {
  if (bytes == std::floor(bytes))
    return llvm::formatv("{0}", static_cast<int64_t>(bytes)).str();
  return llvm::formatv("{0:f2}", bytes).str();
}

/// A note naming the largest category at the peak, said the way one reasons
/// about it: optimizer state, gradients and parameters per (trainable)
/// parameter ("50.20 GiB of optimizer_state (38% of the peak), adam: 8 bytes
/// per trainable parameter").
static void noteDominantCategory(InFlightDiagnostic &diag, Operation *step,
                                 const MemoryAnalysis &memory) {
  CategoryBytes atPeak = memory.getBreakdown(memory.getPeakIndex());
  int64_t total = 0;
  unsigned largest = 0;
  for (unsigned c = 0; c < kNumMemoryCategories; ++c) {
    total += atPeak[c];
    if (atPeak[c] > atPeak[largest])
      largest = c;
  }
  int64_t bytes = atPeak[largest];
  if (total <= 0 || bytes <= 0)
    return;
  auto category = static_cast<nn::MemoryCategory>(largest);
  Diagnostic &note = diag.attachNote(step->getLoc());
  note << formatByteSize(bytes) << " of " << stringifyEnum(category) << " ("
       << llvm::formatv("{0:f0}", 100.0 * bytes / total) << "% of the peak)";
  FailureOr<ParameterSummary> params = summarizeParameters(step);
  if (failed(params))
    return;
  auto perParameter = [&](int64_t count, StringRef which) {
    if (count > 0)
      note << ": " << formatPerElement(static_cast<double>(bytes) / count)
           << " bytes per " << which << " parameter, "
           << llvm::formatv("{0:N}", count) << " of them";
  };
  switch (category) {
  case nn::MemoryCategory::OptimizerState:
    if (auto config = step->getAttrOfType<nn::OptimizerConfigAttr>(
            nn::NNDialect::kOptimizerAttrName))
      note << ", " << stringifyEnum(config.getKind());
    perParameter(params->trainable, "trainable");
    break;
  case nn::MemoryCategory::Gradients:
    perParameter(params->trainable, "trainable");
    break;
  case nn::MemoryCategory::Parameters:
    perParameter(params->count, "model");
    break;
  case nn::MemoryCategory::KvCache: {
    // Keys and values of every layer for one position of one sequence, from
    // the caches the program ends with ([batch, kv heads, tokens, dim]).
    int64_t perToken = 0;
    for (const Storage &s : memory.getStorages())
      if (s.category == nn::MemoryCategory::KvCache &&
          s.lastUse == memory.getNumOps() + 1)
        if (auto type = dyn_cast<RankedTensorType>(s.root.getType()))
          perToken += s.bytes / (type.getDimSize(0) * type.getDimSize(2));
    if (perToken)
      note << ": " << llvm::formatv("{0:N}", perToken)
           << " bytes per token of each sequence";
    break;
  }
  default:
    break;
  }
}

/// What a step of `mode` does, as the budget error says it.
static StringRef stringifyStepWork(nn::StepMode mode) {
  switch (mode) {
  case nn::StepMode::Train:
    return "training";
  case nn::StepMode::Inference:
    return "inference";
  case nn::StepMode::Generate:
    return "generation";
  }
  llvm_unreachable("unknown step mode");
}

LogicalResult vram::checkBudget(Operation *step, const MemoryAnalysis &memory,
                                int64_t used, int64_t budget,
                                StringRef metricName, unsigned notes) {
  if (used <= budget)
    return success();
  Operation *peakOp = memory.getPeakOp();
  std::optional<nn::StepMode> mode = getStepMode(step);
  StringRef what = !mode ? "forward" : stringifyStepWork(*mode);
  InFlightDiagnostic diag =
      emitError(peakOp ? peakOp->getLoc() : step->getLoc())
      << "peak " << what << " memory (" << metricName << ") "
      << formatByteSize(used) << " exceeds the budget of "
      << formatByteSize(budget) << " by " << formatByteSize(used - budget);
  noteDominantCategory(diag, step, memory);
  for (unsigned i : memory.getTopStoragesAtPeak(notes)) {
    const Storage &s = memory.getStorages()[i];
    Location loc = s.op ? s.op->getLoc() : step->getLoc();
    diag.attachNote(loc) << formatByteSize(s.bytes) << " of "
                         << stringifyEnum(s.category) << " alive at the peak";
  }
  return failure();
}

FailureOr<std::optional<int64_t>>
vram::findLargestBatch(function_ref<FailureOr<int64_t>(int64_t)> measure,
                       int64_t budget, int64_t limit) {
  auto fits = [&](int64_t batch) -> FailureOr<bool> {
    FailureOr<int64_t> used = measure(batch);
    if (failed(used))
      return failure();
    return *used <= budget;
  };
  FailureOr<bool> one = fits(1);
  if (failed(one))
    return failure();
  if (!*one)
    return std::optional<int64_t>();
  // Doubling finds a batch that does not fit; bisecting the last interval
  // finds the largest that does.
  int64_t good = 1, bad = 0;
  while (!bad) {
    int64_t next = good > limit / 2 ? limit : good * 2;
    if (next == good)
      return std::optional<int64_t>(good);
    FailureOr<bool> ok = fits(next);
    if (failed(ok))
      return failure();
    if (*ok)
      good = next;
    else
      bad = next;
  }
  while (bad - good > 1) {
    int64_t mid = good + (bad - good) / 2;
    FailureOr<bool> ok = fits(mid);
    if (failed(ok))
      return failure();
    (*ok ? good : bad) = mid;
  }
  return std::optional<int64_t>(good);
}
