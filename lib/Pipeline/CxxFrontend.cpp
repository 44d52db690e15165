//===- CxxFrontend.cpp - the C++ front end module's entry point -----------===//
//
// Built into VramCxxFrontend.so with the importer (lib/Import/Cxx) and
// libclang-cpp; vram-opt loads it for a C++ input
// (vram/Pipeline/CxxFrontend.h).
//
//===----------------------------------------------------------------------===//

#include "vram/Pipeline/CxxFrontend.h"
#include "vram/Import/Cxx.h"
#include "vram/Pipeline/Pipeline.h"

using namespace mlir;
using namespace vram;

namespace {
class CxxSource : public ModelSource {
public:
  CxxSource(MLIRContext *context,
            std::unique_ptr<cxx_import::CxxTranslationUnit> unit,
            cxx_import::CxxModuleOptions options, std::string inputPath)
      : context(context), unit(std::move(unit)), options(std::move(options)),
        inputPath(std::move(inputPath)) {}

  StringRef getName() const override { return options.moduleName; }
  StringRef getInputPath() const override { return inputPath; }
  MLIRContext *getContext() const override { return context; }

  llvm::Expected<OwningOpRef<ModuleOp>>
  build(std::optional<int64_t> batch) override {
    cxx_import::CxxModuleOptions moduleOptions = options;
    if (batch)
      moduleOptions.batch = batch;
    std::optional<RecordFindings> record;
    if (!batch)
      record.emplace(context, findings);
    OwningOpRef<ModuleOp> module = unit->importModule(context, moduleOptions);
    if (!module)
      return makeDiagnosedError();
    return module;
  }

private:
  MLIRContext *context;
  std::unique_ptr<cxx_import::CxxTranslationUnit> unit;
  cxx_import::CxxModuleOptions options;
  std::string inputPath;
};

llvm::Expected<std::unique_ptr<ModelSource>>
importCxxSource(MLIRContext *context, CxxModelOptions options) {
  cxx_import::CxxModuleOptions moduleOptions;
  for (const std::string &text : options.inputs) {
    std::optional<cxx_import::CxxInputSpec> spec =
        cxx_import::parseInputSpec(text);
    if (!spec)
      return makeUsageError(
          "--input expects a shape such as 8x3x224x224, got '" + text +
          "' (an element type may follow: 8x128:i64; f32, f16, bf16, f64, "
          "i64, i32, i1)");
    moduleOptions.inputs.push_back(*spec);
  }
  cxx_import::CxxSourceOptions sourceOptions;
  sourceOptions.sourceFile = options.sourceFile;
  sourceOptions.compileFlags = options.compileFlags;
  sourceOptions.compileCommands = options.compileCommands;
  std::unique_ptr<cxx_import::CxxTranslationUnit> unit =
      cxx_import::CxxTranslationUnit::parse(context, sourceOptions);
  if (!unit)
    return makeDiagnosedError();
  moduleOptions.moduleName = options.moduleName;
  moduleOptions.constructorArgs = options.constructorArgs;
  moduleOptions.batch = options.batch;
  moduleOptions.training = options.training;
  return std::make_unique<CxxSource>(
      context, std::move(unit), std::move(moduleOptions), options.sourceFile);
}
} // namespace

extern "C" LLVM_ATTRIBUTE_VISIBILITY_DEFAULT CreateCxxSourceFn
vramCxxFrontendEntry() {
  return &importCxxSource;
}
