//===- vram-baseline-fuzz.cpp - libFuzzer target for --compare's reader ---===//
//
// Feeds arbitrary bytes to parseBaseline, the reader of the baseline JSON
// report of `--compare`. It must return the figures or an error: never
// crash or trip a sanitizer (a real out of int64's range converted to an
// integer, say), and whatever it returns must be figures in [0, INT64_MAX],
// the range the Markdown deltas rely on.
//
//   vram-baseline-fuzz -max_total_time=60 CORPUS_DIR [SEED_DIRS...]
//
//===----------------------------------------------------------------------===//

#include "ReportData.h"

#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  llvm::Expected<vram::report::BaselineFigures> figures =
      vram::report::parseBaseline(text, "fuzz.json");
  if (!figures) {
    llvm::consumeError(figures.takeError());
    return 0;
  }
  auto check = [](int64_t v) {
    if (v < 0)
      std::abort(); // the reader promised non-negative figures
  };
  check(figures->peak);
  check(figures->persistent);
  check(figures->saved);
  check(figures->params);
  for (int64_t v : figures->atPeak)
    check(v);
  return 0;
}
