//===- ConstTensor.cpp - constant tensors of the ONNX importer
//-------------===//

#include "ConstTensor.h"

#include "OnnxLibrary.h"
#include "vram/Support/CheckedMath.h"

#include "onnx/onnx_pb.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <cstring>

using namespace vram::onnx_import;
using llvm::ArrayRef;
using llvm::SmallVector;
using llvm::StringRef;

bool vram::onnx_import::isFloatDType(int32_t dt) {
  return dt == DT_FLOAT || dt == DT_DOUBLE || dt == DT_FLOAT16 ||
         dt == DT_BFLOAT16;
}

bool vram::onnx_import::isIntegerDType(int32_t dt) {
  switch (dt) {
  case DT_UINT8:
  case DT_INT8:
  case DT_UINT16:
  case DT_INT16:
  case DT_INT32:
  case DT_INT64:
  case DT_BOOL:
  case DT_UINT32:
  case DT_UINT64:
    return true;
  default:
    return false;
  }
}

const char *vram::onnx_import::dtypeName(int32_t dt) {
  switch (dt) {
  case DT_FLOAT:
    return "float";
  case DT_UINT8:
    return "uint8";
  case DT_INT8:
    return "int8";
  case DT_UINT16:
    return "uint16";
  case DT_INT16:
    return "int16";
  case DT_INT32:
    return "int32";
  case DT_INT64:
    return "int64";
  case DT_STRING:
    return "string";
  case DT_BOOL:
    return "bool";
  case DT_FLOAT16:
    return "float16";
  case DT_DOUBLE:
    return "double";
  case DT_UINT32:
    return "uint32";
  case DT_UINT64:
    return "uint64";
  case DT_BFLOAT16:
    return "bfloat16";
  default:
    return "unsupported";
  }
}

std::optional<int64_t>
vram::onnx_import::checkedNumElements(ArrayRef<int64_t> shape) {
  return vram::checkedProduct(shape);
}

ConstTensor ConstTensor::make(int32_t dtype, ArrayRef<int64_t> shape) {
  ConstTensor t;
  t.dtype = dtype;
  t.shape.assign(shape.begin(), shape.end());
  int64_t n = checkedNumElements(shape).value_or(0);
  if (t.isFloat())
    t.f.assign(n, 0.0);
  else
    t.i.assign(n, 0);
  return t;
}

ConstTensor ConstTensor::scalarI(int64_t v) {
  ConstTensor t = make(DT_INT64, {});
  t.i[0] = v;
  return t;
}

std::vector<int64_t> ConstTensor::toInts() const {
  if (!isFloat())
    return i;
  std::vector<int64_t> r;
  for (double v : f)
    r.push_back(saturatingToInt64(v));
  return r;
}

namespace {
template <typename T> T readLE(const char *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

int elemBytes(int32_t dt) {
  switch (dt) {
  case DT_FLOAT:
  case DT_INT32:
  case DT_UINT32:
    return 4;
  case DT_DOUBLE:
  case DT_INT64:
  case DT_UINT64:
    return 8;
  case DT_FLOAT16:
  case DT_BFLOAT16:
  case DT_INT16:
  case DT_UINT16:
    return 2;
  case DT_INT8:
  case DT_UINT8:
  case DT_BOOL:
    return 1;
  default:
    return 0;
  }
}

double halfToDouble(uint16_t bits, bool bf16) {
  llvm::APFloat v(bf16 ? llvm::APFloat::BFloat() : llvm::APFloat::IEEEhalf(),
                  llvm::APInt(16, bits));
  return v.convertToDouble();
}

} // namespace

std::optional<std::string>
vram::onnx_import::describeStoredSizeMismatch(const onnx::TensorProto &t) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL ||
      t.external_data_size())
    return std::nullopt;
  int32_t dt = t.data_type();
  SmallVector<int64_t, 4> shape(t.dims().begin(), t.dims().end());
  int64_t count = checkedNumElements(shape).value_or(0);
  if (!t.raw_data().empty()) {
    int eb = elemBytes(dt);
    std::optional<int64_t> expected = vram::checkedMul<int64_t>(count, eb);
    if (!eb || (expected && (int64_t)t.raw_data().size() == *expected))
      return std::nullopt;
    return "raw_data has " + std::to_string(t.raw_data().size()) +
           " bytes, but its dims hold " + std::to_string(count) +
           " elements of " + std::to_string(eb) + " bytes";
  }
  // The typed field ONNX stores each element type in, one entry an element.
  int64_t stored;
  switch (dt) {
  case DT_FLOAT:
    stored = t.float_data_size();
    break;
  case DT_DOUBLE:
    stored = t.double_data_size();
    break;
  case DT_INT64:
    stored = t.int64_data_size();
    break;
  case DT_UINT32:
  case DT_UINT64:
    stored = t.uint64_data_size();
    break;
  case DT_INT32:
  case DT_INT16:
  case DT_INT8:
  case DT_UINT16:
  case DT_UINT8:
  case DT_BOOL:
  case DT_FLOAT16:
  case DT_BFLOAT16:
    stored = t.int32_data_size();
    break;
  default:
    return std::nullopt;
  }
  if (stored == 0 || stored == count)
    return std::nullopt;
  return "it stores " + std::to_string(stored) +
         " elements, but its dims hold " + std::to_string(count);
}

bool vram::onnx_import::decodeTensor(const onnx::TensorProto &t,
                                     ConstTensor &out, std::string &err) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL ||
      t.external_data_size()) {
    err = "its data is stored externally and is not read";
    return false;
  }
  int32_t dt = t.data_type();
  if (!isFloatDType(dt) && !isIntegerDType(dt)) {
    err = std::string("element type ") + dtypeName(dt) + " (" +
          std::to_string(dt) + ") is not supported";
    return false;
  }
  SmallVector<int64_t, 4> shape(t.dims().begin(), t.dims().end());
  auto n = checkedNumElements(shape);
  if (!n) {
    err = "its dims are negative or their product overflows int64";
    return false;
  }
  if (*n > kMaxFoldElements) {
    err = "it has " + std::to_string(*n) + " elements, more than the " +
          std::to_string(kMaxFoldElements) + " the importer folds";
    return false;
  }
  out = ConstTensor::make(dt, shape);
  int64_t count = *n;
  auto put = [&](int64_t k, double fv, int64_t iv, bool isF) {
    if (out.isFloat())
      out.f[k] = isF ? fv : (double)iv;
    else
      out.i[k] = isF ? saturatingToInt64(fv) : iv;
  };
  // float, double, int32 and int64, from raw_data or the typed field:
  // libonnx's parser, once the stored size is checked against the dims.
  if (dt == DT_FLOAT || dt == DT_DOUBLE || dt == DT_INT32 || dt == DT_INT64) {
    int64_t stored = dt == DT_FLOAT    ? t.float_data_size()
                     : dt == DT_DOUBLE ? t.double_data_size()
                     : dt == DT_INT32  ? t.int32_data_size()
                                       : t.int64_data_size();
    if (t.has_raw_data() &&
        (int64_t)t.raw_data().size() != count * elemBytes(dt)) {
      err = "raw_data has " + std::to_string(t.raw_data().size()) +
            " bytes, expected " + std::to_string(count * elemBytes(dt));
      return false;
    }
    if (!t.has_raw_data() && stored != count) {
      err = "it has " + std::to_string(stored) + " stored values, expected " +
            std::to_string(count);
      return false;
    }
    std::string parseErr;
    if (isFloatDType(dt))
      libonnx::parseFloatData(t, out.f, parseErr);
    else
      libonnx::parseIntData(t, out.i, parseErr);
    if (!parseErr.empty() || out.numElements() != count) {
      err = "libonnx cannot parse its data" +
            (parseErr.empty() ? std::string() : ": " + parseErr);
      return false;
    }
    return true;
  }
  // The other element types (16-bit floats, narrow and unsigned integers,
  // bool), which onnx::ParseData does not read.
  if (t.has_raw_data()) {
    const std::string &raw = t.raw_data();
    int eb = elemBytes(dt);
    if ((int64_t)raw.size() != count * eb) {
      err = "raw_data has " + std::to_string(raw.size()) + " bytes, expected " +
            std::to_string(count * eb);
      return false;
    }
    const char *p = raw.data();
    for (int64_t k = 0; k < count; ++k, p += eb) {
      switch (dt) {
      case DT_FLOAT:
        put(k, readLE<float>(p), 0, true);
        break;
      case DT_DOUBLE:
        put(k, readLE<double>(p), 0, true);
        break;
      case DT_FLOAT16:
        put(k, halfToDouble(readLE<uint16_t>(p), false), 0, true);
        break;
      case DT_BFLOAT16:
        put(k, halfToDouble(readLE<uint16_t>(p), true), 0, true);
        break;
      case DT_INT64:
        put(k, 0, readLE<int64_t>(p), false);
        break;
      case DT_UINT64:
        put(k, 0, (int64_t)readLE<uint64_t>(p), false);
        break;
      case DT_INT32:
        put(k, 0, readLE<int32_t>(p), false);
        break;
      case DT_UINT32:
        put(k, 0, readLE<uint32_t>(p), false);
        break;
      case DT_INT16:
        put(k, 0, readLE<int16_t>(p), false);
        break;
      case DT_UINT16:
        put(k, 0, readLE<uint16_t>(p), false);
        break;
      case DT_INT8:
        put(k, 0, readLE<int8_t>(p), false);
        break;
      case DT_UINT8:
        put(k, 0, readLE<uint8_t>(p), false);
        break;
      case DT_BOOL:
        put(k, 0, readLE<uint8_t>(p) != 0, false);
        break;
      default:
        break;
      }
    }
    return true;
  }
  auto sizeErr = [&](int64_t have) {
    err = "it has " + std::to_string(have) + " stored values, expected " +
          std::to_string(count);
    return false;
  };
  switch (dt) {
  case DT_FLOAT:
    if (t.float_data_size() != count)
      return sizeErr(t.float_data_size());
    for (int64_t k = 0; k < count; ++k)
      put(k, t.float_data(k), 0, true);
    return true;
  case DT_DOUBLE:
    if (t.double_data_size() != count)
      return sizeErr(t.double_data_size());
    for (int64_t k = 0; k < count; ++k)
      put(k, t.double_data(k), 0, true);
    return true;
  case DT_INT64:
    if (t.int64_data_size() != count)
      return sizeErr(t.int64_data_size());
    for (int64_t k = 0; k < count; ++k)
      put(k, 0, t.int64_data(k), false);
    return true;
  case DT_UINT32:
  case DT_UINT64:
    if (t.uint64_data_size() != count)
      return sizeErr(t.uint64_data_size());
    for (int64_t k = 0; k < count; ++k)
      put(k, 0, (int64_t)t.uint64_data(k), false);
    return true;
  default: // int32_data holds int32/16/8, uint16/8, bool and 16-bit floats
    if (t.int32_data_size() != count)
      return sizeErr(t.int32_data_size());
    for (int64_t k = 0; k < count; ++k) {
      int32_t v = t.int32_data(k);
      if (dt == DT_FLOAT16 || dt == DT_BFLOAT16)
        put(k, halfToDouble((uint16_t)v, dt == DT_BFLOAT16), 0, true);
      else
        put(k, 0, dt == DT_BOOL ? (v != 0) : v, false);
    }
    return true;
  }
}

std::optional<SmallVector<int64_t, 4>>
vram::onnx_import::broadcastShapes(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  size_t r = std::max(a.size(), b.size());
  SmallVector<int64_t, 4> out(r, 1);
  for (size_t k = 0; k < r; ++k) {
    int64_t da = k < r - a.size() ? 1 : a[k - (r - a.size())];
    int64_t db = k < r - b.size() ? 1 : b[k - (r - b.size())];
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    out[k] = da == 1 ? db : da;
  }
  return out;
}
/// Resolves ONNX Reshape's shape (0 copies, -1 infers).
static bool reshapeTarget(ArrayRef<int64_t> in, ArrayRef<int64_t> spec,
                          bool allowZero, SmallVector<int64_t, 4> &out,
                          std::string &err) {
  auto n = checkedNumElements(in);
  if (!n) {
    err = "bad input shape";
    return false;
  }
  out.clear();
  int64_t known = 1, inferAt = -1;
  for (size_t k = 0; k < spec.size(); ++k) {
    int64_t d = spec[k];
    if (d == 0 && !allowZero) {
      if (k >= in.size()) {
        err = "shape copies dimension " + std::to_string(k) +
              " that the input lacks";
        return false;
      }
      d = in[k];
    }
    if (d == -1) {
      if (inferAt >= 0) {
        err = "shape has more than one -1";
        return false;
      }
      inferAt = k;
      out.push_back(1);
      continue;
    }
    if (d < 0) {
      err = "shape has a negative dimension " + std::to_string(d);
      return false;
    }
    if (d != 0 && known > INT64_MAX / d) {
      err = "shape overflows int64";
      return false;
    }
    known *= d;
    out.push_back(d);
  }
  if (inferAt >= 0) {
    if (known == 0 || *n % known) {
      err = "cannot infer the -1 dimension of " + std::to_string(*n) +
            " elements";
      return false;
    }
    out[inferAt] = *n / known;
  } else if (known != *n) {
    err = "cannot reshape " + std::to_string(*n) + " elements into " +
          std::to_string(known);
    return false;
  }
  return true;
}

namespace vram::onnx_import {
bool resolveReshape(ArrayRef<int64_t> in, ArrayRef<int64_t> spec,
                    bool allowZero, SmallVector<int64_t, 4> &out,
                    std::string &err) {
  return reshapeTarget(in, spec, allowZero, out, err);
}
} // namespace vram::onnx_import

bool vram::onnx_import::readSliceSpec(const ConstTensor *starts,
                                      const ConstTensor *ends,
                                      const ConstTensor *axes,
                                      const ConstTensor *steps, bool fromInputs,
                                      const FoldAttrs &attrs, SliceSpec &spec,
                                      std::string &err) {
  if (fromInputs) {
    if (!starts || !ends) {
      err = "missing starts or ends";
      return false;
    }
    spec.starts = starts->toInts();
    spec.ends = ends->toInts();
    if (axes)
      spec.axes = axes->toInts();
    if (steps)
      spec.steps = steps->toInts();
  } else {
    spec.starts = attrs.getInts("starts").value_or(std::vector<int64_t>{});
    spec.ends = attrs.getInts("ends").value_or(std::vector<int64_t>{});
    spec.axes = attrs.getInts("axes").value_or(std::vector<int64_t>{});
  }
  if (spec.axes.empty())
    for (size_t k = 0; k < spec.starts.size(); ++k)
      spec.axes.push_back(k);
  if (spec.steps.empty())
    spec.steps.assign(spec.starts.size(), 1);
  if (spec.ends.size() != spec.starts.size() ||
      spec.axes.size() != spec.starts.size() ||
      spec.steps.size() != spec.starts.size()) {
    err = "starts, ends, axes and steps differ in length";
    return false;
  }
  return true;
}
