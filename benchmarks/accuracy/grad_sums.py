"""How autograd sums a value's gradients (torch/csrc/autograd/input_buffer.cpp):
for each case, the adds of one backward in order, out of place (aten::add, a
new tensor) or in place (aten::add_), from the CPU profiler. The engine adds
into the first gradient in place only when it holds the only reference to it
and to its storage; a gradient that is a view (F.linear's weight gradient,
TBackward's grad.t(); the >2-D input F.linear folds, ViewBackward's reshape)
is not, so the first sum is a new tensor.

    benchmarks/accuracy/truth-env.sh python3 benchmarks/accuracy/grad_sums.py \
        > benchmarks/accuracy/results/grad-sums-torch-2.15.0-cpu.json

test/Transforms/build-step-grad-views.mlir models the same cases."""
import json
import platform

import torch
from torch.profiler import ProfilerActivity, profile


def adds(loss, shape):
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        loss.backward()
    return [e.name for e in prof.events()
            if e.name in ("aten::add", "aten::add_") and e.input_shapes
            and e.input_shapes[0] == list(shape)]


def weight_used_by_linears(uses):
    """One [192, 64] weight, F.linear of a different [4, 64] input each time."""
    w = torch.nn.Parameter(torch.randn(192, 64))
    loss = sum(torch.nn.functional.linear(torch.randn(4, 64), w).sum() for _ in range(uses))
    return adds(loss, w.shape)


def input_read_by_linears(shape, uses):
    """One activation read by `uses` bias-free and biased projections."""
    x = torch.randn(*shape, requires_grad=True) * 2
    layers = [torch.nn.Linear(shape[-1], shape[-1], bias=i % 2 == 0) for i in range(uses)]
    loss = sum(layer(x) for layer in layers).sum()
    return adds(loss, x.shape)


def matmul_operand(shape, other_shape, uses, index=0):
    """One operand of torch.matmul (`index` 0: the left one) read by `uses`
    products with fresh other operands."""
    x = torch.randn(*shape, requires_grad=True) * 2
    if index == 0:
        loss = sum((x @ torch.randn(*other_shape)).sum() for _ in range(uses))
    else:
        loss = sum((torch.randn(*other_shape) @ x).sum() for _ in range(uses))
    return adds(loss, x.shape)


def tied_embedding():
    """An embedding's weight that the output layer reads too (GPT-2's lm_head)."""
    emb = torch.nn.Embedding(100, 16)
    h = emb(torch.randint(0, 100, (2, 8)))
    return adds(torch.nn.functional.linear(h, emb.weight).sum(), emb.weight.shape)


def gru_weight_hh(steps):
    gru = torch.nn.GRU(16, 32, batch_first=True)
    y, _ = gru(torch.randn(2, steps, 16))
    return adds(y.sum(), gru.weight_hh_l0.shape)


def main():
    torch.manual_seed(0)
    rows = {
        "linear_weight_x5": weight_used_by_linears(5),
        "linear_input_3d_x3": input_read_by_linears((2, 8, 64), 3),
        "linear_input_2d_x3": input_read_by_linears((16, 64), 3),
        "gru_weight_hh_4_steps": gru_weight_hh(4),
        "tied_embedding": tied_embedding(),
        "matmul_3d_by_2d_x3": matmul_operand((2, 8, 64), (64, 64), 3),
        "matmul_2d_weight_of_3d_x3": matmul_operand((64, 64), (2, 8, 64), 3, index=1),
        "matmul_4d_x3": matmul_operand((2, 4, 8, 16), (2, 4, 16, 8), 3),
        "matmul_3d_by_3d_x3": matmul_operand((4, 8, 16), (4, 16, 8), 3),
        "matmul_2d_x3": matmul_operand((8, 16), (16, 8), 3),
        "matmul_broadcast_batch_x3": matmul_operand((1, 4, 8, 16), (2, 4, 16, 8), 3),
    }
    print(json.dumps({"torch": torch.__version__, "machine": platform.platform(),
                      "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
