//===- NNAttributes.h - nn dialect enums and attributes ---------*- C++ -*-===//

#ifndef VRAM_DIALECT_NN_NNATTRIBUTES_H
#define VRAM_DIALECT_NN_NNATTRIBUTES_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"

#include <algorithm>
#include <optional>
#include <string>

#include "vram/Dialect/NN/NNEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "vram/Dialect/NN/NNAttributes.h.inc"

namespace vram::nn {

/// A CommandLine modifier that makes every case of an ODS enum an accepted
/// value of a `cl::opt<EnumT>` or of a pass option of that type, spelled as
/// the enum's string form, or with `-` for `_` (`for-loop`). Cases are
/// numbered from 0 without gaps.
///
///   cl::opt<OptimizerKind> optimizer("optimizer",
///   EnumValues<OptimizerKind>());
template <typename EnumT> struct EnumValues {
  template <typename Opt> void apply(Opt &opt) const {
    for (unsigned i = 0;; ++i) {
      auto value = static_cast<EnumT>(i);
      llvm::StringRef name = stringifyEnum(value);
      if (name.empty())
        break;
      opt.getParser().addLiteralOption(name, value, name);
      if (name.contains('_')) {
        // CommandLine keeps the StringRef: the spelling must outlive it.
        static llvm::StringSet<> spellings;
        std::string alias = name.str();
        std::replace(alias.begin(), alias.end(), '_', '-');
        opt.getParser().addLiteralOption(
            spellings.insert(alias).first->getKey(), value, name);
      }
    }
  }
};

/// The enum value a spelling names, accepting what EnumValues accepts (the
/// string form, or `-` for `_`): for option values read elsewhere than the
/// command line (the Clang plugin's annotations).
template <typename EnumT>
std::optional<EnumT> parseEnumSpelling(llvm::StringRef spelling) {
  for (unsigned i = 0;; ++i) {
    auto value = static_cast<EnumT>(i);
    llvm::StringRef name = stringifyEnum(value);
    if (name.empty())
      return std::nullopt;
    std::string alias = name.str();
    std::replace(alias.begin(), alias.end(), '_', '-');
    if (spelling == name || spelling == alias)
      return value;
  }
}

/// The accepted spellings of an enum, for messages: "sgd, momentum, adam".
template <typename EnumT> std::string enumSpellings() {
  std::string out;
  for (unsigned i = 0;; ++i) {
    llvm::StringRef name = stringifyEnum(static_cast<EnumT>(i));
    if (name.empty())
      break;
    out += (i ? ", " : "") + name.str();
  }
  return out;
}

} // namespace vram::nn

#endif // VRAM_DIALECT_NN_NNATTRIBUTES_H
