//===- LowerToTensor.cpp - the step on upstream tensor dialects -----------===//
//
// Walks the step once in order. Persistent storage ops become arguments;
// every other op is rebuilt through its LowerToTensorOpInterface from the
// lowered values of its operands, then the nn ops are erased. This file
// knows no op: the formulas are the interface models (OpLowerings.cpp).
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "vram/Analysis/StepInfo.h"
#include "vram/Conversion/NNToTensor.h"
#include "vram/Dialect/NN/NNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/DenseMap.h"

namespace vram {
#define GEN_PASS_DEF_LOWERTOTENSOR
#include "vram/Conversion/Passes.h.inc"
} // namespace vram

using namespace mlir;
using namespace vram;
using namespace vram::nn;

namespace {

struct LowerToTensorPass
    : public vram::impl::LowerToTensorBase<LowerToTensorPass> {
  using LowerToTensorBase::LowerToTensorBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto step = module.lookupSymbol<func::FuncOp>(entry);
    if (!step || step.isExternal()) {
      emitError(module.getLoc()) << "no function @" << entry << " to lower";
      return signalPassFailure();
    }
    if (!step.getBody().hasOneBlock()) {
      step.emitError("the step must be a single block");
      return signalPassFailure();
    }
    if (failed(checkNoAutocast(step)) || failed(lower(module, step)))
      signalPassFailure();
  }

  /// A torch.autocast step mixes dtypes inside ops (cross_entropy's fp32
  /// `dtype` on fp16 logits, fp32 weights with fp16 activations), which the
  /// models do not lower: an error at the region's end (or the step).
  LogicalResult checkNoAutocast(func::FuncOp step) {
    auto autocast = step->getAttrOfType<TypeAttr>(NNDialect::kAutocastAttrName);
    if (!autocast)
      return success();
    Operation *at = step;
    step.walk([&](AutocastExitOp exit) { at = exit; });
    return at->emitError()
           << "a torch.autocast step (--precision=amp, " << autocast.getValue()
           << ") is not lowered: the lowerings compute each op in one "
              "element type; execute the fp32 step, or the whole model in "
              "fp16";
  }

  LogicalResult lower(ModuleOp module, func::FuncOp step);
};

} // namespace

LogicalResult LowerToTensorPass::lower(ModuleOp module, func::FuncOp step) {
  MLIRContext *ctx = &getContext();
  Block &body = step.getBody().front();
  LoweringOptions options;
  options.lr = lr;
  options.momentum = momentum;
  options.beta1 = beta1;
  options.beta2 = beta2;
  options.eps = eps;
  options.target = getTorchTarget(step);
  // Inference and generation run the model in eval().
  options.training = getStepMode(step) == StepMode::Train;

  func::FuncOp marker;
  if (markers) {
    marker = module.lookupSymbol<func::FuncOp>(kOpMarkerName);
    if (!marker) {
      OpBuilder mb(module.getBodyRegion());
      mb.setInsertionPointToStart(module.getBody());
      marker = func::FuncOp::create(mb, module.getLoc(), kOpMarkerName,
                                    mb.getFunctionType({mb.getI64Type()}, {}));
      marker.setPrivate();
    }
  }

  // Original values -> lowered values. Arguments stay.
  DenseMap<Value, Value> lowered;
  // The step's own arguments: the model inputs (named by their location,
  // as the ONNX importer names them, else inputN), then a training step's
  // loss target, "labels".
  bool train = getStepMode(step) == StepMode::Train;
  unsigned numInputs = body.getNumArguments();
  for (BlockArgument arg : body.getArguments()) {
    lowered[arg] = arg;
    std::string name = "input" + std::to_string(arg.getArgNumber());
    if (auto loc = dyn_cast<NameLoc>(arg.getLoc()))
      name = loc.getName().str();
    if (train && arg.getArgNumber() + 1 == numInputs)
      name = "labels";
    step.setArgAttr(
        arg.getArgNumber(), "vram.storage",
        StringAttr::get(ctx, stringifyEnum(MemoryCategory::Inputs)));
    step.setArgAttr(arg.getArgNumber(), "vram.name",
                    StringAttr::get(ctx, name));
  }
  // Persistent storages in definition order: the argument, its name.
  struct Persistent {
    Value original;
    BlockArgument arg;
    std::string name;
  };
  SmallVector<Persistent> persistent;
  DenseMap<Value, unsigned> persistentIndex;
  // `<param>.grad`, the name --dump and the runner give a gradient.
  auto gradName = [&](Value param) {
    auto it = persistentIndex.find(param);
    return (it == persistentIndex.end() ? std::string("param")
                                        : persistent[it->second].name) +
           ".grad";
  };
  SmallVector<std::pair<Value, std::string>> grads;
  // .grad kept across steps or micro-batches (nn.persistent_grads): each
  // gradient the optimizer reads, with its parameter. The gradient backward
  // computes is added into a .grad argument in place by the op that
  // finishes it, and dies there (AccumulateGrad), as the memory analysis
  // counts it; later readers see .grad.
  bool persistentGrads = step->hasAttr(NNDialect::kPersistentGradsAttrName);
  DenseMap<Value, Value> paramOfGrad;
  if (persistentGrads)
    step.walk([&](OptimizerStepOp update) {
      for (auto [p, g] : llvm::zip(update.getParams(), update.getGrads()))
        paramOfGrad.try_emplace(g, p);
    });

  SmallVector<Operation *> original;
  for (Operation &op : body)
    original.push_back(&op);
  Operation *terminator = body.getTerminator();
  OpBuilder b(ctx);
  for (auto [i, op] : llvm::enumerate(original)) {
    unsigned index = i + 1;
    if (auto storage = dyn_cast<PersistentStorageOpInterface>(op)) {
      Value result = op->getResult(0);
      unsigned argNo = body.getNumArguments();
      NamedAttribute attrs[] = {
          b.getNamedAttr("vram.storage", b.getStringAttr(stringifyEnum(
                                             storage.getMemoryCategory()))),
          b.getNamedAttr("vram.name",
                         b.getStringAttr(storage.getStorageName()))};
      if (failed(step.insertArgument(argNo, result.getType(),
                                     b.getDictionaryAttr(attrs), op->getLoc())))
        return failure();
      BlockArgument arg = body.getArgument(argNo);
      lowered[result] = arg;
      persistentIndex[result] = persistent.size();
      persistent.push_back({result, arg, storage.getStorageName()});
      continue;
    }
    b.setInsertionPoint(op);
    if (marker) {
      Value idx = arith::ConstantOp::create(b, op->getLoc(),
                                            b.getI64IntegerAttr(index));
      func::CallOp::create(b, op->getLoc(), marker, ValueRange{idx});
    }
    if (op == terminator)
      break;
    auto lowering = dyn_cast<LowerToTensorOpInterface>(op);
    if (!lowering)
      return op->emitError() << "'" << op->getName()
                             << "' has no lowering to tensors "
                                "(LowerToTensorOpInterface)";
    SmallVector<Value> operands;
    for (Value v : op->getOperands())
      operands.push_back(lowered.lookup(v));
    SmallVector<Value> results;
    SmallVector<std::pair<unsigned, Value>> updates;
    if (failed(lowering.lowerToTensor(b, operands, options, results, updates)))
      return failure();
    if (results.size() != op->getNumResults())
      return op->emitError()
             << "the lowering returned " << results.size() << " values for "
             << op->getNumResults() << " results";
    for (auto [from, to] : llvm::zip(op->getResults(), results)) {
      if (from.getType() != to.getType())
        return op->emitError() << "the lowering returned a " << to.getType()
                               << " for a " << from.getType() << " result";
      lowered[from] = to;
    }
    for (auto [operand, value] : updates)
      lowered[op->getOperand(operand)] = value;
    for (Value result : op->getResults()) {
      auto it = paramOfGrad.find(result);
      if (it == paramOfGrad.end())
        continue;
      std::string name = gradName(it->second);
      unsigned argNo = body.getNumArguments();
      NamedAttribute attrs[] = {
          b.getNamedAttr("vram.storage", b.getStringAttr(stringifyEnum(
                                             MemoryCategory::Gradients))),
          b.getNamedAttr("vram.name", b.getStringAttr(name))};
      if (failed(step.insertArgument(argNo, result.getType(),
                                     b.getDictionaryAttr(attrs), op->getLoc())))
        return failure();
      BlockArgument gradArg = body.getArgument(argNo);
      // .grad += the new gradient, in place.
      Value accumulated = lowering::elementwise(
          b, op->getLoc(), lowered.lookup(result), gradArg,
          [](OpBuilder &nb, Location nloc, ValueRange a) {
            return arith::AddFOp::create(nb, nloc, a[1], a[0]).getResult();
          },
          /*readInit=*/true);
      lowered[result] = accumulated;
      persistent.push_back({result, gradArg, name});
    }
    if (returnGrads && !persistentGrads)
      if (auto update = dyn_cast<OptimizerStepOp>(op))
        for (auto [p, g] : llvm::zip(update.getParams(), update.getGrads()))
          grads.push_back({lowered.lookup(g), gradName(p)});
  }

  // Results: the step's own, the final persistent values, the gradients.
  b.setInsertionPoint(terminator);
  SmallVector<Value> returned;
  SmallVector<std::string> names;
  for (auto [i, v] : llvm::enumerate(terminator->getOperands())) {
    returned.push_back(lowered.lookup(v));
    names.push_back(train ? "loss" : "output" + std::to_string(i));
  }
  for (const Persistent &p : persistent) {
    returned.push_back(lowered.lookup(p.original));
    names.push_back(p.name);
  }
  for (auto &[g, name] : grads) {
    returned.push_back(g);
    names.push_back(name);
  }
  func::ReturnOp::create(b, terminator->getLoc(), returned);
  for (Operation *op : llvm::reverse(original))
    op->erase();
  SmallVector<Type> resultTypes;
  for (Value v : returned)
    resultTypes.push_back(v.getType());
  step.setType(FunctionType::get(ctx, body.getArgumentTypes(), resultTypes));
  for (auto [i, name] : llvm::enumerate(names))
    step.setResultAttr(i, "vram.name", b.getStringAttr(name));
  return success();
}
