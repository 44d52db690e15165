#!/usr/bin/env python3
"""Optimizer state of transformers' causal LMs (issue 23): the bytes each
optimizer keeps after its first step, for the small configs of
test/Inputs/hf/small, in fp32 and with the model in bf16.

  truth-env.sh python3 optim_state.py -o results/optim-state-torch-2.15.0-bnb-0.50.2-cpu.json

Per (config, dtype, optimizer): the unique storages of the tensors in
optimizer.state, without the per-parameter `step` counters (torch.optim
keeps them on the host unless capturable/fused; bitsandbytes as ints).
One step of batch 1, 8 tokens, transformers' own loss (labels = ids).
"""
import argparse, json, os, platform, datetime

import torch
import transformers
import bitsandbytes as bnb

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS = os.path.join(HERE, "..", "..", "test", "Inputs", "hf", "small")

OPTIMIZERS = {
    "adamw": lambda ps: torch.optim.AdamW(ps, lr=1e-3, foreach=False),
    "adafactor": lambda ps: torch.optim.Adafactor(ps, lr=1e-2, foreach=False),
    "lion": lambda ps: bnb.optim.Lion(ps, lr=1e-4),
    "adamw8bit": lambda ps: bnb.optim.AdamW8bit(ps, lr=1e-3),
    # On the CPU bitsandbytes falls back to ordinary tensors for the paged
    # optimizers ("Paged optimizers are not supported on CPU"): the bytes
    # are the states', not where CUDA would put them.
    "paged-adamw": lambda ps: bnb.optim.PagedAdamW(ps, lr=1e-3),
    "paged-adamw8bit": lambda ps: bnb.optim.PagedAdamW8bit(ps, lr=1e-3),
    "sgd-nesterov": lambda ps: torch.optim.SGD(ps, lr=1e-2, momentum=0.9, nesterov=True),
}


def state_bytes(opt):
    seen = {}
    for st in opt.state.values():
        for k, v in st.items():
            if k != "step" and torch.is_tensor(v):
                s = v.untyped_storage()
                seen[s.data_ptr()] = s.nbytes()
    return sum(seen.values())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-o", "--output")
    ap.add_argument("--configs", nargs="*", default=["llama", "gpt2", "qwen2"])
    a = ap.parse_args()
    rows = []
    for name in a.configs:
        config = transformers.AutoConfig.from_pretrained(os.path.join(CONFIGS, name + ".json"))
        for dtype in (torch.float32, torch.bfloat16):
            for opt_name, make in OPTIMIZERS.items():
                torch.manual_seed(0)
                model = transformers.AutoModelForCausalLM.from_config(config).to(dtype)
                model.train()
                opt = make([p for p in model.parameters() if p.requires_grad])
                ids = torch.randint(0, config.vocab_size, (1, 8))
                model(input_ids=ids, labels=ids).loss.backward()
                opt.step()
                rows.append({"config": name, "dtype": str(dtype).replace("torch.", ""),
                             "optimizer": opt_name,
                             "params": sum(p.numel() for p in model.parameters()),
                             "optimizer_state_bytes": state_bytes(opt)})
                print(json.dumps(rows[-1]), flush=True)
    out = {"torch": torch.__version__, "transformers": transformers.__version__,
           "bitsandbytes": bnb.__version__, "date": datetime.date.today().isoformat(),
           "machine": platform.machine(), "rows": rows}
    if a.output:
        json.dump(out, open(a.output, "w"), indent=1)


if __name__ == "__main__":
    main()
