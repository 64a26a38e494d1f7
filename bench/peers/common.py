"""Shared pieces of the peer benchmarks: the row format, the timing loop, the overhead sweep.

Every peer script writes the same JSON rows as Weft's C++ benches (bench/core), so one report
generator can put them side by side:

  {"system": "ray", "name": "single_client_tasks_sync", "value": 372.1, "unit": "per_s"}
  {"system": "ray", "name": "efficiency", "task_us": 100.0, "value": 0.41, "unit": "ratio"}
  {"system": "dask", "name": "placement_group_create_removal", "value": null, "unit": "per_s",
   "note": "Dask has no placement groups"}

A value of null means "not measured"; "note" says why (unsupported, or the error it gave).
"""

import argparse
import json
import os
import sys
import time
import traceback

# Worker processes that peers spawn (Dask nannies, MPI pool workers) import this module by name.
_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in os.environ.get("PYTHONPATH", "").split(os.pathsep):
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [_HERE, os.environ.get("PYTHONPATH")]))

# The workload names are Ray's release microbenchmark names (python/ray/_private/ray_perf.py),
# written with underscores, plus the object round trips the issue asks for. The report keeps
# this order.
WORKLOADS = [
    ("single_client_tasks_sync", "per_s"),
    ("single_client_tasks_async", "per_s"),
    ("multi_client_tasks_async", "per_s"),
    ("1_1_actor_calls_sync", "per_s"),
    ("1_1_actor_calls_async", "per_s"),
    ("n_n_actor_calls_async", "per_s"),
    ("single_client_put_calls", "per_s"),
    ("single_client_get_calls", "per_s"),
    ("single_client_put_gigabytes", "GB_per_s"),
    ("single_client_put_get_1MiB", "per_s"),
    ("single_client_put_get_100MiB", "GB_per_s"),
    ("placement_group_create_removal", "per_s"),
]
UNITS = dict(WORKLOADS)

# Task lengths of the overhead curve: 1 us .. 10 ms, three points per decade.
TASK_US = [1, 3, 10, 30, 100, 300, 1000, 3000, 10000]


def spin(us):
    """Busy-waits `us` microseconds: the "useful work" of the overhead curve.

    A spin (not a sleep) so the work really occupies a core, as a compute task would.
    """
    end = time.perf_counter_ns() + int(us * 1000)
    while time.perf_counter_ns() < end:
        pass
    return us


def echo(x):
    return x


def noop():
    return b"ok"


def noop_i(i):
    """noop for map-style APIs, which pass one argument per task."""
    return b"ok"


class Recorder:
    """Collects rows, prints each as it comes, writes them all as a JSON list."""

    def __init__(self, system, path):
        self.system = system
        self.path = path
        self.rows = []

    def add(self, name, value, unit=None, **extra):
        row = {"system": self.system, "name": name, "value": value,
               "unit": unit or UNITS.get(name, "per_s")}
        row.update(extra)
        self.rows.append(row)
        shown = "n/a" if value is None else f"{value:,.4g}"
        note = f"  ({extra['note']})" if extra.get("note") else ""
        task = f" task_us={extra['task_us']:g}" if "task_us" in extra else ""
        print(f"[{self.system}] {name}{task}: {shown} {row['unit']}{note}", flush=True)

    def unsupported(self, name, why):
        self.add(name, None, note=why)

    def write(self):
        if self.path:
            os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
            with open(self.path, "w") as f:
                json.dump(self.rows, f, indent=1)

    def run(self, name, fn, *args, unit=None, note=None, **kwargs):
        """Runs one workload; an exception becomes a null row with the error, not a crash."""
        try:
            value = fn(*args, **kwargs)
        except Exception as e:  # recorded in the table: a peer that fails says how
            traceback.print_exc()
            self.add(name, None, unit=unit, note=f"error: {type(e).__name__}: {e}"[:300])
            return
        if note:
            self.add(name, value, unit=unit, note=note)
        else:
            self.add(name, value, unit=unit)


def rate(fn, multiplier=1.0, seconds=2.0, trials=3, warmup=0.5):
    """multiplier * calls / second of fn, best-of-`trials` windows of `seconds` each.

    Same shape as Ray's timeit (warm up, then fixed-length windows) but shorter, because the
    machine is 2 shared cores and each peer must finish in about two minutes. Best-of rather
    than mean: on a shared machine the noise only ever slows things down.
    """
    start = time.perf_counter()
    while time.perf_counter() - start < warmup:
        fn()
    best = 0.0
    for _ in range(trials):
        count = 0
        start = time.perf_counter()
        while True:
            fn()
            count += 1
            elapsed = time.perf_counter() - start
            if elapsed >= seconds:
                break
        best = max(best, multiplier * count / elapsed)
    return best


def sweep_count(task_us, slots, quick):
    """How many tasks to run at one task length: ~ideal_s of pure work, bounded both ways."""
    ideal_s = 0.15 if quick else 0.5
    cap = 300 if quick else 1500
    return int(max(20, min(cap, ideal_s * slots * 1e6 / task_us)))


def efficiency_sweep(rec, run_batch, slots, quick):
    """Efficiency = useful work / (wall time * worker slots), for each task length.

    run_batch(task_us, n) submits n spin tasks of task_us each, waits for all of them and
    returns the wall time in seconds. 1.0 means the runtime added nothing; the table reports
    the shortest task length that reaches 50 % and 90 %.
    """
    for task_us in TASK_US:
        n = sweep_count(task_us, slots, quick)
        try:
            run_batch(task_us, min(n, 20))  # warm the workers and code paths
            wall = run_batch(task_us, n)
        except Exception as e:
            traceback.print_exc()
            rec.add("efficiency", None, unit="ratio", task_us=float(task_us),
                    note=f"error: {type(e).__name__}: {e}"[:300])
            continue
        rec.add("efficiency", n * task_us * 1e-6 / (wall * slots), unit="ratio",
                task_us=float(task_us), tasks=n, slots=slots)


def parse_args(description, extra=None):
    p = argparse.ArgumentParser(description=description,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", help="write the rows to this file")
    p.add_argument("--quick", action="store_true", help="shorter windows and fewer tasks")
    p.add_argument("--only", default="", help="comma list of workload names to run")
    if extra:
        extra(p)
    args = p.parse_args()
    args.seconds = 0.5 if args.quick else 1.5
    args.trials = 2 if args.quick else 3
    args.only = set(filter(None, args.only.split(",")))
    return args


def wanted(args, name):
    return not args.only or name in args.only


def fail_all(rec, error, names=None):
    """A peer that cannot start at all: one null row per workload, each with the error."""
    for name, unit in WORKLOADS:
        if names is None or name in names:
            rec.add(name, None, unit=unit, note=error)
    rec.add("efficiency", None, unit="ratio", task_us=0.0, note=error)


def log(msg):
    print(msg, file=sys.stderr, flush=True)
