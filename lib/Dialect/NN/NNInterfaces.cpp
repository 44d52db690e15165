//===- NNInterfaces.cpp - op semantics for the analyses -------------------===//

#include "vram/Dialect/NN/NNInterfaces.h"
#include "vram/Support/CheckedMath.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace vram::nn;
using llvm::ArrayRef;
using llvm::SmallVector;

/// a * b, saturated: strides of huge tensors must not wrap.
static int64_t mulSat(int64_t a, int64_t b) {
  return vram::saturatingMul(a, b);
}

SmallVector<int64_t> vram::nn::getContiguousStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t k = (int64_t)shape.size() - 2; k >= 0; --k)
    strides[k] = mulSat(strides[k + 1], std::max<int64_t>(shape[k + 1], 1));
  return strides;
}

SmallVector<int64_t> vram::nn::getDenseStridesLike(ArrayRef<int64_t> shape,
                                                   ArrayRef<int64_t> strides) {
  // A size-1 dimension's stride says nothing about the order: only the
  // others are ordered, and a size-1 one gets the stride of all of them.
  SmallVector<int64_t> order;
  for (auto [d, size] : llvm::enumerate(shape))
    if (size != 1)
      order.push_back(d);
  llvm::stable_sort(
      order, [&](int64_t a, int64_t b) { return strides[a] > strides[b]; });
  SmallVector<int64_t> dense(shape.size(), 1);
  int64_t next = 1;
  for (int64_t d : llvm::reverse(order)) {
    dense[d] = next;
    next = mulSat(next, std::max<int64_t>(shape[d], 1));
  }
  for (auto [d, size] : llvm::enumerate(shape))
    if (size == 1)
      dense[d] = next;
  return dense;
}

std::optional<SmallVector<int64_t>>
vram::nn::getViewStrides(ArrayRef<int64_t> oldShape, ArrayRef<int64_t> old,
                         ArrayRef<int64_t> newShape) {
  int64_t numel = 1;
  for (int64_t d : oldShape)
    numel = mulSat(numel, d);
  if (numel == 0 || oldShape.empty())
    return getContiguousStrides(newShape);
  // Walk the old dimensions from the innermost; each maximal run of
  // dimensions that are contiguous with each other ("chunk") must be covered
  // by a run of new dimensions with the same number of elements.
  SmallVector<int64_t> strides(newShape.size(), 1);
  int64_t viewD = (int64_t)newShape.size() - 1;
  int64_t chunk = old.back(), tensorNumel = 1, viewNumel = 1;
  for (int64_t d = (int64_t)oldShape.size() - 1; d >= 0; --d) {
    tensorNumel = mulSat(tensorNumel, oldShape[d]);
    if (d == 0 ||
        (oldShape[d - 1] != 1 && old[d - 1] != mulSat(tensorNumel, chunk))) {
      while (viewD >= 0 && (viewNumel < tensorNumel || newShape[viewD] == 1)) {
        strides[viewD] = mulSat(viewNumel, chunk);
        viewNumel = mulSat(viewNumel, newShape[viewD]);
        --viewD;
      }
      if (viewNumel != tensorNumel)
        return std::nullopt;
      if (d > 0) {
        chunk = old[d - 1];
        tensorNumel = 1;
        viewNumel = 1;
      }
    }
  }
  if (viewD != -1)
    return std::nullopt;
  return strides;
}

#include "vram/Dialect/NN/NNInterfaces.cpp.inc"

mlir::Type vram::nn::promoteFloatTypes(mlir::Type a, mlir::Type b) {
  if (a == b)
    return a;
  auto fa = llvm::dyn_cast<mlir::FloatType>(a);
  auto fb = llvm::dyn_cast<mlir::FloatType>(b);
  if (!fa || !fb)
    return fa ? a : b; // an integer operand takes the float one's dtype
  if (fa.getWidth() != fb.getWidth())
    return fa.getWidth() > fb.getWidth() ? a : b;
  return mlir::Float32Type::get(a.getContext()); // fp16 with bf16
}
