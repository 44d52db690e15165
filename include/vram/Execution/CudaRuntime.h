//===- CudaRuntime.h - the CUDA driver API, loaded at run time --*- C++ -*-===//
//
// What the GPU lowering's host code calls (the `mgpu*` entry points of
// MLIR's gpu-to-llvm and of the gpu.binary translation: module load and
// unload, kernel lookup and launch, streams, events, memory), implemented
// over the CUDA driver API. libcuda is opened with dlopen and every cu*
// function is looked up with dlsym, so vram-opt builds, links and runs on a
// machine with the CUDA toolkit but no GPU and no driver: there, opening the
// runtime fails with the reason ("libcuda.so.1: cannot open shared object
// file", "cuInit: CUDA_ERROR_NO_DEVICE", "no device"), never a crash. NVML
// (libnvidia-ml.so.1, also dlopen'ed, optional) gives the process's device
// memory as nvidia-smi shows it.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_EXECUTION_CUDARUNTIME_H
#define VRAM_EXECUTION_CUDARUNTIME_H

#include "vram/Execution/DeviceAllocator.h"

#include "llvm/ADT/FunctionExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace vram {

struct CudaDeviceInfo {
  int ordinal = 0;
  std::string name;
  int major = 0, minor = 0; ///< compute capability
  int64_t totalBytes = 0;
  int driverVersion = 0; ///< e.g. 13000
};

/// Opens the driver and lists its devices. An error (with the reason) when
/// libcuda cannot be loaded, lacks a function, cuInit fails, or there is no
/// device.
llvm::Expected<std::vector<CudaDeviceInfo>> listCudaDevices();

/// One device's primary context, one stream, and the caching allocator's
/// segments. At most one runtime is active (bound to the mgpu* entry points)
/// at a time.
class CudaRuntime final : public SegmentBacking {
public:
  static llvm::Expected<std::unique_ptr<CudaRuntime>> open(int ordinal = 0);
  ~CudaRuntime() override;

  const CudaDeviceInfo &getDevice() const { return device; }

  /// cuMemGetInfo's total - free: the device's used bytes, all processes.
  std::optional<int64_t> getDeviceUsedBytes();
  /// NVML's used memory of this process on the device (nvidia-smi's figure),
  /// when libnvidia-ml is present.
  std::optional<int64_t> getProcessDeviceBytes();

  // SegmentBacking: cuMemAlloc / cuMemFree.
  void *allocateSegment(int64_t bytes) override;
  void releaseSegment(void *base, int64_t bytes) override;

  bool copyToDevice(void *device, const void *host, size_t bytes);
  bool copyToHost(void *host, const void *device, size_t bytes);
  bool synchronize();

  /// CUDA events on the runtime's stream around the step.
  bool recordStart();
  /// Milliseconds since recordStart, after the stream drained.
  std::optional<double> recordStopMs();

  /// The first driver error since open (call and CUresult name), "" if none.
  const std::string &getError() const { return error; }
  bool hasError() const { return !error.empty(); }

  /// Binds the mgpu* entry points (and, when given, the allocation functions
  /// of mgpuMemAlloc / mgpuMemFree) to this runtime.
  void activate(CachingDeviceAllocator *allocator);
  void deactivate();

  /// Kernel modules loaded through mgpuModuleLoad*.
  unsigned getNumModulesLoaded() const { return modulesLoaded; }
  unsigned getNumLaunches() const { return launches; }

  /// Calls `add(name, address)` for every mgpu* entry point.
  static void
  forEachEntryPoint(llvm::function_ref<void(llvm::StringRef, void *)> add);

  // Used by the entry points.
  struct Driver;
  Driver &getDriver() { return *driver; }
  /// Records the first failing call; true when `result` is CUDA_SUCCESS.
  bool check(int result, const char *call);
  void *getStream() const { return stream; }
  CachingDeviceAllocator *getAllocator() const { return allocator; }
  unsigned modulesLoaded = 0, launches = 0;

private:
  CudaRuntime();
  std::unique_ptr<Driver> driver;
  CudaDeviceInfo device;
  void *context = nullptr;
  void *stream = nullptr;
  void *startEvent = nullptr, *stopEvent = nullptr;
  CachingDeviceAllocator *allocator = nullptr;
  std::string error;
};

} // namespace vram

#endif // VRAM_EXECUTION_CUDARUNTIME_H
