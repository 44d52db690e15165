//===- Values.h - values of the LibTorch C++ interpreter --------*- C++ -*-===//
//
// The C++ front end interprets a module's constructor and forward() over
// abstract values: compile-time constants (integers, reals, booleans,
// strings, lists), option objects built by `XxxOptions(...).setter(...)`
// chains, module objects (a LibTorch module tree as the constructor builds
// it) and tensors (MLIR values of the `nn` IR being built).
//
// This header is private to lib/Import/Cxx.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_LIB_IMPORT_CXX_VALUES_H
#define VRAM_LIB_IMPORT_CXX_VALUES_H

#include "mlir/IR/Value.h"
#include "clang/Basic/SourceLocation.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace clang {
class CXXRecordDecl;
} // namespace clang

namespace vram::cxx_import {

struct Module;
struct OptionsObject;
using ModuleRef = std::shared_ptr<Module>;

/// A value of the interpreter.
struct Val {
  enum class Kind {
    None,    ///< nothing (void, nullptr, an empty holder)
    Int,     ///< integers and booleans (`isBool`)
    Float,   ///< reals
    Str,     ///< string literals
    List,    ///< braced lists, IntArrayRef, ExpandingArray, std::vector
    Options, ///< a LibTorch options object
    Module,  ///< a module (holder or Impl)
    Tensor,  ///< a tensor of the IR being built
    Param,   ///< a registered parameter or buffer, not yet materialized
  };
  Kind kind = Kind::None;
  int64_t i = 0;
  bool isBool = false;
  double f = 0;
  std::string s;
  std::vector<Val> list;
  std::shared_ptr<OptionsObject> options;
  ModuleRef module; ///< Module; Param: its owner
  mlir::Value tensor;

  static Val integer(int64_t v) {
    Val r;
    r.kind = Kind::Int;
    r.i = v;
    return r;
  }
  static Val boolean(bool v) {
    Val r = integer(v);
    r.isBool = true;
    return r;
  }
  static Val real(double v) {
    Val r;
    r.kind = Kind::Float;
    r.f = v;
    return r;
  }
  static Val string(std::string v) {
    Val r;
    r.kind = Kind::Str;
    r.s = std::move(v);
    return r;
  }
  static Val ofTensor(mlir::Value v) {
    Val r;
    r.kind = Kind::Tensor;
    r.tensor = v;
    return r;
  }
  static Val ofModule(ModuleRef m) {
    Val r;
    r.kind = Kind::Module;
    r.module = std::move(m);
    return r;
  }

  bool isNumber() const { return kind == Kind::Int || kind == Kind::Float; }
  std::optional<int64_t> getInt() const {
    if (kind == Kind::Int)
      return i;
    return std::nullopt;
  }
  std::optional<double> getReal() const {
    if (kind == Kind::Int)
      return double(i);
    if (kind == Kind::Float)
      return f;
    return std::nullopt;
  }
  /// An integer or a list of integers as `n` values (ExpandingArray<n>);
  /// any count when `n` is 0.
  std::optional<llvm::SmallVector<int64_t>> getInts(unsigned n = 0) const;
  /// A short description for messages ("integer 3", "a tensor").
  std::string describe() const;
};

/// `Conv2dOptions(3, 64, 7).stride(2)`: the constructor's arguments and the
/// fields set by setters.
struct OptionsObject {
  std::vector<Val> positional;
  llvm::StringMap<Val> fields;

  /// The field `name` if set, else positional argument `index`.
  const Val *get(llvm::StringRef name, int index = -1) const {
    auto it = fields.find(name);
    if (it != fields.end())
      return &it->second;
    if (index >= 0 && index < int(positional.size()))
      return &positional[index];
    return nullptr;
  }
};

/// A tensor registered with register_parameter / register_buffer, or a
/// parameter or buffer of a built-in layer.
struct TensorDecl {
  std::string name; ///< leaf name: "weight"
  llvm::SmallVector<int64_t> shape;
  bool isBuffer = false;
  bool isInt64 = false; ///< BatchNorm's num_batches_tracked
  bool trainable = true;
  mlir::Value value; ///< once materialized in the IR
};

/// A LibTorch module object.
struct Module {
  /// Built-in kind ("Conv2d", "Linear", "Sequential", ...), or empty for a
  /// user module whose class is `record`.
  std::string kind;
  const clang::CXXRecordDecl *record = nullptr;
  OptionsObject options;
  /// Submodules in registration order (named_children()).
  std::vector<std::pair<std::string, ModuleRef>> children;
  /// Own parameters and buffers in registration order.
  std::vector<TensorDecl> tensors;
  /// Member variables of a user module.
  llvm::StringMap<Val> fields;
  /// Where the module was constructed (register_module's argument).
  clang::SourceLocation declLoc;
  /// Dotted path from the root ("layer1.0.conv1"), set after construction.
  std::string path;
  bool called = false;

  std::string displayName() const {
    return path.empty() ? std::string("the root module") : "'" + path + "'";
  }
  TensorDecl *findTensor(llvm::StringRef name) {
    for (TensorDecl &t : tensors)
      if (t.name == name)
        return &t;
    return nullptr;
  }
};

} // namespace vram::cxx_import

#endif // VRAM_LIB_IMPORT_CXX_VALUES_H
