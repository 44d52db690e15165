//===- Interpreter.cpp - LibTorch module interpreter over the AST ---------===//

#include "Interpreter.h"

#include "vram/Dialect/NN/NNOps.h"
#include "vram/Support/Findings.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/OperationKinds.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace vram::cxx_import;
namespace cl = clang;

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

std::optional<SmallVector<int64_t>> Val::getInts(unsigned n) const {
  if (kind == Kind::Int)
    return SmallVector<int64_t>(n ? n : 1, i);
  if (kind != Kind::List || (n && list.size() != n))
    return std::nullopt;
  SmallVector<int64_t> out;
  for (const Val &v : list) {
    if (v.kind != Kind::Int)
      return std::nullopt;
    out.push_back(v.i);
  }
  return out;
}

std::string Val::describe() const {
  switch (kind) {
  case Kind::None:
    return "nothing";
  case Kind::Int:
    return isBool ? (i ? "true" : "false") : "integer " + std::to_string(i);
  case Kind::Float:
    return llvm::formatv("real {0}", f).str();
  case Kind::Str:
    return "string \"" + s + "\"";
  case Kind::List:
    return "a list of " + std::to_string(list.size());
  case Kind::Options:
    return "an options object";
  case Kind::Module:
    return "a module";
  case Kind::Tensor:
  case Kind::Param:
    return "a tensor";
  }
  return "a value";
}

//===----------------------------------------------------------------------===//
// Classes
//===----------------------------------------------------------------------===//

bool vram::cxx_import::derivesFrom(const cl::CXXRecordDecl *record,
                                   StringRef qualifiedName) {
  if (!record)
    return false;
  record = record->getDefinition();
  if (!record)
    return false;
  if (record->getQualifiedNameAsString() == qualifiedName)
    return true;
  for (const cl::CXXBaseSpecifier &base : record->bases())
    if (derivesFrom(base.getType()->getAsCXXRecordDecl(), qualifiedName))
      return true;
  return false;
}

const cl::CXXRecordDecl *
vram::cxx_import::getHolderImpl(const cl::CXXRecordDecl *record) {
  if (!record || !(record = record->getDefinition()))
    return nullptr;
  if (auto *spec = dyn_cast<cl::ClassTemplateSpecializationDecl>(record))
    if (spec->getQualifiedNameAsString() == "torch::nn::ModuleHolder" &&
        spec->getTemplateArgs().size() >= 1)
      return spec->getTemplateArgs()[0].getAsType()->getAsCXXRecordDecl();
  for (const cl::CXXBaseSpecifier &base : record->bases())
    if (auto *impl = getHolderImpl(base.getType()->getAsCXXRecordDecl()))
      return impl;
  return nullptr;
}

bool vram::cxx_import::isModuleClass(const cl::CXXRecordDecl *record) {
  return getHolderImpl(record) || derivesFrom(record, "torch::nn::Module");
}

/// Whether `d` is declared in namespace `at`, `torch` or `c10` (or one
/// nested in them).
static bool isTorchDecl(const cl::Decl *d) {
  for (const cl::DeclContext *dc = d->getDeclContext(); dc;
       dc = dc->getParent())
    if (auto *ns = dyn_cast<cl::NamespaceDecl>(dc))
      if (!isa<cl::NamespaceDecl>(ns->getParent()) &&
          (ns->getName() == "at" || ns->getName() == "torch" ||
           ns->getName() == "c10"))
        return true;
  return false;
}

static bool isTensorType(cl::QualType type) {
  const cl::CXXRecordDecl *record =
      type.getNonReferenceType()->getAsCXXRecordDecl();
  return record && (record->getQualifiedNameAsString() == "at::Tensor" ||
                    record->getQualifiedNameAsString() == "at::TensorBase");
}

/// The built-in layer kind of a LibTorch Impl class in torch::nn
/// (`Conv2dImpl` -> "Conv2d"), or "" for a user class.
static std::string builtinKind(const cl::CXXRecordDecl *impl) {
  if (!impl || !isTorchDecl(impl))
    return "";
  StringRef name = impl->getName();
  // Templated implementations: ConvNdImpl<2, Conv2dImpl> is named by the
  // derived class, which is what the holder names.
  if (!name.consume_back("Impl"))
    return "";
  return name.str();
}

//===----------------------------------------------------------------------===//
// Locations
//===----------------------------------------------------------------------===//

Location Interpreter::loc(cl::SourceLocation l) {
  MLIRContext *ctx = builder.getContext();
  if (l.isInvalid())
    return UnknownLoc::get(ctx);
  const cl::SourceManager &sm = ast.getSourceManager();
  cl::PresumedLoc p = sm.getPresumedLoc(sm.getExpansionLoc(l));
  if (p.isInvalid())
    return UnknownLoc::get(ctx);
  return FileLineColLoc::get(ctx, p.getFilename(), p.getLine(), p.getColumn());
}

Location Interpreter::layerLoc(const Module &m, Location call) {
  MLIRContext *ctx = builder.getContext();
  Location child = call;
  if (m.declLoc.isValid())
    child = FusedLoc::get(ctx, {call, loc(m.declLoc)});
  return NameLoc::get(StringAttr::get(ctx, m.path.empty() ? "forward" : m.path),
                      child);
}

Location Interpreter::functionLoc(const Frame &frame, StringRef function,
                                  Location call) {
  std::string name = function.str();
  if (frame.self && !frame.self->path.empty())
    name = frame.self->path + "." + name;
  return NameLoc::get(StringAttr::get(builder.getContext(), name), call);
}

//===----------------------------------------------------------------------===//
// Modules
//===----------------------------------------------------------------------===//

void Interpreter::assignPaths(Module &m, const std::string &path) {
  m.path = path;
  for (auto &[name, child] : m.children)
    assignPaths(*child, path.empty() ? name : path + "." + name);
}

/// The constructor of `record` to call with `args`: one whose parameter
/// count fits (default arguments allowed), preferring exact counts.
static const cl::CXXConstructorDecl *
pickConstructor(const cl::CXXRecordDecl *record, size_t numArgs) {
  const cl::CXXConstructorDecl *best = nullptr;
  for (const cl::CXXConstructorDecl *ctor : record->ctors()) {
    if (ctor->isCopyOrMoveConstructor() || ctor->isDeleted())
      continue;
    if (numArgs < ctor->getMinRequiredArguments() ||
        numArgs > ctor->getNumParams())
      continue;
    if (!best || ctor->getNumParams() == numArgs)
      best = ctor;
  }
  return best;
}

FailureOr<ModuleRef> Interpreter::constructModule(
    const cl::CXXRecordDecl *record, ArrayRef<Val> args,
    const cl::CXXConstructorDecl *ctor, cl::SourceLocation where) {
  if (const cl::CXXRecordDecl *impl = getHolderImpl(record)) {
    record = impl;
    ctor = nullptr; // the holder's forwarding constructor
  }
  record = record ? record->getDefinition() : nullptr;
  if (!record)
    return error(loc(where)) << "the module class has no definition here";
  auto m = std::make_shared<Module>();
  m->record = record;
  m->declLoc = where;
  m->kind = builtinKind(record);

  if (!m->kind.empty()) {
    if (m->kind == "Sequential" || m->kind == "ModuleList") {
      for (const Val &arg : args) {
        if (arg.kind != Val::Kind::Module)
          return error(loc(where))
                 << "torch::nn::" << m->kind << " expects modules, got "
                 << arg.describe();
        m->children.emplace_back(std::to_string(m->children.size()),
                                 arg.module);
      }
      return m;
    }
    const LayerInfo *info = nullptr;
    auto it = getLayerTable().find(m->kind);
    if (it != getLayerTable().end())
      info = &it->second;
    if (!info)
      return error(loc(where))
             << "torch::nn::" << m->kind
             << " is not modelled by the C++ front end (docs/Cxx.md lists "
                "the layers it models)";
    if (args.size() == 1 && args[0].kind == Val::Kind::Options)
      m->options = *args[0].options;
    else
      m->options.positional.assign(args.begin(), args.end());
    if (failed(info->declare(*this, *m, where)))
      return failure();
    return m;
  }

  // A user module: run its constructor.
  if (!ctor)
    ctor = pickConstructor(record, args.size());
  if (!ctor)
    return error(loc(where)) << "no constructor of " << record->getName()
                             << " takes " << args.size() << " argument(s)";
  if (++depth > 64) {
    --depth;
    return error(loc(where)) << "module construction nested too deeply";
  }
  llvm::scope_exit done([&] { --depth; });
  Frame frame;
  frame.self = m;
  for (auto [index, param] : llvm::enumerate(ctor->parameters())) {
    if (index < args.size()) {
      frame.locals[param] = args[index];
      continue;
    }
    FailureOr<Val> def = eval(param->getDefaultArg(), frame);
    if (failed(def))
      return failure();
    frame.locals[param] = *def;
  }
  // Member initializers (including default member initializers), then the
  // body.
  for (const cl::CXXCtorInitializer *init : ctor->inits()) {
    if (!init->isMemberInitializer() || !init->getInit())
      continue;
    FailureOr<Val> value = eval(init->getInit(), frame);
    if (failed(value))
      return failure();
    m->fields[init->getMember()->getName()] = *value;
  }
  if (ctor->hasBody() && failed(exec(ctor->getBody(), frame)))
    return failure();
  return m;
}

Value Interpreter::materialize(Module &m, TensorDecl &t) {
  if (t.value)
    return t.value;
  OpBuilder::InsertionGuard guard(builder);
  // Parameters and buffers are created at the start of @forward, in the
  // order forward() first uses them.
  Block *body = builder.getInsertionBlock();
  while (body->getParentOp() && !isa<func::FuncOp>(body->getParentOp()))
    body = body->getParentOp()->getBlock();
  Operation *firstNonState = nullptr;
  for (Operation &op : *body)
    if (!isa<nn::ParamOp, nn::BufferOp>(op)) {
      firstNonState = &op;
      break;
    }
  if (firstNonState)
    builder.setInsertionPoint(firstNonState);
  else
    builder.setInsertionPointToEnd(body);
  MLIRContext *ctx = builder.getContext();
  std::string name = m.path.empty() ? t.name : m.path + "." + t.name;
  Location l = NameLoc::get(
      StringAttr::get(ctx, m.path.empty() ? t.name : m.path), loc(m.declLoc));
  Type element =
      t.isInt64 ? Type(builder.getI64Type()) : Type(builder.getF32Type());
  auto type = RankedTensorType::get(t.shape, element);
  if (t.isBuffer)
    t.value = nn::BufferOp::create(builder, l, type, name);
  else
    t.value = nn::ParamOp::create(builder, l, type, name, t.trainable);
  return t.value;
}

void Interpreter::materializeUnused(Module &root, Location where) {
  std::function<void(Module &)> visit = [&](Module &m) {
    bool unused = false;
    for (TensorDecl &t : m.tensors)
      if (!t.value) {
        materialize(m, t);
        unused = true;
      }
    if (unused && !m.called && !m.kind.empty())
      warning(loc(m.declLoc))
          << "module " << m.displayName()
          << " is registered but forward() does not call it: its "
             "parameters and buffers are counted, and get no gradient";
    else if (unused && m.kind.empty())
      warning(loc(m.declLoc))
          << "some tensors registered by " << m.displayName()
          << " are not used by forward(): they are counted, and get no "
             "gradient";
    for (auto &child : m.children)
      visit(*child.second);
  };
  visit(root);
}

/// The `forward` method of a user module taking `numArgs` arguments.
static const cl::CXXMethodDecl *findForward(const cl::CXXRecordDecl *record,
                                            size_t numArgs) {
  for (const cl::CXXMethodDecl *method : record->methods())
    if (method->getDeclName().isIdentifier() &&
        method->getName() == "forward" &&
        numArgs >= method->getMinRequiredArguments() &&
        numArgs <= method->getNumParams())
      return method;
  for (const cl::CXXBaseSpecifier &base : record->bases())
    if (auto *b = base.getType()->getAsCXXRecordDecl())
      if (b->getDefinition() && !isTorchDecl(b))
        if (auto *f = findForward(b->getDefinition(), numArgs))
          return f;
  return nullptr;
}

FailureOr<Val> Interpreter::callModule(const ModuleRef &ref, ArrayRef<Val> args,
                                       Location call) {
  Module &m = *ref;
  m.called = true;
  if (m.kind == "Sequential") {
    if (args.size() != 1)
      return error(call) << "torch::nn::Sequential's forward takes one input";
    Val x = args[0];
    for (auto &child : m.children) {
      FailureOr<Val> y = callModule(child.second, {x}, call);
      if (failed(y))
        return failure();
      x = *y;
    }
    return x;
  }
  if (m.kind == "ModuleList")
    return error(call) << "torch::nn::ModuleList has no forward(): call its "
                          "modules";
  if (!m.kind.empty()) {
    const LayerInfo &info = getLayerTable().find(m.kind)->second;
    if (info.callMany)
      return info.callMany(*this, m, args, layerLoc(m, call));
    if (args.size() != 1 || args[0].kind != Val::Kind::Tensor)
      return error(call) << "torch::nn::" << m.kind
                         << " is called with one tensor here";
    return info.call(*this, m, args[0], layerLoc(m, call));
  }
  const cl::CXXMethodDecl *forward = findForward(m.record, args.size());
  if (!forward || !forward->hasBody())
    return error(call) << "module " << m.displayName() << " ("
                       << m.record->getName() << ") has no forward() taking "
                       << args.size() << " argument(s) with a body here";
  return callFunction(forward, args, ref, /*inForward=*/true, call);
}

FailureOr<Val> Interpreter::callFunction(const cl::FunctionDecl *fn,
                                         ArrayRef<Val> args, ModuleRef self,
                                         bool inForward, Location call) {
  const cl::FunctionDecl *def = nullptr;
  if (!fn->hasBody(def) || !def)
    return error(call) << "'" << fn->getQualifiedNameAsString()
                       << "' has no body in this translation unit";
  if (++depth > 64) {
    --depth;
    return error(call) << "calls nested too deeply (recursion?)";
  }
  llvm::scope_exit done([&] { --depth; });
  Frame frame;
  frame.self = std::move(self);
  frame.inForward = inForward;
  for (auto [index, param] : llvm::enumerate(def->parameters())) {
    if (index < args.size()) {
      frame.locals[param] = args[index];
      continue;
    }
    if (!param->hasDefaultArg())
      return error(call) << "missing argument " << index << " of '"
                         << fn->getQualifiedNameAsString() << "'";
    FailureOr<Val> v = eval(param->getDefaultArg(), frame);
    if (failed(v))
      return failure();
    frame.locals[param] = *v;
  }
  if (failed(exec(def->getBody(), frame)))
    return failure();
  return frame.result ? *frame.result : Val();
}

FailureOr<Value> Interpreter::tensorArg(CallInfo &call, unsigned index) {
  if (index < call.args.size()) {
    Val &v = call.args[index];
    if (v.kind == Val::Kind::Tensor)
      return v.tensor;
    if (v.kind == Val::Kind::Param)
      return materialize(*v.module, *v.module->findTensor(v.s));
  }
  return error(call.loc) << "'" << call.name
                         << "' expects a tensor as argument " << index;
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

FailureOr<bool> Interpreter::evalCondition(const cl::Expr *cond, Frame &frame,
                                           StringRef what) {
  FailureOr<Val> v = eval(cond, frame);
  if (failed(v))
    return failure();
  if (std::optional<double> r = v->getReal())
    return *r != 0;
  return error(loc(cond)) << "the " << what
                          << " condition depends on run-time values ("
                          << v->describe()
                          << "): the C++ front end models straight-line "
                             "code and constant conditions";
}

LogicalResult Interpreter::step(const cl::Stmt *s) {
  if (steps < kMaxInterpretedSteps) {
    ++steps;
    return success();
  }
  if (steps++ == kMaxInterpretedSteps)
    error(loc(s)) << "the C++ front end interpreted " << kMaxInterpretedSteps
                  << " statements of this translation unit and stops here "
                     "(nested loops or recursion too long to model)";
  return failure();
}

LogicalResult Interpreter::exec(const cl::Stmt *s, Frame &frame) {
  if (!s || frame.returned)
    return success();
  if (failed(step(s)))
    return failure();
  if (auto *compound = dyn_cast<cl::CompoundStmt>(s)) {
    for (const cl::Stmt *child : compound->body()) {
      if (failed(exec(child, frame)))
        return failure();
      if (frame.returned)
        break;
    }
    return success();
  }
  if (auto *decl = dyn_cast<cl::DeclStmt>(s)) {
    for (const cl::Decl *d : decl->decls()) {
      auto *var = dyn_cast<cl::VarDecl>(d);
      if (!var)
        continue;
      Val value;
      if (const cl::Expr *init = var->getInit()) {
        FailureOr<Val> v = eval(init, frame);
        if (failed(v))
          return failure();
        value = *v;
      }
      frame.locals[var] = value;
    }
    return success();
  }
  if (auto *ret = dyn_cast<cl::ReturnStmt>(s)) {
    Val value;
    if (const cl::Expr *e = ret->getRetValue()) {
      FailureOr<Val> v = eval(e, frame);
      if (failed(v))
        return failure();
      value = *v;
    }
    frame.result = value;
    frame.returned = true;
    return success();
  }
  if (auto *ifStmt = dyn_cast<cl::IfStmt>(s)) {
    if (ifStmt->getInit() && failed(exec(ifStmt->getInit(), frame)))
      return failure();
    if (ifStmt->isConsteval())
      return exec(ifStmt->getThen(), frame);
    FailureOr<bool> taken = evalCondition(ifStmt->getCond(), frame, "if");
    if (failed(taken))
      return failure();
    return exec(*taken ? ifStmt->getThen() : ifStmt->getElse(), frame);
  }
  if (auto *forStmt = dyn_cast<cl::ForStmt>(s)) {
    if (failed(exec(forStmt->getInit(), frame)))
      return failure();
    for (unsigned iteration = 0;; ++iteration) {
      if (iteration == 100000)
        return error(loc(s)) << "loop runs more than 100000 iterations";
      if (forStmt->getCond()) {
        FailureOr<bool> go = evalCondition(forStmt->getCond(), frame, "loop");
        if (failed(go))
          return failure();
        if (!*go)
          break;
      }
      if (failed(exec(forStmt->getBody(), frame)))
        return failure();
      if (frame.returned)
        break;
      if (forStmt->getInc() && failed(eval(forStmt->getInc(), frame)))
        return failure();
    }
    return success();
  }
  if (auto *range = dyn_cast<cl::CXXForRangeStmt>(s)) {
    // `for (auto &m : *layers)`: the modules of a Sequential (AnyModule) or
    // a ModuleList (shared_ptr<Module>), or the elements of a constant list.
    FailureOr<Val> seq = eval(range->getRangeInit(), frame);
    if (failed(seq))
      return failure();
    std::vector<Val> items;
    if (seq->kind == Val::Kind::Module && (seq->module->kind == "Sequential" ||
                                           seq->module->kind == "ModuleList")) {
      for (auto &child : seq->module->children)
        items.push_back(Val::ofModule(child.second));
    } else if (seq->kind == Val::Kind::List) {
      items = seq->list;
    } else {
      return error(loc(range->getRangeInit()))
             << "the C++ front end models range-for over a Sequential, a "
                "ModuleList or a constant list, not over "
             << seq->describe();
    }
    for (const Val &item : items) {
      frame.locals[range->getLoopVariable()] = item;
      if (failed(exec(range->getBody(), frame)))
        return failure();
      if (frame.returned)
        break;
    }
    return success();
  }
  if (isa<cl::NullStmt>(s))
    return success();
  if (auto *e = dyn_cast<cl::Expr>(s))
    return failure(failed(eval(e, frame)));
  return error(loc(s)) << "the C++ front end cannot model this statement ("
                       << s->getStmtClassName() << ")";
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<Val>>
Interpreter::evalArgs(ArrayRef<const cl::Expr *> args, Frame &frame) {
  SmallVector<Val> out;
  for (const cl::Expr *arg : args) {
    FailureOr<Val> v = eval(arg, frame);
    if (failed(v))
      return failure();
    out.push_back(*v);
  }
  return out;
}

/// Folds `e` with Clang's constant evaluator (constexpr variables, enum
/// constants, sizeof, ...).
static std::optional<Val> clangConstant(const cl::Expr *e,
                                        cl::ASTContext &ast) {
  if (e->isValueDependent() || e->isTypeDependent())
    return std::nullopt;
  cl::Expr::EvalResult result;
  if (!e->EvaluateAsRValue(result, ast) || result.HasSideEffects)
    return std::nullopt;
  if (result.Val.isInt()) {
    if (e->getType()->isBooleanType())
      return Val::boolean(result.Val.getInt().getBoolValue());
    return Val::integer(result.Val.getInt().getSExtValue());
  }
  if (result.Val.isFloat())
    return Val::real(result.Val.getFloat().convertToDouble());
  return std::nullopt;
}

FailureOr<Val> Interpreter::eval(const cl::Expr *e, Frame &frame) {
  if (!e)
    return Val();
  // Wrappers with no meaning for the interpreter.
  if (auto *full = dyn_cast<cl::FullExpr>(e))
    return eval(full->getSubExpr(), frame);
  if (auto *m = dyn_cast<cl::MaterializeTemporaryExpr>(e))
    return eval(m->getSubExpr(), frame);
  if (auto *b = dyn_cast<cl::CXXBindTemporaryExpr>(e))
    return eval(b->getSubExpr(), frame);
  if (auto *p = dyn_cast<cl::ParenExpr>(e))
    return eval(p->getSubExpr(), frame);
  if (auto *d = dyn_cast<cl::CXXDefaultArgExpr>(e))
    return eval(d->getExpr(), frame);
  if (auto *d = dyn_cast<cl::CXXDefaultInitExpr>(e))
    return eval(d->getExpr(), frame);
  if (auto *il = dyn_cast<cl::CXXStdInitializerListExpr>(e))
    return eval(il->getSubExpr(), frame);

  if (auto *i = dyn_cast<cl::IntegerLiteral>(e))
    return Val::integer(i->getValue().getSExtValue());
  if (auto *b = dyn_cast<cl::CXXBoolLiteralExpr>(e))
    return Val::boolean(b->getValue());
  if (auto *f = dyn_cast<cl::FloatingLiteral>(e))
    return Val::real(f->getValue().convertToDouble());
  if (auto *s = dyn_cast<cl::StringLiteral>(e))
    return Val::string(s->getString().str());
  if (isa<cl::CXXNullPtrLiteralExpr>(e))
    return Val();

  if (auto *cast = dyn_cast<cl::CastExpr>(e)) {
    FailureOr<Val> v = eval(cast->getSubExpr(), frame);
    if (failed(v))
      return failure();
    cl::QualType to = cast->getType();
    if (v->isNumber() && to->isBooleanType())
      return Val::boolean(*v->getReal() != 0);
    if (v->isNumber() && to->isIntegerType())
      return Val::integer(v->kind == Val::Kind::Int ? v->i : int64_t(v->f));
    if (v->isNumber() && to->isRealFloatingType())
      return Val::real(*v->getReal());
    return v;
  }

  if (auto *list = dyn_cast<cl::InitListExpr>(e)) {
    if (list->isSemanticForm() && list->isTransparent())
      return eval(list->getInit(0), frame);
    Val out;
    out.kind = Val::Kind::List;
    for (const cl::Expr *init : list->inits()) {
      FailureOr<Val> v = eval(init, frame);
      if (failed(v))
        return failure();
      out.list.push_back(*v);
    }
    return out;
  }

  if (auto *ref = dyn_cast<cl::DeclRefExpr>(e)) {
    const cl::ValueDecl *decl = ref->getDecl();
    auto it = frame.locals.find(decl);
    if (it != frame.locals.end())
      return it->second;
    if (auto *ec = dyn_cast<cl::EnumConstantDecl>(decl))
      return Val::integer(ec->getInitVal().getSExtValue());
    // A structured binding (`auto [out, weights] = attn(x, x, x);`): the
    // element its holding variable or binding expression names.
    if (auto *binding = dyn_cast<cl::BindingDecl>(decl)) {
      if (const cl::VarDecl *holding = binding->getHoldingVar())
        return eval(holding->getInit(), frame);
      if (const cl::Expr *expr = binding->getBinding())
        return eval(expr, frame);
    }
    if (std::optional<Val> c = clangConstant(e, ast))
      return *c;
    // LibTorch's enum values (torch::kBilinear, torch::kSum, ...): the
    // constant of type torch::enumtype::kXxx, as the string "kXxx".
    if (auto *var = dyn_cast<cl::VarDecl>(decl))
      if (const cl::CXXRecordDecl *record =
              var->getType()->getAsCXXRecordDecl();
          record && record->getQualifiedNameAsString() ==
                        ("torch::enumtype::" + var->getName()).str())
        return Val::string(var->getName().str());
    // A variable of an enclosing scope: evaluate its initializer (a
    // construction site's `int hidden = 128;`).
    if (auto *var = dyn_cast<cl::VarDecl>(decl))
      if (const cl::Expr *init = var->getInit();
          init && !var->getType()->isReferenceType() &&
          (var->getType().isConstQualified() || !frame.inForward)) {
        Frame outer;
        FailureOr<Val> v = eval(init, outer);
        if (succeeded(v) && v->isNumber())
          return *v;
      }
    return error(loc(e)) << "'" << decl->getName()
                         << "' is not a compile-time constant here";
  }

  if (auto *member = dyn_cast<cl::MemberExpr>(e)) {
    const cl::Expr *base = member->getBase()->IgnoreParenImpCasts();
    if (isa<cl::CXXThisExpr>(base) && frame.self) {
      StringRef name = member->getMemberDecl()->getName();
      auto it = frame.self->fields.find(name);
      if (it != frame.self->fields.end())
        return it->second;
      if (auto *field = dyn_cast<cl::FieldDecl>(member->getMemberDecl()))
        if (field->hasInClassInitializer()) {
          FailureOr<Val> v = eval(field->getInClassInitializer(), frame);
          if (failed(v))
            return failure();
          frame.self->fields[name] = *v;
          return *v;
        }
      return Val();
    }
    if (std::optional<Val> c = clangConstant(e, ast))
      return *c;
    return error(loc(e)) << "the C++ front end cannot evaluate member '"
                         << member->getMemberDecl()->getName() << "' here";
  }

  if (auto *cond = dyn_cast<cl::ConditionalOperator>(e)) {
    FailureOr<bool> taken = evalCondition(cond->getCond(), frame, "?:");
    if (failed(taken))
      return failure();
    return eval(*taken ? cond->getTrueExpr() : cond->getFalseExpr(), frame);
  }
  if (auto *binary = dyn_cast<cl::BinaryOperator>(e))
    return evalBinary(binary, frame);
  if (auto *unary = dyn_cast<cl::UnaryOperator>(e))
    return evalUnary(unary, frame);
  if (auto *construct = dyn_cast<cl::CXXConstructExpr>(e))
    return evalConstruct(construct, frame);
  if (auto *op = dyn_cast<cl::CXXOperatorCallExpr>(e))
    return evalOperatorCall(op, frame);
  if (auto *call = dyn_cast<cl::CXXMemberCallExpr>(e))
    return evalMemberCall(call, frame);
  if (auto *call = dyn_cast<cl::CallExpr>(e))
    return evalCall(call, frame);
  if (isa<cl::CXXThisExpr>(e) && frame.self)
    return Val::ofModule(frame.self);
  if (auto *scalar = dyn_cast<cl::CXXScalarValueInitExpr>(e)) {
    if (scalar->getType()->isRealFloatingType())
      return Val::real(0);
    return Val::integer(0);
  }
  if (std::optional<Val> c = clangConstant(e, ast))
    return *c;
  return error(loc(e)) << "the C++ front end cannot evaluate this expression ("
                       << e->getStmtClassName() << ")";
}

FailureOr<Val> Interpreter::evalConstruct(const cl::CXXConstructExpr *e,
                                          Frame &frame) {
  const cl::CXXRecordDecl *record = e->getType()->getAsCXXRecordDecl();
  SmallVector<const cl::Expr *> argExprs;
  for (const cl::Expr *arg : e->arguments())
    argExprs.push_back(arg);
  // Defaulted trailing arguments (an allocator, an option's default) are the
  // callee's business: each table and constructor applies its own defaults.
  while (!argExprs.empty() && isa<cl::CXXDefaultArgExpr>(argExprs.back()))
    argExprs.pop_back();
  // A holder constructed from nullptr is empty (default construction
  // constructs the module).
  if (record && getHolderImpl(record) && argExprs.size() == 1 &&
      argExprs[0]->IgnoreImplicit()->getType()->isNullPtrType())
    return Val();
  FailureOr<SmallVector<Val>> args = evalArgs(argExprs, frame);
  if (failed(args))
    return failure();
  cl::CXXConstructorDecl *ctor = e->getConstructor();
  // Copies and moves, and conversions that keep the value.
  if (ctor->isCopyOrMoveConstructor() && args->size() == 1)
    return (*args)[0];
  if (record && isModuleClass(record)) {
    // A holder from a shared_ptr or another holder of its module class;
    // `Sequential(m)` / `ModuleList(m)` of one other module is a container.
    if (const cl::CXXRecordDecl *impl = getHolderImpl(record);
        impl && args->size() == 1 && (*args)[0].kind == Val::Kind::Module) {
      const Module &arg = *(*args)[0].module;
      impl = impl->getDefinition();
      if (!impl || arg.record == impl ||
          (!arg.kind.empty() && arg.kind == builtinKind(impl)) ||
          (arg.kind.empty() &&
           derivesFrom(arg.record, impl->getQualifiedNameAsString())))
        return (*args)[0];
    }
    FailureOr<ModuleRef> m =
        constructModule(record, *args, ctor, e->getBeginLoc());
    if (failed(m))
      return failure();
    return Val::ofModule(*m);
  }
  if (record && isTorchDecl(record) && record->getName().ends_with("Options")) {
    Val out;
    out.kind = Val::Kind::Options;
    out.options = std::make_shared<OptionsObject>();
    out.options->positional.assign(args->begin(), args->end());
    return out;
  }
  if (isTensorType(e->getType())) {
    if (args->empty())
      return Val();
    return (*args)[0];
  }
  // ArrayRef, ExpandingArray, std::vector, optional, variant: the value
  // they wrap (one argument), a list of their arguments, or nothing.
  if (args->size() == 1)
    return (*args)[0];
  if (args->empty())
    return Val();
  Val out;
  out.kind = Val::Kind::List;
  out.list.assign(args->begin(), args->end());
  return out;
}

FailureOr<Val> Interpreter::evalBinary(const cl::BinaryOperator *e,
                                       Frame &frame) {
  if (e->isAssignmentOp()) {
    FailureOr<Val> rhs = eval(e->getRHS(), frame);
    if (failed(rhs))
      return failure();
    Val value = *rhs;
    if (e->isCompoundAssignmentOp()) {
      FailureOr<Val> lhs = eval(e->getLHS(), frame);
      if (failed(lhs))
        return failure();
      if (!lhs->isNumber() || !rhs->isNumber())
        return error(loc(e)) << "compound assignment of non-numbers";
      bool isInt = lhs->kind == Val::Kind::Int && rhs->kind == Val::Kind::Int;
      double a = *lhs->getReal(), b = *rhs->getReal();
      int64_t ia = lhs->i, ib = rhs->i;
      switch (e->getOpcode()) {
      case cl::BO_AddAssign:
        value = isInt ? Val::integer(ia + ib) : Val::real(a + b);
        break;
      case cl::BO_SubAssign:
        value = isInt ? Val::integer(ia - ib) : Val::real(a - b);
        break;
      case cl::BO_MulAssign:
        value = isInt ? Val::integer(ia * ib) : Val::real(a * b);
        break;
      case cl::BO_DivAssign:
        if (isInt && ib == 0)
          return error(loc(e)) << "division by zero";
        value = isInt ? Val::integer(ia / ib) : Val::real(a / b);
        break;
      default:
        return error(loc(e)) << "unsupported compound assignment";
      }
    }
    if (failed(assign(e->getLHS(), value, frame)))
      return failure();
    return value;
  }
  if (e->getOpcode() == cl::BO_LAnd || e->getOpcode() == cl::BO_LOr) {
    FailureOr<bool> lhs = evalCondition(e->getLHS(), frame, "&&/||");
    if (failed(lhs))
      return failure();
    if ((e->getOpcode() == cl::BO_LAnd) != *lhs)
      return Val::boolean(*lhs);
    FailureOr<bool> rhs = evalCondition(e->getRHS(), frame, "&&/||");
    if (failed(rhs))
      return failure();
    return Val::boolean(*rhs);
  }
  if (e->getOpcode() == cl::BO_Comma) {
    if (failed(eval(e->getLHS(), frame)))
      return failure();
    return eval(e->getRHS(), frame);
  }
  FailureOr<Val> lhs = eval(e->getLHS(), frame);
  if (failed(lhs))
    return failure();
  FailureOr<Val> rhs = eval(e->getRHS(), frame);
  if (failed(rhs))
    return failure();
  if (!lhs->isNumber() || !rhs->isNumber())
    return error(loc(e)) << "the C++ front end cannot evaluate '"
                         << e->getOpcodeStr() << "' on " << lhs->describe()
                         << " and " << rhs->describe();
  bool isInt = lhs->kind == Val::Kind::Int && rhs->kind == Val::Kind::Int;
  int64_t a = lhs->i, b = rhs->i;
  double x = *lhs->getReal(), y = *rhs->getReal();
  switch (e->getOpcode()) {
  case cl::BO_Add:
    return isInt ? Val::integer(a + b) : Val::real(x + y);
  case cl::BO_Sub:
    return isInt ? Val::integer(a - b) : Val::real(x - y);
  case cl::BO_Mul:
    return isInt ? Val::integer(a * b) : Val::real(x * y);
  case cl::BO_Div:
    if (isInt && b == 0)
      return error(loc(e)) << "division by zero";
    return isInt ? Val::integer(a / b) : Val::real(x / y);
  case cl::BO_Rem:
    if (!isInt || b == 0)
      return error(loc(e)) << "'%' needs integers and a non-zero divisor";
    return Val::integer(a % b);
  case cl::BO_Shl:
    return Val::integer(a << b);
  case cl::BO_Shr:
    return Val::integer(a >> b);
  case cl::BO_LT:
    return Val::boolean(x < y);
  case cl::BO_GT:
    return Val::boolean(x > y);
  case cl::BO_LE:
    return Val::boolean(x <= y);
  case cl::BO_GE:
    return Val::boolean(x >= y);
  case cl::BO_EQ:
    return Val::boolean(x == y);
  case cl::BO_NE:
    return Val::boolean(x != y);
  default:
    return error(loc(e)) << "the C++ front end cannot evaluate '"
                         << e->getOpcodeStr() << "'";
  }
}

FailureOr<Val> Interpreter::evalUnary(const cl::UnaryOperator *e,
                                      Frame &frame) {
  FailureOr<Val> v = eval(e->getSubExpr(), frame);
  if (failed(v))
    return failure();
  switch (e->getOpcode()) {
  case cl::UO_Minus:
    if (v->kind == Val::Kind::Int)
      return Val::integer(-v->i);
    if (v->kind == Val::Kind::Float)
      return Val::real(-v->f);
    break;
  case cl::UO_Plus:
    if (v->isNumber())
      return *v;
    break;
  case cl::UO_LNot:
    if (v->isNumber())
      return Val::boolean(*v->getReal() == 0);
    break;
  case cl::UO_PreInc:
  case cl::UO_PostInc:
  case cl::UO_PreDec:
  case cl::UO_PostDec: {
    if (v->kind != Val::Kind::Int)
      break;
    int64_t delta = e->isIncrementOp() ? 1 : -1;
    Val updated = Val::integer(v->i + delta);
    if (failed(assign(e->getSubExpr(), updated, frame)))
      return failure();
    return e->isPrefix() ? updated : *v;
  }
  case cl::UO_Deref:
    // `*seq` on a holder is the module.
    if (v->kind == Val::Kind::Module)
      return *v;
    break;
  default:
    break;
  }
  return error(loc(e)) << "the C++ front end cannot evaluate '"
                       << cl::UnaryOperator::getOpcodeStr(e->getOpcode())
                       << "' on " << v->describe();
}

LogicalResult Interpreter::assign(const cl::Expr *target, Val value,
                                  Frame &frame) {
  target = target->IgnoreParenImpCasts();
  if (auto *ref = dyn_cast<cl::DeclRefExpr>(target)) {
    frame.locals[ref->getDecl()] = value;
    return success();
  }
  if (auto *member = dyn_cast<cl::MemberExpr>(target))
    if (isa<cl::CXXThisExpr>(member->getBase()->IgnoreParenImpCasts()) &&
        frame.self) {
      frame.self->fields[member->getMemberDecl()->getName()] = value;
      return success();
    }
  return error(loc(target))
         << "the C++ front end models assignments to local variables and "
            "members of the module only";
}

FailureOr<Val>
Interpreter::callTorch(StringRef name,
                       const llvm::StringMap<FunctionConverter> &table,
                       SmallVector<Val> args, const cl::Expr *e, Frame &frame) {
  Location l = loc(e);
  auto it = table.find(name);
  if (it == table.end()) {
    // Not modelled: say so, and assume the first tensor passes through.
    for (const Val &arg : args)
      if (arg.kind == Val::Kind::Tensor) {
        vram::emitFinding(l, vram::rules::kApproximatedOp)
            << "'" << name
            << "' is not modelled by the C++ front end: assumed to "
               "return its tensor argument unchanged (no memory, no "
               "FLOPs)";
        return arg;
      }
    return error(l) << "the C++ front end cannot evaluate '" << name << "'";
  }
  CallInfo call{name, std::move(args), e, functionLoc(frame, name, l),
                frame.inForward};
  return it->second(*this, call);
}

FailureOr<Val> Interpreter::evalCall(const cl::CallExpr *e, Frame &frame) {
  const cl::FunctionDecl *fn = e->getDirectCallee();
  if (!fn)
    return error(loc(e)) << "the C++ front end cannot evaluate an indirect "
                            "call";
  SmallVector<const cl::Expr *> argExprs(e->arguments());
  StringRef fnName =
      fn->getDeclName().isIdentifier() ? fn->getName() : StringRef();
  // std::move / std::forward keep the value; std::get<I> of a tuple (a
  // MultiheadAttention's result) is its element I.
  if (fn->isInStdNamespace() && (fnName == "move" || fnName == "forward") &&
      argExprs.size() == 1)
    return eval(argExprs[0], frame);
  if (fn->isInStdNamespace() && fnName == "get" && argExprs.size() == 1)
    if (const cl::TemplateArgumentList *targs =
            fn->getTemplateSpecializationArgs();
        targs && targs->size() &&
        targs->get(0).getKind() == cl::TemplateArgument::Integral) {
      FailureOr<Val> tuple = eval(argExprs[0], frame);
      if (failed(tuple))
        return failure();
      int64_t index = targs->get(0).getAsIntegral().getSExtValue();
      if (tuple->kind != Val::Kind::List || index < 0 ||
          index >= int64_t(tuple->list.size()))
        return error(loc(e))
               << "std::get<" << index << "> of " << tuple->describe();
      return tuple->list[index];
    }
  // <cmath> on constants (`1.0 / std::sqrt(head_dim)`).
  if ((fn->isInStdNamespace() ||
       fn->getDeclContext()->getRedeclContext()->isTranslationUnit()) &&
      llvm::is_contained({"sqrt", "pow", "exp", "log", "fabs", "floor", "ceil"},
                         fnName)) {
    FailureOr<SmallVector<Val>> args = evalArgs(argExprs, frame);
    if (failed(args))
      return failure();
    SmallVector<double> x;
    for (const Val &v : *args) {
      std::optional<double> r = v.getReal();
      if (!r)
        return error(loc(e)) << "'" << fnName << "' of " << v.describe()
                             << ": the C++ front end evaluates <cmath> on "
                                "constants";
      x.push_back(*r);
    }
    if (x.size() != (fnName == "pow" ? 2u : 1u))
      return error(loc(e)) << "'" << fnName << "' with " << x.size()
                           << " arguments";
    double r = fnName == "sqrt"    ? std::sqrt(x[0])
               : fnName == "pow"   ? std::pow(x[0], x[1])
               : fnName == "exp"   ? std::exp(x[0])
               : fnName == "log"   ? std::log(x[0])
               : fnName == "fabs"  ? std::fabs(x[0])
               : fnName == "floor" ? std::floor(x[0])
                                   : std::ceil(x[0]);
    return Val::real(r);
  }
  // std::make_shared<Impl>(args...): a module.
  if (fn->isInStdNamespace() && fnName == "make_shared") {
    const cl::CXXRecordDecl *record = e->getType()->getAsCXXRecordDecl();
    const cl::CXXRecordDecl *impl = nullptr;
    if (auto *spec =
            dyn_cast_or_null<cl::ClassTemplateSpecializationDecl>(record))
      impl = spec->getTemplateArgs()[0].getAsType()->getAsCXXRecordDecl();
    if (impl && isModuleClass(impl)) {
      FailureOr<SmallVector<Val>> args = evalArgs(argExprs, frame);
      if (failed(args))
        return failure();
      FailureOr<ModuleRef> m =
          constructModule(impl, *args, nullptr, e->getBeginLoc());
      if (failed(m))
        return failure();
      return Val::ofModule(*m);
    }
  }
  if (std::optional<Val> c = clangConstant(e, ast))
    return *c;
  FailureOr<SmallVector<Val>> args = evalArgs(argExprs, frame);
  if (failed(args))
    return failure();
  if (isTorchDecl(fn))
    return callTorch(fn->getName(), getFunctionTable(), std::move(*args), e,
                     frame);
  if (fn->hasBody())
    return callFunction(fn, *args, frame.self, frame.inForward, loc(e));
  return error(loc(e)) << "the C++ front end cannot evaluate a call of '"
                       << fn->getQualifiedNameAsString()
                       << "' (no body in this translation unit)";
}

FailureOr<Val> Interpreter::evalRegister(const cl::CXXMemberCallExpr *e,
                                         StringRef method, Frame &frame) {
  SmallVector<const cl::Expr *> argExprs(e->arguments());
  FailureOr<SmallVector<Val>> args = evalArgs(argExprs, frame);
  if (failed(args))
    return failure();
  Module &self = *frame.self;
  if (args->empty() || (*args)[0].kind != Val::Kind::Str)
    return error(loc(e)) << method << " needs a constant name";
  std::string name = (*args)[0].s;
  if (method == "register_module") {
    if (args->size() < 2 || (*args)[1].kind != Val::Kind::Module)
      return error(loc(e)) << "register_module(\"" << name
                           << "\", ...) needs a module";
    for (auto &child : self.children)
      if (child.first == name)
        return error(loc(e))
               << "submodule '" << name << "' is registered twice";
    ModuleRef child = (*args)[1].module;
    self.children.emplace_back(name, child);
    return (*args)[1];
  }
  // register_parameter(name, tensor, requires_grad = true) /
  // register_buffer(name, tensor).
  if (args->size() < 2 || (*args)[1].kind != Val::Kind::List)
    return error(loc(e)) << method << "(\"" << name
                         << "\", ...) needs a tensor of constant shape "
                            "(torch::randn({...}), torch::zeros({...}), ...)";
  TensorDecl t;
  t.name = name;
  t.isBuffer = method == "register_buffer";
  std::optional<SmallVector<int64_t>> shape = (*args)[1].getInts();
  if (!shape)
    return error(loc(e)) << "the shape of '" << name << "' is not constant";
  t.shape = *shape;
  if (!t.isBuffer && args->size() >= 3)
    if (std::optional<int64_t> grad = (*args)[2].getInt())
      t.trainable = *grad != 0;
  if (self.findTensor(name))
    return error(loc(e)) << "'" << name << "' is registered twice";
  self.tensors.push_back(t);
  Val out;
  out.kind = Val::Kind::Param;
  out.module = frame.self;
  out.s = name;
  return out;
}

FailureOr<Val> Interpreter::evalMemberCall(const cl::CXXMemberCallExpr *e,
                                           Frame &frame) {
  const cl::CXXMethodDecl *method = e->getMethodDecl();
  if (!method)
    return error(loc(e)) << "the C++ front end cannot evaluate this call";
  StringRef name =
      method->getDeclName().isIdentifier() ? method->getName() : "";
  const cl::Expr *object = e->getImplicitObjectArgument();
  bool onThis = isa<cl::CXXThisExpr>(object->IgnoreParenImpCasts());
  if (onThis && frame.self &&
      (name == "register_module" || name == "register_parameter" ||
       name == "register_buffer"))
    return evalRegister(e, name, frame);
  if (name == "is_training")
    return Val::boolean(training);

  FailureOr<Val> self = eval(object, frame);
  if (failed(self))
    return failure();
  // Holders: `if (downsample)`, downsample.is_empty(), holder.ptr().
  if (self->kind == Val::Kind::None || self->kind == Val::Kind::Module) {
    if (isa<cl::CXXConversionDecl>(method) &&
        method->getReturnType()->isBooleanType())
      return Val::boolean(self->kind == Val::Kind::Module);
    if (name == "is_empty")
      return Val::boolean(self->kind == Val::Kind::None);
    if (self->kind == Val::Kind::Module && (name == "ptr" || name == "get"))
      return *self;
    if (self->kind == Val::Kind::None)
      return error(loc(e)) << "'" << name << "' on an empty module holder";
  }
  SmallVector<const cl::Expr *> argExprs(e->arguments());
  FailureOr<SmallVector<Val>> args = evalArgs(argExprs, frame);
  if (failed(args))
    return failure();

  switch (self->kind) {
  case Val::Kind::Tensor:
  case Val::Kind::Param: {
    SmallVector<Val> all{*self};
    all.append(args->begin(), args->end());
    return callTorch(name, getTensorMethodTable(), std::move(all), e, frame);
  }
  case Val::Kind::Options: {
    // Setters of TORCH_ARG: `.stride(2)` sets the field and returns the
    // options; getters read it.
    if (args->size() == 1) {
      self->options->fields[name] = (*args)[0];
      return *self;
    }
    if (const Val *field = self->options->get(name))
      return *field;
    return error(loc(e)) << "option '" << name
                         << "' is not set here (the C++ front end reads "
                            "options set explicitly)";
  }
  case Val::Kind::Module: {
    Module &m = *self->module;
    if (name == "forward")
      return callModule(self->module, *args, loc(e));
    // `list[i]->as<Linear>()`: the module when it is one (LibTorch returns
    // nullptr otherwise, which is an error here).
    if (name == "as") {
      const cl::TemplateArgumentList *targs =
          method->getTemplateSpecializationArgs();
      const cl::CXXRecordDecl *target =
          targs && targs->size() &&
                  targs->get(0).getKind() == cl::TemplateArgument::Type
              ? targs->get(0).getAsType()->getAsCXXRecordDecl()
              : nullptr;
      if (const cl::CXXRecordDecl *impl = getHolderImpl(target))
        target = impl;
      if (target)
        target = target->getDefinition();
      bool matches =
          target &&
          (m.record == target ||
           (!m.kind.empty() && builtinKind(target) == m.kind) ||
           (m.kind.empty() &&
            derivesFrom(m.record, target->getQualifiedNameAsString())));
      if (!matches)
        return error(loc(e))
               << "module " << m.displayName() << " is "
               << (m.kind.empty() ? m.record->getName().str()
                                  : "a torch::nn::" + m.kind)
               << ", not a "
               << (target ? target->getQualifiedNameAsString() : "module")
               << ": as<>() returns nullptr here";
      return *self;
    }
    if ((m.kind == "Sequential" || m.kind == "ModuleList") &&
        (name == "push_back" || name == "extend")) {
      for (const Val &arg : *args) {
        if (arg.kind != Val::Kind::Module)
          return error(loc(e)) << name << " expects a module";
        m.children.emplace_back(std::to_string(m.children.size()), arg.module);
      }
      return Val();
    }
    if (m.kind == "Sequential" || m.kind == "ModuleList") {
      if (name == "size")
        return Val::integer(m.children.size());
    }
    if (m.kind.empty() && method->hasBody() && !isTorchDecl(method))
      return callFunction(method, *args, self->module, frame.inForward, loc(e));
    if (name == "train" || name == "eval" || name == "to" ||
        name == "zero_grad") {
      warning(loc(e)) << "'" << name
                      << "' is ignored by the C++ front end: the step is "
                         "what vram-opt's options say";
      return Val();
    }
    return error(loc(e)) << "the C++ front end cannot model method '" << name
                         << "' of module " << m.displayName();
  }
  default:
    break;
  }
  if (std::optional<Val> c = clangConstant(e, ast))
    return *c;
  return error(loc(e)) << "the C++ front end cannot evaluate '" << name
                       << "' on " << self->describe();
}

FailureOr<Val> Interpreter::evalOperatorCall(const cl::CXXOperatorCallExpr *e,
                                             Frame &frame) {
  cl::OverloadedOperatorKind op = e->getOperator();
  if (op == cl::OO_Equal) {
    FailureOr<Val> rhs = eval(e->getArg(1), frame);
    if (failed(rhs))
      return failure();
    if (failed(assign(e->getArg(0), *rhs, frame)))
      return failure();
    return *rhs;
  }
  SmallVector<const cl::Expr *> argExprs(e->arguments());
  FailureOr<SmallVector<Val>> args = evalArgs(argExprs, frame);
  if (failed(args))
    return failure();
  if (args->empty())
    return error(loc(e)) << "operator without operands";
  Val &first = (*args)[0];
  if (first.kind == Val::Kind::Module) {
    if (op == cl::OO_Arrow || op == cl::OO_Star)
      return first;
    if (op == cl::OO_Call)
      return callModule(first.module, ArrayRef<Val>(*args).drop_front(),
                        loc(e));
    if (op == cl::OO_Subscript && args->size() == 2)
      if (std::optional<int64_t> index = (*args)[1].getInt()) {
        Module &m = *first.module;
        if (*index < 0 || *index >= int64_t(m.children.size()))
          return error(loc(e)) << "index " << *index << " is out of range of "
                               << m.displayName();
        return Val::ofModule(m.children[*index].second);
      }
  }
  // `chunks[0]` of a std::vector (Tensor::chunk) or a tuple-like list.
  if (first.kind == Val::Kind::List && op == cl::OO_Subscript &&
      args->size() == 2)
    if (std::optional<int64_t> index = (*args)[1].getInt()) {
      if (*index < 0 || *index >= int64_t(first.list.size()))
        return error(loc(e)) << "index " << *index << " is out of range of "
                             << first.describe();
      return first.list[*index];
    }
  StringRef name;
  switch (op) {
  case cl::OO_Plus:
    name = "add";
    break;
  case cl::OO_Minus:
    name = "sub";
    break;
  case cl::OO_Star:
    name = "mul";
    break;
  case cl::OO_Slash:
    name = "div";
    break;
  case cl::OO_PlusEqual:
    name = "add_";
    break;
  case cl::OO_StarEqual:
    name = "mul_";
    break;
  default:
    break;
  }
  bool tensorOperand = llvm::any_of(*args, [](const Val &v) {
    return v.kind == Val::Kind::Tensor || v.kind == Val::Kind::Param;
  });
  if (!name.empty() && tensorOperand) {
    FailureOr<Val> result =
        callTorch(name, getTensorMethodTable(), *args, e, frame);
    if (failed(result))
      return failure();
    // `x += y` rebinds x to the updated tensor.
    if (name.ends_with("_") && failed(assign(e->getArg(0), *result, frame)))
      return failure();
    return result;
  }
  if (std::optional<Val> c = clangConstant(e, ast))
    return *c;
  return error(loc(e)) << "the C++ front end cannot evaluate operator '"
                       << cl::getOperatorSpelling(op) << "' on "
                       << first.describe();
}
