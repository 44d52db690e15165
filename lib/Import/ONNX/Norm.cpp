//===- Norm.cpp - normalization converters --------------------------------===//
//
// LayerNormalization exists from opset 17; earlier exports decompose it, and
// the vram-onnx-raise pass rebuilds nn.layer_norm from the decomposition, as
// it rebuilds nn.group_norm from torch.onnx's InstanceNormalization form.
//
//===----------------------------------------------------------------------===//

#include "ConstTensor.h"
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

/// Whether every element of `t` is `value`.
static bool allEqual(const ConstTensor *t, double value) {
  if (!t || !t->numElements())
    return false;
  for (int64_t k = 0; k < t->numElements(); ++k)
    if (t->getF(k) != value)
      return false;
  return true;
}

/// InstanceNormalization: statistics per sample and channel, nn.group_norm
/// with one group per channel (the bytes F.instance_norm keeps without
/// affine parameters: the input and N * C means and inverse deviations,
/// measured with torch 1.13 and 2.15). torch.onnx writes GroupNorm as
/// Reshape [N, G, -1], InstanceNormalization with a constant scale of ones
/// and bias of zeros, Reshape back, Mul by the weight, Add the bias, which
/// vram-onnx-raise rebuilds into one nn.group_norm. A learned scale and
/// bias (InstanceNorm2d(affine=True): parameters, initializers) make an
/// nn.group_norm {instance}, which keeps the weight repeated per sample as
/// F.instance_norm does.
static LogicalResult convertInstanceNorm(OpBinder &op) {
  OpBuilder &b = op.builder();
  auto x = op.tensor(0);
  if (failed(x))
    return failure();
  auto xt = cast<RankedTensorType>(x->getType());
  if (xt.getRank() < 3 || !isFloatTensor(*x))
    return op.error() << "expects a floating-point [N, C, ...] input, got "
                      << xt;
  auto isParameter = [&](int idx) {
    Entry *e = op.inputEntry(idx);
    return e && e->kind == Entry::Init;
  };
  IntegerAttr groups = b.getI64IntegerAttr(xt.getDimSize(1));
  FloatAttr eps = b.getF64FloatAttr(op.floatAttr("epsilon", 1e-5));
  if (isParameter(1) && isParameter(2)) {
    auto scale = op.tensor(1), bias = op.tensor(2);
    if (failed(scale) || failed(bias))
      return failure();
    return op.makeResult<nn::GroupNormOp>(*x, *scale, *bias, groups, eps,
                                          b.getUnitAttr());
  }
  if (!allEqual(op.constInput(1), 1.0) || !allEqual(op.constInput(2), 0.0))
    return op.error() << "a scale and bias that are neither parameters "
                         "(InstanceNorm's affine ones) nor constant ones and "
                         "zeros (GroupNorm's export, InstanceNorm without "
                         "affine) are not modelled";
  return op.makeResult<nn::GroupNormOp>(*x, Value(), Value(), groups, eps);
}

void vram::onnx_import::registerNormConverters(ConverterTable &table) {
  table.onOp("BatchNormalization", 1, convertBatchNorm);
  table.onOp("LayerNormalization", 17, convertLayerNorm);
  table.onOp("InstanceNormalization", 6, convertInstanceNorm);
}
