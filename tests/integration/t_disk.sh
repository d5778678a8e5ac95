# t_disk.sh - a full spool filesystem: the spool on a small tmpfs
# (mounted here, as root; unmounted when the test ends).
#
# What is checked (doc/guarantees.md, "A full disk"):
#   - submitting into a full spool fails with a clear error and leaves
#     no partial task and no temporary file;
#   - spoold and the workers keep running, each condition is reported
#     once (not at every pass), and work resumes when space is freed;
#   - a task whose output fills the disk fails with reason "disk", its
#     output cut to its beginning, while its neighbours finish as usual;
#   - so does one that fills its user's quota (EDQUOT, injected).

# disk_spool SIZE: a spool on a fresh tmpfs of SIZE at $T/fs
disk_spool() {
	mkdir -p "$T/fs"
	mount -t tmpfs -o "size=$1,mode=0700" tmpfs "$T/fs" ||
	    fail "mount -t tmpfs (the test runs as root)"
	# run.sh kills what the test started after this subshell ends:
	# a lazy unmount lets their descriptors go with them
	trap 'umount -l "$T/fs" 2>/dev/null' EXIT
	SPOOL=$T/fs/spool
	export SPOOL
	spool init > /dev/null || fail "spool init"
	fast_config
}

# fill the filesystem of the spool with a file outside the spool
disk_fill() {
	dd if=/dev/zero of="$T/fs/filler" bs=4k > /dev/null 2>&1
	[ "$(stat -f -c %a "$T/fs")" -eq 0 ] || fail "the filesystem is not full"
}

# no log line (its time stamp cut) is printed twice: reported once
reported_once() {	# LOG
	local dup
	dup=$(cut -d' ' -f2- "$1" | grep -i "space\|full" | sort | uniq -d | head -3)
	[ -z "$dup" ] || fail "$(basename "$1") reports a condition again and again: $dup"
}

test_full_spool_refuses_submission_and_resumes() {
	disk_spool 2m
	start_spoold
	start_worker w1 --cores 1
	id=$(spool submit -- echo before) || fail "submit"
	spool wait "$id" || fail "task before the disk filled"
	# spoold removes the bundle of a final task at a later rescan
	# (spoold/table.c): the space it frees would unfill the disk
	wait_for 10 dir_empty "$SPOOL/specs" || fail "specs/ not emptied"
	disk_fill
	if spool submit -- echo during > "$T/out" 2> "$T/err"; then
		fail "a submission into a full spool succeeded: $(cat "$T/out")"
	fi
	assert_match "spool: .*incoming/.*No space left on device" "$(cat "$T/err")" \
	    "the error of the refused submission"
	dir_empty "$SPOOL/incoming" || fail "a partial submission is in incoming/"
	# (spoold's summary passes through tmp/ for a moment at each
	# write: a file the refusal left stays, and fails)
	wait_for 10 dir_empty "$SPOOL/tmp" ||
	    fail "a temporary file is left: $(ls "$SPOOL/tmp")"
	# both keep beating while full (the beats are overwritten in place,
	# beatfile.h: no new block is needed): the worker is not declared
	# lost, and does not leave for want of spoold's beat
	wid=$(worker_wid w1) || fail "no worker directory"
	b1=$(spoold_beat)
	w1=$(worker_beat "$wid")
	wait_for 10 beat_past $((b1 + 15)) ||
	    fail "spoold's beat stopped while the disk was full"
	wait_for 10 worker_beat_past "$wid" $((w1 + 15)) ||
	    fail "the worker's beat stopped while the disk was full"
	assert_no_match "write: .*(beat|status)" \
	    "$(cat "$T/spoold.log" "$T/worker-w1.log")" "the logs"
	kill -0 "$SPOOLD_PID" || fail "spoold died: $(tail -3 "$T/spoold.log")"
	kill -0 "$WORKER_PID" || fail "the worker died: $(tail -3 "$T/worker-w1.log")"
	assert_no_match "lost|leaving|draining" "$(cat "$T/spoold.log" "$T/worker-w1.log")"
	# space again: submissions and tasks go on
	rm "$T/fs/filler"
	id=$(spool submit -- echo after) || fail "submit after space was freed"
	spool wait "$id" || fail "task after space was freed"
	assert_eq after "$(task_stdout "$id")" "output after space was freed"
	for log in "$T/spoold.log" "$T/worker-w1.log"; do
		reported_once "$log"
	done
	stop_spoold
	spool fsck --settled > "$T/out" 2>&1 || fail "fsck: $(cat "$T/out")"
}

test_output_that_fills_the_disk_fails_the_task_alone() {
	disk_spool 8m
	start_spoold
	start_worker w1 --cores 2
	before=$(spool submit -- echo first) || fail "submit"
	spool wait "$before" || fail "first task"
	# the hog writes until the disk is full; a neighbour, submitted
	# first (once the hog runs, nothing can be submitted), runs beside
	# it and writes its output when told to, once the hog is final.
	# It has started (its files made) before the hog is submitted: the
	# worker's start in order of ID (inbox.c) puts it first today, and
	# the test leans on no such order
	near=$(spool submit -- sh -c "touch $T/near1; while [ ! -e $T/go1 ]; do sleep 0.1; done; echo neighbour") ||
	    fail "submit neighbour"
	wait_for 10 test -e "$T/near1" || fail "the neighbour did not start"
	hog=$(spool submit -- sh -c 'yes ckspool-disk-test') || fail "submit hog"
	spool wait "$hog" > /dev/null 2>&1
	st=$?
	# (spool(1), EXIT STATUS: a temporary failure)
	assert_eq 75 "$st" "spool wait status of the hog"
	touch "$T/go1"
	spool wait "$near" > /dev/null
	assert_eq failed "$(field "$hog" state)" "state of the hog"
	assert_eq disk "$(field "$hog" reason)" "reason of the hog"
	assert_match "filled the spool's filesystem" "$(field "$hog" message)" \
	    "message of the hog"
	size=$(stat -c %s "$SPOOL/tasks/$((hog / 1000))/$hog/stdout")
	[ "$size" -le 65536 ] || fail "the hog's stdout was not cut: $size bytes"
	assert_match "^ckspool-disk-test$" \
	    "$(head -1 "$SPOOL/tasks/$((hog / 1000))/$hog/stdout")" "the hog's first line"
	assert_eq done "$(field "$near" state)" "state of the neighbour"
	assert_eq neighbour "$(task_stdout "$near")" "output of the neighbour"
	# a hog that ignores its failed writes and goes on: the worker
	# stops it (at its next heartbeat)
	near=$(spool submit -- sh -c "touch $T/near2; while [ ! -e $T/go2 ]; do sleep 0.1; done; echo neighbour") ||
	    fail "submit neighbour 2"
	wait_for 10 test -e "$T/near2" || fail "neighbour 2 did not start"
	hog=$(spool submit -- sh -c 'while :; do echo ckspool-disk-test 2>/dev/null; done') ||
	    fail "submit hog 2"
	spool wait "$hog" > /dev/null
	touch "$T/go2"
	spool wait "$near" > /dev/null
	assert_eq disk "$(field "$hog" reason)" "reason of hog 2"
	assert_match "filled the spool's filesystem; stdout cut from [0-9]+ bytes to its first 65536" \
	    "$(field "$hog" message)" "message of hog 2"
	assert_match "task $hog attempt 1: its output .* stopping it" \
	    "$(cat "$T/worker-w1.log")" "the worker's log"
	assert_eq neighbour "$(task_stdout "$near")" "output of neighbour 2"
	id=$(spool submit -- echo later) || fail "submit after the hog"
	spool wait "$id" || fail "task after the hog"
	kill -0 "$SPOOLD_PID" || fail "spoold died"
	kill -0 "$WORKER_PID" || fail "the worker died"
	stop_spoold
	spool fsck --settled > "$T/out" 2>&1 || fail "fsck: $(cat "$T/out")"
}

# A task's output that is a FIFO by the time the worker cuts it (a
# shared spool's member, whose task a root worker runs, swaps it between
# the worker's look at it and its open: the fault layer's fifo-on-open
# does so at the open) is left as it is: the worker opened it to write
# without O_NONBLOCK and waited for a reader for good, stopped beating,
# and was declared lost.  It is opened without blocking now, judged by
# what was opened, and the task fails with reason "disk" as any other.
test_an_output_swapped_for_a_fifo_does_not_block_the_worker() {
	local hog id wid
	disk_spool 8m
	start_spoold
	hog=$(spool submit -- sh -c 'yes ckspool-disk-test') || fail "submit hog"
	CKSPOOL_FAULT="fifo-on-open=$hog.1/stdout" start_worker w1 --cores 1
	wait_for 30 finished "$hog" ||
	    fail "task $hog is $(state_of "$hog"): $(tail -3 "$T/worker-w1.log")"
	assert_eq failed "$(field "$hog" state)" "state of the hog"
	assert_eq disk "$(field "$hog" reason)" "reason of the hog"
	assert_no_match "stdout cut" "$(field "$hog" message)" "message of the hog"
	wid=$(worker_wid w1) || fail "no worker directory"
	assert_match "fault injection: $hog\.1/stdout is a FIFO now" \
	    "$(cat "$T/worker-w1.log")" "the worker's log"
	assert_match "truncate: workers/$wid/work/$hog\.1/stdout: not a regular file" \
	    "$(cat "$T/worker-w1.log")" "the worker's log"
	# (the hog's output is gone with it: the disk has room again)
	id=$(spool submit -- echo later) || fail "submit after the hog"
	spool wait "$id" > /dev/null || fail "task after the hog"
	assert_eq "$wid" "$(field "$id" worker)" "the worker of the next task"
	assert_no_match "lost" "$(cat "$T/spoold.log")" "spoold's log"
	stop_spoold
}

# A quota (EDQUOT), full as the disk is full (ENOSPC): the fault layer
# refuses the worker's writes with EDQUOT, which a quota on this tmpfs
# would (it has none here); statvfs shows the tmpfs with room.
# A task that failed by itself with a large output (a program that
# stops at its first refused write) is judged by a write of the
# worker's (work/.space): refused, it fails with reason "disk", its
# output cut.  It was judged by statvfs alone: "exited with status 1",
# its output whole, the results after it refused for good.
test_a_task_that_fills_its_quota_fails_with_reason_disk() {
	local hog
	disk_spool 8m
	start_spoold
	hog=$(spool submit -- sh -c 'yes ckspool-quota-test | head -c 200000; exit 1') ||
	    fail "submit hog"
	CKSPOOL_FAULT="fail-on=.space:EDQUOT" start_worker w1 --cores 1
	wait_for 30 finished "$hog" ||
	    fail "task $hog is $(state_of "$hog"): $(tail -3 "$T/worker-w1.log")"
	assert_eq failed "$(field "$hog" state)" "state of the hog"
	assert_eq disk "$(field "$hog" reason)" "reason of the hog"
	assert_match "filled the spool's filesystem; stdout cut from 200000 bytes to its first 65536" \
	    "$(field "$hog" message)" "message of the hog"
	assert_match "fault injection: .*\.space.*Disk quota exceeded" \
	    "$(cat "$T/worker-w1.log")" "the worker's log"
	temp_areas_empty || fail "a file is left"
	[ ! -e "$SPOOL/workers/$(worker_wid w1)/work/.space" ] ||
	    fail "the probe is left"
	stop_spoold
}

# The probe refused half way (EDQUOT on its write, after its create) is
# removed by the worker before its close, as one that was written (the
# file in place, no temporary name).  A worker that dies between its
# write and its unlink leaves work/.space: spool fsck notes it as the
# probe (it noted "a hidden file ... of NFS or FUSE"), spoold takes it
# for no attempt, and it goes with the directory once the worker is
# found lost.
test_a_disk_probe_left_by_a_dead_worker_goes_with_its_directory() {
	local hog wid
	new_spool
	start_spoold
	hog=$(spool submit -- sh -c 'yes ckspool-probe-test | head -c 200000; exit 1') ||
	    fail "submit hog"
	# its second mutation: the unlink, after the create and the write
	CKSPOOL_FAULT="crash-on=.space*2" start_worker w1 --cores 1
	wid=$(worker_wid w1)
	wait_for 30 not_running "$WORKER_PID" ||
	    fail "w1 did not die: $(tail -3 "$T/worker-w1.log")"
	assert_match "fault injection: crash before operation [0-9]+ \(unlink \.space\)" \
	    "$(cat "$T/worker-w1.log")" "w1's log"
	assert_eq 4096 "$(stat -c %s "$SPOOL/workers/$wid/work/.space")" \
	    "the probe left"
	spool fsck > "$T/fsck.out" 2>&1
	assert_match "note: workers/$wid/work/\.space: the worker's disk probe" \
	    "$(cat "$T/fsck.out")" "fsck"
	assert_no_match "\.space" "$(grep -v '^fsck: note: ' "$T/fsck.out")" \
	    "fsck's problems"
	wait_for 30 sh -c "! test -e '$SPOOL/workers/$wid'" ||
	    fail "w1's directory stays: $(ls -a "$SPOOL/workers/$wid/work")"
	start_worker w2 --cores 1
	wait_for 30 finished "$hog" || fail "task $hog is $(state_of "$hog")"
	assert_eq 2 "$(field "$hog" attempt)" "attempt of the hog"
	assert_eq exit "$(field "$hog" reason)" "reason of the hog"
	[ ! -e "$SPOOL/workers/$(worker_wid w2)/work/.space" ] ||
	    fail "w2's probe is left"
	assert_no_match "\.space" "$(cat "$T/spoold.log")" "spoold's log"
	stop_spoold
}

# A result refused with EDQUOT (its user's quota, full while a task that
# still runs holds a large output) makes the worker stop that task at
# its next heartbeat, as a full disk does, with reason "disk" and its
# output cut: the result is then committed.  It looked at statvfs only:
# the task ran on, and the result was tried again for ever (here the
# fault refuses it once; a quota refuses it until space is freed).
test_a_result_refused_by_a_quota_stops_the_task_that_filled_it() {
	local hog near wid
	disk_spool 8m
	start_spoold
	hog=$(spool submit -- sh -c 'yes ckspool-quota-test | head -c 200000; exec sleep 600') ||
	    fail "submit hog"
	near=$(spool submit -- sh -c "while [ ! -e '$T/go' ]; do sleep 0.1; done; echo neighbour") ||
	    fail "submit neighbour"
	CKSPOOL_FAULT="fail-on=$near.1/result:EDQUOT" start_worker w1 --cores 2
	wid=$(worker_wid w1) || fail "no worker directory"
	wait_for 10 output_is 200000 stat -c %s "$SPOOL/workers/$wid/work/$hog.1/stdout" ||
	    fail "the hog did not write its output"
	touch "$T/go"
	wait_for 10 finished "$hog" ||
	    fail "task $hog is $(state_of "$hog"): $(tail -3 "$T/worker-w1.log")"
	assert_eq disk "$(field "$hog" reason)" "reason of the hog"
	assert_match "filled the spool's filesystem; stdout cut from 200000 bytes to its first 65536" \
	    "$(field "$hog" message)" "message of the hog"
	assert_match "write: workers/$wid/work/$near\.1/result: Disk quota exceeded" \
	    "$(cat "$T/worker-w1.log")" "the worker's log"
	assert_match "task $hog attempt 1: its output .* stopping it" \
	    "$(cat "$T/worker-w1.log")" "the worker's log"
	wait_for 10 finished "$near" || fail "task $near is $(state_of "$near")"
	assert_eq done "$(field "$near" state)" "state of the neighbour"
	assert_eq neighbour "$(task_stdout "$near")" "output of the neighbour"
	stop_spoold
}
