# t_crash.sh - kills, losses and leaving: nothing lost, nothing twice.
# across hosts: yes

# every task of ids file F finished exactly once with output "r<input>"
check_outputs() {
	local ids=$1 n=0 id
	while read -r id; do
		n=$((n + 1))
		assert_eq "r$n" "$(task_stdout "$id")" "output of task $id"
		assert_eq done "$(field "$id" state)" "state of task $id"
	done < "$ids"
}

test_kill_worker_mid_task() {
	new_spool
	start_spoold
	start_worker w1 --cores 1
	# attempt 1 waits for the gate, opened once its worker is killed:
	# it cannot end before the kill, however slow the machine
	id=$(spool submit -- sh -c \
	    'echo attempt $SPOOL_ATTEMPT; while [ ! -e "$1" ]; do sleep 0.05; done' \
	    _ "$T/go")
	wait_for 10 state_is "$id" running || fail "not running"
	kill -9 "$WORKER_PID"
	touch "$T/go"
	# lost after lost-timeout (2 s), then requeued with attempt 2
	wait_for 15 grep -q "worker w1-.* lost: no heartbeat" "$T/spoold.log" ||
	    fail "worker not declared lost"
	start_worker w2 --cores 1
	spool wait "$id" || fail "requeued task failed"
	assert_eq 2 "$(field "$id" attempt)" "attempt after the loss"
	assert_eq "attempt 2" "$(task_stdout "$id")"
	assert_match "^w2-" "$(field "$id" worker)"
	assert_match "task $id attempt 1 requeued: no heartbeat" "$(cat "$T/spoold.log")"
	# the lost worker's directory is cleaned up
	wait_for 15 sh -c "! ls '$SPOOL/workers' | grep -q '^w1-'" ||
	    fail "lost worker's directory left behind"
}

# requeued/ID is written at every requeue, the first attempt's too, and
# goes when the task is final (spool-layout(5)): a task requeued after
# attempt 1 and cancelled before a second one kept it (spoold removed
# it only for tasks past attempt 1).
test_requeued_record_of_a_task_final_at_attempt_1_is_removed() {
	new_spool
	start_spoold
	start_worker w1 --cores 1
	id=$(spool submit -- sh -c 'while :; do sleep 0.05; done') ||
	    fail "submit"
	wait_for 10 state_is "$id" running || fail "not running"
	kill -9 "$WORKER_PID"
	wait_for 15 test -e "$SPOOL/requeued/$id" || fail "not requeued"
	spool cancel "$id" || fail "cancel"
	wait_for 10 finished "$id" || fail "not cancelled"
	assert_eq cancelled "$(field "$id" state)" "state of task $id"
	assert_eq 1 "$(field "$id" attempt)" "its attempt"
	wait_for 10 test ! -e "$SPOOL/requeued/$id" ||
	    fail "requeued/$id left behind by a final task"
}

# requeued/ID keeps a requeued task's attempt number, tries and losses
# for a restarted spoold (finish.c).  One that could not be written
# (requeued/ made immutable: EPERM) is written before the task's next
# attempt is placed, which waits until it is: a task with --retries 1
# whose retry was not recorded ran a third time once spoold restarted.
test_a_requeued_record_not_written_is_written_before_the_next_attempt() {
	local id
	new_spool
	start_spoold
	start_worker w1 --cores 1
	immutable "$SPOOL/requeued"
	id=$(spool submit --retries 1 -- sh -c "echo \$SPOOL_ATTEMPT >> '$T/runs'; [ \$SPOOL_ATTEMPT -lt 2 ] || while [ ! -e '$T/go' ]; do sleep 0.05; done; exit 1") ||
	    fail "submit"
	wait_for 20 grep -q "write: requeued/$id: " "$T/spoold.log" ||
	    fail "the failed write not said: $(tail -3 "$T/spoold.log")"
	assert_eq queued "$(state_of "$id")" "the task while its record is owed"
	assert_match "write: requeued/$id: .* \(its next attempt waits until it is written\)" \
	    "$(cat "$T/spoold.log")" "spoold's log"
	chattr -i "$SPOOL/requeued" || fail "chattr -i"
	wait_for 20 grep -qx 2 "$T/runs" || fail "attempt 2 did not start"
	assert_match "tries: 1" "$(cat "$SPOOL/requeued/$id")" "requeued/$id"
	kill -9 "$SPOOLD_PID"
	wait_for 10 not_running "$SPOOLD_PID" || fail "spoold still there"
	start_spoold
	touch "$T/go"
	wait_for 20 finished "$id" || fail "task $id not final: $(spool status "$id")"
	assert_eq failed "$(field "$id" state)" "its state"
	assert_eq 2 "$(field "$id" attempt)" "its last attempt"
	assert_eq "1 2" "$(tr '\n' ' ' < "$T/runs" | sed 's/ $//')" "attempts run"
}

# spoold and worker w1 (pid W, directory WID), the worker stopped and
# its status replaced with a record without its check line, as a
# ckworker of another version would write it.
stopped_worker_with_old_status() {
	start_spoold
	start_worker w1 --cores 1
	W=$WORKER_PID
	WID=$(worker_wid w1) || fail "no worker directory"
	kill -STOP "$W"
	printf 'beat: 1\ntime: 1.000\nrunning: 0\ncores_used: 0\nmemory_used: 0\ngpus_used: 0\ndraining: 0\n' \
	    > "$T/status"
	mv "$T/status" "$SPOOL/workers/$WID/status" || fail "replace the status"
}

STATUS_WHY="never read whole with a check line that matches \(written by a ckspool of another version\?\)"

# spoold says once that it cannot read a worker's status, and again
# when it reads it again: each such read is a beat not seen.  spool
# workers shows such a worker as no-status.
test_worker_status_unreadable_is_reported_once() {
	new_spool
	sed -i 's/^  lost-timeout: .*/  lost-timeout: 60s/' "$SPOOL/spool.yaml"
	stopped_worker_with_old_status
	local warning="worker $WID: read: workers/$WID/status: $STATUS_WHY; its beats are not seen"
	wait_for 20 grep -Eq "$warning" "$T/spoold.log" ||
	    fail "the unreadable status was not reported: $(tail -3 "$T/spoold.log")"
	# five more of spoold's heartbeats read it and fail
	local b
	b=$(spoold_beat)
	wait_for 20 beat_past $((b + 5)) || fail "spoold stopped beating"
	# spool workers shows it so, with no beat age
	assert_match "^$WID +[^ ]+ +no-status +0/1 .* +- +[^ ]+ +[^ ]+\$" \
	    "$(spool workers)" "spool workers"
	kill -CONT "$W"
	wait_for 20 grep -q "worker $WID: its status is read again" \
	    "$T/spoold.log" || fail "the status read again was not reported"
	assert_eq 1 "$(grep -Ec "$warning" "$T/spoold.log")" \
	    "warnings of the unreadable status"
	[ ! -e "$SPOOL/workers/$WID/lost" ] || fail "the worker was lost"
	wait_for 10 workers_match "^$WID +[^ ]+ +up .*[0-9.]+s " ||
	    fail "spool workers: $(spool workers)"
	local id
	id=$(spool submit -- echo ok) || fail "submit"
	spool wait "$id" || fail "the task failed"
	assert_eq ok "$(task_stdout "$id")"
}

# A worker lost because its status could not be read: the reason says so.
test_worker_lost_with_an_unreadable_status_says_why() {
	new_spool
	stopped_worker_with_old_status
	wait_for 20 grep -Eq "worker $WID \(.*\) lost: no heartbeat for [0-9.]+ s \(its status: $STATUS_WHY\)" \
	    "$T/spoold.log" || fail "not lost, or lost for another reason: $(tail -3 "$T/spoold.log")"
	kill -CONT "$W"
	wait_for 20 not_running "$W" || fail "the lost worker kept running"
}

test_kill_local_worker_is_noticed_at_once() {
	new_spool
	start_spoold --local 2 --local-cores 1
	seq 1 8 | spool map -- sh -c 'sleep 0.5; echo r$1' _ {} > "$T/ids"
	wait_for 10 sh -c 'spool status | grep -q running' || fail "nothing running"
	# (a task of local-2 may run before local-1 has registered)
	wait_for 10 workers_match "local-1-[0-9a-f]+ .* up " || fail "local-1 not up"
	pid=$(awk '/^pid:/ {print $2}' "$SPOOL"/workers/local-1-*/info | head -1)
	kill -9 "$pid"
	spool wait < "$T/ids" || fail "tasks failed after a worker was killed"
	check_outputs "$T/ids"
	assert_match "local worker local-1: its process was killed by signal 9" \
	    "$(cat "$T/spoold.log")"
	# restarted, registered again
	wait_for 10 workers_match "local-1-[0-9a-f]+ .* up " || fail "not restarted"
}

# A local worker that leaves by itself (an admin's SIGTERM here; a
# failed flush, or commits the filesystem keeps refusing, do the same)
# hands back what it ran, writes its "exited" marker and exits: spoold
# says it exited, not that it was lost, counts no loss against its task
# (max-requeues 0 here: a loss would fail it), and starts another.
test_a_local_worker_that_leaves_by_itself_is_not_lost() {
	local id pid wid
	new_spool
	sed -i "s/max-requeues: 3/max-requeues: 0/" "$SPOOL/spool.yaml"
	start_spoold --local 1 --local-cores 1
	id=$(spool submit -- sh -c \
	    'while [ ! -e "$1" ]; do sleep 0.01; done; echo ran' _ "$T/go") ||
	    fail "submit"
	wait_for 20 state_is "$id" running || fail "the task is not running"
	wid=$(cd "$SPOOL/workers" && echo local-1-*)
	pid=$(awk '/^pid:/ {print $2}' "$SPOOL/workers/$wid/info")
	kill -TERM "$pid"
	wait_for 20 grep -q "worker $wid (local-1) exited" "$T/spoold.log" ||
	    fail "spoold did not say the worker exited: $(tail -3 "$T/spoold.log")"
	wait_for 20 sh -c "spool workers | grep -E 'local-1-[0-9a-f]+ .* up ' |
	    grep -qv '$wid'" || fail "no other local worker: $(spool workers)"
	touch "$T/go"
	spool wait --timeout 30 "$id" > /dev/null ||
	    fail "the task failed: $(spool status "$id")"
	assert_eq ran "$(task_stdout "$id")" "the task's output"
	! grep -q " lost: " "$T/spoold.log" ||
	    fail "spoold took it for a loss: $(grep " lost: " "$T/spoold.log")"
	assert_match " worker $wid exited" \
	    "$(cat "$SPOOL"/journal/*.spoold.*)" "spoold's journal"
}

test_kill_spoold_mid_run_and_restart() {
	new_spool
	start_spoold --local 2 --local-cores 1
	# the tasks after the 30th wait until told, after the restart: the
	# kill, while the first ones flow, comes before the bundle is done
	# however slow the machine (its recovery is checked below)
	seq 1 60 | spool map -- sh -c \
	    '[ $1 -le 30 ] || while [ ! -e "$2" ]; do sleep 0.05; done; sleep 0.1; echo r$1' \
	    _ {} "$T/go" > "$T/ids"
	wait_for 10 finished 5 || fail "no progress"
	kill -9 "$SPOOLD_PID"
	# its local workers are told (parent-death signal) and hand back
	wait_for 10 no_proc "ckworker -S $SPOOL" ||
	    fail "local workers outlived spoold"
	done_before=$(ls "$SPOOL"/tasks/0 | wc -l)
	start_spoold --local 2 --local-cores 1
	touch "$T/go"
	spool wait < "$T/ids" || fail "tasks failed after a restart"
	check_outputs "$T/ids"
	note "$done_before of 60 done before the kill"
	assert_match "recovered 1 bundle: [0-9]+ queued" "$(cat "$T/spoold.log")"
	# each finished exactly once: one directory per ID, nothing pending
	assert_eq 60 "$(ls "$SPOOL"/tasks/0 | wc -l)" "final task directories"
	wait_for 10 dir_empty "$SPOOL/specs" ||
	    fail "specs/ not emptied: $(ls -A "$SPOOL/specs" | tr '\n' ' ')"
	wait_for 10 temp_areas_empty ||
	    fail "temporary areas not empty: $(temp_areas_list)"
}

test_kill_spoold_repeatedly_loses_nothing() {
	new_spool
	start_spoold --local 2 --local-cores 1
	seq 1 200 | spool map -- sh -c 'echo r$1' _ {} > "$T/ids"
	for round in 1 2 3 4 5; do
		sleep 0.$((RANDOM % 5 + 1))
		kill -9 "$SPOOLD_PID"
		wait "$SPOOLD_PID" 2>/dev/null
		start_spoold --local 2 --local-cores 1
	done
	spool wait < "$T/ids" || fail "tasks failed"
	check_outputs "$T/ids"
	assert_eq 200 "$(ls "$SPOOL"/tasks/0 | wc -l)" "final task directories"
}

# spoold killed in a cancel cascade: a task after a failed one is in
# specs/ (accepted in one step, incoming/ -> specs/) but not yet
# cancelled.  Recovery cancels it while it loads its bundle, which frees
# the bundle's slot; load_specs once freed it again, so the next two
# bundles shared one slot (a task read the other's spec, then "live
# count underflow" aborted spoold).
test_recovery_cancelling_a_bundles_last_task_frees_its_slot_once() {
	new_spool
	start_spoold --local 1 --local-cores 1
	a=$(spool submit -- false) || fail "submit"
	spool wait "$a" && fail "the failing task succeeded"
	stop_spoold
	b=$(spool submit --after "$a" -- true) || fail "submit --after"
	mv "$SPOOL/incoming/$b.bundle" "$SPOOL/specs/$b" || fail "mv"
	start_spoold
	wait_for 10 finished "$b" || fail "the dependent task was not cancelled"
	assert_eq cancelled "$(field "$b" state)" "state of task $b"
	# two bundles in the table at once (no worker yet): each its own slot
	c=$(spool submit -- echo C) || fail "submit C"
	d=$(spool submit -- echo D) || fail "submit D"
	wait_for 10 taken_in "$c" || fail "task $c not taken in"
	wait_for 10 taken_in "$d" || fail "task $d not taken in"
	start_worker w1 --cores 1
	spool wait "$c" "$d" ||
	    fail "tasks after the recovery failed: $(tail -5 "$T/spoold.log")"
	assert_eq C "$(task_stdout "$c")" "output of task $c"
	assert_eq D "$(task_stdout "$d")" "output of task $d"
	kill -0 "$SPOOLD_PID" || fail "spoold died: $(tail -5 "$T/spoold.log")"
	assert_no_match "damaged|could not be read|underflow" \
	    "$(cat "$T/spoold.log")" "spoold's log"
	stop_spoold
}

# A loss is recorded in requeued/ID (lost) before the lost worker's
# assignment is revoked from its running/ (finish.c: finish_loss_record).
# spoold killed between the two: the next one found the attempt still
# with the lost worker, revoked it and counted the loss a second time,
# and a task of max-requeues 1 lost once was given up on (worker-lost)
# instead of running again.  Counted once, its second loss is the one
# past the bound.
test_a_loss_is_counted_once_when_spoold_is_killed_before_its_revoke() {
	local id
	# before the second mutation of "1.1": the first is its revoke
	# from inbox/ (ENOENT: the worker took it), then the record is
	# written, then comes its revoke from running/
	lost_task_running 1 'crash-on=1.1*2'
	assert_eq 1 "$id" "the task's ID (the fault names 1.1)"
	kill -KILL "$WORKER_PID"
	wait_for 15 not_running "$SPOOLD_PID" || fail "spoold did not crash"
	assert_match "fault injection: crash before operation [0-9]+ \(rename 1\.1\)" \
	    "$(cat "$T/spoold.log")" "spoold's log"
	assert_match "^lost: 1$" "$(cat "$SPOOL/requeued/$id")" "requeued/$id"
	ls "$SPOOL"/workers/w1-*/running/"$id.1" > /dev/null ||
	    fail "attempt 1 revoked before the crash"
	start_spoold
	start_worker w2 --cores 1
	wait_for 20 sh -c "grep -qx 2 '$T/runs' || [ -e '$SPOOL/tasks/0/$id/result' ]" ||
	    fail "task $id neither ran again nor ended: $(tail -3 "$T/spoold.log")"
	finished "$id" && fail "task $id ended $(field "$id" state) ($(field "$id" reason): $(field "$id" message)) after one loss"
	assert_match "task $id attempt 1: its loss, recorded, is counted when its revoke is made" \
	    "$(cat "$T/spoold.log")" "spoold's log"
	wait_for 10 state_is "$id" running || fail "task $id is $(state_of "$id")"
	kill -KILL "$WORKER_PID"
	wait_for 30 finished "$id" ||
	    fail "task $id is $(state_of "$id") after its second loss: $(tail -3 "$T/spoold.log")"
	touch "$T/stop"
	assert_eq failed "$(field "$id" state)" "its state"
	assert_eq worker-lost "$(field "$id" reason)" "its reason"
	assert_eq 2 "$(field "$id" attempt)" "its last attempt"
	assert_match "requeued 1 times already, giving up" "$(field "$id" message)" \
	    "its message"
	assert_eq "1 2" "$(tr '\n' ' ' < "$T/runs" | sed 's/ $//')" "attempts run"
	stop_spoold
	spool fsck --settled > "$T/out" 2>&1 || fail "fsck: $(cat "$T/out")"
}

# A refused bundle is renamed to rejected/, then each of its IDs gets
# a "rejected" result (spoold/accept.c).  spoold killed in between: the
# next one, which does not read rejected/, never wrote them, and "spool
# wait" on those IDs waited until its timeout.
test_spoold_killed_between_refusing_a_bundle_and_its_results() {
	local a b rc
	new_spool
	a=$(seq 2 | spool map -- echo) || fail "map"
	b=$(echo "$a" | tail -1)
	a=$(echo "$a" | head -1)
	sed -i 's/^uid: .*/uid: 4242/' "$SPOOL/incoming/$a.bundle"
	# before its first result: after the rename
	CKSPOOL_FAULT='crash-on=final.' start_spoold
	wait_for 15 not_running "$SPOOLD_PID" || fail "spoold did not crash"
	assert_match "fault injection: crash before operation [0-9]+ \(mkdir final\." \
	    "$(cat "$T/spoold.log")"
	[ -e "$SPOOL/rejected/$a.bundle" ] || fail "not refused before the crash"
	start_spoold
	spool wait --timeout 20 "$a" "$b" > /dev/null 2>&1
	rc=$?
	[ "$rc" -ne 3 ] || fail "spool wait timed out: $(tail -3 "$T/spoold.log")"
	assert_eq rejected "$(field "$a" state)" "the state of task $a"
	assert_eq rejected "$(field "$b" state)" "the state of task $b"
	assert_match "uid 4242 in the record" "$(field "$b" message)" "its message"
	stop_spoold
	spool fsck --settled > "$T/out" || fail "fsck --settled: $(cat "$T/out")"
}

# An acceptance is two renames in spoold (spoold/finish.c): the
# assignment into the attempt's directory as its spec, then that
# directory to tasks/SHARD/ID.  spoold killed between the two: no task
# directory may appear without its spec, and the next start completes
# the acceptance, with the attempt that ran (not a second run).
test_spoold_killed_between_the_renames_of_an_acceptance() {
	new_spool
	# before its second mutation of "1.1": the rename to tasks/
	CKSPOOL_FAULT='crash-on=1.1*2' start_spoold
	start_worker w1 --cores 1
	id=$(spool submit -- sh -c 'echo run >> "$1"; echo out' _ "$T/runs")
	assert_eq 1 "$id" "the task's ID (the fault names 1.1)"
	wait_for 15 not_running "$SPOOLD_PID" || fail "spoold did not crash"
	assert_match "fault injection: crash before operation [0-9]+ \(rename 1\.1\)" \
	    "$(cat "$T/spoold.log")"
	if [ -e "$SPOOL/tasks/0/1" ]; then
		assert_eq "result spec stderr stdout" \
		    "$(ls "$SPOOL/tasks/0/1" | tr '\n' ' ' | sed 's/ $//')" \
		    "a task directory that appeared"
	fi
	spool fsck > "$T/out" || fail "fsck after the crash: $(cat "$T/out")"
	assert_match "work/1\.1: accepted, its rename to tasks/0/1 to come" \
	    "$(cat "$T/out")"
	start_spoold
	spool wait "$id" || fail "task failed after the restart"
	assert_eq out "$(task_stdout "$id")"
	assert_eq 1 "$(field "$id" attempt)" "the attempt that ran"
	assert_eq run "$(cat "$T/runs")" "runs of the task"
	assert_eq 1 "$(spec_field "$id" id)" "its spec"
	assert_match "task 1 attempt 1: its acceptance, interrupted, is completed" \
	    "$(cat "$T/spoold.log")"
	# (the journal is written in groups: wait for the event's)
	wait_for 10 sh -c "spool journal --task $id | grep -q ' final '" ||
	    fail "no final event in the journal"
	assert_eq 1 "$(spool journal --task "$id" | grep -c ' final att=1 state=done')" \
	    "the task's final event in the journal"
	# and counted among the tasks this spoold saw finish
	wait_for 10 summary_is done 1 ||
	    fail "the summary's done: $(summary_field done), want 1"
	stop_spoold
	spool fsck --settled > "$T/out" || fail "fsck --settled: $(cat "$T/out")"
}

# A placed task that has not started is cancelled by its worker
# handing it back (cancel/ID.ATT -> returned/ID.ATT); spoold knew why
# only in memory, having consumed the request.  A spoold restarted in
# between took the hand-back for a plain one and placed the task
# again: it ran, cancelled or not.
test_cancel_of_a_placed_task_survives_a_restart_of_spoold() {
	new_spool
	start_spoold
	start_worker w1 --cores 1
	wid=$(worker_wid w1)
	block=$(spool submit -- sh -c "until [ -e '$T/go' ]; do sleep 0.05; done") ||
	    fail "submit"
	id=$(spool submit -- sh -c "touch '$T/ran'") || fail "submit"
	wait_for 10 test -e "$SPOOL/workers/$wid/inbox/$id.1" ||
	    fail "task $id not placed ahead: $(state_of "$id")"
	# the worker does not hand it back before spoold is gone
	kill -STOP "$WORKER_PID"
	spool cancel "$id" 2>/dev/null
	wait_for 10 test -e "$SPOOL/workers/$wid/cancel/$id.1" ||
	    fail "the cancel was not passed on to the worker"
	kill -9 "$SPOOLD_PID"
	wait_for 10 not_running "$SPOOLD_PID" || fail "spoold still runs"
	kill -CONT "$WORKER_PID"
	wait_for 10 test -e "$SPOOL/workers/$wid/returned/$id.1" ||
	    fail "the worker did not hand task $id back"
	start_spoold
	wait_for 10 finished "$id" ||
	    fail "task $id not cancelled after the restart: $(state_of "$id")"
	assert_eq cancelled "$(field "$id" state)" "state of task $id"
	touch "$T/go"
	spool wait "$block" || fail "task $block failed"
	[ -e "$T/ran" ] && fail "task $id ran though it was cancelled"
	wait_for 10 no_requests ||
	    fail "request not consumed: $(ls "$SPOOL/control")"
}

test_stale_attempt_is_fenced() {
	new_spool
	start_spoold
	start_worker frozen --cores 1
	frozen=$WORKER_PID
	mkdir "$T/taskpids"
	# (attempt 1 runs until it is killed: a task that ended on its own
	# meanwhile would pass the check of its process below unkilled)
	id=$(spool submit -- sh -c 'echo $$ > '"$T"'/taskpids/$SPOOL_ATTEMPT; [ $SPOOL_ATTEMPT -gt 1 ] || exec sleep 600; echo attempt $SPOOL_ATTEMPT')
	wait_for 10 test -s "$T/taskpids/1" || fail "not running"
	task_pid=$(cat "$T/taskpids/1")
	# the worker's host vanishes (stopped: no beat, no commit)
	kill -STOP "$frozen" "$task_pid"
	wait_for 15 grep -q "worker frozen-.* lost" "$T/spoold.log" || fail "not lost"
	start_worker healthy --cores 1
	spool wait "$id" || fail "task failed"
	assert_eq 2 "$(field "$id" attempt)"
	assert_eq "attempt 2" "$(task_stdout "$id")"
	# the host comes back: its worker must see it was declared lost,
	# kill its task and leave without committing anything
	kill -CONT "$task_pid" "$frozen"
	wait_for 15 not_running "$frozen" || fail "stale worker kept running"
	assert_match "(spoold declared this worker lost|my worker directory is gone): killing" \
	    "$(cat "$T/worker-frozen.log")"
	wait_for 5 not_running "$task_pid" ||
	    fail "the stale attempt's process survived"
	assert_eq 2 "$(field "$id" attempt)" "accepted attempt unchanged"
	assert_eq "attempt 2" "$(task_stdout "$id")"
}

test_only_one_spoold() {
	new_spool
	start_spoold
	first=$SPOOLD_PID
	"${ON_A[@]}" spoold > "$T/second.log" 2>&1
	assert_eq 111 $? "second spoold's exit status"
	assert_match "held by spoold pid $first on host $SPOOLD_HOST" \
	    "$(cat "$T/second.log")"
	kill -0 "$first" || fail "the first spoold died"
	# after it is gone (even by kill -9), a new one starts at once
	kill -9 "$first"
	wait "$first" 2>/dev/null
	start_spoold
	id=$(spool submit -- echo ok)
	start_worker w --cores 1
	spool wait "$id" || fail "new spoold does not work"
}

test_sigterm_stops_everything_cleanly() {
	new_spool
	start_spoold --local 2 --local-cores 1
	long=$(spool submit -- sleep 61)
	seq 1 5 | spool map -- sleep 61 > "$T/ids"
	wait_for 10 state_is "$long" running || fail "not running"
	kill -TERM "$SPOOLD_PID"
	wait "$SPOOLD_PID"
	assert_eq 0 $? "spoold exit status after SIGTERM"
	assert_match "stopped$" "$(tail -1 "$T/spoold.log")"
	no_proc "ckworker -S $SPOOL" || fail "workers left running"
	no_proc "sleep 61" || fail "task processes left running"
	[ ! -e "$SPOOL/lock/spoold" ] || fail "lease not released"
	# the tasks were handed back, not lost: queued again after a restart
	start_spoold
	wait_for 10 state_is "$long" queued || fail "$(spool status "$long")"
	spool cancel "$long" $(cat "$T/ids") 2>/dev/null
	spool wait "$long" $(cat "$T/ids")
	assert_eq 130 $? "cancelled after restart"
	# the handed-back attempt's output is kept with the task, in its
	# directory as soon as that appears (spool-layout(5))
	[ -f "$SPOOL/tasks/0/$long/attempt.1/spec" ] ||
	    fail "handed-back attempt not kept: $(ls -R "$SPOOL/tasks/0/$long")"
}

# A clean stop removes the directories of the workers that exited in it
# (spool-layout(5), workers/): none is left to "spool workers" and
# fsck until some spoold runs again.
test_a_clean_stop_leaves_no_worker_directory() {
	new_spool
	start_spoold --local 2 --local-cores 1
	wait_for 10 workers_match "local-1" || fail "no worker local-1"
	wait_for 10 workers_match "local-2" || fail "no worker local-2"
	id=$(spool submit -- true)
	spool wait "$id" || fail "task"
	kill -TERM "$SPOOLD_PID"
	wait "$SPOOLD_PID"
	assert_eq 0 $? "spoold exit status after SIGTERM"
	assert_eq "" "$(ls "$SPOOL/workers")" "workers/ after a clean stop"
	assert_eq "" "$(ls "$SPOOL/gc")" "gc/ after a clean stop"
	assert_eq "" "$(spool workers | sed 1d)" "spool workers"
}

# spoold moves a task's earlier attempts into the final directory it
# builds in tmp/ for a task that is not run again (cancelled while
# queued for another attempt, or lost too often).  A crash before that
# directory's rename leaves them there: the next spoold must put them
# back in attempts/ before it removes the dead writer's directory, and
# the task, final later, must hold them.  The crash's leftover is made
# by hand here, beside a task whose second attempt runs.
test_recovery_keeps_attempts_from_an_unfinished_final_directory() {
	local id tmpd
	new_spool
	start_spoold
	start_worker w --cores 1
	id=$(spool submit --retries 1 -- sh -c \
	    "[ \$SPOOL_ATTEMPT -gt 1 ] || { echo first; exit 3; }; while [ ! -e '$T/go' ]; do sleep 0.05; done; echo second")
	wait_for 10 test -f "$SPOOL/attempts/$id.1/result" ||
	    fail "attempt 1 not archived: $(ls "$SPOOL/attempts")"
	wait_for 10 state_is "$id" running || fail "attempt 2 not running"
	stop_spoold
	# what a spoold that crashed in finish_final leaves: the directory
	# with its result, the attempt moved in, never renamed to tasks/;
	# "otherhost" and an old time: the tmp/ sweep's age rule applies
	tmpd="$SPOOL/tmp/final.otherhost.4242.1.x"
	mkdir "$tmpd" || fail "mkdir"
	cp "$SPOOL/attempts/$id.1/result" "$tmpd/result" || fail "result"
	mv "$SPOOL/attempts/$id.1" "$tmpd/attempt.1" || fail "mv"
	touch -d '2 days ago' "$tmpd"
	start_spoold
	wait_for 10 test ! -e "$tmpd" || fail "tmp/ not swept: $(ls "$SPOOL/tmp")"
	[ -f "$SPOOL/attempts/$id.1/result" ] ||
	    fail "attempt 1 not put back: attempts/ holds: $(ls "$SPOOL/attempts")"
	touch "$T/go"
	spool wait "$id" || fail "task failed"
	assert_eq "second" "$(task_stdout "$id")"
	assert_eq "first" "$(cat "$SPOOL/tasks/0/$id/attempt.1/stdout")" \
	    "attempt 1 in the final task"
}

test_worker_sigterm_hands_back_running_task() {
	new_spool
	start_spoold
	start_worker leaving --cores 1
	leaving=$WORKER_PID
	# (attempt 1 runs until it is stopped: one that ended on its own
	# before the worker took the signal was done in its first attempt)
	id=$(spool submit -- sh -c \
	    "echo attempt \$SPOOL_ATTEMPT; touch '$T/wrote.'\$SPOOL_ATTEMPT; [ \$SPOOL_ATTEMPT -gt 1 ] || exec sleep 600")
	# its first line is written before the worker is told to leave
	wait_for 10 test -e "$T/wrote.1" || fail "not running"
	kill -TERM "$leaving"
	wait_for 10 not_running "$leaving" || fail "worker did not leave"
	assert_match "draining \(signal\)" "$(cat "$T/worker-leaving.log")"
	wait_for 10 grep -q "handed back by leaving-" "$T/spoold.log" ||
	    fail "not handed back"
	start_worker staying --cores 1
	spool wait "$id" || fail "task failed"
	assert_eq 2 "$(field "$id" attempt)"
	assert_match "^staying-" "$(field "$id" worker)"
	# the interrupted attempt's output is kept with the task, in its
	# directory as soon as that appears (spool-layout(5))
	[ -e "$SPOOL/tasks/0/$id/attempt.1/stdout" ] ||
	    fail "attempt 1 not kept: $(ls -R "$SPOOL/tasks/0/$id")"
	assert_eq "attempt 1" "$(cat "$SPOOL/tasks/0/$id/attempt.1/stdout")"
}

# Task $id (submitted here: "echo out") runs on a worker "refused"
# whose commit of its attempt 1 the filesystem keeps refusing (the
# rename of running/ID.1, EIO injected at every try), and that worker
# is told to leave (SIGTERM).  Sets id, wid, log and rc (its exit
# status).
refused_worker_leaves() {
	id=$(spool submit -- echo out) || fail "submit"
	# the fourth mutation of a name starting $id.1 is the commit's
	# rename (after the work directory's mkdir, the claim's rename and
	# the result's create), the ones after it its tries again
	CKSPOOL_FAULT="fail-on=$id.1:EIO*1000000@3" start_worker refused --cores 1
	wid=$(worker_wid refused) || fail "no worker"
	log=$T/worker-refused.log
	wait_for 10 grep -q "commit: workers/$wid/running/$id\.1: Input/output error (trying again)" "$log" ||
	    fail "the commit was not refused: $(tail -3 "$log")"
	kill -TERM "$WORKER_PID"
	wait_for 10 not_running "$WORKER_PID" ||
	    fail "the worker did not leave on SIGTERM: $(tail -3 "$log")"
	wait "$WORKER_PID"
	rc=$?
}

# Task $1's attempt 1, which refused_worker_leaves left uncommitted,
# is kept with the task as a handed-back one is (spool-layout(5)): its
# spec, its stdout and the result its worker wrote.
uncommitted_attempt_kept() {
	[ -f "$SPOOL/tasks/0/$1/attempt.1/spec" ] ||
	    fail "attempt 1 not kept: $(ls -R "$SPOOL/tasks/0/$1")"
	assert_eq out "$(cat "$SPOOL/tasks/0/$1/attempt.1/stdout")" \
	    "attempt 1's stdout"
	assert_match "attempt: 1" "$(cat "$SPOOL/tasks/0/$1/attempt.1/result")" \
	    "attempt 1's result"
}

# A worker whose commit the filesystem keeps refusing still leaves on
# SIGTERM, as a batch system's scancel or walltime expects within its
# kill wait: it tries the commit once more, says what it leaves
# uncommitted (in its log and its journal's exit event), exits 111, and
# spoold takes the attempt back as an exited worker's, keeps its work
# directory in attempts/, and runs the task again.  (It once stayed,
# trying again at every rescan until the batch system's SIGKILL: spoold
# then found it lost, counted against max-requeues, a lost-timeout
# later.  Then spoold removed that attempt's outputs with the worker's
# directory.)
test_worker_sigterm_leaves_with_a_refused_commit() {
	local id wid log rc
	new_spool
	start_spoold
	refused_worker_leaves
	assert_eq 111 "$rc" "the worker's exit status"
	assert_match "leaving 1 outcome uncommitted, refused by the filesystem: task $id attempt 1 \(Input/output error\); spoold takes it back from workers/$wid/running/ and runs it again" \
	    "$(cat "$log")" "what the worker left"
	assert_eq 1 "$(grep -c 'outcome uncommitted' "$log")" "said once"
	# (its directory, exited, is soon removed by spoold)
	wait_for 10 grep -q "worker $wid (refused) exited" "$T/spoold.log" ||
	    fail "spoold did not see the worker exit: $(tail -3 "$T/spoold.log")"
	wait_for 10 grep -q "task $id attempt 1 requeued: its worker exited without handing it back" \
	    "$T/spoold.log" || fail "not requeued: $(tail -3 "$T/spoold.log")"
	start_worker fine --cores 1
	spool wait "$id" || fail "task failed"
	assert_eq 2 "$(field "$id" attempt)" "the attempt committed"
	assert_eq out "$(task_stdout "$id")"
	uncommitted_attempt_kept "$id"
	assert_match "uncommitted=1" "$(spool journal | awk -v w="$wid" \
	    '$3 == "worker" && $4 == w && $5 == "exit"')" "its exit event"
}

# spoold keeps an exited worker's revoked attempt in three renames: the
# revoke (running/ID.ATT to revoked/), its work directory to attempts/,
# the assignment into it as its spec.  spoold killed before the second
# or the third: fsck finds nothing wrong, and the next start keeps the
# attempt whole (recover.c) before the worker's directory, exited, is
# removed with the outputs in it.  $1: the mutation of "1.1" spoold is
# killed before, $2: where the work directory is then (under $SPOOL).
spoold_killed_keeping() {
	local id wid log rc
	new_spool
	CKSPOOL_FAULT="crash-on=1.1*$1" start_spoold
	refused_worker_leaves
	assert_eq 1 "$id" "the task's ID (the fault names 1.1)"
	wait_for 15 not_running "$SPOOLD_PID" || fail "spoold did not crash"
	assert_match "fault injection: crash before operation [0-9]+ \(rename 1\.1\)" \
	    "$(cat "$T/spoold.log")" "spoold's log"
	[ -e "$SPOOL/workers/$wid/revoked/1.1" ] &&
	    [ -e "$SPOOL/${2/WID/$wid}/stdout" ] ||
	    fail "not revoked, or not in ${2/WID/$wid}, before the crash: $(ls -R "$SPOOL/workers/$wid" "$SPOOL/attempts")"
	spool fsck > "$T/out" 2>&1 || fail "fsck after the crash: $(cat "$T/out")"
	start_spoold
	start_worker fine --cores 1
	spool wait "$id" || fail "task failed"
	assert_eq 2 "$(field "$id" attempt)" "the attempt committed"
	uncommitted_attempt_kept "$id"
	wait_for 10 test ! -e "$SPOOL/workers/$wid" ||
	    fail "the exited worker's directory stayed"
	stop_spoold
	spool fsck --settled > "$T/out" 2>&1 ||
	    fail "fsck --settled: $(cat "$T/out")"
}

# (the first two mutations: the revoke from inbox/, ENOENT: the worker
# took it; then the one from running/; the third: the work directory's
# move)
test_spoold_killed_between_an_exited_workers_revoke_and_its_keeping() {
	spoold_killed_keeping 3 workers/WID/work/1.1
}

# (the fourth: the spec's)
test_spoold_killed_between_an_exited_workers_attempt_and_its_spec() {
	spoold_killed_keeping 4 attempts/1.1
}

test_worker_grace_lets_running_task_finish() {
	new_spool
	start_spoold
	start_worker patient --cores 1 --grace 10s
	# the task ends only when the gate opens, once the worker has taken
	# the signal: it cannot end (and the worker start the next task)
	# before, however slow the machine
	id=$(spool submit -- sh -c \
	    'while [ ! -e "$1" ]; do sleep 0.05; done; echo finished' _ "$T/go")
	queued=$(spool submit -- echo later)
	wait_for 10 state_is "$id" running || fail "not running"
	kill -TERM "$WORKER_PID"
	wait_for 10 grep -q 'draining (signal)' "$T/worker-patient.log" ||
	    fail "the worker did not take the signal: $(cat "$T/worker-patient.log")"
	touch "$T/go"
	spool wait "$id" || fail "task was not allowed to finish"
	assert_eq 1 "$(field "$id" attempt)" "finished in its first attempt"
	wait_for 10 not_running "$WORKER_PID" || fail "worker stayed"
	wait_for 10 state_is "$queued" queued ||
	    fail "unstarted task not handed back: $(state_of "$queued")"
}

# A batch system ending a job (scancel, preemption, qdel) signals every
# process in it, the worker and its tasks, in its own order: the task's
# death may reach the worker before the worker's own SIGTERM does.  The
# task is then handed back, not failed (ckworker(1), --signal-wait).
# Here the order is made the racy one on purpose: the task is
# terminated and reaped first, the worker signalled after (a wait of
# 60 s so that the test's own steps fit in it on a loaded machine).
test_task_terminated_with_its_worker_is_handed_back() {
	local pid
	new_spool
	start_spoold
	start_worker ending --cores 1 --signal-wait 60s
	ending=$WORKER_PID
	id=$(spool submit -- sh -c \
	    'echo attempt $SPOOL_ATTEMPT; echo $$ > "$1.$SPOOL_ATTEMPT"; [ "$SPOOL_ATTEMPT" -gt 1 ] || exec sleep 600' \
	    _ "$T/pid") || fail "submit"
	wait_for 10 test -s "$T/pid.1" || fail "attempt 1 did not start"
	pid=$(cat "$T/pid.1")
	kill -TERM "$pid"
	# reaped by the worker: not even a zombie is left
	wait_for 10 sh -c "! kill -0 $pid 2>/dev/null" || fail "task not reaped"
	assert_eq running "$(state_of "$id")" "state of the held task"
	kill -TERM "$ending"
	wait_for 10 not_running "$ending" || fail "worker did not leave"
	assert_match "task $id attempt 1 was terminated with this worker: handing it back" \
	    "$(cat "$T/worker-ending.log")" "the worker's log"
	wait_for 10 grep -q "task $id attempt 1 handed back by ending-" \
	    "$T/spoold.log" || fail "not handed back: $(spool status "$id")"
	start_worker next --cores 1
	spool wait "$id" || fail "task failed: $(spool status "$id")"
	assert_eq 2 "$(field "$id" attempt)" "attempt"
	assert_eq "attempt 2" "$(task_stdout "$id")" "output"
}

# Terminated alone (a user's kill, its own kill $$, or a wrapper exiting
# 143), with no signal to its worker: after the wait its death is its
# outcome, and the worker goes on.
test_task_terminated_alone_is_its_own_failure() {
	local pid
	new_spool
	start_spoold
	start_worker stays --cores 1 --signal-wait 200ms
	id=$(spool submit -- sh -c 'echo $$ > "$1"; exec sleep 600' _ "$T/pid") ||
	    fail "submit"
	wrapped=$(spool submit -- sh -c 'exit 143') || fail "submit"
	wait_for 10 test -s "$T/pid" || fail "not running"
	kill -TERM "$(cat "$T/pid")"
	spool wait "$id" && fail "a task killed by SIGTERM succeeded"
	assert_eq failed "$(field "$id" state)" "state"
	assert_eq signal "$(field "$id" reason)" "reason"
	assert_eq 15 "$(field "$id" signal)" "signal"
	assert_eq 1 "$(field "$id" attempt)" "attempt"
	spool wait "$wrapped" && fail "exit 143 succeeded"
	assert_eq exit "$(field "$wrapped" reason)" "reason of exit 143"
	assert_eq 143 "$(field "$wrapped" exit)" "exit status"
	assert_eq 1 "$(field "$wrapped" attempt)" "attempt of exit 143"
	kill -0 "$WORKER_PID" || fail "the worker left: $(tail -3 "$T/worker-stays.log")"
	id=$(spool submit -- echo after) || fail "submit"
	spool wait "$id" || fail "the worker does not go on"
	assert_match "^stays-" "$(field "$id" worker)"
}

# A cancel that arrives while such a death is held (--signal-wait) is
# too late to be the task's outcome: its process had already ended,
# not by the cancel (DESIGN.md: every kill says why; spool(1), cancel).
# It ends failed (signal 15), as it died, and is not retried either.
# The worker is held stopped while the cancel reaches it, so that the
# outcome cannot be committed before.
test_a_cancel_during_the_signal_wait_leaves_the_tasks_own_death() {
	local pid wid
	new_spool
	start_spoold
	start_worker held --cores 1 --signal-wait 3s
	wid=$(worker_wid held) || fail "no worker directory"
	id=$(spool submit --retries 1 -- sh -c 'echo $$ > "$1"; exec sleep 600' \
	    _ "$T/pid") || fail "submit"
	wait_for 10 test -s "$T/pid" || fail "not running"
	pid=$(cat "$T/pid")
	kill -TERM "$pid"
	wait_for 10 sh -c "! kill -0 $pid 2>/dev/null" || fail "task not reaped"
	kill -STOP "$WORKER_PID"
	finished "$id" && { kill -CONT "$WORKER_PID"; fail "committed before the cancel (the hold ran out)"; }
	spool cancel "$id" 2>/dev/null || fail "cancel"
	wait_for 10 test -e "$SPOOL/workers/$wid/cancel/$id.1" ||
	    { kill -CONT "$WORKER_PID"; fail "the cancel did not reach the worker"; }
	kill -CONT "$WORKER_PID"
	spool wait "$id" && fail "a task killed by SIGTERM succeeded"
	assert_eq failed "$(field "$id" state)" "state"
	assert_eq signal "$(field "$id" reason)" "reason"
	assert_eq 15 "$(field "$id" signal)" "signal"
	assert_eq 1 "$(field "$id" attempt)" "attempt (not retried)"
}

test_worker_exits_when_idle() {
	new_spool
	start_spoold
	start_worker idler --cores 1 --idle-timeout 1s
	id=$(spool submit -- true)
	spool wait "$id" || fail "task failed"
	wait_for 10 not_running "$WORKER_PID" || fail "idle worker stayed"
	assert_match "exiting: idle timeout" "$(cat "$T/worker-idler.log")"
	wait_for 10 sh -c "! ls '$SPOOL/workers' | grep -q '^idler-'" ||
	    fail "exited worker's directory not cleaned"
}

test_worker_exits_when_spool_is_removed() {
	new_spool
	start_spoold
	start_worker orphan --cores 1
	orphan=$WORKER_PID
	id=$(spool submit -- sleep 62)
	wait_for 10 state_is "$id" running || fail "not running"
	# and one that ran nothing, so has no journal segment yet
	start_worker idle --cores 1
	kill -9 "$SPOOLD_PID"
	rm -rf "$SPOOL"
	wait_for 10 not_running "$orphan" || fail "worker outlived its spool"
	wait_for 10 not_running "$WORKER_PID" || fail "idle worker stayed"
	for w in orphan idle; do
		assert_match "the spool is gone" "$(cat "$T/worker-$w.log")"
		# the journal went with the spool: its loss is not news
		assert_no_match "journal: (create|write)" \
		    "$(cat "$T/worker-$w.log")" "$w's log"
	done
	wait_for 5 no_proc "sleep 62" ||
	    fail "task outlived the spool"
}

# A spool removed under spoold: it must say so, not that another spoold
# took its lease (spoold(8)), whichever of lock/ and FORMAT went first.
# spoold is stopped while rm runs, so that its next heartbeat finds the
# spool wholly gone, in whatever order rm removed it.
test_spoold_says_its_spool_is_gone() {
	new_spool
	start_spoold
	wait_for 10 grep -q "recovered .* workers" "$T/spoold.log" ||
	    fail "spoold did not recover"
	# and its first journal write made (at most 100 ms later): removed
	# before it, the spool's FORMAT can still look there through
	# sshfs's attribute cache (1 s across hosts) when that write finds
	# journal/ gone, and the loss is reported as a journal's
	wait_for 10 journal_matches 'spoold - start' ||
	    fail "spoold's start not in the journal"
	kill -STOP "$SPOOLD_PID"
	rm -rf "$SPOOL"
	kill -CONT "$SPOOLD_PID"
	wait_for 10 not_running "$SPOOLD_PID" || fail "spoold outlived its spool"
	wait "$SPOOLD_PID"
	assert_eq 111 $? "spoold's exit status"
	assert_match "fatal: the spool .* is gone; exiting" \
	    "$(cat "$T/spoold.log")"
	assert_no_match "lease" "$(cat "$T/spoold.log")"
	# the journal went with the spool: its loss is not news
	assert_no_match "journal: (create|write)" "$(cat "$T/spoold.log")"
}

test_worker_exits_when_spoold_is_gone() {
	new_spool
	start_spoold
	start_worker bereaved --cores 1 --death-timeout 1s
	# the task ends when told, once the worker drains: one that ended
	# before spoold was killed had its result taken by spoold
	id=$(spool submit -- sh -c 'while [ ! -e "$1" ]; do sleep 0.05; done; echo done' _ "$T/go")
	wait_for 10 state_is "$id" running || fail "not running"
	kill -9 "$SPOOLD_PID"
	# it drains, lets the running task finish, commits it, leaves
	wait_for 15 grep -q "spoold has not beaten for the death timeout" \
	    "$T/worker-bereaved.log" || fail "the worker did not drain"
	! not_running "$WORKER_PID" || fail "the worker left before its task ended"
	touch "$T/go"
	wait_for 15 not_running "$WORKER_PID" || fail "worker stayed"
	ls "$SPOOL"/workers/bereaved-*/done | grep -q "^$id\.1$" ||
	    fail "running task not committed"
	start_spoold
	spool wait "$id" || fail "result not accepted after restart"
	assert_eq done "$(task_stdout "$id")"
}

# A death timeout that a beat seen late can pass (spoold beats every
# heartbeat, the worker looks every heartbeat, another host sees a beat
# up to two seconds late) drains a worker while spoold is well: the
# worker says so once, at its start.  Here heartbeat is 200 ms: 2.4 s
# is the least; the spool's own 5 s, 3 s and 0 (never leave) are not
# short.
test_worker_warns_of_a_death_timeout_a_late_beat_can_pass() {
	new_spool
	start_spoold
	start_worker short --cores 1 --death-timeout 2s
	start_worker long --cores 1 --death-timeout 3s
	start_worker never --cores 1 --death-timeout 0
	start_worker spools --cores 1
	assert_eq 1 "$(grep -c "warning: death timeout 2000 ms is under twice spoold's heartbeat plus 2000 ms for a beat seen late on shared storage (2400 ms)" \
	    "$T/worker-short.log")" "warnings of the short death timeout"
	local w
	for w in long never spools; do
		assert_no_match "death timeout" "$(cat "$T/worker-$w.log")" \
		    "worker $w's log"
	done
	# a warning, not a refusal: the worker works
	id=$(spool submit --cores 1 -- true) || fail "submit"
	spool wait "$id" > /dev/null || fail "the task failed"
}

# The same said by spoold at its start and by "spool config show", of
# the death timeouts in spool.yaml, where the one who wrote it looks:
# the daemon's (workers started without --death-timeout, spoold's own
# local ones) and each kind's (its batch jobs' workers).
test_spoold_warns_of_a_short_death_timeout_in_spool_yaml() {
	new_spool
	cat > "$SPOOL/spool.yaml" <<EOF
daemon:
  heartbeat: 200ms
  lost-timeout: 2s
  death-timeout: 2s
  rescan: 200ms
cluster:
  backend: local
  kinds:
    quick: {death-timeout: 1s}
    patient: {death-timeout: 60s}
    never: {death-timeout: 0}
EOF
	start_spoold
	wait_for 10 grep -q "started on" "$T/spoold.log" || fail "no start"
	# (its log read once it has ended: nothing more comes)
	stop_spoold
	local log
	log=$(cat "$T/spoold.log")
	assert_eq 1 "$(grep -c "warning: spool.yaml: daemon: death-timeout 2000 ms is under twice the heartbeat plus 2000 ms (2400 ms): workers given it will leave while spoold is well" <<< "$log")" \
	    "warnings of the daemon's death timeout"
	assert_eq 1 "$(grep -c "warning: spool.yaml: cluster kind quick: death-timeout 1000 ms is under twice the heartbeat plus 2000 ms (2400 ms): its workers will leave while spoold is well" <<< "$log")" \
	    "warnings of kind quick's death timeout"
	assert_eq 2 "$(grep -c "death-timeout" <<< "$log")" \
	    "lines naming a death timeout (patient's and never's are not short)"
	# and spool config show, after the settings, on stderr
	spool config show > "$T/show" 2> "$T/show.err" || fail "config show"
	assert_match "death-timeout 2.0s" "$(head -1 "$T/show")" "the settings"
	assert_eq "spool: warning: spool.yaml: daemon: death-timeout 2000 ms is under twice the heartbeat plus 2000 ms (2400 ms): workers given it will leave while spoold is well
spool: warning: spool.yaml: cluster kind quick: death-timeout 1000 ms is under twice the heartbeat plus 2000 ms (2400 ms): its workers will leave while spoold is well" \
	    "$(cat "$T/show.err")" "what spool config show warns of"
}

# A restart's recovery reads every live bundle and looks each of its
# tasks up (a stat each): on a large spool on a network filesystem that
# takes longer than lost-timeout (50,000 queued tasks over sshfs: 12 s).
# The lease did not beat meanwhile, so every worker left when its death
# timeout passed (and a spoold started on another host could break the
# lease of one still recovering).  Here each stat of a task of shard 0
# is made to take 250 ms: 40 tasks take 10 s, twice the worker's death
# timeout.
test_the_lease_beats_while_spoold_recovers() {
	new_spool
	start_spoold
	# queued for good: no worker has two cores
	seq 1 40 | spool map --cores 2 -- true {} > "$T/ids" || fail "map"
	wait_for 10 taken_in "$(tail -1 "$T/ids")" || fail "not taken in"
	# (5 s: across hosts a beat is seen up to two seconds late, sshfs's
	# attribute cache and whole-second mtimes; 2 s failed once on CI)
	start_worker patient --cores 1 --death-timeout 5s
	stop_spoold
	CKSPOOL_FAULT=count=all,slow-stat=0/:250 start_spoold
	wait_for 30 grep -q "recovered 1 worker," "$T/spoold.log" ||
	    fail "no recovery: $(tail -3 "$T/spoold.log")"
	assert_match "recovered 1 bundle: 40 queued" "$(cat "$T/spoold.log")"
	! not_running "$WORKER_PID" ||
	    fail "the worker left: $(tail -3 "$T/worker-patient.log")"
	assert_no_match "spoold has not beaten|draining" \
	    "$(cat "$T/worker-patient.log")"
}

# A worker that cannot read spoold's beat (here: a record without its
# check line, as a spoold of another version writes it) says so once,
# and the drain that follows after the death timeout names it.
test_worker_says_why_it_cannot_read_spoolds_beat() {
	new_spool
	start_spoold
	start_worker w1 --cores 1 --death-timeout 3s
	local w=$WORKER_PID log=$T/worker-w1.log
	kill -STOP "$SPOOLD_PID"
	printf 'beat: 1\ntime: 1.000\n' > "$T/beat"
	mv "$T/beat" "$SPOOL/lock/spoold/beat" || fail "replace the beat"
	wait_for 20 grep -Eq "warning: read: lock/spoold/beat: $STATUS_WHY; spoold's beats are not seen" \
	    "$log" || fail "the unreadable beat was not reported: $(tail -3 "$log")"
	wait_for 20 grep -Eq "draining \(spoold has not beaten for the death timeout \(its beat: $STATUS_WHY\)\)" \
	    "$log" || fail "no drain, or one for another reason: $(tail -3 "$log")"
	assert_eq 1 "$(grep -c "lock/spoold/beat: never read whole" "$log")" \
	    "warnings of the unreadable beat"
	kill -CONT "$SPOOLD_PID"
	wait_for 20 not_running "$w" || fail "the drained worker stayed"
}

# The same unreadable beat, but spoold beats again before the death
# timeout: the worker says it reads the beat again, and stays.
test_worker_reads_spoolds_beat_again() {
	new_spool
	start_spoold
	start_worker w1 --cores 1 --death-timeout 60s
	local log=$T/worker-w1.log id
	kill -STOP "$SPOOLD_PID"
	printf 'beat: 1\ntime: 1.000\n' > "$T/beat"
	mv "$T/beat" "$SPOOL/lock/spoold/beat" || fail "replace the beat"
	wait_for 20 grep -Eq "warning: read: lock/spoold/beat: $STATUS_WHY; spoold's beats are not seen" \
	    "$log" || fail "the unreadable beat was not reported: $(tail -3 "$log")"
	kill -CONT "$SPOOLD_PID"
	wait_for 20 grep -q "lock/spoold/beat: read again" "$log" ||
	    fail "the beat read again was not reported: $(tail -3 "$log")"
	assert_eq 1 "$(grep -c "lock/spoold/beat: never read whole" "$log")" \
	    "warnings of the unreadable beat"
	grep -q "draining" "$log" && fail "the worker drained: $(grep draining "$log")"
	id=$(spool submit -- echo ok) || fail "submit"
	spool wait "$id" || fail "the task failed: $(spool status "$id")"
	assert_eq ok "$(task_stdout "$id")"
	assert_eq w1 "$(field "$id" worker | sed 's/-[0-9a-f]*$//')" "worker of the task"
}

# A worker follows the daemon: keys that only a restart of spoold
# applies as spoold runs with them (its lease's owner record), not as
# spool.yaml says after a reload spoold refused: with the file's
# heartbeat of 3 s it would be declared lost by spoold's lost-timeout of
# 2 s while its task runs.  "spool config show" says the file and spoold
# differ.  A spoold restarted with the file's keys is followed too, by
# the worker that followed the one before.
test_a_worker_follows_spoolds_restart_keys_not_the_file() {
	new_spool
	start_spoold
	sed -i -e 's/^  heartbeat: .*/  heartbeat: 3s/' \
	    -e 's/^  lost-timeout: .*/  lost-timeout: 10s/' \
	    -e 's/^  death-timeout: .*/  death-timeout: 20s/' "$SPOOL/spool.yaml"
	kill -HUP "$SPOOLD_PID"
	wait_for 10 grep -q "reload: .*/spool.yaml changes daemon: heartbeat, which only a restart of spoold applies: nothing of it taken" \
	    "$T/spoold.log" || fail "no refusal: $(tail -3 "$T/spoold.log")"
	spool config show > "$T/show.out" 2> "$T/show.err" || fail "config show"
	assert_match "^daemon: heartbeat 3.0s, lost-timeout 10.0s, death-timeout 20.0s," \
	    "$(head -1 "$T/show.out")" "what the file says"
	assert_match "^spool: warning: spoold \(pid [0-9]+ on [^)]+\) runs with daemon: heartbeat 200 ms \(this file: 3000 ms\), daemon: lost-timeout 2000 ms \(this file: 10000 ms\), daemon: death-timeout 5000 ms \(this file: 20000 ms\), which only its restart applies; its workers follow it\$" \
	    "$(cat "$T/show.err")" "config show's warning"
	start_worker w1 --cores 1
	assert_match "ckworker: warning: spoold \(pid [0-9]+ on [^)]+\) runs with daemon: heartbeat 200 ms \(this worker: 3000 ms\), daemon: lost-timeout 2000 ms \(this worker: 10000 ms\), daemon: death-timeout 5000 ms \(this worker: 20000 ms\), which only its restart applies: following spoold's\$" \
	    "$(grep "runs with" "$T/worker-w1.log")" "the worker's warning"
	id=$(spool submit -- sleep 5) || fail "submit"
	spool wait --timeout 30s "$id" || fail "task: $(spool status "$id")"
	assert_eq 1 "$(field "$id" attempt)" "attempt of the task"
	assert_no_match "lost" "$(cat "$T/spoold.log")" "spoold's log"
	# a restart applies the file; the running worker follows it
	stop_spoold
	start_spoold
	wait_for 30 grep -q "runs with daemon: heartbeat 3000 ms (this worker: 200 ms), daemon: lost-timeout 10000 ms (this worker: 2000 ms), daemon: death-timeout 20000 ms (this worker: 5000 ms), which only its restart applies: following spoold's\$" \
	    "$T/worker-w1.log" || fail "not followed: $(tail -3 "$T/worker-w1.log")"
	spool config show > /dev/null 2> "$T/show.err" || fail "config show"
	assert_eq "" "$(cat "$T/show.err")" "config show's warnings"
	id=$(spool submit -- echo again) || fail "submit"
	spool wait --timeout 30s "$id" || fail "task: $(spool status "$id")"
	assert_eq w1 "$(field "$id" worker | sed 's/-[0-9a-f]*$//')" "worker of the task"
}

# spoold kills the process groups a dead local worker left running
# (kill_orphans), and it alone: the worker puts its tasks in no cgroup,
# or another test's worker starting on this host meanwhile would sweep
# the dead worker's cgroups (cgroup_sweep_host) and stop the task
# first, and the line looked for would be missing (seen once in CI,
# with six tests at a time).
test_dead_local_workers_tasks_are_killed() {
	new_spool
	fast_config "worker:
  memory-limit: watchdog
  cpu-limit: affinity"
	start_spoold --local 1 --local-cores 1
	mkdir "$T/taskpids"
	id=$(spool submit -- sh -c 'echo $$ > '"$T"'/taskpids/$SPOOL_ATTEMPT; sleep 30')
	wait_for 10 test -s "$T/taskpids/1" || fail "task did not start"
	victim=$(cat "$T/taskpids/1")
	assert_match "registered as local-1-[0-9a-f]+: .*, memory limits by watchdog, CPUs by affinity," \
	    "$(cat "$SPOOL"/log/local-1.log)" "the worker's limits"
	# let the worker publish the task's process group in a heartbeat
	wait_for 5 grep -q "^pgroups: \[$victim, " "$SPOOL"/workers/local-1-*/status ||
	    fail "process group not in the worker's status"
	pid=$(awk '/^pid:/ {print $2}' "$SPOOL"/workers/local-1-*/info)
	# with its guard, which would stop the task first
	kill_guard "$pid"
	kill -9 "$pid"
	# spoold proves the worker dead on this host and stops its task
	wait_for 10 not_running "$victim" || fail "orphaned task $victim survived"
	assert_match "killed 1 orphaned task process group of worker local-1-" \
	    "$(cat "$T/spoold.log")"
	wait_for 15 test -s "$T/taskpids/2" || fail "not requeued"
	spool cancel "$id" 2>/dev/null
}

# The worker's guard process (ckworker(1), "The guard") stops its tasks
# when it is killed, with no spoold to do it: spoold stands still (as
# one on another host, which cannot prove the worker dead), and both
# tasks' whole process groups end, the one started last too: a task's
# process lists itself before it runs anything of the task, so one
# that has written its pid is listed, whatever the worker has done
# since or its heartbeats said.  spoold then requeues them, finds
# nothing left to kill, and a new worker runs them.  The worker runs
# under a reaper that holds its orphans as zombies, as init may do
# for seconds: a killed leader that nobody reaped yet is no orphan
# for spoold to kill.
test_a_killed_workers_guard_stops_its_tasks() {
	new_spool
	start_spoold
	cat > "$T/reaper.py" <<-'EOF'
	import ctypes, os, signal, sys
	libc = ctypes.CDLL(None, use_errno=True)
	if libc.prctl(36, 1, 0, 0, 0) != 0:	# PR_SET_CHILD_SUBREAPER
	    sys.exit("prctl: " + os.strerror(ctypes.get_errno()))
	child = os.fork()
	if child == 0:
	    try:
	        os.execvp(sys.argv[1], sys.argv[1:])
	    finally:
	        os._exit(127)
	stopping = False
	def stop(sig, frame):	# the test's cleanup: the worker too
	    global stopping
	    stopping = True
	    if child:
	        os.kill(child, signal.SIGTERM)
	signal.signal(signal.SIGTERM, stop)
	os.waitpid(child, 0)	# reaps the worker, and only the worker
	child = 0
	while not stopping:
	    signal.pause()
	EOF
	local -a on_b=("${ON_B[@]}")
	ON_B=(python3 "$T/reaper.py" "${on_b[@]}")
	start_worker w1 --cores 2 --memory-limit watchdog
	ON_B=("${on_b[@]}")
	local pid guard a b p
	pid=$(awk '/^pid:/ {print $2}' "$SPOOL"/workers/w1-*/info)
	guard=$(pgrep -P "$pid" -f -- "--guard$") || fail "worker w1 has no guard"
	mkdir "$T/p"
	a=$(spool submit --shell 'echo $$ > '"$T"'/p/a.$SPOOL_ATTEMPT; if [ $SPOOL_ATTEMPT = 1 ]; then sleep 631 & echo $! > '"$T"'/p/a-kid.1; sleep 632; fi; echo done a') ||
	    fail "submit"
	wait_for 10 test -s "$T/p/a-kid.1" || fail "task $a did not start"
	b=$(spool submit --shell 'echo $$ > '"$T"'/p/b.$SPOOL_ATTEMPT; exec sleep 633') ||
	    fail "submit"
	wait_for 10 test -s "$T/p/b.1" || fail "task $b did not start"
	kill -STOP "$SPOOLD_PID"
	kill -KILL "$pid"
	for p in "$(cat "$T/p/a.1")" "$(cat "$T/p/a-kid.1")" "$(cat "$T/p/b.1")"; do
		wait_for 10 not_running "$p" ||
		    fail "process $p outlived its worker: $(ps -o pid,pgid,args -p "$p")"
	done
	wait_for 10 not_running "$guard" || fail "the guard stayed"
	assert_match "warning: worker w1-[0-9a-f]+ \\(pid $pid\\) died with 2 tasks running: killed their processes \\(task ($a attempt 1, task $b|$b attempt 1, task $a) attempt 1\\)$" \
	    "$(grep "died with" "$T/worker-w1.log")" "the guard's message"
	for p in "$(cat "$T/p/a.1")" "$(cat "$T/p/b.1")"; do
		assert_eq Z "$(ps -o stat= -p "$p" | cut -c1)" "state of the leader $p"
	done
	kill -CONT "$SPOOLD_PID"
	start_worker w2 --cores 2 --memory-limit watchdog
	wait_for 20 test -s "$T/p/b.2" || fail "task $b not run again"
	spool wait "$a" || fail "task $a: $(spool status "$a")"
	assert_eq "done a" "$(task_stdout "$a")"
	assert_eq 2 "$(field "$a" attempt)" "attempt of task $a"
	assert_no_match "orphaned" "$(cat "$T/spoold.log")" "spoold's log"
	spool cancel "$b" > /dev/null || fail "cancel"
}

# Without a cgroup method, a process that left its task's group (a
# daemon started with setsid) is stopped by the guard too, found by the
# SPOOL_WORKER of its environment (design.md section 12, item 1); one
# that dropped it (env -i) is not, as ckworker(1) says.
test_a_killed_workers_guard_stops_what_left_its_tasks_groups() {
	new_spool
	start_spoold
	start_worker w1 --cores 1 --memory-limit watchdog
	local pid a p
	pid=$(awk '/^pid:/ {print $2}' "$SPOOL"/workers/w1-*/info)
	mkdir "$T/p"
	a=$(spool submit --shell 'echo $$ > '"$T"'/p/lead; setsid sleep 641 & echo $! > '"$T"'/p/esc; env -i setsid sleep 642 & echo $! > '"$T"'/p/bare; sleep 643') ||
	    fail "submit"
	wait_for 10 test -s "$T/p/bare" || fail "task $a did not start"
	track "$(cat "$T/p/esc")"	# (killed at the end, however it ends)
	track "$(cat "$T/p/bare")"
	for p in esc bare; do
		wait_for 10 sh -c 'ps -o sid= -p "$1" | grep -qx " *$1"' _ \
		    "$(cat "$T/p/$p")" ||
		    fail "$p: the task's setsid did not happen: $(ps -o pid,pgid,sid,args -p "$(cat "$T/p/$p")")"
	done
	kill -STOP "$SPOOLD_PID"
	kill -KILL "$pid"
	for p in lead esc; do
		wait_for 10 not_running "$(cat "$T/p/$p")" ||
		    fail "$p: process $(cat "$T/p/$p") outlived its worker: $(ps -o pid,pgid,sid,args -p "$(cat "$T/p/$p")")"
	done
	wait_for 10 grep -q "died: killed 1 process of its tasks that had left their process groups" \
	    "$T/worker-w1.log" || fail "not said: $(grep 'died' "$T/worker-w1.log")"
	assert_match "died with 1 task running: killed its processes \\(task $a attempt 1\\)$" \
	    "$(grep "died with" "$T/worker-w1.log")" "the guard's message"
	# (sleep 642 left its group and its environment: not found)
	kill -0 "$(cat "$T/p/bare")" || fail "sleep 642 is gone: the test proves nothing"
	assert_eq sleep "$(ps -o comm= -p "$(cat "$T/p/bare")")" "what runs as the bare pid"
	kill -KILL "$(cat "$T/p/bare")"
	kill -CONT "$SPOOLD_PID"
	spool cancel "$a" > /dev/null || fail "cancel"
}

# "pkill -9 ckworker" (or with -f) kills the worker but not its guard,
# whose name and command line ("ckspool-guard --guard") do not contain
# "ckworker"; the guard then stops the running task.  Before, the guard
# was named ckworker, went with the worker, and the task ran on (here
# with spoold stopped, which on its own host would kill the groups of a
# worker it declares lost).  Only this test's worker is hit: the
# processes of its family that those pkills would match.
test_pkill_ckworker_leaves_the_guard_to_stop_the_tasks() {
	new_spool
	start_spoold
	start_worker w1 --cores 1
	local pid guard p v victims=""
	pid=$(awk '/^pid:/ {print $2}' "$SPOOL"/workers/w1-*/info)
	guard=$(pgrep -P "$pid" -f -- "--guard$") || fail "worker w1 has no guard"
	assert_eq ckspool-guard "$(ps -o comm= -p "$guard")" "the guard's name"
	assert_eq "ckspool-guard --guard" "$(ps -o args= -p "$guard")" \
	    "the guard's command line"
	spool submit --shell "echo \$\$ > '$T/task.pid'; exec sleep 641" \
	    > /dev/null || fail "submit"
	wait_for 10 test -s "$T/task.pid" || fail "the task did not start"
	p=$(cat "$T/task.pid")
	for v in "$pid" $(pgrep -P "$pid"); do
		if [ "$(ps -o comm= -p "$v")" = ckworker ] ||
		    ps -o args= -p "$v" | grep -q ckworker; then
			victims="$victims $v"
		fi
	done
	assert_match "^ $pid( |\$)" "$victims" "what pkill matches: the worker"
	assert_no_match " $guard( |\$)" "$victims" "what pkill matches"
	kill -STOP "$SPOOLD_PID"
	kill -KILL $victims
	if ! wait_for 10 not_running "$p"; then
		v=$(ps -o pid=,args= -p "$p")
		kill -CONT "$SPOOLD_PID"
		fail "the task outlived its worker: $v"
	fi
	wait_for 10 not_running "$guard" || fail "the guard stayed"
	kill -CONT "$SPOOLD_PID"
	assert_match "warning: worker w1-[0-9a-f]+ \\(pid $pid\\) died with 1 task running" \
	    "$(cat "$T/worker-w1.log")" "the guard's message"
}

# A worker that leaves by itself ends its guard without a word; a guard
# killed while its worker lives is said once, and the worker goes on.
test_a_workers_guard_goes_with_it_and_is_missed_aloud() {
	new_spool
	start_spoold
	start_worker w1 --cores 1 --idle-timeout 2s
	local pid guard id
	pid=$(awk '/^pid:/ {print $2}' "$SPOOL"/workers/w1-*/info)
	guard=$(pgrep -P "$pid" -f -- "--guard$") || fail "worker w1 has no guard"
	id=$(spool submit -- echo ok) || fail "submit"
	spool wait "$id" || fail "task $id: $(spool status "$id")"
	wait_for 20 not_running "$pid" || fail "worker w1 stayed"
	wait_for 10 not_running "$guard" || fail "the guard outlived its worker"
	assert_no_match "guard|died with" "$(cat "$T/worker-w1.log")" "worker w1's log"
	start_worker w2 --cores 1
	pid=$(awk '/^pid:/ {print $2}' "$SPOOL"/workers/w2-*/info)
	guard=$(pgrep -P "$pid" -f -- "--guard$") || fail "worker w2 has no guard"
	kill -KILL "$guard"
	wait_for 10 grep -q "warning: the guard process $guard was killed by signal 9: if this worker is killed, its running tasks are not stopped" \
	    "$T/worker-w2.log" || fail "not said: $(tail -3 "$T/worker-w2.log")"
	id=$(spool submit -- echo again) || fail "submit"
	spool wait "$id" || fail "task $id: $(spool status "$id")"
	assert_eq again "$(task_stdout "$id")"
	assert_eq 1 "$(grep -c "guard process" "$T/worker-w2.log")" "warnings"
}

# A task of worker w1 (its WID in $wid) that ran and committed its
# result to done/ while no spoold ran: its ID in $id, each run a line
# of $T/runs.
commit_while_spoold_is_down() {
	new_spool
	start_spoold
	start_worker w1 --cores 1
	wid=$(worker_wid w1)
	id=$(spool submit -- sh -c "echo run >> '$T/runs'; until [ -e '$T/go' ]; do sleep 0.05; done") ||
	    fail "submit"
	wait_for 10 test -e "$SPOOL/workers/$wid/running/$id.1" ||
	    fail "task $id not running: $(state_of "$id")"
	stop_spoold
	touch "$T/go"
	wait_for 10 test -e "$SPOOL/workers/$wid/done/$id.1" ||
	    fail "task $id not committed: $(tail -3 "$T/worker-w1.log")"
}

# A listing that spoold's recovery depends on fails (an I/O error,
# injected once): recovery lists it again, after a rescan interval,
# until it succeeds, and only then goes on.  It only warned and went on:
# a worker's done/ not listed, the task whose result was committed
# there while spoold was down was queued, placed and run again under
# the same attempt number, and the first run's result was discarded as
# a stale report.
test_a_result_committed_while_spoold_was_down_survives_a_failed_listing() {
	local wid id
	commit_while_spoold_is_down
	# damage, not a read that failed: not waited for
	: > "$SPOOL/workers/not-a-worker"
	CKSPOOL_FAULT=count=all,list-fails=done:EIO*1 start_spoold
	spool wait "$id" || fail "task $id failed"
	wait_for 10 grep -q "recovered 1 worker," "$T/spoold.log" ||
	    fail "no recovery: $(tail -3 "$T/spoold.log")"
	assert_match "list: workers/$wid/done: Input/output error" \
	    "$(cat "$T/spoold.log")" "spoold's log"
	assert_match "recovered 1 worker, 1 task placed" \
	    "$(cat "$T/spoold.log")" "spoold's log"
	assert_eq 1 "$(field "$id" attempt)" "attempt of task $id"
	assert_eq 1 "$(wc -l < "$T/runs")" "runs of task $id"
	assert_no_match "stale report" "$(cat "$T/spoold.log")" "spoold's log"
}

# spoold's log from line $1 on (one start's)
log_from() {
	tail -n "+$1" "$T/spoold.log"
}

# spoold started with CKSPOOL_FAULT=$1, and waited for until its log
# from this start on (line $from on) says $2
start_spoold_recovering() {	# FAULT TEXT
	from=$(( $(wc -l < "$T/spoold.log") + 1 ))
	CKSPOOL_FAULT=$1 start_spoold
	wait_for 10 sh -c "tail -n +$from '$T/spoold.log' | grep -q '$2'" ||
	    fail "$1: no recovery: $(tail -3 "$T/spoold.log")"
}

# The same for each other listing recovery depends on: a worker's
# running/ and inbox/ (a task there was queued and placed again under
# the same attempt, beside the one its worker holds), workers/ (the
# worker registered later, in the main loop, with none of its tasks
# known; its first listing is finish_recover's, which only looks for
# interrupted acceptances: the second one fails), and returned/ (a task
# handed back while spoold was down was placed again under the same
# attempt, the handing back discarded as a stale report); and a worker
# whose info cannot be read (registered later, as for workers/).
test_a_failed_listing_at_recovery_forgets_no_placement() {
	local wid a b from row
	new_spool
	start_spoold
	one_running_one_ahead
	for row in list-fails=running:EIO*1 list-fails=inbox:EIO*1 \
	    list-fails=workers:EIO*2 open-fails=info:EIO*1; do
		stop_spoold
		start_spoold_recovering "count=all,$row" "recovered 1 worker,"
		assert_match "(list: workers[^ ]*|register worker $wid): Input/output error" \
		    "$(log_from "$from")" "$row: spoold's log"
		assert_match "recovered 1 worker, 2 tasks placed" \
		    "$(log_from "$from")" "$row: spoold's log"
	done
	handed_back_while_spoold_is_down
	start_spoold_recovering count=all,list-fails=returned:EIO*1 \
	    "recovered 1 worker,"
	assert_match "list: workers/$wid/returned: Input/output error" \
	    "$(log_from "$from")" "returned: spoold's log"
	both_run_again
	assert_no_match "stale report" "$(cat "$T/spoold.log")" "spoold's log"
}

# Worker w1 (one core) runs task $a, which waits for $T/go, and holds
# task $b placed ahead in its inbox/, not started.  Sets wid, a, b.
one_running_one_ahead() {
	start_worker w1 --cores 1
	wid=$(worker_wid w1)
	a=$(spool submit -- sh -c "echo \$SPOOL_ATTEMPT >> '$T/runs-a'; until [ -e '$T/go' ]; do sleep 0.05; done") ||
	    fail "submit"
	b=$(spool submit -- sh -c "echo \$SPOOL_ATTEMPT >> '$T/runs-b'") ||
	    fail "submit"
	wait_for 10 test -e "$SPOOL/workers/$wid/running/$a.1" ||
	    fail "task $a not running: $(state_of "$a")"
	# its command begun: running/ is written before the task's process
	# runs, and a kill of w1 before its echo left no first run (seen
	# four tests at a time: "runs of task 1: expected '1 2 ', got '2 '")
	wait_for 10 test -s "$T/runs-a" || fail "task $a never began"
	wait_for 10 test -e "$SPOOL/workers/$wid/inbox/$b.1" ||
	    fail "task $b not placed ahead: $(state_of "$b")"
}

# spoold stopped, w1 (one_running_one_ahead) hands both tasks back: $b
# from inbox/, $a killed.
handed_back_while_spoold_is_down() {
	stop_spoold
	kill -TERM "$WORKER_PID"
	wait_for 10 not_running "$WORKER_PID" || fail "w1 did not leave"
	[ -e "$SPOOL/workers/$wid/returned/$b.1" ] ||
	    fail "task $b not handed back: $(ls "$SPOOL/workers/$wid"/*)"
}

# Tasks $a and $b, handed back by w1 (one_running_one_ahead), run
# again on a worker w2, each once and under attempt 2.
both_run_again() {
	touch "$T/go"
	start_worker w2 --cores 1
	spool wait "$a" "$b" || fail "tasks failed"
	assert_eq 2 "$(field "$b" attempt)" "attempt of task $b"
	assert_eq 2 "$(field "$a" attempt)" "attempt of task $a"
	assert_eq "1 2 " "$(tr '\n' ' ' < "$T/runs-a")" "runs of task $a"
	assert_eq "2 " "$(tr '\n' ' ' < "$T/runs-b")" "runs of task $b"
}

# A task handed back before it started (from inbox/) has no work
# directory to keep in attempts/: its report in returned/ is its
# attempt's only trace until requeued/ID is written (spoold/finish.c:
# accept_returned).  That report was removed first: with the record
# not written (a directory in the way: EISDIR, for task $b alone), a
# spoold killed then left no trace of attempt 1, and the next one
# placed task $b again under attempt 1.  Now the hand-back is held
# (the report kept, the task still placed on w1, w1's directory kept)
# until the record is written.
test_a_hand_back_not_started_is_held_until_its_record_is_written() {
	local wid a b
	new_spool
	start_spoold
	one_running_one_ahead
	mkdir "$SPOOL/requeued/$b" || fail "mkdir"
	kill -TERM "$WORKER_PID"
	wait_for 10 not_running "$WORKER_PID" || fail "w1 did not leave"
	wait_for 20 grep -q "write: requeued/$b: " "$T/spoold.log" ||
	    fail "the failed write not said: $(tail -3 "$T/spoold.log")"
	[ -e "$SPOOL/workers/$wid/returned/$b.1" ] ||
	    fail "the report of task $b went, its record not written: $(ls -R "$SPOOL/workers/$wid" 2>&1)"
	kill -9 "$SPOOLD_PID"
	wait_for 10 not_running "$SPOOLD_PID" || fail "spoold still there"
	rmdir "$SPOOL/requeued/$b" || fail "rmdir"
	start_spoold
	both_run_again
}

# spoold killed after a hand-back's requeued/ID is written and before
# its report, with no work directory to join, is removed (the third
# mutation of "$b.1": the work directory's move, ENOENT, the report's
# into attempts/$b.1, ENOENT, then its unlink): the next start takes
# the hand-back in again, once, and the task runs under attempt 2.
test_spoold_killed_between_a_hand_backs_record_and_its_report() {
	local wid a b
	new_spool
	start_spoold
	one_running_one_ahead
	handed_back_while_spoold_is_down
	CKSPOOL_FAULT="crash-on=$b.1*3" start_spoold
	wait_for 15 not_running "$SPOOLD_PID" || fail "spoold did not crash"
	assert_match "fault injection: crash before operation [0-9]+ \(unlink $b\.1\)" \
	    "$(cat "$T/spoold.log")" "spoold's log"
	assert_match "attempt: 1" "$(cat "$SPOOL/requeued/$b")" "requeued/$b"
	[ -e "$SPOOL/workers/$wid/returned/$b.1" ] ||
	    fail "the report of task $b went"
	start_spoold
	both_run_again
	assert_eq 1 "$(grep -c "task $b attempt 1 handed back" "$T/spoold.log")" \
	    "hand-backs of task $b taken in"
}

# A hand-back's record is flushed before its report goes: requeued/ is
# fsync'ed once for the listing's records (spoold/finish.c:
# returned_take_all), so that a power loss cannot keep a report's
# removal and lose its record.  With that flush failing, both
# hand-backs are held (reports kept, records written, nothing run
# again), tried again at each rescan and said once; the next spoold
# takes them in, each task running again under attempt 2.
test_a_hand_back_waits_for_its_record_to_be_flushed() {
	local wid a b
	new_spool
	CKSPOOL_FAULT=fail-on=requeued:EIO*1000000 start_spoold
	one_running_one_ahead
	kill -TERM "$WORKER_PID"
	wait_for 10 not_running "$WORKER_PID" || fail "w1 did not leave"
	wait_for 20 sh -c "[ \$(grep -c 'operation [0-9]* (fsync requeued) fails' '$T/spoold.log') -ge 2 ]" ||
	    fail "requeued/ not flushed again: $(tail -3 "$T/spoold.log")"
	assert_eq 1 "$(grep -c "fsync: requeued: Input/output error (hand-backs wait until their records are flushed)" "$T/spoold.log")" \
	    "warnings of the failed flush"
	[ -e "$SPOOL/workers/$wid/returned/$b.1" ] && [ -e "$SPOOL/workers/$wid/returned/$a.1" ] ||
	    fail "a report went, its record not flushed: $(ls -R "$SPOOL/workers/$wid" 2>&1)"
	assert_match "attempt: 1" "$(cat "$SPOOL/requeued/$b")" "requeued/$b"
	assert_no_match "handed back" "$(cat "$T/spoold.log")" "spoold's log"
	[ ! -e "$T/runs-b" ] || fail "task $b ran: $(cat "$T/runs-b")"
	kill -9 "$SPOOLD_PID"
	wait_for 10 not_running "$SPOOLD_PID" || fail "spoold still there"
	start_spoold
	both_run_again
}

# While a listing keeps failing, recovery waits: spoold says so once,
# "spool status" shows it recovering, no task is placed again, and a
# SIGTERM stops it at once (exit 0, lease released); the next start
# takes the result in.
test_a_recovery_waiting_for_a_listing_says_so_and_stops_on_sigterm() {
	local wid id rc
	commit_while_spoold_is_down
	CKSPOOL_FAULT=count=all,list-fails=done:EIO*1000000 start_spoold
	wait_for 10 grep -q "fault injection: .*(list done) fails.*" "$T/spoold.log" ||
	    fail "no failed listing: $(tail -3 "$T/spoold.log")"
	# listed again: at least a rescan later
	wait_for 10 sh -c "[ \$(grep -c '(list done) fails' '$T/spoold.log') -ge 3 ]" ||
	    fail "done/ not listed again: $(tail -3 "$T/spoold.log")"
	assert_eq 1 "$(grep -c "list: workers/$wid/done: Input/output error (recovery waits until it can be listed)" "$T/spoold.log")" \
	    "reports of the failed listing"
	assert_match "^spoold: pid [0-9]+ on .*, recovering$" \
	    "$(spool status | head -1)" "spool status"
	assert_no_match "recovered 1 worker" "$(cat "$T/spoold.log")" "spoold's log"
	kill -TERM "$SPOOLD_PID"
	wait "$SPOOLD_PID"
	rc=$?
	assert_eq 0 "$rc" "spoold's exit status"
	assert_match "stopping \(SIGTERM\) while recovering" \
	    "$(cat "$T/spoold.log")" "spoold's log"
	[ -e "$SPOOL/lock/spoold" ] && fail "the lease was not released"
	start_spoold
	spool wait "$id" || fail "task $id failed"
	assert_eq 1 "$(field "$id" attempt)" "attempt of task $id"
	assert_eq 1 "$(wc -l < "$T/runs")" "runs of task $id"
}

# The same for the records of earlier attempts: requeued/ and a
# requeued/ID in it (the task's retries counted so far were forgotten,
# and it was retried once more than --retries allows) and, with
# requeued/, attempts/ (a task handed back while queued was placed
# again under attempt 1).
test_a_failed_listing_at_recovery_reuses_no_attempt() {
	local wid id
	new_spool
	start_spoold
	start_worker w1 --cores 1
	wid=$(worker_wid w1)
	# task 2 (task 1 does nothing): its requeued/2 is the only file
	# whose name starts with 2 that recovery reads
	printf 'a\nb\n' | spool map --retries 1 -- sh -c "[ \$1 = b ] || exit 0; echo \$SPOOL_ATTEMPT >> '$T/runs'; [ \$SPOOL_ATTEMPT -gt 1 ] || exit 1; until [ -e '$T/go' ]; do sleep 0.05; done; exit 1" _ {} > "$T/ids" ||
	    fail "map"
	id=$(tail -1 "$T/ids")
	assert_eq 2 "$id" "the task's ID"
	wait_for 10 test -e "$SPOOL/workers/$wid/running/$id.2" ||
	    fail "task $id not retried: $(state_of "$id")"
	for row in list-fails=requeued:EIO*1 open-fails=2:EIO*1; do
		stop_spoold
		start_spoold_recovering "count=all,$row" "recovered 1 worker,"
		assert_match "(list: requeued|read: requeued/$id): Input/output error" \
		    "$(log_from "$from")" "$row: spoold's log"
	done
	# w1 hands attempt 2 back and leaves: the task is queued
	kill -TERM "$WORKER_PID"
	wait_for 10 not_running "$WORKER_PID" || fail "w1 did not leave"
	wait_for 10 grep -q "task $id attempt 2 handed back" "$T/spoold.log" ||
	    fail "not handed back: $(tail -3 "$T/spoold.log")"
	stop_spoold
	start_spoold_recovering \
	    count=all,list-fails=requeued:EIO*1,list-fails=attempts:EIO*1 \
	    "recovered 0 workers,"
	assert_match "list: attempts: Input/output error" \
	    "$(log_from "$from")" "spoold's log"
	touch "$T/go"
	start_worker w2 --cores 1
	wait_for 20 finished "$id" || fail "task $id not final: $(state_of "$id")"
	assert_eq failed "$(field "$id" state)" "state of task $id"
	assert_eq 3 "$(field "$id" attempt)" "attempt of task $id"
	assert_eq "1 2 3 " "$(tr '\n' ' ' < "$T/runs")" "runs of task $id"
}

# The same for a worker's revoked/, which keeps the attempt numbers of
# a lost worker's tasks: with the task's requeued/ID not written (as
# when its write failed and spoold stopped before it was tried again),
# the task was placed again under the attempt its lost worker may still
# run.  The lost worker's directory is kept (its removal fails) so that
# it is there at the restart.
test_a_failed_listing_of_revoked_at_recovery_reuses_no_attempt() {
	local wid id w1 keep=fail-on=w1-:EIO*1000000
	new_spool
	CKSPOOL_FAULT=$keep start_spoold
	start_worker w1 --cores 1
	wid=$(worker_wid w1)
	id=$(spool submit -- sh -c "echo \$SPOOL_ATTEMPT >> '$T/runs'; until [ -e '$T/go' ]; do sleep 0.05; done") ||
	    fail "submit"
	wait_for 10 test -e "$SPOOL/workers/$wid/running/$id.1" ||
	    fail "task $id not running: $(state_of "$id")"
	# claimed is not started: stopped between the two, w1 ran nothing
	wait_for 10 grep -qx 1 "$T/runs" || fail "attempt 1 did not start"
	w1=$WORKER_PID
	kill -STOP "$w1"
	wait_for 15 test -e "$SPOOL/workers/$wid/revoked/$id.1" ||
	    fail "task $id not revoked: $(tail -3 "$T/spoold.log")"
	wait_for 10 test -e "$SPOOL/requeued/$id" ||
	    fail "requeued/$id not written: $(tail -3 "$T/spoold.log")"
	stop_spoold
	[ -d "$SPOOL/workers/$wid" ] || fail "w1's directory was removed"
	rm "$SPOOL/requeued/$id"
	CKSPOOL_FAULT=count=all,list-fails=revoked:EIO*1,$keep start_spoold
	wait_for 10 grep -q "recovered 1 worker," "$T/spoold.log" ||
	    fail "no recovery: $(tail -3 "$T/spoold.log")"
	assert_match "list: workers/$wid/revoked: Input/output error" \
	    "$(cat "$T/spoold.log")" "spoold's log"
	touch "$T/go"
	start_worker w2 --cores 1
	spool wait "$id" || fail "task $id failed"
	assert_eq 2 "$(field "$id" attempt)" "attempt of task $id"
	assert_match "^w2-" "$(field "$id" worker)" "worker of task $id"
	assert_eq "1 2 " "$(tr '\n' ' ' < "$T/runs")" "runs of task $id"
	kill -KILL "$w1"
}

# And for an acceptance that a crash interrupted between its two renames
# (workers/WID/work/ID.ATT with its spec in it): the listing of workers/
# or the open of a worker's work/ that finds it, or its rename to
# tasks/, failing once at the restart left it undone, and the task, live
# again and placed nowhere, ran again under the same attempt.
test_a_failed_read_at_recovery_leaves_no_acceptance_undone() {
	local n=0 id row from
	new_spool
	start_spoold
	start_worker w1 --cores 1
	stop_spoold
	for row in list-fails=workers:EIO*1 open-fails=w1-:EIO*1 \
	    fail-on=3.1:EIO*1; do
		n=$((n + 1))
		# before its second mutation of "N.1": the rename to tasks/
		CKSPOOL_FAULT="crash-on=$n.1*2" start_spoold
		id=$(spool submit -- sh -c 'echo run >> "$1"' _ "$T/runs.$n") ||
		    fail "submit"
		assert_eq "$n" "$id" "the task's ID (the fault names $n.1)"
		wait_for 15 not_running "$SPOOLD_PID" || fail "spoold did not crash"
		from=$(( $(wc -l < "$T/spoold.log") + 1 ))
		CKSPOOL_FAULT=count=all,$row start_spoold
		spool wait "$id" || fail "$row: task $id failed"
		assert_match "(list: workers|open: workers/w1-[^ ]*/work|rename: workers/w1-[^ ]*/work/$id.1 to tasks/0/$id): Input/output error" \
		    "$(log_from "$from")" "$row: spoold's log"
		assert_match "task $id attempt 1: its acceptance, interrupted, is completed" \
		    "$(log_from "$from")" "$row: spoold's log"
		assert_eq run "$(cat "$T/runs.$n")" "$row: runs of task $id"
		stop_spoold
	done
}

# spoold stopped with tasks queued in specs/; IDs in $T/ids, each task
# appending its number to $T/runs (N tasks, each of an input of over
# $2 characters: one bundle, specs/1)
queued_in_specs() {
	local n=$1 len=$2 pad i
	pad=$(head -c "$len" /dev/zero | tr '\0' x)
	new_spool
	start_spoold
	for i in $(seq 1 "$n"); do
		printf '%04d%s\n' "$i" "$pad"
	done | spool map -- sh -c "echo \"\${1%%x*}\" >> '$T/runs'" _ {} > "$T/ids" ||
	    fail "map"
	wait_for 10 taken_in "$(tail -1 "$T/ids")" || fail "not taken in"
	stop_spoold
	[ -f "$SPOOL/specs/1" ] || fail "no specs/1: $(ls "$SPOOL/specs")"
}

# every task of $T/ids run, and once
each_ran_once() {
	spool wait < "$T/ids" || fail "tasks failed: $(tail -3 "$T/spoold.log")"
	assert_eq "$(wc -l < "$T/ids")" "$(sort -u "$T/runs" | wc -l)" "tasks run"
	assert_eq "$(wc -l < "$T/ids")" "$(wc -l < "$T/runs")" "runs"
}

# The same for specs/: a listing of it, or an open or read of a bundle
# in it, that failed at the start (an I/O error, a stale handle past
# the retries) stopped spoold (exit 111, "list: specs: Input/output
# error"), where the rest of recovery waits; an init system then
# restarted it, and an admin's start was gone.  Recovery waits and
# reads again; every task queued is recovered and run once.
test_a_failed_read_of_specs_at_recovery_waits() {
	local row from
	queued_in_specs 3 8
	for row in list-fails=specs:EIO*3 open-fails=1:EIO*2 \
	    read-fails=1:EIO*2; do
		start_spoold_recovering "count=all,$row" "recovered 1 bundle"
		assert_eq 1 "$(log_from "$from" | grep -cE "(list: specs|read: specs/1): Input/output error \(recovery waits until it can be (listed|read)\)")" \
		    "$row: reports of the failed read"
		assert_match "recovered 1 bundle: 3 queued, 0 waiting" \
		    "$(log_from "$from")" "$row: spoold's log"
		stop_spoold
	done
	start_spoold
	start_worker w1 --cores 1
	each_ran_once
}

# A read of a bundle that fails half way through its tasks (a bundle of
# over a megabyte: its second read, the first two of its header) goes
# on where it stopped, the tasks already indexed not indexed again.
# Its one worker reads 64 assignments of 20 KB: across hosts, through
# sshfs beside three other tests, it once went 2.1 s without a beat,
# was found lost (lost-timeout 2 s) and left, and no worker was left to
# run the tasks (the .ci/run of 1a86acf); nothing here is about losses.
test_a_read_of_specs_failing_half_way_indexes_no_task_twice() {
	local from
	queued_in_specs 64 20000
	sed -i 's/^  lost-timeout: .*/  lost-timeout: 20s/' "$SPOOL/spool.yaml"
	start_spoold_recovering "read-fails=1:EIO*1@2" "recovered 1 bundle"
	assert_match "read: specs/1: Input/output error \(recovery waits" \
	    "$(log_from "$from")" "spoold's log"
	assert_match "recovered 1 bundle: 64 queued, 0 waiting" \
	    "$(log_from "$from")" "spoold's log"
	start_worker w1 --cores 2
	each_ran_once
	kill -0 "$SPOOLD_PID" || fail "spoold died: $(tail -3 "$T/spoold.log")"
}

# A record of a bundle in specs/ that does not decode (a byte of task
# 2's record changed by hand, the file's size kept) is damage, as a
# header that does not decode is: spoold stops at recovery with exit
# status 111, naming the file, the line and the task, "a damaged spool"
# (it aborted, exit 134 and a core, with "own bundle 1 unreadable", the
# panic of a bundle spoold has just written itself).  spool fsck names
# the same line.
test_a_record_of_specs_that_does_not_decode_stops_spoold_as_damage() {
	local rc line
	queued_in_specs 3 8
	awk '/^cores: 1$/ && ++n == 2 { $0 = "cores: x" } 1' \
	    "$SPOOL/specs/1" > "$T/spec" || fail "awk"
	assert_eq 1 "$(cmp -l "$SPOOL/specs/1" "$T/spec" | wc -l)" \
	    "bytes changed"
	# written on spoold's host: across hosts, its sshfs keeps the data
	# it read of a file whose size and mtime (in seconds) are the same
	"${ON_A[@]}" sh -c 'cat "$1" > "$2"' _ "$T/spec" "$SPOOL/specs/1" ||
	    fail "write specs/1"
	# (bounded: a spoold that recovers does not exit; stopped, it says 0)
	"${ON_A[@]}" timeout 30 spoold >> "$T/spoold.log" 2>&1
	rc=$?
	assert_eq 111 "$rc" "spoold's exit status: $(tail -1 "$T/spoold.log")"
	assert_match "fatal: specs/1: line [0-9]+ \(task 2\): not an unsigned integer \(a damaged spool: move the file aside to start\)$" \
	    "$(tail -1 "$T/spoold.log")" "spoold's last line"
	line=$(tail -1 "$T/spoold.log" | sed -n 's/.*specs\/1: line \([0-9]*\) .*/\1/p')
	spool fsck > "$T/fsck" 2>&1 && fail "fsck found no problem"
	assert_match "^fsck: specs/1: line $line: " "$(cat "$T/fsck")" "fsck"
}

# A file in specs/ that is not a bundle is warned of once a start, also
# when the listing of specs/ is made again after one that failed once it
# had named every entry (list-breaks): it was warned of at each listing.
# The bundle's tasks, named twice too, are recovered once each.  (A
# listing that fails at its open, list-fails, names nothing twice.)
test_an_unexpected_file_in_specs_is_warned_of_once() {
	queued_in_specs 3 8
	: > "$SPOOL/specs/stray"
	start_spoold_recovering "list-breaks=specs:EIO*1" "recovered 1 bundle"
	assert_match "list: specs: Input/output error \(recovery waits" \
	    "$(log_from "$from")" "spoold's log"
	assert_eq 1 "$(log_from "$from" | grep -c 'specs/stray: unexpected file; ignored')" \
	    "warnings of specs/stray"
	assert_match "recovered 1 bundle: 3 queued, 0 waiting" \
	    "$(log_from "$from")" "spoold's log"
	start_worker w1 --cores 1
	each_ran_once
}
