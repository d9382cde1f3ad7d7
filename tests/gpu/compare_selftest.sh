#!/usr/bin/env bash
# compare_selftest.sh <gpu_check> <name> <example> <launcher...>: checks gpu-check's example
# comparison (CPU backend vs --backend nccl) on the example's real output, without a GPU:
# the output against itself with the backend's name changed and the last digits of numbers
# perturbed within the tolerance must pass; a number changed beyond it, a changed word and
# a missing OK: line must fail.
set -u
exe=$1 name=$2 example=$3
shift 3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
timeout --kill-after=5 90 "$@" "$example" >"$dir/cpu.txt" || { echo "the example failed"; cat "$dir/cpu.txt"; exit 1; }
grep -q '^OK:' "$dir/cpu.txt" || { echo "the example printed no OK: line"; exit 1; }
# What an NCCL run prints: the backend's name in the mesh line, floats rounded differently.
sed -e 's/device_mesh(mpi,/device_mesh(nccl,/' \
    -e 's/\([0-9]\.[0-9]\{5\}\)[0-9]\+/\19/g' "$dir/cpu.txt" >"$dir/nccl_close.txt"
# A loss or parameter difference beyond the tolerance: the first "0.<digits>" gets 0.01 more.
awk '!done && match($0, /0\.[0-9][0-9][0-9]+/) { v = substr($0, RSTART, RLENGTH); $0 = substr($0, 1, RSTART - 1) sprintf("%.7f", v + 0.01) substr($0, RSTART + RLENGTH); done = 1 } { print }' \
  "$dir/cpu.txt" >"$dir/nccl_far.txt"
sed -e '0,/rank/s/rank/RANK/' "$dir/cpu.txt" >"$dir/nccl_word.txt"
grep -v '^OK:' "$dir/cpu.txt" >"$dir/nccl_no_ok.txt"
cmp -s "$dir/cpu.txt" "$dir/nccl_far.txt" && { echo "could not perturb a number"; exit 1; }
status=0
expect() {
  local want=$1 file=$2
  out=$("$exe" --compare "$name" "$dir/cpu.txt" "$dir/$file")
  rc=$?
  echo "$file: $out" | head -1
  if [ "$want" = pass ] && [ "$rc" -ne 0 ]; then echo "  expected PASS"; status=1; fi
  if [ "$want" = fail ] && [ "$rc" -eq 0 ]; then echo "  expected FAIL"; status=1; fi
}
expect pass cpu.txt
expect pass nccl_close.txt
expect fail nccl_far.txt
expect fail nccl_word.txt
expect fail nccl_no_ok.txt
exit $status
