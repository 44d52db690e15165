//===- Zoo.cpp - built-in model architectures -----------------------------===//
//
// The registry of zoo models: option defaults and validation, and the module
// around each model's `forward`. The models themselves are in the other files
// of this directory.
//
//===----------------------------------------------------------------------===//

#include "vram/Zoo/Zoo.h"
#include "vram/Zoo/CausalLM.h"

#include "Models.h"

#include "vram/Dialect/NN/NNDialect.h"
#include "vram/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/MathExtras.h"

#include <vector>

using namespace mlir;
using namespace vram::zoo;

namespace {

enum class Kind { Vision, Language };

using BuildFn = Value (*)(ModelBuilder &, Value, const ModelConfig &);

struct ModelEntry {
  ZooModelInfo info;
  Kind kind;
  BuildFn build;
  /// Vision: default image side, the smallest side whose feature maps do not
  /// vanish, and the multiple the side must be (patch size).
  int64_t defaultImage = 224, minImage = 1, imageMultiple = 1;
  int64_t defaultClasses = 1000;
  /// Language: default sequence length and the size of a learned position
  /// table, which bounds it (0: unbounded).
  int64_t defaultSeq = 0, maxSeq = 0;
  /// Language: the layout of a CausalLMConfig, whose attention --attention
  /// chooses; other models run theirs as their reference does.
  std::optional<DecoderLayout> layout;
  /// Language: the CausalLMConfig the model is an instance of.
  CausalLMConfig (*causalLM)() = nullptr;
};

ModelEntry vision(StringRef name, StringRef description, BuildFn build,
                  int64_t minImage = 1, int64_t imageMultiple = 1,
                  int64_t defaultImage = 224, int64_t defaultClasses = 1000) {
  ModelEntry e{{name, description}, Kind::Vision, build};
  e.defaultImage = defaultImage;
  e.defaultClasses = defaultClasses;
  e.minImage = minImage;
  e.imageMultiple = imageMultiple;
  return e;
}

ModelEntry language(StringRef name, StringRef description, BuildFn build,
                    int64_t defaultSeq, int64_t maxSeq,
                    std::optional<DecoderLayout> layout = std::nullopt,
                    CausalLMConfig (*causalLM)() = nullptr) {
  ModelEntry e{{name, description}, Kind::Language, build};
  e.defaultSeq = defaultSeq;
  e.maxSeq = maxSeq;
  e.layout = layout;
  e.causalLM = causalLM;
  return e;
}

const std::vector<ModelEntry> &registry() {
  static const std::vector<ModelEntry> models = {
      vision("resnet18", "torchvision ResNet-18 (BasicBlock [2,2,2,2])",
             buildResNet18),
      vision("resnet34", "torchvision ResNet-34 (BasicBlock [3,4,6,3])",
             buildResNet34),
      vision("resnet50", "torchvision ResNet-50 v1.5 (Bottleneck [3,4,6,3])",
             buildResNet50),
      vision("resnet101", "torchvision ResNet-101 v1.5 (Bottleneck [3,4,23,3])",
             buildResNet101),
      vision("resnet152", "torchvision ResNet-152 v1.5 (Bottleneck [3,8,36,3])",
             buildResNet152),
      // Five 2x2 max pools need a 32-pixel side.
      vision("vgg16", "torchvision VGG-16 without BatchNorm", buildVgg16, 32),
      vision("mobilenet_v2", "torchvision MobileNetV2 (width 1.0)",
             buildMobileNetV2),
      vision("vit_b_16", "torchvision ViT-B/16 (image side a multiple of 16)",
             buildVitB16, 16, 16),
      language("gpt2", "GPT-2 small, 124M (HuggingFace GPT2LMHeadModel)",
               buildGpt2, 1024, kGpt2Positions, DecoderLayout::Gpt2,
               getGpt2Config),
      language(
          "llama-7b", "LLaMA-7B (HuggingFace LlamaForCausalLM)",
          [](ModelBuilder &mb, Value ids, const ModelConfig &c) {
            return buildLlamaDecoder(mb, ids, getLlama7bConfig(), c);
          },
          2048, 0, DecoderLayout::Llama, getLlama7bConfig),
      language("gpt_mini",
               "4-layer GPT decoder of the reference measurements (7.4M)",
               buildGptMini, 128, kGptMiniPositions),
      // Two 2x2 max pools need a 4-pixel side.
      vision("tiny_cnn", "small CNN for tests (32x32 input, 10 classes)",
             buildTinyCnn, 4, 1, 32, 10),
      language("tiny_gpt", "2-layer GPT-2 for tests (d=64, vocab 256)",
               buildTinyGpt, 32, kTinyGptPositions),
  };
  return models;
}

llvm::Error error(const Twine &message) {
  return llvm::createStringError(message);
}

/// Whether `layout` models `attention` (a message saying why not).
llvm::Error checkAttention(StringRef name, std::optional<DecoderLayout> layout,
                           vram::nn::AttentionImplementation attention) {
  using Impl = vram::nn::AttentionImplementation;
  if (attention == Impl::Sdpa)
    return llvm::Error::success();
  if (!layout)
    return error(name + " runs its reference's attention: --attention does "
                        "not apply");
  return llvm::Error::success();
}

/// Whether `config` can be split over `ranks` tensor-parallel ranks as
/// torch's ColwiseParallel/RowwiseParallel plan splits a LLaMA decoder
/// layer (a message saying why not): every rank holds whole query and KV
/// heads and an equal share of the MLP.
llvm::Error checkTensorParallel(const CausalLMConfig *config, StringRef name,
                                int64_t ranks, bool lmHead) {
  if (ranks == 1)
    return llvm::Error::success();
  if (ranks < 1)
    return error("tensor-parallel ranks must be >= 1, got " + Twine(ranks));
  if (!config || (config->layout != DecoderLayout::Llama &&
                  config->layout != DecoderLayout::GptNeox))
    return error(
        "tensor parallelism is modelled for LLaMA-layout decoders "
        "(llama-7b, --hf llama, mistral, qwen2, qwen3, gemma, phi3) and "
        "GPT-NeoX (--hf gpt_neox), not for " +
        name);
  // transformers shards a mixture of experts by expert parallelism and
  // Phi-3's fused projections need a plan that splits q, k and v apart.
  if (config->numExperts)
    return error("tensor parallelism of a mixture of experts is not "
                 "modelled (" +
                 name + ")");
  // Phi-3's fused projections: only transformers' plan splits them (their
  // outputs gathered, every rank computing every head), by rows of the
  // fused weights and columns of o_proj's and down_proj's.
  if (config->fusedProjections) {
    if (!lmHead)
      return error("tensor parallelism of fused qkv_proj and gate_up_proj "
                   "projections (" +
                   name +
                   ") is modelled with transformers' plan only "
                   "(--tp-plan=transformers)");
    for (auto [value, key] :
         {std::pair<int64_t, StringRef>{config->numHeads * config->headDim,
                                        "num_attention_heads x head_dim"},
          {config->numKeyValueHeads * config->headDim,
           "num_key_value_heads x head_dim"},
          {config->intermediateSize, "intermediate_size"}})
      if (value % ranks)
        return error("tp=" + Twine(ranks) + " must divide " + key + " (" +
                     Twine(value) +
                     "): each rank holds an equal share of the projections");
  } else {
    for (auto [value, key] : {std::pair<int64_t, StringRef>{
                                  config->numHeads, "num_attention_heads"},
                              {config->numKeyValueHeads, "num_key_value_heads"},
                              {config->intermediateSize, "intermediate_size"}})
      if (value % ranks)
        return error("tp=" + Twine(ranks) + " must divide " + key + " (" +
                     Twine(value) + "): each rank holds an equal share of " +
                     (key == "intermediate_size" ? "the MLP" : "the heads"));
  }
  if (lmHead && config->vocabSize % ranks)
    return error("tp=" + Twine(ranks) + " must divide vocab_size (" +
                 Twine(config->vocabSize) +
                 "): each rank holds an equal share of lm_head's rows "
                 "(--tp-plan=layers keeps lm_head whole)");
  return llvm::Error::success();
}

/// Whether sequence parallelism (`c.sequenceParallel`) is modelled for
/// `config` as `c` builds it (a message saying why not).
llvm::Error checkSequenceParallel(const CausalLMConfig *config, StringRef name,
                                  const ModelConfig &c) {
  if (!c.sequenceParallel)
    return llvm::Error::success();
  if (c.tensorParallel < 2)
    return error("sequence parallelism shards the positions between "
                 "tensor-parallel regions: it needs tp >= 2");
  if (!config || config->layout != DecoderLayout::Llama ||
      config->fusedProjections || config->numExperts)
    return error("sequence parallelism is modelled for LLaMA-layout decoders "
                 "with separate q, k and v projections (llama-7b, --hf llama, "
                 "mistral, qwen2, qwen3, gemma), not for " +
                 name);
  if (!c.tensorParallelLmHead || c.tensorParallelEmbedding)
    return error("sequence parallelism is modelled with transformers' tp "
                 "plan (--tp-plan=transformers: lm_head column-parallel, the "
                 "embedding whole)");
  if (c.maxNewTokens)
    return error("sequence parallelism of generation (a decode step has one "
                 "position) is not modelled");
  if (c.seq % c.tensorParallel)
    return error("tp=" + Twine(c.tensorParallel) +
                 " must divide the sequence length (" + Twine(c.seq) +
                 "): each rank holds an equal share of the positions");
  return llvm::Error::success();
}

/// Whether Liger-Kernel's kernels can replace `config`'s modules as
/// apply_liger_kernel_to_llama (mistral, qwen2, qwen3) patches them in (a
/// message saying why not).
llvm::Error checkLiger(const CausalLMConfig *config, StringRef name,
                       const LigerKernels &liger) {
  if (!liger.any())
    return llvm::Error::success();
  if (!config || config->layout != DecoderLayout::Llama)
    return error("Liger-Kernel's RMSNorm, SwiGLU and RoPE are modelled for "
                 "LLaMA-layout decoders (llama-7b, --hf llama, mistral, "
                 "qwen2, qwen3), not for " +
                 name);
  // Gemma's norms (offset 1, float32 throughout), Phi-3's fused
  // projections and partial rotary, the experts' MLPs: Liger patches them
  // with other kernels.
  auto unmodelled = [&](StringRef what) {
    return error("Liger-Kernel's kernels for " + what + " (" + name +
                 ") are not modelled");
  };
  if (config->gemmaScaling || config->sandwichNorms)
    return unmodelled("Gemma's norms");
  if (config->fusedProjections || config->rotaryDim ||
      config->rotaryConcatenates)
    return unmodelled("Phi-3's fused projections and partial rotary");
  if (config->numExperts)
    return unmodelled("a mixture of experts");
  if (liger.swiglu && config->activation != GatedActivation::Silu)
    return error("LigerSwiGLUMLP runs silu: " + name +
                 "'s MLP activation is not silu");
  return llvm::Error::success();
}

/// Whether a generation program of `config`'s tokens can be built for
/// `layout` (a message saying why not): a KV cache is modelled for the
/// decoders built as transformers' (a DecoderLayout), and the tokens must fit
/// the learned positions.
llvm::Error checkGeneration(StringRef name, std::optional<DecoderLayout> layout,
                            int64_t maxPositions, const ModelConfig &config) {
  if (!config.maxNewTokens)
    return llvm::Error::success();
  if (config.maxNewTokens < 1)
    return error("max new tokens must be >= 1, got " +
                 Twine(config.maxNewTokens));
  if (layout == DecoderLayout::T5 && config.staticCache)
    return error("a StaticCache for an encoder-decoder (" + name +
                 "'s self- and cross-attention) is not modelled yet");
  if (layout == DecoderLayout::T5 && config.kvBlockSize)
    return error("a paged cache for an encoder-decoder (" + name +
                 "'s self- and cross-attention) is not modelled yet");
  if (config.numBeams > 1) {
    if (layout == DecoderLayout::T5)
      return error("beam search for an encoder-decoder (" + name +
                   ": the encoder's output and the cross-attention's cache "
                   "per beam) is not modelled yet");
    if (config.staticCache || config.kvBlockSize)
      return error("beam search is modelled with a DynamicCache "
                   "(--cache-implementation=dynamic)");
    if (config.padded)
      return error("beam search with --padded is not modelled yet");
    if (config.sampling.sample || config.sampling.repetitionPenalty != 1.0)
      return error("beam search is modelled without sampling or a "
                   "repetition penalty (generate(num_beams=N))");
  }
  // vLLM batches sequences unpadded, each its own blocks.
  if (config.kvBlockSize && config.padded)
    return error("a paged cache holds each sequence unpadded (vLLM batches "
                 "them so): --padded is for transformers' caches");
  if (layout == DecoderLayout::Bert || layout == DecoderLayout::Vit)
    return error(name + " is an encoder (" +
                 (layout == DecoderLayout::Vit
                      ? "an image classifier"
                      : "a masked LM or a sequence classifier") +
                 "): it does not generate");
  if (!layout)
    return error("generation with a KV cache is modelled for transformers' "
                 "decoders (the zoo's llama-7b and gpt2, --hf configs), not "
                 "for " +
                 name);
  // The positions the cache reaches; a count past 64 bits is no model.
  int64_t tokens;
  if (llvm::AddOverflow(config.seq, config.maxNewTokens - 1, tokens))
    return error("a prompt of " + Twine(config.seq) + " and " +
                 Twine(config.maxNewTokens) +
                 " new tokens overflow 64 bits of positions");
  // A paged cache's positions: whole blocks.
  if (config.kvBlockSize &&
      tokens > std::numeric_limits<int64_t>::max() - (config.kvBlockSize - 1))
    return error("a prompt of " + Twine(config.seq) + " and " +
                 Twine(config.maxNewTokens) + " new tokens in blocks of " +
                 Twine(config.kvBlockSize) +
                 " positions overflow 64 bits of positions");
  if (maxPositions && tokens > maxPositions)
    return error(name + " has " + Twine(maxPositions) +
                 " learned positions: a prompt of " + Twine(config.seq) +
                 " and " + Twine(config.maxNewTokens) + " new tokens read " +
                 Twine(tokens));
  return llvm::Error::success();
}

/// --tokens against the model, and --attention=sdpa-flash on CUDA where
/// transformers hands sdpa a mask.
llvm::Error checkAttentionMasks(const CausalLMConfig *config, StringRef name,
                                const ModelConfig &c) {
  bool decoder = config && (config->layout == DecoderLayout::Llama ||
                            config->layout == DecoderLayout::Gpt2);
  bool encoder = config && config->layout == DecoderLayout::Bert;
  if (c.padded && !decoder && !encoder)
    return error("--padded (rows with an attention_mask) is modelled for "
                 "transformers' decoders (llama-7b, gpt2, --hf llama-layout "
                 "and gpt2 configs) and encoders (bert, roberta, "
                 "distilbert), not for " +
                 name);
  if (c.packed) {
    if (!decoder)
      return error("--tokens (one packed row) is modelled for transformers' "
                   "decoders that read the sequences' boundaries off "
                   "position_ids (llama-7b, gpt2, --hf llama-layout and gpt2 "
                   "configs), not for " +
                   name);
    if (c.batch != 1)
      return error("--tokens is one packed row: the batch is 1, got " +
                   Twine(c.batch));
  }
  if (!config || c.attention != vram::nn::AttentionImplementation::SdpaFlash ||
      c.target.device != vram::nn::Device::Cuda)
    return llvm::Error::success();
  for (int64_t i = 0; i < config->numLayers; ++i)
    if (passesAttentionMask(*config, c, config->isSlidingLayer(i)))
      return error(
          name + ": transformers hands sdpa a mask here (" +
          (c.padded ? Twine("the padding")
           : c.packed && !c.useCache
               ? Twine("the packed sequences' boundaries")
               : "a sliding window of " + Twine(*config->slidingWindow) +
                     " tokens, which the sequence reaches") +
          "), which CUDA's flash kernel does not take: --attention="
          "sdpa-flash would raise (sdpa picks the memory-efficient kernel)");
  return llvm::Error::success();
}

/// Applies defaults and checks `options` against `model`.
llvm::Expected<ModelConfig> resolve(const ModelEntry &model,
                                    const ZooOptions &options) {
  StringRef name = model.info.name;
  ModelConfig c{options.batch, 0, 0, 0, options.target, options.attention};
  if (llvm::Error e = checkAttention(name, model.layout, options.attention))
    return std::move(e);
  if (c.batch < 1)
    return error("batch size must be >= 1, got " + Twine(c.batch));

  if (model.kind == Kind::Language) {
    if (options.imageSize)
      return error(name + " is a language model: it takes no image size");
    if (options.numClasses)
      return error(name + " is a language model: it takes no number of "
                          "classes");
    c.seq = options.seq.value_or(model.defaultSeq);
    if (c.seq < 1)
      return error("sequence length must be >= 1, got " + Twine(c.seq));
    c.maxNewTokens = options.maxNewTokens;
    c.staticCache = options.staticCache;
    c.kvBlockSize = options.kvBlockSize;
    c.numBeams = options.numBeams;
    c.padded = options.padded;
    c.sampling = options.sampling;
    if (llvm::Error e = checkGeneration(name, model.layout, model.maxSeq, c))
      return std::move(e);
    std::optional<CausalLMConfig> causalLM;
    if (model.causalLM)
      causalLM = model.causalLM();
    c.tensorParallel = options.tensorParallel;
    c.tensorParallelLmHead = options.tensorParallelLmHead;
    c.tensorParallelEmbedding = options.tensorParallelEmbedding;
    c.sequenceParallel = options.sequenceParallel;
    if (llvm::Error e =
            checkTensorParallel(causalLM ? &*causalLM : nullptr, name,
                                c.tensorParallel, c.tensorParallelLmHead))
      return std::move(e);
    if (llvm::Error e =
            checkSequenceParallel(causalLM ? &*causalLM : nullptr, name, c))
      return std::move(e);
    c.packed = options.packed;
    if (llvm::Error e =
            checkAttentionMasks(causalLM ? &*causalLM : nullptr, name, c))
      return std::move(e);
    c.liger = options.liger;
    if (llvm::Error e =
            checkLiger(causalLM ? &*causalLM : nullptr, name, c.liger))
      return std::move(e);
    if (model.maxSeq && c.seq > model.maxSeq)
      return error(name + " has " + Twine(model.maxSeq) +
                   " learned positions: sequence length " + Twine(c.seq) +
                   " is too long");
    return c;
  }

  if (options.packed)
    return error(name + " is a vision model: --tokens packs token sequences");
  if (llvm::Error e = checkLiger(nullptr, name, options.liger))
    return std::move(e);
  if (options.seq)
    return error(name + " is a vision model: it takes no sequence length");
  if (options.maxNewTokens)
    return error(name + " is a vision model: it generates no tokens");
  if (options.tensorParallel != 1)
    return error("tensor parallelism is modelled for LLaMA-layout decoders, "
                 "not for " +
                 name);
  c.imageSize = options.imageSize.value_or(model.defaultImage);
  c.numClasses = options.numClasses.value_or(model.defaultClasses);
  if (c.imageSize < model.minImage)
    return error(name + " needs an image size >= " + Twine(model.minImage) +
                 ", got " + Twine(c.imageSize));
  if (c.imageSize % model.imageMultiple)
    return error(name + " needs an image size that is a multiple of " +
                 Twine(model.imageMultiple) + ", got " + Twine(c.imageSize));
  if (c.numClasses < 1)
    return error("number of classes must be >= 1, got " + Twine(c.numClasses));
  return c;
}

} // namespace

using ForwardBuilder =
    llvm::function_ref<Value(ModelBuilder &, Value, const ModelConfig &)>;
static OwningOpRef<ModuleOp> buildForwardModule(MLIRContext *context,
                                                StringRef name, Location loc,
                                                const ModelConfig &config,
                                                bool language,
                                                ForwardBuilder build);

llvm::ArrayRef<ZooModelInfo> vram::zoo::listModels() {
  static const std::vector<ZooModelInfo> infos = [] {
    std::vector<ZooModelInfo> result;
    for (const ModelEntry &model : registry())
      result.push_back(model.info);
    return result;
  }();
  return infos;
}

llvm::Expected<OwningOpRef<ModuleOp>>
vram::zoo::buildModel(MLIRContext *context, StringRef name,
                      const ZooOptions &options) {
  const auto &models = registry();
  auto model = llvm::find_if(
      models, [&](const ModelEntry &m) { return m.info.name == name; });
  if (model == models.end()) {
    std::string names;
    for (const ModelEntry &m : models)
      names += (names.empty() ? "" : ", ") + m.info.name.str();
    return error("unknown zoo model '" + name + "' (available: " + names + ")");
  }

  llvm::Expected<ModelConfig> config = resolve(*model, options);
  if (!config)
    return config.takeError();

  Location loc = NameLoc::get(StringAttr::get(context, "zoo:" + name));
  return buildForwardModule(context, name, loc, *config,
                            model->kind == Kind::Language, model->build);
}

/// A tensor of `type` whose values nothing reads (beam search's int64 and
/// int32 bookkeeping, its float32 scores): a splat of zeros.
static Value zeroTensor(ModelBuilder &mb, ArrayRef<int64_t> shape, Type type) {
  OpBuilder &b = mb.getBuilder();
  Attribute zero = isa<FloatType>(type) ? Attribute(b.getFloatAttr(type, 0))
                                        : b.getIntegerAttr(type, 0);
  return vram::nn::ConstantOp::create(
      b, mb.loc("generate"),
      DenseElementsAttr::get(RankedTensorType::get(shape, type), zero));
}

/// _beam_search's state, made before the prefill and kept to the end:
/// running_sequences and its clone `sequences` [B, beams, prompt + new
/// tokens] int64, running_beam_indices and `beam_indices` [B, beams, new
/// tokens] int32, the running and finished beam scores [B, beams] float32.
static SmallVector<Value> beamSearchState(ModelBuilder &mb, int64_t batch,
                                          int64_t beams, int64_t prompt,
                                          int64_t newTokens) {
  OpBuilder &b = mb.getBuilder();
  SmallVector<Value> state;
  for (int copy = 0; copy < 2; ++copy) {
    state.push_back(
        zeroTensor(mb, {batch, beams, prompt + newTokens}, b.getI64Type()));
    state.push_back(zeroTensor(mb, {batch, beams, newTokens}, b.getI32Type()));
    state.push_back(zeroTensor(mb, {batch, beams}, b.getF32Type()));
  }
  return state;
}

/// The end of a beam search step after the model's logits were copied
/// (`choice`'s scores): `log_probs = log_softmax(logits)` (the previous
/// step's `log_probs` freed as it is rebound), `del model_outputs` (the
/// model's logits), `log_probs + running_beam_scores[:, :, None]` over
/// [B, beams, V] (the log_softmax freed as log_probs is rebound again),
/// the top 2 x beams of its [B, beams x V] view and the continuations
/// gathered from them (topk_running_sequences [B, 2 x beams, prompt + new
/// tokens] int64 and topk_running_beam_indices [B, 2 x beams, new tokens]
/// int32, which the loop's variables keep until the next step's replace
/// them: `continuations`, in and out), then reorder_cache: each layer's
/// keys and values index_selected by beam. Returns the step's log_probs,
/// which live until the next step's log_softmax. (The gathers' int64
/// remainders and the merged [B, 3 x beams, ...] candidates, freed within
/// the step, are not modelled.)
static Value beamSearchStep(ModelBuilder &mb, vram::nn::NextTokenOp choice,
                            Value previousLogProbs, KvCache &cache,
                            int64_t batch, int64_t beams, int64_t length,
                            int64_t newTokens,
                            SmallVectorImpl<Value> &continuations) {
  OpBuilder &b = mb.getBuilder();
  Location loc = mb.loc("generate");
  Value scores = choice.getScores();
  int64_t vocab = ModelBuilder::shapeOf(scores).back();
  Value logProbs =
      vram::nn::LogSoftmaxOp::create(b, loc, scores, -1, TypeAttr());
  SmallVector<Value> held{choice.getLogits()};
  if (previousLogProbs)
    held.push_back(previousLogProbs);
  mb.keepAlive(held, "generate");
  Value runningScores = zeroTensor(mb, {batch, beams, 1}, b.getF32Type());
  Value accumulated =
      mb.add(mb.reshape(logProbs, "generate", {batch, beams, vocab}),
             runningScores, "generate");
  mb.topk(mb.reshape(accumulated, "generate", {batch, beams * vocab}),
          "generate", 2 * beams);
  SmallVector<Value> made{
      zeroTensor(mb, {batch, 2 * beams, length}, b.getI64Type()),
      zeroTensor(mb, {batch, 2 * beams, newTokens}, b.getI32Type())};
  if (!continuations.empty())
    mb.keepAlive(continuations, "generate");
  continuations.assign(made.begin(), made.end());
  // (An encoder-decoder's cross-attention cache is not reordered here:
  // checkGeneration rejects beams for one.)
  for (size_t i = 0; i < cache.keys.size(); ++i) {
    cache.keys[i] = mb.kvCacheReorder(cache.keys[i], "generate");
    cache.values[i] = mb.kvCacheReorder(cache.values[i], "generate");
  }
  return accumulated;
}

/// GenerationMixin.generate's greedy search or sampling with a DynamicCache (or
/// a StaticCache, whose buffers span every position from the prefill on, or
/// vLLM's paged cache, whose blocks do), as one program: the prefill forward
/// over the prompt `ids`, the first token's choice, the decode steps but the
/// last as nn.kv_cache_past (the cache grown to prompt + new tokens - 2),
/// and the last decode step's forward over one token. Returns what outlives
/// the program: the last tokens, the last step's scores (sampling: and its
/// warped scores and probabilities), and the cache. The previous step's are
/// alive until the last step's choice replaces them (its nn.next_token's
/// `previous`).
///
/// generate() also keeps the sequences so far (input_ids, grown by a
/// torch.cat of each token) and, given one, the attention_mask (grown by a
/// column of ones): through the last decode step both are [B, prompt + new
/// tokens - 1] int64, new since the call (measured with transformers 5.25:
/// benchmarks/accuracy/generate.py; without padding generate() makes no
/// attention_mask). An encoder-decoder's sequences are the decoder's: its
/// start token and the new tokens.
///
/// Beam search (_beam_search, `numBeams` > 1) runs the forwards on batch x
/// beams rows (_expand_inputs_for_generation repeats the ids), keeps its
/// state (beamSearchState) and ends each step with beamSearchStep; its
/// sequences so far are the copy `running_sequences[:, :, :cur_len]`
/// flattened, [batch x beams, prompt + new tokens - 1] through the last
/// step.
static SmallVector<Value> buildGenerationProgram(ModelBuilder &mb, Value ids,
                                                 const ModelConfig &config,
                                                 ForwardBuilder build) {
  KvCache cache;
  // The positions the prefill caches: the prompt's, or an
  // encoder-decoder's start token (the decoder's first input).
  int64_t prompt = config.encoderDecoder ? 1 : ModelBuilder::shapeOf(ids)[1];
  cache.totalTokens = prompt + config.maxNewTokens - 1;
  cache.isStatic = config.staticCache;
  cache.blockSize = config.kvBlockSize;
  ModelConfig step = config;
  step.kvCache = &cache;
  int64_t batch = ModelBuilder::shapeOf(ids)[0];
  int64_t beams = config.numBeams;
  Value input = ids;
  SmallVector<Value> beamState;
  if (beams > 1) {
    beamState = beamSearchState(mb, batch, beams, prompt, config.maxNewTokens);
    step.batch = batch * beams;
    input = mb.int64Tensor({batch * beams, prompt}, "generate");
  }
  // _sample's variables keep each step's scores (and, sampling, the warped
  // scores and the probabilities) until the next step replaces them.
  // A repetition penalty reads the sequences so far: the prompt (an
  // encoder-decoder's start token), then one more a token.
  vram::nn::NextTokenOp first =
      mb.nextToken(build(mb, input, step), "generate", ValueRange(),
                   config.sampling, prompt);
  Value logProbs;
  SmallVector<Value> continuations;
  int64_t length = prompt + config.maxNewTokens;
  if (beams > 1)
    logProbs = beamSearchStep(mb, first, Value(), cache, batch, beams, length,
                              config.maxNewTokens, continuations);
  auto kept = [](vram::nn::NextTokenOp op) {
    SmallVector<Value> values{op.getScores()};
    llvm::append_range(values, op.getHeld());
    return values;
  };
  SmallVector<Value> results{first.getTokens()};
  llvm::append_range(results, kept(first));
  if (config.maxNewTokens > 1) {
    cache.position = cache.totalTokens - 1;
    // A static cache's buffers already span every position.
    // A sliding-window layer holds the storage of its last update: at most
    // the window (the last window - 1 positions and one new).
    if (cache.position > prompt && !cache.isBuffered())
      for (size_t i = 0; i < cache.keys.size(); ++i) {
        std::optional<int64_t> window = cache.windows[i];
        int64_t tokens =
            window ? std::min(cache.position, *window) : cache.position;
        cache.keys[i] =
            mb.kvCachePast(cache.keys[i], tokens, "generate", window);
        cache.values[i] =
            mb.kvCachePast(cache.values[i], tokens, "generate", window);
      }
    SmallVector<Value> sequences{
        mb.int64Tensor({batch * beams, cache.totalTokens}, "generate")};
    if (config.padded)
      sequences.push_back(
          mb.int64Tensor({batch, cache.totalTokens}, "generate"));
    vram::nn::NextTokenOp last =
        mb.nextToken(build(mb, first.getTokens(), step), "generate",
                     kept(first), config.sampling, cache.totalTokens);
    if (beams > 1)
      logProbs = beamSearchStep(mb, last, logProbs, cache, batch, beams, length,
                                config.maxNewTokens, continuations);
    mb.keepAlive(sequences, "generate");
    results = {last.getTokens()};
    llvm::append_range(results, kept(last));
  }
  if (logProbs)
    results.push_back(logProbs);
  llvm::append_range(results, continuations);
  llvm::append_range(results, beamState);
  for (KvCache *part : {&cache, cache.cross.get()})
    if (part)
      for (auto [k, v] : llvm::zip(part->keys, part->values))
        results.append({k, v});
  results.append(cache.counters.begin(), cache.counters.end());
  return results;
}

/// The module around `forward`: its input ([B, 3, S, S] images or [B, T]
/// token ids), the body `build` makes (with `config.maxNewTokens`, the
/// generation program around it), the module's and forward's facts.
static OwningOpRef<ModuleOp> buildForwardModule(MLIRContext *context,
                                                StringRef name, Location loc,
                                                const ModelConfig &config,
                                                bool language,
                                                ForwardBuilder build) {
  context->getOrLoadDialect<vram::nn::NNDialect>();
  context->getOrLoadDialect<func::FuncDialect>();
  OpBuilder b(context);

  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  (*module)->setAttr(vram::nn::NNDialect::kModelAttrName,
                     b.getStringAttr(name));

  Type inputType =
      language
          ? Type(RankedTensorType::get({config.batch, config.seq},
                                       b.getI64Type()))
          : Type(RankedTensorType::get({config.batch, config.channels,
                                        config.imageSize, config.imageSize},
                                       b.getF32Type()));
  b.setInsertionPointToEnd(module->getBody());
  auto forward =
      func::FuncOp::create(b, loc, "forward", b.getFunctionType(inputType, {}));
  Block *entry = forward.addEntryBlock();
  forward.getArgument(0).setLoc(NameLoc::get(b.getStringAttr("input")));

  b.setInsertionPointToStart(entry);
  ModelBuilder mb(b);
  SmallVector<Value> outputs;
  if (config.maxNewTokens) {
    outputs = buildGenerationProgram(mb, forward.getArgument(0), config, build);
  } else if (config.useCache) {
    // The model's output holds the cache, which the training step drops
    // with it (HF's Trainer keeps only the loss): the copies then live as
    // attention's saved tensors.
    KvCache cache;
    cache.generation = false;
    cache.totalTokens = config.seq;
    ModelConfig step = config;
    step.kvCache = &cache;
    outputs.push_back(build(mb, forward.getArgument(0), step));
  } else {
    outputs.push_back(build(mb, forward.getArgument(0), config));
  }
  func::ReturnOp::create(b, outputs.front().getLoc(), outputs);
  forward.setFunctionType(
      b.getFunctionType(inputType, ValueRange(outputs).getTypes()));
  // PyTorch's implicit copies of strided views, as for every front end.
  vram::insertContiguousCopies(forward);
  forward->setAttr(vram::nn::NNDialect::kBatchAttrName,
                   b.getI64IntegerAttr(config.batch));
  // Language models return per-token logits; training flattens them.
  if (language && !config.maxNewTokens)
    forward->setAttr(vram::nn::NNDialect::kSequenceLogitsAttrName,
                     b.getUnitAttr());
  if (config.maxNewTokens)
    forward->setAttr(vram::nn::NNDialect::kMaxNewTokensAttrName,
                     b.getI64IntegerAttr(config.maxNewTokens));
  if (config.maxNewTokens && config.numBeams > 1)
    forward->setAttr(vram::nn::NNDialect::kNumBeamsAttrName,
                     b.getI64IntegerAttr(config.numBeams));
  if (config.packed)
    forward->setAttr(vram::nn::NNDialect::kPackedTokensAttrName,
                     b.getI64IntegerAttr(config.seq));
  if (config.padded)
    forward->setAttr(vram::nn::NNDialect::kPaddedAttrName, b.getUnitAttr());
  if (config.tensorParallel > 1)
    forward->setAttr(vram::nn::NNDialect::kTensorParallelAttrName,
                     b.getI64IntegerAttr(config.tensorParallel));
  return module;
}

vram::nn::AttentionBackend
vram::zoo::getAttentionBackend(const CausalLMConfig &config,
                               const ModelConfig &model, bool masked) {
  using Impl = vram::nn::AttentionImplementation;
  switch (model.attention) {
  case Impl::SdpaFlash:
    return vram::nn::AttentionBackend::Flash;
  case Impl::SdpaEfficient:
    return vram::nn::AttentionBackend::Efficient;
  case Impl::SdpaMath:
    return vram::nn::AttentionBackend::Math;
  case Impl::Sdpa:
  case Impl::Eager:
    break;
  }
  bool cpu = model.target.device == vram::nn::Device::Cpu;
  if (config.attentionDropout > 0 && cpu)
    return vram::nn::AttentionBackend::Math;
  if (masked && !cpu)
    return vram::nn::AttentionBackend::Efficient;
  return vram::nn::AttentionBackend::Flash;
}

bool vram::zoo::passesAttentionMask(const CausalLMConfig &config,
                                    const ModelConfig &model, bool sliding) {
  if (model.attention == vram::nn::AttentionImplementation::Eager ||
      config.eagerAttentionOnly)
    return false;
  // Padding in the 2-D attention_mask keeps create_causal_mask from leaving
  // the mask to is_causal, in training and in each generation forward (a
  // decode step's too: its keys include the padded positions).
  if (model.padded)
    return true;
  // Unpadded, generation's forwards leave it to is_causal, but for a
  // StaticCache's decode steps (a compileable cache with one query: the
  // keys past the written positions are masked out) and a sliding layer
  // whose keys reach its window.
  if (model.kvCache && model.kvCache->generation) {
    if (sliding && config.slidingWindow &&
        model.kvCache->keyLength(model.kvCache->isDecoding() ? 1 : model.seq,
                                 config.slidingWindow) >= *config.slidingWindow)
      return true;
    // (A paged cache's kernels read the written positions: no mask.)
    return model.kvCache->isStatic && model.kvCache->isDecoding();
  }
  if (model.packed && !model.useCache)
    return true;
  return sliding && config.slidingWindow && model.seq >= *config.slidingWindow;
}

llvm::Error vram::zoo::verifyCausalLMConfig(const CausalLMConfig &c) {
  auto positive = [](int64_t value, StringRef key) -> llvm::Error {
    if (value < 1)
      return error(key + " must be >= 1, got " + Twine(value));
    return llvm::Error::success();
  };
  // A ViT reads images: no vocabulary, the image's sizes instead.
  bool vision = c.layout == DecoderLayout::Vit;
  for (auto [value, key] :
       {std::pair<int64_t, StringRef>{vision ? c.imageSize : c.vocabSize,
                                      vision ? "image_size" : "vocab_size"},
        {vision ? c.patchSize : 1, "patch_size"},
        {vision ? c.numChannels : 1, "num_channels"},
        {c.hiddenSize, "hidden_size"},
        {c.numLayers, "num_hidden_layers"},
        {c.numHeads, "num_attention_heads"},
        {c.numKeyValueHeads, "num_key_value_heads"},
        {c.headDim, "head_dim"},
        {c.intermediateSize, "intermediate_size"}})
    if (llvm::Error e = positive(value, key))
      return e;
  // Published models have at most a few hundred layers; the bound keeps a
  // mistyped config from building millions of ops.
  constexpr int64_t kMaxLayers = 1024;
  if (c.layout == DecoderLayout::T5) {
    if (c.numDecoderLayers < 1 || c.numDecoderLayers > kMaxLayers)
      return error("num_decoder_layers must be in [1, " + Twine(kMaxLayers) +
                   "], got " + Twine(c.numDecoderLayers));
    if (llvm::Error e = positive(c.relativeAttentionBuckets,
                                 "relative_attention_num_buckets"))
      return e;
  }
  if (c.numLayers > kMaxLayers)
    return error("num_hidden_layers must be at most " + Twine(kMaxLayers) +
                 ", got " + Twine(c.numLayers));
  if (c.numHeads % c.numKeyValueHeads)
    return error("num_key_value_heads (" + Twine(c.numKeyValueHeads) +
                 ") must divide num_attention_heads (" + Twine(c.numHeads) +
                 ")");
  if (c.layout == DecoderLayout::Llama && c.headDim % 2)
    return error("head_dim must be even for rotary embeddings, got " +
                 Twine(c.headDim));
  if (c.rotaryDim &&
      (c.rotaryDim < 2 || c.rotaryDim % 2 || c.rotaryDim > c.headDim))
    return error("partial_rotary_factor: the rotated width of a head (" +
                 Twine(c.rotaryDim) + ") must be even and in [2, head_dim = " +
                 Twine(c.headDim) + "]");
  for (auto [p, key] :
       {std::pair<double, StringRef>{c.residualDropout, "resid_pdrop"}})
    if (!(p >= 0 && p < 1))
      return error(key + " must be in [0, 1), got " + Twine(std::to_string(p)));
  if (vision) {
    if (c.patchSize > c.imageSize)
      return error("patch_size (" + Twine(c.patchSize) +
                   ") must be at most image_size (" + Twine(c.imageSize) + ")");
    // Published ViTs read at most a few thousand pixels a side; the bound
    // keeps the patch count and the position table far from overflowing.
    constexpr int64_t kMaxImageSize = 1 << 16;
    if (c.imageSize > kMaxImageSize || c.numChannels > kMaxImageSize)
      return error(
          Twine(c.imageSize > kMaxImageSize ? "image_size" : "num_channels") +
          " must be at most " + Twine(kMaxImageSize));
  }
  if (c.layout == DecoderLayout::Gpt2 || c.layout == DecoderLayout::Opt ||
      c.layout == DecoderLayout::Bert || vision) {
    if (c.hiddenSize % c.numHeads)
      return error("num_attention_heads (" + Twine(c.numHeads) +
                   ") must divide hidden_size (" + Twine(c.hiddenSize) + ")");
    if (c.numKeyValueHeads != c.numHeads)
      return error("GPT-2, OPT, BERT and ViT have no grouped KV heads");
    if (llvm::Error e =
            vision ? llvm::Error::success()
                   : positive(c.maxPositions, c.layout == DecoderLayout::Gpt2
                                                  ? "n_positions"
                                                  : "max_position_embeddings"))
      return e;
  }
  if (c.layout == DecoderLayout::Bert && c.encoder != EncoderFlavor::DistilBert)
    if (llvm::Error e = positive(c.typeVocabSize, "type_vocab_size"))
      return e;
  if (c.numExperts) {
    if (llvm::Error e = positive(c.numExperts, "num_experts"))
      return e;
    if (c.layout != DecoderLayout::Llama)
      return error("num_experts: only LLaMA-layout decoders have experts");
    if (llvm::Error e = positive(c.numExpertsPerToken, "num_experts_per_tok"))
      return e;
    if (llvm::Error e =
            positive(c.expertIntermediateSize, "moe_intermediate_size"))
      return e;
    if (c.numExpertsPerToken > c.numExperts)
      return error("num_experts_per_tok (" + Twine(c.numExpertsPerToken) +
                   ") must be at most the number of experts (" +
                   Twine(c.numExperts) + ")");
    if (!c.denseLayers.empty() && (int64_t)c.denseLayers.size() != c.numLayers)
      return error("mlp_only_layers: one entry per layer expected");
    if (c.sharedExpertIntermediateSize < 0)
      return error("shared_expert_intermediate_size must be >= 1, got " +
                   Twine(c.sharedExpertIntermediateSize));
  }
  for (auto [p, key] : {std::pair<double, StringRef>{c.dropout, "dropout"},
                        {c.attentionDropout, "attention_dropout"}})
    if (!(p >= 0 && p < 1))
      return error(key + " must be in [0, 1), got " + Twine(std::to_string(p)));
  return llvm::Error::success();
}

/// The module's location: the config file, else `zoo:<name>`.
static Location configLocation(MLIRContext *context, StringRef name,
                               StringRef sourcePath) {
  if (sourcePath.empty())
    return NameLoc::get(StringAttr::get(context, "zoo:" + name));
  return FileLineColLoc::get(context, sourcePath, 1, 1);
}

/// A ViT config's classifier over [batch, channels, side, side] images.
static llvm::Expected<OwningOpRef<ModuleOp>>
buildVisionTransformer(MLIRContext *context, const CausalLMConfig &config,
                       const ZooOptions &options, StringRef sourcePath) {
  // The position embeddings are sized for the config's image; another size
  // needs interpolate_pos_encoding, which is not modelled.
  if (options.imageSize && *options.imageSize != config.imageSize)
    return error(config.name + "'s position embeddings are sized for " +
                 Twine(config.imageSize) + "x" + Twine(config.imageSize) +
                 " images (image_size): --image-size " +
                 Twine(*options.imageSize) +
                 " needs interpolate_pos_encoding, which is not modelled");
  if (options.numClasses && *options.numClasses != config.numLabels)
    return error(config.name + "'s classifier has " + Twine(config.numLabels) +
                 " labels (id2label, num_labels): --num-classes does not "
                 "change them");
  if (options.packed)
    return error(config.name +
                 " is a vision model: --tokens packs token sequences");
  if (llvm::Error e = checkLiger(nullptr, config.name, options.liger))
    return std::move(e);
  if (options.seq)
    return error(config.name + " is a vision model: it takes no sequence "
                               "length");
  ModelConfig c{options.batch,    config.imageSize, 0,
                config.numLabels, options.target,   options.attention};
  c.channels = config.numChannels;
  c.maxNewTokens = options.maxNewTokens;
  c.staticCache = options.staticCache;
  c.kvBlockSize = options.kvBlockSize;
  c.numBeams = options.numBeams;
  if (llvm::Error e =
          checkGeneration(config.name, config.layout, /*maxPositions=*/0, c))
    return std::move(e);
  if (llvm::Error e =
          checkTensorParallel(&config, config.name, options.tensorParallel,
                              options.tensorParallelLmHead))
    return std::move(e);
  if (c.batch < 1)
    return error("batch size must be >= 1, got " + Twine(c.batch));
  llvm::Expected<OwningOpRef<ModuleOp>> module = buildForwardModule(
      context, config.name, configLocation(context, config.name, sourcePath), c,
      /*language=*/false,
      [&](ModelBuilder &mb, Value pixels, const ModelConfig &model) {
        return buildHfVit(mb, pixels, config, model);
      });
  if (module)
    if (auto forward = (**module).lookupSymbol<func::FuncOp>("forward"))
      forward->setAttr(vram::nn::NNDialect::kSequenceClassifierAttrName,
                       UnitAttr::get(context));
  return module;
}

llvm::Expected<OwningOpRef<ModuleOp>>
vram::zoo::buildCausalLM(MLIRContext *context, const CausalLMConfig &config,
                         const ZooOptions &options, int64_t defaultSeq,
                         StringRef sourcePath) {
  if (llvm::Error e = verifyCausalLMConfig(config))
    return std::move(e);
  if (config.layout == DecoderLayout::Vit)
    return buildVisionTransformer(context, config, options, sourcePath);
  if (options.imageSize)
    return error(config.name + " is a language model: it takes no image size");
  if (options.numClasses)
    return error(config.name +
                 " is a language model: it takes no number of classes");
  ModelConfig c{
      options.batch,    0, options.seq.value_or(defaultSeq), 0, options.target,
      options.attention};
  c.maxNewTokens = options.maxNewTokens;
  c.staticCache = options.staticCache;
  c.kvBlockSize = options.kvBlockSize;
  c.numBeams = options.numBeams;
  c.padded = options.padded;
  c.sampling = options.sampling;
  c.useCache = options.useCache && config.useCache;
  if (llvm::Error e =
          checkAttention(config.name, config.layout, options.attention))
    return std::move(e);
  c.tensorParallel = options.tensorParallel;
  c.tensorParallelLmHead = options.tensorParallelLmHead;
  c.tensorParallelEmbedding = options.tensorParallelEmbedding;
  c.sequenceParallel = options.sequenceParallel;
  if (llvm::Error e = checkTensorParallel(
          &config, config.name, c.tensorParallel, c.tensorParallelLmHead))
    return std::move(e);
  if (llvm::Error e = checkSequenceParallel(&config, config.name, c))
    return std::move(e);
  if (c.batch < 1)
    return error("batch size must be >= 1, got " + Twine(c.batch));
  if (c.seq < 1)
    return error("sequence length must be >= 1, got " + Twine(c.seq));
  if (options.decoderSeq && config.layout != DecoderLayout::T5)
    return error("--decoder-seq applies to encoder-decoder models (t5), "
                 "not to " +
                 config.name);
  if (options.decoderSeq && options.maxNewTokens)
    return error("--decoder-seq is the labels' length in training; "
                 "generation's decoder reads the tokens it makes");
  c.decoderSeq = options.decoderSeq.value_or(c.seq);
  c.encoderDecoder = config.layout == DecoderLayout::T5;
  if (c.decoderSeq < 1)
    return error("decoder sequence length must be >= 1, got " +
                 Twine(c.decoderSeq));
  if (config.maxPositions && c.seq > config.maxPositions)
    return error(config.name + " has " + Twine(config.maxPositions) +
                 " learned positions: sequence length " + Twine(c.seq) +
                 " is too long");
  Location loc = configLocation(context, config.name, sourcePath);
  if (llvm::Error e =
          checkGeneration(config.name, config.layout, config.maxPositions, c))
    return std::move(e);
  c.packed = options.packed;
  if (llvm::Error e = checkAttentionMasks(&config, config.name, c))
    return std::move(e);
  c.liger = options.liger;
  if (llvm::Error e = checkLiger(&config, config.name, c.liger))
    return std::move(e);
  // A StaticCache's sliding layers (StaticSlidingWindowLayer) and a paged
  // cache's (vLLM frees the blocks that leave the window) are not modelled
  // past the window.
  if (c.maxNewTokens && (c.staticCache || c.kvBlockSize) &&
      config.slidingWindow &&
      c.seq + c.maxNewTokens - 1 > *config.slidingWindow)
    return error(
        config.name + " attends within a sliding window of " +
        Twine(*config.slidingWindow) + " tokens, whose " +
        (c.staticCache
             ? "StaticCache layer (StaticSlidingWindowLayer)"
             : "paged cache (its blocks freed as they leave the window)") +
        " is not modelled: prompt + new tokens - 1 must be at most "
        "that");
  llvm::Expected<OwningOpRef<ModuleOp>> module = buildForwardModule(
      context, config.name, loc, c, /*language=*/true,
      [&](ModelBuilder &mb, Value ids, const ModelConfig &model) {
        switch (config.layout) {
        case DecoderLayout::Llama:
          return buildLlamaDecoder(mb, ids, config, model);
        case DecoderLayout::Gpt2:
          return buildGpt2Decoder(mb, ids, config, model);
        case DecoderLayout::Opt:
          return buildOptDecoder(mb, ids, config, model);
        case DecoderLayout::GptNeox:
          return buildGptNeoxDecoder(mb, ids, config, model);
        case DecoderLayout::Bert:
          return buildBertEncoder(mb, ids, config, model);
        case DecoderLayout::T5:
          return buildT5(mb, ids, config, model);
        case DecoderLayout::Vit:
          break;
        }
        llvm_unreachable("unknown decoder layout");
      });
  // A masked LM's and a token classifier's logits are per token, their loss
  // their own; a sequence classifier's logits are per sequence.
  if (module && config.layout == DecoderLayout::Bert)
    if (auto forward = (**module).lookupSymbol<func::FuncOp>("forward")) {
      if (config.tokenClassifier) {
        forward->setAttr(vram::nn::NNDialect::kTokenClassifierAttrName,
                         UnitAttr::get(context));
      } else if (config.numLabels) {
        forward->removeAttr(vram::nn::NNDialect::kSequenceLogitsAttrName);
        forward->setAttr(vram::nn::NNDialect::kSequenceClassifierAttrName,
                         UnitAttr::get(context));
      } else
        forward->setAttr(vram::nn::NNDialect::kMaskedLmAttrName,
                         UnitAttr::get(context));
    }
  if (module && config.layout == DecoderLayout::T5)
    if (auto forward = (**module).lookupSymbol<func::FuncOp>("forward"))
      forward->setAttr(vram::nn::NNDialect::kSeq2SeqLmAttrName,
                       UnitAttr::get(context));
  return module;
}
