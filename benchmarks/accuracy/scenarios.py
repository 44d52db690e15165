#!/usr/bin/python3
"""Ground truth for vram-opt's LoRA and activation-checkpointing scenarios
(Debian torch 1.13 + torchvision 0.14, CPU, fp32), measured as measure.py does:

  saved_activation_bytes   unique storages packed by autograd's saved_tensors_hooks during
                           the forward, minus parameters, buffers and the input
  step_peak                peak of the CPU profiler's [memory] events over one steady-state
                           SGD step (after a warm-up step), above the live bytes before it

Cases (torchvision resnet18, 102 classes, batch 4, 64x64, SGD):
  lora        peft's LoRA structure written out by hand (peft is not installed; the module
              below follows peft/tuners/lora/layer.py: _ConvNd.update_layer and forward):
              r=4, lora_alpha=32, lora_dropout=0.1 on every Conv2d, every other parameter
              frozen (get_peft_model, bias="none")
  checkpoint  layer1..layer4 each under torch.utils.checkpoint(use_reentrant=False,
              preserve_rng_state=False: the CPU RNG state, a 5,056-byte CPU tensor per
              segment, is not device memory; with it the recomputed dropout masks
              differ from the first forward's, but not their size)
  lora_checkpoint  both (the two compose)
  mlp_full, mlp_checkpoint  an MLP of three blocks (no convolutions), each block
              checkpointed in the second case
  full        plain training, the reference both compare with

Run:  /usr/bin/python3 scenarios.py [-o results/scenarios-1.13-cpu.json]
Each measurement runs in its own process (see measure.py's run_isolated).
"""
import argparse, gc, json, os, subprocess, sys

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torch.utils.checkpoint import checkpoint

torch.set_num_threads(1)
HERE = os.path.dirname(os.path.abspath(__file__))
MEASURED_WITH = "torch %s cpu, torchvision %s, Debian 12" % (torch.__version__, torchvision.__version__)


class LoraConv2d(nn.Module):
    """peft's lora.Conv2d for one adapter named "default"."""

    def __init__(self, base, r, alpha, dropout):
        super().__init__()
        self.base_layer = base
        self.lora_dropout = nn.ModuleDict({"default": nn.Dropout(p=dropout) if dropout > 0 else nn.Identity()})
        self.lora_A = nn.ModuleDict({"default": nn.Conv2d(base.in_channels, r, base.kernel_size, base.stride,
                                                          base.padding, bias=False)})
        self.lora_B = nn.ModuleDict({"default": nn.Conv2d(r, base.out_channels, (1, 1), (1, 1),
                                                          groups=base.groups, bias=False)})
        nn.init.zeros_(self.lora_B["default"].weight)
        self.scaling = {"default": alpha / r}

    def forward(self, x):
        result = self.base_layer(x)
        lora_A, lora_B = self.lora_A["default"], self.lora_B["default"]
        dropout, scaling = self.lora_dropout["default"], self.scaling["default"]
        result = result + lora_B(lora_A(dropout(x))) * scaling
        return result


def add_lora(module, r, alpha, dropout):
    for name, child in module.named_children():
        if isinstance(child, nn.Conv2d):
            setattr(module, name, LoraConv2d(child, r, alpha, dropout))
        else:
            add_lora(child, r, alpha, dropout)


class Checkpointed(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return checkpoint(self.inner, x, use_reentrant=False, preserve_rng_state=False)


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc1 = nn.Linear(d, 4 * d)
        self.act1 = nn.ReLU()
        self.fc2 = nn.Linear(4 * d, d)
        self.act2 = nn.ReLU()

    def forward(self, x):
        return self.act2(self.fc2(self.act1(self.fc1(x))))


class MLP(nn.Module):
    """x [512, 64] -> fc_in -> 3 blocks (Linear 256->1024, ReLU, Linear 1024->256, ReLU)
    -> head (10 classes): no convolution, so no oneDNN convolution buffers; the same
    model as test/Inputs/mlp-blocks.mlir."""

    def __init__(self, d=256, blocks=3):
        super().__init__()
        self.fc_in = nn.Linear(64, d)
        self.blocks = nn.ModuleList([Block(d) for _ in range(blocks)])
        self.head = nn.Linear(d, 10)

    def forward(self, x):
        x = self.fc_in(x)
        for b in self.blocks:
            x = b(x)
        return self.head(x)


CASES = {
    "full": {},
    "lora": {"lora": dict(r=4, alpha=32, dropout=0.1)},
    "checkpoint": {"checkpoint": ["layer1", "layer2", "layer3", "layer4"]},
    "lora_checkpoint": {"lora": dict(r=4, alpha=32, dropout=0.1),
                        "checkpoint": ["layer1", "layer2", "layer3", "layer4"]},
    "mlp_full": {"model": "mlp"},
    "mlp_checkpoint": {"model": "mlp", "checkpoint_blocks": True},
}


def build(case, batch=4, size=64, classes=102):
    torch.manual_seed(0)
    cfg = CASES[case]
    if cfg.get("model") == "mlp":
        model = MLP()
        if cfg.get("checkpoint_blocks"):
            model.blocks = nn.ModuleList([Checkpointed(b) for b in model.blocks])
        model.train()
        g = torch.Generator().manual_seed(1)
        return model, torch.randn(512, 64, generator=g), torch.randint(0, 10, (512,), generator=g)
    model = torchvision.models.resnet18(num_classes=classes)
    if "lora" in cfg:
        add_lora(model, **cfg["lora"])
        for n, p in model.named_parameters():
            p.requires_grad_("lora_" in n)
    for name in cfg.get("checkpoint", []):
        setattr(model, name, Checkpointed(getattr(model, name)))
    model.train()
    g = torch.Generator().manual_seed(1)
    x = torch.randn(batch, 3, size, size, generator=g)
    y = torch.randint(0, classes, (batch,), generator=g)
    return model, x, y


def storage_of(t):
    s = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
    return s.data_ptr(), s.nbytes()


def saved_bytes(model, x):
    excl = {storage_of(t)[0] for t in list(model.parameters()) + list(model.buffers()) + [x]}
    seen = {}

    def pack(t):
        ptr, nb = storage_of(t)
        if ptr not in excl:
            seen[ptr] = nb
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    del out
    gc.collect()
    return sum(seen.values())


def step(model, opt, x, y):
    opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()


def step_peak(model, opt, x, y):
    from torch.profiler import profile, ProfilerActivity
    step(model, opt, x, y)
    gc.collect()
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        step(model, opt, x, y)
    mem = sorted(((e.start_us(), e.nbytes()) for e in prof.profiler.kineto_results.events()
                  if e.name() == "[memory]"), key=lambda e: e[0])
    live = peak = 0
    for _, nb in mem:
        live += nb
        peak = max(peak, live)
    return peak


def worker(case, mode):
    model, x, y = build(case)
    if mode == "saved":
        return {"saved_activation_bytes": saved_bytes(model, x)}
    trainable = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.SGD(trainable, lr=0.01)
    return {"step_peak": step_peak(model, opt, x, y)}


def run_isolated(case, mode):
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", case, mode],
                       capture_output=True, text=True)
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode != 0 or not lines:
        raise RuntimeError(f"{case} {mode}: rc {p.returncode}\n{p.stderr[-3000:]}")
    return json.loads(lines[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", nargs=2)
    ap.add_argument("-o", "--output")
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(*args.worker)))
        return
    results = []
    for case in CASES:
        model, x, _ = build(case)
        mlp = CASES[case].get("model") == "mlp"
        r = {"case": case, "model": "mlp" if mlp else "resnet18", "classes": 10 if mlp else 102,
             "batch": 512 if mlp else 4, "size": 64, "optimizer": "sgd", "config": CASES[case],
             "params": sum(p.numel() for p in model.parameters()),
             "trainable_params": sum(p.numel() for p in model.parameters() if p.requires_grad)}
        if "checkpoint" in CASES[case] or CASES[case].get("checkpoint_blocks"):
            # What the checkpoint keeps for the recomputation, invisible to the hooks: the
            # input of each segment.
            shapes = []
            segments = (list(model.blocks) if CASES[case].get("checkpoint_blocks") else
                        [getattr(model, n) for n in CASES[case]["checkpoint"]])
            h = [m.register_forward_pre_hook(
                lambda m, inp: shapes.append(inp[0].numel() * inp[0].element_size()))
                for m in segments]
            with torch.no_grad():
                model(x)
            for handle in h:
                handle.remove()
            r["segment_input_bytes"] = shapes
        del model
        gc.collect()
        r.update(run_isolated(case, "saved"))
        r.update(run_isolated(case, "peak"))
        r["measured_with"] = MEASURED_WITH
        print(json.dumps(r), flush=True)
        results.append(r)
    if args.output:
        with open(args.output, "w") as f:
            json.dump(results, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
