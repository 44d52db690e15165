//===- Report.cpp - text and JSON reports ---------------------------------===//

#include "vram/Report/Report.h"
#include "vram/Analysis/FlopAnalysis.h"
#include "vram/Analysis/MemoryAnalysis.h"
#include "vram/Dialect/NN/NNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <map>

using namespace mlir;
using namespace vram;
namespace json = llvm::json;

namespace {
struct ParameterSummary {
  int64_t count = 0, trainable = 0, bytes = 0;
  int64_t bufferCount = 0, bufferBytes = 0;
};

struct LayerRow {
  std::string name;
  std::string op;
  std::string outputShape;
  int64_t params = 0;
  int64_t flops = 0;
  int64_t savedBytes = 0;
};

struct Analyses {
  func::FuncOp func;
  std::string mode;
  ParameterSummary parameters;
  FlopResult flops;
  MemoryResult memory;
  std::vector<LayerRow> layers;
  int64_t batch = 0;
};
} // namespace

static std::string typeString(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (auto tensor = dyn_cast<RankedTensorType>(type)) {
    os << "[";
    llvm::interleaveComma(tensor.getShape(), os);
    os << "] " << tensor.getElementType();
  } else {
    os << type;
  }
  return s;
}

/// "file:line:col" for file locations, the name (and file) of named ones.
static std::string locationString(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return llvm::formatv("{0}:{1}:{2}", file.getFilename().getValue(),
                         file.getLine(), file.getColumn())
        .str();
  if (auto name = dyn_cast<NameLoc>(loc)) {
    std::string child = locationString(name.getChildLoc());
    return child.empty() ? name.getName().str()
                         : name.getName().str() + " (" + child + ")";
  }
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (std::string s = locationString(inner); !s.empty())
        return s;
  return "";
}

static ParameterSummary summarizeParameters(func::FuncOp func) {
  ParameterSummary summary;
  func.walk([&](Operation *op) {
    if (auto param = dyn_cast<nn::ParamOp>(op)) {
      int64_t n = cast<RankedTensorType>(param.getType()).getNumElements();
      summary.count += n;
      if (param.getTrainable())
        summary.trainable += n;
      summary.bytes += getTensorBytes(param.getType()).value_or(0);
    } else if (auto buffer = dyn_cast<nn::BufferOp>(op)) {
      summary.bufferCount +=
          cast<RankedTensorType>(buffer.getType()).getNumElements();
      summary.bufferBytes += getTensorBytes(buffer.getType()).value_or(0);
    }
  });
  return summary;
}

/// One row per layer (ops grouped by their location's name), forward ops only.
static std::vector<LayerRow> buildLayerTable(func::FuncOp func,
                                             nn::FlopConvention convention,
                                             bool training,
                                             const MemoryResult &memory) {
  llvm::MapVector<std::string, LayerRow, std::map<std::string, unsigned>> rows;
  llvm::StringMap<llvm::DenseSet<Value>> paramsSeen;
  for (Operation &op : func.getBody().front()) {
    if (getStepPhase(&op) != StepPhase::Forward || op.getNumResults() == 0 ||
        isa<nn::ParamOp, nn::BufferOp, nn::SavedOp, nn::OptimizerStateOp>(op))
      continue;
    std::string name = getLayerName(op.getLoc());
    LayerRow &row = rows[name];
    if (row.op.empty()) {
      row.name = name;
      row.op = op.getName().getStringRef().str();
    }
    row.outputShape = typeString(op.getResult(0).getType());
    if (auto cost = dyn_cast<nn::CostOpInterface>(op))
      row.flops += cost.getFlops(convention, training);
    for (Value operand : op.getOperands())
      if (auto param = operand.getDefiningOp<nn::ParamOp>())
        if (paramsSeen[row.name].insert(operand).second)
          row.params +=
              cast<RankedTensorType>(param.getType()).getNumElements();
  }
  std::vector<LayerRow> table;
  for (auto &entry : rows) {
    entry.second.savedBytes =
        memory.savedBytesByLayer.lookup(entry.second.name);
    table.push_back(std::move(entry.second));
  }
  return table;
}

static FailureOr<Analyses> analyze(ModuleOp module,
                                   const ReportOptions &options) {
  Analyses a;
  a.func = module.lookupSymbol<func::FuncOp>("step");
  if (!a.func)
    a.func = module.lookupSymbol<func::FuncOp>("forward");
  if (!a.func)
    return module.emitError("no @step or @forward function to report on");
  auto mode = a.func->getAttrOfType<StringAttr>(kStepModeAttr);
  a.mode = mode ? mode.getValue().str() : "forward";
  a.parameters = summarizeParameters(a.func);
  a.flops = analyzeFlops(a.func, options.flops);
  FailureOr<MemoryResult> memory = analyzeMemory(a.func, options.topTensors);
  if (failed(memory))
    return failure();
  a.memory = std::move(*memory);
  a.layers =
      buildLayerTable(a.func, options.flops, a.mode == "train", a.memory);
  if (a.func.getNumArguments() > 0)
    if (auto t = dyn_cast<RankedTensorType>(a.func.getArgument(0).getType()))
      if (t.getRank() > 0)
        a.batch = t.getDimSize(0);
  return a;
}

static json::Object peakOpJson(const Analyses &a) {
  Operation *op = a.memory.peakOp;
  if (!op)
    return json::Object{{"name", ""},
                        {"op", ""},
                        {"location", ""},
                        {"phase", stringify(a.memory.peakPhase)}};
  return json::Object{{"name", getLayerName(op->getLoc())},
                      {"op", op->getName().getStringRef()},
                      {"location", locationString(op->getLoc())},
                      {"phase", stringify(a.memory.peakPhase)}};
}

static void writeJson(const Analyses &a, const ReportOptions &options,
                      llvm::raw_ostream &os) {
  json::Object atPeak;
  for (unsigned c = 0; c < kNumMemoryCategories; ++c)
    atPeak[stringify(static_cast<MemoryCategory>(c))] = a.memory.atPeak[c];
  json::Array top;
  for (const LiveTensor &t : a.memory.topTensors)
    top.push_back(json::Object{{"name", describeTensor(t.value)},
                               {"bytes", t.bytes},
                               {"category", stringify(t.category)},
                               {"type", typeString(t.value.getType())}});
  json::Array layers;
  for (const LayerRow &row : a.layers)
    layers.push_back(json::Object{{"name", row.name},
                                  {"op", row.op},
                                  {"output_shape", row.outputShape},
                                  {"params", row.params},
                                  {"forward_flops", row.flops},
                                  {"saved_bytes", row.savedBytes}});
  json::Object report{
      {"schema_version", 1},
      {"model", json::Object{{"name", options.modelName}}},
      {"parameters", json::Object{{"count", a.parameters.count},
                                  {"trainable", a.parameters.trainable},
                                  {"bytes", a.parameters.bytes}}},
      {"buffers", json::Object{{"count", a.parameters.bufferCount},
                               {"bytes", a.parameters.bufferBytes}}},
      {"config", json::Object{{"mode", a.mode},
                              {"batch", a.batch},
                              {"optimizer", a.mode == "train"
                                                ? json::Value(options.optimizer)
                                                : json::Value(nullptr)},
                              {"precision", options.precision}}},
      {"flops", json::Object{{"convention", nn::stringify(options.flops)},
                             {"forward", a.flops.perPhase[0]},
                             {"backward", a.flops.perPhase[1]},
                             {"optimizer", a.flops.perPhase[2]},
                             {"total", a.flops.total()}}},
      {"memory", json::Object{{"allocator", "exact"},
                              {"peak_bytes", a.memory.peakBytes},
                              {"persistent_bytes", a.memory.persistentBytes},
                              {"saved_for_backward_bytes",
                               a.memory.savedForBackwardBytes},
                              {"peak_op", peakOpJson(a)},
                              {"at_peak", std::move(atPeak)},
                              {"top_tensors", std::move(top)}}},
      {"layers", std::move(layers)},
  };
  if (options.timeline) {
    json::Array timeline;
    for (const TimelinePoint &p : a.memory.timeline)
      timeline.push_back(json::Object{{"op", p.op->getName().getStringRef()},
                                      {"name", getLayerName(p.op->getLoc())},
                                      {"phase", stringify(p.phase)},
                                      {"live_bytes", p.liveBytes}});
    report["timeline"] = std::move(timeline);
  }
  os << llvm::formatv("{0:2}", json::Value(std::move(report))) << "\n";
}

static std::string humanBytes(int64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = bytes;
  unsigned u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? llvm::formatv("{0} B", bytes).str()
                : llvm::formatv("{0:f2} {1}", v, units[u]).str();
}

static std::string withCommas(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

static void writeText(const Analyses &a, const ReportOptions &options,
                      llvm::raw_ostream &os) {
  os << "model: " << options.modelName << "   mode: " << a.mode
     << "   batch: " << a.batch;
  if (a.mode == "train")
    os << "   optimizer: " << options.optimizer;
  os << "   precision: " << options.precision << "\n";
  os << llvm::formatv(
      "parameters: {0} (trainable {1}), {2}; buffers: {3}\n",
      withCommas(a.parameters.count), withCommas(a.parameters.trainable),
      humanBytes(a.parameters.bytes), humanBytes(a.parameters.bufferBytes));
  os << llvm::formatv(
      "FLOPs ({0}): forward {1}, backward {2}, optimizer {3}, "
      "total {4}\n",
      nn::stringify(options.flops), withCommas(a.flops.perPhase[0]),
      withCommas(a.flops.perPhase[1]), withCommas(a.flops.perPhase[2]),
      withCommas(a.flops.total()));
  os << llvm::formatv("peak memory (exact): {0} ({1})",
                      withCommas(a.memory.peakBytes),
                      humanBytes(a.memory.peakBytes));
  if (Operation *op = a.memory.peakOp)
    os << " at " << getLayerName(op->getLoc()) << " (" << op->getName() << ", "
       << stringify(a.memory.peakPhase) << ")";
  os << "\n";
  os << "  at peak:";
  for (unsigned c = 0; c < kNumMemoryCategories; ++c)
    os << " " << stringify(static_cast<MemoryCategory>(c)) << " "
       << humanBytes(a.memory.atPeak[c])
       << (c + 1 < kNumMemoryCategories ? "," : "");
  os << "\n";
  os << llvm::formatv("saved for backward: {0} ({1})\n",
                      withCommas(a.memory.savedForBackwardBytes),
                      humanBytes(a.memory.savedForBackwardBytes));
  os << "largest tensors at peak:\n";
  for (const LiveTensor &t : a.memory.topTensors)
    os << llvm::formatv("  {0,12}  {1,-15}  {2}\n", humanBytes(t.bytes),
                        stringify(t.category), describeTensor(t.value));
  os << "\n"
     << llvm::formatv("{0,-40} {1,-22} {2,-24} {3,12} {4,16} {5,14}\n", "layer",
                      "op", "output shape", "params", "forward FLOPs", "saved");
  for (const LayerRow &row : a.layers)
    os << llvm::formatv("{0,-40} {1,-22} {2,-24} {3,12} {4,16} {5,14}\n",
                        row.name.empty() ? "-" : row.name, row.op,
                        row.outputShape, withCommas(row.params),
                        withCommas(row.flops), humanBytes(row.savedBytes));
}

LogicalResult vram::writeReport(ModuleOp module, const ReportOptions &options,
                                ReportFormat format, llvm::raw_ostream &os) {
  FailureOr<Analyses> a = analyze(module, options);
  if (failed(a))
    return failure();
  if (format == ReportFormat::Json)
    writeJson(*a, options, os);
  else
    writeText(*a, options, os);
  return success();
}
