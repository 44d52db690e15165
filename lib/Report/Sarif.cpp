//===- Sarif.cpp - SARIF 2.1.0 for code scanning --------------------------===//
//
// One run of the tool "vram-opt" with a rule per check and a result per
// finding, located at the op's file/line/column, or at the ONNX node or zoo
// layer as a logical location inside the analyzed file. Numbers go in
// `properties`.
//
//===----------------------------------------------------------------------===//

#include "ReportData.h"

#include "vram/Support/Findings.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace vram;
using namespace vram::report;
namespace json = llvm::json;

namespace {
struct Rule {
  llvm::StringLiteral id;
  const char *name, *text, *level;
};
constexpr Rule kRules[] = {
    {"vram/peak-memory", "PeakMemory",
     "Where the step's memory peaks, and what is alive there", "note"},
    {"vram/budget-exceeded", "BudgetExceeded",
     "The step's peak memory exceeds the memory budget (--budget)", "error"},
    {"vram/import-warning", "ImportWarning",
     "The front end warns that the model makes its numbers unreliable",
     "warning"},
    {rules::kApproximatedOp, "ApproximatedOp",
     "The front end could not model an op or call and assumed what it "
     "computes; its memory and FLOPs are missing from the numbers",
     "warning"},
    {rules::kDefaultBoundDimension, "DefaultBoundDimension",
     "A symbolic dimension of the model was not bound by the user and was "
     "given a default value",
     "warning"},
    {rules::kInferenceExport, "InferenceExport",
     "The model was exported for inference (BatchNorm folded, dropout "
     "removed), so training numbers from it are low",
     "warning"},
};
constexpr unsigned kImportWarningRule = 2;

unsigned ruleIndex(StringRef id) {
  for (auto [index, rule] : llvm::enumerate(kRules))
    if (rule.id == id)
      return index;
  return kImportWarningRule;
}
} // namespace

/// SARIF locations of `loc`: physical when it has a file position, logical
/// (the layer or node name) inside the analyzed file otherwise.
static json::Array sarifLocations(Location loc, StringRef inputPath) {
  json::Object location;
  FileLineColLoc file;
  std::string name;
  loc->walk([&](Location inner) {
    if (auto f = dyn_cast<FileLineColLoc>(inner); f && !file)
      file = f;
    if (auto n = dyn_cast<NameLoc>(inner); n && name.empty())
      name = n.getName().str();
    return WalkResult::advance();
  });
  json::Object physical;
  std::string uri =
      file ? file.getFilename().getValue().str() : inputPath.str();
  if (!uri.empty())
    physical["artifactLocation"] = json::Object{{"uri", uri}};
  if (file && file.getLine() > 0)
    physical["region"] = json::Object{{"startLine", file.getLine()},
                                      {"startColumn", file.getColumn()}};
  if (!physical.empty())
    location["physicalLocation"] = std::move(physical);
  if (!name.empty())
    location["logicalLocations"] =
        json::Array{json::Object{{"name", name}, {"kind", "member"}}};
  return json::Array{std::move(location)};
}

void vram::report::writeSarif(const Analyses &a, const ReportOptions &options,
                              llvm::raw_ostream &os) {
  const MemoryAnalysis &memory = *a.memory;
  json::Array rules;
  for (const Rule &r : kRules)
    rules.push_back(json::Object{
        {"id", r.id},
        {"name", r.name},
        {"shortDescription", json::Object{{"text", r.text}}},
        {"defaultConfiguration", json::Object{{"level", r.level}}}});
  json::Array results;
  Operation *peakOp = memory.getPeakOp();
  func::FuncOp func = a.func;
  Operation *anchor = peakOp ? peakOp : func.getOperation();
  std::string where = peakOp ? getLayerName(peakOp->getLoc()) : "";
  std::string what = a.mode == "train" ? "training" : a.mode;
  json::Object peakProperties{
      {"peak_bytes", memory.getPeakBytes()},
      {"persistent_bytes", memory.getPersistentBytes()},
      {"saved_for_backward_bytes", memory.getSavedForBackwardBytes()},
      {"allocator", a.allocatorName},
      {"allocated_peak_bytes", a.allocatorPeaks.allocated},
      {"reserved_peak_bytes", a.allocatorPeaks.reserved}};
  results.push_back(json::Object{
      {"ruleId", kRules[0].id},
      {"ruleIndex", 0},
      {"level", "note"},
      {"message",
       json::Object{{"text", llvm::formatv("peak {0} memory {1}{2}", what,
                                           humanBytes(memory.getPeakBytes()),
                                           where.empty() ? "" : " at " + where)
                                 .str()}}},
      {"locations", sarifLocations(anchor->getLoc(), options.inputPath)},
      {"properties", std::move(peakProperties)}});
  if (options.budget && options.budget->used > options.budget->budget) {
    const BudgetFinding &b = *options.budget;
    results.push_back(json::Object{
        {"ruleId", kRules[1].id},
        {"ruleIndex", 1},
        {"level", "error"},
        {"message",
         json::Object{
             {"text",
              llvm::formatv("peak {0} memory ({1}) {2} exceeds the budget "
                            "of {3} by {4}",
                            what, b.metric, humanBytes(b.used),
                            humanBytes(b.budget), humanBytes(b.used - b.budget))
                  .str()}}},
        {"locations", sarifLocations(anchor->getLoc(), options.inputPath)},
        {"properties", json::Object{{"metric", b.metric},
                                    {"used_bytes", b.used},
                                    {"budget_bytes", b.budget}}}});
  }
  for (const ImportFinding &finding : options.importFindings) {
    unsigned index = ruleIndex(finding.rule);
    results.push_back(json::Object{
        {"ruleId", kRules[index].id},
        {"ruleIndex", index},
        {"level", "warning"},
        {"message", json::Object{{"text", finding.message}}},
        {"locations", sarifLocations(finding.location, options.inputPath)}});
  }
  json::Object log{
      {"version", "2.1.0"},
      {"runs",
       json::Array{json::Object{
           {"tool", json::Object{{"driver",
                                  json::Object{{"name", "vram-opt"},
                                               {"rules", std::move(rules)}}}}},
           {"results", std::move(results)}}}}};
  os << llvm::formatv("{0:2}", json::Value(std::move(log))) << "\n";
}
