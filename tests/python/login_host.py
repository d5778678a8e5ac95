"""The notebook client (python/ckspool.py) on a login host that shares the
spool with the workers' host only through a network filesystem, as a
notebook on a cluster's login node uses it.

    python3 login_host.py PATH WORKER_HOST SPOOL_PROGRAM SCRATCH

PATH is the spool directory as this host sees it (its sshfs mount) or a
spoolfs mount of it made on this host; WORKER_HOST is the hostname of
the one host whose worker runs the tasks; SCRATCH a directory that
every host sees, the tasks' working directory.  tests/integration/t_hosts.sh
runs it on a simulated host (scripts/hosts.sh), where no change made on
another host raises an inotify event: every wait here ends on rescans.

Each check raises AssertionError at its first difference (exit 1, the
traceback naming it); a line on stdout says each one that passed.  The
Python functions are sent by value (cloudpickle), since they are of
__main__.
"""
import os
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "python"))

import ckspool  # noqa: E402

WAIT = 60       # seconds: the bound of every wait here


def square(x):
    return x * x, socket.gethostname()


def total(pairs):
    return sum(v for v, _ in pairs)


def refuse(why):
    print("refusing", why)
    raise ValueError(why)


def check(what, got, want):
    if got != want:
        raise AssertionError("%s: got %r, want %r" % (what, got, want))
    print("ok:", what, flush=True)


def main():
    path, worker, spool, scratch = sys.argv[1:5]
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
    f = c.submit(refuse, "across hosts")
    try:
        f.result(timeout=WAIT)
        raise AssertionError("a call that raised gave a result")
    except ValueError as e:
        check("the exception of a call", str(e), "across hosts")
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


if __name__ == "__main__":
    main()
