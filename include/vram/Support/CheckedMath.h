//===- CheckedMath.h - sizes and counts that never wrap ---------*- C++ -*-===//
//
// Every size, count or shape formula computed from user input goes through
// these helpers, so that an input which overflows 64 bits is either a
// reported error (the checked forms return std::nullopt) or a saturated
// value that an analysis reports as an overflow (the saturating forms),
// never a wrapped, plausible-looking number and never signed-overflow UB.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_SUPPORT_CHECKEDMATH_H
#define VRAM_SUPPORT_CHECKEDMATH_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <limits>
#include <optional>

namespace vram {

/// a + b, a - b, a * b, or nullopt when the result does not fit in T. The
/// compiler's overflow builtins: a size computation runs once per tensor of
/// a million-op step (llvm::checkedMul goes through APInt).
template <typename T> std::optional<T> checkedAdd(T a, T b) {
  T result;
  if (__builtin_add_overflow(a, b, &result))
    return std::nullopt;
  return result;
}
template <typename T> std::optional<T> checkedSub(T a, T b) {
  T result;
  if (__builtin_sub_overflow(a, b, &result))
    return std::nullopt;
  return result;
}
template <typename T> std::optional<T> checkedMul(T a, T b) {
  T result;
  if (__builtin_mul_overflow(a, b, &result))
    return std::nullopt;
  return result;
}

/// The product of `dims`, or nullopt when a dim is negative or the product
/// does not fit in int64.
inline std::optional<int64_t> checkedProduct(llvm::ArrayRef<int64_t> dims,
                                             int64_t init = 1) {
  std::optional<int64_t> n = init;
  for (int64_t d : dims) {
    if (d < 0)
      return std::nullopt;
    n = checkedMul(*n, d);
    if (!n)
      return std::nullopt;
  }
  return n;
}

/// a * b clamped to [INT64_MIN, INT64_MAX]: for counts (FLOPs, strides)
/// whose consumers report INT64_MAX as an overflow.
inline int64_t saturatingMul(int64_t a, int64_t b) {
  if (std::optional<int64_t> r = checkedMul(a, b))
    return *r;
  return (a < 0) != (b < 0) ? std::numeric_limits<int64_t>::min()
                            : std::numeric_limits<int64_t>::max();
}
template <typename... Rest>
int64_t saturatingMul(int64_t a, int64_t b, int64_t c, Rest... rest) {
  return saturatingMul(saturatingMul(a, b), c, rest...);
}

/// a + b clamped to [INT64_MIN, INT64_MAX].
inline int64_t saturatingAdd(int64_t a, int64_t b) {
  if (std::optional<int64_t> r = checkedAdd(a, b))
    return *r;
  return a < 0 ? std::numeric_limits<int64_t>::min()
               : std::numeric_limits<int64_t>::max();
}

/// PyTorch's convolution and pooling output size along one dimension:
/// floor((in + 2 pad - dilation (kernel - 1) - 1) / stride) + 1, rounded up
/// with `ceilMode` (the last window must start inside the input or the left
/// padding). 0 when the window does not fit (or is empty); nullopt when an
/// intermediate overflows int64 or the stride is not positive.
inline std::optional<int64_t> windowOutputSize(int64_t in, int64_t kernel,
                                               int64_t stride, int64_t pad,
                                               int64_t dilation,
                                               bool ceilMode) {
  if (stride < 1)
    return std::nullopt;
  if (kernel < 1)
    return 0;
  std::optional<int64_t> padded = checkedMul<int64_t>(2, pad);
  if (padded)
    padded = checkedAdd(in, *padded);
  std::optional<int64_t> reach = checkedMul(dilation, kernel - 1);
  if (!padded || !reach)
    return std::nullopt;
  std::optional<int64_t> span = checkedSub(*padded, *reach);
  if (span)
    span = checkedSub<int64_t>(*span, 1);
  if (!span)
    return std::nullopt;
  if (*span < 0)
    return 0;
  // Rounding up as (span + stride - 1) / stride could overflow; the
  // remainder says the same.
  int64_t out = *span / stride + (ceilMode && *span % stride != 0) + 1;
  if (ceilMode) {
    // The last window must start inside the input or the left padding.
    std::optional<int64_t> lastStart = checkedMul(out - 1, stride);
    std::optional<int64_t> limit = checkedAdd(in, pad);
    if (!lastStart || !limit || *lastStart >= *limit)
      --out;
  }
  return out;
}

} // namespace vram

#endif // VRAM_SUPPORT_CHECKEDMATH_H
