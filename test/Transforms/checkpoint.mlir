// RUN: vram-opt %s --vram-build-step="mode=train optimizer=sgd" --vram-checkpoint="modules=a" | FileCheck %s --check-prefix=V2
// RUN: vram-opt %s --vram-build-step="mode=train optimizer=sgd torch-version=1.13" --vram-checkpoint="modules=a" | FileCheck %s --check-prefix=V113
// RUN: vram-opt %s --vram-build-step="mode=train optimizer=sgd" --vram-checkpoint="modules=a" --vram-print-memory -o /dev/null | FileCheck %s --check-prefix=MEM
// RUN: vram-opt %s --mode=train --optimizer=sgd --format=json | FileCheck %s --check-prefix=PLAIN
// RUN: vram-opt %s --mode=train --optimizer=sgd --checkpoint=a --format=json | FileCheck %s --check-prefix=CKPT
// RUN: vram-opt %s --mode=train --optimizer=sgd --checkpoint=a --format=text | FileCheck %s --check-prefix=TEXT

// Module `a` (fc1 -> relu -> fc2 -> a residual-style add) runs under
// torch.utils.checkpoint(use_reentrant=False); `b.fc` does not.
// Its forward ops stay; the backward nodes of `a` read clones made right
// before the first of them (a.fc2's node, after b.fc's).
// V2-LABEL: func.func @step
// V2: %[[H1:.*]] = nn.linear %arg0, %[[W1:[^ ]*]] :
// V2-NEXT: %[[R:.*]] = nn.relu %[[H1]]
// V2: %[[H2:.*]] = nn.linear %[[R]], %[[W2:[^ ]*]] :
// V2-NEXT: %[[S:.*]] = nn.add %[[H2]], %[[H2]] :
// V2: %[[O:.*]] = nn.linear %[[S]], %[[W3:[^ ]*]] :
// V2: nn.backward "nn.cross_entropy"
// b.fc keeps the segment's output: not recomputed, not redirected.
// V2-NEXT: %[[GB:.*]]:2 = nn.backward "nn.linear" saved(%[[S]], %[[W3]])
// The add's two gradient contributions are summed in between.
// V2-NEXT: nn.accumulate_grad
// V2-NEXT: %[[RH1:.*]] = nn.linear %arg0, %[[W1]] {nn.phase = #nn<phase recompute>}
// V2-NEXT: %[[RR:.*]] = nn.relu %[[RH1]] {nn.phase = #nn<phase recompute>}
// fc2 is the last op that saves something: it runs (its output is unused),
// and torch 2 stops the recomputation there: the add is not recomputed.
// V2-NEXT: nn.linear %[[RR]], %[[W2]] {nn.phase = #nn<phase recompute>}
// V2-NOT: nn.add {{.*}}recompute
// V2-NEXT: nn.backward "nn.linear" saved(%[[RR]], %[[W2]])
// V2-NEXT: nn.backward "nn.relu" saved(%[[RR]])
// V2-NEXT: nn.backward "nn.linear" saved(%arg0)
// V2-NEXT: nn.optimizer_step

// torch 1.13 recomputes the whole segment.
// V113: nn.backward "nn.linear" saved(%{{.*}}, %{{.*}})
// V113: nn.linear {{.*}} {nn.phase = #nn<phase recompute>}
// V113-NEXT: nn.relu {{.*}} {nn.phase = #nn<phase recompute>}
// V113-NEXT: nn.linear {{.*}} {nn.phase = #nn<phase recompute>}
// V113-NEXT: nn.add {{.*}} {nn.phase = #nn<phase recompute>}
// V113-NEXT: nn.backward "nn.linear"

// Liveness: the first forward's relu output dies after fc2 reads it (no
// node keeps it); the recomputed one lives until relu's node has run.
// MEM: [3] nn.relu (forward):
// MEM-NEXT: alloc #[[RELU:[0-9]+]] 128 temporaries nn.relu
// MEM: [5] nn.linear (forward):
// MEM-NEXT: alloc
// MEM-NEXT: live
// MEM-NEXT: free #[[RELU]]
// MEM: [15] nn.relu (recompute):
// MEM-NEXT: alloc #[[RR:[0-9]+]] 128 activations nn.relu
// The recomputed fc2 output is not kept: freed right away.
// MEM: [16] nn.linear (recompute):
// MEM-NEXT: alloc #[[FC2:[0-9]+]] 128 temporaries
// MEM-NEXT: live
// MEM-NEXT: free #[[FC2]]
// MEM: [18] nn.backward (backward):
// MEM: free #[[RR]]

// By hand (batch 2, fp32): without checkpointing the relu output r [2, 16]
// (128 bytes, kept by relu and fc2) and the add's output s [2, 16] (128
// bytes, kept by b.fc) are saved; fc1 keeps the input (not counted).
// FLOPs (flops: 2 x multiply-adds of mm): fc1 2*2*8*16 = 512, fc2
// 2*2*16*16 = 1024, b.fc 2*2*16*4 = 256; forward 1792.
// PLAIN: "flops": {
// PLAIN: "forward": 1792,
// PLAIN: "recompute": 0,
// PLAIN: "saved_for_backward_bytes": 256,
// Checkpointing `a` keeps its input (the model input, not counted) and what
// b.fc saves outside it: 128 bytes. The recomputation runs fc1 and fc2
// again: 512 + 1024 = 1536 FLOPs, apart from forward.
// CKPT: "flops": {
// CKPT: "forward": 1792,
// CKPT: "recompute": 1536,
// CKPT: "total":
// CKPT: "saved_for_backward_bytes": 128,
// TEXT: FLOPs recomputed by activation checkpointing: 1,536 (in the total, not in forward)
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %w1 = nn.param "a.fc1.weight" : tensor<16x8xf32> loc("a.fc1")
  %h1 = nn.linear %x, %w1 : (tensor<2x8xf32>, tensor<16x8xf32>) -> tensor<2x16xf32> loc("a.fc1")
  %r = nn.relu %h1 : tensor<2x16xf32> loc("a.act")
  %w2 = nn.param "a.fc2.weight" : tensor<16x16xf32> loc("a.fc2")
  %h2 = nn.linear %r, %w2 : (tensor<2x16xf32>, tensor<16x16xf32>) -> tensor<2x16xf32> loc("a.fc2")
  %s = nn.add %h2, %h2 : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32> loc("a")
  %w3 = nn.param "b.fc.weight" : tensor<4x16xf32> loc("b.fc")
  %o = nn.linear %s, %w3 : (tensor<2x16xf32>, tensor<4x16xf32>) -> tensor<2x4xf32> loc("b.fc")
  return %o : tensor<2x4xf32>
}
