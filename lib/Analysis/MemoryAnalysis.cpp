//===- MemoryAnalysis.cpp - liveness-based peak memory --------------------===//
//
// One pass to find storage roots, categories and last uses, one sweep to
// track live bytes (allocation at the defining op, release after the last
// use of any alias), and one pass over the roots alive at the peak. All
// linear in the number of ops and uses.
//
//===----------------------------------------------------------------------===//

#include "vram/Analysis/MemoryAnalysis.h"
#include "vram/Dialect/NN/NNOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace vram;

llvm::StringRef vram::stringify(MemoryCategory category) {
  switch (category) {
  case MemoryCategory::Parameters:
    return "parameters";
  case MemoryCategory::Buffers:
    return "buffers";
  case MemoryCategory::Inputs:
    return "inputs";
  case MemoryCategory::Activations:
    return "activations";
  case MemoryCategory::Gradients:
    return "gradients";
  case MemoryCategory::OptimizerState:
    return "optimizer_state";
  case MemoryCategory::Temporaries:
    return "temporaries";
  }
  llvm_unreachable("unknown category");
}

std::string vram::describeTensor(Value value) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return llvm::formatv("input #{0}", arg.getArgNumber()).str();
  Operation *def = value.getDefiningOp();
  if (auto param = dyn_cast<nn::ParamOp>(def))
    return param.getName().str();
  if (auto buffer = dyn_cast<nn::BufferOp>(def))
    return buffer.getName().str();
  if (auto state = dyn_cast<nn::OptimizerStateOp>(def))
    return (describeTensor(state.getParam()) + "." + state.getKind()).str();
  std::string layer = getLayerName(def->getLoc());
  std::string what = def->getName().getStringRef().str();
  if (auto saved = dyn_cast<nn::SavedOp>(def))
    what += " " + saved.getKind().str();
  if (auto backward = dyn_cast<nn::BackwardOp>(def))
    what = "grad of " + backward.getForwardOp().str();
  return layer.empty() ? what : layer + " (" + what + ")";
}

namespace {
struct Storage {
  Value root;
  int64_t bytes = 0;
  unsigned def = 0;     ///< index of the defining op (0 for persistent)
  unsigned lastUse = 0; ///< index of the last op using any alias
  bool persistent = false;
  bool saved = false;           ///< kept by a backward node
  bool savedByModel = false;    ///< kept by a node of the model (not the loss)
  Operation *savedBy = nullptr; ///< the last backward node keeping it
  bool gradient = false;        ///< a parameter's .grad
};
} // namespace

static MemoryCategory categorize(const Storage &s) {
  Value root = s.root;
  if (isa<BlockArgument>(root))
    return MemoryCategory::Inputs;
  Operation *def = root.getDefiningOp();
  if (isa<nn::ParamOp>(def))
    return MemoryCategory::Parameters;
  if (isa<nn::BufferOp>(def))
    return MemoryCategory::Buffers;
  if (isa<nn::OptimizerStateOp>(def))
    return MemoryCategory::OptimizerState;
  if (s.gradient)
    return MemoryCategory::Gradients;
  if (s.saved)
    return MemoryCategory::Activations;
  return MemoryCategory::Temporaries;
}

FailureOr<MemoryResult> vram::analyzeMemory(func::FuncOp step, unsigned topK) {
  if (!step.getBody().hasOneBlock())
    return step.emitError("memory analysis needs a single-block function");
  Block &body = step.getBody().front();
  bool persistentGrads = step->hasAttr(kPersistentGradsAttr);

  std::vector<Storage> storages;
  DenseMap<Value, unsigned> storageOf; // value -> index into storages
  std::vector<Operation *> ops;
  ops.push_back(nullptr); // index 0: before the first op

  auto addStorage = [&](Value v, unsigned index,
                        bool persistent) -> LogicalResult {
    std::optional<int64_t> bytes = getTensorBytes(v.getType());
    if (!bytes)
      return emitError(v.getLoc())
             << "tensor size of " << v.getType()
             << " is not static or does not fit in 64 bits";
    storageOf[v] = storages.size();
    storages.push_back({v, *bytes, index, index, persistent});
    return success();
  };

  for (BlockArgument arg : body.getArguments())
    if (failed(addStorage(arg, 0, /*persistent=*/true)))
      return failure();

  // Pass 1: roots, uses, categories.
  for (Operation &op : body) {
    unsigned index = ops.size();
    ops.push_back(&op);
    for (Value operand : op.getOperands()) {
      auto it = storageOf.find(operand);
      if (it != storageOf.end())
        storages[it->second].lastUse =
            std::max(storages[it->second].lastUse, index);
    }
    if (isa<func::ReturnOp>(op))
      continue;
    bool persistent = isa<nn::ParamOp, nn::BufferOp, nn::OptimizerStateOp>(op);
    auto aliasing = dyn_cast<nn::AliasingOpInterface>(op);
    for (OpResult result : op.getResults()) {
      Value aliased = aliasing
                          ? aliasing.getAliasedOperand(result.getResultNumber())
                          : Value();
      if (aliased && storageOf.count(aliased)) {
        storageOf[result] = storageOf[aliased];
        continue;
      }
      if (failed(addStorage(result, persistent ? 0 : index, persistent)))
        return failure();
    }
    if (auto backward = dyn_cast<nn::BackwardOp>(op)) {
      auto forwardName = RegisteredOperationName::lookup(
          backward.getForwardOp(), op.getContext());
      bool isLoss = forwardName && forwardName->hasTrait<nn::LossOpTrait>();
      for (Value saved : backward.getSaved()) {
        Storage &s = storages[storageOf[saved]];
        s.saved = true;
        if (!isLoss) {
          s.savedByModel = true;
          s.savedBy = &op;
        }
      }
    }
    if (auto update = dyn_cast<nn::OptimizerStepOp>(op))
      for (Value grad : update.getGrads())
        storages[storageOf[grad]].gradient = true;
  }
  unsigned end = ops.size();
  // Values returned by the step outlive it.
  if (Operation *terminator = body.getTerminator())
    for (Value v : terminator->getOperands())
      if (auto it = storageOf.find(v); it != storageOf.end())
        storages[it->second].lastUse = end;
  for (Storage &s : storages)
    if (persistentGrads && s.gradient) {
      s.persistent = true;
      s.def = 0;
    }

  // Pass 2: sweep. Storage is allocated when its op runs and released after
  // the op that last uses it.
  MemoryResult result;
  std::vector<SmallVector<unsigned, 2>> allocatedAt(end + 1),
      releasedAt(end + 1);
  for (auto [i, s] : llvm::enumerate(storages)) {
    if (s.persistent) {
      result.persistentBytes += s.bytes;
      continue;
    }
    allocatedAt[s.def].push_back(i);
    releasedAt[s.lastUse].push_back(i);
  }
  int64_t live = result.persistentBytes;
  unsigned peakIndex = 0;
  int64_t peakWorkspace = 0;
  result.peakBytes = live;
  for (unsigned index = 1; index < end; ++index) {
    Operation *op = ops[index];
    for (unsigned i : allocatedAt[index])
      live += storages[i].bytes;
    int64_t workspace = 0;
    if (auto ws = dyn_cast<nn::WorkspaceOpInterface>(op))
      workspace = ws.getWorkspaceBytes();
    int64_t running = live + workspace;
    if (!isa<func::ReturnOp>(op))
      result.timeline.push_back({op, getStepPhase(op), running});
    if (running > result.peakBytes) {
      result.peakBytes = running;
      result.peakOp = op;
      result.peakPhase = getStepPhase(op);
      peakIndex = index;
      peakWorkspace = workspace;
    }
    for (unsigned i : releasedAt[index])
      live -= storages[i].bytes;
  }

  // Pass 3: what is alive at the peak, and what backward keeps.
  std::vector<LiveTensor> alive;
  for (const Storage &s : storages) {
    MemoryCategory category = categorize(s);
    if (s.savedByModel && category != MemoryCategory::Parameters &&
        category != MemoryCategory::Buffers &&
        category != MemoryCategory::Inputs) {
      result.savedForBackwardBytes += s.bytes;
      result.savedBytesByLayer[getLayerName(s.savedBy->getLoc())] += s.bytes;
    }
    if (s.persistent || (s.def <= peakIndex && s.lastUse >= peakIndex)) {
      result.atPeak[static_cast<unsigned>(category)] += s.bytes;
      alive.push_back({s.root, s.bytes, category});
    }
  }
  result.atPeak[static_cast<unsigned>(MemoryCategory::Temporaries)] +=
      peakWorkspace;
  unsigned keep = std::min<size_t>(topK, alive.size());
  std::partial_sort(alive.begin(), alive.begin() + keep, alive.end(),
                    [](const LiveTensor &a, const LiveTensor &b) {
                      return a.bytes > b.bytes;
                    });
  alive.resize(keep);
  result.topTensors = std::move(alive);
  return result;
}
