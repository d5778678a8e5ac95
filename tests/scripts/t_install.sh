#!/bin/bash
# t_install.sh - "make install" and "make uninstall" (README.md,
# "Installing"): the programs, the man pages and the notebook client
# under DESTDIR/PREFIX, a task run end to end from the installed tree
# alone (its spoold starting the installed ckworker, not the one in
# bin/), and uninstall leaving nothing of what install put there.
# Uses the build in bin/ ("make all" first).  Prints one line per check
# and "N passed, N failed"; exits non-zero if any failed.
set -u
cd "$(dirname "$0")/../.."
. tests/scripts/lib.sh
tmp=$(mktemp -d) || exit 1
root=$tmp/root
prefix=/opt/ckspool
spoold_pid=""
trap '[ -n "$spoold_pid" ] && kill -KILL "$spoold_pid" 2>/dev/null
      pkill -KILL -f -- "-S $tmp/spool" 2>/dev/null; rm -rf "$tmp"' EXIT

# the installed tree's environment alone: no bin/ of this repository on
# PATH, no CKWORKER naming a worker elsewhere
installed() {	# COMMAND...
	env -i HOME="$tmp" PATH="$root$prefix/bin:/usr/bin:/bin" \
	    SPOOL="$tmp/spool" "$@"
}

# wait_until SECONDS COMMAND...: true once COMMAND succeeds
wait_until() {
	local end=$(( $(date +%s) + $1 ))
	shift
	until "$@"; do
		[ "$(date +%s)" -ge "$end" ] && return 1
		sleep 0.1
	done
}

make -s install DESTDIR="$root" PREFIX="$prefix" > "$tmp/install.out" 2>&1
check "make install succeeds" test $? -eq 0 || cat "$tmp/install.out"

pydir=$(make -s --no-print-directory -f Makefile print-pythondir \
    PREFIX="$prefix" 2>/dev/null)
expected="$prefix/bin/ckworker
$prefix/bin/spool
$prefix/bin/spoold
$prefix/bin/spoolfs
$pydir/ckspool.py
$prefix/share/man/man1/ckworker.1
$prefix/share/man/man1/spool.1
$prefix/share/man/man1/spoolfs.1
$prefix/share/man/man5/spool-layout.5
$prefix/share/man/man8/spoold.8"
got=$(cd "$root" && find . -type f | sed 's/^\.//' | LC_ALL=C sort)
check "it installs the four programs, five man pages and the client" \
    test "$got" = "$(echo "$expected" | LC_ALL=C sort)" ||
    printf 'expected:\n%s\ngot:\n%s\n' "$expected" "$got"
check "the python directory is under the prefix" \
    test "${pydir#"$prefix"/lib/python}" != "$pydir"
same=true
for f in spool spoold ckworker spoolfs; do
	cmp -s "bin/$f" "$root$prefix/bin/$f" &&
	    [ -x "$root$prefix/bin/$f" ] || same=false
done
check "the programs are bin/'s, executable" $same
same=true
for m in doc/man/*.[158]; do
	cmp -s "$m" "$root$prefix/share/man/man${m##*.}/${m##*/}" || same=false
done
check "the man pages are doc/man's" $same

# a task from the installed tree
installed spool init > "$tmp/init.out" 2>&1
check "the installed spool makes a spool" test $? -eq 0
# (not through the function: $! would be a subshell's)
env -i HOME="$tmp" PATH="$root$prefix/bin:/usr/bin:/bin" SPOOL="$tmp/spool" \
    spoold --local 1 > "$tmp/spoold.log" 2>&1 &
spoold_pid=$!
worker_exes() {	# the programs spoold's children run
	local p
	for p in $(pgrep -P "$spoold_pid"); do
		readlink "/proc/$p/exe"
	done
}
installed_worker() {
	worker_exes | grep -qx "$root$prefix/bin/ckworker"
}
check "the installed spoold starts the installed ckworker" \
    wait_until 30 installed_worker ||
    { worker_exes; tail -5 "$tmp/spoold.log"; }
id=$(installed spool submit -- sh -c 'echo "from $0"' installed 2> "$tmp/submit.err")
check "a task is submitted" test -n "$id" || cat "$tmp/submit.err"
installed timeout 60 spool wait "$id" > /dev/null 2>&1
check "it runs and succeeds" test $? -eq 0
check "its output is there" \
    test "$(cat "$(installed spool path "$id")/stdout" 2>/dev/null)" = "from installed"

# the notebook client from where install put it, on the same spool
out=$(installed PYTHONPATH="$root$pydir" timeout 60 python3 -c '
import ckspool, sys
print(ckspool.__file__)
with ckspool.Client(sys.argv[1]) as c:
    print(c.submit("echo from python").result(timeout=50), end="")
' "$tmp/spool" 2>&1)
check "the installed client imports and runs a task" \
    test "$out" = "$root$pydir/ckspool.py
from python" || echo "$out"

installed timeout 60 spool shutdown > "$tmp/shutdown.out" 2>&1
check "spool shutdown stops the installed spoold" test $? -eq 0
wait_until 30 sh -c "! kill -0 $spoold_pid 2>/dev/null"
spoold_pid=""

make -s uninstall DESTDIR="$root" PREFIX="$prefix" > "$tmp/uninstall.out" 2>&1
check "make uninstall succeeds" test $? -eq 0 || cat "$tmp/uninstall.out"
left=$(find "$root" -type f)
check "and leaves no file install made" test -z "$left" || echo "$left"

finish
