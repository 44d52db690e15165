//===- LoweringUtils.cpp - building blocks of the nn lowerings ------------===//

#include "LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "vram/Dialect/NN/NNInterfaces.h"

#include <limits>

using namespace mlir;

namespace vram::lowering {

Value floatConstant(OpBuilder &b, Location loc, Type type, double value) {
  return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, value));
}

Value newTensor(OpBuilder &b, Location loc, RankedTensorType type) {
  // Not tensor.empty: a new buffer is part of the semantics (PyTorch
  // allocates it), so nothing may fold it away or reuse another buffer.
  return bufferization::AllocTensorOp::create(b, loc, type, ValueRange{});
}

Value stackScratch(OpBuilder &b, Location loc, RankedTensorType type) {
  auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
  Value buffer = memref::AllocaOp::create(b, loc, memrefType);
  return bufferization::ToTensorOp::create(b, loc, type, buffer,
                                           /*restrict=*/true,
                                           /*writable=*/true);
}

Value fill(OpBuilder &b, Location loc, Value init, double value) {
  Value v = floatConstant(b, loc, tensorType(init).getElementType(), value);
  return linalg::FillOp::create(b, loc, v, init).getResult(0);
}

Value fillInteger(OpBuilder &b, Location loc, Value init, int64_t value) {
  Type et = tensorType(init).getElementType();
  Value v = arith::ConstantOp::create(b, loc, et, b.getIntegerAttr(et, value));
  return linalg::FillOp::create(b, loc, v, init).getResult(0);
}

AffineMap broadcastMap(ArrayRef<int64_t> shape, ArrayRef<int64_t> iterShape,
                       MLIRContext *ctx) {
  SmallVector<AffineExpr> exprs;
  int64_t offset = iterShape.size() - shape.size();
  for (auto [i, d] : llvm::enumerate(shape)) {
    int64_t iterDim = offset + i;
    if (d == 1 && iterShape[iterDim] != 1)
      exprs.push_back(getAffineConstantExpr(0, ctx));
    else
      exprs.push_back(getAffineDimExpr(iterDim, ctx));
  }
  return AffineMap::get(iterShape.size(), 0, exprs, ctx);
}

Value elementwise(OpBuilder &b, Location loc, ValueRange inputs, Value init,
                  ElementFn body, bool readInit) {
  MLIRContext *ctx = b.getContext();
  ArrayRef<int64_t> shape = tensorType(init).getShape();
  SmallVector<AffineMap> maps;
  for (Value in : inputs)
    maps.push_back(broadcastMap(tensorType(in).getShape(), shape, ctx));
  maps.push_back(AffineMap::getMultiDimIdentityMap(shape.size(), ctx));
  SmallVector<utils::IteratorType> iterators(shape.size(),
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), inputs, init, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        ValueRange used = readInit ? args : args.drop_back();
        linalg::YieldOp::create(nb, nloc, body(nb, nloc, used));
      });
  return generic.getResult(0);
}

Value sumInto(OpBuilder &b, Location loc, Value input, Value init) {
  MLIRContext *ctx = b.getContext();
  ArrayRef<int64_t> shape = tensorType(input).getShape();
  AffineMap outMap = broadcastMap(tensorType(init).getShape(), shape, ctx);
  SmallVector<utils::IteratorType> iterators(shape.size(),
                                             utils::IteratorType::reduction);
  for (AffineExpr e : outMap.getResults())
    if (auto dim = dyn_cast<AffineDimExpr>(e))
      iterators[dim.getPosition()] = utils::IteratorType::parallel;
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), input, init,
      {AffineMap::getMultiDimIdentityMap(shape.size(), ctx), outMap}, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value sum = arith::AddFOp::create(nb, nloc, args[1], args[0]);
        linalg::YieldOp::create(nb, nloc, sum);
      });
  return generic.getResult(0);
}

Value contract(OpBuilder &b, Location loc, Value lhs, Value rhs, Value init,
               ArrayRef<AffineMap> maps) {
  unsigned numDims = maps[0].getNumDims();
  SmallVector<utils::IteratorType> iterators(numDims,
                                             utils::IteratorType::reduction);
  for (AffineExpr e : maps[2].getResults())
    iterators[cast<AffineDimExpr>(e).getPosition()] =
        utils::IteratorType::parallel;
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{lhs, rhs}, init, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value prod = arith::MulFOp::create(nb, nloc, args[0], args[1]);
        Value sum = arith::AddFOp::create(nb, nloc, args[2], prod);
        linalg::YieldOp::create(nb, nloc, sum);
      });
  return generic.getResult(0);
}

Value reshapeView(OpBuilder &b, Location loc, Value value,
                  RankedTensorType type) {
  RankedTensorType from = tensorType(value);
  if (from == type)
    return value;
  // A 0-d tensor expands to [1] and [1] collapses to 0-d, both without
  // reassociation (a 0-d weight viewed as [1], its gradient back).
  auto flatType =
      RankedTensorType::get({from.getNumElements()}, from.getElementType());
  Value flat = value;
  if (from.getRank() == 0) {
    flat = tensor::ExpandShapeOp::create(b, loc, flatType, value,
                                         ArrayRef<ReassociationIndices>{});
  } else if (from.getRank() != 1) {
    ReassociationIndices all;
    for (int64_t i = 0; i < from.getRank(); ++i)
      all.push_back(i);
    flat = tensor::CollapseShapeOp::create(b, loc, value,
                                           ArrayRef<ReassociationIndices>{all});
  }
  if (type.getRank() == 1)
    return flat;
  if (type.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, loc, type, flat,
                                           ArrayRef<ReassociationIndices>{});
  ReassociationIndices all;
  for (int64_t i = 0; i < type.getRank(); ++i)
    all.push_back(i);
  return tensor::ExpandShapeOp::create(b, loc, type, flat,
                                       ArrayRef<ReassociationIndices>{all});
}

void readOneElement(OpBuilder &b, Location loc, ValueRange values) {
  for (Value value : values)
    if (tensorType(value).getNumElements() > 0) {
      SmallVector<Value> zeros(tensorType(value).getRank(),
                               arith::ConstantIndexOp::create(b, loc, 0));
      tensor::ExtractOp::create(b, loc, value, zeros);
    }
}

void rowSoftmaxStats(OpBuilder &b, Location loc, Value x, Value &rowMax,
                     Value &rowSumExp) {
  MLIRContext *ctx = b.getContext();
  RankedTensorType xt = tensorType(x);
  auto rowType = RankedTensorType::get({xt.getDimSize(0)}, xt.getElementType());
  AffineMap id = AffineMap::getMultiDimIdentityMap(2, ctx);
  AffineMap row = AffineMap::get(2, 0, {getAffineDimExpr(0, ctx)}, ctx);
  SmallVector<utils::IteratorType> iterators = {utils::IteratorType::parallel,
                                                utils::IteratorType::reduction};
  Value maxInit = fill(b, loc, stackScratch(b, loc, rowType),
                       -std::numeric_limits<double>::infinity());
  rowMax = linalg::GenericOp::create(
               b, loc, rowType, x, maxInit, {id, row}, iterators,
               [&](OpBuilder &nb, Location nloc, ValueRange args) {
                 Value m =
                     arith::MaximumFOp::create(nb, nloc, args[0], args[1]);
                 linalg::YieldOp::create(nb, nloc, m);
               })
               .getResult(0);
  Value sumInit = fill(b, loc, stackScratch(b, loc, rowType), 0.0);
  rowSumExp = linalg::GenericOp::create(
                  b, loc, rowType, ValueRange{x, rowMax}, sumInit,
                  {id, row, row}, iterators,
                  [&](OpBuilder &nb, Location nloc, ValueRange args) {
                    Value shifted =
                        arith::SubFOp::create(nb, nloc, args[0], args[1]);
                    Value e = math::ExpOp::create(nb, nloc, shifted);
                    Value s = arith::AddFOp::create(nb, nloc, args[2], e);
                    linalg::YieldOp::create(nb, nloc, s);
                  })
                  .getResult(0);
}

Value indexConstant(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value affineIndex(OpBuilder &b, Location loc, Value a, int64_t scale,
                  Value offset) {
  Value scaled =
      scale == 1
          ? a
          : arith::MulIOp::create(b, loc, a, indexConstant(b, loc, scale))
                .getResult();
  return offset ? arith::AddIOp::create(b, loc, scaled, offset).getResult()
                : scaled;
}

Value extractOrPad(OpBuilder &b, Location loc, Value tensor,
                   ArrayRef<Value> indices, ArrayRef<unsigned> checked,
                   Value pad, Value valid) {
  RankedTensorType type = tensorType(tensor);
  SmallVector<Value> clamped(indices.begin(), indices.end());
  Value ok = valid;
  Value zero = indexConstant(b, loc, 0);
  for (unsigned d : checked) {
    Value size = indexConstant(b, loc, type.getDimSize(d));
    Value ge = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                     indices[d], zero);
    Value lt = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                     indices[d], size);
    Value in = arith::AndIOp::create(b, loc, ge, lt);
    ok = ok ? arith::AndIOp::create(b, loc, ok, in).getResult() : in;
    Value last = indexConstant(b, loc, type.getDimSize(d) - 1);
    clamped[d] = arith::MinSIOp::create(
        b, loc, arith::MaxSIOp::create(b, loc, indices[d], zero), last);
  }
  Value v = tensor::ExtractOp::create(b, loc, tensor, clamped);
  if (!ok)
    return v;
  return arith::SelectOp::create(b, loc, ok, v, pad);
}

//===----------------------------------------------------------------------===//
// Strided views
//===----------------------------------------------------------------------===//

static MemRefType memrefTypeOf(RankedTensorType type, const Layout &layout) {
  return MemRefType::get(
      type.getShape(), type.getElementType(),
      StridedLayoutAttr::get(type.getContext(), layout.offset, layout.strides));
}

static Layout layoutOf(MemRefType type) {
  Layout l;
  if (failed(type.getStridesAndOffset(l.strides, l.offset)))
    return {nn::getContiguousStrides(type.getShape()), 0};
  return l;
}

Layout getLayout(Value value) {
  auto type = tensorType(value);
  Operation *def = value.getDefiningOp();
  if (auto toTensor = dyn_cast_or_null<bufferization::ToTensorOp>(def))
    return layoutOf(cast<MemRefType>(toTensor.getBuffer().getType()));
  if (auto dps = dyn_cast_or_null<DestinationStyleOpInterface>(def))
    if (auto result = dyn_cast<OpResult>(value))
      if (OpOperand *init = dps.getTiedOpOperand(result))
        return getLayout(init->get());
  if (auto expand = dyn_cast_or_null<tensor::ExpandShapeOp>(def)) {
    auto src = tensorType(expand.getSrc());
    FailureOr<MemRefType> t = memref::ExpandShapeOp::computeExpandedType(
        memrefTypeOf(src, getLayout(expand.getSrc())), type.getShape(),
        expand.getReassociationIndices());
    if (succeeded(t))
      return layoutOf(*t);
  }
  if (auto collapse = dyn_cast_or_null<tensor::CollapseShapeOp>(def)) {
    auto src = tensorType(collapse.getSrc());
    MemRefType srcType = memrefTypeOf(src, getLayout(collapse.getSrc()));
    auto reassoc = collapse.getReassociationIndices();
    // Bufferization copies a collapse the strides cannot express.
    if (memref::CollapseShapeOp::isGuaranteedCollapsible(srcType, reassoc))
      return layoutOf(
          memref::CollapseShapeOp::computeCollapsedType(srcType, reassoc));
  }
  return {nn::getContiguousStrides(type.getShape()), 0};
}

bool isContiguous(Value value) {
  Layout l = getLayout(value);
  auto type = tensorType(value);
  if (l.offset != 0)
    return false;
  SmallVector<int64_t> contiguous = nn::getContiguousStrides(type.getShape());
  for (auto [i, size] : llvm::enumerate(type.getShape()))
    if (size != 1 && l.strides[i] != contiguous[i])
      return false;
  return true;
}

Value stridedView(OpBuilder &b, Location loc, Value value,
                  RankedTensorType type, ArrayRef<int64_t> strides,
                  int64_t offset) {
  auto srcType = tensorType(value);
  MemRefType srcMemref = memrefTypeOf(srcType, getLayout(value));
  Value buffer = bufferization::ToBufferOp::create(b, loc, srcMemref, value,
                                                   /*read_only=*/true);
  Layout l{SmallVector<int64_t>(strides), offset};
  MemRefType viewType = memrefTypeOf(type, l);
  Value view = memref::ReinterpretCastOp::create(
      b, loc, viewType, buffer, offset, type.getShape(), strides);
  return bufferization::ToTensorOp::create(b, loc, type, view,
                                           /*restrict=*/true,
                                           /*writable=*/true);
}

Value permuteView(OpBuilder &b, Location loc, Value value,
                  ArrayRef<int64_t> perm) {
  auto type = tensorType(value);
  Layout l = getLayout(value);
  SmallVector<int64_t> shape, strides;
  for (int64_t d : perm) {
    shape.push_back(type.getDimSize(d));
    strides.push_back(l.strides[d]);
  }
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return value;
  return stridedView(b, loc, value,
                     RankedTensorType::get(shape, type.getElementType()),
                     strides, l.offset);
}

Value copyToNewTensor(OpBuilder &b, Location loc, Value value) {
  return elementwise(b, loc, value, newTensor(b, loc, tensorType(value)),
                     [](OpBuilder &, Location, ValueRange a) { return a[0]; });
}

Value reshapeOrCopy(OpBuilder &b, Location loc, Value value,
                    RankedTensorType type) {
  RankedTensorType from = tensorType(value);
  if (from.getShape() == type.getShape())
    return value;
  if (isContiguous(value))
    return reshapeView(b, loc, value, type);
  Layout l = getLayout(value);
  if (std::optional<SmallVector<int64_t>> strides =
          nn::getViewStrides(from.getShape(), l.strides, type.getShape()))
    return stridedView(b, loc, value, type, *strides, l.offset);
  return reshapeView(b, loc, copyToNewTensor(b, loc, value), type);
}

Value applyViewChain(OpBuilder &b, Location loc, Value value, ArrayAttr chain) {
  for (Attribute step : chain) {
    if (auto perm = dyn_cast<DenseI64ArrayAttr>(step))
      value = permuteView(b, loc, value, perm.asArrayRef());
    else
      value = reshapeOrCopy(
          b, loc, value,
          cast<RankedTensorType>(cast<TypeAttr>(step).getValue()));
  }
  return value;
}

Value concatenate(OpBuilder &b, Location loc, RankedTensorType outType,
                  int64_t dim, ValueRange operands) {
  int64_t rank = outType.getRank();
  SmallVector<int64_t> starts, sizes;
  int64_t offset = 0;
  for (Value in : operands) {
    starts.push_back(offset);
    sizes.push_back(tensorType(in).getDimSize(dim));
    offset += sizes.back();
  }
  // One pass over the result: each element is read from the input whose
  // range along `dim` holds it (the others' reads are clamped in bounds).
  return elementwise(
      b, loc, {}, newTensor(b, loc, outType),
      [&](OpBuilder &nb, Location nloc, ValueRange) {
        SmallVector<Value> idx;
        for (int64_t d = 0; d < rank; ++d)
          idx.push_back(linalg::IndexOp::create(nb, nloc, d));
        Value v;
        for (int64_t k = operands.size() - 1; k >= 0; --k) {
          SmallVector<Value> at(idx);
          Value local = arith::SubIOp::create(
              nb, nloc, idx[dim], indexConstant(nb, nloc, starts[k]));
          at[dim] = arith::MinSIOp::create(
              nb, nloc,
              arith::MaxSIOp::create(nb, nloc, local,
                                     indexConstant(nb, nloc, 0)),
              indexConstant(nb, nloc, sizes[k] - 1));
          Value e = tensor::ExtractOp::create(nb, nloc, operands[k], at);
          if (!v) {
            v = e;
            continue;
          }
          Value inK = arith::CmpIOp::create(
              nb, nloc, arith::CmpIPredicate::slt, idx[dim],
              indexConstant(nb, nloc, starts[k] + sizes[k]));
          v = arith::SelectOp::create(nb, nloc, inK, e, v);
        }
        return v;
      });
}

} // namespace vram::lowering

AffineMap vram::lowering::dimMap(MLIRContext *ctx, unsigned numDims,
                                 ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d : dims)
    exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(numDims, 0, exprs, ctx);
}

Value vram::lowering::add(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::AddFOp::create(b, loc, x, y);
}
Value vram::lowering::sub(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::SubFOp::create(b, loc, x, y);
}
Value vram::lowering::mul(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::MulFOp::create(b, loc, x, y);
}
Value vram::lowering::div(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::DivFOp::create(b, loc, x, y);
}

Value vram::lowering::generic(OpBuilder &b, Location loc, ValueRange ins,
                              Value init, ArrayRef<AffineMap> maps,
                              ElementFn body) {
  unsigned n = maps.back().getNumDims();
  SmallVector<utils::IteratorType> iterators(n, utils::IteratorType::reduction);
  for (AffineExpr e : maps.back().getResults())
    if (auto d = dyn_cast<AffineDimExpr>(e))
      iterators[d.getPosition()] = utils::IteratorType::parallel;
  return linalg::GenericOp::create(
             b, loc, init.getType(), ins, init, maps, iterators,
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               linalg::YieldOp::create(nb, nloc, body(nb, nloc, args));
             })
      .getResult(0);
}

Value vram::lowering::clampIndex(OpBuilder &b, Location loc, Value id,
                                 int64_t size) {
  Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(), id);
  Value zero = indexConstant(b, loc, 0);
  Value last = indexConstant(b, loc, size - 1);
  return arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, i, zero),
                                last);
}

SmallVector<unsigned> vram::lowering::range(unsigned begin, unsigned end) {
  SmallVector<unsigned> out;
  for (unsigned d = begin; d < end; ++d)
    out.push_back(d);
  return out;
}
