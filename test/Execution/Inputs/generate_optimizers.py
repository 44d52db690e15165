#!/usr/bin/env python3
"""Reference steps of Inputs/mlp.mlir for the optimizers of issue 23 that
--validate=cpu executes, from the initial values in mlp/ (generate_mlp.py):

  mlp-nesterov/  torch.optim.SGD(lr=0.1, momentum=0.9, nesterov=True)
  mlp-lion/      bitsandbytes.optim.Lion(lr=0.01), its CPU backend

Needs torch 2.x and bitsandbytes (made with torch 2.15.0 and bitsandbytes
0.50.2): benchmarks/accuracy/truth-env.sh python3 generate_optimizers.py
"""
import os

import numpy as np
import torch

from fixtures import reference_steps
from generate_mlp import MLP


def main():
    import bitsandbytes as bnb
    here = os.path.dirname(os.path.abspath(__file__))
    load = lambda name: torch.from_numpy(np.load(os.path.join(here, "mlp", name + ".npy")))
    model = MLP()
    initial = {n: load(n) for n, _ in model.named_parameters()}
    x, labels = load("input0"), load("labels")
    reference_steps(
        model, initial, os.path.join(here, "mlp"),
        lambda m: torch.nn.functional.cross_entropy(m(x), labels),
        [("nesterov", lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True)),
         ("lion", lambda ps: bnb.optim.Lion(ps, lr=0.01))])


if __name__ == "__main__":
    main()
