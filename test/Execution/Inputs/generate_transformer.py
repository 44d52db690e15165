#!/usr/bin/python3
"""Reference values for test/Execution/numerics-transformer.test, from PyTorch.

The GPT-style block of transformer.mlir (same names): token and position
embeddings, pre-LN causal self-attention written out (one qkv Linear split
in three, no bias, heads split by view + transpose, q k^T * 0.5, masked_fill of the
upper triangle with -inf, softmax, @ v, heads merged by transpose +
contiguous + view, projection, dropout p = 0), a residual, pre-LN MLP with
exact GELU, a residual, a final LayerNorm, an lm head without bias and
cross-entropy on the flattened [B*T, V] logits. Batch 2, 5 tokens, width 12,
3 heads of 4, vocabulary 13, MLP 20. Seed 0 (LayerNorm affine parameters
perturbed); one SGD step (lr 0.1) and one
Adam step (lr 0.01), written as .npy:

  transformer/        input0.npy (token ids), labels.npy, every parameter
  transformer-sgd/    loss.npy, NAME.grad.npy, updated NAME.npy
  transformer-adam/   the same for Adam
  transformer.onnx    the block with its initial parameters as initializers,
                      logits flattened to [B*T, V] (graph input "input0"),
                      a training export (opset 17: LayerNormalization)

Run with Debian's torch: /usr/bin/python3 generate_transformer.py (1.13 CPU).
"""
import os

import torch

from fixtures import reference_steps, save_initial

B, T, C, H, V, M = 2, 5, 12, 3, 13, 20


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = torch.nn.Embedding(V, C)
        self.pos = torch.nn.Embedding(T, C)
        self.n1 = torch.nn.LayerNorm(C)
        # No qkv bias: the key's bias has a zero gradient in exact arithmetic
        # (softmax ignores a per-row shift), and Adam's first step normalizes
        # its rounding noise (1e-10) to +-lr, which no two implementations
        # share.
        self.qkv = torch.nn.Linear(C, 3 * C, bias=False)
        self.proj = torch.nn.Linear(C, C)
        self.drop = torch.nn.Dropout(0.0)
        self.n2 = torch.nn.LayerNorm(C)
        self.fc1 = torch.nn.Linear(C, M)
        self.fc2 = torch.nn.Linear(M, C)
        self.nf = torch.nn.LayerNorm(C)
        self.head = torch.nn.Linear(C, V, bias=False)

    def forward(self, ids):
        x = self.tok(ids) + self.pos(torch.arange(T))
        q, k, v = self.qkv(self.n1(x)).split(C, dim=2)
        q, k, v = [t.view(B, T, H, C // H).transpose(1, 2) for t in (q, k, v)]
        s = (q @ k.transpose(2, 3)) * 0.5
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
        s = s.masked_fill(mask, float("-inf"))
        y = s.softmax(-1) @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        x = x + self.drop(self.proj(y))
        h = self.fc2(torch.nn.functional.gelu(self.fc1(self.n2(x))))
        x = x + h
        return self.head(self.nf(x))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    torch.manual_seed(0)
    model = Block().train()
    # LayerNorm's default affine parameters (1, 0) would hide its weight and
    # bias in the forward pass: perturb them.
    with torch.no_grad():
        for ln in (model.n1, model.n2, model.nf):
            ln.weight.add_(0.1 * torch.randn(C))
            ln.bias.add_(0.1 * torch.randn(C))
    ids = torch.randint(0, V, (B, T), dtype=torch.int64)
    labels = torch.randint(0, V, (B * T,), dtype=torch.int64)
    initial = save_initial(os.path.join(here, "transformer"), model,
                           {"input0": ids, "labels": labels})
    losses = reference_steps(
        model, initial, os.path.join(here, "transformer"),
        lambda m: torch.nn.functional.cross_entropy(m(ids).view(-1, V), labels))
    for name, loss in losses.items():
        print(name, "loss", loss)

    # Last, so that tracing cannot shift the random streams above.
    with torch.no_grad():
        for n, p in model.named_parameters():
            p.copy_(initial[n])
    # The exported graph returns the logits as cross_entropy sees them; the
    # module itself (not a wrapper) keeps the parameter names.
    model.forward = lambda t: Block.forward(model, t).view(-1, V)
    torch.onnx.export(model, ids, os.path.join(here, "transformer.onnx"),
                      input_names=["input0"], output_names=["logits"],
                      training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False, opset_version=17)


if __name__ == "__main__":
    main()
