"""What PyTorch holds at the measured peak of tp.py's T5 rows (t5_plain_adam,
t5-nodrop_plain_adam, t5-gated_plain_adam, t5_plain_inference).

Builds the model, inputs and step as tp.py does (tp.build, tp.loss_step,
gloo_ranks.steady_step_bytes; one gloo rank spawned by gloo_ranks.run_ranks
with memhook preloaded by gloo_ranks.preload_memhook), so its live bytes are
tp.py's: the first line repeats tp.py's measurement (two warm-up steps,
zero_grad, one measured step), which must equal tp.py's row. Then it runs
more steps (or forwards) under a TorchDispatchMode:

  pass A: memhook's trace on, a marker before and after every dispatched op
          (mark 2i+1 / 2i+2 for op i). The highest live count in the trace
          is the peak, of the whole step and of each phase (forward,
          backward, optimizer); the last marker before it names the op.
          Every new output storage (not on an input's storage) is recorded
          (creating op, phase, autograd node or module path and source
          line) with a StorageWeakRef, which does not keep its data alive.
  pass B: one more step per peak op (gc.collect() before each); at the
          start of that op every recorded storage still alive is
          classified: gradient (a .grad), saved for backward (a _saved_*
          attribute of a node reachable from the loss or from any tensor
          the Python frames hold), held by a Python frame (walked from the
          dispatch frame up, into tuples/lists/dicts/ModelOutputs/Cache
          objects), else the referrers gc finds. Tensors on storages made
          outside any dispatched op (0-dim wrapped numbers) are listed too.
          Each pass B checks its live bytes against pass A's op by op; a
          snapshot may leave reference cycles that keep tensors alive after
          it, so only the live bytes up to the snapshot count (its memhook
          peak is printed, and is higher then).

The peak's bytes above the step's baseline are decomposed into those
storages plus the op's own allocations up to the peak (from pass A's
trace); the residual is printed. --timeline prints pass A's ops with the
live bytes above the baseline after each and the highest inside each.

    benchmarks/accuracy/truth-env.sh python3 benchmarks/accuracy/notes/t5_peak.py [--config t5|t5-nodrop|t5-gated] [--mode train|inference] [--timeline]
"""
import argparse
import collections
import ctypes
import gc
import os
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.multiprocessing.reductions import StorageWeakRef  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402
from torch.utils._pytree import tree_leaves  # noqa: E402

import tp  # noqa: E402
from gloo_ranks import preload_memhook, run_ranks, steady_step_bytes  # noqa: E402

THIS = os.path.abspath(__file__)


def sdesc(shape, dtype):
    return "%s %s" % (list(shape), str(dtype).replace("torch.", ""))


def source_line():
    """The innermost frame outside torch/ and this file: file:line func."""
    f = sys._getframe(2)
    while f:
        fn = f.f_code.co_filename
        if fn != THIS and "/torch/" not in fn:
            return "%s:%d %s" % (os.path.basename(fn), f.f_lineno, f.f_code.co_name)
        f = f.f_back
    return "?"


def module_path(names):
    """The innermost nn.Module whose forward is on the stack, by name."""
    f = sys._getframe(2)
    while f:
        s = f.f_locals.get("self") if f.f_code.co_name in ("forward", "_call_impl") else None
        if s is not None and id(s) in names:
            return names[id(s)]
        f = f.f_back
    return "-"


class Tracker(TorchDispatchMode):
    def __init__(self, hook, names, snap_at=None, snap_fn=None, timeline=False):
        super().__init__()
        self.timeline = timeline
        self.hook, self.names = hook, names
        self.i = 0
        self.phase = "forward"
        self.phase_start = {"forward": 0}
        self.ops = []
        self.live_after = []  # memhook's live count after each op
        self.records = {}  # storage data_ptr -> record
        self.snap_at, self.snap_fn, self.snaps = snap_at or (), snap_fn, {}

    def set_phase(self, phase):
        self.phase = phase
        self.phase_start[phase] = self.i

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        i = self.i
        self.i += 1
        node = torch._C._current_autograd_node()
        self.ops.append((str(func), self.phase, node.name() if node is not None else
                         module_path(self.names) if self.timeline else None))
        if i in self.snap_at:
            self.snaps[i] = self.snap_fn(self, func, args, kwargs)
        self.hook.vram_mark(2 * i + 1)
        out = func(*args, **(kwargs or {}))
        self.hook.vram_mark(2 * i + 2)
        self.live_after.append(self.hook.vram_live())
        # An output on an input's storage (a view, an in-place op) is no new storage.
        inputs = {a.untyped_storage().data_ptr() for a in tree_leaves((args, kwargs))
                  if isinstance(a, torch.Tensor)}
        for t in tree_leaves(out):
            if isinstance(t, torch.Tensor) and t.untyped_storage().data_ptr() not in inputs:
                self.note(t, i, str(func), node)
        return out

    def note(self, t, i, op, node):
        s = t.untyped_storage()
        if s.nbytes() == 0:
            return
        ptr = s.data_ptr()
        r = self.records.get(ptr)
        if r is not None and not r["ref"].expired() and r["ref"].cdata == s._cdata:
            return  # a view of, or written in place into, a recorded storage
        where = (("node " + node.name()) if node is not None else
                 "%s | %s" % (module_path(self.names), source_line()))
        self.records[ptr] = {"ref": StorageWeakRef(s), "nbytes": s.nbytes(), "op": op, "i": i,
                             "phase": self.phase, "where": where,
                             "view": sdesc(t.shape, t.dtype), "ptr": ptr}

    def live(self):
        return [r for r in self.records.values() if not r["ref"].expired()]


def read_trace(hook):
    n = hook.vram_traced()
    return [(hook.vram_trace_live(k), hook.vram_trace_delta(k), hook.vram_trace_mark(k))
            for k in range(n)]


def op_of_entries(trace):
    """For each trace entry, (op index, inside?) from the last marker before
    it: (op, True) between op's markers, (op, False) after op ended; None
    before the first op."""
    cur, out = None, []
    for _, d, m in trace:
        if d == 0 and m:
            cur = ((m - 1) // 2, m % 2 == 1)
        out.append(cur)
    return out


def locate_peak(trace, where, base, ops):
    """The highest trace entry whose op lies in `ops` (a range): (peak above
    base, op index, trace index, text)."""
    ks = [k for k in range(len(trace)) if where[k] is not None and where[k][0] in ops]
    k = max(ks, key=lambda j: trace[j][0])
    op, inside = where[k]
    return trace[k][0] - base, op, k, ("inside op %d" % op if inside else
                                       "after op %d, before op %d" % (op, op + 1))


def in_op_allocations(trace, k, op):
    """Allocations and frees between op `op`'s start marker and trace index
    k, and the live count at that marker."""
    start = next(j for j in range(k, -1, -1) if trace[j][1] == 0 and trace[j][2] == 2 * op + 1)
    return [d for _, d, m in trace[start + 1:k + 1] if d != 0], trace[start][0]


# ---- classification at the snapshot ----

def collect(obj, path, out, depth, seen, tensors):
    """Tensors reachable from obj (containers, ModelOutputs, objects' __dict__)."""
    if depth > 8 or id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, torch.Tensor):
        try:
            s = obj.untyped_storage()
        except Exception:
            return
        out.setdefault(s.data_ptr(), []).append(path)
        tensors.append(obj)
        return
    if isinstance(obj, (str, bytes, int, float, bool, type(None), torch.nn.Module, type)):
        return
    if isinstance(obj, dict):
        for k, v in list(obj.items()):
            collect(v, "%s[%r]" % (path, k), out, depth + 1, seen, tensors)
    elif isinstance(obj, (list, tuple)):
        for k, v in enumerate(obj):
            collect(v, "%s[%d]" % (path, k), out, depth + 1, seen, tensors)
    elif hasattr(obj, "__dict__") and type(obj).__module__.startswith(("transformers", "torch.nn.attention")):
        for k, v in list(vars(obj).items()):
            collect(v, "%s.%s" % (path, k), out, depth + 1, seen, tensors)


def frame_holders(start_frame):
    """Storages of the tensors the Python frames hold, and those tensors' grad_fns."""
    out, depth, tensors = {}, 0, []
    f = start_frame
    while f:
        name = "%s:%d %s" % (os.path.basename(f.f_code.co_filename), f.f_lineno, f.f_code.co_name)
        if f.f_code.co_filename == THIS and f.f_code.co_name in ("snapshot", "frame_holders"):
            f = f.f_back
            continue
        if f.f_code.co_name == "__torch_dispatch__":
            name = "the op's own inputs (dispatch args)"
        seen = set()
        for k, v in list(f.f_locals.items()):
            if k in ("self",) and isinstance(v, (torch.nn.Module, Tracker)):
                continue
            collect(v, "frame[%d] %s: %s" % (depth, name, k), out, 0, seen, tensors)
        f = f.f_back
        depth += 1
    return out, [t.grad_fn for t in tensors if t.grad_fn is not None]


def saved_holders(roots):
    """Storages saved by the autograd nodes reachable from `roots`."""
    out, todo, seen = {}, list(roots), set()
    while todo:
        n = todo.pop()
        if n is None or n in seen:
            continue
        seen.add(n)
        todo.extend(f for f, _ in n.next_functions)
        for attr in dir(n):
            if not attr.startswith("_saved_"):
                continue
            try:
                val = getattr(n, attr)
            except Exception:
                continue  # released (its node already ran)
            for v in (val if isinstance(val, (tuple, list)) else (val,)):
                if isinstance(v, torch.Tensor):
                    out.setdefault(v.untyped_storage().data_ptr(), []).append(
                        "%s.%s (seq %d)" % (n.name(), attr[7:], n._sequence_nr()))
    return out


def gc_holders(ptrs):
    """For storages nobody above holds: the Python objects referring to a
    tensor on them."""
    out = collections.defaultdict(list)
    if not ptrs:
        return out
    objs = gc.get_objects()
    for o in objs:
        if isinstance(o, torch.Tensor):
            try:
                p = o.untyped_storage().data_ptr()
            except Exception:
                continue
            if p in ptrs:
                refs = [describe_referrer(r) for r in gc.get_referrers(o) if r is not objs]
                out[p].append("tensor %s referred to by %s" % (sdesc(o.shape, o.dtype), refs[:6]))
    return out


def describe_referrer(r):
    if isinstance(r, dict):
        owners = [type(o).__name__ for o in gc.get_referrers(r) if hasattr(o, "__dict__")
                  and getattr(o, "__dict__", None) is r]
        return "dict of %s" % owners if owners else "dict keys %s" % list(r)[:4]
    return type(r).__name__


def make_snapshot(ctx):
    def snapshot(tracker, func, args, kwargs):
        live = tracker.live()
        grads = {p.grad.untyped_storage().data_ptr(): n for n, p in ctx["model"].named_parameters()
                 if p.grad is not None}
        frames, roots = frame_holders(sys._getframe(1))
        if ctx.get("loss") is not None:
            roots.append(ctx["loss"].grad_fn)
        saved = saved_holders(roots)
        ptrs = {r["ptr"] for r in live}
        left = {p for p in ptrs if p not in grads and p not in saved and p not in frames}
        gcs = gc_holders(left)
        # Python tensors on storages neither recorded (made outside any
        # dispatched op, e.g. by torch.tensor()) nor persistent.
        known = ptrs | ctx["persistent"]()
        untracked = {}
        objs = gc.get_objects()
        for o in objs:
            if isinstance(o, torch.Tensor) and not o.is_meta:
                try:
                    st = o.untyped_storage()
                except Exception:
                    continue
                if st.nbytes() and st.data_ptr() not in known:
                    untracked.setdefault(st.data_ptr(), (st.nbytes(), sdesc(o.shape, o.dtype), []))[2].append(
                        [describe_referrer(r) for r in gc.get_referrers(o) if r is not objs][:4] +
                        ["saved: " + "; ".join(saved[st.data_ptr()][:2])] if st.data_ptr() in saved else [])
        node = torch._C._current_autograd_node()
        arg_desc = [sdesc(a.shape, a.dtype) for a in tree_leaves((args, kwargs))
                    if isinstance(a, torch.Tensor)]
        rows = []
        for r in live:
            p = r["ptr"]
            roles = []
            if p in grads:
                roles.append("grad of " + grads[p])
            if p in saved:
                roles.append("saved: " + "; ".join(saved[p][:3]) +
                             (" (+%d more)" % (len(saved[p]) - 3) if len(saved[p]) > 3 else ""))
            if p in frames:
                roles.append("python: " + "; ".join(frames[p][:8]))
            if p in gcs:
                roles.append("gc: " + "; ".join(gcs[p][:3]))
            if not roles:
                roles.append("no Python-visible holder (C++: autograd engine buffer / op input)")
            rows.append(dict(r, roles=roles,
                             kind=("grad" if p in grads else "saved" if p in saved else "other")))
        return {"op": str(func), "node": node.name() if node is not None else None,
                "live": tracker.hook.vram_live(), "untracked": untracked,
                "args": arg_desc, "rows": rows}
    return snapshot


def report(tag, snap, trace_info):
    peak, op, where, allocs, live_at_op = trace_info
    rows = snap["rows"]
    print("\n== %s: snapshot at the start of op %d %s (autograd node %s), inputs %s" % (
        tag, op, snap["op"], snap["node"], snap["args"]))
    total = sum(r["nbytes"] for r in rows)
    by_kind = collections.Counter()
    for r in rows:
        by_kind[r["kind"]] += r["nbytes"]
    print("storages made during this step and alive at the op's start: %d, %d bytes (%s)" % (
        len(rows), total, dict(by_kind)))
    inop = []
    run = 0
    for d in allocs:
        run += d
        inop.append(d)
    print("the op's own allocations/frees up to the peak (trace): %s = %+d bytes" % (inop, run))
    print("live above baseline at the op's start (trace): %d" % live_at_op)
    print("tracked at op start + op's bytes up to the peak = %d; peak above baseline %d; residual %d" % (
        total + run, peak, peak - total - run))

    print("Python tensors on storages made outside dispatched ops this step (not in the tables below): "
          "%d bytes" % sum(v[0] for v in snap["untracked"].values()))
    for ptr, (nb, view, refs) in snap["untracked"].items():
        print("    %6d  %s  referred to by %s" % (nb, view, refs[:2]))

    def group(sel, title):
        g = collections.OrderedDict()
        for r in sorted(sel, key=lambda r: r["i"]):
            key = (r["view"], r["nbytes"], r["op"].replace("aten.", ""), r["where"] if r["phase"] == "forward"
                   else r["phase"] + " " + r["where"])
            g.setdefault(key, []).append(r)
        print("\n-- %s: %d storages, %d bytes" % (title, len(sel), sum(r["nbytes"] for r in sel)))
        for (view, nb, op_, where_), rs in g.items():
            print("  %3d x %9d = %10d  %-22s %-28s %s" % (len(rs), nb, nb * len(rs), view, op_, where_))
            roles = collections.Counter("; ".join(r["roles"]) for r in rs)
            for role, c in roles.items():
                print("        %s%s" % ("" if c == len(rs) else "%d of them: " % c, role))

    grads = [r for r in rows if r["kind"] == "grad"]
    saved = [r for r in rows if r["kind"] == "saved"]
    other = [r for r in rows if r["kind"] == "other"]
    if grads:
        group(grads, "gradients (.grad)")
    if saved:
        # Saved tensors grouped by shape/dtype only (there are hundreds).
        g = collections.Counter()
        for r in saved:
            g[(r["view"], r["nbytes"])] += 1
        print("\n-- saved for backward: %d storages, %d bytes, by storage size and first view:" % (
            len(saved), sum(r["nbytes"] for r in saved)))
        for (view, nb), c in sorted(g.items(), key=lambda kv: -kv[0][1] * kv[1]):
            print("  %3d x %9d = %10d  %s" % (c, nb, c * nb, view))
        also = [r for r in saved if any(x.startswith("python:") or x.startswith("gc:") for x in r["roles"])]
        if also:
            group(also, "saved storages also held from Python")
    group(other, "neither a gradient nor saved for backward (what holds each)")


def run_rank(rank, name, mode, timeline, port, queue):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=1)
    torch.set_num_threads(1)
    hook = ctypes.CDLL(None)  # memhook.so, preloaded
    for f in ("vram_live", "vram_peak", "vram_trace_live", "vram_trace_delta"):
        getattr(hook, f).restype = ctypes.c_longlong
    hook.vram_traced.restype = ctypes.c_uint
    hook.vram_trace_mark.restype = ctypes.c_int
    start = hook.vram_live()
    torch.manual_seed(0)
    model, x, y = tp.build(name)
    names = {id(m): (n or "<root>") for n, m in model.named_modules()}
    ctx = {"model": model}

    def persistent_storages():
        ts = [x, y] + ctx.get("inputs", []) + list(model.parameters()) + list(model.buffers())
        if ctx.get("opt") is not None:
            ts += [v for st in ctx["opt"].state.values() for v in st.values() if isinstance(v, torch.Tensor)]
        return {t.untyped_storage().data_ptr() for t in ts}
    ctx["persistent"] = persistent_storages
    if mode == "inference":
        model.eval()
        # As tp.py: the labels replaced by their shift (ctx reads y for
        # the persistent storages).
        kwargs = {}
        y = kwargs["decoder_input_ids"] = model.lm._shift_right(y)
        with torch.no_grad():
            model(x, **kwargs)
            model(x, **kwargs)
        dist.barrier()
        persistent = hook.vram_live() - start

        def one(tracker=None):
            hook.vram_reset_peak()
            base = hook.vram_live()
            with torch.no_grad():
                if tracker is None:
                    out = model(x, **kwargs)
                else:
                    with tracker:
                        out = model(x, **kwargs)
            peak = hook.vram_peak() - base
            del out
            return base, peak
        base, plain = one()
        print("%s inference: persistent %d, plain forward peak above baseline %d" % (name, persistent, plain))
    else:
        model.train()
        opt = ctx["opt"] = torch.optim.Adam(model.parameters(), lr=1e-3)
        persistent, plain = steady_step_bytes(hook, start, lambda: tp.loss_step(model, opt, x, y), opt)
        print("%s train: persistent %d, plain step peak above baseline %d (tp.py measures this)" % (
            name, persistent, plain))

        def one(tracker=None):
            # tp.loss_step, with the loss kept in ctx (instead of a local)
            # for the snapshot, and phase markers.
            opt.zero_grad(set_to_none=True)
            hook.vram_reset_peak()
            base = hook.vram_live()
            if tracker is None:
                tp.loss_step(model, opt, x, y)
                return base, hook.vram_peak() - base
            with tracker:
                opt.zero_grad(set_to_none=True)
                ctx["loss"] = model(x, labels=y)
                tracker.set_phase("backward")
                ctx["loss"].backward()
                del ctx["loss"]
                tracker.set_phase("optimizer")
                opt.step()
            return base, hook.vram_peak() - base
        base, again = one()
        print("plain step again: %d" % again)

    # Pass A: trace and markers.
    ta = Tracker(hook, names, timeline=timeline)
    hook.vram_trace(1)
    base_a, peak_a = one(ta)
    hook.vram_trace(0)
    trace = read_trace(hook)
    where = op_of_entries(trace)
    after = {}  # live above baseline after each op
    for lv, d, m in trace:
        if d == 0 and m and m % 2 == 0:
            after[m // 2 - 1] = lv - base_a
    print("pass A: %d ops (phases start at %s), memhook peak above baseline %d" % (
        len(ta.ops), ta.phase_start, peak_a))
    if timeline:
        inside = collections.defaultdict(int)
        for k, w in enumerate(where):
            if w is not None and w[1]:
                inside[w[0]] = max(inside[w[0]], trace[k][0] - base_a)
        print("timeline: op, phase, module or autograd node, live above baseline after it, "
              "highest inside it")
        for j, (o, ph, at) in enumerate(ta.ops):
            print("  %5d %-9s %-45s %-50s %11d %11d" % (j, ph, o.replace("aten.", ""), at,
                                                      after.get(j, -1), inside.get(j, 0)))
    starts = sorted(ta.phase_start.items(), key=lambda kv: kv[1])
    spans = [("whole step", range(0, len(ta.ops)))] + [
        (ph, range(st, starts[j + 1][1] if j + 1 < len(starts) else len(ta.ops)))
        for j, (ph, st) in enumerate(starts)]
    peaks = []
    for label, ops in spans:
        peak, op, k, text = locate_peak(trace, where, base_a, ops)
        allocs, live_at = in_op_allocations(trace, k, op) if text.startswith("inside") else ([], trace[k][0])
        peaks.append((label, peak, op, text, allocs, live_at - base_a))
        print("\n%s peak: %d above baseline, %s: %s [%s, node %s]" % (
            label, peak, text, ta.ops[op][0], ta.ops[op][1], ta.ops[op][2]))
        print("ops around it (live above baseline after each):")
        for j in range(max(0, op - 6), min(len(ta.ops), op + 6)):
            print("  %s op %5d %-45s %-10s node %-32s %d" % (
                "*" if j == op else " ", j, ta.ops[j][0], ta.ops[j][1], ta.ops[j][2], after.get(j, -1)))
    # Pass B: snapshots at the start of each peak's op (an op ended before
    # the peak: the next op's start).
    snap_ops = {}
    for label, peak, op, text, allocs, live_at in peaks:
        snap_ops.setdefault(op if text.startswith("inside") else op + 1, []).append(label)
    # One pass per snapshot (a snapshot may leave reference cycles behind
    # that keep tensors alive after it; gc.collect() between passes), each
    # checked against pass A op by op up to its snapshot.
    snaps = {}
    for at in sorted(snap_ops):
        gc.collect()
        tb = Tracker(hook, names, snap_at={at}, snap_fn=make_snapshot(ctx))
        base_b, peak_b = one(tb)
        same = [o[0] for o in tb.ops] == [o[0] for o in ta.ops]
        diverge = next((j for j in range(min(len(tb.live_after), len(ta.live_after)))
                        if tb.live_after[j] - base_b != ta.live_after[j] - base_a), None)
        snap = tb.snaps[at]
        print("\npass B for op %d (%s): baseline %+d vs pass A's, same op sequence: %s, live at the "
              "snapshot %d above baseline (pass A: %d), live after every op equal to pass A's up to "
              "op %s, memhook peak above baseline %d" % (
                  at, "/".join(snap_ops[at]), base_b - base_a, same, snap["live"] - base_b,
                  (ta.live_after[at - 1] - base_a) if at else 0,
                  "the end" if diverge is None else diverge, peak_b))
        snaps[at] = snap
    done = set()
    for label, peak, op, text, allocs, live_at in peaks:
        at = op if text.startswith("inside") else op + 1
        if at in done:
            print("\n== %s %s %s peak: the same op as above" % (name, mode, label))
            continue
        done.add(at)
        report("%s %s %s peak" % (name, mode, label), snaps[at],
               (peak, at, text, allocs if text.startswith("inside") else [], live_at))
    queue.put({"rank": rank})
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="t5")
    ap.add_argument("--mode", default="train", choices=["train", "inference"])
    ap.add_argument("--timeline", action="store_true",
                    help="print pass A's ops: live bytes above the baseline after each, and the "
                         "highest inside each")
    args = ap.parse_args()
    preload_memhook()
    run_ranks(run_rank, 1, args.config, args.mode, args.timeline)


if __name__ == "__main__":
    main()
