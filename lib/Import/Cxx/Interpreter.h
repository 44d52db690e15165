//===- Interpreter.h - LibTorch module interpreter over the AST -*- C++ -*-===//
//
// Evaluates a module's constructor (building the module tree: submodules,
// options, parameters) and its forward() (building `nn` IR) by walking the
// Clang AST of the translation unit. Expressions evaluate to Vals
// (Values.h): what cannot be known at compile time is a located error, what
// the interpreter cannot model is a located warning saying what it assumed.
//
// Built-in LibTorch layers (Conv2d, Linear, ...) and torch functions
// (torch::relu, Tensor::view, ...) are tables (Builtins.cpp): one entry per
// layer or function.
//
// This header is private to lib/Import/Cxx.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_LIB_IMPORT_CXX_INTERPRETER_H
#define VRAM_LIB_IMPORT_CXX_INTERPRETER_H

#include "Values.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Stmt.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <functional>

namespace vram::cxx_import {

class Interpreter;

/// One activation of an interpreted function.
struct Frame {
  ModuleRef self; ///< `this`
  llvm::DenseMap<const clang::ValueDecl *, Val> locals;
  std::optional<Val> result;
  bool returned = false;
  bool inForward = false; ///< building IR (tensors allowed)
};

/// A call of a torch function or Tensor method: evaluated arguments (the
/// object first for methods) and where it is.
struct CallInfo {
  llvm::StringRef name;
  llvm::SmallVector<Val> args;
  const clang::Expr *expr;
  mlir::Location loc;
  /// In forward() (building IR): factories create tensors; in a
  /// constructor they give the shape of a parameter or buffer.
  bool inForward = false;
};

/// A built-in layer: its parameters and buffers from its options, and the
/// IR of one call.
struct LayerInfo {
  /// Declares the layer's tensors (`weight`, `bias`, ...) from its options;
  /// fails with a located error on options it cannot read.
  std::function<mlir::LogicalResult(Interpreter &, Module &,
                                    clang::SourceLocation)>
      declare;
  /// Emits the call `layer(x)`.
  std::function<mlir::FailureOr<Val>(Interpreter &, Module &, const Val &,
                                     mlir::Location)>
      call;
  /// Emits a call with several arguments (MultiheadAttention's query, key,
  /// value, ...); when set, it replaces `call`.
  std::function<mlir::FailureOr<Val>(Interpreter &, Module &,
                                     llvm::ArrayRef<Val>, mlir::Location)>
      callMany = nullptr;
};
using FunctionConverter =
    std::function<mlir::FailureOr<Val>(Interpreter &, CallInfo &)>;

/// The tables of Builtins.cpp.
const llvm::StringMap<LayerInfo> &getLayerTable();
const llvm::StringMap<FunctionConverter> &getFunctionTable();
const llvm::StringMap<FunctionConverter> &getTensorMethodTable();

class Interpreter {
public:
  Interpreter(clang::ASTContext &ast, mlir::OpBuilder &builder, bool training)
      : ast(ast), builder(builder), training(training) {}

  clang::ASTContext &getAST() { return ast; }
  mlir::OpBuilder &getBuilder() { return builder; }
  bool isTraining() const { return training; }
  /// Statements interpreted so far (against kMaxInterpretedSteps).
  uint64_t getSteps() const { return steps; }

  //===--- Locations and diagnostics --------------------------------------===//

  mlir::Location loc(clang::SourceLocation l);
  mlir::Location loc(const clang::Stmt *s) { return loc(s->getBeginLoc()); }
  /// The location of an op of module `m` called at `call`: the module path
  /// as name, over the call site fused with the module's declaration.
  mlir::Location layerLoc(const Module &m, mlir::Location call);
  /// The location of a functional call in `self`'s forward:
  /// `<path>.<function>`.
  mlir::Location functionLoc(const Frame &frame, llvm::StringRef function,
                             mlir::Location call);
  mlir::InFlightDiagnostic error(mlir::Location l) {
    return mlir::emitError(l);
  }
  mlir::InFlightDiagnostic warning(mlir::Location l) {
    return mlir::emitWarning(l);
  }

  //===--- Modules --------------------------------------------------------===//

  /// Constructs a module of class `record` (a holder or an Impl) with the
  /// arguments, as `Holder(args...)` / `std::make_shared<Impl>(args...)`.
  /// `ctor` is the constructor when the AST names it.
  mlir::FailureOr<ModuleRef>
  constructModule(const clang::CXXRecordDecl *record, llvm::ArrayRef<Val> args,
                  const clang::CXXConstructorDecl *ctor,
                  clang::SourceLocation where);
  /// Calls `m(args...)` / `m->forward(args...)`.
  mlir::FailureOr<Val> callModule(const ModuleRef &m, llvm::ArrayRef<Val> args,
                                  mlir::Location call);
  /// The IR value of a parameter or buffer (created on first use).
  mlir::Value materialize(Module &m, TensorDecl &t);
  /// Creates the parameters and buffers forward() did not use (they exist
  /// in LibTorch: named_parameters() counts them).
  void materializeUnused(Module &root, mlir::Location where);
  /// Sets paths of `m`'s subtree.
  static void assignPaths(Module &m, const std::string &path);

  //===--- Evaluation -----------------------------------------------------===//

  mlir::FailureOr<Val> eval(const clang::Expr *e, Frame &frame);
  mlir::LogicalResult exec(const clang::Stmt *s, Frame &frame);
  /// Calls a function with a body (a user module's method or constructor
  /// body, a helper function) with evaluated arguments.
  mlir::FailureOr<Val> callFunction(const clang::FunctionDecl *fn,
                                    llvm::ArrayRef<Val> args, ModuleRef self,
                                    bool inForward, mlir::Location call);

  /// The tensor argument `index` of a call, or a located error.
  mlir::FailureOr<mlir::Value> tensorArg(CallInfo &call, unsigned index);

private:
  mlir::FailureOr<Val> evalCall(const clang::CallExpr *e, Frame &frame);
  mlir::FailureOr<Val> evalMemberCall(const clang::CXXMemberCallExpr *e,
                                      Frame &frame);
  mlir::FailureOr<Val> evalOperatorCall(const clang::CXXOperatorCallExpr *e,
                                        Frame &frame);
  mlir::FailureOr<Val> evalConstruct(const clang::CXXConstructExpr *e,
                                     Frame &frame);
  mlir::FailureOr<Val> evalBinary(const clang::BinaryOperator *e, Frame &frame);
  mlir::FailureOr<Val> evalUnary(const clang::UnaryOperator *e, Frame &frame);
  mlir::FailureOr<llvm::SmallVector<Val>>
  evalArgs(llvm::ArrayRef<const clang::Expr *> args, Frame &frame);
  mlir::LogicalResult assign(const clang::Expr *target, Val value,
                             Frame &frame);
  mlir::FailureOr<Val>
  callTorch(llvm::StringRef name,
            const llvm::StringMap<FunctionConverter> &table,
            llvm::SmallVector<Val> args, const clang::Expr *e, Frame &frame);
  /// Registers a submodule, parameter or buffer of `self`.
  mlir::FailureOr<Val> evalRegister(const clang::CXXMemberCallExpr *e,
                                    llvm::StringRef method, Frame &frame);
  mlir::FailureOr<bool> evalCondition(const clang::Expr *cond, Frame &frame,
                                      llvm::StringRef what);

  /// Counts one interpreted statement against the translation unit's
  /// budget; fails with one located error (at `s`) when it runs out, and
  /// silently after that.
  mlir::LogicalResult step(const clang::Stmt *s);

  clang::ASTContext &ast;
  mlir::OpBuilder &builder;
  bool training;
  unsigned depth = 0;
  /// Statements interpreted so far (every function, loop iteration and
  /// recursion of the translation unit together).
  uint64_t steps = 0;
};

/// The statements one translation unit may interpret: a per-loop cap and a
/// call depth cap alone let nested loops or exponential recursion run for
/// hours. Running out takes about a second; the models of the test suite
/// interpret a few hundred statements at most (ResNet: 117, TinyGPT: 72).
constexpr uint64_t kMaxInterpretedSteps = 2'000'000;

/// Whether `record` is or derives from the class named `qualifiedName`.
bool derivesFrom(const clang::CXXRecordDecl *record,
                 llvm::StringRef qualifiedName);
/// The Impl class of a `torch::nn::ModuleHolder<Impl>` (TORCH_MODULE)
/// holder, or null.
const clang::CXXRecordDecl *getHolderImpl(const clang::CXXRecordDecl *record);
/// Whether `record` is a LibTorch module class (Impl) or a holder.
bool isModuleClass(const clang::CXXRecordDecl *record);

} // namespace vram::cxx_import

#endif // VRAM_LIB_IMPORT_CXX_INTERPRETER_H
