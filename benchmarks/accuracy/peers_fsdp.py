"""Peers side by side (issue 24): PyTorch's FSDPMemTracker on the FSDP2
configurations fsdp.py measured.

FSDPMemTracker (torch.distributed._tools.fsdp2_mem_tracker) follows every
tensor of one rank's step through a TorchDispatchMode, in one process with
a fake process group, on real CPU tensors (`peak`; a fake group moves no
data) and under FakeTensorMode (`peak_fake_tensors`: no memory used), and
reports the peak of the tracked step (the second of two) and its
categories. It
counts tensors, not the allocator's blocks, and the memory live before the
tracked region it sees only through the tensors it was told about (the
model, the optimizer, the inputs).

    benchmarks/accuracy/truth-env.sh python3 benchmarks/accuracy/peers_fsdp.py

writes results/peers-fsdp-torch-<version>-cpu.json.
"""
import contextlib
import datetime
import json
import pathlib
import platform

import torch
import torch.distributed as dist
import torch.nn.functional as F

from fsdp import build

ROOT = pathlib.Path(__file__).resolve().parents[2]
# (model, world size, optimizer), as in fsdp.py.
CASES = [("mlp", 2, "sgd"), ("mlp", 4, "sgd"), ("llama", 2, "sgd"), ("llama", 4, "sgd"),
         ("llama", 2, "adam")]


def track(name, world, optimizer, fake):
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.distributed._tools.fsdp2_mem_tracker import FSDPMemTracker
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard
    from torch.testing._internal.distributed.fake_pg import FakeStore
    dist.init_process_group("fake", rank=0, world_size=world, store=FakeStore())
    mesh = init_device_mesh("cpu", (world,))
    mode = FakeTensorMode() if fake else contextlib.nullcontext()
    try:
        mode.__enter__()
        torch.manual_seed(0)
        model, units, x, y = build(name)
        for unit in units:
            fully_shard(model.get_submodule(unit), mesh=mesh)
        fully_shard(model, mesh=mesh)
        model.train()
        opt = (torch.optim.SGD(model.parameters(), lr=0.01) if optimizer == "sgd"
               else torch.optim.Adam(model.parameters(), lr=1e-3))
        tracker = FSDPMemTracker(model, opt)
        tracker.track_inputs((x, y))
        with tracker:
            for _ in range(2):  # the second iteration has the optimizer state
                opt.zero_grad(set_to_none=True)
                loss = F.cross_entropy(model(x), y)
                loss.backward()
                del loss
                opt.step()
                if _ == 0:
                    tracker.reset_mod_stats()
        peak = tracker.get_tracker_snapshot("peak")
        cpu = {str(k): {str(c): v for c, v in d.items()} for k, d in peak.items()}
        return cpu
    finally:
        mode.__exit__(None, None, None)
        dist.destroy_process_group()


def main():
    torch.set_num_threads(1)
    rows = []
    for name, world, optimizer in CASES:
        row = {"id": f"{name}_fsdp{world}_{optimizer}",
               "peak": track(name, world, optimizer, fake=False),
               "peak_fake_tensors": track(name, world, optimizer, fake=True)}
        print(row, flush=True)
        rows.append(row)
    out = ROOT / "benchmarks" / "accuracy" / "results" / \
        f"peers-fsdp-torch-{torch.__version__.split('+')[0]}-cpu.json"
    out.write_text(json.dumps({
        "measured_with": f"torch {torch.__version__} (FSDPMemTracker, fake process group), "
                         f"{platform.platform()}, {datetime.date.today()}",
        "rows": rows}, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
