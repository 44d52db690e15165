#!/usr/bin/python3
"""Generates small ONNX fixtures and their measurements (issue 22's ops):
activations.onnx / activations.json (test/Import/ONNX/activations.test) and
unet.onnx / unet.json and unet_gn.onnx / unet_gn.json
(test/Import/ONNX/unet.test), audio.onnx / audio.json
(test/Import/ONNX/conv1d.test).

Not part of the product: it only (re)creates test inputs. Needs Debian 12's
python3-torch (1.13) and python3-onnx.

    /usr/bin/python3 generate_small.py [activations|audio|unet|unet_gn ...]

ActNet is benchmarks/accuracy/export_pt2.py's model of the same name
without its in-place flags (ONNX has no in-place ops): six 3x3 convolutions,
each followed by LeakyReLU(0.2), ELU, SELU, CELU(0.5), Mish, Softplus(beta 1),
then a spatial mean and a Linear. Exported in training mode at opset 17,
where torch.onnx writes Mish as x * Tanh(Softplus(x)) (an ONNX operator only
from opset 18) and CELU as the Celu operator. The weights are external data
and the data file is deleted: the graph carries dims only.

TinyUNet is export_pt2.py's two-level UNet (ConvTranspose2d and a nearest
interpolate on the way up, the skip connection's concatenation), as unet_gn
with its GroupNorm, which torch.onnx writes as Reshape,
InstanceNormalization, Reshape, Mul, Add (vram-onnx-raise rebuilds it), and
as unet with a BatchNorm2d there.

TinyAudioNet is export_pt2.py's model of the same name: Conv1d (strided,
then grouped and padded), GroupNorm over [N, C, L], GELU, a mean over time,
a Linear. F.interpolate(scale_factor=2.0) is a Resize with constant scales.

The recurrent modules (gru_stack, rnn_stack, gru_bidir, rnn_relu_bidir,
lstm_bidir, lstm_bidir_stack, lstm_nobias) are export_pt2.py's (GruNet and RnnNet without
dropout, which torch.onnx cannot export while training) with its inputs;
test/Import/ONNX/recurrent.test.

Each JSON file: the parameter count and the bytes autograd keeps for
backward after the forward pass (batch 2, counted as
generate_torchvision.py counts them: unique storages packed by
saved_tensors_hooks, without parameters, buffers and the input); for the
recurrent modules also the SGD step peak above the baseline (step_peak).
"""
import io
import json
import os
import sys

import onnx
import torch

from generate_torchvision import saved_bytes

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "benchmarks", "accuracy"))
import measure  # noqa: E402
from small_models import (ActNet, BiGruNoBiasNet, BiLstmNet,  # noqa: E402
                          BiRnnReluNet, GruNet, LstmNoBiasNet, RnnNet,
                          TinyAudioNet, TinyUNet)

HERE = os.path.dirname(os.path.abspath(__file__))


MODELS = {"activations": (lambda: ActNet(inplace=False, softplus_beta=1.0),
                          (2, 3, 16, 16)),
          "audio": (TinyAudioNet, (2, 1, 1600)),
          "unet": (lambda: TinyUNet(group_norm=False), (2, 3, 32, 32)),
          "unet_gn": (lambda: TinyUNet(group_norm=True), (2, 3, 32, 32)),
          # The recurrent modules (torch.onnx cannot export dropout between
          # layers while training: GruNet's and RnnNet's without it). Time
          # first ones have their batch in dimension 1.
          "gru_stack": (lambda: GruNet(dropout=0.0), (2, 12, 16)),
          "rnn_stack": (lambda: RnnNet(dropout=0.0), (2, 12, 16)),
          "gru_bidir": (BiGruNoBiasNet, (12, 2, 8), 1),
          "rnn_relu_bidir": (BiRnnReluNet, (12, 2, 8), 1),
          "lstm_bidir": (BiLstmNet, (2, 12, 8)),
          "lstm_bidir_stack": (lambda: BiLstmNet(num_layers=2), (2, 12, 8)),
          "lstm_nobias": (LstmNoBiasNet, (12, 2, 16), 1)}


# The recurrent models' SGD step peak on mse against a [2, 10] target, as
# benchmarks/accuracy/export_pt2.py measures torch 2's.
RECURRENT = {"gru_stack", "rnn_stack", "gru_bidir", "rnn_relu_bidir",
             "lstm_bidir", "lstm_bidir_stack", "lstm_nobias"}


def step_peak(model, x):
    """The peak of the CPU profiler's [memory] events over one steady-state
    SGD step above the live bytes after its zero_grad(set_to_none=True)
    (measure.py's cpu_sgd_step_peak_above_baseline)."""
    from torch.profiler import profile, ProfilerActivity
    target = torch.randn(2, 10)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    def one():
        opt.zero_grad(set_to_none=True)
        torch.nn.functional.mse_loss(model(x), target).backward()
        opt.step()

    one()
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        one()
    return measure.peak_from_events(measure.memory_events(prof))[0]


def export(name):
    ctor, shape, batch_dim = (MODELS[name] + (0,))[:3]
    torch.manual_seed(0)
    model = ctor().train()
    x = torch.randn(*shape)
    entry = {"model": name, "opset": 17, "training_mode": "TRAINING",
             "shape": list(x.shape),
             "params": sum(p.numel() for p in model.parameters()),
             "saved_activation_bytes": saved_bytes(model, x, False),
             "measured_with": "torch %s cpu (Debian python3-torch)" % torch.__version__}
    if name in RECURRENT:
        entry["cpu_sgd_step_peak_above_baseline"] = step_peak(model, x)
    buf = io.BytesIO()
    torch.onnx.export(model, x, buf, opset_version=17,
                      training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False, input_names=["input"],
                      output_names=["output"],
                      dynamic_axes={"input": {batch_dim: "batch"}, "output": {0: "batch"}})
    m = onnx.load_from_string(buf.getvalue())
    path = os.path.join(HERE, name + ".onnx")
    onnx.save_model(m, path, save_as_external_data=True,
                    all_tensors_to_one_file=True, location=name + ".onnx.data",
                    size_threshold=0)
    os.remove(os.path.join(HERE, name + ".onnx.data"))
    entry["ops"] = sorted({n.op_type for n in m.graph.node})
    with open(os.path.join(HERE, name + ".json"), "w") as f:
        json.dump(entry, f, indent=1, sort_keys=True)
        f.write("\n")
    print(json.dumps(entry))


def main():
    for name in sys.argv[1:] or MODELS:
        export(name)


if __name__ == "__main__":
    main()
