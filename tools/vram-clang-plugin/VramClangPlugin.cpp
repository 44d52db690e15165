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
// the translation unit), their step built and its peak checked (exact, or
// with allocator=pytorch-cuda the caching allocator's reserved / device
// figure, as vram-opt --budget): over budget is a warning (an error with
// -fplugin-arg-vram-error) at the class with notes at the storages that
// dominate the peak and notes saying what would fit (the largest batch, AMP).
// Anything the front end cannot model is a warning; the compile otherwise
// proceeds unchanged.
//
//===----------------------------------------------------------------------===//

#include "vram/Dialect/NN/NNDialect.h"
#include "vram/Dialect/NN/NNOps.h"
#include "vram/Import/Cxx.h"
#include "vram/Lint/Budget.h"
#include "vram/Pipeline/ModelSource.h"
#include "vram/Pipeline/Pipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "clang/AST/ASTConsumer.h"
#include "clang/AST/Attr.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendPluginRegistry.h"

using namespace clang;

namespace {

/// The module an annotation names, extracted from the compiler's own AST at
/// any batch.
class AstSource : public vram::ModelSource {
public:
  AstSource(mlir::MLIRContext *context, ASTContext &ast,
            vram::cxx_import::CxxModuleOptions options)
      : context(context), ast(ast), options(std::move(options)) {}

  llvm::StringRef getName() const override { return options.moduleName; }
  llvm::StringRef getInputPath() const override { return ""; }
  mlir::MLIRContext *getContext() const override { return context; }

  llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
  build(std::optional<int64_t> batch) override {
    vram::cxx_import::CxxModuleOptions at = options;
    if (batch)
      at.batch = *batch;
    mlir::OwningOpRef<mlir::ModuleOp> module =
        vram::cxx_import::importModule(context, ast, at);
    if (!module)
      return vram::makeDiagnosedError();
    return module;
  }

private:
  mlir::MLIRContext *context;
  ASTContext &ast;
  vram::cxx_import::CxxModuleOptions options;
};

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

  /// What an annotation asks for: the module and the pipeline's options
  /// (the step, the precision, the memory model and the budget).
  struct Request {
    vram::cxx_import::CxxModuleOptions module;
    vram::PipelineOptions pipeline;
  };

  /// Reads one `key=value` field of an annotation; false if it cannot. The
  /// values are spelled as vram-opt's options (the same enum spellings,
  /// parseByteSize, parseInputSpec, parseBudgetMetric).
  static bool readField(llvm::StringRef key, llvm::StringRef value,
                        Request &r) {
    using namespace vram::nn;
    auto set = [](auto parsed, auto &field) {
      if (parsed)
        field = *parsed;
      return parsed.has_value();
    };
    vram::PipelineOptions &p = r.pipeline;
    if (key == "budget")
      return (p.budget = vram::parseByteSize(value)).has_value();
    if (key == "input") {
      llvm::SmallVector<llvm::StringRef> shapes;
      value.split(shapes, ',');
      bool ok = true;
      for (llvm::StringRef shape : shapes) {
        auto parsed = vram::cxx_import::parseInputSpec(shape);
        ok &= parsed.has_value();
        if (parsed)
          r.module.inputs.push_back(*parsed);
      }
      return ok;
    }
    if (key == "args") {
      llvm::SmallVector<llvm::StringRef> args;
      value.split(args, ',');
      for (llvm::StringRef arg : args)
        r.module.constructorArgs.push_back(arg.str());
      return true;
    }
    if (key == "mode")
      return set(parseEnumSpelling<StepMode>(value), p.step.mode);
    if (key == "optimizer")
      return set(parseEnumSpelling<OptimizerKind>(value), p.step.optimizer);
    if (key == "torch-version")
      return set(parseEnumSpelling<TorchVersion>(value), p.step.torchVersion);
    if (key == "device")
      return set(parseEnumSpelling<Device>(value), p.step.device);
    if (key == "precision")
      return set(parseEnumSpelling<Precision>(value), p.precision);
    if (key == "allocator") {
      std::optional<AllocatorKind> kind =
          parseEnumSpelling<AllocatorKind>(value);
      if (kind)
        p.memoryModel.allocator = *kind;
      return kind.has_value();
    }
    if (key == "metric")
      return (p.budgetMetric = vram::parseBudgetMetric(value)).has_value();
    if (key == "gpu") {
      // As --gpu: the caching allocator, and the GPU's capacity as the
      // default budget.
      p.memoryModel.gpu = vram::lookupGpu(value);
      if (p.memoryModel.gpu)
        p.memoryModel.allocator = AllocatorKind::PytorchCuda;
      return p.memoryModel.gpu != nullptr;
    }
    return false;
  }

  void check(ASTContext &ast, CXXRecordDecl *record, AnnotateAttr *attr) {
    SourceLocation at = attr->getLocation();
    // "vram.budget=8GiB;input=2x3x32x32;mode=train;optimizer=adam;args=10".
    Request r;
    r.module.moduleName = record->getName().str();
    llvm::SmallVector<llvm::StringRef> fields;
    attr->getAnnotation().drop_front(strlen("vram.")).split(fields, ';');
    for (llvm::StringRef field : fields) {
      auto [key, value] = field.trim().split('=');
      if (!readField(key.trim(), value.trim(), r)) {
        report(DiagnosticsEngine::Warning, at,
               ("vram: ignoring the annotation: cannot read '" + field +
                "' (budget=SIZE;input=SHAPE[:TYPE],...;mode=train|inference;"
                "optimizer=" +
                vram::nn::enumSpellings<vram::nn::OptimizerKind>() +
                ";args=V,...;allocator=exact|pytorch-cuda;"
                "metric=exact|allocated|reserved|device;torch-version=2|1.13;"
                "device=cuda|cpu;precision=fp32|amp-fp16|amp-bf16|fp16|bf16;"
                "gpu=NAME)")
                   .str());
        return;
      }
    }
    vram::PipelineOptions &p = r.pipeline;
    if (!p.budget && p.memoryModel.gpu)
      p.budget = p.memoryModel.gpu->capacityBytes;
    if (!p.budget || r.module.inputs.empty()) {
      report(DiagnosticsEngine::Warning, at,
             "vram: the annotation needs budget=SIZE (or gpu=NAME) and "
             "input=SHAPE");
      return;
    }
    r.module.training = p.step.mode == vram::nn::StepMode::Train;

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
            overBudget ? "vram: " + r.module.moduleName + ": "
            : isError  ? "vram: cannot model " + r.module.moduleName + ": "
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

    AstSource source(&context, ast, r.module);
    llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> module =
        source.build(std::nullopt);
    if (!module || llvm::errorToBool(vram::runPipeline(**module, p))) {
      if (!module)
        llvm::consumeError(module.takeError());
      emitCollected(false);
      return;
    }
    std::unique_ptr<vram::StepMemory> memory =
        vram::computeStepMemory(**module, p);
    if (!memory) {
      emitCollected(false);
      return;
    }
    // Front-end warnings first, then the budget.
    emitCollected(false);
    collected.clear();
    vram::BudgetMetric metric = p.getBudgetMetric();
    if (succeeded(vram::checkBudget(*vram::getMeasuredFunction(**module),
                                    memory->getAnalysis(), memory->get(metric),
                                    *p.budget,
                                    vram::stringifyBudgetMetric(metric))))
      return;
    emitCollected(true);
    suggest(ast, r, classLoc, memory->get(metric));
  }

  /// Notes on the over-budget diagnostic saying what would fit, each
  /// measured by extracting and building the step again (as vram-opt
  /// --budget's remarks): the largest batch size (findLargestBatch), and
  /// AMP for an fp32 CUDA training step.
  void suggest(ASTContext &ast, const Request &r, SourceLocation classLoc,
               int64_t used) {
    mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
    context.getOrLoadDialect<vram::nn::NNDialect>();
    context.getOrLoadDialect<mlir::func::FuncDialect>();
    AstSource source(&context, ast, r.module);
    const vram::PipelineOptions &p = r.pipeline;
    int64_t current = r.module.inputs.front().shape.front();
    auto at = [&](int64_t batch) -> mlir::FailureOr<int64_t> {
      mlir::FailureOr<int64_t> used = vram::measureModel(source, p, batch);
      return failed(used) ? mlir::FailureOr<int64_t>(INT64_MAX) : used;
    };
    mlir::FailureOr<std::optional<int64_t>> best =
        vram::findLargestBatch(at, *p.budget, std::max<int64_t>(current, 1));
    if (succeeded(best) && *best)
      report(DiagnosticsEngine::Note, classLoc,
             "vram: batch size " + std::to_string(**best) + " fits the budget");
    else if (succeeded(best))
      report(DiagnosticsEngine::Note, classLoc,
             "vram: not even batch size 1 fits the budget");
    if (p.step.mode == vram::nn::StepMode::Train &&
        p.precision == vram::nn::Precision::Fp32 &&
        p.step.device == vram::nn::Device::Cuda) {
      // As vram-opt's advice: only a change that saves memory is named, as
      // fitting or as the best saving when nothing fits.
      vram::PipelineOptions amp = p;
      amp.precision = vram::nn::Precision::AmpFp16;
      if (mlir::FailureOr<int64_t> needs =
              vram::measureModel(source, amp, std::nullopt);
          succeeded(needs) && *needs < used)
        report(DiagnosticsEngine::Note, classLoc,
               "vram: precision=amp-fp16 needs " +
                   vram::formatByteSize(*needs) +
                   (*needs <= *p.budget ? ": fits"
                                        : ": saves the most, but does not "
                                          "fit"));
    }
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
