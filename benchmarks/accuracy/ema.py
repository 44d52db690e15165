#!/usr/bin/env python3
"""An EMA of the model (issue 23), measured on the CPU with torch 2.x:
torch.optim.swa_utils.AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.999)),
updated after each optimizer step, as training scripts keep one.

  benchmarks/accuracy/truth-env.sh python3 benchmarks/accuracy/ema.py

Per case (torchvision resnet18, 102 classes, batch 2, 224x224, SGD or
AdamW (for-loop), torch.manual_seed(0), torch.set_num_threads(1)):
- ema_bytes: the unique storages of the AveragedModel's parameters and
  buffers (its n_averaged counter included);
- step_peak_above_baseline: the CPU allocator's peak during one step
  (zero_grad(set_to_none=True), forward, cross-entropy, backward,
  optimizer.step(), ema.update_parameters(model)) above the live bytes
  before it, after two warm-up steps, counted by memhook/memhook.c
  (preloaded); the same without the EMA for comparison.

Writes results/ema-torch-<torch>-cpu.json.
"""
import datetime
import json
import pathlib
import platform

import memhook_preload

HERE = pathlib.Path(__file__).resolve().parent


def storage(t):
    s = t.untyped_storage()
    return s.data_ptr(), s.nbytes()


def measure(optimizer, with_ema):
    import torch
    import torchvision
    from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn
    hook = memhook_preload.counter()
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=102)
    model.train()
    ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.999)) if with_ema else None
    opt = (torch.optim.SGD(model.parameters(), lr=0.01) if optimizer == "sgd"
           else torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=False))
    g = torch.Generator().manual_seed(1)
    x = torch.randn(2, 3, 224, 224, generator=g)
    y = torch.randint(0, 102, (2,), generator=g)

    def step():
        opt.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
        if ema is not None:
            ema.update_parameters(model)

    step()
    step()
    opt.zero_grad(set_to_none=True)
    hook.vram_reset_peak()
    base = hook.vram_live()
    step()
    row = {"case": "resnet18_c102_b2_%s%s" % (optimizer, "_ema" if with_ema else ""),
           "step_peak_above_baseline": hook.vram_peak() - base}
    if ema is not None:
        row["ema_bytes"] = sum(dict(storage(t) for t in
                                    list(ema.parameters()) + list(ema.buffers())).values())
    return row


def main():
    memhook_preload.reexec()
    import torch
    torch.set_num_threads(1)
    rows = [measure(o, e) for o in ("sgd", "adamw") for e in (False, True)]
    for r in rows:
        print(json.dumps(r))
    out = {"torch": torch.__version__, "date": datetime.date.today().isoformat(),
           "machine": "%s, %s" % (platform.machine(), platform.platform()), "rows": rows}
    name = "ema-torch-%s-cpu.json" % torch.__version__.split("+")[0]
    (HERE / "results" / name).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
