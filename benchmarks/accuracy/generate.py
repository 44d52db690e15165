#!/usr/bin/env python3
"""Generation with a KV cache (issue 23), measured on the CPU with torch 2.x
and transformers' GenerationMixin.generate (greedy; DynamicCache, and
StaticCache with cache_implementation="static").

  benchmarks/accuracy/truth-env.sh python3 benchmarks/accuracy/generate.py [-v]

The small llama, gpt2, opt and t5 configs of test/Inputs/hf/small
(torch.manual_seed(0)), llama and t5 in float32 and bfloat16, the others in
float32 (t5 as AutoModelForSeq2SeqLM, its prompts' ids from 2 on: no
padding or end token from which generate() would infer a mask), saved and loaded with from_pretrained (attention "sdpa"), eval mode, torch.set_num_threads(1); prompts of random token ids
(batch x prompt_len), generate(max_new_tokens=T, do_sample=False; the
*_sample* rows do_sample=True with their warpers, torch.manual_seed(2); the
*_n4 rows beam search with num_beams=4) with no
end-of-sequence token, so that exactly T tokens are made; the *_padded
rows left-pad all rows but the first (left_padding_mask) and pass their
attention_mask. Per case:
- kv_cache_bytes: the returned cache's keys and values, summed (a
  StaticCache holds max_cache_len = prompt + T - 1 positions from its first
  update on);
- prefill_peak / decode_peak: the CPU allocator's peak above the live bytes
  before generate() (weights and the prompt), counted by memhook/memhook.c
  (preloaded), from the call up to the first logits processor call (the
  prefill forward and its float32 logits copy) and from the previous
  processor call to the last one (the last decode step, with the previous
  step's warpers and choice); the first is a warm-up call, the second is
  measured;
- decode_tail_peak (sampling rows): from the last processor call to
  generate()'s return (the last step's warpers, softmax and multinomial).

Writes results/generate-torch-<torch>-transformers-<transformers>-cpu.json;
given case ids, runs only those and replaces or adds their rows.
"""
import datetime
import json
import pathlib
import platform
import sys
import tempfile

import memhook_preload

ROOT = pathlib.Path(__file__).resolve().parents[2]
HERE = ROOT / "benchmarks" / "accuracy"
SMALL = ROOT / "test" / "Inputs" / "hf" / "small"

# (config, dtype, batch, prompt_len, max_new_tokens, cache_implementation,
#  padded[, sampling]): sampling is generate()'s do_sample=True with these
#  warper settings (GenerationConfig's defaults: temperature 1.0, top_k 50,
#  top_p 1.0).
CASES = ([("llama", d, b, p, t, c, False) for c in ("dynamic", "static")
          for d in ("fp32", "bf16")
          for b, p, t in ((2, 64, 32), (1, 16, 1), (4, 128, 8))] +
         [(m, "fp32", b, p, t, c, False) for c in ("dynamic", "static")
          for m in ("gpt2", "opt")
          for b, p, t in ((2, 64, 32), (1, 16, 1))] +
         # Left-padded prompts with their attention_mask, as a tokenizer
         # with padding_side="left" batches them.
         [("llama", d, b, p, t, c, True) for c in ("dynamic", "static")
          for d in ("fp32", "bf16")
          for b, p, t in ((2, 64, 32), (4, 128, 8))] +
         [(m, "fp32", 2, 64, 32, c, True) for c in ("dynamic", "static")
          for m in ("gpt2", "opt")] +
         # An encoder-decoder: the prompt encoded once, the decoder from its
         # start token, an EncoderDecoderCache (self- and cross-attention).
         [("t5", d, b, p, t, "dynamic", False) for d in ("fp32", "bf16")
          for b, p, t in ((2, 64, 32), (1, 16, 1), (4, 128, 8))] +
         # Sliding-window layers past their window (DynamicSlidingWindowLayer
         # keeps the last window - 1 positions): the decode steps crossing
         # it, and a prompt longer than it.
         [(m, "fp32", b, p, t, "dynamic", False)
          for m in ("mistral-window", "qwen2-window", "gemma3-window")
          for b, p, t in ((2, 48, 32), (2, 96, 8))] +
         # The same gemma3 layout within its window (gemma3.json: 512).
         [("gemma3", "fp32", 2, 48, 32, "dynamic", False)] +
         # Sampling (do_sample=True): the logits warpers' copies
         # (temperature, top-k, top-p, in transformers' order), softmax's
         # probabilities and multinomial's; the default top-k alone, each
         # warper alone, all three, and no warper at all.
         [("llama", "fp32", b, p, t, "dynamic", False, s)
          for b, p, t in ((2, 64, 32), (8, 16, 8))
          for s in ({}, {"top_k": 0}, {"temperature": 0.7, "top_k": 0},
                    {"top_k": 0, "top_p": 0.9},
                    {"temperature": 0.7, "top_k": 50, "top_p": 0.9})] +
         [("llama", "fp32", 8, 16, 8, "dynamic", False)] +
         [("llama", "bf16", 2, 64, 32, "dynamic", False,
           {"temperature": 0.7, "top_k": 50, "top_p": 0.9})] +
         [("gpt2", "fp32", 2, 64, 32, "dynamic", False,
           {"temperature": 0.7, "top_k": 50, "top_p": 0.9})] +
         # The repetition penalty (a logits processor: greedy too) and the
         # min-p warper.
         [("llama", "fp32", b, p, t, "dynamic", False, s)
          for b, p, t in ((8, 16, 8), (2, 64, 32))
          for s in ({"do_sample": False, "repetition_penalty": 1.2},
                    {"temperature": 0.7, "top_k": 50, "top_p": 0.9,
                     "repetition_penalty": 1.2})] +
         [("llama", "fp32", 8, 16, 8, "dynamic", False, {"top_k": 0, "min_p": 0.1})] +
         # Beam search (num_beams, greedy): the model runs on batch x beams
         # rows; _beam_search's bookkeeping, its log_softmax and the
         # DynamicCache's reorder_cache (index_select per layer) each step.
         [("llama", "fp32", b, p, t, "dynamic", False, {"do_sample": False, "num_beams": 4})
          for b, p, t in ((2, 64, 32), (1, 64, 32), (2, 16, 8))])


def sampling_suffix(sampling):
    """A case's id suffix for its choice of tokens: _sample (or _greedy
    with do_sample False), then the processors' settings given (t
    temperature, k top_k, p top_p, m min_p, r repetition_penalty)."""
    if sampling is None:
        return ""
    keys = (("temperature", "t"), ("top_k", "k"), ("top_p", "p"), ("min_p", "m"),
            ("repetition_penalty", "r"), ("num_beams", "n"))
    return ("_sample" if sampling.get("do_sample", True) else "_greedy") + "".join(
        "_%s%s" % (short, sampling[key]) for key, short in keys if key in sampling)


def left_padding_mask(batch, prompt):
    """The attention_mask of left-padded prompts: row i (i > 0) starts with
    i * prompt / (2 * batch) padding tokens (at least one), row 0 with
    none, so that the batch has padding whatever its size."""
    import torch
    mask = torch.ones(batch, prompt, dtype=torch.long)
    for i in range(1, batch):
        mask[i, :max(1, i * prompt // (2 * batch))] = 0
    if batch == 1:
        mask[0, :max(1, prompt // 4)] = 0
    return mask


def generate_peaks(model, ids, new_tokens, hook, before_call=lambda: None,
                   cache="dynamic", attention_mask=None, sampling=None, tail=None):
    """generate(max_new_tokens=new_tokens, greedy) from `ids`, twice (the
    first a warm-up): the peaks above the live bytes before the call up to
    each logits processor call (the prefill's first, then each decode
    step's), the generate() output, and the live bytes before the call.
    `before_call` runs before the baseline is read (a barrier across
    ranks)."""
    import torch
    import transformers
    peaks = []

    class Probe(transformers.LogitsProcessor):
        def __call__(self, input_ids, scores):
            peaks.append(hook.vram_peak() - base)
            hook.vram_reset_peak()
            return scores

    kwargs = dict(max_new_tokens=new_tokens, do_sample=sampling is not None,
                  logits_processor=transformers.LogitsProcessorList([Probe()]),
                  return_dict_in_generate=True)
    kwargs.update(sampling or {})
    if cache != "dynamic":
        kwargs["cache_implementation"] = cache
    if attention_mask is not None:
        kwargs["attention_mask"] = attention_mask
    for _ in range(2):
        peaks.clear()
        out = None
        # A StaticCache is made in each call, as long as the longest one of
        # an earlier call (_prepare_static_cache): each case sizes its own.
        if hasattr(model, "_previous_max_cache_length"):
            del model._previous_max_cache_length
        before_call()
        hook.vram_reset_peak()
        base = hook.vram_live()
        with torch.no_grad():
            out = model.generate(ids, **kwargs)
        if tail is not None:
            # From the last processor call to generate()'s return: the last
            # step's warpers and choice (with the whole cache).
            tail[:] = [hook.vram_peak() - base]
    return peaks, out, base


def kv_cache_bytes(out):
    """The returned cache's keys and values (a StaticCache's: all
    max_cache_len positions; an EncoderDecoderCache's self- and
    cross-attention caches)."""
    cache = out.past_key_values
    caches = ([cache.self_attention_cache, cache.cross_attention_cache]
              if hasattr(cache, "cross_attention_cache") else [cache])
    return sum(t.untyped_storage().nbytes() for c in caches for layer in c.layers
               for t in (layer.keys, layer.values))


def measure(model, config, name, dtype_name, batch, prompt, new_tokens, cache,
            padded, verbose, sampling=None):
    import torch
    hook = memhook_preload.counter()
    # Token ids from 2 on: no padding (0) or end-of-sequence (1) token,
    # from which generate() would infer an attention_mask.
    ids = torch.randint(2 if config.is_encoder_decoder else 0, config.vocab_size,
                        (batch, prompt), generator=torch.Generator().manual_seed(1))
    mask = None
    if padded:
        mask = left_padding_mask(batch, prompt)
        ids = ids.masked_fill(mask == 0, model.generation_config.pad_token_id)
    torch.manual_seed(2)
    tail = []
    peaks, out, _ = generate_peaks(model, ids, new_tokens, hook, cache=cache,
                                   attention_mask=mask, sampling=sampling,
                                   tail=tail if sampling is not None else None)
    row = {"case": case_id(name, dtype_name, batch, prompt, new_tokens, cache, padded,
                           sampling),
           "config": "test/Inputs/hf/small/%s.json" % name, "dtype": dtype_name, "batch": batch, "prompt_len": prompt,
           "max_new_tokens": new_tokens, "cache_implementation": cache,
           "padded": padded,
           **({"do_sample": True, **sampling} if sampling is not None else {}),
           "generated": out.sequences.shape[1] - (1 if config.is_encoder_decoder else prompt),
           "kv_cache_bytes": kv_cache_bytes(out), "prefill_peak": peaks[0]}
    if len(peaks) > 1:
        row["decode_peak"] = peaks[-1]
    if tail:
        # The last step's sampling, which the decode window (up to the last
        # processor call) leaves out; the step's peak is the larger.
        row["decode_tail_peak"] = tail[0]
    if verbose:
        print("  per-step peaks", peaks, file=sys.stderr)
    return row


def main():
    memhook_preload.reexec()
    import torch
    import transformers
    torch.set_num_threads(1)
    verbose = "-v" in sys.argv
    # Given case ids, only those run; their rows replace or join the table's.
    only = [a for a in sys.argv[1:] if a != "-v"]
    rows = []
    for name, dtype_name in dict.fromkeys((c[0], c[1]) for c in CASES):
        cases = [c for c in CASES if (c[0], c[1]) == (name, dtype_name) and
                 (not only or case_id(*c) in only)]
        if not cases:
            continue
        config = transformers.AutoConfig.from_pretrained(SMALL / (name + ".json"))
        dtype = {"fp32": torch.float32, "bf16": torch.bfloat16}[dtype_name]
        auto = (transformers.AutoModelForSeq2SeqLM if config.is_encoder_decoder
                else transformers.AutoModelForCausalLM)
        with tempfile.TemporaryDirectory() as tmp:
            torch.manual_seed(0)
            auto.from_config(config).to(dtype).save_pretrained(tmp)
            model = auto.from_pretrained(tmp, dtype=dtype, device_map="cpu", use_kernels=False)
        model.eval()
        model.generation_config.eos_token_id = None
        model.generation_config.pad_token_id = 0
        for m, d, b, p, t, c, padded, *sampling in cases:
            rows.append(measure(model, config, m, d, b, p, t, c, padded,
                                verbose, sampling[0] if sampling else None))
            print(json.dumps(rows[-1]))
        del model
    name = "generate-torch-%s-transformers-%s-cpu.json" % (
        torch.__version__.split("+")[0], transformers.__version__)
    path = HERE / "results" / name
    date = datetime.date.today().isoformat()
    if only and path.exists():
        # The other rows stay as they were measured: the table's date is
        # theirs, the new rows carry their own.
        old = json.loads(path.read_text())
        ids = {r["case"] for r in rows}
        for r in rows:
            r["date"] = date
        rows = [r for r in old["rows"] if r["case"] not in ids] + rows
        date = old["date"]
    out = {"torch": torch.__version__, "transformers": transformers.__version__,
           "date": date,
           "machine": "%s, %s" % (platform.machine(), platform.platform()),
           "rows": rows}
    path.write_text(json.dumps(out, indent=1) + "\n")


def case_id(name, dtype_name, batch, prompt, new_tokens, cache, padded, sampling=None):
    return "%s_%s_b%d_p%d_t%d%s%s%s" % (name, dtype_name, batch, prompt, new_tokens,
                                        "" if cache == "dynamic" else "_" + cache,
                                        "_padded" if padded else "",
                                        sampling_suffix(sampling))


if __name__ == "__main__":
    main()
