//===- Report.cpp - text and JSON reports ---------------------------------===//

#include "ReportData.h"
#include "vram/Analysis/Allocator.h"
#include "vram/Analysis/FlopAnalysis.h"
#include "vram/Analysis/MemoryAnalysis.h"
#include "vram/Dialect/NN/NNDialect.h"
#include "vram/Dialect/NN/NNOps.h"
#include "vram/Dialect/NN/TensorNames.h"
#include "vram/Support/CheckedMath.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ThreadPool.h"

#include <map>

using namespace mlir;
using namespace vram;
using namespace vram::report;
namespace json = llvm::json;

std::string vram::report::typeString(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (auto tensor = dyn_cast<RankedTensorType>(type)) {
    os << "[";
    llvm::interleaveComma(tensor.getShape(), os);
    os << "] " << tensor.getElementType();
  } else {
    os << type;
  }
  return s;
}

/// "file:line:col" for file locations, the name (and file) of named ones.
std::string vram::report::locationString(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return llvm::formatv("{0}:{1}:{2}", file.getFilename().getValue(),
                         file.getLine(), file.getColumn())
        .str();
  if (auto name = dyn_cast<NameLoc>(loc)) {
    std::string child = locationString(name.getChildLoc());
    return child.empty() ? name.getName().str()
                         : name.getName().str() + " (" + child + ")";
  }
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (std::string s = locationString(inner); !s.empty())
        return s;
  return "";
}

/// A short name for a storage: the parameter/buffer name, the input index, or
/// the allocating op and its layer.
std::string vram::report::describeStorage(const Storage &s) {
  if (s.root)
    if (auto arg = dyn_cast<BlockArgument>(s.root))
      return llvm::formatv("input #{0}", arg.getArgNumber()).str();
  if (auto persistent = dyn_cast<nn::PersistentStorageOpInterface>(s.op))
    return persistent.getStorageName();
  if (auto buffer = dyn_cast<nn::ZeroBufferOp>(s.op); buffer && !s.workspace)
    return ("zero." + buffer.getName()).str();
  std::string layer = getLayerName(s.op->getLoc());
  std::string what = s.op->getName().getStringRef().str();
  if (s.workspace)
    what = "workspace of " + what;
  else if (auto saved = dyn_cast<nn::SavedOp>(s.op))
    what += " " + saved.getKind().str();
  else if (auto backward = dyn_cast<nn::BackwardOp>(s.op))
    what = "grad of " + backward.getForwardOp().str();
  return layer.empty() ? what : layer + " (" + what + ")";
}

/// The forward op a backward node differentiates, found through what it
/// saved: a result of the op, an extra tensor computed from it, or an
/// operand it uses. Null for a node that saved nothing.
static Operation *getForwardOp(nn::BackwardOp backward) {
  for (auto [value, role] :
       llvm::zip(backward.getSaved(), backward.getSavedRoles())) {
    auto r = cast<nn::SavedRoleAttr>(role);
    if (r.getKind() == nn::SavedKind::Result)
      if (auto result = dyn_cast<OpResult>(value))
        return result.getOwner();
    if (r.getKind() == nn::SavedKind::Extra)
      if (auto saved = value.getDefiningOp<nn::SavedOp>()) {
        // Made before the op (an in-place op's input clone): the op follows
        // its extras.
        if (saved.getBeforeOp()) {
          for (Operation *next = saved->getNextNode(); next;
               next = next->getNextNode())
            if (!isa<nn::SavedOp>(next))
              return next->getName().getStringRef() == saved.getForwardOp()
                         ? next
                         : nullptr;
        } else if (!saved.getSources().empty()) {
          return saved.getSources().back().getDefiningOp();
        }
      }
  }
  for (auto [value, role] :
       llvm::zip(backward.getSaved(), backward.getSavedRoles())) {
    auto r = cast<nn::SavedRoleAttr>(role);
    if (r.getKind() != nn::SavedKind::Operand)
      continue;
    for (OpOperand &use : value.getUses())
      if (use.getOperandNumber() == r.getIndex() &&
          use.getOwner()->getName().getStringRef() == backward.getForwardOp() &&
          getStepPhase(use.getOwner()) == StepPhase::Forward)
        return use.getOwner();
  }
  return nullptr;
}

/// A view (nn.slice, nn.reshape) of a gathered buffer: ZeRO-3's parameter
/// gathered alone, viewed at its size.
static bool isGatheredView(Value v) {
  while (isa_and_nonnull<nn::SliceOp, nn::ReshapeOp>(v.getDefiningOp()))
    v = v.getDefiningOp()->getOperand(0);
  return isa_and_nonnull<nn::AllGatherOp, nn::UnshardOp>(v.getDefiningOp());
}

namespace {
/// The layer table's rows and where each forward op and layer name landed
/// (what the saved bytes are attributed through).
struct LayerTable {
  std::vector<LayerRow> rows;
  llvm::DenseMap<Operation *, unsigned> rowOf; // forward op -> its row
  llvm::StringMap<unsigned> lastRowOf;         // name -> its latest row
};
} // namespace

/// One row per call of a layer: forward ops grouped by their location's
/// name, a name that comes back after other layers (torchvision's shared
/// `relu`) starting its next call, with its FLOPs and parameters. `ops`
/// are the step's (collectOps).
static LayerTable buildLayerRows(ArrayRef<Operation *> ops,
                                 const FlopAnalysis &flops,
                                 nn::FlopConvention convention) {
  LayerTable layers;
  std::vector<LayerRow> &table = layers.rows;
  llvm::StringMap<unsigned> calls; // name -> calls seen
  llvm::DenseSet<std::pair<unsigned, Value>> paramsSeen;
  // ZeRO-3's gathers name their parameters.
  llvm::StringMap<Operation *> paramsByName(
      llvm::count_if(ops, llvm::IsaPred<nn::ParamOp>));
  for (Operation *op : ops)
    if (auto param = dyn_cast<nn::ParamOp>(op))
      paramsByName[param.getName()] = param;
  std::string previous;
  // A row's output shape is its last op's, spelled once per type (printing
  // a type costs more than the rest of a row).
  Type lastType;
  llvm::DenseMap<Type, std::string> typeStrings;
  auto spell = [&](Type type) -> const std::string & {
    auto [it, inserted] = typeStrings.try_emplace(type);
    if (inserted)
      it->second = typeString(type);
    return it->second;
  };
  for (Operation *op : ops) {
    if (op->getNumResults() == 0 ||
        isa<nn::PersistentStorageOpInterface, nn::SavedOp>(op) ||
        getStepPhase(op) != StepPhase::Forward)
      continue;
    // FSDP's and ZeRO-3's collectives and the views of gathered parameters
    // belong to no layer: the layers' rows count the parameters they use.
    if (isa<nn::AllGatherOp, nn::UnshardOp, nn::ReduceScatterInputOp,
            nn::ReduceScatterOp, nn::ZeroBufferOp>(op) ||
        getParameterOf(op->getResult(0)) || isGatheredView(op->getResult(0)))
      continue;
    std::string name = getLayerName(op->getLoc());
    if (table.empty() || name != previous) {
      if (!table.empty())
        table.back().outputShape = spell(lastType);
      LayerRow row;
      row.name = name;
      row.call = ++calls[name];
      layers.lastRowOf[name] = table.size();
      table.push_back(row);
    }
    previous = std::move(name);
    unsigned index = table.size() - 1;
    layers.rowOf[op] = index;
    LayerRow &row = table.back();
    // The row's op is the layer's principal op: the one doing the most work
    // (a matmul, not the constant or the copy next to it), else the first.
    int64_t work = flops.getOpFlops(op, nn::FlopConvention::Full);
    if (row.op.empty() || work > row.principalWork) {
      row.op = op->getName().getStringRef().str();
      row.principalWork = work;
    }
    lastType = op->getResult(0).getType();
    row.flops += flops.getOpFlops(op, convention);
    for (Value operand : op->getOperands()) {
      if (auto param = dyn_cast_or_null<nn::ParamOp>(
              getParameterOf(operand, &paramsByName)))
        if (paramsSeen.insert({index, param.getResult()}).second) {
          row.params +=
              cast<RankedTensorType>(param.getType()).getNumElements();
          row.paramBytes += getTensorBytes(param.getType()).value_or(0);
        }
      // A 4-bit weight counts its logical elements and its packed bytes.
      if (auto quantized = operand.getDefiningOp<nn::QuantizedWeightOp>())
        if (paramsSeen.insert({index, quantized.getPacked()}).second) {
          row.params += quantized.getNumElements();
          row.paramBytes +=
              getTensorBytes(quantized.getPacked().getType()).value_or(0);
        }
    }
  }
  if (!table.empty())
    table.back().outputShape = spell(lastType);
  return layers;
}

/// Each saved storage counts once, for the first layer call (in forward
/// order) whose backward node keeps it.
static void addSavedBytes(LayerTable &layers, const MemoryAnalysis &memory) {
  for (const Storage &s : memory.getStorages()) {
    if (!s.savedByModel || !(s.category == MemoryCategory::Activations ||
                             s.category == MemoryCategory::Temporaries ||
                             s.category == MemoryCategory::Gradients))
      continue;
    std::optional<unsigned> row;
    if (auto backward = dyn_cast<nn::BackwardOp>(s.savedBy))
      if (Operation *forward = getForwardOp(backward))
        if (auto it = layers.rowOf.find(forward); it != layers.rowOf.end())
          row = it->second;
    if (!row)
      if (auto it = layers.lastRowOf.find(getLayerName(s.savedBy->getLoc()));
          it != layers.lastRowOf.end())
        row = it->second;
    if (row)
      layers.rows[*row].savedBytes += s.bytes;
  }
}

/// Rows summed per module at `depth` (torchinfo's depth): `layer1.0.conv1`
/// counts for `layer1` at depth 1, for `layer1.0` at depth 2. A row keeps
/// the principal op and the last output shape of its module.
static std::vector<LayerRow> aggregateLayers(const std::vector<LayerRow> &rows,
                                             unsigned depth) {
  llvm::MapVector<std::string, LayerRow, std::map<std::string, unsigned>>
      modules;
  for (const LayerRow &row : rows) {
    SmallVector<StringRef> parts;
    StringRef(row.name).split(parts, '.');
    std::string key;
    for (unsigned i = 0; i < std::min<size_t>(depth, parts.size()); ++i)
      key += (i ? "." : "") + parts[i].str();
    auto [it, inserted] = modules.try_emplace(key, row);
    LayerRow &module = it->second;
    if (inserted) {
      module.name = key;
      module.call = 1;
      continue;
    }
    module.params += row.params;
    module.paramBytes += row.paramBytes;
    module.flops += row.flops;
    module.savedBytes += row.savedBytes;
    module.outputShape = row.outputShape;
    if (row.principalWork > module.principalWork) {
      module.op = row.op;
      module.principalWork = row.principalWork;
    }
  }
  std::vector<LayerRow> table;
  for (auto &entry : modules)
    table.push_back(entry.second);
  return table;
}

FailureOr<Analyses> vram::report::analyze(ModuleOp module,
                                          const ReportOptions &options) {
  Analyses a;
  a.func = module.lookupSymbol<func::FuncOp>("step");
  if (!a.func)
    a.func = module.lookupSymbol<func::FuncOp>("forward");
  if (!a.func)
    return module.emitError("no @step or @forward function to report on");
  std::optional<nn::StepMode> mode = getStepMode(a.func);
  a.mode = mode ? stringifyEnum(*mode).str() : "forward";
  std::vector<Operation *> ops = collectOps(a.func);
  FailureOr<ParameterSummary> parameters = summarizeParameters(ops);
  if (failed(nn::verifyUniqueTensorNames(ops)) || failed(parameters))
    return failure();
  a.parameters = *parameters;
  a.batch = getBatchSize(a.func);
  if (auto packed = a.func->getAttrOfType<IntegerAttr>(
          nn::NNDialect::kPackedTokensAttrName))
    a.packedTokens = packed.getInt();
  a.padded = a.func->hasAttr(nn::NNDialect::kPaddedAttrName);
  a.precision = getPrecision(a.func, ops);
  if (auto v = a.func->getAttrOfType<StringAttr>(
          nn::NNDialect::kTorchVersionAttrName))
    a.torchVersion = v.getValue();
  if (auto d =
          a.func->getAttrOfType<StringAttr>(nn::NNDialect::kDeviceAttrName))
    a.device = d.getValue();
  // The scenario is what the passes recorded on the step, not what flags
  // asked for. A step without nn.optimizer (written by hand) says its
  // optimizer through its updates.
  if (mode == nn::StepMode::Train) {
    if (auto config = a.func->getAttrOfType<nn::OptimizerConfigAttr>(
            nn::NNDialect::kOptimizerAttrName))
      a.optimizer = stringifyEnum(config.getKind()).str();
    else if (auto updates = a.func.getOps<nn::OptimizerStepOp>();
             !updates.empty())
      a.optimizer = stringifyEnum((*updates.begin()).getOptimizer()).str();
  }
  if (auto lora = a.func->getAttrOfType<nn::LoraConfigAttr>(
          nn::NNDialect::kLoraAttrName))
    a.lora = lora.getSpelling();
  a.quantize = a.func->getAttr(nn::NNDialect::kQuantizeAttrName);
  if (auto modules =
          a.func->getAttrOfType<ArrayAttr>(nn::NNDialect::kCheckpointAttrName))
    for (auto module : modules.getAsRange<StringAttr>())
      a.checkpoint.push_back(module.str());
  if (auto steps =
          a.func->getAttrOfType<IntegerAttr>(nn::NNDialect::kGradAccumAttrName))
    a.gradAccum = steps.getInt();
  a.optimizerInBackward =
      a.func->hasAttr(nn::NNDialect::kOptimizerInBackwardAttrName);
  a.ema = a.func->hasAttr(nn::NNDialect::kEmaAttrName);
  a.keepOutput = a.func->hasAttr(nn::NNDialect::kKeepOutputAttrName);
  a.useCache = llvm::any_of(ops, llvm::IsaPred<nn::KvCacheUpdateOp>);
  for (auto [present, name] :
       {std::pair{llvm::any_of(ops, llvm::IsaPred<nn::LigerRmsNormOp>),
                  "rms_norm"},
        {llvm::any_of(ops, llvm::IsaPred<nn::LigerSwigluOp>), "swiglu"},
        {llvm::any_of(ops, llvm::IsaPred<nn::LigerRopeOp>), "rope"},
        {llvm::any_of(ops, llvm::IsaPred<nn::FusedLinearCrossEntropyOp>),
         "fused_linear_cross_entropy"}})
    if (present)
      a.liger.push_back(name);
  if (auto loss = llvm::find_if(
          ops, [](Operation *op) { return op->hasTrait<nn::LossOpTrait>(); });
      loss != ops.end())
    a.loss = (*loss)->getName().stripDialect().str();
  if (auto clip = llvm::find_if(ops, llvm::IsaPred<nn::ClipGradNormOp>);
      clip != ops.end())
    a.maxGradNorm =
        cast<nn::ClipGradNormOp>(*clip).getMaxNorm().convertToDouble();
  if (auto layout = a.func->getAttrOfType<nn::ParallelAttr>(
          nn::NNDialect::kParallelAttrName))
    a.parallel = readParallelFigures(a.func, layout);
  std::optional<DeviceModel> device;
  if (options.allocator == nn::AllocatorKind::PytorchCuda)
    device = options.device;
  // The memory analysis, the largest, runs beside the FLOPs and the layer
  // rows when the context allows threads (all of them only read the step).
  // Its diagnostics are held until it is done, to follow the FLOPs' as in a
  // sequential run.
  auto analyzeMemory = [&] {
    a.stepMemory =
        std::make_unique<StepMemory>(a.func, ops, options.allocator, device);
  };
  MLIRContext *ctx = module.getContext();
  std::optional<ParallelDiagnosticHandler> memoryDiagnostics;
  std::optional<llvm::ThreadPoolTaskGroup> memoryTask;
  if (ctx->isMultithreadingEnabled()) {
    memoryDiagnostics.emplace(ctx);
    memoryTask.emplace(ctx->getThreadPool());
    memoryTask->async([&] {
      memoryDiagnostics->setOrderIDForThread(0);
      analyzeMemory();
      memoryDiagnostics->eraseOrderIDForThread();
    });
  }
  a.flops = std::make_unique<FlopAnalysis>(a.func, ops);
  LayerTable layers = buildLayerRows(ops, *a.flops, options.flops);
  if (memoryTask) {
    memoryTask->wait();
    memoryDiagnostics.reset();
  } else {
    analyzeMemory();
  }
  a.memory = &a.stepMemory->getAnalysis();
  if (a.flops->failed() || a.stepMemory->failed())
    return failure();
  a.generation = getGenerationFigures(*a.memory, *a.flops, options.flops);
  a.allocatorName = a.stepMemory->getAllocatorName().str();
  a.deviceModel = device;
  a.libraryBytes = a.stepMemory->getLibraryBytes();
  a.allocatorPeaks = a.stepMemory->getAllocatorPeaks();
  a.stages = a.stepMemory->computeStages();
  a.devicePeak = device ? a.stepMemory->getMetrics().device : 0;
  addSavedBytes(layers, *a.memory);
  a.layers = std::move(layers.rows);
  if (options.depth)
    a.layers = aggregateLayers(a.layers, options.depth);
  return a;
}

static json::Value stagesJson(const Analyses &a) {
  if (a.stages.empty())
    return nullptr;
  json::Array stages;
  for (const StageMemory &s : a.stages)
    stages.push_back(json::Object{{"stage", s.stage},
                                  {"allocated_bytes", s.allocated},
                                  {"reserved_bytes", s.reserved}});
  return stages;
}

static json::Value deviceJson(const Analyses &a) {
  if (!a.deviceModel)
    return nullptr;
  const DeviceModel &d = *a.deviceModel;
  return json::Object{{"gpu", d.gpu},
                      {"capacity_bytes", d.capacityBytes
                                             ? json::Value(d.capacityBytes)
                                             : json::Value(nullptr)},
                      {"context_bytes", d.contextBytes},
                      {"lazy_loading", d.lazyLoading},
                      {"library_workspace_bytes", a.libraryBytes}};
}

/// Bytes one rank sends (and receives) in ring collectives over `ranks`
/// (NCCL's algorithm for large messages; its performance notes: bus
/// bandwidth = algorithm bandwidth x (n-1)/n for all-gather and
/// reduce-scatter, x 2(n-1)/n for all-reduce): `bytes` x factor (n-1)/n.
static int64_t ringBytes(int64_t bytes, int64_t ranks, int64_t factor) {
  __int128 moved = static_cast<__int128>(bytes) * factor * (ranks - 1) / ranks;
  return moved > INT64_MAX ? INT64_MAX : static_cast<int64_t>(moved);
}

int64_t ParallelFigures::getSentBytes() const {
  // All-reduces run in the tensor-parallel group (activations and their
  // gradients) or across the dp replicas (DDP's buckets, ZeRO's, HSDP's
  // gradient shards); all-gathers and reduce-scatters within the fsdp
  // group.
  int64_t group = layout.getTp() > 1 ? layout.getTp() : layout.getDp();
  // ZeRO all-gathers the flat parameters across the dp ranks.
  int64_t shards = layout.getZero() > 0 ? layout.getDp() : layout.getFsdp();
  int64_t inGroup = allReduceBytes - replicaAllReduceBytes;
  return saturatingAdd(
      saturatingAdd(ringBytes(inGroup, group, 2),
                    ringBytes(replicaAllReduceBytes, layout.getDp(), 2)),
      saturatingAdd(
          saturatingAdd(ringBytes(allGatherBytes, shards, 1),
                        ringBytes(reduceScatterBytes, shards, 1)),
          saturatingAdd(ringBytes(tpAllGatherBytes, layout.getTp(), 1),
                        ringBytes(tpReduceScatterBytes, layout.getTp(), 1))));
}

std::string ParallelFigures::getReduceScatterText() const {
  return tpReduceScatterBytes
             ? " and reduce-scatters " + humanBytes(tpReduceScatterBytes)
             : std::string();
}

int64_t ParallelFigures::getTotalSentBytes() const {
  return saturatingAdd(getSentBytes(), p2pSentBytes);
}

int64_t ParallelFigures::getTotalReceivedBytes() const {
  return saturatingAdd(getSentBytes(), p2pReceivedBytes);
}

ParallelFigures vram::report::readParallelFigures(func::FuncOp func,
                                                  nn::ParallelAttr layout) {
  ParallelFigures p;
  p.layout = layout;
  p.fullShards = layout.getFsdp();
  if (auto peaks = func->getAttrOfType<DenseI64ArrayAttr>(
          nn::NNDialect::kRankPeaksAttrName))
    p.rankPeaks.assign(peaks.asArrayRef().begin(), peaks.asArrayRef().end());
  auto bytes = [](Value v) { return getTensorBytes(v.getType()).value_or(0); };
  // A generation program holds one decode step's forward, after the first
  // token's choice; generate() runs it once per new token but the first.
  int64_t decodeSteps = 0;
  if (auto tokens = func->getAttrOfType<IntegerAttr>(
          nn::NNDialect::kMaxNewTokensAttrName))
    decodeSteps = tokens.getInt() - 1;
  int64_t runs = 1;
  for (Operation &op : func.getBody().front()) {
    if (isa<nn::NextTokenOp>(op))
      runs = decodeSteps;
    // Tensor parallelism: a row-parallel output in forward, a
    // column-parallel input's gradient in backward.
    if (auto send = dyn_cast<nn::P2PSendOp>(op)) {
      p.p2pSentBytes = saturatingAdd(p.p2pSentBytes, bytes(send.getInput()));
    } else if (auto recv = dyn_cast<nn::P2PRecvOp>(op)) {
      p.p2pReceivedBytes =
          saturatingAdd(p.p2pReceivedBytes, bytes(recv.getResult()));
    } else if (isa<nn::VocabParallelEmbeddingOp>(op)) {
      p.vocabParallelEmbedding = true;
    } else if (auto loss = dyn_cast<nn::VocabParallelCrossEntropyOp>(op)) {
      // _log_softmax all-reduces each row's max and sum of exponentials,
      // _nll_loss_forward each row's target log-probability: three fp32
      // [N, 1] all-reduces.
      p.lossParallel = true;
      p.allReduceBytes = saturatingAdd(
          p.allReduceBytes,
          saturatingMul(3 * 4, loss.getInput().getType().getDimSize(0)));
    } else if (isa<nn::AllGatherOutputOp>(op)) {
      p.tpAllGatherBytes = saturatingAdd(
          p.tpAllGatherBytes, saturatingMul(bytes(op.getResult(0)), runs));
    } else if (auto scatter = dyn_cast<nn::ReduceScatterOutputOp>(op)) {
      // The partial sums are reduce-scattered whole: each rank sends
      // (n - 1) / n of them (ringBytes).
      p.sequenceParallel = true;
      p.tpReduceScatterBytes =
          saturatingAdd(p.tpReduceScatterBytes,
                        saturatingMul(bytes(scatter.getInput()), runs));
    } else if (isa<nn::AllReduceOp>(op)) {
      p.allReduceBytes = saturatingAdd(
          p.allReduceBytes, saturatingMul(bytes(op.getResult(0)), runs));
    } else if (auto node = dyn_cast<nn::BackwardOp>(op)) {
      if (node.getForwardOp() == nn::AllReduceGradOp::getOperationName())
        for (Value grad : node.getInputGrads())
          p.allReduceBytes = saturatingAdd(p.allReduceBytes, bytes(grad));
      // A split input's gradient is gathered from the ranks' columns, as
      // is a reduce-scattered output's.
      if (node.getForwardOp() == nn::SplitInputOp::getOperationName() ||
          node.getForwardOp() == nn::ReduceScatterOutputOp::getOperationName())
        for (Value grad : node.getInputGrads())
          p.tpAllGatherBytes = saturatingAdd(p.tpAllGatherBytes, bytes(grad));
      // A gathered DTensor's partial gradient is reduce-scattered (lm_head's
      // input under sequence parallelism), whole on every rank.
      if (node.getForwardOp() == nn::AllGatherOutputOp::getOperationName() &&
          node.getForwardAttrs().get("scatter_grad"))
        for (Type type : node.getForwardType().getResults())
          p.tpReduceScatterBytes = saturatingAdd(
              p.tpReduceScatterBytes, getTensorBytes(type).value_or(0));
    } else if (auto reduce = dyn_cast<nn::ZeroReduceOp>(op)) {
      // ZeRO all-reduces each bucket's gradients and all-gathers the flat
      // parameters after the step.
      int64_t elementBytes =
          llvm::divideCeil(getElementTypeOrSelf(reduce.getBucket().getType())
                               .getIntOrFloatBitWidth(),
                           8);
      p.allReduceBytes = saturatingAdd(
          p.allReduceBytes,
          saturatingMul(static_cast<int64_t>(reduce.getElements()),
                        elementBytes));
    } else if (auto flat = dyn_cast<nn::ZeroFlatParamsOp>(op)) {
      // ZeRO-3's partitions are gathered module by module (nn.all_gather).
      if (!flat.getRanks())
        p.allGatherBytes = saturatingAdd(p.allGatherBytes, bytes(flat));
    } else if (auto bucket = dyn_cast<nn::GradBucketOp>(op);
               bucket && layout.getZero() == 3) {
      // ZeRO-3 reduce-scatters every gradient once, padded to dp
      // partitions: dp times this rank's gradient partitions.
      if (bucket.getName() == "zero.grad_partitions")
        p.reduceScatterBytes = saturatingAdd(
            p.reduceScatterBytes, saturatingMul(bytes(bucket), layout.getDp()));
    } else if (auto bucket = dyn_cast<nn::GradBucketOp>(op)) {
      p.bucketBytes.push_back(bytes(bucket));
      p.allReduceBytes = saturatingAdd(p.allReduceBytes, bytes(bucket));
      // DDP over tensor-parallel groups all-reduces across the replicas.
      if (layout.getTp() > 1)
        p.replicaAllReduceBytes =
            saturatingAdd(p.replicaAllReduceBytes, bytes(bucket));
    } else if (auto gather = dyn_cast<nn::AllGatherOp>(op)) {
      p.allGatherBytes = saturatingAdd(p.allGatherBytes, bytes(gather));
      // FSDP's units and param_dtype; ZeRO-3 gathers per module.
      if (layout.getZero() == 0) {
        p.paramDtype =
            getPrecisionName(gather.getResult().getType().getElementType());
        if (gather.getPhase() == StepPhase::Forward)
          p.units.push_back(gather.getUnit().str());
      }
    } else if (auto input = dyn_cast<nn::ReduceScatterInputOp>(op)) {
      p.reduceScatterBytes = saturatingAdd(p.reduceScatterBytes, bytes(input));
    } else if (auto scatter = dyn_cast<nn::ReduceScatterOp>(op)) {
      p.reduceDtype =
          getPrecisionName(scatter.getResult().getType().getElementType());
      // HSDP all-reduces the gradient shards across the replicas in place.
      if (layout.getDp() > 1) {
        p.allReduceBytes = saturatingAdd(p.allReduceBytes, bytes(scatter));
        p.replicaAllReduceBytes =
            saturatingAdd(p.replicaAllReduceBytes, bytes(scatter));
      }
    } else if (auto shard = dyn_cast<nn::ShardOp>(op)) {
      // Shard index i holds a full chunk of c rows while (i + 1) c <= dim 0.
      p.shardDtype = getPrecisionName(shard.getType().getElementType());
      int64_t rows = shard.getParam().getType().getDimSize(0);
      int64_t chunk = shard.getType().getDimSize(0);
      if (chunk > 0)
        p.fullShards =
            std::min(p.fullShards, std::max<int64_t>(rows / chunk, 1));
    }
  }
  if (layout.getTp() > 1)
    p.tpPlan = p.vocabParallelEmbedding               ? "vocab"
               : p.tpAllGatherBytes || p.lossParallel ? "transformers"
                                                      : "layers";
  return p;
}

static json::Value optionalString(const std::string &s) {
  return s.empty() ? json::Value(nullptr) : json::Value(s);
}

/// The multi-GPU layout and the figures of the ranks the step is
/// (docs/Report.md): every rank under DDP; under FSDP the ranks whose shards
/// are as large as rank 0's (the others hold smaller shards: their figures
/// are at most these).
RankFigures vram::collectRankFigures(ModuleOp module, const StepMemory &memory,
                                     int64_t rank) {
  RankFigures r;
  r.rankIds = {rank};
  const MemoryAnalysis &analysis = memory.getAnalysis();
  r.peak = analysis.getPeakBytes();
  r.persistent = analysis.getPersistentBytes();
  r.allocated = memory.getAllocatorPeaks().allocated;
  r.reserved = memory.getAllocatorPeaks().reserved;
  if (memory.getDevice())
    r.device = memory.getMetrics().device;
  CategoryBytes breakdown = analysis.getBreakdown(analysis.getPeakIndex());
  r.atPeak.assign(breakdown.begin(), breakdown.end());
  module.walk([&](Operation *op) {
    auto bytes = [](Value v) {
      return getTensorBytes(v.getType()).value_or(0);
    };
    if (auto send = dyn_cast<nn::P2PSendOp>(op))
      r.p2pSent = saturatingAdd(r.p2pSent, bytes(send.getInput()));
    else if (auto recv = dyn_cast<nn::P2PRecvOp>(op))
      r.p2pReceived = saturatingAdd(r.p2pReceived, bytes(recv.getResult()));
  });
  return r;
}

static json::Object rankJson(const RankFigures &r) {
  json::Array ids;
  for (int64_t id : r.rankIds)
    ids.push_back(id);
  json::Object atPeak;
  for (unsigned c = 0; c < kNumMemoryCategories && c < r.atPeak.size(); ++c)
    atPeak[stringifyEnum(static_cast<MemoryCategory>(c))] = r.atPeak[c];
  return json::Object{
      {"rank_ids", std::move(ids)},
      {"peak_bytes", r.peak},
      {"allocated_peak_bytes", r.allocated},
      {"reserved_peak_bytes", r.reserved},
      {"device_peak_bytes",
       r.device ? json::Value(*r.device) : json::Value(nullptr)},
      {"persistent_bytes", r.persistent},
      {"at_peak", std::move(atPeak)},
      {"communication", json::Object{{"all_reduce_bytes", 0},
                                     {"all_gather_bytes", 0},
                                     {"reduce_scatter_bytes", 0},
                                     {"p2p_sent_bytes", r.p2pSent},
                                     {"p2p_received_bytes", r.p2pReceived},
                                     {"sent_bytes", r.p2pSent},
                                     {"received_bytes", r.p2pReceived}}}};
}

static void addParallelJson(const Analyses &a, const ReportOptions &options,
                            json::Object &report) {
  if (!a.parallel)
    return;
  const ParallelFigures &p = *a.parallel;
  nn::ParallelAttr layout = p.layout;
  int64_t ranks = layout.getWorldSize();
  json::Array buckets, units, shard, smaller;
  for (int64_t b : p.bucketBytes)
    buckets.push_back(b);
  for (const std::string &unit : p.units)
    units.push_back(unit);
  for (Attribute pattern : layout.getShard())
    shard.push_back(cast<StringAttr>(pattern).getValue());
  json::Array ids;
  for (int64_t r = 0; r < ranks; ++r) {
    if (p.isFiguresRank(r))
      ids.push_back(r);
    // A pipeline's other stages whose peaks are at most this one's.
    else if (layout.getPp() == 1 ||
             (static_cast<size_t>(r) < p.rankPeaks.size() &&
              p.rankPeaks[r] <= p.rankPeaks[layout.getPpStage()]))
      smaller.push_back(r);
  }
  int64_t zero = layout.getZero();
  report["parallel"] = json::Object{
      {"strategy", p.getStrategyName()},
      {"zero_stage", zero},
      {"reduce_bucket_size",
       zero > 0 ? json::Value(layout.getReduceBucket()) : json::Value(nullptr)},
      {"zero_rank",
       zero > 0 ? json::Value(layout.getZeroRank()) : json::Value(nullptr)},
      {"overlap_comm", layout.getOverlapComm()},
      {"world_size", ranks},
      {"dp", layout.getDp()},
      {"fsdp", layout.getFsdp()},
      {"tp", layout.getTp()},
      {"tp_plan", optionalString(p.tpPlan.str())},
      {"loss_parallel", p.lossParallel},
      {"sequence_parallel", p.sequenceParallel},
      {"pp", layout.getPp()},
      {"pp_schedule",
       layout.getPp() > 1
           ? json::Value(layout.getGpipe()                 ? "gpipe"
                         : layout.getPpStagesPerRank() > 1 ? "interleaved-1f1b"
                                                           : "1f1b")
           : json::Value(nullptr)},
      {"pp_stages_per_rank", layout.getPp() > 1
                                 ? json::Value(layout.getPpStagesPerRank())
                                 : json::Value(nullptr)},
      {"microbatches", layout.getPp() > 1
                           ? json::Value(layout.getMicrobatches())
                           : json::Value(nullptr)},
      {"pp_stage", layout.getPp() > 1 ? json::Value(layout.getPpStage())
                                      : json::Value(nullptr)},
      {"shard", std::move(shard)},
      {"units", std::move(units)},
      {"shard_dtype", optionalString(p.shardDtype)},
      {"param_dtype", optionalString(p.paramDtype)},
      {"reduce_dtype", optionalString(p.reduceDtype)},
      {"smaller_ranks", std::move(smaller)},
      {"rank_peak_bytes", p.rankPeaks.empty()
                              ? json::Value(nullptr)
                              : json::Value(json::Array(p.rankPeaks))},
      {"gradient_as_bucket_view", layout.getBucketView()},
      {"bucket_cap_bytes", layout.getBucketCap()},
      {"first_bucket_bytes", layout.getFirstBucket()},
      {"bucket_bytes", std::move(buckets)}};
  const MemoryAnalysis &memory = *a.memory;
  json::Object atPeak;
  CategoryBytes breakdown = memory.getBreakdown(memory.getPeakIndex());
  for (unsigned c = 0; c < kNumMemoryCategories; ++c)
    atPeak[stringifyEnum(static_cast<MemoryCategory>(c))] = breakdown[c];
  report["ranks"] = json::Array{json::Object{
      {"rank_ids", std::move(ids)},
      {"peak_bytes", memory.getPeakBytes()},
      {"allocated_peak_bytes", a.allocatorPeaks.allocated},
      {"reserved_peak_bytes", a.allocatorPeaks.reserved},
      {"device_peak_bytes",
       a.deviceModel ? json::Value(a.devicePeak) : json::Value(nullptr)},
      {"persistent_bytes", memory.getPersistentBytes()},
      {"at_peak", std::move(atPeak)},
      {"communication",
       json::Object{
           {"all_reduce_bytes", p.allReduceBytes},
           {"all_gather_bytes",
            saturatingAdd(p.allGatherBytes, p.tpAllGatherBytes)},
           {"reduce_scatter_bytes",
            saturatingAdd(p.reduceScatterBytes, p.tpReduceScatterBytes)},
           {"p2p_sent_bytes", p.p2pSentBytes},
           {"p2p_received_bytes", p.p2pReceivedBytes},
           {"sent_bytes", p.getTotalSentBytes()},
           {"received_bytes", p.getTotalReceivedBytes()}}}}};
  // A pipeline's other stages, in stage order.
  if (!options.otherRanks.empty()) {
    json::Array &ranks = *report["ranks"].getAsArray();
    json::Value own = std::move(ranks.front());
    ranks.clear();
    int64_t ownStage = layout.getPpStage();
    bool placed = false;
    for (const RankFigures &r : options.otherRanks) {
      if (!placed && !r.rankIds.empty() && r.rankIds.front() > ownStage) {
        ranks.push_back(std::move(own));
        placed = true;
      }
      ranks.push_back(rankJson(r));
    }
    if (!placed)
      ranks.push_back(std::move(own));
  }
}

static json::Object peakOpJson(const Analyses &a) {
  Operation *op = a.memory->getPeakOp();
  StringRef phase = stringifyEnum(op ? getStepPhase(op) : StepPhase::Forward);
  if (!op)
    return json::Object{
        {"name", ""}, {"op", ""}, {"location", ""}, {"phase", phase}};
  return json::Object{{"name", getLayerName(op->getLoc())},
                      {"op", op->getName().getStringRef()},
                      {"location", locationString(op->getLoc())},
                      {"phase", phase}};
}

/// config.quantize: `{"type": "nf4", "double_quant": true, "blocksize":
/// 64}`, or null.
/// int8: `{"type": "int8", "double_quant": false, "blocksize": null,
/// "threshold": 6, "outlier_cols": 0}`.
static json::Value quantizeJson(Attribute attr) {
  auto config = dyn_cast_or_null<nn::QuantizationAttr>(attr);
  if (!config)
    return nullptr;
  json::Object object{{"type", stringifyEnum(config.getQuantType())},
                      {"double_quant", config.getDoubleQuant()}};
  if (config.isInt8()) {
    object["blocksize"] = nullptr;
    object["threshold"] = config.getThreshold().convertToDouble();
    object["outlier_cols"] = config.getOutlierCols();
  } else {
    object["blocksize"] = config.getBlocksize();
  }
  return object;
}

/// The cache's kind as config.generate.kv_cache names it.
static StringRef kvCacheKind(const GenerationFigures &g) {
  return g.kvBlockSize ? "paged" : g.staticCache ? "static" : "dynamic";
}

/// config.generate: `{"prompt_len": 64, "max_new_tokens": 32, "kv_cache":
/// "dynamic", "kv_block_size": null, "kv_cache_blocks": null, "do_sample":
/// false, "temperature": 1.0, "top_k": 0, "top_p": 1.0, "min_p": null,
/// "repetition_penalty": 1.0}` (the processors' settings as they run: 1.0,
/// 0, 1.0, null and 1.0 when not; a paged cache's block size and the
/// blocks the batch holds), or null.
static json::Value generateJson(const Analyses &a) {
  if (!a.generation)
    return nullptr;
  const GenerationFigures &g = *a.generation;
  auto paged = [&](int64_t n) {
    return g.kvBlockSize ? json::Value(n) : json::Value(nullptr);
  };
  return json::Object{{"prompt_len", g.promptLength},
                      {"max_new_tokens", g.maxNewTokens},
                      {"kv_cache", kvCacheKind(g)},
                      {"kv_block_size", paged(g.kvBlockSize)},
                      {"kv_cache_blocks", paged(g.kvCacheBlocks)},
                      {"num_beams", g.numBeams},
                      {"do_sample", g.sample},
                      {"temperature", g.temperature},
                      {"top_k", g.topK},
                      {"top_p", g.topP},
                      {"min_p", g.minP ? json::Value(*g.minP) : nullptr},
                      {"repetition_penalty", g.repetitionPenalty}};
}

/// "greedy", or "sampling" with the warpers that run, and the repetition
/// penalty.
static std::string describeChoice(const GenerationFigures &g) {
  std::string penalty =
      g.repetitionPenalty != 1.0
          ? llvm::formatv(" with repetition penalty {0}", g.repetitionPenalty)
                .str()
          : std::string();
  if (g.numBeams > 1)
    return llvm::formatv("beam search ({0} beams)", g.numBeams).str();
  if (!g.sample)
    return "greedy" + penalty;
  SmallVector<std::string> warpers;
  if (g.temperature != 1.0)
    warpers.push_back(llvm::formatv("temperature {0}", g.temperature));
  if (g.topK)
    warpers.push_back(llvm::formatv("top-k {0}", g.topK));
  if (g.topP != 1.0)
    warpers.push_back(llvm::formatv("top-p {0}", g.topP));
  if (g.minP)
    warpers.push_back(llvm::formatv("min-p {0}", *g.minP));
  return "sampling" +
         (warpers.empty() ? std::string()
                          : " (" + llvm::join(warpers, ", ") + ")") +
         penalty;
}

static void writeJson(const Analyses &a, const ReportOptions &options,
                      llvm::raw_ostream &os) {
  const MemoryAnalysis &memory = *a.memory;
  json::Object atPeak;
  CategoryBytes breakdown = memory.getBreakdown(memory.getPeakIndex());
  for (unsigned c = 0; c < kNumMemoryCategories; ++c)
    atPeak[stringifyEnum(static_cast<MemoryCategory>(c))] = breakdown[c];
  json::Array top;
  for (unsigned i : memory.getTopStoragesAtPeak(options.topTensors)) {
    const Storage &t = memory.getStorages()[i];
    top.push_back(json::Object{
        {"name", describeStorage(t)},
        {"bytes", t.bytes},
        {"category", stringifyEnum(t.category)},
        {"type", t.root ? typeString(t.root.getType()) : "workspace"}});
  }
  json::Object report{
      {"schema_version", 1},
      {"model", json::Object{{"name", options.modelName}}},
      {"parameters", json::Object{{"count", a.parameters.count},
                                  {"trainable", a.parameters.trainable},
                                  {"active", a.parameters.active},
                                  {"bytes", a.parameters.bytes}}},
      {"buffers", json::Object{{"count", a.parameters.bufferCount},
                               {"bytes", a.parameters.bufferBytes}}},
      {"config",
       json::Object{
           {"mode", a.mode},
           {"batch", a.batch ? json::Value(*a.batch) : json::Value(nullptr)},
           {"packed_tokens", a.packedTokens ? json::Value(*a.packedTokens)
                                            : json::Value(nullptr)},
           {"padded", a.padded},
           {"optimizer",
            a.optimizer ? json::Value(*a.optimizer) : json::Value(nullptr)},
           {"precision", a.precision},
           {"torch_version", a.torchVersion},
           {"device", a.device},
           {"lora",
            a.lora.empty() ? json::Value(nullptr) : json::Value(a.lora)},
           {"quantize", quantizeJson(a.quantize)},
           {"checkpoint", json::Array(a.checkpoint)},
           {"grad_accum", a.gradAccum},
           {"optimizer_in_backward", a.optimizerInBackward},
           {"ema", a.ema},
           {"keep_output", a.keepOutput},
           {"loss",
            a.loss.empty() ? json::Value(nullptr) : json::Value(a.loss)},
           {"max_grad_norm",
            a.maxGradNorm ? json::Value(*a.maxGradNorm) : json::Value(nullptr)},
           {"use_cache", a.useCache},
           {"liger", json::Array(a.liger)},
           {"generate", generateJson(a)},
           {"cudnn_workspace",
            stringifyEnum(getTorchTarget(a.func).cudnnWorkspace)}}},
      {"flops",
       json::Object{
           {"convention", stringifyEnum(options.flops)},
           {"forward",
            a.flops->getPhaseFlops(options.flops, StepPhase::Forward)},
           {"backward",
            a.flops->getPhaseFlops(options.flops, StepPhase::Backward)},
           {"optimizer",
            a.flops->getPhaseFlops(options.flops, StepPhase::Optimizer)},
           {"recompute",
            a.flops->getPhaseFlops(options.flops, StepPhase::Recompute)},
           {"prefill", a.generation ? json::Value(a.generation->prefillFlops)
                                    : json::Value(nullptr)},
           {"decode_step", a.generation
                               ? json::Value(a.generation->decodeStepFlops)
                               : json::Value(nullptr)},
           {"total", a.flops->getTotal(options.flops)}}},
      {"memory",
       json::Object{
           {"allocator", a.allocatorName},
           {"allocated_peak_bytes", a.allocatorPeaks.allocated},
           {"reserved_peak_bytes", a.allocatorPeaks.reserved},
           {"device_peak_bytes",
            a.deviceModel ? json::Value(a.devicePeak) : json::Value(nullptr)},
           {"device", deviceJson(a)},
           {"reserved_by_stage", stagesJson(a)},
           {"peak_bytes", memory.getPeakBytes()},
           {"persistent_bytes", memory.getPersistentBytes()},
           {"saved_for_backward_bytes", memory.getSavedForBackwardBytes()},
           {"paged_bytes", memory.getPagedBytes()},
           {"kv_cache_bytes", a.generation ? a.generation->kvCacheBytes : 0},
           {"prefill_peak_bytes",
            a.generation ? json::Value(a.generation->prefillPeakBytes)
                         : json::Value(nullptr)},
           {"decode_peak_bytes",
            a.generation && a.generation->decodePeakBytes
                ? json::Value(*a.generation->decodePeakBytes)
                : json::Value(nullptr)},
           {"peak_op", peakOpJson(a)},
           {"at_peak", std::move(atPeak)},
           {"top_tensors", std::move(top)}}},
  };
  addParallelJson(a, options, report);
  if (const auto &b = options.budget) {
    json::Array changes;
    for (const BudgetChange &c : b->changes)
      changes.push_back(json::Object{{"flags", c.flags},
                                     {"reason", c.reason},
                                     {"needs_bytes", c.needs},
                                     {"fits", c.needs <= b->budget}});
    report["budget"] = json::Object{
        {"budget_bytes", b->budget},
        {"used_bytes", b->used},
        {"metric", b->metric},
        {"fits", b->fits()},
        {"margin_bytes", b->budget - b->used},
        {"fitting_batch", b->fittingBatch ? json::Value(*b->fittingBatch)
                                          : json::Value(nullptr)},
        {"changes", std::move(changes)}};
  }
  if (const auto &v = options.validation) {
    json::Object phases;
    for (const ValidationPhase &p : v->phases)
      phases[p.phase] =
          json::Object{{"measured_peak_bytes", p.measuredPeakBytes},
                       {"predicted_peak_bytes", p.predictedPeakBytes}};
    report["validation"] = json::Object{
        {"device", v->device},
        {"allocation_mode", v->allocationMode},
        {"measured_peak_bytes", v->measuredPeakBytes},
        {"predicted_peak_bytes", v->predictedPeakBytes},
        {"difference_bytes", v->measuredPeakBytes - v->predictedPeakBytes},
        {"phases", std::move(phases)},
        {"allocations", v->allocations},
        {"loss", v->loss ? json::Value(*v->loss) : json::Value(nullptr)},
        {"wall_time_ms", v->wallSeconds * 1e3}};
    if (const auto &g = v->gpu) {
      auto optional = [](const std::optional<int64_t> &x) {
        return x ? json::Value(*x) : json::Value(nullptr);
      };
      json::Object &o = *report.getObject("validation");
      o["gpu_name"] = g->deviceName;
      o["gpu_arch"] = g->arch;
      o["measured_allocated_bytes"] = g->measuredAllocatedBytes;
      o["predicted_allocated_bytes"] = g->predictedAllocatedBytes;
      o["measured_reserved_bytes"] = g->measuredReservedBytes;
      o["predicted_reserved_bytes"] = g->predictedReservedBytes;
      o["measured_device_bytes"] = optional(g->measuredDeviceBytes);
      o["predicted_device_bytes"] = g->predictedDeviceBytes;
      o["device_used_before_bytes"] = optional(g->deviceUsedBeforeBytes);
      o["device_used_peak_bytes"] = optional(g->deviceUsedPeakBytes);
      o["kernels"] = static_cast<int64_t>(g->kernels);
      o["launches"] = static_cast<int64_t>(g->launches);
      o["step_time_ms"] = g->stepMs;
      o["flops"] = g->flops;
      o["achieved_flops_per_second"] = g->achievedFlopsPerSecond;
    }
    // What a compiler that bufferizes in place saves on PyTorch's peak.
    if (v->allocationMode == "compiler")
      (*report.getObject("validation"))["saving_bytes"] =
          v->predictedPeakBytes - v->measuredPeakBytes;
  }
  // The rows (a layer's, an op's) are streamed rather than built as
  // json::Values: a large model has hundreds of thousands. The bytes are
  // those of printing the whole tree: json::Object prints its keys sorted,
  // so the streamed ones are merged in sorted and each row's keys are
  // written in sorted order.
  auto writeLayers = [&](json::OStream &j) {
    for (const LayerRow &row : a.layers)
      j.object([&] {
        j.attribute("call", row.call);
        j.attribute("forward_flops", row.flops);
        j.attribute("name", row.name);
        j.attribute("op", row.op);
        j.attribute("output_shape", row.outputShape);
        j.attribute("params", row.params);
        j.attribute("saved_bytes", row.savedBytes);
      });
  };
  auto writeTimeline = [&](json::OStream &j) {
    for (unsigned i = 1; i <= memory.getNumOps(); ++i) {
      Operation *op = memory.getOp(i);
      if (op->hasTrait<OpTrait::IsTerminator>())
        continue;
      j.object([&] {
        j.attribute("live_bytes", memory.getLiveBytes(i));
        j.attribute("name", getLayerName(op->getLoc()));
        j.attribute("op", op->getName().getStringRef());
        j.attribute("phase", stringifyEnum(getStepPhase(op)));
      });
    }
  };
  SmallVector<StringRef> keys;
  for (const auto &entry : report)
    keys.push_back(entry.first);
  keys.push_back("layers");
  if (options.timeline)
    keys.push_back("timeline");
  llvm::sort(keys);
  json::OStream j(os, /*IndentSize=*/2);
  j.object([&] {
    for (StringRef key : keys) {
      if (key == "layers")
        j.attributeArray(key, [&] { writeLayers(j); });
      else if (key == "timeline" && options.timeline)
        j.attributeArray(key, [&] { writeTimeline(j); });
      else
        j.attribute(key, *report.get(key));
    }
  });
  os << "\n";
}

std::string vram::report::humanBytes(int64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = bytes;
  unsigned u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? llvm::formatv("{0} B", bytes).str()
                : llvm::formatv("{0:f2} {1}", v, units[u]).str();
}

std::string vram::report::withCommas(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

StringRef ParallelFigures::getStrategyName() const {
  int64_t zero = layout.getZero();
  return layout.getPp() > 1 ? "pp"
         : layout.getTp() > 1
             ? (!isSharded()         ? (layout.getDp() > 1 ? "ddp_tp" : "tp")
                : layout.getDp() > 1 ? "hsdp_tp"
                                     : "fsdp_tp")
         : zero > 0           ? (zero == 1   ? "zero1"
                                 : zero == 2 ? "zero2"
                                             : "zero3")
         : !isSharded()       ? "ddp"
         : layout.getDp() > 1 ? "hsdp"
                              : "fsdp";
}

std::string vram::report::describeBudgetFigures(const BudgetFinding &b) {
  if (b.fits())
    return llvm::formatv("{0} of {1} ({2}), margin {3}", humanBytes(b.used),
                         humanBytes(b.budget), b.metric,
                         humanBytes(b.budget - b.used));
  return llvm::formatv("{0} of {1} ({2}), {3} over", humanBytes(b.used),
                       humanBytes(b.budget), b.metric,
                       humanBytes(b.used - b.budget));
}

std::string vram::report::describeBudget(const BudgetFinding &b) {
  return (b.fits() ? "within budget: " : "over budget: ") +
         describeBudgetFigures(b);
}

std::vector<std::string>
vram::report::describeBudgetChanges(const BudgetFinding &b) {
  std::vector<std::string> lines;
  if (b.fittingBatch)
    lines.push_back(
        *b.fittingBatch
            ? llvm::formatv("batch size {0} fits", *b.fittingBatch).str()
            : "not even batch size 1 fits");
  for (const BudgetChange &c : b.changes)
    lines.push_back(llvm::formatv(
        "{0}{1} needs {2}: {3}", c.flags,
        c.reason.empty() ? "" : " (" + c.reason + ")", humanBytes(c.needs),
        c.needs <= b.budget ? "fits" : "saves, does not fit"));
  return lines;
}

static void writeText(const Analyses &a, const ReportOptions &options,
                      llvm::raw_ostream &os) {
  const MemoryAnalysis &memory = *a.memory;
  os << "model: " << options.modelName << "   mode: " << a.mode
     << "   batch: " << (a.batch ? std::to_string(*a.batch) : "?");
  if (a.packedTokens)
    os << " packed row of " << *a.packedTokens << " tokens";
  if (a.padded)
    os << " padded rows";
  if (a.gradAccum > 1)
    os << " x " << a.gradAccum << " micro-batches";
  if (a.mode == "train")
    os << "   optimizer: " << a.optimizer.value_or("?")
       << (a.optimizerInBackward ? " (in backward)" : "")
       << (a.ema ? " + EMA" : "");
  os << "   precision: " << a.precision << "\n";
  if (auto config = dyn_cast_or_null<nn::QuantizationAttr>(a.quantize)) {
    if (config.isInt8())
      os << "weights: int8 (bitsandbytes LLM.int8, outlier threshold "
         << llvm::format("%g", config.getThreshold().convertToDouble()) << ", "
         << config.getOutlierCols() << " outlier columns a layer)\n";
    else
      os << "weights: 4-bit " << stringifyEnum(config.getQuantType())
         << " (bitsandbytes, blocks of " << config.getBlocksize()
         << (config.getDoubleQuant() ? ", double quantization" : "") << ")\n";
  }
  if (a.parallel) {
    const ParallelFigures &p = *a.parallel;
    int64_t ranks = p.layout.getWorldSize();
    int64_t tp = p.layout.getTp();
    if (p.layout.getPp() > 1) {
      // Under an interleaved schedule a rank holds several stages: the
      // figures are a rank's.
      int64_t perRank = p.layout.getPpStagesPerRank();
      StringRef unit = perRank > 1 ? "rank" : "stage";
      os << llvm::formatv(
          "parallel: pp={0} (pipeline parallelism, {1} schedule over {2} "
          "micro-batches{3}), figures of {4} {5}{6}; per step it sends {7} "
          "and receives {8}",
          ranks,
          p.layout.getGpipe() ? "GPipe"
          : perRank > 1       ? "interleaved 1F1B"
                              : "1F1B",
          p.layout.getMicrobatches(),
          perRank > 1 ? llvm::formatv(", {0} stages a rank", perRank).str()
                      : std::string(),
          unit, p.layout.getPpStage(),
          llvm::all_of(p.rankPeaks,
                       [&](int64_t peak) {
                         return peak <= p.rankPeaks[p.layout.getPpStage()];
                       })
              ? ", whose step peaks highest"
              : "",
          humanBytes(p.p2pSentBytes), humanBytes(p.p2pReceivedBytes));
      if (!p.rankPeaks.empty()) {
        os << "\n  each " << unit << "'s peak (exact):";
        for (auto [r, peak] : llvm::enumerate(p.rankPeaks))
          os << (r ? ", " : " ") << unit << " " << r << " " << humanBytes(peak);
      }
    } else if (tp > 1 && !p.isSharded() && p.layout.getDp() > 1) {
      int64_t inGroup = p.allReduceBytes - p.replicaAllReduceBytes;
      os << llvm::formatv(
          "parallel: dp={0},tp={1} (DistributedDataParallel over {0} groups "
          "of {1} tensor-parallel ranks{2}, figures per rank); per step a "
          "rank all-reduces {3} across its tensor-parallel group{4}",
          p.layout.getDp(), tp, p.getVocabShardsText(), humanBytes(inGroup),
          (p.tpAllGatherBytes
               ? ", all-gathers " + humanBytes(p.tpAllGatherBytes)
               : std::string()) +
              p.getReduceScatterText());
      if (!p.bucketBytes.empty())
        os << llvm::formatv(" and {0} gradient bucket{1} of {2} across "
                            "replicas",
                            p.bucketBytes.size(),
                            p.bucketBytes.size() == 1 ? "" : "s",
                            humanBytes(p.replicaAllReduceBytes));
      os << llvm::formatv(", sending and receiving {0}",
                          humanBytes(p.getSentBytes()));
    } else if (tp > 1 && !p.isSharded()) {
      os << llvm::formatv(
          "parallel: tp={0} (tensor parallelism: column- and row-parallel "
          "linears{1}, figures per rank); per {2} a rank all-reduces {3}{4}, "
          "sending and receiving {5}",
          ranks, p.getVocabShardsText(),
          a.generation ? "generate() call" : "step",
          humanBytes(p.allReduceBytes),
          (p.tpAllGatherBytes ? (p.tpReduceScatterBytes ? ", all-gathers "
                                                        : " and all-gathers ") +
                                    humanBytes(p.tpAllGatherBytes)
                              : std::string()) +
              p.getReduceScatterText(),
          humanBytes(p.getSentBytes()));
    } else if (p.isSharded()) {
      int64_t replicas = p.layout.getDp(), shards = p.layout.getFsdp();
      if (replicas > 1 && tp > 1)
        os << llvm::formatv("parallel: hsdp={0}x{1},tp={2} (FSDP2 over {1} "
                            "groups of {2} tensor-parallel ranks, {0} "
                            "replicas",
                            replicas, shards, tp);
      else if (replicas > 1)
        os << llvm::formatv("parallel: hsdp={0}x{1} (FSDP2 over {1} ranks, "
                            "{0} replicas",
                            replicas, shards);
      else if (tp > 1)
        os << llvm::formatv("parallel: fsdp={0},tp={1} (FSDP2 over {0} "
                            "groups of {1} tensor-parallel ranks",
                            shards, tp);
      else
        os << llvm::formatv("parallel: fsdp={0} (FSDP2", shards);
      // The root is a unit (named "") when parameters are left to it.
      bool root = llvm::is_contained(p.units, "");
      size_t byShard = p.units.size() - root;
      os << llvm::formatv(", {0} unit{1}: ", p.units.size(),
                          p.units.size() == 1 ? "" : "s");
      if (root)
        os << "the root" << (byShard ? " and " : "");
      if (byShard)
        os << byShard << " by --shard";
      os << ")";
      if (!p.paramDtype.empty() && p.paramDtype != p.shardDtype)
        os << ", " << p.shardDtype << " shards computed in " << p.paramDtype;
      if (!p.reduceDtype.empty() && p.reduceDtype != p.paramDtype)
        os << ", gradients reduced in " << p.reduceDtype;
      os << ", figures of rank 0";
      if (p.fullShards < shards) {
        int64_t smaller = 0;
        for (int64_t r = 0; r < ranks; ++r)
          smaller += !p.holdsRank0Shards(r);
        os << " (" << smaller << " of " << ranks
           << " ranks hold smaller shards)";
      }
      os << llvm::formatv("; per step a rank all-gathers {0} and "
                          "reduce-scatters {1}",
                          humanBytes(p.allGatherBytes),
                          humanBytes(p.reduceScatterBytes));
      int64_t inGroup = p.allReduceBytes - p.replicaAllReduceBytes;
      if (tp > 1 && inGroup)
        os << llvm::formatv(", all-reduces {0} across its tensor-parallel "
                            "group",
                            humanBytes(inGroup));
      if (p.tpAllGatherBytes)
        os << llvm::formatv(", all-gathers {0} of activations across it",
                            humanBytes(p.tpAllGatherBytes))
           << p.getReduceScatterText();
      if (p.replicaAllReduceBytes || (tp == 1 && p.allReduceBytes))
        os << llvm::formatv(
            ", all-reduces {0} across replicas",
            humanBytes(tp > 1 ? p.replicaAllReduceBytes : p.allReduceBytes));
      os << llvm::formatv(", sending and receiving {0}",
                          humanBytes(p.getSentBytes()));
    } else if (p.layout.getZero() == 3) {
      os << llvm::formatv(
          "parallel: dp={0} (DeepSpeed ZeRO-3: parameters, gradients and "
          "optimizer state partitioned, the parameters gathered module by "
          "module), every rank alike; per step a rank all-gathers {1} and "
          "reduce-scatters {2}, sending and receiving {3}",
          ranks, humanBytes(p.allGatherBytes), humanBytes(p.reduceScatterBytes),
          humanBytes(p.getSentBytes()));
    } else if (int64_t zero = p.layout.getZero()) {
      os << llvm::formatv(
          "parallel: dp={0} (DeepSpeed ZeRO-{1}: optimizer state{2} "
          "partitioned, {3} of {4} elements), figures of rank "
          "{5}, whose step peaks highest; per step a rank "
          "all-reduces {6} and all-gathers {7}, sending and receiving {8}",
          ranks, zero, zero == 2 ? " and gradients" : "",
          p.layout.getOverlapComm() ? "two gradient buffers (overlap_comm)"
                                    : "a gradient buffer",
          p.layout.getReduceBucket(), p.layout.getZeroRank(),
          humanBytes(p.allReduceBytes), humanBytes(p.allGatherBytes),
          humanBytes(p.getSentBytes()));
      if (!p.rankPeaks.empty()) {
        os << "\n  each rank's peak (exact):";
        for (auto [r, peak] : llvm::enumerate(p.rankPeaks))
          os << (r ? ", " : " ") << "rank " << r << " " << humanBytes(peak);
      }
    } else {
      os << llvm::formatv(
          "parallel: dp={0} (DistributedDataParallel{1}), "
          "figures per rank",
          ranks, p.layout.getBucketView() ? ", gradient_as_bucket_view" : "");
      if (!p.bucketBytes.empty())
        os << llvm::formatv(
            "; {0} gradient bucket{1} of {2} in all, "
            "all-reduced each step (a rank sends and "
            "receives {3})",
            p.bucketBytes.size(), p.bucketBytes.size() == 1 ? "" : "s",
            humanBytes(p.allReduceBytes), humanBytes(p.getSentBytes()));
    }
    os << "\n";
  }
  std::string active;
  if (a.parameters.active != a.parameters.count)
    active = ", active per token " + withCommas(a.parameters.active);
  os << llvm::formatv("parameters: {0} (trainable {1}{2}), {3}; buffers: {4}\n",
                      withCommas(a.parameters.count),
                      withCommas(a.parameters.trainable), active,
                      humanBytes(a.parameters.bytes),
                      humanBytes(a.parameters.bufferBytes));
  nn::FlopConvention c = options.flops;
  os << llvm::formatv(
      "FLOPs ({0}): forward {1}, backward {2}, optimizer {3}, "
      "total {4}\n",
      stringifyEnum(c),
      withCommas(a.flops->getPhaseFlops(c, StepPhase::Forward)),
      withCommas(a.flops->getPhaseFlops(c, StepPhase::Backward)),
      withCommas(a.flops->getPhaseFlops(c, StepPhase::Optimizer)),
      withCommas(a.flops->getTotal(c)));
  if (int64_t recompute = a.flops->getPhaseFlops(c, StepPhase::Recompute))
    os << llvm::formatv("FLOPs recomputed by activation checkpointing: {0} "
                        "(in the total, not in forward)\n",
                        withCommas(recompute));
  os << llvm::formatv("peak memory (exact): {0} ({1})",
                      withCommas(memory.getPeakBytes()),
                      humanBytes(memory.getPeakBytes()));
  if (Operation *op = memory.getPeakOp())
    os << " at " << getLayerName(op->getLoc()) << " (" << op->getName() << ", "
       << stringifyEnum(getStepPhase(op)) << ")";
  os << "\n";
  if (a.allocatorName != "exact") {
    os << llvm::formatv("allocator {0} (steady state): allocated peak {1} "
                        "(torch.cuda.max_memory_allocated), reserved peak {2} "
                        "(max_memory_reserved)",
                        a.allocatorName, humanBytes(a.allocatorPeaks.allocated),
                        humanBytes(a.allocatorPeaks.reserved));
    if (a.deviceModel)
      os << llvm::formatv(", device {0} (nvidia-smi: reserved + {1} CUDA "
                          "context on {2})",
                          humanBytes(a.devicePeak),
                          humanBytes(a.deviceModel->contextBytes),
                          a.deviceModel->gpu);
    os << "\n";
  }
  if (int64_t paged = memory.getPagedBytes())
    os << "paged optimizer state: " << withCommas(paged) << " ("
       << humanBytes(paged)
       << ") in CUDA unified memory, outside the peaks: on the GPU (and in "
          "nvidia-smi) while it fits, moved to host memory when the GPU is "
          "full\n";
  if (const auto &b = options.budget) {
    os << describeBudget(*b) << "\n";
    for (const std::string &line : describeBudgetChanges(*b))
      os << "  " << line << "\n";
  }
  os << "  at peak: ";
  CategoryBytes breakdown = memory.getBreakdown(memory.getPeakIndex());
  // A KV cache exists only in generation: the line names it then.
  SmallVector<unsigned> shown;
  for (unsigned c = 0; c < kNumMemoryCategories; ++c)
    if (c != static_cast<unsigned>(MemoryCategory::KvCache) || breakdown[c])
      shown.push_back(c);
  llvm::interleave(
      shown, os,
      [&](unsigned c) {
        os << stringifyEnum(static_cast<MemoryCategory>(c)) << " "
           << humanBytes(breakdown[c]);
      },
      ", ");
  os << "\n";
  // The same breakdown as a table with shares of the peak.
  int64_t peak = std::max<int64_t>(memory.getPeakBytes(), 1);
  for (unsigned c = 0; c < kNumMemoryCategories; ++c)
    if (breakdown[c])
      os << llvm::formatv("    {0,-16} {1,12} {2,6:f1}%\n",
                          stringifyEnum(static_cast<MemoryCategory>(c)),
                          humanBytes(breakdown[c]),
                          100.0 * breakdown[c] / peak);
  if (const auto &g = a.generation) {
    os << llvm::formatv("generation: {0} {1}sequences x ({2} prompt + {3} "
                        "new tokens), {4}, {5}\n",
                        a.batch.value_or(1), a.padded ? "left-padded " : "",
                        g->promptLength, g->maxNewTokens, describeChoice(*g),
                        g->kvBlockSize   ? "paged cache (vLLM's blocks)"
                        : g->staticCache ? "StaticCache"
                                         : "DynamicCache");
    os << llvm::formatv("  KV cache: {0} ({1})", withCommas(g->kvCacheBytes),
                        humanBytes(g->kvCacheBytes));
    if (g->kvBlockSize)
      os << llvm::formatv(", {0} blocks of {1} positions", g->kvCacheBlocks,
                          g->kvBlockSize);
    os << "\n";
    os << llvm::formatv("  prefill peak: {0} ({1})\n",
                        withCommas(g->prefillPeakBytes),
                        humanBytes(g->prefillPeakBytes));
    if (g->decodePeakBytes)
      os << llvm::formatv("  decode peak: {0} ({1}), the last token's step\n",
                          withCommas(*g->decodePeakBytes),
                          humanBytes(*g->decodePeakBytes));
  }
  os << llvm::formatv("saved for backward: {0} ({1})\n",
                      withCommas(memory.getSavedForBackwardBytes()),
                      humanBytes(memory.getSavedForBackwardBytes()));
  if (options.topTensors)
    os << "largest tensors at peak:\n";
  for (unsigned i : memory.getTopStoragesAtPeak(options.topTensors)) {
    const Storage &t = memory.getStorages()[i];
    os << llvm::formatv("  {0,12}  {1,-15}  {2}\n", humanBytes(t.bytes),
                        stringifyEnum(t.category), describeStorage(t));
  }
  if (options.timeline) {
    os << "timeline (live bytes while each op runs):\n";
    for (unsigned i = 1; i <= memory.getNumOps(); ++i) {
      Operation *op = memory.getOp(i);
      if (op->hasTrait<OpTrait::IsTerminator>())
        continue;
      std::string name = getLayerName(op->getLoc());
      os << llvm::formatv("  {0,6}  {1,-10} {2,-22} {3,-40} {4,16}\n", i,
                          stringifyEnum(getStepPhase(op)), op->getName(),
                          name.empty() ? "-" : name,
                          withCommas(memory.getLiveBytes(i)));
    }
  }
  // Columns as wide as their widest cell, whatever the name length.
  std::vector<std::array<std::string, 6>> cells;
  cells.push_back(
      {"layer", "op", "output shape", "params", "forward FLOPs", "saved"});
  for (const LayerRow &row : a.layers)
    cells.push_back(
        {(row.name.empty() ? std::string("-") : row.name) +
             (row.call > 1 ? " #" + std::to_string(row.call) : std::string()),
         row.op, row.outputShape, withCommas(row.params), withCommas(row.flops),
         humanBytes(row.savedBytes)});
  std::array<size_t, 6> widths = {};
  for (const auto &line : cells)
    for (unsigned c = 0; c < 6; ++c)
      widths[c] = std::max(widths[c], line[c].size());
  os << "\n";
  for (const auto &line : cells) {
    for (unsigned c = 0; c < 6; ++c) {
      if (c)
        os << "  ";
      if (c < 3)
        os << llvm::left_justify(line[c], c == 2 ? widths[c] : widths[c]);
      else
        os << llvm::right_justify(line[c], widths[c]);
    }
    os << "\n";
  }
}

void vram::writeValidationText(const ValidationFinding &v,
                               llvm::raw_ostream &os) {
  os << "validation (" << v.device << ", " << v.allocationMode
     << " allocation):\n";
  std::vector<std::array<std::string, 4>> rows = {
      {"", "predicted", "measured", "difference"}};
  auto row = [&](std::string name, int64_t predicted, int64_t measured) {
    rows.push_back({std::move(name), withCommas(predicted),
                    withCommas(measured), withCommas(measured - predicted)});
  };
  if (const auto &g = v.gpu) {
    rows.clear();
    rows.push_back({"", "predicted", "measured", "difference"});
    row("allocated bytes", g->predictedAllocatedBytes,
        g->measuredAllocatedBytes);
    row("reserved bytes", g->predictedReservedBytes, g->measuredReservedBytes);
    if (g->measuredDeviceBytes)
      row("device bytes", g->predictedDeviceBytes, *g->measuredDeviceBytes);
    else
      rows.push_back({"device bytes", withCommas(g->predictedDeviceBytes),
                      "n/a (no NVML)", ""});
  } else {
    row("peak bytes", v.predictedPeakBytes, v.measuredPeakBytes);
  }
  for (const ValidationPhase &p : v.phases)
    row("  " + p.phase, p.predictedPeakBytes, p.measuredPeakBytes);
  std::array<size_t, 4> widths = {};
  for (const auto &r : rows)
    for (unsigned c = 0; c < 4; ++c)
      widths[c] = std::max(widths[c], r[c].size());
  for (const auto &r : rows) {
    os << "  " << llvm::left_justify(r[0], widths[0]);
    for (unsigned c = 1; c < 4; ++c)
      os << "  " << llvm::right_justify(r[c], widths[c]);
    os << "\n";
  }
  if (v.allocationMode == "compiler") {
    int64_t saving = v.predictedPeakBytes - v.measuredPeakBytes;
    os << "  predicted: PyTorch's peak; measured: MLIR's in-place "
          "bufferization and buffer reuse\n";
    os << "  a compiler that bufferizes in place could save "
       << withCommas(saving) << " bytes of the peak";
    if (v.predictedPeakBytes > 0)
      os << llvm::formatv(" ({0:f1}%)", 100.0 * saving / v.predictedPeakBytes);
    os << "\n";
  }
  os << "  allocations: " << v.allocations;
  if (v.loss)
    os << "   loss: " << llvm::format("%.7g", *v.loss);
  os << llvm::formatv("   step wall time: {0:f3} ms\n", v.wallSeconds * 1e3);
  if (const auto &g = v.gpu) {
    os << "  device: " << g->deviceName << " (kernels for " << g->arch << ": "
       << g->kernels << ", launches: " << g->launches << ")\n";
    os << llvm::formatv("  step time (CUDA events): {0:f3} ms   FLOPs: {1}   "
                        "achieved: {2:f3} GFLOP/s\n",
                        g->stepMs, withCommas(g->flops),
                        g->achievedFlopsPerSecond * 1e-9);
  }
}

LogicalResult vram::writeReport(ModuleOp module, const ReportOptions &options,
                                ReportFormat format, llvm::raw_ostream &os) {
  FailureOr<Analyses> a = analyze(module, options);
  if (failed(a))
    return failure();
  switch (format) {
  case ReportFormat::Json:
    writeJson(*a, options, os);
    break;
  case ReportFormat::Text:
    writeText(*a, options, os);
    if (options.validation)
      writeValidationText(*options.validation, os);
    break;
  case ReportFormat::Markdown:
    if (failed(writeMarkdown(*a, options, os)))
      return failure();
    break;
  case ReportFormat::Sarif:
    writeSarif(*a, options, os);
    break;
  case ReportFormat::Html:
    writeHtml(*a, options, os);
    break;
  }
  return success();
}
