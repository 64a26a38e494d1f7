"""Dask distributed's side of the comparison.

    python3 bench/peers/dask_bench.py --json out/dask.json [--quick]

A LocalCluster of 2 worker processes (1 thread each) with the scheduler, nannies and workers on
127.0.0.1 and no dashboard. Mapping of Ray's workloads onto Dask:
  tasks            client.submit(f, pure=False) / client.map + gather
  multi client     extra driver processes, each with its own Client on the same scheduler
  actors           client.submit(Cls, actor=True); method calls return ActorFutures
  put / get        client.scatter (data to a worker) / future.result() (data back)
  placement groups none in Dask: the row says so
"""

import multiprocessing as mp
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

SLOTS = 2
MiB = 1 << 20


class Server:
    def small_value(self):
        return b"ok"


def _client_proc(address, mode, batch, seconds, start_at, out):
    """One extra driver: its own Client, submitting batches until `seconds` have passed."""
    from distributed import Client

    with Client(address) as client:  # the default client: actor proxies look it up
        actor = client.submit(Server, actor=True).result() if mode == "actors" else None
        while time.time() < start_at:  # all clients start their window together
            time.sleep(0.001)
        count, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            if actor is not None:
                [f.result() for f in [actor.small_value() for _ in range(batch)]]
            else:
                client.gather(client.map(common.noop_i, range(batch), pure=False))
            count += batch
        out.put(count / (time.perf_counter() - t0))


def multi_client(address, mode, n_clients, batch, seconds):
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    start_at = time.time() + 8.0  # spawning and connecting take a few seconds here
    procs = [ctx.Process(target=_client_proc,
                         args=(address, mode, batch, seconds, start_at, out))
             for _ in range(n_clients)]
    for p in procs:
        p.start()
    rates = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=30)
    return sum(rates)


def bench(rec, args):
    import numpy as np
    from distributed import Client, LocalCluster

    try:
        t0 = time.perf_counter()
        cluster = LocalCluster(n_workers=SLOTS, threads_per_worker=1, processes=True,
                               host="127.0.0.1", dashboard_address=None, protocol="tcp")
        client = Client(cluster)
        import distributed
        common.log(f"[dask] distributed {distributed.__version__} started in "
                   f"{time.perf_counter() - t0:.1f} s at {cluster.scheduler_address}")
    except Exception as e:
        common.fail_all(rec, f"LocalCluster failed: {type(e).__name__}: {e}"[:300])
        return

    t = dict(seconds=args.seconds, trials=args.trials)
    batch = 100 if args.quick else 500

    def run(name, fn, multiplier=1.0, unit=None):
        if common.wanted(args, name):
            rec.run(name, common.rate, fn, multiplier, unit=unit, **t)

    run("single_client_tasks_sync", lambda: client.submit(common.noop, pure=False).result())
    run("single_client_tasks_async",
        lambda: client.gather(client.map(common.noop_i, range(batch), pure=False)), batch)
    if common.wanted(args, "multi_client_tasks_async"):
        rec.run("multi_client_tasks_async", multi_client, cluster.scheduler_address, "tasks",
                SLOTS, batch, args.seconds * 2)

    actor = client.submit(Server, actor=True).result()
    run("1_1_actor_calls_sync", lambda: actor.small_value().result())
    run("1_1_actor_calls_async",
        lambda: [f.result() for f in [actor.small_value() for _ in range(batch)]], batch)
    if common.wanted(args, "n_n_actor_calls_async"):
        rec.run("n_n_actor_calls_async", multi_client, cluster.scheduler_address, "actors",
                SLOTS, batch, args.seconds * 2)

    small = client.scatter(0, hash=False)
    run("single_client_put_calls", lambda: client.scatter(0, hash=False))
    run("single_client_get_calls", lambda: small.result())
    big = np.zeros(100 * MiB // 8, dtype=np.int64)
    mib1 = np.zeros(MiB // 8, dtype=np.int64)
    run("single_client_put_gigabytes", lambda: client.scatter(big, hash=False), big.nbytes / 1e9)
    run("single_client_put_get_1MiB", lambda: client.scatter(mib1, hash=False).result())
    run("single_client_put_get_100MiB", lambda: client.scatter(big, hash=False).result(),
        big.nbytes / 1e9)
    rec.unsupported("placement_group_create_removal",
                    "not supported: Dask has no placement groups (worker resources are "
                    "per-task limits, not reservations)")

    if common.wanted(args, "efficiency"):
        def run_batch(task_us, n):
            start = time.perf_counter()
            client.gather(client.map(common.spin, [task_us] * n, pure=False))
            return time.perf_counter() - start

        common.efficiency_sweep(rec, run_batch, SLOTS, args.quick)
    client.close()
    cluster.close()


def main():
    args = common.parse_args(__doc__)
    rec = common.Recorder("dask", args.json)
    try:
        import distributed  # noqa: F401
    except Exception as e:
        common.fail_all(rec, f"import distributed failed: {type(e).__name__}: {e}"[:300])
        rec.write()
        return 0
    bench(rec, args)
    rec.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
