#!/usr/bin/env python3
"""Compiles every ```cpp block of README.md and docs/*.md, so that docs cannot go stale.

Each block is compiled as one translation unit after a prelude (the umbrella header, the
standard headers a snippet may use, `namespace dm = devmesh;` and the literals) and after the
earlier blocks of the same page that have no `main` (a page reads as one program). A block
that uses the MPI or NCCL backend is compiled with that backend switched on. Compile only
(-fsyntax-only): running is the examples' job.
"""
import os
import re
import subprocess
import sys
import tempfile

PRELUDE = """#include <devmesh/devmesh.hpp>
#include <algorithm>
#include <array>
#include <cstdio>
#include <iostream>
#include <optional>
#include <ranges>
#include <span>
#include <vector>
namespace dm = devmesh;
using namespace dm::literals;
"""


def blocks(path):
    text = open(path, encoding="utf-8").read()
    for m in re.finditer(r"^```cpp[^\n]*\n(.*?)^```", text, re.S | re.M):
        line = text.count("\n", 0, m.start()) + 2
        yield line, m.group(1)


def main():
    root, cxx, boost_inc, mpi_flags, cuda_inc = sys.argv[1:6]
    files = [os.path.join(root, "README.md")]
    docs = os.path.join(root, "docs")
    files += sorted(os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))
    failures, count = 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in files:
            rel = os.path.relpath(path, root)
            context = ""
            for line, code in blocks(path):
                count += 1
                origin = f"{rel}:{line}"
                src = os.path.join(tmp, f"snippet{count}.cpp")
                with open(src, "w") as f:
                    f.write(PRELUDE + context + f'#line {line} "{rel}"\n' + code)
                cmd = [cxx, "-std=c++20", "-fsyntax-only", "-Wall", "-Wextra", "-Wno-unused-variable",
                       "-Wno-unused-but-set-variable", f"-I{root}/include", f"-I{boost_inc}"]
                if "dm::mpi" in code or "dm::nccl" in code or "init_device_mesh" in code:
                    cmd += ["-DDEVMESH_WITH_MPI"] + mpi_flags.split()
                if "dm::nccl" in code or "cudaStream_t" in code:
                    cmd += ["-DDEVMESH_WITH_NCCL", f"-I{cuda_inc}"]
                res = subprocess.run(cmd + [src], capture_output=True, text=True)
                if res.returncode != 0:
                    failures += 1
                    print(f"FAILED: snippet at {origin}\n{res.stderr[:4000]}")
                else:
                    print(f"ok: {origin}")
                if "int main(" not in code:
                    context += f'#line {line} "{rel}"\n' + code
    print(f"{count - failures} passed, {failures} failed")
    return 1 if failures or count == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
