"""What the hardware and the raw transports give Python, measured in the same run as the peers.

    python3 bench/peers/baseline_bench.py --json out/baseline.json [--quick]

Rows (system "baseline"): a 100 MiB numpy copy (the floor for any put that copies), and raw
mpi4py point-to-point between two ranks on loopback (what mpi4py.futures builds on): the
round trip of a small pickled object and the bandwidth of a 100 MiB buffer. The script
relaunches itself under `mpirun -n 2` for the MPI rows, as mpi4py_bench.py does.
"""

import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

MiB = 1 << 20


def memcpy(rec, args):
    import numpy as np

    src = np.ones(100 * MiB, dtype=np.uint8)
    dst = np.empty_like(src)
    rec.run("py_memcpy_100MiB", common.rate, lambda: np.copyto(dst, src), src.nbytes / 1e9,
            unit="GB_per_s", seconds=args.seconds, trials=args.trials)


def mpi_rows(rec, args):
    """Runs on 2 ranks; rank 0 records."""
    import numpy as np
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    iters = 2000 if args.quick else 10000

    def pingpong(n):
        comm.Barrier()
        t0 = time.perf_counter()
        for _ in range(n):
            if rank == 0:
                comm.send(b"ok", dest=1)
                comm.recv(source=1)
            else:
                comm.recv(source=0)
                comm.send(b"ok", dest=0)
        return time.perf_counter() - t0

    pingpong(200)
    rtt_us = min(pingpong(iters) for _ in range(3)) / iters * 1e6
    buf = np.zeros(100 * MiB, dtype=np.uint8)
    reps = 3 if args.quick else 10

    def bandwidth():
        comm.Barrier()
        t0 = time.perf_counter()
        for _ in range(reps):
            if rank == 0:
                comm.Send(buf, dest=1)
            else:
                comm.Recv(buf, source=0)
        comm.Barrier()
        return reps * buf.nbytes / (time.perf_counter() - t0) / 1e9

    bandwidth()
    bw = max(bandwidth() for _ in range(2))
    if rank == 0:
        rec.add("mpi4py_pingpong_rtt", rtt_us, unit="us", note="comm.send/recv of a pickled "
                "object, 2 ranks, round trip")
        rec.add("mpi4py_send_100MiB", bw, unit="GB_per_s", note="comm.Send/Recv of a buffer")


def main():
    args = common.parse_args(__doc__)
    if os.environ.get("WEFTDEV_PEERS_UNDER_MPIRUN"):
        rec = common.Recorder("baseline", args.json)
        mpi_rows(rec, args)
        from mpi4py import MPI
        if MPI.COMM_WORLD.Get_rank() == 0:
            rec.write()
        return 0

    rec = common.Recorder("baseline", args.json)
    memcpy(rec, args)
    # Relaunched rather than imported: importing mpi4py.MPI here would make this process an MPI
    # singleton whose environment confuses the mpirun it starts.
    flags = ["--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "-n", "2",
             "--mca", "btl", "self,vader,tcp", "--mca", "btl_tcp_if_include", "lo",
             "--mca", "oob_tcp_if_include", "lo", "-x", "PYTHONPATH",
             "-x", "WEFTDEV_PEERS_UNDER_MPIRUN=1"]
    mpi_json = (args.json or "/tmp/weft-baseline.json") + ".mpi"
    cmd = ["mpirun", *flags, sys.executable, os.path.abspath(__file__), "--json", mpi_json,
           *(["--quick"] if args.quick else [])]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=180)
    print(p.stdout, end="")
    try:
        with open(mpi_json) as f:
            rec.rows += json.load(f)
        os.remove(mpi_json)
    except (OSError, ValueError) as e:
        tail = (p.stdout.strip().splitlines() or ["no output"])[-1][:200]
        for name, unit in (("mpi4py_pingpong_rtt", "us"), ("mpi4py_send_100MiB", "GB_per_s")):
            rec.add(name, None, unit=unit, note=f"error: mpirun exited {p.returncode}: {tail}")
    rec.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
