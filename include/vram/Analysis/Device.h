//===- Device.h - what a GPU shows beyond the allocator --------*- C++ -*-===//
//
// nvidia-smi shows more than torch.cuda.max_memory_reserved: the CUDA
// context, and memory libraries take through the caching allocator (the
// cuBLAS and cuBLASLt workspaces, held for the process's life). The device
// model adds them to the caching allocator's simulation (docs/Device.md).
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_ANALYSIS_DEVICE_H
#define VRAM_ANALYSIS_DEVICE_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace vram {

/// A GPU --gpu names: its memory as nvidia-smi reports it and its compute
/// capability (which sizes the cuBLAS workspace).
struct GpuSpec {
  llvm::StringRef name;
  llvm::StringRef description;
  int64_t capacityBytes;
  unsigned computeCapability; ///< 90 for sm_90
  /// Streaming multiprocessors (multi_processor_count).
  unsigned multiprocessors;
};

llvm::ArrayRef<GpuSpec> getGpuSpecs();
/// The spec named `name`, or null.
const GpuSpec *lookupGpu(llvm::StringRef name);

/// What the driver and libraries hold outside the caching allocator (the
/// CUDA context, loaded kernels, library handles): 762 MiB with lazy module
/// loading (CUDA >= 11.7, the default from 12.2), the most measured on an
/// H200 (torch 2.11.0+cu130, driver 580.159.04: NVML's process memory minus
/// max_memory_reserved() was 742 to 762 MiB over 18 training and generation
/// steps, benchmarks/accuracy/results/2026-12-04-nvidia-h200.md and
/// llm-gpu-torch-2.11.0-transformers-5.17.0-h200.json); 1 GiB without
/// (reference/pytorch.md's upper end, not measured here).
int64_t getDefaultContextBytes(bool lazyLoading);

/// The cuBLAS workspace per (handle, stream), taken through the caching
/// allocator (aten/src/ATen/cuda/CublasHandlePool.cpp): 32 MiB on sm_90 and
/// later (torch 2.0 to 2.11: exactly sm_90), else 4096 KiB x 2 + 16 KiB x 8
/// = 8,519,680 bytes.
int64_t getCublasWorkspaceBytes(unsigned computeCapability);
/// cuBLASLt's workspace (CUBLASLT_WORKSPACE_SIZE, default 1 MiB).
constexpr int64_t kCublasLtWorkspaceBytes = 1 << 20;

/// The device a CUDA step runs on.
struct DeviceModel {
  std::string gpu = "generic"; ///< the --gpu name, "generic" when none
  int64_t capacityBytes = 0;   ///< 0 when no GPU was named
  unsigned computeCapability = 80;
  /// Streaming multiprocessors: an A100's 108 for the generic sm_80 GPU.
  unsigned multiprocessors = 108;
  int64_t contextBytes = getDefaultContextBytes(/*lazyLoading=*/true);
  bool lazyLoading = true;
};

/// The model of `gpu` (null: a generic sm_80 GPU of unknown capacity).
DeviceModel makeDeviceModel(const GpuSpec *gpu, bool lazyLoading);

/// A workspace a library takes through the caching allocator and keeps for
/// the process's life: `bytes`, first taken while `firstUser` runs.
struct LibraryWorkspace {
  int64_t bytes = 0;
  mlir::Operation *firstUser = nullptr;
};

/// The workspaces libraries take for `step` (torch 1.13 to 2.14; 2.15 no
/// longer caches them by default, not modelled): a cuBLAS workspace for the
/// thread that runs forward, from its first op with nn::CublasOpTrait;
/// another for the autograd thread, from the first backward node of such an
/// op (measured on an H200 with torch 2.11: a bf16 LLaMA training step
/// holds 64 MiB of them, generation 32 MiB); cuBLASLt's from the first
/// linear with a bias (its addmm runs cuBLASLt's bias epilogue).
llvm::SmallVector<LibraryWorkspace>
getLibraryWorkspaces(mlir::Operation *step, const DeviceModel &device);

} // namespace vram

#endif // VRAM_ANALYSIS_DEVICE_H
