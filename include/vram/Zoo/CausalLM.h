//===- CausalLM.h - decoder-only language models from a config --*- C++ -*-===//
//
// The zoo's language models are instances of a few layouts that Hugging
// Face's modeling code shares across families: the LLaMA decoder (llama,
// mistral, qwen2, qwen3, gemma, ...), GPT-2's, OPT's, GPT-NeoX's, and BERT's
// encoder with its masked-LM head (the same token ids in, logits out). A
// CausalLMConfig spells out one model of either layout; the zoo's fixed models
// (llama-7b, gpt2, ...) are such configs, and the Hugging Face front end
// (vram/Import/HuggingFace.h) makes one from a config.json.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_ZOO_CAUSALLM_H
#define VRAM_ZOO_CAUSALLM_H

#include "vram/Zoo/Zoo.h"

#include <optional>
#include <string>
#include <vector>

namespace vram::zoo {

enum class DecoderLayout {
  /// LlamaForCausalLM's decoder layer: RMSNorm, rotary q/k, grouped KV heads,
  /// a gated MLP, no learned positions.
  Llama,
  /// GPT2LMHeadModel: LayerNorm, learned positions, one qkv projection, a
  /// GELU MLP, dropout.
  Gpt2,
  /// OPTForCausalLM: GPT-2's pre-LN residuals with separate biased q/k/v
  /// projections (q scaled before attention), learned positions offset by
  /// 2 and indexed per sample, a ReLU MLP.
  Opt,
  /// GPTNeoXForCausalLM (Pythia): LayerNorms, one query_key_value projection
  /// whose [.., H, 3 D] view holds each head's q, k and v, partial rotary
  /// (rotary_pct), a GELU MLP, the attention and the MLP in parallel on the
  /// same input (use_parallel_residual).
  GptNeox,
  /// BertForMaskedLM (and RoBERTa's, DistilBERT's: EncoderFlavor): an
  /// encoder (bidirectional attention, no cache) of
  /// post-LN layers with biased q/k/v, exact GELU and dropout, learned
  /// positions and token types; the masked-LM head (dense, GELU, LayerNorm,
  /// the decoder tied to the word embeddings) gives logits for every token.
  Bert,
  /// ViTForImageClassification: patches of a [B, C, S, S] image embedded
  /// by a strided convolution, a class token in front, learned positions,
  /// pre-LN encoder layers (q/k/v/o projections, exact GELU MLP), a final
  /// LayerNorm and a classifier on the class token's hidden state. Its
  /// input is an image, not token ids (imageSize, patchSize, numChannels).
  Vit,
  /// T5ForConditionalGeneration: an encoder and a decoder of pre-norm
  /// blocks (T5LayerNorm: an RMS norm without bias), no learned positions
  /// but a relative position bias (an embedding of bucketed distances,
  /// made by each stack's first block and added to every block's attention
  /// scores, which are not scaled), bias-free q/k/v/o projections, a ReLU
  /// or gated-GELU feed-forward, cross-attention over the encoder's output,
  /// and an lm_head tied to the shared embedding. Its decoder reads the
  /// labels shifted right (decoderSeq tokens); the loss is its own.
  T5,
};

/// The encoders of the BERT layout: the same ops under other module names,
/// and where they differ:
enum class EncoderFlavor {
  /// BertForMaskedLM / BertForSequenceClassification.
  Bert,
  /// RoBERTa: modules under `roberta.` and `lm_head`, positions numbered
  /// from pad_token_id + 1 by a cumsum over the token ids (a [B, T] int64
  /// tensor, as are the token types gathered with them), `maxPositions` of
  /// the table's rows usable; its own classification head.
  Roberta,
  /// DistilBERT: modules under `distilbert.transformer`, no token types, no
  /// dropout on the attention's output, the head's vocab_transform /
  /// vocab_layer_norm / vocab_projector; pre_classifier and ReLU before
  /// its classifier.
  DistilBert,
};

/// The MLP activation of the LLaMA layout (config `hidden_act`).
enum class GatedActivation {
  Silu,     ///< "silu" (llama, mistral, qwen)
  GeluTanh, ///< "gelu_pytorch_tanh" (gemma)
};

/// The MLP activation of the GPT-2 layout (config `activation_function`,
/// transformers' ACT2FN).
enum class GeluKind {
  New,   ///< "gelu_new": NewGELUActivation, the tanh form written out
  Exact, ///< "gelu": GELUActivation, F.gelu
  Tanh,  ///< "gelu_pytorch_tanh": F.gelu(approximate="tanh")
};

/// One decoder-only model; field names follow transformers' config keys.
struct CausalLMConfig {
  /// The model's name in reports (nn.model), e.g. the config's model_type.
  std::string name;
  DecoderLayout layout = DecoderLayout::Llama;

  int64_t vocabSize = 0;
  int64_t hiddenSize = 0;
  int64_t numLayers = 0;
  int64_t numHeads = 0;
  /// Grouped-query attention: K and V have this many heads (<= numHeads,
  /// dividing it); transformers' repeat_kv copies them up to numHeads.
  int64_t numKeyValueHeads = 0;
  /// The per-head width (hidden_size / heads unless the config says).
  int64_t headDim = 0;
  /// The MLP's inner width.
  int64_t intermediateSize = 0;
  /// Learned positions (GPT-2): the longest sequence; 0 for rotary models.
  int64_t maxPositions = 0;
  /// BERT's token types (type_vocab_size): the rows of its token-type
  /// embedding.
  int64_t typeVocabSize = 0;
  /// Which encoder of the BERT layout.
  EncoderFlavor encoder = EncoderFlavor::Bert;
  /// RoBERTa's pad_token_id + 1: the first position's row.
  int64_t positionOffset = 0;
  /// An encoder with a sequence-classification head instead of the
  /// masked-LM one (BertForSequenceClassification: the pooler's dense and
  /// tanh on the first token, dropout, a classifier; RoBERTa's
  /// RobertaClassificationHead: dropout, dense, tanh, dropout, out_proj;
  /// DistilBERT's pre_classifier, ReLU, dropout, classifier):
  /// its labels (id2label), logits [B, numLabels]. 0: the masked LM.
  int64_t numLabels = 0;
  /// With numLabels, a token classifier instead (BertForTokenClassification
  /// and RoBERTa's, DistilBERT's: dropout and a classifier on every token):
  /// logits [B, T, numLabels].
  bool tokenClassifier = false;
  /// The classification head's dropout (classifier_dropout, else
  /// hidden_dropout_prob).
  double classifierDropout = 0.0;
  /// ViT: the image's side (image_size; the position embeddings are sized
  /// for it), the patches' side and the image's channels.
  int64_t imageSize = 0, patchSize = 0, numChannels = 0;
  double normEps = 1e-6;
  bool tieWordEmbeddings = false;

  // LLaMA layout variants.
  /// q/k/v projections carry a bias (qwen2; llama's attention_bias).
  bool qkvBias = false;
  /// o_proj carries a bias (llama's attention_bias).
  bool outputBias = false;
  /// gate/up/down projections carry a bias (llama's mlp_bias).
  bool mlpBias = false;
  /// An RMSNorm over each head's q and k before rotary (qwen3).
  bool qkNorm = false;
  /// Phi-3: one qkv_proj for q, k and v and one gate_up_proj for the MLP's
  /// gate and up, their outputs split by views; the MLP computes
  /// up * act(gate).
  bool fusedProjections = false;
  /// Phi-3's apply_rotary_pos_emb: rotates the first `rotaryDim` of each
  /// head and concatenates the rest back, a copy even when nothing is left
  /// (torch.cat of the rotated part alone).
  bool rotaryConcatenates = false;
  /// The rotated width of a head (partial_rotary_factor x head_dim); 0: all
  /// of it.
  int64_t rotaryDim = 0;
  /// Phi-3's resid_pdrop: dropout on the attention's and the MLP's outputs
  /// before each residual add.
  double residualDropout = 0.0;
  /// GPT-NeoX's use_parallel_residual: x + attn(ln1(x)) + mlp(ln2(x))
  /// instead of two residual steps.
  bool parallelResidual = false;
  /// Gemma: embeddings times sqrt(hidden_size), and RMSNorm scaling by
  /// (1 + weight).
  bool gemmaScaling = false;
  GatedActivation activation = GatedActivation::Silu;
  /// GPT-2's MLP activation.
  GeluKind gelu = GeluKind::New;
  /// Gemma 2: an RMSNorm on the attention's and the MLP's outputs before
  /// each residual add (post_attention_layernorm, post_feedforward_layernorm;
  /// the MLP's input norm is pre_feedforward_layernorm).
  bool sandwichNorms = false;
  /// Gemma 2: the attention scores capped as tanh(s / cap) * cap before the
  /// softmax (attn_logit_softcapping), and the logits so
  /// (final_logit_softcapping).
  std::optional<double> attentionSoftcap, finalLogitSoftcap;
  /// The scores' scale (Gemma 2: query_pre_attn_scalar ** -0.5); unset:
  /// head_dim ** -0.5.
  std::optional<double> attentionScaling;
  /// transformers has no sdpa path for the family (Gemma 2's
  /// _supports_sdpa = False: sdpa cannot soft-cap): it runs eager attention.
  bool eagerAttentionOnly = false;
  /// Gemma 3: which layers are "sliding_attention" (the others
  /// "full_attention"). Each layer type present has its own rotary tables,
  /// computed in every forward from its own inv_freq buffer. Empty: one
  /// type, one set of tables.
  std::vector<bool> slidingAttentionLayers;
  /// Sliding-window attention (mistral, qwen2 when enabled): the window.
  std::optional<int64_t> slidingWindow;
  /// Which layers attend within `slidingWindow` where the family says
  /// (Qwen's use_sliding_window: those from max_window_layers on; Qwen2-MoE:
  /// every other one below it); empty: as `slidingAttentionLayers` says, or
  /// every layer.
  std::vector<bool> slidingWindowLayers;

  /// Whether layer `index` attends within `slidingWindow`.
  bool isSlidingLayer(int64_t index) const {
    if (!slidingAttentionLayers.empty())
      return slidingAttentionLayers[index];
    if (!slidingWindowLayers.empty())
      return slidingWindowLayers[index];
    return slidingWindow.has_value();
  }
  /// The rotary cos/sin tables are computed in every forward (transformers
  /// >= 4.38, [1, T, head_dim] each, kept by the q/k multiplications) rather
  /// than cached as buffers (older releases, the zoo's llama-7b).
  bool rotaryInForward = false;

  /// Dropout in training: the attention probabilities' (`attn_pdrop`,
  /// `attention_dropout`), passed to sdpa, whose fused kernels drop in the
  /// kernel; on the CPU they do not, and sdpa runs its math kernel.
  double attentionDropout = 0.0;

  /// A sparse mixture of experts in place of the MLP (mixtral, qwen3_moe):
  /// `numExperts` SwiGLU experts of width `expertIntermediateSize`, each
  /// token routed to `numExpertsPerToken` of them by a softmax router, the
  /// chosen probabilities renormalized to sum to 1 when
  /// `normalizeTopKProbabilities`. 0 experts: a dense MLP everywhere.
  /// Layers listed in `denseLayers` (qwen3_moe's mlp_only_layers, and the
  /// layers decoder_sparse_step skips) keep the dense MLP of
  /// `intermediateSize`.
  int64_t numExperts = 0;
  int64_t numExpertsPerToken = 0;
  int64_t expertIntermediateSize = 0;
  bool normalizeTopKProbabilities = true;
  /// The router's weights stay float32 in a low-precision model (Mixtral:
  /// the experts' weighted rows are then float32 until the block casts its
  /// output back); Qwen3-MoE casts them to the model's dtype.
  bool routerWeightsInFloat32 = false;
  std::vector<bool> denseLayers;
  /// qwen2_moe's shared expert: a SwiGLU MLP of this width that every token
  /// passes through beside the routed experts, its output scaled by
  /// sigmoid(shared_expert_gate(x)) (a linear hidden -> 1). 0: none.
  int64_t sharedExpertIntermediateSize = 0;
  /// qwen2_moe without use_sliding_window: transformers sets sliding_window
  /// to 0 and still builds the sliding-window mask in every forward, a
  /// [T, past + T] bool tensor (expanded to the batch) that no layer reads,
  /// held until the model returns.
  bool buildsUnusedSlidingWindowMask = false;

  /// `use_cache`: a training forward builds a DynamicCache (the default;
  /// configs saved after `model.config.use_cache = False` say false).
  bool useCache = true;

  // GPT-2 layout variants: the embeddings' and residuals' dropout.
  double dropout = 0.0;
  // T5 layout.
  /// The decoder's blocks (num_decoder_layers; numLayers are the
  /// encoder's).
  int64_t numDecoderLayers = 0;
  /// The relative position bias's buckets (relative_attention_num_buckets).
  int64_t relativeAttentionBuckets = 0;
  /// feed_forward_proj "gated-gelu" (T5 v1.1, Flan-T5): gelu_new(wi_0(x)) *
  /// wi_1(x); else "relu": relu(wi(x)).
  bool gatedFeedForward = false;
  /// The decoder's output times d_model ** -0.5 before lm_head (T5's
  /// scale_decoder_outputs: a config that does not set
  /// tie_word_embeddings false).
  bool scaleDecoderOutputs = false;
};

/// The zoo's llama-7b and gpt2 as configs (LLaMA-7B, GPT-2 small).
CausalLMConfig getLlama7bConfig();
CausalLMConfig getGpt2Config();

/// Checks that the sizes are positive and consistent (heads divide the
/// hidden size or a head_dim is given, KV heads divide the heads, ...);
/// the message names the config key at fault.
llvm::Error verifyCausalLMConfig(const CausalLMConfig &config);

/// Builds `config` as a module holding `func.func @forward` over [batch,
/// seq] token ids, as zoo::buildModel does (only batch, seq and target of
/// `options` apply; seq defaults to `defaultSeq`), or over [batch,
/// channels, side, side] images for a ViT (options' imageSize, when given,
/// must be the config's). The module is located at
/// `sourcePath` (the config file) if given, else at `zoo:<name>`.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
buildCausalLM(mlir::MLIRContext *context, const CausalLMConfig &config,
              const ZooOptions &options, int64_t defaultSeq,
              llvm::StringRef sourcePath = "");

} // namespace vram::zoo

#endif // VRAM_ZOO_CAUSALLM_H
