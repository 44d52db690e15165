"""FSDP2 (fully_shard) under torch 2.x on the CPU (issue 24, --parallel=fsdp=N).

Each rank of a gloo process group on this machine builds the model, wraps
the modules named by the case with fully_shard and then the whole model
(the root), and trains as training loops write it:

    opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()

after two warm-up steps. Per rank it records, counting the bytes PyTorch's
CPU allocator holds in every thread (memhook/memhook.c, preloaded: the
profiler that measure.py reads misses the frees gloo's threads make; on
the single-process resnet18 step the two agree to 0.02%, 83,528,920 vs
83,511,200):
  - persistent: the live bytes after the third zero_grad, counted from
    before the model was built (sharded parameters, buffers, optimizer
    state, inputs);
  - cpu_step_peak_above_baseline: the peak of one steady-state step above
    the live bytes after its zero_grad, as measure.py counts it;
with FSDP2's all-gather and reduce-scatter done as in-place all-reduces
(use_in_place_collectives: what FSDP2 itself allocates, as under NCCL),
and again with gloo's own collectives (`gloo_collectives`: these add
copies whose lifetime depends on gloo's threads, so ranks differ).

Cases: `mlp` (4 x Linear(512, 512) + ReLU, each Linear a unit, batch 8),
resnet18 (102 classes, 224x224, each BasicBlock a unit, batch 2), `llama`
(transformers' LlamaForCausalLM at test/Inputs/hf/small/llama.json, sdpa,
batch 2 x 256 tokens, cross-entropy over the flattened logits, each decoder
layer a unit; world size 1 is the model without FSDP; a pair (R, S) is
HSDP, fully_shard on an R x S device mesh: sharded over S ranks, the
gradient shards all-reduced across the R replicas). A fourth element is a
MixedPrecisionPolicy (param_dtype, reduce_dtype); with world size 1 it
casts the model and its inputs to param_dtype instead (the one-process
reference). A fifth element "hf_loss" trains with transformers' own loss,
`model(input_ids, labels=labels).loss` (ForCausalLMLoss), instead; "keep"
wraps the units with reshard_after_forward=False; "liger" patches
Liger-Kernel's kernels into the model first (apply_liger_kernel_to_llama()
as liger.py runs it, Triton's interpreter) and trains as "hf_loss" does.
"ddp_hf_loss" and "ddp_liger" train as those do, the model wrapped in
DistributedDataParallel (its defaults: 25 MiB buckets, the first 1 MiB)
instead of fully_shard (ddp.py measures resnet18 so): cases `<model>_dp<N>`.

    benchmarks/accuracy/truth-env.sh python3 benchmarks/accuracy/fsdp.py

writes results/fsdp-torch-<version>-cpu.json, the reference of
test/Transforms/parallel-fsdp.test.
"""
import ctypes
import datetime
import os
import pathlib
import platform
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import torchvision

from gloo_ranks import (FlatLogits, preload_memhook, rank_figures, run_ranks, scratch_bytes,
                        steady_step_bytes, use_in_place_collectives, write_table)


ROOT = pathlib.Path(__file__).resolve().parents[2]
# (model, world size, optimizer)
# World size 1: the model without FSDP, the one-process reference.
CASES = [("mlp", 2, "sgd"), ("mlp", 2, "adam"), ("mlp", 4, "sgd"),
         ("resnet18", 2, "sgd"), ("resnet18", 2, "adam"), ("resnet18", 4, "sgd"),
         ("llama", 1, "sgd"), ("llama", 2, "sgd"), ("llama", 4, "sgd"), ("llama", 2, "adam"),
         # HSDP: (replicas, shards), FSDP2 on a 2-D mesh.
         ("mlp", (2, 2), "sgd"), ("resnet18", (2, 2), "sgd"), ("llama", (2, 2), "adam"),
         # MixedPrecisionPolicy(param_dtype, reduce_dtype): (model, world, optimizer, policy).
         ("mlp", 2, "sgd", ("bf16", "fp32")), ("mlp", 2, "sgd", ("bf16", None)),
         ("mlp", 2, "sgd", ("bf16", "bf16")),
         ("llama", 2, "adam", ("bf16", "fp32")),
         # World size 1 with a policy: the model and its inputs cast to
         # param_dtype (model.bfloat16()), the one-process reference.
         ("mlp", 1, "sgd", ("bf16", None)), ("llama", 1, "adam", ("bf16", None)),
         # transformers' own loss: the model called with labels
         # (ForCausalLMLoss), one process (vram-opt's --loss=causal_lm).
         ("llama", 1, "adam", ("bf16", None), "hf_loss"), ("llama", 1, "adam", None, "hf_loss"),
         # BertForMaskedLM's own loss (CrossEntropyLoss on the logits as
         # they are), one process: test/Import/HuggingFace/bert.test.
         ("bert", 1, "adam", ("bf16", None), "hf_loss"), ("bert", 1, "adam", None, "hf_loss"),
         ("bert", 2, "adam"),
         # fully_shard(unit, reshard_after_forward=False).
         ("mlp", 2, "sgd", None, "keep"), ("resnet18", 2, "sgd", None, "keep"),
         ("llama", 2, "sgd", None, "keep"),
         # Liger-Kernel's kernels, apply_liger_kernel_to_llama()'s defaults
         # (RMSNorm, SwiGLU, RoPE, the fused loss: liger.py), the model
         # called with labels; transformers' own loss beside.
         ("llama", 2, "sgd", None, "hf_loss"), ("llama", 1, "sgd", None, "liger"),
         ("llama", 2, "sgd", None, "liger"), ("llama", (2, 2), "adam", None, "liger"),
         # The same model under DistributedDataParallel instead.
         ("llama", 2, "sgd", None, "ddp_hf_loss"), ("llama", 2, "sgd", None, "ddp_liger"),
         ("llama", 2, "adam", None, "ddp_liger")]
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32, None: None}
LLAMA_BATCH, LLAMA_SEQ = 2, 256


def build(name):
    """The model, its units (module names) and one batch."""
    if name == "mlp":
        layers = []
        for _ in range(4):
            layers += [nn.Linear(512, 512), nn.ReLU()]
        model = nn.Sequential(*layers)
        units = [str(i) for i in range(0, 8, 2)]
        x, y = torch.randn(8, 512), torch.randint(0, 512, (8,))
    elif name in ("llama", "bert"):
        # transformers' LlamaForCausalLM at test/Inputs/hf/small/llama.json
        # (BertForMaskedLM at bert.json), trained with cross-entropy over
        # the flattened logits.
        model = FlatLogits(name)
        config = model.config
        prefix = "lm.model.layers" if name == "llama" else "lm.bert.encoder.layer"
        units = [f"{prefix}.{i}" for i in range(config.num_hidden_layers)]
        x = torch.randint(0, config.vocab_size, (LLAMA_BATCH, LLAMA_SEQ))
        y = torch.randint(0, config.vocab_size, (LLAMA_BATCH * LLAMA_SEQ,))
    else:
        model = torchvision.models.resnet18(num_classes=102)
        units = [f"layer{i}.{j}" for i in range(1, 5) for j in range(2)]
        x, y = torch.randn(2, 3, 224, 224), torch.randint(0, 102, (2,))
    return model.train(), units, x, y


def train_step(model, opt, x, y, hf_loss=False):
    opt.zero_grad(set_to_none=True)
    if hf_loss:  # LlamaForCausalLM(input_ids, labels=...).loss, through FSDP's root
        loss = model(x, labels=y.view(x.shape))
    else:
        loss = F.cross_entropy(model(x), y)
    loss.backward()
    del loss
    opt.step()


def run_rank(rank, shape, name, optimizer, policy, option, in_place, port, queue):
    ddp = bool(option) and option.startswith("ddp_")
    if ddp:
        option = option[len("ddp_"):]
    hf_loss = option in ("hf_loss", "liger")
    if option == "liger":
        from liger import patch_liger
        patch_liger("llama", "all")
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    world = shape[0] * shape[1]
    dist.init_process_group("gloo", rank=rank, world_size=world)
    if in_place:
        use_in_place_collectives()
    mesh = (init_device_mesh("cpu", (world,)) if shape[0] == 1 else
            init_device_mesh("cpu", shape, mesh_dim_names=("replicate", "shard")))
    torch.set_num_threads(1)
    hook = ctypes.CDLL(None)  # memhook.so, preloaded
    hook.vram_live.restype = hook.vram_peak.restype = ctypes.c_longlong
    start = hook.vram_live()
    torch.manual_seed(0)
    model, units, x, y = build(name)
    if world == 1 and policy:
        model = model.to(DTYPES[policy[0]])
        if x.is_floating_point():
            x = x.to(DTYPES[policy[0]])
    if ddp:
        model = torch.nn.parallel.DistributedDataParallel(model)
    elif world > 1:
        mp = MixedPrecisionPolicy(param_dtype=DTYPES[policy[0]], reduce_dtype=DTYPES[policy[1]]) \
            if policy else MixedPrecisionPolicy()
        for unit in units:
            fully_shard(model.get_submodule(unit), mesh=mesh, mp_policy=mp,
                        reshard_after_forward=option != "keep")
        fully_shard(model, mesh=mesh, mp_policy=mp)
    opt = (torch.optim.SGD(model.parameters(), lr=0.01) if optimizer == "sgd"
           else torch.optim.Adam(model.parameters(), lr=1e-3))
    persistent, peak = steady_step_bytes(
        hook, start, lambda: train_step(model, opt, x, y, hf_loss), opt)
    persistent -= scratch_bytes()
    queue.put({"rank": rank, "persistent": persistent, "cpu_step_peak_above_baseline": peak})
    dist.destroy_process_group()


def main():
    # Liger's Triton kernels run in the interpreter, which must be on
    # before triton is imported in the ranks.
    os.environ["TRITON_INTERPRET"] = "1"
    preload_memhook()
    only = sys.argv[1:]
    rows = []
    for name, world, optimizer, *rest in CASES:
        policy = rest[0] if rest else None
        option = rest[1] if len(rest) > 1 else None
        shape = world if isinstance(world, tuple) else (1, world)
        world = shape[0] * shape[1]
        case = (f"{name}_dp{world}_{optimizer}" if option and option.startswith("ddp_") else
                f"{name}_hsdp{shape[0]}x{shape[1]}_{optimizer}" if shape[0] > 1 else
                f"{name}_fsdp{world}_{optimizer}" if world > 1 else f"{name}_plain_{optimizer}")
        if policy:
            case += (f"_mp_{policy[0]}_{policy[1] or 'none'}" if world > 1 else f"_{policy[0]}")
        if option:
            case += "_" + option.removeprefix("ddp_")
        if only and case not in only:
            continue
        ranks = run_ranks(run_rank, world, shape, name, optimizer, policy, option, True)
        gloo = (run_ranks(run_rank, world, shape, name, optimizer, policy, option, False)
                if world > 1 else ranks)
        row = {"id": case, "model": name, "world_size": world, "optimizer": optimizer,
               "mesh": list(shape),
               **({"param_dtype": policy[0], "reduce_dtype": policy[1]} if policy else {}),
               **({"wrapper": "DistributedDataParallel"} if option and option.startswith("ddp_") else {}),
               **({"loss": "transformers (labels given to the model)"}
                  if option in ("hf_loss", "ddp_hf_loss") else {}),
               **({"loss": "Liger's fused linear cross-entropy (labels given to the model)",
                   "liger_kernels": ["rope", "rms_norm", "swiglu", "fused_linear_cross_entropy"]}
                  if option in ("liger", "ddp_liger") else {}),
               **({"reshard_after_forward": False} if option == "keep" else {}),
               "units": build(name)[1],
               **rank_figures(ranks, gloo)}
        print(row, flush=True)
        rows.append(row)
    out = ROOT / "benchmarks" / "accuracy" / "results" / f"fsdp-torch-{torch.__version__.split('+')[0]}-cpu.json"
    measured_with = (f"torch {torch.__version__} cpu (PyPI wheel), gloo, torchvision "
                     f"{torchvision.__version__}, {platform.platform()}, {datetime.date.today()}")
    write_table(out, rows, measured_with, only)


if __name__ == "__main__":
    main()
