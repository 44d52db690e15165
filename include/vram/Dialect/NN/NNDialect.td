//===- NNDialect.td - the nn model dialect -----------------*- tablegen -*-===//

#ifndef VRAM_DIALECT_NN_NNDIALECT_TD
#define VRAM_DIALECT_NN_NNDIALECT_TD

include "mlir/IR/OpBase.td"

def NN_Dialect : Dialect {
  let name = "nn";
  let summary = "Neural-network layers at the level people write models";
  let description = [{
    The `nn` dialect describes a model the way it is written in PyTorch: layer
    ops (conv2d, linear, batch_norm, ...) on ranked tensors with value
    semantics, parameters and buffers as `nn.param` / `nn.buffer` ops that
    carry their PyTorch names, and model inputs as function arguments.

    Fused ops stay fused because what autograd keeps for backward depends on
    the fused op, not on a decomposition. The semantics the analyses need
    (FLOPs, tensors saved for backward, storage aliasing) are op interfaces
    implemented next to each op.

    The training step built by `vram-build-step` uses the same dialect: its
    backward, gradient-accumulation and optimizer ops are ordinary `nn` ops.
  }];
  let cppNamespace = "::vram::nn";
  let useDefaultAttributePrinterParser = 1;
  // The step's discardable attributes (nn.mode, nn.model, ...) are verified.
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Discardable attributes the front ends and the step builder leave on
    /// modules and functions.
    static constexpr ::llvm::StringLiteral kModeAttrName = "nn.mode";
    static constexpr ::llvm::StringLiteral kPersistentGradsAttrName =
        "nn.persistent_grads";
    /// A training step that accumulates gradients over this many
    /// micro-batches before its optimizer update (vram-build-step
    /// grad-accum=N; with N > 1 the step also has nn.persistent_grads).
    static constexpr ::llvm::StringLiteral kGradAccumAttrName =
        "nn.grad_accum";
    /// A training step whose optimizer runs inside backward, one
    /// parameter at a time as its gradient is accumulated
    /// (vram-build-step optimizer-in-backward).
    static constexpr ::llvm::StringLiteral kOptimizerInBackwardAttrName =
        "nn.optimizer_in_backward";
    static constexpr ::llvm::StringLiteral kModelAttrName = "nn.model";
    static constexpr ::llvm::StringLiteral kBatchAttrName = "nn.batch";
    static constexpr ::llvm::StringLiteral kSequenceLogitsAttrName =
        "nn.sequence_logits";
    /// The per-token logits are a masked LM's (BertForMaskedLM): the
    /// model's own loss (causal_lm: the model called with labels) is then
    /// its CrossEntropyLoss on the logits as they are, not
    /// ForCausalLMLoss's float32 copy.
    static constexpr ::llvm::StringLiteral kMaskedLmAttrName = "nn.masked_lm";
    /// The per-token logits are an encoder-decoder LM's over its decoder's
    /// tokens (T5ForConditionalGeneration: [B, T', V]): the model's own
    /// loss is its CrossEntropyLoss on lm_logits.view(-1, V) as they are.
    static constexpr ::llvm::StringLiteral kSeq2SeqLmAttrName =
        "nn.seq2seq_lm";
    /// The per-token logits are a token classifier's
    /// (BertForTokenClassification: [B, T, labels]): the model's own loss is
    /// its CrossEntropyLoss on them as they are, as a masked LM's.
    static constexpr ::llvm::StringLiteral kTokenClassifierAttrName =
        "nn.token_classifier";
    /// The model is a sequence classifier (BertForSequenceClassification):
    /// its logits are [B, labels], and its own loss (causal_lm) the
    /// cross-entropy over them as they are.
    static constexpr ::llvm::StringLiteral kSequenceClassifierAttrName =
        "nn.sequence_classifier";
    /// The PyTorch release and device a built step models ("1.13", "cpu").
    static constexpr ::llvm::StringLiteral kTorchVersionAttrName =
        "nn.torch_version";
    static constexpr ::llvm::StringLiteral kDeviceAttrName = "nn.device";
    /// What the step is, set by the pass that made it so; the report
    /// reads these, never the flags. `nn.optimizer`
    /// (#nn.optimizer_config, vram-build-step) on a training step;
    /// `nn.lora` (#nn.lora, vram-lora) on the model it adapted and the step
    /// built from it; `nn.checkpoint` (an array of the non-empty module
    /// patterns vram-checkpoint applied, in order) on a training step.
    static constexpr ::llvm::StringLiteral kOptimizerAttrName = "nn.optimizer";
    static constexpr ::llvm::StringLiteral kLoraAttrName = "nn.lora";
    static constexpr ::llvm::StringLiteral kQuantizeAttrName = "nn.quantize";
    /// `nn.ema` (unit) on a training step with an EMA model (vram-build-step
    /// ema).
    static constexpr ::llvm::StringLiteral kEmaAttrName = "nn.ema";
    /// `nn.keep_output` (unit) on a training step whose loop holds the
    /// model's output until the step ends (vram-build-step keep-output;
    /// the nn.keep_alive before its return does the holding).
    static constexpr ::llvm::StringLiteral kKeepOutputAttrName =
        "nn.keep_output";
    /// `nn.max_new_tokens` (i64 >= 1) on a generation program (a forward
    /// with nn.next_token, made by its front end for --mode=generate) and
    /// the step built from it: the tokens GenerationMixin.generate makes.
    static constexpr ::llvm::StringLiteral kMaxNewTokensAttrName =
        "nn.max_new_tokens";
    /// `nn.num_beams` (i64 >= 2) on a generation program made for beam
    /// search (GenerationMixin._beam_search): its forwards run on batch x
    /// beams rows.
    static constexpr ::llvm::StringLiteral kNumBeamsAttrName =
        "nn.num_beams";
    /// `nn.tensor_parallel` (i64 >= 2) on a forward its front end built as
    /// one rank's of that many tensor-parallel ranks (the column- and
    /// row-parallel linears' shards, nn.all_reduce, nn.all_reduce_grad),
    /// and the step built from it.
    static constexpr ::llvm::StringLiteral kTensorParallelAttrName =
        "nn.tensor_parallel";
    /// `nn.packed_tokens` (i64) on a language model's forward whose batch
    /// is one row packing several sequences of that many tokens in all
    /// (--tokens), and the step built from it.
    static constexpr ::llvm::StringLiteral kPackedTokensAttrName =
        "nn.packed_tokens";
    /// `nn.padded` (unit) on a language model's forward whose rows are
    /// padded and come with their attention_mask (--padded), and the step
    /// built from it.
    static constexpr ::llvm::StringLiteral kPaddedAttrName = "nn.padded";
    static constexpr ::llvm::StringLiteral kCheckpointAttrName =
        "nn.checkpoint";
    /// How the ranks of a multi-GPU job share the step (#nn.parallel,
    /// vram-parallel) on `@step`.
    static constexpr ::llvm::StringLiteral kParallelAttrName = "nn.parallel";
    /// On a ZeRO-1/2 or pipeline-parallel `@step`: the exact peak of every
    /// data-parallel rank's (pipeline stage's) step (array<i64>, one per
    /// rank), which vram-parallel built and analysed to pick the worst
    /// rank's.
    static constexpr ::llvm::StringLiteral kRankPeaksAttrName =
        "nn.rank_peaks";
    /// On an nn.param of a sharded step: the parameter exists only as its
    /// shards (nn.shard) and the unsharded copies the step gathers; the
    /// nn.param itself holds no memory.
    static constexpr ::llvm::StringLiteral kShardedAttrName = "nn.sharded";
    /// On the nn.release that ends a training step's gradients:
    /// optimizer.zero_grad(set_to_none=True) of the next iteration (or
    /// after step(), as transformers' Trainer calls it) drops .grad, so the
    /// gradients live through the whole update, not only until their own
    /// parameter's (a for-loop optimizer). A pass that changes which
    /// tensors are the gradients updates or removes it.
    static constexpr ::llvm::StringLiteral kZeroGradAttrName = "nn.zero_grad";
    /// On an nn.param of a ZeRO step: the parameter is a view into the flat
    /// buffer (nn.zero_flat_params) and holds no memory of its own.
    static constexpr ::llvm::StringLiteral kFlatParamAttrName =
        "nn.flat_param";
    /// The phase of a step op that is not its kind's (an op recomputed by
    /// activation checkpointing: `nn.phase = #nn<phase recompute>`).
    static constexpr ::llvm::StringLiteral kPhaseAttrName = "nn.phase";
    /// On a forward op the model's code runs in float32 whatever the
    /// model's dtype (transformers' RMSNorm: `x.to(torch.float32)`, then
    /// `.to(input_dtype)`): vram-precision keeps these ops in f32, casting
    /// their low-precision operands up and their results back down.
    static constexpr ::llvm::StringLiteral kFloat32AttrName = "nn.float32";
    /// On a forward op the model's code runs on operands of mixed dtypes
    /// without casting them (PyTorch's type promotion: Mixtral's bf16
    /// expert rows times their float32 routing weights are float32):
    /// vram-precision casts none of its operands; a float32 result is cast
    /// down where a low-precision op reads it, as an nn.float32 op's.
    static constexpr ::llvm::StringLiteral kPromoteAttrName = "nn.promote";
    /// On an nn.linear: F.linear inside a module of the model's own
    /// (Mixtral's and Qwen3-MoE's router), not a torch.nn.Linear:
    /// bitsandbytes' and peft's module replacement (--quantize, --lora)
    /// leave it as it is.
    static constexpr ::llvm::StringLiteral kFunctionalAttrName =
        "nn.functional";
    /// The model runs under torch.autocast with this dtype (f16 or bf16).
    static constexpr ::llvm::StringLiteral kAutocastAttrName = "nn.autocast";
    /// The cuDNN convolution workspace a CUDA step assumes ("im2col").
    static constexpr ::llvm::StringLiteral kCudnnWorkspaceAttrName =
        "nn.cudnn_workspace";
    /// On an nn.backward (one entry per output gradient) or an
    /// nn.accumulate_grad (the accumulated gradient, the addend): the inverse
    /// views a gradient passed through on its way back, in order. A
    /// DenseI64ArrayAttr permutes (result dim j = operand dim p[j]), a
    /// TypeAttr reshapes; applied to the gradient they give the layout of
    /// the forward value it is the gradient of. Set by vram-build-step when a
    /// chain transposes (a reshape alone follows from the types).
    static constexpr ::llvm::StringLiteral kGradViewsAttrName =
        "nn.grad_views";
    /// On an op that a module's CPU kernels decompose into (torch.nn.GRU
    /// cell by cell): the module, whose CUDA kernel (cuDNN's fused RNN) is
    /// another computation; vram-build-step rejects the op on CUDA.
    static constexpr ::llvm::StringLiteral kCpuDecompositionAttrName =
        "nn.cpu_decomposition";
  }];
}

#endif // VRAM_DIALECT_NN_NNDIALECT_TD
