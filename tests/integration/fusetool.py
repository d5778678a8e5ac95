#!/usr/bin/env python3
"""fusetool.py - system calls on a spoolfs mount for t_fuse.sh.

The shell cannot name an errno or poll a file, so the tests call this:

  fusetool.py errno OP PATH [ARG]   do one system call, print the errno
                                    name it failed with, or "ok" (OP
                                    mmap: map the file MAP_SHARED)
  fusetool.py nonblock PATH         read PATH with O_NONBLOCK: the data,
                                    or the errno name
  fusetool.py pollstate PATH SECS   read PATH (a state file) from offset
                                    0, poll, read again ... until a final
                                    state; print one line per read
                                    ("running", "done") and then
                                    "wakeups N"; exit 1 on a poll timeout
  fusetool.py pollresult PATH SECS  poll a result file until readable
  fusetool.py intread PATH READY    read PATH, with SIGINT raising
                                    KeyboardInterrupt; touch READY just
                                    before the read; print "interrupted
                                    ERRNO" or the bytes read
  fusetool.py opened PATH SECS      wait until a process opens PATH
                                    (inotify IN_OPEN, through ctypes);
                                    exit 1 if none did within SECS
Only the standard library.
"""
import errno
import mmap
import os
import select
import signal
import sys
import time

FINAL = ("done", "failed", "cancelled", "rejected")


def name(e):
    return errno.errorcode.get(e, str(e))


def do_errno(op, path, arg):
    ops = {
        "mkdir": lambda: os.mkdir(path),
        "rmdir": lambda: os.rmdir(path),
        "unlink": lambda: os.unlink(path),
        "create": lambda: os.close(os.open(path, os.O_WRONLY | os.O_CREAT
                                           | os.O_TRUNC, 0o600)),
        "openw": lambda: os.close(os.open(path, os.O_WRONLY)),
        "append": lambda: os.close(os.open(path, os.O_WRONLY | os.O_APPEND)),
        "open": lambda: os.close(os.open(path, os.O_RDONLY)),
        "read": lambda: read_all(path),
        "opendir": lambda: os.listdir(path),
        "stat": lambda: os.stat(path),
        "lstat": lambda: os.lstat(path),
        "readlink": lambda: os.readlink(path),
        "rename": lambda: os.rename(path, arg),
        "symlink": lambda: os.symlink("target", path),
        "link": lambda: os.link(path, arg),
        "chmod": lambda: os.chmod(path, 0o644),
        "truncate": lambda: os.truncate(path, 0),
        "mknod": lambda: os.mkfifo(path),
        "write": lambda: write_close(path, arg),
        "mmap": lambda: map_shared(path),
    }
    try:
        ops[op]()
    except OSError as e:
        return name(e.errno)
    return "ok"


def read_all(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        while os.read(fd, 65536):
            pass
    finally:
        os.close(fd)


def map_shared(path):
    """Map the whole file MAP_SHARED, read only, and touch every byte."""
    fd = os.open(path, os.O_RDONLY)
    try:
        with mmap.mmap(fd, 0, mmap.MAP_SHARED, mmap.PROT_READ) as m:
            m.read()
    finally:
        os.close(fd)


def write_close(path, data):
    """Write data (a str; "@N" means N bytes of x) and close: the errno of
    the write or of the close."""
    if data.startswith("@"):
        data = "x" * int(data[1:])
    data = data.encode()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        while data:
            data = data[os.write(fd, data):]
    except OSError as e:
        try:
            os.close(fd)
        except OSError as e2:
            print("close:", name(e2.errno), file=sys.stderr)
        raise e
    os.close(fd)


def nonblock(path):
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        data = os.read(fd, 1 << 20)
    except OSError as e:
        return name(e.errno)
    finally:
        os.close(fd)
    return data.decode(errors="replace")


def pollstate(path, secs):
    fd = os.open(path, os.O_RDONLY)
    p = select.poll()
    p.register(fd, select.POLLIN | select.POLLPRI)
    wakeups = 0
    deadline = time.monotonic() + secs
    while True:
        s = os.pread(fd, 100, 0).decode().strip()
        print(s, flush=True)
        if s in FINAL:
            ev = p.poll(0)          # after a final state: no wait
            print("final-poll", "hup" if ev and ev[0][1] & select.POLLHUP
                  else "none", flush=True)
            break
        left = deadline - time.monotonic()
        if left <= 0 or not p.poll(int(left * 1000)):
            print("timeout", flush=True)
            return 1
        wakeups += 1
    print("wakeups", wakeups)
    return 0


def pollresult(path, secs):
    fd = os.open(path, os.O_RDONLY)
    p = select.poll()
    p.register(fd, select.POLLIN)
    ev = p.poll(int(secs * 1000))
    if not ev:
        print("timeout")
        return 1
    print("readable")
    sys.stdout.write(os.pread(fd, 1 << 20, 0).decode())
    return 0


def intread(path, ready):
    signal.signal(signal.SIGINT, signal.default_int_handler)
    fd = os.open(path, os.O_RDONLY)
    open(ready, "w").close()
    try:
        data = os.read(fd, 1 << 20)
    except KeyboardInterrupt:
        print("interrupted")
        return 3
    except OSError as e:
        print("error", name(e.errno))
        return 4
    sys.stdout.write(data.decode())
    return 0


def opened(path, secs):
    import ctypes
    import struct
    libc = ctypes.CDLL(None, use_errno=True)
    IN_OPEN, IN_CLOEXEC = 0x20, 0o2000000
    fd = libc.inotify_init1(IN_CLOEXEC)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "inotify_init1")
    try:
        if libc.inotify_add_watch(fd, os.fsencode(path), IN_OPEN) < 0:
            e = ctypes.get_errno()
            raise OSError(e, os.strerror(e), path)
        end = time.monotonic() + secs
        while True:
            left = end - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return 1
            data = os.read(fd, 4096)
            if len(data) >= 16 and struct.unpack_from("iIII", data)[1] & IN_OPEN:
                return 0
    finally:
        os.close(fd)


def main(argv):
    cmd = argv[1]
    if cmd == "errno":
        print(do_errno(argv[2], argv[3], argv[4] if len(argv) > 4 else ""))
        return 0
    if cmd == "nonblock":
        print(nonblock(argv[2]))
        return 0
    if cmd == "pollstate":
        return pollstate(argv[2], float(argv[3]))
    if cmd == "pollresult":
        return pollresult(argv[2], float(argv[3]))
    if cmd == "intread":
        return intread(argv[2], argv[3])
    if cmd == "opened":
        return opened(argv[2], float(argv[3]))
    print("usage: see the top of fusetool.py", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
