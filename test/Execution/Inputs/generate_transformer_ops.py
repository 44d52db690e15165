#!/usr/bin/python3
"""Per-op reference values for test/Execution/numerics-transformer-ops.test.

One case per row of CASES: the op's tensor operands are parameters (so the
step returns their gradients), its result goes to an MSE loss against a
fixed target ("labels"), and one SGD step (lr 0.1) runs in PyTorch (Debian's
torch 1.13 on the CPU). For each case NAME this writes, under xfmr-ops/:

  NAME.mlir      the same model in nn IR (@forward, parameters by name)
  NAME/          every parameter's initial value, labels.npy (the target),
                 input0.npy for integer inputs (embedding indices)
  NAME-sgd/      loss.npy, PARAM.grad.npy, updated PARAM.npy

and the lit test ../numerics-transformer-ops.test, one vram-opt run and one
comparison per case. Add a case by adding a row.

Run: /usr/bin/python3 generate_transformer_ops.py
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "xfmr-ops")


def ty(shape, dtype="f32"):
    if not shape:
        return "tensor<%s>" % dtype
    return "tensor<%sx%s>" % ("x".join(str(d) for d in shape), dtype)


def upper_mask(n):
    return torch.triu(torch.ones(n, n, dtype=torch.bool), 1)


def mask_attr(m):
    rows = ", ".join("[" + ", ".join("true" if v else "false" for v in r) +
                     "]" for r in m.tolist())
    return "dense<[%s]> : %s" % (rows, ty(list(m.shape), "i1"))


# name: (params {name: shape}, int inputs {name: tensor}, torch fn(params,
# inputs) -> out, nn IR body lines given the params' SSA names, out shape).
def case_linear3d():
    def fn(p, i):
        return F.linear(p["x"], p["w"], p["b"])
    body = ["%y = nn.linear %x, %w, %b : ({}, {}, {}) -> {}".format(
        ty([2, 3, 4]), ty([5, 4]), ty([5]), ty([2, 3, 5]))]
    return {"x": [2, 3, 4], "w": [5, 4], "b": [5]}, {}, fn, body


def case_matmul_broadcast():
    def fn(p, i):
        return torch.matmul(p["a"], p["b"])
    body = ["%y = nn.matmul %a, %b : ({}, {}) -> {}".format(
        ty([2, 1, 3, 4]), ty([3, 4, 5]), ty([2, 3, 3, 5]))]
    return {"a": [2, 1, 3, 4], "b": [3, 4, 5]}, {}, fn, body


def case_matmul_2d_rhs():
    def fn(p, i):
        return torch.matmul(p["a"], p["b"])
    body = ["%y = nn.matmul %a, %b : ({}, {}) -> {}".format(
        ty([2, 3, 4]), ty([4, 5]), ty([2, 3, 5]))]
    return {"a": [2, 3, 4], "b": [4, 5]}, {}, fn, body


def case_bmm():
    def fn(p, i):
        return torch.bmm(p["a"], p["b"])
    body = ["%y = nn.bmm %a, %b : ({}, {}) -> {}".format(
        ty([2, 3, 4]), ty([2, 4, 5]), ty([2, 3, 5]))]
    return {"a": [2, 3, 4], "b": [2, 4, 5]}, {}, fn, body


def case_layer_norm():
    def fn(p, i):
        return F.layer_norm(p["x"], (6,), p["w"], p["b"], eps=1e-5)
    body = ["%y = nn.layer_norm %x weight %w bias %b : ({}, {}, {}) -> {}"
            .format(ty([2, 3, 6]), ty([6]), ty([6]), ty([2, 3, 6]))]
    return {"x": [2, 3, 6], "w": [6], "b": [6]}, {}, fn, body


def case_layer_norm_rank2():
    def fn(p, i):
        return F.layer_norm(p["x"], (3, 4), p["w"], None, eps=1e-3)
    body = ["%y = nn.layer_norm %x weight %w {{normalized_rank = 2 : i64, "
            "eps = 1.000000e-03 : f64}} : ({}, {}) -> {}".format(
                ty([2, 3, 4]), ty([3, 4]), ty([2, 3, 4]))]
    return {"x": [2, 3, 4], "w": [3, 4]}, {}, fn, body


def case_gelu():
    def fn(p, i):
        return F.gelu(p["x"] * 3)
    # x * 3 spreads the inputs over GELU's curved range; the scale is a 0-d
    # constant (nn.mul).
    body = ["%c = nn.constant dense<3.000000e+00> : tensor<f32>",
            "%s = nn.mul %x, %c : ({}, tensor<f32>) -> {}".format(
                ty([2, 7]), ty([2, 7])),
            "%y = nn.gelu %s : {}".format(ty([2, 7]))]
    return {"x": [2, 7]}, {}, fn, body


def case_gelu_tanh():
    def fn(p, i):
        return F.gelu(p["x"] * 3, approximate="tanh")
    body = ["%c = nn.constant dense<3.000000e+00> : tensor<f32>",
            "%s = nn.mul %x, %c : ({}, tensor<f32>) -> {}".format(
                ty([2, 7]), ty([2, 7])),
            "%y = nn.gelu %s {{approximate = #nn<approximate tanh>}} : {}"
            .format(ty([2, 7]))]
    return {"x": [2, 7]}, {}, fn, body


def case_softmax():
    def fn(p, i):
        return torch.softmax(p["x"], 1)
    body = ["%y = nn.softmax %x {{dim = 1 : i64}} : {}".format(ty([2, 3, 4]))]
    return {"x": [2, 3, 4]}, {}, fn, body


def case_log_softmax():
    def fn(p, i):
        return torch.log_softmax(p["x"], -1)
    body = ["%y = nn.log_softmax %x {{dim = -1 : i64}} : {}".format(
        ty([2, 3, 4]))]
    return {"x": [2, 3, 4]}, {}, fn, body


def case_embedding():
    ids = torch.tensor([[1, 4, 0, 4], [6, 2, 2, 3]], dtype=torch.int64)

    def fn(p, i):
        return F.embedding(i["input0"], p["w"], padding_idx=2)
    body = ["%y = nn.embedding %w, %input0 {{padding_idx = 2 : i64}} : "
            "({}, {}) -> {}".format(ty([7, 3]), ty([2, 4], "i64"),
                                    ty([2, 4, 3]))]
    return {"w": [7, 3]}, {"input0": ids}, fn, body


def case_permute():
    # The view follows an op (x * 2): a parameter's own gradient must have
    # the parameter's layout (see docs/Execution.md).
    def fn(p, i):
        return (p["x"] * 2).permute(2, 0, 1)
    body = ["%c = nn.constant dense<2.000000e+00> : tensor<f32>",
            "%s = nn.mul %x, %c : ({}, tensor<f32>) -> {}".format(
                ty([2, 3, 4]), ty([2, 3, 4])),
            "%y = nn.permute %s {{dims = array<i64: 2, 0, 1>}} : ({}) -> {}"
            .format(ty([2, 3, 4]), ty([4, 2, 3]))]
    return {"x": [2, 3, 4]}, {}, fn, body


def case_transpose_contiguous():
    def fn(p, i):
        return (p["x"] * 2).transpose(0, 2).contiguous().view(4, 6)
    body = ["%c2 = nn.constant dense<2.000000e+00> : tensor<f32>",
            "%s = nn.mul %x, %c2 : ({}, tensor<f32>) -> {}".format(
                ty([2, 3, 4]), ty([2, 3, 4])),
            "%t = nn.transpose %s {{dim0 = 0 : i64, dim1 = 2 : i64}} : ({}) "
            "-> {}".format(ty([2, 3, 4]), ty([4, 3, 2])),
            "%c = nn.contiguous %t : {}".format(ty([4, 3, 2])),
            "%y = nn.reshape %c : {} -> {}".format(ty([4, 3, 2]), ty([4, 6]))]
    return {"x": [2, 3, 4]}, {}, fn, body


def case_slice_step():
    def fn(p, i):
        return p["x"][:, 1:8:3, :] / 4
    body = ["%s = nn.slice %x {{dim = 1 : i64, start = 1 : i64, end = 8 : i64,"
            " step = 3 : i64}} : ({}) -> {}".format(ty([2, 9, 3]),
                                                   ty([2, 3, 3])),
            "%c = nn.constant dense<4.000000e+00> : tensor<f32>",
            "%y = nn.div %s, %c : ({}, tensor<f32>) -> {}".format(
                ty([2, 3, 3]), ty([2, 3, 3]))]
    return {"x": [2, 9, 3]}, {}, fn, body


def case_expand():
    def fn(p, i):
        return p["x"].expand(2, 3, 4) * 1.5
    body = ["%e = nn.expand %x : {} -> {}".format(ty([1, 3, 1]),
                                                 ty([2, 3, 4])),
            "%c = nn.constant dense<1.500000e+00> : tensor<f32>",
            "%y = nn.mul %e, %c : ({}, tensor<f32>) -> {}".format(
                ty([2, 3, 4]), ty([2, 3, 4]))]
    return {"x": [1, 3, 1]}, {}, fn, body


def case_masked_fill():
    m = upper_mask(4)

    def fn(p, i):
        return p["x"].masked_fill(m, -2.5)
    body = ["%m = nn.constant " + mask_attr(m),
            "%y = nn.masked_fill %x, %m {{value = -2.500000e+00 : f64}} : "
            "({}, {}) -> {}".format(ty([2, 4, 4]), ty([4, 4], "i1"),
                                    ty([2, 4, 4]))]
    return {"x": [2, 4, 4]}, {}, fn, body


def case_dropout_p0():
    def fn(p, i):
        return F.dropout(p["x"], 0.0, training=True) * 2
    body = ["%d = nn.dropout %x {{p = 0.000000e+00 : f64}} : {}".format(
        ty([3, 4])),
            "%c = nn.constant dense<2.000000e+00> : tensor<f32>",
            "%y = nn.mul %d, %c : ({}, tensor<f32>) -> {}".format(
                ty([3, 4]), ty([3, 4]))]
    return {"x": [3, 4]}, {}, fn, body


def attention(q, k, v, scale, mask=None, causal=False):
    # The math of F.scaled_dot_product_attention (torch 2), which 1.13
    # lacks: softmax(q k^T scale + mask) v; a bool mask keeps where true.
    s = (q @ k.transpose(-2, -1)) * scale
    if causal:
        keep = torch.tril(torch.ones(s.shape[-2], s.shape[-1],
                                     dtype=torch.bool))
        s = s.masked_fill(~keep, float("-inf"))
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    return s.softmax(-1) @ v


def case_sdpa_causal():
    def fn(p, i):
        return attention(p["q"], p["k"], p["v"], 1 / math.sqrt(3),
                         causal=True)
    body = ["%y = nn.scaled_dot_product_attention %q, %k, %v {{causal}} : "
            "({}, {}, {}) -> {}".format(ty([2, 2, 4, 3]), ty([2, 2, 4, 3]),
                                        ty([2, 2, 4, 2]), ty([2, 2, 4, 2]))]
    return {"q": [2, 2, 4, 3], "k": [2, 2, 4, 3], "v": [2, 2, 4, 2]}, {}, \
        fn, body


def case_sdpa_math_mask():
    m = torch.tensor([[1, 0, 1, 1, 0], [1, 1, 0, 0, 0], [0, 1, 1, 1, 1],
                      [1, 0, 0, 1, 1]], dtype=torch.bool)

    def fn(p, i):
        return attention(p["q"], p["k"], p["v"], 0.3, mask=m)
    body = ["%m = nn.constant " + mask_attr(m),
            "%y = nn.scaled_dot_product_attention %q, %k, %v mask %m "
            "{{backend = #nn<backend math>, scale = 3.000000e-01 : f64}} : "
            "({}, {}, {}, {}) -> {}".format(ty([2, 4, 3]), ty([2, 5, 3]),
                                            ty([2, 5, 2]), ty([4, 5], "i1"),
                                            ty([2, 4, 2]))]
    return {"q": [2, 4, 3], "k": [2, 5, 3], "v": [2, 5, 2]}, {}, fn, body


CASES = [
    ("linear3d", case_linear3d),
    ("matmul-broadcast", case_matmul_broadcast),
    ("matmul-2d-rhs", case_matmul_2d_rhs),
    ("bmm", case_bmm),
    ("layer-norm", case_layer_norm),
    ("layer-norm-rank2", case_layer_norm_rank2),
    ("gelu", case_gelu),
    ("gelu-tanh", case_gelu_tanh),
    ("softmax", case_softmax),
    ("log-softmax", case_log_softmax),
    ("embedding", case_embedding),
    ("permute", case_permute),
    ("transpose-contiguous", case_transpose_contiguous),
    ("slice-step", case_slice_step),
    ("expand", case_expand),
    ("masked-fill", case_masked_fill),
    ("dropout-p0", case_dropout_p0),
    ("sdpa-causal", case_sdpa_causal),
    ("sdpa-math-mask", case_sdpa_math_mask),
]


def save(directory, name, tensor):
    os.makedirs(directory, exist_ok=True)
    np.save(os.path.join(directory, name + ".npy"), tensor.detach().numpy())


def main():
    torch.manual_seed(0)
    run_lines = []
    for name, make in CASES:
        shapes, ints, fn, body = make()
        params = {n: torch.randn(s, requires_grad=True)
                  for n, s in shapes.items()}
        out = fn(params, ints)
        target = torch.randn(out.shape)
        args = ", ".join("%%%s: %s" % (n, ty(list(t.shape), "i64"))
                         for n, t in ints.items())
        lines = ["// Generated by generate_transformer_ops.py (case %s)." %
                 name,
                 "func.func @forward(%s) -> %s {" % (args, ty(list(out.shape)))]
        for n, s in shapes.items():
            lines.append('  %%%s = nn.param "%s" : %s' % (n, n, ty(s)))
        lines += ["  " + l for l in body]
        lines += ["  return %%y : %s" % ty(list(out.shape)), "}"]
        with open(os.path.join(OUT, name + ".mlir"), "w") as f:
            f.write("\n".join(lines) + "\n")
        d = os.path.join(OUT, name)
        for n, p in params.items():
            save(d, n, p)
        for n, t in ints.items():
            save(d, n, t)
        save(d, "labels", target)
        loss = F.mse_loss(out, target)
        loss.backward()
        opt = torch.optim.SGD(params.values(), lr=0.1)
        e = os.path.join(OUT, name + "-sgd")
        save(e, "loss", loss)
        for n, p in params.items():
            save(e, n + ".grad", p.grad)
        opt.step()
        for n, p in params.items():
            save(e, n, p)
        data = ",".join("%s=%%S/Inputs/xfmr-ops/%s/%s.npy" % (n, name, n)
                        for n in list(ints) + list(params) + ["labels"])
        for target in ("cpu", "gpu-emulated"):
            dump = "%s/%s" % (target, name)
            run_lines.append(
                "# RUN: vram-opt %%S/Inputs/xfmr-ops/%s.mlir --mode=train "
                "--loss=mse --optimizer=sgd --lr=0.1 --validate=%s "
                "--input-data=%s --dump=%%t/%s | FileCheck %%s "
                "--check-prefix=SAME\n"
                "# RUN: %%compare-npy %%S/Inputs/xfmr-ops/%s-sgd %%t/%s | "
                "FileCheck %%s --check-prefix=OK"
                % (name, target, data, dump, name, dump))
    test = os.path.join(HERE, "..", "numerics-transformer-ops.test")
    with open(test, "w") as f:
        f.write("""# REQUIRES: execution
# The forward and backward of each transformer op against PyTorch (Debian's
# torch 1.13 on the CPU, Inputs/generate_transformer_ops.py, which also
# writes this file): per case the op's operands are parameters, its result
# goes to an MSE loss, and one SGD step's loss, gradients and updated
# parameters must be within a relative error of 1e-4 (fp32); the measured
# peak equals the predicted one. Each case runs twice: on the CPU's loops
# (--validate=cpu), then on the GPU lowering's kernels, run on the host
# thread by thread (--validate=gpu-emulated).
# RUN: rm -rf %t && mkdir -p %t
""")
        f.write("\n".join(run_lines) + "\n")
        f.write("# SAME: peak bytes {{ *}}[[PEAK:[0-9,]+]] {{ *}}[[PEAK]] "
                "{{ *}}0\n# OK-NOT: FAIL\n# OK: ok loss.npy\n")


if __name__ == "__main__":
    main()
