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
};

llvm::ArrayRef<GpuSpec> getGpuSpecs();
/// The spec named `name`, or null.
const GpuSpec *lookupGpu(llvm::StringRef name);

/// The CUDA context's device memory: 400 MiB with lazy module loading
/// (CUDA >= 11.7, the default from 12.2), 1 GiB without (the upper ends of
/// the ranges in reference/pytorch.md, so that a budget errs on the safe
/// side). Not measured here.
int64_t getDefaultContextBytes(bool lazyLoading);

/// The cuBLAS workspace per (handle, stream), taken through the caching
/// allocator (aten/src/ATen/cuda/CublasHandlePool.cpp): 32 MiB on sm_90 and
/// later, else 4096 KiB x 2 + 16 KiB x 8 = 8,519,680 bytes.
int64_t getCublasWorkspaceBytes(unsigned computeCapability);
/// cuBLASLt's workspace (CUBLASLT_WORKSPACE_SIZE, default 1 MiB).
constexpr int64_t kCublasLtWorkspaceBytes = 1 << 20;

/// The device a CUDA step runs on.
struct DeviceModel {
  std::string gpu = "generic"; ///< the --gpu name, "generic" when none
  int64_t capacityBytes = 0;   ///< 0 when no GPU was named
  unsigned computeCapability = 80;
  int64_t contextBytes = getDefaultContextBytes(/*lazyLoading=*/true);
  bool lazyLoading = true;
};

/// The model of `gpu` (null: a generic sm_80 GPU of unknown capacity).
DeviceModel makeDeviceModel(const GpuSpec *gpu, bool lazyLoading);

/// Allocations libraries make through the caching allocator for `step`,
/// held from their first use for the process's life: the cuBLAS and
/// cuBLASLt workspaces when the step calls cuBLAS (an op with
/// nn::CublasOpTrait).
llvm::SmallVector<int64_t> getLibraryAllocations(mlir::Operation *step,
                                                 const DeviceModel &device);

} // namespace vram

#endif // VRAM_ANALYSIS_DEVICE_H
