#!/usr/bin/env python3
"""Runs an example and compares its standard output with the committed one.

    check_output.py <expected.txt> -- <command...>

The command must exit 0, and its output must equal examples/expected/<name>.txt: the same
text, the same integers, and decimal numbers (losses, parameters) within 2e-5 + 1e-5 * |x|,
the bound the examples check themselves against (MPI may add floats in another order
elsewhere). On a difference it prints a unified diff. Nothing in the expected files is typed
by hand: after a deliberate change of an example, regenerate them from the programs with

    DEVMESH_UPDATE_EXPECTED=1 ctest --test-dir <build> -R '^example\\.'

and review the diff (git diff examples/expected) before committing.
"""
import difflib
import os
import re
import subprocess
import sys

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
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit(__doc__)
    expected_path, command = sys.argv[1], sys.argv[3:]
    res = subprocess.run(command, stdout=subprocess.PIPE, text=True)
    actual = res.stdout
    sys.stdout.write(actual)
    if res.returncode != 0:
        print(f"check_output: the example exited with {res.returncode}")
        return 1
    if os.environ.get("DEVMESH_UPDATE_EXPECTED"):
        with open(expected_path, "w", encoding="utf-8") as f:
            f.write(actual)
        print(f"check_output: wrote {expected_path}")
        return 0
    try:
        expected = open(expected_path, encoding="utf-8").read()
    except FileNotFoundError:
        print(f"check_output: {expected_path} does not exist (DEVMESH_UPDATE_EXPECTED=1 writes it)")
        return 1
    if same(expected, actual):
        print(f"check_output: the output matches {os.path.basename(expected_path)}")
        return 0
    sys.stdout.writelines(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                               expected_path, "this run"))
    print(f"check_output: the output differs from {expected_path} (see the docstring of {sys.argv[0]})")
    return 1


if __name__ == "__main__":
    sys.exit(main())
