#!/usr/bin/env python3
"""Reference values for test/Execution/numerics-gru.test, from PyTorch.

benchmarks/accuracy/small_models.py's BiGruNoBiasNet (a time-first
bidirectional GRU without biases, the mean over time, a Linear; no dropout,
so the step is deterministic) with torch's default initialisation (seed 0),
x [12, 2, 8] and an mse target [2, 10]; one SGD step (lr 0.1) and one Adam
step (lr 0.01) from the same parameters, written as .npy:

  gru/       x.npy, labels.npy and every initial parameter (NAME.npy)
  gru-sgd/   loss.npy, NAME.grad.npy, updated NAME.npy
  gru-adam/  the same for Adam

The CPU runs a GRU cell by cell (GRUCell in aten/src/ATen/native/RNN.cpp).
Made with torch 2.15.0 on the CPU (the truth environment):
benchmarks/accuracy/truth-env.sh python3 test/Execution/Inputs/generate_rnn.py
"""
import os
import sys

import torch

from fixtures import reference_steps, save_initial

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "benchmarks", "accuracy"))
from small_models import BiGruNoBiasNet  # noqa: E402


def main():
    torch.manual_seed(0)
    model = BiGruNoBiasNet()
    x = torch.randn(12, 2, 8)
    target = torch.randn(2, 10)
    initial = save_initial(os.path.join(HERE, "gru"), model,
                           {"x": x, "labels": target})
    reference_steps(model, initial, os.path.join(HERE, "gru"),
                    lambda m: torch.nn.functional.mse_loss(m(x), target))


if __name__ == "__main__":
    main()
