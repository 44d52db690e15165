//===- NNOpsRouting.cpp - topk and the experts' dispatch ------------------===//
//
// The ops a mixture-of-experts block routes tokens with (transformers'
// TopKRouter and grouped_mm experts): what autograd keeps follows
// derivatives.yaml (topk keeps its indices); the dispatch computes integer
// tensors only, without autograd.
//
//===----------------------------------------------------------------------===//

#include "NNOpsDetail.h"

#include "vram/Dialect/NN/NNOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace vram::nn;
using namespace vram::nn::detail;

//===----------------------------------------------------------------------===//
// nn.topk
//===----------------------------------------------------------------------===//

LogicalResult TopkOp::inferReturnTypes(MLIRContext *context,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &results) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t rank = input.getRank();
  int64_t dim = normalizeDim(adaptor.getDim(), rank);
  if (dim < 0)
    return emitOptionalError(loc, "dim ", adaptor.getDim(),
                             " is out of range for rank ", rank);
  int64_t k = adaptor.getK();
  if (k < 1 || k > input.getDimSize(dim))
    return emitOptionalError(loc, "k (", k, ") must be in [1, ",
                             input.getDimSize(dim), "]");
  SmallVector<int64_t> shape(input.getShape());
  shape[dim] = k;
  results.push_back(RankedTensorType::get(shape, input.getElementType()));
  results.push_back(
      RankedTensorType::get(shape, IntegerType::get(context, 64)));
  return success();
}

int64_t TopkOp::getFlops(FlopConvention c, bool) {
  // Comparisons, not arithmetic: counted under `full` only.
  return c == Conv::Full ? numel(getInput()) : 0;
}

void TopkOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                             SmallVectorImpl<SavedTensor> &saved) {
  // value_selecting_reduction_backward(grad, dim, indices, sizes, true).
  saved.push_back(SavedTensor::result(1));
}

//===----------------------------------------------------------------------===//
// nn.moe_dispatch
//===----------------------------------------------------------------------===//

LogicalResult MoeDispatchOp::inferReturnTypes(MLIRContext *context,
                                              std::optional<Location> loc,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &results) {
  auto indices = cast<RankedTensorType>(adaptor.getIndices().getType());
  if (indices.getRank() != 2 || !indices.getElementType().isInteger(64))
    return emitOptionalError(
        loc, "expects the router's [tokens, k] int64 expert indices, got ",
        indices);
  int64_t experts = adaptor.getNumExperts();
  if (experts < 1)
    return emitOptionalError(loc, "num_experts must be >= 1, got ", experts);
  int64_t pairs = satMul(indices.getDimSize(0), indices.getDimSize(1));
  auto i64 = IntegerType::get(context, 64), i32 = IntegerType::get(context, 32);
  auto pairIndex = RankedTensorType::get({pairs}, i64);
  auto perExpert = RankedTensorType::get({experts}, i32);
  results.append({pairIndex, pairIndex, pairIndex,
                  RankedTensorType::get({pairs}, i32), perExpert, perExpert,
                  pairIndex});
  return success();
}

int64_t MoeDispatchOp::getFlops(FlopConvention, bool) { return 0; }
