#!/usr/bin/env python3
"""docs.api: the Doxygen reference builds warning-free, outside the source tree, from the
README as its main page, with the docs pages and the examples, and every public function of
devmesh has a doc comment (one line at least).

Runs doxygen from the repository's root with docs/Doxyfile, overriding only
OUTPUT_DIRECTORY (OUT, in the build tree) and GENERATE_XML (the XML is what the checks below
read). Doxyfile turns warnings into errors (WARN_AS_ERROR = FAIL_ON_WARNINGS).

Documented means a brief or detailed description in the reference: a `///` or `/** */`
comment, or one shared by an `///@{ ... ///@}` group. Checked: every public function and
friend of every class, struct and namespace of devmesh, except
- names in `detail` namespaces (excluded from the reference, EXCLUDE_SYMBOLS),
- `devmesh::error::*::fire()`: the hook that holds each diagnostic's static_assert; the
  struct's page and docs/errors.md describe the diagnostic,
- the members of `devmesh::rank_group::iterator`, a standard random-access iterator,
- deleted functions (`= delete`: copy operations of move-only types), which cannot be called.

Usage: check_api.py --doxygen DOXYGEN --root SOURCE_DIR --out OUT
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

EXEMPT_CLASSES = {"devmesh::rank_group::iterator"}


def text_of(elem):
    return "".join(elem.itertext()).strip() if elem is not None else ""


def documented(member):
    return bool(text_of(member.find("briefdescription")) or text_of(member.find("detaileddescription")))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--doxygen", required=True)
    p.add_argument("--root", required=True)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    root, out = os.path.abspath(a.root), os.path.abspath(a.out)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    config = open(os.path.join(root, "docs", "Doxyfile")).read()
    config += f'\nOUTPUT_DIRECTORY = "{out}"\nGENERATE_XML = YES\n'
    res = subprocess.run([a.doxygen, "-"], input=config, cwd=root, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    print(res.stdout)
    problems = []
    if res.returncode != 0:
        problems.append(f"doxygen failed (exit code {res.returncode}): warnings are errors, see above")
    if os.path.exists(os.path.join(root, "html")) or os.path.exists(os.path.join(root, "xml")):
        problems.append("an html/ or xml/ directory sits in the source tree's root: "
                        "docs/Doxyfile must write under build/")
    html = os.path.join(out, "html")
    xml = os.path.join(out, "xml")
    if not os.path.isdir(xml):
        problems.append("no XML output")
        return report(problems, 0)

    # The main page is the README; the docs pages and the examples are in the reference.
    index = os.path.join(xml, "indexpage.xml")
    if not os.path.exists(index) or "devmesh" not in open(index).read() or "Quick start" not in open(index).read():
        problems.append("the main page is not README.md (USE_MDFILE_AS_MAINPAGE)")
    for page in glob.glob(os.path.join(root, "docs", "*.md")):
        name = "md_docs_" + os.path.splitext(os.path.basename(page))[0]
        if not os.path.exists(os.path.join(html, name + ".html")):
            problems.append(f"docs/{os.path.basename(page)} has no page in the reference ({name}.html)")
    for ex in glob.glob(os.path.join(root, "examples", "*.cu")):
        name = os.path.basename(ex).replace(".", "_8") + "-example.html"
        if not os.path.exists(os.path.join(html, name)):
            problems.append(f"examples/{os.path.basename(ex)} is not in the reference (docs/examples.dox)")

    # Every public function has a doc comment.
    checked = 0
    for path in sorted(glob.glob(os.path.join(xml, "*.xml"))):
        tree = ET.parse(path).getroot()
        for compound in tree.iter("compounddef"):
            kind = compound.get("kind")
            if kind not in ("class", "struct", "namespace", "union"):
                continue
            scope = text_of(compound.find("compoundname"))
            if not scope.startswith("devmesh") or "detail" in scope.split("::") or scope in EXEMPT_CLASSES:
                continue
            if compound.get("prot") in ("private", "protected"):
                continue
            for member in compound.iter("memberdef"):
                if member.get("kind") not in ("function", "friend") or member.get("prot") != "public":
                    continue
                name = text_of(member.find("name"))
                if scope.startswith("devmesh::error::") and name == "fire":
                    continue
                args = text_of(member.find("argsstring"))
                if member.get("kind") == "friend" and not args:
                    continue  # a friend class declaration, not a function
                if args.replace(" ", "").endswith("=delete"):
                    continue
                checked += 1
                if not documented(member):
                    loc = member.find("location")
                    where = f"{os.path.relpath(loc.get('file'), root)}:{loc.get('line')}" if loc is not None else "?"
                    sig = f"{scope}::{name}{text_of(member.find('argsstring'))}"
                    problems.append(f"{where}: {sig} has no doc comment (add a /// line)")
    return report(problems, checked)


def report(problems, checked):
    for p in problems:
        print(f"FAILED: {p}")
    print(f"docs.api: {checked} public functions checked; {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
