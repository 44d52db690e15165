//===- NNOps.cpp - nn dialect ops: shared helpers, storage ops ------------===//
//
// Every op's semantics live next to its verifier, one file per op family as
// NNOps.td declares them: result type inference and verification, FLOPs
// (CostOpInterface), what autograd saves (AutodiffOpInterface), strides
// (LayoutOpInterface), phases and effects. The formulas follow
// ../shared/reference/flops.md and pytorch.md; docs/Flops.md lists them.
//
//   NNOps.cpp                  helpers of NNOpsDetail.h, nn.param/nn.buffer,
//                              the ODS-generated op classes
//   NNOpsLinearAlgebra.cpp     conv2d, linear, matmul, bmm
//   NNOpsNormalization.cpp     batch/layer/rms/group norm
//   NNOpsElementwise.cpp       activations, softmax, dropout, add/sub/mul/div,
//                              masked_fill, cast, erf, clamp
//   NNOpsPooling.cpp           max/avg/adaptive pooling, mean
//   NNOpsAttention.cpp         embedding, scaled_dot_product_attention
//   NNOpsShape.cpp             concat, pad, contiguous and the views
//   NNOpsLoss.cpp              cross_entropy, mse_loss
//   NNOpsStep.cpp              backward, accumulate_grad, the optimizer ops
//
//===----------------------------------------------------------------------===//

#include "NNOpsDetail.h"

#include "vram/Dialect/NN/NNOps.h"
#include "vram/Dialect/NN/TensorNames.h"
#include "vram/Support/CheckedMath.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace vram::nn;

//===----------------------------------------------------------------------===//
// Helpers shared by the op families (NNOpsDetail.h)
//===----------------------------------------------------------------------===//

LogicalResult vram::nn::detail::checkPair(std::optional<Location> loc,
                                          StringRef what,
                                          ArrayRef<int64_t> values,
                                          int64_t minValue) {
  if (values.size() != 2)
    return emitOptionalError(loc, what, " must have 2 values, got ",
                             values.size());
  for (int64_t v : values)
    if (v < minValue)
      return emitOptionalError(loc, what, " must be >= ", minValue, ", got ",
                               v);
  return success();
}

FailureOr<int64_t>
vram::nn::detail::spatialOutputSize(std::optional<Location> loc, int dim,
                                    int64_t in, int64_t kernel, int64_t stride,
                                    int64_t pad, int64_t dilation,
                                    bool ceilMode, const std::string &misfit) {
  std::optional<int64_t> out =
      vram::windowOutputSize(in, kernel, stride, pad, dilation, ceilMode);
  if (!out)
    return emitOptionalError(loc,
                             "the output size overflows int64 (spatial "
                             "dim ",
                             dim, ": padding, dilation or kernel too large)");
  if (*out < 1)
    return emitOptionalError(loc, misfit);
  return *out;
}

FailureOr<SmallVector<int64_t>>
vram::nn::detail::broadcastShapes(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return failure();
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::string vram::nn::detail::shapeStr(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleaveComma(shape, os);
  os << "]";
  return s;
}

LogicalResult vram::nn::detail::inferWithDtype(std::optional<Location> loc,
                                               Type input, TypeAttr dtype,
                                               ArrayRef<int64_t> shape,
                                               SmallVectorImpl<Type> &results) {
  Type et = cast<RankedTensorType>(input).getElementType();
  if (dtype) {
    if (!isa<FloatType>(dtype.getValue()))
      return emitOptionalError(loc, "dtype must be a floating-point type, got ",
                               dtype.getValue());
    et = dtype.getValue();
  }
  results.push_back(RankedTensorType::get(shape, et));
  return success();
}

//===----------------------------------------------------------------------===//
// nn.param / nn.buffer
//===----------------------------------------------------------------------===//

LogicalResult ParamOp::verify() {
  if (getName().empty())
    return emitOpError("needs a non-empty name");
  return success();
}

LogicalResult BufferOp::verify() {
  if (getName().empty())
    return emitOpError("needs a non-empty name");
  return success();
}

MemoryCategory ParamOp::getMemoryCategory() {
  return MemoryCategory::Parameters;
}
std::string ParamOp::getStorageName() { return getName().str(); }
MemoryCategory BufferOp::getMemoryCategory() { return MemoryCategory::Buffers; }
std::string BufferOp::getStorageName() { return getName().str(); }

//===----------------------------------------------------------------------===//
// nn.quantized_weight
//===----------------------------------------------------------------------===//

void vram::nn::getQuantizedWeightTypes(
    QuantizationAttr config, ArrayRef<int64_t> shape,
    SmallVectorImpl<RankedTensorType> &types) {
  MLIRContext *ctx = config.getContext();
  Type u8 = IntegerType::get(ctx, 8, IntegerType::Unsigned);
  Type f32 = Float32Type::get(ctx);
  if (config.isInt8()) {
    // Int8Params: CB, the weight in int8 ([out, in], row-major), and SCB,
    // the absmax of each row in float32 (int8_vectorwise_quant).
    types.push_back(RankedTensorType::get(shape, IntegerType::get(ctx, 8)));
    types.push_back(RankedTensorType::get({shape.front()}, f32));
    return;
  }
  int64_t numel = vram::checkedProduct(shape).value_or(0);
  auto ceilDiv = [](int64_t n, int64_t d) { return n / d + (n % d != 0); };
  int64_t blocks = ceilDiv(numel, config.getBlocksize());
  types.push_back(RankedTensorType::get({ceilDiv(numel, 2), 1}, u8));
  types.push_back(
      RankedTensorType::get({blocks}, config.getDoubleQuant() ? u8 : f32));
  types.push_back(RankedTensorType::get({16}, f32));
  if (!config.getDoubleQuant())
    return;
  // quantize_blockwise(absmax - offset, blocksize=256) with a copy of the
  // 256-entry dynamic map per weight.
  types.push_back(RankedTensorType::get({}, f32));
  types.push_back(RankedTensorType::get({ceilDiv(blocks, 256)}, f32));
  types.push_back(RankedTensorType::get({256}, f32));
}

int64_t QuantizedWeightOp::getNumElements() {
  return vram::checkedProduct(getShape()).value_or(-1);
}

LogicalResult QuantizedWeightOp::verify() {
  if (getName().empty())
    return emitOpError("needs a non-empty name");
  if (getShape().size() != 2 ||
      llvm::any_of(getShape(), [](int64_t d) { return d <= 0; }))
    return emitOpError("shape must be [out_features, in_features] of "
                       "positive sizes");
  if (getNumElements() < 0)
    return emitOpError("weight size overflows 64 bits");
  Type dtype = getDtype();
  if (!dtype.isF32() && !dtype.isF16() && !dtype.isBF16())
    return emitOpError("bitsandbytes quantizes float32, float16 or bfloat16 "
                       "weights, not ")
           << dtype;
  SmallVector<RankedTensorType> expected;
  getQuantizedWeightTypes(getConfig(), getShape(), expected);
  SmallVector<Type> actual(getResultTypes());
  if (actual.size() != expected.size() ||
      !llvm::all_of(llvm::zip(actual, expected), [](auto pair) {
        return std::get<0>(pair) == std::get<1>(pair);
      })) {
    InFlightDiagnostic diag = emitOpError("results must be ");
    llvm::interleaveComma(expected, diag);
    return diag << " for a " << getNumElements() << "-element weight "
                << getConfig();
  }
  return success();
}

MemoryCategory QuantizedWeightOp::getMemoryCategory() {
  return MemoryCategory::Parameters;
}
std::string QuantizedWeightOp::getStorageName() { return getName().str(); }

// The op classes ODS generates, defined once for the whole dialect.
#define GET_OP_CLASSES
#include "vram/Dialect/NN/NNOps.cpp.inc"

LogicalResult vram::nn::verifyUniqueTensorNames(Operation *func) {
  SmallVector<Operation *> ops;
  func->walk([&](Operation *op) {
    if (isa<ParamOp, BufferOp>(op))
      ops.push_back(op);
  });
  return verifyUniqueTensorNames(ops);
}

LogicalResult vram::nn::verifyUniqueTensorNames(ArrayRef<Operation *> ops) {
  llvm::StringMap<Operation *> first(
      llvm::count_if(ops, llvm::IsaPred<ParamOp, BufferOp>));
  for (Operation *op : ops) {
    StringRef name;
    if (auto param = dyn_cast<ParamOp>(op))
      name = param.getName();
    else if (auto buffer = dyn_cast<BufferOp>(op))
      name = buffer.getName();
    else
      continue;
    auto [it, inserted] = first.try_emplace(name, op);
    if (inserted)
      continue;
    InFlightDiagnostic diag =
        op->emitError() << "duplicate tensor name '" << name
                        << "': every parameter and buffer needs a name of its "
                           "own";
    diag.attachNote(it->second->getLoc()) << "first defined here";
    return failure();
  }
  return success();
}
