//===- Llama.cpp - LLaMA-layout decoders (LlamaForCausalLM and kin) -------===//
//
// The decoder layer that transformers' llama, mistral, qwen2, qwen3, gemma,
// gemma2 and the mixture-of-experts mixtral and qwen3_moe share, as their
// modeling code runs it:
//
//   h = embed_tokens(ids)                    (gemma: * sqrt(hidden_size))
//   for each layer: h = h + o_proj(attn(rope(q_proj(n1(h))), rope(k), v))
//                   h = h + down_proj(act(gate_proj(n2(h))) * up_proj(n2(h)))
//   logits = lm_head(norm(h))                (tied: embed_tokens.weight)
//
// Gemma 2 adds sandwich norms (each block's output normalized before its
// residual add), soft-capped attention scores and logits
// (tanh(x / cap) * cap), and runs eager attention only; Gemma 3 keeps the
// sandwich norms, adds qwen3's q/k norms and computes rotary tables per layer
// type (full and sliding attention).
//
// RMSNorm runs decomposed (pow, mean, add, rsqrt, mul, mul by weight), as
// the model's code does, not as a fused rms_norm, and in float32 up to the
// weight (nn.float32: the upcast is the identity for an fp32 model; in a
// bf16 one vram-precision casts x up and the result down, which measured
// torch 2.15 to the byte, test/Transforms/parallel-fsdp.test). Gemma's norm
// scales by (1 + weight) in float32 as well.
// Attention is causal sdpa with the flash kernel. With fewer KV heads than
// heads, transformers passes enable_gqa to a mask-free sdpa on torch >= 2.5
// (the kernel keeps K and V unrepeated; measured with torch 2.15, see
// test/Import/HuggingFace/saved.test); on torch 1.13, repeat_kv copies K and
// V up to the heads first. Where transformers hands sdpa a mask instead of
// is_causal (padded rows, a packed row without a cache, a sliding layer
// whose keys reach the window: passesAttentionMask), the fused kernel keeps a
// float copy of it per layer and K and V are repeated
// (test/Import/HuggingFace/packing.test).
//
// Rotary embeddings have no parameters but do cost memory and FLOPs, so they
// are modelled as in HuggingFace's apply_rotary_pos_emb,
//   q * cos + rotate_half(q) * sin,
// with cos/sin tables computed in forward from the inv_freq buffer ([1, T,
// D], as transformers >= 4.38 does) or as buffers
// `model.rotary_emb.{cos,sin}_cached` [T, D] (older releases cache them exactly
// so; the zoo's llama-7b). The dialect has no negation, so rotate_half(q) =
// cat(-q2, q1) is written cat(q2, q1) and the sign is folded into the sin table
// (its first half holds -sin).
//
//===----------------------------------------------------------------------===//

#include "Models.h"

#include "llvm/ADT/Twine.h"

#include <array>
#include <cmath>
#include <tuple>

using namespace mlir;
using namespace vram::zoo;

namespace {

struct Rotary {
  Value cos, sin;
};

class LlamaBuilder {
public:
  LlamaBuilder(ModelBuilder &mb, const CausalLMConfig &c,
               const ModelConfig &model)
      : mb(mb), c(c), model(model) {}

  Value build(Value ids) {
    int64_t seq = ModelBuilder::shapeOf(ids)[1];
    Value x, embed;
    if (int64_t ranks = model.tensorParallel;
        ranks > 1 && model.tensorParallelEmbedding) {
      // --tp-plan=vocab: this rank's vocab / N rows; lm_head is its own
      // shard, so a tied lm_head never reads this table.
      x = mb.vocabParallelEmbedding(
          ids, "model.embed_tokens",
          mb.param("model.embed_tokens", "weight",
                   {c.vocabSize / ranks, c.hiddenSize}),
          ranks);
    } else {
      embed =
          mb.param("model.embed_tokens", "weight", {c.vocabSize, c.hiddenSize});
      x = mb.embedding(ids, "model.embed_tokens", embed);
    }
    // Gemma: GemmaTextScaledWordEmbedding multiplies by its 0-d buffer
    // embed_scale = sqrt(hidden_size) (non-persistent).
    if (c.gemmaScaling)
      x = mb.mul(x, mb.buffer("model.embed_tokens", "embed_scale", {}),
                 "model.embed_tokens");
    // The masks LlamaModel.forward makes for sdpa (passesAttentionMask),
    // one per layer type that needs one: bool [B, 1, T, keys] (a cache's
    // keys: all it attends to).
    int64_t batch = ModelBuilder::shapeOf(ids)[0];
    Value masks[2]; // full, sliding
    for (int64_t i = 0; i < c.numLayers; ++i) {
      bool sliding = c.isSlidingLayer(i);
      if (masks[sliding] || !passesAttentionMask(c, model, sliding))
        continue;
      int64_t keys =
          model.kvCache ? model.kvCache->keyLength(seq, slidingWindow(i)) : seq;
      masks[sliding] = mb.attentionMask({batch, 1, seq, keys}, "model");
    }
    Value unusedMask;
    if (c.buildsUnusedSlidingWindowMask) {
      int64_t past = model.kvCache ? model.kvCache->position : 0;
      unusedMask = mb.boolTensor({seq, past + seq}, "model");
    }
    // One set of rotary tables, or one per layer type (Gemma 3's full and
    // sliding layers, in transformers' order: sorted by name).
    Rotary rope, slidingRope;
    const std::vector<bool> &sliding = c.slidingAttentionLayers;
    bool anySliding = llvm::is_contained(sliding, true);
    bool anyFull = sliding.empty() || llvm::is_contained(sliding, false);
    if (c.rotaryInForward) {
      if (anyFull)
        rope =
            rotaryTables(batch, seq, sliding.empty() ? "" : "full_attention_");
      if (anySliding)
        slidingRope = rotaryTables(batch, seq, "sliding_attention_");
    } else {
      rope = cachedRotaryTables(seq);
    }
    // LlamaModel.forward holds `inputs_embeds`, the rotary tables
    // (`position_embeddings`) and the masks until it returns.
    SmallVector<Value> modelLocals{
        x,          rope.cos, rope.sin, slidingRope.cos, slidingRope.sin,
        unusedMask, masks[0], masks[1]};
    llvm::erase(modelLocals, Value());
    // Sequence parallelism: the first layer takes this rank's positions of
    // the embedding (PrepareModuleInput Replicate -> Shard(1) on
    // model.layers.0); the masks and rotary tables stay whole.
    if (model.sequenceParallel)
      x = mb.splitSequence(x, "model.layers.0", model.tensorParallel);
    for (int64_t i = 0; i < c.numLayers; ++i)
      x = decoderLayer(x, !sliding.empty() && sliding[i] ? slidingRope : rope,
                       masks[c.isSlidingLayer(i)], i);
    x = rmsNorm(x, "model.norm");
    mb.keepAlive(modelLocals, "model");
    // generate() asks for the last position's logits only (logits_to_keep:
    // lm_head(hidden_states[:, -1:, :])).
    Value hidden = x;
    if (model.kvCache && model.kvCache->generation && seq > 1)
      x = mb.slice(x, "model", 1, seq - 1, seq);
    Value logits = lmHead(x, embed);
    if (c.finalLogitSoftcap)
      logits = mb.softcap(logits, *c.finalLogitSoftcap, "softcap");
    // LlamaForCausalLM.forward holds the hidden states until it returns.
    mb.keepAlive(hidden, "model");
    return logits;
  }

private:
  /// Layer `index`'s sliding window, if it attends within one.
  std::optional<int64_t> slidingWindow(int64_t index) const {
    return c.isSlidingLayer(index) ? c.slidingWindow : std::nullopt;
  }

  /// LlamaRotaryEmbedding.forward (no_grad): [1, T, rotary dim] tables;
  /// in generation [B, T, rotary dim] (generate() passes position_ids
  /// [B, T], from the attention_mask's cumsum).
  Rotary rotaryTables(int64_t batch, int64_t seq, StringRef prefix) {
    bool generation = model.kvCache && model.kvCache->generation;
    auto [cos, sin] = mb.rotaryTables(seq, rotaryDim(), "model.rotary_emb",
                                      prefix, generation ? batch : 1);
    return {cos, sin};
  }

  /// The `model.rotary_emb.{cos,sin}_cached` buffers [T, D] of the
  /// positions the model reads (a generation's: all it reaches), sliced to
  /// the forward's tokens.
  Rotary cachedRotaryTables(int64_t seq) {
    int64_t total = model.kvCache ? model.kvCache->totalTokens : seq;
    Rotary rope{
        mb.buffer("model.rotary_emb", "cos_cached", {total, c.headDim}),
        mb.buffer("model.rotary_emb", "sin_cached", {total, c.headDim})};
    if (total == seq)
      return rope;
    int64_t first = model.kvCache->position;
    return {mb.slice(rope.cos, "model.rotary_emb", 0, first, first + seq),
            mb.slice(rope.sin, "model.rotary_emb", 0, first, first + seq)};
  }

  Value rmsNorm(Value x, const std::string &name) {
    if (model.liger.rmsNorm)
      return mb.ligerRmsNorm(x, name, c.normEps,
                             model.liger.rmsNormPartialRows);
    if (!c.gemmaScaling)
      return mb.decomposedRmsNorm(x, name, c.normEps);
    return mb.decomposedRmsNorm(x, name, c.normEps, /*unitOffset=*/true);
  }

  /// The rotated width of a head.
  int64_t rotaryDim() const { return c.rotaryDim ? c.rotaryDim : c.headDim; }

  Value applyRotary(Value x, const Rotary &rope, const std::string &name) {
    return mb.applyRotary(x, rope.cos, rope.sin, rotaryDim(),
                          c.rotaryConcatenates, name);
  }

  /// repeat_kv: [B, KV, T, D] -> expand [B, KV, n, T, D] -> [B, KV*n, T, D].
  Value repeatKeyValue(Value x, const std::string &name) {
    int64_t groups = c.numHeads / c.numKeyValueHeads;
    if (groups == 1)
      return x;
    ArrayRef<int64_t> s = ModelBuilder::shapeOf(x);
    Value unsqueezed = mb.reshape(x, name, {s[0], s[1], 1, s[2], s[3]});
    Value expanded =
        mb.expand(unsqueezed, name, {s[0], s[1], groups, s[2], s[3]});
    return mb.reshape(expanded, name, {s[0], s[1] * groups, s[2], s[3]});
  }

  /// transformers' eager_attention_forward with K and V repeated to the
  /// heads first (repeat_kv).
  Value eagerAttention(Value q, Value k, Value v, const std::string &name) {
    return mb.eagerAttention(
        q, repeatKeyValue(k, name), repeatKeyValue(v, name), name,
        c.attentionScaling.value_or(1.0 / std::sqrt((double)c.headDim)),
        c.attentionSoftcap, c.attentionDropout);
  }

  /// q_proj/k_proj/v_proj, split into heads (qwen3: q_norm/k_norm per
  /// head), rotary on q and k.
  Value project(Value x, const std::string &name, StringRef which,
                int64_t heads) {
    std::string proj = name + "." + which.str() + "_proj";
    heads /= model.tensorParallel; // this rank's heads
    Value y = mb.linear(columnParallelInput(x, proj), proj, heads * c.headDim,
                        c.qkvBias);
    ArrayRef<int64_t> s = ModelBuilder::shapeOf(y);
    y = mb.reshape(y, name, {s[0], s[1], heads, c.headDim});
    if (c.qkNorm && which != "v")
      y = rmsNorm(y, name + "." + which.str() + "_norm");
    return mb.transpose(y, name, 1, 2);
  }

  /// Phi-3's qkv_proj: one linear whose output's consecutive slices are q,
  /// k and v (views), each split into heads.
  std::array<Value, 3> fusedProjection(Value x, const std::string &name) {
    std::string proj = name + ".qkv_proj";
    int64_t widths[3] = {c.numHeads * c.headDim, c.numKeyValueHeads * c.headDim,
                         c.numKeyValueHeads * c.headDim};
    Value qkv = gatheredColumnParallel(
        x, proj, widths[0] + widths[1] + widths[2], c.qkvBias);
    ArrayRef<int64_t> s = ModelBuilder::shapeOf(qkv);
    std::array<Value, 3> heads;
    for (int64_t i = 0, start = 0; i < 3; start += widths[i++]) {
      Value y = mb.slice(qkv, name, 2, start, start + widths[i]);
      y = mb.reshape(y, name, {s[0], s[1], widths[i] / c.headDim, c.headDim});
      heads[i] = mb.transpose(y, name, 1, 2);
    }
    return heads;
  }

  /// The layer's attention; `mask` the bool mask transformers hands sdpa
  /// (null: is_causal).
  Value selfAttention(Value x, const Rotary &rope, Value mask, int64_t index,
                      const std::string &name) {
    Value q, k, v;
    if (c.fusedProjections) {
      auto [fq, fk, fv] = fusedProjection(x, name);
      q = fq, k = fk, v = fv;
    } else {
      q = project(x, name, "q", c.numHeads);
      k = project(x, name, "k", c.numKeyValueHeads);
      v = project(x, name, "v", c.numKeyValueHeads);
    }
    Value unrotatedQ = q, unrotatedK = k;
    if (model.liger.rope) {
      // sdpa's fused kernels hand back dq and dk laid out as q and k; a
      // key repeated to the heads, or copied into the training forward's
      // DynamicCache, gets its gradient from a contiguous one.
      bool eager =
          model.attention == vram::nn::AttentionImplementation::Eager ||
          c.eagerAttentionOnly;
      bool fused = !eager && getAttentionBackend(c, model, bool(mask)) !=
                                 vram::nn::AttentionBackend::Math;
      bool repeated = c.numKeyValueHeads != c.numHeads &&
                      (eager || mask ||
                       model.target.version == vram::nn::TorchVersion::V1_13);
      std::tie(q, k) =
          mb.ligerRope(q, k, rope.cos, rope.sin, name + ".rotary", fused,
                       fused && !repeated && !model.kvCache);
    } else {
      q = applyRotary(q, rope, name + ".rotary");
      k = applyRotary(k, rope, name + ".rotary");
    }
    // apply_rotary_pos_emb's caller holds q and k until it returns.
    mb.keepAlive({unrotatedQ, unrotatedK}, name + ".rotary");
    // A decode step's query attends to every cached position: no mask, not
    // causal (transformers skips the mask for a single query).
    bool causal = true;
    if (model.kvCache) {
      std::tie(k, v) =
          model.kvCache->update(mb, index, k, v, name, slidingWindow(index));
      causal = !model.kvCache->isDecoding();
    }
    bool grouped = c.numKeyValueHeads != c.numHeads;
    // The attention's locals (query, key and value states) are held until
    // it returns, after o_proj.
    if (model.attention == vram::nn::AttentionImplementation::Eager ||
        c.eagerAttentionOnly) {
      Value merged = mb.mergeHeads(eagerAttention(q, k, v, name), name);
      Value out = outputProjection(merged, name);
      mb.keepAlive({q, k, v}, name);
      return out;
    }
    vram::nn::AttentionBackend backend =
        getAttentionBackend(c, model, /*masked=*/bool(mask));
    // sdpa's math kernel repeats K and V itself (repeat_interleave), and
    // transformers passes enable_gqa only without a mask (use_gqa_in_sdpa);
    // with one, a decode step's single query is regrouped instead
    // (pack_gqa: [B, H, 1, D] viewed as [B, KV heads, H / KV heads, D]), so
    // K and V are not repeated either.
    bool packedQuery = mask && model.kvCache && model.kvCache->isDecoding();
    bool enableGqa = grouped && (!mask || packedQuery) &&
                     model.target.version != vram::nn::TorchVersion::V1_13 &&
                     backend != vram::nn::AttentionBackend::Math;
    if (grouped && !enableGqa) {
      k = repeatKeyValue(k, name);
      v = repeatKeyValue(v, name);
    }
    Value y = mb.attention(q, k, v, name, causal && !mask, backend, enableGqa,
                           c.attentionDropout, mask);
    Value out = outputProjection(mb.mergeHeads(y, name), name);
    mb.keepAlive({q, k, v}, name);
    return out;
  }

  Value activation(Value x, const std::string &name) {
    return c.activation == GatedActivation::Silu
               ? mb.silu(x, name + ".act_fn")
               : mb.gelu(x, name + ".act_fn",
                         vram::nn::GeluApproximation::Tanh);
  }

  /// LlamaMLP: down_proj(act(gate_proj(x)) * up_proj(x)), of width
  /// `width` (the config's intermediate_size by default).
  Value mlp(Value x, const std::string &name,
            std::optional<int64_t> width = std::nullopt) {
    if (c.fusedProjections) {
      // Phi3MLP: gate, up = gate_up_proj(x).chunk(2); up * act(gate).
      int64_t inner = width.value_or(c.intermediateSize);
      Value gateUp = gatheredColumnParallel(x, name + ".gate_up_proj",
                                            2 * inner, c.mlpBias);
      SmallVector<Value> halves = mb.split(gateUp, name, 2, {inner, inner});
      Value gate = activation(halves[0], name);
      Value up = halves[1];
      return splitRowParallel(mb.mul(up, gate, name), name + ".down_proj",
                              c.hiddenSize, c.mlpBias);
    }
    int64_t inner = width.value_or(c.intermediateSize) / model.tensorParallel;
    Value gate = mb.linear(columnParallelInput(x, name + ".gate_proj"),
                           name + ".gate_proj", inner, c.mlpBias);
    if (model.liger.swiglu) {
      // LigerSwiGLUMLP: down_proj(silu_mul(gate_proj(x), up_proj(x))).
      Value up = mb.linear(columnParallelInput(x, name + ".up_proj"),
                           name + ".up_proj", inner, c.mlpBias);
      return rowParallel(mb.ligerSwiglu(gate, up, name), name + ".down_proj",
                         c.hiddenSize, c.mlpBias);
    }
    gate = activation(gate, name);
    Value up = mb.linear(columnParallelInput(x, name + ".up_proj"),
                         name + ".up_proj", inner, c.mlpBias);
    return rowParallel(mb.mul(gate, up, name), name + ".down_proj",
                       c.hiddenSize, c.mlpBias);
  }

  /// The sparse mixture-of-experts block (MixtralSparseMoeBlock,
  /// Qwen3MoeSparseMoeBlock) as transformers >= 5 runs it where torch has
  /// grouped_mm (its default experts implementation, "grouped_mm"):
  ///
  ///   x = h.view(-1, H)                                  [T, H]
  ///   logits = gate(x); probs = softmax(logits.float())  [T, E], kept
  ///   w, idx = topk(probs, k)                            idx kept
  ///   w /= w.sum(-1, keepdim=True)   (norm_topk_prob)    a clone of w kept
  ///   the S = T * k (token, expert) pairs sorted by expert, each pair's
  ///   token row and weight gathered (nn.moe_dispatch, nn.embedding),
  ///   gate_up = grouped_mm(rows, gate_up_proj)           [S, 2 I]
  ///   y = grouped_mm(silu(gate) * up, down_proj)         [S, H]
  ///   (y * w[pairs])[inverse].view(T, k, H).sum(1)       [T, H]
  ///
  /// Every size is S, T or E: the same for any routing. What each module's
  /// code holds in locals until it returns is kept alive as long: the
  /// router its probabilities, the block the router's three results, the
  /// experts the sorted ids and their permutation, histc's input and
  /// counts, the offsets, the gathered rows and weights and the down
  /// projection (training saves most of them anyway; inference measured
  /// 1 MiB higher without).
  ///
  /// Qwen2MoeSparseMoeBlock first runs its shared expert (an MLP) on x, and
  /// adds its output times sigmoid(shared_expert_gate(x)) to the experts'.
  Value sparseMoe(Value x, const std::string &name) {
    ArrayRef<int64_t> shape = ModelBuilder::shapeOf(x);
    int64_t tokens = shape[0] * shape[1], hidden = c.hiddenSize;
    int64_t experts = c.numExperts, k = c.numExpertsPerToken;
    int64_t inner = c.expertIntermediateSize, pairs = tokens * k;
    std::string gateName = name + ".gate", expertsName = name + ".experts";
    Value flat = mb.reshape(x, name, {tokens, hidden});
    Value shared;
    if (c.sharedExpertIntermediateSize)
      shared =
          mlp(flat, name + ".shared_expert", c.sharedExpertIntermediateSize);
    Value router = mb.param(gateName, "weight", {experts, hidden});
    // TopKRouter is a module of transformers' own calling F.linear:
    // bitsandbytes and peft leave it.
    Value logits =
        mb.functional(mb.linear(flat, gateName, router, /*bias=*/Value()));
    // The routing runs in float32 in a low-precision model (`.float()`
    // before the softmax, or softmax(..., dtype=torch.float)); Qwen3-MoE
    // casts the weights back to the model's dtype, Mixtral keeps them.
    Value probs = mb.inFloat32(mb.softmax(logits, gateName, /*dim=*/-1));
    auto [weights, chosen] = mb.topk(probs, gateName, k);
    mb.inFloat32(weights);
    if (c.normalizeTopKProbabilities)
      weights = mb.inFloat32(mb.div(
          weights,
          mb.inFloat32(mb.sum(weights, gateName, {-1}, /*keepdim=*/true)),
          gateName, /*inplace=*/true));
    mb.keepAlive(probs, gateName);
    auto float32Weights = [&](Value v) {
      return c.routerWeightsInFloat32 ? mb.inFloat32(v) : v;
    };

    ModelBuilder::MoeDispatch dispatch =
        mb.moeDispatch(chosen, experts, expertsName);
    // x[index] of rows is F.embedding's gather (the same saved indices and
    // backward); the pairs' weights [S] gather as [S, 1], the unsqueezed
    // view transformers multiplies by.
    Value rows = mb.embedding(dispatch.tokenIndex, expertsName, flat);
    Value pairWeights = float32Weights(mb.embedding(
        dispatch.perm, expertsName,
        float32Weights(mb.reshape(weights, expertsName, {pairs, 1}))));
    Value gateUp = mb.groupedMm(
        rows,
        mb.param(expertsName, "gate_up_proj", {experts, 2 * inner, hidden}),
        dispatch.offsets, expertsName);
    // gate_up_out.chunk(2, dim=-1).
    SmallVector<Value> halves =
        mb.split(gateUp, expertsName, 1, {inner, inner});
    Value gate = halves[0], up = halves[1];
    Value y = mb.mul(mb.silu(gate, expertsName + ".act_fn"), up, expertsName);
    Value down = mb.groupedMm(
        y, mb.param(expertsName, "down_proj", {experts, hidden, inner}),
        dispatch.offsets, expertsName);
    // Mixtral: bf16 rows times float32 weights are float32 until the
    // experts return `final_hidden_states.to(hidden_states.dtype)`.
    y = mb.mul(down, pairWeights, expertsName);
    if (c.routerWeightsInFloat32)
      mb.promoting(y);
    y = float32Weights(mb.embedding(dispatch.inverse, expertsName, y));
    y = float32Weights(
        mb.sum(float32Weights(mb.reshape(y, expertsName, {tokens, k, hidden})),
               expertsName, {1}, /*keepdim=*/false));
    mb.keepAlive({dispatch.sorted, dispatch.perm, dispatch.histogram,
                  dispatch.counts, dispatch.offsets, rows, pairWeights, down},
                 expertsName);
    // The block holds what the router returned until the experts return.
    mb.keepAlive({logits, weights, chosen}, name);
    if (shared) {
      std::string sharedGate = name + ".shared_expert_gate";
      Value scale =
          mb.sigmoid(mb.linear(flat, sharedGate, 1, /*bias=*/false), name);
      y = mb.add(y, mb.mul(scale, shared, name), name);
    }
    return mb.reshape(y, name, shape);
  }

  /// Tensor parallelism (torch's ColwiseParallel and RowwiseParallel on
  /// q/k/v/gate/up and o/down, as parallelize_module applies them): a
  /// column-parallel linear holds rows out / N of its weight and reads its
  /// input as a replicated DTensor, whose gradient is all-reduced; a
  /// row-parallel one holds columns in / N and all-reduces its partial
  /// output. Heads and the MLP's inner width split N ways; transformers'
  /// view(..., -1, head_dim) follows. The embeddings, norms and lm_head
  /// stay whole on every rank.
  Value columnParallelInput(Value x, const std::string &name) {
    if (model.tensorParallel == 1)
      return x;
    return mb.allReduceGrad(x, name, model.tensorParallel);
  }
  /// A row-parallel linear (o_proj, down_proj). RowwiseParallel's output
  /// hook all-reduces inside the module's call, whose arguments hold the
  /// input until then.
  Value rowParallel(Value x, const std::string &name, int64_t out, bool bias) {
    Value y = mb.linear(x, name, out, bias);
    if (model.tensorParallel == 1)
      return y;
    // Under sequence parallelism (RowwiseParallel(output_layouts=Shard(1)))
    // the partial sums are reduce-scattered into this rank's positions.
    y = model.sequenceParallel
            ? mb.reduceScatterSequence(y, name, model.tensorParallel)
            : mb.allReduce(y, name, model.tensorParallel);
    mb.keepAlive(x, name);
    return y;
  }

  /// lm_head, tied to the embedding or its own. Under transformers' tp
  /// plan ("colwise_gather_output") it is column-parallel: each rank holds
  /// vocab / N rows, reads the replicated hidden states and all-gathers its
  /// logits. Sharding replaces lm_head's weight by a new parameter, so a
  /// tied lm_head becomes its own shard and the embedding stays whole
  /// (measured: tp.py's qwen2_tp2_adam_transformers); likewise a sharded
  /// embedding (`embed` null) leaves a tied lm_head its whole weight.
  Value lmHead(Value x, Value embed) {
    int64_t ranks = model.tensorParallel;
    if (ranks == 1 || !model.tensorParallelLmHead)
      return c.tieWordEmbeddings && embed
                 ? mb.linear(x, "lm_head", embed, /*bias=*/Value())
                 : mb.linear(x, "lm_head", c.vocabSize, /*bias=*/false);
    // Under sequence parallelism lm_head reads the final norm's positions
    // of every rank (ColwiseParallel(input_layouts=Shard(1))): gathered as a
    // DTensor, whose partial gradient is reduce-scattered back.
    Value input = model.sequenceParallel
                      ? mb.gatherSequence(x, "lm_head", ranks,
                                          /*scatterGrad=*/true)
                      : columnParallelInput(x, "lm_head");
    Value shard =
        mb.linear(input, "lm_head", c.vocabSize / ranks, /*bias=*/false);
    Value logits = mb.allGatherOutput(shard, "lm_head", ranks);
    // The gathered input is lm_head's argument, held until its output hook
    // has gathered the logits (measured: tp.py's llama-mha_tp2_inference_sp).
    if (model.sequenceParallel)
      mb.keepAlive(input, "lm_head");
    return logits;
  }

  /// Phi-3's plan (transformers' Phi3Config.base_model_tp_plan): the fused
  /// qkv_proj and gate_up_proj are column-parallel with their outputs
  /// gathered ("colwise_gather_output": q, k and v, gate and up are sliced
  /// from the whole output), so every rank computes every head; o_proj and
  /// down_proj are row-parallel over their replicated inputs' columns
  /// ("rowwise_split_input").
  Value gatheredColumnParallel(Value x, const std::string &name, int64_t out,
                               bool bias) {
    int64_t ranks = model.tensorParallel;
    if (ranks == 1)
      return mb.linear(x, name, out, bias);
    Value shard =
        mb.linear(columnParallelInput(x, name), name, out / ranks, bias);
    return mb.allGatherOutput(shard, name, ranks);
  }
  /// o_proj: row-parallel over this rank's heads, or (Phi-3) over its
  /// columns of every head's merged output.
  Value outputProjection(Value merged, const std::string &name) {
    return c.fusedProjections ? splitRowParallel(merged, name + ".o_proj",
                                                 c.hiddenSize, c.outputBias)
                              : rowParallel(merged, name + ".o_proj",
                                            c.hiddenSize, c.outputBias);
  }
  Value splitRowParallel(Value x, const std::string &name, int64_t out,
                         bool bias) {
    if (model.tensorParallel == 1)
      return mb.linear(x, name, out, bias);
    return rowParallel(mb.splitInput(x, name, model.tensorParallel), name, out,
                       bias);
  }

  /// Sequence parallelism: the attention's or the MLP's input, the norm's
  /// positions of every rank gathered (PrepareModuleInput Shard(1) ->
  /// Replicate, a local tensor inside), which the module's call holds until
  /// it returns; else `x`.
  Value gatherSequence(Value x, const std::string &module) {
    if (!model.sequenceParallel)
      return x;
    return mb.gatherSequence(x, module, model.tensorParallel);
  }

  /// Pre-norm residual blocks; Gemma 2 also normalizes each block's output
  /// (sandwich norms).
  Value decoderLayer(Value x, const Rotary &rope, Value mask, int64_t index) {
    std::string name = ("model.layers." + Twine(index)).str();
    // Each module's caller holds the argument it passed until the module
    // returns: the layer's input (LlamaModel.forward) and the normalized
    // inputs of the attention and the MLP (the layer's `hidden_states`).
    Value input = x;
    Value h = rmsNorm(x, name + ".input_layernorm");
    Value attnInput = h, attnArg = gatherSequence(h, name + ".self_attn");
    h = selfAttention(attnArg, rope, mask, index, name + ".self_attn");
    mb.keepAlive(attnInput, name + ".self_attn");
    if (attnArg != attnInput)
      mb.keepAlive(attnArg, name + ".self_attn");
    if (c.sandwichNorms)
      h = rmsNorm(h, name + ".post_attention_layernorm");
    h = mb.dropout(h, name + ".resid_attn_dropout", c.residualDropout);
    x = mb.add(x, h, name + ".add");
    h = rmsNorm(x, name + (c.sandwichNorms ? ".pre_feedforward_layernorm"
                                           : ".post_attention_layernorm"));
    Value mlpInput = h;
    bool sparse =
        c.numExperts && (c.denseLayers.empty() || !c.denseLayers[index]);
    Value mlpArg = gatherSequence(h, name + ".mlp");
    h = sparse ? sparseMoe(mlpArg, name + ".mlp") : mlp(mlpArg, name + ".mlp");
    if (mlpArg != mlpInput)
      mb.keepAlive(mlpArg, name + ".mlp");
    mb.keepAlive(mlpInput, name + ".mlp");
    if (c.sandwichNorms)
      h = rmsNorm(h, name + ".post_feedforward_layernorm");
    h = mb.dropout(h, name + ".resid_mlp_dropout", c.residualDropout);
    Value out = mb.add(x, h, name + ".add");
    mb.keepAlive(input, name);
    // transformers' decoder layers register self_attn, mlp, then the norms
    // (Phi-3's attention its o_proj before qkv_proj; Qwen3's q_norm and
    // k_norm after o_proj; a sparse MLP its router, experts, shared
    // expert and its gate).
    static constexpr StringRef kFused[] = {
        "self_attn.o_proj",          "self_attn.qkv_proj",
        "mlp.gate_up_proj",          "mlp.down_proj",
        "input_layernorm",           "post_attention_layernorm",
        "pre_feedforward_layernorm", "post_feedforward_layernorm"};
    static constexpr StringRef kSeparate[] = {"self_attn.q_proj",
                                              "self_attn.k_proj",
                                              "self_attn.v_proj",
                                              "self_attn.o_proj",
                                              "self_attn.q_norm",
                                              "self_attn.k_norm",
                                              "mlp.gate",
                                              "mlp.experts",
                                              "mlp.shared_expert",
                                              "mlp.shared_expert_gate",
                                              "mlp.gate_proj",
                                              "mlp.up_proj",
                                              "mlp.down_proj",
                                              "input_layernorm",
                                              "post_attention_layernorm",
                                              "pre_feedforward_layernorm",
                                              "post_feedforward_layernorm"};
    mb.orderParams(name, c.fusedProjections ? ArrayRef<StringRef>(kFused)
                                            : ArrayRef<StringRef>(kSeparate));
    return out;
  }

  ModelBuilder &mb;
  const CausalLMConfig &c;
  const ModelConfig &model;
};

} // namespace

Value vram::zoo::buildLlamaDecoder(ModelBuilder &mb, Value ids,
                                   const CausalLMConfig &config,
                                   const ModelConfig &model) {
  return LlamaBuilder(mb, config, model).build(ids);
}

/// LLaMA-7B: 32 decoder layers, d = 4096, 32 heads, SwiGLU MLP of 11008,
/// RMSNorm (eps 1e-6, no bias), vocab 32000, untied lm_head, no biases.
CausalLMConfig vram::zoo::getLlama7bConfig() {
  CausalLMConfig c;
  c.name = "llama-7b";
  c.layout = DecoderLayout::Llama;
  c.vocabSize = 32000;
  c.hiddenSize = 4096;
  c.numLayers = 32;
  c.numHeads = 32;
  c.numKeyValueHeads = 32;
  c.headDim = 128;
  c.intermediateSize = 11008;
  c.normEps = 1e-6;
  return c;
}
