#!/usr/bin/python3
"""dask_bench.py - Dask distributed, run the way the benchmark runs every
peer: N tasks, each running CMD as a subprocess, on a LocalCluster of 2
single-thread worker processes.

    dask_bench.py N CMD [ARG...]

Task I (from 1) runs CMD [ARG...] I, what the other systems run for
input I (the benchmark's inputs are 1..N).

Starts the cluster and waits for both workers, then times from the first
submission until every result is back, and prints the seconds.  Every
task must exit 0, or the run fails (exit 1).
"""
import logging
import subprocess
import sys
import time


def run(argv, i):
    return subprocess.run(argv + [str(i)],
                          stdin=subprocess.DEVNULL).returncode


def main():
    n = int(sys.argv[1])
    argv = sys.argv[2:]
    from dask.distributed import Client, LocalCluster

    logging.getLogger("distributed").setLevel(logging.ERROR)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, \
            Client(cluster) as client:
        client.wait_for_workers(2)
        t0 = time.monotonic()
        futures = client.map(run, [argv] * n, range(1, n + 1), pure=False)
        codes = client.gather(futures)
        elapsed = time.monotonic() - t0
    bad = sum(1 for c in codes if c != 0)
    if len(codes) != n or bad:
        print("dask_bench: %d of %d tasks failed" % (bad, n), file=sys.stderr)
        return 1
    print("%.4f" % elapsed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
