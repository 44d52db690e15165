//===- Freeze.cpp - freeze parameters by name -----------------------------===//

#include "vram/Dialect/NN/NNOps.h"
#include "vram/Transforms/Passes.h"

#include "llvm/Support/GlobPattern.h"

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
    auto matches = [](ArrayRef<llvm::GlobPattern> globs, StringRef name) {
      return llvm::any_of(
          globs, [&](const llvm::GlobPattern &g) { return g.match(name); });
    };
    getOperation().walk([&](vram::nn::ParamOp param) {
      if (matches(freeze, param.getName()) &&
          !matches(keepTrainable, param.getName()))
        param.setTrainable(false);
    });
  }

  LogicalResult compile(ArrayRef<std::string> sources,
                        SmallVectorImpl<llvm::GlobPattern> &globs) {
    for (const std::string &source : sources) {
      auto glob = llvm::GlobPattern::create(source);
      if (!glob) {
        emitError(getOperation().getLoc())
            << "invalid pattern '" << source
            << "': " << llvm::toString(glob.takeError());
        return failure();
      }
      globs.push_back(std::move(*glob));
    }
    return success();
  }
};
} // namespace
