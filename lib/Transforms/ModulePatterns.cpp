//===- ModulePatterns.cpp - globs and module paths over names -------------===//

#include "vram/Transforms/ModulePatterns.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace vram;

LogicalResult ModulePatterns::compile(ArrayRef<std::string> sources,
                                      Location loc) {
  for (const std::string &source : sources) {
    StringRef stable = spellings.emplace_back(source);
    SmallVector<StringRef, 2> forms = {stable};
    if (stable.find_first_of("*?[") == StringRef::npos)
      forms.push_back(spellings.emplace_back(source + ".*"));
    for (StringRef form : forms) {
      auto glob = llvm::GlobPattern::create(form);
      if (!glob)
        return emitError(loc) << "invalid pattern '" << source
                              << "': " << llvm::toString(glob.takeError());
      globs.push_back(std::move(*glob));
    }
  }
  return success();
}

bool ModulePatterns::matches(StringRef name) const {
  return llvm::any_of(
      globs, [&](const llvm::GlobPattern &g) { return g.match(name); });
}

StringRef ModulePatterns::matchingModule(StringRef name) const {
  if (name.empty())
    return StringRef();
  for (size_t dot = name.find('.'); dot != StringRef::npos;
       dot = name.find('.', dot + 1))
    if (matches(name.take_front(dot)))
      return name.take_front(dot);
  return matches(name) ? name : StringRef();
}

StringRef vram::moduleOfParameter(StringRef paramName) {
  size_t dot = paramName.rfind('.');
  return dot == StringRef::npos ? StringRef() : paramName.take_front(dot);
}
