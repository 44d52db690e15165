//===- NNInterfaces.h - op semantics for the analyses -----------*- C++ -*-===//

#ifndef VRAM_DIALECT_NN_NNINTERFACES_H
#define VRAM_DIALECT_NN_NNINTERFACES_H

#include "vram/Dialect/NN/NNAttributes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace vram::nn {

/// The PyTorch release and device being modelled.
struct TorchTarget {
  TorchVersion version = TorchVersion::V2;
  Device device = Device::Cuda;
  CudnnWorkspace cudnnWorkspace = CudnnWorkspace::None;
};

/// One tensor that an op's backward node keeps alive.
struct SavedTensor {
  enum class Kind {
    Operand, ///< operand `index` of the forward op
    Result,  ///< result `index` of the forward op
    Extra,   ///< a new tensor of `type` the forward kernel allocates
  };
  Kind kind;
  unsigned index = 0;
  mlir::Type type = {};
  llvm::StringRef name = {};
  /// An extra tensor made before the op runs, from its operands only: the
  /// clone of `self` autograd keeps for an in-place op that overwrites it.
  bool beforeOp = false;
  /// A saved tensor whose storage the backward node returns as the gradient
  /// of operand `gradientOf`, allocating nothing: an extra tensor that a
  /// kernel computing its gradients in the forward (Liger's fused linear
  /// cross-entropy) allocates first (before its temporaries, hence
  /// `beforeOp`) and saves, or a saved operand the backward overwrites with
  /// the gradient (Liger's SwiGLU). -1: none.
  int gradientOf = -1;

  static SavedTensor operand(unsigned i) { return {Kind::Operand, i}; }
  static SavedTensor result(unsigned i) { return {Kind::Result, i}; }
  static SavedTensor extra(mlir::Type type, llvm::StringRef name) {
    return {Kind::Extra, 0, type, name};
  }
  static SavedTensor extraBeforeOp(mlir::Type type, llvm::StringRef name) {
    return {Kind::Extra, 0, type, name, /*beforeOp=*/true};
  }
  /// Operand `i`, which the backward overwrites with its own gradient.
  static SavedTensor operandOverwrittenByGradient(unsigned i) {
    return {Kind::Operand, i, {}, {}, false, static_cast<int>(i)};
  }
  static SavedTensor gradient(mlir::Type type, llvm::StringRef name,
                              unsigned operand) {
    return {Kind::Extra,
            0,
            type,
            name,
            /*beforeOp=*/true,
            static_cast<int>(operand)};
  }
};

/// Where an operand's gradient lies in the gradient of result 0 when the
/// backward hands out a view of it (AutodiffOpInterface::getGradSlice):
/// elements [start, start + size) of dimension `dim`.
struct GradSlice {
  int64_t dim, start, size;
};

/// An operand that an op's kernel views as `shape` (LayoutOpInterface).
struct OperandView {
  unsigned operand;
  llvm::SmallVector<int64_t> shape;
};

/// Row-major strides of `shape`, in elements.
llvm::SmallVector<int64_t> getContiguousStrides(llvm::ArrayRef<int64_t> shape);

/// Dense strides of `shape` that order the dimensions as `strides` does
/// (at::infer_dense_strides, as empty_like and TensorIterator lay a result
/// out like an input): the dimensions sorted by stride, outermost first, ties
/// and size-1 dimensions in their order.
llvm::SmallVector<int64_t> getDenseStridesLike(llvm::ArrayRef<int64_t> shape,
                                               llvm::ArrayRef<int64_t> strides);

/// The strides of a view of a tensor of `shape` and `strides` as `newShape`
/// (at::detail::computeStride), or nullopt when the strides cannot express
/// it and PyTorch's reshape copies.
std::optional<llvm::SmallVector<int64_t>>
getViewStrides(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> strides,
               llvm::ArrayRef<int64_t> newShape);

/// torch.result_type of two floating-point dtypes: the wider one; fp16 with
/// bf16 gives fp32.
mlir::Type promoteFloatTypes(mlir::Type a, mlir::Type b);

/// Marks ops whose CUDA kernels are cuBLAS GEMMs (linear, matmul, bmm): the
/// step then holds cuBLAS's workspaces (Device.h).
template <typename ConcreteType>
class CublasOpTrait
    : public mlir::OpTrait::TraitBase<ConcreteType, CublasOpTrait> {};

/// Hyperparameters of the lowered optimizer update (torch.optim's defaults
/// except the learning rate, which torch.optim.SGD requires).
struct LoweringOptions {
  double lr = 0.01;
  double momentum = 0.9;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  /// Adam's step count (1: the first step, state zero-initialised).
  int64_t step = 1;
  /// The PyTorch whose kernels' temporaries the lowering reproduces.
  TorchTarget target;
  /// A training step (batch norm uses batch statistics).
  bool training = true;
};

/// An `nn.saved` being lowered: the extra tensor `kind` of a forward op with
/// attributes `forwardAttrs`, computed from the lowered forward operands
/// and results.
struct SavedTensorLowering {
  llvm::StringRef kind;
  mlir::DictionaryAttr forwardAttrs;
  mlir::FunctionType forwardType;
  mlir::Type resultType;
  llvm::SmallVector<mlir::Value> operands;
  llvm::SmallVector<mlir::Value> results;
};

/// An `nn.backward` being lowered: the forward op's attributes and type,
/// what it saved (lowered values by role), the lowered incoming gradients
/// of its results and the operands whose gradients it returns.
struct BackwardLowering {
  /// The PyTorch whose backward kernels' temporaries the lowering
  /// reproduces (LoweringOptions::target).
  TorchTarget target;
  mlir::DictionaryAttr forwardAttrs;
  mlir::FunctionType forwardType;
  /// Saved operands / results / extras by index; null where not saved.
  llvm::SmallVector<mlir::Value> savedOperands, savedResults, savedExtras;
  /// The gradients of the forward results, in order; resultHasGrad says
  /// which results they are of (the others got none).
  llvm::SmallVector<mlir::Value> grads;
  llvm::SmallVector<bool> resultHasGrad;
  llvm::SmallVector<int64_t> gradOperands;

  bool needsGrad(unsigned operand) const {
    return llvm::is_contained(gradOperands, operand);
  }
};

/// Marks loss ops (cross_entropy, mse_loss).
template <typename ConcreteType>
class LossOpTrait : public mlir::OpTrait::TraitBase<ConcreteType, LossOpTrait> {
};

/// Marks ops whose result is a layer's KV cache (memory category kv_cache).
template <typename ConcreteType>
class KvCacheTrait
    : public mlir::OpTrait::TraitBase<ConcreteType, KvCacheTrait> {};

/// torch.autocast's op policies (aten/src/ATen/autocast_mode.cpp), one trait
/// per policy; an op with none runs in its inputs' dtype.
///
/// Autocast casts the op's floating-point operands to the autocast dtype
/// (fp16/bf16): conv, linear, matmul, bmm, attention.
template <typename ConcreteType>
class AutocastLowerPrecision
    : public mlir::OpTrait::TraitBase<ConcreteType, AutocastLowerPrecision> {};

/// Autocast casts the op's low-precision operands to fp32 (layer_norm,
/// group_norm, mse_loss, exp, pow, ...).
template <typename ConcreteType>
class AutocastFloat32
    : public mlir::OpTrait::TraitBase<ConcreteType, AutocastFloat32> {};

/// Autocast runs the op with `dtype=torch.float32` (softmax, log_softmax,
/// cross_entropy): fp32 results from low-precision inputs without a copy of
/// them. The op has an optional `dtype` type attribute.
template <typename ConcreteType>
class AutocastFloat32Output
    : public mlir::OpTrait::TraitBase<ConcreteType, AutocastFloat32Output> {
public:
  static constexpr llvm::StringLiteral kDtypeAttrName = "dtype";
};

/// Autocast casts the op's floating-point operands to the widest of their
/// types (cat, stack).
template <typename ConcreteType>
class AutocastPromote
    : public mlir::OpTrait::TraitBase<ConcreteType, AutocastPromote> {};

} // namespace vram::nn

#include "vram/Dialect/NN/NNInterfaces.h.inc"

#endif // VRAM_DIALECT_NN_NNINTERFACES_H
