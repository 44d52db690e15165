// Hand-computed liveness of small steps (fp32, 4 bytes per element).
// RUN: vram-opt %s -split-input-file --mode=train --optimizer=adam --format=json | FileCheck %s --check-prefix=ADAM
// RUN: vram-opt %s -split-input-file --mode=train --optimizer=sgd --format=json | FileCheck %s --check-prefix=SGD
// RUN: vram-opt %s -split-input-file --mode=train --optimizer=momentum --format=json | FileCheck %s --check-prefix=MOM
// RUN: vram-opt %s -split-input-file --mode=train --optimizer=adam --optimizer-impl=fused --format=json | FileCheck %s --check-prefix=FUSED
// RUN: vram-opt %s -split-input-file --mode=inference --format=json | FileCheck %s --check-prefix=INFER
// RUN: vram-opt %s -split-input-file --mode=train --optimizer=adam --weight-decay=0.01 --format=json | FileCheck %s --check-prefix=ADAMWD
// RUN: vram-opt %s -split-input-file --mode=train --optimizer=adamw --weight-decay=0.01 --format=json | FileCheck %s --check-prefix=ADAMW
// RUN: vram-opt %s -split-input-file --mode=train --optimizer=sgd --set-to-none=false --format=json | FileCheck %s --check-prefix=KEEPGRAD

// conv(3->4, 3x3, pad 1) -> relu_ -> adaptive_avg_pool(1x1) -> flatten -> fc(4->4).
// Persistent: params 432+64+16 = 512, Adam state 2 x 512, inputs 1536 + 16
// (image + int64 targets) = 3088. Saved for backward: conv output 2048 (kept
// by relu_), flattened pool output 32; the conv input is a model input.
// Peak at relu's backward: 3088 + conv output 2048 + incoming grad 2048 + its
// grad 2048 + fc grads 64+16 + loss 4 = 9316.
// ADAM: "memory": {
// ADAM: "at_peak": {
// ADAM-NEXT: "activations": 2048,
// ADAM-NEXT: "buffers": 0,
// ADAM-NEXT: "gradients": 80,
// ADAM-NEXT: "inputs": 1552,
// ADAM-NEXT: "kv_cache": 0,
// ADAM-NEXT: "optimizer_state": 1024,
// ADAM-NEXT: "parameters": 512,
// ADAM-NEXT: "temporaries": 4100
// ADAM: "peak_bytes": 9316,
// ADAM-NEXT: "peak_op": {
// ADAM-NEXT: "location": "{{.*}}memory.mlir{{.*}}:[[@LINE+8]]:8",
// ADAM-NEXT: "name": "{{.*}}:[[@LINE+7]]",
// ADAM-NEXT: "op": "nn.backward",
// ADAM-NEXT: "phase": "backward"
// ADAM: "saved_for_backward_bytes": 2080,
func.func @forward(%x: tensor<2x3x8x8xf32>) -> tensor<2x4xf32> {
  %w = nn.param "conv.weight" : tensor<4x3x3x3xf32>
  %y = nn.conv2d %x, %w {padding = array<i64: 1, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32>
  %r = nn.relu %y {inplace} : tensor<2x4x8x8xf32>
  %p = nn.adaptive_avg_pool2d %r {output_size = array<i64: 1, 1>} : (tensor<2x4x8x8xf32>) -> tensor<2x4x1x1xf32>
  %f = nn.flatten %p : (tensor<2x4x1x1xf32>) -> tensor<2x4xf32>
  %fw = nn.param "fc.weight" : tensor<4x4xf32>
  %fb = nn.param "fc.bias" : tensor<4xf32>
  %o = nn.linear %f, %fw, %fb : (tensor<2x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %o : tensor<2x4xf32>
}
// Without Adam state (1024) / with one momentum buffer (512).
// SGD: "peak_bytes": 8292,
// MOM: "peak_bytes": 8804,
// FUSED: "peak_bytes": 9316,
// Inference at the pool: params 512 + image 1536 + conv output 2048 + pool
// output 32 = 4128.
// INFER: "peak_bytes": 4128,

// -----

// One 256x256 linear layer, batch 1: parameters P = 262144 bytes dominate.
// Adam at the update: P + state 2P + input 1024 + target 8 + grad P + loss 4
// + foreach workspace (exp_avg_sq.sqrt(), P) = 5P + 1036 = 1311756.
// ADAM: "at_peak": {
// ADAM-NEXT: "activations": 0,
// ADAM-NEXT: "buffers": 0,
// ADAM-NEXT: "gradients": 262144,
// ADAM-NEXT: "inputs": 1032,
// ADAM-NEXT: "kv_cache": 0,
// ADAM-NEXT: "optimizer_state": 524288,
// ADAM-NEXT: "parameters": 262144,
// ADAM-NEXT: "temporaries": 262148
// ADAM: "peak_bytes": 1311756,
// ADAM: "phase": "optimizer"
// SGD keeps no state: its peak is P + inputs 1032 + grad P + loss 4 ... at
// the linear's backward, where the logits' gradient (1024) is still alive.
// SGD: "peak_bytes": 526348,
// Momentum: one buffer per parameter.
// MOM: "optimizer_state": 262144,
// MOM: "peak_bytes": 788492,
// Fused Adam has no workspace: the peak moves to the linear's backward,
// 4P + inputs 1032 + loss 4 + logits' gradient 1024 = 1050636.
// FUSED: "peak_bytes": 1050636,
// INFER: "peak_bytes": 264192,
// Adam with coupled weight decay adds a grad-sized copy (grad + wd * p) to
// the foreach workspace: 6P + 1036. AdamW decays the weights directly: 5P + 1036.
// ADAMWD: "peak_bytes": 1573900,
// ADAMW: "peak_bytes": 1311756,
// zero_grad(set_to_none=False): the gradient stays allocated across steps,
// persistent P + inputs 1032 + .grad P = 525320. The linear's backward still
// computes a new weight gradient P, which AccumulateGrad adds into .grad and
// drops (as torch does: measured on resnet18, test/Transforms/
// grad-accum.test): the peak is there, 525320 + P + the logits' gradient
// (1024) + the loss (4) = 788492.
// KEEPGRAD: "peak_bytes": 788492,
// KEEPGRAD-NEXT: "peak_op": {
// KEEPGRAD: "persistent_bytes": 525320,
func.func @forward(%x: tensor<1x256xf32>) -> tensor<1x256xf32> {
  %w = nn.param "fc.weight" : tensor<256x256xf32>
  %o = nn.linear %x, %w : (tensor<1x256xf32>, tensor<256x256xf32>) -> tensor<1x256xf32>
  return %o : tensor<1x256xf32>
}
