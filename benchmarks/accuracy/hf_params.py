"""Parameter counts of the Hugging Face config fixtures, as transformers builds them.

Each test/Inputs/hf/*/config.json is instantiated with
AutoModelForCausalLM.from_config on the meta device (no weights, no memory)
and its parameters counted as model.num_parameters() does (tied weights
once). The table is the reference of test/Import/HuggingFace/params.test.

    benchmarks/accuracy/truth-env.sh python3 benchmarks/accuracy/hf_params.py
"""
import datetime
import json
import pathlib
import platform

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "test" / "Inputs" / "hf"


def count(config_dir):
    config = AutoConfig.from_pretrained(config_dir)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    return model.num_parameters()


def main():
    rows = {d.name: count(d) for d in sorted(FIXTURES.iterdir())
            if (d / "config.json").exists()}
    out = {
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "date": datetime.date.today().isoformat(),
        "machine": platform.machine(),
        "parameters": rows,
    }
    path = ROOT / "benchmarks" / "accuracy" / "results" / (
        "hf-params-transformers-%s.json" % transformers.__version__)
    path.write_text(json.dumps(out, indent=2) + "\n")
    for name, n in rows.items():
        print("%-20s %d" % (name, n))


if __name__ == "__main__":
    main()
