// Liger-Kernel's fused linear cross-entropy (nn.fused_linear_cross_entropy,
// vram-build-step loss=fused_linear_cross_entropy) in place of lm_head and
// the loss, through the memory analysis's print pass. Hand computation from
// liger_kernel/ops/fused_linear_cross_entropy.py (0.8.5): hidden states
// [2, 128, 256] flattened to N = 256 tokens, H = 256, an lm_head [V = 1024,
// 256]: chunks of min(next_power_of_2(ceil(256 / ceil(1024 / 256))), 256) =
// 64 tokens. Before the chunks: grad_input = zeros_like(input) [256, 256]
// and grad_weight = zeros_like(weight) [1024, 256] (saved, returned by
// backward: no gradient is allocated there), loss_1d [256] f32 (1,024 B) and
// the target mask [256] bool (256 B); in a chunk its logits [64, 1024].
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=sgd loss=fused_linear_cross_entropy device=cuda" --vram-print-memory -o /dev/null | FileCheck %s --check-prefix=CUDA
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=sgd loss=fused_linear_cross_entropy device=cpu" --vram-print-memory -o /dev/null | FileCheck %s --check-prefix=CPU

// float32. grad_input 262,144 B and grad_weight 1,048,576 B before the op;
// logits chunk 64 x 1024 x 4 = 262,144. The float32 grad_weight takes
// Liger's fallback `grad_weight += torch.mm(grad_logits.t(), input).float()`
// on both devices: a [1024, 256] f32 product, 1,048,576 B.
// CUDA-LABEL: memory of @step
// CUDA: nn.saved (forward):
// CUDA-NEXT: alloc #{{[0-9]+}} 262144 activations nn.saved tensor<256x256xf32>
// CUDA: nn.saved (forward):
// CUDA-NEXT: alloc #{{[0-9]+}} 1048576 gradients nn.saved tensor<1024x256xf32>
// CUDA: nn.fused_linear_cross_entropy (forward):
// CUDA-NEXT: alloc #{{[0-9]+}} 4 temporaries nn.fused_linear_cross_entropy tensor<f32>
// CUDA-NEXT: alloc #{{[0-9]+}} 1024 temporaries workspace
// CUDA-NEXT: alloc #{{[0-9]+}} 256 temporaries workspace
// CUDA-NEXT: alloc #{{[0-9]+}} 262144 temporaries workspace
// CUDA-NEXT: alloc #{{[0-9]+}} 1048576 temporaries workspace
// The backward node returns the saved gradients: it allocates nothing.
// CUDA: nn.backward (backward):
// CUDA-NEXT: live
// CPU-LABEL: memory of @step
// CPU: nn.fused_linear_cross_entropy (forward):
// CPU-NEXT: alloc #{{[0-9]+}} 4 temporaries
// CPU-NEXT: alloc #{{[0-9]+}} 1024 temporaries workspace
// CPU-NEXT: alloc #{{[0-9]+}} 256 temporaries workspace
// CPU-NEXT: alloc #{{[0-9]+}} 262144 temporaries workspace
// CPU-NEXT: alloc #{{[0-9]+}} 1048576 temporaries workspace
// CPU-NEXT: live
func.func @forward(%x: tensor<2x128x256xf32>) -> tensor<2x128x1024xf32> {
  %w0 = nn.param "proj.weight" : tensor<256x256xf32>
  %h = nn.linear %x, %w0 : (tensor<2x128x256xf32>, tensor<256x256xf32>) -> tensor<2x128x256xf32>
  %w = nn.param "lm_head.weight" : tensor<1024x256xf32>
  %y = nn.linear %h, %w : (tensor<2x128x256xf32>, tensor<1024x256xf32>) -> tensor<2x128x1024xf32>
  return %y : tensor<2x128x1024xf32>
}

// -----

// bf16: logits chunk 64 x 1024 x 2 = 131,072. On CUDA (sm80+)
// torch.addmm(out=grad_weight) accumulates in place: no more. On the CPU
// the fallback's bf16 product is freed once its float32 copy (1,048,576)
// exists, and `grad_weight +=` that copy into the bf16 grad_weight goes
// through two more float32 [1024, 256] temporaries (measured, torch 2.15).
// CUDA-LABEL: memory of @step
// CUDA: nn.fused_linear_cross_entropy (forward):
// CUDA-NEXT: alloc #{{[0-9]+}} 4 temporaries
// CUDA-NEXT: alloc #{{[0-9]+}} 1024 temporaries workspace
// CUDA-NEXT: alloc #{{[0-9]+}} 256 temporaries workspace
// CUDA-NEXT: alloc #{{[0-9]+}} 131072 temporaries workspace
// CUDA-NEXT: live
// CPU-LABEL: memory of @step
// CPU: nn.fused_linear_cross_entropy (forward):
// CPU-NEXT: alloc #{{[0-9]+}} 4 temporaries
// CPU-NEXT: alloc #{{[0-9]+}} 1024 temporaries workspace
// CPU-NEXT: alloc #{{[0-9]+}} 256 temporaries workspace
// CPU-NEXT: alloc #{{[0-9]+}} 131072 temporaries workspace
// CPU-NEXT: alloc #{{[0-9]+}} 1048576 temporaries workspace
// CPU-NEXT: alloc #{{[0-9]+}} 1048576 temporaries workspace
// CPU-NEXT: alloc #{{[0-9]+}} 1048576 temporaries workspace
// CPU-NEXT: live
func.func @forward(%x: tensor<2x128x256xbf16>) -> tensor<2x128x1024xbf16> {
  %w0 = nn.param "proj.weight" : tensor<256x256xbf16>
  %h = nn.linear %x, %w0 : (tensor<2x128x256xbf16>, tensor<256x256xbf16>) -> tensor<2x128x256xbf16>
  %w = nn.param "lm_head.weight" : tensor<1024x256xbf16>
  %y = nn.linear %h, %w : (tensor<2x128x256xbf16>, tensor<1024x256xbf16>) -> tensor<2x128x1024xbf16>
  return %y : tensor<2x128x1024xbf16>
}

// -----

// A frozen lm_head (LoRA): no grad_weight. 100 tokens: chunks of
// min(next_power_of_2(ceil(100 / 4)), 100) = 32 (the last one 4 tokens).
// Logits chunk 32 x 1024 x 4 = 131,072; the CPU's `grad_input[s:e] =
// grad_logits @ weight` product [32, 256] f32 = 32,768; CUDA writes it
// with torch.mm(out=).
// CUDA-LABEL: memory of @step
// CUDA: nn.saved (forward):
// CUDA-NEXT: alloc #{{[0-9]+}} 102400 activations nn.saved tensor<100x256xf32>
// CUDA-NOT: nn.saved
// CUDA: nn.fused_linear_cross_entropy (forward):
// CUDA-NEXT: alloc #{{[0-9]+}} 4 temporaries
// CUDA-NEXT: alloc #{{[0-9]+}} 400 temporaries workspace
// CUDA-NEXT: alloc #{{[0-9]+}} 100 temporaries workspace
// CUDA-NEXT: alloc #{{[0-9]+}} 131072 temporaries workspace
// CUDA-NEXT: live
// CPU-LABEL: memory of @step
// CPU: nn.fused_linear_cross_entropy (forward):
// CPU-NEXT: alloc #{{[0-9]+}} 4 temporaries
// CPU-NEXT: alloc #{{[0-9]+}} 400 temporaries workspace
// CPU-NEXT: alloc #{{[0-9]+}} 100 temporaries workspace
// CPU-NEXT: alloc #{{[0-9]+}} 131072 temporaries workspace
// CPU-NEXT: alloc #{{[0-9]+}} 32768 temporaries workspace
// CPU-NEXT: live
func.func @forward(%x: tensor<1x100x256xf32>) -> tensor<1x100x1024xf32> {
  %w0 = nn.param "proj.weight" : tensor<256x256xf32>
  %h = nn.linear %x, %w0 : (tensor<1x100x256xf32>, tensor<256x256xf32>) -> tensor<1x100x256xf32>
  %w = nn.param "lm_head.weight" {trainable = false} : tensor<1024x256xf32>
  %y = nn.linear %h, %w : (tensor<1x100x256xf32>, tensor<1024x256xf32>) -> tensor<1x100x1024xf32>
  return %y : tensor<1x100x1024xf32>
}
