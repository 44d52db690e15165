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

LstmNoBiasNet (a time-first LSTM(16, 40) without biases whose last hidden
state feeds a Linear), x [12, 2, 16], the same target shape; one SGD step:

  lstm/      x.npy, labels.npy and every initial parameter
  lstm-sgd/  loss.npy, NAME.grad.npy, updated NAME.npy

for numerics-gru.test's torch 1.13 LSTM (LSTMCell step by step, the same
arithmetic as torch 2's oneDNN layer).

The same GRU's weights as an ONNX model keeps them when they are
initializers in ONNX's gate order (test/Inputs/onnx/gru_onnx_order.textproto:
W [2, 72, 8] and R [2, 72, 24], each direction's rows as z, r, h where
PyTorch's are r, z, n), for numerics-gru.test's ONNX run:

  gru-onnx/      W.npy and R.npy (the initial weights, reordered)
  gru-onnx-sgd/  loss.npy, fc.*, W.grad.npy, R.grad.npy and the updated W.npy
                 and R.npy: the SGD reference, reordered the same way
Made with torch 2.15.0 on the CPU (the truth environment):
benchmarks/accuracy/truth-env.sh python3 test/Execution/Inputs/generate_rnn.py
"""
import os
import sys

import numpy
import torch

from fixtures import OPTIMIZERS, regression_reference

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "benchmarks", "accuracy"))
from small_models import BiGruNoBiasNet, LstmNoBiasNet  # noqa: E402


def main():
    regression_reference(os.path.join(HERE, "gru"), BiGruNoBiasNet, (12, 2, 8))
    onnx_gate_order(os.path.join(HERE, "gru"), os.path.join(HERE, "gru-onnx"))
    onnx_gate_order(os.path.join(HERE, "gru-sgd"), os.path.join(HERE, "gru-onnx-sgd"))
    regression_reference(os.path.join(HERE, "lstm"), LstmNoBiasNet, (12, 2, 16),
                         optimizers=[o for o in OPTIMIZERS if o[0] == "sgd"])


def onnx_gate_order(source, out):
    """The weights (and gradients) in SOURCE as ONNX's GRU W and R in OUT:
    the two directions stacked, each one's row blocks r, z, n reordered to
    z, r, h; a step's other files (loss, fc) copied."""
    os.makedirs(out, exist_ok=True)

    def reorder(name, suffix):
        blocks = []
        for direction in ("", "_reverse"):
            w = numpy.load(os.path.join(source, f"rnn.{name}_l0{direction}{suffix}.npy"))
            r, z, n = numpy.split(w, 3)
            blocks.append(numpy.concatenate([z, r, n]))
        return numpy.stack(blocks)

    for suffix in ("", ".grad"):
        if not os.path.exists(os.path.join(source, f"rnn.weight_ih_l0{suffix}.npy")):
            continue
        numpy.save(os.path.join(out, f"W{suffix}.npy"), reorder("weight_ih", suffix))
        numpy.save(os.path.join(out, f"R{suffix}.npy"), reorder("weight_hh", suffix))
    for f in os.listdir(source):
        if os.path.exists(os.path.join(source, "loss.npy")) and not f.startswith("rnn."):
            numpy.save(os.path.join(out, f), numpy.load(os.path.join(source, f)))


if __name__ == "__main__":
    main()
