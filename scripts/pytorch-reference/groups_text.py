"""The text format of recorded process groups (tests/core/data/*.txt), shared by the recorders of
PyTorch's _unflatten, Megatron-Core's groups and TorchTitan's meshes. Pure Python.

    # comment lines (what recorded it, the format)
    case ID KEY=VALUE ...          one configuration
    groups LABEL G G ...           every group of one dim or token: each G its ranks joined by ','
    refused TEXT                   the reference raised (its exception type, and message if any)

Groups are listed as the reference lists them (members and order exactly); a recorder says
in its header how its order is defined.
"""


def groups_line(label, groups):
    return "groups " + label + " " + " ".join(",".join(str(r) for r in g) for g in groups)


def case_line(case_id, **fields):
    return "case " + case_id + "".join(f" {k}={v}" for k, v in fields.items())


def write(path, header_lines, body_lines):
    with open(path, "w") as out:
        for h in header_lines:
            out.write("# " + h + "\n" if h else "#\n")
        for line in body_lines:
            out.write(line + "\n")
