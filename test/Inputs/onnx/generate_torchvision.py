#!/usr/bin/python3
"""Generates the torchvision ONNX fixtures of test/Import/ONNX/torchvision.test.

Not part of the product: it only (re)creates test inputs. Needs Debian 12's
python3-torch (1.13), python3-torchvision (0.14) and python3-onnx.

For each model: random initialisation (no downloads), torch.onnx.export with
the opset and training mode listed in MODELS, do_constant_folding=False and a
dynamic batch axis named "batch"; the initializers are then saved as external
data and the data file deleted, so that the committed graph carries dims only
(as shared/reference/truth/*.onnx were made).

It also writes torchvision.json: per model the parameter count and the bytes
autograd keeps for backward after the forward pass (batch 2, 224x224,
model.train(), all parameters trainable), counted with
torch.autograd.graph.saved_tensors_hooks as the sum of the unique storages
packed, excluding parameters, buffers and the input.
  - saved_activation_bytes: dropout as on CUDA (torch.native_dropout, a
    1-byte bool mask per element), which is what vram-opt models;
  - saved_activation_bytes_cpu: PyTorch 1.13's CPU dropout (an input-dtype
    mask, 4 bytes per element in fp32).
A graph exported in eval mode has no Dropout nodes, so vram-opt's training
figure for it lacks the dropout masks (noted per model in the test).

Usage: python3 generate_torchvision.py [OUTDIR] [MODEL...]
"""
import io
import json
import os
import sys

import torch
import torch.nn.functional as F
import torchvision
import onnx
from onnx import external_data_helper

T = torch.onnx.TrainingMode
# name -> (opset, training mode). Opsets below 17 exercise the importer's
# raising of decompositions: LayerNormalization (< 17), HardSwish (< 14).
MODELS = {
    "resnet18": (17, T.TRAINING),
    "vgg11": (17, T.EVAL),
    "densenet121": (17, T.TRAINING),
    "mobilenet_v2": (17, T.TRAINING),
    "mobilenet_v3_small": (13, T.TRAINING),
    # Stochastic depth cannot be exported in training mode (bernoulli_), and
    # TrainingMode.EVAL fuses BatchNorm into the convolutions (other
    # parameters): PRESERVE exports the eval-mode model as it is.
    "efficientnet_b0": (17, T.PRESERVE),
    "regnet_y_400mf": (15, T.TRAINING),
    "shufflenet_v2_x0_5": (17, T.TRAINING),
    "squeezenet1_0": (16, T.EVAL),
    "mnasnet0_5": (17, T.TRAINING),
    "convnext_tiny": (14, T.EVAL),
    "vit_b_16": (14, T.TRAINING),
    "swin_t": (17, T.EVAL),
    # One output for training: without the auxiliary classifiers. Their
    # avg_pool2d(padding=1, count_include_pad=True) exports as Pad +
    # AveragePool (raised back by vram-onnx-raise).
    "inception_v3": (17, T.TRAINING, {"aux_logits": False, "init_weights": False}),
    "googlenet": (17, T.TRAINING, {"aux_logits": False, "init_weights": False}),
}
# A graph file above this is not committed.
MAX_GRAPH_BYTES = 600 * 1024


def storage_of(t):
    s = t.storage()
    return s.data_ptr(), s.nbytes()


def saved_bytes(model, x, cuda_dropout):
    persistent = set()
    for p in list(model.parameters()) + list(model.buffers()):
        persistent.add(storage_of(p)[0])
    persistent.add(storage_of(x)[0])
    seen = {}

    def pack(t):
        ptr, nbytes = storage_of(t)
        if ptr not in persistent:
            seen[ptr] = max(seen.get(ptr, 0), nbytes)
        return t

    orig = F.dropout
    if cuda_dropout:
        def dropout(input, p=0.5, training=True, inplace=False):
            if not training or p == 0:
                return input
            return torch.native_dropout(input, p, True)[0]
        F.dropout = dropout
    try:
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            out = model(x)
    finally:
        F.dropout = orig
    del out
    return sum(seen.values())


def compact_names(m):
    """Shortens the names of intermediate values and nodes (swin_t's graph has
    ~8000 nodes named like /features/features.5/features.5.5/attn/Concat_32):
    initializers, graph inputs/outputs and restored parameters keep theirs."""
    keep = {t.name for t in m.graph.initializer}
    keep |= {v.name for v in m.graph.input} | {v.name for v in m.graph.output}
    # The eval-mode exporter names a deduplicated parameter by an Identity.
    inits = set(keep)
    keep |= {n.output[0] for n in m.graph.node
             if n.op_type == "Identity" and n.input[0] in inits}
    ren = {}
    for k, n in enumerate(m.graph.node):
        n.name = "n%d" % k
        n.doc_string = ""
        for i, o in enumerate(n.output):
            if o and o not in keep:
                ren[o] = "t%d" % len(ren)
                n.output[i] = ren[o]
    for n in m.graph.node:
        for i, x in enumerate(n.input):
            if x in ren:
                n.input[i] = ren[x]
    del m.graph.value_info[:]


def export(name, model, opset, mode, outdir):
    x = torch.randn(2, 3, 224, 224)
    buf = io.BytesIO()
    torch.onnx.export(model, x, buf, opset_version=opset, training=mode,
                      do_constant_folding=False, input_names=["input"],
                      output_names=["output"],
                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
    m = onnx.load_from_string(buf.getvalue())
    if len(buf.getvalue()) - sum(len(t.raw_data) for t in m.graph.initializer) > MAX_GRAPH_BYTES:
        compact_names(m)
    path = os.path.join(outdir, name + ".onnx")
    data = name + ".onnx.data"
    onnx.save_model(m, path, save_as_external_data=True,
                    all_tensors_to_one_file=True, location=data,
                    size_threshold=0)
    os.remove(os.path.join(outdir, data))
    return path


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    names = sys.argv[2:] or list(MODELS)
    jpath = os.path.join(outdir, "torchvision.json")
    results = {}
    if os.path.exists(jpath):
        with open(jpath) as f:
            results = json.load(f)
    for name in names:
        opset, mode, *rest = MODELS[name]
        kwargs = rest[0] if rest else {}
        torch.manual_seed(0)
        model = getattr(torchvision.models, name)(weights=None, **kwargs)
        entry = {"model": name, "opset": opset,
                 "training_mode": {T.TRAINING: "TRAINING", T.EVAL: "EVAL",
                                   T.PRESERVE: "PRESERVE (eval)"}[mode],
                 "batch": 2, "size": 224,
                 "params": sum(p.numel() for p in model.parameters())}
        try:
            model.train()
            x = torch.randn(2, 3, 224, 224)
            torch.manual_seed(1)
            entry["saved_activation_bytes"] = saved_bytes(model, x, True)
            torch.manual_seed(1)
            entry["saved_activation_bytes_cpu"] = saved_bytes(model, x, False)
        except Exception as e:  # noqa: BLE001
            entry["saved_error"] = repr(e)
        try:
            if mode != T.TRAINING:
                model.eval()
            path = export(name, model, opset, mode, outdir)
            size = os.path.getsize(path)
            entry["onnx"] = os.path.basename(path)
            entry["onnx_bytes"] = size
            if size > MAX_GRAPH_BYTES:
                os.remove(path)
                entry["onnx"] = None
                entry["skipped"] = "graph file is %d bytes" % size
        except Exception as e:  # noqa: BLE001
            entry["onnx"] = None
            entry["export_error"] = repr(e)
        print(json.dumps(entry), flush=True)
        results[name] = entry
        with open(jpath, "w") as f:
            json.dump(results, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
