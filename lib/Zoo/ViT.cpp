//===- ViT.cpp - torchvision ViT-B/16 -------------------------------------===//
//
// Follows torchvision/models/vision_transformer.py: patch embedding by a
// 16x16/16 convolution, a class token concatenated in front, a learned
// position embedding sized for the image ((S/16)^2 + 1 positions, so the
// parameter count follows the image size as with `vit_b_16(image_size=S)`),
// 12 pre-LN encoder layers (LayerNorm eps 1e-6) and a linear head on the class
// token. Dropouts have p = 0 and are identities.
//
// nn.MultiheadAttention packs q, k, v into one `in_proj_weight` [3d, d]; the
// projection is a linear whose output is split by views. The attention kernel
// follows the PyTorch modelled (TorchSemantics.h): torch 1.13 runs the math
// path and keeps the L x L weights; 2.x calls scaled_dot_product_attention
// (memory-efficient for fp32 on CUDA, math on the CPU).
//
// buildHfVit builds transformers' ViTForImageClassification from a config
// (modeling_vit.py, 5.25): the same encoder with separate q/k/v/o
// projections, `attn_implementation`'s attention, LayerNorm eps from the
// config, no pooler, and the classifier on the class token.
//
//===----------------------------------------------------------------------===//

#include "Models.h"

#include "vram/Dialect/NN/TorchSemantics.h"

#include "llvm/ADT/Twine.h"

#include <cmath>

using namespace mlir;
using namespace vram::zoo;

namespace {

constexpr int64_t kPatch = 16, kHidden = 768, kLayers = 12, kHeads = 12,
                  kMlp = 3072;
constexpr double kLayerNormEps = 1e-6;

/// nn.MultiheadAttention(d, heads, batch_first=True)(x, x, x).
Value selfAttention(ModelBuilder &mb, Value x, const std::string &name,
                    const vram::nn::TorchTarget &target) {
  int64_t d = ModelBuilder::shapeOf(x).back();
  Value w = mb.param(name, "in_proj_weight", {3 * d, d});
  Value b = mb.param(name, "in_proj_bias", {3 * d});
  Value qkv = mb.linear(x, name, w, b);
  Value heads[3];
  for (int i = 0; i < 3; ++i)
    heads[i] =
        mb.splitHeads(mb.slice(qkv, name, 2, i * d, (i + 1) * d), name, kHeads);
  Value out =
      vram::nn::multiheadAttentionRunsDecomposed(target)
          ? mb.matmulAttention(heads[0], heads[1], heads[2], name,
                               /*causal=*/false)
          : mb.attention(
                heads[0], heads[1], heads[2], name, /*causal=*/false,
                vram::nn::getMultiheadAttentionBackend(
                    target,
                    cast<RankedTensorType>(x.getType()).getElementType()));
  return mb.linear(mb.mergeHeads(out, name), name + ".out_proj", d);
}

/// EncoderBlock: x + attn(ln_1(x)), then x + mlp(ln_2(x)).
Value encoderBlock(ModelBuilder &mb, Value input, const std::string &name,
                   const vram::nn::TorchTarget &target) {
  Value x = mb.layerNorm(input, name + ".ln_1", kLayerNormEps);
  x = selfAttention(mb, x, name + ".self_attention", target);
  x = mb.add(x, input, name + ".add");

  Value y = mb.layerNorm(x, name + ".ln_2", kLayerNormEps);
  y = mb.linear(y, name + ".mlp.0", kMlp);
  y = mb.gelu(y, name + ".mlp.1");
  y = mb.linear(y, name + ".mlp.3", kHidden);
  return mb.add(x, y, name + ".add");
}

} // namespace

Value vram::zoo::buildVitB16(ModelBuilder &mb, Value x, const ModelConfig &c) {
  int64_t n = c.batch, side = c.imageSize / kPatch;
  int64_t seq = side * side + 1;

  // _process_input: [n, d, h, w] -> [n, h*w, d].
  x = mb.conv(x, "conv_proj", kHidden, kPatch, kPatch, 0, 1, /*bias=*/true);
  x = mb.reshape(x, "reshape", {n, kHidden, side * side});
  x = mb.permute(x, "permute", {0, 2, 1});

  Value token = mb.param("", "class_token", {1, 1, kHidden});
  token = mb.expand(token, "class_token", {n, 1, kHidden});
  x = mb.concat({token, x}, "cat", 1);

  Value pos = mb.param("encoder", "pos_embedding", {1, seq, kHidden});
  x = mb.add(x, pos, "encoder.add");
  for (int64_t i = 0; i < kLayers; ++i)
    x = encoderBlock(mb, x, ("encoder.layers.encoder_layer_" + Twine(i)).str(),
                     c.target);
  x = mb.layerNorm(x, "encoder.ln", kLayerNormEps);

  // x[:, 0]
  x = mb.reshape(mb.slice(x, "select", 1, 0, 1), "select", {n, kHidden});
  return mb.linear(x, "heads.head", c.numClasses);
}

Value vram::zoo::buildHfVit(ModelBuilder &mb, Value pixels,
                            const CausalLMConfig &c, const ModelConfig &model) {
  int64_t n = ModelBuilder::shapeOf(pixels)[0], d = c.hiddenSize;
  int64_t side = c.imageSize / c.patchSize, patches = side * side;
  using vram::nn::AttentionImplementation;

  // ViTEmbeddings: projection(pixels).flatten(2).transpose(1, 2), the class
  // token concatenated in front, the positions added, dropout.
  std::string embeddings = "vit.embeddings";
  Value x = mb.conv(pixels, embeddings + ".patch_embeddings.projection", d,
                    c.patchSize, c.patchSize, 0, 1, /*bias=*/true);
  x = mb.transpose(mb.flatten(x, embeddings + ".patch_embeddings", 2),
                   embeddings + ".patch_embeddings", 1, 2);
  Value token = mb.param(embeddings, "cls_token", {1, 1, d});
  token = mb.expand(token, embeddings, {n, 1, d});
  x = mb.concat({token, x}, embeddings, 1);
  Value positions =
      mb.param(embeddings, "position_embeddings", {1, patches + 1, d});
  x = mb.add(x, positions, embeddings);
  x = mb.dropout(x, embeddings + ".dropout", c.dropout);
  // ViTModel holds the embeddings' output until the encoder returns.
  Value embedded = x;

  vram::nn::AttentionBackend backend = getAttentionBackend(c, model);
  for (int64_t i = 0; i < c.numLayers; ++i) {
    std::string name = ("vit.encoder.layer." + Twine(i)).str();
    auto at = [&](StringRef module) { return name + "." + module.str(); };
    std::string attention = at("attention");
    Value input = x;
    Value h = mb.layerNorm(x, at("layernorm_before"), c.normEps);
    auto project = [&](StringRef proj) {
      return mb.splitHeads(
          mb.linear(h, attention + "." + proj.str(), d, c.qkvBias), attention,
          c.numHeads);
    };
    Value q = project("q_proj"), k = project("k_proj"), v = project("v_proj");
    Value y = model.attention == AttentionImplementation::Eager
                  ? mb.eagerAttention(
                        q, k, v, attention, 1.0 / std::sqrt((double)c.headDim),
                        /*softcap=*/std::nullopt, c.attentionDropout)
                  : mb.attention(q, k, v, attention, /*causal=*/false, backend,
                                 /*enableGqa=*/false, c.attentionDropout);
    y = mb.linear(mb.mergeHeads(y, attention), attention + ".o_proj", d);
    // ViTAttention's locals and its argument live until it returns.
    mb.keepAlive({h, q, k, v}, attention);
    y = mb.dropout(y, at("dropout"), c.dropout);
    x = mb.add(y, input, name);

    h = mb.layerNorm(x, at("layernorm_after"), c.normEps);
    Value m = mb.gelu(mb.linear(h, at("mlp.fc1"), c.intermediateSize),
                      at("mlp.activation_fn"));
    m = mb.linear(m, at("mlp.fc2"), d);
    mb.keepAlive(h, at("mlp"));
    m = mb.dropout(m, at("dropout"), c.dropout);
    x = mb.add(m, x, name);
    // ViTEncoder holds each layer's input until the layer returns.
    mb.keepAlive(input, name);
  }
  mb.keepAlive(embedded, "vit.encoder");
  x = mb.layerNorm(x, "vit.layernorm", c.normEps);

  // sequence_output[:, 0, :]: a view.
  Value first = mb.reshape(mb.slice(x, "vit", 1, 0, 1), "vit", {n, d});
  return mb.linear(first, "classifier", c.numLabels);
}
