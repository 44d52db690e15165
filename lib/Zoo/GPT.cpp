//===- GPT.cpp - GPT-style decoders: GPT-2, tiny_gpt, gpt_mini ------------===//
//
// All three are the same pre-LN decoder:
//
//   x = drop(tok(ids) + pos(arange(T)))
//   for each block: x = x + drop(proj(attn(ln1(x))))
//                   x = x + drop(fc2(gelu(fc1(ln2(x)))))
//   logits = head(ln_f(x))
//
// with qkv one Linear(d, 3d) split in three. They differ in names, dropout,
// GELU flavour, the attention (sdpa with a given kernel, or written out as
// matmul / masked_fill / softmax / matmul) and whether the head is tied to
// the token embedding; GptConfig spells these out.
//
// The position lookup `pos(arange(T))` embeds an nn.constant arange, which
// the embedding keeps for backward (T int64 indices) as PyTorch does.
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

struct GptConfig {
  int64_t vocab, positions, dim, heads, layers, mlp;
  double dropout;
  double lnEps = 1e-5;
  /// sdpa's dropout_p (attn_pdrop); 0 for the zoo's models.
  double attnDropout = 0.0;
  vram::nn::GeluApproximation gelu =
      vram::nn::GeluApproximation::None; ///< Tanh for GPT-2's gelu_new
  /// transformers' gelu_new written out (NewGELUActivation) instead of a
  /// fused GELU.
  bool decomposedGelu = false;
  /// The sdpa kernel, unless explicitAttention.
  vram::nn::AttentionBackend attentionBackend =
      vram::nn::AttentionBackend::Flash;
  bool explicitAttention = false; ///< matmul / masked_fill / softmax / matmul
  /// transformers' GPT-2 eager_attention_forward (--attention=eager): the
  /// scaled scores plus the mask, softmax in their dtype, dropout, matmul.
  bool eagerAttention = false;
  bool tiedHead; ///< the head reuses the token embedding, no bias
  /// The cache of a generation program's forward (ModelConfig::kvCache).
  KvCache *kvCache = nullptr;
  /// transformers hands sdpa a mask (passesAttentionMask: a packed row).
  bool masked = false;
  /// Tensors live as transformers' Python frames hold them (nn.keep_alive:
  /// module inputs while the module runs, the model's embeddings until it
  /// returns), not only until their last use.
  bool pythonLifetimes = false;

  // Module names (state_dict prefixes); those of blocks are relative to
  // `<block>.<i>`. `root` is the module whose forward embeds the tokens.
  llvm::StringRef root, tokEmb, posEmb, embDrop, block, ln1, qkv, attnProj,
      attnDrop, ln2, fc1, act, fc2, mlpDrop, lnF, head;
};

/// HuggingFace GPT2LMHeadModel's names. Its Conv1D layers store weights as
/// [in, out]; here they are nn.linear weights [out, in], with the same
/// element count.
GptConfig gpt2Names(GptConfig c) {
  c.dropout = 0.1;
  c.gelu = vram::nn::GeluApproximation::Tanh;
  c.attentionBackend = vram::nn::AttentionBackend::Flash;
  c.tiedHead = true;
  c.root = "transformer";
  c.tokEmb = "transformer.wte";
  c.posEmb = "transformer.wpe";
  c.embDrop = "transformer.drop";
  c.block = "transformer.h";
  c.ln1 = "ln_1";
  c.qkv = "attn.c_attn";
  c.attnProj = "attn.c_proj";
  c.attnDrop = "attn.resid_dropout";
  c.ln2 = "ln_2";
  c.fc1 = "mlp.c_fc";
  c.act = "mlp.act";
  c.fc2 = "mlp.c_proj";
  c.mlpDrop = "mlp.dropout";
  c.lnF = "transformer.ln_f";
  c.head = "lm_head";
  return c;
}

/// Causal self-attention: qkv, split into heads, attention, merge,
/// projection.
Value causalSelfAttention(ModelBuilder &mb, Value x, Value mask,
                          const GptConfig &c, int64_t index,
                          const Twine &prefix) {
  std::string qkvName = (prefix + "." + c.qkv).str();
  // The attention runs in the module that owns the qkv projection.
  std::string attnName = llvm::StringRef(qkvName).rsplit('.').first.str();

  // c_attn(x).split(dim, dim=2).
  Value qkv = mb.linear(x, qkvName, 3 * c.dim);
  SmallVector<Value> pieces = mb.split(qkv, attnName, 2, {c.dim, c.dim, c.dim});
  Value heads[3];
  for (int i = 0; i < 3; ++i)
    heads[i] = mb.splitHeads(pieces[i], attnName, c.heads);
  // A decode step's query attends to every cached position, unmasked.
  bool causal = true;
  if (c.kvCache) {
    std::tie(heads[1], heads[2]) =
        c.kvCache->update(mb, index, heads[1], heads[2], attnName);
    causal = !c.kvCache->isDecoding();
  }
  Value y;
  if (c.explicitAttention)
    y = mb.matmulAttention(heads[0], heads[1], heads[2], attnName, causal);
  else if (c.eagerAttention)
    y = mb.eagerAttention(heads[0], heads[1], heads[2], attnName,
                          1.0 / std::sqrt((double)(c.dim / c.heads)),
                          /*softcap=*/std::nullopt, c.attnDropout,
                          /*softmaxInFloat32=*/false);
  else
    y = mb.attention(heads[0], heads[1], heads[2], attnName, causal && !mask,
                     c.attentionBackend,
                     /*enableGqa=*/false, c.attnDropout, mask);
  y = mb.linear(mb.mergeHeads(y, attnName), (prefix + "." + c.attnProj).str(),
                c.dim);
  y = mb.dropout(y, (prefix + "." + c.attnDrop).str(), c.dropout);
  // The attention's query, key and value states are held until it returns.
  if (c.pythonLifetimes)
    mb.keepAlive(heads, attnName);
  return y;
}

/// A block; `mask` the mask its sdpa takes (null: is_causal).
Value gptBlock(ModelBuilder &mb, Value x, Value mask, const GptConfig &c,
               int64_t index) {
  std::string name = (c.block + "." + Twine(index)).str();
  Value input = x;
  Value h = mb.layerNorm(x, name + "." + c.ln1.str(), c.lnEps);
  Value attnInput = h;
  h = causalSelfAttention(mb, h, mask, c, index, name);
  Value attnOutput = h;
  if (c.pythonLifetimes)
    mb.keepAlive(attnInput, name);
  x = mb.add(x, h, name + ".add");

  h = mb.layerNorm(x, name + "." + c.ln2.str(), c.lnEps);
  Value mlpInput = h;
  h = mb.linear(h, name + "." + c.fc1.str(), c.mlp);
  h = c.decomposedGelu ? mb.geluNew(h, name + "." + c.act.str())
                       : mb.gelu(h, name + "." + c.act.str(), c.gelu);
  h = mb.linear(h, name + "." + c.fc2.str(), c.dim);
  h = mb.dropout(h, name + "." + c.mlpDrop.str(), c.dropout);
  if (c.pythonLifetimes)
    mb.keepAlive(mlpInput, name);
  Value out = mb.add(x, h, name + ".add");
  // The block's caller holds its input until it returns, and the block its
  // `attn_output` (GPT2Block binds it to a name of its own).
  if (c.pythonLifetimes)
    mb.keepAlive({input, attnOutput}, name);
  return out;
}

Value buildGpt(ModelBuilder &mb, Value ids, const GptConfig &c) {
  int64_t seq = ModelBuilder::shapeOf(ids)[1];

  Value wte = mb.param(c.tokEmb, "weight", {c.vocab, c.dim});
  Value x = mb.embedding(ids, c.tokEmb, wte);
  Value wpe = mb.param(c.posEmb, "weight", {c.positions, c.dim});
  // Functional calls of the root module's forward.
  auto rootCall = [&](StringRef what) {
    return c.root.empty() ? what.str() : (c.root + "." + what).str();
  };
  // generate() passes position_ids per row ([B, T], from the
  // attention_mask's cumsum): the position embeddings are [B, T, H] then.
  Value positions = c.kvCache && c.kvCache->generation
                        ? mb.intConstant({ModelBuilder::shapeOf(ids)[0], seq},
                                         0, rootCall("position_ids"))
                        : mb.arange(seq, rootCall("arange"));
  Value pos = mb.embedding(positions, c.posEmb, wpe);
  Value embeds = x;
  x = mb.add(x, pos, rootCall("add"));
  x = mb.dropout(x, c.embDrop, c.dropout);
  // create_causal_mask's bool [B, 1, T, keys], one for every block (a
  // cache's keys: all it attends to).
  Value mask;
  if (c.masked)
    mask = mb.attentionMask({ModelBuilder::shapeOf(ids)[0], 1, seq,
                             c.kvCache ? c.kvCache->keyLength(seq) : seq},
                            rootCall("mask"));

  for (int64_t i = 0; i < c.layers; ++i)
    x = gptBlock(mb, x, mask, c, i);

  x = mb.layerNorm(x, c.lnF, c.lnEps);
  // GPT2Model.forward holds `inputs_embeds`, `position_embeds` and the mask
  // until it returns.
  if (c.pythonLifetimes) {
    SmallVector<Value> locals{embeds, pos};
    if (mask)
      locals.push_back(mask);
    mb.keepAlive(locals, c.root.empty() ? c.lnF : c.root);
  }
  // generate()'s logits_to_keep=1: the head reads the last position only.
  if (c.kvCache && c.kvCache->generation && seq > 1)
    x = mb.slice(x, c.head, 1, seq - 1, seq);
  if (c.tiedHead)
    return mb.linear(x, c.head, wte, /*bias=*/Value());
  return mb.linear(x, c.head, c.vocab, /*bias=*/false);
}

} // namespace

/// GPT-2 small (124M): 12 layers, d = 768, 12 heads, 1024 positions.
CausalLMConfig vram::zoo::getGpt2Config() {
  CausalLMConfig c;
  c.name = "gpt2";
  c.layout = DecoderLayout::Gpt2;
  c.vocabSize = 50257;
  c.maxPositions = kGpt2Positions;
  c.hiddenSize = 768;
  c.numHeads = c.numKeyValueHeads = 12;
  c.headDim = 64;
  c.numLayers = 12;
  c.intermediateSize = 3072;
  c.normEps = 1e-5;
  c.tieWordEmbeddings = true;
  c.dropout = 0.1;
  c.attentionDropout = 0.1;
  return c;
}

/// GPT2LMHeadModel from a config: GPT-2's names, GELU (tanh), sdpa (flash,
/// or math for attention dropout on the CPU) or its eager attention.
Value vram::zoo::buildGpt2Decoder(ModelBuilder &mb, Value ids,
                                  const CausalLMConfig &config,
                                  const ModelConfig &model) {
  GptConfig c = gpt2Names(GptConfig());
  c.vocab = config.vocabSize;
  c.positions = config.maxPositions;
  c.dim = config.hiddenSize;
  c.heads = config.numHeads;
  c.layers = config.numLayers;
  c.mlp = config.intermediateSize;
  c.dropout = config.dropout;
  c.tiedHead = config.tieWordEmbeddings;
  c.lnEps = config.normEps;
  c.attnDropout = config.attentionDropout;
  c.masked = passesAttentionMask(config, model, /*sliding=*/false);
  c.attentionBackend = getAttentionBackend(config, model, c.masked);
  c.eagerAttention =
      model.attention == vram::nn::AttentionImplementation::Eager;
  // transformers' ACT2FN: gelu_new written out, gelu and gelu_pytorch_tanh
  // one F.gelu.
  c.decomposedGelu = config.gelu == GeluKind::New;
  c.gelu = config.gelu == GeluKind::Exact ? vram::nn::GeluApproximation::None
                                          : vram::nn::GeluApproximation::Tanh;
  c.kvCache = model.kvCache;
  c.pythonLifetimes = true;
  return buildGpt(mb, ids, c);
}

Value vram::zoo::buildGpt2(ModelBuilder &mb, Value ids, const ModelConfig &c) {
  return buildGpt2Decoder(mb, ids, getGpt2Config(), c);
}

/// GPT-2 scaled down for tests: 2 layers, d = 64, 4 heads, vocab 256,
/// 32 positions.
Value vram::zoo::buildTinyGpt(ModelBuilder &mb, Value ids,
                              const ModelConfig &) {
  GptConfig c;
  c.vocab = 256;
  c.positions = kTinyGptPositions;
  c.dim = 64;
  c.heads = 4;
  c.layers = 2;
  c.mlp = 256;
  return buildGpt(mb, ids, gpt2Names(c));
}

/// gpt_mini of shared/reference/truth/README.md: 4 layers, vocab 8192,
/// d = 256, 8 heads, MLP 1024, 256 learned positions, exact GELU, no dropout,
/// untied head without bias.
///
/// The reference writes attention as matmul, masked_fill with a causal bool
/// mask, softmax, matmul (matmulAttention). Its mask is built in forward,
/// not a state_dict buffer (buffer bytes are 0), so it is an nn.constant.
Value vram::zoo::buildGptMini(ModelBuilder &mb, Value ids,
                              const ModelConfig &) {
  GptConfig c;
  c.vocab = 8192;
  c.positions = kGptMiniPositions;
  c.dim = 256;
  c.heads = 8;
  c.layers = 4;
  c.mlp = 1024;
  c.dropout = 0;
  c.gelu = vram::nn::GeluApproximation::None;
  c.explicitAttention = true;
  c.tiedHead = false;
  c.root = "";
  c.tokEmb = "tok";
  c.posEmb = "pos";
  c.block = "blocks";
  c.ln1 = "n1";
  c.qkv = "qkv";
  c.attnProj = "proj";
  c.ln2 = "n2";
  c.fc1 = "fc1";
  c.act = "gelu";
  c.fc2 = "fc2";
  c.lnF = "nf";
  c.head = "head";
  return buildGpt(mb, ids, c);
}

/// OPTForCausalLM (do_layer_norm_before, word_embed_proj_dim = hidden_size),
/// as transformers runs it:
///
///   x = embed_tokens(ids) + embed_positions(positions + 2)  (no dropout)
///   for each layer: x = x + drop(out_proj(attn(q_proj(ln(x)) * d^-0.5,
///                                              k_proj(ln(x)), v_proj(ln(x)))))
///                   x = x + drop(fc2(relu(fc1(final_layer_norm(x)))))
///   logits = lm_head(final_layer_norm(x))          (tied: embed_tokens)
///
/// The positions are cumsum(mask) * mask - 1 over the all-ones mask the
/// model makes when none is given: [B, T] int64, computed without
/// autograd, which the position embedding keeps for backward.
Value vram::zoo::buildOptDecoder(ModelBuilder &mb, Value ids,
                                 const CausalLMConfig &c,
                                 const ModelConfig &model) {
  ArrayRef<int64_t> shape = ModelBuilder::shapeOf(ids);
  int64_t batch = shape[0], seq = shape[1];
  int64_t d = c.hiddenSize;
  Value wte =
      mb.param("model.decoder.embed_tokens", "weight", {c.vocabSize, d});
  Value x = mb.embedding(ids, "model.decoder.embed_tokens", wte);
  Value wpe = mb.param("model.decoder.embed_positions", "weight",
                       {c.maxPositions + 2, d});
  // Positions after the cached ones in a decode step.
  int64_t past = model.kvCache ? model.kvCache->position : 0;
  Value positions = mb.positionIds(batch, seq, /*offset=*/2 + past,
                                   "model.decoder.embed_positions");
  Value embeds = x;
  Value posEmbeds =
      mb.embedding(positions, "model.decoder.embed_positions", wpe);
  x = mb.add(x, posEmbeds, "model.decoder.add");
  vram::nn::AttentionBackend backend = getAttentionBackend(c, model);
  for (int64_t i = 0; i < c.numLayers; ++i) {
    std::string name = ("model.decoder.layers." + Twine(i)).str();
    std::string attn = name + ".self_attn";
    // The layer's caller holds its input, the layer the attention's input
    // and the attention its states, until each returns (nn.keep_alive).
    Value input = x;
    Value h = mb.layerNorm(x, name + ".self_attn_layer_norm", c.normEps);
    Value q = mb.mul(mb.linear(h, attn + ".q_proj", d, /*bias=*/true),
                     mb.number(1.0 / std::sqrt((double)c.headDim), attn), attn);
    Value k = mb.splitHeads(mb.linear(h, attn + ".k_proj", d, /*bias=*/true),
                            attn, c.numHeads);
    Value v = mb.splitHeads(mb.linear(h, attn + ".v_proj", d, /*bias=*/true),
                            attn, c.numHeads);
    bool causal = true;
    if (model.kvCache) {
      std::tie(k, v) = model.kvCache->update(mb, i, k, v, attn);
      causal = !model.kvCache->isDecoding();
    }
    // The eager path is OPT's eager_attention_forward, called with
    // scaling=1.0 (q was scaled): the product still makes a new tensor.
    Value y =
        model.attention == vram::nn::AttentionImplementation::Eager
            ? mb.eagerAttention(mb.splitHeads(q, attn, c.numHeads), k, v, attn,
                                /*scaling=*/1.0, /*softcap=*/std::nullopt,
                                c.attentionDropout)
            : mb.attention(mb.splitHeads(q, attn, c.numHeads), k, v, attn,
                           causal, backend, /*enableGqa=*/false,
                           c.attentionDropout);
    y = mb.linear(mb.mergeHeads(y, attn), attn + ".out_proj", d,
                  /*bias=*/true);
    mb.keepAlive({q, k, v}, attn);
    mb.keepAlive(h, name);
    x = mb.add(x, mb.dropout(y, name + ".dropout", c.dropout), name + ".add");
    h = mb.layerNorm(x, name + ".final_layer_norm", c.normEps);
    h = mb.relu(mb.linear(h, name + ".fc1", c.intermediateSize, true),
                name + ".activation_fn", /*inplace=*/false);
    h = mb.linear(h, name + ".fc2", d, /*bias=*/true);
    x = mb.add(x, mb.dropout(h, name + ".dropout", c.dropout), name + ".add");
    mb.keepAlive(input, name);
  }
  x = mb.layerNorm(x, "model.decoder.final_layer_norm", c.normEps);
  // OPTDecoder.forward holds `inputs_embeds` and `pos_embeds` until it
  // returns.
  mb.keepAlive({embeds, posEmbeds}, "model.decoder");
  if (model.kvCache && model.kvCache->generation && seq > 1)
    x = mb.slice(x, "lm_head", 1, seq - 1, seq);
  if (c.tieWordEmbeddings)
    return mb.linear(x, "lm_head", wte, /*bias=*/Value());
  return mb.linear(x, "lm_head", c.vocabSize, /*bias=*/false);
}

/// GPTNeoXForCausalLM as transformers 5.25 runs it:
///
///   x = emb_dropout(embed_in(ids))
///   for each layer:
///     qkv = query_key_value(input_layernorm(x)).view(B, T, H, 3 D)
///           .transpose(1, 2); q, k, v = qkv.chunk(3, -1)      (views)
///     q, k = rotary on the first rotary_ndims of each head, cat with the
///            rest (a contiguous copy)
///     a = post_attention_dropout(dense(sdpa(q, k, v) merged))
///     parallel:   x = mlp(post_attention_layernorm(x)) + a + x
///     sequential: x = x + a; x = mlp(post_attention_layernorm(x)) + x
///   logits = lm_head(final_layer_norm(x))
///
/// The MLP is dense_4h_to_h(gelu(dense_h_to_4h(.))), with post_mlp_dropout.
///
/// Tensor parallelism (--parallel=tp=N) follows GPTNeoXConfig's
/// base_model_tp_plan: query_key_value and dense_h_to_4h column-parallel
/// (query_key_value's rows are per head, so a rank holds heads / N whole
/// heads' q, k and v and the [.., H, 3 D] view follows), dense and
/// dense_4h_to_h row-parallel (their outputs all-reduced; under the
/// parallel residual each separately), embed_in "embedding_rowwise" (a
/// vocabulary-parallel lookup) and lm_head "colwise_gather_output" under
/// transformers' plan; --tp-plan=layers splits the layers alone.
Value vram::zoo::buildGptNeoxDecoder(ModelBuilder &mb, Value ids,
                                     const CausalLMConfig &c,
                                     const ModelConfig &model) {
  ArrayRef<int64_t> shape = ModelBuilder::shapeOf(ids);
  int64_t batch = shape[0], seq = shape[1];
  int64_t ranks = model.tensorParallel;
  int64_t d = c.hiddenSize, heads = c.numHeads / ranks, headDim = c.headDim;
  // The sharded embedding and lm_head are their own parameters, a tied
  // lm_head included (as Llama's; measured there).
  bool shardVocab = ranks > 1 && model.tensorParallelLmHead;
  auto columnInput = [&](Value x, StringRef layer) {
    return ranks == 1 ? x : mb.allReduceGrad(x, layer, ranks);
  };
  // RowwiseParallel's output hook all-reduces inside the module's call,
  // whose arguments hold the input until then.
  auto rowParallel = [&](Value x, StringRef layer, bool bias) {
    Value y = mb.linear(x, layer, d, bias);
    if (ranks == 1)
      return y;
    y = mb.allReduce(y, layer, ranks);
    mb.keepAlive(x, layer);
    return y;
  };
  Value wte, embeds;
  if (shardVocab) {
    embeds = mb.vocabParallelEmbedding(
        ids, "gpt_neox.embed_in",
        mb.param("gpt_neox.embed_in", "weight", {c.vocabSize / ranks, d}),
        ranks);
  } else {
    wte = mb.param("gpt_neox.embed_in", "weight", {c.vocabSize, d});
    embeds = mb.embedding(ids, "gpt_neox.embed_in", wte);
  }
  Value x = mb.dropout(embeds, "gpt_neox.emb_dropout", c.dropout);
  auto [cos, sin] = mb.rotaryTables(seq, c.rotaryDim ? c.rotaryDim : headDim,
                                    "gpt_neox.rotary_emb");
  vram::nn::AttentionBackend backend = getAttentionBackend(c, model);
  for (int64_t i = 0; i < c.numLayers; ++i) {
    std::string name = ("gpt_neox.layers." + Twine(i)).str();
    std::string attn = name + ".attention";
    // The layer's caller holds its input, the layer the norms' outputs it
    // passes, the attention its qkv and its states, until each returns.
    Value input = x;
    Value h = mb.layerNorm(x, name + ".input_layernorm", c.normEps);
    Value qkv = mb.linear(columnInput(h, attn + ".query_key_value"),
                          attn + ".query_key_value", 3 * d / ranks, c.qkvBias);
    qkv = mb.transpose(mb.reshape(qkv, attn, {batch, seq, heads, 3 * headDim}),
                       attn, 1, 2);
    // qkv.chunk(3, dim=-1).
    SmallVector<Value> qkvs =
        mb.split(qkv, attn, 3, {headDim, headDim, headDim});
    Value q = qkvs[0], k = qkvs[1], v = qkvs[2];
    int64_t rotaryDim = c.rotaryDim ? c.rotaryDim : headDim;
    q = mb.applyRotary(q, cos, sin, rotaryDim, /*concatenate=*/true, attn);
    k = mb.applyRotary(k, cos, sin, rotaryDim, /*concatenate=*/true, attn);
    bool causal = true;
    if (model.kvCache) {
      std::tie(k, v) = model.kvCache->update(mb, i, k, v, attn);
      causal = !model.kvCache->isDecoding();
    }
    Value y =
        model.attention == vram::nn::AttentionImplementation::Eager
            ? mb.eagerAttention(q, k, v, attn, 1.0 / std::sqrt((double)headDim),
                                /*softcap=*/std::nullopt, c.attentionDropout)
            : mb.attention(q, k, v, attn, causal, backend,
                           /*enableGqa=*/false, c.attentionDropout);
    y = rowParallel(mb.mergeHeads(y, attn), attn + ".dense", c.outputBias);
    mb.keepAlive({qkv, q, k, v}, attn);
    mb.keepAlive(h, name);
    Value a = mb.dropout(y, name + ".post_attention_dropout", c.dropout);
    if (!c.parallelResidual)
      x = mb.add(a, x, name + ".add");
    h = mb.layerNorm(x, name + ".post_attention_layernorm", c.normEps);
    Value m = mb.linear(columnInput(h, name + ".mlp.dense_h_to_4h"),
                        name + ".mlp.dense_h_to_4h", c.intermediateSize / ranks,
                        /*bias=*/true);
    m = mb.gelu(m, name + ".mlp.act");
    m = rowParallel(m, name + ".mlp.dense_4h_to_h", /*bias=*/true);
    mb.keepAlive(h, name);
    m = mb.dropout(m, name + ".post_mlp_dropout", c.dropout);
    x = c.parallelResidual
            ? mb.add(mb.add(m, a, name + ".add"), x, name + ".add")
            : mb.add(m, x, name + ".add");
    mb.keepAlive(input, name);
  }
  x = mb.layerNorm(x, "gpt_neox.final_layer_norm", c.normEps);
  // GPTNeoXModel.forward holds `inputs_embeds` and the rotary tables until
  // it returns.
  mb.keepAlive({embeds, cos, sin}, "gpt_neox");
  Value hidden = x;
  if (model.kvCache && model.kvCache->generation && seq > 1)
    x = mb.slice(x, "lm_head", 1, seq - 1, seq);
  Value logits;
  if (shardVocab)
    logits = mb.allGatherOutput(mb.linear(columnInput(x, "lm_head"), "lm_head",
                                          c.vocabSize / ranks, /*bias=*/false),
                                "lm_head", ranks);
  else if (c.tieWordEmbeddings && wte)
    logits = mb.linear(x, "lm_head", wte, /*bias=*/Value());
  else
    logits = mb.linear(x, "lm_head", c.vocabSize, /*bias=*/false);
  // GPTNeoXForCausalLM.forward holds the hidden states until it returns
  // (measured: tp.py's gpt_neox_tp2_inference_transformers peaks at the
  // logits' gather with them alive).
  mb.keepAlive(hidden, "gpt_neox");
  return logits;
}
