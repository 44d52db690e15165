//===- ModelSource.cpp - the front ends as model sources ------------------===//

#include "vram/Pipeline/ModelSource.h"
#include "vram/Analysis/StepInfo.h"
#include "vram/Import/HuggingFace.h"
#include "vram/Import/TorchExport.h"
#include "vram/Pipeline/CxxFrontend.h"
#include "vram/Pipeline/Pipeline.h"
#include "vram/Support/Findings.h"
#include "vram/Zoo/CausalLM.h"
#include "vram/Zoo/Zoo.h"
#ifdef VRAM_ENABLE_ONNX
#include "vram/Import/ONNX.h"
#endif

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <dlfcn.h>

using namespace mlir;
using namespace vram;

namespace {

/// The batch of `module`'s forward model.
std::optional<int64_t> getForwardBatch(ModuleOp module) {
  if (auto forward = module.lookupSymbol<func::FuncOp>("forward"))
    return getBatchSize(forward);
  return std::nullopt;
}

class ZooSource : public ModelSource {
public:
  ZooSource(MLIRContext *context, ZooSourceOptions options)
      : context(context), options(std::move(options)),
        inputPath("zoo:" + this->options.name) {}

  StringRef getName() const override { return options.name; }
  StringRef getInputPath() const override { return inputPath; }
  MLIRContext *getContext() const override { return context; }
  bool canVarySequence() const override { return true; }
  void setSequenceLength(int64_t seq) override { options.seq = seq; }
  void setTensorParallel(int64_t ranks, bool lmHead, bool embedding,
                         bool sequence) override {
    options.tensorParallel = ranks;
    options.tensorParallelLmHead = lmHead;
    options.tensorParallelEmbedding = embedding;
    options.sequenceParallel = sequence;
  }
  void setLiger(const zoo::LigerKernels &liger) override {
    options.liger = liger;
  }

  llvm::Expected<OwningOpRef<ModuleOp>>
  build(std::optional<int64_t> batch) override {
    zoo::ZooOptions zooOptions;
    if (std::optional<int64_t> b = batch ? batch : options.batch)
      zooOptions.batch = *b;
    zooOptions.imageSize = options.imageSize;
    zooOptions.seq = options.seq;
    zooOptions.numClasses = options.numClasses;
    zooOptions.target = options.target;
    zooOptions.attention = options.attention;
    zooOptions.maxNewTokens = options.maxNewTokens;
    zooOptions.staticCache = options.staticCache;
    zooOptions.kvBlockSize = options.kvBlockSize;
    zooOptions.numBeams = options.numBeams;
    zooOptions.sampling = options.sampling;
    zooOptions.tensorParallel = options.tensorParallel;
    zooOptions.tensorParallelLmHead = options.tensorParallelLmHead;
    zooOptions.tensorParallelEmbedding = options.tensorParallelEmbedding;
    zooOptions.sequenceParallel = options.sequenceParallel;
    zooOptions.packed = options.packed;
    zooOptions.padded = options.padded;
    zooOptions.liger = options.liger;
    llvm::Expected<OwningOpRef<ModuleOp>> module =
        zoo::buildModel(context, options.name, zooOptions);
    if (!module)
      return makeUsageError(llvm::toString(module.takeError()));
    return module;
  }

private:
  MLIRContext *context;
  ZooSourceOptions options;
  std::string inputPath;
};

class HuggingFaceSource : public ModelSource {
public:
  HuggingFaceSource(MLIRContext *context, zoo::CausalLMConfig config,
                    std::string inputPath, HuggingFaceSourceOptions options)
      : context(context), config(std::move(config)),
        inputPath(std::move(inputPath)), options(options) {}

  StringRef getName() const override { return config.name; }
  StringRef getInputPath() const override { return inputPath; }
  MLIRContext *getContext() const override { return context; }
  bool canVarySequence() const override {
    return config.layout != zoo::DecoderLayout::Vit;
  }
  void setSequenceLength(int64_t seq) override { options.seq = seq; }
  void setTensorParallel(int64_t ranks, bool lmHead, bool embedding,
                         bool sequence) override {
    options.tensorParallel = ranks;
    options.tensorParallelLmHead = lmHead;
    options.tensorParallelEmbedding = embedding;
    options.sequenceParallel = sequence;
  }
  void setLiger(const zoo::LigerKernels &liger) override {
    options.liger = liger;
  }
  void setTrainingCache(bool useCache) override { options.useCache = useCache; }
  bool hasTrainingCache() const override {
    return config.layout != zoo::DecoderLayout::Bert &&
           config.layout != zoo::DecoderLayout::Vit;
  }

  llvm::Expected<OwningOpRef<ModuleOp>>
  build(std::optional<int64_t> batch) override {
    zoo::ZooOptions zooOptions;
    zooOptions.batch = batch.value_or(options.batch.value_or(1));
    zooOptions.seq = options.seq;
    zooOptions.target = options.target;
    zooOptions.attention = options.attention;
    zooOptions.maxNewTokens = options.maxNewTokens;
    zooOptions.staticCache = options.staticCache;
    zooOptions.kvBlockSize = options.kvBlockSize;
    zooOptions.numBeams = options.numBeams;
    zooOptions.sampling = options.sampling;
    zooOptions.tensorParallel = options.tensorParallel;
    zooOptions.tensorParallelLmHead = options.tensorParallelLmHead;
    zooOptions.tensorParallelEmbedding = options.tensorParallelEmbedding;
    zooOptions.sequenceParallel = options.sequenceParallel;
    zooOptions.packed = options.packed;
    zooOptions.padded = options.padded;
    zooOptions.useCache = options.useCache;
    zooOptions.liger = options.liger;
    zooOptions.decoderSeq = options.decoderSeq;
    // T5 was trained on 512 tokens (its configs' n_positions), without a
    // position table that would bound them.
    int64_t defaultSeq = config.layout == zoo::DecoderLayout::T5 ? 512
                         : config.maxPositions
                             ? std::min<int64_t>(2048, config.maxPositions)
                             : 2048;
    std::optional<RecordFindings> record;
    if (!batch)
      record.emplace(context, findings);
    // A family transformers runs only eagerly (Gemma 2): the default
    // --attention=sdpa means what transformers does; a named kernel cannot.
    using Impl = nn::AttentionImplementation;
    if (config.eagerAttentionOnly && options.attention != Impl::Sdpa &&
        options.attention != Impl::Eager)
      return makeUsageError(config.name +
                            " runs eager attention in transformers (it has "
                            "no sdpa path): an sdpa kernel named by "
                            "--attention does not apply");
    llvm::Expected<OwningOpRef<ModuleOp>> module =
        zoo::buildCausalLM(context, config, zooOptions, defaultSeq, inputPath);
    if (!module)
      return makeUsageError(llvm::toString(module.takeError()));
    // transformers reads packed sequences' boundaries off position_ids
    // only when the forward has no cache: with one they attend across each
    // other (the bytes are then a plain row's).
    if (options.packed && options.useCache && config.useCache)
      emitWarning(FileLineColLoc::get(context, inputPath, 1, 1))
          << "the packed sequences attend to each other: transformers "
             "masks them apart only when the forward has no cache, and this "
             "one runs with use_cache (the config's default); "
             "--use-cache=false models model(..., use_cache=False)";
    return module;
  }

private:
  MLIRContext *context;
  zoo::CausalLMConfig config;
  std::string inputPath;
  HuggingFaceSourceOptions options;
};

/// The --dim names a front end's symbols lack, as a usage error.
static llvm::Error checkDimBindings(const llvm::StringMap<int64_t> &dims,
                                    const llvm::StringSet<> &symbols) {
  for (const auto &binding : dims)
    if (!symbols.contains(binding.getKey())) {
      std::string names;
      for (const auto &dim : symbols)
        names += (names.empty() ? "" : ", ") + dim.getKey().str();
      return makeUsageError(
          "--dim " + binding.getKey() +
          " does not apply: the model's symbolic dimensions are " +
          (names.empty() ? std::string("none") : names));
    }
  return llvm::Error::success();
}

/// A model read from one file (an archive, a graph): named after the file's
/// stem, located at its path.
class FileModelSource : public ModelSource {
public:
  FileModelSource(MLIRContext *context,
                  std::unique_ptr<llvm::MemoryBuffer> file)
      : context(context), file(std::move(file)),
        inputPath(this->file->getBufferIdentifier().str()),
        name(llvm::sys::path::stem(inputPath).str()) {}

  StringRef getName() const override { return name; }
  StringRef getInputPath() const override { return inputPath; }
  MLIRContext *getContext() const override { return context; }

protected:
  MLIRContext *context;
  std::unique_ptr<llvm::MemoryBuffer> file;
  std::string inputPath, name;
};

class TorchExportSource : public FileModelSource {
public:
  TorchExportSource(MLIRContext *context,
                    std::unique_ptr<llvm::MemoryBuffer> file,
                    TorchExportSourceOptions options)
      : FileModelSource(context, std::move(file)), options(std::move(options)) {
  }

  bool canVarySequence() const override { return true; }
  void setSequenceLength(int64_t seq) override { options.seq = seq; }

  llvm::Expected<OwningOpRef<ModuleOp>>
  build(std::optional<int64_t> batch) override {
    torch_export::ExportImportOptions importOptions;
    importOptions.batch = batch ? batch : options.batch;
    importOptions.seq = options.seq;
    importOptions.dims = options.dims;
    importOptions.target = options.target;
    llvm::StringSet<> symbols;
    importOptions.symbols = &symbols;
    std::optional<RecordFindings> record;
    if (!batch)
      record.emplace(context, findings);
    OwningOpRef<ModuleOp> module = torch_export::importExportedProgram(
        context, file->getBuffer(), inputPath, importOptions);
    record.reset();
    if (!module)
      return makeDiagnosedError();
    if (llvm::Error error = checkDimBindings(options.dims, symbols))
      return std::move(error);
    if (batch && getForwardBatch(*module) != *batch)
      return makeUsageError("--fit-batch needs a model whose batch dimension "
                            "can be bound; this program was exported with a "
                            "static batch (export with a torch.export.Dim)");
    return module;
  }

private:
  TorchExportSourceOptions options;
};

#ifdef VRAM_ENABLE_ONNX
class OnnxSource : public FileModelSource {
public:
  OnnxSource(MLIRContext *context, std::unique_ptr<llvm::MemoryBuffer> file,
             OnnxSourceOptions options)
      : FileModelSource(context, std::move(file)), options(std::move(options)) {
  }

  bool canVarySequence() const override { return true; }
  void setSequenceLength(int64_t seq) override { options.seq = seq; }

  llvm::Expected<OwningOpRef<ModuleOp>>
  build(std::optional<int64_t> batch) override {
    onnx_import::OnnxImportOptions importOptions;
    importOptions.batch = batch ? batch : options.batch;
    importOptions.seq = options.seq;
    importOptions.dims = options.dims;
    importOptions.bufferPatterns = options.bufferPatterns;
    llvm::StringSet<> symbolicDims;
    importOptions.symbolicDims = &symbolicDims;
    std::optional<RecordFindings> record;
    if (!batch)
      record.emplace(context, findings);
    OwningOpRef<ModuleOp> module = onnx_import::importOnnxModel(
        context, file->getBuffer(), inputPath, importOptions);
    record.reset();
    // A --dim for a name the graph's inputs lack cannot apply.
    if (llvm::Error error = checkDimBindings(options.dims, symbolicDims))
      return std::move(error);
    if (!module)
      return makeDiagnosedError();
    // Another batch needs a graph whose batch dimension is symbolic.
    if (batch && getForwardBatch(*module) != *batch)
      return makeUsageError("--fit-batch needs a model whose batch dimension "
                            "can be bound; this graph's is static");
    return module;
  }

  llvm::Error
  readParameterValues(llvm::StringMap<ParameterValue> &values) override {
    llvm::StringMap<onnx_import::InitializerData> initializers;
    std::string error;
    if (!onnx_import::readInitializers(file->getBuffer(), initializers, error))
      return llvm::Error::success();
    for (auto &entry : initializers) {
      ParameterValue &value = values[entry.getKey()];
      value.descr = entry.getValue().descr;
      value.shape = entry.getValue().shape;
      value.bytes = std::move(entry.getValue().bytes);
    }
    return llvm::Error::success();
  }

private:
  OnnxSourceOptions options;
};
#endif

} // namespace

std::unique_ptr<ModelSource> vram::createZooSource(MLIRContext *context,
                                                   ZooSourceOptions options) {
  return std::make_unique<ZooSource>(context, std::move(options));
}

llvm::Expected<std::unique_ptr<ModelSource>>
vram::createHuggingFaceSource(MLIRContext *context,
                              std::unique_ptr<llvm::MemoryBuffer> file,
                              HuggingFaceSourceOptions options) {
  FailureOr<zoo::CausalLMConfig> config =
      hf::parseCausalLMConfig(file->getMemBufferRef(), context);
  if (failed(config))
    return makeDiagnosedError();
  // The model's name: the directory a config.json is in (as the Hub names
  // the model), or the file's stem.
  std::string path = file->getBufferIdentifier().str();
  StringRef parent = llvm::sys::path::parent_path(path);
  if (llvm::sys::path::filename(path) == "config.json" && !parent.empty())
    config->name = llvm::sys::path::filename(parent).str();
  else
    config->name = llvm::sys::path::stem(path).str();
  return std::make_unique<HuggingFaceSource>(context, std::move(*config), path,
                                             options);
}

std::unique_ptr<ModelSource>
vram::createTorchExportSource(MLIRContext *context,
                              std::unique_ptr<llvm::MemoryBuffer> file,
                              TorchExportSourceOptions options) {
  return std::make_unique<TorchExportSource>(context, std::move(file),
                                             std::move(options));
}

std::unique_ptr<ModelSource>
vram::createOnnxSource(MLIRContext *context,
                       std::unique_ptr<llvm::MemoryBuffer> file,
                       OnnxSourceOptions options) {
#ifdef VRAM_ENABLE_ONNX
  return std::make_unique<OnnxSource>(context, std::move(file),
                                      std::move(options));
#else
  return nullptr;
#endif
}

llvm::Expected<std::unique_ptr<ModelSource>>
vram::createCxxSource(MLIRContext *context, CxxModelOptions options) {
#ifdef VRAM_ENABLE_CXX
  // The module sits at a fixed place relative to the executable, in the
  // build tree as after `cmake --install`. It stays loaded: the sources it
  // makes hold its code.
  static CreateCxxSourceFn create = nullptr;
  static std::string loadError;
  if (!create && loadError.empty()) {
    std::string executable = llvm::sys::fs::getMainExecutable(
        nullptr, reinterpret_cast<void *>(&vram::createCxxSource));
    llvm::SmallString<256> path(llvm::sys::path::parent_path(executable));
    llvm::sys::path::append(path, VRAM_CXX_FRONTEND_RELATIVE_PATH);
    llvm::sys::path::remove_dots(path, /*remove_dot_dot=*/true);
    // RTLD_NOW: a symbol the executable does not provide is an error here,
    // not a crash at its first call.
    if (void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      if (auto entry = reinterpret_cast<CreateCxxSourceFn (*)()>(
              dlsym(handle, kCxxFrontendEntry)))
        create = entry();
      else
        loadError = path.str().str() + " has no " + kCxxFrontendEntry;
    } else {
      loadError = dlerror();
    }
  }
  if (!create)
    return makeUsageError("the C++ front end could not be loaded: " +
                          loadError);
  return create(context, std::move(options));
#else
  return makeUsageError("this vram-opt was built without the C++ front end");
#endif
}
