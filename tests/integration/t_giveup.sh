# t_giveup.sh - what a worker hands back or gives up on, and says so:
# tasks that no longer fit before its own end (--walltime), a task whose
# process SIGKILL does not end (stuck in the kernel), and the GPU such a
# process keeps.  Most of their time is waiting for walltimes and
# timeouts, not CPU, so unlike t_limits.sh they run beside other tests.

# A worker with an end: a task whose walltime no longer fits when it
# would start is handed back, a long task is never placed there, and a
# running task is handed back before the end; another worker runs all.
test_worker_walltime_refuses_late_task_and_hands_back_running_one() {
	local a b long
	new_spool
	start_spoold
	# drains 60 s before its end: 20 s after it starts
	start_worker short --cores 1 --walltime 80s
	short_pid=$WORKER_PID
	assert_match "ends: in 1:20 \\(--walltime\\)" \
	    "$(cat "$T/worker-short.log")" "the worker's end in its log"
	a=$(spool submit -- sh -c 'echo attempt $SPOOL_ATTEMPT; [ "$SPOOL_ATTEMPT" -gt 1 ] || sleep 100') ||
	    fail "submit a"
	wait_for 20 state_is "$a" running || fail "a not running"
	# placed now (12 s fit before the drain) but it waits behind a
	b=$(spool submit --walltime 12s -- echo b) || fail "submit b"
	long=$(spool submit --walltime 10m -- echo long) || fail "submit long"
	wait_for 30 grep -q "task $b attempt 1: its walltime (12) does not end before this worker drains" \
	    "$T/worker-short.log" || fail "b was not refused"
	wait_for 10 grep -q "task $b attempt 1 handed back" "$T/spoold.log" ||
	    fail "spoold did not take b back"
	# the worker drains before its end and hands a back
	wait_for 40 grep -q "draining (the worker's walltime is ending)" \
	    "$T/worker-short.log" || fail "no drain before the end"
	wait_for 20 grep -q "task $a attempt 1 handed back" "$T/spoold.log" ||
	    fail "a was not handed back"
	wait_for 20 not_running "$short_pid" || fail "the worker did not leave"
	for t in "$a" "$b" "$long"; do
		finished "$t" && fail "task $t finished on the short worker"
	done
	start_worker long --cores 1
	spool wait "$a" "$b" "$long" || fail "tasks on the second worker"
	assert_eq "attempt 2" "$(task_stdout "$a")" "a ran again"
	assert_eq 2 "$(field "$b" attempt)" "b's second placement"
	# never placed on the short worker: its first placement ran it
	assert_eq 1 "$(field "$long" attempt)" "long placed once"
}

# A task handed back because it waited in the inbox until it could no
# longer end before the worker drains does not end that worker's use:
# its status counts such hand-backs ("late"), and spoold goes on placing
# tasks short enough there.  It once took any hand-back for a drain and
# placed nothing more on the worker until its end.
test_a_task_handed_back_for_time_leaves_its_worker_in_use() {
	local a b c wid
	new_spool
	start_spoold
	# drains 60 s before its end: 20 s after it starts
	start_worker short --cores 1 --walltime 80s
	wid=$(worker_wid short)
	a=$(spool submit -- sh -c "until [ -e '$T/go' ]; do sleep 0.05; done") ||
	    fail "submit a"
	wait_for 20 state_is "$a" running || fail "a not running"
	# placed now (12 s fit before the drain) but it waits behind a
	b=$(spool submit --walltime 12s -- echo b) || fail "submit b"
	wait_for 30 grep -q "task $b attempt 1: its walltime (12) does not end before this worker drains" \
	    "$T/worker-short.log" || fail "b was not refused"
	wait_for 10 grep -q "task $b attempt 1 handed back" "$T/spoold.log" ||
	    fail "spoold did not take b back"
	assert_match "^late: 1$" "$(cat "$SPOOL/workers/$wid/status")" \
	    "the worker's status"
	c=$(spool submit --walltime 2s -- echo c) || fail "submit c"
	touch "$T/go"
	wait_for 15 finished "$c" ||
	    fail "c was not run by the worker that handed b back: $(state_of "$c"); $(spool workers 2>&1)"
	assert_eq "$wid" "$(field "$c" worker)" "c's worker"
	spool wait "$a" || fail "a failed"
	state_is "$b" queued || fail "b is $(state_of "$b"), not queued"
}

# A GPU task leaves a process that SIGKILL cannot end (lib.sh,
# stuck_setup).  The worker keeps the GPU; 10 s on it says so in
# its status and hands back the GPU task that waits for it, and spoold,
# told, places that task on another worker and none on the stuck GPU.
# Once the process ends (the daemon continued), the GPU is the first
# worker's again, for both.
gpu_stuck() {
	local method=$1 a b d wid1 wid2 w2
	new_spool
	start_spoold
	unset CUDA_VISIBLE_DEVICES	# (this test's subshell only)
	start_worker gpu1 --cores 2 --gpus 1 --memory-limit "$method" \
	    --sample-interval 30s
	wid1=$(worker_wid gpu1)
	stuck_setup
	a=$(spool submit --gpus 1 -- "$T/stick.sh") || fail "submit"
	stuck_now "$a"
	# placed on the worker that seems to have a GPU free, waiting there
	b=$(spool submit --gpus 1 -- echo b) || fail "submit"
	wait_for 10 state_is "$b" placed || fail "task $b not placed: $(state_of "$b")"
	wait_for 30 grep -q "^gpus_held: 1$" "$SPOOL/workers/$wid1/status" ||
	    fail "status: $(cat "$SPOOL/workers/$wid1/status")"
	wait_for 10 state_is "$b" queued ||
	    fail "task $b not handed back: $(state_of "$b"): $(tail -5 "$T/worker-gpu1.log")"
	assert_match "task $a attempt 1: processes of it are still there 1[0-9] s after SIGKILL; its 1 GPU stays kept, and tasks that need them are handed back" \
	    "$(cat "$T/worker-gpu1.log")" "the worker's log"
	assert_match "task $b attempt 1: it needs 1 GPU, 1 of this worker's 1 is kept by processes of ended tasks that SIGKILL did not end; handing it back" \
	    "$(cat "$T/worker-gpu1.log")" "the worker's log"
	assert_match "^$wid1 +[^ ]+ +gpus-held " "$(spool workers)" "spool workers"
	assert_match "^$wid1 +[^ ]+ +gpus-held " "$(spool top --once)" "spool top"
	# spoold has read the status when it has taken the task back (a
	# rescan's time after the hand-back where inotify is off)
	wait_for 10 grep -q "worker $wid1: 1 of its 1 GPUs is kept by processes of ended tasks" \
	    "$T/spoold.log" || fail "spoold: $(tail -5 "$T/spoold.log")"
	wait_for 10 grep -q "task $b attempt 1 handed back by $wid1" "$T/spoold.log" ||
	    fail "spoold: $(tail -5 "$T/spoold.log")"
	wait_for 10 journal_matches 'gpus-held n=1' ||
	    fail "journal: $(spool journal | tail -5)"
	wait_for 10 summary_is workers_gpus_held 1 ||
	    fail "summary: $(cat "$SPOOL/state/summary")"
	# another worker with a GPU runs it; the stuck one is not counted on
	start_worker gpu2 --cores 1 --gpus 1 --memory-limit "$method"
	w2=$WORKER_PID
	wid2=$(worker_wid gpu2)
	spool wait --timeout 20 "$b" || fail "task $b: $(spool status "$b")"
	assert_eq "$wid2" "$(field "$b" worker)" "the worker of $b"
	assert_eq "1" "$(grep -c "task $b attempt 1: it needs" "$T/worker-gpu1.log")" \
	    "hand-backs of $b by $wid1"
	# the stuck process ends: the GPU is free again, for both
	stuck_end
	wait_for 10 grep -q "task $a attempt 1: nothing of it left; its GPUs are free" \
	    "$T/worker-gpu1.log" || fail "worker: $(tail -5 "$T/worker-gpu1.log")"
	wait_for 10 sh -c "! grep -q gpus_held '$SPOOL/workers/$wid1/status'" ||
	    fail "status: $(cat "$SPOOL/workers/$wid1/status")"
	wait_for 10 grep -q "worker $wid1: its GPUs are free again" "$T/spoold.log" ||
	    fail "spoold: $(tail -5 "$T/spoold.log")"
	wait_for 10 summary_is workers_gpus_held 0 ||
	    fail "summary: $(cat "$SPOOL/state/summary")"
	kill -TERM "$w2"
	wait_for 20 grep -q "worker $wid2 (gpu2) exited" "$T/spoold.log" ||
	    fail "spoold: $(tail -5 "$T/spoold.log")"
	d=$(spool submit --gpus 1 -- echo d) || fail "submit"
	spool wait --timeout 20 "$d" || fail "task $d: $(spool status "$d")"
	assert_eq "$wid1" "$(field "$d" worker)" "the worker of $d"
	fusermount3 -u "$T/mnt" || fail "unmount"
	note "$method: $a's leftover was stuck; $b went to $wid2, $d to $wid1"
}

test_gpu_stuck_is_not_counted_on_with_cgroup() {
	gpu_stuck cgroup
}

test_gpu_stuck_is_not_counted_on_with_watchdog() {
	gpu_stuck watchdog
}

# A task whose main process SIGKILL does not end (stuck in the kernel:
# lib.sh's stick-main.sh reads from a FUSE daemon stopped once it has
# the read) is given up --unkillable-timeout after its SIGKILL: its
# outcome is committed as the kill's (walltime, signal 9; a leaving
# worker's hands it back), saying that the process did not end; its
# cores go to the next task, its GPU stays kept; and a worker told to
# leave leaves.  Before, the worker waited for ever to reap it: the task
# stayed running, its walltime meant nothing, and a worker sent SIGTERM
# never left.
unkillable_main() {
	local method=$1 a b c pa pc p wid log rc
	new_spool
	start_spoold
	unset CUDA_VISIBLE_DEVICES	# (this test's subshell only)
	start_worker w --cores 2 --gpus 1 --memory-limit "$method" \
	    --kill-grace 1s --unkillable-timeout 2s
	p=$WORKER_PID
	wid=$(worker_wid w) || fail "no worker"
	log=$T/worker-w.log
	stuck_setup
	a=$(spool submit --walltime 5 --gpus 1 -- "$T/stick-main.sh") ||
	    fail "submit"
	c=$(spool submit -- "$T/stick-main.sh") || fail "submit"
	stuck_main "$a"
	pa=$STUCK_MAIN
	stuck_main "$c"
	pc=$STUCK_MAIN
	kill -STOP "$STUCK_FS"
	# a: SIGTERM at its walltime, SIGKILL 1 s on, given up 2 s after
	spool wait --timeout 30 "$a" > /dev/null
	finished "$a" || fail "task $a: $(spool status "$a"): $(tail -3 "$log")"
	uninterruptible "$pa" ||
	    fail "$a's process is not stuck: $(cat "/proc/$pa/stat" 2>&1)"
	assert_eq failed "$(field "$a" state)" "state of $a"
	assert_eq walltime "$(field "$a" reason)" "reason of $a"
	assert_eq 9 "$(field "$a" signal)" "signal of $a"
	assert_match "^walltime of 5 \(5 s\) exceeded; stopped; its process $pa did not end 2 s after SIGKILL \(stuck in the kernel: state D" \
	    "$(field "$a" message)" "message of $a"
	assert_match "task $a attempt 1: its process $pa did not end 2 s after SIGKILL \(stuck in the kernel: state D.*\); giving it up" \
	    "$(cat "$log")" "the worker's log"
	assert_match "task $a attempt 1: its GPUs \(0\) are kept until the processes it left are gone" \
	    "$(cat "$log")" "the worker's log"
	# its core is free: b runs beside c
	b=$(spool submit -- echo b) || fail "submit"
	spool wait --timeout 20 "$b" > /dev/null || fail "task $b: $(spool status "$b")"
	assert_eq "$wid" "$(field "$b" worker)" "the worker of $b"
	# a's process ends once spoolfs goes on (c's read is only taken on
	# again): the worker reaps it as no task's, and frees its GPU
	STUCK_PID=$pa
	stuck_end
	wait_for 10 grep -q "task $a attempt 1: its process $pa, given up, ended at last" "$log" ||
	    fail "worker: $(tail -3 "$log")"
	wait_for 10 grep -q "task $a attempt 1: nothing of it left; its GPUs are free" "$log" ||
	    fail "worker: $(tail -3 "$log")"
	kill -STOP "$STUCK_FS"
	# told to leave, the worker stops c, gives its process up and leaves
	kill -TERM "$p"
	wait_for 30 not_running "$p" || fail "the worker stayed: $(tail -3 "$log")"
	wait "$p"
	rc=$?
	assert_eq 0 "$rc" "the worker's exit status"
	assert_match "task $c attempt 1: its process $pc did not end 2 s after SIGKILL .*; giving it up" \
	    "$(cat "$log")" "the worker's log"
	wait_for 10 grep -q "task $c attempt 1 handed back by $wid" "$T/spoold.log" ||
	    fail "spoold: $(tail -5 "$T/spoold.log")"
	uninterruptible "$pc" ||
	    fail "$c's process is not stuck: $(cat "/proc/$pc/stat" 2>&1)"
	STUCK_PID=$pc
	stuck_end
	fusermount3 -u "$T/mnt" || fail "unmount"
	note "$method: $a given up at its walltime, $c as its worker left"
}

test_unkillable_main_process_given_up_with_cgroup() {
	unkillable_main cgroup
}

test_unkillable_main_process_given_up_with_watchdog() {
	unkillable_main watchdog
}
