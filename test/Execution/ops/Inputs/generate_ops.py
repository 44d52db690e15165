#!/usr/bin/python3
"""Per-op numeric tests: one tiny model per table row, against PyTorch.

Each case puts the op's inputs in parameters (so --dump writes their
gradients), runs the op, and trains on mse_loss (cross-entropy for the
cross_entropy case) against a fixed target for one SGD step (lr 0.1). For
each row this writes, next to this script:

  <case>/       every parameter's initial value (NAME.npy) and labels.npy
  <case>-sgd/   PyTorch's loss.npy, NAME.grad.npy and the updated NAME.npy

and, one directory up, the lit test <case>.mlir: the nn IR of the same
model, with RUN lines that run `vram-opt --validate=cpu --dump` and
`--validate=gpu-emulated --dump` (measured allocation = predicted, to the
byte) and compare every file of <case>-sgd with compare-npy.py (relative
error <= 1e-4).

To test a new op, add one Case row to CASES. Run with Debian's torch:
/usr/bin/python3 generate_ops.py (torch 1.13, CPU). With case names
(generate_ops.py prelu prelu-single), only those cases are written; every
row set is still drawn from its own seed, so they get the values of a full
run. Each test's header names the torch that made its reference: the
PReLU rows (make_cases_10) were made with torch 2.15 on a machine without
Debian's torch (benchmarks/accuracy/truth-env.sh python3 generate_ops.py
prelu prelu-single prelu-vector prelu-0d-weight), as were the bilinear
rows (make_cases_12: generate_ops.py upsample_bilinear2d
upsample_bilinear2d-align ...). The k smallest (make_cases_13:
generate_ops.py topk-smallest) and amax / amin (make_cases_14:
generate_ops.py amax amin) were made by name with Debian's torch 1.13.
"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
# The torch that makes the references, as the tests' headers name it.
TORCH = ".".join(torch.__version__.split("+")[0].split(".")[:2])


def ttype(shape, dtype="f32"):
    if not shape:
        return "tensor<%s>" % dtype
    return "tensor<%sx%s>" % ("x".join(str(d) for d in shape), dtype)


class Case:
    """One op test.

    name: the test's name; params: NAME -> initial value (a tensor); body:
    the nn IR lines after the parameters, using %NAME for each parameter and
    defining %y, the output; torch_fn: the same computation on a dict of
    parameters; out: the output shape; loss: "mse" or "cross_entropy";
    result: the value returned (y); inputs: NAME -> value, the model's
    inputs (%NAME, step arguments input0, input1, ...; no gradient), which
    torch_fn finds in its dict too; doc: a line saying what is tested.
    """

    def __init__(self, name, doc, params, body, torch_fn, out, loss="mse",
                 result="y", inputs=None):
        self.name, self.doc, self.params = name, doc, params
        self.body, self.torch_fn, self.out = body, torch_fn, out
        self.loss, self.result = loss, result
        self.inputs = inputs or {}


def randn(*shape, scale=1.0):
    return torch.randn(*shape) * scale


def positive(*shape):
    return torch.rand(*shape) + 0.5


def away_from_zero(*shape):
    sign = torch.where(torch.rand(*shape) < 0.5, -1.0, 1.0)
    return sign * (torch.rand(*shape) + 0.5)


def unary(name, op, fn, init=None, shape=(2, 5), attrs="", doc=None):
    t = ttype(shape)
    attr = (" {%s}" % attrs) if attrs else ""
    return Case(name, doc or "nn.%s%s" % (op, attr),
                {"x": init(*shape) if init else randn(*shape)},
                ["%%y = nn.%s %%x%s : %s" % (op, attr, t)],
                lambda p: fn(p["x"]), shape)


def binary(name, op, fn, a_shape, b_shape, out, init_b=None):
    return Case(
        name, "nn.%s %s x %s" % (op, list(a_shape), list(b_shape)),
        {"a": randn(*a_shape),
         "b": init_b(*b_shape) if init_b else randn(*b_shape)},
        ["%%y = nn.%s %%a, %%b : (%s, %s) -> %s"
         % (op, ttype(a_shape), ttype(b_shape), ttype(out))],
        lambda p: fn(p["a"], p["b"]), out)


def conv_case(name, c, f, groups, stride, padding, bias=True):
    shape, k = (2, c, 5, 5), 3
    params = {"x": randn(*shape), "w": randn(f, c // groups, k, k, scale=0.3)}
    operands = "%x, %w"
    types = "%s, %s" % (ttype(shape), ttype((f, c // groups, k, k)))
    if bias:
        params["b"] = randn(f)
        operands += ", %b"
        types += ", " + ttype((f,))
    oh = (5 + 2 * padding - k) // stride + 1
    out = (2, f, oh, oh)
    body = ["%%y = nn.conv2d %s {groups = %d : i64, padding = array<i64: %d, "
            "%d>, strides = array<i64: %d, %d>} : (%s) -> %s"
            % (operands, groups, padding, padding, stride, stride, types,
               ttype(out))]
    return Case(
        name, "nn.conv2d groups %d, stride %d, padding %d" % (groups, stride,
                                                            padding),
        params, body,
        lambda p: F.conv2d(p["x"], p["w"], p.get("b"), stride=stride,
                           padding=padding, groups=groups), out)


def avg_pool_case(name, kernel, stride, padding, ceil, include_pad):
    shape = (2, 3, 6, 6)
    attrs = ["kernel_size = array<i64: %d, %d>" % (kernel, kernel),
             "strides = array<i64: %d, %d>" % (stride, stride),
             "padding = array<i64: %d, %d>" % (padding, padding)]
    if ceil:
        attrs.append("ceil_mode")
    if not include_pad:
        attrs.append("count_include_pad = false")
    x = randn(*shape)
    out = tuple(F.avg_pool2d(x, kernel, stride, padding, ceil,
                             include_pad).shape)
    return Case(
        name, "nn.avg_pool2d k%d s%d p%d%s%s" % (
            kernel, stride, padding, " ceil_mode" if ceil else "",
            "" if include_pad else " count_include_pad=false"),
        {"x": x},
        ["%%y = nn.avg_pool2d %%x {%s} : (%s) -> %s"
         % (", ".join(attrs), ttype(shape), ttype(out))],
        lambda p: F.avg_pool2d(p["x"], kernel, stride, padding, ceil,
                               include_pad), out)


def reduction_case(name, op, shape, dims, keepdim):
    """nn.mean or nn.sum over `dims`."""
    x = randn(*shape)
    fn = {"mean": torch.mean, "sum": torch.sum}[op]
    out = tuple(fn(x, dims, keepdim=keepdim).shape)
    attrs = "dims = array<i64: %s>%s" % (", ".join(str(d) for d in dims),
                                         ", keepdim" if keepdim else "")
    return Case(name, "nn.%s {%s}" % (op, attrs), {"x": x},
                ["%%y = nn.%s %%x {%s} : (%s) -> %s"
                 % (op, attrs, ttype(shape), ttype(out))],
                lambda p: fn(p["x"], dims, keepdim=keepdim), out)


def mean_case(name, shape, dims, keepdim):
    return reduction_case(name, "mean", shape, dims, keepdim)


def inplace_act(name, op, fn):
    """act_(input) * w: the in-place form on a tensor that needs no
    gradient (so autograd keeps no clone of it)."""
    t = ttype((2, 5))
    return Case(
        name, "nn.%s {inplace} on a model input, times a parameter" % op,
        {"w": randn(2, 5)},
        ["%%h = nn.%s %%input0 {inplace} : %s" % (op, t),
         "%%y = nn.mul %%h, %%w : (%s, %s) -> %s" % (t, t, t)],
        lambda p: fn(p["input0"].clone()) * p["w"], (2, 5),
        inputs={"input0": randn(2, 5, scale=4)})


def make_cases():
    s = ttype((2, 5))
    cases = [
        # Activations (non-linear pieces spanned by x in [-8, 8]).
        unary("sigmoid", "sigmoid", torch.sigmoid, lambda *s: randn(*s, scale=3)),
        unary("tanh", "tanh", torch.tanh, lambda *s: randn(*s, scale=2)),
        unary("silu", "silu", F.silu, lambda *s: randn(*s, scale=3)),
        unary("hardswish", "hardswish", F.hardswish,
              lambda *s: randn(*s, scale=4)),
        unary("hardsigmoid", "hardsigmoid", F.hardsigmoid,
              lambda *s: randn(*s, scale=4)),
        unary("relu6", "relu6", F.relu6, lambda *s: randn(*s, scale=5)),
        unary("relu", "relu", torch.relu),
        unary("clamp", "clamp", lambda x: torch.clamp(x, -0.5, 0.5),
              attrs="max = 5.000000e-01 : f64, min = -5.000000e-01 : f64"),
        unary("clamp-min", "clamp", lambda x: torch.clamp(x, min=0.25),
              attrs="min = 2.500000e-01 : f64"),
        inplace_act("relu6-inplace", "relu6", lambda x: F.relu6(x, inplace=True)),
        inplace_act("silu-inplace", "silu", lambda x: F.silu(x, inplace=True)),
        inplace_act("hardswish-inplace", "hardswish",
                    lambda x: F.hardswish(x, inplace=True)),
        inplace_act("hardsigmoid-inplace", "hardsigmoid",
                    lambda x: F.hardsigmoid(x, inplace=True)),
        # Unary math.
        unary("neg", "neg", torch.neg),
        unary("exp", "exp", torch.exp),
        unary("erf", "erf", torch.erf),
        unary("sqrt", "sqrt", torch.sqrt, positive),
        unary("rsqrt", "rsqrt", torch.rsqrt, positive),
        unary("reciprocal", "reciprocal", torch.reciprocal, away_from_zero),
        unary("pow2", "pow", lambda x: x.pow(2.0),
              attrs="exponent = 2.000000e+00 : f64"),
        unary("pow3", "pow", lambda x: x.pow(3.0),
              attrs="exponent = 3.000000e+00 : f64"),
        unary("pow-half", "pow", lambda x: x.pow(0.5), positive,
              attrs="exponent = 5.000000e-01 : f64"),
        unary("pow-neg", "pow", lambda x: x.pow(-1.5), positive,
              attrs="exponent = -1.500000e+00 : f64"),
        # Broadcasting arithmetic.
        binary("add", "add", torch.add, (2, 5), (2, 5), (2, 5)),
        binary("add-broadcast", "add", torch.add, (2, 5), (5,), (2, 5)),
        binary("sub", "sub", torch.sub, (2, 5), (2, 5), (2, 5)),
        binary("sub-broadcast", "sub", torch.sub, (2, 1, 5), (3, 1), (2, 3, 5)),
        binary("mul", "mul", torch.mul, (2, 5), (2, 5), (2, 5)),
        binary("mul-broadcast", "mul", torch.mul, (2, 3, 5), (1, 5),
               (2, 3, 5)),
        binary("div", "div", torch.div, (2, 5), (2, 5), (2, 5),
               away_from_zero),
        binary("div-broadcast", "div", torch.div, (2, 1), (2, 4), (2, 4),
               away_from_zero),
        Case("mul-constant", "nn.mul by a 0-d nn.constant (x * 2.5)",
             {"x": randn(2, 5)},
             ["%c = nn.constant dense<2.500000e+00> : tensor<f32>",
              "%%y = nn.mul %%x, %%c : (%s, tensor<f32>) -> %s" % (s, s)],
             lambda p: p["x"] * 2.5, (2, 5)),
        Case("div-constant", "nn.div by a 0-d nn.constant (x / 4)",
             {"x": randn(2, 5)},
             ["%c = nn.constant dense<4.000000e+00> : tensor<f32>",
              "%%y = nn.div %%x, %%c : (%s, tensor<f32>) -> %s" % (s, s)],
             lambda p: p["x"] / 4.0, (2, 5)),
        Case("add-constant", "nn.add of a non-splat nn.constant",
             {"x": randn(2, 3)},
             ["%c = nn.constant dense<[1.000000e+00, -2.000000e+00, "
              "5.000000e-01]> : tensor<3xf32>",
              "%%y = nn.add %%x, %%c : (%s, tensor<3xf32>) -> %s"
              % (ttype((2, 3)), ttype((2, 3)))],
             lambda p: p["x"] + torch.tensor([1.0, -2.0, 0.5]), (2, 3)),
        Case("sub-inplace", "h = a * 2; h -= b (nn.sub {inplace})",
             {"a": randn(2, 5), "b": randn(5)},
             ["%c = nn.constant dense<2.000000e+00> : tensor<f32>",
              "%%h = nn.mul %%a, %%c : (%s, tensor<f32>) -> %s" % (s, s),
              "%%y = nn.sub %%h, %%b {inplace} : (%s, tensor<5xf32>) -> %s"
              % (s, s)],
             lambda p: (p["a"] * 2.0).sub_(p["b"]), (2, 5)),
        # Reductions and shape ops.
        mean_case("mean", (2, 3, 4), [1], False),
        mean_case("mean-keepdim", (2, 3, 4), [0, -1], True),
        mean_case("mean-spatial", (2, 3, 4, 4), [2, 3], False),
        Case("concat", "nn.concat of two parameters along dim 1",
             {"a": randn(2, 2, 3), "b": randn(2, 3, 3)},
             ["%%y = nn.concat %%a, %%b {dim = 1 : i64} : (%s, %s) -> %s"
              % (ttype((2, 2, 3)), ttype((2, 3, 3)), ttype((2, 5, 3)))],
             lambda p: torch.cat([p["a"], p["b"]], 1), (2, 5, 3)),
        Case("concat-last", "nn.concat of three parameters along dim -1",
             {"a": randn(2, 1), "b": randn(2, 3), "c": randn(2, 2)},
             ["%%y = nn.concat %%a, %%b, %%c {dim = -1 : i64} : (%s, %s, %s) "
              "-> %s" % (ttype((2, 1)), ttype((2, 3)), ttype((2, 2)),
                         ttype((2, 6)))],
             lambda p: torch.cat([p["a"], p["b"], p["c"]], -1), (2, 6)),
        Case("pad", "nn.pad (constant 0.5) of a [2, 3, 4] tensor",
             {"x": randn(2, 3, 4)},
             ["%%y = nn.pad %%x {high = array<i64: 0, 2, 1>, low = array<i64: "
              "0, 1, 0>, value = 5.000000e-01 : f64} : (%s) -> %s"
              % (ttype((2, 3, 4)), ttype((2, 6, 5)))],
             lambda p: F.pad(p["x"], (0, 1, 1, 2), value=0.5), (2, 6, 5)),
        # A parameter's own gradient cannot be a view of another shape
        # (the step builder requires .grad to have the parameter's shape),
        # so the views get their input from a mul.
        Case("flatten", "nn.flatten of x * 2 (a view; the gradient is a view)",
             {"x": randn(2, 3, 2)},
             ["%c = nn.constant dense<2.000000e+00> : tensor<f32>",
              "%%h = nn.mul %%x, %%c : (%s, tensor<f32>) -> %s"
              % (ttype((2, 3, 2)), ttype((2, 3, 2))),
              "%%y = nn.flatten %%h : (%s) -> %s" % (ttype((2, 3, 2)),
                                                    ttype((2, 6)))],
             lambda p: torch.flatten(p["x"] * 2.0, 1), (2, 6)),
        Case("reshape", "nn.reshape of x * 2 (a view)",
             {"x": randn(2, 6)},
             ["%c = nn.constant dense<2.000000e+00> : tensor<f32>",
              "%%h = nn.mul %%x, %%c : (%s, tensor<f32>) -> %s"
              % (ttype((2, 6)), ttype((2, 6))),
              "%%y = nn.reshape %%h : %s -> %s" % (ttype((2, 6)),
                                                  ttype((3, 4)))],
             lambda p: (p["x"] * 2.0).reshape(3, 4), (3, 4)),
        Case("cast", "nn.cast to f16 and back (x.half().float())",
             {"x": randn(2, 5)},
             ["%%h = nn.cast %%x : %s to %s" % (s, ttype((2, 5), "f16")),
              "%%y = nn.cast %%h : %s to %s" % (ttype((2, 5), "f16"), s)],
             lambda p: p["x"].half().float(), (2, 5)),
        # Layers.
        Case("linear", "nn.linear with bias",
             {"x": randn(3, 4), "w": randn(5, 4, scale=0.5), "b": randn(5)},
             ["%%y = nn.linear %%x, %%w, %%b : (%s, %s, %s) -> %s"
              % (ttype((3, 4)), ttype((5, 4)), ttype((5,)), ttype((3, 5)))],
             lambda p: F.linear(p["x"], p["w"], p["b"]), (3, 5)),
        conv_case("conv2d", 3, 4, 1, 1, 1),
        conv_case("conv2d-groups", 4, 6, 2, 2, 1),
        conv_case("conv2d-depthwise", 4, 4, 4, 1, 1, bias=False),
        conv_case("conv2d-depthwise-stride", 3, 6, 3, 2, 0),
        Case("batch_norm", "nn.batch_norm (training statistics)",
             {"x": randn(2, 3, 2, 2, scale=2), "w": randn(3), "b": randn(3)},
             ["%m = nn.buffer \"bn.running_mean\" : tensor<3xf32>",
              "%v = nn.buffer \"bn.running_var\" : tensor<3xf32>",
              "%%y = nn.batch_norm %%x weight %%w bias %%b stats %%m, %%v : "
              "(%s, %s, %s, %s, %s) -> %s"
              % (ttype((2, 3, 2, 2)), ttype((3,)), ttype((3,)), ttype((3,)),
                 ttype((3,)), ttype((2, 3, 2, 2)))],
             lambda p: F.batch_norm(p["x"], torch.zeros(3), torch.ones(3),
                                    p["w"], p["b"], training=True),
             (2, 3, 2, 2)),
        Case("max_pool2d", "nn.max_pool2d k3 s2 p1",
             {"x": randn(2, 2, 5, 5)},
             ["%%y = nn.max_pool2d %%x {kernel_size = array<i64: 3, 3>, "
              "padding = array<i64: 1, 1>, strides = array<i64: 2, 2>} : "
              "(%s) -> %s" % (ttype((2, 2, 5, 5)), ttype((2, 2, 3, 3)))],
             lambda p: F.max_pool2d(p["x"], 3, 2, 1), (2, 2, 3, 3)),
        avg_pool_case("avg_pool2d", 2, 2, 0, False, True),
        avg_pool_case("avg_pool2d-pad", 3, 2, 1, False, True),
        avg_pool_case("avg_pool2d-exclude-pad", 3, 2, 1, False, False),
        avg_pool_case("avg_pool2d-ceil", 3, 2, 1, True, False),
        Case("adaptive_avg_pool2d", "nn.adaptive_avg_pool2d to 2x2",
             {"x": randn(2, 2, 4, 4)},
             ["%%y = nn.adaptive_avg_pool2d %%x {output_size = array<i64: 2, "
              "2>} : (%s) -> %s" % (ttype((2, 2, 4, 4)), ttype((2, 2, 2, 2)))],
             lambda p: F.adaptive_avg_pool2d(p["x"], (2, 2)), (2, 2, 2, 2)),
        Case("cross_entropy", "nn.cross_entropy (the loss itself)",
             {"x": randn(3, 4, scale=2)}, [], lambda p: p["x"], (3, 4),
             loss="cross_entropy", result="x"),
    ]
    return cases


def rms_norm_ref(x, w, rank, eps):
    """torch 1.13 has no rms_norm: its definition, under autograd."""
    dims = tuple(range(-rank, 0))
    y = x * torch.rsqrt(x.pow(2).mean(dims, keepdim=True) + eps)
    return y * w if w is not None else y


def rms_norm_case(name, shape, rank, eps, weight):
    params = {"x": randn(*shape)}
    operands, types = "%x", ttype(shape)
    if weight:
        params["w"] = randn(*shape[len(shape) - rank:])
        operands += " weight %w"
        types += ", " + ttype(shape[len(shape) - rank:])
    attrs = "eps = %e : f64, normalized_rank = %d : i64" % (eps, rank)
    return Case(
        name, "nn.rms_norm {%s}%s, against its definition x rsqrt(mean(x^2) "
        "+ eps) w under autograd (torch 1.13 has no rms_norm)"
        % (attrs, " with weight" if weight else ""),
        params,
        ["%%y = nn.rms_norm %s {%s} : (%s) -> %s"
         % (operands, attrs, types, ttype(shape))],
        lambda p: rms_norm_ref(p["x"], p.get("w"), rank, eps), shape)


def group_norm_case(name, shape, groups, eps, affine):
    params = {"x": randn(*shape, scale=2)}
    operands, types = "%x", ttype(shape)
    if affine:
        params["w"] = randn(shape[1])
        params["b"] = randn(shape[1])
        operands += " weight %w bias %b"
        types += ", %s, %s" % (ttype((shape[1],)), ttype((shape[1],)))
    attrs = "eps = %e : f64, num_groups = %d : i64" % (eps, groups)
    return Case(
        name, "nn.group_norm {%s}%s on %s" % (
            attrs, " with weight and bias" if affine else "", list(shape)),
        params,
        ["%%y = nn.group_norm %s {%s} : (%s) -> %s"
         % (operands, attrs, types, ttype(shape))],
        lambda p: F.group_norm(p["x"], groups, p.get("w"), p.get("b"), eps),
        shape)


def make_cases_2():
    """Rows added after the first set, drawn from their own seed so that
    the first set's fixtures do not change."""
    x4 = ttype((2, 4, 5, 5))
    w4 = ttype((4, 1, 3, 3))
    s = ttype((2, 5))
    return [
        rms_norm_case("rms_norm", (2, 3, 4), 1, 1e-6, True),
        rms_norm_case("rms_norm-rank2", (2, 3, 4), 2, 1e-3, False),
        group_norm_case("group_norm", (2, 6, 3, 3), 3, 1e-5, True),
        group_norm_case("group_norm-noaffine", (2, 4, 5), 2, 1e-3, False),
        # In place on a tensor that needs a gradient: autograd clones the
        # input before the op overwrites it (MobileNetV2's conv + ReLU6).
        Case("relu6-inplace-grad",
             "depthwise nn.conv2d then nn.relu6 {inplace} (the clone of its "
             "input is made before the op)",
             {"x": randn(2, 4, 5, 5, scale=2),
              "w": randn(4, 1, 3, 3, scale=0.8)},
             ["%%h = nn.conv2d %%x, %%w {groups = 4 : i64, padding = "
              "array<i64: 1, 1>, strides = array<i64: 1, 1>} : (%s, %s) -> %s"
              % (x4, w4, x4),
              "%%y = nn.relu6 %%h {inplace} : %s" % x4],
             lambda p: F.relu6(F.conv2d(p["x"], p["w"], padding=1, groups=4),
                               inplace=True), (2, 4, 5, 5)),
        Case("silu-inplace-grad",
             "h = x * 1.5; nn.silu {inplace} of h (the clone of h is made "
             "before the op)",
             {"x": randn(2, 5, scale=3)},
             ["%c = nn.constant dense<1.500000e+00> : tensor<f32>",
              "%%h = nn.mul %%x, %%c : (%s, tensor<f32>) -> %s" % (s, s),
              "%%y = nn.silu %%h {inplace} : %s" % s],
             lambda p: F.silu(p["x"] * 1.5, inplace=True), (2, 5)),
    ]


def make_cases_3():
    """A parameter used through a transposing view (own seed, as above)."""
    return [
        Case("matmul-param-transposed",
             "x @ W.t() with W [5, 4] a parameter (nn.transpose of nn.param; "
             "its gradient is copied into the parameter's layout)",
             {"w": randn(5, 4, scale=0.5)},
             ["%%wt = nn.transpose %%w {dim0 = 0 : i64, dim1 = 1 : i64} : "
              "(%s) -> %s" % (ttype((5, 4)), ttype((4, 5))),
              "%%y = nn.matmul %%input0, %%wt : (%s, %s) -> %s"
              % (ttype((3, 4)), ttype((4, 5)), ttype((3, 5)))],
             lambda p: p["input0"] @ p["w"].t(), (3, 5),
             inputs={"input0": randn(3, 4)}),
    ]


def make_cases_4():
    """adaptive_avg_pool2d to larger outputs (own seed, as above)."""
    def pool(name, shape, out):
        x = randn(*shape)
        oshape = shape[:2] + out
        return Case(
            name, "nn.adaptive_avg_pool2d %s -> %s" % (list(shape),
                                                       list(oshape)),
            {"x": x},
            ["%%y = nn.adaptive_avg_pool2d %%x {output_size = array<i64: %d, "
             "%d>} : (%s) -> %s" % (out[0], out[1], ttype(shape),
                                    ttype(oshape))],
            lambda p: F.adaptive_avg_pool2d(p["x"], out), oshape)
    return [
        # VGG's 7x7 pool after a 1x1 feature map (inputs below 224 px).
        pool("adaptive_avg_pool2d-upsample", (2, 3, 1, 1), (7, 7)),
        # One axis pooled, the other repeated.
        pool("adaptive_avg_pool2d-mixed", (2, 2, 4, 3), (2, 6)),
    ]


def inplace_grad(name, op, fn, attrs=""):
    """h = x * 1.5; op {inplace} of h: the in-place form on a tensor that
    needs a gradient (autograd keeps its result, or a clone of h)."""
    s = ttype((2, 5))
    attr = ", ".join(filter(None, ["inplace", attrs]))
    return Case(name, "h = x * 1.5; nn.%s {%s} of h" % (op, attr),
                {"x": randn(2, 5, scale=3)},
                ["%c = nn.constant dense<1.500000e+00> : tensor<f32>",
                 "%%h = nn.mul %%x, %%c : (%s, tensor<f32>) -> %s" % (s, s),
                 "%%y = nn.%s %%h {%s} : %s" % (op, attr, s)],
                lambda p: fn(p["x"] * 1.5), (2, 5))


def make_cases_5():
    """LeakyReLU, ELU (SELU, CELU), Softplus, Mish (own seed, as above)."""
    wide = lambda *s: randn(*s, scale=3)
    return [
        unary("leaky_relu", "leaky_relu", lambda x: F.leaky_relu(x, 0.2),
              attrs="negative_slope = 2.000000e-01 : f64"),
        unary("leaky_relu-default", "leaky_relu", F.leaky_relu),
        inplace_grad("leaky_relu-inplace-grad", "leaky_relu",
                     lambda h: F.leaky_relu(h, 0.1, inplace=True),
                     "negative_slope = 1.000000e-01 : f64"),
        unary("elu", "elu", F.elu, wide),
        unary("selu", "elu", F.selu, wide,
              attrs="alpha = 1.6732632423543772 : f64, "
                    "scale = 1.0507009873554805 : f64"),
        unary("celu", "elu", lambda x: F.celu(x, 0.5), wide,
              attrs="alpha = 5.000000e-01 : f64, "
                    "input_scale = 2.000000e+00 : f64"),
        inplace_grad("elu-inplace-grad", "elu",
                     lambda h: F.elu(h, 0.7, inplace=True),
                     "alpha = 7.000000e-01 : f64"),
        inplace_act("elu-inplace", "elu", lambda x: F.elu(x, inplace=True)),
        unary("softplus", "softplus", F.softplus, wide),
        unary("softplus-threshold", "softplus",
              lambda x: F.softplus(x, 2.0, 3.0), wide,
              attrs="beta = 2.000000e+00 : f64, threshold = 3.000000e+00 : f64"),
        unary("mish", "mish", F.mish, wide),
        inplace_grad("mish-inplace-grad", "mish",
                     lambda h: F.mish(h, inplace=True)),
    ]


def conv_transpose_case(name, x_shape, cout, k, stride, padding,
                        output_padding, dilation, groups, bias=True):
    cin = x_shape[1]
    params = {"x": randn(*x_shape),
              "w": randn(cin, cout // groups, k, k, scale=0.3)}
    operands = "%x, %w"
    types = "%s, %s" % (ttype(x_shape), ttype((cin, cout // groups, k, k)))
    if bias:
        params["b"] = randn(cout)
        operands += ", %b"
        types += ", " + ttype((cout,))
    side = ((x_shape[2] - 1) * stride - 2 * padding + dilation * (k - 1)
            + output_padding + 1)
    out = (x_shape[0], cout, side, side)
    pair = lambda v: "array<i64: %d, %d>" % (v, v)
    attrs = ["strides = " + pair(stride), "padding = " + pair(padding),
             "output_padding = " + pair(output_padding),
             "dilation = " + pair(dilation), "groups = %d : i64" % groups]
    return Case(
        name, "nn.conv_transpose2d stride %d, padding %d, output_padding %d, "
        "dilation %d, groups %d%s" % (stride, padding, output_padding, dilation,
                                     groups, "" if bias else ", no bias"),
        params,
        ["%%y = nn.conv_transpose2d %s {%s} : (%s) -> %s"
         % (operands, ", ".join(attrs), types, ttype(out))],
        lambda p: F.conv_transpose2d(p["x"], p["w"], p.get("b"), stride=stride,
                                     padding=padding,
                                     output_padding=output_padding,
                                     groups=groups, dilation=dilation), out)


def upsample_case(name, x_shape, size=None, scale=None):
    x = randn(*x_shape)
    fn = lambda t: F.interpolate(t, size=size, scale_factor=scale,
                                 mode="nearest")
    out = tuple(fn(x).shape)
    how = "scale_factor=%s" % scale if scale else "size=%s" % (size,)
    return Case(name, "nn.upsample_nearest2d (F.interpolate %s)" % how,
                {"x": x},
                ["%%y = nn.upsample_nearest2d %%x : (%s) -> %s"
                 % (ttype(x_shape), ttype(out))],
                lambda p: fn(p["x"]), out)


def make_cases_6():
    """ConvTranspose2d and nearest-neighbour resizing (own seed, as above)."""
    return [
        conv_transpose_case("conv_transpose2d", (2, 4, 3, 3), 3, 2, 2, 0, 0,
                            1, 1),
        conv_transpose_case("conv_transpose2d-groups", (2, 4, 4, 4), 2, 3, 2,
                            1, 1, 1, 2),
        conv_transpose_case("conv_transpose2d-dilation", (1, 2, 4, 4), 3, 3,
                            1, 2, 0, 2, 1, bias=False),
        upsample_case("upsample_nearest2d", (2, 3, 4, 5), scale=2.0),
        upsample_case("upsample_nearest2d-size", (1, 2, 3, 4), size=(7, 6)),
        upsample_case("upsample_nearest2d-down", (1, 2, 6, 6), size=(4, 3)),
    ]


def make_cases_7():
    """roll and a zero pad, Swin's shifted windows (own seed, as above)."""
    return [
        Case("roll", "nn.roll shifts (-3, 2) along dims (1, 2) (Swin's "
             "shifted windows)",
             {"x": randn(2, 5, 4, 3)},
             ["%y = nn.roll %x {shifts = array<i64: -3, 2>, dims = "
              "array<i64: 1, 2>} : " + ttype((2, 5, 4, 3))],
             lambda p: torch.roll(p["x"], (-3, 2), (1, 2)), (2, 5, 4, 3)),
        Case("pad-zero", "nn.pad with zero padding (constant_pad_nd's "
             "copy)", {"x": randn(2, 3, 4)},
             ["%%y = nn.pad %%x {low = array<i64: 0, 0, 0>, high = "
              "array<i64: 0, 0, 0>} : (%s) -> %s"
              % (ttype((2, 3, 4)), ttype((2, 3, 4)))],
             lambda p: F.pad(p["x"], (0, 0, 0, 0)), (2, 3, 4)),
    ]


def inplace_binary_grad(name, op, fn, b_shape, own_sum=False):
    """h = a * 1.5; h op= b in place, b needing a gradient: autograd keeps a
    clone of h made before the op overwrites it. With `own_sum`, b is
    h.sum(-1, keepdim=True) (the MoE router's renormalization)."""
    s, t = ttype((2, 5)), ttype(b_shape)
    params = {"a": randn(2, 5)}
    body = ["%c = nn.constant dense<1.500000e+00> : tensor<f32>",
            "%%h = nn.mul %%a, %%c : (%s, tensor<f32>) -> %s" % (s, s)]
    if own_sum:
        body.append("%%b = nn.sum %%h {dims = array<i64: -1>, keepdim} : "
                    "(%s) -> %s" % (s, t))
    else:
        params["b"] = positive(*b_shape)
    body.append("%%y = nn.%s %%h, %%b {inplace} : (%s, %s) -> %s"
                % (op, s, t, s))

    def torch_fn(p):
        h = p["a"] * 1.5
        b = h.sum(-1, keepdim=True) if own_sum else p["b"]
        return fn(h, b)
    return Case(name, "h = a * 1.5; nn.%s {inplace} of h by %s" % (
        op, "h.sum(-1, keepdim=True)" if own_sum else "a parameter"),
        params, body, torch_fn, (2, 5))


def make_cases_8():
    """sum, and in-place mul/div whose other operand needs a gradient (own
    seed, as above)."""
    return [
        reduction_case("sum-keepdim", "sum", (4, 3), [-1], True),
        reduction_case("sum-middle", "sum", (2, 3, 4), [1], False),
        inplace_binary_grad("div-inplace-grad", "div",
                            lambda h, b: h.div_(b), (2, 1)),
        inplace_binary_grad("mul-inplace-grad", "mul",
                            lambda h, b: h.mul_(b), (2, 5)),
        inplace_binary_grad("div-inplace-own-sum", "div",
                            lambda h, b: h.div_(b), (2, 1), own_sum=True),
    ]


def topk_router_case():
    """MixtralTopKRouter's routing: softmax, top 2 of 6, renormalized in
    place."""
    x, s = ttype((4, 6)), ttype((4, 2))
    def fn(p):
        v, _ = torch.topk(F.softmax(p["x"], -1), 2)
        v /= v.sum(-1, keepdim=True)
        return v
    return Case(
        "topk-router", "softmax, nn.topk k=2, nn.sum and an in-place nn.div "
        "(a mixture-of-experts router)", {"x": randn(4, 6, scale=2)},
        ["%%p = nn.softmax %%x {dim = -1 : i64} : %s" % x,
         "%%v, %%i = nn.topk %%p {k = 2 : i64} : (%s) -> (%s, %s)"
         % (x, s, ttype((4, 2), "i64")),
         "%%t = nn.sum %%v {dims = array<i64: -1>, keepdim} : (%s) -> %s"
         % (s, ttype((4, 1))),
         "%%y = nn.div %%v, %%t {inplace} : (%s, %s) -> %s"
         % (s, ttype((4, 1)), s)],
        fn, (4, 2))


def experts_case():
    """transformers' grouped_mm experts: 5 tokens, 2 of 3 experts each
    (hidden 4, width 3), routing given, weights trained."""
    T, k, E, H, I = 5, 2, 3, 4, 3
    S = T * k
    idx = torch.stack([torch.randperm(E)[:k] for _ in range(T)])
    t = lambda *shape: ttype(shape)
    it = lambda *shape: ttype(shape, "i64")
    def fn(p):
        out = []
        for tok in range(T):
            acc = 0
            for j in range(k):
                e = p["input0"][tok, j]
                gu = p["w1"][e] @ p["x"][tok]
                d = p["w2"][e] @ (F.silu(gu[:I]) * gu[I:])
                acc = acc + d * p["rw"][tok, j]
            out.append(acc)
        return torch.stack(out)
    return Case(
        "grouped_mm-experts", "nn.moe_dispatch, nn.embedding gathers, two "
        "nn.grouped_mm (a mixture-of-experts block's experts)",
        {"x": randn(T, H), "rw": positive(T, k), "w1": randn(E, 2 * I, H),
         "w2": randn(E, H, I)},
        ["%%sorted, %%perm, %%token, %%histogram, %%counts, %%offsets, "
         "%%inverse = nn.moe_dispatch %%input0 {num_experts = %d : i64} : %s -> "
         "(%s, %s, %s, %s, %s, %s, %s)"
         % (E, it(T, k), it(S), it(S), it(S), ttype((S,), "i32"),
            ttype((E,), "i32"), ttype((E,), "i32"), it(S)),
         "%%rows = nn.embedding %%x, %%token : (%s, %s) -> %s"
         % (t(T, H), it(S), t(S, H)),
         "%%rw2 = nn.reshape %%rw : %s -> %s" % (t(T, k), t(S, 1)),
         "%%pw = nn.embedding %%rw2, %%perm : (%s, %s) -> %s"
         % (t(S, 1), it(S), t(S, 1)),
         "%%gu = nn.grouped_mm %%rows, %%w1, %%offsets : (%s, %s, %s) -> %s"
         % (t(S, H), t(E, 2 * I, H), ttype((E,), "i32"), t(S, 2 * I)),
         "%%gate = nn.slice %%gu {dim = 1 : i64, start = 0 : i64, end = %d : "
         "i64} : (%s) -> %s" % (I, t(S, 2 * I), t(S, I)),
         "%%up = nn.slice %%gu {dim = 1 : i64, start = %d : i64, end = %d : "
         "i64} : (%s) -> %s" % (I, 2 * I, t(S, 2 * I), t(S, I)),
         "%%a = nn.silu %%gate : %s" % t(S, I),
         "%%m = nn.mul %%a, %%up : (%s, %s) -> %s" % (t(S, I), t(S, I),
                                                     t(S, I)),
         "%%d = nn.grouped_mm %%m, %%w2, %%offsets : (%s, %s, %s) -> %s"
         % (t(S, I), t(E, H, I), ttype((E,), "i32"), t(S, H)),
         "%%wd = nn.mul %%d, %%pw : (%s, %s) -> %s" % (t(S, H), t(S, 1),
                                                      t(S, H)),
         "%%back = nn.embedding %%wd, %%inverse : (%s, %s) -> %s"
         % (t(S, H), it(S), t(S, H)),
         "%%y3 = nn.reshape %%back : %s -> %s" % (t(S, H), t(T, k, H)),
         "%%y = nn.sum %%y3 {dims = array<i64: 1>} : (%s) -> %s"
         % (t(T, k, H), t(T, H))],
        fn, (T, H), inputs={"input0": idx})


def make_cases_9():
    """The mixture-of-experts ops (own seed, as above)."""
    return [topk_router_case(), experts_case()]


def save(directory, name, array):
    os.makedirs(directory, exist_ok=True)
    np.save(os.path.join(directory, name + ".npy"), array)


def write_case(case, write=True):
    """Runs the case and, with `write`, writes its files (without, it only
    draws what it draws from the generator, for the cases after it)."""
    params = {n: v.clone().requires_grad_(True) for n, v in case.params.items()}
    y = case.torch_fn(dict(params, **case.inputs))
    assert tuple(y.shape) == tuple(case.out), (case.name, y.shape)
    if case.loss == "mse":
        target = torch.randn(*case.out)
        loss = F.mse_loss(y, target)
        labels = target.numpy()
    else:
        target = torch.arange(case.out[0]) * 3 % case.out[1]
        loss = F.cross_entropy(y, target)
        labels = target.numpy().astype(np.int64)
    if not write:
        return
    loss.backward()
    inputs = os.path.join(HERE, case.name)
    expected = os.path.join(HERE, case.name + "-sgd")
    save(inputs, "labels", labels)
    for n, v in list(case.params.items()) + list(case.inputs.items()):
        save(inputs, n, v.numpy())
    save(expected, "loss", loss.detach().numpy())
    with torch.no_grad():
        for n, p in params.items():
            save(expected, n + ".grad", p.grad.numpy())
            save(expected, n, (p - 0.1 * p.grad).numpy())

    data = ",".join(["labels=%%S/Inputs/%s/labels.npy" % case.name] +
                    ["%s=%%S/Inputs/%s/%s.npy" % (n, case.name, n)
                     for n in list(case.inputs) + list(case.params)])
    lines = [
        "// REQUIRES: execution",
        "// Generated by Inputs/generate_ops.py (do not edit): %s." % case.doc,
        "// One SGD step (lr 0.1) on %s against PyTorch %s (CPU): the"
        % (case.loss, TORCH),
        "// measured allocation equals the prediction, and the loss, every",
        "// gradient and every updated parameter are within 1e-4; on the CPU's",
        "// loops, then on the GPU lowering's kernels run on the host.",
        "// RUN: rm -rf %t && mkdir -p %t",
    ]
    for target in ("cpu", "gpu-emulated"):
        lines += [
            "// RUN: vram-opt %%s --mode=train --loss=%s --optimizer=sgd "
            "--lr=0.1 --validate=%s \\" % (case.loss, target),
            "// RUN:   --input-data=%s --dump=%%t/%s | FileCheck %%s"
            % (data, target),
            "// RUN: %%compare-npy %%S/Inputs/%s-sgd %%t/%s"
            " | FileCheck %%s --check-prefix=CMP" % (case.name, target),
        ]
    lines += [
        "// CHECK: peak bytes {{ *}}[[PEAK:[0-9,]+]] {{ *}}[[PEAK]] {{ *}}0",
    ]
    files = sorted([n + ".grad.npy" for n in case.params] +
                   [n + ".npy" for n in case.params] + ["loss.npy"])
    lines.append("// CMP: ok " + files[0])
    lines += ["// CMP-NEXT: ok " + f for f in files[1:]]
    lines.append("")
    inputs_sig = ", ".join(
        "%%%s: %s" % (n, ttype(v.shape, "i64" if v.dtype == torch.int64
                                     else "f32"))
        for n, v in case.inputs.items())
    lines.append("func.func @forward(%s) -> %s {" % (inputs_sig,
                                                   ttype(case.out)))
    for n, v in case.params.items():
        lines.append("  %%%s = nn.param \"%s\" : %s" % (n, n, ttype(v.shape)))
    lines += ["  " + l for l in case.body]
    lines.append("  return %%%s : %s" % (case.result, ttype(case.out)))
    lines.append("}")
    with open(os.path.join(TESTS, case.name + ".mlir"), "w") as f:
        f.write("\n".join(lines) + "\n")


def prelu_case(name, shape, channels):
    """F.prelu with `channels` slopes (1, or one per channel of dimension
    1); the input and the slopes from randn: both branches in every
    channel, slopes of either sign."""
    return Case(
        name, "nn.prelu of a %s input with %d slope%s" % (
            list(shape), channels, "s" if channels > 1 else ""),
        {"x": randn(*shape), "w": randn(channels, scale=0.5)},
        ["%%y = nn.prelu %%x, %%w : (%s, %s) -> %s"
         % (ttype(shape), ttype((channels,)), ttype(shape))],
        lambda p: F.prelu(p["x"], p["w"]), shape)


def make_cases_10():
    """PReLU (own seed, as above)."""
    return [
        prelu_case("prelu", (2, 3, 4, 4), 3),
        prelu_case("prelu-single", (2, 3, 4, 4), 1),
        prelu_case("prelu-vector", (5,), 1),
        # F.prelu takes a 0-d weight too; the front ends view it as [1].
        Case("prelu-0d-weight", "nn.prelu of a [2, 3, 4] input with a 0-d "
             "weight viewed as [1] (nn.reshape)",
             {"x": randn(2, 3, 4), "w": torch.randn(()) * 0.5},
             ["%%v = nn.reshape %%w : %s -> %s" % (ttype(()), ttype((1,))),
              "%%y = nn.prelu %%x, %%v : (%s, %s) -> %s"
              % (ttype((2, 3, 4)), ttype((1,)), ttype((2, 3, 4)))],
             lambda p: F.prelu(p["x"], p["w"]), (2, 3, 4)),
    ]


def make_cases_11():
    """InstanceNorm as nn.group_norm {instance} against F.instance_norm
    (own seed, as above): the saved repeated weight is lowered too."""
    shape = (2, 3, 4, 4)
    t, c = ttype(shape), ttype((3,))
    return [
        Case("instance_norm", "nn.group_norm {instance} with weight and bias "
             "on %s against F.instance_norm" % list(shape),
             {"x": randn(*shape, scale=2), "w": randn(3), "b": randn(3)},
             ["%%y = nn.group_norm %%x weight %%w bias %%b {eps = "
              "1.000000e-05 : f64, instance, num_groups = 3 : i64} : "
              "(%s, %s, %s) -> %s" % (t, c, c, t)],
             lambda p: F.instance_norm(p["x"], weight=p["w"], bias=p["b"]),
             shape),
    ]


def bilinear_case(name, x_shape, size=None, scale=None, align_corners=False):
    """F.interpolate(mode='bilinear') as nn.upsample_bilinear2d: the scale
    factor, when given, is passed on as the op's `scales` (PyTorch's source
    positions use 1 / scale factor, not in / out)."""
    x = randn(*x_shape)
    fn = lambda t: F.interpolate(t, size=size, scale_factor=scale,
                                 mode="bilinear", align_corners=align_corners)
    out = tuple(fn(x).shape)
    how = "scale_factor=%s" % scale if scale else "size=%s" % (size,)
    attrs = []
    if align_corners:
        attrs.append("align_corners")
    if scale:
        attrs.append("scales = array<f64: %s, %s>" % (float(scale), float(scale)))
    attr = " {%s}" % ", ".join(attrs) if attrs else ""
    return Case(name, "nn.upsample_bilinear2d (F.interpolate %s, "
                "align_corners=%s)" % (how, align_corners),
                {"x": x},
                ["%%y = nn.upsample_bilinear2d %%x%s : (%s) -> %s"
                 % (attr, ttype(x_shape), ttype(out))],
                lambda p: fn(p["x"]), out)


def make_cases_12():
    """Bilinear resizing (own seed, as above)."""
    return [
        bilinear_case("upsample_bilinear2d", (2, 3, 4, 5), scale=2.0),
        bilinear_case("upsample_bilinear2d-align", (2, 3, 4, 5), scale=2.0,
                      align_corners=True),
        bilinear_case("upsample_bilinear2d-size", (1, 2, 3, 4), size=(7, 6)),
        bilinear_case("upsample_bilinear2d-down", (1, 2, 6, 6), size=(4, 3)),
        # A scale factor whose 1 / factor is not in / out (5 * 1.5 -> 7).
        bilinear_case("upsample_bilinear2d-fraction", (1, 2, 5, 5), scale=1.5),
        bilinear_case("upsample_bilinear2d-align-down", (1, 2, 6, 7),
                      size=(3, 1), align_corners=True),
    ]


def topk_smallest_case():
    """torch.topk(largest=False): the 2 smallest of 6 per row (softmax
    first), then their sum per row."""
    x, s = ttype((4, 6)), ttype((4, 2))
    def fn(p):
        v, _ = torch.topk(F.softmax(p["x"], -1), 2, largest=False)
        return v.sum(-1, keepdim=True)
    return Case(
        "topk-smallest", "softmax, nn.topk {smallest} k=2 (torch.topk "
        "largest=False) and nn.sum", {"x": randn(4, 6, scale=2)},
        ["%%p = nn.softmax %%x {dim = -1 : i64} : %s" % x,
         "%%v, %%i = nn.topk %%p {k = 2 : i64, smallest} : (%s) -> (%s, %s)"
         % (x, s, ttype((4, 2), "i64")),
         "%%y = nn.sum %%v {dims = array<i64: -1>, keepdim} : (%s) -> %s"
         % (s, ttype((4, 1)))],
        fn, (4, 1))


def make_cases_13():
    """The k smallest (own seed, as above)."""
    return [topk_smallest_case()]


def amax_case():
    """torch.amax over the rows (keepdim) plus x.min() over every element,
    of a tensor of whole numbers: ties, whose gradient each equal element
    shares."""
    x, a = ttype((4, 6)), ttype((4, 1))
    def fn(p):
        return torch.amax(p["x"], 1, keepdim=True) + p["x"].min()
    return Case(
        "amax", "nn.amax over dim 1 (torch.amax, keepdim) and nn.amin "
        "{evenly} (x.min()), ties included", {"x": torch.round(randn(4, 6, scale=1.5))},
        ["%%a = nn.amax %%x {dims = array<i64: 1>, keepdim} : (%s) -> %s" % (x, a),
         "%%m = nn.amin %%x {dims = array<i64: 0, 1>, evenly} : (%s) -> %s"
         % (x, ttype(())),
         "%%y = nn.add %%a, %%m : (%s, %s) -> %s" % (a, ttype(()), a)],
        fn, (4, 1))


def amin_case():
    """torch.amin over the columns (keepdim) of whole numbers (ties)."""
    x = ttype((4, 6))
    def fn(p):
        return torch.amin(p["x"], 0, keepdim=True)
    return Case(
        "amin", "nn.amin over dim 0 (torch.amin, keepdim) of whole numbers",
        {"x": torch.round(randn(4, 6, scale=1.5))},
        ["%%y = nn.amin %%x {dims = array<i64: 0>, keepdim} : (%s) -> %s"
         % (x, ttype((1, 6)))],
        fn, (1, 6))


def make_cases_14():
    """amax and amin (own seed, as above)."""
    return [amax_case(), amin_case()]


# The row sets, each drawn from its own seed (its index).
CASE_SETS = [make_cases, make_cases_2, make_cases_3, make_cases_4,
             make_cases_5, make_cases_6, make_cases_7, make_cases_8,
             make_cases_9, make_cases_10, make_cases_11, make_cases_12,
             make_cases_13, make_cases_14]


def main(names):
    written = set()
    for seed, make in enumerate(CASE_SETS):
        torch.manual_seed(seed)
        cases = make()
        if names and not names & {c.name for c in cases}:
            continue
        for case in cases:
            write = not names or case.name in names
            write_case(case, write)
            if write:
                written.add(case.name)
    unknown = names - written
    if unknown:
        sys.exit("no such case: " + ", ".join(sorted(unknown)))


if __name__ == "__main__":
    main(set(sys.argv[1:]))
