//===- ModelSource.h - one interface for every front end --------*- C++ -*-===//
//
// A model the pipeline can build at any batch size: a built-in zoo model, an
// ONNX graph or a torch.export program with a symbolic batch dimension, a
// Hugging Face config, a LibTorch C++ module, or an
// already parsed .mlir module (which cannot be rebuilt). The budget
// suggestions and --fit-batch ask the source for the model again at other
// batch sizes; nothing else in the pipeline knows which front end it is.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_PIPELINE_MODELSOURCE_H
#define VRAM_PIPELINE_MODELSOURCE_H

#include "vram/Dialect/NN/NNDialect.h"
#include "vram/Report/Report.h"
#include "vram/Support/Findings.h"
#include "vram/Zoo/Zoo.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace vram {

/// A parameter's value held by the model file (an ONNX initializer), for
/// running the step (--validate): NumPy's dtype string, shape and bytes.
struct ParameterValue {
  std::string descr;
  std::vector<int64_t> shape;
  std::vector<char> bytes;
};

class ModelSource {
public:
  virtual ~ModelSource();

  /// The model's name in reports (overridden by the module's nn.model).
  virtual llvm::StringRef getName() const = 0;
  /// What was analyzed, for locations without a file ("zoo:resnet50", the
  /// file's path).
  virtual llvm::StringRef getInputPath() const = 0;

  /// The context the source builds its modules in.
  virtual mlir::MLIRContext *getContext() const = 0;

  /// The forward model at `batch`, or at the source's own batch when none.
  /// Errors: a UsageError when the options cannot apply to this model, a
  /// DiagnosedError after MLIR diagnostics. Warnings of the model at its own
  /// batch are recorded as findings (getFindings).
  virtual llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
  build(std::optional<int64_t> batch) = 0;

  /// Whether build() binds another batch size (the fit search and the
  /// budget suggestions need it).
  virtual bool canRebuild() const { return true; }

  /// Whether the source has a sequence length to bind (--seq: a zoo or
  /// Hugging Face language model, an ONNX graph or torch.export program
  /// with token-id inputs); the context search needs it.
  virtual bool canVarySequence() const { return false; }
  /// Builds at `seq` tokens from now on, as --seq would.
  virtual void setSequenceLength(int64_t seq) {}
  /// Builds one rank's model of `ranks` tensor-parallel ranks from now on
  /// (1: the whole model). Only front ends that build the layers can split
  /// them (zoo and Hugging Face decoders); the others keep the whole model,
  /// which vram-parallel then refuses to run as one rank's. `lmHead`:
  /// lm_head is split too (transformers' plan); `embedding`: the token
  /// embedding is split over the vocabulary too (--tp-plan=vocab);
  /// `sequence`: sequence parallelism between the tensor-parallel regions
  /// (--parallel=tp=N,sp). The pipeline sets them from its options
  /// (vram::syncModelSource).
  virtual void setTensorParallel(int64_t ranks, bool lmHead, bool embedding,
                                 bool sequence) {}
  /// Whether a training forward runs with transformers' use_cache (the
  /// Hugging Face decoders; the others have no cache). Set by
  /// vram::syncModelSource.
  virtual void setTrainingCache(bool useCache) {}
  /// Liger-Kernel's kernels in the decoder's layers (zoo and Hugging Face
  /// decoders; building another model with them fails). Set by
  /// vram::syncModelSource.
  virtual void setLiger(const zoo::LigerKernels &liger) {}
  /// Whether the model has transformers' training cache to turn on (a
  /// Hugging Face decoder; an encoder has none).
  virtual bool hasTrainingCache() const { return false; }

  /// The front end's warnings about the model at its own batch, each with
  /// the rule it was tagged with (vram/Support/Findings.h).
  llvm::ArrayRef<ImportFinding> getFindings() const { return findings; }

  /// Parameter values the model file holds (ONNX initializers), by name.
  virtual llvm::Error
  readParameterValues(llvm::StringMap<ParameterValue> &values) {
    return llvm::Error::success();
  }

protected:
  std::vector<ImportFinding> findings;
};

/// While alive, records the warnings emitted in `context` as findings and
/// lets them go on to be printed (a source's build() at its own batch).
class RecordFindings {
public:
  RecordFindings(mlir::MLIRContext *context,
                 std::vector<ImportFinding> &findings)
      : handler(context, [&findings](mlir::Diagnostic &d) {
          if (d.getSeverity() == mlir::DiagnosticSeverity::Warning)
            findings.push_back({getFindingRule(d).value_or("").str(), d.str(),
                                d.getLocation()});
          return mlir::failure();
        }) {}

private:
  mlir::ScopedDiagnosticHandler handler;
};

/// A built-in model (vram/Zoo/Zoo.h) with the given shape options (unset:
/// the model's defaults).
struct ZooSourceOptions {
  std::string name;
  std::optional<int64_t> batch, imageSize, seq, numClasses;
  nn::TorchTarget target;
  nn::AttentionImplementation attention = nn::AttentionImplementation::Sdpa;
  /// --mode=generate: tokens generated after the `seq`-token prompt.
  int64_t maxNewTokens = 0;
  /// --cache-implementation=static: transformers' StaticCache.
  bool staticCache = false;
  /// --cache-implementation=paged: vLLM's blocks of --kv-block-size.
  int64_t kvBlockSize = 0;
  /// --num-beams: beam search (1: none).
  int64_t numBeams = 1;
  /// --do-sample and its warpers (ZooOptions::sampling).
  zoo::Sampling sampling;
  /// --parallel=tp=N: one rank's model of N tensor-parallel ranks.
  int64_t tensorParallel = 1;
  /// --tp-plan=transformers: lm_head column-parallel too
  /// (zoo::ZooOptions::tensorParallelLmHead).
  bool tensorParallelLmHead = true;
  /// --tp-plan=vocab: the embedding row-parallel over the vocabulary
  /// (zoo::ZooOptions::tensorParallelEmbedding).
  bool tensorParallelEmbedding = false;
  /// --parallel=tp=N,sp (zoo::ZooOptions::sequenceParallel).
  bool sequenceParallel = false;
  /// --tokens: one packed row of `seq` tokens (ZooOptions::packed).
  bool packed = false;
  /// --padded: padded rows with their attention_mask (ZooOptions::padded).
  bool padded = false;
  /// --liger: Liger-Kernel's kernels (ZooOptions::liger); set by
  /// vram::syncModelSource.
  zoo::LigerKernels liger;
};
/// Fails (a UsageError) for an unknown model name, on its first build.
std::unique_ptr<ModelSource> createZooSource(mlir::MLIRContext *context,
                                             ZooSourceOptions options);

/// A model built from a Hugging Face config.json (vram/Import/HuggingFace.h)
/// at --batch and --seq (default: 2048, or the model's learned positions if
/// fewer).
struct HuggingFaceSourceOptions {
  std::optional<int64_t> batch, seq;
  /// --decoder-seq: an encoder-decoder model's decoder tokens.
  std::optional<int64_t> decoderSeq;
  nn::TorchTarget target;
  nn::AttentionImplementation attention = nn::AttentionImplementation::Sdpa;
  /// --mode=generate: tokens generated after the `seq`-token prompt.
  int64_t maxNewTokens = 0;
  /// --cache-implementation=static: transformers' StaticCache.
  bool staticCache = false;
  /// --cache-implementation=paged: vLLM's blocks of --kv-block-size.
  int64_t kvBlockSize = 0;
  /// --num-beams: beam search (1: none).
  int64_t numBeams = 1;
  /// --do-sample and its warpers (ZooOptions::sampling).
  zoo::Sampling sampling;
  /// --parallel=tp=N: one rank's model of N tensor-parallel ranks.
  int64_t tensorParallel = 1;
  /// --tp-plan=transformers: lm_head column-parallel too
  /// (zoo::ZooOptions::tensorParallelLmHead).
  bool tensorParallelLmHead = true;
  /// --tp-plan=vocab: the embedding row-parallel over the vocabulary
  /// (zoo::ZooOptions::tensorParallelEmbedding).
  bool tensorParallelEmbedding = false;
  /// --parallel=tp=N,sp (zoo::ZooOptions::sequenceParallel).
  bool sequenceParallel = false;
  /// --tokens: one packed row of `seq` tokens (ZooOptions::packed).
  bool packed = false;
  /// --padded: padded rows with their attention_mask (ZooOptions::padded).
  bool padded = false;
  /// --liger: Liger-Kernel's kernels (ZooOptions::liger); set by
  /// vram::syncModelSource.
  zoo::LigerKernels liger;
  /// A training forward with use_cache (unless the config says false);
  /// vram::syncModelSource sets it from the pipeline's options.
  bool useCache = false;
};
/// Reads the config once: a DiagnosedError, located in the file, when it is
/// malformed or names a model that cannot be built.
llvm::Expected<std::unique_ptr<ModelSource>>
createHuggingFaceSource(mlir::MLIRContext *context,
                        std::unique_ptr<llvm::MemoryBuffer> config,
                        HuggingFaceSourceOptions options);

/// A module parsed by the caller (.mlir input): built once, at its own
/// batch.
std::unique_ptr<ModelSource>
createModuleSource(mlir::OwningOpRef<mlir::ModuleOp> module, std::string name,
                   std::string inputPath);

/// An ONNX ModelProto's graph: --batch, --seq and --dim bind its symbolic
/// dimensions; a --dim the graph lacks is a usage error, and so is another
/// batch for a graph whose batch is static.
struct OnnxSourceOptions {
  std::optional<int64_t> batch, seq;
  llvm::StringMap<int64_t> dims;
  std::vector<std::string> bufferPatterns;
};
/// Null when this vram-opt was built without the ONNX importer.
std::unique_ptr<ModelSource>
createOnnxSource(mlir::MLIRContext *context,
                 std::unique_ptr<llvm::MemoryBuffer> file,
                 OnnxSourceOptions options);

/// A torch.export archive (vram/Import/TorchExport.h): --batch binds the
/// symbolic size of dimension 0 of its inputs, --seq dimension 1 of integer
/// (token id) inputs, --dim the symbols by name; a --dim for a symbol the
/// inputs lack is a usage error, and so is another batch for a program
/// exported with a static batch.
struct TorchExportSourceOptions {
  std::optional<int64_t> batch, seq;
  llvm::StringMap<int64_t> dims;
  nn::TorchTarget target;
};
std::unique_ptr<ModelSource>
createTorchExportSource(mlir::MLIRContext *context,
                        std::unique_ptr<llvm::MemoryBuffer> file,
                        TorchExportSourceOptions options);

/// A LibTorch module defined in a C++ source: the translation unit is parsed
/// once (by createCxxSource; a DiagnosedError when it does not parse), the
/// module extracted at each batch.
struct CxxModelOptions {
  std::string sourceFile;
  std::vector<std::string> compileFlags;
  std::string compileCommands;
  std::string moduleName;
  /// forward()'s tensor inputs ("8x3x224x224", "8x128:i64").
  std::vector<std::string> inputs;
  std::vector<std::string> constructorArgs;
  std::optional<int64_t> batch;
  bool training = true;
};
/// A UsageError for a malformed input shape or a vram-opt built without the
/// C++ front end. The front end (Clang and the LibTorch importer) is a module
/// loaded on first use, so that runs without a C++ input do not load
/// libclang-cpp (vram/Pipeline/CxxFrontend.h); an error when it cannot be
/// loaded.
llvm::Expected<std::unique_ptr<ModelSource>>
createCxxSource(mlir::MLIRContext *context, CxxModelOptions options);

} // namespace vram

#endif // VRAM_PIPELINE_MODELSOURCE_H
