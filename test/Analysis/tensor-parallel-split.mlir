// nn.split_input (RowwiseParallel with Replicate() input, transformers'
// "rowwise_split_input" for Phi-3's o_proj and down_proj) in one rank's
// step (tp=2): this rank's columns of a replicated input, cloned; backward
// gathers the gradient's columns through all_gather_into_tensor's
// [2 x 4, 4] buffer (the node's workspace) into a new [4, 8] gradient.
//
// Inference, by hand (CPU, fp32): persistent x [4, 8] 128 B, w0 [8, 8]
// 256 B and the row shard w [8, 4] 128 B: 512. a = linear(x, w0) [4, 8]
// 128 B; c = split_input(a) [4, 4] 64 B (a alive: 192); p = linear(c, w)
// [4, 8] 128 B, partial sums (c alive: 192); y = all_reduce(p) 128 B (p
// alive: 256). Peak 512 + 256 = 768.
// RUN: vram-opt %s --mode=inference --device=cpu --parallel=tp=2 --format=json | FileCheck %s --check-prefix=INFER
// INFER: "peak_bytes": 768,
//
// Training: per step the rank all-gathers a's gradient (128 B) and
// all-reduces y (128 B): sent 2 (2 - 1) / 2 x 128 + (2 - 1) / 2 x 128 = 192.
// RUN: vram-opt %s --mode=train --optimizer=sgd --device=cpu --parallel=tp=2 --format=json | FileCheck %s --check-prefix=TRAIN
// TRAIN: "all_gather_bytes": 128,
// TRAIN: "all_reduce_bytes": 128,
// TRAIN: "sent_bytes": 192
//
// RUN: vram-opt %s --vram-build-step="mode=train optimizer=sgd" | FileCheck %s --check-prefix=STEP
// STEP: nn.backward "nn.split_input"{{.*}}workspace = array<i64: 128>{{.*}} -> tensor<4x8xf32>

func.func @forward(%x: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {nn.tensor_parallel = 2 : i64} {
  %w0 = nn.param "w0" : tensor<8x8xf32>
  %w = nn.param "w" : tensor<8x4xf32>
  %a = nn.linear %x, %w0 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %c = nn.split_input %a {ranks = 2 : i64} : tensor<4x8xf32> -> tensor<4x4xf32>
  %p = nn.linear %c, %w : (tensor<4x4xf32>, tensor<8x4xf32>) -> tensor<4x8xf32>
  %y = nn.all_reduce %p {ranks = 2 : i64} : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
