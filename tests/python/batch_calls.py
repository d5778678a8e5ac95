"""The notebook client (python/ckspool.py) driving worker jobs of a real
batch system, as a dask-jobqueue user drives a SLURMCluster or an
SGECluster: scale to a job, map Python calls onto its worker, gather,
shut the cluster down.

    python3 batch_calls.py SPOOL SPOOL_PROGRAM SCRATCH JOBVAR

SPOOL is a spool whose cluster section has the batch system's backend
and whose spoold runs; SCRATCH, the tasks' working directory; JOBVAR the
variable in which the batch system gives a job its ID (SLURM_JOB_ID,
JOB_ID).  tests/integration/batch.sh (python_calls_in_a_job) runs it
for t_slurm.sh and t_sge.sh.

Each check raises AssertionError at its first difference (exit 1, the
traceback naming it); a line on stdout says each one that passed, and
the last two lines are "jobs: ..." (the jobs the results name) and
"shutdown: ..." (what spool shutdown said), for the caller to compare
with the queue.
"""
import os
import socket
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "python"))

import ckspool  # noqa: E402

WAIT = 120      # seconds: a job's start included


def in_job(x, var):
    return x * x, os.environ.get(var, ""), socket.gethostname()


def refuse(why):
    raise ValueError(why)


def check(what, got, want):
    if got != want:
        raise AssertionError("%s: got %r, want %r" % (what, got, want))
    print("ok:", what, flush=True)


def main():
    path, spool, scratch, var = sys.argv[1:5]
    os.chdir(scratch)
    c = ckspool.Client(path, spool=spool)
    said = c.scale(jobs=1)
    check("scale(jobs=1) said it", "kind default: 1 job (" in said, True)
    c.wait_for_workers(1, timeout=WAIT)
    check("a worker", len([w for w in c.workers().values()
                           if w == "up"]) >= 1, True)
    fs = c.map(in_job, range(12), var=var)
    got = c.gather(fs)
    check("values of the map", [v for v, _, _ in got],
          [x * x for x in range(12)])
    check("every call ran in a job", all(j for _, j, _ in got), True)
    check("on this host", {h for _, _, h in got}, {socket.gethostname()})
    jobs = sorted({f.record()["job"] for f in fs})
    check("every result names its job", all(jobs), True)
    f = c.submit(refuse, "in a job")
    try:
        f.result(timeout=WAIT)
        raise AssertionError("a call that raised gave a result")
    except ValueError as e:
        check("the exception of a call in a job", str(e), "in a job")
    check("its job", f.record()["job"] in jobs, True)
    print("jobs:", " ".join(str(j) for j in jobs), flush=True)
    out = c.shutdown(timeout=60)
    print("shutdown:", " ".join(out.split()), flush=True)


if __name__ == "__main__":
    main()
