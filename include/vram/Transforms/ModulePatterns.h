//===- ModulePatterns.h - globs and module paths over names -----*- C++ -*-===//
//
// The name matching the scenario passes share (vram-freeze, vram-lora,
// vram-checkpoint): each pattern is a glob (`layer1.*`, `*.conv?`) or, when
// it has no wildcard, a module path, which matches the module itself and
// everything under it (`layer1` matches `layer1` and `layer1.0.conv1`).
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_TRANSFORMS_MODULEPATTERNS_H
#define VRAM_TRANSFORMS_MODULEPATTERNS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/Support/GlobPattern.h"

#include <deque>
#include <string>

namespace vram {

class ModulePatterns {
public:
  /// Compiles `sources`; an invalid glob is an error at `loc` naming it.
  /// With `suffixes`, a pattern without wildcards also matches, as peft's
  /// target_modules do, every name that ends with it as whole components
  /// (`q_proj` matches `model.layers.0.self_attn.q_proj`) and what is under
  /// such a name.
  mlir::LogicalResult compile(llvm::ArrayRef<std::string> sources,
                              mlir::Location loc, bool suffixes = false);

  bool empty() const { return globs.empty(); }
  /// Whether any pattern matches `name`. Records which patterns matched.
  bool matches(llvm::StringRef name) const;
  /// The patterns no `matches` call has matched so far, as written: a
  /// pattern that selects nothing is a typo, not a no-op.
  llvm::SmallVector<llvm::StringRef> getUnmatched() const;
  /// The shortest module prefix of `name` (`layer1`, `layer1.0`, ...,
  /// `name` itself) that a pattern matches, or "" when none does: the module
  /// that a pattern such as `layer2.*` selects for a layer under it.
  llvm::StringRef matchingModule(llvm::StringRef name) const;

private:
  llvm::SmallVector<llvm::GlobPattern> globs;
  /// For each glob, the index of the source pattern it was compiled from.
  llvm::SmallVector<unsigned> sourceOfGlob;
  llvm::SmallVector<llvm::StringRef> sources;
  mutable llvm::BitVector matchedSources;
  // GlobPattern keeps pointers into its source: the spellings live as long
  // as the patterns.
  std::deque<std::string> spellings;
};

/// Up to `count` distinct module names (path components that are not list
/// indices) of `names` nearest to `pattern` by edit distance, for "did you
/// mean" hints.
llvm::SmallVector<std::string>
getNearestNames(llvm::StringRef pattern, llvm::ArrayRef<std::string> names,
                unsigned count = 3);

/// Checkpoint patterns for every repeated block of `func`'s layers: the
/// outermost ModuleList or Sequential of each layer path (`model.layers.*`
/// for a decoder stack, `layer1.*` ... `layer4.*` for a ResNet), in the
/// order the layers run; empty when no layer path has an element index.
llvm::SmallVector<std::string>
getRepeatedBlockPatterns(mlir::func::FuncOp func);

/// The module of a parameter: `layer1.0.conv1.weight` -> `layer1.0.conv1`;
/// a top-level parameter belongs to the root module "".
llvm::StringRef moduleOfParameter(llvm::StringRef paramName);

} // namespace vram

#endif // VRAM_TRANSFORMS_MODULEPATTERNS_H
