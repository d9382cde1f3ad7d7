#!/usr/bin/env python3
"""Runs an example on N ranks and checks how it ended: on every rank, or not at all.

    check_ranks.py --ranks N --error REGEX [--ok REGEX | --always-error] -- <command...>

Either the command exits 0 and prints a line matching --ok (a GPU node: the example ran; never
with --always-error, for a run that must be refused everywhere), or it exits 1 (the examples' error exit) and each rank r in 0..N-1 printed its error line,
"rank r: error: " followed by a match of --error. Anything else fails: another exit status
(a signal, a crash, the launcher's own failure), a rank without its error line, a rank whose
error is another one, or signs of a crash in the output. ctest's PASS_REGULAR_EXPRESSION
cannot say this: it ignores the exit status, and one matching line from one rank satisfies it.
"""
import argparse
import re
import subprocess
import sys

CRASH = re.compile(r"Segmentation fault|core dumped|terminate called|exited on signal|"
                   r"\*\*\* Process received signal|CRASHED|AddressSanitizer")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ranks", type=int, required=True)
    p.add_argument("--error", required=True, help="what every rank's error says (after 'rank r: error: ')")
    p.add_argument("--ok", default=r"^OK:", help="the line of a successful run")
    p.add_argument("--always-error", action="store_true", help="exit status 0 is a failure")
    p.add_argument("command", nargs=argparse.REMAINDER)
    a = p.parse_args()
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not command:
        sys.exit("check_ranks.py: no command")
    res = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = res.stdout
    sys.stdout.write(out)
    lines = out.splitlines()
    problems = []
    crash = next((line for line in lines if CRASH.search(line)), None)
    if crash:
        problems.append(f"a crash in the output: {crash}")
    if res.returncode == 0 and a.always_error:
        problems.append("exit status 0: every rank was to refuse with an error")
    elif res.returncode == 0:
        if not any(re.search(a.ok, line) for line in lines):
            problems.append(f"exit status 0 without a line matching {a.ok!r}")
    elif res.returncode != 1:
        problems.append(f"exit status {res.returncode}: neither 0 (ran) nor 1 (the examples' error exit)")
    else:
        for r in range(a.ranks):
            mine = [line for line in lines if line.startswith(f"rank {r}: error: ")]
            if not mine:
                problems.append(f"rank {r} printed no 'rank {r}: error: ' line")
            for line in mine:
                if not re.search(a.error, line[len(f"rank {r}: error: "):]):
                    problems.append(f"rank {r}'s error is not the expected one ({a.error!r}): {line}")
    for problem in problems:
        print(f"check_ranks: FAILED: {problem}")
    if problems:
        return 1
    how = "ran (exit 0)" if res.returncode == 0 else f"ended with the expected error on each of its {a.ranks} ranks"
    print(f"check_ranks: the example {how}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
