//===- Zoo.h - built-in model architectures ---------------------*- C++ -*-===//
//
// `vram-opt --zoo=NAME` builds the forward model of a named architecture as
// nn IR, layer by layer, with PyTorch parameter names and per-layer locations.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_ZOO_ZOO_H
#define VRAM_ZOO_ZOO_H

#include "vram/Dialect/NN/NNInterfaces.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>

namespace vram::zoo {

/// Liger-Kernel's kernels patched into a LLaMA-layout decoder in place of
/// transformers' modules (apply_liger_kernel_to_<model>): LigerRMSNorm,
/// LigerSwiGLUMLP's product, liger_rotary_pos_emb. The fused linear
/// cross-entropy is the step's loss (--loss), not the model's.
struct LigerKernels {
  bool rmsNorm = false;
  bool swiglu = false;
  bool rope = false;
  /// LigerRMSNorm's backward sums the weight's gradient from one float32
  /// row per program: the device's SMs on CUDA, 1 on the CPU.
  int64_t rmsNormPartialRows = 1;

  bool any() const { return rmsNorm || swiglu || rope; }
};

/// --do-sample: generate(do_sample=True) and the logits warpers it runs
/// (transformers' GenerationConfig defaults: temperature 1.0, top_k 50,
/// top_p 1.0, no min_p); greedy search without. The repetition penalty
/// (1.0: none) applies to both.
struct Sampling {
  bool sample = false;
  double temperature = 1.0;
  /// 0: no top-k warper.
  int64_t topK = 50;
  double topP = 1.0;
  std::optional<double> minP;
  double repetitionPenalty = 1.0;
};

/// Shape options; an unset value takes the model's default.
struct ZooOptions {
  int64_t batch = 1;
  std::optional<int64_t> imageSize; ///< vision models (default 224)
  std::optional<int64_t> seq;       ///< language models (default: model's)
  /// Encoder-decoder models (T5): the decoder's tokens, the labels' length
  /// (default: seq).
  std::optional<int64_t> decoderSeq;
  std::optional<int64_t> numClasses; ///< classifier heads (default 1000)
  /// The PyTorch modelled: kernels that depend on it (attention) follow it.
  vram::nn::TorchTarget target;
  /// How the language models' attention runs (gpt2, llama-7b and models
  /// from a config; the others have theirs fixed).
  vram::nn::AttentionImplementation attention =
      vram::nn::AttentionImplementation::Sdpa;
  /// --mode=generate: the tokens generated after a `seq`-token prompt; the
  /// module then holds the model's generation program (0: its forward).
  int64_t maxNewTokens = 0;
  /// --cache-implementation=static: generation with transformers'
  /// StaticCache instead of its DynamicCache.
  bool staticCache = false;
  /// --cache-implementation=paged: generation with a paged cache in blocks
  /// of this many positions, as vLLM allocates it (0: none).
  int64_t kvBlockSize = 0;
  /// --num-beams: generation by beam search with this many beams (1: none).
  int64_t numBeams = 1;
  /// --parallel=tp=N: build one rank's model of N tensor-parallel ranks
  /// (LLaMA-layout language models; 1: the whole model).
  int64_t tensorParallel = 1;
  /// With tensorParallel > 1: transformers' tp plan, lm_head column-parallel
  /// over the vocabulary with its logits all-gathered (false: the decoder
  /// layers' plan alone, lm_head whole; ModelConfig::tensorParallelLmHead).
  bool tensorParallelLmHead = true;
  /// With tensorParallel > 1: the token embedding row-parallel over the
  /// vocabulary, its rows' partial sums all-reduced (torchtitan's and
  /// Megatron-LM's layout; ModelConfig::tensorParallelEmbedding).
  bool tensorParallelEmbedding = false;
  /// With tensorParallel > 1: sequence parallelism between the
  /// tensor-parallel regions (ModelConfig::sequenceParallel).
  bool sequenceParallel = false;
  /// A training forward with transformers' use_cache on: decoders built
  /// from a Hugging Face config (buildCausalLM; not when the config says
  /// use_cache false) copy each layer's keys and values into a DynamicCache.
  /// The zoo's gpt2 and llama-7b follow older transformers releases, whose
  /// training forward made no copies: they ignore it.
  bool useCache = false;
  /// --tokens: the batch is one row of `seq` tokens packing several
  /// sequences (DataCollatorWithFlattening, TRL's padding_free), their
  /// position_ids restarting at each: transformers masks attention between
  /// them when the forward has no cache. `batch` must be 1.
  bool packed = false;
  /// --padded: the rows are padded to `seq`, and the forward takes their
  /// attention_mask (model(input_ids, attention_mask=...)): transformers
  /// then masks attention whatever the cache.
  bool padded = false;
  /// --liger: Liger-Kernel's kernels in the decoder's layers.
  LigerKernels liger;
  /// --mode=generate: greedy search, or sampling with these warpers.
  Sampling sampling;
};

struct ZooModelInfo {
  llvm::StringRef name;
  llvm::StringRef description;
};

/// All built-in models, in listing order.
llvm::ArrayRef<ZooModelInfo> listModels();

/// Builds `name` as a module holding `func.func @forward`. The module carries
/// the attribute `vram.model = "<name>"`. Returns an llvm::Error with a
/// one-line message for an unknown name or invalid options.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
buildModel(mlir::MLIRContext *context, llvm::StringRef name,
           const ZooOptions &options);

} // namespace vram::zoo

#endif // VRAM_ZOO_ZOO_H
