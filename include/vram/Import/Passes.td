//===- Passes.td - ONNX import passes ----------------------*- tablegen -*-===//
//
// The passes of the ONNX import pipeline. The importer converts each node
// 1:1; these passes then recover what ONNX does not say: which ops PyTorch
// ran in place, and which layers the exporter decomposed.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_IMPORT_PASSES_TD
#define VRAM_IMPORT_PASSES_TD

include "mlir/Pass/PassBase.td"

def OnnxInferInplace : Pass<"vram-onnx-infer-inplace"> {
  let summary = "Marks the ReLU and Add that torchvision runs in place";
  let description = [{
    ONNX has no in-place ops, but PyTorch models write
    `nn.ReLU(inplace=True)` after batch norm and `out += identity` for
    residuals, which decides what autograd keeps (the result shares the
    input's storage; relu_ saves its result). This heuristic marks as
    `inplace`:
      - an `nn.relu` whose input is produced by `nn.batch_norm` or `nn.add`
        and has no other use;
      - an `nn.add` whose lhs is produced by `nn.batch_norm` or `nn.add`,
        has no other use, and has the shape of the result.
    It matches torchvision's ResNets; it is a guess, kept apart from the
    importer so that it can be turned off or replaced. It runs on the 1:1
    import, before vram-onnx-raise, so that the Add of an exported Linear's
    bias counts as an Add as in the ONNX graph.

    Example:
    ```mlir
    %b = nn.batch_norm %x, ... : ...
    %r = nn.relu %b : tensor<2x8x4x4xf32>
    // becomes
    %r = nn.relu %b {inplace} : tensor<2x8x4x4xf32>
    ```
  }];
  let options = [
    Option<"relu", "relu", "bool", /*default=*/"true",
           "mark ReLU after batch_norm/add as in place">,
    Option<"add", "add", "bool", /*default=*/"true",
           "mark Add after batch_norm/add (residuals) as in place">,
  ];
  let statistics = [
    Statistic<"numInplace", "num-inplace", "Number of ops marked in place">,
  ];
  let dependentDialects = ["::vram::nn::NNDialect"];
}

def OnnxRaiseDecompositions
    : Pass<"vram-onnx-raise"> {
  let summary = "Raises torch.onnx decompositions back to nn layers";
  let description = [{
    torch.onnx decomposes layers that the nn dialect keeps fused, and what a
    layer saves for backward differs from what its decomposition saves. The
    pass rewrites (RewritePatterns, greedy driver, no folding), each match
    requiring its intermediates to have no other use:
      - GELU, erf form: `0.5 * x * (1 + erf(x / sqrt(2)))` (or
        `x * (1/sqrt(2))`, any association of the products) -> `nn.gelu`;
      - GELU, tanh form:
        `0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))` ->
        `nn.gelu {approximate = #nn<approximate tanh>}`;
      - SiLU: `x * sigmoid(x)` -> `nn.silu`;
      - HardSwish: `x * hardsigmoid(x)` -> `nn.hardswish`;
      - LayerNorm before opset 17: `(x - mean(x)) / sqrt(mean((x -
        mean(x))^2) + eps)` over trailing dims [`* w`] [`+ b`] (1-D
        parameters) -> `nn.layer_norm`;
      - Linear: `matmul(x, W)` with a 2-D parameter `W` (or a transpose of
        one) -> `nn.linear`, its `+ b` (a 1-D parameter of the output size)
        folded in as the bias, and a weight that is a transpose of a
        parameter used once replaced by the transposed parameter;
      - `nn.clamp` to [0, 6] -> `nn.relu6`, to [0, inf) -> `nn.relu`.

    Example:
    ```mlir
    %s = nn.sigmoid %x : tensor<2x16xf32>
    %y = nn.mul %x, %s : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
    // becomes
    %y = nn.silu %x : tensor<2x16xf32>
    ```
  }];
  let options = [
    Option<"raiseLinear", "linear", "bool", /*default=*/"true",
           "raise [Transpose +] MatMul [+ Add] of parameters to nn.linear">,
    Option<"raiseActivations", "activations", "bool", /*default=*/"true",
           "raise GELU, SiLU, HardSwish, Mish and clamp forms">,
    Option<"raiseLayerNorm", "layer-norm", "bool", /*default=*/"true",
           "raise the LayerNorm and GroupNorm decompositions">,
    Option<"raisePooling", "pooling", "bool", /*default=*/"true",
           "raise Pad + AveragePool to avg_pool2d with padding "
           "(avg_pool2d(padding=p, count_include_pad=True) exports so)">,
  ];
  let statistics = [
    Statistic<"numRaised", "num-raised", "Number of layers raised">,
  ];
  let dependentDialects = ["::vram::nn::NNDialect"];
}

#endif // VRAM_IMPORT_PASSES_TD
