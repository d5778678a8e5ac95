# t_sge.sh - worker jobs on a real Grid Engine cell (one node, Debian's
# gridengine 8.1.9; scripts/sge-up.sh): the core scenario of t_slurm.sh.
# needs: sge

. "$(dirname "${BASH_SOURCE[0]}")/batch.sh"

# Scale up as one array job (qsub -t), run a few hundred tasks, adapt
# down to no job, adapt up for a backlog, shut down with qstat empty.
test_sge_scale_run_adapt_shutdown() {
	batch_need sge
	batch_spool sge
	start_spoold
	spool scale 2 2>/dev/null || fail "spool scale"
	spool wait-workers 2 --timeout 60s || fail "no 2 workers: $(spool workers)"
	wait_for 20 queue_count_is 2 || fail "qstat: $(queue_jobs)"
	queue_jobs > "$T/queue"
	assert_match '^[0-9]+\.1 [rt]$' "$(cat "$T/queue")" "array task 1"
	assert_match '^[0-9]+\.2 [rt]$' "$(cat "$T/queue")" "array task 2"
	arr=$(sed -n 's/\.1 [rt]$//p' "$T/queue")
	wait_for 10 job_state_is "$arr.1" running ||
	    fail "job record: $(cat "$SPOOL/jobs/$arr.1")"
	seq 200 | spool map -- sh -c 'echo "$JOB_ID.$SGE_TASK_ID $1"' sh {} > "$T/ids" ||
	    fail "map"
	spool wait $(cat "$T/ids") || fail "tasks failed"
	[ "$(spool gather $(cat "$T/ids") | awk '{print $2}' | paste -sd' ')" = \
	    "$(seq 200 | paste -sd' ')" ] || fail "outputs"
	spool gather $(cat "$T/ids") | awk '{print $1}' | sort -u > "$T/ran-in"
	grep -Evq "^$arr\\.[12]$" "$T/ran-in" && fail "tasks ran in: $(cat "$T/ran-in")"
	assert_match "^default@$arr\\.[12]-" "$(field "$(tail -1 "$T/ids")" worker)" \
	    "worker named after its job"
	spool adapt --minimum 0 --maximum 2 2>/dev/null || fail "adapt"
	wait_for 60 queue_empty || fail "adapt down left: $(queue_jobs)"
	wait_for 30 live_workers_are 0 || fail "workers left: $(live_workers)"
	wait_for 10 jobs_in_state_count_is gone 2 ||
	    fail "records: $(ls "$SPOOL/jobs")"
	# a backlog brings jobs back, within the maximum; its tasks run
	# until told, so it stays until both are up
	for i in 1 2 3; do
		spool submit -- sh -c 'while [ ! -e "$1" ]; do sleep 0.1; done' \
		    _ "$T/go" >> "$T/more" || fail "submit"
	done
	wait_for 60 live_workers_are 2 || fail "adapt up: $(spool workers)"
	touch "$T/go"
	spool wait $(cat "$T/more") || fail "backlog tasks"
	batch_shutdown
	queue_empty || fail "qstat after shutdown: $(queue_jobs)"
	no_proc "ckworker -S $SPOOL" || fail "a ckworker survived"
}

# Every task result names the batch job its worker ran in.
test_sge_job_id_recorded_in_results() {
	batch_need sge
	batch_spool sge
	start_spoold
	spool scale 1 2>/dev/null
	spool wait-workers 1 --timeout 60s || fail "no worker"
	id=$(spool submit -- true) || fail "submit"
	spool wait "$id" || fail "task"
	job=$(queue_jobs | awk '{print $1}')
	[ -n "$job" ] || fail "no job in the queue"
	assert_eq "$job" "$(field "$id" job)" "job: in the result"
}

# A notebook's Python calls in a worker job, as with dask-jobqueue
# (batch.sh).
test_sge_python_client_maps_calls_onto_a_job() {
	batch_need sge
	python_calls_in_a_job JOB_ID
}

# A stop cancels plain jobs in one qdel (batch.sh).
test_sge_stop_cancels_jobs_in_one_qdel() {
	stop_cancels_in_one_command sge qdel
}

# Pending jobs cancelled to scale down go in one qdel (batch.sh).
test_sge_pending_jobs_cancelled_in_one_qdel() {
	pending_cancelled_in_one_command sge qdel '  parallel-environment: smp'
}

# qdel from outside kills the job (Grid Engine sends SIGKILL): its
# worker is lost as soon as its beat stops, its task runs again in
# the replacement job.  SIGTERM to spoold then cancels what is left.
test_sge_qdel_requeues_tasks_and_sigterm_cleans_up() {
	batch_need sge
	batch_spool sge
	start_spoold
	spool scale 1 2>/dev/null
	spool wait-workers 1 --timeout 60s || fail "no worker"
	id=$(spool submit -- sh -c \
	    'echo "attempt $SPOOL_ATTEMPT job $JOB_ID"; [ "$SPOOL_ATTEMPT" -gt 1 ] || exec sleep 617') ||
	    fail "submit"
	wait_for 30 state_is "$id" running || fail "task not running"
	first=$(queue_jobs | awk '{print $1}')
	qdel "$first" >/dev/null || fail "qdel $first"
	wait_for 60 task_done "$id" || fail "task not done: $(spool status "$id")"
	assert_eq 2 "$(field "$id" attempt)" "attempt"
	log_has "lost: its batch job has ended" || fail "worker not lost by its job"
	second=$(task_stdout "$id" | awk '{print $4}')
	[ -n "$second" ] && [ "$second" != "$first" ] ||
	    fail "attempt 2 ran in job '$second' (first was $first)"
	no_proc "sleep 617" || fail "the first attempt's process survived"
	kill -TERM "$SPOOLD_PID"
	wait_for 60 spoold_gone || fail "spoold did not stop on SIGTERM"
	queue_empty || fail "qstat after SIGTERM: $(queue_jobs)"
}

# A worker job reaching its walltime (h_rt, in seconds here): the worker
# drains a minute before the end and hands its running task back.
test_sge_walltime_hands_back_running_task() {
	batch_need sge
	batch_spool sge '  walltime: "00:01:10"'
	start_spoold
	spool scale 1 2>/dev/null
	spool wait-workers 1 --timeout 60s || fail "no worker"
	first=$(queue_jobs | awk '{print $1}')
	id=$(spool submit -- sh -c \
	    'echo "attempt $SPOOL_ATTEMPT"; [ "$SPOOL_ATTEMPT" -gt 1 ] || exec sleep 617') ||
	    fail "submit"
	wait_for 30 state_is "$id" running || fail "task not running"
	wait_for 60 task_done "$id" || fail "not handed back and rerun: $(spool status "$id")"
	assert_eq 2 "$(field "$id" attempt)" "attempt"
	log_has "task $id attempt 1 handed back" || fail "no hand-back"
	log_has "walltime is ending" "$SPOOL/log/$JOBNAME.o$first" ||
	    fail "worker log: $(tail -3 "$SPOOL/log/$JOBNAME.o$first")"
	spool shutdown >/dev/null 2>&1 || fail "shutdown"
	queue_empty || fail "qstat: $(queue_jobs)"
}

# Allocation mode in a parallel job (qsub -pe smp 2): one worker per
# host of $PE_HOSTFILE with that host's slots.
test_sge_start_workers_inside_a_parallel_job() {
	batch_need sge
	new_spool
	JOBNAME=ckpe$(( RANDOM % 1000 ))
	trap batch_cleanup EXIT
	start_spoold
	qsub -terse -N "$JOBNAME" -pe smp 2 -b y -j y -o "$T/alloc.out" -cwd -V \
	    "$BIN/spool" -S "$SPOOL" start-workers --idle-timeout 3s \
	    > "$T/qsub" || fail "qsub"
	job=$(head -1 "$T/qsub")
	wait_for 60 worker_registered "alloc-$job" ||
	    fail "no worker alloc-$job: $(cat "$T/alloc.out" 2>&1)"
	wid=$(worker_wid "alloc-$job")
	assert_eq 2 "$(sed -n 's/^cores: //p' "$SPOOL/workers/$wid/info")" "cores"
	for i in 1 2 3; do
		spool submit -- sh -c 'echo $JOB_ID' >> "$T/ids"
	done
	spool wait $(cat "$T/ids") || fail "tasks"
	for id in $(cat "$T/ids"); do
		assert_eq "$job" "$(task_stdout "$id")" "task $id ran in the job"
	done
	wait_for 60 queue_empty || fail "job still there: $(queue_jobs)"
	log_has "worker on $(hostname -s) \\(2 slots\\)" "$T/alloc.out" ||
	    fail "start-workers said: $(cat "$T/alloc.out")"
}

# A spool whose path has a space: "-o" is one argument (in double
# quotes), so qsub takes the job and its output lands in log/.
test_sge_spool_path_with_a_space() {
	batch_need sge
	batch_space_path_runs_a_job "my spool" 'NAME.oJOB'
}

# A job whose qsub answer no spoold read is found by its script and
# cancelled by a stop, though it never starts (batch.sh); an array job
# here, whose tasks are found one by one.
test_sge_job_of_an_unread_submission_is_found_by_its_script() {
	batch_need sge
	batch_spool sge
	unread_submission_is_found qsub -terse -h -t 1-2
}

# Grid Engine's qsub, against a qmaster that does not answer (stopped:
# SIGSTOP, as one too busy), waits about 120 s before it gives up
# ("unable to send message to qmaster using port 6444 ...: got send
# error"); spoold kills it at its 30 s, its answer unread, and keeps its
# script as a doubt.  The qmaster, continued, had not taken the job (by
# hand on this cluster, neither a qsub killed at 30 s nor one that gave
# up on its own left one): the listing (qstat -j NAME, which says
# "Following jobs do not exist") settles the doubt with no job and the
# script goes; the next qsub gives the pool its job, which the stop
# cancels.  The jobs are held (-h), so that no worker registers.
test_sge_qsub_killed_at_its_limit_leaves_no_job() {
	batch_need sge
	submission_fails_while_stopped sge_qmaster -h 45 \
	    "submitting a worker job failed: qsub: no answer in 30 s; killed"
	log_has "kind default: sge may have taken the job all the same: it is looked for in the queue by its script" ||
	    fail "no doubt: $(tail -3 "$T/spoold.log")"
	wait_for 40 log_has "the unconfirmed submission jobs/script\..*@default\.sh left no job in the sge queue" ||
	    fail "not settled: $(tail -5 "$T/spoold.log"; queue_jobs)"
	no_unconfirmed_scripts || fail "script left: $(ls "$SPOOL/jobs")"
	wait_for 60 log_has "submitted sge job" ||
	    fail "no job submitted after: $(tail -5 "$T/spoold.log")"
	wait_for 10 queue_count_is 1 || fail "queue: $(queue_jobs)"
	batch_shutdown
	queue_empty || fail "queue after shutdown: $(queue_jobs)"
}
