// The pytorch-cuda allocator model in the report, on a step computed by hand
// (MiB = 1048576). Steady state: the second of two iterations.
// RUN: vram-opt %s --mode=inference --allocator=pytorch-cuda --format=json | FileCheck %s
// RUN: vram-opt %s --mode=inference --allocator=exact --format=json | FileCheck %s --check-prefix=EXACT

// Inference. The input,
// 3 MiB, gets a 20 MiB segment (17 MiB cached). relu's 3 MiB output comes
// from the cached block; the 4-byte mean takes 512 bytes of a 2 MiB small
// segment. Allocated: 3 + 3 MiB + 512 = 6291968; reserved 22 MiB = 23068672.
// The exact model: 3 + 3 MiB + 4 = 6291460.
// CHECK: "allocated_peak_bytes": 6291968,
// CHECK-NEXT: "allocator": "pytorch-cuda",
// CHECK: "peak_bytes": 6291460,
// CHECK: "reserved_peak_bytes": 23068672,
// EXACT: "allocated_peak_bytes": 6291460,
// EXACT-NEXT: "allocator": "exact",
// EXACT: "reserved_peak_bytes": 6291460,
func.func @forward(%x: tensor<786432xf32>) -> tensor<f32> {
  %y = nn.relu %x : tensor<786432xf32>
  %m = nn.mean %y {dims = array<i64: 0>} : (tensor<786432xf32>) -> tensor<f32>
  return %m : tensor<f32>
}
