// Sequence parallelism in one rank's step (tp=2, torchtitan's plan): the
// positions (dim 1) split into this rank's half (nn.split_input dim 1:
// PrepareModuleInput Replicate -> Shard(1)), gathered before a
// column-parallel linear (nn.all_gather_output dim 1: Shard(1) ->
// Replicate, the [2 x d0, ...] buffer its workspace), the row-parallel
// partial sums reduce-scattered into this rank's positions
// (nn.reduce_scatter_output: the chunks concatenated along dim 0 into a
// copy, its workspace), and lm_head's input gathered as a DTensor whose
// partial gradient is reduce-scattered back (scatter_grad).
//
// Inference, by hand (CPU, fp32): persistent x [2, 4, 8] 256 B, w0 [8, 8]
// 256 B and w [4, 8] 128 B: 640. a = linear(x, w0) 256 B: live 896. The
// split holds a and s [2, 2, 8] 128 B: 1,024. The gather s, its buffer
// [4, 2, 8] 256 B and g [2, 4, 8] 256 B: 640, live 1,280, the peak. The
// linear g and p [2, 4, 4] 128 B: 1,024. The reduce-scatter p, its copy
// 128 B and r [2, 2, 4] 64 B: 960. The last gather r, its buffer 128 B and
// h [2, 4, 4] 128 B: 960.
// RUN: vram-opt %s -split-input-file --mode=inference --device=cpu --parallel=tp=2 --format=json --timeline | FileCheck %s --check-prefix=INFER
// INFER: "peak_bytes": 1280,
// INFER: "live_bytes": 1024,
// INFER-NEXT: "name":
// INFER-NEXT: "op": "nn.split_input",
// INFER: "live_bytes": 1280,
// INFER-NEXT: "name":
// INFER-NEXT: "op": "nn.all_gather_output",
// INFER: "live_bytes": 1024,
// INFER-NEXT: "name":
// INFER-NEXT: "op": "nn.linear",
// INFER: "live_bytes": 960,
// INFER-NEXT: "name":
// INFER-NEXT: "op": "nn.reduce_scatter_output",
// INFER: "live_bytes": 960,
// INFER-NEXT: "name":
// INFER-NEXT: "op": "nn.all_gather_output",
//
// Training (SGD, MSE loss): per step the rank all-gathers g (256 B) and h (128 B) in
// forward, and in backward p's gradient (128 B, the reduce-scatter's) and
// a's (256 B, the split's): 768 B; it reduce-scatters p (128 B) and h's
// gradient (128 B): 256 B; it all-reduces g's gradient (256 B, the
// column-parallel linear's input). A ring over 2 ranks sends (2 - 1) / 2
// of each all-gather and reduce-scatter and 2 (2 - 1) / 2 of each
// all-reduce: 384 + 128 + 256 = 768 B.
// RUN: vram-opt %s -split-input-file --mode=train --optimizer=sgd --loss=mse --device=cpu --parallel=tp=2 --format=json | FileCheck %s --check-prefix=TRAIN
// TRAIN: "sequence_parallel": true,
// TRAIN: "tp": 2,
// TRAIN: "tp_plan": "transformers",
// TRAIN: "all_gather_bytes": 768,
// TRAIN: "all_reduce_bytes": 256,
// TRAIN: "reduce_scatter_bytes": 256,
// TRAIN: "sent_bytes": 768
//
// The step: backward nodes for the split (a's gradient gathered, [2, 4,
// 8]), the reduce-scatter (p's, [2, 4, 4]) and both gathers ([2, 2, 8] and
// h's reduce-scattered into [2, 2, 4]).
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=sgd loss=mse" | FileCheck %s --check-prefix=STEP
// STEP-DAG: nn.backward "nn.all_gather_output"{{.*}}scatter_grad{{.*}} -> tensor<2x2x4xf32>
// STEP-DAG: nn.backward "nn.reduce_scatter_output"{{.*}} -> tensor<2x4x4xf32>
// STEP-DAG: nn.backward "nn.all_gather_output"{{.*}} -> tensor<2x2x8xf32>
// STEP-DAG: nn.backward "nn.split_input"{{.*}} -> tensor<2x4x8xf32>

func.func @forward(%x: tensor<2x4x8xf32>) -> tensor<2x4x4xf32> attributes {nn.tensor_parallel = 2 : i64} {
  %w0 = nn.param "w0" : tensor<8x8xf32>
  %w = nn.param "fc.weight" : tensor<4x8xf32>
  %a = nn.linear %x, %w0 : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
  %s = nn.split_input %a {dim = 1 : i64, ranks = 2 : i64} : tensor<2x4x8xf32> -> tensor<2x2x8xf32>
  %g = nn.all_gather_output %s {dim = 1 : i64, ranks = 2 : i64} : tensor<2x2x8xf32> -> tensor<2x4x8xf32>
  %xg = nn.all_reduce_grad %g {ranks = 2 : i64} : tensor<2x4x8xf32>
  %p = nn.linear %xg, %w : (tensor<2x4x8xf32>, tensor<4x8xf32>) -> tensor<2x4x4xf32>
  %r = nn.reduce_scatter_output %p {dim = 1 : i64, ranks = 2 : i64} : tensor<2x4x4xf32> -> tensor<2x2x4xf32>
  %h = nn.all_gather_output %r {dim = 1 : i64, ranks = 2 : i64, scatter_grad} : tensor<2x2x4xf32> -> tensor<2x4x4xf32>
  return %h : tensor<2x4x4xf32>
}

// -----

// Batch 1: all_gather_into_tensor's [2, 2, 8] buffer, viewed as [1, 4, 8],
// is the gathered tensor (torch's _maybe_view_chunk_cat: every dim before
// the gathered one has size 1): no workspace. Persistent x [1, 4, 8]
// 128 B and w [8, 8] 256 B: 384; a 128 B: 512; the split a and s [1, 2, 8]
// 64 B: 576; the gather s and g 128 B: 576 (with a buffer it would be 704).
// RUN: vram-opt %s -split-input-file --mode=inference --device=cpu --parallel=tp=2 --format=json | FileCheck %s --check-prefix=VIEW
// VIEW: "peak_bytes": 1280,
// VIEW: "peak_bytes": 576,

func.func @forward(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> attributes {nn.tensor_parallel = 2 : i64} {
  %w = nn.param "w" : tensor<8x8xf32>
  %a = nn.linear %x, %w : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
  %s = nn.split_input %a {dim = 1 : i64, ranks = 2 : i64} : tensor<1x4x8xf32> -> tensor<1x2x8xf32>
  %g = nn.all_gather_output %s {dim = 1 : i64, ranks = 2 : i64} : tensor<1x2x8xf32> -> tensor<1x4x8xf32>
  return %g : tensor<1x4x8xf32>
}
