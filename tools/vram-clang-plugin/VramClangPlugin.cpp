//===- VramClangPlugin.cpp - memory budgets of LibTorch modules in clang --===//
//
// A Clang plugin that runs the C++ front end during a normal compile:
//
//   clang++ -fplugin=libVramClangPlugin.so [-fplugin-arg-vram-error] ...
//
// Module classes annotated with a budget,
//
//   struct [[clang::annotate("vram.budget=8GiB;input=90x3x224x224;"
//                            "mode=train;optimizer=adam")]] NetImpl
//       : torch::nn::Module { ... };
//
// are extracted (constructor arguments from `args=...` or a construction in
// the translation unit), their step built and its exact peak checked: over
// budget is a warning (an error with -fplugin-arg-vram-error) at the class
// with notes at the storages that dominate the peak. Anything the front end
// cannot model is a warning; the compile otherwise proceeds unchanged.
//
//===----------------------------------------------------------------------===//

#include "vram/Analysis/MemoryAnalysis.h"
#include "vram/Dialect/NN/NNDialect.h"
#include "vram/Dialect/NN/NNOps.h"
#include "vram/Dialect/NN/TorchSemantics.h"
#include "vram/Import/Cxx.h"
#include "vram/Lint/Budget.h"
#include "vram/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "clang/AST/ASTConsumer.h"
#include "clang/AST/Attr.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendPluginRegistry.h"

using namespace clang;

namespace {

/// A diagnostic the front end or the lint emitted, with its notes.
struct Collected {
  mlir::DiagnosticSeverity severity;
  std::string message;
  mlir::Location loc;
  std::vector<std::pair<std::string, mlir::Location>> notes;
};

class VramConsumer : public ASTConsumer {
public:
  VramConsumer(CompilerInstance &ci, bool asError) : ci(ci), asError(asError) {}

  void HandleTranslationUnit(ASTContext &ast) override {
    if (ci.getDiagnostics().hasErrorOccurred())
      return;
    struct Finder : RecursiveASTVisitor<Finder> {
      std::vector<std::pair<CXXRecordDecl *, AnnotateAttr *>> found;
      bool VisitCXXRecordDecl(CXXRecordDecl *record) {
        if (record->isThisDeclarationADefinition())
          for (AnnotateAttr *attr : record->specific_attrs<AnnotateAttr>())
            if (attr->getAnnotation().starts_with("vram."))
              found.emplace_back(record, attr);
        return true;
      }
    } finder;
    finder.TraverseDecl(ast.getTranslationUnitDecl());
    for (auto [record, attr] : finder.found)
      check(ast, record, attr);
  }

private:
  /// The clang location of an MLIR location's first file position.
  SourceLocation toClang(mlir::Location loc, SourceLocation fallback) {
    mlir::FileLineColLoc file;
    loc->walk([&](mlir::Location inner) {
      if (auto f = dyn_cast<mlir::FileLineColLoc>(inner); f && f.getLine())
        file = f;
      return file ? mlir::WalkResult::interrupt() : mlir::WalkResult::advance();
    });
    if (!file)
      return fallback;
    SourceManager &sm = ci.getSourceManager();
    auto entry =
        sm.getFileManager().getOptionalFileRef(file.getFilename().getValue());
    if (!entry)
      return fallback;
    SourceLocation l =
        sm.translateFileLineCol(*entry, file.getLine(), file.getColumn());
    return l.isValid() ? l : fallback;
  }

  void report(DiagnosticsEngine::Level level, SourceLocation where,
              llvm::StringRef message) {
    DiagnosticsEngine &diags = ci.getDiagnostics();
    diags.Report(where, diags.getCustomDiagID(level, "%0")) << message;
  }

  void check(ASTContext &ast, CXXRecordDecl *record, AnnotateAttr *attr) {
    SourceLocation at = attr->getLocation();
    // "vram.budget=8GiB;input=2x3x32x32;mode=train;optimizer=adam;args=10".
    std::optional<int64_t> budget;
    vram::cxx_import::CxxModuleOptions options;
    options.moduleName = record->getName().str();
    vram::BuildStepOptions step;
    llvm::SmallVector<llvm::StringRef> fields;
    attr->getAnnotation().drop_front(strlen("vram.")).split(fields, ';');
    for (llvm::StringRef field : fields) {
      auto [key, value] = field.trim().split('=');
      bool ok = true;
      if (key == "budget") {
        budget = vram::parseByteSize(value);
        ok = budget.has_value();
      } else if (key == "input") {
        llvm::SmallVector<llvm::StringRef> shapes;
        value.split(shapes, ',');
        for (llvm::StringRef shape : shapes) {
          auto parsed = vram::cxx_import::parseShape(shape);
          ok &= parsed.has_value();
          if (parsed)
            options.inputs.push_back(*parsed);
        }
      } else if (key == "mode") {
        auto mode = vram::nn::symbolizeStepMode(value);
        ok = mode.has_value();
        if (mode)
          step.mode = *mode;
      } else if (key == "optimizer") {
        auto kind = vram::nn::symbolizeOptimizerKind(value);
        ok = kind.has_value();
        if (kind)
          step.optimizer = *kind;
      } else if (key == "args") {
        llvm::SmallVector<llvm::StringRef> args;
        value.split(args, ',');
        for (llvm::StringRef arg : args)
          options.constructorArgs.push_back(arg.str());
      } else {
        ok = false;
      }
      if (!ok) {
        report(DiagnosticsEngine::Warning, at,
               ("vram: ignoring the annotation: cannot read '" + field +
                "' (budget=SIZE;input=SHAPE;mode=train|inference;"
                "optimizer=sgd|momentum|adam|adamw;args=V,...)")
                   .str());
        return;
      }
    }
    if (!budget || options.inputs.empty()) {
      report(DiagnosticsEngine::Warning, at,
             "vram: the annotation needs budget=SIZE and input=SHAPE");
      return;
    }
    options.training = step.mode == vram::nn::StepMode::Train;
    step.implementation = vram::nn::getDefaultOptimizerImpl({});

    mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
    context.getOrLoadDialect<vram::nn::NNDialect>();
    context.getOrLoadDialect<mlir::func::FuncDialect>();
    std::vector<Collected> collected;
    mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
      Collected c{d.getSeverity(), d.str(), d.getLocation(), {}};
      for (mlir::Diagnostic &note : d.getNotes())
        c.notes.emplace_back(note.str(), note.getLocation());
      collected.push_back(std::move(c));
      return mlir::success();
    });
    SourceLocation classLoc = record->getLocation();
    auto emitCollected = [&](bool overBudget) {
      for (const Collected &c : collected) {
        bool isError = c.severity == mlir::DiagnosticSeverity::Error;
        DiagnosticsEngine::Level level = overBudget && isError && asError
                                             ? DiagnosticsEngine::Error
                                             : DiagnosticsEngine::Warning;
        // The budget message goes at the class, front-end messages where
        // they are.
        SourceLocation where = overBudget ? classLoc : toClang(c.loc, classLoc);
        std::string prefix =
            overBudget ? "vram: " + options.moduleName + ": "
            : isError  ? "vram: cannot model " + options.moduleName + ": "
                       : "vram: ";
        report(level, where, prefix + c.message);
        for (const auto &[message, loc] : c.notes)
          report(DiagnosticsEngine::Note, toClang(loc, classLoc), message);
        // The op where the peak occurs, when it is one of the model's own
        // (a step op of the optimizer has no C++ location).
        if (SourceLocation peak = toClang(c.loc, classLoc);
            overBudget && isError && peak != classLoc)
          report(DiagnosticsEngine::Note, peak, "the peak is here");
      }
    };

    mlir::OwningOpRef<mlir::ModuleOp> module =
        vram::cxx_import::importModule(&context, ast, options);
    if (!module) {
      emitCollected(false);
      return;
    }
    mlir::PassManager pm(&context);
    pm.addPass(vram::createBuildStep(step));
    auto func = module->lookupSymbol<mlir::func::FuncOp>("forward");
    if (failed(pm.run(*module)) ||
        !(func = module->lookupSymbol<mlir::func::FuncOp>("step"))) {
      emitCollected(false);
      return;
    }
    vram::MemoryAnalysis memory(func);
    if (memory.failed()) {
      emitCollected(false);
      return;
    }
    // Front-end warnings first, then the budget.
    emitCollected(false);
    collected.clear();
    int64_t used = memory.getPeakBytes();
    if (succeeded(vram::checkBudget(func, memory, used, *budget, "exact")))
      return;
    emitCollected(true);
  }

  CompilerInstance &ci;
  bool asError;
};

class VramAction : public PluginASTAction {
protected:
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &ci,
                                                 llvm::StringRef) override {
    return std::make_unique<VramConsumer>(ci, asError);
  }

  bool ParseArgs(const CompilerInstance &ci,
                 const std::vector<std::string> &args) override {
    for (const std::string &arg : args) {
      if (arg == "error") {
        asError = true;
      } else if (arg == "warning") {
        asError = false;
      } else {
        DiagnosticsEngine &diags = ci.getDiagnostics();
        diags.Report(diags.getCustomDiagID(
            DiagnosticsEngine::Error,
            "vram plugin: unknown argument '%0' (error, warning)"))
            << arg;
        return false;
      }
    }
    return true;
  }

  ActionType getActionType() override { return AddAfterMainAction; }

private:
  bool asError = false;
};

} // namespace

static FrontendPluginRegistry::Add<VramAction>
    registration("vram", "check LibTorch modules against vram.budget "
                         "annotations");
