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

GruNet without dropout (2 batch-first layers of 32 with biases), x
[2, 12, 16], one SGD step: gru-stack/ and gru-stack-sgd/, for the ONNX
export's run in numerics-onnx.test (the second layer reads the first's Y
through views).

LstmNoBiasNet (a time-first LSTM(16, 40) without biases whose last hidden
state feeds a Linear), x [12, 2, 16], the same target shape; one SGD step:

  lstm/      x.npy, labels.npy and every initial parameter
  lstm-sgd/  loss.npy, NAME.grad.npy, updated NAME.npy

for numerics-gru.test's torch 1.13 LSTM (LSTMCell step by step, the same
arithmetic as torch 2's oneDNN layer), and its weights in ONNX's gate order
(i, o, f, c) as torch 2's ONNX exporter folds them
(test/Inputs/onnx/lstm_nobias_dynamo.onnx): lstm-onnx/ and lstm-onnx-sgd/,
as the GRU's below.

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
from small_models import BiGruNoBiasNet, GruNet, LstmNoBiasNet  # noqa: E402


def main():
    regression_reference(os.path.join(HERE, "gru"), BiGruNoBiasNet, (12, 2, 8))
    onnx_gate_order(os.path.join(HERE, "gru"), os.path.join(HERE, "gru-onnx"))
    onnx_gate_order(os.path.join(HERE, "gru-sgd"), os.path.join(HERE, "gru-onnx-sgd"))
    regression_reference(os.path.join(HERE, "lstm"), LstmNoBiasNet, (12, 2, 16),
                         optimizers=[o for o in OPTIMIZERS if o[0] == "sgd"])
    regression_reference(os.path.join(HERE, "gru-stack"), lambda: GruNet(dropout=0.0),
                         (2, 12, 16), optimizers=[o for o in OPTIMIZERS if o[0] == "sgd"])
    for source, out in (("lstm", "lstm-onnx"), ("lstm-sgd", "lstm-onnx-sgd")):
        # W and R are lstm_nobias_dynamo.onnx's initializers val_40, val_41.
        onnx_gate_order(os.path.join(HERE, source), os.path.join(HERE, out),
                        LSTM_ORDER, ("",), ("val_40", "val_41"))


# ONNX's gate blocks as PyTorch's: GRU z, r, h from r, z, n; LSTM i, o, f, c
# from i, f, g, o.
GRU_ORDER, LSTM_ORDER = (1, 0, 2), (0, 3, 1, 2)


def onnx_gate_order(source, out, order=GRU_ORDER, directions=("", "_reverse"),
                    names=("W", "R")):
    """The weights (and gradients) in SOURCE as ONNX's W and R in OUT (named
    after the model's initializers): the directions stacked, each one's row
    blocks reordered from PyTorch's gate order to ONNX's; a step's other
    files (loss, fc) copied."""
    os.makedirs(out, exist_ok=True)

    def reorder(name, suffix):
        blocks = []
        for direction in directions:
            w = numpy.load(os.path.join(source, f"rnn.{name}_l0{direction}{suffix}.npy"))
            gates = numpy.split(w, len(order))
            blocks.append(numpy.concatenate([gates[k] for k in order]))
        return numpy.stack(blocks)

    for suffix in ("", ".grad"):
        if not os.path.exists(os.path.join(source, f"rnn.weight_ih_l0{suffix}.npy")):
            continue
        numpy.save(os.path.join(out, f"{names[0]}{suffix}.npy"), reorder("weight_ih", suffix))
        numpy.save(os.path.join(out, f"{names[1]}{suffix}.npy"), reorder("weight_hh", suffix))
    for f in os.listdir(source):
        if os.path.exists(os.path.join(source, "loss.npy")) and not f.startswith("rnn."):
            numpy.save(os.path.join(out, f), numpy.load(os.path.join(source, f)))


if __name__ == "__main__":
    main()
