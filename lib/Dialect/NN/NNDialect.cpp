//===- NNDialect.cpp - the nn model dialect -------------------------------===//

#include "vram/Dialect/NN/NNDialect.h"
#include "vram/Dialect/NN/NNAttributes.h"
#include "vram/Dialect/NN/NNOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <charconv>
#include <cmath>

using namespace mlir;
using namespace vram::nn;

#include "vram/Dialect/NN/NNOpsDialect.cpp.inc"

#include "vram/Dialect/NN/NNEnums.cpp.inc"

static ParseResult parseParallelTail(AsmParser &parser, int64_t &tp,
                                     int64_t &zero, int64_t &reduceBucket,
                                     int64_t &zeroRank, bool &overlapComm,
                                     int64_t &pp, int64_t &microbatches,
                                     bool &gpipe, int64_t &ppStage,
                                     int64_t &ppStagesPerRank);
static void printParallelTail(AsmPrinter &printer, int64_t tp, int64_t zero,
                              int64_t reduceBucket, int64_t zeroRank,
                              bool overlapComm, int64_t pp,
                              int64_t microbatches, bool gpipe, int64_t ppStage,
                              int64_t ppStagesPerRank);

#define GET_ATTRDEF_CLASSES
#include "vram/Dialect/NN/NNAttributes.cpp.inc"

void NNDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "vram/Dialect/NN/NNAttributes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "vram/Dialect/NN/NNOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// The step's configuration attributes
//===----------------------------------------------------------------------===//

LogicalResult
OptimizerConfigAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                            OptimizerKind, OptimizerImpl,
                            llvm::APFloat weightDecay) {
  if (!weightDecay.isFinite() ||
      (weightDecay.isNegative() && !weightDecay.isZero()))
    return emitError() << "optimizer weight_decay must be a finite number >= 0";
  return success();
}

/// The optional tail of #nn.parallel: `, tp = 2`, `, zero = 2`,
/// `, reduce_bucket = N`, `, zero_rank = R`, `, overlap_comm`, `, pp = 4`,
/// `, microbatches = 8`, `, gpipe`, `, pp_stage = S`,
/// `, pp_stages_per_rank = V`, each printed when not
/// its default, parsed in any order.
static ParseResult parseParallelTail(AsmParser &parser, int64_t &tp,
                                     int64_t &zero, int64_t &reduceBucket,
                                     int64_t &zeroRank, bool &overlapComm,
                                     int64_t &pp, int64_t &microbatches,
                                     bool &gpipe, int64_t &ppStage,
                                     int64_t &ppStagesPerRank) {
  tp = pp = microbatches = ppStagesPerRank = 1;
  zero = zeroRank = ppStage = 0;
  reduceBucket = ParallelAttr::kDefaultReduceBucket;
  overlapComm = gpipe = false;
  while (succeeded(parser.parseOptionalComma())) {
    StringRef key;
    int64_t value = 0;
    SMLoc at = parser.getCurrentLocation();
    if (parser.parseKeyword(&key))
      return failure();
    if (key == "overlap_comm" || key == "gpipe") {
      (key == "gpipe" ? gpipe : overlapComm) = true;
      continue;
    }
    if (parser.parseEqual() || parser.parseInteger(value))
      return failure();
    if (key == "tp")
      tp = value;
    else if (key == "zero")
      zero = value;
    else if (key == "reduce_bucket")
      reduceBucket = value;
    else if (key == "zero_rank")
      zeroRank = value;
    else if (key == "pp")
      pp = value;
    else if (key == "microbatches")
      microbatches = value;
    else if (key == "pp_stage")
      ppStage = value;
    else if (key == "pp_stages_per_rank")
      ppStagesPerRank = value;
    else
      return parser.emitError(at)
             << "expected tp, zero, reduce_bucket, zero_rank, overlap_comm, "
                "pp, microbatches, gpipe, pp_stage or pp_stages_per_rank, got '"
             << key << "'";
  }
  return success();
}

static void printParallelTail(AsmPrinter &printer, int64_t tp, int64_t zero,
                              int64_t reduceBucket, int64_t zeroRank,
                              bool overlapComm, int64_t pp,
                              int64_t microbatches, bool gpipe, int64_t ppStage,
                              int64_t ppStagesPerRank) {
  if (tp != 1)
    printer << ", tp = " << tp;
  if (zero != 0)
    printer << ", zero = " << zero;
  if (reduceBucket != ParallelAttr::kDefaultReduceBucket)
    printer << ", reduce_bucket = " << reduceBucket;
  if (zeroRank != 0)
    printer << ", zero_rank = " << zeroRank;
  if (overlapComm)
    printer << ", overlap_comm";
  if (pp != 1)
    printer << ", pp = " << pp;
  if (microbatches != 1)
    printer << ", microbatches = " << microbatches;
  if (gpipe)
    printer << ", gpipe";
  if (ppStage != 0)
    printer << ", pp_stage = " << ppStage;
  if (ppStagesPerRank != 1)
    printer << ", pp_stages_per_rank = " << ppStagesPerRank;
}

LogicalResult ParallelAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   int64_t dp, int64_t fsdp, ArrayAttr shard,
                                   int64_t bucketCap, int64_t firstBucket, bool,
                                   int64_t tp, int64_t zero,
                                   int64_t reduceBucket, int64_t zeroRank,
                                   bool overlapComm, int64_t pp,
                                   int64_t microbatches, bool gpipe,
                                   int64_t ppStage, int64_t ppStagesPerRank) {
  if (dp < 1 || fsdp < 1 || tp < 1 || pp < 1)
    return emitError() << "parallel dp, fsdp, tp and pp must be >= 1, got dp = "
                       << dp << ", fsdp = " << fsdp << ", tp = " << tp
                       << ", pp = " << pp;
  if (dp > kMaxWorldSize || fsdp > kMaxWorldSize / dp ||
      tp > kMaxWorldSize / (dp * fsdp) || pp > kMaxWorldSize / (dp * fsdp * tp))
    return emitError() << "parallel dp x fsdp x tp x pp must be at most "
                       << kMaxWorldSize << " ranks, got dp = " << dp
                       << ", fsdp = " << fsdp << ", tp = " << tp
                       << ", pp = " << pp;
  if (pp > 1 && dp * fsdp * tp != 1)
    return emitError() << "parallel pp is not combined with other axes yet";
  if (microbatches < 1 || ppStage < 0 || ppStage >= pp ||
      (pp == 1 && (microbatches != 1 || gpipe)))
    return emitError() << "parallel pp_stage must be a stage of pp, and "
                          "microbatches >= 1 and gpipe need pp > 1";
  // ScheduleInterleaved1F1B; the looped GPipe (ScheduleLoopedBFS) is not
  // modelled.
  if (ppStagesPerRank < 1 ||
      (ppStagesPerRank > 1 &&
       (pp == 1 || gpipe || ppStagesPerRank > kMaxWorldSize / pp)))
    return emitError() << "parallel pp_stages_per_rank must be >= 1, more "
                          "than 1 only with pp > 1 and without gpipe "
                          "(interleaved 1F1B), got "
                       << ppStagesPerRank;
  if (!shard || !llvm::all_of(shard, [](Attribute a) {
        auto s = dyn_cast<StringAttr>(a);
        return s && !s.getValue().empty();
      }))
    return emitError() << "parallel shard must be an array of non-empty "
                          "module patterns";
  if (bucketCap < 1 || firstBucket < 1)
    return emitError() << "parallel bucket sizes must be >= 1 byte";
  if (zero < 0 || zero > 3)
    return emitError() << "parallel zero must be a ZeRO stage 1, 2 or 3 (0: "
                          "none), got "
                       << zero;
  if (zero > 0 && (fsdp != 1 || tp != 1))
    return emitError() << "parallel zero partitions over dp alone, got fsdp = "
                       << fsdp << ", tp = " << tp;
  if (reduceBucket < 1)
    return emitError() << "parallel reduce_bucket must be >= 1 element, got "
                       << reduceBucket;
  if (zeroRank < 0 || zeroRank >= dp)
    return emitError() << "parallel zero_rank must be a dp rank, got "
                       << zeroRank;
  if (overlapComm && zero == 0)
    return emitError() << "parallel overlap_comm is ZeRO's: it needs zero";
  return success();
}

LogicalResult
LoraConfigAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       int64_t rank, llvm::APFloat alpha, llvm::APFloat dropout,
                       ArrayAttr targets) {
  if (rank <= 0)
    return emitError() << "LoRA r must be > 0, got " << rank;
  if (!alpha.isFinite())
    return emitError() << "LoRA alpha must be finite";
  double p = dropout.convertToDouble();
  if (!(p >= 0 && p < 1))
    return emitError() << "LoRA dropout must be in [0, 1), got " << p;
  if (!targets || targets.empty())
    return emitError() << "LoRA targets must be a non-empty array";
  for (Attribute target : targets) {
    auto name = dyn_cast<StringAttr>(target);
    if (!name || name.getValue().empty())
      return emitError() << "LoRA targets must be non-empty strings, got "
                         << target;
  }
  return success();
}

LogicalResult
QuantizationAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         QuantType type, int64_t blocksize, bool doubleQuant,
                         APFloat threshold, int64_t outlierCols) {
  double limit = threshold.convertToDouble();
  if (type == QuantType::Int8) {
    // LLM.int8 scales whole rows: no blocks, nothing to quantize twice.
    if (blocksize != 0 || doubleQuant)
      return emitError() << "int8 (LLM.int8) weights have no blocks and no "
                            "double quantization: blocksize = 0, "
                            "double_quant = false";
    if (!std::isfinite(limit) || limit < 0)
      return emitError() << "the int8 outlier threshold must be finite and "
                            "non-negative, got "
                         << limit;
    if (outlierCols < 0 || (limit == 0 && outlierCols != 0))
      return emitError() << "outlier_cols must be non-negative, and 0 "
                            "without a threshold, got "
                         << outlierCols;
    return success();
  }
  // bitsandbytes' quantize_4bit accepts these block sizes.
  if (blocksize < 32 || blocksize > 4096 || !llvm::isPowerOf2_64(blocksize))
    return emitError() << "4-bit quantization blocksize must be a power of "
                          "two in [32, 4096], got "
                       << blocksize;
  if (limit != 0 || outlierCols != 0)
    return emitError() << "threshold and outlier_cols are LLM.int8's (int8), "
                          "not 4-bit weights'";
  return success();
}

/// The shortest decimal form that reads back as `value`: 32, 0.1, 1e-05.
static std::string shortestDecimal(double value) {
  char buffer[32];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

std::string LoraConfigAttr::getSpelling() const {
  std::string spelling =
      "r=" + std::to_string(getRank()) +
      ",alpha=" + shortestDecimal(getAlpha().convertToDouble()) +
      ",dropout=" + shortestDecimal(getDropout().convertToDouble()) +
      ",targets=";
  llvm::interleave(
      getTargets(),
      [&](Attribute t) { spelling += cast<StringAttr>(t).getValue().str(); },
      [&] { spelling += "|"; });
  return spelling;
}

/// `op` is a training step: it carries `nn.mode = #nn<mode train>`.
static bool isTrainingStep(Operation *op) {
  auto mode = op->getAttrOfType<StepModeAttr>(NNDialect::kModeAttrName);
  return mode && mode.getValue() == StepMode::Train;
}

/// The batch a front end bound is a dimension of the model's inputs (the
/// leading one, or another for a time-major ONNX graph): a function with
/// ranked inputs must have one with a dimension of that size.
static LogicalResult verifyBatchMatchesArguments(Operation *op, int64_t batch) {
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func)
    return success();
  SmallVector<RankedTensorType> inputs;
  for (Type type : func.getArgumentTypes())
    if (auto ranked = dyn_cast<RankedTensorType>(type))
      if (ranked.getRank() > 0)
        inputs.push_back(ranked);
  if (inputs.empty() || llvm::any_of(inputs, [&](RankedTensorType t) {
        return llvm::is_contained(t.getShape(), batch);
      }))
    return success();
  InFlightDiagnostic diag =
      op->emitError() << "'" << NNDialect::kBatchAttrName << "' is " << batch
                      << " but no input has a dimension of that size "
                         "(input shapes: ";
  llvm::interleaveComma(inputs, diag, [&](RankedTensorType t) {
    diag << "[";
    llvm::interleaveComma(t.getShape(), diag);
    diag << "]";
  });
  return diag << ")";
}

LogicalResult NNDialect::verifyOperationAttribute(Operation *op,
                                                  NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  Attribute value = attr.getValue();
  auto expect = [&](bool ok, const Twine &what) -> LogicalResult {
    if (ok)
      return success();
    return op->emitError() << "'" << name << "' must be " << what << ", got "
                           << value;
  };
  if (name == kModeAttrName)
    return expect(isa<StepModeAttr>(value), "a step mode (#nn<mode train>)");
  if (name == kPersistentGradsAttrName || name == kPaddedAttrName)
    return expect(isa<UnitAttr>(value), "a unit attribute");
  if (name == kOptimizerInBackwardAttrName)
    return expect(isa<UnitAttr>(value) && isTrainingStep(op),
                  "a unit attribute on a training step");
  if (name == kMaxNewTokensAttrName || name == kPackedTokensAttrName) {
    auto tokens = dyn_cast<IntegerAttr>(value);
    return expect(tokens && tokens.getType().isSignlessInteger(64) &&
                      tokens.getInt() >= 1 && isa<FunctionOpInterface>(op),
                  "an i64 >= 1 on a function");
  }
  if (name == kNumBeamsAttrName) {
    auto beams = dyn_cast<IntegerAttr>(value);
    return expect(beams && beams.getType().isSignlessInteger(64) &&
                      beams.getInt() >= 2 && isa<FunctionOpInterface>(op) &&
                      op->hasAttr(kMaxNewTokensAttrName),
                  "an i64 >= 2 on a generation program");
  }
  if (name == kTensorParallelAttrName) {
    auto ranks = dyn_cast<IntegerAttr>(value);
    return expect(ranks && ranks.getType().isSignlessInteger(64) &&
                      ranks.getInt() >= 2 &&
                      ranks.getInt() <= ParallelAttr::kMaxWorldSize &&
                      isa<FunctionOpInterface>(op),
                  "an i64 in [2, " + Twine(ParallelAttr::kMaxWorldSize) +
                      "] on a function");
  }
  if (name == kEmaAttrName || name == kKeepOutputAttrName)
    return expect(isa<UnitAttr>(value) && isTrainingStep(op),
                  "a unit attribute on a training step");
  if (name == kGradAccumAttrName) {
    auto steps = dyn_cast<IntegerAttr>(value);
    return expect(steps && steps.getType().isSignlessInteger(64) &&
                      steps.getInt() > 0,
                  "a positive i64 integer");
  }
  if (name == kModelAttrName)
    return expect(isa<StringAttr>(value), "a string");
  if (name == kBatchAttrName) {
    // A wider integer would be truncated where the batch is read.
    auto batch = dyn_cast<IntegerAttr>(value);
    if (failed(expect(batch && batch.getType().isSignlessInteger(64) &&
                          batch.getInt() > 0,
                      "a positive i64 integer")))
      return failure();
    return verifyBatchMatchesArguments(op, batch.getInt());
  }
  if (name == kSequenceLogitsAttrName || name == kMaskedLmAttrName ||
      name == kSeq2SeqLmAttrName || name == kTokenClassifierAttrName ||
      name == kSequenceClassifierAttrName)
    return expect(isa<UnitAttr>(value), "a unit attribute");
  if (name == kTorchVersionAttrName) {
    auto str = dyn_cast<StringAttr>(value);
    return expect(str && symbolizeTorchVersion(str.getValue()),
                  "a PyTorch version (" + enumSpellings<TorchVersion>() + ")");
  }
  if (name == kDeviceAttrName) {
    auto str = dyn_cast<StringAttr>(value);
    return expect(str && symbolizeDevice(str.getValue()),
                  "a device (" + enumSpellings<Device>() + ")");
  }
  if (name == kCudnnWorkspaceAttrName) {
    auto str = dyn_cast<StringAttr>(value);
    return expect(str && symbolizeCudnnWorkspace(str.getValue()),
                  "a cuDNN workspace assumption (" +
                      enumSpellings<CudnnWorkspace>() + ")");
  }
  if (name == kPhaseAttrName) {
    // Only a forward op can be recomputed; ops with a phase of their own
    // (backward nodes, the update) keep it. A view or a cast can also be
    // made in backward or before the update (vram-parallel's gradient
    // shards, ZeRO's flattened gradient slices).
    auto phase = dyn_cast<StepPhaseAttr>(value);
    bool ok = phase && (phase.getValue() == StepPhase::Recompute ||
                        ((phase.getValue() == StepPhase::Backward ||
                          phase.getValue() == StepPhase::Optimizer) &&
                         isa<AliasingOpInterface, CastOp>(op) && isPure(op)));
    if (failed(expect(ok, "#nn<phase recompute>, or #nn<phase backward> or "
                          "#nn<phase optimizer> on a view or a cast")))
      return failure();
    return expect(!isa<StepPhaseOpInterface>(op),
                  "absent on an op with a phase of its own");
  }
  if (name == kAutocastAttrName) {
    auto type = dyn_cast<TypeAttr>(value);
    return expect(type && (type.getValue().isF16() || type.getValue().isBF16()),
                  "the autocast dtype (f16 or bf16)");
  }
  if (name == kOptimizerAttrName) {
    auto config = dyn_cast<OptimizerConfigAttr>(value);
    if (failed(expect(static_cast<bool>(config),
                      "an optimizer configuration (#nn.optimizer_config<adam, "
                      "foreach, weight_decay = 0.0>)")) ||
        failed(expect(isTrainingStep(op),
                      "on a training step (nn.mode = #nn<mode train>)")))
      return failure();
    // The updates the step makes are the ones it says it makes.
    WalkResult walk = op->walk([&](OptimizerStepOp update) {
      if (update.getOptimizer() == config.getKind() &&
          update.getImplementation() == config.getImplementation() &&
          update.getWeightDecay().convertToDouble() ==
              config.getWeightDecay().convertToDouble())
        return WalkResult::advance();
      update.emitError() << "'" << update->getName()
                         << "' disagrees with the step's '" << name
                         << "' = " << config;
      return WalkResult::interrupt();
    });
    return failure(walk.wasInterrupted());
  }
  if (name == kFloat32AttrName || name == kPromoteAttrName)
    return expect(isa<UnitAttr>(value) && op->getNumResults() >= 1,
                  "a unit attribute on an op with results");
  if (name == kCpuDecompositionAttrName)
    return expect(isa<StringAttr>(value) &&
                      !cast<StringAttr>(value).getValue().empty(),
                  "a module name");
  if (name == kFunctionalAttrName)
    return expect(isa<UnitAttr>(value) && isa<LinearOp>(op),
                  "a unit attribute on an nn.linear");
  if (name == kShardedAttrName || name == kFlatParamAttrName)
    return expect(isa<UnitAttr>(value) && isa<ParamOp>(op),
                  "a unit attribute on an nn.param");
  if (name == kZeroGradAttrName)
    return expect(isa<UnitAttr>(value) && isa<ReleaseOp>(op),
                  "a unit attribute on an nn.release");
  if (name == kParallelAttrName)
    return expect(
        isa<ParallelAttr>(value) && isa<FunctionOpInterface>(op),
        "a parallel layout (#nn.parallel<dp = 8, fsdp = 1, shard = [], "
        "bucket_cap = 26214400, first_bucket = 1048576, bucket_view "
        "= false>) on a function");
  if (name == kRankPeaksAttrName) {
    auto peaks = dyn_cast<DenseI64ArrayAttr>(value);
    return expect(peaks && !peaks.empty() &&
                      llvm::all_of(peaks.asArrayRef(),
                                   [](int64_t p) { return p >= 0; }) &&
                      isa<FunctionOpInterface>(op),
                  "a non-empty array<i64> of bytes >= 0 on a function");
  }
  if (name == kLoraAttrName)
    return expect(isa<LoraConfigAttr>(value) && isa<FunctionOpInterface>(op),
                  "a LoRA configuration (#nn.lora<r = 4, alpha = 32.0, "
                  "dropout = 0.1, targets = [\"conv2d\"]>) on a function");
  if (name == kQuantizeAttrName)
    return expect(isa<QuantizationAttr>(value) && isa<FunctionOpInterface>(op),
                  "a 4-bit quantization (#nn.quantize<nf4, blocksize = 64, "
                  "double_quant = false>) on a function");
  if (name == kCheckpointAttrName) {
    auto modules = dyn_cast<ArrayAttr>(value);
    bool ok = modules && !modules.empty() &&
              llvm::all_of(modules, [](Attribute module) {
                auto pattern = dyn_cast<StringAttr>(module);
                return pattern && !pattern.getValue().empty();
              });
    if (failed(expect(ok, "a non-empty array of non-empty module patterns")))
      return failure();
    return expect(isTrainingStep(op),
                  "on a training step (nn.mode = #nn<mode train>)");
  }
  if (name == kGradViewsAttrName) {
    auto chains = dyn_cast<ArrayAttr>(value);
    bool ok = chains && llvm::all_of(chains, [](Attribute chain) {
                auto steps = dyn_cast<ArrayAttr>(chain);
                return steps && llvm::all_of(steps, [](Attribute step) {
                         return isa<DenseI64ArrayAttr, TypeAttr>(step);
                       });
              });
    return expect(ok, "an array of view chains (arrays of permutations and "
                      "tensor types)");
  }
  return op->emitError() << "unknown nn dialect attribute '" << name << "'";
}
