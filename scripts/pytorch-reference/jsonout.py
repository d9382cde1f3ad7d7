"""Writes a data file: compact JSON, one case per line (small, and diffs read case by case)."""
import json


def write_cases(path, torch_version, cases):
    with open(path, "w") as f:
        f.write('{"torch_version": ' + json.dumps(torch_version) + ', "cases": [\n')
        lines = [json.dumps(c, separators=(",", ":")) for c in cases]
        f.write(",\n".join(lines))
        f.write("\n]}\n")
