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
    import torch.nn.functional as F
    model, x, y, params = pytorch_gpu.build_torch(cfg)
    opt = (torch.optim.Adam(params, lr=1e-3) if cfg["optimizer"] == "adam"
           else torch.optim.SGD(params, lr=0.01))
    amp = cfg["precision"] == "amp-fp16"
    scaler = torch.cuda.amp.GradScaler(enabled=amp)
    lm = cfg["model"] in ("gpt2", "llama-7b", "gpt_mini")

    def step():
        with torch.autocast("cuda", dtype=torch.float16, enabled=amp):
            out = model(x)
            logits = out.logits if hasattr(out, "logits") else out
            loss = (F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1)) if lm
                    else F.cross_entropy(logits, y))
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
        return loss.item()

    step(); step()
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
