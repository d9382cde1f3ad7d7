"""Properties of the examples' outputs, checked independently of the committed expected files.

check_output.py compares an example's output with its committed copy, which the program itself
once wrote: a wrong answer committed once would keep passing. These checks recompute what
the output must say from the problem alone (the mesh's shape, the placements, the nodes, the
flight records' files), with no devmesh code: each returns a list of problems ([] when the
output holds). check_output.py --property NAME runs CHECKS[NAME](output, command).
"""
import itertools
import math
import os
import re


def _ints(text):
    return [int(x) for x in re.findall(r"-?\d+", text)]


def _arg(command, flag):
    """The value after `flag` in the example's command line."""
    for i, a in enumerate(command[:-1]):
        if a == flag:
            return command[i + 1]
    raise ValueError(f"no {flag} in the command line")


def _groups(shape, d):
    """Row-major positions of `shape`, grouped by every coordinate but d's, in order of their
    first position (PyTorch's DeviceMesh groups of dim d)."""
    out = {}
    for pos, coord in enumerate(itertools.product(*[range(s) for s in shape])):
        key = coord[:d] + coord[d + 1:]
        out.setdefault(key, []).append(pos)
    return list(out.values())


# ---- 01_layout: the rank table and every dim's groups of a row-major mesh --------------------
def layout(output, command):
    problems = []
    m = re.search(r"mesh_3d = mesh\(\((.*?)\), stride=\((.*?)\)\)", output)
    if not m:
        return ["no 'mesh_3d = mesh((...), stride=(...))' line"]
    dims = [(n, int(s)) for n, s in re.findall(r"(\w+)=(\d+)", m.group(1))]
    names, shape = [n for n, _ in dims], [s for _, s in dims]
    strides = [math.prod(shape[d + 1:]) for d in range(len(shape))]
    if _ints(m.group(2)) != strides:
        problems.append(f"strides {m.group(2)}, row-major is {strides}")
    rows = re.findall(r"^\| (\d+) \| (\d+) \| (\d+) \| (\d+) \|$", output, re.M)
    if len(rows) != math.prod(shape):
        problems.append(f"{len(rows)} table rows for {math.prod(shape)} ranks")
    for row in rows:
        *coord, rank = [int(x) for x in row]
        if sum(c * s for c, s in zip(coord, strides)) != rank:
            problems.append(f"coordinate {coord} is rank {rank} in the table, row-major says otherwise")
    for d, name in enumerate(names):
        line = re.search(rf"^{name}: (.*)$", output, re.M)
        want = _groups(shape, d)
        if not line or [_ints(g) for g in re.findall(r"\[(.*?)\]", line.group(1))] != want:
            problems.append(f"the groups of {name} are not {want}")
    # The flatten of the last two dims: the ranks that share the first coordinate.
    line = re.search(r"^shard_tp: (.*)$", output, re.M)
    want = [list(range(i * strides[0], (i + 1) * strides[0])) for i in range(shape[0])]
    if not line or [_ints(g) for g in re.findall(r"\[(.*?)\]", line.group(1))] != want:
        problems.append(f"the groups of shard_tp are not {want}")
    return problems


# ---- 09_topology: every table recomputed from the nodes and the rank map ---------------------
def _topology_tables(output, mpi_nodes):
    """(node of world rank, rank map, table lines) of each table, from its section."""
    node_of = {"the nodes MPI reports": mpi_nodes, "block order": lambda r: r // 4,
               "round-robin order": lambda r: r % 2, "init_device_mesh": mpi_nodes}
    section, nodes, out = "", None, []
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("== "):
            section = line
            nodes = next((f for key, f in node_of.items() if key in line), None)
        if line.startswith("dim  size  groups") and nodes:
            before = lines[i - 2] if i >= 2 else ""
            m = re.search(r"map \[(.*?)\]", before + " " + (section if "rank map" in section else ""))
            rank_map = _ints(m.group(1)) if m else list(range(8))
            rows = []
            for row in lines[i + 1:]:
                if not re.match(r"^\w+ +\d+ +\d+ +(yes|no) ", row):
                    break
                rows.append(row.split())
            out.append((nodes, rank_map, lines[i - 1], rows))
    return out


def topology(output, command, mpi_nodes):
    problems = []
    tables = _topology_tables(output, mpi_nodes)
    if len(tables) != 7:
        problems.append(f"{len(tables)} topology tables found, 7 expected")
    for nodes, rank_map, summary, rows in tables:
        shape = [int(r[1]) for r in rows]
        used = {nodes(r) for r in rank_map}
        want = f"{len(rank_map)} ranks on {len(used)} node{'s' if len(used) > 1 else ''}, " \
               f"{len(rank_map) // len(used)} ranks per node"
        if summary != want:
            problems.append(f"'{summary}', the nodes say '{want}'")
        for d, row in enumerate(rows):
            spans = [len({nodes(rank_map[p]) for p in g}) for g in _groups(shape, d)]
            crossing = sum(1 for s in spans if s > 1)
            expected = [row[0], str(shape[d]), str(len(spans)), "yes" if crossing == 0 else "no", str(max(spans)),
                        str(crossing)]
            if row != expected:
                problems.append(f"row {' '.join(row)}, recomputed {' '.join(expected)} (map {rank_map})")
    # The last section: each rank's position, tp group and node, through the rank map.
    m = re.search(r"rank map \[(.*?)\] ==", output)
    rank_map = _ints(m.group(1)) if m else []
    ranks = re.findall(r"^rank (\d+): node (\d+), mesh position (\d+), tp group \(world ranks\) \[(.*?)\], all on node (\d+)$",
                       output, re.M)
    if len(ranks) != 8 or len(rank_map) != 8:
        return problems + ["the last section does not list 8 ranks and a rank map"]
    node = {int(r): int(n) for r, n, *_ in ranks}
    for r, n, pos, group, on in ranks:
        r, pos = int(r), int(pos)
        tp = [rank_map[p] for p in range(pos - pos % 4, pos - pos % 4 + 4)]
        if rank_map[pos] != r:
            problems.append(f"rank {r} at position {pos}, but the map puts rank {rank_map[pos]} there")
        if _ints(group) != tp:
            problems.append(f"rank {r}'s tp group is {group}, the map gives {tp}")
        if {node[x] for x in tp} != {int(on)} or int(n) != mpi_nodes(r):
            problems.append(f"rank {r}: its tp group is not all on node {on}, or it is not on node {n}")
    return problems


# ---- 10_sharding: blocks that tile the tensor, and a redistribute's bytes by brute force -----
def _blocks(output):
    rows = re.findall(r"^\| (\d+) \| \[(.*?)\] \| \[(.*?)\] \| \[(.*?)\] \|$", output, re.M)
    return {int(r): (_ints(shape), _ints(offset)) for r, _, shape, offset in rows}


def tiling(output, command):
    """Every element of the tensor is in exactly one rank's block (the spec replicates nothing
    here), and the picture of who holds each element agrees with the blocks."""
    problems = []
    extents = _ints(_arg(command, "--shape"))
    blocks = _blocks(output)
    owner = {}
    for r, (shape, offset) in blocks.items():
        for e in itertools.product(*[range(o, o + s) for o, s in zip(offset, shape)]):
            if e in owner:
                problems.append(f"element {e} is in the blocks of ranks {owner[e]} and {r}")
            owner[e] = r
    if len(owner) != math.prod(extents) or any(not 0 <= x < n for e in owner for x, n in zip(e, extents)):
        problems.append(f"the blocks cover {len(owner)} elements of a {extents} tensor")
    picture = re.findall(r"^ *(\d+) \| ([\d ]+)$", output.split("who holds each element")[-1], re.M)
    for row, holders in picture:
        for col, holder in enumerate(_ints(holders)):
            if owner.get((int(row), col)) != holder:
                problems.append(f"the picture says rank {holder} holds ({row}, {col}), the blocks say {owner.get((int(row), col))}")
    return problems


def _chunks(extent, parts):
    """torch.chunk: blocks of ceil(extent / parts), the last ones shorter or empty."""
    size = -(-extent // parts)
    return [(min(i * size, extent), min((i + 1) * size, extent)) for i in range(parts)]


def _held(mesh, extents, placements, coord):
    """The global indices a rank at `coord` holds per tensor dim: S(k) placements applied in
    mesh-dim order (PyTorch's default shard order), R and P hold everything."""
    ranges = [list(range(n)) for n in extents]
    for d, p in enumerate(placements):
        m = re.fullmatch(r"S\((\d+)\)", p)
        if m:
            k = int(m.group(1))
            lo, hi = _chunks(len(ranges[k]), mesh[d])[coord[d]]
            ranges[k] = ranges[k][lo:hi]
    return [set(r) for r in ranges]


def plan_bytes(output, command):
    """Each rank receives exactly the elements of its new block it did not hold, each from the
    one rank that held it (a source spec that replicates nothing): the bytes every rank sends,
    by brute force over the elements."""
    mesh = [int(s) for _, s in re.findall(r"(\w+)=(\d+)", _arg(command, "--mesh"))]
    extents = _ints(_arg(command, "--shape"))
    src, dst = (re.findall(r"[A-Z]\(\d+\)|R", _arg(command, flag)) for flag in ("--placements", "--to"))
    if any(p == "R" for p in src):
        return ["plan_bytes: the source spec must replicate nothing (one sender per element)"]
    coords = list(itertools.product(*[range(s) for s in mesh]))
    holds = [_held(mesh, extents, src, c) for c in coords]
    needs = [_held(mesh, extents, dst, c) for c in coords]
    sent = [0] * len(coords)
    for receiver, need in enumerate(needs):
        for e in itertools.product(*[sorted(s) for s in need]):
            if not all(x in h for x, h in zip(e, holds[receiver])):
                sender = next(r for r, h in enumerate(holds) if all(x in s for x, s in zip(e, h)))
                sent[sender] += 8  # float64
    m = re.search(r"^bytes sent per rank \(float64\): \[(.*?)\], (\d+) in all$", output, re.M)
    if not m:
        return ["no 'bytes sent per rank' line"]
    if _ints(m.group(1)) != sent or int(m.group(2)) != sum(sent):
        return [f"bytes sent per rank {m.group(1)} ({m.group(2)} in all); by brute force {sent} ({sum(sent)})"]
    return []


# ---- 11_flight_record: a record's numbering; the analysis of a sample's files ---------------
def flight_record(output, command):
    """The record lists as many entries as it says, numbered from 1 without gaps, and each dim's
    calls are numbered from 1 without gaps, in order."""
    problems = []
    m = re.search(r"flight record of .*?, (\d+) calls:", output)
    entries = re.findall(r"^  #(\d+)  (\w+) call (\d+): (.*), (\w+)$", output, re.M)
    if not m or int(m.group(1)) != len(entries):
        problems.append(f"the record says {m.group(1) if m else '?'} calls and lists {len(entries)}")
    seen = {}
    for i, (n, dim, call, what, state) in enumerate(entries):
        seen[dim] = seen.get(dim, 0) + 1
        if int(n) != i + 1 or int(call) != seen[dim]:
            problems.append(f"entry #{n} ({dim} call {call}) is out of sequence")
        if state != "completed":
            problems.append(f"entry #{n} is {state}")
    return problems


def flight_analysis(output, command):
    """Read the sample's files here: for each channel and call number, the ranks of its group
    that made the call and those that never did. The analysis must name the same ranks."""
    folder = command[-1]
    made, group = {}, {}  # (channel, call, op) -> ranks that made it; (rank, channel) -> its group
    for name in sorted(os.listdir(folder)):
        text = open(os.path.join(folder, name), encoding="utf-8").read()
        rank = int(re.search(r"^rank (\d+) ", text, re.M).group(1))
        for ch, ranks in re.findall(r"^channel (\w+) \d+ ([\d,]+)$", text, re.M):
            group[(rank, ch)] = {int(x) for x in ranks.split(",")}
        for ch, call, op in re.findall(r"^entry \d+ (\w+) (\d+) (\w+) ", text, re.M):
            made.setdefault((ch, int(call), op), set()).add(rank)

    def ranks_text(ranks):
        ranks, parts, i = sorted(ranks), [], 0
        while i < len(ranks):
            j = i
            while j + 1 < len(ranks) and ranks[j + 1] == ranks[j] + 1:
                j += 1
            parts.append(str(ranks[i]) if i == j else f"{ranks[i]}-{ranks[j]}")
            i = j + 1
        return ("rank " if len(ranks) == 1 else "ranks ") + ",".join(parts)

    problems = []
    for (ch, call, op), ranks in made.items():
        # The call's group: the channel's world ranks as the ranks that made the call saw them.
        absent = set().union(*(group[(r, ch)] for r in ranks)) - ranks
        if not absent:
            continue
        want = f"call #{call}, {op}"
        line = next((l for l in output.splitlines() if want in l and ("mesh's own steps" if ch == "mesh" else f"'{ch}'") in l), None)
        if not line or f"made by {ranks_text(ranks)}, never by {ranks_text(absent)}" not in line:
            problems.append(f"{ch} {want}: made by {ranks_text(ranks)}, never by {ranks_text(absent)}; the analysis: {line}")
    if not problems and "never by rank 1" not in output:
        problems.append("the analysis does not name rank 1, the rank the sample's flatten lacks")
    return problems


CHECKS = {
    "layout": layout,
    "topology": lambda out, cmd: topology(out, cmd, lambda r: 0),
    "topology_round_robin": lambda out, cmd: topology(out, cmd, lambda r: r % 2),
    "tiling": tiling,
    "plan_bytes": plan_bytes,
    "flight_record": flight_record,
    "flight_analysis": flight_analysis,
}
