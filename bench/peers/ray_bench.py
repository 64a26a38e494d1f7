"""Ray's side of the comparison: Ray's release microbenchmarks, shortened for a 2-core machine.

    build/peers-venv/bin/python bench/peers/ray_bench.py --json out/ray.json [--quick]
        [--microbenchmark out/ray_microbenchmark.txt]

Ray runs locally (ray.init) with 2 CPUs, no dashboard, every server bound to 127.0.0.1.
The workloads follow python/ray/_private/ray_perf.py; the differences (fewer clients, 100 MiB
instead of 800 MiB for put_gigabytes, shorter windows) are there to keep the run near two
minutes, and --microbenchmark runs Ray's own `ray microbenchmark` as a cross-check.
"""

import os
import subprocess
import sys
import time

# Must be set before Ray is imported: with "cluster" mode off, Ray resolves its node address to
# 127.0.0.1 (not the primary interface), so its GCS, raylet and workers listen on loopback only.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

SLOTS = 2
MiB = 1 << 20


def start_ray(ray):
    ray.init(num_cpus=SLOTS, include_dashboard=False, _node_ip_address="127.0.0.1",
             resources={"custom": 100}, log_to_driver=False, configure_logging=False)
    ip = ray.nodes()[0]["NodeManagerAddress"]
    if ip != "127.0.0.1":
        raise RuntimeError(f"Ray bound to {ip}, not loopback; refusing to benchmark")


def bench(rec, args):
    import numpy as np
    import ray

    try:
        t0 = time.perf_counter()
        start_ray(ray)
        common.log(f"[ray] {ray.__version__} started in {time.perf_counter() - t0:.1f} s")
    except Exception as e:
        common.fail_all(rec, f"ray.init failed: {type(e).__name__}: {e}"[:300])
        return

    small_value = ray.remote(common.noop)
    spin_task = ray.remote(common.spin)

    @ray.remote
    class Actor:
        def small_value(self):
            return b"ok"

    @ray.remote(num_cpus=0)
    class Client:
        """A second submitter (ray_perf's multi-client shape): an actor that submits tasks."""

        def tasks(self, n):
            ray.get([small_value.remote() for _ in range(n)])

        def actor_calls(self, actor, n):
            ray.get([actor.small_value.remote() for _ in range(n)])

    t = dict(seconds=args.seconds, trials=args.trials)
    batch = 200 if args.quick else 1000
    ray.get([small_value.remote() for _ in range(20)])  # start the worker pool

    def run(name, fn, multiplier=1.0, unit=None):
        if common.wanted(args, name):
            rec.run(name, common.rate, fn, multiplier, unit=unit, **t)

    run("single_client_tasks_sync", lambda: ray.get(small_value.remote()))
    run("single_client_tasks_async",
        lambda: ray.get([small_value.remote() for _ in range(batch)]), batch)

    clients = [Client.remote() for _ in range(SLOTS)]
    run("multi_client_tasks_async",
        lambda: ray.get([c.tasks.remote(batch) for c in clients]), batch * len(clients))

    a = Actor.remote()
    run("1_1_actor_calls_sync", lambda: ray.get(a.small_value.remote()))
    run("1_1_actor_calls_async",
        lambda: ray.get([a.small_value.remote() for _ in range(batch)]), batch)

    # n:n: n clients, each calling its own actor, all at once.
    servers = [Actor.remote() for _ in clients]
    run("n_n_actor_calls_async",
        lambda: ray.get([c.actor_calls.remote(s, batch) for c, s in zip(clients, servers)]),
        batch * len(clients))

    value = ray.put(0)
    run("single_client_put_calls", lambda: ray.put(0))
    run("single_client_get_calls", lambda: ray.get(value))

    big = np.zeros(100 * MiB // 8, dtype=np.int64)
    mib1 = np.zeros(MiB // 8, dtype=np.int64)
    run("single_client_put_gigabytes", lambda: ray.put(big), big.nbytes / 1e9)
    # put + get: the get returns a zero-copy view of the shared-memory object; np.sum touches
    # one element per page so the read is real without timing a full scan.
    run("single_client_put_get_1MiB", lambda: ray.get(ray.put(mib1))[::512].sum())
    run("single_client_put_get_100MiB", lambda: ray.get(ray.put(big))[::512].sum(),
        big.nbytes / 1e9)

    n_pgs = 20 if args.quick else 100

    def pg_create_removal():
        pgs = [ray.util.placement_group([{"custom": 0.001}]) for _ in range(n_pgs)]
        for pg in pgs:
            if not pg.wait(timeout_seconds=30):
                raise RuntimeError("placement group not created within 30 s")
        for pg in pgs:
            ray.util.remove_placement_group(pg)

    run("placement_group_create_removal", pg_create_removal, n_pgs)

    if common.wanted(args, "efficiency"):
        def run_batch(task_us, n):
            start = time.perf_counter()
            ray.get([spin_task.remote(task_us) for _ in range(n)])
            return time.perf_counter() - start

        common.efficiency_sweep(rec, run_batch, SLOTS, args.quick)
    ray.shutdown()


def microbenchmark(path, quick):
    """Ray's own `ray microbenchmark`, filtered and time-bounded, output kept verbatim.

    Ray's command sleeps 10 s before each test and runs 9 s more, so the full suite takes about
    8 minutes here; TESTS_TO_RUN keeps the rows comparable to ours. SIGINT on timeout lets its
    atexit handler shut the local cluster down.
    """
    pattern, limit = ("single client tasks", 150) if quick else ("single client", 300)
    env = dict(os.environ, TESTS_TO_RUN=pattern)
    ray_cli = os.path.join(os.path.dirname(sys.executable), "ray")
    cmd = ["timeout", "-s", "INT", "-k", "30", str(limit), ray_cli, "microbenchmark"]
    common.log(f"[ray] {' '.join(cmd)} (TESTS_TO_RUN={pattern!r})")
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    with open(path, "w") as f:
        f.write(f"$ TESTS_TO_RUN='{pattern}' ray microbenchmark   "
                f"(timeout {limit} s, exit {p.returncode}, {time.perf_counter() - t0:.0f} s)\n")
        f.write(p.stdout)


def main():
    args = common.parse_args(__doc__, lambda p: p.add_argument(
        "--microbenchmark", help="also run `ray microbenchmark`, its output to this file"))
    rec = common.Recorder("ray", args.json)
    try:
        import ray  # noqa: F401
    except Exception as e:
        common.fail_all(rec, f"import ray failed: {type(e).__name__}: {e}"[:300])
        rec.write()
        return 0
    bench(rec, args)
    rec.write()
    if args.microbenchmark:
        microbenchmark(args.microbenchmark, args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
