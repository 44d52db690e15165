//===- NNOpsDetail.h - helpers shared by the nn op families -----*- C++ -*-===//
//
// Private to lib/Dialect/NN: the shape checks, diagnostics and saturating
// arithmetic that more than one op family (NNOps<Family>.cpp) uses. A helper
// that one family needs stays a static function in that family's file.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_LIB_DIALECT_NN_NNOPSDETAIL_H
#define VRAM_LIB_DIALECT_NN_NNOPSDETAIL_H

#include "vram/Dialect/NN/NNOps.h"
#include "vram/Support/CheckedMath.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MathExtras.h"

#include <cstdint>
#include <optional>
#include <string>

namespace vram::nn::detail {
using Conv = FlopConvention;

inline mlir::RankedTensorType tensorOf(mlir::Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType());
}

// FLOP arithmetic saturates at INT64_MAX, which the FLOP analysis reports as
// an overflow: a count that does not fit in 64 bits is never a wrapped,
// plausible-looking number.
using vram::saturatingAdd;
using vram::saturatingMul;
template <typename... Args> int64_t satMul(Args... args) {
  return saturatingMul(args...);
}
inline int64_t satAdd(int64_t a, int64_t b) { return saturatingAdd(a, b); }

/// The sum of an op's workspace allocations (getWorkspaceBytes of ops that
/// list them), saturating.
inline int64_t sumAllocations(llvm::ArrayRef<int64_t> sizes) {
  int64_t bytes = 0;
  for (int64_t size : sizes)
    bytes = satAdd(bytes, size);
  return bytes;
}

/// getWorkspaceBytes of an op that lists its workspace allocations
/// (getWorkspaceAllocations): their sum.
template <typename OpT>
int64_t sumWorkspaceAllocations(OpT op, const TorchTarget &target) {
  llvm::SmallVector<int64_t> sizes;
  op.getWorkspaceAllocations(target, sizes);
  return sumAllocations(sizes);
}

/// A tensor-parallel op's group: 2 <= ranks <= ParallelAttr::kMaxWorldSize
/// (for an op that infers its result type).
inline mlir::LogicalResult
checkTensorParallelRanks(std::optional<mlir::Location> loc, int64_t ranks) {
  if (ranks < 2 || ranks > ParallelAttr::kMaxWorldSize)
    return mlir::emitOptionalError(
        loc, "needs 2 <= ranks <= ", ParallelAttr::kMaxWorldSize, ", got ",
        ranks);
  return mlir::success();
}

inline int64_t numel(mlir::Type type) {
  int64_t n = 1;
  for (int64_t d : mlir::cast<mlir::RankedTensorType>(type).getShape())
    n = satMul(n, d);
  return n;
}
inline int64_t numel(mlir::Value v) { return numel(v.getType()); }
/// Bytes of a tensor type, saturated.
inline int64_t tensorBytes(mlir::Type type) {
  return satMul(
      numel(type),
      llvm::divideCeil(
          mlir::cast<mlir::RankedTensorType>(type).getElementTypeBitWidth(),
          8));
}
inline int64_t tensorBytes(mlir::Value v) { return tensorBytes(v.getType()); }

/// Converts multiply-adds to the convention's unit for mm/conv/attention.
inline int64_t fromMacs(Conv convention, int64_t macs) {
  return convention == Conv::Macs ? macs : satMul(2, macs);
}

/// Normalizes a possibly negative dimension index; returns -1 if out of range.
inline int64_t normalizeDim(int64_t dim, int64_t rank) {
  if (dim < 0)
    dim += rank;
  return (dim < 0 || dim >= rank) ? -1 : dim;
}

/// Whether a forward op with these operand flags records a backward node.
inline bool anyRequiresGrad(llvm::ArrayRef<bool> flags) {
  return llvm::is_contained(flags, true);
}

/// Checks that `values` (strides, padding, a kernel size) has two entries,
/// each at least `minValue`.
mlir::LogicalResult checkPair(std::optional<mlir::Location> loc,
                              llvm::StringRef what,
                              llvm::ArrayRef<int64_t> values, int64_t minValue);

/// One spatial output size of a convolution or pooling window
/// (windowOutputSize), or an error: `misfit` when the window does not fit,
/// another when the sizes overflow int64.
mlir::FailureOr<int64_t> spatialOutputSize(std::optional<mlir::Location> loc,
                                           int dim, int64_t in, int64_t kernel,
                                           int64_t stride, int64_t pad,
                                           int64_t dilation, bool ceilMode,
                                           const std::string &misfit);

/// numpy/PyTorch broadcasting of two shapes.
mlir::FailureOr<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b);

/// `[d0, d1, ...]`, for diagnostics.
std::string shapeStr(llvm::ArrayRef<int64_t> shape);

/// The result type of an op with torch's `dtype=` argument: the input's
/// shape in `dtype`'s element type when given.
mlir::LogicalResult inferWithDtype(std::optional<mlir::Location> loc,
                                   mlir::Type input, mlir::TypeAttr dtype,
                                   llvm::ArrayRef<int64_t> shape,
                                   llvm::SmallVectorImpl<mlir::Type> &results);
} // namespace vram::nn::detail

#endif // VRAM_LIB_DIALECT_NN_NNOPSDETAIL_H
