// nn.all_gather_output (ColwiseParallel with Replicate() output,
// transformers' "colwise_gather_output" for lm_head) in one rank's step
// (tp=2): all_gather_into_tensor fills a [2 x 4, 4] buffer (the op's
// workspace) and the chunks are concatenated along the last dim into a new
// [4, 8] tensor; backward clones this rank's columns of the gradient.
//
// Inference, by hand (CPU, fp32): persistent x [4, 8] 128 B, w0 [8, 8]
// 256 B and the lm_head shard w [4, 8] 128 B: 512. a = linear(x, w0)
// [4, 8] 128 B; all_reduce_grad(a) is a; s = linear(a, w) [4, 4] 64 B (a
// alive: 192); the gather holds s, the buffer and y: 64 + 128 + 128 = 320.
// Peak 512 + 320 = 832.
// RUN: vram-opt %s -split-input-file --mode=inference --device=cpu --parallel=tp=2 --format=json | FileCheck %s --check-prefix=INFER
// INFER: "peak_bytes": 832,
// INFER: "op": "nn.all_gather_output",
//
// Training: per step the rank all-gathers y (128 B) and all-reduces the
// gradient of a (128 B); a ring over 2 ranks sends 2 (2 - 1) / 2 x 128 +
// (2 - 1) / 2 x 128 = 192 bytes. A step with a gathered output is
// transformers' plan.
// RUN: vram-opt %s -split-input-file --mode=train --optimizer=sgd --device=cpu --parallel=tp=2 --format=json | FileCheck %s --check-prefix=TRAIN
// TRAIN: "tp": 2,
// TRAIN: "tp_plan": "transformers",
// TRAIN: "all_gather_bytes": 128,
// TRAIN: "all_reduce_bytes": 128,
// TRAIN: "sent_bytes": 192
//
// The step: a backward node for the gather (a new [4, 4] gradient).
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=sgd" | FileCheck %s --check-prefix=STEP
// STEP: nn.backward "nn.all_gather_output"{{.*}} -> tensor<4x4xf32>

func.func @forward(%x: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {nn.tensor_parallel = 2 : i64} {
  %w0 = nn.param "w0" : tensor<8x8xf32>
  %w = nn.param "lm_head.weight" : tensor<4x8xf32>
  %a = nn.linear %x, %w0 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %xa = nn.all_reduce_grad %a {ranks = 2 : i64} : tensor<4x8xf32>
  %s = nn.linear %xa, %w : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x4xf32>
  %y = nn.all_gather_output %s {ranks = 2 : i64} : tensor<4x4xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
