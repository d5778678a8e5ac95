#!/bin/sh
# sge-down.sh - stop what scripts/sge-up.sh started (by pid file, never
# by name): sge_execd, then sge_qmaster.  Jobs still running are killed
# with their execd's shepherds.
stop_pid() {	# PIDFILE NAME
	[ -s "$1" ] || return 0
	pid=$(cat "$1")
	kill -TERM "$pid" 2>/dev/null || return 0
	for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
	echo "$2 ($pid) did not stop on SIGTERM: SIGKILL"
	kill -KILL "$pid" 2>/dev/null
}
for f in /var/spool/gridengine/execd/*/execd.pid; do
	[ -e "$f" ] && stop_pid "$f" sge_execd
done
stop_pid /var/spool/gridengine/qmaster/qmaster.pid sge_qmaster
exit 0
