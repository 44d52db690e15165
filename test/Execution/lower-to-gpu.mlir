// REQUIRES: execution
// The GPU lowering of a bufferized step: every loop nest becomes a kernel
// launch (a parallel op as a grid of threads; a full reduction and a 0-d
// store, which would otherwise run on the host, as kernels of one thread),
// the step's buffers are allocated through the generic allocation functions
// (the runner's device allocator), and the kernels are PTX for sm_90.
// RUN: vram-opt %s --vram-lower-to-gpu | FileCheck %s
// RUN: vram-opt %s --vram-lower-to-gpu="chip=sm_80" | FileCheck %s --check-prefix=SM80

#map = affine_map<(d0, d1) -> (d0, d1)>
#sum = affine_map<(d0, d1) -> ()>
func.func @step(%a: memref<4x8xf32>, %b: memref<4x8xf32>) -> memref<f32> {
  %c = memref.alloc() : memref<4x8xf32>
  linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : memref<4x8xf32>, memref<4x8xf32>) outs(%c : memref<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  %loss = memref.alloc() : memref<f32>
  %zero = arith.constant 0.0 : f32
  memref.store %zero, %loss[] : memref<f32>
  linalg.generic {indexing_maps = [#map, #sum], iterator_types = ["reduction", "reduction"]}
      ins(%c : memref<4x8xf32>) outs(%loss : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  memref.dealloc %c : memref<4x8xf32>
  return %loss : memref<f32>
}

// CHECK-LABEL: llvm.func @step
// CHECK-NOT: llvm.call @malloc
// CHECK: llvm.call @_mlir_memref_to_llvm_alloc
// Each memref reaches the kernel as its whole descriptor, as the kernel
// declares it: the 4x8 add's launch passes 5 index values (the loop's
// bounds and step) and 3 descriptors of 7 fields (2 pointers, offset, 2
// sizes, 2 strides), 26 arguments, not 3 bare pointers.
// CHECK: gpu.launch_func {{ *}}@step_kernels::@step_kernel blocks in
// CHECK-SAME: args({{([^:]+ : i64(, [^:,]+ : i64){4}(, [^:,]+ : !llvm.ptr, [^:,]+ : !llvm.ptr(, [^:,]+ : i64){5}){3})}})
// CHECK: llvm.call @_mlir_memref_to_llvm_alloc
// CHECK: gpu.launch_func {{ *}}@step_kernels::@step_kernel_0 blocks in (%[[ONE:.*]], %[[ONE]], %[[ONE]]) threads in (%[[ONE]], %[[ONE]], %[[ONE]])
// CHECK: llvm.call @_mlir_memref_to_llvm_free
// The kernels are one module (vram-merge-kernel-modules): one binary.
// CHECK: gpu.binary @step_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, {{.*}}assembly = "{{.*}}.target sm_90
// CHECK-SAME: .entry step_kernel(
// CHECK-SAME: .entry step_kernel_0(
// CHECK-NOT: gpu.binary
// SM80: .target sm_80

// Thread blocks (vram-gpu-thread-blocks): the 4x8 add is 32 threads, in
// blocks of 16 a grid of 2; the full reduction stays one thread.
// RUN: vram-opt %s --vram-lower-to-gpu="block-size=16" | FileCheck %s --check-prefix=BLOCKS
// BLOCKS-DAG: %[[TWO:.*]] = llvm.mlir.constant(2 : index) : i64
// BLOCKS-DAG: %[[SIXTEEN:.*]] = llvm.mlir.constant(16 : index) : i64
// BLOCKS-DAG: %[[ONE:.*]] = llvm.mlir.constant(1 : index) : i64
// BLOCKS: gpu.launch_func {{ *}}@step_kernels::@step_kernel blocks in (%[[TWO]], %[[ONE]], %[[ONE]]) threads in (%[[SIXTEEN]], %[[ONE]], %[[ONE]])
