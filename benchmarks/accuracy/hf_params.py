"""Parameter counts of the Hugging Face config fixtures, as transformers builds them.

Each test/Inputs/hf/*/config.json is instantiated with
AutoModelForCausalLM.from_config (AutoModelForMaskedLM for a masked-LM
architecture, AutoModelForImageClassification for an image classifier,
AutoModelForSeq2SeqLM for an encoder-decoder such as
T5ForConditionalGeneration) on the meta device (no weights, no memory)
and its parameters counted as model.num_parameters() does (tied weights
once). The table is the reference of test/Import/HuggingFace/params.test.
With peft installed it also counts peft's LoRA adapters (get_peft_model,
print_trainable_parameters' numbers) for the configurations in LORA.

    benchmarks/accuracy/truth-env.sh python3 benchmarks/accuracy/hf_params.py [--update] [FIXTURE...]

Given fixture names (e.g. t5-base), counts only those and writes nothing,
or with --update adds or replaces their rows in the table, leaving the
rest of it as it is.
"""
import datetime
import json
import pathlib
import platform
import sys

import torch
import transformers
from transformers import (AutoConfig, AutoModelForCausalLM, AutoModelForImageClassification,
                          AutoModelForMaskedLM, AutoModelForSeq2SeqLM)

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "test" / "Inputs" / "hf"


# (fixture, LoraConfig keyword arguments)
LORA = [("Meta-Llama-3-8B", dict(r=16, lora_alpha=32, lora_dropout=0.05,
                                 target_modules=["q_proj", "v_proj"]))]


def build(config_dir):
    """The config's model: its causal LM, or for a masked-LM architecture
    (BertForMaskedLM), an image classifier (ViTForImageClassification) or an
    encoder-decoder LM (T5ForConditionalGeneration) that class."""
    config = AutoConfig.from_pretrained(config_dir)
    archs = config.architectures or []
    auto = (AutoModelForMaskedLM if any(a.endswith("ForMaskedLM") for a in archs)
            else AutoModelForImageClassification if any(a.endswith("ForImageClassification") for a in archs)
            else AutoModelForSeq2SeqLM if any(a.endswith("ForConditionalGeneration") for a in archs)
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
    only = [a for a in sys.argv[1:] if not a.startswith("-")]
    rows = {d.name: count(d) for d in sorted(FIXTURES.iterdir())
            if (d / "config.json").exists() and (not only or d.name in only)}
    path = ROOT / "benchmarks" / "accuracy" / "results" / (
        "hf-params-transformers-%s.json" % transformers.__version__)
    if only:
        for name, n in rows.items():
            print("%-20s %d" % (name, n))
        if "--update" in sys.argv and path.exists():
            table = json.loads(path.read_text())
            table["parameters"] = dict(sorted({**table["parameters"], **rows}.items()))
            path.write_text(json.dumps(table, indent=2) + "\n")
            print("updated", path)
        return
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
    path.write_text(json.dumps(out, indent=2) + "\n")
    for name, n in rows.items():
        print("%-20s %d" % (name, n))


if __name__ == "__main__":
    main()
