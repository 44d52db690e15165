"""DistributedDataParallel under torch 2.x on the CPU (issue 24, --parallel=dp=N).

Each rank of a gloo process group on this machine trains torchvision's
resnet18 (102 classes, 224x224, fp32) wrapped in DDP, as training loops
write it:

    opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(ddp(x), y)
    loss.backward()              # the reducer copies each gradient into its bucket,
    opt.step()                   # all-reduces the bucket and copies it back

Two warm-up steps first: DDP starts with one bucket and rebuilds its buckets
in the order the gradients became ready, at the start of the second step
(first bucket 1 MiB, then 25 MiB, DDP's defaults).

Per rank it records:
  - bucket_bytes: the bytes DDP allocates and keeps for its buckets, the
    difference of the live bytes after the third zero_grad with and without
    DDP (both measured with the profiler from before the model's wrap);
  - bucket_sizes: the rebuilt buckets' sizes in bytes (DDP's logging data,
    rebuilt_bucket_sizes);
  - cpu_step_peak_above_baseline: the peak of one steady-state step above
    the live bytes after its zero_grad, as measure.py and grad_accum.py count
    it; the same for the model without DDP (`plain`).

    benchmarks/accuracy/truth-env.sh python3 benchmarks/accuracy/ddp.py

writes results/ddp-torch-<version>-cpu.json, the reference of
test/Transforms/parallel-ddp.test. Each case runs in its own processes.
"""
import datetime
import json
import os
import pathlib
import platform
import sys

import torch
import torch.distributed as dist
import torch.nn.functional as F
import torchvision

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import measure as truth  # noqa: E402  (the profiler's memory events, as measure.py reads them)
from gloo_ranks import run_ranks, train_step  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
BATCH, SIZE, CLASSES = 2, 224, 102
# (world size, optimizer, gradient_as_bucket_view)
CASES = [(2, "sgd", False), (2, "sgd", True), (2, "adam", False), (4, "sgd", False)]


def run_rank(rank, world, optimizer, bucket_view, use_ddp, port, queue):
    from torch.profiler import profile, ProfilerActivity
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torchvision.models.resnet18(num_classes=CLASSES).train()
    x = torch.randn(BATCH, 3, SIZE, SIZE)
    y = torch.randint(0, CLASSES, (BATCH,))
    # From before the wrap: DDP's buckets are allocated under the profiler.
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        wrapped = (torch.nn.parallel.DistributedDataParallel(
            model, gradient_as_bucket_view=bucket_view) if use_ddp else model)
        opt = (torch.optim.SGD(wrapped.parameters(), lr=0.01) if optimizer == "sgd"
               else torch.optim.Adam(wrapped.parameters(), lr=1e-3))
        train_step(wrapped, opt, x, y)
        train_step(wrapped, opt, x, y)
        opt.zero_grad(set_to_none=True)
    kept = truth.peak_from_events(truth.memory_events(prof))[1]
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        train_step(wrapped, opt, x, y)
    peak = truth.peak_from_events(truth.memory_events(prof))[0]
    row = {"rank": rank, "kept_after_zero_grad": kept, "cpu_step_peak_above_baseline": peak}
    if use_ddp:
        data = wrapped._get_ddp_logging_data()
        row["bucket_sizes"] = [int(s) for s in str(data["rebuilt_bucket_sizes"]).split(",") if s.strip()]
    queue.put(row)
    dist.destroy_process_group()


def main():
    rows = []
    for world, optimizer, bucket_view in CASES:
        ddp = run_ranks(run_rank, world, world, optimizer, bucket_view, True)
        plain = run_ranks(run_rank, 1, 1, optimizer, False, False)[0]
        row = {"id": f"resnet18_c102_b{BATCH}_dp{world}_{optimizer}" + ("_bucket_view" if bucket_view else ""),
               "world_size": world, "optimizer": optimizer, "gradient_as_bucket_view": bucket_view,
               "batch_per_rank": BATCH, "size": SIZE,
               "param_bytes": sum(p.numel() * p.element_size()
                                  for p in torchvision.models.resnet18(num_classes=CLASSES).parameters()),
               "bucket_sizes": ddp[0]["bucket_sizes"],
               "bucket_bytes": [r["kept_after_zero_grad"] - plain["kept_after_zero_grad"] for r in ddp],
               "cpu_step_peak_above_baseline": [r["cpu_step_peak_above_baseline"] for r in ddp],
               "plain_cpu_step_peak_above_baseline": plain["cpu_step_peak_above_baseline"]}
        print(row, flush=True)
        rows.append(row)
    out = ROOT / "benchmarks" / "accuracy" / "results" / f"ddp-torch-{torch.__version__.split('+')[0]}-cpu.json"
    out.write_text(json.dumps({
        "measured_with": f"torch {torch.__version__} cpu (PyPI wheel), gloo, torchvision "
                         f"{torchvision.__version__}, {platform.platform()}, {datetime.date.today()}",
        "rows": rows}, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
