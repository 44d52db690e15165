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
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/ErrorHandling.h"

#include <cmath>

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
  if (ArrayRef<bool> of = getGradResults(); !of.empty()) {
    if (of.size() != getForwardType().getNumResults() ||
        (size_t)llvm::count(of, true) != getGrads().size())
      return emitOpError("grad_results must mark one forward result per "
                         "gradient, of ")
             << getForwardType().getNumResults();
  }
  if (llvm::any_of(getWorkspace(), [](int64_t bytes) { return bytes <= 0; }))
    return emitOpError("workspace sizes must be positive");
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
  ArrayRef<int64_t> gradsSaved = getGradsSaved();
  if (!gradsSaved.empty() && gradsSaved.size() != getNumResults())
    return emitOpError("grads_saved has ")
           << gradsSaved.size() << " entries for " << getNumResults()
           << " results";
  for (auto [result, index] : llvm::zip(getResults(), gradsSaved)) {
    if (index < 0)
      continue;
    if (index >= (int64_t)getSaved().size())
      return emitOpError("grads_saved names saved tensor ")
             << index << " of " << getSaved().size();
    if (getSaved()[index].getType() != result.getType())
      return emitOpError("gradient of type ")
             << result.getType() << " is saved tensor " << index << " of type "
             << getSaved()[index].getType();
  }
  return success();
}

Value BackwardOp::getAliasedOperand(unsigned resultIndex) {
  ArrayRef<int64_t> gradsSaved = getGradsSaved();
  if (resultIndex >= gradsSaved.size() || gradsSaved[resultIndex] < 0)
    return Value();
  return getSaved()[gradsSaved[resultIndex]];
}

int64_t BackwardOp::getWorkspaceBytes(const TorchTarget &) {
  return sumAllocations(getWorkspace());
}

void BackwardOp::getWorkspaceAllocations(const TorchTarget &,
                                         SmallVectorImpl<int64_t> &sizes) {
  llvm::append_range(sizes, getWorkspace());
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

//===----------------------------------------------------------------------===//
// Tensor parallelism: nn.all_reduce, nn.all_reduce_grad
//===----------------------------------------------------------------------===//

static LogicalResult verifyTensorParallelRanks(Operation *op, int64_t ranks) {
  if (ranks < 2 || ranks > ParallelAttr::kMaxWorldSize)
    return op->emitOpError("needs 2 <= ranks <= ")
           << ParallelAttr::kMaxWorldSize << ", got " << ranks;
  return success();
}

LogicalResult AllReduceOp::verify() {
  return verifyTensorParallelRanks(*this, getRanks());
}
// The reduction's additions run in the collective (NCCL), not in a kernel
// PyTorch counts.
int64_t AllReduceOp::getFlops(FlopConvention, bool) { return 0; }
bool AllReduceOp::isGradPassthrough(unsigned) { return true; }
void AllReduceOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                  SmallVectorImpl<SavedTensor> &) {}

LogicalResult AllReduceGradOp::verify() {
  return verifyTensorParallelRanks(*this, getRanks());
}
std::optional<SmallVector<int64_t>>
AllReduceGradOp::getResultStrides(ArrayRef<int64_t> in) {
  return SmallVector<int64_t>(in);
}

/// An optional I64Attr `dim` (its accessor reads it unsigned) as signed.
static std::optional<int64_t> signedDim(std::optional<uint64_t> dim) {
  if (!dim)
    return std::nullopt;
  return static_cast<int64_t>(*dim);
}

/// An optional `dim` of a tensor of rank `rank` (verified), counted from
/// the front; absent: the last dim.
static int64_t lastByDefault(std::optional<uint64_t> dim, int64_t rank) {
  int64_t d = signedDim(dim).value_or(-1);
  return d < 0 ? d + rank : d;
}

/// `dim` of a tensor of rank `rank` (negative: from the end), or a
/// failure if it is no dim.
static FailureOr<int64_t> resolveDim(Operation *op, std::optional<int64_t> dim,
                                     int64_t rank) {
  if (rank == 0)
    return op->emitOpError("shards a dim: the tensor needs one");
  int64_t d = dim.value_or(-1);
  if (d < -rank || d >= rank)
    return op->emitOpError("dim ")
           << d << " is out of range for a tensor of rank " << rank;
  return d < 0 ? d + rank : d;
}

/// `full` is `shard` with its dim `dim` `ranks` times as large (the two
/// sides of a gather, a split or a reduce-scatter along `dim`).
static LogicalResult verifyDimShards(Operation *op, int64_t ranks,
                                     std::optional<int64_t> dim,
                                     RankedTensorType shard,
                                     RankedTensorType full) {
  if (failed(verifyTensorParallelRanks(op, ranks)))
    return failure();
  FailureOr<int64_t> d = resolveDim(op, dim, shard.getRank());
  if (failed(d))
    return failure();
  SmallVector<int64_t> expected(shard.getShape());
  int64_t &sharded = expected[*d];
  if (!ShapedType::isDynamic(sharded) &&
      llvm::MulOverflow(sharded, ranks, sharded))
    return op->emitOpError("gathered size does not fit in 64 bits");
  if (full.getElementType() != shard.getElementType() ||
      full.getShape() != ArrayRef<int64_t>(expected))
    return op->emitOpError("the whole tensor must be the shard with ")
           << (dim ? "dim " + std::to_string(*d) : std::string("its last dim"))
           << " times " << ranks << ", "
           << RankedTensorType::get(expected, shard.getElementType())
           << ", got " << full;
  return success();
}

/// The bytes of all_gather_into_tensor's [ranks x d0, ...] buffer that
/// outlive a gather along `dim` into `full`: none where every dim before
/// `dim` has size 1 (the buffer, viewed, is the result: torch's
/// _maybe_view_chunk_cat), else the buffer, as large as `full`, until its
/// chunks are concatenated along `dim`.
static int64_t gatherBufferBytes(Value full, int64_t dim) {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(full.getType()).getShape();
  if (llvm::all_of(shape.take_front(dim), [](int64_t d) { return d == 1; }))
    return 0;
  return tensorBytes(full);
}

LogicalResult AllGatherOutputOp::verify() {
  return verifyDimShards(*this, getRanks(), signedDim(getDim()),
                         cast<RankedTensorType>(getInput().getType()),
                         cast<RankedTensorType>(getOutput().getType()));
}
int64_t AllGatherOutputOp::getGatherDim() {
  return lastByDefault(getDim(), getOutput().getType().getRank());
}
// A collective: no kernel PyTorch counts.
int64_t AllGatherOutputOp::getFlops(FlopConvention, bool) { return 0; }
void AllGatherOutputOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                        SmallVectorImpl<SavedTensor> &) {}
int64_t AllGatherOutputOp::getWorkspaceBytes(const TorchTarget &) {
  return gatherBufferBytes(getOutput(), getGatherDim());
}
// A partial gradient is reduce-scattered: its chunks along the dim are
// first concatenated along dim 0 into a copy (none for dim 0).
void AllGatherOutputOp::getBackwardWorkspace(const TorchTarget &,
                                             ArrayRef<bool>,
                                             SmallVectorImpl<int64_t> &sizes) {
  if (getScatterGrad() && getGatherDim() != 0)
    sizes.push_back(tensorBytes(getOutput()));
}

LogicalResult SplitInputOp::verify() {
  return verifyDimShards(*this, getRanks(), signedDim(getDim()),
                         cast<RankedTensorType>(getOutput().getType()),
                         cast<RankedTensorType>(getInput().getType()));
}
int64_t SplitInputOp::getSplitDim() {
  return lastByDefault(getDim(), getInput().getType().getRank());
}
int64_t SplitInputOp::getFlops(FlopConvention, bool) { return 0; }
void SplitInputOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                   SmallVectorImpl<SavedTensor> &) {}
// The gradient's all_gather_into_tensor buffer.
void SplitInputOp::getBackwardWorkspace(const TorchTarget &, ArrayRef<bool>,
                                        SmallVectorImpl<int64_t> &sizes) {
  if (int64_t bytes = gatherBufferBytes(getInput(), getSplitDim()))
    sizes.push_back(bytes);
}

LogicalResult ReduceScatterOutputOp::verify() {
  auto dim = static_cast<int64_t>(getDim());
  if (dim < 0)
    return emitOpError("needs dim >= 0, got ") << dim;
  return verifyDimShards(*this, getRanks(), dim,
                         cast<RankedTensorType>(getOutput().getType()),
                         cast<RankedTensorType>(getInput().getType()));
}
// The reduction's additions run in the collective, not in a kernel.
int64_t ReduceScatterOutputOp::getFlops(FlopConvention, bool) { return 0; }
void ReduceScatterOutputOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                            SmallVectorImpl<SavedTensor> &) {}
// The chunks along the dim concatenated along dim 0, the collective's input.
int64_t ReduceScatterOutputOp::getWorkspaceBytes(const TorchTarget &) {
  return getDim() == 0 ? 0 : tensorBytes(getInput());
}
void ReduceScatterOutputOp::getBackwardWorkspace(
    const TorchTarget &, ArrayRef<bool>, SmallVectorImpl<int64_t> &sizes) {
  if (int64_t bytes = gatherBufferBytes(getInput(), getDim()))
    sizes.push_back(bytes);
}

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

//===----------------------------------------------------------------------===//
// DeepSpeed ZeRO-1/2: nn.zero_flat_params, nn.zero_partition,
// nn.zero_buffer, nn.zero_reduce, nn.zero_grad_norm
//===----------------------------------------------------------------------===//

LogicalResult ZeroFlatParamsOp::verify() {
  RankedTensorType type = getResult().getType();
  if (type.getRank() != 1)
    return emitOpError("is a flat (rank-1) tensor, got ") << type;
  std::optional<int64_t> ranks;
  if (auto attr = getRanksAttr()) {
    ranks = attr.getInt();
    if (*ranks < 1 || *ranks > ParallelAttr::kMaxWorldSize)
      return emitOpError("needs 1 <= ranks <= ")
             << ParallelAttr::kMaxWorldSize << ", got " << *ranks;
  }
  int64_t elements = 0;
  for (Value param : getParams()) {
    if (cast<RankedTensorType>(param.getType()).getElementType() !=
        type.getElementType())
      return emitOpError("flattens parameters of its own element type, got ")
             << param.getType();
    int64_t n = numel(param);
    elements = satAdd(elements, ranks ? llvm::divideCeil(n, *ranks) : n);
  }
  if (ranks && type.getNumElements() != elements)
    return emitOpError("holds ceil(n / ranks) elements of each parameter, ")
           << elements << ", got " << type;
  if (getParams().empty() || type.getNumElements() < elements)
    return emitOpError("holds at least one parameter and all their "
                       "elements, got ")
           << elements << " elements in " << type;
  return success();
}

MemoryCategory ZeroFlatParamsOp::getMemoryCategory() {
  return MemoryCategory::Parameters;
}
std::string ZeroFlatParamsOp::getStorageName() { return "zero.flat_params"; }

LogicalResult ZeroPartitionOp::verify() {
  RankedTensorType type = getResult().getType();
  auto ranks = static_cast<int64_t>(getRanks());
  if (ranks < 1 || type.getRank() != 1 ||
      satMul(type.getNumElements(), ranks) != numel(getFlat()) ||
      !type.getElementType().isF32())
    return emitOpError("is a 1/ranks slice of the flat parameters in f32, "
                       "got ")
           << type << " of " << getFlat().getType() << " over " << getRanks()
           << " ranks";
  return success();
}

MemoryCategory ZeroPartitionOp::getMemoryCategory() {
  return MemoryCategory::OptimizerState;
}
std::string ZeroPartitionOp::getStorageName() { return "zero.fp32_partition"; }

LogicalResult ZeroBufferOp::verify() {
  StringRef name = getName();
  bool hasSource =
      name == "flat_grad_partition" || name == "single_grad_partition";
  if (!llvm::is_contained({"ipg_buffer", "grads_in_partition",
                           "reduce_scatter_flat", "accumulated_grad",
                           "accumulated_grads_in_partition"},
                          name) &&
      !hasSource)
    return emitOpError("is ipg_buffer, grads_in_partition, "
                       "reduce_scatter_flat, accumulated_grad, "
                       "accumulated_grads_in_partition, flat_grad_partition "
                       "or single_grad_partition, got '")
           << name << "'";
  if (static_cast<bool>(getSource()) != hasSource)
    return emitOpError(hasSource ? "copies a source" : "has no source");
  if (getResult().getType().getRank() != 1)
    return emitOpError("is a flat (rank-1) tensor, got ")
           << getResult().getType();
  return success();
}

LogicalResult ZeroReduceOp::verify() {
  auto elements = static_cast<int64_t>(getElements());
  if (elements < 1 || elements > numel(getBucket()))
    return emitOpError("reduces between 1 and all elements of its bucket, "
                       "got ")
           << getElements();
  return success();
}

int64_t ZeroReduceOp::getWorkspaceBytes(const TorchTarget &) {
  // torch's _flatten_dense_tensors of a single slice is a view of it.
  if (!getFlatten())
    return 0;
  return satMul(
      static_cast<int64_t>(getElements()),
      llvm::divideCeil(
          getBucket().getType().getElementType().getIntOrFloatBitWidth(), 8));
}

int64_t ZeroGradNormOp::getWorkspaceBytes(const TorchTarget &) {
  return satMul(static_cast<int64_t>(getLargest()), 8);
}

//===----------------------------------------------------------------------===//
// Optimizers: the state each keeps per parameter and the temporaries of one
// update. torch.optim's live in the parameter's dtype; bitsandbytes' in
// float32, or 8 bits with a float32 scale per block.
//===----------------------------------------------------------------------===//

/// bitsandbytes' 8-bit optimizers keep 32-bit state for parameters with
/// fewer elements (Optimizer2State's min_8bit_size) and quantize the rest
/// in blocks of 256 (init_state's blocksize).
static constexpr int64_t kMin8BitSize = 4096;
static constexpr int64_t kBlockwiseStateBlock = 256;
/// Paged optimizers page the states of parameters of this many elements or
/// more (get_state_buffer's `p.numel() < 1e5`).
static constexpr int64_t kMinPagedSize = 100000;

bool vram::nn::isBitsAndBytesOptimizer(OptimizerKind optimizer) {
  return optimizer == OptimizerKind::Lion ||
         optimizer == OptimizerKind::AdamW8bit ||
         optimizer == OptimizerKind::PagedAdamW ||
         optimizer == OptimizerKind::PagedAdamW8bit;
}

bool vram::nn::isPagedOptimizer(OptimizerKind optimizer) {
  return optimizer == OptimizerKind::PagedAdamW ||
         optimizer == OptimizerKind::PagedAdamW8bit;
}

bool vram::nn::isPagedOptimizerState(OptimizerKind optimizer,
                                     const TorchTarget &target,
                                     RankedTensorType param,
                                     OptimizerStateKind kind) {
  // Optimizer8bit.get_state_buffer: "> 1 MB" (p.numel() >= 1e5) states of a
  // paged optimizer on CUDA come from get_paged; the CPU falls back to
  // torch.zeros_like, as do the 8-bit states' absmax.
  return isPagedOptimizer(optimizer) && target.device == Device::Cuda &&
         param.getNumElements() >= kMinPagedSize &&
         (kind == OptimizerStateKind::ExpAvg ||
          kind == OptimizerStateKind::ExpAvgSq);
}

bool vram::nn::hasOptimizerImpl(OptimizerKind optimizer, OptimizerImpl impl) {
  if (isBitsAndBytesOptimizer(optimizer))
    return impl == OptimizerImpl::ForLoop;
  if (optimizer == OptimizerKind::Adafactor)
    return impl != OptimizerImpl::Fused;
  return true;
}

void vram::nn::getOptimizerStateSlots(
    OptimizerKind optimizer, RankedTensorType param,
    SmallVectorImpl<OptimizerStateSlot> &slots) {
  auto f32 = param.clone(Float32Type::get(param.getContext()));
  switch (optimizer) {
  case OptimizerKind::Sgd:
    return;
  case OptimizerKind::Momentum:
  case OptimizerKind::SgdNesterov:
    slots.push_back({OptimizerStateKind::MomentumBuffer, param});
    return;
  case OptimizerKind::Adam:
  case OptimizerKind::AdamW:
    slots.push_back({OptimizerStateKind::ExpAvg, param});
    slots.push_back({OptimizerStateKind::ExpAvgSq, param});
    return;
  case OptimizerKind::Adafactor: {
    // The second moment factored over the last two dimensions: a row
    // vector [..., R, 1] and a column vector [..., 1, C] (p.grad.new_zeros).
    if (param.getRank() < 2) {
      slots.push_back({OptimizerStateKind::Variance, param});
      return;
    }
    SmallVector<int64_t> rows(param.getShape()), cols(param.getShape());
    rows.back() = 1;
    cols[cols.size() - 2] = 1;
    slots.push_back({OptimizerStateKind::RowVar, param.clone(rows)});
    slots.push_back({OptimizerStateKind::ColVar, param.clone(cols)});
    return;
  }
  case OptimizerKind::Lion:
    slots.push_back({OptimizerStateKind::ExpAvg, f32});
    return;
  case OptimizerKind::PagedAdamW:
    // optim_bits=32: state1 and state2 in float32, whatever the dtype.
    slots.push_back({OptimizerStateKind::ExpAvg, f32});
    slots.push_back({OptimizerStateKind::ExpAvgSq, f32});
    return;
  case OptimizerKind::AdamW8bit:
  case OptimizerKind::PagedAdamW8bit: {
    int64_t n = param.getNumElements();
    if (n < kMin8BitSize) {
      slots.push_back({OptimizerStateKind::ExpAvg, f32});
      slots.push_back({OptimizerStateKind::ExpAvgSq, f32});
      return;
    }
    auto u8 = param.clone(
        IntegerType::get(param.getContext(), 8, IntegerType::Unsigned));
    auto absmax = RankedTensorType::get(
        {static_cast<int64_t>(llvm::divideCeil(n, kBlockwiseStateBlock))},
        Float32Type::get(param.getContext()));
    slots.push_back({OptimizerStateKind::ExpAvg, u8});
    slots.push_back({OptimizerStateKind::ExpAvgSq, u8});
    slots.push_back({OptimizerStateKind::Absmax1, absmax});
    slots.push_back({OptimizerStateKind::Absmax2, absmax});
    return;
  }
  }
  llvm_unreachable("unknown optimizer");
}

void vram::nn::getOptimizerBuffers(OptimizerKind optimizer,
                                   ArrayRef<RankedTensorType> params,
                                   SmallVectorImpl<OptimizerBuffer> &buffers) {
  if ((optimizer != OptimizerKind::AdamW8bit &&
       optimizer != OptimizerKind::PagedAdamW8bit) ||
      llvm::none_of(params, [](RankedTensorType p) {
        return p.getNumElements() >= kMin8BitSize;
      }))
    return;
  // create_dynamic_map(): 256 float32 values, one per 8-bit code.
  auto map = RankedTensorType::get(
      {256}, Float32Type::get(params.front().getContext()));
  buffers.push_back({"qmap1", map});
  buffers.push_back({"qmap2", map});
}

MemoryCategory OptimizerBufferOp::getMemoryCategory() {
  return MemoryCategory::OptimizerState;
}
std::string OptimizerBufferOp::getStorageName() {
  return ("optimizer." + getName()).str();
}

LogicalResult OptimizerStepOp::verify() {
  if (getParams().size() != getGrads().size())
    return emitOpError("needs one gradient per parameter");
  for (auto [p, g] : llvm::zip(getParams(), getGrads()))
    if (p.getType() != g.getType())
      return emitOpError("gradient type ")
             << g.getType() << " does not match parameter type " << p.getType();
  if (!hasOptimizerImpl(getOptimizer(), getImplementation()))
    return emitOpError() << stringifyEnum(getOptimizer()) << " has no "
                         << stringifyEnum(getImplementation())
                         << " implementation";
  // State tensors come grouped by parameter, as the optimizer keeps them.
  ValueRange state = getState();
  size_t next = 0;
  for (Value p : getParams()) {
    SmallVector<OptimizerStateSlot> slots;
    getOptimizerStateSlots(getOptimizer(), cast<RankedTensorType>(p.getType()),
                           slots);
    for (const OptimizerStateSlot &slot : slots) {
      if (next == state.size())
        return emitOpError("needs ")
               << stringifyEnum(slot.kind) << " of type " << slot.type
               << " for parameter type " << p.getType()
               << " (state tensors run out)";
      Value s = state[next++];
      auto def = s.getDefiningOp<OptimizerStateOp>();
      if (s.getType() != slot.type || (def && def.getKind() != slot.kind))
        return emitOpError("state ")
               << next - 1 << " should be " << stringifyEnum(slot.kind)
               << " of type " << slot.type << " for parameter type "
               << p.getType() << ", got "
               << (def ? stringifyEnum(def.getKind()) : StringRef("a value"))
               << " of type " << s.getType();
    }
  }
  if (next != state.size())
    return emitOpError("has ")
           << state.size() - next << " more state tensor(s) than "
           << stringifyEnum(getOptimizer()) << " keeps for its parameters";
  return success();
}

static int64_t totalElements(ValueRange values) {
  int64_t n = 0;
  for (Value v : values)
    n = satAdd(n, numel(v));
  return n;
}

/// Arithmetic per element of one update, without weight decay: SGD
/// p -= lr*g (2); momentum adds buf = mu*buf + g (2 more), Nesterov
/// g + mu*buf (2 more); Lion interpolates twice, takes the sign and updates
/// (~8); Adafactor squares, averages, interpolates the factors and scales
/// (~10); Adam ~12 (two moment updates, bias corrections, sqrt, division,
/// update), its 8-bit form also dequantizes and requantizes both moments
/// (~16).
static int64_t getFlopsPerElement(OptimizerKind optimizer) {
  switch (optimizer) {
  case OptimizerKind::Sgd:
    return 2;
  case OptimizerKind::Momentum:
    return 4;
  case OptimizerKind::SgdNesterov:
    return 6;
  case OptimizerKind::Lion:
    return 8;
  case OptimizerKind::Adafactor:
    return 10;
  case OptimizerKind::Adam:
  case OptimizerKind::AdamW:
  case OptimizerKind::PagedAdamW:
    return 12;
  case OptimizerKind::AdamW8bit:
  case OptimizerKind::PagedAdamW8bit:
    return 16;
  }
  llvm_unreachable("unknown optimizer");
}

int64_t OptimizerStepOp::getFlops(FlopConvention c, bool) {
  // Only `full` counts optimizer arithmetic; weight decay adds 2 an element.
  if (c != Conv::Full)
    return 0;
  int64_t perElement = getFlopsPerElement(getOptimizer());
  if (getWeightDecay().convertToDouble() != 0)
    perElement += 2;
  return satMul(perElement, totalElements(getParams()));
}

/// torch.optim.Adafactor's temporaries at their peak (torch/optim/
/// _adafactor.py). Each matrix's update is var_estimate = row_var @ col_var,
/// parameter-sized, divided by row_var.mean(dim=-2) ([..., 1, 1]); a
/// vector's is variance.clone() after grad * grad. The for-loop form keeps
/// one parameter's, and its row_mean, col_mean (or grad_squared) stay bound
/// to their names. foreach runs the matrices and the vectors as two groups,
/// in the order their first parameter comes: each group's updates stay
/// alive into the next group, row_var_means die before it.
static void getAdafactorTemporaries(ValueRange params, OptimizerImpl impl,
                                    SmallVectorImpl<int64_t> &sizes) {
  auto reduced = [](RankedTensorType type, ArrayRef<int64_t> dims) {
    SmallVector<int64_t> shape(type.getShape());
    for (int64_t d : dims)
      shape[shape.size() + d] = 1;
    return tensorBytes(type.clone(shape));
  };
  SmallVector<int64_t> matrices, rowVarMeans, vectors;
  for (Value p : params) {
    auto type = cast<RankedTensorType>(p.getType());
    if (type.getRank() < 2) {
      vectors.push_back(tensorBytes(type));
      if (impl == OptimizerImpl::ForLoop)
        vectors.push_back(tensorBytes(type)); // grad_squared
      continue;
    }
    matrices.push_back(tensorBytes(type));
    rowVarMeans.push_back(reduced(type, {-2, -1}));
    if (impl == OptimizerImpl::ForLoop) {
      matrices.push_back(reduced(type, {-1})); // row_mean
      matrices.push_back(reduced(type, {-2})); // col_mean
    }
  }
  auto total = [](ArrayRef<int64_t> list) {
    int64_t bytes = 0;
    for (int64_t b : list)
      bytes = satAdd(bytes, b);
    return bytes;
  };
  sizes.append(matrices);
  bool vectorsFirst =
      !params.empty() &&
      cast<RankedTensorType>(params.front().getType()).getRank() < 2;
  if (vectorsFirst || total(vectors) >= total(rowVarMeans))
    sizes.append(vectors);
  if (vectorsFirst || total(rowVarMeans) > total(vectors))
    sizes.append(rowVarMeans);
}

int64_t OptimizerStepOp::getWorkspaceBytes(const TorchTarget &target) {
  return sumWorkspaceAllocations(*this, target);
}

void OptimizerStepOp::getWorkspaceAllocations(const TorchTarget &target,
                                              SmallVectorImpl<int64_t> &sizes) {
  OptimizerKind opt = getOptimizer();
  OptimizerImpl impl = getImplementation();
  // Fused kernels and bitsandbytes' per-parameter kernels update in place.
  if (impl == OptimizerImpl::Fused || isBitsAndBytesOptimizer(opt))
    return;
  // One tensor per parameter in each list: the caching allocator rounds
  // each (torch._foreach_sqrt returns a list of tensors).
  auto addList = [&](ValueRange values) {
    for (Value v : values)
      sizes.push_back(tensorBytes(v));
  };
  switch (opt) {
  case OptimizerKind::Adam:
  case OptimizerKind::AdamW: {
    // foreach Adam/AdamW materializes exp_avg_sq.sqrt() (and in 1.13 its
    // out-of-place + eps) for all params at once. The for-loop form's
    // (exp_avg_sq.sqrt() / bias_correction2_sqrt) holds the root and the
    // quotient of one parameter at once (one op per parameter here),
    // measured with the update in backward (torch 2.15), and in one
    // step() call the previous parameter's denom besides, still bound to
    // its name (measured: ViTForImageClassification, fc1.bias's 4,096
    // bytes at fc2.weight's update, tp.py vit_plain_adam).
    unsigned lists = impl == OptimizerImpl::Foreach
                         ? getForeachAdamTemporaryLists(target)
                         : 2;
    for (unsigned l = 0; l < lists; ++l)
      addList(getParams());
    if (Value held = getHeldDenomParam())
      sizes.push_back(tensorBytes(held));
    break;
  }
  case OptimizerKind::SgdNesterov:
    // The for-loop form's grad.add(buf, alpha=momentum) is a new tensor;
    // foreach adds into the gradients in place.
    if (impl == OptimizerImpl::ForLoop)
      addList(getParams());
    break;
  case OptimizerKind::Adafactor:
    getAdafactorTemporaries(getParams(), impl, sizes);
    break;
  default:
    break;
  }
  // Coupled weight decay (SGD, Adam) adds grad + wd * param as a new tensor;
  // AdamW and Adafactor decay the parameter in place.
  if (getWeightDecay().convertToDouble() != 0 && opt != OptimizerKind::AdamW &&
      opt != OptimizerKind::Adafactor)
    addList(getGrads());
}

Value OptimizerStepOp::getHeldDenomParam() {
  auto isAdam = [](OptimizerStepOp op) {
    return op.getImplementation() == OptimizerImpl::ForLoop &&
           (op.getOptimizer() == OptimizerKind::Adam ||
            op.getOptimizer() == OptimizerKind::AdamW);
  };
  // The previous nn op (a lowering inserts its own ops in between). With
  // the optimizer in backward each parameter has its own optimizer: every
  // update is a step() call of its own.
  Operation *before = (*this)->getPrevNode();
  while (before && !isa<NNDialect>(before->getDialect()))
    before = before->getPrevNode();
  auto previous = dyn_cast_or_null<OptimizerStepOp>(before);
  auto func = (*this)->getParentOfType<FunctionOpInterface>();
  if (!previous || !isAdam(*this) || !isAdam(previous) ||
      previous.getOptimizer() != getOptimizer() ||
      (func && func->hasAttr(NNDialect::kOptimizerInBackwardAttrName)))
    return {};
  return previous.getParams().back();
}

StepPhase OptimizerStepOp::getStepPhase() { return StepPhase::Optimizer; }

//===----------------------------------------------------------------------===//
// nn.ema_copy / nn.ema_update
//===----------------------------------------------------------------------===//

LogicalResult EmaCopyOp::verify() {
  if (!isa_and_nonnull<ParamOp, BufferOp>(getSource().getDefiningOp()))
    return emitOpError("copies an nn.param or nn.buffer");
  return success();
}

MemoryCategory EmaCopyOp::getMemoryCategory() {
  return isa<BufferOp>(getSource().getDefiningOp())
             ? MemoryCategory::Buffers
             : MemoryCategory::OptimizerState;
}

std::string EmaCopyOp::getStorageName() {
  Operation *source = getSource().getDefiningOp();
  StringRef name = isa<ParamOp>(source) ? cast<ParamOp>(source).getName()
                                        : cast<BufferOp>(source).getName();
  return (name + ".ema").str();
}

LogicalResult ClipGradNormOp::verify() {
  if (getGrads().empty())
    return emitOpError("needs at least one gradient");
  if (!(getMaxNorm().convertToDouble() > 0))
    return emitOpError("max_norm must be positive, got ")
           << getMaxNorm().convertToDouble();
  return success();
}

StepPhase ClipGradNormOp::getStepPhase() { return StepPhase::Optimizer; }

int64_t ClipGradNormOp::getFlops(FlopConvention c, bool) {
  // The norm (a square and an add an element) and the scaling (a multiply),
  // counted only under `full`.
  if (c != FlopConvention::Full)
    return 0;
  return satMul(totalElements(getGrads()), 3);
}

void ClipGradNormOp::getWorkspaceAllocations(const TorchTarget &,
                                             SmallVectorImpl<int64_t> &sizes) {
  // _get_total_norm: norms.extend(torch._foreach_norm(grads)) per device
  // and dtype, then vector_norm(torch.stack(norms)) with the list alive
  // (measured, torch 2.15 CPU: 5 fp32 gradients 44 B, 5 bf16 22 B, 5 bf16
  // and 1 fp32 42 B).
  unsigned widest = 0;
  for (Value grad : getGrads()) {
    unsigned bits =
        getElementTypeOrSelf(grad.getType()).getIntOrFloatBitWidth();
    widest = std::max(widest, bits);
    sizes.push_back(llvm::divideCeil(bits, 8));
  }
  int64_t element = llvm::divideCeil(widest, 8);
  sizes.push_back(satMul(static_cast<int64_t>(getGrads().size()), element));
  sizes.push_back(element);
}

int64_t ClipGradNormOp::getWorkspaceBytes(const TorchTarget &target) {
  return sumWorkspaceAllocations(*this, target);
}

LogicalResult EmaUpdateOp::verify() {
  if (getParams().size() != getAveraged().size())
    return emitOpError("needs one averaged copy per parameter, got ")
           << getAveraged().size() << " for " << getParams().size();
  for (auto [param, averaged] : llvm::zip(getParams(), getAveraged()))
    if (param.getType() != averaged.getType())
      return emitOpError("averaged copy ")
             << averaged.getType() << " does not match its parameter "
             << param.getType();
  return success();
}

StepPhase EmaUpdateOp::getStepPhase() { return StepPhase::Optimizer; }

int64_t EmaUpdateOp::getFlops(FlopConvention c, bool) {
  // lerp: a + w (b - a), 3 FLOPs an element, counted only under `full`
  // (torch.utils.flop_counter and fvcore count no elementwise ops).
  if (c != FlopConvention::Full)
    return 0;
  int64_t flops = 0;
  for (Value param : getParams())
    flops = satAdd(flops, satMul(numel(param), 3));
  return flops;
}

//===----------------------------------------------------------------------===//
// nn.kv_cache_update / nn.kv_cache_past / nn.next_token
//===----------------------------------------------------------------------===//

/// Caches are [batch, kv heads, tokens, head dim]: `a` and `b` agree on all
/// but the tokens and on the element type.
static LogicalResult verifyCacheLike(Operation *op, RankedTensorType a,
                                     RankedTensorType b, StringRef what) {
  if (a.getRank() != 4 || b.getRank() != 4)
    return op->emitOpError("caches are [batch, kv heads, tokens, head dim], "
                           "got ")
           << what << " of rank " << a.getRank() << " and " << b.getRank();
  if (a.getElementType() != b.getElementType() ||
      a.getDimSize(0) != b.getDimSize(0) ||
      a.getDimSize(1) != b.getDimSize(1) || a.getDimSize(3) != b.getDimSize(3))
    return op->emitOpError() << what << " " << a << " and " << b
                             << " differ in more than their tokens";
  return success();
}

LogicalResult KvCacheUpdateOp::verify() {
  auto states = cast<RankedTensorType>(getStates().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (failed(verifyCacheLike(*this, states, result, "states and result")))
    return failure();
  int64_t past = 0;
  if (Value p = getPast()) {
    auto pastType = cast<RankedTensorType>(p.getType());
    if (failed(verifyCacheLike(*this, pastType, result, "past and result")))
      return failure();
    past = pastType.getDimSize(2);
  }
  if (std::optional<int64_t> block = getBlockSize()) {
    if (!getStaticCache())
      return emitOpError("has a block_size but no static_cache: a paged "
                         "cache is a buffer written in place");
    if (*block < 1)
      return emitOpError("block_size must be >= 1, got ") << *block;
    if (result.getDimSize(2) % *block)
      return emitOpError("holds whole blocks of ")
             << *block << " positions, not " << result.getDimSize(2);
  }
  // A static cache's buffer keeps its max_cache_len positions.
  if (getStaticCache()) {
    if (getPast() && getPast().getType() != result)
      return emitOpError("writes a static cache in place: the result must "
                         "be the past buffer's type, ")
             << getPast().getType() << ", not " << result;
    if (states.getDimSize(2) > result.getDimSize(2))
      return emitOpError("writes ")
             << states.getDimSize(2) << " tokens into a static cache of "
             << result.getDimSize(2) << " positions";
    return success();
  }
  if (result.getDimSize(2) != past + states.getDimSize(2))
    return emitOpError("appends ")
           << states.getDimSize(2) << " tokens to " << past
           << ": the result must have " << past + states.getDimSize(2)
           << ", not " << result.getDimSize(2);
  return success();
}

LogicalResult KvCacheReorderOp::verify() {
  auto type = cast<RankedTensorType>(getCache().getType());
  return verifyCacheLike(*this, type, type, "cache");
}

Value KvCacheUpdateOp::getAliasedOperand(unsigned) {
  return getStaticCache() ? getPast() : Value();
}

bool KvCacheUpdateOp::isGradPassthrough(unsigned index) {
  return getOperand(index) == getStates();
}
void KvCacheUpdateOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                      SmallVectorImpl<SavedTensor> &) {
  // CatBackward keeps only the sizes it slices the gradient by.
}

LogicalResult KvCachePastOp::verify() {
  auto cache = cast<RankedTensorType>(getCache().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (failed(verifyCacheLike(*this, cache, result, "cache and result")))
    return failure();
  if (std::optional<int64_t> window = getWindow()) {
    if (*window < 1 || result.getDimSize(2) > *window)
      return emitOpError("a sliding window of ")
             << *window << " keeps at most that many tokens, not "
             << result.getDimSize(2);
    return success();
  }
  if (result.getDimSize(2) < cache.getDimSize(2))
    return emitOpError("a cache only grows: ")
           << cache.getDimSize(2) << " tokens cannot become "
           << result.getDimSize(2);
  return success();
}

NextTokenOp::Processors
NextTokenOp::getProcessors(bool sample, FloatAttr repetitionPenalty,
                           FloatAttr temperature, IntegerAttr topK,
                           FloatAttr topP, FloatAttr minP) {
  // GenerationMixin._get_logits_processor adds each only when it changes
  // something, and the warpers only when sampling.
  Processors p;
  p.repetitionPenalty =
      repetitionPenalty && repetitionPenalty.getValueAsDouble() != 1.0;
  if (!sample)
    return p;
  p.temperature = temperature && temperature.getValueAsDouble() != 1.0;
  p.topK = topK && topK.getInt() != 0;
  p.topP = topP && topP.getValueAsDouble() < 1.0;
  p.minP = static_cast<bool>(minP);
  return p;
}

LogicalResult NextTokenOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  auto logits = dyn_cast<RankedTensorType>(adaptor.getLogits().getType());
  if (!logits || logits.getRank() != 3)
    return emitOptionalError(location, "nn.next_token takes the last "
                                       "position's logits [batch, 1, vocab]");
  int64_t batch = logits.getDimSize(0);
  auto scores = RankedTensorType::get({batch, logits.getDimSize(2)},
                                      Float32Type::get(context));
  types.push_back(scores);
  types.push_back(
      RankedTensorType::get({batch, 1}, IntegerType::get(context, 64)));
  bool sample = static_cast<bool>(adaptor.getSampleAttr());
  if (getProcessors(sample, adaptor.getRepetitionPenaltyAttr(),
                    adaptor.getTemperatureAttr(), adaptor.getTopKAttr(),
                    adaptor.getTopPAttr(), adaptor.getMinPAttr())
          .any())
    types.push_back(scores);
  if (sample)
    types.push_back(scores);
  return success();
}

LogicalResult NextTokenOp::verify() {
  auto logits = cast<RankedTensorType>(getLogits().getType());
  auto scores = cast<RankedTensorType>(getScores().getType());
  auto tokens = cast<RankedTensorType>(getTokens().getType());
  int64_t batch = logits.getRank() == 3 ? logits.getDimSize(0) : -1;
  if (logits.getRank() != 3 || logits.getDimSize(1) != 1)
    return emitOpError("takes the last position's logits [batch, 1, vocab], "
                       "got ")
           << logits;
  if (scores.getShape() != ArrayRef<int64_t>{batch, logits.getDimSize(2)} ||
      !scores.getElementType().isF32())
    return emitOpError("scores are the float32 [batch, vocab] copy, got ")
           << scores;
  if (tokens.getShape() != ArrayRef<int64_t>{batch, 1} ||
      !tokens.getElementType().isSignlessInteger(64))
    return emitOpError("tokens are [batch, 1] int64, got ") << tokens;
  if (!getSample() &&
      (getTemperatureAttr() || getTopKAttr() || getTopPAttr() || getMinPAttr()))
    return emitOpError(
        "temperature, top_k, top_p and min_p are sampling's "
        "warpers: they need `sample` (generate(do_sample=True))");
  if (auto p = getMinPAttr();
      p && !(p.getValueAsDouble() >= 0.0 && p.getValueAsDouble() <= 1.0))
    return emitOpError("min_p must be in [0, 1], got ") << p.getValueAsDouble();
  if (auto r = getRepetitionPenaltyAttr();
      r && !(r.getValueAsDouble() > 0.0 && std::isfinite(r.getValueAsDouble())))
    return emitOpError("repetition_penalty must be a finite number > 0, got ")
           << r.getValueAsDouble();
  if (getProcessors().repetitionPenalty &&
      (!getInputLengthAttr() || getInputLengthAttr().getInt() < 1))
    return emitOpError("repetition_penalty reads the sequences so far: it "
                       "needs their input_length >= 1");
  if (auto t = getTemperatureAttr();
      t && !(t.getValueAsDouble() > 0.0 && std::isfinite(t.getValueAsDouble())))
    return emitOpError("temperature must be a finite number > 0, got ")
           << t.getValueAsDouble();
  if (auto k = getTopKAttr(); k && k.getInt() < 0)
    return emitOpError("top_k must be >= 0 (0: no top-k warper), got ")
           << k.getInt();
  if (auto p = getTopPAttr();
      p && !(p.getValueAsDouble() > 0.0 && p.getValueAsDouble() <= 1.0))
    return emitOpError("top_p must be in (0, 1], got ") << p.getValueAsDouble();
  // The previous step's scores and held tensors, each as this step's.
  if (!getPrevious().empty() && getPrevious().size() != 1 + getHeld().size())
    return emitOpError("previous are the previous step's scores and held "
                       "tensors: ")
           << 1 + getHeld().size() << " values, got " << getPrevious().size();
  for (Value v : llvm::concat<Value>(getPrevious(), getHeld()))
    if (v.getType() != scores)
      return emitOpError("previous and held tensors are float32 [batch, "
                         "vocab] as the scores, got ")
             << v.getType();
  return success();
}

/// What _sample allocates and frees choosing the tokens, in its order: the
/// peak bytes above those alive before the op (the previous step's
/// tensors, which it frees as it rebinds its variables; the logits are
/// read throughout).
static int64_t getNextTokenPeak(NextTokenOp op) {
  auto scores = cast<RankedTensorType>(op.getScores().getType());
  int64_t batch = scores.getDimSize(0), vocab = scores.getDimSize(1);
  int64_t elements = saturatingMul(batch, vocab);
  int64_t f32 = saturatingMul(elements, 4), i64 = saturatingMul(elements, 8);
  int64_t live = 0, peak = 0;
  for (Value v : op.getPrevious())
    live = saturatingAdd(live, tensorBytes(v));
  peak = live;
  auto alloc = [&](int64_t bytes) {
    live = saturatingAdd(live, bytes);
    peak = std::max(peak, live);
  };
  auto free = [&](int64_t bytes) { live -= bytes; };
  ValueRange previous = op.getPrevious();
  NextTokenOp::Processors w = op.getProcessors();
  // next_token_logits: a float32 copy; the previous one goes.
  alloc(f32);
  if (!previous.empty())
    free(f32);
  // Each processor returns a new tensor; the chain drops the one before it
  // (not next_token_logits, which _sample keeps).
  int64_t processed = 0; // the current processed scores' bytes, or 0
  auto replace = [&](int64_t bytes) {
    free(processed);
    processed = bytes;
  };
  if (w.repetitionPenalty) {
    // The ids clamped (int64 [B, L]), the scores padded by a column, the
    // gathered scores, torch.where(score < 0, score * p, score / p) (a
    // mask and two products dropped after it, the gathered ones at the
    // rebinding), scatter: a [B, V + 1] tensor viewed as [B, V].
    int64_t read = saturatingMul(batch, op.getInputLengthAttr().getInt());
    int64_t padded = saturatingMul(batch, vocab + 1, 4);
    alloc(saturatingMul(read, 8));
    alloc(padded);
    alloc(saturatingMul(read, 4));
    alloc(read);
    alloc(saturatingMul(read, 8));
    alloc(saturatingMul(read, 4));
    free(saturatingAdd(read, saturatingMul(read, 8)));
    free(saturatingMul(read, 4));
    alloc(padded);
    free(saturatingAdd(saturatingMul(read, 12), padded));
    replace(padded);
  }
  if (w.temperature) { // scores / temperature
    alloc(f32);
    replace(f32);
  }
  if (w.topK) {
    // scores < torch.topk(scores, k)[0][..., -1, None]: the values and
    // indices, the indices dropped with the tuple, a bool mask; then
    // masked_fill.
    int64_t k = std::min<int64_t>(op.getTopKAttr().getInt(), vocab);
    int64_t kept = saturatingMul(batch, k);
    alloc(saturatingAdd(saturatingMul(kept, 4), saturatingMul(kept, 8)));
    free(saturatingMul(kept, 8));
    alloc(elements);
    free(saturatingMul(kept, 4));
    alloc(f32);
    free(elements);
    replace(f32);
  }
  if (w.topP) {
    // torch.sort (values, int64 indices), softmax, cumsum (the softmax
    // dropped), `<=` and scatter (bool masks), masked_fill.
    alloc(f32);
    alloc(i64);
    alloc(f32);
    alloc(f32);
    free(f32);
    alloc(elements);
    alloc(elements);
    alloc(f32);
    free(saturatingAdd(saturatingAdd(f32, i64), saturatingAdd(f32, elements)));
    free(elements);
    replace(f32);
  }
  if (w.minP) {
    // softmax, amax and its scaling ([B, 1] each), `<` (a bool mask),
    // topk(probs, 1): [B, 1] values (dropped with the tuple) and int64
    // indices; masked_fill; then the locals go.
    int64_t column = saturatingMul(batch, 4);
    int64_t locals = saturatingAdd(saturatingAdd(f32, elements),
                                   saturatingMul(batch, 4 + 4 + 8));
    alloc(f32);
    alloc(column);
    alloc(column);
    alloc(elements);
    alloc(saturatingMul(batch, 12));
    free(column);
    alloc(f32);
    free(locals);
    replace(f32);
  }
  // next_token_scores rebound: the previous step's processed scores go.
  if (w.any() && !previous.empty())
    free(tensorBytes(previous[1]));
  int64_t tokens = saturatingMul(batch, 8);
  if (op.getSample()) {
    // probs = softmax(next_token_scores), the previous probs dropped;
    // multinomial(probs, 1) divides by a tensor of exponentials and takes
    // the argmax (Distributions.cpp's one-sample path).
    alloc(f32);
    if (!previous.empty())
      free(f32);
    alloc(f32);
    alloc(tokens);
    free(f32);
  } else {
    alloc(tokens);
  }
  return peak;
}

Value NextTokenOp::getAliasedOperand(unsigned resultIndex) {
  // scores, tokens, held...: each kept tensor replaces the previous step's.
  if (getPrevious().empty() || resultIndex == 1)
    return Value();
  return getPrevious()[resultIndex == 0 ? 0 : resultIndex - 1];
}

int64_t NextTokenOp::getWorkspaceBytes(const TorchTarget &) {
  // The analysis counts, for the whole op, the results (in the previous
  // tensors' places when they replace them): the workspace is what
  // _sample's order adds above them.
  int64_t counted = tensorBytes(getTokens());
  for (Value v : getPrevious().empty() ? ValueRange(getResults())
                                       : ValueRange(getPrevious()))
    if (v != getTokens())
      counted = saturatingAdd(counted, tensorBytes(v));
  return std::max<int64_t>(0, getNextTokenPeak(*this) - counted);
}

int64_t NextTokenOp::getFlops(FlopConvention c, bool) {
  // A copy and an argmax: no multiply-adds; `full` counts the argmax's
  // comparisons, one an element.
  return c == FlopConvention::Full ? numel(getLogits()) : 0;
}
