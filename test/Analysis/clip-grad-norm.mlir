// torch.nn.utils.clip_grad_norm_ between backward and the update
// (vram-build-step max-grad-norm, nn.clip_grad_norm), through the memory
// analysis's print pass. Hand computation from torch 2.x's
// nn/utils/clip_grad.py: torch._foreach_norm gives a 0-d norm per gradient
// in its dtype, torch.stack copies them (the widest dtype) and
// vector_norm makes the 0-d total, all alive at once. Measured on the CPU
// with torch 2.15 (benchmarks/accuracy/clip.py): 21 fp32 gradients 172 B
// (21 x 4 x 2 + 4), 21 bf16 86 B.
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=sgd loss=mse max-grad-norm=1.0 device=cpu" --vram-print-memory -o /dev/null | FileCheck %s
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=sgd loss=mse max-grad-norm=1.0" --vram-print-memory --vram-print-flops -o /dev/null | FileCheck %s --check-prefix=FLOPS

// Two fp32 gradients: norms 4 + 4, their stack 8, the total 4; the update
// follows.
// CHECK-LABEL: memory of @step
// CHECK: nn.clip_grad_norm (optimizer):
// CHECK-NEXT: alloc #{{[0-9]+}} 4 temporaries workspace of nn.clip_grad_norm
// CHECK-NEXT: alloc #{{[0-9]+}} 4 temporaries workspace of nn.clip_grad_norm
// CHECK-NEXT: alloc #{{[0-9]+}} 8 temporaries workspace of nn.clip_grad_norm
// CHECK-NEXT: alloc #{{[0-9]+}} 4 temporaries workspace of nn.clip_grad_norm
// CHECK: nn.optimizer_step
// A square and an add an element for the norm, a multiply for the scaling,
// under `full` only: (16 + 4) x 3 = 60.
// FLOPS-LABEL: FLOPs (macs flops full) of @step
// FLOPS: nn.clip_grad_norm (optimizer): 0 0 60
func.func @forward(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = nn.param "fc.weight" : tensor<4x4xf32>
  %b = nn.param "fc.bias" : tensor<4xf32>
  %y = nn.linear %x, %w, %b : (tensor<2x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// A bf16 and an fp32 gradient: norms 2 and 4, their stack promoted to
// float32 (2 x 4), the total 4 (measured: 5 bf16 and 1 fp32, 42 B).
// CHECK-LABEL: memory of @step
// CHECK: nn.clip_grad_norm (optimizer):
// CHECK-NEXT: alloc #{{[0-9]+}} 2 temporaries workspace of nn.clip_grad_norm
// CHECK-NEXT: alloc #{{[0-9]+}} 4 temporaries workspace of nn.clip_grad_norm
// CHECK-NEXT: alloc #{{[0-9]+}} 8 temporaries workspace of nn.clip_grad_norm
// CHECK-NEXT: alloc #{{[0-9]+}} 4 temporaries workspace of nn.clip_grad_norm
func.func @forward(%x: tensor<2x4xbf16>) -> tensor<2x4xf32> {
  %w = nn.param "fc.weight" : tensor<4x4xbf16>
  %y = nn.linear %x, %w : (tensor<2x4xbf16>, tensor<4x4xbf16>) -> tensor<2x4xbf16>
  %s = nn.param "scale" : tensor<4xf32>
  %c = nn.cast %y : tensor<2x4xbf16> to tensor<2x4xf32>
  %z = nn.mul %c, %s : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %z : tensor<2x4xf32>
}
