//===- Html.cpp - a self-contained page with the memory timeline ----------===//
//
// One HTML file, no network, no script: a banner with the step's
// configuration, the GPU and the budget's verdict; an SVG stacked-area chart
// of the live bytes per category over the step's ops (from the memory
// analysis's event stream) with the phases as bands, the peak marked (its
// largest tensors on hover) and every column's op on hover; a zoom on the
// region around the peak whose axis starts near the smallest live bytes
// there, so the flat band of the persistent state does not hide it; the
// module tree (per-module parameters and their bytes, forward FLOPs and
// saved bytes, collapsible at any depth); and the per-layer table.
//
// At LLM scale a step has tens of thousands of ops: the charts draw at most
// one column per pixel, each the op with the most live bytes in its range
// (so the peak is always drawn), and a label is drawn only where it does not
// overlap another; each label's length is fixed with textLength so the
// layout does not depend on the reader's fonts.
//
//===----------------------------------------------------------------------===//

#include "ReportData.h"

#include "vram/Analysis/StepInfo.h"
#include "vram/Dialect/NN/NNOps.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>

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

static const char *kCategoryColors[kNumMemoryCategories] = {
    "#4e79a7", "#9c755f", "#bab0ac", "#f28e2b",
    "#e15759", "#76b7b2", "#edc948", "#b07aa1"};

/// The stacking order, bottom first: the persistent state, then what comes
/// and goes, so that the zoom's axis (which starts near the smallest live
/// bytes around the peak) leaves out the persistent bytes and keeps the rest.
static const MemoryCategory kStackOrder[kNumMemoryCategories] = {
    MemoryCategory::Parameters,     MemoryCategory::Buffers,
    MemoryCategory::OptimizerState, MemoryCategory::Gradients,
    MemoryCategory::Inputs,         MemoryCategory::KvCache,
    MemoryCategory::Activations,    MemoryCategory::Temporaries};

/// The bands: the step's phases, and a generation program's two parts.
struct PhaseStyle {
  const char *name, *color;
};
static const PhaseStyle kPhaseStyles[] = {
    {"forward", "#dceaf7"},   {"backward", "#fbe3cc"}, {"optimizer", "#dff0d8"},
    {"recompute", "#eadcf2"}, {"prefill", "#dceaf7"},  {"decode", "#fdf1c7"}};
/// The style of `phase` (the enum's order), or of a generation's part.
static const PhaseStyle &getPhaseStyle(StepPhase phase) {
  return kPhaseStyles[static_cast<unsigned>(phase)];
}
static const PhaseStyle &kPrefillStyle = kPhaseStyles[4];
static const PhaseStyle &kDecodeStyle = kPhaseStyles[5];

namespace {
/// A chart's geometry: op indices [first, last] drawn over `width` pixels.
struct ChartFrame {
  double left = 86, top = 40, width = 960, height = 300;
  unsigned first = 0, last = 0;
  double floor = 0, ceiling = 1; ///< the y axis's range in bytes

  double x(double op) const {
    return left + width * (op - first) / std::max(1u, last - first);
  }
  double y(double bytes) const {
    double clamped = std::clamp(bytes, floor, ceiling);
    return top + height * (1 - (clamped - floor) / (ceiling - floor));
  }
  double right() const { return left + width; }
  double bottom() const { return top + height; }
};

/// Text whose drawn length is fixed (textLength), so that overlap can be
/// decided here: about 0.6 em per character of a sans-serif font.
struct Label {
  double x, y, length;
  std::string text;
  unsigned fontSize;
};

double labelLength(StringRef text, unsigned fontSize) {
  return 0.6 * fontSize * text.size();
}

/// Labels placed left to right in a row, each only where it clears the
/// previous one and the row's end.
class LabelRow {
public:
  LabelRow(double begin, double end) : end(end), next(begin) {}
  /// Places `text` at `x` or, near the row's end, as far right as fits;
  /// false when it would overlap.
  bool place(double x, double y, StringRef text, unsigned fontSize,
             std::vector<Label> &labels) {
    double length = labelLength(text, fontSize);
    x = std::min(x, end - length);
    if (x < next)
      return false;
    labels.push_back({x, y, length, text.str(), fontSize});
    next = x + length + 6;
    return true;
  }

private:
  double end, next;
};

void writeLabel(const Label &label, StringRef cls, llvm::raw_ostream &os) {
  os << llvm::formatv("<text class=\"{0}\" x=\"{1:f1}\" y=\"{2:f1}\" "
                      "font-size=\"{3}\" textLength=\"{4:f1}\" "
                      "lengthAdjust=\"spacingAndGlyphs\">{5}</text>\n",
                      cls, label.x, label.y, label.fontSize, label.length,
                      escapeHtml(label.text));
}

/// The live bytes per category while each op runs, and their total.
struct LiveSeries {
  std::vector<CategoryBytes> bytes;
  std::vector<int64_t> total;
};

LiveSeries computeLiveSeries(const MemoryAnalysis &memory) {
  ArrayRef<Storage> storages = memory.getStorages();
  unsigned numOps = memory.getNumOps();
  LiveSeries series;
  series.bytes.resize(numOps + 1);
  series.total.resize(numOps + 1);
  CategoryBytes live = {};
  int64_t total = 0;
  for (unsigned i = 0; i <= numOps; ++i) {
    for (const MemoryEvent &e : memory.getAllocEvents(i)) {
      live[static_cast<unsigned>(storages[e.storage].category)] +=
          storages[e.storage].bytes;
      total += storages[e.storage].bytes;
    }
    series.bytes[i] = live;
    series.total[i] = total;
    for (const MemoryEvent &e : memory.getFreeEvents(i)) {
      live[static_cast<unsigned>(storages[e.storage].category)] -=
          storages[e.storage].bytes;
      total -= storages[e.storage].bytes;
    }
  }
  return series;
}

/// The ops drawn for [first, last]: every op when they fit the width, else
/// one per pixel column, the op with the most live bytes in its range.
std::vector<unsigned> pickColumns(const LiveSeries &series, unsigned first,
                                  unsigned last, unsigned maxColumns) {
  std::vector<unsigned> columns;
  unsigned count = last - first + 1;
  if (count <= maxColumns) {
    for (unsigned i = first; i <= last; ++i)
      columns.push_back(i);
    return columns;
  }
  for (unsigned c = 0; c < maxColumns; ++c) {
    unsigned begin = first + uint64_t(count) * c / maxColumns;
    unsigned end = first + uint64_t(count) * (c + 1) / maxColumns;
    unsigned best = begin;
    for (unsigned i = begin; i < end; ++i)
      if (series.total[i] > series.total[best])
        best = i;
    columns.push_back(best);
  }
  return columns;
}

/// A contiguous run of ops in one phase.
struct PhaseRun {
  const PhaseStyle *style;
  unsigned first, last;
};

/// The phases' runs; a generation program's forward splits at its first
/// token's choice (nn.next_token): the prefill, then the last decode step.
std::vector<PhaseRun> computePhaseRuns(const MemoryAnalysis &memory,
                                       bool generation) {
  std::vector<PhaseRun> runs;
  bool decoding = false;
  for (unsigned i = 1; i <= memory.getNumOps(); ++i) {
    Operation *op = memory.getOp(i);
    if (op->hasTrait<OpTrait::IsTerminator>())
      continue;
    const PhaseStyle *style = &getPhaseStyle(getStepPhase(op));
    if (generation)
      style = decoding ? &kDecodeStyle : &kPrefillStyle;
    decoding |= isa<nn::NextTokenOp>(op);
    if (!runs.empty() && runs.back().style == style)
      runs.back().last = i;
    else
      runs.push_back({style, i, i});
  }
  return runs;
}

std::string describeOp(const MemoryAnalysis &memory, unsigned i) {
  if (i == 0 || i > memory.getNumOps())
    return "before the step";
  Operation *op = memory.getOp(i);
  std::string name = getLayerName(op->getLoc());
  return llvm::formatv(
             "op {0}: {1}({2}, {3})", i, name.empty() ? "" : name + " ",
             op->getName().getStringRef(), stringifyEnum(getStepPhase(op)))
      .str();
}

/// One chart: phase bands and their labels, the stacked categories, a
/// hover title per column, the axes. Labels go to `labels`; the caller
/// writes them last so that they are drawn over the areas.
void writeChart(const MemoryAnalysis &memory, const LiveSeries &series,
                ArrayRef<PhaseRun> runs, const ChartFrame &frame,
                std::vector<Label> &labels, llvm::raw_ostream &os) {
  // Phase bands behind the areas, and a strip above the chart naming them.
  LabelRow phaseLabels(frame.left, frame.right());
  for (const PhaseRun &run : runs) {
    if (run.last < frame.first || run.first > frame.last)
      continue;
    double x0 = frame.x(std::max<double>(run.first - 0.5, frame.first));
    double x1 = frame.x(std::min<double>(run.last + 0.5, frame.last));
    StringRef phase = run.style->name;
    const char *color = run.style->color;
    os << llvm::formatv(
        "<g class=\"phase\" data-phase=\"{0}\"><title>{0}: ops {1}-{2}"
        "</title><rect x=\"{3:f1}\" y=\"{4:f1}\" width=\"{5:f2}\" "
        "height=\"{6:f1}\" fill=\"{7}\"/><rect x=\"{3:f1}\" y=\"{8:f1}\" "
        "width=\"{5:f2}\" height=\"8\" fill=\"{7}\" stroke=\"#888\" "
        "stroke-width=\"0.3\"/></g>\n",
        phase, run.first, run.last, x0, frame.top, std::max(x1 - x0, 0.5),
        frame.height, color, frame.top - 12);
    phaseLabels.place(x0 + 1, frame.top - 16, phase, 11, labels);
  }
  // Stacked areas, bottom category first.
  std::vector<unsigned> columns = pickColumns(
      series, frame.first, frame.last, static_cast<unsigned>(frame.width));
  std::vector<double> below(columns.size(), 0);
  for (MemoryCategory category : kStackOrder) {
    unsigned c = static_cast<unsigned>(category);
    std::string upper, lower;
    for (size_t k = 0; k < columns.size(); ++k) {
      double x = frame.x(columns[k]);
      double above = below[k] + series.bytes[columns[k]][c];
      upper += llvm::formatv("{0:f1},{1:f1} ", x, frame.y(above)).str();
      lower =
          llvm::formatv("{0:f1},{1:f1} ", x, frame.y(below[k])).str() + lower;
      below[k] = above;
    }
    os << "<polygon class=\"category\" data-category=\""
       << stringifyEnum(static_cast<MemoryCategory>(c)) << "\" fill=\""
       << kCategoryColors[c] << "\" points=\"" << upper << lower << "\"/>\n";
  }
  // Each column's op and live bytes on hover.
  os << "<g class=\"hover\" fill=\"transparent\">";
  for (size_t k = 0; k < columns.size(); ++k) {
    double x0 =
        k ? (frame.x(columns[k - 1]) + frame.x(columns[k])) / 2 : frame.left;
    double x1 = k + 1 < columns.size()
                    ? (frame.x(columns[k]) + frame.x(columns[k + 1])) / 2
                    : frame.right();
    os << llvm::formatv("<rect x=\"{0:f1}\" y=\"{1:f1}\" width=\"{2:f2}\" "
                        "height=\"{3:f1}\"><title>{4}: {5} live</title>"
                        "</rect>",
                        x0, frame.top, std::max(x1 - x0, 0.1), frame.height,
                        escapeHtml(describeOp(memory, columns[k])),
                        humanBytes(series.total[columns[k]]));
  }
  os << "</g>\n";
  // Axes: five ticks from the floor to the ceiling.
  os << llvm::formatv("<line x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\" "
                      "stroke=\"#000\"/><line x1=\"{0}\" x2=\"{3}\" y1=\"{2}\" "
                      "y2=\"{2}\" stroke=\"#000\"/>\n",
                      frame.left, frame.top, frame.bottom(), frame.right());
  for (int tick = 0; tick <= 4; ++tick) {
    double bytes = frame.floor + (frame.ceiling - frame.floor) * tick / 4;
    std::string text = humanBytes(static_cast<int64_t>(bytes));
    double length = labelLength(text, 11);
    labels.push_back(
        {frame.left - 6 - length, frame.y(bytes) + 4, length, text, 11});
  }
}
} // namespace

/// The step as configured: one row per fact, each with its key.
static void writeBanner(const Analyses &a, const ReportOptions &options,
                        llvm::raw_ostream &os) {
  const MemoryAnalysis &memory = *a.memory;
  os << "<header id=\"banner\">\n<h1>" << escapeHtml(options.modelName)
     << "</h1>\n";
  if (const auto &b = options.budget)
    os << "<p id=\"verdict\" class=\"" << (b->fits() ? "within" : "over")
       << "\">" << escapeHtml(describeBudget(*b)) << "</p>\n";
  os << "<dl id=\"config\">\n";
  auto item = [&](StringRef key, const std::string &value) {
    os << "<div data-key=\"" << key << "\"><dt>" << key << "</dt><dd>"
       << escapeHtml(value) << "</dd></div>\n";
  };
  auto jsonString = [](const llvm::json::Value &v) {
    if (auto s = v.getAsString())
      return s->str();
    return std::string();
  };
  item("mode", a.mode);
  std::string batch = a.batch ? std::to_string(*a.batch) : "?";
  if (a.gradAccum > 1)
    batch += " x " + std::to_string(a.gradAccum) + " micro-batches";
  item("batch", batch);
  item("precision", a.precision);
  if (a.mode == "train")
    item("optimizer", a.optimizer.value_or("?") +
                          (a.optimizerInBackward ? " (in backward)" : "") +
                          (a.ema ? " + EMA" : ""));
  if (!a.lora.empty())
    item("lora", a.lora);
  if (!a.checkpoint.empty())
    item("checkpoint", llvm::join(a.checkpoint, ", "));
  if (auto q = dyn_cast_or_null<nn::QuantizationAttr>(a.quantize)) {
    std::string text;
    llvm::raw_string_ostream os(text);
    if (q.isInt8())
      os << "int8, threshold "
         << llvm::format("%g", q.getThreshold().convertToDouble()) << ", "
         << q.getOutlierCols() << " outlier columns";
    else
      os << "4-bit " << stringifyEnum(q.getQuantType())
         << (q.getDoubleQuant() ? ", double" : "");
    item("quantize", text);
  }
  if (a.parallel)
    item("parallel", llvm::formatv("{0} over {1} GPUs (figures of one rank)",
                                   a.parallel->getStrategyName(),
                                   a.parallel->layout.getWorldSize())
                         .str());
  if (std::string torch = jsonString(a.torchVersion); !torch.empty())
    item("torch", torch);
  if (std::string device = jsonString(a.device); !device.empty())
    item("device", device);
  if (a.deviceModel) {
    std::string gpu = a.deviceModel->gpu;
    if (a.deviceModel->capacityBytes)
      gpu += " (" + humanBytes(a.deviceModel->capacityBytes) + ")";
    item("gpu", gpu);
  }
  item("peak", humanBytes(memory.getPeakBytes()) + " exact");
  if (a.allocatorName != "exact") {
    item("allocated",
         humanBytes(a.allocatorPeaks.allocated) + " (max_memory_allocated)");
    item("reserved",
         humanBytes(a.allocatorPeaks.reserved) + " (max_memory_reserved)");
  }
  if (a.deviceModel)
    item("device_memory", humanBytes(a.devicePeak) + " (nvidia-smi: " +
                              humanBytes(a.deviceModel->contextBytes) +
                              " CUDA context)");
  item("persistent", humanBytes(memory.getPersistentBytes()));
  item("saved_for_backward", humanBytes(memory.getSavedForBackwardBytes()));
  item("parameters", withCommas(a.parameters.count));
  if (const auto &b = options.budget)
    item("budget",
         humanBytes(b->budget) + " (" + b->metric + "): " +
             (b->fits() ? "within, margin " + humanBytes(b->budget - b->used)
                        : "over by " + humanBytes(b->used - b->budget)));
  if (const auto &v = options.validation)
    item("validation",
         llvm::formatv("{0}: measured {1}, predicted {2}", v->device,
                       withCommas(v->measuredPeakBytes),
                       withCommas(v->predictedPeakBytes))
             .str());
  os << "</dl>\n";
  if (const auto &b = options.budget) {
    std::vector<std::string> changes = describeBudgetChanges(*b);
    if (!changes.empty()) {
      os << "<ul id=\"changes\">\n";
      for (const std::string &line : changes)
        os << "<li>" << escapeHtml(line) << "</li>\n";
      os << "</ul>\n";
    }
  }
  os << "</header>\n";
}

/// A page stays readable (and loads) at any depth of model: a module's
/// children and the layer table list at most this many rows.
static constexpr size_t kMaxRowsPerList = 1000;

namespace {
/// A module of the tree: its figures summed over the layers under it.
struct ModuleNode {
  int64_t params = 0, paramBytes = 0, flops = 0, savedBytes = 0;
  std::string op, outputShape; ///< a leaf's (a layer row's)
  std::map<std::string, unsigned> childIndex;
  std::vector<std::pair<std::string, std::unique_ptr<ModuleNode>>> children;

  ModuleNode &child(StringRef name) {
    auto [it, inserted] = childIndex.try_emplace(name.str(), children.size());
    if (inserted)
      children.emplace_back(name.str(), std::make_unique<ModuleNode>());
    return *children[it->second].second;
  }
};

void writeModule(StringRef path, StringRef name, const ModuleNode &node,
                 unsigned depth, llvm::raw_ostream &os) {
  std::string figures =
      llvm::formatv("<span class=\"figures\"><span class=\"params\">{0}"
                    "</span> params (<span class=\"param-bytes\">{1}</span>)"
                    " · <span class=\"flops\">{2}</span> forward FLOPs · "
                    "<span class=\"saved\">{3}</span> saved</span>",
                    withCommas(node.params), humanBytes(node.paramBytes),
                    withCommas(node.flops), humanBytes(node.savedBytes))
          .str();
  std::string leaf;
  if (!node.op.empty())
    leaf = " <code>" + escapeHtml(node.op) + "</code> " +
           escapeHtml(node.outputShape);
  if (node.children.empty()) {
    os << "<div class=\"module leaf\" data-name=\"" << escapeHtml(path)
       << "\"><span class=\"name\">" << escapeHtml(name) << "</span>" << leaf
       << " " << figures << "</div>\n";
    return;
  }
  os << "<details class=\"module\" data-name=\"" << escapeHtml(path) << "\""
     << (depth == 0 ? " open" : "") << "><summary><span class=\"name\">"
     << escapeHtml(name) << "</span>" << leaf << " " << figures
     << "</summary>\n";
  size_t shown = std::min(node.children.size(), kMaxRowsPerList);
  for (const auto &[childName, child] :
       ArrayRef(node.children).take_front(shown))
    writeModule(path.empty() ? childName : (path + "." + childName).str(),
                childName, *child, depth + 1, os);
  if (shown < node.children.size())
    os << "<div class=\"module more\">... "
       << withCommas(node.children.size() - shown)
       << " more modules (the JSON report lists every layer)</div>\n";
  os << "</details>\n";
}
} // namespace

/// The module tree, from the layer rows' dotted names: a module's figures
/// are its layers' (a shared module's parameters once, its FLOPs and saved
/// bytes per call); the root's parameters are the model's.
static void writeModuleTree(const Analyses &a, StringRef modelName,
                            llvm::raw_ostream &os) {
  ModuleNode root;
  for (const LayerRow &row : a.layers) {
    SmallVector<StringRef> parts;
    StringRef name = row.name.empty() ? StringRef("-") : StringRef(row.name);
    name.split(parts, '.');
    int64_t params = row.call == 1 ? row.params : 0;
    int64_t paramBytes = row.call == 1 ? row.paramBytes : 0;
    root.params += params;
    root.flops += row.flops;
    root.savedBytes += row.savedBytes;
    ModuleNode *node = &root;
    for (StringRef part : parts) {
      node = &node->child(part);
      node->params += params;
      node->paramBytes += paramBytes;
      node->flops += row.flops;
      node->savedBytes += row.savedBytes;
    }
    if (node->children.empty() && node->op.empty()) {
      node->op = row.op;
      node->outputShape = row.outputShape;
    }
  }
  // A tied weight (an LM head sharing the embedding's) is in two modules'
  // rows; the model counts it once.
  root.params = a.parameters.count;
  root.paramBytes = a.parameters.bytes;
  os << "<h2>Modules</h2>\n<div id=\"modules\">\n";
  writeModule("", modelName, root, 0, os);
  os << "</div>\n";
}

void vram::report::writeHtml(const Analyses &a, const ReportOptions &options,
                             llvm::raw_ostream &os) {
  const MemoryAnalysis &memory = *a.memory;
  unsigned numOps = memory.getNumOps();
  LiveSeries series = computeLiveSeries(memory);
  std::vector<PhaseRun> runs =
      computePhaseRuns(memory, a.generation.has_value());
  unsigned peakIndex = memory.getPeakIndex();
  double peak = std::max<int64_t>(memory.getPeakBytes(), 1);

  os << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n<title>"
     << escapeHtml("vram-opt: " + options.modelName) << "</title>\n<style>"
     << "body{font-family:sans-serif;margin:24px}"
        "#banner dl{display:flex;flex-wrap:wrap;gap:4px 18px;margin:8px 0}"
        "#banner dl div{display:flex;gap:6px}#banner dt{color:#555}"
        "#banner dd{margin:0;font-weight:bold}"
        "#verdict{font-size:1.2em;font-weight:bold;padding:4px 8px;"
        "display:inline-block}#verdict.within{background:#dff0d8}"
        "#verdict.over{background:#f8d7da}"
        "svg text{font-family:sans-serif}"
        ".legend span{display:inline-block;width:12px;height:12px;"
        "margin:0 4px 0 12px}"
        "#modules details{margin-left:16px}#modules .leaf{margin-left:32px}"
        "#modules summary{cursor:pointer}.figures{color:#555;"
        "font-size:0.9em;margin-left:8px}"
        "table{border-collapse:collapse}td,th{padding:2px 8px;"
        "border-bottom:1px solid #ddd;text-align:right}"
        "td:first-child,th:first-child{text-align:left}</style></head>"
        "<body>\n";
  writeBanner(a, options, os);

  // The whole step.
  ChartFrame whole;
  whole.first = 0;
  whole.last = numOps;
  whole.ceiling = peak;
  // The zoom: the ops around the peak, its axis from just below the
  // smallest live bytes there.
  unsigned radius = std::max(20u, numOps / 40);
  ChartFrame zoom = whole;
  zoom.first = peakIndex > radius ? peakIndex - radius : 0;
  zoom.last = std::min(numOps, peakIndex + radius);
  int64_t smallest = peak;
  for (unsigned i = zoom.first; i <= zoom.last; ++i)
    smallest = std::min(smallest, series.total[i]);
  zoom.floor = std::max(0.0, smallest - 0.05 * (peak - smallest));
  zoom.ceiling = peak;
  if (zoom.ceiling - zoom.floor < 1)
    zoom.floor = std::max(0.0, zoom.ceiling - 1);

  std::string peakLabel = "peak " + humanBytes(memory.getPeakBytes());
  if (Operation *op = memory.getPeakOp()) {
    std::string name = getLayerName(op->getLoc());
    if (name.size() > 40)
      name = "..." + name.substr(name.size() - 37);
    peakLabel +=
        " at " + name + " (" + op->getName().getStringRef().str() + ")";
  }
  std::string peakTitle = describeOp(memory, peakIndex) + ": " +
                          humanBytes(memory.getPeakBytes()) + " live";
  for (unsigned i : memory.getTopStoragesAtPeak(options.topTensors)) {
    const Storage &t = memory.getStorages()[i];
    peakTitle += "\n" + humanBytes(t.bytes) + "  " +
                 stringifyEnum(t.category).str() + "  " + describeStorage(t);
  }

  auto writeSvg = [&](StringRef id, StringRef caption, const ChartFrame &frame,
                      bool markZoom) {
    std::vector<Label> labels;
    os << llvm::formatv("<figure><svg id=\"{0}\" xmlns=\"http://www.w3.org/"
                        "2000/svg\" width=\"{1}\" height=\"{2}\" "
                        "role=\"img\">\n",
                        id, frame.right() + 20, frame.bottom() + 44);
    writeChart(memory, series, runs, frame, labels, os);
    if (markZoom)
      os << llvm::formatv(
          "<rect id=\"zoom-window\" x=\"{0:f1}\" y=\"{1}\" "
          "width=\"{2:f1}\" height=\"{3}\" fill=\"none\" "
          "stroke=\"#333\" stroke-dasharray=\"2 2\"/>\n",
          frame.x(zoom.first), frame.top,
          std::max(frame.x(zoom.last) - frame.x(zoom.first), 1.0),
          frame.height);
    // The peak: its largest tensors on hover; its label inside the chart,
    // on the side with room.
    double px = frame.x(peakIndex), py = frame.y(peak);
    os << llvm::formatv("<circle class=\"peak\" cx=\"{0:f1}\" cy=\"{1:f1}\" "
                        "r=\"6\" fill=\"#fff\" fill-opacity=\"0.4\" "
                        "stroke=\"#000\" stroke-width=\"2\"><title>{2}"
                        "</title></circle>\n",
                        px, py, escapeHtml(peakTitle));
    double length = labelLength(peakLabel, 12);
    bool left = px + 10 + length > frame.right();
    double lx = left ? std::max(frame.left + 4, px - 10 - length) : px + 10;
    labels.push_back({lx, py + 24, length, peakLabel, 12});
    std::string axis =
        frame.first == 0 && frame.last == numOps
            ? llvm::formatv("ops of the step ({0})", numOps).str()
            : llvm::formatv("ops {0}-{1} of {2}, around the peak; the axis "
                            "starts at {3}",
                            frame.first, frame.last, numOps,
                            humanBytes(static_cast<int64_t>(frame.floor)))
                  .str();
    LabelRow(frame.left, frame.right())
        .place(frame.left + frame.width / 2 - labelLength(axis, 11) / 2,
               frame.bottom() + 30, axis, 11, labels);
    for (const Label &label : labels)
      writeLabel(label, "label", os);
    os << "</svg><figcaption>" << escapeHtml(caption)
       << "</figcaption></figure>\n";
  };
  os << "<h2>Memory over the step</h2>\n";
  writeSvg("timeline", "Live bytes per category while each op runs.", whole,
           /*markZoom=*/zoom.first > 0 || zoom.last < numOps);
  os << "<p class=\"legend\">";
  for (MemoryCategory category : kStackOrder)
    os << "<span data-category=\"" << stringifyEnum(category)
       << "\" style=\"background:"
       << kCategoryColors[static_cast<unsigned>(category)] << "\"></span>"
       << stringifyEnum(category);
  os << "</p>\n<p class=\"legend\">phases:";
  // The phases the step has, in the order they first run.
  std::vector<const PhaseStyle *> present;
  for (const PhaseRun &run : runs)
    if (!llvm::is_contained(present, run.style))
      present.push_back(run.style);
  for (const PhaseStyle *style : present)
    os << "<span data-phase=\"" << style->name
       << "\" style=\"background:" << style->color
       << ";border:1px solid #888\"></span>" << style->name;
  os << "</p>\n";
  os << "<h2>Around the peak</h2>\n";
  writeSvg("zoom",
           "The ops around the peak; the persistent bytes below the "
           "axis's start are left out.",
           zoom, /*markZoom=*/false);

  writeModuleTree(a, options.modelName, os);

  os << "<details id=\"layer-table\"><summary>Layers (" << a.layers.size()
     << " rows)</summary>\n<table id=\"layers\"><tr><th>layer</th><th>op"
        "</th><th>output shape</th><th>params</th><th>forward FLOPs</th>"
        "<th>saved</th></tr>\n";
  for (const LayerRow &row : ArrayRef(a.layers).take_front(
           std::min(a.layers.size(), kMaxRowsPerList)))
    os << "<tr><td>"
       << escapeHtml((row.name.empty() ? "-" : row.name) +
                     (row.call > 1 ? " #" + std::to_string(row.call) : ""))
       << "</td><td>" << escapeHtml(row.op) << "</td><td>"
       << escapeHtml(row.outputShape) << "</td><td>" << withCommas(row.params)
       << "</td><td>" << withCommas(row.flops) << "</td><td>"
       << humanBytes(row.savedBytes) << "</td></tr>\n";
  os << "</table>\n";
  if (a.layers.size() > kMaxRowsPerList)
    os << "<p class=\"more\">... "
       << withCommas(a.layers.size() - kMaxRowsPerList)
       << " more rows (the JSON report lists every layer)</p>\n";
  os << "</details>\n</body></html>\n";
}
