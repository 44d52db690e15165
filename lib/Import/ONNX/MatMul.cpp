//===- MatMul.cpp - MatMul and Gemm converters ----------------------------===//
//
// Gemm with a [out, in] (transB) or [in, out] weight initializer is
// nn.Linear, and imports as nn.linear directly. MatMul imports as nn.matmul;
// the vram-onnx-raise pass turns [Transpose +] MatMul + Add of initializers
// (how torch.onnx exports nn.Linear on >2-D inputs) back into nn.linear.
//
//===----------------------------------------------------------------------===//

#include "ConverterTable.h"
#include "Importer.h"

using namespace mlir;
using namespace vram::onnx_import;
namespace nn = vram::nn;
using llvm::SmallVector;

static LogicalResult convertMatMul(OpBinder &op) {
  if (!op.hasInput(0) || !op.hasInput(1))
    return op.error() << "expects two inputs";
  auto x = op.tensor(0);
  auto y = op.tensor(1);
  if (failed(x) || failed(y))
    return failure();
  auto lt = cast<RankedTensorType>(x->getType()),
       rt = cast<RankedTensorType>(y->getType());
  if (lt.getRank() < 2 || rt.getRank() < 2)
    return op.error() << "MatMul of 1-D tensors is not supported";
  // torch.matmul's copies of strided operands it folds for bmm are
  // vram-insert-contiguous's (LayoutOpInterface of nn.matmul).
  return op.makeResult<nn::MatmulOp>(*x, *y);
}

/// The 2-D float parameter initializer behind input `idx` (through the
/// Identity a deduplicated parameter gets), or null.
static const onnx::TensorProto *weightInit(OpBinder &op, int idx) {
  Entry *e = op.inputEntry(idx);
  if (!e || e->kind != Entry::Init)
    return nullptr;
  const onnx::TensorProto &t = *e->init;
  if (t.dims_size() != 2 || !isFloatDType(t.data_type()) ||
      op.im.isBufferInit(t.name(), t))
    return nullptr;
  return &t;
}

static LogicalResult convertGemm(OpBinder &op) {
  if (op.intAttr("transA", 0))
    return op.error() << "transA=1 is not supported";
  if (op.floatAttr("alpha", 1.0) != 1.0 || op.floatAttr("beta", 1.0) != 1.0)
    return op.error() << "alpha and beta other than 1 are not supported";
  bool transB = op.intAttr("transB", 0);
  if (!op.hasInput(0) || !op.hasInput(1))
    return op.error() << "expects two inputs";
  auto x = op.tensor(0);
  auto w = op.tensor(1);
  if (failed(x) || failed(w))
    return failure();
  FailureOr<Value> r;
  bool biasInLinear = false;
  if (weightInit(op, 1)) {
    // nn.linear takes the [out, in] weight; a [in, out] one is viewed so.
    Value weight = *w;
    if (!transB) {
      auto p = op.make<nn::PermuteOp>(weight, ArrayRef<int64_t>{1, 0});
      if (failed(p))
        return failure();
      weight = *p;
    }
    Value bias;
    Entry *be = op.inputEntry(2);
    if (be && be->kind == Entry::Init && be->init->dims_size() == 1) {
      auto bv = op.tensor(2);
      if (failed(bv))
        return failure();
      bias = *bv;
      biasInLinear = true;
    }
    r = op.make<nn::LinearOp>(*x, weight, bias);
  } else {
    Value rhs = *w;
    if (transB) {
      auto p = op.make<nn::PermuteOp>(rhs, ArrayRef<int64_t>{1, 0});
      if (failed(p))
        return failure();
      rhs = *p;
    }
    r = op.make<nn::MatmulOp>(*x, rhs);
  }
  if (failed(r))
    return failure();
  if (op.hasInput(2) && !biasInLinear) {
    auto c =
        op.tensor(2, cast<RankedTensorType>(r->getType()).getElementType());
    if (failed(c))
      return failure();
    r = op.make<nn::AddOp>(*r, *c, false);
    if (failed(r))
      return failure();
  }
  op.setResult(0, *r);
  return success();
}

void vram::onnx_import::registerMatMulConverters(ConverterTable &table) {
  table.onOp("MatMul", 1, convertMatMul);
  table.onOp("Gemm", 1, convertGemm);
}
