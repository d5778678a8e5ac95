"""Tests of python/ckspool.py against a real spoold --local, twice: on the
spool directory (DirectTests, through the spool CLI) and on a spoolfs
mount of it (MountTests).  unittest only.

Environment: BIN, the directory holding spool, spoold, ckworker and
spoolfs (tests/integration/run.sh exports it; t_python.sh runs these);
TMPDIR, where the spools and mounts are made.  A missing program or a
mount that does not come up fails the tests; nothing is skipped.
"""
import concurrent.futures
import contextlib
import io
import os
import pickle
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import unittest.mock
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import ckspool  # noqa: E402

BIN = os.environ.get("BIN", "")
WAIT = 60       # seconds: the bound of every wait here


def prog(name):
    path = os.path.join(BIN, name)
    if not os.access(path, os.X_OK):
        raise RuntimeError("%s: not found (set BIN to the built programs)" %
                           path)
    return path


def until(cond, what, limit=WAIT):
    """Poll cond() every 20 ms until true; fail after limit seconds."""
    end = time.monotonic() + limit
    while not cond():
        if time.monotonic() > end:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.02)


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def is_mounted(path):
    with open("/proc/mounts") as f:
        return any(line.split()[1] == path and line.split()[2] ==
                   "fuse.spoolfs" for line in f)


# functions the Python call tests submit: of this module, which the
# tasks import by name (their working directory is this one's), and sent
# by name with the standard pickle too
def _add(a, b=0):
    return a + b


def _nest(pair, d):
    return {"sum": pair[0] + pair[1][0] + pair[1][1] + d["k"],
            "types": [type(pair).__name__, type(pair[1]).__name__]}


def _fail(what):
    print("about to fail")
    raise ValueError(what)


def _needs(path, v):
    with open(path):
        return v


def _sleep(s):
    time.sleep(s)


def _lock():
    return threading.Lock()


def _whoami():
    return {"cwd": os.getcwd(), "task": int(os.environ["SPOOL_TASK_ID"]),
            "argv": sys.argv}


def count_done_calls(test):
    """Count the calls of Future.done() (a look at one task's files)
    until test ends: a list whose [0] is the count."""
    count = [0]
    real = ckspool.Future.done

    def done(f):
        count[0] += 1
        return real(f)
    ckspool.Future.done = done
    test.addCleanup(setattr, ckspool.Future, "done", real)
    return count


class Cluster:
    """A spool with spoold --local 2 (4 cores, so 4 task slots, each), and
    optionally a spoolfs mount.  The tests hold at most 3 tasks running
    at once: spoold may place them all on one worker.  With local=False,
    spoold starts no worker of its own, and cluster (lines of
    spool.yaml) says what its worker jobs are."""

    def __init__(self, mount, local=True, cluster=""):
        self.tmp = tempfile.mkdtemp(prefix="ckspool-py.")
        self.spool = os.path.join(self.tmp, "spool")
        subprocess.run([prog("spool"), "-S", self.spool, "init"], check=True,
                       stdout=subprocess.DEVNULL)
        with open(os.path.join(self.spool, "spool.yaml"), "w") as f:
            f.write("daemon:\n  heartbeat: 200ms\n  lost-timeout: 2s\n"
                    "  rescan: 200ms\n  settle: 1s\n" + cluster)
        env = dict(os.environ, PATH=BIN + ":" + os.environ.get("PATH", ""))
        self.log = open(os.path.join(self.tmp, "spoold.log"), "w")
        self.spoold = subprocess.Popen(
            [prog("spoold"), "-S", self.spool] +
            (["--local", "2", "--local-cores", "4"] if local else []),
            env=env, stdout=self.log, stderr=subprocess.STDOUT)
        until(lambda: os.path.exists(os.path.join(self.spool, "lock",
                                                  "spoold", "owner")),
              "spoold to start")
        # both workers known to spoold before any task
        until(lambda: not local or ckspool.parse_record(_read(os.path.join(
            self.spool, "state", "summary"))).get("workers") == 2,
            "spoold to know two workers")
        self.fs = None
        self.mnt = None
        if mount:
            self.mnt = os.path.join(self.tmp, "mnt")
            os.mkdir(self.mnt)
            self.fslog_path = os.path.join(self.tmp, "spoolfs.log")
            self.fslog = open(self.fslog_path, "w")
            self.fs = subprocess.Popen(
                [prog("spoolfs"), self.spool, self.mnt, "-f"], env=env,
                stdout=self.fslog, stderr=subprocess.STDOUT)
            until(lambda: is_mounted(self.mnt) or self.fs.poll() is not None,
                  "the mount")
            if not is_mounted(self.mnt):
                with open(self.fslog_path) as f:
                    raise RuntimeError("spoolfs did not mount: " + f.read())

    @property
    def path(self):
        return self.mnt or self.spool

    def close(self):
        """Unmount (spoolfs must exit 0 with a clean log), stop spoold."""
        problems = []
        if self.fs is not None:
            if is_mounted(self.mnt):
                subprocess.run(["fusermount3", "-u", "-z", self.mnt])
            try:
                rc = self.fs.wait(WAIT)
            except subprocess.TimeoutExpired:
                self.fs.kill()
                rc = "hung"
            self.fslog.close()
            with open(self.fslog_path) as f:
                log = f.read()
            if rc != 0 or "Sanitizer" in log or "runtime error" in log:
                problems.append("spoolfs exit %s: %s" % (rc, log[-3000:]))
        self.spoold.send_signal(signal.SIGTERM)
        try:
            self.spoold.wait(WAIT)
        except subprocess.TimeoutExpired:
            self.spoold.kill()
            problems.append("spoold did not stop")
        self.log.close()
        subprocess.run(["rm", "-rf", self.tmp])
        if problems:
            raise AssertionError("; ".join(problems))


class ClientTests:
    """The same tests through either kind of path (see the subclasses)."""

    MOUNT = False

    @classmethod
    def setUpClass(cls):
        cls.cluster = Cluster(cls.MOUNT)
        cls.client = ckspool.Client(cls.cluster.path,
                                    spool=prog("spool"))

    @classmethod
    def tearDownClass(cls):
        cls.cluster.close()

    def gate(self, tag):
        """A task that runs until gate file TAG exists; (future, path)."""
        path = os.path.join(self.cluster.tmp, "gate." + tag)
        f = self.client.submit(
            "while [ ! -e %s ]; do sleep 0.05; done; echo %s" % (path, tag))
        return f, path

    def open_gate(self, path):
        open(path, "w").close()

    def test_kind_of_path(self):
        self.assertEqual(self.client.mounted, self.MOUNT)
        self.assertIn("mount" if self.MOUNT else "spool directory",
                      repr(self.client))

    def test_submit_and_result(self):
        f = self.client.submit("echo hello; echo there")
        self.assertEqual(f.result(timeout=WAIT), "hello\nthere\n")
        self.assertTrue(f.done())
        self.assertEqual(f.state, "done")
        self.assertIsNone(f.exception())
        rec = f.record()
        self.assertEqual(rec["state"], "done")
        self.assertEqual(rec["exit"], 0)
        g = self.client.submit(["printf", "%s|", "a b", "c"])
        self.assertEqual(g.result(timeout=WAIT), "a b|c|")

    def test_result_blocks_until_done(self):
        f, gate = self.gate("block")
        self.assertFalse(f.done())
        self.open_gate(gate)
        self.assertEqual(f.result(), "block\n")     # no timeout: blocks

    def test_resources_reach_the_spec(self):
        f = self.client.submit("true", cores=2, memory="64M", walltime=600,
                               name="res", env={"K": "v w"}, priority=5)
        f.result(timeout=WAIT)
        with open(os.path.join(self.cluster.spool, "tasks",
                               str(f.id // 1000), str(f.id), "spec")) as sf:
            spec = ckspool.parse_record(sf.read())
        self.assertEqual(spec["cores"], 2)
        self.assertEqual(spec["memory"], 64 << 20)
        self.assertEqual(spec["walltime"], 600)
        self.assertEqual(spec["name"], "res")
        self.assertEqual(spec["priority"], 5)
        self.assertIn("K=v w", spec["env"])
        self.assertEqual(spec["cwd"], os.getcwd())

    def test_a_walltime_under_a_second_is_a_limit(self):
        # seconds as a float: rounded up to whole seconds, not down to
        # 0, which would mean no limit
        f = self.client.submit("true", walltime=0.5)
        g = self.client.submit("true", walltime=90.2)
        self.client.gather([f, g])
        walltimes = []
        for t in (f, g):
            with open(os.path.join(self.cluster.spool, "tasks",
                                   str(t.id // 1000), str(t.id),
                                   "spec")) as sf:
                walltimes.append(ckspool.parse_record(sf.read())
                                 .get("walltime"))
        self.assertEqual(walltimes, [1, 91])

    def test_gpus_request_is_kept(self):
        # no worker has GPUs here: the task waits, queued, until cancelled
        f = self.client.submit("true", gpus=1)
        until(lambda: f.state in ("queued", "pending"),
              "the GPU task to be queued")
        self.assertTrue(f.cancel())
        with self.assertRaises(ckspool.CancelledError):
            f.result(timeout=WAIT)
        # the request is in the task's spec, as submitted
        with open(os.path.join(self.cluster.spool, "tasks",
                               str(f.id // 1000), str(f.id), "spec")) as sf:
            spec = ckspool.parse_record(sf.read())
        self.assertEqual(spec["gpus"], 1)

    def test_a_task_no_worker_can_run_is_said_once(self):
        # the workers have 4 cores and no GPU: 64 cores or a GPU is
        # unfit (spoold's summary), said once by a wait that goes on
        def unfit_said(w):
            return [x.message for x in w
                    if issubclass(x.category, ckspool.UnfitTaskWarning)]

        def waiter(fn, out):
            def run():
                try:
                    out.append(fn())
                except BaseException as e:
                    out.append(e)
            t = threading.Thread(target=run, daemon=True)
            t.start()
            return t

        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always", ckspool.UnfitTaskWarning)
            big = self.client.submit("echo big", cores=64)
            self.addCleanup(big.cancel)
            ok = self.client.submit("echo ok")
            out = []
            t = waiter(big.result, out)         # no timeout
            until(lambda: unfit_said(w), "the warning of the first wait")
            said = unfit_said(w)
            self.assertEqual(len(said), 1)
            self.assertEqual(
                str(said[0]), "task %d is queued, and no worker can run it, "
                "registered or on its way, nor a kind with a size asked: "
                "it asks 64 cores, 0 GPUs, memory -, walltime -; waiting "
                "all the same (spool status %d)" % (big.id, big.id))
            self.assertEqual((said[0].future, said[0].count),
                             (big, 1))
            self.assertTrue(t.is_alive(), "the wait went on")
            self.assertEqual(ok.result(timeout=WAIT), "ok\n")
            # once a task for a Client: a second wait says nothing (the
            # first look is at once, before the timeout)
            with self.assertRaises(TimeoutError):
                big.result(timeout=0.3)
            self.assertEqual(len(unfit_said(w)), 1)
            # another Client says it again; as an error where asked
            other = ckspool.Client(self.cluster.path, spool=prog("spool"))
            with warnings.catch_warnings():
                warnings.simplefilter("error", ckspool.UnfitTaskWarning)
                with self.assertRaises(ckspool.UnfitTaskWarning) as cm:
                    other.future(big.id).result()
            self.assertEqual(cm.exception.future.id, big.id)
            # many waited on: the first, and how many
            gpu = self.client.submit("echo gpu", gpus=1)
            self.addCleanup(gpu.cancel)
            mem = self.client.submit("echo mem", cores=64, memory="2G")
            self.addCleanup(mem.cancel)
            # both counted unfit before the wait begins: a wait says the
            # tasks it finds so at its first look, one accepted later is
            # not in the count
            until(lambda: self.client.summary().get("unfit") == 3,
                  "three unfit tasks in spoold's summary")
            out2 = []
            t2 = waiter(lambda: list(self.client.as_completed([gpu, mem])),
                        out2)
            until(lambda: len(unfit_said(w)) == 2,
                  "the warning of as_completed")
            said = unfit_said(w)[1]
            self.assertEqual(
                str(said), "task %d (one of 2 waited on) is queued, and no "
                "worker can run it, registered or on its way, nor a kind "
                "with a size asked: it asks 1 core, 1 GPU, memory -, "
                "walltime -; waiting all the same (spool status %d)" %
                (gpu.id, gpu.id))
            self.assertEqual(said.count, 2)
            for f in (big, gpu, mem):
                self.assertTrue(f.cancel())
            t.join(WAIT)
            t2.join(WAIT)
            self.assertFalse(t.is_alive() or t2.is_alive())
            self.assertIsInstance(out[0], ckspool.CancelledError)
            self.assertEqual(sorted(f.id for f in out2[0]),
                             [gpu.id, mem.id])
            self.assertEqual(len(unfit_said(w)), 2)

    def test_after_orders_tasks(self):
        mark = os.path.join(self.cluster.tmp, "mark.after")
        first, gate = self.gate("first")
        second = self.client.submit("cat %s" % mark, after=[first])
        third = self.client.submit("echo third", after=[first.id, second])
        self.assertFalse(second.done())
        with open(mark, "w") as m:
            m.write("written before\n")
        self.open_gate(gate)
        self.assertEqual(second.result(timeout=WAIT), "written before\n")
        self.assertEqual(third.result(timeout=WAIT), "third\n")

    def test_failure_raises(self):
        f = self.client.submit("echo oops >&2; exit 3")
        with self.assertRaises(ckspool.TaskFailed) as cm:
            f.result(timeout=WAIT)
        e = cm.exception
        self.assertEqual(e.exit, 3)
        self.assertEqual(e.state, "failed")
        self.assertIn("oops", e.stderr)
        self.assertIn("oops", str(e))
        self.assertIsInstance(f.exception(), ckspool.TaskFailed)
        # a dependent of a failed task never runs: cancelled, saying why
        g = self.client.submit("echo never", after=[f])
        with self.assertRaises(ckspool.CancelledError) as cm:
            g.result(timeout=WAIT)
        self.assertIn("dependency %d failed" % f.id, str(cm.exception))
        self.assertEqual(g.record()["reason"], "dependency")

    def test_cancel(self):
        f, gate = self.gate("cancel")
        until(lambda: f.running() or f.state == "pending", "it to start")
        self.assertTrue(f.cancel())
        with self.assertRaises(ckspool.CancelledError):
            f.result(timeout=WAIT)
        self.assertTrue(f.cancelled())
        self.assertTrue(f.cancel())     # already cancelled: still True
        self.open_gate(gate)

    def test_cancel_many_at_once(self):
        started = os.path.join(self.cluster.tmp, "started.cancel-many")
        gate = os.path.join(self.cluster.tmp, "gate.cancel-many")
        f = self.client.submit("touch %s; while [ ! -e %s ]; do sleep 0.05; "
                               "done" % (started, gate))
        until(lambda: os.path.exists(started), "it to start")
        w = self.client.submit("echo never", after=[f])
        # (directly a state is "pending" until final)
        until(lambda: not self.MOUNT or w.state == "waiting",
              "the dependent to wait")
        d = self.client.submit("echo done")
        self.assertEqual(d.result(timeout=WAIT), "done\n")
        calls = []
        real = self.client._run_spool

        def run(args, stdin=None):
            calls.append(args)
            return real(args, stdin)
        self.client._run_spool = run
        self.addCleanup(delattr, self.client, "_run_spool")
        self.assertEqual(self.client.cancel([f, w, d]), [True, True, False])
        # on a spool directory, one request for both
        self.assertEqual(calls, [] if self.MOUNT else [["cancel"]])
        for g in (f, w):
            with self.assertRaises(ckspool.CancelledError):
                g.result(timeout=WAIT)
        self.assertEqual(d.state, "done")
        self.assertEqual(self.client.cancel([f, d]), [True, False])
        self.open_gate(gate)

    def test_retry(self):
        fixed = os.path.join(self.cluster.tmp, "fixed.retry")
        x = self.client.submit("[ -e %s ] && echo x" % fixed)
        y = self.client.submit("echo y", after=[x])
        d = self.client.submit("echo d")
        self.client.wait([x, y, d], timeout=WAIT)
        self.assertEqual([x.state, y.state, d.state],
                         ["failed", "cancelled", "done"])
        open(fixed, "w").close()
        # y again, and its failed dependency x with it; d kept
        again = self.client.retry([y, d])
        self.assertEqual(len(again), 2)
        self.assertIs(again[1], d)
        self.assertGreater(again[0].id, d.id)
        self.assertEqual(again[0].result(timeout=WAIT), "y\n")
        # the futures given stay what they were
        self.assertEqual([x.state, y.state], ["failed", "cancelled"])
        x2 = x.retry()
        self.assertGreater(x2.id, again[0].id)
        self.assertEqual(x2.result(timeout=WAIT), "x\n")
        self.assertIs(d.retry(), d)
        self.assertEqual(self.client.retry([]), [])
        with self.assertRaisesRegex(ckspool.SubmitError,
                                    "^task 999999: no such task: nothing "
                                    "submitted again$"):
            self.client.retry([x, self.client.future(999999)])

    def test_python_function(self):
        f = self.client.submit(_add, 1, 2)
        self.assertEqual(f.result(timeout=WAIT), 3)
        self.assertTrue(f.is_call())
        self.assertEqual(f.state, "done")
        self.assertIsNone(f.exception())
        spec = ckspool.parse_record(_read(os.path.join(f.path, "spec")))
        self.assertEqual(spec["name"], "_add")
        self.assertEqual(spec["cwd"], os.getcwd())
        self.assertEqual(spec["argv"][:2], [sys.executable, "-c"])
        self.assertEqual(spec["argv"][4], "%d.%d" % sys.version_info[:2])
        me = self.client.submit(_whoami).result(timeout=WAIT)
        self.assertEqual((me["cwd"], me["argv"]), (os.getcwd(), ["-c"]))
        # futures as arguments, at any depth of lists, tuples and dicts:
        # the tasks wait for them and get their results; a command's
        # result is its stdout
        g = self.client.submit(_add, f, b=10)
        n = self.client.submit(_nest, [f, (g, 5)], {"k": g}, name="nest")
        c = self.client.submit("echo text")
        up = self.client.submit(str.upper, c)
        self.assertEqual(g.result(timeout=WAIT), 13)
        self.assertEqual(n.result(timeout=WAIT),
                         {"sum": 3 + 13 + 5 + 13, "types": ["list", "tuple"]})
        self.assertEqual(up.result(timeout=WAIT), "TEXT\n")
        self.assertEqual(ckspool.parse_record(_read(os.path.join(
            n.path, "spec")))["after"], [f.id, g.id])
        # a future picked up again knows it from its spec
        again = self.client.future(n.id)
        self.assertTrue(again.is_call())
        self.assertEqual(again.result()["sum"], 34)
        self.assertFalse(self.client.future(c.id).is_call())
        # sent by value: a lambda, which the standard pickle cannot send
        self.assertEqual(self.client.submit(lambda x: x * 2, 21)
                         .result(timeout=WAIT), 42)
        # what cannot be sent is refused, with no task submitted
        # the largest call a command can carry runs (its base64 is one
        # argument of 131,068 bytes, execve's bound 131,072 with the
        # NUL); a byte more is refused, with no task submitted
        pk = ckspool._cloudpickle() or pickle
        size = lambda n: len(pk.dumps((len, ((b"x" * n,), {}), [])))
        n = 98000 + ckspool.CALL_PICKLE_MAX - size(98000)
        self.assertEqual(size(n), ckspool.CALL_PICKLE_MAX)
        self.assertEqual(self.client.submit(len, b"x" * n)
                         .result(timeout=WAIT), n)
        first = self.client.submit("true")
        with self.assertRaisesRegex(ckspool.SubmitError,
                                    "^len: the function and its arguments "
                                    "pickle to 98302 bytes, more than the "
                                    "98301 a task's command can carry"):
            self.client.submit(len, b"x" * (n + 1))
        with self.assertRaisesRegex(ckspool.SubmitError,
                                    "^_add: its call cannot be pickled: "
                                    "task %d: a future can be an argument "
                                    "of a Python function task only "
                                    "directly or in lists, tuples and "
                                    "dicts" % f.id):
            self.client.submit(_add, {f}, 1)
        with self.assertRaisesRegex(TypeError, "^submit\\(\\): arguments "
                                    "1 are for a Python function"):
            self.client.submit("echo", 1)
        # dask's own keywords are not the function's: key= names the
        # task, pure= is a no-op, the others are refused
        k = self.client.submit(_add, 1, key="add-one", pure=False)
        self.assertEqual(k.id, first.id + 1)    # (nothing claimed above)
        with self.assertRaisesRegex(TypeError, "^resources=: dask's, not "
                                    "ckspool's: ask cores=, memory= and "
                                    "gpus=$"):
            self.client.submit(_add, 1, resources={"GPU": 1})
        with self.assertRaisesRegex(TypeError, "^workers=: dask's"):
            self.client.map(_add, [1], workers=["a"])
        self.assertEqual(self.client.submit("true").id, k.id + 1)
        self.assertEqual(k.result(timeout=WAIT), 1)
        self.assertEqual(ckspool.parse_record(_read(os.path.join(
            k.path, "spec")))["name"], "add-one")
        first.result(timeout=WAIT)

    def test_python_function_raises(self):
        f = self.client.submit(_fail, "bad input 7")
        with self.assertRaises(ValueError) as cm:
            f.result(timeout=WAIT)
        e = cm.exception
        self.assertEqual(str(e), "bad input 7")
        self.assertRegex(e.__notes__[0], "(?s)^--- raised in task %d ---\n"
                         "Traceback \\(most recent call last\\):\n  File "
                         "\"[^\"]*test_ckspool.py\", line [0-9]+, in _fail\n"
                         ".*ValueError: bad input 7$" % f.id)
        self.assertIs(f.exception(), e)
        rec = f.record()
        self.assertEqual((rec["state"], rec["exit"]), ("failed", 1))
        self.assertEqual(f.stdout(), "about to fail\n")
        self.assertIn("ValueError: bad input 7", f.stderr())
        # its dependents are cancelled, as any failed task's
        d = self.client.submit(_add, f, 1)
        with self.assertRaises(ckspool.CancelledError):
            d.result(timeout=WAIT)
        # killed, it left nothing: TaskFailed, as for any command
        k = self.client.submit(_sleep, 60, walltime=1)
        with self.assertRaises(ckspool.TaskFailed) as cm:
            k.result(timeout=WAIT)
        self.assertEqual(cm.exception.reason, "walltime")
        # a return value that cannot be pickled is the call's failure
        lk = self.client.submit(_lock)
        with self.assertRaisesRegex(TypeError, "^the call's return value "
                                    "cannot be pickled: "):
            lk.result(timeout=WAIT)
        self.assertEqual(lk.state, "failed")

    def test_python_map(self):
        fs = self.client.map(_add, [1, 2, 3], [10, 20, 30], name="n-{#}")
        self.assertEqual(self.client.gather(fs), [11, 22, 33])
        self.assertEqual([ckspool.parse_record(_read(os.path.join(
            f.path, "spec")))["name"] for f in fs], ["n-1", "n-2", "n-3"])
        # futures as items: each task waits for its own; the options are
        # the tasks', the other keywords the function's
        gs = self.client.map(_add, fs, b=100, priority=3)
        self.assertEqual(self.client.gather(gs), [111, 122, 133])
        self.assertEqual([ckspool.parse_record(_read(os.path.join(
            g.path, "spec")))["after"] for g in gs], [[f.id] for f in fs])
        self.assertEqual(ckspool.parse_record(_read(os.path.join(
            gs[0].path, "spec")))["name"], "_add")
        self.assertEqual(self.client.map(_add, []), [])
        with self.assertRaisesRegex(TypeError, "one iterable, not 2"):
            self.client.map("echo {}", [1], [2])

    def test_python_retry(self):
        fixed = os.path.join(self.cluster.tmp, "fixed.call")
        x = self.client.submit(_needs, fixed, 5)
        y = self.client.submit(_add, 1, x)
        self.client.wait([x, y], timeout=WAIT)
        self.assertEqual([x.state, y.state], ["failed", "cancelled"])
        self.assertIsInstance(x.exception(), FileNotFoundError)
        open(fixed, "w").close()
        # y again, with x: the new y reads the new x's result
        y2 = self.client.retry([y])[0]
        self.assertNotEqual(y2.id, y.id)
        self.assertEqual(y2.result(timeout=WAIT), 6)
        self.assertTrue(y2.is_call())

    def test_python_result_of_another_user_is_not_unpickled(self):
        f = self.client.submit(_add, 2, 2)
        self.assertEqual(f.result(timeout=WAIT), 4)
        os.chown(os.path.join(self.cluster.spool, "tasks",
                              str(f.id // 1000), str(f.id), "return.pickle"),
                 65534, 65534)
        with self.assertRaisesRegex(PermissionError,
                                    "return.pickle: owned by uid 65534, not "
                                    "by this user \\(%d\\): not unpickled"
                                    % os.geteuid()):
            self.client.future(f.id).result()
        # nor by a task that takes it as an argument
        g = self.client.submit(_add, f, 1)
        with self.assertRaisesRegex(PermissionError, "task %d: its "
                                    "return.pickle is not this user's"
                                    % f.id):
            g.result(timeout=WAIT)

    def test_python_function_without_cloudpickle(self):
        real = ckspool._cloudpickle
        ckspool._cloudpickle = lambda: None
        self.addCleanup(setattr, ckspool, "_cloudpickle", real)
        # by name: a function the task can import
        self.assertEqual(self.client.submit(_add, 5, 6).result(timeout=WAIT),
                         11)
        with self.assertRaisesRegex(ckspool.SubmitError,
                                    "^ClientTests.test_python_function_"
                                    "without_cloudpickle.<locals>.<lambda>: "
                                    "a function defined in __main__ .* "
                                    "needs cloudpickle \\(Debian: "
                                    "python3-cloudpickle\\)"):
            self.client.submit(lambda: 1)

    def test_python_call_of_another_python_version_is_not_unpickled(self):
        # as if the notebook ran Python 2.7: the task's interpreter
        # (this one) refuses the call before it unpickles it, by submit
        # and by map (whose one "spool map" puts the version after the
        # item)
        real = ckspool._PY_VERSION
        ckspool._PY_VERSION = "2.7"
        self.addCleanup(setattr, ckspool, "_PY_VERSION", real)
        want = ("^this call was pickled by Python 2.7 and would run under "
                "%s, Python %s, which may not load it: give the Client an "
                "interpreter of Python 2.7 on the workers' hosts "
                "\\(python=\\)$" % (re.escape(sys.executable), real))
        f = self.client.submit(_add, 1, 2)
        with self.assertRaisesRegex(RuntimeError, want):
            f.result(timeout=WAIT)
        self.assertEqual(f.record()["exit"], 1)
        self.assertIn("RuntimeError: this call was pickled by Python 2.7",
                      f.stderr())
        fs = self.client.map(_add, [1, 2], [3, 4])
        self.assertEqual([f.is_call() for f in fs], [True, True])
        for f in fs:
            with self.assertRaisesRegex(RuntimeError, want):
                f.result(timeout=WAIT)
        ckspool._PY_VERSION = real
        self.assertEqual(self.client.gather(self.client.map(_add, [1, 2],
                                                            [3, 4])),
                         [4, 6])

    def test_timeout(self):
        f, gate = self.gate("timeout")
        t0 = time.monotonic()
        with self.assertRaises(ckspool.TimeoutError):
            f.result(timeout=0.3)
        self.assertGreaterEqual(time.monotonic() - t0, 0.3)
        self.assertFalse(f.done())
        self.open_gate(gate)
        self.assertEqual(f.result(timeout=WAIT), "timeout\n")

    def test_map_and_gather(self):
        items = ["a b", "c;d", "$HOME", "'q'", "*"]
        fs = self.client.map("printf '%s\\n' {}", items)
        self.assertEqual(len(fs), len(items))
        self.assertEqual(self.client.gather(fs), [x + "\n" for x in items])
        fs = self.client.map(["echo", "n={#}", "{}"], ["x", "y"])
        self.assertEqual(self.client.gather(fs), ["n=1 x\n", "n=2 y\n"])
        # without {}, the item is the last word (as "spool map" does),
        # on either kind of path
        fs = self.client.map(["echo", "n={#}"], ["x", "y"])
        self.assertEqual(self.client.gather(fs), ["n=1 x\n", "n=2 y\n"])
        fs = self.client.map("echo s={#}", ["x y", "$z"])
        self.assertEqual(self.client.gather(fs), ["s=1 x y\n", "s=2 $z\n"])
        self.assertEqual(self.client.map("echo {}", []), [])
        fs = self.client.map("test {} = ok", ["ok", "no", "ok"])
        with self.assertRaises(ckspool.TaskFailed):
            self.client.gather(fs)
        self.assertEqual(self.client.gather(fs, errors="skip"), ["", ""])

    def test_gather_raises_at_a_failure_before_the_tasks_ahead_end(self):
        # as Dask's: a failure raises once found, not after the tasks
        # before it in the list (here one that would run 60 s)
        slow = self.client.submit("sleep 60")
        bad = self.client.submit("exit 4")
        t0 = time.monotonic()
        with self.assertRaises(ckspool.TaskFailed) as e:
            self.client.gather([slow, bad])
        self.assertIs(e.exception.future, bad)
        self.assertFalse(slow.done(), "gather waited for the slow task")
        self.assertLess(time.monotonic() - t0, 50)
        slow.cancel()
        self.assertEqual(self.client.gather([slow, bad], errors="skip"), [])

    def test_any_text_reaches_the_task_as_it_is(self):
        # words with blanks, quotes, newlines, leading dashes, nothing at
        # all, and characters of every plane (one beyond U+FFFF, which
        # JSON would write as a pair of surrogates YAML refuses)
        words = ["a b", "it's", 'say "hi"', "1\n2", "", "-n", "na\u00efve",
                 "\u2028", "\x7f", "\U0001f600", "\U00020000x"]
        f = self.client.submit(["printf", "%s|"] + words,
                               env={"K": "\U0001f600 k"})
        g = self.client.submit("printf '%s|' " + " ".join(
            shlex.quote(w) for w in words) + '; printf %s "$K"',
            env={"K": "\U0001f600 k"})
        want = "".join(w + "|" for w in words)
        self.assertEqual(f.result(timeout=WAIT), want)
        self.assertEqual(g.result(timeout=WAIT), want + "\U0001f600 k")
        self.assertEqual(self.client.gather(self.client.map(
            "printf '%s|' {}", words)), [w + "|" for w in words])
        self.assertEqual(self.client.gather(self.client.map(
            ["printf", "%s|", "{}"], words)), [w + "|" for w in words])

    def test_a_word_that_is_not_utf8(self):
        # a file name of other bytes, as os.fsdecode gives it: on a spool
        # directory it reaches the task as those bytes; a task file (a
        # mount) cannot hold it, and says so
        word = os.fsdecode(b"caf\xe9")
        if self.MOUNT:
            with self.assertRaises(ckspool.SubmitError) as cm:
                self.client.submit(["echo", word])
            self.assertIn("not UTF-8", cm.exception.reason)
            return
        def outputs(fs):
            self.client.gather(fs)
            return [_read_bytes(os.path.join(f.path, "stdout")) for f in fs]

        fs = [self.client.submit(["printf", "%s|", word])] + \
            self.client.map(["printf", "%s|", "{}"], [word, "x"])
        self.assertEqual(outputs(fs), [b"caf\xe9|", b"caf\xe9|", b"x|"])
        # inputs that go as lists of tasks (a newline in one): the one
        # that is not UTF-8 goes alone, through "spool submit", between
        # the lists before and after it, in the order given
        gs = self.client.map(["printf", "%s|", "{}"], ["a\nb", word, "c"])
        self.assertEqual(outputs(gs), [b"a\nb|", b"caf\xe9|", b"c|"])
        self.assertEqual([g.id for g in gs], list(range(gs[0].id,
                                                        gs[0].id + 3)))

    def test_map_with_a_word_that_spool_map_would_take(self):
        # ":::" is spool map's separator of inputs: in a template it is
        # a word like any other
        fs = self.client.map(["echo", ":::", "{}"], ["a", "b"])
        self.assertEqual(self.client.gather(fs), ["::: a\n", "::: b\n"])

    def test_map_names_each_task(self):
        # {} and {#} in name= as "spool map --name" replaces them, in one
        # map and in one submission per item (through a mount; directly,
        # for items with a newline)
        def names(fs):
            return [ckspool.parse_record(_read(os.path.join(
                f.path, "spec"))).get("name") for f in fs]
        for items, want in ((["x", "y"], ["part-1-x", "part-2-y"]),
                            (["a\nb", "c"], None)):
            fs = self.client.map(["echo", "{}"], items,
                                 name="part-{#}" if want is None
                                 else "part-{#}-{}")
            want = want or ["part-1", "part-2"]
            self.client.gather(fs)
            # (the spec joins a final task's directory just after it)
            until(lambda: names(fs) == want, "names %s, not %s" %
                  (want, names(fs)))

    def test_as_completed_in_finishing_order(self):
        gates = [self.gate("ac%d" % i) for i in range(3)]
        futures = [f for f, _ in gates]
        order = []
        it = self.client.as_completed(futures, timeout=WAIT)
        for i in (2, 0, 1):
            self.open_gate(gates[i][1])
            order.append(next(it))
        self.assertEqual([f.id for f in order],
                         [futures[i].id for i in (2, 0, 1)])
        with self.assertRaises(StopIteration):
            next(it)
        done, not_done = self.client.wait(futures, timeout=WAIT)
        self.assertEqual((len(done), len(not_done)), (3, 0))

    def test_as_completed_timeout(self):
        f, gate = self.gate("act")
        with self.assertRaises(ckspool.TimeoutError):
            list(self.client.as_completed([f], timeout=0.3))
        self.open_gate(gate)

    def test_wait_for_workers(self):
        self.assertGreaterEqual(self.client.wait_for_workers(2, timeout=WAIT),
                                2)
        with self.assertRaises(ckspool.TimeoutError):
            self.client.wait_for_workers(5, timeout=0.3)
        self.assertEqual(sorted(set(self.client.workers().values())), ["up"])

    def test_refused_submission(self):
        before = self.client.submit("true")
        with self.assertRaises(ckspool.SubmitError) as cm:
            self.client.submit("true", memory="lots")
        self.assertIn("memory", cm.exception.reason)
        with self.assertRaises(ckspool.SubmitError) as cm:
            self.client.submit("true", after=[10 ** 9])
        self.assertIn("no such task", cm.exception.reason)
        after = self.client.submit("true")
        self.assertEqual(after.id, before.id + 1)    # no ID was used
        self.client.gather([before, after])

    def test_future_from_another_session(self):
        f = self.client.submit("echo again")
        f.result(timeout=WAIT)
        other = ckspool.Client(self.cluster.path, spool=prog("spool"))
        g = other.future(f.id)
        self.assertEqual(g, f)
        self.assertEqual(g.result(), "again\n")

    def test_done_callback(self):
        f, gate = self.gate("cb")
        seen = []
        f.add_done_callback(seen.append)
        self.open_gate(gate)
        until(lambda: seen, "the callback")
        self.assertEqual(seen, [f])

    def test_done_callbacks_share_one_thread(self):
        # 200 tasks that stay queued (no worker has a GPU) until they
        # are cancelled: their callbacks wait in one thread, not 200
        direct = ckspool.Client(self.cluster.spool, spool=prog("spool"))
        fs = [self.client.future(f.id)
              for f in direct.map(["true"], range(200), gpus=1)]
        before = threading.active_count()
        seen = []
        for f in fs:
            f.add_done_callback(seen.append)
        self.assertLessEqual(threading.active_count(), before + 1)
        subprocess.run([prog("spool"), "-S", self.cluster.spool, "cancel"] +
                       [str(f.id) for f in fs], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        until(lambda: len(seen) == len(fs), "the 200 callbacks")
        self.assertEqual(sorted(f.id for f in seen), [f.id for f in fs])
        self.assertTrue(all(f.cancelled() for f in seen))

    def test_a_purged_task_is_no_such_task(self):
        # a task "spool purge" removed is gone for good (through a
        # mount its state reads unknown for ever): result(timeout) and
        # as_completed() waited until their timeout, result() for ever
        # (through a mount, spoolfs kept the read); each says
        # NoSuchTask now
        f = self.client.submit("echo gone")
        self.assertEqual(f.result(timeout=WAIT), "gone\n")
        final = os.path.join(self.cluster.spool, "tasks",
                             str(f.id // 1000), str(f.id))

        def purged():
            subprocess.run([prog("spool"), "-S", self.cluster.spool,
                            "purge"], check=True, stdout=subprocess.DEVNULL)
            return not os.path.exists(final)
        until(purged, "task %d purged (its bundle retired)" % f.id)
        until(lambda: not self.MOUNT or f.state == "unknown",
              "the mount to forget it")
        with self.assertRaises(ckspool.NoSuchTask):
            f.result(timeout=WAIT)
        with self.assertRaises(ckspool.NoSuchTask):
            next(self.client.as_completed([f], timeout=WAIT))
        with self.assertRaises(ckspool.NoSuchTask):
            f.result()              # no timeout


class DirectTests(ClientTests, unittest.TestCase):
    MOUNT = False


class MountTests(ClientTests, unittest.TestCase):
    MOUNT = True

    def test_cancel_of_a_task_final_since_done_was_asked(self):
        # the race of cancel(): the task ends between its done() and the
        # write to its control file, which is gone then; cancel() says
        # False, as for a final task, not EROFS (a spool directory has
        # no such file: "spool cancel" of a final task does nothing)
        f = self.client.submit("true")
        f.result(timeout=WAIT)
        f.done = lambda: False
        self.assertFalse(f.cancel())

    def test_states_through_the_mount(self):
        f, gate = self.gate("states")
        until(lambda: f.state == "running", "running")
        self.assertIn(str(f.id), os.listdir(os.path.join(self.cluster.mnt,
                                                         "running")))
        self.open_gate(gate)
        f.result(timeout=WAIT)
        self.assertEqual(f.state, "done")

    def test_signal_interrupts_result_not_the_task(self):
        f, gate = self.gate("sig")
        until(lambda: f.state == "running", "running")

        class Interrupted(Exception):
            pass

        def handler(signo, frame):
            raise Interrupted()

        old = signal.signal(signal.SIGALRM, handler)
        try:
            signal.setitimer(signal.ITIMER_REAL, 0.3)
            with self.assertRaises(Interrupted):
                f.result()          # a wait without timeout, interrupted
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
        self.assertEqual(f.state, "running")
        self.open_gate(gate)
        self.assertEqual(f.result(timeout=WAIT), "sig\n")

    def test_no_such_task(self):
        ghost = self.client.future(10 ** 9)
        with self.assertRaises(ckspool.NoSuchTask):
            ghost.result()
        with self.assertRaises(ckspool.NoSuchTask):
            ghost.result(timeout=1)

    def test_refusal_leaves_nothing_in_submit(self):
        with self.assertRaises(ckspool.SubmitError):
            self.client.submit("true", cores=0 - 1)
        self.assertEqual(os.listdir(os.path.join(self.cluster.mnt, "submit")),
                         [])

    def test_submit_from_a_forked_process(self):
        # a process forked from the notebook's (multiprocessing) submits
        # through the same Client while its parent does: the child holds
        # its submission open, mid-write, while the parent submits
        ready_r, ready_w = os.pipe()
        go_r, go_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                real_open = open

                def held(path, mode="r", *args, **kw):
                    f = real_open(path, mode, *args, **kw)
                    if "w" in mode:
                        os.write(ready_w, b"x")
                        os.read(go_r, 1)
                    return f
                ckspool.open = held
                f = self.client.submit("echo child")
                os.write(ready_w, b"%d" % f.id)
                os._exit(0)
            finally:
                os._exit(1)
        try:
            self.assertEqual(os.read(ready_r, 1), b"x")
            f = self.client.submit("echo parent")
        finally:
            os.write(go_w, b"x")
            _, status = os.waitpid(pid, 0)
        self.assertEqual(status, 0)
        child = self.client.future(int(os.read(ready_r, 64)))
        self.assertNotEqual(f, child)
        self.assertEqual(f.result(timeout=WAIT), "parent\n")
        self.assertEqual(child.result(timeout=WAIT), "child\n")
        for fd in (ready_r, ready_w, go_r, go_w):
            os.close(fd)

    def test_map_refused_half_way_gives_what_was_submitted(self):
        # a list of tasks a submission (a file written into submit/):
        # the lists before the refused one are in the spool, and their
        # futures come with the refusal; nothing of its own list is
        lists = []
        real = self.client._submit_mount_text

        def submit(text):
            lists.append(text.count("\n- ") + text.startswith("- "))
            return real(text)
        self.client._submit_mount_text = submit
        self.addCleanup(delattr, self.client, "_submit_mount_text")
        with self.assertRaises(ckspool.SubmitError) as cm:
            self.client.map(["echo", "{}"], ["a", "b", "c d", "e"],
                            name="nm-{}")
        e = cm.exception
        self.assertTrue(e.reason.startswith("input 3: "), e.reason)
        self.assertIn("nm-c d", e.reason)
        self.assertEqual((e.futures, lists), ([], [4]))
        # lists of two: the first submitted, the second refused
        lists.clear()
        with unittest.mock.patch.object(ckspool, "LIST_TASKS", 2):
            with self.assertRaises(ckspool.SubmitError) as cm:
                self.client.map(["echo", "{}"], ["a", "b", "c", "d e", "f"],
                                name="nm-{}")
        e = cm.exception
        self.assertTrue(e.reason.startswith("input 4: "), e.reason)
        self.assertEqual(lists, [2, 2])
        self.assertEqual(self.client.gather(e.futures), ["a\n", "b\n"])
        # and a map of many is a list of them, its outputs in order
        lists.clear()
        fs = self.client.map("echo {}", range(30))
        self.assertEqual(lists, [30])
        self.assertEqual(self.client.gather(fs), ["%d\n" % i
                                                  for i in range(30)])

    def test_a_wait_reads_the_states_only_when_they_change(self):
        # a running task whose state does not change for 4.5 s: the
        # look for tasks no worker can run, once a second, reads
        # spoold's summary, not the polled state files again (read at
        # the start, at the timeout, and once more as it is confirmed)
        f, gate = self.gate("still")
        until(lambda: f.state == "running", "running")
        reads = [0]
        real = ckspool._states_final

        def counted(fds):
            reads[0] += 1
            return real(fds)
        ckspool._states_final = counted
        self.addCleanup(setattr, ckspool, "_states_final", real)
        with self.assertRaises(TimeoutError):
            f.result(timeout=4.5)
        self.assertLessEqual(reads[0], 3)
        self.open_gate(gate)
        self.assertEqual(f.result(timeout=WAIT), "still\n")

    def test_as_completed_reads_each_state_once(self):
        # 400 tasks that stay queued (no worker has a GPU) and three
        # that finish one after the other: as_completed reads every
        # pending state once, not once more at each future it yields
        direct = ckspool.Client(self.cluster.spool, spool=prog("spool"))
        queued = [self.client.future(f.id)
                  for f in direct.map(["true"], range(400), gpus=1)]
        gates = [self.gate("once%d" % i) for i in range(3)]
        reads = count_done_calls(self)
        it = self.client.as_completed([f for f, _ in gates] + queued,
                                      timeout=WAIT)
        for f, gate in gates:
            self.open_gate(gate)
            self.assertEqual(next(it), f)
        self.assertLessEqual(reads[0], len(queued) + len(gates))
        subprocess.run([prog("spool"), "-S", self.cluster.spool, "cancel"] +
                       [str(f.id) for f in queued], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class ShutdownTests(unittest.TestCase):
    """"spool shutdown" unmounts the spool's mounts (spoolfs(1)): a wait
    through one, begun before or after, raises MountGone, and so do a
    cancel and a submit after."""

    def test_a_wait_through_a_mount_shut_down_raises_mount_gone(self):
        c = Cluster(mount=True)
        self.addCleanup(c.close)
        client = ckspool.Client(c.mnt)
        gate = os.path.join(c.tmp, "go")
        self.addCleanup(lambda: open(gate, "w").close())
        f = client.submit("while [ ! -e %s ]; do sleep 0.05; done" %
                          shlex.quote(gate))
        until(lambda: f.state == "running", "the task to run")
        got = []

        def waiter():
            try:
                got.append(f.result())
            except Exception as e:      # noqa: B902 (what it raised)
                got.append(e)
        t = threading.Thread(target=waiter)
        t.start()
        out = subprocess.run([prog("spool"), "-S", c.spool, "shutdown"],
                             stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
        self.assertEqual(out.returncode, 0, out.stdout)
        t.join(WAIT)
        self.assertFalse(t.is_alive(), "the wait went on")
        self.assertFalse(is_mounted(c.mnt))
        self.assertIsInstance(got[0], ckspool.MountGone, got)
        self.assertIsInstance(got[0], ConnectionError)
        self.assertIs(got[0].future, f)
        self.assertIn("is no longer mounted (spool shutdown", str(got[0]))
        # begun after: the mount's directory is empty now
        with self.assertRaises(ckspool.MountGone):
            f.result()
        with self.assertRaises(ckspool.MountGone):
            client.gather([f])
        with self.assertRaises(ckspool.MountGone):
            list(client.as_completed([f], timeout=WAIT))
        with self.assertRaises(ckspool.MountGone) as cm:
            f.cancel()
        self.assertIs(cm.exception.future, f)
        with self.assertRaises(ckspool.MountGone) as cm:
            client.submit("true")
        self.assertIsNone(cm.exception.future)
        with self.assertRaises(ckspool.MountGone):
            client.map("echo {}", ["a", "b"])


class UnfitLookTests(unittest.TestCase):
    """A wait's look-out for unfit tasks (_Unfit) with a client and
    futures made up: it looks again at the tasks it found not accepted
    yet, since a mount's view can lag behind spoold's summary, which
    need not change again (a CI run saw as_completed through a mount
    wait without a word); those only, less often each time, and no
    others while the summary stays the same, so that a wait costs per
    change."""

    SHAPES = {"unfit_shapes": ["cores=64 gpus=0 memory=0 walltime=0 tasks=1"]}

    def setUp(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        spec = os.path.join(tmp, "spec")
        with open(spec, "w") as f:
            f.write("cores: 64\n")
        shapes = self.SHAPES

        class Client:
            mounted = True
            _unfit_said = set()

            def summary(self):
                return shapes

        class Future:
            def __init__(self, id, now):
                self.id, self.now, self.reads = id, now, 0

            @property
            def state(self):
                self.reads += 1
                return self.now

            def _file(self, name):
                return spec

        self.Future = Future
        self.unfit = ckspool._Unfit(Client())

    def look(self, futures, due=True):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            self.unfit.next = 0.0       # (the summary read now)
            if due:
                self.unfit.early_next = 0.0
            self.unfit.check(futures)
        return [str(x.message) for x in w]

    def test_a_task_read_before_its_acceptance_is_looked_at_again(self):
        f = self.Future(7, "submitted")
        self.assertEqual(self.look([f]), [])
        f.now = "queued"        # accepted; the summary the same
        said = self.look([f])
        self.assertEqual(len(said), 1)
        self.assertTrue(said[0].startswith(
            "task 7 is queued, and no worker can run it"), said[0])

    def test_only_tasks_not_accepted_are_read_again_less_often(self):
        run, sub = self.Future(7, "running"), self.Future(8, "submitted")
        self.assertEqual(self.look([run, sub]), [])
        self.assertEqual((run.reads, sub.reads), (1, 1))
        for reads, apart in ((2, 2.0), (3, 4.0), (4, 8.0)):
            self.assertEqual(self.look([run, sub]), [])
            self.assertEqual((run.reads, sub.reads), (1, reads))
            self.assertAlmostEqual(
                self.unfit.early_next - time.monotonic(), apart, delta=0.5)
        # not due yet: the summary is read, the task is not
        self.assertEqual(self.look([run, sub], due=False), [])
        self.assertEqual(sub.reads, 4)

    def test_a_task_read_once_accepted_is_not_read_again(self):
        f = self.Future(7, "running")
        self.assertEqual(self.look([f]), [])
        self.assertEqual(f.reads, 1)
        self.assertEqual(self.look([f]), [])
        self.assertEqual(f.reads, 1, "read again, no change")


class NoDaemonSpool(unittest.TestCase):
    """A fresh spool directory and a Client on it, no spoold."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ckspool-py.")
        self.spool = os.path.join(self.tmp, "spool")
        subprocess.run([prog("spool"), "-S", self.spool, "init"], check=True,
                       stdout=subprocess.DEVNULL)
        self.client = ckspool.Client(self.spool, spool=prog("spool"))
        self.addCleanup(subprocess.run, ["rm", "-rf", self.tmp])


class WaitCostTests(NoDaemonSpool):
    """What waiting on many futures costs on a spool directory, with no
    spoold: the tasks are submitted (one bundle in incoming/, IDs 1 to
    3999), and their final directories made by hand, as spoold makes
    them (in tmp/, renamed into tasks/SHARD/ in one step)."""

    N = 3000

    def setUp(self):
        super().setUp()
        # claimed and submitted: a future of an ID in no bundle and not
        # final is gone for good (NoSuchTask)
        subprocess.run([prog("spool"), "-S", self.spool, "map", "--",
                        "true"], input="x\n" * (1000 + self.N - 1),
                       text=True, check=True, stdout=subprocess.DEVNULL)

    def finish(self, id):
        shard = os.path.join(self.spool, "tasks", str(id // 1000))
        os.makedirs(shard, exist_ok=True)
        tmp = os.path.join(self.spool, "tmp", "t.%d" % id)
        os.mkdir(tmp)
        with open(os.path.join(tmp, "result"), "w") as f:
            f.write("id: %d\nattempt: 1\nstate: done\nreason: exit\n"
                    "exit: 0\n" % id)
        open(os.path.join(tmp, "stdout"), "w").close()
        os.rename(tmp, os.path.join(shard, str(id)))

    def test_waiting_costs_per_change_not_per_future(self):
        fs = [self.client.future(i) for i in range(1000, 1000 + self.N)]
        looks = count_done_calls(self)
        # no task of these shards is final: none is looked at
        with self.assertRaises(ckspool.TimeoutError):
            next(self.client.as_completed(fs, timeout=0.3))
        self.assertEqual(looks[0], 0)
        # finishing one at a time: each is looked at about once, the
        # others not again at every one yielded
        it = self.client.as_completed(fs, timeout=WAIT)
        order = [1500, 1001, 3999, 2000, 1002]
        for id in order:
            self.finish(id)
            self.assertEqual(next(it).id, id)
        self.assertLessEqual(looks[0], 2 * len(order))
        done, not_done = self.client.wait(fs, timeout=0)
        self.assertEqual(sorted(f.id for f in done), sorted(order))
        self.assertEqual(len(not_done), self.N - len(order))


class FutureSemanticsTests(NoDaemonSpool):
    """Futures whose tasks are final, with no spoold: their results are
    written by hand, as spoold writes them (in tmp/, renamed into
    tasks/SHARD/ in one step).  What each call does with a cancelled, a
    failed, and a pending future is what concurrent.futures does."""

    def finish(self, id, state, reason, exit=None):
        shard = os.path.join(self.spool, "tasks", str(id // 1000))
        os.makedirs(shard, exist_ok=True)
        tmp = os.path.join(self.spool, "tmp", "t.%d" % id)
        os.mkdir(tmp)
        with open(os.path.join(tmp, "result"), "w") as f:
            f.write("id: %d\nattempt: 1\nstate: %s\nreason: %s\n" %
                    (id, state, reason))
            if exit is not None:
                f.write("exit: %d\n" % exit)
            f.write('message: "%s"\n' % reason)
        open(os.path.join(tmp, "stdout"), "w").close()
        open(os.path.join(tmp, "stderr"), "w").close()
        os.rename(tmp, os.path.join(shard, str(id)))
        return self.client.future(id)

    def pending(self, id):
        """A future of a task accepted and not final: its bundle's
        header in specs/ (what tells it from a task gone for good)."""
        with open(os.path.join(self.spool, "specs", str(id)), "w") as f:
            f.write("first: %d\ncount: 1\n---\n" % id)
        return self.client.future(id)

    def test_exception_of_a_cancelled_future_raises(self):
        f = self.finish(1, "cancelled", "cancelled")
        ref = concurrent.futures.Future()
        ref.cancel()
        for fut in (ref, f):
            self.assertTrue(fut.done())
            self.assertTrue(fut.cancelled())
            self.assertFalse(fut.running())
            with self.assertRaises(concurrent.futures.CancelledError):
                fut.exception()
            with self.assertRaises(concurrent.futures.CancelledError):
                fut.exception(timeout=0)
            with self.assertRaises(concurrent.futures.CancelledError):
                fut.result()
        # a failed one: exception() returns it, result() raises it
        g = self.finish(2, "failed", "exit", exit=3)
        self.assertFalse(g.cancelled())
        self.assertIsInstance(g.exception(), ckspool.TaskFailed)
        with self.assertRaises(ckspool.TaskFailed):
            g.result()
        # a pending one: both raise TimeoutError after the timeout
        h = self.pending(3)
        self.assertFalse(h.done())
        with self.assertRaises(concurrent.futures.TimeoutError):
            h.exception(timeout=0)
        with self.assertRaises(concurrent.futures.TimeoutError):
            h.result(timeout=0)

    def test_cancel_of_a_cancelled_future_is_true(self):
        # as concurrent.futures: True once cancelled, False once it
        # ended otherwise
        ref = concurrent.futures.Future()
        ref.cancel()
        self.assertTrue(ref.cancel())
        self.assertTrue(self.finish(1, "cancelled", "cancelled").cancel())
        self.assertFalse(self.finish(2, "done", "exit", exit=0).cancel())
        self.assertFalse(self.finish(3, "failed", "exit", exit=1).cancel())

    def test_a_callback_of_a_done_future_that_raises(self):
        # as concurrent.futures: said on stderr, not raised to the caller
        # of add_done_callback, and the next callback is called all the
        # same
        f = self.finish(1, "done", "exit", exit=0)
        ref = concurrent.futures.Future()
        ref.set_result("")

        def bad(fut):
            raise RuntimeError("bad callback")
        for fut in (ref, f):
            seen = []
            with contextlib.redirect_stderr(io.StringIO()) as err, \
                    self.assertLogs("concurrent.futures", "ERROR") \
                    if fut is ref else contextlib.nullcontext():
                fut.add_done_callback(bad)
                fut.add_done_callback(seen.append)
            self.assertEqual(seen, [fut])
            if fut is f:
                self.assertIn("RuntimeError: bad callback", err.getvalue())

    def test_wait_returns_what_is_done(self):
        # FIRST_EXCEPTION: a cancelled future is no exception (wait goes
        # on); FIRST_COMPLETED and FIRST_EXCEPTION return every future
        # already done, not only the first seen
        fs = [self.finish(1, "cancelled", "cancelled"),
              self.finish(2, "done", "exit", exit=0)]
        refs = [concurrent.futures.Future(), concurrent.futures.Future()]
        refs[0].cancel()
        refs[0].set_running_or_notify_cancel()
        refs[1].set_result("")
        for how in (concurrent.futures.FIRST_EXCEPTION,
                    concurrent.futures.FIRST_COMPLETED,
                    concurrent.futures.ALL_COMPLETED):
            ref = concurrent.futures.wait(refs, timeout=WAIT,
                                          return_when=how)
            done, not_done = self.client.wait(fs, timeout=WAIT,
                                              return_when=how)
            self.assertEqual((len(done), len(not_done)),
                             (len(ref.done), len(ref.not_done)), how)
            self.assertEqual(done, set(fs))
        # a failure is one: with a task still pending, FIRST_EXCEPTION
        # returns it without waiting for the timeout
        failed = self.finish(3, "failed", "exit", exit=1)
        pending = self.pending(4)
        done, not_done = self.client.wait(
            fs + [failed, pending], timeout=WAIT,
            return_when=concurrent.futures.FIRST_EXCEPTION)
        self.assertEqual(done, set(fs + [failed]))
        self.assertEqual(not_done, {pending})


class RefusalTests(NoDaemonSpool):
    """A refusal reported by the spool command reads as the refusal: what
    "spool submit" prints after its "spool: fatal: "."""

    def test_refusal_without_the_programs_prefix(self):
        cli = subprocess.run([prog("spool"), "-S", self.spool, "submit",
                              "--memory=lots", "true"],
                             stderr=subprocess.PIPE, universal_newlines=True)
        self.assertEqual(cli.stderr, "spool: fatal: --memory lots: size "
                         "must start with a number\n")
        with self.assertRaises(ckspool.SubmitError) as cm:
            self.client.submit("true", memory="lots")
        self.assertEqual(cm.exception.reason,
                         "--memory lots: size must start with a number")
        self.assertEqual(str(cm.exception), cm.exception.reason)
        # one "spool map", and one "spool submit -" of a list of tasks
        # (a newline in an input, which spool quotes and escapes: the
        # refusal is one line, naming the input)
        for items, want in ((["a", "b c"], 'input 2: name "b c": name '
                             'must be 1-128 characters of '),
                            (["a", "b\nc"], 'input 2: name: name must be '
                             '1-128 characters of [A-Za-z0-9_.+@:-]: '
                             '"b\\nc"')):
            with self.assertRaises(ckspool.SubmitError) as cm:
                self.client.map(["true"], items, name="{}")
            self.assertTrue(cm.exception.reason.startswith(want),
                            cm.exception.reason)
            self.assertNotIn("\n", cm.exception.reason)


class NoDaemonMount(NoDaemonSpool):
    """A fresh spool directory mounted with spoolfs, and a Client on the
    mount, no spoold: a submitted task stays in incoming/."""

    def setUp(self):
        super().setUp()
        self.mnt = os.path.join(self.tmp, "mnt")
        os.mkdir(self.mnt)
        with open(os.path.join(self.tmp, "spoolfs.log"), "w") as log:
            self.fs = subprocess.Popen([prog("spoolfs"), self.spool,
                                        self.mnt, "-f"],
                                       stdout=log, stderr=subprocess.STDOUT)
        self.addCleanup(self.unmount)
        until(lambda: is_mounted(self.mnt) or self.fs.poll() is not None,
              "the mount")
        self.assertTrue(is_mounted(self.mnt), "spoolfs did not mount")
        self.client = ckspool.Client(self.mnt)

    def unmount(self):
        """Unmount: spoolfs must exit 0 with a clean log (as Cluster)."""
        if is_mounted(self.mnt):
            subprocess.run(["fusermount3", "-u", "-z", self.mnt])
        rc = self.fs.wait(WAIT)
        log = _read(os.path.join(self.tmp, "spoolfs.log"))
        self.assertFalse(rc != 0 or "Sanitizer" in log or
                         "runtime error" in log,
                         "spoolfs exit %s: %s" % (rc, log[-3000:]))


class MountSubmitTests(NoDaemonMount):

    def test_an_interrupted_write_submits_nothing(self):
        # Ctrl-C (KeyboardInterrupt) part way through writing a task
        # text over one buffer (8 KiB): what was written, a task of its
        # own without the rest (here, without its env), is not submitted
        # when the file is closed, and nothing is left in submit/
        real_open = open

        def cut_short(path, mode="r", *args, **kw):
            f = real_open(path, mode, *args, **kw)
            if "w" in mode:
                real_write = f.write

                def write(text):
                    real_write(text[:text.index("\nenv: ") + 1])
                    f.flush()
                    raise KeyboardInterrupt()
                f.write = write
            return f
        ckspool.open = cut_short
        try:
            with self.assertRaises(KeyboardInterrupt):
                self.client.submit("echo partial", cores=1,
                                   env={"BIG": "x" * 9000})
        finally:
            del ckspool.open
        self.assertEqual(os.listdir(os.path.join(self.mnt, "submit")), [])
        self.assertEqual(os.listdir(os.path.join(self.spool, "incoming")),
                         [])
        # no ID was used: the next task is the first
        f = self.client.submit("echo whole", cores=1, env={"BIG": "x"})
        self.assertEqual(f.id, 1)
        self.assertEqual(os.listdir(os.path.join(self.mnt, "submit")), [])


class MountCancelTests(NoDaemonMount):
    """cancel() through a mount of a task that is not in the spool yet,
    as "spool cancel" does on the spool directory."""

    def requests(self):
        d = os.path.join(self.spool, "control")
        out = []
        for name in sorted(os.listdir(d)):
            with open(os.path.join(d, name)) as f:
                out.append(f.read())
        return out

    def test_cancel_of_a_claimed_task_not_yet_in_the_spool(self):
        # ID 1 claimed (as a submitter claims it) and its bundle not
        # written yet: the mount shows it, "unknown", and the cancel is
        # the request "spool cancel 1" leaves, which spoold retries
        # until the task is there
        # (spoolfs's view is made fresh by a look just before the claim,
        # so that the claim is not in it: an ID is looked for again
        # before it is said not to exist)
        os.makedirs(os.path.join(self.spool, "ids", "0"), exist_ok=True)
        os.listdir(os.path.join(self.mnt, "tasks"))
        os.symlink("1 test.claim.1", os.path.join(self.spool, "ids", "0",
                                                 "1"))
        f = self.client.future(1)
        self.assertTrue(os.path.isdir(f.path))
        self.assertEqual(f.state, "unknown")
        self.assertTrue(f.cancel())
        mine = self.requests()
        self.assertEqual(len(mine), 1)
        subprocess.run([prog("spool"), "-S", self.spool, "cancel", "1"],
                       check=True, stderr=subprocess.DEVNULL)
        self.assertEqual(self.requests(), mine * 2)

    def test_cancel_of_a_task_the_mount_does_not_show(self):
        # ID 2 not claimed (or claimed on another host, not yet seen
        # through the shared storage): the mount has no tasks/2/ and no
        # control file to ask through; cancel() says so, not False,
        # which would say that the task ended
        f = self.client.future(2)
        with self.assertRaises(ckspool.NoSuchTask) as cm:
            f.cancel()
        self.assertIn("spool cancel", str(cm.exception))
        self.assertEqual(self.requests(), [])


class MapRefusalTests(NoDaemonSpool):
    """A map() on a spool directory refused at an input after the first
    chunk (4096) of "spool map": that chunk is in the spool, and its
    futures come with the refusal.  No spoold: the tasks stay in
    incoming/."""

    def test_refused_after_a_chunk(self):
        items = ["x"] * 4096 + ["not a name"]
        with self.assertRaises(ckspool.SubmitError) as cm:
            self.client.map(["true"], items, name="{}")
        e = cm.exception
        self.assertIn("input 4097", e.reason)
        self.assertEqual([f.id for f in e.futures], list(range(1, 4097)))
        # and nothing after it: the next ID is the next one
        self.assertEqual(self.client.submit("true").id, 4097)


class WorkerStateTests(unittest.TestCase):
    """workers() and wait_for_workers() on a spool directory, with no
    spoold: a worker whose status fails its check line (torn, or of
    another version) is not up, as "spool wait-workers" says; one with
    no info is not listed, as in "spool workers"."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ckspool-py.")
        self.spool = os.path.join(self.tmp, "spool")
        subprocess.run([prog("spool"), "-S", self.spool, "init"], check=True,
                       stdout=subprocess.DEVNULL)
        w = os.path.join(self.spool, "workers", "w1")
        os.mkdir(w)
        with open(os.path.join(w, "info"), "w") as f:
            f.write("name: w1\nhost: h\ncores: 1\n")
        with open(os.path.join(w, "status"), "w") as f:
            f.write("beat: 1\nrunning: 0\ndraining: 0\n")   # no check line
        # and one with no info (as "spool workers": not listed)
        os.mkdir(os.path.join(self.spool, "workers", "w2"))
        self.client = ckspool.Client(self.spool, spool=prog("spool"))

    def tearDown(self):
        subprocess.run(["rm", "-rf", self.tmp])

    def test_unreadable_status_is_not_up(self):
        self.assertEqual(self.client.workers(), {"w1": "no-status"})
        with self.assertRaises(ckspool.TimeoutError):
            self.client.wait_for_workers(1, timeout=0)
        cli = subprocess.run([prog("spool"), "-S", self.spool,
                              "wait-workers", "1", "--timeout", "0"],
                             stderr=subprocess.PIPE, universal_newlines=True)
        self.assertEqual(cli.returncode, 3, cli.stderr)
        self.assertIn("0 of 1 workers up", cli.stderr)


    def through_a_mount(self, check):
        """check(client, mount point) with spoolfs on the spool."""
        mnt = os.path.join(self.tmp, "mnt")
        os.mkdir(mnt)
        with open(os.path.join(self.tmp, "spoolfs.log"), "w") as log:
            fs = subprocess.Popen([prog("spoolfs"), self.spool, mnt, "-f"],
                                  stdout=log, stderr=subprocess.STDOUT)
        try:
            until(lambda: is_mounted(mnt) or fs.poll() is not None,
                  "the mount")
            self.assertTrue(is_mounted(mnt), "spoolfs did not mount")
            client = ckspool.Client(mnt)
            self.assertTrue(client.mounted)
            check(client, mnt)
        finally:
            if is_mounted(mnt):
                subprocess.run(["fusermount3", "-u", "-z", mnt])
            fs.wait(WAIT)

    def test_unreadable_status_is_not_up_through_a_mount(self):
        # spoolfs's workers/WID/state says it as "spool workers" does
        # (it said up before)
        def check(client, mnt):
            with open(os.path.join(mnt, "workers", "w1", "state")) as f:
                self.assertEqual(f.read(), "no-status\n")
            self.assertEqual(client.workers(), {"w1": "no-status"})
            with self.assertRaises(ckspool.TimeoutError):
                client.wait_for_workers(1, timeout=0)
        self.through_a_mount(check)

    def write_status(self, text):
        """workers/w1/status: text and its check line, as ckworker
        writes it (spool-layout/beatfile.c: FNV-1a of what precedes)."""
        data = text.encode()
        h = 2166136261
        for c in data:
            h = ((h ^ c) * 16777619) & 0xffffffff
        path = os.path.join(self.spool, "workers", "w1", "status")
        with open(path + ".new", "wb") as f:
            f.write(data + b"check: %08x\n" % h)
        os.rename(path + ".new", path)

    def cli(self, *args):
        return subprocess.run([prog("spool"), "-S", self.spool] + list(args),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True)

    def test_gpus_held_is_up_and_drained_is_not(self):
        # a worker whose GPUs are stuck runs what needs none of them: it
        # counts, as "spool wait-workers" counts it, and every view says
        # gpus-held (spoolfs said up, the client too); once spoold drains
        # it (its marker), draining, counted by none
        self.write_status("beat: 1\nrunning: 0\ngpus_held: 1\n"
                          "draining: 0\n")
        self.assertRegex(self.cli("workers").stdout,
                         r"(?m)^w1 +h +gpus-held ")
        self.assertEqual(self.client.workers(), {"w1": "gpus-held"})
        self.assertEqual(self.client.wait_for_workers(1, timeout=0), 1)
        cli = self.cli("wait-workers", "1", "--timeout", "0")
        self.assertEqual(cli.returncode, 0, cli.stderr)

        def held(client, mnt):
            with open(os.path.join(mnt, "workers", "w1", "state")) as f:
                self.assertEqual(f.read(), "gpus-held\n")
            self.assertEqual(client.workers(), {"w1": "gpus-held"})
            self.assertEqual(client.wait_for_workers(1, timeout=0), 1)
        self.through_a_mount(held)
        with open(os.path.join(self.spool, "workers", "w1", "drain"), "w"):
            pass
        self.assertRegex(self.cli("workers").stdout,
                         r"(?m)^w1 +h +draining ")
        self.assertEqual(self.client.workers(), {"w1": "draining"})
        with self.assertRaises(ckspool.TimeoutError):
            self.client.wait_for_workers(1, timeout=0)
        self.assertEqual(self.cli("wait-workers", "1", "--timeout",
                                  "0").returncode, 3)
        os.rmdir(os.path.join(self.tmp, "mnt"))

        def drained(client, mnt):
            with open(os.path.join(mnt, "workers", "w1", "state")) as f:
                self.assertEqual(f.read(), "draining\n")
            self.assertEqual(client.workers(), {"w1": "draining"})
        self.through_a_mount(drained)


class ClusterControlTests(unittest.TestCase):
    """scale(), adapt(), job_script() and shutdown(), as dask-jobqueue's
    cluster.scale(n), adapt(), job_script() and a close that cancels
    the jobs: "spool scale" and the others, on the spool directory, or
    through a mount on the spool it shows.  The worker jobs here are
    local processes (backend: local)."""

    CLUSTER = ("cluster:\n  backend: local\n  cores: 1\n"
               "  poll-interval: 200ms\n  scale-down-delay: 1s\n")

    def up(self, client):
        return sum(1 for s in client.workers().values() if s == "up")

    def run_cluster(self, mount):
        c = Cluster(mount=mount, local=False, cluster=self.CLUSTER)
        self.addCleanup(c.close)
        client = ckspool.Client(c.path, spool=prog("spool"))
        self.assertIn('# ckspool worker job, kind "default", backend local',
                      client.job_script())
        self.assertEqual(client.workers(), {})
        said = client.scale(2)
        self.assertIn("kind default: 2 jobs (local backend, 1 core each)",
                      said)
        self.assertEqual(client.wait_for_workers(2, timeout=WAIT), 2)
        fs = client.map("echo {}", ["a", "b", "c"])
        self.assertEqual(client.gather(fs), ["a\n", "b\n", "c\n"])
        said = client.adapt(minimum_jobs=1, maximum_jobs=1)
        self.assertIn("kind default: adaptive, 1 to 1 jobs", said)
        until(lambda: self.up(client) == 1, "one worker left")
        said = client.scale(jobs=2)
        self.assertIn("kind default: 2 jobs", said)
        until(lambda: self.up(client) == 2, "two workers again")
        with self.assertRaises(ckspool.ClusterError) as cm:
            client.scale(1, kind="nope")
        self.assertIn('no worker kind "nope"', cm.exception.reason)
        self.assertEqual(cm.exception.status, 2)
        with self.assertRaises(ValueError):
            client.scale(1, jobs=1)
        with self.assertRaises(ValueError):
            client.adapt(minimum=1)
        said = client.shutdown(timeout=WAIT)
        self.assertIn("spool: spoold stopped; no worker job left", said)
        self.assertEqual(c.spoold.wait(WAIT), 0)
        until(lambda: self.up(client if not mount else
                              ckspool.Client(c.spool)) == 0,
              "the workers to leave")
        if mount:
            self.assertIn("1 mount of the spool on this host unmounted",
                          said)
            self.assertFalse(is_mounted(c.mnt))
            with self.assertRaises(ckspool.MountGone):
                client.scale(1)
            client = ckspool.Client(c.spool, spool=prog("spool"))
        # no spoold now: nothing to cancel, and it says so
        said = client.shutdown(timeout=WAIT)
        self.assertIn("spoold is not running", said)
        # a job whose record says it may be queued: named, status 1
        with open(os.path.join(c.spool, "jobs", "4211"), "w") as f:
            f.write("id: 4211\nkind: default\nbackend: slurm\n"
                    "state: pending\n")
        with self.assertRaises(ckspool.ClusterError) as cm:
            client.shutdown(timeout=WAIT)
        self.assertEqual(cm.exception.status, 1)
        self.assertEqual(cm.exception.reason,
                         "job 4211 (slurm) may still be in the queue")
        self.assertIn("spoold is not running", cm.exception.output)

    def test_on_the_spool_directory(self):
        self.run_cluster(mount=False)

    def test_through_a_mount(self):
        self.run_cluster(mount=True)


class WorkerCountTests(unittest.TestCase):
    """wait_for_workers(n) counts dask workers, as "spool wait-workers N"
    and "spool scale N" do: a job's worker of a kind with processes: 2
    is two of them."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ckspool-py.")
        self.spool = os.path.join(self.tmp, "spool")
        subprocess.run([prog("spool"), "-S", self.spool, "init"], check=True,
                       stdout=subprocess.DEVNULL)
        with open(os.path.join(self.spool, "spool.yaml"), "w") as f:
            f.write("cluster:\n  cores: 2\n  processes: 2\n")
        self.log = open(os.path.join(self.tmp, "worker.log"), "w")
        # as its job script starts it
        self.worker = subprocess.Popen(
            [prog("ckworker"), "-S", self.spool, "--name", "default@7",
             "--cores", "2", "--processes", "2"],
            stdout=self.log, stderr=subprocess.STDOUT)
        self.client = ckspool.Client(self.spool, spool=prog("spool"))

    def tearDown(self):
        self.worker.terminate()
        self.worker.wait()
        self.log.close()
        subprocess.run(["rm", "-rf", self.tmp])

    def cli_wait(self, n, timeout):
        return subprocess.run([prog("spool"), "-S", self.spool,
                               "wait-workers", str(n), "--timeout", timeout],
                              stderr=subprocess.PIPE,
                              universal_newlines=True)

    def test_a_job_of_two_processes_counts_two(self):
        cli = self.cli_wait(2, "%ds" % WAIT)
        self.assertEqual(cli.returncode, 0, cli.stderr)
        self.assertEqual(list(self.client.workers().values()), ["up"])
        self.assertEqual(self.client.wait_for_workers(2, timeout=0), 2)
        with self.assertRaises(ckspool.TimeoutError):
            self.client.wait_for_workers(3, timeout=0)
        self.assertEqual(self.cli_wait(3, "0").returncode, 3)


if __name__ == "__main__":
    unittest.main()
