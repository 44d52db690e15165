#!/usr/bin/python3
"""Isolated facts: what autograd keeps for single ops in Debian's torch 1.13 on the CPU.

For each case the op under study runs inside torch.autograd.graph.saved_tensors_hooks; its
inputs are produced outside the hooks (non-leaf tensors that require grad, as inside a
network). Every packed tensor is recorded; tensors are grouped by storage (data_ptr) and
each unique storage is classified as
  input      - the storage of the op's (first) input
  output     - the storage of the op's output
  input=output (mutated) - in-place op: the storage is both
  param / buffer         - a module parameter / buffer (persistent, no new memory)
  new        - a storage that did not exist before the op (a new tensor kept for backward);
               for these we also say whether its values equal the pre-op input, the output,
               or neither.
Run: /usr/bin/python3 facts.py [-o results/facts-torch-1.13-cpu.json]
"""
import argparse, json, math, subprocess, sys
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(1)
MEASURED_WITH = ("torch 1.13.0a0 cpu, Debian 12" if torch.__version__.startswith("1.13")
                 else "torch %s cpu (PyPI wheel), Debian 12" % torch.__version__)


def sptr(t):
    s = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
    return s.data_ptr(), s.nbytes()


def same_values(a, b):
    try:
        return a.shape == b.shape and a.dtype == b.dtype and torch.equal(a.detach(), b.detach())
    except Exception:
        return False


def run_case(name, make, op, module=None, note=""):
    """make() -> tuple of inputs (created outside the hooks); op(*inputs) -> output."""
    torch.manual_seed(0)
    inputs = make()
    first = inputs[0]
    pre_input = first.detach().clone()
    in_ptrs = {sptr(t)[0] for t in inputs if torch.is_tensor(t)}
    par = {sptr(p)[0]: n for n, p in (module.named_parameters() if module else [])}
    buf = {sptr(b)[0]: n for n, b in (module.named_buffers() if module else [])}
    packed = []

    def pack(t):
        packed.append(t)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = op(*inputs)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    outs = [o for o in outs if torch.is_tensor(o)]
    # which autograd node keeps which storage: walk the graph, read node._saved_* fields
    saved_by = {}
    seen_nodes, keep_alive, stack = set(), [], [o.grad_fn for o in outs if o.grad_fn is not None]
    while stack:
        nd = stack.pop()
        if nd is None or id(nd) in seen_nodes:
            continue
        seen_nodes.add(id(nd))
        keep_alive.append(nd)          # python node wrappers are transient: keep them so ids stay unique
        if type(nd).__name__ == "AccumulateGrad":
            continue
        for attr in dir(nd):
            if attr.startswith("_saved_") and not attr.endswith("_raw"):
                try:
                    v = getattr(nd, attr)
                except Exception:
                    continue
                for t in (v if isinstance(v, (tuple, list)) else [v]):
                    if torch.is_tensor(t):
                        saved_by.setdefault(sptr(t)[0], []).append(type(nd).__name__ + "." + attr[7:])
        stack.extend(f for f, _ in nd.next_functions if f is not None)
    out_ptrs = {sptr(o)[0] for o in outs}
    storages = {}
    for t in packed:
        ptr, nb = sptr(t)
        e = storages.setdefault(ptr, {"storage_bytes": nb, "views_packed": []})
        e["views_packed"].append({"dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape)})
    rows = []
    total_new = 0
    for ptr, e in storages.items():
        t0 = [t for t in packed if sptr(t)[0] == ptr][0]
        if ptr in par:
            kind = "param:" + par[ptr]
        elif ptr in buf:
            kind = "buffer:" + buf[ptr]
        elif ptr in in_ptrs and ptr in out_ptrs:
            kind = "input=output (mutated in place)"
        elif ptr in in_ptrs:
            kind = "input" if ptr == sptr(first)[0] else "input (other operand)"
        elif ptr in out_ptrs:
            kind = "output"
        else:
            kind = "new"
            if same_values(t0, pre_input):
                kind += " (a copy of the pre-op input values)"
            elif any(same_values(t0, o) for o in outs):
                kind += " (a copy of the output values)"
        if kind.startswith("new") or kind in ("output",):
            total_new += e["storage_bytes"]
        t = t0
        rows.append({"what": kind, "saved_by": sorted(set(saved_by.get(ptr, []))), "dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape),
                     "storage_bytes": e["storage_bytes"],
                     "bytes_per_element": t.element_size(),
                     "times_packed": len(e["views_packed"]),
                     "views_packed": e["views_packed"] if len(e["views_packed"]) > 1 else None})
    for r in rows:
        if r["views_packed"] is None:
            del r["views_packed"]
    res = {"case": name, "input_shape": list(first.shape),
           "output_shapes": [list(o.shape) for o in outs],
           "output_grad_fn": type(outs[0].grad_fn).__name__ if outs and outs[0].grad_fn else None,
           "tensors_packed": len(packed), "unique_storages": len(rows), "saved": rows,
           "saved_bytes_excluding_params_buffers_input": sum(
               r["storage_bytes"] for r in rows if not r["what"].startswith(("param", "buffer", "input"))),
           "saved_bytes_input_storage": sum(r["storage_bytes"] for r in rows if r["what"].startswith("input"))}
    if note:
        res["note"] = note
    return res


def nonleaf(*shape):
    return (torch.randn(*shape, requires_grad=True) * 1.0,)


def cases():
    out = []
    # ---- activations after a conv (input = the conv output, a non-leaf) -----------------
    conv = nn.Conv2d(3, 8, 3, padding=1)
    xin = torch.randn(2, 3, 16, 16, requires_grad=True)
    def after_conv():
        return (conv(xin),)
    for nm, mod in [("nn.ReLU6(inplace=True) after conv [hardtanh_]", nn.ReLU6(inplace=True)),
                    ("nn.ReLU6() out of place after conv [hardtanh]", nn.ReLU6()),
                    ("nn.ReLU(inplace=True) after conv [relu_]", nn.ReLU(inplace=True)),
                    ("nn.ReLU() out of place after conv [relu]", nn.ReLU()),
                    ("nn.Hardswish(inplace=True) after conv [hardswish_]", nn.Hardswish(inplace=True)),
                    ("nn.LeakyReLU(inplace=True) after conv [leaky_relu_]", nn.LeakyReLU(inplace=True)),
                    ("nn.GELU() after conv", nn.GELU())]:
        out.append(run_case(nm, after_conv, mod))
    # whole conv -> ReLU6(inplace): everything kept by the pair
    out.append(run_case("conv -> nn.ReLU6(inplace=True), both ops under the hooks",
                        lambda: (xin,), lambda x: F.relu6(conv(x), inplace=True), module=conv))
    # mobilenet_v2 pattern: BN -> ReLU6(inplace)
    bn = nn.BatchNorm2d(8).train()
    out.append(run_case("conv -> BatchNorm2d -> ReLU6(inplace=True) (mobilenet_v2 pattern), BN+ReLU6 under the hooks",
                        after_conv, lambda c: F.relu6(bn(c), inplace=True), module=bn))
    # ---- reductions / pooling ------------------------------------------------------------
    out.append(run_case("x.mean(dim=-1, keepdim=True), x [2,16,64]", lambda: nonleaf(2, 16, 64),
                        lambda x: x.mean(dim=-1, keepdim=True)))
    out.append(run_case("x.mean((2,3)), x [2,8,7,7]", lambda: nonleaf(2, 8, 7, 7), lambda x: x.mean((2, 3))))
    out.append(run_case("x.mean() (all dims), x [2,8,7,7]", lambda: nonleaf(2, 8, 7, 7), lambda x: x.mean()))
    out.append(run_case("nn.AdaptiveAvgPool2d(1), x [2,8,7,7]", lambda: nonleaf(2, 8, 7, 7), nn.AdaptiveAvgPool2d(1)))
    out.append(run_case("nn.AdaptiveAvgPool2d(2), x [2,8,7,7]", lambda: nonleaf(2, 8, 7, 7), nn.AdaptiveAvgPool2d(2)))
    out.append(run_case("nn.MaxPool2d(3, 2, 1), x [2,8,16,16]", lambda: nonleaf(2, 8, 16, 16), nn.MaxPool2d(3, 2, 1)))
    # ---- dropout --------------------------------------------------------------------------
    out.append(run_case("F.dropout(p=0.1, training=True), x [4,256] fp32", lambda: nonleaf(4, 256),
                        lambda x: F.dropout(x, p=0.1, training=True)))
    out.append(run_case("F.dropout(p=0.0, training=True), x [4,256]", lambda: nonleaf(4, 256),
                        lambda x: F.dropout(x, p=0.0, training=True)))
    out.append(run_case("nn.Dropout(0.1) in eval(), x [4,256]", lambda: nonleaf(4, 256),
                        nn.Dropout(0.1).eval()))
    # ---- attention -------------------------------------------------------------------------
    for nw in (False, True):
        mha = nn.MultiheadAttention(embed_dim=64, num_heads=4, batch_first=True).train()
        out.append(run_case(f"nn.MultiheadAttention(64, 4, batch_first=True), self-attention, N=2, L=16, need_weights={nw}",
                            lambda: nonleaf(2, 16, 64),
                            (lambda m, w: (lambda x: m(x, x, x, need_weights=w)[0]))(mha, nw), module=mha,
                            note="L x L matrices have shape [..,16,16]; N*heads*L*L*4 = 2*4*16*16*4 = 8192 bytes"))
    for nw in (False, True):
        mha = nn.MultiheadAttention(embed_dim=64, num_heads=4, batch_first=True).train()
        out.append(run_case(f"nn.MultiheadAttention(64, 4, batch_first=True), self-attention, N=2, L=24, need_weights={nw} (L != head_dim, to tell L x L from q/k/v)",
                            lambda: nonleaf(2, 24, 64),
                            (lambda m, w: (lambda x: m(x, x, x, need_weights=w)[0]))(mha, nw), module=mha,
                            note="head_dim 16; L x L = [8,24,24] fp32 = 18432 bytes; q/k/v per head [8,24,16] = 12288 bytes"))
    mha = nn.MultiheadAttention(embed_dim=64, num_heads=4, batch_first=True, dropout=0.1).train()
    out.append(run_case("nn.MultiheadAttention(64, 4, dropout=0.1, batch_first=True), need_weights=False",
                        lambda: nonleaf(2, 16, 64), lambda x: mha(x, x, x, need_weights=False)[0], module=mha))
    # ---- losses ----------------------------------------------------------------------------
    tgt = torch.randint(0, 100, (8,))
    out.append(run_case("F.cross_entropy(logits [8,100], target int64 [8])", lambda: nonleaf(8, 100),
                        lambda z: F.cross_entropy(z, tgt)))
    out.append(run_case("F.log_softmax(logits [8,100], -1) + F.nll_loss", lambda: nonleaf(8, 100),
                        lambda z: F.nll_loss(F.log_softmax(z, -1), tgt)))
    out.append(run_case("F.log_softmax(logits [8,100], -1) alone", lambda: nonleaf(8, 100),
                        lambda z: F.log_softmax(z, -1)))
    out.append(run_case("F.softmax(x [2,4,16,16], -1)", lambda: nonleaf(2, 4, 16, 16), lambda z: F.softmax(z, -1)))
    # ---- norms -----------------------------------------------------------------------------
    ln = nn.LayerNorm(64)
    out.append(run_case("nn.LayerNorm(64), x [2,16,64]", lambda: nonleaf(2, 16, 64), ln, module=ln))
    bn2 = nn.BatchNorm2d(8).train()
    out.append(run_case("nn.BatchNorm2d(8) train, x [2,8,16,16]", lambda: nonleaf(2, 8, 16, 16), bn2, module=bn2))
    out.append(run_case("nn.GELU(), x [2,16,64]", lambda: nonleaf(2, 16, 64), nn.GELU()))
    # ---- matmul ----------------------------------------------------------------------------
    out.append(run_case("torch.matmul(a [2,4,16,8], b.transpose(-2,-1)) with b [2,4,16,8] (both need grad)",
                        lambda: (torch.randn(2, 4, 16, 8, requires_grad=True) * 1.0,
                                 torch.randn(2, 4, 16, 8, requires_grad=True) * 1.0),
                        lambda a, b: torch.matmul(a, b.transpose(-2, -1)),
                        note="each operand is [2,4,16,8] fp32 = 4096 bytes"))
    out.append(run_case("torch.matmul(a [2,4,16,16] contiguous, v.transpose(1,2)) with v [2,16,4,8] (att @ v, v a transposed view)",
                        lambda: (torch.randn(2, 4, 16, 16, requires_grad=True) * 1.0,
                                 torch.randn(2, 16, 4, 8, requires_grad=True) * 1.0),
                        lambda a, v: torch.matmul(a, v.transpose(1, 2))))
    out.append(run_case("torch.matmul(q, k.transpose(-2,-1)) with q,k = x.view(2,16,4,16).transpose(1,2) views of a [2,16,64] tensor",
                        lambda: (torch.randn(2, 16, 64, requires_grad=True) * 1.0,
                                 torch.randn(2, 16, 64, requires_grad=True) * 1.0),
                        lambda a, b: torch.matmul(a.view(2, 16, 4, 16).transpose(1, 2),
                                                  b.view(2, 16, 4, 16).transpose(1, 2).transpose(-2, -1))))
    lin = nn.Linear(64, 32)
    out.append(run_case("nn.Linear(64, 32), x [2,16,64] (3-D input)", lambda: nonleaf(2, 16, 64), lin, module=lin))
    lin2 = nn.Linear(64, 32)
    out.append(run_case("nn.Linear(64, 32) applied to x[:, 0] (a view), x [2,16,64]", lambda: nonleaf(2, 16, 64),
                        lambda x: lin2(x[:, 0]), module=lin2))
    out.append(run_case("x * (1/sqrt(8)) (Python float scalar), x [2,4,16,16]", lambda: nonleaf(2, 4, 16, 16),
                        lambda x: x * (1.0 / math.sqrt(8))))
    m = torch.tril(torch.ones(16, 16, dtype=torch.bool))
    out.append(run_case("x.masked_fill(~mask, -inf), mask [16,16] bool made inside", lambda: nonleaf(2, 4, 16, 16),
                        lambda x: x.masked_fill(~m, float("-inf"))))
    emb = nn.Embedding(100, 16)
    idx = torch.randint(0, 100, (2, 8))
    out.append(run_case("nn.Embedding(100,16)(idx [2,8] int64) (input = the indices)", lambda: (idx,), emb, module=emb))
    return out


def allocations(event, acc=None):
    """The allocation sizes (negative: frees) under a profiler event, in order."""
    acc = [] if acc is None else acc
    if str(event.tag).endswith("Allocation"):
        acc.append(event.extra_fields.alloc_size)
    for child in event.children:
        allocations(child, acc)
    return acc


def conv_backward_probe():
    """Which CPU convolution kernel runs, and the allocation sequence inside one
    ConvolutionBackward0, for a few shapes. Sizes are labelled I (input bytes), gO (output /
    grad_output bytes), W (weight bytes) where they match; other numbers are raw bytes.
    One profiling session per process matters (see measure.py), so run this in its own
    process: facts.py --conv-probe."""
    from torch.profiler import profile, ProfilerActivity
    shapes = [  # (N, C_in, H, C_out, k, stride)
        (2, 256, 14, 256, 3, 1), (2, 128, 28, 256, 3, 2), (2, 128, 28, 256, 1, 2),
        (1, 256, 4, 256, 3, 1), (1, 64, 16, 64, 3, 1), (1, 64, 56, 64, 3, 1), (1, 8, 16, 8, 3, 1),
        (1, 3, 64, 64, 7, 2), (4, 64, 16, 64, 3, 1), (2, 32, 56, 32, 3, 1),
    ]
    convs, xs = [], []
    for (n, c, h, co, k, st) in shapes:
        convs.append(nn.Conv2d(c, co, k, st, k // 2, bias=False))
        xs.append(torch.randn(n, c, h, h, requires_grad=True) * 1.0)
    res = []
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        for cv, x in zip(convs, xs):
            y = cv(x)
            y.backward(torch.ones_like(y))
    tree = prof.profiler.kineto_results.experimental_event_tree()
    tops = [e for e in tree if e.name in ("aten::conv2d",) or e.name.startswith("autograd::engine::evaluate_function: ConvolutionBackward0")]
    fw = [e for e in tree if e.name == "aten::conv2d"]
    bw = [e for e in tree if e.name.startswith("autograd::engine::evaluate_function: ConvolutionBackward0")]
    def names(e, acc):
        acc.add(e.name)
        for c in e.children:
            names(c, acc)
        return acc
    for (shape, cv, x, f, b) in zip(shapes, convs, xs, fw, bw):
        n, c, h, co, k, st = shape
        I = x.numel() * 4
        ho = (h + 2 * (k // 2) - k) // st + 1
        O = n * co * ho * ho * 4
        W = cv.weight.numel() * 4
        def lab(v):
            a = abs(v); L = [nm for nm, val in (("W", W), ("gO", O), ("I", I)) if a == val]
            return ("+" if v > 0 else "-") + ("/".join(L) if L else str(a))
        kern = sorted(nm for nm in names(f, set()) if nm in ("aten::mkldnn_convolution", "aten::thnn_conv2d", "aten::_slow_conv2d_forward"))
        seq = allocations(b)
        live = peak = 0
        for v in seq:
            live += v; peak = max(peak, live)
        res.append({"input": [n, c, h, h], "weight": list(cv.weight.shape), "stride": st,
                    "I_bytes": I, "gO_bytes": O, "W_bytes": W, "forward_kernel": kern,
                    "backward_alloc_sequence": " ".join(lab(v) for v in seq),
                    "backward_peak_above_node_start_bytes": peak,
                    "note": "node start = incoming grad_output live; the -gO at the end is its release"})
    return res


def pow_backward_probe():
    """The allocations inside one PowBackward0 (x.pow(e) for a float exponent e), labelled
    I for an input-sized block; the peak above the node's start is what the node holds
    beyond the gradient it returns. Its own process, like the conv probe: facts.py
    --pow-probe."""
    from torch.profiler import profile, ProfilerActivity
    exponents = [2.0, 3.0, 0.5, 1.0, 0.0]
    xs = [torch.rand(2, 8, 64, requires_grad=True) + 0.5 for _ in exponents]
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        for e, x in zip(exponents, xs):
            y = x.pow(e)
            y.backward(torch.ones_like(y))
    tree = prof.profiler.kineto_results.experimental_event_tree()
    bw = [e for e in tree if e.name.startswith("autograd::engine::evaluate_function: PowBackward0")]
    res = []
    for e, x, b in zip(exponents, xs, bw):
        I = x.numel() * 4
        seq = allocations(b)
        live = peak = 0
        for v in seq:
            live += v; peak = max(peak, live)
        res.append({"exponent": e, "input": list(x.shape), "I_bytes": I,
                    "backward_alloc_sequence": " ".join(("+" if v > 0 else "-") + ("I" if abs(v) == I else str(abs(v)))
                                                        for v in seq),
                    "backward_peak_above_node_start_bytes": peak,
                    "note": "node start = incoming grad live; the peak includes the returned gradient (I)"})
    return res


if __name__ == "__main__":
    if "--conv-probe" in sys.argv:
        print(json.dumps(conv_backward_probe()))
        sys.exit(0)
    if "--pow-probe" in sys.argv:
        print(json.dumps(pow_backward_probe()))
        sys.exit(0)
    ap = argparse.ArgumentParser()
    ap.add_argument("-o", "--output", default=None)
    ap.add_argument("--conv-probe", action="store_true")
    ap.add_argument("--pow-probe", action="store_true")
    a = ap.parse_args()
    res = {"measured_with": MEASURED_WITH, "device": "cpu", "dtype": "float32", "cases": cases()}
    p = subprocess.run([sys.executable, __file__, "--conv-probe"], capture_output=True, text=True)
    res["conv_backward_cpu"] = json.loads([l for l in p.stdout.splitlines() if l.startswith("[")][-1])
    p = subprocess.run([sys.executable, __file__, "--pow-probe"], capture_output=True, text=True)
    res["pow_backward_cpu"] = json.loads([l for l in p.stdout.splitlines() if l.startswith("[")][-1])
    for c in res["pow_backward_cpu"]:
        print("pow", c["exponent"], c["backward_alloc_sequence"], "peak", c["backward_peak_above_node_start_bytes"])
    for c in res["conv_backward_cpu"]:
        print("conv", c["input"], c["weight"], "s", c["stride"], c["forward_kernel"], c["backward_alloc_sequence"],
              "peak", c["backward_peak_above_node_start_bytes"])
    for c in res["cases"]:
        print(f"{c['case']}: packed {c['tensors_packed']}, unique {c['unique_storages']}, "
              f"new/output bytes {c['saved_bytes_excluding_params_buffers_input']}")
        for s in c["saved"]:
            print("    ", s["what"], s["dtype"], s["shape"], s["storage_bytes"], "x%d" % s["times_packed"], s["saved_by"])
    if a.output:
        json.dump(res, open(a.output, "w"), indent=1)
