//===- Models.h - the zoo's model definitions -------------------*- C++ -*-===//
//
// Each function builds the body of `forward` at the builder's insertion point
// from the model input and returns the output. Vision models take
// [B, 3, S, S] f32 images; language models take [B, T] i64 token ids. The
// caller (Zoo.cpp) has validated the options, so shapes always infer.
//
// This header is private to lib/Zoo.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_LIB_ZOO_MODELS_H
#define VRAM_LIB_ZOO_MODELS_H

#include "ModelBuilder.h"

#include "vram/Zoo/CausalLM.h"

namespace vram::zoo {

// ResNet.cpp
mlir::Value buildResNet18(ModelBuilder &mb, mlir::Value x,
                          const ModelConfig &c);
mlir::Value buildResNet34(ModelBuilder &mb, mlir::Value x,
                          const ModelConfig &c);
mlir::Value buildResNet50(ModelBuilder &mb, mlir::Value x,
                          const ModelConfig &c);
mlir::Value buildResNet101(ModelBuilder &mb, mlir::Value x,
                           const ModelConfig &c);
mlir::Value buildResNet152(ModelBuilder &mb, mlir::Value x,
                           const ModelConfig &c);

// VGG.cpp
mlir::Value buildVgg16(ModelBuilder &mb, mlir::Value x, const ModelConfig &c);
mlir::Value buildTinyCnn(ModelBuilder &mb, mlir::Value x, const ModelConfig &c);

// MobileNet.cpp
mlir::Value buildMobileNetV2(ModelBuilder &mb, mlir::Value x,
                             const ModelConfig &c);

// ViT.cpp
mlir::Value buildVitB16(ModelBuilder &mb, mlir::Value x, const ModelConfig &c);
/// transformers' ViTForImageClassification: logits [B, labels] from images.
mlir::Value buildHfVit(ModelBuilder &mb, mlir::Value pixels,
                       const CausalLMConfig &config, const ModelConfig &model);

// GPT.cpp; the learned position tables bound the sequence length.
constexpr int64_t kGpt2Positions = 1024, kTinyGptPositions = 32,
                  kGptMiniPositions = 256;
mlir::Value buildGpt2(ModelBuilder &mb, mlir::Value ids, const ModelConfig &c);
mlir::Value buildTinyGpt(ModelBuilder &mb, mlir::Value ids,
                         const ModelConfig &c);
mlir::Value buildGptMini(ModelBuilder &mb, mlir::Value ids,
                         const ModelConfig &c);
/// A DecoderLayout::Gpt2 config.
mlir::Value buildGpt2Decoder(ModelBuilder &mb, mlir::Value ids,
                             const CausalLMConfig &config,
                             const ModelConfig &model);

/// A DecoderLayout::Opt config.
mlir::Value buildOptDecoder(ModelBuilder &mb, mlir::Value ids,
                            const CausalLMConfig &config,
                            const ModelConfig &model);

/// A DecoderLayout::GptNeox config.
mlir::Value buildGptNeoxDecoder(ModelBuilder &mb, mlir::Value ids,
                                const CausalLMConfig &config,
                                const ModelConfig &model);

// Bert.cpp: a DecoderLayout::Bert config (BertForMaskedLM).
mlir::Value buildBertEncoder(ModelBuilder &mb, mlir::Value ids,
                             const CausalLMConfig &config,
                             const ModelConfig &model);

// T5.cpp: a DecoderLayout::T5 config (T5ForConditionalGeneration) over
// [B, T] encoder token ids; the decoder reads model.decoderSeq tokens.
mlir::Value buildT5(ModelBuilder &mb, mlir::Value ids,
                    const CausalLMConfig &config, const ModelConfig &model);

/// The sdpa kernel a config's attention runs: the one --attention names, or
/// for `sdpa` flash, math when it drops out on the CPU (no fused CPU
/// kernel supports dropout), and with an attention mask (`masked`) on CUDA
/// memory-efficient (CUDA's flash kernel takes no mask; the CPU's does).
vram::nn::AttentionBackend getAttentionBackend(const CausalLMConfig &config,
                                               const ModelConfig &model,
                                               bool masked = false);

/// Whether transformers hands sdpa a mask in a layer (create_causal_mask,
/// or create_sliding_window_causal_mask for a `sliding` one), instead of
/// is_causal: for padded rows (an attention_mask with zeros), for a packed
/// row whose forward has no cache (the sequence boundaries are read off
/// position_ids only then), and in a sliding layer whose keys reach the
/// window (_ignore_causal_mask_sdpa: kv_length >= sliding_window). Eager
/// attention is not asked. Generation: with padding, and in a StaticCache's
/// decode steps.
bool passesAttentionMask(const CausalLMConfig &config, const ModelConfig &model,
                         bool sliding);

// Llama.cpp: a DecoderLayout::Llama config.
mlir::Value buildLlamaDecoder(ModelBuilder &mb, mlir::Value ids,
                              const CausalLMConfig &config,
                              const ModelConfig &model);

} // namespace vram::zoo

#endif // VRAM_LIB_ZOO_MODELS_H
