#!/bin/sh
# slurm-down.sh - stop what scripts/slurm-up.sh started (by pid file,
# and only the process the file names if it is that daemon:
# scripts/pidfile.sh).
. "$(dirname "$0")/pidfile.sh"
daemon_stop /run/slurmd.pid slurmd
daemon_stop /run/slurmctld.pid slurmctld
daemon_stop /run/munge/munged.pid munged
exit 0
