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

#include "vram/Analysis/Allocator.h"
#include "vram/Analysis/Device.h"
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

  /// What an annotation asks for.
  struct Request {
    std::optional<int64_t> budget;
    vram::cxx_import::CxxModuleOptions module;
    vram::BuildStepOptions step;
    vram::nn::Precision precision = vram::nn::Precision::Fp32;
    bool cachingAllocator = false;
    std::optional<vram::BudgetMetric> metric;
    const vram::GpuSpec *gpu = nullptr;

    vram::BudgetMetric getMetric() const {
      return metric
                 ? *metric
                 : vram::getDefaultBudgetMetric(
                       cachingAllocator, step.device == vram::nn::Device::Cuda);
    }
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
    if (key == "budget")
      return (r.budget = vram::parseByteSize(value)).has_value();
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
      return set(parseEnumSpelling<StepMode>(value), r.step.mode);
    if (key == "optimizer")
      return set(parseEnumSpelling<OptimizerKind>(value), r.step.optimizer);
    if (key == "torch-version")
      return set(parseEnumSpelling<TorchVersion>(value), r.step.torchVersion);
    if (key == "device")
      return set(parseEnumSpelling<Device>(value), r.step.device);
    if (key == "precision")
      return set(parseEnumSpelling<Precision>(value), r.precision);
    if (key == "allocator") {
      std::optional<AllocatorKind> kind =
          parseEnumSpelling<AllocatorKind>(value);
      if (kind)
        r.cachingAllocator = *kind == AllocatorKind::PytorchCuda;
      return kind.has_value();
    }
    if (key == "metric")
      return (r.metric = vram::parseBudgetMetric(value)).has_value();
    if (key == "gpu") {
      // As --gpu: the caching allocator, and the GPU's capacity as the
      // default budget.
      r.gpu = vram::lookupGpu(value);
      r.cachingAllocator |= r.gpu != nullptr;
      return r.gpu != nullptr;
    }
    return false;
  }

  /// The module extracted at `batch` (the annotation's when none) and its
  /// step built; null on failure (with MLIR diagnostics).
  static mlir::OwningOpRef<mlir::ModuleOp>
  buildStep(mlir::MLIRContext &context, ASTContext &ast, const Request &r,
            vram::nn::Precision precision, std::optional<int64_t> batch) {
    vram::cxx_import::CxxModuleOptions options = r.module;
    if (batch)
      options.batch = *batch;
    mlir::OwningOpRef<mlir::ModuleOp> module =
        vram::cxx_import::importModule(&context, ast, options);
    if (!module)
      return nullptr;
    mlir::PassManager pm(&context);
    if (precision != vram::nn::Precision::Fp32) {
      vram::PrecisionOptions p;
      p.precision = precision;
      pm.addPass(vram::createPrecision(p));
    }
    pm.addPass(vram::createBuildStep(r.step));
    if (failed(pm.run(*module)) || !module->lookupSymbol("step"))
      return nullptr;
    return module;
  }

  /// The step's memory under the annotation's metric.
  static int64_t metricOf(const vram::MemoryAnalysis &memory,
                          const Request &r) {
    std::unique_ptr<vram::AllocatorModel> allocator;
    if (r.cachingAllocator)
      allocator = std::make_unique<vram::CudaCachingAllocator>();
    else
      allocator = std::make_unique<vram::ExactAllocator>();
    std::optional<vram::DeviceModel> device;
    if (r.cachingAllocator && r.step.device == vram::nn::Device::Cuda)
      device = vram::makeDeviceModel(r.gpu, /*lazyLoading=*/true);
    return vram::computeMemoryMetrics(memory, *allocator,
                                      device ? &*device : nullptr)
        .get(r.getMetric());
  }

  /// The step's memory at `batch` with `precision`, measured quietly;
  /// failure when it cannot be built.
  static mlir::FailureOr<int64_t> measure(mlir::MLIRContext &context,
                                          ASTContext &ast, const Request &r,
                                          vram::nn::Precision precision,
                                          std::optional<int64_t> batch) {
    mlir::ScopedDiagnosticHandler quiet(
        &context, [](mlir::Diagnostic &) { return mlir::success(); });
    mlir::OwningOpRef<mlir::ModuleOp> module =
        buildStep(context, ast, r, precision, batch);
    if (!module)
      return mlir::failure();
    vram::MemoryAnalysis memory(
        module->lookupSymbol<mlir::func::FuncOp>("step"));
    if (memory.failed())
      return mlir::failure();
    return metricOf(memory, r);
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
    if (!r.budget && r.gpu)
      r.budget = r.gpu->capacityBytes;
    if (!r.budget || r.module.inputs.empty()) {
      report(DiagnosticsEngine::Warning, at,
             "vram: the annotation needs budget=SIZE (or gpu=NAME) and "
             "input=SHAPE");
      return;
    }
    r.module.training = r.step.mode == vram::nn::StepMode::Train;
    r.step.implementation =
        vram::nn::getDefaultOptimizerImpl({r.step.torchVersion, r.step.device});

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

    mlir::OwningOpRef<mlir::ModuleOp> module =
        buildStep(context, ast, r, r.precision, std::nullopt);
    auto func = module ? module->lookupSymbol<mlir::func::FuncOp>("step")
                       : mlir::func::FuncOp();
    if (!func) {
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
    int64_t used = metricOf(memory, r);
    if (succeeded(
            vram::checkBudget(func, memory, used, *r.budget,
                              vram::stringifyBudgetMetric(r.getMetric()))))
      return;
    emitCollected(true);
    suggest(ast, r, classLoc);
  }

  /// Notes on the over-budget diagnostic saying what would fit, each
  /// measured by extracting and building the step again (as vram-opt
  /// --budget's remarks): the largest batch size (findLargestBatch), and
  /// AMP for an fp32 CUDA training step.
  void suggest(ASTContext &ast, const Request &r, SourceLocation classLoc) {
    mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
    context.getOrLoadDialect<vram::nn::NNDialect>();
    context.getOrLoadDialect<mlir::func::FuncDialect>();
    int64_t current = r.module.inputs.front().shape.front();
    auto at = [&](int64_t batch) -> mlir::FailureOr<int64_t> {
      mlir::FailureOr<int64_t> used =
          measure(context, ast, r, r.precision, batch);
      return failed(used) ? mlir::FailureOr<int64_t>(INT64_MAX) : used;
    };
    mlir::FailureOr<std::optional<int64_t>> best =
        vram::findLargestBatch(at, *r.budget, std::max<int64_t>(current, 1));
    if (succeeded(best) && *best)
      report(DiagnosticsEngine::Note, classLoc,
             "vram: batch size " + std::to_string(**best) + " fits the budget");
    else if (succeeded(best))
      report(DiagnosticsEngine::Note, classLoc,
             "vram: not even batch size 1 fits the budget");
    if (r.step.mode == vram::nn::StepMode::Train &&
        r.precision == vram::nn::Precision::Fp32 &&
        r.step.device == vram::nn::Device::Cuda)
      if (mlir::FailureOr<int64_t> amp = measure(
              context, ast, r, vram::nn::Precision::AmpFp16, std::nullopt);
          succeeded(amp))
        report(DiagnosticsEngine::Note, classLoc,
               "vram: precision=amp-fp16 needs " + vram::formatByteSize(*amp) +
                   (*amp <= *r.budget ? ": fits" : ": does not fit either"));
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
