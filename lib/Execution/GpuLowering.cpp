//===- GpuLowering.cpp - the bufferized step to an NVIDIA GPU -------------===//
//
// Upstream passes only, in the order upstream's gpu-lower-to-nvvm-pipeline
// uses, with two differences: the step's allocations keep going through the
// generic allocation functions (the runner binds them to its device
// allocator), and serial code is offloaded first so that the host never
// touches device memory.
//
//===----------------------------------------------------------------------===//

#include "vram/Execution/GpuLowering.h"
#include "vram/Execution/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/GPUCommon/GPUCommonPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/SCFToGPU/SCFToGPUPass.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

void vram::buildGpuLaunchesPipeline(OpPassManager &pm, int64_t blockSize) {
  // Loops: the parallel dimensions of a nest become one thread each, in
  // 1-D blocks of `blockSize` threads; the rest (reductions) loops inside
  // each thread.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(createOffloadSerialCode());
  pm.addNestedPass<func::FuncOp>(
      createGpuThreadBlocks(GpuThreadBlocksOptions{blockSize}));
  pm.addNestedPass<func::FuncOp>(createGpuMapParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(createConvertParallelLoopToGpuPass());
}

void vram::buildLowerToGpuPipeline(OpPassManager &pm,
                                   const GpuLoweringOptions &options) {
  // Kernels cannot address the host's stack.
  pm.addPass(createDeviceScratch());
  buildGpuLaunchesPipeline(pm, options.blockSize);
  pm.addPass(createLowerAffinePass());
  pm.addPass(createGpuKernelOutliningPass());
  // One module, one function per distinct kernel: one compilation, one
  // ptxas run, one module load.
  pm.addPass(createMergeKernelModules());
  // Views (memref.reinterpret_cast, subview, expand/collapse_shape) become
  // plain descriptor arithmetic, in the host code and in the kernels, as in
  // upstream's gpu-lower-to-nvvm-pipeline.
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = options.optLevel;
  pm.addPass(createGpuNVVMAttachTarget(target));
  pm.addPass(createSCFToControlFlowPass());
  // Kernels.
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  // Host: allocations through the generic functions, before gpu-to-llvm
  // would lower them to malloc.
  FinalizeMemRefToLLVMConversionPassOptions memrefOptions;
  memrefOptions.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefOptions));
  // The step function's signature takes bare pointers (the runner's calling
  // convention), converted before gpu-to-llvm, which would otherwise convert
  // it with its own host convention. A launch then passes each memref as its
  // whole descriptor (allocated and aligned pointers, offset, sizes,
  // strides), as convert-gpu-to-nvvm declared the kernels' parameters: with
  // hostBarePtrCallConv, gpu-to-llvm passed bare pointers to kernels that
  // read descriptors, and the driver read parameters past the end of the
  // launch's array (CUDA_ERROR_INVALID_VALUE, or a crash, on an H200).
  ConvertFuncToLLVMPassOptions funcOptions;
  funcOptions.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcOptions));
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = options.format;
  binary.toolkitPath =
      options.toolkitPath.empty() ? getCudaToolkitPath() : options.toolkitPath;
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

namespace {
struct LowerToGpuPipelineOptions
    : PassPipelineOptions<LowerToGpuPipelineOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("Target architecture (sm_XY)"),
                           llvm::cl::init("sm_90")};
  Option<std::string> features{*this, "features",
                               llvm::cl::desc("NVPTX features (PTX version)"),
                               llvm::cl::init("+ptx80")};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("Kernel binary: isa (PTX) or bin (cubin, via ptxas)"),
      llvm::cl::init("isa")};
  Option<unsigned> optLevel{*this, "O", llvm::cl::desc("Kernel opt level"),
                            llvm::cl::init(3)};
  Option<int64_t> blockSize{*this, "block-size",
                            llvm::cl::desc("Threads per block"),
                            llvm::cl::init(256)};
  Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit (libdevice, ptxas); default: CUDA_HOME, "
                     "else the one found at configure time")};
};
} // namespace

void vram::registerLowerToGpuPipeline() {
  PassPipelineRegistration<LowerToGpuPipelineOptions>(
      "vram-lower-to-gpu",
      "Lowers a bufferized step to host LLVM IR that launches NVIDIA GPU "
      "kernels (gpu.binary), allocating through the generic allocation "
      "functions",
      [](OpPassManager &pm, const LowerToGpuPipelineOptions &o) {
        GpuLoweringOptions options;
        options.chip = o.chip;
        options.features = o.features;
        options.format = o.format;
        options.optLevel = o.optLevel;
        options.blockSize = o.blockSize;
        options.toolkitPath = o.toolkit;
        buildLowerToGpuPipeline(pm, options);
      });
}

std::string vram::getCudaToolkitPath() {
  // MLIR's own lookup reads these too, but has no default of its own.
  for (const char *variable : {"CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"})
    if (const char *dir = std::getenv(variable); dir && *dir)
      return dir;
#ifdef VRAM_CUDA_TOOLKIT_DIR
  return VRAM_CUDA_TOOLKIT_DIR;
#else
  return "/usr/local/cuda";
#endif
}

LogicalResult vram::verifyKernelsLinked(ModuleOp module,
                                        StringRef toolkitPath) {
  WalkResult walk = module.walk([&](gpu::BinaryOp binary) {
    for (Attribute attr : binary.getObjects()) {
      auto object = dyn_cast<gpu::ObjectAttr>(attr);
      if (!object || object.getFormat() != gpu::CompilationTarget::Assembly)
        continue;
      // `.extern .func (.param .b32 r) __nv_sqrtf(...)`: a declaration
      // without a body.
      StringRef ptx = object.getObject().getValue();
      size_t at = ptx.find(".extern .func");
      if (at == StringRef::npos)
        continue;
      StringRef line =
          ptx.substr(at).take_until([](char c) { return c == '\n'; });
      StringRef name = line.drop_front(strlen(".extern .func"));
      if (name.ltrim().starts_with("("))
        name = name.ltrim()
                   .drop_until([](char c) { return c == ')'; })
                   .drop_front();
      name =
          name.ltrim().take_until([](char c) { return c == '(' || c == ' '; });
      binary.emitError() << "kernel module '" << binary.getSymName()
                         << "' calls '" << name
                         << "', which nothing defines: the driver would not "
                            "load it (libdevice was not found under '"
                         << toolkitPath
                         << "/nvvm/libdevice'; set CUDA_HOME to a CUDA "
                            "toolkit)";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

std::string vram::smArchitecture(int major, int minor) {
  return llvm::formatv("sm_{0}{1}", major, minor).str();
}

void vram::registerGpuLoweringDialects(DialectRegistry &registry) {
  registry.insert<gpu::GPUDialect, NVVM::NVVMDialect>();
  // convert-gpu-to-nvvm lowers a kernel's ops through each dialect's
  // ConvertToLLVMPatternInterface.
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  NVVM::registerConvertGpuToNVVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerGPUDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  // #gpu.select_object's embedding of the binary and its launches, for the
  // JIT (--validate=gpu) and any translation of the host code.
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
}
