//===- Reduction.cpp - reduction converters -------------------------------===//

#include "ConverterTable.h"
#include "Importer.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace vram::onnx_import;
namespace nn = vram::nn;

/// ReduceMean, ReduceSum, ReduceMax and ReduceMin: nn.mean, nn.sum,
/// nn.amax, nn.amin (torch.onnx exports amax, amin and max() over every
/// element so; their autograd keeps the input and the result). Axes from
/// the attribute, or from input 1 (ReduceSum from opset 13, the others from
/// 18; models newer than libonnx's version converter keep their opset).
template <typename OpTy> static LogicalResult convertReduce(OpBinder &op) {
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
  return op.makeResult<OpTy>(*x, b.getDenseI64ArrayAttr(axes),
                             keep ? b.getUnitAttr() : UnitAttr());
}

/// TopK: the K largest (largest=0: smallest) values along `axis` and their
/// indices, nn.topk (torch.topk; K from input 1, or the `k` attribute
/// before opset 10).
static LogicalResult convertTopK(OpBinder &op) {
  auto x = op.tensor(0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  if (!isFloatTensor(*x))
    return op.error() << "expects a floating-point tensor";
  int64_t largest = op.intAttr("largest", 1);
  if (largest != 0 && largest != 1)
    return op.error() << "largest must be 0 or 1, got " << largest;
  auto kOr = op.scalarInputOrAttr(1, "k");
  if (failed(kOr))
    return failure();
  if (!*kOr)
    return op.error() << "K must be a constant";
  int64_t rank = type.getRank(), axis = op.intAttr("axis", -1);
  if (axis < -rank || axis >= rank)
    return op.error() << "axis " << axis << " is out of range for rank "
                      << rank;
  axis = axis < 0 ? axis + rank : axis;
  double k = **kOr;
  if (!(k >= 1 && k <= 9.0e18) ||
      k != static_cast<double>(static_cast<int64_t>(k)))
    return op.error() << "K must be a positive integer, got "
                      << llvm::formatv("{0}", k);
  if (static_cast<int64_t>(k) > type.getDimSize(axis))
    return op.error() << "K = " << static_cast<int64_t>(k) << " must be in [1, "
                      << type.getDimSize(axis) << "] (axis " << axis << ")";
  // sorted=0 leaves the order unspecified: the sorted one is one.
  auto topk = nn::TopkOp::create(op.builder(), op.loc, *x,
                                 static_cast<int64_t>(k), axis,
                                 /*smallest=*/largest == 0);
  op.setResult(0, topk.getValues());
  op.setResult(1, topk.getIndices());
  return success();
}

void vram::onnx_import::registerReductionConverters(ConverterTable &table) {
  table.onOp("ReduceMean", 1, convertReduce<nn::MeanOp>);
  table.onOp("ReduceSum", 1, convertReduce<nn::SumOp>);
  table.onOp("ReduceMax", 1, convertReduce<nn::AmaxOp>);
  table.onOp("ReduceMin", 1, convertReduce<nn::AminOp>);
  table.onOp("TopK", 1, convertTopK);
}
