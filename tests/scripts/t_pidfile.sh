#!/bin/sh
# t_pidfile.sh - scripts/pidfile.sh, which the batch systems' bring-up
# and tear-down scripts use: a pid file is trusted only when the process
# with that number has the daemon's name, so a file left behind never
# gets another process signalled.  Prints one line per check and
# "N passed, N failed"; exits non-zero if any failed.
set -u
cd "$(dirname "$0")/../.."
. tests/scripts/lib.sh
. scripts/pidfile.sh
tmp=$(mktemp -d) || exit 1
bystander=""
trap '[ -n "$bystander" ] && kill "$bystander" 2>/dev/null; rm -rf "$tmp"' EXIT

alive() { kill -0 "$1" 2>/dev/null; }
gone() { ! alive "$1"; }
names_none() { ! daemon_pid "$1" "$2" > /dev/null; }	# PIDFILE NAME

# start PROGRAM ARGS: a process that is not our child (reaped by init,
# as a daemon is); prints its pid
start() {
	(setsid "$@" > /dev/null 2>&1 < /dev/null & echo $!)
}

# a live process under another name: a left-behind pid file naming it
bystander=$(start sleep 300)
echo "$bystander" > "$tmp/stale.pid"
check "a stale pid file's process is not the daemon" \
    names_none "$tmp/stale.pid" fakedaemon
daemon_stop "$tmp/stale.pid" fakedaemon
check "stopping leaves the other process alone" alive "$bystander"
check "and removes the stale pid file" test ! -e "$tmp/stale.pid"

# the daemon itself: a program called fakedaemon
cp "$(command -v sleep)" "$tmp/fakedaemon"
daemon=$(start "$tmp/fakedaemon" 300)
echo "$daemon" > "$tmp/d.pid"
check "the daemon is found by its pid file" \
    test "$(daemon_pid "$tmp/d.pid" fakedaemon)" = "$daemon"
daemon_stop "$tmp/d.pid" fakedaemon
check "the daemon is stopped" gone "$daemon"
check "its pid file is removed" test ! -e "$tmp/d.pid"

printf 'x12\n' > "$tmp/bad.pid"
check "a pid file that is not a number names nothing" \
    names_none "$tmp/bad.pid" fakedaemon
check "a missing pid file: nothing to stop" \
    daemon_stop "$tmp/missing.pid" fakedaemon

finish
