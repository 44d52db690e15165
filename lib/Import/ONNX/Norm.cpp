//===- Norm.cpp - normalization converters --------------------------------===//
//
// LayerNormalization exists from opset 17; earlier exports decompose it, and
// the vram-onnx-raise pass rebuilds nn.layer_norm from the decomposition.
//
//===----------------------------------------------------------------------===//

#include "ConverterTable.h"
#include "Importer.h"

using namespace mlir;
using namespace vram::onnx_import;
namespace nn = vram::nn;
using llvm::SmallVector;

static LogicalResult convertBatchNorm(OpBinder &op) {
  OpBuilder &b = op.builder();
  if (op.node.input_size() < 5)
    return op.error() << "expects 5 inputs (X, scale, B, mean, var)";
  SmallVector<Value, 5> v;
  for (int k = 0; k < 5; ++k) {
    auto t = op.tensor(k);
    if (failed(t))
      return failure();
    if (!isFloatTensor(*t))
      return op.error() << "input " << k << " is not a floating-point tensor";
    v.push_back(*t);
  }
  double eps = op.floatAttr("epsilon", 1e-5);
  // ONNX: running = running * momentum + batch * (1 - momentum);
  // PyTorch's momentum is the weight of the batch statistics.
  double momentum = roundToFloat(1.0 - op.floatAttr("momentum", 0.9));
  if (failed(op.makeResult<nn::BatchNormOp>(v[0], v[1], v[2], v[3], v[4],
                                            b.getF64FloatAttr(eps),
                                            b.getF64FloatAttr(momentum))))
    return failure();
  // Training-mode outputs 1 and 2 are the updated running statistics: the
  // buffers themselves (updated in place).
  for (int k = 1; k < op.numOutputs() && k < 3; ++k)
    op.setResult(k, v[k + 2]);
  return success();
}

static LogicalResult convertLayerNorm(OpBinder &op) {
  OpBuilder &b = op.builder();
  auto x = op.tensor(0);
  auto w = op.optionalTensor(1);
  auto bias = op.optionalTensor(2);
  if (failed(x) || failed(w) || failed(bias))
    return failure();
  if (op.outputUsed(1) || op.outputUsed(2))
    return op.error() << "the Mean and InvStdDev outputs are not supported";
  int64_t rank = cast<RankedTensorType>(x->getType()).getRank();
  int64_t axis = op.intAttr("axis", -1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return op.error() << "axis " << op.intAttr("axis", -1)
                      << " is out of range for rank " << rank;
  return op.makeResult<nn::LayerNormOp>(
      *x, *w, *bias, b.getI64IntegerAttr(rank - axis),
      b.getF64FloatAttr(op.floatAttr("epsilon", 1e-5)));
}

void vram::onnx_import::registerNormConverters(ConverterTable &table) {
  table.onOp("BatchNormalization", 1, convertBatchNorm);
  table.onOp("LayerNormalization", 17, convertLayerNorm);
}
