#!/usr/bin/env bash
# A pre-commit hook: every staged model file (.onnx, .mlir) must fit its
# memory budget. Set VRAM_BUDGET (default 24GB) and VRAM_ARGS (the step, e.g.
# "--batch=32 --mode=train --optimizer=adam"). Install:
#   ln -s ../../examples/pre-commit/vram-budget.sh .git/hooks/pre-commit
# Exit status: 1 when a model is over budget (vram-opt prints where and why).
set -u
budget=${VRAM_BUDGET:-24GB}
vram_opt=${VRAM_OPT:-vram-opt}
status=0
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  mapfile -t files < <(git diff --cached --name-only --diff-filter=ACM -- '*.onnx' '*.mlir')
fi
for model in "${files[@]}"; do
  [ -f "$model" ] || continue
  # shellcheck disable=SC2086
  if ! "$vram_opt" "$model" --budget="$budget" ${VRAM_ARGS:-}; then
    echo "vram-budget: $model exceeds $budget" >&2
    status=1
  fi
done
exit $status
