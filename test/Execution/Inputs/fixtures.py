"""What the numerics generators share: .npy output and the two reference
steps (one SGD step, lr 0.1, and one Adam step, lr 0.01, from the same
initial parameters), run with the torch each generator names (Debian's
torch 1.13, or torch 2.15 in benchmarks/accuracy/truth-env.sh), on the CPU;
regression_reference for the small_models.py nets trained on mse."""
import os

import numpy as np
import torch

OPTIMIZERS = [("sgd", lambda ps: torch.optim.SGD(ps, lr=0.1)),
              ("adam", lambda ps: torch.optim.Adam(ps, lr=0.01))]


def save(directory, name, tensor):
    os.makedirs(directory, exist_ok=True)
    np.save(os.path.join(directory, name + ".npy"), tensor.detach().numpy())


def save_initial(directory, model, inputs):
    """inputs (name -> tensor) and every parameter; returns the parameters'
    initial values, for reference_steps."""
    initial = {n: p.detach().clone() for n, p in model.named_parameters()}
    for name, tensor in inputs.items():
        save(directory, name, tensor)
    for n, p in initial.items():
        save(directory, n, p)
    return initial


def save_step(out, loss, model, optimizer):
    """OUT/loss.npy and each PARAM.grad.npy as the update reads them, then
    the update and each updated PARAM.npy."""
    save(out, "loss", loss)
    for n, p in model.named_parameters():
        save(out, n + ".grad", p.grad)
    optimizer.step()
    for n, p in model.named_parameters():
        save(out, n, p)


def reference_steps(model, initial, prefix, loss_of, optimizers=OPTIMIZERS):
    """For each optimizer (name, make): from `initial`, loss_of(model),
    backward and one step, written to PREFIX-NAME/ as loss.npy,
    PARAM.grad.npy and the updated PARAM.npy. Returns the losses by
    optimizer name."""
    losses = {}
    for name, make in optimizers:
        with torch.no_grad():
            for n, p in model.named_parameters():
                p.copy_(initial[n])
        optimizer = make(model.parameters())
        optimizer.zero_grad(set_to_none=True)
        loss = loss_of(model)
        loss.backward()
        save_step(prefix + "-" + name, loss, model, optimizer)
        losses[name] = loss.item()
    return losses


def regression_reference(prefix, model_class, shape, optimizers=OPTIMIZERS):
    """A small_models.py regression net from seed 0, x of `shape` and an
    mse target [2, 10]: PREFIX/ holds x, labels and the initial parameters,
    PREFIX-NAME/ each optimizer's step (reference_steps)."""
    torch.manual_seed(0)
    model = model_class()
    x = torch.randn(*shape)
    target = torch.randn(2, 10)
    initial = save_initial(prefix, model, {"x": x, "labels": target})
    return reference_steps(model, initial, prefix,
                           lambda m: torch.nn.functional.mse_loss(m(x), target),
                           optimizers)
