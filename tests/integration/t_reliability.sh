# t_reliability.sh - the invariant checker (spool fsck) and injected
# faults: damage is found, errors are reported and survived, stale
# handles are retried, NFS leftovers are left alone.
# (The crash loop and the kill -9 soak are tests/reliability/.)
# across hosts: yes

# a small finished workload: tasks 1-3 done, 4 failed once then retried.
# spoold stops first, so the worker's directory stays (marked exited):
# a running spoold removes the directory of a worker that exited.
small_workload() {
	start_spoold
	start_worker w1 --cores 1
	seq 1 3 | spool map -- sh -c 'echo r$1' _ {} > "$T/ids"
	spool submit --retries 1 -- \
	    sh -c '[ "$SPOOL_ATTEMPT" -gt 1 ] || exit 3; echo again' >> "$T/ids"
	spool wait < "$T/ids" || fail "workload failed"
	stop_spoold
	kill -TERM "$WORKER_PID"
	wait_for 10 not_running "$WORKER_PID" || fail "worker stayed"
	[ -e "$SPOOL/workers/$(ls "$SPOOL/workers")/exited" ] ||
	    fail "the worker left no directory marked exited"
}

test_fsck_finds_each_kind_of_damage() {
	new_spool
	small_workload
	spool fsck --settled > "$T/out" || fail "fsck of a sound spool: $(cat "$T/out")"
	assert_match "4 final tasks, 0 live, 2 claims, 1 workers, 0 rejected files; 0 problems" \
	    "$(tail -1 "$T/out")"
	# each row: what to break (in a copy), what fsck must say, and how
	# many problems it must count (1 unless the row says otherwise: a
	# bundle submitted twice is also, settled, one not taken in); the
	# exit status is 1.  Fields are split at "|": no pipe in a command.
	while IFS='|' read -r what breakage expect count; do
		rm -rf "$T/copy"
		cp -a "$SPOOL" "$T/copy"
		(cd "$T/copy" && eval "$breakage") 2> "$T/setup.err" ||
		    fail "$what: setup: $(cat "$T/setup.err")"
		if spool -S "$T/copy" fsck --settled > "$T/out" 2>&1; then
			fail "$what: not found: $(cat "$T/out")"
		fi
		assert_match "$expect" "$(cat "$T/out")" "$what"
		case ${count:-1} in
		1) assert_match "; 1 problem$" "$(tail -1 "$T/out")" "$what: count" ;;
		*) assert_match "; $count problems$" "$(tail -1 "$T/out")" "$what: count" ;;
		esac
	done <<'EOF'
truncated result|head -c 20 tasks/0/1/result > x && mv x tasks/0/1/result|tasks/0/1/result: partial file \(no newline at the end\)
empty result|: > tasks/0/2/result|tasks/0/2/result: partial file \(empty\)
result of another task|sed -i 's/^id: 3$/id: 2/' tasks/0/3/result|tasks/0/3/result: is the result of task 2
spec of another task|sed -i 's/^id: 3$/id: 1/' tasks/0/3/spec|tasks/0/3/spec: is the spec of task 1
missing spec|rm tasks/0/2/spec|tasks/0/2/spec: missing
task in the wrong shard|mkdir tasks/1 && mv tasks/0/3 tasks/1/3|tasks/1/3: task 3 in the wrong shard
task never claimed|cp -a tasks/0/3 tasks/0/7 && sed -i 's/^id: 3$/id: 7/' tasks/0/7/result tasks/0/7/spec|tasks/0/7: task was never claimed
overlapping claims|ln -s '2 vm.1.1.deadbeef' ids/0/2|ids: claim 2 \(2 IDs\) overlaps the claim before it
submitted twice|printf 'bundle: 1\nfirst: 2\ncount: 1\n---\nid: 2\nargv: ["true"]\n' > incoming/2.bundle|incoming/2.bundle: task 2 is already final|2
leftover in tmp|echo x > tmp/half.written|tmp/half.written: left in a temporary area
report not taken in|w=$(ls workers) && mkdir -p workers/$w/work/4.1 && cp tasks/0/4/result workers/$w/work/4.1/result && sed -i 's/^attempt: .*/attempt: 1/' workers/$w/work/4.1/result && cp tasks/0/4/spec workers/$w/done/4.1 && sed -i 's/^attempt: .*/attempt: 1/' workers/$w/done/4.1|done/4.1: a report spoold has not taken in
acceptance not completed|w=$(ls workers) && mkdir -p workers/$w/work/3.1 && cp tasks/0/3/result workers/$w/work/3.1/result && sed -i 's/^attempt: .*/attempt: 1/' workers/$w/work/3.1/result && cp tasks/0/3/spec workers/$w/work/3.1/spec|work/3.1: accepted \(its spec is in it\), but not renamed to tasks/
rejected without reason|echo x > rejected/bad.yaml|rejected/bad.yaml: no reason
EOF
	# notes are not problems: a silly-renamed file of NFS
	touch "$SPOOL/tasks/0/.nfs000000000012345600000001"
	spool fsck --settled > "$T/out" || fail "a .nfs file is not damage"
	assert_match "note: tasks/0/.nfs000000000012345600000001: hidden file" \
	    "$(cat "$T/out")"
}

test_fault_injection_is_reported_and_leaves_nothing() {
	new_spool
	# an injected error: a message naming it, no task, no ID used
	if CKSPOOL_FAULT=fail-at=1:EIO spool submit -- true 2> "$T/err"; then
		fail "submit succeeded through an injected EIO"
	fi
	assert_match "fault injection is on: CKSPOOL_FAULT=fail-at=1:EIO" "$(cat "$T/err")"
	# (EIO's text is the C library's: spool is linked with musl, the
	# daemons with glibc; doc/performance.md)
	assert_match "spool: .*(Input/output error|I/O error)" "$(tail -1 "$T/err")"
	dir_empty "$SPOOL/incoming" || fail "something was submitted"
	# an injected crash: the distinct status, and still nothing half-made
	CKSPOOL_FAULT=crash-at=3 spool submit -- true 2> "$T/err"
	assert_eq 86 $? "exit status of an injected crash"
	assert_match "crash before operation 3" "$(cat "$T/err")"
	spool fsck > "$T/out" || fail "fsck after the crash: $(cat "$T/out")"
	dir_empty "$SPOOL/incoming" || fail "a crashed submission is visible"
	id=$(spool submit -- echo fine) || fail "submit after the crash"
	start_spoold
	start_worker w --cores 1
	spool wait "$id" || fail "task after the crash"
	# a malformed setting is a usage error, said at once
	CKSPOOL_FAULT=fail-at=x spool status > /dev/null 2> "$T/err"
	assert_eq 2 $? "status of a malformed CKSPOOL_FAULT"
	assert_match 'cannot use "fail-at=x"' "$(cat "$T/err")"
}

# spool init crashed before each of its mutations in turn (the crash
# loop of tests/reliability/ starts from a made spool): what it leaves
# is refused as a spool, init again completes it, and nothing is left
# outside tmp/, which spoold's recovery sweeps.  An injected error says
# what failed on what, and makes nothing.
test_init_survives_a_crash_at_every_step() {
	layout="accepting attempts control FORMAT gc ids incoming jobs journal lock log rejected requeued scale specs state tasks tmp workers"
	n=0
	swept=""
	while :; do
		n=$((n + 1))
		[ $n -le 100 ] || fail "spool init still crashes at mutation $n"
		d=$T/s.$n
		CKSPOOL_FAULT=crash-at=$n spool -S "$d" init > /dev/null 2> "$T/err"
		rc=$?
		[ $rc -eq 0 ] && break
		assert_eq 86 $rc "exit status of init crashed at $n"
		assert_match "crash before operation $n" "$(cat "$T/err")"
		# (FORMAT is written last: with it, only a flush was missing)
		if [ ! -e "$d/FORMAT" ] &&
		    spool -S "$d" status > /dev/null 2> "$T/err"; then
			fail "a spool whose init crashed at $n is used"
		fi
		spool -S "$d" init > /dev/null || fail "init after a crash at $n"
		assert_eq "$layout" "$(ls -A "$d" | sort -f | paste -sd' ')" \
		    "the spool's root after a crash at $n and init"
		spool -S "$d" fsck > "$T/out" || fail "fsck after a crash at $n: $(cat "$T/out")"
		dir_empty "$d/tmp" || swept=${swept:-$n}
		rm -rf "$d"
	done
	echo "spool init: crashed at each of its $((n - 1)) mutations" >> "$T/report"
	[ $n -gt 20 ] || fail "only $((n - 1)) crash points in spool init"
	# a half-written FORMAT left in tmp/: swept by spoold's recovery
	[ -n "$swept" ] || fail "no crash point left anything in tmp/"
	CKSPOOL_FAULT=crash-at=$swept spool -S "$T/swept" init > /dev/null 2>&1
	spool -S "$T/swept" init > /dev/null || fail "init after a crash"
	SPOOL=$T/swept
	export SPOOL
	if spool fsck --settled > "$T/out"; then
		fail "fsck --settled passed with a file in tmp/"
	fi
	assert_match "tmp/.*: left in a temporary area" "$(cat "$T/out")"
	start_spoold
	stop_spoold
	spool fsck --settled > "$T/out" || fail "fsck after recovery: $(cat "$T/out")"
	# an error: said, with the path; nothing made
	if CKSPOOL_FAULT=fail-at=1:EIO spool -S "$T/e" init 2> "$T/err"; then
		fail "init succeeded through an injected EIO"
	fi
	assert_match "^spool: fatal: mkdir: $T/e: (Input/output error|I/O error)\$" \
	    "$(tail -1 "$T/err")"
	[ -e "$T/e" ] && fail "a failed init made $T/e"
	return 0
}

# Bursts of stale handles (ESTALE, beyond what fsop retries) on every
# kind of operation of spoold and of a worker, once both run: reported,
# survived, nothing lost.  Which operation a burst hits depends on
# timing (count=all counts the idle rescans too): one that hits the
# worker's flush of its results is not retried, by design (a flush's
# error cannot be retried: ckworker(1)), and the worker hands its
# results back and leaves; a second worker, without faults, is there
# for that case (it once left the test's tasks without a worker).
test_stale_handles_are_retried_never_fatal() {
	local w2
	new_spool
	start_spoold
	start_worker w1 --cores 1
	# the ones that run now start with their faults armed
	stop_spoold
	kill -TERM "$WORKER_PID"
	wait_for 10 not_running "$WORKER_PID" || fail "worker stayed"
	CKSPOOL_FAULT="count=all,fail-at=100:ESTALE*3,fail-at=160:ESTALE*9,fail-at=240:ESTALE*9,fail-at=320:ESTALE*9" \
	    start_spoold
	CKSPOOL_FAULT="count=all,fail-at=90:ESTALE*3,fail-at=150:ESTALE*9,fail-at=230:ESTALE*9" \
	    start_worker w2 --cores 1
	w2=$WORKER_PID
	start_worker w3 --cores 1
	seq 1 40 | spool map -- sh -c 'echo r$1' _ {} > "$T/ids"
	spool wait < "$T/ids" || fail "tasks failed: $(spool status | head -3)"
	n=0
	while read -r id; do
		n=$((n + 1))
		assert_eq "r$n" "$(task_stdout "$id")" "output of task $id"
	done < "$T/ids"
	kill -0 "$SPOOLD_PID" || fail "spoold died: $(tail -3 "$T/spoold.log")"
	kill -0 "$w2" || grep -q "exiting: results could not be flushed: syncfs: Stale file handle" \
	    "$T/worker-w2.log" || fail "the worker died: $(tail -3 "$T/worker-w2.log")"
	for log in "$T/spoold.log" "$T/worker-w2.log"; do
		assert_match "fails: Stale file handle" \
		    "$(cat "$log")" "$(basename "$log")"
	done
	# (": fatal: ", not "fatal": this test's own name is in the paths)
	assert_no_match ": fatal: " "$(cat "$T/spoold.log" "$T/worker-w2.log")"
	stop_spoold
	spool fsck > "$T/out" || fail "fsck: $(cat "$T/out")"
}

# A burst of stale handles (three ESTALEs in a row) at any one of
# spoold's first 32 operations, its start: the lease, the recovery, its
# local worker's start and registration, its first summaries.  Each
# time spoold comes up all the same and its summary ends up counting
# the worker.  (Once, an ESTALE on the lease's owner file ended spoold,
# and a summary whose write failed stayed as it was until something
# else changed.)
test_stale_handles_anywhere_in_spoolds_start() {
	local n base
	new_spool
	base=$SPOOL
	for n in $(seq 1 32); do
		# a new spool each time, so that the Nth operation is the
		# same one in every mode and run
		SPOOL=$base.$n
		spool init > /dev/null || fail "spool init"
		fast_config
		CKSPOOL_FAULT="fail-at=$n:ESTALE*3" start_spoold --local 1
		wait_for 20 grep -qx 'workers: 1' "$SPOOL/state/summary" ||
		    fail "fail-at=$n: no summary with the worker: $(tail -3 "$T/spoold.log")"
		stop_spoold
	done
	assert_no_match ": fatal: " "$(cat "$T/spoold.log")"
}

# The same at each of a worker's first 24 operations (its directory's
# making and registration, its first beats, its first task): it
# registers and runs a task all the same.  (Once, an ESTALE on the
# write of its info file ended it: "register: Stale file handle".)
test_stale_handles_anywhere_in_a_workers_start() {
	local n id
	new_spool
	start_spoold
	for n in $(seq 1 24); do
		CKSPOOL_FAULT="fail-at=$n:ESTALE*3" start_worker "s$n" --cores 1
		id=$(spool submit -- echo "hi $n") || fail "submit"
		spool wait --timeout 20s "$id" ||
		    fail "fail-at=$n: task $id not done: $(tail -3 "$T/worker-s$n.log")"
		assert_eq "hi $n" "$(task_stdout "$id")" "output, fail-at=$n"
		kill -TERM "$WORKER_PID"
		wait_for 30 not_running "$WORKER_PID" || fail "worker s$n stayed"
	done
	assert_no_match ": fatal: " "$(cat "$T"/worker-s*.log)"
}

# And at each of a submission's first 20 operations ("spool submit",
# "spool map"): each prints its IDs and its tasks run.  (Once, an
# ESTALE on the flush of incoming/ failed "spool submit" after its
# bundle was there: no ID printed, the task run all the same.)
test_stale_handles_anywhere_in_a_submission() {
	local n
	new_spool
	start_spoold --local 1
	: > "$T/ids"
	for n in $(seq 1 20); do
		CKSPOOL_FAULT="fail-at=$n:ESTALE*3" spool submit -- echo "s$n" \
		    >> "$T/ids" 2> "$T/err" || fail "submit, fail-at=$n: $(grep -v injection "$T/err")"
		seq 2 | CKSPOOL_FAULT="fail-at=$n:ESTALE*3" spool map -- echo "m$n" \
		    >> "$T/ids" 2> "$T/err" || fail "map, fail-at=$n: $(grep -v injection "$T/err")"
	done
	assert_eq 60 "$(wc -l < "$T/ids")" "IDs printed"
	spool wait < "$T/ids" || fail "tasks failed"
	assert_eq 60 "$(ls "$SPOOL"/tasks/*/ | grep -c '^[0-9]')" "tasks run"
}

stale_looks_are() {	# N: the worker w2 was refused N looks at its directory
	[ "$(grep -c "(stat w2-[^)]*) fails: Stale file handle" \
	    "$T/worker-w2.log")" -ge "$1" ]
}

# A worker looks at its own directory at every beat: gone (ENOENT), it
# leaves.  A stale handle is no proof of that: the worker goes on.  (It
# once took any failed look for "my worker directory is gone" and left
# with its tasks requeued.)  12 ESTALEs are 3 looks: fsop.c tries each
# 4 times (FSOP_ESTALE_TRIES).
test_a_stale_look_at_its_directory_is_not_its_end() {
	local wid id n
	new_spool
	start_spoold
	CKSPOOL_FAULT="count=all,stat-fails=w2-:ESTALE*12" start_worker w2 --cores 1
	wid=$(worker_wid w2) || fail "no worker"
	wait_for 20 stale_looks_are 12 ||
	    fail "looks refused: $(grep -c "(stat w2-" "$T/worker-w2.log")"
	seq 1 5 | spool map -- sh -c 'echo r$1' _ {} > "$T/ids"
	spool wait < "$T/ids" || fail "tasks: $(spool status | head -3)"
	kill -0 "$WORKER_PID" || fail "the worker left: $(tail -3 "$T/worker-w2.log")"
	assert_no_match "directory is gone" "$(cat "$T/worker-w2.log")" \
	    "the worker's reason to leave"
	n=0
	while read -r id; do
		n=$((n + 1))
		assert_eq "$wid" "$(field "$id" worker)" "worker of task $id"
		assert_eq 1 "$(field "$id" attempt)" "attempt of task $id"
		assert_eq "r$n" "$(task_stdout "$id")" "output of task $id"
	done < "$T/ids"
	assert_no_match "lost" "$(cat "$T/spoold.log")" "spoold's view of it"
}

# Files NFS (.nfsXXXX) and FUSE (.fuse_hiddenXXXX) leave when a file
# that is still open somewhere is removed: they cannot be removed until
# it is closed (EBUSY, injected here with busy-nfs), they must never be
# taken for work, and a directory holding one is removed later.
test_nfs_leftovers_are_left_alone() {
	new_spool
	CKSPOOL_FAULT=busy-nfs start_spoold
	CKSPOOL_FAULT=busy-nfs start_worker w1 --cores 1
	w=$(worker_wid w1)
	for d in incoming specs control "workers/$w/inbox" "workers/$w/done" \
	    "workers/$w/cancel" "workers/$w/returned" workers tasks; do
		touch "$SPOOL/$d/.nfs0000000000ab12cd00000001"
	done
	touch "$SPOOL/incoming/.fuse_hidden0000000a00000001"
	seq 1 10 | spool map -- sh -c 'echo r$1' _ {} > "$T/ids"
	spool wait < "$T/ids" || fail "tasks failed"
	# a directory with a busy leftover in it, for spoold to remove:
	# a worker that left, its directory holding one
	start_worker w2 --cores 1
	w2=$(worker_wid w2)
	touch "$SPOOL/workers/$w2/work/.nfs0000000000ab12cd00000002"
	kill -TERM "$WORKER_PID"
	wait_for 10 not_running "$WORKER_PID" || fail "worker stayed"
	id=$(spool submit -- echo still)
	spool wait "$id" || fail "a task after the leftovers"
	kill -0 "$SPOOLD_PID" || fail "spoold died: $(tail -3 "$T/spoold.log")"
	assert_no_match "not an assignment name|fatal|rejected" \
	    "$(cat "$T/spoold.log" "$T/worker-w1.log")"
	[ -e "$SPOOL/incoming/.nfs0000000000ab12cd00000001" ] ||
	    fail "a busy leftover was taken"
	stop_spoold
	spool fsck > "$T/out" || fail "fsck: $(cat "$T/out")"
	assert_match "note: incoming/.nfs0000000000ab12cd00000001" "$(cat "$T/out")"
}

# The fence seen from spoold (doc/design.md, section 7, step 6): a
# worker that stops (SIGSTOP, as a hung host) past lost-timeout is
# declared lost, its attempt revoked and run again on another worker.
# When it resumes it must leave without committing (its own side of the
# fence); and a report of the old attempt that still reaches its done/
# while the new attempt runs (a commit that raced the revocation, a
# rename replayed by an NFS server) is refused by spoold, which says
# so: only the new attempt is accepted.
test_stale_result_of_a_lost_worker_is_refused() {
	new_spool
	# spoold is held stopped below: the workers must not take it for
	# dead meanwhile; and it removes a lost worker's directory
	# lost-timeout after the loss: 3 s leave time to stop it first
	sed -i 's/^  death-timeout: .*/  death-timeout: 60s/; s/^  lost-timeout: .*/  lost-timeout: 3s/' \
	    "$SPOOL/spool.yaml"
	start_spoold
	start_worker hung --cores 1
	hung=$WORKER_PID
	wid=$(worker_wid hung) || fail "no worker directory"
	id=$(spool submit -- sh -c \
	    'touch "$1.started.$SPOOL_ATTEMPT"; until [ -e "$1.$SPOOL_ATTEMPT" ]; do sleep 0.05; done; echo "attempt $SPOOL_ATTEMPT"' \
	    _ "$T/go") || fail "submit"
	wait_for 20 test -e "$T/go.started.1" || fail "attempt 1 did not start"
	# the worker hangs; its task ends meanwhile, unreaped, uncommitted
	kill -STOP "$hung"
	touch "$T/go.1"
	start_worker fresh --cores 1
	fresh=$(worker_wid fresh) || fail "no directory of worker fresh"
	# Hold spoold while the stale report is made, so that it cannot
	# remove the lost worker's directory first: as soon as it has placed
	# attempt 2 (which it does after marking the worker lost and
	# revoking attempt 1: workers.c, lose), not once attempt 2 runs,
	# which across hosts can take most of the 3 s.  The worker starts
	# it without spoold.
	wait_for 20 sh -c "ls '$SPOOL/workers/$fresh/inbox' \
	    '$SPOOL/workers/$fresh/running' 2>/dev/null | grep -qx '$id.2'" ||
	    fail "attempt 2 was not placed on $fresh"
	kill -STOP "$SPOOLD_PID"
	wait_for 20 test -e "$T/go.started.2" || fail "attempt 2 did not start"
	[ -e "$SPOOL/workers/$wid/lost" ] ||
	    fail "attempt 2 started, but $wid is not marked lost"
	[ -e "$SPOOL/workers/$wid/revoked/$id.1" ] || fail "attempt 1 not revoked"
	assert_match "worker $wid \(hung, .*\) lost: no heartbeat" \
	    "$(cat "$T/spoold.log")" "spoold's log"
	kill -CONT "$hung"
	wait_for 20 not_running "$hung" || fail "the lost worker kept running"
	# It leaves by its heartbeat finding lost/.  The number of tasks
	# it kills (those not reaped yet) depends on where in its loop
	# SIGSTOP caught it: stopped in poll, the heartbeat comes before
	# the reap (1 task, ended but not reaped); stopped inside a
	# filesystem call of a heartbeat (slow over sshfs), its rescan may
	# find running/ID.1 gone first ("revoked by spoold; stopping it"),
	# reap the task already ended, and the next heartbeat leaves with
	# 0.  Either way it commits nothing (done/ below).
	assert_match "spoold declared this worker lost: killing [01] tasks? and leaving without committing" \
	    "$(cat "$T/worker-hung.log")" "the lost worker's log"
	dir_empty "$SPOOL/workers/$wid/done" || fail "the lost worker committed"
	# its report arrives after all: the assignment moved where a commit
	# puts it, beside a complete result of attempt 1 (the task's own
	# stdout is there)
	assert_eq "attempt 1" "$(cat "$SPOOL/workers/$wid/work/$id.1/stdout")" \
	    "attempt 1's output"
	printf 'id: %s\nattempt: 1\nstate: done\nreason: exit\nexit: 0\nworker: %s\nhost: %s\nstart: 1.000\nend: 2.000\nwall: 1.000\n' \
	    "$id" "$wid" "$SPOOLD_HOST" > "$SPOOL/workers/$wid/work/$id.1/result"
	mv "$SPOOL/workers/$wid/revoked/$id.1" "$SPOOL/workers/$wid/done/$id.1" ||
	    fail "making the stale report"
	kill -CONT "$SPOOLD_PID"
	wait_for 20 grep -q "stale report workers/$wid/done/$id.1 discarded: task $id is at attempt 2\$" \
	    "$T/spoold.log" ||
	    fail "spoold did not say it discarded the stale report: $(tail -5 "$T/spoold.log")"
	[ -e "$SPOOL/workers/$wid/done/$id.1" ] && fail "the stale report is still there"
	finished "$id" && fail "task $id final on the stale report: $(cat "$SPOOL/tasks/$((id / 1000))/$id/result")"
	assert_eq running "$(state_of "$id")" "state of task $id"
	touch "$T/go.2"
	spool wait "$id" || fail "task $id failed: $(spool status "$id")"
	assert_eq 2 "$(field "$id" attempt)" "accepted attempt"
	assert_eq "attempt 2" "$(task_stdout "$id")" "accepted output"
	assert_eq "$fresh" "$(field "$id" worker)" "worker of the accepted attempt"
	kill -0 "$SPOOLD_PID" || fail "spoold died: $(tail -3 "$T/spoold.log")"
	spool fsck > "$T/out" || fail "fsck: $(cat "$T/out")"
}

# A lost worker's assignment that spoold could not take back from its
# inbox/ (the rename failed three times: EIO, injected) is requeued
# only once it is taken back (workers.c: take_back): requeued at once,
# it stayed in the inbox, where a worker declared lost but running
# could still claim it beside the next attempt.  The failure is tried
# again at each check and reported once, when it starts, and once more
# when it ends: it was logged again at every check while it lasted.
test_an_assignment_not_taken_back_from_a_lost_worker_waits() {
	local hung wid id
	new_spool
	CKSPOOL_FAULT="fail-on=1.1:EIO*3" start_spoold
	start_worker hung --cores 1
	hung=$WORKER_PID
	wid=$(worker_wid hung) || fail "no worker directory"
	kill -STOP "$hung"
	id=$(spool submit -- echo ran) || fail "submit"
	[ "$id" = 1 ] || fail "task ID $id, not 1 (the fault names 1.1)"
	wait_for 20 test -e "$SPOOL/workers/$wid/inbox/$id.1" ||
	    fail "not placed on the stopped worker"
	wait_for 20 grep -q "task $id attempt 1 requeued" "$T/spoold.log" ||
	    fail "not requeued: $(tail -3 "$T/spoold.log")"
	[ -e "$SPOOL/workers/$wid/inbox/$id.1" ] &&
	    fail "requeued while its assignment is still in $wid's inbox/"
	assert_match "revoke: workers/$wid/inbox/$id.1: Input/output error" \
	    "$(cat "$T/spoold.log")" "spoold's log"
	assert_eq 3 "$(grep -c 'fault injection: operation .*1\.1) fails' "$T/spoold.log")" \
	    "tries that failed"
	assert_eq 1 "$(grep -c "revoke: workers/$wid/inbox/$id.1" "$T/spoold.log")" \
	    "reports of the failed revoke"
	assert_match "recovered: revoke" "$(cat "$T/spoold.log")" "its end"
	start_worker fresh --cores 1
	spool wait "$id" || fail "task $id failed: $(spool status "$id")"
	assert_eq 2 "$(field "$id" attempt)" "accepted attempt"
	assert_match "^fresh-" "$(field "$id" worker)" "its worker"
	kill -CONT "$hung"
	wait_for 20 not_running "$hung" || fail "the lost worker kept running"
}

# A lost worker's committed report that spoold cannot stat (EIO,
# injected) is not proof that there is none: take_back (workers.c)
# read it as "not there", requeued the task and ran it again, and the
# committed result of attempt 1 was thrown away as stale.  The task
# leaves a directory named spec in its work directory, so that its
# acceptance (done/1.1 -> work/1.1/spec) needs a stat of it, which
# fails too: done/1.1 is still there when the worker is lost.  Once
# the injected failures are spent, attempt 1 is accepted.
test_a_report_that_cannot_be_stat_is_not_taken_as_absent() {
	local w wid id
	new_spool
	CKSPOOL_FAULT="stat-fails=1.1:EIO*30,count=all" start_spoold
	start_worker once --cores 1
	w=$WORKER_PID
	wid=$(worker_wid once) || fail "no worker directory"
	id=$(spool submit -- sh -c 'mkdir "$SPOOL_TASK_DIR/spec"') || fail "submit"
	[ "$id" = 1 ] || fail "task ID $id, not 1 (the fault names 1.1)"
	wait_for 20 grep -q "rename: workers/$wid/done/$id.1 to work/$id.1/spec" \
	    "$T/spoold.log" ||
	    fail "acceptance did not fail: $(tail -3 "$T/spoold.log")"
	kill -STOP "$w"
	wait_for 30 grep -q -e "task $id attempt 1 requeued" \
	    -e "stat: workers/$wid/done/$id.1: Input/output error" \
	    "$T/spoold.log" || fail "worker not lost: $(tail -3 "$T/spoold.log")"
	grep -q "task $id attempt 1 requeued" "$T/spoold.log" &&
	    fail "requeued while its report is in done/"
	wait_for 30 finished "$id" || fail "task $id not final"
	assert_eq 1 "$(field "$id" attempt)" "accepted attempt"
	assert_eq done "$(field "$id" state)" "its state"
	# looked for at each check, said once
	assert_eq 1 "$(grep -c "stat: workers/$wid/done/$id.1" "$T/spoold.log")" \
	    "reports of the failed stat"
	kill -CONT "$w"
	wait_for 20 not_running "$w" || fail "the lost worker kept running"
}

# A task whose final directory is already there when its attempt ends
# (made by another path: by hand here) keeps that directory.  spoold
# discards the attempt and takes the task as final with the result it
# finds (spoold/finish.c: final_as_found): the worker's core is free
# again, the task that depends on it runs, and its bundle goes.
three_done_none_busy() {
	summary_is done 3 && summary_is busy_cores 0
}

test_an_attempt_that_finds_its_task_final_frees_what_it_held() {
	new_spool
	start_spoold
	start_worker w1 --cores 1
	first=$(spool submit -- echo first) || fail "submit"
	spool wait "$first" || fail "the first task"
	id=$(spool submit -- sh -c 'while [ ! -e "$1" ]; do sleep 0.05; done; echo late' _ "$T/go")
	next=$(spool submit --after "$id" -- echo next) || fail "submit the dependent"
	wait_for 10 state_is "$id" running || fail "not running"
	# its final directory appears meanwhile, with the first task's outcome
	cp -a "$SPOOL/tasks/0/$first" "$T/final"
	sed -i "s/^id: $first\$/id: $id/" "$T/final/result" "$T/final/spec"
	mv "$T/final" "$SPOOL/tasks/0/$id"
	touch "$T/go"
	wait_for 10 grep -q "task $id already has a result; attempt 1 discarded" \
	    "$T/spoold.log" || fail "the attempt was not discarded"
	spool wait --timeout 30 "$next" || fail "the dependent did not run"
	assert_eq first "$(task_stdout "$id")" "the directory found is kept"
	assert_eq next "$(task_stdout "$next")"
	# spoold's own counts (its summary, written a few times a second):
	# the three tasks done, and no core of the worker held
	wait_for 10 three_done_none_busy ||
	    fail "summary: done $(summary_field done), busy cores $(summary_field busy_cores)"
	wait_for 10 dir_empty "$SPOOL/specs" ||
	    fail "left in specs/: $(ls -A "$SPOOL/specs" | tr '\n' ' ')"
	stop_spoold
	spool fsck --settled > "$T/out" || fail "fsck --settled: $(cat "$T/out")"
}

# The second rename of an acceptance (work/ID.ATT, its spec in it, to
# tasks/SHARD/ID) fails: here because the shard is immutable (EPERM),
# as an I/O error or a full disk would.  The task is not final and no
# directory appears; spoold tries the rename again at each rescan and
# completes it once it can, with the attempt that ran.
test_a_final_rename_that_fails_is_tried_again() {
	new_spool
	start_spoold
	start_worker w1 --cores 1
	mkdir "$SPOOL/tasks/0"
	immutable "$SPOOL/tasks/0" || fail "chattr +i: cannot make the shard immutable"
	id=$(spool submit -- sh -c 'echo run >> "$1"; echo out' _ "$T/runs")
	wait_for 15 grep -q "work/$id\.1 to tasks/0/$id: .* (tried again at the next rescan)" \
	    "$T/spoold.log"
	seen=$?
	spool fsck > "$T/out" 2>&1
	fsck_rc=$?
	chattr -i "$SPOOL/tasks/0"	# before any assertion: cleanup needs it
	assert_eq 0 "$seen" "the failed rename reported"
	assert_eq 0 "$fsck_rc" "fsck meanwhile: $(cat "$T/out")"
	assert_match "work/$id\.1: accepted, its rename to tasks/0/$id to come" \
	    "$(cat "$T/out")"
	spool wait --timeout 30 "$id" || fail "not completed once it could be"
	assert_eq out "$(task_stdout "$id")"
	assert_eq "$id" "$(spec_field "$id" id)" "its spec"
	assert_eq 1 "$(field "$id" attempt)" "the attempt that ran"
	assert_eq run "$(cat "$T/runs")" "runs of the task"
	stop_spoold
	spool fsck --settled > "$T/out" || fail "fsck --settled: $(cat "$T/out")"
}

# A flush of results that fails (syncfs: EIO, injected where the
# worker takes its outcome) may have lost what it covered: the result
# and the task's own stdout and stderr, which the worker cannot write
# again, and since Linux 5.8 a later syncfs does not report that error
# again.  So the attempt is not committed as done: it is handed back,
# its record saying why, and the task runs again on another worker;
# the worker that could not flush drains and leaves.  (It once warned
# once and committed the task as done.)
test_a_result_whose_flush_failed_is_handed_back() {
	local id wid
	new_spool
	start_spoold
	CKSPOOL_FAULT="sync-fails=1:EIO" start_worker w1 --cores 1
	first=$WORKER_PID
	wid=$(worker_wid w1) || fail "no worker"
	id=$(spool submit -- sh -c 'echo "attempt $SPOOL_ATTEMPT"') || fail "submit"
	wait_for 20 not_running "$first" ||
	    fail "the worker did not drain: $(tail -3 "$T/worker-w1.log")"
	wait "$first"
	assert_eq 111 $? "the worker's exit status"
	assert_match "syncfs: .*: Input/output error: 1 result handed back \(their outputs may be lost\); draining" \
	    "$(cat "$T/worker-w1.log")" "the worker's log"
	assert_match "exiting: results could not be flushed: syncfs: Input/output error" \
	    "$(cat "$T/worker-w1.log")" "the worker's log"
	wait_for 10 journal_matches "$wid.* drain .*results could not be flushed" ||
	    fail "no drain in the journal: $(spool journal | tail -3)"
	state_is "$id" done && fail "task $id done on the attempt that was not flushed"
	start_worker w2 --cores 1
	spool wait --timeout 20s "$id" || fail "task $id: $(spool status "$id")"
	assert_eq 2 "$(field "$id" attempt)" "accepted attempt"
	assert_eq "attempt 2" "$(task_stdout "$id")" "accepted output"
	assert_eq "$(worker_wid w2)" "$(field "$id" worker)" "worker of the accepted attempt"
	a1=$SPOOL/tasks/$((id / 1000))/$id/attempt.1/result
	assert_match "^state: failed$" "$(cat "$a1")" "attempt 1's record"
	assert_match "^reason: worker-lost$" "$(cat "$a1")" "attempt 1's record"
	assert_match '^message: "its outputs could not be flushed: syncfs: Input/output error"$' \
	    "$(cat "$a1")" "attempt 1's record"
}

# A commit whose rename the filesystem refuses (done/ immutable here,
# as EIO or a full disk would) is tried again at the spool's
# rescan interval, also on a worker with nothing else to do, and the
# task is committed once the rename works.  (An idle worker once tried
# again at every pass of its loop, each try a new syncfs: 4,865 syncfs
# in 3 s.)  The count is measured over 5 of the worker's beats, 1 s:
# at one try per rescan (200 ms) that is about 5 flushes, whatever the
# machine's speed.
test_a_refused_commit_is_tried_again_at_the_rescan_pace() {
	local id wid b n
	new_spool
	start_spoold
	CKSPOOL_FSOP_STATS=$T/ops start_worker w1 --cores 1
	wid=$(worker_wid w1) || fail "no worker"
	immutable "$SPOOL/workers/$wid/done" || fail "chattr +i: cannot make done/ immutable"
	id=$(spool submit -- echo out) || fail "submit"
	# (EPERM; across hosts, through sshfs, EACCES)
	wait_for 10 grep -Eq "commit: workers/$wid/running/$id\.1: (Operation not permitted|Permission denied) \(trying again\)" \
	    "$T/worker-w1.log"
	seen=$?
	b=$(worker_beat "$wid")
	wait_for 10 worker_beat_past "$wid" $((b + 5))
	beats=$?
	chattr -i "$SPOOL/workers/$wid/done"	# before any assertion: cleanup needs it
	assert_eq 0 "$seen" "the refused commit reported: $(tail -3 "$T/worker-w1.log")"
	assert_eq 0 "$beats" "the worker's beats"
	spool wait --timeout 10s "$id" || fail "task $id not committed once it could be"
	assert_eq out "$(task_stdout "$id")"
	assert_eq 1 "$(field "$id" attempt)" "the attempt that ran"
	kill -TERM "$WORKER_PID"
	wait_for 10 not_running "$WORKER_PID" || fail "worker stayed"
	n=$(awk '$1 == "syncfs" { s += $2 } END { print s + 0 }' "$T"/ops.ckworker.*)
	note "syncfs: $n"
	[ "$n" -le 20 ] || fail "$n syncfs for one task whose commit was refused for 1 s"
}

# A bad assignment is not run: the worker claims it and commits it as
# failed at once.  When the filesystem refuses its result there (EIO,
# injected), the commit is tried again like a task's, until it works:
# the attempt is never left in running/ with nobody to commit it.  (It
# once was, and spoold took the task as claimed until the worker
# exited.)  No spoold here: it would discard a report for a task it
# does not know.
test_a_bad_assignment_is_committed_even_when_its_result_is_refused() {
	local wid w
	new_spool
	CKSPOOL_FAULT="fail-on=999.1/:EIO*2" start_worker w1 --cores 1 --death-timeout 0
	wid=$(worker_wid w1) || fail "no worker"
	w=$SPOOL/workers/$wid
	echo 'not: an assignment' > "$T/999.1"
	mv "$T/999.1" "$w/inbox/999.1"
	# and one whose content is another task's (its spec decoded, then
	# dropped: freed whole, which the sanitizers' build checks)
	printf 'id: 5\nshell: "echo no"\nattempt: 1\n' > "$T/998.1"
	mv "$T/998.1" "$w/inbox/998.1"
	wait_for 10 test -e "$w/done/998.1" || fail "998.1 not committed"
	assert_match '^message: "bad assignment: name and content differ"$' \
	    "$(cat "$w/work/998.1/result")" "998.1's result"
	wait_for 10 test -e "$w/done/999.1" ||
	    fail "not committed: running/ holds $(ls "$w/running"): $(tail -3 "$T/worker-w1.log")"
	assert_eq 2 "$(grep -c 'fault injection: operation .* (create 999.1/result) fails' "$T/worker-w1.log")" \
	    "refused writes of its result"
	assert_match "inbox/999.1: .*; not run" "$(cat "$T/worker-w1.log")"
	assert_match '^state: failed$' "$(cat "$w/work/999.1/result")" "its result"
	assert_match '^reason: spawn$' "$(cat "$w/work/999.1/result")" "its result"
	assert_match '^message: "bad assignment: ' "$(cat "$w/work/999.1/result")" "its result"
	dir_empty "$w/running" || fail "left in running/: $(ls "$w/running")"
	kill -0 "$WORKER_PID" || fail "the worker left"
	kill -TERM "$WORKER_PID"
	wait_for 10 not_running "$WORKER_PID" || fail "worker stayed"
	wait "$WORKER_PID" || fail "the worker's exit: $? $(tail -3 "$T/worker-w1.log")"
}

# A flush of spoold's that fails keeps what waits for one: the source of
# a dropped file stays in accepting/ (the spec made of it may be lost
# with that flush, and no later syncfs would say so: Linux reports a
# writeback error once per open file).  The next start, whose flushes
# work, finishes the acceptance, and the task is there once.
test_a_failed_flush_of_spoold_keeps_what_waits_for_it() {
	local out b
	new_spool
	CKSPOOL_FAULT="sync-fails=1:EIO*1000000" start_spoold
	printf 'command: [echo, kept]\n' > "$T/k.yaml"
	cp "$T/k.yaml" "$SPOOL/incoming/"
	wait_for 20 grep -q "accepted incoming/k.yaml as task 1" "$T/spoold.log" ||
	    fail "not accepted: $(tail -3 "$T/spoold.log")"
	# (its passes after the acceptance: each a flush that fails)
	b=$(spoold_beat)
	wait_for 10 beat_past $((b + 2)) || fail "spoold does not beat"
	out=$(ls "$SPOOL/accepting")
	assert_match '^1\.drop\.k\.yaml$' "$out" "accepting/ after failed flushes"
	assert_match "syncfs: .*: Input/output error \(what waits for a flush is kept" \
	    "$(cat "$T/spoold.log")" "spoold's log"
	stop_spoold
	assert_match '^1\.drop\.k\.yaml$' "$(ls "$SPOOL/accepting")" \
	    "accepting/ after a stop whose flush failed"
	start_spoold
	wait_for 20 dir_empty "$SPOOL/accepting" ||
	    fail "the source stayed: $(ls "$SPOOL/accepting")"
	start_worker w1 --cores 1
	spool wait --timeout 20s 1 || fail "task 1: $(spool status 1)"
	assert_eq kept "$(task_stdout 1)"
	assert_eq 1 "$(field 1 attempt)" "the attempt that ran"
	assert_match "no-such-task" "$(spool status 2)" "a second task made of it"
}

# After spoold's flush failed and lost specs/1 (the fault sync-loses):
# the source of task 1 ("echo kept") goes only once specs/1 is there
# again, and what a power loss would then leave (the files alone) runs
# task 1 once, at its first attempt.
task_1_outlives_the_lost_flush() {
	wait_for 20 grep -q "syncfs loses specs/1$" "$T/spoold.log" ||
	    fail "the flush did not fail: $(tail -3 "$T/spoold.log")"
	wait_for 20 dir_empty "$SPOOL/accepting" ||
	    fail "the source stayed: $(ls "$SPOOL/accepting")"
	[ -f "$SPOOL/specs/1" ] || fail "specs/1 is gone with its source"
	stop_spoold
	start_spoold
	start_worker w1 --cores 1
	spool wait --timeout 20s 1 || fail "task 1: $(spool status 1)"
	assert_eq kept "$(task_stdout 1)"
	assert_eq 1 "$(field 1 attempt)" "the attempt that ran"
}

# A flush of spoold's that fails may have lost the specs it was to make
# durable, and the next one succeeds without saying so (Linux reports a
# writeback error once).  Here the failed flush loses specs/1 (the
# fault removes it): spoold writes it again from its source in
# accepting/, and only a flush after that lets the source go.  Before,
# the next flush removed the source, and the task was gone with its
# spec (the restart found neither).
test_a_spec_lost_in_a_failed_flush_is_written_again() {
	new_spool
	CKSPOOL_FAULT="sync-loses=specs" start_spoold
	printf 'command: [echo, kept]\n' > "$T/k.yaml"
	cp "$T/k.yaml" "$SPOOL/incoming/"
	wait_for 20 grep -q "accepted incoming/k.yaml as task 1" "$T/spoold.log" ||
	    fail "not accepted: $(tail -3 "$T/spoold.log")"
	task_1_outlives_the_lost_flush
}

# A source in accepting/ whose spec recovery finds written goes only
# after a flush of this spoold's: the spec may not be on the disk yet
# (written by a spoold that stopped before its flush, or in this run
# before a flush that failed).  Here spoold dies just before it removes
# the source; the next one's first flush fails and loses specs/1 (the
# fault), standing for a spec that had not reached the disk.  Before,
# recovery removed the source at once, and task 1 was gone.
test_recovery_keeps_a_source_until_a_flush_covers_its_spec() {
	new_spool
	CKSPOOL_FAULT="crash-on=1.drop" start_spoold
	printf 'command: [echo, kept]\n' > "$T/k.yaml"
	cp "$T/k.yaml" "$SPOOL/incoming/"
	wait_for 20 not_running "$SPOOLD_PID" ||
	    fail "spoold did not crash: $(tail -3 "$T/spoold.log")"
	wait "$SPOOLD_PID"
	[ -f "$SPOOL/specs/1" ] || fail "no specs/1"
	assert_match '^1\.drop\.k\.yaml$' "$(ls "$SPOOL/accepting")" "accepting/"
	CKSPOOL_FAULT="sync-loses=specs" start_spoold
	task_1_outlives_the_lost_flush
}

# spoold keeps eight descriptors open for each worker (its directory and
# the seven under it), so the usual soft limit of 1024 open files would
# leave no descriptor for anything else at about 125 workers: the next
# ones were never registered ("register worker ...: Too many open
# files", once) and sat idle.  spoold raises its soft limit to the hard
# one, and gives what it starts the soft limit it was given.  Here a
# soft limit of 64 stands for 1024: room for about four workers.
test_many_workers_do_not_run_spoold_out_of_descriptors() {
	local soft i
	new_spool
	soft=$(ulimit -S -n)
	ulimit -S -n 64
	start_spoold --local 1
	ulimit -S -n "$soft"
	# its local worker, and so its tasks, have the limit spoold had
	id=$(spool submit -- sh -c 'ulimit -S -n') || fail "submit"
	spool wait "$id" > /dev/null || fail "task: $(spool status "$id")"
	assert_eq 64 "$(task_stdout "$id")" "a task's soft limit on open files"
	for i in 1 2 3 4 5 6; do
		start_worker "w$i" --cores 1
	done
	wait_for 20 summary_is workers 7 ||
	    fail "spoold has $(summary_field workers) of 7 workers: $(grep -i 'register' "$T/spoold.log")"
	assert_no_match "Too many open files" "$(cat "$T/spoold.log")" "spoold's log"
	stop_spoold
}

# A dropped file whose rename into accepting/ fails (an I/O error, a
# full disk) is tried again at a later rescan under the ID claimed for
# it the first time, and the failure is reported once: each try had
# claimed a new ID (an entry in ids/ each time, IDs 1, 2, 3 never
# used) and logged the failure again.
test_a_drop_whose_rename_fails_keeps_its_id() {
	new_spool
	CKSPOOL_FAULT="fail-on=x.yaml:EIO*3" start_spoold
	printf 'command: [echo, x]\n' > "$T/x.yaml"
	cp "$T/x.yaml" "$SPOOL/incoming/"
	wait_for 30 grep -q "accepted incoming/x.yaml as task" "$T/spoold.log" ||
	    fail "not accepted: $(tail -3 "$T/spoold.log")"
	assert_match "accepted incoming/x.yaml as task 1$" "$(cat "$T/spoold.log")" \
	    "the ID it was given"
	assert_eq 1 "$(grep -c 'rename: incoming/x.yaml' "$T/spoold.log")" \
	    "reports of the failed rename"
	assert_eq 1 "$(ls "$SPOOL/ids/0" | wc -l)" "IDs claimed"
	start_worker w1 --cores 1
	spool wait 1 > /dev/null || fail "task 1: $(spool status 1)"
	assert_eq x "$(task_stdout 1)"
	stop_spoold
	spool fsck --settled > "$T/out" 2>&1 || fail "fsck: $(cat "$T/out")"
}

# The same for a bundle (spool submit's): its rename out of incoming/
# that fails is tried again at later rescans and reported once, not at
# each of them.
test_a_bundle_whose_rename_fails_is_reported_once() {
	new_spool
	CKSPOOL_FAULT="fail-on=1.bundle:EIO*3" start_spoold
	id=$(spool submit -- echo b) || fail "submit"
	wait_for 30 taken_in "$id" || fail "not taken in: $(tail -3 "$T/spoold.log")"
	assert_eq 1 "$(grep -c 'rename: incoming/1.bundle' "$T/spoold.log")" \
	    "reports of the failed rename"
	assert_match "recovered: bundle-rename" "$(cat "$T/spoold.log")" "its end"
	start_worker w1 --cores 1
	spool wait "$id" > /dev/null || fail "task: $(spool status "$id")"
	assert_eq b "$(task_stdout "$id")"
}

# The injected failures of a final result spoold writes itself
# (CKSPOOL_FAULT fail-on=final.) were said once, not at each try, and
# their end was said.
final_failure_said_once() {
	assert_eq 1 "$(grep -c 'mkdir: tmp/final' "$T/spoold.log")" "reports of the failure"
	assert_match "recovered: final" "$(cat "$T/spoold.log")" "its end"
}

# A final result spoold writes itself (a cancel of a task not placed, a
# dependency that failed, max-requeues reached) that cannot be written
# (an I/O error, a full disk) is tried again: the task was left as it
# was and the cancel request removed all the same, so a cancel that
# "spool cancel" had taken was lost and the task ran.
test_a_cancel_whose_result_cannot_be_written_is_not_lost() {
	new_spool
	CKSPOOL_FAULT="fail-on=final.:EIO*3" start_spoold
	id=$(spool submit -- echo ran) || fail "submit"
	wait_for 10 taken_in "$id" || fail "not taken in"
	spool cancel "$id" || fail "cancel"
	wait_for 10 grep -q "mkdir: tmp/final\..*Input/output error" "$T/spoold.log" ||
	    fail "the injected error was not met: $(tail -3 "$T/spoold.log")"
	wait_for 20 state_is "$id" cancelled ||
	    fail "task $id is $(state_of "$id"), not cancelled"
	# tried again (three failures), each said once
	assert_eq 3 "$(grep -c 'fault injection: operation .* final\.' "$T/spoold.log")" \
	    "tries that failed"
	final_failure_said_once
	assert_eq 1 "$(grep -c "task $id: cancel requested" "$T/spoold.log")" \
	    "reports of the request"
	start_worker w1 --cores 1
	id2=$(spool submit -- echo after) || fail "submit"
	spool wait "$id2" > /dev/null || fail "task after"
	assert_eq cancelled "$(field "$id" state)" "the cancelled task"
	stop_spoold
	spool fsck --settled > "$T/out" 2>&1 || fail "fsck: $(cat "$T/out")"
}

# The dependents of a task that failed are cancelled; one whose result
# cannot be written then (an I/O error, a full disk) is tried again at a
# later heartbeat: it stayed waiting for good, and "spool wait" with it.
test_a_dependent_whose_cancel_cannot_be_written_is_not_left_waiting() {
	local a b
	new_spool
	CKSPOOL_FAULT="fail-on=final.:EIO*2" start_spoold
	start_worker w1 --cores 1
	a=$(spool submit -- false) || fail "submit"
	b=$(spool submit --after "$a" -- echo never) || fail "submit --after"
	wait_for 30 state_is "$b" cancelled ||
	    fail "task $b is $(state_of "$b"), not cancelled: $(tail -3 "$T/spoold.log")"
	assert_eq dependency "$(field "$b" reason)" "reason of the dependent"
	final_failure_said_once
	stop_spoold
	spool fsck --settled > "$T/out" 2>&1 || fail "fsck: $(cat "$T/out")"
}

# Only a task its lost worker had taken counts against max-requeues:
# one still in the lost worker's inbox/ never ran there (the bound is
# there to stop a task that kills its worker).  Every revoke counted:
# under a stress of kill -9s, a task failed worker-lost at attempt 4
# having run once.  With max-requeues 0, the task placed on a worker
# stopped before it took it runs to done on another; the one a killed
# worker was running still fails worker-lost.
test_a_task_its_lost_worker_never_took_is_not_a_loss() {
	local hung id id2
	new_spool
	sed -i 's/max-requeues: 3/max-requeues: 0/' "$SPOOL/spool.yaml"
	start_spoold
	start_worker hung --cores 1
	hung=$WORKER_PID
	wid=$(worker_wid hung) || fail "no worker directory"
	kill -STOP "$hung"
	id=$(spool submit -- echo ran) || fail "submit"
	wait_for 20 test -e "$SPOOL/workers/$wid/inbox/$id.1" ||
	    fail "not placed on the stopped worker"
	wait_for 20 test -e "$SPOOL/workers/$wid/revoked/$id.1" ||
	    fail "not taken back: $(tail -3 "$T/spoold.log")"
	start_worker fresh --cores 1
	spool wait "$id" || fail "task $id failed: $(spool status "$id")"
	assert_eq 2 "$(field "$id" attempt)" "accepted attempt (the fence)"
	assert_match "^fresh-" "$(field "$id" worker)" "its worker"
	assert_match "task $id attempt 1 requeued: .*not counted against max-requeues" \
	    "$(cat "$T/spoold.log")" "spoold's log"
	assert_match " task $id requeued att=1 reason=unclaimed " \
	    "$(spool journal --task "$id")" "journal"
	kill -CONT "$hung"
	wait_for 20 not_running "$hung" || fail "the lost worker kept running"
	# a task the lost worker had taken is a loss
	id2=$(spool submit -- sh -c "while [ ! -e $T/stop ]; do sleep 0.1; done") ||
	    fail "submit"
	wait_for 20 state_is "$id2" running || fail "task $id2 is $(state_of "$id2")"
	kill -KILL "$WORKER_PID"
	wait_for 30 state_is "$id2" failed ||
	    { touch "$T/stop"; fail "task $id2 is $(state_of "$id2"), not failed: $(tail -3 "$T/spoold.log")"; }
	touch "$T/stop"
	assert_eq worker-lost "$(field "$id2" reason)" "its reason"
}

# A task taken back from a lost worker once too often (max-requeues)
# fails with reason worker-lost; when that result cannot be written (an
# I/O error, a full disk) it is written at a later heartbeat: the task,
# neither queued nor placed any more, was left unfinished for good.
# (The tests after it keep that result unwritten until spoold stops.)
test_a_worker_lost_result_that_cannot_be_written_is_not_lost() {
	local id
	lost_task_running 0 'fail-on=final.:EIO*2'
	kill -KILL "$WORKER_PID"
	wait_for 30 state_is "$id" failed ||
	    { touch "$T/stop"; fail "task $id is $(state_of "$id"), not failed: $(tail -3 "$T/spoold.log")"; }
	touch "$T/stop"
	assert_eq worker-lost "$(field "$id" reason)" "its reason"
	assert_eq 1 "$(wc -l < "$T/runs")" "runs of the task"
	final_failure_said_once
}

# Then, spoold stopped with its result unwritten: the next spoold gives
# it (failed, worker-lost), the task having run once.
lost_task_given_up_after_a_restart() {
	local rc
	touch "$T/stop"
	finished "$id" && fail "task $id has a result the fault kept out"
	start_spoold
	start_worker w2 --cores 1
	spool wait --timeout 20 "$id" > /dev/null 2>&1
	rc=$?
	[ "$rc" -ne 3 ] || fail "spool wait timed out: $(tail -3 "$T/spoold.log")"
	assert_eq failed "$(field "$id" state)" "its state"
	assert_eq worker-lost "$(field "$id" reason)" "its reason"
	assert_eq 1 "$(wc -l < "$T/runs")" "runs of the task"
}

# The same result, owed when spoold stops, is owed to the next one
# (requeued/ID counts the losses past the bound): it found the task in
# specs/, queued it and ran it again, one requeue past max-requeues.
test_a_worker_lost_result_owed_survives_a_restart() {
	local id
	lost_task_running
	kill -KILL "$WORKER_PID"
	wait_for 30 grep -q "mkdir: tmp/final\..*Input/output error" "$T/spoold.log" ||
	    { touch "$T/stop"; fail "the injected error was not met: $(tail -3 "$T/spoold.log")"; }
	stop_spoold
	lost_task_given_up_after_a_restart
	assert_match "requeued 0 times already, giving up" "$(field "$id" message)" \
	    "its message"
	stop_spoold
	spool fsck --settled > "$T/out" 2>&1 || fail "fsck: $(cat "$T/out")"
}

# The same when the record of the loss cannot be written either
# (requeued/ made immutable: EPERM): nothing on disk said the task was
# given up on, its assignment was revoked, and a restarted spoold
# queued it and ran it once more.  The loss is now recorded before the
# revoke; unrecorded, the assignment stays with the lost worker and the
# loss is taken in by the next spoold.
test_a_worker_lost_result_and_its_record_both_unwritten_survive_a_restart() {
	local id
	lost_task_running
	immutable "$SPOOL/requeued"
	kill -KILL "$WORKER_PID"
	wait_for 30 grep -q "write: requeued/$id: " "$T/spoold.log" ||
	    { touch "$T/stop"; fail "the failed write not said: $(tail -3 "$T/spoold.log")"; }
	stop_spoold
	chattr -i "$SPOOL/requeued" || fail "chattr -i"
	lost_task_given_up_after_a_restart
	stop_spoold
	spool fsck --settled > "$T/out" 2>&1 || fail "fsck: $(cat "$T/out")"
}

# A task whose spec cannot be read when it is placed fails (reason
# spawn); when that result cannot be written either (an I/O error, a
# full disk) the task is queued again and the result written at a
# later pass: it had been taken off the queue and left there, neither
# queued nor final, for good.
test_a_spec_gone_with_a_result_that_cannot_be_written_is_not_lost() {
	local id
	new_spool
	CKSPOOL_FAULT="fail-on=final.:EIO*2" start_spoold
	id=$(spool submit -- echo never) || fail "submit"
	wait_for 10 taken_in "$id" || fail "not taken in"
	rm "$SPOOL/specs/$id"
	start_worker w1 --cores 1
	wait_for 30 state_is "$id" failed ||
	    fail "task $id is $(state_of "$id"), not failed: $(tail -3 "$T/spoold.log")"
	assert_eq spawn "$(field "$id" reason)" "its reason"
	assert_eq 1 "$(grep -c 'mkdir: tmp/final' "$T/spoold.log")" "reports of the failure"
}

# Each ID of a refused bundle gets a "rejected" result (accept.c:
# reject_ids); one that cannot be written then (an I/O error, a full
# disk) is written at a later heartbeat: it was dropped, and "spool
# wait" on that ID waited for good.
test_a_refused_bundles_result_that_cannot_be_written_is_not_lost() {
	local id
	new_spool
	id=$(spool submit -- echo never) || fail "submit"
	# a record naming another uid than the file's owner: refused
	sed -i 's/^uid: .*/uid: 4242/' "$SPOOL/incoming/$id.bundle"
	CKSPOOL_FAULT="fail-on=final.:EIO*2" start_spoold
	wait_for 10 test -e "$SPOOL/rejected/$id.bundle.why" ||
	    fail "not refused: $(tail -3 "$T/spoold.log")"
	# (spool status says rejected from the owed result on: wait for it)
	wait_for 10 finished "$id" ||
	    fail "task $id has no result: $(tail -3 "$T/spoold.log")"
	assert_eq rejected "$(state_of "$id")" "its state"
	assert_match "uid 4242 in the record" "$(field "$id" message)" "its message"
	assert_eq 2 "$(grep -c 'fault injection: operation .* final\.' "$T/spoold.log")" \
	    "tries that failed"
	final_failure_said_once
	stop_spoold
	spool fsck --settled > "$T/out" 2>&1 || fail "fsck: $(cat "$T/out")"
}

# The "rejected" results a refused bundle's IDs are owed outlive
# spoold: one that could not be written (an I/O error, a full disk) was
# owed only in spoold's memory, and a spoold stopped before it could
# write it left it unwritten for good (the next one does not read
# rejected/): "spool wait" on that ID waited until its timeout.
test_a_refused_bundles_owed_result_survives_a_restart() {
	local id rc
	new_spool
	refuse_with_its_result_owed
	wait_for 10 test -e "$SPOOL/rejected/$id.bundle.why" ||
	    fail "not refused: $(tail -3 "$T/spoold.log")"
	stop_spoold
	finished "$id" && fail "task $id has a result the fault kept out"
	start_spoold
	spool wait --timeout 20 "$id" > /dev/null 2>&1
	rc=$?
	[ "$rc" -ne 3 ] || fail "spool wait timed out: $(tail -3 "$T/spoold.log")"
	assert_eq rejected "$(field "$id" state)" "its state"
	assert_match "uid 4242 in the record" "$(field "$id" message)" "its message"
	# what said it was owed goes, once the result is flushed
	wait_for 10 dir_empty "$SPOOL/accepting" ||
	    fail "accepting/: $(ls "$SPOOL/accepting")"
	stop_spoold
	spool fsck --settled > "$T/out" 2>&1 || fail "fsck: $(cat "$T/out")"
}

# An ID whose "rejected" result spoold owes but has not written yet
# (accepting/FIRST.rejected) is rejected, with the marker's reason, for
# "spool status", spoold running or not: it said "unknown" until the
# result was written, though the refusal was decided and durable.
test_status_shows_an_owed_rejection_as_rejected() {
	local id
	new_spool
	refuse_with_its_result_owed
	assert_eq rejected "$(state_of "$id")" "its state, spoold running"
	stop_spoold
	finished "$id" && fail "task $id has a result the fault kept out"
	spool status -l "$id" > "$T/out" 2>&1 || fail "status: $(cat "$T/out")"
	assert_match "^state: rejected$" "$(cat "$T/out")" "its state, spoold stopped"
	assert_match "^reason: rejected$" "$(cat "$T/out")" "its reason"
	assert_match "^message: task $id: uid 4242 in the record" \
	    "$(cat "$T/out")" "its message"
	# and the IDs of no other bundle: the next one is not claimed
	assert_eq no-such-task "$(state_of $((id + 1)))" "the next ID"
	# a dropped file named x.rejected, being accepted, is no marker
	spool submit -- true > /dev/null || fail "submit"
	rm "$SPOOL/incoming/$((id + 1)).bundle"
	echo 'echo hi' > "$SPOOL/accepting/$((id + 1)).drop.x.rejected"
	assert_eq submitted "$(state_of $((id + 1)))" "a dropped x.rejected"
}

# A refused bundle whose ID claim cannot be read at its refusal (an I/O
# error, injected once) is left for a later pass, as one being accepted
# is: moved to rejected/ without its results, its IDs never got one and
# "spool wait" on them waited for good.
test_a_refused_bundle_whose_claim_cannot_be_read_is_refused_later() {
	local id rc
	new_spool
	fast_config
	id=$(spool submit -- echo never) || fail "submit"
	sed -i 's/^uid: .*/uid: 4242/' "$SPOOL/incoming/$id.bundle"
	CKSPOOL_FAULT="count=all,readlink-fails=0/$id:EIO" start_spoold
	spool wait --timeout 20 "$id" > /dev/null 2>&1
	rc=$?
	[ "$rc" -ne 3 ] || fail "spool wait timed out: $(tail -3 "$T/spoold.log")"
	assert_eq 1 "$(grep -c "fault injection: .*readlink 0/$id.*Input/output error" "$T/spoold.log")" \
	    "the injected errors"
	assert_match "cannot read ID claim $id.*refused once it can be read" \
	    "$(cat "$T/spoold.log")" "spoold's warning"
	assert_eq rejected "$(field "$id" state)" "its state"
	assert_match "uid 4242 in the record" "$(field "$id" message)" "its message"
	stop_spoold
}

# A cancel request that spoold cannot read (an I/O error, injected
# once) is read again at the next rescan: it was removed unread, and
# the task it named was never cancelled.
test_a_cancel_request_that_cannot_be_read_is_read_again() {
	local id
	new_spool
	CKSPOOL_FAULT="count=all,open-fails=cancel.:EIO" start_spoold
	id=$(spool submit -- echo ran) || fail "submit"
	wait_for 10 taken_in "$id" || fail "not taken in"
	spool cancel "$id" || fail "cancel"
	wait_for 10 state_is "$id" cancelled ||
	    fail "task $id is $(state_of "$id"), not cancelled: $(tail -3 "$T/spoold.log")"
	assert_eq 1 "$(grep -c 'read: control/cancel\..*: Input/output error' "$T/spoold.log")" \
	    "reports of the failed read"
	wait_for 10 dir_empty "$SPOOL/control" ||
	    fail "the request was left: $(ls "$SPOOL/control")"
	stop_spoold
}

tick_incoming() {	# a submission, taken in
	local id
	id=$(spool submit -- true) || fail "submit"
	wait_for 10 taken_in "$id" ||
	    fail "task $id was not taken in: $(tail -3 "$T/spoold.log")"
}

# A listing of incoming/ or control/ that fails (an I/O error, injected
# at two listings in a row) is made again at the next rescan.  spoold
# took the directory's stamp, and cleared its dirty flag, before the
# listing: after a change the listing ran (and failed) twice, for the
# change and once more "again", and then none came until the tenth
# rescan forced one, the submission left in incoming/ and the cancel
# in control/ meanwhile.  Both are there before spoold starts, and
# its first listings fail.  Two ticks after the second failure, a
# rescan after it has listed the directory again.
test_a_failed_listing_is_made_again_at_the_next_rescan() {
	local a b
	new_spool
	a=$(spool submit -- echo ran) || fail "submit"
	CKSPOOL_NO_INOTIFY=1 \
	    CKSPOOL_FAULT="count=all,list-fails=incoming:EIO*2" start_spoold
	wait_for 10 failed_listings_reach incoming 2 ||
	    fail "not two failed listings: $(grep 'list' "$T/spoold.log")"
	tick_control 1
	tick_control 2
	taken_in "$a" ||
	    fail "task $a not taken in a rescan after the failed listings: $(tail -3 "$T/spoold.log")"
	assert_eq 1 "$(grep -c 'list: incoming: Input/output error' "$T/spoold.log")" \
	    "reports of the failed listings"
	assert_match "recovered: list-incoming" "$(cat "$T/spoold.log")" "its end"
	stop_spoold
	b=$(spool submit -- echo ran) || fail "submit"
	spool cancel "$b" > /dev/null || fail "cancel"
	CKSPOOL_NO_INOTIFY=1 \
	    CKSPOOL_FAULT="count=all,list-fails=control:EIO*2" start_spoold
	wait_for 10 failed_listings_reach control 2 ||
	    fail "not two failed listings: $(grep 'list' "$T/spoold.log")"
	tick_incoming
	tick_incoming
	state_is "$b" cancelled ||
	    fail "task $b is $(state_of "$b"), not cancelled a rescan after the failed listings: $(tail -3 "$T/spoold.log")"
	assert_eq 1 "$(grep -c 'list: control: Input/output error' "$T/spoold.log")" \
	    "reports of the failed listings"
	stop_spoold
}

# A worker's result that arrives while spoold's listings of its done/
# fail (an I/O error) is taken at the rescan after the last failure.
# The failures are counted so that the last two are the listings the
# result's arrival asks for (its change, and once more "again"): after
# them spoold listed done/ again only at the tenth rescan (DIRSTAMP_
# FORCE).  The task runs (held by $T/go) while spoold is stopped; the
# next spoold's recovery lists done/ (let by: "@1"; recovery lists
# until it succeeds), and its first three listings after it (the
# worker's first pass, and two rescans for the stamp it had not taken)
# fail before the task is let go; the two after it, or with the fix
# the next rescans whatever changed, fail too.
test_a_result_is_taken_at_the_rescan_after_a_failed_listing() {
	local id
	new_spool
	start_worker w1
	start_spoold
	id=$(spool submit -- sh -c "while [ ! -e '$T/go' ]; do sleep 0.05; done; echo ran") ||
	    fail "submit"
	wait_for 10 state_is "$id" running || fail "task $id is $(state_of "$id")"
	stop_spoold
	CKSPOOL_NO_INOTIFY=1 \
	    CKSPOOL_FAULT="count=all,list-fails=done:EIO*5@1" start_spoold
	wait_for 10 failed_listings_reach done 3 ||
	    fail "not three failed listings: $(grep 'list' "$T/spoold.log")"
	assert_no_match "recovery waits" "$(cat "$T/spoold.log")" \
	    "recovery's listing, let by"
	touch "$T/go"
	wait_for 10 failed_listings_reach done 5 ||
	    fail "not five failed listings: $(grep 'list' "$T/spoold.log")"
	tick_control 1
	tick_control 2
	finished "$id" ||
	    fail "task $id is $(state_of "$id"), not finished a rescan after the failed listings: $(tail -3 "$T/spoold.log")"
	assert_eq ran "$(task_stdout "$id")" "its output"
	assert_eq 1 "$(grep -c 'list: workers/w1-[^/]*/done: Input/output error (tried again' "$T/spoold.log")" \
	    "reports of the failed listings (after recovery's)"
	assert_match "recovered: list-workers/w1-[^/]*/done" "$(cat "$T/spoold.log")" "its end"
	stop_spoold
}

# A worker that registers (its directory in workers/) while spoold's
# listings of workers/ fail is taken at the rescan after the last
# failure.  spoold's recovery lists workers/ three times (let by:
# "@3"; recovery lists until it succeeds), then its first pass and the
# rescans after fail, and the worker registers meanwhile: a listing
# that failed was made again only at a change of workers/ or at the
# tenth rescan (DIRSTAMP_FORCE), so after the eighth failure (a forced
# listing) spoold placed nothing for ten rescans more; now each rescan
# lists it again until one succeeds.
test_a_worker_is_found_at_the_rescan_after_a_failed_listing() {
	local id
	new_spool
	id=$(spool submit -- echo ran) || fail "submit"
	CKSPOOL_NO_INOTIFY=1 \
	    CKSPOOL_FAULT="count=all,list-fails=workers:EIO*8@3" start_spoold
	wait_for 10 grep -q "recovered 0 workers" "$T/spoold.log" ||
	    fail "no recovery: $(tail -3 "$T/spoold.log")"
	assert_no_match "recovery waits" "$(cat "$T/spoold.log")" \
	    "recovery's listings, let by"
	start_worker w1
	wait_for 20 failed_listings_reach workers 8 ||
	    fail "not eight failed listings: $(grep 'list' "$T/spoold.log")"
	tick_control 1
	tick_control 2
	! state_is "$id" queued ||
	    fail "task $id still queued a rescan after the failed listings: $(tail -3 "$T/spoold.log")"
	wait_for 10 finished "$id" || fail "task $id is $(state_of "$id")"
	assert_eq 1 "$(grep -c 'list: workers: Input/output error (tried again' "$T/spoold.log")" \
	    "reports of the failed listings (after recovery's)"
	stop_spoold
}

tick_worker() {	# WID N: a cancel request, not an assignment name: removed
	echo x > "$T/tick"
	mv "$T/tick" "$SPOOL/workers/$1/cancel/tick.$2"
	wait_for 10 test ! -e "$SPOOL/workers/$1/cancel/tick.$2" ||
	    fail "cancel/tick.$2 was not taken: $(tail -3 "$T/worker-w1.log")"
}

worker_failed_listings_reach() {	# DIR N: as failed_listings_reach, of w1
	[ "$(grep -c "fault injection: .*(list $1) fails" "$T/worker-w1.log")" -ge "$2" ]
}

# An assignment that arrives while a worker's listings of its inbox/
# fail (an I/O error) is taken at the worker's rescan after the last
# failure.  Ten listings fail: once two have (at start, and made again
# at its first rescan), the worker is stopped (SIGSTOP) while spoold
# places the task, so that the failures left come with the assignment
# in inbox/ whatever the pace of spoold's rescans.  (With four, and the
# worker not stopped, an idle worker's first rescans, 10 ms apart and
# doubling, made them all before a spoold without inotify had placed
# the task: it failed in CI.)  Without the fix, after the failures the
# worker listed inbox/ again only at its tenth rescan (DIRSTAMP_FORCE),
# the task placed and not run meanwhile.  Rescans are counted by what
# the worker takes at one (a request in its cancel/).
test_an_assignment_is_taken_at_the_rescan_after_a_failed_listing() {
	local id wid
	new_spool
	start_spoold
	CKSPOOL_NO_INOTIFY=1 \
	    CKSPOOL_FAULT="count=all,list-fails=inbox:EIO*10" start_worker w1
	wid=$(worker_wid w1) || fail "no worker"
	wait_for 10 worker_failed_listings_reach inbox 2 ||
	    fail "not two failed listings: $(grep 'list' "$T/worker-w1.log")"
	kill -STOP "$WORKER_PID"
	! worker_failed_listings_reach inbox 10 ||
	    fail "all ten listings failed before the worker was stopped"
	id=$(spool submit -- echo ran) || fail "submit"
	wait_for 10 state_is "$id" placed || fail "task $id is $(state_of "$id")"
	kill -CONT "$WORKER_PID"
	wait_for 10 worker_failed_listings_reach inbox 10 ||
	    fail "not ten failed listings: $(grep 'list' "$T/worker-w1.log")"
	tick_worker "$wid" 1
	tick_worker "$wid" 2
	! state_is "$id" queued && ! state_is "$id" placed ||
	    fail "task $id is $(state_of "$id") a rescan after the failed listings: $(tail -3 "$T/worker-w1.log")"
	wait_for 10 finished "$id" || fail "task $id is $(state_of "$id")"
	assert_eq 1 "$(grep -c "list: workers/$wid/inbox: Input/output error" "$T/worker-w1.log")" \
	    "reports of the failed listings"
	assert_match "recovered: list-workers/$wid/inbox" "$(cat "$T/worker-w1.log")" "its end"
	stop_spoold
}

# A request carried out that spoold cannot remove (an I/O error,
# injected twice) is removed at the next rescan, and not read, carried
# out or reported again: it was looked at again only when control/ was
# listed again (a change there, or every tenth rescan, DIRSTAMP_FORCE),
# and then read and dealt with anew, its failure logged each time.
test_a_cancel_request_that_cannot_be_removed_is_removed_later() {
	local id
	new_spool
	CKSPOOL_FAULT="fail-on=cancel.:EIO*2" start_spoold
	id=$(spool submit -- echo ran) || fail "submit"
	wait_for 10 taken_in "$id" || fail "not taken in"
	spool cancel "$id" || fail "cancel"
	wait_for 10 state_is "$id" cancelled ||
	    fail "task $id is $(state_of "$id"), not cancelled"
	wait_for 10 dir_empty "$SPOOL/control" ||
	    fail "the request was left: $(ls "$SPOOL/control"): $(tail -3 "$T/spoold.log")"
	assert_eq 1 "$(grep -c 'unlink: control/cancel\..*: Input/output error' "$T/spoold.log")" \
	    "reports of the failed unlink"
	assert_eq 1 "$(grep -c "task $id: cancel requested" "$T/spoold.log")" \
	    "reports of the request"
	assert_match "recovered: control-unlink" "$(cat "$T/spoold.log")" "its end"
	stop_spoold
}
