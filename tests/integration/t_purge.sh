# t_purge.sh - removing final tasks: "spool purge" (spool(1)), and a
# shard removed under a running spoold (spool-layout(5), tasks/).
# across hosts: yes

# A shard may go while spoold runs (emptied by a purge, or removed by
# hand as spool-layout(5) allows): spoold, which makes a shard once and
# remembered it made, failed the rename of every later task of that
# shard into it (ENOENT, at every rescan), and the task never ended.
test_shard_removed_under_spoold_is_made_again() {
	local a b
	new_spool
	start_spoold --local 1
	a=$(spool submit -- true) || fail "submit"
	spool wait "$a" || fail "task $a"
	rm -r "$SPOOL/tasks/0"
	b=$(spool submit -- echo again) || fail "submit"
	spool wait --timeout 20 "$b" ||
	    fail "task $b did not end: $(grep -m1 'rename' "$T/spoold.log")"
	assert_eq again "$(task_stdout "$b")"
}

# the ID of every task directory left in tasks/, sorted
tasks_left() {
	find "$SPOOL/tasks" -mindepth 2 -maxdepth 2 -printf '%f\n' | sort -n |
	    tr '\n' ' '
}

# Old final tasks go, young ones stay; --dry-run (-n) says the same and
# removes nothing; a purged task is as unknown as one never submitted,
# and the spool is whole (fsck), with nothing left in gc/.
test_purge_removes_old_final_tasks_and_keeps_young_ones() {
	local a b c out
	new_spool
	start_spoold --local 1
	a=$(spool submit -- true) && b=$(spool submit -- false) &&
	    c=$(spool submit -- true) || fail "submit"
	spool wait "$a" "$c" || fail "tasks"
	spool wait "$b"
	wait_for 10 dir_empty "$SPOOL/specs" || fail "bundles not retired"
	touch -d '2 hours ago' "$SPOOL/tasks/0/$a" "$SPOOL/tasks/0/$b"
	out=$(spool purge -n --older-than 1h -v) || fail "purge -n: $out"
	assert_eq "$a
$b
would remove 2 tasks; kept 1 younger, 0 of unfinished bundles, 0 needed by unfinished tasks" "$out" "dry run"
	assert_eq "$a $b $c " "$(tasks_left)" "tasks after the dry run"
	out=$(spool purge --older-than 1h) || fail "purge: $out"
	assert_match "^removed 2 tasks; kept 1 younger" "$out"
	assert_eq "$c " "$(tasks_left)" "tasks after the purge"
	dir_empty "$SPOOL/gc" || fail "left in gc/: $(ls "$SPOOL/gc")"
	assert_eq unknown "$(state_of "$a")" "state of a purged task"
	assert_eq done "$(state_of "$c")" "state of a young task"
	spool wait --timeout 0 "$a" 2>/dev/null
	assert_eq 2 $? "wait on a purged task"
	out=$(spool fsck -q) || fail "fsck after the purge: $out"
	# then every final task, of any age (the default, 0)
	out=$(spool purge) || fail "purge: $out"
	assert_match "^removed 1 task;" "$out"
	assert_eq "" "$(tasks_left)" "tasks after the second purge"
	# the next task ends as usual
	a=$(spool submit -- echo next) || fail "submit"
	spool wait "$a" || fail "task $a"
	assert_eq next "$(task_stdout "$a")"
}

# --state picks the outcomes to remove; bad options are usage errors;
# a purge needs no spoold
test_purge_by_state() {
	local a f out
	new_spool
	start_spoold --local 1
	a=$(spool submit -- true) && f=$(spool submit -- false) || fail "submit"
	spool wait "$a"
	spool wait "$f"
	wait_for 10 dir_empty "$SPOOL/specs" || fail "bundles not retired"
	out=$(spool purge --state failed,cancelled -v) || fail "purge: $out"
	assert_eq "$f
removed 1 task; kept 0 younger, 0 of unfinished bundles, 0 needed by unfinished tasks, 1 of other states" "$out"
	assert_eq "$a " "$(tasks_left)"
	out=$(spool purge --state finished 2>&1)
	assert_eq 2 $? "exit status of a bad state"
	assert_match "not a final state" "$out"
	out=$(spool purge --older-than soon 2>&1)
	assert_eq 2 $? "exit status of a bad age"
	assert_eq "$a " "$(tasks_left)"
	# without spoold too; the next one runs nothing again
	stop_spoold
	out=$(spool purge) || fail "purge: $out"
	assert_match "^removed 1 task;" "$out"
	start_spoold --local 1
	a=$(spool submit -- echo next) || fail "submit"
	spool wait "$a" || fail "task $a"
	assert_eq "$a " "$(tasks_left)"
}

# A final task whose bundle still has an unfinished task stays: a spoold
# that starts reads the bundle again and would take a task found nowhere
# for one not run yet, and run it again.  Restarted after the purge,
# spoold runs it no second time.
test_purge_keeps_tasks_of_an_unfinished_bundle() {
	local ids one two out
	new_spool
	start_spoold --local 2
	ids=$(spool map -- sh -c 'echo "$1" >> "$2"; [ "$1" = 1 ] ||
	    while [ ! -e "$3" ]; do sleep 0.05; done' _ {} "$T/ran" "$T/go" ::: 1 2) ||
	    fail "map"
	one=$(echo "$ids" | sed -n 1p)
	two=$(echo "$ids" | sed -n 2p)
	spool wait "$one" || fail "task $one"
	out=$(spool purge) || fail "purge: $out"
	assert_match "^removed 0 tasks; kept 0 younger, 1 of unfinished bundles" "$out"
	assert_eq "$one " "$(tasks_left)"
	stop_spoold
	start_spoold --local 2
	touch "$T/go"
	spool wait "$two" || fail "task $two"
	assert_eq 1 "$(grep -cx 1 "$T/ran")" "runs of task $one"
	wait_for 10 dir_empty "$SPOOL/specs" || fail "bundle not retired"
	out=$(spool purge) || fail "purge: $out"
	assert_match "^removed 2 tasks;" "$out"
}

# A final task an unfinished one depends on (--after) stays: a spoold
# that starts looks the dependency up again, and one found nowhere it
# takes, after 5 minutes, for never submitted and cancels the dependent.
test_purge_keeps_a_dependency_of_an_unfinished_task() {
	local a g b out
	new_spool
	start_spoold --local 2
	a=$(spool submit -- true) || fail "submit"
	spool wait "$a" || fail "task $a"
	g=$(spool submit -- sh -c 'while [ ! -e "$1" ]; do sleep 0.05; done' _ "$T/go") &&
	    b=$(spool submit --after "$a,$g" -- echo b) || fail "submit"
	wait_for 10 state_is "$b" waiting || fail "task $b is $(state_of "$b")"
	wait_for 10 test ! -e "$SPOOL/specs/$a" || fail "bundle $a not retired"
	out=$(spool purge) || fail "purge: $out"
	assert_match "^removed 0 tasks; kept 0 younger, 0 of unfinished bundles, 1 needed by unfinished tasks" "$out"
	assert_eq "$a " "$(tasks_left)"
	assert_eq waiting "$(state_of "$b")"
	touch "$T/go"
	spool wait "$b" || fail "task $b"
	wait_for 10 dir_empty "$SPOOL/specs" || fail "bundles not retired"
	out=$(spool purge) || fail "purge: $out"
	assert_match "^removed 3 tasks;" "$out"
}

# A final task that a task file dropped into incoming/ names (#SPOOL
# --after, after:) stays until spoold has accepted the file, as one a
# bundle's task names: the purge read only bundles, removed it, and the
# spoold started next waited for it and after 5 minutes cancelled the
# dependent ("dependency 1 was never submitted").  The same for such a
# file in accepting/ (ID.drop.NAME: spoold parses it again if it stops
# before its spec is written).  A file whose dependencies cannot be
# told (not parsable: maybe still being written) keeps every task.
test_purge_keeps_a_dependency_of_a_dropped_task_file() {
	local a b out
	new_spool
	start_spoold --local 1
	a=$(spool submit -- true) || fail "submit"
	spool wait "$a" || fail "task $a"
	wait_for 10 dir_empty "$SPOOL/specs" || fail "bundle not retired"
	stop_spoold
	printf '#!/bin/sh\n#SPOOL --after %s\necho dependent\n' "$a" \
	    > "$SPOOL/incoming/dep.sh"
	out=$(spool purge) || fail "purge: $out"
	assert_match "^removed 0 tasks; kept 0 younger, 0 of unfinished bundles, 1 needed by unfinished tasks" "$out"
	assert_eq "$a " "$(tasks_left)"
	printf 'command: [echo\n' > "$SPOOL/incoming/half.yaml"
	out=$(spool purge -v 2>&1)
	assert_eq 111 $? "exit status with a file that cannot be parsed"
	assert_match "^spool: fatal: $SPOOL/incoming/half.yaml: line [0-9].*nothing purged" "$out"
	assert_eq "$a " "$(tasks_left)"
	rm "$SPOOL/incoming/half.yaml"
	start_spoold --local 1
	wait_for 20 dir_empty "$SPOOL/incoming" || fail "dep.sh not taken in"
	b=$((a + 1))
	spool wait "$b" || fail "task $b: $(spool status "$b")"
	assert_eq dependent "$(task_stdout "$b")"
	wait_for 10 dir_empty "$SPOOL/specs" || fail "bundle not retired"
	stop_spoold
	printf 'command: echo late\nafter: [%s]\n' "$b" \
	    > "$SPOOL/accepting/$((b + 1)).drop.late.yaml"
	out=$(spool purge -v) || fail "purge: $out"
	assert_eq "$a
removed 1 task; kept 0 younger, 0 of unfinished bundles, 1 needed by unfinished tasks" "$out"
	rm "$SPOOL/accepting/$((b + 1)).drop.late.yaml"
	out=$(spool purge) || fail "purge: $out"
	assert_match "^removed 1 task;" "$out"
	assert_eq "" "$(tasks_left)"
}

# "spool wait" and "spool gather" on a purged task's ID waited until
# their timeout (exit 3), for ever without one: the task is gone, and
# they now refuse it as an ID never claimed, at once, in the order
# given.  Not while accepting/ holds an owed refusal (FIRST.rejected):
# which IDs it will write is not known.
test_purge_wait_on_a_purged_task_is_refused() {
	local a b out
	new_spool
	start_spoold --local 1
	a=$(spool submit -- echo a) || fail "submit"
	spool wait "$a" || fail "task $a"
	wait_for 10 dir_empty "$SPOOL/specs" || fail "bundle not retired"
	out=$(spool purge) || fail "purge: $out"
	assert_match "^removed 1 task;" "$out"
	b=$(spool submit -- echo b) || fail "submit"
	spool wait "$b" || fail "task $b"
	out=$(spool wait --timeout 10 "$b" "$a" 2>&1)
	assert_eq 2 $? "exit status of spool wait"
	assert_eq "spool: fatal: no such task: $a (removed by spool purge?)" \
	    "$out"
	out=$(spool gather --timeout 10 "$a" "$b" 2>&1)
	assert_eq 2 $? "exit status of spool gather"
	assert_eq "spool: fatal: no such task: $a (removed by spool purge?)" \
	    "$out"
	out=$(spool wait --timeout 0 "$a" 2>&1)
	assert_eq 2 $? "exit status of spool wait --timeout 0"
	stop_spoold
	: > "$SPOOL/accepting/$((b + 1)).rejected"
	out=$(spool wait --timeout 0 "$a" 2>&1)
	assert_eq 3 $? "exit status while results are owed"
	rm "$SPOOL/accepting/$((b + 1)).rejected"
}

# A "spool wait" already waiting when its task finishes and is purged
# returns (no such task) instead of waiting for ever: the purge touches
# tasks/, which it watches (or sees at a rescan), and it looks again.
# Stopped (SIGSTOP) while the task finishes and is purged, so that it
# never sees the task final.
test_purge_wait_returns_when_its_task_is_purged() {
	local a w out
	new_spool
	start_spoold --local 1
	a=$(spool submit -- sh -c 'while [ ! -e "$1" ]; do sleep 0.05; done' \
	    _ "$T/go") || fail "submit"
	spool wait "$a" > "$T/out" 2> "$T/err" &
	w=$!
	track $w
	wait_for 10 state_is "$a" running || fail "task $a is $(state_of "$a")"
	kill -STOP "$w"
	touch "$T/go"
	wait_for 20 finished "$a" || fail "task $a did not finish"
	wait_for 10 dir_empty "$SPOOL/specs" || fail "bundle not retired"
	out=$(spool purge) || fail "purge: $out"
	assert_match "^removed 1 task;" "$out"
	kill -CONT "$w"
	wait_for 20 not_running "$w" || fail "spool wait still waits"
	wait "$w"
	assert_eq 2 $? "exit status of spool wait"
	assert_eq "spool: fatal: no such task: $a (removed by spool purge?)" \
	    "$(cat "$T/err")"
}

# While accepting/FIRST.rejected exists spoold still owes the results
# of every ID of that refused bundle, FIRST to FIRST+count-1, and
# writes those missing when it pays (spoold/accept.c, owed_pay).  The
# purge kept only FIRST: it removed the others' rejected results, and
# spoold wrote them again, so purged tasks came back.  The marker is
# put back by hand after it was paid, as a spoold stopped between the
# results and the marker's removal leaves it.
test_purge_keeps_every_id_of_an_owed_refusal() {
	local ids first out
	new_spool
	ids=$(spool map -- echo {} ::: 1 2 3) || fail "map"
	first=$(echo "$ids" | head -1)
	sed -i 's/^uid: .*/uid: 4242/' "$SPOOL/incoming/$first.bundle"
	CKSPOOL_FAULT="fail-on=final.:EIO*1000000" start_spoold
	wait_for 10 test -e "$SPOOL/accepting/$first.rejected" ||
	    fail "no owed results: $(tail -3 "$T/spoold.log")"
	stop_spoold
	cp "$SPOOL/accepting/$first.rejected" "$T/marker"
	start_spoold	# no fault: it pays what it owes
	wait_for 20 test ! -e "$SPOOL/accepting/$first.rejected" ||
	    fail "owed results not written"
	stop_spoold
	assert_eq "$(echo $ids) " "$(tasks_left)" "rejected tasks"
	cp "$T/marker" "$SPOOL/accepting/$first.rejected"
	out=$(spool purge) || fail "purge: $out"
	assert_match "^removed 0 tasks; kept 0 younger, 3 of unfinished bundles" \
	    "$out"
	assert_eq "$(echo $ids) " "$(tasks_left)" "tasks after the purge"
	start_spoold
	wait_for 20 test ! -e "$SPOOL/accepting/$first.rejected" ||
	    fail "owed results not written"
	stop_spoold
	out=$(spool purge) || fail "purge: $out"
	assert_match "^removed 3 tasks;" "$out"
	start_spoold
	spool wait --timeout 0 $ids 2>/dev/null
	assert_eq 2 $? "wait on the purged tasks"
	assert_eq "" "$(tasks_left)" "tasks after the second purge"
}

# Purges while spoold accepts, places and finishes tasks: each task runs
# once, every one ends (a purge removes none that is still to end, nor
# its shard), the spool is whole, and a spoold started afterwards runs
# nothing again.
test_purge_while_tasks_finish() {
	local n=60 i=0 out beat
	new_spool
	start_spoold --local 2
	seq "$n" | spool map -- sh -c 'echo "$1" >> "$2"' _ {} "$T/ran" > "$T/ids" ||
	    fail "map"
	while ! { [ "$(wc -l 2>/dev/null < "$T/ran")" = "$n" ] &&
	    dir_empty "$SPOOL/specs"; }; do
		out=$(spool purge) || fail "purge $i: $out"
		i=$((i + 1))
		[ "$i" -lt 2000 ] || fail "tasks do not end: $(wc -l < "$T/ran") ran"
	done
	echo "$i purges while $n tasks ran" >> "$T/report"
	out=$(spool purge) || fail "purge: $out"
	assert_eq "" "$(tasks_left)" "tasks left"
	assert_eq "$n" "$(sort -un "$T/ran" | wc -l)" "tasks that ran"
	assert_eq "$n" "$(wc -l < "$T/ran")" "runs"
	out=$(spool fsck -q) || fail "fsck: $out"
	stop_spoold
	start_spoold --local 1
	wait_for 20 summary_settled ||
	    fail "no summary of the recovered spoold: $(cat "$SPOOL/state/summary" 2>&1)"
	beat=$(spoold_beat)
	wait_for 20 beat_past $((beat + 5)) || fail "spoold does not beat"
	assert_eq "0 0 0" "$(summary_field queued) $(summary_field placed) $(summary_field waiting)" \
	    "queued, placed, waiting after the restart"
	assert_eq "$n" "$(wc -l < "$T/ran")" "runs after the restart"
	stop_spoold
	out=$(spool fsck -q --settled) || fail "fsck --settled: $out"
}

# A shard emptied by the purge goes when all of its IDs are claimed and
# none is still to be accepted (here 1-999 of shard 0); one that more
# tasks may still come into stays (shard 1, next ID 1002).
test_purge_removes_a_shard_nothing_comes_into() {
	local out id
	new_spool
	fast_config "  fsync: false"
	start_spoold
	seq 1001 | spool map -- true > "$T/ids" || fail "map"
	wait_for 20 test ! -e "$SPOOL/incoming/1.bundle" || fail "not taken in"
	spool cancel < "$T/ids" 2>/dev/null || fail "cancel"
	spool wait --timeout 60 < "$T/ids"
	assert_eq 130 $? "wait on the cancelled tasks"
	wait_for 10 dir_empty "$SPOOL/specs" || fail "bundle not retired"
	out=$(spool purge) || fail "purge: $out"
	assert_match "^removed 1001 tasks;" "$out"
	assert_eq "1" "$(ls "$SPOOL/tasks" | tr '\n' ' ' | xargs)" "shards left"
	start_worker w1
	id=$(spool submit -- echo next) || fail "submit"
	assert_eq 1002 "$id"
	spool wait "$id" || fail "task $id"
	assert_eq next "$(task_stdout "$id")"
	out=$(spool fsck -q) || fail "fsck: $out"
}
