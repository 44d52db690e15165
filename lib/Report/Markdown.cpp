//===- Markdown.cpp - a pull-request comment ------------------------------===//
//
// Summary, breakdown at the peak and the largest tensors as Markdown tables;
// with a baseline report (--compare), a delta table per category and an
// explicit regression line when the peak grew beyond the threshold.
//
//===----------------------------------------------------------------------===//

#include "ReportData.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>

using namespace mlir;
using namespace vram;
using namespace vram::report;
namespace json = llvm::json;

namespace {
/// The numbers a comparison reads from a JSON report (docs/Report.md).
struct Figures {
  int64_t peak = 0, persistent = 0, saved = 0, params = 0;
  CategoryBytes atPeak = {};
};
} // namespace

static Figures figuresOf(const Analyses &a) {
  Figures f;
  f.peak = a.memory->getPeakBytes();
  f.persistent = a.memory->getPersistentBytes();
  f.saved = a.memory->getSavedForBackwardBytes();
  f.params = a.parameters.count;
  f.atPeak = a.memory->getBreakdown(a.memory->getPeakIndex());
  return f;
}

/// Reads a baseline report; an error message on failure.
static llvm::Expected<Figures> readBaseline(StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return llvm::createStringError(buffer.getError(),
                                   "cannot read baseline '" + path + "'");
  llvm::Expected<json::Value> value = json::parse((*buffer)->getBuffer());
  if (!value)
    return value.takeError();
  const json::Object *report = value->getAsObject();
  const json::Object *memory = report ? report->getObject("memory") : nullptr;
  const json::Object *parameters =
      report ? report->getObject("parameters") : nullptr;
  const json::Object *atPeak = memory ? memory->getObject("at_peak") : nullptr;
  if (!memory || !parameters || !atPeak)
    return llvm::createStringError("baseline '" + path +
                                   "' is not a vram-opt JSON report");
  Figures f;
  auto get = [](const json::Object *o, StringRef key) {
    return o->getInteger(key).value_or(0);
  };
  f.peak = get(memory, "peak_bytes");
  f.persistent = get(memory, "persistent_bytes");
  f.saved = get(memory, "saved_for_backward_bytes");
  f.params = get(parameters, "count");
  for (unsigned c = 0; c < kNumMemoryCategories; ++c)
    f.atPeak[c] = get(atPeak, stringifyEnum(static_cast<MemoryCategory>(c)));
  return f;
}

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
  return signedPercent(double(now - before) / before);
}

void vram::report::writeMarkdown(const Analyses &a,
                                 const ReportOptions &options,
                                 llvm::raw_ostream &os) {
  const MemoryAnalysis &memory = *a.memory;
  Figures now = figuresOf(a);
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

  std::optional<Figures> before;
  if (!options.comparePath.empty()) {
    llvm::Expected<Figures> baseline = readBaseline(options.comparePath);
    if (baseline)
      before = *baseline;
    else
      os << "\n> baseline not compared: "
         << llvm::toString(baseline.takeError()) << "\n";
  }

  os << "\n#### At the peak\n\n";
  if (before)
    os << "| category | now | baseline | change |\n|---|---:|---:|---:|\n";
  else
    os << "| category | bytes | share |\n|---|---:|---:|\n";
  for (unsigned c = 0; c < kNumMemoryCategories; ++c) {
    StringRef name = stringifyEnum(static_cast<MemoryCategory>(c));
    if (before)
      os << "| " << name << " | " << humanBytes(now.atPeak[c]) << " | "
         << humanBytes(before->atPeak[c]) << " | "
         << signedBytes(now.atPeak[c] - before->atPeak[c]) << " ("
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
       << signedBytes(now.peak - before->peak) << " ("
       << percent(now.peak, before->peak) << ")** |\n";
    double growth =
        before->peak ? double(now.peak - before->peak) / before->peak : 0;
    os << "\n";
    if (growth > options.regressionThreshold)
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
}
