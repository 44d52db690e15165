//===- Baseline.cpp - the baseline report of --compare --------------------===//
//
// Reads the figures a Markdown comparison needs from a JSON report
// (docs/Report.md). The reader is strict: a figure that is absent, not an
// integer, negative or past INT64_MAX is an error naming its JSON path, never
// a zero or a wrapped value that would print a delta of the wrong sign.
//
//===----------------------------------------------------------------------===//

#include "ReportData.h"

#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>

using namespace vram;
using namespace vram::report;
namespace json = llvm::json;
using llvm::StringRef;
using llvm::Twine;

namespace {
class BaselineReader {
public:
  explicit BaselineReader(StringRef name) : name(name) {}

  llvm::Error fail(const Twine &path, const Twine &message) const {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "baseline '" + name + "': " + path + ": " +
                                       message);
  }

  /// The object at `key` of `parent` (whose path is `path`).
  llvm::Expected<const json::Object *>
  object(const json::Object &parent, StringRef key, const Twine &path) const {
    const json::Value *v = parent.get(key);
    if (!v)
      return fail(path, "missing (not a vram-opt JSON report)");
    const json::Object *o = v->getAsObject();
    if (!o)
      return fail(path, "expected an object");
    return o;
  }

  /// A figure: present, an integer (not a real), in [0, INT64_MAX].
  llvm::Error figure(const json::Object &parent, StringRef key,
                     const Twine &path, int64_t &out) const {
    const json::Value *v = parent.get(key);
    if (!v)
      return fail(path, "missing");
    // getAsUINT64 accepts integers only: getAsInteger would convert a real
    // such as 9.3e18, out of int64's range, with undefined behaviour.
    std::optional<uint64_t> u = v->getAsUINT64();
    if (!u || *u > uint64_t(INT64_MAX))
      return fail(path, "expected a non-negative integer");
    out = int64_t(*u);
    return llvm::Error::success();
  }

private:
  StringRef name;
};
/// The deepest nesting of arrays and objects read. A report nests four
/// levels; llvm::json's parser recurses once per level, so a file of a
/// million `[` would overflow the stack before it could report anything.
constexpr unsigned kMaxJsonNesting = 256;

/// The line (from 1) of the first `[` or `{` of JSON `text` nested deeper
/// than `maxDepth` outside strings, or 0 when there is none.
unsigned findExcessiveJsonNesting(StringRef text, unsigned maxDepth) {
  unsigned depth = 0, line = 1;
  bool inString = false;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    if (c == '\n')
      ++line;
    if (inString) {
      if (c == '\\')
        ++i; // the escaped character cannot end the string
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > maxDepth)
        return line;
    } else if ((c == ']' || c == '}') && depth) {
      --depth;
    }
  }
  return 0;
}
} // namespace

llvm::Expected<BaselineFigures> vram::report::parseBaseline(StringRef text,
                                                            StringRef name) {
  BaselineReader r(name);
  if (unsigned line = findExcessiveJsonNesting(text, kMaxJsonNesting))
    return r.fail("line " + Twine(line),
                  "arrays and objects nested deeper than " +
                      Twine(kMaxJsonNesting) + " levels");
  llvm::Expected<json::Value> value = json::parse(text);
  if (!value)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "baseline '" + name + "': " + llvm::toString(value.takeError()));
  const json::Object *report = value->getAsObject();
  if (!report)
    return r.fail("(root)", "expected an object (a vram-opt JSON report)");
  auto memory = r.object(*report, "memory", "memory");
  if (!memory)
    return memory.takeError();
  auto parameters = r.object(*report, "parameters", "parameters");
  if (!parameters)
    return parameters.takeError();
  auto atPeak = r.object(**memory, "at_peak", "memory.at_peak");
  if (!atPeak)
    return atPeak.takeError();

  BaselineFigures f;
  if (llvm::Error e =
          r.figure(**memory, "peak_bytes", "memory.peak_bytes", f.peak))
    return std::move(e);
  if (llvm::Error e = r.figure(**memory, "persistent_bytes",
                               "memory.persistent_bytes", f.persistent))
    return std::move(e);
  if (llvm::Error e = r.figure(**memory, "saved_for_backward_bytes",
                               "memory.saved_for_backward_bytes", f.saved))
    return std::move(e);
  if (llvm::Error e =
          r.figure(**parameters, "count", "parameters.count", f.params))
    return std::move(e);
  for (unsigned c = 0; c < kNumMemoryCategories; ++c) {
    StringRef category = stringifyEnum(static_cast<MemoryCategory>(c));
    // Reports from before generation have no kv_cache: there was none.
    if (c == static_cast<unsigned>(MemoryCategory::KvCache) &&
        !(*atPeak)->get(category))
      continue;
    if (llvm::Error e = r.figure(**atPeak, category,
                                 "memory.at_peak." + category, f.atPeak[c]))
      return std::move(e);
  }
  if (const json::Object *model = report->getObject("model"))
    if (std::optional<StringRef> name = model->getString("name"))
      f.model = name->str();
  if (const json::Object *config = report->getObject("config"))
    if (std::optional<StringRef> mode = config->getString("mode"))
      f.mode = mode->str();
  return f;
}

llvm::Expected<BaselineFigures> vram::report::readBaseline(StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return llvm::createStringError(buffer.getError(),
                                   "cannot read baseline '" + path +
                                       "': " + buffer.getError().message());
  return parseBaseline((*buffer)->getBuffer(), path);
}
