//===- ConverterTable.h - ATen op converters by target ----------*- C++ -*-===//
//
// One registration per ATen overload, as the archive names it without
// "torch.ops." (and the symbolic-int operators, "_operator.mul"):
//
//   table.on("aten.relu.default", [](NodeBinder &op) -> LogicalResult {
//     FailureOr<Value> x = op.tensor("self");
//     ...
//   });
//
// What each op keeps for backward is the nn op's (AutodiffOpInterface),
// following derivatives.yaml of the modelled release. The table is the single
// source of the supported op list (supportedOps(), the error for an op
// without a converter, docs/TorchExport.md).
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_LIB_IMPORT_TORCHEXPORT_CONVERTERTABLE_H
#define VRAM_LIB_IMPORT_TORCHEXPORT_CONVERTERTABLE_H

#include "mlir/Support/LogicalResult.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

namespace vram::torch_export {

class NodeBinder;

using ConverterFn = mlir::LogicalResult (*)(NodeBinder &);

class ConverterTable {
public:
  void on(llvm::StringRef target, ConverterFn fn);
  /// The converter for `target`, or null.
  ConverterFn lookup(llvm::StringRef target) const {
    return converters.lookup(target);
  }
  /// The targets with a converter, sorted.
  llvm::ArrayRef<llvm::StringRef> targets() const { return sortedTargets; }

  /// The table with every family's converters, built once.
  static const ConverterTable &get();

private:
  llvm::StringMap<ConverterFn> converters;
  llvm::SmallVector<llvm::StringRef> sortedTargets;
};

// The op families, one file each.
void registerLayerConverters(ConverterTable &table);
void registerElementwiseConverters(ConverterTable &table);
void registerShapeConverters(ConverterTable &table);

} // namespace vram::torch_export

#endif // VRAM_LIB_IMPORT_TORCHEXPORT_CONVERTERTABLE_H
