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

#endif // VRAM_EXECUTION_PASSES_TD
