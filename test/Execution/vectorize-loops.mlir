// RUN: vram-opt %s -split-input-file --vram-vectorize-loops | FileCheck %s
// RUN: vram-opt %s -split-input-file --vram-vectorize-loops="vectorize=false" | FileCheck %s --check-prefix=ORDER
// REQUIRES: execution

// A window reduction (a 1-D convolution with a bounds-checked read, the
// shape of the conv lowering once bufferized): its innermost loop, the
// 3-tap window, moves outward and the output's dimension (16) becomes
// innermost. The payload loads from a buffer: the vectorizer refuses it and
// it stays a scalar loop nest.
#w = affine_map<(d0, d1, d2) -> (d0, d2)>
#y = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @window
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction", "parallel"]
// The payload's indices follow: the window index is loop 1, the output's 2.
// CHECK: linalg.index 0
// CHECK-NEXT: %[[O:.*]] = linalg.index 2
// CHECK-NEXT: %[[K:.*]] = linalg.index 1
// CHECK: arith.addi %[[O]], %[[K]]
// CHECK-NOT: vector.
// ORDER-LABEL: func.func @window
// ORDER: iterator_types = ["parallel", "reduction", "parallel"]
func.func @window(%x: memref<2x16xf32>, %w: memref<2x3xf32>, %y: memref<2x16xf32>) {
  linalg.generic {indexing_maps = [#w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%w : memref<2x3xf32>) outs(%y : memref<2x16xf32>) {
  ^bb0(%wv: f32, %acc: f32):
    %c = linalg.index 0 : index
    %o = linalg.index 1 : index
    %k = linalg.index 2 : index
    %i0 = arith.addi %o, %k : index
    %c1 = arith.constant 1 : index
    %i = arith.subi %i0, %c1 : index
    %c0 = arith.constant 0 : index
    %c15 = arith.constant 15 : index
    %lo = arith.maxsi %i, %c0 : index
    %cl = arith.minsi %lo, %c15 : index
    %xv = memref.load %x[%c, %cl] : memref<2x16xf32>
    %p = arith.mulf %xv, %wv : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// An elementwise op with a broadcast operand: tiled to 1 x 16 and
// vectorized, one 16-wide load per operand row and one store.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @elementwise
// CHECK: scf.for
// CHECK: scf.for
// CHECK: vector.load {{.*}} vector<16xf32>
// CHECK: arith.subf {{.*}} : vector<16xf32>
// CHECK: vector.store {{.*}} vector<16xf32>
// CHECK-NOT: linalg.generic
// ORDER-LABEL: func.func @elementwise
// ORDER: linalg.generic
func.func @elementwise(%x: memref<4x32xf32>, %m: memref<4xf32>, %y: memref<4x32xf32>) {
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : memref<4x32xf32>, memref<4xf32>) outs(%y : memref<4x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  }
  return
}

// -----

// A row sum over 24 elements: 8 wide (24 has no divisor 16), an ordered
// vector.reduction per tile that accumulates in the scalar loop's order.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @row_sum
// CHECK: vector.load {{.*}} vector<8xf32>
// CHECK: vector.reduction <add>, {{.*}} : vector<8xf32> into f32
func.func @row_sum(%x: memref<4x24xf32>, %y: memref<4xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x24xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Trip counts without a divisor among 16, 8, 4 stay scalar (no masks).
#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @odd
// CHECK: linalg.generic
// CHECK-NOT: vector.
func.func @odd(%x: memref<7xf32>, %y: memref<7xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<7xf32>) outs(%y : memref<7xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  }
  return
}
