//===- Reduction.cpp - reduction converters -------------------------------===//

#include "ConverterTable.h"
#include "Importer.h"

using namespace mlir;
using namespace vram::onnx_import;
namespace nn = vram::nn;

/// ReduceMean: axes from the attribute, or from input 1 from opset 18 on
/// (models newer than libonnx's version converter keep their opset).
static LogicalResult convertReduceMean(OpBinder &op) {
  OpBuilder &b = op.builder();
  auto x = op.tensor(0);
  if (failed(x))
    return failure();
  if (!isFloatTensor(*x))
    return op.error() << "expects a floating-point tensor";
  int64_t rank = cast<RankedTensorType>(x->getType()).getRank();
  auto axesOr = op.intsInputOrAttr(1, "axes");
  if (failed(axesOr))
    return failure();
  std::vector<int64_t> axes = axesOr->value_or(std::vector<int64_t>{});
  if (axes.empty()) {
    if (op.intAttr("noop_with_empty_axes", 0)) {
      op.setResult(0, *x);
      return success();
    }
    for (int64_t k = 0; k < rank; ++k)
      axes.push_back(k);
  }
  for (int64_t &ax : axes) {
    if (ax < -rank || ax >= rank)
      return op.error() << "axis " << ax << " is out of range for rank "
                        << rank;
    if (ax < 0)
      ax += rank;
  }
  llvm::sort(axes);
  bool keep = op.intAttr("keepdims", 1);
  return op.makeResult<nn::MeanOp>(*x, b.getDenseI64ArrayAttr(axes),
                                   keep ? b.getUnitAttr() : UnitAttr());
}

void vram::onnx_import::registerReductionConverters(ConverterTable &table) {
  table.onOp("ReduceMean", 1, convertReduceMean);
}
