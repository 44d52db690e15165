"""DeepSpeed's ZeRO-2 estimator beside vram-opt (issue 24, docs/Distributed.md).

deepspeed.runtime.zero.stage_1_and_2.estimate_zero2_model_states_mem_needs
(pure Python, DeepSpeed 0.19.8) gives a GPU's model states for 16-bit
training with Adam as 2 + 18/N bytes a parameter (16-bit parameters; 16-bit
and fp32 gradients, fp32 master weights and Adam's two moments, the last
four partitioned). vram-opt's --strategy=zero2 --precision=bf16 runs the
same configuration step by step: this prints both for the configs given,
with the figures vram-opt's report names, into
results/peers-zero-deepspeed-<version>.json.

    benchmarks/accuracy/truth-env.sh python3 benchmarks/accuracy/peers_zero.py
"""
import json
import pathlib
import subprocess

import deepspeed
from deepspeed.runtime.zero.stage_1_and_2 import estimate_zero2_model_states_mem_needs

ROOT = pathlib.Path(__file__).resolve().parents[2]
VRAM_OPT = ROOT / "build" / "bin" / "vram-opt"
# (config under test/Inputs/hf, data-parallel ranks, sequence length)
CASES = [("Meta-Llama-3-8B", 8, 1), ("Meta-Llama-3-8B", 64, 1), ("Meta-Llama-3-8B", 8, 2048),
         ("Qwen2.5-7B", 8, 1)]

rows = []
for config, ranks, seq in CASES:
    report = json.loads(subprocess.run(
        [str(VRAM_OPT), f"--hf={ROOT / 'test' / 'Inputs' / 'hf' / config}", f"--seq={seq}",
         "--batch=1", "--precision=bf16", "--optimizer=adam", f"--parallel=dp={ranks}",
         "--strategy=zero2", "--gpu=h100", "--format=json"],
        capture_output=True, text=True, check=True).stdout)
    params = report["parameters"]["trainable"]
    _, estimate = estimate_zero2_model_states_mem_needs(params, num_gpus_per_node=ranks,
                                                        cpu_offload=False)
    at_peak = report["ranks"][0]["at_peak"]
    rows.append({"config": config, "dp": ranks, "seq": seq, "parameters": params,
                      "deepspeed_estimate_gpu_bytes": estimate,
                      "vram_opt_persistent_bytes": report["memory"]["persistent_bytes"],
                      "vram_opt_peak_bytes": report["memory"]["peak_bytes"],
                      "vram_opt_at_peak": at_peak})
    print(rows[-1])
out = ROOT / "benchmarks" / "accuracy" / "results" / f"peers-zero-deepspeed-{deepspeed.__version__}.json"
out.write_text(json.dumps({"estimator": "estimate_zero2_model_states_mem_needs(cpu_offload=False), "
                           f"deepspeed {deepspeed.__version__}", "rows": rows}, indent=1) + "\n")
print(f"wrote {out}")
