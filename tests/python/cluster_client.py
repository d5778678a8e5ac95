"""The notebook client (python/ckspool.py) where a notebook on a cluster
uses it; run by the integration tests.

    python3 cluster_client.py login-host PATH WORKER_HOST SPOOL_PROGRAM SCRATCH

  On a login host that shares the spool with the workers' host only
  through a network filesystem: PATH is the spool directory as this host
  sees it (its sshfs mount) or a spoolfs mount of it made on this host;
  WORKER_HOST the hostname of the one host whose worker runs the tasks.
  tests/integration/t_hosts.sh runs it on a simulated host
  (scripts/hosts.sh), where no change made on another host raises an
  inotify event: every wait there ends on rescans.

    python3 cluster_client.py batch-job SPOOL SPOOL_PROGRAM SCRATCH JOBVAR

  Driving worker jobs of a real batch system, as a dask-jobqueue user
  drives a SLURMCluster or an SGECluster: scale to a job, map Python
  calls onto its worker, gather, shut the cluster down.  SPOOL's cluster
  section has the batch system's backend and its spoold runs; JOBVAR is
  the variable in which the batch system gives a job its ID
  (SLURM_JOB_ID, JOB_ID).  tests/integration/batch.sh
  (python_calls_in_a_job) runs it for t_slurm.sh and t_sge.sh.  The
  last two lines it prints are "jobs: ..." (the jobs the results name)
  and "shutdown: ..." (what spool shutdown said), for the caller to
  compare with the queue.

SCRATCH is a directory that every host sees, the tasks' working
directory.  Each check raises AssertionError at its first difference
(exit 1, the traceback naming it); a line on stdout says each one that
passed.  The Python functions are sent by value (cloudpickle), since
they are of __main__.
"""
import os
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "python"))

import ckspool  # noqa: E402

WAIT = 60       # seconds: the bound of every wait on a task
JOB_WAIT = 120  # a batch job's start included


def square(x):
    return x * x, socket.gethostname()


def total(pairs):
    return sum(v for v, _ in pairs)


def in_job(x, var):
    return x * x, os.environ.get(var, ""), socket.gethostname()


def refuse(why):
    print("refusing", why)
    raise ValueError(why)


def check(what, got, want):
    if got != want:
        raise AssertionError("%s: got %r, want %r" % (what, got, want))
    print("ok:", what, flush=True)


def raising_call(c, why, what, timeout):
    """Submit refuse(why): its exception is raised by result(), checked
    as what; the future."""
    f = c.submit(refuse, why)
    try:
        f.result(timeout=timeout)
        raise AssertionError("a call that raised gave a result")
    except ValueError as e:
        check(what, str(e), why)
    return f


def login_host(path, worker, spool, scratch):
    os.chdir(scratch)
    c = ckspool.Client(path, spool=spool)
    check("kind of path", c.mounted, not os.path.exists(
        os.path.join(path, "FORMAT")))
    # client.map of a function and gather: every call ran on the worker
    fs = c.map(square, range(16))
    check("gather of a map", c.gather(fs),
          [(i * i, worker) for i in range(16)])
    # futures as arguments: the task waits for them, reads their results
    t = c.submit(total, fs)
    check("a call on the map's results", t.result(timeout=WAIT),
          sum(i * i for i in range(16)))
    # a command: its stdout is its result
    h = c.submit("hostname")
    check("a command's stdout", h.result(timeout=WAIT), worker + "\n")
    # a call that raises: the exception, raised here, and its output
    f = raising_call(c, "across hosts", "the exception of a call", WAIT)
    check("its state and stdout", (f.state, f.stdout()),
          ("failed", "refusing across hosts\n"))
    # ... and its dependent is cancelled, as any failed task's
    d = c.submit(total, [f])
    try:
        d.result(timeout=WAIT)
        raise AssertionError("the dependent of a failed call ran")
    except ckspool.CancelledError as e:
        check("the dependent of a failed call", "dependency %d failed" %
              f.id in str(e), True)
    # as_completed: each future once, in any order
    gs = c.map("echo {}", range(6))
    seen = [g.id for g in c.as_completed(gs, timeout=WAIT)]
    check("as_completed", sorted(seen), sorted(g.id for g in gs))
    check("their outputs", [g.result() for g in gs],
          ["%d\n" % i for i in range(6)])
    # a running task cancelled from here, on the worker's host
    started = os.path.join(scratch, "started.%d" % os.getpid())
    long = c.submit("touch %s; sleep 300" % started)
    done, _ = c.wait([long], timeout=0.2)
    check("a wait that times out", done, set())
    end = time.monotonic() + WAIT
    while not os.path.exists(started):
        if time.monotonic() > end:
            raise AssertionError("task %d never ran: %s" % (long.id,
                                                             long.state))
        time.sleep(0.05)
    check("cancel of a running task", long.cancel(), True)
    try:
        long.result(timeout=WAIT)
        raise AssertionError("a cancelled task gave a result")
    except ckspool.CancelledError:
        pass
    check("its state", (long.cancelled(), long.record()["host"]),
          (True, worker))



def batch_job(path, spool, scratch, var):
    os.chdir(scratch)
    c = ckspool.Client(path, spool=spool)
    said = c.scale(jobs=1)
    check("scale(jobs=1) said it", "kind default: 1 job (" in said, True)
    c.wait_for_workers(1, timeout=JOB_WAIT)
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
    f = raising_call(c, "in a job", "the exception of a call in a job",
                     JOB_WAIT)
    check("its job", f.record()["job"] in jobs, True)
    print("jobs:", " ".join(str(j) for j in jobs), flush=True)
    out = c.shutdown(timeout=60)
    print("shutdown:", " ".join(out.split()), flush=True)



if __name__ == "__main__":
    if len(sys.argv) != 6 or sys.argv[1] not in ("login-host", "batch-job"):
        sys.exit(__doc__)
    {"login-host": login_host, "batch-job": batch_job}[sys.argv[1]](
        *sys.argv[2:])
