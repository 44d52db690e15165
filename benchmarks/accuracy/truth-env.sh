#!/usr/bin/env bash
# The torch 2.x measurement environment (issue 21): a virtual environment
# .venv-truth with PyPI's current torch and torchvision, for fixtures and
# ground truth only (the product and the tests never need it). PyPI's torch
# is the CUDA build: it runs on the CPU, but loads its CUDA libraries at
# import. Instead of the gigabytes of nvidia-* wheels, the toolkit at
# /usr/local/cuda provides most of them; the four it lacks come from PyPI.
#
#   benchmarks/accuracy/truth-env.sh python3 benchmarks/accuracy/measure.py --validate
#
# runs a command inside that environment, creating it first if needed.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VENV=${VENV_TRUTH:-$ROOT/.venv-truth}
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --no-deps torch==2.15.0 torchvision==0.29.2 nvidia-cufile==1.20.0.107 \
    nvidia-cusparselt-cu13==0.8.1 nvidia-nvshmem-cu13==3.7.2 nvidia-nccl-cu13==2.30.7
  "$VENV/bin/pip" install -q filelock typing-extensions sympy networkx jinja2 \
    fsspec numpy pillow
fi
# transformers and peft for hf_params.py / hf_truth.py. transformers 5.25
# declares kernels>=0.19.1, which this machine's PyPI lacks; it imports and
# runs without it.
if ! "$VENV/bin/python" -c 'import transformers, peft' 2>/dev/null; then
  "$VENV/bin/pip" install -q --no-deps transformers==5.25.0 peft==0.21.2 accelerate==1.16.0
  "$VENV/bin/pip" install -q huggingface-hub packaging pyyaml regex safetensors \
    tokenizers tqdm typer psutil
fi
# bitsandbytes for measure.py's Lion and 8-bit AdamW rows (its CPU backend).
if ! "$VENV/bin/python" -c 'import bitsandbytes' 2>/dev/null; then
  "$VENV/bin/pip" install -q --no-deps bitsandbytes==0.50.2
fi
# DeepSpeed for zero.py and peers_zero.py (its sdist, no compiled ops: the
# CPU accelerator builds its shm op at first use).
if ! "$VENV/bin/python" -c 'import deepspeed' 2>/dev/null; then
  "$VENV/bin/pip" install -q --no-deps deepspeed==0.19.8 hjson ninja py-cpuinfo \
    pydantic pydantic-core annotated-types typing-inspection msgpack einops
fi
# liger-kernel for liger.py (its Triton kernels in Triton's CPU interpreter).
if ! "$VENV/bin/python" -c 'import liger_kernel, triton' 2>/dev/null; then
  "$VENV/bin/pip" install -q --no-deps liger-kernel==0.8.5 triton==3.9.0
fi
SP=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
export LD_LIBRARY_PATH=$SP/nvidia/nccl/lib:$SP/nvidia/cusparselt/lib:$SP/nvidia/cu13/lib:$SP/nvidia/nvshmem/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$VENV/bin:$PATH
exec "$@"
