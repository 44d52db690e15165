"""Bytes PyTorch's CPU GELU keeps after its first call on a shape (torch 2.x).

The persistent bytes of the GELU models' whole steps (gpt_neox.test,
bert.test) measure tens of KB more than their tensors. This counts, with
the preloaded allocation counter (memhook/memhook.c), the live bytes a
fresh process keeps after F.gelu's forward (and then backward) on each
shape of the small encoders' configs, [2, 256, 1024] (the MLP) and
[2, 256, 256] (the masked-LM head), and again on the same shapes (0: a
cache per shape):

    benchmarks/accuracy/truth-env.sh python3 benchmarks/accuracy/gelu_cache.py

prints one line per call: with backward, the shape, the bytes kept.
"""
import ctypes
import os
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent

if "VRAM_MEMHOOK" not in os.environ:
    lib = pathlib.Path(tempfile.mkdtemp()) / "memhook.so"
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", str(lib),
                    str(HERE / "memhook" / "memhook.c"), "-ldl", "-lpthread"], check=True)
    env = dict(os.environ, LD_PRELOAD=str(lib), VRAM_MEMHOOK="1")
    sys.exit(subprocess.run([sys.executable, __file__], env=env).returncode)

import torch
import torch.nn.functional as F

torch.set_num_threads(1)
hook = ctypes.CDLL(None)
hook.vram_live.restype = ctypes.c_longlong


def run(shape, grad):
    x = torch.randn(*shape, requires_grad=grad)
    y = F.gelu(x)
    if grad:
        y.sum().backward()
    del x, y


for grad in (False, True):
    for shape in ((2, 256, 1024), (2, 256, 256), (2, 256, 1024), (2, 256, 256)):
        before = hook.vram_live()
        run(shape, grad)
        print(grad, shape, hook.vram_live() - before)
