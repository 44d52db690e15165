//===- Precision.cpp - fp16/bf16 models and torch.autocast ----------------===//
//
// `vram-precision` rewrites @forward for the precision a training loop runs
// it in. Which dtype each op runs in under autocast is the op's autocast
// policy trait (NNInterfaces.h); this file only applies the policies.
//
//===----------------------------------------------------------------------===//

#include "vram/Dialect/NN/NNOps.h"
#include "vram/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/DenseMap.h"

namespace vram {
#define GEN_PASS_DEF_PRECISION
#include "vram/Transforms/Passes.h.inc"
} // namespace vram

using namespace mlir;
using namespace vram;
using namespace vram::nn;

static bool isFloat(Type t) { return isa<FloatType>(getElementTypeOrSelf(t)); }

static bool isLowPrecision(Type t) {
  Type et = getElementTypeOrSelf(t);
  return et.isF16() || et.isBF16();
}

static Type withElementType(Type t, Type et) {
  return cast<RankedTensorType>(t).clone(et);
}

/// Recomputes the result types of `op` after its operands changed dtype:
/// inferred when the op infers them, else each floating-point result takes
/// the dtype of the first floating-point operand (unary ops, views, dropout).
static LogicalResult retypeResults(Operation *op) {
  if (auto infer = dyn_cast<InferTypeOpInterface>(op)) {
    SmallVector<Type> types;
    if (failed(infer.inferReturnTypes(
            op->getContext(), op->getLoc(), op->getOperands(),
            op->getRawDictionaryAttrs(), op->getPropertiesStorage(),
            op->getRegions(), types)))
      return failure();
    for (auto [result, type] : llvm::zip(op->getResults(), types))
      result.setType(type);
    return success();
  }
  auto firstFloat = llvm::find_if(op->getOperandTypes(), isFloat);
  if (firstFloat == op->getOperandTypes().end())
    return success();
  Type et = getElementTypeOrSelf(*firstFloat);
  for (OpResult result : op->getResults())
    if (isFloat(result.getType()))
      result.setType(withElementType(result.getType(), et));
  return success();
}

namespace {
/// Applies autocast's policies to ops in order, keeping the weight-cast
/// cache: one low-precision copy per trainable fp32 parameter.
class Autocaster {
public:
  explicit Autocaster(FloatType low) : low(low) {}

  LogicalResult apply(Operation *op);

  /// The cached copies, in creation order (what nn.autocast_exit releases).
  ArrayRef<Value> getCachedCasts() const { return cached; }
  /// Every nn.cast created, in creation order.
  ArrayRef<Operation *> getCreatedCasts() const { return created; }

private:
  void castOperand(Operation *op, unsigned index, Type et);

  FloatType low;
  DenseMap<Value, Value> cache;
  SmallVector<Value> cached;
  SmallVector<Operation *> created;
};
} // namespace

void Autocaster::castOperand(Operation *op, unsigned index, Type et) {
  Value operand = op->getOperand(index);
  if (getElementTypeOrSelf(operand.getType()) == et)
    return;
  // autocast caches casts of leaf tensors that require grad (trainable
  // parameters) to the low dtype; everything else is cast at every use.
  auto param = operand.getDefiningOp<ParamOp>();
  bool cacheable = param && param.getTrainable() && et == low;
  if (cacheable)
    if (Value copy = cache.lookup(operand)) {
      op->setOperand(index, copy);
      return;
    }
  OpBuilder b(op);
  auto cast = CastOp::create(b, op->getLoc(),
                             withElementType(operand.getType(), et), operand);
  created.push_back(cast);
  op->setOperand(index, cast);
  if (cacheable) {
    cache[operand] = cast;
    cached.push_back(cast);
  }
}

LogicalResult Autocaster::apply(Operation *op) {
  Type f32 = Float32Type::get(op->getContext());
  auto floatOperands = [&] {
    SmallVector<unsigned> indices;
    for (auto [i, t] : llvm::enumerate(op->getOperandTypes()))
      if (isFloat(t))
        indices.push_back(i);
    return indices;
  };
  if (op->hasTrait<AutocastLowerPrecision>()) {
    for (unsigned i : floatOperands())
      castOperand(op, i, low);
  } else if (op->hasTrait<AutocastFloat32>()) {
    for (unsigned i : floatOperands())
      if (isLowPrecision(op->getOperand(i).getType()))
        castOperand(op, i, f32);
  } else if (op->hasTrait<AutocastFloat32Output>()) {
    if (llvm::any_of(op->getOperandTypes(), isLowPrecision))
      op->setAttr(AutocastFloat32Output<void>::kDtypeAttrName,
                  TypeAttr::get(f32));
  } else if (op->hasTrait<AutocastPromote>()) {
    Type widest;
    for (unsigned i : floatOperands()) {
      Type et = getElementTypeOrSelf(op->getOperand(i).getType());
      widest = widest ? promoteFloatTypes(widest, et) : et;
    }
    for (unsigned i : floatOperands())
      castOperand(op, i, widest);
  }
  return retypeResults(op);
}

LogicalResult vram::autocastOp(Operation *op, FloatType lowType,
                               SmallVectorImpl<Operation *> *casts) {
  Autocaster autocaster(lowType);
  if (failed(autocaster.apply(op)))
    return failure();
  if (casts)
    llvm::append_range(*casts, autocaster.getCreatedCasts());
  return success();
}

namespace {
struct PrecisionPass : public vram::impl::PrecisionBase<PrecisionPass> {
  using PrecisionBase::PrecisionBase;

  void runOnOperation() override;

private:
  LogicalResult runLowPrecision(func::FuncOp forward, FloatType low);
  LogicalResult runAutocast(func::FuncOp forward, FloatType low);
};
} // namespace

/// Whether the model's code leaves `op`'s float32 results in float32 until
/// a low-precision op reads them (nn.float32, nn.promote): there the code
/// casts them down (`.to(input_dtype)`).
static bool keepsFloat32(Operation *op) {
  return op->hasAttr(NNDialect::kFloat32AttrName) ||
         op->hasAttr(NNDialect::kPromoteAttrName);
}

/// Updates the function type after its arguments or results changed dtype.
static void updateFunctionType(func::FuncOp func) {
  Block &body = func.getBody().front();
  func.setType(FunctionType::get(func.getContext(), body.getArgumentTypes(),
                                 body.getTerminator()->getOperandTypes()));
}

LogicalResult PrecisionPass::runLowPrecision(func::FuncOp forward,
                                             FloatType low) {
  // model.half(): parameters and floating-point buffers; the loop feeds
  // inputs in the same dtype. Every op then runs in it, except the ops the
  // model's code runs in float32 (nn.float32): their low-precision operands
  // are cast up (`.to(torch.float32)`, once per value) and their results
  // cast back down where another op reads them (`.to(input_dtype)`). An op
  // on mixed dtypes (nn.promote) casts neither way: its result has the
  // wider dtype.
  Block &body = forward.getBody().front();
  for (BlockArgument arg : body.getArguments())
    if (isFloat(arg.getType()))
      arg.setType(withElementType(arg.getType(), low));
  Type f32 = Float32Type::get(&getContext());
  DenseMap<std::pair<Value, Type>, Value> casts;
  auto castTo = [&](Operation *user, unsigned index, Type et) {
    Value operand = user->getOperand(index);
    if (!isFloat(operand.getType()) ||
        getElementTypeOrSelf(operand.getType()) == et)
      return;
    Value &cast = casts[{operand, et}];
    if (!cast) {
      OpBuilder b(user);
      cast = CastOp::create(b, user->getLoc(),
                            withElementType(operand.getType(), et), operand);
      ++numCasts;
    }
    user->setOperand(index, cast);
  };
  for (Operation &op : llvm::make_early_inc_range(body.without_terminator())) {
    if (isa<ParamOp, BufferOp>(op)) {
      for (OpResult r : op.getResults())
        if (isFloat(r.getType()))
          r.setType(withElementType(r.getType(), low));
      continue;
    }
    // A release names the tensors Python still holds, as they are.
    if (isa<CastOp, ReleaseOp>(op))
      continue;
    if (auto constant = dyn_cast<ConstantOp>(op);
        constant && constant.getModelDtype()) {
      auto splat = cast<DenseElementsAttr>(constant.getValue());
      llvm::APFloat value = splat.getSplatValue<llvm::APFloat>();
      bool losesInfo;
      value.convert(low.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven,
                    &losesInfo);
      auto type = cast<RankedTensorType>(withElementType(splat.getType(), low));
      constant.setValueAttr(DenseElementsAttr::get(type, value));
      constant.getResult().setType(type);
      continue;
    }
    bool inFloat32 = op.hasAttr(NNDialect::kFloat32AttrName);
    for (unsigned i = 0, e = op.getNumOperands();
         i < e && !op.hasAttr(NNDialect::kPromoteAttrName); ++i) {
      Operation *def = op.getOperand(i).getDefiningOp();
      if (inFloat32 && isLowPrecision(op.getOperand(i).getType()))
        castTo(&op, i, f32);
      else if (!inFloat32 && def && keepsFloat32(def))
        castTo(&op, i, low);
    }
    if (failed(retypeResults(&op)))
      return failure();
  }
  // A float32 result the forward returns goes back to the model's dtype.
  Operation *terminator = body.getTerminator();
  for (unsigned i = 0, e = terminator->getNumOperands(); i < e; ++i)
    if (Operation *def = terminator->getOperand(i).getDefiningOp();
        def && keepsFloat32(def))
      castTo(terminator, i, low);
  updateFunctionType(forward);
  return success();
}

LogicalResult PrecisionPass::runAutocast(func::FuncOp forward, FloatType low) {
  Block &body = forward.getBody().front();
  Autocaster autocaster(low);
  for (Operation &op : llvm::make_early_inc_range(body.without_terminator())) {
    if (isa<ParamOp, BufferOp, CastOp, ReleaseOp>(op) ||
        op.getNumOperands() == 0)
      continue;
    if (failed(autocaster.apply(&op)))
      return failure();
  }
  numCasts += autocaster.getCreatedCasts().size();
  OpBuilder b(body.getTerminator());
  AutocastExitOp::create(
      b, NameLoc::get(b.getStringAttr("autocast"), forward.getLoc()),
      autocaster.getCachedCasts());
  forward->setAttr(NNDialect::kAutocastAttrName, TypeAttr::get(low));
  updateFunctionType(forward);
  return success();
}

void PrecisionPass::runOnOperation() {
  if (precision == Precision::Fp32)
    return;
  ModuleOp module = getOperation();
  auto forward = module.lookupSymbol<func::FuncOp>(entry);
  if (!forward || forward.isExternal()) {
    emitError(module.getLoc())
        << "no function @" << entry << " to set the precision of";
    return signalPassFailure();
  }
  if (!forward.getBody().hasOneBlock()) {
    forward.emitError("the model must be a single block");
    return signalPassFailure();
  }
  if (forward->hasAttr(NNDialect::kAutocastAttrName)) {
    forward.emitError("the model already runs under autocast");
    return signalPassFailure();
  }
  Builder b(&getContext());
  bool bf16 = precision == Precision::AmpBf16 || precision == Precision::Bf16;
  FloatType low = bf16 ? FloatType(b.getBF16Type()) : b.getF16Type();
  bool amp = precision == Precision::AmpFp16 || precision == Precision::AmpBf16;
  LogicalResult result =
      amp ? runAutocast(forward, low) : runLowPrecision(forward, low);
  if (failed(result) || failed(mlir::verify(forward)))
    return signalPassFailure();
}
