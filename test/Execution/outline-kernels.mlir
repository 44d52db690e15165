// RUN: vram-opt %s -split-input-file --vram-outline-kernels | FileCheck %s
// REQUIRES: execution

// Two nests equal up to their buffers share one function; a nest of other
// shapes gets its own. Constants the nest uses are cloned into it, the
// marker calls and allocations stay in the step.
// CHECK-LABEL: func.func @step
// CHECK: call @__vram_op
// CHECK-NEXT: %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: call @__vram_kernel_0(%arg0, %[[A]]) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK-NEXT: %[[B:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: call @__vram_kernel_0(%[[A]], %[[B]])
// CHECK-NEXT: %[[C:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: call @__vram_kernel_1(%arg1, %[[C]]) : (memref<8xf32>, memref<8xf32>) -> ()
// CHECK-NEXT: return
// CHECK: func.func private @__vram_kernel_0(%[[X:.*]]: memref<4xf32>, %[[Y:.*]]: memref<4xf32>)
// CHECK-SAME: llvm.linkage = #llvm.linkage<internal>
// CHECK-SAME: passthrough = ["noinline"]
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.0
// CHECK-NEXT: linalg.generic
// CHECK-SAME: ins(%[[X]] : memref<4xf32>) outs(%[[Y]] : memref<4xf32>)
// CHECK: arith.maximumf %{{.*}}, %[[ZERO]]
// CHECK: return
// CHECK: func.func private @__vram_kernel_1(%{{.*}}: memref<8xf32>, %{{.*}}: memref<8xf32>)
// CHECK-NOT: func.func private @__vram_kernel_2
#map = affine_map<(d0) -> (d0)>
func.func private @__vram_op(i64)
func.func @step(%arg0: memref<4xf32>, %arg1: memref<8xf32>) {
  %c1 = arith.constant 1 : i64
  %zero = arith.constant 0.0 : f32
  call @__vram_op(%c1) : (i64) -> ()
  %a = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%arg0 : memref<4xf32>) outs(%a : memref<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  }
  %b = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%a : memref<4xf32>) outs(%b : memref<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  }
  %c = memref.alloc() : memref<8xf32>
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%arg1 : memref<8xf32>) outs(%c : memref<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A loop that yields a value returns it from its function; a nest on a
// buffer of dynamic shape stays inline (no bare pointer for it).
// CHECK-LABEL: func.func @sum
// CHECK: %[[S:.*]] = call @__vram_kernel_0(%arg0)
// CHECK-NEXT: scf.for
// CHECK: return %[[S]]
// CHECK: func.func private @__vram_kernel_0(%{{.*}}: memref<4xf32>) -> f32
// CHECK: scf.for
// CHECK: return %{{.*}} : f32
func.func @sum(%arg0: memref<4xf32>, %arg1: memref<?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %init = arith.constant 0.0 : f32
  %s = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %init) -> f32 {
    %v = memref.load %arg0[%i] : memref<4xf32>
    %n = arith.addf %acc, %v : f32
    scf.yield %n : f32
  }
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %s, %arg1[%i] : memref<?xf32>
  }
  return %s : f32
}
