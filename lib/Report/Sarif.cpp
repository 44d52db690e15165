//===- Sarif.cpp - SARIF 2.1.0 for code scanning --------------------------===//
//
// One run of the tool "vram-opt" with a rule per check and a result per
// finding, located at the op's file/line/column, or at the ONNX node or zoo
// layer as a logical location inside the analyzed file (line 1) or the file
// and line --sarif-location names (a zoo model has no file). Numbers go
// in `properties`. What GitHub code scanning needs to show results on a pull
// request: `$schema`, rules with descriptions and help, paths relative to
// `%SRCROOT%` (the working directory), a region on every location, and
// `partialFingerprints` that do not change with the numbers.
//
//===----------------------------------------------------------------------===//

#include "ReportData.h"

#include "vram/Support/Findings.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/xxhash.h"

using namespace mlir;
using namespace vram;
using namespace vram::report;
namespace json = llvm::json;

namespace {
/// A rule per finding kind, with what GitHub code scanning shows of it: the
/// short description in the alert list, the full one and the help (markdown)
/// on the alert's page.
struct Rule {
  llvm::StringLiteral id;
  const char *name, *text, *level, *full, *help;
};
constexpr Rule kRules[] = {
    {"vram/peak-memory", "PeakMemory",
     "Where the step's memory peaks, and what is alive there", "note",
     "The operation at which the training or inference step holds the most "
     "GPU memory, with the bytes alive there by category.",
     "vram-opt's memory analysis replays the step's allocations and frees as "
     "PyTorch makes them. The result is informational: see the JSON or text "
     "report for the breakdown (docs/Report.md)."},
    {"vram/budget-exceeded", "BudgetExceeded",
     "The step's peak memory exceeds the memory budget (--budget)", "error",
     "The step's memory under the budget metric (exact, allocated, reserved "
     "or device) is larger than the budget given with --budget or implied "
     "by --gpu.",
     "Lower the batch size, checkpoint the repeated blocks, train fewer "
     "parameters (LoRA, freezing) or use mixed precision: `vram-opt "
     "--budget` prints, as remarks, each change that fits, measured by "
     "building the step again (docs/Lint.md)."},
    {"vram/import-warning", "ImportWarning",
     "The front end warns that the model makes its numbers unreliable",
     "warning",
     "A front end (ONNX, C++) reported something about the model that makes "
     "the memory or FLOP figures less reliable.",
     "Read the message; docs/ONNX.md and docs/Cxx.md list what each front "
     "end models."},
    {rules::kApproximatedOp, "ApproximatedOp",
     "The front end could not model an op or call and assumed what it "
     "computes; its memory and FLOPs are missing from the numbers",
     "warning",
     "An operation or call the front end does not model was replaced by an "
     "assumption (usually: it returns its input), so its memory and FLOPs "
     "are not counted.",
     "Check docs/Cxx.md for the modelled layers and calls; a model built "
     "from modelled layers gets exact figures."},
    {rules::kDefaultBoundDimension, "DefaultBoundDimension",
     "A symbolic dimension of the model was not bound by the user and was "
     "given a default value",
     "warning",
     "The model has a symbolic input dimension (batch, sequence, or a "
     "named one) that no option bound, so a default value was used.",
     "Bind it with `--batch`, `--seq` or `--dim NAME=VALUE` "
     "(docs/ONNX.md)."},
    {rules::kInferenceExport, "InferenceExport",
     "The model was exported for inference (BatchNorm folded, dropout "
     "removed), so training numbers from it are low",
     "warning",
     "The ONNX graph shows signs of an inference export (folded "
     "BatchNorm, no dropout), so a training step built from it lacks what "
     "those layers keep for backward.",
     "Export with `torch.onnx.export(..., training=TrainingMode.TRAINING, "
     "do_constant_folding=False)` for training figures (docs/ONNX.md)."},
};
constexpr unsigned kImportWarningRule = 2;

unsigned ruleIndex(StringRef id) {
  for (auto [index, rule] : llvm::enumerate(kRules))
    if (rule.id == id)
      return index;
  return kImportWarningRule;
}
} // namespace

/// The URI of `path` relative to the working directory, the `%SRCROOT%` of
/// the run, when it lies under it (code scanning resolves results against
/// the repository checkout); else an absolute `file://` URI. A name that is
/// not a file (`zoo:resnet50`) stays as it is.
static std::pair<std::string, bool> relativeUri(StringRef path,
                                                StringRef root) {
  SmallString<256> absolute(path);
  if (path.starts_with("zoo:"))
    return {path.str(), false};
  if (llvm::sys::path::is_relative(absolute))
    return {llvm::sys::path::convert_to_slash(path), true};
  if (!root.empty() && absolute.str().starts_with(root) &&
      absolute.size() > root.size() &&
      llvm::sys::path::is_separator(absolute[root.size()]))
    return {llvm::sys::path::convert_to_slash(
                StringRef(absolute).drop_front(root.size() + 1)),
            true};
  // Elsewhere: an absolute file URI (normalized: no `..`).
  llvm::sys::path::remove_dots(absolute, /*remove_dot_dot=*/true);
  return {"file://" + llvm::sys::path::convert_to_slash(absolute), false};
}

/// SARIF locations of `loc`: the file position when it has one; else
/// --sarif-location's file and line, or the analyzed file at line 1 (an
/// ONNX node or zoo layer has no line: a documented stand-in,
/// docs/Report.md), with the layer or node name as a logical location.
static json::Array sarifLocations(Location loc, const ReportOptions &options,
                                  StringRef root) {
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
  bool ownLine = file && file.getLine() > 0;
  std::string path = ownLine                 ? file.getFilename().str()
                     : options.sarifLocation ? options.sarifLocation->file
                     : file                  ? file.getFilename().str()
                                             : options.inputPath;
  if (!path.empty()) {
    auto [uri, underRoot] = relativeUri(path, root);
    json::Object artifact{{"uri", uri}};
    if (underRoot)
      artifact["uriBaseId"] = "%SRCROOT%";
    physical["artifactLocation"] = std::move(artifact);
    if (ownLine)
      physical["region"] = json::Object{{"startLine", file.getLine()},
                                        {"startColumn", file.getColumn()}};
    else
      physical["region"] = json::Object{
          {"startLine",
           options.sarifLocation ? options.sarifLocation->line : 1}};
  }
  if (!physical.empty())
    location["physicalLocation"] = std::move(physical);
  if (!name.empty())
    location["logicalLocations"] =
        json::Array{json::Object{{"name", name}, {"kind", "member"}}};
  return json::Array{std::move(location)};
}

/// A fingerprint that follows a finding across commits: the rule, the model
/// and where (the layer), not the numbers, which change with every edit.
static json::Object fingerprint(StringRef ruleId, StringRef model,
                                StringRef where) {
  std::string key = (ruleId + "|" + model + "|" + where).str();
  return json::Object{
      {"vramFinding/v1", llvm::utohexstr(llvm::xxh3_64bits(key))}};
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
        {"fullDescription", json::Object{{"text", r.full}}},
        {"help", json::Object{{"text", r.help}, {"markdown", r.help}}},
        {"defaultConfiguration", json::Object{{"level", r.level}}}});
  SmallString<256> root;
  if (llvm::sys::fs::current_path(root))
    root.clear();
  StringRef model = options.modelName;
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
      {"locations", sarifLocations(anchor->getLoc(), options, root)},
      {"partialFingerprints", fingerprint(kRules[0].id, model, where)},
      {"properties", std::move(peakProperties)}});
  if (options.budget && options.budget->used > options.budget->budget) {
    const BudgetFinding &b = *options.budget;
    results.push_back(json::Object{
        {"ruleId", kRules[1].id},
        {"ruleIndex", 1},
        {"level", "error"},
        {"message",
         json::Object{
             {"text", llvm::formatv(
                          "peak {0} memory ({1}) {2} exceeds the budget "
                          "of {3} by {4}{5}",
                          what, b.metric, humanBytes(b.used),
                          humanBytes(b.budget), humanBytes(b.used - b.budget),
                          b.changes.empty() && !b.fittingBatch
                              ? std::string()
                              : ". Measured: " +
                                    llvm::join(describeBudgetChanges(b), "; "))
                          .str()}}},
        {"locations", sarifLocations(anchor->getLoc(), options, root)},
        {"partialFingerprints", fingerprint(kRules[1].id, model, where)},
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
        {"locations", sarifLocations(finding.location, options, root)},
        {"partialFingerprints",
         fingerprint(kRules[index].id, model,
                     getLayerName(finding.location) + "|" + finding.message)}});
  }
  json::Object run{
      {"tool",
       json::Object{{"driver", json::Object{{"name", "vram-opt"},
                                            {"rules", std::move(rules)}}}}},
      // One category per model, so that code scanning keeps the alerts of
      // several models of one repository apart.
      {"automationDetails",
       json::Object{{"id", ("vram-opt/" + model + "/").str()}}},
      {"results", std::move(results)}};
  if (!root.empty()) {
    SmallString<256> rootUri("file://");
    rootUri += llvm::sys::path::convert_to_slash(root);
    rootUri += "/";
    run["originalUriBaseIds"] =
        json::Object{{"%SRCROOT%", json::Object{{"uri", rootUri}}}};
  }
  json::Object log{{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
                   {"version", "2.1.0"},
                   {"runs", json::Array{std::move(run)}}};
  os << llvm::formatv("{0:2}", json::Value(std::move(log))) << "\n";
}
