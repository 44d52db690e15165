// The mixture-of-experts ops (nn.topk, nn.sum, nn.moe_dispatch,
// nn.grouped_mm; rows gathered with nn.embedding) and the in-place division
// of the router: round trip, then
// what their backward nodes keep, hand-computed below, and the experts'
// FLOPs.
// RUN: vram-opt --format=mlir %s -split-input-file | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: vram-opt %s -split-input-file --mode=train --format=json | FileCheck %s --check-prefix=SAVED
// RUN: vram-opt %s -split-input-file --mode=train --flops=flops --format=json | FileCheck %s --check-prefix=FLOPS

// The router (MixtralTopKRouter) over 4 tokens and 3 experts, 2 a token:
// softmax keeps its output [4, 3] f32 (48 B), topk its indices [4, 2] i64
// (64 B); `w /= w.sum(-1, keepdim=True)` keeps a clone of w made before it
// overwrites it ([4, 2] f32, 32 B) and the sum ([4, 1], 16 B): 160. The
// logits are not kept (softmax's backward needs its output).
// ROUNDTRIP-LABEL: func.func @forward
// ROUNDTRIP: nn.topk %{{.*}} {k = 2 : i64} : (tensor<4x3xf32>) -> (tensor<4x2xf32>, tensor<4x2xi64>)
// ROUNDTRIP: nn.sum %{{.*}} {dims = array<i64: -1>, keepdim} : (tensor<4x2xf32>) -> tensor<4x1xf32>
// ROUNDTRIP: nn.div %{{.*}}, %{{.*}} {inplace}
// SAVED-NOT: "saved_for_backward_bytes"
// SAVED: "saved_for_backward_bytes": 160,
// FLOPs (flop_counter's convention): the router's linear 2 x 4 x 8 x 3 =
// 192, its weight gradient 192; topk, sum and div count nothing.
// FLOPS: "backward": 192,
// FLOPS: "forward": 192,
func.func @forward(%x: tensor<4x8xf32>) -> tensor<4x2xf32> {
  %w = nn.param "gate.weight" : tensor<3x8xf32>
  %logits = nn.linear %x, %w : (tensor<4x8xf32>, tensor<3x8xf32>) -> tensor<4x3xf32>
  %p = nn.softmax %logits {dim = -1 : i64} : tensor<4x3xf32>
  %v, %i = nn.topk %p {k = 2 : i64} : (tensor<4x3xf32>) -> (tensor<4x2xf32>, tensor<4x2xi64>)
  %s = nn.sum %v {dims = array<i64: -1>, keepdim} : (tensor<4x2xf32>) -> tensor<4x1xf32>
  %n = nn.div %v, %s {inplace} : (tensor<4x2xf32>, tensor<4x1xf32>) -> tensor<4x2xf32>
  return %n : tensor<4x2xf32>
}

// -----

// The experts (grouped_mm_experts_forward) over 4 tokens, 2 experts each of
// 3, S = 8 pairs, hidden 8, expert width 6, with the routing given:
//   rows = h[token_index] (an embedding gather) keeps token_index (8 x
//     i64, 64 B);
//   gate_up = grouped_mm(rows, W1) keeps rows (8 x 8 f32, 256 B) and the
//     offsets (3 x i32, 12 B; the second grouped_mm keeps the same tensor);
//   silu(gate) and `* up` keep gate_up's storage once (8 x 12 f32, 384 B)
//     and silu's output (8 x 6, 192 B);
//   grouped_mm(m, W2) keeps m (8 x 6, 192 B);
//   `down * pair_weights` keeps the weights (8 x 1 f32, 32 B; the given
//     weights need no gradient, so down itself is not kept);
//   y[inverse] keeps inverse (8 x i64, 64 B); sum keeps nothing.
// 64 + 256 + 12 + 384 + 192 + 192 + 32 + 64 = 1196.
// ROUNDTRIP-LABEL: func.func @forward
// ROUNDTRIP: nn.moe_dispatch %{{.*}} {num_experts = 3 : i64} : tensor<4x2xi64> -> (tensor<8xi64>, tensor<8xi64>, tensor<8xi64>, tensor<8xi32>, tensor<3xi32>, tensor<3xi32>, tensor<8xi64>)
// ROUNDTRIP: nn.grouped_mm %{{.*}}, %{{.*}}, %{{.*}} : (tensor<8x8xf32>, tensor<3x12x8xf32>, tensor<3xi32>) -> tensor<8x12xf32>
// SAVED-NOT: "saved_for_backward_bytes"
// SAVED: "saved_for_backward_bytes": 1196,
// FLOPs: each row meets one expert, so a grouped_mm is one [S, in] x
// [in, out] product whatever the routing: 2 x 8 x 8 x 12 = 1536 and
// 2 x 8 x 6 x 8 = 768, the linear's 2 x 4 x 8 x 8 = 512: 2816 forward;
// backward both gradients of each grouped_mm and the linear's weight
// gradient: 3072 + 1536 + 512 = 5120.
// FLOPS: "backward": 5120,
// FLOPS: "forward": 2816,
func.func @forward(%x: tensor<4x8xf32>, %idx: tensor<4x2xi64>, %weights: tensor<4x2xf32>) -> tensor<4x8xf32> {
  %w0 = nn.param "proj.weight" : tensor<8x8xf32>
  %h = nn.linear %x, %w0 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %sorted, %perm, %token, %histogram, %counts, %offsets, %inverse = nn.moe_dispatch %idx {num_experts = 3 : i64}
      : tensor<4x2xi64> -> (tensor<8xi64>, tensor<8xi64>, tensor<8xi64>, tensor<8xi32>, tensor<3xi32>, tensor<3xi32>, tensor<8xi64>)
  %rows = nn.embedding %h, %token : (tensor<4x8xf32>, tensor<8xi64>) -> tensor<8x8xf32>
  %flat = nn.reshape %weights : tensor<4x2xf32> -> tensor<8x1xf32>
  %pw2 = nn.embedding %flat, %perm : (tensor<8x1xf32>, tensor<8xi64>) -> tensor<8x1xf32>
  %w1 = nn.param "experts.gate_up_proj" : tensor<3x12x8xf32>
  %gu = nn.grouped_mm %rows, %w1, %offsets : (tensor<8x8xf32>, tensor<3x12x8xf32>, tensor<3xi32>) -> tensor<8x12xf32>
  %gate = nn.slice %gu {dim = 1 : i64, start = 0 : i64, end = 6 : i64} : (tensor<8x12xf32>) -> tensor<8x6xf32>
  %up = nn.slice %gu {dim = 1 : i64, start = 6 : i64, end = 12 : i64} : (tensor<8x12xf32>) -> tensor<8x6xf32>
  %a = nn.silu %gate : tensor<8x6xf32>
  %m = nn.mul %a, %up : (tensor<8x6xf32>, tensor<8x6xf32>) -> tensor<8x6xf32>
  %w2 = nn.param "experts.down_proj" : tensor<3x8x6xf32>
  %down = nn.grouped_mm %m, %w2, %offsets : (tensor<8x6xf32>, tensor<3x8x6xf32>, tensor<3xi32>) -> tensor<8x8xf32>
  %y = nn.mul %down, %pw2 : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
  %yo = nn.embedding %y, %inverse : (tensor<8x8xf32>, tensor<8xi64>) -> tensor<8x8xf32>
  %y3 = nn.reshape %yo : tensor<8x8xf32> -> tensor<4x2x8xf32>
  %out = nn.sum %y3 {dims = array<i64: 1>} : (tensor<4x2x8xf32>) -> tensor<4x8xf32>
  return %out : tensor<4x8xf32>
}
