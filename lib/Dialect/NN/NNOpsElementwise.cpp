//===- NNOpsElementwise.cpp - activations, binary ops, casts --------------===//
//
// Ops that map elements one to one: activations, softmax and log_softmax,
// dropout, add/sub/mul/div with broadcasting, masked_fill, cast, and the
// ONNX importer's erf and clamp. Their in-place forms declare a write.
//
//===----------------------------------------------------------------------===//

#include "NNOpsDetail.h"

#include "vram/Dialect/NN/NNOps.h"
#include "vram/Dialect/NN/TorchSemantics.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <cmath>

using namespace mlir;
using namespace vram::nn;
using namespace vram::nn::detail;

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// Activations: under `full`, one FLOP per element; nothing under the other
// conventions (fvcore ignores them, flop_counter counts only mm/conv/sdpa).
#define NN_ELEMENTWISE_FLOPS(OP, PER_ELEMENT)                                  \
  int64_t OP::getFlops(FlopConvention c, bool) {                               \
    return c == Conv::Full ? (PER_ELEMENT)*numel(getInput()) : 0;              \
  }

NN_ELEMENTWISE_FLOPS(ReluOp, 1)
NN_ELEMENTWISE_FLOPS(Relu6Op, 1)
NN_ELEMENTWISE_FLOPS(LeakyReluOp, 1)
NN_ELEMENTWISE_FLOPS(EluOp, 1)
NN_ELEMENTWISE_FLOPS(SoftplusOp, 1)
NN_ELEMENTWISE_FLOPS(MishOp, 1)
NN_ELEMENTWISE_FLOPS(SiluOp, 1)
NN_ELEMENTWISE_FLOPS(HardswishOp, 1)
NN_ELEMENTWISE_FLOPS(HardsigmoidOp, 1)
NN_ELEMENTWISE_FLOPS(GeluOp, 1)
NN_ELEMENTWISE_FLOPS(SigmoidOp, 1)
NN_ELEMENTWISE_FLOPS(TanhOp, 1)
NN_ELEMENTWISE_FLOPS(PowOp, 1)
NN_ELEMENTWISE_FLOPS(SqrtOp, 1)
NN_ELEMENTWISE_FLOPS(RsqrtOp, 1)
NN_ELEMENTWISE_FLOPS(ReciprocalOp, 1)
NN_ELEMENTWISE_FLOPS(ExpOp, 1)
NN_ELEMENTWISE_FLOPS(NegOp, 1)
NN_ELEMENTWISE_FLOPS(SoftmaxOp, 3)
NN_ELEMENTWISE_FLOPS(LogSoftmaxOp, 3)
#undef NN_ELEMENTWISE_FLOPS

void ReluOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                             SmallVectorImpl<SavedTensor> &saved) {
  // threshold_backward(grad, result): relu_ saves the mutated tensor itself.
  saved.push_back(SavedTensor::result(0));
}

/// An op whose backward formula uses its input `self`. Its in-place form has
/// no formula of its own (unlike relu_), so autograd clones the input before
/// the op overwrites it and keeps the clone: new memory of the input's size
/// (measured for relu6_ = hardtanh_ with torch 1.13; reference/pytorch.md).
template <typename OpTy>
static void saveSelf(OpTy op, SmallVectorImpl<SavedTensor> &saved) {
  if (op.getInplace())
    saved.push_back(
        SavedTensor::extraBeforeOp(op.getInput().getType(), "self_clone"));
  else
    saved.push_back(SavedTensor::operand(0));
}

void Relu6Op::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                              SmallVectorImpl<SavedTensor> &saved) {
  // hardtanh_backward(grad, self, 0, 6).
  saveSelf(*this, saved);
}

void SiluOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                             SmallVectorImpl<SavedTensor> &saved) {
  saveSelf(*this, saved);
}

void HardswishOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                  SmallVectorImpl<SavedTensor> &saved) {
  saveSelf(*this, saved);
}

void HardsigmoidOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                    SmallVectorImpl<SavedTensor> &saved) {
  saveSelf(*this, saved);
}

/// leaky_relu and elu: leaky_relu_backward / elu_backward take
/// `self_or_result`: the input, or the result of the in-place form (which
/// shares the input's storage, so nothing new is kept).
template <typename OpTy>
static void saveSelfOrResult(OpTy op, SmallVectorImpl<SavedTensor> &saved) {
  saved.push_back(op.getInplace() ? SavedTensor::result(0)
                                  : SavedTensor::operand(0));
}

void LeakyReluOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                  SmallVectorImpl<SavedTensor> &saved) {
  saveSelfOrResult(*this, saved);
}

void EluOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                            SmallVectorImpl<SavedTensor> &saved) {
  saveSelfOrResult(*this, saved);
}

void SoftplusOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                 SmallVectorImpl<SavedTensor> &saved) {
  saved.push_back(SavedTensor::operand(0));
}

void MishOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                             SmallVectorImpl<SavedTensor> &saved) {
  saveSelf(*this, saved);
}

/// A finite coefficient; `nonzero` for one the op divides by.
static LogicalResult verifyCoefficient(Operation *op, StringRef name,
                                       double value, bool nonzero = false) {
  if (!std::isfinite(value))
    return op->emitOpError() << name << " must be finite, got " << value;
  if (nonzero && value == 0)
    return op->emitOpError() << name << " must not be zero";
  return success();
}

// The in-place forms' backward reads the result, which cannot be inverted
// for a negative slope or alpha: PyTorch refuses them in backward.
LogicalResult LeakyReluOp::verify() {
  double slope = getNegativeSlope().convertToDouble();
  if (failed(verifyCoefficient(*this, "negative_slope", slope)))
    return failure();
  if (getInplace() && slope < 0)
    return emitOpError("in-place with a negative slope ")
           << slope << " has no backward in PyTorch";
  return success();
}

//===----------------------------------------------------------------------===//
// nn.prelu
//===----------------------------------------------------------------------===//

// Checked where the type is inferred, so that the importers' inferred
// creation reports the problem instead of building an invalid op. PyTorch's
// prelu takes a 0-d weight too; the front ends view it as [1].
LogicalResult PreluOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  auto weight = cast<RankedTensorType>(adaptor.getWeight().getType());
  if (input.getRank() < 1)
    return emitOptionalError(loc, "expects an input of rank >= 1");
  if (weight.getRank() != 1)
    return emitOptionalError(loc, "weight must be 1-D, got ",
                             shapeStr(weight.getShape()));
  // Dimension 1 holds the channels; a rank-1 input has one channel.
  int64_t channels = input.getRank() >= 2 ? input.getDimSize(1) : 1;
  int64_t n = weight.getDimSize(0);
  if (n != 1 && n != channels) {
    std::string per =
        channels == 1 ? "" : " or [" + std::to_string(channels) + "]";
    return emitOptionalError(loc, "weight must be [1]", per,
                             " (one slope, or one per channel of dimension "
                             "1), got ",
                             shapeStr(weight.getShape()));
  }
  if (weight.getElementType() != input.getElementType())
    return emitOptionalError(
        loc, "weight element type ", weight.getElementType(),
        " does not match input element type ", input.getElementType());
  results.push_back(input);
  return success();
}

int64_t PreluOp::getFlops(FlopConvention c, bool) {
  return c == Conv::Full ? numel(getInput()) : 0;
}

/// Whether the weight's gradient, computed at the input's shape, needs the
/// engine's sum into the weight's shape: not when the view has the input's
/// elements ([1, C] input, or one element).
static bool preluReducesWeightGrad(PreluOp op) {
  return numel(op.getWeight()) != numel(op.getInput());
}

// Under `full`: one per element for each of the two gradients the kernel
// computes (both, whatever needs one), and one per element for the sum of
// the weight's gradient into its shape.
int64_t PreluOp::getBackwardFlops(FlopConvention c, ArrayRef<bool> needs) {
  if (c != Conv::Full)
    return 0;
  int64_t n = numel(getInput());
  return satMul(n, needs[1] && preluReducesWeightGrad(*this) ? 3 : 2);
}

void PreluOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                              SmallVectorImpl<SavedTensor> &saved) {
  // derivatives.yaml `_prelu_kernel(self, weight)`: `self, weight:
  // _prelu_kernel_backward(grad, self, weight)` keeps both. The weight it
  // keeps is F.prelu's [1, C, 1, ...] view of the parameter (measured with
  // torch 2.15: _saved_weight shares the parameter's storage).
  saved.push_back(SavedTensor::operand(0));
  saved.push_back(SavedTensor::operand(1));
}

// _prelu_kernel_backward returns both gradients at the input's shape
// whatever needs one: a gradient nothing needs is freed when the node ends,
// and the weight's is summed into its shape by the engine (sum_to) while
// the input's gradient lives (measured with torch 2.15 on the CPU:
// grad_self and grad_weight, [2, 3, 4, 4] each, then the [3] sum). When
// the input needs none, PyTorch frees its gradient before that sum; here
// both stay for the node (the weight's gradient bytes more at that time).
void PreluOp::getBackwardWorkspace(const TorchTarget &, ArrayRef<bool> needs,
                                   SmallVectorImpl<int64_t> &sizes) {
  int64_t bytes = tensorBytes(getInput());
  if (!needs[0])
    sizes.push_back(bytes);
  if (!needs[1] || preluReducesWeightGrad(*this))
    sizes.push_back(bytes);
}

LogicalResult EluOp::verify() {
  double alpha = getAlpha().convertToDouble();
  if (failed(verifyCoefficient(*this, "alpha", alpha)) ||
      failed(verifyCoefficient(*this, "scale", getScale().convertToDouble())) ||
      failed(verifyCoefficient(*this, "input_scale",
                               getInputScale().convertToDouble())))
    return failure();
  if (getInplace() && alpha < 0)
    return emitOpError("in-place with a negative alpha ")
           << alpha << " has no backward in PyTorch";
  return success();
}

LogicalResult SoftplusOp::verify() {
  return failure(
      failed(verifyCoefficient(*this, "beta", getBeta().convertToDouble(),
                               /*nonzero=*/true)) ||
      failed(verifyCoefficient(*this, "threshold",
                               getThreshold().convertToDouble())));
}

void PowOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                            SmallVectorImpl<SavedTensor> &saved) {
  saved.push_back(SavedTensor::operand(0));
}

// pow_backward returns `grad * (e * self.pow(e - 1))`: self.pow(e - 1) and
// its product with e are C++ temporaries, both alive when the gradient is
// allocated (measured with torch 2.15: the final RMSNorm's backward of a
// LLaMA under ZeRO-2 in bf16, benchmarks/accuracy/zero.py). An exponent of
// 0 returns zeros_like(self) with no temporaries.
void PowOp::getBackwardWorkspace(const TorchTarget &, ArrayRef<bool> needs,
                                 SmallVectorImpl<int64_t> &sizes) {
  if (needs[0] && !getExponent().isZero())
    sizes.append(2, tensorBytes(getInput()));
}

void NegOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                            SmallVectorImpl<SavedTensor> &) {}

void GeluOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                             SmallVectorImpl<SavedTensor> &saved) {
  saved.push_back(SavedTensor::operand(0));
}

void SigmoidOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                SmallVectorImpl<SavedTensor> &saved) {
  saved.push_back(SavedTensor::result(0));
}

void TanhOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                             SmallVectorImpl<SavedTensor> &saved) {
  saved.push_back(SavedTensor::result(0));
}

static LogicalResult verifySoftmaxDim(Operation *op, int64_t dim) {
  int64_t rank = cast<RankedTensorType>(op->getOperand(0).getType()).getRank();
  if (normalizeDim(dim, rank) < 0)
    return op->emitOpError("dim ")
           << dim << " is out of range for rank " << rank;
  return success();
}

LogicalResult SoftmaxOp::verify() { return verifySoftmaxDim(*this, getDim()); }
LogicalResult LogSoftmaxOp::verify() {
  return verifySoftmaxDim(*this, getDim());
}

/// softmax and log_softmax: the input's shape, in `dtype` when given.
template <typename Adaptor>
static LogicalResult inferSoftmaxLike(std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &results) {
  Type input = adaptor.getInput().getType();
  return inferWithDtype(loc, input, adaptor.getDtypeAttr(),
                        cast<RankedTensorType>(input).getShape(), results);
}

LogicalResult SoftmaxOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  return inferSoftmaxLike(loc, adaptor, results);
}

LogicalResult LogSoftmaxOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &results) {
  return inferSoftmaxLike(loc, adaptor, results);
}

void SoftmaxOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                SmallVectorImpl<SavedTensor> &saved) {
  saved.push_back(SavedTensor::result(0));
}

void LogSoftmaxOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                   SmallVectorImpl<SavedTensor> &saved) {
  saved.push_back(SavedTensor::result(0));
}

LogicalResult DropoutOp::verify() {
  // Written so that NaN fails too.
  if (!(getP().convertToDouble() >= 0 && getP().convertToDouble() <= 1))
    return emitOpError("p must be in [0, 1], got ") << getP().convertToDouble();
  return success();
}

Value DropoutOp::getAliasedOperand(unsigned) {
  // p = 0 is the identity: the output is the input.
  return (getInplace() || getP().convertToDouble() == 0) ? getInput() : Value();
}

bool DropoutOp::isGradPassthrough(unsigned) {
  return getP().convertToDouble() == 0;
}

int64_t DropoutOp::getFlops(FlopConvention c, bool training) {
  return (c == Conv::Full && training && getP().convertToDouble() > 0)
             ? numel(getInput())
             : 0;
}

void DropoutOp::getSavedTensors(const TorchTarget &target, ArrayRef<bool>,
                                SmallVectorImpl<SavedTensor> &saved) {
  if (getP().convertToDouble() == 0 || getP().convertToDouble() == 1)
    return;
  auto input = tensorOf(getInput());
  saved.push_back(SavedTensor::extra(
      RankedTensorType::get(
          input.getShape(),
          getDropoutMaskElementType(target, input.getElementType())),
      "mask"));
}

void DropoutOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  // Drawing the mask advances the generator's state.
  effects.emplace_back(MemoryEffects::Read::get(),
                       RandomGeneratorResource::get());
  effects.emplace_back(MemoryEffects::Write::get(),
                       RandomGeneratorResource::get());
  getInplaceEffects(getInplace(), effects);
}

template <typename BinaryOp>
static LogicalResult inferBinary(std::optional<Location> loc,
                                 typename BinaryOp::Adaptor adaptor,
                                 SmallVectorImpl<Type> &results) {
  auto lhs = cast<RankedTensorType>(adaptor.getLhs().getType());
  auto rhs = cast<RankedTensorType>(adaptor.getRhs().getType());
  // torch.result_type: a zero-dim tensor (a Python scalar, `x * scaling`)
  // does not widen a dimensioned tensor of the same category.
  Type et = promoteFloatTypes(lhs.getElementType(), rhs.getElementType());
  if ((lhs.getRank() == 0) != (rhs.getRank() == 0) &&
      isa<FloatType>(lhs.getElementType()) &&
      isa<FloatType>(rhs.getElementType()))
    et = lhs.getRank() ? lhs.getElementType() : rhs.getElementType();
  auto shape = broadcastShapes(lhs.getShape(), rhs.getShape());
  if (failed(shape))
    return emitOptionalError(
        loc, "shapes do not broadcast: ", shapeStr(lhs.getShape()), " vs ",
        shapeStr(rhs.getShape()));
  results.push_back(RankedTensorType::get(*shape, et));
  return success();
}

template <typename BinaryOp> static LogicalResult verifyBinary(BinaryOp op) {
  // `a += b` keeps a's dtype, so b must not be wider (PyTorch: "result type
  // can't be cast to the desired output type").
  if (op.getInplace() && tensorOf(op.getOutput()) != tensorOf(op.getLhs()))
    return op.emitOpError(
               "in place needs the result to have the lhs type, got ")
           << op.getOutput().getType() << " for lhs " << op.getLhs().getType();
  return success();
}

/// TensorIterator lays a new result out as its operands are laid out: as
/// operand 0 when it has the result's shape (rotary's `q * cos` of a
/// transposed q is transposed too). A broadcast operand 0 leaves the order
/// to the others, which is not modelled: contiguous. `a op= b` writes a.
static std::optional<SmallVector<int64_t>>
binaryResultStrides(Operation *op, ArrayRef<int64_t> lhsStrides) {
  auto out = tensorOf(op->getResult(0));
  if (tensorOf(op->getOperand(0)).getShape() != out.getShape())
    return std::nullopt;
  if (op->hasAttr("inplace"))
    return SmallVector<int64_t>(lhsStrides);
  return getDenseStridesLike(out.getShape(), lhsStrides);
}

/// On the CPU, TensorIterator copies an operand of another dtype into a
/// temporary of the common dtype before the loop (CUDA's kernels cast as
/// they load). Measured, torch 2.15 CPU: bf16 [2, 128, 256] + f32 of that
/// shape peaks at 524,288 B, the result and the bf16 operand as f32 (peft's
/// `result + lora_B(...) * scaling` of a bf16 base and fp32 adapters). A
/// 0-d operand (a scalar) is read as it is.
static int64_t binaryCastBytes(Operation *op, const TorchTarget &target) {
  if (target.device != Device::Cpu)
    return 0;
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  auto lhsType = tensorOf(lhs), rhsType = tensorOf(rhs);
  if (lhsType.getRank() == 0 || rhsType.getRank() == 0)
    return 0;
  Type common =
      promoteFloatTypes(lhsType.getElementType(), rhsType.getElementType());
  int64_t element = llvm::divideCeil(common.getIntOrFloatBitWidth(), 8);
  int64_t bytes = 0;
  for (RankedTensorType type : {lhsType, rhsType})
    if (type.getElementType() != common)
      bytes = satAdd(bytes, satMul(numel(type), element));
  return bytes;
}

#define NN_BINARY_OP(OP)                                                       \
  int64_t OP::getWorkspaceBytes(const TorchTarget &target) {                   \
    return binaryCastBytes(*this, target);                                     \
  }                                                                            \
  std::optional<SmallVector<int64_t>> OP::getResultStrides(                    \
      ArrayRef<int64_t> lhsStrides) {                                          \
    return binaryResultStrides(*this, lhsStrides);                             \
  }                                                                            \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> loc, Adaptor adaptor,             \
      SmallVectorImpl<Type> &results) {                                        \
    return inferBinary<OP>(loc, adaptor, results);                             \
  }                                                                            \
  LogicalResult OP::verify() { return verifyBinary(*this); }                   \
  int64_t OP::getFlops(FlopConvention c, bool) {                               \
    return c == Conv::Full ? numel(getOutput()) : 0;                           \
  }

NN_BINARY_OP(AddOp)
NN_BINARY_OP(SubOp)
NN_BINARY_OP(MulOp)
NN_BINARY_OP(DivOp)
#undef NN_BINARY_OP

// silu and the product: one FLOP per element each under `full`.
int64_t LigerSwigluOp::getFlops(FlopConvention c, bool) {
  return c == Conv::Full ? satMul(numel(getOutput()), 2) : 0;
}

void LigerSwigluOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                    SmallVectorImpl<SavedTensor> &saved) {
  // save_for_backward(a, b); swiglu_backward writes da and db over them.
  saved.push_back(SavedTensor::operandOverwrittenByGradient(0));
  saved.push_back(SavedTensor::operandOverwrittenByGradient(1));
}

// add/sub hand the output gradient itself to an operand of the output's
// shape; a broadcast operand gets a reduced (new) tensor.
static bool sameShapeAsOutput(Value operand, Value output) {
  return tensorOf(operand).getShape() == tensorOf(output).getShape();
}

bool AddOp::isGradPassthrough(unsigned i) {
  return sameShapeAsOutput(getOperand(i), getOutput());
}
bool SubOp::isGradPassthrough(unsigned i) {
  return i == 0 && sameShapeAsOutput(getLhs(), getOutput());
}
bool MulOp::isGradPassthrough(unsigned) { return false; }
bool DivOp::isGradPassthrough(unsigned) { return false; }

// AddBackward0 hands `grad` itself to a broadcast operand; the engine then
// reduces it (sum_to) into the operand's gradient: nothing transient.
void AddOp::getBackwardWorkspace(const TorchTarget &, ArrayRef<bool>,
                                 SmallVectorImpl<int64_t> &) {}
void SubOp::getBackwardWorkspace(const TorchTarget &, ArrayRef<bool>,
                                 SmallVectorImpl<int64_t> &) {}
// MulBackward0 computes a broadcast operand's gradient at the output's
// shape (grad * other) and the engine reduces it to the operand's shape
// afterwards (sum_to): each such operand has an output-sized tensor alive
// while the node runs (measured with torch 2.15: Qwen2-MoE's
// sigmoid(shared_expert_gate(x)) [T, 1] * shared_expert(x) [T, H] puts a
// [T, H] tensor at the step's peak, benchmarks/accuracy/tp.py).
void MulOp::getBackwardWorkspace(const TorchTarget &, ArrayRef<bool> needs,
                                 SmallVectorImpl<int64_t> &sizes) {
  for (unsigned i = 0; i < 2; ++i)
    if (needs[i] && !sameShapeAsOutput(getOperand(i), getOutput()))
      sizes.push_back(tensorBytes(getOutput()));
}
// DivBackward0's reductions are not measured yet (the router's [T, k] / [T,
// 1] renormalization is too small to reach a peak).
void DivOp::getBackwardWorkspace(const TorchTarget &, ArrayRef<bool>,
                                 SmallVectorImpl<int64_t> &) {}

void AddOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                            SmallVectorImpl<SavedTensor> &) {}
void SubOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                            SmallVectorImpl<SavedTensor> &) {}

/// The lhs `self` for a formula that needs it: `a *= b` and `a /= b`
/// overwrite it, so autograd keeps a clone made before the op (measured
/// with torch 2.15: the router's `top_k /= top_k.sum(-1, keepdim=True)`
/// keeps a [T, k] CloneBackward0 tensor).
template <typename OpTy> static SavedTensor savedLhs(OpTy op) {
  if (op.getInplace())
    return SavedTensor::extraBeforeOp(op.getLhs().getType(), "self_clone");
  return SavedTensor::operand(0);
}

void MulOp::getSavedTensors(const TorchTarget &, ArrayRef<bool> needs,
                            SmallVectorImpl<SavedTensor> &saved) {
  // d(a*b)/da = b, d(a*b)/db = a.
  if (needs[0])
    saved.push_back(SavedTensor::operand(1));
  if (needs[1])
    saved.push_back(savedLhs(*this));
}

void DivOp::getSavedTensors(const TorchTarget &, ArrayRef<bool> needs,
                            SmallVectorImpl<SavedTensor> &saved) {
  // d(a/b)/da = 1/b; d(a/b)/db = -a/b^2.
  if (needs[1])
    saved.push_back(savedLhs(*this));
  if (needs[0] || needs[1])
    saved.push_back(SavedTensor::operand(1));
}

void vram::nn::getInplaceEffects(
    bool inplace,
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  if (inplace)
    effects.emplace_back(MemoryEffects::Write::get());
}

#define DEFINE_INPLACE_EFFECTS(OpTy)                                           \
  void OpTy::getEffects(                                                       \
      SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>      \
          &effects) {                                                          \
    getInplaceEffects(getInplace(), effects);                                  \
  }
DEFINE_INPLACE_EFFECTS(AddOp)
DEFINE_INPLACE_EFFECTS(SubOp)
DEFINE_INPLACE_EFFECTS(MulOp)
DEFINE_INPLACE_EFFECTS(DivOp)
#undef DEFINE_INPLACE_EFFECTS

//===----------------------------------------------------------------------===//
// nn.masked_fill
//===----------------------------------------------------------------------===//

LogicalResult MaskedFillOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &results) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  auto mask = cast<RankedTensorType>(adaptor.getMask().getType());
  if (!mask.getElementType().isInteger(1))
    return emitOptionalError(loc, "mask must be a tensor of i1, got ", mask);
  auto shape = broadcastShapes(input.getShape(), mask.getShape());
  if (failed(shape) || ArrayRef<int64_t>(*shape) != input.getShape())
    return emitOptionalError(loc, "mask ", shapeStr(mask.getShape()),
                             " does not broadcast to the input ",
                             shapeStr(input.getShape()));
  results.push_back(input);
  return success();
}

LogicalResult MaskedFillOp::verify() {
  // torch.where makes a new tensor; only masked_fill_ fills in place.
  if (getInplace() && getWhere())
    return emitOpError("is either in place (masked_fill_) or a where, not "
                       "both");
  return success();
}

int64_t MaskedFillOp::getFlops(FlopConvention c, bool) {
  return c == Conv::Full ? numel(getOutput()) : 0;
}

int64_t MaskedFillOp::getBackwardFlops(FlopConvention c, ArrayRef<bool>) {
  return c == Conv::Full ? numel(getOutput()) : 0;
}

void MaskedFillOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                   SmallVectorImpl<SavedTensor> &saved) {
  // grad.masked_fill(mask, 0) needs only the mask.
  saved.push_back(SavedTensor::operand(1));
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::verify() {
  // vram-precision converts a model-dtype constant's one value.
  if (getModelDtype()) {
    auto dense = dyn_cast<DenseElementsAttr>(getValue());
    if (!dense || !dense.isSplat() || !isa<FloatType>(dense.getElementType()))
      return emitOpError("model_dtype needs a floating-point splat value");
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Casts
//===----------------------------------------------------------------------===//

LogicalResult CastOp::verify() {
  auto in = tensorOf(getInput()), out = tensorOf(getOutput());
  if (in.getShape() != out.getShape())
    return emitOpError("changes the shape from ")
           << shapeStr(in.getShape()) << " to " << shapeStr(out.getShape());
  if (in.getElementType() == out.getElementType())
    return emitOpError("casts to its own element type ") << in.getElementType();
  return success();
}

int64_t CastOp::getFlops(FlopConvention c, bool) {
  return c == Conv::Full ? numel(getInput()) : 0;
}

void CastOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                             SmallVectorImpl<SavedTensor> &) {
  // ToCopyBackward keeps only the input's dtype and device.
}

//===----------------------------------------------------------------------===//
// Erf, Clamp (the ONNX importer's 1:1 forms of Erf and Clip)
//===----------------------------------------------------------------------===//

// One FLOP per element under `full`, like the other activations.
int64_t ErfOp::getFlops(FlopConvention c, bool) {
  return c == Conv::Full ? numel(getInput()) : 0;
}

void ErfOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                            SmallVectorImpl<SavedTensor> &saved) {
  // derivatives.yaml: erf: 2.0 / sqrt(M_PI) * exp(-(self.pow(2))) * grad.
  saved.push_back(SavedTensor::operand(0));
}

int64_t ClampOp::getFlops(FlopConvention c, bool) {
  return c == Conv::Full ? numel(getInput()) : 0;
}

void ClampOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                              SmallVectorImpl<SavedTensor> &saved) {
  // derivatives.yaml: clamp: clamp_backward(grad, self, min, max).
  saved.push_back(SavedTensor::operand(0));
}

LogicalResult ClampOp::verify() {
  std::optional<llvm::APFloat> lo = getMin(), hi = getMax();
  if (!lo && !hi)
    return emitOpError("needs a min or a max bound");
  if (lo && hi && lo->convertToDouble() > hi->convertToDouble())
    return emitOpError("min ")
           << lo->convertToDouble() << " is greater than max "
           << hi->convertToDouble();
  return success();
}
