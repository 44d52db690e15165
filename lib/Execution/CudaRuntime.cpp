//===- CudaRuntime.cpp - the CUDA driver API, loaded at run time ----------===//
//
// cuda.h supplies the types and prototypes only: nothing links libcuda. Each
// cu* function is looked up by the name cuda.h maps it to (cuMemAlloc ->
// cuMemAlloc_v2), so the pointers have the prototypes' exact types.
//
// The mgpu* entry points follow MLIR's CudaRuntimeWrappers.cpp (the ABI
// gpu-to-llvm and the gpu.binary translation emit in MLIR 22), with three
// differences: a failing call is recorded (the first one) instead of
// aborting, and later calls do nothing; every stream the host code creates
// is the runtime's one stream (PyTorch runs a step on one stream too), so
// the events around the step bracket every kernel; mgpuMemAlloc goes
// through the caching allocator like the step's other buffers.
//
//===----------------------------------------------------------------------===//

#include "vram/Execution/CudaRuntime.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cuda.h>
#include <dlfcn.h>
#include <unistd.h>

using namespace vram;

#define VRAM_STRINGIFY_IMPL(x) #x
#define VRAM_STRINGIFY(x) VRAM_STRINGIFY_IMPL(x)

// Every driver function used; the names expand to cuda.h's versioned ones.
#define VRAM_CUDA_FUNCTIONS(X)                                                 \
  X(cuInit)                                                                    \
  X(cuDriverGetVersion)                                                        \
  X(cuGetErrorName)                                                            \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetName)                                                           \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDeviceGetPCIBusId)                                                       \
  X(cuDeviceTotalMem)                                                          \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuDevicePrimaryCtxRelease)                                                 \
  X(cuCtxSetCurrent)                                                           \
  X(cuCtxSynchronize)                                                          \
  X(cuMemGetInfo)                                                              \
  X(cuMemAlloc)                                                                \
  X(cuMemFree)                                                                 \
  X(cuMemcpyHtoD)                                                              \
  X(cuMemcpyDtoH)                                                              \
  X(cuMemcpyAsync)                                                             \
  X(cuMemsetD32Async)                                                          \
  X(cuModuleLoadData)                                                          \
  X(cuModuleLoadDataEx)                                                        \
  X(cuModuleUnload)                                                            \
  X(cuModuleGetFunction)                                                       \
  X(cuLaunchKernel)                                                            \
  X(cuStreamCreate)                                                            \
  X(cuStreamSynchronize)                                                       \
  X(cuStreamDestroy)                                                           \
  X(cuStreamWaitEvent)                                                         \
  X(cuEventCreate)                                                             \
  X(cuEventRecord)                                                             \
  X(cuEventSynchronize)                                                        \
  X(cuEventDestroy)

struct CudaRuntime::Driver {
  void *library = nullptr;
  void *nvml = nullptr;
#define VRAM_DECLARE(name) decltype(&::name) name = nullptr;
  VRAM_CUDA_FUNCTIONS(VRAM_DECLARE)
#undef VRAM_DECLARE
  /// cuEventElapsedTime_v2 (CUDA 12.8+), else the original of the same type.
  decltype(&::cuEventElapsedTime) cuEventElapsedTime = nullptr;

  // NVML, declared here: the toolkit ships no nvml.h.
  struct NvmlProcessInfo { // nvmlProcessInfo_v2_t
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
  };
  int (*nvmlInit)() = nullptr;
  int (*nvmlDeviceGetHandleByPciBusId)(const char *, void **) = nullptr;
  int (*nvmlDeviceGetComputeRunningProcesses)(void *, unsigned int *,
                                              NvmlProcessInfo *) = nullptr;
  void *nvmlDevice = nullptr;

  ~Driver() {
    // libcuda stays loaded: the JIT-compiled code's destructors may still
    // call into it until the engine is gone.
  }

  std::string errorName(CUresult result) const {
    const char *name = nullptr;
    if (cuGetErrorName && cuGetErrorName(result, &name) == CUDA_SUCCESS && name)
      return name;
    return "CUresult " + std::to_string(static_cast<int>(result));
  }
};

namespace {
/// Loads libcuda and its functions, then cuInit(0).
llvm::Expected<std::unique_ptr<CudaRuntime::Driver>> loadDriver() {
  auto driver = std::make_unique<CudaRuntime::Driver>();
  driver->library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!driver->library) {
    const char *why = dlerror();
    return llvm::createStringError(why ? why : "cannot load libcuda.so.1");
  }
#define VRAM_LOAD(name)                                                        \
  driver->name = reinterpret_cast<decltype(driver->name)>(                     \
      dlsym(driver->library, VRAM_STRINGIFY(name)));                           \
  if (!driver->name)                                                           \
    return llvm::createStringError(                                            \
        "libcuda.so.1 has no " VRAM_STRINGIFY(name) " (a driver older than "   \
                                                    "the CUDA 13 headers)");
  VRAM_CUDA_FUNCTIONS(VRAM_LOAD)
#undef VRAM_LOAD
  driver->cuEventElapsedTime =
      reinterpret_cast<decltype(&::cuEventElapsedTime)>(
          dlsym(driver->library, VRAM_STRINGIFY(cuEventElapsedTime)));
  if (!driver->cuEventElapsedTime)
    driver->cuEventElapsedTime =
        reinterpret_cast<decltype(&::cuEventElapsedTime)>(
            dlsym(driver->library, "cuEventElapsedTime"));
  if (!driver->cuEventElapsedTime)
    return llvm::createStringError("libcuda.so.1 has no cuEventElapsedTime");
  if (CUresult r = driver->cuInit(0); r != CUDA_SUCCESS)
    return llvm::createStringError("cuInit: " + driver->errorName(r));
  int count = 0;
  if (CUresult r = driver->cuDeviceGetCount(&count); r != CUDA_SUCCESS)
    return llvm::createStringError("cuDeviceGetCount: " + driver->errorName(r));
  if (count == 0)
    return llvm::createStringError("the driver reports 0 devices");
  return std::move(driver);
}

llvm::Expected<CudaDeviceInfo> describe(CudaRuntime::Driver &d, int ordinal) {
  CudaDeviceInfo info;
  info.ordinal = ordinal;
  CUdevice dev;
  if (CUresult r = d.cuDeviceGet(&dev, ordinal); r != CUDA_SUCCESS)
    return llvm::createStringError(
        llvm::formatv("cuDeviceGet({0}): {1}", ordinal, d.errorName(r)).str());
  char name[256] = {};
  d.cuDeviceGetName(name, sizeof(name), dev);
  info.name = name;
  d.cuDeviceGetAttribute(&info.major,
                         CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  d.cuDeviceGetAttribute(&info.minor,
                         CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  size_t total = 0;
  d.cuDeviceTotalMem(&total, dev);
  info.totalBytes = static_cast<int64_t>(total);
  d.cuDriverGetVersion(&info.driverVersion);
  return info;
}

/// The runtime the mgpu* entry points use.
CudaRuntime *active = nullptr;
} // namespace

llvm::Expected<std::vector<CudaDeviceInfo>> vram::listCudaDevices() {
  auto driver = loadDriver();
  if (!driver)
    return driver.takeError();
  int count = 0;
  (*driver)->cuDeviceGetCount(&count);
  std::vector<CudaDeviceInfo> devices;
  for (int i = 0; i < count; ++i) {
    auto info = describe(**driver, i);
    if (!info)
      return info.takeError();
    devices.push_back(*info);
  }
  return devices;
}

CudaRuntime::CudaRuntime() = default;

llvm::Expected<std::unique_ptr<CudaRuntime>> CudaRuntime::open(int ordinal) {
  auto driver = loadDriver();
  if (!driver)
    return driver.takeError();
  std::unique_ptr<CudaRuntime> rt(new CudaRuntime());
  rt->driver = std::move(*driver);
  Driver &d = *rt->driver;
  int count = 0;
  d.cuDeviceGetCount(&count);
  if (ordinal < 0 || ordinal >= count)
    return llvm::createStringError(
        llvm::formatv("device {0} requested, the driver has {1}", ordinal,
                      count)
            .str());
  auto info = describe(d, ordinal);
  if (!info)
    return info.takeError();
  rt->device = *info;
  CUdevice dev;
  d.cuDeviceGet(&dev, ordinal);
  CUcontext ctx = nullptr;
  if (CUresult r = d.cuDevicePrimaryCtxRetain(&ctx, dev); r != CUDA_SUCCESS)
    return llvm::createStringError("cuDevicePrimaryCtxRetain: " +
                                   d.errorName(r));
  rt->context = ctx;
  if (CUresult r = d.cuCtxSetCurrent(ctx); r != CUDA_SUCCESS)
    return llvm::createStringError("cuCtxSetCurrent: " + d.errorName(r));
  CUstream stream = nullptr;
  if (CUresult r = d.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING);
      r != CUDA_SUCCESS)
    return llvm::createStringError("cuStreamCreate: " + d.errorName(r));
  rt->stream = stream;
  CUevent start = nullptr, stop = nullptr;
  if (d.cuEventCreate(&start, CU_EVENT_DEFAULT) != CUDA_SUCCESS ||
      d.cuEventCreate(&stop, CU_EVENT_DEFAULT) != CUDA_SUCCESS)
    return llvm::createStringError("cuEventCreate failed");
  rt->startEvent = start;
  rt->stopEvent = stop;

  // NVML: optional.
  d.nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (d.nvml) {
    d.nvmlInit = reinterpret_cast<int (*)()>(dlsym(d.nvml, "nvmlInit_v2"));
    d.nvmlDeviceGetHandleByPciBusId =
        reinterpret_cast<decltype(d.nvmlDeviceGetHandleByPciBusId)>(
            dlsym(d.nvml, "nvmlDeviceGetHandleByPciBusId_v2"));
    d.nvmlDeviceGetComputeRunningProcesses =
        reinterpret_cast<decltype(d.nvmlDeviceGetComputeRunningProcesses)>(
            dlsym(d.nvml, "nvmlDeviceGetComputeRunningProcesses_v3"));
    char bus[64] = {};
    if (d.nvmlInit && d.nvmlDeviceGetHandleByPciBusId &&
        d.nvmlDeviceGetComputeRunningProcesses && d.nvmlInit() == 0 &&
        d.cuDeviceGetPCIBusId(bus, sizeof(bus), dev) == CUDA_SUCCESS)
      if (d.nvmlDeviceGetHandleByPciBusId(bus, &d.nvmlDevice) != 0)
        d.nvmlDevice = nullptr;
  }
  return std::move(rt);
}

CudaRuntime::~CudaRuntime() {
  if (active == this)
    active = nullptr;
  if (!driver)
    return;
  Driver &d = *driver;
  if (startEvent)
    d.cuEventDestroy(static_cast<CUevent>(startEvent));
  if (stopEvent)
    d.cuEventDestroy(static_cast<CUevent>(stopEvent));
  if (stream)
    d.cuStreamDestroy(static_cast<CUstream>(stream));
  if (context) {
    CUdevice dev;
    if (d.cuDeviceGet(&dev, device.ordinal) == CUDA_SUCCESS)
      d.cuDevicePrimaryCtxRelease(dev);
  }
}

bool CudaRuntime::check(int result, const char *call) {
  if (result == CUDA_SUCCESS)
    return true;
  if (error.empty())
    error = std::string(call) + ": " +
            driver->errorName(static_cast<CUresult>(result));
  return false;
}

std::optional<int64_t> CudaRuntime::getDeviceUsedBytes() {
  size_t freeBytes = 0, total = 0;
  if (driver->cuMemGetInfo(&freeBytes, &total) != CUDA_SUCCESS)
    return std::nullopt;
  return static_cast<int64_t>(total - freeBytes);
}

std::optional<int64_t> CudaRuntime::getProcessDeviceBytes() {
  Driver &d = *driver;
  if (!d.nvmlDevice)
    return std::nullopt;
  std::vector<Driver::NvmlProcessInfo> infos(64);
  unsigned count = infos.size();
  if (d.nvmlDeviceGetComputeRunningProcesses(d.nvmlDevice, &count,
                                             infos.data()) != 0)
    return std::nullopt;
  unsigned pid = static_cast<unsigned>(getpid());
  for (unsigned i = 0; i < count && i < infos.size(); ++i)
    if (infos[i].pid == pid)
      return static_cast<int64_t>(infos[i].usedGpuMemory);
  return std::nullopt;
}

void *CudaRuntime::allocateSegment(int64_t bytes) {
  CUdeviceptr p = 0;
  if (!check(driver->cuMemAlloc(&p, static_cast<size_t>(bytes)), "cuMemAlloc"))
    return nullptr;
  return reinterpret_cast<void *>(p);
}

void CudaRuntime::releaseSegment(void *base, int64_t) {
  check(driver->cuMemFree(reinterpret_cast<CUdeviceptr>(base)), "cuMemFree");
}

bool CudaRuntime::copyToDevice(void *dst, const void *src, size_t bytes) {
  return check(
      driver->cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(dst), src, bytes),
      "cuMemcpyHtoD");
}

bool CudaRuntime::copyToHost(void *dst, const void *src, size_t bytes) {
  return check(
      driver->cuMemcpyDtoH(dst, reinterpret_cast<CUdeviceptr>(src), bytes),
      "cuMemcpyDtoH");
}

bool CudaRuntime::synchronize() {
  return check(driver->cuCtxSynchronize(), "cuCtxSynchronize");
}

bool CudaRuntime::recordStart() {
  return check(driver->cuEventRecord(static_cast<CUevent>(startEvent),
                                     static_cast<CUstream>(stream)),
               "cuEventRecord");
}

std::optional<double> CudaRuntime::recordStopMs() {
  Driver &d = *driver;
  if (!check(d.cuEventRecord(static_cast<CUevent>(stopEvent),
                             static_cast<CUstream>(stream)),
             "cuEventRecord") ||
      !check(d.cuEventSynchronize(static_cast<CUevent>(stopEvent)),
             "cuEventSynchronize"))
    return std::nullopt;
  float ms = 0;
  if (!check(d.cuEventElapsedTime(&ms, static_cast<CUevent>(startEvent),
                                  static_cast<CUevent>(stopEvent)),
             "cuEventElapsedTime"))
    return std::nullopt;
  return ms;
}

void CudaRuntime::activate(CachingDeviceAllocator *alloc) {
  allocator = alloc;
  active = this;
}

void CudaRuntime::deactivate() {
  if (active == this)
    active = nullptr;
  allocator = nullptr;
}

//===----------------------------------------------------------------------===//
// The mgpu* entry points
//===----------------------------------------------------------------------===//

namespace {
/// The active runtime when it can still make calls; null without one or
/// after a failed call (the host code carries on, doing nothing).
CudaRuntime *usable() {
  return active && !active->hasError() ? active : nullptr;
}

void *loadModule(void *data, int optLevel, bool jit) {
  CudaRuntime *rt = usable();
  if (!rt)
    return nullptr;
  CUmodule module = nullptr;
  auto &d = rt->getDriver();
  if (!jit) {
    if (!rt->check(d.cuModuleLoadData(&module, data), "cuModuleLoadData"))
      return nullptr;
  } else {
    // As CudaRuntimeWrappers: the PTX is compiled by the driver at the
    // requested level; its error log goes into the recorded error.
    char log[8192] = {};
    CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                              CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                              CU_JIT_OPTIMIZATION_LEVEL};
    void *values[] = {log, reinterpret_cast<void *>(sizeof(log)),
                      reinterpret_cast<void *>(
                          static_cast<intptr_t>(std::clamp(optLevel, 0, 4)))};
    CUresult r = d.cuModuleLoadDataEx(&module, data, 3, options, values);
    if (r != CUDA_SUCCESS) {
      std::string call = "cuModuleLoadDataEx (PTX JIT";
      if (log[0])
        call += ": " + llvm::StringRef(log).trim().str();
      call += ")";
      rt->check(r, call.c_str());
      return nullptr;
    }
  }
  ++rt->modulesLoaded;
  return module;
}
} // namespace

extern "C" {
void *vramMgpuModuleLoad(void *data, size_t /*size*/) {
  return loadModule(data, 0, /*jit=*/false);
}
void *vramMgpuModuleLoadJIT(void *data, int optLevel) {
  return loadModule(data, optLevel, /*jit=*/true);
}
void vramMgpuModuleUnload(void *module) {
  if (active && module)
    active->getDriver().cuModuleUnload(static_cast<CUmodule>(module));
}
void *vramMgpuModuleGetFunction(void *module, const char *name) {
  CudaRuntime *rt = usable();
  if (!rt)
    return nullptr;
  if (!module) {
    rt->check(CUDA_ERROR_INVALID_HANDLE, "mgpuModuleGetFunction (no module)");
    return nullptr;
  }
  CUfunction fn = nullptr;
  std::string call = std::string("cuModuleGetFunction(") + name + ")";
  rt->check(rt->getDriver().cuModuleGetFunction(
                &fn, static_cast<CUmodule>(module), name),
            call.c_str());
  return fn;
}
void vramMgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                          intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                          intptr_t blockZ, int32_t smem, void *stream,
                          void **params, void **extra, size_t /*count*/) {
  CudaRuntime *rt = usable();
  if (!rt || !function)
    return;
  ++rt->launches;
  rt->check(rt->getDriver().cuLaunchKernel(
                static_cast<CUfunction>(function), gridX, gridY, gridZ, blockX,
                blockY, blockZ, smem, static_cast<CUstream>(stream), params,
                extra),
            "cuLaunchKernel");
}
void *vramMgpuStreamCreate() { return active ? active->getStream() : nullptr; }
void vramMgpuStreamDestroy(void *) {}
void vramMgpuStreamSynchronize(void *stream) {
  if (CudaRuntime *rt = usable())
    rt->check(
        rt->getDriver().cuStreamSynchronize(static_cast<CUstream>(stream)),
        "cuStreamSynchronize (a kernel failed)");
}
void vramMgpuStreamWaitEvent(void *stream, void *event) {
  if (CudaRuntime *rt = usable())
    rt->check(rt->getDriver().cuStreamWaitEvent(static_cast<CUstream>(stream),
                                                static_cast<CUevent>(event), 0),
              "cuStreamWaitEvent");
}
void *vramMgpuEventCreate() {
  CudaRuntime *rt = usable();
  if (!rt)
    return nullptr;
  CUevent event = nullptr;
  rt->check(rt->getDriver().cuEventCreate(&event, CU_EVENT_DISABLE_TIMING),
            "cuEventCreate");
  return event;
}
void vramMgpuEventDestroy(void *event) {
  if (active && event)
    active->getDriver().cuEventDestroy(static_cast<CUevent>(event));
}
void vramMgpuEventSynchronize(void *event) {
  if (CudaRuntime *rt = usable())
    rt->check(rt->getDriver().cuEventSynchronize(static_cast<CUevent>(event)),
              "cuEventSynchronize");
}
void vramMgpuEventRecord(void *event, void *stream) {
  if (CudaRuntime *rt = usable())
    rt->check(rt->getDriver().cuEventRecord(static_cast<CUevent>(event),
                                            static_cast<CUstream>(stream)),
              "cuEventRecord");
}
void *vramMgpuMemAlloc(uint64_t bytes, void * /*stream*/, bool isHostShared) {
  CudaRuntime *rt = usable();
  if (!rt)
    return nullptr;
  if (isHostShared || !rt->getAllocator()) {
    rt->check(CUDA_ERROR_NOT_SUPPORTED,
              isHostShared ? "mgpuMemAlloc (host-shared memory)"
                           : "mgpuMemAlloc (no allocator)");
    return nullptr;
  }
  void *p = rt->getAllocator()->allocate(static_cast<int64_t>(bytes));
  if (!p)
    rt->check(CUDA_ERROR_OUT_OF_MEMORY, "mgpuMemAlloc");
  return p;
}
void vramMgpuMemFree(void *p, void * /*stream*/) {
  CudaRuntime *rt = usable();
  if (rt && rt->getAllocator() && p && !rt->getAllocator()->release(p))
    rt->check(CUDA_ERROR_INVALID_VALUE, "mgpuMemFree (not allocated)");
}
void vramMgpuMemcpy(void *dst, void *src, size_t bytes, void *stream) {
  if (CudaRuntime *rt = usable())
    rt->check(rt->getDriver().cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                                            reinterpret_cast<CUdeviceptr>(src),
                                            bytes,
                                            static_cast<CUstream>(stream)),
              "cuMemcpyAsync");
}
void vramMgpuMemset32(void *dst, unsigned int value, size_t count,
                      void *stream) {
  if (CudaRuntime *rt = usable())
    rt->check(rt->getDriver().cuMemsetD32Async(
                  reinterpret_cast<CUdeviceptr>(dst), value, count,
                  static_cast<CUstream>(stream)),
              "cuMemsetD32Async");
}
} // extern "C"

void CudaRuntime::forEachEntryPoint(
    llvm::function_ref<void(llvm::StringRef, void *)> add) {
  add("mgpuModuleLoad", reinterpret_cast<void *>(&vramMgpuModuleLoad));
  add("mgpuModuleLoadJIT", reinterpret_cast<void *>(&vramMgpuModuleLoadJIT));
  add("mgpuModuleUnload", reinterpret_cast<void *>(&vramMgpuModuleUnload));
  add("mgpuModuleGetFunction",
      reinterpret_cast<void *>(&vramMgpuModuleGetFunction));
  add("mgpuLaunchKernel", reinterpret_cast<void *>(&vramMgpuLaunchKernel));
  add("mgpuStreamCreate", reinterpret_cast<void *>(&vramMgpuStreamCreate));
  add("mgpuStreamDestroy", reinterpret_cast<void *>(&vramMgpuStreamDestroy));
  add("mgpuStreamSynchronize",
      reinterpret_cast<void *>(&vramMgpuStreamSynchronize));
  add("mgpuStreamWaitEvent",
      reinterpret_cast<void *>(&vramMgpuStreamWaitEvent));
  add("mgpuEventCreate", reinterpret_cast<void *>(&vramMgpuEventCreate));
  add("mgpuEventDestroy", reinterpret_cast<void *>(&vramMgpuEventDestroy));
  add("mgpuEventSynchronize",
      reinterpret_cast<void *>(&vramMgpuEventSynchronize));
  add("mgpuEventRecord", reinterpret_cast<void *>(&vramMgpuEventRecord));
  add("mgpuMemAlloc", reinterpret_cast<void *>(&vramMgpuMemAlloc));
  add("mgpuMemFree", reinterpret_cast<void *>(&vramMgpuMemFree));
  add("mgpuMemcpy", reinterpret_cast<void *>(&vramMgpuMemcpy));
  add("mgpuMemset32", reinterpret_cast<void *>(&vramMgpuMemset32));
}
