//===- TensorNames.h - the names of a model's tensors -----------*- C++ -*-===//

#ifndef VRAM_DIALECT_NN_TENSORNAMES_H
#define VRAM_DIALECT_NN_TENSORNAMES_H

#include "mlir/IR/Operation.h"

namespace vram::nn {
/// Each parameter and buffer of a model has a name of its own, as in
/// PyTorch's named_parameters() and named_buffers(): freeze, LoRA and
/// checkpoint patterns, optimizer state and reports all key on it. Fails
/// with an error at the second of two tensors with the same name.
mlir::LogicalResult verifyUniqueTensorNames(mlir::Operation *func);
/// The same over `ops`, every op of a model or step in walk order.
mlir::LogicalResult
verifyUniqueTensorNames(llvm::ArrayRef<mlir::Operation *> ops);
} // namespace vram::nn

#endif // VRAM_DIALECT_NN_TENSORNAMES_H
