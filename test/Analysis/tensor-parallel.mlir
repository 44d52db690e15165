// Tensor parallelism's collectives in one rank's step (tp=2): nn.all_reduce
// (RowwiseParallel's output) allocates its result and passes the gradient
// through; nn.all_reduce_grad (ColwiseParallel's input) allocates nothing
// in forward, and its backward all-reduces the gradient into a new tensor.
//
// Inference, by hand (CPU, fp32): persistent x [4, 8] 128 B, w0 [8, 8]
// 256 B, this rank's column shard w1 [4, 8] 128 B and row shard w2 [8, 4]
// 128 B: 640. a = linear(x, w0) [4, 8] 128 B; all_reduce_grad(a) is a;
// h = linear(a, w1) [4, 4] 64 B (a alive: 192); p = linear(h, w2) [4, 8]
// 128 B, partial sums (h alive: 192); y = all_reduce(p) 128 B with p
// alive: 256. Peak 640 + 256 = 896.
// RUN: vram-opt %s -split-input-file --mode=inference --device=cpu --parallel=tp=2 --format=json | FileCheck %s --check-prefix=INFER
// INFER: "peak_bytes": 896,
//
// Training: per step the rank all-reduces y in forward (128 B) and the
// gradient of a, w0's output, in backward (128 B): 256 bytes, of which a
// ring over 2 ranks sends 2 (2 - 1) / 2 = 1 times.
// RUN: vram-opt %s -split-input-file --mode=train --optimizer=sgd --device=cpu --parallel=tp=2 --format=json | FileCheck %s --check-prefix=TRAIN
// TRAIN: "strategy": "tp",
// TRAIN: "tp": 2,
// TRAIN: "world_size": 2
// TRAIN: "all_reduce_bytes": 256,
// TRAIN: "sent_bytes": 256
//
// The step: a backward node for nn.all_reduce_grad (a new gradient), none
// for nn.all_reduce (its gradient is y's).
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=sgd" --vram-parallel="tp=2" | FileCheck %s --check-prefix=STEP
// STEP: func.func @step{{.*}}nn.parallel = #nn.parallel<dp = 1, fsdp = 1, shard = [], bucket_cap = 26214400, first_bucket = 1048576, bucket_view = false, tp = 2>
// STEP-SAME: nn.tensor_parallel = 2
// STEP-NOT: nn.backward "nn.all_reduce"
// STEP: nn.backward "nn.all_reduce_grad"
// STEP-NOT: nn.backward "nn.all_reduce"
//
// DDP over tensor-parallel groups (dp=2): one bucket of the rank's
// gradients, 64 + 32 + 32 = 128 elements. w1 (column-parallel: it reads the
// nn.all_reduce_grad) and w2 (row-parallel: it feeds the nn.all_reduce) are
// shards, whose gradients reach DDP after the replicated w0's
// (_pre_dp_module_transform's DTensor.from_local nodes run last); among
// them, backward order: w2, then w1.
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=sgd" --vram-parallel="tp=2 dp=2" | FileCheck %s --check-prefix=STEP-DDP
// STEP-DDP: nn.parallel = #nn.parallel<dp = 2, {{.*}}tp = 2>
// STEP-DDP: nn.grad_bucket "ddp.bucket0" params ["w0", "w2", "w1"] : tensor<128xf32>

func.func @forward(%x: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {nn.tensor_parallel = 2 : i64} {
  %w0 = nn.param "w0" : tensor<8x8xf32>
  %w1 = nn.param "w1" : tensor<4x8xf32>
  %w2 = nn.param "w2" : tensor<8x4xf32>
  %a = nn.linear %x, %w0 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %xa = nn.all_reduce_grad %a {ranks = 2 : i64} : tensor<4x8xf32>
  %h = nn.linear %xa, %w1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x4xf32>
  %p = nn.linear %h, %w2 : (tensor<4x4xf32>, tensor<8x4xf32>) -> tensor<4x8xf32>
  %y = nn.all_reduce %p {ranks = 2 : i64} : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
