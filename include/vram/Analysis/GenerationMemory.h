//===- GenerationMemory.h - prefill and decode of a generation --*- C++ -*-===//
//
// The figures of a generation program (--mode=generate) read off its memory
// analysis: the program is the prefill forward, the first nn.next_token,
// then the last decode step (NNOps.td, "Generation with a KV cache"). The
// prefill's peak is the largest live total up to and including the first
// nn.next_token, the decode step's the largest after it but at the
// nn.kv_cache_past ops (the steps in between); the KV cache is what the
// nn.kv_cache_* ops leave alive at the end.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_ANALYSIS_GENERATIONMEMORY_H
#define VRAM_ANALYSIS_GENERATIONMEMORY_H

#include "vram/Analysis/FlopAnalysis.h"
#include "vram/Analysis/MemoryAnalysis.h"

#include <optional>

namespace vram {

struct GenerationFigures {
  int64_t promptLength = 0, maxNewTokens = 0;
  /// Whether the cache is transformers' StaticCache (the program's
  /// nn.kv_cache_update ops write buffers in place), else a DynamicCache.
  bool staticCache = false;
  /// A paged cache's block size (its nn.kv_cache_update ops' block_size),
  /// 0 for transformers' caches; the blocks the batch's sequences hold
  /// (each sequence's, shared by every layer as vLLM's block ids are).
  int64_t kvBlockSize = 0, kvCacheBlocks = 0;
  /// Beam search's beams (nn.num_beams), 1 for greedy search or sampling.
  int64_t numBeams = 1;
  /// generate(do_sample=True) and its logits processors (the first
  /// nn.next_token's): temperature 1.0, top_k 0, top_p 1.0, no min_p,
  /// repetition_penalty 1.0 when they do not run.
  bool sample = false;
  double temperature = 1.0, topP = 1.0, repetitionPenalty = 1.0;
  int64_t topK = 0;
  std::optional<double> minP;
  /// The cache when generation ends: prompt + new tokens - 1 positions of
  /// every layer's keys and values.
  int64_t kvCacheBytes = 0;
  int64_t prefillPeakBytes = 0;
  /// The last decode step's peak; none when one token is generated.
  std::optional<int64_t> decodePeakBytes;
  /// FLOPs of the prefill forward and of the last decode step's.
  int64_t prefillFlops = 0, decodeStepFlops = 0;
};

/// The figures of `memory`'s function when it is a generation program
/// (nn.max_new_tokens), else nullopt.
std::optional<GenerationFigures>
getGenerationFigures(const MemoryAnalysis &memory, const FlopAnalysis &flops,
                     nn::FlopConvention convention);

} // namespace vram

#endif // VRAM_ANALYSIS_GENERATIONMEMORY_H
