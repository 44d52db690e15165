//===- T5.cpp - T5ForConditionalGeneration from its config ----------------===//
//
// T5ForConditionalGeneration as transformers 5.25 trains it
// (modeling_t5.py), called with input_ids and labels:
//
//   x = drop(shared(input_ids))
//   for each encoder block:
//     x = x + drop(o(attention(q(n), k(n), v(n), bias)))    n = norm(x)
//     x = x + drop(ff(norm(x)))
//   e = drop(final_norm(x))
//   y = drop(shared(shift_right(labels)))
//   for each decoder block:
//     y = y + drop(o(attention(q(n), k(n), v(n), causal bias)))
//     y = y + drop(o(attention(q(n), k(e), v(e), zeros)))
//     y = y + drop(ff(norm(y)))
//   logits = lm_head(drop(final_norm(y)) [* d_model ** -0.5])
//
// ff is wo(drop(relu(wi(n)))) or, gated (T5 v1.1, Flan-T5),
// wo(drop(gelu_new(wi_0(n)) * wi_1(n))). The norms are T5LayerNorm, an RMS
// norm without bias. Attention scores are not scaled (scaling 1.0); each
// stack's first block computes the position bias, an embedding of the
// bucketed distances [T, S] as a [1, H, T, S] view, which every block of
// the stack adds to its scores. transformers' sdpa path passes it as
// attn_mask: a contiguous copy per encoder block, and per decoder block
// `torch.where(causal, bias, min)` (a new tensor, which keeps the bool
// condition for backward). The cross-attention's bias is zeros [1, H, T, S]
// made by the decoder's first block and passed to every block. lm_head is
// tied to `shared` (transformers 5.25 ties it whatever the config says);
// the config's tie_word_embeddings only decides the scaling.
//
// Training passes labels: the decoder reads them shifted right, a new
// [B, T'] int64 tensor (_shift_right), and the model's own loss is
// CrossEntropyLoss over lm_logits.view(-1, V) as they are.
//
// generate() (--mode=generate) encodes the prompt once, in the prefill,
// whose decoder reads the start token ([B, 1], decoder_start_token_id); each
// decode step's decoder reads the last token. The EncoderDecoderCache's
// self-attention half grows by a copy per token; its cross-attention half
// is the prefill's copies of each block's keys and values of the encoder's
// output, which every later step reads instead of projecting them again.
// A single query gets no causal mask: the self-attention's bias
// ([1, H, 1, keys], from the cache position) is the mask as it is, made
// contiguous per block.
//
//===----------------------------------------------------------------------===//

#include "Models.h"

#include "llvm/ADT/Twine.h"

#include <cmath>
#include <limits>
#include <tuple>

using namespace mlir;
using namespace vram::zoo;

namespace {

class T5Builder {
public:
  T5Builder(ModelBuilder &mb, const CausalLMConfig &c, const ModelConfig &model)
      : mb(mb), c(c), model(model), inner(c.numHeads * c.headDim),
        eager(model.attention == vram::nn::AttentionImplementation::Eager) {}

  Value build(Value ids) {
    Value shared = mb.param("shared", "weight", {c.vocabSize, c.hiddenSize});
    if (model.kvCache && model.kvCache->generation)
      return buildGenerationStep(ids, shared);
    Value encoded = buildStack("encoder", ids, shared, /*encoded=*/nullptr);
    // _shift_right(labels): input_ids.new_zeros(labels.shape), filled.
    int64_t batch = ModelBuilder::shapeOf(ids)[0];
    Value decoderIds =
        mb.intConstant({batch, model.decoderSeq}, 0, "shift_right");
    // A training forward with use_cache (the config's default) builds an
    // EncoderDecoderCache: the decoder's self- and cross-attention copy
    // their keys and values into it (DynamicLayer.update's torch.cat) and
    // attend over the copies.
    KvCache crossCache;
    crossCache.generation = false;
    if (model.kvCache)
      crossAttentionCache = &crossCache;
    Value y = buildStack("decoder", decoderIds, shared, encoded);
    // The model's forward holds the decoder's output and its cache
    // (decoder_outputs) until it returns, after its own loss.
    SmallVector<Value> held{y};
    if (model.kvCache)
      for (KvCache *cache : {model.kvCache, crossAttentionCache})
        for (auto [k, v] : llvm::zip(cache->keys, cache->values))
          held.append({k, v});
    if (c.scaleDecoderOutputs)
      y = mb.mul(y, mb.number(std::pow((double)c.hiddenSize, -0.5), ""), "");
    Value logits = mb.linear(y, "lm_head", shared, /*bias=*/Value());
    mb.keepAlive(held, "", /*modelFrame=*/true);
    return logits;
  }

private:
  /// One forward of generate(): the prefill's (`ids` the prompt: the
  /// encoder, then the decoder over the start token) or a decode step's
  /// (`ids` the last token: the decoder over the prefill's encoding).
  Value buildGenerationStep(Value ids, Value shared) {
    KvCache &cache = *model.kvCache;
    if (!cache.cross) {
      cache.cross = std::make_unique<KvCache>();
      cache.encoderOutput =
          buildStack("encoder", ids, shared, /*encoded=*/nullptr);
      int64_t batch = ModelBuilder::shapeOf(ids)[0];
      ids = mb.intConstant({batch, 1}, 0, "decoder_start_token");
    }
    crossAttentionCache = cache.cross.get();
    crossAttentionCache->position = cache.position;
    Value y = buildStack("decoder", ids, shared, cache.encoderOutput);
    if (c.scaleDecoderOutputs)
      y = mb.mul(y, mb.number(std::pow((double)c.hiddenSize, -0.5), ""), "");
    Value logits = mb.linear(y, "lm_head", shared, /*bias=*/Value());
    // generate() holds the encoder's output (model_kwargs) to the end.
    if (cache.isDecoding())
      mb.keepAlive(cache.encoderOutput, "");
    return logits;
  }

  /// A T5Stack: the embedded tokens through its blocks, the final norm and
  /// dropout. `encoded` is the encoder's output for the decoder, null for
  /// the encoder.
  Value buildStack(StringRef stack, Value ids, Value shared, Value encoded) {
    bool decoder = encoded != nullptr;
    int64_t blocks = decoder ? c.numDecoderLayers : c.numLayers;
    // T5Stack.forward holds inputs_embeds until it returns.
    Value embedded = mb.embedding(ids, (stack + ".embed_tokens").str(), shared);
    Value x = mb.dropout(embedded, (stack + ".dropout").str(), c.dropout);
    // Eager attention adds a causal mask to the decoder's scores: an
    // additive [B, 1, T, T] float tensor the stack makes once and holds.
    Value causalMask;
    if (decoder && eager) {
      ArrayRef<int64_t> s = ModelBuilder::shapeOf(ids);
      causalMask = mb.floatConstant({s[0], 1, s[1], s[1]}, 0.0, stack);
    }
    // Each stack's first block computes the position biases, which the
    // stack's loop then holds and hands to every block.
    Value selfBias, crossBias;
    for (int64_t i = 0; i < blocks; ++i) {
      std::string block = (stack + ".block." + Twine(i)).str();
      // The stack holds each block's input until the block returns, and
      // each sublayer its normalized input until its attention or
      // feed-forward returns.
      Value input = x;
      std::string self = block + ".layer.0";
      Value n = norm(x, self + ".layer_norm");
      Value a = attention(
          n, n, i, self + ".SelfAttention", selfBias,
          decoder ? Causality::Causal : Causality::Bidirectional, causalMask);
      mb.keepAlive(n, self);
      x = mb.add(x, mb.dropout(a, self + ".dropout", c.dropout), self);
      int64_t next = 1;
      if (decoder) {
        std::string cross = block + ".layer.1";
        n = norm(x, cross + ".layer_norm");
        a = attention(n, encoded, i, cross + ".EncDecAttention", crossBias,
                      Causality::Cross, /*causalMask=*/nullptr);
        mb.keepAlive(n, cross);
        x = mb.add(x, mb.dropout(a, cross + ".dropout", c.dropout), cross);
        next = 2;
      }
      std::string ff = (block + ".layer." + Twine(next)).str();
      n = norm(x, ff + ".layer_norm");
      Value f = feedForward(n, ff + ".DenseReluDense");
      mb.keepAlive(n, ff);
      x = mb.add(x, mb.dropout(f, ff + ".dropout", c.dropout), ff);
      mb.keepAlive(input, block);
    }
    x = norm(x, (stack + ".final_layer_norm").str());
    x = mb.dropout(x, (stack + ".dropout").str(), c.dropout);
    for (Value held : {embedded, selfBias, crossBias, causalMask})
      if (held)
        mb.keepAlive(held, stack);
    return x;
  }

  /// T5LayerNorm: x * rsqrt(x.float().pow(2).mean(-1) + eps), times the
  /// weight.
  Value norm(Value x, StringRef layer) {
    return mb.t5LayerNorm(x, layer, c.normEps);
  }

  enum class Causality { Bidirectional, Causal, Cross };

  /// T5Attention over `n` (queries) and `kv` (keys and values: `n` itself,
  /// or the encoder's output), its output projected by `o`. `bias` is the
  /// stack's position bias, made here by the first block that needs it.
  Value attention(Value n, Value kv, size_t block, StringRef module,
                  Value &bias, Causality causality, Value causalMask) {
    auto at = [&](StringRef leaf) { return (module + "." + leaf).str(); };
    Value q =
        mb.splitHeads(mb.linear(n, at("q"), inner, false), module, c.numHeads);
    Value k, v;
    if (causality == Causality::Cross && crossAttentionCache &&
        crossAttentionCache->isDecoding()) {
      // A decode step reads the cross-attention's cache (is_updated).
      k = crossAttentionCache->keys[block];
      v = crossAttentionCache->values[block];
    } else {
      k = mb.splitHeads(mb.linear(kv, at("k"), inner, false), module,
                        c.numHeads);
      v = mb.splitHeads(mb.linear(kv, at("v"), inner, false), module,
                        c.numHeads);
      if (causality != Causality::Bidirectional && model.kvCache) {
        KvCache &cache = causality == Causality::Cross ? *crossAttentionCache
                                                       : *model.kvCache;
        std::tie(k, v) = cache.update(mb, block, k, v, module);
      }
    }
    int64_t queries = ModelBuilder::shapeOf(n)[1],
            keys = ModelBuilder::shapeOf(k)[2];
    if (!bias)
      bias = causality == Causality::Cross
                 // torch.zeros((1, H, T, S)): no relative bias, no grad.
                 ? mb.floatConstant({1, c.numHeads, queries, keys}, 0.0, module)
                 : positionBias(queries, keys, at("relative_attention_bias"));
    Value y;
    if (eager) {
      // eager_attention_forward: (q @ k^T) * 1.0 + bias (+ the causal
      // mask), softmax in the scores' dtype, dropout, @ v.
      Value scores = mb.matmul(q, mb.transpose(k, module, 2, 3), module);
      scores = mb.mul(scores, mb.number(1.0, module), module);
      scores = mb.add(scores, bias, module);
      if (causalMask)
        scores = mb.add(scores, causalMask, module);
      Value probs = mb.softmax(scores, module, /*dim=*/-1);
      probs = mb.dropout(probs, module, c.attentionDropout);
      y = mb.matmul(probs, v, module);
    } else {
      // sdpa_attention_forward: the bias becomes the float attn_mask
      // (create_position_bias_mask(...).contiguous()).
      // A single query (a generation step) is not causal: its bias is the
      // mask as it is.
      Value mask = bias;
      if (causality == Causality::Bidirectional ||
          (causality == Causality::Causal && queries == 1))
        mask = mb.contiguous(bias, module);
      else if (causality == Causality::Causal)
        mask = mb.maskedFill(
            bias,
            mb.reshape(mb.upperTriangleMask(queries, keys, module), module,
                       {1, 1, queries, keys}),
            -std::numeric_limits<float>::max(), module);
      y = mb.attention(
          q, k, v, module, /*causal=*/false,
          backendFor(/*maskRequiresGrad=*/causality != Causality::Cross),
          /*enableGqa=*/false, c.attentionDropout, mask,
          /*scale=*/1.0);
    }
    // T5Attention.forward holds its query, key and value states until it
    // returns.
    Value out =
        mb.linear(mb.mergeHeads(y, module), at("o"), c.hiddenSize, false);
    mb.keepAlive({q, k, v}, module);
    return out;
  }

  /// The kernel sdpa picks for a float mask (getAttentionBackend's for a
  /// masked attention), and on the CPU the math kernel when the mask needs a
  /// gradient (torch._fused_sdp_choice, torch 2.15: the self-attentions'
  /// position biases do, the cross-attention's zeros do not).
  vram::nn::AttentionBackend backendFor(bool maskRequiresGrad) const {
    if (model.attention == vram::nn::AttentionImplementation::Sdpa &&
        model.target.device == vram::nn::Device::Cpu && maskRequiresGrad)
      return vram::nn::AttentionBackend::Math;
    return getAttentionBackend(c, model, /*masked=*/true);
  }

  /// compute_bias: the relative_attention_bias embedding of the [T, S]
  /// bucket indices (a new int64 tensor the embedding keeps), permuted and
  /// unsqueezed into a [1, H, T, S] view.
  Value positionBias(int64_t queries, int64_t keys, StringRef layer) {
    Value buckets = mb.intConstant({queries, keys}, 0, layer);
    Value values =
        mb.embedding(buckets, layer, c.relativeAttentionBuckets, c.numHeads);
    return mb.reshape(mb.permute(values, layer, {2, 0, 1}), layer,
                      {1, c.numHeads, queries, keys});
  }

  /// T5DenseActDense (relu) or T5DenseGatedActDense (gelu_new).
  Value feedForward(Value n, StringRef module) {
    auto at = [&](StringRef leaf) { return (module + "." + leaf).str(); };
    Value h;
    if (c.gatedFeedForward)
      h = mb.mul(mb.geluNew(mb.linear(n, at("wi_0"), c.intermediateSize, false),
                            at("act")),
                 mb.linear(n, at("wi_1"), c.intermediateSize, false), module);
    else
      h = mb.relu(mb.linear(n, at("wi"), c.intermediateSize, false), at("act"),
                  /*inplace=*/false);
    h = mb.dropout(h, at("dropout"), c.dropout);
    return mb.linear(h, at("wo"), c.hiddenSize, false);
  }

  ModelBuilder &mb;
  const CausalLMConfig &c;
  const ModelConfig &model;
  int64_t inner;
  bool eager;
  /// The cross-attention's half of the EncoderDecoderCache (training with
  /// use_cache); the self-attention's is model.kvCache.
  KvCache *crossAttentionCache = nullptr;
};

} // namespace

Value vram::zoo::buildT5(ModelBuilder &mb, Value ids,
                         const CausalLMConfig &config,
                         const ModelConfig &model) {
  return T5Builder(mb, config, model).build(ids);
}
