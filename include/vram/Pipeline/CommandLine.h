//===- CommandLine.h - vram-opt's flags as pipeline options -----*- C++ -*-===//
//
// The flags of vram-opt (model, step, scenario, output, validation, lint),
// registered by the library as MLIR registers its pass manager flags, and
// read into RunOptions and a ModelSource. Each choice takes its accepted
// values from one declaration: the dialect's enums (NNAttributes.td).
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_PIPELINE_COMMANDLINE_H
#define VRAM_PIPELINE_COMMANDLINE_H

#include "vram/Pipeline/Run.h"

#include "llvm/Support/CommandLine.h"

namespace vram {

/// Registers the flags (before cl::ParseCommandLineOptions).
void registerVramOptCLOptions();
/// Their categories, for --help.
llvm::SmallVector<const llvm::cl::OptionCategory *> getVramOptCLCategories();

/// What the flags say the input is: the model file `inputFilename` (when
/// `inputGiven`) or a zoo model.
enum class ModelKind {
  ZooList,
  Zoo,
  HuggingFace,
  Mlir,
  Onnx,
  TorchExport,
  Cxx
};
ModelKind getModelKind(llvm::StringRef inputFilename);
/// The config.json that --hf names (its directory's config.json for a
/// directory).
std::string getHuggingFaceConfigPath();
/// What is analyzed, as messages name it: "zoo:NAME" or the file.
std::string getInputPath(llvm::StringRef inputFilename);

/// Reads the flags into RunOptions, checking that they apply to the input
/// (a UsageError otherwise). `printsIR`: a pass pipeline or a diagnostics
/// test, which print IR unless a format is asked for. The user's passes
/// (pipeline.userPasses) are the caller's to set.
llvm::Expected<RunOptions>
getRunOptionsFromCommandLine(llvm::StringRef inputFilename, bool inputGiven,
                             llvm::ArrayRef<std::string> cxxFlags,
                             bool printsIR);

/// The model source the flags describe for a zoo, ONNX or C++ input (`file`
/// holds the input's bytes, null for a zoo model).
llvm::Expected<std::unique_ptr<ModelSource>>
createModelSourceFromCommandLine(mlir::MLIRContext *context, ModelKind kind,
                                 llvm::StringRef inputFilename,
                                 std::unique_ptr<llvm::MemoryBuffer> file,
                                 llvm::ArrayRef<std::string> cxxFlags);

/// --fit-batch, --list-cuda-devices, --zoo=list.
bool isFitBatchRequested();
/// Whether --fit-context asks for the longest sequence instead of a report.
bool isFitContextRequested();
bool isCudaDeviceListRequested();

} // namespace vram

#endif // VRAM_PIPELINE_COMMANDLINE_H
