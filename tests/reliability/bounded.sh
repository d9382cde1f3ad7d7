#!/usr/bin/env bash
# bounded.sh <seconds> ok <command...>: runs the command under `timeout` and checks how it
# ended: it must exit 0 (or 77 with a SKIPPED line: ctest's SKIP_RETURN_CODE).
# Always a failure: the timeout firing (exit 124, or 137 after the KILL that follows: a
# hang), or a sanitizer report in the output. (There is no "any failure will do"
# expectation: a scenario where a rank fails asserts, on every rank, what it threw.)
set -u
seconds=$1 expect=$2
shift 2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$(date +%s%N)
timeout --kill-after=5 "$seconds" "$@" > >(tee "$log") 2> >(tee -a "$log" >&2)
rc=$?
wait
ms=$(( ($(date +%s%N) - start) / 1000000 ))
elapsed="$((ms / 1000)).$(printf %03d $((ms % 1000)))"
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
  echo "bounded.sh: FAILED: still running after ${seconds} s (a hang): $*" >&2
  exit 1
fi
if grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|WARNING: ThreadSanitizer' "$log"; then
  echo "bounded.sh: FAILED: a sanitizer reported an error (see above)" >&2
  exit 1
fi
if [ "$expect" = ok ] && [ "$rc" -eq 77 ] && grep -q '^SKIPPED' "$log"; then
  exit 77  # the program said why (ctest SKIP_RETURN_CODE)
fi
case "$expect" in
  ok)
    if [ "$rc" -ne 0 ]; then
      echo "bounded.sh: FAILED: exit status $rc after ${elapsed} s" >&2
      exit 1
    fi ;;
  *) echo "bounded.sh: unknown expectation '$expect' (only ok)" >&2; exit 2 ;;
esac
echo "bounded.sh: ended as expected ($expect, exit status $rc) in ${elapsed} s (bound ${seconds} s)"
