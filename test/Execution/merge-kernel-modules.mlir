// REQUIRES: execution
// RUN: vram-opt %s -split-input-file --vram-merge-kernel-modules | FileCheck %s

// Three outlined kernels, two of them equal: one module, two functions
// (named after the modules they came from), every launch pointed at them.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: gpu.launch_func @step_kernels::@step_kernel blocks
// CHECK: gpu.launch_func @step_kernels::@step_kernel_0 blocks
// CHECK: gpu.launch_func @step_kernels::@step_kernel blocks
// CHECK: gpu.module @step_kernels {
// CHECK: gpu.func @step_kernel(%{{.*}}: memref<8xf32>) kernel
// CHECK: arith.addf
// CHECK: gpu.func @step_kernel_0(%{{.*}}: memref<8xf32>) kernel
// CHECK: arith.mulf
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
  func.func @step(%a: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    gpu.launch_func @step_kernel::@step_kernel blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%a : memref<8xf32>)
    gpu.launch_func @step_kernel_0::@step_kernel blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%a : memref<8xf32>)
    gpu.launch_func @step_kernel_1::@step_kernel blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%a : memref<8xf32>)
    return
  }
  gpu.module @step_kernel {
    gpu.func @step_kernel(%a: memref<8xf32>) kernel {
      %t = gpu.thread_id x
      %x = memref.load %a[%t] : memref<8xf32>
      %y = arith.addf %x, %x : f32
      memref.store %y, %a[%t] : memref<8xf32>
      gpu.return
    }
  }
  gpu.module @step_kernel_0 {
    gpu.func @step_kernel(%a: memref<8xf32>) kernel {
      %t = gpu.thread_id x
      %x = memref.load %a[%t] : memref<8xf32>
      %y = arith.mulf %x, %x : f32
      memref.store %y, %a[%t] : memref<8xf32>
      gpu.return
    }
  }
  gpu.module @step_kernel_1 {
    gpu.func @step_kernel(%b: memref<8xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %b[%i] : memref<8xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %b[%i] : memref<8xf32>
      gpu.return
    }
  }
}

// -----

// A module with a target already (or anything but one kernel) is left alone;
// one kernel alone is not moved.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: gpu.launch_func @lone::@k
// CHECK: gpu.module @lone {
module attributes {gpu.container_module} {
  func.func @step(%a: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @lone::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<8xf32>)
    return
  }
  gpu.module @lone {
    gpu.func @k(%a: memref<8xf32>) kernel {
      gpu.return
    }
  }
}
