//===- NNOpsStep.cpp - backward nodes, gradients, optimizer ---------------===//
//
// The ops vram-build-step creates: backward nodes (their recorded saved
// tensors, FLOPs and workspace), gradient accumulation, optimizer state
// and the update with its foreach temporaries. Each says its step phase.
//
//===----------------------------------------------------------------------===//

#include "NNOpsDetail.h"

#include "vram/Dialect/NN/NNOps.h"
#include "vram/Dialect/NN/TorchSemantics.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/ErrorHandling.h"

using namespace mlir;
using namespace vram::nn;
using namespace vram::nn::detail;

//===----------------------------------------------------------------------===//
// Training-step ops
//===----------------------------------------------------------------------===//

LogicalResult BackwardOp::verify() {
  if (getGradOperands().size() != getNumResults())
    return emitOpError("grad_operands has ")
           << getGradOperands().size() << " entries for " << getNumResults()
           << " results";
  if (getParamGrads().size() != getNumResults())
    return emitOpError("param_grads has ")
           << getParamGrads().size() << " entries for " << getNumResults()
           << " results";
  if (getFlopCounts().size() != 3)
    return emitOpError("flop_counts needs 3 entries (macs, flops, full)");
  if (getSavedRoles().size() != getSaved().size())
    return emitOpError("saved_roles has ")
           << getSavedRoles().size() << " entries for " << getSaved().size()
           << " saved tensors";
  FunctionType forward = getForwardType();
  for (auto [value, role] : llvm::zip(getSaved(), getSavedRoles())) {
    auto r = cast<SavedRoleAttr>(role);
    if (r.getKind() == SavedKind::Extra)
      continue;
    TypeRange types = r.getKind() == SavedKind::Operand ? forward.getInputs()
                                                        : forward.getResults();
    if (r.getIndex() < 0 || r.getIndex() >= (int64_t)types.size())
      return emitOpError("saved role ")
             << r << " is out of range for forward type " << forward;
    if (types[r.getIndex()] != value.getType())
      return emitOpError("saved tensor of type ")
             << value.getType() << " does not match its role " << r << " ("
             << types[r.getIndex()] << ")";
  }
  for (int64_t i : getGradOperands())
    if (i < 0 || i >= (int64_t)forward.getNumInputs())
      return emitOpError("grad operand ")
             << i << " is out of range for forward type " << forward;
  return success();
}

int64_t BackwardOp::getWorkspaceBytes(const TorchTarget &) {
  return getWorkspaceBytesAttr().getInt();
}

int64_t BackwardOp::getFlops(FlopConvention c, bool) {
  return getFlopCounts()[static_cast<unsigned>(c)];
}
StepPhase BackwardOp::getStepPhase() { return StepPhase::Backward; }

Value AccumulateGradOp::getAliasedOperand(unsigned) {
  return getInplace() ? getAccumulator() : Value();
}

int64_t AccumulateGradOp::getFlops(FlopConvention c, bool) {
  return c == Conv::Full ? numel(getResult()) : 0;
}
StepPhase AccumulateGradOp::getStepPhase() { return StepPhase::Backward; }

MemoryCategory OptimizerStateOp::getMemoryCategory() {
  return MemoryCategory::OptimizerState;
}
std::string OptimizerStateOp::getStorageName() {
  std::string param = "?";
  if (auto owner = getParam().getDefiningOp<PersistentStorageOpInterface>())
    param = owner.getStorageName();
  return param + "." + stringifyEnum(getKind()).str();
}

LogicalResult GradBucketOp::verify() {
  if (getName().empty())
    return emitOpError("needs a non-empty name");
  if (getParams().empty())
    return emitOpError("holds the gradients of at least one parameter");
  if (getResult().getType().getRank() != 1)
    return emitOpError("is a flat (rank-1) tensor, got ")
           << getResult().getType();
  return success();
}

MemoryCategory GradBucketOp::getMemoryCategory() {
  return MemoryCategory::Gradients;
}
std::string GradBucketOp::getStorageName() { return getName().str(); }

LogicalResult ShardOp::verify() {
  auto full = cast<RankedTensorType>(getParam().getType());
  auto shard = cast<RankedTensorType>(getResult().getType());
  int64_t ranks = getRanks();
  if (ranks < 1)
    return emitOpError("needs ranks >= 1, got ") << ranks;
  if (full.getRank() < 1)
    return emitOpError("shards dim 0: the parameter needs one");
  SmallVector<int64_t> expected(full.getShape());
  expected[0] = llvm::divideCeil(expected[0], ranks);
  // The element type may differ: under FSDP's MixedPrecisionPolicy the
  // shards keep the parameters' original dtype while the step computes in
  // param_dtype.
  if (shard.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result must be ")
           << RankedTensorType::get(expected, shard.getElementType())
           << " (dim 0 in chunks of ceil(" << full.getDimSize(0) << " / "
           << ranks << ")), got " << shard;
  return success();
}

int64_t AllGatherOp::getWorkspaceBytes(const TorchTarget &) {
  // _get_param_all_gather_inputs: with a param_dtype other than the shards'
  // one flat tensor of the shards cast to it, alive until the all-gather is
  // issued (after the output is allocated).
  Type gathered = getResult().getType().getElementType();
  if (llvm::all_of(getShards(), [&](Value shard) {
        return cast<RankedTensorType>(shard.getType()).getElementType() ==
               gathered;
      }))
    return 0;
  int64_t elements = 0;
  for (Value shard : getShards())
    elements = satAdd(elements, numel(shard));
  return satMul(elements,
                llvm::divideCeil(gathered.getIntOrFloatBitWidth(), 8));
}

MemoryCategory ShardOp::getMemoryCategory() {
  return MemoryCategory::Parameters;
}
std::string ShardOp::getStorageName() {
  if (auto owner = getParam().getDefiningOp<PersistentStorageOpInterface>())
    return owner.getStorageName();
  return "?";
}

/// Persistent state tensors per parameter (torch.optim's `state[p]`).
static unsigned statesPerParam(OptimizerKind kind) {
  switch (kind) {
  case OptimizerKind::Sgd:
    return 0;
  case OptimizerKind::Momentum:
    return 1;
  case OptimizerKind::Adam:
  case OptimizerKind::AdamW:
    return 2;
  }
  llvm_unreachable("unknown optimizer");
}

LogicalResult OptimizerStepOp::verify() {
  unsigned statesPerParam = ::statesPerParam(getOptimizer());
  if (getParams().size() != getGrads().size())
    return emitOpError("needs one gradient per parameter");
  if (getState().size() != statesPerParam * getParams().size())
    return emitOpError("needs ")
           << statesPerParam << " state tensors per parameter";
  for (auto [p, g] : llvm::zip(getParams(), getGrads()))
    if (p.getType() != g.getType())
      return emitOpError("gradient type ")
             << g.getType() << " does not match parameter type " << p.getType();
  // State tensors come grouped by parameter: statesPerParam for each.
  for (auto [i, s] : llvm::enumerate(getState()))
    if (s.getType() != getParams()[i / statesPerParam].getType())
      return emitOpError("state type ")
             << s.getType() << " does not match parameter type "
             << getParams()[i / statesPerParam].getType();
  return success();
}

static int64_t totalElements(ValueRange values) {
  int64_t n = 0;
  for (Value v : values)
    n = satAdd(n, numel(v));
  return n;
}

int64_t OptimizerStepOp::getFlops(FlopConvention c, bool) {
  // Only `full` counts optimizer arithmetic: per element, SGD p -= lr*g (2),
  // momentum adds buf = mu*buf + g (2 more), Adam ~12 (two moment updates,
  // bias corrections, sqrt, division, update), weight decay 2 more.
  if (c != Conv::Full)
    return 0;
  int64_t perElement = getOptimizer() == OptimizerKind::Sgd        ? 2
                       : getOptimizer() == OptimizerKind::Momentum ? 4
                                                                   : 12;
  if (getWeightDecay().convertToDouble() != 0)
    perElement += 2;
  return satMul(perElement, totalElements(getParams()));
}

int64_t OptimizerStepOp::getWorkspaceBytes(const TorchTarget &target) {
  SmallVector<int64_t> sizes;
  getWorkspaceAllocations(target, sizes);
  int64_t bytes = 0;
  for (int64_t size : sizes)
    bytes = satAdd(bytes, size);
  return bytes;
}

void OptimizerStepOp::getWorkspaceAllocations(const TorchTarget &target,
                                              SmallVectorImpl<int64_t> &sizes) {
  OptimizerKind opt = getOptimizer();
  if (getImplementation() == OptimizerImpl::Fused)
    return;
  // One tensor per parameter in each list: the caching allocator rounds
  // each (torch._foreach_sqrt returns a list of tensors).
  auto addList = [&](ValueRange values) {
    for (Value v : values)
      sizes.push_back(tensorBytes(v));
  };
  // foreach Adam/AdamW materializes exp_avg_sq.sqrt() (and in 1.13 its
  // out-of-place + eps) for all params at once; the for-loop form does the
  // same one parameter at a time (one op per parameter here), one list.
  if (opt == OptimizerKind::Adam || opt == OptimizerKind::AdamW) {
    unsigned lists = getImplementation() == OptimizerImpl::Foreach
                         ? getForeachAdamTemporaryLists(target)
                         : 1;
    for (unsigned l = 0; l < lists; ++l)
      addList(getParams());
  }
  // Coupled weight decay (SGD, Adam) adds grad + wd * param as a new tensor.
  if (getWeightDecay().convertToDouble() != 0 && opt != OptimizerKind::AdamW)
    addList(getGrads());
}

StepPhase OptimizerStepOp::getStepPhase() { return StepPhase::Optimizer; }
