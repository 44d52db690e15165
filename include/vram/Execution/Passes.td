//===- Passes.td - passes of the execution pipeline --------*- tablegen -*-===//

#ifndef VRAM_EXECUTION_PASSES_TD
#define VRAM_EXECUTION_PASSES_TD

include "mlir/Pass/PassBase.td"

def FreeAfterLastUse : Pass<"vram-free-after-last-use", "mlir::func::FuncOp"> {
  let summary = "Frees each buffer after the op of the step that last uses it";
  let description = [{
    PyTorch's allocation policy on a bufferized step: every `memref.alloc`
    of the function body is freed (`memref.dealloc`) after its last use,
    through any view of it (ViewLikeOpInterface), at the granularity of the
    step's ops: the ops between two `@__vram_op` marker calls are one op of
    the step (vram-lower-to-tensor{markers}), so a buffer is freed at the end
    of the last step op that uses it, and an op's temporaries live until the
    op ends, as the memory analysis assumes. Without markers a buffer is
    freed right after its last user. Buffers the function returns are not
    freed (the caller owns them); stack buffers are not touched.

    ```
    vram-opt bufferized.mlir --vram-free-after-last-use
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def OffloadSerialCode : Pass<"vram-offload-serial-code", "mlir::func::FuncOp"> {
  let summary = "Wraps the step's serial loops and scalar accesses in one-iteration parallel loops, so they run on the device";
  let description = [{
    After `convert-linalg-to-parallel-loops`, a linalg op without parallel
    dimensions (a full reduction such as a loss's mean) is a plain `scf.for`
    nest, and an op on 0-d buffers is a bare `memref.load` / `memref.store`
    at the top of the function: `convert-parallel-loops-to-gpu` would leave
    them on the host, which cannot read device memory. This pass moves each
    maximal run of such top-level ops (ops that read or write buffers, and
    the pure ops between them whose results stay inside the run) into an
    `scf.parallel` of one iteration, which becomes a kernel of one thread.
    Allocation, views, calls and existing parallel loops stay where they are.
    A scalar read whose value the host needs afterwards is an error.

    ```
    vram-opt loops.mlir --vram-offload-serial-code
    ```
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def GpuThreadBlocks : Pass<"vram-gpu-thread-blocks", "mlir::func::FuncOp"> {
  let summary = "Shapes each outermost parallel loop as a grid of thread blocks of a fixed size";
  let description = [{
    `gpu-map-parallel-loops` maps the first three dimensions of an
    outermost `scf.parallel` to the grid and those of a nested one to the
    threads of a block; a lone loop nest therefore launches one thread per
    block, and dimensions after the third run serially. This pass first
    collapses all dimensions of each outermost parallel loop into one
    (`collapseParallelLoops`), then tiles it by `block-size`
    (`tileParallelLoop`, constant inner bound with an in-bounds check), so
    the outer loop becomes a 1-D grid of ceil(N / block-size) blocks and the
    inner one block-size threads, each doing one iteration of the original
    nest (its reductions stay serial loops inside the thread).

    ```
    vram-opt loops.mlir --vram-gpu-thread-blocks=block-size=256
    ```

    Before: `scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1)`.
    After: `scf.parallel (%b) = (%c0) to (%c32) step (%c256)` around
    `scf.parallel (%t) = (%c0) to (%c256) step (%c1)` with an `scf.if` on
    `%b + %t < 32`, the original indices recovered by div/rem.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", "256",
           "Threads per block (the inner loop's trip count)">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::affine::AffineDialect"];
}

def GpuLaunchToLoops : Pass<"vram-gpu-launch-to-loops", "mlir::func::FuncOp"> {
  let summary = "Runs each gpu.launch on the host: its body in loops over the grid's blocks and each block's threads";
  let description = [{
    Replaces every `gpu.launch` by an `scf.for` nest over its blocks (z, y,
    x) and, inside, its threads (z, y, x), with the launch's body inlined:
    block and thread ids become the loops' induction variables, grid and
    block sizes the launch's operands. The threads run one after another,
    which is what a kernel that never synchronizes (no barrier, no shared
    memory; what vram-lower-to-gpu generates) computes on a device. So the
    kernels of the GPU lowering, with their thread mapping, bounds checks
    and offloaded serial code, can run and be checked on a CPU
    (`--validate=gpu-emulated`). A launch that needs a device (barriers,
    shared memory, clusters, async tokens) is an error.

    ```
    vram-opt launches.mlir --vram-gpu-launch-to-loops
    ```

    Before: `gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, ...) threads(%tx, ...) in (%sx = %c256, ...) { ... gpu.terminator }`.
    After: `scf.for %bz = %c0 to %c1 step %c1 { ... scf.for %tx = %c0 to %c256 step %c1 { ... } }`.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def DeviceScratch : Pass<"vram-device-scratch", "mlir::ModuleOp"> {
  let summary = "Moves the step's stack scratch and constants to device memory outside the caching allocator";
  let description = [{
    The tensor lowering keeps what a kernel holds on its stack or in
    registers (a softmax's row maxima and sums, a norm's per-row
    statistics) in `memref.alloca` buffers at the top of the step: host
    stack memory, which a GPU kernel cannot address (an H200 faulted with
    CUDA_ERROR_ILLEGAL_ADDRESS). This pass turns each top-level
    `memref.alloca` of a function's body into a `memref.alloc` announced by
    a call to `@__vram_device_scratch` (the GPU runner then takes it
    straight from the driver, outside the caching allocator: PyTorch never
    allocates it), freed before each return, as a stack frame ends.
    Allocas inside loops (a kernel's own scratch) are left alone. Each
    top-level `memref.get_global` (a constant: position ids, a causal mask,
    equally host memory) gets a device copy: a `memref.alloc` announced by
    `@__vram_device_constant(address)`, which the runner fills from the
    global's host address, freed before each return as well.

    ```
    vram-opt bufferized.mlir --vram-device-scratch
    ```

    Before: `%s = memref.alloca() : memref<4xf32>`.
    After: `call @__vram_device_scratch() : () -> ()`,
    `%s = memref.alloc() : memref<4xf32>`, and `memref.dealloc %s` before
    `return`.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect"];
}

def MergeKernelModules : Pass<"vram-merge-kernel-modules", "mlir::ModuleOp"> {
  let summary = "Moves the outlined kernels into one gpu.module, one function per distinct kernel";
  let description = [{
    `gpu-kernel-outlining` makes a `gpu.module` of each launch, so a step of
    a few thousand loop nests is a few thousand modules: as many LLVM
    compilations and ptxas runs while lowering, and as many PTX JIT
    compilations and `cuModuleLoadData` calls when the step loads. Most are
    the same kernel (every block of a ResNet stage, every layer of a
    transformer). This pass moves each kernel into one `gpu.module`
    (named `step_kernels`), keeps one function per distinct kernel (equal
    printed bodies), names it after the module it came from, and points
    every `gpu.launch_func` at it. Modules that hold anything but one
    kernel are left alone.

    ```
    vram-opt outlined.mlir --vram-merge-kernel-modules
    ```

    Before: `gpu.launch_func @step_kernel::@step_kernel` and
    `gpu.launch_func @step_kernel_0::@step_kernel`, two equal modules.
    After: both `gpu.launch_func @step_kernels::@step_kernel`.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def CompilerBuffers : Pass<"vram-compiler-buffers", "mlir::ModuleOp"> {
  let summary = "Lets MLIR's in-place analysis choose the step's buffers";
  let description = [{
    The `compiler` allocation mode (docs/Execution.md). vram-lower-to-tensor
    marks every tensor PyTorch allocates as `bufferization.alloc_tensor`, a
    buffer nothing may fold or reuse. This pass drops that constraint, as a
    compiler such as torch.compile's would:

    1. every `bufferization.alloc_tensor` without operands becomes a
       `tensor.empty`, which one-shot bufferization may eliminate or
       bufferize as it sees fit;
    2. destination reuse: an all-parallel `linalg.generic` whose only init
       is such a `tensor.empty` (its payload never reads the init) writes
       into one of its inputs instead, the first one with the init's type
       and indexing map that is not a function argument. One-shot
       bufferization's in-place analysis (run here on the whole module,
       function boundaries included) then decides: where writing into that
       input would clobber a value still read later (a read-after-write
       conflict), the rewrite is undone and the op keeps its fresh buffer.

    The result is still tensor IR; the runner bufferizes it with one-shot
    bufferization and frees with the ownership-based buffer deallocation
    pipeline and optimize-allocation-liveness.

    ```
    vram-opt lowered.mlir --vram-compiler-buffers
    ```

    Before (relu of a value that nothing reads afterwards):
    ```mlir
    %0 = bufferization.alloc_tensor() : tensor<4xf32>
    %1 = linalg.generic {...} ins(%x : tensor<4xf32>) outs(%0 : tensor<4xf32>)
    ```
    After:
    ```mlir
    %1 = linalg.generic {...} ins(%x : tensor<4xf32>) outs(%x : tensor<4xf32>)
    ```
  }];
  let statistics = [
    Statistic<"numReused", "reused-operands",
              "ops writing into a dead input instead of a new buffer">,
    Statistic<"numUndone", "undone-reuses",
              "reuses undone because the in-place analysis found a conflict">,
  ];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def VectorizeLoops : Pass<"vram-vectorize-loops", "mlir::func::FuncOp"> {
  let summary = "Reorders, tiles and vectorizes the bufferized step's linalg ops";
  let description = [{
    Speed for the executed step without touching its heap buffers: it runs
    on the bufferized, freed step (after vram-free-after-last-use or the
    deallocation pipeline) and creates only views and vector values.

    1. Loop order: a `linalg.generic` whose innermost loop is a short
       reduction (a window: conv's kh/kw, a pooling window; static trip
       count below `short-reduction`) is interchanged
       (linalg::interchangeGenericOp) so the loops over the output's
       trailing (contiguous) dimensions are innermost, the reductions just
       outside them: `y[n, f, oh, ow] += ...` runs over `ow` innermost.
    2. Vectorization: an op the linalg vectorizer accepts (static shapes, a
       payload of elementwise-mappable ops and linalg.index; not the
       bounds-checked gathers of conv and pooling, whose reads are loads
       in the payload once bufferized) whose innermost trip count has a
       divisor among 16, 8, 4 is tiled (scf::tileUsingSCF) to 1 x ... x 1 x
       V and each tile vectorized (linalg::vectorize). Reductions become
       ordered `vector.reduction`s, so every sum is accumulated in the same
       order as the scalar loop: the numbers do not change.
    3. The vector ops are lowered to 1-D transfers and reductions (upstream
       vector lowering patterns); convert-vector-to-llvm finishes.

    ```
    vram-opt bufferized.mlir --vram-vectorize-loops
    ```
  }];
  let options = [
    Option<"shortReduction", "short-reduction", "int64_t", /*default=*/"16",
           "innermost reductions with fewer iterations are moved outward">,
    Option<"vectorize", "vectorize", "bool", /*default=*/"true",
           "tile and vectorize (else only reorder loops)">,
  ];
  let statistics = [
    Statistic<"numInterchanged", "interchanged", "ops whose loops were reordered">,
    Statistic<"numVectorized", "vectorized", "ops tiled and vectorized">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect"];
}

def OutlineKernels : Pass<"vram-outline-kernels", "mlir::ModuleOp"> {
  let summary = "Moves each loop nest of a bufferized step into a function of its own, one function per distinct nest";
  let description = [{
    A whole training step lowered to loops is one function with thousands
    of loop nests, and LLVM's loop analyses (ScalarEvolution's guard walk up
    the dominator tree) cost time quadratic in the size of a function: most
    of the JIT time of resnet18 went there. This pass outlines every
    top-level linalg op and every top-level op with regions (scf loops) of
    each function body into a private `noinline` function taking the
    buffers and scalars the nest uses (constants are cloned in), and
    replaces it by a call. Nests that are equal up to their operands (the
    same shapes, layouts, indexing maps and payload, as the second block of
    a ResNet stage repeats the first) share one function, so each distinct
    kernel is compiled once. Allocation, frees, views and the step's marker
    calls stay in the caller, so the allocation sequence does not change.

    A nest that uses a buffer of dynamic shape or layout stays inline (the
    runner's bare-pointer calling convention needs static ones).

    ```
    vram-opt loops.mlir --vram-outline-kernels
    ```

    Before:
    ```mlir
    func.func @step(%a: memref<4xf32>, %b: memref<4xf32>) {
      linalg.generic {...} ins(%a : memref<4xf32>) outs(%b : memref<4xf32>) {...}
      return
    }
    ```
    After:
    ```mlir
    func.func @step(%a: memref<4xf32>, %b: memref<4xf32>) {
      call @__vram_kernel_0(%a, %b) : (memref<4xf32>, memref<4xf32>) -> ()
      return
    }
    func.func private @__vram_kernel_0(%arg0: memref<4xf32>, %arg1: memref<4xf32>)
        attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]} {
      linalg.generic {...} ins(%arg0 : memref<4xf32>) outs(%arg1 : memref<4xf32>) {...}
      return
    }
    ```
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

#endif // VRAM_EXECUTION_PASSES_TD
