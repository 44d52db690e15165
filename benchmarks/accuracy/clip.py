"""Gradient clipping (torch.nn.utils.clip_grad_norm_) in a training step, torch 2.x on the CPU.

transformers' Trainer clips every step (max_grad_norm=1.0): after
backward, clip_grad_norm_(model.parameters(), 1.0), then optimizer.step().
torch 2.x's _get_total_norm takes torch._foreach_norm of the gradients per
(device, dtype) group (a 0-d tensor each), stacks them and takes their norm;
_clip_grads_with_norm_ scales the gradients in place by the clamped
coefficient.

Per case (test/Inputs/hf/small/llama.json, fp32 or bf16 (model.to()),
SGD(lr=0.01) or AdamW(lr=1e-3, foreach), batch 2 x 128 tokens,
use_cache=False, the model's own loss, torch.manual_seed(0)):
  - gradients: how many the clip reads;
  - clip_peak_above_entry: the peak during clip_grad_norm_ above the live
    bytes at its call (memhook/memhook.c, preloaded);
  - cpu_step_peak_above_baseline with and without clipping: the third
    step's peak above the live bytes after its zero_grad.

    benchmarks/accuracy/truth-env.sh python3 benchmarks/accuracy/clip.py

writes results/clip-torch-<torch>-transformers-<version>-cpu.json.
"""
import datetime
import json
import pathlib
import platform
import sys

import memhook_preload

ROOT = pathlib.Path(__file__).resolve().parents[2]
CASES = [(d, o) for d in ("fp32", "bf16") for o in ("sgd", "adamw")]


def measure(hook, dtype, optim, clip):
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM
    config = AutoConfig.from_pretrained(ROOT / "test" / "Inputs" / "hf" / "small" / "llama.json")
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config, attn_implementation="sdpa")
    if dtype == "bf16":
        model = model.to(torch.bfloat16)
    model.train()
    ids = torch.randint(0, config.vocab_size, (2, 128), generator=torch.Generator().manual_seed(0))
    opt = (torch.optim.SGD(model.parameters(), lr=0.01) if optim == "sgd"
           else torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True))
    clip_peak = None
    for _ in range(3):
        opt.zero_grad(set_to_none=True)
        base = hook.vram_live()
        hook.vram_reset_peak()
        loss = model(ids, labels=ids, use_cache=False).loss
        loss.backward()
        del loss
        if clip:
            step_peak = hook.vram_peak()
            entry = hook.vram_live()
            hook.vram_reset_peak()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            clip_peak = hook.vram_peak() - entry
            hook.vram_reset_peak()
            opt.step()
            step_peak = max(step_peak, hook.vram_peak(), entry + clip_peak)
        else:
            opt.step()
            step_peak = hook.vram_peak()
    grads = sum(p.grad is not None for p in model.parameters())
    return grads, clip_peak, step_peak - base


def main():
    memhook_preload.reexec()
    import torch
    import transformers
    torch.set_num_threads(1)
    hook = memhook_preload.counter()
    rows = []
    for dtype, optim in CASES:
        grads, clip_peak, with_clip = measure(hook, dtype, optim, True)
        _, _, without = measure(hook, dtype, optim, False)
        row = {"id": f"llama_{dtype}_{optim}", "config": "test/Inputs/hf/small/llama.json",
               "dtype": {"fp32": "float32", "bf16": "bfloat16"}[dtype], "optimizer": optim,
               "batch": 2, "sequence_length": 128, "max_grad_norm": 1.0, "gradients": grads,
               "clip_peak_above_entry": clip_peak,
               "cpu_step_peak_above_baseline": with_clip,
               "cpu_step_peak_above_baseline_without_clip": without}
        print(row, flush=True)
        rows.append(row)
    version = torch.__version__.split("+")[0]
    out = (ROOT / "benchmarks" / "accuracy" / "results" /
           f"clip-torch-{version}-transformers-{transformers.__version__}-cpu.json")
    out.write_text(json.dumps({
        "measured_with": f"torch {torch.__version__} cpu (PyPI wheel), transformers "
                         f"{transformers.__version__}, {platform.platform()}, {datetime.date.today()}",
        "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
