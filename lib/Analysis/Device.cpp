//===- Device.cpp - what a GPU shows beyond the allocator -----------------===//

#include "vram/Analysis/Device.h"
#include "vram/Dialect/NN/NNOps.h"

using namespace mlir;
using namespace vram;

static constexpr int64_t kMiB = 1 << 20;

// Total memory as nvidia-smi prints it (MiB) for the common SKUs, their
// compute capability and their SMs (NVIDIA's specifications; what
// torch.cuda.get_device_properties(...).multi_processor_count reports).
static const GpuSpec kGpus[] = {
    {"h200", "NVIDIA H200 141GB (sm_90)", 143771 * kMiB, 90, 132},
    {"h100", "NVIDIA H100 80GB HBM3 (sm_90)", 81559 * kMiB, 90, 132},
    {"a100", "NVIDIA A100 80GB (sm_80)", 81920 * kMiB, 80, 108},
    {"a100-40gb", "NVIDIA A100 40GB (sm_80)", 40960 * kMiB, 80, 108},
    {"l40s", "NVIDIA L40S 48GB (sm_89)", 46068 * kMiB, 89, 142},
    {"a10", "NVIDIA A10 24GB (sm_86)", 23028 * kMiB, 86, 72},
    {"l4", "NVIDIA L4 24GB (sm_89)", 23034 * kMiB, 89, 58},
    {"rtx4090", "NVIDIA GeForce RTX 4090 24GB (sm_89)", 24564 * kMiB, 89, 128},
    {"rtx3090", "NVIDIA GeForce RTX 3090 24GB (sm_86)", 24576 * kMiB, 86, 82},
    {"v100", "NVIDIA V100 32GB (sm_70)", 32768 * kMiB, 70, 80},
    {"t4", "NVIDIA T4 16GB (sm_75)", 15360 * kMiB, 75, 40},
};

ArrayRef<GpuSpec> vram::getGpuSpecs() { return kGpus; }

const GpuSpec *vram::lookupGpu(StringRef name) {
  for (const GpuSpec &gpu : kGpus)
    if (gpu.name == name.lower())
      return &gpu;
  return nullptr;
}

int64_t vram::getDefaultContextBytes(bool lazyLoading) {
  return lazyLoading ? 762 * kMiB : 1024 * kMiB;
}

int64_t vram::getCublasWorkspaceBytes(unsigned computeCapability) {
  return computeCapability >= 90 ? 32 * kMiB : 4096 * 1024 * 2 + 16 * 1024 * 8;
}

DeviceModel vram::makeDeviceModel(const GpuSpec *gpu, bool lazyLoading) {
  DeviceModel device;
  device.lazyLoading = lazyLoading;
  device.contextBytes = getDefaultContextBytes(lazyLoading);
  if (gpu) {
    device.gpu = gpu->name.str();
    device.capacityBytes = gpu->capacityBytes;
    device.computeCapability = gpu->computeCapability;
    device.multiprocessors = gpu->multiprocessors;
  }
  return device;
}

SmallVector<LibraryWorkspace>
vram::getLibraryWorkspaces(Operation *step, const DeviceModel &device) {
  // PyTorch keeps a cuBLAS workspace per (handle, stream) for the process's
  // life and a handle per thread: the forward's, and in training the
  // autograd engine's device thread, which runs backward.
  Operation *forward = nullptr, *backward = nullptr, *lt = nullptr;
  step->walk([&](Operation *op) {
    if (auto node = dyn_cast<nn::BackwardOp>(op)) {
      std::optional<RegisteredOperationName> name =
          RegisteredOperationName::lookup(node.getForwardOp(),
                                          op->getContext());
      if (!backward && name && name->hasTrait<nn::CublasOpTrait>())
        backward = op;
    } else if (op->hasTrait<nn::CublasOpTrait>()) {
      if (!forward)
        forward = op;
      if (auto linear = dyn_cast<nn::LinearOp>(op);
          !lt && linear && linear.getBias())
        lt = op;
    }
  });
  SmallVector<LibraryWorkspace> library;
  int64_t cublas = getCublasWorkspaceBytes(device.computeCapability);
  if (forward)
    library.push_back({cublas, forward});
  if (backward)
    library.push_back({cublas, backward});
  if (lt)
    library.push_back({kCublasLtWorkspaceBytes, lt});
  return library;
}
