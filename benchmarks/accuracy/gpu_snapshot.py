#!/usr/bin/env python3
"""Records PyTorch's CUDA caching allocator during one measured training
step of pytorch_gpu.py's configurations (torch.cuda.memory history, Python
stacks) and writes one snapshot pickle per configuration: what the GPU gaps
in benchmarks/accuracy/results are made of, to read with
torch.cuda.memory._snapshot tooling or benchmarks/accuracy/snapshot_peak.py.

  gpu_snapshot.py OUT_DIR ID...       (on a machine with a CUDA GPU)
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pytorch_gpu  # noqa: E402


def record(cfg, path):
    import torch
    step = pytorch_gpu.make_step(cfg)
    step.warm_up()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.memory._record_memory_history(max_entries=200000, stacks="python")
    step()
    torch.cuda.synchronize()
    torch.cuda.memory._dump_snapshot(path)
    torch.cuda.memory._record_memory_history(enabled=None)
    return {"allocated": torch.cuda.max_memory_allocated(), "reserved": torch.cuda.max_memory_reserved(),
            "torch": torch.__version__}


def main():
    if sys.argv[1] == "--worker":
        cfg = json.loads(sys.argv[2])
        print(json.dumps(record(cfg, sys.argv[3])))
        return 0
    out, ids = sys.argv[1], sys.argv[2:]
    by_id = {c["id"]: c for c in pytorch_gpu.CONFIGS}
    for i in ids:
        p = subprocess.run([sys.executable, __file__, "--worker", json.dumps(by_id[i]),
                            os.path.join(out, i + ".pickle")], capture_output=True, text=True)
        print(i, p.stdout.strip() or p.stderr.strip().splitlines()[-1:], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
