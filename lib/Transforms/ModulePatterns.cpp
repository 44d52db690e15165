//===- ModulePatterns.cpp - globs and module paths over names -------------===//

#include "vram/Transforms/ModulePatterns.h"

#include "vram/Analysis/StepInfo.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace vram;

LogicalResult ModulePatterns::compile(ArrayRef<std::string> sources,
                                      Location loc, bool suffixes) {
  for (const std::string &source : sources) {
    StringRef stable = spellings.emplace_back(source);
    this->sources.push_back(stable);
    SmallVector<StringRef, 2> forms = {stable};
    if (stable.find_first_of("*?[") == StringRef::npos) {
      forms.push_back(spellings.emplace_back(source + ".*"));
      if (suffixes) {
        forms.push_back(spellings.emplace_back("*." + source));
        forms.push_back(spellings.emplace_back("*." + source + ".*"));
      }
    }
    for (StringRef form : forms) {
      auto glob = llvm::GlobPattern::create(form);
      if (!glob)
        return emitError(loc) << "invalid pattern '" << source
                              << "': " << llvm::toString(glob.takeError());
      globs.push_back(std::move(*glob));
      sourceOfGlob.push_back(this->sources.size() - 1);
    }
  }
  matchedSources.resize(this->sources.size());
  return success();
}

bool ModulePatterns::matches(StringRef name) const {
  bool any = false;
  for (auto [glob, source] : llvm::zip_equal(globs, sourceOfGlob))
    if (glob.match(name)) {
      matchedSources.set(source);
      any = true;
    }
  return any;
}

SmallVector<StringRef> ModulePatterns::getUnmatched() const {
  SmallVector<StringRef> unmatched;
  for (auto [i, source] : llvm::enumerate(sources))
    if (!matchedSources.test(i))
      unmatched.push_back(source);
  return unmatched;
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

SmallVector<std::string> vram::getNearestNames(StringRef pattern,
                                               ArrayRef<std::string> names,
                                               unsigned count) {
  // Candidates are the module names that make up the paths (`layer1`,
  // `conv1`, `q_proj`), not list indices.
  std::vector<std::pair<unsigned, std::string>> scored;
  llvm::StringSet<> seen;
  for (const std::string &name : names) {
    SmallVector<StringRef> parts;
    StringRef(name).split(parts, '.');
    for (StringRef part : parts) {
      unsigned index;
      if (part.empty() || !part.getAsInteger(10, index) ||
          !seen.insert(part).second)
        continue;
      scored.emplace_back(pattern.edit_distance(part), part.str());
    }
  }
  llvm::stable_sort(
      scored, [](const auto &a, const auto &b) { return a.first < b.first; });
  SmallVector<std::string> nearest;
  for (auto &[distance, name] : scored) {
    if (nearest.size() == count)
      break;
    nearest.push_back(name);
  }
  return nearest;
}

StringRef vram::moduleOfParameter(StringRef paramName) {
  size_t dot = paramName.rfind('.');
  return dot == StringRef::npos ? StringRef() : paramName.take_front(dot);
}

/// The pattern of the list whose element component `i` of `parts` names:
/// `model.layers.*` for `model.layers.3.mlp` (an integer, as ModuleList and
/// Sequential name their elements), `encoder.layers.encoder_layer_*` for
/// `encoder.layers.encoder_layer_3.mlp` (torchvision's ViT: an
/// OrderedDict-built Sequential of `NAME_N` blocks, a module with
/// submodules), or "" when it names none.
static std::string getElementListPattern(ArrayRef<StringRef> parts, size_t i) {
  StringRef part = parts[i];
  std::string parent = llvm::join(parts.take_front(i), ".");
  unsigned index;
  if (i > 0 && !part.getAsInteger(10, index))
    return parent + ".*";
  StringRef digits = part.substr(part.find_last_not_of("0123456789") + 1);
  StringRef prefix = part.drop_back(digits.size());
  if (digits.empty() || !prefix.consume_back("_") || prefix.empty() ||
      i + 1 == parts.size())
    return "";
  return (parent.empty() ? "" : parent + ".") + prefix.str() + "_*";
}

SmallVector<std::string> vram::getRepeatedBlockPatterns(func::FuncOp func) {
  // A module path with an element component names an element of a
  // ModuleList or Sequential (`model.layers.3.mlp`, `layer2.1.conv1`,
  // `encoder.layers.encoder_layer_3.mlp`): the outermost such list per path
  // is where people checkpoint, one element at a time.
  SmallVector<std::string> lists;
  llvm::StringSet<> seen;
  func.walk([&](Operation *op) {
    std::string layer = getLayerName(op->getLoc());
    SmallVector<StringRef> parts;
    StringRef(layer).split(parts, '.');
    for (size_t i = 0; i < parts.size(); ++i) {
      std::string list = getElementListPattern(parts, i);
      if (list.empty())
        continue;
      if (seen.insert(list).second)
        lists.push_back(std::move(list));
      return;
    }
  });
  return lists;
}
