#!/usr/bin/env python3
"""What torch 2's two ONNX exporters write for a model in training mode
(docs/ONNX.md, "Exporting a training graph from PyTorch 2"): the op types
and float initializers of torchvision's ResNet-18 (num_classes=10, [2, 3,
64, 64]), small_models.py's TinyUNet with GroupNorm ([2, 3, 32, 32]) and
BiLstmNet ([2, 12, 8]), exported with torch.onnx.export(dynamo=True) (the
default since torch 2.9) and with dynamo=False,
training=TrainingMode.TRAINING, opset 17. Prints one JSON line per export
into OUT_DIR (default: a temporary directory), whose .onnx files vram-opt
can read (e.g. `vram-opt OUT/resnet18_dynamo.onnx --mode=train`).

  benchmarks/accuracy/truth-env.sh python3 benchmarks/accuracy/onnx_exporters.py [OUT_DIR]

Not part of the product; needs onnx and onnxscript in the truth
environment. Measured 2026-12-07 with torch 2.15.0, onnx 1.23.2,
onnxscript 0.7.2: the dynamo export of ResNet-18 has no
BatchNormalization node (vram-opt --mode=train counts 11,172,042
parameters, the model has 11,181,642), the TorchScript one has 20 (exact);
the dynamo TinyUNet's GroupNorm constants read as parameters (2,242 for
2,234); BiLstmNet is exact from both (7,018 parameters, 121,984 bytes
saved, torch 2.15's).
"""
import collections
import json
import os
import sys
import tempfile

import onnx
import torch
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from small_models import BiLstmNet, TinyUNet  # noqa: E402

MODELS = {
    "resnet18": (lambda: torchvision.models.resnet18(num_classes=10), (2, 3, 64, 64)),
    "unet_gn": (lambda: TinyUNet(group_norm=True), (2, 3, 32, 32)),
    "lstm_bidir": (BiLstmNet, (2, 12, 8)),
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()
    for name, (ctor, shape) in MODELS.items():
        for dynamo in (True, False):
            torch.manual_seed(0)
            model = ctor().train()
            x = torch.randn(*shape)
            path = os.path.join(out, f"{name}_{'dynamo' if dynamo else 'torchscript'}.onnx")
            if dynamo:
                torch.onnx.export(model, (x,), dynamo=True).save(path)
            else:
                torch.onnx.export(model, (x,), path, dynamo=False, opset_version=17,
                                  training=torch.onnx.TrainingMode.TRAINING,
                                  do_constant_folding=False)
            m = onnx.load(path, load_external_data=False)
            floats = [i.name for i in m.graph.initializer if i.data_type == 1]
            print(json.dumps({
                "file": path, "torch": torch.__version__, "onnx": onnx.__version__,
                "params": sum(p.numel() for p in model.parameters()),
                "ops": dict(collections.Counter(n.op_type for n in m.graph.node)),
                "float_initializers": floats}))


if __name__ == "__main__":
    main()
