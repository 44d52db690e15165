#!/usr/bin/python3
"""Reference values for the training-loop scenarios --validate runs
(test/Execution/validate-grad-accum.test, validate-clip.test), from
PyTorch.

Gradient accumulation:
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

Gradient clipping: from the same initial parameters, A's backward, then
torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5) (torch 2.x
_get_total_norm and _clip_grads_with_norm_) and one SGD step (lr 0.1):

  mlp-clip-sgd/     loss.npy (A's), NAME.grad.npy after clipping, the
                    updated NAME.npy

Run with the torch of benchmarks/accuracy/truth-env.sh (torch 2.15, CPU):
  benchmarks/accuracy/truth-env.sh python3 test/Execution/Inputs/generate_scenarios.py
"""
import os

import numpy as np
import torch

from fixtures import save, save_step
from generate_mlp import MLP


def initial_model(here):
    model = MLP()
    with torch.no_grad():
        for n, p in model.named_parameters():
            p.copy_(torch.from_numpy(np.load(os.path.join(here, "mlp", n + ".npy"))))
    return model


def clipping(here, xa, la):
    model = initial_model(here)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    optimizer.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(model(xa), la)
    loss.backward()
    total = torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    assert total > 0.5, "the reference must clip"
    save_step(os.path.join(here, "mlp-clip-sgd"), loss, model, optimizer)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    model = initial_model(here)
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
    save_step(os.path.join(here, "mlp-accum-sgd"), loss, model, optimizer)
    clipping(here, xa, la)


if __name__ == "__main__":
    main()
