"""Tensor parallelism under torch 2.x on the CPU (issue 24, --parallel=tp=N).

Each rank of a gloo process group on this machine builds transformers'
LlamaForCausalLM (sdpa) and applies PyTorch's tensor-parallel plan to every
decoder layer, as torch's tensor-parallel tutorial and torchtitan write it
(torch.distributed.tensor.parallel.parallelize_module):

    self_attn.q_proj, k_proj, v_proj, mlp.gate_proj, up_proj: ColwiseParallel()
    self_attn.o_proj, mlp.down_proj:                          RowwiseParallel()

The embedding, the norms and lm_head stay whole on every rank (replicated).
A case whose fourth field is "transformers" runs transformers' own plan
(LlamaForCausalLM's tp_plan="auto": base_model_tp_plan on the layers as
above, and _tp_plan's lm_head "colwise_gather_output", which
transformers.distributed.tensor_parallel registers as
ColwiseParallel(input_layouts=Replicate(), output_layouts=Replicate())):
lm_head holds vocab / N rows and all-gathers its logits. Applied with
torch's ColwiseParallel of the same layouts; a tied lm_head (qwen2.json)
becomes its own sharded parameter, the embedding stays whole. Phi-3's
"transformers" cases use Phi3Config.base_model_tp_plan instead of the
layers' plan (PHI3_PLAN: qkv_proj and gate_up_proj colwise_gather_output,
o_proj and down_proj rowwise_split_input = RowwiseParallel(input_layouts=
Replicate())). "vocab" adds the embedding row-parallel over the
vocabulary (RowwiseParallel(input_layouts=Replicate()) on
model.embed_tokens); "loss_parallel" leaves lm_head's logits sharded
(ColwiseParallel(output_layouts=Shard(-1), use_local_output=False)) and
trains under torch's loss_parallel() (parallel_loss_step);
"vocab_loss_parallel" is both. "sp" is sequence parallelism as torchtitan
plans it (sp_plans(): the norms and residual adds on each rank's positions,
all-gathers before the attention, the MLP and lm_head, reduce-scatters after
o_proj and down_proj), with DTensor's all-gathers and reduce-scatters
allocating what NCCL's do (gloo_ranks.use_in_place_functional_collectives:
gloo's own copy their buffers on its threads, and the ranks then differ by
when those threads let go). A shape ("ddp", D, T) is DistributedDataParallel over D
groups of T tensor-parallel ranks (_pre_dp_module_transform first); its
rows record DDP's rebuilt bucket sizes.
It then trains as fsdp.py does (cross-entropy over the flattened logits,
zero_grad(set_to_none=True), two warm-up steps, then one step) and records
per rank, counting the bytes PyTorch's CPU allocator holds in every thread
(memhook/memhook.c, preloaded):
  - persistent: the live bytes after the third zero_grad, counted from
    before the model was built (parameter shards, optimizer state, inputs);
  - cpu_step_peak_above_baseline: the peak of one steady-state step above
    the live bytes after its zero_grad, as measure.py counts it.
The inference case runs `with torch.no_grad(): model(x)` (eval mode,
use_cache=False) after two warm-up forwards and records the forward's peak
above the live bytes before it. The generate case runs generate() as
generate.py does (measure_generate) and records its prefill and last decode
step peaks and the KV cache.

An encoder-decoder (T5ForConditionalGeneration) runs on [BATCH, SEQ]
input_ids and [BATCH, DEC_SEQ] labels (DEC_SEQ = SEQ // 2), with the
config's use_cache (its rows record it: T5Config's default, true, an
EncoderDecoderCache in training and in eval): a training step takes
the loss the model computes itself, model(input_ids, labels=labels).loss
(it shifts the labels right into its decoder_input_ids; only the loss
outlives the forward, as fsdp.py's hf_loss step), and the inference
forward runs model(input_ids, decoder_input_ids) on the labels shifted
right (made before the warm-up, in place of the labels).

Cases: (config, world size, optimizer, "inference" or "generate"); world
size 1 is the model without tensor parallelism, the one-process reference;
a pair (S, T) is FSDP2 over S groups of T tensor-parallel ranks (each
decoder layer and the root fully_shard-ed over the S groups, FSDP2's
collectives done in place as fsdp.py does); a triple (R, S, T) is HSDP
over R replicas of that (fully_shard on the (R, S) sub-mesh).

    benchmarks/accuracy/truth-env.sh python3 benchmarks/accuracy/tp.py

writes results/tp-torch-<version>-transformers-<version>-cpu.json, the
reference of test/Transforms/parallel-tp.test; given case ids (e.g.
t5_plain_adam t5_plain_inference), runs only those and replaces or adds
their rows in that table (write_table).
"""
import ctypes
import datetime
import os
import pathlib
import platform
import sys

import torch
import torch.distributed as dist

from gloo_ranks import (FlatLogits, preload_memhook, run_ranks, scratch_bytes, steady_step_bytes,
                        train_step, use_in_place_collectives,
                        use_in_place_functional_collectives, write_table)

ROOT = pathlib.Path(__file__).resolve().parents[2]
CASES = [("llama", 1, "sgd"), ("llama", 2, "sgd"), ("llama", 2, "adam"),
         ("llama-mha", 1, "sgd"), ("llama-mha", 2, "sgd"), ("llama-mha", 4, "sgd"),
         ("llama-mha", 4, "adam"),
         ("llama", 1, "inference"), ("llama", 2, "inference"), ("llama-mha", 4, "inference"),
         ("llama", 1, "generate"), ("llama", 2, "generate"), ("llama-mha", 4, "generate"),
         # FSDP2 + TP on a (fsdp, tp) mesh.
         ("llama-mha", (2, 2), "sgd"), ("llama-mha", (2, 2), "adam"),
         # HSDP + TP (torchtitan's 3-D layout) on a (replicate, shard, tp)
         # mesh: FSDP2 over the shard groups, replicated over 2.
         ("llama-mha", (2, 2, 2), "adam"),
         # transformers' tp_plan="auto": lm_head sharded over the vocabulary,
         # its logits all-gathered.
         ("llama", 2, "sgd", "transformers"), ("llama-mha", 2, "sgd", "transformers"),
         ("llama-mha", 4, "adam", "transformers"),
         ("llama", 2, "inference", "transformers"), ("llama", 2, "generate", "transformers"),
         ("llama-mha", 4, "generate", "transformers"),
         ("llama-mha", (2, 2), "adam", "transformers"), ("qwen2", 2, "adam", "transformers"),
         # DDP over tensor-parallel groups: a (dp, tp) mesh, parallelize_module
         # on the tp axis, then torch's _pre_dp_module_transform (DTensor
         # parameters as local tensors) and DistributedDataParallel over the
         # dp axis, as torch's 2-D DDP + TP tests compose them.
         ("llama-mha", ("ddp", 2, 2), "sgd"), ("llama-mha", ("ddp", 2, 2), "adam"),
         ("llama-mha", ("ddp", 2, 2), "adam", "transformers"),
         # Phi-3's plan (transformers' Phi3Config.base_model_tp_plan): the
         # fused qkv_proj and gate_up_proj gather their outputs
         # (colwise_gather_output), o_proj and down_proj split their
         # replicated inputs (rowwise_split_input).
         ("phi3", 2, "sgd", "transformers"), ("phi3", 2, "adam", "transformers"),
         ("phi3", 2, "inference", "transformers"), ("phi3", 2, "generate", "transformers"),
         # GPT-NeoX (GPTNeoXConfig.base_model_tp_plan, NEOX_PLAN): the
         # layers' plan, and transformers' with embed_in and lm_head split.
         ("gpt_neox", 2, "sgd"), ("gpt_neox", 2, "adam", "transformers"),
         ("gpt_neox-sequential", 2, "sgd", "transformers"),
         ("gpt_neox", 2, "inference", "transformers"),
         ("gpt_neox", 2, "generate", "transformers"),
         ("gpt_neox", ("ddp", 2, 2), "adam", "transformers"),
         ("gpt_neox", (2, 2), "adam", "transformers"),
         # Vocabulary parallelism (torchtitan's and Megatron's layout):
         # "vocab" adds the embedding row-parallel over the vocabulary to
         # transformers' plan (RowwiseParallel(input_layouts=Replicate()):
         # each rank looks up its vocab / N rows, the masked partial sums
         # all-reduced); "loss_parallel" keeps lm_head's logits sharded
         # (ColwiseParallel(output_layouts=Shard(-1), use_local_output=
         # False)) and trains under torch's loss_parallel(); "vocab_loss_parallel"
         # is both.
         ("llama-mha", 2, "sgd", "vocab"), ("llama-mha", 2, "sgd", "loss_parallel"),
         ("llama-mha", 2, "sgd", "vocab_loss_parallel"),
         ("llama-mha", 4, "adam", "vocab_loss_parallel"),
         ("llama-mha", 2, "inference", "vocab"),
         ("llama-mha", ("ddp", 2, 2), "adam", "vocab_loss_parallel"),
         ("llama-mha", (2, 2), "adam", "vocab_loss_parallel"),
         # Sequence parallelism (SP_LAYER_PLAN, SP_MODEL_PLAN), DTensor's
         # all-gathers and reduce-scatters allocated as NCCL allocates them.
         ("llama-mha", 2, "sgd", "sp"), ("llama-mha", 4, "adam", "sp"),
         ("llama-mha", 2, "inference", "sp"), ("llama-mha", (2, 2), "adam", "sp"),
         ("llama-mha", ("ddp", 2, 2), "adam", "sp"),
         # Mixtures of experts in one process (transformers' grouped_mm
         # experts): test/Import/HuggingFace/moe.test.
         ("mixtral", 1, "sgd"), ("mixtral", 1, "adam"), ("mixtral", 1, "inference"),
         ("qwen3_moe", 1, "adam"), ("qwen2_moe", 1, "adam"), ("qwen2_moe", 1, "inference"),
         # Phi-3's fused projections and its rotary's concatenation.
         ("phi3", 1, "adam"), ("phi3-partial", 1, "adam"), ("phi3", 1, "inference"),
         # GPT-NeoX: parallel and sequential residuals.
         ("gpt_neox", 1, "adam"), ("gpt_neox-sequential", 1, "adam"),
         ("gpt_neox", 1, "inference"),
         # BERT's encoder with its masked-LM head (BertForMaskedLM).
         ("bert", 1, "sgd"), ("bert", 1, "adam"), ("bert", 1, "inference"),
         ("roberta", 1, "adam"), ("roberta", 1, "inference"),
         # Their sequence classifiers (3 labels).
         ("bert-cls", 1, "adam"), ("bert-cls", 1, "inference"), ("roberta-cls", 1, "adam"),
         ("distilbert", 1, "adam"), ("distilbert-cls", 1, "adam"),
         # ViTForImageClassification on [BATCH, 3, 64, 64] images (3 labels).
         ("vit", 1, "adam"), ("vit", 1, "inference"),
         # T5ForConditionalGeneration on its own loss (t5-nodrop: t5 with
         # dropout_rate 0; t5-gated: gated-gelu, 3 decoder layers).
         ("t5", 1, "adam"), ("t5", 1, "inference"), ("t5-nodrop", 1, "adam"),
         ("t5-gated", 1, "adam")]
BATCH, SEQ = 2, 256
DEC_SEQ = SEQ // 2  # an encoder-decoder's labels (decoder_input_ids): [BATCH, DEC_SEQ]
# generate(): batch, prompt length, new tokens (generate.py's first case).
GEN_BATCH, GEN_PROMPT, GEN_NEW = 2, 64, 32
PLAN = {"self_attn.q_proj": "colwise", "self_attn.k_proj": "colwise",
        "self_attn.v_proj": "colwise", "self_attn.o_proj": "rowwise",
        "mlp.gate_proj": "colwise", "mlp.up_proj": "colwise", "mlp.down_proj": "rowwise"}

# GPTNeoXConfig.base_model_tp_plan's layers; its "transformers" plan adds
# embed_in "embedding_rowwise" (EmbeddingParallel(shard_dim=0): the
# vocabulary-parallel lookup RowwiseParallel(input_layouts=Replicate())
# makes) and lm_head's "colwise_gather_output".
NEOX_PLAN = {"attention.query_key_value": "colwise", "attention.dense": "rowwise",
             "mlp.dense_h_to_4h": "colwise", "mlp.dense_4h_to_h": "rowwise"}

PHI3_PLAN = {"self_attn.qkv_proj": "colwise_gather_output",
             "self_attn.o_proj": "rowwise_split_input",
             "mlp.gate_up_proj": "colwise_gather_output",
             "mlp.down_proj": "rowwise_split_input"}


def sp_plans():
    """Sequence parallelism as torchtitan applies it to a LLaMA decoder
    (its parallelize_llama), on transformers' LlamaForCausalLM: the norms
    run on the residual stream's sequence shards (SequenceParallel); the
    attention and the MLP all-gather their input along the sequence
    (PrepareModuleInput Shard(1) -> Replicate, a local tensor inside);
    o_proj and down_proj reduce-scatter their partial outputs along the
    sequence (RowwiseParallel(output_layouts=Shard(1)), left a DTensor so
    the residual adds run on the shards); the embedding stays whole and
    the first layer takes its sequence shard (PrepareModuleInput Replicate
    -> Shard(1): transformers makes the masks and rotary tables from the
    embedding's output, which a sharded embedding would give s / N
    positions); lm_head is column-parallel over the gathered final norm
    and all-gathers its logits (transformers' colwise_gather_output).
    Returns (the decoder layer's plan, the model's plan)."""
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.parallel import (ColwiseParallel, PrepareModuleInput,
                                                   RowwiseParallel, SequenceParallel)
    layer = {
        "input_layernorm": SequenceParallel(), "post_attention_layernorm": SequenceParallel(),
        "self_attn": PrepareModuleInput(input_kwarg_layouts={"hidden_states": Shard(1)},
                                        desired_input_kwarg_layouts={"hidden_states": Replicate()},
                                        use_local_output=True),
        "self_attn.q_proj": ColwiseParallel(), "self_attn.k_proj": ColwiseParallel(),
        "self_attn.v_proj": ColwiseParallel(),
        "self_attn.o_proj": RowwiseParallel(output_layouts=Shard(1), use_local_output=False),
        "mlp": PrepareModuleInput(input_layouts=(Shard(1),), desired_input_layouts=(Replicate(),),
                                  use_local_output=True),
        "mlp.gate_proj": ColwiseParallel(), "mlp.up_proj": ColwiseParallel(),
        "mlp.down_proj": RowwiseParallel(output_layouts=Shard(1), use_local_output=False)}
    model = {
        "model.layers.0": PrepareModuleInput(input_layouts=(Replicate(),),
                                             desired_input_layouts=(Shard(1),)),
        "model.norm": SequenceParallel(),
        "lm_head": ColwiseParallel(input_layouts=Shard(1), output_layouts=Replicate())}
    return layer, model


def layer_plan(name):
    """The tensor-parallel plan of a decoder layer of config `name`."""
    return (PHI3_PLAN if name.startswith("phi3") else
            NEOX_PLAN if name.startswith("gpt_neox") else PLAN)


def build(name):
    model = FlatLogits(name)
    c = model.config
    x = (torch.randn(BATCH, c.num_channels, c.image_size, c.image_size) if model.vision else
         torch.randint(0, c.vocab_size, (BATCH, SEQ)))
    # A sequence classifier's targets: one label per sequence; an
    # encoder-decoder's: its [BATCH, DEC_SEQ] labels.
    y = (torch.randint(0, model.config.num_labels, (BATCH,)) if model.classifier else
         torch.randint(0, model.config.vocab_size, (BATCH, DEC_SEQ)) if model.seq2seq else
         torch.randint(0, model.config.vocab_size, (BATCH * SEQ,)))
    return model, x, y


def small_config(name):
    import json
    return json.loads((ROOT / "test" / "Inputs" / "hf" / "small" / f"{name}.json").read_text())


def image_size(name):
    """An image classifier's image side (its config's image_size), else None."""
    return small_config(name).get("image_size")


def is_seq2seq(name):
    """Whether the config is an encoder-decoder (T5ForConditionalGeneration)."""
    return any(a.endswith("ForConditionalGeneration")
               for a in small_config(name).get("architectures") or [])


def use_cache(name):
    """The config's use_cache, as transformers reads it (T5Config's default)."""
    from transformers import AutoConfig
    return AutoConfig.from_pretrained(ROOT / "test" / "Inputs" / "hf" / "small" /
                                      f"{name}.json").use_cache


def loss_step(model, opt, x, y):
    """An encoder-decoder's training step on the loss it computes from its
    labels (FlatLogits returns it)."""
    opt.zero_grad(set_to_none=True)
    loss = model(x, labels=y)
    loss.backward()
    del loss
    opt.step()


def parallel_loss_step(model, opt, x, y):
    """train_step under torch's loss_parallel(): the cross-entropy reads
    lm_head's logits sharded over the vocabulary (a DTensor)."""
    import torch.nn.functional as F
    from torch.distributed.tensor.parallel import loss_parallel
    opt.zero_grad(set_to_none=True)
    with loss_parallel():
        loss = F.cross_entropy(model(x), y)
        loss.backward()
    del loss
    opt.step()


def measure_generate(lm, hook, start):
    """generate(max_new_tokens=GEN_NEW, greedy) from a GEN_BATCH x
    GEN_PROMPT prompt, as generate.py measures it: the peaks of the prefill
    and of the last decode step above the live bytes before generate(),
    after a warm-up call, and the DynamicCache's keys and values. Every
    rank generates the same tokens (the logits are replicated)."""
    from generate import generate_peaks, kv_cache_bytes
    lm.generation_config.eos_token_id = None
    lm.generation_config.pad_token_id = 0
    ids = torch.randint(0, lm.config.vocab_size, (GEN_BATCH, GEN_PROMPT),
                        generator=torch.Generator().manual_seed(1))
    peaks, out, base = generate_peaks(lm, ids, GEN_NEW, hook, before_call=dist.barrier)
    assert out.sequences.shape[1] - GEN_PROMPT == GEN_NEW
    return base - start, {"prefill_peak": peaks[0], "decode_peak": peaks[-1],
                          "kv_cache_bytes": kv_cache_bytes(out)}


def run_rank(rank, shape, name, optimizer, plan, port, queue):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor.parallel import (ColwiseParallel, RowwiseParallel,
                                                   parallelize_module)
    from torch.distributed.fsdp import fully_shard
    from torch.distributed.tensor import Replicate
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    ddp = shape[0] == "ddp"
    if ddp:
        shape = (shape[1], 1, shape[2])
    replicas, shards, tp = shape if len(shape) == 3 else (1, *shape)
    world = replicas * shards * tp
    dist.init_process_group("gloo", rank=rank, world_size=world)
    if shards > 1:
        use_in_place_collectives()
    torch.set_num_threads(1)
    hook = ctypes.CDLL(None)  # memhook.so, preloaded
    hook.vram_live.restype = hook.vram_peak.restype = ctypes.c_longlong
    start = hook.vram_live()
    torch.manual_seed(0)
    model, x, y = build(name)
    if world > 1:
        # FSDP2 + TP (torchtitan's 2-D layout): tensor parallelism inside
        # each group of `tp` ranks, each layer and the root fully_shard-ed
        # over the `shards` groups.
        mesh = init_device_mesh("cpu", (replicas, shards, tp),
                                mesh_dim_names=("replicate", "dp", "tp"))
        styles = {"colwise": ColwiseParallel, "rowwise": RowwiseParallel,
                  "colwise_gather_output": lambda: ColwiseParallel(output_layouts=Replicate()),
                  "rowwise_split_input": lambda: RowwiseParallel(input_layouts=Replicate())}
        neox = name.startswith("gpt_neox")
        plan_of_layer = layer_plan(name)
        decoder = model.lm.gpt_neox if neox else model.lm.model
        if plan == "sp":
            use_in_place_functional_collectives()
            layer_styles, model_styles = sp_plans()
            for layer in decoder.layers:
                parallelize_module(layer, mesh["tp"], layer_styles)
            parallelize_module(model.lm, mesh["tp"], model_styles)
        for layer in decoder.layers if plan != "sp" else []:
            parallelize_module(layer, mesh["tp"],
                               {k: styles[v]() for k, v in plan_of_layer.items()})
        if plan not in ("layers", "sp"):
            from torch.distributed.tensor import Shard
            head = (ColwiseParallel(output_layouts=Shard(-1), use_local_output=False)
                    if "loss_parallel" in plan else
                    ColwiseParallel(output_layouts=Replicate()))
            parallelize_module(model.lm, mesh["tp"], {"lm_head": head})
        if plan.startswith("vocab") or (neox and plan == "transformers"):
            parallelize_module(model.lm, mesh["tp"], {
                "gpt_neox.embed_in" if neox else "model.embed_tokens":
                    RowwiseParallel(input_layouts=Replicate())})
        # FSDP2 over the shard groups (HSDP: a 2-D mesh of the replicas).
        fsdp_mesh = mesh["replicate", "dp"] if replicas > 1 else mesh["dp"]
        if shards > 1:
            for layer in decoder.layers:
                fully_shard(layer, mesh=fsdp_mesh)
            fully_shard(model, mesh=fsdp_mesh)
    seq2seq = model.seq2seq
    if ddp:
        from torch.distributed.tensor.parallel.ddp import _pre_dp_module_transform
        _pre_dp_module_transform(model)
        model = torch.nn.parallel.DistributedDataParallel(
            model, process_group=mesh["replicate"].get_group())
    if optimizer == "generate":
        persistent, peak = measure_generate(model.lm.eval(), hook, start)
    elif optimizer == "inference":
        model.eval()
        # An encoder-decoder's decoder_input_ids: its labels shifted right.
        kwargs = {}
        if model.seq2seq:
            y = kwargs["decoder_input_ids"] = model.lm._shift_right(y)
        with torch.no_grad():
            model(x, **kwargs)
            model(x, **kwargs)
        dist.barrier()
        persistent = hook.vram_live() - start
        hook.vram_reset_peak()
        base = hook.vram_live()
        with torch.no_grad():
            out = model(x, **kwargs)
        peak = hook.vram_peak() - base
        del out
    else:
        model.train()
        opt = (torch.optim.SGD(model.parameters(), lr=0.01) if optimizer == "sgd"
               else torch.optim.Adam(model.parameters(), lr=1e-3))
        step = (loss_step if seq2seq else
                parallel_loss_step if "loss_parallel" in plan else train_step)
        persistent, peak = steady_step_bytes(
            hook, start, lambda: step(model, opt, x, y), opt)
        persistent -= scratch_bytes()
    row = {"rank": rank, "persistent": persistent, "peak": peak}
    if ddp:
        # DDP's buckets after its rebuild in gradient-ready order (bytes).
        data = model._get_ddp_logging_data()
        row["bucket_sizes"] = [int(b) for b in str(data["rebuilt_bucket_sizes"]).split(",")
                               if b.strip()]
    queue.put(row)
    dist.destroy_process_group()


def main():
    preload_memhook()
    only = sys.argv[1:]
    rows = []
    for name, world, optimizer, *plan in CASES:
        plan = plan[0] if plan else "layers"
        shape = world if isinstance(world, tuple) else (1, world)
        world = 1
        for n in shape:
            world *= 1 if n == "ddp" else n
        case = (f"{name}_ddp{shape[1]}_tp{shape[2]}_{optimizer}" if shape[0] == "ddp" else
                f"{name}_hsdp{shape[0]}x{shape[1]}_tp{shape[2]}_{optimizer}" if len(shape) == 3 else
                f"{name}_fsdp{shape[0]}_tp{shape[1]}_{optimizer}" if shape[0] > 1 else
                f"{name}_tp{world}_{optimizer}" if world > 1 else f"{name}_plain_{optimizer}")
        if plan != "layers":
            case += f"_{plan}"
        if only and case not in only:
            continue
        ranks = run_ranks(run_rank, world, shape, name, optimizer, plan)
        key = {"inference": "cpu_forward_peak_above_baseline",
               "generate": "generate"}.get(optimizer, "cpu_step_peak_above_baseline")
        sizes = ({"batch": GEN_BATCH, "prompt_len": GEN_PROMPT, "max_new_tokens": GEN_NEW}
                 if optimizer == "generate" else
                 {"batch": BATCH, "image_size": image_size(name)} if image_size(name) else
                 {"batch": BATCH, "seq": SEQ, "decoder_seq": DEC_SEQ,
                  "use_cache": use_cache(name)} if is_seq2seq(name) else
                 {"batch": BATCH, "seq": SEQ})
        row = {"id": case, "model": name, "config": f"test/Inputs/hf/small/{name}.json",
               "world_size": world, "optimizer": optimizer, **sizes,
               **({"plan": "sp_plans(): torchtitan's sequence parallelism, lm_head "
                           "colwise_gather_output, the embedding whole"}
                  if plan == "sp" else
                  {"plan": {**layer_plan(name),
                            **({"lm_head": "colwise (Shard(-1)), loss_parallel()"}
                               if "loss_parallel" in plan else
                               {"lm_head": "colwise_gather_output"}
                               if plan != "layers" else {}),
                            **({"gpt_neox.embed_in": "embedding_rowwise"}
                               if name.startswith("gpt_neox") and plan == "transformers" else
                               {"embed_tokens": "rowwise (input_layouts=Replicate())"}
                               if plan.startswith("vocab") else {})}}
                  if world > 1 else {}),
               **({"dp": shape[1], "tp": shape[2],
                   "units": "DistributedDataParallel over dp (default buckets) after "
                            "_pre_dp_module_transform"}
                  if shape[0] == "ddp" else
                  {"hsdp": list(shape[:2]), "tp": shape[2],
                   "units": "each decoder layer and the root, fully_shard over the "
                            "(replicate, shard) mesh"}
                  if len(shape) == 3 else
                  {"fsdp": shape[0], "tp": shape[1],
                   "units": "each decoder layer and the root, fully_shard over fsdp"}
                  if shape[0] > 1 else {}),
               **({"bucket_sizes": [r["bucket_sizes"] for r in ranks]}
                  if "bucket_sizes" in ranks[0] else {}),
               "persistent": [r["persistent"] for r in ranks],
               key: [r["peak"] for r in ranks]}
        print(row, flush=True)
        rows.append(row)
    import transformers
    version = torch.__version__.split("+")[0]
    out = (ROOT / "benchmarks" / "accuracy" / "results" /
           f"tp-torch-{version}-transformers-{transformers.__version__}-cpu.json")
    measured_with = (f"torch {torch.__version__} cpu (PyPI wheel), gloo, transformers "
                     f"{transformers.__version__}, {platform.platform()}, {datetime.date.today()}")
    write_table(out, rows, measured_with, only)


if __name__ == "__main__":
    main()
