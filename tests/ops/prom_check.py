#!/usr/bin/env python3
"""prom_check.py [--require NAME ...] < metrics.txt — a strict checker of Prometheus text
exposition format 0.0.4, needing nothing outside the standard library. It fails (exit 1, one line
per problem) on: a malformed line, a bad metric or label name, a bad escape in a label value, a
value that is not a float, a TYPE other than counter/gauge/histogram/summary/untyped, a second
HELP or TYPE for a family, a TYPE after the family's first sample, samples of a family that are
not contiguous, a repeated series, a negative counter, a missing final newline, and a required
family that is absent."""
import re
import sys

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r"[a-zA-Z_][a-zA-Z0-9_]*"
VALUE = r"[+-]?(?:Inf|NaN|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"
SAMPLE = re.compile(r"^(" + NAME + r")(?:\{(.*)\})? (" + VALUE + r")(?: (-?\d+))?$")
LABEL_PAIR = re.compile(r'(' + LABEL + r')="((?:[^"\\\n]|\\\\|\\"|\\n)*)"')


def parse_labels(text):
    labels, pos = [], 0
    while pos < len(text):
        m = LABEL_PAIR.match(text, pos)
        if not m:
            return None
        labels.append((m.group(1), m.group(2)))
        pos = m.end()
        if pos < len(text):
            if text[pos] != ",":
                return None
            pos += 1
    names = [n for n, _ in labels]
    if len(set(names)) != len(names):
        return None
    return tuple(sorted(labels))


def family_of(name, types):
    for suffix in ("_bucket", "_sum", "_count"):
        if name.endswith(suffix) and types.get(name[: -len(suffix)]) in ("histogram", "summary"):
            return name[: -len(suffix)]
    return name


def check(text, required):
    problems = []
    if not text.endswith("\n"):
        problems.append("the exposition does not end with a newline")
    types, helps, seen_series, sampled, closed = {}, set(), set(), set(), set()
    current = None
    for n, line in enumerate(text.split("\n")[:-1], 1):
        if line == "":
            continue
        if line.startswith("#"):
            parts = line.split(" ", 3)
            if len(parts) >= 3 and parts[1] in ("HELP", "TYPE"):
                name = parts[2]
                if not re.fullmatch(NAME, name):
                    problems.append(f"line {n}: bad metric name {name!r}")
                    continue
                if parts[1] == "HELP":
                    if name in helps:
                        problems.append(f"line {n}: a second HELP for {name}")
                    helps.add(name)
                else:
                    kind = parts[3] if len(parts) == 4 else ""
                    if kind not in ("counter", "gauge", "histogram", "summary", "untyped"):
                        problems.append(f"line {n}: bad TYPE {kind!r} for {name}")
                    if name in types:
                        problems.append(f"line {n}: a second TYPE for {name}")
                    if name in sampled:
                        problems.append(f"line {n}: TYPE for {name} after its samples")
                    types[name] = kind
            continue
        m = SAMPLE.match(line)
        if not m:
            problems.append(f"line {n}: not a sample: {line!r}")
            continue
        name, labels_text, value = m.group(1), m.group(2), m.group(3)
        labels = parse_labels(labels_text) if labels_text else ()
        if labels is None:
            problems.append(f"line {n}: bad labels {{{labels_text}}}")
            continue
        fam = family_of(name, types)
        if fam != current:
            if fam in closed:
                problems.append(f"line {n}: samples of {fam} are not contiguous")
            if current is not None:
                closed.add(current)
            current = fam
        sampled.add(fam)
        if (name, labels) in seen_series:
            problems.append(f"line {n}: series {name}{{{labels_text or ''}}} repeated")
        seen_series.add((name, labels))
        if types.get(fam) == "counter" and not value.startswith("NaN") and float(value) < 0:
            problems.append(f"line {n}: counter {name} is negative")
    for r in required:
        if r not in sampled:
            problems.append(f"required family {r} has no sample")
    return problems


def main():
    args = sys.argv[1:]
    required = []
    while args:
        if args[0] == "--require" and len(args) > 1:
            required.append(args[1])
            args = args[2:]
        else:
            print(f"prom_check.py: unknown argument {args[0]}", file=sys.stderr)
            return 2
    problems = check(sys.stdin.read(), required)
    for p in problems:
        print("prom_check: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--self-test":
        good = '# HELP a_total x\n# TYPE a_total counter\na_total{rank="0"} 3\nb 1.5e3\nc{l="q\\"\\n\\\\"} +Inf\n'
        assert check(good, ["a_total"]) == [], check(good, ["a_total"])
        bad = [
            "a 1",                                   # no final newline
            "a{rank=0} 1\n",                          # unquoted label value
            "a{x=\"1\",x=\"2\"} 1\n",                 # repeated label
            "a one\n",                                # bad value
            "# TYPE a countr\na 1\n",                 # bad type
            "a 1\n# TYPE a gauge\n",                  # TYPE after samples
            "a 1\nb 1\na{l=\"x\"} 2\n",               # not contiguous
            "a 1\na 2\n",                             # repeated series
            "# TYPE a counter\na -1\n",               # negative counter
            "1a 1\n",                                 # bad name
            'a{l="\\t"} 1\n',                         # bad escape
        ]
        for b in bad:
            assert check(b, []), b
        assert check("a 1\n", ["b"]), "missing required"
        print("prom_check self-test passed")
        sys.exit(0)
    sys.exit(main())
