//===- Passes.td - lowering of the step --------------------*- tablegen -*-===//

#ifndef VRAM_CONVERSION_PASSES_TD
#define VRAM_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def LowerToTensor : Pass<"vram-lower-to-tensor", "mlir::ModuleOp"> {
  let summary = "Lowers the built step to linalg, tensor, arith and math";
  let description = [{
    Turns `@step` (built by vram-build-step) into real computation on
    upstream dialects: every op through its LowerToTensorOpInterface (the
    forward formula; `nn.saved` and `nn.backward` through the interface of
    the forward op they name). Parameters, buffers and optimizer state
    (PersistentStorageOpInterface) become function arguments after the
    step's own, in definition order, with `vram.storage` (their memory
    category) and `vram.name` argument attributes; the function returns the
    step's results, then the final value of each of those arguments (the
    optimizer updates them in place), then, with `return-grads`, each
    parameter gradient the optimizer consumed (`vram.name` =
    "PARAM.grad"). With `markers`, a call `@__vram_op(i64 index)` precedes
    the lowering of op `index` of the step (the memory analysis's op index),
    which the CPU runner uses to attribute allocations to ops and phases. An
    op without the interface is a located error naming it.

    ```
    vram-opt step.mlir --vram-lower-to-tensor="lr=0.1"
    ```
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"step\"",
           "the step function">,
    Option<"lr", "lr", "double", /*default=*/"0.01", "learning rate">,
    Option<"momentum", "momentum", "double", /*default=*/"0.9",
           "SGD momentum (optimizer momentum)">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "Adam beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "Adam beta2">,
    Option<"eps", "eps", "double", /*default=*/"1e-8", "Adam epsilon">,
    Option<"markers", "markers", "bool", /*default=*/"false",
           "call @__vram_op(index) before each op's lowering">,
    Option<"returnGrads", "return-grads", "bool", /*default=*/"false",
           "also return the parameter gradients">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::tensor::TensorDialect"];
}

#endif // VRAM_CONVERSION_PASSES_TD
