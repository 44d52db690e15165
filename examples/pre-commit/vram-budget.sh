#!/usr/bin/env bash
# A pre-commit hook: every staged model file (.onnx, .mlir) must fit its
# memory budget. Set VRAM_BUDGET (default 24GB) and VRAM_ARGS (the step, e.g.
# "--batch=32 --mode=train --optimizer=adam"). Install:
#   ln -s ../../examples/pre-commit/vram-budget.sh .git/hooks/pre-commit
# Exit status: 1 when a model is over budget (vram-opt prints where and
# why) or could not be analysed (a usage error, a file it cannot read: said
# as such, not as over budget).
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
  errors=$("$vram_opt" "$model" --budget="$budget" ${VRAM_ARGS:-} 2>&1 >/dev/null)
  code=$?
  [ -n "$errors" ] && printf '%s\n' "$errors" >&2
  if [ $code -eq 0 ]; then
    continue
  elif [ $code -eq 1 ] && grep -q 'error: peak .* exceeds the budget of' <<<"$errors"; then
    echo "vram-budget: $model exceeds $budget" >&2
  else
    echo "vram-budget: $model could not be analysed (vram-opt exit code $code)" >&2
  fi
  status=1
done
exit $status
