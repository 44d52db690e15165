//===- Passes.td - vram-opt passes -------------------------*- tablegen -*-===//

#ifndef VRAM_TRANSFORMS_PASSES_TD
#define VRAM_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def BuildStep : Pass<"vram-build-step", "mlir::ModuleOp"> {
  let summary = "Builds the inference or training step from a forward model";
  let description = [{
    Turns `@forward` into `@step`, one explicit iteration as PyTorch eager
    runs it. In inference mode the forward runs under no-grad semantics, as
    does a generation program (a forward with nn.max_new_tokens, which its
    front end builds for --mode=generate) in generate mode. In
    train mode the step holds the forward ops, the loss, the backward nodes
    in reverse order (each keeping what its autograd formula saves, see the
    AutodiffOpInterface), gradient accumulation and the optimizer update with
    its persistent state and temporaries.

    ```
    vram-opt model.mlir --vram-build-step="mode=train optimizer=adam"
    ```
  }];
  let options = [
    Option<"mode", "mode", "::vram::nn::StepMode",
           /*default=*/"::vram::nn::StepMode::Train", "the step to build",
           "::vram::nn::EnumValues<::vram::nn::StepMode>()">,
    Option<"optimizer", "optimizer", "::vram::nn::OptimizerKind",
           /*default=*/"::vram::nn::OptimizerKind::Adam", "torch.optim optimizer",
           "::vram::nn::EnumValues<::vram::nn::OptimizerKind>()">,
    Option<"implementation", "implementation", "::vram::nn::OptimizerImpl",
           /*default=*/"::vram::nn::OptimizerImpl::Foreach",
           "optimizer implementation (foreach is the default on CUDA)",
           "::vram::nn::EnumValues<::vram::nn::OptimizerImpl>()">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0.0",
           "weight decay">,
    Option<"loss", "loss", "::vram::nn::LossKind",
           /*default=*/"::vram::nn::LossKind::CrossEntropy", "the loss",
           "::vram::nn::EnumValues<::vram::nn::LossKind>()">,
    Option<"flattenLogits", "flatten-logits", "bool", /*default=*/"false",
           "flatten [B, T, V] logits to [B*T, V] for cross_entropy, as "
           "language-model training loops do (also when @forward has the "
           "nn.sequence_logits attribute)">,
    Option<"setToNone", "set-to-none", "bool", /*default=*/"true",
           "zero_grad(set_to_none): when false, gradients stay allocated "
           "across iterations">,
    Option<"keepOutput", "keep-output", "bool", /*default=*/"false",
           "the training loop holds the model's output until the step "
           "ends (`out = model(x); loss = criterion(out, y); "
           "loss.backward(); optimizer.step()`): by default nothing "
           "references it once the loss is computed">,
    Option<"lossParallel", "loss-parallel", "bool", /*default=*/"false",
           "torch's loss_parallel() under tensor parallelism: the "
           "cross-entropy reads the logits sharded over the vocabulary (the "
           "input of the model's last nn.all_gather_output, which is "
           "dropped) as nn.vocab_parallel_cross_entropy">,
    Option<"lossOutput", "loss-output", "int64_t", /*default=*/"-1",
           "training a model with several outputs: the one the loss reads "
           "(0-based); the others are held until the loss returns "
           "(`out = model(x); loss = criterion(out[N], y)`). -1: the "
           "model's only output">,
    Option<"gradAccum", "grad-accum", "int64_t", /*default=*/"1",
           "micro-batches whose gradients accumulate before each optimizer "
           "update: the step is the last one's forward and backward, with "
           "the gradients of the earlier ones held, and the update">,
    Option<"optimizerInBackward", "optimizer-in-backward", "bool",
           /*default=*/"false",
           "the optimizer step fused into backward: an optimizer per "
           "parameter stepped and zeroed by its post-accumulate-grad hook, "
           "so each gradient is freed right after its update">,
    Option<"maxGradNorm", "max-grad-norm", "double", /*default=*/"0.0",
           "clip the gradients' total 2-norm to this before the update "
           "(torch.nn.utils.clip_grad_norm_, transformers' Trainer "
           "max_grad_norm); 0: no clipping">,
    Option<"ema", "ema", "bool", /*default=*/"false",
           "an EMA of the model (torch.optim.swa_utils.AveragedModel with "
           "get_ema_multi_avg_fn): a copy of every parameter and buffer, "
           "updated in place after the optimizer step">,
    Option<"inputRequiresGrad", "input-requires-grad", "bool",
           /*default=*/"false",
           "whether floating-point model inputs require grad">,
    Option<"torchVersion", "torch-version", "::vram::nn::TorchVersion",
           /*default=*/"::vram::nn::TorchVersion::V2",
           "the PyTorch release whose autograd is modelled",
           "::vram::nn::EnumValues<::vram::nn::TorchVersion>()">,
    Option<"device", "device", "::vram::nn::Device",
           /*default=*/"::vram::nn::Device::Cuda",
           "the device whose kernels are modelled",
           "::vram::nn::EnumValues<::vram::nn::Device>()">,
    Option<"cudnnWorkspace", "cudnn-workspace", "::vram::nn::CudnnWorkspace",
           /*default=*/"::vram::nn::CudnnWorkspace::None",
           "the workspace assumed for each cuDNN convolution call (CUDA)",
           "::vram::nn::EnumValues<::vram::nn::CudnnWorkspace>()">,
    Option<"entry", "entry", "std::string", /*default=*/"\"forward\"",
           "name of the forward function">,
  ];
  let dependentDialects = ["::vram::nn::NNDialect", "::mlir::func::FuncDialect"];
}

def Freeze : Pass<"vram-freeze", "mlir::ModuleOp"> {
  let summary = "Freezes parameters by name (requires_grad=False)";
  let description = [{
    Marks every `nn.param` whose name matches one of `patterns` and none of
    `keep` as not trainable. A pattern is a glob (`layer1.*`) or a module
    path (`layer1`, meaning `layer1` and everything under it).
    `first-fraction=F` also freezes the parameters of the first
    floor(F x n) of the model's n modules, in the order
    `model.named_modules()` lists them (the root first, then each module
    before its children, in the order the forward pass reaches them; the
    modules are the prefixes of the parameter names and of the layer names
    of the forward ops): what `freeze_model(model, 0.95)` of seed article
    001 meant to do (`param.requires_grad_(False)` for each module's own
    parameters). Frozen parameters get no gradient and no optimizer state,
    and ops none of whose inputs require grad record no backward node.

    ```
    vram-opt --zoo=resnet18 --vram-freeze="patterns=* keep=fc.*"
    vram-opt --zoo=resnet18 --vram-freeze="first-fraction=0.95"
    ```
  }];
  let options = [
    ListOption<"patterns", "patterns", "std::string",
               "glob patterns or module paths of parameters to freeze">,
    ListOption<"keep", "keep", "std::string",
               "glob patterns or module paths of parameters that stay "
               "trainable">,
    Option<"firstFraction", "first-fraction", "double", /*default=*/"0.0",
           "freeze the parameters of this first fraction of the modules">,
  ];
  let statistics = [
    Statistic<"numFrozen", "frozen", "parameters frozen">,
  ];
  let dependentDialects = ["::vram::nn::NNDialect"];
}

def Lora : Pass<"vram-lora", "mlir::ModuleOp"> {
  let summary = "Adds peft LoRA adapters to conv2d and linear layers";
  let description = [{
    For each `nn.conv2d` / `nn.linear` of `@forward` whose weight is a
    parameter and that a target selects, inserts the adapter structure of
    peft's `LoraLayer` (`get_peft_model` with `LoraConfig(r, lora_alpha,
    lora_dropout, target_modules)`):

    ```
    result = base(x) + lora_B(lora_A(lora_dropout(x))) * scaling
    ```

    with `scaling = alpha / r`. For a convolution `lora_A` is a conv2d from
    the base's input channels to r with the base's kernel size, stride and
    padding (peft passes neither dilation nor groups) and no bias, `lora_B`
    a 1x1 conv2d from r to the base's output channels with the base's
    groups; for a linear layer `lora_A` is linear(in, r) and `lora_B`
    linear(r, out), both without bias. `lora_dropout` is dropout(p) for
    p > 0, else nothing. The new parameters are named as peft names them,
    under the layer's module: `<layer>.lora_A.default.weight`,
    `<layer>.lora_B.default.weight`; the new ops are located at
    `<layer>.lora_dropout`, `<layer>.lora_A` and `<layer>.lora_B` (which
    also holds `* scaling`), the sum at `<layer>`. As `get_peft_model` does
    (bias="none"), every other parameter is frozen.

    The adapters are float32 over a float16/bfloat16 layer
    (`autocast_adapter_dtype`, peft's default) and over a quantized one: the
    input is cast to them (`x.to(lora_A.weight.dtype)`, per layer) and the
    sum cast back to the layer's dtype. An `nn.linear_4bit` (vram-quantize)
    is adapted as peft's `lora.bnb.Linear4bit`: its result is cloned
    first, and the scaled adapter output is cast back before the sum; an
    `nn.linear_8bit` as `lora.bnb.Linear8bitLt`: the same without the
    clone.

    A target is an op kind (`conv2d`, `linear`, or `all-linear`: every
    linear layer but the output layer whose result the model returns, as
    peft's "all-linear") or a glob or module path on
    the layer name: the module the op's location names (`layer1.0.conv1`),
    else its weight's module. A name without wildcards also matches, as
    peft's `target_modules` do, every layer whose path ends with it
    (`q_proj` adapts `model.layers.0.self_attn.q_proj`). A name that
    matches no layer is an error naming the nearest layer names.

    ```
    vram-opt --zoo=resnet18 --vram-lora="r=4 alpha=32 dropout=0.1 targets=conv2d"
    ```
  }];
  let options = [
    Option<"rank", "r", "int64_t", /*default=*/"8", "LoRA rank r (> 0)">,
    Option<"alpha", "alpha", "double", /*default=*/"8.0",
           "lora_alpha; scaling = alpha / r">,
    Option<"dropout", "dropout", "double", /*default=*/"0.0",
           "lora_dropout probability in [0, 1)">,
    ListOption<"targets", "targets", "std::string",
               "op kinds (conv2d, linear, all-linear) or globs / module "
               "paths of the "
               "layers to adapt">,
    Option<"autocastAdapterDtype", "autocast-adapter-dtype", "bool",
           /*default=*/"true",
           "get_peft_model's autocast_adapter_dtype: float32 adapters over "
           "float16/bfloat16 layers (false: the layer's dtype)">,
    Option<"entry", "entry", "std::string", /*default=*/"\"forward\"",
           "name of the forward function">,
  ];
  let statistics = [
    Statistic<"numAdapted", "adapted", "layers given a LoRA adapter">,
  ];
  let dependentDialects = ["::vram::nn::NNDialect"];
}

def Quantize : Pass<"vram-quantize", "mlir::ModuleOp"> {
  let summary = "Stores linear weights in 4 or 8 bits as bitsandbytes does "
                "(QLoRA, LLM.int8)";
  let description = [{
    `from_pretrained(..., quantization_config=BitsAndBytesConfig(
    load_in_4bit=True, bnb_4bit_quant_type, bnb_4bit_use_double_quant,
    bnb_4bit_compute_dtype))`: every `nn.linear` of `@forward` whose weight
    is a parameter becomes bitsandbytes' Linear4bit, except the output layer
    (the linear whose result the model returns, `lm_head`) and tied weights
    (a parameter something else reads too), which transformers keeps
    (get_keys_to_not_convert). The weight becomes an `nn.quantized_weight`
    (the packed 4-bit codes and the QuantState's tensors, frozen) and the
    layer an `nn.linear_4bit`. The layer computes in its input's dtype when
    that is float32 or bfloat16 (Linear4bit.set_compute_type) and in
    `compute-dtype` for a float16 input, cast there and back (`nn.cast`).
    Runs after the model's dtype is set (vram-precision fp16/bf16) and
    before vram-lora, which then adapts the 4-bit layers as peft's
    `lora.bnb.Linear4bit`. Sets `nn.quantize` on `@forward`.

    `quant-type=int8` is `BitsAndBytesConfig(load_in_8bit=True,
    llm_int8_threshold)` instead: the same layers become bitsandbytes'
    Linear8bitLt (`nn.linear_8bit`, computing in the input's dtype) over an
    int8 `nn.quantized_weight` (CB and its row scales SCB). `threshold`
    (6.0, transformers' default) turns on LLM.int8's outlier decomposition;
    `outlier-cols` is the number of the input's columns each layer is
    assumed to find at or above it (the data decides; 0 by default).

    ```
    vram-opt --hf=config.json --vram-quantize="quant-type=nf4 double-quant=true"
    vram-opt --hf=config.json --vram-quantize="quant-type=int8 threshold=6 outlier-cols=4"
    ```
  }];
  let options = [
    Option<"quantType", "quant-type", "::vram::nn::QuantType",
           /*default=*/"::vram::nn::QuantType::Nf4",
           "bnb_4bit_quant_type: nf4 or fp4; int8 for load_in_8bit",
           "::vram::nn::EnumValues<::vram::nn::QuantType>()">,
    Option<"threshold", "threshold", "double", /*default=*/"6.0",
           "llm_int8_threshold (int8): an input value at or above it makes "
           "its column an outlier; 0 turns the decomposition off">,
    Option<"outlierCols", "outlier-cols", "int64_t", /*default=*/"0",
           "int8: the outlier columns each layer's input is assumed to "
           "have">,
    Option<"doubleQuant", "double-quant", "bool", /*default=*/"false",
           "bnb_4bit_use_double_quant: quantize the absmax again (8 bits)">,
    Option<"blocksize", "blocksize", "int64_t", /*default=*/"64",
           "elements per absmax block (Linear4bit's 64)">,
    Option<"computeDtype", "compute-dtype", "::vram::nn::Precision",
           /*default=*/"::vram::nn::Precision::Fp32",
           "bnb_4bit_compute_dtype (fp32, fp16 or bf16): the dtype a "
           "float16 input computes in",
           "::vram::nn::EnumValues<::vram::nn::Precision>()">,
    Option<"entry", "entry", "std::string", /*default=*/"\"forward\"",
           "name of the forward function">,
  ];
  let statistics = [
    Statistic<"numQuantized", "quantized", "linear layers given quantized weights">,
  ];
  let dependentDialects = ["::vram::nn::NNDialect"];
}

def Checkpoint : Pass<"vram-checkpoint", "mlir::ModuleOp"> {
  let summary = "Activation checkpointing of modules (torch.utils.checkpoint)";
  let description = [{
    Rewrites the built `@step` as if each selected module ran under
    `torch.utils.checkpoint(module, x, use_reentrant=False)`. A segment is a
    maximal run of forward ops of one checkpointed module: the shortest
    prefix of the op's layer name that a pattern matches (`layer1` selects
    the stage `layer1`, `layer2.*` each block `layer2.0`, `layer2.1`). `*`
    alone selects every repeated block, each element of the outermost
    ModuleList or Sequential of the layers (`model.layers.*` of a decoder,
    `layer1.*` to `layer4.*` of a ResNet), as
    gradient_checkpointing_enable() checkpoints a transformers model; a
    model without one, every top-level module.

    The segment's forward ops stay where they are, but no backward node
    keeps what they computed: the segment's ops are cloned right before the
    first backward node of the segment that uses a saved tensor (where
    autograd unpacks the first one and the checkpoint recomputes the
    forward), and the backward nodes are redirected to the clones. So the
    forward keeps only the segment's inputs (the recomputation uses them)
    and what nodes outside the segment save; the recomputed saved tensors
    die as their backward nodes run. The clones carry
    `nn.phase = #nn<phase recompute>`: their FLOPs are counted in the
    recompute phase, not in forward. Dropout recomputes the same mask (the
    checkpoint restores the RNG state), so it costs the same memory. With
    torch 2 the recomputation stops after the last tensor a node needs
    (early stopping); torch 1.13 recomputes the whole segment.

    ```
    vram-opt --zoo=resnet18 --vram-build-step --vram-checkpoint="modules=layer1,layer2"
    ```
  }];
  let options = [
    ListOption<"modules", "modules", "std::string",
               "globs or module paths of the modules to checkpoint">,
    Option<"tp", "tp", "int64_t", /*default=*/"1",
           "tensor-parallel ranks the step's model was built for "
           "(nn.tensor_parallel), >= 1">,
    Option<"entry", "entry", "std::string", /*default=*/"\"step\"",
           "name of the built step">,
  ];
  let statistics = [
    Statistic<"numSegments", "segments", "checkpointed segments">,
    Statistic<"numRecomputed", "recomputed", "ops recomputed in backward">,
  ];
  let dependentDialects = ["::vram::nn::NNDialect"];
}

def Precision : Pass<"vram-precision", "mlir::ModuleOp"> {
  let summary = "Runs the model in fp16/bf16, or under torch.autocast (AMP)";
  let description = [{
    Rewrites `@forward` for the precision a training loop runs it in:

    - `fp16`, `bf16`: `model.half()` / `model.bfloat16()` with low-precision
      inputs: every floating-point parameter, buffer, input and result in that
      dtype (gradients and optimizer state follow the parameters), except
      ops marked `nn.float32` (the model's code upcasts, as transformers'
      RMSNorm): their low-precision operands are cast to f32 once per value
      and their results cast back where other ops read them.
    - `amp-fp16`, `amp-bf16`: `with torch.autocast("cuda", dtype):` around the
      forward pass and the loss. Parameters stay fp32 (the master weights, so
      gradients and optimizer state are fp32). Each op follows its autocast
      policy trait (NNInterfaces.h): conv/linear/matmul/attention run in the
      low dtype, layer_norm/mse_loss/exp/... in fp32, softmax/log_softmax/
      cross_entropy with dtype=float, cat promotes, the rest run in their
      inputs' dtype. The casts are explicit `nn.cast` ops. A trainable
      parameter is cast once, at its first use, and the copy is kept in
      autocast's cache until the region exits (`nn.autocast_exit`); frozen
      parameters are cast again at every use.
    - `fp32`: nothing changes.

    GradScaler keeps a few scalars (scale, growth tracker, found_inf), which
    are not modelled.

    ```
    vram-opt --zoo=resnet18 --vram-precision="precision=amp-fp16" --vram-build-step
    ```
  }];
  let options = [
    Option<"precision", "precision", "::vram::nn::Precision",
           /*default=*/"::vram::nn::Precision::Fp32", "the precision",
           "::vram::nn::EnumValues<::vram::nn::Precision>()">,
    Option<"entry", "entry", "std::string", /*default=*/"\"forward\"",
           "name of the forward function">,
  ];
  let statistics = [
    Statistic<"numCasts", "casts", "nn.cast ops inserted">,
  ];
  let dependentDialects = ["::vram::nn::NNDialect"];
}

def InsertContiguous : Pass<"vram-insert-contiguous", "mlir::func::FuncOp"> {
  let summary = "Makes PyTorch's implicit copies of strided views explicit";
  let description = [{
    Tracks the strides PyTorch gives every value (LayoutOpInterface: views
    derive theirs from their input, other ops make contiguous tensors) and
    inserts `nn.contiguous` before an op whose kernel views an operand as a
    shape its strides cannot express: `reshape` of a transposed tensor,
    `F.linear` of a >2-D strided input, `torch.matmul` folding the batch
    dimensions of a transposed operand. Autograd then keeps the copy, not
    the view. Every front end runs it (the zoo and the ONNX importer), so
    they agree on when PyTorch copies.

    ```
    %t = nn.transpose %x {dim0 = 1, dim1 = 2} : ... -> tensor<2x16x8xf32>
    %r = nn.reshape %t : (tensor<2x16x8xf32>) -> tensor<2x128xf32>
    // becomes
    %c = nn.contiguous %t : tensor<2x16x8xf32>
    %r = nn.reshape %c : (tensor<2x16x8xf32>) -> tensor<2x128xf32>
    ```
  }];
  let dependentDialects = ["::vram::nn::NNDialect"];
  let statistics = [
    Statistic<"numCopies", "copies", "nn.contiguous copies inserted">,
  ];
}

def Parallel : Pass<"vram-parallel", "mlir::ModuleOp"> {
  let summary = "Rewrites the built step into one rank's step of a multi-GPU job";
  let description = [{
    Data parallelism as torch.nn.parallel.DistributedDataParallel runs it
    over `dp` ranks: every rank holds the whole model and trains its own
    micro-batch (`--batch` is per rank). The reducer allocates, when the
    model is wrapped, flat gradient buckets that it keeps: each gradient is
    copied into its bucket as backward finishes it, the bucket is
    all-reduced, and the result copied back into `.grad`. DDP rebuilds its
    buckets after the first iteration in the order the gradients became
    ready, per dtype: the first bucket closes once it holds `first-bucket`
    bytes (1 MiB), later ones at `bucket-cap` bytes (25 MiB); each is one
    allocation. With `bucket-view` (gradient_as_bucket_view=True) `.grad` is
    a view into the bucket: the gradient backward computes is dropped once
    copied in, so no separate `.grad` is kept.

    On a training `@step` the pass adds one `nn.grad_bucket` per bucket; it
    sets `nn.parallel` (#nn.parallel) on the step in every mode.

    With `fsdp` > 1 or `shard` patterns the step becomes rank 0's under
    FSDP2 (fully_shard): `nn.shard`, `nn.all_gather`, `nn.unshard`,
    `nn.reduce_scatter_input`, `nn.reduce_scatter` and `nn.release` around
    each unit (lib/Transforms/Parallel.cpp says when). `dp` and `fsdp`
    together are HSDP. `mixed-precision` models a MixedPrecisionPolicy over
    a step vram-precision built in param_dtype: fp32 shards and inputs.

    With `zero` = 1 or 2 the dp ranks run DeepSpeed's ZeRO stage 1 or 2
    instead of DDP: the trainable parameters become views of one flat
    buffer (`nn.zero_flat_params`), each rank keeps an fp32 copy of its
    partition (`nn.zero_partition`) that the optimizer updates, and the
    gradients pass through a buffer of `reduce-bucket-size` elements into
    the partition's (`nn.zero_buffer`, `nn.zero_reduce`,
    `nn.zero_grad_norm`; lib/Transforms/Zero.cpp says when); with
    `overlap-comm` there are two buffers. The step is the rank's whose
    gradient partition is largest (`zero_rank`).

    With `zero` = 3 the parameters are partitioned too (DeepSpeed's
    DeepSpeedZeroOptimizer_Stage3, lib/Transforms/Zero3.cpp): each rank
    keeps ceil(n / dp) elements of every parameter, and the step gathers
    them module by module as DeepSpeed's parameter coordinator does
    (`nn.all_gather`, `nn.unshard`, `nn.release`), prefetching by the
    trace of the previous step within `prefetch-bucket-size` and
    `max-live-parameters`; parameters of at most
    `param-persistence-threshold` elements stay gathered.

    With `pp` > 1 the model's repeated blocks (`model.layers.*`) are split
    into `pp` contiguous stages, one per rank, the embedding with the first
    and the head and loss with the last, and the step becomes one stage's
    under torch.distributed.pipelining's `pp-schedule` over `microbatches`
    micro-batches (lib/Transforms/PipelineParallel.cpp): each micro-batch's
    forward and backward of the stage in the schedule's order, the
    activations received from and sent to the neighbouring stages
    (`nn.p2p_recv`, `nn.p2p_send`). The step is the stage's whose peak is
    highest (`pp_stage`). Under `interleaved-1f1b` (ScheduleInterleaved1F1B)
    the blocks are split into `pp` x `pp-stages-per-rank` stages and rank r
    holds stages r, r + pp, ...: the step is one rank's, its stages' actions
    replayed in the order torch's runtime lowers them
    (lib/Transforms/PipelineSchedule.cpp), and `pp-stage` names the rank.

    With `tp` > 1 the step must be built from one rank's tensor-parallel
    model (its forward's `nn.tensor_parallel`, which its front end sets
    with the shards and collectives): the pass checks the ranks agree and
    records them; it does not shard a whole model itself. With `fsdp` too,
    FSDP2 shards those shards over the `fsdp` groups (a (fsdp, tp) mesh);
    with `dp`, DDP buckets each rank's gradients (a (dp, tp) mesh), the
    shards' last: torch's _pre_dp_module_transform rebuilds them as
    DTensors at each forward's start, and the autograd engine runs those
    nodes after every other ready node.

    ```
    vram-opt --zoo=resnet18 --vram-build-step --vram-parallel="dp=8"
    ```
  }];
  let options = [
    Option<"dp", "dp", "int64_t", /*default=*/"1",
           "data-parallel ranks (DistributedDataParallel), >= 1">,
    Option<"bucketCap", "bucket-cap", "int64_t", /*default=*/"26214400",
           "bytes after which a gradient bucket closes (bucket_cap_mb)">,
    Option<"firstBucket", "first-bucket", "int64_t", /*default=*/"1048576",
           "bytes after which the first bucket closes">,
    Option<"bucketView", "bucket-view", "bool", /*default=*/"false",
           ".grad is a view into its bucket (gradient_as_bucket_view)">,
    Option<"fsdp", "fsdp", "int64_t", /*default=*/"1",
           "ranks the parameters are sharded over (FSDP2 fully_shard), >= 1">,
    ListOption<"shard", "shard", "std::string",
               "globs or module paths of the modules wrapped with "
               "fully_shard before the root (model.layers.*)">,
    Option<"reshardAfterForward", "reshard-after-forward", "bool",
           /*default=*/"true",
           "FSDP2's reshard_after_forward for the --shard units: free their "
           "gathered parameters after forward and gather again in backward; "
           "false keeps them until their backward ends">,
    Option<"mixedPrecision", "mixed-precision", "bool", /*default=*/"false",
           "FSDP2's MixedPrecisionPolicy over a step built in param_dtype "
           "(vram-precision): the shards, their gradients and optimizer "
           "state stay fp32, forward inputs are cast at the root">,
    Option<"reduceInParamDtype", "reduce-in-param-dtype", "bool",
           /*default=*/"false",
           "reduce-scatter the gradients in param_dtype (reduce_dtype = "
           "param_dtype); else in the shards' dtype, as torch 2.15 does with "
           "reduce_dtype=None">,
    Option<"tp", "tp", "int64_t", /*default=*/"1",
           "tensor-parallel ranks the step's model was built for "
           "(nn.tensor_parallel), >= 1">,
    Option<"zero", "zero", "int64_t", /*default=*/"0",
           "DeepSpeed ZeRO stage (1, 2 or 3) over the dp ranks instead of "
           "DDP; 0: none">,
    Option<"reduceBucket", "reduce-bucket-size", "int64_t",
           /*default=*/"500000000",
           "ZeRO's reduce_bucket_size: elements of its gradient buffer">,
    Option<"overlapComm", "overlap-comm", "bool", /*default=*/"false",
           "ZeRO's overlap_comm: two gradient buffers, reduced as backward "
           "runs at stage 1 too">,
    Option<"prefetchBucket", "prefetch-bucket-size", "int64_t",
           /*default=*/"50000000",
           "ZeRO-3's stage3_prefetch_bucket_size: elements each module's "
           "fetch may prefetch (0: none)">,
    Option<"maxLiveParameters", "max-live-parameters", "int64_t",
           /*default=*/"1000000000",
           "ZeRO-3's stage3_max_live_parameters: elements gathered at once "
           "beyond which nothing is prefetched">,
    Option<"maxReuseDistance", "max-reuse-distance", "int64_t",
           /*default=*/"1000000000",
           "ZeRO-3's stage3_max_reuse_distance: a parameter used again "
           "within this many elements of fetches is not released">,
    Option<"persistenceThreshold", "param-persistence-threshold", "int64_t",
           /*default=*/"100000",
           "ZeRO-3's stage3_param_persistence_threshold: parameters of at "
           "most this many elements stay gathered">,
    Option<"subGroupSize", "sub-group-size", "int64_t",
           /*default=*/"1000000000",
           "ZeRO-3's sub_group_size: elements of the partition the "
           "optimizer steps at a time">,
    Option<"pp", "pp", "int64_t", /*default=*/"1",
           "pipeline stages, one per rank (torch.distributed.pipelining), "
           ">= 1">,
    Option<"ppSchedule", "pp-schedule", "std::string",
           /*default=*/"\"1f1b\"",
           "the pipeline schedule: gpipe (ScheduleGPipe), 1f1b "
           "(Schedule1F1B) or interleaved-1f1b (ScheduleInterleaved1F1B)">,
    Option<"ppStagesPerRank", "pp-stages-per-rank", "int64_t",
           /*default=*/"0",
           "interleaved-1f1b: the stages each rank holds (0: 2)">,
    Option<"microbatches", "microbatches", "int64_t", /*default=*/"0",
           "micro-batches per pipeline step, each of the step's batch "
           "(n_microbatches; 0: as many as stages)">,
    ListOption<"ppLayers", "pp-layers", "int64_t",
               "repeated blocks per pipeline stage, in order (default: as "
               "even as they divide, the earlier stages one more)">,
    Option<"ppStage", "pp-stage", "int64_t", /*default=*/"-1",
           "the pipeline stage (with interleaved-1f1b the rank) whose step to "
           "build; -1: the one whose step peaks highest">,
    Option<"entry", "entry", "std::string", /*default=*/"\"step\"",
           "name of the built step">,
  ];
  let statistics = [
    Statistic<"numBuckets", "buckets", "gradient buckets">,
  ];
  let dependentDialects = ["::vram::nn::NNDialect"];
}

#endif // VRAM_TRANSFORMS_PASSES_TD
