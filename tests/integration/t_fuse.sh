# t_fuse.sh - spoolfs: real mounts of a real spool served by a real
# spoold --local: submitting by writing a file, reading results that
# block until the task ends (O_NONBLOCK, interrupts, poll), cancelling,
# the errno of every operation that makes no sense, ls/stat/find/du/
# cp -r/rsync of a finished task, several shells hammering the mount,
# and unmounting while a reader waits.
#
# Every test mounts with -f in the background and unmounts in an EXIT
# trap, whatever happens; fs_umount also checks that spoolfs exited 0
# and that its log holds no sanitizer report (with the ASan binaries,
# the leak check runs when spoolfs exits after the unmount).

FUSETOOL="python3 $(dirname "${BASH_SOURCE[0]}")/fusetool.py"

is_mounted() {
	awk -v m="$1" '$2 == m && $3 == "fuse.spoolfs" { f = 1 } END { exit !f }' \
	    /proc/mounts
}

fs_cleanup() {
	[ -n "${MNT:-}" ] && is_mounted "$MNT" && fusermount3 -u -z "$MNT"
	return 0
}

# fs_mount [ARGS]: mount $SPOOL on $MNT ($T/mnt), wait until it is.
fs_mount() {
	MNT=$T/mnt
	mkdir -p "$MNT"
	trap fs_cleanup EXIT
	trap 'fs_cleanup; exit 143' TERM
	spoolfs "$SPOOL" "$MNT" -f "$@" >> "$T/spoolfs.log" 2>&1 &
	FS_PID=$!
	track $FS_PID
	wait_for 10 is_mounted "$MNT" ||
		fail "spoolfs did not mount: $(tail -5 "$T/spoolfs.log")"
}

# spoolfs is gone; it exited 0 and reported nothing bad
fs_exited_clean() {
	local rc=0
	wait_for 30 not_running "$FS_PID" || fail "spoolfs did not exit"
	wait "$FS_PID" || rc=$?
	[ "$rc" -eq 0 ] || fail "spoolfs exited $rc: $(tail -20 "$T/spoolfs.log")"
	if grep -Eq "Sanitizer|runtime error|leak" "$T/spoolfs.log"; then
		fail "spoolfs: $(grep -E -A20 "Sanitizer|runtime error" \
		    "$T/spoolfs.log" | head -40)"
	fi
	is_mounted "$MNT" && fail "still mounted after spoolfs exited"
	return 0
}

fs_umount() {
	fusermount3 -u "$MNT" || fail "fusermount3 -u failed"
	fs_exited_clean
}

# a task that runs until $T/go.N exists, then prints "out N"
gated_task() {	# N
	spool submit -- sh -c "while [ ! -e '$T/go.$1' ]; do sleep 0.05; done; \
echo out $1"
}

mnt_state_is() {	# ID STATE (read through the mount)
	[ "$(cat "$MNT/tasks/$1/state" 2>/dev/null)" = "$2" ]
}

mnt_summary_has() {	# LINE: the mount's summary holds LINE
	grep -qx -- "$1" "$MNT/summary"
}

worker_status_running() {	# WID N: its status (beat) says N running
	grep -qx "running: $2" "$MNT/workers/$1/status"
}

fs_fds_at_most() {	# N: spoolfs holds at most N descriptors
	[ "$(ls "/proc/$FS_PID/fd" | wc -l)" -le "$1" ]
}

# spoolfs -d has logged a READ of PID: libfuse logs a request as it
# takes it, and spoolfs handles it before it looks at its signals
fs_took_read() {	# PID
	grep -q "opcode: READ .*, pid: $1\$" "$T/spoolfs.log"
}

mount_opts() {	# MNT: its options in /proc/mounts
	awk -v m="$1" '$2 == m && $3 == "fuse.spoolfs" { print $4 }' /proc/mounts
}

test_fuse_mount_options() {
	new_spool
	fs_mount
	opts=$(mount_opts "$MNT")
	assert_match "^rw,.*(^|,)default_permissions(,|\$)" "$opts" "default options"
	assert_no_match "allow_other" "$opts" "default options"
	fs_umount
	# without -f: detached once mounted; -o reaches the mount
	spoolfs "$SPOOL" "$MNT" -o allow_other,ro 2>"$T/err" ||
	    fail "spoolfs -o: $(cat "$T/err")"
	is_mounted "$MNT" || fail "not mounted when spoolfs returned"
	pid=$(pgrep -x -f "spoolfs $SPOOL $MNT -o allow_other,ro") ||
	    fail "no detached spoolfs"
	track "$pid"
	opts=$(mount_opts "$MNT")
	assert_match "^ro,.*(^|,)default_permissions(,|\$)" "$opts" "-o ro"
	assert_match "(^|,)allow_other(,|\$)" "$opts" "-o allow_other"
	assert_eq EROFS "$($FUSETOOL errno create "$MNT/submit/x")" \
	    "submitting on a read-only mount"
	ls "$MNT/tasks" > /dev/null || fail "a read-only mount does not answer"
	# detached, its messages are kept in the spool, not lost
	log=$SPOOL/log/spoolfs.$(hostname -s).log
	assert_match "^[0-9T:.-]+ spoolfs: .* mounted on $MNT \\(pid $pid\\)\$" \
	    "$(cat "$log" 2>&1)" "the detached spoolfs's log"
	fusermount3 -u "$MNT" || fail "fusermount3 -u failed"
	wait_for 10 not_running "$pid" || fail "detached spoolfs stayed"
	assert_match "spoolfs: $MNT: unmounted; leaving\$" "$(tail -1 "$log")" \
	    "the last line of the log"
	[ -s "$T/err" ] && fail "the detached spoolfs wrote: $(cat "$T/err")"
	return 0
}

test_fuse_submit_by_writing() {
	new_spool
	start_spoold --local 1
	fs_mount
	mkdir "$T/wd"
	# a shell line, from the writer's directory
	(cd "$T/wd" && echo 'pwd; echo hello from the mount' > "$MNT/submit/x") ||
		fail "submitting by writing failed"
	id=$(cat "$MNT/submit/x") || fail "no receipt"
	assert_match '^[0-9]+$' "$id" "receipt"
	# the same thing "spool submit" makes: a bundle the CLI can see
	assert_match "^$id +x +" "$(spool status "$id" | tail -1)" "status of $id"
	spool wait "$id" || fail "task $id failed: $(cat "$SPOOL/tasks/0/$id/result")"
	assert_eq "$T/wd
hello from the mount" "$(task_stdout "$id")" "stdout"
	# YAML with resources, and a #! script with #SPOOL directives
	printf 'command: [echo, yaml]\ncores: 1\nmemory: 10M\nname: yjob\n' \
	    > "$MNT/submit/y.yaml" || fail "YAML submission failed"
	y=$(cat "$MNT/submit/y.yaml")
	printf '#!/bin/sh\n#SPOOL --name scr --walltime 1:00\necho script\n' \
	    > "$MNT/submit/s.sh" || fail "script submission failed"
	s=$(cat "$MNT/submit/s.sh")
	spool wait "$y" "$s" || fail "yaml/script tasks failed"
	assert_eq yaml "$(task_stdout "$y")"
	assert_eq script "$(task_stdout "$s")"
	assert_eq yjob "$(spec_field "$y" name)" "YAML name"
	assert_eq 10485760 "$(spec_field "$y" memory)" "YAML memory"
	assert_eq scr "$(spec_field "$s" name)" "#SPOOL name"
	assert_eq 60 "$(spec_field "$s" walltime)" "#SPOOL walltime"
	# the same name again (O_TRUNC): a new submission, a new receipt
	echo 'echo again' > "$MNT/submit/x" || fail "resubmitting x failed"
	x2=$(cat "$MNT/submit/x")
	[ "$x2" -gt "$id" ] || fail "x resubmitted as $x2"
	# cp of a file works the same way
	printf 'command: [echo, copied]\n' > "$T/job.yaml"
	cp "$T/job.yaml" "$MNT/submit/" || fail "cp into submit/ failed"
	c=$(cat "$MNT/submit/job.yaml")
	spool wait "$x2" "$c" || fail "x2/c failed"
	assert_eq copied "$(task_stdout "$c")"
	ls "$MNT/submit" > "$T/ls"
	assert_eq "job.yaml s.sh x y.yaml" "$(sort "$T/ls" | tr '\n' ' ' |
	    sed 's/ $//')" "submit/ listing"
	# removing a receipt does not touch the task
	rm "$MNT/submit/x" || fail "rm of a receipt failed"
	[ -e "$MNT/submit/x" ] && fail "receipt still there"
	assert_eq done "$(cat "$MNT/tasks/$x2/state")"
	fs_umount
}

# A YAML list of tasks written into submit/ is one submission: one
# bundle, an ID a line in its receipt, in the list's order, each task
# with the defaults of a file of its own (the writer's directory, the
# file's name); one bad item refuses the whole list, naming it.  spool
# submit takes the same file.
# refused_list FILE TEXT REASON: TEXT written into the mount's
# submit/FILE fails its close(2) with EINVAL, and FILE.why matches the
# regular expression REASON
refused_list() {
	assert_eq EINVAL "$($FUSETOOL errno write "$MNT/submit/$1" "$2")" \
	    "the close of $1"
	assert_match "$3" "$(cat "$MNT/submit/$1.why")" "why $1 was refused"
}

test_fuse_submit_a_list_of_tasks() {
	local ids
	new_spool
	fs_mount	# spoold started below: the bundle stays in incoming/
	mkdir "$T/wd"
	(cd "$T/wd" && printf '%s\n' '# three tasks' \
	    '- command: [sh, -c, "echo one; pwd"]' \
	    '- {command: "echo two", name: second, cores: 1}' \
	    '- script: "#!/bin/sh\necho three\n"' \
	    '  walltime: 60' > "$MNT/submit/trio.yaml") ||
	    fail "submitting a list failed"
	ids=$(cat "$MNT/submit/trio.yaml") || fail "no receipt"
	assert_match '^[0-9]+
[0-9]+
[0-9]+$' "$ids" "the receipt: three IDs"
	set -- $ids
	[ "$2" -eq $(($1 + 1)) ] && [ "$3" -eq $(($1 + 2)) ] ||
	    fail "IDs not consecutive: $ids"
	# one bundle for the three
	assert_eq "$1.bundle" "$(ls "$SPOOL/incoming")" "incoming/"
	assert_match "^count: 3\$" "$(cat "$SPOOL/incoming/$1.bundle")" \
	    "the bundle's count"
	start_spoold --local 1
	spool wait "$@" || fail "the list's tasks failed: $(spool status "$@")"
	assert_eq "one
$T/wd" "$(task_stdout "$1")" "the first task's output"
	assert_eq two "$(task_stdout "$2")" "the second's"
	assert_eq three "$(task_stdout "$3")" "the third's"
	assert_eq "trio second trio" "$(spec_field "$1" name) $(spec_field "$2" name) $(spec_field "$3" name)" \
	    "names: the file's, unless given"
	assert_eq 60 "$(spec_field "$3" walltime)" "the third's walltime"
	# a bad item: close(2) fails, nothing of the list is submitted
	next=$(spool submit -- true) || fail "submit"
	refused_list bad.yaml \
	    "$(printf -- '- command: [echo, a]\n- command: [echo, b]\n  cores: none\n')" \
	    '^bad.yaml: line 3, column 10: task 2 of the list: cores'
	assert_eq $((next + 1)) "$(spool submit -- true)" \
	    "the next ID: the refused list claimed none"
	# spool submit FILE: the same list, an ID a line
	printf -- '- command: [echo, x]\n- command: [echo, y]\n' > "$T/two.yaml"
	ids=$(spool submit --cores 1 "$T/two.yaml") || fail "spool submit of a list"
	set -- $ids
	[ $# -eq 2 ] || fail "spool submit printed: $ids"
	spool wait "$@" || fail "the list's tasks failed"
	assert_eq "x y" "$(task_stdout "$1") $(task_stdout "$2")" "their outputs"
	fs_umount
}

# A list's task may depend on the tasks before it by their names (every
# one so named: a fan-in), through the mount and through spool submit;
# the dependencies are IDs in its spec, and a failure cancels the
# dependents as any dependency's does.  A name no task before has is
# refused with the item and its line, and claims no ID.
test_fuse_list_tasks_depend_on_the_tasks_before_by_name() {
	local ids next first
	new_spool
	start_spoold --local 2
	fs_mount
	mkdir "$T/wd"
	(cd "$T/wd" && printf '%s\n' \
	    "- {name: part, command: [sh, -c, \"until [ -e '$T/go' ]; do sleep 0.05; done; echo 1 > p1\"]}" \
	    '- {name: part, command: [sh, -c, "echo 2 > p2"]}' \
	    '- name: merge' \
	    '  command: cat p1 p2' \
	    '  after: [part]' \
	    '- {command: "echo reported", after: merge}' \
	    > "$MNT/submit/pipeline.yaml") || fail "submitting the pipeline failed"
	ids=$(cat "$MNT/submit/pipeline.yaml") || fail "no receipt"
	set -- $ids
	[ $# -eq 4 ] || fail "the receipt: $ids"
	spool wait "$2" || fail "the second part failed"
	state_is "$3" waiting || fail "merge is $(state_of "$3") before the first part ended"
	touch "$T/go"
	spool wait "$@" || fail "the pipeline failed: $(spool status "$@")"
	assert_eq "1
2" "$(task_stdout "$3")" "merge's output: both parts ran before it"
	assert_eq reported "$(task_stdout "$4")" "the last task's"
	assert_eq "[$1, $2]" "$(spec_field "$3" after)" "merge's dependencies"
	assert_eq "[$3]" "$(spec_field "$4" after)" "the last task's"
	# names and IDs mixed: $SPOOL_DEPS in the order of the words
	first=$1
	printf '%s\n' '- {name: a, command: "true"}' '- {name: b, command: "true"}' \
	    "- {command: 'echo \$SPOOL_DEPS', after: [b, $first, a]}" > "$T/order.yaml"
	ids=$(spool submit "$T/order.yaml") || fail "spool submit of a list"
	set -- $ids
	spool wait "$3" || fail "the task after a, b and $first failed"
	assert_eq "$2 $first $1" "$(task_stdout "$3")" "its SPOOL_DEPS"
	# spool submit FILE: a failure cancels what comes after it
	printf '%s\n' '- {name: a, command: "false"}' \
	    '- {command: "echo never", after: [a]}' > "$T/fails.yaml"
	ids=$(spool submit "$T/fails.yaml") || fail "spool submit of a list"
	set -- $ids
	spool wait "$2"
	assert_eq 75 $? "the dependent's wait status"
	assert_eq dependency "$(field "$2" reason)" "the dependent's reason"
	assert_match "dependency $1 failed \(exit 1\)" "$(field "$2" message)" \
	    "the dependent's message"
	# a name that no task before has: refused whole, no ID claimed
	next=$(spool submit -- true) || fail "submit"
	refused_list ahead.yaml \
	    "$(printf -- '- {command: [echo, a], after: [b]}\n- {name: b, command: [echo, b]}\n')" \
	    '^ahead.yaml: line 1, column 32: task 1 of the list: after: no task before this one in the list is named "b"'
	printf '%s\n' '- {name: a, command: [echo, a]}' \
	    '- {command: [echo, b], after: [A]}' > "$T/typo.yaml"
	spool submit "$T/typo.yaml" > "$T/out" 2>&1 && fail "a list naming no task before was taken"
	assert_match 'typo.yaml: line 2, column 32: task 2 of the list: after: no task before this one in the list is named "A"' \
	    "$(cat "$T/out")" "spool submit's refusal"
	assert_eq $((next + 1)) "$(spool submit -- true)" \
	    "the next ID: the refused lists claimed none"
	fs_umount
}

# Receipts live in spoolfs's memory: beyond 1 MiB of them (lists of
# 10,000 tasks, about 60 KB of IDs each) the oldest are forgotten, the
# newest kept; their tasks are not affected.
test_fuse_receipts_of_lists_are_forgotten_beyond_a_budget() {
	local i total
	new_spool
	fs_mount	# no spoold: the tasks stay queued in incoming/
	for i in $(seq 10000); do
		echo '- {command: "true"}'
	done > "$T/list.yaml"
	for i in $(seq 20); do
		cp "$T/list.yaml" "$MNT/submit/l$i.yaml" ||
		    fail "submitting list $i failed"
	done
	[ -e "$MNT/submit/l1.yaml" ] && fail "the oldest receipt is kept"
	assert_eq 10000 "$(wc -l < "$MNT/submit/l20.yaml")" "the newest receipt"
	assert_eq "190001 200000" "$(sed -n '1p;$p' "$MNT/submit/l20.yaml" |
	    paste -sd' ')" "its first and last IDs"
	total=$(cat "$MNT"/submit/* | wc -c)
	[ "$total" -le 1048576 ] || fail "receipts kept: $total bytes"
	[ "$total" -gt $((1048576 - 80000)) ] ||
	    fail "receipts kept: only $total bytes"
	# the tasks of a forgotten receipt are there all the same
	assert_eq 20 "$(ls "$SPOOL/incoming" | grep -c '\.bundle$')" "bundles"
	assert_match "^count: 10000\$" "$(cat "$SPOOL/incoming/1.bundle")" \
	    "the first list's bundle"
	fs_umount
}

test_fuse_malformed_submission_changes_nothing() {
	new_spool
	start_spoold --local 1
	fs_mount
	before=$(spool submit -- true)
	ls "$SPOOL/incoming" > "$T/incoming.before"
	# close(2) fails with EINVAL; the reason is beside it, nothing else
	assert_eq EINVAL "$($FUSETOOL errno write "$MNT/submit/bad.yaml" \
	    "$(printf 'comand: [sleep, 1]\n')")" "close of a malformed task"
	[ -e "$MNT/submit/bad.yaml" ] && fail "a refused file stayed"
	why=$(cat "$MNT/submit/bad.yaml.why") || fail "no .why"
	assert_match '^bad.yaml: line 1, column 1: unknown key "comand"' "$why" \
	    "the reason"
	# programs that check close(2) say so (coreutils, Python, cp, tee) ...
	if /bin/echo 'command: [sleep, 1' > "$MNT/submit/b2" 2>"$T/err"; then
		fail "a YAML syntax error was submitted"
	fi
	assert_match "Invalid argument" "$(cat "$T/err")" "/bin/echo's error"
	assert_match "^b2: line 2" "$(cat "$MNT/submit/b2.why")"
	printf 'cores: 2\n' > "$T/nocmd.yaml"
	if cp "$T/nocmd.yaml" "$MNT/submit/" 2>"$T/err"; then
		fail "cp of a task without a command succeeded"
	fi
	assert_match "Invalid argument" "$(cat "$T/err")" "cp's error"
	assert_match "^nocmd.yaml: no command" "$(cat "$MNT/submit/nocmd.yaml.why")"
	# ... the shell ignores the close of its own redirections: the
	# receipt is missing and the reason is beside it
	echo 'cores: lots' > "$MNT/submit/b3"
	if cat "$MNT/submit/b3" 2>/dev/null; then fail "b3 has a receipt"; fi
	assert_match "^b3: " "$(cat "$MNT/submit/b3.why")"
	# nothing written (touch, : >): refused when the file is released
	: > "$MNT/submit/e" || fail "creating an empty file failed"
	wait_for 10 test -e "$MNT/submit/e.why" || fail "no e.why"
	assert_match "empty task file" "$(cat "$MNT/submit/e.why")"
	assert_eq EFBIG "$($FUSETOOL errno write "$MNT/submit/big" @1048577)" \
	    "a task file over 1 MiB"
	assert_match "larger than" "$(cat "$MNT/submit/big.why")"
	assert_eq EINVAL "$($FUSETOOL errno create "$MNT/submit/z.why")" \
	    ".why names are reserved"
	# no ID was used, nothing reached incoming/ or rejected/
	after=$(spool submit -- true)
	assert_eq $((before + 1)) "$after" "next ID after refusals"
	spool wait "$before" "$after" || fail "the good tasks failed"
	dir_empty "$SPOOL/rejected" || fail "rejected/: $(ls "$SPOOL/rejected")"
	# a correct resubmission under the name clears its reason
	echo 'echo fixed' > "$MNT/submit/b2" || fail "fixed b2 refused"
	[ -e "$MNT/submit/b2.why" ] && fail "stale b2.why kept"
	# a dot name is held until renamed; the rename submits
	printf 'echo dotted\n' > "$MNT/submit/.d" || fail "writing .d failed"
	[ "$(cat "$MNT/submit/.d")" = "echo dotted" ] || fail ".d not held"
	mv "$MNT/submit/.d" "$MNT/submit/d" || fail "rename submit failed"
	d=$(cat "$MNT/submit/d")
	spool wait "$d" || fail "dotted task failed"
	assert_eq dotted "$(task_stdout "$d")"
	printf 'cores: lots\n' > "$MNT/submit/.e" || fail "writing .e failed"
	assert_eq EINVAL "$($FUSETOOL errno rename "$MNT/submit/.e" \
	    "$MNT/submit/e2")" "rename of a malformed task"
	assert_match "^e2: " "$(cat "$MNT/submit/e2.why")"
	fs_umount
}

# A reason (NAME.why in submit/) is read and removed, never written:
# renaming it, to a plain name or to another .why, is EINVAL as other
# writes to it are; it stays where it was.
test_fuse_reason_is_not_renamed() {
	new_spool
	fs_mount
	echo 'cores: lots' > "$MNT/submit/b" 2>/dev/null
	wait_for 10 test -e "$MNT/submit/b.why" || fail "no b.why"
	assert_eq EINVAL "$($FUSETOOL errno rename "$MNT/submit/b.why" \
	    "$MNT/submit/c")" "rename of a reason to a plain name"
	assert_eq EINVAL "$($FUSETOOL errno rename "$MNT/submit/b.why" \
	    "$MNT/submit/c.why")" "rename of a reason to another reason"
	[ -e "$MNT/submit/c" ] && fail "c appeared"
	[ -e "$MNT/submit/c.why" ] && fail "c.why appeared"
	assert_match "^b: " "$(cat "$MNT/submit/b.why")" "the reason, still there"
	rm "$MNT/submit/b.why" || fail "rm of a reason"
	fs_umount
}

test_fuse_blocking_read_released_by_completion() {
	new_spool
	start_spoold --local 1
	fs_mount
	id=$(gated_task 1)
	wait_for 20 mnt_state_is "$id" running || fail "task never ran"
	cat "$MNT/tasks/$id/result" > "$T/result" 2>"$T/err" &
	reader=$!
	wait_for 10 proc_sleeping $reader || fail "reader not blocked"
	# still waiting, nothing read: the task is still running
	kill -0 $reader 2>/dev/null || fail "reader returned early: $(cat "$T/err")"
	[ -s "$T/result" ] && fail "result read before the task ended"
	assert_eq 0 "$(stat -c %s "$MNT/tasks/$id/result")" "size while running"
	touch "$T/go.1"
	wait_for 20 not_running $reader || fail "reader not released"
	wait $reader || fail "reader failed: $(cat "$T/err")"
	cmp "$T/result" "$SPOOL/tasks/0/$id/result" || fail "wrong bytes"
	assert_match "^state: done" "$(grep ^state: "$T/result")"
	assert_eq "$(wc -c < "$T/result")" "$(stat -c %s "$MNT/tasks/$id/result")" \
	    "size once done"
	assert_eq "out 1" "$(cat "$MNT/tasks/$id/stdout")"
	fs_umount
}

test_fuse_nonblock_read() {
	new_spool
	start_spoold --local 1
	fs_mount
	id=$(gated_task 1)
	wait_for 20 mnt_state_is "$id" running || fail "task never ran"
	assert_eq EAGAIN "$($FUSETOOL nonblock "$MNT/tasks/$id/result")" \
	    "O_NONBLOCK read of an unfinished result"
	touch "$T/go.1"
	wait_for 20 mnt_state_is "$id" done || fail "task did not finish"
	assert_match "^id: $id" "$($FUSETOOL nonblock "$MNT/tasks/$id/result")" \
	    "O_NONBLOCK read once done"
	fs_umount
}

test_fuse_interrupt_cancels_the_read_not_the_task() {
	new_spool
	start_spoold --local 1
	fs_mount
	id=$(gated_task 1)
	wait_for 20 mnt_state_is "$id" running || fail "task never ran"
	$FUSETOOL intread "$MNT/tasks/$id/result" "$T/ready" > "$T/int" 2>&1 &
	reader=$!
	wait_for 10 test -e "$T/ready" || fail "reader did not start"
	wait_for 10 proc_sleeping $reader || fail "reader not blocked"
	kill -INT $reader
	wait_for 10 not_running $reader || fail "SIGINT did not end the read"
	rc=0
	wait $reader || rc=$?
	assert_eq 3 "$rc" "reader exit (3: KeyboardInterrupt)"
	assert_eq interrupted "$(cat "$T/int")"
	# Ctrl-C in a shell: cat dies of SIGINT, the task goes on
	rc=0
	timeout -s INT 1 cat "$MNT/tasks/$id/result" > /dev/null 2>&1 || rc=$?
	assert_eq 124 "$rc" "timeout -s INT cat"
	assert_eq running "$(cat "$MNT/tasks/$id/state")" "task after interrupts"
	touch "$T/go.1"
	assert_match "state: done" "$(cat "$MNT/tasks/$id/result")"
	fs_umount
}

test_fuse_poll_wakes_on_state_change() {
	new_spool
	start_spoold --local 1
	fs_mount
	id=$(gated_task 1)
	wait_for 20 mnt_state_is "$id" running || fail "task never ran"
	$FUSETOOL pollstate "$MNT/tasks/$id/state" 60 > "$T/poll" 2>&1 &
	poller=$!
	$FUSETOOL pollresult "$MNT/tasks/$id/result" 60 > "$T/pollr" 2>&1 &
	rpoller=$!
	wait_for 10 test -s "$T/poll" || fail "poller did not read"
	wait_for 10 proc_sleeping $poller || fail "poller not waiting"
	wait_for 10 proc_sleeping $rpoller || fail "result poller not waiting"
	assert_eq running "$(head -1 "$T/poll")" "first state read"
	touch "$T/go.1"
	wait_for 20 not_running $poller || fail "poll not woken"
	wait $poller || fail "poller: $(cat "$T/poll")"
	assert_eq done "$(grep -v -e wakeups -e final-poll "$T/poll" | tail -1)"
	# woken by changes only: running -> (finishing) -> done
	n=$(sed -n 's/^wakeups //p' "$T/poll")
	[ "$n" -ge 1 ] && [ "$n" -le 2 ] || fail "$n wakeups: $(cat "$T/poll")"
	assert_eq "final-poll hup" "$(grep final-poll "$T/poll")" \
	    "poll after a final state"
	wait_for 20 not_running $rpoller || fail "result poll not woken"
	wait $rpoller || fail "result poller: $(cat "$T/pollr")"
	assert_eq readable "$(head -1 "$T/pollr")"
	assert_match "^state: done" "$(grep ^state "$T/pollr")"
	fs_umount
}

# An ID whose "rejected" result spoold owes but has not written yet
# (accepting/FIRST.rejected) shows as rejected, in its state file and
# in rejected/: it was "unknown" until the result was written.  Its
# result is still to come: a read of it waits (O_NONBLOCK: EAGAIN), and
# its state file reports the end (POLLHUP) only once it is written.
test_fuse_owed_rejection_shows_as_rejected() {
	local id rpoller
	new_spool
	refuse_with_its_result_owed
	stop_spoold
	fs_mount
	assert_eq rejected "$(cat "$MNT/tasks/$id/state")" "its state"
	assert_eq "$id" "$(ls "$MNT/rejected")" "rejected/"
	assert_eq "" "$(ls "$MNT/submitted")" "submitted/"
	assert_eq EAGAIN "$($FUSETOOL nonblock "$MNT/tasks/$id/result")" \
	    "O_NONBLOCK read of the owed result"
	$FUSETOOL pollstate "$MNT/tasks/$id/state" 0 > "$T/poll" 2>&1 ||
	    fail "pollstate: $(cat "$T/poll")"
	assert_eq "final-poll none" "$(grep final-poll "$T/poll")" \
	    "poll of the state file before the result"
	# the notebook client waits for the result, not only the word
	timeout 60 python3 -c "
import sys
sys.path.insert(0, '$(dirname "${BASH_SOURCE[0]}")/../../python')
import ckspool
f = ckspool.Client('$MNT').future($id)
print(f.state, f.done())
try:
    f.record(timeout=1)
except ckspool.TimeoutError:
    print('timeout')
" > "$T/py" 2>&1 || fail "python: $(cat "$T/py")"
	assert_eq "rejected False timeout" "$(echo $(cat "$T/py"))" \
	    "the python client before the result"
	$FUSETOOL pollresult "$MNT/tasks/$id/result" 60 > "$T/pollr" 2>&1 &
	rpoller=$!
	wait_for 10 proc_sleeping $rpoller || fail "result poller not waiting"
	start_spoold	# no fault: it writes what is owed
	wait_for 20 not_running $rpoller || fail "result poll not woken"
	wait $rpoller || fail "result poller: $(cat "$T/pollr")"
	assert_eq readable "$(head -1 "$T/pollr")"
	assert_match "uid 4242 in the record" "$(grep ^message "$T/pollr")" \
	    "its result"
	$FUSETOOL pollstate "$MNT/tasks/$id/state" 0 > "$T/poll" 2>&1 ||
	    fail "pollstate: $(cat "$T/poll")"
	assert_eq "final-poll hup" "$(grep final-poll "$T/poll")" \
	    "poll of the state file once the result is written"
	stop_spoold
	fs_umount
}

# A dropped file being accepted is accepting/ID.drop.NAME whenever its
# name fits (spoold/accept.c), not only accepting/ID.drop: spoolfs knew
# only the latter and showed such a task as unknown until its spec was
# written.  Placed by hand, as a spoold stopped mid-acceptance leaves it.
test_fuse_dropped_file_being_accepted_is_submitted() {
	local id
	new_spool
	id=$(spool submit -- true) || fail "submit"	# claims the ID
	rm "$SPOOL/incoming/$id.bundle"
	printf 'command: echo dropped\n' > "$SPOOL/accepting/$id.drop.job.yaml"
	fs_mount
	assert_eq submitted "$(cat "$MNT/tasks/$id/state")" "its state"
	assert_eq "$id" "$(ls "$MNT/submitted")" "submitted/"
	mv "$SPOOL/accepting/$id.drop.job.yaml" "$SPOOL/accepting/$id.drop"
	wait_for 10 mnt_state_is "$id" submitted ||
	    fail "ID.drop: $(cat "$MNT/tasks/$id/state")"
	fs_umount
}

test_fuse_tail_follows_running_output() {
	new_spool
	start_spoold --local 1
	fs_mount
	# (err1 before line1: once tail has line1, err1 is in its file; the
	# other way round, a slow task could be read between the two)
	id=$(spool submit -- sh -c "echo err1 >&2; echo line1; \
while [ ! -e '$T/go.1' ]; do sleep 0.05; done; echo line2")
	wait_for 20 mnt_state_is "$id" running || fail "task never ran"
	tail -f "$MNT/tasks/$id/stdout" > "$T/tail" 2>"$T/tail.err" &
	tailer=$!
	wait_for 20 grep -qx line1 "$T/tail" || fail "tail -f: $(cat "$T/tail.err")"
	assert_eq running "$(cat "$MNT/tasks/$id/state")" "while following"
	assert_eq err1 "$(cat "$MNT/tasks/$id/stderr")" "stderr so far"
	touch "$T/go.1"
	wait_for 20 grep -qx line2 "$T/tail" || fail "tail -f missed line2"
	kill $tailer
	wait $tailer 2>/dev/null
	assert_eq "line1
line2" "$(cat "$T/tail")" "followed output"
	fs_umount
}

test_fuse_cancel_and_steering() {
	new_spool
	start_spoold --local 1
	fs_mount
	id=$(gated_task 1)
	wait_for 20 mnt_state_is "$id" running || fail "task never ran"
	ls "$MNT/running" > "$T/running"
	assert_eq "$id" "$(cat "$T/running")" "ls running/"
	assert_eq "../tasks/$id" "$(readlink "$MNT/running/$id")"
	assert_eq running "$(cat "$MNT/running/$id/state")" "through the link"
	# workers: one directory each, with resources and load
	wid=$(ls "$MNT/workers")
	assert_match "^local-1-" "$wid" "workers/"
	assert_eq up "$(cat "$MNT/workers/$wid/state")"
	assert_match "^cores: [0-9]" "$(grep ^cores: "$MNT/workers/$wid/info")"
	wait_for 10 worker_status_running "$wid" 1 ||
		fail "status: $(cat "$MNT/workers/$wid/status")"
	# (spoold publishes the summary a moment after the worker's status)
	wait_for 10 grep -q "^workers: 1" "$MNT/summary" ||
		fail "summary: $(cat "$MNT/summary")"
	# nothing finished yet: the rate (tasks a second, last minute) is 0
	assert_eq "rate: 0.00" "$(grep ^rate: "$MNT/summary")" "summary's rate"
	# steering errors
	assert_eq EINVAL "$($FUSETOOL errno write "$MNT/tasks/$id/control" \
	    stop)" "unknown control word"
	assert_eq EACCES "$($FUSETOOL errno read "$MNT/tasks/$id/control")" \
	    "reading control"
	echo cancel > "$MNT/tasks/$id/control" || fail "cancel write failed"
	wait_for 20 mnt_state_is "$id" cancelled || fail "not cancelled"
	assert_eq cancelled "$(field "$id" reason)" "reason"
	# one task ended within the minute: 1/60 a second
	wait_for 10 mnt_summary_has "rate: 0.02" ||
		fail "summary's rate: $(grep ^rate: "$MNT/summary")"
	assert_eq "$id" "$(ls "$MNT/cancelled")" "ls cancelled/"
	[ -e "$MNT/running/$id" ] && fail "still in running/"
	[ -e "$MNT/tasks/$id/control" ] && fail "a final task has a control file"
	fs_umount
}

# A lookup of tasks/ID past the last claim spoolfs knows of reads the
# one claim that would come next (a readlink), and refreshes the view
# only if that claim exists: an ID never claimed, looked up again and
# again, costs no rescan of the spool each time (a refresh stats the
# spool's directories: counted by CKSPOOL_FSOP_STATS).  An ID claimed
# since is still found at once.
test_fuse_lookups_past_the_claims_do_not_refresh_each_time() {
	local i n=400 stats readlinks id
	new_spool
	CKSPOOL_FSOP_STATS=$T/ops fs_mount
	for ((i = 0; i < n; i++)); do
		[ -e "$MNT/tasks/99999999" ] && fail "tasks/99999999 exists"
	done
	id=$(spool submit -- true) || fail "submit"
	[ -e "$MNT/tasks/$id" ] || fail "tasks/$id, just claimed, not found"
	fs_umount
	stats=$(fsop_count stat "$T"/ops.spoolfs.*)
	readlinks=$(fsop_count readlink "$T"/ops.spoolfs.*)
	note "$n lookups of tasks/99999999: $stats stats, $readlinks readlinks"
	# the claim that would come next, read at each lookup
	[ "$readlinks" -ge "$n" ] || fail "only $readlinks readlinks"
	# a refresh stats 5 directories of this spool: one a lookup was
	# 5 * n (2020 for 400 before the fix); now only those of the
	# refreshes of a view older than 20 ms
	[ "$stats" -lt "$n" ] ||
	    fail "$stats stats for $n lookups: the view was refreshed each time"
}

# spoolfs(1): "writing cancel (a newline and blanks around it do not
# matter)": blanks before the word too, not only after it
test_fuse_control_word_with_blanks_around_it() {
	new_spool
	start_spoold --local 1
	fs_mount
	id=$(gated_task 1)
	wait_for 20 mnt_state_is "$id" running || fail "task never ran"
	assert_eq ok "$($FUSETOOL errno write "$MNT/tasks/$id/control" \
	    "  cancel ")" "a cancel with blanks before and after it"
	wait_for 20 mnt_state_is "$id" cancelled || fail "not cancelled"
	assert_eq cancelled "$(field "$id" reason)" "reason"
	fs_umount
}

test_fuse_errno_table() {
	new_spool
	start_spoold --local 1
	fs_mount
	id=$(spool submit -- echo hi)
	spool wait "$id" || fail "task failed"
	echo 'echo r' > "$MNT/submit/r" || fail "submit r"
	t=$MNT/tasks/$id
	while read -r op path arg want; do
		[ -z "$op" ] && continue
		path=${path//@/$MNT}
		arg=${arg//@/$MNT}
		[ "$arg" = - ] && arg=""
		got=$($FUSETOOL errno "$op" "$path" "$arg")
		[ "$got" = "$want" ] || fail "$op $path $arg: $got, expected $want"
	done <<EOF
mkdir    @/new                -  EROFS
mkdir    @/tasks/$id/sub      -  EROFS
mkdir    @/submit/d           -  EPERM
mknod    @/submit/f           -  EPERM
symlink  @/submit/l           -  EPERM
symlink  @/tasks/$id/l        -  EROFS
link     @/submit/r           @/submit/r2  EPERM
create   @/tasks/$id/new      -  EROFS
create   @/summary            -  EROFS
openw    @/tasks/$id/result   -  EROFS
openw    @/tasks/$id/state    -  EROFS
append   @/submit/r           -  EACCES
unlink   @/tasks/$id/result   -  EROFS
unlink   @/summary            -  EROFS
rmdir    @/tasks/$id          -  EROFS
rmdir    @/running            -  EROFS
rename   @/tasks/$id          @/tasks/999  EROFS
rename   @/submit/r           @/tasks/r    EROFS
chmod    @/tasks/$id/result   -  EROFS
truncate @/tasks/$id/stdout   -  EROFS
open     @/tasks/999999       -  ENOENT
open     @/tasks/abc          -  ENOENT
open     @/tasks/0$id         -  ENOENT
open     @/running/$id        -  ENOENT
open     @/nosuch             -  ENOENT
open     @/workers/nosuch     -  ENOENT
open     @/tasks/$id/control  -  ENOENT
open     @/submit/nosuch      -  ENOENT
read     @/tasks/$id          -  EISDIR
openw    @/tasks              -  EISDIR
opendir  @/tasks/$id/result   -  ENOTDIR
stat     @/tasks/$id/result/x -  ENOTDIR
readlink @/tasks/$id/result   -  EINVAL
readlink @/done/$id           -  ok
create   @/submit/x.why       -  EINVAL
stat     @/tasks/$id/state    -  ok
EOF
	fs_umount
}

# spoolfs reads a task's bundle a record at a time: one that a
# submitter grew to a 1 GiB hole in incoming/ (spoold not running yet)
# is refused there without spoolfs holding it (it read it whole: a peak
# resident size of 1 GiB, or, under a limit, its exit and a dead mount).
test_fuse_task_whose_bundle_is_a_huge_hole() {
	local id hwm
	new_spool
	id=$(spool submit -- true) || fail "submit"
	truncate -s 1G "$SPOOL/incoming/$id.bundle" || fail "truncate"
	fs_mount
	cat "$MNT/tasks/$id/spec" > /dev/null 2>&1	# (its bundle is bad)
	assert_eq submitted "$(cat "$MNT/tasks/$id/state")" \
	    "state, after its spec was asked for"
	hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$FS_PID/status")
	[ -n "$hwm" ] && [ "$hwm" -lt 262144 ] ||
	    fail "spoolfs's peak resident memory: ${hwm:-?} kB"
	fs_umount
}

test_fuse_tools_on_a_finished_task() {
	new_spool
	start_spoold --local 1
	fs_mount
	id=$(spool submit --shell 'cd "$SPOOL_TASK_DIR" && echo out &&
	    echo err >&2 && head -c 5000 /dev/zero > own.dat && mkdir sub &&
	    echo x > sub/f')
	spool wait "$id" || fail "task failed"
	src=$SPOOL/tasks/0/$id
	t=$MNT/tasks/$id
	ls -l "$t" > "$T/ls" || fail "ls -l"
	for f in spec state result stdout stderr own.dat sub; do
		grep -q " $f\$" "$T/ls" || fail "ls -l lacks $f: $(cat "$T/ls")"
	done
	# attributes agree with content, for every file in the task
	find "$t" -type f > "$T/files" || fail "find"
	[ "$(wc -l < "$T/files")" -ge 7 ] || fail "find: $(cat "$T/files")"
	while read -r f; do
		assert_eq "$(wc -c < "$f")" "$(stat -c %s "$f")" "size of $f"
	done < "$T/files"
	for f in summary "tasks/$id/state" "tasks/$id/spec"; do
		assert_eq "$(wc -c < "$MNT/$f")" "$(stat -c %s "$MNT/$f")" "size of $f"
	done
	# cp -r and rsync copy the spool's bytes (plus the state file)
	cp -r "$t" "$T/copy" || fail "cp -r failed"
	diff -r -x state "$src" "$T/copy" || fail "cp -r differs"
	assert_eq done "$(cat "$T/copy/state")"
	rsync -a "$t/" "$T/rs/" || fail "rsync failed"
	diff -r -x state "$src" "$T/rs" || fail "rsync differs"
	du -sb "$t" > /dev/null || fail "du failed"
	[ "$(du -sb "$t" | cut -f1)" -ge 5000 ] || fail "du: $(du -sb "$t")"
	assert_eq "out" "$(cat "$t/stdout")"
	assert_eq "err" "$(cat "$t/stderr")"
	assert_eq x "$(cat "$t/sub/f")"
	stat "$t/sub/f" > /dev/null || fail "stat in a subdirectory"
	fs_umount
}

# The files of a finished task never change: read again, a result costs
# spoolfs one request, the open (its bytes come from the page cache, its
# names from the kernel's cache, the close sends no flush), and it can
# be mapped MAP_SHARED.  A running task's output is
# read from spoolfs at every read (direct I/O: it cannot be mapped), and
# what the kernel saw of it while it ran does not linger once it ended.
test_fuse_finished_files_are_cached_running_ones_are_not() {
	new_spool
	start_spoold --local 1
	fs_mount -d
	id=$(spool submit -- sh -c "echo begun; while [ ! -e '$T/go.1' ]; \
do sleep 0.05; done; echo out 1")
	out=$MNT/tasks/$id/stdout
	wait_for 10 grep -q begun "$out" || fail "never ran"
	assert_eq begun "$(cat "$out")" "output of the running task"
	assert_eq running "$(cat "$MNT/tasks/$id/state")" "state of the running task"
	assert_eq ENODEV "$($FUSETOOL errno mmap "$out")" \
	    "MAP_SHARED of a running task's output"
	touch "$T/go.1"
	spool wait "$id" || fail "task failed"
	assert_eq "begun
out 1" "$(cat "$out")" "output once the task ended"
	assert_eq ok "$($FUSETOOL errno mmap "$out")" "MAP_SHARED of a finished output"
	r=$MNT/tasks/$id/result
	cmp "$r" "$SPOOL/tasks/0/$id/result" || fail "the result differs"
	n=$(wc -l < "$T/spoolfs.log")
	cmp "$r" "$SPOOL/tasks/0/$id/result" || fail "the result differs when read again"
	# not counted: the release of a close, sent after it returns, and a
	# GETATTR of cmp's fstat (the kernel marks the atime stale after
	# every READ it sent, here the first cmp's)
	tail -n "+$((n + 1))" "$T/spoolfs.log" | grep -o 'opcode: [A-Z_]*' |
	    grep -Ev 'RELEASE|GETATTR' > "$T/ops"
	assert_eq "opcode: OPEN" "$(cat "$T/ops")" \
	    "the requests of reading a finished result again"
	# its state: made by spoolfs, not cached while it could change (read
	# above while running), cached once final
	assert_eq done "$(cat "$MNT/tasks/$id/state")" "state of the finished task"
	n=$(wc -l < "$T/spoolfs.log")
	assert_eq done "$(cat "$MNT/tasks/$id/state")" "state read again"
	tail -n "+$((n + 1))" "$T/spoolfs.log" | grep -o 'opcode: [A-Z_]*' |
	    grep -Ev 'RELEASE|GETATTR' > "$T/ops"
	assert_eq "opcode: OPEN" "$(cat "$T/ops")" \
	    "the requests of reading a finished task's state again"
	fs_umount
}

# ID FILE: spoolfs holds the spool's own tasks/0/ID/FILE open
backing_held() {
	ls -l "/proc/$FS_PID/fd" 2>/dev/null | grep -q " /.*/tasks/0/$1/$2\$"
}

backing_let_go() {	# ID FILE
	! backing_held "$1" "$2"
}

test_fuse_finished_files_are_opened_behind_by_the_first_read() {
	local id gone f
	new_spool
	start_spoold --local 1
	fs_mount
	id=$(spool submit -- sh -c 'echo out; echo err >&2') || fail "submit"
	gone=$(spool submit -- true) || fail "submit"
	spool wait "$id" "$gone" || fail "tasks failed"
	wait_for 10 mnt_state_is "$gone" done || fail "done not seen"
	# never read through the mount yet: the first read reaches spoolfs
	for f in result stdout stderr spec; do
		exec 7< "$MNT/tasks/$id/$f" || fail "open $f"
		backing_held "$id" "$f" &&
		    fail "$f: its file in the spool was opened before any read"
		head -c 2 <&7 > "$T/first" || fail "read $f"
		backing_held "$id" "$f" ||
		    fail "$f: its file in the spool not opened by the first read"
		assert_eq "$(head -c 2 "$SPOOL/tasks/0/$id/$f")" "$(cat "$T/first")" \
		    "the first bytes of $f"
		exec 7<&-
		wait_for 10 backing_let_go "$id" "$f" ||
		    fail "$f: still open behind after the close"
		cmp "$MNT/tasks/$id/$f" "$SPOOL/tasks/0/$id/$f" ||
		    fail "$f differs"
	done
	# gone from the spool after the kernel looked it up: the read
	# fails with EIO (not an empty file, not a wait)
	stat "$MNT/tasks/$gone/result" > /dev/null || fail "stat"
	rm "$SPOOL/tasks/0/$gone/result"
	cat "$MNT/tasks/$gone/result" > /dev/null 2> "$T/err" &&
	    fail "read a result that is gone"
	assert_match "Input/output error" "$(cat "$T/err")" "reading it"
	fs_umount
}

test_fuse_rescans_without_inotify() {
	new_spool
	start_spoold --local 1
	# changes made by other hosts reach spoolfs only by its rescans
	fs_mount --no-inotify
	id=$(gated_task 1)
	wait_for 20 mnt_state_is "$id" running || fail "running not seen"
	cat "$MNT/tasks/$id/result" > "$T/result" &
	reader=$!
	wait_for 10 proc_sleeping $reader || fail "reader not blocked"
	touch "$T/go.1"
	wait_for 20 not_running $reader || fail "reader not released"
	cmp "$T/result" "$SPOOL/tasks/0/$id/result" || fail "wrong bytes"
	assert_eq "$id" "$(ls "$MNT/done")" "done/"
	fs_umount
}

# The tasks "spool purge" removes leave the mount's listings: it took a
# final task for final for good, never looked at a shard again once all
# of its IDs were final, and listed the removed tasks, done, until it
# was mounted again.  A task that ends afterwards in the same shard is
# listed as usual.
mnt_lists() {	# the IDs in the mount's tasks/, done/ and failed/
	ls "$MNT/tasks"; ls "$MNT/done"; ls "$MNT/failed"
}

mnt_lists_no_task() {
	[ -z "$(mnt_lists)" ]
}

test_fuse_forgets_the_tasks_a_purge_removed() {
	local a b c out
	new_spool
	start_spoold --local 1
	fs_mount
	a=$(spool submit -- echo a) && b=$(spool submit -- false) ||
	    fail "submit"
	spool wait "$a" || fail "task $a"
	spool wait "$b"
	wait_for 10 mnt_state_is "$b" failed || fail "task $b not seen"
	assert_eq "$a $b" "$(ls "$MNT/tasks" | xargs)" "tasks/ before the purge"
	wait_for 10 dir_empty "$SPOOL/specs" || fail "bundles not retired"
	out=$(spool purge) || fail "purge: $out"
	assert_match "^removed 2 tasks;" "$out"
	wait_for 10 mnt_lists_no_task ||
	    fail "still listed: $(mnt_lists | xargs)"
	c=$(spool submit -- echo c) || fail "submit"
	wait_for 20 mnt_state_is "$c" done || fail "task $c not seen done"
	assert_eq "$c" "$(ls "$MNT/tasks" | xargs)" "tasks/ after the purge"
	assert_eq c "$(cat "$MNT/tasks/$c/stdout")"
	fs_umount
}

# A task "spool purge" removed is gone for good, and its state reads
# unknown for ever: a read of its result was kept unanswered for ever
# (never final), as was a read kept while the task ended and was purged
# before the mount saw it end (spoolfs stopped meanwhile here), and
# O_NONBLOCK said EAGAIN.  Each fails with ENOENT now.
test_fuse_read_of_a_purged_task_fails() {
	local a b out reader
	new_spool
	start_spoold --local 1
	fs_mount
	a=$(spool submit -- echo a) || fail "submit"
	spool wait "$a" || fail "task $a"
	wait_for 10 dir_empty "$SPOOL/specs" || fail "bundle not retired"
	out=$(spool purge) || fail "purge: $out"
	assert_match "^removed 1 task;" "$out"
	wait_for 10 mnt_state_is "$a" unknown || fail "task $a still seen"
	assert_eq ENOENT "$($FUSETOOL nonblock "$MNT/tasks/$a/result")" \
	    "O_NONBLOCK read of a purged task's result"
	timeout 20 cat "$MNT/tasks/$a/result" > /dev/null 2> "$T/err"
	assert_eq 1 $? "exit status of cat (124: the read blocked)"
	assert_match "No such file or directory" "$(cat "$T/err")"
	b=$(gated_task 1) || fail "submit"
	wait_for 20 mnt_state_is "$b" running || fail "task never ran"
	cat "$MNT/tasks/$b/result" > "$T/result" 2> "$T/err" &
	reader=$!
	wait_for 10 proc_sleeping $reader || fail "reader not blocked"
	kill -STOP "$FS_PID"
	touch "$T/go.1"
	spool wait "$b" || fail "task $b"
	wait_for 10 dir_empty "$SPOOL/specs" || fail "bundle not retired"
	out=$(spool purge) || fail "purge: $out"
	kill -CONT "$FS_PID"
	assert_match "^removed 1 task;" "$out"
	wait_for 20 not_running $reader || fail "reader not released"
	wait $reader && fail "read a purged task's result: $(cat "$T/result")"
	assert_match "No such file or directory" "$(cat "$T/err")"
	fs_umount
}

# A read through the mount of a file whose reads fail in the spool
# (EIO, as on NFS) fails with that error in the reader, not a hang or
# a crash, and spoolfs says which file failed, once while it lasts (it
# said nothing); the rest of the mount is served.
test_fuse_a_read_that_fails_is_reported_and_answered() {
	local a
	new_spool
	start_spoold --local 1
	a=$(spool submit -- echo hello) || fail "submit"
	spool wait "$a" || fail "task $a"
	CKSPOOL_FAULT="read-fails=stdout:EIO*1000" fs_mount
	timeout 20 cat "$MNT/tasks/$a/stdout" > "$T/out" 2> "$T/err"
	assert_eq 1 $? "exit status of cat (124: the read blocked)"
	assert_match "Input/output error" "$(cat "$T/err")"
	timeout 20 cat "$MNT/tasks/$a/stdout" > "$T/out" 2> "$T/err"
	assert_eq 1 $? "exit status of a second cat"
	assert_eq 1 "$(grep -cE "spoolfs: warning: read: $SPOOL/tasks/0/$a/stdout: Input/output error\$" \
	    "$T/spoolfs.log")" "spoolfs's reports: $(cat "$T/spoolfs.log")"
	assert_eq done "$(cat "$MNT/tasks/$a/state")" "its state"
	fs_umount
}

# A bundle whose header spoolfs cannot read (EIO) is reported (it was
# not), and its stage is listed again at the next refresh of the view
# until the header reads: its task is seen through the mount.  Nothing
# else lists incoming/ again soon: no spoold runs, nothing changes in
# it; only the listing of every directory each DIRSTAMP_FORCE (10)
# refreshes, which shows the task too, later (the test passed without
# the relisting when it let the header's reads fail only once).  So
# the refreshes are counted, each by a listing of specs/ that fails (a
# listing that failed is made again at the next refresh), and the task
# must be seen fewer than 10 refreshes after its header's last failed
# read (the third: the listing that found incoming/ changed, the one
# made once more after it, and one that only the relisting makes).
test_fuse_a_bundle_header_not_read_is_read_again() {
	local a refreshes
	new_spool
	a=$(spool submit -- true) || fail "submit"
	CKSPOOL_FAULT="count=all,read-fails=$a.bundle:EIO*3,list-fails=specs:EIO*1000000" \
	    fs_mount
	wait_for 30 mnt_state_is "$a" submitted ||
	    fail "task $a is $(cat "$MNT/tasks/$a/state") through the mount"
	refreshes=$(grep -c "(list specs) fails" "$T/spoolfs.log")
	echo "seen by the reader after $refreshes refreshes" >> "$T/report"
	assert_eq 3 "$(grep -c "fault injection: a read of $a.bundle fails" "$T/spoolfs.log")" \
	    "failed reads of the header"
	[ "$refreshes" -lt $((3 + 10)) ] ||
	    fail "task $a was seen after $refreshes refreshes, not at the one after its header's 3 failed reads"
	assert_match "spoolfs: warning: read: $SPOOL/incoming/$a.bundle: Input/output error\$" \
	    "$(grep -v 'fault injection' "$T/spoolfs.log")" "spoolfs's report"
	fs_umount
}

# spoolfs shows a mount point or a spool path that is not a plain path
# quoted and escaped, as any name from a user: they were printed raw.
test_fuse_quotes_a_mount_point_in_messages() {
	local m
	new_spool
	m="$T/m$(printf '\033[2J')x"
	spoolfs "$SPOOL" "$m" -f > "$T/out" 2> "$T/err" &&
	    fail "spoolfs mounted on a mount point that is not there"
	assert_eq "spoolfs: fatal: realpath: \"$T/m\\x1b[2Jx\": No such file or directory" \
	    "$(cat "$T/err")"
	spoolfs "$m" "$T" -f > "$T/out" 2> "$T/err" &&
	    fail "spoolfs mounted a spool that is not there"
	assert_eq "spoolfs: fatal: open spool: \"$T/m\\x1b[2Jx\": No such file or directory" \
	    "$(cat "$T/err")"
}

test_fuse_refuses_a_foreign_spool() {
	new_spool
	chown -R nobody "$SPOOL"
	mkdir "$T/mnt"
	if spoolfs "$SPOOL" "$T/mnt" -f 2>"$T/err"; then
		fail "spoolfs ran on another user's spool"
	fi
	assert_match "must run as the spool's owner" "$(cat "$T/err")"
	is_mounted "$T/mnt" && fail "mounted anyway"
	return 0
}

test_fuse_leaves_when_the_spool_is_removed() {
	new_spool
	fs_mount
	ls "$MNT/tasks" > /dev/null || fail "mount not answering"
	rm -rf "$SPOOL"
	# it checks every 10 s, idle or not
	wait_for 30 not_running "$FS_PID" || fail "spoolfs stayed"
	fs_exited_clean
	assert_match "the spool is gone; unmounting" "$(cat "$T/spoolfs.log")"
}

# DESIGN.md invariant 7: "spool shutdown" unmounts the spool's mounts,
# and returns once those of its host have left (at once with inotify,
# which sees the mark replaced; within spoolfs's 10 s check without); a
# reader waiting on a result is released with ENOTCONN.  A mount made
# after a shutdown, or one whose spoold only stopped (SIGTERM: a
# restart), stays; the next shutdown takes it, without a spoold too
# (spool shutdown then leaves the mark itself).  Before, with no spoold
# running, spool shutdown refused ("nothing to shut down", exit 1) and
# the mount stayed.
test_fuse_spool_shutdown_unmounts_the_mounts() {
	new_spool
	start_spoold --local 1
	fs_mount -d
	id=$(gated_task 1)
	wait_for 20 mnt_state_is "$id" running || fail "task never ran"
	cat "$MNT/tasks/$id/result" > "$T/result" 2>"$T/err" &
	reader=$!
	wait_for 10 fs_took_read $reader || fail "the reader's READ never reached spoolfs"
	spool shutdown > "$T/out" 2>&1 || fail "shutdown: $(cat "$T/out")"
	is_mounted "$MNT" && fail "spool shutdown returned with the mount there"
	assert_match "^spool: 1 mount of the spool on this host unmounted$" \
	    "$(cat "$T/out")"
	assert_match "stopping: the spool's mounts unmount within 10 s \(state/shutdown, generation 1\)" \
	    "$(cat "$T/spoold.log")"
	assert_eq 1 "$(sed -n 's/^generation: //p' "$SPOOL/state/shutdown")" \
	    "state/shutdown's generation"
	# it checks every 10 s, idle or not
	wait_for 30 not_running "$FS_PID" || fail "spoolfs stayed after spool shutdown"
	fs_exited_clean
	assert_match "$SPOOL was shut down \(spool shutdown: state/shutdown, generation 1\); unmounting" \
	    "$(cat "$T/spoolfs.log")"
	wait_for 10 not_running $reader || fail "reader not released"
	wait $reader && fail "the reader read a result of an unfinished task"
	assert_match "Transport endpoint is not connected" "$(cat "$T/err")"

	# mounted after it, spoold stopped by SIGTERM: a check later, there
	start_spoold
	fs_mount
	stop_spoold
	$FUSETOOL opened "$SPOOL/state/shutdown" 25 ||
	    fail "spoolfs did not look at state/shutdown within 25 s"
	is_mounted "$MNT" || fail "a mount made after the shutdown left"
	assert_eq "$id" "$(ls "$MNT/tasks")" "the mount's tasks/"
	kill -0 "$FS_PID" || fail "spoolfs left"

	# the next shutdown takes it, though no spoold runs
	spool shutdown > "$T/out" 2>&1 || fail "shutdown 2: $(cat "$T/out")"
	is_mounted "$MNT" && fail "spool shutdown 2 returned with the mount there"
	assert_eq "spool: spoold is not running on $SPOOL: no worker job cancelled; the spool's mounts are told to unmount (state/shutdown, generation 2)
spool: 1 mount of the spool on this host unmounted" "$(cat "$T/out")" \
	    "what spool shutdown 2 said"
	assert_eq "" "$(ls "$SPOOL/control")" "requests left for a spoold"
	wait_for 30 not_running "$FS_PID" || fail "spoolfs stayed after shutdown 2"
	fs_exited_clean
	assert_match "generation 2\); unmounting" "$(cat "$T/spoolfs.log")"
	touch "$T/go.1"
}

# A mount of this host that does not leave (its spoolfs stopped, as a
# hung one would be; its mount point has a space, which mountinfo
# escapes) is named by "spool shutdown" at its timeout, exit status 3,
# after the verdict on the jobs; it leaves once it runs again.  Another
# mount of the spool leaves (at once with inotify; without, at its
# check within 10 s: so a timeout of 14 s); one of another spool stays.
test_fuse_spool_shutdown_names_a_mount_that_stays() {
	local hung="$T/mnt b" other=$T/other
	new_spool
	start_spoold --local 1
	env SPOOL="$other" spool init > /dev/null || fail "spool init $other"
	mkdir -p "$T/mnt2" "$hung"
	spoolfs "$other" "$T/mnt2" -f >> "$T/spoolfs2.log" 2>&1 &
	fs2=$!
	track $fs2
	spoolfs "$SPOOL" "$hung" -f >> "$T/spoolfs3.log" 2>&1 &
	fs3=$!
	track $fs3
	wait_for 10 is_mounted "$T/mnt2" || fail "the other spool did not mount"
	wait_for 10 is_mounted "$T/mnt\\\\040b" || fail "$hung did not mount"
	fs_mount
	kill -STOP "$fs3"
	rc=0
	spool shutdown --timeout 14 > "$T/out" 2>&1 || rc=$?
	kill -CONT "$fs3"
	assert_eq 3 "$rc" "spool shutdown's exit status: $(cat "$T/out")"
	assert_eq "spool: spoold stopped; no worker job left
spool: \"$hung\" is still mounted after 14 s" "$(sed 1d "$T/out")" "what it said"
	is_mounted "$MNT" && fail "the mount that was not stopped is still there"
	fs_exited_clean
	wait_for 30 not_running "$fs3" || fail "spoolfs of $hung stayed once continued"
	is_mounted "$T/mnt\\\\040b" && fail "$hung still mounted"
	is_mounted "$T/mnt2" || fail "the other spool's mount left"
	fusermount3 -u "$T/mnt2" || fail "fusermount3 -u $T/mnt2"
	wait_for 30 not_running "$fs2" || fail "the other spoolfs did not exit"
}

# A mark that cannot be read when spoolfs mounts (here a symlink, which
# O_NOFOLLOW refuses) is read again at the next check, and the
# generation found then is the mount's own, not a shutdown after it:
# taking a failed read as generation 0 would unmount at that check.
test_fuse_a_shutdown_mark_unreadable_at_the_mount_is_read_again() {
	new_spool
	printf 'generation: 3\n' > "$T/mark"
	ln -s "$T/mark" "$SPOOL/state/shutdown"
	fs_mount
	assert_match "read: $SPOOL/state/shutdown: Too many levels of symbolic links \(read again at the next check\)" \
	    "$(cat "$T/spoolfs.log")"
	cp "$T/mark" "$SPOOL/state/.mark" && mv -f "$SPOOL/state/.mark" "$SPOOL/state/shutdown" ||
	    fail "could not put the mark in place"
	$FUSETOOL opened "$SPOOL/state/shutdown" 25 ||
	    fail "spoolfs did not look at state/shutdown within 25 s"
	# answered after that check (one loop): the mount is still there
	ls "$MNT/submit" > /dev/null || fail "the mount no longer answers"
	is_mounted "$MNT" || fail "the mount left"
	assert_match "recovered: shutmark" "$(cat "$T/spoolfs.log")"
	assert_no_match "unmounting" "$(cat "$T/spoolfs.log")"
	fs_umount
}

test_fuse_unmount_while_a_reader_blocks() {
	new_spool
	start_spoold --local 1
	fs_mount
	id=$(gated_task 1)
	wait_for 20 mnt_state_is "$id" running || fail "task never ran"
	cat "$MNT/tasks/$id/result" > "$T/result" 2>"$T/err" &
	reader=$!
	wait_for 10 proc_sleeping $reader || fail "reader not blocked"
	# busy: a plain unmount is refused, the reader goes on waiting
	if fusermount3 -u "$MNT" 2>"$T/umount"; then
		fail "unmounted under a blocked reader"
	fi
	assert_match "busy" "$(cat "$T/umount")"
	kill -0 $reader || fail "reader died"
	# lazy: detached at once; the reader still gets its result
	fusermount3 -u -z "$MNT" || fail "lazy unmount failed"
	is_mounted "$MNT" && fail "still in /proc/mounts"
	touch "$T/go.1"
	wait_for 20 not_running $reader || fail "reader not released"
	wait $reader || fail "reader failed: $(cat "$T/err")"
	cmp "$T/result" "$SPOOL/tasks/0/$id/result" || fail "wrong bytes"
	# the last file closed, spoolfs leaves by itself
	fs_exited_clean

	# SIGTERM to spoolfs while a reader waits: the read fails at once
	fs_mount -d
	id=$(gated_task 2)
	wait_for 20 mnt_state_is "$id" running || fail "task 2 never ran"
	cat "$MNT/tasks/$id/result" > "$T/result2" 2>"$T/err2" &
	reader=$!
	wait_for 10 proc_sleeping $reader || fail "reader 2 not blocked"
	# ... in spoolfs: the reader sleeps as soon as its READ is queued,
	# and a READ spoolfs has not taken yet is answered by the kernel
	# when the connection goes (ECONNABORTED), not by spoolfs
	wait_for 10 fs_took_read $reader || fail "reader 2's READ never reached spoolfs"
	kill -TERM "$FS_PID"
	wait_for 10 not_running $reader || fail "reader 2 not released"
	wait $reader && fail "reader 2 read a result of a running task"
	assert_match "Transport endpoint is not connected" "$(cat "$T/err2")"
	fs_exited_clean
	touch "$T/go.2"
}

# Several shells at once for HAMMER_SECONDS (60 by default): writers
# submit, readers block on results and check every byte of stdout,
# listers walk the tree, pollers poll states.  Then every task must be
# done with its own output, spoolfs must still answer, hold no more
# descriptors than before, and exit cleanly when unmounted.
hammer_writer() {	# W END
	local n=0
	while [ "$(date +%s)" -lt "$2" ]; do
		n=$((n + 1))
		printf 'printf "w%s-%s\\n"\n' "$1" "$n" > "$MNT/submit/w$1-$n" ||
			{ echo "write w$1-$n failed" >> "$T/hammer.err"; return; }
		echo "$(cat "$MNT/submit/w$1-$n") w$1-$n" >> "$T/ids.$1"
		rm "$MNT/submit/w$1-$n"
	done
}

hammer_reader() {	# W END: block on each result of writer W, check it
	local line id want k=1
	while :; do
		line=$(sed -n "${k}p" "$T/ids.$1" 2>/dev/null)
		if [ -z "$line" ]; then
			[ "$(date +%s)" -ge "$2" ] && return
			sleep 0.05
			continue
		fi
		id=${line% *}
		want=${line#* }
		grep -q '^state: done' "$MNT/tasks/$id/result" ||
			echo "task $id: $(cat "$MNT/tasks/$id/result")" >> "$T/hammer.err"
		[ "$(cat "$MNT/tasks/$id/stdout")" = "$want" ] ||
			echo "task $id: stdout '$(cat "$MNT/tasks/$id/stdout")', want $want" \
			    >> "$T/hammer.err"
		k=$((k + 1))
	done
}

hammer_lister() {	# END
	while [ "$(date +%s)" -lt "$1" ]; do
		ls -l "$MNT/tasks" "$MNT/running" "$MNT/done" "$MNT/queued" \
		    "$MNT/workers" > /dev/null 2>>"$T/hammer.lserr"
		cat "$MNT/summary" > /dev/null || echo "summary failed" >> "$T/hammer.err"
		find "$MNT/tasks" -maxdepth 2 -name state 2>/dev/null |
		    head -50 | xargs -r cat > /dev/null 2>&1
		stat "$MNT"/tasks/*/result > /dev/null 2>&1
	done
}

hammer_poller() {	# END
	local id
	while [ "$(date +%s)" -lt "$1" ]; do
		id=$(spool submit -- sh -c 'echo polled')
		$FUSETOOL pollstate "$MNT/tasks/$id/state" 60 > "$T/p.$id" ||
			echo "poll $id: $(cat "$T/p.$id")" >> "$T/hammer.err"
		grep -qx done "$T/p.$id" || echo "poll $id: $(cat "$T/p.$id")" \
		    >> "$T/hammer.err"
	done
}

test_fuse_hammer() {
	new_spool
	start_spoold --local 2
	fs_mount
	fds_before=$(ls "/proc/$FS_PID/fd" | wc -l)
	end=$(( $(date +%s) + ${HAMMER_SECONDS:-60} ))
	pids=""
	for w in 1 2 3; do
		hammer_writer $w $end & pids="$pids $!"
		hammer_reader $w $end & pids="$pids $!"
	done
	hammer_lister $end & pids="$pids $!"
	hammer_lister $end & pids="$pids $!"
	hammer_poller $end & pids="$pids $!"
	for p in $pids; do
		wait_for $(( ${HAMMER_SECONDS:-60} + 120 )) not_running $p ||
			fail "a hammering shell hung: $(ps -o pid,stat,args --ppid $p)"
	done
	[ -s "$T/hammer.err" ] && fail "$(head -20 "$T/hammer.err")"
	# a listing may lose a race with a task moving between state
	# directories (ls lists it, then cannot stat it: ENOENT); any
	# other error of ls is a failure
	if grep -v ': No such file or directory$' "$T/hammer.lserr" > "$T/lserr.other"; then
		fail "listing errors other than ENOENT: $(head -5 "$T/lserr.other")"
	fi
	total=$(cat "$T"/ids.* | wc -l)
	[ "$total" -ge 30 ] || fail "only $total tasks submitted"
	echo "$total tasks submitted and checked through the mount;" \
	    "$(grep -c . "$T/hammer.lserr") listing races (ENOENT)" >> "$T/report"
	# still answering, nothing left open
	assert_match "^workers: 2" "$(grep ^workers: "$MNT/summary")"
	wait_for 10 fs_fds_at_most "$fds_before" ||
		fail "descriptors: $fds_before before, $(ls "/proc/$FS_PID/fd" | wc -l) after"
	dir_empty "$MNT/submit" || fail "submit/ not empty: $(ls "$MNT/submit")"
	fs_umount
}

# A submission by rename that the spool refuses to write (ENOSPC, as on
# a full scratch filesystem): the rename fails with the spool's errno,
# the reason is beside it, spoolfs goes on serving, and the next
# submission works.  (The entry submitted by a rename has no open
# handle: the refusal freed it, and spoolfs used to name it afterwards.)
test_fuse_rename_submission_hits_a_spool_error() {
	new_spool
	# spoolfs's first mutation (the ID claim of the first submission)
	# fails with ENOSPC; nothing after it does
	CKSPOOL_FAULT="fail-at=1:ENOSPC" fs_mount
	printf 'echo held\n' > "$MNT/submit/.held" || fail "writing .held failed"
	assert_eq ENOSPC "$($FUSETOOL errno rename "$MNT/submit/.held" \
	    "$MNT/submit/go")" "rename of a task the spool cannot take"
	is_mounted "$MNT" || fail "the mount died"
	[ -e "$MNT/submit/go" ] && fail "a refused file stayed"
	[ -e "$MNT/submit/.held" ] && fail "the held file stayed"
	assert_match "^go: .*No space left on device" \
	    "$(cat "$MNT/submit/go.why")" "the reason"
	echo 'echo after' > "$MNT/submit/later" || fail "the next submission failed"
	assert_match '^[0-9]+$' "$(cat "$MNT/submit/later")" "its receipt"
	[ -e "$MNT/submit/later.why" ] && fail "later.why: $(cat "$MNT/submit/later.why")"
	fs_umount
}

# write_and_die PATH TEXT SIGNAL: a writer that writes TEXT into PATH
# and dies of SIGNAL (SIGKILL, SIGINT) before it closes it
write_and_die() {
	python3 -c 'import os, signal, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
os.write(fd, sys.argv[2].encode())
sig = getattr(signal, sys.argv[3])
if sig != signal.SIGKILL:
    signal.signal(sig, signal.SIG_DFL)
os.kill(os.getpid(), sig)' "$@"
}

# A writer killed before it closed the file (SIGKILL, Ctrl-C, the OOM
# killer, a crash): the kernel closes its files as it dies, which looks
# like its own close, but what it wrote may be cut anywhere (here before
# the directory that "rm -rf" was to be given).  Nothing is submitted;
# NAME.why says so; under a "." name, held, the rename that would submit
# it fails (EINVAL).  A writer that exits without closing is not
# killed: what it wrote is submitted.
test_fuse_killed_writer_submits_nothing() {
	local rc=0
	new_spool
	fs_mount
	write_and_die "$MNT/submit/killed" \
	    "$(printf '#!/bin/sh\necho first half\nrm -rf /tmp/scratch/')" SIGKILL ||
	    rc=$?
	assert_eq 137 "$rc" "the writer's exit status"
	wait_for 10 test -e "$MNT/submit/killed.why" || fail "no killed.why"
	assert_eq "killed: its writer was killed by signal 9 (Killed) before it closed the file" \
	    "$(cat "$MNT/submit/killed.why")" "the reason"
	[ -e "$MNT/submit/killed" ] && fail "a receipt for a killed writer"
	dir_empty "$SPOOL/incoming" || fail "submitted: $(ls "$SPOOL/incoming")"
	# SIGINT (Ctrl-C on "gen.sh > MNT/submit/job") the same
	rc=0
	write_and_die "$MNT/submit/int" "echo partial" SIGINT || rc=$?
	assert_eq 130 "$rc" "the interrupted writer's exit status"
	wait_for 10 test -e "$MNT/submit/int.why" || fail "no int.why"
	assert_match "killed by signal 2 " "$(cat "$MNT/submit/int.why")"
	dir_empty "$SPOOL/incoming" || fail "submitted: $(ls "$SPOOL/incoming")"
	# the last close is the one that submits (the opener closed before
	# anything was written, a child writes): the same when it is killed
	python3 -c 'import os, subprocess, sys
f = open(sys.argv[1], "w")
p = subprocess.Popen(["sh", "-c", "while [ ! -e \"$0\" ]; do sleep 0.05; done; "
    "printf \"echo part\"; kill -9 $$", sys.argv[2]], stdout=f)
f.close()
open(sys.argv[2], "w").close()
sys.exit(p.wait())' "$MNT/submit/child" "$T/go" && fail "the child was not killed"
	wait_for 10 test -e "$MNT/submit/child.why" || fail "no child.why"
	assert_match "killed by signal 9 " "$(cat "$MNT/submit/child.why")"
	dir_empty "$SPOOL/incoming" || fail "submitted: $(ls "$SPOOL/incoming")"
	# a "." name, held until renamed: refused at the rename
	rc=0
	write_and_die "$MNT/submit/.held" "echo partial" SIGKILL || rc=$?
	assert_eq 137 "$rc" "the held file's writer's exit status"
	wait_for 10 test -e "$MNT/submit/.held" || fail "the held file is gone"
	assert_eq EINVAL "$(python3 -c 'import errno, os, sys
try:
    os.rename(sys.argv[1], sys.argv[2])
    print("renamed")
except OSError as e:
    print(errno.errorcode[e.errno])' "$MNT/submit/.held" "$MNT/submit/renamed")" \
	    "the rename of a killed writer's file"
	assert_match "^renamed: its writer was killed by signal 9 " \
	    "$(cat "$MNT/submit/renamed.why")" "the renamed file's reason"
	dir_empty "$SPOOL/incoming" || fail "submitted: $(ls "$SPOOL/incoming")"
	# exiting without a close is no kill: submitted
	python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
os.write(fd, b"echo whole\n")
os._exit(0)' "$MNT/submit/exited" || fail "the exiting writer failed"
	assert_match '^[0-9]+$' "$(cat "$MNT/submit/exited")" "its receipt"
	[ -e "$MNT/submit/exited.why" ] && fail "exited.why: $(cat "$MNT/submit/exited.why")"
	fs_umount
}

# mounted on a relative MOUNTPOINT: SIGTERM unmounts it (spoolfs's
# working directory is / once it runs, so the path is resolved first)
test_fuse_relative_mountpoint_is_unmounted() {
	new_spool
	MNT=$T/mnt
	mkdir -p "$MNT"
	trap fs_cleanup EXIT
	(cd "$T" && exec spoolfs "$SPOOL" mnt -f) >> "$T/spoolfs.log" 2>&1 &
	FS_PID=$!
	track $FS_PID
	wait_for 10 is_mounted "$MNT" ||
		fail "spoolfs did not mount: $(tail -5 "$T/spoolfs.log")"
	ls "$MNT/tasks" > /dev/null || fail "the mount does not answer"
	kill -TERM "$FS_PID"
	fs_exited_clean
	if grep -q " $MNT " /proc/self/mountinfo; then
		fail "still in mountinfo: $(tail -3 "$T/spoolfs.log")"
	fi
	assert_match "spoolfs: $MNT: unmounted; leaving" "$(cat "$T/spoolfs.log")"
	# a MOUNTPOINT that does not exist is said, before anything is mounted
	rc=0
	(cd "$T" && spoolfs "$SPOOL" nosuch -f) 2> "$T/err" || rc=$?
	assert_eq 111 "$rc" "spoolfs on a missing mountpoint"
	assert_match "^spoolfs: .*nosuch: No such file or directory" "$(cat "$T/err")"
}

# A name submitted again is the newest receipt, whatever its first
# submission's age: with 1024 receipts and reasons kept (the most), x
# the oldest, and another submission made while x is rewritten, the
# trim after x's own submission forgets the oldest other one, not x.
test_fuse_resubmitted_receipt_is_kept() {
	local i first second
	new_spool
	fs_mount
	echo 'echo first' > "$MNT/submit/x" || fail "submitting x failed"
	first=$(cat "$MNT/submit/x")
	for i in $(seq 1023); do
		echo 'cores: x' > "$MNT/submit/b$i"
	done
	assert_eq 1024 "$(ls "$MNT/submit" | wc -l)" "kept before"
	exec 7> "$MNT/submit/x"
	echo 'echo second' >&7
	echo 'cores: x' > "$MNT/submit/other"
	exec 7>&-
	second=$(cat "$MNT/submit/x") || fail "the receipt of x is gone"
	assert_match '^[0-9]+$' "$second" "the receipt"
	[ "$second" -gt "$first" ] || fail "x's receipt is $second, first $first"
	[ -e "$MNT/submit/b1.why" ] && fail "the oldest reason was kept"
	assert_eq 1024 "$(ls "$MNT/submit" | wc -l)" "kept after"
	fs_umount
}

receipt_is_id() {	# FILE
	grep -Eqx '[0-9]+' "$1"
}

# Submitted at the last close (the opener closed before a child wrote
# the text, as Python's Popen(..., stdout=f); f.close() does): the task
# runs in the opener's working directory all the same.
test_fuse_submission_at_release_runs_in_the_writers_directory() {
	local id
	new_spool
	start_spoold --local 1
	fs_mount
	mkdir "$T/wd"
	python3 -c 'import os, subprocess, sys
os.chdir(sys.argv[3])
f = open(sys.argv[1], "w")
p = subprocess.Popen(["sh", "-c", "while [ ! -e \"$0\" ]; do sleep 0.05; done; "
    "echo pwd", sys.argv[2]], stdout=f)
f.close()
open(sys.argv[2], "w").close()
sys.exit(p.wait())' "$MNT/submit/popen" "$T/go" "$T/wd" || fail "the writer failed"
	wait_for 10 receipt_is_id "$MNT/submit/popen" ||
		fail "no receipt: $(cat "$MNT/submit/popen.why" 2>&1)"
	id=$(cat "$MNT/submit/popen")
	spool wait "$id" || fail "task $id failed"
	assert_eq "$T/wd" "$(task_stdout "$id")" "the task's working directory"
	fs_umount
}

# NAME.why must be a name too: a name of more than NAME_MAX - 4 (251)
# bytes is ENAMETOOLONG at create and rename; one of 251 has its reason
# readable
test_fuse_long_names() {
	local n251 n252
	new_spool
	fs_mount
	n251=$(printf 'n%.0s' $(seq 251))
	n252=${n251}x
	assert_eq ENAMETOOLONG "$($FUSETOOL errno write "$MNT/submit/$n252" \
	    "echo hi")" "writing a 252-byte name"
	assert_eq EINVAL "$($FUSETOOL errno write "$MNT/submit/$n251" \
	    "cores: x")" "a refused 251-byte name"
	assert_match "^$n251: " "$(cat "$MNT/submit/$n251.why")" "its reason"
	printf 'echo held\n' > "$MNT/submit/.h" || fail "writing .h failed"
	assert_eq ENAMETOOLONG "$($FUSETOOL errno rename "$MNT/submit/.h" \
	    "$MNT/submit/$n252")" "renaming to a 252-byte name"
	assert_eq "echo held" "$(cat "$MNT/submit/.h")" "the held file after"
	assert_eq ok "$($FUSETOOL errno rename "$MNT/submit/.h" \
	    "$MNT/submit/$n251")" "renaming to a 251-byte name"
	assert_match '^[0-9]+$' "$(cat "$MNT/submit/$n251")" "its receipt"
	ls "$MNT/submit" > "$T/ls" || fail "ls"
	assert_eq 1 "$(wc -l < "$T/ls")" "the listing: $(cat "$T/ls")"
	fs_umount
}

# a reason is not a name to submit under: writing an existing NAME.why
# is EINVAL, with O_TRUNC or without, and it stays as it was
test_fuse_reason_cannot_be_submitted() {
	new_spool
	fs_mount
	echo 'cores: x' > "$MNT/submit/bad"
	why=$(cat "$MNT/submit/bad.why") || fail "no bad.why"
	assert_eq EINVAL "$($FUSETOOL errno create "$MNT/submit/bad.why")" \
	    "opening a reason with O_TRUNC"
	assert_eq EINVAL "$($FUSETOOL errno openw "$MNT/submit/bad.why")" \
	    "opening a reason for writing"
	assert_eq EINVAL "$($FUSETOOL errno write "$MNT/submit/bad.why" \
	    "echo hi")" "writing a reason"
	assert_eq "$why" "$(cat "$MNT/submit/bad.why")" "the reason after"
	[ -e "$MNT/submit/bad.why.why" ] && fail "a reason of a reason"
	dir_empty "$SPOOL/incoming" || fail "submitted: $(ls "$SPOOL/incoming")"
	fs_umount
}
