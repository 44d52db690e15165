#!/usr/bin/python3
"""Reference values for test/Execution/numerics-*.test, from PyTorch.

Builds the MLP of mlp.mlir (fc1 -> relu -> fc2 + residual -> relu -> fc3,
cross-entropy) with torch's default initialisation (seed 0), runs one
training step with SGD (lr 0.1) and one with Adam (lr 0.01, the first
step), and writes as .npy (numpy.save):

  mlp/          input0.npy, labels.npy and every initial parameter (NAME.npy)
  mlp.onnx      the model with its initial parameters as initializers
                (graph input "x"), a training export
  mlp-sgd/      loss.npy, NAME.grad.npy, updated NAME.npy
  mlp-adam/     the same for Adam

Run with Debian's torch: /usr/bin/python3 generate_mlp.py (torch 1.13 CPU).
"""
import os

import torch

from fixtures import reference_steps, save_initial


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.fc2 = torch.nn.Linear(16, 16)
        self.fc3 = torch.nn.Linear(16, 3)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        h = torch.relu(self.fc2(h) + h)
        return self.fc3(h)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    torch.manual_seed(0)
    model = MLP()
    x = torch.randn(4, 8)
    labels = torch.tensor([0, 2, 1, 2], dtype=torch.int64)
    initial = save_initial(os.path.join(here, "mlp"), model,
                           {"input0": x, "labels": labels})
    torch.onnx.export(model, x, os.path.join(here, "mlp.onnx"),
                      input_names=["x"], output_names=["logits"],
                      training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False, opset_version=13)

    reference_steps(model, initial, os.path.join(here, "mlp"),
                    lambda m: torch.nn.functional.cross_entropy(m(x), labels))

if __name__ == "__main__":
    main()
