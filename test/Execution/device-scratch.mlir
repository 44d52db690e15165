// REQUIRES: execution
// vram-device-scratch: the step's stack scratch (a softmax's row maxima, a
// norm's statistics: memref.alloca at the top of the function) and its
// constants (memref.global) would be host memory, which a GPU kernel cannot
// address (on an H200 such kernels faulted with CUDA_ERROR_ILLEGAL_ADDRESS). Each becomes a
// memref.alloc announced by @__vram_device_scratch (the GPU runner takes it
// from the driver, outside the caching allocator), freed before each
// return; an alloca inside a loop (a kernel's own) stays.
// RUN: vram-opt %s --vram-device-scratch --split-input-file | FileCheck %s

#map = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @step(%x: memref<4x8xf32>) -> memref<4x8xf32> {
  %y = memref.alloc() : memref<4x8xf32>
  %max = memref.alloca() : memref<4xf32>
  linalg.generic {indexing_maps = [#map, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x8xf32>) outs(%max : memref<4xf32>) {
  ^bb0(%a: f32, %m: f32):
    %r = arith.maximumf %a, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#map, #row, #map], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : memref<4x8xf32>, memref<4xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %r = arith.subf %a, %m : f32
    linalg.yield %r : f32
  }
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %own = memref.alloca() : memref<2xf32>
  }
  return %y : memref<4x8xf32>
}

// CHECK: func.func private @__vram_device_scratch()
// CHECK-LABEL: func.func @step
// CHECK: %[[Y:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK-NEXT: call @__vram_device_scratch() : () -> ()
// CHECK-NEXT: %[[MAX:.*]] = memref.alloc() : memref<4xf32>
// CHECK: ins(%{{.*}}, %[[MAX]] : memref<4x8xf32>, memref<4xf32>)
// CHECK: scf.for
// CHECK-NEXT: memref.alloca() : memref<2xf32>
// CHECK: memref.dealloc %[[MAX]] : memref<4xf32>
// CHECK-NEXT: return %[[Y]]

// -----

// A step without stack scratch is left alone: no marker is declared.
func.func @plain(%x: memref<4xf32>) -> memref<4xf32> {
  return %x : memref<4xf32>
}
// CHECK-NOT: __vram_device_scratch
// CHECK-LABEL: func.func @plain
// CHECK-NEXT: return

// -----

// A constant (memref.global: position ids, a causal mask) is host memory
// too: each use gets a device copy that the runner fills from the global's
// host address, announced by @__vram_device_constant, freed before return.
memref.global "private" constant @positions : memref<4xi64> = dense<[0, 1, 2, 3]>
func.func @ids(%out: memref<4xi64>) {
  %p = memref.get_global @positions : memref<4xi64>
  memref.copy %p, %out : memref<4xi64> to memref<4xi64>
  return
}
// CHECK: func.func private @__vram_device_constant(i64)
// CHECK-LABEL: func.func @ids
// CHECK: %[[HOST:.*]] = memref.get_global @positions : memref<4xi64>
// CHECK-NEXT: %[[ADDR:.*]] = memref.extract_aligned_pointer_as_index %[[HOST]]
// CHECK-NEXT: %[[ADDR64:.*]] = arith.index_cast %[[ADDR]] : index to i64
// CHECK-NEXT: call @__vram_device_constant(%[[ADDR64]]) : (i64) -> ()
// CHECK-NEXT: %[[COPY:.*]] = memref.alloc() : memref<4xi64>
// CHECK-NEXT: memref.copy %[[COPY]], %{{.*}}
// CHECK-NEXT: memref.dealloc %[[COPY]] : memref<4xi64>
// CHECK-NEXT: return
