"""Parameter counts of the Hugging Face config fixtures, as transformers builds them.

Each test/Inputs/hf/*/config.json is instantiated with
AutoModelForCausalLM.from_config (AutoModelForMaskedLM for a masked-LM
architecture, AutoModelForImageClassification for an image classifier) on the meta device (no weights, no memory)
and its parameters counted as model.num_parameters() does (tied weights
once). The table is the reference of test/Import/HuggingFace/params.test.
With peft installed it also counts peft's LoRA adapters (get_peft_model,
print_trainable_parameters' numbers) for the configurations in LORA.

    benchmarks/accuracy/truth-env.sh python3 benchmarks/accuracy/hf_params.py
"""
import datetime
import json
import pathlib
import platform

import torch
import transformers
from transformers import (AutoConfig, AutoModelForCausalLM, AutoModelForImageClassification,
                          AutoModelForMaskedLM)

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "test" / "Inputs" / "hf"


# (fixture, LoraConfig keyword arguments)
LORA = [("Meta-Llama-3-8B", dict(r=16, lora_alpha=32, lora_dropout=0.05,
                                 target_modules=["q_proj", "v_proj"]))]


def build(config_dir):
    """The config's model: its causal LM, or for a masked-LM architecture
    (BertForMaskedLM) or an image classifier (ViTForImageClassification)
    that class."""
    config = AutoConfig.from_pretrained(config_dir)
    archs = config.architectures or []
    auto = (AutoModelForMaskedLM if any(a.endswith("ForMaskedLM") for a in archs)
            else AutoModelForImageClassification if any(a.endswith("ForImageClassification") for a in archs)
            else AutoModelForCausalLM)
    with torch.device("meta"):
        return auto.from_config(config)


def count(config_dir):
    return build(config_dir).num_parameters()


def count_lora():
    import peft
    rows = []
    for name, kwargs in LORA:
        model = peft.get_peft_model(build(FIXTURES / name), peft.LoraConfig(**kwargs))
        trainable, total = model.get_nb_trainable_parameters()
        rows.append({"config": name, "lora": kwargs, "trainable": trainable, "all": total})
    return peft.__version__, rows


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
    try:
        out["peft"], out["lora"] = count_lora()
    except ImportError:
        pass
    path = ROOT / "benchmarks" / "accuracy" / "results" / (
        "hf-params-transformers-%s.json" % transformers.__version__)
    path.write_text(json.dumps(out, indent=2) + "\n")
    for name, n in rows.items():
        print("%-20s %d" % (name, n))


if __name__ == "__main__":
    main()
