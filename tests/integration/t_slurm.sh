# t_slurm.sh - worker jobs on a real Slurm cluster (one node, from
# Debian's slurm-wlm; scripts/slurm-up.sh), started and stopped by spoold.
# needs: slurm

. "$(dirname "${BASH_SOURCE[0]}")/batch.sh"

# Scale up as one array job, run a few hundred tasks, adapt down to no
# job, adapt up again for a backlog, and shut down with an empty queue.
test_slurm_scale_run_adapt_shutdown() {
	batch_need slurm
	batch_spool slurm
	start_spoold
	spool scale 2 2>/dev/null || fail "spool scale"
	spool wait-workers 2 --timeout 60s || fail "no 2 workers: $(spool workers)"
	# one sbatch --array, two elements, both running
	wait_for 10 queue_count_is 2 || fail "queue: $(queue_jobs)"
	queue_jobs > "$T/queue"
	assert_match '^[0-9]+_1 RUNNING$' "$(cat "$T/queue")" "array element 1"
	assert_match '^[0-9]+_2 RUNNING$' "$(cat "$T/queue")" "array element 2"
	arr=$(sed -n 's/_1 RUNNING$//p' "$T/queue")
	[ -f "$SPOOL/jobs/$arr.sh" ] || fail "no jobs/$arr.sh kept"
	wait_for 10 job_state_is "${arr}_1" running ||
	    fail "job record: $(cat "$SPOOL/jobs/${arr}_1")"
	# 300 tasks; each sees the job it runs in
	seq 300 | spool map -- sh -c 'echo "$SLURM_JOB_ID $1"' sh {} > "$T/ids" ||
	    fail "map"
	spool wait $(cat "$T/ids") || fail "tasks failed"
	[ "$(spool gather $(cat "$T/ids") | awk '{print $2}' | paste -sd' ')" = \
	    "$(seq 300 | paste -sd' ')" ] || fail "outputs"
	jobids=$(spool gather $(cat "$T/ids") | awk '{print $1}' | sort -u | wc -l)
	[ "$jobids" -ge 1 ] && [ "$jobids" -le 2 ] || fail "tasks ran in $jobids jobs"
	assert_match "^default@${arr}_[12]-" "$(field "$(tail -1 "$T/ids")" worker)" \
	    "worker named after its job"
	# adapt with nothing queued: both drained and cancelled
	spool adapt --minimum 0 --maximum 2 2>/dev/null || fail "adapt"
	wait_for 60 queue_empty || fail "adapt down left: $(queue_jobs)"
	wait_for 30 live_workers_are 0 || fail "workers left: $(live_workers)"
	log_has "draining worker default@${arr}_1-.* \\(idle\\) to scale down" ||
	    fail "no drain of ${arr}_1"
	wait_for 10 jobs_in_state_count_is gone 2 ||
	    fail "records: $(ls "$SPOOL/jobs")"
	# a backlog brings jobs back, within the maximum; its tasks run
	# until told, so it stays until both are up
	for i in 1 2 3 4; do
		spool submit -- sh -c 'while [ ! -e "$1" ]; do sleep 0.1; done' \
		    _ "$T/go" >> "$T/more" || fail "submit"
	done
	wait_for 60 live_workers_are 2 || fail "adapt up: $(spool workers)"
	touch "$T/go"
	spool wait $(cat "$T/more") || fail "backlog tasks"
	# shutdown: every job cancelled, spoold gone, the queue empty
	batch_shutdown
	assert_match "no worker job left" "$(cat "$T/shutdown.out")"
	queue_empty || fail "queue after shutdown: $(queue_jobs)"
	squeue -h -n "$JOBNAME" > "$T/squeue"
	[ ! -s "$T/squeue" ] || fail "squeue: $(cat "$T/squeue")"
	no_proc "ckworker -S $SPOOL" || fail "a ckworker survived"
	[ -z "$(ls "$SPOOL/scale")" ] || fail "sizes not cleared"
}

# A notebook's Python calls in a worker job, as with dask-jobqueue
# (batch.sh).
test_slurm_python_client_maps_calls_onto_a_job() {
	batch_need slurm
	python_calls_in_a_job SLURM_JOB_ID
}

# A stop cancels plain jobs in one scancel (batch.sh).
test_slurm_stop_cancels_jobs_in_one_scancel() {
	stop_cancels_in_one_command slurm scancel
}

# Pending jobs cancelled to scale down go in one scancel (batch.sh).
test_slurm_pending_jobs_cancelled_in_one_scancel() {
	pending_cancelled_in_one_command slurm scancel
}

# Every task result names the batch job its worker ran in.
test_slurm_job_id_recorded_in_results() {
	batch_need slurm
	batch_spool slurm
	start_spoold
	spool scale 1 2>/dev/null
	spool wait-workers 1 --timeout 60s || fail "no worker"
	id=$(spool submit -- true) || fail "submit"
	spool wait "$id" || fail "task"
	job=$(queue_jobs | awk '{print $1}')
	[ -n "$job" ] || fail "no job in the queue"
	assert_eq "$job" "$(field "$id" job)" "job: in the result"
}

# A job cancelled from outside (scancel): its running task is handed
# back and runs again elsewhere; spoold replaces the job.  Then SIGTERM
# to spoold cancels what is left.
test_slurm_scancel_requeues_tasks_and_sigterm_cleans_up() {
	batch_need slurm
	batch_spool slurm
	start_spoold
	spool scale 1 2>/dev/null
	spool wait-workers 1 --timeout 60s || fail "no worker"
	id=$(spool submit -- sh -c \
	    'echo "attempt $SPOOL_ATTEMPT job $SLURM_JOB_ID"; [ "$SPOOL_ATTEMPT" -gt 1 ] || exec sleep 600') ||
	    fail "submit"
	wait_for 30 state_is "$id" running || fail "task not running"
	first=$(queue_jobs | awk '{print $1}')
	scancel "$first" || fail "scancel $first"
	wait_for 60 task_done "$id" || fail "task not done: $(spool status "$id")"
	assert_eq 2 "$(field "$id" attempt)" "attempt"
	log_has "task $id attempt 1 handed back" || fail "no hand-back"
	second=$(task_stdout "$id" | awk '{print $4}')
	[ -n "$second" ] && [ "$second" != "$first" ] ||
	    fail "attempt 2 ran in job '$second' (first was $first)"
	wait_for 10 job_state_is "$first" gone ||
	    fail "record of the cancelled job: $(cat "$SPOOL/jobs/$first")"
	wait_for 30 queue_count_is 1 || fail "replacement: $(queue_jobs)"
	kill -TERM "$SPOOLD_PID"
	wait_for 60 spoold_gone || fail "spoold did not stop on SIGTERM"
	queue_empty || fail "queue after SIGTERM: $(queue_jobs)"
	log_has "cancelled job .* \\(stopping\\)" || fail "no cancel logged"
	no_proc "ckworker -S $SPOOL" || fail "a ckworker survived"
}

# A worker job reaching its walltime: the worker drains before the end
# and hands its running task back; the task runs again in a new job.
# (Slurm limits are whole minutes: a 2-minute job drains after 1.)
test_slurm_walltime_hands_back_running_task() {
	batch_need slurm
	batch_spool slurm '  walltime: "00:02:00"'
	start_spoold
	spool scale 1 2>/dev/null
	spool wait-workers 1 --timeout 60s || fail "no worker"
	first=$(queue_jobs | awk '{print $1}')
	id=$(spool submit -- sh -c \
	    'echo "attempt $SPOOL_ATTEMPT"; [ "$SPOOL_ATTEMPT" -gt 1 ] || exec sleep 600') ||
	    fail "submit"
	wait_for 30 state_is "$id" running || fail "task not running"
	wait_for 100 task_done "$id" || fail "not handed back and rerun: $(spool status "$id")"
	assert_eq 2 "$(field "$id" attempt)" "attempt"
	log_has "task $id attempt 1 handed back" || fail "no hand-back"
	log_has "walltime is ending" "$SPOOL/log/$JOBNAME-$first.err" ||
	    fail "worker log: $(tail -3 "$SPOOL/log/$JOBNAME-$first.err")"
	spool shutdown >/dev/null 2>&1 || fail "shutdown"
	queue_empty || fail "queue: $(queue_jobs)"
}

# Jobs that fail say why (their own last words) in spool workers, are
# retried with backoff, and not more than max-submit-failures in a row.
test_slurm_failed_jobs_say_why_and_stop_after_the_limit() {
	batch_need slurm
	batch_spool slurm '  max-submit-failures: 2
  job-script-prologue: ["echo module bogus: not found >&2", "exit 3"]'
	start_spoold
	spool scale 1 2>/dev/null
	wait_for 60 jobs_in_state_count_is failed 2 ||
	    fail "failed jobs: $(ls "$SPOOL/jobs")"
	wait_for 30 log_has "2 worker jobs failed in a row; not submitting more" ||
	    fail "no stop after the limit"
	spool workers > "$T/workers"
	assert_match "failed .*left the queue before its worker registered; its output ends: module bogus: not found" \
	    "$(cat "$T/workers")" "spool workers"
	queue_empty || fail "queue: $(queue_jobs)"
	jobs_in_state_count_is failed 2 || fail "more than 2 submitted"
	# asking again is a fresh start
	spool scale 1 2>/dev/null
	wait_for 60 jobs_in_state_count_is failed 3 || fail "no new try"
	# a submission the batch system refuses: its own words
	stop_spoold
	sed -i 's/^  name: .*/&\n  queue: nosuchpartition/' "$SPOOL/spool.yaml"
	start_spoold
	spool scale 2 2>/dev/null
	wait_for 30 workers_match "submission failed: sbatch: error: .*[Pp]artition" ||
	    fail "refused submission: $(spool workers)"
}

# Worker environment: env reaches workers and tasks; export-env passes
# spoold's environment (--export=ALL) or not (NONE); the workers' log
# goes to the log directory, made when missing.
test_slurm_worker_environment_and_log_directory() {
	batch_need slurm
	batch_spool slurm "  log-directory: $T/logs/ck
  env: {CK_FROM_CONFIG: \"a b\"}
  kinds:
    exp: {export-env: true}
    noexp: {export-env: false}"
	CK_FROM_SPOOLD=yes start_spoold
	spool scale 1 --kind exp 2>/dev/null
	spool wait-workers 1 --kind exp --timeout 60s || fail "no exp worker"
	id=$(spool submit -- sh -c 'echo "[$CK_FROM_CONFIG] [$CK_FROM_SPOOLD]"')
	spool wait "$id" || fail "task"
	assert_eq "[a b] [yes]" "$(task_stdout "$id")" "export-env: true"
	job=$(queue_jobs | awk '{print $1}')
	wait_for 10 log_has "registered as exp@$job" "$T/logs/ck/$JOBNAME-$job.err" ||
	    fail "no worker log in the log directory: $(ls -R "$T/logs")"
	spool scale 0 --kind exp 2>/dev/null
	wait_for 60 live_workers_are 0 || fail "exp worker did not leave"
	spool scale 1 --kind noexp 2>/dev/null
	spool wait-workers 1 --kind noexp --timeout 60s || fail "no noexp worker"
	id=$(spool submit -- sh -c 'echo "[$CK_FROM_CONFIG] [$CK_FROM_SPOOLD]"')
	spool wait "$id" || fail "task"
	assert_eq "[a b] []" "$(task_stdout "$id")" "export-env: false"
	spool shutdown >/dev/null 2>&1 || fail "shutdown"
	queue_empty || fail "queue: $(queue_jobs)"
}

# More jobs than the node has room for: the last one pends, counts as
# capacity already asked for (no more are submitted), says why, and is
# cancelled by shutdown like the others.
test_slurm_pending_jobs_count_and_say_why() {
	batch_need slurm
	batch_spool slurm '  cores: 2'
	start_spoold
	spool scale --jobs 2 2>/dev/null
	spool wait-workers 1 --timeout 60s || fail "no worker"
	wait_for 20 workers_match "pending +[0-9.]+s +Resources" ||
	    fail "no pending reason: $(spool workers)"
	queue_jobs > "$T/q"
	assert_eq 1 "$(grep -c RUNNING "$T/q")" "running jobs"
	assert_eq 1 "$(grep -c PENDING "$T/q")" "pending jobs"
	# the pass that saw it pending decided with it: nothing piled up
	queue_count_is 2 || fail "piled up: $(queue_jobs)"
	assert_eq 2 "$(ls "$SPOOL/jobs" | grep -vc '\.sh$')" "job records"
	spool shutdown >/dev/null 2>&1 || fail "shutdown"
	queue_empty || fail "queue: $(queue_jobs)"
}

# Allocation mode: one ckworker per node of the allocation it runs in,
# with the allocation's cores and end time; the spool's tasks run there
# without more queueing; the job ends when its workers are idle.
test_slurm_start_workers_inside_an_allocation() {
	batch_need slurm
	new_spool
	JOBNAME=ckalloc$(( RANDOM % 1000 ))
	trap batch_cleanup EXIT
	start_spoold
	sbatch -J "$JOBNAME" -N 1 -c 2 -t 5 -o "$T/alloc.out" \
	    --wrap "$BIN/spool -S $SPOOL start-workers --idle-timeout 3s" \
	    > "$T/sbatch" || fail "sbatch"
	job=$(grep -o '[0-9]*' "$T/sbatch" | head -1)
	wait_for 60 worker_registered "alloc-$job" ||
	    fail "no worker alloc-$job: $(cat "$T/alloc.out")"
	wid=$(worker_wid "alloc-$job")
	assert_eq 2 "$(sed -n 's/^cores: //p' "$SPOOL/workers/$wid/info")" "cores"
	ends=$(sed -n 's/^ends: //p' "$SPOOL/workers/$wid/info")
	[ -n "$ends" ] && [ "${ends%.*}" -gt "$(date +%s)" ] ||
	    fail "no end time from the allocation: ends '$ends'"
	for i in 1 2 3 4; do
		spool submit -- sh -c 'echo $SLURM_JOB_ID' >> "$T/ids"
	done
	spool wait $(cat "$T/ids") || fail "tasks"
	for id in $(cat "$T/ids"); do
		assert_eq "$job" "$(task_stdout "$id")" "task $id ran in the allocation"
		assert_match "^alloc-$job-" "$(field "$id" worker)" "worker"
	done
	# idle workers leave, and the allocation ends with them
	wait_for 60 queue_empty || fail "allocation still there: $(queue_jobs)"
	assert_match "starting a worker on each of 1 node of job $job \\(2 cores each\\)" \
	    "$(cat "$T/alloc.out")" "start-workers said"
}

# A spool whose path has a space (and a "#", Slurm's comment sign):
# the output directives are one argument each, so sbatch takes the job
# and its worker's output lands in the spool's log directory.
test_slurm_spool_path_with_a_space() {
	batch_need slurm
	batch_space_path_runs_a_job "my spool #1" 'NAME-JOB.err'
}

# A job whose sbatch answer no spoold read is found by its script and
# cancelled by a stop, though it never starts (batch.sh); an array job
# here, whose elements are found one by one.
test_slurm_job_of_an_unread_submission_is_found_by_its_script() {
	batch_need slurm
	batch_spool slurm
	unread_submission_is_found sbatch --parsable --hold --array=1-2
}

# Where it happens: slurmctld is stopped (SIGSTOP, as a controller too
# busy to answer) while spoold's sbatch waits for it; sbatch gives up
# after its MessageTimeout (10 s) and says the submission failed
# ("Socket timed out on send/recv operation"), then slurmctld goes on
# and takes the job it had been sent all the same.  spoold finds it by
# its script (the log says so), and after "spool shutdown" no job of
# the spool is left in the queue.  The jobs are held (--hold), so that
# none starts and no worker registers: only the listing can find one.
# Before, the job stayed queued, unknown to spoold.
test_slurm_job_of_an_sbatch_that_timed_out_is_found() {
	batch_need slurm
	submission_fails_while_stopped slurmctld --hold 30 \
	    "submitting a worker job failed: sbatch: .*timed out"
	wait_for 40 log_has "unconfirmed submission .* left [0-9]+ jobs? in the slurm queue: .*; recorded" ||
	    fail "not found: $(tail -5 "$T/spoold.log"; queue_jobs)"
	wait_for 40 no_unconfirmed_scripts ||
	    fail "still unconfirmed: $(ls "$SPOOL/jobs")"
	batch_shutdown
	queue_empty || fail "queue after shutdown: $(queue_jobs)"
}
