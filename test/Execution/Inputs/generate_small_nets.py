#!/usr/bin/env python3
"""Reference values for test/Execution/numerics-splits.test and
numerics-reductions.test, from PyTorch: benchmarks/accuracy/small_models.py's
SplitNet (split with sizes, chunk, unbind) and ReduceNet (sum over a
dimension and over all, topk, max over a dimension), each with torch's
default initialisation (seed 0), x [2, 8, 16] and an mse target [2, 10];
one SGD step (lr 0.1) and one Adam step (lr 0.01) from the same parameters,
written as .npy:

  splits/, reductions/            x.npy, labels.npy and every initial parameter
  splits-sgd/, reductions-sgd/    loss.npy, NAME.grad.npy, updated NAME.npy
  splits-adam/, reductions-adam/  the same for Adam

Made with torch 2.15.0 on the CPU (the truth environment):
benchmarks/accuracy/truth-env.sh python3 test/Execution/Inputs/generate_small_nets.py
"""
import os
import sys

from fixtures import regression_reference

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "benchmarks", "accuracy"))
from small_models import ReduceNet, SplitNet  # noqa: E402


def main():
    regression_reference(os.path.join(HERE, "splits"), SplitNet, (2, 8, 16))
    regression_reference(os.path.join(HERE, "reductions"), ReduceNet, (2, 8, 16))


if __name__ == "__main__":
    main()
