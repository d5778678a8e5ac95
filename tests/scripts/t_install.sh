#!/bin/bash
# t_install.sh - "make install" and "make uninstall" (README.md,
# "Installing"): the programs, the man pages, the notebook client, the
# systemd unit and the logrotate file under DESTDIR/PREFIX, a task run
# end to end from the installed tree alone (its spoold starting the
# installed ckworker, not the one in bin/), the unit checked by
# systemd-analyze verify and its ExecStart run on a spool of another
# user (as root), a rotation by the logrotate file, and uninstall
# leaving nothing of what install put there.
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
$prefix/share/man/man8/spoold.8
$prefix/lib/systemd/system/spoold@.service
$prefix/etc/logrotate.d/ckspool"
got=$(cd "$root" && find . -type f | sed 's/^\.//' | LC_ALL=C sort)
check "it installs the four programs, five man pages, the client, the unit and the logrotate file" \
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

# The systemd unit (spoold(8), "Running under systemd"), as systemd
# would read it; not started (systemd is not PID 1 here): its ExecStart
# line, with the specifiers systemd replaces, is run instead.
unit=$root$prefix/lib/systemd/system/spoold@.service
check "the unit runs the installed spoold" \
    grep -q -- "-- $prefix/bin/spoold -S " "$unit"
out=$(MANPATH=$root$prefix/share/man systemd-analyze verify "$unit" 2>&1)
check "systemd-analyze verify finds nothing to say of it" \
    test $? -eq 0 -a -z "$out" || echo "$out"
uspool=$tmp/spool-unit
inst=$(systemd-escape --path --template=spoold@.service "$uspool")
check "its instance names the spool: %f, unescaped, is the spool's path" \
    test "$(systemd-escape --unescape --path --instance "$inst")" = "$uspool"
# ExecStart as systemd passes it: %f the spool, %% a %, $$ a $, and
# SPOOLD_OPTIONS (a drop-in's Environment=) split into words; its
# spoold where DESTDIR put it
execstart() {	# SPOOL OPTIONS
	sed -n 's/^ExecStart=//p' "$unit" | sed -e "s|%f|$1|g" -e 's|%%|%|g' \
	    -e "s|\\\$SPOOLD_OPTIONS|$2|" -e 's|\$\$|$|g' \
	    -e "s|-- $prefix/bin/spoold |-- $root$prefix/bin/spoold |"
}
if [ "$(id -u)" -eq 0 ]; then
	# a spool of another user (nobody), whom spoold becomes
	chmod 0755 "$tmp"
	installed spool -S "$uspool" init > /dev/null 2>&1 &&
	    chown -R nobody:nogroup "$uspool"
	check "a spool of nobody's is made" test $? -eq 0
	eval "set -- $(execstart "$uspool" "--local 1")"
	"$@" > "$tmp/unit.log" 2>&1 &
	spoold_pid=$!
	unit_worker() {
		ls "$uspool/workers" 2>/dev/null | grep -q '^local-1-'
	}
	check "the unit's ExecStart starts spoold, with SPOOLD_OPTIONS" \
	    wait_until 30 unit_worker || tail -5 "$tmp/unit.log"
	check "it runs as the spool's owner, in the foreground (its main process)" \
	    test "$(stat -c %U "/proc/$spoold_pid")" = nobody -a \
	    "$(sed -n 's/^pid: //p' "$uspool/lock/spoold/owner")" = "$spoold_pid"
	kill -TERM "$spoold_pid"	# KillSignal=, to the main process
	wait "$spoold_pid"
	check "SIGTERM stops it cleanly (exit 0)" test $? -eq 0 ||
	    tail -5 "$tmp/unit.log"
	spoold_pid=""
	unit_gone() {	# (pgrep, not in "sh -c" whose line would match)
		! pgrep -f -- "-S $uspool " > /dev/null
	}
	check "and its worker is gone" wait_until 30 unit_gone

	# the logrotate file, naming this spool's log directory and its
	# owner (the two lines an admin edits)
	sed -e "s|/srv/spool/log|$uspool/log|" \
	    -e 's|# su spool spool|su nobody nogroup|' \
	    "$root$prefix/etc/logrotate.d/ckspool" > "$tmp/logrotate.conf"
	logrotate -d -s "$tmp/logrotate.state" "$tmp/logrotate.conf" \
	    > "$tmp/logrotate.d.out" 2>&1
	check "logrotate -d reads it without an error" test $? -eq 0 -a \
	    -z "$(grep -i error "$tmp/logrotate.d.out")" ||
	    cat "$tmp/logrotate.d.out"
	check "and considers the spool's logs" \
	    grep -q "considering log $uspool/log/local-1.log" \
	    "$tmp/logrotate.d.out" || cat "$tmp/logrotate.d.out"
	log=$uspool/log/local-1.log
	# a writer as ckspool's: O_APPEND, never reopened
	exec 3>> "$log"
	echo before >&3
	out=$(logrotate -f -s "$tmp/logrotate.state" "$tmp/logrotate.conf" 2>&1)
	check "a forced rotation succeeds" test $? -eq 0 || echo "$out"
	echo after >&3
	exec 3>&-
	check "the copy has what was written before it" \
	    grep -q '^before$' "$log.1"
	check "the log was truncated, the writer's next line at its start" \
	    test "$(cat "$log")" = after -a "$(stat -c %s "$log")" -eq 6
	check "the copy is the owner's" test "$(stat -c %U "$log.1")" = nobody
	check "the state file records the rotation" \
	    grep -q "$log" "$tmp/logrotate.state"
else
	echo "not run here: the unit's ExecStart and logrotate on a spool of another user (need root)"
fi

make -s uninstall DESTDIR="$root" PREFIX="$prefix" > "$tmp/uninstall.out" 2>&1
check "make uninstall succeeds" test $? -eq 0 || cat "$tmp/uninstall.out"
left=$(find "$root" -type f)
check "and leaves no file install made" test -z "$left" || echo "$left"

finish
