//===- ConstFold.cpp - folding of ONNX shape computations -----------------===//
//
// Folds the shape and mask computations that torch.onnx emits around
// Reshape/Expand/Slice/Where (Shape/Gather/Concat/Range/Trilu/Where/...) at
// import time. libonnx does not fold these: its data propagation covers only
// 1-D int64 shape values of a few ops, crashes in libonnx 1.12 (see
// OnnxLibrary.cpp), and nothing in it builds the float masks of attention
// (Trilu/Where/Range/Equal) or the scalars of exporter decompositions.
//
// Each foldable op type is one registration in a FoldTable, as the
// converters are in ConverterTable: the table's keys are foldableOps(), so
// the list of folded ops (and foldOnlyOps()) cannot drift from what folds.
// The elementwise ops register from one list each, giving the function for a
// pair (or one) of elements, so the per-element loop calls it directly.
//
//===----------------------------------------------------------------------===//

#include "ConstTensor.h"

#include "vram/Support/CheckedMath.h"

#include "onnx/onnx_pb.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/StringMap.h"

#include <cassert>
#include <cmath>
#include <functional>

using namespace vram::onnx_import;
using llvm::ArrayRef;
using llvm::SmallVector;
using llvm::StringRef;

namespace {
/// Converts a value to the storage of `dt` (truncation for integers).
bool castValue(double v, int32_t dt, int64_t &out) {
  if (dt == DT_BOOL) {
    out = v != 0;
    return true;
  }
  if (!std::isfinite(v) || v >= 9.2e18 || v <= -9.2e18)
    return false;
  out = (int64_t)v;
  return true;
}
/// Maps a flat index of `outShape` to a flat index of a tensor of shape `in`
/// broadcast to it.
struct BroadcastIndexer {
  SmallVector<int64_t, 4> outShape, strides; // strides of `in` aligned to out
  BroadcastIndexer(ArrayRef<int64_t> in, ArrayRef<int64_t> out)
      : outShape(out.begin(), out.end()), strides(out.size(), 0) {
    int64_t s = 1;
    for (int64_t k = (int64_t)in.size() - 1; k >= 0; --k) {
      int64_t o = k + (int64_t)(out.size() - in.size());
      strides[o] = in[k] == 1 ? 0 : s;
      s = vram::saturatingMul(s, in[k]);
    }
  }
  int64_t map(int64_t flat) const {
    int64_t idx = 0;
    for (int64_t k = (int64_t)outShape.size() - 1; k >= 0; --k) {
      int64_t d = outShape[k];
      if (d == 0)
        return 0;
      idx += (flat % d) * strides[k];
      flat /= d;
    }
    return idx;
  }
};

int64_t normAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

/// Whether a result of `shape` is past the per-tensor cap, or past `budget`
/// (what the import's folded constants may still hold, when it counts):
/// checked before the result is allocated.
bool tooBig(ArrayRef<int64_t> shape, const FoldBudget *budget,
            std::string &err) {
  auto n = checkedNumElements(shape);
  if (!n || *n > kMaxFoldElements) {
    err = "the folded result would be too large";
    return true;
  }
  if (budget && *n > budget->left()) {
    err = budget->exceeded(*n);
    return true;
  }
  return false;
}

int32_t promoteDType(int32_t a, int32_t b) {
  if (a == b)
    return a;
  if (isFloatDType(a))
    return a;
  if (isFloatDType(b))
    return b;
  return a;
}

/// The node being folded, as its fold function sees it: the constant inputs
/// (null where an optional input is absent), the attributes, the import's
/// budget (null when results are not counted) and where the reason for a
/// failure goes.
struct FoldNode {
  ArrayRef<const ConstTensor *> in;
  const FoldAttrs &attrs;
  const FoldBudget *budget;
  std::string &err;

  const ConstTensor *input(unsigned k) const {
    return k < in.size() ? in[k] : nullptr;
  }
  /// Input `k`, or null with `err` set when it is absent.
  const ConstTensor *need(unsigned k) {
    const ConstTensor *t = input(k);
    if (!t)
      err = "input " + std::to_string(k) + " is missing";
    return t;
  }
  /// Axes from input `k` (opset >= 13) or the `axes` attribute.
  std::optional<std::vector<int64_t>> axesOf(unsigned k) const {
    if (const ConstTensor *t = input(k))
      return t->toInts();
    return attrs.getInts("axes");
  }
};

/// Folds a node into its single result (every foldable ONNX op has one), or
/// fails with `node.err` set.
using FoldFn = std::function<bool(FoldNode &node, ConstTensor &out)>;

/// The fold function of each foldable op type, registered once per type.
class FoldTable {
public:
  void onOp(StringRef opType, FoldFn fn) {
    bool inserted = folds.try_emplace(opType, std::move(fn)).second;
    assert(inserted && "two fold functions for one op type");
    (void)inserted;
    sortedOpTypes.insert(llvm::lower_bound(sortedOpTypes, opType),
                         folds.find(opType)->getKey());
  }
  /// The fold function of `opType`, or null when it does not fold.
  const FoldFn *lookup(StringRef opType) const {
    auto it = folds.find(opType);
    return it == folds.end() ? nullptr : &it->second;
  }
  /// The op types that fold, sorted (foldOnlyOps() merges them with the
  /// converter table's).
  ArrayRef<StringRef> opTypes() const { return sortedOpTypes; }

  /// The table with every fold function, built once.
  static const FoldTable &get();

private:
  llvm::StringMap<FoldFn> folds;
  SmallVector<StringRef> sortedOpTypes;
};

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

/// The type of a binary op's result.
enum class BinaryResult {
  Promoted, ///< the operands' common type
  Base,     ///< the first operand's (Pow: the exponent's type does not count)
  Bool,     ///< bool (comparisons and logical ops)
};

/// An integer result, or none (overflow, division by zero).
using IntOrNone = std::optional<int64_t>;

/// An elementwise binary op: what it computes on one pair of elements.
struct BinaryFold {
  const char *name;
  /// On floats; null where the op takes integers and bools only.
  double (*onFloats)(double x, double y);
  /// On integers and bools: nullopt when there is no result (`intError`).
  /// `yF` is `y` as stored (Pow's exponent may be a float on an integer
  /// base).
  IntOrNone (*onInts)(int64_t x, int64_t y, double yF);
  const char *intError;
  BinaryResult result;
};

constexpr const char *kOverflow = "integer overflow";
constexpr const char *kDivByZero = "integer division by zero";

const BinaryFold kBinaryFolds[] = {
    {"Add", [](double x, double y) { return x + y; },
     [](int64_t x, int64_t y, double) { return vram::checkedAdd(x, y); },
     kOverflow, BinaryResult::Promoted},
    {"Sub", [](double x, double y) { return x - y; },
     [](int64_t x, int64_t y, double) { return vram::checkedSub(x, y); },
     kOverflow, BinaryResult::Promoted},
    {"Mul", [](double x, double y) { return x * y; },
     [](int64_t x, int64_t y, double) { return vram::checkedMul(x, y); },
     kOverflow, BinaryResult::Promoted},
    {"Div", [](double x, double y) { return x / y; },
     [](int64_t x, int64_t y, double) -> IntOrNone {
       if (y == 0 || (x == INT64_MIN && y == -1))
         return std::nullopt;
       return x / y;
     },
     kDivByZero, BinaryResult::Promoted},
    {"Mod", [](double x, double y) { return std::fmod(x, y); },
     [](int64_t x, int64_t y, double) -> IntOrNone {
       if (y == 0 || (x == INT64_MIN && y == -1))
         return std::nullopt;
       // ONNX Mod with fmod=0 has the sign of the divisor.
       int64_t r = x % y;
       if (r != 0 && ((r < 0) != (y < 0)))
         r += y;
       return r;
     },
     kDivByZero, BinaryResult::Promoted},
    {"Min", [](double x, double y) { return std::min(x, y); },
     [](int64_t x, int64_t y, double) -> IntOrNone { return std::min(x, y); },
     nullptr, BinaryResult::Promoted},
    {"Max", [](double x, double y) { return std::max(x, y); },
     [](int64_t x, int64_t y, double) -> IntOrNone { return std::max(x, y); },
     nullptr, BinaryResult::Promoted},
    {"Pow", [](double x, double y) { return std::pow(x, y); },
     [](int64_t x, int64_t, double yF) -> IntOrNone {
       double p = std::pow((double)x, yF);
       if (!(std::fabs(p) < 9.2e18))
         return std::nullopt;
       return (int64_t)p;
     },
     kOverflow, BinaryResult::Base},
    {"Equal", [](double x, double y) -> double { return x == y; },
     [](int64_t x, int64_t y, double) -> IntOrNone { return x == y; }, nullptr,
     BinaryResult::Bool},
    {"Less", [](double x, double y) -> double { return x < y; },
     [](int64_t x, int64_t y, double) -> IntOrNone { return x < y; }, nullptr,
     BinaryResult::Bool},
    {"Greater", [](double x, double y) -> double { return x > y; },
     [](int64_t x, int64_t y, double) -> IntOrNone { return x > y; }, nullptr,
     BinaryResult::Bool},
    {"And", nullptr,
     [](int64_t x, int64_t y, double) -> IntOrNone { return x && y; }, nullptr,
     BinaryResult::Bool},
    {"Or", nullptr,
     [](int64_t x, int64_t y, double) -> IntOrNone { return x || y; }, nullptr,
     BinaryResult::Bool},
};

bool foldBinary(const BinaryFold &op, FoldNode &node, ConstTensor &out) {
  const ConstTensor *pa = node.need(0), *pb = node.need(1);
  if (!pa || !pb)
    return false;
  const ConstTensor &a = *pa, &b = *pb;
  auto shape = broadcastShapes(a.shape, b.shape);
  if (!shape) {
    node.err = "operand shapes do not broadcast";
    return false;
  }
  if (tooBig(*shape, node.budget, node.err))
    return false;
  int32_t dt = op.result == BinaryResult::Base ? a.dtype
                                               : promoteDType(a.dtype, b.dtype);
  bool toBool = op.result == BinaryResult::Bool;
  out = ConstTensor::make(toBool ? DT_BOOL : dt, *shape);
  BroadcastIndexer ia(a.shape, *shape), ib(b.shape, *shape);
  int64_t n = out.numElements();
  if (isFloatDType(dt)) {
    // Rejected at the first element: an empty result still folds.
    if (!op.onFloats && n > 0) {
      node.err = "unsupported on floats";
      return false;
    }
    for (int64_t k = 0; k < n; ++k) {
      double r = op.onFloats(a.getF(ia.map(k)), b.getF(ib.map(k)));
      if (toBool)
        out.i[k] = r != 0;
      else
        out.f[k] = r;
    }
    return true;
  }
  for (int64_t k = 0; k < n; ++k) {
    int64_t kb = ib.map(k);
    IntOrNone r = op.onInts(a.getI(ia.map(k)), b.getI(kb), b.getF(kb));
    if (!r) {
      node.err = op.intError;
      return false;
    }
    out.i[k] = *r;
  }
  return true;
}

/// An elementwise unary op: what it computes on one element.
struct UnaryFold {
  const char *name;
  /// On floats; null where the op takes integers and bools only.
  double (*onFloats)(double x);
  /// On integers and bools, nullopt on overflow; null where the op takes
  /// floats only.
  IntOrNone (*onInts)(int64_t x);
};

const UnaryFold kUnaryFolds[] = {
    {"Not", nullptr, [](int64_t x) -> IntOrNone { return !x; }},
    {"Neg", [](double x) { return -x; },
     [](int64_t x) -> IntOrNone {
       if (x == INT64_MIN)
         return std::nullopt;
       return -x;
     }},
    {"Abs", [](double x) { return std::fabs(x); },
     [](int64_t x) -> IntOrNone {
       if (x == INT64_MIN)
         return std::nullopt;
       return std::abs(x);
     }},
    {"Sqrt", [](double x) { return std::sqrt(x); }, nullptr},
    // Integers are whole already.
    {"Floor", [](double x) { return std::floor(x); },
     [](int64_t x) -> IntOrNone { return x; }},
    {"Ceil", [](double x) { return std::ceil(x); },
     [](int64_t x) -> IntOrNone { return x; }},
};

bool foldUnary(const UnaryFold &op, FoldNode &node, ConstTensor &out) {
  const ConstTensor *a = node.need(0);
  if (!a)
    return false;
  out = *a;
  int64_t n = out.numElements();
  if (out.isFloat()) {
    // Rejected at the first element: an empty tensor still folds.
    if (!op.onFloats && n > 0) {
      node.err = std::string(op.name) + " on floats";
      return false;
    }
    for (int64_t k = 0; k < n; ++k)
      out.f[k] = op.onFloats(out.f[k]);
    return true;
  }
  if (!op.onInts && n > 0) {
    node.err = std::string(op.name) + " on integers";
    return false;
  }
  for (int64_t k = 0; k < n; ++k) {
    IntOrNone r = op.onInts(out.i[k]);
    if (!r) {
      node.err = kOverflow;
      return false;
    }
    out.i[k] = *r;
  }
  return true;
}
} // namespace

ConstTensor vram::onnx_import::broadcastTo(const ConstTensor &t,
                                           ArrayRef<int64_t> shape) {
  ConstTensor r = ConstTensor::make(t.dtype, shape);
  BroadcastIndexer ix(t.shape, shape);
  for (int64_t k = 0, n = r.numElements(); k < n; ++k) {
    if (r.isFloat())
      r.f[k] = t.f[ix.map(k)];
    else
      r.i[k] = t.i[ix.map(k)];
  }
  return r;
}

static bool castTo(const ConstTensor &in, int32_t to, ConstTensor &out,
                   std::string &err) {
  if (!isFloatDType(to) && !isIntegerDType(to)) {
    err = std::string("cannot cast to ") + dtypeName(to);
    return false;
  }
  out = ConstTensor::make(to, in.shape);
  for (int64_t k = 0, n = in.numElements(); k < n; ++k) {
    if (out.isFloat()) {
      out.f[k] = in.getF(k);
    } else if (in.isFloat()) {
      if (!castValue(in.f[k], to, out.i[k])) {
        err = "value out of range for the integer type";
        return false;
      }
    } else {
      out.i[k] = to == DT_BOOL ? in.i[k] != 0 : in.i[k];
    }
  }
  return true;
}

std::string FoldBudget::exceeded(int64_t more) const {
  return "the constants folded so far (" + std::to_string(used) +
         " elements) and this result (" + std::to_string(more) +
         ") exceed the import's budget of " + std::to_string(total) +
         " folded elements";
}

//===----------------------------------------------------------------------===//
// Other ops
//===----------------------------------------------------------------------===//

static bool foldIdentity(FoldNode &node, ConstTensor &out) {
  const ConstTensor *a = node.need(0);
  if (!a)
    return false;
  out = *a;
  return true;
}

static bool foldConstant(FoldNode &node, ConstTensor &out) {
  if (const onnx::TensorProto *t = node.attrs.getTensor("value"))
    return decodeTensor(*t, out, node.err);
  if (auto v = node.attrs.getInt("value_int")) {
    out = ConstTensor::scalarI(*v);
    return true;
  }
  if (auto vs = node.attrs.getInts("value_ints")) {
    out = ConstTensor::make(DT_INT64, {(int64_t)vs->size()});
    out.i = *vs;
    return true;
  }
  node.err = "only tensor and integer Constant values are supported";
  return false;
}

static bool foldGather(FoldNode &node, ConstTensor &out) {
  const ConstTensor *d = node.need(0), *idx = node.need(1);
  if (!d || !idx)
    return false;
  int64_t rank = d->shape.size();
  int64_t axis = normAxis(node.attrs.getInt("axis").value_or(0), rank);
  if (axis < 0 || axis >= rank) {
    node.err = "axis out of range";
    return false;
  }
  SmallVector<int64_t, 4> shape(d->shape.begin(), d->shape.begin() + axis);
  shape.append(idx->shape.begin(), idx->shape.end());
  shape.append(d->shape.begin() + axis + 1, d->shape.end());
  if (tooBig(shape, node.budget, node.err))
    return false;
  out = ConstTensor::make(d->dtype, shape);
  // An empty result reads nothing; the loops below would still count up to
  // the other (possibly huge) dimensions of an empty input.
  if (out.numElements() == 0)
    return true;
  int64_t outer = 1, inner = 1, dim = d->shape[axis];
  for (int64_t k = 0; k < axis; ++k)
    outer = vram::saturatingMul(outer, d->shape[k]);
  for (int64_t k = axis + 1; k < rank; ++k)
    inner = vram::saturatingMul(inner, d->shape[k]);
  int64_t ni = idx->numElements(), o = 0;
  for (int64_t a = 0; a < outer; ++a)
    for (int64_t j = 0; j < ni; ++j) {
      int64_t x = idx->getI(j);
      if (x < 0)
        x += dim;
      if (x < 0 || x >= dim) {
        node.err = "index " + std::to_string(idx->getI(j)) + " is out of range";
        return false;
      }
      for (int64_t c = 0; c < inner; ++c, ++o) {
        int64_t src = (a * dim + x) * inner + c;
        if (out.isFloat())
          out.f[o] = d->f[src];
        else
          out.i[o] = d->i[src];
      }
    }
  return true;
}

static bool foldConcat(FoldNode &node, ConstTensor &out) {
  ArrayRef<const ConstTensor *> in = node.in;
  if (in.empty() || !in[0]) {
    node.err = "no inputs";
    return false;
  }
  int64_t rank = in[0]->shape.size();
  int64_t axis = normAxis(node.attrs.getInt("axis").value_or(0), rank);
  if (axis < 0 || axis >= rank) {
    node.err = "axis out of range";
    return false;
  }
  SmallVector<int64_t, 4> shape(in[0]->shape);
  shape[axis] = 0;
  int32_t dt = in[0]->dtype;
  for (const ConstTensor *t : in) {
    if (!t || (int64_t)t->shape.size() != rank) {
      node.err = "inputs have different ranks";
      return false;
    }
    for (int64_t k = 0; k < rank; ++k)
      if (k != axis && t->shape[k] != in[0]->shape[k]) {
        node.err = "input shapes differ outside the axis";
        return false;
      }
    shape[axis] += t->shape[axis];
    dt = promoteDType(dt, t->dtype);
  }
  if (tooBig(shape, node.budget, node.err))
    return false;
  out = ConstTensor::make(dt, shape);
  if (out.numElements() == 0)
    return true;
  int64_t outer = 1;
  for (int64_t k = 0; k < axis; ++k)
    outer = vram::saturatingMul(outer, shape[k]);
  int64_t o = 0;
  for (int64_t a = 0; a < outer; ++a)
    for (const ConstTensor *t : in) {
      int64_t chunk = t->numElements() / std::max<int64_t>(outer, 1);
      for (int64_t c = 0; c < chunk; ++c, ++o) {
        if (out.isFloat())
          out.f[o] = t->getF(a * chunk + c);
        else
          out.i[o] = t->getI(a * chunk + c);
      }
    }
  return true;
}

static bool foldUnsqueeze(FoldNode &node, ConstTensor &out) {
  const ConstTensor *d = node.need(0);
  if (!d)
    return false;
  auto axes = node.axesOf(1);
  if (!axes) {
    node.err = "missing axes";
    return false;
  }
  int64_t rank = d->shape.size() + axes->size();
  std::vector<bool> ins(rank, false);
  for (int64_t a : *axes) {
    a = normAxis(a, rank);
    if (a < 0 || a >= rank || ins[a]) {
      node.err = "bad axes";
      return false;
    }
    ins[a] = true;
  }
  SmallVector<int64_t, 4> shape;
  size_t src = 0;
  for (int64_t k = 0; k < rank; ++k)
    shape.push_back(ins[k] ? 1 : d->shape[src++]);
  out = *d;
  out.shape = shape;
  return true;
}

static bool foldSqueeze(FoldNode &node, ConstTensor &out) {
  const ConstTensor *d = node.need(0);
  if (!d)
    return false;
  auto axes = node.axesOf(1);
  int64_t rank = d->shape.size();
  std::vector<bool> drop(rank, false);
  if (axes) {
    for (int64_t a : *axes) {
      a = normAxis(a, rank);
      if (a < 0 || a >= rank || d->shape[a] != 1) {
        node.err = "bad axes";
        return false;
      }
      drop[a] = true;
    }
  } else {
    for (int64_t k = 0; k < rank; ++k)
      drop[k] = d->shape[k] == 1;
  }
  SmallVector<int64_t, 4> shape;
  for (int64_t k = 0; k < rank; ++k)
    if (!drop[k])
      shape.push_back(d->shape[k]);
  out = *d;
  out.shape = shape;
  return true;
}

static bool foldReshape(FoldNode &node, ConstTensor &out) {
  const ConstTensor *d = node.need(0);
  if (!d)
    return false;
  const ConstTensor *s = node.need(1);
  if (!s)
    return false;
  std::vector<int64_t> spec = s->toInts();
  SmallVector<int64_t, 4> shape;
  if (!resolveReshape(d->shape, spec,
                      node.attrs.getInt("allowzero").value_or(0), shape,
                      node.err))
    return false;
  out = *d;
  out.shape = shape;
  return true;
}

static bool foldFlatten(FoldNode &node, ConstTensor &out) {
  const ConstTensor *d = node.need(0);
  if (!d)
    return false;
  int64_t rank = d->shape.size();
  int64_t axis = normAxis(node.attrs.getInt("axis").value_or(1), rank);
  if (axis < 0 || axis > rank) {
    node.err = "axis out of range";
    return false;
  }
  std::optional<int64_t> a =
      vram::checkedProduct(llvm::ArrayRef<int64_t>(d->shape).take_front(axis));
  std::optional<int64_t> b =
      vram::checkedProduct(llvm::ArrayRef<int64_t>(d->shape).drop_front(axis));
  if (!a || !b) {
    node.err = "the flattened shape overflows 64 bits";
    return false;
  }
  out = *d;
  out.shape = {*a, *b};
  return true;
}

static bool foldSlice(FoldNode &node, ConstTensor &out) {
  const ConstTensor *d = node.need(0);
  if (!d)
    return false;
  int64_t rank = d->shape.size();
  SliceSpec spec;
  if (!readSliceSpec(node.input(1), node.input(2), node.input(3), node.input(4),
                     node.input(1) != nullptr, node.attrs, spec, node.err))
    return false;
  auto &[starts, ends, axes, steps] = spec;
  SmallVector<int64_t, 4> st(rank, 0), sp(rank, 1), shape(d->shape);
  for (size_t k = 0; k < starts.size(); ++k) {
    int64_t a = normAxis(axes[k], rank);
    if (a < 0 || a >= rank || steps[k] == 0) {
      node.err = "bad axes or steps";
      return false;
    }
    int64_t dim = d->shape[a], s = starts[k], e = ends[k], step = steps[k];
    if (s < 0)
      s += dim;
    if (e < 0)
      e += dim;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      shape[a] = e > s ? (e - s + step - 1) / step : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      shape[a] = s > e ? (s - e - step - 1) / (-step) : 0;
    }
    st[a] = s;
    sp[a] = step;
  }
  out = ConstTensor::make(d->dtype, shape);
  SmallVector<int64_t, 4> idx(rank, 0);
  for (int64_t o = 0, n = out.numElements(); o < n; ++o) {
    int64_t rem = o, src = 0, mul = 1;
    for (int64_t k = rank - 1; k >= 0; --k) {
      idx[k] = rem % shape[k];
      rem /= shape[k];
    }
    for (int64_t k = rank - 1; k >= 0; --k) {
      src += (st[k] + idx[k] * sp[k]) * mul;
      mul *= d->shape[k];
    }
    if (out.isFloat())
      out.f[o] = d->f[src];
    else
      out.i[o] = d->i[src];
  }
  return true;
}

static bool foldCast(FoldNode &node, ConstTensor &out) {
  const ConstTensor *d = node.need(0);
  if (!d)
    return false;
  auto to = node.attrs.getInt("to");
  if (!to) {
    node.err = "missing 'to'";
    return false;
  }
  return castTo(*d, *to, out, node.err);
}

static bool foldTranspose(FoldNode &node, ConstTensor &out) {
  const ConstTensor *d = node.need(0);
  if (!d)
    return false;
  int64_t rank = d->shape.size();
  std::vector<int64_t> perm =
      node.attrs.getInts("perm").value_or(std::vector<int64_t>{});
  if (perm.empty())
    for (int64_t k = rank - 1; k >= 0; --k)
      perm.push_back(k);
  if ((int64_t)perm.size() != rank) {
    node.err = "perm does not match the rank";
    return false;
  }
  SmallVector<int64_t, 4> shape, srcStride(rank, 1);
  for (int64_t k = rank - 2; k >= 0; --k)
    srcStride[k] = vram::saturatingMul(srcStride[k + 1], d->shape[k + 1]);
  // A permutation names every axis once: a repeated axis would read past
  // the input below.
  llvm::SmallBitVector seen(rank);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen.test(p)) {
      node.err = "bad perm";
      return false;
    }
    seen.set(p);
    shape.push_back(d->shape[p]);
  }
  out = ConstTensor::make(d->dtype, shape);
  for (int64_t o = 0, n = out.numElements(); o < n; ++o) {
    int64_t rem = o, src = 0;
    for (int64_t k = rank - 1; k >= 0; --k) {
      src += (rem % shape[k]) * srcStride[perm[k]];
      rem /= shape[k];
    }
    if (out.isFloat())
      out.f[o] = d->f[src];
    else
      out.i[o] = d->i[src];
  }
  return true;
}

/// data[indices[i]] = updates[i]; indices [..., k] address the first k dims
/// of data, each update is the remaining slice.
static bool foldScatterND(FoldNode &node, ConstTensor &out) {
  const ConstTensor *d = node.need(0), *ix = node.need(1), *u = node.need(2);
  if (!d || !ix || !u)
    return false;
  if (ix->shape.empty()) {
    node.err = "indices must have rank >= 1";
    return false;
  }
  int64_t k = ix->shape.back(), r = d->shape.size();
  if (k > r) {
    node.err = "indices address more dims than data has";
    return false;
  }
  int64_t slice = 1;
  for (int64_t j = k; j < r; ++j)
    slice = vram::saturatingMul(slice, d->shape[j]);
  int64_t n = k ? ix->numElements() / k : 0;
  if (u->numElements() != vram::saturatingMul(n, slice)) {
    node.err = "updates do not match indices";
    return false;
  }
  out = *d;
  for (int64_t e = 0; e < n; ++e) {
    int64_t off = 0;
    for (int64_t j = 0; j < k; ++j) {
      int64_t i = ix->getI(e * k + j), dim = d->shape[j];
      if (i < 0)
        i += dim;
      if (i < 0 || i >= dim) {
        node.err = "index out of range";
        return false;
      }
      off = off * dim + i;
    }
    for (int64_t q = 0; q < slice; ++q) {
      if (out.isFloat())
        out.f[off * slice + q] = u->getF(e * slice + q);
      else
        out.i[off * slice + q] = u->getI(e * slice + q);
    }
  }
  return true;
}

static bool foldWhere(FoldNode &node, ConstTensor &out) {
  const ConstTensor *c = node.need(0), *a = node.need(1), *b = node.need(2);
  if (!c || !a || !b)
    return false;
  auto s1 = broadcastShapes(c->shape, a->shape);
  auto s = s1 ? broadcastShapes(*s1, b->shape) : std::nullopt;
  if (!s) {
    node.err = "operand shapes do not broadcast";
    return false;
  }
  if (tooBig(*s, node.budget, node.err))
    return false;
  out = ConstTensor::make(promoteDType(a->dtype, b->dtype), *s);
  BroadcastIndexer ic(c->shape, *s), ia(a->shape, *s), ib(b->shape, *s);
  for (int64_t k = 0, n = out.numElements(); k < n; ++k) {
    bool take = c->getI(ic.map(k)) != 0;
    const ConstTensor *src = take ? a : b;
    int64_t si = take ? ia.map(k) : ib.map(k);
    if (out.isFloat())
      out.f[k] = src->getF(si);
    else
      out.i[k] = src->getI(si);
  }
  return true;
}

static bool foldExpand(FoldNode &node, ConstTensor &out) {
  const ConstTensor *d = node.need(0), *s = node.need(1);
  if (!d || !s)
    return false;
  std::vector<int64_t> spec = s->toInts();
  auto shape = broadcastShapes(d->shape, spec);
  if (!shape) {
    node.err = "shape does not broadcast";
    return false;
  }
  if (tooBig(*shape, node.budget, node.err))
    return false;
  out = broadcastTo(*d, *shape);
  return true;
}

static bool foldRange(FoldNode &node, ConstTensor &out) {
  const ConstTensor *s = node.need(0), *l = node.need(1), *dl = node.need(2);
  if (!s || !l || !dl)
    return false;
  if (s->numElements() != 1 || l->numElements() != 1 ||
      dl->numElements() != 1) {
    node.err = "inputs must be scalars";
    return false;
  }
  double start = s->getF(0), limit = l->getF(0), delta = dl->getF(0);
  if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) ||
      !std::isfinite(delta)) {
    node.err = "bad start, limit or delta";
    return false;
  }
  double cnt = std::ceil((limit - start) / delta);
  int64_t n = cnt > 0
                  ? (int64_t)std::min<double>(cnt, (double)kMaxFoldElements + 1)
                  : 0;
  if (tooBig({n}, node.budget, node.err))
    return false;
  out = ConstTensor::make(s->dtype, {n});
  for (int64_t k = 0; k < n; ++k) {
    if (out.isFloat()) {
      out.f[k] = start + k * delta;
      continue;
    }
    std::optional<int64_t> step = vram::checkedMul(k, dl->getI(0));
    std::optional<int64_t> value =
        step ? vram::checkedAdd(s->getI(0), *step) : std::nullopt;
    if (!value) {
      node.err = "the range overflows int64";
      return false;
    }
    out.i[k] = *value;
  }
  return true;
}

static bool foldConstantOfShape(FoldNode &node, ConstTensor &out) {
  const ConstTensor *s = node.need(0);
  if (!s)
    return false;
  std::vector<int64_t> shapeV = s->toInts();
  SmallVector<int64_t, 4> shape(shapeV.begin(), shapeV.end());
  if (tooBig(shape, node.budget, node.err))
    return false;
  ConstTensor v = ConstTensor::make(DT_FLOAT, {1});
  if (const onnx::TensorProto *t = node.attrs.getTensor("value")) {
    if (!decodeTensor(*t, v, node.err))
      return false;
    if (v.numElements() != 1) {
      node.err = "value must have one element";
      return false;
    }
  }
  v.shape.clear();
  out = broadcastTo(v, shape);
  return true;
}

static bool foldTrilu(FoldNode &node, ConstTensor &out) {
  const ConstTensor *d = node.need(0);
  if (!d)
    return false;
  if (d->shape.size() < 2) {
    node.err = "input rank must be >= 2";
    return false;
  }
  const ConstTensor *kt = node.input(1);
  if (kt && kt->numElements() != 1) {
    node.err = "k must be a scalar";
    return false;
  }
  int64_t k = kt ? kt->getI(0) : 0;
  bool upper = node.attrs.getInt("upper").value_or(1);
  out = *d;
  int64_t rows = d->shape[d->shape.size() - 2], cols = d->shape.back();
  for (int64_t e = 0, n = out.numElements(); e < n; ++e) {
    int64_t c = e % cols, r = (e / cols) % rows;
    bool keep = upper ? c - r >= k : c - r <= k;
    if (!keep) {
      if (out.isFloat())
        out.f[e] = 0;
      else
        out.i[e] = 0;
    }
  }
  return true;
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

const FoldTable &FoldTable::get() {
  // Built in place: opTypes() refers to the keys of `folds`.
  static const FoldTable *table = [] {
    auto *t = new FoldTable();
    t->onOp("Identity", foldIdentity);
    t->onOp("Constant", foldConstant);
    t->onOp("Gather", foldGather);
    t->onOp("Concat", foldConcat);
    t->onOp("Unsqueeze", foldUnsqueeze);
    t->onOp("Squeeze", foldSqueeze);
    t->onOp("Reshape", foldReshape);
    t->onOp("Flatten", foldFlatten);
    t->onOp("Slice", foldSlice);
    t->onOp("Cast", foldCast);
    t->onOp("Transpose", foldTranspose);
    t->onOp("ScatterND", foldScatterND);
    t->onOp("Where", foldWhere);
    t->onOp("Expand", foldExpand);
    t->onOp("Range", foldRange);
    t->onOp("ConstantOfShape", foldConstantOfShape);
    t->onOp("Trilu", foldTrilu);
    for (const BinaryFold &op : kBinaryFolds)
      t->onOp(op.name, [&op](FoldNode &node, ConstTensor &out) {
        return foldBinary(op, node, out);
      });
    for (const UnaryFold &op : kUnaryFolds)
      t->onOp(op.name, [&op](FoldNode &node, ConstTensor &out) {
        return foldUnary(op, node, out);
      });
    return t;
  }();
  return *table;
}

llvm::ArrayRef<StringRef> vram::onnx_import::foldableOps() {
  return FoldTable::get().opTypes();
}

bool vram::onnx_import::isFoldableOp(StringRef op) {
  return FoldTable::get().lookup(op) != nullptr;
}

bool vram::onnx_import::foldOp(StringRef op, ArrayRef<const ConstTensor *> in,
                               const FoldAttrs &attrs, unsigned numOutputs,
                               std::vector<ConstTensor> &outs, std::string &err,
                               FoldBudget *budget) {
  (void)numOutputs; // every foldable op has one result
  outs.clear();
  const FoldFn *fold = FoldTable::get().lookup(op);
  if (!fold) {
    err = "the importer cannot fold it";
    return false;
  }
  FoldNode node{in, attrs, budget, err};
  ConstTensor out;
  if (!(*fold)(node, out))
    return false;
  if (budget) {
    // Results no larger than an input (Cast, Gather, Slice, Identity, ...)
    // are not checked before they are made: count every result here.
    int64_t n = out.numElements();
    if (n > budget->left()) {
      err = budget->exceeded(n);
      return false;
    }
    budget->used += n;
  }
  outs.push_back(std::move(out));
  return true;
}
