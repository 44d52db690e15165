// RUN: vram-opt %s -split-input-file --vram-gpu-thread-blocks=block-size=16 | FileCheck %s
// RUN: vram-opt %s -split-input-file --vram-gpu-thread-blocks=block-size=0 -verify-diagnostics
// REQUIRES: execution

// A 4x5 nest: 20 iterations collapsed into one dimension, tiled by 16: a
// grid of 2 blocks (0 and 16, step 16) of 16 threads; the last block's
// threads 4..15 fail the in-bounds check. The indices come back as
// (k / 5, k % 5).
// CHECK-LABEL: func.func @copy
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : index
// CHECK-DAG: %[[C20:.*]] = arith.constant 20 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK: scf.parallel (%[[B:.*]]) = (%{{.*}}) to (%[[C20]]) step (%[[C16]])
// CHECK-NEXT: scf.parallel (%[[T:.*]]) = (%{{.*}}) to (%[[C16]]) step
// CHECK: %[[K:.*]] = arith.addi %[[T]], %[[B]]
// CHECK: %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %[[C20]]
// CHECK: scf.if
// CHECK-DAG: arith.remsi %[[K]], %[[C5]]
// CHECK-DAG: arith.divsi %[[K]], %[[C5]]
// CHECK: memref.store
// A one-iteration loop (serial code offloaded) gets a block of one thread.
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[C1:.*]]) step (%[[C1]])
// CHECK-NEXT: scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[C1]]) step
// expected-error @below {{block-size must be at least 1, not 0}}
func.func @copy(%a: memref<4x5xf32>, %b: memref<4x5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c5) step (%c1, %c1) {
    %v = memref.load %a[%i, %j] : memref<4x5xf32>
    memref.store %v, %b[%i, %j] : memref<4x5xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    %v = memref.load %a[%c0, %c0] : memref<4x5xf32>
    memref.store %v, %b[%c1, %c1] : memref<4x5xf32>
    scf.reduce
  }
  return
}

// -----

// The allocation nothing reads stays: only index arithmetic is folded.
// CHECK-LABEL: func.func @keeps_allocations
// CHECK: memref.alloc
// CHECK: memref.dealloc
// expected-error @below {{block-size must be at least 1, not 0}}
func.func @keeps_allocations(%a: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %t = memref.alloc() : memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %v = memref.load %a[%i] : memref<8xf32>
    memref.store %v, %t[%i] : memref<8xf32>
    scf.reduce
  }
  memref.dealloc %t : memref<8xf32>
  return
}
