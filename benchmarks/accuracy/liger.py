"""Liger-Kernel's kernels in transformers' causal LMs, torch 2.x on the CPU.

LigerFusedLinearCrossEntropy (liger_kernel.ops.fused_linear_cross_entropy)
computes lm_head and the cross-entropy chunk by chunk of tokens and their
gradients in the forward, so no [tokens, vocab] logits exist: what
`apply_liger_kernel_to_<model>(fused_linear_cross_entropy=True)` (and
Trainer's use_liger_kernel) gives a model called with labels. A row's
`kernels` says what is patched in: "model" nothing (transformers' loss),
"liger" that loss alone (rope, rms_norm, swiglu and cross_entropy False),
"all" apply_liger_kernel_to_<model>()'s defaults as use_liger_kernel=True
applies them (rope, rms_norm, swiglu and the fused loss), and "rms_norm",
"swiglu" or "rope" that kernel alone with transformers' loss; a
"_checkpoint" suffix adds model.gradient_checkpointing_enable(
gradient_checkpointing_kwargs={"use_reentrant": False}) (each decoder
layer under torch.utils.checkpoint; use_cache is False anyway). Liger's
kernels are Triton's; on the CPU they run in Triton's interpreter
(TRITON_INTERPRET=1), which works on the tensors' own storage (its NumPy
blocks are not PyTorch's allocator's and memhook does not count them).
Triton 3.9's interpreter passes a float argument as a Python float and
runs libdevice's rsqrt as a stub: interpreter_fixes() wraps floats as
float32 scalars (as compiled Triton passes them) and computes rsqrt as
1 / sqrt, which allocates nothing of PyTorch's either. And each launch
leaves its arguments' storages in reference cycles (GridExecutor's
recursive _to_cpu/_from_cpu closures and their `storages` dicts), alive
until Python's cyclic collector runs, which compiled Triton never does:
interpreter_fixes() collects them as each launch returns.

Each case (config of test/Inputs/hf/small, dtype fp32 or bf16
(model.to(torch.bfloat16)), "full" training or "lora" (peft, r=8,
alpha=16, dropout 0.05, all-linear: lm_head frozen), kernels (above),
tokens [BATCH, SEQ]) is built
with AutoModelForCausalLM.from_config (torch.manual_seed(0), model.train(),
sdpa) on ids from a Generator seeded 0, labels = ids, use_cache=False.
Per row:
  - saved_activation_bytes: the unique storages packed by
    saved_tensors_hooks during one forward with labels (the loss is in it),
    minus parameters, buffers, ids and labels;
  - persistent, cpu_step_peak_above_baseline: model(ids, labels=ids,
    use_cache=False).loss, backward, SGD(lr=0.01).step(),
    zero_grad(set_to_none=True), each case in its own spawned process (a
    gloo group of one, torch.set_num_threads(1)), counted by memhook/memhook.c
    with gloo_ranks.steady_step_bytes (two warm-up steps, then one).

    benchmarks/accuracy/truth-env.sh python3 benchmarks/accuracy/liger.py [CASE...]

writes results/liger-torch-<torch>-transformers-<version>-liger-<version>-cpu.json;
given case ids (e.g. llama_fp32_full_liger_b2_t128), runs only those and
replaces or adds their rows.
"""
import os

os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported, in every process

import ctypes
import datetime
import gc
import importlib.metadata
import pathlib
import platform
import sys

import torch
import torch.distributed as dist

from gloo_ranks import preload_memhook, run_ranks, steady_step_bytes, write_table
from hf_truth import storage_of

ROOT = pathlib.Path(__file__).resolve().parents[2]
SMALL = ROOT / "test" / "Inputs" / "hf" / "small"
# (config, dtype, training, kernels, batch, seq)
CASES = ([(c, d, "full", l, 2, 128) for c in ("llama", "qwen2") for d in ("fp32", "bf16")
          for l in ("model", "liger")] +
         [("llama", d, "lora", l, 2, 128) for d in ("fp32", "bf16") for l in ("model", "liger")] +
         [("llama", "fp32", "full", l, 1, 100) for l in ("model", "liger")] +
         [("llama", d, "full", k, 2, 128) for d in ("fp32", "bf16")
          for k in ("all", "rms_norm", "swiglu", "rope")] +
         [(c, "fp32", "full", k, 2, 128) for c in ("qwen2", "qwen3", "mistral") for k in ("model", "all")
          if (c, k) != ("qwen2", "model")] +
         [("llama", d, "lora", "all", 2, 128) for d in ("fp32", "bf16")] +
         [("llama", "fp32", "full", k, 2, 128) for k in ("model_checkpoint", "all_checkpoint")])
# What apply_liger_kernel_to_<model> patches in for each `kernels`.
KERNELS = {"model": (), "liger": ("fused_linear_cross_entropy",),
           "all": ("rope", "rms_norm", "swiglu", "fused_linear_cross_entropy"),
           "rms_norm": ("rms_norm",), "swiglu": ("swiglu",), "rope": ("rope",)}


def case_id(config, dtype, training, kernels, batch, seq):
    return f"{config}_{dtype}_{training}_{kernels}_b{batch}_t{seq}"


def interpreter_fixes():
    """Triton 3.9's interpreter, as compiled Triton runs Liger (module docstring)."""
    import numpy as np
    import triton.language as tl
    import triton.runtime.interpreter as interpreter
    import liger_kernel.ops.rms_norm as rms_norm
    convert = interpreter._implicit_cvt

    def convert_float(arg):
        if isinstance(arg, float):
            handle = interpreter.TensorHandle(np.array([arg], dtype=np.float32), tl.float32)
            return tl.tensor(handle, tl.float32)
        return convert(arg)

    interpreter._implicit_cvt = convert_float
    rms_norm.rsqrt = lambda x: 1.0 / tl.sqrt(x)
    launch = interpreter.GridExecutor.__call__

    def launch_and_collect(self, *args, **kwargs):
        launch(self, *args, **kwargs)
        gc.collect()

    interpreter.GridExecutor.__call__ = launch_and_collect


def patch_liger(model_type, kernels):
    import liger_kernel.transformers as lt
    interpreter_fixes()
    on = KERNELS[kernels]
    getattr(lt, f"apply_liger_kernel_to_{model_type}")(
        cross_entropy=False,
        **{k: k in on for k in ("rope", "rms_norm", "swiglu", "fused_linear_cross_entropy")})


def saved_bytes(model, ids):
    excl = {storage_of(t)[0] for t in [*model.parameters(), *model.buffers(), ids]}
    seen = {}

    def pack(t):
        ptr, nb = storage_of(t)
        if ptr not in excl:
            seen.setdefault(ptr, nb)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss = model(ids, labels=ids, use_cache=False).loss
    del loss
    return sum(seen.values())


def run_case(rank, case, port, queue):
    from transformers import AutoConfig, AutoModelForCausalLM
    name, dtype, training, kernels, batch, seq = case
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=0, world_size=1)
    torch.set_num_threads(1)
    hook = ctypes.CDLL(None)  # memhook.so, preloaded
    hook.vram_live.restype = hook.vram_peak.restype = ctypes.c_longlong
    config = AutoConfig.from_pretrained(SMALL / f"{name}.json")
    checkpoint = kernels.endswith("_checkpoint")
    kernels = kernels.removesuffix("_checkpoint")
    if kernels != "model":
        patch_liger(config.model_type, kernels)
    start = hook.vram_live()
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config, attn_implementation="sdpa")
    if dtype == "bf16":
        model = model.to(torch.bfloat16)
    if training == "lora":
        from peft import LoraConfig, get_peft_model
        model = get_peft_model(model, LoraConfig(r=8, lora_alpha=16, lora_dropout=0.05,
                                                 target_modules="all-linear"))
    if checkpoint:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.train()
    ids = torch.randint(0, config.vocab_size, (batch, seq), generator=torch.Generator().manual_seed(0))
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.01)

    def step():
        opt.zero_grad(set_to_none=True)
        out = model(ids, labels=ids, use_cache=False).loss
        out.backward()
        del out
        opt.step()

    persistent, peak = steady_step_bytes(hook, start, step, opt)
    queue.put({"rank": rank, "saved_activation_bytes": saved_bytes(model, ids),
               "persistent": persistent, "cpu_step_peak_above_baseline": peak})
    dist.destroy_process_group()


def main():
    import transformers
    preload_memhook()
    only = [a for a in sys.argv[1:] if not a.startswith("-")]
    rows = []
    for case in CASES:
        cid = case_id(*case)
        if only and cid not in only:
            continue
        name, dtype, training, kernels, batch, seq = case
        on = KERNELS[kernels.removesuffix("_checkpoint")]
        (r,) = run_ranks(run_case, 1, case)
        del r["rank"]
        row = {"id": cid, "config": f"test/Inputs/hf/small/{name}.json",
               "dtype": {"fp32": "float32", "bf16": "bfloat16"}[dtype], "training": training,
               "lora": ({"r": 8, "alpha": 16, "dropout": 0.05, "targets": "all-linear"}
                        if training == "lora" else None),
               "loss": "liger" if "fused_linear_cross_entropy" in on else "model",
               "liger_kernels": list(on), "gradient_checkpointing": kernels.endswith("_checkpoint"),
               "batch": batch, "sequence_length": seq,
               "attn_implementation": "sdpa", "use_cache": False, **r}
        print(row, flush=True)
        rows.append(row)
    version = torch.__version__.split("+")[0]
    liger = importlib.metadata.version("liger-kernel")
    out = (ROOT / "benchmarks" / "accuracy" / "results" /
           f"liger-torch-{version}-transformers-{transformers.__version__}-liger-{liger}-cpu.json")
    measured_with = (f"torch {torch.__version__} cpu (PyPI wheel), transformers "
                     f"{transformers.__version__}, liger-kernel {liger} (Triton "
                     f"{importlib.metadata.version('triton')}, TRITON_INTERPRET=1), peft "
                     f"{importlib.metadata.version('peft')}, {platform.platform()}, {datetime.date.today()}")
    write_table(out, rows, measured_with, only)


if __name__ == "__main__":
    main()
