//===- ParseLimits.h - bounds checked before a parser runs ------*- C++ -*-===//
//
// MLIR's parser recurses once per level of bracket nesting, so a file of
// 100,000 nested `[` overflows the stack (SIGSEGV) before it can report
// anything. The driver checks the nesting first and reports a located error.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_SUPPORT_PARSELIMITS_H
#define VRAM_SUPPORT_PARSELIMITS_H

#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <optional>

namespace vram {

/// Deepest bracket nesting accepted in MLIR text. Real models nest a few
/// dozen levels; MLIR's parser, on the 8 MiB main stack, handles thousands.
constexpr unsigned kMaxMlirNestingDepth = 512;

/// The offset of the first bracket (`(`, `[`, `{`, `<`) in MLIR `text`
/// nested deeper than `maxDepth`, skipping string literals and `//`
/// comments (`->` and `>=` close nothing); nullopt when there is none.
std::optional<size_t> findExcessiveNesting(llvm::StringRef text,
                                           unsigned maxDepth);

} // namespace vram

#endif // VRAM_SUPPORT_PARSELIMITS_H
