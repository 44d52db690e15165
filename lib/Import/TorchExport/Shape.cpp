//===- Shape.cpp - views, copies, concatenation, symbolic sizes ----------===//
//
// ATen's views (view, reshape, unsqueeze, transpose, select, ...) become
// nn.reshape / nn.transpose / nn.permute / nn.slice, which share their
// operand's storage; the copies PyTorch makes where strides cannot express
// a view are added after the import (vram-insert-contiguous). Symbolic
// sizes (aten.sym_size.int and the Python operators on them) are evaluated
// under the bound dimensions.
//
//===----------------------------------------------------------------------===//

#include "ConverterTable.h"
#include "Importer.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace vram;
using namespace vram::torch_export;

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// `dim` in [-rank, rank) as a non-negative index.
static FailureOr<int64_t> normalizeDim(NodeBinder &op, int64_t dim,
                                       int64_t rank) {
  if (dim < -rank || dim >= rank)
    return op.error() << "dimension " << dim << " is out of range for rank "
                      << rank;
  return dim < 0 ? dim + rank : dim;
}

/// view(self, size), reshape(self, shape), _unsafe_view(self, size).
template <const char *SizeArg>
static LogicalResult convertView(NodeBinder &op) {
  FailureOr<Value> x = op.tensor("self");
  FailureOr<SmallVector<int64_t>> size = op.integers(SizeArg);
  if (failed(x) || failed(size))
    return failure();
  FailureOr<Value> y = op.reshape(*x, *size);
  return failed(y) ? failure() : op.setResult(*y);
}
static constexpr char kSize[] = "size";
static constexpr char kShape[] = "shape";

static LogicalResult convertFlatten(NodeBinder &op) {
  FailureOr<Value> x = op.tensor("self");
  FailureOr<int64_t> start = op.integer("start_dim", 0),
                     end = op.integer("end_dim", -1);
  if (failed(x) || failed(start) || failed(end))
    return failure();
  ArrayRef<int64_t> in = shapeOf(*x);
  int64_t rank = std::max<int64_t>(in.size(), 1);
  FailureOr<int64_t> s = normalizeDim(op, *start, rank),
                     e = normalizeDim(op, *end, rank);
  if (failed(s) || failed(e))
    return failure();
  SmallVector<int64_t> out(in.begin(), in.begin() + *s);
  if (in.empty())
    out.push_back(1);
  else {
    out.push_back(-1);
    out.append(in.begin() + *e + 1, in.end());
  }
  FailureOr<Value> y = op.reshape(*x, out);
  return failed(y) ? failure() : op.setResult(*y);
}

static LogicalResult convertUnflatten(NodeBinder &op) {
  FailureOr<Value> x = op.tensor("self");
  FailureOr<int64_t> dim = op.integer("dim");
  FailureOr<SmallVector<int64_t>> sizes = op.integers("sizes");
  if (failed(x) || failed(dim) || failed(sizes))
    return failure();
  ArrayRef<int64_t> in = shapeOf(*x);
  FailureOr<int64_t> d = normalizeDim(op, *dim, in.size());
  if (failed(d))
    return failure();
  SmallVector<int64_t> out(in.begin(), in.begin() + *d);
  out.append(sizes->begin(), sizes->end());
  out.append(in.begin() + *d + 1, in.end());
  FailureOr<Value> y = op.reshape(*x, out);
  return failed(y) ? failure() : op.setResult(*y);
}

static LogicalResult convertUnsqueeze(NodeBinder &op) {
  FailureOr<Value> x = op.tensor("self");
  FailureOr<int64_t> dim = op.integer("dim");
  if (failed(x) || failed(dim))
    return failure();
  SmallVector<int64_t> out(shapeOf(*x));
  FailureOr<int64_t> d = normalizeDim(op, *dim, out.size() + 1);
  if (failed(d))
    return failure();
  out.insert(out.begin() + *d, 1);
  FailureOr<Value> y = op.reshape(*x, out);
  return failed(y) ? failure() : op.setResult(*y);
}

static LogicalResult convertSqueezeDim(NodeBinder &op) {
  FailureOr<Value> x = op.tensor("self");
  FailureOr<int64_t> dim = op.integer("dim");
  if (failed(x) || failed(dim))
    return failure();
  SmallVector<int64_t> out(shapeOf(*x));
  if (out.empty())
    return op.setResult(*x);
  FailureOr<int64_t> d = normalizeDim(op, *dim, out.size());
  if (failed(d))
    return failure();
  if (out[*d] != 1)
    return op.setResult(*x);
  out.erase(out.begin() + *d);
  FailureOr<Value> y = op.reshape(*x, out);
  return failed(y) ? failure() : op.setResult(*y);
}

static LogicalResult convertTranspose(NodeBinder &op) {
  FailureOr<Value> x = op.tensor("self");
  FailureOr<int64_t> dim0 = op.integer("dim0"), dim1 = op.integer("dim1");
  if (failed(x) || failed(dim0) || failed(dim1))
    return failure();
  int64_t rank = shapeOf(*x).size();
  FailureOr<int64_t> d0 = normalizeDim(op, *dim0, rank),
                     d1 = normalizeDim(op, *dim1, rank);
  if (failed(d0) || failed(d1))
    return failure();
  if (*d0 == *d1)
    return op.setResult(*x);
  OpBuilder &b = op.getBuilder();
  FailureOr<Value> y = op.make<nn::TransposeOp>(*x, b.getI64IntegerAttr(*d0),
                                                b.getI64IntegerAttr(*d1));
  return failed(y) ? failure() : op.setResult(*y);
}

static LogicalResult convertPermute(NodeBinder &op) {
  FailureOr<Value> x = op.tensor("self");
  FailureOr<SmallVector<int64_t>> dims = op.integers("dims");
  if (failed(x) || failed(dims))
    return failure();
  int64_t rank = shapeOf(*x).size();
  if ((int64_t)dims->size() != rank)
    return op.error() << "permute needs " << rank << " dims";
  for (int64_t &d : *dims) {
    FailureOr<int64_t> n = normalizeDim(op, d, rank);
    if (failed(n))
      return failure();
    d = *n;
  }
  FailureOr<Value> y =
      op.make<nn::PermuteOp>(*x, op.getBuilder().getDenseI64ArrayAttr(*dims));
  return failed(y) ? failure() : op.setResult(*y);
}

static LogicalResult convertContiguous(NodeBinder &op) {
  FailureOr<Value> x = op.tensor("self");
  if (failed(x))
    return failure();
  // A copy into another memory format (channels_last) takes the same bytes.
  op.ignore("memory_format");
  return op.setResult(
      nn::ContiguousOp::create(op.getBuilder(), op.getLoc(), x->getType(), *x));
}

static LogicalResult convertExpand(NodeBinder &op) {
  FailureOr<Value> x = op.tensor("self");
  FailureOr<SmallVector<int64_t>> size = op.integers("size");
  FailureOr<bool> implicit = op.boolean("implicit", false);
  if (failed(x) || failed(size) || failed(implicit))
    return failure();
  ArrayRef<int64_t> in = shapeOf(*x);
  if (size->size() < in.size())
    return op.error() << "expand to fewer dimensions than the input has";
  size_t lead = size->size() - in.size();
  SmallVector<int64_t> out(*size);
  for (size_t k = 0; k < out.size(); ++k) {
    if (k >= lead && out[k] == -1)
      out[k] = in[k - lead];
    if (out[k] < 0 ||
        (k >= lead && in[k - lead] != 1 && in[k - lead] != out[k]))
      return op.error() << "cannot expand " << x->getType();
  }
  if (ArrayRef<int64_t>(out) == in)
    return op.setResult(*x);
  auto type = RankedTensorType::get(
      out, cast<RankedTensorType>(x->getType()).getElementType());
  return op.setResult(
      nn::ExpandOp::create(op.getBuilder(), op.getLoc(), type, *x));
}

static LogicalResult convertCat(NodeBinder &op) {
  FailureOr<SmallVector<Value>> inputs = op.tensors("tensors");
  FailureOr<int64_t> dim = op.integer("dim", 0);
  if (failed(inputs) || failed(dim))
    return failure();
  if (inputs->empty())
    return op.error() << "cat of no tensors";
  FailureOr<int64_t> d =
      normalizeDim(op, *dim, shapeOf(inputs->front()).size());
  if (failed(d))
    return failure();
  FailureOr<Value> y = op.make<nn::ConcatOp>(
      ValueRange(*inputs), op.getBuilder().getI64IntegerAttr(*d));
  return failed(y) ? failure() : op.setResult(*y);
}

/// x[start:end:step] along `dim` (bounds clamped as Python's).
static FailureOr<Value> sliceOf(NodeBinder &op, Value x, int64_t dim,
                                std::optional<int64_t> start,
                                std::optional<int64_t> end, int64_t step) {
  ArrayRef<int64_t> in = shapeOf(x);
  FailureOr<int64_t> d = normalizeDim(op, dim, in.size());
  if (failed(d))
    return failure();
  if (step < 1)
    return op.error() << "slice step " << step << " is not positive";
  int64_t size = in[*d];
  auto clamp = [&](std::optional<int64_t> v, int64_t fallback) {
    if (!v)
      return fallback;
    int64_t r = *v < 0 ? *v + size : *v;
    return std::clamp<int64_t>(r, 0, size);
  };
  int64_t s = clamp(start, 0), e = std::max(clamp(end, size), s);
  if (s == 0 && e == size && step == 1)
    return x;
  OpBuilder &b = op.getBuilder();
  return op.make<nn::SliceOp>(x, b.getI64IntegerAttr(*d),
                              b.getI64IntegerAttr(s), b.getI64IntegerAttr(e),
                              b.getI64IntegerAttr(step));
}

static LogicalResult convertSlice(NodeBinder &op) {
  FailureOr<Value> x = op.tensor("self");
  FailureOr<int64_t> dim = op.integer("dim", 0), step = op.integer("step", 1);
  FailureOr<std::optional<int64_t>> start = op.optionalInteger("start"),
                                    end = op.optionalInteger("end");
  if (failed(x) || failed(dim) || failed(step) || failed(start) || failed(end))
    return failure();
  FailureOr<Value> y = sliceOf(op, *x, *dim, *start, *end, *step);
  return failed(y) ? failure() : op.setResult(*y);
}

static LogicalResult convertSelect(NodeBinder &op) {
  FailureOr<Value> x = op.tensor("self");
  FailureOr<int64_t> dim = op.integer("dim"), index = op.integer("index");
  if (failed(x) || failed(dim) || failed(index))
    return failure();
  ArrayRef<int64_t> in = shapeOf(*x);
  FailureOr<int64_t> d = normalizeDim(op, *dim, in.size());
  if (failed(d))
    return failure();
  int64_t i = *index < 0 ? *index + in[*d] : *index;
  if (i < 0 || i >= in[*d])
    return op.error() << "index " << *index << " is out of range";
  FailureOr<Value> row = sliceOf(op, *x, *d, i, i + 1, 1);
  if (failed(row))
    return failure();
  SmallVector<int64_t> out(in);
  out.erase(out.begin() + *d);
  FailureOr<Value> y = op.reshape(*row, out);
  return failed(y) ? failure() : op.setResult(*y);
}

/// The tensor a split-like node cuts ("self") and the dimension ("dim", 0
/// by default), normalized.
static FailureOr<std::pair<Value, int64_t>> splitSource(NodeBinder &op) {
  FailureOr<Value> x = op.tensor("self");
  FailureOr<int64_t> dim = op.integer("dim", 0);
  if (failed(x) || failed(dim))
    return failure();
  FailureOr<int64_t> d = normalizeDim(op, *dim, shapeOf(*x).size());
  if (failed(d))
    return failure();
  return std::make_pair(*x, *d);
}

/// Tensor.split / chunk / split_with_sizes / unbind: views of consecutive
/// pieces of `sizes` (each of equal `pieceSize` but the last, when `sizes`
/// is empty), whose gradients one backward node (SplitBackward,
/// UnbindBackward) concatenates once they are all in.
static LogicalResult splitInto(NodeBinder &op, std::pair<Value, int64_t> src,
                               SmallVector<int64_t> sizes, int64_t pieceSize,
                               bool squeeze) {
  auto [x, dim] = src;
  if (sizes.empty()) {
    int64_t total = shapeOf(x)[dim];
    for (int64_t s = 0; s < std::max<int64_t>(total, 1); s += pieceSize)
      sizes.push_back(std::min(pieceSize, total - s));
  }
  auto split =
      nn::SplitOp::create(op.getBuilder(), op.getLoc(), x, dim, sizes, squeeze);
  return op.setResults(SmallVector<Value>(split.getResults()));
}

static LogicalResult convertSplit(NodeBinder &op) {
  auto src = splitSource(op);
  FailureOr<int64_t> size = op.integer("split_size");
  if (failed(src) || failed(size))
    return failure();
  if (*size < 1)
    return op.error() << "split_size must be positive";
  return splitInto(op, *src, {}, *size, /*squeeze=*/false);
}

static LogicalResult convertChunk(NodeBinder &op) {
  auto src = splitSource(op);
  FailureOr<int64_t> chunks = op.integer("chunks");
  if (failed(src) || failed(chunks))
    return failure();
  if (*chunks < 1)
    return op.error() << "chunks must be positive";
  // Tensor.chunk splits into pieces of ceil(size / chunks).
  int64_t total = shapeOf(src->first)[src->second];
  return splitInto(op, *src, {},
                   std::max<int64_t>((total + *chunks - 1) / *chunks, 1),
                   /*squeeze=*/false);
}

static LogicalResult convertSplitWithSizes(NodeBinder &op) {
  auto src = splitSource(op);
  FailureOr<SmallVector<int64_t>> sizes = op.integers("split_sizes");
  if (failed(src) || failed(sizes))
    return failure();
  int64_t total = 0, dim = src->second;
  for (int64_t s : *sizes) {
    if (s < 0)
      return op.error() << "split size " << s << " is negative";
    total += s;
  }
  if (sizes->empty() || total != shapeOf(src->first)[dim])
    return op.error() << "split sizes sum to " << total << ", not to dim "
                      << dim << "'s " << shapeOf(src->first)[dim];
  return splitInto(op, *src, *sizes, 0, /*squeeze=*/false);
}

static LogicalResult convertUnbind(NodeBinder &op) {
  auto src = splitSource(op);
  if (failed(src))
    return failure();
  if (shapeOf(src->first)[src->second] == 0)
    return op.error() << "unbind of an empty dimension";
  return splitInto(op, *src, {}, 1, /*squeeze=*/true);
}

/// Ops that return their input (alias) or check metadata.
static LogicalResult convertAlias(NodeBinder &op) {
  FailureOr<Value> x = op.tensor("self");
  return failed(x) ? failure() : op.setResult(*x);
}

static LogicalResult convertAssertMetadata(NodeBinder &op) {
  // A trace-time check of dtype and device: nothing runs.
  for (llvm::StringRef name :
       {"a", "tensor", "size", "stride", "dtype", "device", "layout"})
    op.ignore(name);
  return success();
}

static LogicalResult convertSymSize(NodeBinder &op) {
  FailureOr<Value> x = op.tensor("self");
  FailureOr<int64_t> dim = op.integer("dim");
  if (failed(x) || failed(dim))
    return failure();
  ArrayRef<int64_t> in = shapeOf(*x);
  FailureOr<int64_t> d = normalizeDim(op, *dim, in.size());
  return failed(d) ? failure() : op.setInteger(in[*d]);
}

/// Python's operators on symbolic ints: a OP b.
enum class IntOperator { Add, Sub, Mul, FloorDiv };
template <IntOperator Kind> static LogicalResult convertIntOp(NodeBinder &op) {
  FailureOr<int64_t> a = op.integer("a"), b = op.integer("b");
  if (failed(a) || failed(b))
    return failure();
  int64_t r = 0;
  bool overflow = false;
  switch (Kind) {
  case IntOperator::Add:
    overflow = llvm::AddOverflow(*a, *b, r);
    break;
  case IntOperator::Sub:
    overflow = llvm::SubOverflow(*a, *b, r);
    break;
  case IntOperator::Mul:
    overflow = llvm::MulOverflow(*a, *b, r);
    break;
  case IntOperator::FloorDiv:
    if (*b == 0)
      return op.error() << "division by zero";
    r = llvm::divideFloorSigned(*a, *b);
    break;
  }
  if (overflow)
    return op.error() << "the size overflows 64 bits";
  return op.setInteger(r);
}

/// Ops that make new tensors without autograd: creation (empty, arange,
/// new_ones: stochastic depth's mask, position ids), comparisons and integer
/// arithmetic on them (the attention masks transformers builds), and tables
/// computed from buffers (rotary cos and sin). NodeBinder::setNoGradResult.
static LogicalResult convertNoGrad(NodeBinder &op) {
  return op.setNoGradResult();
}

/// to(dtype / device / layout): the operand itself when nothing changes (as
/// PyTorch returns self), a cast between float dtypes, and a new tensor
/// without autograd for integer and bool conversions.
static LogicalResult convertTo(NodeBinder &op) {
  FailureOr<Value> x = op.tensor("self");
  FailureOr<bool> copy = op.boolean("copy", false);
  if (failed(x) || failed(copy))
    return failure();
  for (llvm::StringRef name : {"dtype", "layout", "device", "pin_memory",
                               "non_blocking", "memory_format"})
    op.ignore(name);
  FailureOr<RankedTensorType> type = op.resultType();
  if (failed(type))
    return failure();
  auto in = cast<RankedTensorType>(x->getType());
  if (in == *type && !*copy)
    return op.setResult(*x);
  if (isa<FloatType>(in.getElementType()) &&
      isa<FloatType>(type->getElementType()) && in != *type)
    return op.setResult(
        nn::CastOp::create(op.getBuilder(), op.getLoc(), *type, *x));
  return op.setNoGradResult();
}

/// roll(self, shifts, dims) along the given dims (not the flattened form).
static LogicalResult convertRoll(NodeBinder &op) {
  FailureOr<Value> x = op.tensor("self");
  FailureOr<SmallVector<int64_t>> shifts = op.integers("shifts"),
                                  dims =
                                      op.integers("dims", ArrayRef<int64_t>());
  if (failed(x) || failed(shifts) || failed(dims))
    return failure();
  if (dims->empty())
    return op.error() << "roll without dims (over the flattened tensor) is "
                         "not modelled";
  if (!op.requiresGrad(*x))
    return op.setNoGradResult();
  int64_t rank = shapeOf(*x).size();
  for (int64_t &d : *dims) {
    FailureOr<int64_t> n = normalizeDim(op, d, rank);
    if (failed(n))
      return failure();
    d = *n;
  }
  if (shifts->size() != dims->size())
    return op.error() << "roll needs one shift per dimension, got "
                      << shifts->size() << " and " << dims->size();
  OpBuilder &b = op.getBuilder();
  return op.setResult(nn::RollOp::create(b, op.getLoc(), x->getType(), *x,
                                         b.getDenseI64ArrayAttr(*shifts),
                                         b.getDenseI64ArrayAttr(*dims)));
}

/// pad(self, pad, mode="constant", value) and constant_pad_nd(self, pad,
/// value): `pad` lists (before, after) pairs from the last dimension back.
/// A new tensor even when every pad is zero (constant_pad_nd clones).
static LogicalResult convertConstantPad(NodeBinder &op) {
  FailureOr<Value> x = op.tensor("self");
  FailureOr<SmallVector<int64_t>> pad = op.integers("pad");
  FailureOr<std::string> mode = op.string("mode", "constant");
  FailureOr<double> value = op.real("value", 0.0);
  if (failed(x) || failed(pad) || failed(mode) || failed(value))
    return failure();
  if (*mode != "constant")
    return op.error() << "pad mode '" << *mode << "' is not modelled";
  int64_t rank = shapeOf(*x).size();
  if (pad->size() % 2 || int64_t(pad->size()) > 2 * rank)
    return op.error() << "pad of " << pad->size()
                      << " values does not fit rank " << rank;
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  for (size_t k = 0; k < pad->size() / 2; ++k) {
    int64_t d = rank - 1 - k;
    low[d] = (*pad)[2 * k];
    high[d] = (*pad)[2 * k + 1];
    if (low[d] < 0 || high[d] < 0)
      return op.error() << "negative padding (a crop) is not modelled";
  }
  if (!op.requiresGrad(*x))
    return op.setNoGradResult();
  OpBuilder &b = op.getBuilder();
  FailureOr<Value> y = op.make<nn::PadOp>(*x, b.getDenseI64ArrayAttr(low),
                                          b.getDenseI64ArrayAttr(high),
                                          b.getF64FloatAttr(*value));
  return failed(y) ? failure() : op.setResult(*y);
}

/// fill_(self, value) on a tensor without autograd (the window masks Swin
/// builds in slices of a new_zeros): it writes memory that exists.
static LogicalResult convertFillInplace(NodeBinder &op) {
  FailureOr<Value> x = op.tensor("self");
  if (failed(x))
    return failure();
  op.ignore("value");
  if (op.requiresGrad(*x))
    return op.error() << "fill_ of a tensor that requires grad is not "
                         "modelled";
  return op.setResult(*x);
}

/// self[indices]: without autograd on tensors that do not require grad.
/// Rows of a 2-D table gathered by one integer index tensor (Swin's relative
/// position bias) keep what nn.embedding keeps: IndexBackward0 saves the
/// indices and scatter-adds the gradient into a new table-sized tensor, as
/// embedding_dense_backward does.
static LogicalResult convertIndex(NodeBinder &op) {
  FailureOr<Value> self = op.tensor("self");
  if (failed(self))
    return failure();
  if (!op.requiresGrad(*self))
    return op.setNoGradResult();
  FailureOr<SmallVector<Value>> indices = op.tensors("indices");
  if (failed(indices))
    return failure();
  auto isRowIndex = [](Value v) {
    auto t = cast<RankedTensorType>(v.getType()).getElementType();
    return t.isInteger(64) || t.isInteger(32);
  };
  if (shapeOf(*self).size() != 2 || indices->size() != 1 ||
      !isRowIndex(indices->front()))
    return op.error() << "indexing a tensor that requires grad is modelled "
                         "for one integer index tensor into the rows of a 2-D "
                         "table";
  FailureOr<Value> y =
      op.make<nn::EmbeddingOp>(*self, indices->front(), IntegerAttr());
  return failed(y) ? failure() : op.setResult(*y);
}

void vram::torch_export::registerShapeConverters(ConverterTable &table) {
  table.on("aten.view.default", convertView<kSize>);
  table.on("aten._unsafe_view.default", convertView<kSize>);
  table.on("aten.reshape.default", convertView<kShape>);
  table.on("aten.flatten.using_ints", convertFlatten);
  table.on("aten.unflatten.int", convertUnflatten);
  table.on("aten.unsqueeze.default", convertUnsqueeze);
  table.on("aten.squeeze.dim", convertSqueezeDim);
  table.on("aten.transpose.int", convertTranspose);
  table.on("aten.permute.default", convertPermute);
  table.on("aten.contiguous.default", convertContiguous);
  table.on("aten.expand.default", convertExpand);
  table.on("aten.cat.default", convertCat);
  // clang-format off
  static constexpr llvm::StringLiteral kNoGradTargets[] = {
      "aten.empty.memory_format",
      "aten.arange.default",
      "aten.arange.start",
      "aten.arange.start_step",
      "aten.full.default",
      "aten.diff.default",
      "aten.cumsum.default",
      "aten.gather.default",
      "aten.cos.default",
      "aten.sin.default",
      "aten.abs.default",
      "aten.log.default",
      "aten.min.other",
      "aten.where.self",
      "aten.zeros.default",
  };
  // clang-format on
  for (llvm::StringRef target : kNoGradTargets)
    table.on(target, convertNoGrad);
  // Factories that read only their operand's dtype and sizes, and
  // comparisons and logic on masks: their bool results have no gradient
  // whatever their operands need (`y > 0` on an activation).
  for (llvm::StringRef target :
       {"aten.new_ones.default", "aten.new_zeros.default",
        "aten.full_like.default", "aten.zeros_like.default", "aten.eq.Scalar",
        "aten.eq.Tensor", "aten.ne.Scalar", "aten.ne.Tensor", "aten.le.Scalar",
        "aten.le.Tensor", "aten.lt.Scalar", "aten.lt.Tensor", "aten.ge.Scalar",
        "aten.ge.Tensor", "aten.gt.Scalar", "aten.gt.Tensor",
        "aten.__and__.Tensor", "aten.__or__.Tensor"})
    table.on(target, [](NodeBinder &op) { return op.setFactoryResult(); });
  table.on("aten.index.Tensor", convertIndex);
  table.on("aten.roll.default", convertRoll);
  table.on("aten.pad.default", convertConstantPad);
  table.on("aten.constant_pad_nd.default", convertConstantPad);
  table.on("aten.fill_.Scalar", convertFillInplace);
  table.on("aten.to.dtype", convertTo);
  table.on("aten.to.device", convertTo);
  table.on("aten.to.dtype_layout", convertTo);
  table.on("aten.slice.Tensor", convertSlice);
  table.on("aten.select.int", convertSelect);
  table.on("aten.split.Tensor", convertSplit);
  table.on("aten.split_with_sizes.default", convertSplitWithSizes);
  table.on("aten.unbind.int", convertUnbind);
  table.on("aten.chunk.default", convertChunk);
  table.on("aten.alias.default", convertAlias);
  table.on("aten._assert_tensor_metadata.default", convertAssertMetadata);
  table.on("aten.sym_size.int", convertSymSize);
  table.on("_operator.add", convertIntOp<IntOperator::Add>);
  table.on("_operator.sub", convertIntOp<IntOperator::Sub>);
  table.on("_operator.mul", convertIntOp<IntOperator::Mul>);
  table.on("_operator.floordiv", convertIntOp<IntOperator::FloorDiv>);
}
