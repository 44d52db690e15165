//===- FloatRounding.h - printing float attributes as written ---*- C++ -*-===//
//
// Internal to lib/Import/ONNX.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_LIB_IMPORT_ONNX_FLOATROUNDING_H
#define VRAM_LIB_IMPORT_ONNX_FLOATROUNDING_H

#include <cstdio>
#include <cstdlib>

namespace vram::onnx_import {

/// The shortest decimal double that rounds to the same float as `v`, so that
/// float attributes (stored as float in ONNX) print as 1.0E-5 rather than
/// 9.9999997473787516E-6.
inline double roundToFloat(double v) {
  float f = (float)v;
  char buf[32];
  for (int prec = 6; prec <= 9; ++prec) {
    snprintf(buf, sizeof(buf), "%.*g", prec, (double)f);
    double d = strtod(buf, nullptr);
    if ((float)d == f)
      return d;
  }
  return (double)f;
}

} // namespace vram::onnx_import

#endif // VRAM_LIB_IMPORT_ONNX_FLOATROUNDING_H
