"""mpi4py.futures' side of the comparison.

    python3 bench/peers/mpi4py_bench.py --json out/mpi4py.json [--quick]

Started on its own, the script relaunches itself as
    mpirun --allow-run-as-root --oversubscribe -n 3 --mca btl self,vader,tcp
           --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo
           python -m mpi4py.futures bench/peers/mpi4py_bench.py ...
so rank 0 is the client and ranks 1-2 are the pool's 2 workers (the same 2 slots Ray and Dask
get). mpi4py.futures is a task pool only: no actors, no object store, no placement groups, one
submitting client. Object round trips are measured as an echo task (the array travels to a
worker as the argument and back as the result), and the rows say so.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

SLOTS = 2
MiB = 1 << 20
MPIRUN_FLAGS = ["--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "-n", str(SLOTS + 1),
                "--mca", "btl", "self,vader,tcp", "--mca", "btl_tcp_if_include", "lo",
                "--mca", "oob_tcp_if_include", "lo", "-x", "PYTHONPATH",
                "-x", "WEFTDEV_PEERS_UNDER_MPIRUN=1"]


def relaunch_under_mpirun():
    cmd = ["mpirun", *MPIRUN_FLAGS, sys.executable, "-m", "mpi4py.futures",
           os.path.abspath(__file__), *sys.argv[1:]]
    common.log("[mpi4py] " + " ".join(cmd))
    os.execvp(cmd[0], cmd)


def bench(rec, args):
    import numpy as np
    from mpi4py import MPI
    from mpi4py.futures import MPIPoolExecutor, wait

    ex = MPIPoolExecutor()
    workers = ex.num_workers if hasattr(ex, "num_workers") else SLOTS
    ex.submit(common.noop).result()  # the pool starts lazily
    common.log(f"[mpi4py] {MPI.Get_library_version().splitlines()[0]}; {workers} workers")

    t = dict(seconds=args.seconds, trials=args.trials)
    batch = 200 if args.quick else 1000

    def run(name, fn, multiplier=1.0, unit=None, note=None):
        if common.wanted(args, name):
            rec.run(name, common.rate, fn, multiplier, unit=unit, note=note, **t)

    def async_batch(fn, arg, n):
        done, _ = wait([ex.submit(fn, arg) for _ in range(n)])
        for f in done:
            f.result()

    run("single_client_tasks_sync", lambda: ex.submit(common.noop).result())
    run("single_client_tasks_async", lambda: async_batch(common.noop_i, 0, batch), batch)
    single = "not supported: an MPIPoolExecutor has one submitting client (rank 0)"
    rec.unsupported("multi_client_tasks_async", single)
    no_actors = "not supported: mpi4py.futures has no actors (stateless pool workers only)"
    for name in ("1_1_actor_calls_sync", "1_1_actor_calls_async", "n_n_actor_calls_async"):
        rec.unsupported(name, no_actors)
    no_store = "not supported: mpi4py.futures has no object store"
    rec.unsupported("single_client_put_calls", no_store)
    rec.unsupported("single_client_get_calls", no_store)

    big = np.zeros(100 * MiB // 8, dtype=np.int64)
    mib1 = np.zeros(MiB // 8, dtype=np.int64)
    run("single_client_put_gigabytes", lambda: ex.submit(len, big).result(), big.nbytes / 1e9,
        note="no object store: 100 MiB task argument shipped to a worker")
    echo = "no object store: echo task, array to a worker and back"
    run("single_client_put_get_1MiB", lambda: ex.submit(common.echo, mib1).result(), note=echo)
    run("single_client_put_get_100MiB", lambda: ex.submit(common.echo, big).result(),
        big.nbytes / 1e9, note=echo)
    rec.unsupported("placement_group_create_removal",
                    "not supported: mpi4py.futures has no placement groups")

    if common.wanted(args, "efficiency"):
        def run_batch(task_us, n):
            start = time.perf_counter()
            async_batch(common.spin, task_us, n)
            return time.perf_counter() - start

        common.efficiency_sweep(rec, run_batch, workers, args.quick)
    ex.shutdown()


def main():
    args = common.parse_args(__doc__)
    rec = common.Recorder("mpi4py", args.json)
    if not os.environ.get("WEFTDEV_PEERS_UNDER_MPIRUN"):
        # Importing mpi4py.MPI here would make this process an MPI singleton whose OMPI_/PMIX_
        # variables then confuse the mpirun it starts: look for the module without loading it.
        import importlib.util
        if importlib.util.find_spec("mpi4py") is None:
            common.fail_all(rec, "mpi4py is not installed for " + sys.executable)
            rec.write()
            return 0
        relaunch_under_mpirun()
    bench(rec, args)
    rec.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
