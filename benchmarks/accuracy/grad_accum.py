"""Gradient accumulation under torch 2.x on the CPU (issue 23, --grad-accum).

One optimizer step over N micro-batches, as training loops write it:

    opt.zero_grad(set_to_none=True)
    for micro in range(N):
        loss = F.cross_entropy(model(x), y) / N
        loss.backward()          # micro-batch 1 allocates .grad, later ones add into it
    opt.step()

torchvision resnet18 (102 classes, 224x224, fp32, train mode), micro-batch 2,
SGD and Adam (foreach, torch's default on the CPU). The figure is the peak of
the CPU profiler's [memory] events over one steady-state cycle (after a
warm-up cycle) above the live bytes after its zero_grad, as measure.py
counts cpu_sgd_step_peak_above_baseline (N=1 is that row's step).

    benchmarks/accuracy/truth-env.sh python3 benchmarks/accuracy/grad_accum.py

writes results/grad-accum-torch-<version>-cpu.json, the reference of
test/Transforms/grad-accum.test. Each case runs in its own process.
"""
import datetime
import json
import pathlib
import platform
import subprocess
import sys

import torch
import torch.nn.functional as F
import torchvision

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import measure as truth  # noqa: E402  (the profiler's memory events, as measure.py reads them)

ROOT = pathlib.Path(__file__).resolve().parents[2]
CASES = [("sgd", 1), ("sgd", 2), ("sgd", 4), ("adam", 2)]
MICRO_BATCH, SIZE, CLASSES = 2, 224, 102


def cycle(model, opt, x, y, n):
    opt.zero_grad(set_to_none=True)
    for _ in range(n):
        loss = F.cross_entropy(model(x), y) / n
        loss.backward()
        del loss
    opt.step()


def measure(optimizer, n):
    from torch.profiler import profile, ProfilerActivity
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torchvision.models.resnet18(num_classes=CLASSES).train()
    x = torch.randn(MICRO_BATCH, 3, SIZE, SIZE)
    y = torch.randint(0, CLASSES, (MICRO_BATCH,))
    opt = (torch.optim.SGD(model.parameters(), lr=0.01) if optimizer == "sgd"
           else torch.optim.Adam(model.parameters(), lr=1e-3))
    cycle(model, opt, x, y, n)  # warm-up: optimizer state exists from here on
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        cycle(model, opt, x, y, n)
    peak = truth.peak_from_events(truth.memory_events(prof))[0]
    return {"id": f"resnet18_c102_mb{MICRO_BATCH}_accum{n}_{optimizer}", "optimizer": optimizer,
            "grad_accum": n, "micro_batch": MICRO_BATCH, "size": SIZE,
            "param_bytes": sum(p.numel() * p.element_size() for p in model.parameters()),
            "cpu_cycle_peak_above_baseline": peak}


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        print(json.dumps(measure(sys.argv[2], int(sys.argv[3]))))
        return
    rows = []
    for optimizer, n in CASES:
        p = subprocess.run([sys.executable, __file__, "--worker", optimizer, str(n)],
                           capture_output=True, text=True, check=True)
        row = json.loads([l for l in p.stdout.splitlines() if l.startswith("{")][-1])
        print(row)
        rows.append(row)
    out = ROOT / "benchmarks" / "accuracy" / "results" / f"grad-accum-torch-{torch.__version__.split('+')[0]}-cpu.json"
    out.write_text(json.dumps({
        "measured_with": f"torch {torch.__version__} cpu (PyPI wheel), torchvision "
                         f"{torchvision.__version__}, {platform.platform()}, {datetime.date.today()}",
        "rows": rows}, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
