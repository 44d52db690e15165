//===- ReportData.h - what the report writers print ---------------*- C++
//-*-===//
//
// Private to lib/Report: the analyses' results gathered once (analyze()) and
// the helpers every writer shares. Writers print; they compute nothing.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_LIB_REPORT_REPORTDATA_H
#define VRAM_LIB_REPORT_REPORTDATA_H

#include "vram/Analysis/Allocator.h"
#include "vram/Analysis/Device.h"
#include "vram/Analysis/FlopAnalysis.h"
#include "vram/Analysis/GenerationMemory.h"
#include "vram/Analysis/MemoryAnalysis.h"
#include "vram/Analysis/StepMemory.h"
#include "vram/Report/Report.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/JSON.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace vram::report {

struct LayerRow {
  std::string name;
  std::string op;
  std::string outputShape;
  int64_t params = 0;
  int64_t paramBytes = 0; ///< the parameters' storage (4-bit: packed)
  int64_t flops = 0;
  int64_t savedBytes = 0;
  int64_t principalWork = -1; ///< full-convention FLOPs of `op`
  unsigned call = 1;          ///< which call of the layer (shared modules)
};

/// One rank's share of a multi-GPU job, read off its step.
struct ParallelFigures {
  nn::ParallelAttr layout;
  /// DDP's gradient buckets (nn.grad_bucket), in bytes, in step order.
  std::vector<int64_t> bucketBytes;
  /// FSDP's units in the order forward gathers them ("" is the root).
  std::vector<std::string> units;
  /// FSDP's dtypes, as --precision spells them: the shards', the gathered
  /// parameters' (MixedPrecisionPolicy param_dtype) and the reduce-scatter's
  /// (reduce_dtype); empty without sharding.
  std::string shardDtype, paramDtype, reduceDtype;
  /// Per step: bytes all-reduced (DDP's buckets), all-gathered (the
  /// all-gather outputs) and reduce-scattered (the reduce-scatter inputs).
  int64_t allReduceBytes = 0, allGatherBytes = 0, reduceScatterBytes = 0;
  /// The part of allReduceBytes HSDP all-reduces across the dp replicas
  /// (the gradient shards); the rest runs in the tensor-parallel group,
  /// or across the dp replicas without tensor parallelism.
  int64_t replicaAllReduceBytes = 0;
  /// Bytes all-gathered within the tensor-parallel group (a column-parallel
  /// lm_head's logits and Phi-3's fused projections' outputs,
  /// nn.all_gather_output; the gradients of nn.split_input's inputs):
  /// transformers' tp plan, which shards lm_head over the vocabulary
  /// ("layers": the decoder layers only).
  int64_t tpAllGatherBytes = 0;
  /// Bytes reduce-scattered within the tensor-parallel group: sequence
  /// parallelism's row-parallel outputs (nn.reduce_scatter_output) and
  /// lm_head's input gradient (an nn.all_gather_output with scatter_grad).
  int64_t tpReduceScatterBytes = 0;
  /// Sequence parallelism between the tensor-parallel regions (the step
  /// reduce-scatters into the positions' shards).
  bool sequenceParallel = false;
  /// The embedding is row-parallel over the vocabulary
  /// (nn.vocab_parallel_embedding, --tp-plan=vocab); the cross-entropy runs
  /// on lm_head's shards (nn.vocab_parallel_cross_entropy, loss_parallel()).
  bool vocabParallelEmbedding = false, lossParallel = false;
  /// `transformers`, `vocab` or `layers`, read from the collectives above.
  llvm::StringRef tpPlan;
  /// What tensor parallelism shards besides the decoder layers' linears,
  /// for the text report: ", lm_head over the vocabulary" and more.
  std::string getVocabShardsText() const {
    if (vocabParallelEmbedding)
      return lossParallel ? ", the embedding and lm_head over the vocabulary, "
                            "the loss on lm_head's shards"
                          : ", the embedding and lm_head over the vocabulary";
    if (lossParallel)
      return ", lm_head over the vocabulary, the loss on its shards";
    if (sequenceParallel)
      return ", lm_head over the vocabulary, the norms and residuals over the "
             "positions (sequence parallelism)";
    return tpAllGatherBytes ? ", lm_head over the vocabulary" : "";
  }
  /// " and reduce-scatters N bytes" of sequence parallelism, for the text
  /// report (empty without).
  std::string getReduceScatterText() const;
  /// Shard indices 0 .. fullShards - 1 hold chunks as large as rank 0's
  /// (every index without sharding). The mesh is (dp, fsdp) or (fsdp, tp),
  /// ranks row-major: rank r's shard index is r % fsdp, or (r / tp) % fsdp.
  int64_t fullShards = 1;
  /// Pipeline parallelism: bytes this stage sends to and receives from its
  /// neighbours per step (nn.p2p_send, nn.p2p_recv).
  int64_t p2pSentBytes = 0, p2pReceivedBytes = 0;
  /// ZeRO-1/2 and pipeline parallelism: every rank's exact peak
  /// (nn.rank_peaks), by rank.
  std::vector<int64_t> rankPeaks;
  bool isSharded() const { return layout.getFsdp() > 1 || !units.empty(); }
  bool holdsRank0Shards(int64_t rank) const {
    return (rank / layout.getTp()) % layout.getFsdp() < fullShards;
  }
  /// Whether the step's figures are rank `rank`'s: under ZeRO those of the
  /// rank vram-parallel chose (zero_rank), else every rank holding rank
  /// 0's shards.
  bool isFiguresRank(int64_t rank) const {
    // ZeRO-3's ranks hold alike partitions of every parameter.
    if (layout.getZero() == 3)
      return true;
    if (layout.getPp() > 1)
      return rank == layout.getPpStage();
    return layout.getZero() > 0 ? rank == layout.getZeroRank()
                                : holdsRank0Shards(rank);
  }
  /// What one rank sends (and receives) per step with ring collectives.
  int64_t getSentBytes() const;
  /// With the point-to-point transfers of pipeline parallelism.
  int64_t getTotalSentBytes() const;
  int64_t getTotalReceivedBytes() const;
  /// The report's name of the layout: ddp, zero1, zero2, zero3, fsdp, hsdp,
  /// tp, fsdp_tp, hsdp_tp or pp.
  llvm::StringRef getStrategyName() const;
};

/// What the report shows, read from the analyses; nothing is recomputed.
struct Analyses {
  mlir::func::FuncOp func;
  std::string mode;
  ParameterSummary parameters;
  std::optional<int64_t> batch;
  std::string precision;
  /// The PyTorch modelled by the step (null for a forward model).
  llvm::json::Value torchVersion = nullptr, device = nullptr;
  /// What the passes made the step, read from its attributes: the optimizer
  /// of a training step (nn.optimizer), the LoRA configuration in --lora's
  /// spelling (nn.lora; empty: none), the checkpointed module patterns
  /// (nn.checkpoint).
  std::optional<std::string> optimizer;
  std::string lora;
  /// The 4-bit base weights (nn.quantize); null: none.
  mlir::Attribute quantize;
  std::vector<std::string> checkpoint;
  /// Micro-batches per optimizer update (nn.grad_accum; 1 without
  /// accumulation). The step is one micro-batch's, with the update.
  int64_t gradAccum = 1;
  /// Whether the optimizer runs inside backward, a parameter at a time
  /// (nn.optimizer_in_backward).
  bool optimizerInBackward = false;
  /// Whether an EMA of the model is kept (nn.ema).
  bool ema = false;
  /// Whether the loop holds the model's output to the step's end
  /// (nn.keep_output).
  bool keepOutput = false;
  /// The training loss's op (nn.cross_entropy, nn.fused_linear_cross_entropy,
  /// ...) without the dialect prefix; empty for inference.
  std::string loss;
  /// clip_grad_norm_'s max_norm (nn.clip_grad_norm), when the step clips.
  std::optional<double> maxGradNorm;
  /// Whether the forward copies keys and values into transformers'
  /// DynamicCache (nn.kv_cache_update ops: use_cache, or generation).
  bool useCache = false;
  /// Liger-Kernel's kernels the step runs (their op names without "liger_",
  /// and the fused linear cross-entropy), in that order.
  std::vector<std::string> liger;
  /// The tokens of the one packed row the batch is (nn.packed_tokens:
  /// --tokens); none for a batch of rows.
  std::optional<int64_t> packedTokens;
  /// Whether the rows are padded, with their attention_mask (nn.padded).
  bool padded = false;
  /// The prefill and decode figures of a generation program
  /// (--mode=generate); none for other steps.
  std::optional<GenerationFigures> generation;
  /// The multi-GPU layout (nn.parallel) and what the step's collectives
  /// move; none for one GPU.
  std::optional<ParallelFigures> parallel;
  std::unique_ptr<FlopAnalysis> flops;
  /// The step's figures (StepMemory) and its memory analysis.
  std::unique_ptr<StepMemory> stepMemory;
  const MemoryAnalysis *memory = nullptr;
  std::string allocatorName;
  AllocatorPeaks allocatorPeaks;
  /// The device figure (reserved + context) when a device was modelled.
  std::optional<DeviceModel> deviceModel;
  int64_t devicePeak = 0;
  int64_t libraryBytes = 0; ///< cuBLAS/cuBLASLt workspaces held
  /// pytorch-cuda: the first iteration read stage by stage with
  /// empty_cache() between (runStagesWithEmptyCache).
  std::vector<StageMemory> stages;
  std::vector<LayerRow> layers;
};

/// The collectives and layout of a parallel step.
ParallelFigures readParallelFigures(mlir::func::FuncOp func,
                                    nn::ParallelAttr layout);

/// Runs the analyses of the module's `@step` (or `@forward`).
mlir::FailureOr<Analyses> analyze(mlir::ModuleOp module,
                                  const ReportOptions &options);

std::string typeString(mlir::Type type);
// The layer name of an op's location: vram::getLayerName (StepInfo.h).
/// "file:line:col" for file locations, the name (and file) of named ones.
std::string locationString(mlir::Location loc);
/// A short name for a storage: the parameter name, the input, or the op.
std::string describeStorage(const Storage &s);
std::string humanBytes(int64_t bytes);
std::string withCommas(int64_t n);

/// "within budget: 1.01 GiB of 40.00 GiB (device), margin 38.99 GiB" or
/// "over budget: 9.31 GiB of 8.00 GiB (exact), 1.31 GiB over".
std::string describeBudget(const BudgetFinding &budget);
/// The figures of that verdict: "1.01 GiB of 40.00 GiB (device), margin
/// 38.99 GiB" or "9.31 GiB of 8.00 GiB (exact), 1.31 GiB over".
std::string describeBudgetFigures(const BudgetFinding &budget);
/// What was measured to fit or save, one line each: "batch size 4 fits",
/// "--optimizer=adam-fused ... needs 7.90 GiB: fits".
std::vector<std::string> describeBudgetChanges(const BudgetFinding &budget);

void writeHtml(const Analyses &a, const ReportOptions &options,
               llvm::raw_ostream &os);
void writeSarif(const Analyses &a, const ReportOptions &options,
                llvm::raw_ostream &os);
/// Writes the Markdown report; with options.comparePath, the deltas against
/// that baseline. Fails with an MLIR error, writing nothing, when the
/// baseline cannot be read.
mlir::LogicalResult writeMarkdown(const Analyses &a,
                                  const ReportOptions &options,
                                  llvm::raw_ostream &os);

/// The figures --compare reads from a baseline JSON report (docs/Report.md).
struct BaselineFigures {
  int64_t peak = 0, persistent = 0, saved = 0, params = 0;
  CategoryBytes atPeak = {};
  /// The baseline's model and step mode ("model.name", "config.mode"), when it
  /// names them: a comparison across models is warned about.
  std::string model, mode;
};
/// Reads a baseline report from JSON text (`name` names it in errors, as
/// "baseline 'NAME': memory.peak_bytes: expected a non-negative integer").
/// Every figure must be present and an integer in [0, INT64_MAX].
llvm::Expected<BaselineFigures> parseBaseline(llvm::StringRef text,
                                              llvm::StringRef name);
/// parseBaseline of the file at `path`.
llvm::Expected<BaselineFigures> readBaseline(llvm::StringRef path);

} // namespace vram::report

#endif // VRAM_LIB_REPORT_REPORTDATA_H
