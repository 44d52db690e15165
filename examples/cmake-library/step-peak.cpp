//===- step-peak.cpp - vram-opt's analysis as a C++ library ---------------===//
//
// Builds a built-in model, makes its training step (Adam, fp32, batch 1)
// with the pipeline library and prints the step's parameters and peak
// memory, as `vram-opt --zoo=NAME` reports them.
//
//===----------------------------------------------------------------------===//

#include "vram/Analysis/StepInfo.h"
#include "vram/Analysis/StepMemory.h"
#include "vram/Dialect/NN/NNDialect.h"
#include "vram/Pipeline/Pipeline.h"
#include "vram/Zoo/Zoo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  const char *name = argc > 1 ? argv[1] : "tiny_cnn";
  mlir::MLIRContext context;
  context.loadDialect<vram::nn::NNDialect, mlir::func::FuncDialect>();

  auto module = vram::zoo::buildModel(&context, name, vram::zoo::ZooOptions());
  if (!module) {
    llvm::errs() << llvm::toString(module.takeError()) << "\n";
    return 2;
  }
  vram::PipelineOptions options;
  if (llvm::Error error = vram::runPipeline(**module, options)) {
    llvm::consumeError(std::move(error)); // diagnosed on stderr
    return 1;
  }
  std::unique_ptr<vram::StepMemory> memory =
      vram::computeStepMemory(**module, options);
  auto step = (*module)->lookupSymbol<mlir::func::FuncOp>("step");
  mlir::FailureOr<vram::ParameterSummary> parameters =
      vram::summarizeParameters(step);
  if (!memory || failed(parameters))
    return 1;
  llvm::outs() << name << ": " << parameters->count << " parameters, peak "
               << memory->getAnalysis().getPeakBytes() << " bytes\n";
  return 0;
}
