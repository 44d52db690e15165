"""What autograd saves in T5ForConditionalGeneration's training forward, node by node.

Builds a config of test/Inputs/hf/small (t5 by default) as hf_truth.py does
(torch.manual_seed(0), model.train(), [2, 64] input_ids, [2, 32]
decoder_input_ids, use_cache=False, no labels, .logits) and runs the
forward under saved_tensors_hooks. Every packed tensor is recorded with the
module whose forward was running (forward pre/post hooks) and kept alive, so
its Python object identifies it again when the autograd graph is walked from
the logits (grad_fn.next_functions) and each node's _saved_* attributes are
read. Prints, per autograd node in forward order (_sequence_nr), the module,
the node's name, and each saved tensor: shape, dtype, storage bytes and
whether the storage is new (its first save), shared with an earlier saved
tensor (which node first saved it), or excluded (a parameter, buffer or the
ids). Then the bytes of new storages per module and in all, which equal
hf_truth.py's saved_activation_bytes for the same config (the residual, if
any, is printed). Every call of F.scaled_dot_product_attention is logged
with its arguments' shapes and the backend torch._fused_sdp_choice picks
for them (and would pick with dropout_p=0).

    benchmarks/accuracy/truth-env.sh python3 benchmarks/accuracy/notes/t5_saved.py [--config t5] [--attn sdpa|eager] [--bf16]
"""
import argparse
import collections
import pathlib

import torch
import torch.nn.functional as F
from transformers import AutoConfig
from transformers.models.auto import modeling_auto

torch.set_num_threads(1)
ROOT = pathlib.Path(__file__).resolve().parents[3]
SMALL = ROOT / "test" / "Inputs" / "hf" / "small"
BATCH, SEQ, DEC_SEQ = 2, 64, 32


def storage_of(t):
    s = t.untyped_storage()
    return s.data_ptr(), s.nbytes()


def backend_name(i):
    try:
        return torch.nn.attention.SDPBackend(i).name
    except Exception:
        return str(i)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="t5")
    ap.add_argument("--attn", default="sdpa")
    ap.add_argument("--bf16", action="store_true")
    args = ap.parse_args()

    torch.manual_seed(0)
    config = AutoConfig.from_pretrained(SMALL / (args.config + ".json"))
    cls = modeling_auto.MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING[type(config)]
    model = cls._from_config(config, attn_implementation=args.attn)
    if args.bf16:
        model = model.to(torch.bfloat16)
    model.train()
    ids = torch.randint(0, config.vocab_size, (BATCH, SEQ), generator=torch.Generator().manual_seed(1))
    dec = torch.randint(0, config.vocab_size, (BATCH, DEC_SEQ), generator=torch.Generator().manual_seed(2))
    print("%s %s %s: d_model %d, heads %d x d_kv %d, d_ff %d, layers %d/%d, vocab %d, ff %s, "
          "scale_decoder_outputs %s, lm_head tied %s, parameters %d" % (
              args.config, args.attn, "bf16" if args.bf16 else "fp32", config.d_model, config.num_heads,
              config.d_kv, config.d_ff, config.num_layers, config.num_decoder_layers, config.vocab_size,
              config.feed_forward_proj, config.scale_decoder_outputs,
              model.lm_head.weight is model.shared.weight, model.num_parameters()))

    excluded = {}
    for n, p in model.named_parameters(remove_duplicate=False):
        excluded.setdefault(storage_of(p)[0], "param " + n)
    for n, b in model.named_buffers():
        excluded.setdefault(storage_of(b)[0], "buffer " + n)
    excluded[storage_of(ids)[0]] = "input_ids"
    excluded[storage_of(dec)[0]] = "decoder_input_ids"

    # The module whose forward is running.
    stack = ["-"]

    def enter(name):
        stack.append(name)

    def leave():
        stack.pop()

    for name, mod in model.named_modules():
        mod.register_forward_pre_hook(lambda m, a, name=name: enter(name or "<model>"))
        mod.register_forward_hook(lambda m, a, o: leave())

    packs = []  # (tensor, module), in pack order

    def pack(t):
        packs.append((t, stack[-1]))
        return t

    sdpa_calls = []
    real_sdpa = F.scaled_dot_product_attention

    def logged_sdpa(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, **kw):
        gqa = kw.get("enable_gqa", False)
        choice = torch._fused_sdp_choice(q, k, v, attn_mask, dropout_p, is_causal, scale=scale, enable_gqa=gqa)
        choice0 = torch._fused_sdp_choice(q, k, v, attn_mask, 0.0, is_causal, scale=scale, enable_gqa=gqa)
        sdpa_calls.append("%-42s q %s k %s mask %s dropout_p %g is_causal %s scale %s -> %s (with dropout_p=0: %s)" % (
            stack[-1], tuple(q.shape), tuple(k.shape),
            None if attn_mask is None else "%s %s%s" % (tuple(attn_mask.shape), attn_mask.dtype,
                                                         " requires_grad" if attn_mask.requires_grad else ""),
            dropout_p, is_causal, scale, backend_name(choice), backend_name(choice0)))
        return real_sdpa(q, k, v, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal, scale=scale, **kw)

    F.scaled_dot_product_attention = logged_sdpa
    try:
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            logits = model(input_ids=ids, decoder_input_ids=dec, use_cache=False).logits
    finally:
        F.scaled_dot_product_attention = real_sdpa

    # Walk the graph from the logits.
    nodes, todo, seen = [], [logits.grad_fn], set()
    while todo:
        n = todo.pop()
        if n is None or n in seen:
            continue
        seen.add(n)
        nodes.append(n)
        todo.extend(f for f, _ in n.next_functions)
    nodes.sort(key=lambda n: n._sequence_nr())

    # A saved tensor that requires grad comes back from _saved_* as a new
    # tensor object (SavedVariable::unpack), so it is matched to its pack by
    # its view: storage, offset, shape, strides and dtype.
    def view_key(t):
        return storage_of(t)[0], t.storage_offset(), tuple(t.shape), t.stride(), t.dtype

    unmatched = collections.defaultdict(list)
    for i, (t, _) in enumerate(packs):
        unmatched[view_key(t)].append(i)

    node_saves = []
    for n in nodes:
        saves, scalars = [], []
        for attr in sorted(a for a in dir(n) if a.startswith("_saved_")):
            try:
                val = getattr(n, attr)
            except Exception as e:  # a freed or undefined saved variable
                scalars.append("%s=<%s>" % (attr[7:], type(e).__name__))
                continue
            vals = val if isinstance(val, (tuple, list)) else (val,)
            tensors = [v for v in vals if isinstance(v, torch.Tensor)]
            if not tensors:
                r = repr(val)
                scalars.append("%s=%s" % (attr[7:], r if len(r) < 40 else r[:37] + "..."))
            for v in tensors:
                left = unmatched.get(view_key(v))
                saves.append((attr[7:], v, left.pop(0) if left else None))
        node_saves.append((n, saves, scalars))

    # A storage is new at the first node (forward order) that saves it.
    total = 0
    first = {}  # storage ptr -> (node label, attribute)
    by_module = collections.OrderedDict()
    lines = []
    for k, (n, saves, scalars) in enumerate(node_saves):
        if n.name().endswith("AccumulateGrad"):
            continue
        module = next((packs[i][1] for _, _, i in saves if i is not None), "")
        lines.append("#%-4d %-44s %-34s%s" % (k, module, n.name(), "  " + " ".join(scalars) if scalars else ""))
        for attr, v, i in saves:
            ptr, nb = storage_of(v)
            if ptr in excluded:
                status = "excluded (%s)" % excluded[ptr]
            elif i is None:
                # The saved_tensors_hooks never saw it (measure.py does not
                # count it): a Python number that mul wrapped as a 0-dim tensor.
                status = "not packed"
            elif ptr in first:
                status = "shared with %s.%s" % first[ptr]
            else:
                first[ptr] = ("#%d %s" % (k, n.name()), attr)
                status = "new"
                total += nb
                by_module[packs[i][1]] = by_module.get(packs[i][1], 0) + nb
            lines.append("        %-14s %-22s %-15s %9d  %s" % (
                attr, tuple(v.shape), str(v.dtype).replace("torch.", ""), nb, status))
    print("\n".join(lines))

    print("\nscaled_dot_product_attention calls:")
    for c in sdpa_calls:
        print("  " + c)

    # Storages that no node on the logits' graph holds.
    for t, m in packs:
        ptr, nb = storage_of(t)
        if ptr not in excluded and ptr not in first:
            first[ptr] = ("unreached", "")
            print("unreached save: %s %s %s %d" % (m, tuple(t.shape), t.dtype, nb))

    measured = sum(nb for ptr, nb in {storage_of(t)[0]: storage_of(t)[1] for t, _ in packs}.items()
                   if ptr not in excluded)
    print("\nnew bytes by module (module of the first save of each storage):")
    for m, b in by_module.items():
        print("  %-50s %9d" % (m, b))
    print("\nnew bytes by sublayer (block.N.layer.M: 0 self-attention, then cross-attention in the decoder, last FF):")
    by_sub = collections.OrderedDict()
    for m, b in by_module.items():
        parts = m.split(".")
        key = ".".join(parts[:5]) if len(parts) > 1 and parts[1] == "block" else m
        by_sub[key] = by_sub.get(key, 0) + b
    for m, b in by_sub.items():
        print("  %-50s %9d" % (m, b))
    print("\nnodes %d, packs %d, new storages total %d, hf_truth-style measure %d, residual %d" % (
        len(nodes), len(packs), total, measured, measured - total))


if __name__ == "__main__":
    main()
