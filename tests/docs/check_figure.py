#!/usr/bin/env python3
"""docs.figure_current: the figure of docs/concepts.md is current and draws the right mesh.

    check_figure.py <mesh_figure executable> <committed svg>

The program's output must equal the committed SVG (docs/figures/generate rewrites it, by hand),
and the drawing must be right on its own terms, recomputed here from the mesh's shape in its
title (row-major ranks): each rank's circle sits at its (replicate, shard) coordinate of the
grid, each shard outline encloses exactly the ranks of one replicate coordinate, and each
replicate line passes through exactly the ranks of one shard coordinate. A figure that was
wrong when it was generated fails, not only a stale one.
"""
import re
import subprocess
import sys


def attrs(tag):
    return {k: v for k, v in re.findall(r'(\w[\w-]*)="([^"]*)"', tag)}


def problems_of(svg):
    problems = []
    m = re.search(r"mesh\(\(replicate=(\d+), shard=(\d+)\), stride=\((\d+), (\d+)\)\)", svg)
    if not m:
        return ["no 'mesh((replicate=R, shard=S), ...)' title"]
    rows, cols = int(m.group(1)), int(m.group(2))
    texts = {(int(float(a["x"])), int(float(a["y"]))): int(t)
             for a, t in ((attrs(tag), t) for tag, t in re.findall(r"<text([^>]*)>(\d+)</text>", svg))}
    circles = [attrs(t) for t in re.findall(r"<circle([^>]*)/>", svg)]
    at = {}  # rank -> (cx, cy)
    for c in circles:
        cx, cy = int(c["cx"]), int(c["cy"])
        rank = texts.get((cx, cy + 5))
        if rank is None:
            problems.append(f"the circle at ({cx}, {cy}) has no rank")
        else:
            at[rank] = (cx, cy)
    if sorted(at) != list(range(rows * cols)):
        return problems + [f"the circles are ranks {sorted(at)}, not 0..{rows * cols - 1}"]
    xs, ys = sorted({x for x, _ in at.values()}), sorted({y for _, y in at.values()})
    for r, (x, y) in at.items():
        if (ys.index(y), xs.index(x)) != divmod(r, cols):
            problems.append(f"rank {r} is drawn at row {ys.index(y)}, column {xs.index(x)}; "
                            f"row-major it is at {divmod(r, cols)}")
    outlines = [attrs(t) for t in re.findall(r"<rect([^>]*)/>", svg) if 'rx="10"' in t]
    drawn = sorted(sorted(r for r, (x, y) in at.items()
                          if int(o["x"]) <= x <= int(o["x"]) + int(o["width"])
                          and int(o["y"]) <= y <= int(o["y"]) + int(o["height"])) for o in outlines)
    want = [list(range(i * cols, (i + 1) * cols)) for i in range(rows)]
    if drawn != want:
        problems.append(f"the shard outlines enclose {drawn}, the shard groups are {want}")
    lines = [attrs(t) for t in re.findall(r"<line([^>]*)/>", svg)]
    drawn = sorted(sorted(r for r, (x, y) in at.items()
                          if x == int(a["x1"]) and int(a["y1"]) <= y <= int(a["y2"]))
                   for a in lines if a["x1"] == a["x2"])
    want = [list(range(j, rows * cols, cols)) for j in range(cols)]
    if drawn != want:
        problems.append(f"the replicate lines pass through {drawn}, the replicate groups are {want}")
    return problems


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    exe, committed = sys.argv[1:]
    res = subprocess.run([exe], capture_output=True, text=True)
    if res.returncode != 0:
        print(f"check_figure: {exe} exited with {res.returncode}")
        return 1
    problems = problems_of(res.stdout)
    if res.stdout != open(committed, encoding="utf-8").read():
        problems.append(f"{committed} is stale: run docs/figures/generate and commit the result")
    for p in problems:
        print(f"check_figure: FAILED: {p}")
    if not problems:
        print("check_figure: the figure is current, and every rank, outline and line is where the mesh puts it")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
