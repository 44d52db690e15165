//===- ShapeOps.cpp - shape, view and data-movement converters ------------===//
//
// Shape arithmetic over constants folds in the core (ConstFold.cpp); these
// converters handle the ops on activations: views (Reshape, Flatten,
// Squeeze/Unsqueeze, Transpose, Expand, Slice, Split, Gather of one index),
// Concat, Pad, embeddings (Gather of an initializer's rows), and Shape
// itself (a constant from the static shape of its input).
//
//===----------------------------------------------------------------------===//

#include "ConverterTable.h"
#include "Importer.h"

using namespace mlir;
using namespace vram::onnx_import;
namespace nn = vram::nn;
using llvm::SmallVector;
using llvm::StringRef;

static LogicalResult convertShape(OpBinder &op) {
  Entry *e = op.inputEntry(0);
  if (!op.hasInput(0) || op.numOutputs() < 1)
    return op.error() << "needs one input and one output";
  if (!e)
    return op.error() << "input '" << op.inputName(0) << "' has no value";
  SmallVector<int64_t, 4> shape = e->shape();
  int64_t rank = shape.size();
  int64_t start = op.intAttr("start", 0), end = op.intAttr("end", rank);
  if (start < 0)
    start += rank;
  if (end < 0)
    end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  ConstTensor c = ConstTensor::make(DT_INT64, {end - start});
  for (int64_t k = start; k < end; ++k)
    c.i[k - start] = shape[k];
  op.im.setConst(op.node.output(0), std::move(c));
  return success();
}

static LogicalResult convertIdentity(OpBinder &op) {
  Entry *e = op.inputEntry(0);
  if (!e || op.numOutputs() < 1)
    return op.error() << "needs a defined input and an output";
  // An eval-mode torch.onnx export deduplicates parameters with equal
  // values (zero-initialized biases, ones-initialized scales) and names
  // each duplicate by an Identity of the one it kept: restore it as its own
  // parameter.
  StringRef out = op.node.output(0);
  if (e->kind == Entry::Init && isFloatDType(e->init->data_type()) &&
      !op.im.isBufferInit(e->init->name(), *e->init) && !out.starts_with("/") &&
      !out.starts_with("onnx::") && !op.im.isGraphOutput(out) &&
      !op.im.isInitializer(out)) {
    op.im.restoreInitializer(*e->init, out);
    return success();
  }
  op.setResultEntry(0, *e);
  return success();
}

/// Ops that the importer only folds on constant inputs: reaching the
/// converter means an input is an activation.
static LogicalResult convertConstantOnly(OpBinder &op) {
  return op.error() << "unsupported op '" << op.opType()
                    << "' on non-constant tensors (only supported when it "
                       "folds to a constant)";
}

static LogicalResult convertTranspose(OpBinder &op) {
  Entry *e = op.inputEntry(0);
  if (!e)
    return op.error() << "input 0 is missing";
  int64_t rank = e->shape().size();
  SmallVector<int64_t, 4> perm;
  if (auto p = op.intsAttr("perm"))
    perm.assign(p->begin(), p->end());
  else
    for (int64_t k = rank - 1; k >= 0; --k)
      perm.push_back(k);
  // A transposed initializer is built where it is first used (see
  // Entry::TransposedInit), once its permutation is known to be valid.
  SmallVector<int64_t, 4> sorted(perm);
  llvm::sort(sorted);
  bool isPermutation = (int64_t)perm.size() == rank &&
                       llvm::equal(sorted, llvm::seq<int64_t>(0, rank));
  if (e->kind == Entry::Init && isPermutation) {
    Entry view = *e;
    view.kind = Entry::TransposedInit;
    view.perm = perm;
    view.viewLoc = op.loc;
    op.setResultEntry(0, view);
    return success();
  }
  auto x = op.tensor(0);
  if (failed(x))
    return failure();
  return op.makeResult<nn::PermuteOp>(*x, ArrayRef<int64_t>(perm));
}

static LogicalResult convertConcat(OpBinder &op) {
  SmallVector<Value> vals;
  Type et;
  for (int k = 0; k < op.node.input_size(); ++k)
    if (!op.constInput(k) && op.hasInput(k)) {
      auto v = op.tensor(k);
      if (failed(v))
        return failure();
      et = cast<RankedTensorType>(v->getType()).getElementType();
      break;
    }
  for (int k = 0; k < op.node.input_size(); ++k) {
    if (!op.hasInput(k))
      continue;
    auto v = op.tensor(k, et);
    if (failed(v))
      return failure();
    vals.push_back(*v);
  }
  if (vals.empty())
    return op.error() << "expects at least one input";
  int64_t rank = cast<RankedTensorType>(vals[0].getType()).getRank();
  int64_t axis = op.intAttr("axis", 0);
  if (axis < 0)
    axis += rank;
  return op.makeResult<nn::ConcatOp>(ValueRange(vals),
                                     op.builder().getI64IntegerAttr(axis));
}

/// Reshape, Flatten, Squeeze and Unsqueeze: a view to a static shape.
static LogicalResult convertReshapeLike(OpBinder &op) {
  StringRef opType = op.opType();
  auto x = op.tensor(0);
  if (failed(x))
    return failure();
  auto xt = cast<RankedTensorType>(x->getType());
  int64_t rank = xt.getRank();
  SmallVector<int64_t, 4> shape;
  std::string err;
  if (opType == "Reshape") {
    const ConstTensor *s = op.constInput(1);
    if (!s)
      return op.error() << "the target shape could not be folded to a constant";
    if (!resolveReshape(xt.getShape(), s->toInts(), op.intAttr("allowzero", 0),
                        shape, err))
      return op.error() << err;
  } else if (opType == "Flatten") {
    int64_t axis = op.intAttr("axis", 1);
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis > rank)
      return op.error() << "axis is out of range for rank " << rank;
    // The outer and inner sizes; with a 0 dim the others can be anything.
    int64_t p = 1, q = 1;
    for (int64_t k = 0; k < rank; ++k)
      if (__builtin_mul_overflow(k < axis ? p : q, xt.getDimSize(k),
                                 k < axis ? &p : &q))
        return op.error() << "the flattened shape overflows int64";
    if (axis == 1 && rank >= 2) {
      return op.makeResult<nn::FlattenOp>(*x, op.builder().getI64IntegerAttr(1),
                                          op.builder().getI64IntegerAttr(-1));
    }
    shape = {p, q};
  } else { // Unsqueeze, Squeeze
    ConstTensor probe = ConstTensor::make(DT_INT64, {});
    probe.shape.assign(xt.getShape().begin(), xt.getShape().end());
    SmallVector<const ConstTensor *> ins{&probe, op.constInput(1)};
    if (op.hasInput(1) && !ins[1])
      return op.error() << "axes must be constant";
    // Fold on a shape-only probe (no elements) to get the result shape.
    probe.i.clear();
    std::vector<ConstTensor> outs;
    if (!foldOp(opType, ins, op.attrs, 1, outs, err))
      return op.error() << err;
    shape = outs[0].shape;
  }
  auto r = op.im.reshapeTo(*x, shape, op.loc);
  if (failed(r))
    return failure();
  op.setResult(0, *r);
  return success();
}

static LogicalResult convertExpand(OpBinder &op) {
  auto x = op.tensor(0);
  if (failed(x))
    return failure();
  auto xt = cast<RankedTensorType>(x->getType());
  const ConstTensor *s = op.constInput(1);
  if (!s)
    return op.error() << "the target shape could not be folded to a constant";
  auto bs = broadcastShapes(xt.getShape(), s->toInts());
  if (!bs)
    return op.error() << "shape does not broadcast with " << xt;
  if (ArrayRef<int64_t>(*bs) == xt.getShape()) {
    op.setResult(0, *x);
    return success();
  }
  if (!checkedNumElements(*bs))
    return op.error() << "the expanded shape overflows int64";
  auto out = RankedTensorType::get(*bs, xt.getElementType());
  op.setResult(0, nn::ExpandOp::create(op.builder(), op.loc, out, *x));
  return success();
}

static LogicalResult convertSlice(OpBinder &op) {
  OpBuilder &b = op.builder();
  auto x = op.tensor(0);
  if (failed(x))
    return failure();
  auto xt = cast<RankedTensorType>(x->getType());
  int64_t rank = xt.getRank();
  if (op.hasInput(1))
    for (int k = 1; k <= 4; ++k)
      if (op.hasInput(k) && !op.constInput(k))
        return op.error() << "starts, ends, axes and steps must be constants";
  SliceSpec spec;
  std::string err;
  if (!readSliceSpec(op.constInput(1), op.constInput(2), op.constInput(3),
                     op.constInput(4), op.hasInput(1), op.attrs, spec, err))
    return op.error() << err;
  auto &[starts, ends, axes, steps] = spec;
  Value v = *x;
  for (size_t k = 0; k < starts.size(); ++k) {
    int64_t axis = axes[k] < 0 ? axes[k] + rank : axes[k];
    if (axis < 0 || axis >= rank)
      return op.error() << "axis " << axes[k] << " is out of range for rank "
                        << rank;
    if (steps[k] <= 0)
      return op.error() << "only positive slice steps are supported";
    int64_t dim = xt.getDimSize(axis);
    int64_t s = starts[k], e = ends[k];
    if (s < 0)
      s += dim;
    if (e < 0)
      e += dim;
    s = std::clamp<int64_t>(s, 0, dim);
    e = std::clamp<int64_t>(e, 0, dim);
    if (s == 0 && e == dim && steps[k] == 1)
      continue;
    auto r = op.make<nn::SliceOp>(
        v, b.getI64IntegerAttr(axis), b.getI64IntegerAttr(s),
        b.getI64IntegerAttr(e), b.getI64IntegerAttr(steps[k]));
    if (failed(r))
      return failure();
    v = *r;
  }
  op.setResult(0, v);
  return success();
}

static LogicalResult convertSplit(OpBinder &op) {
  OpBuilder &b = op.builder();
  auto x = op.tensor(0);
  if (failed(x))
    return failure();
  auto xt = cast<RankedTensorType>(x->getType());
  int64_t rank = xt.getRank();
  int64_t axis = op.intAttr("axis", 0);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return op.error() << "axis is out of range for rank " << rank;
  int64_t dim = xt.getDimSize(axis);
  int64_t outputs = op.numOutputs();
  std::vector<int64_t> sizes;
  if (op.hasInput(1)) {
    const ConstTensor *c = op.constInput(1);
    if (!c)
      return op.error() << "split sizes must be constant";
    sizes = c->toInts();
  } else if (auto s = op.intsAttr("split"); s && !s->empty()) {
    sizes = *s;
  } else {
    int64_t parts = op.intAttr("num_outputs", outputs);
    if (parts <= 0 || parts != outputs)
      return op.error() << "num_outputs " << parts << " for " << outputs
                        << " outputs";
    int64_t chunk = dim / parts + (dim % parts != 0);
    for (int64_t k = 0; k < parts; ++k)
      sizes.push_back(std::max<int64_t>(0, std::min(chunk, dim - k * chunk)));
  }
  if ((int64_t)sizes.size() != outputs)
    return op.error() << sizes.size() << " split sizes for " << outputs
                      << " outputs";
  int64_t start = 0;
  for (int64_t size : sizes) {
    if (size < 0 || start > dim - size)
      return op.error() << "split sizes exceed dimension " << axis
                        << " of size " << dim;
    start += size;
  }
  if (start != dim)
    return op.error() << "split sizes sum to " << start << ", not to dimension "
                      << axis << " of size " << dim;
  // Views whose gradients one backward node (SplitBackward) concatenates.
  auto split = nn::SplitOp::create(b, op.loc, *x, axis, sizes,
                                   /*squeeze=*/false);
  for (auto [k, piece] : llvm::enumerate(split.getResults()))
    op.setResult(k, piece);
  return success();
}

static LogicalResult convertGather(OpBinder &op) {
  OpBuilder &b = op.builder();
  if (!op.hasInput(0) || !op.hasInput(1))
    return op.error() << "expects two inputs";
  int64_t axis = op.intAttr("axis", 0);
  Entry *data = op.inputEntry(0);
  // Gather of rows of a float initializer: an embedding lookup.
  if (data && data->kind == Entry::Init &&
      isFloatDType(data->init->data_type())) {
    if (data->init->dims_size() != 2 || axis != 0)
      return op.error() << "only row lookup (axis 0) of a 2-D weight is "
                           "supported as an embedding";
    auto w = op.tensor(0);
    auto idx = op.tensor(1);
    if (failed(w) || failed(idx))
      return failure();
    auto it = cast<RankedTensorType>(idx->getType());
    if (!isa<IntegerType>(it.getElementType()))
      return op.error() << "embedding indices must be integers, got " << it;
    return op.makeResult<nn::EmbeddingOp>(*w, *idx, IntegerAttr());
  }
  // Selecting with constant indices along a dim of an activation: a slice.
  const ConstTensor *idx = op.constInput(1);
  if (!idx || idx->numElements() != 1)
    return op.error() << "Gather on an activation needs one constant index";
  auto x = op.tensor(0);
  if (failed(x))
    return failure();
  auto xt = cast<RankedTensorType>(x->getType());
  int64_t rank = xt.getRank();
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return op.error() << "axis is out of range for rank " << rank;
  int64_t i = idx->getI(0), dim = xt.getDimSize(axis);
  if (i < 0)
    i += dim;
  if (i < 0 || i >= dim)
    return op.error() << "index " << idx->getI(0)
                      << " is out of range for size " << dim;
  auto s = op.make<nn::SliceOp>(
      *x, b.getI64IntegerAttr(axis), b.getI64IntegerAttr(i),
      b.getI64IntegerAttr(i + 1), b.getI64IntegerAttr(1));
  if (failed(s))
    return failure();
  SmallVector<int64_t> shape(xt.getShape());
  shape.erase(shape.begin() + axis);
  shape.insert(shape.begin() + axis, idx->shape.begin(), idx->shape.end());
  auto r = op.im.reshapeTo(*s, shape, op.loc);
  if (failed(r))
    return failure();
  op.setResult(0, *r);
  return success();
}

static LogicalResult convertPad(OpBinder &op) {
  std::string mode = op.stringAttr("mode", "constant");
  auto x = op.tensor(0);
  if (failed(x))
    return failure();
  int64_t rank = cast<RankedTensorType>(x->getType()).getRank();
  auto padsOr = op.intsInputOrAttr(1, "pads");
  if (failed(padsOr))
    return failure();
  std::vector<int64_t> pads = padsOr->value_or(std::vector<int64_t>{});
  std::vector<int64_t> axes;
  if (op.hasInput(3)) { // opset 18
    const ConstTensor *c = op.constInput(3);
    if (!c)
      return op.error() << "axes must be constant";
    axes = c->toInts();
  } else {
    for (int64_t k = 0; k < rank; ++k)
      axes.push_back(k);
  }
  if (pads.size() != 2 * axes.size())
    return op.error() << "expects " << 2 * axes.size() << " pads, got "
                      << pads.size();
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t ax = axes[k] < 0 ? axes[k] + rank : axes[k];
    if (ax < 0 || ax >= rank)
      return op.error() << "axis " << axes[k] << " is out of range for rank "
                        << rank;
    low[ax] = pads[k];
    high[ax] = pads[k + axes.size()];
  }
  // torch.onnx pads average pooling's input with zeros (densenet): nothing
  // to do.
  auto isZero = [](int64_t v) { return v == 0; };
  if (llvm::all_of(low, isZero) && llvm::all_of(high, isZero)) {
    op.setResult(0, *x);
    return success();
  }
  if (mode != "constant")
    return op.error() << "only constant padding is supported, got mode '"
                      << mode << "'";
  auto isNegative = [](int64_t v) { return v < 0; };
  if (llvm::any_of(low, isNegative) || llvm::any_of(high, isNegative))
    return op.error() << "negative pads (cropping) are not supported";
  double value = 0;
  if (op.hasInput(2)) {
    const ConstTensor *c = op.constInput(2);
    if (!c || c->numElements() != 1)
      return op.error() << "the pad value must be a constant scalar";
    value = c->getF(0);
  }
  if (!isFloatTensor(*x))
    return op.error() << "expects a floating-point tensor";
  OpBuilder &b = op.builder();
  return op.makeResult<nn::PadOp>(*x, b.getDenseI64ArrayAttr(low),
                                  b.getDenseI64ArrayAttr(high),
                                  b.getF64FloatAttr(value));
}

void vram::onnx_import::registerShapeConverters(ConverterTable &table) {
  table.onOp("Shape", 1, convertShape);
  table.onOp("Identity", 1, convertIdentity);
  for (StringRef op :
       {"Constant", "ConstantOfShape", "Equal", "Not", "Range", "Trilu"})
    table.onOp(op, 1, convertConstantOnly);
  table.onOp("Transpose", 1, convertTranspose);
  table.onOp("Concat", 1, convertConcat);
  for (StringRef op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze"})
    table.onOp(op, 1, convertReshapeLike);
  table.onOp("Expand", 8, convertExpand);
  table.onOp("Slice", 1, convertSlice);
  table.onOp("Split", 1, convertSplit);
  table.onOp("Gather", 1, convertGather);
  table.onOp("Pad", 1, convertPad);
}
