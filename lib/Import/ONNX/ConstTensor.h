//===- ConstTensor.h - constant tensors of the ONNX importer ----*- C++ -*-===//
//
// Host-side constant tensors (decoded with libonnx's ParseData where it
// applies, ConstTensor.cpp) and the folding of shape and mask computations
// (Gather/Concat/Unsqueeze/.../Where/Range/Trilu) at import time
// (ConstFold.cpp). Internal to lib/Import/ONNX.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_LIB_IMPORT_ONNX_CONSTTENSOR_H
#define VRAM_LIB_IMPORT_ONNX_CONSTTENSOR_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace onnx {
class TensorProto;
} // namespace onnx

namespace vram::onnx_import {

/// Largest tensor folded at import time (elements).
constexpr int64_t kMaxFoldElements = int64_t(1) << 24;

/// ONNX TensorProto::DataType values used by the importer.
enum OnnxDType : int32_t {
  DT_UNDEFINED = 0,
  DT_FLOAT = 1,
  DT_UINT8 = 2,
  DT_INT8 = 3,
  DT_UINT16 = 4,
  DT_INT16 = 5,
  DT_INT32 = 6,
  DT_INT64 = 7,
  DT_STRING = 8,
  DT_BOOL = 9,
  DT_FLOAT16 = 10,
  DT_DOUBLE = 11,
  DT_UINT32 = 12,
  DT_UINT64 = 13,
  DT_BFLOAT16 = 16,
};

bool isFloatDType(int32_t dtype);
bool isIntegerDType(int32_t dtype); ///< integers and bool
const char *dtypeName(int32_t dtype);

/// Multiplies dims, failing on negative dims or int64 overflow.
std::optional<int64_t> checkedNumElements(llvm::ArrayRef<int64_t> shape);

/// Why the data stored in `t` (raw_data or its typed field) disagrees with
/// its dims, or nullopt when it agrees or `t` stores no data (a shapes-only
/// initializer, or external data). `t`'s dims must have a checked product.
std::optional<std::string> describeStoredSizeMismatch(const onnx::TensorProto &t);

/// `v` truncated to int64, saturating out-of-range values (NaN gives 0):
/// a plain cast of those is undefined behaviour.
inline int64_t saturatingToInt64(double v) {
  if (!(v == v))
    return 0;
  if (v >= 9223372036854775807.0)
    return INT64_MAX;
  if (v <= -9223372036854775808.0)
    return INT64_MIN;
  return (int64_t)v;
}

/// A constant tensor held on the host: floats as double, integers and bools
/// as int64.
struct ConstTensor {
  llvm::SmallVector<int64_t, 4> shape;
  int32_t dtype = DT_INT64;
  std::vector<double> f;
  std::vector<int64_t> i;

  bool isFloat() const { return isFloatDType(dtype); }
  int64_t numElements() const {
    return isFloat() ? (int64_t)f.size() : (int64_t)i.size();
  }
  double getF(int64_t k) const { return isFloat() ? f[k] : (double)i[k]; }
  int64_t getI(int64_t k) const {
    return isFloat() ? saturatingToInt64(f[k]) : i[k];
  }
  /// Makes an empty tensor of `dtype` and `shape` with storage allocated.
  static ConstTensor make(int32_t dtype, llvm::ArrayRef<int64_t> shape);
  static ConstTensor scalarI(int64_t v);
  /// Values as int64 (for shapes, axes, indices).
  std::vector<int64_t> toInts() const;
};

/// Decodes an initializer or a Constant's value. Fails with a message in
/// `err` (external data, bad sizes, unsupported types, too large).
bool decodeTensor(const onnx::TensorProto &t, ConstTensor &out,
                  std::string &err);

/// Folds one ONNX op over constant inputs (absent optional inputs are null).
/// `attrs` gives access to the node's attributes. Returns false with `err`
/// set when the op cannot be folded.
struct FoldAttrs {
  virtual ~FoldAttrs() = default;
  virtual std::optional<int64_t> getInt(llvm::StringRef name) const = 0;
  virtual std::optional<std::vector<int64_t>>
  getInts(llvm::StringRef name) const = 0;
  virtual const onnx::TensorProto *getTensor(llvm::StringRef name) const = 0;
};

/// The elements the folded constants of one import may hold together
/// (OnnxImportOptions::maxFoldedElements): each folded value is kept for the
/// whole import, so without a total a chain of folded ops each under
/// kMaxFoldElements could still allocate gigabytes.
struct FoldBudget {
  int64_t total = 0;
  int64_t used = 0;
  int64_t left() const { return total > used ? total - used : 0; }
  /// The error when a result of `more` elements does not fit.
  std::string exceeded(int64_t more) const;
};

/// The op types foldOp folds, sorted.
llvm::ArrayRef<llvm::StringRef> foldableOps();
bool isFoldableOp(llvm::StringRef opType);
/// With a `budget`, the results are counted against it: a result that does
/// not fit fails (with `err`), before it is allocated where its size is
/// known up front.
bool foldOp(llvm::StringRef opType, llvm::ArrayRef<const ConstTensor *> inputs,
            const FoldAttrs &attrs, unsigned numOutputs,
            std::vector<ConstTensor> &outputs, std::string &err,
            FoldBudget *budget = nullptr);

/// Slice's starts/ends/axes/steps, from inputs 1-4 (opset >= 10; null when
/// absent) or from the attributes (older opsets). Defaults axes to 0..n-1
/// and steps to 1; fails with `err` when they are missing or differ in length.
struct SliceSpec {
  std::vector<int64_t> starts, ends, axes, steps;
};
bool readSliceSpec(const ConstTensor *starts, const ConstTensor *ends,
                   const ConstTensor *axes, const ConstTensor *steps,
                   bool fromInputs, const FoldAttrs &attrs, SliceSpec &spec,
                   std::string &err);

/// Resolves ONNX Reshape's target (0 copies a dim unless allowZero, -1 is
/// inferred) for an input of shape `in`.
bool resolveReshape(llvm::ArrayRef<int64_t> in, llvm::ArrayRef<int64_t> spec,
                    bool allowZero, llvm::SmallVector<int64_t, 4> &out,
                    std::string &err);

/// Numpy-style broadcast of two shapes.
std::optional<llvm::SmallVector<int64_t, 4>>
broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b);

/// Broadcasts `t` to `shape` (which must be a valid broadcast target).
ConstTensor broadcastTo(const ConstTensor &t, llvm::ArrayRef<int64_t> shape);

} // namespace vram::onnx_import

#endif // VRAM_LIB_IMPORT_ONNX_CONSTTENSOR_H
