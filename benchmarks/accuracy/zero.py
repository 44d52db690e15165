"""DeepSpeed ZeRO-1/2/3 on the CPU (issue 24, --strategy=zero1|zero2|zero3).

Each rank of a gloo process group on this machine (DeepSpeed's CPU
accelerator, DS_ACCELERATOR=cpu, falls back to gloo without oneCCL) builds
the model of fsdp.py's cases (`mlp`, `llama`), wraps it with
deepspeed.initialize (a client torch optimizer, zero_optimization.stage
STAGE, fp32 or bf16 ("bf16": {"enabled": true}: the model and its float
inputs in bf16), optionally with peft's LoRA adapters, the other
zero_optimization keys at their defaults unless the case sets them) and trains as DeepSpeed's loops do:

    loss = F.cross_entropy(engine(x), y)
    engine.backward(loss)
    engine.step()

(once per micro-batch with gradient_accumulation_steps) after two warm-up
steps; with "hf_loss" the loss is the model's own (called with labels, as
fsdp.py's "hf_loss"), with "liger" Liger-Kernel's kernels are patched in
first and the model's loss is Liger's fused one (fsdp.py's "liger"). Per rank it records, with the preloaded allocation
counter (memhook/memhook.c):
  - persistent: the live bytes after the second step, counted from before
    the model was built (the flat parameters, the fp32 partition, optimizer
    state, inputs);
  - cpu_step_peak_above_baseline: the peak of the third step above the
    bytes live before it.

gloo's all_gather_into_tensor allocates copies of its output, and gloo
holds an all-reduced tensor until the next collective; NCCL writes
DeepSpeed's flat parameter buffer in place and holds nothing. Here the
all-gather at the end of the step is done in place (the other ranks'
chunks zeroed, then an in-place all-reduce: the same values, no
allocation) and each all-reduce is followed by one of a 1-element tensor
(use_nccl_like_collectives); stage 3's gathers (async_op=True, a completed
work object returned) are done the same way, and its reduce-scatter (the
output a chunk of the input) as an in-place all-reduce of the input, so
the bytes are DeepSpeed's own;
`gloo_collectives` repeats the case with gloo's.
Needs deepspeed in .venv-truth (0.19.8 from its sdist, pip install
--no-deps, plus hjson ninja py-cpuinfo pydantic msgpack einops).

    benchmarks/accuracy/truth-env.sh python3 benchmarks/accuracy/zero.py [CASE_ID...]
    benchmarks/accuracy/truth-env.sh python3 benchmarks/accuracy/zero.py --trace CASE_ID RANK

writes results/zero-torch-<version>-deepspeed-<version>-cpu.json, the
reference of test/Transforms/parallel-zero.test; --trace prints that
rank's allocations of 64 KiB or more in the third step, with the live
bytes after each, between the marks 1 (forward done), 2 (backward done)
and 3 (step done).
"""
import ctypes
import datetime
import json
import os
import platform
import sys

import torch
import torch.distributed as dist
import torch.nn.functional as F

from fsdp import build
from gloo_ranks import ROOT, preload_memhook, rank_figures, run_ranks, write_table

# (model, world size, stage, optimizer, zero_optimization keys)
CASES = [("mlp", 2, 1, "sgd", {}), ("mlp", 2, 1, "adam", {}),
         ("mlp", 2, 2, "sgd", {}), ("mlp", 2, 2, "adam", {}), ("mlp", 4, 2, "adam", {}),
         # Small buckets: several reductions per step.
         ("mlp", 2, 1, "sgd", {"reduce_bucket_size": 300000}),
         ("mlp", 2, 2, "sgd", {"reduce_bucket_size": 300000}),
         ("mlp", 4, 2, "adam", {"reduce_bucket_size": 100000}),
         ("llama", 2, 2, "adam", {}), ("llama", 2, 1, "adam", {"reduce_bucket_size": 1000000}),
         ("llama", 4, 2, "adam", {"reduce_bucket_size": 1000000}),
         # Partitions inside one parameter (dp=8: 131,328 elements each).
         ("mlp", 8, 2, "adam", {}),
         # bf16 (DeepSpeed's "bf16": {"enabled": true}: the model and its
         # inputs in bf16, gradients accumulated in bf16, fp32 master
         # partition).
         ("mlp", 2, 2, "adam", {"bf16": True}), ("mlp", 2, 1, "adam", {"bf16": True}),
         ("mlp", 2, 2, "sgd", {"bf16": True, "reduce_bucket_size": 300000}),
         ("llama", 2, 2, "adam", {"bf16": True, "reduce_bucket_size": 1000000}),
         # overlap_comm: two gradient buffers, stage 1 reducing in the hooks
         # too; Hugging Face's ZeRO-2 template sets it, with
         # reduce_bucket_size "auto" = hidden_size^2 (65,536 here).
         ("mlp", 2, 2, "sgd", {"overlap_comm": True, "reduce_bucket_size": 300000}),
         ("mlp", 2, 1, "sgd", {"overlap_comm": True, "reduce_bucket_size": 300000}),
         ("llama", 2, 2, "adam", {"overlap_comm": True, "reduce_bucket_size": 65536}),
         ("llama", 2, 1, "adam", {"overlap_comm": True, "reduce_bucket_size": 1000000}),
         # LoRA (peft, r=8, alpha=16, no dropout, on q_proj and v_proj):
         # only the adapters are flattened and partitioned.
         ("llama", 2, 2, "adam", {"lora": True, "reduce_bucket_size": 1000000}),
         ("llama", 2, 1, "adam", {"lora": True}),
         # ZeRO-3 (notes/zero3-deepspeed-0.19.8.md): every parameter
         # partitioned, gathered around each module by DeepSpeed's hooks.
         ("mlp", 2, 3, "adam", {}), ("mlp", 2, 3, "adam", {"bf16": True}),
         # 512 % 3 != 0: padded partitions.
         ("mlp", 3, 3, "adam", {}),
         # No prefetch, no reuse: gathered and released module by module.
         ("mlp", 2, 3, "adam", {"stage3_prefetch_bucket_size": 0, "stage3_max_reuse_distance": 0}),
         # No persistent (ungathered-at-step-end) small parameters.
         ("mlp", 2, 3, "adam", {"stage3_param_persistence_threshold": 0}),
         # Small buckets: reductions during backward.
         ("mlp", 2, 3, "adam", {"reduce_bucket_size": 300000}),
         ("llama", 2, 3, "adam", {}),
         ("mlp", 4, 3, "adam", {}),
         # Each rule of the release alone.
         ("mlp", 2, 3, "adam", {"stage3_prefetch_bucket_size": 0}),
         ("mlp", 2, 3, "adam", {"stage3_max_reuse_distance": 0}),
         # Every parameter persistent: gathered from one step's end to the
         # next step's start.
         ("mlp", 2, 3, "adam", {"stage3_param_persistence_threshold": 1000000}),
         # Every weight larger than the bucket.
         ("mlp", 2, 3, "adam", {"reduce_bucket_size": 100000}),
         ("llama", 2, 3, "adam", {"reduce_bucket_size": 1000000}),
         ("llama", 2, 3, "adam", {"bf16": True}),
         # Bucketed prefetch (a fetch prefetches about two weights), a cap
         # on what is gathered, and the optimizer stepping sub-groups.
         ("mlp", 2, 3, "adam", {"stage3_prefetch_bucket_size": 300000}),
         ("mlp", 2, 3, "adam", {"stage3_max_live_parameters": 600000}),
         ("mlp", 2, 3, "adam", {"sub_group_size": 300000}),
         # A transformer gathered in windows: per-module prefetch within a
         # cap, releases by reuse distance.
         ("llama", 2, 3, "adam", {"stage3_prefetch_bucket_size": 200000,
                                  "stage3_max_live_parameters": 1000000,
                                  "reduce_bucket_size": 1000000}),
         ("llama", 2, 3, "adam", {"stage3_prefetch_bucket_size": 0,
                                  "stage3_max_reuse_distance": 0,
                                  "reduce_bucket_size": 1000000}),
         # LoRA: the frozen base partitioned and gathered too.
         ("llama", 2, 3, "adam", {"lora": True, "reduce_bucket_size": 1000000}),
         # Gradient accumulation: each micro-batch's gradients are
         # reduce-scattered into the partitions (added after the first).
         ("mlp", 2, 3, "adam", {"gradient_accumulation_steps": 2}),
         ("llama", 2, 3, "adam", {"gradient_accumulation_steps": 2, "reduce_bucket_size": 1000000}),
         # Gradient accumulation at stages 1 and 2.
         ("mlp", 2, 2, "adam", {"gradient_accumulation_steps": 2}),
         ("mlp", 2, 1, "adam", {"gradient_accumulation_steps": 2}),
         ("mlp", 2, 2, "sgd", {"gradient_accumulation_steps": 2, "reduce_bucket_size": 300000}),
         ("llama", 2, 2, "adam", {"gradient_accumulation_steps": 2, "reduce_bucket_size": 1000000}),
         # Inference: forward under torch.no_grad(), no optimizer.
         ("mlp", 2, 3, "none", {"inference": True}),
         ("mlp", 2, 3, "none", {"inference": True, "stage3_prefetch_bucket_size": 0}),
         ("llama", 2, 3, "none", {"inference": True}),
         ("llama", 2, 3, "none", {"inference": True, "stage3_prefetch_bucket_size": 200000,
                                  "stage3_max_live_parameters": 1000000}),
         # transformers' own loss, and Liger-Kernel's kernels with theirs
         # (apply_liger_kernel_to_llama(): RMSNorm, SwiGLU, RoPE, the fused
         # loss), at stages 1 and 2.
         ("llama", 2, 2, "adam", {"hf_loss": True, "reduce_bucket_size": 1000000}),
         ("llama", 2, 2, "adam", {"liger": True, "reduce_bucket_size": 1000000}),
         ("llama", 2, 1, "adam", {"liger": True, "reduce_bucket_size": 1000000})]


def case_id(name, world, stage, optimizer, extra):
    return f"{name}_zero{stage}_dp{world}_{optimizer}" + "".join(
        f"_{k}" if v is True else f"_{k}{v}" for k, v in sorted(extra.items()))


def use_nccl_like_collectives():
    """DeepSpeed's collectives as NCCL runs them. all_gather_into_tensor in
    place: the input is this rank's chunk of the output; the other chunks
    are zeroed and the output all-reduced in place. gloo's work object of
    an all-reduce holds its tensor until the next collective (a bucket
    view reduced in place keeps the whole gradient buffer alive into the
    step), so each all-reduce is followed by one on a 1-element tensor made
    once."""
    import deepspeed.comm.comm as dcomm
    backend = dcomm.cdb
    flush = torch.zeros(1)
    all_reduce = backend.all_reduce

    def all_reduce_released(tensor, *args, **kwargs):
        work = all_reduce(tensor, *args, **kwargs)
        dist.all_reduce(flush)
        return work

    backend.all_reduce = all_reduce_released

    def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
        ranks, rank = dist.get_world_size(group), dist.get_rank(group)
        chunk = input_tensor.numel()
        for r in range(ranks):
            if r != rank:
                output_tensor.narrow(0, r * chunk, chunk).zero_()
        if output_tensor.narrow(0, rank * chunk, chunk).data_ptr() != input_tensor.data_ptr():
            output_tensor.narrow(0, rank * chunk, chunk).copy_(input_tensor)
        dist.all_reduce(output_tensor, group=group)
        dist.all_reduce(flush)
        # Stage 3 gathers with async_op=True and waits on the handle.
        return Done() if async_op else None

    backend.all_gather_into_tensor = all_gather_into_tensor

    def reduce_scatter_tensor(output_tensor, input_tensor, op=dist.ReduceOp.SUM, group=None,
                              async_op=False):
        """Stage 3's reduce-scatter (reduce_scatter_coalesced: the output
        is this rank's chunk of the input) as an in-place all-reduce of the
        input: the same values in the output, no allocation (gloo's
        reduce_scatter_tensor copies its buffers)."""
        ranks, rank = dist.get_world_size(group), dist.get_rank(group)
        dist.all_reduce(input_tensor, op=backend._reduce_op(op), group=group)
        dist.all_reduce(flush)
        chunk = output_tensor.numel()
        assert input_tensor.numel() == chunk * ranks
        mine = input_tensor.narrow(0, rank * chunk, chunk)
        if mine.data_ptr() != output_tensor.data_ptr():
            output_tensor.copy_(mine)
        return Done() if async_op else None

    backend.reduce_scatter_tensor = reduce_scatter_tensor


class Done:
    """The work object of a collective emulated synchronously: complete."""

    def wait(self, *args, **kwargs):
        return True

    def is_completed(self):
        return True

    def synchronize(self):
        pass


def run_rank(rank, world, name, stage, optimizer, extra, in_place, trace, port, queue):
    os.environ.update(RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank),
                      MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), DS_ACCELERATOR="cpu")
    torch.set_num_threads(1)
    hook = ctypes.CDLL(None)  # memhook.so, preloaded
    for f in (hook.vram_live, hook.vram_peak, hook.vram_trace_live, hook.vram_trace_delta):
        f.restype = ctypes.c_longlong
    extra = dict(extra)
    liger = extra.pop("liger", False)
    hf_loss = extra.pop("hf_loss", False) or liger
    if liger:
        from liger import patch_liger
        patch_liger("llama", "all")
    import deepspeed
    deepspeed.init_distributed(dist_backend="gloo")
    if in_place:
        use_nccl_like_collectives()
    start = hook.vram_live()
    torch.manual_seed(0)
    model, _, x, y = build(name)
    if extra.pop("lora", False):
        from peft import LoraConfig, get_peft_model
        model.lm = get_peft_model(model.lm, LoraConfig(
            r=8, lora_alpha=16, lora_dropout=0.0, target_modules=["q_proj", "v_proj"]))
    inference = extra.pop("inference", False)
    opt = (None if inference
           else torch.optim.SGD(model.parameters(), lr=0.01) if optimizer == "sgd"
           else torch.optim.Adam(model.parameters(), lr=1e-3))
    bf16 = extra.pop("bf16", False)
    if bf16 and x.is_floating_point():
        x = x.to(torch.bfloat16)
    accumulation = extra.pop("gradient_accumulation_steps", 1)
    config = {"train_micro_batch_size_per_gpu": x.shape[0],
              "gradient_accumulation_steps": accumulation,
              "zero_optimization": {"stage": stage, **extra}, "zero_allow_untested_optimizer": True,
              "steps_per_print": 10**9, "bf16": {"enabled": bf16}}
    # Inference (ZeRO-Inference): no optimizer, DeepSpeed's parameter
    # offload (DeepSpeedZeRoOffload) alone gathers and releases around each
    # module; each step is one forward without autograd.
    if inference:
        engine, _, _, _ = deepspeed.initialize(model=model.eval(), config=config)

        def step():
            with torch.no_grad():
                engine(x)
            hook.vram_mark(1)
    else:
        engine, _, _, _ = deepspeed.initialize(model=model, optimizer=opt, config=config)

    def train_step():
        # One optimizer step: `accumulation` micro-batches, engine.step()
        # after each (DeepSpeed steps the optimizer at the last).
        for _ in range(accumulation):
            loss = (engine(x, labels=y.view(x.shape)) if hf_loss
                    else F.cross_entropy(engine(x), y))
            hook.vram_mark(1)
            engine.backward(loss)
            hook.vram_mark(2)
            del loss
            engine.step()
            hook.vram_mark(3)

    if not inference:
        step = train_step

    step()
    step()
    dist.barrier()
    persistent = hook.vram_live() - start
    hook.vram_reset_peak()
    base = hook.vram_live()
    hook.vram_trace(int(trace))
    step()
    hook.vram_trace(0)
    row = {"rank": rank, "persistent": persistent,
           "cpu_step_peak_above_baseline": hook.vram_peak() - base}
    if trace:
        row["trace"] = [(hook.vram_trace_live(i) - base, hook.vram_trace_delta(i),
                         hook.vram_trace_mark(i)) for i in range(hook.vram_traced())]
    queue.put(row)


def print_trace(trace):
    small = 0
    for live, delta, mark in trace:
        if delta == 0 and mark:
            print(f"    MARK {mark} live {live:,} (smaller allocations {small:+,})")
            small = 0
        elif abs(delta) >= 65536:
            print(f"    {delta:+,} live {live:,} (smaller {small:+,})")
            small = 0
        else:
            small += delta


def main():
    import deepspeed
    # Liger's Triton kernels run in the interpreter, which must be on
    # before triton is imported in the ranks.
    os.environ["TRITON_INTERPRET"] = "1"
    preload_memhook()
    args = sys.argv[1:]
    if args[:1] == ["--trace"]:
        case, rank = args[1], int(args[2])
        name, world, stage, optimizer, extra = next(c for c in CASES if case_id(*c) == case)
        rows = run_ranks(run_rank, world, world, name, stage, optimizer, extra, True, True)
        print({k: v for k, v in rows[rank].items() if k != "trace"})
        print_trace(rows[rank]["trace"])
        return
    rows = []
    for name, world, stage, optimizer, extra in CASES:
        case = case_id(name, world, stage, optimizer, extra)
        if args and case not in args:
            continue
        ranks = run_ranks(run_rank, world, world, name, stage, optimizer, extra, True, False)
        gloo = run_ranks(run_rank, world, world, name, stage, optimizer, extra, False, False)
        keys = {k: v for k, v in extra.items()
                if k not in ("bf16", "lora", "gradient_accumulation_steps", "inference",
                             "hf_loss", "liger")}
        row = {"id": case, "model": name, "world_size": world, "stage": stage,
               "optimizer": optimizer, "precision": "bf16" if extra.get("bf16") else "fp32",
               **({"lora": "peft r=8, alpha=16, dropout 0, q_proj and v_proj"}
                  if extra.get("lora") else {}),
               **({"gradient_accumulation_steps": extra["gradient_accumulation_steps"]}
                  if "gradient_accumulation_steps" in extra else {}),
               **({"mode": "inference"} if extra.get("inference") else {}),
               **({"loss": "transformers (labels given to the model)"}
                  if extra.get("hf_loss") else {}),
               **({"loss": "Liger's fused linear cross-entropy (labels given to the model)",
                   "liger_kernels": ["rope", "rms_norm", "swiglu", "fused_linear_cross_entropy"]}
                  if extra.get("liger") else {}),
               "zero_optimization": {"stage": stage, **keys},
               **rank_figures(ranks, gloo)}
        print(row, flush=True)
        rows.append(row)
    version = torch.__version__.split("+")[0]
    out = (ROOT / "benchmarks" / "accuracy" / "results" /
           f"zero-torch-{version}-deepspeed-{deepspeed.__version__}-cpu.json")
    measured_with = (f"torch {torch.__version__} cpu (PyPI wheel), deepspeed {deepspeed.__version__} "
                     f"(DS_ACCELERATOR=cpu, gloo), {platform.platform()}, {datetime.date.today()}")
    write_table(out, rows, measured_with, args)


if __name__ == "__main__":
    main()
