//===- NNOpsAttention.cpp - embedding, scaled dot-product attention -------===//
//
// Embedding lookups and scaled_dot_product_attention: shapes, the mask
// checks, FLOPs, and what the math and fused attention backends keep.
//
//===----------------------------------------------------------------------===//

#include "NNOpsDetail.h"

#include "vram/Dialect/NN/NNOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace vram::nn;
using namespace vram::nn::detail;

//===----------------------------------------------------------------------===//
// Embedding and attention
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  auto weight = cast<RankedTensorType>(adaptor.getWeight().getType());
  auto indices = cast<RankedTensorType>(adaptor.getIndices().getType());
  if (weight.getRank() != 2)
    return emitOptionalError(
        loc, "expects a 2-D weight [num_embeddings, dim], got rank ",
        weight.getRank());
  if (auto pad = adaptor.getPaddingIdx())
    if (int64_t p = *pad;
        p < -weight.getDimSize(0) || p >= weight.getDimSize(0))
      return emitOptionalError(loc, "padding_idx ", p, " is out of range");
  SmallVector<int64_t> shape(indices.getShape());
  shape.push_back(weight.getDimSize(1));
  results.push_back(RankedTensorType::get(shape, weight.getElementType()));
  return success();
}

int64_t EmbeddingOp::getFlops(FlopConvention, bool) { return 0; }

int64_t EmbeddingOp::getBackwardFlops(FlopConvention c, ArrayRef<bool>) {
  // Scatter-add of the output gradient into the weight gradient.
  return c == Conv::Full ? numel(getOutput()) : 0;
}

void EmbeddingOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                  SmallVectorImpl<SavedTensor> &saved) {
  saved.push_back(SavedTensor::operand(1));
}

LogicalResult VocabParallelEmbeddingOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  auto weight = cast<RankedTensorType>(adaptor.getWeight().getType());
  auto indices = cast<RankedTensorType>(adaptor.getIndices().getType());
  if (weight.getRank() != 2)
    return emitOptionalError(
        loc, "expects a 2-D weight [num_embeddings / ranks, dim], got rank ",
        weight.getRank());
  if (failed(checkTensorParallelRanks(loc, adaptor.getRanks())))
    return failure();
  SmallVector<int64_t> shape(indices.getShape());
  shape.push_back(weight.getDimSize(1));
  results.push_back(RankedTensorType::get(shape, weight.getElementType()));
  return success();
}

int64_t VocabParallelEmbeddingOp::getFlops(FlopConvention, bool) { return 0; }

int64_t VocabParallelEmbeddingOp::getBackwardFlops(FlopConvention c,
                                                   ArrayRef<bool>) {
  return c == Conv::Full ? numel(getOutput()) : 0;
}

void VocabParallelEmbeddingOp::getSavedTensors(
    const TorchTarget &, ArrayRef<bool>, SmallVectorImpl<SavedTensor> &saved) {
  saved.push_back(SavedTensor::operand(1));
}

/// _MaskPartial's bool mask and shifted int64 ids, alive until the masked
/// rows are zeroed.
void VocabParallelEmbeddingOp::getWorkspaceAllocations(
    const TorchTarget &, SmallVectorImpl<int64_t> &sizes) {
  int64_t ids = numel(getIndices());
  sizes.push_back(ids);
  sizes.push_back(satMul(ids, 8));
}

int64_t VocabParallelEmbeddingOp::getWorkspaceBytes(const TorchTarget &target) {
  return sumWorkspaceAllocations(*this, target);
}

LogicalResult ScaledDotProductAttentionOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  auto q = cast<RankedTensorType>(adaptor.getQuery().getType());
  auto k = cast<RankedTensorType>(adaptor.getKey().getType());
  auto v = cast<RankedTensorType>(adaptor.getValue().getType());
  if (q.getRank() < 2 || q.getRank() != k.getRank() ||
      q.getRank() != v.getRank())
    return emitOptionalError(
        loc, "query, key and value must have the same rank >= 2");
  if (q.getElementType() != k.getElementType() ||
      q.getElementType() != v.getElementType())
    return emitOptionalError(loc, "query, key and value element types differ");
  int64_t r = q.getRank();
  if (q.getShape().back() != k.getShape().back())
    return emitOptionalError(loc, "query and key head dims differ: ",
                             q.getShape().back(), " vs ", k.getShape().back());
  if (k.getDimSize(r - 2) != v.getDimSize(r - 2))
    return emitOptionalError(loc, "key and value sequence lengths differ: ",
                             k.getDimSize(r - 2), " vs ", v.getDimSize(r - 2));
  if (k.getShape().drop_back(2) != v.getShape().drop_back(2))
    return emitOptionalError(loc, "key and value batch/head dimensions differ");
  if (q.getShape().drop_back(2) != k.getShape().drop_back(2)) {
    // Grouped-query attention: the heads (dimension -3) of k and v divide
    // the query's; the dimensions before them agree.
    bool grouped = adaptor.getEnableGqa() && r >= 3 &&
                   q.getShape().drop_back(3) == k.getShape().drop_back(3) &&
                   k.getDimSize(r - 3) > 0 &&
                   q.getDimSize(r - 3) % k.getDimSize(r - 3) == 0;
    if (!grouped)
      return emitOptionalError(
          loc, "batch/head dimensions differ",
          adaptor.getEnableGqa()
              ? " (with enable_gqa the key heads must divide the query heads)"
              : "");
  }
  SmallVector<int64_t> shape(q.getShape());
  shape.back() = v.getShape().back();
  results.push_back(RankedTensorType::get(shape, q.getElementType()));
  return success();
}

LogicalResult ScaledDotProductAttentionOp::verify() {
  double p = getDropoutP().convertToDouble();
  if (!(p >= 0 && p < 1))
    return emitOpError("dropout_p must be in [0, 1), got ") << p;
  if (Value mask = getMask()) {
    // PyTorch: a bool mask or one of the query's dtype, broadcastable to the
    // scores [..., L, S], and never together with is_causal.
    if (getCausal())
      return emitOpError("takes a mask or causal, not both");
    auto q = tensorOf(getQuery()), m = tensorOf(mask);
    if (!m.getElementType().isInteger(1) &&
        m.getElementType() != q.getElementType())
      return emitOpError(
                 "mask element type must be i1 or the query element type ")
             << q.getElementType() << ", got " << m.getElementType();
    SmallVector<int64_t> scores(q.getShape());
    scores.back() = tensorOf(getKey()).getShape().drop_back().back();
    auto shape = broadcastShapes(m.getShape(), scores);
    if (failed(shape) || ArrayRef<int64_t>(*shape) != ArrayRef<int64_t>(scores))
      return emitOpError("mask ")
             << shapeStr(m.getShape())
             << " does not broadcast to the attention scores "
             << shapeStr(scores);
  }
  return success();
}

std::optional<SmallVector<int64_t>>
ScaledDotProductAttentionOp::getResultStrides(ArrayRef<int64_t> query) {
  // efficient allocates [B, L, H, Ev] and returns its transpose(1, 2); flash
  // lays its output out as the query (empty_like: a transposed q from a
  // [B, L, H, E] projection gives a [B, L, H, Ev] output, a contiguous q a
  // contiguous one; measured on the CPU with torch 2.15, and so CUDA's
  // flash_api allocates it); math returns a contiguous bmm result.
  auto out = tensorOf(getOutput());
  if (getBackend() == AttentionBackend::Math || out.getRank() != 4)
    return std::nullopt;
  if (getBackend() == AttentionBackend::Flash) {
    if (query.size() != 4 || query.back() != 1)
      return std::nullopt; // the kernel makes such a query contiguous
    return getDenseStridesLike(out.getShape(), query);
  }
  int64_t h = out.getDimSize(1), l = out.getDimSize(2), ev = out.getDimSize(3);
  return SmallVector<int64_t>{l * h * ev, ev, h * ev, 1};
}

void ScaledDotProductAttentionOp::getOperandViews(
    SmallVectorImpl<OperandView> &views) {
  // math: at::matmul(probs, v) views v as [batch..., S, Ev] -> [N, S, Ev]
  // for bmm (q and k are scaled into new tensors first).
  auto v = tensorOf(getValue());
  if (getBackend() != AttentionBackend::Math || v.getRank() < 4)
    return;
  int64_t r = v.getRank(), batch = 1;
  for (int64_t d : v.getShape().drop_back(2))
    batch = satMul(batch, d);
  views.push_back({2, {batch, v.getDimSize(r - 2), v.getDimSize(r - 1)}});
}

/// Multiply-adds of q k^T (L x S x E) and p v (L x S x Ev).
static int64_t attentionMacs(ScaledDotProductAttentionOp op, int64_t qkFactor,
                             int64_t vFactor) {
  auto q = tensorOf(op.getQuery()), k = tensorOf(op.getKey()),
       v = tensorOf(op.getValue());
  int64_t r = q.getRank();
  int64_t batch = 1;
  for (int64_t d : q.getShape().drop_back(2))
    batch = satMul(batch, d);
  int64_t l = q.getDimSize(r - 2), s = k.getDimSize(r - 2);
  return satMul(batch, l, s,
                satAdd(satMul(qkFactor, q.getDimSize(r - 1)),
                       satMul(vFactor, v.getDimSize(r - 1))));
}

int64_t ScaledDotProductAttentionOp::getFlops(FlopConvention c, bool) {
  // fvcore does not count attention.
  if (c == Conv::Macs)
    return 0;
  return fromMacs(c, attentionMacs(*this, 1, 1));
}

int64_t ScaledDotProductAttentionOp::getBackwardFlops(FlopConvention c,
                                                      ArrayRef<bool>) {
  if (c == Conv::Macs)
    return 0;
  return fromMacs(c, attentionMacs(*this, 3, 2));
}

void ScaledDotProductAttentionOp::getSavedTensors(
    const TorchTarget &target, ArrayRef<bool>,
    SmallVectorImpl<SavedTensor> &saved) {
  auto q = tensorOf(getQuery()), k = tensorOf(getKey());
  int64_t r = q.getRank();
  // torch 2.x turns a bool mask into one of the query's dtype (0 and -inf)
  // before it picks a kernel; the fused kernels keep that one, the math
  // kernel adds it to the scores and keeps none (measured with transformers'
  // LLaMA and GPT-2 exported with their [B, 1, T, T] bool masks: a float
  // [B, 1, T, T] per layer with the CPU flash kernel, nothing with the math
  // one: benchmarks/accuracy/export_pt2.py).
  Value mask = getMask();
  int64_t keys = k.getDimSize(r - 2);
  if (mask && getBackend() == AttentionBackend::Efficient &&
      target.device == Device::Cuda && keys % 16 != 0) {
    // CUDA's memory-efficient kernel wants the mask's rows 16-aligned:
    // preprocess_mask expands it to [B, H, L, S] and pads that (at::pad: a
    // new tensor) to a multiple of 16 columns, which the kernel keeps
    // (aten/src/ATen/native/transformers/cuda/attention.cu, torch 2.x; read
    // from the source, not measured: no GPU here).
    SmallVector<int64_t> padded(q.getShape());
    padded.back() = llvm::alignTo(keys, 16);
    saved.push_back(SavedTensor::extraBeforeOp(q.clone(padded), "padded_mask"));
  } else if (mask && getBackend() != AttentionBackend::Math) {
    if (tensorOf(mask).getElementType().isInteger(1))
      saved.push_back(SavedTensor::extraBeforeOp(
          RankedTensorType::get(tensorOf(mask).getShape(), q.getElementType()),
          "float_mask"));
    else
      saved.push_back(SavedTensor::operand(3));
  }
  if (getBackend() == AttentionBackend::Math) {
    // _scaled_dot_product_attention_math scales q and k^T by sqrt(scale)
    // before the product (two new tensors), and keeps them, the attention
    // probabilities (L x S) and v. On the CPU it computes a bf16 or fp16
    // attention in float32: q, k and v are upcast first, and the float32
    // copy of v is the one kept (measured with transformers' GPT-2 in bf16,
    // torch 2.15: benchmarks/accuracy/results/
    // hf-bf16-torch-2.15.0-transformers-5.25.0-cpu.json).
    Type computed = q.getElementType();
    bool upcast =
        target.device == Device::Cpu && (computed.isBF16() || computed.isF16());
    if (upcast)
      computed = Float32Type::get(getContext());
    saved.push_back(SavedTensor::extra(q.clone(computed), "scaled_query"));
    saved.push_back(SavedTensor::extra(k.clone(computed), "scaled_key"));
    if (upcast)
      saved.push_back(SavedTensor::extra(tensorOf(getValue()).clone(computed),
                                         "float_value"));
    else
      saved.push_back(SavedTensor::operand(2));
    SmallVector<int64_t> probs(q.getShape());
    probs.back() = k.getDimSize(r - 2);
    auto probsType = RankedTensorType::get(probs, computed);
    saved.push_back(SavedTensor::extra(probsType, "attention_probs"));
    // at::dropout on the CPU: probs * (bernoulli noise / (1 - p)) keeps the
    // noise, and the product keeps the dropped probabilities.
    if (!getDropoutP().isZero()) {
      saved.push_back(SavedTensor::extra(probsType, "dropout_noise"));
      saved.push_back(SavedTensor::extra(probsType, "dropped_probs"));
    }
    return;
  }
  // Fused kernels keep q, k, v, the output and a logsumexp per row.
  for (unsigned i = 0; i < 3; ++i)
    saved.push_back(SavedTensor::operand(i));
  saved.push_back(SavedTensor::result(0));
  saved.push_back(
      SavedTensor::extra(RankedTensorType::get(q.getShape().drop_back(),
                                               Float32Type::get(getContext())),
                         "logsumexp"));
}

//===----------------------------------------------------------------------===//
// Liger-Kernel's rotary embedding
//===----------------------------------------------------------------------===//

LogicalResult LigerRopeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  auto q = cast<RankedTensorType>(adaptor.getQuery().getType());
  auto k = cast<RankedTensorType>(adaptor.getKey().getType());
  if (q.getRank() != 4 || k.getRank() != 4)
    return emitOptionalError(loc, "q and k must be [B, heads, T, D], got ",
                             shapeStr(q.getShape()), " and ",
                             shapeStr(k.getShape()));
  if (q.getDimSize(0) != k.getDimSize(0) ||
      q.getDimSize(2) != k.getDimSize(2) || q.getDimSize(3) != k.getDimSize(3))
    return emitOptionalError(loc, "q ", shapeStr(q.getShape()), " and k ",
                             shapeStr(k.getShape()),
                             " must agree but for their heads");
  // rope_forward takes [T, rotary dim] tables (unsqueezed) or [1 or B, T,
  // rotary dim] ones.
  for (Value table : {adaptor.getCos(), adaptor.getSin()}) {
    auto t = cast<RankedTensorType>(table.getType());
    ArrayRef<int64_t> s = t.getShape();
    bool batched = s.size() == 3 && (s[0] == 1 || s[0] == q.getDimSize(0));
    if ((s.size() != 2 && !batched) || s[s.size() - 2] != q.getDimSize(2) ||
        s.back() > q.getDimSize(3))
      return emitOptionalError(loc, "cos and sin must be [", q.getDimSize(2),
                               ", rotary dim <= ", q.getDimSize(3),
                               "] or [1 or ", q.getDimSize(0), ", ...], got ",
                               shapeStr(s));
  }
  results.push_back(q);
  results.push_back(k);
  return success();
}

bool LigerRopeOp::rotatesInPlace(Value x) {
  // rope_forward: x.transpose(1, 2).contiguous() is x's own storage when x
  // is transpose(1, 2) of a contiguous [B, T, H, D] tensor.
  auto t = x.getDefiningOp<TransposeOp>();
  if (!t)
    return false;
  int64_t d0 = t.getDim0() < 0 ? t.getDim0() + 4 : t.getDim0();
  int64_t d1 = t.getDim1() < 0 ? t.getDim1() + 4 : t.getDim1();
  if (std::min(d0, d1) != 1 || std::max(d0, d1) != 2)
    return false;
  // Contiguous: a kernel's output, or a reshape of one (the projection's
  // output viewed as heads), not a strided view.
  Value source = t.getInput();
  if (auto reshape = source.getDefiningOp<ReshapeOp>())
    source = reshape.getInput();
  return !isa_and_nonnull<TransposeOp, PermuteOp, SliceOp, ExpandOp>(
      source.getDefiningOp());
}

Value LigerRopeOp::getAliasedOperand(unsigned resultIndex) {
  Value x = getOperand(resultIndex);
  return rotatesInPlace(x) ? x : Value();
}

void LigerRopeOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  getInplaceEffects(rotatesInPlace(getQuery()) || rotatesInPlace(getKey()),
                    effects);
}

int64_t LigerRopeOp::getFlops(FlopConvention c, bool) {
  // x * cos + rotate_half(x) * sin over the rotated columns: 3 per element.
  if (c != Conv::Full)
    return 0;
  int64_t rotary = tensorOf(getCos()).getShape().back();
  int64_t headDim = tensorOf(getQuery()).getShape().back();
  int64_t elements = satAdd(numel(getQuery()), numel(getKey()));
  return satMul(3, elements / headDim, rotary);
}

void LigerRopeOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                  SmallVectorImpl<SavedTensor> &saved) {
  saved.push_back(SavedTensor::operand(2)); // cos
  saved.push_back(SavedTensor::operand(3)); // sin
}

// The backward rotates dq and dk in place when they arrive in q's and k's
// layout.
bool LigerRopeOp::isGradPassthrough(unsigned i) {
  return i == 0 ? getQueryGradInPlace() : i == 1 && getKeyGradInPlace();
}

std::optional<SmallVector<int64_t>>
LigerRopeOp::getResultStridesAt(unsigned index, ArrayRef<int64_t>) {
  // Either way the kernel's tensor is a contiguous [B, T, H, D], returned
  // transposed to [B, H, T, D].
  ArrayRef<int64_t> s = tensorOf(getResult(index)).getShape();
  return SmallVector<int64_t>{s[2] * s[1] * s[3], s[3], s[1] * s[3], 1};
}
