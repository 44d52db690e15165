// vram-parallel's errors: it needs a built step, valid sizes, and runs once.
// RUN: vram-opt %s -split-input-file -verify-diagnostics --vram-parallel="dp=2"
// RUN: not vram-opt %S/parallel.mlir --vram-build-step --vram-parallel="dp=0" 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: vram-parallel needs dp >= 1 and bucket sizes >= 1 byte, got dp=0 bucket-cap=26214400 first-bucket=1048576
// A world size past 2^18 ranks (dp x fsdp would overflow at 2^63) is an
// error, not a wrapped number.
// RUN: not vram-opt %S/parallel.mlir --vram-build-step --vram-parallel="dp=4000000000 fsdp=4000000000" 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: error: vram-parallel needs fsdp >= 1, tp >= 1 and at most 262144 ranks, got dp=4000000000 fsdp=4000000000 tp=1
// A paged optimizer's state (CUDA unified memory) over ranks is not modelled.
// RUN: not vram-opt %S/build-step-paged-optimizer.mlir --vram-build-step="mode=train optimizer=paged_adamw loss=mse" --vram-parallel="dp=2" 2>&1 | FileCheck %s --check-prefix=PAGED
// PAGED: error: vram-parallel with a paged optimizer's state (paged_adamw, paged_adamw8bit) is not modelled yet

// expected-error @below {{vram-parallel needs a built step @step (run vram-build-step first)}}
module {
  func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %w = nn.param "w" : tensor<8x8xf32>
    %y = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
    return %y : tensor<2x8xf32>
  }
}

// -----

module {
  // expected-error @below {{the step is already parallel ('nn.parallel')}}
  func.func @step(%x: tensor<2x8xf32>) attributes {nn.mode = #nn<mode inference>, nn.parallel = #nn.parallel<dp = 2, fsdp = 1, shard = [], bucket_cap = 26214400, first_bucket = 1048576, bucket_view = false>} {
    return
  }
}

// -----

// A step built for tensor parallelism over 2 ranks, run as if for 1 (the
// RUN line's dp=2 leaves tp=1).
module {
  // expected-error @below {{the step's model was built for tp=2 tensor-parallel ranks ('nn.tensor_parallel'), not tp=1}}
  func.func @step(%x: tensor<2x8xf32>) attributes {nn.mode = #nn<mode inference>, nn.tensor_parallel = 2 : i64} {
    return
  }
}
