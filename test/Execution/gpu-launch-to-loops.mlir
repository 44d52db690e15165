// REQUIRES: execution
// RUN: vram-opt %s -split-input-file -verify-diagnostics --vram-gpu-launch-to-loops | FileCheck %s

// A launch of 2 blocks of 16 threads (the 4x8 add of lower-to-gpu.mlir after
// vram-gpu-thread-blocks): loops over the blocks (z, y, x), then the threads
// (z, y, x); the body's ids are the loops' variables, its sizes the launch's
// operands, and gpu.thread_id / gpu.block_dim inside it the same values.
// CHECK-LABEL: func.func @add
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK: scf.for %[[BZ:.*]] = %[[C0]] to %[[C1]] step
// CHECK-NEXT: scf.for %[[BY:.*]] = %[[C0]] to %[[C1]] step
// CHECK-NEXT: scf.for %[[BX:.*]] = %[[C0]] to %[[C2]] step
// CHECK-NEXT: scf.for %[[TZ:.*]] = %[[C0]] to %[[C1]] step
// CHECK-NEXT: scf.for %[[TY:.*]] = %[[C0]] to %[[C1]] step
// CHECK-NEXT: scf.for %[[TX:.*]] = %[[C0]] to %[[C16]] step
// CHECK-NEXT: %[[BASE:.*]] = arith.muli %[[BX]], %[[C16]] : index
// CHECK-NEXT: %[[I:.*]] = arith.addi %[[BASE]], %[[TX]] : index
// CHECK-NEXT: %[[BASE2:.*]] = arith.muli %[[BX]], %[[C16]] : index
// CHECK-NEXT: %[[J:.*]] = arith.addi %[[BASE2]], %[[TX]] : index
// CHECK-NEXT: %[[IN:.*]] = arith.cmpi slt, %[[I]], %{{.*}} : index
// CHECK-NEXT: scf.if %[[IN]]
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[J]]] : memref<32xf32>
// CHECK-NOT: gpu.
func.func @add(%a: memref<32xf32>, %b: memref<32xf32>, %c: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c1, %sz = %c1) {
    %base = arith.muli %bx, %sx : index
    %i = arith.addi %base, %tx : index
    %tid = gpu.thread_id x
    %dim = gpu.block_dim x
    %base2 = arith.muli %bx, %dim : index
    %j = arith.addi %base2, %tid : index
    %in = arith.cmpi slt, %i, %c32 : index
    scf.if %in {
      %x = memref.load %a[%i] : memref<32xf32>
      %y = memref.load %b[%i] : memref<32xf32>
      %s = arith.addf %x, %y : f32
      memref.store %s, %c[%j] : memref<32xf32>
    }
    gpu.terminator
  }
  return
}

// -----

func.func @barrier(%a: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  // expected-error @below {{cannot run on the host one thread at a time: its body has 'gpu.barrier', which needs the threads to run together}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.barrier
    gpu.terminator
  }
  return
}

// -----

func.func @shared(%a: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  // expected-error @below {{cannot run on the host one thread at a time: it has shared or private memory}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             workgroup(%tile : memref<32xf32, #gpu.address_space<workgroup>>) {
    gpu.terminator
  }
  return
}
