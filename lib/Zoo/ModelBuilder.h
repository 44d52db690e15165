//===- ModelBuilder.h - PyTorch-like layer builders for the zoo -*- C++ -*-===//
//
// A thin layer over OpBuilder so that the zoo's model definitions read like
// their PyTorch sources: `conv(x, "layer1.0.conv1", 64, 3, 1, 1)` creates the
// parameter `layer1.0.conv1.weight` and the nn.conv2d that uses it, both
// located at the layer `layer1.0.conv1`.
//
// Every method takes the name of the layer (module) the op belongs to. Layers
// with parameters name them `<layer>.<leaf>` as in a PyTorch state_dict.
// Functional calls (torch.flatten, `+`, views) are named after the module
// whose forward makes them plus a short suffix, e.g. `layer1.0.add`.
//
// This header is private to lib/Zoo.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_LIB_ZOO_MODELBUILDER_H
#define VRAM_LIB_ZOO_MODELBUILDER_H

#include "vram/Dialect/NN/NNInterfaces.h"
#include "vram/Dialect/NN/NNOps.h"
#include "vram/Zoo/Zoo.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <memory>
#include <optional>
#include <vector>

namespace vram::zoo {

class ModelBuilder;

/// The KV cache a generation program threads through a decoder's forward
/// passes, as transformers' DynamicCache holds it: per layer, the keys and
/// values cached so far (null before the prefill's update).
struct KvCache {
  /// False for the DynamicCache a training forward builds (use_cache): the
  /// same copies of keys and values, but the logits of every position are
  /// kept and nothing is generated.
  bool generation = true;
  /// transformers' StaticCache (cache_implementation="static"): each layer's
  /// keys and values are buffers of `totalTokens` positions, allocated by
  /// the layer's first update and written in place.
  bool isStatic = false;
  /// A paged cache as vLLM allocates it (--cache-implementation=paged; 0:
  /// none): each layer's keys and values are buffers of whole blocks of
  /// `blockSize` positions, enough for `totalTokens`, allocated by the
  /// layer's first update (vLLM's pool exists before the request) and
  /// written in place; attention reads the positions written so far.
  int64_t blockSize = 0;
  /// The position of the first token the forward being built reads: 0 in
  /// the prefill, the number of cached tokens in a decode step.
  int64_t position = 0;
  /// Tokens the generation reaches (prompt + new tokens - 1, the last one
  /// never being read back).
  int64_t totalTokens = 0;
  std::vector<mlir::Value> keys, values;
  /// A static cache's per-layer cumulative_length (0-d int64), made with the
  /// cache and alive as long as it is.
  std::vector<mlir::Value> counters;
  /// An encoder-decoder's generation (EncoderDecoderCache): the encoder's
  /// output, which the prefill computes and generate() holds to the end,
  /// and the cross-attention's cache, copied from its keys and values by
  /// the prefill and read by every decode step. This cache is the
  /// self-attention's.
  mlir::Value encoderOutput;
  std::unique_ptr<KvCache> cross;

  /// Each layer's sliding window (DynamicSlidingWindowLayer), if it has
  /// one; recorded by its first update.
  std::vector<std::optional<int64_t>> windows;

  bool isDecoding() const { return position > 0; }
  bool isPaged() const { return blockSize > 0; }
  /// Whether the keys and values are buffers written in place.
  bool isBuffered() const { return isStatic || isPaged(); }
  /// A buffered cache's positions: a static cache's `totalTokens`, a paged
  /// cache's whole blocks.
  int64_t capacity() const {
    return isPaged() ? llvm::divideCeil(totalTokens, blockSize) * blockSize
                     : totalTokens;
  }
  /// The positions a forward over `tokens` new tokens attends to: a static
  /// cache's every position, else the cached ones and the new; a
  /// generation's sliding-window layer's decode step reads at most the
  /// window's (the last window - 1 cached and the new).
  int64_t keyLength(int64_t tokens,
                    std::optional<int64_t> window = std::nullopt) const {
    if (isStatic)
      return totalTokens;
    if (window && generation && isDecoding())
      return std::min(position, *window - 1) + tokens;
    return position + tokens;
  }
  /// DynamicLayer.update of layer `index` with its new keys and values
  /// (after rotary): the cached keys and values attention reads. With a
  /// `window`, a generation's DynamicSlidingWindowLayer.update: the cat of
  /// the last window - 1 cached positions (a view) and the new ones.
  std::pair<mlir::Value, mlir::Value>
  update(ModelBuilder &mb, size_t index, mlir::Value k, mlir::Value v,
         llvm::StringRef layer, std::optional<int64_t> window = std::nullopt);
};

/// Shape options after defaults were applied and validated.
struct ModelConfig {
  int64_t batch;
  int64_t imageSize;  ///< vision models only
  int64_t seq;        ///< language models only
  int64_t numClasses; ///< vision models only
  /// The PyTorch whose implementation choices the model follows.
  vram::nn::TorchTarget target;
  /// The attention of models built from a CausalLMConfig.
  vram::nn::AttentionImplementation attention =
      vram::nn::AttentionImplementation::Sdpa;
  /// Tokens to generate (--mode=generate; `seq` is the prompt): 0 builds
  /// the model's forward, else its generation program.
  int64_t maxNewTokens = 0;
  /// An encoder-decoder (T5): generation encodes the prompt and decodes
  /// from one start token, so the self-attention's cache holds the new
  /// tokens only.
  bool encoderDecoder = false;
  /// Generation with transformers' StaticCache (cache_implementation=
  /// "static") instead of its DynamicCache.
  bool staticCache = false;
  /// Generation with a paged cache in blocks of this many positions, as
  /// vLLM allocates it (--cache-implementation=paged; 0: none).
  int64_t kvBlockSize = 0;
  /// Generation by beam search with this many beams (1: none).
  int64_t numBeams = 1;
  /// While a generation program is built: the cache the decoder's forward
  /// reads and updates; it then computes logits for the last position only
  /// (generate's logits_to_keep=1).
  KvCache *kvCache = nullptr;
  /// A training forward of transformers' decoders with use_cache on (their
  /// configs' default): each layer's keys and values are copied into a
  /// DynamicCache, whose copies attention reads (and saves for backward).
  bool useCache = false;
  /// --parallel=tp=N: the model is one rank's of N tensor-parallel ranks
  /// (models from a CausalLMConfig of the LLaMA layout).
  int64_t tensorParallel = 1;
  /// With tensorParallel > 1: lm_head too is column-parallel over the
  /// vocabulary, its logits all-gathered (transformers' tp_plan="auto",
  /// "colwise_gather_output"); false: it stays whole (the plan of the
  /// decoder layers alone, --tp-plan=layers).
  bool tensorParallelLmHead = true;
  /// With tensorParallel > 1: model.embed_tokens holds vocab / N rows
  /// (RowwiseParallel(input_layouts=Replicate()), --tp-plan=vocab): a
  /// masked lookup whose partial sums are all-reduced.
  bool tensorParallelEmbedding = false;
  /// With tensorParallel > 1: sequence parallelism (torchtitan's plan): the
  /// norms and residual adds run on this rank's T / N positions, gathered
  /// before the attention, the MLP and lm_head, reduce-scattered after
  /// o_proj and down_proj.
  bool sequenceParallel = false;
  /// Vision models: the image's channels.
  int64_t channels = 3;
  /// Encoder-decoder models: the decoder's tokens.
  int64_t decoderSeq = 0;
  /// Language models: the batch is one packed row of `seq` tokens
  /// (--tokens): several sequences whose position_ids restart at each.
  bool packed = false;
  /// Language models: the rows are padded to `seq` and the forward takes
  /// their attention_mask (--padded).
  bool padded = false;
  /// Liger-Kernel's kernels in place of transformers' modules (LLaMA
  /// layout, training).
  LigerKernels liger;
  /// Generation: greedy search, or sampling with these warpers.
  Sampling sampling;
};

class ModelBuilder {
public:
  /// Builds at the insertion point of `builder`, in fp32.
  explicit ModelBuilder(mlir::OpBuilder &builder);

  mlir::MLIRContext *getContext() { return builder.getContext(); }
  mlir::OpBuilder &getBuilder() { return builder; }

  /// The location of everything a layer creates: `loc("layer1.0.conv1")`.
  mlir::Location loc(const llvm::Twine &layer);

  static llvm::ArrayRef<int64_t> shapeOf(mlir::Value value);
  mlir::RankedTensorType floatTensor(llvm::ArrayRef<int64_t> shape);

  //===--- Parameters and buffers -----------------------------------------===//

  /// A trainable `nn.param "<layer>.<leaf>"` (just `<leaf>` for a parameter
  /// of the root module, when `layer` is empty). Parameters and buffers are
  /// made once: asking for a name again (a second forward pass of a
  /// generation program) returns the same tensor.
  mlir::Value param(llvm::StringRef layer, llvm::StringRef leaf,
                    llvm::ArrayRef<int64_t> shape);
  /// Moves the parameters made so far under `module` into the order the
  /// module registers them (model.parameters(), which optimizers and
  /// DeepSpeed's flat buffers follow): by the first entry of `order` naming
  /// their submodule (`self_attn.q_proj`), the rest after them, otherwise
  /// as made. The builders make a parameter where it is first used.
  void orderParams(llvm::StringRef module,
                   llvm::ArrayRef<llvm::StringRef> order);
  /// An fp32 `nn.buffer "<layer>.<leaf>"`, or of `elementType` if given.
  mlir::Value buffer(llvm::StringRef layer, llvm::StringRef leaf,
                     llvm::ArrayRef<int64_t> shape,
                     mlir::Type elementType = nullptr);

  //===--- Layers with parameters -----------------------------------------===//

  /// nn.Conv2d(cin, cout, k, stride, pad, groups=groups, bias=bias).
  mlir::Value conv(mlir::Value x, llvm::StringRef layer, int64_t cout,
                   int64_t kernel, int64_t stride = 1, int64_t pad = 0,
                   int64_t groups = 1, bool bias = false);
  /// nn.BatchNorm2d(C): weight, bias; running_mean, running_var and the int64
  /// num_batches_tracked counter as buffers, as in PyTorch's state_dict.
  mlir::Value batchNorm(mlir::Value x, llvm::StringRef layer,
                        double eps = 1e-5);
  /// nn.Linear(in, out, bias).
  mlir::Value linear(mlir::Value x, llvm::StringRef layer, int64_t out,
                     bool bias = true);
  /// F.linear with given weight [out, in] and optional bias (tied weights,
  /// packed projections named differently from `<layer>.weight`).
  mlir::Value linear(mlir::Value x, llvm::StringRef layer, mlir::Value weight,
                     mlir::Value bias);
  /// nn.LayerNorm(x.shape[-1], eps) with weight and bias.
  mlir::Value layerNorm(mlir::Value x, llvm::StringRef layer,
                        double eps = 1e-5);
  /// RMSNorm(x.shape[-1], eps) with a weight and no bias (LlamaRMSNorm).
  mlir::Value rmsNorm(mlir::Value x, llvm::StringRef layer, double eps = 1e-6);
  /// nn.Embedding(num, dim) applied to integer ids.
  /// Hugging Face's LlamaRMSNorm as it runs, decomposed: x.pow(2).mean(-1),
  /// + eps, rsqrt, x * that, weight * that. It keeps more for backward than
  /// a fused rms_norm (the normalized x, and in torch 1.13 mean's input).
  /// With `unitOffset`, Gemma's: the normalized x times (1 + weight).
  mlir::Value decomposedRmsNorm(mlir::Value x, llvm::StringRef layer,
                                double eps, bool unitOffset = false);
  /// Liger-Kernel's LigerRMSNorm (Llama casting mode, in place backward):
  /// one kernel, keeping its input and a float32 inverse RMS per row.
  mlir::Value ligerRmsNorm(mlir::Value x, llvm::StringRef layer, double eps,
                           int64_t partialRows);
  /// transformers' T5LayerNorm: the variance of x.to(float32), then
  /// `x * torch.rsqrt(variance + eps)` on the input as it is (float32 when
  /// the input is bf16 or fp16: the product promotes), cast to the weight's
  /// dtype and scaled by the weight.
  mlir::Value t5LayerNorm(mlir::Value x, llvm::StringRef layer, double eps);
  mlir::Value embedding(mlir::Value ids, llvm::StringRef layer, int64_t num,
                        int64_t dim);
  /// F.embedding with a given (possibly tied) weight.
  mlir::Value embedding(mlir::Value ids, llvm::StringRef layer,
                        mlir::Value weight);

  //===--- Activations, elementwise, pooling ------------------------------===//

  mlir::Value relu(mlir::Value x, llvm::StringRef layer, bool inplace = true);
  mlir::Value relu6(mlir::Value x, llvm::StringRef layer, bool inplace = true);
  mlir::Value gelu(mlir::Value x, llvm::StringRef layer,
                   vram::nn::GeluApproximation approximate =
                       vram::nn::GeluApproximation::None);
  /// transformers' NewGELUActivation ("gelu_new", GPT-2's), written out as
  /// it runs: each elementwise op a tensor, kept as autograd keeps them.
  mlir::Value geluNew(mlir::Value x, llvm::StringRef layer);
  mlir::Value silu(mlir::Value x, llvm::StringRef layer, bool inplace = false);
  /// nn.Dropout(p); p = 0 is the identity in PyTorch and creates nothing.
  mlir::Value dropout(mlir::Value x, llvm::StringRef layer, double p);
  /// `lhs + rhs`, or `lhs += rhs` when `inplace`.
  mlir::Value add(mlir::Value lhs, mlir::Value rhs, llvm::StringRef layer,
                  bool inplace = false);
  mlir::Value mul(mlir::Value lhs, mlir::Value rhs, llvm::StringRef layer);
  /// LigerSwiGLUMLP's product silu(gate) * up, one kernel.
  mlir::Value ligerSwiglu(mlir::Value gate, mlir::Value up,
                          llvm::StringRef layer);
  mlir::Value div(mlir::Value lhs, mlir::Value rhs, llvm::StringRef layer,
                  bool inplace = false);
  mlir::Value tanh(mlir::Value x, llvm::StringRef layer);
  mlir::Value sigmoid(mlir::Value x, llvm::StringRef layer);
  /// A copy (Tensor.contiguous of a strided view, or torch.cat of one
  /// tensor): a new tensor whose gradient is the output's.
  mlir::Value contiguous(mlir::Value x, llvm::StringRef layer);
  /// Gemma 2's soft capping, as its modeling code writes it:
  /// `tanh(x / cap) * cap` (three tensors; tanh keeps its result).
  mlir::Value softcap(mlir::Value x, double cap, llvm::StringRef layer);
  mlir::Value maxPool(mlir::Value x, llvm::StringRef layer, int64_t kernel,
                      int64_t stride, int64_t pad = 0);
  mlir::Value adaptiveAvgPool(mlir::Value x, llvm::StringRef layer,
                              int64_t outH, int64_t outW);
  /// F.scaled_dot_product_attention; `enableGqa` for k and v with fewer
  /// heads than q, `dropoutP` its dropout in training, `mask` its attn_mask
  /// (added to the scores), `scale` its scale (unset: head_dim ** -0.5).
  mlir::Value attention(mlir::Value q, mlir::Value k, mlir::Value v,
                        llvm::StringRef layer, bool causal,
                        vram::nn::AttentionBackend backend,
                        bool enableGqa = false, double dropoutP = 0.0,
                        mlir::Value mask = nullptr,
                        std::optional<double> scale = std::nullopt);
  /// Attention written out, as gpt_mini's reference and torch 1.13's
  /// nn.MultiheadAttention run it:
  ///
  ///   att = (q @ k.transpose(-2, -1)) * (1 / sqrt(head_dim))
  ///   att = att.masked_fill(~torch.tril(ones(L, S, dtype=bool)), -inf)  #
  ///   causal y = att.softmax(-1) @ v
  ///
  /// On [B, H, L, D] views torch.matmul folds the batch dimensions, which
  /// copies strided q, k^T and v (vram-insert-contiguous makes the copies
  /// explicit), and the products keep the copies and the L x S weights. The
  /// scale and the mask are constants the forward creates in every block.
  /// transformers' eager_attention_forward over [B, H, T, D] heads:
  /// softmax(q k^T * scaling) v with the probabilities kept (the causal mask
  /// is added to the scores: a transient tensor, not modelled), the scores
  /// soft-capped when `softcap` is set (Gemma 2), dropout on the
  /// probabilities when training. The softmax runs in float32
  /// (softmax(..., dtype=torch.float32).to(query.dtype)): in a bf16 or fp16
  /// model it keeps float32 probabilities for backward besides their copy
  /// in the model's dtype that the matmul keeps (measured on an H200:
  /// Llama-3-8B bf16 LoRA, eager, 2,048 tokens keeps 32 layers x 32 heads x
  /// 2,048^2 x 4 bytes more than the model without them did).
  /// `softmaxInFloat32` false: the softmax in the scores' dtype (BERT's
  /// eager_attention_forward). `additiveMask`, when given, is added to the
  /// scaled scores (an encoder's padding mask: 0 or the dtype's min).
  mlir::Value eagerAttention(mlir::Value q, mlir::Value k, mlir::Value v,
                             llvm::StringRef layer, double scaling,
                             std::optional<double> softcap, double dropout,
                             bool softmaxInFloat32 = true,
                             mlir::Value additiveMask = {});
  mlir::Value matmulAttention(mlir::Value q, mlir::Value k, mlir::Value v,
                              llvm::StringRef layer, bool causal);
  mlir::Value concat(mlir::ValueRange inputs, llvm::StringRef layer,
                     int64_t dim);
  /// torch.matmul (batch dims broadcast).
  mlir::Value matmul(mlir::Value lhs, mlir::Value rhs, llvm::StringRef layer);
  /// F.softmax(x, dim).
  mlir::Value softmax(mlir::Value x, llvm::StringRef layer, int64_t dim);
  /// torch.sum(x, dims, keepdim).
  mlir::Value sum(mlir::Value x, llvm::StringRef layer,
                  llvm::ArrayRef<int64_t> dims, bool keepdim);
  /// torch.topk(x, k, dim): the values and their int64 indices.
  std::pair<mlir::Value, mlir::Value> topk(mlir::Value x, llvm::StringRef layer,
                                           int64_t k, int64_t dim = -1);
  /// The (token, expert) pairs of the router's [T, k] indices grouped by
  /// expert (nn.moe_dispatch).
  struct MoeDispatch {
    mlir::Value sorted, perm, tokenIndex, histogram, counts, offsets, inverse;
  };
  MoeDispatch moeDispatch(mlir::Value indices, int64_t experts,
                          llvm::StringRef layer);
  /// F.grouped_mm(x, weight.transpose(-2, -1), offs=offsets) for experts'
  /// weights [E, out, in].
  mlir::Value groupedMm(mlir::Value x, mlir::Value weight, mlir::Value offsets,
                        llvm::StringRef layer);
  /// Marks the op that defines `v` as computing in float32 whatever the
  /// model's dtype (nn.float32: vram-precision casts its low-precision
  /// operands up and its result back down where a low-precision op reads
  /// it); an identity in an fp32 model. Returns `v`.
  mlir::Value inFloat32(mlir::Value v);
  /// Marks the nn.linear that defines `v` as an F.linear in a module of the
  /// model's own (nn.functional), which --quantize and --lora leave.
  mlir::Value functional(mlir::Value v);
  /// Marks the op that defines `v` as computing on its operands' dtypes as
  /// they are, a bf16 and a float32 one giving float32 (nn.promote);
  /// an identity in an fp32 model. Returns `v`.
  mlir::Value promoting(mlir::Value v);
  /// `x.masked_fill(mask, value)` with an i1 mask that broadcasts to x.
  mlir::Value maskedFill(mlir::Value x, mlir::Value mask, double value,
                         llvm::StringRef layer);

  //===--- Constants computed in forward ----------------------------------===//

  /// `torch.arange(n)`: an int64 [n] nn.constant.
  mlir::Value arange(int64_t n, llvm::StringRef layer);
  /// Position ids `offset + t` for each of `batch` rows of `seq` tokens: an
  /// int64 [batch, seq] nn.constant.
  mlir::Value positionIds(int64_t batch, int64_t seq, int64_t offset,
                          llvm::StringRef layer);
  /// An int64 tensor of `shape` filled with `value` (nn.constant), as
  /// computed in forward.
  mlir::Value intConstant(llvm::ArrayRef<int64_t> shape, int64_t value,
                          llvm::StringRef layer);
  /// A float tensor of `shape` filled with `value` in the model's dtype
  /// (torch.full(shape, value, dtype=query.dtype)), as computed in forward.
  mlir::Value floatConstant(llvm::ArrayRef<int64_t> shape, double value,
                            llvm::StringRef layer);
  /// A 0-d fp32 tensor `torch.tensor(value)` (nn.constant).
  mlir::Value scalar(double value, llvm::StringRef layer);
  /// A Python number in arithmetic (`0.5 * x`): a wrapped_number
  /// nn.constant, no device memory.
  mlir::Value number(double value, llvm::StringRef layer);
  /// A bool tensor whose values nothing reads (a mask that is built and
  /// held but unused): a splat.
  mlir::Value boolTensor(llvm::ArrayRef<int64_t> shape, llvm::StringRef layer);
  /// An int64 tensor whose values nothing reads (generate()'s token ids and
  /// attention_mask, held between forwards): a splat.
  mlir::Value int64Tensor(llvm::ArrayRef<int64_t> shape, llvm::StringRef layer);
  /// A bool attention mask transformers builds from what a batch holds
  /// (padding, the boundaries of packed sequences, a sliding window): the
  /// sizes do not depend on its values, which are a splat true (attend
  /// everywhere), so an execution (--validate) computes unmasked attention.
  mlir::Value attentionMask(llvm::ArrayRef<int64_t> shape,
                            llvm::StringRef layer);
  /// A [rows, cols] bool tensor, true where `col > row + diagonal` (the
  /// complement of `torch.tril(ones, diagonal)`): a causal attention mask.
  mlir::Value upperTriangleMask(int64_t rows, int64_t cols,
                                llvm::StringRef layer, int64_t diagonal = 0);

  //===--- Views ----------------------------------------------------------===//

  mlir::Value flatten(mlir::Value x, llvm::StringRef layer,
                      int64_t startDim = 1);
  mlir::Value reshape(mlir::Value x, llvm::StringRef layer,
                      llvm::ArrayRef<int64_t> shape);
  mlir::Value transpose(mlir::Value x, llvm::StringRef layer, int64_t dim0,
                        int64_t dim1);
  mlir::Value permute(mlir::Value x, llvm::StringRef layer,
                      llvm::ArrayRef<int64_t> dims);
  mlir::Value slice(mlir::Value x, llvm::StringRef layer, int64_t dim,
                    int64_t start, int64_t end);
  /// x.split(sizes, dim) (or chunk): views whose gradients one backward
  /// node concatenates.
  llvm::SmallVector<mlir::Value> split(mlir::Value x, llvm::StringRef layer,
                                       int64_t dim,
                                       llvm::ArrayRef<int64_t> sizes);
  mlir::Value expand(mlir::Value x, llvm::StringRef layer,
                     llvm::ArrayRef<int64_t> shape);

  //===--- Multi-head attention helpers -----------------------------------===//

  /// [B, T, H*D] -> [B, H, T, D]: `x.view(B, T, H, D).transpose(1, 2)`.
  /// The rotary cos/sin tables transformers' *RotaryEmbedding.forward
  /// computes in every forward from its `<prefix>inv_freq` buffer (under
  /// `layer`): freqs = positions x inv_freq [1, T, D/2], emb = cat(freqs,
  /// freqs), cos and sin of emb [1, T, D] each. Only their sizes matter:
  /// each is one new tensor from the buffer. With position_ids per row
  /// (generate() passes [B, T] ones), `batch` rows: [B, T, D] each, viewed
  /// as [B, 1, T, D] to broadcast over the heads.
  std::pair<mlir::Value, mlir::Value>
  rotaryTables(int64_t seq, int64_t rotaryDim, llvm::StringRef layer,
               llvm::StringRef prefix = "", int64_t batch = 1);
  /// apply_rotary_pos_emb on q or k [B, H, T, D]: x * cos + rotate_half(x) *
  /// sin over the first `rotaryDim` of each head; with `concatenate` (Phi-3,
  /// GPT-NeoX) the rest is concatenated back (torch.cat: a new tensor even
  /// when nothing is left).
  /// liger_rotary_pos_emb on q and k (nn.liger_rope); `qGradInPlace` and
  /// `kGradInPlace`: their gradients come back in their layout.
  std::pair<mlir::Value, mlir::Value>
  ligerRope(mlir::Value q, mlir::Value k, mlir::Value cos, mlir::Value sin,
            llvm::StringRef layer, bool qGradInPlace, bool kGradInPlace);
  mlir::Value applyRotary(mlir::Value x, mlir::Value cos, mlir::Value sin,
                          int64_t rotaryDim, bool concatenate,
                          llvm::StringRef layer);
  mlir::Value splitHeads(mlir::Value x, llvm::StringRef layer, int64_t heads);
  /// [B, H, T, D] -> [B, T, H*D]: `x.transpose(1, 2).reshape(B, T, H*D)`.
  mlir::Value mergeHeads(mlir::Value x, llvm::StringRef layer);

  /// nn.keep_alive: Python frames hold `values` until here (a module's
  /// locals until its forward returns, its arguments while it runs).
  /// `modelFrame`: the model's own forward holds them, until after the loss
  /// it computes in training.
  void keepAlive(mlir::ValueRange values, llvm::StringRef layer,
                 bool modelFrame = false);

  /// Tensor parallelism over `ranks`: a row-parallel linear's partial sums
  /// all-reduced (nn.all_reduce), a column-parallel linear's input whose
  /// gradient is all-reduced (nn.all_reduce_grad).
  mlir::Value allReduce(mlir::Value x, llvm::StringRef layer, int64_t ranks);
  /// A column-parallel linear's output shards gathered along the last dim
  /// into a new tensor (nn.all_gather_output).
  mlir::Value allGatherOutput(mlir::Value x, llvm::StringRef layer,
                              int64_t ranks);
  /// One rank's lookup in its rows of a vocabulary-parallel embedding
  /// (nn.vocab_parallel_embedding), all-reduced.
  mlir::Value vocabParallelEmbedding(mlir::Value ids, llvm::StringRef layer,
                                     mlir::Value weight, int64_t ranks);
  /// This rank's columns of a replicated input, cloned (nn.split_input).
  mlir::Value splitInput(mlir::Value x, llvm::StringRef layer, int64_t ranks);

  /// Sequence parallelism over `ranks` (dim 1 of [B, T, H]): this rank's
  /// positions of a replicated tensor, cloned (nn.split_input); the
  /// positions of every rank gathered into a new tensor
  /// (nn.all_gather_output; `scatterGrad`: its gradient, a partial sum, is
  /// reduce-scattered back); a row-parallel linear's partial sums
  /// reduce-scattered into this rank's positions (nn.reduce_scatter_output).
  mlir::Value splitSequence(mlir::Value x, llvm::StringRef layer,
                            int64_t ranks);
  mlir::Value gatherSequence(mlir::Value x, llvm::StringRef layer,
                             int64_t ranks, bool scatterGrad = false);
  mlir::Value reduceScatterSequence(mlir::Value x, llvm::StringRef layer,
                                    int64_t ranks);
  mlir::Value allReduceGrad(mlir::Value x, llvm::StringRef layer,
                            int64_t ranks);

  //===--- Generation -----------------------------------------------------===//

  /// nn.kv_cache_update: `past` (null: the cache's first update) with
  /// `states` appended.
  mlir::Value kvCacheUpdate(mlir::Value past, mlir::Value states,
                            llvm::StringRef layer);
  /// nn.kv_cache_update {static_cache}: `states` written in place into the
  /// buffer `past`, or (null `past`) into a new buffer of `capacity`
  /// positions; a paged cache's (`blockSize` > 0) in blocks of that many.
  mlir::Value staticCacheUpdate(mlir::Value past, mlir::Value states,
                                int64_t capacity, llvm::StringRef layer,
                                int64_t blockSize = 0);
  /// nn.kv_cache_reorder: beam search's index_select of `cache` by beam.
  mlir::Value kvCacheReorder(mlir::Value cache, llvm::StringRef layer);
  /// A 0-d int64 tensor (a counter such as StaticLayer.cumulative_length).
  mlir::Value int64Scalar(llvm::StringRef layer);
  /// nn.kv_cache_past: `cache` after the decode steps up to `tokens`.
  /// With `window`, a sliding-window layer's: the storage of its last
  /// update, at most `window` tokens.
  mlir::Value kvCachePast(mlir::Value cache, int64_t tokens,
                          llvm::StringRef layer,
                          std::optional<int64_t> window = std::nullopt);
  /// nn.next_token: the float32 scores, the next input ids [B, 1] and
  /// what the step keeps until the next one (its results after the
  /// tokens), given the previous step's (`previous`) it replaces and the
  /// length of the sequences so far (`inputLength`, which a repetition
  /// penalty reads).
  vram::nn::NextTokenOp nextToken(mlir::Value logits, llvm::StringRef layer,
                                  mlir::ValueRange previous,
                                  const Sampling &sampling,
                                  int64_t inputLength);

private:
  std::string qualify(llvm::StringRef layer, llvm::StringRef leaf);
  /// The RMS norms' float32 `torch.rsqrt(x.to(float32).pow(2).mean(-1,
  /// keepdim=True) + eps)`, [..., 1].
  mlir::Value inverseRms(mlir::Value x, llvm::StringRef layer, double eps);
  /// Parameters and buffers made so far, by qualified name.
  llvm::StringMap<mlir::Value> stateByName;

  mlir::OpBuilder &builder;
  mlir::Type f32;
};

} // namespace vram::zoo

#endif // VRAM_LIB_ZOO_MODELBUILDER_H
