// What Swin's shape ops allocate and keep, through the memory analysis's
// print pass (hand computation: %h = linear(x) is 2x8 f32 = 64 B and
// requires grad). torch 2.15 records (grad_fn._saved_*): RollBackward0
// keeps only shifts and dims, ConstantPadNdBackward0 only the pad; both
// results are new tensors (F.pad with zero padding too: constant_pad_nd
// clones).
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=sgd" --vram-print-memory -o /dev/null | FileCheck %s

// roll allocates its 64-byte result and keeps nothing.
// CHECK-LABEL: memory of @step
// CHECK: alloc #{{[0-9]+}} 64 temporaries nn.roll tensor<2x8xf32>
// CHECK: saved for backward 0
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = nn.param "w" : tensor<8x8xf32>
  %h = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %y = nn.roll %h {shifts = array<i64: 3>, dims = array<i64: 1>} : tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// A zero pad is a 64-byte copy that keeps nothing.
// CHECK-LABEL: memory of @step
// CHECK: alloc #{{[0-9]+}} 64 temporaries nn.pad tensor<2x8xf32>
// CHECK: saved for backward 0
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = nn.param "w" : tensor<8x8xf32>
  %h = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %y = nn.pad %h {low = array<i64: 0, 0>, high = array<i64: 0, 0>} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}
