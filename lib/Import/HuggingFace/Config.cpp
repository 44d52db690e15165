//===- Config.cpp - a transformers config.json to a CausalLMConfig --------===//
//
// One reader per family, registered in a table by `model_type`. Each reads
// the keys its transformers configuration class defines, with that class's
// defaults for keys a config.json may leave out; a key the family needs and
// the class gives no default for is an error naming it. JSON null means
// "unset" as it does in transformers (e.g. GPT-2's n_inner).
//
//===----------------------------------------------------------------------===//

#include "vram/Import/HuggingFace.h"
#include "vram/Support/Json.h"
#include "vram/Support/ParseLimits.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

using namespace mlir;
using namespace vram;
using zoo::CausalLMConfig;
using zoo::DecoderLayout;
using zoo::EncoderFlavor;
using zoo::GatedActivation;

namespace {

/// The config's keys, read with their locations in the file.
class ConfigReader {
public:
  ConfigReader(llvm::MemoryBufferRef buffer, MLIRContext *context)
      : text(buffer.getBuffer()), path(buffer.getBufferIdentifier()),
        context(context) {}

  /// Parses the text; false after a diagnostic.
  bool parse();

  /// Where `key` is written in the file (its first occurrence), else the
  /// file's first line.
  Location locate(llvm::StringRef key) const;
  InFlightDiagnostic error(llvm::StringRef key) const {
    return emitError(locate(key));
  }

  bool has(llvm::StringRef key) const {
    const llvm::json::Value *value = root->get(key);
    return value && value->kind() != llvm::json::Value::Null;
  }
  /// Whether `key` is written as null (a feature switched off).
  bool isNull(llvm::StringRef key) const {
    const llvm::json::Value *value = root->get(key);
    return value && value->kind() == llvm::json::Value::Null;
  }

  /// A required integer; the family's default when `fallback` is given.
  FailureOr<int64_t> getInt(llvm::StringRef key,
                            std::optional<int64_t> fallback = std::nullopt);
  /// A layer count (getInt), at most kMaxLayers: readers make per-layer
  /// tables (layer types, sliding windows) before anything is built.
  FailureOr<int64_t>
  getLayerCount(llvm::StringRef key,
                std::optional<int64_t> fallback = std::nullopt);
  FailureOr<double> getNumber(llvm::StringRef key, double fallback);
  FailureOr<bool> getBool(llvm::StringRef key, bool fallback);
  FailureOr<std::string> getString(llvm::StringRef key,
                                   std::optional<std::string> fallback);
  /// The first entry of a list of strings (`architectures`), if any.
  FailureOr<std::optional<std::string>> getFirstString(llvm::StringRef key);
  /// A list of strings, if the key is there.
  FailureOr<std::optional<std::vector<std::string>>>
  getStringList(llvm::StringRef key);
  /// A list of integers (none if the key is absent or null).
  FailureOr<std::vector<int64_t>> getIntList(llvm::StringRef key);
  /// The number of entries of an object (id2label); 0 if the key is absent
  /// or null.
  FailureOr<int64_t> getObjectSize(llvm::StringRef key);

private:
  llvm::StringRef text, path;
  MLIRContext *context;
  std::optional<llvm::json::Value> document;
  const llvm::json::Object *root = nullptr;
};

bool ConfigReader::parse() {
  // llvm::json's parser recurses once per nesting level.
  if (std::optional<size_t> at =
          findExcessiveNesting(text, kMaxMlirNestingDepth)) {
    llvm::StringRef before = text.take_front(*at);
    size_t lineStart = before.rfind('\n');
    emitError(FileLineColLoc::get(
        context, path, 1 + before.count('\n'),
        *at - (lineStart == llvm::StringRef::npos ? 0 : lineStart + 1) + 1))
        << "JSON nested deeper than " << kMaxMlirNestingDepth << " levels";
    return false;
  }
  llvm::Expected<llvm::json::Value> value = llvm::json::parse(text);
  if (!value) {
    // llvm::json::ParseError keeps its position only in its message:
    // "[line:column, byte=offset]: what".
    std::string message = llvm::toString(value.takeError());
    unsigned line = 1, column = 1;
    llvm::StringRef rest = message;
    if (rest.consume_front("[")) {
      auto [position, what] = rest.split("]: ");
      auto [lineText, columnText] = position.split(':');
      columnText = columnText.split(',').first;
      if (!lineText.getAsInteger(10, line) &&
          !columnText.getAsInteger(10, column))
        message = what.str();
    }
    emitError(FileLineColLoc::get(context, path, line, column))
        << "malformed JSON: " << message;
    return false;
  }
  document = std::move(*value);
  root = document->getAsObject();
  if (!root) {
    emitError(FileLineColLoc::get(context, path, 1, 1))
        << "a Hugging Face config is a JSON object";
    return false;
  }
  return true;
}

Location ConfigReader::locate(llvm::StringRef key) const {
  std::string quoted = ("\"" + key + "\"").str();
  size_t at = text.find(quoted);
  if (at == llvm::StringRef::npos)
    return FileLineColLoc::get(context, path, 1, 1);
  llvm::StringRef before = text.take_front(at);
  unsigned line = 1 + before.count('\n');
  size_t lineStart = before.rfind('\n');
  unsigned column =
      at - (lineStart == llvm::StringRef::npos ? 0 : lineStart + 1) + 1;
  return FileLineColLoc::get(context, path, line, column);
}

FailureOr<int64_t> ConfigReader::getInt(llvm::StringRef key,
                                        std::optional<int64_t> fallback) {
  if (!has(key)) {
    if (fallback)
      return *fallback;
    error(key) << "config lacks \"" << key << "\"";
    return failure();
  }
  std::optional<int64_t> value = getJsonInteger(*root->get(key));
  if (!value) {
    error(key) << "\"" << key << "\" must be an integer";
    return failure();
  }
  // Every integer a config holds is a size or a count; the bound keeps the
  // readers' arithmetic (4 * n_embd, ...) in range, and tensors that still
  // overflow are the memory analysis's located error.
  if (*value < 0 || *value > INT32_MAX) {
    error(key) << "\"" << key << "\" must be between 0 and " << INT32_MAX
               << ", got " << *value;
    return failure();
  }
  return *value;
}

/// Published decoders have at most a few hundred layers (Llama 3.1 405B:
/// 126); a count past this is a malformed config, not a model.
static constexpr int64_t kMaxLayers = 1024;

FailureOr<int64_t>
ConfigReader::getLayerCount(llvm::StringRef key,
                            std::optional<int64_t> fallback) {
  FailureOr<int64_t> layers = getInt(key, fallback);
  if (succeeded(layers) && *layers > kMaxLayers) {
    error(key) << "\"" << key << "\" must be at most " << kMaxLayers << ", got "
               << *layers;
    return failure();
  }
  return layers;
}

FailureOr<double> ConfigReader::getNumber(llvm::StringRef key,
                                          double fallback) {
  if (!has(key))
    return fallback;
  std::optional<double> value = root->get(key)->getAsNumber();
  if (!value) {
    error(key) << "\"" << key << "\" must be a number";
    return failure();
  }
  return *value;
}

FailureOr<bool> ConfigReader::getBool(llvm::StringRef key, bool fallback) {
  if (!has(key))
    return fallback;
  std::optional<bool> value = root->get(key)->getAsBoolean();
  if (!value) {
    error(key) << "\"" << key << "\" must be true or false";
    return failure();
  }
  return *value;
}

FailureOr<std::string>
ConfigReader::getString(llvm::StringRef key,
                        std::optional<std::string> fallback) {
  if (!has(key)) {
    if (fallback)
      return *fallback;
    error(key) << "config lacks \"" << key << "\"";
    return failure();
  }
  std::optional<llvm::StringRef> value = root->get(key)->getAsString();
  if (!value) {
    error(key) << "\"" << key << "\" must be a string";
    return failure();
  }
  return value->str();
}

FailureOr<std::optional<std::string>>
ConfigReader::getFirstString(llvm::StringRef key) {
  if (!has(key))
    return std::optional<std::string>();
  const llvm::json::Array *list = root->get(key)->getAsArray();
  if (!list) {
    error(key) << "\"" << key << "\" must be a list of strings";
    return failure();
  }
  if (list->empty())
    return std::optional<std::string>();
  std::optional<llvm::StringRef> first = list->front().getAsString();
  if (!first) {
    error(key) << "\"" << key << "\" must be a list of strings";
    return failure();
  }
  return std::optional<std::string>(first->str());
}

FailureOr<std::optional<std::vector<std::string>>>
ConfigReader::getStringList(llvm::StringRef key) {
  using Result = std::optional<std::vector<std::string>>;
  if (!has(key))
    return Result();
  const llvm::json::Array *list = root->get(key)->getAsArray();
  std::vector<std::string> strings;
  for (const llvm::json::Value &entry : list ? *list : llvm::json::Array()) {
    std::optional<llvm::StringRef> s = entry.getAsString();
    if (!s)
      break;
    strings.push_back(s->str());
  }
  if (!list || strings.size() != list->size()) {
    error(key) << "\"" << key << "\" must be a list of strings";
    return failure();
  }
  return Result(std::move(strings));
}

FailureOr<std::vector<int64_t>> ConfigReader::getIntList(llvm::StringRef key) {
  if (!has(key))
    return std::vector<int64_t>();
  const llvm::json::Array *list = root->get(key)->getAsArray();
  std::vector<int64_t> values;
  for (const llvm::json::Value &entry : list ? *list : llvm::json::Array()) {
    std::optional<int64_t> value = getJsonInteger(entry);
    if (!value || *value < 0 || *value > INT32_MAX)
      break;
    values.push_back(*value);
  }
  if (!list || values.size() != list->size()) {
    error(key) << "\"" << key << "\" must be a list of non-negative integers";
    return failure();
  }
  return values;
}

FailureOr<int64_t> ConfigReader::getObjectSize(llvm::StringRef key) {
  if (!has(key))
    return 0;
  const llvm::json::Object *object = root->get(key)->getAsObject();
  if (!object) {
    error(key) << "\"" << key << "\" must be an object";
    return failure();
  }
  return static_cast<int64_t>(object->size());
}

//===----------------------------------------------------------------------===//
// Families
//===----------------------------------------------------------------------===//

/// Reads the keys of one family into `c` (whose name is the model_type).
using FamilyReader = LogicalResult (*)(ConfigReader &, CausalLMConfig &);

#define READ(var, expr)                                                        \
  auto var##OrFailure = (expr);                                                \
  if (failed(var##OrFailure))                                                  \
    return failure();                                                          \
  auto var = *var##OrFailure;

/// The keys every LLaMA-layout config has (LlamaConfig and the classes
/// derived from its layout), with the family's defaults for those a file may
/// leave out.
struct LlamaDefaults {
  std::optional<int64_t> headDim; ///< unset: hidden_size / heads
  bool tieWordEmbeddings = false;
  double normEps = 1e-6;
  llvm::StringRef activationKey = "hidden_act";
  llvm::StringRef activation = "silu";
};

LogicalResult readLlamaLayout(ConfigReader &r, CausalLMConfig &c,
                              const LlamaDefaults &d) {
  c.layout = DecoderLayout::Llama;
  READ(vocab, r.getInt("vocab_size"));
  READ(hidden, r.getInt("hidden_size"));
  READ(intermediate, r.getInt("intermediate_size"));
  READ(layers, r.getLayerCount("num_hidden_layers"));
  READ(heads, r.getInt("num_attention_heads"));
  READ(kvHeads, r.getInt("num_key_value_heads", heads));
  if (heads < 1) {
    r.error("num_attention_heads") << "num_attention_heads must be >= 1";
    return failure();
  }
  READ(headDim, r.getInt("head_dim", d.headDim.value_or(hidden / heads)));
  if (!r.has("head_dim") && !d.headDim && hidden % heads) {
    r.error("num_attention_heads")
        << "num_attention_heads (" << heads << ") must divide hidden_size ("
        << hidden << ") when the config has no head_dim";
    return failure();
  }
  READ(eps, r.getNumber("rms_norm_eps", d.normEps));
  READ(attentionDropout, r.getNumber("attention_dropout", 0.0));
  READ(tie, r.getBool("tie_word_embeddings", d.tieWordEmbeddings));
  READ(useCache, r.getBool("use_cache", true));
  READ(act, r.getString(d.activationKey, d.activation.str()));
  if (act == "silu" || act == "swish") {
    c.activation = GatedActivation::Silu;
  } else if (act == "gelu_pytorch_tanh") {
    c.activation = GatedActivation::GeluTanh;
  } else {
    r.error(d.activationKey)
        << "unsupported \"" << d.activationKey << "\": \"" << act
        << "\" (supported: silu, gelu_pytorch_tanh)";
    return failure();
  }
  c.vocabSize = vocab;
  c.hiddenSize = hidden;
  c.intermediateSize = intermediate;
  c.numLayers = layers;
  c.numHeads = heads;
  c.numKeyValueHeads = kvHeads;
  c.headDim = headDim;
  c.normEps = eps;
  c.tieWordEmbeddings = tie;
  c.useCache = useCache;
  c.attentionDropout = attentionDropout;
  return success();
}

/// LlamaConfig: attention_bias (q/k/v/o), mlp_bias.
LogicalResult readLlama(ConfigReader &r, CausalLMConfig &c) {
  if (failed(readLlamaLayout(r, c, LlamaDefaults())))
    return failure();
  READ(attentionBias, r.getBool("attention_bias", false));
  READ(mlpBias, r.getBool("mlp_bias", false));
  c.qkvBias = c.outputBias = attentionBias;
  c.mlpBias = mlpBias;
  return success();
}

/// sliding_window (null: none), as Mistral's and Phi-3's configs have it.
LogicalResult readSlidingWindow(ConfigReader &r, CausalLMConfig &c) {
  if (r.has("sliding_window")) {
    READ(window, r.getInt("sliding_window"));
    c.slidingWindow = window;
  }
  return success();
}

/// MistralConfig: no biases; sliding_window.
LogicalResult readMistral(ConfigReader &r, CausalLMConfig &c) {
  if (failed(readLlamaLayout(r, c, LlamaDefaults())))
    return failure();
  return readSlidingWindow(r, c);
}

/// Which of a Qwen config's layers slide when use_sliding_window is set
/// (the layer_types its configuration class derives).
enum class QwenSlidingLayers {
  FromMaxWindowLayers, ///< Qwen2, Qwen3: i >= max_window_layers
  OddBelowMaxWindow,   ///< Qwen2-MoE: (i + 1) % 2 and i < max_window_layers
  All,                 ///< Qwen3-MoE: every layer
};

/// Qwen's sliding_window applies only with use_sliding_window.
LogicalResult readQwenSlidingWindow(ConfigReader &r, CausalLMConfig &c,
                                    QwenSlidingLayers layers) {
  READ(useWindow, r.getBool("use_sliding_window", false));
  if (!useWindow)
    return success();
  READ(window, r.getInt("sliding_window"));
  c.slidingWindow = window;
  if (layers == QwenSlidingLayers::All)
    return success();
  READ(maxWindowLayers, r.getInt("max_window_layers", 28));
  for (int64_t i = 0; i < c.numLayers; ++i)
    c.slidingWindowLayers.push_back(
        layers == QwenSlidingLayers::FromMaxWindowLayers
            ? i >= maxWindowLayers
            : (i + 1) % 2 && i < maxWindowLayers);
  return success();
}

/// Qwen2Config: q/k/v biases, o_proj without; a sliding window only with
/// use_sliding_window.
LogicalResult readQwen2(ConfigReader &r, CausalLMConfig &c) {
  if (failed(readLlamaLayout(r, c, LlamaDefaults())))
    return failure();
  c.qkvBias = true;
  return readQwenSlidingWindow(r, c, QwenSlidingLayers::FromMaxWindowLayers);
}

/// Qwen3Config: head_dim 128 by default, q_norm/k_norm, attention_bias.
LogicalResult readQwen3(ConfigReader &r, CausalLMConfig &c) {
  LlamaDefaults d;
  d.headDim = 128;
  if (failed(readLlamaLayout(r, c, d)))
    return failure();
  READ(attentionBias, r.getBool("attention_bias", false));
  c.qkvBias = c.outputBias = attentionBias;
  c.qkNorm = true;
  return readQwenSlidingWindow(r, c, QwenSlidingLayers::FromMaxWindowLayers);
}

/// GemmaConfig: head_dim 256, tied embeddings, GELU (tanh) MLP named by
/// hidden_activation, sqrt(hidden) embedding scale, (1 + weight) norms.
LogicalResult readGemma(ConfigReader &r, CausalLMConfig &c) {
  LlamaDefaults d;
  d.headDim = 256;
  d.tieWordEmbeddings = true;
  d.activationKey = "hidden_activation";
  d.activation = "gelu_pytorch_tanh";
  if (failed(readLlamaLayout(r, c, d)))
    return failure();
  READ(attentionBias, r.getBool("attention_bias", false));
  c.qkvBias = c.outputBias = attentionBias;
  c.gemmaScaling = true;
  return success();
}

/// `layer_types` ("sliding_attention" or "full_attention", one per layer)
/// as whether each layer is sliding; none when the config has no list.
static FailureOr<std::optional<std::vector<bool>>>
readSlidingLayerTypes(ConfigReader &r, int64_t numLayers) {
  FailureOr<std::optional<std::vector<std::string>>> types =
      r.getStringList("layer_types");
  if (failed(types))
    return failure();
  if (!*types)
    return std::optional<std::vector<bool>>();
  if ((int64_t)(*types)->size() != numLayers) {
    r.error("layer_types") << "layer_types lists " << (*types)->size()
                           << " layers, the model has " << numLayers;
    return failure();
  }
  std::vector<bool> sliding;
  for (const std::string &type : **types) {
    if (type != "sliding_attention" && type != "full_attention") {
      r.error("layer_types")
          << "unsupported layer type \"" << type
          << "\" (supported: sliding_attention, full_attention)";
      return failure();
    }
    sliding.push_back(type == "sliding_attention");
  }
  return std::optional<std::vector<bool>>(std::move(sliding));
}

/// Gemma2Config: Gemma's layout with sandwich norms, soft-capped attention
/// scores and logits (null: none), the scores scaled by
/// query_pre_attn_scalar ** -0.5, eager attention (transformers has no sdpa
/// path for it); a sliding window on alternate layers (layer_types, by
/// default "sliding_attention" on the even ones).
LogicalResult readGemma2(ConfigReader &r, CausalLMConfig &c) {
  if (failed(readGemma(r, c)))
    return failure();
  c.sandwichNorms = true;
  c.eagerAttentionOnly = true;
  auto optionalNumber = [&](llvm::StringRef key, double fallback,
                            std::optional<double> &out) -> LogicalResult {
    if (r.isNull(key))
      return success();
    FailureOr<double> v = r.getNumber(key, fallback);
    if (failed(v))
      return failure();
    if (!(*v > 0)) {
      r.error(key) << key << " must be positive, got " << *v;
      return failure();
    }
    out = *v;
    return success();
  };
  std::optional<double> scalar;
  if (failed(
          optionalNumber("attn_logit_softcapping", 50.0, c.attentionSoftcap)) ||
      failed(optionalNumber("final_logit_softcapping", 30.0,
                            c.finalLogitSoftcap)) ||
      failed(optionalNumber("query_pre_attn_scalar", 256.0, scalar)))
    return failure();
  if (scalar)
    c.attentionScaling = 1.0 / std::sqrt(*scalar);
  if (!r.isNull("sliding_window")) {
    READ(window, r.getInt("sliding_window", 4096));
    c.slidingWindow = window;
  }
  FailureOr<std::optional<std::vector<bool>>> sliding =
      readSlidingLayerTypes(r, c.numLayers);
  if (failed(sliding))
    return failure();
  c.slidingWindowLayers.clear();
  for (int64_t i = 0; i < c.numLayers; ++i)
    c.slidingWindowLayers.push_back(*sliding ? (**sliding)[i] : i % 2 == 0);
  return success();
}

/// Gemma3TextConfig: Gemma's layout with qwen3's q/k norms and Gemma 2's
/// sandwich norms and scaling, soft-capping off unless set, sdpa; layer
/// types from `layer_types` or every `sliding_window_pattern`-th layer full
/// (6), each type with its own rotary tables.
LogicalResult readGemma3Text(ConfigReader &r, CausalLMConfig &c) {
  if (failed(readGemma2(r, c)))
    return failure();
  c.eagerAttentionOnly = false;
  c.qkNorm = true;
  if (!r.has("attn_logit_softcapping"))
    c.attentionSoftcap.reset();
  if (!r.has("final_logit_softcapping"))
    c.finalLogitSoftcap.reset();
  // Gemma 3's layer types select rotary tables too: slidingAttentionLayers
  // (Gemma 2's alternation does not apply).
  c.slidingWindowLayers.clear();
  FailureOr<std::optional<std::vector<bool>>> sliding =
      readSlidingLayerTypes(r, c.numLayers);
  if (failed(sliding))
    return failure();
  c.slidingAttentionLayers.clear();
  if (*sliding) {
    c.slidingAttentionLayers = **sliding;
  } else {
    READ(pattern, r.getInt("sliding_window_pattern", 6));
    if (pattern < 1) {
      r.error("sliding_window_pattern")
          << "sliding_window_pattern must be >= 1";
      return failure();
    }
    for (int64_t i = 0; i < c.numLayers; ++i)
      c.slidingAttentionLayers.push_back((i + 1) % pattern != 0);
  }
  return success();
}

/// The router keys the mixture-of-experts families share: the experts and
/// how many a token meets; the auxiliary load-balancing loss
/// (output_router_logits) and Mixtral's router jitter are not modelled.
LogicalResult readExperts(ConfigReader &r, CausalLMConfig &c,
                          llvm::StringRef expertsKey, int64_t defaultExperts,
                          int64_t defaultPerToken) {
  READ(experts, r.getInt(expertsKey, defaultExperts));
  READ(perToken, r.getInt("num_experts_per_tok", defaultPerToken));
  if (experts < 1) {
    r.error(expertsKey) << expertsKey << " must be >= 1";
    return failure();
  }
  if (perToken < 1 || perToken > experts) {
    r.error("num_experts_per_tok")
        << "num_experts_per_tok (" << perToken << ") must be in [1, "
        << expertsKey << " = " << experts << "]";
    return failure();
  }
  READ(routerLogits, r.getBool("output_router_logits", false));
  if (routerLogits) {
    r.error("output_router_logits")
        << "output_router_logits (the auxiliary load-balancing loss, which "
           "keeps every layer's router logits) is not modelled";
    return failure();
  }
  READ(jitter, r.getNumber("router_jitter_noise", 0.0));
  if (jitter != 0) {
    r.error("router_jitter_noise")
        << "router_jitter_noise (multiplicative noise on the experts' input "
           "in training) is not modelled";
    return failure();
  }
  c.numExperts = experts;
  c.numExpertsPerToken = perToken;
  return success();
}

/// MixtralConfig: Mistral's layout with every MLP a mixture of
/// num_local_experts SwiGLU experts of intermediate_size, two per token,
/// their probabilities renormalized; sliding_window (null: none).
LogicalResult readMixtral(ConfigReader &r, CausalLMConfig &c) {
  if (failed(readMistral(r, c)) ||
      failed(readExperts(r, c, "num_local_experts", 8, 2)))
    return failure();
  c.expertIntermediateSize = c.intermediateSize;
  c.normalizeTopKProbabilities = true;
  c.routerWeightsInFloat32 = true;
  return success();
}

/// The activation `key` names, of which exact GELU ("gelu") is the only
/// one the non-gated layouts model.
LogicalResult requireGelu(ConfigReader &r, llvm::StringRef key,
                          llvm::StringRef act) {
  if (act == "gelu")
    return success();
  r.error(key) << "unsupported \"" << key << "\": \"" << act
               << "\" (supported: gelu)";
  return failure();
}

/// The sizes of a layout whose K and V have as many heads as q (GPT-2, OPT,
/// GPT-NeoX, the BERT encoders, ViT): `heads` must divide `hidden` (an
/// error at `headsKey`, naming `hiddenKey`); sets the sizes on `c`.
LogicalResult setMultiHeadSizes(ConfigReader &r, CausalLMConfig &c,
                                llvm::StringRef headsKey,
                                llvm::StringRef hiddenKey, int64_t vocab,
                                int64_t hidden, int64_t layers, int64_t heads,
                                int64_t inner) {
  if (heads < 1 || hidden % heads) {
    r.error(headsKey) << headsKey << " (" << heads << ") must divide "
                      << hiddenKey << " (" << hidden << ")";
    return failure();
  }
  c.vocabSize = vocab;
  c.hiddenSize = hidden;
  c.numLayers = layers;
  c.numHeads = c.numKeyValueHeads = heads;
  c.headDim = hidden / heads;
  c.intermediateSize = inner;
  return success();
}

/// Phi3Config (Phi-3, Phi-3.5-mini; Phi-4-mini's partial rotary): fused
/// qkv_proj and gate_up_proj, rms_norm_eps 1e-5, resid_pdrop before each
/// residual add, partial_rotary_factor, sliding_window (null: none).
/// rope_scaling ("longrope") changes the tables' values only.
LogicalResult readPhi3(ConfigReader &r, CausalLMConfig &c) {
  LlamaDefaults d;
  d.normEps = 1e-5;
  if (failed(readLlamaLayout(r, c, d)) || failed(readSlidingWindow(r, c)))
    return failure();
  READ(residDropout, r.getNumber("resid_pdrop", 0.0));
  READ(factor, r.getNumber("partial_rotary_factor", 1.0));
  if (!(factor > 0 && factor <= 1)) {
    r.error("partial_rotary_factor")
        << "partial_rotary_factor must be in (0, 1]";
    return failure();
  }
  c.fusedProjections = true;
  c.rotaryConcatenates = true;
  c.rotaryDim = static_cast<int64_t>(c.headDim * factor);
  c.residualDropout = residDropout;
  return success();
}

/// GPTNeoXConfig (Pythia, GPT-NeoX): hidden_size / heads per head,
/// rotary_pct (or partial_rotary_factor) of each head rotated,
/// use_parallel_residual, attention_bias, hidden_dropout after the
/// embeddings, the attention and the MLP; GELU (exact) MLP.
LogicalResult readGptNeox(ConfigReader &r, CausalLMConfig &c) {
  c.layout = DecoderLayout::GptNeox;
  READ(vocab, r.getInt("vocab_size", 50432));
  READ(hidden, r.getInt("hidden_size", 6144));
  READ(layers, r.getLayerCount("num_hidden_layers", 44));
  READ(heads, r.getInt("num_attention_heads", 64));
  READ(inner, r.getInt("intermediate_size", 24576));
  READ(eps, r.getNumber("layer_norm_eps", 1e-5));
  READ(hiddenDropout, r.getNumber("hidden_dropout", 0.0));
  READ(attentionDropout, r.getNumber("attention_dropout", 0.0));
  READ(tie, r.getBool("tie_word_embeddings", false));
  READ(parallel, r.getBool("use_parallel_residual", true));
  READ(bias, r.getBool("attention_bias", true));
  READ(useCache, r.getBool("use_cache", true));
  llvm::StringRef factorKey =
      r.has("partial_rotary_factor") ? "partial_rotary_factor" : "rotary_pct";
  READ(factor, r.getNumber(factorKey, 0.25));
  READ(act, r.getString("hidden_act", std::string("gelu")));
  if (failed(requireGelu(r, "hidden_act", act)))
    return failure();
  if (failed(setMultiHeadSizes(r, c, "num_attention_heads", "hidden_size",
                               vocab, hidden, layers, heads, inner)))
    return failure();
  if (!(factor > 0 && factor <= 1)) {
    r.error(factorKey) << factorKey << " must be in (0, 1]";
    return failure();
  }
  c.normEps = eps;
  c.dropout = hiddenDropout;
  c.attentionDropout = attentionDropout;
  c.tieWordEmbeddings = tie;
  c.parallelResidual = parallel;
  c.qkvBias = c.outputBias = bias;
  c.useCache = useCache;
  c.rotaryDim = static_cast<int64_t>(c.headDim * factor);
  c.rotaryConcatenates = true;
  return success();
}

/// BertConfig with the masked-LM head (BertForMaskedLM): post-LN encoder
/// layers with biased q/k/v, exact GELU, hidden_dropout_prob after the
/// embeddings, the attention output and the MLP, learned absolute
/// positions and token types, the head's decoder tied to the word
/// embeddings. is_decoder (a causal BertLMHeadModel) and relative
/// positions are not modelled.
LogicalResult readBert(ConfigReader &r, CausalLMConfig &c) {
  c.layout = DecoderLayout::Bert;
  // RobertaConfig's defaults are BertConfig's; its checkpoints set
  // max_position_embeddings 514, type_vocab_size 1, layer_norm_eps 1e-5
  // and pad_token_id 1.
  READ(vocab, r.getInt("vocab_size", 30522));
  READ(hidden, r.getInt("hidden_size", 768));
  READ(layers, r.getLayerCount("num_hidden_layers", 12));
  READ(heads, r.getInt("num_attention_heads", 12));
  READ(inner, r.getInt("intermediate_size", 3072));
  READ(positions, r.getInt("max_position_embeddings", 512));
  READ(types, r.getInt("type_vocab_size", 2));
  READ(eps, r.getNumber("layer_norm_eps", 1e-12));
  READ(hiddenDropout, r.getNumber("hidden_dropout_prob", 0.1));
  READ(attentionDropout, r.getNumber("attention_probs_dropout_prob", 0.1));
  READ(tie, r.getBool("tie_word_embeddings", true));
  READ(decoder, r.getBool("is_decoder", false));
  READ(positionType,
       r.getString("position_embedding_type", std::string("absolute")));
  READ(act, r.getString("hidden_act", std::string("gelu")));
  if (failed(requireGelu(r, "hidden_act", act)))
    return failure();
  if (decoder) {
    r.error("is_decoder") << "BERT as a causal decoder (is_decoder true) is "
                             "not modelled; the masked-LM encoder is";
    return failure();
  }
  if (positionType != "absolute") {
    r.error("position_embedding_type")
        << "unsupported \"position_embedding_type\": \"" << positionType
        << "\" (supported: absolute)";
    return failure();
  }
  if (failed(setMultiHeadSizes(r, c, "num_attention_heads", "hidden_size",
                               vocab, hidden, layers, heads, inner)))
    return failure();
  c.maxPositions = positions;
  c.typeVocabSize = types;
  c.normEps = eps;
  c.dropout = hiddenDropout;
  c.attentionDropout = attentionDropout;
  c.tieWordEmbeddings = tie;
  c.useCache = false;
  return success();
}

/// ViTConfig with the image classifier (ViTForImageClassification): pre-LN
/// encoder layers with q/k/v projections biased as qkv_bias says, exact
/// GELU, hidden_dropout_prob after the embeddings, the attention and the
/// MLP; the position embeddings sized for image_size x image_size images
/// in patch_size patches of num_channels channels. A non-square image
/// (image_size or patch_size as a list) is not modelled.
LogicalResult readVit(ConfigReader &r, CausalLMConfig &c) {
  c.layout = DecoderLayout::Vit;
  READ(hidden, r.getInt("hidden_size", 768));
  READ(layers, r.getLayerCount("num_hidden_layers", 12));
  READ(heads, r.getInt("num_attention_heads", 12));
  READ(inner, r.getInt("intermediate_size", 3072));
  READ(eps, r.getNumber("layer_norm_eps", 1e-12));
  READ(hiddenDropout, r.getNumber("hidden_dropout_prob", 0.0));
  READ(attentionDropout, r.getNumber("attention_probs_dropout_prob", 0.0));
  READ(image, r.getInt("image_size", 224));
  READ(patch, r.getInt("patch_size", 16));
  READ(channels, r.getInt("num_channels", 3));
  READ(qkvBias, r.getBool("qkv_bias", true));
  READ(act, r.getString("hidden_act", std::string("gelu")));
  if (failed(requireGelu(r, "hidden_act", act)))
    return failure();
  if (failed(setMultiHeadSizes(r, c, "num_attention_heads", "hidden_size",
                               /*vocab=*/0, hidden, layers, heads, inner)))
    return failure();
  c.imageSize = image;
  c.patchSize = patch;
  c.numChannels = channels;
  c.qkvBias = qkvBias;
  c.normEps = eps;
  c.dropout = hiddenDropout;
  c.attentionDropout = attentionDropout;
  c.useCache = false;
  return success();
}

/// T5Config (T5ForConditionalGeneration: T5, T5 v1.1, Flan-T5): d_model,
/// d_kv per head (the q/k/v width is num_heads x d_kv, which need not be
/// d_model), d_ff, num_layers and num_decoder_layers (null: num_layers),
/// relative_attention_num_buckets, dropout_rate everywhere, layer_norm_
/// epsilon, feed_forward_proj "relu" or "gated-gelu" (gelu_new, as
/// T5Config maps it). transformers 5.25 ties lm_head to the shared
/// embedding whatever tie_word_embeddings says; a config that sets it false
/// only drops the decoder output's d_model ** -0.5 scaling
/// (scale_decoder_outputs).
LogicalResult readT5(ConfigReader &r, CausalLMConfig &c) {
  c.layout = DecoderLayout::T5;
  READ(vocab, r.getInt("vocab_size", 32128));
  READ(hidden, r.getInt("d_model", 512));
  READ(headDim, r.getInt("d_kv", 64));
  READ(inner, r.getInt("d_ff", 2048));
  READ(layers, r.getLayerCount("num_layers", 6));
  READ(heads, r.getInt("num_heads", 8));
  READ(buckets, r.getInt("relative_attention_num_buckets", 32));
  READ(dropout, r.getNumber("dropout_rate", 0.1));
  READ(eps, r.getNumber("layer_norm_epsilon", 1e-6));
  READ(feedForward, r.getString("feed_forward_proj", std::string("relu")));
  READ(tie, r.getBool("tie_word_embeddings", true));
  READ(encoderDecoder, r.getBool("is_encoder_decoder", true));
  READ(useCache, r.getBool("use_cache", true));
  int64_t decoderLayers = layers;
  if (r.has("num_decoder_layers")) {
    READ(n, r.getInt("num_decoder_layers"));
    decoderLayers = n;
  }
  for (auto [value, key] :
       {std::pair<int64_t, llvm::StringRef>{vocab, "vocab_size"},
        {hidden, "d_model"},
        {headDim, "d_kv"},
        {inner, "d_ff"},
        {layers, "num_layers"},
        {decoderLayers, "num_decoder_layers"},
        {heads, "num_heads"},
        {buckets, "relative_attention_num_buckets"}})
    if (value < 1) {
      r.error(key) << key << " must be >= 1, got " << value;
      return failure();
    }
  if (decoderLayers > kMaxLayers) {
    r.error("num_decoder_layers") << "num_decoder_layers must be at most "
                                  << kMaxLayers << ", got " << decoderLayers;
    return failure();
  }
  if (feedForward != "relu" && feedForward != "gated-gelu") {
    r.error("feed_forward_proj")
        << "unsupported \"feed_forward_proj\": \"" << feedForward
        << "\" (supported: relu, gated-gelu)";
    return failure();
  }
  if (!encoderDecoder) {
    r.error("is_encoder_decoder")
        << "T5 without its decoder (is_encoder_decoder false) is not "
           "modelled; T5ForConditionalGeneration is";
    return failure();
  }
  c.vocabSize = vocab;
  c.hiddenSize = hidden;
  c.numLayers = layers;
  c.numDecoderLayers = decoderLayers;
  c.numHeads = c.numKeyValueHeads = heads;
  c.headDim = headDim;
  c.intermediateSize = inner;
  c.relativeAttentionBuckets = buckets;
  c.gatedFeedForward = feedForward == "gated-gelu";
  c.dropout = c.attentionDropout = dropout;
  c.normEps = eps;
  c.tieWordEmbeddings = true;
  c.scaleDecoderOutputs = tie;
  c.useCache = useCache;
  return success();
}

/// A sequence classifier's head (BertForSequenceClassification,
/// RobertaForSequenceClassification): its labels, from id2label (as
/// PretrainedConfig derives num_labels) or num_labels, 2 by default; its
/// dropout. One label is a regression (MSELoss) and a problem_type other
/// than single-label classification another loss: neither is modelled.
LogicalResult readClassifier(ConfigReader &r, CausalLMConfig &c) {
  FailureOr<int64_t> labels = r.getObjectSize("id2label");
  if (failed(labels))
    return failure();
  if (!*labels) {
    labels = r.getInt("num_labels", 2);
    if (failed(labels))
      return failure();
  }
  // Published classifiers have at most thousands of labels; the bound
  // keeps the classifier's size far from overflowing.
  constexpr int64_t kMaxLabels = 1 << 20;
  if (*labels > kMaxLabels) {
    r.error(r.has("id2label") ? "id2label" : "num_labels")
        << "a classifier of at most " << kMaxLabels
        << " labels is modelled, got " << *labels;
    return failure();
  }
  if (*labels < 2) {
    r.error(r.has("id2label") ? "id2label" : "num_labels")
        << "a classifier of " << *labels
        << " labels (a regression) is not modelled: single-label "
           "classification needs at least 2";
    return failure();
  }
  READ(problem,
       r.getString("problem_type", std::string("single_label_classification")));
  if (problem != "single_label_classification") {
    r.error("problem_type") << "unsupported \"problem_type\": \"" << problem
                            << "\" (supported: single_label_classification)";
    return failure();
  }
  // BERT's and RoBERTa's classifier_dropout, else hidden_dropout_prob;
  // DistilBERT's seq_classif_dropout (its reader set it), and its token
  // classifier's dropout.
  double dropout = c.encoder == EncoderFlavor::DistilBert && !c.tokenClassifier
                       ? c.classifierDropout
                       : c.dropout;
  if (c.encoder != EncoderFlavor::DistilBert && r.has("classifier_dropout")) {
    READ(p, r.getNumber("classifier_dropout", 0.0));
    dropout = p;
  }
  c.numLabels = *labels;
  c.classifierDropout = dropout;
  return success();
}

/// DistilBertConfig (DistilBertForMaskedLM,
/// DistilBertForSequenceClassification): dim, n_layers, n_heads, hidden_dim,
/// dropout, attention_dropout, activation, learned positions
/// (sinusoidal_pos_embds false), LayerNorms of eps 1e-12, the head tied to the
/// word embeddings (tie_weights_), the classifier's seq_classif_dropout.
LogicalResult readDistilBert(ConfigReader &r, CausalLMConfig &c) {
  c.layout = DecoderLayout::Bert;
  c.encoder = EncoderFlavor::DistilBert;
  READ(vocab, r.getInt("vocab_size", 30522));
  READ(dim, r.getInt("dim", 768));
  READ(layers, r.getLayerCount("n_layers", 6));
  READ(heads, r.getInt("n_heads", 12));
  READ(inner, r.getInt("hidden_dim", 3072));
  READ(positions, r.getInt("max_position_embeddings", 512));
  READ(dropout, r.getNumber("dropout", 0.1));
  READ(attentionDropout, r.getNumber("attention_dropout", 0.1));
  READ(classifierDropout, r.getNumber("seq_classif_dropout", 0.2));
  READ(tie, r.getBool("tie_weights_", true));
  READ(sinusoidal, r.getBool("sinusoidal_pos_embds", false));
  READ(act, r.getString("activation", std::string("gelu")));
  if (failed(requireGelu(r, "activation", act)))
    return failure();
  if (sinusoidal) {
    r.error("sinusoidal_pos_embds")
        << "DistilBERT's sinusoidal position embeddings are not modelled "
           "(false in the published configs)";
    return failure();
  }
  if (failed(setMultiHeadSizes(r, c, "n_heads", "dim", vocab, dim, layers,
                               heads, inner)))
    return failure();
  c.maxPositions = positions;
  c.typeVocabSize = 0;
  c.normEps = 1e-12;
  c.dropout = dropout;
  c.attentionDropout = attentionDropout;
  c.classifierDropout = classifierDropout;
  c.tieWordEmbeddings = tie;
  c.useCache = false;
  return success();
}

/// RobertaConfig with RobertaForMaskedLM: BERT's reader, positions offset by
/// pad_token_id + 1.
LogicalResult readRoberta(ConfigReader &r, CausalLMConfig &c) {
  if (failed(readBert(r, c)))
    return failure();
  READ(pad, r.getInt("pad_token_id", 1));
  if (pad < 0 || pad + 1 >= c.maxPositions) {
    r.error("pad_token_id")
        << "pad_token_id (" << pad << ") leaves no positions of the "
        << c.maxPositions << " max_position_embeddings";
    return failure();
  }
  c.encoder = EncoderFlavor::Roberta;
  c.positionOffset = pad + 1;
  c.maxPositions -= c.positionOffset;
  return success();
}

/// The Qwen MoE configs' experts: num_experts of moe_intermediate_size on
/// every decoder_sparse_step-th layer not in mlp_only_layers (the others a
/// dense MLP of intermediate_size); norm_topk_prob renormalizes.
LogicalResult readQwenExperts(ConfigReader &r, CausalLMConfig &c,
                              int64_t defaultExperts, int64_t defaultPerToken,
                              int64_t defaultInner) {
  if (failed(readExperts(r, c, "num_experts", defaultExperts, defaultPerToken)))
    return failure();
  READ(inner, r.getInt("moe_intermediate_size", defaultInner));
  READ(normalize, r.getBool("norm_topk_prob", false));
  READ(step, r.getInt("decoder_sparse_step", 1));
  READ(dense, r.getIntList("mlp_only_layers"));
  if (step < 1) {
    r.error("decoder_sparse_step") << "decoder_sparse_step must be >= 1";
    return failure();
  }
  c.expertIntermediateSize = inner;
  c.normalizeTopKProbabilities = normalize;
  c.denseLayers.assign(c.numLayers, false);
  for (int64_t i = 0; i < c.numLayers; ++i)
    c.denseLayers[i] = llvm::is_contained(dense, i) || (i + 1) % step != 0;
  return success();
}

/// Qwen3MoeConfig: Qwen3's attention (q/k norms; head_dim, if the file
/// has none, hidden_size / heads) with 128 experts of 768, 8 a token.
LogicalResult readQwen3Moe(ConfigReader &r, CausalLMConfig &c) {
  if (failed(readLlamaLayout(r, c, LlamaDefaults())))
    return failure();
  READ(attentionBias, r.getBool("attention_bias", false));
  c.qkvBias = c.outputBias = attentionBias;
  c.qkNorm = true;
  if (failed(readQwenSlidingWindow(r, c, QwenSlidingLayers::All)))
    return failure();
  return readQwenExperts(r, c, 128, 8, 768);
}

/// Qwen2MoeConfig (Qwen1.5-MoE, Qwen2-57B-A14B): Qwen2's attention (q/k/v
/// biases as `qkv_bias` says, o_proj without), 60 experts of 1408, 4 a
/// token, and a shared expert of shared_expert_intermediate_size gated by
/// sigmoid(shared_expert_gate(x)).
LogicalResult readQwen2Moe(ConfigReader &r, CausalLMConfig &c) {
  if (failed(readLlamaLayout(r, c, LlamaDefaults())))
    return failure();
  READ(qkvBias, r.getBool("qkv_bias", true));
  c.qkvBias = qkvBias;
  if (failed(
          readQwenSlidingWindow(r, c, QwenSlidingLayers::OddBelowMaxWindow)) ||
      failed(readQwenExperts(r, c, 60, 4, 1408)))
    return failure();
  READ(shared, r.getInt("shared_expert_intermediate_size", 5632));
  if (shared < 1) {
    r.error("shared_expert_intermediate_size")
        << "shared_expert_intermediate_size must be >= 1";
    return failure();
  }
  c.sharedExpertIntermediateSize = shared;
  c.buildsUnusedSlidingWindowMask = !c.slidingWindow;
  return success();
}

/// GPT2Config: n_embd, n_layer, n_head, n_positions, n_inner (null: 4 *
/// n_embd), dropout (resid_pdrop = embd_pdrop), GELU (tanh).
LogicalResult readGpt2(ConfigReader &r, CausalLMConfig &c) {
  c.layout = DecoderLayout::Gpt2;
  READ(vocab, r.getInt("vocab_size", 50257));
  READ(positions, r.getInt("n_positions", 1024));
  READ(dim, r.getInt("n_embd", 768));
  READ(layers, r.getLayerCount("n_layer", 12));
  READ(heads, r.getInt("n_head", 12));
  READ(inner, r.getInt("n_inner", 4 * dim));
  READ(eps, r.getNumber("layer_norm_epsilon", 1e-5));
  READ(residDropout, r.getNumber("resid_pdrop", 0.1));
  READ(embdDropout, r.getNumber("embd_pdrop", 0.1));
  READ(attnDropout, r.getNumber("attn_pdrop", 0.1));
  READ(tie, r.getBool("tie_word_embeddings", true));
  READ(useCache, r.getBool("use_cache", true));
  READ(act, r.getString("activation_function", std::string("gelu_new")));
  if (act == "gelu_new") {
    c.gelu = zoo::GeluKind::New;
  } else if (act == "gelu") {
    c.gelu = zoo::GeluKind::Exact;
  } else if (act == "gelu_pytorch_tanh") {
    c.gelu = zoo::GeluKind::Tanh;
  } else {
    r.error("activation_function")
        << "unsupported \"activation_function\": \"" << act
        << "\" (supported: gelu_new, gelu, gelu_pytorch_tanh)";
    return failure();
  }
  if (residDropout != embdDropout) {
    r.error("embd_pdrop") << "embd_pdrop (" << embdDropout
                          << ") must equal resid_pdrop (" << residDropout
                          << "): one dropout rate is modelled";
    return failure();
  }
  if (failed(setMultiHeadSizes(r, c, "n_head", "n_embd", vocab, dim, layers,
                               heads, inner)))
    return failure();
  c.maxPositions = positions;
  c.normEps = eps;
  c.dropout = residDropout;
  c.attentionDropout = attnDropout;
  c.tieWordEmbeddings = tie;
  c.useCache = useCache;
  return success();
}

/// OPTConfig: hidden_size, ffn_dim, max_position_embeddings, dropout
/// (embeddings and residuals), attention_dropout, ReLU; the pre-LN form
/// with the embedding width equal to the hidden size (every OPT but 350m,
/// whose post-LN layers and project_in/out are not modelled).
LogicalResult readOpt(ConfigReader &r, CausalLMConfig &c) {
  c.layout = DecoderLayout::Opt;
  READ(vocab, r.getInt("vocab_size", 50272));
  READ(dim, r.getInt("hidden_size", 768));
  READ(layers, r.getLayerCount("num_hidden_layers", 12));
  READ(heads, r.getInt("num_attention_heads", 12));
  READ(ffn, r.getInt("ffn_dim", 3072));
  READ(positions, r.getInt("max_position_embeddings", 2048));
  READ(projDim, r.getInt("word_embed_proj_dim", dim));
  READ(preNorm, r.getBool("do_layer_norm_before", true));
  READ(bias, r.getBool("enable_bias", true));
  READ(affine, r.getBool("layer_norm_elementwise_affine", true));
  READ(dropout, r.getNumber("dropout", 0.1));
  READ(attnDropout, r.getNumber("attention_dropout", 0.0));
  READ(tie, r.getBool("tie_word_embeddings", true));
  READ(useCache, r.getBool("use_cache", true));
  READ(activationDropout, r.getNumber("activation_dropout", 0.0));
  READ(layerDrop, r.getNumber("layerdrop", 0.0));
  if (activationDropout != 0 || layerDrop != 0) {
    r.error(activationDropout != 0 ? "activation_dropout" : "layerdrop")
        << "OPT's activation dropout and layer drop are not modelled (both "
           "0 in the published configs)";
    return failure();
  }
  READ(act, r.getString("activation_function", std::string("relu")));
  if (act != "relu") {
    r.error("activation_function") << "unsupported \"activation_function\": \""
                                   << act << "\" (supported: relu)";
    return failure();
  }
  if (projDim != dim) {
    r.error("word_embed_proj_dim")
        << "word_embed_proj_dim (" << projDim << ") differs from hidden_size ("
        << dim << "): OPT's project_in/project_out are not modelled";
    return failure();
  }
  if (!preNorm) {
    r.error("do_layer_norm_before")
        << "post-LN OPT layers (do_layer_norm_before false) are not modelled";
    return failure();
  }
  if (!bias || !affine) {
    r.error(!bias ? "enable_bias" : "layer_norm_elementwise_affine")
        << "OPT without biases or affine norms is not modelled";
    return failure();
  }
  if (failed(setMultiHeadSizes(r, c, "num_attention_heads", "hidden_size",
                               vocab, dim, layers, heads, ffn)))
    return failure();
  c.maxPositions = positions;
  c.normEps = 1e-5;
  c.dropout = dropout;
  c.attentionDropout = attnDropout;
  c.tieWordEmbeddings = tie;
  c.useCache = useCache;
  return success();
}

#undef READ

struct Family {
  llvm::StringRef modelType;
  FamilyReader read;
};

const Family kFamilies[] = {
    {"llama", readLlama},
    {"mistral", readMistral},
    {"qwen2", readQwen2},
    {"qwen3", readQwen3},
    {"gemma", readGemma},
    {"gemma2", readGemma2},
    {"gemma3_text", readGemma3Text},
    {"mixtral", readMixtral},
    {"qwen2_moe", readQwen2Moe},
    {"qwen3_moe", readQwen3Moe},
    {"phi3", readPhi3},
    {"gpt2", readGpt2},
    {"gpt_neox", readGptNeox},
    {"opt", readOpt},
    {"bert", readBert},
    {"roberta", readRoberta},
    {"distilbert", readDistilBert},
    {"vit", readVit},
    {"t5", readT5},
};

} // namespace

llvm::ArrayRef<llvm::StringRef> vram::hf::getSupportedModelTypes() {
  static const std::vector<llvm::StringRef> types = [] {
    std::vector<llvm::StringRef> result;
    for (const Family &family : kFamilies)
      result.push_back(family.modelType);
    return result;
  }();
  return types;
}

FailureOr<CausalLMConfig>
vram::hf::parseCausalLMConfig(llvm::MemoryBufferRef buffer,
                              MLIRContext *context) {
  ConfigReader reader(buffer, context);
  if (!reader.parse())
    return failure();
  FailureOr<std::string> modelType = reader.getString("model_type", {});
  if (failed(modelType))
    return failure();
  const Family *family = llvm::find_if(
      kFamilies, [&](const Family &f) { return f.modelType == *modelType; });
  if (family == std::end(kFamilies)) {
    reader.error("model_type")
        << "unsupported model_type \"" << *modelType
        << "\" (supported: " << llvm::join(getSupportedModelTypes(), ", ")
        << ")";
    return failure();
  }
  // Only the language-modelling head is modelled: another head (sequence
  // classification, token classification, ...) has other parameters and
  // outputs.
  FailureOr<std::optional<std::string>> architecture =
      reader.getFirstString("architectures");
  if (failed(architecture))
    return failure();
  // A ViT is an image classifier (ViTForImageClassification, also when
  // the config names no architecture).
  bool vision = *modelType == "vit";
  if (*modelType == "t5" && *architecture &&
      **architecture != "T5ForConditionalGeneration") {
    reader.error("architectures")
        << "unsupported architecture \"" << **architecture
        << "\": only T5ForConditionalGeneration is modelled";
    return failure();
  }
  if (vision && *architecture &&
      **architecture != "ViTForImageClassification") {
    reader.error("architectures")
        << "unsupported architecture \"" << **architecture
        << "\": only the image classifier (ViTForImageClassification) is "
           "modelled";
    return failure();
  }
  // BERT and RoBERTa are encoders: their language-modelling head is the
  // masked one; their sequence-classification head is modelled too.
  std::string encoderName = *modelType == "bert"         ? "Bert"
                            : *modelType == "roberta"    ? "Roberta"
                            : *modelType == "distilbert" ? "DistilBert"
                                                         : "";
  bool encoder = !encoderName.empty();
  std::string maskedLm = encoderName + "ForMaskedLM";
  std::string classifier = encoderName + "ForSequenceClassification";
  std::string tokenClassifier = encoderName + "ForTokenClassification";
  if (*architecture && !vision && *modelType != "t5" &&
      (encoder
           ? **architecture != maskedLm && **architecture != classifier &&
                 **architecture != tokenClassifier
           : !llvm::StringRef(**architecture).ends_with("ForCausalLM") &&
                 !llvm::StringRef(**architecture).ends_with("LMHeadModel"))) {
    reader.error("architectures")
        << "unsupported architecture \"" << **architecture << "\": only "
        << (encoder ? "the masked language-modelling head (" + maskedLm +
                          "), the sequence classifier (" + classifier +
                          ") and the token classifier (" + tokenClassifier + ")"
                    : std::string("the causal language-modelling head "
                                  "(*ForCausalLM, *LMHeadModel)"))
        << (encoder ? " are modelled" : " is modelled");
    return failure();
  }

  CausalLMConfig config;
  config.name = *modelType;
  // transformers computes the rotary tables in forward since 4.38.
  config.rotaryInForward = true;
  if (failed(family->read(reader, config)))
    return failure();
  config.tokenClassifier =
      encoder && *architecture && **architecture == tokenClassifier;
  if (((encoder && *architecture && **architecture == classifier) || vision ||
       config.tokenClassifier) &&
      failed(readClassifier(reader, config)))
    return failure();
  if (llvm::Error error = zoo::verifyCausalLMConfig(config)) {
    // The message starts with the key at fault.
    std::string message = llvm::toString(std::move(error));
    llvm::StringRef key = llvm::StringRef(message).split(' ').first;
    reader.error(key) << message;
    return failure();
  }
  return config;
}
