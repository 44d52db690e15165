//===- GpuRunner.h - run a built step on an NVIDIA GPU, measured -*- C++
//-*-===//
//
// `--validate=gpu`: the step is lowered as for the CPU (vram-lower-to-tensor
// with op markers, one-shot bufferization, vram-free-after-last-use), then
// vram-lower-to-gpu (kernels as PTX or a cubin for --gpu-arch), JIT-compiled
// with MLIR's ExecutionEngine and run once. The host code's allocation
// functions are bound to a CachingDeviceAllocator (PyTorch's caching
// allocator's decisions, segments from cuMemAlloc) and its mgpu* calls to
// CudaRuntime (the driver API through dlopen). Measured allocated and
// reserved bytes, op by op, are compared with the CudaCachingAllocator model
// over the memory analysis's events.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_EXECUTION_GPURUNNER_H
#define VRAM_EXECUTION_GPURUNNER_H

#include "vram/Execution/CpuRunner.h"
#include "vram/Execution/GpuLowering.h"

#include <optional>
#include <string>

namespace vram {

struct GpuValidationOptions {
  /// Inputs, initial values and hyperparameters, as for the CPU (the
  /// allocation mode must be PyTorch's; --dump is not supported).
  CpuValidationOptions step;
  /// --gpu-arch and the kernel format.
  GpuLoweringOptions lowering;
  int deviceOrdinal = 0;
  /// The CUDA context the device model predicts (DeviceModel).
  int64_t predictedContextBytes = 0;
  /// The FLOP convention of the achieved FLOP/s.
  nn::FlopConvention flopConvention = nn::FlopConvention::Flops;
};

struct GpuValidationResult {
  std::string deviceName, arch;
  int64_t measuredAllocatedBytes = 0, predictedAllocatedBytes = 0;
  int64_t measuredReservedBytes = 0, predictedReservedBytes = 0;
  /// reserved + context (the device model) against NVML's process memory.
  int64_t predictedDeviceBytes = 0;
  std::optional<int64_t> measuredDeviceBytes;
  /// cuMemGetInfo: used bytes (all processes) when the runtime opened and
  /// the most seen during the step.
  std::optional<int64_t> deviceUsedBeforeBytes, deviceUsedPeakBytes;
  int64_t allocations = 0;
  unsigned kernels = 0, launches = 0;
  std::optional<double> loss;
  /// CUDA events around the step on its stream, and the host's wall time.
  double stepMs = 0, wallSeconds = 0;
  /// The FLOP analysis's total and total / step time.
  int64_t flops = 0;
  double achievedFlopsPerSecond = 0;
  /// The first op whose measured allocated bytes differ from the model's.
  std::optional<unsigned> firstMismatchOp;
  std::string firstMismatchOpName;
  int64_t mismatchMeasured = 0, mismatchPredicted = 0;
};

/// Runs `module`'s `@step` once on the GPU. Errors in the model, the
/// lowering or the JIT are located errors (failure, `noDevice` empty). When
/// the step lowered and JIT-compiled but no CUDA device can be used (no
/// libcuda, cuInit failing, zero devices), fails with the reason in
/// `noDevice` and no diagnostic.
mlir::FailureOr<GpuValidationResult>
validateOnGpu(mlir::ModuleOp module, const GpuValidationOptions &options,
              std::string &noDevice);

} // namespace vram

#endif // VRAM_EXECUTION_GPURUNNER_H
