#!/usr/bin/python3
"""Peak anatomy of one steady-state training step (Debian torch 1.13, CPU, fp32).

Same step as measure.py (zero_grad(set_to_none=True), loss = cross_entropy(model(x), y)
with no Python reference to the logits, backward, SGD), one warm-up step, then one
profiled step. Uses the profiler's event tree (torch 1.13: kineto_results
.experimental_event_tree()), whose [memory] events carry ptr and alloc_size, so each
allocation is paired with its free. Module scopes are marked with record_function via
forward hooks ("mod:<name>"); backward nodes are mapped to the module of the forward op
with the same autograd sequence number.
Run: /usr/bin/python3 anatomy.py gpt_mini_b2_t128 resnet18_c102_b2 [-o results/peak-anatomy-1.13-cpu.json]
"""
import argparse, gc, json, os, sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch
from torch.profiler import profile, ProfilerActivity, record_function
import measure as M

torch.set_num_threads(1)


def add_scopes(model):
    ctx = {}
    for name, mod in model.named_modules():
        if name == "":
            continue
        def pre(m, inp, name=name):
            r = record_function("mod:" + name); r.__enter__(); ctx.setdefault(name, []).append(r)
        def post(m, inp, out, name=name):
            ctx[name].pop().__exit__(None, None, None)
        mod.register_forward_pre_hook(pre)
        mod.register_forward_hook(post)


def instrumented_step(model, opt, x, y):
    with record_function("##zero_grad##"):
        opt.zero_grad(set_to_none=True)
    with record_function("##forward##"):
        out = model(x)
    with record_function("##loss_forward##"):
        loss = M.loss_fn(out, y)
    del out                      # same lifetime as loss_fn(model(x), y) in measure.step
    with record_function("##backward##"):
        loss.backward()
    del loss
    with record_function("##optimizer_step##"):
        opt.step()


def shapes_of(ev):
    try:
        ins = ev.extra_fields.inputs
        return [list(s) for s in ins.shapes]
    except Exception:
        return None


def flatten(tree):
    out = []
    def walk(e, chain):
        if e.tag.name == "Allocation" if hasattr(e.tag, "name") else str(e.tag).endswith("Allocation"):
            out.append(("mem", e, chain))
        else:
            out.append(("op", e, chain))
            for c in e.children:
                walk(c, chain + [e])
    for e in tree:
        walk(e, [])
    return out


def analyse(case):
    cfg = [c for c in M.dedupe(M.ALL) if M.case_id(c) == case][0]
    model, x, y = M.build(cfg)
    add_scopes(model)
    opt = M.make_opt(cfg, [p for p in model.parameters() if p.requires_grad])
    M.step(model, opt, x, y)
    gc.collect()
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True, record_shapes=True) as prof:
        instrumented_step(model, opt, x, y)
    flat = flatten(prof.profiler.kineto_results.experimental_event_tree())
    # forward sequence number -> innermost module scope
    seq2mod = {}
    for kind, e, chain in flat:
        if kind != "op":
            continue
        sn = getattr(e.extra_fields, "sequence_number", -1)
        if sn is not None and sn >= 0 and not e.name.startswith("autograd::engine"):
            mods = [c.name[4:] for c in chain + [e] if c.name.startswith("mod:")]
            if mods and sn not in seq2mod:
                seq2mod[sn] = mods[-1]
    mems = sorted([(e.start_time_ns, i, e, chain) for i, (k, e, chain) in enumerate(flat) if k == "mem"],
                  key=lambda t: (t[0], t[1]))
    def describe(chain):
        phase = next((c.name.strip("#") for c in chain if c.name.startswith("##")), "(between marked phases)")
        mods = [c.name[4:] for c in chain if c.name.startswith("mod:")]
        bw = [c for c in chain if c.name.startswith("autograd::engine::evaluate_function: ")]
        node = None
        if bw:
            node = bw[-1].name.split(": ", 1)[1]
            sn = getattr(bw[-1].extra_fields, "sequence_number", -1)
            mods = [seq2mod.get(sn, "top level: loss / model.forward")]
        ops = [c for c in chain if not c.name.startswith(("##", "mod:", "autograd::engine"))]
        opnames = [c.name for c in ops]
        leaf = ops[-1] if ops else None
        top = ops[0] if ops else None
        return {"phase": phase, "module": mods[-1] if mods else None, "backward_node": node,
                "op_chain": " > ".join(opnames[-4:]),
                "top_op": top.name if top else None, "top_op_shapes": shapes_of(top) if top else None}
    allocs = {}
    events = []
    timeline = []
    live = peak = 0
    peak_idx = -1
    for n, (t, i, e, chain) in enumerate(mems):
        ef = e.extra_fields
        nb = ef.alloc_size
        live += nb
        d = describe(chain)
        timeline.append({"n": n, "bytes": nb, "live": live, "where": d})
        if nb > 0:
            allocs[ef.ptr] = len(events)
            events.append({"n": n, "t_ns": t, "bytes": nb, "alloc": d, "free": None, "free_n": None,
                           "live_after": live})
        else:
            j = allocs.pop(ef.ptr, None)
            if j is not None:
                events[j]["free"] = d; events[j]["free_n"] = n
        if live > peak:
            peak, peak_idx = live, n
    live_at_peak = [a for a in events if a["n"] <= peak_idx and (a["free_n"] is None or a["free_n"] > peak_idx)]
    peak_event = [a for a in events if a["n"] == peak_idx]
    # phase boundaries: live bytes at end of each phase
    return {"case": case, "peak_above_baseline": peak, "net": live, "n_memory_events": len(mems),
            "peak_event_index": peak_idx, "peak_allocation": peak_event[0] if peak_event else None,
            "live_at_peak": live_at_peak, "allocations": events, "timeline": timeline}


def fmt(n):
    return f"{n:,}"


def where(d, full=False):
    if d is None:
        return "never in this step (lives on: a .grad or the loss)"
    s = d["backward_node"] + " (" + str(d["module"]) + ")" if d["backward_node"] else (d["phase"] + (" " + d["module"] if d["module"] else ""))
    if d["op_chain"]:
        s += ": " + d["op_chain"]
    return s


def shp(d):
    return "" if not d or not d["top_op_shapes"] else " ".join(str(x) for x in d["top_op_shapes"] if x)


def to_markdown(r, head_module):
    L = []
    # note: the 288-byte aten::empty allocations at each record_function boundary are the
    # profiler's own handles (from the "mod:" scopes and phase markers of this script); they
    # are freed at once and do not exist in measure.py's un-instrumented step.
    ev = r["allocations"]
    pk = r["peak_allocation"]
    L.append(f"## {r['case']}\n")
    L.append(f"Peak above baseline: **{fmt(r['peak_above_baseline'])} bytes**, reached at memory event "
             f"#{r['peak_event_index']} of {r['n_memory_events']}: an allocation of {fmt(pk['bytes'])} B in "
             f"{where(pk['alloc'])} (input shapes {shp(pk['alloc'])}). Net at the end of the step: "
             f"{fmt(r['net'])} B (the new .grad tensors).\n")
    # phases
    tl = r["timeline"]
    L.append("Live bytes by phase (running sum of the profiler's allocation events, 0 = state before the step; "
             "the previous step's .grad frees at zero_grad are invisible to the profiler, see README):\n")
    L.append("| phase | live at end | max inside |\n|---|---:|---:|")
    phases = []
    for e in tl:
        ph = e["where"]["phase"]
        if not phases or phases[-1][0] != ph:
            phases.append([ph, e["live"], e["live"]])
        phases[-1][1] = e["live"]; phases[-1][2] = max(phases[-1][2], e["live"])
    for ph, end, mx in phases:
        L.append(f"| {ph} | {fmt(end)} | {fmt(mx)} |")
    L.append("")
    # decomposition of the live set
    lp = r["live_at_peak"]
    cats = defaultdict(lambda: [0, 0])
    for a in lp:
        al = a["alloc"]
        if al["phase"] == "forward":
            c = "forward: activations saved for backward (still live)"
        elif al["phase"] == "loss_forward":
            c = "loss forward: " + al["op_chain"].split(" > ")[-1]
        elif a["free_n"] is None:
            c = "backward: parameter .grad tensors already produced (live to the end)"
        else:
            c = "backward: gradient buffers / temporaries still live"
        cats[c][0] += 1; cats[c][1] += a["bytes"]
    L.append("Live set at the peak, by category:\n")
    L.append("| category | tensors | bytes |\n|---|---:|---:|")
    for c, (n, b) in cats.items():
        L.append(f"| {c} | {n} | {fmt(b)} |")
    L.append(f"| **total** | {len(lp)} | **{fmt(sum(a['bytes'] for a in lp))}** |\n")
    # forward activations by kind
    kinds = defaultdict(lambda: [0, 0])
    for a in lp:
        if a["alloc"]["phase"] == "forward":
            k = (a["alloc"]["op_chain"].split(" > ")[0] or "(scalar wrap)") + f" {fmt(a['bytes'])} B"
            kinds[k][0] += 1; kinds[k][1] += a["bytes"]
    L.append("Forward allocations still live at the peak, by allocating op and size:\n")
    L.append("| op, size | count | bytes |\n|---|---:|---:|")
    for k, (n, b) in sorted(kinds.items(), key=lambda kv: -kv[1][1]):
        L.append(f"| {k} | {n} | {fmt(b)} |")
    L.append("")
    L.append("<details><summary>Every live allocation at the peak</summary>\n")
    L.append("| # | bytes | allocated in | input shapes of the allocating op | freed in (event #) |\n|---:|---:|---|---|---|")
    for a in lp:
        L.append(f"| {a['n']} | {fmt(a['bytes'])} | {where(a['alloc'])} | {shp(a['alloc'])} | "
                 f"{where(a['free'])} ({a['free_n']}) |")
    L.append("\n</details>\n")
    # events around the peak
    L.append("Memory events around the peak (bytes > 0 allocation, < 0 free):\n")
    L.append("| # | bytes | live after | where |\n|---:|---:|---:|---|")
    for e in tl[max(0, r["peak_event_index"] - 12): r["peak_event_index"] + 8]:
        L.append(f"| {e['n']} | {fmt(e['bytes'])} | {fmt(e['live'])} | {where(e['where'])} |")
    L.append("")
    # loss and head
    def is_loss(d):
        return d["phase"] == "loss_forward" or d["backward_node"] in ("NllLossBackward0", "LogSoftmaxBackward0")
    def is_head(d):
        return d["module"] == head_module
    for title, pred in (("loss forward (log_softmax / nll_loss) and loss backward (NllLossBackward0, LogSoftmaxBackward0)", is_loss),
                        (f"the LM head / classifier `{head_module}` (forward and backward nodes)", is_head)):
        L.append(f"Every allocation made inside {title}:\n")
        L.append("| # | bytes | allocated in | input shapes | freed in (event #) | live at peak |\n|---:|---:|---|---|---|---|")
        for a in ev:
            if pred(a["alloc"]):
                lap = a["n"] <= r["peak_event_index"] and (a["free_n"] is None or a["free_n"] > r["peak_event_index"])
                L.append(f"| {a['n']} | {fmt(a['bytes'])} | {where(a['alloc'])} | {shp(a['alloc'])} | "
                         f"{where(a['free'])} ({a['free_n']}) | {'yes' if lap else 'no'} |")
        L.append("")
    # transient temporaries inside backward nodes
    tmp = defaultdict(lambda: [0, 0, 0])
    for a in ev:
        al, fr = a["alloc"], a["free"]
        if al["backward_node"] and fr and fr["backward_node"] == al["backward_node"] and a["free_n"] is not None:
            # freed inside the same kind of node; check same node instance via module
            if fr["module"] == al["module"]:
                k = (al["backward_node"], al["op_chain"].split(" > ")[-1])
                tmp[k][0] += 1; tmp[k][1] += a["bytes"]; tmp[k][2] = max(tmp[k][2], a["bytes"])
    L.append("Temporaries allocated and freed inside the same backward node (whole step):\n")
    L.append("| backward node | allocating op | count | total bytes | largest |\n|---|---|---:|---:|---:|")
    for (nd, op), (n, b, mx) in sorted(tmp.items(), key=lambda kv: -kv[1][1]):
        L.append(f"| {nd} | {op} | {n} | {fmt(b)} | {fmt(mx)} |")
    L.append("")
    return "\n".join(L)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("cases", nargs="+")
    ap.add_argument("-o", "--output")
    ap.add_argument("--md", help="write the generated markdown tables here")
    a = ap.parse_args()
    if len(a.cases) > 1:
        # one profiling session per process (see measure.run_isolated: a second session in
        # the same process reports stale frees; seen here as 82,462,624 for resnet18 run
        # after gpt_mini instead of 83,511,200)
        import subprocess
        outs = []
        for i, c in enumerate(a.cases):
            cmd = [sys.executable, os.path.abspath(__file__), c]
            if a.output:
                cmd += ["-o", a.output + f".{i}"]
            if a.md:
                cmd += ["--md", a.md + f".{i}"]
            subprocess.run(cmd, check=True)
        if a.output:
            json.dump([json.load(open(a.output + f".{i}"))[0] for i in range(len(a.cases))], open(a.output, "w"), indent=1)
            for i in range(len(a.cases)): os.remove(a.output + f".{i}")
        if a.md:
            with open(a.md, "w") as f:
                for i in range(len(a.cases)):
                    f.write(open(a.md + f".{i}").read()); os.remove(a.md + f".{i}")
        sys.exit(0)
    res = [analyse(c) for c in a.cases]
    for r in res:
        print(r["case"], "peak", r["peak_above_baseline"], "live allocations at peak", len(r["live_at_peak"]),
              "sum", sum(x["bytes"] for x in r["live_at_peak"]))
    if a.output:
        json.dump(res, open(a.output, "w"), indent=1)
    if a.md:
        heads = {"gpt_mini": "head"}
        with open(a.md, "w") as f:
            for r in res:
                f.write(to_markdown(r, "head" if r["case"].startswith("gpt_mini") else "fc") + "\n")
