//===- LoweringUtils.h - building blocks of the nn lowerings ----*- C++ -*-===//
//
// Small builders the per-op lowerings share: new tensors (a buffer PyTorch
// allocates), stack scratch (what a CPU kernel keeps on its stack),
// broadcasting elementwise maps, sums over broadcast dimensions and
// contractions, all as linalg on tensors.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_CONVERSION_NNTOTENSOR_LOWERINGUTILS_H
#define VRAM_CONVERSION_NNTOTENSOR_LOWERINGUTILS_H

#include "vram/Dialect/NN/NNInterfaces.h"

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace vram::lowering {

/// The external model every lowering registers (LowerToTensorOpInterface).
template <typename Model, typename OpTy>
using ExternalModel = nn::LowerToTensorOpInterface::ExternalModel<Model, OpTy>;

inline mlir::RankedTensorType tensorType(mlir::Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType());
}

/// A float constant of `type`.
mlir::Value floatConstant(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Type type, double value);

/// A new tensor: a buffer of its own once bufferized.
mlir::Value newTensor(mlir::OpBuilder &b, mlir::Location loc,
                      mlir::RankedTensorType type);

/// Scratch a kernel keeps off the allocator (on the stack): a tensor over a
/// `memref.alloca`, written in place.
mlir::Value stackScratch(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::RankedTensorType type);

/// `init` filled with `value`.
mlir::Value fill(mlir::OpBuilder &b, mlir::Location loc, mlir::Value init,
                 double value);
/// `init` filled with the integer `value`.
mlir::Value fillInteger(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value init, int64_t value);

/// The map reading an operand of `shape` at the iteration point of
/// `iterShape` under NumPy broadcasting (trailing dimensions aligned; size-1
/// dimensions read index 0).
mlir::AffineMap broadcastMap(llvm::ArrayRef<int64_t> shape,
                             llvm::ArrayRef<int64_t> iterShape,
                             mlir::MLIRContext *ctx);

/// The map of the iteration dimensions `dims` in a space of `numDims`.
mlir::AffineMap dimMap(mlir::MLIRContext *ctx, unsigned numDims,
                       llvm::ArrayRef<unsigned> dims);

/// Scalar float arithmetic for linalg payloads.
mlir::Value add(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                mlir::Value y);
mlir::Value sub(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                mlir::Value y);
mlir::Value mul(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                mlir::Value y);
mlir::Value div(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                mlir::Value y);

using ElementFn = llvm::function_ref<mlir::Value(
    mlir::OpBuilder &, mlir::Location, mlir::ValueRange)>;

/// An elementwise linalg.generic over `init`'s shape writing into `init`:
/// `body` gets one element per input (broadcast), then `init`'s own element
/// when `readInit`.
mlir::Value elementwise(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::ValueRange inputs, mlir::Value init,
                        ElementFn body, bool readInit = false);

/// A linalg.generic over `maps` (inputs', then init's) writing into `init`:
/// the dimensions init's map does not name are reductions; `body` gets one
/// element per input, then init's, and returns the value to yield.
mlir::Value generic(mlir::OpBuilder &b, mlir::Location loc,
                    mlir::ValueRange ins, mlir::Value init,
                    llvm::ArrayRef<mlir::AffineMap> maps, ElementFn body);

/// The iteration dimensions [begin, end).
llvm::SmallVector<unsigned> range(unsigned begin, unsigned end);

/// An integer id as an index into a dimension of `size`, clamped to
/// [0, size - 1] (an out-of-range id reads the nearest row).
mlir::Value clampIndex(mlir::OpBuilder &b, mlir::Location loc, mlir::Value id,
                       int64_t size);

/// Adds `input` into `init` (whose shape `input` broadcasts to), summing
/// over the broadcast dimensions.
mlir::Value sumInto(mlir::OpBuilder &b, mlir::Location loc, mlir::Value input,
                    mlir::Value init);

/// init += a * b over the iteration space of `maps` (a, b, init), the
/// dimensions absent from init's map being reductions.
mlir::Value contract(mlir::OpBuilder &b, mlir::Location loc, mlir::Value lhs,
                     mlir::Value rhs, mlir::Value init,
                     llvm::ArrayRef<mlir::AffineMap> maps);

/// Reads one element of each non-empty tensor in `values`: the executed
/// program keeps their buffers alive up to here, as the memory analysis's
/// uses do.
void readOneElement(mlir::OpBuilder &b, mlir::Location loc,
                    mlir::ValueRange values);

/// A view of `value` as `type` (same element count): collapse to 1-D, then
/// expand. Bufferizes to views, no copy.
mlir::Value reshapeView(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value value, mlir::RankedTensorType type);

/// Per-row maximum and sum of exp(x - max) of a [N, C] tensor, on the stack.
void rowSoftmaxStats(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                     mlir::Value &rowMax, mlir::Value &rowSumExp);

/// Index arithmetic inside a linalg body.
mlir::Value indexConstant(mlir::OpBuilder &b, mlir::Location loc, int64_t v);
/// `a * scale + offset` on index values.
mlir::Value affineIndex(mlir::OpBuilder &b, mlir::Location loc, mlir::Value a,
                        int64_t scale, mlir::Value offset);

/// Reads `tensor` at `indices`, where the indices at `checked` positions may
/// fall outside the tensor (padding): yields `pad` there. `valid` is anded
/// into the condition when given.
mlir::Value extractOrPad(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value tensor,
                         llvm::ArrayRef<mlir::Value> indices,
                         llvm::ArrayRef<unsigned> checked, mlir::Value pad,
                         mlir::Value valid = {});

/// Attaches the models of VisionLowerings.cpp (conv, batch norm, pooling).
void attachVisionLowerings(mlir::MLIRContext *ctx);
/// Attaches the models of ElementwiseLowerings.cpp (activations, sub, mul,
/// div, unary math, mean, concat, pad, constant, cast).
void attachElementwiseLowerings(mlir::MLIRContext *ctx);

/// Attaches the models of TransformerLowerings.cpp (matmul, layer norm,
/// attention, softmax, GELU, embedding, dropout, views, masked_fill).
void attachTransformerLowerings(mlir::MLIRContext *ctx);
/// Attaches the models of RoutingLowerings.cpp (topk, the experts' dispatch
/// and grouped_mm).
void attachRoutingLowerings(mlir::MLIRContext *ctx);

//===----------------------------------------------------------------------===//
// Strided views
//
// PyTorch's views (transpose, permute, slice, expand, reshape of a strided
// tensor) share their base's storage. On tensors they are a
// `bufferization.to_buffer` of the base (read-only: the view itself writes
// nothing), a `memref.reinterpret_cast` to the view's static strides and a
// `bufferization.to_tensor` of that: after bufferization a view of the
// base buffer, which keeps the base alive (vram-free-after-last-use follows
// the cast) and allocates nothing.
//===----------------------------------------------------------------------===//

/// The strides (in elements) and offset of the buffer a lowered tensor
/// bufferizes to: row-major with offset 0 for new tensors and arguments,
/// the view's own for a view (and for what is written into one).
struct Layout {
  llvm::SmallVector<int64_t> strides;
  int64_t offset = 0;
};
Layout getLayout(mlir::Value value);

/// Whether `value` bufferizes to a row-major buffer at offset 0.
bool isContiguous(mlir::Value value);

/// A view of `value` as `type` with `strides` and `offset`, into the same
/// buffer.
mlir::Value stridedView(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value value, mlir::RankedTensorType type,
                        llvm::ArrayRef<int64_t> strides, int64_t offset);

/// The view with dimensions reordered: result dimension j is dimension
/// perm[j] of `value` (Tensor.permute).
mlir::Value permuteView(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value value, llvm::ArrayRef<int64_t> perm);

/// `value` as `type` of the same element count (Tensor.reshape): a view when
/// the strides can express it (always for a contiguous value), else a copy
/// into a new tensor (what PyTorch's reshape does then).
mlir::Value reshapeOrCopy(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value value, mlir::RankedTensorType type);

/// A contiguous copy of `value` in a new tensor.
mlir::Value copyToNewTensor(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value value);

/// `operands` one after the other along `dim`, in a new tensor of
/// `outType` (torch.cat).
mlir::Value concatenate(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::RankedTensorType outType, int64_t dim,
                        mlir::ValueRange operands);

/// Applies a view chain (NNDialect::kGradViewsAttrName: permutations and
/// reshapes) to `value`.
mlir::Value applyViewChain(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value value, mlir::ArrayAttr chain);

} // namespace vram::lowering

#endif // VRAM_CONVERSION_NNTOTENSOR_LOWERINGUTILS_H
