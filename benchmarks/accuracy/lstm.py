"""What one torch.nn.LSTM layer allocates on the CPU with torch 2.x (oneDNN's
LSTM primitive, mkldnn_rnn_layer): the workspace autograd keeps and the
temporaries of its forward and backward, per shape (issue 22).

One single-layer, time-first nn.LSTM(I, H) over x [T, B, I] (float32,
torch.set_num_threads(1)), one warm-up step, then one step under
torch.profiler.profile(profile_memory=True): y, _ = lstm(x);
y.backward(torch.ones_like(y)). The profiler's [memory] events, in time
order, are split as PyTorch's code makes them (aten/src/ATen/native/mkldnn/
RNN.cpp):

  forward:  h0, c0, output, hy, cy, bias_ih + bias_hh, workspace,
            [oneDNN: reordered weights, scratchpad], frees
  backward: zeros for hy's and cy's gradients, bias_ih + bias_hh, diff_x,
            diff_hx, diff_cx, diff_w_ih, diff_w_hh, diff_b,
            [oneDNN: reorders, float32 bias, scratchpad], frees, diff_b2

Each row records the bracketed oneDNN allocations as they come, and the
workspace's size (the uint8 tensor saved for backward). vram-opt's
TorchSemantics.h getLstmLayerBuffers is checked against this table in
test/Analysis/lstm-layer.mlir.

    benchmarks/accuracy/truth-env.sh python3 benchmarks/accuracy/lstm.py \
        -o benchmarks/accuracy/results/lstm-torch-2.15.0-cpu.json
"""
import argparse
import datetime
import json
import pathlib
import platform
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import measure  # noqa: E402  (the profiler's memory events)

# (I, H, B, T): padded and unpadded leading dimensions (oneDNN pads to 16
# floats, and a multiple of 256 by 16 more), batches on both sides of 128
# (oneDNN merges the forward's layer GEMM below 128 rows), H above 500,
# one-row weights (I or H = 1: no reorder in the forward).
SHAPES = [
    (16, 32, 3, 5), (16, 32, 3, 1), (16, 32, 1, 1), (16, 32, 3, 2), (16, 32, 3, 10),
    (16, 32, 3, 50), (16, 64, 3, 5), (16, 33, 3, 5), (32, 32, 3, 5), (100, 32, 3, 5),
    (16, 32, 4, 5), (16, 32, 7, 5), (16, 32, 8, 5), (1, 1, 1, 1), (16, 200, 3, 5),
    (16, 48, 1, 1000), (200, 16, 1, 200), (256, 256, 16, 64), (16, 32, 64, 5),
    (16, 1, 3, 5), (16, 2, 3, 5), (16, 8, 3, 5), (16, 12, 3, 5), (1, 32, 3, 5), (2, 32, 3, 5), (4, 4, 3, 5),
    (16, 32, 127, 5), (16, 32, 128, 5), (16, 32, 256, 5), (16, 32, 1024, 3),
    (16, 512, 3, 5), (16, 600, 3, 5), (600, 32, 3, 5), (64, 64, 1, 2000),
]


def events(inp, hidden, batch, seq):
    from torch.profiler import profile, ProfilerActivity
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(inp, hidden)
    x = torch.randn(seq, batch, inp)
    workspace = []

    def one():
        lstm.zero_grad(set_to_none=True)
        workspace.clear()

        def pack(t):
            if t.dtype == torch.uint8:
                workspace.append(t.numel())
            return t
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            y, _ = lstm(x)
        y.backward(torch.ones_like(y))

    one()
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        one()
    ev = [b for _, b in sorted(measure.memory_events(prof), key=lambda e: e[0])]
    return ev, workspace[0]


def split(ev, workspace):
    """The oneDNN allocations of the forward and of the backward."""
    w = ev.index(workspace)
    i = w + 1
    forward = []
    while ev[i] > 0:
        forward.append(ev[i])
        i += 1
    # The forward's frees, then the stacked hy and cy, the incoming gradient,
    # and the backward's nine PyTorch allocations before oneDNN's.
    while ev[i] < 0:
        i += 1
    i += 3 + 9
    backward = []
    while ev[i] > 0:
        backward.append(ev[i])
        i += 1
    return {"bias_sum": ev[w - 1], "forward_onednn": forward, "backward_onednn": backward}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()
    torch.set_num_threads(1)
    rows = []
    for inp, hidden, batch, seq in SHAPES:
        ev, ws = events(inp, hidden, batch, seq)
        row = {"input": inp, "hidden": hidden, "batch": batch, "seq": seq,
               "workspace": ws, **split(ev, ws), "events": ev}
        rows.append(row)
        print(inp, hidden, batch, seq, ws, row["forward_onednn"], row["backward_onednn"])
    flags = open("/proc/cpuinfo").read()
    out = {"measured_with": {
        "torch": torch.__version__, "onednn": torch.backends.mkldnn.version()
        if hasattr(torch.backends.mkldnn, "version") else None,
        "config": [line.strip() for line in torch.__config__.show().splitlines() if "DNN" in line],
        "cpu": platform.processor() or platform.machine(),
        "avx512": "avx512f" in flags, "date": datetime.date.today().isoformat()},
        "rows": rows}
    pathlib.Path(args.output).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
