#!/bin/sh
# sge-down.sh - stop what scripts/sge-up.sh started (by pid file, never
# by name, and only the process the file names if it is that daemon:
# scripts/pidfile.sh): sge_execd, then sge_qmaster.  Jobs still running
# are killed with their execd's shepherds.
. "$(dirname "$0")/pidfile.sh"
for f in /var/spool/gridengine/execd/*/execd.pid; do
	[ -e "$f" ] && daemon_stop "$f" sge_execd
done
daemon_stop /var/spool/gridengine/qmaster/qmaster.pid sge_qmaster
exit 0
