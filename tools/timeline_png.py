#!/usr/bin/env python3
"""Render a `weft timeline` trace (Chrome trace-event JSON) to a PNG, one row per rank and
thread, coloured by span kind, the way Perfetto lays it out: for docs and for a look at a run
without a browser.

  tools/timeline_png.py trace.json timeline.png [--from-ms A --to-ms B] [--title TEXT]

Needs matplotlib (Debian: python3-matplotlib)."""
import argparse
import json
import sys

COLOURS = {
    "task": "#4e79a7", "actor call": "#59a14f", "actor create": "#8cd17d", "get": "#e15759",
    "put": "#f28e2b", "wait": "#ff9d9a", "transfer": "#b07aa1", "spill": "#9c755f",
    "restore": "#edc948", "checkpoint": "#76b7b2",
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("trace")
    ap.add_argument("png")
    ap.add_argument("--from-ms", type=float, default=None)
    ap.add_argument("--to-ms", type=float, default=None)
    ap.add_argument("--title", default=None)
    a = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch
    except ImportError:
        sys.exit("timeline_png.py needs matplotlib (apt-get install python3-matplotlib)")

    with open(a.trace) as f:
        events = json.load(f)["traceEvents"]
    procs, threads, spans = {}, {}, []
    for e in events:
        if e["ph"] == "M" and e["name"] == "process_name":
            procs[e["pid"]] = e["args"]["name"]
        elif e["ph"] == "M" and e["name"] == "thread_name":
            threads[(e["pid"], e["tid"])] = e["args"]["name"]
        elif e["ph"] == "X":
            spans.append(e)
    if not spans:
        sys.exit(f"{a.trace} holds no spans")
    lo = a.from_ms * 1000 if a.from_ms is not None else min(s["ts"] for s in spans)
    hi = a.to_ms * 1000 if a.to_ms is not None else max(s["ts"] + s["dur"] for s in spans)
    rows = sorted({(s["pid"], s["tid"]) for s in spans})
    index = {r: i for i, r in enumerate(rows)}
    fig, ax = plt.subplots(figsize=(12, 0.45 * len(rows) + 1.6))
    for s in spans:
        if s["ts"] + s["dur"] < lo or s["ts"] > hi:
            continue
        y = index[(s["pid"], s["tid"])]
        # A span too short to see at this scale still gets a hairline.
        width = max(s["dur"], (hi - lo) / 3000) / 1000
        ax.barh(y, width, left=(s["ts"] - lo) / 1000, height=0.7,
                color=COLOURS.get(s.get("cat", ""), "#bab0ac"), linewidth=0)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"{procs.get(p, p)} · {threads.get((p, t), t)}" for p, t in rows],
                       fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, (hi - lo) / 1000)
    ax.set_xlabel("ms")
    kinds = sorted({s.get("cat", "") for s in spans})
    ax.legend(handles=[Patch(color=COLOURS.get(k, "#bab0ac"), label=k) for k in kinds],
              loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    ax.set_title(a.title or f"weft timeline: {len(spans)} spans, {len(procs)} ranks")
    fig.tight_layout()
    fig.savefig(a.png, dpi=110)


if __name__ == "__main__":
    main()
