// vram-parallel zero=1|2: DeepSpeed's ZeRO on the built step, by hand.
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=adam" --vram-parallel="dp=2 zero=2 reduce-bucket-size=100" | FileCheck %s
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=adam" --vram-parallel="dp=4 zero=1 reduce-bucket-size=200" | FileCheck %s --check-prefix=STAGE1

// fc1 (16x8 weight, 128 elements; bias 16) -> relu -> fc2 (4x16 weight, 64;
// bias 4): 212 elements, padded to 212 (a multiple of 2 x 2), partitions
// of 106: rank 0 holds fc1.weight's first 106, rank 1 its last 22 and the
// rest. grads_in_partition: rank 0 fc1.weight (128), rank 1 all four
// (212): rank 1's figures. Stage 2 copies as backward finishes: fc2.bias
// (its hook runs first), fc2.weight: 68 elements; fc1.bias (16) makes 84;
// fc1.weight (128) is larger than the 100-element buffer: the bucket is
// reduced before it (its gradients are all rank 1's: no flatten) and it is
// reduced on its own after backward, from its gradient (rank 0's and rank
// 1's slices: flattened).
// CHECK-LABEL: func.func @step
// CHECK-SAME: nn.parallel = #nn.parallel<dp = 2, fsdp = 1, shard = [], bucket_cap = 26214400, first_bucket = 1048576, bucket_view = false, zero = 2, reduce_bucket = 100, zero_rank = 1>
// CHECK: nn.param "fc1.weight" {{.*}}nn.flat_param
// CHECK: %[[FLAT:.*]] = nn.zero_flat_params {{.*}} -> tensor<212xf32>
// CHECK-NEXT: %[[MASTER:.*]] = nn.zero_partition %[[FLAT]] {ranks = 2 : i64} : tensor<212xf32> -> tensor<106xf32>
// CHECK-NEXT: nn.optimizer_state exp_avg of %[[MASTER]] : tensor<106xf32>
// CHECK-NEXT: nn.optimizer_state exp_avg_sq of %[[MASTER]] : tensor<106xf32>
// CHECK: %[[IPG:.*]] = nn.zero_buffer "ipg_buffer" {phase = #nn<phase backward>} : tensor<100xf32>
// CHECK-NEXT: nn.release %{{.*}}#2
// CHECK-NEXT: nn.release %{{.*}}#1
// CHECK: nn.release %{{.*}}#1
// CHECK-NEXT: nn.zero_reduce %[[IPG]] {elements = 84 : i64, flatten = false, phase = #nn<phase backward>}
// CHECK-NEXT: %[[GIP:.*]] = nn.zero_buffer "grads_in_partition" {phase = #nn<phase backward>} : tensor<212xf32>
// CHECK-NEXT: nn.zero_reduce %[[W1:.*]] {elements = 128 : i64, flatten = true, phase = #nn<phase backward>} : tensor<16x8xf32>
// CHECK-NEXT: nn.release %[[W1]]
// CHECK-NEXT: nn.release %[[IPG]]
// The norm's largest slice: rank 1's fc2.weight, 64 elements.
// CHECK-NEXT: nn.zero_grad_norm %[[GIP]] {largest = 64 : i64
// CHECK-NEXT: %[[G:.*]] = nn.zero_buffer "single_grad_partition" %[[GIP]] : tensor<212xf32> {phase = #nn<phase optimizer>} : tensor<106xf32>
// CHECK-NEXT: nn.release %[[GIP]]
// CHECK-NEXT: nn.optimizer_step adam {{.*}} params(%[[MASTER]]) grads(%[[G]])
// CHECK-NOT: nn.optimizer_step

// At dp=4, partitions of 54 (212 padded to 216): ranks 0 and 1 inside
// fc1.weight (128 each in grads_in_partition), rank 2 fc1.weight's last 20,
// fc1.bias and fc2.weight's first 18 (208), rank 3 the rest and the
// padding (68): rank 2. Stage 1 copies in parameter order after backward:
// fc1.weight (128) and fc1.bias (16) fill a bucket of 144; fc2.weight (64)
// overflows 200: the first bucket is reduced (slices for ranks 0, 1, 2:
// flattened) and rank 2's grads_in_partition allocated.
// STAGE1: nn.parallel = #nn.parallel<dp = 4, {{.*}}, zero = 1, reduce_bucket = 200, zero_rank = 2>
// STAGE1: nn.zero_buffer "ipg_buffer" {phase = #nn<phase backward>} : tensor<200xf32>
// STAGE1: nn.release
// STAGE1-NEXT: nn.release
// STAGE1-NEXT: nn.zero_reduce %{{.*}} {elements = 144 : i64, flatten = true
// STAGE1-NEXT: nn.zero_buffer "grads_in_partition" {phase = #nn<phase backward>} : tensor<208xf32>
// STAGE1-NEXT: nn.release
// STAGE1-NEXT: nn.release
// STAGE1-NEXT: nn.zero_reduce %{{.*}} {elements = 68 : i64, flatten = true
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %w1 = nn.param "fc1.weight" : tensor<16x8xf32> loc("fc1")
  %b1 = nn.param "fc1.bias" : tensor<16xf32> loc("fc1")
  %h = nn.linear %x, %w1, %b1 : (tensor<2x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<2x16xf32> loc("fc1")
  %r = nn.relu %h : tensor<2x16xf32> loc("relu")
  %w2 = nn.param "fc2.weight" : tensor<4x16xf32> loc("fc2")
  %b2 = nn.param "fc2.bias" : tensor<4xf32> loc("fc2")
  %y = nn.linear %r, %w2, %b2 : (tensor<2x16xf32>, tensor<4x16xf32>, tensor<4xf32>) -> tensor<2x4xf32> loc("fc2")
  return %y : tensor<2x4xf32>
}

// -----

// One parameter over two ranks: each partition is a slice of it, so the
// flattened slices are a view of grads_in_partition (torch's flatten of
// one tensor), not a copy.
// CHECK-LABEL: func.func @step
// CHECK-SAME: zero = 2, reduce_bucket = 100>
// CHECK: %[[GIP:.*]] = nn.zero_buffer "grads_in_partition" {{.*}} : tensor<64xf32>
// CHECK: nn.zero_grad_norm %[[GIP]] {largest = 32 : i64
// CHECK-NEXT: %[[VIEW:.*]] = nn.slice %[[GIP]]
// CHECK-NOT: zero_buffer "single_grad_partition"
// CHECK: nn.optimizer_step adam {{.*}} grads(%[[VIEW]])
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = nn.param "w" : tensor<8x8xf32> loc("fc")
  %y = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32> loc("fc")
  return %y : tensor<2x8xf32>
}
