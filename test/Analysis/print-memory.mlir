// The memory analysis's event stream, op by op (--vram-print-memory), with
// every number computed by hand below (fp32: 4 bytes per element).
// RUN: vram-opt %s -split-input-file --vram-print-memory -o /dev/null | FileCheck %s
// RUN: vram-opt %s -split-input-file --vram-print-memory=iterations=2 -o /dev/null | FileCheck %s --check-prefix=ITER
// RUN: vram-opt %s -split-input-file --vram-print-flops -o /dev/null | FileCheck %s --check-prefix=FLOPS

// Persistent at entry, in definition order: the input 2x8 = 64 B, then the
// weight 4x8 = 128 B: 192 B. linear allocates 2x4 = 32 B (224). relu_ aliases
// it. The out-of-place relu allocates 32 B more (256 = the peak) and frees the
// linear's storage, whose last user it is. The returned value outlives the
// step and is freed at exit.
// CHECK-LABEL: memory of @forward: 5 ops, 4 storages, 6 events
// CHECK-NEXT: entry:
// CHECK-NEXT:   alloc #0 64 inputs arg0 tensor<2x8xf32>
// CHECK-NEXT:   alloc #1 128 parameters "fc.weight" tensor<4x8xf32>
// CHECK-NEXT:   live 192
// CHECK-NEXT: [1] nn.param (forward):
// CHECK-NEXT:   live 192
// CHECK-NEXT: [2] nn.linear (forward):
// CHECK-NEXT:   alloc #2 32 temporaries nn.linear tensor<2x4xf32>
// CHECK-NEXT:   live 224
// CHECK-NEXT: [3] nn.relu (forward):
// CHECK-NEXT:   live 224
// CHECK-NEXT: [4] nn.relu (forward):
// CHECK-NEXT:   alloc #3 32 temporaries nn.relu tensor<2x4xf32>
// CHECK-NEXT:   live 256
// CHECK-NEXT:   free #2
// CHECK-NEXT: [5] func.return (forward):
// CHECK-NEXT:   live 224
// CHECK-NEXT: exit:
// CHECK-NEXT:   free #3
// CHECK-NEXT: peak 256 at [4] nn.relu
// CHECK-NEXT:   at peak: parameters=128 buffers=0 inputs=64 activations=0 gradients=0 optimizer_state=0 temporaries=64
// CHECK-NEXT: persistent 192
// CHECK-NEXT: saved for backward 0
// Two iterations: the persistent storage is allocated once, the second
// iteration's peak is the same 256 B.
// ITER: exact allocator, iteration 2: allocated peak 256 at [4], reserved peak 256
// linear 2x8 -> 2x4: 64 multiply-adds; relu counts only under `full`.
// FLOPS-LABEL: FLOPs (macs flops full) of @forward
// FLOPS-NEXT:   [2] nn.linear (forward): 64 128 128
// FLOPS-NEXT:   [3] nn.relu (forward): 0 0 8
// FLOPS-NEXT:   [4] nn.relu (forward): 0 0 8
// FLOPS-NEXT:   forward: 64 128 144
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %w = nn.param "fc.weight" : tensor<4x8xf32>
  %y = nn.linear %x, %w : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  %r = nn.relu %y {inplace} : tensor<2x4xf32>
  %z = nn.relu %r : tensor<2x4xf32>
  return %z : tensor<2x4xf32>
}

// -----

// A workspace is a storage of its own around its op: foreach Adam keeps a
// params-sized exp_avg_sq.sqrt() list (4 x 4 = 16 B) while the update runs.
// Persistent: param 16 + grad input 16 + two states 32 = 64.
// CHECK-LABEL: memory of @update
// CHECK:      [4] nn.optimizer_step (optimizer):
// CHECK-NEXT:   alloc #4 16 temporaries workspace of nn.optimizer_step
// CHECK-NEXT:   live 80
// CHECK-NEXT:   free #4
// CHECK:      peak 80 at [4] nn.optimizer_step
func.func @update(%g: tensor<4xf32>) {
  %p = nn.param "w" : tensor<4xf32>
  %m = nn.optimizer_state exp_avg of %p : tensor<4xf32> -> tensor<4xf32>
  %v = nn.optimizer_state exp_avg_sq of %p : tensor<4xf32> -> tensor<4xf32>
  nn.optimizer_step adam foreach params(%p) grads(%g) state(%m, %v) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> ()
  return
}

// -----

// A persistent parameter the step frees (ZeRO-3 frees its gathered small
// parameters before the optimizer step and gathers them again after it):
// freed at the release, allocated again at the step's exit, still counted
// in the persistent bytes. Entry: input 64 + weight 128 = 192; linear
// +32 = 224 (the peak); the release frees the weight (96); each relu
// allocates 32 and frees its input: 128, 128; at exit the weight is back.
// CHECK-LABEL: memory of @forward: 6 ops, 5 storages, 10 events
// CHECK:      [3] nn.release (optimizer):
// CHECK-NEXT:   live 224
// CHECK-NEXT:   free #1
// CHECK-NEXT: [4] nn.relu (forward):
// CHECK-NEXT:   alloc #3 32 temporaries nn.relu tensor<2x4xf32>
// CHECK-NEXT:   live 128
// CHECK:      exit:
// CHECK-NEXT:   alloc #1 128 parameters "fc.weight" tensor<4x8xf32>
// CHECK-NEXT:   free #4
// CHECK-NEXT: peak 224 at [2] nn.linear
// CHECK:      persistent 192
// The second iteration starts from the weight allocated again: the same.
// ITER: exact allocator, iteration 2: allocated peak 224 at [2], reserved peak 224
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %w = nn.param "fc.weight" : tensor<4x8xf32>
  %y = nn.linear %x, %w : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  nn.release %w {phase = #nn<phase optimizer>} : tensor<4x8xf32>
  %z = nn.relu %y : tensor<2x4xf32>
  %u = nn.relu %z : tensor<2x4xf32>
  return %u : tensor<2x4xf32>
}
