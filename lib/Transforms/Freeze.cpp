//===- Freeze.cpp - freeze parameters by name -----------------------------===//

#include "vram/Dialect/NN/NNOps.h"
#include "vram/Transforms/ModulePatterns.h"
#include "vram/Transforms/Passes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

namespace vram {
#define GEN_PASS_DEF_FREEZE
#include "vram/Transforms/Passes.h.inc"
} // namespace vram

using namespace mlir;

namespace {
struct FreezePass : public vram::impl::FreezeBase<FreezePass> {
  using FreezeBase::FreezeBase;

  void runOnOperation() override {
    vram::ModulePatterns freeze, keepTrainable;
    // A module name matches as peft's target_modules do: `embed_tokens`
    // freezes `model.embed_tokens`.
    if (failed(freeze.compile(patterns, getOperation().getLoc(),
                              /*suffixes=*/true)) ||
        failed(keepTrainable.compile(keep, getOperation().getLoc(),
                                     /*suffixes=*/true)))
      return signalPassFailure();
    if (!(firstFraction >= 0 && firstFraction <= 1)) {
      emitError(getOperation().getLoc())
          << "first-fraction must be in [0, 1], got " << firstFraction;
      return signalPassFailure();
    }
    llvm::StringSet<> frozenModules = firstModules();
    getOperation().walk([&](vram::nn::ParamOp param) {
      StringRef name = param.getName();
      // Both sets are matched against every name, so that each pattern's
      // use is known.
      bool selected = freeze.matches(name);
      bool kept = keepTrainable.matches(name);
      bool frozen =
          (selected || frozenModules.contains(vram::moduleOfParameter(name))) &&
          !kept;
      if (frozen && param.getTrainable()) {
        param.setTrainable(false);
        ++numFrozen;
      }
    });
    // A pattern that selects no parameter is a typo (or the wrong model):
    // ignoring it would report a step that is not the one asked for.
    bool unmatched = false;
    std::vector<std::string> modules;
    getOperation().walk([&](vram::nn::ParamOp param) {
      modules.push_back(vram::moduleOfParameter(param.getName()).str());
    });
    for (auto [set, option] :
         {std::pair{&freeze, "patterns"}, std::pair{&keepTrainable, "keep"}})
      for (StringRef pattern : set->getUnmatched()) {
        InFlightDiagnostic diag =
            emitError(getOperation().getLoc())
            << "freeze " << option << " pattern '" << pattern
            << "' matches no parameter (patterns are globs over parameter "
               "names, such as 'layer1.*', or module names, such as "
               "'layer1' or 'q_proj', each matching the modules whose path "
               "is or ends with it)";
        SmallVector<std::string> nearest =
            vram::getNearestNames(pattern, modules);
        if (!nearest.empty())
          diag << "; nearest module names: " << llvm::join(nearest, ", ");
        unmatched = true;
      }
    if (unmatched)
      signalPassFailure();
  }

  /// The first floor(firstFraction x n) modules, in named_modules() order.
  llvm::StringSet<> firstModules() {
    llvm::StringSet<> chosen;
    if (firstFraction <= 0)
      return chosen;
    std::vector<std::string> order;
    llvm::StringSet<> seen;
    auto visit = [&](StringRef path) {
      // Each prefix before the path itself: parents come first.
      SmallVector<StringRef> prefixes = {StringRef()};
      for (size_t dot = path.find('.'); dot != StringRef::npos;
           dot = path.find('.', dot + 1))
        prefixes.push_back(path.take_front(dot));
      if (!path.empty())
        prefixes.push_back(path);
      for (StringRef prefix : prefixes)
        if (seen.insert(prefix).second)
          order.push_back(prefix.str());
    };
    getOperation().walk([&](Operation *op) {
      if (auto param = dyn_cast<vram::nn::ParamOp>(op))
        visit(vram::moduleOfParameter(param.getName()));
      else if (auto name = dyn_cast<NameLoc>(op->getLoc());
               name && op->getDialect() &&
               isa<vram::nn::NNDialect>(op->getDialect()) &&
               !name.getName().getValue().contains('/')) // ONNX node names
        visit(name.getName().getValue());
    });
    size_t count = static_cast<size_t>(firstFraction * order.size());
    for (size_t i = 0; i < count; ++i)
      chosen.insert(order[i]);
    return chosen;
  }
};
} // namespace
