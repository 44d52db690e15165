//===- NNOps.h - nn dialect ops ---------------------------------*- C++ -*-===//

#ifndef VRAM_DIALECT_NN_NNOPS_H
#define VRAM_DIALECT_NN_NNOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "vram/Dialect/NN/NNDialect.h"
#include "vram/Dialect/NN/NNInterfaces.h"

namespace vram::nn {
/// The state of the random generator that dropout draws from.
struct RandomGeneratorResource
    : public mlir::SideEffects::Resource::Base<RandomGeneratorResource> {
  llvm::StringRef getName() final { return "nn::RandomGenerator"; }
};

/// The effects of an op with an in-place form: a write when `inplace`.
void getInplaceEffects(bool inplace,
                       llvm::SmallVectorImpl<mlir::SideEffects::EffectInstance<
                           mlir::MemoryEffects::Effect>> &effects);
} // namespace vram::nn

#define GET_OP_CLASSES
#include "vram/Dialect/NN/NNOps.h.inc"

namespace vram::nn {
/// What AmaxBackward0 / AminBackward0 (MaxBackward1 with `evenly`) allocate
/// beside the input's gradient, for an input of `inputElements` and a
/// result of `resultElements` of `elementBytes` each on `device`
/// (NNOpsPooling.cpp says which tensors), one allocation each: the bool
/// mask of the input, the bool isnan masks evenly_distribute_backward keeps
/// on CUDA (input, then result), the int64 count, the quotient, the CPU's
/// float copy of the mask, and `scratch`: what the largest phase holds
/// beyond them (the int64 copy of the mask the sum makes and frees).
struct ExtremumBackwardBytes {
  int64_t mask = 0, nanMask = 0, nanValue = 0, count = 0, quotient = 0,
          maskCopy = 0, scratch = 0;
};
ExtremumBackwardBytes getExtremumBackwardBytes(int64_t inputElements,
                                               int64_t resultElements,
                                               int64_t elementBytes,
                                               bool evenly, Device device);

/// One persistent state tensor an optimizer keeps for a parameter.
struct OptimizerStateSlot {
  OptimizerStateKind kind;
  mlir::RankedTensorType type;
};

/// The state tensors `optimizer` keeps for a parameter of type `param`, in
/// the order nn.optimizer_step takes them (torch/optim/*.py `_init_group`,
/// bitsandbytes/optim/optimizer.py `init_state`).
void getOptimizerStateSlots(OptimizerKind optimizer,
                            mlir::RankedTensorType param,
                            llvm::SmallVectorImpl<OptimizerStateSlot> &slots);

/// One tensor an optimizer keeps once for all its parameters.
struct OptimizerBuffer {
  llvm::StringRef name;
  mlir::RankedTensorType type;
};

/// The tensors `optimizer` keeps once when it updates `params` (bitsandbytes'
/// 8-bit quantization maps, when some parameter has 8-bit state).
void getOptimizerBuffers(OptimizerKind optimizer,
                         llvm::ArrayRef<mlir::RankedTensorType> params,
                         llvm::SmallVectorImpl<OptimizerBuffer> &buffers);

/// The tensors bitsandbytes keeps for a weight of `shape` ([out, in])
/// quantized as `config` says. 4-bit (functional.py quantize_4bit): the
/// packed weight ([(numel + 1) / 2, 1] uint8), then its QuantState's absmax
/// (one per block: float32, or uint8 with double quantization) and code (16
/// float32), and with double quantization the offset (a float32 scalar),
/// state2.absmax (float32 per 256 blocks) and state2.code (256 float32).
/// int8 (Int8Params): CB ([out, in] int8) and SCB ([out] float32).
void getQuantizedWeightTypes(
    QuantizationAttr config, llvm::ArrayRef<int64_t> shape,
    llvm::SmallVectorImpl<mlir::RankedTensorType> &types);

/// Whether `optimizer` is bitsandbytes': one kernel per parameter and its
/// state in float32 or 8 bits, whatever the parameter's dtype.
bool isBitsAndBytesOptimizer(OptimizerKind optimizer);

/// Whether `optimizer` is one of bitsandbytes' paged optimizers.
bool isPagedOptimizer(OptimizerKind optimizer);

/// Whether a paged optimizer keeps the state `kind` of `param` in CUDA
/// unified memory on `target` (bitsandbytes 0.50: the moments of
/// parameters of 100,000 elements or more, on CUDA only).
bool isPagedOptimizerState(OptimizerKind optimizer, const TorchTarget &target,
                           mlir::RankedTensorType param,
                           OptimizerStateKind kind);

/// Whether `optimizer` comes in `impl`: torch.optim's foreach and fused
/// flags (Adafactor has no fused form); bitsandbytes' run per parameter.
bool hasOptimizerImpl(OptimizerKind optimizer, OptimizerImpl impl);
} // namespace vram::nn

#endif // VRAM_DIALECT_NN_NNOPS_H
