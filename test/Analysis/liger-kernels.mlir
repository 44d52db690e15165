// Liger-Kernel's RMSNorm, SwiGLU and RoPE (nn.liger_rms_norm,
// nn.liger_swiglu, nn.liger_rope; liger-kernel 0.8.5) in a training step,
// through the memory analysis's print pass. Hand computations from
// liger_kernel/ops/{rms_norm,swiglu,rope}.py.
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=sgd device=cuda" --vram-print-memory -o /dev/null | FileCheck %s

// LigerRMSNormFunction over 256 rows of H = 256, float32, as on an H100
// (132 SMs: partial_rows = 132). Forward: Y [256, 256] (262,144 B) and
// RSTD, one float32 per row (1,024 B), saved with X and W. Backward:
// in_place writes dX over dY (no tensor), _dW [132, 256] float32 (135,168
// B) and dW = _dW.sum(0) [256] float32 (1,024 B, the gradient: .to(W.dtype)
// is a no-op).
// CHECK-LABEL: memory of @step
// CHECK: nn.liger_rms_norm (forward):
// CHECK-NEXT: alloc #{{[0-9]+}} 262144 activations nn.liger_rms_norm tensor<256x256xf32>
// CHECK-NEXT: live
// CHECK-NEXT: nn.saved (forward):
// CHECK-NEXT: alloc #{{[0-9]+}} 1024 activations nn.saved tensor<256xf32>
// The head's backward makes dY [256, 256]; the norm's node allocates only:
// CHECK: nn.backward#0 tensor<256x256xf32>
// CHECK: nn.backward (backward):
// CHECK-NEXT: alloc #{{[0-9]+}} 1024 gradients nn.backward tensor<256xf32>
// CHECK-NEXT: alloc #{{[0-9]+}} 135168 temporaries workspace of nn.backward
// CHECK-NEXT: live
func.func @forward(%x: tensor<256x256xf32>) -> tensor<256x10xf32> {
  %w0 = nn.param "proj.weight" : tensor<256x256xf32>
  %h = nn.linear %x, %w0 : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %g = nn.param "norm.weight" : tensor<256xf32>
  %n = nn.liger_rms_norm %h, %g {partial_rows = 132 : i64} : (tensor<256x256xf32>, tensor<256xf32>) -> tensor<256x256xf32>
  %w1 = nn.param "head.weight" : tensor<10x256xf32>
  %y = nn.linear %n, %w1 : (tensor<256x256xf32>, tensor<10x256xf32>) -> tensor<256x10xf32>
  return %y : tensor<256x10xf32>
}

// -----

// bfloat16, one partial row (the CPU's). RSTD stays float32 (casting mode
// llama): 1,024 B. Backward: _dW [1, 256] float32 (1,024 B), its float32
// sum (1,024 B) and the sum's bfloat16 copy, the gradient (512 B).
// CHECK-LABEL: memory of @step
// CHECK: nn.liger_rms_norm (forward):
// CHECK-NEXT: alloc #{{[0-9]+}} 131072 activations nn.liger_rms_norm tensor<256x256xbf16>
// CHECK-NEXT: live
// CHECK-NEXT: nn.saved (forward):
// CHECK-NEXT: alloc #{{[0-9]+}} 1024 activations nn.saved tensor<256xf32>
// CHECK: nn.backward#0 tensor<256x256xbf16>
// CHECK: nn.backward (backward):
// CHECK-NEXT: alloc #{{[0-9]+}} 512 gradients nn.backward tensor<256xbf16>
// CHECK-NEXT: alloc #{{[0-9]+}} 1024 temporaries workspace of nn.backward
// CHECK-NEXT: alloc #{{[0-9]+}} 1024 temporaries workspace of nn.backward
// CHECK-NEXT: live
func.func @forward(%x: tensor<256x256xbf16>) -> tensor<256x10xbf16> {
  %w0 = nn.param "proj.weight" : tensor<256x256xbf16>
  %h = nn.linear %x, %w0 : (tensor<256x256xbf16>, tensor<256x256xbf16>) -> tensor<256x256xbf16>
  %g = nn.param "norm.weight" : tensor<256xbf16>
  %n = nn.liger_rms_norm %h, %g : (tensor<256x256xbf16>, tensor<256xbf16>) -> tensor<256x256xbf16>
  %w1 = nn.param "head.weight" : tensor<10x256xbf16>
  %y = nn.linear %n, %w1 : (tensor<256x256xbf16>, tensor<10x256xbf16>) -> tensor<256x10xbf16>
  return %y : tensor<256x10xbf16>
}

// -----

// LigerSiLUMulFunction: c = silu(a) * b [256, 688] (704,512 B) is the only
// new tensor; it keeps a and b (the projections' outputs, no silu output),
// and its backward writes da and db over them: the node allocates nothing
// and frees dc, and each projection's backward then frees its da or db.
// CHECK-LABEL: memory of @step
// CHECK: nn.liger_swiglu (forward):
// CHECK-NEXT: alloc #{{[0-9]+}} 704512 activations nn.liger_swiglu tensor<256x688xf32>
// CHECK-NEXT: live
// CHECK: alloc #[[DC:[0-9]+]] 704512 temporaries nn.backward#0 tensor<256x688xf32>
// CHECK: nn.backward (backward):
// CHECK-NEXT: live
// CHECK-NEXT: free #[[DC]]
// CHECK-NEXT: nn.backward (backward):
// CHECK-NEXT: alloc #{{[0-9]+}} 704512 gradients nn.backward tensor<688x256xf32>
func.func @forward(%x: tensor<256x256xf32>) -> tensor<256x10xf32> {
  %wg = nn.param "mlp.gate_proj.weight" : tensor<688x256xf32>
  %wu = nn.param "mlp.up_proj.weight" : tensor<688x256xf32>
  %wd = nn.param "mlp.down_proj.weight" : tensor<10x688xf32>
  %g = nn.linear %x, %wg : (tensor<256x256xf32>, tensor<688x256xf32>) -> tensor<256x688xf32>
  %u = nn.linear %x, %wu : (tensor<256x256xf32>, tensor<688x256xf32>) -> tensor<256x688xf32>
  %h = nn.liger_swiglu %g, %u : tensor<256x688xf32>
  %y = nn.linear %h, %wd : (tensor<256x688xf32>, tensor<10x688xf32>) -> tensor<256x10xf32>
  return %y : tensor<256x10xf32>
}

// -----

// LigerRopeFunction on q [2, 8, 128, 32] and k [2, 2, 128, 32], each the
// transpose(1, 2) of a projection's output viewed as heads: the kernel
// rotates those outputs in place (no tensor), keeps cos and sin (buffers
// here), and hands attention q and k laid out as [B, T, H, D]: the fused
// kernel's output follows q's layout, so merging its heads copies nothing.
// Its backward rotates dq and dk in place: no tensor either.
// CHECK-LABEL: memory of @step
// CHECK: nn.liger_rope (forward):
// CHECK-NEXT: live
// CHECK-NEXT: nn.scaled_dot_product_attention (forward):
// CHECK-NEXT: alloc #{{[0-9]+}} 262144 activations nn.scaled_dot_product_attention tensor<2x8x128x32xf32>
// CHECK-NOT: nn.contiguous
// CHECK: alloc #{{[0-9]+}} 65536 temporaries nn.backward#2 tensor<2x2x128x32xf32>
// CHECK-NEXT: live
// CHECK: nn.backward (backward):
// CHECK-NEXT: live
// CHECK-NEXT: nn.backward (backward):
func.func @forward(%x: tensor<2x128x256xf32>) -> tensor<256x10xf32> {
  %wq = nn.param "attn.q_proj.weight" : tensor<256x256xf32>
  %wk = nn.param "attn.k_proj.weight" : tensor<64x256xf32>
  %wv = nn.param "attn.v_proj.weight" : tensor<64x256xf32>
  %wo = nn.param "head.weight" : tensor<10x256xf32>
  %cos = nn.buffer "rotary.cos" : tensor<1x128x32xf32>
  %sin = nn.buffer "rotary.sin" : tensor<1x128x32xf32>
  %q0 = nn.linear %x, %wq : (tensor<2x128x256xf32>, tensor<256x256xf32>) -> tensor<2x128x256xf32>
  %q1 = nn.reshape %q0 : tensor<2x128x256xf32> -> tensor<2x128x8x32xf32>
  %q = nn.transpose %q1 {dim0 = 1 : i64, dim1 = 2 : i64} : (tensor<2x128x8x32xf32>) -> tensor<2x8x128x32xf32>
  %k0 = nn.linear %x, %wk : (tensor<2x128x256xf32>, tensor<64x256xf32>) -> tensor<2x128x64xf32>
  %k1 = nn.reshape %k0 : tensor<2x128x64xf32> -> tensor<2x128x2x32xf32>
  %k = nn.transpose %k1 {dim0 = 1 : i64, dim1 = 2 : i64} : (tensor<2x128x2x32xf32>) -> tensor<2x2x128x32xf32>
  %v0 = nn.linear %x, %wv : (tensor<2x128x256xf32>, tensor<64x256xf32>) -> tensor<2x128x64xf32>
  %v1 = nn.reshape %v0 : tensor<2x128x64xf32> -> tensor<2x128x2x32xf32>
  %v = nn.transpose %v1 {dim0 = 1 : i64, dim1 = 2 : i64} : (tensor<2x128x2x32xf32>) -> tensor<2x2x128x32xf32>
  %qr, %kr = nn.liger_rope %q, %k, %cos, %sin {query_grad_in_place, key_grad_in_place} : (tensor<2x8x128x32xf32>, tensor<2x2x128x32xf32>, tensor<1x128x32xf32>, tensor<1x128x32xf32>) -> (tensor<2x8x128x32xf32>, tensor<2x2x128x32xf32>)
  %o = nn.scaled_dot_product_attention %qr, %kr, %v {causal, enable_gqa} : (tensor<2x8x128x32xf32>, tensor<2x2x128x32xf32>, tensor<2x2x128x32xf32>) -> tensor<2x8x128x32xf32>
  %o1 = nn.transpose %o {dim0 = 1 : i64, dim1 = 2 : i64} : (tensor<2x8x128x32xf32>) -> tensor<2x128x8x32xf32>
  %o2 = nn.reshape %o1 : tensor<2x128x8x32xf32> -> tensor<256x256xf32>
  %y = nn.linear %o2, %wo : (tensor<256x256xf32>, tensor<10x256xf32>) -> tensor<256x10xf32>
  return %y : tensor<256x10xf32>
}
