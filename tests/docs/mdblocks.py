"""The fenced code blocks of a Markdown file, for the docs tests (check_snippets.py,
run_quickstart.py).

A block's *marker* is an HTML comment on the line right before its opening fence
(`<!-- output -->`, `<!-- docs.quickstart: build -->`): invisible on GitHub and in Doxygen,
it tells the tests what the block is.
"""
import os
import re
from dataclasses import dataclass, field

FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.S | re.M)


@dataclass
class Block:
    path: str            # the Markdown file
    rel: str             # its path relative to the docs root, for messages
    line: int            # line of the opening fence (1-based)
    lang: str            # first word of the info string ("" if none)
    tags: list = field(default_factory=list)  # the other words of the info string
    code: str = ""
    marker: str = None   # text of the HTML comment right before the fence, if any

    @property
    def first_code_line(self):
        return self.line + 1

    @property
    def where(self):
        return f"{self.rel}:{self.line}"


def blocks(path, root):
    text = open(path, encoding="utf-8").read()
    rel = os.path.relpath(path, root)
    out = []
    for m in FENCE.finditer(text):
        info = m.group(1).split()
        before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1].strip()
        marker = None
        if before.startswith("<!--") and before.endswith("-->"):
            marker = before[4:-3].strip()
        out.append(Block(path, rel, text.count("\n", 0, m.start()) + 1,
                         info[0] if info else "", info[1:], m.group(2), marker))
    return out


def doc_files(root):
    """README.md and docs/*.md under root, in a stable order."""
    files = [os.path.join(root, "README.md")]
    docs = os.path.join(root, "docs")
    if os.path.isdir(docs):
        files += sorted(os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))
    return [f for f in files if os.path.exists(f)]


def same_lines(out, expected):
    """Output of ranks that print concurrently: the same lines, in any order."""
    return sorted(out.strip().splitlines()) == sorted(expected.strip().splitlines())
