"""Bytes autograd saves for backward in transformers' LMs (torch 2.x, CPU, fp32 or bf16).

Each small config of test/Inputs/hf/small is built with
AutoModelForCausalLM.from_config (torch.manual_seed(0), model.train(), fp32)
and run forward on [batch, seq] token ids without labels and with
use_cache=False (as training runs it). The saved bytes are the unique
storages packed by saved_tensors_hooks during that forward, minus
parameters, buffers and the input ids, as measure.py counts them. Each
config is measured with the attention implementations transformers offers on
the CPU ("sdpa", its default, and "eager"; only "eager" for the families it
has no sdpa path for, as gemma2).

    benchmarks/accuracy/truth-env.sh python3 benchmarks/accuracy/hf_truth.py [-v] [--bf16] [CONFIG...]

writes results/hf-torch-<torch>-transformers-<version>-cpu.json, the
reference of test/Import/HuggingFace/saved.test; given config names (e.g.
gpt2), measures only those and writes nothing, or with --update replaces
or adds their rows in the table. A config whose architectures name a
masked LM (BertForMaskedLM), a sequence or token classifier
(BertForSequenceClassification, BertForTokenClassification) or an image classifier
(ViTForImageClassification) is built with that class; an image classifier
runs on [batch, channels, image_size, image_size] pixel values (rows
named _i<image_size> instead of _t<seq>). A config whose architectures name
an encoder-decoder LM (T5ForConditionalGeneration) is built with
AutoModelForSeq2SeqLM's class and run on [batch, seq] input_ids and
[batch, decoder_seq] decoder_input_ids (decoder_seq 32, unlike seq on
purpose; no labels, use_cache=False, its .logits): rows named
_t<seq>_d<decoder_seq>, with a "decoder_seq" field; the decoder ids are not
counted either. -v lists the saved storages.
--bf16 converts each model to bfloat16 (model.to(torch.bfloat16)) and writes
results/hf-bf16-torch-<torch>-transformers-<version>-cpu.json.
--use-cache runs the forward with use_cache=True (the configs' default, a
DynamicCache whose copies of the keys and values attention saves) and writes
results/hf-use-cache-torch-<torch>-transformers-<version>-cpu.json.
"""
import collections
import datetime
import json
import pathlib
import platform
import sys

import torch
import transformers
from transformers import AutoConfig

torch.set_num_threads(1)
ROOT = pathlib.Path(__file__).resolve().parents[2]
SMALL = ROOT / "test" / "Inputs" / "hf" / "small"
BATCH, SEQ = 2, 64
DEC_SEQ = 32  # an encoder-decoder's decoder_input_ids: [BATCH, DEC_SEQ]


def storage_of(t):
    s = t.untyped_storage()
    return s.data_ptr(), s.nbytes()


def head(config):
    """The head the config's architectures name: "ForMaskedLM",
    "ForSequenceClassification" (the encoders), "ForConditionalGeneration"
    (an encoder-decoder, T5), or a causal LM."""
    for suffix in ("ForMaskedLM", "ForSequenceClassification", "ForTokenClassification",
                   "ForImageClassification", "ForConditionalGeneration"):
        if any(a.endswith(suffix) for a in (config.architectures or [])):
            return suffix
    return "ForCausalLM"


def is_causal_lm(config):
    return head(config) == "ForCausalLM"


def is_seq2seq(config):
    return head(config) == "ForConditionalGeneration"


def model_class(config):
    """The config's model: a causal LM, a masked LM (BertForMaskedLM), a
    sequence classifier (BertForSequenceClassification) or an
    encoder-decoder LM (T5ForConditionalGeneration)."""
    auto = transformers.models.auto.modeling_auto
    mapping = {"ForCausalLM": auto.MODEL_FOR_CAUSAL_LM_MAPPING,
               "ForMaskedLM": auto.MODEL_FOR_MASKED_LM_MAPPING,
               "ForSequenceClassification": auto.MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING,
               "ForTokenClassification": auto.MODEL_FOR_TOKEN_CLASSIFICATION_MAPPING,
               "ForImageClassification": auto.MODEL_FOR_IMAGE_CLASSIFICATION_MAPPING,
               "ForConditionalGeneration": auto.MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING}[head(config)]
    return mapping[type(config)]


def saved_bytes(model, ids, verbose, use_cache=False, decoder_ids=None):
    extra = [] if decoder_ids is None else [decoder_ids]
    excl = {storage_of(t)[0] for t in list(model.parameters()) + list(model.buffers()) + [ids] + extra}
    seen = {}
    shapes = collections.Counter()

    def pack(t):
        ptr, nb = storage_of(t)
        if ptr not in excl and ptr not in seen:
            seen[ptr] = nb
            shapes[(tuple(t.shape), str(t.dtype), nb)] += 1
        return t

    # An encoder (BertForMaskedLM) has no cache to ask for.
    kwargs = {"use_cache": use_cache} if is_causal_lm(model.config) or is_seq2seq(model.config) else {}
    if decoder_ids is not None:
        kwargs["decoder_input_ids"] = decoder_ids
    inputs = "pixel_values" if head(model.config) == "ForImageClassification" else "input_ids"
    kwargs[inputs] = ids
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(**kwargs).logits
    del out
    if verbose:
        for (shape, dtype, nb), n in sorted(shapes.items(), key=lambda kv: -kv[0][2] * kv[1]):
            print("   %3d x %-22s %-14s %d" % (n, shape, dtype, nb))
    return sum(seen.values())


def main():
    verbose = "-v" in sys.argv
    bf16 = "--bf16" in sys.argv
    use_cache = "--use-cache" in sys.argv
    only = [a for a in sys.argv[1:] if not a.startswith("-")]
    rows = {}
    for path in sorted(SMALL.glob("*.json")):
        if only and path.stem not in only:
            continue
        for impl in ("sdpa", "eager"):
            torch.manual_seed(0)
            config = AutoConfig.from_pretrained(path)
            cls = model_class(config)
            if impl == "sdpa" and not cls._supports_sdpa:
                continue  # transformers runs it eagerly only (gemma2)
            model = cls._from_config(config, attn_implementation=impl)
            if bf16:
                model = model.to(torch.bfloat16)
            model.train()
            vision = head(config) == "ForImageClassification"
            if vision:
                size = config.image_size
                ids = torch.randn(BATCH, config.num_channels, size, size,
                                  generator=torch.Generator().manual_seed(1))
                if bf16:
                    ids = ids.to(torch.bfloat16)
            else:
                ids = torch.randint(0, config.vocab_size, (BATCH, SEQ),
                                    generator=torch.Generator().manual_seed(1))
            name = "%s_%s_b%d_%s%d" % (path.stem, impl, BATCH, "i" if vision else "t",
                                       config.image_size if vision else SEQ)
            decoder_ids = None
            if is_seq2seq(config):
                decoder_ids = torch.randint(0, config.vocab_size, (BATCH, DEC_SEQ),
                                            generator=torch.Generator().manual_seed(2))
                name += "_d%d" % DEC_SEQ
            if verbose:
                print(name)
            rows[name] = {
                "config": str(path.relative_to(ROOT)),
                "attn_implementation": impl,
                "batch": BATCH,
                **({"image_size": config.image_size} if vision else {"seq": SEQ}),
                **({"decoder_seq": DEC_SEQ} if decoder_ids is not None else {}),
                "parameters": model.num_parameters(),
                "saved_activation_bytes": saved_bytes(model, ids, verbose, use_cache, decoder_ids),
            }
            print("%-28s %d" % (name, rows[name]["saved_activation_bytes"]))
    name = "hf-%s%storch-%s-transformers-%s-cpu.json" % ("bf16-" if bf16 else "", "use-cache-" if use_cache else "",
                                                          torch.__version__.split("+")[0], transformers.__version__)
    path = ROOT / "benchmarks" / "accuracy" / "results" / name
    if only:
        if "--update" in sys.argv and path.exists():
            table = json.loads(path.read_text())
            table["rows"].update(rows)
            path.write_text(json.dumps(table, indent=2) + "\n")
            print("updated", path)
        return
    out = {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "date": datetime.date.today().isoformat(),
        "machine": "%s, %s" % (platform.machine(), platform.platform()),
        "dtype": "bfloat16" if bf16 else "float32",
        "use_cache": use_cache,
        "rows": rows,
    }
    path.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
