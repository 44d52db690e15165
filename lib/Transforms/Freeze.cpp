//===- Freeze.cpp - freeze parameters by name -----------------------------===//

#include "vram/Dialect/NN/NNOps.h"
#include "vram/Transforms/Passes.h"

#include "llvm/ADT/StringSet.h"

#include "llvm/Support/GlobPattern.h"
#include <deque>

namespace vram {
#define GEN_PASS_DEF_FREEZE
#include "vram/Transforms/Passes.h.inc"
} // namespace vram

using namespace mlir;

namespace {
struct FreezePass : public vram::impl::FreezeBase<FreezePass> {
  using FreezeBase::FreezeBase;

  void runOnOperation() override {
    SmallVector<llvm::GlobPattern> freeze, keepTrainable;
    if (failed(compile(patterns, freeze)) ||
        failed(compile(keep, keepTrainable)))
      return signalPassFailure();
    if (!(firstFraction >= 0 && firstFraction <= 1)) {
      emitError(getOperation().getLoc())
          << "first-fraction must be in [0, 1], got " << firstFraction;
      return signalPassFailure();
    }
    llvm::StringSet<> frozenModules = firstModules();
    auto matches = [](ArrayRef<llvm::GlobPattern> globs, StringRef name) {
      return llvm::any_of(
          globs, [&](const llvm::GlobPattern &g) { return g.match(name); });
    };
    getOperation().walk([&](vram::nn::ParamOp param) {
      StringRef name = param.getName();
      bool frozen =
          (matches(freeze, name) || frozenModules.contains(moduleOf(name))) &&
          !matches(keepTrainable, name);
      if (frozen && param.getTrainable()) {
        param.setTrainable(false);
        ++numFrozen;
      }
    });
  }

  /// `layer1.0.conv1.weight` -> `layer1.0.conv1`; a top-level parameter
  /// belongs to the root module "".
  static StringRef moduleOf(StringRef paramName) {
    size_t dot = paramName.rfind('.');
    return dot == StringRef::npos ? StringRef() : paramName.take_front(dot);
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
        visit(moduleOf(param.getName()));
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

  /// Globs; a pattern without wildcards is a module path: itself and what
  /// is under it.
  LogicalResult compile(ArrayRef<std::string> sources,
                        SmallVectorImpl<llvm::GlobPattern> &globs) {
    for (const std::string &source : sources) {
      SmallVector<StringRef, 2> forms = {source};
      // GlobPattern keeps pointers into its source: the spelling must live
      // as long as the pattern.
      if (StringRef(source).find_first_of("*?[") == StringRef::npos)
        forms.push_back(spellings.emplace_back(source + ".*"));
      for (StringRef form : forms) {
        auto glob = llvm::GlobPattern::create(form);
        if (!glob) {
          emitError(getOperation().getLoc())
              << "invalid pattern '" << source
              << "': " << llvm::toString(glob.takeError());
          return failure();
        }
        globs.push_back(std::move(*glob));
      }
    }
    return success();
  }

  std::deque<std::string> spellings;
};
} // namespace
