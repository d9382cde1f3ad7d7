#!/usr/bin/env bash
# expect_no_gpu.sh <gpu_check> [launcher...]: on a machine without a usable GPU, gpu_check
# (run directly, or under the launcher, e.g. mpirun -np 2) must stop promptly with the line
# "gpu-check: no GPU: <CUDA's error>", the summary "0 passed, 1 failed" and exit code 2: no
# crash, no hang. Skipped (exit 77) where a GPU is visible: scripts/gpu-check is for those.
set -u
exe=$1
shift
if "$exe" --gpus >/dev/null 2>&1; then
  echo "expect_no_gpu.sh: a GPU is visible here; run scripts/gpu-check instead"
  exit 77
fi
out=$(timeout --kill-after=5 60 "$@" "$exe" 2>&1)
rc=$?
printf '%s\n' "$out"
fail() {
  echo "expect_no_gpu.sh: FAILED: $*" >&2
  exit 1
}
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then fail "still running after 60 s"; fi
[ "$rc" -eq 2 ] || fail "exit code $rc, expected 2"
grep -q '^gpu-check: no GPU: ' <<<"$out" || fail "no 'gpu-check: no GPU: ' line"
grep -qx '0 passed, 1 failed' <<<"$out" || fail "no '0 passed, 1 failed' summary line"
[ "$(grep -c '^gpu-check: no GPU: ' <<<"$out")" -eq 1 ] || fail "the no-GPU line must be printed once (by rank 0)"
echo "expect_no_gpu.sh: ok"
