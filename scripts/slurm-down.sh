#!/bin/sh
# slurm-down.sh - stop what scripts/slurm-up.sh started (by pid file).
for pidfile in /run/slurmd.pid /run/slurmctld.pid /run/munge/munged.pid; do
	[ -s "$pidfile" ] || continue
	pid=$(cat "$pidfile")
	kill -TERM "$pid" 2>/dev/null || continue
	for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
done
exit 0
