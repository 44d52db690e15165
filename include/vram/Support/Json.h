//===- Json.h - reading integers from llvm::json safely ---------*- C++ -*-===//
//
// llvm::json::Value::getAsInteger converts a number written as a double
// (`9223372036854775807.5`, `1e19`) when it compares <= double(INT64_MAX),
// which is 2^63 and does not fit in int64_t: the conversion is undefined
// behaviour (found by vram-hf-fuzz under UBSan). The readers of JSON inputs
// take integers through getJsonInteger instead.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_SUPPORT_JSON_H
#define VRAM_SUPPORT_JSON_H

#include "llvm/Support/JSON.h"

#include <cstdint>
#include <optional>

namespace vram {

/// The integer `value` holds, or nullopt (not an integer, or outside
/// int64_t).
inline std::optional<int64_t> getJsonInteger(const llvm::json::Value &value) {
  std::optional<double> number = value.getAsNumber();
  if (!number)
    return std::nullopt;
  // Written as an integer (getAsUINT64 answers only for those), near
  // INT64_MAX its double rounds to 2^63 but getAsInteger returns it exactly.
  if (std::optional<uint64_t> whole = value.getAsUINT64())
    return *whole <= uint64_t(INT64_MAX) ? std::optional<int64_t>(*whole)
                                         : std::nullopt;
  // A double that getAsInteger would convert out of range.
  if (!(*number > -0x1p63 && *number < 0x1p63))
    return std::nullopt;
  return value.getAsInteger();
}

/// getJsonInteger of `object[key]`; nullopt when the key is absent.
inline std::optional<int64_t> getJsonInteger(const llvm::json::Object &object,
                                             llvm::StringRef key) {
  const llvm::json::Value *value = object.get(key);
  return value ? getJsonInteger(*value) : std::nullopt;
}

} // namespace vram

#endif // VRAM_SUPPORT_JSON_H
