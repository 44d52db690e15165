#!/usr/bin/python3
"""torch 1.13's CPU LSTM, GRU and RNN (Debian 12's python3-torch): the
parameters, the bytes autograd keeps for backward and the SGD step peak of
small_models.py's LstmNet, GruNet and RnnNet (2 batch-first layers, dropout
0.25 between them) on the inputs export_pt2.py gives them ([2, 12, 16], mse
against a [2, 10] target), for the C++ front end's and the .pt2 fixtures'
--torch-version=1.13 (test/Import/Cxx/lstm.test). torch 1.13 has no oneDNN
LSTM: its CPU runs LSTMCell step by step.

    /usr/bin/python3 benchmarks/accuracy/recurrent_113.py
      -> results/recurrent-torch-1.13-cpu.json

Not part of the product. Counted as test/Inputs/onnx/generate_small.py
counts them (saved_bytes, step_peak).
"""
import datetime
import json
import os
import platform
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "test", "Inputs", "onnx"))
from generate_small import step_peak  # noqa: E402
from generate_torchvision import saved_bytes  # noqa: E402
from small_models import GruNet, LstmNet, RnnNet  # noqa: E402

MODELS = {"lstm": LstmNet, "gru": GruNet, "rnn": RnnNet}


def main():
    torch.set_num_threads(1)
    rows = {}
    for name, ctor in MODELS.items():
        torch.manual_seed(0)
        model = ctor().train()
        x = torch.randn(2, 12, 16)
        rows[name] = {"id": name, "shape": list(x.shape),
                      "params": sum(p.numel() for p in model.parameters()),
                      "saved_activation_bytes": saved_bytes(model, x, False),
                      "cpu_sgd_step_peak_above_baseline": step_peak(model, x)}
        print(rows[name])
    out = {"rows": rows,
           "measured_with": f"torch {torch.__version__} cpu (Debian python3-torch), "
                            f"{platform.platform()}, {datetime.date.today()}"}
    path = os.path.join(HERE, "results", "recurrent-torch-1.13-cpu.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
