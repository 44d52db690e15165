//===- Bert.cpp - BERT's encoder with its masked-LM head ------------------===//
//
// BertForMaskedLM (and RobertaForMaskedLM, the same ops under other names
// with positions counted from the token ids) as transformers 5.25 runs it
// (modeling_bert.py, modeling_roberta.py):
//
//   tt = gather(token_type_ids buffer, position_ids[:, :T]).expand(B, T)
//   x = drop(ln(word(ids) + token_type(tt) + position(position_ids[:, :T])))
//   for each layer:
//     a = attention(query(x), key(x), value(x))    (bidirectional, dropout)
//     x = ln(drop(dense(a)) + x)
//     x = ln(drop(dense2(gelu(dense1(x)))) + x)
//   logits = decoder(ln(gelu(transform(x))))      (decoder tied to word)
//
// The layers normalize after each residual add (post-LN). The token types
// are a new [1, T] int64 tensor (the gather), which the token-type
// embedding keeps for backward; the positions are a view of a buffer.
//
//===----------------------------------------------------------------------===//

#include "Models.h"

#include "llvm/ADT/Twine.h"

#include <cmath>

using namespace mlir;
using namespace vram::zoo;

Value vram::zoo::buildBertEncoder(ModelBuilder &mb, Value ids,
                                  const CausalLMConfig &c,
                                  const ModelConfig &model) {
  ArrayRef<int64_t> shape = ModelBuilder::shapeOf(ids);
  int64_t batch = shape[0], seq = shape[1];
  int64_t d = c.hiddenSize;
  Type i64 = mb.getBuilder().getI64Type();

  // RoBERTa's modules are BERT's under another name.
  std::string base = c.roberta ? "roberta" : "bert";
  std::string embeddings = base + ".embeddings";
  Value wordWeight =
      mb.param(embeddings + ".word_embeddings", "weight", {c.vocabSize, d});
  int64_t positionRows = c.maxPositions + c.positionOffset;
  Value positionBuffer =
      mb.buffer(embeddings, "position_ids", {1, positionRows}, i64);
  // The token-type buffer is only read by the gather, whose all-zero
  // result is a constant here: its bytes are what matters.
  mb.buffer(embeddings, "token_type_ids", {1, positionRows}, i64);
  Value positions, tokenTypes;
  if (c.roberta) {
    // create_position_ids_from_input_ids: (cumsum(ids != pad) * mask).long()
    // + pad, a new [B, T] int64 tensor (its int32 temporaries are freed at
    // once); the token types gathered along it are [B, T] too.
    positions = mb.positionIds(batch, seq, c.positionOffset, embeddings);
    tokenTypes = mb.intConstant({batch, seq}, 0, embeddings);
  } else {
    positions = mb.slice(positionBuffer, embeddings, 1, 0, seq);
    tokenTypes = mb.expand(mb.intConstant({1, seq}, 0, embeddings), embeddings,
                           {batch, seq});
  }

  Value x = mb.embedding(ids, embeddings + ".word_embeddings", wordWeight);
  x = mb.add(x,
             mb.embedding(tokenTypes, embeddings + ".token_type_embeddings",
                          c.typeVocabSize, d),
             embeddings);
  x = mb.add(x,
             mb.embedding(positions, embeddings + ".position_embeddings",
                          positionRows, d),
             embeddings);
  x = mb.layerNorm(x, embeddings + ".LayerNorm", c.normEps);
  x = mb.dropout(x, embeddings + ".dropout", c.dropout);
  // BertModel.forward holds the embeddings' output until the encoder
  // returns, and each layer's caller its input until the layer returns
  // (nn.keep_alive): in inference both are live at the MLP's peak.
  Value embedded = x;

  vram::nn::AttentionBackend backend = getAttentionBackend(c, model);
  for (int64_t i = 0; i < c.numLayers; ++i) {
    std::string name = (base + ".encoder.layer." + Twine(i)).str();
    std::string self = name + ".attention.self";
    Value input = x;
    Value q = mb.splitHeads(mb.linear(x, self + ".query", d), self, c.numHeads);
    Value k = mb.splitHeads(mb.linear(x, self + ".key", d), self, c.numHeads);
    Value v = mb.splitHeads(mb.linear(x, self + ".value", d), self, c.numHeads);
    Value y = model.attention == vram::nn::AttentionImplementation::Eager
                  ? mb.eagerAttention(
                        q, k, v, self, 1.0 / std::sqrt((double)c.headDim),
                        /*softcap=*/std::nullopt, c.attentionDropout,
                        /*softmaxInFloat32=*/false)
                  : mb.attention(q, k, v, self, /*causal=*/false, backend,
                                 /*enableGqa=*/false, c.attentionDropout);
    mb.keepAlive({q, k, v}, self);
    std::string output = name + ".attention.output";
    y = mb.linear(mb.mergeHeads(y, self), output + ".dense", d);
    y = mb.dropout(y, output + ".dropout", c.dropout);
    x = mb.layerNorm(mb.add(y, x, output), output + ".LayerNorm", c.normEps);

    Value h =
        mb.gelu(mb.linear(x, name + ".intermediate.dense", c.intermediateSize),
                name + ".intermediate.intermediate_act_fn");
    h = mb.linear(h, name + ".output.dense", d);
    h = mb.dropout(h, name + ".output.dropout", c.dropout);
    x = mb.layerNorm(mb.add(h, x, name + ".output"), name + ".output.LayerNorm",
                     c.normEps);
    mb.keepAlive(input, name);
  }
  mb.keepAlive(embedded, base);

  // BertOnlyMLMHead (cls.predictions.transform.dense, LayerNorm, decoder)
  // or RobertaLMHead (lm_head.dense, layer_norm, decoder): the same ops.
  std::string head = c.roberta ? "lm_head" : "cls.predictions";
  std::string transform = c.roberta ? head : head + ".transform";
  x = mb.linear(x, transform + ".dense", d);
  x = mb.gelu(x, transform + (c.roberta ? ".gelu" : ".transform_act_fn"));
  x = mb.layerNorm(x, transform + (c.roberta ? ".layer_norm" : ".LayerNorm"),
                   c.normEps);
  // The decoder's bias is the head's `bias` (tied).
  Value bias = mb.param(head, "bias", {c.vocabSize});
  Value weight = c.tieWordEmbeddings
                     ? wordWeight
                     : mb.param(head + ".decoder", "weight", {c.vocabSize, d});
  return mb.linear(x, head + ".decoder", weight, bias);
}
