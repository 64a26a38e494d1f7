#!/usr/bin/env python3
"""Runs the soak (soak.cpp) under mpirun, samples it and judges it (issue #12).

While the job runs it records, once per --sample-s:
  * every rank's RSS, split into its private part and its shared part (the node store's segment
    and the rings), and malloc's bytes in use (the soak-rss lines the ranks print);
  * rank 0's object table (`objects_known`, `inline_owned_bytes`) and the node store (used bytes,
    objects, spilled bytes), read through the job's control socket with `weft metrics --json`,
    the same tool an operator uses.
It writes those samples to a CSV, draws them into a PNG (matplotlib, when it is installed), and
passes only when:
  * the soak's own answer is right (soak-result ok=1) and mpirun exited 0;
  * RSS is flat after warm-up (--warmup-s or the first quarter of the workload, whichever is
    longer): per rank, the mean private RSS (VmRSS - RssShmem) of the last quarter of the
    samples after it is less than --rss-growth (5 %) above the mean of their first quarter. The
    shared part is printed beside it, not judged: shared pages count once first touched, so it
    climbs until the store and rings have each been used once;
  * the heap in use (malloc's bytes handed out) of every rank, less what Weft's recycled-block
    lists keep, at two pauses of the driver with nothing running (once --quiet-at-pct of the
    rounds are done, and after the last), grew by less than --heap-growth-kib: a leak grows it
    with every task, while the RSS also follows the heap's high-water mark and its
    fragmentation;
  * the node store and the object table are back at the end: the idle samples after the
    workload equal those before it (store objects and bytes, objects_known, inline bytes).

  bench/soak/run_soak.py --build build                         # 10 M tasks, 1 M calls, 100 k objects
  bench/soak/run_soak.py --build build --tasks 400000 --calls 40000 --objects 2000   # ~1 minute
"""
import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

MPIRUN_FLAGS = ["--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "--mca", "btl",
                "self,vader,tcp", "--mca", "btl_tcp_if_include", "lo", "--mca",
                "oob_tcp_if_include", "lo", "-x", "UCX_NET_DEVICES=lo", "-x",
                "UCX_WARN_UNUSED_ENV_VARS=n"]
RSS_LINE = re.compile(r"^soak-rss rank=(\d+) rss_kb=(\d+) shmem_kb=(\d+) heap_kb=(-?\d+)"
                      r" timeline_kb=(\d+) recycled_kb=(\d+)$")
IDLE_KEYS = ["store_objects", "store_used_bytes", "objects_known", "inline_owned_bytes"]


def metrics(weft_cli, env):
    """Rank 0's figures through the control socket, or None while the job has none yet."""
    try:
        out = subprocess.run([weft_cli, "metrics", "--json"], env=env, capture_output=True,
                             text=True, timeout=20)
    except subprocess.TimeoutExpired:
        return None
    if out.returncode != 0:
        return None
    m = json.loads(out.stdout)
    store = m.get("store", {})
    return {"objects_known": m["objects_known"], "inline_owned_bytes": m["inline_owned_bytes"],
            "store_objects": store.get("objects", 0),
            "store_used_bytes": store.get("used_bytes", 0),
            "store_spilled_bytes": store.get("spilled_bytes", 0)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True, help="the build folder (weft_soak, weft CLI)")
    ap.add_argument("-n", "--ranks", type=int, default=4)
    ap.add_argument("--tasks", type=int, default=10_000_000)
    ap.add_argument("--calls", type=int, default=1_000_000)
    ap.add_argument("--objects", type=int, default=100_000)
    ap.add_argument("--object-kib", type=int, default=1024)
    ap.add_argument("--sample-s", type=float, default=1.0)
    ap.add_argument("--warmup-s", type=float, default=10.0,
                    help="samples this long after the workload began are warm-up (or the "
                         "first --warmup-fraction of the workload, whichever is longer)")
    ap.add_argument("--warmup-fraction", type=float, default=0.25)
    ap.add_argument("--rss-growth", type=float, default=0.05)
    ap.add_argument("--rank0-rss-growth", type=float, default=None,
                    help="rank 0's bound, when it should differ (default: --rss-growth). Rank "
                         "0's private RSS follows its heap's high-water mark: a spike of the "
                         "bytes in use raises it for good (README.md)")
    ap.add_argument("--quiet-at-pct", type=int, default=25,
                    help="the driver pauses with nothing running once this share of the rounds "
                         "is done, and again after the last (0: no pauses)")
    ap.add_argument("--heap-growth-kib", type=int, default=512,
                    help="bound on each rank's heap in use, less what the recycled-block lists "
                         "keep, from the first pause to the last; README.md has the measurements "
                         "behind the default")
    ap.add_argument("--out", default="soak", help="prefix of the .csv and .png it writes")
    ap.add_argument("--timeout-s", type=float, default=3600)
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--malloc-arena-max", type=int, default=0,
                    help="glibc M_ARENA_MAX in the ranks (0: glibc's default; soak.cpp says why)")
    ap.add_argument("--mmap-threshold-kib", type=int, default=0,
                    help="glibc M_MMAP_THRESHOLD in the ranks (0: glibc's default, which it "
                         "raises to each large block freed; soak.cpp says why)")
    ap.add_argument("--trim-before-sample", action="store_true",
                    help="each rank calls malloc_trim(0) before reading its RSS, so freed pages "
                         "glibc keeps (a burst's high-water mark) do not count (soak.cpp)")
    args = ap.parse_args()

    soak_exe = os.path.join(args.build, "bench", "soak", "weft_soak")
    weft_cli = os.path.join(args.build, "tools", "weft")
    for exe in (soak_exe, weft_cli):
        if not os.access(exe, os.X_OK):
            sys.exit(f"run_soak.py: {exe} is not built")
    tmp = tempfile.mkdtemp(prefix="weft-soak-")  # its own TMPDIR: `weft` finds this job alone
    env = dict(os.environ, TMPDIR=tmp, UCX_NET_DEVICES="lo", OMPI_MCA_rmaps_base_oversubscribe="1")
    hold_ms = int(max(3.0, 3 * args.sample_s) * 1000)
    cmd = ([args.mpirun] + MPIRUN_FLAGS + ["-x", "TMPDIR", "-n", str(args.ranks), soak_exe,
            "--tasks", str(args.tasks), "--calls", str(args.calls), "--objects", str(args.objects),
            "--object-kib", str(args.object_kib), "--sample-ms", str(int(args.sample_s * 1000)),
            "--hold-ms", str(hold_ms), "--malloc-arena-max", str(args.malloc_arena_max),
            "--mmap-threshold-kib", str(args.mmap_threshold_kib),
            "--trim-before-sample", "1" if args.trim_before_sample else "0",
            "--quiet-at-pct", str(args.quiet_at_pct)])
    print("run_soak.py:", " ".join(cmd), flush=True)
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)

    lock = threading.Lock()
    rss = []        # (t, rank, private kb, shared kb, heap kb, timeline kb, recycled kb)
    phases = {}     # begin/end -> t
    result = {}
    log = []

    def reader():
        for line in proc.stdout:
            line = line.rstrip("\n")
            t = time.monotonic() - t0
            with lock:
                m = RSS_LINE.match(line)
                if m:
                    total, shared = int(m.group(2)), int(m.group(3))
                    rss.append((t, int(m.group(1)), total - shared, shared, int(m.group(4)),
                                int(m.group(5)), int(m.group(6))))
                    continue
                log.append(line)
                if line.startswith("soak-phase "):
                    phases[line.split()[1]] = t
                if line.startswith("soak-result "):
                    result.update(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
                if line.startswith(("soak-", "[weft]")) or "rror" in line:
                    print(line, flush=True)

    th = threading.Thread(target=reader, daemon=True)
    th.start()
    samples = []    # (t, metrics)
    while proc.poll() is None:
        if time.monotonic() - t0 > args.timeout_s:
            proc.kill()
            sys.exit(f"run_soak.py: FAIL: the soak ran past {args.timeout_s} s")
        m = metrics(weft_cli, env)
        if m is not None:
            samples.append((time.monotonic() - t0, m))
        time.sleep(args.sample_s)
    th.join()
    rc = proc.wait()
    shutil.rmtree(tmp, ignore_errors=True)

    failures = []
    if rc != 0:
        failures.append(f"mpirun exited {rc}")
    if result.get("ok") != "1":
        failures.append("the soak's answer: " + (" ".join(f"{k}={v}" for k, v in result.items())
                                                 or "no soak-result line"))
    begin, end = phases.get("begin"), phases.get("end")
    if begin is None or end is None:
        failures.append("the soak printed no begin/end phase lines")
        begin, end = 0.0, time.monotonic() - t0

    warmup = max(args.warmup_s, args.warmup_fraction * (end - begin))
    print(f"warm-up: the first {warmup:.1f} s of the {end - begin:.1f} s workload")

    # The CSV: one row per metrics sample, with each rank's latest RSS at that time.
    ranks = sorted({x[1] for x in rss})
    rows = []
    for t, m in samples:
        row = {"t_s": round(t, 2), **m}
        for r in ranks:
            latest = [x for x in rss if x[1] == r and x[0] <= t]
            for i, name in ((2, "private_rss_kb"), (3, "shared_rss_kb"), (4, "heap_kb"),
                            (5, "timeline_kb"), (6, "recycled_kb")):
                row[f"{name}_rank{r}"] = latest[-1][i] if latest else ""
        rows.append(row)
    csv_path = args.out + ".csv"
    with open(csv_path, "w", newline="") as f:
        fields = ["t_s"] + list(samples[0][1].keys() if samples else []) + \
            [f"{name}_rank{r}" for r in ranks
             for name in ("private_rss_kb", "shared_rss_kb", "heap_kb", "timeline_kb",
                          "recycled_kb")]
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)

    # RSS flat after warm-up, per rank. The judged figure is the private RSS (VmRSS - RssShmem)
    # less the timeline rings' touched bytes: the shared part is the node store's segment and the
    # rings, whose pages count once first touched, so it climbs until each has been used once and
    # is bounded by their sizes; a timeline ring's pages too count as spans first fill them (up
    # to timeline_events x 64 B per thread), so a thread that records a span every few ms adds
    # to the private RSS for minutes. Both are printed beside the judged figure.
    print(f"\n{'rank':>4} {'private RSS - timeline, first quarter':>38} {'last quarter':>13}"
          f" {'growth':>8} {'timeline, first':>16} {'last':>9} {'shared RSS, first':>18}"
          f" {'last':>9} {'heap in use, first':>19} {'last':>9}")
    # The driver's pauses with nothing running (quiet-X .. resume-X): judged by the heap below,
    # left out of the RSS windows here.
    pauses = {n: (phases["quiet-" + n], phases["resume-" + n]) for n in ("mid", "last")
              if "quiet-" + n in phases and "resume-" + n in phases}
    for r in ranks:
        xs = [x for x in rss if x[1] == r and begin + warmup <= x[0] <= end
              and not any(a <= x[0] <= b for a, b in pauses.values())]
        if len(xs) < 8:
            failures.append(f"rank {r}: only {len(xs)} RSS samples after warm-up "
                            f"(run longer, or lower --warmup-s)")
            continue
        q = len(xs) // 4

        def mean(rows, i):
            return sum(x[i] for x in rows) / len(rows) / 1024

        first = mean(xs[:q], 2) - mean(xs[:q], 5)
        last = mean(xs[-q:], 2) - mean(xs[-q:], 5)
        growth = last / first - 1
        print(f"{r:>4} {first:>34.1f} MiB {last:>9.1f} MiB {100 * growth:>7.2f}%"
              f" {mean(xs[:q], 5):>12.1f} MiB {mean(xs[-q:], 5):>5.1f} MiB"
              f" {mean(xs[:q], 3):>14.1f} MiB {mean(xs[-q:], 3):>5.1f} MiB"
              f" {mean(xs[:q], 4):>15.1f} MiB {mean(xs[-q:], 4):>5.1f} MiB")
        bound = args.rss_growth
        if r == 0 and args.rank0_rss_growth is not None:
            bound = args.rank0_rss_growth
        if growth >= bound:
            failures.append(f"rank {r}: private RSS less the timeline grew {100 * growth:.1f}% "
                            f"from the first quarter ({first:.1f} MiB) to the last "
                            f"({last:.1f} MiB), bound {100 * bound:.0f}%")

    # The heap in use at the two pauses, when nothing runs, less what Weft's recycled-block lists
    # keep for reuse (recycled_bytes.hpp): the same unless something leaks. Unlike the RSS it
    # follows neither the heap's high-water mark nor its fragmentation, and with the lists taken
    # out, not which of them a run's history left full either. The samples are those of each
    # pause's second half, once the last messages of the round before it have settled.
    if args.quiet_at_pct > 0 and ranks and rss[0][4] >= 0:
        for name in ("mid", "last"):
            if name not in pauses:
                failures.append(f"the soak printed no quiet-{name}/resume-{name} phase lines")
        if len(pauses) == 2:
            print(f"\n{'rank':>4} {'heap in use - recycled, first pause':>36} {'last pause':>11} "
                  f"{'growth':>10} {'recycled, first':>16} {'last':>9}")
            for r in ranks:
                heap, kept = {}, {}
                for name, (q0, q1) in pauses.items():
                    a = q0 + (q1 - q0) / 2  # the pause's second half
                    xs = sorted((x[4] - x[6], x[6]) for x in rss if x[1] == r and a <= x[0] <= q1)
                    heap[name], kept[name] = xs[len(xs) // 2] if xs else (None, None)
                if None in heap.values():
                    failures.append(f"rank {r}: no heap sample in a pause (lower --sample-s)")
                    continue
                grew = heap["last"] - heap["mid"]
                print(f"{r:>4} {heap['mid']:>32} KiB {heap['last']:>7} KiB {grew:>6} KiB"
                      f" {kept['mid']:>12} KiB {kept['last']:>5} KiB")
                if grew > args.heap_growth_kib:
                    failures.append(f"rank {r}: heap in use less the recycled lists grew {grew} "
                                    f"KiB from the first pause ({heap['mid']} KiB) to the last "
                                    f"({heap['last']} KiB), bound {args.heap_growth_kib} KiB")

    # The store and the object table, idle before and idle after.
    before = [m for t, m in samples if t < begin]
    after = [m for t, m in samples if t > end]
    if not before or not after:
        failures.append(f"no idle control-socket sample {'before' if not before else 'after'} "
                        "the workload")
    else:
        a, b = before[-1], after[-1]
        print(f"\n{'figure':<20} {'before':>12} {'after':>12}")
        for k in IDLE_KEYS + ["store_spilled_bytes"]:
            print(f"{k:<20} {a[k]:>12} {b[k]:>12}")
        for k in IDLE_KEYS:
            if a[k] != b[k]:
                failures.append(f"{k} was {a[k]} before the workload and {b[k]} after it")
        peak = max(m["store_used_bytes"] for _, m in samples)
        print(f"(peak store use during the run: {peak / 2**20:.1f} MiB)")

    png = args.out + ".png"
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
        for r in ranks:
            xs = [x for x in rss if x[1] == r]
            line, = ax1.plot([x[0] for x in xs], [(x[2] - x[5]) / 1024 for x in xs],
                             label=f"rank {r} private - timeline")
            ax1.plot([x[0] for x in xs], [x[3] / 1024 for x in xs], ls="--",
                     color=line.get_color(), label=f"rank {r} shared (store, rings)")
            if r == 0 and xs and xs[0][4] >= 0:
                ax1.plot([x[0] for x in xs], [x[4] / 1024 for x in xs], ls=":",
                         color=line.get_color(), label="rank 0 heap in use (malloc)")
        ax1.set_ylabel("RSS (MiB)")
        ax1.legend(loc="lower right", fontsize=8)
        ts = [t for t, _ in samples]
        ax2.plot(ts, [m["store_used_bytes"] / 2**20 for _, m in samples], label="store used (MiB)")
        ax2.plot(ts, [m["objects_known"] / 1000 for _, m in samples],
                 label="rank 0 object table (k entries)")
        ax2.set_xlabel("seconds")
        ax2.legend(loc="upper right", fontsize=8)
        for ax in (ax1, ax2):
            ax.axvline(begin, color="grey", ls=":")
            ax.axvline(end, color="grey", ls=":")
        fig.suptitle(f"weft soak: {result.get('tasks', '?')} tasks, {result.get('calls', '?')} "
                     f"actor calls, {result.get('objects', '?')} x {args.object_kib} KiB objects, "
                     f"{args.ranks} ranks, {result.get('seconds', '?')} s")
        fig.tight_layout()
        fig.savefig(png, dpi=100)
        print(f"\nwrote {csv_path} and {png}")
    except ImportError:
        print(f"\nwrote {csv_path} (no chart: matplotlib is not installed; Debian: "
              "apt-get install python3-matplotlib)")

    if failures:
        print("\nrun_soak.py: FAIL:\n  " + "\n  ".join(failures))
        for line in log[-20:]:
            print("  | " + line)
        sys.exit(1)
    print("\nrun_soak.py: PASS: private RSS within its bound after warm-up; heap in use at the last "
          "pause within its bound of the first; store and object table back to their starting "
          "counts")


if __name__ == "__main__":
    main()
