#!/usr/bin/env python3
"""Runs an example and compares its standard output with the committed one.

    check_output.py [--property NAME]... <expected.txt> -- <command...>
    check_output.py --update <expected.txt> -- <command...>

The command must exit 0, and its output must equal examples/expected/<name>.txt: the same
text, the same integers, and decimal numbers (losses, parameters) within 2e-5 + 1e-5 * |x|,
the bound the examples check themselves against (MPI may add floats in another order
elsewhere). On a difference it prints a unified diff. Each --property NAME also checks a
property of the output that does not come from the expected file (properties.py: recomputed
from the problem itself), so that an expected file cannot hold a wrong answer unnoticed.

A test never writes an expected file. After a deliberate change of an example, rewrite them
by hand, from the programs, with

    examples/update-expected <build> ['^example\\.']

(it runs each example test's command with --update) and review the diff (git diff
examples/expected) before committing.
"""
import difflib
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from properties import CHECKS  # noqa: E402

NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def tokens(text):
    """Text between numbers (white space runs collapsed) and the numbers, in order."""
    out, pos = [], 0
    for m in NUMBER.finditer(text):
        out.append(("text", " ".join(text[pos:m.start()].split())))
        out.append(("num", m.group(0)))
        pos = m.end()
    out.append(("text", " ".join(text[pos:].split())))
    return out


def same(expected, actual):
    a, b = tokens(expected), tokens(actual)
    if len(a) != len(b):
        return False
    for (ka, va), (kb, vb) in zip(a, b):
        if ka != kb:
            return False
        if ka == "text" or not re.search(r"[.eE]", va + vb):
            if va != vb:
                return False
        elif abs(float(va) - float(vb)) > 2e-5 + 1e-5 * abs(float(va)):
            return False
    return True


def main():
    args = sys.argv[1:]
    update, properties = False, []
    while args and args[0] in ("--update", "--property"):
        if args[0] == "--update":
            update, args = True, args[1:]
        else:
            properties, args = properties + [args[1]], args[2:]
    if len(args) < 3 or args[1] != "--":
        sys.exit(__doc__)
    expected_path, command = args[0], args[2:]
    unknown = [p for p in properties if p not in CHECKS]
    if unknown:
        sys.exit(f"check_output: unknown property {unknown[0]} (properties.py: {', '.join(CHECKS)})")
    res = subprocess.run(command, stdout=subprocess.PIPE, text=True)
    actual = res.stdout
    sys.stdout.write(actual)
    if res.returncode != 0:
        print(f"check_output: the example exited with {res.returncode}")
        return 1
    if update:
        with open(expected_path, "w", encoding="utf-8") as f:
            f.write(actual)
        print(f"check_output: wrote {expected_path}")
        return 0
    if os.environ.get("DEVMESH_UPDATE_EXPECTED"):
        print("check_output: DEVMESH_UPDATE_EXPECTED is not read any more (a test never writes an expected "
              "file): examples/update-expected <build> rewrites them")
    failed = False
    for name in properties:
        problems = CHECKS[name](actual, command)
        for problem in problems:
            print(f"check_output: property {name}: {problem}")
        if not problems:
            print(f"check_output: property {name} holds")
        failed = failed or bool(problems)
    try:
        expected = open(expected_path, encoding="utf-8").read()
    except FileNotFoundError:
        print(f"check_output: {expected_path} does not exist (examples/update-expected <build> writes it)")
        return 1
    if same(expected, actual):
        print(f"check_output: the output matches {os.path.basename(expected_path)}")
        return 1 if failed else 0
    sys.stdout.writelines(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                               expected_path, "this run"))
    print(f"check_output: the output differs from {expected_path} (see the docstring of {sys.argv[0]})")
    return 1


if __name__ == "__main__":
    sys.exit(main())
