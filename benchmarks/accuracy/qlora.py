#!/usr/bin/env python3
"""LoRA and QLoRA on transformers' causal LMs, as people fine-tune them
(issue 23): bitsandbytes 4-bit base weights (nf4/fp4, with and without
double quantization) under peft's LoRA adapters, measured on the CPU with
torch 2.x, transformers, peft and bitsandbytes' CPU backend.

  benchmarks/accuracy/truth-env.sh python3 benchmarks/accuracy/qlora.py [-v] [CASE...]

The small llama config of test/Inputs/hf/small (torch.manual_seed(0)) is
saved with save_pretrained in fp32 or bf16 and loaded back with
from_pretrained(dtype=..., quantization_config=BitsAndBytesConfig(
load_in_4bit=True, bnb_4bit_quant_type=..., bnb_4bit_use_double_quant=...,
bnb_4bit_compute_dtype=<the model dtype>)), as a QLoRA script does; then
get_peft_model(LoraConfig(r=8, lora_alpha=16, lora_dropout=0.05,
target_modules="all-linear")) with peft's defaults (autocast_adapter_dtype:
fp32 adapters over a bf16 base). Batch 2 x 64 tokens and 1 x 8, labels =
ids (transformers' loss), torch.set_num_threads(1); the model runs without
the `kernels` package (from_pretrained(use_kernels=False)).

Per case:
- parameters, trainable: peft's get_nb_trainable_parameters (a 4-bit
  weight counts its logical elements);
- param_bytes: the unique storages of model.parameters() and buffers;
  quant_state_bytes: those of each Params4bit's QuantState (absmax, code,
  and with double quantization offset, state2.absmax and state2.code);
- saved_activation_bytes: the unique storages packed by saved_tensors_hooks
  in forward, without parameters, buffers and the input ids (hf_truth.py);
- step_peak_above_baseline: the CPU allocator's peak during one training
  step (zero_grad(set_to_none=True), forward with labels, backward,
  AdamW(foreach=False).step()) above the live bytes before it, after two
  warm-up steps; counted by memhook/memhook.c (preloaded);
  optimizer_state_bytes, gradient_bytes after the step.

Writes results/qlora-torch-<torch>-bnb-<bnb>-cpu.json unless cases are
named.
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
CONFIG = ROOT / "test" / "Inputs" / "hf" / "small" / "llama.json"

# (name, model dtype, quant_type or None, double quantization, batch, seq):
# batch 2 x 64 tokens, where activations dominate, and 1 x 8, where the
# dequantized weights do.
CASES = [(f"llama_{d}_{q or 'lora'}{'_dq' if dq else ''}_b{b}_t{t}", d, q, dq, b, t)
         for b, t in ((2, 64), (1, 8))
         for d in ("fp32", "bf16")
         for q, dq in ((None, False), ("nf4", False), ("nf4", True), ("fp4", False))]


def storage(t):
    s = t.untyped_storage()
    return s.data_ptr(), s.nbytes()


def quant_state_tensors(model):
    for p in model.parameters():
        qs = getattr(p, "quant_state", None)
        if qs is None:
            continue
        yield from (qs.absmax, qs.code)
        if qs.nested:
            yield from (qs.offset, qs.state2.absmax, qs.state2.code)


def unique_bytes(tensors):
    return sum(dict(storage(t) for t in tensors).values())


def measure(name, dtype_name, quant, double_quant, batch, seq, verbose):
    import torch
    import transformers
    from peft import LoraConfig, get_peft_model
    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16}[dtype_name]

    config = transformers.AutoConfig.from_pretrained(CONFIG)
    with tempfile.TemporaryDirectory() as tmp:
        torch.manual_seed(0)
        transformers.AutoModelForCausalLM.from_config(config).to(dtype).save_pretrained(tmp)
        kwargs = {"dtype": dtype, "device_map": "cpu", "use_kernels": False}
        if quant:
            kwargs["quantization_config"] = transformers.BitsAndBytesConfig(
                load_in_4bit=True, bnb_4bit_quant_type=quant,
                bnb_4bit_use_double_quant=double_quant, bnb_4bit_compute_dtype=dtype)
        model = transformers.AutoModelForCausalLM.from_pretrained(tmp, **kwargs)
    model = get_peft_model(model, LoraConfig(r=8, lora_alpha=16, lora_dropout=0.05,
                                             target_modules="all-linear", task_type="CAUSAL_LM"))
    model.train()
    trainable, total = model.get_nb_trainable_parameters()
    params = list(model.parameters()) + list(model.buffers())
    row = {"case": name, "dtype": dtype_name, "quant_type": quant, "double_quant": double_quant,
           "lora": {"r": 8, "alpha": 16, "dropout": 0.05, "targets": "all-linear"},
           "batch": batch, "seq": seq, "parameters": total, "trainable": trainable,
           "param_bytes": unique_bytes(params),
           "quant_state_bytes": unique_bytes(quant_state_tensors(model))}

    ids = torch.randint(0, config.vocab_size, (batch, seq),
                        generator=torch.Generator().manual_seed(1))
    row.update(measure_lora_step(model, ids, verbose))
    return row


def measure_lora_step(model, ids, verbose):
    """A LoRA model's training on `ids` (labels = ids): the unique storages
    packed by saved_tensors_hooks in one forward (without parameters,
    buffers and the ids), and one steady-state step's peak above the live
    bytes after zero_grad (AdamW(foreach=False), after two warm-up steps),
    with the optimizer state and gradients after it. int8.py shares it."""
    import torch
    hook = memhook_preload.counter()
    params = list(model.parameters()) + list(model.buffers())
    excl = {storage(t)[0] for t in params + [ids]}
    seen = {}

    def pack(t):
        ptr, nb = storage(t)
        if ptr not in excl and ptr not in seen:
            seen[ptr] = nb
            if verbose:
                print("   saved", tuple(t.shape), t.dtype, nb)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss = model(input_ids=ids, labels=ids).loss
    del loss
    row = {"saved_activation_bytes": sum(seen.values())}

    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4,
                            foreach=False)

    def step():
        opt.zero_grad(set_to_none=True)
        model(input_ids=ids, labels=ids).loss.backward()
        opt.step()

    step()
    step()
    opt.zero_grad(set_to_none=True)
    hook.vram_reset_peak()
    base = hook.vram_live()
    step()
    row["step_peak_above_baseline"] = hook.vram_peak() - base
    row["optimizer_state_bytes"] = unique_bytes(
        v for st in opt.state.values() for k, v in st.items() if k != "step" and torch.is_tensor(v))
    row["gradient_bytes"] = unique_bytes(p.grad for p in model.parameters() if p.grad is not None)
    return row


def main():
    memhook_preload.reexec()
    import torch
    import bitsandbytes
    import peft
    import transformers
    torch.set_num_threads(1)
    verbose = "-v" in sys.argv
    only = [a for a in sys.argv[1:] if not a.startswith("-")]
    rows = []
    for case in CASES:
        if only and case[0] not in only:
            continue
        rows.append(measure(*case, verbose))
        print(json.dumps(rows[-1]), flush=True)
    if only:
        return
    out = {"torch": torch.__version__, "transformers": transformers.__version__,
           "peft": peft.__version__, "bitsandbytes": bitsandbytes.__version__,
           "date": datetime.date.today().isoformat(),
           "machine": "%s, %s" % (platform.machine(), platform.platform()),
           "config": str(CONFIG.relative_to(ROOT)), "rows": rows}
    name = "qlora-torch-%s-bnb-%s-cpu.json" % (torch.__version__.split("+")[0], bitsandbytes.__version__)
    (HERE / "results" / name).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
