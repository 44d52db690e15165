//===- ModelBuilder.cpp - PyTorch-like layer builders for the zoo ---------===//

#include "ModelBuilder.h"

#include "vram/Dialect/NN/NNOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/SmallVector.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace vram::nn;
using namespace vram::zoo;

ModelBuilder::ModelBuilder(OpBuilder &builder)
    : builder(builder), f32(builder.getF32Type()) {}

Location ModelBuilder::loc(const Twine &layer) {
  return NameLoc::get(builder.getStringAttr(layer));
}

ArrayRef<int64_t> ModelBuilder::shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

RankedTensorType ModelBuilder::floatTensor(ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, f32);
}

std::string ModelBuilder::qualify(StringRef layer, StringRef leaf) {
  if (layer.empty())
    return leaf.str();
  return (layer + "." + leaf).str();
}

//===----------------------------------------------------------------------===//
// Parameters and buffers
//===----------------------------------------------------------------------===//

Value ModelBuilder::param(StringRef layer, StringRef leaf,
                          ArrayRef<int64_t> shape) {
  std::string name = qualify(layer, leaf);
  Value &state = stateByName[name];
  if (!state)
    state = ParamOp::create(builder, loc(layer.empty() ? leaf : layer),
                            floatTensor(shape), name);
  assert(shapeOf(state) == shape && "a parameter asked for in two shapes");
  return state;
}

void ModelBuilder::orderParams(StringRef module, ArrayRef<StringRef> order) {
  std::string prefix = (module + ".").str();
  SmallVector<std::pair<size_t, ParamOp>> params;
  for (const auto &entry : stateByName) {
    StringRef name = entry.getKey();
    auto param = entry.getValue().getDefiningOp<ParamOp>();
    if (!param || !name.starts_with(prefix))
      continue;
    StringRef rest = name.drop_front(prefix.size());
    size_t rank =
        llvm::find_if(
            order,
            [&](StringRef submodule) {
              return rest.starts_with(submodule) &&
                     rest.drop_front(submodule.size()).starts_with(".");
            }) -
        order.begin();
    params.push_back({rank, param});
  }
  if (params.empty())
    return;
  // As made, within a submodule (a linear's weight before its bias).
  llvm::sort(params, [](const auto &a, const auto &b) {
    if (a.first != b.first)
      return a.first < b.first;
    return a.second->isBeforeInBlock(b.second);
  });
  Operation *first = params.front().second;
  for (const auto &entry : params)
    if (entry.second->isBeforeInBlock(first))
      first = entry.second;
  // Parameters read nothing: placed where the first was, each stays before
  // its uses.
  Operation *after = first->getPrevNode();
  Block *block = first->getBlock();
  for (const auto &entry : params) {
    Operation *op = entry.second;
    if (after)
      op->moveAfter(after);
    else
      op->moveBefore(block, block->begin());
    after = op;
  }
}

Value ModelBuilder::buffer(StringRef layer, StringRef leaf,
                           ArrayRef<int64_t> shape, Type elementType) {
  auto type = RankedTensorType::get(shape, elementType ? elementType : f32);
  std::string name = qualify(layer, leaf);
  Value &state = stateByName[name];
  if (!state)
    state = BufferOp::create(builder, loc(layer.empty() ? leaf : layer), type,
                             name);
  assert(state.getType() == type && "a buffer asked for in two types");
  return state;
}

//===----------------------------------------------------------------------===//
// Layers with parameters
//===----------------------------------------------------------------------===//

Value ModelBuilder::conv(Value x, StringRef layer, int64_t cout, int64_t kernel,
                         int64_t stride, int64_t pad, int64_t groups,
                         bool bias) {
  int64_t cin = shapeOf(x)[1];
  Value w = param(layer, "weight", {cout, cin / groups, kernel, kernel});
  Value b = bias ? param(layer, "bias", {cout}) : Value();
  return Conv2dOp::create(builder, loc(layer), x, w, b, {stride, stride},
                          {pad, pad}, {1, 1}, groups);
}

Value ModelBuilder::batchNorm(Value x, StringRef layer, double eps) {
  int64_t c = shapeOf(x)[1];
  Value w = param(layer, "weight", {c});
  Value b = param(layer, "bias", {c});
  Value mean = buffer(layer, "running_mean", {c});
  Value var = buffer(layer, "running_var", {c});
  // Not used by the forward computation, but a real 8-byte buffer of every
  // BatchNorm module: keeps buffer bytes equal to PyTorch's.
  buffer(layer, "num_batches_tracked", {}, builder.getI64Type());
  return BatchNormOp::create(builder, loc(layer), x, w, b, mean, var,
                             llvm::APFloat(eps), llvm::APFloat(0.1));
}

Value ModelBuilder::linear(Value x, StringRef layer, int64_t out, bool bias) {
  int64_t in = shapeOf(x).back();
  Value w = param(layer, "weight", {out, in});
  Value b = bias ? param(layer, "bias", {out}) : Value();
  return linear(x, layer, w, b);
}

Value ModelBuilder::linear(Value x, StringRef layer, Value weight, Value bias) {
  return LinearOp::create(builder, loc(layer), x, weight, bias);
}

Value ModelBuilder::layerNorm(Value x, StringRef layer, double eps) {
  int64_t d = shapeOf(x).back();
  Value w = param(layer, "weight", {d});
  Value b = param(layer, "bias", {d});
  return LayerNormOp::create(builder, loc(layer), x, w, b,
                             /*normalized_rank=*/1, llvm::APFloat(eps));
}

Value ModelBuilder::rmsNorm(Value x, StringRef layer, double eps) {
  Value w = param(layer, "weight", {shapeOf(x).back()});
  return RmsNormOp::create(builder, loc(layer), x, w, /*normalized_rank=*/1,
                           llvm::APFloat(eps));
}

Value ModelBuilder::ligerRmsNorm(Value x, StringRef layer, double eps,
                                 int64_t partialRows) {
  Value w = param(layer, "weight", {shapeOf(x).back()});
  return LigerRmsNormOp::create(builder, loc(layer), x, w, llvm::APFloat(eps),
                                partialRows);
}

Value ModelBuilder::inverseRms(Value x, StringRef layer, double eps) {
  Location l = loc(layer);
  // variance = x.to(float32).pow(2).mean(-1, keepdim=True)
  Value squared = inFloat32(PowOp::create(builder, l, x, llvm::APFloat(2.0)));
  SmallVector<int64_t> reduced(shapeOf(x));
  reduced.back() = 1;
  Value variance = inFloat32(MeanOp::create(
      builder, l,
      RankedTensorType::get(
          reduced, cast<RankedTensorType>(x.getType()).getElementType()),
      squared, builder.getDenseI64ArrayAttr({-1}), /*keepdim=*/true));
  // torch.rsqrt(variance + eps)
  Value shifted = inFloat32(add(variance, scalar(eps, layer), layer));
  return inFloat32(RsqrtOp::create(builder, l, shifted));
}

Value ModelBuilder::decomposedRmsNorm(Value x, StringRef layer, double eps,
                                      bool unitOffset) {
  Value w = param(layer, "weight", {shapeOf(x).back()});
  Location l = loc(layer);
  // transformers runs the norm in float32 whatever the model's dtype:
  // x * torch.rsqrt(variance + eps), x the float32 copy.
  Value normalized = inFloat32(mul(x, inverseRms(x, layer, eps), layer));
  // Gemma: (normalized * (1.0 + weight.float())).type_as(x).
  if (unitOffset)
    return inFloat32(
        mul(normalized, inFloat32(add(w, number(1.0, layer), layer)), layer));
  // Llama: weight * normalized.to(input_dtype). Python holds the float32
  // `normalized` (the norm's `hidden_states`) and the norm's input (the
  // caller's) until the norm returns, so under bf16 or fp16 both are alive
  // while the product is made (measured: the final norm's forward,
  // benchmarks/accuracy/results/zero3-trace-llama-dp2-adam-bf16.txt).
  Value out = mul(w, normalized, layer);
  ReleaseOp::create(
      builder, l, ValueRange{x, normalized},
      StepPhaseAttr::get(builder.getContext(), StepPhase::Forward));
  return out;
}

Value ModelBuilder::t5LayerNorm(Value x, StringRef layer, double eps) {
  Value w = param(layer, "weight", {shapeOf(x).back()});
  // Unlike LlamaRMSNorm, the input itself (not its float32 copy) is
  // multiplied: a bf16 input times the float32 rsqrt gives float32, which
  // `.to(self.weight.dtype)` casts down before the weight multiplies it.
  Value normalized = promoting(mul(x, inverseRms(x, layer, eps), layer));
  return mul(w, normalized, layer);
}

Value ModelBuilder::embedding(Value ids, StringRef layer, int64_t num,
                              int64_t dim) {
  return embedding(ids, layer, param(layer, "weight", {num, dim}));
}

Value ModelBuilder::embedding(Value ids, StringRef layer, Value weight) {
  return EmbeddingOp::create(builder, loc(layer), weight, ids,
                             /*padding_idx=*/IntegerAttr());
}

//===----------------------------------------------------------------------===//
// Activations, elementwise, pooling
//===----------------------------------------------------------------------===//

Value ModelBuilder::relu(Value x, StringRef layer, bool inplace) {
  return ReluOp::create(builder, loc(layer), x, inplace);
}

Value ModelBuilder::relu6(Value x, StringRef layer, bool inplace) {
  return Relu6Op::create(builder, loc(layer), x, inplace);
}

Value ModelBuilder::gelu(Value x, StringRef layer,
                         GeluApproximation approximate) {
  return GeluOp::create(builder, loc(layer), x, approximate);
}

Value ModelBuilder::geluNew(Value x, StringRef layer) {
  Location l = loc(layer);
  // 0.5 * x * (1.0 + tanh(sqrt(2 / pi) * (x + 0.044715 * x ** 3))),
  // evaluated left to right as Python does: `0.5 * x` is held while the
  // rest is computed.
  Value half = mul(x, number(0.5, layer), layer);
  Value cube = PowOp::create(builder, l, x, llvm::APFloat(3.0));
  Value inner = add(x, mul(cube, number(0.044715, layer), layer), layer);
  Value t = TanhOp::create(
      builder, l, mul(inner, number(std::sqrt(2.0 / M_PI), layer), layer));
  return mul(half, add(t, number(1.0, layer), layer), layer);
}

Value ModelBuilder::silu(Value x, StringRef layer, bool inplace) {
  return SiluOp::create(builder, loc(layer), x, inplace);
}

Value ModelBuilder::dropout(Value x, StringRef layer, double p) {
  if (p == 0)
    return x;
  return DropoutOp::create(builder, loc(layer), x, llvm::APFloat(p),
                           /*inplace=*/false);
}

Value ModelBuilder::add(Value lhs, Value rhs, StringRef layer, bool inplace) {
  return AddOp::create(builder, loc(layer), lhs, rhs, inplace);
}

Value ModelBuilder::mul(Value lhs, Value rhs, StringRef layer) {
  return MulOp::create(builder, loc(layer), lhs, rhs, /*inplace=*/false);
}

Value ModelBuilder::ligerSwiglu(Value gate, Value up, StringRef layer) {
  return LigerSwigluOp::create(builder, loc(layer), gate, up);
}

Value ModelBuilder::div(Value lhs, Value rhs, StringRef layer, bool inplace) {
  return DivOp::create(builder, loc(layer), lhs, rhs, inplace);
}

Value ModelBuilder::tanh(Value x, StringRef layer) {
  return TanhOp::create(builder, loc(layer), x);
}

Value ModelBuilder::sigmoid(Value x, StringRef layer) {
  return SigmoidOp::create(builder, loc(layer), x);
}

Value ModelBuilder::contiguous(Value x, StringRef layer) {
  return ContiguousOp::create(builder, loc(layer), x);
}

Value ModelBuilder::softcap(Value x, double cap, StringRef layer) {
  Value y = tanh(div(x, number(cap, layer), layer), layer);
  return mul(y, number(cap, layer), layer);
}

Value ModelBuilder::maxPool(Value x, StringRef layer, int64_t kernel,
                            int64_t stride, int64_t pad) {
  return MaxPool2dOp::create(builder, loc(layer), x, {kernel, kernel},
                             builder.getDenseI64ArrayAttr({stride, stride}),
                             {pad, pad});
}

Value ModelBuilder::adaptiveAvgPool(Value x, StringRef layer, int64_t outH,
                                    int64_t outW) {
  return AdaptiveAvgPool2dOp::create(builder, loc(layer), x, {outH, outW});
}

Value ModelBuilder::attention(Value q, Value k, Value v, StringRef layer,
                              bool causal, AttentionBackend backend,
                              bool enableGqa, double dropoutP, Value mask,
                              std::optional<double> scale) {
  return ScaledDotProductAttentionOp::create(
      builder, loc(layer), q, k, v, mask, causal, backend,
      scale ? builder.getF64FloatAttr(*scale) : FloatAttr(), enableGqa,
      llvm::APFloat(dropoutP));
}

Value ModelBuilder::concat(ValueRange inputs, StringRef layer, int64_t dim) {
  return ConcatOp::create(builder, loc(layer), inputs, dim);
}

Value ModelBuilder::matmul(Value lhs, Value rhs, StringRef layer) {
  return MatmulOp::create(builder, loc(layer), lhs, rhs);
}

Value ModelBuilder::softmax(Value x, StringRef layer, int64_t dim) {
  return SoftmaxOp::create(builder, loc(layer), x, dim, /*dtype=*/TypeAttr());
}

Value ModelBuilder::sum(Value x, StringRef layer, ArrayRef<int64_t> dims,
                        bool keepdim) {
  return SumOp::create(builder, loc(layer), x, dims, keepdim);
}

std::pair<Value, Value> ModelBuilder::topk(Value x, StringRef layer, int64_t k,
                                           int64_t dim) {
  auto op = TopkOp::create(builder, loc(layer), x, k, dim);
  return {op.getValues(), op.getIndices()};
}

ModelBuilder::MoeDispatch
ModelBuilder::moeDispatch(Value indices, int64_t experts, StringRef layer) {
  auto op = MoeDispatchOp::create(builder, loc(layer), indices, experts);
  return {op.getSorted(),    op.getPerm(),   op.getTokenIndex(),
          op.getHistogram(), op.getCounts(), op.getOffsets(),
          op.getInverse()};
}

Value ModelBuilder::groupedMm(Value x, Value weight, Value offsets,
                              StringRef layer) {
  return GroupedMmOp::create(builder, loc(layer), x, weight, offsets);
}

Value ModelBuilder::inFloat32(Value v) {
  v.getDefiningOp()->setAttr(NNDialect::kFloat32AttrName,
                             builder.getUnitAttr());
  return v;
}

Value ModelBuilder::functional(Value v) {
  v.getDefiningOp()->setAttr(NNDialect::kFunctionalAttrName,
                             builder.getUnitAttr());
  return v;
}

Value ModelBuilder::promoting(Value v) {
  v.getDefiningOp()->setAttr(NNDialect::kPromoteAttrName,
                             builder.getUnitAttr());
  return v;
}

Value ModelBuilder::maskedFill(Value x, Value mask, double value,
                               StringRef layer) {
  return MaskedFillOp::create(builder, loc(layer), x, mask,
                              llvm::APFloat(value), /*inplace=*/false);
}

//===----------------------------------------------------------------------===//
// Constants computed in forward
//===----------------------------------------------------------------------===//

Value ModelBuilder::arange(int64_t n, StringRef layer) {
  auto type = RankedTensorType::get({n}, builder.getI64Type());
  llvm::SmallVector<int64_t> values(n);
  for (int64_t i = 0; i < n; ++i)
    values[i] = i;
  return ConstantOp::create(
      builder, loc(layer),
      DenseElementsAttr::get(type, llvm::ArrayRef(values)));
}

Value ModelBuilder::positionIds(int64_t batch, int64_t seq, int64_t offset,
                                StringRef layer) {
  auto type = RankedTensorType::get({batch, seq}, builder.getI64Type());
  llvm::SmallVector<int64_t> values(batch * seq);
  for (int64_t i = 0; i < batch * seq; ++i)
    values[i] = offset + i % seq;
  return ConstantOp::create(
      builder, loc(layer),
      DenseElementsAttr::get(type, llvm::ArrayRef(values)));
}

Value ModelBuilder::intConstant(ArrayRef<int64_t> shape, int64_t value,
                                StringRef layer) {
  auto type = RankedTensorType::get(shape, builder.getI64Type());
  return ConstantOp::create(builder, loc(layer),
                            DenseElementsAttr::get(type, value));
}

Value ModelBuilder::floatConstant(ArrayRef<int64_t> shape, double value,
                                  StringRef layer) {
  return ConstantOp::create(
      builder, loc(layer),
      DenseElementsAttr::get(floatTensor(shape), (float)value),
      /*wrapped_number=*/false, /*model_dtype=*/true);
}

Value ModelBuilder::scalar(double value, StringRef layer) {
  auto attr = DenseElementsAttr::get(floatTensor({}), (float)value);
  return ConstantOp::create(builder, loc(layer), attr);
}

Value ModelBuilder::number(double value, StringRef layer) {
  auto attr = DenseElementsAttr::get(floatTensor({}), (float)value);
  return ConstantOp::create(builder, loc(layer), attr,
                            /*wrapped_number=*/true);
}

Value ModelBuilder::eagerAttention(Value q, Value k, Value v, StringRef layer,
                                   double scaling,
                                   std::optional<double> softcap,
                                   double dropoutP, bool softmaxInFloat32,
                                   Value additiveMask) {
  Value scores = matmul(q, transpose(k, layer, 2, 3), layer);
  scores = mul(scores, number(scaling, layer), layer);
  if (additiveMask)
    scores = add(scores, additiveMask, layer);
  if (softcap)
    scores = this->softcap(scores, *softcap, layer);
  Value probs = softmax(scores, layer, /*dim=*/-1);
  if (softmaxInFloat32)
    probs = inFloat32(probs);
  probs = dropout(probs, layer, dropoutP);
  return matmul(probs, v, layer);
}

Value ModelBuilder::matmulAttention(Value q, Value k, Value v, StringRef layer,
                                    bool causal) {
  ArrayRef<int64_t> qs = shapeOf(q); // [B, H, L, D]
  int64_t rank = qs.size();
  Value scores = matmul(q, transpose(k, layer, rank - 2, rank - 1), layer);
  scores =
      mul(scores, scalar(1.0 / std::sqrt((double)qs.back()), layer), layer);
  if (causal)
    scores = maskedFill(
        scores, upperTriangleMask(qs[rank - 2], shapeOf(k)[rank - 2], layer),
        -std::numeric_limits<double>::infinity(), layer);
  return matmul(softmax(scores, layer, /*dim=*/-1), v, layer);
}

Value ModelBuilder::boolTensor(ArrayRef<int64_t> shape, StringRef layer) {
  auto type = RankedTensorType::get(shape, builder.getI1Type());
  return ConstantOp::create(builder, loc(layer),
                            DenseElementsAttr::get(type, false));
}

Value ModelBuilder::int64Tensor(ArrayRef<int64_t> shape, StringRef layer) {
  auto type = RankedTensorType::get(shape, builder.getI64Type());
  return ConstantOp::create(builder, loc(layer),
                            DenseElementsAttr::get(type, int64_t(0)));
}

Value ModelBuilder::attentionMask(ArrayRef<int64_t> shape, StringRef layer) {
  auto type = RankedTensorType::get(shape, builder.getI1Type());
  return ConstantOp::create(builder, loc(layer),
                            DenseElementsAttr::get(type, true));
}

Value ModelBuilder::upperTriangleMask(int64_t rows, int64_t cols,
                                      StringRef layer, int64_t diagonal) {
  auto type = RankedTensorType::get({rows, cols}, builder.getI1Type());
  llvm::SmallVector<bool> values;
  values.reserve(rows * cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      values.push_back(c > r + diagonal);
  return ConstantOp::create(builder, loc(layer),
                            DenseElementsAttr::get(type, values));
}

//===----------------------------------------------------------------------===//
// Views
//===----------------------------------------------------------------------===//

Value ModelBuilder::flatten(Value x, StringRef layer, int64_t startDim) {
  return FlattenOp::create(builder, loc(layer), x, startDim);
}

Value ModelBuilder::reshape(Value x, StringRef layer, ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(
      shape, cast<RankedTensorType>(x.getType()).getElementType());
  return ReshapeOp::create(builder, loc(layer), type, x);
}

Value ModelBuilder::transpose(Value x, StringRef layer, int64_t dim0,
                              int64_t dim1) {
  return TransposeOp::create(builder, loc(layer), x, dim0, dim1);
}

Value ModelBuilder::permute(Value x, StringRef layer, ArrayRef<int64_t> dims) {
  return PermuteOp::create(builder, loc(layer), x, dims);
}

Value ModelBuilder::slice(Value x, StringRef layer, int64_t dim, int64_t start,
                          int64_t end) {
  return SliceOp::create(builder, loc(layer), x, dim, start, end);
}

SmallVector<Value> ModelBuilder::split(Value x, StringRef layer, int64_t dim,
                                       ArrayRef<int64_t> sizes) {
  return SplitOp::create(builder, loc(layer), x, dim, sizes, /*squeeze=*/false)
      .getResults();
}

Value ModelBuilder::expand(Value x, StringRef layer, ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(
      shape, cast<RankedTensorType>(x.getType()).getElementType());
  return ExpandOp::create(builder, loc(layer), type, x);
}

//===----------------------------------------------------------------------===//
// Multi-head attention helpers
//===----------------------------------------------------------------------===//

std::pair<Value, Value>
ModelBuilder::rotaryTables(int64_t seq, int64_t rotaryDim, StringRef layer,
                           StringRef prefix, int64_t batch) {
  int64_t half = rotaryDim / 2;
  Value invFreq = buffer(layer, (prefix + "inv_freq").str(), {1, 1, half});
  Value freqs = expand(invFreq, layer, {batch, seq, half});
  Value cos = concat({freqs, freqs}, layer, 2),
        sin = concat({freqs, freqs}, layer, 2);
  if (batch == 1)
    return {cos, sin};
  // apply_rotary_pos_emb's unsqueeze(1): views broadcasting over the heads.
  return {reshape(cos, layer, {batch, 1, seq, rotaryDim}),
          reshape(sin, layer, {batch, 1, seq, rotaryDim})};
}

std::pair<Value, Value> ModelBuilder::ligerRope(Value q, Value k, Value cos,
                                                Value sin, StringRef layer,
                                                bool qGradInPlace,
                                                bool kGradInPlace) {
  auto rope = LigerRopeOp::create(builder, loc(layer), q, k, cos, sin,
                                  qGradInPlace, kGradInPlace);
  return {rope.getQueryOut(), rope.getKeyOut()};
}

Value ModelBuilder::applyRotary(Value x, Value cos, Value sin,
                                int64_t rotaryDim, bool concatenate,
                                StringRef layer) {
  int64_t headDim = shapeOf(x).back(), half = rotaryDim / 2;
  Value rot = rotaryDim == headDim ? x : slice(x, layer, 3, 0, rotaryDim);
  Value x1 = slice(rot, layer, 3, 0, half);
  Value x2 = slice(rot, layer, 3, half, rotaryDim);
  Value rotated = concat({x2, x1}, layer, 3);
  Value embed = add(mul(rot, cos, layer), mul(rotated, sin, layer), layer);
  if (!concatenate)
    return embed;
  if (rotaryDim == headDim)
    return contiguous(embed, layer);
  return concat({embed, slice(x, layer, 3, rotaryDim, headDim)}, layer, 3);
}

Value ModelBuilder::splitHeads(Value x, StringRef layer, int64_t heads) {
  ArrayRef<int64_t> s = shapeOf(x);
  Value split = reshape(x, layer, {s[0], s[1], heads, s[2] / heads});
  return transpose(split, layer, 1, 2);
}

Value ModelBuilder::mergeHeads(Value x, StringRef layer) {
  ArrayRef<int64_t> s = shapeOf(x);
  Value t = transpose(x, layer, 1, 2);
  // PyTorch copies here (`.contiguous()` / reshape of a transposed tensor);
  // the dialect has no copy op, so this is a view.
  return reshape(t, layer, {s[0], s[2], s[1] * s[3]});
}

void ModelBuilder::keepAlive(ValueRange values, StringRef layer,
                             bool modelFrame) {
  KeepAliveOp::create(builder, loc(layer), values, modelFrame);
}

Value ModelBuilder::allReduce(Value x, StringRef layer, int64_t ranks) {
  return AllReduceOp::create(builder, loc(layer), x, ranks);
}

Value ModelBuilder::allGatherOutput(Value x, StringRef layer, int64_t ranks) {
  SmallVector<int64_t> shape(shapeOf(x));
  shape.back() *= ranks;
  return AllGatherOutputOp::create(
      builder, loc(layer),
      RankedTensorType::get(shape, getElementTypeOrSelf(x.getType())), x, ranks,
      /*dim=*/IntegerAttr(), /*scatter_grad=*/false);
}

Value ModelBuilder::vocabParallelEmbedding(Value ids, StringRef layer,
                                           Value weight, int64_t ranks) {
  Value partial =
      VocabParallelEmbeddingOp::create(builder, loc(layer), weight, ids, ranks);
  return allReduce(partial, layer, ranks);
}

Value ModelBuilder::splitInput(Value x, StringRef layer, int64_t ranks) {
  SmallVector<int64_t> shape(shapeOf(x));
  shape.back() /= ranks;
  return SplitInputOp::create(
      builder, loc(layer),
      RankedTensorType::get(shape, getElementTypeOrSelf(x.getType())), x, ranks,
      /*dim=*/IntegerAttr());
}

Value ModelBuilder::splitSequence(Value x, StringRef layer, int64_t ranks) {
  SmallVector<int64_t> shape(shapeOf(x));
  shape[1] /= ranks;
  return SplitInputOp::create(
      builder, loc(layer),
      RankedTensorType::get(shape, getElementTypeOrSelf(x.getType())), x, ranks,
      builder.getI64IntegerAttr(1));
}

Value ModelBuilder::gatherSequence(Value x, StringRef layer, int64_t ranks,
                                   bool scatterGrad) {
  SmallVector<int64_t> shape(shapeOf(x));
  shape[1] *= ranks;
  return AllGatherOutputOp::create(
      builder, loc(layer),
      RankedTensorType::get(shape, getElementTypeOrSelf(x.getType())), x, ranks,
      builder.getI64IntegerAttr(1), scatterGrad);
}

Value ModelBuilder::reduceScatterSequence(Value x, StringRef layer,
                                          int64_t ranks) {
  SmallVector<int64_t> shape(shapeOf(x));
  shape[1] /= ranks;
  return ReduceScatterOutputOp::create(
      builder, loc(layer),
      RankedTensorType::get(shape, getElementTypeOrSelf(x.getType())), x, ranks,
      /*dim=*/1);
}

Value ModelBuilder::allReduceGrad(Value x, StringRef layer, int64_t ranks) {
  return AllReduceGradOp::create(builder, loc(layer), x, ranks);
}

//===----------------------------------------------------------------------===//
// Generation
//===----------------------------------------------------------------------===//

Value ModelBuilder::kvCacheUpdate(Value past, Value states, StringRef layer) {
  SmallVector<int64_t> shape(shapeOf(states));
  if (past)
    shape[2] += shapeOf(past)[2];
  auto type = cast<RankedTensorType>(states.getType()).clone(shape);
  return KvCacheUpdateOp::create(builder, loc(layer), type, past, states,
                                 /*static_cache=*/false, IntegerAttr());
}

Value ModelBuilder::staticCacheUpdate(Value past, Value states,
                                      int64_t capacity, StringRef layer,
                                      int64_t blockSize) {
  SmallVector<int64_t> shape(shapeOf(states));
  shape[2] = capacity;
  auto type = past ? cast<RankedTensorType>(past.getType())
                   : cast<RankedTensorType>(states.getType()).clone(shape);
  return KvCacheUpdateOp::create(
      builder, loc(layer), type, past, states, /*static_cache=*/true,
      blockSize ? builder.getI64IntegerAttr(blockSize) : IntegerAttr());
}

Value ModelBuilder::kvCacheReorder(Value cache, StringRef layer) {
  return KvCacheReorderOp::create(builder, loc(layer), cache);
}

Value ModelBuilder::int64Scalar(StringRef layer) {
  auto type = RankedTensorType::get({}, builder.getI64Type());
  return ConstantOp::create(builder, loc(layer),
                            DenseElementsAttr::get(type, int64_t(0)));
}

Value ModelBuilder::kvCachePast(Value cache, int64_t tokens, StringRef layer,
                                std::optional<int64_t> window) {
  SmallVector<int64_t> shape(shapeOf(cache));
  shape[2] = tokens;
  auto type = cast<RankedTensorType>(cache.getType()).clone(shape);
  return KvCachePastOp::create(builder, loc(layer), type, cache,
                               window ? builder.getI64IntegerAttr(*window)
                                      : IntegerAttr());
}

NextTokenOp ModelBuilder::nextToken(Value logits, StringRef layer,
                                    ValueRange previous,
                                    const Sampling &sampling,
                                    int64_t inputLength) {
  FloatAttr penalty = sampling.repetitionPenalty != 1.0
                          ? builder.getF64FloatAttr(sampling.repetitionPenalty)
                          : FloatAttr();
  IntegerAttr length =
      penalty ? builder.getI64IntegerAttr(inputLength) : IntegerAttr();
  if (!sampling.sample)
    return NextTokenOp::create(builder, loc(layer), logits, previous,
                               /*sample=*/false, FloatAttr(), IntegerAttr(),
                               FloatAttr(), FloatAttr(), penalty, length);
  return NextTokenOp::create(
      builder, loc(layer), logits, previous, /*sample=*/true,
      builder.getF64FloatAttr(sampling.temperature),
      builder.getI64IntegerAttr(sampling.topK),
      builder.getF64FloatAttr(sampling.topP),
      sampling.minP ? builder.getF64FloatAttr(*sampling.minP) : FloatAttr(),
      penalty, length);
}

std::pair<Value, Value> KvCache::update(ModelBuilder &mb, size_t index, Value k,
                                        Value v, StringRef layer,
                                        std::optional<int64_t> window) {
  if (keys.size() <= index) {
    keys.resize(index + 1);
    values.resize(index + 1);
    windows.resize(index + 1);
  }
  if (window && generation && !isBuffered()) {
    // DynamicSlidingWindowLayer: its 0-d int64 _sliding_window_tensor lives
    // with the cache; each update concatenates the view of the last
    // window - 1 cached positions with the new ones and keeps a view of the
    // result's last window - 1 (so the result's storage).
    if (!keys[index]) {
      windows[index] = window;
      counters.push_back(mb.int64Scalar(layer));
    }
    auto recent = [&](Value cached) {
      if (!cached)
        return cached;
      int64_t have = ModelBuilder::shapeOf(cached)[2];
      int64_t keep = std::min(have, *window - 1);
      return keep < have ? mb.slice(cached, layer, 2, have - keep, have)
                         : cached;
    };
    // Both concatenations run before self.keys is reassigned: the old keys
    // live through the values' (unlike DynamicLayer.update's).
    Value oldKeys = recent(keys[index]);
    keys[index] = mb.kvCacheUpdate(oldKeys, k, layer);
    values[index] = mb.kvCacheUpdate(recent(values[index]), v, layer);
    if (oldKeys)
      mb.keepAlive(oldKeys, layer);
    return {keys[index], values[index]};
  }
  if (isPaged()) {
    // vLLM's kernels read the blocks in place, up to the last position
    // written: a view of the buffer.
    keys[index] =
        mb.staticCacheUpdate(keys[index], k, capacity(), layer, blockSize);
    values[index] =
        mb.staticCacheUpdate(values[index], v, capacity(), layer, blockSize);
    int64_t written = keyLength(ModelBuilder::shapeOf(k)[2]);
    return {mb.slice(keys[index], layer, 2, 0, written),
            mb.slice(values[index], layer, 2, 0, written)};
  }
  if (isStatic) {
    if (!keys[index])
      counters.push_back(mb.int64Scalar(layer));
    keys[index] = mb.staticCacheUpdate(keys[index], k, totalTokens, layer);
    values[index] = mb.staticCacheUpdate(values[index], v, totalTokens, layer);
  } else {
    keys[index] = mb.kvCacheUpdate(keys[index], k, layer);
    values[index] = mb.kvCacheUpdate(values[index], v, layer);
  }
  return {keys[index], values[index]};
}
