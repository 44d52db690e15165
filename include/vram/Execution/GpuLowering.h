//===- GpuLowering.h - the bufferized step to an NVIDIA GPU -----*- C++ -*-===//
//
// The GPU half of validation by execution: the bufferized step (linalg on
// memrefs, freed as PyTorch frees) becomes host code that allocates through
// the generic allocation functions, launches one kernel per parallel loop
// nest, and carries the kernels as a `gpu.binary` (PTX for the driver's JIT,
// or a cubin assembled by the toolkit's ptxas).
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_EXECUTION_GPULOWERING_H
#define VRAM_EXECUTION_GPULOWERING_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <string>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace vram {

struct GpuLoweringOptions {
  /// The target architecture (--gpu-arch), e.g. sm_90 for H100 and H200.
  std::string chip = "sm_90";
  /// PTX ISA version and other NVPTX features; sm_90 needs PTX 7.8 or later.
  std::string features = "+ptx80";
  /// gpu-module-to-binary's format: "isa" (PTX, compiled by the driver at
  /// load time: no toolkit needed) or "bin" (a cubin, through ptxas).
  std::string format = "isa";
  unsigned optLevel = 3;
  /// Threads per block (vram-gpu-thread-blocks).
  int64_t blockSize = 256;
  /// The CUDA toolkit whose libdevice the kernels link (their math:
  /// __nv_expf, __nv_sqrtf, ...) and whose ptxas makes cubins; empty:
  /// getCudaToolkitPath().
  std::string toolkitPath;
};

/// CUDA_ROOT, CUDA_HOME or CUDA_PATH when set, else the toolkit found at
/// configure time (/usr/local/cuda).
std::string getCudaToolkitPath();

/// Fails, at the kernel module, when a PTX kernel calls a function nothing
/// defines (the driver would refuse to load it): libdevice was not found.
mlir::LogicalResult verifyKernelsLinked(mlir::ModuleOp module,
                                        llvm::StringRef toolkitPath);

/// Adds the first half of the lowering: the bufferized step's linalg ops as
/// `gpu.launch` ops, one per parallel loop nest, in 1-D blocks of
/// `blockSize` threads (serial code in one-thread launches). The GPU
/// lowering continues from here to kernels; `--validate=gpu-emulated` runs
/// these launches on the host (vram-gpu-launch-to-loops).
void buildGpuLaunchesPipeline(mlir::OpPassManager &pm, int64_t blockSize);

/// Adds the lowering of a bufferized step to host LLVM IR plus GPU kernels.
void buildLowerToGpuPipeline(mlir::OpPassManager &pm,
                             const GpuLoweringOptions &options);

/// Registers the pipeline as `vram-lower-to-gpu{chip= features= format= O= block-size=}`.
void registerLowerToGpuPipeline();

/// The `sm_XY` name of compute capability `major.minor`.
std::string smArchitecture(int major, int minor);

/// Registers the GPU, NVVM and SCF dialects, the NVVM target and the GPU
/// translations the pipeline needs.
void registerGpuLoweringDialects(mlir::DialectRegistry &registry);

} // namespace vram

#endif // VRAM_EXECUTION_GPULOWERING_H
