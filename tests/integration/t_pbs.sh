# t_pbs.sh - the PBS backend's submission, listing and cancellation,
# against Debian's slurm-wlm-torque: PBS-style qsub, qstat and qdel
# wrappers over Slurm (there is no PBS server in Debian).  What this does
# not show about a real PBS server is in doc/backends.md.
# needs: pbs

. "$(dirname "${BASH_SOURCE[0]}")/batch.sh"

# qstat's view of this test's jobs: "ID S" lines
pbs_jobs() {
	qstat | awk -v n="$JOBNAME" '$2 == n { print $1, $5 }'
}

pbs_running_count_is() {	# N
	[ "$(pbs_jobs | grep -c ' R$')" -eq "$1" ]
}

test_pbs_submit_run_and_cancel_through_torque_wrappers() {
	batch_need pbs
	batch_spool pbs
	start_spoold
	spool scale 2 2>/dev/null || fail "scale"
	spool wait-workers 2 --timeout 60s || fail "no 2 workers: $(spool workers)"
	wait_for 10 pbs_running_count_is 2 || fail "qstat: $(qstat)"
	# no arrays on PBS: two jobs, two plain IDs
	ids=$(pbs_jobs | awk '{print $1}' | sort -n)
	assert_eq 2 "$(echo "$ids" | grep -Ec '^[0-9]+$')" "job IDs: $ids"
	first=$(echo "$ids" | head -1)
	wait_for 10 job_state_is "$first" running ||
	    fail "job record: $(cat "$SPOOL/jobs/$first")"
	worker_registered "default@$first" || fail "no worker default@$first"
	# inside, the wrappers set only SLURM_*; the job script copes
	id=$(spool submit -- sh -c 'echo "[${PBS_JOBID:-}] $SLURM_JOB_ID"') ||
	    fail "submit"
	spool wait "$id" || fail "task"
	assert_match '^\[\] [0-9]+$' "$(task_stdout "$id")" "PBS_JOBID inside"
	seq 50 | spool map -- echo {} > "$T/ids" || fail "map"
	spool wait $(cat "$T/ids") || fail "tasks"
	# the output went to the log directory, named by the job name
	[ -s "$SPOOL/log/$JOBNAME.e$first" ] ||
	    fail "no $JOBNAME.e$first in log/: $(ls "$SPOOL/log")"
	log_has "registered as default@$first" "$SPOOL/log/$JOBNAME.e$first" ||
	    fail "worker log: $(cat "$SPOOL/log/$JOBNAME.e$first")"
	# down to one: one job drained and cancelled with qdel
	spool scale 1 2>/dev/null
	wait_for 30 pbs_running_count_is 1 || fail "scale down: $(pbs_jobs)"
	wait_for 10 jobs_in_state_count_is gone 1 || fail "records: $(ls "$SPOOL/jobs")"
	log_has "cancelled job [0-9]+ \\(drained\\)" || fail "no qdel logged"
	spool shutdown > "$T/out" 2>&1 || fail "shutdown: $(cat "$T/out")"
	pbs_running_count_is 0 || fail "qstat after shutdown: $(pbs_jobs)"
	queue_empty || fail "squeue after shutdown: $(queue_jobs)"
	jobs_in_state_count_is gone 2 || fail "records: $(ls "$SPOOL/jobs")"
}
