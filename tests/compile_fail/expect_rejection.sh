#!/usr/bin/env bash
# expect_rejection.sh REASON COMMAND...: a control of the compile-fail harness. COMMAND (the
# harness, run_case.sh, on a control file) must reject the file, exit status 1, for the
# reason the control is about: its "COMPILE-FAIL HARNESS: <reason>" line must match the
# extended regex REASON. A control rejected for another reason (a typo in it, a header it
# cannot find, an expectation it does not meet) proves nothing about the rule it stands for.
set -u
reason_re=$1
shift
out=$("$@" 2>&1)
rc=$?
reason=$(sed -n 's/^COMPILE-FAIL HARNESS: //p' <<<"$out" | tail -n1)
if [[ $rc -eq 1 && -n $reason ]] && grep -E -q -e "$reason_re" <<<"$reason"; then
  echo "ok: the harness rejected the control: $reason"
  exit 0
fi
printf '%s\n' "---- the harness's output (exit $rc) ----" "$out" "----"
if [[ $rc -eq 0 ]]; then
  echo "expect_rejection.sh: FAILED: the harness accepted the control (expected: $reason_re)"
elif [[ -z $reason ]]; then
  echo "expect_rejection.sh: FAILED: the harness exited $rc without a COMPILE-FAIL HARNESS reason"
else
  echo "expect_rejection.sh: FAILED: rejected for another reason than the control's ($reason_re): $reason"
fi
exit 1
