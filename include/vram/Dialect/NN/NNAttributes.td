//===- NNAttributes.td - nn dialect enums and attributes ---*- tablegen -*-===//
//
// Every choice the pipeline makes (step mode, optimizer, loss, GELU form,
// attention kernel, FLOP convention, ...) is declared here once. The
// declaration gives the C++ enum, its string forms, the attribute that ops
// and the step carry (`#nn<optimizer adam>`), and, through
// `vram::nn::EnumValues`, the accepted values of pass options and of the
// driver's flags: option strings are validated in exactly this one place.
// Strings are IR keywords, so they use `_`; options also accept `-` for it
// (`--optimizer-impl=for-loop`).
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_DIALECT_NN_NNATTRIBUTES_TD
#define VRAM_DIALECT_NN_NNATTRIBUTES_TD

include "vram/Dialect/NN/NNDialect.td"
include "mlir/IR/EnumAttr.td"

class NN_I32Enum<string name, string summary, list<I32EnumAttrCase> cases>
    : I32EnumAttr<name, summary, cases> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::vram::nn";
}

class NN_EnumAttr<EnumAttrInfo enumInfo, string mnemonic>
    : EnumAttr<NN_Dialect, enumInfo, mnemonic>;

def NN_StepMode : NN_I32Enum<"StepMode", "the step vram-build-step builds", [
    I32EnumAttrCase<"Inference", 0, "inference">,
    I32EnumAttrCase<"Train", 1, "train">,
    // GenerationMixin.generate with a KV cache: the prefill forward and the
    // last decode step's (the model's generation program, built by its
    // front end).
    I32EnumAttrCase<"Generate", 2, "generate">]>;
def NN_StepModeAttr : NN_EnumAttr<NN_StepMode, "mode">;

def NN_StepPhase : NN_I32Enum<"StepPhase",
    "where an op runs in a training iteration", [
    I32EnumAttrCase<"Forward", 0, "forward">,
    I32EnumAttrCase<"Backward", 1, "backward">,
    I32EnumAttrCase<"Optimizer", 2, "optimizer">,
    // A forward op that activation checkpointing runs again in the backward
    // pass (vram-checkpoint marks it with `nn.phase`).
    I32EnumAttrCase<"Recompute", 3, "recompute">]>;
def NN_StepPhaseAttr : NN_EnumAttr<NN_StepPhase, "phase">;

// torch.optim's (SGD with momentum=0.9 and nesterov=True, Adafactor) and
// bitsandbytes' (Lion, 32-bit state; AdamW8bit, block-wise 8-bit state;
// PagedAdamW and PagedAdamW8bit, the same AdamW states in CUDA unified
// memory).
def NN_OptimizerKind : NN_I32Enum<"OptimizerKind", "the optimizer", [
    I32EnumAttrCase<"Sgd", 0, "sgd">,
    I32EnumAttrCase<"Momentum", 1, "momentum">,
    I32EnumAttrCase<"Adam", 2, "adam">,
    I32EnumAttrCase<"AdamW", 3, "adamw">,
    I32EnumAttrCase<"SgdNesterov", 4, "sgd_nesterov">,
    I32EnumAttrCase<"Adafactor", 5, "adafactor">,
    I32EnumAttrCase<"Lion", 6, "lion">,
    I32EnumAttrCase<"AdamW8bit", 7, "adamw8bit">,
    I32EnumAttrCase<"PagedAdamW", 8, "paged_adamw">,
    I32EnumAttrCase<"PagedAdamW8bit", 9, "paged_adamw8bit">]>;
def NN_OptimizerKindAttr : NN_EnumAttr<NN_OptimizerKind, "optimizer">;

def NN_OptimizerImpl : NN_I32Enum<"OptimizerImpl",
    "how optimizer.step() runs over the parameters", [
    I32EnumAttrCase<"Foreach", 0, "foreach">,
    I32EnumAttrCase<"Fused", 1, "fused">,
    I32EnumAttrCase<"ForLoop", 2, "for_loop">]>;
def NN_OptimizerImplAttr : NN_EnumAttr<NN_OptimizerImpl, "implementation">;

def NN_OptimizerStateKind : NN_I32Enum<"OptimizerStateKind",
    "a per-parameter optimizer state tensor", [
    I32EnumAttrCase<"MomentumBuffer", 0, "momentum_buffer">,
    I32EnumAttrCase<"ExpAvg", 1, "exp_avg">,
    I32EnumAttrCase<"ExpAvgSq", 2, "exp_avg_sq">,
    // Adafactor's factored second moment (rows, columns) and, for a
    // parameter of rank < 2, its unfactored one.
    I32EnumAttrCase<"RowVar", 3, "row_var">,
    I32EnumAttrCase<"ColVar", 4, "col_var">,
    I32EnumAttrCase<"Variance", 5, "variance">,
    // bitsandbytes' block-wise 8-bit state: a float32 scale per block of
    // 256 elements of exp_avg (1) and exp_avg_sq (2).
    I32EnumAttrCase<"Absmax1", 6, "absmax1">,
    I32EnumAttrCase<"Absmax2", 7, "absmax2">]>;
def NN_OptimizerStateKindAttr
    : NN_EnumAttr<NN_OptimizerStateKind, "optimizer_state">;

def NN_LossKind : NN_I32Enum<"LossKind", "the training loss", [
    I32EnumAttrCase<"CrossEntropy", 0, "cross_entropy">,
    I32EnumAttrCase<"Mse", 1, "mse">,
    // transformers' loss, the model called with labels (ForCausalLMLoss):
    // cross-entropy over the [B*T, V] logits upcast to fp32.
    I32EnumAttrCase<"CausalLm", 2, "causal_lm">,
    // Liger-Kernel's fused linear cross-entropy in place of lm_head and the
    // loss (nn.fused_linear_cross_entropy): no [B*T, V] logits.
    I32EnumAttrCase<"FusedLinearCrossEntropy", 3, "fused_linear_cross_entropy">]>;

def NN_GeluApproximation : NN_I32Enum<"GeluApproximation",
    "F.gelu(approximate=...)", [
    I32EnumAttrCase<"None", 0, "none">,
    I32EnumAttrCase<"Tanh", 1, "tanh">]>;
def NN_GeluApproximationAttr : NN_EnumAttr<NN_GeluApproximation, "approximate">;

def NN_AttentionBackend : NN_I32Enum<"AttentionBackend",
    "the scaled_dot_product_attention kernel", [
    I32EnumAttrCase<"Flash", 0, "flash">,
    I32EnumAttrCase<"Efficient", 1, "efficient">,
    I32EnumAttrCase<"Math", 2, "math">]>;
def NN_AttentionBackendAttr : NN_EnumAttr<NN_AttentionBackend, "backend">;

// How a transformer's attention runs (--attention): transformers'
// attn_implementation, and for sdpa the kernel. `sdpa` is the kernel PyTorch
// picks (flash; math where no fused kernel applies, as for dropout on the
// CPU).
def NN_AttentionImplementation : NN_I32Enum<"AttentionImplementation",
    "how a transformer's attention runs", [
    I32EnumAttrCase<"Sdpa", 0, "sdpa">,
    I32EnumAttrCase<"SdpaFlash", 1, "sdpa_flash">,
    I32EnumAttrCase<"SdpaEfficient", 2, "sdpa_efficient">,
    I32EnumAttrCase<"SdpaMath", 3, "sdpa_math">,
    I32EnumAttrCase<"Eager", 4, "eager">]>;

def NN_FlopConvention : NN_I32Enum<"FlopConvention",
    "FLOP counting convention (docs/Flops.md)", [
    I32EnumAttrCase<"Macs", 0, "macs">,
    I32EnumAttrCase<"Flops", 1, "flops">,
    I32EnumAttrCase<"Full", 2, "full">]>;

// The PyTorch whose behaviour is modelled (--torch-version). 1.13 is what
// Debian's python3-torch/libtorch provide, the ground truth measured here.
def NN_TorchVersion : NN_I32Enum<"TorchVersion", "the PyTorch release modelled", [
    I32EnumAttrCase<"V2", 0, "2">,
    I32EnumAttrCase<"V1_13", 1, "1.13">]>;

// What a cuDNN convolution is assumed to take as workspace (--cudnn-workspace).
// cuDNN's heuristics pick the algorithm, and with it the workspace, at run
// time; `none` assumes implicit-GEMM algorithms (no workspace), `im2col` the
// explicit-GEMM one, whose workspace is the batch's column matrix
// [N * C_in * kh * kw, H_out * W_out]: a bound for GEMM-based algorithms.
def NN_CudnnWorkspace : NN_I32Enum<"CudnnWorkspace",
    "the cuDNN convolution workspace assumed", [
    I32EnumAttrCase<"None", 0, "none">,
    I32EnumAttrCase<"Im2col", 1, "im2col">]>;

// The device whose kernels are modelled (--device).
def NN_Device : NN_I32Enum<"Device", "the device whose kernels run", [
    I32EnumAttrCase<"Cuda", 0, "cuda">,
    I32EnumAttrCase<"Cpu", 1, "cpu">]>;

// The allocator model the memory report uses (Analysis/Allocator.h).
def NN_AllocatorKind : NN_I32Enum<"AllocatorKind", "allocator model", [
    I32EnumAttrCase<"Exact", 0, "exact">,
    I32EnumAttrCase<"PytorchCuda", 1, "pytorch_cuda">]>;

// What a memory budget is checked against (--budget-metric, the Clang
// plugin's metric=; Analysis/StepMemory.h): the sum of live tensors,
// torch.cuda.max_memory_allocated, max_memory_reserved, or reserved plus the
// CUDA context (what nvidia-smi shows).
def NN_BudgetMetric : NN_I32Enum<"BudgetMetric", "budget metric", [
    I32EnumAttrCase<"Exact", 0, "exact">,
    I32EnumAttrCase<"Allocated", 1, "allocated">,
    I32EnumAttrCase<"Reserved", 2, "reserved">,
    I32EnumAttrCase<"Device", 3, "device">]>;

// How a training step runs its floating-point math (--precision): fp32;
// torch.autocast with fp16 or bf16 over fp32 parameters (AMP); or the whole
// model in fp16/bf16 (`model.half()`, `model.bfloat16()`).
def NN_Precision : NN_I32Enum<"Precision", "the step's precision", [
    I32EnumAttrCase<"Fp32", 0, "fp32">,
    I32EnumAttrCase<"AmpFp16", 1, "amp_fp16">,
    I32EnumAttrCase<"AmpBf16", 2, "amp_bf16">,
    I32EnumAttrCase<"Fp16", 3, "fp16">,
    I32EnumAttrCase<"Bf16", 4, "bf16">]>;

def NN_MemoryCategory : NN_I32Enum<"MemoryCategory",
    "what a tensor's storage is for, in the memory breakdown", [
    I32EnumAttrCase<"Parameters", 0, "parameters">,
    I32EnumAttrCase<"Buffers", 1, "buffers">,
    I32EnumAttrCase<"Inputs", 2, "inputs">,
    // Saved for backward.
    I32EnumAttrCase<"Activations", 3, "activations">,
    // Parameter gradients (.grad).
    I32EnumAttrCase<"Gradients", 4, "gradients">,
    I32EnumAttrCase<"OptimizerState", 5, "optimizer_state">,
    // Everything else: outputs not kept, activation gradients, workspaces.
    I32EnumAttrCase<"Temporaries", 6, "temporaries">,
    // The keys and values a generation program caches (nn.kv_cache_update,
    // nn.kv_cache_past).
    I32EnumAttrCase<"KvCache", 7, "kv_cache">]>;

def NN_SavedKind : NN_I32Enum<"SavedKind",
    "which tensor of its forward op a backward node keeps", [
    I32EnumAttrCase<"Operand", 0, "operand">,
    I32EnumAttrCase<"Result", 1, "result">,
    // A tensor the forward kernel allocates for backward (nn.saved).
    I32EnumAttrCase<"Extra", 2, "extra">]>;

def NN_SavedRoleAttr : AttrDef<NN_Dialect, "SavedRole"> {
  let mnemonic = "saved";
  let summary = "the role of one tensor kept by a backward node";
  let description = [{
    `#nn.saved<operand 1>` is operand 1 of the forward op, `#nn.saved<result
    0>` its result 0, `#nn.saved<extra 0>` the first extra tensor its kernel
    allocates (the `nn.saved` op that produces it names it). Expanding the
    backward node into real gradient code reads the saved values by role.
  }];
  let parameters = (ins EnumParameter<NN_SavedKind>:$kind, "int64_t":$index);
  let assemblyFormat = "`<` $kind $index `>`";
}

// A finite double, written as MLIR writes floats (`3.200000e+01`); kept as
// an APFloat (hashable, compared bitwise).
class NN_F64Parameter<string desc> : APFloatParameter<desc> {
  let parser = [{
    [&]() -> ::mlir::FailureOr<::llvm::APFloat> {
      double value;
      if (::mlir::failed($_parser.parseFloat(value)))
        return ::mlir::failure();
      return ::llvm::APFloat(value);
    }()
  }];
  let printer = [{ $_printer.printFloat($_self); }];
}

// The step's facts that a pass decided, on the function it built or
// rewrote (`nn.optimizer`, `nn.lora`; NNDialect.td). The report reads
// them, not the flags that asked for them.

def NN_OptimizerConfigAttr : AttrDef<NN_Dialect, "OptimizerConfig"> {
  let mnemonic = "optimizer_config";
  let summary = "the torch.optim optimizer a training step updates with";
  let description = [{
    `#nn.optimizer_config<adam, foreach, weight_decay = 0.000000e+00>`: the
    optimizer, how its step() runs over the parameters, and its weight
    decay (finite, >= 0). vram-build-step sets it as `nn.optimizer` on a
    training `@step`, also when no parameter trains (the step then has no
    `nn.optimizer_step`); every `nn.optimizer_step` of the step agrees with it.
  }];
  let parameters = (ins EnumParameter<NN_OptimizerKind>:$kind,
                        EnumParameter<NN_OptimizerImpl>:$implementation,
                        NN_F64Parameter<"weight decay">:$weightDecay);
  let assemblyFormat =
      "`<` $kind `,` $implementation `,` `weight_decay` `=` $weightDecay `>`";
  let genVerifyDecl = 1;
}

// bitsandbytes' weight data types: Linear4bit's quant_type, and
// Linear8bitLt's LLM.int8 (load_in_8bit).
def NN_QuantType : NN_I32Enum<"QuantType", "a bitsandbytes weight data type", [
    // QLoRA's NormalFloat4 and the 4-bit float of bitsandbytes.
    I32EnumAttrCase<"Nf4", 0, "nf4">,
    I32EnumAttrCase<"Fp4", 1, "fp4">,
    // Row-wise int8 with a float32 scale per output row (Int8Params CB, SCB).
    I32EnumAttrCase<"Int8", 2, "int8">]>;

class NN_F64DefaultParameter<string desc, string default>
    : NN_F64Parameter<desc> {
  let defaultValue = default;
}

def NN_QuantizationAttr : AttrDef<NN_Dialect, "Quantization"> {
  let mnemonic = "quantize";
  let summary = "how bitsandbytes stores a model's quantized linear weights";
  let description = [{
    `#nn.quantize<nf4, blocksize = 64, double_quant = true>`:
    BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type,
    bnb_4bit_use_double_quant) with Linear4bit's blocksize (64). Each
    quantized weight keeps its elements packed two per byte, a float32
    absmax per block and its 16-entry code; double quantization stores the
    absmax in 8 bits instead, with an offset and a float32 absmax and a
    256-entry code per 256 blocks. The blocksize is a power of two in
    [32, 4096].

    `#nn.quantize<int8, blocksize = 0, double_quant = false, threshold =
    6.000000e+00, outlier_cols = 4>`: BitsAndBytesConfig(load_in_8bit=True,
    llm_int8_threshold), LLM.int8: each weight in int8 with a float32 scale
    per output row (no blocks: blocksize 0, no double quantization). A
    positive `threshold` decomposes the input's outlier columns (a value at
    or above it) into a 16-bit product; how many columns that is depends on
    the data, so `outlier_cols` is the number each layer is assumed to see
    (0 unless given). Both are 0 for 4-bit weights.

    vram-quantize sets it as `nn.quantize` on `@forward` and on each
    `nn.quantized_weight`; vram-build-step carries it to `@step`.
  }];
  let parameters = (ins EnumParameter<NN_QuantType>:$quantType,
                        "int64_t":$blocksize, "bool":$doubleQuant,
                        NN_F64DefaultParameter<"llm_int8_threshold",
                                               "::llvm::APFloat(0.0)">:$threshold,
                        DefaultValuedParameter<"int64_t", "0">:$outlierCols);
  let assemblyFormat = "`<` $quantType `,` `blocksize` `=` $blocksize `,` "
                       "`double_quant` `=` $doubleQuant "
                       "(`,` `threshold` `=` $threshold^)? "
                       "(`,` `outlier_cols` `=` $outlierCols^)? `>`";
  let builders = [
    AttrBuilder<(ins "QuantType":$quantType, "int64_t":$blocksize,
                     "bool":$doubleQuant), [{
      return $_get($_ctxt, quantType, blocksize, doubleQuant,
                   ::llvm::APFloat(0.0), 0);
    }]>
  ];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    bool isInt8() const { return getQuantType() == QuantType::Int8; }
  }];
}

def NN_LoraConfigAttr : AttrDef<NN_Dialect, "LoraConfig"> {
  let mnemonic = "lora";
  let summary = "peft LoRA adapters a model was given (LoraConfig)";
  let description = [{
    `#nn.lora<r = 4, alpha = 3.200000e+01, dropout = 1.000000e-01, targets =
    ["conv2d"]>`: LoraConfig(r, lora_alpha, lora_dropout, target_modules).
    r > 0, alpha finite, dropout in [0, 1), targets a non-empty array of
    non-empty strings (op kinds `conv2d` / `linear`, globs or module paths).
    vram-lora sets it as `nn.lora` on `@forward`; vram-build-step carries it
    to `@step`. `getSpelling()` gives the driver's `--lora=` form of it.
  }];
  let parameters = (ins "int64_t":$rank, NN_F64Parameter<"lora_alpha">:$alpha,
                        NN_F64Parameter<"lora_dropout">:$dropout,
                        "::mlir::ArrayAttr":$targets);
  let assemblyFormat = "`<` `r` `=` $rank `,` `alpha` `=` $alpha `,` "
                       "`dropout` `=` $dropout `,` `targets` `=` $targets `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// `r=4,alpha=32,dropout=0.1,targets=conv2d|fc`: the driver's --lora
    /// spelling, numbers in their shortest form.
    std::string getSpelling() const;
  }];
}

def NN_ParallelAttr : AttrDef<NN_Dialect, "Parallel"> {
  let mnemonic = "parallel";
  let summary = "how the ranks of a multi-GPU job share the step";
  let description = [{
    `#nn.parallel<dp = 8, fsdp = 1, shard = [], bucket_cap = 26214400,
    first_bucket = 1048576, bucket_view = false>`: the step is one rank's of
    `dp x fsdp` ranks (each >= 1).

    - `dp`: DistributedDataParallel; every rank holds the whole model. The
      reducer packs gradients into buckets (the first up to `first_bucket`
      bytes, then up to `bucket_cap`, in the order backward finishes them);
      with `bucket_view` (gradient_as_bucket_view=True) `.grad` is a view
      into its bucket.
    - `fsdp`: FSDP2 (fully_shard) over that many ranks, each module the
      `shard` patterns select a unit, the rest of the model the root unit;
      the figures are rank 0's, whose shards are the largest.
    - both: HSDP, FSDP2 on a (dp, fsdp) mesh: sharded over `fsdp` ranks as
      above, the gradient shards all-reduced in place across the `dp`
      replicas (no memory of their own); no DDP buckets.
    - `zero` (printed when > 0): DeepSpeed's ZeRO stage 1 or 2 over the
      `dp` ranks instead of DDP (DeepSpeedZeroOptimizer): the trainable
      parameters live in one flat buffer, each rank keeps an fp32 copy of
      its 1/dp partition and the optimizer state of it; stage 1 reduces the
      gradients after backward, stage 2 as backward finishes them, both
      through a gradient buffer of `reduce_bucket` elements (printed when
      not 5e8, reduce_bucket_size), two with `overlap_comm` (printed when
      set; stage 1 then reduces in the hooks too); the figures are those of
      the rank whose gradient partition is largest (`zero_rank`).
    - `tp` (printed when > 1): tensor parallelism over that many ranks.
      The model is already one rank's (its front end built the column- and
      row-parallel linears' shards and `nn.all_reduce`/`nn.all_reduce_grad`,
      and marked the forward `nn.tensor_parallel`); vram-parallel checks
      that it was built for `tp` ranks. With `fsdp`, FSDP2 on a (fsdp, tp)
      mesh shards each rank's tensor-parallel shards over the `fsdp`
      groups; not combined with `dp` yet.
    - `pp` (printed when > 1): pipeline parallelism over that many stages,
      one per rank, with `microbatches` micro-batches per step under
      Schedule1F1B (ScheduleGPipe with `gpipe`); the figures are those of
      the stage whose step peaks highest (`pp_stage`). With
      `pp_stages_per_rank` (printed when > 1) each rank holds that many
      stages (rank r: r, r + pp, ...) under ScheduleInterleaved1F1B, and
      `pp_stage` is the rank. Not combined with the other axes yet.

    vram-parallel sets it as `nn.parallel` on `@step`, adds the buckets of a
    data-parallel training step as `nn.grad_bucket`, and rewrites a sharded
    step into rank 0's: `nn.shard`, `nn.all_gather`, `nn.unshard`,
    `nn.reduce_scatter_input`, `nn.reduce_scatter`, `nn.release`.
  }];
  let parameters = (ins "int64_t":$dp, "int64_t":$fsdp,
                        "::mlir::ArrayAttr":$shard, "int64_t":$bucketCap,
                        "int64_t":$firstBucket, "bool":$bucketView,
                        DefaultValuedParameter<"int64_t", "1">:$tp,
                        DefaultValuedParameter<"int64_t", "0">:$zero,
                        DefaultValuedParameter<"int64_t", "500000000">:$reduceBucket,
                        DefaultValuedParameter<"int64_t", "0">:$zeroRank,
                        DefaultValuedParameter<"bool", "false">:$overlapComm,
                        DefaultValuedParameter<"int64_t", "1">:$pp,
                        DefaultValuedParameter<"int64_t", "1">:$microbatches,
                        DefaultValuedParameter<"bool", "false">:$gpipe,
                        DefaultValuedParameter<"int64_t", "0">:$ppStage,
                        DefaultValuedParameter<"int64_t", "1">:$ppStagesPerRank);
  let assemblyFormat = "`<` `dp` `=` $dp `,` `fsdp` `=` $fsdp `,` `shard` `=` "
                       "$shard `,` `bucket_cap` `=` $bucketCap `,` "
                       "`first_bucket` `=` $firstBucket `,` `bucket_view` `=` "
                       "$bucketView `` custom<ParallelTail>($tp, $zero, "
                       "$reduceBucket, $zeroRank, $overlapComm, $pp, "
                       "$microbatches, $gpipe, $ppStage, $ppStagesPerRank) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The most ranks a layout may have (the largest jobs run ~10^5 GPUs):
    /// the per-rank figures list rank ids, and dp x fsdp x tp must not
    /// overflow.
    static constexpr int64_t kMaxWorldSize = int64_t(1) << 18;
    /// The ranks of the job.
    int64_t getWorldSize() const {
      return getDp() * getFsdp() * getTp() * getPp();
    }
    /// DeepSpeed's default reduce_bucket_size (elements).
    static constexpr int64_t kDefaultReduceBucket = 500000000;
  }];
}

#endif // VRAM_DIALECT_NN_NNATTRIBUTES_TD
