#!/usr/bin/python3
"""Reference values for test/Execution/numerics-cnn.test, from PyTorch.

The CNN of cnn.mlir (conv 3x3 pad 1, batch norm in training mode, relu_,
max pool 3x3 stride 2 pad 1, a residual conv block with `+=`, adaptive
average pooling to 2x2, linear, cross-entropy), seed 0, one SGD step
(lr 0.1) and one Adam step (lr 0.01), written as .npy:

  cnn/        input0.npy, labels.npy, every initial parameter (NAME.npy)
  cnn-sgd/    loss.npy, NAME.grad.npy, updated NAME.npy
  cnn-adam/   the same for Adam
  cnn.onnx    the model with its initial parameters as initializers
              (graph input "input0"), a training export

Run with Debian's torch: /usr/bin/python3 generate_cnn.py (torch 1.13 CPU).
"""
import copy
import os

import torch

from fixtures import reference_steps, save_initial


class CNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 4, 3, padding=1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(4)
        self.conv2 = torch.nn.Conv2d(4, 4, 3, padding=1)
        self.fc = torch.nn.Linear(16, 5)

    def forward(self, x):
        h = torch.relu_(self.bn1(self.conv1(x)))
        p = torch.nn.functional.max_pool2d(h, 3, stride=2, padding=1)
        s = self.conv2(p)
        s += p
        s = torch.relu_(s)
        a = torch.nn.functional.adaptive_avg_pool2d(s, (2, 2))
        return self.fc(torch.flatten(a, 1))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    torch.manual_seed(0)
    model = CNN().train()
    x = torch.randn(2, 3, 8, 8)
    labels = torch.tensor([1, 4], dtype=torch.int64)
    initial = save_initial(os.path.join(here, "cnn"), model,
                           {"input0": x, "labels": labels})
    # A copy: tracing in training mode updates batch norm's running stats.
    torch.onnx.export(copy.deepcopy(model), x, os.path.join(here, "cnn.onnx"),
                      input_names=["input0"], output_names=["logits"],
                      training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False, opset_version=15)

    reference_steps(model, initial, os.path.join(here, "cnn"),
                    lambda m: torch.nn.functional.cross_entropy(m(x), labels))

if __name__ == "__main__":
    main()
