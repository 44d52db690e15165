//===- Strides.cpp - PyTorch stride tracking for reshape copies -----------===//
//
// PyTorch's reshape is a view when the input's strides allow it and a copy
// otherwise; torch.onnx drops `.contiguous()` before `.view()`. The importer
// follows the strides PyTorch gives each value (views derive them from
// their input) and inserts nn.contiguous where PyTorch copies.
//
// Kept here as it was in the monolithic importer; main is moving it to a
// dialect pass.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

using namespace mlir;
using namespace vram::onnx_import;
namespace nn = vram::nn;
using llvm::SmallVector;

/// The strides PyTorch gives `v` relative to its storage: views (permute,
/// transpose, slice, expand, reshape) derive them from their input; any other
/// op makes a new contiguous tensor.
static SmallVector<int64_t> stridesOf(Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  auto contiguous = [](ArrayRef<int64_t> shape) {
    SmallVector<int64_t> st(shape.size(), 1);
    for (int64_t k = (int64_t)shape.size() - 2; k >= 0; --k)
      st[k] = mulSat(st[k + 1], std::max<int64_t>(shape[k + 1], 1));
    return st;
  };
  Operation *def = v.getDefiningOp();
  if (!def)
    return contiguous(t.getShape());
  if (auto p = dyn_cast<nn::PermuteOp>(def)) {
    SmallVector<int64_t> in = stridesOf(p.getInput()), st;
    for (int64_t d : p.getDims())
      st.push_back(in[d]);
    return st;
  }
  if (auto tr = dyn_cast<nn::TransposeOp>(def)) {
    SmallVector<int64_t> st = stridesOf(tr.getInput());
    int64_t r = st.size(), d0 = tr.getDim0(), d1 = tr.getDim1();
    std::swap(st[d0 < 0 ? d0 + r : d0], st[d1 < 0 ? d1 + r : d1]);
    return st;
  }
  if (auto sl = dyn_cast<nn::SliceOp>(def)) {
    SmallVector<int64_t> st = stridesOf(sl.getInput());
    int64_t d =
        sl.getDim() < 0 ? sl.getDim() + (int64_t)st.size() : sl.getDim();
    st[d] = mulSat(st[d], sl.getStep());
    return st;
  }
  if (auto ex = dyn_cast<nn::ExpandOp>(def)) {
    SmallVector<int64_t> in = stridesOf(ex.getInput());
    auto it = cast<RankedTensorType>(ex.getInput().getType());
    int64_t off = t.getRank() - it.getRank();
    SmallVector<int64_t> st(t.getRank(), 0);
    for (int64_t k = 0; k < it.getRank(); ++k)
      st[k + off] = it.getDimSize(k) == t.getDimSize(k + off) ? in[k] : 0;
    return st;
  }
  if (isa<nn::ReshapeOp, nn::FlattenOp>(def)) {
    Value in = def->getOperand(0);
    auto it = cast<RankedTensorType>(in.getType());
    // at::detail::computeStride: the reshape was emitted as a view, so it
    // succeeds.
    SmallVector<int64_t> old = stridesOf(in);
    ArrayRef<int64_t> oldShape = it.getShape(), newShape = t.getShape();
    if (it.getNumElements() == 0 || oldShape.empty())
      return contiguous(newShape);
    SmallVector<int64_t> st(newShape.size(), 1);
    int64_t viewD = (int64_t)newShape.size() - 1;
    int64_t chunk = old.back(), tensorNumel = 1, viewNumel = 1;
    for (int64_t d = (int64_t)oldShape.size() - 1; d >= 0; --d) {
      tensorNumel = mulSat(tensorNumel, oldShape[d]);
      if (d == 0 ||
          (oldShape[d - 1] != 1 && old[d - 1] != mulSat(tensorNumel, chunk))) {
        while (viewD >= 0 &&
               (viewNumel < tensorNumel || newShape[viewD] == 1)) {
          st[viewD] = mulSat(viewNumel, chunk);
          viewNumel = mulSat(viewNumel, newShape[viewD]);
          --viewD;
        }
        if (viewNumel != tensorNumel)
          return contiguous(newShape);
        if (d > 0) {
          chunk = old[d - 1];
          tensorNumel = 1;
          viewNumel = 1;
        }
      }
    }
    return st;
  }
  return contiguous(t.getShape());
}

/// Whether PyTorch can view `v` with `shape` (at::detail::computeStride).
static bool viewable(Value v, ArrayRef<int64_t> newShape) {
  auto it = cast<RankedTensorType>(v.getType());
  ArrayRef<int64_t> oldShape = it.getShape();
  if (it.getNumElements() == 0 || oldShape.empty())
    return true;
  SmallVector<int64_t> old = stridesOf(v);
  int64_t viewD = (int64_t)newShape.size() - 1;
  int64_t chunk = old.back(), tensorNumel = 1, viewNumel = 1;
  for (int64_t d = (int64_t)oldShape.size() - 1; d >= 0; --d) {
    tensorNumel = mulSat(tensorNumel, oldShape[d]);
    if (d == 0 ||
        (oldShape[d - 1] != 1 && old[d - 1] != mulSat(tensorNumel, chunk))) {
      while (viewD >= 0 && (viewNumel < tensorNumel || newShape[viewD] == 1)) {
        viewNumel = mulSat(viewNumel, newShape[viewD]);
        --viewD;
      }
      if (viewNumel != tensorNumel)
        return false;
      if (d > 0) {
        chunk = old[d - 1];
        tensorNumel = 1;
        viewNumel = 1;
      }
    }
  }
  return viewD == -1;
}

/// `v`, or a contiguous copy of it when its strides cannot be viewed as
/// `shape`: PyTorch's reshape copies then, and torchvision's
/// `.contiguous().view()` (the exporter drops the contiguous) too.
Value Importer::contiguousFor(Value v, ArrayRef<int64_t> shape, Location loc) {
  if (viewable(v, shape))
    return v;
  return nn::ContiguousOp::create(b, loc, v.getType(), v).getResult();
}

FailureOr<Value> Importer::reshapeTo(Value v, ArrayRef<int64_t> shape,
                                     Location loc) {
  auto in = cast<RankedTensorType>(v.getType());
  if (in.getShape() == shape)
    return v;
  auto out = RankedTensorType::get(shape, in.getElementType());
  if (in.getNumElements() != out.getNumElements())
    return emitError(loc) << "cannot reshape " << in << " to " << out;
  v = contiguousFor(v, shape, loc);
  return nn::ReshapeOp::create(b, loc, out, v).getResult();
}
