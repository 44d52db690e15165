// RUN: vram-opt %s -split-input-file --vram-precision="precision=amp-fp16" | FileCheck %s --check-prefix=AMP
// RUN: vram-opt %s -split-input-file --vram-precision="precision=amp-bf16" | FileCheck %s --check-prefix=BF16
// RUN: vram-opt %s -split-input-file --vram-precision="precision=fp16" | FileCheck %s --check-prefix=HALF
// RUN: vram-opt %s -split-input-file --vram-precision="precision=fp32" | FileCheck %s --check-prefix=FP32

// torch.autocast (aten/src/ATen/autocast_mode.cpp, CUDA): conv and linear run
// in fp16, so their input and weights are cast; batch_norm and relu run in
// their input's dtype (batch_norm keeps fp32 weights and statistics). The
// trainable conv weight is cast once and cached until the region exits; the
// frozen fc weight is cast again at each of its two uses.
// AMP-LABEL: func.func @forward(%arg0: tensor<2x3x8x8xf32>) -> tensor<2x10xf16> attributes {nn.autocast = f16}
// AMP: %[[W:.*]] = nn.param "conv.weight" : tensor<4x3x3x3xf32>
// AMP-NEXT: %[[XH:.*]] = nn.cast %arg0 : tensor<2x3x8x8xf32> to tensor<2x3x8x8xf16>
// AMP-NEXT: %[[WH:.*]] = nn.cast %[[W]] : tensor<4x3x3x3xf32> to tensor<4x3x3x3xf16>
// AMP-NEXT: %[[Y:.*]] = nn.conv2d %[[XH]], %[[WH]] {{.*}} -> tensor<2x4x8x8xf16>
// AMP: nn.batch_norm %[[Y]] {{.*}} : (tensor<2x4x8x8xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf16>
// AMP-NEXT: nn.relu %{{.*}} {inplace} : tensor<2x4x8x8xf16>
// AMP-NEXT: nn.flatten {{.*}} -> tensor<2x256xf16>
// AMP-NEXT: %[[FW:.*]] = nn.param "fc.weight" {trainable = false} : tensor<10x256xf32>
// AMP-NEXT: %[[FH1:.*]] = nn.cast %[[FW]] : tensor<10x256xf32> to tensor<10x256xf16>
// AMP-NEXT: nn.linear %{{.*}}, %[[FH1]]
// AMP-NEXT: %[[FH2:.*]] = nn.cast %[[FW]] : tensor<10x256xf32> to tensor<10x256xf16>
// AMP-NEXT: nn.linear %{{.*}}, %[[FH2]]
// AMP-NEXT: nn.add {{.*}} -> tensor<2x10xf16>
// AMP-NEXT: nn.autocast_exit %[[WH]] : tensor<4x3x3x3xf16>
// AMP-NEXT: return

// BF16: func.func @forward(%arg0: tensor<2x3x8x8xf32>) -> tensor<2x10xbf16> attributes {nn.autocast = bf16}
// BF16: nn.cast %arg0 : tensor<2x3x8x8xf32> to tensor<2x3x8x8xbf16>

// model.half(): parameters, buffers and inputs in fp16, no casts.
// HALF-LABEL: func.func @forward(%arg0: tensor<2x3x8x8xf16>) -> tensor<2x10xf16> {
// HALF-NOT: nn.cast
// HALF: nn.param "conv.weight" : tensor<4x3x3x3xf16>
// HALF: nn.buffer "bn.running_mean" : tensor<4xf16>
// HALF: nn.batch_norm {{.*}} : (tensor<2x4x8x8xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>) -> tensor<2x4x8x8xf16>
// HALF-NOT: nn.cast
// HALF: return {{.*}} : tensor<2x10xf16>

// FP32-LABEL: func.func @forward(%arg0: tensor<2x3x8x8xf32>) -> tensor<2x10xf32> {
// FP32-NOT: nn.cast
func.func @forward(%x: tensor<2x3x8x8xf32>) -> tensor<2x10xf32> {
  %w = nn.param "conv.weight" : tensor<4x3x3x3xf32>
  %y = nn.conv2d %x, %w {padding = array<i64: 1, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32>
  %g = nn.param "bn.weight" : tensor<4xf32>
  %b = nn.param "bn.bias" : tensor<4xf32>
  %m = nn.buffer "bn.running_mean" : tensor<4xf32>
  %v = nn.buffer "bn.running_var" : tensor<4xf32>
  %n = nn.batch_norm %y weight %g bias %b stats %m, %v : (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf32>
  %r = nn.relu %n {inplace} : tensor<2x4x8x8xf32>
  %f = nn.flatten %r {start_dim = 1 : i64} : (tensor<2x4x8x8xf32>) -> tensor<2x256xf32>
  %fw = nn.param "fc.weight" {trainable = false} : tensor<10x256xf32>
  %o = nn.linear %f, %fw : (tensor<2x256xf32>, tensor<10x256xf32>) -> tensor<2x10xf32>
  %o2 = nn.linear %f, %fw : (tensor<2x256xf32>, tensor<10x256xf32>) -> tensor<2x10xf32>
  %s = nn.add %o, %o2 : (tensor<2x10xf32>, tensor<2x10xf32>) -> tensor<2x10xf32>
  return %s : tensor<2x10xf32>
}

// -----

// A transformer-style block: layer_norm is on autocast's fp32 list, so its
// fp16 input is cast back to fp32 (a copy); softmax runs with dtype=float
// (an fp32 result, no copy of its input); the next matmul casts the fp32
// probabilities to fp16; the residual add of fp16 and fp32 promotes to fp32
// without a copy. A trainable weight used twice is cast once.
// AMP-LABEL: func.func @forward(%arg0: tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// AMP: %[[W:.*]] = nn.param "proj.weight" : tensor<8x8xf32>
// AMP-NEXT: %[[XH:.*]] = nn.cast %arg0 : tensor<2x4x8xf32> to tensor<2x4x8xf16>
// AMP-NEXT: %[[WH:.*]] = nn.cast %[[W]] : tensor<8x8xf32> to tensor<8x8xf16>
// AMP-NEXT: %[[H:.*]] = nn.linear %[[XH]], %[[WH]] {{.*}} -> tensor<2x4x8xf16>
// AMP: %[[H32:.*]] = nn.cast %[[H]] : tensor<2x4x8xf16> to tensor<2x4x8xf32>
// AMP-NEXT: %[[LN:.*]] = nn.layer_norm %[[H32]] {{.*}} -> tensor<2x4x8xf32>
// AMP-NEXT: %[[LNH:.*]] = nn.cast %[[LN]] : tensor<2x4x8xf32> to tensor<2x4x8xf16>
// AMP-NEXT: %[[H2:.*]] = nn.linear %[[LNH]], %[[WH]] {{.*}} -> tensor<2x4x8xf16>
// AMP-NEXT: %[[P:.*]] = nn.softmax %[[H2]] {dim = -1 : i64, dtype = f32} : tensor<2x4x8xf16>
// AMP-NEXT: %[[S:.*]] = nn.add %[[P]], %[[H]] : (tensor<2x4x8xf32>, tensor<2x4x8xf16>) -> tensor<2x4x8xf32>
// AMP-NEXT: nn.autocast_exit %[[WH]] : tensor<8x8xf16>
// AMP-NEXT: return %[[S]] : tensor<2x4x8xf32>
func.func @forward(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %w = nn.param "proj.weight" : tensor<8x8xf32>
  %h = nn.linear %x, %w : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
  %g = nn.param "ln.weight" : tensor<8xf32>
  %b = nn.param "ln.bias" : tensor<8xf32>
  %ln = nn.layer_norm %h weight %g bias %b {normalized_rank = 1 : i64} : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %h2 = nn.linear %ln, %w : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
  %p = nn.softmax %h2 {dim = -1 : i64} : tensor<2x4x8xf32>
  %s = nn.add %p, %h : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %s : tensor<2x4x8xf32>
}

// -----

// torch.cat promotes: the fp16 operand is cast to fp32 (a copy).
// AMP-LABEL: func.func @forward(%arg0: tensor<2x4xf32>) -> tensor<2x12xf32>
// AMP: %[[H:.*]] = nn.linear {{.*}} -> tensor<2x8xf16>
// AMP-NEXT: %[[H32:.*]] = nn.cast %[[H]] : tensor<2x8xf16> to tensor<2x8xf32>
// AMP-NEXT: nn.concat %[[H32]], %arg0 {{.*}} -> tensor<2x12xf32>
func.func @forward(%x: tensor<2x4xf32>) -> tensor<2x12xf32> {
  %w = nn.param "fc.weight" : tensor<8x4xf32>
  %h = nn.linear %x, %w : (tensor<2x4xf32>, tensor<8x4xf32>) -> tensor<2x8xf32>
  %c = nn.concat %h, %x {dim = 1 : i64} : (tensor<2x8xf32>, tensor<2x4xf32>) -> tensor<2x12xf32>
  return %c : tensor<2x12xf32>
}

// -----

// transformers' RMSNorm runs in float32 whatever the model's dtype (the ops
// carry nn.float32): in an fp16 model x is cast up once, for pow and the
// mul, and the normalized result cast back down (`.to(input_dtype)`) before
// the weight scales it. In an fp32 model nothing changes.
// HALF-LABEL: func.func @forward(%arg0: tensor<2x8xf16>) -> tensor<2x8xf16>
// HALF: %[[W:.*]] = nn.param "norm.weight" : tensor<8xf16>
// HALF-NEXT: %[[X:.*]] = nn.cast %arg0 : tensor<2x8xf16> to tensor<2x8xf32>
// HALF-NEXT: %[[SQ:.*]] = nn.pow %[[X]] {exponent = 2.000000e+00 : f64, nn.float32} : tensor<2x8xf32>
// HALF-NEXT: nn.mean %[[SQ]] {{.*}} -> tensor<2x1xf32>
// HALF-NEXT: nn.constant
// HALF-NEXT: nn.add {{.*}} -> tensor<2x1xf32>
// HALF-NEXT: %[[R:.*]] = nn.rsqrt {{.*}} : tensor<2x1xf32>
// HALF-NEXT: %[[N:.*]] = nn.mul %[[X]], %[[R]] {nn.float32} : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
// HALF-NEXT: %[[N16:.*]] = nn.cast %[[N]] : tensor<2x8xf32> to tensor<2x8xf16>
// HALF-NEXT: nn.mul %[[W]], %[[N16]] : (tensor<8xf16>, tensor<2x8xf16>) -> tensor<2x8xf16>
// FP32-LABEL: func.func @forward(%arg0: tensor<2x8xf32>) -> tensor<2x8xf32>
// FP32-NOT: nn.cast
// FP32: return
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = nn.param "norm.weight" : tensor<8xf32>
  %sq = nn.pow %x {exponent = 2.0 : f64, nn.float32} : tensor<2x8xf32>
  %var = nn.mean %sq {dims = array<i64: -1>, keepdim, nn.float32} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  %eps = nn.constant dense<1.0e-05> : tensor<f32>
  %sh = nn.add %var, %eps {nn.float32} : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %r = nn.rsqrt %sh {nn.float32} : tensor<2x1xf32>
  %n = nn.mul %x, %r {nn.float32} : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  %y = nn.mul %w, %n : (tensor<8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// transformers' T5LayerNorm multiplies the input as it is by the float32
// rsqrt (nn.promote): in an fp16 model the product is float32 without
// casting x up for it, and `.to(self.weight.dtype)` casts it down. Only
// pow reads x's float32 copy. A tensor the code creates in the model's
// dtype (torch.zeros(..., dtype=query.dtype): nn.constant {model_dtype})
// becomes fp16; a plain constant (torch.tensor(eps)) stays float32.
// HALF-LABEL: func.func @forward(%arg0: tensor<2x8xf16>) -> (tensor<2x8xf16>, tensor<1x2x8xf16>)
// HALF: %[[W:.*]] = nn.param "norm.weight" : tensor<8xf16>
// HALF-NEXT: %[[X:.*]] = nn.cast %arg0 : tensor<2x8xf16> to tensor<2x8xf32>
// HALF-NEXT: nn.pow %[[X]]
// HALF: nn.constant dense<9.99999974E-6> : tensor<f32>
// HALF: %[[R:.*]] = nn.rsqrt {{.*}} : tensor<2x1xf32>
// HALF-NEXT: %[[N:.*]] = nn.mul %arg0, %[[R]] {nn.promote} : (tensor<2x8xf16>, tensor<2x1xf32>) -> tensor<2x8xf32>
// HALF-NEXT: %[[N16:.*]] = nn.cast %[[N]] : tensor<2x8xf32> to tensor<2x8xf16>
// HALF-NEXT: nn.mul %[[W]], %[[N16]] : (tensor<8xf16>, tensor<2x8xf16>) -> tensor<2x8xf16>
// HALF-NEXT: nn.constant dense<0.000000e+00> : tensor<1x2x8xf16> {model_dtype}
// FP32-LABEL: func.func @forward(%arg0: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<1x2x8xf32>)
// FP32-NOT: nn.cast
// FP32: nn.constant dense<0.000000e+00> : tensor<1x2x8xf32> {model_dtype}
func.func @forward(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<1x2x8xf32>) {
  %w = nn.param "norm.weight" : tensor<8xf32>
  %sq = nn.pow %x {exponent = 2.0 : f64, nn.float32} : tensor<2x8xf32>
  %var = nn.mean %sq {dims = array<i64: -1>, keepdim, nn.float32} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  %eps = nn.constant dense<1.0e-05> : tensor<f32>
  %sh = nn.add %var, %eps {nn.float32} : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %r = nn.rsqrt %sh {nn.float32} : tensor<2x1xf32>
  %n = nn.mul %x, %r {nn.promote} : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  %y = nn.mul %w, %n : (tensor<8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %z = nn.constant dense<0.0> : tensor<1x2x8xf32> {model_dtype}
  return %y, %z : tensor<2x8xf32>, tensor<1x2x8xf32>
}
