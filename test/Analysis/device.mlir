// The device model (docs/Device.md): the caching allocator also holds a
// cuBLAS workspace per thread that calls cuBLAS (the forward's and, in
// training, the autograd thread's that runs backward), cuBLASLt's when a
// linear has a bias (none here), and nvidia-smi shows reserved + what the
// driver and libraries hold outside the allocator (the context).
//
// H100 (sm_90), training: two 32 MiB cuBLAS workspaces, each a large-pool
// request of >= 10 MiB, so a segment of its own; a 2 MiB small-pool segment
// holds every tensor of this tiny step (each rounded to 512 B). reserved =
// 2 x 32 MiB + 2 MiB = 69206016; device = reserved + the 762 MiB lazy-loading
// context (799014912, measured on an H200) = 868220928.
// RUN: vram-opt %s --gpu=h100 --mode=train --optimizer=sgd --format=json > %t.h100.json
// RUN: %check-json %t.h100.json memory.reserved_peak_bytes 69206016 memory.device_peak_bytes 868220928 memory.device.library_workspace_bytes 67108864 memory.device.context_bytes 799014912 memory.device.capacity_bytes 85520809984
// Inference runs no backward: one workspace, 32 MiB + 2 MiB = 35651584
// reserved, + 799014912 = 834666496 on the device.
// RUN: vram-opt %s --gpu=h100 --mode=inference --format=json > %t.h100-infer.json
// RUN: %check-json %t.h100-infer.json memory.reserved_peak_bytes 35651584 memory.device_peak_bytes 834666496 memory.device.library_workspace_bytes 33554432
// A100 (sm_80): 4096 KiB x 2 + 16 KiB x 8 = 8519680 bytes of cuBLAS
// workspace, a 1-10 MiB request: a 20 MiB segment, whose remaining 11.875
// MiB takes the autograd thread's second workspace; plus the 2 MiB small
// segment: 22 MiB = 23068672. Without lazy module loading the context is
// 1 GiB.
// RUN: vram-opt %s --gpu=a100 --mode=train --optimizer=sgd --cuda-lazy-loading=false --format=json > %t.a100.json
// RUN: %check-json %t.a100.json memory.reserved_peak_bytes 23068672 memory.device.library_workspace_bytes 17039360 memory.device_peak_bytes-memory.reserved_peak_bytes 1073741824
// --context-bytes overrides the context.
// RUN: vram-opt %s --gpu=a100 --mode=train --optimizer=sgd --context-bytes=300MiB --format=json > %t.ctx.json
// RUN: %check-json %t.ctx.json memory.device_peak_bytes-memory.reserved_peak_bytes 314572800
// The text report says which number each tool shows.
// RUN: vram-opt %s --gpu=h100 --mode=train --optimizer=sgd --format=text 2>&1 | FileCheck %s --check-prefix=TEXT
// TEXT: allocated peak {{.*}} (torch.cuda.max_memory_allocated), reserved peak 66.00 MiB (max_memory_reserved), device 828.00 MiB (nvidia-smi: reserved + 762.00 MiB CUDA context on h100)
// Without the allocator model there is no device figure.
// RUN: vram-opt %s --mode=train --optimizer=sgd --format=json > %t.exact.json
// RUN: FileCheck %s --check-prefix=EXACT < %t.exact.json
// EXACT: "device": null,
// EXACT: "device_peak_bytes": null,

// Usage errors (exit 2).
// RUN: not vram-opt %s --gpu=h800 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: unknown --gpu 'h800' (known: h200, h100, a100,
// RUN: vram-opt %s --gpu=h800 2>/dev/null; test $? -eq 2
// RUN: not vram-opt %s --gpu=h100 --device=cpu 2>&1 | FileCheck %s --check-prefix=CPU
// CPU: error: --gpu, --context-bytes and --cudnn-workspace model a CUDA device, not --device=cpu
// RUN: not vram-opt %s --context-bytes=1GiB 2>&1 | FileCheck %s --check-prefix=NOALLOC
// NOALLOC: error: --context-bytes and --cuda-lazy-loading are part of the device figure: add --gpu or --allocator=pytorch-cuda
// RUN: not vram-opt %s --gpu=h100 --context-bytes=lots 2>&1 | FileCheck %s --check-prefix=SIZE
// SIZE: error: --context-bytes expects a size such as 500MiB, got 'lots'
// RUN: not vram-opt %s --gpu=h100 --allocator=exact 2>&1 | FileCheck %s --check-prefix=EXACTGPU
// EXACTGPU: error: --gpu models a CUDA device's memory: it needs --allocator=pytorch-cuda
func.func @forward(%x: tensor<2x4xf32>) -> tensor<2x3xf32> attributes {nn.batch = 2 : i64} {
  %w1 = nn.param "fc1.weight" : tensor<8x4xf32>
  %h = nn.linear %x, %w1 : (tensor<2x4xf32>, tensor<8x4xf32>) -> tensor<2x8xf32>
  %r = nn.relu %h : tensor<2x8xf32>
  %w2 = nn.param "fc2.weight" : tensor<3x8xf32>
  %y = nn.linear %r, %w2 : (tensor<2x8xf32>, tensor<3x8xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
