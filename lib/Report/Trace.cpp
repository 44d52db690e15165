//===- Trace.cpp - Chrome trace events of the memory timeline -------------===//
//
// One walk over the memory analysis's event stream: counters per category
// after each op, and an instant event per allocation and release. Op index i
// is timestamp i microseconds.
//
//===----------------------------------------------------------------------===//

#include "ReportData.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace vram;
using namespace vram::report;
namespace json = llvm::json;

LogicalResult vram::writeTrace(ModuleOp module, const ReportOptions &options,
                               llvm::raw_ostream &os) {
  FailureOr<Analyses> a = analyze(module, options);
  if (failed(a))
    return failure();
  const MemoryAnalysis &memory = *a->memory;
  ArrayRef<Storage> storages = memory.getStorages();
  json::Array events;
  events.push_back(json::Object{
      {"name", "process_name"},
      {"ph", "M"},
      {"pid", 1},
      {"args", json::Object{{"name", "vram-opt: " + options.modelName}}}});
  CategoryBytes live = {};
  auto instant = [&](const MemoryEvent &e, StringRef what, unsigned ts) {
    const Storage &s = storages[e.storage];
    events.push_back(
        json::Object{{"name", (what + " " + describeStorage(s)).str()},
                     {"cat", stringifyEnum(s.category)},
                     {"ph", "i"},
                     {"s", "p"},
                     {"pid", 1},
                     {"tid", 1},
                     {"ts", ts},
                     {"args", json::Object{{"bytes", s.bytes}}}});
  };
  for (unsigned i = 0; i <= memory.getNumOps() + 1; ++i) {
    for (const MemoryEvent &e : memory.getAllocEvents(i)) {
      live[static_cast<unsigned>(storages[e.storage].category)] +=
          storages[e.storage].bytes;
      instant(e, "alloc", i);
    }
    json::Object counters;
    for (unsigned c = 0; c < kNumMemoryCategories; ++c)
      counters[stringifyEnum(static_cast<MemoryCategory>(c))] = live[c];
    events.push_back(json::Object{{"name", "memory"},
                                  {"ph", "C"},
                                  {"pid", 1},
                                  {"ts", i},
                                  {"args", std::move(counters)}});
    for (const MemoryEvent &e : memory.getFreeEvents(i)) {
      live[static_cast<unsigned>(storages[e.storage].category)] -=
          storages[e.storage].bytes;
      instant(e, "free", i);
    }
  }
  os << llvm::formatv("{0:2}", json::Value(json::Object{
                                   {"traceEvents", std::move(events)},
                                   {"displayTimeUnit", "ns"}}))
     << "\n";
  return success();
}
