"""Writes docs/performance.md and its two charts from the JSON rows of one bench/compare run.

    python3 bench/peers/report.py --out docs/performance.md --img docs/img \
        --run weft=out/weft.json:out/weft.log --run ray=out/ray.json:out/ray.log ... \
        [--absent weft="not built"] [--ray-microbenchmark out/ray_microbenchmark.txt]
        [--python ray=build/peers-venv/bin/python] [--load-start "1.2 0.8 0.5"] [--quick]

Nothing is invented: a cell is a measured value, or says why there is none (unsupported by
that system, the error it gave, or not built).
"""

import argparse
import datetime
import json
import math
import os
import platform
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

SYSTEMS = [("weft", "Weft"), ("ray", "Ray"), ("dask", "Dask"), ("mpi4py", "mpi4py.futures")]
# The overhead curve also shows Weft with 4 ranks (4 slots on the 2 cores) in a column of its own,
# and, as the ceiling the cores allow, the same spin loop in 2 and 4 bare threads with no runtime
# (weft_overhead measures them beside each of its own points).
EFF_SYSTEMS = ([("weft", "Weft (2 ranks)"), ("weft4", "Weft (4 ranks)")] + SYSTEMS[1:] +
               [("bare", "no runtime, 2 threads"), ("bare4", "no runtime, 4 threads")])
PEERS = [s for s in SYSTEMS if s[0] != "weft"]
LABEL = dict(SYSTEMS + [("baseline", "baseline")])
UNIT_TEXT = {"per_s": "ops/s", "GB_per_s": "GB/s", "us": "µs", "ratio": ""}
COLORS = {"weft": "#d62728", "weft4": "#9467bd", "bare": "#7f7f7f", "bare4": "#bcbd22", "ray": "#1f77b4", "dask": "#ff7f0e", "mpi4py": "#2ca02c",
          "baseline": "#7f7f7f"}


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True,
                              timeout=60).stdout.strip()
    except Exception:
        return ""


def fmt(v):
    if v is None:
        return "—"
    if v == 0:
        return "0"
    digits = max(0, 2 - int(math.floor(math.log10(abs(v)))))
    return f"{v:,.{digits}f}"


def higher_is_better(unit):
    return unit != "us"


def load_runs(specs, absent):
    """Rows of every system; a run that left no JSON becomes error rows from its log's tail."""
    rows = []
    for spec in specs:
        system, _, paths = spec.partition("=")
        json_path, _, log_path = paths.partition(":")
        data = None
        if os.path.exists(json_path) and os.path.getsize(json_path) > 0:
            with open(json_path) as f:
                try:
                    data = json.load(f)
                except json.JSONDecodeError as e:
                    absent.setdefault(system, f"unreadable results: {e}")
        if data:
            rows += data
        elif system not in absent:
            absent[system] = "error: " + log_tail(log_path)
    return rows


def log_tail(path):
    """The most telling line of a failed run's log: the last one naming an error, else the last."""
    if not path or not os.path.exists(path):
        return "no output"
    lines = [l.strip() for l in open(path, errors="replace") if l.strip()]
    errs = [l for l in lines if re.search(r"error|exception|failed|not found", l, re.I)]
    return ((errs or lines or ["no output"])[-1])[:300]


class Notes:
    """Numbered footnotes, so long reasons do not widen the table."""

    def __init__(self):
        self.items = []

    def ref(self, text):
        if text not in self.items:
            self.items.append(text)
        return f"[{self.items.index(text) + 1}]"

    def render(self):
        return [f"{i + 1}. {t}" for i, t in enumerate(self.items)]


def cell(row, notes, absent_reason):
    if row is None:
        return f"n/a {notes.ref(absent_reason)}" if absent_reason else "—"
    text = fmt(row["value"]) if row.get("value") is not None else "n/a"
    if row.get("note"):
        text += f" {notes.ref(row['note'])}"
    return text


def ratio(weft, peer, unit):
    if not weft or not peer or weft.get("value") in (None, 0) or peer.get("value") in (None, 0):
        return "—"
    r = weft["value"] / peer["value"] if higher_is_better(unit) else peer["value"] / weft["value"]
    return f"{fmt(r)}×"


def index(rows):
    by = {}
    for r in rows:
        if r.get("name") != "efficiency":
            by[(r["system"], r["name"])] = r
    return by


def workload_table(rows, absent, notes):
    by = index(rows)
    head = (["workload", "unit"] + [l for _, l in SYSTEMS] + ["baseline"] +
            [f"Weft ÷ {l}" for _, l in PEERS])
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, unit in common.WORKLOADS:
        line = [f"`{name}`", UNIT_TEXT[unit]]
        line += [cell(by.get((s, name)), notes, absent.get(s)) for s, _ in SYSTEMS]
        line.append(cell(by.get(("baseline", name)), notes, None))
        line += [ratio(by.get(("weft", name)), by.get((s, name)), unit) for s, _ in PEERS]
        out.append("| " + " | ".join(line) + " |")
    return out


def other_table(rows, notes):
    """Rows outside the shared workload list: baselines (MPI ping-pong, memcpy, ...) and extras."""
    known = {n for n, _ in common.WORKLOADS} | {"efficiency"}
    extra = [r for r in rows if r["name"] not in known]
    if not extra:
        return ["No other rows were measured in this run (Weft's baselines come with its bench "
                "binaries)."]
    out = ["| measurement | system | value | unit |", "|---|---|---|---|"]
    for r in extra:
        out.append(f"| `{r['name']}` | {LABEL.get(r['system'], r['system'])} | "
                   f"{cell(r, notes, None)} | {UNIT_TEXT.get(r.get('unit'), r.get('unit'))} |")
    return out


def curves(rows):
    """system -> sorted [(task_us, efficiency)] of the measured points."""
    c = {}
    for r in rows:
        if r.get("name") == "efficiency" and r.get("value") is not None:
            c.setdefault(r["system"], []).append((float(r["task_us"]), float(r["value"])))
    return {s: sorted(v) for s, v in c.items()}


def threshold(points, level):
    """Smallest task length with efficiency >= level, interpolated in log(task length)."""
    prev = None
    for us, eff in points:
        if eff >= level:
            if prev is None or prev[1] >= eff:
                return us
            (u0, e0) = prev
            frac = (level - e0) / (eff - e0)
            return math.exp(math.log(u0) + frac * (math.log(us) - math.log(u0)))
        prev = (us, eff)
    return None


def fmt_us(us, largest):
    if us is None:
        return f"not reached (> {fmt_us(largest, 0)})" if largest else "—"
    return f"{us / 1000:,.3g} ms" if us >= 1000 else f"{us:,.3g} µs"


def efficiency_table(rows, absent, notes):
    c = curves(rows)
    sizes = sorted({us for pts in c.values() for us, _ in pts})
    head = ["task length"] + [l for _, l in EFF_SYSTEMS]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for us in sizes:
        line = [fmt_us(us, 0)]
        for s, _ in EFF_SYSTEMS:
            v = dict(c.get(s, [])).get(us)
            line.append("—" if v is None else f"{100 * v:.3g} %")
        out.append("| " + " | ".join(line) + " |")
    for level in (0.5, 0.9):
        line = [f"**{int(level * 100)} % reached at**"]
        for s, _ in EFF_SYSTEMS:
            pts = c.get(s)
            if pts:
                line.append("**" + fmt_us(threshold(pts, level), pts[-1][0]) + "**")
            else:
                errs = [r.get("note") for r in rows
                        if r["system"] == s and r.get("name") == "efficiency" and r.get("note")]
                reason = (absent.get(s + ".efficiency") or absent.get(s) or
                          (errs[0] if errs else None))
                line.append(f"n/a {notes.ref(reason)}" if reason else "—")
        out.append("| " + " | ".join(line) + " |")
    return out


def chart_compare(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    by = index(rows)
    systems = [s for s, _ in SYSTEMS] + ["baseline"]
    # Panels: (x-axis label, [(bar label, {system: value})]). The shared workloads first, one
    # panel per unit; then the baselines and other rows, whose names differ per system.
    groups = []
    for unit in ("per_s", "GB_per_s"):
        items = [(n, {s: by[(s, n)]["value"] for s in systems
                      if (by.get((s, n)) or {}).get("value")})
                 for n, u in common.WORKLOADS if u == unit]
        items = [it for it in items if it[1]]
        if items:
            groups.append((f"{UNIT_TEXT[unit]} (log scale, higher is better)", items))
    known = {n for n, _ in common.WORKLOADS} | {"efficiency"}
    for unit, better in (("us", "lower"), ("GB_per_s", "higher"), ("per_s", "higher")):
        items = [(r["name"], {r["system"]: r["value"]}) for r in rows
                 if r["name"] not in known and r.get("unit") == unit and r.get("value")]
        if items:
            groups.append((f"baselines and other rows: {UNIT_TEXT[unit]} "
                           f"(log scale, {better} is better)", items))
    if not groups:
        return False
    from matplotlib.ticker import FuncFormatter, NullFormatter

    def slots(items):
        return max(len(v) for _, v in items)

    heights = [0.7 + len(items) * 0.1 * (slots(items) + 1) for _, items in groups]
    fig, axes = plt.subplots(len(groups), 1, figsize=(10, 1.0 + sum(heights)),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    labelled = set()
    for ax, (xlabel, items) in zip(axes[:, 0], groups):
        width = 0.8 / slots(items)
        for k, (_, values) in enumerate(items):
            present = [s for s in systems if s in values]
            for i, s in enumerate(present):
                y = k + (i - (len(present) - 1) / 2) * width
                ax.barh(y, values[s], height=width, color=COLORS[s],
                        label=None if s in labelled else LABEL[s])
                labelled.add(s)
                ax.text(values[s], y, " " + fmt(values[s]), va="center", fontsize=7)
        names = [n for n, _ in items]
        values = [v for _, vs in items for v in vs.values()]
        ax.set_yticks(range(len(names)))
        ax.set_yticklabels(names)
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.set_xlim(min(values) / 4, max(values) * 4)  # bars visible; room for the labels
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt(v)))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel(xlabel)
        ax.grid(axis="x", which="both", alpha=0.3)
    fig.suptitle("Weft vs peers vs baselines — same machine, same run", y=0.995)
    fig.legend(loc="upper center", ncol=len(labelled), fontsize=8,
               bbox_to_anchor=(0.5, 1 - 0.35 / fig.get_figheight()))
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.6 / fig.get_figheight()))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def chart_overhead(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    c = curves(rows)
    if not c:
        return False
    fig, ax = plt.subplots(figsize=(8, 5.5))
    for s, label in EFF_SYSTEMS:
        if s in c:
            ax.plot([u for u, _ in c[s]], [100 * e for _, e in c[s]], "o-", color=COLORS[s],
                    label=label)
    for level in (50, 90):
        ax.axhline(level, color="gray", linestyle="--", linewidth=0.8)
        ax.text(1, level * 1.05, f"{level} %", color="gray")
    from matplotlib.ticker import FuncFormatter

    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g} %"))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt_us(v, 0)))
    ax.set_xlabel("task length (µs, log scale)")
    ax.set_ylabel("efficiency = useful work / (wall time × slots)  (%, log scale)")
    ax.set_title("Per-task overhead: efficiency vs task length")
    ax.grid(which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def versions(pythons):
    """Versions of each peer, asked of the interpreter that ran it."""
    out = []
    for system, mods in (("ray", ["ray"]), ("dask", ["dask", "distributed"]),
                         ("mpi4py", ["mpi4py"])):
        py = pythons.get(system, sys.executable)
        for m in mods:
            v = sh(f"{py} -c 'import {m}; print({m}.__version__)' 2>/dev/null") or "not installed"
            out.append(f"{m} {v} ({py})")
    return out


def machine(args):
    cpu = re.sub(r"\s+", " ", sh("lscpu | sed -n 's/^Model name:\\s*//p'")) or platform.processor()
    mem = sh("awk '/MemTotal/ {printf \"%.1f GiB\", $2/1048576}' /proc/meminfo")
    os_name = sh(". /etc/os-release && echo $PRETTY_NAME")
    repo = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    commit = sh(f"git -C {repo} rev-parse --short HEAD")
    # The files this report writes do not count: the charts are drawn before this line runs.
    dirty = (" (with uncommitted changes)"
             if sh(f"git -C {repo} status --porcelain -- . ':!docs/performance.md' ':!docs/img'")
             else "")
    lines = [
        f"- CPU: {cpu}; {os.cpu_count()} logical cores (`nproc`: {sh('nproc')})",
        f"- Memory: {mem}; kernel {platform.release()}; {os_name}",
        f"- Load average (1/5/15 min) at start: {args.load_start or '?'}; at end: "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} — the machine is shared, so "
        "compare columns of one run rather than runs",
        f"- Open MPI: {sh('mpirun --version 2>/dev/null | head -1') or 'not found'}",
        f"- Weft: commit {commit or '?'}{dirty}",
    ]
    lines += [f"- {v}" for v in versions(dict(p.split("=", 1) for p in args.python))]
    return lines


def microbench_section(path, rows):
    """Ray's own `ray microbenchmark` beside our Ray row of the same workload."""
    if not path or not os.path.exists(path):
        return ["`ray microbenchmark` was not run."]
    text = open(path, errors="replace").read()
    by = index(rows)
    out = ["| Ray test | `ray microbenchmark` (mean ± sd) | this suite's Ray row |",
           "|---|---|---|"]
    for m in re.finditer(r"^(.*?) per second ([\d.]+) \+- ([\d.]+)", text, re.M):
        name = m.group(1).strip()
        key = re.sub(r"\s*\(plasma store\)", "", name.lower()).replace(":", "_")
        key = key.replace(" ", "_")
        ours = by.get(("ray", key))
        out.append(f"| {name} | {fmt(float(m.group(2)))} ± {fmt(float(m.group(3)))} | "
                   f"{fmt(ours['value']) if ours else '—'} |")
    first = text.splitlines()[0] if text else ""
    code = re.search(r"exit (-?\d+)", first)
    if len(out) > 2 and code and code.group(1) != "0":
        errs = [l.strip() for l in text.splitlines()
                if re.search(r"Error|Exception", l) and not l.startswith("[")]
        out += ["", f"It exited {code.group(1)} after the rows above (in the parts past the "
                f"filter or the timeout); its last error line: `{(errs or ['none'])[-1][:200]}`"]
    if len(out) == 2:
        out = [f"`ray microbenchmark` printed no result row; the end of its output:", "",
               "```", *text.strip().splitlines()[-8:], "```"]
    return [f"Command: `{first.lstrip('$ ')}`", ""] + out


def render(args, rows, absent):
    notes = Notes()
    mode = "quick mode: short windows, fewer tasks" if args.quick else "full mode"
    md = [
        "# Performance: Weft beside Ray, Dask and mpi4py.futures",
        "",
        f"Generated by `bench/compare{' --quick' if args.quick else ''}` on "
        f"{datetime.datetime.now().strftime('%Y-%m-%d %H:%M')} ({mode}). Do not edit by hand: "
        "rerun the command. Every number down to \"Runtime benchmarks not run by "
        "`bench/compare`\" was measured in that one invocation, on this machine, so each ratio "
        "compares figures taken side by side; that section and what follows it are kept from "
        "the previous file, each with its own command and date.",
        "",
        "## Machine",
        "",
        *machine(args),
        "",
        "## Workloads",
        "",
        "Row names are those of Ray's release microbenchmarks (`ray_perf.py`). Weft runs under "
        "`mpirun -n 4` on loopback; every peer gets 2 worker slots (Ray `num_cpus=2`; Dask "
        "`LocalCluster` with 2 single-thread worker processes; mpi4py.futures with 2 pool "
        "workers under `mpirun -n 3`). Everything listens on loopback only (Ray's node "
        "address is 127.0.0.1, which `ray_bench.py` checks before measuring). ops/s and GB/s: "
        "higher is better. **Weft ÷ peer** is how many times Weft is faster (above 1: Weft "
        "is ahead). Windows are short (best of "
        "2–3 windows of 0.5–1.5 s) because the machine has 2 cores.",
        "",
        "`single_client_put_gigabytes` puts a 100 MiB array (Ray's own test puts 800 MiB). "
        "`single_client_put_get_*` is a put followed by a get of the same object; the get is "
        "zero-copy where the system allows it (Ray, Weft on one node).",
        "",
        *workload_table(rows, absent, notes),
        "",
        "![Weft vs peers vs baselines](img/compare.png)",
        "",
        "### Baselines and other measurements",
        "",
        *other_table(rows, notes),
        "",
        "## Per-task overhead",
        "",
        "Each task spins (busy-waits) for the given length; efficiency = tasks × task length ÷ "
        "(wall time × worker slots). Weft (2 ranks) has 2 slots, as every peer has 2 workers; "
        "Weft (4 ranks) has 4 slots on the same 2 cores. The last two columns are the ceiling the cores "
        "allow: the same spin loop run back to back by 2 or 4 bare threads, no runtime, measured "
        "beside each of Weft's points; with 4 spinning threads on 2 cores, two wait for a core at "
        "any moment, so no system with 4 slots can go past that column. 100 % means the runtime "
        "added nothing; the bold rows give "
        "the shortest task length at which each system reaches 50 % and 90 % (interpolated "
        "between measured lengths on a log scale). The driver shares the 2 cores with the "
        "workers, which caps every system below 100 %.",
        "",
        *efficiency_table(rows, absent, notes),
        "",
        "![Efficiency vs task length](img/overhead.png)",
        "",
        "## Cross-check: Ray's own `ray microbenchmark`",
        "",
        "Ray's command, run in the same invocation and bounded by a timeout, beside this "
        "suite's Ray figures (its windows are longer: 10 s pause, 1 s warm-up, 4 × 2 s).",
        "",
        *microbench_section(args.ray_microbenchmark, rows),
        "",
    ]
    if notes.items:
        md += ["## Notes", "", *notes.render(), ""]
    return "\n".join(md)


# The hand-written part of docs/performance.md: figures of benchmarks this script does not run,
# each with its own command and date. A rerun replaces everything above this heading and keeps
# the rest as it was.
KEPT_HEADING = "## Runtime benchmarks not run by `bench/compare`"


def kept_tail(path):
    """The existing file's text from KEPT_HEADING on, or "" when it has none."""
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        return ""
    at = text.find("\n" + KEPT_HEADING)
    return "" if at < 0 else "\n" + text[at + 1:]


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--img", required=True, help="folder for compare.png and overhead.png")
    p.add_argument("--run", action="append", default=[], help="SYSTEM=JSON[:LOG]")
    p.add_argument("--absent", action="append", default=[], help="SYSTEM=REASON")
    p.add_argument("--python", action="append", default=[], help="SYSTEM=INTERPRETER")
    p.add_argument("--ray-microbenchmark")
    p.add_argument("--load-start")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--merged", help="also write every row as one JSON list here")
    args = p.parse_args()

    absent = dict(a.split("=", 1) for a in args.absent)
    rows = load_runs(args.run, absent)
    os.makedirs(args.img, exist_ok=True)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    drawn = [chart_compare(rows, os.path.join(args.img, "compare.png")),
             chart_overhead(rows, os.path.join(args.img, "overhead.png"))]
    md = render(args, rows, absent)
    rel = os.path.relpath(args.img, os.path.dirname(os.path.abspath(args.out)))
    md = md.replace("](img/", f"]({rel}/")
    for ok, alt, png in ((drawn[0], "Weft vs peers vs baselines", "compare.png"),
                         (drawn[1], "Efficiency vs task length", "overhead.png")):
        if not ok:
            md = md.replace(f"![{alt}]({rel}/{png})", "(no chart: nothing was measured)")
    md += kept_tail(args.out)
    with open(args.out, "w") as f:
        f.write(md)
    if args.merged:
        with open(args.merged, "w") as f:
            json.dump(rows, f, indent=1)
    print(f"wrote {args.out} and {args.img}/{{compare,overhead}}.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
