//===- Html.cpp - a self-contained page with the memory timeline ----------===//
//
// One HTML file, no network: a summary, an SVG stacked-area chart of the live
// bytes per category over the step's ops (from the memory analysis's event
// stream), the phase boundaries, the peak marked and labelled with its op,
// and the per-layer table.
//
//===----------------------------------------------------------------------===//

#include "ReportData.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace vram;
using namespace vram::report;

static std::string escapeHtml(StringRef text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '&':
      out += "&amp;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

static const char *kColors[kNumMemoryCategories] = {
    "#4e79a7", "#9c755f", "#bab0ac", "#f28e2b",
    "#e15759", "#76b7b2", "#edc948"};

void vram::report::writeHtml(const Analyses &a, const ReportOptions &options,
                             llvm::raw_ostream &os) {
  const MemoryAnalysis &memory = *a.memory;
  ArrayRef<Storage> storages = memory.getStorages();
  unsigned numOps = memory.getNumOps();
  // Live bytes per category while each op runs, from the event stream.
  std::vector<CategoryBytes> series(numOps + 1);
  CategoryBytes live = {};
  for (unsigned i = 0; i <= numOps; ++i) {
    for (const MemoryEvent &e : memory.getAllocEvents(i))
      live[static_cast<unsigned>(storages[e.storage].category)] +=
          storages[e.storage].bytes;
    series[i] = live;
    for (const MemoryEvent &e : memory.getFreeEvents(i))
      live[static_cast<unsigned>(storages[e.storage].category)] -=
          storages[e.storage].bytes;
  }
  const double width = 960, height = 360, left = 70, top = 20;
  double peak = std::max<int64_t>(memory.getPeakBytes(), 1);
  auto x = [&](unsigned i) { return left + width * i / std::max(numOps, 1u); };
  auto y = [&](double bytes) { return top + height * (1 - bytes / peak); };

  os << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n<title>"
     << escapeHtml("vram-opt: " + options.modelName) << "</title>\n<style>"
     << "body{font-family:sans-serif;margin:24px}"
        "table{border-collapse:collapse}td,th{padding:2px 8px;"
        "border-bottom:1px solid #ddd;text-align:right}"
        "td:first-child,th:first-child{text-align:left}"
        ".legend span{display:inline-block;width:12px;height:12px;"
        "margin:0 4px 0 12px}</style></head><body>\n";
  os << "<h1>" << escapeHtml(options.modelName) << "</h1>\n<p>"
     << escapeHtml(a.mode)
     << (a.batch ? ", batch " + std::to_string(*a.batch) : std::string())
     << ", " << escapeHtml(a.precision) << ". Peak memory (exact) <b>"
     << humanBytes(memory.getPeakBytes()) << "</b>";
  if (Operation *op = memory.getPeakOp())
    os << " at <code>" << escapeHtml(getLayerName(op->getLoc())) << "</code> ("
       << escapeHtml(op->getName().getStringRef()) << ", "
       << stringifyEnum(getStepPhase(op)) << ")";
  os << "; saved for backward " << humanBytes(memory.getSavedForBackwardBytes())
     << "; persistent " << humanBytes(memory.getPersistentBytes()) << ".</p>\n";

  os << llvm::formatv("<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/"
                      "svg\" width=\"{0}\" height=\"{1}\" role=\"img\">\n",
                      left + width + 20, top + height + 40);
  // Stacked areas, bottom category first.
  for (unsigned c = 0; c < kNumMemoryCategories; ++c) {
    std::string upper, lower;
    for (unsigned i = 0; i <= numOps; ++i) {
      double below = 0;
      for (unsigned k = 0; k < c; ++k)
        below += series[i][k];
      double above = below + series[i][c];
      upper += llvm::formatv("{0:f1},{1:f1} ", x(i), y(above)).str();
      lower = llvm::formatv("{0:f1},{1:f1} ", x(i), y(below)).str() + lower;
    }
    os << "<polygon class=\"category\" data-category=\""
       << stringifyEnum(static_cast<MemoryCategory>(c)) << "\" fill=\""
       << kColors[c] << "\" points=\"" << upper << lower << "\"/>\n";
  }
  // Phase boundaries, each labelled with the phase it starts.
  if (numOps)
    os << llvm::formatv("<text x=\"{0:f1}\" y=\"{1}\" font-size=\"11\">{2}"
                        "</text>\n",
                        x(1) + 3, top + 12,
                        stringifyEnum(getStepPhase(memory.getOp(1))));
  for (unsigned i = 2; i <= numOps; ++i) {
    Operation *prev = memory.getOp(i - 1), *op = memory.getOp(i);
    if (!op->hasTrait<OpTrait::IsTerminator>() &&
        getStepPhase(prev) != getStepPhase(op))
      os << llvm::formatv(
          "<line class=\"phase\" x1=\"{0:f1}\" x2=\"{0:f1}\" y1=\"{1}\" "
          "y2=\"{2}\" stroke=\"#333\" stroke-dasharray=\"4 3\"/>"
          "<text x=\"{3:f1}\" y=\"{4}\" font-size=\"11\">{5}</text>\n",
          x(i), top, top + height, x(i) + 3,
          top + 12 + 12 * static_cast<unsigned>(getStepPhase(op)),
          stringifyEnum(getStepPhase(op)));
  }
  // The peak.
  unsigned peakIndex = memory.getPeakIndex();
  std::string peakLabel = humanBytes(memory.getPeakBytes());
  if (Operation *op = memory.getPeakOp())
    peakLabel += " at " + getLayerName(op->getLoc()) + " (" +
                 op->getName().getStringRef().str() + ")";
  // The label goes left of a peak in the right half of the chart.
  bool labelLeft = x(peakIndex) > left + width / 2;
  os << llvm::formatv("<circle id=\"peak\" cx=\"{0:f1}\" cy=\"{1:f1}\" r=\"5\" "
                      "fill=\"none\" stroke=\"#000\" stroke-width=\"2\"/>"
                      "<text x=\"{2:f1}\" y=\"{3:f1}\" font-size=\"12\" "
                      "text-anchor=\"{5}\">peak {4}</text>\n",
                      x(peakIndex), y(peak),
                      x(peakIndex) + (labelLeft ? -10 : 10), y(peak) + 28,
                      escapeHtml(peakLabel), labelLeft ? "end" : "start");
  // Axes.
  os << llvm::formatv("<line x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\" "
                      "stroke=\"#000\"/><line x1=\"{0}\" x2=\"{3}\" y1=\"{2}\" "
                      "y2=\"{2}\" stroke=\"#000\"/>\n",
                      left, top, top + height, left + width);
  for (int tick = 0; tick <= 4; ++tick)
    os << llvm::formatv("<text x=\"4\" y=\"{0:f1}\" font-size=\"11\">{1}</text>"
                        "\n",
                        y(peak * tick / 4) + 4,
                        humanBytes(int64_t(peak * tick / 4)));
  os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" font-size=\"11\">ops of the "
                      "step ({2})</text>\n</svg>\n",
                      left + width / 2 - 40, top + height + 30, numOps);
  os << "<p class=\"legend\">";
  for (unsigned c = 0; c < kNumMemoryCategories; ++c)
    os << "<span style=\"background:" << kColors[c] << "\"></span>"
       << stringifyEnum(static_cast<MemoryCategory>(c));
  os << "</p>\n";

  os << "<h2>Layers</h2>\n<table id=\"layers\"><tr><th>layer</th><th>op</th>"
        "<th>output shape</th><th>params</th><th>forward FLOPs</th>"
        "<th>saved</th></tr>\n";
  for (const LayerRow &row : a.layers)
    os << "<tr><td>"
       << escapeHtml((row.name.empty() ? "-" : row.name) +
                     (row.call > 1 ? " #" + std::to_string(row.call) : ""))
       << "</td><td>" << escapeHtml(row.op) << "</td><td>"
       << escapeHtml(row.outputShape) << "</td><td>" << withCommas(row.params)
       << "</td><td>" << withCommas(row.flops) << "</td><td>"
       << humanBytes(row.savedBytes) << "</td></tr>\n";
  os << "</table>\n</body></html>\n";
}
