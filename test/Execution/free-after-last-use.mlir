// RUN: vram-opt %s -split-input-file --vram-free-after-last-use | FileCheck %s
// REQUIRES: execution

// With markers, a buffer lives until the end of the last step op that uses
// it (directly or through a view), temporaries until the end of their op;
// returned buffers and stack buffers are not freed.
// CHECK-LABEL: func.func @step
// CHECK: call @__vram_op(%[[C1:.*]])
// CHECK-NEXT: %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.copy %arg0, %[[A]]
// CHECK-NEXT: %[[T:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.copy %[[A]], %[[T]]
// CHECK-NEXT: %[[S:.*]] = memref.alloca() : memref<4xf32>
// CHECK-NEXT: memref.copy %[[T]], %[[S]]
// The temporary is used in op 1 only: freed before op 2 starts.
// CHECK-NEXT: memref.dealloc %[[T]]
// CHECK-NEXT: call @__vram_op(%[[C2:.*]])
// CHECK-NEXT: %[[V:.*]] = memref.expand_shape %[[A]]
// CHECK-NEXT: %[[R:.*]] = memref.alloc() : memref<2x2xf32>
// CHECK-NEXT: memref.copy %[[V]], %[[R]]
// Op 3 uses nothing; the view of A was used last in op 2.
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: call @__vram_op(%[[C3:.*]])
// CHECK-NEXT: return %[[R]]
// CHECK-NOT: memref.dealloc
func.func private @__vram_op(i64)
func.func @step(%arg0: memref<4xf32>) -> memref<2x2xf32> {
  %c1 = arith.constant 1 : i64
  %c2 = arith.constant 2 : i64
  %c3 = arith.constant 3 : i64
  call @__vram_op(%c1) : (i64) -> ()
  %a = memref.alloc() : memref<4xf32>
  memref.copy %arg0, %a : memref<4xf32> to memref<4xf32>
  %t = memref.alloc() : memref<4xf32>
  memref.copy %a, %t : memref<4xf32> to memref<4xf32>
  %s = memref.alloca() : memref<4xf32>
  memref.copy %t, %s : memref<4xf32> to memref<4xf32>
  call @__vram_op(%c2) : (i64) -> ()
  %v = memref.expand_shape %a [[0, 1]] output_shape [2, 2] : memref<4xf32> into memref<2x2xf32>
  %r = memref.alloc() : memref<2x2xf32>
  memref.copy %v, %r : memref<2x2xf32> to memref<2x2xf32>
  call @__vram_op(%c3) : (i64) -> ()
  return %r : memref<2x2xf32>
}

// -----

// Without markers: right after the last user.
// CHECK-LABEL: func.func @plain
// CHECK: %[[A:.*]] = memref.alloc()
// CHECK-NEXT: memref.copy %arg0, %[[A]]
// CHECK-NEXT: memref.copy %[[A]], %arg1
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: return
func.func @plain(%arg0: memref<4xf32>, %arg1: memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  memref.copy %arg0, %a : memref<4xf32> to memref<4xf32>
  memref.copy %a, %arg1 : memref<4xf32> to memref<4xf32>
  return
}
