#!/usr/bin/python3
"""vram-opt's predictions against real PyTorch on a CUDA GPU (issue 13).

For each configuration (seed article 001's ResNet-18 cases, ResNets, ViT,
GPT-2, a LLaMA-style model; fp32 and AMP fp16; Adam and SGD; full, frozen and
LoRA training) it runs, in its own process, two warm-up training steps and one
measured step in PyTorch on the GPU and reads
  torch.cuda.max_memory_allocated()   (reset before the measured step)
  torch.cuda.max_memory_reserved()
  the process's device memory (NVML through pynvml, else nvidia-smi)
next to vram-opt's allocated / reserved / device predictions for the same
step (--allocator=pytorch-cuda, the caching allocator simulated over two
iterations, --gpu=NAME for the device figure).

    pytorch_gpu.py --dry-run [--vram-opt PATH] [--only ID ...]   # no GPU needed
    pytorch_gpu.py [--gpu h200] [-o results/DATE-DEVICE.md]      # needs CUDA

Without a CUDA device (and without --dry-run) it exits 1 with one line
"pytorch_gpu.py: no CUDA device: REASON". The model builders are
measure.py's (torchvision models, gpt_mini) and scenarios.py's LoRA; GPT-2
and LLaMA need HuggingFace transformers (rows are skipped, with the reason,
without it). Nothing here has run on a GPU yet: no figures are committed
until scripts/gpu-check.sh runs on one.
"""
import argparse, ast, json, os, shutil, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
LORA_CONV = dict(r=4, alpha=32, dropout=0.1)


def C(id, model, batch, size, precision="fp32", optimizer="adam", train="full", classes=102, **kw):
    return dict(id=id, model=model, batch=batch, size=size, precision=precision,
                optimizer=optimizer, train=train, classes=classes, **kw)


SEED = "seed001"  # seed article 001: timm resnet18, 102 classes, batch 90, 224 px, Adam
CONFIGS = [
    C(f"{SEED}_full_fp32", "resnet18", 90, 224),
    C(f"{SEED}_full_amp", "resnet18", 90, 224, precision="amp-fp16"),
    C(f"{SEED}_freeze95_fp32", "resnet18", 90, 224, train="freeze-first=0.95"),
    C(f"{SEED}_lora_fp32", "resnet18", 90, 224, train="lora-conv"),
    C(f"{SEED}_lora_amp", "resnet18", 90, 224, precision="amp-fp16", train="lora-conv"),
    C("resnet18_b32_sgd_fp32", "resnet18", 32, 224, optimizer="sgd"),
    C("resnet50_b32_adam_fp32", "resnet50", 32, 224),
    C("resnet50_b32_adam_amp", "resnet50", 32, 224, precision="amp-fp16"),
    C("resnet50_b32_sgd_frozen", "resnet50", 32, 224, optimizer="sgd", train="head-only"),
    C("resnet101_b16_adam_fp32", "resnet101", 16, 224),
    C("vit_b_16_b16_adam_fp32", "vit_b_16", 16, 224),
    C("vit_b_16_b16_adam_amp", "vit_b_16", 16, 224, precision="amp-fp16"),
    C("gpt_mini_b8_t256_adam_fp32", "gpt_mini", 8, 256),
    C("gpt2_b4_t512_adam_fp32", "gpt2", 4, 512),
    C("gpt2_b4_t512_adam_amp", "gpt2", 4, 512, precision="amp-fp16"),
    C("gpt2_b4_t512_sgd_freeze50", "gpt2", 4, 512, optimizer="sgd", train="freeze-first=0.5"),
    C("llama7b_b1_t512_adam_lora", "llama-7b", 1, 512, train="lora-linear"),
]


# --------------------------------------------------------------------------- vram-opt
def vram_args(cfg, gpu):
    # GPT-2 is transformers' GPT2LMHeadModel(GPT2Config()): its config, as
    # --hf builds today's transformers (a training forward with use_cache),
    # the loss taken outside the model over flattened logits.
    src = ([f"--hf=test/Inputs/hf/gpt2", "--loss=cross_entropy", "--flatten-logits"]
           if cfg["model"] == "gpt2" else [f"--zoo={cfg['model']}"])
    a = src + [f"--batch={cfg['batch']}", "--mode=train", "--keep-output",
               f"--optimizer={cfg['optimizer']}", "--allocator=pytorch-cuda", "--format=json"]
    if gpu:
        a.append(f"--gpu={gpu}")
    if cfg["model"] in ("gpt2", "llama-7b", "gpt_mini"):
        a.append(f"--seq={cfg['size']}")
    else:
        a += [f"--image-size={cfg['size']}", f"--num-classes={cfg['classes']}"]
    if cfg["precision"] != "fp32":
        a.append(f"--precision={cfg['precision']}")
    t = cfg["train"]
    if t.startswith("freeze-first="):
        a.append("--" + t)
    elif t == "lora-conv":
        a.append("--lora=r=4,alpha=32,dropout=0.1,targets=conv2d")
    elif t == "lora-linear":
        a.append("--lora=r=8,alpha=16,dropout=0.05,targets=linear")
    elif t == "head-only":
        # torchvision ResNets: everything but fc.
        a.append("--freeze=conv1,bn1,layer1,layer2,layer3,layer4")
    return a


def predict(tool, cfg, gpu):
    cmd = [tool] + vram_args(cfg, gpu)
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]}
    m = json.loads(p.stdout)["memory"]
    return {"allocated": m.get("allocated_peak_bytes"), "reserved": m.get("reserved_peak_bytes"),
            "device": m.get("device_peak_bytes"), "exact": m.get("peak_bytes")}


# --------------------------------------------------------------------------- PyTorch
def build_torch(cfg):
    """The model (on the GPU), a batch and its targets, and the trainable parameters."""
    import torch
    import torch.nn as nn
    sys.path.insert(0, HERE)
    import measure
    m = cfg["model"]
    lm = m in ("gpt2", "llama-7b", "gpt_mini")
    if m in ("gpt2", "llama-7b"):
        import transformers  # ImportError: reported as a skipped row
        if m == "gpt2":
            model = transformers.GPT2LMHeadModel(transformers.GPT2Config())
            vocab = model.config.vocab_size
        else:
            conf = transformers.LlamaConfig(hidden_size=4096, intermediate_size=11008,
                                            num_hidden_layers=32, num_attention_heads=32,
                                            vocab_size=32000)
            with torch.device("cuda"):
                model = transformers.LlamaForCausalLM(conf)
            vocab = conf.vocab_size
    elif m == "gpt_mini":
        model, vocab = measure.GPTMini(), 8192
    else:
        model, _, _ = measure.build(dict(kind="vision", model=m, classes=cfg["classes"],
                                         batch=1, size=32))
    model = model.cuda().train()
    t = cfg["train"]
    if t.startswith("freeze-first="):
        mods = list(model.named_modules())
        for _, mod in mods[:int(float(t.split("=")[1]) * len(mods))]:
            for p in mod.parameters(recurse=False):
                p.requires_grad_(False)
    elif t == "lora-conv":
        import scenarios
        for p in model.parameters():
            p.requires_grad_(False)
        scenarios.add_lora(model, **LORA_CONV)
        model = model.cuda()
    elif t == "lora-linear":
        for p in model.parameters():
            p.requires_grad_(False)
        add_lora_linear(model, r=8, alpha=16, dropout=0.05)
        model = model.cuda()
    elif t == "head-only":
        head = [mod for mod in model.modules() if isinstance(mod, nn.Linear)][-1]
        for p in model.parameters():
            p.requires_grad_(False)
        for p in head.parameters():
            p.requires_grad_(True)
    g = torch.Generator().manual_seed(1)
    if lm:
        x = torch.randint(0, vocab, (cfg["batch"], cfg["size"]), generator=g).cuda()
        y = torch.randint(0, vocab, (cfg["batch"], cfg["size"]), generator=g).cuda()
    else:
        x = torch.randn(cfg["batch"], 3, cfg["size"], cfg["size"], generator=g).cuda()
        y = torch.randint(0, cfg["classes"], (cfg["batch"],), generator=g).cuda()
    return model, x, y, [p for p in model.parameters() if p.requires_grad]


def add_lora_linear(module, r, alpha, dropout):
    """peft's lora.Linear (one adapter) on every nn.Linear but the LM head."""
    import torch.nn as nn

    class LoraLinear(nn.Module):
        def __init__(self, base):
            super().__init__()
            self.base_layer = base
            self.lora_dropout = nn.Dropout(dropout)
            self.lora_A = nn.Linear(base.in_features, r, bias=False)
            self.lora_B = nn.Linear(r, base.out_features, bias=False)
            nn.init.zeros_(self.lora_B.weight)
            self.scaling = alpha / r

        def forward(self, x):
            return self.base_layer(x) + self.lora_B(self.lora_A(self.lora_dropout(x))) * self.scaling

    for name, child in module.named_children():
        if isinstance(child, nn.Linear) and name != "lm_head":
            setattr(module, name, LoraLinear(child))
        else:
            add_lora_linear(child, r, alpha, dropout)


def process_device_bytes():
    pid = os.getpid()
    try:
        import pynvml
        pynvml.nvmlInit()
        import torch
        h = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
        for p in pynvml.nvmlDeviceGetComputeRunningProcesses(h):
            if p.pid == pid:
                return p.usedGpuMemory
    except Exception:
        pass
    smi = shutil.which("nvidia-smi")
    if smi:
        out = subprocess.run([smi, "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            parts = [s.strip() for s in line.split(",")]
            if len(parts) == 2 and parts[0] == str(pid):
                return int(parts[1]) << 20  # MiB
    return None


def make_step(cfg):
    """The configuration's model on the GPU and one training step of it, the
    loop most scripts write: `out` (a language model's logits) is held until
    the step returns, which vram-opt models with --keep-output."""
    import torch
    import torch.nn.functional as F
    model, x, y, params = build_torch(cfg)
    opt = (torch.optim.Adam(params, lr=1e-3) if cfg["optimizer"] == "adam"
           else torch.optim.SGD(params, lr=0.01))
    amp = cfg["precision"] == "amp-fp16"
    scaler = torch.cuda.amp.GradScaler(enabled=amp)
    lm = cfg["model"] in ("gpt2", "llama-7b", "gpt_mini")

    def step():
        with torch.autocast("cuda", dtype=torch.float16, enabled=amp):
            out = model(x)
            logits = out.logits if hasattr(out, "logits") else out
            loss = (F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1)) if lm
                    else F.cross_entropy(logits, y))
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
        return loss.item()

    def warm_up():
        """Two steps, and more while the optimizer has no state: GradScaler
        skips opt.step() when the gradients overflow at its first scales
        (65,536, halved each time), and a step measured before the first
        update has no Adam state (resnet50_b32_adam_amp on 2026-12-04:
        182,541,824 B live after its measured step, less than its
        parameters and Adam state)."""
        step(); step()
        for _ in range(20):
            if opt.state or cfg["optimizer"] != "adam" or not params:
                break
            step()

    step.warm_up = warm_up
    return step


def measure_worker(cfg):
    import torch
    step = make_step(cfg)
    step.warm_up()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    loss = step()
    end.record()
    torch.cuda.synchronize()
    return {"allocated": torch.cuda.max_memory_allocated(), "reserved": torch.cuda.max_memory_reserved(),
            "device": process_device_bytes(), "step_ms": start.elapsed_time(end), "loss": loss,
            "torch": torch.__version__, "gpu": torch.cuda.get_device_name()}


def measure_isolated(cfg):
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", json.dumps(cfg)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]}
    return json.loads(p.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------- output
def gib(b):
    return "n/a" if b is None else f"{b / (1 << 30):.3f}"


def err(pred, meas):
    if pred is None or not meas:
        return ""
    return f"{100.0 * (pred - meas) / meas:+.1f}%"


def table(rows, measured):
    head = "| configuration | vram-opt args | pred. allocated GiB | pred. reserved GiB | pred. device GiB |"
    sep = "|---|---|---:|---:|---:|"
    if measured:
        head = ("| configuration | pred. allocated GiB | measured | error | pred. reserved GiB | measured | error "
                "| pred. device GiB | measured (NVML) | error | step ms | loss |")
        sep = "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    out = [head, sep]
    for cfg, pred, meas in rows:
        if "error" in pred:
            out.append(f"| {cfg['id']} | vram-opt failed: {pred['error']} |")
            continue
        if not measured:
            out.append(f"| {cfg['id']} | `{' '.join(cfg['args'])}` | {gib(pred['allocated'])} | "
                       f"{gib(pred['reserved'])} | {gib(pred['device'])} |")
        elif "error" in meas:
            out.append(f"| {cfg['id']} | {gib(pred['allocated'])} | not measured: {meas['error']} |")
        else:
            out.append(f"| {cfg['id']} | {gib(pred['allocated'])} | {gib(meas['allocated'])} | "
                       f"{err(pred['allocated'], meas['allocated'])} | {gib(pred['reserved'])} | "
                       f"{gib(meas['reserved'])} | {err(pred['reserved'], meas['reserved'])} | "
                       f"{gib(pred['device'])} | {gib(meas['device'])} | {err(pred['device'], meas['device'])} | "
                       f"{meas['step_ms']:.1f} | {meas['loss']:.4f} |")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dry-run", action="store_true",
                    help="list the configurations and vram-opt's predictions; no GPU needed")
    ap.add_argument("--vram-opt", default=shutil.which("vram-opt") or os.path.join(REPO, "build", "bin", "vram-opt"))
    ap.add_argument("--gpu", default="h200", help="vram-opt --gpu for the device figure")
    ap.add_argument("--only", nargs="*", default=[])
    ap.add_argument("--list", action="store_true", help="print the configuration ids")
    ap.add_argument("-o", "--output")
    ap.add_argument("--from-log", metavar="LOG", action="append", default=[],
                    help="no GPU: the measurements of an earlier run's log (results/*.md.log; "
                         "the last of each configuration) against today's predictions")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        print(json.dumps(measure_worker(json.loads(a.worker))))
        return 0
    cfgs = [c for c in CONFIGS if not a.only or c["id"] in a.only]
    unknown = set(a.only) - {c["id"] for c in CONFIGS}
    if unknown:
        print("pytorch_gpu.py: unknown configuration: " + ", ".join(sorted(unknown)), file=sys.stderr)
        return 2
    if a.list:
        print("\n".join(c["id"] for c in cfgs))
        return 0
    logged = {}
    for path in a.from_log:
        for line in open(path):
            id, sep, rest = line.partition(": predicted ")
            if sep and ", measured " in rest:
                logged[id] = ast.literal_eval(rest.split(", measured ", 1)[1].strip())
    if a.from_log:
        cfgs = [c for c in cfgs if c["id"] in logged]
    if not a.dry_run and not a.from_log:
        try:
            import torch
        except ImportError as e:
            print(f"pytorch_gpu.py: no CUDA device: cannot import torch ({e})", file=sys.stderr)
            return 1
        if not torch.cuda.is_available():
            why = ("torch %s was built without CUDA" % torch.__version__ if not torch.version.cuda
                   else "torch.cuda.is_available() is False (torch %s, CUDA %s)" % (torch.__version__, torch.version.cuda))
            print("pytorch_gpu.py: no CUDA device: " + why, file=sys.stderr)
            return 1
    if not os.path.exists(a.vram_opt):
        print(f"pytorch_gpu.py: vram-opt not found at {a.vram_opt} (--vram-opt)", file=sys.stderr)
        return 2
    rows = []
    for cfg in cfgs:
        cfg = dict(cfg, args=vram_args(cfg, a.gpu))
        pred = predict(a.vram_opt, cfg, a.gpu)
        meas = logged.get(cfg["id"]) if a.from_log else None if a.dry_run else measure_isolated(cfg)
        rows.append((cfg, pred, meas))
        if not a.dry_run and not a.from_log:
            print(f"{cfg['id']}: predicted {pred}, measured {meas}", file=sys.stderr)
    text = table(rows, measured=not a.dry_run)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
