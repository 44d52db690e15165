#!/usr/bin/python3
"""Ground-truth generator for vram-opt's accuracy benchmark (Debian torch 1.13, CPU, fp32).

For each configuration it measures, on a model in train() mode with a fixed seed:
  saved_activation_bytes            unique storages packed by autograd during the forward
                                    (saved_tensors_hooks), minus parameters, buffers, input
  cpu_sgd_step_peak_above_baseline  max over one steady-state step (after one warm-up step)
                                    of the running sum of the CPU profiler's [memory] events
                                    (allocations +, frees -), i.e. peak live bytes above the
                                    bytes live just before the step
Run:  /usr/bin/python3 measure.py --validate          (the three public.json checks)
      /usr/bin/python3 measure.py --all -o results/torch-1.13-cpu.json
      /usr/bin/python3 measure.py --only resnet18_c102_b2 ...
"""
import argparse, gc, json, math, os, sys, time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

torch.set_num_threads(1)
MEASURED_WITH = ("torch 1.13.0a0 cpu, Debian 12" if torch.__version__.startswith("1.13")
                 else "torch %s cpu (PyPI wheel), Debian 12" % torch.__version__)
HERE = os.path.dirname(os.path.abspath(__file__))


# --------------------------------------------------------------------------- gpt_mini
class Block(nn.Module):
    def __init__(self, d, h, mlp):
        super().__init__()
        self.h = h
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, mlp)
        self.fc2 = nn.Linear(mlp, d)

    def attn(self, x):
        B, T, C = x.shape
        hd = C // self.h
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.h, hd).transpose(1, 2)
        k = k.view(B, T, self.h, hd).transpose(1, 2)
        v = v.view(B, T, self.h, hd).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
        mask = torch.tril(torch.ones(T, T, dtype=torch.bool, device=x.device))
        att = att.masked_fill(~mask, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.proj(y)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        x = x + self.fc2(F.gelu(self.fc1(self.ln2(x))))
        return x


class GPTMini(nn.Module):
    """tokens -> tok_emb + pos_emb -> 4 blocks -> ln_f -> head (no bias, untied)."""
    def __init__(self, vocab=8192, d=256, heads=8, mlp=1024, layers=4, block=256):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab, d)
        self.pos_emb = nn.Embedding(block, d)
        self.blocks = nn.ModuleList([Block(d, heads, mlp) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        B, T = idx.shape
        pos = torch.arange(T, device=idx.device)
        x = self.tok_emb(idx) + self.pos_emb(pos)
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln_f(x))


# --------------------------------------------------------------------------- configs
def build(cfg):
    torch.manual_seed(cfg.get("seed", 0))
    m = cfg["model"]
    if m == "gpt_mini":
        model = GPTMini()
    else:
        model = getattr(torchvision.models, m)(num_classes=cfg["classes"])
    model.train()
    if cfg.get("trainable", "all") == "head_only":
        last = [mod for mod in model.modules() if isinstance(mod, nn.Linear)][-1]
        for p in model.parameters():
            p.requires_grad_(False)
        for p in last.parameters():
            p.requires_grad_(True)
    g = torch.Generator().manual_seed(1)
    if cfg["kind"] == "lm":
        x = torch.randint(0, 8192, (cfg["batch"], cfg["size"]), generator=g)
        y = torch.randint(0, 8192, (cfg["batch"], cfg["size"]), generator=g)
    else:
        x = torch.randn(cfg["batch"], 3, cfg["size"], cfg["size"], generator=g)
        y = torch.randint(0, cfg["classes"], (cfg["batch"],), generator=g)
    return model, x, y


def make_opt(cfg, params):
    o = cfg.get("optimizer", "sgd")
    if o == "sgd":
        return torch.optim.SGD(params, lr=0.01)
    if o == "momentum":
        return torch.optim.SGD(params, lr=0.01, momentum=0.9)
    if o == "adam":
        return torch.optim.Adam(params, lr=1e-3, foreach=False)
    if o == "adam_foreach":
        return torch.optim.Adam(params, lr=1e-3, foreach=True)
    # issue 23's optimizers (torch 2.x only: torch.optim.Adafactor is 2.5+;
    # Lion and 8-bit AdamW are bitsandbytes', whose CPU backend runs them).
    if o in ("nesterov", "nesterov_foreach"):
        return torch.optim.SGD(params, lr=0.01, momentum=0.9, nesterov=True,
                               foreach=o.endswith("_foreach"))
    if o in ("adafactor", "adafactor_foreach"):
        return torch.optim.Adafactor(params, lr=1e-2, foreach=o.endswith("_foreach"))
    if o == "lion":
        import bitsandbytes as bnb
        return bnb.optim.Lion(params, lr=1e-4)
    if o == "adamw8bit":
        import bitsandbytes as bnb
        return bnb.optim.AdamW8bit(params, lr=1e-3)
    if o.endswith("_inbwd"):
        inner = dict(cfg, optimizer=o[:-len("_inbwd")])
        return InBackward(params, lambda ps: make_opt(inner, ps))
    raise ValueError(o)


class InBackward:
    """The optimizer step fused into backward (PyTorch's tutorial "How to
    save memory by fusing the optimizer step into the backward pass"): an
    optimizer per parameter, stepped and zeroed (set_to_none) by the
    parameter's post-accumulate-grad hook; zero_grad() and step() of the
    training loop then do nothing."""

    def __init__(self, params, make):
        self.opts = {p: make([p]) for p in params}
        for p in params:
            p.register_post_accumulate_grad_hook(self._hook)

    def _hook(self, p):
        self.opts[p].step()
        self.opts[p].zero_grad(set_to_none=True)

    @property
    def state(self):
        return {p: st for o in self.opts.values() for p, st in o.state.items()}

    def zero_grad(self, set_to_none=True):
        pass

    def step(self):
        pass


def optimizer_state_bytes(opt):
    """Bytes of the optimizer's state tensors (unique storages), without the
    per-parameter `step` counters: torch.optim keeps them on the host (a
    0-dim CPU tensor unless capturable or fused), bitsandbytes as ints."""
    seen = {}
    for st in opt.state.values():
        for k, v in st.items():
            if k != "step" and torch.is_tensor(v):
                ptr, nb = storage_of(v)
                seen[ptr] = nb
    return sum(seen.values())


def storage_of(t):
    s = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
    return s.data_ptr(), s.nbytes()


# --------------------------------------------------------------------------- saved bytes
def saved_bytes(model, x, state=None):
    """`model` may be any callable given the tensors it holds as `state`
    (an exported program's module: export_pt2.py)."""
    if state is None:
        state = list(model.parameters()) + list(model.buffers())
    excl = {storage_of(t)[0] for t in state + [x]}
    seen = {}

    def pack(t):
        ptr, nb = storage_of(t)
        if ptr not in excl:
            seen[ptr] = nb
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    shape = list(out.shape) if hasattr(out, "shape") else None
    del out
    gc.collect()
    return sum(seen.values()), shape


# --------------------------------------------------------------------------- step peak
def loss_fn(out, y):
    if out.dim() == 3:
        return F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
    return F.cross_entropy(out, y)


def step(model, opt, x, y, keep_output=False):
    """One training step. By default no Python reference holds the model output, so the
    logits die as soon as the loss forward is done (log_softmax saves its own output, not
    its input). This is what public.json measured: keeping `out` alive through backward
    adds exactly one output-sized tensor to the peak (816 B for resnet18 b2, 8,388,608 B
    for gpt_mini b2 t128), measured; see README.md."""
    opt.zero_grad(set_to_none=True)
    if keep_output:
        out = model(x)
        loss = loss_fn(out, y)
    else:
        loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()


def start_us(e):
    """An event's start in microseconds (torch 2.x reports nanoseconds)."""
    return e.start_ns() / 1000 if hasattr(e, "start_ns") else e.start_us()


def duration_us(e):
    return e.duration_ns() / 1000 if hasattr(e, "duration_ns") else e.duration_us()


def memory_events(prof):
    """[memory] events of the kineto trace as (t_us, nbytes), in recording order."""
    evs = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    return [(start_us(e), e.nbytes()) for e in evs]


def peak_from_events(mem):
    # recording order; stable-sort by timestamp in case the list is not already ordered
    mem = sorted(mem, key=lambda e: e[0])
    live = peak = 0
    for _, nb in mem:
        live += nb
        peak = max(peak, live)
    return peak, live


def step_peak(model, opt, x, y, record_shapes=False, with_stack=False, keep_output=False):
    from torch.profiler import profile, ProfilerActivity
    step(model, opt, x, y, keep_output)          # warm-up: creates grads and optimizer state
    gc.collect()
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True,
                 record_shapes=record_shapes, with_stack=with_stack) as prof:
        step(model, opt, x, y, keep_output)
    peak, net = peak_from_events(memory_events(prof))
    return peak, net, prof


def step_peak_true_baseline(model, opt, x, y):
    """Cross-check that does not depend on the profiler's blind spot: c10's profiled CPU
    allocator reports no free event for a block allocated before profiling started (it
    logs "Memory block of unknown size was allocated before the profiling started"). In
    step_peak() the previous step's .grad tensors are such blocks, so their free at
    zero_grad() is invisible and the public figure is the peak above the state *after*
    zero_grad(set_to_none=True). Here two steps run inside one profile; the second step's
    zero_grad frees grads allocated under the profiler, so its free events are recorded.
    Returns (peak of step 2 above the live bytes just before step 2, i.e. grads included in
    the baseline; the same walk's peak above the state after step 2's zero_grad)."""
    from torch.profiler import profile, ProfilerActivity, record_function
    step(model, opt, x, y)
    gc.collect()
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        step(model, opt, x, y)
        with record_function("##step2##"):
            with record_function("##zero_grad##"):
                opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(x), y)
            loss.backward()
            del loss
            opt.step()
    evs = list(prof.profiler.kineto_results.events())
    t2 = [start_us(e) for e in evs if e.name() == "##step2##"][0]
    tz = [start_us(e) + duration_us(e) for e in evs if e.name() == "##zero_grad##"][0]
    mem = sorted(memory_events(prof), key=lambda e: e[0])
    live = peak = 0
    live_after_zero = None
    for t, nb in mem:
        if t < t2:
            continue
        live += nb
        peak = max(peak, live)
        if t <= tz:
            live_after_zero = live
    return peak, peak - (live_after_zero or 0), live_after_zero or 0


# --------------------------------------------------------------------------- runner
def case_id(c):
    if c["kind"] == "lm":
        base = f"{c['model']}_b{c['batch']}_t{c['size']}"
    else:
        base = f"{c['model']}_c{c['classes']}_b{c['batch']}" + ("" if c["size"] == 224 else f"_s{c['size']}")
    if c.get("trainable", "all") != "all":
        base += "_" + c["trainable"]
    if c.get("optimizer", "sgd") != "sgd":
        base += "_" + c["optimizer"]
    return base


def worker(cfg, mode):
    """One measurement in a fresh process (see run_isolated)."""
    model, x, y = build(cfg)
    trainable = [p for p in model.parameters() if p.requires_grad]
    if mode == "saved":
        sb, shape = saved_bytes(model, x)
        return {"saved_activation_bytes": sb, "output_shape": shape}
    opt = make_opt(cfg, trainable)
    if mode == "peak":
        peak, net, _ = step_peak(model, opt, x, y)
        return {"cpu_sgd_step_peak_above_baseline": peak, "step_net_bytes": net,
                "optimizer_state_bytes": optimizer_state_bytes(opt)}
    if mode == "peak_keep_output":
        return {"cpu_step_peak_keep_output": step_peak(model, opt, x, y, keep_output=True)[0]}
    if mode == "peak2":
        tp, tp_zero, freed = step_peak_true_baseline(model, opt, x, y)
        return {"cpu_step_peak_above_live_before_step": tp,
                "cpu_step_peak_above_after_zero_grad_crosscheck": tp_zero,
                "zero_grad_freed_bytes": -freed}
    raise ValueError(mode)


def run_isolated(cfg, mode):
    """c10's ProfiledCPUMemoryReporter keeps a ptr->size table that is filled only while
    memory profiling is on and is not cleaned when blocks are freed outside profiling, so a
    second profiling session in the same process can report stale frees for reused
    addresses (seen: a second session in one process gave 73,921,232 instead of
    83,511,200 for resnet18_c102_b2). Every measurement therefore runs in its own process
    with exactly one profiling session."""
    import subprocess
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", case_id(cfg), mode],
                       capture_output=True, text=True)
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode != 0 or not lines:
        raise RuntimeError(f"{case_id(cfg)} {mode}: rc {p.returncode}\n{p.stderr[-3000:]}")
    return json.loads(lines[-1])


def measure(cfg, do_saved=True, do_peak=True, extra=True):
    model, x, y = build(cfg)
    trainable = [p for p in model.parameters() if p.requires_grad]
    r = {"id": case_id(cfg), "kind": cfg["kind"], "model": cfg["model"]}
    if cfg["kind"] != "lm":
        r["classes"] = cfg["classes"]
    r.update(batch=cfg["batch"], size=cfg["size"],
             params=sum(p.numel() for p in model.parameters()),
             param_bytes=sum(p.numel() * p.element_size() for p in model.parameters()),
             trainable_params=sum(p.numel() for p in trainable),
             buffer_bytes=sum(b.numel() * b.element_size() for b in model.buffers()),
             input_bytes=x.numel() * x.element_size())
    del model, x, y
    gc.collect()
    if do_saved:
        r.update(run_isolated(cfg, "saved"))
    if do_peak:
        r.update(run_isolated(cfg, "peak"))
        if extra:
            r.update(run_isolated(cfg, "peak2"))
            if cfg.get("optimizer", "sgd") == "sgd":
                r.update(run_isolated(cfg, "peak_keep_output"))
    r["optimizer"] = cfg.get("optimizer", "sgd")
    r["trainable"] = cfg.get("trainable", "all")
    r["measured_with"] = MEASURED_WITH
    if r["optimizer"] in ("lion", "adamw8bit"):
        import bitsandbytes as bnb
        r["measured_with"] += ", bitsandbytes %s" % bnb.__version__
    return r


def V(model, b, s=224, **kw):
    return dict(kind="vision", model=model, classes=102, batch=b, size=s, **kw)


def L(b, t, **kw):
    return dict(kind="lm", model="gpt_mini", batch=b, size=t, **kw)


VALIDATION = [V("resnet18", 2), V("resnet18", 1, 64), L(2, 128)]

ALL = VALIDATION + [
    V("resnet18", 1), V("resnet18", 4), V("resnet18", 1, 64), V("resnet18", 4, 64),
    V("resnet50", 1), V("resnet50", 4), V("resnet50", 1, 64), V("resnet50", 4, 64),
    V("resnet18", 2, trainable="head_only"), V("resnet18", 1, 64, trainable="head_only"),
    V("resnet50", 2, trainable="head_only"), V("resnet18", 4, trainable="head_only"),
    L(2, 128, trainable="head_only"),
    V("mobilenet_v2", 1), V("vgg11", 1), V("vit_b_16", 1),
    V("mobilenet_v2", 1, trainable="head_only"), V("vit_b_16", 1, trainable="head_only"),
    L(1, 64), L(1, 256), L(1, 128),
    V("resnet18", 2, optimizer="momentum"), V("resnet18", 2, optimizer="adam"),
    V("resnet18", 2, optimizer="adam_foreach"),
    # the other two public.json cases (extra validation)
    V("resnet50", 2), V("resnet101", 2),
    # torch.export fixtures (test/Import/TorchExport/truth.test)
    V("mobilenet_v3_large", 1), V("convnext_tiny", 1), V("swin_t", 1),
]
# issue 23's optimizers, torch 2.x and bitsandbytes only (not in ALL: --only).
OPTIMIZERS_2X = [c(optimizer=o) for c in (lambda **kw: V("resnet18", 2, **kw),
                                          lambda **kw: L(2, 128, **kw))
                 for o in ("nesterov", "nesterov_foreach", "adafactor",
                           "adafactor_foreach", "lion", "adamw8bit",
                           "sgd_inbwd", "adam_inbwd")]
PEAK_ONLY = {"momentum", "adam", "adam_foreach", "nesterov", "nesterov_foreach",
             "adafactor", "adafactor_foreach", "lion", "adamw8bit", "sgd_inbwd",
             "adam_inbwd"}


def dedupe(cfgs):
    out, seen = [], set()
    for c in cfgs:
        if case_id(c) not in seen:
            seen.add(case_id(c)); out.append(c)
    return out


def link_head_only(rows):
    """Copy each head_only row's saved bytes into its all-trainable row as
    saved_activation_bytes_head_only (public.json's field), for rows measured both ways."""
    by = {r["id"]: r for r in rows}
    for r in rows:
        h = by.get(r["id"] + "_head_only")
        if r.get("trainable") == "all" and r.get("optimizer") == "sgd" and h and "saved_activation_bytes" in h:
            r["saved_activation_bytes_head_only"] = h["saved_activation_bytes"]
    return rows


def validate(rows):
    pub = {r["id"]: r for r in json.load(open("/work/shared/reference/truth/public.json"))}
    ok = True
    for r in rows:
        p = pub.get(r["id"])
        if not p or r.get("optimizer") != "sgd" or r.get("trainable") != "all":
            continue
        for k in ("params", "param_bytes", "buffer_bytes", "input_bytes", "output_shape",
                  "saved_activation_bytes", "saved_activation_bytes_head_only"):
            if k in r and r[k] != p[k]:
                ok = False
                print(f"MISMATCH {r['id']} {k}: measured {r[k]} public {p[k]}")
        if "cpu_sgd_step_peak_above_baseline" in r:
            m, t = r["cpu_sgd_step_peak_above_baseline"], p["cpu_sgd_step_peak_above_baseline"]
            print(f"{r['id']}: peak measured {m} public {t} diff {m - t:+d} ({100.0 * (m - t) / t:+.3f}%)")
        print(f"{r['id']}: saved measured {r.get('saved_activation_bytes')} public {p['saved_activation_bytes']}")
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--validate", action="store_true")
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--only", nargs="*", default=[])
    ap.add_argument("-o", "--output")
    ap.add_argument("--worker", nargs=2, metavar=("ID", "MODE"))
    ap.add_argument("--no-extra", action="store_true",
                    help="skip the keep_output and two-step cross-check runs")
    a = ap.parse_args()
    if a.worker:
        cfg = [c for c in dedupe(ALL + OPTIMIZERS_2X) if case_id(c) == a.worker[0]][0]
        print(json.dumps(worker(cfg, a.worker[1])))
        return
    cfgs = VALIDATION if a.validate else dedupe(ALL)
    if a.only:
        cfgs = [c for c in dedupe(ALL + OPTIMIZERS_2X) if case_id(c) in a.only]
    rows = []
    if a.output and os.path.exists(a.output):
        rows = json.load(open(a.output))
    done = {r["id"] for r in rows}
    for c in cfgs:
        if a.output and case_id(c) in done and not a.only:
            continue
        t0 = time.time()
        r = measure(c, do_saved=c.get("optimizer", "sgd") not in PEAK_ONLY, extra=not a.no_extra)
        print(json.dumps(r), f"({time.time() - t0:.0f}s)", flush=True)
        rows = [x for x in rows if x["id"] != r["id"]] + [r]
        if a.output:
            json.dump(rows, open(a.output, "w"), indent=1)
    rows = link_head_only(rows)
    if a.output:
        json.dump(rows, open(a.output, "w"), indent=1)
    ok = validate(rows)
    print("validation of exact fields:", "OK" if ok else "FAILED")


if __name__ == "__main__":
    main()
