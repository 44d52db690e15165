#!/usr/bin/env python3
"""Language models on a CUDA GPU with today's PyTorch and transformers
(issues 21 and 23): published configs (test/Inputs/hf), random weights, in
bfloat16 or under autocast, trained with AdamW (full, peft LoRA, gradient
checkpointing, SDPA or eager attention) or generating with a KV cache.

Training cases: AutoModelForCausalLM.from_config on the GPU
(attn_implementation as the case says), two warm-up steps
(model(input_ids=x, labels=x).loss.backward(), AdamW(lr=1e-4) -- foreach,
PyTorch's default on CUDA -- step, zero_grad(set_to_none=True)), then
reset_peak_memory_stats and one measured step:
  persistent      memory_allocated() before the measured step
  allocated_peak  max_memory_allocated() over it
  reserved_peak   max_memory_reserved() over it
  device          the process's device memory (NVML, else nvidia-smi)
Generation cases: eval mode, generate(max_new_tokens=T, do_sample=False), no
end-of-sequence token, twice (the first a warm-up); over the second:
  persistent      memory_allocated() before the call (weights and prompt)
  allocated_peak  max_memory_allocated() over the whole call
  prefill_peak / decode_peak  the peak up to the first logits-processor
                  call, and from the previous call to the last one
  kv_cache_bytes  the returned DynamicCache's keys and values

    llm_gpu.py [-o results.json] [--only ID ...] [--deadline SECONDS]
    llm_gpu.py --args ID          # the vram-opt flags of a case
    llm_gpu.py --smoke            # every case on the CPU, tiny (no GPU)

Each case runs in its own process; rows are written as they finish, each
with the vram-opt flags that predict it (`args`). scripts/gpu-check.sh
runs it; results/llm-gpu-torch-2.11.0-transformers-5.17.0-h200.json is an
H200's run, which test/Analysis/h200-llm.test holds vram-opt to.
"""
import argparse
import datetime
import json
import os
import pathlib
import platform
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
HF = ROOT / "test" / "Inputs" / "hf"


def T(id, hf, batch, seq, precision="bf16", train="full", attention="sdpa", ckpt=False):
    return dict(id=id, kind="train", hf=hf, batch=batch, seq=seq, precision=precision,
                train=train, attention=attention, ckpt=ckpt)


def G(id, hf, batch, prompt, new_tokens, precision="bf16"):
    return dict(id=id, kind="generate", hf=hf, batch=batch, prompt=prompt,
                new_tokens=new_tokens, precision=precision)


LORA = dict(r=16, alpha=32, dropout=0.05)
CASES = [
    T("llama3_8b_bf16_lora_b1_s2048", "Meta-Llama-3-8B", 1, 2048, train="lora"),
    T("llama3_8b_bf16_lora_eager_b1_s2048", "Meta-Llama-3-8B", 1, 2048, train="lora",
      attention="eager"),
    T("llama3_8b_bf16_lora_ckpt_b4_s2048", "Meta-Llama-3-8B", 4, 2048, train="lora", ckpt=True),
    T("llama3_8b_bf16_full_b1_s1024", "Meta-Llama-3-8B", 1, 1024),
    T("qwen3_8b_bf16_lora_b1_s2048", "Qwen3-8B", 1, 2048, train="lora"),
    T("gemma3_1b_bf16_full_b2_s2048", "gemma-3-1b-pt", 2, 2048),
    T("gpt2_ampbf16_full_b8_s1024", "gpt2", 8, 1024, precision="amp-bf16"),
    G("llama3_8b_bf16_generate_b8_p1024_t128", "Meta-Llama-3-8B", 8, 1024, 128),
    G("mistral_7b_bf16_generate_b4_p2048_t64", "Mistral-7B-v0.1", 4, 2048, 64),
]


def vram_args(case):
    a = ["--hf=test/Inputs/hf/%s" % case["hf"], "--batch=%d" % case["batch"],
         "--precision=%s" % case["precision"], "--allocator=pytorch-cuda", "--gpu=h200",
         "--format=json"]
    if case["kind"] == "generate":
        return a + ["--mode=generate", "--prompt-len=%d" % case["prompt"],
                    "--max-new-tokens=%d" % case["new_tokens"]]
    a += ["--mode=train", "--optimizer=adamw", "--seq=%d" % case["seq"]]
    if case["train"] == "lora":
        a.append("--lora=r=%(r)d,alpha=%(alpha)d,dropout=%(dropout)g,targets=all-linear" % LORA)
    if case["attention"] != "sdpa":
        a.append("--attention=" + case["attention"])
    if case["ckpt"]:
        a.append("--checkpoint=model.layers.*")
    return a


# --------------------------------------------------------------------------- worker
def build(case, device, smoke):
    import torch
    import transformers
    cfg = transformers.AutoConfig.from_pretrained(
        HF / "small" / "llama.json" if smoke else HF / case["hf"] / "config.json")
    dtype = torch.bfloat16 if case["precision"] == "bf16" else torch.float32
    torch.manual_seed(0)
    with torch.device(device):
        model = transformers.AutoModelForCausalLM.from_config(
            cfg, dtype=dtype, attn_implementation=case.get("attention", "sdpa"))
    return model, cfg


def process_device_bytes():
    sys.path.insert(0, str(HERE))
    import pytorch_gpu
    return pytorch_gpu.process_device_bytes()


def stats(device):
    import torch
    if device != "cuda":
        return {}
    return {"allocated_peak": torch.cuda.max_memory_allocated(),
            "reserved_peak": torch.cuda.max_memory_reserved(), "device": process_device_bytes()}


def reset(device):
    import torch
    if device == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        return torch.cuda.memory_allocated()
    return None


def train_worker(case, device, smoke):
    import torch
    model, cfg = build(case, device, smoke)
    if case["ckpt"]:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if case["train"] == "lora":
        import peft
        model = peft.get_peft_model(model, peft.LoraConfig(
            r=LORA["r"], lora_alpha=LORA["alpha"], lora_dropout=LORA["dropout"],
            target_modules="all-linear", task_type="CAUSAL_LM"))
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-4)
    batch, seq = (1, 32) if smoke else (case["batch"], case["seq"])
    x = torch.randint(0, cfg.vocab_size, (batch, seq), generator=torch.Generator().manual_seed(1)).to(device)
    amp = case["precision"] == "amp-bf16"

    def step():
        with torch.autocast(device, dtype=torch.bfloat16, enabled=amp):
            loss = model(input_ids=x, labels=x).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.item()

    step(); step()
    persistent = reset(device)
    start = time.perf_counter()
    loss = step()
    if device == "cuda":
        torch.cuda.synchronize()
    return dict(stats(device), persistent=persistent, loss=loss,
                step_ms=1e3 * (time.perf_counter() - start),
                trainable=sum(p.numel() for p in params))


def generate_worker(case, device, smoke):
    import torch
    import transformers
    model, cfg = build(case, device, smoke)
    model.eval()
    model.generation_config.eos_token_id = None
    model.generation_config.pad_token_id = 0
    batch, prompt, new = (1, 16, 3) if smoke else (case["batch"], case["prompt"], case["new_tokens"])
    ids = torch.randint(0, cfg.vocab_size, (batch, prompt), generator=torch.Generator().manual_seed(1)).to(device)
    peaks = []

    class Probe(transformers.LogitsProcessor):
        def __call__(self, input_ids, scores):
            if device == "cuda":
                peaks.append(torch.cuda.max_memory_allocated() - base)
                torch.cuda.reset_peak_memory_stats()
            return scores

    kwargs = dict(max_new_tokens=new, do_sample=False, return_dict_in_generate=True,
                  logits_processor=transformers.LogitsProcessorList([Probe()]))
    for _ in range(2):
        peaks.clear()
        out = None  # the warm-up's sequences and cache are not the call's
        base = reset(device)
        start = time.perf_counter()
        with torch.no_grad():
            out = model.generate(ids, **kwargs)
        if device == "cuda":
            torch.cuda.synchronize()
        ms = 1e3 * (time.perf_counter() - start)
    row = dict(stats(device), persistent=base, generate_ms=ms,
               generated=out.sequences.shape[1] - prompt,
               kv_cache_bytes=sum(t.untyped_storage().nbytes() for layer in out.past_key_values.layers
                                  for t in (layer.keys, layer.values)))
    if peaks:
        # The whole call's peak above the baseline is the largest step's.
        row.update(prefill_peak=peaks[0], decode_peak=peaks[-1],
                   allocated_peak=base + max(peaks))
        row.pop("reserved_peak", None)  # reset each step: not the call's
    return row


def worker(case, smoke):
    import torch
    import transformers
    device = "cpu" if smoke else "cuda"
    fn = generate_worker if case["kind"] == "generate" else train_worker
    row = fn(case, device, smoke)
    row.update(torch=torch.__version__, transformers=transformers.__version__)
    if device == "cuda":
        row["gpu"] = torch.cuda.get_device_name()
    try:
        import peft
        row["peft"] = peft.__version__
    except ImportError:
        pass
    return row


# --------------------------------------------------------------------------- driver
def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--output", help="JSON results (rewritten after each case)")
    ap.add_argument("--only", nargs="*", default=[])
    ap.add_argument("--deadline", type=float, default=0, help="stop starting cases after SECONDS")
    ap.add_argument("--args", help="print the vram-opt flags of case ID")
    ap.add_argument("--smoke", action="store_true", help="every case tiny, on the CPU")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        print(json.dumps(worker(json.loads(a.worker), a.smoke)))
        return 0
    by_id = {c["id"]: c for c in CASES}
    if a.args:
        print(" ".join(vram_args(by_id[a.args])))
        return 0
    cases = [by_id[i] for i in a.only] if a.only else CASES
    t0 = time.time()
    rows = []
    for case in cases:
        if a.deadline and time.time() - t0 > a.deadline:
            rows.append(dict(id=case["id"], error="not run: deadline"))
            continue
        cmd = [sys.executable, __file__, "--worker", json.dumps(case)] + (["--smoke"] if a.smoke else [])
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            row = dict(error=(p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1])
        else:
            row = json.loads(p.stdout.strip().splitlines()[-1])
        row = dict(id=case["id"], args=vram_args(case), **row)
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
        if a.output:
            pathlib.Path(a.output).write_text(json.dumps(
                {"date": datetime.date.today().isoformat(),
                 "machine": "%s, %s" % (platform.machine(), platform.platform()),
                 "rows": rows}, indent=1) + "\n")
    return 0 if all("error" not in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
