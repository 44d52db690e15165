"""What the distributed measurements share (ddp.py, fsdp.py, tp.py).

Each runs every rank of a gloo process group as a process on this machine
and counts, per rank, the bytes PyTorch's CPU allocator holds with the
preloaded allocation counter memhook/memhook.c.
"""
import json
import os
import pathlib
import socket
import subprocess
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def preload_memhook():
    """Builds memhook.so and preloads it into the rank processes spawned
    after this call (the profiler misses frees made by gloo's threads)."""
    lib = pathlib.Path(tempfile.mkdtemp()) / "memhook.so"
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", str(lib),
                    str(HERE / "memhook" / "memhook.c"), "-ldl", "-lpthread"], check=True)
    os.environ["LD_PRELOAD"] = str(lib)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_ranks(target, world, *args):
    """Runs target(rank, *args, port, queue) in `world` spawned processes;
    each puts one dict with its "rank" on the queue. Returns them by rank."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=target, args=(r, *args, port, queue)) for r in range(world)]
    for p in procs:
        p.start()
    rows = sorted((queue.get() for _ in procs), key=lambda r: r["rank"])
    for p in procs:
        p.join()
        assert p.exitcode == 0
    return rows


def rank_figures(ranks, gloo):
    """A case's figures per rank (the rows run_ranks returns): with
    in-place collectives, and with gloo's own (`gloo_collectives`)."""
    def figures(rows):
        return {"persistent": [r["persistent"] for r in rows],
                "cpu_step_peak_above_baseline": [r["cpu_step_peak_above_baseline"] for r in rows]}
    return {**figures(ranks), "gloo_collectives": figures(gloo)}


def write_table(out, rows, measured_with, only):
    """Writes the results table: all rows, or with `only` (case ids given on
    the command line) replaces or adds those rows, each stating what
    measured it."""
    if only and out.exists():
        table = json.loads(out.read_text())
        for row in rows:
            row["measured_with"] = measured_with
            table["rows"] = [r for r in table["rows"] if r["id"] != row["id"]] + [row]
    else:
        table = {"measured_with": measured_with, "rows": rows}
    out.write_text(json.dumps(table, indent=1) + "\n")
    print(f"wrote {out}")


def train_step(model, opt, x, y):
    """One step as training loops write it."""
    opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    del loss
    opt.step()


def steady_step_bytes(hook, start, step, opt):
    """Runs `step` twice to warm up, then once more: returns the bytes live
    after the third zero_grad counted from `start` (persistent), and that
    step's peak above the live bytes after its zero_grad, as measure.py
    counts cpu_step_peak_above_baseline. `hook` is memhook.so."""
    step()
    step()
    opt.zero_grad(set_to_none=True)
    dist.barrier()
    persistent = hook.vram_live() - start
    hook.vram_reset_peak()
    base = hook.vram_live()
    step()
    return persistent, hook.vram_peak() - base


class FlatLogits(nn.Module):
    """transformers' causal LM from a config of test/Inputs/hf/small (sdpa),
    returning its logits flattened to [B * T, V] for cross-entropy, as
    vram-opt's --hf training step does (transformers' own loss shifts the
    labels). A masked LM's config (BertForMaskedLM) builds that model, a
    sequence classifier's (BertForSequenceClassification) or an image
    classifier's (ViTForImageClassification, called on pixel values)
    returns its [B, labels] logits as they are. In eval it makes no DynamicCache (vram-opt's --mode=inference
    is use_cache=False); in training the cache holds the keys and values
    sdpa saves anyway. An encoder-decoder's config (T5ForConditionalGeneration)
    builds that model, called with the config's use_cache (an
    EncoderDecoderCache in training and in eval): given labels, it returns
    the loss the model computes itself (it shifts the labels right into
    its decoder_input_ids); given decoder_input_ids, the decoder's logits
    flattened."""

    def __init__(self, config_name):
        super().__init__()
        from transformers import (AutoConfig, AutoModelForCausalLM,
                                  AutoModelForImageClassification, AutoModelForMaskedLM,
                                  AutoModelForSeq2SeqLM, AutoModelForSequenceClassification)
        self.config = AutoConfig.from_pretrained(ROOT / "test" / "Inputs" / "hf" / "small" /
                                                 f"{config_name}.json")
        # A masked LM (BertForMaskedLM) or a sequence classifier
        # (BertForSequenceClassification) is an encoder: no cache; the
        # classifier's logits are one row per sequence.
        architectures = self.config.architectures or []
        self.vision = any(a.endswith("ForImageClassification") for a in architectures)
        self.classifier = self.vision or any(a.endswith("ForSequenceClassification")
                                             for a in architectures)
        self.encoder = self.classifier or any(a.endswith("ForMaskedLM") for a in architectures)
        self.seq2seq = any(a.endswith("ForConditionalGeneration") for a in architectures)
        auto = (AutoModelForImageClassification if self.vision else
                AutoModelForSequenceClassification if self.classifier else
                AutoModelForMaskedLM if self.encoder else
                AutoModelForSeq2SeqLM if self.seq2seq else AutoModelForCausalLM)
        self.lm = auto.from_config(self.config, attn_implementation="sdpa")

    def forward(self, ids, labels=None, decoder_input_ids=None):
        if self.seq2seq:
            out = self.lm(input_ids=ids, labels=labels, decoder_input_ids=decoder_input_ids)
            return out.logits.flatten(0, 1) if labels is None else out.loss
        kwargs = {} if self.encoder else {"use_cache": self.training}
        if labels is not None:  # the model's own loss (ForCausalLMLoss, or Liger's)
            return self.lm(ids, labels=labels, **kwargs).loss
        logits = self.lm(ids, **kwargs).logits
        return logits if self.classifier else logits.flatten(0, 1)


# Buffers the in-place collectives reduce in, by dtype: made during the
# warm-up steps, then reused, so that gloo's threads never hold a tensor
# FSDP2 frees.
SCRATCH = {}


def scratch_bytes():
    return sum(t.numel() * t.element_size() for t in SCRATCH.values())


def use_in_place_collectives():
    """FSDP2's all-gather and reduce-scatter as all-reduces in a scratch buffer.

    gloo's all_gather_single and reduce_scatter_single allocate copies of
    their buffers, and gloo's worker threads hold the tensors of a
    collective until its work object dies, so when FSDP2's buffers are
    freed depends on thread scheduling (ranks differ). NCCL, on the GPUs
    vram-opt models, allocates none through PyTorch. Here each collective
    copies into a scratch buffer made once (excluded from the figures),
    all-reduces it in place and copies the result out: the same values, and
    the measured bytes are FSDP2's own."""
    def scratch(numel, like):
        buf = SCRATCH.get(like.dtype)
        if buf is None or buf.numel() < numel:
            SCRATCH[like.dtype] = buf = torch.empty(numel, dtype=like.dtype)
        return buf[:numel]

    def all_gather_single(output_tensor, input_tensor, group=None, async_op=False):
        ranks, rank = group.size(), group.rank()
        chunk = input_tensor.numel()
        buf = scratch(chunk * ranks, output_tensor)
        buf.zero_()
        buf.narrow(0, rank * chunk, chunk).copy_(input_tensor)
        dist.all_reduce(buf, group=group)
        output_tensor.copy_(buf)

    def reduce_scatter_single(output, input, group=None, op=dist.ReduceOp.SUM, async_op=False):
        buf = scratch(input.numel(), input)
        buf.copy_(input)
        dist.all_reduce(buf, op=op, group=group)
        chunk = input.numel() // group.size()
        output.copy_(buf.narrow(0, group.rank() * chunk, chunk))

    dist.all_gather_single = all_gather_single
    dist.reduce_scatter_single = reduce_scatter_single


def use_in_place_functional_collectives():
    """DTensor's all-gather and reduce-scatter (functional collectives) as
    NCCL allocates them, done with an all-reduce in a scratch buffer.

    gloo's all_gather_into_tensor and reduce_scatter_tensor copy their
    buffers on gloo's threads, which hold them until the work object dies
    (ranks differ by a tensor or two). NCCL writes into the output the
    functional op allocates. Here each collective allocates that output,
    fills it through the scratch buffer of use_in_place_collectives (made
    once, excluded from the figures) and returns it, followed by what
    torch's functions do around the collective: the chunk-and-cat copy of
    a gather along dim > 0, and the one before a scatter along dim > 0."""
    import torch.distributed._functional_collectives as funcol
    from torch._utils import _maybe_view_chunk_cat

    def scratch(numel, like):
        buf = SCRATCH.get(like.dtype)
        if buf is None or buf.numel() < numel:
            SCRATCH[like.dtype] = buf = torch.empty(numel, dtype=like.dtype)
        return buf[:numel]

    def process_group(group):  # DTensor passes (mesh, mesh dim)
        if isinstance(group, tuple):
            return group[0].get_group(group[1])
        return group if isinstance(group, dist.ProcessGroup) else group.get_group()

    def all_gather_single(self, gather_dim, group, tag=""):
        pg = process_group(group)
        ranks, rank = pg.size(), pg.rank()
        if gather_dim < 0:
            gather_dim += self.dim()
        chunk = self.numel()
        out = self.new_empty((self.shape[0] * ranks, *self.shape[1:]))
        buf = scratch(chunk * ranks, self)
        buf.zero_()
        buf.narrow(0, rank * chunk, chunk).copy_(self.reshape(-1))
        dist.all_reduce(buf, group=pg)
        out.view(-1).copy_(buf)
        return _maybe_view_chunk_cat(out, ranks, gather_dim) if gather_dim != 0 else out

    def reduce_scatter_single(self, reduceOp, scatter_dim, group, tag=""):
        pg = process_group(group)
        ranks, rank = pg.size(), pg.rank()
        if scatter_dim != 0:
            self = funcol._chunk_or_narrow_cat(self, ranks, narrow_dim=scatter_dim, cat_dim=0)
        assert reduceOp.lower() == "sum"
        buf = scratch(self.numel(), self)
        buf.copy_(self.reshape(-1))
        dist.all_reduce(buf, group=pg)
        out = self.new_empty((self.shape[0] // ranks, *self.shape[1:]))
        chunk = out.numel()
        out.view(-1).copy_(buf.narrow(0, rank * chunk, chunk))
        return out

    funcol.all_gather_single = all_gather_single
    funcol.reduce_scatter_single = reduce_scatter_single
