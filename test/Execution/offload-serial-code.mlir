// RUN: vram-opt %s -split-input-file -verify-diagnostics --vram-offload-serial-code | FileCheck %s
// REQUIRES: execution

// A full reduction (a loop nest with no parallel dimension) and the 0-d
// store before it are one run of serial code: one single-iteration parallel
// loop. The parallel loop, the allocations, the marker calls and the
// dealloc stay on the host; the constants stay there too (the kernel
// captures them).
func.func private @__vram_op(i64)
func.func @step(%a: memref<4x8xf32>) -> memref<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %i1 = arith.constant 1 : i64
  %zero = arith.constant 0.0 : f32
  func.call @__vram_op(%i1) : (i64) -> ()
  %c = memref.alloc() : memref<4x8xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<4x8xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %c[%i, %j] : memref<4x8xf32>
    scf.reduce
  }
  %loss = memref.alloc() : memref<f32>
  memref.store %zero, %loss[] : memref<f32>
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %x = memref.load %c[%i, %j] : memref<4x8xf32>
      %acc = memref.load %loss[] : memref<f32>
      %s = arith.addf %x, %acc : f32
      memref.store %s, %loss[] : memref<f32>
    }
  }
  memref.dealloc %c : memref<4x8xf32>
  return %loss : memref<f32>
}
// CHECK-LABEL: func.func @step
// CHECK: call @__vram_op
// CHECK-NEXT: memref.alloc() : memref<4x8xf32>
// CHECK-NEXT: scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}})
// CHECK: memref.alloc() : memref<f32>
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[O:.*]] = arith.constant 1 : index
// CHECK-NEXT: scf.parallel (%{{.*}}) = (%[[Z]]) to (%[[O]]) step (%[[O]]) {
// CHECK-NEXT: memref.store
// CHECK-NEXT: scf.for
// CHECK-NEXT: scf.for
// CHECK: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: return

// -----

// memref.copy (which the host would run through the runtime's memrefCopy)
// becomes a parallel loop of loads and stores; a 0-d copy a serial run.
// CHECK-LABEL: func.func @copies
// CHECK-NOT: memref.copy
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = (%{{.*}}, %{{.*}}) to (%c2, %c3)
// CHECK-NEXT: %[[V:.*]] = memref.load %arg0[%[[I]], %[[J]]]
// CHECK-NEXT: memref.store %[[V]], %arg1[%[[I]], %[[J]]]
// CHECK: scf.parallel
// CHECK-NEXT: memref.load %arg2[]
// CHECK-NEXT: memref.store
func.func @copies(%a: memref<2x3xf32>, %b: memref<2x3xf32>, %s: memref<f32>, %t: memref<f32>) {
  memref.copy %a, %b : memref<2x3xf32> to memref<2x3xf32>
  memref.copy %s, %t : memref<f32> to memref<f32>
  return
}

// -----

// A value read from device memory that the host needs is an error.
func.func @host_reads(%s: memref<f32>) -> f32 {
  // expected-error @+1 {{the host needs this value, read from device memory}}
  %v = memref.load %s[] : memref<f32>
  // expected-note @+1 {{used here}}
  return %v : f32
}
