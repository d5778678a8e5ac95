# t_scale.sh - scaling, job records, clean stops and "spool
# start-workers", with the local backend (spoold's "jobs" are detached
# processes running the same job script): no batch system needed, so
# these also run with inotify off and under the sanitizers.  The same
# paths against real batch systems: t_slurm.sh, t_sge.sh, t_pbs.sh.

local_spool() {	# [YAML lines for the cluster section]
	local extra=${1:-} key
	new_spool
	{
		echo "cluster:"
		echo "  backend: local"
		echo "  name: loc"
		for key in "cores: 1" "poll-interval: 200ms" \
		    "scale-down-delay: 2s" "idle-timeout: 10m"; do
			printf '%s\n' "$extra" | grep -q "^  ${key%%:*}:" ||
			    echo "  $key"
		done
		[ -z "$extra" ] || printf '%s\n' "$extra"
	} >> "$SPOOL/spool.yaml"
}

live_count_is() {	# N: live workers of this spool
	local d n=0
	for d in "$SPOOL"/workers/*; do
		[ -d "$d" ] || continue
		[ -e "$d/exited" ] || [ -e "$d/lost" ] || n=$((n + 1))
	done
	[ "$n" -eq "$1" ]
}

records_in_state() {	# STATE: how many job records are in it
	grep -lx "state: $1" "$SPOOL"/jobs/* 2>/dev/null | grep -vc '\.sh$'
}

records_in_state_are() {	# STATE N
	[ "$(records_in_state "$1")" -eq "$2" ]
}

test_local_backend_scale_run_adapt_and_shutdown() {
	local_spool
	start_spoold
	spool scale 2 2>"$T/err" || fail "scale"
	assert_match "kind default: 2 jobs \\(local backend" "$(cat "$T/err")"
	spool wait-workers 2 --timeout 30s || fail "workers: $(spool workers)"
	wait_for 10 records_in_state_are running 2 ||
	    fail "records: $(cat "$SPOOL"/jobs/local.*)"
	job=$(ls "$SPOOL/jobs" | grep -v '\.sh$' | head -1)
	[ -x "$SPOOL/jobs/$job.sh" ] || fail "script of $job not kept"
	grep -q "^exec .*ckworker -S $SPOOL --name default@\"\$job\"" \
	    "$SPOOL/jobs/$job.sh" || fail "script: $(cat "$SPOOL/jobs/$job.sh")"
	worker_registered "default@$job" || fail "no worker default@$job"
	seq 50 | spool map -- echo {} > "$T/ids" || fail "map"
	spool wait $(cat "$T/ids") || fail "tasks"
	# the worker's output is in the log directory, under the job's name
	grep -q "registered as default@$job" "$SPOOL/log/loc-$job.log" ||
	    fail "log: $(ls "$SPOOL/log")"
	spool workers > "$T/workers"
	assert_match "$job +default +local +running" "$(cat "$T/workers")" \
	    "spool workers lists the job"
	# adapt: nothing queued, so down to the minimum after the delay
	spool adapt --minimum 0 --maximum 3 2>/dev/null || fail "adapt"
	wait_for 30 live_count_is 0 || fail "adapt down: $(spool workers)"
	wait_for 10 records_in_state_are gone 2 || fail "records"
	grep -q "cancelled job $job (drained)" "$T/spoold.log" || fail "no drain"
	# a backlog of 3 one-core tasks brings 3 jobs (the maximum); they
	# run until told, so the backlog stays until the 3 are up (tasks
	# that ended first would leave nothing to scale for)
	for i in 1 2 3; do
		spool submit -- sh -c 'while [ ! -e "$1" ]; do sleep 0.1; done' \
		    _ "$T/go" >> "$T/more"
	done
	wait_for 30 live_count_is 3 || fail "adapt up: $(spool workers)"
	touch "$T/go"
	spool wait $(cat "$T/more") || fail "backlog"
	spool shutdown > "$T/out" 2>&1 || fail "shutdown: $(cat "$T/out")"
	assert_match "spoold stopped; no worker job left" "$(cat "$T/out")"
	wait_for 10 not_running "$SPOOLD_PID" || fail "spoold still running"
	no_proc "ckworker -S $SPOOL" || fail "a worker survived"
	records_in_state_are running 0 || fail "records say running"
	[ -z "$(ls "$SPOOL/scale")" ] || fail "sizes left"
}

# A kind's limit methods go on its job's ckworker line, and win over
# the worker: section every worker reads: here the kind says
# memory-limit none and the section watchdog, and the task of the job's
# worker ran with none, which its worker said at its start.
test_a_kinds_limit_methods_are_given_to_its_workers() {
	local a job
	local_spool "  memory-limit: none"
	printf 'worker:\n  memory-limit: watchdog\n' >> "$SPOOL/spool.yaml"
	start_spoold
	spool scale --jobs 1 2>/dev/null || fail "scale"
	spool wait-workers 1 --timeout 30s || fail "workers: $(spool workers)"
	job=$(ls "$SPOOL/jobs" | grep -v '\.sh$' | head -1)
	grep -q -- "--memory-limit none" "$SPOOL/jobs/$job.sh" ||
	    fail "script: $(grep '^exec' "$SPOOL/jobs/$job.sh")"
	a=$(spool submit -- true) || fail "submit"
	spool wait "$a" || fail "task $a"
	assert_eq none "$(field "$a" memory_method)" "the task's memory method"
	assert_match "memory limits are not enforced \(--memory-limit none\)" \
	    "$(cat "$SPOOL/log/loc-$job.log")" "the worker's warning"
	spool shutdown > "$T/out" 2>&1 || fail "shutdown: $(cat "$T/out")"
	wait_for 10 not_running "$SPOOLD_PID" || fail "spoold still running"
}

# SIGHUP: spoold reads spool.yaml again, all or nothing (spoold(8),
# "Reloading spool.yaml").  A kind's cores changed are taken: the next
# job's script asks for them and its worker has them.  A file that does
# not parse, one writable by its group, and one that changes the
# heartbeat too (the workers' and the lease's: a restart's) are not:
# spoold says why, and the job after them is still made with 2 cores.
test_sighup_reloads_spool_yaml_all_or_nothing() {
	local job job2 good=$T/good.yaml
	local_spool
	start_spoold
	sed -i 's/^  cores: 1$/  cores: 2/' "$SPOOL/spool.yaml"
	cp "$SPOOL/spool.yaml" "$good"
	kill -HUP "$SPOOLD_PID"
	wait_for 10 grep -q "reload: .*/spool.yaml read: kind default changed, in force from now on" \
	    "$T/spoold.log" || fail "not reloaded: $(tail -3 "$T/spoold.log")"
	spool scale --jobs 1 2>/dev/null || fail "scale"
	spool wait-workers 1 --timeout 30s || fail "workers: $(spool workers)"
	job=$(ls "$SPOOL/jobs" | grep -v '\.sh$')
	grep -q -- "--cores 2\b" "$SPOOL/jobs/$job.sh" ||
	    fail "script: $(grep '^exec' "$SPOOL/jobs/$job.sh")"
	wait_for 10 grep -q "registered as default@$job-[0-9a-f]*: 2 cores" \
	    "$SPOOL/log/loc-$job.log" || fail "worker: $(cat "$SPOOL/log/loc-$job.log")"
	# the same file again: nothing changed
	kill -HUP "$SPOOLD_PID"
	wait_for 10 grep -q "reload: .*/spool.yaml read: nothing changed" \
	    "$T/spoold.log" || fail "not read again: $(tail -3 "$T/spoold.log")"
	# a file that does not parse
	sed -i 's/^  cores: 2$/  cores: [3/' "$SPOOL/spool.yaml"
	kill -HUP "$SPOOLD_PID"
	wait_for 10 grep -q "reload: spool.yaml: line [0-9]*, column [0-9]*: .*: the configuration in force stays" \
	    "$T/spoold.log" || fail "no refusal: $(tail -3 "$T/spoold.log")"
	# a file its group may write
	sed 's/^  cores: 2$/  cores: 3/' "$good" > "$SPOOL/spool.yaml"
	chmod g+w "$SPOOL/spool.yaml"
	kill -HUP "$SPOOLD_PID"
	wait_for 10 grep -q "reload: .*/spool.yaml: writable by others than the spool's owner (chmod go-w): the configuration in force stays" \
	    "$T/spoold.log" || fail "no refusal: $(tail -3 "$T/spoold.log")"
	# the heartbeat with the cores: neither
	chmod g-w "$SPOOL/spool.yaml"
	sed -i 's/^  heartbeat: .*/  heartbeat: 300ms/' "$SPOOL/spool.yaml"
	kill -HUP "$SPOOLD_PID"
	wait_for 10 grep -q "reload: .*/spool.yaml changes daemon: heartbeat, which only a restart of spoold applies: nothing of it taken" \
	    "$T/spoold.log" || fail "no refusal: $(tail -3 "$T/spoold.log")"
	spool scale --jobs 2 2>/dev/null || fail "scale 2"
	spool wait-workers 2 --timeout 30s || fail "workers: $(spool workers)"
	job2=$(ls "$SPOOL/jobs" | grep -v '\.sh$' | grep -vx "$job")
	grep -q -- "--cores 2\b" "$SPOOL/jobs/$job2.sh" ||
	    fail "script: $(grep '^exec' "$SPOOL/jobs/$job2.sh")"
	not_running "$SPOOLD_PID" && fail "spoold ended"
	assert_eq 0 "$(grep -c 'fatal' "$T/spoold.log")" "fatal errors"
}

# "spool job-script" is cluster.job_script(): byte for byte the script
# spoold then submits (kept as jobs/ID.sh), with a prologue, env, a
# local directory and a walltime in it.
test_job_script_is_byte_identical_to_the_submitted_script() {
	local_spool "  walltime: \"01:00:00\"
  processes: 1
  job-script-prologue: [\"echo prologue ran\"]
  env: {CK_TEST_VAR: \"a b\"}
  local-directory: $T/tmp"
	spool job-script > "$T/shown" || fail "job-script"
	start_spoold
	spool scale --jobs 1 2>/dev/null || fail "scale"
	wait_for 30 records_in_state_are running 1 ||
	    fail "records: $(cat "$SPOOL"/jobs/* 2>/dev/null)"
	job=$(ls "$SPOOL/jobs" | grep -v '\.sh$' | head -1)
	cmp "$T/shown" "$SPOOL/jobs/$job.sh" ||
	    fail "job-script differs from jobs/$job.sh: $(diff "$T/shown" "$SPOOL/jobs/$job.sh")"
	grep -q '^echo prologue ran$' "$T/shown" || fail "no prologue in it"
	# and that script is what ran: its worker registered, the prologue
	# wrote to the job's log.  A local job's record says running once
	# its process is alive, before its worker registers (slow under
	# the sanitizers): wait for the worker.
	wait_for 30 worker_registered "default@$job" ||
	    fail "no worker default@$job: $(cat "$SPOOL/log/loc-$job.log")"
	grep -q "^prologue ran$" "$SPOOL/log/loc-$job.log" ||
	    fail "log: $(cat "$SPOOL/log/loc-$job.log")"
	spool shutdown > "$T/out" 2>&1 || fail "shutdown: $(cat "$T/out")"
}

test_sigterm_to_spoold_ends_every_job_it_started() {
	local_spool
	start_spoold
	spool scale --jobs 3 2>/dev/null
	spool wait-workers 3 --timeout 30s || fail "workers"
	id=$(spool submit -- sleep 611) || fail "submit"
	wait_for 10 state_is "$id" running || fail "not running"
	kill -TERM "$SPOOLD_PID"
	wait_for 30 not_running "$SPOOLD_PID" || fail "spoold did not stop"
	no_proc "ckworker -S $SPOOL" || fail "a worker survived"
	no_proc "sleep 611" || fail "the task survived: $(pgrep -af "sleep 611")"
	grep -c "cancelled job local\\.[0-9]* (stopping)" "$T/spoold.log" |
	    grep -qx 3 || fail "not 3 cancels: $(cat "$T/spoold.log")"
	# the size stays: a restarted spoold scales up again, and the task
	# handed back runs again
	start_spoold
	spool wait-workers 3 --timeout 30s || fail "no restart of the pool"
	wait_for 10 state_is "$id" running || fail "task not running again"
	spool cancel "$id" 2>/dev/null
	spool shutdown >/dev/null 2>&1 || fail "shutdown"
}

# A local job whose process has ended is not said to be cancelled:
# jobs_cancel logged "cancelled job local.N" whether it signalled
# anything or not.  spoold is held stopped while the job's process is
# killed (it stays a zombie, unreaped), then told to stop: the poll
# that would see the job gone is 10 min away, so the stop's cancel is
# what finds it ended.
test_a_local_job_that_had_ended_is_not_said_cancelled() {
	local job
	local_spool "  poll-interval: 10m"
	start_spoold
	spool scale --jobs 1 2>/dev/null || fail "scale"
	spool wait-workers 1 --timeout 30s >/dev/null || fail "no worker"
	job=$(ls "$SPOOL/jobs" | grep -v '\.sh$' | head -1)
	assert_match "^local\.[0-9]+$" "$job" "the job"
	wait_for 10 records_in_state_are running 1 ||
	    fail "job $job not running: $(cat "$SPOOL/jobs/$job")"
	kill -STOP "$SPOOLD_PID"
	kill -KILL "${job#local.}"
	wait_for 10 sh -c "awk '{ print \$3 }' /proc/${job#local.}/stat | grep -qx Z" ||
	    fail "job $job's process is not a zombie"
	kill -TERM "$SPOOLD_PID"
	kill -CONT "$SPOOLD_PID"
	wait_for 30 not_running "$SPOOLD_PID" || fail "spoold did not stop"
	assert_match "kind default: job $job had already ended: nothing to cancel \(stopping\)" \
	    "$(cat "$T/spoold.log")" "spoold's log"
	assert_no_match "cancelled job $job" "$(cat "$T/spoold.log")" \
	    "spoold's log"
}

test_failed_jobs_say_why_back_off_and_stop() {
	local gaps
	local_spool '  max-submit-failures: 4
  job-script-prologue: ["echo no such module: bogus >&2", "exit 3"]'
	start_spoold
	spool scale 1 2>/dev/null
	wait_for 30 records_in_state_are failed 4 || fail "failed jobs: $(ls "$SPOOL/jobs")"
	wait_for 10 grep -q "4 worker jobs failed in a row" "$T/spoold.log" ||
	    fail "no stop"
	spool workers > "$T/workers"
	assert_match "failed .* it left the queue before its worker registered; its output ends: no such module: bogus" \
	    "$(cat "$T/workers")" "why"
	# bounded: the limit reached, nothing more was submitted
	assert_eq 4 "$(grep -c "submitted local job" "$T/spoold.log")" \
	    "submissions"
	records_in_state_are failed 4 || fail "more than 4"
	# the delay after a failure doubles from poll-interval (200 ms): the
	# submission after the second failure comes 400 ms after the one
	# before, the next 800 ms after that.  A record's time is taken
	# after its submission command returns, so each gap may be shorter
	# by what one submission took: the bounds are 0.3 and 0.6 s, and
	# the second gap longer than the first by 0.15 s (without a backoff
	# each gap is the time a job takes to fail, under 0.1 s here)
	gaps=$(grep -h '^submitted: ' "$SPOOL"/jobs/* | awk '{ print $2 }' |
	    sort -n | awk 'NR > 1 { printf "%.3f ", $1 - prev } { prev = $1 }')
	echo "gaps between submissions (s): $gaps" >> "$T/report"
	set -- $gaps
	[ $# -eq 3 ] || fail "submission times: $gaps"
	awk -v a="$2" -v b="$3" \
	    'BEGIN { exit !(a >= 0.3 && b >= 0.6 && b >= a + 0.15) }' ||
	    fail "no doubling backoff between submissions: gaps $gaps"
}

test_worker_environment_with_and_without_export() {
	local_spool '  env: {CK_CONF: "x y", PYTHONPATH: /opt/lib}
  kinds:
    exp: {export-env: true}
    noexp: {export-env: false}'
	CK_SPOOLD_ENV=passed
	export CK_SPOOLD_ENV
	start_spoold
	unset CK_SPOOLD_ENV
	spool scale 1 --kind exp 2>/dev/null
	spool wait-workers 1 --kind exp --timeout 30s || fail "exp"
	id=$(spool submit -- sh -c 'echo "[$CK_CONF] [$PYTHONPATH] [$CK_SPOOLD_ENV]"')
	spool wait "$id" || fail "task"
	assert_eq "[x y] [/opt/lib] [passed]" "$(task_stdout "$id")" "export-env true"
	spool scale 0 --kind exp 2>/dev/null
	wait_for 30 live_count_is 0 || fail "exp worker stayed"
	spool scale 1 --kind noexp 2>/dev/null
	spool wait-workers 1 --kind noexp --timeout 30s || fail "noexp"
	id=$(spool submit -- sh -c 'echo "[$CK_CONF] [$CK_SPOOLD_ENV] [$HOME]"')
	spool wait "$id" || fail "task"
	assert_match "^\\[x y\\] \\[\\] \\[/" "$(task_stdout "$id")" "export-env false"
	spool shutdown >/dev/null 2>&1 || fail "shutdown"
}

# Without a spoold, "spool shutdown" leaves no request in control/: one
# nobody reads would stop the next spoold at its start (here that one
# goes on and takes a task in).  With no job record it exits 0, only
# telling the mounts.  (Before 2026-12-06 it refused, exit 1.)
test_shutdown_without_spoold_leaves_no_request() {
	local_spool
	spool shutdown 2>"$T/err" || fail "shutdown without spoold: $(cat "$T/err")"
	assert_match "spoold is not running on .*: no worker job cancelled" \
	    "$(cat "$T/err")"
	dir_empty "$SPOOL/control" || fail "a request was left: $(ls "$SPOOL/control")"
	start_spoold
	id=$(spool submit true) || fail "submit"
	wait_for 20 state_is "$id" queued || fail "not taken in: $(spool status "$id")"
	kill -0 "$SPOOLD_PID" || fail "spoold stopped at its start"
	spool shutdown --no-wait 2>"$T/err" || fail "shutdown --no-wait"
	wait_for 20 not_running "$SPOOLD_PID" || fail "spoold did not stop"
}

test_start_workers_commands_for_an_allocation() {
	new_spool
	if spool start-workers 2>"$T/err"; then fail "ran outside an allocation"; fi
	assert_match "not inside a Slurm allocation" "$(cat "$T/err")"
	# Slurm: srun, one task per node, the smallest CPU count per node
	env SLURM_JOB_ID=42 SLURM_JOB_NUM_NODES=3 \
	    SLURM_JOB_CPUS_PER_NODE='16(x2),8' SLURM_MEM_PER_NODE=4000 \
	    CKWORKER=/opt/ck/ckworker spool start-workers --dry-run \
	    --idle-timeout 30s -- --grace 5s > "$T/srun" 2>/dev/null ||
	    fail "dry run"
	assert_match "^srun --nodes=3 --ntasks-per-node=1 --cpus-per-task=8 --kill-on-bad-exit=0 /opt/ck/ckworker -S $SPOOL --name alloc-42 --cores 8 --memory 4000M --idle-timeout 30s --grace 5s$" \
	    "$(cat "$T/srun")" "srun line"
	# Grid Engine: this host directly, others through qrsh -inherit
	printf '%s 4 all.q@%s UNDEFINED\nother7 2 all.q@other7 UNDEFINED\n' \
	    "$(hostname -s)" "$(hostname -s)" > "$T/pe_hostfile"
	env -u SLURM_JOB_ID JOB_ID=77 PE_HOSTFILE="$T/pe_hostfile" \
	    CKWORKER=/opt/ck/ckworker spool start-workers --dry-run > "$T/sge"
	assert_eq "/opt/ck/ckworker -S $SPOOL --name alloc-77 --cores 4" \
	    "$(sed -n 1p "$T/sge")" "this host"
	assert_eq "qrsh -inherit -nostdin other7 /opt/ck/ckworker -S $SPOOL --name alloc-77 --cores 2" \
	    "$(sed -n 2p "$T/sge")" "the other host"
}

# A Grid Engine host file that lists no host is refused by a dry run as
# by a real one (exit 2, saying so), not answered with nothing and 0.
test_start_workers_dry_run_of_an_empty_hostfile() {
	local rc dry
	new_spool
	: > "$T/pe_hostfile"
	for dry in "" --dry-run; do
		rc=0
		env -u SLURM_JOB_ID JOB_ID=77 PE_HOSTFILE="$T/pe_hostfile" \
		    CKWORKER=/opt/ck/ckworker spool start-workers $dry \
		    > "$T/out" 2> "$T/err" || rc=$?
		assert_eq 2 $rc "exit status of start-workers $dry"
		assert_eq "spool: fatal: $T/pe_hostfile lists no host" \
		    "$(cat "$T/err")" "start-workers $dry"
		assert_eq "" "$(cat "$T/out")" "start-workers $dry: output"
	done
}

# "spool scale N" and "spool wait-workers N" count dask's way: a job of
# a kind with processes P is P workers; --jobs counts jobs.
test_scale_and_wait_workers_count_processes() {
	local_spool '  cores: 2
  processes: 2'
	start_spoold
	spool scale 4 2>"$T/err" || fail "scale"
	assert_match "kind default: 2 jobs" "$(cat "$T/err")"
	spool wait-workers 4 --timeout 30s 2>"$T/err" || fail "4 workers"
	assert_match "4 workers up" "$(cat "$T/err")"
	if spool wait-workers 3 --jobs --timeout 1s 2>"$T/err"; then
		fail "2 jobs counted as 3"
	fi
	assert_match "timed out with 2 of 3" "$(cat "$T/err")"
	wid=$(ls "$SPOOL/workers" | head -1)
	assert_eq 2 "$(sed -n 's/^slots: //p' "$SPOOL/workers/$wid/info")" \
	    "task slots (--processes)"
	spool shutdown >/dev/null 2>&1 || fail "shutdown"
}

live_of_kind_is() {	# KIND N: live workers of that kind
	local d n=0
	for d in "$SPOOL"/workers/"$1"@*; do
		[ -d "$d" ] || continue
		[ -e "$d/exited" ] || [ -e "$d/lost" ] || n=$((n + 1))
	done
	[ "$n" -eq "$2" ]
}

records_of_kind() {	# KIND: how many job records name it
	grep -lx "kind: $1" "$SPOOL"/jobs/* 2>/dev/null | grep -vc '\.sh$'
}

# Two pools adapted independently, from the shapes of the queued tasks:
# two GPU tasks ask for two jobs of the GPU pool (the CPU pool cannot
# run them), a CPU task for one job of the CPU pool (the GPU pool could
# run it, but CPU work goes to kinds without GPUs first); each pool
# drains back to its own minimum.  The tasks are queued before adapt,
# so the first pass sees all three.  The GPU workers have no driver:
# --gpus 1 hands out index 0.
test_adapt_gpu_backlog_asks_for_gpu_workers() {
	local g1 g2 c t
	# the GPU pool first: CPU work must not simply take the first kind
	local_spool '  kinds:
    gpu: {gpus: 1}
    cpu: {}'
	start_spoold
	job='echo "[$CUDA_VISIBLE_DEVICES]" > "$0.$SPOOL_TASK_ID"; while [ ! -e "$0.stop" ]; do sleep 0.05; done'
	g1=$(spool submit --gpus 1 -- sh -c "$job" "$T/t") || fail "submit"
	g2=$(spool submit --gpus 1 -- sh -c "$job" "$T/t") || fail "submit"
	c=$(spool submit -- sh -c "$job" "$T/t") || fail "submit"
	wait_for 10 summary_is queued 3 || fail "not queued: $(cat "$SPOOL/state/summary")"
	spool adapt --minimum 0 --maximum 2 --kind cpu 2>/dev/null ||
	    fail "adapt cpu"
	spool adapt --minimum 0 --maximum 3 --kind gpu 2>/dev/null ||
	    fail "adapt gpu"
	wait_for 30 live_of_kind_is gpu 2 || fail "GPU workers: $(spool workers)"
	wait_for 30 live_of_kind_is cpu 1 || fail "CPU workers: $(spool workers)"
	assert_eq 2 "$(records_of_kind gpu)" "GPU jobs for 2 GPU tasks"
	assert_eq 1 "$(records_of_kind cpu)" "CPU jobs for 1 CPU task"
	touch "$T/t.stop"
	spool wait "$g1" "$g2" "$c" || fail "tasks"
	for t in "$g1" "$g2"; do
		assert_match "^gpu@local\\.[0-9]+-" "$(field "$t" worker)" \
		    "GPU task $t's worker"
		assert_eq 0 "$(field "$t" gpu_ids)" "GPU task $t's gpu_ids"
		assert_eq "[0]" "$(cat "$T/t.$t")" "GPU task $t's CUDA_VISIBLE_DEVICES"
	done
	assert_eq "[]" "$(cat "$T/t.$c")" "a CPU task sees no GPU"
	# the backlog gone, each pool drains to its minimum by itself
	wait_for 30 live_of_kind_is gpu 0 || fail "GPU pool stayed: $(spool workers)"
	wait_for 30 live_of_kind_is cpu 0 || fail "CPU pool stayed: $(spool workers)"
	assert_eq 2 "$(records_of_kind gpu)" "GPU jobs in all"
	assert_eq 1 "$(records_of_kind cpu)" "CPU jobs in all"
	spool shutdown >/dev/null 2>&1 || fail "shutdown"
	no_proc "ckworker -S $SPOOL" || fail "a worker survived"
}

# An adaptive pool is sized by each resource its jobs offer, not by
# cores alone: two one-core tasks that each need the only GPU of a
# two-core job ask for two jobs, and so do two that each need 1500 MB
# of a two-core job's 2 GB.  All four then run at once.
test_adapt_sizes_pools_by_gpus_and_memory_too() {
	local g1 g2 m1 m2 t
	local_spool '  kinds:
    gpu: {cores: 2, gpus: 1}
    big: {cores: 2, memory: 2G}'
	start_spoold
	job='touch "$0.$SPOOL_TASK_ID"; while [ ! -e "$0.stop" ]; do sleep 0.05; done'
	g1=$(spool submit --gpus 1 -- sh -c "$job" "$T/t") || fail "submit"
	g2=$(spool submit --gpus 1 -- sh -c "$job" "$T/t") || fail "submit"
	m1=$(spool submit --memory 1500M -- sh -c "$job" "$T/t") || fail "submit"
	m2=$(spool submit --memory 1500M -- sh -c "$job" "$T/t") || fail "submit"
	wait_for 10 summary_is queued 4 || fail "not queued: $(cat "$SPOOL/state/summary")"
	# big first: while gpu is the only adaptive kind, the memory tasks
	# count for it (it can run them)
	spool adapt --minimum 0 --maximum 4 --kind big 2>/dev/null ||
	    fail "adapt big"
	spool adapt --minimum 0 --maximum 4 --kind gpu 2>/dev/null ||
	    fail "adapt gpu"
	for t in "$g1" "$g2" "$m1" "$m2"; do
		wait_for 30 test -e "$T/t.$t" ||
		    fail "task $t did not start: $(spool status "$t"); $(spool workers)"
	done
	assert_eq 2 "$(records_of_kind gpu)" "jobs for 2 tasks that need a GPU each"
	assert_eq 2 "$(records_of_kind big)" "jobs for 2 tasks that need 1500 MB each"
	# and spoold says which resource sized each pool
	grep -q 'kind gpu: adaptive: wants 2 jobs: queued and running work needs 2 by GPUs (2 cores, 2 GPUs, 0 MiB asked; a job has 2, 1, 0), bounds 0-4$' "$T/spoold.log" ||
	    fail "no log of the GPU pool's want: $(grep adaptive: "$T/spoold.log")"
	grep -q 'kind big: adaptive: wants 2 jobs: queued and running work needs 2 by memory (2 cores, 0 GPUs, 3000 MiB asked; a job has 2, 0, 2048), bounds 0-4$' "$T/spoold.log" ||
	    fail "no log of the memory pool's want: $(grep adaptive: "$T/spoold.log")"
	touch "$T/t.stop"
	spool wait "$g1" "$g2" "$m1" "$m2" || fail "tasks"
	[ "$(field "$g1" worker)" != "$(field "$g2" worker)" ] ||
	    fail "both GPU tasks on one worker"
	[ "$(field "$m1" worker)" != "$(field "$m2" worker)" ] ||
	    fail "both memory tasks on one worker"
	spool shutdown >/dev/null 2>&1 || fail "shutdown"
	no_proc "ckworker -S $SPOOL" || fail "a worker survived"
}

# A task bigger than every adaptive kind asks for no job: it is counted
# as unfit and said once (spoold's log), while work that fits runs; once
# it is cancelled the count is back to 0.
test_adapt_says_of_a_task_no_kind_can_run() {
	local big a
	local_spool
	start_spoold
	spool adapt --minimum 0 --maximum 1 2>/dev/null || fail "adapt"
	big=$(spool submit --cores 4 -- echo big) || fail "submit"
	a=$(spool submit -- echo fits) || fail "submit"
	spool wait "$a" || fail "the task that fits did not run"
	wait_for 10 summary_is unfit 1 || fail "unfit: $(summary_field unfit)"
	assert_eq queued "$(state_of "$big")"
	assert_eq 1 "$(grep -c 'warning: no worker can run 1 queued task, registered or on its way, nor a kind with a size asked: one asks 4 cores, 0 GPUs, memory -, walltime -' \
	    "$T/spoold.log")" "warnings"
	assert_match "^$big +- +queued +0 +- +- +unfit " \
	    "$(spool status "$big" | tail -n 1)" "spool status"
	spool cancel "$big" 2>/dev/null || fail "cancel"
	wait_for 10 summary_is unfit 0 || fail "unfit: $(summary_field unfit)"
	assert_match "recovered: queued tasks that fit no worker" \
	    "$(cat "$T/spoold.log")" "spoold's log"
	spool shutdown >/dev/null 2>&1 || fail "shutdown"
}

# A kind of "memory: 4GB" (dask's decimal unit: not a whole MiB) is
# the kind for a task asking "--memory 4GB": its job is granted 3815 MiB
# (the memory rounded up), so adapt asks for a job, and the task runs
# on its worker.
test_adapt_runs_a_task_asking_all_of_a_kinds_memory_in_gb() {
	local a
	local_spool '  memory: 4GB'
	start_spoold
	a=$(spool submit --memory 4GB -- echo fits) || fail "submit"
	wait_for 10 taken_in "$a" || fail "not taken in: $(state_of "$a")"
	spool adapt --minimum 0 --maximum 1 2>/dev/null || fail "adapt"
	wait_for 30 finished "$a" ||
	    fail "task $a did not run: $(spool status "$a"); $(grep -E 'adaptive|no worker can run' "$T/spoold.log")"
	assert_eq done "$(state_of "$a")"
	assert_no_match "no worker can run" "$(cat "$T/spoold.log")"
	grep -q 'kind default: adaptive: wants 1 job: queued and running work needs 1 by cores (1 core, 0 GPUs, 3815 MiB asked; a job has 1, 0, 3815), bounds 0-1$' "$T/spoold.log" ||
	    fail "no log of the want: $(grep adaptive: "$T/spoold.log")"
	spool shutdown >/dev/null 2>&1 || fail "shutdown"
	no_proc "ckworker -S $SPOOL" || fail "a worker survived"
}

# Two tasks of "--memory 8GB" fit together in one job of a kind of
# "memory: 16GB": its worker has 15259 MiB (16 GB rounded up), and the
# tasks 16e9 bytes.  Each rounded up to a MiB on its own (7630) they
# were 15260 MiB, one more than a job has: adapt asked for a second
# job, which found nothing to do.
test_adapt_sums_task_memory_exactly() {
	local a b
	local_spool '  cores: 2
  processes: 2
  memory: 16GB'
	start_spoold
	a=$(spool submit --memory 8GB -- sh -c 'touch "$0.$SPOOL_TASK_ID"; while [ ! -e "$0.stop" ]; do sleep 0.05; done' "$T/t") ||
	    fail "submit"
	b=$(spool submit --memory 8GB -- sh -c 'touch "$0.$SPOOL_TASK_ID"; while [ ! -e "$0.stop" ]; do sleep 0.05; done' "$T/t") ||
	    fail "submit"
	wait_for 10 summary_is queued 2 || fail "not queued: $(cat "$SPOOL/state/summary")"
	spool adapt --minimum 0 --maximum 4 2>/dev/null || fail "adapt"
	wait_for 30 test -e "$T/t.$a" || fail "task $a did not start: $(spool workers)"
	wait_for 30 test -e "$T/t.$b" || fail "task $b did not start: $(spool workers)"
	grep -q 'kind default: adaptive: wants 1 job: queued and running work needs 1 by .* (2 cores, 0 GPUs, 15259 MiB asked; a job has 2, 0, 15259), bounds 0-2$' "$T/spoold.log" ||
	    fail "no want of 1 job: $(grep adaptive: "$T/spoold.log")"
	assert_no_match "wants 2 jobs" "$(cat "$T/spoold.log")" "spoold's log"
	assert_eq 1 "$(records_of_kind default)" "jobs for two 8GB tasks"
	touch "$T/t.stop"
	spool wait "$a" "$b" || fail "tasks"
	assert_eq "$(field "$a" worker)" "$(field "$b" worker)" "the tasks' workers"
	spool shutdown >/dev/null 2>&1 || fail "shutdown"
	no_proc "ckworker -S $SPOOL" || fail "a worker survived"
}

# A kind of processes P has P task slots a job, each task getting at
# least cores/P cores: four one-core tasks on jobs of 4 cores and 2
# processes need 2 jobs (by slots), not the 1 their cores add up to.
test_adapt_counts_the_slots_of_a_kind_with_processes() {
	local i
	local_spool '  cores: 4
  processes: 2'
	start_spoold
	for i in 1 2 3 4; do
		spool submit -- sh -c 'while [ ! -e "$0" ]; do sleep 0.05; done' \
		    "$T/stop" >> "$T/ids" || fail "submit"
	done
	wait_for 10 summary_is queued 4 || fail "not queued: $(cat "$SPOOL/state/summary")"
	spool adapt --minimum 0 --maximum 4 2>/dev/null || fail "adapt"
	wait_for 15 grep -q 'kind default: adaptive: wants 2 jobs: queued and running work needs 2 by slots' "$T/spoold.log" ||
	    fail "no want of 2 jobs by slots: $(grep adaptive: "$T/spoold.log")"
	wait_for 30 live_count_is 2 || fail "workers: $(spool workers)"
	touch "$T/stop"
	spool wait $(cat "$T/ids") || fail "tasks"
	spool shutdown >/dev/null 2>&1 || fail "shutdown"
	no_proc "ckworker -S $SPOOL" || fail "a worker survived"
}

# adapt_stuck_start YAML: a spool with the cluster lines YAML, whose
# kind gpu is adaptive (0 to 2 jobs) and whose first worker runs a GPU
# task that leaves a process SIGKILL cannot end (lib.sh stuck_setup);
# that worker's WID in W1.
adapt_stuck_start() {
	local a
	local_spool "$1"
	start_spoold
	unset CUDA_VISIBLE_DEVICES	# (the test's subshell only)
	stuck_setup
	a=$(spool submit --gpus 1 -- "$T/stick.sh") || fail "submit"
	spool adapt --minimum 0 --maximum 2 --kind gpu 2>/dev/null || fail "adapt"
	wait_for 30 state_is "$a" running || fail "task $a: $(state_of "$a")"
	W1=$(ls "$SPOOL/workers" | grep '^gpu@')
	stuck_now "$a"
}

# A worker of an adaptive GPU pool whose one GPU is stuck (a process of
# its last task that SIGKILL cannot end, lib.sh stuck_setup) can do
# none of the pool's work: once its status says so, spoold drains it,
# its job is ended, and another job is asked for, whose worker runs the
# GPU task that came next (it had waited on the first worker, which
# handed it back).
test_adapt_replaces_a_worker_whose_gpus_are_stuck() {
	local b w1 job1
	adapt_stuck_start '  kinds:
    gpu: {gpus: 1}'
	w1=$W1
	b=$(spool submit --gpus 1 -- echo b) || fail "submit"
	wait_for 30 grep -q "kind gpu: draining worker $w1: its 1 GPU is kept by processes of ended tasks" \
	    "$T/spoold.log" || fail "spoold: $(tail -5 "$T/spoold.log")"
	spool wait --timeout 30 "$b" || fail "task $b: $(spool status "$b"); $(spool workers)"
	[ "$(field "$b" worker)" != "$w1" ] || fail "task $b ran on the stuck worker"
	assert_match "^gpu@" "$(field "$b" worker)" "the worker of $b"
	assert_eq 2 "$(records_of_kind gpu)" "GPU jobs: the stuck worker's and another"
	job1=${w1#gpu@}
	job1=${job1%-*}
	wait_for 20 grep -q "kind gpu: cancelled job $job1 (drained)" "$T/spoold.log" ||
	    fail "the stuck worker's job was not ended: $(tail -5 "$T/spoold.log")"
	# it leaves at once, its stuck process's cgroup left behind (not
	# waited for: it would stop beating, and be found lost)
	wait_for 20 grep -q "worker $w1 (gpu@$job1) exited" "$T/spoold.log" ||
	    fail "the stuck worker did not exit: $(tail -5 "$T/spoold.log")"
	assert_no_match "worker $w1 .*lost" "$(cat "$T/spoold.log")" "spoold's log"
	assert_match "leaving with 1 process of ended tasks that SIGKILL did not end" \
	    "$(cat "$SPOOL/log/loc-$job1.log")" "the stuck worker's log"
	# said once: no rmdir warning for each cgroup it held
	assert_no_match "rmdir:" "$(cat "$SPOOL/log/loc-$job1.log")" \
	    "the stuck worker's log"
	# spoold writes its journal at most every 100 ms, and the worker
	# may have exited within that
	wait_for 10 journal_matches 'draining why=gpus-held' ||
	    fail "journal: $(spool journal | tail -5)"
	stuck_end
	spool shutdown >/dev/null 2>&1 || fail "shutdown"
	fusermount3 -u "$T/mnt" || fail "unmount"
}

# A worker of an adaptive pool with one of its two GPUs stuck still
# counts, but only as the capacity it has: with one task on its free GPU
# and another queued for a GPU, the pool asks for a second job, whose
# worker runs the queued task while the first still runs (sized by
# cores, the one job's two cores would have been enough, and the task
# would have waited for the first to end).
test_adapt_counts_stuck_gpus_as_missing() {
	local b c w1
	# not scaled down while the first worker's GPU is held but not
	# yet taken as stuck (10 s): it has no task then
	adapt_stuck_start '  scale-down-delay: 60s
  kinds:
    gpu: {cores: 2, gpus: 2}'
	w1=$W1
	wait_for 30 grep -q "worker $w1: 1 of its 2 GPUs is kept by processes of ended tasks" \
	    "$T/spoold.log" || fail "spoold: $(tail -5 "$T/spoold.log")"
	job='touch "$0.$SPOOL_TASK_ID"; while [ ! -e "$0.stop" ]; do sleep 0.05; done'
	b=$(spool submit --gpus 1 -- sh -c "$job" "$T/t") || fail "submit"
	wait_for 20 test -e "$T/t.$b" || fail "task $b did not start: $(spool status "$b")"
	c=$(spool submit --gpus 1 -- sh -c "$job" "$T/t") || fail "submit"
	wait_for 30 test -e "$T/t.$c" ||
	    fail "task $c did not start beside $b: $(spool status "$c"); $(spool workers)"
	assert_eq 2 "$(records_of_kind gpu)" "GPU jobs"
	touch "$T/t.stop"
	spool wait "$b" "$c" || fail "tasks"
	assert_eq "$w1" "$(field "$b" worker)" "the worker of $b"
	[ "$(field "$c" worker)" != "$w1" ] || fail "task $c ran on $w1"
	assert_no_match "draining worker $w1" "$(cat "$T/spoold.log")" "spoold's log"
	stuck_end
	spool shutdown >/dev/null 2>&1 || fail "shutdown"
	fusermount3 -u "$T/mnt" || fail "unmount"
}

# While a worker job is still coming up, a task waits in the queue for
# it rather than being placed ahead behind a long task on a busy worker
# (place.c).  The job script's prologue holds every job but the first
# until $T/go exists: the second worker comes up only when the test
# says so.
test_task_waits_for_a_coming_worker_not_behind_a_long_task() {
	local a b wa wb
	local_spool "  job-script-prologue: [\"mkdir '$T/first' 2>/dev/null || while [ ! -e '$T/go' ]; do sleep 0.05; done\"]"
	start_spoold
	spool scale --jobs 2 2>/dev/null || fail "scale"
	wait_for 30 live_count_is 1 || fail "first worker: $(spool workers)"
	a=$(spool submit -- sh -c "while [ ! -e '$T/stop' ]; do sleep 0.05; done") || fail "submit a"
	b=$(spool submit -- sh -c "while [ ! -e '$T/stop' ]; do sleep 0.05; done") || fail "submit b"
	wait_for 10 state_is "$a" running || fail "a not running"
	# b may still be in incoming/ until spoold's next rescan; once
	# taken in it is placed in that same pass, had it been placed ahead
	wait_for 10 taken_in "$b" || fail "b not taken in"
	assert_eq queued "$(state_of "$b")" "b while the second job is held"
	touch "$T/go"
	wait_for 30 state_is "$b" running ||
	    fail "b did not run beside a: $(spool status "$b")"
	state_is "$a" running || fail "a no longer running"
	touch "$T/stop"
	spool wait "$a" "$b" || fail "tasks"
	wa=$(field "$a" worker)
	wb=$(field "$b" worker)
	[ -n "$wa" ] && [ "$wa" != "$wb" ] || fail "same worker: $wa, $wb"
	spool shutdown >/dev/null 2>&1 || fail "shutdown"
}

worker_left() {	# WID: exited (spoold removes its directory soon after)
	[ ! -d "$SPOOL/workers/$1" ] || [ -e "$SPOOL/workers/$1/exited" ]
}

# submit_busy [TAG]: sets the caller's id to a task that runs until
# $T/busy.stop exists (then prints "finished"), once it has started
# (made $T/busy.TAG, default started).
submit_busy() {
	local tag=${1:-started}
	id=$(spool submit -- sh -c 'touch "$0.$1"; while [ ! -e "$0.stop" ]; do sleep 0.05; done; echo finished' "$T/busy" "$tag") ||
	    fail "submit"
	wait_for 20 test -e "$T/busy.$tag" || fail "task did not start"
}

# Scaling down prefers an idle worker to a busy one, and a busy worker
# chosen later is drained: its task runs to its end, then its job is
# cancelled.  No task is killed to scale down.
test_scale_down_drains_idle_first_and_never_kills_a_task() {
	local id busy idle
	local_spool
	start_spoold
	spool scale --jobs 2 2>/dev/null || fail "scale"
	spool wait-workers 2 --timeout 30s || fail "workers: $(spool workers)"
	submit_busy
	busy=$(basename "$(dirname "$(dirname "$(ls -d "$SPOOL"/workers/*/running/"$id".1)")")")
	idle=$(ls "$SPOOL/workers" | grep -vx "$busy")
	[ -n "$busy" ] && [ -n "$idle" ] || fail "busy '$busy', idle '$idle'"
	spool scale --jobs 1 2>/dev/null || fail "scale 1"
	wait_for 30 worker_left "$idle" ||
	    fail "the idle worker $idle stayed: $(spool workers)"
	assert_match "draining worker $idle \\(idle\\) to scale down" \
	    "$(cat "$T/spoold.log")" "the idle one chosen"
	worker_left "$busy" && fail "the busy worker left"
	assert_eq running "$(state_of "$id")" "the task, after scaling down"
	# down to none: the busy worker is drained, its task is not killed
	spool scale --jobs 0 2>/dev/null || fail "scale 0"
	wait_for 20 grep -q "draining worker $busy (busy) to scale down" \
	    "$T/spoold.log" || fail "busy worker not drained"
	assert_eq running "$(state_of "$id")" "the task while its worker drains"
	worker_left "$busy" && fail "drained with a task running"
	touch "$T/busy.stop"
	spool wait "$id" || fail "the task: $(spool status -l "$id")"
	assert_eq finished "$(task_stdout "$id")" "the task ran to its end"
	assert_eq 1 "$(field "$id" attempt)" "attempts"
	wait_for 30 live_count_is 0 || fail "the drained worker stayed: $(spool workers)"
	assert_match "cancelled job local\\.[0-9]+ \\(drained\\)" \
	    "$(cat "$T/spoold.log")" "its job cancelled once drained"
	spool shutdown >/dev/null 2>&1 || fail "shutdown"
}

state_of_worker() {	# WID: the state "spool workers" gives it
	spool workers | awk -v w="$1" '$1 == w { print $3; exit }'
}

# The worker spoold drains to scale down stays drained across a restart
# of spoold (its marker, workers/WID/drain): the next spoold places no
# task on it (before, it took it for a worker like the others and ran
# the third task there), does not choose a worker to drain again, and
# cancels its job once its task has ended; "spool workers" and the
# notebook client say it drains.
test_a_worker_drained_to_scale_down_stays_drained_after_a_restart() {
	local id a b drained other id3
	local_spool
	start_spoold
	spool scale --jobs 2 2>/dev/null || fail "scale"
	spool wait-workers 2 --timeout 30s || fail "workers: $(spool workers)"
	submit_busy a
	a=$id
	submit_busy b
	b=$id
	spool scale --jobs 1 2>/dev/null || fail "scale 1"
	wait_for 20 grep -q "to scale down" "$T/spoold.log" || fail "none drained"
	drained=$(sed -n 's/.*draining worker \([^ ]*\) (busy) to scale down.*/\1/p' \
	    "$T/spoold.log")
	[ -e "$SPOOL/workers/$drained/drain" ] ||
	    fail "no marker for $drained: $(ls "$SPOOL/workers/$drained")"
	other=$(ls "$SPOOL/workers" | grep -vx "$drained")
	# (IDs of 25 characters and more: its table once cut them at 24)
	assert_eq draining "$(state_of_worker "$drained")" \
	    "spool workers: the drained worker"
	assert_eq up "$(state_of_worker "$other")" "spool workers: the other"
	assert_eq "draining up" "$(PYTHONPATH=$(dirname "${BASH_SOURCE[0]}")/../../python \
	    python3 -c 'import ckspool, sys
w = ckspool.Client(sys.argv[1]).workers()
print(w[sys.argv[2]], w[sys.argv[3]])' "$SPOOL" "$drained" "$other")" \
	    "the notebook client's workers()"
	kill -KILL "$SPOOLD_PID"
	wait_for 10 not_running "$SPOOLD_PID" || fail "spoold survived SIGKILL"
	: > "$T/spoold.log"
	start_spoold
	wait_for 10 grep -q "recovered 2 job records" "$T/spoold.log" ||
	    fail "jobs not recovered: $(tail -3 "$T/spoold.log")"
	# a task for the pool: waits for the worker that does not drain
	id3=$(spool submit -- echo third) || fail "submit"
	touch "$T/busy.stop"
	spool wait "$a" "$b" "$id3" || fail "tasks: $(spool status "$a" "$b" "$id3")"
	assert_eq "$other" "$(field "$id3" worker)" "the third task's worker"
	wait_for 30 worker_left "$drained" ||
	    fail "the drained worker stayed: $(spool workers)"
	assert_match "cancelled job local\.[0-9]+ \(drained\)" \
	    "$(cat "$T/spoold.log")" "its job cancelled by the next spoold"
	assert_no_match "to scale down" "$(cat "$T/spoold.log")" \
	    "the next spoold's log"
	live_count_is 1 || fail "the pool: $(spool workers)"
	spool shutdown >/dev/null 2>&1 || fail "shutdown"
}

# The rule that leaves alone a worker younger than a quarter of
# scale-down-delay (here 5 of 20 s) never makes a busy worker the one
# drained: scaled back down just after a second worker registered, spoold
# waits for the young idle one to come of age and drains it.  (It once
# drained the busy one, older by 3 ms, in its place.)
test_a_young_idle_worker_is_waited_for_not_a_busy_one_drained() {
	local id busy young
	local_spool '  scale-down-delay: 20s'
	start_spoold
	spool scale --jobs 1 2>/dev/null || fail "scale 1"
	spool wait-workers 1 --timeout 30s || fail "workers: $(spool workers)"
	submit_busy
	busy=$(ls "$SPOOL/workers")
	spool scale --jobs 2 2>/dev/null || fail "scale 2"
	spool wait-workers 2 --timeout 30s || fail "workers: $(spool workers)"
	young=$(ls "$SPOOL/workers" | grep -vx "$busy")
	[ -n "$young" ] || fail "no second worker: $(spool workers)"
	spool scale --jobs 1 2>/dev/null || fail "scale 1 again"
	wait_for 30 worker_left "$young" ||
	    fail "the young idle worker stayed: $(spool workers)"
	assert_match "draining worker $young \\(idle\\) to scale down" \
	    "$(cat "$T/spoold.log")" "the young idle one drained"
	assert_no_match "draining worker $busy" "$(cat "$T/spoold.log")" \
	    "the busy worker drained in its place"
	worker_left "$busy" && fail "the busy worker left"
	touch "$T/busy.stop"
	spool wait "$id" || fail "the task: $(spool status -l "$id")"
	assert_eq 1 "$(field "$id" attempt)" "attempts"
	spool shutdown >/dev/null 2>&1 || fail "shutdown"
}

submissions() {	# worker jobs spoold submitted, by its log
	grep -c "kind default: submitted local job" "$T/spoold.log"
}

spoold_passes_go_by() {	# 10 spoold beats: as long as 10 of its polls
	local b
	b=$(spoold_beat)
	wait_for 20 beat_past $((b + 10)) || fail "spoold stopped beating"
}

# fixed_pool_left_idle [YAML lines]: spool scale 1, its worker leaves
# after a 1 s idle-timeout, and no job is submitted in its place while
# nothing is queued
fixed_pool_left_idle() {
	local_spool "  idle-timeout: 1s${1:+
$1}"
	start_spoold
	spool scale 1 2>/dev/null || fail "scale"
	wait_for 30 grep -q "worker [^ ]* (default@local\.[0-9]*) exited" \
	    "$T/spoold.log" || fail "the worker did not leave: $(spool workers)"
	spoold_passes_go_by
	assert_eq 1 "$(submissions)" "jobs submitted with nothing queued"
}

# An idle fixed pool gives its jobs back instead of churning them: with
# "spool scale 1" and a 1 s idle-timeout, the worker leaves idle and no
# other job is submitted while nothing is queued, not by a restarted
# spoold either (the job's record says its worker left idle); a task
# queued brings a job back, and the task runs.  spoold's beats prove
# that it went on polling and deciding: heartbeat and poll-interval are
# both 200 ms of spoold's own clock, so ten beats see about ten polls,
# and the first would have submitted.  (It submitted a job at the poll
# after each idle leave, for ever: 3 in the first 3 s.)
test_an_idle_fixed_pool_is_not_replaced_until_work_comes() {
	local id
	fixed_pool_left_idle
	assert_match "kind default: 1 worker left idle and no work is queued for the kind: not replaced until some is" \
	    "$(cat "$T/spoold.log")" "spoold's log"
	grep -q "^idle: " "$SPOOL"/jobs/local.* ||
	    fail "no record says its worker left idle: $(cat "$SPOOL"/jobs/local.*)"
	# a restarted spoold reads it from the job's record
	kill -TERM "$SPOOLD_PID"
	wait_for 30 not_running "$SPOOLD_PID" || fail "spoold did not stop"
	start_spoold
	wait_for 10 summary_settled || fail "spoold did not recover"
	spoold_passes_go_by
	assert_eq 1 "$(submissions)" "jobs submitted after a restart"
	id=$(spool submit -- echo hi) || fail "submit"
	wait_for 30 finished "$id" || fail "the task did not run: $(spool workers)"
	assert_eq hi "$(task_stdout "$id")" "the task's output"
	assert_eq 2 "$(submissions)" "jobs submitted for the task"
	spool shutdown >/dev/null 2>&1 || fail "shutdown"
}

# No thrashing: an adaptive pool whose backlog is gone keeps its worker
# for scale-down-delay (here 10 minutes).  The proof that spoold went on
# deciding meanwhile: a fixed pool asked for afterwards is submitted and
# registers, and still nothing of the adaptive pool is drained.  Two
# rules hold it, both from scale-down-delay (scale.c): wanting fewer for
# that long before scaling down, and leaving alone a worker younger than
# a quarter of it; this sees their sum, not each alone.
test_adapt_keeps_workers_for_the_scale_down_delay() {
	local id
	local_spool '  scale-down-delay: 10m
  kinds:
    ad: {}
    probe: {}'
	start_spoold
	spool adapt --minimum 0 --maximum 2 --kind ad 2>/dev/null || fail "adapt"
	id=$(spool submit -- echo hi) || fail "submit"
	spool wait "$id" || fail "task"
	assert_match "^ad@local\\.[0-9]+-" "$(field "$id" worker)" "its worker"
	spool scale --jobs 1 --kind probe 2>/dev/null || fail "scale probe"
	spool wait-workers 1 --kind probe --timeout 30s || fail "no probe worker"
	live_of_kind_is ad 1 || fail "the adaptive worker left: $(spool workers)"
	assert_no_match "draining worker ad@" "$(cat "$T/spoold.log")" \
	    "drained within the scale-down delay"
	spool shutdown >/dev/null 2>&1 || fail "shutdown"
}

# Work queued between two listings of the queues asks an adaptive kind
# for the jobs it needs then (within a second), not at the next
# poll-interval: here 10 minutes, so only the pass that took the size in
# (nothing queued: no job) and that can have asked.  One one-core task:
# one job, not another while its worker is on its way.
test_adapt_asks_for_jobs_when_work_comes_between_polls() {
	local id
	local_spool "  poll-interval: 10m"
	start_spoold
	spool adapt --minimum 0 --maximum 2 2>/dev/null || fail "adapt"
	wait_for 10 grep -q "kind default: adaptive: wants 0 jobs" \
	    "$T/spoold.log" || fail "the size not taken in: $(tail -3 "$T/spoold.log")"
	id=$(spool submit -- echo hi) || fail "submit"
	spool wait --timeout 30s "$id" ||
	    fail "the task did not run: $(spool workers; tail -3 "$T/spoold.log")"
	assert_eq hi "$(task_stdout "$id")" "its output"
	assert_eq 1 "$(ls "$SPOOL/jobs" | grep -vc '\.sh$')" "jobs asked for"
	assert_match "kind default: adaptive: wants 1 job:" \
	    "$(cat "$T/spoold.log")" "what spoold said"
	spool shutdown >/dev/null 2>&1 || fail "shutdown"
}

# max-submit-failures counts failures in a row: a worker that registers
# in between starts the count again, so failures spread over a pool's
# life never add up to a stop.
test_failures_in_a_row_count_again_after_a_worker_registers() {
	# a job fails while $T/flag is there, and takes it away
	local_spool "  max-submit-failures: 2
  job-script-prologue: [\"if rm $T/flag 2>/dev/null; then echo flagged >&2; exit 3; fi\"]"
	touch "$T/flag"
	start_spoold
	spool scale 1 2>/dev/null || fail "scale"
	wait_for 30 records_in_state_are failed 1 || fail "first failure"
	spool wait-workers 1 --timeout 30s || fail "no worker: $(spool workers)"
	# the job's worker leaves; its replacement fails once
	touch "$T/flag"
	wait_for 10 records_in_state_are running 1 ||
	    fail "records: $(cat "$SPOOL"/jobs/local.*)"
	job=$(grep -lx "state: running" "$SPOOL"/jobs/local.* | head -1)
	job=${job##*/}
	kill -TERM "${job#local.}" || fail "kill $job"
	wait_for 30 records_in_state_are failed 2 || fail "second failure"
	# one failure in a row: not the limit, so another job comes
	wait_for 30 live_count_is 1 ||
	    fail "no new worker: $(grep -E 'failed|submit' "$T/spoold.log")"
	assert_no_match "failed in a row" "$(cat "$T/spoold.log")" "spoold's log"
	spool shutdown >/dev/null 2>&1 || fail "shutdown"
}

# fake_slurm_spool: a new spool whose cluster is Slurm (polled every
# 200 ms), with fake_slurm's commands on PATH.
fake_slurm_spool() {
	new_spool
	printf 'cluster:\n  backend: slurm\n  poll-interval: 200ms\n' >> \
	    "$SPOOL/spool.yaml"
	fake_slurm
}

# fake_slurm: sbatch, squeue and scancel on PATH, keeping their queue in
# $T/fq/queue ("ID STATE REASON" lines); sbatch gives IDs from 1001, the
# first job the state in $T/fq/first (default PENDING), the others
# PENDING; with $T/fq/hang it hangs after making $T/fq/hung, until that
# file is removed or its spoold is gone (then fails); with
# $T/fq/hang-after it does so after taking the job and printing its ID;
# with $T/fq/fail-after it takes the job, then fails as an sbatch that
# gave up waiting for slurmctld's answer does (once: it removes the
# file); with $T/fq/connect-fails it fails as one that could not
# connect, taking no job;
# it keeps each job's script path in $T/fq/scripts ("ID PATH" lines),
# which squeue -o "%i %o" prints for the jobs queued (its arguments a
# line of $T/fq/script-listings; with $T/fq/script-listing-fails it
# fails as one that timed out; while $T/fq/script-listing-misses holds
# a number above 0, it lowers it and lists no job, as a controller that
# has not taken them yet); any other squeue adds a line to
# $T/fq/listings each time and, with
# $T/fq/squeue-hang, reads the queue, then hangs (making
# $T/fq/squeue-hung) until that file is removed, then prints what it
# read; scancel (of one job or several) writes its IDs as a line of
# $T/fq/scancels, fails once for each $T/fq/scancel-fails.N file, and
# with $T/fq/scancel-hang hangs (making $T/fq/scancel-hung) until killed.
fake_slurm() {
	mkdir -p "$T/fake" "$T/fq"
	cat > "$T/fake/sbatch" <<EOF2
#!/bin/sh
if [ -f "$T/fq/hang" ]; then
	touch "$T/fq/hung"
	while [ -f "$T/fq/hang" ] && kill -0 \$PPID 2>/dev/null; do sleep 0.1; done
	exit 1
fi
n=\$(cat "$T/fq/next" 2>/dev/null || echo 1000)
n=\$((n + 1))
echo \$n > "$T/fq/next"
st=PENDING
[ \$n = 1001 ] && [ -f "$T/fq/first" ] && st=\$(cat "$T/fq/first")
echo "\$n \$st None" >> "$T/fq/queue"
for p; do :; done
echo "\$n \$p" >> "$T/fq/scripts"
if [ -f "$T/fq/connect-fails" ]; then
	echo "sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)" >&2
	exit 1
fi
if [ -f "$T/fq/fail-after" ]; then
	rm "$T/fq/fail-after"
	echo "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation" >&2
	exit 1
fi
echo \$n
if [ -f "$T/fq/hang-after" ]; then
	touch "$T/fq/hung"
	while [ -f "$T/fq/hang-after" ] && kill -0 \$PPID 2>/dev/null; do sleep 0.1; done
fi
EOF2
	cat > "$T/fake/squeue" <<EOF2
#!/bin/sh
for f; do :; done
if [ "\$f" = "%i %o" ]; then
	echo "\$*" >> "$T/fq/script-listings"
	if [ -f "$T/fq/script-listing-fails" ]; then
		echo "squeue: error: slurm_load_jobs error: Socket timed out on send/recv operation" >&2
		exit 1
	fi
	miss=\$(cat "$T/fq/script-listing-misses" 2>/dev/null || echo 0)
	if [ "\$miss" -gt 0 ]; then
		echo \$((miss - 1)) > "$T/fq/script-listing-misses"
		exit 0
	fi
	cut -d' ' -f1 "$T/fq/queue" 2>/dev/null | while read -r id; do
		grep "^\$id " "$T/fq/scripts"
	done
	exit 0
fi
echo >> "$T/fq/listings"
q=\$(cat "$T/fq/queue" 2>/dev/null)
if [ -f "$T/fq/squeue-hang" ]; then
	touch "$T/fq/squeue-hung"
	while [ -f "$T/fq/squeue-hang" ]; do sleep 0.1; done
fi
[ -z "\$q" ] || printf '%s\n' "\$q"
exit 0
EOF2
	cat > "$T/fake/scancel" <<EOF2
#!/bin/sh
echo "\$*" >> "$T/fq/scancels"
if [ -f "$T/fq/scancel-hang" ]; then
	touch "$T/fq/scancel-hung"
	while [ -f "$T/fq/scancel-hang" ]; do sleep 0.1; done
	exit 1
fi
for f in "$T"/fq/scancel-fails.*; do
	[ -f "\$f" ] || continue
	rm "\$f"
	echo "scancel: error: Unable to contact slurm controller" >&2
	exit 1
done
for id in "\$@"; do
	sed -i "/^\$id /d" "$T/fq/queue"
done
EOF2
	chmod +x "$T/fake/sbatch" "$T/fake/squeue" "$T/fake/scancel"
	PATH=$T/fake:$PATH
	export PATH
}

# The same for a fixed pool whose worker left idle (spool scale 1,
# idle-timeout 1 s): a task queued between two listings, 10 minutes
# apart here, brings it back to its size then, and the task runs.
test_an_idle_fixed_pool_comes_back_between_polls() {
	local id
	fixed_pool_left_idle "  poll-interval: 10m"
	id=$(spool submit -- echo hi) || fail "submit"
	spool wait --timeout 30s "$id" ||
	    fail "the task did not run: $(spool workers; tail -3 "$T/spoold.log")"
	assert_eq hi "$(task_stdout "$id")" "the task's output"
	assert_eq 2 "$(submissions)" "jobs submitted for the task"
	spool shutdown >/dev/null 2>&1 || fail "shutdown"
}

# poll-interval is how often spoold lists the batch queues: before, the
# listing of scale/ that comes every tenth rescan whatever its stamp
# (watch.h, DIRSTAMP_FORCE) was taken for a new size and made a pass
# that listed them, every 2 s here (rescan 200 ms) where poll-interval
# asks for 10 minutes.  And work queued between two listings still asks
# an adaptive kind for its job at once (adapt_soon), without a listing.
test_queues_listed_by_poll_interval_and_work_asks_between() {
	local b id
	fake_slurm_spool
	sed -i 's/^  poll-interval: .*/  poll-interval: 10m/' "$SPOOL/spool.yaml"
	cat > "$T/fake/squeue" <<EOF2
#!/bin/sh
echo listed >> "$T/fq/polls"
cat "$T/fq/queue" 2>/dev/null
exit 0
EOF2
	start_spoold
	spool adapt --minimum 0 --maximum 2 2>/dev/null || fail "adapt"
	wait_for 10 grep -q "kind default: adaptive: wants 0 jobs" \
	    "$T/spoold.log" || fail "the size not taken in: $(tail -3 "$T/spoold.log")"
	id=$(spool submit -- true) || fail "submit"
	wait_for 10 grep -q "^1001 " "$T/fq/queue" ||
	    fail "no job asked for the task: $(tail -3 "$T/spoold.log")"
	# listed once soon after, to see the new job there
	wait_for 10 test -s "$T/fq/polls" || fail "the new job never listed"
	b=$(spoold_beat)
	wait_for 30 beat_past $((b + 30)) || fail "spoold's beat stopped"
	assert_eq 1 "$(wc -l < "$T/fq/polls")" \
	    "listings of the queue in 30 beats (6 s) of a 10 min poll-interval"
	assert_eq "1001 PENDING None" "$(cat "$T/fq/queue")" "jobs in the queue"
	spool cancel "$id" 2>/dev/null
	spool shutdown >/dev/null 2>&1 || fail "shutdown"
}

# A job the batch system puts in an error state is cancelled, and if
# that fails (scancel did not answer), again at the next listing; until
# it is, it is no capacity: another job is asked for in its place.
test_error_state_job_cancelled_again_when_the_cancel_failed() {
	fake_slurm_spool
	echo BOOT_FAIL > "$T/fq/first"
	touch "$T/fq/scancel-fails.1" "$T/fq/scancel-fails.2"
	start_spoold
	spool scale 1 2>/dev/null || fail "scale"
	wait_for 10 grep -q "cancel job 1001: .*Unable to contact" "$T/spoold.log" ||
	    fail "no failed cancel: $(cat "$T/spoold.log")"
	wait_for 10 grep -q "cancelled job 1001 (error state)" "$T/spoold.log" ||
	    fail "not cancelled again: $(cat "$T/fq/scancels")"
	wait_for 10 grep -q "^1002 " "$T/fq/queue" ||
	    fail "no job in its place: $(cat "$T/fq/queue"; cat "$T/spoold.log")"
	wait_for 10 grep -qx "state: failed" "$SPOOL/jobs/1001" ||
	    fail "record: $(cat "$SPOOL/jobs/1001")"
	# the replacement did not wait for the cancel to go through
	grep -E "submitted slurm job 1002|cancelled job 1001" "$T/spoold.log" |
	    head -1 | grep -q "submitted slurm job 1002" ||
	    fail "1002 submitted only once 1001 was cancelled: $(cat "$T/spoold.log")"
	assert_eq 3 "$(grep -c '^1001$' "$T/fq/scancels")" "scancel 1001 calls"
	spool shutdown >/dev/null 2>&1 || fail "shutdown"
	wait_for 10 not_running "$SPOOLD_PID" || fail "spoold still running"
}

# A stop cancels a batch system's jobs in one command (one scancel for
# the three pending jobs here, not three in a row: on a busy slurmctld
# each takes a second or more), and each is said cancelled.  (Three
# jobs, not an array: the fake queue lists what sbatch printed.)
fake_queue_has() {
	[ "$(cat "$T/fq/queue" 2>/dev/null | wc -l)" = "$1" ]
}
three_pending_jobs() {	# [YAML]: more lines of the cluster section
	fake_slurm_spool
	echo '  job-array: false' >> "$SPOOL/spool.yaml"
	[ -z "${1:-}" ] || printf '%s\n' "$1" >> "$SPOOL/spool.yaml"
	start_spoold
	spool scale --jobs 3 2>/dev/null || fail "scale"
	wait_for 10 fake_queue_has 3 || fail "queue: $(cat "$T/fq/queue" 2>&1)"
}
test_a_stop_cancels_the_jobs_in_one_command() {
	three_pending_jobs
	kill -TERM "$SPOOLD_PID"
	wait_for 20 not_running "$SPOOLD_PID" || fail "spoold did not stop"
	assert_eq "1001 1002 1003" "$(cat "$T/fq/scancels")" "scancel calls"
	assert_eq 3 "$(grep -c 'cancelled job 100[123] (stopping)' \
	    "$T/spoold.log")" "jobs said cancelled"
	[ ! -s "$T/fq/queue" ] || fail "queue: $(cat "$T/fq/queue")"
}

# A cancel of several that failed does not say which of them it
# cancelled: they are then cancelled one at a time.
test_a_failed_cancel_of_several_goes_one_at_a_time() {
	three_pending_jobs
	touch "$T/fq/scancel-fails.1"
	kill -TERM "$SPOOLD_PID"
	wait_for 20 not_running "$SPOOLD_PID" || fail "spoold did not stop"
	assert_eq "1001 1002 1003 1001 1002 1003" \
	    "$(paste -sd' ' "$T/fq/scancels")" "scancel calls"
	assert_match "cancelling 3 slurm jobs in one command: .*Unable to contact.*one at a time instead" \
	    "$(cat "$T/spoold.log")" "spoold's log"
	assert_eq 3 "$(grep -c 'cancelled job 100[123] (stopping)' \
	    "$T/spoold.log")" "jobs said cancelled"
	[ ! -s "$T/fq/queue" ] || fail "queue: $(cat "$T/fq/queue")"
}

# The jobs of workers drained to scale down go in one command too:
# three fake Slurm jobs whose workers registered (as their job scripts
# start them), idle, scaled to none in one pass (scale-down-delay 0:
# no worker is too young to drain) end in one scancel.
test_drained_jobs_are_cancelled_in_one_command() {
	local j
	three_pending_jobs '  scale-down-delay: 0s'
	for j in 1001 1002 1003; do
		sed -i "s/^$j PENDING .*/$j RUNNING None/" "$T/fq/queue"
		start_worker "default@$j" --job "$j"
	done
	# spoold took each registration (a record "running" may be the
	# listing's alone: such a job would go as one without a worker)
	for j in 1001 1002 1003; do
		wait_for 10 grep -qx "worker: 1" "$SPOOL/jobs/$j" ||
		    fail "record: $(cat "$SPOOL/jobs/$j")"
	done
	spool scale --jobs 0 2>/dev/null || fail "scale 0"
	wait_for 20 fake_queue_has 0 || fail "queue: $(cat "$T/fq/queue")"
	# one command for the three, in the order the workers were drained
	# (their registrations', which need not be the jobs')
	assert_eq 1 "$(wc -l <"$T/fq/scancels")" "scancel calls"
	assert_eq "1001 1002 1003" \
	    "$(tr ' ' '\n' <"$T/fq/scancels" | sort | paste -sd' ')" \
	    "the jobs of the one scancel"
	assert_eq 3 "$(grep -c 'cancelled job 100[123] (drained)' \
	    "$T/spoold.log")" "jobs said cancelled"
}

# Jobs that have no worker yet, cancelled to scale down, go in one
# command too, newest first (a burst of work ended before its jobs
# started; each was one scancel, registrations waiting meanwhile).
test_pending_jobs_are_cancelled_in_one_command_to_scale_down() {
	three_pending_jobs
	spool scale --jobs 1 2>/dev/null || fail "scale 1"
	wait_for 20 fake_queue_has 1 || fail "queue: $(cat "$T/fq/queue")"
	assert_eq "1003 1002" "$(cat "$T/fq/scancels")" "scancel calls"
	assert_match "^1001 " "$(cat "$T/fq/queue")" "the job kept"
	assert_eq 2 "$(grep -c 'cancelled job 100[23] (scaling down)' \
	    "$T/spoold.log")" "jobs said cancelled"
}

# ... and one whose cancel failed does not count: the group fails, then
# 1003 alone fails too, 1002 goes, and 1001, the next older, in its
# stead.
test_a_pending_job_whose_cancel_failed_is_replaced_by_an_older_one() {
	three_pending_jobs
	touch "$T/fq/scancel-fails.1" "$T/fq/scancel-fails.2"
	spool scale --jobs 1 2>/dev/null || fail "scale 1"
	wait_for 20 fake_queue_has 1 || fail "queue: $(cat "$T/fq/queue")"
	assert_eq "1003 1002,1003,1002,1001" \
	    "$(head -4 "$T/fq/scancels" | paste -sd,)" "scancel calls"
	assert_match "^1003 " "$(cat "$T/fq/queue")" "the job kept"
	assert_match "cancel job 1003: .*Unable to contact" \
	    "$(cat "$T/spoold.log")" "spoold's log"
}

# A stop's 30 s count from the stop, its cancels included (a hung
# slurmctld held spoold 30 s for each job's scancel, then 30 s more:
# past systemd's TimeoutStopSec with three jobs).  Here the one scancel
# hangs: it is killed when the 30 s are up, no other batch command
# runs, spoold names each job still queued and exits 0, its lease
# released.
test_a_stop_with_a_hung_cancel_ends_in_its_grace() {
	local rc
	three_pending_jobs
	touch "$T/fq/scancel-hang"
	kill -TERM "$SPOOLD_PID"
	wait_for 10 test -e "$T/fq/scancel-hung" || fail "no scancel"
	wait_for 60 not_running "$SPOOLD_PID" || fail "spoold did not stop"
	wait "$SPOOLD_PID"
	rc=$?
	rm -f "$T/fq/scancel-hang"
	assert_eq 0 "$rc" "spoold's exit status"
	assert_eq "1001 1002 1003" "$(cat "$T/fq/scancels")" "scancel calls"
	assert_match "scancel: no answer in .* s; killed" \
	    "$(cat "$T/spoold.log")" "spoold's log"
	assert_match "giving up" "$(cat "$T/spoold.log")" "spoold's log"
	for j in 1001 1002 1003; do
		assert_match "job $j \(slurm\) is still in the queue" \
		    "$(cat "$T/spoold.log")" "spoold's log"
	done
	assert_no_match "cancelled job|listing the slurm queue" \
	    "$(cat "$T/spoold.log")" "spoold's log"
	[ ! -e "$SPOOL/lock/spoold" ] || fail "lease not released"
}

# A stop asked while a batch command hangs (here an sbatch that took its
# job and has not answered yet, as on a busy slurmctld) begins at once:
# it is said then, its 30 s count from then, and no other job is
# submitted; the job of the sbatch running is recorded when it answers,
# and cancelled.  Before, SIGTERM and "spool shutdown" waited for the
# command (up to its 30 s) and the stop's own 30 s came after: past
# what spoold(8) promises systemd.
stop_during_a_hung_sbatch() {	# sigterm|shutdown, then how it is said
	local rc spid
	fake_slurm_spool
	echo '  job-array: false' >> "$SPOOL/spool.yaml"
	touch "$T/fq/hang-after"
	start_spoold
	spool scale --jobs 2 2>/dev/null || fail "scale"
	wait_for 10 test -e "$T/fq/hung" || fail "sbatch not run"
	case $1 in
	sigterm) kill -TERM "$SPOOLD_PID" ;;
	shutdown) spool shutdown > "$T/shutdown.out" 2>&1 & spid=$! ;;
	esac
	wait_for 10 grep -q "stopping ($2): cancelling worker jobs" \
	    "$T/spoold.log" ||
	    fail "the stop waits for sbatch: $(tail -3 "$T/spoold.log")"
	pgrep -f "$T/fake/sbatch" > /dev/null || fail "sbatch no longer hangs"
	assert_match "jobs are cancelled once the batch command running has ended" \
	    "$(cat "$T/spoold.log")" "spoold's log"
	assert_no_match "cancelled job" "$(cat "$T/spoold.log")" "spoold's log"
	rm "$T/fq/hang-after"
	wait_for 20 not_running "$SPOOLD_PID" || fail "spoold did not stop"
	wait "$SPOOLD_PID"
	rc=$?
	assert_eq 0 "$rc" "spoold's exit status"
	assert_eq 1001 "$(cat "$T/fq/next")" "the last job submitted"
	assert_eq 1001 "$(cat "$T/fq/scancels")" "scancel calls"
	assert_match "cancelled job 1001 \(stopping\)" \
	    "$(cat "$T/spoold.log")" "spoold's log"
	[ ! -s "$T/fq/queue" ] || fail "queue: $(cat "$T/fq/queue")"
	[ -z "${spid:-}" ] || wait "$spid" ||
	    fail "spool shutdown: $(cat "$T/shutdown.out")"
}
test_sigterm_during_a_hung_sbatch_stops_at_once() {
	stop_during_a_hung_sbatch sigterm SIGTERM
	[ -e "$SPOOL/scale/default" ] || fail "SIGTERM cleared the size asked"
}
test_spool_shutdown_during_a_hung_sbatch_stops_at_once() {
	stop_during_a_hung_sbatch shutdown "spool shutdown"
	[ ! -e "$SPOOL/scale/default" ] ||
	    fail "the size asked was kept: $(cat "$SPOOL/scale/default")"
}

# Records of jobs that ended are removed an hour on (spool-layout(5),
# jobs/), with no size asked too: after "spool shutdown" cleared the
# sizes, a later spoold still clears what the earlier one left.
test_old_job_records_are_removed_without_a_size() {
	local_spool
	printf 'id: 4242\nkind: default\nbackend: local\nsubmitted: %s\nstate: gone\nworker: 1\n' \
	    "$(( $(date +%s) - 7200 )).000" > "$SPOOL/jobs/4242"
	printf '#!/bin/sh\n' > "$SPOOL/jobs/4242.sh"
	start_spoold
	wait_for 10 grep -q "recovered 1 job record" "$T/spoold.log" ||
	    fail "record not recovered: $(cat "$T/spoold.log")"
	wait_for 10 test ! -e "$SPOOL/jobs/4242" ||
	    fail "old record kept: $(ls "$SPOOL/jobs")"
	[ ! -e "$SPOOL/jobs/4242.sh" ] || fail "its script kept"
}

# A local job recorded by a spoold on another host (spoold restarted
# elsewhere; here its record's host is rewritten, spool-layout(5)): no
# PID of it means anything here, so it is judged by its worker.  A stop
# does not wait for what it cannot cancel (it warns, once), and once
# its worker has gone the job has ended instead of running for ever.
test_local_job_of_another_host_is_judged_by_its_worker() {
	local job rec pid
	local_spool
	start_spoold
	spool scale --jobs 1 2>/dev/null || fail "scale"
	spool wait-workers 1 --timeout 30s || fail "workers: $(spool workers)"
	wait_for 10 records_in_state_are running 1 || fail "not running"
	job=$(ls "$SPOOL/jobs" | grep -v '\.sh$' | head -1)
	pid=${job#local.}
	track "$pid"
	kill -KILL "$SPOOLD_PID"
	wait_for 10 not_running "$SPOOLD_PID" || fail "spoold survived"
	rec=$SPOOL/jobs/$job
	sed 's/^host: .*/host: elsewhere/' "$rec" > "$SPOOL/tmp/rec" &&
	    mv "$SPOOL/tmp/rec" "$rec" || fail "rewrite $rec"
	# its worker is up: the job runs, and a stop cannot reach it
	start_spoold
	wait_for 10 grep -q "recovered 1 job record" "$T/spoold.log" ||
	    fail "no recovery: $(tail -3 "$T/spoold.log")"
	spool shutdown > "$T/out" 2>&1
	wait_for 10 not_running "$SPOOLD_PID" ||
	    fail "the stop waits for job $job: $(tail -3 "$T/spoold.log")"
	assert_eq 1 "$(grep -c "job $job runs on elsewhere; it cannot be stopped" \
	    "$T/spoold.log")" "warnings"
	grep -qx "state: running" "$rec" || fail "record: $(cat "$rec")"
	# its worker (the job itself) ends: the job has ended too
	kill -TERM "$pid"
	wait_for 10 not_running "$pid" || fail "worker $pid survived"
	start_spoold
	wait_for 10 records_in_state_are gone 1 || fail "record: $(cat "$rec")"
	spool shutdown > "$T/out" 2>&1 || fail "shutdown: $(cat "$T/out")"
	wait_for 10 not_running "$SPOOLD_PID" || fail "spoold did not stop"
}

# "spool shutdown" with no spoold running (killed here) cancels
# nothing: it names the jobs whose records say they may still be
# queued, says who cancels them, and exits 1; it leaves no request that
# would stop the next spoold at its start.  The next spoold cancels
# them at its own stop.  (Before, it said "nothing to shut down".)
test_spool_shutdown_without_spoold_names_the_jobs_left() {
	local rc=0
	fake_slurm_spool
	start_spoold
	spool scale 1 2>/dev/null || fail "scale"
	wait_for 10 records_in_state_are pending 1 ||
	    fail "no job: $(ls "$SPOOL/jobs"; tail -3 "$T/spoold.log")"
	kill -KILL "$SPOOLD_PID"
	wait_for 10 not_running "$SPOOLD_PID" || fail "spoold survived SIGKILL"
	spool shutdown > "$T/out" 2>&1 || rc=$?
	assert_eq 1 "$rc" "spool shutdown's exit status: $(cat "$T/out")"
	assert_eq "spool: spoold is not running on $SPOOL: no worker job cancelled; the spool's mounts are told to unmount (state/shutdown, generation 1)
spool: job 1001 (slurm) may still be in the queue
spool: a spoold started later cancels the jobs of $SPOOL/jobs/ when it stops" \
	    "$(cat "$T/out")" "what spool shutdown said"
	[ ! -e "$T/fq/scancels" ] || fail "scancel: $(cat "$T/fq/scancels")"
	assert_eq "" "$(ls "$SPOOL/control")" "requests left for a spoold"
	start_spoold
	wait_for 10 grep -q "recovered 1 job record" "$T/spoold.log" ||
	    fail "no recovery: $(tail -3 "$T/spoold.log")"
	stop_empties_the_queue 1001
}

# A new spoold counts its beats from 0 again, so the count a worker
# reads after a restart can be the one it read before: the worker takes
# a new holder of the lease (another nonce) for a beat whatever the
# count, and says so.  Here spoold is stopped and started again.  Not
# across hosts: there the worker went on reading the old owner file
# through sshfs for more than 20 s (ckworker(1)).
test_worker_takes_a_new_spoold_for_a_beat_whatever_its_count() {
	local_spool
	start_spoold
	start_worker w1 --cores 1 --death-timeout 60s
	local log=$T/worker-w1.log id
	stop_spoold
	start_spoold
	wait_for 20 grep -q "spoold changed: now pid $SPOOLD_PID on " "$log" ||
	    fail "the new holder was not seen: $(tail -3 "$log")"
	assert_eq 1 "$(grep -c "spoold changed" "$log")" "changes said"
	id=$(spool submit -- echo ok) || fail "submit"
	spool wait "$id" || fail "the task failed: $(spool status "$id")"
	assert_eq ok "$(task_stdout "$id")"
	assert_no_match "draining" "$(cat "$log")" "the worker's log"
}

# spoold waits for a batch command outside its loop (BATCH_LIMIT_MS,
# 30 s; here an sbatch that hangs, as one does while slurmctld is busy):
# it beats its lease meanwhile, or its workers left after their death
# timeout (and a spoold on another host broke the lease).  The beat
# count goes on past 15 heartbeats (3 s) while sbatch still hangs, and
# a worker with a death timeout of 2 s stays.
spoold_beat_count() {
	sed -n 's/^beat: //p' "$SPOOL/lock/spoold/beat"
}
beat_count_past() {
	[ "$(spoold_beat_count)" -ge "$1" ] 2>/dev/null
}
test_the_lease_beats_while_a_batch_command_hangs() {
	local b0
	fake_slurm_spool
	touch "$T/fq/hang"
	start_spoold
	start_worker w1 --cores 1 --death-timeout 2s
	spool scale 1 2>/dev/null || fail "scale"
	wait_for 10 test -e "$T/fq/hung" || fail "sbatch not run"
	b0=$(spoold_beat_count)
	wait_for 20 beat_count_past $((b0 + 15)) ||
	    fail "spoold did not beat while sbatch hung: beat $(spoold_beat_count), $b0 before"
	pgrep -f "$T/fake/sbatch" > /dev/null || fail "sbatch no longer hangs"
	! not_running "$WORKER_PID" ||
	    fail "the worker left: $(tail -3 "$T/worker-w1.log")"
	assert_no_match "draining|spoold has not beaten" \
	    "$(cat "$T/worker-w1.log")" "the worker's log"
	rm "$T/fq/hang"
	spool shutdown > /dev/null 2>&1 || fail "shutdown"
	wait_for 40 not_running "$SPOOLD_PID" || fail "spoold did not stop"
}

# While spoold waits for a batch command (here an sbatch that hangs, as
# one does while slurmctld is busy), its tasks go on: a task submitted
# meanwhile is accepted, placed on the worker there is, run, and its
# result taken in, while sbatch still hangs (before, it waited for the
# command: up to BATCH_LIMIT_MS, 30 s, each).
a_worker_and_a_hung_sbatch() {
	fake_slurm_spool
	touch "$T/fq/hang"
	start_spoold
	start_worker w1 --cores 1
	spool scale 1 2>/dev/null || fail "scale"
	wait_for 10 test -e "$T/fq/hung" || fail "sbatch not run"
}
sbatch_still_hangs_then_shut_down() {
	pgrep -f "$T/fake/sbatch" > /dev/null || fail "sbatch no longer hangs"
	rm "$T/fq/hang"
	spool shutdown > /dev/null 2>&1 || fail "shutdown"
	wait_for 40 not_running "$SPOOLD_PID" || fail "spoold did not stop"
}
test_tasks_run_while_a_batch_command_hangs() {
	local id
	a_worker_and_a_hung_sbatch
	id=$(spool submit -- echo ok) || fail "submit"
	spool wait --timeout 10s "$id" > /dev/null ||
	    fail "not done while sbatch hung: $(spool status "$id" 2>&1)"
	assert_eq ok "$(task_stdout "$id")"
	sbatch_still_hangs_then_shut_down
}

# ... and so do the requests of control/: a "spool cancel" of a running
# task is carried out while sbatch still hangs (before, it waited for
# the command, as the loop's control_scan did).
test_a_cancel_is_carried_out_while_a_batch_command_hangs() {
	local id
	a_worker_and_a_hung_sbatch
	id=$(spool submit -- sleep 300) || fail "submit"
	wait_for 10 state_is "$id" running || fail "not running: $(spool status "$id")"
	spool cancel "$id" 2>/dev/null || fail "cancel"
	wait_for 10 finished "$id" ||
	    fail "not cancelled while sbatch hung: $(spool status "$id" 2>&1)"
	assert_eq cancelled "$(field "$id" reason)" "the task's reason"
	sbatch_still_hangs_then_shut_down
}

# ... and so do the workers, coming and going: one killed while sbatch
# hangs is found lost (lost-timeout, 2 s here) and its task requeued,
# and one started meanwhile is taken in and runs the task again, while
# sbatch still hangs (before, registrations and losses waited for the
# command: up to BATCH_LIMIT_MS, 30 s, each).
test_workers_come_and_go_while_a_batch_command_hangs() {
	local id
	fake_slurm_spool
	start_spoold
	start_worker w1 --cores 1
	# attempt 1 waits for the gate, opened once its worker is killed
	id=$(spool submit -- sh -c \
	    'echo attempt $SPOOL_ATTEMPT; while [ ! -e "$1" ]; do sleep 0.05; done' \
	    _ "$T/go") || fail "submit"
	wait_for 10 state_is "$id" running || fail "not running"
	touch "$T/fq/hang"
	spool scale 1 2>/dev/null || fail "scale"
	wait_for 10 test -e "$T/fq/hung" || fail "sbatch not run"
	kill -9 "$WORKER_PID"
	touch "$T/go"
	wait_for 15 grep -q "worker w1-.* lost: no heartbeat" "$T/spoold.log" ||
	    fail "not lost while sbatch hung: $(tail -3 "$T/spoold.log")"
	start_worker w2 --cores 1
	spool wait --timeout 10s "$id" > /dev/null ||
	    fail "not run again while sbatch hung: $(spool status "$id" 2>&1)"
	assert_eq 2 "$(field "$id" attempt)" "attempt after the loss"
	assert_eq "attempt 2" "$(task_stdout "$id")"
	assert_match "^w2-" "$(field "$id" worker)"
	assert_match "worker w2-.* registered" "$(cat "$T/spoold.log")" \
	    "spoold's log"
	sbatch_still_hangs_then_shut_down
}

# A job's worker may register before its sbatch has answered (here the
# sbatch takes job 1001, prints its ID and hangs; the worker starts as
# the job script starts it): it is taken in and runs a task, its job is
# recorded then, and once sbatch answers the job keeps that one record.
# Two records of it would count it twice: the pool of 1 would be one
# too many, and the newest "pending" one, job 1001 itself, cancelled.
listings() {	# how many times squeue ran (0 before the first)
	cat "$T/fq/listings" 2>/dev/null | wc -l
}
listings_past() {
	[ "$(listings)" -gt "$1" ]
}
test_a_jobs_worker_registered_before_its_sbatch_answered() {
	local id n
	fake_slurm_spool
	touch "$T/fq/hang-after"
	start_spoold
	spool scale 1 2>/dev/null || fail "scale"
	wait_for 10 test -e "$T/fq/hung" || fail "sbatch not run"
	sed -i 's/^1001 PENDING .*/1001 RUNNING None/' "$T/fq/queue"
	start_worker default@1001 --job 1001
	wait_for 10 test -e "$SPOOL/jobs/1001" ||
	    fail "not recorded while sbatch hung: $(tail -3 "$T/spoold.log")"
	assert_match "worker job 1001 registered while a submission command of its kind runs" \
	    "$(cat "$T/spoold.log")" "spoold's log"
	id=$(spool submit -- echo ok) || fail "submit"
	spool wait --timeout 10s "$id" > /dev/null ||
	    fail "not run while sbatch hung: $(spool status "$id" 2>&1)"
	assert_match "^default@1001-" "$(field "$id" worker)"
	pgrep -f "$T/fake/sbatch" > /dev/null || fail "sbatch no longer hangs"
	rm "$T/fq/hang-after"
	wait_for 10 grep -q "submitted slurm job 1001" "$T/spoold.log" ||
	    fail "sbatch's answer not taken: $(tail -3 "$T/spoold.log")"
	# two listings later (a scale-down follows one): nothing cancelled
	n=$(listings)
	wait_for 10 listings_past $((n + 1)) ||
	    fail "no listing after sbatch answered: $(listings) of $n; scancel: $(cat "$T/fq/scancels" 2>&1)"
	[ ! -e "$T/fq/scancels" ] || fail "cancelled: $(cat "$T/fq/scancels")"
	grep -qx "state: running" "$SPOOL/jobs/1001" ||
	    fail "record: $(cat "$SPOOL/jobs/1001")"
	assert_eq 1001 "$(cat "$T/fq/next")" "the last job submitted"
	# and cancelled once on a stop
	spool shutdown > "$T/out" 2>&1 &
	wait_for 10 test -e "$T/fq/scancels" ||
	    fail "not cancelled: $(tail -5 "$T/spoold.log")"
	kill -TERM "$WORKER_PID"
	wait_for 20 not_running "$SPOOLD_PID" || fail "spoold did not stop"
	assert_eq 1001 "$(cat "$T/fq/scancels")" "scancel calls"
}

# A worker of a job with no record may register while a stop's cancel
# command hangs (here one scancel for jobs 1001 and 1002, which fails
# once let go): its job is recorded then, which grows the list of jobs
# that the stop is walking (the cancels one at a time that follow come
# from a copy of it: under AddressSanitizer, a read of the list freed
# by that growth stops spoold), and the job is cancelled with the rest.
test_a_job_recorded_during_a_stops_cancel_is_cancelled_too() {
	local rc
	fake_slurm_spool
	echo '  job-array: false' >> "$SPOOL/spool.yaml"
	start_spoold
	spool scale --jobs 2 2>/dev/null || fail "scale"
	wait_for 10 grep -q "submitted slurm job 1002" "$T/spoold.log" ||
	    fail "jobs not submitted: $(tail -3 "$T/spoold.log")"
	touch "$T/fq/scancel-hang"
	spool shutdown > "$T/out" 2>&1 &
	wait_for 10 test -e "$T/fq/scancel-hung" || fail "no scancel"
	echo "1003 RUNNING None" >> "$T/fq/queue"
	start_worker default@1003 --job 1003
	wait_for 10 grep -q "worker job 1003 has no record" "$T/spoold.log" ||
	    fail "not recorded during the cancel: $(tail -3 "$T/spoold.log")"
	rm "$T/fq/scancel-hang"
	wait_for 10 grep -qx 1003 "$T/fq/scancels" ||
	    fail "job 1003 not cancelled: $(cat "$T/fq/scancels")"
	kill -TERM "$WORKER_PID"
	wait_for 20 not_running "$SPOOLD_PID" || fail "spoold did not stop"
	wait "$SPOOLD_PID"
	rc=$?
	assert_eq 0 "$rc" "spoold's exit status"
	assert_eq "1001 1002
1001
1002
1003" "$(cat "$T/fq/scancels")" "scancel calls"
	[ ! -s "$T/fq/queue" ] || fail "queue: $(cat "$T/fq/queue")"
}

# A worker of a job with no record may register while squeue runs, its
# listing of the queue taken before the job was there (here squeue
# prints the queue it read, then hangs until let go): its job, recorded
# then, is not in that listing, which does not make it ended; the next
# listing shows it running, and a stop cancels it.
test_a_job_recorded_during_a_listing_is_judged_by_the_next() {
	local n
	fake_slurm_spool
	start_spoold
	spool scale 1 2>/dev/null || fail "scale"
	wait_for 10 grep -q "submitted slurm job 1001" "$T/spoold.log" ||
	    fail "job not submitted: $(tail -3 "$T/spoold.log")"
	touch "$T/fq/squeue-hang"
	wait_for 10 test -e "$T/fq/squeue-hung" || fail "no squeue"
	echo "1002 RUNNING None" >> "$T/fq/queue"
	start_worker default@1002 --job 1002
	wait_for 10 grep -q "worker job 1002 has no record" "$T/spoold.log" ||
	    fail "not recorded during the listing: $(tail -3 "$T/spoold.log")"
	n=$(listings)
	rm "$T/fq/squeue-hang"
	# the next squeue begins once what the one that hung said is taken
	wait_for 10 listings_past "$n" || fail "no listing after the one that hung"
	grep -qx "state: running" "$SPOOL/jobs/1002" ||
	    fail "record: $(cat "$SPOOL/jobs/1002")"
	assert_no_match "job 1002 (failed|ended)" "$(cat "$T/spoold.log")" \
	    "spoold's log"
	spool shutdown > "$T/out" 2>&1 &
	wait_for 10 grep -q 1002 "$T/fq/scancels" ||
	    fail "job 1002 not cancelled: $(cat "$T/fq/scancels" 2>&1; cat "$SPOOL/jobs/1002")"
	kill -TERM "$WORKER_PID"
	wait_for 20 not_running "$SPOOLD_PID" || fail "spoold did not stop"
}

# A listing gives a job it does not show yet JOBS_LIST_GRACE_MS (10 s)
# from its submission to when the listing was asked for, not to when it
# answered: spoold's clock moves on while it waits (its tasks go on).
# Here the job reaches the queue 2 s after sbatch, and the first squeue
# after it answers 11 s late with the queue as it was when asked: that
# listing does not show the job, the next one does, and the job stays
# pending.
test_a_slow_listing_counts_the_grace_to_when_it_was_asked() {
	fake_slurm_spool
	cat > "$T/fake/sbatch" <<EOF2
#!/bin/sh
( sleep 2; echo "1001 PENDING Priority" >> "$T/fq/queue" ) > /dev/null 2>&1 &
touch "$T/fq/submitted"
echo 1001
EOF2
	cat > "$T/fake/squeue" <<EOF2
#!/bin/sh
q=\$(cat "$T/fq/queue" 2>/dev/null)
if [ -e "$T/fq/submitted" ] && [ ! -e "$T/fq/listed" ]; then
	sleep 11
	touch "$T/fq/listed"
fi
echo "\$q"
EOF2
	start_spoold
	spool scale 1 2>/dev/null || fail "scale"
	wait_for 10 test -e "$SPOOL/jobs/1001" || fail "not submitted"
	wait_for 30 grep -q "^1001 " "$T/fq/queue" || fail "not queued"
	wait_for 30 test -e "$T/fq/listed" || fail "not listed"
	wait_for 10 grep -Eqx "reason: \"?Priority\"?" "$SPOOL/jobs/1001" ||
	    fail "the next listing was not taken in: $(cat "$SPOOL/jobs/1001")"
	grep -qx "state: pending" "$SPOOL/jobs/1001" ||
	    fail "record: $(cat "$SPOOL/jobs/1001")"
	# not failed and asked for again (the fake gives the same ID)
	assert_no_match "failed" "$(cat "$T/spoold.log")" "spoold's log"
	assert_eq 1 "$(grep -c "submitted slurm job" "$T/spoold.log")" \
	    "submissions"
	spool shutdown > /dev/null 2>&1 || fail "shutdown"
	wait_for 40 not_running "$SPOOLD_PID" || fail "spoold did not stop"
}

# sbatch_hangs hang|hang-after: a Slurm spool of size 1 whose sbatch
# hangs, before or after taking the job (fake_slurm).
sbatch_hangs() {
	fake_slurm_spool
	touch "$T/fq/$1"
	start_spoold
	spool scale 1 2>/dev/null || fail "scale"
	wait_for 10 test -e "$T/fq/hung" || fail "sbatch not run"
}
# spoold_killed_while_sbatch_hangs hang|hang-after: and its spoold is
# killed (SIGKILL) meanwhile; sbatch then lets go.
spoold_killed_while_sbatch_hangs() {
	sbatch_hangs "$1"
	kill -KILL "$SPOOLD_PID"
	wait_for 10 not_running "$SPOOLD_PID" || fail "spoold survived SIGKILL"
	rm "$T/fq/$1"
}

# A spoold killed after sbatch took a job but before it recorded it
# (here sbatch hangs after printing the ID) leaves a job nobody follows.
# When its worker registers, naming that job of a batch kind, the next
# spoold records it, and cancels it on a stop like any other.
test_unrecorded_batch_job_is_recorded_when_its_worker_registers() {
	spoold_killed_while_sbatch_hangs hang-after
	[ ! -e "$SPOOL/jobs/1001" ] || fail "recorded already"
	# the batch system starts it: its worker, as the job script runs it
	sed -i 's/^1001 PENDING .*/1001 RUNNING None/' "$T/fq/queue"
	start_worker default@1001 --job 1001
	first=$WORKER_PID
	# a worker merely named so (no --job) is no batch job of ours
	start_worker default@7 --idle-timeout 10m
	start_spoold
	wait_for 10 test -e "$SPOOL/jobs/1001" ||
	    fail "no record: $(ls "$SPOOL/jobs"; tail -5 "$T/spoold.log")"
	wait_for 10 grep -qx "state: running" "$SPOOL/jobs/1001" ||
	    fail "record: $(cat "$SPOOL/jobs/1001")"
	grep -q "worker job 1001 has no record" "$T/spoold.log" ||
	    fail "not said: $(tail -5 "$T/spoold.log")"
	[ ! -e "$SPOOL/jobs/7" ] || fail "worker default@7 taken for a job"
	# counted: the size is met, no other job was asked for
	[ ! -e "$T/fq/next" ] || assert_eq 1001 "$(cat "$T/fq/next")" "jobs"
	# and cancelled on a stop, after which its worker ends
	spool shutdown > "$T/out" 2>&1 &
	wait_for 10 grep -qx 1001 "$T/fq/scancels" ||
	    fail "not cancelled: $(tail -5 "$T/spoold.log")"
	kill -TERM "$WORKER_PID" "$first"
	wait_for 10 not_running "$SPOOLD_PID" || fail "spoold did not stop"
}

# ... and one that never starts is found all the same: a submission
# whose answer no spoold read leaves its script (jobs/script.*@KIND.sh),
# and the next spoold looks for the jobs submitted from it in the queue
# (squeue -o "%i %o"), records them and cancels them on a stop.  Before,
# the job stayed queued after "spool shutdown", no record naming it.
# stop_empties_the_queue [ID...]: spool shutdown stops spoold, each ID
# among the jobs it cancelled, and leaves the fake queue empty.
stop_empties_the_queue() {
	local id
	spool shutdown > /dev/null 2>&1 || fail "shutdown"
	wait_for 40 not_running "$SPOOLD_PID" || fail "spoold did not stop"
	for id; do
		grep -qw "$id" "$T/fq/scancels" 2>/dev/null ||
		    fail "$id not cancelled: $(cat "$T/fq/scancels" 2>&1)"
	done
	[ ! -s "$T/fq/queue" ] || fail "queue after the stop: $(cat "$T/fq/queue")"
}
unread_scripts() {
	ls "$SPOOL/jobs" | grep '^script\.' || true
}
test_a_job_left_by_an_unanswered_sbatch_is_found_without_its_worker() {
	local n
	spoold_killed_while_sbatch_hangs hang-after
	assert_match '^script\..*@default\.sh$' "$(unread_scripts)" \
	    "the script left"
	start_spoold
	wait_for 20 grep -q "left 1 job in the slurm queue: 1001; recorded" \
	    "$T/spoold.log" ||
	    fail "not found: $(ls "$SPOOL/jobs"; tail -5 "$T/spoold.log")"
	assert_match "a submission whose answer no spoold read" \
	    "$(cat "$T/spoold.log")" "spoold's log"
	grep -qx "kind: default" "$SPOOL/jobs/1001" ||
	    fail "record: $(cat "$SPOOL/jobs/1001")"
	[ -e "$SPOOL/jobs/1001.sh" ] || fail "its script not kept as 1001.sh"
	assert_eq "" "$(unread_scripts)" "scripts left"
	stop_empties_the_queue 1001
	n=$(wc -l < "$T/fq/script-listings")
	assert_eq 1 "$n" "listings of the scripts"
	assert_eq "-h -r -u $(id -un) -n ckworker -o %i %o" \
	    "$(cat "$T/fq/script-listings")" "squeue's arguments"
}

# A submission whose answer was never read that took no job (sbatch hung
# before taking it) leaves no record: its script is removed once a
# listing shows no job submitted from it.  (Before the scripts were
# looked for, the next spoold removed such a script at its start.)
test_an_unanswered_sbatch_that_took_no_job_leaves_nothing() {
	spoold_killed_while_sbatch_hangs hang
	spool scale 0 2>/dev/null || fail "scale 0"
	start_spoold
	wait_for 20 grep -q "left no job in the slurm queue" "$T/spoold.log" ||
	    fail "not settled: $(ls "$SPOOL/jobs"; tail -5 "$T/spoold.log")"
	assert_eq "" "$(unread_scripts)" "scripts left"
	assert_eq "" "$(ls "$SPOOL/jobs")" "job records"
	spool shutdown > /dev/null 2>&1 || fail "shutdown"
	wait_for 40 not_running "$SPOOLD_PID" || fail "spoold did not stop"
	[ ! -e "$T/fq/scancels" ] || fail "scancel: $(cat "$T/fq/scancels")"
}

# sbatch_fails fail-after|connect-fails TEXT: a Slurm spool of size 1
# whose first sbatch fails (fake_slurm), saying TEXT.
sbatch_fails() {
	fake_slurm_spool
	touch "$T/fq/$1"
	start_spoold
	spool scale 1 2>/dev/null || fail "scale"
	wait_for 10 grep -qF "submitting a worker job failed: sbatch: error: Batch job submission failed: " \
	    "$T/spoold.log" || fail "no failure: $(tail -3 "$T/spoold.log")"
	assert_match "submitting a worker job failed: .*$2" \
	    "$(cat "$T/spoold.log")" "spoold's log"
}

# An sbatch that says it failed may have left a job all the same: one
# that gives up waiting for a busy slurmctld ("Socket timed out on
# send/recv operation", after its MessageTimeout of 10 s) exits 1, and
# slurmctld then takes the job it had been sent (seen on the real one:
# t_slurm.sh).  The job is found by its script 10 s later and recorded;
# the pool of 1 then has one job too many (the one submitted after the
# failure), and cancels one; a stop cancels the other.  Before, the job
# stayed queued, unknown, until its worker registered: for ever if it
# never started.
test_a_job_left_by_an_sbatch_that_said_it_failed_is_found() {
	sbatch_fails fail-after "Socket timed out"
	wait_for 20 grep -q "left 1 job in the slurm queue: 1001; recorded" \
	    "$T/spoold.log" ||
	    fail "not found: $(ls "$SPOOL/jobs"; tail -5 "$T/spoold.log")"
	assert_no_match "may have taken the job" "$(cat "$T/spoold.log")" \
	    "spoold's log (sbatch answered)"
	grep -qx "kind: default" "$SPOOL/jobs/1001" ||
	    fail "record: $(cat "$SPOOL/jobs/1001")"
	wait_for 20 queue_lines_are 1 ||
	    fail "not scaled down to 1: $(cat "$T/fq/queue"; tail -3 "$T/spoold.log")"
	stop_empties_the_queue 1001
	assert_eq "" "$(unread_scripts)" "scripts left"
}
queue_lines_are() {
	[ "$(grep -c . "$T/fq/queue")" -eq "$1" ]
}

# The failure such an sbatch was counted as is taken back once its job
# is found: its failed.* record goes, and a kind that had stopped
# submitting on that count (max-submit-failures: 1 here) submits again:
# a pool of 2 whose first sbatch "failed" gets its second job.  Before,
# the kind stayed stopped with one job, the failure said in "spool
# workers", until a size was asked again.
# a_pool_of_2_stops_on_its_first_failure: a Slurm pool of 2 (one job
# a submission) whose first sbatch says it failed but takes the job,
# and that stops submitting at that failure (max-submit-failures: 1).
a_pool_of_2_stops_on_its_first_failure() {
	fake_slurm_spool
	printf '  max-submit-failures: 1\n  job-array: false\n' >> \
	    "$SPOOL/spool.yaml"
	touch "$T/fq/fail-after"
	start_spoold
	spool scale 2 2>/dev/null || fail "scale"
	wait_for 10 failed_in_a_row_said 1 ||
	    fail "not stopped: $(tail -3 "$T/spoold.log")"
}
failed_in_a_row_said() {	# N: times the kind stopped on its failures
	[ "$(grep -c "1 worker jobs failed in a row; not submitting more" \
	    "$T/spoold.log")" -eq "$1" ]
}
test_a_failure_whose_job_is_found_is_taken_back() {
	a_pool_of_2_stops_on_its_first_failure
	assert_match '^failed\.' "$(ls "$SPOOL/jobs")" "the failure's record"
	assert_match "submission failed: .*Socket timed out" "$(spool workers)" \
	    "spool workers"
	assert_no_match "submitted slurm job" "$(cat "$T/spoold.log")" \
	    "spoold's log before the job is found"
	wait_for 20 grep -q "left 1 job in the slurm queue: 1001; recorded" \
	    "$T/spoold.log" ||
	    fail "not found: $(ls "$SPOOL/jobs"; tail -5 "$T/spoold.log")"
	wait_for 10 grep -q "submitted slurm job 1002" "$T/spoold.log" ||
	    fail "not submitting again: $(tail -5 "$T/spoold.log")"
	assert_match "kind default: a submission counted as failed had its job taken: submitting again \(0 failures in a row\)" \
	    "$(cat "$T/spoold.log")" "spoold's log"
	assert_no_match '^failed\.' "$(ls "$SPOOL/jobs")" "the failure's record"
	assert_no_match "submission failed" "$(spool workers)" "spool workers"
	assert_eq 2 "$(grep -c . "$T/fq/queue")" "jobs in the queue"
	stop_empties_the_queue
}

# A doubt left by a spoold killed before its listing is the next
# spoold's: the job it finds takes away the record of the failure too
# (the failed.* record names the script it is looked for by), so
# "spool workers" no longer says that submission failed.  Before, the
# record stayed its hour (JOBREC_KEEP_S), beside the job found.
test_a_job_found_after_a_restart_takes_its_failure_record_away() {
	local rec
	sbatch_fails fail-after "Socket timed out"
	kill -KILL "$SPOOLD_PID"
	wait_for 10 not_running "$SPOOLD_PID" || fail "spoold survived SIGKILL"
	rec=$(ls "$SPOOL/jobs" | grep '^failed\.') ||
	    fail "no failure record: $(ls "$SPOOL/jobs")"
	assert_match '^script: "?script\..*@default\.sh"?$' \
	    "$(grep '^script:' "$SPOOL/jobs/$rec")" "the record's script"
	assert_match "submission failed: .*Socket timed out" "$(spool workers)" \
	    "spool workers before"
	start_spoold
	wait_for 20 grep -q "left 1 job in the slurm queue: 1001; recorded" \
	    "$T/spoold.log" ||
	    fail "not found: $(ls "$SPOOL/jobs"; tail -5 "$T/spoold.log")"
	[ ! -e "$SPOOL/jobs/$rec" ] || fail "$rec left: $(cat "$SPOOL/jobs/$rec")"
	assert_no_match "submission failed" "$(spool workers)" \
	    "spool workers after"
	stop_empties_the_queue 1001
}

# A controller too busy to answer an sbatch may answer the listing that
# looks for its job before it has taken the job (its threads take the
# two requests in any order): a doubt whose first listing finds no job
# is looked for again a second later, and dropped only if that listing
# finds none either.  Here the first listing misses the job; the second
# finds it, and a stop cancels it.  Before, the first listing removed
# the script ("left no job") and the job stayed queued after the stop.
test_a_doubt_is_looked_for_twice_before_it_is_dropped() {
	sbatch_fails fail-after "Socket timed out"
	# (its listing comes 10 s after the failure)
	[ ! -e "$T/fq/script-listings" ] || fail "listed already"
	echo 1 > "$T/fq/script-listing-misses"
	wait_for 20 grep -q "left 1 job in the slurm queue: 1001; recorded" \
	    "$T/spoold.log" ||
	    fail "not found: $(ls "$SPOOL/jobs"; tail -5 "$T/spoold.log")"
	assert_eq 0 "$(cat "$T/fq/script-listing-misses")" "listings that missed it"
	assert_eq 2 "$(wc -l < "$T/fq/script-listings")" "listings of the scripts"
	assert_no_match "left no job" "$(cat "$T/spoold.log")" "spoold's log"
	wait_for 20 queue_lines_are 1 ||
	    fail "not scaled down to 1: $(cat "$T/fq/queue"; tail -3 "$T/spoold.log")"
	stop_empties_the_queue 1001
}

# ... but only from the count of failures it was counted in: here a
# new size (3) starts the count again, and its first sbatch fails for
# good (connect failure), which stops the kind again (1 in a row, as
# max-submit-failures says).  The job of the first size's failure is
# found after that: its failed.* record goes, but the new count keeps
# its failure and the kind stays stopped until a size is asked again.
# Before, the found job lowered the new count to 0: "a submission
# counted as failed had its job taken: submitting again", and one more
# sbatch that failed.
test_a_found_job_takes_back_no_failure_of_a_later_count() {
	a_pool_of_2_stops_on_its_first_failure
	touch "$T/fq/connect-fails"
	spool scale 3 2>/dev/null || fail "scale 3"
	wait_for 10 failed_in_a_row_said 2 ||
	    fail "not stopped again: $(tail -3 "$T/spoold.log")"
	assert_eq 1002 "$(cat "$T/fq/next")" "sbatch calls, the last"
	wait_for 20 grep -q "left 1 job in the slurm queue: 1001; recorded" \
	    "$T/spoold.log" ||
	    fail "not found: $(ls "$SPOOL/jobs"; tail -5 "$T/spoold.log")"
	grep -qx "kind: default" "$SPOOL/jobs/1001" ||
	    fail "record: $(cat "$SPOOL/jobs/1001")"
	assert_eq 1 "$(ls "$SPOOL/jobs" | grep -c '^failed\.')" \
	    "failed.* records (the connect failure's)"
	assert_match "submission failed: .*connect failure" "$(spool workers)" \
	    "spool workers"
	spool shutdown > /dev/null 2>&1 || fail "shutdown"
	wait_for 40 not_running "$SPOOLD_PID" || fail "spoold did not stop"
	assert_no_match "had its job taken" "$(cat "$T/spoold.log")" \
	    "spoold's log"
	failed_in_a_row_said 2 ||
	    fail "stopped on failures not twice: $(grep 'in a row' "$T/spoold.log")"
	assert_eq 1002 "$(cat "$T/fq/next")" "sbatch calls, the last"
	grep -qw 1001 "$T/fq/scancels" 2>/dev/null ||
	    fail "1001 not cancelled: $(cat "$T/fq/scancels" 2>&1)"
}

# ... but one that could not even connect to slurmctld sent nothing:
# its script is removed at once, no listing looks for its job, and a
# stop does not wait for one (before the connect failures were told
# apart, the stop waited for a listing that, with slurmctld down,
# would fail until it gave up 30 s later).
test_an_sbatch_that_could_not_connect_leaves_no_doubt() {
	sbatch_fails connect-fails "(connect failure)"
	assert_eq "" "$(unread_scripts)" "scripts left"
	spool shutdown > /dev/null 2>&1 || fail "shutdown"
	wait_for 40 not_running "$SPOOLD_PID" || fail "spoold did not stop"
	[ ! -e "$T/fq/script-listings" ] ||
	    fail "its job looked for: $(cat "$T/fq/script-listings")"
	assert_no_match "unconfirmed" "$(cat "$T/spoold.log")" "spoold's log"
}

# A doubt whose listing fails stays: the failure is said once, however
# often the listing is tried again (at each poll, every 200 ms here); a
# stop that comes meanwhile waits its 30 s for it, then gives up and
# names the script, which it leaves for the next spoold; that one finds
# the job (journal event "adopted") and cancels it at its own stop.
script_listings_reach() {
	[ "$(wc -l < "$T/fq/script-listings")" -ge "$1" ]
}
test_a_doubt_whose_listing_fails_is_left_to_the_next_spoold() {
	local script
	sbatch_fails fail-after "Socket timed out"
	touch "$T/fq/script-listing-fails"
	wait_for 20 test -e "$T/fq/script-listings" ||
	    fail "no listing of the scripts: $(tail -3 "$T/spoold.log")"
	wait_for 10 script_listings_reach 4 ||
	    fail "not tried again: $(cat "$T/fq/script-listings")"
	assert_eq 1 "$(grep -c 'finding the slurm jobs of unconfirmed submissions: squeue: .*Socket timed out' "$T/spoold.log")" \
	    "reports of the failing listing"
	script=$(unread_scripts)
	assert_match '^script\..*@default\.sh$' "$script" "the script kept"
	spool shutdown > /dev/null 2>&1
	wait_for 45 not_running "$SPOOLD_PID" || fail "spoold did not stop"
	assert_match "stopping: still waiting after 30 s; giving up" \
	    "$(cat "$T/spoold.log")" "spoold's log"
	grep -qF "kind default: the unconfirmed submission may have left a job in the slurm queue, not found yet: its script is $SPOOL/jobs/$script; cancel it by hand if so" \
	    "$T/spoold.log" || fail "script not named: $(tail -5 "$T/spoold.log")"
	assert_eq "$script" "$(unread_scripts)" "the script left"
	grep -q '^1001 ' "$T/fq/queue" || fail "1001 gone: $(cat "$T/fq/queue")"
	! grep -qw 1001 "$T/fq/scancels" 2>/dev/null || fail "1001 cancelled"
	# the next spoold, whose listing answers
	rm "$T/fq/script-listing-fails"
	start_spoold
	wait_for 20 grep -q "jobs/$script left 1 job in the slurm queue: 1001; recorded" \
	    "$T/spoold.log" ||
	    fail "not found: $(ls "$SPOOL/jobs"; tail -5 "$T/spoold.log")"
	wait_for 10 journal_matches "job 1001 adopted kind=default backend=slurm" ||
	    fail "journal: $(spool journal | grep 1001)"
	stop_empties_the_queue 1001
	assert_eq "" "$(unread_scripts)" "scripts left"
}

# The same without a restart: an sbatch that took its job and then gave
# no answer for 30 s (BATCH_LIMIT_MS; a busy slurmctld) is killed, the
# submission counts as failed, and a stop that comes then finds the job
# by its script and cancels it.
test_a_stop_cancels_the_job_of_an_sbatch_killed_at_its_limit() {
	sbatch_hangs hang-after
	wait_for 45 grep -q "may have taken the job all the same" \
	    "$T/spoold.log" || fail "not said: $(tail -3 "$T/spoold.log")"
	assert_match "sbatch: no answer in 30 s; killed" \
	    "$(cat "$T/spoold.log")" "spoold's log"
	rm "$T/fq/hang-after"
	stop_empties_the_queue 1001
	assert_match "left 1 job in the slurm queue: 1001; recorded" \
	    "$(cat "$T/spoold.log")" "spoold's log"
	assert_eq "" "$(unread_scripts)" "scripts left"
}

# A size asked (spool scale) while spoold's listings of scale/ fail (an
# I/O error) is acted on at the rescan after the last failure: it is
# there before spoold starts, whose first listings of scale/ (at its
# first pass, and at two rescans for the stamp it had not taken) fail;
# after them spoold listed scale/ again only at the tenth rescan
# (DIRSTAMP_FORCE), starting no job meanwhile.
test_a_size_asked_is_taken_at_the_rescan_after_a_failed_listing() {
	local_spool
	spool scale 1 2>/dev/null || fail "scale"
	CKSPOOL_NO_INOTIFY=1 \
	    CKSPOOL_FAULT="count=all,list-fails=scale:EIO*3" start_spoold
	wait_for 10 failed_listings_reach scale 3 ||
	    fail "not three failed listings: $(grep 'list' "$T/spoold.log")"
	tick_control 1
	tick_control 2
	[ "$(ls "$SPOOL/jobs")" ] ||
	    fail "no job started a rescan after the failed listings: $(tail -3 "$T/spoold.log")"
	assert_eq 1 "$(grep -c 'list: scale: Input/output error' "$T/spoold.log")" \
	    "reports of the failed listings"
	assert_match "recovered: list-scale" "$(cat "$T/spoold.log")" "its end"
	spool shutdown > /dev/null 2>&1
	stop_spoold
}
