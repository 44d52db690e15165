//===- VisionLowerings.cpp - conv, batch norm and pooling on linalg -------===//
//
// LowerToTensorOpInterface models of the CNN ops (one per op, forward,
// saved tensors and backward together), with PyTorch's formulas
// (derivatives.yaml: convolution_backward, native_batch_norm_backward,
// max_pool2d_with_indices_backward, _adaptive_avg_pool2d_backward). Padded
// reads are bounds-checked in the loop body: no padded copy is allocated,
// as the CUDA kernels allocate none.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "vram/Dialect/NN/NNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <array>
#include <cmath>
#include <limits>
#include <optional>

using namespace mlir;
using namespace vram;
using namespace vram::nn;
using namespace vram::lowering;

namespace {

using utils::IteratorType;

AffineMap dims(MLIRContext *ctx, unsigned numDims, ArrayRef<unsigned> which) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d : which)
    exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(numDims, 0, exprs, ctx);
}

SmallVector<IteratorType> iterators(unsigned parallel, unsigned reduction) {
  SmallVector<IteratorType> it(parallel, IteratorType::parallel);
  it.append(reduction, IteratorType::reduction);
  return it;
}

SmallVector<Value> loopIndices(OpBuilder &b, Location loc, unsigned n) {
  SmallVector<Value> idx;
  for (unsigned i = 0; i < n; ++i)
    idx.push_back(linalg::IndexOp::create(b, loc, i));
  return idx;
}

using WindowBody =
    function_ref<Value(OpBuilder &, Location, ArrayRef<Value>, Value)>;

/// A linalg.generic over (n, c, h, w, kh, kw) reducing a [spans[0],
/// spans[1]] window into each element of the NCHW `init` (the window's
/// extent comes from a shape-only scratch operand): `body` gets the six
/// loop indices and the accumulator, and returns its new value.
Value reduceOverWindow(OpBuilder &b, Location loc, Value init,
                       ArrayRef<int64_t> spans, WindowBody body) {
  MLIRContext *ctx = b.getContext();
  RankedTensorType type = tensorType(init);
  Value window =
      stackScratch(b, loc, RankedTensorType::get(spans, type.getElementType()));
  return linalg::GenericOp::create(
             b, loc, type, window, init,
             {dims(ctx, 6, {4, 5}), dims(ctx, 6, {0, 1, 2, 3})},
             iterators(4, 2),
             [&](OpBuilder &nb, Location nloc, ValueRange a) {
               SmallVector<Value> i = loopIndices(nb, nloc, 6);
               linalg::YieldOp::create(nb, nloc, body(nb, nloc, i, a[1]));
             })
      .getResult(0);
}

/// The array attribute `name`, else `fallback` (by value: a fallback
/// written as a braced list does not outlive the call).
SmallVector<int64_t, 2> attrArray(DictionaryAttr attrs, StringRef name,
                                  ArrayRef<int64_t> fallback) {
  if (auto a = attrs.getAs<DenseI64ArrayAttr>(name))
    return SmallVector<int64_t, 2>(a.asArrayRef());
  return SmallVector<int64_t, 2>(fallback);
}

struct Window {
  int64_t stride[2], padding[2], dilation[2];
};

/// out = in * stride + k * dilation - padding, per spatial dimension.
Value windowInput(OpBuilder &b, Location loc, Value out, Value k,
                  const Window &w, unsigned d) {
  Value scaled = affineIndex(b, loc, out, w.stride[d], Value());
  Value kd = affineIndex(b, loc, k, w.dilation[d], Value());
  Value sum = arith::AddIOp::create(b, loc, scaled, kd);
  return arith::SubIOp::create(b, loc, sum,
                               indexConstant(b, loc, w.padding[d]));
}

/// The output position whose window reads input `in` at offset `k`, and
/// whether there is one: (in + padding - k * dilation) / stride, exact.
std::pair<Value, Value> windowOutput(OpBuilder &b, Location loc, Value in,
                                     Value k, const Window &w, unsigned d) {
  Value t =
      arith::AddIOp::create(b, loc, in, indexConstant(b, loc, w.padding[d]));
  t = arith::SubIOp::create(b, loc, t,
                            affineIndex(b, loc, k, w.dilation[d], Value()));
  Value s = indexConstant(b, loc, w.stride[d]);
  Value rem = arith::RemSIOp::create(b, loc, t, s);
  Value exact = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rem,
                                      indexConstant(b, loc, 0));
  return {arith::DivSIOp::create(b, loc, t, s), exact};
}

//===----------------------------------------------------------------------===//
// nn.conv2d (stride, padding, dilation, groups)
//===----------------------------------------------------------------------===//

/// A rectangle of two window dimensions (output rows and columns, or the
/// output gradient's), and whether every window tap inside it is in bounds.
struct Region {
  int64_t offset[2], size[2];
  bool interior;
};

/// [0, extent) split, per dimension, at the interior [lo, hi) (every tap
/// in bounds there): the interior and up to four border strips, none
/// empty. A dimension without padding is all interior.
SmallVector<Region> windowRegions(const int64_t extent[2], const int64_t lo[2],
                                  const int64_t hi[2]) {
  int64_t l[2], h[2];
  for (unsigned d = 0; d < 2; ++d) {
    l[d] = std::clamp<int64_t>(lo[d], 0, extent[d]);
    h[d] = std::clamp<int64_t>(hi[d], l[d], extent[d]);
  }
  SmallVector<Region> regions;
  auto add = [&](int64_t o0, int64_t s0, int64_t o1, int64_t s1, bool in) {
    if (s0 > 0 && s1 > 0)
      regions.push_back({{o0, o1}, {s0, s1}, in});
  };
  add(l[0], h[0] - l[0], l[1], h[1] - l[1], true);
  add(0, l[0], 0, extent[1], false);
  add(h[0], extent[0] - h[0], 0, extent[1], false);
  add(l[0], h[0] - l[0], 0, l[1], false);
  add(l[0], h[0] - l[0], h[1], extent[1] - h[1], false);
  return regions;
}

/// The first output position whose window (kernel k, dilation) starts in
/// bounds, and one past the last whose window ends in bounds, of an input
/// of `in` elements: the interior of windowRegions.
std::pair<int64_t, int64_t> interiorOutputs(int64_t in, int64_t k,
                                            const Window &w, unsigned d) {
  int64_t lo = llvm::divideCeil(w.padding[d], w.stride[d]);
  int64_t last = in - 1 + w.padding[d] - (k - 1) * w.dilation[d];
  int64_t hi = last < 0 ? 0 : llvm::divideFloorSigned(last, w.stride[d]) + 1;
  return {lo, hi};
}

/// (o + offset) * stride + k * dilation - padding as an affine expression
/// of the loop dimensions `o` and `k`: an in-bounds window read.
AffineExpr windowInputExpr(MLIRContext *ctx, unsigned o, unsigned k,
                           int64_t offset, const Window &w, unsigned d) {
  return (getAffineDimExpr(o, ctx) + offset) * w.stride[d] +
         getAffineDimExpr(k, ctx) * w.dilation[d] - w.padding[d];
}

/// A static slice of `v` (sizes of its type but dims 3 and 4, the region's).
SmallVector<OpFoldResult> regionOffsets(OpBuilder &b, unsigned rank,
                                        const Region &r) {
  SmallVector<OpFoldResult> o(rank, b.getIndexAttr(0));
  o[3] = b.getIndexAttr(r.offset[0]);
  o[4] = b.getIndexAttr(r.offset[1]);
  return o;
}
SmallVector<OpFoldResult> regionSizes(OpBuilder &b, Value v, const Region &r) {
  SmallVector<OpFoldResult> sizes;
  for (int64_t d : tensorType(v).getShape())
    sizes.push_back(b.getIndexAttr(d));
  sizes[3] = b.getIndexAttr(r.size[0]);
  sizes[4] = b.getIndexAttr(r.size[1]);
  return sizes;
}
Value extractRegion(OpBuilder &b, Location loc, Value v, const Region &r) {
  unsigned rank = tensorType(v).getRank();
  return tensor::ExtractSliceOp::create(
      b, loc, v, regionOffsets(b, rank, r), regionSizes(b, v, r),
      SmallVector<OpFoldResult>(rank, b.getIndexAttr(1)));
}
Value insertRegion(OpBuilder &b, Location loc, Value part, Value into,
                   const Region &r) {
  unsigned rank = tensorType(into).getRank();
  return tensor::InsertSliceOp::create(
      b, loc, part, into, regionOffsets(b, rank, r), regionSizes(b, into, r),
      SmallVector<OpFoldResult>(rank, b.getIndexAttr(1)));
}

/// `i + offset` in a payload.
Value shifted(OpBuilder &b, Location loc, Value i, int64_t offset) {
  if (offset == 0)
    return i;
  return arith::AddIOp::create(b, loc, i, indexConstant(b, loc, offset));
}

Window convWindow(DictionaryAttr attrs) {
  SmallVector<int64_t, 2> s = attrArray(attrs, "strides", {1, 1});
  SmallVector<int64_t, 2> p = attrArray(attrs, "padding", {0, 0});
  SmallVector<int64_t, 2> d = attrArray(attrs, "dilation", {1, 1});
  return {{s[0], s[1]}, {p[0], p[1]}, {d[0], d[1]}};
}

int64_t convGroups(DictionaryAttr attrs) {
  if (auto g = attrs.getAs<IntegerAttr>("groups"))
    return g.getInt();
  return 1;
}

/// `v` with dimension `dim` split into [groups, size / groups]: a view.
Value splitGroups(OpBuilder &b, Location loc, Value v, unsigned dim,
                  int64_t groups) {
  RankedTensorType t = tensorType(v);
  SmallVector<int64_t> shape;
  SmallVector<ReassociationIndices> reassoc;
  for (int64_t d = 0; d < t.getRank(); ++d) {
    int64_t first = shape.size();
    if (d == dim) {
      shape.push_back(groups);
      shape.push_back(t.getDimSize(d) / groups);
      reassoc.push_back({first, first + 1});
    } else {
      shape.push_back(t.getDimSize(d));
      reassoc.push_back({first});
    }
  }
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, t.getElementType()), v, reassoc);
}

/// The inverse of splitGroups: back to `type`, a view.
Value mergeGroups(OpBuilder &b, Location loc, Value v, unsigned dim,
                  RankedTensorType type) {
  SmallVector<ReassociationIndices> reassoc;
  for (int64_t d = 0, next = 0; d < type.getRank(); ++d) {
    if (d == dim) {
      reassoc.push_back({next, next + 1});
      next += 2;
    } else {
      reassoc.push_back({next++});
    }
  }
  return tensor::CollapseShapeOp::create(b, loc, type, v, reassoc);
}

/// The output, bias broadcast along channels (or zeros) as its initial value.
Value biasOrZeros(OpBuilder &b, Location loc, RankedTensorType outType,
                  ValueRange operands) {
  Value out = newTensor(b, loc, outType);
  if (operands.size() <= 2)
    return fill(b, loc, out, 0.0);
  MLIRContext *ctx = b.getContext();
  return linalg::GenericOp::create(
             b, loc, outType, operands[2], out,
             {dims(ctx, 4, {1}), dims(ctx, 4, {0, 1, 2, 3})}, iterators(4, 0),
             [](OpBuilder &nb, Location nloc, ValueRange a) {
               linalg::YieldOp::create(nb, nloc, a[0]);
             })
      .getResult(0);
}

/// The bias gradient of a convolution: gy summed over N and the plane.
Value channelGradient(OpBuilder &b, Location loc, Value gy,
                      RankedTensorType type) {
  MLIRContext *ctx = b.getContext();
  return linalg::GenericOp::create(
             b, loc, type, gy, fill(b, loc, newTensor(b, loc, type), 0.0),
             {dims(ctx, 4, {0, 1, 2, 3}), dims(ctx, 4, {1})},
             {IteratorType::reduction, IteratorType::parallel,
              IteratorType::reduction, IteratorType::reduction},
             [](OpBuilder &nb, Location nloc, ValueRange a) {
               linalg::YieldOp::create(
                   nb, nloc,
                   arith::AddFOp::create(nb, nloc, a[1], a[0]).getResult());
             })
      .getResult(0);
}

/// acc + lhs * rhs, yielded.
void yieldMulAdd(OpBuilder &b, Location loc, Value lhs, Value rhs, Value acc) {
  Value prod = arith::MulFOp::create(b, loc, lhs, rhs);
  linalg::YieldOp::create(b, loc,
                          arith::AddFOp::create(b, loc, acc, prod).getResult());
}

// Grouped convolution (depthwise: groups = channels) runs as G independent
// convolutions: the output, weight and gradients are viewed with their
// channel dimension split as [G, channels / G], and the input (or the
// output gradient) is read at channel g * (channels / G) + c.
struct Conv2dLowering : ExternalModel<Conv2dLowering, Conv2dOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    Location loc = op->getLoc();
    DictionaryAttr attrs = op->getAttrDictionary();
    Window w = convWindow(attrs);
    int64_t groups = convGroups(attrs);
    MLIRContext *ctx = b.getContext();
    Value x = operands[0], weight = operands[1];
    int64_t cg = tensorType(weight).getDimSize(1);
    auto outType = cast<RankedTensorType>(op->getResult(0).getType());
    Value init5 =
        splitGroups(b, loc, biasOrZeros(b, loc, outType, operands), 1, groups);
    Value weight5 = splitGroups(b, loc, weight, 0, groups);
    // (n, g, f, oh, ow, c, kh, kw):
    //   y[n, g, f, oh, ow] += x[n, g * Cg + c, ih, iw] * W[g, f, c, kh, kw]
    // per region of (oh, ow): inside, x is read through an affine map (no
    // bounds check, contiguous along ow at stride 1); on the border strips,
    // through a bounds-checked gather. Same terms in the same order.
    auto xShape = tensorType(x).getShape();
    auto wShape = tensorType(weight).getShape();
    int64_t extent[2] = {outType.getDimSize(2), outType.getDimSize(3)};
    int64_t lo[2], hi[2];
    for (unsigned d = 0; d < 2; ++d)
      std::tie(lo[d], hi[d]) =
          interiorOutputs(xShape[2 + d], wShape[2 + d], w, d);
    SmallVector<Region> regions = windowRegions(extent, lo, hi);
    auto region = [&](Value acc, const Region &r) -> Value {
      if (r.interior) {
        AffineExpr channel =
            getAffineDimExpr(1, ctx) * cg + getAffineDimExpr(5, ctx);
        AffineMap xMap =
            AffineMap::get(8, 0,
                           {getAffineDimExpr(0, ctx), channel,
                            windowInputExpr(ctx, 3, 6, r.offset[0], w, 0),
                            windowInputExpr(ctx, 4, 7, r.offset[1], w, 1)},
                           ctx);
        return linalg::GenericOp::create(
                   b, loc, acc.getType(), ValueRange{x, weight5}, acc,
                   {xMap, dims(ctx, 8, {1, 2, 5, 6, 7}),
                    dims(ctx, 8, {0, 1, 2, 3, 4})},
                   iterators(5, 3),
                   [&](OpBuilder &nb, Location nloc, ValueRange a) {
                     Value prod = arith::MulFOp::create(nb, nloc, a[0], a[1]);
                     linalg::YieldOp::create(
                         nb, nloc,
                         arith::AddFOp::create(nb, nloc, a[2], prod)
                             .getResult());
                   })
            .getResult(0);
      }
      return linalg::GenericOp::create(
                 b, loc, acc.getType(), weight5, acc,
                 {dims(ctx, 8, {1, 2, 5, 6, 7}), dims(ctx, 8, {0, 1, 2, 3, 4})},
                 iterators(5, 3),
                 [&](OpBuilder &nb, Location nloc, ValueRange a) {
                   SmallVector<Value> i = loopIndices(nb, nloc, 8);
                   Value oh = shifted(nb, nloc, i[3], r.offset[0]);
                   Value ow = shifted(nb, nloc, i[4], r.offset[1]);
                   Value ih = windowInput(nb, nloc, oh, i[6], w, 0);
                   Value iw = windowInput(nb, nloc, ow, i[7], w, 1);
                   Value c = affineIndex(nb, nloc, i[1], cg, i[5]);
                   Value zero = floatConstant(nb, nloc, a[0].getType(), 0.0);
                   Value xv = extractOrPad(nb, nloc, x, {i[0], c, ih, iw},
                                           {2, 3}, zero);
                   Value prod = arith::MulFOp::create(nb, nloc, xv, a[0]);
                   linalg::YieldOp::create(
                       nb, nloc,
                       arith::AddFOp::create(nb, nloc, a[1], prod).getResult());
                 })
          .getResult(0);
    };
    Value y5 = init5;
    if (regions.size() == 1)
      y5 = region(y5, regions.front());
    else
      for (const Region &r : regions)
        y5 = insertRegion(b, loc, region(extractRegion(b, loc, y5, r), r), y5,
                          r);
    results.push_back(mergeGroups(b, loc, y5, 1, outType));
    return success();
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    Window w = convWindow(node.forwardAttrs);
    int64_t groups = convGroups(node.forwardAttrs);
    MLIRContext *ctx = b.getContext();
    Value gy = node.grads[0];
    Value x = node.savedOperands[0], weight = node.savedOperands[1];
    int64_t cg = tensorType(weight).getDimSize(1);
    int64_t fg = tensorType(weight).getDimSize(0) / groups;
    for (int64_t operand : node.gradOperands) {
      auto type = cast<RankedTensorType>(node.forwardType.getInput(operand));
      if (operand == 2) {
        grads.push_back(channelGradient(b, loc, gy, type));
        continue;
      }
      Value init = fill(b, loc, newTensor(b, loc, type), 0.0);
      if (operand == 0) {
        // (n, g, c, ih, iw, f, kh, kw):
        //   gx[n, g, c, ih, iw] +=
        //       gy[n, g * Fg + f, oh, ow] * W[g, f, c, kh, kw]
        Value init5 = splitGroups(b, loc, init, 1, groups);
        Value weight5 = splitGroups(b, loc, weight, 0, groups);
        Value gx5 =
            linalg::GenericOp::create(
                b, loc, init5.getType(), weight5, init5,
                {dims(ctx, 8, {1, 5, 2, 6, 7}), dims(ctx, 8, {0, 1, 2, 3, 4})},
                iterators(5, 3),
                [&](OpBuilder &nb, Location nloc, ValueRange a) {
                  SmallVector<Value> i = loopIndices(nb, nloc, 8);
                  auto [oh, okh] = windowOutput(nb, nloc, i[3], i[6], w, 0);
                  auto [ow, okw] = windowOutput(nb, nloc, i[4], i[7], w, 1);
                  Value ok = arith::AndIOp::create(nb, nloc, okh, okw);
                  Value f = affineIndex(nb, nloc, i[1], fg, i[5]);
                  Value zero = floatConstant(nb, nloc, a[0].getType(), 0.0);
                  Value g = extractOrPad(nb, nloc, gy, {i[0], f, oh, ow},
                                         {2, 3}, zero, ok);
                  Value prod = arith::MulFOp::create(nb, nloc, g, a[0]);
                  linalg::YieldOp::create(
                      nb, nloc,
                      arith::AddFOp::create(nb, nloc, a[1], prod).getResult());
                })
                .getResult(0);
        grads.push_back(mergeGroups(b, loc, gx5, 1, type));
      } else {
        // (g, f, c, kh, kw, n, oh, ow):
        //   gW[g, f, c, kh, kw] +=
        //       gy[n, g, f, oh, ow] * x[n, g * Cg + c, ih, iw]
        Value init5 = splitGroups(b, loc, init, 0, groups);
        Value gy5 = splitGroups(b, loc, gy, 1, groups);
        Value gw5 =
            linalg::GenericOp::create(
                b, loc, init5.getType(), gy5, init5,
                {dims(ctx, 8, {5, 0, 1, 6, 7}), dims(ctx, 8, {0, 1, 2, 3, 4})},
                iterators(5, 3),
                [&](OpBuilder &nb, Location nloc, ValueRange a) {
                  SmallVector<Value> i = loopIndices(nb, nloc, 8);
                  Value ih = windowInput(nb, nloc, i[6], i[3], w, 0);
                  Value iw = windowInput(nb, nloc, i[7], i[4], w, 1);
                  Value c = affineIndex(nb, nloc, i[0], cg, i[2]);
                  Value zero = floatConstant(nb, nloc, a[0].getType(), 0.0);
                  Value xv = extractOrPad(nb, nloc, x, {i[5], c, ih, iw},
                                          {2, 3}, zero);
                  Value prod = arith::MulFOp::create(nb, nloc, a[0], xv);
                  linalg::YieldOp::create(
                      nb, nloc,
                      arith::AddFOp::create(nb, nloc, a[1], prod).getResult());
                })
                .getResult(0);
        grads.push_back(mergeGroups(b, loc, gw5, 0, type));
      }
    }
    return success();
  }
};

// nn.conv_transpose2d: the gradient of a convolution with respect to its
// input, run forward. Input x [N, Cin, H, W], weight [Cin, F/G, kh, kw]:
// output position o receives x at i where o = i * stride - padding +
// k * dilation, so each output gathers the inputs whose windows reach it
// (conv2d's grad-input loop); output_padding only adds rows and columns that
// no input reaches. Its backward is a convolution (grad input) and conv2d's
// grad-weight loop with the roles of x and gy swapped
// (convolution_backward, transposed).
struct ConvTranspose2dLowering
    : ExternalModel<ConvTranspose2dLowering, ConvTranspose2dOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    Location loc = op->getLoc();
    DictionaryAttr attrs = op->getAttrDictionary();
    Window w = convWindow(attrs);
    int64_t groups = convGroups(attrs);
    MLIRContext *ctx = b.getContext();
    Value x = operands[0], weight = operands[1];
    int64_t cg = tensorType(x).getDimSize(1) / groups;
    auto outType = cast<RankedTensorType>(op->getResult(0).getType());
    Value init5 =
        splitGroups(b, loc, biasOrZeros(b, loc, outType, operands), 1, groups);
    Value weight5 = splitGroups(b, loc, weight, 0, groups);
    // (n, g, f, oh, ow, c, kh, kw):
    //   y[n, g, f, oh, ow] += x[n, g * Cg + c, ih, iw] * W[g, c, f, kh, kw]
    // where ih * stride = oh + padding - kh * dilation, exactly.
    Value y5 =
        linalg::GenericOp::create(
            b, loc, init5.getType(), weight5, init5,
            {dims(ctx, 8, {1, 5, 2, 6, 7}), dims(ctx, 8, {0, 1, 2, 3, 4})},
            iterators(5, 3),
            [&](OpBuilder &nb, Location nloc, ValueRange a) {
              SmallVector<Value> i = loopIndices(nb, nloc, 8);
              auto [ih, okh] = windowOutput(nb, nloc, i[3], i[6], w, 0);
              auto [iw, okw] = windowOutput(nb, nloc, i[4], i[7], w, 1);
              Value ok = arith::AndIOp::create(nb, nloc, okh, okw);
              Value c = affineIndex(nb, nloc, i[1], cg, i[5]);
              Value zero = floatConstant(nb, nloc, a[0].getType(), 0.0);
              Value xv = extractOrPad(nb, nloc, x, {i[0], c, ih, iw}, {2, 3},
                                      zero, ok);
              yieldMulAdd(nb, nloc, xv, a[0], a[1]);
            })
            .getResult(0);
    results.push_back(mergeGroups(b, loc, y5, 1, outType));
    return success();
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    Window w = convWindow(node.forwardAttrs);
    int64_t groups = convGroups(node.forwardAttrs);
    MLIRContext *ctx = b.getContext();
    Value gy = node.grads[0];
    Value x = node.savedOperands[0], weight = node.savedOperands[1];
    int64_t fg = tensorType(weight).getDimSize(1);
    // gy at (n, g * Fg + f, ih * stride - padding + kh * dilation, ...),
    // zero outside the output.
    auto readGy = [&](OpBuilder &nb, Location nloc, Value n, Value g, Value f,
                      Value ih, Value iw, Value kh, Value kw, Type type) {
      Value oh = windowInput(nb, nloc, ih, kh, w, 0);
      Value ow = windowInput(nb, nloc, iw, kw, w, 1);
      Value channel = affineIndex(nb, nloc, g, fg, f);
      return extractOrPad(nb, nloc, gy, {n, channel, oh, ow}, {2, 3},
                          floatConstant(nb, nloc, type, 0.0));
    };
    for (int64_t operand : node.gradOperands) {
      auto type = cast<RankedTensorType>(node.forwardType.getInput(operand));
      if (operand == 2) {
        grads.push_back(channelGradient(b, loc, gy, type));
        continue;
      }
      Value init = fill(b, loc, newTensor(b, loc, type), 0.0);
      if (operand == 0) {
        // (n, g, c, ih, iw, f, kh, kw):
        //   gx[n, g, c, ih, iw] += gy[n, g * Fg + f, oh, ow] * W[g, c, f, kh,
        //   kw]
        Value init5 = splitGroups(b, loc, init, 1, groups);
        Value weight5 = splitGroups(b, loc, weight, 0, groups);
        Value gx5 =
            linalg::GenericOp::create(
                b, loc, init5.getType(), weight5, init5,
                {dims(ctx, 8, {1, 2, 5, 6, 7}), dims(ctx, 8, {0, 1, 2, 3, 4})},
                iterators(5, 3),
                [&](OpBuilder &nb, Location nloc, ValueRange a) {
                  SmallVector<Value> i = loopIndices(nb, nloc, 8);
                  Value g = readGy(nb, nloc, i[0], i[1], i[5], i[3], i[4], i[6],
                                   i[7], a[0].getType());
                  yieldMulAdd(nb, nloc, g, a[0], a[1]);
                })
                .getResult(0);
        grads.push_back(mergeGroups(b, loc, gx5, 1, type));
        continue;
      }
      // (g, c, f, kh, kw, n, ih, iw):
      //   gW[g, c, f, kh, kw] += x[n, g * Cg + c, ih, iw] * gy[n, g * Fg + f,
      //   oh, ow]
      Value init5 = splitGroups(b, loc, init, 0, groups);
      Value x5 = splitGroups(b, loc, x, 1, groups);
      Value gw5 =
          linalg::GenericOp::create(
              b, loc, init5.getType(), x5, init5,
              {dims(ctx, 8, {5, 0, 1, 6, 7}), dims(ctx, 8, {0, 1, 2, 3, 4})},
              iterators(5, 3),
              [&](OpBuilder &nb, Location nloc, ValueRange a) {
                SmallVector<Value> i = loopIndices(nb, nloc, 8);
                Value g = readGy(nb, nloc, i[5], i[0], i[2], i[6], i[7], i[3],
                                 i[4], a[0].getType());
                yieldMulAdd(nb, nloc, a[0], g, a[1]);
              })
              .getResult(0);
      grads.push_back(mergeGroups(b, loc, gw5, 0, type));
    }
    return success();
  }
};

//===----------------------------------------------------------------------===//
// nn.upsample_nearest2d
//===----------------------------------------------------------------------===//

// Output row o reads input row floor(o * in / out) (PyTorch's nearest_idx
// with the scale in / out; exact for the integer factors of
// scale_factor=2.0, where PyTorch's float scale is exact too). The backward
// sums the gradients of the rows that read input row i: o in
// [ceil(i * out / in), ceil((i + 1) * out / in)), at most ceil(out / in) of
// them, in increasing order as upsample_nearest2d_backward adds them.
struct UpsampleNearest2dLowering
    : ExternalModel<UpsampleNearest2dLowering, UpsampleNearest2dOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    Location loc = op->getLoc();
    MLIRContext *ctx = b.getContext();
    Value x = operands[0];
    auto in = tensorType(x).getShape();
    auto outType = cast<RankedTensorType>(op->getResult(0).getType());
    auto out = outType.getShape();
    AffineExpr d[4];
    for (unsigned i = 0; i < 4; ++i)
      d[i] = getAffineDimExpr(i, ctx);
    AffineMap source =
        AffineMap::get(4, 0,
                       {d[0], d[1], (d[2] * in[2]).floorDiv(out[2]),
                        (d[3] * in[3]).floorDiv(out[3])},
                       ctx);
    results.push_back(linalg::GenericOp::create(
                          b, loc, outType, x, newTensor(b, loc, outType),
                          {source, AffineMap::getMultiDimIdentityMap(4, ctx)},
                          iterators(4, 0),
                          [](OpBuilder &nb, Location nloc, ValueRange a) {
                            linalg::YieldOp::create(nb, nloc, a[0]);
                          })
                          .getResult(0));
    return success();
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    Value gy = node.grads[0];
    auto type = cast<RankedTensorType>(node.forwardType.getInput(0));
    auto in = type.getShape();
    auto out = tensorType(gy).getShape();
    int64_t span[2] = {llvm::divideCeilSigned(out[2], in[2]),
                       llvm::divideCeilSigned(out[3], in[3])};
    Value init = fill(b, loc, newTensor(b, loc, type), 0.0);
    // (n, c, ih, iw, kh, kw): gx[n, c, ih, iw] += gy[n, c, first(ih) + kh,
    // first(iw) + kw] while that row still reads ih.
    auto first = [&](OpBuilder &nb, Location nloc, Value i, unsigned dim) {
      // ceil(i * out / in) = (i * out + in - 1) floordiv in.
      Value scaled = affineIndex(nb, nloc, i, out[dim],
                                 indexConstant(nb, nloc, in[dim] - 1));
      return arith::DivSIOp::create(nb, nloc, scaled,
                                    indexConstant(nb, nloc, in[dim]))
          .getResult();
    };
    grads.push_back(reduceOverWindow(
        b, loc, init, span,
        [&](OpBuilder &nb, Location nloc, ArrayRef<Value> i, Value acc) {
          Value one = indexConstant(nb, nloc, 1);
          Value o[2], ok;
          for (unsigned d = 0; d < 2; ++d) {
            Value lo = first(nb, nloc, i[2 + d], 2 + d);
            Value hi =
                first(nb, nloc, arith::AddIOp::create(nb, nloc, i[2 + d], one),
                      2 + d);
            o[d] = arith::AddIOp::create(nb, nloc, lo, i[4 + d]);
            Value in = arith::CmpIOp::create(
                nb, nloc, arith::CmpIPredicate::slt, o[d], hi);
            ok = ok ? arith::AndIOp::create(nb, nloc, ok, in).getResult() : in;
          }
          Value zero = floatConstant(nb, nloc, acc.getType(), 0.0);
          Value g = extractOrPad(nb, nloc, gy, {i[0], i[1], o[0], o[1]}, {2, 3},
                                 zero, ok);
          return arith::AddFOp::create(nb, nloc, acc, g).getResult();
        }));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// nn.upsample_bilinear2d
//===----------------------------------------------------------------------===//

/// One spatial axis of a bilinear resize, as PyTorch's CPU kernel computes
/// it in float (area_pixel_compute_scale, area_pixel_compute_source_index,
/// guard_index_and_lambda in UpSample.h).
struct BilinearAxis {
  int64_t in, out;
  bool alignCorners;
  /// Input positions per output position.
  float scale;

  BilinearAxis(int64_t in, int64_t out, bool alignCorners,
               std::optional<double> scaleFactor)
      : in(in), out(out), alignCorners(alignCorners) {
    if (alignCorners)
      scale = out > 1 ? static_cast<float>(in - 1) / (out - 1) : 0.f;
    else if (scaleFactor && *scaleFactor > 0)
      scale = static_cast<float>(1.0 / *scaleFactor);
    else
      scale = static_cast<float>(in) / out;
  }

  /// The outputs whose two source rows can include input row i start at
  /// first(i) (a bound: each is checked) and span at most this many.
  int64_t window() const {
    if (scale == 0.f)
      return out;
    // The outputs whose source lies in [i - 1, i + 1) span under 2 / scale
    // + 1 positions; first(i) starts up to three early.
    return static_cast<int64_t>(std::ceil(2.0 / scale)) + 4;
  }
};

/// The two input rows output row `o` reads and their weights (float32).
struct BilinearTaps {
  Value i0, i1, l0, l1;
};

BilinearTaps bilinearTaps(OpBuilder &b, Location loc, Value o,
                          const BilinearAxis &axis) {
  Type f32 = b.getF32Type();
  auto f = [&](double v) { return floatConstant(b, loc, f32, v); };
  Value x = arith::SIToFPOp::create(
      b, loc, f32,
      arith::IndexCastOp::create(b, loc, b.getI64Type(), o).getResult());
  Value src;
  if (axis.alignCorners) {
    src = arith::MulFOp::create(b, loc, f(axis.scale), x);
  } else {
    src = arith::SubFOp::create(
        b, loc,
        arith::MulFOp::create(b, loc, f(axis.scale),
                              arith::AddFOp::create(b, loc, x, f(0.5))),
        f(0.5));
    src = arith::MaximumFOp::create(b, loc, src, f(0.0));
  }
  Value last = indexConstant(b, loc, axis.in - 1);
  Value i0 = arith::IndexCastOp::create(
      b, loc, b.getIndexType(),
      arith::FPToSIOp::create(b, loc, b.getI64Type(),
                              math::FloorOp::create(b, loc, src))
          .getResult());
  i0 = arith::MinSIOp::create(b, loc, i0, last);
  Value lambda = arith::SubFOp::create(
      b, loc, src,
      arith::SIToFPOp::create(
          b, loc, f32,
          arith::IndexCastOp::create(b, loc, b.getI64Type(), i0).getResult()));
  lambda = arith::MinimumFOp::create(
      b, loc, arith::MaximumFOp::create(b, loc, lambda, f(0.0)), f(1.0));
  Value step = arith::SelectOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i0, last),
      indexConstant(b, loc, 1), indexConstant(b, loc, 0));
  Value i1 = arith::AddIOp::create(b, loc, i0, step);
  return {i0, i1, arith::SubFOp::create(b, loc, f(1.0), lambda), lambda};
}

/// The op's two axes, from its attributes.
std::array<BilinearAxis, 2> bilinearAxes(DictionaryAttr attrs,
                                         ArrayRef<int64_t> in,
                                         ArrayRef<int64_t> out) {
  bool align = attrs.contains("align_corners");
  auto scales = attrs.getAs<DenseF64ArrayAttr>("scales");
  auto factor = [&](unsigned d) -> std::optional<double> {
    if (!scales)
      return std::nullopt;
    return scales.asArrayRef()[d];
  };
  return {BilinearAxis(in[2], out[2], align, factor(0)),
          BilinearAxis(in[3], out[3], align, factor(1))};
}

Value toF32(OpBuilder &b, Location loc, Value v) {
  if (v.getType().isF32())
    return v;
  return arith::ExtFOp::create(b, loc, b.getF32Type(), v);
}

Value fromF32(OpBuilder &b, Location loc, Value v, Type type) {
  if (type.isF32())
    return v;
  return arith::TruncFOp::create(b, loc, type, v);
}

// Forward: each output element reads its four taps from the input.
// Backward: each input element sums, over the outputs of a window around
// it (BilinearAxis::window), the gradients of those whose taps include it,
// weighted as the forward weighted it; out-of-range outputs read zero.
struct UpsampleBilinear2dLowering
    : ExternalModel<UpsampleBilinear2dLowering, UpsampleBilinear2dOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    Location loc = op->getLoc();
    Value x = operands[0];
    auto outType = cast<RankedTensorType>(op->getResult(0).getType());
    std::array<BilinearAxis, 2> axes = bilinearAxes(
        op->getAttrDictionary(), tensorType(x).getShape(), outType.getShape());
    Type element = outType.getElementType();
    results.push_back(
        linalg::GenericOp::create(
            b, loc, outType, ValueRange{}, newTensor(b, loc, outType),
            {AffineMap::getMultiDimIdentityMap(4, b.getContext())},
            iterators(4, 0),
            [&](OpBuilder &nb, Location nloc, ValueRange) {
              SmallVector<Value> i = loopIndices(nb, nloc, 4);
              BilinearTaps h = bilinearTaps(nb, nloc, i[2], axes[0]);
              BilinearTaps w = bilinearTaps(nb, nloc, i[3], axes[1]);
              auto at = [&](Value r, Value c) {
                return toF32(nb, nloc,
                             tensor::ExtractOp::create(
                                 nb, nloc, x, ValueRange{i[0], i[1], r, c}));
              };
              auto row = [&](Value r) {
                return arith::AddFOp::create(
                    nb, nloc,
                    arith::MulFOp::create(nb, nloc, w.l0, at(r, w.i0)),
                    arith::MulFOp::create(nb, nloc, w.l1, at(r, w.i1)));
              };
              Value v = arith::AddFOp::create(
                  nb, nloc, arith::MulFOp::create(nb, nloc, h.l0, row(h.i0)),
                  arith::MulFOp::create(nb, nloc, h.l1, row(h.i1)));
              linalg::YieldOp::create(nb, nloc, fromF32(nb, nloc, v, element));
            })
            .getResult(0));
    return success();
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    Value gy = node.grads[0];
    auto type = cast<RankedTensorType>(node.forwardType.getInput(0));
    std::array<BilinearAxis, 2> axes = bilinearAxes(
        node.forwardAttrs, type.getShape(), tensorType(gy).getShape());
    Type element = type.getElementType();
    Value init = fill(b, loc, newTensor(b, loc, type), 0.0);
    grads.push_back(reduceOverWindow(
        b, loc, init, {axes[0].window(), axes[1].window()},
        [&](OpBuilder &nb, Location nloc, ArrayRef<Value> i, Value acc) {
          Type f32 = nb.getF32Type();
          Value weight, valid;
          Value o[2];
          for (unsigned d = 0; d < 2; ++d) {
            const BilinearAxis &axis = axes[d];
            // The first output whose source reaches row i - 1, less
            // two: max(0, floor(source^-1(i - 1)) - 2).
            Value first = indexConstant(nb, nloc, 0);
            if (axis.scale != 0.f) {
              Value row = arith::SIToFPOp::create(
                  nb, nloc, f32,
                  arith::IndexCastOp::create(nb, nloc, nb.getI64Type(),
                                             i[2 + d])
                      .getResult());
              Value back = arith::DivFOp::create(
                  nb, nloc,
                  arith::SubFOp::create(
                      nb, nloc, row,
                      floatConstant(nb, nloc, f32,
                                    axis.alignCorners ? 1.0 : 0.5)),
                  floatConstant(nb, nloc, f32, axis.scale));
              Value start = arith::IndexCastOp::create(
                  nb, nloc, nb.getIndexType(),
                  arith::FPToSIOp::create(nb, nloc, nb.getI64Type(),
                                          math::FloorOp::create(nb, nloc, back))
                      .getResult());
              first = arith::MaxSIOp::create(
                  nb, nloc,
                  arith::SubIOp::create(nb, nloc, start,
                                        indexConstant(nb, nloc, 2)),
                  first);
            }
            o[d] = arith::AddIOp::create(nb, nloc, first, i[4 + d]);
            Value inRange =
                arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::slt, o[d],
                                      indexConstant(nb, nloc, axis.out));
            valid = valid ? arith::AndIOp::create(nb, nloc, valid, inRange)
                                .getResult()
                          : inRange;
            BilinearTaps t = bilinearTaps(
                nb, nloc,
                arith::MinSIOp::create(nb, nloc, o[d],
                                       indexConstant(nb, nloc, axis.out - 1)),
                axis);
            Value zero = floatConstant(nb, nloc, f32, 0.0);
            auto part = [&](Value tap, Value lambda) {
              return arith::SelectOp::create(
                  nb, nloc,
                  arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::eq, tap,
                                        i[2 + d]),
                  lambda, zero);
            };
            Value w = arith::AddFOp::create(nb, nloc, part(t.i0, t.l0),
                                            part(t.i1, t.l1));
            weight =
                weight ? arith::MulFOp::create(nb, nloc, weight, w).getResult()
                       : w;
          }
          Value zero = floatConstant(nb, nloc, element, 0.0);
          Value g = extractOrPad(nb, nloc, gy, {i[0], i[1], o[0], o[1]}, {2, 3},
                                 zero, valid);
          Value contribution =
              arith::MulFOp::create(nb, nloc, weight, toF32(nb, nloc, g));
          Value sum = arith::AddFOp::create(nb, nloc, toF32(nb, nloc, acc),
                                            contribution);
          return fromF32(nb, nloc, sum, element);
        }));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// nn.batch_norm (training: batch statistics, running stats updated)
//===----------------------------------------------------------------------===//

/// Maps of a [N, C, ...] tensor and of its per-channel vector.
std::pair<AffineMap, AffineMap> channelMaps(MLIRContext *ctx, unsigned rank) {
  return {AffineMap::getMultiDimIdentityMap(rank, ctx), dims(ctx, rank, {1})};
}

SmallVector<IteratorType> allButChannelReduced(unsigned rank) {
  SmallVector<IteratorType> it(rank, IteratorType::reduction);
  it[1] = IteratorType::parallel;
  return it;
}

/// Per-channel sum of f(x, per-channel inputs...) into `init`.
Value channelSum(OpBuilder &b, Location loc, ValueRange inputs,
                 ValueRange channelInputs, Value init, ElementFn body) {
  MLIRContext *ctx = b.getContext();
  unsigned rank = tensorType(inputs[0]).getRank();
  auto [full, channel] = channelMaps(ctx, rank);
  SmallVector<Value> ins(inputs.begin(), inputs.end());
  SmallVector<AffineMap> maps(inputs.size(), full);
  for (Value v : channelInputs) {
    ins.push_back(v);
    maps.push_back(channel);
  }
  maps.push_back(channel);
  return linalg::GenericOp::create(
             b, loc, init.getType(), ins, init, maps,
             allButChannelReduced(rank),
             [&](OpBuilder &nb, Location nloc, ValueRange a) {
               Value v = body(nb, nloc, a.drop_back());
               linalg::YieldOp::create(
                   nb, nloc,
                   arith::AddFOp::create(nb, nloc, a.back(), v).getResult());
             })
      .getResult(0);
}

/// Per-channel batch mean and biased variance of `x`, into `meanInit` and
/// `varInit`.
void batchStats(OpBuilder &b, Location loc, Value x, Value meanInit,
                Value varInit, Value &mean, Value &var) {
  RankedTensorType type = tensorType(x);
  double inv = 1.0 * type.getDimSize(1) / type.getNumElements();
  auto scale = [&](Value v) {
    return elementwise(
        b, loc, {}, v,
        [&](OpBuilder &nb, Location nloc, ValueRange a) {
          return arith::MulFOp::create(
                     nb, nloc, a[0],
                     floatConstant(nb, nloc, a[0].getType(), inv))
              .getResult();
        },
        true);
  };
  mean = scale(
      channelSum(b, loc, x, {}, fill(b, loc, meanInit, 0.0),
                 [](OpBuilder &, Location, ValueRange a) { return a[0]; }));
  var = scale(
      channelSum(b, loc, x, mean, fill(b, loc, varInit, 0.0),
                 [](OpBuilder &nb, Location nloc, ValueRange a) {
                   Value d = arith::SubFOp::create(nb, nloc, a[0], a[1]);
                   return arith::MulFOp::create(nb, nloc, d, d).getResult();
                 }));
}

Value invStd(OpBuilder &nb, Location nloc, Value var, double eps) {
  Value e = floatConstant(nb, nloc, var.getType(), eps);
  return math::RsqrtOp::create(nb, nloc,
                               arith::AddFOp::create(nb, nloc, var, e));
}

LogicalResult checkFullBatchNorm(Location loc, unsigned numOperands) {
  if (numOperands == 5)
    return success();
  return emitError(loc) << "nn.batch_norm: the lowering needs weight, bias "
                           "and running statistics";
}

struct BatchNormLowering : ExternalModel<BatchNormLowering, BatchNormOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &options, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &updates) const {
    Location loc = op->getLoc();
    auto bn = cast<BatchNormOp>(op);
    if (failed(checkFullBatchNorm(loc, operands.size())))
      return failure();
    Value x = operands[0], weight = operands[1], bias = operands[2];
    Value runningMean = operands[3], runningVar = operands[4];
    double eps = bn.getEps().convertToDouble();
    RankedTensorType type = tensorType(x);
    RankedTensorType statType = tensorType(runningMean);
    Value mean = runningMean, var = runningVar;
    if (options.training)
      batchStats(b, loc, x, stackScratch(b, loc, statType),
                 stackScratch(b, loc, statType), mean, var);
    MLIRContext *ctx = b.getContext();
    auto [full, channel] = channelMaps(ctx, type.getRank());
    results.push_back(
        linalg::GenericOp::create(
            b, loc, type, ValueRange{x, mean, var, weight, bias},
            newTensor(b, loc, type),
            {full, channel, channel, channel, channel, full},
            iterators(type.getRank(), 0),
            [&](OpBuilder &nb, Location nloc, ValueRange a) {
              Value c = arith::SubFOp::create(nb, nloc, a[0], a[1]);
              Value n = arith::MulFOp::create(nb, nloc, c,
                                              invStd(nb, nloc, a[2], eps));
              Value s = arith::MulFOp::create(nb, nloc, n, a[3]);
              linalg::YieldOp::create(
                  nb, nloc,
                  arith::AddFOp::create(nb, nloc, s, a[4]).getResult());
            })
            .getResult(0));
    if (!options.training)
      return success();
    // running = (1 - momentum) running + momentum batch (unbiased variance).
    double m = bn.getMomentum().convertToDouble();
    double count = 1.0 * type.getNumElements() / type.getDimSize(1);
    double unbias = count > 1 ? count / (count - 1) : 1.0;
    auto blend = [&](Value running, Value batch, double factor) {
      return elementwise(
          b, loc, batch, running,
          [&](OpBuilder &nb, Location nloc, ValueRange a) {
            Value keep = arith::MulFOp::create(
                nb, nloc, a[1], floatConstant(nb, nloc, a[1].getType(), 1 - m));
            Value add = arith::MulFOp::create(
                nb, nloc, a[0],
                floatConstant(nb, nloc, a[0].getType(), m * factor));
            return arith::AddFOp::create(nb, nloc, keep, add).getResult();
          },
          true);
    };
    updates.push_back({3, blend(runningMean, mean, 1.0)});
    updates.push_back({4, blend(runningVar, var, unbias)});
    return success();
  }

  static FailureOr<Value> lowerSavedTensor(OpBuilder &b, Location loc,
                                           const SavedTensorLowering &saved) {
    if (saved.kind != "save_mean" && saved.kind != "save_invstd")
      return emitError(loc) << "nn.batch_norm: no lowering of the saved "
                               "tensor '"
                            << saved.kind << "'";
    auto type = cast<RankedTensorType>(saved.resultType);
    Value x = saved.operands[0];
    if (!tensorType(x).getElementType().isF32())
      return emitError(loc) << "nn.batch_norm: the lowering supports fp32 "
                               "inputs only";
    bool wantMean = saved.kind == "save_mean";
    // The wanted statistic is a new tensor, the other one stack scratch.
    Value meanInit =
        wantMean ? newTensor(b, loc, type) : stackScratch(b, loc, type);
    Value varInit = stackScratch(b, loc, type);
    Value mean, var;
    batchStats(b, loc, x, meanInit, varInit, mean, var);
    if (wantMean)
      return mean;
    double eps = 1e-5;
    if (auto e = saved.forwardAttrs.getAs<FloatAttr>("eps"))
      eps = e.getValueAsDouble();
    return elementwise(b, loc, var, newTensor(b, loc, type),
                       [&](OpBuilder &nb, Location nloc, ValueRange a) {
                         return invStd(nb, nloc, a[0], eps);
                       });
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    if (failed(checkFullBatchNorm(loc, node.forwardType.getNumInputs())))
      return failure();
    Value gy = node.grads[0], x = node.savedOperands[0],
          weight = node.savedOperands[1];
    Value mean = node.savedExtras[0], invstd = node.savedExtras[1];
    RankedTensorType type = tensorType(x), statType = tensorType(mean);
    double invCount = 1.0 * type.getDimSize(1) / type.getNumElements();
    // sum(dy) is the bias gradient, sum(dy * xhat) the weight's: new
    // tensors when they are results, stack scratch otherwise.
    auto init = [&](unsigned operand) {
      return node.needsGrad(operand) ? newTensor(b, loc, statType)
                                     : stackScratch(b, loc, statType);
    };
    Value sumDy =
        channelSum(b, loc, gy, {}, fill(b, loc, init(2), 0.0),
                   [](OpBuilder &, Location, ValueRange a) { return a[0]; });
    Value sumDyXhat = channelSum(
        b, loc, {gy, x}, {mean, invstd}, fill(b, loc, init(1), 0.0),
        [](OpBuilder &nb, Location nloc, ValueRange a) {
          Value c = arith::SubFOp::create(nb, nloc, a[1], a[2]);
          Value xhat = arith::MulFOp::create(nb, nloc, c, a[3]);
          return arith::MulFOp::create(nb, nloc, a[0], xhat).getResult();
        });
    MLIRContext *ctx = b.getContext();
    auto [full, channel] = channelMaps(ctx, type.getRank());
    for (int64_t operand : node.gradOperands) {
      if (operand == 1) {
        grads.push_back(sumDyXhat);
        continue;
      }
      if (operand == 2) {
        grads.push_back(sumDy);
        continue;
      }
      if (operand != 0)
        return emitError(loc)
               << "nn.batch_norm: no gradient for operand " << operand;
      // dx = w invstd (dy - sum(dy)/M - xhat sum(dy xhat)/M)
      grads.push_back(
          linalg::GenericOp::create(
              b, loc, type,
              ValueRange{gy, x, mean, invstd, weight, sumDy, sumDyXhat},
              newTensor(b, loc, type),
              {full, full, channel, channel, channel, channel, channel, full},
              iterators(type.getRank(), 0),
              [&](OpBuilder &nb, Location nloc, ValueRange a) {
                Type et = a[0].getType();
                Value k = floatConstant(nb, nloc, et, invCount);
                Value c = arith::SubFOp::create(nb, nloc, a[1], a[2]);
                Value xhat = arith::MulFOp::create(nb, nloc, c, a[3]);
                Value t1 = arith::MulFOp::create(nb, nloc, a[5], k);
                Value t2 = arith::MulFOp::create(
                    nb, nloc, xhat, arith::MulFOp::create(nb, nloc, a[6], k));
                Value d = arith::SubFOp::create(
                    nb, nloc, arith::SubFOp::create(nb, nloc, a[0], t1), t2);
                Value s = arith::MulFOp::create(nb, nloc, a[4], a[3]);
                linalg::YieldOp::create(
                    nb, nloc,
                    arith::MulFOp::create(nb, nloc, d, s).getResult());
              })
              .getResult(0));
    }
    return success();
  }
};

//===----------------------------------------------------------------------===//
// nn.max_pool2d (keeps int64 indices into each input plane)
//===----------------------------------------------------------------------===//

Window poolWindow(DictionaryAttr attrs) {
  SmallVector<int64_t, 2> k = attrArray(attrs, "kernel_size", {1, 1});
  SmallVector<int64_t, 2> s = attrArray(attrs, "strides", k);
  SmallVector<int64_t, 2> p = attrArray(attrs, "padding", {0, 0});
  SmallVector<int64_t, 2> d = attrArray(attrs, "dilation", {1, 1});
  return {{s[0], s[1]}, {p[0], p[1]}, {d[0], d[1]}};
}

struct MaxPool2dLowering : ExternalModel<MaxPool2dLowering, MaxPool2dOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    Location loc = op->getLoc();
    auto pool = cast<MaxPool2dOp>(op);
    Window w = poolWindow(op->getAttrDictionary());
    ArrayRef<int64_t> k = pool.getKernelSize();
    Value x = operands[0];
    auto outType = cast<RankedTensorType>(op->getResult(0).getType());
    double lowest = -std::numeric_limits<double>::infinity();
    Value init = fill(b, loc, newTensor(b, loc, outType), lowest);
    results.push_back(reduceOverWindow(
        b, loc, init, {k[0], k[1]},
        [&](OpBuilder &nb, Location nloc, ArrayRef<Value> i, Value acc) {
          Value ih = windowInput(nb, nloc, i[2], i[4], w, 0);
          Value iw = windowInput(nb, nloc, i[3], i[5], w, 1);
          Value pad = floatConstant(nb, nloc, acc.getType(), lowest);
          Value v =
              extractOrPad(nb, nloc, x, {i[0], i[1], ih, iw}, {2, 3}, pad);
          return arith::MaximumFOp::create(nb, nloc, acc, v).getResult();
        }));
    return success();
  }

  static FailureOr<Value> lowerSavedTensor(OpBuilder &b, Location loc,
                                           const SavedTensorLowering &saved) {
    if (saved.kind != "indices")
      return emitError(loc) << "nn.max_pool2d: no lowering of the saved "
                               "tensor '"
                            << saved.kind << "'";
    Window w = poolWindow(saved.forwardAttrs);
    SmallVector<int64_t, 2> k =
        attrArray(saved.forwardAttrs, "kernel_size", {1, 1});
    MLIRContext *ctx = b.getContext();
    Value x = saved.operands[0], y = saved.results[0];
    auto type = cast<RankedTensorType>(saved.resultType);
    int64_t width = tensorType(x).getDimSize(3);
    Value minusOne = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(-1));
    Value init =
        linalg::FillOp::create(b, loc, minusOne, newTensor(b, loc, type))
            .getResult(0);
    Value window = stackScratch(
        b, loc,
        RankedTensorType::get({k[0], k[1]}, tensorType(x).getElementType()));
    // The first position of each window that holds the maximum.
    return linalg::GenericOp::create(
               b, loc, type, ValueRange{window, y}, init,
               {dims(ctx, 6, {4, 5}), dims(ctx, 6, {0, 1, 2, 3}),
                dims(ctx, 6, {0, 1, 2, 3})},
               iterators(4, 2),
               [&](OpBuilder &nb, Location nloc, ValueRange a) {
                 SmallVector<Value> i = loopIndices(nb, nloc, 6);
                 Value ih = windowInput(nb, nloc, i[2], i[4], w, 0);
                 Value iw = windowInput(nb, nloc, i[3], i[5], w, 1);
                 Value pad =
                     floatConstant(nb, nloc, a[1].getType(),
                                   -std::numeric_limits<double>::infinity());
                 Value v = extractOrPad(nb, nloc, x, {i[0], i[1], ih, iw},
                                        {2, 3}, pad);
                 Value flat = affineIndex(nb, nloc, ih, width, iw);
                 Value flat64 = arith::IndexCastOp::create(
                     nb, nloc, nb.getI64Type(), flat);
                 Value isMax = arith::CmpFOp::create(
                     nb, nloc, arith::CmpFPredicate::OEQ, v, a[1]);
                 Value unset = arith::CmpIOp::create(
                     nb, nloc, arith::CmpIPredicate::slt, a[2],
                     arith::ConstantOp::create(nb, nloc,
                                               nb.getI64IntegerAttr(0)));
                 Value take = arith::AndIOp::create(nb, nloc, isMax, unset);
                 linalg::YieldOp::create(
                     nb, nloc,
                     arith::SelectOp::create(nb, nloc, take, flat64, a[2])
                         .getResult());
               })
        .getResult(0);
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    Window w = poolWindow(node.forwardAttrs);
    SmallVector<int64_t, 2> k =
        attrArray(node.forwardAttrs, "kernel_size", {1, 1});
    MLIRContext *ctx = b.getContext();
    Value gy = node.grads[0], indices = node.savedExtras[0];
    auto type = cast<RankedTensorType>(node.forwardType.getInput(0));
    int64_t width = type.getDimSize(3);
    Value init = fill(b, loc, newTensor(b, loc, type), 0.0);
    Value window = stackScratch(
        b, loc, RankedTensorType::get({k[0], k[1]}, type.getElementType()));
    // gx[n, c, ih, iw] = sum of gy over the windows whose maximum it is.
    grads.push_back(
        linalg::GenericOp::create(
            b, loc, type, window, init,
            {dims(ctx, 6, {4, 5}), dims(ctx, 6, {0, 1, 2, 3})}, iterators(4, 2),
            [&](OpBuilder &nb, Location nloc, ValueRange a) {
              SmallVector<Value> i = loopIndices(nb, nloc, 6);
              auto [oh, okh] = windowOutput(nb, nloc, i[2], i[4], w, 0);
              auto [ow, okw] = windowOutput(nb, nloc, i[3], i[5], w, 1);
              Value ok = arith::AndIOp::create(nb, nloc, okh, okw);
              Value none =
                  arith::ConstantOp::create(nb, nloc, nb.getI64IntegerAttr(-1));
              Value idx = extractOrPad(nb, nloc, indices, {i[0], i[1], oh, ow},
                                       {2, 3}, none, ok);
              Value zero = floatConstant(nb, nloc, a[1].getType(), 0.0);
              Value g = extractOrPad(nb, nloc, gy, {i[0], i[1], oh, ow}, {2, 3},
                                     zero, ok);
              Value flat = arith::IndexCastOp::create(
                  nb, nloc, nb.getI64Type(),
                  affineIndex(nb, nloc, i[2], width, i[3]));
              Value hit = arith::CmpIOp::create(
                  nb, nloc, arith::CmpIPredicate::eq, idx, flat);
              Value add = arith::SelectOp::create(nb, nloc, hit, g, zero);
              linalg::YieldOp::create(
                  nb, nloc,
                  arith::AddFOp::create(nb, nloc, a[1], add).getResult());
            })
            .getResult(0));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// nn.avg_pool2d (padding, ceil_mode, count_include_pad)
//===----------------------------------------------------------------------===//

/// The divisor of the window of output `o` along spatial dimension `d` of
/// an input of `size` (avg_pool2d's CPU kernel): the window clipped to the
/// padded input with count_include_pad, else to the input itself.
Value avgPoolCount(OpBuilder &b, Location loc, Value o, int64_t kernel,
                   int64_t stride, int64_t pad, int64_t size, bool includePad) {
  Value start =
      arith::SubIOp::create(b, loc, affineIndex(b, loc, o, stride, Value()),
                            indexConstant(b, loc, pad));
  Value end = arith::MinSIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, start, indexConstant(b, loc, kernel)),
      indexConstant(b, loc, size + pad));
  if (!includePad) {
    start = arith::MaxSIOp::create(b, loc, start, indexConstant(b, loc, 0));
    end = arith::MinSIOp::create(b, loc, end, indexConstant(b, loc, size));
  }
  return arith::SubIOp::create(b, loc, end, start);
}

/// The divisor of output (oh, ow) as a float of `type`.
Value avgPoolDivisor(OpBuilder &b, Location loc, Value oh, Value ow,
                     DictionaryAttr attrs, RankedTensorType input, Type type) {
  SmallVector<int64_t, 2> k = attrArray(attrs, "kernel_size", {1, 1});
  Window w = poolWindow(attrs);
  bool includePad = true;
  if (auto a = attrs.getAs<BoolAttr>("count_include_pad"))
    includePad = a.getValue();
  Value ch = avgPoolCount(b, loc, oh, k[0], w.stride[0], w.padding[0],
                          input.getDimSize(2), includePad);
  Value cw = avgPoolCount(b, loc, ow, k[1], w.stride[1], w.padding[1],
                          input.getDimSize(3), includePad);
  Value n = arith::MulIOp::create(b, loc, ch, cw);
  Value n64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), n);
  return arith::SIToFPOp::create(b, loc, type, n64);
}

struct AvgPool2dLowering : ExternalModel<AvgPool2dLowering, AvgPool2dOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    Location loc = op->getLoc();
    DictionaryAttr attrs = op->getAttrDictionary();
    Window w = poolWindow(attrs);
    ArrayRef<int64_t> k = cast<AvgPool2dOp>(op).getKernelSize();
    MLIRContext *ctx = b.getContext();
    Value x = operands[0];
    auto outType = cast<RankedTensorType>(op->getResult(0).getType());
    Type et = outType.getElementType();
    Value init = fill(b, loc, newTensor(b, loc, outType), 0.0);
    Value window =
        stackScratch(b, loc, RankedTensorType::get({k[0], k[1]}, et));
    // The window sum (padding reads 0), then divided in place.
    Value sum =
        linalg::GenericOp::create(
            b, loc, outType, window, init,
            {dims(ctx, 6, {4, 5}), dims(ctx, 6, {0, 1, 2, 3})}, iterators(4, 2),
            [&](OpBuilder &nb, Location nloc, ValueRange a) {
              SmallVector<Value> i = loopIndices(nb, nloc, 6);
              Value ih = windowInput(nb, nloc, i[2], i[4], w, 0);
              Value iw = windowInput(nb, nloc, i[3], i[5], w, 1);
              Value zero = floatConstant(nb, nloc, et, 0.0);
              Value v =
                  extractOrPad(nb, nloc, x, {i[0], i[1], ih, iw}, {2, 3}, zero);
              linalg::YieldOp::create(
                  nb, nloc,
                  arith::AddFOp::create(nb, nloc, a[1], v).getResult());
            })
            .getResult(0);
    RankedTensorType in = tensorType(x);
    results.push_back(elementwise(
        b, loc, {}, sum,
        [&](OpBuilder &nb, Location nloc, ValueRange a) {
          Value oh = linalg::IndexOp::create(nb, nloc, 2);
          Value ow = linalg::IndexOp::create(nb, nloc, 3);
          Value d = avgPoolDivisor(nb, nloc, oh, ow, attrs, in, et);
          return arith::DivFOp::create(nb, nloc, a[0], d).getResult();
        },
        true));
    return success();
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    DictionaryAttr attrs = node.forwardAttrs;
    Window w = poolWindow(attrs);
    SmallVector<int64_t, 2> k = attrArray(attrs, "kernel_size", {1, 1});
    MLIRContext *ctx = b.getContext();
    Value gy = node.grads[0];
    auto type = cast<RankedTensorType>(node.forwardType.getInput(0));
    Type et = type.getElementType();
    Value init = fill(b, loc, newTensor(b, loc, type), 0.0);
    Value window =
        stackScratch(b, loc, RankedTensorType::get({k[0], k[1]}, et));
    // gx[n, c, ih, iw] = sum over the windows holding it of gy / divisor.
    grads.push_back(
        linalg::GenericOp::create(
            b, loc, type, window, init,
            {dims(ctx, 6, {4, 5}), dims(ctx, 6, {0, 1, 2, 3})}, iterators(4, 2),
            [&](OpBuilder &nb, Location nloc, ValueRange a) {
              SmallVector<Value> i = loopIndices(nb, nloc, 6);
              auto [oh, okh] = windowOutput(nb, nloc, i[2], i[4], w, 0);
              auto [ow, okw] = windowOutput(nb, nloc, i[3], i[5], w, 1);
              Value ok = arith::AndIOp::create(nb, nloc, okh, okw);
              Value zero = floatConstant(nb, nloc, et, 0.0);
              Value g = extractOrPad(nb, nloc, gy, {i[0], i[1], oh, ow}, {2, 3},
                                     zero, ok);
              // The divisor of an in-bounds window (g is 0 elsewhere).
              auto clampTo = [&](Value v, int64_t size) {
                return arith::MinSIOp::create(
                    nb, nloc,
                    arith::MaxSIOp::create(nb, nloc, v,
                                           indexConstant(nb, nloc, 0)),
                    indexConstant(nb, nloc, size - 1));
              };
              RankedTensorType out = tensorType(gy);
              Value d = avgPoolDivisor(nb, nloc, clampTo(oh, out.getDimSize(2)),
                                       clampTo(ow, out.getDimSize(3)), attrs,
                                       type, et);
              Value q = arith::DivFOp::create(nb, nloc, g, d);
              linalg::YieldOp::create(
                  nb, nloc,
                  arith::AddFOp::create(nb, nloc, a[1], q).getResult());
            })
            .getResult(0));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// nn.adaptive_avg_pool2d (output sizes dividing the input's)
//===----------------------------------------------------------------------===//

/// adaptive_avg_pool2d's windows when each output size divides the input's
/// (windows of kh x kw, u = 1) or is a multiple of it (each output reads
/// the one input element i / u: windows of 1, k = 1), per axis. Output i
/// then averages input rows [(i / uh) kh, (i / uh + 1) kh), PyTorch's
/// [floor(i H / OH), ceil((i + 1) H / OH)) in both cases.
struct PoolFactors {
  int64_t kh = 1, kw = 1, uh = 1, uw = 1;
};

LogicalResult poolFactors(Location loc, RankedTensorType in,
                          RankedTensorType out, PoolFactors &f) {
  int64_t h = in.getDimSize(2), w = in.getDimSize(3);
  int64_t oh = out.getDimSize(2), ow = out.getDimSize(3);
  auto axis = [](int64_t size, int64_t outSize, int64_t &k, int64_t &u) {
    if (size % outSize == 0) {
      k = size / outSize;
      return true;
    }
    if (outSize % size == 0) {
      u = outSize / size;
      return true;
    }
    return false;
  };
  if (!axis(h, oh, f.kh, f.uh) || !axis(w, ow, f.kw, f.uw))
    return emitError(loc) << "nn.adaptive_avg_pool2d: the lowering needs "
                             "output sizes that divide the input's or that "
                             "it divides, got "
                          << in << " -> " << out;
  return success();
}

struct AdaptiveAvgPool2dLowering
    : ExternalModel<AdaptiveAvgPool2dLowering, AdaptiveAvgPool2dOp> {
  LogicalResult
  lowerToTensor(Operation *op, OpBuilder &b, ValueRange operands,
                const LoweringOptions &, SmallVectorImpl<Value> &results,
                SmallVectorImpl<std::pair<unsigned, Value>> &) const {
    Location loc = op->getLoc();
    Value x = operands[0];
    auto outType = cast<RankedTensorType>(op->getResult(0).getType());
    PoolFactors f;
    if (failed(poolFactors(loc, tensorType(x), outType, f)))
      return failure();
    int64_t kh = f.kh, kw = f.kw;
    MLIRContext *ctx = b.getContext();
    Value window = stackScratch(
        b, loc, RankedTensorType::get({kh, kw}, outType.getElementType()));
    AffineExpr d[6];
    for (unsigned i = 0; i < 6; ++i)
      d[i] = getAffineDimExpr(i, ctx);
    AffineMap inMap =
        AffineMap::get(6, 0,
                       {d[0], d[1], d[2].floorDiv(f.uh) * kh + d[4],
                        d[3].floorDiv(f.uw) * kw + d[5]},
                       ctx);
    Value sum =
        linalg::GenericOp::create(
            b, loc, outType, ValueRange{x, window},
            fill(b, loc, newTensor(b, loc, outType), 0.0),
            {inMap, dims(ctx, 6, {4, 5}), dims(ctx, 6, {0, 1, 2, 3})},
            iterators(4, 2),
            [](OpBuilder &nb, Location nloc, ValueRange a) {
              linalg::YieldOp::create(
                  nb, nloc,
                  arith::AddFOp::create(nb, nloc, a[2], a[0]).getResult());
            })
            .getResult(0);
    double inv = 1.0 / (kh * kw);
    results.push_back(elementwise(
        b, loc, {}, sum,
        [&](OpBuilder &nb, Location nloc, ValueRange a) {
          return arith::MulFOp::create(
                     nb, nloc, a[0],
                     floatConstant(nb, nloc, a[0].getType(), inv))
              .getResult();
        },
        true));
    return success();
  }

  static LogicalResult lowerBackward(OpBuilder &b, Location loc,
                                     const BackwardLowering &node,
                                     SmallVectorImpl<Value> &grads) {
    auto inType = cast<RankedTensorType>(node.forwardType.getInput(0));
    auto outType = cast<RankedTensorType>(node.forwardType.getResult(0));
    PoolFactors f;
    if (failed(poolFactors(loc, inType, outType, f)))
      return failure();
    int64_t kh = f.kh, kw = f.kw;
    MLIRContext *ctx = b.getContext();
    if (f.uh > 1 || f.uw > 1) {
      // Input element (a, b) is in the windows of outputs
      // ((a / kh) uh + q, (b / kw) uw + r), q < uh, r < uw: their sum.
      Value window = stackScratch(
          b, loc, RankedTensorType::get({f.uh, f.uw}, inType.getElementType()));
      AffineExpr e[6];
      for (unsigned i = 0; i < 6; ++i)
        e[i] = getAffineDimExpr(i, ctx);
      AffineMap gMap =
          AffineMap::get(6, 0,
                         {e[0], e[1], e[2].floorDiv(kh) * f.uh + e[4],
                          e[3].floorDiv(kw) * f.uw + e[5]},
                         ctx);
      double inv = 1.0 / (kh * kw);
      grads.push_back(
          linalg::GenericOp::create(
              b, loc, inType, ValueRange{node.grads[0], window},
              fill(b, loc, newTensor(b, loc, inType), 0.0),
              {gMap, dims(ctx, 6, {4, 5}), dims(ctx, 6, {0, 1, 2, 3})},
              iterators(4, 2),
              [&](OpBuilder &nb, Location nloc, ValueRange a) {
                Value v = arith::MulFOp::create(
                    nb, nloc, a[0],
                    floatConstant(nb, nloc, a[0].getType(), inv));
                linalg::YieldOp::create(
                    nb, nloc,
                    arith::AddFOp::create(nb, nloc, a[2], v).getResult());
              })
              .getResult(0));
      return success();
    }
    AffineExpr d[4];
    for (unsigned i = 0; i < 4; ++i)
      d[i] = getAffineDimExpr(i, ctx);
    AffineMap gyMap = AffineMap::get(
        4, 0, {d[0], d[1], d[2].floorDiv(kh), d[3].floorDiv(kw)}, ctx);
    double inv = 1.0 / (kh * kw);
    grads.push_back(
        linalg::GenericOp::create(
            b, loc, inType, node.grads[0], newTensor(b, loc, inType),
            {gyMap, AffineMap::getMultiDimIdentityMap(4, ctx)}, iterators(4, 0),
            [&](OpBuilder &nb, Location nloc, ValueRange a) {
              linalg::YieldOp::create(
                  nb, nloc,
                  arith::MulFOp::create(
                      nb, nloc, a[0],
                      floatConstant(nb, nloc, a[0].getType(), inv))
                      .getResult());
            })
            .getResult(0));
    return success();
  }
};

} // namespace

void vram::lowering::attachVisionLowerings(MLIRContext *ctx) {
  Conv2dOp::attachInterface<Conv2dLowering>(*ctx);
  ConvTranspose2dOp::attachInterface<ConvTranspose2dLowering>(*ctx);
  UpsampleNearest2dOp::attachInterface<UpsampleNearest2dLowering>(*ctx);
  UpsampleBilinear2dOp::attachInterface<UpsampleBilinear2dLowering>(*ctx);
  BatchNormOp::attachInterface<BatchNormLowering>(*ctx);
  MaxPool2dOp::attachInterface<MaxPool2dLowering>(*ctx);
  AdaptiveAvgPool2dOp::attachInterface<AdaptiveAvgPool2dLowering>(*ctx);
  AvgPool2dOp::attachInterface<AvgPool2dLowering>(*ctx);
}
