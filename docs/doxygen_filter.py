#!/usr/bin/env python3
"""Doxygen input filter for README.md and docs/*.md (FILTER_PATTERNS in docs/Doxyfile).

The pages are written for GitHub; Doxygen 1.9 reads the same Markdown with three gaps, which
this filter closes on the fly (the files are never changed; line numbers are kept):

- GitHub gives every heading an anchor (`## The GPU check` -> `#the-gpu-check`); Doxygen only
  knows explicit ids. Each `##`..`######` heading gets `{#<page>-<slug>}` (page: the file name
  without .md, lower case; slug: GitHub's), and links `(#slug)`, `(page.md#slug)` and
  `(docs/page.md#slug)` point to that id.
- Inline code spans: Doxygen still parses their text (`<step>` becomes an unknown HTML tag,
  `)::name` an unresolved link request, a `'` can end the span early). Each span becomes
  `<code>...</code>` with every character Doxygen would interpret escaped.
- Links to files of the repository: a header becomes a link to its reference page
  (`[x](../include/devmesh/core/diagnostics.hpp)` -> `[x](@ref devmesh/core/diagnostics.hpp)`); any other
  file or directory is not in the reference, so its link becomes plain text.
- Fenced code blocks pass through unchanged.

Usage: doxygen_filter.py FILE.md  (prints the filtered text)
"""
import os
import re
import sys

FENCE = re.compile(r"^\s*```")
HEADING = re.compile(r"^(#{2,6})\s+(.*?)\s*$")
CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)")
LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]*)\)")
PAGE_LINK = re.compile(r"^(?:[^#]*/)?([A-Za-z0-9_.-]+)\.md#(.+)$")
ESCAPES = {"\\": "\\\\", "@": "\\@", "&": "&amp;", "<": "&lt;", ">": "&gt;", "#": "\\#",
           "%": "\\%", '"': '\\"', "*": "\\*", "_": "\\_", "|": "\\|", "$": "\\$"}


def slug(text):
    """GitHub's heading anchor: code marks dropped, lower case, punctuation removed, spaces to '-'."""
    text = text.replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def escape_code(text):
    out = []
    i = 0
    while i < len(text):
        if text.startswith("::", i):
            out.append("\\::")
            i += 2
        elif text[i] == "-":
            n = len(text[i:]) - len(text[i:].lstrip("-"))
            k = n
            while k >= 2:  # "--" and "---" would become dashes
                out.append("\\---" if k == 3 else "\\--")
                k -= 3 if k == 3 else 2
            out.append("-" * k)
            i += n
        elif text[i] == "_" and i > 0 and text[i - 1].isalnum():
            out.append("_")  # inside a word: not emphasis, and Doxygen refuses "\_" there
            i += 1
        else:
            out.append(ESCAPES.get(text[i], text[i]))
            i += 1
    return "".join(out)


def code_spans(line, in_table):
    def repl(m):
        body = m.group(2)
        if len(m.group(1)) > 1:
            body = body.strip()
        if in_table:
            body = body.replace("\\|", "|")
        return "<code>" + escape_code(body) + "</code>"
    return CODE_SPAN.sub(repl, line)


def links(line, page):
    def repl(m):
        bang, text, target = m.groups()
        if bang:  # an image: IMAGE_PATH finds it
            return m.group(0)
        if target.startswith("#"):
            return f"[{text}](#{page}-{target[1:]})"
        pm = PAGE_LINK.match(target)
        if pm:
            return f"[{text}](#{pm.group(1).lower()}-{pm.group(2)})"
        if re.match(r"^[a-z]+:", target) or target.endswith(".md") or not target:
            return m.group(0)
        hm = re.match(r"^(?:\.\./)*include/(devmesh/[\w/]+\.hpp)$", target)
        if hm:
            return f"[{text}](@ref {hm.group(1)})"
        return text
    return LINK.sub(repl, line)


def main():
    path = sys.argv[1]
    page = os.path.splitext(os.path.basename(path))[0].lower()
    seen = {}
    in_fence = False
    out = []
    for line in open(path, encoding="utf-8").read().split("\n"):
        if FENCE.match(line):
            in_fence = not in_fence
            out.append(line)
            continue
        if in_fence:
            out.append(line)
            continue
        h = HEADING.match(line)
        if h:
            s = slug(h.group(2))
            n = seen.get(s, 0)
            seen[s] = n + 1
            if n:
                s = f"{s}-{n}"
            line = f"{h.group(1)} {code_spans(h.group(2), False)} {{#{page}-{s}}}"
        else:
            line = code_spans(links(line, page), line.lstrip().startswith("|"))
        out.append(line)
    sys.stdout.write("\n".join(out))


if __name__ == "__main__":
    main()
