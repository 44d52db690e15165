//===- ConverterTable.h - ONNX op converters by op type and opset -*- C++
//-*-===//
//
// One registration per ONNX op type and opset, in the spirit of torch-mlir's
// `patterns.onOp("HardSigmoid", 6, ...)`:
//
//   table.onOp("Relu", 1, [](OpBinder &op) -> LogicalResult {
//     auto x = op.tensor(0);
//     ...
//   });
//
// A converter registered with `sinceVersion` handles nodes of models whose
// default-domain opset is at least that version, until a converter with a
// later `sinceVersion` takes over. Models are converted to kTargetOpset first
// (libonnx's version converter), so most ops register once; older registrations
// only serve models the version converter cannot convert.
//
// The table is the single source of the supported op list (supportedOps(),
// the error for unknown ops, docs/ONNX.md and the fuzzer's dictionary).
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_LIB_IMPORT_ONNX_CONVERTERTABLE_H
#define VRAM_LIB_IMPORT_ONNX_CONVERTERTABLE_H

#include "mlir/Support/LogicalResult.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <functional>

namespace vram::onnx_import {

class OpBinder;

using ConverterFn = std::function<mlir::LogicalResult(OpBinder &)>;

class ConverterTable {
public:
  /// Registers `fn` for `opType` from opset `sinceVersion` on.
  void onOp(llvm::StringRef opType, int64_t sinceVersion, ConverterFn fn);

  /// The converter for `opType` at `opset`, or null when there is none.
  const ConverterFn *lookup(llvm::StringRef opType, int64_t opset) const;
  /// The first opset `opType` has a converter for, or 0 when it has none.
  int64_t firstVersion(llvm::StringRef opType) const;

  /// The op types with a converter, sorted.
  llvm::ArrayRef<llvm::StringRef> opTypes() const { return sortedOpTypes; }

  /// The table with every family's converters, built once.
  static const ConverterTable &get();

private:
  struct Versioned {
    int64_t sinceVersion;
    ConverterFn fn;
  };
  llvm::StringMap<llvm::SmallVector<Versioned, 1>> converters;
  llvm::SmallVector<llvm::StringRef> sortedOpTypes;
};

// The op families, one file each.
void registerConvPoolConverters(ConverterTable &table);
void registerNormConverters(ConverterTable &table);
void registerMatMulConverters(ConverterTable &table);
void registerElementwiseConverters(ConverterTable &table);
void registerShapeConverters(ConverterTable &table);
void registerReductionConverters(ConverterTable &table);
void registerRecurrentConverters(ConverterTable &table);

} // namespace vram::onnx_import

#endif // VRAM_LIB_IMPORT_ONNX_CONVERTERTABLE_H
