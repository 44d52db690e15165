//===- CommandLine.cpp - vram-opt's flags as pipeline options -------------===//

#include "vram/Pipeline/CommandLine.h"
#include "vram/Analysis/StepInfo.h"
#include "vram/Dialect/NN/NNAttributes.h"
#include "vram/Dialect/NN/TorchSemantics.h"
#include "vram/Lint/Budget.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ManagedStatic.h"
#include "llvm/Support/Path.h"

#include <cmath>

using namespace mlir;
using namespace vram;
namespace cl = llvm::cl;
using nn::EnumValues;

/// Whether a --parallel spec names the sp axis (tp=4,sp).
static bool hasSequenceParallel(llvm::StringRef spec) {
  llvm::SmallVector<llvm::StringRef> axes;
  spec.split(axes, ',');
  return llvm::any_of(axes, [](llvm::StringRef axis) {
    return axis.split('=').first.trim() == "sp";
  });
}

namespace {
enum class InputKind { Auto, Mlir, Onnx, TorchExport, Cxx };
enum class GpuBinary { Ptx, Cubin };
enum class CacheImplementation { Dynamic, Static, Paged };
enum class AllocationFlag { PyTorch, Compiler };

bool isCxxSource(llvm::StringRef path) {
  llvm::StringRef ext = llvm::sys::path::extension(path);
  return ext == ".cpp" || ext == ".cc" || ext == ".cxx" || ext == ".C";
}

/// The flags. The choices take their accepted values from the dialect's
/// enums (NNAttributes.td): CommandLine validates them, nothing here does.
struct VramOptFlags {
  cl::OptionCategory modelCat{"Model"};
  cl::OptionCategory stepCat{"Step (what one iteration runs)"};
  cl::OptionCategory scenarioCat{"Scenario"};
  cl::OptionCategory outputCat{"Output"};

  cl::opt<std::string> zooName{
      "zoo", cl::desc("Use a built-in model (--zoo=list lists them)"),
      cl::value_desc("name"), cl::cat(modelCat)};
  cl::opt<std::string> huggingFaceConfig{
      "hf",
      cl::desc("Build a model from a Hugging Face config.json (or the "
               "directory holding it)"),
      cl::value_desc("dir or config.json"), cl::cat(modelCat)};
  cl::opt<InputKind> importKind{
      "import", cl::desc("Input format (default: from the file extension)"),
      cl::values(clEnumValN(InputKind::Mlir, "mlir", "MLIR (nn dialect)"),
                 clEnumValN(InputKind::Onnx, "onnx", "ONNX ModelProto"),
                 clEnumValN(InputKind::TorchExport, "pt2",
                            "torch.export archive (default for .pt2)"),
                 clEnumValN(InputKind::Cxx, "cxx",
                            "C++ source defining LibTorch modules (default "
                            "for .cpp, .cc, .cxx)")),
      cl::init(InputKind::Auto), cl::cat(modelCat)};
  cl::opt<int64_t> batch{"batch", cl::desc("Batch size"), cl::init(-1),
                         cl::cat(modelCat)};
  cl::opt<int64_t> imageSize{"image-size",
                             cl::desc("Image side for vision models"),
                             cl::init(-1), cl::cat(modelCat)};
  cl::opt<int64_t> seqLen{"seq",
                          cl::desc("Sequence length for language models"),
                          cl::init(-1), cl::cat(modelCat)};
  cl::opt<int64_t> packedTokens{
      "tokens",
      cl::desc("A packed batch: one row of N tokens packing several "
               "sequences without padding (DataCollatorWithFlattening, TRL's "
               "padding_free), their position_ids restarting at each. "
               "Without a cache (--use-cache=false, --checkpoint) "
               "transformers then hands sdpa a [1, 1, N, N] mask (instead "
               "of --batch and --seq)"),
      cl::value_desc("N"), cl::init(-1), cl::cat(modelCat)};
  cl::opt<bool> padded{
      "padded",
      cl::desc("The rows are padded to --seq and the forward takes their "
               "attention_mask (model(input_ids, attention_mask=mask), as a "
               "tokenizer pads a batch): transformers then hands sdpa a "
               "[batch, 1, seq, seq] mask. With --mode=generate, the "
               "prompts are left-padded to --prompt-len (generate(ids, "
               "attention_mask=mask)): every forward gets a mask over the "
               "keys it reads"),
      cl::init(false), cl::cat(modelCat)};
  cl::opt<int64_t> decoderSeqLen{
      "decoder-seq",
      cl::desc("Encoder-decoder models (--hf t5): the decoder's tokens, the "
               "labels' length (default: --seq)"),
      cl::init(-1), cl::cat(modelCat)};
  cl::opt<int64_t> promptLen{
      "prompt-len",
      cl::desc("--mode=generate: prompt tokens per sequence (the prefill's "
               "length, like --seq)"),
      cl::init(-1), cl::cat(modelCat)};
  cl::opt<int64_t> maxNewTokens{
      "max-new-tokens",
      cl::desc("--mode=generate: tokens generated per sequence "
               "(generate(max_new_tokens=T), greedy unless --do-sample, "
               "with a DynamicCache)"),
      cl::init(0), cl::cat(modelCat)};
  cl::opt<bool> doSample{
      "do-sample",
      cl::desc("--mode=generate: generate(do_sample=True): softmax and "
               "multinomial after the logits warpers (--temperature, "
               "--top-k, --top-p) instead of argmax"),
      cl::init(false), cl::cat(modelCat)};
  cl::opt<double> temperature{
      "temperature",
      cl::desc("--do-sample: generate(temperature=T), > 0 (1.0, the default: "
               "no warper)"),
      cl::init(1.0), cl::cat(modelCat)};
  cl::opt<int64_t> topK{
      "top-k",
      cl::desc("--do-sample: generate(top_k=K), >= 0 (transformers' default "
               "50; 0: no warper)"),
      cl::init(50), cl::cat(modelCat)};
  cl::opt<double> topP{
      "top-p",
      cl::desc("--do-sample: generate(top_p=P), in (0, 1] (1.0, the "
               "default: no warper)"),
      cl::init(1.0), cl::cat(modelCat)};
  cl::opt<double> minP{
      "min-p",
      cl::desc("--do-sample: generate(min_p=P), in [0, 1] (default: no "
               "warper)"),
      cl::init(-1.0), cl::cat(modelCat)};
  cl::opt<double> repetitionPenalty{
      "repetition-penalty",
      cl::desc("--mode=generate: generate(repetition_penalty=R), > 0, "
               "greedy or sampling (1.0, the default: none)"),
      cl::init(1.0), cl::cat(modelCat)};
  cl::opt<CacheImplementation> cacheImplementation{
      "cache-implementation",
      cl::desc("--mode=generate: the KV cache, as generate()'s "
               "cache_implementation"),
      cl::values(clEnumValN(CacheImplementation::Dynamic, "dynamic",
                            "DynamicCache (the default): grows by a copy per "
                            "token"),
                 clEnumValN(CacheImplementation::Static, "static",
                            "StaticCache: every layer's prompt + new tokens "
                            "- 1 positions allocated by the prefill, written "
                            "in place"),
                 clEnumValN(CacheImplementation::Paged, "paged",
                            "vLLM's paged cache: each sequence's blocks of "
                            "--kv-block-size positions, written in place")),
      cl::init(CacheImplementation::Dynamic), cl::cat(modelCat)};
  cl::opt<int64_t> numBeams{
      "num-beams",
      cl::desc("--mode=generate: beam search, generate(num_beams=N) (1, the "
               "default: none)"),
      cl::init(1), cl::cat(modelCat)};
  cl::opt<int64_t> kvBlockSize{
      "kv-block-size",
      cl::desc("--cache-implementation=paged: positions a block holds "
               "(vLLM's block_size, default 16)"),
      cl::init(16), cl::cat(modelCat)};
  cl::opt<int64_t> numClasses{"num-classes", cl::desc("Classifier classes"),
                              cl::init(-1), cl::cat(modelCat)};
  cl::list<std::string> dimBindings{
      "dim", cl::desc("Bind a symbolic dimension: NAME=VALUE"),
      cl::value_desc("NAME=VALUE"), cl::cat(modelCat)};
  cl::list<std::string> onnxBuffers{
      "onnx-buffers", cl::desc("ONNX initializers to treat as buffers (globs)"),
      cl::CommaSeparated, cl::cat(modelCat)};

  cl::OptionCategory cxxCat{
      "C++ models (LibTorch sources; compile flags follow `--`)"};
  cl::opt<std::string> cxxModule{
      "module",
      cl::desc("The module to analyze: its TORCH_MODULE holder or Impl class"),
      cl::value_desc("NAME"), cl::cat(cxxCat)};
  cl::list<std::string> cxxInputs{
      "input",
      cl::desc("Shapes of forward()'s tensor inputs (90x3x224x224; "
               "an element type may follow: 8x128:i64)"),
      cl::value_desc("SHAPE"), cl::CommaSeparated, cl::cat(cxxCat)};
  cl::list<std::string> cxxArgs{
      "args",
      cl::desc("Constructor arguments (default: those of a construction with "
               "constant arguments in the translation unit)"),
      cl::value_desc("VALUE"), cl::CommaSeparated, cl::cat(cxxCat)};
  cl::opt<std::string> cxxCompileCommands{
      "compile-commands",
      cl::desc("compile_commands.json (or its directory) with the source's "
               "compile command"),
      cl::value_desc("PATH"), cl::cat(cxxCat)};

  cl::opt<nn::StepMode> mode{"mode", cl::desc("Step to build"),
                             EnumValues<nn::StepMode>(),
                             cl::init(nn::StepMode::Train), cl::cat(stepCat)};
  cl::opt<nn::OptimizerKind> optimizer{
      "optimizer", cl::desc("Optimizer (default adam)"),
      EnumValues<nn::OptimizerKind>(), cl::init(nn::OptimizerKind::Adam),
      cl::cat(stepCat)};
  cl::opt<nn::OptimizerImpl> optimizerImpl{
      "optimizer-impl",
      cl::desc("Optimizer implementation (default: what the "
               "modelled PyTorch picks, foreach for 2.x on CUDA, "
               "else for-loop)"),
      EnumValues<nn::OptimizerImpl>(), cl::init(nn::OptimizerImpl::Foreach),
      cl::cat(stepCat)};
  cl::opt<double> weightDecay{"weight-decay",
                              cl::desc("Optimizer weight decay"), cl::init(0.0),
                              cl::cat(stepCat)};
  cl::opt<nn::LossKind> lossKind{
      "loss",
      cl::desc("Loss: cross_entropy (the default), mse, causal_lm "
               "(transformers' loss, the model called with labels: "
               "cross-entropy over the logits upcast to fp32; the default "
               "for --hf), or fused_linear_cross_entropy (Liger-Kernel's, "
               "in place of lm_head: no [tokens, vocab] logits)"),
      EnumValues<nn::LossKind>(), cl::init(nn::LossKind::CrossEntropy),
      cl::cat(stepCat)};
  cl::opt<bool> flattenLogits{
      "flatten-logits",
      cl::desc("Flatten [B, T, V] logits to [B*T, V] for the loss (language "
               "models; the zoo's say so themselves)"),
      cl::init(false), cl::cat(stepCat)};
  cl::list<std::string> ligerKernels{
      "liger",
      cl::desc("Liger-Kernel's kernels in a LLaMA-layout decoder's training "
               "step (--zoo=llama-7b, --hf llama, mistral, qwen2, qwen3), as "
               "apply_liger_kernel_to_<model> patches them in: rms_norm, "
               "swiglu, rope, fused_linear_cross_entropy (the loss), or all "
               "(Trainer's use_liger_kernel=True: the four)"),
      cl::value_desc("KERNELS"), cl::CommaSeparated, cl::cat(scenarioCat)};
  cl::list<std::string> freezePatterns{
      "freeze",
      cl::desc("Freeze parameters: globs on their names or module paths "
               "(layer1,layer2.0.*)"),
      cl::value_desc("PATTERN"), cl::CommaSeparated, cl::cat(scenarioCat)};
  cl::opt<double> freezeFirst{
      "freeze-first",
      cl::desc("Freeze the parameters of the first FRACTION of the modules "
               "(named_modules order), as seed article 001 meant to"),
      cl::value_desc("FRACTION"), cl::init(0.0), cl::cat(scenarioCat)};
  cl::opt<std::string> loraSpec{
      "lora",
      cl::desc("peft LoRA adapters: r=R,alpha=A,dropout=P,targets=T|T... "
               "(targets: conv2d, linear, all-linear (every linear but the "
               "output layer, as peft), or globs / module paths of layers); "
               "every other parameter is frozen. autocast_adapter_dtype=false "
               "keeps fp16/bf16 adapters (peft's default: fp32)"),
      cl::value_desc("r=4,alpha=32,dropout=0.1,targets=conv2d"),
      cl::cat(scenarioCat)};
  cl::opt<std::string> quantizeType{
      "quantize",
      cl::desc("Load the linear layers' weights in 4 or 8 bits as "
               "bitsandbytes does: nf4 or fp4 (BitsAndBytesConfig("
               "load_in_4bit=True, bnb_4bit_quant_type=...)), int8 "
               "(load_in_8bit=True, LLM.int8); every linear but the output "
               "layer (QLoRA: with --lora)"),
      cl::value_desc("nf4|fp4|int8"), cl::cat(scenarioCat)};
  cl::opt<double> int8Threshold{
      "int8-threshold",
      cl::desc("llm_int8_threshold (--quantize=int8): an input value at or "
               "above it makes its column an outlier, computed in 16 bits; "
               "0 turns the decomposition off (default 6.0, transformers')"),
      cl::init(6.0), cl::cat(scenarioCat)};
  cl::opt<int64_t> int8OutlierCols{
      "int8-outlier-cols",
      cl::desc("--quantize=int8: the outlier columns each layer's input is "
               "assumed to have (the data decides; default 0)"),
      cl::init(0), cl::cat(scenarioCat)};
  cl::opt<bool> doubleQuant{
      "double-quant",
      cl::desc("bnb_4bit_use_double_quant: the 4-bit weights' absmax "
               "quantized again in 8 bits (QLoRA's recipe)"),
      cl::init(false), cl::cat(scenarioCat)};
  cl::opt<nn::Precision> computeDtype{
      "compute-dtype",
      cl::desc("bnb_4bit_compute_dtype: what a float16 input to a 4-bit "
               "layer computes in (fp32, the default, fp16 or bf16); float32 "
               "and bfloat16 inputs compute in their own dtype"),
      EnumValues<nn::Precision>(), cl::init(nn::Precision::Fp32),
      cl::cat(scenarioCat)};
  cl::list<std::string> checkpointModules{
      "checkpoint",
      cl::desc("Activation checkpointing (torch.utils.checkpoint, "
               "use_reentrant=False) of the modules matching these globs or "
               "module paths (layer1,layer2.*); '*' alone: every repeated "
               "block (model.layers.*, as gradient_checkpointing_enable())"),
      cl::value_desc("MODULE"), cl::CommaSeparated, cl::cat(scenarioCat)};
  cl::opt<std::string> parallelSpec{
      "parallel",
      cl::desc("The multi-GPU layout, named axes with their rank counts: "
               "dp=N (DistributedDataParallel), fsdp=N (FSDP2 fully_shard, "
               "units by --shard) or hsdp=RxS (FSDP2 sharding over S ranks, "
               "replicated R times), tp=N (tensor parallelism; tp=N,sp with "
               "sequence parallelism) or pp=N "
               "(pipeline stages, --pp-schedule, --microbatches); --batch is "
               "per rank (with pp, per micro-batch)"),
      cl::value_desc("dp=8"), cl::cat(scenarioCat)};
  cl::opt<std::string> ppSchedule{
      "pp-schedule",
      cl::desc("--parallel=pp=N: torch.distributed.pipelining's schedule, "
               "1f1b (Schedule1F1B, default), gpipe (ScheduleGPipe) or "
               "interleaved-1f1b (ScheduleInterleaved1F1B: each rank holds "
               "--pp-stages-per-rank stages)"),
      cl::value_desc("1f1b"), cl::init("1f1b"), cl::cat(scenarioCat)};
  cl::opt<int64_t> ppStagesPerRank{
      "pp-stages-per-rank",
      cl::desc("--pp-schedule=interleaved-1f1b: the stages each rank holds "
               "(rank r: r, r + N, ...), 2 or more (default: 2)"),
      cl::value_desc("V"), cl::init(2), cl::cat(scenarioCat)};
  cl::opt<int64_t> microbatches{
      "microbatches",
      cl::desc("--parallel=pp=N: micro-batches per step (n_microbatches), "
               "each of --batch (default: N)"),
      cl::value_desc("M"), cl::init(0), cl::cat(scenarioCat)};
  cl::opt<int64_t> ppStage{
      "pp-stage",
      cl::desc("--parallel=pp=N: the figures of this stage (0 .. N-1; "
               "with --pp-schedule=interleaved-1f1b, of this rank); "
               "default: the one whose step peaks highest"),
      cl::value_desc("S"), cl::init(-1), cl::cat(scenarioCat)};
  cl::list<int64_t> ppLayers{
      "pp-layers",
      cl::desc("--parallel=pp=N: repeated blocks (decoder layers) per stage, "
               "in order, one count per stage (N, or N x "
               "--pp-stages-per-rank interleaved) summing to the model's "
               "blocks (default: as even as they divide, the earlier stages "
               "one more)"),
      cl::value_desc("L,L,..."), cl::CommaSeparated, cl::cat(scenarioCat)};
  cl::list<std::string> shardModules{
      "shard",
      cl::desc("FSDP2: the modules wrapped with fully_shard before the root, "
               "globs or module paths (model.layers.*); default: the root "
               "only"),
      cl::value_desc("MODULE"), cl::CommaSeparated, cl::cat(scenarioCat)};
  cl::opt<bool> reshardAfterForward{
      "reshard-after-forward",
      cl::desc("FSDP2's reshard_after_forward for the --shard units: false "
               "keeps their gathered parameters from forward to the end of "
               "their backward (no backward all-gather)"),
      cl::init(true), cl::cat(scenarioCat)};
  cl::opt<nn::Precision> paramDtype{
      "param-dtype",
      cl::desc("FSDP2's MixedPrecisionPolicy param_dtype: fp32 shards, "
               "gathered and computed in bf16 or fp16"),
      EnumValues<nn::Precision>(), cl::init(nn::Precision::Fp32),
      cl::cat(scenarioCat)};
  cl::opt<nn::Precision> reduceDtype{
      "reduce-dtype",
      cl::desc("FSDP2's MixedPrecisionPolicy reduce_dtype: the shards' dtype "
               "(fp32, the default, as torch 2.15 with None) or "
               "--param-dtype's"),
      EnumValues<nn::Precision>(), cl::init(nn::Precision::Fp32),
      cl::cat(scenarioCat)};
  cl::opt<std::string> tpPlan{
      "tp-plan",
      cl::desc("--parallel=tp=N: transformers (tp_plan=\"auto\": the decoder "
               "layers' column- and row-parallel linears, and lm_head "
               "column-parallel over the vocabulary with its logits "
               "all-gathered; default), layers (the decoder layers alone, "
               "lm_head whole on every rank) or vocab (transformers', and the "
               "embedding row-parallel over the vocabulary, its lookups "
               "all-reduced: torchtitan's and Megatron-LM's layout)"),
      cl::value_desc("transformers"), cl::init("transformers"),
      cl::cat(scenarioCat)};
  cl::opt<bool> lossParallel{
      "loss-parallel",
      cl::desc("--parallel=tp=N training under torch's loss_parallel(): "
               "lm_head's logits stay sharded over the vocabulary (never "
               "all-gathered) and the cross-entropy runs on the shards "
               "(Megatron-LM's vocab_parallel_cross_entropy)"),
      cl::init(false), cl::cat(scenarioCat)};
  cl::opt<bool> gradientAsBucketView{
      "gradient-as-bucket-view",
      cl::desc("DDP's gradient_as_bucket_view=True: .grad views its bucket"),
      cl::init(false), cl::cat(scenarioCat)};
  cl::opt<int64_t> bucketCapMb{
      "bucket-cap-mb",
      cl::desc("DDP's bucket_cap_mb (default 25, with a 1 MiB first bucket)"),
      cl::value_desc("MIB"), cl::init(25), cl::cat(scenarioCat)};
  cl::opt<std::string> strategy{
      "strategy",
      cl::desc("DeepSpeed's ZeRO over the dp ranks instead of DDP: zero1 "
               "(optimizer state partitioned), zero2 (gradients too) or "
               "zero3 (parameters too)"),
      cl::value_desc("zero2"), cl::cat(scenarioCat)};
  cl::opt<int64_t> reduceBucketSize{
      "reduce-bucket-size",
      cl::desc("ZeRO's reduce_bucket_size: elements of its gradient buffer "
               "(DeepSpeed's default 500000000)"),
      cl::value_desc("ELEMENTS"),
      cl::init(nn::ParallelAttr::kDefaultReduceBucket), cl::cat(scenarioCat)};
  cl::opt<bool> overlapComm{
      "overlap-comm",
      cl::desc("ZeRO's overlap_comm: two gradient buffers, stage 1 reducing "
               "as backward runs"),
      cl::init(false), cl::cat(scenarioCat)};
  // ZeRO-3's zero_optimization keys, named as in DeepSpeed's config.
  cl::opt<int64_t> stage3PrefetchBucketSize{
      "stage3-prefetch-bucket-size",
      cl::desc("ZeRO-3's stage3_prefetch_bucket_size: elements each "
               "module's fetch may prefetch (default 50000000; 0: none)"),
      cl::value_desc("ELEMENTS"), cl::init(50000000), cl::cat(scenarioCat)};
  cl::opt<int64_t> stage3MaxLiveParameters{
      "stage3-max-live-parameters",
      cl::desc("ZeRO-3's stage3_max_live_parameters: elements gathered "
               "beyond which nothing is prefetched (default 1000000000)"),
      cl::value_desc("ELEMENTS"), cl::init(1000000000), cl::cat(scenarioCat)};
  cl::opt<int64_t> stage3MaxReuseDistance{
      "stage3-max-reuse-distance",
      cl::desc("ZeRO-3's stage3_max_reuse_distance: a parameter used again "
               "within this many elements is kept (default 1000000000)"),
      cl::value_desc("ELEMENTS"), cl::init(1000000000), cl::cat(scenarioCat)};
  cl::opt<int64_t> stage3ParamPersistenceThreshold{
      "stage3-param-persistence-threshold",
      cl::desc("ZeRO-3's stage3_param_persistence_threshold: parameters of "
               "at most this many elements stay gathered (default 100000)"),
      cl::value_desc("ELEMENTS"), cl::init(100000), cl::cat(scenarioCat)};
  cl::opt<int64_t> subGroupSize{
      "sub-group-size",
      cl::desc("ZeRO-3's sub_group_size: elements of a rank's partition the "
               "optimizer steps at a time (default 1000000000)"),
      cl::value_desc("ELEMENTS"), cl::init(1000000000), cl::cat(scenarioCat)};
  cl::opt<nn::AttentionImplementation> attention{
      "attention",
      cl::desc("How a language model's attention runs (zoo gpt2/llama-7b, "
               "--hf): sdpa (the kernel PyTorch picks), sdpa-flash, "
               "sdpa-efficient, sdpa-math, or transformers' eager"),
      EnumValues<nn::AttentionImplementation>(),
      cl::init(nn::AttentionImplementation::Sdpa), cl::cat(scenarioCat)};
  cl::opt<nn::Precision> precision{
      "precision",
      cl::desc("fp32, AMP (torch.autocast over fp32 parameters: amp-fp16, "
               "amp-bf16) or the whole model in fp16/bf16"),
      EnumValues<nn::Precision>(), cl::init(nn::Precision::Fp32),
      cl::cat(scenarioCat)};
  cl::opt<bool> setToNone{"set-to-none", cl::desc("zero_grad(set_to_none=...)"),
                          cl::init(true), cl::cat(stepCat)};
  cl::opt<bool> useCache{
      "use-cache",
      cl::desc("Training a transformers decoder (--hf): its forward runs with "
               "use_cache, as the configs default to, so a DynamicCache "
               "copies each layer's keys and values, which attention then "
               "saves. false: model(..., use_cache=False), or a config whose "
               "use_cache is false. --checkpoint turns it off, as "
               "gradient_checkpointing_enable() does"),
      cl::init(true), cl::cat(stepCat)};
  cl::opt<int64_t> lossOutput{
      "loss-output",
      cl::desc("Training a model with several outputs (a torch.export "
               "archive of a Hugging Face model returns its logits and "
               "more): the one the loss reads, 0-based (out = model(x); "
               "loss = criterion(out[N], y)); the others are held until the "
               "loss returns"),
      cl::init(-1), cl::cat(stepCat)};
  cl::opt<bool> keepOutput{
      "keep-output",
      cl::desc("The training loop holds the model's output until the step "
               "ends (out = model(x); loss = criterion(out, y); "
               "loss.backward(); optimizer.step()): a language model's "
               "logits stay through backward. By default nothing references "
               "the output once the loss is computed (loss = "
               "criterion(model(x), y), or transformers' Trainer)"),
      cl::init(false), cl::cat(stepCat)};
  cl::opt<int64_t> gradAccum{
      "grad-accum",
      cl::desc("Accumulate gradients over N micro-batches of --batch before "
               "each optimizer update"),
      cl::value_desc("N"), cl::init(1), cl::cat(stepCat)};
  cl::opt<bool> optimizerInBackward{
      "optimizer-in-backward",
      cl::desc("Fuse the optimizer step into backward (an optimizer per "
               "parameter stepped by its post-accumulate-grad hook): each "
               "gradient is freed right after its update"),
      cl::init(false), cl::cat(stepCat)};
  cl::opt<double> maxGradNorm{
      "max-grad-norm",
      cl::desc("Clip the gradients' total 2-norm before each update "
               "(torch.nn.utils.clip_grad_norm_, transformers' Trainer "
               "max_grad_norm, 1.0 there); 0: no clipping"),
      cl::value_desc("X"), cl::init(0.0), cl::cat(stepCat)};
  cl::opt<bool> ema{
      "ema",
      cl::desc("Keep an EMA of the model (torch.optim.swa_utils.AveragedModel "
               "with get_ema_multi_avg_fn): a copy of every parameter and "
               "buffer, updated in place after each optimizer step"),
      cl::init(false), cl::cat(stepCat)};
  cl::opt<bool> inputRequiresGrad{"input-requires-grad",
                                  cl::desc("Model inputs require grad"),
                                  cl::init(false), cl::cat(stepCat)};
  cl::opt<nn::TorchVersion> torchVersion{
      "torch-version",
      cl::desc("The PyTorch release modelled (default 2; 1.13 is Debian's)"),
      EnumValues<nn::TorchVersion>(), cl::init(nn::TorchVersion::V2),
      cl::cat(stepCat)};
  cl::opt<nn::Device> device{
      "device", cl::desc("The device whose kernels are modelled"),
      EnumValues<nn::Device>(), cl::init(nn::Device::Cuda), cl::cat(stepCat)};
  cl::opt<std::string> gpuName{
      "gpu",
      cl::desc("The GPU (h100, h200, a100, a100-40gb, l40s, a10, l4, rtx4090, "
               "rtx3090, v100, t4): its capacity is the default --budget, its "
               "architecture sizes the cuBLAS workspace; implies "
               "--allocator=pytorch-cuda"),
      cl::value_desc("NAME"), cl::cat(scenarioCat)};
  cl::opt<std::string> contextBytes{
      "context-bytes",
      cl::desc("What the CUDA context, loaded kernels and library handles "
               "hold outside the caching allocator (default 762MiB with lazy "
               "module loading, as measured on an H200; 1GiB without)"),
      cl::value_desc("SIZE"), cl::cat(scenarioCat)};
  cl::opt<bool> cudaLazyLoading{
      "cuda-lazy-loading",
      cl::desc("CUDA_MODULE_LOADING=LAZY (the default since CUDA 12.2)"),
      cl::init(true), cl::cat(scenarioCat)};
  cl::opt<nn::CudnnWorkspace> cudnnWorkspace{
      "cudnn-workspace",
      cl::desc("The workspace assumed per cuDNN convolution call: none "
               "(implicit GEMM) or im2col (explicit GEMM's column matrix, a "
               "bound); cuDNN picks at run time"),
      EnumValues<nn::CudnnWorkspace>(), cl::init(nn::CudnnWorkspace::None),
      cl::cat(scenarioCat)};
  cl::opt<nn::AllocatorKind> allocatorKind{
      "allocator",
      cl::desc("Allocator model for allocated/reserved peaks (default exact)"),
      EnumValues<nn::AllocatorKind>(), cl::init(nn::AllocatorKind::Exact),
      cl::cat(outputCat)};
  cl::opt<nn::FlopConvention> flopConvention{
      "flops", cl::desc("FLOP convention (default flops)"),
      EnumValues<nn::FlopConvention>(), cl::init(nn::FlopConvention::Flops),
      cl::cat(outputCat)};
  cl::opt<OutputFormat> format{
      "format",
      cl::desc("Output (default: the text report; IR when a pass "
               "pipeline runs)"),
      cl::values(clEnumValN(OutputFormat::Mlir, "mlir", "print IR"),
                 clEnumValN(OutputFormat::Text, "text", "text report"),
                 clEnumValN(OutputFormat::Json, "json",
                            "JSON report (docs/Report.md)"),
                 clEnumValN(OutputFormat::Markdown, "markdown",
                            "a pull-request comment (with --compare)"),
                 clEnumValN(OutputFormat::Sarif, "sarif",
                            "SARIF 2.1.0 for code scanning"),
                 clEnumValN(OutputFormat::Html, "html",
                            "a page with the memory timeline (SVG)")),
      cl::init(OutputFormat::Mlir), cl::cat(outputCat)};
  cl::opt<bool> timeline{"timeline",
                         cl::desc("Add the live-bytes timeline to the report"),
                         cl::init(false), cl::cat(outputCat)};
  cl::opt<std::string> compareWith{
      "compare",
      cl::desc("Markdown: compare with a baseline JSON report (deltas per "
               "category, regression line)"),
      cl::value_desc("BASELINE.json"), cl::cat(outputCat)};
  cl::opt<std::string> sarifLocation{
      "sarif-location",
      cl::desc("SARIF: the file (and line) that results without a source "
               "line of their own point at, instead of the model (a zoo "
               "model has no file, an ONNX node no line): the CMake file or "
               "workflow that runs the check"),
      cl::value_desc("FILE[:LINE]"), cl::cat(outputCat)};
  cl::opt<bool> failOnRegression{
      "fail-on-regression",
      cl::desc("Markdown with --compare: a peak grown past "
               "--regression-threshold is an error (exit code 1)"),
      cl::init(false), cl::cat(outputCat)};
  cl::opt<double> regressionThreshold{
      "regression-threshold",
      cl::desc("Markdown with --compare: peak growth reported as a regression, "
               "in percent (default 5)"),
      cl::init(5.0), cl::cat(outputCat)};
  cl::opt<std::string> traceFile{
      "trace",
      cl::desc("Write the memory timeline as Chrome trace events "
               "(chrome://tracing, Perfetto)"),
      cl::value_desc("FILE"), cl::cat(outputCat)};
  cl::opt<unsigned> layerDepth{
      "depth",
      cl::desc("Sum the layer table per module at this depth of the module "
               "path (torchinfo's depth; 0: every layer)"),
      cl::init(0), cl::cat(outputCat)};
  cl::opt<unsigned> topTensors{"top-tensors",
                               cl::desc("Tensors listed at the peak"),
                               cl::init(10), cl::cat(outputCat)};

  cl::OptionCategory validateCat{"Validation by execution"};
  cl::opt<ValidationTarget> validate{
      "validate",
      cl::desc("Run the lowered step and compare the measured peak with the "
               "prediction (exit 1 when they differ; docs/Execution.md)"),
      cl::values(clEnumValN(ValidationTarget::Cpu, "cpu",
                            "MLIR's ExecutionEngine on this CPU"),
                 clEnumValN(ValidationTarget::Gpu, "gpu",
                            "generated kernels on a CUDA device (the driver is "
                            "loaded at run time; exit 1 without one)"),
                 clEnumValN(ValidationTarget::GpuEmulated, "gpu-emulated",
                            "the GPU lowering's kernels run on this CPU, one "
                            "thread after another (no device needed; memory "
                            "as --validate=cpu)")),
      cl::init(ValidationTarget::None), cl::cat(validateCat)};
  cl::opt<std::string> gpuArch{
      "gpu-arch",
      cl::desc("Target of --validate=gpu's kernels (sm_90: H100, H200; sm_80: "
               "A100)"),
      cl::value_desc("sm_XY"), cl::init("sm_90"), cl::cat(validateCat)};
  cl::opt<GpuBinary> gpuBinary{
      "gpu-binary", cl::desc("Form of --validate=gpu's kernels"),
      cl::values(
          clEnumValN(GpuBinary::Ptx, "ptx",
                     "PTX, compiled by the driver when the step loads "
                     "(default; no toolkit needed)"),
          clEnumValN(GpuBinary::Cubin, "cubin",
                     "cubins assembled by the CUDA toolkit's ptxas while "
                     "lowering (checks every kernel without a device)")),
      cl::init(GpuBinary::Ptx), cl::cat(validateCat)};
  cl::opt<unsigned> cudaDeviceOrdinal{
      "cuda-device", cl::desc("The CUDA device --validate=gpu runs on"),
      cl::init(0), cl::cat(validateCat)};
  cl::opt<bool> listCudaDevices{
      "list-cuda-devices",
      cl::desc("List the CUDA devices the driver reports, one a line (exit 1 "
               "with \"no CUDA device: REASON\" when there is none)"),
      cl::init(false), cl::cat(validateCat)};
  cl::opt<AllocationFlag> allocationMode{
      "allocation-mode", cl::desc("Buffers of the executed step"),
      cl::values(clEnumValN(AllocationFlag::PyTorch, "pytorch",
                            "one buffer per tensor PyTorch allocates, freed "
                            "after its last use (default)"),
                 clEnumValN(AllocationFlag::Compiler, "compiler",
                            "MLIR's in-place bufferization and buffer "
                            "deallocation: what a compiler could save")),
      cl::init(AllocationFlag::PyTorch), cl::cat(validateCat)};
  cl::list<std::string> inputData{
      "input-data",
      cl::desc("NAME=FILE.npy: a model input (by name), the loss target "
               "(labels) or a parameter; else a deterministic default"),
      cl::value_desc("NAME=FILE.npy"), cl::CommaSeparated,
      cl::cat(validateCat)};
  cl::opt<std::string> dumpDir{
      "dump",
      cl::desc("Write the loss, parameter gradients (NAME.grad.npy) and "
               "updated parameters (NAME.npy) of the executed step to DIR"),
      cl::value_desc("DIR"), cl::cat(validateCat)};
  cl::opt<double> learningRate{"lr",
                               cl::desc("Learning rate of the executed update"),
                               cl::init(0.01), cl::cat(validateCat)};

  cl::OptionCategory lintCat{"Lint"};
  cl::opt<std::string> budget{
      "budget",
      cl::desc("Memory budget (8GiB, 24GB, 1.5TiB, bytes): over it is an error "
               "at the peak op and exit code 1"),
      cl::value_desc("SIZE"), cl::cat(lintCat)};
  cl::opt<BudgetMetric> budgetMetric{
      "budget-metric",
      cl::desc("What --budget is checked against: exact (the sum of live "
               "tensors), allocated (torch.cuda.max_memory_allocated), "
               "reserved (max_memory_reserved), device (reserved + CUDA "
               "context, what nvidia-smi shows); default: device with "
               "--allocator=pytorch-cuda or --gpu, else exact"),
      EnumValues<BudgetMetric>(), cl::init(BudgetMetric::Exact),
      cl::cat(lintCat)};
  cl::opt<bool> fitBatch{
      "fit-batch",
      cl::desc("Print the largest batch size that fits --budget (re-runs the "
               "pipeline per candidate), alone on stdout"),
      cl::init(false), cl::cat(lintCat)};
  cl::opt<bool> fitContext{
      "fit-context",
      cl::desc("Print the longest sequence (--seq, tokens) that fits --budget "
               "at --batch (re-runs the pipeline per candidate), alone on "
               "stdout"),
      cl::init(false), cl::cat(lintCat)};

  /// Whether the caching allocator is modelled (--allocator=pytorch-cuda,
  /// or implied by --gpu).
  bool usesCudaAllocator() const {
    return allocatorKind == nn::AllocatorKind::PytorchCuda ||
           gpuName.getNumOccurrences();
  }
  /// Whether a budget is checked: --budget, or the capacity of --gpu.
  bool hasBudget() const {
    return budget.getNumOccurrences() || gpuName.getNumOccurrences();
  }

  llvm::Expected<LoraOptions> parseLora() const;
  /// --liger's kernels in the model's layers.
  llvm::Expected<zoo::LigerKernels> parseLiger() const;
  /// Whether --liger names Liger's fused loss (itself or with `all`).
  bool ligerNamesLoss() const {
    return llvm::is_contained(ligerKernels, "all") ||
           llvm::is_contained(ligerKernels, "fused_linear_cross_entropy");
  }
  /// The step's loss: --loss, Liger's fused one, or a Hugging Face
  /// model's own.
  nn::LossKind getLossKind() const;
  /// --do-sample and its warpers (greedy without).
  zoo::Sampling getSampling() const {
    zoo::Sampling s{doSample, temperature,  topK,
                    topP,     std::nullopt, repetitionPenalty};
    if (minP.getNumOccurrences())
      s.minP = minP.getValue();
    return s;
  }
  llvm::Expected<std::optional<ParallelOptions>> parseParallel() const;
  /// --mode=generate and its flags against the input and the other flags.
  llvm::Error checkGeneration(ModelKind kind) const;
  /// The tp axis of a valid --parallel (1 without one).
  int64_t getTensorParallelRanks() const {
    llvm::Expected<std::optional<ParallelOptions>> parallel = parseParallel();
    if (!parallel) {
      llvm::consumeError(parallel.takeError());
      return 1;
    }
    return *parallel ? (*parallel)->tp : 1;
  }
  llvm::Error check(llvm::StringRef inputFilename, bool inputGiven,
                    llvm::ArrayRef<std::string> cxxFlags,
                    OutputFormat resolvedFormat) const;
  PipelineOptions getPipelineOptions(bool wantsStep) const;
};

llvm::ManagedStatic<VramOptFlags> flags;
} // namespace

llvm::Expected<LoraOptions> VramOptFlags::parseLora() const {
  llvm::StringRef spec = loraSpec;
  LoraOptions options;
  auto bad = [&](const llvm::Twine &why) {
    return makeUsageError("--lora=" + spec + ": " + why +
                          " (expected r=R,alpha=A,dropout=P,targets=T|T... "
                          "or targets=T,T..., "
                          "e.g. r=4,alpha=32,dropout=0.1,targets=conv2d)");
  };
  llvm::SmallVector<llvm::StringRef> items;
  spec.split(items, ',');
  llvm::StringSet<> seen;
  bool inTargets = false;
  for (llvm::StringRef item : items) {
    // peft's target_modules as a list: targets=q_proj,v_proj (the items
    // after targets= that are not KEY=VALUE are more targets).
    if (inTargets && !item.contains('=')) {
      if (item.trim().empty())
        return bad("an empty target in '" + spec + "'");
      options.targets.push_back(item.trim().str());
      continue;
    }
    inTargets = false;
    auto [key, value] = item.split('=');
    key = key.trim();
    value = value.trim();
    if (!item.contains('=') || value.empty())
      return bad("'" + item + "' is not KEY=VALUE");
    if (!seen.insert(key).second)
      return bad("'" + key + "' given twice");
    if (key == "r") {
      if (value.getAsInteger(10, options.rank) || options.rank <= 0)
        return bad("r must be a positive integer, got '" + value + "'");
    } else if (key == "alpha") {
      if (!llvm::to_float(value, options.alpha) ||
          !std::isfinite(options.alpha))
        return bad("alpha must be a number, got '" + value + "'");
    } else if (key == "dropout") {
      if (!llvm::to_float(value, options.dropout) ||
          !(options.dropout >= 0 && options.dropout < 1))
        return bad("dropout must be a probability in [0, 1), got '" + value +
                   "'");
    } else if (key == "autocast_adapter_dtype") {
      if (value != "true" && value != "false")
        return bad("autocast_adapter_dtype must be true or false, got '" +
                   value + "'");
      options.autocastAdapterDtype = value == "true";
    } else if (key == "targets") {
      inTargets = true;
      llvm::SmallVector<llvm::StringRef> targets;
      value.split(targets, '|');
      for (llvm::StringRef t : targets) {
        if (t.trim().empty())
          return bad("an empty target in '" + value + "'");
        options.targets.push_back(t.trim().str());
      }
    } else {
      return bad("unknown key '" + key + "'");
    }
  }
  if (options.targets.empty())
    return bad("targets are required");
  return options;
}

llvm::Expected<std::optional<ParallelOptions>>
VramOptFlags::parseParallel() const {
  bool ddpFlags = gradientAsBucketView.getNumOccurrences() ||
                  bucketCapMb.getNumOccurrences();
  if (!shardModules.empty() &&
      !llvm::StringRef(parallelSpec).contains("fsdp") &&
      !llvm::StringRef(parallelSpec).contains("hsdp"))
    return makeUsageError("--shard names FSDP units: add --parallel=fsdp=N");
  bool fsdpFlags = paramDtype.getNumOccurrences() ||
                   reduceDtype.getNumOccurrences() ||
                   reshardAfterForward.getNumOccurrences();
  bool zero3Flags = stage3PrefetchBucketSize.getNumOccurrences() ||
                    stage3MaxLiveParameters.getNumOccurrences() ||
                    stage3MaxReuseDistance.getNumOccurrences() ||
                    stage3ParamPersistenceThreshold.getNumOccurrences() ||
                    subGroupSize.getNumOccurrences();
  bool zeroFlags = strategy.getNumOccurrences() ||
                   reduceBucketSize.getNumOccurrences() ||
                   overlapComm.getNumOccurrences() || zero3Flags;
  bool ppFlags = ppSchedule.getNumOccurrences() || !ppLayers.empty() ||
                 microbatches.getNumOccurrences() ||
                 ppStage.getNumOccurrences() ||
                 ppStagesPerRank.getNumOccurrences();
  if (tpPlan != "transformers" && tpPlan != "layers" && tpPlan != "vocab")
    return makeUsageError(
        "--tp-plan must be transformers, layers or vocab, got '" + tpPlan +
        "'");
  if (lossParallel) {
    if (!llvm::StringRef(parallelSpec).contains("tp"))
      return makeUsageError("--loss-parallel shards the cross-entropy over "
                            "tensor-parallel ranks: add --parallel=tp=N");
    if (tpPlan == "layers")
      return makeUsageError("--loss-parallel reads lm_head's shards: "
                            "--tp-plan=layers keeps lm_head whole");
    if (mode != nn::StepMode::Train)
      return makeUsageError("--loss-parallel applies to training "
                            "(--mode=train)");
    if (getLossKind() != nn::LossKind::CrossEntropy &&
        getLossKind() != nn::LossKind::CausalLm)
      return makeUsageError(
          "--loss-parallel computes a cross-entropy (--loss=cross_entropy "
          "or causal_lm), not --loss=" +
          nn::stringifyLossKind(getLossKind()).str());
    if (keepOutput)
      return makeUsageError("--keep-output holds gathered logits that "
                            "--loss-parallel never makes");
    if (validate != ValidationTarget::None)
      return makeUsageError("--validate does not execute the "
                            "vocabulary-parallel cross-entropy yet");
    if (hasSequenceParallel(parallelSpec))
      return makeUsageError("--loss-parallel with sequence parallelism "
                            "(--parallel=tp=N,sp) is not modelled yet");
  }
  if (tpPlan.getNumOccurrences() &&
      !llvm::StringRef(parallelSpec).contains("tp"))
    return makeUsageError("--tp-plan configures tensor parallelism: add "
                          "--parallel=tp=N");
  if (ppFlags && !llvm::StringRef(parallelSpec).contains("pp"))
    return makeUsageError(
        "--pp-schedule, --microbatches, --pp-stage, --pp-layers and "
        "--pp-stages-per-rank configure pipeline parallelism: add "
        "--parallel=pp=N");
  if (!parallelSpec.getNumOccurrences()) {
    if (zeroFlags)
      return makeUsageError("--strategy, --reduce-bucket-size and "
                            "--overlap-comm configure ZeRO over data-parallel "
                            "ranks: add --parallel=dp=N");
    if (fsdpFlags)
      return makeUsageError("--param-dtype, --reduce-dtype and "
                            "--reshard-after-forward configure FSDP2: add "
                            "--parallel=fsdp=N");
    if (ddpFlags)
      return makeUsageError("--gradient-as-bucket-view and --bucket-cap-mb "
                            "configure data parallelism: add --parallel=dp=N");
    return std::nullopt;
  }
  llvm::StringRef spec = parallelSpec;
  auto bad = [&](const llvm::Twine &why) {
    return makeUsageError("--parallel=" + spec + ": " + why +
                          " (expected named axes such as dp=8)");
  };
  ParallelOptions options;
  llvm::SmallVector<llvm::StringRef> axes;
  spec.split(axes, ',');
  llvm::StringSet<> seen;
  for (llvm::StringRef item : axes) {
    auto [axis, value] = item.split('=');
    axis = axis.trim();
    if (axis.empty())
      return bad("an empty axis");
    if (!seen.insert(axis).second)
      return bad("axis '" + axis + "' given twice");
    // sp: sequence parallelism within the tensor-parallel group, a flag.
    if (axis == "sp") {
      if (!value.trim().empty())
        return bad("sp takes no value: it shards the positions over the tp "
                   "ranks (tp=4,sp)");
      continue;
    }
    if (axis == "cp")
      return bad("axis 'cp' is not modelled yet (modelled: dp, fsdp, hsdp, "
                 "tp, sp, pp)");
    if (axis == "hsdp") {
      // hsdp=RxS: R replicas of S-way sharding (FSDP2 on a 2-D mesh).
      auto [replicas, shards] = value.trim().split('x');
      if (replicas.getAsInteger(10, options.dp) ||
          shards.getAsInteger(10, options.fsdp) || options.dp < 1 ||
          options.fsdp < 1)
        return bad("hsdp must be REPLICASxSHARDS such as 2x8, got '" + value +
                   "'");
      continue;
    }
    if (axis != "dp" && axis != "fsdp" && axis != "tp" && axis != "pp")
      return bad("unknown axis '" + axis + "'");
    int64_t ranks = 0;
    if (value.trim().getAsInteger(10, ranks) || ranks < 1)
      return bad(axis + " must be a positive integer, got '" + value + "'");
    (axis == "dp"     ? options.dp
     : axis == "fsdp" ? options.fsdp
     : axis == "pp"   ? options.pp
                      : options.tp) = ranks;
  }
  if (seen.count("sp") && options.tp < 2)
    return bad("sp shards the positions between tensor-parallel regions: it "
               "needs tp=N with N >= 2");
  if (seen.count("pp")) {
    if (seen.size() > 1 || ddpFlags || zeroFlags || fsdpFlags)
      return bad("pp with other axes or their flags is not modelled yet");
    if (options.pp > nn::ParallelAttr::kMaxWorldSize)
      return bad(llvm::Twine("more than the ") +
                 llvm::Twine(nn::ParallelAttr::kMaxWorldSize) +
                 " ranks modelled");
    bool interleaved = ppSchedule == "interleaved-1f1b";
    if (ppSchedule != "1f1b" && ppSchedule != "gpipe" && !interleaved)
      return makeUsageError("--pp-schedule must be 1f1b, gpipe or "
                            "interleaved-1f1b (the looped and zero-bubble "
                            "schedules are not modelled yet), got '" +
                            ppSchedule + "'");
    if (ppStagesPerRank.getNumOccurrences() && !interleaved)
      return makeUsageError("--pp-stages-per-rank applies to "
                            "--pp-schedule=interleaved-1f1b (Schedule1F1B "
                            "and ScheduleGPipe run one stage a rank)");
    if (interleaved &&
        (ppStagesPerRank < 2 ||
         ppStagesPerRank > nn::ParallelAttr::kMaxWorldSize / options.pp))
      return makeUsageError("--pp-stages-per-rank must be at least 2 (and "
                            "pp x stages at most " +
                            llvm::Twine(nn::ParallelAttr::kMaxWorldSize) +
                            "), got " +
                            llvm::Twine(ppStagesPerRank.getValue()));
    if (microbatches.getNumOccurrences() && microbatches < 1)
      return makeUsageError("--microbatches must be at least 1, got " +
                            llvm::Twine(microbatches.getValue()));
    if (options.pp == 1 && ppFlags)
      return makeUsageError("--pp-schedule, --microbatches, --pp-stage, "
                            "--pp-layers and --pp-stages-per-rank need pp > 1");
    // Where the schedule enters autocast decides how long its weight casts
    // are cached (a micro-batch's forward or the whole step): not measured.
    if (precision == nn::Precision::AmpFp16 ||
        precision == nn::Precision::AmpBf16)
      return makeUsageError("--parallel=pp with AMP (--precision=amp-*) is "
                            "not modelled yet: load the model in its dtype "
                            "(--precision=bf16)");
    if (gradAccum > 1 || !setToNone)
      return makeUsageError("--parallel=pp with --grad-accum or "
                            "--set-to-none=false is not modelled yet (the "
                            "micro-batches are the pipeline's: "
                            "--microbatches)");
    int64_t m =
        microbatches.getNumOccurrences() ? microbatches.getValue() : options.pp;
    if (ppSchedule == "1f1b" && m < options.pp)
      return makeUsageError(
          "--pp-schedule=1f1b needs at least as many micro-batches as "
          "stages (Schedule1F1B), got --microbatches=" +
          llvm::Twine(m) + " for pp=" + llvm::Twine(options.pp) +
          ": give more or --pp-schedule=gpipe");
    // ScheduleInterleaved1F1B raises ValueError unless the micro-batches
    // are a multiple of its rounds.
    int64_t rounds = std::max<int64_t>(1, m / options.pp);
    if (interleaved && m % rounds != 0)
      return makeUsageError(
          "--pp-schedule=interleaved-1f1b needs micro-batches that are a "
          "multiple of its rounds (max(1, microbatches / pp) = " +
          llvm::Twine(rounds) + "), got --microbatches=" + llvm::Twine(m) +
          " for pp=" + llvm::Twine(options.pp));
    if (ppStage.getNumOccurrences() && (ppStage < 0 || ppStage >= options.pp))
      return makeUsageError(llvm::Twine("--pp-stage must be a ") +
                            (interleaved ? "rank" : "stage") + " 0 .. " +
                            llvm::Twine(options.pp - 1) + ", got " +
                            llvm::Twine(ppStage.getValue()));
    options.ppSchedule = ppSchedule;
    options.ppStage = ppStage;
    options.ppStagesPerRank = interleaved ? ppStagesPerRank.getValue() : 0;
    int64_t stages = options.pp * (interleaved ? ppStagesPerRank : 1);
    if (!ppLayers.empty() && static_cast<int64_t>(ppLayers.size()) != stages)
      return makeUsageError(
          "--pp-layers gives one count per stage: " + llvm::Twine(stages) +
          " for pp=" + llvm::Twine(options.pp) +
          (interleaved ? " x " + llvm::Twine(ppStagesPerRank.getValue()) +
                             " stages per rank"
                       : llvm::Twine("")) +
          ", got " + llvm::Twine(ppLayers.size()));
    options.ppLayers.assign(ppLayers.begin(), ppLayers.end());
    options.microbatches = options.pp > 1 ? m : 0;
    return std::optional<ParallelOptions>(options);
  }
  if (options.dp > nn::ParallelAttr::kMaxWorldSize ||
      options.fsdp > nn::ParallelAttr::kMaxWorldSize / options.dp ||
      options.tp >
          nn::ParallelAttr::kMaxWorldSize / (options.dp * options.fsdp))
    return bad(llvm::Twine("more than the ") +
               llvm::Twine(nn::ParallelAttr::kMaxWorldSize) +
               " ranks modelled");
  if (seen.count("hsdp") && (seen.count("dp") || seen.count("fsdp")))
    return bad("hsdp=RxS names both axes: drop dp and fsdp");
  if (seen.count("dp") && seen.count("fsdp"))
    return bad("dp with fsdp is HSDP: write hsdp=" + llvm::Twine(options.dp) +
               "x" + llvm::Twine(options.fsdp));
  if (seen.count("tp") && !seen.count("dp") && ddpFlags)
    return makeUsageError("--gradient-as-bucket-view and --bucket-cap-mb "
                          "configure DistributedDataParallel (dp=N), not tp");
  if (seen.count("fsdp") || seen.count("hsdp")) {
    if (ddpFlags)
      return makeUsageError("--gradient-as-bucket-view and --bucket-cap-mb "
                            "configure DistributedDataParallel (dp=N), not "
                            "fsdp");
    if (gradAccum > 1 || !setToNone)
      return makeUsageError("--parallel=fsdp/hsdp with --grad-accum or "
                            "--set-to-none=false is not modelled yet");
    auto isAmp = [](nn::Precision p) {
      return p == nn::Precision::AmpFp16 || p == nn::Precision::AmpBf16;
    };
    if (isAmp(precision))
      return makeUsageError(
          "--parallel=fsdp/hsdp with AMP is not modelled yet: "
          "use FSDP2's MixedPrecisionPolicy "
          "(--param-dtype=bf16) or --precision=bf16");
    if (isAmp(paramDtype) || isAmp(reduceDtype))
      return makeUsageError("--param-dtype and --reduce-dtype take fp32, bf16 "
                            "or fp16");
    if (paramDtype.getNumOccurrences() && precision != nn::Precision::Fp32)
      return makeUsageError("--param-dtype casts the fp32 parameters FSDP2 "
                            "shards: drop --precision");
    options.mixedPrecision = paramDtype != nn::Precision::Fp32;
    // reduce_dtype: None reduces in the shards' dtype (torch 2.15), or
    // param_dtype.
    nn::Precision shards =
        options.mixedPrecision ? nn::Precision::Fp32 : precision.getValue();
    nn::Precision computed =
        options.mixedPrecision ? paramDtype.getValue() : shards;
    if (reduceDtype.getNumOccurrences() && reduceDtype != shards &&
        reduceDtype != computed)
      return makeUsageError(
          "--reduce-dtype=" + nn::stringifyPrecision(reduceDtype) +
          " is not modelled with " + nn::stringifyPrecision(shards) +
          " shards computed in " + nn::stringifyPrecision(computed) +
          ": give one of those");
    options.reduceInParamDtype = reduceDtype.getNumOccurrences() &&
                                 reduceDtype == computed && computed != shards;
    options.reshardAfterForward = reshardAfterForward;
    options.shard.assign(shardModules.begin(), shardModules.end());
  } else if (fsdpFlags) {
    return makeUsageError("--param-dtype, --reduce-dtype and "
                          "--reshard-after-forward configure FSDP2: they "
                          "need fsdp or hsdp");
  }
  if (bucketCapMb < 1 || bucketCapMb > (INT64_MAX >> 20))
    return makeUsageError("--bucket-cap-mb must be a positive number of MiB, "
                          "got " +
                          llvm::Twine(bucketCapMb.getValue()));
  // DDP's first bucket is 1 MiB only with the default cap
  // (distributed.py, BucketCapacityConfig).
  if (bucketCapMb.getNumOccurrences()) {
    options.bucketCap = bucketCapMb << 20;
    options.firstBucket = options.bucketCap;
  }
  options.bucketView = gradientAsBucketView;
  if (zeroFlags) {
    llvm::StringRef stage = strategy;
    if (!strategy.getNumOccurrences())
      return makeUsageError("--reduce-bucket-size, --overlap-comm, "
                            "--stage3-* and --sub-group-size configure ZeRO: "
                            "add --strategy=zero1, zero2 or zero3");
    if (stage != "zero1" && stage != "zero2" && stage != "zero3")
      return makeUsageError("--strategy must be zero1, zero2 or zero3, got '" +
                            stage + "'");
    if (zero3Flags && stage != "zero3")
      return makeUsageError("--stage3-* and --sub-group-size configure "
                            "ZeRO-3: use --strategy=zero3");
    if (overlapComm && stage == "zero3")
      return makeUsageError("--overlap-comm with --strategy=zero3 is not "
                            "modelled (at stage 3 it picks a CUDA stream, "
                            "no second buffer)");
    if (seen.count("fsdp") || seen.count("hsdp") || seen.count("tp"))
      return makeUsageError("--strategy=" + stage +
                            " partitions over dp ranks alone: use "
                            "--parallel=dp=N");
    if (ddpFlags)
      return makeUsageError("--gradient-as-bucket-view and --bucket-cap-mb "
                            "configure DistributedDataParallel, not ZeRO");
    // DeepSpeed keeps no .grad across optimizer steps.
    if (!setToNone)
      return makeUsageError("--strategy=" + stage +
                            " with --set-to-none=false is not modelled yet");
    if (gradAccum > 1 && overlapComm && stage != "zero3")
      return makeUsageError("--strategy=" + stage +
                            " with --grad-accum and --overlap-comm is not "
                            "modelled yet");
    if (precision != nn::Precision::Fp32 && precision != nn::Precision::Bf16)
      return makeUsageError("--strategy=" + stage + " with --precision=" +
                            nn::stringifyPrecision(precision) +
                            " is not modelled yet (fp32 and bf16, DeepSpeed's "
                            "\"bf16\": {\"enabled\": true}, are)");
    if (reduceBucketSize < 1)
      return makeUsageError("--reduce-bucket-size must be a positive number "
                            "of elements, got " +
                            llvm::Twine(reduceBucketSize.getValue()));
    for (auto [flag, value] :
         {std::pair<llvm::StringRef, int64_t>{"stage3-prefetch-bucket-size",
                                              stage3PrefetchBucketSize},
          {"stage3-max-live-parameters", stage3MaxLiveParameters},
          {"stage3-max-reuse-distance", stage3MaxReuseDistance},
          {"stage3-param-persistence-threshold",
           stage3ParamPersistenceThreshold}})
      if (value < 0)
        return makeUsageError("--" + flag +
                              " must be a number of elements >= 0, got " +
                              llvm::Twine(value));
    if (subGroupSize < 1)
      return makeUsageError("--sub-group-size must be a positive number of "
                            "elements, got " +
                            llvm::Twine(subGroupSize.getValue()));
    options.zero = stage == "zero1" ? 1 : stage == "zero2" ? 2 : 3;
    options.reduceBucket = reduceBucketSize;
    options.overlapComm = overlapComm;
    options.prefetchBucket = stage3PrefetchBucketSize;
    options.maxLiveParameters = stage3MaxLiveParameters;
    options.maxReuseDistance = stage3MaxReuseDistance;
    options.persistenceThreshold = stage3ParamPersistenceThreshold;
    options.subGroupSize = subGroupSize;
  }
  return std::optional<ParallelOptions>(options);
}

llvm::Expected<zoo::LigerKernels> VramOptFlags::parseLiger() const {
  zoo::LigerKernels liger;
  for (llvm::StringRef kernel : ligerKernels) {
    if (kernel == "all") {
      liger.rmsNorm = liger.swiglu = liger.rope = true;
    } else if (kernel == "rms_norm") {
      liger.rmsNorm = true;
    } else if (kernel == "swiglu") {
      liger.swiglu = true;
    } else if (kernel == "rope") {
      liger.rope = true;
    } else if (kernel != "fused_linear_cross_entropy") { // the step's loss
      return makeUsageError("--liger=" + kernel +
                            ": expected rms_norm, swiglu, rope, "
                            "fused_linear_cross_entropy or all");
    }
  }
  // The weight gradient's partial sums: a row per SM of the GPU (--gpu, or
  // the generic one's).
  if (device == nn::Device::Cuda)
    liger.rmsNormPartialRows =
        makeDeviceModel(lookupGpu(gpuName), /*lazyLoading=*/true)
            .multiprocessors;
  return liger;
}

nn::LossKind VramOptFlags::getLossKind() const {
  if (ligerNamesLoss())
    return nn::LossKind::FusedLinearCrossEntropy;
  // A Hugging Face model trains with its own loss (Trainer, or the model
  // called with labels) unless --loss says otherwise.
  if (!lossKind.getNumOccurrences() && !huggingFaceConfig.empty())
    return nn::LossKind::CausalLm;
  return lossKind;
}

llvm::Error VramOptFlags::checkGeneration(ModelKind kind) const {
  auto usage = [](const llvm::Twine &message) {
    return makeUsageError(message);
  };
  if (mode != nn::StepMode::Generate) {
    if (promptLen.getNumOccurrences() || maxNewTokens.getNumOccurrences())
      return usage("--prompt-len and --max-new-tokens describe generation: "
                   "add --mode=generate");
    if (cacheImplementation.getNumOccurrences() ||
        kvBlockSize.getNumOccurrences())
      return usage(std::string(cacheImplementation.getNumOccurrences()
                                   ? "--cache-implementation"
                                   : "--kv-block-size") +
                   " describes generation's cache: add --mode=generate");
    if (doSample.getNumOccurrences() || temperature.getNumOccurrences() ||
        topK.getNumOccurrences() || topP.getNumOccurrences() ||
        minP.getNumOccurrences() || repetitionPenalty.getNumOccurrences())
      return usage("--do-sample, --temperature, --top-k, --top-p, --min-p "
                   "and --repetition-penalty describe generation's choice "
                   "of tokens: add --mode=generate");
    if (numBeams.getNumOccurrences())
      return usage("--num-beams describes generation's search: add "
                   "--mode=generate");
    return llvm::Error::success();
  }
  bool warperFlags = temperature.getNumOccurrences() ||
                     topK.getNumOccurrences() || topP.getNumOccurrences() ||
                     minP.getNumOccurrences();
  if (kvBlockSize.getNumOccurrences() &&
      cacheImplementation != CacheImplementation::Paged)
    return usage("--kv-block-size sizes a paged cache's blocks: add "
                 "--cache-implementation=paged");
  if (numBeams < 1)
    return usage("--num-beams must be >= 1, got " + std::to_string(numBeams));
  if (kvBlockSize < 1)
    return usage("--kv-block-size must be >= 1, got " +
                 std::to_string(kvBlockSize));
  if (warperFlags && !doSample)
    return usage("--temperature, --top-k, --top-p and --min-p are sampling's "
                 "logits warpers (generate() runs them only with "
                 "do_sample=True): add --do-sample");
  if (minP.getNumOccurrences() && !(minP >= 0.0 && minP <= 1.0))
    return usage("--min-p must be in [0, 1], got " + std::to_string(minP));
  if (!(repetitionPenalty > 0.0) || !std::isfinite(repetitionPenalty))
    return usage("--repetition-penalty must be a finite number > 0, got " +
                 std::to_string(repetitionPenalty));
  // With padded prompts the penalty ignores each row's padding through
  // tensors of its own (prompt_ignore_length): not modelled.
  if (padded && repetitionPenalty != 1.0)
    return usage("--repetition-penalty with --padded is not modelled yet");
  if (!(temperature > 0.0) || !std::isfinite(temperature))
    return usage("--temperature must be a finite number > 0, got " +
                 std::to_string(temperature));
  if (topK < 0)
    return usage("--top-k must be >= 0 (0: no top-k warper), got " +
                 std::to_string(topK));
  if (!(topP > 0.0 && topP <= 1.0))
    return usage("--top-p must be in (0, 1], got " + std::to_string(topP));
  // A .mlir generation program carries its own tokens (nn.max_new_tokens).
  if (kind == ModelKind::Mlir) {
    if (promptLen.getNumOccurrences() || maxNewTokens.getNumOccurrences())
      return usage("--prompt-len and --max-new-tokens build a generation "
                   "program (--zoo or --hf); a .mlir one has its own");
    if (cacheImplementation.getNumOccurrences() ||
        kvBlockSize.getNumOccurrences())
      return usage(std::string(cacheImplementation.getNumOccurrences()
                                   ? "--cache-implementation"
                                   : "--kv-block-size") +
                   " builds a generation program (--zoo or --hf); a .mlir "
                   "one has its own cache");
    if (doSample.getNumOccurrences() || warperFlags ||
        repetitionPenalty.getNumOccurrences())
      return usage("--do-sample, its warpers and --repetition-penalty build "
                   "a generation program (--zoo or --hf); a .mlir one has "
                   "its own nn.next_token");
    if (numBeams.getNumOccurrences())
      return usage("--num-beams builds a generation program (--zoo or --hf); "
                   "a .mlir one has its own search");
  } else if (kind != ModelKind::Zoo && kind != ModelKind::HuggingFace) {
    return usage("--mode=generate runs the generation loop of a model whose "
                 "layers vram-opt builds (--zoo or --hf): an imported graph "
                 "has one forward pass, without a KV cache");
  } else if (maxNewTokens < 1) {
    return usage("--mode=generate needs --max-new-tokens (>= 1), the tokens "
                 "each sequence generates");
  }
  if (promptLen.getNumOccurrences() && promptLen <= 0)
    return usage("--prompt-len must be a positive integer, got " +
                 std::to_string(promptLen));
  if (promptLen.getNumOccurrences() && seqLen.getNumOccurrences())
    return usage("--prompt-len is the prompt's --seq: give one");
  if (!checkpointModules.empty() || loraSpec.getNumOccurrences() ||
      lossKind.getNumOccurrences() || optimizer.getNumOccurrences() ||
      !freezePatterns.empty())
    return usage("--checkpoint, --lora, --loss, --optimizer and --freeze "
                 "describe training, not --mode=generate");
  // Serving splits a model with tensor parallelism; the data-parallel axes
  // describe training.
  if (!parallelSpec.empty() && !(getTensorParallelRanks() > 1 &&
                                 !llvm::StringRef(parallelSpec).contains("dp")))
    return usage("--parallel with --mode=generate models tensor parallelism "
                 "(tp=N) only");
  return llvm::Error::success();
}

llvm::Error VramOptFlags::check(llvm::StringRef inputFilename, bool inputGiven,
                                llvm::ArrayRef<std::string> cxxFlags,
                                OutputFormat resolvedFormat) const {
  auto usage = [](const llvm::Twine &message) {
    return makeUsageError(message);
  };
  for (auto [opt, name] :
       {std::pair{&batch, "batch"}, std::pair{&imageSize, "image-size"},
        std::pair{&seqLen, "seq"}, std::pair{&numClasses, "num-classes"},
        std::pair{&decoderSeqLen, "decoder-seq"},
        std::pair{&packedTokens, "tokens"}})
    if (opt->getNumOccurrences() && *opt <= 0)
      return usage("--" + llvm::Twine(name) +
                   " must be a positive integer, got " + std::to_string(*opt));
  if (gradAccum < 1)
    return usage("--grad-accum must be at least 1, got " +
                 llvm::Twine(gradAccum.getValue()));
  if (gradAccum > 1 && mode != nn::StepMode::Train)
    return usage("--grad-accum applies to training (--mode=train)");
  if (lossOutput.getNumOccurrences() && lossOutput < 0)
    return usage("--loss-output must be a non-negative output index, got " +
                 llvm::Twine(lossOutput.getValue()));
  if (lossOutput.getNumOccurrences() && mode != nn::StepMode::Train)
    return usage("--loss-output applies to training (--mode=train)");
  if (keepOutput && mode != nn::StepMode::Train)
    return usage("--keep-output applies to training (--mode=train): "
                 "inference returns its output anyway");
  if (useCache.getNumOccurrences() && useCache &&
      (mode != nn::StepMode::Train || !checkpointModules.empty()))
    return usage("--use-cache=true applies to a training step without "
                 "--checkpoint (inference is modelled with use_cache=False, "
                 "--mode=generate with its DynamicCache; transformers turns "
                 "the cache off under gradient checkpointing)");
  if (optimizerInBackward &&
      (mode != nn::StepMode::Train || gradAccum > 1 || !setToNone))
    return usage("--optimizer-in-backward applies to training (--mode=train) "
                 "with gradients freed after each update (no --grad-accum, "
                 "no --set-to-none=false)");
  if (ema && mode != nn::StepMode::Train)
    return usage("--ema applies to training (--mode=train)");
  if (!(maxGradNorm >= 0) || std::isinf(maxGradNorm))
    return usage("--max-grad-norm must be a finite number >= 0, got " +
                 std::to_string(maxGradNorm));
  if (maxGradNorm > 0) {
    if (mode != nn::StepMode::Train)
      return usage("--max-grad-norm applies to training (--mode=train)");
    if (optimizerInBackward)
      return usage("--max-grad-norm clips every gradient before the update: "
                   "not with --optimizer-in-backward, which frees each one "
                   "after its own");
  }
  if (ema && !parallelSpec.empty())
    return usage("--ema with --parallel is not modelled yet");
  if (ema && quantizeType.getNumOccurrences())
    return usage("--ema of a model with 4-bit weights is not modelled (its "
                 "deep copy holds the packed weights and their QuantState)");
  if (ema && validate != ValidationTarget::None)
    return usage("--validate does not execute the EMA update yet");
  if ((optimizer == nn::OptimizerKind::PagedAdamW ||
       optimizer == nn::OptimizerKind::PagedAdamW8bit) &&
      !parallelSpec.empty())
    return usage("--optimizer=paged-adamw and paged-adamw8bit with "
                 "--parallel are not modelled yet");
  if (optimizerInBackward && !parallelSpec.empty())
    return usage("--optimizer-in-backward with --parallel is not modelled "
                 "yet");
  auto ligerParallel = [&](const llvm::Twine &what) -> llvm::Error {
    if (parallelSpec.empty())
      return llvm::Error::success();
    llvm::Expected<std::optional<ParallelOptions>> parallel = parseParallel();
    if (!parallel)
      return parallel.takeError();
    if (isLigerModelledWith(*parallel))
      return llvm::Error::success();
    return usage(what + " with --parallel is modelled for DDP (dp=N), "
                        "ZeRO-1 and -2 (--strategy=zero1|zero2) and FSDP2 "
                        "(fsdp=N, hsdp=RxS) only yet");
  };
  if (!ligerKernels.empty()) {
    if (llvm::Expected<zoo::LigerKernels> liger = parseLiger(); !liger)
      return liger.takeError();
    if (mode != nn::StepMode::Train)
      return usage("--liger models Liger-Kernel's kernels in training "
                   "(--mode=train, Trainer's use_liger_kernel)");
    if (ligerNamesLoss() && lossKind.getNumOccurrences() &&
        lossKind != nn::LossKind::FusedLinearCrossEntropy)
      return usage("--liger's fused_linear_cross_entropy is the loss: not "
                   "with --loss=" +
                   nn::stringifyLossKind(lossKind));
    if (validate != ValidationTarget::None)
      return usage("--validate does not execute Liger-Kernel's kernels yet");
    if (precision == nn::Precision::AmpFp16 ||
        precision == nn::Precision::AmpBf16)
      return usage("--liger under autocast (--precision=amp-*) is not "
                   "modelled yet: load the model in its dtype "
                   "(--precision=bf16)");
    if (llvm::Error error = ligerParallel("--liger"))
      return error;
  }
  if (getLossKind() == nn::LossKind::FusedLinearCrossEntropy) {
    if (validate != ValidationTarget::None)
      return usage("--validate does not execute the fused linear "
                   "cross-entropy yet");
    if (precision == nn::Precision::AmpFp16 ||
        precision == nn::Precision::AmpBf16)
      return usage("--loss=fused_linear_cross_entropy under autocast "
                   "(--precision=amp-*) is not modelled yet: load the model "
                   "in its dtype (--precision=bf16)");
    if (llvm::Error error = ligerParallel("--loss=fused_linear_cross_entropy"))
      return error;
    if (keepOutput)
      return usage("--keep-output holds logits that the fused linear "
                   "cross-entropy never makes");
  }
  if (!(weightDecay >= 0) || std::isinf(weightDecay))
    return usage("--weight-decay must be a finite number >= 0, got " +
                 std::to_string(weightDecay));
  if (loraSpec.getNumOccurrences())
    if (llvm::Expected<LoraOptions> lora = parseLora(); !lora)
      return lora.takeError();
  if (quantizeType.getNumOccurrences()) {
    if (quantizeType != "nf4" && quantizeType != "fp4" &&
        quantizeType != "int8")
      return usage("--quantize=" + quantizeType +
                   ": expected nf4, fp4 or int8");
    if (quantizeType == "int8" &&
        (doubleQuant.getNumOccurrences() || computeDtype.getNumOccurrences()))
      return usage("--double-quant and --compute-dtype describe 4-bit "
                   "weights; an int8 layer computes in its input's dtype");
    if (quantizeType != "int8" && (int8Threshold.getNumOccurrences() ||
                                   int8OutlierCols.getNumOccurrences()))
      return usage("--int8-threshold and --int8-outlier-cols describe "
                   "--quantize=int8");
    if (!(int8Threshold >= 0) || std::isinf(int8Threshold))
      return usage("--int8-threshold must be a finite number >= 0, got " +
                   std::to_string(int8Threshold));
    if (int8OutlierCols < 0)
      return usage("--int8-outlier-cols must be >= 0, got " +
                   std::to_string(int8OutlierCols));
    if (int8OutlierCols > 0 && int8Threshold == 0)
      return usage("--int8-outlier-cols needs a threshold: with "
                   "--int8-threshold=0 no column is an outlier");
    if (precision == nn::Precision::AmpFp16 ||
        precision == nn::Precision::AmpBf16)
      return usage("--quantize under autocast (--precision=amp-*) is not "
                   "modelled: load the model in its compute dtype "
                   "(--precision=bf16)");
    if (torchVersion == nn::TorchVersion::V1_13)
      return usage("--quantize models bitsandbytes 0.50, which needs torch "
                   ">= 2.4 (--torch-version=2)");
    if (validate != ValidationTarget::None)
      return usage("--validate does not execute quantized layers yet");
    if (!parallelSpec.empty())
      return usage("--quantize with --parallel is not modelled yet");
    if (computeDtype != nn::Precision::Fp32 &&
        computeDtype != nn::Precision::Fp16 &&
        computeDtype != nn::Precision::Bf16)
      return usage("--compute-dtype is fp32, fp16 or bf16");
  } else if (doubleQuant.getNumOccurrences() ||
             computeDtype.getNumOccurrences()) {
    return usage("--double-quant and --compute-dtype describe 4-bit weights: "
                 "add --quantize=nf4 (or fp4)");
  } else if (int8Threshold.getNumOccurrences() ||
             int8OutlierCols.getNumOccurrences()) {
    return usage("--int8-threshold and --int8-outlier-cols describe int8 "
                 "weights: add --quantize=int8");
  }
  llvm::Expected<std::optional<ParallelOptions>> parallel = parseParallel();
  if (!parallel)
    return parallel.takeError();
  if (maxGradNorm > 0 && *parallel &&
      ((*parallel)->fsdp > 1 || (*parallel)->tp > 1 || (*parallel)->zero > 0))
    return usage("--max-grad-norm with sharded gradients (fsdp, hsdp, tp, "
                 "ZeRO) is not modelled yet: dp=N is");
  if (parallelSpec.getNumOccurrences() && validate != ValidationTarget::None)
    return usage("--validate runs one process: it does not run --parallel");
  if (freezeFirst.getNumOccurrences() &&
      !(freezeFirst >= 0 && freezeFirst <= 1))
    return usage("--freeze-first must be a fraction in [0, 1], got " +
                 std::to_string(freezeFirst));
  if (budget.getNumOccurrences() && !parseByteSize(budget))
    return usage("--budget expects a size such as 8GiB, 24GB or 1000000, "
                 "got '" +
                 budget + "'");
  if (contextBytes.getNumOccurrences() && !parseByteSize(contextBytes))
    return usage("--context-bytes expects a size such as 500MiB, got '" +
                 contextBytes + "'");
  if (gpuName.getNumOccurrences()) {
    if (!lookupGpu(gpuName)) {
      std::string known;
      for (const GpuSpec &gpu : getGpuSpecs())
        known += (known.empty() ? "" : ", ") + gpu.name.str();
      return usage("unknown --gpu '" + gpuName + "' (known: " + known + ")");
    }
    if (allocatorKind.getNumOccurrences() &&
        allocatorKind != nn::AllocatorKind::PytorchCuda)
      return usage("--gpu models a CUDA device's memory: it needs "
                   "--allocator=pytorch-cuda");
  }
  bool cudaOnly = gpuName.getNumOccurrences() ||
                  contextBytes.getNumOccurrences() ||
                  cudnnWorkspace.getNumOccurrences();
  if (cudaOnly && device == nn::Device::Cpu)
    return usage("--gpu, --context-bytes and --cudnn-workspace model a CUDA "
                 "device, not --device=cpu");
  if ((contextBytes.getNumOccurrences() ||
       cudaLazyLoading.getNumOccurrences()) &&
      !gpuName.getNumOccurrences() &&
      allocatorKind != nn::AllocatorKind::PytorchCuda)
    return usage("--context-bytes and --cuda-lazy-loading are part of the "
                 "device figure: add --gpu or --allocator=pytorch-cuda");
  if (fitBatch && fitContext)
    return usage("--fit-batch and --fit-context each search one size: give "
                 "one");
  if (fitContext && !hasBudget())
    return usage("--fit-context needs --budget (or --gpu)");
  if ((fitBatch || budgetMetric.getNumOccurrences()) && !hasBudget())
    return usage(std::string(fitBatch ? "--fit-batch" : "--budget-metric") +
                 " needs --budget (or --gpu)");
  if (budgetMetric.getNumOccurrences() &&
      budgetMetric == BudgetMetric::Device &&
      (device == nn::Device::Cpu || !usesCudaAllocator()))
    return usage("--budget-metric=device needs --gpu or "
                 "--allocator=pytorch-cuda");
  if (compareWith.getNumOccurrences() &&
      resolvedFormat != OutputFormat::Markdown)
    return usage("--compare needs --format=markdown");
  if (sarifLocation.getNumOccurrences()) {
    if (resolvedFormat != OutputFormat::Sarif)
      return usage("--sarif-location needs --format=sarif");
    auto [file, line] = llvm::StringRef(sarifLocation).rsplit(':');
    unsigned number;
    if (line.empty() || line.getAsInteger(10, number))
      file = sarifLocation;
    else if (number == 0)
      return usage("--sarif-location: a line is 1 or more, got '" +
                   sarifLocation + "'");
    if (file.empty())
      return usage("--sarif-location expects FILE[:LINE]");
  }
  if ((failOnRegression || regressionThreshold.getNumOccurrences()) &&
      !compareWith.getNumOccurrences())
    return usage(std::string(failOnRegression ? "--fail-on-regression"
                                              : "--regression-threshold") +
                 " needs --compare");
  if (validate == ValidationTarget::None &&
      (inputData.getNumOccurrences() || dumpDir.getNumOccurrences() ||
       allocationMode.getNumOccurrences() || learningRate.getNumOccurrences()))
    return usage("--input-data, --dump, --allocation-mode and --lr need "
                 "--validate");
  if (mode == nn::StepMode::Generate && validate != ValidationTarget::None)
    return usage("--validate does not execute generation yet");
#ifndef VRAM_ENABLE_EXECUTION
  if (validate != ValidationTarget::None)
    return usage("this vram-opt was built without the execution engine "
                 "(VRAM_ENABLE_EXECUTION=OFF)");
#endif
#ifndef VRAM_ENABLE_CUDA_RUNTIME
  if (validate == ValidationTarget::Gpu || listCudaDevices)
    return usage("this vram-opt was built without the CUDA runtime (cuda.h "
                 "was not found at configure time)");
#endif
  {
    llvm::StringRef arch = gpuArch;
    unsigned sm = 0;
    if (!arch.consume_front("sm_") || arch.getAsInteger(10, sm) || sm < 50)
      return usage("--gpu-arch=" + gpuArch + ": expected sm_XY (sm_90, sm_80)");
  }
  if (validate != ValidationTarget::Gpu &&
      (gpuArch.getNumOccurrences() || cudaDeviceOrdinal.getNumOccurrences() ||
       gpuBinary.getNumOccurrences()))
    return usage("--gpu-arch, --gpu-binary and --cuda-device need "
                 "--validate=gpu");
  if (validate == ValidationTarget::Gpu &&
      allocationMode == AllocationFlag::Compiler)
    return usage("--validate=gpu does not support --allocation-mode=compiler "
                 "yet");
  if (!(learningRate > 0) || std::isinf(learningRate))
    return usage("--lr must be a positive number");
  for (const std::string &item : inputData) {
    auto [name, file] = llvm::StringRef(item).split('=');
    if (name.empty() || file.empty())
      return usage("--input-data expects NAME=FILE.npy, got '" + item + "'");
    if (!llvm::sys::fs::exists(file))
      return usage("--input-data " + name + ": no file " + file);
  }
  if (!(regressionThreshold >= 0) || std::isinf(regressionThreshold))
    return usage("--regression-threshold must be a percentage >= 0");
  if (timeline && resolvedFormat == OutputFormat::Mlir)
    return usage("--timeline is part of a report: use --format=text or "
                 "--format=json");

  // Options that the chosen front end cannot apply are errors, not ignored.
  auto option = [](const cl::Option &opt) { return &opt; };
  ModelKind kind = getModelKind(inputFilename);
  if (!zooName.empty() && inputGiven)
    return usage("give a model file or --zoo, not both");
  if (!huggingFaceConfig.empty() && (inputGiven || !zooName.empty()))
    return usage("give one model: a model file, --zoo or --hf");
  if (kind == ModelKind::ZooList)
    return llvm::Error::success();
  if (llvm::Error error = checkGeneration(kind))
    return error;
  if (packedTokens.getNumOccurrences()) {
    if (kind != ModelKind::Zoo && kind != ModelKind::HuggingFace)
      return usage("--tokens builds a packed row for a model whose layers "
                   "vram-opt builds (--zoo or --hf); an imported graph has "
                   "its input's shape");
    if (batch.getNumOccurrences() || seqLen.getNumOccurrences())
      return usage("--tokens is one packed row of N tokens: give it or "
                   "--batch and --seq");
    if (mode == nn::StepMode::Generate)
      return usage("--tokens packs a training or inference batch; "
                   "--mode=generate runs --batch prompts of --prompt-len");
    if (fitBatch)
      return usage("--fit-batch searches the rows of a batch; a packed batch "
                   "is one row (--fit-context searches its tokens)");
    if (padded)
      return usage("--tokens is one packed row, without padding: give it or "
                   "--padded");
  }
  if (padded) {
    if (kind != ModelKind::Zoo && kind != ModelKind::HuggingFace)
      return usage("--padded builds the attention mask of a model whose "
                   "layers vram-opt builds (--zoo or --hf)");
  }
  if (!ligerKernels.empty() && kind != ModelKind::Zoo &&
      kind != ModelKind::HuggingFace)
    return usage("--liger patches the layers of a model vram-opt builds "
                 "(--zoo or --hf); an .mlir model writes nn.liger_rms_norm, "
                 "nn.liger_swiglu and nn.liger_rope itself");
  // Only the Hugging Face decoders run transformers' cache in training (the
  // zoo's follow transformers from before it).
  if (useCache.getNumOccurrences() && useCache &&
      kind != ModelKind::HuggingFace)
    return usage("--use-cache=true applies to a Hugging Face decoder (--hf): "
                 "no other model runs transformers' cache in training");
  // An .mlir model says itself whether it is one rank's (nn.tensor_parallel).
  if (getTensorParallelRanks() > 1 && kind != ModelKind::Zoo &&
      kind != ModelKind::HuggingFace && kind != ModelKind::Mlir)
    return usage("--parallel=tp builds one rank's model: it needs a model "
                 "whose layers vram-opt builds (--zoo=llama-7b or --hf)");
  auto notFor = [](const cl::Option &opt, llvm::StringRef what) -> llvm::Error {
    if (opt.getNumOccurrences())
      return makeUsageError("--" + opt.ArgStr + " does not apply to " + what);
    return llvm::Error::success();
  };
  auto noneFor = [&](std::initializer_list<const cl::Option *> opts,
                     llvm::StringRef what) -> llvm::Error {
    for (const cl::Option *opt : opts)
      if (llvm::Error error = notFor(*opt, what))
        return error;
    return llvm::Error::success();
  };
  if (kind != ModelKind::HuggingFace)
    if (llvm::Error error =
            notFor(decoderSeqLen, "this input: it applies to encoder-decoder "
                                  "models built from a config (--hf t5)"))
      return error;
  if (kind != ModelKind::Zoo && kind != ModelKind::HuggingFace &&
      kind != ModelKind::ZooList)
    if (llvm::Error error =
            notFor(attention, "this input: it applies to zoo and --hf language "
                              "models, whose layers vram-opt builds"))
      return error;
  if (kind != ModelKind::Cxx) {
    if (llvm::Error error =
            noneFor({option(cxxModule), option(cxxInputs), option(cxxArgs),
                     option(cxxCompileCommands)},
                    "this input: they are options of C++ models"))
      return error;
    if (!cxxFlags.empty())
      return usage("compile flags after `--` apply to C++ models only");
  }
  switch (kind) {
  case ModelKind::Cxx:
    if (llvm::Error error = noneFor(
            {option(imageSize), option(seqLen), option(numClasses),
             option(dimBindings)},
            "a C++ model: give forward()'s input shapes with --input (and "
            "--batch to rebind dimension 0)"))
      return error;
    if (llvm::Error error = notFor(onnxBuffers, "a C++ model"))
      return error;
    if (cxxModule.empty())
      return usage("a C++ model needs --module=NAME (its TORCH_MODULE holder "
                   "or Impl class)");
    if (cxxInputs.empty())
      return usage("a C++ model needs --input=SHAPE for each tensor argument "
                   "of forward() (e.g. --input=8x3x224x224)");
    if (!cxxCompileCommands.empty() && !cxxFlags.empty())
      return usage("give compile flags after `--` or --compile-commands, not "
                   "both");
    return llvm::Error::success();
  case ModelKind::Zoo:
    if (llvm::Error error = notFor(
            dimBindings, "zoo models (use --batch, --seq, --image-size)"))
      return error;
    return notFor(onnxBuffers, "zoo models");
  case ModelKind::HuggingFace:
    if (llvm::Error error = noneFor(
            {option(imageSize), option(numClasses), option(dimBindings)},
            "a Hugging Face model (use --batch and --seq; a ViT's image "
            "size and labels are its config's)"))
      return error;
    return notFor(onnxBuffers, "a Hugging Face config");
  case ModelKind::Onnx:
    if (llvm::Error error = notFor(
            imageSize, "an ONNX model: its input shapes are in the file (bind "
                       "symbolic dimensions with --batch, --seq or --dim)"))
      return error;
    return notFor(numClasses, "an ONNX model: its classifier is in the file");
  case ModelKind::TorchExport:
    if (llvm::Error error = noneFor(
            {option(imageSize), option(numClasses), option(onnxBuffers)},
            "a torch.export archive: its shapes and layers are in the file "
            "(bind symbolic dimensions with --batch, --seq or --dim)"))
      return error;
    return llvm::Error::success();
  case ModelKind::Mlir:
    if (llvm::Error error = noneFor({option(imageSize), option(seqLen),
                                     option(numClasses), option(dimBindings)},
                                    "an .mlir model: its shapes are static"))
      return error;
    return notFor(onnxBuffers, "an .mlir model");
  case ModelKind::ZooList:
    break;
  }
  return llvm::Error::success();
}

PipelineOptions VramOptFlags::getPipelineOptions(bool wantsStep) const {
  PipelineOptions options;
  options.usePassManagerCLOptions = true;
  options.buildStep = wantsStep;
  options.step.mode = mode;
  options.step.optimizer = optimizer;
  if (optimizerImpl.getNumOccurrences())
    options.implementation = optimizerImpl;
  options.step.weightDecay = weightDecay;
  options.step.loss = getLossKind();
  options.step.flattenLogits = flattenLogits;
  options.step.setToNone = setToNone;
  options.step.keepOutput = keepOutput;
  options.step.lossOutput = lossOutput;
  if (llvm::Expected<zoo::LigerKernels> liger = parseLiger())
    options.liger = *liger;
  else
    llvm::consumeError(liger.takeError()); // check() rejected it before
  options.tensorParallelLmHead = tpPlan != "layers";
  options.tensorParallelEmbedding = tpPlan == "vocab";
  options.sequenceParallel = hasSequenceParallel(parallelSpec);
  options.step.lossParallel = lossParallel;
  options.step.gradAccum = gradAccum;
  options.step.optimizerInBackward = optimizerInBackward;
  options.step.ema = ema;
  options.step.maxGradNorm = maxGradNorm;
  options.step.inputRequiresGrad = inputRequiresGrad;
  options.step.torchVersion = torchVersion;
  options.step.cudnnWorkspace = cudnnWorkspace;
  options.step.device = device;
  options.freezePatterns.assign(freezePatterns.begin(), freezePatterns.end());
  options.freezeFirst = freezeFirst;
  if (loraSpec.getNumOccurrences())
    options.lora = cantFail(parseLora());
  if (quantizeType.getNumOccurrences()) {
    QuantizeOptions quantize;
    quantize.quantType = quantizeType == "fp4"    ? nn::QuantType::Fp4
                         : quantizeType == "int8" ? nn::QuantType::Int8
                                                  : nn::QuantType::Nf4;
    quantize.doubleQuant = doubleQuant;
    quantize.computeDtype = computeDtype;
    quantize.threshold = int8Threshold;
    quantize.outlierCols = int8OutlierCols;
    options.quantize = quantize;
  }
  options.precision = precision;
  options.checkpointModules.assign(checkpointModules.begin(),
                                   checkpointModules.end());
  options.parallel = cantFail(parseParallel());
  // A pipeline stage calls its decoder layers without a cache (torchtitan's
  // stages; benchmarks/accuracy/pp.py).
  options.useCache =
      useCache && (useCache.getNumOccurrences() ||
                   !(options.parallel && options.parallel->pp > 1));
  // FSDP2's param_dtype: the step computes in it over fp32 shards.
  if (options.parallel && options.parallel->mixedPrecision)
    options.precision = paramDtype;
  options.memoryModel.allocator = usesCudaAllocator()
                                      ? nn::AllocatorKind::PytorchCuda
                                      : nn::AllocatorKind::Exact;
  if (gpuName.getNumOccurrences())
    options.memoryModel.gpu = lookupGpu(gpuName);
  options.memoryModel.cudaLazyLoading = cudaLazyLoading;
  if (contextBytes.getNumOccurrences())
    options.memoryModel.contextBytes = parseByteSize(contextBytes);
  if (budget.getNumOccurrences())
    options.budget = parseByteSize(budget);
  else if (options.memoryModel.gpu)
    options.budget = options.memoryModel.gpu->capacityBytes;
  if (budgetMetric.getNumOccurrences())
    options.budgetMetric = budgetMetric;
  return options;
}

void vram::registerVramOptCLOptions() { *flags; }

llvm::SmallVector<const cl::OptionCategory *> vram::getVramOptCLCategories() {
  return {&flags->modelCat,    &flags->cxxCat,    &flags->stepCat,
          &flags->scenarioCat, &flags->outputCat, &flags->validateCat,
          &flags->lintCat};
}

ModelKind vram::getModelKind(llvm::StringRef inputFilename) {
  if (flags->zooName == "list")
    return ModelKind::ZooList;
  if (!flags->zooName.empty())
    return ModelKind::Zoo;
  if (!flags->huggingFaceConfig.empty())
    return ModelKind::HuggingFace;
  switch (flags->importKind) {
  case InputKind::Mlir:
    return ModelKind::Mlir;
  case InputKind::Onnx:
    return ModelKind::Onnx;
  case InputKind::TorchExport:
    return ModelKind::TorchExport;
  case InputKind::Cxx:
    return ModelKind::Cxx;
  case InputKind::Auto:
    break;
  }
  if (llvm::sys::path::extension(inputFilename) == ".onnx")
    return ModelKind::Onnx;
  if (llvm::sys::path::extension(inputFilename) == ".pt2")
    return ModelKind::TorchExport;
  return isCxxSource(inputFilename) ? ModelKind::Cxx : ModelKind::Mlir;
}

std::string vram::getInputPath(llvm::StringRef inputFilename) {
  if (!flags->zooName.empty())
    return "zoo:" + flags->zooName;
  if (!flags->huggingFaceConfig.empty())
    return getHuggingFaceConfigPath();
  return inputFilename.str();
}

std::string vram::getHuggingFaceConfigPath() {
  llvm::SmallString<256> path(flags->huggingFaceConfig.getValue());
  if (llvm::sys::fs::is_directory(path))
    llvm::sys::path::append(path, "config.json");
  return path.str().str();
}

bool vram::isFitBatchRequested() { return flags->fitBatch; }
bool vram::isFitContextRequested() { return flags->fitContext; }
bool vram::isCudaDeviceListRequested() { return flags->listCudaDevices; }

llvm::Expected<RunOptions> vram::getRunOptionsFromCommandLine(
    llvm::StringRef inputFilename, bool inputGiven,
    llvm::ArrayRef<std::string> cxxFlags, bool printsIR) {
  const VramOptFlags &f = *flags;
  RunOptions options;
  options.formatGiven = f.format.getNumOccurrences();
  options.format = f.format;
  // A model with no pass pipeline gets the text report, with the verdict of
  // a budget or a validation in it; IR is printed with --format=mlir, when
  // passes run, and in diagnostics tests.
  if (!options.formatGiven && !printsIR)
    options.format = OutputFormat::Text;
  if (llvm::Error error =
          f.check(inputFilename, inputGiven, cxxFlags, options.format))
    return std::move(error);
  // A report, or an explicit --mode or --budget, builds the step when the
  // pipeline did not; a report without --mode is about training.
  bool wantsStep = options.format != OutputFormat::Mlir ||
                   f.mode.getNumOccurrences() || !f.checkpointModules.empty() ||
                   f.hasBudget() || f.traceFile.getNumOccurrences() ||
                   f.validate != ValidationTarget::None;
  options.pipeline = f.getPipelineOptions(wantsStep);
  if (f.batch.getNumOccurrences())
    options.batch = f.batch;
  ReportOptions &report = options.report;
  report.flops = f.flopConvention;
  report.allocator = options.pipeline.memoryModel.allocator;
  report.device = options.pipeline.memoryModel.getDeviceFor(f.device);
  report.timeline = f.timeline;
  report.topTensors = f.topTensors;
  report.depth = f.layerDepth;
  report.comparePath = f.compareWith;
  if (f.sarifLocation.getNumOccurrences()) {
    auto [file, line] = llvm::StringRef(f.sarifLocation).rsplit(':');
    unsigned number = 1;
    if (line.empty() || line.getAsInteger(10, number))
      file = f.sarifLocation;
    report.sarifLocation = SourceLine{file.str(), number ? number : 1};
  }
  report.regressionThreshold = f.regressionThreshold / 100;
  report.failOnRegression = f.failOnRegression;
  options.traceFile = f.traceFile;
  ValidationOptions &validation = options.validation;
  validation.target = f.validate;
  validation.compilerAllocation = f.allocationMode == AllocationFlag::Compiler;
  validation.learningRate = f.learningRate;
  for (const std::string &item : f.inputData) {
    auto [name, file] = llvm::StringRef(item).split('=');
    validation.inputFiles[name] = file.str();
  }
  validation.dumpDir = f.dumpDir;
  validation.gpuArch = f.gpuArch;
  validation.cubin = f.gpuBinary == GpuBinary::Cubin;
  validation.deviceOrdinal = f.cudaDeviceOrdinal;
  return options;
}

/// --dim NAME=VALUE bindings.
static llvm::Error parseDimBindings(llvm::ArrayRef<std::string> bindings,
                                    llvm::StringMap<int64_t> &dims) {
  for (const std::string &binding : bindings) {
    auto [name, value] = llvm::StringRef(binding).split('=');
    int64_t v;
    if (name.empty() || value.getAsInteger(10, v) || v <= 0)
      return makeUsageError("--dim expects NAME=VALUE with a positive "
                            "VALUE, got '" +
                            binding + "'");
    dims[name] = v;
  }
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<ModelSource>>
vram::createModelSourceFromCommandLine(MLIRContext *context, ModelKind kind,
                                       llvm::StringRef inputFilename,
                                       std::unique_ptr<llvm::MemoryBuffer> file,
                                       llvm::ArrayRef<std::string> cxxFlags) {
  const VramOptFlags &f = *flags;
  std::optional<int64_t> batch;
  if (f.batch > 0)
    batch = f.batch;
  switch (kind) {
  case ModelKind::Zoo: {
    ZooSourceOptions options;
    options.name = f.zooName;
    options.batch = batch;
    if (f.imageSize > 0)
      options.imageSize = f.imageSize;
    if (f.seqLen > 0)
      options.seq = f.seqLen;
    if (f.promptLen > 0)
      options.seq = f.promptLen;
    if (f.packedTokens > 0) {
      options.batch = 1;
      options.seq = f.packedTokens;
      options.packed = true;
    }
    options.padded = f.padded;
    options.maxNewTokens = f.maxNewTokens;
    options.staticCache = f.cacheImplementation == CacheImplementation::Static;
    if (f.cacheImplementation == CacheImplementation::Paged)
      options.kvBlockSize = f.kvBlockSize;
    options.numBeams = f.numBeams;
    options.sampling = f.getSampling();
    if (f.numClasses > 0)
      options.numClasses = f.numClasses;
    options.target = {f.torchVersion, f.device};
    options.attention = f.attention;
    return createZooSource(context, std::move(options));
  }
  case ModelKind::HuggingFace: {
    HuggingFaceSourceOptions options;
    options.batch = batch;
    if (f.seqLen > 0)
      options.seq = f.seqLen;
    if (f.promptLen > 0)
      options.seq = f.promptLen;
    if (f.decoderSeqLen > 0)
      options.decoderSeq = f.decoderSeqLen;
    if (f.packedTokens > 0) {
      options.batch = 1;
      options.seq = f.packedTokens;
      options.packed = true;
    }
    options.padded = f.padded;
    options.maxNewTokens = f.maxNewTokens;
    options.staticCache = f.cacheImplementation == CacheImplementation::Static;
    if (f.cacheImplementation == CacheImplementation::Paged)
      options.kvBlockSize = f.kvBlockSize;
    options.numBeams = f.numBeams;
    options.sampling = f.getSampling();
    options.target = {f.torchVersion, f.device};
    options.attention = f.attention;
    llvm::Expected<std::unique_ptr<ModelSource>> source =
        createHuggingFaceSource(context, std::move(file), std::move(options));
    if (source && f.useCache.getNumOccurrences() && f.useCache &&
        !(*source)->hasTrainingCache())
      return makeUsageError("--use-cache=true: " + (*source)->getName() +
                            " is an encoder, with no cache to use");
    return source;
  }
  case ModelKind::Onnx: {
    OnnxSourceOptions options;
    options.batch = batch;
    if (f.seqLen > 0)
      options.seq = f.seqLen;
    if (llvm::Error error = parseDimBindings(f.dimBindings, options.dims))
      return std::move(error);
    options.bufferPatterns.assign(f.onnxBuffers.begin(), f.onnxBuffers.end());
    std::unique_ptr<ModelSource> source =
        createOnnxSource(context, std::move(file), std::move(options));
    if (!source)
      return makeUsageError("this vram-opt was built without the ONNX "
                            "importer");
    return std::move(source);
  }
  case ModelKind::TorchExport: {
    TorchExportSourceOptions options;
    options.batch = batch;
    if (f.seqLen > 0)
      options.seq = f.seqLen;
    if (llvm::Error error = parseDimBindings(f.dimBindings, options.dims))
      return std::move(error);
    options.target = {f.torchVersion, f.device};
    return createTorchExportSource(context, std::move(file),
                                   std::move(options));
  }
  case ModelKind::Cxx: {
    CxxModelOptions options;
    options.sourceFile = inputFilename.str();
    options.compileFlags.assign(cxxFlags.begin(), cxxFlags.end());
    options.compileCommands = f.cxxCompileCommands;
    options.moduleName = f.cxxModule;
    options.inputs.assign(f.cxxInputs.begin(), f.cxxInputs.end());
    options.constructorArgs.assign(f.cxxArgs.begin(), f.cxxArgs.end());
    options.batch = batch;
    options.training = f.mode == nn::StepMode::Train;
    return createCxxSource(context, std::move(options));
  }
  case ModelKind::ZooList:
  case ModelKind::Mlir:
    break;
  }
  llvm_unreachable("the driver parses .mlir input itself");
}
