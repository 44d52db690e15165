// RUN: vram-opt %s --vram-build-step="mode=train optimizer=paged_adamw loss=mse" | FileCheck %s
// RUN: vram-opt %s --vram-build-step="mode=train optimizer=paged_adamw8bit loss=mse" | FileCheck %s --check-prefix=Q8
// RUN: vram-opt %s --vram-build-step="mode=train optimizer=paged_adamw loss=mse device=cpu" | FileCheck %s --check-prefix=CPU
// RUN: vram-opt %s --vram-build-step="mode=train optimizer=paged_adamw loss=mse" --vram-print-memory -o /dev/null | FileCheck %s --check-prefix=MEM

// bitsandbytes' paged optimizers (0.50.2, optim/optimizer.py
// get_state_buffer): on CUDA the states of a parameter of 100,000 elements
// or more come from get_paged (cudaMallocManaged); smaller ones, and every
// state on the CPU ("Paged optimizers are not supported on CPU"), are
// torch.zeros_like. PagedAdamW keeps float32 states whatever the dtype.
// up.weight and down.weight: 400 x 256 = 102,400 elements each (paged);
// down.bias: 256 (not paged).
// CHECK: nn.optimizer_state exp_avg of %{{.*}} {paged} : tensor<400x256xbf16> -> tensor<400x256xf32>
// CHECK-NEXT: nn.optimizer_state exp_avg_sq of %{{.*}} {paged} : tensor<400x256xbf16> -> tensor<400x256xf32>
// CHECK: nn.optimizer_state exp_avg of %{{.*}} {paged} : tensor<256x400xbf16> -> tensor<256x400xf32>
// CHECK: nn.optimizer_state exp_avg of %{{.*}} : tensor<256xbf16> -> tensor<256xf32>
// CHECK-NEXT: nn.optimizer_state exp_avg_sq of %{{.*}} : tensor<256xbf16> -> tensor<256xf32>
// CHECK: nn.optimizer_step paged_adamw
// PagedAdamW8bit: the 8-bit states are paged, their float32 absmax (one per
// 256 elements) are not.
// Q8: nn.optimizer_state exp_avg of %{{.*}} {paged} : tensor<400x256xbf16> -> tensor<400x256xui8>
// Q8-NEXT: nn.optimizer_state exp_avg_sq of %{{.*}} {paged} : tensor<400x256xbf16> -> tensor<400x256xui8>
// Q8-NEXT: nn.optimizer_state absmax1 of %{{.*}} : tensor<400x256xbf16> -> tensor<400xf32>
// CPU-NOT: {paged}
// The memory analysis counts the paged states apart, outside the live
// bytes: 4 x 102,400 x 4 = 1,638,400 B; the bias's two states (1,024 B
// each) stay with the parameters (204,800 x 2 + 512), the inputs (2 x
// 2,048) in the persistent 416,256 B.
// MEM-LABEL: memory of @step
// MEM: alloc #{{[0-9]+}} 0 optimizer_state "up.weight.exp_avg" tensor<400x256xf32>
// MEM: alloc #{{[0-9]+}} 1024 optimizer_state "down.bias.exp_avg" tensor<256xf32>
// MEM: persistent 416256
// MEM: paged (outside the allocator) 1638400
func.func @forward(%x: tensor<4x256xbf16>) -> tensor<4x256xbf16> {
  %w1 = nn.param "up.weight" : tensor<400x256xbf16>
  %h = nn.linear %x, %w1 : (tensor<4x256xbf16>, tensor<400x256xbf16>) -> tensor<4x400xbf16>
  %w2 = nn.param "down.weight" : tensor<256x400xbf16>
  %b2 = nn.param "down.bias" : tensor<256xbf16>
  %y = nn.linear %h, %w2, %b2 : (tensor<4x400xbf16>, tensor<256x400xbf16>, tensor<256xbf16>) -> tensor<4x256xbf16>
  return %y : tensor<4x256xbf16>
}
