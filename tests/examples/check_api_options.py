#!/usr/bin/env python3
"""docs/api.md names exactly the fields of TaskOptions and ActorOptions that options.hpp
declares, in their declaration order (designated initializers must follow it), with the same
numeric and boolean defaults.

  check_api_options.py include/weft/options.hpp docs/api.md
"""
import re
import sys

# "type name;", "type name = default;" or "type name{default};"
FIELD = re.compile(r"^\s+[\w:<>, ]+?\s+(\w+)(?:\s*=\s*([^;]+)|\{([^}]*)\})?;")


def declared(header: str, struct: str):
    """[(name, default or None)] of `struct`, in order."""
    m = re.search(r"struct %s \{(.*?)\n\};" % struct, header, re.S)
    if not m:
        sys.exit(f"options.hpp: no struct {struct}")
    fields = []
    for line in m.group(1).splitlines():
        line = line.split("//")[0].rstrip()
        f = FIELD.match(line)
        if f:
            default = f.group(2) if f.group(2) is not None else f.group(3)
            fields.append((f.group(1), default.strip() if default is not None else None))
    return fields


def task_rows(doc: str):
    """The TaskOptions table: [(name, default)] in order."""
    start = doc.index("`TaskOptions`")
    rows = []
    for line in doc[start:].splitlines()[1:]:
        if rows and not line.startswith("|"):
            break
        m = re.match(r"\|\s*`(\w+)`\s*\|\s*([^|]*?)\s*\|", line)
        if m:
            rows.append((m.group(1), m.group(2).strip("` ")))
    return rows


def actor_prose(doc: str):
    """The ActorOptions paragraph: "`name` (`default`), ..." in order."""
    start = doc.index("`ActorOptions`:")
    para = doc[start : doc.index("\n\n", start)]
    rows = []
    for m in re.finditer(r"`(\w+)`(?:\s*\(`([^`]*)`)?", para[len("`ActorOptions`:"):]):
        rows.append((m.group(1), m.group(2)))
    return rows


def literal(v):
    """A default worth comparing: a number or a bool, else None."""
    if v is None:
        return None
    v = v.strip()
    if v in ("true", "false"):
        return v
    try:
        return float(v)
    except ValueError:
        return None


def check(what, fields, rows, errors):
    names = [n for n, _ in fields]
    doc_names = [n for n, _ in rows]
    missing = [n for n in names if n not in doc_names]
    unknown = [n for n in doc_names if n not in names]
    if missing:
        errors.append(f"{what}: declared but not in docs/api.md: {', '.join(missing)}")
    if unknown:
        errors.append(f"{what}: in docs/api.md but not declared: {', '.join(unknown)}")
    if not missing and not unknown and doc_names != names:
        errors.append(f"{what}: docs/api.md order {doc_names} is not the declaration order {names}")
    docs = dict(rows)
    for n, d in fields:
        want, got = literal(d), literal(docs.get(n))
        if want is not None and got is not None and want != got:
            errors.append(f"{what}.{n}: default {d} declared, {docs.get(n)} documented")
        if want is not None and n in docs and docs.get(n) is None:
            errors.append(f"{what}.{n}: docs/api.md gives no default (declared {d})")


def main():
    header = open(sys.argv[1]).read()
    doc = open(sys.argv[2]).read()
    errors = []
    check("TaskOptions", declared(header, "TaskOptions"), task_rows(doc), errors)
    check("ActorOptions", declared(header, "ActorOptions"), actor_prose(doc), errors)
    if errors:
        print("\n".join(errors))
        sys.exit(1)
    print("api options OK")


main()
