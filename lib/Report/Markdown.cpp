//===- Markdown.cpp - a pull-request comment ------------------------------===//
//
// Summary, breakdown at the peak and the largest tensors as Markdown tables;
// with a baseline report (--compare), a delta table per category and an
// explicit regression line when the peak grew beyond the threshold.
//
//===----------------------------------------------------------------------===//

#include "ReportData.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace vram;
using namespace vram::report;
namespace json = llvm::json;

using Figures = BaselineFigures;

static Figures figuresOf(const Analyses &a) {
  Figures f;
  f.peak = a.memory->getPeakBytes();
  f.persistent = a.memory->getPersistentBytes();
  f.saved = a.memory->getSavedForBackwardBytes();
  f.params = a.parameters.count;
  f.atPeak = a.memory->getBreakdown(a.memory->getPeakIndex());
  return f;
}

/// `now - before`, exactly. Both are byte counts in [0, INT64_MAX] (the
/// analyses' sizes are checked, the baseline reader rejects the rest), so
/// the difference lies in [-INT64_MAX, INT64_MAX]: it and its negation fit.
/// The computation is in __int128 all the same, clamped, so that a negative
/// figure could not make it overflow either.
static int64_t difference(int64_t now, int64_t before) {
  __int128 d = (__int128)now - (__int128)before;
  if (d > INT64_MAX)
    return INT64_MAX;
  if (d < -INT64_MAX)
    return -INT64_MAX;
  return (int64_t)d;
}

/// "+1.50 MiB", "-12 B", "0 B"; `delta` is a difference() (never INT64_MIN).
static std::string signedBytes(int64_t delta) {
  return (delta > 0   ? "+"
          : delta < 0 ? "-"
                      : "") +
         humanBytes(delta < 0 ? -delta : delta);
}

/// "+13.3%", "-5.8%", "+0.0%".
static std::string signedPercent(double fraction) {
  return (fraction < 0 ? "-" : "+") +
         llvm::formatv("{0:f1}%", std::abs(100 * fraction)).str();
}

static std::string percent(int64_t now, int64_t before) {
  if (!before)
    return now ? "new" : "+0.0%";
  return signedPercent(double(difference(now, before)) / double(before));
}

LogicalResult vram::report::writeMarkdown(const Analyses &a,
                                          const ReportOptions &options,
                                          llvm::raw_ostream &os) {
  // The baseline first: a bad one stops the run before anything is written.
  std::optional<Figures> before;
  if (!options.comparePath.empty()) {
    llvm::Expected<Figures> baseline = readBaseline(options.comparePath);
    if (!baseline)
      return emitError(UnknownLoc::get(a.func->getContext()))
             << llvm::toString(baseline.takeError());
    before = *baseline;
    // Deltas between two models mean nothing: say so, and still write them.
    Location loc = a.func->getLoc();
    if (!before->model.empty() && before->model != options.modelName)
      emitWarning(loc) << "the baseline is a report of '" << before->model
                       << "', this one of '" << options.modelName
                       << "': the comparison is across models";
    else if (!before->mode.empty() && before->mode != a.mode)
      emitWarning(loc) << "the baseline's step is '" << before->mode
                       << "', this one's '" << a.mode
                       << "': the comparison is across steps";
  }

  const MemoryAnalysis &memory = *a.memory;
  Figures now = figuresOf(a);
  bool regressed = false;
  os << "### vram-opt: " << options.modelName << " (" << a.mode;
  if (a.batch)
    os << ", batch " << *a.batch;
  os << ", " << a.precision << ")\n\n";
  os << "| | |\n|---|---:|\n";
  os << "| peak memory (exact) | " << humanBytes(now.peak) << " |\n";
  if (a.allocatorName != "exact") {
    os << "| allocated peak (" << a.allocatorName << ") | "
       << humanBytes(a.allocatorPeaks.allocated) << " |\n";
    os << "| reserved peak (" << a.allocatorName << ") | "
       << humanBytes(a.allocatorPeaks.reserved) << " |\n";
  }
  os << "| persistent | " << humanBytes(now.persistent) << " |\n";
  os << "| saved for backward | " << humanBytes(now.saved) << " |\n";
  os << "| parameters | " << withCommas(now.params) << " |\n";
  if (Operation *op = memory.getPeakOp())
    os << "| peak at | `" << getLayerName(op->getLoc()) << "` ("
       << op->getName() << ", " << stringifyEnum(getStepPhase(op)) << ") |\n";
  if (const auto &b = options.budget) {
    os << "\n"
       << (b->fits() ? "Within budget" : "**Over budget**") << ": "
       << describeBudgetFigures(*b) << ".\n";
    for (const std::string &line : describeBudgetChanges(*b))
      os << "- " << line << "\n";
  }

  os << "\n#### At the peak\n\n";
  if (before)
    os << "| category | now | baseline | change |\n|---|---:|---:|---:|\n";
  else
    os << "| category | bytes | share |\n|---|---:|---:|\n";
  for (unsigned c = 0; c < kNumMemoryCategories; ++c) {
    StringRef name = stringifyEnum(static_cast<MemoryCategory>(c));
    // Only generation has a KV cache.
    if (c == static_cast<unsigned>(MemoryCategory::KvCache) && !now.atPeak[c] &&
        (!before || !before->atPeak[c]))
      continue;
    if (before)
      os << "| " << name << " | " << humanBytes(now.atPeak[c]) << " | "
         << humanBytes(before->atPeak[c]) << " | "
         << signedBytes(difference(now.atPeak[c], before->atPeak[c])) << " ("
         << percent(now.atPeak[c], before->atPeak[c]) << ") |\n";
    else
      os << "| " << name << " | " << humanBytes(now.atPeak[c]) << " | "
         << llvm::formatv("{0:f1}%",
                          now.peak ? 100.0 * now.atPeak[c] / now.peak : 0.0)
         << " |\n";
  }
  if (before) {
    os << "| **peak** | **" << humanBytes(now.peak) << "** | **"
       << humanBytes(before->peak) << "** | **"
       << signedBytes(difference(now.peak, before->peak)) << " ("
       << percent(now.peak, before->peak) << ")** |\n";
    double growth = before->peak ? double(difference(now.peak, before->peak)) /
                                       double(before->peak)
                                 : 0;
    os << "\n";
    regressed = growth > options.regressionThreshold;
    if (regressed)
      os << llvm::formatv("**Regression:** the peak grew by {0:f1}% "
                          "(threshold {1:f1}%).\n",
                          100 * growth, 100 * options.regressionThreshold);
    else
      os << "No regression: the peak changed by " << signedPercent(growth)
         << llvm::formatv(" (threshold {0:f1}%).\n",
                          100 * options.regressionThreshold);
  }

  os << "\n#### Largest tensors at the peak\n\n| tensor | category | bytes "
        "|\n|---|---|---:|\n";
  for (unsigned i : memory.getTopStoragesAtPeak(options.topTensors)) {
    const Storage &t = memory.getStorages()[i];
    os << "| `" << describeStorage(t) << "` | " << stringifyEnum(t.category)
       << " | " << humanBytes(t.bytes) << " |\n";
  }
  if (regressed && options.failOnRegression)
    return emitError(a.func->getLoc())
           << llvm::formatv("the peak grew by {0} past the regression "
                            "threshold of {1:f1}% (--fail-on-regression)",
                            percent(now.peak, before->peak),
                            100 * options.regressionThreshold);
  return success();
}
