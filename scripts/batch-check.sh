#!/bin/sh
# batch-check.sh - the tests that need a real batch system, with it up.
#
#	scripts/batch-check.sh slurm   Slurm and its PBS wrappers:
#	                               tests/integration/t_slurm.sh, t_pbs.sh
#	scripts/batch-check.sh sge     Grid Engine: t_sge.sh
#
# Brings the batch system up with the project's own script (which
# installs its packages through install-deps.sh when missing, removing
# the other system's client where the two conflict: slurm-wlm-torque and
# gridengine-client both own /usr/bin/qsub), runs the tests against the
# programs in $BIN (default bin/), and stops the daemons again whatever
# happened, so the machine is left with no batch daemon running.
# "make check" runs "slurm" then "sge"; either order works.
#
# Exit status: the tests' (non-zero also when the batch system could not
# be brought up: those tests fail, they are never skipped).  Needs root.
set -u
cd "$(dirname "$0")/.."
case ${1:-} in
slurm)
	up="env WITH_TORQUE=1 scripts/slurm-up.sh"
	down=scripts/slurm-down.sh
	needs="slurm pbs"
	;;
sge)
	up=scripts/sge-up.sh
	down=scripts/sge-down.sh
	needs=sge
	export SGE_ROOT=/var/lib/gridengine SGE_CELL=default
	;;
*)
	echo "usage: $0 slurm|sge" >&2
	exit 2
	;;
esac
: "${BIN:=$PWD/bin}"
export BIN
# a worker job that reaches its walltime needs more than a minute
TEST_TIMEOUT=${TEST_TIMEOUT:-300}
export TEST_TIMEOUT
log=$(mktemp "${TMPDIR:-/tmp}/batch-check.XXXXXX")
start=$(date +%s)
if $up > "$log" 2>&1 </dev/null; then
	echo "$1 is up ($(( $(date +%s) - start )) s): $(tail -1 "$log")"
	CKSPOOL_BATCH=$needs tests/integration/run.sh
	rc=$?
else
	rc=$?
	echo "batch-check: bringing $1 up failed (status $rc); its last words:"
	tail -25 "$log" | sed 's/^/    /'
	rc=1
fi
$down > "$log" 2>&1 </dev/null ||
	{ echo "batch-check: stopping $1:"; sed 's/^/    /' "$log"; }
rm -f "$log"
exit $rc
