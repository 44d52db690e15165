//===- Bert.cpp - BERT-style encoders with their heads --------------------===//
//
// BertForMaskedLM as transformers 5.25 runs it (modeling_bert.py):
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
// RoBERTa (modeling_roberta.py) runs the same ops under other names, with
// positions counted from the token ids; DistilBERT (modeling_distilbert.py)
// has no token types and no dropout on the attention's output. The
// sequence classifiers replace the masked-LM head by one on the first
// token's hidden state.
//
//===----------------------------------------------------------------------===//

#include "Models.h"

#include "llvm/ADT/Twine.h"

#include <cmath>

using namespace mlir;
using namespace vram::zoo;

namespace {
/// Module names of one flavor, relative to the model (`base`) or to a layer.
struct EncoderNames {
  std::string base, layers;
  std::string query, key, value, attention, attentionOutput,
      attentionOutputDropout, attentionNorm;
  std::string fc1, activation, fc2, mlpDropout, mlpNorm;
  /// The masked-LM head: BertOnlyMLMHead (cls.predictions), RobertaLMHead
  /// (lm_head), DistilBERT's vocab_* modules; the decoder's bias belongs to
  /// `headBias` (BERT's and RoBERTa's tie it to the head's `bias`).
  std::string headDense, headActivation, headNorm, headDecoder, headBias;
};

EncoderNames namesOf(EncoderFlavor flavor) {
  if (flavor == EncoderFlavor::DistilBert)
    return {"distilbert",
            "distilbert.transformer.layer",
            "attention.q_lin",
            "attention.k_lin",
            "attention.v_lin",
            "attention",
            "attention.out_lin",
            /*attentionOutputDropout=*/"",
            "sa_layer_norm",
            "ffn.lin1",
            "ffn.activation",
            "ffn.lin2",
            "ffn.dropout",
            "output_layer_norm",
            "vocab_transform",
            "activation",
            "vocab_layer_norm",
            "vocab_projector",
            "vocab_projector"};
  EncoderNames bert{"bert",
                    "bert.encoder.layer",
                    "attention.self.query",
                    "attention.self.key",
                    "attention.self.value",
                    "attention.self",
                    "attention.output.dense",
                    "attention.output.dropout",
                    "attention.output.LayerNorm",
                    "intermediate.dense",
                    "intermediate.intermediate_act_fn",
                    "output.dense",
                    "output.dropout",
                    "output.LayerNorm",
                    "cls.predictions.transform.dense",
                    "cls.predictions.transform.transform_act_fn",
                    "cls.predictions.transform.LayerNorm",
                    "cls.predictions.decoder",
                    "cls.predictions"};
  if (flavor == EncoderFlavor::Bert)
    return bert;
  // RoBERTa: BERT's layers under another root, RobertaLMHead.
  EncoderNames roberta = bert;
  roberta.base = "roberta";
  roberta.layers = "roberta.encoder.layer";
  roberta.headDense = "lm_head.dense";
  roberta.headActivation = "lm_head.gelu";
  roberta.headNorm = "lm_head.layer_norm";
  roberta.headDecoder = "lm_head.decoder";
  roberta.headBias = "lm_head";
  return roberta;
}

/// The embeddings' output: word + token type + position, LayerNorm, dropout.
Value buildEmbeddings(ModelBuilder &mb, Value ids, const CausalLMConfig &c,
                      const EncoderNames &names) {
  ArrayRef<int64_t> shape = ModelBuilder::shapeOf(ids);
  int64_t batch = shape[0], seq = shape[1];
  int64_t d = c.hiddenSize;
  Type i64 = mb.getBuilder().getI64Type();
  std::string embeddings = names.base + ".embeddings";
  Value wordWeight =
      mb.param(embeddings + ".word_embeddings", "weight", {c.vocabSize, d});
  int64_t positionRows = c.maxPositions + c.positionOffset;
  Value positionBuffer =
      mb.buffer(embeddings, "position_ids", {1, positionRows}, i64);
  Value x = mb.embedding(ids, embeddings + ".word_embeddings", wordWeight);

  Value positions;
  if (c.encoder == EncoderFlavor::Roberta) {
    // create_position_ids_from_input_ids: (cumsum(ids != pad) * mask).long()
    // + pad, a new [B, T] int64 tensor (its int32 temporaries are freed at
    // once).
    positions = mb.positionIds(batch, seq, c.positionOffset, embeddings);
  } else {
    positions = mb.slice(positionBuffer, embeddings, 1, 0, seq);
  }
  if (c.typeVocabSize) {
    // The token-type buffer is only read by the gather, whose all-zero
    // result is a constant here: its bytes are what matters. Gathered along
    // RoBERTa's [B, T] positions it is [B, T] too.
    mb.buffer(embeddings, "token_type_ids", {1, positionRows}, i64);
    Value tokenTypes = c.encoder == EncoderFlavor::Roberta
                           ? mb.intConstant({batch, seq}, 0, embeddings)
                           : mb.expand(mb.intConstant({1, seq}, 0, embeddings),
                                       embeddings, {batch, seq});
    x = mb.add(x,
               mb.embedding(tokenTypes, embeddings + ".token_type_embeddings",
                            c.typeVocabSize, d),
               embeddings);
  }
  x = mb.add(x,
             mb.embedding(positions, embeddings + ".position_embeddings",
                          positionRows, d),
             embeddings);
  x = mb.layerNorm(x, embeddings + ".LayerNorm", c.normEps);
  return mb.dropout(x, embeddings + ".dropout", c.dropout);
}

/// The sequence classifier's logits [B, labels] from the last hidden state.
Value buildClassifier(ModelBuilder &mb, Value x, const CausalLMConfig &c,
                      const EncoderNames &names) {
  int64_t d = c.hiddenSize;
  // The first token's hidden state, x[:, 0]: a view.
  ArrayRef<int64_t> hidden = ModelBuilder::shapeOf(x);
  Value first = mb.reshape(mb.slice(x, names.base, 1, 0, 1), names.base,
                           {hidden[0], hidden[2]});
  switch (c.encoder) {
  case EncoderFlavor::Roberta: {
    // RobertaClassificationHead.
    Value h = mb.dropout(first, "classifier.dropout", c.classifierDropout);
    h = mb.tanh(mb.linear(h, "classifier.dense", d), "classifier");
    h = mb.dropout(h, "classifier.dropout", c.classifierDropout);
    return mb.linear(h, "classifier.out_proj", c.numLabels);
  }
  case EncoderFlavor::DistilBert: {
    // DistilBertForSequenceClassification: pre_classifier, ReLU, dropout.
    Value h = mb.relu(mb.linear(first, "pre_classifier", d), "pre_classifier",
                      /*inplace=*/false);
    h = mb.dropout(h, "dropout", c.classifierDropout);
    return mb.linear(h, "classifier", c.numLabels);
  }
  case EncoderFlavor::Bert:
    break;
  }
  // BertPooler, then BertForSequenceClassification's dropout and classifier.
  Value pooled = mb.tanh(mb.linear(first, names.base + ".pooler.dense", d),
                         names.base + ".pooler");
  pooled = mb.dropout(pooled, "dropout", c.classifierDropout);
  return mb.linear(pooled, "classifier", c.numLabels);
}

/// The masked-LM head's logits [B, T, V]: dense, GELU, LayerNorm and a
/// decoder tied to the word embeddings, with its own bias.
Value buildMaskedLmHead(ModelBuilder &mb, Value x, const CausalLMConfig &c,
                        const EncoderNames &names) {
  int64_t d = c.hiddenSize;
  x = mb.gelu(mb.linear(x, names.headDense, d), names.headActivation);
  x = mb.layerNorm(x, names.headNorm, c.normEps);
  Value bias = mb.param(names.headBias, "bias", {c.vocabSize});
  Value weight = c.tieWordEmbeddings
                     ? mb.param(names.base + ".embeddings.word_embeddings",
                                "weight", {c.vocabSize, d})
                     : mb.param(names.headDecoder, "weight", {c.vocabSize, d});
  return mb.linear(x, names.headDecoder, weight, bias);
}
} // namespace

Value vram::zoo::buildBertEncoder(ModelBuilder &mb, Value ids,
                                  const CausalLMConfig &c,
                                  const ModelConfig &model) {
  EncoderNames names = namesOf(c.encoder);
  int64_t d = c.hiddenSize;
  Value x = buildEmbeddings(mb, ids, c, names);
  // The model's forward holds the embeddings' output until the encoder
  // returns, and each layer's caller its input until the layer returns
  // (nn.keep_alive): in inference both are live at the MLP's peak.
  Value embedded = x;

  // Padded rows (--padded): create_bidirectional_mask's [B, 1, T, T] for
  // every layer, bool for sdpa, and for eager that mask's float form (0
  // where a key is attended, the dtype's min at padding), which the model
  // holds until the encoder returns. Without padding transformers passes
  // none.
  ArrayRef<int64_t> shape = ModelBuilder::shapeOf(ids);
  bool eager = model.attention == vram::nn::AttentionImplementation::Eager;
  Value mask;
  if (model.padded)
    mask =
        eager ? mb.floatConstant({shape[0], 1, shape[1], shape[1]}, 0.0,
                                 names.base)
              : mb.attentionMask({shape[0], 1, shape[1], shape[1]}, names.base);
  vram::nn::AttentionBackend backend =
      getAttentionBackend(c, model, /*masked=*/bool(mask));
  for (int64_t i = 0; i < c.numLayers; ++i) {
    std::string name = (names.layers + "." + Twine(i)).str();
    auto at = [&](StringRef module) { return name + "." + module.str(); };
    std::string self = at(names.attention);
    Value input = x;
    Value q = mb.splitHeads(mb.linear(x, at(names.query), d), self, c.numHeads);
    Value k = mb.splitHeads(mb.linear(x, at(names.key), d), self, c.numHeads);
    Value v = mb.splitHeads(mb.linear(x, at(names.value), d), self, c.numHeads);
    Value y =
        eager ? mb.eagerAttention(q, k, v, self,
                                  1.0 / std::sqrt((double)c.headDim),
                                  /*softcap=*/std::nullopt, c.attentionDropout,
                                  /*softmaxInFloat32=*/false, mask)
              : mb.attention(q, k, v, self, /*causal=*/false, backend,
                             /*enableGqa=*/false, c.attentionDropout, mask);
    mb.keepAlive({q, k, v}, self);
    y = mb.linear(mb.mergeHeads(y, self), at(names.attentionOutput), d);
    // DistilBERT adds the attention's output to the residual undropped.
    if (!names.attentionOutputDropout.empty())
      y = mb.dropout(y, at(names.attentionOutputDropout), c.dropout);
    x = mb.layerNorm(mb.add(y, x, self), at(names.attentionNorm), c.normEps);

    Value h = mb.gelu(mb.linear(x, at(names.fc1), c.intermediateSize),
                      at(names.activation));
    h = mb.linear(h, at(names.fc2), d);
    h = mb.dropout(h, at(names.mlpDropout), c.dropout);
    x = mb.layerNorm(mb.add(h, x, name), at(names.mlpNorm), c.normEps);
    mb.keepAlive(input, name);
  }
  mb.keepAlive(embedded, names.base);
  if (mask)
    mb.keepAlive(mask, names.base);

  // BertForTokenClassification (and RoBERTa's, DistilBERT's): dropout and
  // a classifier on every token.
  if (c.tokenClassifier)
    return mb.linear(mb.dropout(x, "dropout", c.classifierDropout),
                     "classifier", c.numLabels);
  if (c.numLabels)
    return buildClassifier(mb, x, c, names);
  return buildMaskedLmHead(mb, x, c, names);
}
