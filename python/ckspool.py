"""ckspool - the notebook client of ckspool (standard library only).

Futures on a ckspool spool, with the interface of dask.distributed.Client
and concurrent.futures::

    from ckspool import Client
    client = Client("~/mnt/spool")      # a spoolfs mount, or a spool directory
    f = client.submit("sleep 1; echo hi", cores=2, memory="1G", walltime="10:00")
    f.result()                          # 'hi\\n': the task's stdout
    fs = client.map("gzip -k {}", paths)
    client.gather(fs)                   # their stdouts, in order
    g = client.submit(max, client.map(fit, paths, alpha=0.5))
    g.result()                          # what max(fit(p) ...) returned
    for f in client.as_completed(fs):
        print(f.id, f.state)
    fs = client.retry(fs)               # the failed ones again, as new tasks
    client.scale(4)                     # dask-jobqueue's cluster.scale(4)
    client.wait_for_workers(4)
    client.shutdown()                   # cancel the worker jobs, stop spoold

A task is a command: a string runs with /bin/sh -c, a list runs as is.
A future's result is the task's standard output (text); a task that did
not end with exit status 0 raises TaskFailed (its result record, exit
status, reason and the end of its stderr are in the exception), a
cancelled one concurrent.futures.CancelledError.

A task can also be a Python function (submit(fn, *args, **kwargs),
map(fn, *iterables, **kwargs)): the task runs "PYTHON -c RUNNER
PAYLOAD VERSION", the call pickled in its command (at most 98,301
bytes), with the notebook's interpreter (Client(..., python=PATH)
names another; of the notebook's Python version, which the task
checks) in the notebook's working directory; its result is what the
function returned, and an exception it raised is raised again by
result(), with the task's traceback as a note.  Futures among the
arguments (in lists, tuples and dicts too) are dependencies, their
results passed in their place.  Functions of __main__, lambdas and
local functions are sent by value with cloudpickle (Debian:
python3-cloudpickle), which the task's interpreter needs too; others by
name.  Only a return.pickle of this user's is unpickled.  Each call
starts an interpreter: give it a second of work or more.

Nothing lives in the Python process: futures are task IDs, and a new
Client (or another notebook) can pick them up again with
client.future(ID).

Two ways to reach a spool, chosen by what the path is:

  * a spoolfs mount (spoolfs(1)): submitting writes a YAML task file (a
    map's tasks: a YAML list of them, a file a list) into MOUNT/submit/
    under a "."-name, renames it once whole (a write cut short by Ctrl-C
    submits nothing) and reads the receipt; waits
    poll(2) the tasks' state files, which spoolfs wakes when a state
    changes, and are interrupted by Ctrl-C (the task goes on).  A task
    gone for good (removed by "spool purge") raises NoSuchTask: spoolfs
    fails the read of its result with ENOENT.  "spool shutdown"
    unmounts the spool's mounts (spoolfs(1)): a wait, submit or cancel
    through one that is gone raises MountGone, a ConnectionError; the
    tasks and their results stay in the spool directory.

  * a spool directory, without FUSE: submitting runs the "spool" command
    ("spool submit", one "spool map" for a whole map()), so IDs are
    claimed and bundles written by the one implementation of the on-disk
    protocol (spool-layout(5)) that every other submitter uses; waiting
    checks tasks/SHARD/ID/result, rescanning only the shard directories
    whose modification time moved (each listed once, none before it
    exists), every 10 ms at first and then less often, up to 1 s (as
    "spool wait" does without inotify).  A task gone for good (removed
    by "spool purge") raises NoSuchTask: where a shard moved, the tasks
    not final are looked for in the bundles, then in tasks/.

Waiting on many futures (as_completed, wait) costs per change, not per
future: each pending task is looked at once at the start, and then
only where something moved.

A task waited on that no worker can run (it asks more cores, GPUs,
memory or walltime than any worker registered or on its way, or any
kind with a size asked, has) is said once, as an UnfitTaskWarning, as
"spool wait" says it; the wait goes on, since a worker that fits may
still come.  To make it an error: warnings.simplefilter("error",
ckspool.UnfitTaskWarning).

The "spool" program is found on $PATH, or given as Client(..., spool=PATH).
"""

import base64
import bisect
import concurrent.futures
import errno
import functools
import itertools
import json
import math
import os
import pickle
import re
import select
import shlex
import stat
import subprocess
import sys
import threading
import time
import traceback
import warnings

__all__ = ["Client", "Future", "TaskFailed", "SubmitError", "NoSuchTask",
           "MountGone", "UnfitTaskWarning",
           "CancelledError", "TimeoutError", "FINAL_STATES"]

CancelledError = concurrent.futures.CancelledError
TimeoutError = concurrent.futures.TimeoutError   # the builtin, 3.11 on

FINAL_STATES = ("done", "failed", "cancelled", "rejected")
SHARD_SIZE = 1000
RESCAN_MIN = 0.01
RESCAN_MAX = 1.0
UNFIT_EVERY = 1.0       # spoold's unfit shapes looked at, while waiting
UNFIT_EARLY_MAX = 64.0  # tasks not accepted yet looked at again, at most
STATUS_IDS_MAX = 500    # IDs a "spool status" is given at once
POLL_FDS_MAX = 256      # state files open at once in as_completed()
STDERR_TAIL = 2000
# A list of tasks submitted as one file (spoolfs's submit/, or "spool
# submit -"): within taskfile.h's bounds (TASK_FILE_MAX 1 MiB,
# TASKFILE_LIST_MAX tasks) and yamlx.h's YAMLX_NODES_MAX, with room
LIST_BYTES = 1000000
LIST_TASKS = 2000
LIST_NODES = 90000

_names = itertools.count(1)


class SubmitError(Exception):
    """A task was refused; .reason says why (as "spool submit" would).

    From map(), .futures are the tasks of the items before the refused
    one that were submitted all the same (through a mount, each item is
    a submission of its own; on a spool directory, "spool map" commits
    chunks of 4096), to wait on or to cancel; [] when none was."""

    def __init__(self, reason, futures=()):
        super().__init__(reason)
        self.reason = reason
        self.futures = list(futures)


class ClusterError(RuntimeError):
    """scale(), adapt(), shutdown() or job_script() that "spool" refused
    or could not carry out: .reason is its last message ("no worker kind
    ..."), or for shutdown() what it left ("job 4211 (slurm) may still
    be in the queue", a mount still there, joined by "; "), .status its
    exit status (spool(1): 1, a job may be left; 3, something did not
    end within the timeout), .output all it said."""

    def __init__(self, reason, status=None, output=""):
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.output = output


class NoSuchTask(LookupError):
    """A future whose task the spool does not have: its ID was never
    claimed, or the task is gone for good (removed by "spool purge"),
    or, through a mount, it is claimed where the mount does not see it
    yet (cancel() then raises it; directly, cancel() leaves a request
    that spoold retries)."""


class MountGone(ConnectionError):
    """A wait, submit or cancel through a spoolfs mount that is no
    longer mounted: "spool shutdown" unmounts a spool's mounts
    (spoolfs(1)), and so does fusermount3 -u.  Its tasks and results
    stay in the spool directory: mount it again, or use a Client on the
    spool directory.  .future is the future waited on or cancelled when
    it was found (None for a submit)."""


class UnfitTaskWarning(UserWarning):
    """A task waited on is queued and no worker can run it: none
    registered or on its way, nor a kind with a size asked, has the
    cores, GPUs, memory or walltime it asks (spoold's summary counts it
    as unfit, "spool status ID" shows the REASON unfit).  Said once a
    wait, and once a task for a Client; the wait goes on, since a worker
    that fits may still come.  .future is the first such task, .count
    how many of those waited on are so, .asks what it asks."""

    def __init__(self, message, future, count, asks):
        super().__init__(message)
        self.future = future
        self.count = count
        self.asks = asks


class TaskFailed(Exception):
    """A task ended without success: failed, or rejected.

    .record is its result record as a dict (state, reason, exit, signal,
    message, worker, host, times, memory ...), .stderr the end of its
    standard error."""

    def __init__(self, future, record, stderr):
        self.future = future
        self.record = record
        self.state = record.get("state")
        self.reason = record.get("reason")
        self.exit = record.get("exit")
        self.signal = record.get("signal")
        self.stderr = stderr
        how = "task %s %s (%s" % (future.id, self.state, self.reason)
        if self.exit is not None:
            how += " %s" % self.exit
        elif self.signal is not None:
            how += " signal %s" % self.signal
        how += ")"
        if record.get("message"):
            how += ": " + str(record["message"])
        if stderr.strip():
            how += "\n--- stderr (end) ---\n" + stderr.rstrip()
        super().__init__(how)


# ---- the record format (spool-layout(5), "RECORD FORMAT") ----

def _unquote(s):
    out = []
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            n = s[i + 1]
            if n == "x" and i + 3 < len(s):
                out.append(chr(int(s[i + 2:i + 4], 16)))
                i += 4
                continue
            out.append({"n": "\n", "t": "\t", "r": "\r"}.get(n, n))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _split_list(body):
    """Items of a flow list: integers or double-quoted strings."""
    items, i = [], 0
    while i < len(body):
        c = body[i]
        if c in " ,":
            i += 1
        elif c == '"':
            j = i + 1
            while j < len(body) and body[j] != '"':
                j += 2 if body[j] == "\\" else 1
            items.append(_unquote(body[i + 1:j]))
            i = j + 1
        else:
            j = i
            while j < len(body) and body[j] != ",":
                j += 1
            items.append(_value(body[i:j].strip()))
            i = j
    return items


def _value(v):
    if v.startswith('"') and v.endswith('"') and len(v) >= 2:
        return _unquote(v[1:-1])
    if v.startswith("[") and v.endswith("]"):
        return _split_list(v[1:-1])
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    return v


def parse_record(text):
    """A record ("key: value" lines) as a dict; the first record only."""
    rec = {}
    for line in text.splitlines():
        if line == "---":
            break
        key, sep, val = line.partition(": ")
        if sep:
            rec[key] = _value(val)
    return rec


# ---- the client ----

def _duration(v):
    """A walltime in seconds as spool takes it: whole seconds, a
    fraction rounded up (0.5 truncated would be 0, which is no limit
    at all)."""
    if isinstance(v, (int, float)):
        return str(math.ceil(v))
    return str(v)


def _task_options(cores=None, memory=None, gpus=None, walltime=None,
                  after=(), name=None, env=None, cwd=None, priority=None,
                  retries=None):
    """The options of a task as (key, value) pairs, values as strings."""
    opts = []
    if cores is not None:
        opts.append(("cores", str(int(cores))))
    if memory is not None:
        opts.append(("memory", str(int(memory)) if isinstance(memory, (int, float))
                     else str(memory)))
    if gpus is not None:
        opts.append(("gpus", str(int(gpus))))
    if walltime is not None:
        opts.append(("walltime", _duration(walltime)))
    if priority is not None:
        opts.append(("priority", str(int(priority))))
    if retries is not None:
        opts.append(("retries", str(int(retries))))
    if name is not None:
        opts.append(("name", str(name)))
    if cwd is not None:
        opts.append(("cwd", os.path.abspath(str(cwd))))
    ids = [str(_id_of(a)) for a in (after or ())]
    if ids:
        opts.append(("after", ",".join(ids)))
    for k, v in (env or {}).items():
        opts.append(("env", "%s=%s" % (k, v)))
    return opts


_OPTION_NAMES = ("cores", "memory", "gpus", "walltime", "after", "name", "env",
                 "cwd", "priority", "retries")


def _pop_options(options):
    """The task's options (_task_options's keywords) taken out of
    options, a dict of map()'s keywords."""
    return dict((k, options.pop(k)) for k in _OPTION_NAMES if k in options)


def _id_of(x):
    if isinstance(x, Future):
        return x.id
    return int(x)


class Client:
    """A connection to a spool, through a spoolfs mount or directly.

    path: the mount or the spool directory (default: $SPOOL).
    spool: the "spool" program (for direct access, and for scale(),
    adapt(), job_script() and shutdown() through a mount too; default:
    on $PATH).
    python: the interpreter that runs the Python functions submitted
    (default: this one, sys.executable, which the workers' hosts must
    have at the same path, as dask-jobqueue's workers must).
    """

    def __init__(self, path=None, spool="spool", python=None):
        path = path or os.environ.get("SPOOL")
        if not path:
            raise ValueError("no spool: give a path or set $SPOOL")
        self.path = os.path.abspath(os.path.expanduser(path))
        if os.path.isdir(os.path.join(self.path, "submit")) and \
                os.path.isdir(os.path.join(self.path, "tasks")) and \
                not os.path.exists(os.path.join(self.path, "FORMAT")):
            self.mounted = True
        elif os.path.isfile(os.path.join(self.path, "FORMAT")):
            self.mounted = False
        else:
            raise ValueError("%s is neither a spoolfs mount nor a spool" %
                             self.path)
        self.spool = spool
        self.python = python or sys.executable
        if not self.python:
            raise ValueError("no Python interpreter for function tasks: "
                             "give Client(..., python=PATH)")
        self._callbacks = _Callbacks(self)
        self._unfit_said = set()    # IDs an UnfitTaskWarning named

    def __repr__(self):
        return "<ckspool.Client %s (%s)>" % (
            self.path, "spoolfs mount" if self.mounted else "spool directory")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Nothing to release: futures are files, not connections."""

    # -- paths --

    def task_dir(self, id):
        if self.mounted:
            return os.path.join(self.path, "tasks", str(id))
        return os.path.join(self.path, "tasks", str(id // SHARD_SIZE), str(id))

    def future(self, id):
        """The future of an existing task (from another session too)."""
        return Future(self, int(id))

    # -- submitting --

    def submit(self, cmd, *args, cores=None, memory=None, gpus=None,
               walltime=None, after=(), name=None, env=None, cwd=None,
               priority=None, retries=None, **kwargs):
        """Submit one task; a Future.  cmd: a shell string or an argv
        list; or a Python function, called as cmd(*args, **kwargs) by
        the task (dask's client.submit(fn, *args, **kwargs)), its
        result what fn returned: see the module's documentation, and
        doc/notebook.md, "Python functions".

        memory: bytes or "4G"; walltime: seconds or "1:30:00"; after:
        futures or IDs that must succeed first."""
        call = callable(cmd)
        if call:
            kwargs, key = _dask_keywords(kwargs)
            cmd, after, name, cwd = self._call(cmd, args, kwargs, after,
                                               name or key, cwd)
        elif args or kwargs:
            raise TypeError("submit(): arguments %s are for a Python "
                            "function; a command takes none" %
                            ", ".join([repr(a) for a in args] +
                                      sorted(kwargs)))
        opts = _task_options(cores, memory, gpus, walltime, after, name, env,
                             cwd, priority, retries)
        return Future(self, self._submit_one(cmd, opts), call=call)

    def map(self, template, *iterables, **options):
        """Submit one task per item; a list of Futures, in input order.

        template: a Python function, called once per item of the
        iterables zipped, with the keyword arguments that are not
        submit()'s options (dask's client.map(fn, *iterables,
        **kwargs)); or a shell string in which {} is replaced by the item,
        shell-quoted, and {#} by its 1-based number; or an argv list in
        whose words {} and {#} are replaced (no quoting needed).  A
        template without {} gets the item as its last word, as in
        "spool map" (map("gzip -k", paths) gzips each path).  The
        options are submit()'s, the same for every task, except that {}
        and {#} in name are replaced too, as "spool map --name" does
        (name="part-{#}" names the tasks part-1, part-2, ...)."""
        if callable(template):
            return self._map_calls(template, iterables, options)
        if len(iterables) != 1:
            raise TypeError("map() of a command takes one iterable, not %d"
                            % len(iterables))
        items = [str(x) for x in iterables[0]]
        if not items:
            return []
        opts = _task_options(**_pop_options(options))
        if options:
            raise TypeError("map() got unknown options: %s" %
                            ", ".join(sorted(options)))
        if self.mounted or any("\n" in x for x in items) or \
                (not isinstance(template, str) and
                 ":::" in [str(w) for w in template]):
            # a task each, in lists of tasks: {} and {#} of the name
            # are ours to replace, as "spool map" replaces them in one
            # map below (which takes items a line each, and a word ":::"
            # of the command for the start of its inputs)
            return self._submit_each(
                ((_fill(template, x, i),
                  [(k, _fill_name(v, x, i) if k == "name" else v)
                   for k, v in opts]) for i, x in enumerate(items, 1)),
                call=False)
        return [Future(self, i, call=False)
                for i in self._map_cli(template, items, opts)]

    def _call(self, fn, args, kwargs, after, name, cwd):
        """The command, after, name and working directory of a task that
        calls fn(*args, **kwargs).  The futures among the arguments (at
        any depth of lists, tuples and dicts) become dependencies, the
        first in the after list, in order; the task reads their results
        in their place (_RUNNER)."""
        found = []
        call = _strip_futures((tuple(args), dict(kwargs)), (), found)
        ids = []
        for _, f in found:
            if f.client.path != self.path:
                raise ValueError("task %d is a future of %s, not of %s: "
                                 "a task can wait only on tasks of its "
                                 "spool" % (f.id, f.client.path, self.path))
            if f.id not in ids:
                ids.append(f.id)
        deps = [(path, ids.index(f.id)) for path, f in found]
        for a in after or ():
            if _id_of(a) not in ids:
                ids.append(_id_of(a))
        payload = _call_payload(fn, call, deps)
        if name is None:
            name = _call_name(fn)
        if cwd is None:
            try:
                cwd = os.getcwd()   # where fn's own modules are imported from
            except OSError:
                pass                # (removed: the task's own directory)
        return ([self.python, "-c", _RUNNER, payload, _PY_VERSION], ids,
                name, cwd)

    def _map_calls(self, fn, iterables, options):
        """map(fn, *iterables, **kwargs): a task per item, each a call."""
        if not iterables:
            raise TypeError("map() of a function needs an iterable")
        topts = _pop_options(options)
        options, key = _dask_keywords(options)
        if topts.get("name") is None and key is not None:
            topts["name"] = key
        items = list(zip(*iterables))
        calls = [self._call(fn, args, options, topts.get("after", ()),
                            topts.get("name"), topts.get("cwd"))
                 for args in items]
        if not calls:
            return []
        name = topts.get("name")
        if self.mounted or any(c[1] != calls[0][1] for c in calls) or \
                (name is not None and "{}" in str(name)):
            # a task each, in lists of tasks: through a mount, or where
            # their dependencies differ (spool map gives all the same
            # --after)
            return self._submit_each(
                ((cmd, _task_options(**dict(
                    topts, after=after, cwd=cwd, name=None if nm is None
                    else _fill_name(nm, str(args[0]), i))))
                 for i, (args, (cmd, after, nm, cwd))
                 in enumerate(zip(items, calls), 1)), call=True)
        # one "spool map": the payload is the item, its {} the word
        # before the version
        opts = _task_options(**dict(topts, after=calls[0][1],
                                    name=calls[0][2], cwd=calls[0][3]))
        return [Future(self, i, call=True) for i in
                self._map_cli(calls[0][0][:3] + ["{}"] + calls[0][0][4:],
                              [c[0][3] for c in calls], opts)]

    def _submit_one(self, cmd, opts):
        """Submit one task (through the mount, or "spool submit"): its
        ID."""
        if self.mounted:
            return self._submit_mount(cmd, opts)
        return self._submit_cli(cmd, opts)

    def _submit_each(self, tasks, call):
        """Submit (cmd, opts) pairs, each a task of its own: their
        futures.  They go as lists of tasks, a submission (one bundle)
        a list: through a mount a file each, on a spool directory a
        "spool submit -" each; a task with a word that is not UTF-8,
        which YAML cannot hold, goes alone on a spool directory, through
        "spool submit" with its words as they are.  A refusal raises
        SubmitError naming the input's number, with the futures of the
        lists submitted before its own, which are in the spool (none of
        its own list is)."""
        out, chunk = [], []
        size = nodes = 0
        first = 1
        for i, (cmd, opts) in enumerate(tasks, 1):
            try:
                item = _yaml_item(cmd, opts)
            except SubmitError as e:
                self._submit_list(chunk, first, out, call)
                chunk, size, nodes, first = [], 0, 0, i + 1
                if self.mounted:
                    raise SubmitError("input %d: %s" % (i, e.reason),
                                      out) from None
                try:
                    out.append(Future(self, self._submit_cli(cmd, opts),
                                      call=call))
                except SubmitError as e2:
                    raise SubmitError("input %d: %s" % (i, e2.reason),
                                      out) from None
                continue
            cost = _yaml_nodes(cmd, opts)
            if chunk and (size + len(item) > LIST_BYTES or
                          len(chunk) >= LIST_TASKS or
                          nodes + cost > LIST_NODES):
                self._submit_list(chunk, first, out, call)
                chunk, size, nodes, first = [], 0, 0, i
            chunk.append(item)
            size += len(item)
            nodes += cost
        self._submit_list(chunk, first, out, call)
        return out

    def _submit_list(self, items, first, out, call):
        """Submit the YAML list of items (tasks first, first+1, ... of
        the caller's input) as one submission; their futures appended
        to out.  A refusal raises SubmitError naming the input, with
        out."""
        if not items:
            return
        text = "".join(items)
        try:
            if self.mounted:
                ids = self._submit_mount_text(text)
            else:
                ids = [int(x) for x in
                       self._run_spool(["submit", "-"], stdin=text).split()]
        except SubmitError as e:
            # "... task K of the list: REASON" (taskfile.h), "task K:
            # REASON" (submit.h); else the list's
            m = re.search(r"(?:^|: )task ([0-9]+)(?: of the list)?: (.*)$",
                          e.reason, re.S)
            if m and 1 <= int(m.group(1)) <= len(items):
                reason = "input %d: %s" % (first + int(m.group(1)) - 1,
                                           m.group(2))
            elif len(items) == 1:
                reason = "input %d: %s" % (first, e.reason)
            else:
                reason = "inputs %d-%d: %s" % (first, first + len(items) - 1,
                                               e.reason)
            raise SubmitError(reason, out) from None
        if len(ids) != len(items):
            raise SubmitError("inputs %d-%d: %d IDs came back for %d tasks" %
                              (first, first + len(items) - 1, len(ids),
                               len(items)), out)
        out.extend(Future(self, i, call=call) for i in ids)

    def _submit_mount(self, cmd, opts):
        return self._submit_mount_text(_yaml_task(cmd, opts))[0]

    def _submit_mount_text(self, text):
        """Submit a task file (a task, or a list of them) through the
        mount: the IDs of its receipt."""
        # the process's ID now, not when the Client was made: a process
        # forked since (multiprocessing) has the same counter, and its
        # names must not be its parent's, or the two write one file
        name = "py-%d-%d" % (os.getpid(), next(_names))
        path = os.path.join(self.path, "submit", name)
        # written under a "."-name, which spoolfs holds at its close, and
        # submitted by the rename (spoolfs(1)): a write cut short (Ctrl-C
        # in a text over one buffer, 8 KiB; an error) leaves a held file
        # to remove, where the close of the name itself would submit the
        # part written, a task of its own
        held = os.path.join(self.path, "submit", "." + name)
        try:
            with open(held, "w") as f:
                f.write(text)
        except OSError as e:
            _remove(held)
            gone = _unmounted(self, None, e)
            if gone is not None:
                raise gone from None
            raise SubmitError("write: %s: %s" % (held, e.strerror)) from None
        except BaseException:
            _remove(held)
            raise
        try:
            os.rename(held, path)
        except OSError as e:
            # refused: the reason is the name's, and the held file gone
            reason = _read_or(path + ".why", "").strip()
            _remove(path + ".why")
            _remove(held)
            raise SubmitError(reason.partition(": ")[2] or str(e)) from None
        except BaseException:
            _remove(held)       # (gone if the rename took place)
            raise
        with open(path) as f:
            receipt = f.read()
        _remove(path)
        return [int(x) for x in receipt.split()]

    def _run_spool(self, args, stdin=None):
        return self._spool_run(args, stdin)[0]

    def _spool_run(self, args, stdin=None, spool=None, error=SubmitError):
        """Run "spool -S SPOOL ARGS" (SPOOL: this client's spool
        directory unless given); its standard output and error, or
        error raised with its message."""
        try:
            # (a word os.fsdecode made of bytes that are not UTF-8, a
            # file name, goes to spool as those bytes, as in argv)
            p = subprocess.run([self.spool, "-S", spool or self.path] + args,
                               input=stdin, capture_output=True, text=True,
                               errors="surrogateescape")
        except FileNotFoundError:
            raise error("%s: not found (give Client(..., spool=PATH))" %
                        self.spool) from None
        if p.returncode != 0:
            # its last message, "spool: fatal: REASON" (msg.h), from its
            # line on, not its last line (spool quotes what a user gave,
            # a newline too, but a reason of another version may not);
            # the REASON alone is the refusal (the program names itself
            # as it was run)
            prog = os.path.basename(self.spool) + ": "
            lines = p.stderr.strip().split("\n")
            at = max([i for i, line in enumerate(lines)
                      if line.startswith(prog)] or [len(lines) - 1])
            msg = "\n".join(lines[at:]) or "exit status %d" % p.returncode
            for prefix in (prog, "fatal: "):
                if msg.startswith(prefix):
                    msg = msg[len(prefix):]
            if error is ClusterError:
                raise ClusterError(msg, p.returncode, p.stderr)
            e = error(msg)
            e.output = p.stdout     # what it printed before it failed
            raise e
        return p.stdout, p.stderr

    def _submit_cli(self, cmd, opts):
        args = ["submit"] + ["--%s=%s" % kv for kv in opts]
        if isinstance(cmd, str):
            args += ["--shell", cmd]
        else:
            args += ["--"] + [str(w) for w in cmd]
        return int(self._run_spool(args).split()[0])

    def _map_cli(self, template, items, opts):
        args = ["map"] + ["--%s=%s" % kv for kv in opts]
        if isinstance(template, str):
            # the item reaches sh as "$1" and its number as "$2": no quoting
            body = _with_item(template).replace("{#}", '"$2"') \
                .replace("{}", '"$1"')
            args += ["--", "sh", "-c", body, "sh", "{}", "{#}"]
        else:
            args += ["--"] + [str(w) for w in template]
        try:
            out = self._run_spool(args,
                                  stdin="".join(x + "\n" for x in items))
        except SubmitError as e:
            # the IDs of the chunks committed before the refused input
            e.futures = [Future(self, int(x))
                         for x in getattr(e, "output", "").split()]
            raise
        ids = [int(x) for x in out.split()]
        if len(ids) != len(items):
            raise SubmitError("spool map printed %d IDs for %d inputs" %
                              (len(ids), len(items)))
        return ids

    # -- waiting --

    def gather(self, futures, errors="raise"):
        """The results of futures, in order.  errors="raise": a failure
        raises as soon as it is found, as Dask's gather does (of those
        found final together, the first in the order given), not once
        the tasks before it have ended; "skip": failed and cancelled
        tasks are left out.  They are waited on together, as by
        as_completed, so a warning of tasks no worker can run counts
        them all."""
        futures = list(futures)
        order = {}
        for i, f in enumerate(futures):
            order.setdefault(f, i)
        for got in _completed(self, futures, None):
            if errors == "raise":
                for f in sorted(got, key=order.get):
                    if f.state != "done":
                        f.result()      # raises
        out = []
        for f in futures:
            try:
                out.append(f.result())
            except (TaskFailed, CancelledError):
                if errors == "raise":
                    raise
        return out

    def as_completed(self, futures, timeout=None):
        """Yield each future as it finishes (any final state)."""
        return (f for got in _completed(self, list(futures), timeout)
                for f in got)

    def wait(self, futures, timeout=None,
             return_when=concurrent.futures.ALL_COMPLETED):
        """concurrent.futures.wait: (done, not_done) sets.  As there, done
        holds every future found final when it returns (with
        FIRST_COMPLETED, all those already final, not one of them), and
        FIRST_EXCEPTION returns at a failed or rejected task, not at a
        cancelled one."""
        futures = set(futures)
        done = set()
        try:
            for got in _completed(self, list(futures), timeout):
                done.update(got)
                if return_when == concurrent.futures.FIRST_COMPLETED:
                    break
                if return_when == concurrent.futures.FIRST_EXCEPTION and \
                        any(f.state not in ("done", "cancelled")
                            for f in got):
                    break
        except TimeoutError:
            pass
        return done, futures - done

    def workers(self):
        """{WID: state} for the workers in the spool, as "spool workers"
        says, through a mount too (its workers/WID/state): up, draining
        (the worker drains or spoold drains it), gpus-held (up, some of
        its GPUs kept by processes of ended tasks), lost, exited, or
        no-status (its status cannot be read; "spool wait-workers" does
        not count it either)."""
        base = os.path.join(self.path, "workers")
        out = {}
        for wid in sorted(_listdir(base)):
            if wid.startswith("."):
                continue
            d = os.path.join(base, wid)
            if not _info_ok(os.path.join(d, "info")):
                continue    # as "spool workers": not (yet) a worker
            if self.mounted:
                state = _read_or(os.path.join(d, "state"), "").strip()
            else:
                state = _worker_state(d)
            if state:
                out[wid] = state
        return out

    def wait_for_workers(self, n, timeout=None):
        """Wait until at least n workers are up (dask's wait_for_workers),
        counted as "spool wait-workers N" and "spool scale N" count them:
        in dask workers, a job's worker for its processes."""
        deadline = None if timeout is None else time.monotonic() + timeout
        delay = RESCAN_MIN
        while True:
            up = sum(self._weight(w) for w, s in self.workers().items()
                     if s in ("up", "gpus-held"))
            if up >= n:
                return up
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError("%d of %d workers up after %ss" %
                                   (up, n, timeout))
            time.sleep(delay if deadline is None else
                       max(0, min(delay, deadline - time.monotonic())))
            delay = min(delay * 2, RESCAN_MAX)

    def _weight(self, wid):
        """What worker wid counts for in dask workers: the processes
        (task slots) its job started it with, for a worker of a kind
        ("KIND@JOB"); 1 for one started by hand or by "spoold --local"."""
        info = parse_record(_read_or(os.path.join(self.path, "workers", wid,
                                                  "info"), ""))
        slots = info.get("slots")
        if "@" in str(info.get("name", "")) and isinstance(slots, int) \
                and slots > 1:
            return slots
        return 1

    def cancel(self, futures):
        """Cancel many futures at once (dask's client.cancel): on a spool
        directory one "spool cancel" request names them all, through a
        mount each is asked through its control file.  A list of what
        each Future.cancel() says: True (asked, or cancelled already),
        False (it ended otherwise)."""
        futures = list(futures)
        if self.mounted:
            return [f.cancel() for f in futures]
        said = [None] * len(futures)
        ask = []
        for i, f in enumerate(futures):
            if f.done():
                said[i] = f.state == "cancelled"
            else:
                ask.append(i)
        if ask:
            # the IDs on its standard input: no limit of argv's
            self._run_spool(["cancel"], stdin="".join(
                "%d\n" % futures[i].id for i in ask))
            for i in ask:
                said[i] = True
        return said

    def retry(self, futures):
        """Run failed and cancelled futures again (dask's client.retry):
        each is submitted again as a new task ("spool retry"), and so
        are its failed or cancelled dependencies, the new task waiting
        for the new dependency.  Returns a list of futures in the order
        given: a new one for each run again, the same one for a future
        done or not ended.  Unlike dask's, the futures given stay what
        they were (a result never changes once written): use the list
        returned.  SubmitError, with nothing submitted, when one cannot
        be (an unknown ID, a rejected task, another user's task: the new
        one would run as this user)."""
        futures = list(futures)
        if not futures:
            return []
        out = self._spool_run(["retry"], spool=self._spool_dir(),
                              stdin="".join("%d\n" % f.id
                                            for f in futures))[0].split()
        if len(out) != len(futures):
            raise SubmitError("spool retry printed %d IDs for %d futures" %
                              (len(out), len(futures)))
        return [f if int(i) == f.id else Future(self, int(i))
                for f, i in zip(futures, out)]

    # -- the cluster: worker jobs (spool scale, adapt, shutdown) --

    def scale(self, n=None, *, jobs=None, kind=None):
        """Ask for n workers, or jobs worker jobs, of kind (default: the
        first kind of spool.yaml), as dask-jobqueue's cluster.scale(n)
        and scale(jobs=N): spoold submits or cancels jobs until there
        are that many ("spool scale"; n counts dask workers, a job's
        worker for its processes).  Returns what spool said (a line
        per kind, on how many jobs of what); raises ClusterError when it
        refused (an unknown kind)."""
        if (n is None) == (jobs is None):
            raise ValueError("scale: give n (workers) or jobs=, not both")
        args = ["scale", str(int(jobs if n is None else n))]
        if n is None:
            args.append("--jobs")
        return self._cluster(args, kind)

    def adapt(self, minimum=None, maximum=None, *, minimum_jobs=None,
              maximum_jobs=None, kind=None):
        """Size kind's jobs to the queue, between minimum (default 0)
        and maximum workers, or minimum_jobs and maximum_jobs jobs, as
        dask-jobqueue's cluster.adapt() ("spool adapt"; the maximum is
        not optional: nothing here is unbounded).  Returns what spool
        said; raises ClusterError when it refused."""
        workers = minimum is not None or maximum is not None
        jobs = minimum_jobs is not None or maximum_jobs is not None
        if workers == jobs:
            raise ValueError("adapt: give minimum/maximum (workers) or "
                             "minimum_jobs/maximum_jobs")
        lo, hi = (minimum, maximum) if workers else (minimum_jobs,
                                                     maximum_jobs)
        if hi is None:
            raise ValueError("adapt: give the maximum")
        args = ["adapt", "--minimum", str(int(lo or 0)), "--maximum",
                str(int(hi))]
        if jobs:
            args.append("--jobs")
        return self._cluster(args, kind)

    def job_script(self, kind=None):
        """The batch script of a worker job of kind, as spoold would
        submit it (dask-jobqueue's cluster.job_script())."""
        args = ["job-script"]
        if kind is not None:
            args += ["--kind", kind]
        return self._spool_run(args, spool=self._spool_dir(),
                               error=ClusterError)[0]

    def shutdown(self, timeout=None):
        """Shut the cluster down ("spool shutdown"): spoold cancels
        every worker job and stops, and the spool's mounts unmount, this
        client's too (a wait through it then raises MountGone); returns
        once those of this host are gone, with what spool said.  Raises
        ClusterError when a worker job may be left in a queue (status
        1) or something did not end within timeout seconds (status 3).
        Without a spoold it cancels nothing, and says so."""
        args = ["shutdown"]
        if timeout is not None:
            args += ["--timeout", "%dms" % max(0, round(timeout * 1000))]
        try:
            return self._cluster(args, None)
        except ClusterError as e:
            # the reason is what was left, not its last line (the mounts')
            prog = os.path.basename(self.spool) + ": "
            left = [line[len(prog):] for line in e.output.splitlines()
                    if line.startswith(prog) and
                    re.search(r"may still be in the queue$|is still mounted "
                              r"after|has not stopped after", line)]
            if left:
                e.reason = "; ".join(left)
                e.args = (e.reason,)
            raise

    def _cluster(self, args, kind):
        if kind is not None:
            args += ["--kind", kind]
        return self._spool_run(args, spool=self._spool_dir(),
                               error=ClusterError)[1]

    def _spool_dir(self):
        """The spool directory: this client's path, or for a mount the
        spool it shows (its source in /proc/self/mountinfo, the spool's
        real path, as spoolfs names its mounts)."""
        if not self.mounted:
            return self.path
        point = os.path.realpath(self.path)
        try:
            with open("/proc/self/mountinfo") as f:
                lines = f.read().splitlines()
        except OSError as e:
            raise ClusterError("cannot find the spool of %s: %s" %
                               (self.path, e)) from None
        for line in lines:
            head, sep, tail = line.partition(" - ")
            fields, after = head.split(" "), tail.split(" ")
            if sep and len(fields) >= 5 and len(after) >= 2 and \
                    after[0] == "fuse.spoolfs" and \
                    _unoctal(fields[4]) == point:
                spool = _unoctal(after[1])
                if os.path.isfile(os.path.join(spool, "FORMAT")):
                    return spool
                raise ClusterError("%s shows the spool %s, which this host "
                                   "cannot reach" % (self.path, spool))
        e = MountGone("%s is no longer mounted" % self.path)
        e.future = None
        raise e

    def summary(self):
        """spoold's summary (counts and rates) as a dict."""
        if self.mounted:
            return parse_record(_read_or(os.path.join(self.path, "summary"), ""))
        return parse_record(_read_or(os.path.join(self.path, "state",
                                                  "summary"), ""))


def _unoctal(s):
    """A field of /proc/self/mountinfo with the kernel's escapes (\\040
    for a space ...) undone."""
    return re.sub(r"\\([0-3][0-7][0-7])", lambda m: chr(int(m.group(1), 8)),
                  s)


def _with_item(template):
    """A string template with {} somewhere: at its end if it had none
    ("spool map" appends the input to a command without {})."""
    return template if "{}" in template else template + " {}"


def _fill(template, item, seq):
    if isinstance(template, str):
        return _with_item(template).replace("{#}", str(seq)) \
            .replace("{}", shlex.quote(item))
    words = [str(w) for w in template]
    if not any("{}" in w for w in words):
        words.append("{}")
    return [w.replace("{#}", str(seq)).replace("{}", item) for w in words]


def _fill_name(name, item, seq):
    """A task name of map(): {} and {#} as "spool map --name" replaces
    them (the item as it is: a name has no quoting)."""
    return name.replace("{#}", str(seq)).replace("{}", item)


def _yaml_escape(m):
    c = ord(m.group())
    return "\\x%02x" % c if c <= 0xff else "\\u%04x" % c if c <= 0xffff \
        else "\\U%08x" % c


@functools.lru_cache(maxsize=64)
def _yaml_str(s):
    """s as a YAML double-quoted scalar: JSON's form, which YAML reads,
    except that a character beyond U+FFFF is one \\U escape (YAML
    refuses the pair of surrogates JSON writes for it, which libyaml
    reports as "invalid Unicode character escape code").  Kept for the
    words that recur in a map: a call's interpreter and its 2.8 KB
    runner are in every task."""
    s = str(s)
    try:
        s.encode()
    except UnicodeEncodeError as e:
        # os.fsdecode's stand-in for a byte that is not UTF-8 (a file
        # name): YAML text is Unicode, with no way to say such a byte
        raise SubmitError("%r: not UTF-8 (%s), which a task file cannot "
                          "hold; give Client the spool directory" %
                          (s, e.reason)) from None
    return re.sub("[^\x00-\x7e]", _yaml_escape,
                  json.dumps(s, ensure_ascii=False))


def _yaml_task(cmd, opts):
    """A task file (YAML) for spoolfs's submit/."""
    lines = []
    if isinstance(cmd, str):
        lines.append("command: " + _yaml_str(cmd))
    else:
        lines.append("command: [%s]" % ", ".join(_yaml_str(w) for w in cmd))
    env = [v for k, v in opts if k == "env"]
    for k, v in opts:
        if k == "env":
            continue
        if k == "after":
            lines.append("after: [%s]" % v)
        else:
            lines.append("%s: %s" % (k, _yaml_str(v)))
    if env:
        lines.append("env: [%s]" % ", ".join(_yaml_str(v) for v in env))
    return "\n".join(lines) + "\n"


def _yaml_item(cmd, opts):
    """The task as an item of a YAML list of tasks."""
    return "- " + _yaml_task(cmd, opts).rstrip("\n").replace("\n", "\n  ") \
        + "\n"


def _yaml_nodes(cmd, opts):
    """At most how many YAML nodes _yaml_item(cmd, opts) makes (yamlx.h
    counts them): the mapping, a key and a value a line, the words of
    the command, the items of env and after."""
    words = 1 if isinstance(cmd, str) else len(cmd)
    return 3 + 2 * len(opts) + words + sum(
        len(str(v).split(",")) for k, v in opts if k == "after")


def _read_or(path, default):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return default


def _beat_check(data):
    """The record of a heartbeat file (spool-layout/beatfile.c) without
    its check line, or None where the check line does not match."""
    key = b"check: "
    cut = len(data) - (len(key) + 9)
    if cut < 0 or not data.endswith(b"\n") or \
            (cut > 0 and data[cut - 1:cut] != b"\n") or \
            data[cut:cut + len(key)] != key:
        return None
    h = 2166136261          # FNV-1a, 32 bits, over what precedes it
    for c in data[:cut]:
        h = ((h ^ c) * 16777619) & 0xffffffff
    if data[cut + len(key):-1] != b"%08x" % h:
        return None
    return data[:cut].decode(errors="replace")


def _info_ok(path):
    """A worker's info record that "spool workers" reads (winfo_read):
    one that names its host and a number of cores."""
    info = parse_record(_read_or(path, ""))
    return info.get("host", "") != "" and isinstance(info.get("cores"), int) \
        and info["cores"] > 0


def _worker_state(d):
    """The state of the worker of directory d, as wstate_read
    (spool-layout/wdir.c) says: a status that is missing or fails its
    check line (torn, another version) is no-status; draining, the
    worker's word or spoold's (its marker)."""
    if os.path.exists(os.path.join(d, "exited")):
        return "exited"
    if os.path.exists(os.path.join(d, "lost")):
        return "lost"
    st = _read_beat(os.path.join(d, "status"))
    if st is None:
        return "no-status"
    def count(key):
        v = st.get(key)
        return v if isinstance(v, int) and v > 0 else 0
    if count("draining") or os.path.exists(os.path.join(d, "drain")):
        return "draining"
    return "gpus-held" if count("gpus_held") else "up"


def _read_beat(path, tries=5):
    """A heartbeat file's record as a dict, or None where it cannot be
    read whole (re-read: it is overwritten in place)."""
    for _ in range(tries):
        try:
            with open(path, "rb") as f:
                text = _beat_check(f.read())
        except OSError:
            return None
        if text is not None:
            return parse_record(text)
    return None


def _remove(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def _listdir(path):
    try:
        return os.listdir(path)
    except OSError:
        return []

# ---- Python functions as tasks ----
#
# submit(fn, *args, **kwargs) submits a task whose command is
#
#     PYTHON -c _RUNNER PAYLOAD VERSION
#
# VERSION being the notebook's Python's ("3.11"), which the runner
# checks before it unpickles anything (a function sent by value carries
# code objects of its version, which another cannot load or, worse,
# runs wrong), and PAYLOAD base64 of the pickle of (fn, (args, kwargs),
# deps):
# the futures among the arguments replaced by None, and deps saying
# where each was, with the index of its task in the task's after list.
# The task, run by the worker like any other, reads the results of
# those tasks (SPOOL_DEPS names them, in the after list's order, which
# "spool retry" keeps while it maps them to the new tasks), calls fn and
# writes ("value", v) or ("error", exception, traceback text) to
# return.pickle in its own directory (with the standard pickle, or with
# cloudpickle where that cannot: importing it costs 17 ms more, 42 ms
# against 25 for a start of Debian's python3 with the runner's own
# imports); exit status 1 for an exception.
# Nothing but the interpreter is needed on the worker's host: the
# runner is all in the command, and unpickles with the standard pickle
# (what cloudpickle wrote needs cloudpickle importable there too).

RETURN_FILE = "return.pickle"
_PY_VERSION = "%d.%d" % sys.version_info[:2]
CALL_ARG_MAX = 128 * 1024 - 1   # one argument, its NUL aside (execve)
CALL_PICKLE_MAX = CALL_ARG_MAX // 4 * 3     # what base64 makes fit in it
_RUNNER_MARK = "# ckspool: a Python call (python/ckspool.py)"
# no brace in it: "spool map" would take "{" "}" for the item
_RUNNER = _RUNNER_MARK + r"""
import base64, os, pickle, sys, traceback
def dep(k):
    i = int(os.environ["SPOOL_DEPS"].split()[k])
    d = os.path.join(os.environ["SPOOL"], "tasks", str(i // 1000), str(i))
    try:
        fd = os.open(os.path.join(d, "return.pickle"),
                     os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        with open(os.path.join(d, "stdout"), errors="replace") as f:
            return f.read()
    with open(fd, "rb") as f:
        if os.fstat(f.fileno()).st_uid != os.geteuid():
            raise PermissionError("task %d: its return.pickle is not this "
                                  "user's: not unpickled" % i)
        r = pickle.load(f)
    if r[0] != "value":
        raise RuntimeError("task %d raised %r" % (i, r[1]))
    return r[1]
def put(o, path, v):
    if not path:
        return v
    c = dict(o) if type(o) is dict else list(o)
    c[path[0]] = put(c[path[0]], path[1:], v)
    return tuple(c) if type(o) is tuple else c
def dumps(x):
    try:
        return pickle.dumps(x)
    except Exception as e:
        why = e
    try:
        import cloudpickle
    except ImportError:
        raise why from None
    return cloudpickle.dumps(x)
def main():
    rc = 0
    try:
        want, have = sys.argv[2:3], "%d.%d" % sys.version_info[:2]
        if want and want[0] != have:
            raise RuntimeError(
                "this call was pickled by Python %s and would run under "
                "%s, Python %s, which may not load it: give the Client "
                "an interpreter of Python %s on the workers' hosts "
                "(python=)" % (want[0], sys.executable, have, want[0]))
        fn, call, deps = pickle.loads(base64.b64decode(sys.argv[1]))
        del sys.argv[1:]    # (the function's argparse has none to read)
        for path, k in deps:
            call = put(call, path, dep(k))
        out = ("value", fn(*call[0], **call[1]))
    except Exception as e:
        # (from the call on: the runner's own frame says nothing)
        tb = "".join(traceback.format_exception(type(e), e,
                                                e.__traceback__.tb_next))
        sys.stderr.write(tb)
        out, rc = ("error", e, tb), 1
    try:
        data = dumps(out)
    except Exception as e:
        tb = traceback.format_exc()
        sys.stderr.write(tb)
        what = "return value" if rc == 0 else "exception %r" % (out[1],)
        data = pickle.dumps(("error", TypeError(
            "the call's %s cannot be pickled: %s" % (what, e)), tb))
        rc = 1
    d = os.environ["SPOOL_TASK_DIR"]
    with open(os.path.join(d, ".return.pickle"), "wb") as f:
        f.write(data)
    os.rename(os.path.join(d, ".return.pickle"),
              os.path.join(d, "return.pickle"))
    sys.exit(rc)
main()
"""


def _cloudpickle():
    """The cloudpickle module, or None where it is not installed."""
    try:
        import cloudpickle
    except ImportError:
        return None
    return cloudpickle


def _strip_futures(o, path, found):
    """o with each Future in it (at any depth of lists, tuples and dicts)
    replaced by None; (path, future) appended to found for each."""
    if isinstance(o, Future):
        found.append((path, o))
        return None
    if type(o) in (list, tuple, dict):
        n = len(found)
        items = o.items() if type(o) is dict else enumerate(o)
        c = [(k, _strip_futures(v, path + (k,), found)) for k, v in items]
        if len(found) == n:
            return o            # (no future in it: as it was)
        if type(o) is dict:
            return dict(c)
        return type(o)(v for _, v in c)
    return o


# submit()'s and map()'s keywords of dask that are not the function's
_DASK_IGNORED = ("pure",)       # a submission is always a task of its own
_DASK_REFUSED = {
    "workers": "a task goes to any worker that fits its cores=, "
               "memory= and gpus=",
    "resources": "ask cores=, memory= and gpus=",
    "allow_other_workers": "a task goes to any worker that fits",
    "fifo_timeout": "tasks are placed by priority= and then in order",
    "actor": "there are no actors", "actors": "there are no actors",
    "batch_size": "map() submits a spool map, in chunks of its own",
}


def _dask_keywords(kwargs):
    """kwargs without the keywords dask's submit() and map() keep for
    themselves, and dask's key= (a task name); TypeError for those
    ckspool has no use for, rather than passing them to the function as
    dask would not."""
    kwargs = dict(kwargs)
    for k in _DASK_IGNORED:
        kwargs.pop(k, None)
    for k in sorted(_DASK_REFUSED):
        if k in kwargs:
            raise TypeError("%s=: dask's, not ckspool's: %s" %
                            (k, _DASK_REFUSED[k]))
    return kwargs, kwargs.pop("key", None)


def _call_name(fn):
    """A task name for fn's calls: its __name__ where a name may be that
    (not "<lambda>"), else none."""
    name = getattr(fn, "__name__", "")
    if isinstance(name, str) and \
            re.fullmatch(r"[A-Za-z0-9_+@:][A-Za-z0-9_.+@:-]{0,127}", name):
        return name
    return None


def _call_payload(fn, call, deps):
    """The runner's argument: base64 of the pickled call."""
    cp = _cloudpickle()
    what = getattr(fn, "__qualname__", None) or repr(fn)
    if cp is None and (getattr(fn, "__module__", None) == "__main__" or
                       "<" in what):
        # pickle sends a function by its module and name, which the
        # task could not import
        raise SubmitError("%s: a function defined in __main__ (a notebook "
                          "or a script), or a lambda or local function, "
                          "is sent by value, which needs cloudpickle "
                          "(Debian: python3-cloudpickle); or define it "
                          "in a module the task can import" % what)
    try:
        data = (cp or pickle).dumps((fn, call, deps))
    except Exception as e:
        raise SubmitError("%s: its call cannot be pickled: %s" %
                          (what, e)) from None
    if len(data) > CALL_PICKLE_MAX:
        raise SubmitError("%s: the function and its arguments pickle to "
                          "%d bytes, more than the %d a task's command "
                          "can carry: pass large data as files (their "
                          "paths as arguments), or as the future of a "
                          "task that returns it" %
                          (what, len(data), CALL_PICKLE_MAX))
    return base64.b64encode(data).decode("ascii")


class Future:
    """A task of the spool, by ID.  Equal futures have equal IDs."""

    def __init__(self, client, id, call=None):
        self.client = client
        self.id = id
        self._call = call       # a Python call's task? (None: not known)
        self._returned_ = None  # what it returned, once read

    def __reduce__(self):
        # a future reaches a Python call's task as the result of its task
        # (Client._call), not as itself: its Client is this process's
        raise TypeError("task %d: a future can be an argument of a Python "
                        "function task only directly or in lists, tuples "
                        "and dicts" % self.id)

    @property
    def key(self):
        return str(self.id)

    def __repr__(self):
        return "<ckspool.Future %d %s>" % (self.id, self.state)

    def __eq__(self, other):
        return isinstance(other, Future) and other.id == self.id and \
            other.client.path == self.client.path

    def __hash__(self):
        return hash((self.client.path, self.id))

    @property
    def path(self):
        """The task's directory (its files once it is done)."""
        return self.client.task_dir(self.id)

    def _file(self, name):
        return os.path.join(self.path, name)

    @property
    def state(self):
        """submitted queued waiting placed running finishing done failed
        cancelled rejected (through a mount: rejected already while
        spoold owes a refused bundle's ID its result), or "pending"
        (directly, before the task is final)."""
        if self.client.mounted:
            return _read_or(self._file("state"), "unknown\n").strip()
        rec = parse_record(_read_or(self._file("result"), ""))
        return rec.get("state", "pending")

    def _mount_final(self, word):
        """Through a mount: True if the state word is final and the
        result is written.  A rejection spoold still owes shows as
        rejected first, while the task's control file is still there
        (it goes with the result): reading the result then would block
        past any timeout."""
        return (word in FINAL_STATES and
                not os.path.exists(self._file("control")))

    def done(self):
        """True once the task is final (done, failed, cancelled, rejected)
        and its result written."""
        if self.client.mounted:
            return self._mount_final(self.state)
        return os.path.exists(self._file("result"))

    def cancelled(self):
        return self.done() and self.state == "cancelled"

    def running(self):
        return self.state in ("running", "finishing")

    def cancel(self):
        """Ask spoold to cancel the task (running or not): True; True too
        if it is cancelled already, False if it ended otherwise (as
        concurrent.futures says).  Through a mount, NoSuchTask for an ID
        the mount does not show (see NoSuchTask)."""
        if self.done():
            return self.state == "cancelled"
        if self.client.mounted:
            # no O_CREAT: a task final since done() has no control file,
            # and creating one in tasks/ID/ would fail with EROFS, not
            # ENOENT
            try:
                fd = os.open(self._file("control"), os.O_WRONLY)
            except FileNotFoundError:
                gone = _unmounted(self.client, self)
                if gone is not None:
                    raise gone from None
                if os.path.isdir(self.path):
                    return self.state == "cancelled"   # it ended meanwhile
                # not claimed, or claimed where the mount does not see it
                # yet (another host, through the shared storage): there
                # is nothing to ask through, and False would say that
                # it ended.  "spool cancel" leaves a request that
                # spoold retries until the task is there
                raise NoSuchTask("task %d: no such task in %s (to cancel "
                                 "it before it is seen, use \"spool "
                                 "cancel\" on the spool directory)" %
                                 (self.id, self.client.path)) from None
            try:
                os.write(fd, b"cancel\n")
            finally:
                os.close(fd)
        else:
            self.client._run_spool(["cancel", str(self.id)])
        return True

    def _wait(self, timeout):
        if self.done():
            return
        unfit = _Unfit(self.client)
        if self.client.mounted:
            _wait_mount([self], timeout, unfit)
        else:
            _wait_direct(_Shards(), [self], timeout, unfit)
        if not self.done():
            raise TimeoutError("task %d not finished after %ss" %
                               (self.id, timeout))

    def retry(self):
        """Run this future again if it failed or was cancelled
        (Client.retry): the future that now stands for it."""
        return self.client.retry([self])[0]

    def record(self, timeout=None):
        """The task's result record as a dict (waits for it)."""
        self._wait(timeout)
        return parse_record(_read_or(self._file("result"), ""))

    def stdout(self):
        return _read_or(self._file("stdout"), "")

    def stderr(self):
        return _read_or(self._file("stderr"), "")

    def is_call(self):
        """True if the task calls a Python function (submit(fn, ...)),
        told by its spec once final where this future was not made so."""
        if self._call is None:
            argv = parse_record(_read_or(self._file("spec"), "")).get("argv")
            # (4 words: a call of a client before the version's check)
            self._call = isinstance(argv, list) and \
                len(argv) in (4, 5) and argv[1] == "-c" and \
                str(argv[2]).startswith(_RUNNER_MARK)
        return self._call

    def _returned(self):
        """What a Python call's task left in its return.pickle: ("value",
        v), or ("error", exception, traceback) with the traceback added
        to the exception as a note; None where it left none (killed).
        Only a file of this user's is unpickled (that runs code)."""
        if self._returned_ is None:
            path = self._file(RETURN_FILE)
            try:
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            except FileNotFoundError:
                return None
            with open(fd, "rb") as f:
                uid = os.fstat(f.fileno()).st_uid
                if uid != os.geteuid():
                    raise PermissionError(
                        "%s: owned by uid %d, not by this user (%d): not "
                        "unpickled" % (path, uid, os.geteuid()))
                ret = pickle.load(f)
            if ret[0] == "error" and hasattr(ret[1], "add_note"):
                ret[1].add_note("--- raised in task %d ---\n%s" %
                                (self.id, ret[2].rstrip()))
            self._returned_ = ret
        return self._returned_

    def exception(self, timeout=None):
        """None if the task succeeded, else what result() raises: a
        Python call's own exception (with its traceback in the task as a
        note), or TaskFailed; raises CancelledError for a cancelled
        task, and TimeoutError after timeout s (as concurrent.futures
        does)."""
        rec = self.record(timeout)
        if rec.get("state") == "done":
            return None
        if rec.get("state") == "cancelled":
            # raised, not returned: a cancelled future has no exception
            # (concurrent.futures, dask), and code that tells failures by
            # "exception() is not None" must not count it as one
            raise CancelledError("task %d cancelled: %s" %
                                 (self.id, rec.get("message", "")))
        if rec.get("state") == "failed" and self.is_call():
            ret = self._returned()
            if ret is not None and ret[0] == "error":
                return ret[1]
        return TaskFailed(self, rec, self.stderr()[-STDERR_TAIL:])

    def result(self, timeout=None):
        """What a Python call returned, or the task's standard output
        (text) once it succeeded; raises the call's exception,
        TaskFailed, CancelledError, or TimeoutError after timeout s."""
        e = self.exception(timeout)
        if e is not None:
            raise e
        if not self.is_call():
            return self.stdout()
        ret = self._returned()
        if ret is None:
            raise TaskFailed(self, dict(self.record(), message=(
                "it ended with exit status 0 without writing %s" %
                RETURN_FILE)), self.stderr()[-STDERR_TAIL:])
        return ret[1]

    def add_done_callback(self, fn):
        """Call fn(future) once the task is final (in a thread: one for
        all the callbacks of a Client, which waits on their futures as
        as_completed() does).  A callback that raises is said on stderr
        and the others are called all the same, as concurrent.futures
        does: never raised to the caller, here or in that thread."""
        if self.done():
            _call_back(fn, self)
            return
        self.client._callbacks.add(self, fn)


# ---- waiting on many ----
#
# Waiting on many futures costs per change, not per future: the futures
# still pending are kept across the calls of one wait (as_completed()
# yields many times), each one is looked at once at the start, and
# after that only where something moved: through a mount, the batch of
# state files being poll(2)ed; on a spool directory, the shard
# directories whose stamp moved (listed, as "spool wait" does, not one
# look-up per task; a shard that does not exist yet holds no final
# task).

def _no_such_task(f):
    """What to raise for a task f that its Client cannot find: through
    a mount that is gone, MountGone (its directory is empty now)."""
    e = _unmounted(f.client, f)
    if e is None:
        e = NoSuchTask("task %d: no such task in %s (never submitted, or "
                       "removed by spool purge)" % (f.id, f.client.path))
        e.future = f
    return e


def _unmounted(client, f=None, err=None):
    """MountGone (about the future f, if given) if client is on a mount
    that is no longer mounted, or whose spoolfs is leaving: err, the
    OSError met, is ENOTCONN (spoolfs answers what waits so just before
    it unmounts) or ECONNABORTED (the kernel, what spoolfs had not taken
    yet).  Else None."""
    leaving = err is not None and err.errno in (errno.ENOTCONN,
                                                errno.ECONNABORTED)
    if not client.mounted or (not leaving and os.path.ismount(client.path)):
        return None
    e = MountGone("%s%s is no longer mounted (spool shutdown unmounts a "
                  "spool's mounts); its tasks and their results are in "
                  "the spool directory" %
                  ("" if f is None else "task %d: " % f.id, client.path))
    e.future = f
    return e


def _gone_mount(f):
    """Is the task of f, whose state reads unknown through a mount, gone
    for good (purged, or never submitted)?  spoolfs says so by failing
    a read of its result with ENOENT at once (an unfinished task's
    fails with EAGAIN when not blocking)."""
    try:
        fd = os.open(f._file("result"), os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return True
    try:
        os.read(fd, 1)
    except FileNotFoundError:
        return True
    except BlockingIOError:
        return False
    finally:
        _close_read(fd)
    return False


def _close_read(fd):
    """Close a descriptor only read: its close's error (ENOTCONN from
    the flush of a mount that went meanwhile) loses nothing, and must
    not hide what the reads found."""
    try:
        os.close(fd)
    except OSError:
        pass


def _states_final(fds):
    """The futures of fds (fd: future, their state files) whose task is
    final now; NoSuchTask for one gone for good: its state reads
    unknown, and would for ever."""
    out = []
    for fd, f in fds.items():
        st = os.pread(fd, 64, 0).decode().strip()
        if f._mount_final(st):
            out.append(f)
        elif st == "unknown" and _gone_mount(f):
            raise _no_such_task(f)
    return out


def _drop(pending, gone):
    """Remove the futures of gone from the list pending, in place."""
    gone = set(gone)
    pending[:] = [f for f in pending if f not in gone]


def _wait_mount(pending, timeout, unfit=None):
    """poll(2) the state files of the futures in pending, POLL_FDS_MAX
    at a time, until some are final or timeout; returns those (in no
    order) and removes them from pending, which is left rotated so that
    the next call goes on with the next batch.  unfit (an _Unfit), if
    given, looks at the pending tasks every UNFIT_EVERY s until it has
    said one."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while pending:
        batch = pending[:POLL_FDS_MAX]
        fds = {}
        try:
            p = select.poll()
            for f in batch:
                try:
                    fd = os.open(f._file("state"), os.O_RDONLY)
                except FileNotFoundError:
                    raise _no_such_task(f) from None
                fds[fd] = f
                p.register(fd, select.POLLIN | select.POLLPRI)
            now_done = _states_final(fds)
            while not now_done:
                if unfit:
                    unfit.check(pending)
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return []
                # more than one batch: do not sleep on this one for ever
                cap = RESCAN_MAX if len(pending) > len(batch) else None
                wait = left if cap is None else (cap if left is None
                                                 else min(left, cap))
                look = unfit.due_in() if unfit else None
                if look is not None and (wait is None or look < wait):
                    # woken only to look for a task no worker can run:
                    # the same files go on being polled, none read again
                    if not p.poll(int(look * 1000) + 1):
                        continue
                else:
                    p.poll(None if wait is None else int(wait * 1000) + 1)
                now_done = _states_final(fds)
                break
        except OSError as e:
            # a mount going while its files were held
            gone = _unmounted(batch[0].client, batch[0], e)
            if gone is None or isinstance(e, MountGone):
                raise
            raise gone from e
        finally:
            for fd in fds:
                _close_read(fd)
        if now_done:
            _drop(pending, now_done)
            return now_done
        if len(pending) > len(batch):
            pending[:] = pending[len(batch):] + pending[:len(batch)]
    return []


class _Shards:
    """The stamps of the shard directories of a spool, as one wait last
    saw them."""

    def __init__(self):
        self.stamps = {}
        self.rounds = 0
        self.spans = {}         # bundle headers read (_gone_direct)

    def final(self, pending):
        """The futures of pending whose task is final now, looking only
        into the shards whose directory changed since the last call."""
        self.rounds += 1
        if self.rounds % 10 == 0:
            # a change in the stamp's own tick: look anyway
            self.stamps.clear()
        shards = {}
        for f in pending:
            shards.setdefault((f.client.path, f.id // SHARD_SIZE),
                              []).append(f)
        out, unsure = [], []
        for (path, shard), fs in shards.items():
            d = os.path.join(path, "tasks", str(shard))
            try:
                st = os.stat(d)
                stamp = (st.st_mtime_ns, st.st_ctime_ns, st.st_nlink)
            except FileNotFoundError:
                stamp = None    # made with its first final task: none yet
            if d in self.stamps and self.stamps[d] == stamp:
                continue
            if stamp is None:
                self.stamps[d] = stamp
                unsure += fs
                continue
            seen = fs
            if len(fs) > 4:
                # one listing, not a look-up per task: a final task's
                # directory appears in one rename, with its result
                try:
                    names = set(os.listdir(d))
                except OSError:
                    continue    # looked at again next round
                seen = [f for f in fs if str(f.id) in names]
            self.stamps[d] = stamp
            now = [f for f in seen if f.done()]
            out += now
            unsure += [f for f in fs if f not in now]
        # where something moved (a purge removes tasks and shards) and
        # at the first look: a task gone for good would never be final
        if unsure:
            gone = _gone_direct(unsure, self.spans)
            if gone:
                raise _no_such_task(gone[0])
        return out


def _bundle_span(path):
    """(first, count) of the bundle at path, from its header; None when
    it is gone (moved on), False when it cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError:
        return False
    try:
        head = os.pread(fd, 512, 0) if \
            stat.S_ISREG(os.fstat(fd).st_mode) else b""
    except OSError:
        return False
    finally:
        os.close(fd)
    if b"---\n" not in head:
        return False
    rec = parse_record(head.split(b"---\n", 1)[0].decode(errors="replace"))
    first, count = rec.get("first"), rec.get("count")
    if not isinstance(first, int) or not isinstance(count, int):
        return False
    return first, count


def _gone_direct(futures, cache):
    """The futures of futures (of one spool directory, none final when
    looked at) whose task is gone for good: removed by "spool purge",
    never submitted, or never claimed.  Told as spoolfs tells it
    (taskview_gone, spoolfs(1)): looked at in the order a task moves, in
    no bundle of incoming/, accepting/ or specs/, then no tasks/SHARD/ID;
    none while accepting/ holds an owed refusal (FIRST.rejected) or a
    bundle that cannot be read, nor when a listing fails.  cache keeps
    the headers read, by directory and name (a bundle is never
    rewritten, only renamed), for the next call."""
    spool = futures[0].client.path
    spans, listed = [], set()
    for d in ("incoming", "accepting", "specs"):
        try:
            names = os.listdir(os.path.join(spool, d))
        except OSError:
            return []
        for name in names:
            stem, dot, rest = name.partition(".")
            if name.startswith("."):
                continue
            if d == "incoming" and not name.endswith(".bundle"):
                continue        # a dropped file: no ID yet
            if d == "accepting" and dot:
                if rest == "rejected":
                    return []   # results owed: which IDs is not read
                if rest != "drop" and not rest.startswith("drop."):
                    continue
                span = (int(stem), 1) if stem.isdigit() else None
            elif (d, name) in cache:
                span = cache[(d, name)]
            else:
                span = _bundle_span(os.path.join(spool, d, name))
                if span:
                    cache[(d, name)] = span
            if span is False:
                return []
            if span is not None:
                spans.append(span)
                listed.add((d, name))
    for k in [k for k in cache if k not in listed]:
        del cache[k]            # gone on
    # merged into [first, end) spans that do not overlap (a header may
    # say anything): the one starting last at or before an ID is the
    # only one that can hold it
    merged = []
    for first, count in sorted(spans):
        if merged and first <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], first + count)
        else:
            merged.append([first, first + count])
    firsts = [first for first, _ in merged]
    out = []
    for f in sorted(futures, key=lambda f: f.id):
        k = bisect.bisect_right(firsts, f.id)
        if k > 0 and f.id < merged[k - 1][1]:
            continue
        try:
            os.stat(f.path)     # final since: not gone
        except FileNotFoundError:
            out.append(f)
        except OSError:
            pass
    return out


def _wait_direct(shards, pending, timeout, unfit=None):
    """Rescan the shards of the futures in pending (shards: a _Shards)
    until some are final, or timeout; returns those and removes them
    from pending.  unfit: as for _wait_mount (the rescans are at most
    RESCAN_MAX = UNFIT_EVERY apart)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    delay = RESCAN_MIN
    while pending:
        now_done = shards.final(pending)
        if now_done:
            _drop(pending, now_done)
            return now_done
        if unfit:
            unfit.check(pending)
        if deadline is not None and time.monotonic() >= deadline:
            return []
        time.sleep(delay if deadline is None else
                   max(0, min(delay, deadline - time.monotonic())))
        delay = min(delay * 2, RESCAN_MAX)
    return []


# ---- tasks no worker can run ----
#
# A task that asks more than any worker has would be waited on for ever
# without a word, as with "spool wait", which says it (spool(1)): the
# same here, as an UnfitTaskWarning.  spoold's summary lists the shapes
# of such queued tasks (unfit_shapes: spool-layout(5)); only when that
# list is not empty and has changed since the wait last read it are the
# pending tasks looked up: through a mount, each one's state and spec;
# on a spool directory, "spool status ID..." (its REASON column) and
# "spool status -l" of the first one found, for what it asks.

def _shape_of(spec):
    """(cores, gpus, memory, walltime) of a spec record, as spoold
    groups tasks (task_shape_of: cores at least 1, 0 for none asked)."""
    def num(k):
        v = spec.get(k, 0)
        return v if isinstance(v, int) else 0
    return (max(num("cores"), 1), num("gpus"), num("memory"),
            num("walltime"))


def _shape_parse(text):
    """A shape of the summary's unfit_shapes, "cores=C gpus=G memory=B
    walltime=S tasks=N", as _shape_of gives it; None if it is not one."""
    kv = dict(w.partition("=")[::2] for w in str(text).split())
    try:
        return tuple(int(kv[k]) for k in ("cores", "gpus", "memory",
                                          "walltime"))
    except (KeyError, ValueError):
        return None


def _size_words(n):
    """Bytes as spool says a size it was given (units_format_size)."""
    i = 0
    while i < 5 and n and n % 1024 == 0:
        n //= 1024
        i += 1
    return "%d%s" % (n, ("", "K", "M", "G", "T", "P")[i])


def _duration_words(s):
    """Seconds as spool says a walltime (units_format_duration)."""
    d, h, m, sec = s // 86400, s // 3600 % 24, s // 60 % 60, s % 60
    if d:
        return "%d-%02d:%02d:%02d" % (d, h, m, sec)
    if h:
        return "%d:%02d:%02d" % (h, m, sec)
    if m:
        return "%d:%02d" % (m, sec)
    return "%d" % sec


def _asks_words(shape):
    """What a task asks, in the words of "spool status -l" (asks:),
    as task_shape_words says it."""
    cores, gpus, memory, walltime = shape
    return "%d core%s, %d GPU%s, memory %s, walltime %s" % (
        cores, "" if cores == 1 else "s", gpus, "" if gpus == 1 else "s",
        _size_words(memory) if memory else "-",
        _duration_words(walltime) if walltime else "-")


def _caller_level():
    """The stacklevel of warnings.warn, called by the caller of this,
    that names the first frame outside this module: the user's call."""
    f, level = sys._getframe(1), 1
    while f is not None and f.f_code.co_filename == __file__:
        f = f.f_back
        level += 1
    return level


class _Unfit:
    """One wait's look-out for tasks no worker can run: check(pending)
    every UNFIT_EVERY s says the first such task of pending once, as an
    UnfitTaskWarning, with how many there are (where more than one).
    Tasks a warning of the same Client named are not said again.  The
    tasks are looked at when the summary's unfit_shapes change; those
    found not accepted yet (EARLY_STATES) are looked at again while the
    list stays the same, after 1 s, 2 s, 4 s ... UNFIT_EARLY_MAX apart:
    a mount's view of the tasks can lag behind spoold's summary, which
    need not change again once spoold has accepted them."""

    EARLY_STATES = ("submitted", "unknown")

    def __init__(self, client):
        self.client = client
        self.next = 0.0
        self.seen = None        # the summary's unfit_shapes, last read
        self.early = []         # tasks not accepted yet at the last look
        self.early_every = UNFIT_EVERY
        self.early_next = 0.0   # when they are looked at again
        self.said = False

    def __bool__(self):
        return not self.said

    def due_in(self):
        """Seconds to the next look (None once said)."""
        if self.said:
            return None
        return max(0.0, self.next - time.monotonic())

    def check(self, pending):
        now = time.monotonic()
        if self.said or now < self.next:
            return
        self.next = now + UNFIT_EVERY
        listed = self.client.summary().get("unfit_shapes")
        shapes = [_shape_parse(x) for x in listed] \
            if isinstance(listed, list) else []
        shapes = set(x for x in shapes if x)
        if not shapes:
            self.seen, self.early = listed, []
            return
        if listed != self.seen:
            ask = pending
            self.early_every = UNFIT_EVERY
        elif self.early and now >= self.early_next:
            ids = set(f.id for f in pending)
            ask = [f for f in self.early if f.id in ids]
            self.early_every = min(self.early_every * 2, UNFIT_EARLY_MAX)
        else:
            return
        self.early_next = now + self.early_every
        self.seen = listed
        ask = [f for f in ask if f.id not in self.client._unfit_said]
        if self.client.mounted:
            found, asks, self.early = self._through_mount(ask, shapes)
        else:
            found, asks, self.early = self._direct(ask)
        if not found:
            return
        self.said = True
        self.client._unfit_said.update(f.id for f in found)
        first = found[0]
        more = " (one of %d waited on)" % len(found) \
            if len(found) > 1 else ""
        warnings.warn(UnfitTaskWarning(
            "task %d%s is queued, and no worker can run it, registered or "
            "on its way, nor a kind with a size asked: it asks %s; waiting "
            "all the same (spool status %d)" % (first.id, more, asks,
                                               first.id),
            first, len(found), asks), stacklevel=_caller_level())

    @classmethod
    def _through_mount(cls, futures, shapes):
        found, asks, early = [], None, []
        for f in sorted(futures, key=lambda f: f.id):
            state = f.state
            if state in cls.EARLY_STATES:
                early.append(f)
            if state != "queued":
                continue
            shape = _shape_of(parse_record(_read_or(f._file("spec"), "")))
            if shape in shapes:
                found.append(f)
                asks = asks or _asks_words(shape)
        return found, asks, early

    def _direct(self, futures):
        byid = {f.id: f for f in futures}
        ids = sorted(byid)
        found, early = [], []
        try:
            for i in range(0, len(ids), STATUS_IDS_MAX):
                out = self.client._run_spool(
                    ["status"] + [str(x) for x in ids[i:i + STATUS_IDS_MAX]])
                for line in out.splitlines()[1:]:
                    w = line.split()
                    # ID NAME STATE ATT WORKER EXIT REASON (spool(1))
                    if len(w) < 7 or not w[0].isdigit() or \
                            int(w[0]) not in byid:
                        continue
                    if w[2] in self.EARLY_STATES:
                        early.append(byid[int(w[0])])
                    if w[2] == "queued" and w[6] == "unfit":
                        found.append(byid[int(w[0])])
            if not found:
                return [], None, early
            out = self.client._run_spool(["status", "-l", str(found[0].id)])
        except SubmitError:
            return [], None, []     # looked at again when the shapes change
        asks = parse_record(out).get("asks", "?")
        return found, str(asks), early


def _call_back(fn, future):
    """fn(future); an exception it raises is said on stderr, not raised
    (as concurrent.futures does), so that the callbacks after it are
    called all the same."""
    try:
        fn(future)
    except Exception:
        traceback.print_exc()


class _Callbacks:
    """The done callbacks of a Client's futures, called by one thread
    that waits on all their futures at once (not a thread a future:
    10,000 of them, each waiting on its own, would starve the notebook
    and, on a spool directory, look at the spool 10,000 times a
    round)."""

    def __init__(self, client):
        self.client = client
        self.lock = threading.Lock()
        self.fns = {}           # future: [fn, ...]
        self.thread = None

    def add(self, future, fn):
        with self.lock:
            self.fns.setdefault(future, []).append(fn)
            # (a thread of the process this was forked from is not ours)
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._run,
                                               daemon=True)
                self.thread.start()

    def _call(self, futures):
        for f in futures:
            with self.lock:
                fns = self.fns.pop(f, [])
            for fn in fns:
                _call_back(fn, f)

    def _run(self):
        pending, shards = [], _Shards()
        while True:
            with self.lock:
                if not self.fns:
                    self.thread = None
                    return
                known = set(pending)
                pending += [f for f in self.fns if f not in known]
            # a round at most, so that futures added meanwhile join
            try:
                if self.client.mounted:
                    got = _wait_mount(pending, RESCAN_MAX)
                else:
                    got = _wait_direct(shards, pending, RESCAN_MAX)
            except NoSuchTask as e:
                # its callback is called, as for a task that ended
                pending.remove(e.future)
                got = [e.future]
            self._call(got)


def _completed(client, futures, timeout):
    """Yield the futures as they become final, in lists of those found
    final together (in ID order), the first one all those final
    already; raise TimeoutError after timeout s."""
    deadline = None if timeout is None else time.monotonic() + timeout
    pending = list(dict.fromkeys(futures))
    shards = _Shards()
    unfit = _Unfit(client)
    if client.mounted:
        # once, every one (the batches polled below are read as they
        # are opened, the others only in their turn)
        got = [f for f in pending if f.done()]
        _drop(pending, got)
    else:
        got = []
    while True:
        if got:
            yield sorted(got, key=lambda f: f.id)
        if not pending:
            return
        left = None if deadline is None else \
            max(0, deadline - time.monotonic())
        if client.mounted:
            got = _wait_mount(pending, left, unfit)
        else:
            got = _wait_direct(shards, pending, left, unfit)
        if not got:     # (they return nothing only at the timeout)
            raise TimeoutError("%d of %d futures unfinished after %ss" %
                               (len(pending), len(futures), timeout))
