# batch.sh - helpers for the tests against real batch systems
# (t_slurm.sh, t_pbs.sh, t_sge.sh), sourced by those files.
#
# scripts/batch-check.sh brings the batch system up and runs them; a
# test whose batch system does not answer FAILS (batch_need), it never
# skips.  Each test's worker jobs carry a name of their own ($JOBNAME,
# at most 10 characters: Grid Engine's qstat shows no more), so the
# assertions about the queue see only that test's jobs, and whatever a
# failed test leaves in the queue is cancelled by name when it ends
# (spoold's own stop, when run.sh ends the test with SIGTERM, cancels
# them too).

# batch_need slurm|pbs|sge: the batch system is up here, or fail.
batch_need() {
	case $1 in
	slurm | pbs)
		sinfo -h -N -o %T 2>/dev/null | grep -Eq '^(idle|mixed|allocated)' ||
		    fail "Slurm is not running here (scripts/batch-check.sh slurm brings it up): $(sinfo 2>&1 | head -2)"
		if [ "$1" = pbs ]; then
			dpkg-query -W -f='${Status}' slurm-wlm-torque 2>/dev/null |
			    grep -q 'ok installed' ||
			    fail "Slurm's PBS wrappers (slurm-wlm-torque) are not installed"
		fi
		;;
	sge)
		[ -n "${SGE_ROOT:-}" ] || fail "SGE_ROOT is not set (scripts/batch-check.sh sge sets it)"
		qstat -f 2>/dev/null | grep -q '^all\.q@' ||
		    fail "Grid Engine is not running here (scripts/batch-check.sh sge brings it up): $(qstat -f 2>&1 | head -2)"
		;;
	*) fail "batch_need: unknown batch system $1" ;;
	esac
	BATCH=$1
}

# batch_spool BACKEND [YAML]: a spool whose cluster section runs workers
# as BACKEND jobs named $JOBNAME (1 core, 200 MB, 10 min each), the
# lines of YAML added to the cluster section.  Cancels this test's jobs
# when the test ends.
batch_spool() {
	local extra=${2:-} key
	new_spool
	JOBNAME=ck$(printf '%04d%04d' $(( $$ % 10000 )) $(( RANDOM % 10000 )))
	{
		echo "cluster:"
		echo "  backend: $1"
		echo "  name: $JOBNAME"
		# defaults, unless the extra lines set the same key
		for key in "cores: 1" "memory: 200MB" 'walltime: "00:10:00"' \
		    "poll-interval: 300ms" "scale-down-delay: 3s" \
		    "idle-timeout: 10m" "death-timeout: 30s"; do
			printf '%s\n' "$extra" | grep -q "^  ${key%%:*}:" ||
			    echo "  $key"
		done
		[ -z "$extra" ] || printf '%s\n' "$extra"
	} >> "$SPOOL/spool.yaml"
	trap batch_cleanup EXIT
	trap 'exit 1' TERM
}

batch_cleanup() {
	case $BATCH in
	slurm | pbs) scancel -n "$JOBNAME" 2>/dev/null ;;
	sge) qdel "$JOBNAME" >/dev/null 2>&1 ;;
	esac
	return 0
}

# queue_jobs: "ID STATE" for each of this test's jobs in the queue
# (array elements one per line, Slurm's _N and Grid Engine's .N forms).
queue_jobs() {
	case $BATCH in
	slurm | pbs) squeue -h -r -n "$JOBNAME" -o '%i %T' ;;
	sge)
		qstat -g d | awk -v n="$JOBNAME" '$3 == n {
			q = ($8 ~ /@/); t = (NF >= 9 + q) ? "." $(9 + q) : ""
			print $1 t, $5 }'
		;;
	esac
}

queue_count_is() {	# N
	[ "$(queue_jobs | grep -c .)" -eq "$1" ]
}

queue_empty() {
	queue_count_is 0
}

# the live workers of this spool, one WID per line
live_workers() {
	local d
	for d in "$SPOOL"/workers/*; do
		[ -d "$d" ] || continue
		[ -e "$d/exited" ] || [ -e "$d/lost" ] || basename "$d"
	done
}

live_workers_are() {	# N
	[ "$(live_workers | grep -c .)" -eq "$1" ]
}

# job record field: job_field ID KEY
job_field() {
	sed -n "s/^$2: //p" "$SPOOL/jobs/$1" 2>/dev/null | sed 's/^"\(.*\)"$/\1/'
}

job_state_is() {	# ID STATE
	[ "$(job_field "$1" state)" = "$2" ]
}

# the IDs of jobs spoold recorded in a state
jobs_in_state() {	# STATE
	local f
	for f in "$SPOOL"/jobs/*; do
		case $f in *.sh) continue ;; esac
		[ -f "$f" ] || continue
		[ "$(sed -n 's/^state: //p' "$f")" = "$1" ] && basename "$f"
	done
	return 0
}

jobs_in_state_count_is() {	# STATE N
	[ "$(jobs_in_state "$1" | grep -c .)" -eq "$2" ]
}

# a task's state is done (finished with exit 0)
task_done() {
	finished "$1" && [ "$(field "$1" state)" = done ]
}

# spoold has stopped (its process is gone)
spoold_gone() {
	not_running "$SPOOLD_PID"
}

# log_cancels CMD: the batch system's CMD (scancel, qdel) runs through
# a wrapper first on PATH that writes its arguments as a line of
# $T/cancels.
log_cancels() {
	local real
	real=$(command -v "$1") || fail "no $1 here"
	mkdir -p "$T/wrap"
	printf '#!/bin/sh\necho "$*" >> "%s/cancels"\nexec %s "$@"\n' \
	    "$T" "$real" > "$T/wrap/$1"
	chmod +x "$T/wrap/$1"
	PATH=$T/wrap:$PATH
	export PATH
}

# A stop cancels the jobs of a batch system (here two plain jobs, not
# an array) in one command, and none is left in the queue.
stop_cancels_in_one_command() {	# BACKEND CMD
	local ids
	batch_need "$1"
	batch_spool "$1" '  job-array: false'
	log_cancels "$2"
	start_spoold
	spool scale 2 2>/dev/null || fail "spool scale"
	spool wait-workers 2 --timeout 60s || fail "no 2 workers: $(spool workers)"
	wait_for 20 queue_count_is 2 || fail "queue: $(queue_jobs)"
	ids=$(queue_jobs | awk '{print $1}' | sort -n | paste -sd' ')
	batch_shutdown
	queue_empty || fail "queue after shutdown: $(queue_jobs)"
	assert_eq "$ids" "$(cat "$T/cancels")" "$2 commands"
	assert_eq 2 "$(grep -c 'cancelled job [0-9]* (stopping)' "$T/spoold.log")" \
	    "jobs said cancelled"
}

# Jobs without a worker, cancelled to scale down, go in one command
# too: three jobs of all this machine's cores, so that one runs and two
# wait in the queue; scaled to one job, the two waiting are cancelled
# in one command (newest first) and the running one is kept.  YAML:
# more lines of the cluster section (Grid Engine counts a job's cores
# only through a parallel environment).
pending_cancelled_in_one_command() {	# BACKEND CMD [YAML]
	local pending
	batch_need "$1"
	batch_spool "$1" "  job-array: false
  cores: $(nproc)${3:+
$3}"
	log_cancels "$2"
	start_spoold
	spool scale --jobs 3 2>/dev/null || fail "spool scale"
	spool wait-workers 1 --timeout 60s || fail "no worker: $(spool workers)"
	wait_for 20 pending_count_is 2 || fail "queue: $(queue_jobs)"
	pending=$(queue_pending | sort -rn | paste -sd' ')
	spool scale --jobs 1 2>/dev/null || fail "spool scale 1"
	wait_for 30 queue_count_is 1 || fail "queue: $(queue_jobs)"
	assert_eq "$pending" "$(cat "$T/cancels")" "$2 commands"
	assert_eq 2 "$(grep -c 'cancelled job [0-9]* (scaling down)' \
	    "$T/spoold.log")" "jobs said cancelled"
	batch_shutdown
}

# the IDs of this test's jobs waiting in the queue, one per line
queue_pending() {
	queue_jobs | awk '$2 == "PENDING" || $2 == "qw" { print $1 }'
}

pending_count_is() {	# N
	[ "$(queue_pending | grep -c .)" -eq "$1" ]
}

# spool shutdown (its output in $T/shutdown.out), and spoold gone
batch_shutdown() {
	spool shutdown > "$T/shutdown.out" 2>&1 ||
	    fail "shutdown: $(cat "$T/shutdown.out")"
	wait_for 10 spoold_gone || fail "spoold still running after spool shutdown"
}

# python_calls_in_a_job JOBVAR: the notebook client scales $BATCH to one
# job, maps Python calls onto its worker, gathers them and shuts the
# cluster down (tests/python/cluster_client.py batch-job; JOBVAR: the
# variable that gives a job its ID).  The jobs the results name are this
# test's, and nothing is left in the queue.
python_calls_in_a_job() {
	local py job
	py=$(cd "$(dirname "${BASH_SOURCE[0]}")/../python" && pwd)/cluster_client.py
	batch_spool "$BATCH"
	start_spoold
	python3 "$py" batch-job "$SPOOL" "$(command -v spool)" "$T" "$1" \
	    > "$T/python.out" 2>&1 < /dev/null ||
	    fail "the client: $(tail -15 "$T/python.out")"
	assert_eq 8 "$(grep -c '^ok: ' "$T/python.out")" "checks passed"
	set -- $(sed -n 's/^jobs: //p' "$T/python.out")
	[ $# -ge 1 ] || fail "no job named: $(cat "$T/python.out")"
	for job; do
		[ -f "$SPOOL/jobs/$job" ] || fail "job $job has no record of this spool"
	done
	assert_match "no worker job left" "$(sed -n 's/^shutdown: //p' "$T/python.out")" \
	    "what the shutdown said"
	wait_for 10 spoold_gone || fail "spoold still running after the shutdown"
	queue_empty || fail "queue after shutdown: $(queue_jobs)"
	no_proc "ckworker -S $SPOOL" || fail "a ckworker survived"
	note "calls ran in job(s) $*"
}

# submission_fails_while_stopped DAEMON HOLD SECONDS REGEX: a spool of
# $BATCH whose jobs are held (job-extra-directives: [HOLD], so that no
# worker registers), its controller DAEMON stopped (SIGSTOP, as one too
# busy to answer) while spoold submits the job of "spool scale 1", until
# spoold's log matches REGEX (within SECONDS), then continued.
submission_fails_while_stopped() {
	local pid ok=0
	batch_spool "$BATCH" "  job-extra-directives: [\"$2\"]"
	start_spoold
	pid=$(pgrep -x "$1") || fail "no $1"
	kill -STOP "$pid"
	spool scale 1 2>/dev/null || { kill -CONT "$pid"; fail "scale"; }
	wait_for "$3" log_has "$4" && ok=1
	kill -CONT "$pid"
	[ "$ok" = 1 ] || fail "no failure: $(tail -3 "$T/spoold.log")"
}

# no script of an unconfirmed submission is left in jobs/
no_unconfirmed_scripts() {
	! ls "$SPOOL/jobs" | grep -q '^script\.'
}

log_has() {	# REGEX [FILE]: spoold's log (or FILE) matches
	grep -Eq -- "$1" "${2:-$T/spoold.log}"
}

# batch_space_path_runs_a_job DIR LOG: the spool moved to $T/DIR (a
# path with a blank, and whatever else the batch system must carry),
# one worker job run: its directives' output paths are one argument
# each, so the batch system takes the job, and its worker's output is
# in log/LOG (NAME in LOG is $JOBNAME, JOB the job's ID); then a clean
# stop.
batch_space_path_runs_a_job() {
	local job log
	batch_spool "$BATCH"
	mv "$SPOOL" "$T/$1"
	SPOOL="$T/$1"
	export SPOOL
	start_spoold
	spool scale 1 2>/dev/null || fail "spool scale"
	spool wait-workers 1 --timeout 60s ||
	    fail "no worker: $(spool workers; tail -3 "$T/spoold.log")"
	job=$(queue_jobs | awk '{print $1}')
	log=${2//NAME/$JOBNAME}
	log=${log//JOB/$job}
	wait_for 10 grep -q "registered as default@$job" "$SPOOL/log/$log" ||
	    fail "no worker output in log/: $(ls "$SPOOL/log")"
	spool shutdown > "$T/shutdown.out" 2>&1 ||
	    fail "shutdown: $(cat "$T/shutdown.out")"
	queue_empty || fail "queue after shutdown: $(queue_jobs)"
}

# unread_submission_is_found SUBMIT...: a job submitted by hand (SUBMIT
# then the script's path; held, so that it never starts and no worker
# of it registers) from a script named as spoold names one,
# SPOOL/jobs/script.TMP@KIND.sh, as a submission whose answer no spoold
# read leaves it (the command killed at its 30 s, or spoold killed
# while it ran): the spoold started then finds each of its jobs (an
# array's elements) by that script, records them, keeps the script as
# BASE.sh, and "spool shutdown" cancels them.
unread_submission_is_found() {
	local name=script.byhand.1@default.sh ids id base
	mkdir -p "$SPOOL/jobs" "$T/log"
	spool job-script > "$SPOOL/jobs/$name" || fail "job-script"
	(cd "$T/log" && "$@" "$SPOOL/jobs/$name") > "$T/submitted" ||
	    fail "$1: $(cat "$T/submitted")"
	wait_for 10 queue_count_is 2 || fail "queue: $(queue_jobs)"
	ids=$(queue_jobs | awk '{print $1}' | sort | paste -sd' ')
	start_spoold
	wait_for 30 log_has "left 2 jobs in the $BATCH queue: $ids; recorded" ||
	    fail "not found ($ids): $(tail -5 "$T/spoold.log")"
	for id in $ids; do
		assert_eq default "$(job_field "$id" kind)" "$id's record: kind"
	done
	base=${ids%% *}
	base=${base%%[._]*}
	[ -e "$SPOOL/jobs/$base.sh" ] || fail "the script not kept as $base.sh"
	[ ! -e "$SPOOL/jobs/$name" ] || fail "the script left as $name"
	batch_shutdown
	queue_empty || fail "queue after shutdown: $(queue_jobs)"
	for id in $ids; do
		log_has "cancelled job $id \\(stopping\\)" ||
		    fail "$id not said cancelled: $(grep -F "$id" "$T/spoold.log")"
	done
}
