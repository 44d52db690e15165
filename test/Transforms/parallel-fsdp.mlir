// vram-parallel fsdp=N: rank 0's step under FSDP2 (fully_shard), as
// torch/distributed/fsdp/_fully_shard runs it (docs/Distributed.md).
// RUN: vram-opt %s --vram-build-step="mode=train optimizer=adam" --vram-parallel="fsdp=2 shard=fc1" | FileCheck %s
// RUN: vram-opt %s --vram-build-step="mode=train optimizer=adam" --vram-parallel="fsdp=2 shard=fc1" --vram-print-memory -o /dev/null | FileCheck %s --check-prefix=MEM

// fc1 (a unit) -> relu -> fc2 (the root's). Each parameter keeps rank 0's
// chunk of dim 0, ceil(rows / 2): fc2.weight's 3 rows in chunks of 2.
// CHECK: nn.parallel = #nn.parallel<dp = 1, fsdp = 2, shard = ["fc1"]
// CHECK: %[[W2:.*]] = nn.param "fc2.weight" {nn.sharded} : tensor<3x16xf32>
// CHECK-NEXT: %[[S2:.*]] = nn.shard %[[W2]] {ranks = 2 : i64} : tensor<3x16xf32> -> tensor<2x16xf32>
// CHECK: %[[S1W:.*]] = nn.shard %{{.*}} {ranks = 2 : i64} : tensor<16x8xf32> -> tensor<8x8xf32>
// CHECK: %[[S1B:.*]] = nn.shard %{{.*}} {ranks = 2 : i64} : tensor<16xf32> -> tensor<8xf32>
// Adam's state is the shards'.
// CHECK: nn.optimizer_state exp_avg of %[[S1W]] : tensor<8x8xf32>
// Forward: the root's parameters first (2 ranks x 2 x 16 = 64 elements,
// copied out padded to 4 rows and viewed as 3), then fc1's before its
// first op, after which the root's flat buffer is released.
// CHECK: %[[RF:.*]] = nn.all_gather %[[S2]] {phase = #nn<phase forward>, unit = ""} : (tensor<2x16xf32>) -> tensor<64xf32>
// CHECK-NEXT: %[[RU:.*]] = nn.unshard %[[RF]] {phase = #nn<phase forward>, unit = ""} : tensor<64xf32> -> tensor<4x16xf32>
// CHECK-NEXT: %[[RW:.*]] = nn.slice %[[RU]] {dim = 0 : i64, end = 3 : i64, start = 0 : i64}
// CHECK-NEXT: %[[F1:.*]] = nn.all_gather %[[S1W]], %[[S1B]] {phase = #nn<phase forward>, unit = "fc1"} : (tensor<8x8xf32>, tensor<8xf32>) -> tensor<144xf32>
// CHECK-NEXT: nn.release %[[RF]] {phase = #nn<phase forward>}
// CHECK-NEXT: %[[U1:.*]]:2 = nn.unshard %[[F1]] {phase = #nn<phase forward>, unit = "fc1"}
// CHECK-NEXT: nn.linear %arg0, %[[U1]]#0, %[[U1]]#1
// fc1 reshards after its forward; the root keeps its parameters.
// CHECK-NEXT: nn.release %[[U1]]#0, %[[U1]]#1 {phase = #nn<phase forward>}
// CHECK: nn.linear %{{.*}}, %[[RW]]
// CHECK-NEXT: nn.release %[[F1]] {phase = #nn<phase forward>}
// CHECK-NEXT: nn.cross_entropy
// Backward: the root's pre-backward, a hook on the forward's output, runs
// once the loss's backward made its gradient, and prefetches fc1's
// all-gather; fc1 copies it out before its backward.
// CHECK: nn.backward "nn.cross_entropy"
// CHECK-NEXT: %[[B1:.*]] = nn.all_gather %[[S1W]], %[[S1B]] {phase = #nn<phase backward>, unit = "fc1"}
// CHECK-NEXT: nn.backward "nn.linear" saved(%{{.*}}, %[[RW]])
// CHECK-NEXT: nn.backward "nn.relu"
// CHECK-NEXT: %[[BU:.*]]:2 = nn.unshard %[[B1]] {phase = #nn<phase backward>, unit = "fc1"}
// CHECK-NEXT: %[[G1:.*]]:2 = nn.backward "nn.linear"
// Post-backward, root first (FSDP2's final callback): reshard, then the
// gradients into a flat input (2 x 32), reduced into rank 0's 32.
// CHECK-NEXT: nn.release %[[RU]] {phase = #nn<phase backward>}
// CHECK-NEXT: %[[RI:.*]] = nn.reduce_scatter_input %{{.*}} {phase = #nn<phase backward>, unit = ""} : (tensor<3x16xf32>) -> tensor<64xf32>
// CHECK-NEXT: %[[RO:.*]] = nn.reduce_scatter %[[RI]] {phase = #nn<phase backward>, unit = ""} : tensor<64xf32> -> tensor<32xf32>
// CHECK: %[[G2:.*]] = nn.reshape %{{.*}} {nn.phase = #nn<phase backward>} : tensor<32xf32> -> tensor<2x16xf32>
// CHECK-NEXT: nn.release %[[BU]]#0, %[[BU]]#1 {phase = #nn<phase backward>}
// The previous reduce-scatter input lives until the next one.
// CHECK-NEXT: nn.release %[[RI]] {phase = #nn<phase backward>}
// CHECK-NEXT: %[[FI:.*]] = nn.reduce_scatter_input %[[G1]]#0, %[[G1]]#1 {phase = #nn<phase backward>, unit = "fc1"} : (tensor<16x8xf32>, tensor<16xf32>) -> tensor<144xf32>
// CHECK-NEXT: %[[FO:.*]] = nn.reduce_scatter %[[FI]] {{.*}} : tensor<144xf32> -> tensor<72xf32>
// The gradient shards are views made in backward.
// CHECK-NEXT: %[[V:.*]] = nn.slice %[[FO]] {dim = 0 : i64, end = 64 : i64, nn.phase = #nn<phase backward>, start = 0 : i64}
// CHECK-NEXT: %[[GW:.*]] = nn.reshape %[[V]] {nn.phase = #nn<phase backward>} : tensor<64xf32> -> tensor<8x8xf32>
// CHECK-NEXT: %[[GB:.*]] = nn.slice %[[FO]] {dim = 0 : i64, end = 72 : i64, nn.phase = #nn<phase backward>, start = 64 : i64}
// CHECK-NEXT: nn.release %[[FI]] {phase = #nn<phase backward>}
// The optimizer updates the shards with their gradient shards.
// CHECK-NEXT: nn.optimizer_step adam foreach params(%[[S1W]], %[[S1B]], %[[S2]]) grads(%[[GW]], %[[GB]], %[[G2]])

// What rank 0 holds throughout: the shards (fc2 128 + fc1 256 + 32 bytes),
// their Adam state (2 x 416), the inputs (64 + 16); the nn.param holds
// nothing. 416 + 832 + 80 = 1328.
// MEM: alloc #{{[0-9]+}} 0 parameters "fc2.weight" tensor<3x16xf32>
// MEM-NEXT: alloc #{{[0-9]+}} 128 parameters "fc2.weight" tensor<2x16xf32>
// MEM: live 1328
// The gathered copies are parameters while they live: fc2.weight padded to
// 4 rows, 256 bytes.
// MEM: alloc #{{[0-9]+}} 256 parameters nn.unshard tensor<4x16xf32>

// FSDP2's MixedPrecisionPolicy over a step built in bf16: the shards,
// their Adam state and the inputs stay fp32; the root casts the inputs
// before its all-gather, whose workspace is the shards cast to bf16 (fc1's
// 72 elements, 144 bytes) and whose output is bf16; the gradients are
// reduce-scattered in fp32 (the shards' dtype, torch 2.15's reduce_dtype
// None), or in bf16 and then cast to fp32 in a new flat buffer.
// RUN: vram-opt %s --vram-precision=precision=bf16 --vram-build-step="mode=train optimizer=adam" --vram-parallel="fsdp=2 shard=fc1 mixed-precision=true" | FileCheck %s --check-prefix=MP
// MP: func.func @step(%arg0: tensor<2x8xf32>, %arg1: tensor<2xi64>) -> tensor<bf16>
// MP: nn.shard %{{.*}} {ranks = 2 : i64} : tensor<3x16xbf16> -> tensor<2x16xf32>
// MP: nn.optimizer_state exp_avg of %{{.*}} : tensor<8x8xf32>
// MP: %[[X:.*]] = nn.cast %arg0 : tensor<2x8xf32> to tensor<2x8xbf16>
// MP-NEXT: nn.all_gather %{{.*}} {phase = #nn<phase forward>, unit = ""} : (tensor<2x16xf32>) -> tensor<64xbf16>
// MP: nn.all_gather %{{.*}}, %{{.*}} {phase = #nn<phase forward>, unit = "fc1"} : (tensor<8x8xf32>, tensor<8xf32>) -> tensor<144xbf16>
// MP: nn.linear %[[X]],
// MP: nn.reduce_scatter_input %{{.*}} {phase = #nn<phase backward>, unit = ""} : (tensor<3x16xbf16>) -> tensor<64xf32>
// MP-NEXT: nn.reduce_scatter %{{.*}} : tensor<64xf32> -> tensor<32xf32>
// MP: nn.optimizer_step adam foreach params({{.*}}) grads({{.*}}) state({{.*}}) : (tensor<8x8xf32>,
// RUN: vram-opt %s --vram-precision=precision=bf16 --vram-build-step="mode=train optimizer=adam" --vram-parallel="fsdp=2 shard=fc1 mixed-precision=true reduce-in-param-dtype=true" | FileCheck %s --check-prefix=MP-BF16
// MP-BF16: %[[O:.*]] = nn.reduce_scatter %{{.*}} {phase = #nn<phase backward>, unit = "fc1"} : tensor<144xbf16> -> tensor<72xbf16>
// MP-BF16-NEXT: %[[C:.*]] = nn.cast %[[O]] {nn.phase = #nn<phase backward>} : tensor<72xbf16> to tensor<72xf32>
// MP-BF16-NEXT: nn.slice %[[C]] {dim = 0 : i64, end = 64 : i64, nn.phase = #nn<phase backward>, start = 0 : i64} : (tensor<72xf32>) -> tensor<64xf32>
// RUN: vram-opt %s --vram-precision=precision=bf16 --vram-build-step="mode=train optimizer=adam" --vram-parallel="fsdp=2 shard=fc1 mixed-precision=true" --vram-print-memory -o /dev/null | FileCheck %s --check-prefix=MP-MEM
// MP-MEM: nn.all_gather (forward):
// MP-MEM: nn.all_gather (forward):
// MP-MEM-NEXT: alloc #{{[0-9]+}} 288 temporaries nn.all_gather tensor<144xbf16>
// MP-MEM-NEXT: alloc #{{[0-9]+}} 144 temporaries workspace of nn.all_gather

// reshard_after_forward=False: fc1 keeps its gathered parameters from
// forward to its post-backward, like the root; backward gathers nothing.
// RUN: vram-opt %s --vram-build-step="mode=train optimizer=adam" --vram-parallel="fsdp=2 shard=fc1 reshard-after-forward=false" | FileCheck %s --check-prefix=KEEP
// KEEP: %[[U:.*]]:2 = nn.unshard %{{.*}} {phase = #nn<phase forward>, unit = "fc1"}
// KEEP-NOT: nn.release %[[U]]#0, %[[U]]#1 {phase = #nn<phase forward>}
// KEEP-NOT: nn.all_gather {{.*}}phase backward
// KEEP: nn.reduce_scatter_input {{.*}} unit = ""
// KEEP-NEXT: nn.reduce_scatter
// KEEP: nn.release %[[U]]#0, %[[U]]#1 {phase = #nn<phase backward>}
// KEEP-NEXT: nn.release
// KEEP-NEXT: nn.reduce_scatter_input {{.*}} unit = "fc1"

// HSDP (dp replicas of fsdp-way sharding) is the same step: the gradient
// shards are all-reduced in place, and DDP's buckets are not made.
// RUN: vram-opt %s --vram-build-step="mode=train optimizer=adam" --vram-parallel="dp=2 fsdp=2 shard=fc1" | FileCheck %s --check-prefix=HSDP
// HSDP: nn.parallel = #nn.parallel<dp = 2, fsdp = 2, shard = ["fc1"]
// HSDP-NOT: nn.grad_bucket
// HSDP: nn.shard %{{.*}} {ranks = 2 : i64} : tensor<3x16xf32> -> tensor<2x16xf32>
// HSDP-NOT: nn.grad_bucket

func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x3xf32> {
  %w1 = nn.param "fc1.weight" : tensor<16x8xf32> loc("fc1")
  %b1 = nn.param "fc1.bias" : tensor<16xf32> loc("fc1")
  %h = nn.linear %x, %w1, %b1 : (tensor<2x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<2x16xf32> loc("fc1")
  %r = nn.relu %h : tensor<2x16xf32> loc("act")
  %w2 = nn.param "fc2.weight" : tensor<3x16xf32> loc("fc2")
  %o = nn.linear %r, %w2 : (tensor<2x16xf32>, tensor<3x16xf32>) -> tensor<2x3xf32> loc("fc2")
  return %o : tensor<2x3xf32>
}
