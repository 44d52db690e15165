"""DeepSpeed ZeRO-1/2 on the CPU (issue 24, exploratory: no table yet).

Runs a 4 x Linear(512, 512) mlp (batch 8, fp32, a client torch optimizer)
under deepspeed.initialize with zero_optimization.stage STAGE in WORLD gloo
ranks (DeepSpeed falls back to gloo without oneCCL; DS_ACCELERATOR=cpu),
two warm-up steps, then one traced step: per rank the persistent bytes and
the step peak (memhook), and for rank 0 every allocation of 64 KiB or more
with the live bytes after it, between the marks 1 (forward done), 2
(backward done), 3 (step done). Needs deepspeed (0.19.8 from its sdist,
pip install --no-deps, plus hjson ninja py-cpuinfo pydantic msgpack einops).

    benchmarks/accuracy/truth-env.sh python3 benchmarks/accuracy/zero_trace.py WORLD STAGE sgd|adam [JSON]

JSON overrides zero_optimization keys, e.g. {\"reduce_bucket_size\": 100000}.
"""
import os, sys, ctypes, json
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
import torch, torch.nn as nn, torch.nn.functional as F
import torch.multiprocessing as mp
from gloo_ranks import preload_memhook, free_port

def rank_main(rank, world, stage, optname, extra, port, queue):
    os.environ.update(RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank),
                      MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), DS_ACCELERATOR="cpu")
    torch.set_num_threads(1)
    hook = ctypes.CDLL(None)
    hook.vram_live.restype = ctypes.c_long; hook.vram_peak.restype = ctypes.c_long
    import deepspeed
    deepspeed.init_distributed(dist_backend="gloo")
    start = hook.vram_live()
    torch.manual_seed(0)
    layers = []
    for i in range(4):
        layers += [nn.Linear(512, 512), nn.ReLU()]
    model = nn.Sequential(*layers[:-1])
    opt = torch.optim.SGD(model.parameters(), lr=0.01) if optname == "sgd" else torch.optim.Adam(model.parameters(), lr=1e-3)
    cfg = {"train_micro_batch_size_per_gpu": 8, "gradient_accumulation_steps": 1,
           "zero_optimization": {"stage": stage}, "zero_allow_untested_optimizer": True,
           "steps_per_print": 1000000}
    cfg["zero_optimization"].update(json.loads(extra))
    engine, dsopt, _, _ = deepspeed.initialize(model=model, optimizer=opt, config=cfg)
    x = torch.randn(8, 512); y = torch.randint(0, 512, (8,))
    after_init = hook.vram_live() - start
    def step():
        loss = F.cross_entropy(engine(x), y)
        hook.vram_mark(1)
        engine.backward(loss)
        hook.vram_mark(2)
        del loss
        engine.step()
        hook.vram_mark(3)
    step(); step()
    import torch.distributed as dist
    dist.barrier()
    persistent = hook.vram_live() - start
    hook.vram_reset_peak()
    base = hook.vram_live()
    hook.vram_trace(1)
    step()
    hook.vram_trace(0)
    peak = hook.vram_peak() - base
    tr = [(hook.vram_trace_live(i) - base, hook.vram_trace_delta(i), hook.vram_trace_mark(i)) for i in range(hook.vram_traced())]
    queue.put(dict(rank=rank, after_init=after_init, persistent=persistent, peak=peak, end=hook.vram_live()-start, trace=tr))

if __name__ == "__main__":
    preload_memhook()
    world, stage, optname = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    extra = sys.argv[4] if len(sys.argv) > 4 else "{}"
    ctx = mp.get_context("spawn"); q = ctx.Queue(); port = free_port()
    ps = [ctx.Process(target=rank_main, args=(r, world, stage, optname, extra, port, q)) for r in range(world)]
    for p in ps: p.start()
    rows = sorted((q.get() for _ in ps), key=lambda r: r["rank"])
    for p in ps: p.join()
    for r in rows:
        tr = r.pop("trace")
        print(json.dumps(r))
        if r["rank"] == 0:
            small = 0
            for live, delta, mark in tr:
                if delta == 0 and mark:
                    print("    MARK %d" % mark, live, "small", small); small = 0
                elif abs(delta) >= 65536:
                    print("   ", "%+d" % delta, live, "small", small); small = 0
                else:
                    small += delta
