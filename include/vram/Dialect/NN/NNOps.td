//===- NNOps.td - nn dialect ops ---------------------------*- tablegen -*-===//

#ifndef VRAM_DIALECT_NN_NNOPS_TD
#define VRAM_DIALECT_NN_NNOPS_TD

include "vram/Dialect/NN/NNDialect.td"
include "vram/Dialect/NN/NNInterfaces.td"
include "vram/Dialect/NN/NNAttributes.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Base classes
//===----------------------------------------------------------------------===//

def NN_FloatTensor : StaticShapeTensorOf<[AnyFloat]>;
def NN_IntTensor : StaticShapeTensorOf<[AnySignlessInteger]>;
def NN_AnyTensor : StaticShapeTensorOf<[AnyType]>;

class NN_Op<string mnemonic, list<Trait> traits = []>
    : Op<NN_Dialect, mnemonic, traits>;

// A loss: what its backward node keeps is not part of the model's saved
// activations (the quantity measured after the model's forward pass).
def NN_LossOpTrait : NativeOpTrait<"LossOpTrait"> {
  let cppNamespace = "::vram::nn";
}

// CUDA runs the op with cuBLAS GEMMs (Device.h: the cuBLAS workspaces).
def NN_CublasOpTrait : NativeOpTrait<"CublasOpTrait"> {
  let cppNamespace = "::vram::nn";
}

// torch.autocast policies (NNInterfaces.h): which dtype an op runs in under
// mixed precision. Ops without one run in their inputs' dtype.
class NN_AutocastTrait<string name> : NativeOpTrait<name> {
  let cppNamespace = "::vram::nn";
}
def NN_AutocastLowerPrecision : NN_AutocastTrait<"AutocastLowerPrecision">;
def NN_AutocastFloat32 : NN_AutocastTrait<"AutocastFloat32">;
def NN_AutocastFloat32Output : NN_AutocastTrait<"AutocastFloat32Output">;
def NN_AutocastPromote : NN_AutocastTrait<"AutocastPromote">;

// A layer op: has a cost and an autograd formula, implemented in its family's
// lib/Dialect/NN/NNOps<Family>.cpp (NNOpsLinearAlgebra.cpp, ...).
// `autodiff`: optional AutodiffOpInterface methods the op implements.
class NN_LayerOp<string mnemonic, list<Trait> traits = [],
                 list<string> autodiff = []>
    : NN_Op<mnemonic, !listconcat(traits, [
        Pure,
        DeclareOpInterfaceMethods<NN_CostOpInterface, ["getBackwardFlops"]>,
        DeclareOpInterfaceMethods<NN_AutodiffOpInterface, autodiff>])>;

// Like NN_LayerOp but keeps the default backward FLOPs. `pure` = 0 for ops
// with an in-place form, which declare their effects instead.
class NN_SimpleLayerOp<string mnemonic, list<Trait> traits = [], bit pure = 1,
                       list<string> autodiff = []>
    : NN_Op<mnemonic, !listconcat(traits, !if(pure, [Pure], []), [
        DeclareOpInterfaceMethods<NN_CostOpInterface>,
        DeclareOpInterfaceMethods<NN_AutodiffOpInterface, autodiff>])>;

// An op with an `inplace` form writes its operand's storage then, so it is
// not Pure: CSE must never merge it, nor a recomputed copy with it.
defvar NN_InplaceEffects = DeclareOpInterfaceMethods<MemoryEffectsOpInterface>;

// A view: its result shares the storage of `input`, costs nothing and
// records a backward node that saves nothing.
// `gradIsView`: the backward hands a view of the output gradient to the input
// (reshape, transpose, permute, flatten). Slice and expand instead build a new
// input-sized gradient (zeros + copy, or a sum).
// `reshapes`: the view re-chunks its input (reshape, flatten), which needs
// strides that can express the new shape (LayoutOpInterface).
class NN_ViewOp<string mnemonic, list<Trait> traits = [], bit gradIsView = 1,
                bit reshapes = 0>
    : NN_Op<mnemonic, !listconcat(traits, [
        Pure,
        DeclareOpInterfaceMethods<NN_AliasingOpInterface>,
        DeclareOpInterfaceMethods<NN_LayoutOpInterface,
            !if(reshapes, ["getResultStrides", "getOperandViews"],
                          ["getResultStrides"])>,
        DeclareOpInterfaceMethods<NN_CostOpInterface>,
        DeclareOpInterfaceMethods<NN_AutodiffOpInterface, ["isGradPassthrough"]>])> {
  let extraClassDefinition = !strconcat([{
    bool $cppClass::isGradPassthrough(unsigned) { return }],
    !if(gradIsView, "true", "false"), [{; }
    ::mlir::Value $cppClass::getAliasedOperand(unsigned) { return getInput(); }
    int64_t $cppClass::getFlops(::vram::nn::FlopConvention, bool) {
      return 0;
    }
    void $cppClass::getSavedTensors(
        const ::vram::nn::TorchTarget &, ::llvm::ArrayRef<bool>,
        ::llvm::SmallVectorImpl<::vram::nn::SavedTensor> &) {}
  }]);
}

//===----------------------------------------------------------------------===//
// Parameters and buffers
//===----------------------------------------------------------------------===//

def NN_ParamOp : NN_Op<"param", [Pure,
    DeclareOpInterfaceMethods<NN_PersistentStorageOpInterface>]> {
  let summary = "a model parameter (nn.Parameter)";
  let description = [{
    A parameter of the model, with its PyTorch name. `trainable = false`
    marks a frozen parameter (`requires_grad=False`).

    ```mlir
    %w = nn.param "layer1.0.conv1.weight" : tensor<64x64x3x3xf32>
    %h = nn.param "fc.weight" {trainable = false} : tensor<10x512xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name,
                       DefaultValuedAttr<BoolAttr, "true">:$trainable);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def NN_BufferOp : NN_Op<"buffer", [Pure,
    DeclareOpInterfaceMethods<NN_PersistentStorageOpInterface>]> {
  let summary = "a model buffer (register_buffer), never trained";
  let description = [{
    Persistent state that is not a parameter: BatchNorm running statistics,
    a causal mask, position ids.

    ```mlir
    %m = nn.buffer "bn1.running_mean" : tensor<64xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs NN_AnyTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def NN_QuantizedWeightOp : NN_Op<"quantized_weight", [Pure,
    DeclareOpInterfaceMethods<NN_PersistentStorageOpInterface>]> {
  let summary = "a bitsandbytes quantized weight (Params4bit or Int8Params) "
                "and its quantization state";
  let description = [{
    A frozen linear weight of logical shape `shape` ([out_features,
    in_features]), quantized from `dtype` as `config` says.

    int8 (LLM.int8's Int8Params): `packed` is CB, the weight in int8
    [out, in], and `state` SCB, the float32 absmax of each row [out].

    ```mlir
    %cb, %scb = nn.quantized_weight "q_proj.weight"
        #nn.quantize<int8, blocksize = 0, double_quant = false, threshold = 6.000000e+00>
        shape [256, 256] from f32 : tensor<256x256xi8>, tensor<256xf32>
    ```

    4-bit: `packed` holds
    two 4-bit codes per byte, as bitsandbytes' Params4bit
    ([(numel + 1) / 2, 1] uint8). `state` are the QuantState's tensors, each
    its own storage: `absmax` (float32 per block of `blocksize`, uint8 with
    double quantization) and `code` (16 float32); with double quantization
    also `offset` (a float32 scalar), `state2.absmax` (float32 per 256
    blocks) and `state2.code` (256 float32). The parameter count is the
    logical one (transformers counts a 4-bit weight twice per byte).

    ```mlir
    %w, %absmax, %code = nn.quantized_weight "q_proj.weight"
        #nn.quantize<nf4, blocksize = 64, double_quant = false> shape [256, 256] from f32
        : tensor<32768x1xui8>, tensor<1024xf32>, tensor<16xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, NN_QuantizationAttr:$config,
                       DenseI64ArrayAttr:$shape, TypeAttr:$dtype);
  let results = (outs NN_AnyTensor:$packed, Variadic<NN_AnyTensor>:$state);
  let assemblyFormat = [{
    $name $config `shape` $shape `from` $dtype attr-dict `:` type($packed)
    (`,` type($state)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The elements of the logical weight.
    int64_t getNumElements();
  }];
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

def NN_Conv2dOp : NN_LayerOp<"conv2d", [InferTypeOpAdaptor, NN_AutocastLowerPrecision,
    DeclareOpInterfaceMethods<NN_WorkspaceOpInterface>],
    ["getBackwardWorkspace"]> {
  let summary = "2-D convolution (torch.nn.Conv2d)";
  let description = [{
    `input` is NCHW, `weight` is [Cout, Cin/groups, kh, kw], `bias` [Cout].

    ```mlir
    %y = nn.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 3, 3>}
        : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>) -> tensor<1x64x112x112xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$weight,
      Optional<NN_FloatTensor>:$bias,
      DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$strides,
      DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$padding,
      DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilation,
      DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
}

def NN_ConvTranspose2dOp : NN_LayerOp<"conv_transpose2d", [InferTypeOpAdaptor,
    NN_AutocastLowerPrecision]> {
  let summary = "2-D transposed convolution (torch.nn.ConvTranspose2d)";
  let description = [{
    `input` is NCHW, `weight` is [Cin, Cout/groups, kh, kw], `bias` [Cout].
    The output side is (H - 1) * stride - 2 * padding
    + dilation * (k - 1) + output_padding + 1. Like conv2d it keeps its
    input and weight for backward.

    ```mlir
    %y = nn.conv_transpose2d %x, %w {strides = array<i64: 2, 2>}
        : (tensor<2x16x16x16xf32>, tensor<16x8x2x2xf32>) -> tensor<2x8x32x32xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$weight,
      Optional<NN_FloatTensor>:$bias,
      DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$strides,
      DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$padding,
      DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$output_padding,
      DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilation,
      DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
}

def NN_LinearOp : NN_LayerOp<"linear", [InferTypeOpAdaptor, NN_AutocastLowerPrecision,
    NN_CublasOpTrait,
    DeclareOpInterfaceMethods<NN_LayoutOpInterface, ["getOperandViews"]>],
    ["isGradView"]> {
  let summary = "y = x W^T + b (torch.nn.Linear)";
  let description = [{
    `weight` is [out_features, in_features]; `input` is [..., in_features].

    ```mlir
    %y = nn.linear %x, %w, %b : (tensor<2x512xf32>, tensor<10x512xf32>, tensor<10xf32>) -> tensor<2x10xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$weight,
                       Optional<NN_FloatTensor>:$bias);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
}

def NN_Linear4bitOp : NN_LayerOp<"linear_4bit", [InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<NN_WorkspaceOpInterface,
                              ["getWorkspaceAllocations"]>,
    DeclareOpInterfaceMethods<NN_LayoutOpInterface, ["getOperandViews"]>],
    ["isDifferentiableOperand", "getBackwardWorkspace"]> {
  let summary = "y = x W^T + b over a 4-bit weight (bitsandbytes Linear4bit)";
  let description = [{
    bitsandbytes' `matmul_4bit` (MatMul4Bit) in the compute dtype, the
    input's: `weight` is the `packed` result of an `nn.quantized_weight`
    whose logical shape is [out_features, in_features].

    What it costs beyond a linear: the forward dequantizes the weight into
    a temporary in the input's dtype (the float32 absmax first, with double
    quantization) and multiplies (gemm_4bit's dequantize + F.linear path;
    on CUDA bitsandbytes 0.50 uses its fused kernel instead for at most 4
    rows); the backward dequantizes it again, in the dtype it was quantized
    from, and casts it to the gradient's. Autograd keeps nothing: the
    weight is a frozen parameter and the input is not needed (no weight
    gradient).

    ```mlir
    %y = nn.linear_4bit %x, %w : (tensor<2x64x256xbf16>, tensor<32768x1xui8>) -> tensor<2x64x256xbf16>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_AnyTensor:$weight,
                       Optional<NN_FloatTensor>:$bias);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The nn.quantized_weight the weight comes from.
    QuantizedWeightOp getQuantizedWeight();
  }];
}

def NN_Linear8bitOp : NN_LayerOp<"linear_8bit", [InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<NN_WorkspaceOpInterface,
                              ["getWorkspaceAllocations"]>,
    DeclareOpInterfaceMethods<NN_LayoutOpInterface, ["getOperandViews"]>],
    ["isDifferentiableOperand", "getBackwardWorkspace"]> {
  let summary = "y = x W^T + b over an int8 weight (bitsandbytes "
                "Linear8bitLt, LLM.int8)";
  let description = [{
    bitsandbytes' `bnb.matmul` over the `packed` result (CB, [out, in]
    int8) of an `nn.quantized_weight` with an int8 config, in the input's
    dtype. What it costs beyond a linear (bitsandbytes 0.50, see
    docs/Scenarios.md):

    - CUDA, and the CPU outside training: MatMul8bitLt. The input is
      quantized row-wise to int8 (a float16 copy first, unless it is
      float16; with a threshold, `abs() >= threshold` finds the outlier
      columns), multiplied in int8 into an int32 product, dequantized to
      float16 and cast to the input's dtype. The config's assumed outlier
      columns add the input's columns in its dtype (`subA`) and the weight's
      columns dequantized, multiplied in 16 bits and added (`addmm`).
      Training keeps the input and `subA` on the node.
    - The CPU in a training step: MatMul8bitFp, the weight dequantized into
      the input's dtype and F.linear; the node keeps the input.

    The backward dequantizes the weight into the input's dtype for grad_A;
    the frozen weight gets no gradient.

    ```mlir
    %y = nn.linear_8bit %x, %cb : (tensor<2x64x256xf16>, tensor<256x256xi8>) -> tensor<2x64x256xf16>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_AnyTensor:$weight,
                       Optional<NN_FloatTensor>:$bias);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The nn.quantized_weight the weight comes from.
    QuantizedWeightOp getQuantizedWeight();
  }];
}

def NN_MatmulOp : NN_LayerOp<"matmul", [InferTypeOpAdaptor, NN_AutocastLowerPrecision,
    NN_CublasOpTrait,
    DeclareOpInterfaceMethods<NN_LayoutOpInterface, ["getOperandViews"]>],
    ["isGradView"]> {
  let summary = "torch.matmul with batch broadcasting";
  let description = [{
    Both operands have rank >= 2; leading (batch) dimensions broadcast.

    ```mlir
    %s = nn.matmul %q, %kt : (tensor<2x8x128x32xf32>, tensor<2x8x32x128xf32>) -> tensor<2x8x128x128xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$lhs, NN_FloatTensor:$rhs);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
}

def NN_BmmOp : NN_LayerOp<"bmm", [InferTypeOpAdaptor, NN_AutocastLowerPrecision,
                                  NN_CublasOpTrait]> {
  let summary = "batched matrix multiply of rank-3 tensors (torch.bmm)";
  let description = [{
    ```mlir
    %y = nn.bmm %a, %b : (tensor<4x16x8xf32>, tensor<4x8x32xf32>) -> tensor<4x16x32xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$lhs, NN_FloatTensor:$rhs);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

def NN_BatchNormOp : NN_SimpleLayerOp<"batch_norm",
    [InferTypeOpAdaptor, AttrSizedOperandSegments], /*pure=*/1,
    ["getBackwardWorkspace"]> {
  let summary = "batch normalization over the channel dimension 1";
  let description = [{
    In a training step it normalizes with batch statistics and keeps, for
    backward, the input plus per-channel mean and inverse std (fp32).

    ```mlir
    %y = nn.batch_norm %x weight %g bias %b stats %m, %v
        : (tensor<2x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x64x56x56xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input,
      Optional<NN_FloatTensor>:$weight, Optional<NN_FloatTensor>:$bias,
      Optional<NN_FloatTensor>:$running_mean,
      Optional<NN_FloatTensor>:$running_var,
      DefaultValuedAttr<F64Attr, "1e-5">:$eps,
      DefaultValuedAttr<F64Attr, "0.1">:$momentum);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = [{
    $input (`weight` $weight^)? (`bias` $bias^)?
    (`stats` $running_mean^ `,` $running_var)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def NN_LayerNormOp : NN_SimpleLayerOp<"layer_norm",
    [InferTypeOpAdaptor, AttrSizedOperandSegments, NN_AutocastFloat32]> {
  let summary = "layer normalization over the trailing dimensions";
  let description = [{
    Normalizes over the last `normalized_rank` dimensions; keeps input, mean
    and rstd (fp32, one per normalized row) for backward.

    ```mlir
    %y = nn.layer_norm %x weight %g bias %b {normalized_rank = 1 : i64}
        : (tensor<2x128x256xf32>, tensor<256xf32>, tensor<256xf32>) -> tensor<2x128x256xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input,
      Optional<NN_FloatTensor>:$weight, Optional<NN_FloatTensor>:$bias,
      DefaultValuedAttr<I64Attr, "1">:$normalized_rank,
      DefaultValuedAttr<F64Attr, "1e-5">:$eps);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = [{
    $input (`weight` $weight^)? (`bias` $bias^)? attr-dict `:`
    functional-type(operands, results)
  }];
}

def NN_RmsNormOp : NN_SimpleLayerOp<"rms_norm", [InferTypeOpAdaptor,
                                                NN_AutocastFloat32]> {
  let summary = "RMS normalization over the trailing dimensions";
  let description = [{
    ```mlir
    %y = nn.rms_norm %x weight %g : (tensor<1x16x4096xf32>, tensor<4096xf32>) -> tensor<1x16x4096xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, Optional<NN_FloatTensor>:$weight,
      DefaultValuedAttr<I64Attr, "1">:$normalized_rank,
      DefaultValuedAttr<F64Attr, "1e-6">:$eps);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = [{
    $input (`weight` $weight^)? attr-dict `:` functional-type(operands, results)
  }];
}

def NN_LigerRmsNormOp : NN_SimpleLayerOp<"liger_rms_norm",
    [InferTypeOpAdaptor], /*pure=*/1,
    ["isGradPassthrough", "getBackwardWorkspace"]> {
  let summary = "Liger-Kernel's RMSNorm over the last dimension";
  let description = [{
    LigerRMSNormFunction (liger-kernel 0.8.5, ops/rms_norm.py) as
    LigerRMSNorm runs it for Llama-family models (casting mode "llama",
    offset 0, in_place=True): `weight * (x * rsqrt(mean(x^2) + eps))`
    with the inverse RMS in float32. The kernel writes a new output and one
    float32 inverse RMS per row; it keeps the input, the weight and that
    [rows] vector. Its backward writes the input's gradient over the
    output's (in place: no new tensor) and sums the weight's from
    `partial_rows` float32 partial rows [partial_rows, H] (one per SM on
    CUDA, one on the CPU), `_dW.sum(0).to(weight.dtype)`.

    ```mlir
    %y = nn.liger_rms_norm %x, %g {eps = 1.0e-05 : f64} : (tensor<2x128x256xf32>, tensor<256xf32>) -> tensor<2x128x256xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$weight,
      DefaultValuedAttr<F64Attr, "1e-6">:$eps,
      DefaultValuedAttr<I64Attr, "1">:$partial_rows);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $weight attr-dict `:` functional-type(operands, results)
  }];
}

def NN_GroupNormOp : NN_SimpleLayerOp<"group_norm",
    [InferTypeOpAdaptor, AttrSizedOperandSegments, NN_AutocastFloat32]> {
  let summary = "group normalization of an NC... tensor";
  let description = [{
    native_group_norm keeps the input, the weight and a mean and an
    inverse deviation per sample and group (float32).

    `instance` (one group per channel): F.instance_norm, which runs
    batch_norm over the input viewed as [1, N * C, ...] with the weight
    repeated per sample (`weight.repeat(N)`): the same statistics, and
    batch_norm keeps the repeated weight besides (instance_norm in
    ATen's Normalization.cpp).

    ```mlir
    %y = nn.group_norm %x weight %g bias %b {num_groups = 32 : i64}
        : (tensor<2x64x8x8xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x64x8x8xf32>
    %z = nn.group_norm %x weight %g bias %b {num_groups = 64 : i64, instance}
        : (tensor<2x64x8x8xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x64x8x8xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input,
      Optional<NN_FloatTensor>:$weight, Optional<NN_FloatTensor>:$bias,
      I64Attr:$num_groups, DefaultValuedAttr<F64Attr, "1e-5">:$eps,
      UnitAttr:$instance);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = [{
    $input (`weight` $weight^)? (`bias` $bias^)? attr-dict `:`
    functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class NN_UnaryOp<string mnemonic, list<Trait> traits = [], bit pure = 1,
                 list<string> autodiff = []>
    : NN_SimpleLayerOp<mnemonic, !listconcat(traits, [SameOperandsAndResultType]),
                       pure, autodiff> {
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

// A unary op with an `inplace` form, whose result then shares the input's
// storage (torch.relu_ / nn.ReLU(inplace=True)).
class NN_InplaceUnaryOp<string mnemonic, list<Trait> traits = []>
    : NN_UnaryOp<mnemonic,
        !listconcat(traits, [DeclareOpInterfaceMethods<NN_AliasingOpInterface>,
                             NN_InplaceEffects]), /*pure=*/0> {
  let extraClassDefinition = [{
    ::mlir::Value $cppClass::getAliasedOperand(unsigned) {
      return getInplace() ? getInput() : ::mlir::Value();
    }
    void $cppClass::getEffects(
        ::llvm::SmallVectorImpl<::mlir::SideEffects::EffectInstance<
            ::mlir::MemoryEffects::Effect>> &effects) {
      ::vram::nn::getInplaceEffects(getInplace(), effects);
    }
  }];
}

def NN_ReluOp : NN_InplaceUnaryOp<"relu"> {
  let summary = "max(x, 0)";
  let description = [{
    ```mlir
    %y = nn.relu %x {inplace} : tensor<2x64x56x56xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, UnitAttr:$inplace);
}

def NN_SiluOp : NN_InplaceUnaryOp<"silu"> {
  let summary = "x * sigmoid(x)";
  let description = [{
    ```mlir
    %y = nn.silu %x : tensor<2x11008xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, UnitAttr:$inplace);
}

def NN_HardswishOp : NN_InplaceUnaryOp<"hardswish"> {
  let summary = "x * relu6(x + 3) / 6";
  let description = [{
    ```mlir
    %y = nn.hardswish %x : tensor<2x16x112x112xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, UnitAttr:$inplace);
}

def NN_HardsigmoidOp : NN_InplaceUnaryOp<"hardsigmoid"> {
  let summary = "relu6(x + 3) / 6";
  let description = [{
    ```mlir
    %y = nn.hardsigmoid %x : tensor<2x16x1x1xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, UnitAttr:$inplace);
}

def NN_Relu6Op : NN_InplaceUnaryOp<"relu6"> {
  let summary = "min(max(x, 0), 6) (torch.nn.ReLU6, a hardtanh)";
  let description = [{
    ```mlir
    %y = nn.relu6 %x {inplace} : tensor<2x32x112x112xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, UnitAttr:$inplace);
}

def NN_LeakyReluOp : NN_InplaceUnaryOp<"leaky_relu"> {
  let summary = "x if x > 0 else negative_slope * x (torch.nn.LeakyReLU)";
  let description = [{
    Keeps its input for backward, its result in the in-place form
    (leaky_relu_backward(grad, self_or_result, negative_slope, is_result),
    derivatives.yaml), whose slope cannot be negative.

    ```mlir
    %y = nn.leaky_relu %x {negative_slope = 2.0e-01 : f64} : tensor<2x64x32x32xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input,
      DefaultValuedAttr<F64Attr, "0.01">:$negative_slope, UnitAttr:$inplace);
  let hasVerifier = 1;
}

// Not an NN_UnaryOp: the slope is an operand (a parameter), not an
// attribute, and PyTorch has no in-place prelu_.
def NN_PreluOp : NN_LayerOp<"prelu", [InferTypeOpAdaptor,
                                      NN_AutocastLowerPrecision],
                            ["getBackwardWorkspace"]> {
  let summary = "x if x > 0 else weight * x (torch.nn.PReLU, F.prelu)";
  let description = [{
    `weight` is [C], one slope per channel (dimension 1 of the input), or
    [1], one slope for all; a rank-1 input takes only [1]. F.prelu views
    the weight as [1, C, 1, ...] and runs `_prelu_kernel(self, weight)`,
    whose backward `_prelu_kernel_backward(grad, self, weight)`
    (derivatives.yaml) keeps the input and that view of the weight (no
    new memory). The kernel computes both gradients at the input's shape
    whatever needs one; the engine then sums the weight's into its shape
    (sum_to): the backward workspace. Autocast runs it in fp16/bf16.

    ```mlir
    %y = nn.prelu %x, %w : (tensor<2x64x32x32xf32>, tensor<64xf32>) -> tensor<2x64x32x32xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$weight);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $weight attr-dict `:` functional-type(operands, results)
  }];
}

def NN_EluOp : NN_InplaceUnaryOp<"elu"> {
  let summary = "scale * (x if x > 0 else alpha * (exp(x * input_scale) - 1))";
  let description = [{
    torch.nn.ELU, and SELU and CELU, which are ELUs with other coefficients
    (selu: alpha 1.6733, scale 1.0507; celu: input_scale 1 / alpha). Keeps
    its input for backward, its result in the in-place form
    (elu_backward(..., is_result, self_or_result), derivatives.yaml), whose
    alpha cannot be negative.

    ```mlir
    %y = nn.elu %x {alpha = 1.0 : f64} : tensor<2x64x32x32xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input,
      DefaultValuedAttr<F64Attr, "1.0">:$alpha,
      DefaultValuedAttr<F64Attr, "1.0">:$scale,
      DefaultValuedAttr<F64Attr, "1.0">:$input_scale, UnitAttr:$inplace);
  let hasVerifier = 1;
}

def NN_SoftplusOp : NN_UnaryOp<"softplus", [NN_AutocastFloat32]> {
  let summary = "log(1 + exp(beta * x)) / beta, x where beta * x > threshold";
  let description = [{
    Keeps its input for backward (softplus_backward(grad, self, beta,
    threshold)). Autocast runs it in float32.

    ```mlir
    %y = nn.softplus %x {beta = 1.0 : f64, threshold = 20.0 : f64} : tensor<2x8xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input,
      DefaultValuedAttr<F64Attr, "1.0">:$beta,
      DefaultValuedAttr<F64Attr, "20.0">:$threshold);
  let hasVerifier = 1;
}

def NN_MishOp : NN_InplaceUnaryOp<"mish"> {
  let summary = "x * tanh(softplus(x)) (torch.nn.Mish)";
  let description = [{
    Keeps its input for backward; the in-place form has no formula of its
    own, so autograd keeps a clone of the input (as silu_).

    ```mlir
    %y = nn.mish %x : tensor<2x64x32x32xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, UnitAttr:$inplace);
}

def NN_GeluOp : NN_UnaryOp<"gelu"> {
  let summary = "Gaussian error linear unit (erf form, or tanh approximation)";
  let description = [{
    ```mlir
    %y = nn.gelu %x {approximate = #nn<approximate tanh>} : tensor<2x128x1024xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input,
      DefaultValuedAttr<NN_GeluApproximationAttr,
                        "::vram::nn::GeluApproximation::None">:$approximate);
}

def NN_SigmoidOp : NN_InplaceUnaryOp<"sigmoid"> {
  let summary = "1 / (1 + exp(-x))";
  let description = [{
    Keeps its result for backward, also in place (`sigmoid_`: the result is
    the input's storage, which the backward then keeps).

    ```mlir
    %y = nn.sigmoid %x : tensor<2x10xf32>
    %z = nn.sigmoid %g {inplace} : tensor<3x32xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, UnitAttr:$inplace);
}

def NN_TanhOp : NN_InplaceUnaryOp<"tanh"> {
  let summary = "hyperbolic tangent";
  let description = [{
    Keeps its result for backward, also in place (`tanh_`).

    ```mlir
    %y = nn.tanh %x : tensor<2x10xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, UnitAttr:$inplace);
}

def NN_PowOp : NN_UnaryOp<"pow", [NN_AutocastFloat32], /*pure=*/1,
                          ["getBackwardWorkspace"]> {
  let summary = "input ** exponent for a scalar exponent";
  let description = [{
    Keeps its input for backward (grad * e * x ** (e - 1)). PyTorch's
    pow_backward evaluates `grad * (e * self.pow(e - 1))`: both input-sized
    temporaries are alive when the gradient is allocated (the backward
    workspace).

    ```mlir
    %y = nn.pow %x {exponent = 2.0 : f64} : tensor<2x128x256xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, F64Attr:$exponent);
}

// Elementwise functions whose backward needs only their result
// (d sqrt(x) = 1 / (2 sqrt(x)), d exp(x) = exp(x), ...).
class NN_ResultSavingUnaryOp<string mnemonic, string formula,
                             list<Trait> traits = []>
    : NN_UnaryOp<mnemonic, traits> {
  let summary = formula;
  let description = !strconcat("Keeps its result for backward.\n\n",
      "```mlir\n%y = nn.", mnemonic, " %x : tensor<2x8xf32>\n```");
  let arguments = (ins NN_FloatTensor:$input);
  let extraClassDefinition = [{
    void $cppClass::getSavedTensors(
        const ::vram::nn::TorchTarget &, ::llvm::ArrayRef<bool>,
        ::llvm::SmallVectorImpl<::vram::nn::SavedTensor> &saved) {
      saved.push_back(::vram::nn::SavedTensor::result(0));
    }
  }];
}

def NN_SqrtOp : NN_ResultSavingUnaryOp<"sqrt", "elementwise square root">;
def NN_RsqrtOp : NN_ResultSavingUnaryOp<"rsqrt", "elementwise 1 / sqrt(x)",
                                        [NN_AutocastFloat32]>;
def NN_ReciprocalOp : NN_ResultSavingUnaryOp<"reciprocal", "elementwise 1 / x",
                                             [NN_AutocastFloat32]>;
def NN_ExpOp : NN_ResultSavingUnaryOp<"exp", "elementwise exponential",
                                      [NN_AutocastFloat32]>;

def NN_NegOp : NN_UnaryOp<"neg"> {
  let summary = "elementwise -x";
  let description = [{
    Keeps nothing for backward.

    ```mlir
    %y = nn.neg %x : tensor<2x8xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input);
}

// softmax(x, dim, dtype=None): with `dtype` the result has that element type
// (autocast runs both with fp32 for low-precision inputs).
class NN_SoftmaxLikeOp<string mnemonic>
    : NN_SimpleLayerOp<mnemonic, [InferTypeOpAdaptor,
                                  NN_AutocastFloat32Output]> {
  let arguments = (ins NN_FloatTensor:$input, I64Attr:$dim,
                       OptionalAttr<TypeAttr>:$dtype);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def NN_SoftmaxOp : NN_SoftmaxLikeOp<"softmax"> {
  let summary = "softmax along `dim`";
  let description = [{
    ```mlir
    %p = nn.softmax %s {dim = -1 : i64} : tensor<2x8x128x128xf32>
    %q = nn.softmax %h {dim = -1 : i64, dtype = f32} : tensor<2x8x128x128xf16>
    ```
  }];
}

def NN_LogSoftmaxOp : NN_SoftmaxLikeOp<"log_softmax"> {
  let summary = "log(softmax(x)) along `dim`";
  let description = [{
    ```mlir
    %p = nn.log_softmax %s {dim = 1 : i64} : tensor<2x10xf32>
    ```
  }];
}

// Not Pure: it draws from the random generator (two dropouts are never the
// same value) and, with `inplace`, writes its operand.
def NN_DropoutOp : NN_Op<"dropout", [SameOperandsAndResultType, NN_InplaceEffects,
    DeclareOpInterfaceMethods<NN_CostOpInterface>,
    DeclareOpInterfaceMethods<NN_AutodiffOpInterface, ["isGradPassthrough"]>,
    DeclareOpInterfaceMethods<NN_AliasingOpInterface>]> {
  let summary = "zeroes elements with probability `p` while training";
  let description = [{
    Identity at inference or when p = 0. While training on CUDA it keeps a
    one-byte mask per element for backward.

    ```mlir
    %y = nn.dropout %x {p = 1.000000e-01 : f64} : tensor<2x128x768xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, F64Attr:$p, UnitAttr:$inplace);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

class NN_BinaryOp<string mnemonic, list<Trait> traits = []>
    : NN_Op<mnemonic, !listconcat(traits, [InferTypeOpAdaptor, NN_InplaceEffects,
        DeclareOpInterfaceMethods<NN_CostOpInterface>,
        DeclareOpInterfaceMethods<NN_AutodiffOpInterface,
            ["isGradPassthrough", "getBackwardWorkspace"]>,
        DeclareOpInterfaceMethods<NN_AliasingOpInterface>,
        DeclareOpInterfaceMethods<NN_WorkspaceOpInterface>,
        DeclareOpInterfaceMethods<NN_LayoutOpInterface, ["getResultStrides"]>])> {
  let arguments = (ins NN_FloatTensor:$lhs, NN_FloatTensor:$rhs,
                       UnitAttr:$inplace);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDefinition = [{
    ::mlir::Value $cppClass::getAliasedOperand(unsigned) {
      return getInplace() ? getLhs() : ::mlir::Value();
    }
  }];
  let hasVerifier = 1;
}

def NN_AddOp : NN_BinaryOp<"add"> {
  let summary = "elementwise sum with broadcasting; `inplace` is `lhs += rhs`";
  let description = [{
    ```mlir
    %y = nn.add %a, %b {inplace} : (tensor<2x64x56x56xf32>, tensor<2x64x56x56xf32>) -> tensor<2x64x56x56xf32>
    ```
  }];
}
def NN_SubOp : NN_BinaryOp<"sub"> {
  let summary = "elementwise difference with broadcasting";
  let description = [{
    ```mlir
    %y = nn.sub %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    ```
  }];
}
def NN_MulOp : NN_BinaryOp<"mul"> {
  let summary = "elementwise product with broadcasting";
  let description = [{
    ```mlir
    %y = nn.mul %a, %b : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
    ```
  }];
}
def NN_LigerSwigluOp : NN_SimpleLayerOp<"liger_swiglu",
    [AllTypesMatch<["gate", "up", "output"]>]> {
  let summary = "Liger-Kernel's silu(gate) * up (LigerSiLUMulFunction)";
  let description = [{
    The product of LigerSwiGLUMLP (liger-kernel 0.8.5, ops/swiglu.py): one
    kernel writes `silu(gate) * up`, keeping only its two operands (no
    silu output); the backward recomputes silu and writes the gradients
    over the kept operands, so its gradients are those tensors.

    ```mlir
    %h = nn.liger_swiglu %g, %u : tensor<2x128x688xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$gate, NN_FloatTensor:$up);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = "$gate `,` $up attr-dict `:` type($output)";
}

def NN_DivOp : NN_BinaryOp<"div"> {
  let summary = "elementwise quotient with broadcasting";
  let description = [{
    ```mlir
    %y = nn.div %a, %b : (tensor<4x8xf32>, tensor<1xf32>) -> tensor<4x8xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

def NN_MaxPool2dOp : NN_LayerOp<"max_pool2d", [InferTypeOpAdaptor]> {
  let summary = "2-D max pooling (keeps int64 indices for backward)";
  let description = [{
    ```mlir
    %y = nn.max_pool2d %x {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1>}
        : (tensor<2x64x112x112xf32>) -> tensor<2x64x56x56xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input,
      DenseI64ArrayAttr:$kernel_size,
      OptionalAttr<DenseI64ArrayAttr>:$strides,
      DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$padding,
      DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilation,
      UnitAttr:$ceil_mode);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

// Autocast runs both resizes in float32 (AT_FORALL_FP32 in
// aten/src/ATen/autocast_mode.h: upsample_nearest2d, upsample_bilinear2d).
def NN_UpsampleNearest2dOp : NN_LayerOp<"upsample_nearest2d",
    [NN_AutocastFloat32]> {
  let summary = "nearest-neighbour resize of NCHW (F.interpolate(mode='nearest'))";
  let description = [{
    The output's spatial sizes are the result type's (PyTorch's
    floor(in * scale) or the given size); its backward sums gradients back
    and keeps nothing.

    ```mlir
    %y = nn.upsample_nearest2d %x : (tensor<2x8x16x16xf32>) -> tensor<2x8x32x32xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def NN_UpsampleBilinear2dOp : NN_LayerOp<"upsample_bilinear2d",
    [NN_AutocastFloat32]> {
  let summary = "bilinear resize of NCHW (F.interpolate(mode='bilinear'))";
  let description = [{
    The output's spatial sizes are the result type's. Each output element
    interpolates the four input elements around its source position:
    `align_corners` maps the corners onto each other (source = out *
    (in - 1) / (out - 1)), else the pixel centres (source = (out + 0.5) *
    scale - 0.5, clamped at 0), `scale` being 1 / the scale factor when
    `scales` gives one (F.interpolate(scale_factor=...) passes it), else
    in / out. Its backward scatters the gradients back with the same
    weights and keeps nothing (upsample_bilinear2d_backward needs only the
    sizes).

    ```mlir
    %y = nn.upsample_bilinear2d %x {align_corners}
        : (tensor<2x8x16x16xf32>) -> tensor<2x8x32x32xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, UnitAttr:$align_corners,
      OptionalAttr<DenseF64ArrayAttr>:$scales);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def NN_AvgPool2dOp : NN_LayerOp<"avg_pool2d", [InferTypeOpAdaptor]> {
  let summary = "2-D average pooling";
  let description = [{
    ```mlir
    %y = nn.avg_pool2d %x {kernel_size = array<i64: 2, 2>} : (tensor<2x64x8x8xf32>) -> tensor<2x64x4x4xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input,
      DenseI64ArrayAttr:$kernel_size,
      OptionalAttr<DenseI64ArrayAttr>:$strides,
      DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$padding,
      UnitAttr:$ceil_mode,
      DefaultValuedAttr<BoolAttr, "true">:$count_include_pad);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def NN_AdaptiveAvgPool2dOp : NN_LayerOp<"adaptive_avg_pool2d", [InferTypeOpAdaptor]> {
  let summary = "adaptive average pooling to `output_size`";
  let description = [{
    ```mlir
    %y = nn.adaptive_avg_pool2d %x {output_size = array<i64: 1, 1>} : (tensor<2x512x7x7xf32>) -> tensor<2x512x1x1xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, DenseI64ArrayAttr:$output_size);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def NN_MeanOp : NN_LayerOp<"mean", [InferTypeOpAdaptor]> {
  let summary = "mean over `dims` (torch.mean(x, dims, keepdim))";
  let description = [{
    Reduces the listed dimensions (distinct, in range; negative counts from
    the end). Its backward expands the gradient and needs only sizes, so
    autograd keeps nothing.

    ```mlir
    %y = nn.mean %x {dims = array<i64: 2, 3>} : (tensor<2x1024x7x7xf32>) -> tensor<2x1024xf32>
    %z = nn.mean %x {dims = array<i64: -1>, keepdim} : (tensor<2x1024x7x7xf32>) -> tensor<2x1024x7x1xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, DenseI64ArrayAttr:$dims,
                       UnitAttr:$keepdim);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def NN_SumOp : NN_SimpleLayerOp<"sum", [InferTypeOpAdaptor]> {
  let summary = "sum over `dims` (torch.sum(x, dims, keepdim))";
  let description = [{
    Reduces the listed dimensions as `nn.mean` does, without the division.
    Its backward expands the gradient to the input's sizes: autograd keeps
    nothing.

    ```mlir
    %s = nn.sum %x {dims = array<i64: -1>, keepdim} : (tensor<128x2xf32>) -> tensor<128x1xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, DenseI64ArrayAttr:$dims,
                       UnitAttr:$keepdim);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

// torch.amax / torch.amin (and x.max() / x.min() over every element, the
// same backward): a reduction whose backward needs both ends.
class NN_ExtremumOp<string mnemonic, string which>
    : NN_SimpleLayerOp<mnemonic, [InferTypeOpAdaptor], 1,
                       ["getBackwardWorkspace"]> {
  let summary = which # " over `dims` (torch." # mnemonic # "(x, dims, keepdim))";
  let description = [{
    Reduces the listed dimensions as `nn.mean` does, keeping the }] # which #
    [{ (NaN if any is). Autograd keeps the input and the result
    (derivatives.yaml: `scale_grad_by_count(restore_reduced_dims(grad),
    restore_reduced_dims(result) == self, dim)`: the gradient goes evenly
    to every element equal to the result), in 1.13 and 2.x alike.
    `evenly`: x.max() / x.min() over every element (MaxBackward1,
    evenly_distribute_backward), the same gradient made in another order.

    The backward's temporaries: the bool mask of the input's size, its
    sum (the mask copied to int64 first, as reductions of bool do, then
    an int64 count), the gradient divided by the count; on the CPU,
    TensorIterator also copies the count and the mask to the gradient's
    dtype for the division and the product (CUDA kernels cast as they
    read). evenly_distribute_backward on the CPU makes zeros of the
    input's size first and fills them where the mask is; on CUDA it
    also keeps a bool isnan mask of the input.
  }];
  let arguments = (ins NN_FloatTensor:$input, DenseI64ArrayAttr:$dims,
                       UnitAttr:$keepdim, UnitAttr:$evenly);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

let hasVerifier = 1 in
def NN_AmaxOp : NN_ExtremumOp<"amax", "the largest value"> {
  let extraClassDeclaration = [{ static constexpr bool kSmallest = false; }];
}
let hasVerifier = 1 in
def NN_AminOp : NN_ExtremumOp<"amin", "the smallest value"> {
  let extraClassDeclaration = [{ static constexpr bool kSmallest = true; }];
}

//===----------------------------------------------------------------------===//
// Mixture of experts: routing and the experts' grouped products (a row
// gather x[indices] is nn.embedding: the same kernel, saved indices and
// backward)
//===----------------------------------------------------------------------===//

def NN_TopkOp : NN_SimpleLayerOp<"topk", [InferTypeOpAdaptor]> {
  let summary = "the `k` largest (or `smallest`) values along `dim` and their int64 indices (torch.topk)";
  let description = [{
    Autograd keeps the indices (a result): the backward scatters the
    gradient into an input-sized tensor of zeros. With `smallest`
    (torch.topk(largest=False), torch.min(dim)) the `k` smallest, in
    ascending order; the memory is the same.

    ```mlir
    %v, %i = nn.topk %p {k = 2 : i64, dim = -1 : i64}
        : (tensor<128x8xf32>) -> (tensor<128x2xf32>, tensor<128x2xi64>)
    %s, %j = nn.topk %p {k = 1 : i64, smallest}
        : (tensor<128x8xf32>) -> (tensor<128x1xf32>, tensor<128x1xi64>)
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, I64Attr:$k,
                       DefaultValuedAttr<I64Attr, "-1">:$dim,
                       UnitAttr:$smallest);
  let results = (outs NN_FloatTensor:$values, NN_IntTensor:$indices);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def NN_MoeDispatchOp : NN_Op<"moe_dispatch", [Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<NN_CostOpInterface>]> {
  let summary = "the grouping of token-expert pairs by expert (transformers' grouped_mm experts)";
  let description = [{
    transformers' `grouped_mm_experts_forward` (the experts implementation
    of transformers >= 5 where torch has grouped_mm) orders the S = T x k
    (token, expert) pairs of the router's [T, k] expert indices by expert,
    all without gradients:

    - `sorted` (S, int64) and `perm` (S, int64): torch.sort of the flat
      indices;
    - `token_index` = perm // k (S, int64): the token of each pair, whose
      hidden state the experts read;
    - `histogram` (S) and `counts` (E): histc's input (the sorted ids as
      float32 on the CPU, int32 on CUDA: 4 bytes each either way) and its
      token counts per expert (float32), typed i32 here for their size;
    - `offsets` (E, int32): the counts' cumsum, the group boundaries of
      grouped_mm;
    - `inverse` (S, int64): the inverse permutation that restores the pairs'
      order.

    Every size is S or E whatever the routing, so the memory is that of any
    routing.

    ```mlir
    %sorted, %perm, %token, %histogram, %counts, %offsets, %inverse =
        nn.moe_dispatch %indices {num_experts = 8 : i64}
        : tensor<128x2xi64> -> (tensor<256xi64>, tensor<256xi64>, tensor<256xi64>,
                                tensor<256xi32>, tensor<8xi32>, tensor<8xi32>, tensor<256xi64>)
    ```
  }];
  let arguments = (ins NN_IntTensor:$indices, I64Attr:$num_experts);
  let results = (outs NN_IntTensor:$sorted, NN_IntTensor:$perm,
                      NN_IntTensor:$token_index, NN_IntTensor:$histogram,
                      NN_IntTensor:$counts, NN_IntTensor:$offsets,
                      NN_IntTensor:$inverse);
  let assemblyFormat =
      "$indices attr-dict `:` type($indices) `->` `(` type(results) `)`";
}

def NN_GroupedMmOp : NN_LayerOp<"grouped_mm", [InferTypeOpAdaptor]> {
  let summary = "each row times its group's weight, y[s] = x[s] W[g(s)]^T (F.grouped_mm)";
  let description = [{
    `input` [S, in] holds the rows of E groups back to back; `offsets`
    (E, int32) ends each group; `weight` is [E, out, in] as the experts
    store it (transformers passes its transpose to grouped_mm). Autograd
    keeps the input, the weight and the offsets. The work is that of one
    [S, in] x [in, out] product whatever the groups' sizes.

    ```mlir
    %y = nn.grouped_mm %x, %w, %offsets
        : (tensor<256x64xf32>, tensor<8x192x64xf32>, tensor<8xi32>) -> tensor<256x192xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$weight,
                       NN_IntTensor:$offsets);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $weight `,` $offsets attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Recurrent
//===----------------------------------------------------------------------===//

def NN_LstmLayerOp : NN_LayerOp<"lstm_layer", [InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<NN_WorkspaceOpInterface,
                              ["getWorkspaceAllocations"]>,
    DeclareOpInterfaceMethods<NN_TargetSupportOpInterface,
                              ["decomposeForTarget"]>],
    ["getBackwardWorkspace", "getBackwardWorkspaceForGrads"]> {
  let summary = "one layer and direction of torch.nn.LSTM (mkldnn_rnn_layer)";
  let description = [{
    The unit PyTorch 2 runs an LSTM in on the CPU: oneDNN's LSTM primitive
    over one layer in one direction (`reverse`: the backward direction of a
    bidirectional layer), `mkldnn_rnn_layer` in aten/src/ATen/native/
    mkldnn/RNN.cpp. `input` [T, B, I] (contiguous, time first), `h` and
    `c` [B, H] (the layer's slice of h0 and c0), `weight_ih` [4H, I],
    `weight_hh` [4H, H] and, with biases, `bias_ih` and `bias_hh` [4H];
    results: the hidden state of every step [T, B, H], the last hidden and
    cell state [B, H]. `nn.LSTM` is a stack of these
    (Recurrent.h buildLstm): a layer's output (or the concatenation of its
    two directions) is the next layer's input, with dropout between layers
    while training, and the last states stacked into hy and cy.

    Its backward keeps its input, `h`, `c`, the three results and oneDNN's
    workspace (every step's gates and states, a uint8 tensor sized by
    oneDNN's rnn_utils: TorchSemantics.h getLstmLayerBuffers). Without
    biases PyTorch passes zero tensors of the weights' shapes in their
    place, which autograd keeps as well. torch 1.13 has no oneDNN LSTM: for
    it the step builder replaces the layer by LSTMCell step by step on the
    CPU (decomposeForTarget, Recurrent.h buildLstmLayerCells).
    `onnx_gate_order`: the weights' and biases' row blocks are in ONNX's
    gate order (i, o, f, c) instead of PyTorch's (i, f, g, o), as an ONNX
    model's own initializers are; the bytes are the same, the arithmetic
    reads each gate from its block.

    ```mlir
    %y, %hy, %cy = nn.lstm_layer %x, %h, %c, %wih, %whh, %bih, %bhh
        : (tensor<5x3x16xf32>, tensor<3x32xf32>, tensor<3x32xf32>, tensor<128x16xf32>, tensor<128x32xf32>, tensor<128xf32>, tensor<128xf32>)
        -> (tensor<5x3x32xf32>, tensor<3x32xf32>, tensor<3x32xf32>)
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$h,
      NN_FloatTensor:$c, NN_FloatTensor:$weight_ih, NN_FloatTensor:$weight_hh,
      Variadic<NN_FloatTensor>:$biases, UnitAttr:$reverse,
      UnitAttr:$onnx_gate_order);
  let results = (outs NN_FloatTensor:$output, NN_FloatTensor:$hy,
                      NN_FloatTensor:$cy);
  let assemblyFormat = [{
    $input `,` $h `,` $c `,` $weight_ih `,` $weight_hh (`,` $biases^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// T, B, I and H.
    int64_t getSeqLength();
    int64_t getBatch();
    int64_t getInputSize();
    int64_t getHiddenSize();

  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Embedding and attention
//===----------------------------------------------------------------------===//

def NN_EmbeddingOp : NN_LayerOp<"embedding", [InferTypeOpAdaptor]> {
  let summary = "row lookup weight[indices] (torch.nn.Embedding)";
  let description = [{
    ```mlir
    %e = nn.embedding %w, %ids : (tensor<50257x768xf32>, tensor<2x1024xi64>) -> tensor<2x1024x768xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$weight, NN_IntTensor:$indices,
                       OptionalAttr<I64Attr>:$padding_idx);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = [{
    $weight `,` $indices attr-dict `:` functional-type(operands, results)
  }];
}

def NN_VocabParallelEmbeddingOp : NN_LayerOp<"vocab_parallel_embedding",
    [InferTypeOpAdaptor, DeclareOpInterfaceMethods<NN_WorkspaceOpInterface,
                                                   ["getWorkspaceAllocations"]>]> {
  let summary = "one rank's lookup in a vocabulary-parallel embedding";
  let description = [{
    RowwiseParallel(input_layouts=Replicate()) on nn.Embedding (torchtitan's
    plan for tok_embeddings; Megatron-LM's VocabParallelEmbedding): each of
    `ranks` ranks holds vocab / ranks rows of the table, `weight`, and reads
    the whole [..] ids. DTensor's _MaskPartial masks the ids outside this
    rank's rows (a bool mask and the shifted ids, both ids-sized: the
    workspace), looks the rest up and zeroes the masked rows: the result is
    this rank's partial sum, which an `nn.all_reduce` completes. Rank 0's
    view: ids in [0, rows) are its own, the others give zero rows. Backward
    is the embedding's: a dense gradient of the rank's rows.

    ```mlir
    %e = nn.vocab_parallel_embedding %w, %ids {ranks = 2 : i64}
        : (tensor<512x256xf32>, tensor<2x256xi64>) -> tensor<2x256x256xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$weight, NN_IntTensor:$indices,
                       I64Attr:$ranks);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = [{
    $weight `,` $indices attr-dict `:` functional-type(operands, results)
  }];
}

def NN_ScaledDotProductAttentionOp : NN_LayerOp<"scaled_dot_product_attention",
    [InferTypeOpAdaptor, NN_AutocastLowerPrecision,
     DeclareOpInterfaceMethods<NN_LayoutOpInterface,
                               ["getResultStrides", "getOperandViews"]>]> {
  let summary = "softmax(q k^T * scale + mask) v (F.scaled_dot_product_attention)";
  let description = [{
    q [..., L, E], k [..., S, E], v [..., S, Ev]. `backend` is the kernel
    PyTorch would pick: `flash` and `efficient` keep no L x S matrix (only the
    output and a logsumexp per row); `math` runs the decomposition and keeps
    the attention matrices.

    The fused kernels allocate their [B, H, L, Ev] output as [B, L, H, Ev]
    and return it transposed, so `transpose(1, 2)` of it is contiguous and
    the merge of the heads that follows copies nothing. `math` multiplies
    the probabilities by v with torch.matmul, which folds v's batch
    dimensions (a copy when v is a strided view).

    `dropout_p` (training): the fused kernels drop in the kernel (their RNG
    state stays on the host); `math` multiplies the probabilities by a
    dropout noise tensor and keeps it and the dropped probabilities, as
    at::dropout does on the CPU.

    `enable_gqa` (PyTorch >= 2.5): k and v may have fewer heads (dimension
    -3) than q, dividing them; each group of q heads attends to one K/V head,
    and the kernel keeps k and v as they are, never repeated.

    ```mlir
    %o = nn.scaled_dot_product_attention %q, %k, %v {causal, backend = #nn<backend flash>}
        : (tensor<2x12x1024x64xf32>, tensor<2x12x1024x64xf32>, tensor<2x12x1024x64xf32>) -> tensor<2x12x1024x64xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$query, NN_FloatTensor:$key,
      NN_FloatTensor:$value, Optional<NN_AnyTensor>:$mask, UnitAttr:$causal,
      DefaultValuedAttr<NN_AttentionBackendAttr,
                        "::vram::nn::AttentionBackend::Flash">:$backend,
      OptionalAttr<F64Attr>:$scale, UnitAttr:$enable_gqa,
      DefaultValuedAttr<F64Attr, "0.0">:$dropout_p);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` $mask^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def NN_LigerRopeOp : NN_SimpleLayerOp<"liger_rope",
    [InferTypeOpAdaptor, DeclareOpInterfaceMethods<NN_AliasingOpInterface>,
     DeclareOpInterfaceMethods<NN_LayoutOpInterface, ["getResultStridesAt"]>,
     NN_InplaceEffects], /*pure=*/0, ["isGradPassthrough"]> {
  let summary = "Liger-Kernel's rotary embedding of q and k, in place";
  let description = [{
    liger_rotary_pos_emb (LigerRopeFunction, liger-kernel 0.8.5,
    ops/rope.py) for q [B, H, T, D] and k [B, KV, T, D] with cos and sin
    [T, D] or [1 or B, T, D]: `x * cos + rotate_half(x) * sin`. The kernel
    runs on `x.transpose(1, 2).contiguous()`, which for the transposed view
    of a projection's output (transformers' attention makes q and k so) is
    that output itself: then it rotates q and k in place and returns them
    transposed back (otherwise it rotates a contiguous copy). It keeps cos
    and sin. Its backward rotates the incoming gradients the same way: in
    place when they come laid out as q and k are (`query_grad_in_place`,
    `key_grad_in_place`: sdpa's fused kernels return dq, dk and dv so; a
    key repeated to the heads or copied into a cache gets its gradient
    from a contiguous one), else into copies.

    ```mlir
    %qr, %kr = nn.liger_rope %q, %k, %cos, %sin : (tensor<2x8x128x32xf32>, tensor<2x2x128x32xf32>, tensor<1x128x32xf32>, tensor<1x128x32xf32>) -> (tensor<2x8x128x32xf32>, tensor<2x2x128x32xf32>)
    ```
  }];
  let arguments = (ins NN_FloatTensor:$query, NN_FloatTensor:$key,
      NN_FloatTensor:$cos, NN_FloatTensor:$sin, UnitAttr:$query_grad_in_place,
      UnitAttr:$key_grad_in_place);
  let results = (outs NN_FloatTensor:$query_out, NN_FloatTensor:$key_out);
  let assemblyFormat = [{
    $query `,` $key `,` $cos `,` $sin attr-dict `:`
    functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// Whether the kernel works on `x`'s own storage: `x` is the
    /// transpose(1, 2) view of a contiguous [B, T, H, D] tensor.
    static bool rotatesInPlace(::mlir::Value x);
  }];
}

def NN_ConcatOp : NN_LayerOp<"concat", [InferTypeOpAdaptor, NN_AutocastPromote],
    ["getGradSlice"]> {
  let summary = "concatenation along `dim` (torch.cat)";
  let description = [{
    ```mlir
    %y = nn.concat %a, %b {dim = 1 : i64} : (tensor<2x32x8x8xf32>, tensor<2x32x8x8xf32>) -> tensor<2x64x8x8xf32>
    ```
  }];
  let arguments = (ins Variadic<NN_AnyTensor>:$inputs, I64Attr:$dim);
  let results = (outs NN_AnyTensor:$output);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
}

def NN_PadOp : NN_LayerOp<"pad", [InferTypeOpAdaptor]> {
  let summary = "constant padding (F.pad, mode \"constant\"): a new tensor";
  let description = [{
    `low[i]` and `high[i]` elements of `value` are added before and after
    dimension i (one entry per dimension, >= 0). The result is a new tensor
    (constant_pad_nd copies even with zero padding); its backward slices the
    gradient and keeps nothing.

    ```mlir
    %y = nn.pad %x {low = array<i64: 0, 0, 1, 1>, high = array<i64: 0, 0, 1, 1>}
        : (tensor<2x64x7x7xf32>) -> tensor<2x64x9x9xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, DenseI64ArrayAttr:$low,
                       DenseI64ArrayAttr:$high,
                       DefaultValuedAttr<F64Attr, "0.0">:$value);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def NN_RollOp : NN_LayerOp<"roll", [SameOperandsAndResultType]> {
  let summary = "torch.roll: a new tensor, shifted cyclically along dims";
  let description = [{
    `output[..., (i + shifts[k]) mod n, ...] = input[..., i, ...]` along each
    of `dims` (one shift per dimension; the flattened form of torch.roll
    without dims is not modelled). Keeps nothing for backward, which rolls
    the gradient back into a new tensor (Swin's shifted windows).

    ```mlir
    %y = nn.roll %x {shifts = array<i64: -3, -3>, dims = array<i64: 1, 2>}
        : tensor<2x56x56x96xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, DenseI64ArrayAttr:$shifts,
                       DenseI64ArrayAttr:$dims);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def NN_ConstantOp : NN_Op<"constant", [Pure,
    AllTypesMatch<["value", "result"]>]> {
  let summary = "a constant tensor computed in the forward pass";
  let description = [{
    A tensor the forward pass creates from constants (an exported causal
    mask, a scale). It needs no gradient; it is allocated where it is defined
    and freed after its last use, like any forward tensor.

    `wrapped_number`: a Python number in an arithmetic op (`0.5 * x`), which
    PyTorch wraps as a 0-d host tensor: it takes no device memory, and what
    autograd keeps of it costs nothing.

    `model_dtype`: a floating-point tensor the code creates in the model's
    dtype (`torch.zeros(shape, dtype=query.dtype)`): vram-precision gives
    it the dtype it gives the model (a splat value, converted).

    ```mlir
    %c = nn.constant dense<0.176776695> : tensor<f32>
    %half = nn.constant dense<5.000000e-01> {wrapped_number} : tensor<f32>
    %zeros = nn.constant dense<0.0> {model_dtype} : tensor<1x8x32x64xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value, UnitAttr:$wrapped_number,
                       UnitAttr:$model_dtype);
  let hasVerifier = 1;
  let results = (outs NN_AnyTensor:$result);
  let assemblyFormat = "$value attr-dict";
}

def NN_MaskedFillOp : NN_LayerOp<"masked_fill", [InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<NN_AliasingOpInterface>]> {
  let summary = "input with `value` where the bool mask is set (Tensor.masked_fill)";
  let description = [{
    `mask` (i1) broadcasts to `input`. Autograd keeps the mask; `inplace`
    (masked_fill_) updates `input` in place. `where`: the mask selects the
    input instead, `value` filling where it is not set (torch.where(mask,
    input, value), which keeps its condition the same way).

    ```mlir
    %y = nn.masked_fill %s, %mask {value = 0xFFF0000000000000 : f64}
        : (tensor<2x8x128x128xf32>, tensor<128x128xi1>) -> tensor<2x8x128x128xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_AnyTensor:$mask, F64Attr:$value,
                       UnitAttr:$inplace, UnitAttr:$where);
  let hasVerifier = 1;
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $mask attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDefinition = [{
    ::mlir::Value $cppClass::getAliasedOperand(unsigned) {
      return getInplace() ? getInput() : ::mlir::Value();
    }
  }];
}

def NN_ContiguousOp : NN_Op<"contiguous", [Pure, SameOperandsAndResultType,
    DeclareOpInterfaceMethods<NN_CostOpInterface>,
    DeclareOpInterfaceMethods<NN_AutodiffOpInterface, ["isGradPassthrough"]>]> {
  let summary = "a contiguous copy of a strided view (Tensor.contiguous)";
  let description = [{
    The copy PyTorch makes when a view's strides cannot express the next
    view: `x.transpose(1, 2).contiguous().view(...)`, or `reshape` of a
    permuted or sliced tensor. The result is a new tensor; the backward
    passes the gradient through and keeps nothing.

    ```mlir
    %c = nn.contiguous %t : tensor<2x24x58x28x28xf32>
    ```
  }];
  let arguments = (ins NN_AnyTensor:$input);
  let results = (outs NN_AnyTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def NN_CastOp : NN_Op<"cast", [Pure,
    DeclareOpInterfaceMethods<NN_CostOpInterface>,
    DeclareOpInterfaceMethods<NN_AutodiffOpInterface>]> {
  let summary = "a copy in another floating-point dtype (Tensor.to(dtype))";
  let description = [{
    A new tensor with the input's values in the result's element type, as
    `x.to(torch.float16)` or autocast's casts make. Its backward keeps
    nothing and casts the gradient back to the input's dtype.

    ```mlir
    %h = nn.cast %w : tensor<64x3x7x7xf32> to tensor<64x3x7x7xf16>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($output)";
  let hasVerifier = 1;
}

def NN_AutocastExitOp : NN_Op<"autocast_exit"> {
  let summary = "the end of a torch.autocast region";
  let description = [{
    Leaving `with torch.autocast(...)` clears autocast's weight-cast cache:
    the low-precision copies of trainable fp32 parameters, made at their
    first use and reused by every later use in the region, are released
    here (or later, by the backward nodes that saved them). The operands are
    the cached copies; the op allocates nothing. The step builder computes
    the loss inside the region, before this op.

    ```mlir
    nn.autocast_exit %w1h, %w2h : tensor<64x3x7x7xf16>, tensor<10x512xf16>
    ```
  }];
  let arguments = (ins Variadic<NN_FloatTensor>:$cached);
  let assemblyFormat = "($cached^ `:` type($cached))? attr-dict";
}

def NN_KeepAliveOp : NN_Op<"keep_alive"> {
  let summary = "Python references that hold tensors until here";
  let description = [{
    A module's forward holds its local variables until it returns, and its
    caller holds the arguments it passed: a tensor bound to a name stays
    allocated past its last use by an op, until the frame that names it
    drops it (transformers' LlamaModel.forward keeps `inputs_embeds` until
    it returns; a decoder layer's caller keeps the layer's input while the
    layer runs). The op reads nothing and allocates nothing; the memory
    analysis sees the operands used here.

    `model_frame`: the model's own forward holds the values until it
    returns, which for a model that computes its own loss (transformers'
    T5ForConditionalGeneration called with labels: its decoder outputs and
    cache) is after the loss: vram-build-step moves the op past the loss.

    ```mlir
    nn.keep_alive %embeds, %h : tensor<2x64x256xf32>, tensor<2x64x256xf32>
    ```
  }];
  let arguments = (ins Variadic<NN_AnyTensor>:$values, UnitAttr:$model_frame);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

//===----------------------------------------------------------------------===//
// Views: the result aliases the operand
//===----------------------------------------------------------------------===//

def NN_ReshapeOp : NN_ViewOp<"reshape", [], /*gradIsView=*/1, /*reshapes=*/1> {
  let summary = "reshape to the result type (a view of a contiguous input)";
  let description = [{
    ```mlir
    %y = nn.reshape %x : tensor<2x512x1x1xf32> -> tensor<2x512xf32>
    ```
  }];
  let arguments = (ins NN_AnyTensor:$input);
  let results = (outs NN_AnyTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

def NN_FlattenOp : NN_ViewOp<"flatten", [InferTypeOpAdaptor], /*gradIsView=*/1,
                             /*reshapes=*/1> {
  let summary = "merges dimensions start_dim..end_dim (torch.flatten)";
  let description = [{
    ```mlir
    %y = nn.flatten %x {start_dim = 1 : i64} : (tensor<2x512x1x1xf32>) -> tensor<2x512xf32>
    ```
  }];
  let arguments = (ins NN_AnyTensor:$input,
      DefaultValuedAttr<I64Attr, "1">:$start_dim,
      DefaultValuedAttr<I64Attr, "-1">:$end_dim);
  let results = (outs NN_AnyTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def NN_TransposeOp : NN_ViewOp<"transpose", [InferTypeOpAdaptor]> {
  let summary = "swaps two dimensions (a strided view)";
  let description = [{
    ```mlir
    %y = nn.transpose %x {dim0 = 1 : i64, dim1 = 2 : i64} : (tensor<2x128x8x32xf32>) -> tensor<2x8x128x32xf32>
    ```
  }];
  let arguments = (ins NN_AnyTensor:$input, I64Attr:$dim0, I64Attr:$dim1);
  let results = (outs NN_AnyTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def NN_PermuteOp : NN_ViewOp<"permute", [InferTypeOpAdaptor]> {
  let summary = "reorders dimensions (a strided view)";
  let description = [{
    ```mlir
    %y = nn.permute %x {dims = array<i64: 0, 2, 1>} : (tensor<2x196x768xf32>) -> tensor<2x768x196xf32>
    ```
  }];
  let arguments = (ins NN_AnyTensor:$input, DenseI64ArrayAttr:$dims);
  let results = (outs NN_AnyTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def NN_SliceOp : NN_ViewOp<"slice", [InferTypeOpAdaptor], /*gradIsView=*/0> {
  let summary = "x[..., start:end:step, ...] along `dim` (a strided view)";
  let description = [{
    ```mlir
    %y = nn.slice %x {dim = 1 : i64, start = 0 : i64, end = 1 : i64} : (tensor<2x197x768xf32>) -> tensor<2x1x768xf32>
    ```
  }];
  let arguments = (ins NN_AnyTensor:$input, I64Attr:$dim, I64Attr:$start,
                       I64Attr:$end, DefaultValuedAttr<I64Attr, "1">:$step);
  let results = (outs NN_AnyTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def NN_SplitOp : NN_Op<"split", [Pure,
    DeclareOpInterfaceMethods<NN_AliasingOpInterface>,
    DeclareOpInterfaceMethods<NN_LayoutOpInterface, ["getResultStridesAt"]>,
    DeclareOpInterfaceMethods<NN_CostOpInterface>,
    DeclareOpInterfaceMethods<NN_AutodiffOpInterface,
        ["getBackwardWorkspace", "getBackwardWorkspaceForGrads"]>]> {
  let summary = "consecutive pieces along `dim` (split, chunk, unbind): views";
  let description = [{
    Piece i has `sizes[i]` elements of `dim`; with `squeeze` (unbind) every
    piece has one and loses the dimension. Each result is a view of the
    input. The backward is one node for all the pieces (SplitBackward,
    UnsafeSplitBackward, UnbindBackward): it runs once every piece's
    gradient has arrived, each held until then, and concatenates them into
    one new input-sized gradient, with zeros for the pieces that got none.
    Slicing each piece instead would give every piece's backward a zeroed
    input-sized gradient of its own.

    ```mlir
    %q, %k, %v = nn.split %qkv {dim = 2 : i64, sizes = array<i64: 64, 64, 64>} : (tensor<2x16x192xf32>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>)
    %x0, %x1 = nn.split %x {dim = 0 : i64, sizes = array<i64: 1, 1>, squeeze} : (tensor<2x4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
    ```
  }];
  let arguments = (ins NN_AnyTensor:$input, I64Attr:$dim,
                       DenseI64ArrayAttr:$sizes, UnitAttr:$squeeze);
  let results = (outs Variadic<NN_AnyTensor>:$outputs);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "int64_t":$dim,
                   "::llvm::ArrayRef<int64_t>":$sizes, "bool":$squeeze)>
  ];
}

def NN_ExpandOp : NN_ViewOp<"expand", [], /*gradIsView=*/0> {
  let summary = "broadcasts size-1 dimensions to the result type (stride 0)";
  let description = [{
    ```mlir
    %y = nn.expand %x : tensor<1x1x768xf32> -> tensor<2x1x768xf32>
    ```
  }];
  let arguments = (ins NN_AnyTensor:$input);
  let results = (outs NN_AnyTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

def NN_CrossEntropyOp : NN_LayerOp<"cross_entropy",
    [InferTypeOpAdaptor, NN_LossOpTrait, NN_AutocastFloat32Output],
    ["getBackwardWorkspace"]> {
  let summary = "mean cross-entropy of logits [N, C, ...] and class indices";
  let description = [{
    Runs as log_softmax (which keeps its [N, C] output) followed by nll_loss.
    With `dtype`, log_softmax runs with that dtype (autocast's fp32 for
    fp16/bf16 logits): the log-probabilities and the loss have it.

    ```mlir
    %l = nn.cross_entropy %logits, %target : (tensor<2x10xf32>, tensor<2xi64>) -> tensor<f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_IntTensor:$target,
                       OptionalAttr<TypeAttr>:$dtype);
  let results = (outs NN_FloatTensor:$loss);
  let assemblyFormat = [{
    $input `,` $target attr-dict `:` functional-type(operands, results)
  }];
}

def NN_VocabParallelCrossEntropyOp : NN_LayerOp<"vocab_parallel_cross_entropy",
    [InferTypeOpAdaptor, NN_LossOpTrait,
     DeclareOpInterfaceMethods<NN_WorkspaceOpInterface,
                               ["getWorkspaceAllocations"]>],
    ["getBackwardWorkspace"]> {
  let summary = "mean cross-entropy of logits sharded over the classes";
  let description = [{
    torch.distributed.tensor.parallel.loss_parallel() (Megatron-LM's
    vocab_parallel_cross_entropy): `input` is this rank's [N, C / ranks]
    columns of fp32 logits, sharded over `ranks` tensor-parallel ranks, and
    `target` holds class indices into all C classes. DTensor's
    _log_softmax runs on the shard with its row max and its row sum of
    exponentials all-reduced ([N, 1] each): it makes `x - max` and
    `exp(x - max)` (the workspace, input-sized) before the
    log-probabilities it keeps; _nll_loss_forward gathers each row's
    target column on the rank that holds it, all-reduced. Backward
    (_nll_loss_and_log_softmax_backward, fused) makes a zero input-sized
    gradient, scatters the target's -1 into it, then `(grad + exp(log_probs))
    * grad_output`: two input-sized temporaries alive beside the gradient.

    ```mlir
    %l = nn.vocab_parallel_cross_entropy %shard, %t {ranks = 2 : i64}
        : (tensor<512x512xf32>, tensor<512xi64>) -> tensor<f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_IntTensor:$target,
                       I64Attr:$ranks);
  let results = (outs NN_FloatTensor:$loss);
  let assemblyFormat = [{
    $input `,` $target attr-dict `:` functional-type(operands, results)
  }];
}

def NN_FusedLinearCrossEntropyOp : NN_LayerOp<"fused_linear_cross_entropy",
    [InferTypeOpAdaptor, NN_LossOpTrait,
     DeclareOpInterfaceMethods<NN_WorkspaceOpInterface,
                               ["getWorkspaceAllocations"]>]> {
  let summary = "lm_head and the mean cross-entropy in chunks of tokens (Liger)";
  let description = [{
    Liger-Kernel's LigerFusedLinearCrossEntropyFunction (liger-kernel
    0.8.5): `cross_entropy(input @ weight^T, target)` for hidden states
    [N, H] and an lm_head weight [V, H], computed `chunk_size` tokens at a
    time so that no [N, V] logits exist. Chunks of
    next_power_of_2(ceil(N / ceil(V / H))) tokens bound each chunk's logits
    near N x H elements. Each chunk's logits gradient is computed in the
    forward, and with it the input's gradient [N, H] and the weight's
    [V, H]: those are what the node saves, and its backward returns them
    (scaled in place when the loss's gradient is not 1).

    ```mlir
    %l = nn.fused_linear_cross_entropy %h, %w, %t : (tensor<256x64xf32>, tensor<1000x64xf32>, tensor<256xi64>) -> tensor<f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$weight,
                       NN_IntTensor:$target);
  let results = (outs NN_FloatTensor:$loss);
  let assemblyFormat = [{
    $input `,` $weight `,` $target attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// Tokens per chunk, as Liger computes it.
    int64_t getChunkSize();
  }];
}

def NN_MseLossOp : NN_LayerOp<"mse_loss", [InferTypeOpAdaptor, NN_LossOpTrait,
                                           NN_AutocastFloat32]> {
  let summary = "mean squared error";
  let description = [{
    ```mlir
    %l = nn.mse_loss %y, %t : (tensor<2x10xf32>, tensor<2x10xf32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$target);
  let results = (outs NN_FloatTensor:$loss);
  let assemblyFormat = [{
    $input `,` $target attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Training-step ops (created by vram-build-step)
//===----------------------------------------------------------------------===//

defvar NN_BackwardPhase = DeclareOpInterfaceMethods<NN_StepPhaseOpInterface>;

def NN_SavedOp : NN_Op<"saved", [Pure]> {
  let summary = "an extra tensor a forward kernel allocates for backward";
  let description = [{
    Memory that a forward op allocates besides its result and keeps for its
    backward node: max_pool2d's int64 indices, batch_norm's per-channel mean
    and inverse std, dropout's mask, layer_norm's row statistics,
    attention's logsumexp. Its operands are the forward op's operands
    followed by its results, and it carries the forward op's name and
    attributes: everything the kernel computes the tensor from. It stands
    right after the forward op; with `before_op`, right before it, and its
    operands are the forward op's operands only (the clone of `self` that
    autograd makes before an in-place op overwrites it).

    ```mlir
    %idx = nn.saved "indices" of "nn.max_pool2d"(%x, %y) {forward_attrs = {...}}
        : (tensor<2x64x112x112xf32>, tensor<2x64x56x56xf32>) -> tensor<2x64x56x56xi64>
    ```
  }];
  let arguments = (ins StrAttr:$kind, StrAttr:$forward_op,
      DictionaryAttr:$forward_attrs, Variadic<NN_AnyTensor>:$sources,
      UnitAttr:$before_op);
  let results = (outs NN_AnyTensor:$result);
  let assemblyFormat = [{
    $kind `of` $forward_op `(` $sources `)` attr-dict `:`
    functional-type($sources, results)
  }];
}

def NN_BackwardOp : NN_Op<"backward", [AttrSizedOperandSegments, NN_BackwardPhase,
    DeclareOpInterfaceMethods<NN_CostOpInterface>,
    DeclareOpInterfaceMethods<NN_AliasingOpInterface>,
    DeclareOpInterfaceMethods<NN_WorkspaceOpInterface,
                              ["getWorkspaceAllocations"]>]> {
  let summary = "the backward node of one forward op";
  let description = [{
    Consumes the tensors the forward op saved and the gradients of its
    results; produces the gradients of the forward operands listed in
    `grad_operands`. It knows the forward op it differentiates: its name,
    a copy of its attributes (`forward_attrs`: strides, eps, axes, ...) and
    its type (`forward_type`: operand types -> result types), and what each
    saved tensor is (`saved_roles`), so it can be expanded into real
    gradient computation. `param_grads` marks which results are parameter
    gradients (`.grad`). `flop_counts` holds the backward FLOPs under the
    conventions macs, flops and full, computed from the forward op;
    `workspace` the temporary tensors the node holds while it runs, beyond
    the gradients it returns, one size in bytes each (AutodiffOpInterface).
    `grads_saved`, when present, names per result the saved tensor that is
    that gradient itself (-1: a new tensor): a forward kernel that computed
    the gradient already (SavedTensor::gradient). `grad_results`, when not
    empty, says which forward results the `grads` are of, in order (set
    when some result has no gradient; empty, every result has one).

    ```mlir
    %gx, %gw = nn.backward "nn.conv2d" saved(%x, %w) grads(%gy)
        {forward_attrs = {stride = array<i64: 1, 1>, ...},
         forward_type = (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>,
         saved_roles = [#nn.saved<operand 0>, #nn.saved<operand 1>],
         grad_operands = array<i64: 0, 1>, param_grads = array<i1: false, true>,
         flop_counts = array<i64: 10, 20, 20>}
        : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<1x4x6x6xf32>)
        -> (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>)
    ```
  }];
  let arguments = (ins StrAttr:$forward_op, DictionaryAttr:$forward_attrs,
      TypeAttrOf<FunctionType>:$forward_type, Variadic<NN_AnyTensor>:$saved,
      TypedArrayAttrBase<NN_SavedRoleAttr, "saved tensor roles">:$saved_roles,
      Variadic<NN_AnyTensor>:$grads, DenseI64ArrayAttr:$grad_operands,
      DenseBoolArrayAttr:$param_grads, DenseI64ArrayAttr:$flop_counts,
      DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$workspace,
      DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$grads_saved,
      DefaultValuedAttr<DenseBoolArrayAttr, "{}">:$grad_results);
  let results = (outs Variadic<NN_FloatTensor>:$input_grads);
  let assemblyFormat = [{
    $forward_op `saved` `(` $saved `)` `grads` `(` $grads `)` attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def NN_AccumulateGradOp : NN_Op<"accumulate_grad",
    [AllTypesMatch<["accumulator", "result"]>, NN_BackwardPhase,
     DeclareOpInterfaceMethods<NN_AliasingOpInterface>,
     DeclareOpInterfaceMethods<NN_CostOpInterface>]> {
  let summary = "adds a gradient contribution into a gradient buffer, in place";
  let description = [{
    When a forward value has several users, autograd sums their gradients
    into one buffer. With `inplace` the result shares `accumulator`'s
    storage (the engine adds in place when it owns the buffer); otherwise it
    is a new tensor (the buffer is shared with another gradient). An addend
    of a smaller shape is broadcast.

    ```mlir
    %g = nn.accumulate_grad %g0, %g1 {inplace} : tensor<2x64x56x56xf32>, tensor<2x64x56x56xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$accumulator, NN_FloatTensor:$addend,
                       UnitAttr:$inplace);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $accumulator `,` $addend attr-dict `:` type($accumulator) `,` type($addend)
  }];
}

def NN_OptimizerStateOp : NN_Op<"optimizer_state",
    [DeclareOpInterfaceMethods<NN_PersistentStorageOpInterface>]> {
  let summary = "a persistent optimizer state tensor of one parameter";
  let description = [{
    Its type is the optimizer's (getOptimizerStateSlots): the parameter's
    for torch.optim's moments, factored for Adafactor, 8-bit with a
    float32 scale per block for bitsandbytes' 8-bit optimizers.

    `paged`: bitsandbytes' paged optimizers allocate it in CUDA unified
    memory (cudaMallocManaged), outside PyTorch's caching allocator: the
    driver keeps its pages on the GPU while they fit and moves them to host
    memory when the GPU runs out, so it takes no part in the allocator's
    peak (the memory analysis counts it apart, as paged bytes).

    ```mlir
    %m = nn.optimizer_state exp_avg of %w : tensor<64x3x7x7xf32> -> tensor<64x3x7x7xf32>
    %r = nn.optimizer_state row_var of %w : tensor<64x3x7x7xf32> -> tensor<64x3x7x1xf32>
    %p = nn.optimizer_state exp_avg of %big {paged} : tensor<4096x4096xbf16> -> tensor<4096x4096xf32>
    ```
  }];
  let arguments = (ins NN_OptimizerStateKindAttr:$kind, NN_FloatTensor:$param,
                       UnitAttr:$paged);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat =
      "$kind `of` $param attr-dict `:` type($param) `->` type($result)";
}

def NN_EmaCopyOp : NN_Op<"ema_copy", [AllTypesMatch<["source", "result"]>,
    DeclareOpInterfaceMethods<NN_PersistentStorageOpInterface>]> {
  let summary = "an EMA model's copy of a parameter or buffer";
  let description = [{
    torch.optim.swa_utils.AveragedModel deep-copies the model: a copy of
    every parameter and buffer, of the same type, alive across steps. A
    parameter's copy counts as optimizer state (training state beside the
    model), a buffer's as a buffer.

    ```mlir
    %e = nn.ema_copy %w : tensor<64x3x7x7xf32>
    ```
  }];
  let arguments = (ins NN_AnyTensor:$source);
  let results = (outs NN_AnyTensor:$result);
  let assemblyFormat = "$source attr-dict `:` type($source)";
  let hasVerifier = 1;
}

def NN_ClipGradNormOp : NN_Op<"clip_grad_norm", [
    DeclareOpInterfaceMethods<NN_StepPhaseOpInterface>,
    DeclareOpInterfaceMethods<NN_CostOpInterface>,
    DeclareOpInterfaceMethods<NN_WorkspaceOpInterface,
                              ["getWorkspaceAllocations"]>]> {
  let summary = "torch.nn.utils.clip_grad_norm_ over the gradients, in place";
  let description = [{
    Before optimizer.step(): the gradients' total 2-norm and their scaling
    by min(max_norm / (norm + 1e-6), 1), in place (torch 2.x
    nn/utils/clip_grad.py, foreach on CUDA and CPU). Its temporaries are
    the per-gradient norms (a 0-d tensor each from `torch._foreach_norm`, in
    the gradient's dtype), their `torch.stack` (promoted to the widest
    dtype) and the total norm, alive together; the clip coefficient's 0-d
    tensors come after the norms are freed.

    ```mlir
    nn.clip_grad_norm %g0, %g1 {max_norm = 1.0 : f64} : tensor<4x4xf32>, tensor<4xf32>
    ```
  }];
  let arguments = (ins Variadic<NN_FloatTensor>:$grads, F64Attr:$max_norm);
  let assemblyFormat = [{
    $grads attr-dict `:` type($grads)
  }];
  let hasVerifier = 1;
}

def NN_EmaUpdateOp : NN_Op<"ema_update", [AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<NN_StepPhaseOpInterface>,
    DeclareOpInterfaceMethods<NN_CostOpInterface>]> {
  let summary = "AveragedModel.update_parameters with an EMA, in place";
  let description = [{
    After optimizer.step(): get_ema_multi_avg_fn's
    `torch._foreach_lerp_(averaged, params, 1 - decay)` over every
    parameter (trainable or not), in place: no temporaries.

    ```mlir
    nn.ema_update params(%w) averaged(%e) : (tensor<4xf32>, tensor<4xf32>) -> ()
    ```
  }];
  let arguments = (ins Variadic<NN_FloatTensor>:$params,
                       Variadic<NN_FloatTensor>:$averaged);
  let assemblyFormat = [{
    `params` `(` $params `)` `averaged` `(` $averaged `)` attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Generation with a KV cache (--mode=generate)
//===----------------------------------------------------------------------===//
//
// A generation program is the model's forward over the prompt (prefill)
// followed by its forward over one token (the last decode step), the KV
// cache threaded through both as values: transformers' DynamicCache, whose
// DynamicLayer.update replaces each layer's keys and values by
// torch.cat([cache, new], dim=-2). The decode steps between prefill and the
// last one are not unrolled (memory only grows along them); nn.kv_cache_past
// stands for them. The first nn.next_token ends the prefill.

def NN_KvCacheTrait : NativeOpTrait<"KvCacheTrait"> {
  let cppNamespace = "::vram::nn";
}

def NN_KvCacheUpdateOp : NN_Op<"kv_cache_update", [Pure, NN_KvCacheTrait,
    DeclareOpInterfaceMethods<NN_AliasingOpInterface>,
    DeclareOpInterfaceMethods<NN_AutodiffOpInterface, ["isGradPassthrough"]>]> {
  let summary = "DynamicLayer.update / StaticLayer.update: a layer's cache "
                "with new keys or values";
  let description = [{
    `torch.cat([past, states], dim=-2)`: a new tensor, the layer's cache
    from now on (the past one is dropped by the cache). Without `past` (the
    prefill's first update, a cache made by `torch.tensor([])`) the result
    is a copy of `states`. Both are [batch, kv heads, tokens, head dim].

    With `static_cache` (transformers' StaticCache, generate(...,
    cache_implementation="static")), the cache is a buffer of max_cache_len
    positions written in place: without `past` the result is that buffer,
    allocated (torch.zeros) by the layer's first update with `states` in its
    first positions; with `past` (the buffer) the result is `past` itself
    with `states` copied in (index_copy_), no allocation.

    With `block_size` too, the buffer is a paged cache's (vLLM's
    PagedAttention, --cache-implementation=paged): each sequence's blocks
    of `block_size` positions (vLLM's KV cache page: block_size x kv heads
    x head dim elements of keys, as many of values), as many as the
    sequence reaches, so the buffer's positions are a whole number of
    blocks. vLLM allocates its pool before any request and writes each
    token into its block's slot in place, as a static cache does; its
    attention kernels read the positions written so far in place.

    A training forward makes the same copies: transformers' decoders build
    a DynamicCache whenever `use_cache` is on (the configs' default; only
    gradient checkpointing turns it off), and attention reads, and saves,
    the cache's copies. CatBackward hands the gradient of the copy through
    and saves nothing.

    ```mlir
    %c = nn.kv_cache_update %k : (tensor<1x8x16x64xf32>) -> tensor<1x8x16x64xf32>
    %d = nn.kv_cache_update past %p, %k1 : (tensor<1x8x20x64xf32>, tensor<1x8x1x64xf32>) -> tensor<1x8x21x64xf32>
    %s = nn.kv_cache_update %k {static_cache} : (tensor<1x8x16x64xf32>) -> tensor<1x8x40x64xf32>
    %t = nn.kv_cache_update past %s, %k1 {static_cache} : (tensor<1x8x40x64xf32>, tensor<1x8x1x64xf32>) -> tensor<1x8x40x64xf32>
    %b = nn.kv_cache_update %k {block_size = 16 : i64, static_cache} : (tensor<1x8x16x64xf32>) -> tensor<1x8x48x64xf32>
    ```
  }];
  let arguments = (ins Optional<NN_FloatTensor>:$past, NN_FloatTensor:$states,
                       UnitAttr:$static_cache,
                       OptionalAttr<I64Attr>:$block_size);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    (`past` $past^ `,`)? $states attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def NN_KvCachePastOp : NN_Op<"kv_cache_past", [Pure, NN_KvCacheTrait]> {
  let summary = "a layer's cache after the decode steps not unrolled";
  let description = [{
    The cache `cache` becomes after the decode steps between it and the
    next modelled one, each of which appended its token with
    nn.kv_cache_update semantics: [batch, kv heads, tokens, head dim] with
    at least as many tokens. A new tensor; `cache` is dropped. With
    `window`, a sliding-window layer's (transformers'
    DynamicSlidingWindowLayer, which keeps a view of its last window - 1
    positions, and with it the storage of its last update): at most
    `window` tokens, fewer than `cache` when the prompt was longer.

    ```mlir
    %p = nn.kv_cache_past %c : tensor<1x8x16x64xf32> -> tensor<1x8x20x64xf32>
    %s = nn.kv_cache_past %c {window = 8 : i64} : tensor<1x8x16x64xf32> -> tensor<1x8x8x64xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$cache, OptionalAttr<I64Attr>:$window);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = "$cache attr-dict `:` type($cache) `->` type($result)";
  let hasVerifier = 1;
}

def NN_KvCacheReorderOp : NN_Op<"kv_cache_reorder", [Pure, NN_KvCacheTrait,
    SameOperandsAndResultType]> {
  let summary = "DynamicLayer.reorder_cache: a layer's cache in the order "
                "of the beams kept";
  let description = [{
    Beam search ends each step by reordering every layer's cache along
    its batch (`self.keys = self.keys.index_select(0, beam_idx)`, then the
    values): a new tensor of the same size; the old one is dropped when
    the layer's attribute is rebound, so one layer's keys or values are
    held twice at a time.

    ```mlir
    %r = nn.kv_cache_reorder %c : tensor<8x2x20x32xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$cache);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = "$cache attr-dict `:` type($cache)";
  let hasVerifier = 1;
}

def NN_NextTokenOp : NN_Op<"next_token", [Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<NN_AliasingOpInterface>,
    DeclareOpInterfaceMethods<NN_CostOpInterface>,
    DeclareOpInterfaceMethods<NN_WorkspaceOpInterface>]> {
  let summary = "GenerationMixin._sample's choice of the next tokens";
  let description = [{
    `next_token_logits = logits[:, -1].to(copy=True, dtype=torch.float32)`
    (`scores`, [batch, vocab] float32, alive until the next step's
    replaces it), `next_token_scores = logits_processor(input_ids,
    next_token_logits)`, then the tokens [batch, 1] (int64): greedy,
    `torch.argmax(next_token_scores, dim=-1)`; with `sample`
    (generate(do_sample=True)), `probs = softmax(next_token_scores)` and
    `torch.multinomial(probs, num_samples=1)`. `logits` is the model's
    output for the last position, [batch, 1, vocab].

    The logits processors run in transformers' order, each making new
    tensors: `repetition_penalty` (absent: 1.0, none; greedy or sampling:
    the ids clamped, the scores padded by a column, gathered at the ids of
    the sequences so far (`input_length` of them), penalized through
    `torch.where`, scattered back: a [batch, vocab + 1] tensor whose
    [:, :vocab] view is the result); then, sampling only, the warpers:
    `temperature` (absent: 1.0, none; `scores / temperature`), `top_k`
    (absent: none; `torch.topk`, a bool mask, `masked_fill`), `top_p`
    (absent: 1.0, none; `torch.sort` with int64 indices, softmax, cumsum,
    two bool masks, `masked_fill`), `min_p` (absent: none; softmax, amax, a
    bool mask, `masked_fill`); multinomial draws through an [batch, vocab]
    float32 tensor of exponentials. Their temporaries are the op's
    workspace. `held` are the [batch, vocab] float32 tensors _sample's
    variables keep until the next step replaces them besides `scores`: the
    last processor's output (when one runs) and `probs` (when sampling).
    `previous` are the previous step's `scores` and `held`, which this
    step's replace: each is freed where _sample rebinds its variable (the
    scores after the copy, the processed scores after the processors, the
    probabilities after softmax). Each result takes the place of the
    previous one in the analysis (it aliases it: the two are never both
    alive past the op), and the workspace is what the step holds above
    them while it runs (each new tensor and the one it replaces, the
    processors' temporaries).

    ```mlir
    %s, %t = nn.next_token %logits : tensor<2x1x32000xf16> -> (tensor<2x32000xf32>, tensor<2x1xi64>)
    %s2, %t2, %w, %p = nn.next_token %logits2 previous(%s1, %w1, %p1 : tensor<2x32000xf32>, tensor<2x32000xf32>, tensor<2x32000xf32>) {sample, temperature = 7.000000e-01 : f64, top_k = 50 : i64, top_p = 9.000000e-01 : f64} : tensor<2x1x32000xf16> -> (tensor<2x32000xf32>, tensor<2x1xi64>, tensor<2x32000xf32>, tensor<2x32000xf32>)
    ```
  }];
  let arguments = (ins NN_FloatTensor:$logits,
                       Variadic<NN_FloatTensor>:$previous, UnitAttr:$sample,
                       OptionalAttr<F64Attr>:$temperature,
                       OptionalAttr<I64Attr>:$top_k,
                       OptionalAttr<F64Attr>:$top_p,
                       OptionalAttr<F64Attr>:$min_p,
                       OptionalAttr<F64Attr>:$repetition_penalty,
                       OptionalAttr<I64Attr>:$input_length);
  let results = (outs NN_FloatTensor:$scores, NN_IntTensor:$tokens,
                      Variadic<NN_FloatTensor>:$held);
  let assemblyFormat = [{
    $logits (`previous` `(` $previous^ `:` type($previous) `)`)? attr-dict
    `:` type($logits) `->` `(` type(results) `)`
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The logits processors transformers runs, in its order (the warpers
    /// when sampling only).
    struct Processors {
      bool repetitionPenalty = false;
      bool temperature = false, topK = false, topP = false, minP = false;
      bool any() const {
        return repetitionPenalty || temperature || topK || topP || minP;
      }
    };
    static Processors getProcessors(bool sample,
                                    ::mlir::FloatAttr repetitionPenalty,
                                    ::mlir::FloatAttr temperature,
                                    ::mlir::IntegerAttr topK,
                                    ::mlir::FloatAttr topP,
                                    ::mlir::FloatAttr minP);
    Processors getProcessors() {
      return getProcessors(getSample(), getRepetitionPenaltyAttr(),
                           getTemperatureAttr(), getTopKAttr(),
                           getTopPAttr(), getMinPAttr());
    }
  }];
}

def NN_OptimizerBufferOp : NN_Op<"optimizer_buffer",
    [DeclareOpInterfaceMethods<NN_PersistentStorageOpInterface>]> {
  let summary = "a persistent tensor an optimizer keeps once for all parameters";
  let description = [{
    bitsandbytes' 8-bit optimizers quantize their state with two maps of
    256 float32 values (`name2qmap["dynamic"]` for exp_avg, `["udynamic"]`
    for exp_avg_sq), moved to the device once and shared by every
    parameter (getOptimizerBuffers).

    ```mlir
    %q = nn.optimizer_buffer "qmap1" : tensor<256xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
}

def NN_GradBucketOp : NN_Op<"grad_bucket",
    [DeclareOpInterfaceMethods<NN_PersistentStorageOpInterface>]> {
  let summary = "a DistributedDataParallel gradient bucket";
  let description = [{
    The flat tensor DDP's reducer copies the gradients of `params` into
    (or, with gradient_as_bucket_view, that their `.grad` views) and
    all-reduces across the ranks. It is allocated when the model is
    wrapped and lives as long as the model: persistent, a gradient.
    ZeRO-3 keeps two such buffers from initialization on: `zero.ipg_buffer`
    (reduce_bucket_size elements the gradients are copied into before a
    reduction) and `zero.grad_partitions` (this rank's partition of every
    gradient, which the reductions fill).

    ```mlir
    %b = nn.grad_bucket "ddp.bucket0" params ["fc.weight", "fc.bias"] : tensor<52326xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, StrArrayAttr:$params);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = "$name `params` $params attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Tensor parallelism (Megatron-LM's column- and row-parallel linears, as
// torch.distributed.tensor.parallel's ColwiseParallel and RowwiseParallel
// run them): the two collectives inside a rank's forward. A front end that
// builds one rank's model (--parallel=tp=N) places them; autograd records
// both, so the step builder makes their backward.
//===----------------------------------------------------------------------===//

def NN_AllReduceOp : NN_Op<"all_reduce", [Pure, SameOperandsAndResultType,
    DeclareOpInterfaceMethods<NN_CostOpInterface>,
    DeclareOpInterfaceMethods<NN_AutodiffOpInterface, ["isGradPassthrough"]>]> {
  let summary = "sums a row-parallel linear's partial outputs across ranks";
  let description = [{
    RowwiseParallel's output: each of `ranks` ranks holds a partial sum
    (its shard of the input times its shard of the weight); DTensor
    redistributes it from Partial to Replicate with a functional
    all_reduce, which reduces into a new tensor (the partial sums are freed
    when dropped). Megatron-LM's reduce_from_tensor_model_parallel_region.
    Backward passes the gradient through (Replicate to Partial moves no
    data) and keeps nothing.

    ```mlir
    %y = nn.all_reduce %partial {ranks = 2 : i64} : tensor<2x256x256xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, I64Attr:$ranks);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def NN_AllReduceGradOp : NN_ViewOp<"all_reduce_grad",
    [SameOperandsAndResultType], /*gradIsView=*/0> {
  let summary = "a column-parallel linear's replicated input";
  let description = [{
    ColwiseParallel's input: the replicated activation, wrapped as a DTensor
    that shares its storage (no copy). In backward its gradient, a partial
    sum on each rank, is all-reduced into a new tensor (DTensor's
    redistribution from Partial to Replicate). Megatron-LM's
    copy_to_tensor_model_parallel_region. Each parallel linear wraps its
    input separately (q, k and v projections: three all-reduces).

    ```mlir
    %x = nn.all_reduce_grad %h {ranks = 2 : i64} : tensor<2x256x256xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, I64Attr:$ranks);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def NN_AllGatherOutputOp : NN_Op<"all_gather_output", [Pure,
    DeclareOpInterfaceMethods<NN_CostOpInterface>,
    DeclareOpInterfaceMethods<NN_AutodiffOpInterface, ["getBackwardWorkspace"]>,
    DeclareOpInterfaceMethods<NN_WorkspaceOpInterface>]> {
  let summary = "gathers the shards of a tensor split along one dim";
  let description = [{
    DTensor's redistribution from Shard(dim) to Replicate: each of `ranks`
    ranks holds its slice along `dim` (absent: the last dim), and
    all_gather_into_tensor gathers them into a [ranks x d0, ...] buffer,
    whose chunks are concatenated along `dim` into a new tensor (the
    buffer, the workspace, is freed when the op returns). Where every dim
    before `dim` has size 1 the buffer already is the result, laid out
    (_maybe_view_chunk_cat's view): no workspace.

    Along the last dim it is ColwiseParallel with output_layouts=Replicate()
    (transformers' "colwise_gather_output", its plan for lm_head;
    Megatron-LM's gather_from_tensor_model_parallel_region); along the
    sequence (dim 1) sequence parallelism's gather of the residual stream
    before the attention, the MLP and lm_head (PrepareModuleInput from
    Shard(1) to Replicate; Megatron-LM's
    gather_from_sequence_parallel_region).

    Backward clones this rank's slice of the gradient into a new tensor
    (Replicate to Shard(dim)) and keeps nothing; with `scatter_grad` the
    gradient is a partial sum (a column-parallel linear read the gathered
    DTensor: sequence parallelism's lm_head input) and is reduce-scattered
    instead, along `dim` after the chunks are concatenated along dim 0
    (the copy is the backward workspace).

    ```mlir
    %logits = nn.all_gather_output %shard {ranks = 2 : i64}
        : tensor<2x256x512xf32> -> tensor<2x256x1024xf32>
    %h = nn.all_gather_output %x {dim = 1 : i64, ranks = 2 : i64}
        : tensor<2x128x256xf32> -> tensor<2x256x256xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, I64Attr:$ranks,
                       OptionalAttr<I64Attr>:$dim, UnitAttr:$scatter_grad);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat =
      "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The gathered dim (`dim`, the last by default).
    int64_t getGatherDim();
  }];
}

def NN_SplitInputOp : NN_Op<"split_input", [Pure,
    DeclareOpInterfaceMethods<NN_CostOpInterface>,
    DeclareOpInterfaceMethods<NN_AutodiffOpInterface, ["getBackwardWorkspace"]>]> {
  let summary = "this rank's slice of a replicated tensor along one dim";
  let description = [{
    DTensor's redistribution from Replicate to Shard(dim) (absent: the last
    dim): this rank's slice, cloned into a new tensor. Along the last dim it
    is RowwiseParallel with input_layouts=Replicate() (transformers'
    "rowwise_split_input", Phi-3's plan for o_proj and down_proj, whose
    inputs come from gathered outputs; Megatron-LM's
    scatter_to_tensor_model_parallel_region); along the sequence (dim 1)
    sequence parallelism's entry into the first decoder layer
    (PrepareModuleInput from Replicate to Shard(1); Megatron-LM's
    scatter_to_sequence_parallel_region). Backward redistributes the
    gradient from Shard(dim) to Replicate: all_gather_into_tensor into a
    [ranks x d0, ...] buffer (the workspace, unless it already is the
    result: see nn.all_gather_output), then its chunks concatenated along
    `dim` into the input's new gradient. Keeps nothing.

    ```mlir
    %cols = nn.split_input %x {ranks = 2 : i64}
        : tensor<2x256x256xf32> -> tensor<2x256x128xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, I64Attr:$ranks,
                       OptionalAttr<I64Attr>:$dim);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat =
      "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The split dim (`dim`, the last by default).
    int64_t getSplitDim();
  }];
}

def NN_ReduceScatterOutputOp : NN_Op<"reduce_scatter_output", [Pure,
    DeclareOpInterfaceMethods<NN_CostOpInterface>,
    DeclareOpInterfaceMethods<NN_AutodiffOpInterface, ["getBackwardWorkspace"]>,
    DeclareOpInterfaceMethods<NN_WorkspaceOpInterface>]> {
  let summary = "sums partial outputs across ranks, keeping this rank's slice";
  let description = [{
    RowwiseParallel with output_layouts=Shard(dim) (sequence parallelism's
    o_proj and down_proj, dim 1; Megatron-LM's
    reduce_scatter_to_sequence_parallel_region): each of `ranks` ranks holds
    a partial sum of the whole output; DTensor redistributes it from Partial
    to Shard(dim): the chunks along `dim` concatenated along dim 0 into a
    copy (the workspace; none for dim 0), reduce-scattered into a new
    tensor, this rank's slice. Backward all-gathers the gradient from
    Shard(dim) to Replicate as nn.all_gather_output does, into the input's
    new gradient. Keeps nothing.

    ```mlir
    %y = nn.reduce_scatter_output %partial {dim = 1 : i64, ranks = 2 : i64}
        : tensor<2x256x256xf32> -> tensor<2x128x256xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, I64Attr:$ranks, I64Attr:$dim);
  let results = (outs NN_FloatTensor:$output);
  let assemblyFormat =
      "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Sharded data parallelism (FSDP2, vram-parallel fsdp=N): the collectives of
// one rank and the buffers they allocate. The memory analysis sees them as
// ordinary values; what each allocates is its result.
//===----------------------------------------------------------------------===//

def NN_ShardOp : NN_Op<"shard",
    [DeclareOpInterfaceMethods<NN_PersistentStorageOpInterface>]> {
  let summary = "one rank's shard of a parameter (FSDP2's sharded parameter)";
  let description = [{
    fully_shard keeps, per parameter, this rank's chunk of dim 0 padded to
    ceil(dim0 / ranks) rows: the storage behind the DTensor the optimizer
    updates. Persistent, a parameter.

    ```mlir
    %s = nn.shard %w {ranks = 2 : i64} : tensor<512x512xf32> -> tensor<256x512xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$param, I64Attr:$ranks);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat =
      "$param attr-dict `:` type($param) `->` type($result)";
  let hasVerifier = 1;
}

class NN_CollectiveOp<string mnemonic, list<Trait> traits = []>
    : NN_Op<mnemonic, !listconcat(traits, [NN_StepPhaseOpInterface])> {
  code collectivePhase = [{
    ::vram::nn::StepPhase getStepPhase() { return getPhase(); }
  }];
}

def NN_AllGatherOp : NN_CollectiveOp<"all_gather", [
    DeclareOpInterfaceMethods<NN_WorkspaceOpInterface>]> {
  let summary = "all-gathers a unit's shards into one flat buffer";
  let description = [{
    FSDP2's foreach_all_gather for the parameters of one fully_shard unit:
    the result is the flat all-gather output, `ranks` times the unit's padded
    shards; it lives until `nn.unshard` has copied it out (in forward,
    until the next unit's copy-out: `nn.release`). Under a
    MixedPrecisionPolicy the result is in param_dtype while the shards keep
    theirs: the shards are first cast into one flat input of the result's
    dtype, the op's workspace.

    ZeRO-3's gathers read flat partitions that hold several parameters:
    `params` names the parameters gathered, in the order of the result (and
    of `nn.unshard`'s copies of it), so reports can tell which parameters a
    layer computes with.

    ```mlir
    %flat = nn.all_gather %s0, %s1 {unit = "layer1", phase = #nn<phase forward>} : (tensor<256x512xf32>, tensor<256xf32>) -> tensor<263168xf32>
    ```
  }];
  let arguments = (ins Variadic<NN_FloatTensor>:$shards, StrAttr:$unit,
                       NN_StepPhaseAttr:$phase,
                       OptionalAttr<StrArrayAttr>:$params);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat =
      "$shards attr-dict `:` functional-type($shards, results)";
  let extraClassDeclaration = collectivePhase;
}

def NN_UnshardOp : NN_CollectiveOp<"unshard"> {
  let summary = "copies a unit's all-gathered parameters out";
  let description = [{
    The unsharded parameters of a unit, each `ranks` padded shards long,
    copied out of the flat all-gather buffer (FSDP2's copy-out).

    ```mlir
    %w, %b = nn.unshard %flat {unit = "layer1", phase = #nn<phase forward>} : tensor<263168xf32> -> (tensor<512x512xf32>, tensor<512xf32>)
    ```
  }];
  let arguments = (ins NN_FloatTensor:$flat, StrAttr:$unit,
                       NN_StepPhaseAttr:$phase);
  let results = (outs Variadic<NN_FloatTensor>:$params);
  let assemblyFormat = "$flat attr-dict `:` type($flat) `->` type($params)";
  let extraClassDeclaration = collectivePhase;
}

def NN_ReduceScatterInputOp : NN_CollectiveOp<"reduce_scatter_input"> {
  let summary = "copies a unit's unsharded gradients into one flat buffer";
  let description = [{
    FSDP2's reduce-scatter input: the unit's gradients, each padded to
    `ranks` shards, in one flat buffer; the gradients are dropped after.
    FSDP2 keeps the buffer until the next unit's reduce-scatter
    (`nn.release`).
  }];
  let arguments = (ins Variadic<NN_FloatTensor>:$grads, StrAttr:$unit,
                       NN_StepPhaseAttr:$phase);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat =
      "$grads attr-dict `:` functional-type($grads, results)";
  let extraClassDeclaration = collectivePhase;
}

def NN_ReduceScatterOp : NN_CollectiveOp<"reduce_scatter"> {
  let summary = "reduce-scatters a unit's gradients into this rank's shards";
  let description = [{
    The flat reduce-scatter output, this rank's padded gradient shards of
    the unit; the sharded `.grad` of each parameter is a view into it.
  }];
  let arguments = (ins NN_FloatTensor:$input, StrAttr:$unit,
                       NN_StepPhaseAttr:$phase);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let extraClassDeclaration = collectivePhase;
}

def NN_ReleaseOp : NN_CollectiveOp<"release"> {
  let summary = "the point where Python drops its reference to tensors";
  let description = [{
    No computation: the last use of the tensors it names, so the memory
    analysis frees them here. FSDP2 keeps the previous all-gather output
    until the next copy-out in forward, and the previous reduce-scatter
    input until the next reduce-scatter; a model computing its own loss
    (transformers' ForCausalLMLoss) keeps its logits until the loss returns.
  }];
  let arguments = (ins Variadic<NN_FloatTensor>:$buffers,
                       NN_StepPhaseAttr:$phase);
  let assemblyFormat = "$buffers attr-dict `:` type($buffers)";
  let extraClassDeclaration = collectivePhase;
}

//===----------------------------------------------------------------------===//
// Pipeline parallelism (vram-parallel pp=N; torch.distributed.pipelining):
// what one stage receives from and sends to its neighbours.
//===----------------------------------------------------------------------===//

def NN_P2PRecvOp : NN_CollectiveOp<"p2p_recv"> {
  let summary = "a tensor received from another pipeline stage";
  let description = [{
    The buffer a pipeline stage allocates right before it receives a
    micro-batch's activation from stage `peer` (in forward) or the
    gradient of its output from it (in backward): a new tensor of the
    result type (torch.distributed.pipelining's `_RecvInfo.allocate_buffer`).

    ```mlir
    %h = nn.p2p_recv {peer = 0 : i64, phase = #nn<phase forward>} : tensor<2x256x256xf32>
    ```
  }];
  let arguments = (ins I64Attr:$peer, NN_StepPhaseAttr:$phase);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let extraClassDeclaration = collectivePhase;
}

def NN_P2PSendOp : NN_CollectiveOp<"p2p_send"> {
  let summary = "sends a tensor to another pipeline stage";
  let description = [{
    A stage's output activation (forward) or its input's gradient
    (backward) sent to stage `peer`; the stage holds it until the send
    completes, here (the memory analysis sees a use).

    ```mlir
    nn.p2p_send %h {peer = 1 : i64, phase = #nn<phase forward>} : tensor<2x256x256xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, I64Attr:$peer,
                       NN_StepPhaseAttr:$phase);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let extraClassDeclaration = collectivePhase;
}

//===----------------------------------------------------------------------===//
// DeepSpeed ZeRO-1/2 (vram-parallel zero=1|2 over the dp ranks; DeepSpeed's
// runtime/zero/stage_1_and_2.py): the flat parameters, this rank's fp32
// partition, and the buffers its gradients pass through on the way to it.
//===----------------------------------------------------------------------===//

def NN_ZeroFlatParamsOp : NN_Op<"zero_flat_params",
    [DeclareOpInterfaceMethods<NN_PersistentStorageOpInterface>]> {
  let summary = "the flat buffer ZeRO keeps the trainable parameters in";
  let description = [{
    DeepSpeedZeroOptimizer flattens the parameters of its group, in their
    order, into one buffer padded to a multiple of 2 x ranks elements, and
    makes each parameter a view into it (the parameters, marked
    `nn.flat_param`, hold no storage of their own). Persistent, parameters.

    With `ranks` (ZeRO-3) it holds this rank's partition of each parameter
    instead, ceil(n / ranks) elements of each, flattened (a sub-group's
    `lp_param_buffer`, or a frozen parameter's own `ds_tensor`); what the
    step computes with are gathered copies (`nn.all_gather`).

    ```mlir
    %flat = nn.zero_flat_params %w, %b : (tensor<512x512xf32>, tensor<512xf32>) -> tensor<262656xf32>
    %part = nn.zero_flat_params %w, %b {ranks = 2 : i64} : (tensor<512x512xf32>, tensor<512xf32>) -> tensor<131328xf32>
    ```
  }];
  let arguments = (ins Variadic<NN_FloatTensor>:$params,
                       OptionalAttr<I64Attr>:$ranks);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat =
      "$params attr-dict `:` functional-type($params, results)";
  let hasVerifier = 1;
}

def NN_ZeroPartitionOp : NN_Op<"zero_partition",
    [DeclareOpInterfaceMethods<NN_PersistentStorageOpInterface>]> {
  let summary = "this rank's fp32 copy of its partition of the flat buffer";
  let description = [{
    The 1/`ranks` slice of the flat parameters this rank updates, cloned in
    float32 (single_partition_of_fp32_groups): the only parameter the
    optimizer sees, so its state is this partition's. A copy even when the
    parameters are float32. Persistent; ZeRO counts it as optimizer state
    (the master weights).

    ```mlir
    %p = nn.zero_partition %flat {ranks = 2 : i64} : tensor<262656xf32> -> tensor<131328xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$flat, I64Attr:$ranks);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = "$flat attr-dict `:` type($flat) `->` type($result)";
  let hasVerifier = 1;
}

def NN_ZeroBufferOp : NN_CollectiveOp<"zero_buffer"> {
  let summary = "a gradient buffer of ZeRO's";
  let description = [{
    One of the flat gradient buffers DeepSpeedZeroOptimizer allocates in a
    step, gradients while they live: `ipg_buffer`, reduce_bucket_size
    elements, made at the first gradient hook, which the gradients are
    copied into (and dropped) before each all-reduce, freed after backward;
    `grads_in_partition`, the gradients of the parameters that overlap this
    rank's partition, made at the first reduction that holds one, kept
    until the optimizer step flattens them; ZeRO-3's
    `reduce_scatter_flat`, the padded, interleaved copy of a bucket's
    gradients reduce_scatter_coalesced reduces (dropped once each rank's
    part is copied out); `flat_grad_partition`, that
    flat copy of `source` in the parameters' dtype (16-bit parameters);
    `single_grad_partition`, the fp32 partition's gradient: the flat copy,
    or `source` cast to fp32. Under gradient accumulation the step is the
    last micro-batch's, which starts with what the earlier ones left:
    stage 2's `accumulated_grads_in_partition` (their grads_in_partition),
    stage 1's `accumulated_grad`, one parameter's .grad (flat).

    ```mlir
    %ipg = nn.zero_buffer "ipg_buffer" {phase = #nn<phase backward>} : tensor<500000000xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, Optional<NN_FloatTensor>:$source,
                       NN_StepPhaseAttr:$phase);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = "$name ($source^ `:` type($source))? attr-dict `:` "
                       "type($result)";
  let extraClassDeclaration = collectivePhase;
  let hasVerifier = 1;
}

def NN_ZeroReduceOp : NN_CollectiveOp<"zero_reduce", [
    DeclareOpInterfaceMethods<NN_WorkspaceOpInterface>]> {
  let summary = "all-reduces the gradients in ZeRO's bucket";
  let description = [{
    reduce_ipg_grads: the first `elements` of the gradient buffer, averaged
    and all-reduced. The bucket is cut into one slice per run of
    consecutive gradients that belong to the same rank's partition; with
    more than one (`flatten`), the slices are first flattened into a new
    tensor of `elements` (the op's workspace), otherwise all-reduced in
    place. Gradients of this rank's partition are then copied into
    `grads_in_partition`.

    ```mlir
    nn.zero_reduce %ipg {elements = 262656 : i64, flatten = true, phase = #nn<phase backward>} : tensor<500000000xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$bucket, I64Attr:$elements,
                       BoolAttr:$flatten, NN_StepPhaseAttr:$phase);
  let assemblyFormat = "$bucket attr-dict `:` type($bucket)";
  let extraClassDeclaration = collectivePhase;
  let hasVerifier = 1;
}

def NN_ZeroGradNormOp : NN_CollectiveOp<"zero_grad_norm", [
    DeclareOpInterfaceMethods<NN_WorkspaceOpInterface>]> {
  let summary = "the global gradient norm ZeRO computes before each step";
  let description = [{
    get_grad_norm_direct over this rank's gradient slices: each slice is
    converted to float64 (get_norm_dtype, on devices with fp64) and its
    norm taken, one at a time, so the workspace is the `largest` slice's
    elements in float64.

    ```mlir
    nn.zero_grad_norm %gip {largest = 262144 : i64, phase = #nn<phase optimizer>} : tensor<525312xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$grads, I64Attr:$largest,
                       NN_StepPhaseAttr:$phase);
  let assemblyFormat = "$grads attr-dict `:` type($grads)";
  let extraClassDeclaration = collectivePhase;
}

def NN_OptimizerStepOp : NN_Op<"optimizer_step", [AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<NN_StepPhaseOpInterface>,
    DeclareOpInterfaceMethods<NN_CostOpInterface>,
    DeclareOpInterfaceMethods<NN_WorkspaceOpInterface,
                              ["getWorkspaceAllocations"]>]> {
  let summary = "updates parameters from their gradients and state";
  let description = [{
    One optimizer.step() over `params` (all of them for the foreach and
    fused implementations, one for the for-loop implementation; the
    bitsandbytes optimizers run a kernel per parameter, for-loop). `state`
    holds each parameter's state tensors in turn, as
    getOptimizerStateSlots lists them. Its workspace is the temporaries of
    the implementation: foreach Adam keeps a params-sized
    `exp_avg_sq.sqrt()` list (plus a grad-sized copy with coupled weight
    decay); the for-loop form keeps one parameter's worth; fused keeps
    none.

    ```mlir
    nn.optimizer_step adam foreach params(%w) grads(%g) state(%m, %v)
        {weight_decay = 0.0 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> ()
    ```
  }];
  let arguments = (ins NN_OptimizerKindAttr:$optimizer,
      NN_OptimizerImplAttr:$implementation,
      Variadic<NN_FloatTensor>:$params, Variadic<NN_FloatTensor>:$grads,
      Variadic<AnyRankedTensor>:$state,
      DefaultValuedAttr<F64Attr, "0.0">:$weight_decay);
  let assemblyFormat = [{
    $optimizer $implementation `params` `(` $params `)` `grads` `(` $grads `)`
    `state` `(` $state `)` attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The for-loop Adam/AdamW update before this one in the same
    /// optimizer.step() call, whose `denom` is still bound to its Python
    /// name while this update computes its own: its parameter, else null.
    ::mlir::Value getHeldDenomParam();
  }];
}

//===----------------------------------------------------------------------===//
// Elementwise ops the ONNX importer converts 1:1 (Erf, Clip) before raising
//===----------------------------------------------------------------------===//

def NN_ErfOp : NN_UnaryOp<"erf"> {
  let summary = "elementwise Gauss error function";
  let description = [{
    What the erf form of an exported GELU computes before the importer raises
    it back to nn.gelu. Keeps its input for backward
    (grad * 2 / sqrt(pi) * exp(-x^2), derivatives.yaml).

    ```mlir
    %y = nn.erf %x : tensor<2x8xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input);
}

def NN_ClampOp : NN_UnaryOp<"clamp"> {
  let summary = "min(max(x, min), max) with optional bounds (torch.clamp)";
  let description = [{
    ONNX Clip. At least one bound is set and `min <= max`. Keeps its input
    for backward (clamp_backward(grad, self, min, max)). Clamp to [0, 6] is
    nn.relu6 and clamp to [0, inf) nn.relu, which the ONNX import pipeline
    raises it to.

    ```mlir
    %y = nn.clamp %x {max = 6.0 : f64, min = 0.0 : f64} : tensor<2x8xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, OptionalAttr<F64Attr>:$min,
                       OptionalAttr<F64Attr>:$max);
  let hasVerifier = 1;
}

#endif // VRAM_DIALECT_NN_NNOPS_TD
