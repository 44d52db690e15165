//===- NNInterfaces.td - op semantics for the analyses -----*- tablegen -*-===//

#ifndef VRAM_DIALECT_NN_NNINTERFACES_TD
#define VRAM_DIALECT_NN_NNINTERFACES_TD

include "mlir/IR/OpBase.td"

def NN_AliasingOpInterface : OpInterface<"AliasingOpInterface"> {
  let description = [{
    Storage aliasing. A view (reshape, transpose, slice, ...) or an in-place
    update (relu with `inplace`, `+=`) returns a result that shares the storage
    of one operand instead of allocating. Ops without this interface allocate
    every result.
  }];
  let cppNamespace = "::vram::nn";
  let methods = [
    InterfaceMethod<[{
        Returns the operand whose storage result `resultIndex` shares, or a
        null value when the result is a fresh allocation.
      }],
      "::mlir::Value", "getAliasedOperand", (ins "unsigned":$resultIndex)>,
  ];
}

def NN_CostOpInterface : OpInterface<"CostOpInterface"> {
  let description = [{
    Floating-point work of an op under a counting convention (see
    docs/Flops.md): `macs` (fvcore: multiply-adds of its op set), `flops`
    (torch.utils.flop_counter: 2 x multiply-adds of mm/conv/attention) and
    `full` (every op).
  }];
  let cppNamespace = "::vram::nn";
  let methods = [
    InterfaceMethod<[{
        FLOPs of running this op: the forward computation of a layer op, the
        backward or update work of a training-step op. `training` selects
        the training form of ops that differ (batch_norm, dropout).
      }],
      "int64_t", "getFlops",
      (ins "::vram::nn::FlopConvention":$convention, "bool":$training)>,
    InterfaceMethod<[{
        FLOPs of the backward node of a forward op, given which operands
        need a gradient (the step builder records it on `nn.backward`). The default counts, under `full`, as much work as the
        forward pass and nothing under the other conventions.
      }],
      "int64_t", "getBackwardFlops",
      (ins "::vram::nn::FlopConvention":$convention,
           "::llvm::ArrayRef<bool>":$operandNeedsGrad), [{}], [{
        if (convention != ::vram::nn::FlopConvention::Full)
          return 0;
        return $_op.getFlops(convention, /*training=*/true);
      }]>,
  ];
}

def NN_AutodiffOpInterface : OpInterface<"AutodiffOpInterface"> {
  let description = [{
    What PyTorch's autograd records for an op (reference/pytorch.md): the
    tensors its backward formula keeps, given which operands require a
    gradient. The step builder calls this when an op records a backward node,
    that is when at least one floating-point operand requires a gradient.
  }];
  let cppNamespace = "::vram::nn";
  let methods = [
    InterfaceMethod<[{
        Appends the tensors saved for backward: operands, results, or extra
        tensors the forward kernel allocates for backward (indices, masks,
        statistics), for the PyTorch version and device `target` names
        (facts that depend on them come from TorchSemantics.h).
      }],
      "void", "getSavedTensors",
      (ins "const ::vram::nn::TorchTarget &":$target,
           "::llvm::ArrayRef<bool>":$operandRequiresGrad,
           "::llvm::SmallVectorImpl<::vram::nn::SavedTensor> &":$saved)>,
    InterfaceMethod<[{
        Whether operand `index` can receive a gradient (integer indices and
        masks cannot).
      }],
      "bool", "isDifferentiableOperand", (ins "unsigned":$index), [{}], [{
        return ::mlir::isa<::mlir::FloatType>(::mlir::getElementTypeOrSelf(
            $_op->getOperand(index).getType()));
      }]>,
    InterfaceMethod<[{
        Whether the gradient of operand `index` is the gradient of the result
        itself, with no new memory: views (ViewBackward reshapes the
        gradient) and same-shape add/sub (AddBackward returns `grad`).
      }],
      "bool", "isGradPassthrough", (ins "unsigned":$index), [{}], [{
        return false;
      }]>,
    InterfaceMethod<[{
        Where the gradient of operand `index` lies in the gradient of result
        0 when the backward hands out a slice of that gradient, a view,
        instead of a new tensor (CatBackward's narrow, StackBackward's
        unbind); nullopt otherwise.
      }],
      "std::optional<::vram::nn::GradSlice>", "getGradSlice",
      (ins "unsigned":$index), [{}], [{
        return std::nullopt;
      }]>,
    InterfaceMethod<[{
        Whether the gradient the backward returns for operand `index` is a
        view of a tensor it computed (F.linear's weight gradient is TBackward's
        `grad.t()`; the input it folds to 2-D gets ViewBackward's reshape).
        The engine then cannot add the operand's next gradient into it in
        place (InputBuffer::accumulate needs the only reference to the
        tensor and to its storage, and the view's base holds the storage):
        the first sum is a new tensor.
      }],
      "bool", "isGradView", (ins "unsigned":$index), [{}], [{
        return false;
      }]>,
    InterfaceMethod<[{
        The tensors the backward node allocates and frees while it runs,
        beyond the gradients it returns, one size per allocation (a caching
        allocator rounds each): nll_loss_backward's dense gradient inside
        cross_entropy's backward, a CPU convolution's oneDNN buffers,
        pow_backward's two temporaries. The step builder records them on
        `nn.backward` (`workspace`).
      }],
      "void", "getBackwardWorkspace",
      (ins "const ::vram::nn::TorchTarget &":$target,
           "::llvm::ArrayRef<bool>":$operandNeedsGrad,
           "::llvm::SmallVectorImpl<int64_t> &":$sizes), [{}], [{
        return; // most backward nodes allocate only their gradients
      }]>,
    InterfaceMethod<[{
        The same, knowing also which results receive a gradient
        (`resultHasGrad`) and whether it arrives laid out contiguously
        (`resultGradContiguous`, false when it is the gradient of a
        transposing view): for a kernel that makes zeros for a missing
        gradient or a contiguous copy of a strided one. The step builder
        calls this; by default it is getBackwardWorkspace.
      }],
      "void", "getBackwardWorkspaceForGrads",
      (ins "const ::vram::nn::TorchTarget &":$target,
           "::llvm::ArrayRef<bool>":$operandNeedsGrad,
           "::llvm::ArrayRef<bool>":$resultHasGrad,
           "::llvm::ArrayRef<bool>":$resultGradContiguous,
           "::llvm::SmallVectorImpl<int64_t> &":$sizes), [{}], [{
        $_op.getBackwardWorkspace(target, operandNeedsGrad, sizes);
      }]>,
  ];
}

def NN_WorkspaceOpInterface : OpInterface<"WorkspaceOpInterface"> {
  let description = [{
    Temporary memory an op allocates and frees while it runs (for example the
    `exp_avg_sq.sqrt()` list of foreach Adam). It counts towards the peak at
    that op and is free afterwards.
  }];
  let cppNamespace = "::vram::nn";
  let methods = [
    InterfaceMethod<[{
        Bytes of temporary memory alive while the op runs, for the PyTorch
        version and device `target` names.
      }],
      "int64_t", "getWorkspaceBytes",
      (ins "const ::vram::nn::TorchTarget &":$target)>,
    InterfaceMethod<[{
        The workspace as the separate tensors PyTorch allocates (a foreach
        op's list is one tensor per element), in `sizes`; their sum is
        getWorkspaceBytes. A caching allocator rounds each one.
      }],
      "void", "getWorkspaceAllocations",
      (ins "const ::vram::nn::TorchTarget &":$target,
           "::llvm::SmallVectorImpl<int64_t> &":$sizes),
      /*methodBody=*/"", /*defaultImplementation=*/[{
        if (int64_t bytes = $_op.getWorkspaceBytes(target))
          sizes.push_back(bytes);
      }]>,
  ];
}

def NN_TargetSupportOpInterface : OpInterface<"TargetSupportOpInterface"> {
  let description = [{
    An op whose kernels are modelled for some PyTorch releases, devices or
    step modes only (measured there): the step builder asks it before
    building, so that a target it cannot answer for is one located error,
    never a silent number.
  }];
  let cppNamespace = "::vram::nn";
  let methods = [
    InterfaceMethod<[{
        Emits a located error and fails when the op's memory is not modelled
        for `target` in a step of `mode` (`autocast`: under torch.autocast).
      }],
      "::mlir::LogicalResult", "verifyTarget",
      (ins "const ::vram::nn::TorchTarget &":$target,
           "::vram::nn::StepMode":$mode, "bool":$autocast)>,
    InterfaceMethod<[{
        When `target` runs the op as a composition of other ops (torch
        1.13's CPU LSTM: LSTMCell step by step), replaces the op by them
        (built with `builder`, the op erased) and returns true; false when
        the target runs the op itself. The step builder asks before anything
        reads the op; a located error fails.
      }],
      "::mlir::FailureOr<bool>", "decomposeForTarget",
      (ins "::mlir::OpBuilder &":$builder,
           "const ::vram::nn::TorchTarget &":$target),
      /*methodBody=*/"", /*defaultImplementation=*/[{ return false; }]>,
  ];
}

def NN_StepPhaseOpInterface : OpInterface<"StepPhaseOpInterface"> {
  let description = [{
    Where an op of a built step runs: backward nodes and gradient
    accumulation in the backward pass, the update in the optimizer phase.
    Ops without this interface run in the forward pass.
  }];
  let cppNamespace = "::vram::nn";
  let methods = [
    InterfaceMethod<"The phase this op runs in.",
      "::vram::nn::StepPhase", "getStepPhase">,
  ];
}

def NN_PersistentStorageOpInterface
    : OpInterface<"PersistentStorageOpInterface"> {
  let description = [{
    An op whose result is storage that lives across the whole step rather
    than being allocated when the op runs: parameters, buffers and
    optimizer state. The memory analysis allocates it before the first op.
  }];
  let cppNamespace = "::vram::nn";
  let methods = [
    InterfaceMethod<"The memory category of the storage.",
      "::vram::nn::MemoryCategory", "getMemoryCategory">,
    InterfaceMethod<[{
        A name for the storage in reports: the parameter or buffer name,
        `<param>.<kind>` for optimizer state.
      }],
      "std::string", "getStorageName">,
  ];
}

def NN_LayoutOpInterface : OpInterface<"LayoutOpInterface"> {
  let description = [{
    PyTorch's strided layout. A view op derives its result's strides from its
    input's (transpose swaps two, slice multiplies one by the step, expand
    sets broadcast ones to 0, reshape re-chunks them as
    at::detail::computeStride does). An op whose kernel views an operand as
    another shape (reshape; linear folding a >2-D input to [-1, in];
    torch.matmul folding batch dimensions for bmm) copies that operand
    first when its strides cannot express the view. The
    `vram-insert-contiguous` pass makes those copies explicit as
    `nn.contiguous`, for every front end.
  }];
  let cppNamespace = "::vram::nn";
  let methods = [
    InterfaceMethod<[{
        The strides of result 0 given the strides of operand 0, or nullopt
        when the result is a new contiguous tensor (or the view is not
        expressible, which getOperandViews then prevents).
      }],
      "std::optional<::llvm::SmallVector<int64_t>>", "getResultStrides",
      (ins "::llvm::ArrayRef<int64_t>":$inputStrides), [{}], [{
        return std::nullopt;
      }]>,
    InterfaceMethod<[{
        The strides of result `index` given the strides of operand 0 (an
        op with several results lays each out); by default
        getResultStrides for result 0 and contiguous for the others.
      }],
      "std::optional<::llvm::SmallVector<int64_t>>", "getResultStridesAt",
      (ins "unsigned":$index, "::llvm::ArrayRef<int64_t>":$inputStrides),
      [{}], [{
        if (index != 0)
          return std::nullopt;
        return $_op.getResultStrides(inputStrides);
      }]>,
    InterfaceMethod<[{
        Appends the operands the kernel views as another shape, with that
        shape.
      }],
      "void", "getOperandViews",
      (ins "::llvm::SmallVectorImpl<::vram::nn::OperandView> &":$views),
      [{}], [{ return; }]>,
  ];
}

def NN_LowerToTensorOpInterface : OpInterface<"LowerToTensorOpInterface"> {
  let description = [{
    The real computation of an op on upstream tensor dialects (linalg,
    tensor, arith, math): its forward formula, the extra tensors its kernel
    keeps for backward (`nn.saved`) and its backward formula (`nn.backward`),
    in one place per op. The step lowering (`vram-lower-to-tensor`) calls it
    for every op of the step; `nn.saved` and `nn.backward` dispatch to the
    static methods of the forward op they name. The lowerings follow
    PyTorch's kernels' allocations: every result PyTorch allocates is a new
    tensor (`bufferization.alloc_tensor` as the destination), views and in-place forms
    write into their operand, and scratch memory a CPU kernel keeps in
    registers or on the stack is on the stack (`memref.alloca`). The models
    are registered by the lowering library (lib/Conversion/NNToTensor), which
    keeps the dialect free of linalg.
  }];
  let cppNamespace = "::vram::nn";
  let methods = [
    InterfaceMethod<[{
        Builds the op's computation at the builder's insertion point from
        `operands` (the lowered operands, in order). Appends one value per
        result to `results`, and to `updates` the operands the op writes in
        place with their new value (optimizer parameters and state). Emits
        a located error and fails when a case is not lowered.
      }],
      "::mlir::LogicalResult", "lowerToTensor",
      (ins "::mlir::OpBuilder &":$b, "::mlir::ValueRange":$operands,
           "const ::vram::nn::LoweringOptions &":$options,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$results,
           "::llvm::SmallVectorImpl<std::pair<unsigned, ::mlir::Value>> &":$updates)>,
    StaticInterfaceMethod<[{
        Builds the extra tensor `saved.kind` that the forward kernel keeps
        for backward (an `nn.saved` of this op) from the forward operands and
        results.
      }],
      "::mlir::FailureOr<::mlir::Value>", "lowerSavedTensor",
      (ins "::mlir::OpBuilder &":$b, "::mlir::Location":$loc,
           "const ::vram::nn::SavedTensorLowering &":$saved), [{}], [{
        return ::mlir::emitError(loc)
               << "no lowering of the saved tensor '" << saved.kind << "' of "
               << ConcreteOp::getOperationName();
      }]>,
    StaticInterfaceMethod<[{
        Builds the backward node of this op (an `nn.backward` naming it):
        appends the gradient of each operand in `node.gradOperands`, in
        order.
      }],
      "::mlir::LogicalResult", "lowerBackward",
      (ins "::mlir::OpBuilder &":$b, "::mlir::Location":$loc,
           "const ::vram::nn::BackwardLowering &":$node,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$grads), [{}], [{
        return ::mlir::emitError(loc) << "no lowering of the backward of "
                                      << ConcreteOp::getOperationName();
      }]>,
  ];
}

#endif // VRAM_DIALECT_NN_NNINTERFACES_TD
