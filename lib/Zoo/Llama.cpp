//===- Llama.cpp - LLaMA-7B (HuggingFace LlamaForCausalLM) ----------------===//
//
// 32 decoder layers, d = 4096, 32 heads, SwiGLU MLP of 11008, RMSNorm
// (eps 1e-6, no bias), vocab 32000, untied lm_head, no biases anywhere.
// LlamaRMSNorm runs decomposed (pow, mean, add, rsqrt, mul, mul by weight;
// the fp32 upcast is the identity for an fp32 model), as the model's code
// does, not as a fused rms_norm.
// Attention is causal sdpa with the flash kernel.
//
// Rotary embeddings have no parameters but do cost memory and FLOPs, so they
// are modelled as in HuggingFace's apply_rotary_pos_emb,
//   q * cos + rotate_half(q) * sin,
// with cos/sin tables as buffers `model.rotary_emb.{cos,sin}_cached` [T, 128]
// (older HF versions cache them exactly so). The dialect has no negation, so
// rotate_half(q) = cat(-q2, q1) is written cat(q2, q1) and the sign is folded
// into the sin table (its first half holds -sin).
//
//===----------------------------------------------------------------------===//

#include "Models.h"

#include "llvm/ADT/Twine.h"

using namespace mlir;
using namespace vram::zoo;

namespace {

constexpr int64_t kVocab = 32000, kDim = 4096, kLayers = 32, kHeads = 32,
                  kHeadDim = kDim / kHeads, kMlp = 11008;
constexpr double kRmsEps = 1e-6;

struct Rotary {
  Value cos, sin;
};

/// apply_rotary_pos_emb for one of q, k [B, H, T, D].
Value applyRotary(ModelBuilder &mb, Value x, const Rotary &rope,
                  const std::string &name) {
  int64_t half = kHeadDim / 2;
  Value x1 = mb.slice(x, name, 3, 0, half);
  Value x2 = mb.slice(x, name, 3, half, kHeadDim);
  Value rotated = mb.concat({x2, x1}, name, 3);
  return mb.add(mb.mul(x, rope.cos, name), mb.mul(rotated, rope.sin, name),
                name);
}

Value selfAttention(ModelBuilder &mb, Value x, const Rotary &rope,
                    const std::string &name) {
  Value q =
      mb.splitHeads(mb.linear(x, name + ".q_proj", kDim, false), name, kHeads);
  Value k =
      mb.splitHeads(mb.linear(x, name + ".k_proj", kDim, false), name, kHeads);
  Value v =
      mb.splitHeads(mb.linear(x, name + ".v_proj", kDim, false), name, kHeads);
  q = applyRotary(mb, q, rope, name + ".rotary");
  k = applyRotary(mb, k, rope, name + ".rotary");
  Value y = mb.attention(q, k, v, name, /*causal=*/true,
                         vram::nn::AttentionBackend::Flash);
  return mb.linear(mb.mergeHeads(y, name), name + ".o_proj", kDim, false);
}

/// LlamaMLP: down_proj(silu(gate_proj(x)) * up_proj(x)).
Value mlp(ModelBuilder &mb, Value x, const std::string &name) {
  Value gate =
      mb.silu(mb.linear(x, name + ".gate_proj", kMlp, false), name + ".act_fn");
  Value up = mb.linear(x, name + ".up_proj", kMlp, false);
  return mb.linear(mb.mul(gate, up, name), name + ".down_proj", kDim, false);
}

Value decoderLayer(ModelBuilder &mb, Value x, const Rotary &rope,
                   const std::string &name) {
  Value h = mb.decomposedRmsNorm(x, name + ".input_layernorm", kRmsEps);
  h = selfAttention(mb, h, rope, name + ".self_attn");
  x = mb.add(x, h, name + ".add");
  h = mb.decomposedRmsNorm(x, name + ".post_attention_layernorm", kRmsEps);
  h = mlp(mb, h, name + ".mlp");
  return mb.add(x, h, name + ".add");
}

} // namespace

Value vram::zoo::buildLlama7b(ModelBuilder &mb, Value ids,
                              const ModelConfig &) {
  int64_t seq = ModelBuilder::shapeOf(ids)[1];
  Value x = mb.embedding(ids, "model.embed_tokens", kVocab, kDim);
  Rotary rope = {mb.buffer("model.rotary_emb", "cos_cached", {seq, kHeadDim}),
                 mb.buffer("model.rotary_emb", "sin_cached", {seq, kHeadDim})};
  for (int64_t i = 0; i < kLayers; ++i)
    x = decoderLayer(mb, x, rope, ("model.layers." + Twine(i)).str());
  x = mb.decomposedRmsNorm(x, "model.norm", kRmsEps);
  return mb.linear(x, "lm_head", kVocab, /*bias=*/false);
}
