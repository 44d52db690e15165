//===- Passes.td - vram-opt passes -------------------------*- tablegen -*-===//

#ifndef VRAM_TRANSFORMS_PASSES_TD
#define VRAM_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def BuildStep : Pass<"vram-build-step", "mlir::ModuleOp"> {
  let summary = "Builds the inference or training step from a forward model";
  let description = [{
    Turns `@forward` into `@step`, one explicit iteration as PyTorch eager
    runs it. In inference mode the forward runs under no-grad semantics. In
    train mode the step holds the forward ops, the loss, the backward nodes
    in reverse order (each keeping what its autograd formula saves, see the
    AutodiffOpInterface), gradient accumulation and the optimizer update with
    its persistent state and temporaries.

    ```
    vram-opt model.mlir --vram-build-step="mode=train optimizer=adam"
    ```
  }];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"train\"",
           "inference or train">,
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"adam\"",
           "sgd, momentum, adam or adamw">,
    Option<"implementation", "implementation", "std::string",
           /*default=*/"\"foreach\"",
           "optimizer implementation: foreach (default, as on CUDA), fused or for-loop">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0.0",
           "weight decay">,
    Option<"loss", "loss", "std::string", /*default=*/"\"cross_entropy\"",
           "cross_entropy or mse">,
    Option<"setToNone", "set-to-none", "bool", /*default=*/"true",
           "zero_grad(set_to_none): when false, gradients stay allocated "
           "across iterations">,
    Option<"inputRequiresGrad", "input-requires-grad", "bool",
           /*default=*/"false",
           "whether floating-point model inputs require grad">,
    Option<"entry", "entry", "std::string", /*default=*/"\"forward\"",
           "name of the forward function">,
  ];
  let dependentDialects = ["::vram::nn::NNDialect", "::mlir::func::FuncDialect"];
}

def Freeze : Pass<"vram-freeze", "mlir::ModuleOp"> {
  let summary = "Freezes parameters by name (requires_grad=False)";
  let description = [{
    Marks every `nn.param` whose name matches one of `patterns` (glob
    syntax, e.g. `layer1.*`) and none of `keep` as not trainable. Frozen
    parameters get no gradient and no optimizer state, and ops none of whose
    inputs require grad record no backward node.

    ```
    vram-opt --zoo=resnet18 --vram-freeze="patterns=* keep=fc.*"
    ```
  }];
  let options = [
    ListOption<"patterns", "patterns", "std::string",
               "glob patterns of parameter names to freeze">,
    ListOption<"keep", "keep", "std::string",
               "glob patterns of parameter names that stay trainable">,
  ];
  let dependentDialects = ["::vram::nn::NNDialect"];
}

#endif // VRAM_TRANSFORMS_PASSES_TD
