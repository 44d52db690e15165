// Transformer layers in the LibTorch C++ frontend, two models in one file
// (transformer.test extracts each with --module):
//
// - TinyGPT: token Embedding (integer input) plus a learned position
//   parameter, a ModuleList of Cloneable<BlockImpl> blocks called by
//   range-for with as<Block>(), each a pre-norm block (LayerNorm, causal
//   self-attention written by hand: q/k/v Linear, matmul, a triu mask,
//   masked_fill, softmax, Dropout; residual adds; a Sequential MLP with
//   GELU), a final LayerNorm and a bias-free lm head.
// - AttnNet (constructed by std::make_shared, no holder): Conv1d, then
//   torch::nn::MultiheadAttention (sequence first, a float causal mask from
//   torch::full(...).triu(1), a structured binding of its tuple), a
//   ModuleList called by index with as<Linear>(), a Sequential called by
//   range-for over its AnyModules, and a Softmax module.
#include "crosscheck.h"

#include <cmath>
#include <string>

struct CausalSelfAttentionImpl : torch::nn::Module {
  CausalSelfAttentionImpl(int64_t embed, int64_t heads) : heads(heads) {
    query = register_module("query", torch::nn::Linear(embed, embed));
    key = register_module("key", torch::nn::Linear(embed, embed));
    value = register_module("value", torch::nn::Linear(embed, embed));
    proj = register_module("proj", torch::nn::Linear(embed, embed));
    drop = register_module("drop", torch::nn::Dropout(0.1));
  }

  torch::Tensor forward(torch::Tensor x) {
    int64_t B = x.size(0), T = x.size(1), C = x.size(2);
    int64_t hd = C / heads;
    auto q = query(x).view({B, T, heads, hd}).transpose(1, 2);
    auto k = key(x).view({B, T, heads, hd}).transpose(1, 2);
    auto v = value(x).view({B, T, heads, hd}).transpose(1, 2);
    auto att = torch::matmul(q, k.transpose(-2, -1)) *
               (1.0 / std::sqrt(double(hd)));
    auto mask = torch::ones({T, T}, torch::kBool).triu(1);
    att = att.masked_fill(mask, -INFINITY);
    att = drop(torch::softmax(att, -1));
    auto y = att.matmul(v).transpose(1, 2).contiguous().view({B, T, C});
    return proj(y);
  }

  int64_t heads;
  torch::nn::Linear query{nullptr}, key{nullptr}, value{nullptr},
      proj{nullptr};
  torch::nn::Dropout drop{nullptr};
};
TORCH_MODULE(CausalSelfAttention);

struct BlockImpl : torch::nn::Cloneable<BlockImpl> {
  BlockImpl(int64_t embed, int64_t heads) : embed(embed), heads(heads) {
    reset();
  }

  void reset() override {
    ln1 = register_module(
        "ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({embed})));
    attn = register_module("attn", CausalSelfAttention(embed, heads));
    ln2 = register_module(
        "ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({embed})));
    mlp = register_module(
        "mlp", torch::nn::Sequential(torch::nn::Linear(embed, 4 * embed),
                                     torch::nn::GELU(),
                                     torch::nn::Linear(4 * embed, embed)));
  }

  torch::Tensor forward(torch::Tensor x) {
    x = x + attn(ln1(x));
    return x + mlp->forward(ln2(x));
  }

  int64_t embed, heads;
  torch::nn::LayerNorm ln1{nullptr}, ln2{nullptr};
  CausalSelfAttention attn{nullptr};
  torch::nn::Sequential mlp{nullptr};
};
TORCH_MODULE(Block);

struct TinyGPTImpl : torch::nn::Module {
  TinyGPTImpl(int64_t vocab, int64_t context, int64_t embed, int64_t heads,
              int64_t layers) {
    tok = register_module("tok", torch::nn::Embedding(vocab, embed));
    pos = register_parameter("pos", torch::zeros({1, context, embed}));
    blocks = register_module("blocks", torch::nn::ModuleList());
    for (int64_t i = 0; i < layers; ++i)
      blocks->push_back(Block(embed, heads));
    ln = register_module(
        "ln", torch::nn::LayerNorm(torch::nn::LayerNormOptions({embed})));
    head = register_module(
        "head",
        torch::nn::Linear(torch::nn::LinearOptions(embed, vocab).bias(false)));
  }

  torch::Tensor forward(torch::Tensor ids) {
    auto x = tok(ids) + pos;
    for (auto &block : *blocks)
      x = block->as<Block>()->forward(x);
    return head(ln(x));
  }

  torch::nn::Embedding tok{nullptr};
  torch::Tensor pos;
  torch::nn::ModuleList blocks{nullptr};
  torch::nn::LayerNorm ln{nullptr};
  torch::nn::Linear head{nullptr};
};
TORCH_MODULE(TinyGPT);

struct AttnNetImpl : torch::nn::Module {
  AttnNetImpl(int64_t channels, int64_t embed, int64_t heads) {
    conv = register_module(
        "conv", torch::nn::Conv1d(
                    torch::nn::Conv1dOptions(channels, embed, 3).padding(1)));
    attn = register_module(
        "attn", torch::nn::MultiheadAttention(
                    torch::nn::MultiheadAttentionOptions(embed, heads)
                        .dropout(0.1)));
    layers = register_module(
        "layers", torch::nn::ModuleList(torch::nn::Linear(embed, embed),
                                        torch::nn::Linear(embed, 2)));
    act = register_module("act", torch::nn::Sequential(torch::nn::GELU(),
                                                       torch::nn::Dropout(0.1)));
    softmax = register_module("softmax", torch::nn::Softmax(-1));
  }

  // x: [N, C, L].
  torch::Tensor forward(torch::Tensor x) {
    auto h = conv(x).permute({2, 0, 1}); // [L, N, E]
    int64_t L = h.size(0);
    auto mask = torch::full({L, L}, -INFINITY).triu(1);
    auto [out, weights] = attn->forward(h, h, h, {}, true, mask);
    h = h + out;
    for (size_t i = 0; i < layers->size(); ++i) {
      h = layers[i]->as<torch::nn::Linear>()->forward(h);
      if (i + 1 < layers->size())
        for (auto &m : *act)
          h = m.forward(h);
    }
    return softmax(h);
  }

  torch::nn::Conv1d conv{nullptr};
  torch::nn::MultiheadAttention attn{nullptr};
  torch::nn::ModuleList layers{nullptr};
  torch::nn::Sequential act{nullptr};
  torch::nn::Softmax softmax{nullptr};
};

int main(int argc, char **argv) {
  std::string which = argc > 1 ? argv[1] : "";
  const char *json = argc > 2 ? argv[2] : nullptr;
  if (which == "TinyGPT") {
    TinyGPT net(96, 16, 32, 4, 2);
    printCrossCheckTo(net, torch::randint(0, 96, {4, 16}), json);
  } else if (which == "AttnNet") {
    auto net = std::make_shared<AttnNetImpl>(16, 32, 4);
    printCrossCheckTo(net, torch::randn({4, 16, 24}), json);
  }
  return 0;
}
