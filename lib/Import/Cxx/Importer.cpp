//===- Importer.cpp - LibTorch C++ front end (Clang LibTooling) -----------===//
//
// Parses the translation unit with ClangTool, finds the module class and
// the construction that gives its constructor arguments, then runs the
// Interpreter over the constructor (the module tree) and forward() (the IR).
//
//===----------------------------------------------------------------------===//

#include "vram/Import/Cxx.h"

#include "Interpreter.h"

#include "vram/Dialect/NN/NNDialect.h"
#include "vram/Dialect/NN/NNOps.h"
#include "vram/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Verifier.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/ASTUnit.h"
#include "clang/Tooling/ArgumentsAdjusters.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "clang/Tooling/JSONCompilationDatabase.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#ifndef VRAM_CLANG_RESOURCE_DIR
#define VRAM_CLANG_RESOURCE_DIR ""
#endif

using namespace mlir;
using namespace vram::cxx_import;
namespace cl = clang;

std::optional<SmallVector<int64_t>>
vram::cxx_import::parseShape(StringRef text) {
  SmallVector<StringRef> parts;
  text.split(parts, 'x');
  SmallVector<int64_t> shape;
  for (StringRef part : parts) {
    int64_t d;
    if (part.getAsInteger(10, d) || d <= 0)
      return std::nullopt;
    shape.push_back(d);
  }
  return shape;
}

std::optional<CxxInputSpec> vram::cxx_import::parseInputSpec(StringRef text) {
  auto [shapeText, typeText] = text.split(':');
  std::optional<SmallVector<int64_t>> shape = parseShape(shapeText);
  if (!shape)
    return std::nullopt;
  CxxInputSpec spec;
  spec.shape = std::move(*shape);
  if (text.contains(':')) {
    if (!llvm::is_contained({"f32", "f16", "bf16", "f64", "i64", "i32", "i1"},
                            typeText))
      return std::nullopt;
    spec.elementType = typeText.str();
  }
  return spec;
}

/// The MLIR element type of an input's element type name.
static Type getInputElementType(Builder &b, StringRef name) {
  return llvm::StringSwitch<Type>(name)
      .Case("f16", b.getF16Type())
      .Case("bf16", b.getBF16Type())
      .Case("f64", b.getF64Type())
      .Case("i64", b.getI64Type())
      .Case("i32", b.getI32Type())
      .Case("i1", b.getI1Type())
      .Default(b.getF32Type());
}

CxxTranslationUnit::CxxTranslationUnit(std::unique_ptr<cl::ASTUnit> ast)
    : ast(std::move(ast)) {}
CxxTranslationUnit::~CxxTranslationUnit() = default;

std::unique_ptr<CxxTranslationUnit>
CxxTranslationUnit::parse(MLIRContext *context,
                          const CxxSourceOptions &options) {
  Location fileLoc = FileLineColLoc::get(context, options.sourceFile, 0, 0);
  SmallString<256> absolute(options.sourceFile);
  llvm::sys::fs::make_absolute(absolute);

  std::string message;
  std::unique_ptr<cl::tooling::CompilationDatabase> db;
  if (!options.compileCommands.empty()) {
    if (llvm::sys::fs::is_directory(options.compileCommands))
      db = cl::tooling::CompilationDatabase::loadFromDirectory(
          options.compileCommands, message);
    else
      db = cl::tooling::JSONCompilationDatabase::loadFromFile(
          options.compileCommands, message,
          cl::tooling::JSONCommandLineSyntax::AutoDetect);
    if (!db) {
      emitError(fileLoc) << "cannot load the compilation database '"
                         << options.compileCommands << "': " << message;
      return nullptr;
    }
    if (db->getCompileCommands(absolute).empty()) {
      emitError(fileLoc) << "the compilation database '"
                         << options.compileCommands
                         << "' has no command for this file";
      return nullptr;
    }
  } else {
    db = std::make_unique<cl::tooling::FixedCompilationDatabase>(
        ".", options.compileFlags);
  }

  cl::tooling::ClangTool tool(*db, {std::string(absolute)});
  std::string resourceDir = options.resourceDir.empty()
                                ? std::string(VRAM_CLANG_RESOURCE_DIR)
                                : options.resourceDir;
  // The builtin headers of the Clang this tool links; a -resource-dir in the
  // command comes later and wins. Warnings are the compiler's business.
  if (!resourceDir.empty())
    tool.appendArgumentsAdjuster(cl::tooling::getInsertArgumentAdjuster(
        {"-resource-dir", resourceDir},
        cl::tooling::ArgumentInsertPosition::BEGIN));
  tool.appendArgumentsAdjuster(cl::tooling::getInsertArgumentAdjuster(
      "-w", cl::tooling::ArgumentInsertPosition::END));
  std::vector<std::unique_ptr<cl::ASTUnit>> asts;
  int rc = tool.buildASTs(asts);
  if (rc != 0 || asts.size() != 1 ||
      asts[0]->getDiagnostics().hasErrorOccurred()) {
    emitError(fileLoc) << "clang could not compile the source (its errors "
                          "are above)";
    return nullptr;
  }
  return std::unique_ptr<CxxTranslationUnit>(
      new CxxTranslationUnit(std::move(asts[0])));
}

namespace {
/// Finds the module class and a construction of it with arguments.
class ModuleFinder : public cl::RecursiveASTVisitor<ModuleFinder> {
public:
  ModuleFinder(cl::ASTContext &ast, StringRef name) : ast(ast), name(name) {}

  bool VisitCXXRecordDecl(cl::CXXRecordDecl *record) {
    if (!record->isThisDeclarationADefinition() || !record->getIdentifier())
      return true;
    StringRef n = record->getName();
    if (n == name || n == name + "Impl")
      candidates.push_back(record);
    return true;
  }
  /// `Net net(10);`, `auto net = Net(10);`, `NetImpl net(10);`.
  bool VisitCXXConstructExpr(cl::CXXConstructExpr *e) {
    if (site || !impl || !inMainFile(e->getBeginLoc()))
      return true;
    const cl::CXXRecordDecl *record = e->getType()->getAsCXXRecordDecl();
    if (!record || e->getConstructor()->isCopyOrMoveConstructor())
      return true;
    record = record->getDefinition();
    if (record != impl && getHolderImpl(record) != impl)
      return true;
    if (getHolderImpl(record) && e->getNumArgs() == 1 &&
        e->getArg(0)->IgnoreImplicit()->getType()->isNullPtrType())
      return true; // an empty holder
    if (getHolderImpl(record) && e->getNumArgs() == 1)
      if (const cl::CXXRecordDecl *arg =
              e->getArg(0)->getType()->getAsCXXRecordDecl())
        if (arg->getName() == "shared_ptr")
          return true; // a holder of a shared_ptr made elsewhere
    site = e->getBeginLoc();
    for (const cl::Expr *arg : e->arguments())
      args.push_back(arg);
    return true;
  }
  /// `std::make_shared<NetImpl>(10)`.
  bool VisitCallExpr(cl::CallExpr *e) {
    if (site || !impl || !inMainFile(e->getBeginLoc()))
      return true;
    const cl::FunctionDecl *fn = e->getDirectCallee();
    if (!fn || !fn->isInStdNamespace() || fn->getName() != "make_shared")
      return true;
    auto *spec = dyn_cast_or_null<cl::ClassTemplateSpecializationDecl>(
        e->getType()->getAsCXXRecordDecl());
    if (!spec ||
        spec->getTemplateArgs()[0].getAsType()->getAsCXXRecordDecl() != impl)
      return true;
    site = e->getBeginLoc();
    for (const cl::Expr *arg : e->arguments())
      args.push_back(arg);
    return true;
  }
  // Constructions inside the module's own methods (nested modules of the
  // same class) are not the top-level one.
  bool TraverseCXXRecordDecl(cl::CXXRecordDecl *record) {
    if (impl && record->getDefinition() == impl)
      return true;
    return RecursiveASTVisitor::TraverseCXXRecordDecl(record);
  }

  bool inMainFile(cl::SourceLocation l) {
    const cl::SourceManager &sm = ast.getSourceManager();
    return sm.isInMainFile(sm.getExpansionLoc(l));
  }

  cl::ASTContext &ast;
  std::string name;
  std::vector<cl::CXXRecordDecl *> candidates;
  const cl::CXXRecordDecl *impl = nullptr;
  std::optional<cl::SourceLocation> site;
  SmallVector<const cl::Expr *> args;
};
} // namespace

/// --args values: integers, reals, true/false.
static std::optional<Val> parseArg(StringRef text) {
  text = text.trim();
  if (text == "true" || text == "false")
    return Val::boolean(text == "true");
  int64_t i;
  if (!text.getAsInteger(10, i))
    return Val::integer(i);
  double d;
  if (!text.getAsDouble(d))
    return Val::real(d);
  return std::nullopt;
}

OwningOpRef<ModuleOp>
CxxTranslationUnit::importModule(MLIRContext *context,
                                 const CxxModuleOptions &options) {
  return vram::cxx_import::importModule(context, ast->getASTContext(), options);
}

OwningOpRef<ModuleOp>
vram::cxx_import::importModule(MLIRContext *context, cl::ASTContext &astContext,
                               const CxxModuleOptions &options) {
  context->getOrLoadDialect<vram::nn::NNDialect>();
  context->getOrLoadDialect<func::FuncDialect>();
  const cl::SourceManager &sm = astContext.getSourceManager();
  StringRef mainFile = sm.getFileEntryRefForID(sm.getMainFileID())->getName();
  Location fileLoc = FileLineColLoc::get(context, mainFile, 0, 0);

  OpBuilder b(context);
  Interpreter interp(astContext, b, options.training);
  ModuleFinder finder(astContext, options.moduleName);
  finder.TraverseDecl(astContext.getTranslationUnitDecl());
  const cl::CXXRecordDecl *impl = nullptr;
  for (cl::CXXRecordDecl *candidate : finder.candidates) {
    if (const cl::CXXRecordDecl *held = getHolderImpl(candidate))
      candidate = const_cast<cl::CXXRecordDecl *>(held->getDefinition());
    if (candidate && derivesFrom(candidate, "torch::nn::Module")) {
      impl = candidate;
      break;
    }
  }
  if (!impl && !finder.candidates.empty()) {
    emitError(interp.loc(finder.candidates[0]->getLocation()))
        << "'" << finder.candidates[0]->getName()
        << "' is not a LibTorch module (a TORCH_MODULE holder or a class "
           "deriving from torch::nn::Module)";
    return nullptr;
  }
  if (!impl) {
    emitError(fileLoc) << "no LibTorch module named '" << options.moduleName
                       << "' (a TORCH_MODULE holder or an Impl class "
                          "deriving from torch::nn::Module)";
    return nullptr;
  }

  Location classLoc = interp.loc(impl->getLocation());

  // The constructor's arguments: --args, else the construction in the
  // translation unit, else none.
  finder.impl = impl;
  finder.TraverseDecl(astContext.getTranslationUnitDecl());
  SmallVector<Val> args;
  cl::SourceLocation site = impl->getLocation();
  if (!options.constructorArgs.empty()) {
    for (const std::string &text : options.constructorArgs) {
      std::optional<Val> v = parseArg(text);
      if (!v) {
        emitError(classLoc) << "--args: '" << text
                            << "' is not an integer, a real or true/false";
        return nullptr;
      }
      args.push_back(*v);
    }
  } else if (finder.site) {
    site = *finder.site;
    Frame outer;
    for (const cl::Expr *arg : finder.args) {
      // One error for the argument, with the evaluator's reason.
      std::string reason;
      FailureOr<Val> v = failure();
      {
        ScopedDiagnosticHandler capture(context, [&](Diagnostic &d) {
          if (reason.empty())
            reason = d.str();
          return success();
        });
        v = interp.eval(arg, outer);
      }
      if (failed(v)) {
        emitError(interp.loc(arg))
            << "this argument of the construction of " << impl->getName()
            << " is not a compile-time constant (" << reason
            << "): give the constructor arguments with --args=";
        return nullptr;
      }
      args.push_back(*v);
    }
  }

  // Inputs.
  if (options.inputs.empty()) {
    emitError(classLoc) << "give the shapes of forward()'s inputs with "
                           "--input=NxCxHxW";
    return nullptr;
  }
  SmallVector<Type> argTypes;
  for (const CxxInputSpec &input : options.inputs) {
    SmallVector<int64_t> shape = input.shape;
    if (options.batch)
      shape[0] = *options.batch;
    argTypes.push_back(RankedTensorType::get(
        shape, getInputElementType(b, input.elementType)));
  }

  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  (*module)->setAttr(vram::nn::NNDialect::kModelAttrName,
                     b.getStringAttr(options.moduleName));
  b.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(b, classLoc, "forward",
                                   FunctionType::get(context, argTypes, {}));
  func->setAttr(vram::nn::NNDialect::kBatchAttrName,
                b.getI64IntegerAttr(
                    cast<RankedTensorType>(argTypes[0]).getShape().front()));
  Block *body = func.addEntryBlock();
  b.setInsertionPointToEnd(body);

  FailureOr<ModuleRef> root = interp.constructModule(impl, args, nullptr, site);
  if (failed(root))
    return nullptr;
  (*root)->declLoc = cl::SourceLocation();
  Interpreter::assignPaths(**root, "");

  SmallVector<Val> inputs;
  for (BlockArgument arg : body->getArguments()) {
    arg.setLoc(NameLoc::get(b.getStringAttr("input"), classLoc));
    inputs.push_back(Val::ofTensor(arg));
  }
  FailureOr<Val> out = interp.callModule(*root, inputs, classLoc);
  if (failed(out))
    return nullptr;
  if (out->kind != Val::Kind::Tensor) {
    emitError(classLoc) << impl->getName() << "::forward() returns "
                        << out->describe()
                        << "; the C++ front end models modules returning "
                           "one tensor";
    return nullptr;
  }
  interp.materializeUnused(**root, classLoc);
  func::ReturnOp::create(b, classLoc, ValueRange{out->tensor});
  func.setType(FunctionType::get(context, argTypes, {out->tensor.getType()}));
  if (failed(verify(*module)))
    return nullptr;
  // PyTorch's implicit copies of strided views (x.transpose(...).view(...)).
  vram::insertContiguousCopies(func);
  return module;
}
