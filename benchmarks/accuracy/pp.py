"""Pipeline parallelism under torch 2.x on the CPU (issue 24, --parallel=pp=N).

Each rank of a gloo process group on this machine builds transformers'
LlamaForCausalLM (sdpa) from a config of test/Inputs/hf/small and keeps
its own stage of it, as torchtitan splits a decoder for
torch.distributed.pipelining (the manual PipelineStage frontend): the
decoder layers in contiguous runs (the earlier stages one more when they
do not divide), the embedding on the first stage, the final norm and
lm_head on the last; every stage computes the rotary tables itself
(rotary_emb has no parameters). A stage calls its decoder layers as
LlamaModel does without a cache (position_ids = arange(seq), no mask:
sdpa's is_causal), and the last stage returns the logits flattened to
[B * T, V]. The schedule (ScheduleGPipe or Schedule1F1B) splits each
step's [M x BATCH, SEQ] input and its targets into M micro-batches and
computes cross_entropy per micro-batch on the last stage;
`step(x, target=y, return_outputs=False)` as torchtitan calls it.

Each rank trains as fsdp.py does (zero_grad(set_to_none=True), two
warm-up steps, then one step: gloo_ranks.steady_step_bytes) and records, counting the bytes PyTorch's
CPU allocator holds in every thread (memhook/memhook.c, preloaded):
  - persistent: the live bytes after the third zero_grad, counted from
    before the model was built (the stage's parameters and optimizer
    state, the whole model's until the other stages' are dropped, which
    the count excludes: it starts after the split; the input batch);
  - cpu_step_peak_above_baseline: the peak of one steady-state step above
    the live bytes after its zero_grad.

    benchmarks/accuracy/truth-env.sh python3 benchmarks/accuracy/pp.py

writes results/pp-torch-<version>-transformers-<version>-cpu.json, the
reference of test/Transforms/parallel-pp.test; given case ids, runs only
those and replaces or adds their rows (write_table).
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

from gloo_ranks import preload_memhook, run_ranks, steady_step_bytes, write_table

ROOT = pathlib.Path(__file__).resolve().parents[2]
# (config, stages, schedule, micro-batches, optimizer[, "checkpoint"]
#  [, "layers=A,B,..." decoder layers per stage][, "v=V" stages per rank,
#  interleaved])
CASES = [("llama", 2, "gpipe", 2, "sgd"), ("llama", 2, "1f1b", 2, "sgd"),
         ("llama", 2, "gpipe", 4, "sgd"), ("llama", 2, "1f1b", 4, "sgd"),
         ("llama", 2, "1f1b", 4, "adam"),
         ("llama4", 4, "1f1b", 4, "sgd"), ("llama4", 4, "gpipe", 4, "sgd"),
         ("llama4", 4, "1f1b", 8, "adam"),
         # Other decoders of the LLaMA layout: Qwen3 (q/k norms), Mixtral
         # (mixture of experts, transformers' grouped_mm experts).
         ("qwen3", 2, "gpipe", 2, "sgd"), ("mixtral", 2, "1f1b", 2, "adam"),
         # Activation checkpointing of every decoder layer
         # (torch.utils.checkpoint, use_reentrant=False), as torchtitan's
         # full AC: --checkpoint='*'.
         ("llama4", 2, "1f1b", 4, "sgd", "checkpoint"),
         # An explicit split (--pp-layers=3,1).
         ("llama4", 2, "1f1b", 2, "sgd", "layers=3,1"),
         # ScheduleInterleaved1F1B: two stages per rank (rank r holds stages
         # r and r + 2), one decoder layer each.
         ("llama4", 2, "interleaved", 2, "sgd"), ("llama4", 2, "interleaved", 4, "sgd"),
         # Micro-batches not a multiple of the ranks (one round of 3) and
         # three rounds of 2; 4 ranks (llama8.json: 8 decoder layers, one a
         # stage); 4 stages a rank.
         ("llama4", 2, "interleaved", 3, "sgd"), ("llama4", 2, "interleaved", 6, "sgd"),
         ("llama8", 4, "interleaved", 4, "sgd"), ("llama8", 4, "interleaved", 8, "sgd"),
         ("llama8", 2, "interleaved", 4, "sgd", "v=4")]
BATCH, SEQ = 2, 256  # one micro-batch
VIRTUAL_STAGES = 2  # stages per rank under ScheduleInterleaved1F1B (v=V: V)


def stage_layers(layers, stages, index, split=None):
    """torchtitan's even split: contiguous runs, the earlier stages one
    more when `stages` does not divide `layers`; or `split`, the layers of
    each stage."""
    if split:
        start = sum(split[:index])
        return range(start, start + split[index])
    base, extra = divmod(layers, stages)
    start = index * base + min(index, extra)
    return range(start, start + base + (1 if index < extra else 0))


class Stage(nn.Module):
    def __init__(self, lm, index, stages, checkpoint=False, split=None):
        super().__init__()
        self.checkpoint = checkpoint
        model = lm.model
        self.first, self.last = index == 0, index == stages - 1
        self.embed_tokens = model.embed_tokens if self.first else None
        self.layers = nn.ModuleList(
            model.layers[i] for i in stage_layers(len(model.layers), stages, index, split))
        self.rotary_emb = model.rotary_emb
        self.norm = model.norm if self.last else None
        self.lm_head = lm.lm_head if self.last else None

    def forward(self, h):
        if self.first:
            h = self.embed_tokens(h)
        position_ids = torch.arange(h.shape[1]).unsqueeze(0)
        position_embeddings = self.rotary_emb(h, position_ids)
        for layer in self.layers:
            if self.checkpoint:
                from torch.utils.checkpoint import checkpoint
                h = checkpoint(layer, h, attention_mask=None, position_ids=position_ids,
                               position_embeddings=position_embeddings, use_reentrant=False)
            else:
                h = layer(h, attention_mask=None, position_ids=position_ids,
                          position_embeddings=position_embeddings)
            if isinstance(h, tuple):
                h = h[0]
        if self.last:
            h = self.lm_head(self.norm(h)).flatten(0, 1)
        return h


def config_path(name):
    return ROOT / "test" / "Inputs" / "hf" / "small" / f"{name}.json"


def run_rank(rank, ranks, name, schedule, microbatches, optimizer, checkpoint, split, virtual,
             port, queue):
    from torch.distributed.pipelining import (PipelineStage, Schedule1F1B, ScheduleGPipe,
                                              ScheduleInterleaved1F1B)
    from transformers import AutoConfig, AutoModelForCausalLM
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=ranks)
    torch.set_num_threads(1)
    hook = ctypes.CDLL(None)  # memhook.so, preloaded
    hook.vram_live.restype = hook.vram_peak.restype = ctypes.c_longlong
    torch.manual_seed(0)
    config = AutoConfig.from_pretrained(config_path(name))
    lm = AutoModelForCausalLM.from_config(config, attn_implementation="sdpa")
    # Interleaved: this rank's stages are rank, rank + ranks, ...
    local = virtual if schedule == "interleaved" else 1
    stages = ranks * local
    indices = [rank + k * ranks for k in range(local)]
    modules = [Stage(lm, i, stages, checkpoint, split) for i in indices]
    del lm
    import gc
    gc.collect()
    # The stages' own parameters: the rest of the model is gone.
    start = hook.vram_live() - sum(
        t.numel() * t.element_size() for m in modules
        for t in list(m.parameters()) + list(m.buffers()))
    x = torch.randint(0, config.vocab_size, (microbatches * BATCH, SEQ))
    y = torch.randint(0, config.vocab_size, (microbatches * BATCH * SEQ,))
    pipeline = [PipelineStage(m, i, stages, torch.device("cpu")) for m, i in zip(modules, indices)]
    if schedule == "interleaved":
        sched = ScheduleInterleaved1F1B(pipeline, n_microbatches=microbatches,
                                        loss_fn=F.cross_entropy)
    else:
        kind = {"gpipe": ScheduleGPipe, "1f1b": Schedule1F1B}[schedule]
        sched = kind(pipeline[0], n_microbatches=microbatches, loss_fn=F.cross_entropy)
    params = [p for m in modules for p in m.parameters()]
    opt = (torch.optim.SGD(params, lr=0.01) if optimizer == "sgd"
           else torch.optim.Adam(params, lr=1e-3))
    first = any(st.is_first for st in pipeline)
    last = any(st.is_last for st in pipeline)

    def step():
        opt.zero_grad(set_to_none=True)
        if first and last:
            sched.step(x, target=y, return_outputs=False)
        elif first:
            sched.step(x, return_outputs=False)
        elif last:
            sched.step(target=y, return_outputs=False)
        else:
            sched.step(return_outputs=False)
        opt.step()

    persistent, peak = steady_step_bytes(hook, start, step, opt)
    dist.barrier()
    queue.put({"rank": rank, "persistent": persistent, "peak": peak,
               # Interleaved: each local stage's layers.
               "layers": ([list(stage_layers(config.num_hidden_layers, stages, i, split))
                           for i in indices] if local > 1 else
                          list(stage_layers(config.num_hidden_layers, stages, rank, split)))})
    dist.destroy_process_group()


def main():
    preload_memhook()
    only = sys.argv[1:]
    rows = []
    for name, stages, schedule, microbatches, optimizer, *extra in CASES:
        checkpoint = "checkpoint" in extra
        split = next(([int(n) for n in e[len("layers="):].split(",")]
                      for e in extra if e.startswith("layers=")), None)
        virtual = next((int(e[len("v="):]) for e in extra if e.startswith("v=")),
                       VIRTUAL_STAGES)
        case = (f"{name}_pp{stages}_{schedule}_m{microbatches}_{optimizer}" +
                ("_checkpoint" if checkpoint else "") +
                ("_layers" + "-".join(map(str, split)) if split else "") +
                (f"_v{virtual}" if virtual != VIRTUAL_STAGES else ""))
        if only and case not in only:
            continue
        ranks = run_ranks(run_rank, stages, stages, name, schedule, microbatches, optimizer,
                          checkpoint, split, virtual)
        row = {"id": case, "model": name, "config": f"test/Inputs/hf/small/{name}.json",
               "world_size": stages, "pp": stages, "schedule": schedule,
               **({"virtual_stages": virtual} if schedule == "interleaved" else {}),
               "microbatches": microbatches, "optimizer": optimizer,
               **({"checkpoint": "each decoder layer (use_reentrant=False)"}
                  if checkpoint else {}),
               **({"pp_layers": split} if split else {}),
               "batch": BATCH, "seq": SEQ,
               "stage_layers": [r["layers"] for r in ranks],
               "persistent": [r["persistent"] for r in ranks],
               "cpu_step_peak_above_baseline": [r["peak"] for r in ranks]}
        print(row, flush=True)
        rows.append(row)
    import transformers
    version = torch.__version__.split("+")[0]
    out = (ROOT / "benchmarks" / "accuracy" / "results" /
           f"pp-torch-{version}-transformers-{transformers.__version__}-cpu.json")
    measured_with = (f"torch {torch.__version__} cpu (PyPI wheel), gloo, transformers "
                     f"{transformers.__version__}, {platform.platform()}, {datetime.date.today()}")
    write_table(out, rows, measured_with, only)


if __name__ == "__main__":
    main()
