"""Packed batches (sequence packing without padding) in transformers' causal LMs, torch 2.x on the CPU.

A packed batch is what transformers' DataCollatorWithFlattening and TRL's
padding_free give: one row of token ids, [1, TOKENS], with position_ids
that restart at 0 at each document (here arange(DOC) repeated TOKENS // DOC
times), no attention_mask. transformers (masking_utils._preprocess_mask_arguments)
looks for packing in the position_ids only when there is neither an
attention_mask nor a cache: with use_cache=True (a DynamicCache in training
too) the row is plain causal; with use_cache=False sdpa gets a bool
[1, 1, T, T] mask, so no is_causal, and K/V repeated (repeat_kv) for GQA.

Each small config of test/Inputs/hf/small in CONFIGS (fp32; llama also bf16,
model.to(torch.bfloat16), sdpa, use_cache=False) is built with
AutoModelForCausalLM.from_config (torch.manual_seed(0), model.train(), the
configs' dropout) for attn_implementation "sdpa" and "eager", use_cache
False and True, on the same [1, TOKENS] ids (a Generator seeded 0) in two
layouts: "packed" (with those position_ids) and "plain" (no position_ids).
A config whose forward takes no position_ids is skipped (packed and plain).

Padded batches, for comparison (CONFIGS_PADDED, the same settings; llama
also bf16, sdpa, use_cache=False): [BATCH_PADDED, SEQ_PADDED] = [2, 128]
ids (the same Generator) with an int64 attention_mask and no position_ids,
in two layouts: "padded", the mask a tokenizer gives with right padding
(row 0 all ones, row 1's last PAD = 32 positions 0; labels = the ids with
-100 there), and "padded_plain", an all-ones mask (labels = the ids), which
transformers drops for sdpa (is_causal; eager still gets its float mask).
The encoders of CONFIGS_PADDED_ENCODERS (AutoModelForMaskedLM: bert,
roberta, distilbert, and bert-nodrop, bert without attention dropout so
that sdpa takes its fused kernel on the CPU) run the padded layouts too,
with the model's masked-LM loss and no use_cache (an encoder has no
cache); an all-ones mask is dropped for eager too there.
Per row:
  - saved_activation_bytes: one forward without labels (logits only),
    counted as hf_truth.py's saved_bytes counts: the unique storages packed
    by saved_tensors_hooks, minus parameters, buffers and the inputs
    (input_ids, position_ids, attention_mask, labels);
  - packing_detected: whether transformers' find_packed_sequence_indices
    ran and found documents during that forward; layer0_attention_mask:
    the attention_mask the first attention module received ("dtype[shape]",
    or null: none, sdpa's is_causal);
  - persistent, cpu_step_peak_above_baseline: a training step on the
    model's own loss, model(input_ids, position_ids=... or
    attention_mask=..., labels=..., use_cache=...).loss (packed and plain:
    labels = ids, as TRL passes them), backward,
    SGD(lr=0.01).step(), zero_grad(set_to_none=True), counted by
    memhook/memhook.c (preloaded) as tp.py counts its world-size-1 rows:
    each case runs in its own spawned process in a gloo group of one
    (gloo_ranks.run_ranks, torch.set_num_threads(1)), and
    gloo_ranks.steady_step_bytes gives, after two warm-up steps, the
    live bytes after the third zero_grad counted from before the model was
    built (persistent) and that step's peak above them. The forward
    without labels runs after that step (an identity pack hook keeps the
    storages it saves alive: they would count as persistent). In bf16 the
    persistent bytes include oneDNN's bf16 matmul state, which is not a tensor
    (llama: 11,244,584 B; without it, with torch.backends.mkldnn off, 3,822,144).

    benchmarks/accuracy/truth-env.sh python3 benchmarks/accuracy/packing.py [-v] [CASE...]

writes results/packing-torch-<torch>-transformers-<version>-cpu.json; given
case ids (e.g. llama_fp32_sdpa_nocache_packed), runs only those and replaces
or adds their rows (gloo_ranks.write_table). -v prints, for each case run
in both layouts of a pair (packed and plain, padded and padded_plain), the
saved storages (shape, dtype, storage bytes: count) that differ.
"""
import collections
import ctypes
import datetime
import inspect
import os
import pathlib
import platform
import sys

import torch
import torch.distributed as dist

from gloo_ranks import preload_memhook, run_ranks, steady_step_bytes, write_table
from hf_truth import storage_of

ROOT = pathlib.Path(__file__).resolve().parents[2]
SMALL = ROOT / "test" / "Inputs" / "hf" / "small"
CONFIGS = ["llama", "mistral", "qwen2", "qwen3", "gemma", "gpt2"]
TOKENS, DOC = 256, 64
CONFIGS_PADDED = ["llama", "qwen3", "gemma", "gpt2"]
CONFIGS_PADDED_ENCODERS = ["bert", "roberta", "distilbert", "bert-nodrop"]
BATCH_PADDED, SEQ_PADDED, PAD = 2, 128, 32
# The second layout of each pair, compared with the first by -v.
PAIRS = {"packed": "plain", "padded": "padded_plain"}
# (config, dtype, attn_implementation, use_cache, layout)
CASES = ([(c, "fp32", a, u, l) for c in CONFIGS for a in ("sdpa", "eager")
          for u in (False, True) for l in ("packed", "plain")] +
         [("llama", "bf16", "sdpa", False, l) for l in ("packed", "plain")] +
         [(c, "fp32", a, u, l) for c in CONFIGS_PADDED for a in ("sdpa", "eager")
          for u in (False, True) for l in ("padded", "padded_plain")] +
         [("llama", "bf16", "sdpa", False, l) for l in ("padded", "padded_plain")] +
         [(c, "fp32", a, False, l) for c in CONFIGS_PADDED_ENCODERS for a in ("sdpa", "eager")
          for l in ("padded", "padded_plain")])


def cache_kwargs(model, use_cache):
    """use_cache for a causal LM; nothing for an encoder, which has no cache."""
    return {} if model.config.model_type in ("bert", "roberta", "distilbert") else {
        "use_cache": use_cache}


def case_id(config, dtype, attn, use_cache, layout):
    return f"{config}_{dtype}_{attn}_{'cache' if use_cache else 'nocache'}_{layout}"


def inputs(vocab_size, layout):
    """The ids, the other model inputs (position_ids or attention_mask) and
    the labels of the training step."""
    if layout in ("packed", "plain"):
        ids = torch.randint(0, vocab_size, (1, TOKENS), generator=torch.Generator().manual_seed(0))
        pos = {"position_ids": torch.arange(DOC).repeat(TOKENS // DOC)[None]} if layout == "packed" else {}
        return ids, pos, ids
    ids = torch.randint(0, vocab_size, (BATCH_PADDED, SEQ_PADDED),
                        generator=torch.Generator().manual_seed(0))
    mask = torch.ones(BATCH_PADDED, SEQ_PADDED, dtype=torch.int64)
    if layout == "padded_plain":
        return ids, {"attention_mask": mask}, ids
    mask[1, -PAD:] = 0
    return ids, {"attention_mask": mask}, ids.masked_fill(mask == 0, -100)


def probe_forward(model, ids, pos, labels, use_cache):
    """The forward without labels: saved storages (as hf_truth.py counts
    them), whether packing was detected, and layer 0's attention mask."""
    from transformers import masking_utils
    excl = {storage_of(t)[0] for t in
            [*model.parameters(), *model.buffers(), ids, labels, *pos.values()]}
    seen, shapes = {}, collections.Counter()

    def pack(t):
        ptr, nb = storage_of(t)
        if ptr not in excl and ptr not in seen:
            seen[ptr] = nb
            shapes[(tuple(t.shape), str(t.dtype).removeprefix("torch."), nb)] += 1
        return t

    found, masks = [], []
    find = masking_utils.find_packed_sequence_indices
    masking_utils.find_packed_sequence_indices = lambda p: found.append(find(p)) or found[-1]
    attn = next(m for m in model.modules() if "Attention" in type(m).__name__)
    hook = attn.register_forward_pre_hook(
        lambda m, a, kw: masks.append(kw.get("attention_mask", a[1] if len(a) > 1 else None)),
        with_kwargs=True)
    try:
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            out = model(ids, **cache_kwargs(model, use_cache), **pos).logits
        del out
    finally:
        masking_utils.find_packed_sequence_indices = find
        hook.remove()
    mask = masks[0]
    return {"packing_detected": any(f is not None for f in found),
            "layer0_attention_mask": None if mask is None else
            f"{str(mask.dtype).removeprefix('torch.')}{list(mask.shape)}",
            "saved_activation_bytes": sum(seen.values())}, shapes


def run_case(rank, case, port, queue):
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForMaskedLM
    name, dtype, attn, use_cache, layout = case
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=0, world_size=1)
    torch.set_num_threads(1)
    hook = ctypes.CDLL(None)  # memhook.so, preloaded
    hook.vram_live.restype = hook.vram_peak.restype = ctypes.c_longlong
    start = hook.vram_live()
    config = AutoConfig.from_pretrained(SMALL / f"{name}.json")
    torch.manual_seed(0)
    auto = AutoModelForMaskedLM if name in CONFIGS_PADDED_ENCODERS else AutoModelForCausalLM
    model = auto.from_config(config, attn_implementation=attn)
    if dtype == "bf16":
        model = model.to(torch.bfloat16)
    model.train()
    ids, pos, labels = inputs(config.vocab_size, layout)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = model(ids, labels=labels, **cache_kwargs(model, use_cache), **pos).loss
        loss.backward()
        del loss
        opt.step()

    persistent, peak = steady_step_bytes(hook, start, step, opt)
    # After the step: an identity pack hook keeps the storages it saved
    # alive (the graph's saved outputs reference themselves).
    row, shapes = probe_forward(model, ids, pos, labels, use_cache)
    queue.put({"rank": rank, **row, "persistent": persistent,
               "cpu_step_peak_above_baseline": peak, "shapes": shapes})
    dist.destroy_process_group()


def takes_position_ids(name):
    from transformers import AutoConfig, AutoModelForCausalLM
    config = AutoConfig.from_pretrained(SMALL / f"{name}.json")
    cls = AutoModelForCausalLM._model_mapping[type(config)]
    return "position_ids" in inspect.signature(cls.forward).parameters


def main():
    import transformers
    preload_memhook()
    verbose = "-v" in sys.argv
    only = [a for a in sys.argv[1:] if not a.startswith("-")]
    skipped = [c for c in CONFIGS if not takes_position_ids(c)]
    for c in skipped:
        print(f"skipping {c}: its forward takes no position_ids")
    rows, shapes = [], {}
    for case in CASES:
        name, dtype, attn, use_cache, layout = case
        cid = case_id(*case)
        if (name in skipped and layout in ("packed", "plain")) or (only and cid not in only):
            continue
        (r,) = run_ranks(run_case, 1, case)
        shapes[case] = r.pop("shapes")
        del r["rank"]
        row = {"id": cid, "config": f"test/Inputs/hf/small/{name}.json",
               "dtype": {"fp32": "float32", "bf16": "bfloat16"}[dtype],
               "attn_implementation": attn, "use_cache": use_cache, "layout": layout,
               **({"tokens": TOKENS, "document_length": DOC} if layout in ("packed", "plain") else
                  {"tokens": BATCH_PADDED * SEQ_PADDED, "batch": BATCH_PADDED,
                   "sequence_length": SEQ_PADDED,
                   "padding": [0, PAD] if layout == "padded" else [0, 0]}), **r}
        print(row, flush=True)
        rows.append(row)
    if verbose:
        for case, first in shapes.items():
            other = PAIRS.get(case[4])
            second = shapes.get(case[:4] + (other,))
            if second is None:
                continue
            print(case_id(*case[:4], f"{case[4]} vs {other}"))
            for key in sorted(set(first) | set(second), key=str):
                if first[key] != second[key]:
                    print("   %-22s %-9s %9d bytes: %s %3d  %s %3d"
                          % (key + (case[4], first[key], other, second[key])))
    version = torch.__version__.split("+")[0]
    out = (ROOT / "benchmarks" / "accuracy" / "results" /
           f"packing-torch-{version}-transformers-{transformers.__version__}-cpu.json")
    measured_with = (f"torch {torch.__version__} cpu (PyPI wheel), transformers "
                     f"{transformers.__version__}, {platform.platform()}, {datetime.date.today()}")
    write_table(out, rows, measured_with, only)


if __name__ == "__main__":
    main()
