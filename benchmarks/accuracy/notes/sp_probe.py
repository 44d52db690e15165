"""Probe (not a table): llama-mha at tp=2 with sequence parallelism as torchtitan
plans it, applied to transformers LlamaForCausalLM; see notes/sp.md."""
import ctypes, os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import torch, torch.distributed as dist
from gloo_ranks import preload_memhook, run_ranks, steady_step_bytes, train_step, scratch_bytes
import tp as T

def run_rank(rank, world, port, queue):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.parallel import (ColwiseParallel, RowwiseParallel, SequenceParallel,
                                                   PrepareModuleInput, parallelize_module)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.set_num_threads(1)
    hook = ctypes.CDLL(None)
    hook.vram_live.restype = hook.vram_peak.restype = ctypes.c_longlong
    start = hook.vram_live()
    torch.manual_seed(0)
    model, x, y = T.build("llama-mha")
    mesh = init_device_mesh("cpu", (world,))
    for layer in model.lm.model.layers:
        parallelize_module(layer, mesh, {
            "input_layernorm": SequenceParallel(), "post_attention_layernorm": SequenceParallel(),
            "self_attn": PrepareModuleInput(input_kwarg_layouts={"hidden_states": Shard(1)},
                                            desired_input_kwarg_layouts={"hidden_states": Replicate()},
                                            use_local_output=True),
            "self_attn.q_proj": ColwiseParallel(), "self_attn.k_proj": ColwiseParallel(),
            "self_attn.v_proj": ColwiseParallel(),
            "self_attn.o_proj": RowwiseParallel(output_layouts=Shard(1), use_local_output=False),
            "mlp": PrepareModuleInput(input_layouts=(Shard(1),), desired_input_layouts=(Replicate(),),
                                      use_local_output=True),
            "mlp.gate_proj": ColwiseParallel(), "mlp.up_proj": ColwiseParallel(),
            "mlp.down_proj": RowwiseParallel(output_layouts=Shard(1), use_local_output=False)})
    parallelize_module(model.lm, mesh, {
        "model.layers.0": PrepareModuleInput(input_layouts=(Replicate(),), desired_input_layouts=(Shard(1),)),
        "model.norm": SequenceParallel(),
        "lm_head": ColwiseParallel(input_layouts=Shard(1), output_layouts=Replicate())})
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    persistent, peak = steady_step_bytes(hook, start, lambda: train_step(model, opt, x, y), opt)
    persistent -= scratch_bytes()
    queue.put({"rank": rank, "persistent": persistent, "peak": peak})
    dist.destroy_process_group()

if __name__ == "__main__":
    preload_memhook()
    for world in (1, 2):
        print(world, run_ranks(run_rank, world, world), flush=True) if world > 1 else None
