#!/usr/bin/env python3
"""docs.snippets_selftest: check_snippets.py must reject every mistake in tests/docs/selftest/
(and accept its controls), so that a passing docs.snippets means something.

Usage: selftest.py <the arguments of check_snippets.py, without --docs>
"""
import os
import re
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
EXPECTED = [  # one line each in the checker's output
    r"^FAILED: README\.md:\d+: does not compile as written",
    r"^FAILED: README\.md:\d+: the program's output differs from the <!-- output --> block",
    r"^FAILED: README\.md:\d+: '.*' exited with 3",
    r"^FAILED: docs/bad\.md:\d+: a C\+\+ block is written ```c\+\+",
    r"^FAILED: docs/bad\.md:\d+: unknown info string 'cpp frag'",
    r"^FAILED: docs/bad\.md:\d+: marked fragment, but it is a whole program",
    r"^FAILED: docs/bad\.md:\d+: marked compile-error, but it compiles",
    r"^FAILED: docs/bad\.md:\d+: marked compile-error, but its first error is not a devmesh: diagnostic: "
    r".*no_such_member",
    r"^FAILED: docs/bad\.md:\d+: marked compile-error, but an error that is not a devmesh: diagnostic follows it: "
    r".*no_such_member",
    r"^ok: docs/bad\.md:\d+ \(fails to compile with devmesh's diagnostics only, as intended\)$",
    r"^FAILED: docs/bad\.md:\d+: an <!-- output --> block must come right after",
    r"^FAILED: docs: 3 of 11 C\+\+ blocks are fragments",
    r"^ok: README\.md:\d+$",
    r"^ok: docs/bad\.md:\d+ \(fragment, after the prelude\)$",
    r"^11 C\+\+ blocks \(3 fragments, 2 programs built\); 13 failure\(s\)$",
]
# Both fragments that compile as written (the whole one and the program) are caught.
TWICE = r"^FAILED: docs/bad\.md:\d+: marked fragment, but it compiles as written"

res = subprocess.run([sys.executable, os.path.join(here, "check_snippets.py"),
                      "--docs", os.path.join(here, "selftest")] + sys.argv[1:],
                     capture_output=True, text=True)
out = res.stdout + res.stderr
print(out)
lines = out.splitlines()
missing = [e for e in EXPECTED if not any(re.search(e, l) for l in lines)]
if len([l for l in lines if re.search(TWICE, l)]) != 2:
    missing.append(TWICE + " (twice)")
if res.returncode == 0:
    missing.append("a non-zero exit code")
for m in missing:
    print(f"selftest: the checker did not report: {m}")
print("selftest: " + ("FAILED" if missing else "every mistake was caught, every control passed"))
sys.exit(1 if missing else 0)
