#!/usr/bin/env python3
"""LLM.int8 base weights (bitsandbytes Linear8bitLt, issue 23): a causal LM
loaded with BitsAndBytesConfig(load_in_8bit=True), served and fine-tuned
with peft's LoRA, measured on the CPU with torch 2.x, transformers, peft and
bitsandbytes' CPU backend.

  benchmarks/accuracy/truth-env.sh python3 benchmarks/accuracy/int8.py [-v] [CASE...]

Model rows: the small llama config of test/Inputs/hf/small
(torch.manual_seed(0)) saved with save_pretrained in the model dtype and
loaded back with from_pretrained(dtype=..., quantization_config=
BitsAndBytesConfig(load_in_8bit=True)) (llm_int8_threshold 6.0, the
default); labels = ids, torch.set_num_threads(1), no `kernels` package.
- infer_*: model.eval(), one forward under torch.no_grad() with
  use_cache=False (vram-opt's --mode=inference builds no cache): the CPU
  allocator's peak above the live bytes before it (the model, the ids).
  bitsandbytes runs MatMul8bitLt (the LLM.int8 kernels' path).
- param_bytes: the unique storages of model.parameters() and buffers (CB
  is the weight's data); scb_bytes: each Linear8bitLt's row scales
  (state.SCB), which are neither.
- lora_*: get_peft_model(LoraConfig(r=8, lora_alpha=16, lora_dropout=0.05,
  target_modules="all-linear")), model.train(), one training step
  (zero_grad(set_to_none=True), forward with labels, backward,
  AdamW(foreach=False).step()) after two warm-up steps, its peak above the
  live bytes after zero_grad; saved_activation_bytes as qlora.py counts
  them. On the CPU a training Linear8bitLt runs MatMul8bitFp (the weight
  dequantized, F.linear), not MatMul8bitLt.
- outlier_cols: the number of outlier columns each Linear8bitLt saw in the
  measured forward (state.idx), summed over the layers.

Layer rows (layer_*): one Linear8bitLt(256, 688, bias=False) quantized on
the CPU, in eval mode, called on an input [rows, 256] whose first K
columns hold 8.0 (above the 6.0 threshold) and the others N(0, 1) values;
the peak of the call above the live bytes before it (the layer, the
input), which includes the output.

Writes results/int8-torch-<torch>-bnb-<bnb>-cpu.json unless cases are
named.
"""
import datetime
import json
import pathlib
import platform
import sys
import tempfile

import memhook_preload
from qlora import measure_lora_step, unique_bytes

ROOT = pathlib.Path(__file__).resolve().parents[2]
HERE = ROOT / "benchmarks" / "accuracy"
CONFIG = ROOT / "test" / "Inputs" / "hf" / "small" / "llama.json"

MODEL_CASES = ([(f"infer_llama_{d}_b{b}_t{t}", "infer", d, b, t)
                for d in ("fp32", "bf16", "fp16") for b, t in ((2, 64), (1, 8))] +
               [(f"lora_llama_{d}_b{b}_t{t}", "lora", d, b, t)
                for d in ("fp32", "bf16") for b, t in ((2, 64), (1, 8))])
LAYER_CASES = [(f"layer_{d}_r{r}_k{k}_th{th:g}", d, r, k, th)
               for d in ("fp32", "bf16", "fp16") for r in (128,)
               for k, th in ((0, 6.0), (4, 6.0), (0, 0.0))]


def dtype_of(name):
    import torch
    return {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[name]


def outlier_cols(model):
    import bitsandbytes as bnb
    total = 0
    for m in model.modules():
        if isinstance(m, bnb.nn.Linear8bitLt) and m.state.idx is not None:
            total += m.state.idx.numel()
    return total


def scb_bytes(model):
    import bitsandbytes as bnb
    return unique_bytes(m.state.SCB for m in model.modules()
                        if isinstance(m, bnb.nn.Linear8bitLt) and m.state.SCB is not None)


def measure_model(name, kind, dtype_name, batch, seq, verbose):
    import torch
    import transformers
    from peft import LoraConfig, get_peft_model
    dtype = dtype_of(dtype_name)
    hook = memhook_preload.counter()
    config = transformers.AutoConfig.from_pretrained(CONFIG)
    with tempfile.TemporaryDirectory() as tmp:
        torch.manual_seed(0)
        transformers.AutoModelForCausalLM.from_config(config).to(dtype).save_pretrained(tmp)
        model = transformers.AutoModelForCausalLM.from_pretrained(
            tmp, dtype=dtype, device_map="cpu", use_kernels=False,
            quantization_config=transformers.BitsAndBytesConfig(load_in_8bit=True))
    ids = torch.randint(0, config.vocab_size, (batch, seq),
                        generator=torch.Generator().manual_seed(1))
    row = {"case": name, "kind": kind, "dtype": dtype_name, "batch": batch, "seq": seq,
           "threshold": 6.0}
    if kind == "infer":
        model.eval()
        params = list(model.parameters()) + list(model.buffers())
        row["param_bytes"] = unique_bytes(params)
        with torch.no_grad():
            model(input_ids=ids, use_cache=False)
            model(input_ids=ids, use_cache=False)
            row["scb_bytes"] = scb_bytes(model)
            hook.vram_reset_peak()
            base = hook.vram_live()
            out = model(input_ids=ids, use_cache=False)
            row["forward_peak_above_baseline"] = hook.vram_peak() - base
            del out
        row["outlier_cols"] = outlier_cols(model)
        return row

    model = get_peft_model(model, LoraConfig(r=8, lora_alpha=16, lora_dropout=0.05,
                                             target_modules="all-linear", task_type="CAUSAL_LM"))
    model.train()
    trainable, total = model.get_nb_trainable_parameters()
    params = list(model.parameters()) + list(model.buffers())
    row.update({"lora": {"r": 8, "alpha": 16, "dropout": 0.05, "targets": "all-linear"},
                "parameters": total, "trainable": trainable, "param_bytes": unique_bytes(params)})
    row.update(measure_lora_step(model, ids, verbose))
    row["scb_bytes"] = scb_bytes(model)
    row["outlier_cols"] = outlier_cols(model)
    return row


def measure_layer(name, dtype_name, rows, k, threshold, verbose):
    import torch
    import bitsandbytes as bnb
    dtype = dtype_of(dtype_name)
    hook = memhook_preload.counter()
    torch.manual_seed(0)
    layer = bnb.nn.Linear8bitLt(256, 688, bias=False, has_fp16_weights=False,
                                threshold=threshold)
    layer.weight = bnb.nn.Int8Params(torch.randn(688, 256).to(dtype), requires_grad=False,
                                     has_fp16_weights=False)
    layer = layer.to("cpu")
    layer.weight._quantize("cpu")
    layer.eval()
    x = torch.randn(rows, 256, generator=torch.Generator().manual_seed(1)).to(dtype)
    x[:, :k] = 8.0
    with torch.no_grad():
        layer(x)
        hook.vram_reset_peak()
        base = hook.vram_live()
        y = layer(x)
        peak = hook.vram_peak() - base
    return {"case": name, "kind": "layer", "dtype": dtype_name, "rows": rows,
            "in_features": 256, "out_features": 688, "threshold": threshold,
            "outlier_cols": 0 if layer.state.idx is None else layer.state.idx.numel(),
            "weight_bytes": unique_bytes([layer.state.CB, layer.state.SCB]),
            "output_bytes": y.numel() * y.element_size(),
            "call_peak_above_baseline": peak}


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
    for case in LAYER_CASES:
        if not only or case[0] in only:
            rows.append(measure_layer(*case, verbose))
            print(json.dumps(rows[-1]), flush=True)
    for case in MODEL_CASES:
        if not only or case[0] in only:
            rows.append(measure_model(*case, verbose))
            print(json.dumps(rows[-1]), flush=True)
    if only:
        return
    out = {"torch": torch.__version__, "transformers": transformers.__version__,
           "peft": peft.__version__, "bitsandbytes": bitsandbytes.__version__,
           "date": datetime.date.today().isoformat(),
           "machine": "%s, %s" % (platform.machine(), platform.platform()),
           "config": str(CONFIG.relative_to(ROOT)), "rows": rows}
    name = "int8-torch-%s-bnb-%s-cpu.json" % (torch.__version__.split("+")[0], bitsandbytes.__version__)
    (HERE / "results" / name).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
