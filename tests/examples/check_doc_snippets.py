#!/usr/bin/env python3
"""Fails when a ```cpp block of docs/*.md is not, line for line (indentation and blank lines
aside), inside tests/examples/doc_snippets.cpp, which the build compiles and the suite runs.
Usage: check_doc_snippets.py SNIPPETS_CPP DOC.md...
(docs holding whole programs, such as quickstart.md, are compiled elsewhere and not listed.)"""
import pathlib
import re
import sys


def lines(text):
    return [l.strip() for l in text.splitlines() if l.strip()]


def main():
    cpp, docs = pathlib.Path(sys.argv[1]), [pathlib.Path(p) for p in sys.argv[2:]]
    code = lines(cpp.read_text())
    joined = "\n".join(code)
    bad = checked = 0
    for md in docs:
        for m in re.finditer(r"```cpp\n(.*?)```", md.read_text(), re.S):
            block = lines(m.group(1))
            if not block:
                continue
            checked += 1
            if "\n".join(block) not in joined:
                bad += 1
                line = md.read_text()[: m.start()].count("\n") + 1
                print(f"{md.name}:{line}: cpp snippet not found in {cpp.name} "
                      f"(first line: {block[0]!r})")
    print(f"{checked} cpp snippets checked, {bad} missing")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
