//===- GenerationMemory.cpp - prefill and decode of a generation ----------===//

#include "vram/Analysis/GenerationMemory.h"

#include "vram/Dialect/NN/NNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace vram;

std::optional<GenerationFigures>
vram::getGenerationFigures(const MemoryAnalysis &memory,
                           const FlopAnalysis &flops,
                           nn::FlopConvention convention) {
  auto func = dyn_cast<func::FuncOp>(memory.getRoot());
  auto tokens = func ? func->getAttrOfType<IntegerAttr>(
                           nn::NNDialect::kMaxNewTokensAttrName)
                     : IntegerAttr();
  if (!tokens)
    return std::nullopt;
  GenerationFigures g;
  g.maxNewTokens = tokens.getInt();
  if (auto beams =
          func->getAttrOfType<IntegerAttr>(nn::NNDialect::kNumBeamsAttrName))
    g.numBeams = beams.getInt();
  if (func.getNumArguments())
    if (auto ids = dyn_cast<RankedTensorType>(func.getArgumentTypes()[0]);
        ids && ids.getRank() == 2)
      g.promptLength = ids.getDimSize(1);

  func.walk([&](nn::KvCacheUpdateOp update) {
    std::optional<int64_t> block = update.getBlockSize();
    g.staticCache |= update.getStaticCache() && !block;
    if (!block || update.getPast())
      return;
    // A layer's buffer: [batch, kv heads, blocks x block size, head dim].
    auto type = cast<RankedTensorType>(update.getResult().getType());
    g.kvBlockSize = *block;
    g.kvCacheBlocks = std::max(
        g.kvCacheBlocks, type.getDimSize(0) * type.getDimSize(2) / *block);
  });
  func.walk([&](nn::NextTokenOp choice) {
    nn::NextTokenOp::Processors w = choice.getProcessors();
    g.sample = choice.getSample();
    if (w.repetitionPenalty)
      g.repetitionPenalty =
          choice.getRepetitionPenaltyAttr().getValueAsDouble();
    if (w.minP)
      g.minP = choice.getMinPAttr().getValueAsDouble();
    if (w.temperature)
      g.temperature = choice.getTemperatureAttr().getValueAsDouble();
    if (w.topK)
      g.topK = choice.getTopKAttr().getInt();
    if (w.topP)
      g.topP = choice.getTopPAttr().getValueAsDouble();
    return WalkResult::interrupt();
  });

  unsigned numOps = memory.getNumOps();
  bool decoding = false;
  for (unsigned i = 0; i <= numOps + 1; ++i) {
    int64_t live = memory.getLiveBytes(i);
    Operation *op = memory.getOp(i);
    if (!decoding) {
      g.prefillPeakBytes = std::max(g.prefillPeakBytes, live);
      if (op)
        g.prefillFlops += flops.getOpFlops(op, convention);
      decoding = isa_and_nonnull<nn::NextTokenOp>(op);
      continue;
    }
    // After the prefill's token, ops up to the last one belong to the last
    // decode step; the step's exit (nothing runs) belongs to no phase, nor
    // do the nn.kv_cache_past ops that stand for the steps before it (a
    // cache growing, or a sliding window's shrinking from the prompt's
    // length: each old and new layer at once, which the last step does not
    // see).
    if (!op || isa<nn::KvCachePastOp>(op))
      continue;
    g.decodePeakBytes = std::max(g.decodePeakBytes.value_or(0), live);
    g.decodeStepFlops += flops.getOpFlops(op, convention);
  }
  if (g.maxNewTokens == 1)
    g.decodePeakBytes.reset();

  unsigned exit = numOps + 1;
  for (const Storage &s : memory.getStorages())
    if (s.category == nn::MemoryCategory::KvCache && s.lastUse == exit)
      g.kvCacheBytes += s.bytes;
  return g;
}
