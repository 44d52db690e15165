//===- Passes.td - analysis test passes --------------------*- tablegen -*-===//

#ifndef VRAM_ANALYSIS_PASSES_TD
#define VRAM_ANALYSIS_PASSES_TD

include "mlir/Pass/PassBase.td"

def PrintMemory : Pass<"vram-print-memory", "mlir::func::FuncOp"> {
  let summary = "Prints the memory analysis of each function";
  let description = [{
    Prints, op by op, the alloc/free event stream of the memory analysis and
    the live bytes while each op runs (exact allocator), then the peak, the
    breakdown at the peak, the persistent and the saved-for-backward bytes.
    The output is stable for FileCheck, in the spirit of upstream's
    `-test-print-liveness`.

    ```
    vram-opt step.mlir --vram-print-memory -o /dev/null
    memory of @step: 5 ops, 6 storages, 9 events
    entry:
      alloc #0 64 inputs arg0 tensor<2x8xf32>
    ...
    [2] nn.linear (forward):
      alloc #3 64 temporaries nn.linear tensor<2x8xf32>
      live 448
      free #0
    ```
  }];
  let options = [
    Option<"iterations", "iterations", "unsigned", /*default=*/"1",
           "also print the exact allocator's peaks over this many steps">,
  ];
}

def PrintFlops : Pass<"vram-print-flops", "mlir::func::FuncOp"> {
  let summary = "Prints the FLOP analysis of each function";
  let description = [{
    Prints each op's FLOPs under the macs, flops and full conventions, then
    the sums per phase and in total.

    ```
    vram-opt step.mlir --vram-print-flops -o /dev/null
    ```
  }];
}

#endif // VRAM_ANALYSIS_PASSES_TD
