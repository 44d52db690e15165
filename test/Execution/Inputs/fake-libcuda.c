/* A test double of libcuda.so.1 for --validate=gpu on machines without a
 * GPU (validate-gpu-fake-driver.test): every driver function the runtime
 * looks up, with cuda.h's prototypes, over host memory. Device memory is
 * calloc'ed host memory, copies are memcpy, modules and functions are
 * counted handles, and cuLaunchKernel runs nothing: the step's numbers are
 * not computed, but every allocation, copy, module load and launch of the
 * real path happens. Environment: FAKE_CUDA_DEVICES (default 1),
 * FAKE_CUDA_INIT_ERROR (a CUresult for cuInit), FAKE_CUDA_LAUNCH_ERROR (a
 * CUresult for every cuLaunchKernel), FAKE_CUDA_KERNEL_FAULT (a CUresult a
 * kernel's fault leaves: the first stream synchronization after a launch
 * returns it, and so does every allocation after, as the real driver's
 * sticky errors do). Not part of vram-opt. */
#include <cuda.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int envInt(const char *name, int fallback) {
  const char *v = getenv(name);
  return v ? atoi(v) : fallback;
}

static size_t allocatedBytes;
static const size_t totalBytes = (size_t)80 << 30;
static int token;

CUresult cuInit(unsigned int flags) {
  (void)flags;
  return (CUresult)envInt("FAKE_CUDA_INIT_ERROR", 0);
}
CUresult cuDriverGetVersion(int *v) { *v = 13000; return CUDA_SUCCESS; }
CUresult cuGetErrorName(CUresult r, const char **name) {
  switch (r) {
  case CUDA_ERROR_NO_DEVICE: *name = "CUDA_ERROR_NO_DEVICE"; break;
  case CUDA_ERROR_LAUNCH_FAILED: *name = "CUDA_ERROR_LAUNCH_FAILED"; break;
  case CUDA_ERROR_OUT_OF_MEMORY: *name = "CUDA_ERROR_OUT_OF_MEMORY"; break;
  case CUDA_ERROR_ILLEGAL_ADDRESS: *name = "CUDA_ERROR_ILLEGAL_ADDRESS"; break;
  default: *name = "CUDA_ERROR_UNKNOWN"; break;
  }
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetCount(int *n) { *n = envInt("FAKE_CUDA_DEVICES", 1); return CUDA_SUCCESS; }
CUresult cuDeviceGet(CUdevice *d, int ordinal) { *d = ordinal; return CUDA_SUCCESS; }
CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
  (void)d;
  strncpy(name, "Fake CUDA device (test double)", len);
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d) {
  (void)d;
  *v = a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ? 9 : 0;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetPCIBusId(char *bus, int len, CUdevice d) {
  (void)d;
  strncpy(bus, "0000:00:00.0", len);
  return CUDA_SUCCESS;
}
CUresult cuDeviceTotalMem(size_t *bytes, CUdevice d) { (void)d; *bytes = totalBytes; return CUDA_SUCCESS; }
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) { (void)d; *c = (CUcontext)&token; return CUDA_SUCCESS; }
CUresult cuDevicePrimaryCtxRelease(CUdevice d) { (void)d; return CUDA_SUCCESS; }
CUresult cuCtxSetCurrent(CUcontext c) { (void)c; return CUDA_SUCCESS; }
CUresult cuCtxSynchronize(void) { return CUDA_SUCCESS; }
CUresult cuMemGetInfo(size_t *freeBytes, size_t *total) {
  *total = totalBytes;
  *freeBytes = totalBytes - allocatedBytes;
  return CUDA_SUCCESS;
}
static CUresult fault; /* sticky, after FAKE_CUDA_KERNEL_FAULT */
static int launched;

CUresult cuMemAlloc(CUdeviceptr *p, size_t bytes) {
  if (fault)
    return fault;
  /* Size-prefixed, 512-byte aligned: cuMemGetInfo follows the segments. */
  char *raw = calloc(1, bytes + 512);
  if (!raw)
    return CUDA_ERROR_OUT_OF_MEMORY;
  *(size_t *)raw = bytes;
  allocatedBytes += bytes;
  *p = (CUdeviceptr)(raw + 512);
  return CUDA_SUCCESS;
}
CUresult cuMemFree(CUdeviceptr p) {
  char *raw = (char *)p - 512;
  allocatedBytes -= *(size_t *)raw;
  free(raw);
  return CUDA_SUCCESS;
}
CUresult cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t n) { memcpy((void *)dst, src, n); return CUDA_SUCCESS; }
CUresult cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t n) { memcpy(dst, (void *)src, n); return CUDA_SUCCESS; }
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
  (void)s;
  memcpy((void *)dst, (void *)src, n);
  return CUDA_SUCCESS;
}
CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int v, size_t n, CUstream s) {
  (void)s;
  for (size_t i = 0; i < n; ++i)
    ((unsigned int *)dst)[i] = v;
  return CUDA_SUCCESS;
}
CUresult cuModuleLoadData(CUmodule *m, const void *image) {
  /* The image is a cubin (--gpu-binary=cubin): an ELF file. */
  if (memcmp(image, "\177ELF", 4) != 0)
    return CUDA_ERROR_INVALID_IMAGE;
  *m = (CUmodule)&token;
  return CUDA_SUCCESS;
}
CUresult cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned int n, CUjit_option *o, void **v) {
  (void)n; (void)o; (void)v;
  /* The image is the PTX text. */
  if (strncmp((const char *)image, "//", 2) != 0 && !strstr((const char *)image, ".target"))
    return CUDA_ERROR_INVALID_IMAGE;
  *m = (CUmodule)&token;
  return CUDA_SUCCESS;
}
CUresult cuModuleUnload(CUmodule m) { (void)m; return CUDA_SUCCESS; }
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
  (void)m; (void)name;
  *f = (CUfunction)&token;
  return CUDA_SUCCESS;
}
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned smem, CUstream s, void **params, void **extra) {
  (void)f; (void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz; (void)smem; (void)s;
  (void)params; (void)extra;
  launched = 1;
  return (CUresult)envInt("FAKE_CUDA_LAUNCH_ERROR", 0);
}
CUresult cuStreamCreate(CUstream *s, unsigned int flags) { (void)flags; *s = (CUstream)&token; return CUDA_SUCCESS; }
CUresult cuStreamSynchronize(CUstream s) {
  (void)s;
  if (launched && !fault)
    fault = (CUresult)envInt("FAKE_CUDA_KERNEL_FAULT", 0);
  return fault;
}
CUresult cuStreamDestroy(CUstream s) { (void)s; return CUDA_SUCCESS; }
CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags) { (void)s; (void)e; (void)flags; return CUDA_SUCCESS; }
CUresult cuEventCreate(CUevent *e, unsigned int flags) { (void)flags; *e = (CUevent)&token; return CUDA_SUCCESS; }
CUresult cuEventRecord(CUevent e, CUstream s) { (void)e; (void)s; return CUDA_SUCCESS; }
CUresult cuEventSynchronize(CUevent e) { (void)e; return CUDA_SUCCESS; }
CUresult cuEventDestroy(CUevent e) { (void)e; return CUDA_SUCCESS; }
CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b) { (void)a; (void)b; *ms = 0.0f; return CUDA_SUCCESS; }
