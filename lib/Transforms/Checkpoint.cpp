//===- Checkpoint.cpp - activation checkpointing of modules ---------------===//
//
// torch.utils.checkpoint(fn, *args, use_reentrant=False) runs `fn` under
// saved-tensor hooks that keep nothing (a holder per saved tensor) and keeps
// `args` for later. When backward unpacks the first holder of the segment,
// `fn` runs again with grad enabled (RNG state restored, so dropout draws the
// same mask) and the hooks store what its ops save; each stored tensor is
// released when the backward node that holds it has run. torch 2 stops the
// recomputation once every holder is filled; torch 1.13 runs all of `fn`.
//
// On the built step: the segment's forward ops are cloned right before the
// first backward node of the segment that keeps a tensor, the backward nodes
// of the segment read the clones, and the clones carry
// `nn.phase = #nn<phase recompute>`. The memory analysis then frees the
// original forward values after their last forward use, keeps the segment's
// inputs until the recomputation, and frees each recomputed tensor after its
// backward node; FlopAnalysis counts the clones in the recompute phase.
//
//===----------------------------------------------------------------------===//

#include "vram/Analysis/StepInfo.h"
#include "vram/Dialect/NN/NNOps.h"
#include "vram/Transforms/ModulePatterns.h"
#include "vram/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"

namespace vram {
#define GEN_PASS_DEF_CHECKPOINT
#include "vram/Transforms/Passes.h.inc"
} // namespace vram

using namespace mlir;
using namespace vram;
using namespace vram::nn;

namespace {

/// The forward ops of one call of a checkpointed module, in order.
struct Segment {
  std::string module;
  llvm::SetVector<Operation *> ops;
};

struct CheckpointPass : public vram::impl::CheckpointBase<CheckpointPass> {
  using CheckpointBase::CheckpointBase;

  void runOnOperation() override;

private:
  /// The segment op a backward node differentiates, found through what it
  /// keeps: the op of a result or extra tensor, or the op of the node's kind
  /// that uses a saved value at its operand position. Null when none.
  Operation *forwardOpOf(BackwardOp node) const;

  DenseMap<Operation *, int> segmentOf;
};

} // namespace

Operation *CheckpointPass::forwardOpOf(BackwardOp node) const {
  for (auto [savedValue, role] :
       llvm::zip(node.getSaved(), node.getSavedRoles())) {
    auto r = cast<SavedRoleAttr>(role);
    Value value = savedValue;
    Operation *def = value.getDefiningOp();
    unsigned operandIndex = r.getIndex();
    bool byOperand = r.getKind() == SavedKind::Operand;
    if (r.getKind() == SavedKind::Extra)
      if (auto saved = dyn_cast_or_null<SavedOp>(def)) {
        // A clone made before the op: found through its first operand.
        if (saved.getBeforeOp() && !saved.getSources().empty()) {
          value = saved.getSources().front();
          operandIndex = 0;
          byOperand = true;
        } else if (!saved.getSources().empty()) {
          def = saved.getSources().back().getDefiningOp();
        }
      }
    if (!byOperand) {
      if (segmentOf.count(def))
        return def;
      continue;
    }
    for (OpOperand &use : value.getUses())
      if (use.getOperandNumber() == operandIndex &&
          use.getOwner()->getName().getStringRef() == node.getForwardOp() &&
          segmentOf.count(use.getOwner()))
        return use.getOwner();
  }
  return nullptr;
}

void CheckpointPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto step = module.lookupSymbol<func::FuncOp>(entry);
  if (!step || getStepMode(step) != StepMode::Train) {
    emitError(module.getLoc())
        << "activation checkpointing needs a built training step @" << entry
        << " (run vram-build-step with mode=train first)";
    return signalPassFailure();
  }
  if (modules.empty() ||
      llvm::any_of(modules, [](const std::string &m) { return m.empty(); })) {
    emitError(module.getLoc())
        << "activation checkpointing needs the modules to checkpoint "
           "(non-empty patterns)";
    return signalPassFailure();
  }
  // '*' alone means every repeated block, as people mean it (each element
  // of the outermost ModuleList or Sequential: `model.layers.*` of a
  // decoder stack, gradient_checkpointing_enable()'s units); a model without
  // one checkpoints every top-level module. A module name matches as peft's
  // target_modules do: `layers` selects `model.layers`.
  SmallVector<std::string> selected;
  for (const std::string &pattern : modules) {
    SmallVector<std::string> blocks;
    if (pattern == "*")
      blocks = getRepeatedBlockPatterns(step);
    if (blocks.empty())
      selected.push_back(pattern);
    else
      selected.append(blocks.begin(), blocks.end());
  }
  ModulePatterns patterns;
  if (failed(patterns.compile(selected, module.getLoc(), /*suffixes=*/true)))
    return signalPassFailure();

  // 1. Segments: maximal runs of forward ops of one checkpointed module.
  // Persistent storage (parameters next to their layer) is not computed
  // and does not interrupt a run.
  Block &body = step.getBody().front();
  SmallVector<Segment> segments;
  bool inRun = false; // the previous computed op was in a segment
  for (Operation &op : body.without_terminator()) {
    if (getStepPhase(&op) != StepPhase::Forward ||
        isa<PersistentStorageOpInterface>(op))
      continue;
    std::string layer = getLayerName(op.getLoc());
    // The criterion vram-build-step adds (located at `loss`) runs outside
    // the model: no module of it is checkpointed.
    StringRef owner =
        layer == kLossLayerName ? StringRef() : patterns.matchingModule(layer);
    if (owner.empty()) {
      inRun = false;
      continue;
    }
    if (!inRun || segments.back().module != owner)
      segments.push_back({owner.str(), {}});
    segments.back().ops.insert(&op);
    segmentOf[&op] = segments.size() - 1;
    inRun = true;
  }
  // A pattern that selects nothing is a typo (or the wrong model): an
  // error naming the nearest modules, not a step without it.
  SmallVector<StringRef> unmatched = patterns.getUnmatched();
  if (!unmatched.empty()) {
    std::vector<std::string> layers;
    for (Operation &op : body.without_terminator())
      if (getStepPhase(&op) == StepPhase::Forward)
        layers.push_back(getLayerName(op.getLoc()));
    for (StringRef pattern : unmatched) {
      InFlightDiagnostic diag =
          emitError(step.getLoc())
          << "checkpoint pattern '" << pattern
          << "' matches no module of the forward (patterns are globs over "
             "module paths, such as 'model.layers.*', or module names, "
             "matching the modules whose path is or ends with them)";
      SmallVector<std::string> nearest = getNearestNames(pattern, layers);
      if (!nearest.empty())
        diag << "; nearest module names: " << llvm::join(nearest, ", ");
    }
    return signalPassFailure();
  }
  if (segments.empty()) {
    emitError(step.getLoc())
        << "no forward op belongs to a module matching the checkpoint "
           "patterns";
    return signalPassFailure();
  }

  // 2. Each segment's backward nodes that keep something, in step order,
  // and the forward ops that save something.
  SmallVector<SmallVector<BackwardOp>> nodes(segments.size());
  DenseSet<Operation *> saving;
  for (auto node : step.getOps<BackwardOp>())
    if (!node.getSaved().empty())
      if (Operation *forward = forwardOpOf(node)) {
        nodes[segmentOf.lookup(forward)].push_back(node);
        saving.insert(forward);
      }

  // 3. Recompute each segment before its first such node.
  bool earlyStop = getTorchTarget(step).version == TorchVersion::V2;
  auto recompute = StepPhaseAttr::get(&getContext(), StepPhase::Recompute);
  OpBuilder b(&getContext());
  for (auto [segment, segmentNodes] : llvm::zip(segments, nodes)) {
    if (segmentNodes.empty())
      continue; // nothing of it is kept: nothing to recompute
    ++numSegments;
    b.setInsertionPoint(segmentNodes.front());
    IRMapping mapping;
    SmallVector<std::pair<Operation *, Operation *>> clones; // original, clone
    for (Operation *op : segment.ops) {
      Operation *clone = b.clone(*op, mapping);
      // A release (what the model's code holds) has a phase of its own.
      if (auto release = dyn_cast<ReleaseOp>(clone))
        release.setPhase(StepPhase::Recompute);
      else
        clone->setAttr(NNDialect::kPhaseAttrName, recompute);
      clones.push_back({op, clone});
    }
    for (BackwardOp node : segmentNodes)
      for (OpOperand &saved : node.getSavedMutable())
        if (Value recomputed = mapping.lookupOrNull(saved.get()))
          saved.set(recomputed);
    // torch 2 stops once the last tensor a node keeps is saved again: the
    // ops after the last op that saves something do not run.
    if (earlyStop)
      while (!clones.empty() && clones.back().second->use_empty() &&
             !saving.contains(clones.back().first)) {
        clones.back().second->erase();
        clones.pop_back();
      }
    numRecomputed += clones.size();
  }
  // The checkpointed modules are a fact of the step (the report reads them):
  // the patterns applied, after those of an earlier run.
  SmallVector<Attribute> applied;
  if (auto earlier =
          step->getAttrOfType<ArrayAttr>(NNDialect::kCheckpointAttrName))
    applied.append(earlier.begin(), earlier.end());
  for (const std::string &pattern : modules) {
    auto attr = StringAttr::get(&getContext(), pattern);
    if (!llvm::is_contained(applied, attr))
      applied.push_back(attr);
  }
  step->setAttr(NNDialect::kCheckpointAttrName,
                ArrayAttr::get(&getContext(), applied));
}
