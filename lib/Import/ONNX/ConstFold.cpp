//===- ConstFold.cpp - folding of ONNX shape computations -----------------===//
//
// Folds the shape and mask computations that torch.onnx emits around
// Reshape/Expand/Slice/Where (Shape/Gather/Concat/Range/Trilu/Where/...) at
// import time. libonnx does not fold these: its data propagation covers only
// 1-D int64 shape values of a few ops, crashes in libonnx 1.12 (see
// OnnxLibrary.cpp), and nothing in it builds the float masks of attention
// (Trilu/Where/Range/Equal) or the scalars of exporter decompositions.
//
//===----------------------------------------------------------------------===//

#include "ConstTensor.h"

#include "vram/Support/CheckedMath.h"

#include "onnx/onnx_pb.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <cstring>

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
      s *= in[k];
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

llvm::ArrayRef<StringRef> vram::onnx_import::foldableOps() {
  // Sorted: foldOnlyOps() merges it with the converter table.
  static const StringRef ops[] = {
      "Abs",       "Add",    "And",       "Cast",
      "Ceil",      "Concat", "Constant",  "ConstantOfShape",
      "Div",       "Equal",  "Expand",    "Flatten",
      "Floor",     "Gather", "Greater",   "Identity",
      "Less",      "Max",    "Min",       "Mod",
      "Mul",       "Neg",    "Not",       "Or",
      "Pow",       "Range",  "Reshape",   "ScatterND",
      "Slice",     "Sqrt",   "Squeeze",   "Sub",
      "Transpose", "Trilu",  "Unsqueeze", "Where"};
  return ops;
}

bool vram::onnx_import::isFoldableOp(StringRef op) {
  return llvm::is_contained(foldableOps(), op);
}

static bool foldBinary(StringRef op, const ConstTensor &a, const ConstTensor &b,
                       ConstTensor &out, const FoldBudget *budget,
                       std::string &err) {
  auto shape = broadcastShapes(a.shape, b.shape);
  if (!shape) {
    err = "operand shapes do not broadcast";
    return false;
  }
  if (tooBig(*shape, budget, err))
    return false;
  bool cmp = op == "Equal" || op == "Less" || op == "Greater" || op == "And" ||
             op == "Or";
  // Pow keeps the base's type.
  int32_t dt = op == "Pow" ? a.dtype : promoteDType(a.dtype, b.dtype);
  out = ConstTensor::make(cmp ? DT_BOOL : dt, *shape);
  BroadcastIndexer ia(a.shape, *shape), ib(b.shape, *shape);
  bool isF = isFloatDType(dt);
  for (int64_t k = 0, n = out.numElements(); k < n; ++k) {
    int64_t ka = ia.map(k), kb = ib.map(k);
    if (isF) {
      double x = a.getF(ka), y = b.getF(kb), r = 0;
      if (op == "Add")
        r = x + y;
      else if (op == "Sub")
        r = x - y;
      else if (op == "Mul")
        r = x * y;
      else if (op == "Div")
        r = x / y;
      else if (op == "Min")
        r = std::min(x, y);
      else if (op == "Max")
        r = std::max(x, y);
      else if (op == "Mod")
        r = std::fmod(x, y);
      else if (op == "Pow")
        r = std::pow(x, y);
      else if (op == "Equal") {
        out.i[k] = x == y;
        continue;
      } else if (op == "Less") {
        out.i[k] = x < y;
        continue;
      } else if (op == "Greater") {
        out.i[k] = x > y;
        continue;
      } else {
        err = "unsupported on floats";
        return false;
      }
      out.f[k] = r;
    } else {
      int64_t x = a.getI(ka), y = b.getI(kb), r = 0;
      bool ovf = false;
      if (op == "Add")
        ovf = llvm::AddOverflow(x, y, r);
      else if (op == "Sub")
        ovf = llvm::SubOverflow(x, y, r);
      else if (op == "Mul")
        ovf = llvm::MulOverflow(x, y, r);
      else if (op == "Div" || op == "Mod") {
        if (y == 0 || (x == INT64_MIN && y == -1)) {
          err = "integer division by zero";
          return false;
        }
        if (op == "Div") {
          r = x / y;
        } else { // ONNX Mod with fmod=0 has the sign of the divisor
          r = x % y;
          if (r != 0 && ((r < 0) != (y < 0)))
            r += y;
        }
      } else if (op == "Min")
        r = std::min(x, y);
      else if (op == "Max")
        r = std::max(x, y);
      else if (op == "Equal")
        r = x == y;
      else if (op == "Less")
        r = x < y;
      else if (op == "Greater")
        r = x > y;
      else if (op == "And")
        r = x && y;
      else if (op == "Or")
        r = x || y;
      else if (op == "Pow") {
        double p = std::pow((double)x, b.getF(kb));
        if (!(std::fabs(p) < 9.2e18)) {
          err = "integer overflow";
          return false;
        }
        r = (int64_t)p;
      }
      if (ovf) {
        err = "integer overflow";
        return false;
      }
      out.i[k] = r;
    }
  }
  return true;
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

static bool foldOpImpl(StringRef op, ArrayRef<const ConstTensor *> in,
                       const FoldAttrs &attrs, unsigned numOutputs,
                       std::vector<ConstTensor> &outs, const FoldBudget *budget,
                       std::string &err) {
  auto input = [&](unsigned k) -> const ConstTensor * {
    return k < in.size() ? in[k] : nullptr;
  };
  auto need = [&](unsigned k) -> const ConstTensor * {
    const ConstTensor *t = input(k);
    if (!t)
      err = "input " + std::to_string(k) + " is missing";
    return t;
  };
  outs.clear();
  ConstTensor out;
  // Axes from the second input (opset >= 13) or the `axes` attribute.
  auto axesOf = [&](unsigned k) -> std::optional<std::vector<int64_t>> {
    if (const ConstTensor *t = input(k))
      return t->toInts();
    return attrs.getInts("axes");
  };

  if (op == "Identity") {
    const ConstTensor *a = need(0);
    if (!a)
      return false;
    outs.push_back(*a);
    return true;
  }
  if (op == "Constant") {
    if (const onnx::TensorProto *t = attrs.getTensor("value")) {
      if (!decodeTensor(*t, out, err))
        return false;
    } else if (auto v = attrs.getInt("value_int")) {
      out = ConstTensor::scalarI(*v);
    } else if (auto vs = attrs.getInts("value_ints")) {
      out = ConstTensor::make(DT_INT64, {(int64_t)vs->size()});
      out.i = *vs;
    } else {
      err = "only tensor and integer Constant values are supported";
      return false;
    }
    outs.push_back(std::move(out));
    return true;
  }
  if (op == "Gather") {
    const ConstTensor *d = need(0), *idx = need(1);
    if (!d || !idx)
      return false;
    int64_t rank = d->shape.size();
    int64_t axis = normAxis(attrs.getInt("axis").value_or(0), rank);
    if (axis < 0 || axis >= rank) {
      err = "axis out of range";
      return false;
    }
    SmallVector<int64_t, 4> shape(d->shape.begin(), d->shape.begin() + axis);
    shape.append(idx->shape.begin(), idx->shape.end());
    shape.append(d->shape.begin() + axis + 1, d->shape.end());
    if (tooBig(shape, budget, err))
      return false;
    out = ConstTensor::make(d->dtype, shape);
    int64_t outer = 1, inner = 1, dim = d->shape[axis];
    for (int64_t k = 0; k < axis; ++k)
      outer *= d->shape[k];
    for (int64_t k = axis + 1; k < rank; ++k)
      inner *= d->shape[k];
    int64_t ni = idx->numElements(), o = 0;
    for (int64_t a = 0; a < outer; ++a)
      for (int64_t j = 0; j < ni; ++j) {
        int64_t x = idx->getI(j);
        if (x < 0)
          x += dim;
        if (x < 0 || x >= dim) {
          err = "index " + std::to_string(idx->getI(j)) + " is out of range";
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
    outs.push_back(std::move(out));
    return true;
  }
  if (op == "Concat") {
    if (in.empty() || !in[0]) {
      err = "no inputs";
      return false;
    }
    int64_t rank = in[0]->shape.size();
    int64_t axis = normAxis(attrs.getInt("axis").value_or(0), rank);
    if (axis < 0 || axis >= rank) {
      err = "axis out of range";
      return false;
    }
    SmallVector<int64_t, 4> shape(in[0]->shape);
    shape[axis] = 0;
    int32_t dt = in[0]->dtype;
    for (const ConstTensor *t : in) {
      if (!t || (int64_t)t->shape.size() != rank) {
        err = "inputs have different ranks";
        return false;
      }
      for (int64_t k = 0; k < rank; ++k)
        if (k != axis && t->shape[k] != in[0]->shape[k]) {
          err = "input shapes differ outside the axis";
          return false;
        }
      shape[axis] += t->shape[axis];
      dt = promoteDType(dt, t->dtype);
    }
    if (tooBig(shape, budget, err))
      return false;
    out = ConstTensor::make(dt, shape);
    int64_t outer = 1;
    for (int64_t k = 0; k < axis; ++k)
      outer *= shape[k];
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
    outs.push_back(std::move(out));
    return true;
  }
  if (op == "Unsqueeze" || op == "Squeeze") {
    const ConstTensor *d = need(0);
    if (!d)
      return false;
    auto axes = axesOf(1);
    SmallVector<int64_t, 4> shape;
    if (op == "Unsqueeze") {
      if (!axes) {
        err = "missing axes";
        return false;
      }
      int64_t rank = d->shape.size() + axes->size();
      std::vector<bool> ins(rank, false);
      for (int64_t a : *axes) {
        a = normAxis(a, rank);
        if (a < 0 || a >= rank || ins[a]) {
          err = "bad axes";
          return false;
        }
        ins[a] = true;
      }
      size_t src = 0;
      for (int64_t k = 0; k < rank; ++k)
        shape.push_back(ins[k] ? 1 : d->shape[src++]);
    } else {
      int64_t rank = d->shape.size();
      std::vector<bool> drop(rank, false);
      if (axes) {
        for (int64_t a : *axes) {
          a = normAxis(a, rank);
          if (a < 0 || a >= rank || d->shape[a] != 1) {
            err = "bad axes";
            return false;
          }
          drop[a] = true;
        }
      } else {
        for (int64_t k = 0; k < rank; ++k)
          drop[k] = d->shape[k] == 1;
      }
      for (int64_t k = 0; k < rank; ++k)
        if (!drop[k])
          shape.push_back(d->shape[k]);
    }
    out = *d;
    out.shape = shape;
    outs.push_back(std::move(out));
    return true;
  }
  if (op == "Reshape" || op == "Flatten") {
    const ConstTensor *d = need(0);
    if (!d)
      return false;
    SmallVector<int64_t, 4> shape;
    if (op == "Flatten") {
      int64_t rank = d->shape.size();
      int64_t axis = normAxis(attrs.getInt("axis").value_or(1), rank);
      int64_t a = 1, b = 1;
      for (int64_t k = 0; k < rank; ++k)
        (k < axis ? a : b) *= d->shape[k];
      shape = {a, b};
    } else {
      const ConstTensor *s = need(1);
      if (!s)
        return false;
      std::vector<int64_t> spec = s->toInts();
      if (!resolveReshape(d->shape, spec, attrs.getInt("allowzero").value_or(0),
                          shape, err))
        return false;
    }
    out = *d;
    out.shape = shape;
    outs.push_back(std::move(out));
    return true;
  }
  if (op == "Slice") {
    const ConstTensor *d = need(0);
    if (!d)
      return false;
    int64_t rank = d->shape.size();
    SliceSpec spec;
    if (!readSliceSpec(input(1), input(2), input(3), input(4),
                       input(1) != nullptr, attrs, spec, err))
      return false;
    auto &[starts, ends, axes, steps] = spec;
    SmallVector<int64_t, 4> st(rank, 0), sp(rank, 1), shape(d->shape);
    for (size_t k = 0; k < starts.size(); ++k) {
      int64_t a = normAxis(axes[k], rank);
      if (a < 0 || a >= rank || steps[k] == 0) {
        err = "bad axes or steps";
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
    outs.push_back(std::move(out));
    return true;
  }
  if (op == "Cast") {
    const ConstTensor *d = need(0);
    if (!d)
      return false;
    auto to = attrs.getInt("to");
    if (!to) {
      err = "missing 'to'";
      return false;
    }
    if (!castTo(*d, *to, out, err))
      return false;
    outs.push_back(std::move(out));
    return true;
  }
  if (op == "Transpose") {
    const ConstTensor *d = need(0);
    if (!d)
      return false;
    int64_t rank = d->shape.size();
    std::vector<int64_t> perm =
        attrs.getInts("perm").value_or(std::vector<int64_t>{});
    if (perm.empty())
      for (int64_t k = rank - 1; k >= 0; --k)
        perm.push_back(k);
    if ((int64_t)perm.size() != rank) {
      err = "perm does not match the rank";
      return false;
    }
    SmallVector<int64_t, 4> shape, srcStride(rank, 1);
    for (int64_t k = rank - 2; k >= 0; --k)
      srcStride[k] = srcStride[k + 1] * d->shape[k + 1];
    for (int64_t p : perm) {
      if (p < 0 || p >= rank) {
        err = "bad perm";
        return false;
      }
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
    outs.push_back(std::move(out));
    return true;
  }
  if (op == "ScatterND") {
    // data[indices[i]] = updates[i]; indices [..., k] address the first k
    // dims of data, each update is the remaining slice.
    const ConstTensor *d = need(0), *ix = need(1), *u = need(2);
    if (!d || !ix || !u)
      return false;
    if (ix->shape.empty()) {
      err = "indices must have rank >= 1";
      return false;
    }
    int64_t k = ix->shape.back(), r = d->shape.size();
    if (k > r) {
      err = "indices address more dims than data has";
      return false;
    }
    int64_t slice = 1;
    for (int64_t j = k; j < r; ++j)
      slice *= d->shape[j];
    int64_t n = k ? ix->numElements() / k : 0;
    if (u->numElements() != n * slice) {
      err = "updates do not match indices";
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
          err = "index out of range";
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
    outs.push_back(std::move(out));
    return true;
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" ||
      op == "Equal" || op == "Less" || op == "Greater" || op == "And" ||
      op == "Or" || op == "Min" || op == "Max" || op == "Mod" || op == "Pow") {
    const ConstTensor *a = need(0), *b = need(1);
    if (!a || !b)
      return false;
    if (!foldBinary(op, *a, *b, out, budget, err))
      return false;
    outs.push_back(std::move(out));
    return true;
  }
  if (op == "Not" || op == "Neg" || op == "Abs" || op == "Sqrt" ||
      op == "Floor" || op == "Ceil") {
    const ConstTensor *a = need(0);
    if (!a)
      return false;
    out = *a;
    for (int64_t k = 0, n = out.numElements(); k < n; ++k) {
      if (out.isFloat()) {
        double &v = out.f[k];
        if (op == "Neg")
          v = -v;
        else if (op == "Abs")
          v = std::fabs(v);
        else if (op == "Sqrt")
          v = std::sqrt(v);
        else if (op == "Floor")
          v = std::floor(v);
        else if (op == "Ceil")
          v = std::ceil(v);
        else {
          err = "Not on floats";
          return false;
        }
      } else {
        int64_t &v = out.i[k];
        if (op == "Not")
          v = !v;
        else if (op == "Neg" || op == "Abs") {
          if (v == INT64_MIN) {
            err = "integer overflow";
            return false;
          }
          v = op == "Neg" ? -v : std::abs(v);
        } else if (op == "Sqrt") {
          err = "Sqrt on integers";
          return false;
        }
      }
    }
    outs.push_back(std::move(out));
    return true;
  }
  if (op == "Where") {
    const ConstTensor *c = need(0), *a = need(1), *b = need(2);
    if (!c || !a || !b)
      return false;
    auto s1 = broadcastShapes(c->shape, a->shape);
    auto s = s1 ? broadcastShapes(*s1, b->shape) : std::nullopt;
    if (!s) {
      err = "operand shapes do not broadcast";
      return false;
    }
    if (tooBig(*s, budget, err))
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
    outs.push_back(std::move(out));
    return true;
  }
  if (op == "Expand") {
    const ConstTensor *d = need(0), *s = need(1);
    if (!d || !s)
      return false;
    std::vector<int64_t> spec = s->toInts();
    auto shape = broadcastShapes(d->shape, spec);
    if (!shape) {
      err = "shape does not broadcast";
      return false;
    }
    if (tooBig(*shape, budget, err))
      return false;
    outs.push_back(broadcastTo(*d, *shape));
    return true;
  }
  if (op == "Range") {
    const ConstTensor *s = need(0), *l = need(1), *dl = need(2);
    if (!s || !l || !dl)
      return false;
    if (s->numElements() != 1 || l->numElements() != 1 ||
        dl->numElements() != 1) {
      err = "inputs must be scalars";
      return false;
    }
    double start = s->getF(0), limit = l->getF(0), delta = dl->getF(0);
    if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) ||
        !std::isfinite(delta)) {
      err = "bad start, limit or delta";
      return false;
    }
    double cnt = std::ceil((limit - start) / delta);
    int64_t n =
        cnt > 0 ? (int64_t)std::min<double>(cnt, (double)kMaxFoldElements + 1)
                : 0;
    if (tooBig({n}, budget, err))
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
        err = "the range overflows int64";
        return false;
      }
      out.i[k] = *value;
    }
    outs.push_back(std::move(out));
    return true;
  }
  if (op == "ConstantOfShape") {
    const ConstTensor *s = need(0);
    if (!s)
      return false;
    std::vector<int64_t> shapeV = s->toInts();
    SmallVector<int64_t, 4> shape(shapeV.begin(), shapeV.end());
    if (tooBig(shape, budget, err))
      return false;
    ConstTensor v = ConstTensor::make(DT_FLOAT, {1});
    if (const onnx::TensorProto *t = attrs.getTensor("value")) {
      if (!decodeTensor(*t, v, err))
        return false;
      if (v.numElements() != 1) {
        err = "value must have one element";
        return false;
      }
    }
    v.shape.clear();
    outs.push_back(broadcastTo(v, shape));
    return true;
  }
  if (op == "Trilu") {
    const ConstTensor *d = need(0);
    if (!d)
      return false;
    if (d->shape.size() < 2) {
      err = "input rank must be >= 2";
      return false;
    }
    if (input(1) && input(1)->numElements() != 1) {
      err = "k must be a scalar";
      return false;
    }
    int64_t k = input(1) ? input(1)->getI(0) : 0;
    bool upper = attrs.getInt("upper").value_or(1);
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
    outs.push_back(std::move(out));
    return true;
  }
  err = "the importer cannot fold it";
  (void)numOutputs;
  return false;
}

bool vram::onnx_import::foldOp(StringRef op, ArrayRef<const ConstTensor *> in,
                               const FoldAttrs &attrs, unsigned numOutputs,
                               std::vector<ConstTensor> &outs, std::string &err,
                               FoldBudget *budget) {
  if (!foldOpImpl(op, in, attrs, numOutputs, outs, budget, err))
    return false;
  if (!budget)
    return true;
  // Results no larger than an input (Cast, Gather, Slice, Identity, ...) are
  // not checked before they are made: count every result here.
  int64_t n = 0;
  for (const ConstTensor &t : outs)
    n += t.numElements(); // each under kMaxFoldElements: no overflow
  if (n > budget->left()) {
    err = budget->exceeded(n);
    outs.clear();
    return false;
  }
  budget->used += n;
  return true;
}
