#!/bin/bash
# The one script to run on a machine with an NVIDIA GPU (issue 13): builds
# vram-opt, runs the lit suite (the GPU tests are those with REQUIRES:
# cuda-device), the --validate=gpu cases, benchmarks/accuracy/pytorch_gpu.py
# and llm_gpu.py (Hugging Face LLMs: bf16, LoRA, checkpointing, generation),
# and writes everything measured to
# benchmarks/accuracy/results/<date>-<device>.md.
#
#   scripts/gpu-check.sh [BUILD_DIR]        (default: build-gpu)
#   VRAM_OPT=.gpu-bundle/vram-opt scripts/gpu-check.sh
#
# Needs the CUDA driver (libcuda.so.1) and toolkit (libdevice), LLVM/MLIR 22
# to build (or a prebuilt VRAM_OPT: scripts/gpu-bundle.sh makes one that
# needs no LLVM, for the lent GPU machine, which has none; lit is then not
# run, the GPU cases below are), and for the PyTorch comparison a CUDA build
# of torch (torchvision; transformers for GPT-2 and LLaMA). PYTORCH_ONLY
# limits pytorch_gpu.py to some configuration ids (its --only). Each stage's
# failure is recorded in the results file and the script goes on; its exit
# code is 1 if any stage failed. CASE_TIMEOUT (seconds, default 240) bounds
# each --validate=gpu case; LLM_DEADLINE (default 300) stops llm_gpu.py
# starting cases, LLM_ONLY limits it to some case ids.
set -u
cd "$(dirname "$0")/.."
BUILD=${1:-build-gpu}
PY=${PYTHON:-python3}
status=0

if [ -n "${VRAM_OPT:-}" ]; then
  VRAM=$(realpath "$VRAM_OPT")
else
  if [ ! -f "$BUILD/build.ninja" ]; then
    cmake -G Ninja -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 || exit 1
  fi
  ninja -C "$BUILD" vram-opt vram-unittests || exit 1
  VRAM="$BUILD/bin/vram-opt"
fi

devices=$("$VRAM" --list-cuda-devices 2>&1)
if [ $? -ne 0 ]; then
  echo "$devices"
  exit 1
fi
name=$(echo "$devices" | head -1 | sed -e 's/^0: //' -e 's/ (.*//' | tr ' A-Z' '-a-z')
out="benchmarks/accuracy/results/$(date -u +%Y-%m-%d)-${name}.md"
mkdir -p benchmarks/accuracy/results
{
  echo "# GPU check: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "Produced by scripts/gpu-check.sh at $(git rev-parse --short HEAD)."
  echo
  echo '```'
  echo "$devices"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1
  "$PY" -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda)' 2>&1
  echo '```'
} > "$out"

section() { printf '\n## %s\n\n' "$1" >> "$out"; }

section "lit (the whole suite; GPU tests: REQUIRES: cuda-device)"
if [ -n "${VRAM_OPT:-}" ] || [ ! -x /usr/lib/llvm-22/bin/lit ]; then
  echo "Not run: a prebuilt vram-opt, no LLVM 22 tools (lit, FileCheck) here." >> "$out"
else
  lit_log=$(mktemp)
  /usr/lib/llvm-22/bin/lit -sv "$BUILD/test" > "$lit_log" 2>&1 || status=1
  {
    echo '```'
    grep -E '^(PASS|FAIL|XFAIL|XPASS|UNSUPPORTED|UNRESOLVED): .*(cuda|gpu|GPU)' "$lit_log"
    grep -E '^(  )?(Passed|Failed|Unsupported|Expectedly Failed|Unresolved|Total)' "$lit_log" | tail -8
    grep -E '^FAIL' "$lit_log"
    echo '```'
  } >> "$out"
fi

section "vram-opt --validate=gpu (generated kernels, one step)"
echo '| case | allocated pred / measured | reserved pred / measured | device pred / measured (NVML) | step ms (events) | GFLOP/s | loss | exit |' >> "$out"
echo '|---|---|---|---|---:|---:|---:|---:|' >> "$out"
validate() {
  local label=$1; shift
  local json rc
  json=$(mktemp)
  timeout "${CASE_TIMEOUT:-240}" "$VRAM" "$@" --validate=gpu --format=json > "$json" 2> "$json.err"
  rc=$?
  "$PY" - "$label" "$rc" "$json" "$json.err" >> "$out" <<'PYEOF'
import json, sys
label, rc, path, err = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
try:
    v = json.load(open(path))["validation"]
except Exception:
    lines = open(err).read().strip().splitlines()
    msg = ([l for l in lines if "error:" in l] or lines or ["no output"])[0]
    print(f"| {label} | not measured: {msg} | | | | | | {rc} |")
    sys.exit(0)
f = lambda a, b: f"{v[a]:,} / {v[b]:,}" if v.get(b) is not None else f"{v[a]:,} / n/a"
print(f"| {label} | {f('predicted_allocated_bytes', 'measured_allocated_bytes')} | "
      f"{f('predicted_reserved_bytes', 'measured_reserved_bytes')} | "
      f"{f('predicted_device_bytes', 'measured_device_bytes')} | {v['step_time_ms']:.3f} | "
      f"{v['achieved_flops_per_second'] / 1e9:.2f} | {v['loss']} | {rc} |")
PYEOF
  if [ "$rc" -ne 0 ]; then
    status=1
    { echo "== $label (exit $rc)"; head -40 "$json.err"; } >> "$out.log"
  fi
}
validate "mlp, SGD" test/Execution/Inputs/mlp.mlir --mode=train --optimizer=sgd
validate "mlp, Adam" test/Execution/Inputs/mlp.mlir --mode=train --optimizer=adam
validate "cnn, SGD" test/Execution/Inputs/cnn.mlir --mode=train --optimizer=sgd
validate "transformer block, SGD" test/Execution/Inputs/transformer.mlir --mode=train --optimizer=sgd
validate "tiny_cnn b2, SGD" --zoo=tiny_cnn --batch=2 --mode=train --optimizer=sgd
validate "resnet18 b2 32 px, SGD" --zoo=resnet18 --batch=2 --image-size=32 --mode=train --optimizer=sgd
validate "resnet18 b2 224 px, SGD" --zoo=resnet18 --batch=2 --mode=train --optimizer=sgd
validate "resnet18 b2 224 px, Adam" --zoo=resnet18 --batch=2 --mode=train --optimizer=adam
validate "gpt_mini b1 t16, SGD" --zoo=gpt_mini --batch=1 --seq=16 --mode=train --optimizer=sgd
# Every gradient and updated parameter against PyTorch (the references of
# numerics-mlp, -cnn and -transformer), copied back by --dump: what
# validate-gpu.test checks, for machines where lit cannot run.
section "numerics against PyTorch (--validate=gpu --dump, compare-npy: relative error <= 1e-4)"
for run in "mlp sgd 0.1" "mlp adam 0.01" "cnn sgd 0.1" "cnn adam 0.01" "transformer sgd 0.1" "transformer adam 0.01"; do
  # shellcheck disable=SC2086
  set -- $run
  inputs=test/Execution/Inputs
  data=$(for f in "$inputs/$1"/*.npy; do printf '%s=%s,' "$(basename "$f" .npy)" "$f"; done)
  dump=$(mktemp -d)
  timeout "${CASE_TIMEOUT:-240}" "$VRAM" "$inputs/$1.mlir" --mode=train --optimizer="$2" --lr="$3" \
    --validate=gpu --input-data="${data%,}" --dump="$dump" > "$dump.out" 2>&1
  rc=$?
  cmp=$("$PY" test/Execution/compare-npy.py "$inputs/$1-$2" "$dump" 2>&1)
  crc=$?
  [ "$rc" -eq 0 ] && [ "$crc" -eq 0 ] || status=1
  {
    echo "- \`$1 $2\`: vram-opt exit $rc, compare-npy exit $crc ($(echo "$cmp" | grep -c '^ok') ok)"
    echo "$cmp" | grep -v '^ok' | sed 's/^/  - /'
    [ "$rc" -eq 0 ] || { grep -m1 'error:' "$dump.out" || tail -1 "$dump.out"; } | sed 's/^/  - /'
  } >> "$out"
done

# The CPU's losses for the same steps (the GPU's must agree within fp
# tolerance).
section "the same steps' losses on the CPU (--validate=cpu)"
for args in "test/Execution/Inputs/mlp.mlir --optimizer=sgd" "test/Execution/Inputs/cnn.mlir --optimizer=sgd" \
            "test/Execution/Inputs/transformer.mlir --optimizer=sgd" "--zoo=tiny_cnn --batch=2 --optimizer=sgd" \
            "--zoo=resnet18 --batch=2 --image-size=32 --optimizer=sgd"; do
  # shellcheck disable=SC2086
  loss=$("$VRAM" $args --mode=train --validate=cpu --format=json 2>&1 | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["validation"]["loss"])' 2>&1)
  echo "- \`$args\`: $loss" >> "$out"
done

section "PyTorch on this GPU against vram-opt (benchmarks/accuracy/pytorch_gpu.py)"
# shellcheck disable=SC2086
"$PY" benchmarks/accuracy/pytorch_gpu.py --vram-opt "$VRAM" ${PYTORCH_ONLY:+--only $PYTORCH_ONLY} >> "$out" 2>> "$out.log" || status=1
echo >> "$out"
echo "(per-configuration log: $(basename "$out").log)" >> "$out"

# Published LLM configs (Hugging Face, bf16, LoRA, checkpointing, eager and
# sdpa attention, generation): test/Analysis/h200-llm.test holds vram-opt
# to the H200's rows.
section "Language models (benchmarks/accuracy/llm_gpu.py)"
"$PY" benchmarks/accuracy/llm_gpu.py -o "${out%.md}-llm.json" --deadline "${LLM_DEADLINE:-300}" ${LLM_ONLY:+--only $LLM_ONLY} 2>> "$out.log" || status=1
echo "rows: $(basename "${out%.md}")-llm.json (vram-opt's flags in each row's args)" >> "$out"

echo "results: $out"
exit $status
