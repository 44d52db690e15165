#!/usr/bin/python3
"""Reference values for gradient accumulation (test/Execution/
numerics-grad-accum.test), from PyTorch.

The MLP of mlp.mlir with the initial parameters of mlp/ (NAME.npy), two
micro-batches: A is mlp/input0.npy and mlp/labels.npy, B a second batch
(torch.manual_seed(1)). zero_grad(set_to_none=True), backward of A's
cross-entropy, backward of B's, one SGD step (lr 0.1), as a training loop
accumulating over 2 micro-batches runs it (without dividing the loss, as
vram-opt's step computes it). Writes as .npy (numpy.save):

  mlp-micro2/       B's input0.npy and labels.npy, and NAME.grad.npy: .grad
                    after A's backward, what the step starts from
  mlp-accum-sgd/    loss.npy (B's), NAME.grad.npy after B's backward, the
                    updated NAME.npy

Run with the torch of benchmarks/accuracy/truth-env.sh (torch 2.15, CPU):
  benchmarks/accuracy/truth-env.sh python3 test/Execution/Inputs/generate_accum.py
"""
import os

import numpy as np
import torch

from fixtures import save
from generate_mlp import MLP


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    model = MLP()
    with torch.no_grad():
        for n, p in model.named_parameters():
            p.copy_(torch.from_numpy(np.load(os.path.join(here, "mlp", n + ".npy"))))
    xa = torch.from_numpy(np.load(os.path.join(here, "mlp", "input0.npy")))
    la = torch.from_numpy(np.load(os.path.join(here, "mlp", "labels.npy")))
    torch.manual_seed(1)
    xb = torch.randn(4, 8)
    lb = torch.tensor([1, 0, 2, 0], dtype=torch.int64)
    save(os.path.join(here, "mlp-micro2"), "input0", xb)
    save(os.path.join(here, "mlp-micro2"), "labels", lb)

    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    optimizer.zero_grad(set_to_none=True)
    torch.nn.functional.cross_entropy(model(xa), la).backward()
    for n, p in model.named_parameters():
        save(os.path.join(here, "mlp-micro2"), n + ".grad", p.grad)
    loss = torch.nn.functional.cross_entropy(model(xb), lb)
    loss.backward()
    out = os.path.join(here, "mlp-accum-sgd")
    save(out, "loss", loss)
    for n, p in model.named_parameters():
        save(out, n + ".grad", p.grad)
    optimizer.step()
    for n, p in model.named_parameters():
        save(out, n, p)


if __name__ == "__main__":
    main()
