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

#endif // VRAM_EXECUTION_PASSES_TD
