#!/usr/bin/env python3
"""Reference values for test/Execution/numerics-splits.test, from PyTorch.

benchmarks/accuracy/small_models.py's SplitNet (a projection split with
sizes into q, k, v, sigmoid(q) * tanh(k) + v chunked in two, their product
unbound along time, the first and last rows into a Linear: six rows get no
gradient) with torch's default initialisation (seed 0), x [2, 8, 16] and an
mse target [2, 10]; one SGD step (lr 0.1) and one Adam step (lr 0.01) from
the same parameters, written as .npy:

  splits/       x.npy, labels.npy and every initial parameter (NAME.npy)
  splits-sgd/   loss.npy, NAME.grad.npy, updated NAME.npy
  splits-adam/  the same for Adam

Made with torch 2.15.0 on the CPU (the truth environment):
benchmarks/accuracy/truth-env.sh python3 test/Execution/Inputs/generate_splits.py
"""
import os
import sys

import torch

from fixtures import regression_reference

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "benchmarks", "accuracy"))
from small_models import SplitNet  # noqa: E402


def main():
    regression_reference(os.path.join(HERE, "splits"), SplitNet, (2, 8, 16))


if __name__ == "__main__":
    main()
