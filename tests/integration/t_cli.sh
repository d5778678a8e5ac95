# t_cli.sh - the spool CLI against what others may have put in its way:
# directories that are not spools, files that are not what they seem,
# limits at their edges.

# snapshot DIR: every entry under DIR with its type, mode, size and mtime
snapshot() {
	find "$1" -printf '%p %y %m %s %T@\n' | sort
}

# init refuses a directory holding anything an interrupted init could
# not have left (here a tmp/ of the user's own, whose old files
# spoold's recovery would sweep), says what, and changes nothing.
test_init_refuses_what_is_no_part_of_a_spool() {
	local d=$T/hd before
	mkdir -p "$d/tmp/myproject"
	echo precious > "$d/tmp/myproject/data.txt"
	touch -d '3 days ago' "$d/tmp/myproject"
	echo notes > "$d/notes.txt"
	before=$(snapshot "$d")
	if spool init "$d" > "$T/out" 2> "$T/err"; then
		fail "init took over a directory with the user's files"
	fi
	assert_match "^spool: fatal: $d: directory is not empty and is not a spool \((tmp/myproject|notes.txt) is no part of one\)\$" \
	    "$(cat "$T/err")"
	assert_eq "$before" "$(snapshot "$d")" "the directory after a refused init"
	# only spool-named directories, but one holds the user's files
	rm "$d/notes.txt"
	before=$(snapshot "$d")
	spool init "$d" > /dev/null 2> "$T/err" && fail "init took over tmp/myproject"
	assert_match "\(tmp/myproject is no part of one\)" "$(cat "$T/err")"
	assert_eq "$before" "$(snapshot "$d")" "the directory after a refused init"
	rm -r "$d/tmp/myproject"
	mkdir "$d/log" && echo x > "$d/log/mine"
	spool init "$d" > /dev/null 2> "$T/err" && fail "init took over log/mine"
	assert_match "\(log/mine is no part of one\)" "$(cat "$T/err")"
	rm "$d/log/mine"
	echo "not FORMAT" > "$d/tmp/host.1.1.0"
	spool init "$d" > /dev/null 2> "$T/err" && fail "init took over tmp/host.1.1.0"
	assert_match "\(tmp/host.1.1.0 is no part of one\)" "$(cat "$T/err")"
	rm "$d/tmp/host.1.1.0"
	echo x > "$d/incoming"
	rmdir "$d/log"
	spool init "$d" > /dev/null 2> "$T/err" && fail "init took a file for incoming/"
	assert_match "\(incoming is no part of one\)" "$(cat "$T/err")"
	rm "$d/incoming"
	# what an interrupted init leaves (a start of FORMAT in tmp/), and
	# a spool.yaml written first: completed
	printf 'ckspool' > "$d/tmp/host.1.1.0"
	: > "$d/tmp/host.1.2.0"
	mkdir "$d/ids"
	printf 'daemon:\n  settle: 1s\n' > "$d/spool.yaml"
	spool init "$d" > /dev/null || fail "init did not complete a half-made spool"
	assert_eq "ckspool 1" "$(cat "$d/FORMAT")" "FORMAT"
	spool -S "$d" fsck > "$T/out" || fail "fsck: $(cat "$T/out")"
}

# A FIFO where a regular file is expected hangs nothing: one in
# incoming/ (anyone who may submit can make it) is no submission to
# "spool status", and a task's stdout made a FIFO is not printed by
# "spool gather", which says so.
test_fifos_hang_neither_status_nor_gather() {
	local id rc
	new_spool
	id=$(spool submit -- echo hello) || fail "submit"
	mkfifo "$SPOOL/incoming/job.yaml"
	rc=0
	timeout 10 spool status "$id" > "$T/out" 2> "$T/err" || rc=$?
	assert_eq 0 $rc "exit status of status with a FIFO in incoming/"
	assert_eq submitted "$(awk 'NR == 2 { print $3 }' "$T/out")" "state"
	rm "$SPOOL/incoming/job.yaml"
	start_spoold
	start_worker w
	spool wait "$id" || fail "wait"
	assert_eq hello "$(spool gather "$id")" "gather"
	rm "$SPOOL/tasks/0/$id/stdout"
	mkfifo "$SPOOL/tasks/0/$id/stdout"
	rc=0
	timeout 10 spool gather "$id" > "$T/out" 2> "$T/err" || rc=$?
	assert_eq 0 $rc "exit status of gather of a task whose stdout is a FIFO"
	assert_eq "" "$(cat "$T/out")" "gather's output"
	assert_eq "spool: warning: read: tasks/0/$id/stdout: not a regular file, not printed" \
	    "$(cat "$T/err")"
}

# spool gather that cannot read a task's stdout (EIO, as on NFS) says
# which file, prints the others' and exits 111, whatever the tasks'
# statuses: "spool gather ... > out && next" never goes on with an
# output that lacks a part (it exited 0, or the failed task's status).
test_gather_exits_111_when_an_output_cannot_be_read() {
	local a b c rc
	new_spool
	start_spoold
	start_worker w
	a=$(spool submit -- echo one) || fail "submit"
	b=$(spool submit -- echo two) || fail "submit"
	c=$(spool submit -- sh -c 'echo three; exit 5') || fail "submit"
	spool wait "$a" "$b" || fail "wait"
	spool wait "$c" && fail "wait of a task that exits 5"
	# FAULT|OP|ERROR: a read that fails, an open (open-fails names
	# the file relative to tasks/, read-fails by its last component)
	while IFS='|' read -r fault op error; do
		rc=0
		CKSPOOL_FAULT=$fault spool gather "$a" "$b" \
		    > "$T/out" 2> "$T/err" || rc=$?
		assert_eq 111 $rc "exit status of gather with an output unread ($fault)"
		assert_eq two "$(cat "$T/out")" "gather's output ($fault)"
		assert_match "^spool: warning: $op: tasks/0/$a/stdout: ($error)\$" \
		    "$(grep -v 'fault injection' "$T/err")" "the report ($fault)"
	done <<-EOF
	read-fails=stdout:EIO|read|Input/output error|I/O error
	count=all,open-fails=0/$a/stdout:EACCES|open|Permission denied
	EOF
	# an output unread outweighs a task's failure: 111, not 5
	rc=0
	CKSPOOL_FAULT="read-fails=stdout:EIO" spool gather "$a" "$c" \
	    > "$T/out" 2> "$T/err" || rc=$?
	assert_eq 111 $rc "exit status of gather with a failed task and an output unread"
	assert_eq three "$(cat "$T/out")" "gather's output"
	assert_match "task $c failed" "$(cat "$T/err")" "the failure's report"
	rc=0
	spool gather "$a" "$c" > "$T/out" 2> "$T/err" || rc=$?
	assert_eq 5 $rc "exit status of gather with every output read"
	assert_eq "one
three" "$(cat "$T/out")" "gather's output"
}

# A task's own status 2, 3 or 111 is passed on by default, where it
# reads as spool's own usage error, timeout or spool error;
# --no-task-status turns any failure into 1, which wait and gather
# never exit with otherwise (design.md section 12, item 9).
test_wait_no_task_status_tells_a_failure_from_spools_own() {
	local ok three two long rc
	new_spool
	start_spoold
	start_worker w
	ok=$(spool submit -- echo fine) || fail "submit"
	three=$(spool submit -- sh -c 'echo three; exit 3') || fail "submit"
	two=$(spool submit -- sh -c 'exit 2') || fail "submit"
	rc=0; spool wait "$ok" "$three" 2> "$T/err" || rc=$?
	assert_eq 3 $rc "wait passes the task's own 3 on"
	rc=0; spool wait --no-task-status "$ok" "$three" 2> "$T/err" || rc=$?
	assert_eq 1 $rc "wait --no-task-status of a task that exits 3"
	assert_match "task $three failed: exit: exited with status 3" \
	    "$(cat "$T/err")" "the failure is still said"
	rc=0; spool wait --no-task-status "$two" "$three" 2> /dev/null || rc=$?
	assert_eq 1 $rc "wait --no-task-status of tasks that exit 2 and 3"
	rc=0; spool wait --no-task-status "$ok" || rc=$?
	assert_eq 0 $rc "wait --no-task-status of a task that succeeded"
	rc=0
	spool gather --no-task-status "$ok" "$three" > "$T/out" 2> /dev/null ||
	    rc=$?
	assert_eq 1 $rc "gather --no-task-status of a task that exits 3"
	assert_eq "fine
three" "$(cat "$T/out")" "gather's output"
	# spool's own statuses stay: the timeout, a usage error, a spool
	# error
	long=$(spool submit -- sleep 60) || fail "submit"
	rc=0
	spool wait --no-task-status --timeout 0.2 "$three" "$long" \
	    2> /dev/null || rc=$?
	assert_eq 3 $rc "wait --no-task-status at its timeout"
	rc=0; spool wait --no-task-status 999999 2> /dev/null || rc=$?
	assert_eq 2 $rc "wait --no-task-status of an ID never claimed"
	rc=0; SPOOL=$T/nothing spool wait --no-task-status 1 2> /dev/null ||
	    rc=$?
	assert_eq 111 $rc "wait --no-task-status on no spool"
	spool cancel "$long" > /dev/null || fail "cancel"
}

# A finished task's result that cannot be read for a while (an NFS
# server's EIO that passes) is read again at wait's next rescan, not
# when something else changes in its shard: said once, and the wait
# ends at the first read that works.  (It was read again only when the
# shard's stamp said so, or at the rescan that looks whatever the
# stamp, every tenth, and said at each failed read: three times here.)
test_wait_reads_a_result_again_after_a_failed_read() {
	local id rc cmd
	new_spool
	start_spoold
	start_worker w
	id=$(spool submit -- echo out) || fail "submit"
	spool wait "$id" || fail "wait"
	for cmd in wait gather; do
		rc=0
		CKSPOOL_FAULT="read-fails=result:EIO*3" \
		    spool $cmd --timeout 60s "$id" > "$T/out" 2> "$T/err" ||
		    rc=$?
		assert_eq 0 $rc "exit status of $cmd"
		assert_eq 1 "$(grep -Ec "^spool: warning: read: tasks/0/$id/result: (Input/output error|I/O error)\$" "$T/err")" \
		    "reports of the failed reads by $cmd"
	done
	assert_eq out "$(cat "$T/out")" "gather's output"
}

# --timeout 0, and one under a millisecond, are timeouts: wait, gather
# and wait-workers look once and give up (3), not wait for ever.
test_timeout_zero_looks_once() {
	local d rc id cmd
	new_spool
	id=$(spool submit -- echo hi) || fail "submit"
	for d in 0 0.0001 0ms; do
		for cmd in wait gather; do
			rc=0
			timeout 10 spool $cmd --timeout $d "$id" > "$T/out" 2> "$T/err" || rc=$?
			assert_eq 3 $rc "exit status of $cmd --timeout $d of a queued task"
			assert_match "timed out with 1 of 1 task unfinished" "$(cat "$T/err")"
		done
		rc=0
		timeout 10 spool wait-workers 1 --timeout $d 2> "$T/err" || rc=$?
		assert_eq 3 $rc "exit status of wait-workers --timeout $d"
		assert_match "timed out with 0 of 1 workers up" "$(cat "$T/err")"
	done
	start_spoold
	start_worker w
	spool wait "$id" || fail "wait"
	assert_eq hi "$(timeout 10 spool gather --timeout 0 "$id")" "gather --timeout 0 of a finished task"
	timeout 10 spool wait-workers 1 --timeout 0 2> "$T/err" || fail "wait-workers --timeout 0 with a worker up"
}

# spool status that cannot read a bundle's header (EIO, as on NFS)
# says which file, and shows its tasks as unknown: it read nothing of
# them (it said nothing, the tasks shown unknown as if never submitted).
test_status_reports_a_bundle_it_cannot_read() {
	local id
	new_spool
	id=$(spool submit -- true) || fail "submit"
	CKSPOOL_FAULT="read-fails=$id.bundle:EIO" spool status "$id" \
	    > "$T/out" 2> "$T/err" || fail "spool status: $(cat "$T/err")"
	assert_match "^spool: warning: read: $SPOOL/incoming/$id.bundle: (Input/output error|I/O error)\$" \
	    "$(grep -v 'fault injection' "$T/err")" "the report"
	assert_match "^$id +- +unknown " "$(tail -1 "$T/out")" "its line"
	assert_match "^$id +- +submitted " "$(spool status "$id" | tail -1)" \
	    "its line once it can be read"
}

# spool status reads a task's bundle a record at a time: one that a
# submitter grew to a 1 GiB hole in incoming/ (spoold not running yet)
# is shown without the CLI holding it (it read it whole: a peak
# resident size of 1 GiB).  (The peak is the kernel's, from
# getrusage; a limit on the address space would stop a sanitizer's
# build from starting at all.)
test_status_of_a_task_whose_bundle_is_a_huge_hole() {
	local id peak
	new_spool
	id=$(spool submit -- true) || fail "submit"
	truncate -s 1G "$SPOOL/incoming/$id.bundle" || fail "truncate"
	peak=$(python3 -c 'import resource, subprocess, sys
with open(sys.argv[1], "w") as out:
    rc = subprocess.call(sys.argv[2:], stdout=out, stderr=out)
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' \
	    "$T/out" spool status "$id") || fail "python3"
	assert_eq 0 "${peak% *}" "exit status of spool status: $(cat "$T/out")"
	[ "${peak#* }" -lt 262144 ] ||
	    fail "peak resident size of spool status: ${peak#* } kB"
	assert_match "^$id +- +submitted " "$(tail -1 "$T/out")" "its line"
}

# spool fsck reads a bundle a record at a time, as spoold does: one of
# 70 MB that spool map wrote (4096 inputs of 17000 bytes) is sound.  It
# read bundles whole, at most 64 MiB: "cannot read: File too large", a
# problem, for what spoold accepts (bundles are up to 4 GiB).
test_fsck_reads_a_bundle_larger_than_64_mib() {
	new_spool
	seq -f "%017000g" 4096 | spool map -- echo {} > /dev/null || fail "map"
	[ "$(stat -c %s "$SPOOL/incoming/1.bundle")" -gt $((64 << 20)) ] ||
	    fail "the bundle is not larger than 64 MiB"
	spool fsck > "$T/out" 2>&1 || fail "fsck: $(cat "$T/out")"
	assert_match "; 0 problems$" "$(tail -1 "$T/out")"
}

# spool map names an invalid input by its number in the input, not by
# its place in its chunk of 4096; the chunks before it are submitted
# (their IDs printed), nothing of its chunk is.
test_map_names_a_bad_input_by_its_number() {
	local rc=0
	new_spool
	(seq 1 4098; echo; seq 1 3) | spool map -- {} > "$T/out" 2> "$T/err" || rc=$?
	assert_eq 2 $rc "exit status of a map with an empty command"
	assert_eq "spool: fatal: input 4099: empty command" "$(cat "$T/err")"
	assert_eq "$(seq 1 4096)" "$(cat "$T/out")" "the IDs of the first chunk"
	assert_eq "1.bundle" "$(ls "$SPOOL/incoming")" "incoming/"
	# a bad name is named the same way
	rc=0
	printf 'a\nb/c\n' | spool map --name 'n-{}' -- echo > /dev/null 2> "$T/err" || rc=$?
	assert_eq 2 $rc "exit status of a map with a bad name"
	assert_match "^spool: fatal: input 2: name \"n-b/c\": " "$(cat "$T/err")"
}

# A refused value is echoed quoted and escaped (msg_q): a newline or an
# escape in a name, a task file's key or a task ID given on the command
# line cannot split the one-line message or reach the terminal raw.
test_refused_user_text_is_quoted_on_one_line() {
	local rc
	new_spool
	rc=0
	spool submit --name "$(printf 'b\nc')" -- true 2> "$T/err" || rc=$?
	assert_eq 2 $rc "exit status of a submit with a bad name"
	assert_eq 'spool: fatal: --name "b\nc": name must be 1-128 characters of [A-Za-z0-9_.+@:-]' \
	    "$(cat "$T/err")"
	rc=0
	printf 'a\033[2Jb\n' | spool map --name '{}' -- echo 2> "$T/err" || rc=$?
	assert_eq 2 $rc "exit status of a map with a bad name"
	assert_eq 'spool: fatal: input 1: name "a\x1b[2Jb": name must be 1-128 characters of [A-Za-z0-9_.+@:-]' \
	    "$(cat "$T/err")"
	printf '"com\\nmand": [true]\n' > "$T/key.yaml"
	rc=0
	spool submit "$T/key.yaml" 2> "$T/err" || rc=$?
	assert_eq 2 $rc "exit status of a task file with a bad key"
	assert_eq 1 "$(wc -l < "$T/err")" "lines of: $(cat "$T/err")"
	assert_match ': unknown key "com\\nmand" \(known: ' "$(cat "$T/err")"
	rc=0
	spool wait "$(printf '1\n2')" 2> "$T/err" || rc=$?
	assert_eq 2 $rc "exit status of a wait for a bad ID"
	assert_eq 'spool: fatal: not a task ID: "1\n2"' "$(cat "$T/err")"
	assert_eq "" "$(ls "$SPOOL/incoming")" "incoming/ after the refusals"
}

# refused STATUS WHAT CMD...: CMD exits STATUS, its stderr in $T/err
refused() {
	local want=$1 what=$2 rc=0
	shift 2
	"$@" 2> "$T/err" || rc=$?
	assert_eq "$want" "$rc" "exit status of $what"
}

# A task file's #SPOOL line is refused naming the word it failed at,
# the option and its value each quoted and escaped unless a plain word:
# an escape in either reaches no terminal raw.
test_a_refused_spool_directive_word_is_quoted() {
	new_spool
	printf '#!/bin/sh\n#SPOOL --\033[31mx\ntrue\n' > "$T/esc.sh"
	refused 2 "a script with a bad option word" spool submit "$T/esc.sh"
	assert_eq "spool: fatal: $T/esc.sh: line 2: #SPOOL \"--\\x1b[31mx\": unknown option" \
	    "$(cat "$T/err")"
	printf '#!/bin/sh\n#SPOOL --cores=4\033[2J\ntrue\n' > "$T/val.sh"
	refused 2 "a script with a bad value" spool submit "$T/val.sh"
	assert_match ': line 2: #SPOOL --cores="4\\x1b\[2J": ' "$(cat "$T/err")"
	# its value also when given as "--opt value" (the option was named
	# alone), on the line that has it
	printf '#!/bin/sh\n#SPOOL --name x\n#SPOOL --memory "4\033[2J G"\ntrue\n' \
	    > "$T/space.sh"
	refused 2 "a script with a bad value after a blank" spool submit "$T/space.sh"
	assert_match ': line 3: #SPOOL --memory="4\\x1b\[2J G": unknown size unit' \
	    "$(cat "$T/err")"
	if grep -q $'\033' "$T/err"; then
		fail "an escape reached the terminal raw: $(cat -v "$T/err")"
	fi
	assert_eq "" "$(ls "$SPOOL/incoming")" "incoming/ after the refusals"
}

# The spool's own path (-S DIR: the user's argument) is shown quoted and
# escaped in a message when it is not a plain path, as any name from a
# user is: an escape in it reached the terminal raw.  A plain path stays
# bare (the other tests' messages).
test_a_spool_path_is_quoted_in_messages() {
	local d
	new_spool
	d="$T/a$(printf '\033[2J')b"
	refused 111 "a spool that does not exist" spool -S "$d" status
	assert_eq "spool: fatal: open spool: \"$T/a\\x1b[2Jb\": No such file or directory" \
	    "$(cat "$T/err")"
	spool init "$d" > /dev/null || fail "init"
	chmod o+w "$d"
	refused 111 "a spool writable by everyone" spool -S "$d" status
	assert_match "^spool: fatal: \"$T/a\\\\x1b\\[2Jb\": writable by everyone " \
	    "$(cat "$T/err")"
	chmod o-w "$d"
	chmod o+w "$d/ids"
	refused 111 "a spool whose ids/ is writable by everyone" \
	    spool -S "$d" status
	assert_match "^spool: fatal: \"$T/a\\\\x1b\\[2Jb\"/ids: writable by everyone " \
	    "$(cat "$T/err")"
	if grep -q $'\033' "$T/err"; then
		fail "an escape reached the terminal raw: $(cat -v "$T/err")"
	fi
}

# spool purge echoes a bad argument, a bad option value and the name of
# a task file dropped into incoming/ that it cannot read quoted.
test_purge_quotes_what_it_refuses() {
	new_spool
	refused 2 "a purge with an argument" spool purge "$(printf 'x\033[2Jy')"
	assert_eq 'spool: fatal: purge takes no arguments: "x\x1b[2Jy"' \
	    "$(cat "$T/err")"
	refused 2 "a bad --older-than" spool purge --older-than "$(printf '1\nh')"
	assert_match '^spool: fatal: --older-than "1\\nh": ' "$(cat "$T/err")"
	assert_eq 1 "$(wc -l < "$T/err")" "lines of: $(cat "$T/err")"
	refused 2 "a bad --state" spool purge --state "$(printf 'done,x\ny')"
	assert_match '^spool: fatal: --state "x\\ny": not a final state' \
	    "$(cat "$T/err")"
	# no spoold: the dropped file stays, and its dependencies cannot
	# be told
	printf 'command: [true]\nkores: 1\n' > "$SPOOL/incoming/$(printf 'a\nb')"
	refused 111 "a purge that cannot read a task file" spool purge
	assert_match "^spool: fatal: $SPOOL/incoming/\"a\\\\nb\": line 2" \
	    "$(cat "$T/err")"
	assert_eq 1 "$(wc -l < "$T/err")" "lines of: $(cat "$T/err")"
}

# spoold quotes the name of a request a user put in control/ the same
# way: a newline in it does not make a log line of its own.
test_control_request_name_is_quoted_in_the_log() {
	new_spool
	start_spoold
	printf 'bogus: 1\n' > "$SPOOL/tmp/req"
	mv "$SPOOL/tmp/req" "$SPOOL/control/$(printf 'x\ny')"
	wait_for 20 grep -q 'unknown request; ignored' "$T/spoold.log" ||
	    fail "the request was not read: $(tail -5 "$T/spoold.log")"
	assert_match 'spoold: warning: control/"x\\ny": line 1: unknown request; ignored$' \
	    "$(grep 'unknown request' "$T/spoold.log")"
	if grep -q '^y' "$T/spoold.log"; then
		fail "a request's name broke a log line"
	fi
	stop_spoold
}

# spool fsck names a stray entry anyone could have made with its
# control characters escaped: one problem, one line.
test_fsck_escapes_a_stray_name() {
	new_spool
	touch "$SPOOL/ids/$(printf 'x\ny')"
	spool fsck > "$T/out" 2>&1 && fail "fsck found no problem"
	assert_eq 'fsck: ids/x\ny: not a claim shard' "$(head -1 "$T/out")"
	assert_eq 2 "$(wc -l < "$T/out")" "lines of: $(cat "$T/out")"
	assert_match "; 1 problem\$" "$(tail -1 "$T/out")"
}

# spool map --shell is refused with its reason, as a bad value of
# another option is, not with the bare usage text; nothing is submitted.
test_map_refuses_shell_with_a_reason() {
	local rc=0
	new_spool
	spool map --shell 'echo {}' ::: a > "$T/out" 2> "$T/err" || rc=$?
	assert_eq 2 $rc "exit status of map --shell"
	assert_match "^spool: fatal: --shell: submit only" "$(cat "$T/err")"
	assert_eq "" "$(cat "$T/out")" "IDs printed"
	dir_empty "$SPOOL/incoming" || fail "incoming/ not empty: $(ls "$SPOOL/incoming")"
}

# A working directory that getcwd cannot give (removed while spool runs
# in it) is no reason to run the task elsewhere, unsaid: refused, no ID
# claimed; --cwd gives one.  ($PWD, where it is the same directory, is
# taken when getcwd fails: t_hosts.sh, whose commands run through
# nsenter -m in directories getcwd calls unreachable, submits so.)
test_submit_in_a_removed_directory_is_refused() {
	local rc=0 id
	new_spool
	mkdir "$T/gone"
	(cd "$T/gone" && rmdir "$T/gone" && spool submit -- pwd) > "$T/out" 2> "$T/err" || rc=$?
	assert_eq 2 $rc "exit status of submit from a removed directory"
	assert_match "^spool: fatal: getcwd: No such file or directory " "$(cat "$T/err")"
	assert_eq "" "$(cat "$T/out")" "IDs printed"
	dir_empty "$SPOOL/incoming" || fail "something submitted: $(ls "$SPOOL/incoming")"
	# $PWD names another directory now, not the one spool runs in
	rc=0
	(mkdir "$T/gone" && cd "$T/gone" && rmdir "$T/gone" && mkdir "$T/gone" &&
	    spool submit -- pwd) > "$T/out" 2> "$T/err" || rc=$?
	assert_eq 2 $rc "exit status of submit from a removed directory made again"
	assert_match "^spool: fatal: getcwd: No such file or directory " "$(cat "$T/err")"
	rmdir "$T/gone"
	rc=0
	(mkdir "$T/gone" && cd "$T/gone" && rmdir "$T/gone" && echo x | spool map -- echo) > "$T/out" 2> "$T/err" || rc=$?
	assert_eq 2 $rc "exit status of map from a removed directory"
	assert_match "^spool: fatal: getcwd: " "$(cat "$T/err")"
	id=$(cd / && mkdir "$T/gone" && cd "$T/gone" && rmdir "$T/gone" && spool submit --cwd /tmp -- pwd) ||
	    fail "submit --cwd from a removed directory"
	assert_eq 1 "$id" "the first ID claimed"
	assert_eq '"/tmp"' "$(sed -n 's/^cwd: //p' "$SPOOL/incoming/1.bundle")" "cwd of the task"
}

# A script with DOS line breaks is refused, by what it is, not with an
# unseen carriage return at the end of a #SPOOL value ("--cores=2:
# trailing garbage after number") or, with no #SPOOL line, accepted to
# fail at exec ("/bin/sh\r": not found), also when dropped into
# incoming/.  A YAML file may have them.
test_script_with_dos_line_breaks_is_refused() {
	local rc f
	new_spool
	printf '#!/bin/sh\r\n#SPOOL --cores=2\r\necho hi\r\n' > "$T/crlf.sh"
	printf '#!/bin/sh\necho hi\r\n' > "$T/late.sh"
	for f in crlf.sh late.sh; do
		rc=0
		spool submit "$T/$f" > "$T/out" 2> "$T/err" || rc=$?
		assert_eq 2 $rc "exit status of submit $f"
		assert_eq "" "$(cat "$T/out")" "IDs printed for $f"
	done
	assert_eq "spool: fatal: $T/late.sh: line 2: a DOS line break (carriage return before the newline): convert the file with dos2unix" \
	    "$(cat "$T/err")"
	rc=0
	spool submit - < "$T/crlf.sh" > /dev/null 2> "$T/err" || rc=$?
	assert_eq 2 $rc "exit status of submit - of a script with DOS line breaks"
	assert_match ": line 1: a DOS line break" "$(cat "$T/err")"
	dir_empty "$SPOOL/incoming" || fail "something submitted: $(ls "$SPOOL/incoming")"
	printf 'command: [echo, hi]\r\ncores: 2\r\n' > "$T/crlf.yaml"
	assert_eq 1 "$(spool submit "$T/crlf.yaml")" "ID of a YAML task with DOS line breaks"
	# dropped into incoming/ (or written through spoolfs): the same
	start_spoold
	cp "$T/late.sh" "$SPOOL/incoming/"
	wait_for 20 test -e "$SPOOL/rejected/late.sh.why" ||
	    fail "not rejected: $(ls "$SPOOL/incoming" "$SPOOL/rejected")"
	assert_match "line 2: a DOS line break \(carriage return before the newline\): convert the file with dos2unix" \
	    "$(cat "$SPOOL/rejected/late.sh.why")" "the reason"
}

# spool status -l shows every field of the result: its start, end and
# batch job as well, as recorded in the task's result file.
test_status_long_shows_start_end_and_job() {
	local id dir k
	new_spool
	start_spoold
	start_worker w --job 4711
	id=$(spool submit -- true) || fail "submit"
	spool wait "$id" || fail "wait"
	spool status -l "$id" > "$T/status" || fail "status -l"
	dir=$(sed -n 's/^dir: //p' "$T/status")
	for k in start end job; do
		assert_eq "$k: $(sed -n "s/^$k: //p" "$dir/result")" \
		    "$(grep "^$k: " "$T/status")" "$k in spool status -l"
	done
	assert_eq "job: 4711" "$(grep "^job: " "$T/status")" "the job"
}

# spool status -l of a task not final names its dependencies, each with
# its state: what a waiting task waits for.
test_status_long_names_what_a_task_waits_for() {
	local a b d
	new_spool
	start_spoold --local 1
	a=$(spool submit -- sh -c 'until [ -e "$1" ]; do sleep 0.05; done' _ "$T/go") ||
	    fail "submit a"
	d=$(spool submit -- true) || fail "submit d"
	spool wait "$d" || fail "d"
	wait_for 20 state_is "$a" running || fail "a not running"
	b=$(spool submit --after "$a,$d" -- echo b) || fail "submit b"
	wait_for 20 state_is "$b" waiting || fail "b: $(state_of "$b")"
	assert_eq "after: $a (running), $d (done)" \
	    "$(spool status -l "$b" | grep '^after:')" "b's dependencies"
	touch "$T/go"
	spool wait "$b" || fail "b"
	spool status -l "$b" | grep -q '^after:' &&
	    fail "a final task's long form names its dependencies"
	return 0
}

# spool status reads IDs from standard input when its single argument
# is "-" (as wait, gather, cancel and path do when given none, and with
# "-" too); without arguments it shows the overview whatever its
# standard input holds, and leaves that unread.
test_status_reads_ids_from_stdin_given_a_dash() {
	local rc
	new_spool
	start_spoold
	start_worker w
	seq 3 | spool map -- echo > "$T/ids" || fail "map"
	spool wait - < "$T/ids" || fail "wait -"
	spool status - < "$T/ids" > "$T/rows" || fail "status -"
	assert_eq "ID $(paste -sd' ' "$T/ids")" \
	    "$(awk '{print $1}' "$T/rows" | paste -sd' ')" "the rows' IDs"
	assert_eq "done done done" \
	    "$(awk 'NR > 1 {print $3}' "$T/rows" | paste -sd' ')" "their states"
	assert_eq "$(spool status $(cat "$T/ids"))" "$(cat "$T/rows")" \
	    "the rows of the same IDs as arguments"
	spool status -l - < "$T/ids" > "$T/long" || fail "status -l -"
	assert_eq 2 "$(grep -c '^---$' "$T/long")" "separators of 3 long forms"
	assert_eq "$(spool status -l $(cat "$T/ids"))" "$(cat "$T/long")" \
	    "the long forms of the same IDs as arguments"
	assert_eq "$(spool path $(cat "$T/ids"))" "$(spool path - < "$T/ids")" \
	    "spool path -"
	# no arguments: the overview, standard input left alone
	(spool status > "$T/overview" && cat > "$T/rest") < "$T/ids" ||
	    fail "status"
	assert_match "^spoold: pid $SPOOLD_PID on " "$(head -1 "$T/overview")" \
	    "the overview"
	assert_eq "$(cat "$T/ids")" "$(cat "$T/rest")" "standard input after it"
	# "-" among IDs is no ID; a word on standard input that is none
	spool status "$(head -1 "$T/ids")" - > /dev/null 2> "$T/err"
	rc=$?
	assert_eq 2 "$rc" "exit status of an ID and -"
	assert_eq "spool: fatal: not a task ID: -" "$(cat "$T/err")"
	echo "$(head -1 "$T/ids") nope" | spool status - > /dev/null 2> "$T/err"
	rc=$?
	assert_eq 2 "$rc" "exit status of a word that is no ID"
	assert_eq "spool: fatal: not a task ID on stdin: nope" "$(cat "$T/err")"
}

# A task's SPOOL_DEP_DIRS names the directory of each of its
# dependencies: with many of them under a long spool path it is longer
# than one environment string may be (execve: 128 KiB), and a task
# accepted with them (up to 1024) could never start: "cannot start
# /bin/sh: Argument list too long", at every attempt.  It is left out
# then; SPOOL_DEPS is there, and spool path gives the directories.
test_a_fan_in_whose_dep_dirs_do_not_fit_the_environment_starts() {
	local long=$T i id
	for i in 1 2 3 4; do long=$long/$(printf 'd%.0s' $(seq 240)); done
	mkdir -p "$long" || fail "mkdir"
	SPOOL=$long/spool
	export SPOOL
	spool init >/dev/null || fail "spool init"
	fast_config
	start_spoold --local 2
	# 200 directories of about 1000 bytes each: 200 KB
	seq 200 | spool map -- true > "$T/ids" || fail "map"
	id=$(spool submit --after "$(paste -sd, "$T/ids")" -- sh -c \
	    'echo "$SPOOL_DEPS" | wc -w; spool path $SPOOL_DEPS | wc -l; echo "${SPOOL_DEP_DIRS-unset}"') ||
	    fail "submit"
	spool wait "$id" || fail "the fan-in task failed: $(field "$id" message)"
	assert_eq "200
200
unset" "$(task_stdout "$id")" "what the task found"
	assert_match "SPOOL_DEP_DIRS .* not set" "$(cat "$SPOOL"/log/local-*.log)" \
	    "the workers' logs"
	# with few dependencies it is set, as ever
	id=$(spool submit --after "$(head -2 "$T/ids" | paste -sd,)" -- sh -c \
	    'echo "$SPOOL_DEP_DIRS"') || fail "submit"
	spool wait "$id" || fail "the task after two failed"
	assert_eq "$SPOOL/tasks/0/1:$SPOOL/tasks/0/2" "$(task_stdout "$id")" \
	    "SPOOL_DEP_DIRS of two"
}

# A cancel request stays while a task it names is being stopped by its
# worker, and is looked at again at each rescan.  Only the IDs it still
# waits for are: the whole request was read again, and each of its
# final tasks whose page of the task table was freed cost a stat (here
# 4096 to 4600, cancelled while queued), at every rescan while one
# task was being stopped.  (Here, not across hosts: cancelling 4600
# tasks through sshfs takes over a minute, and what is counted is
# spoold's alone.)
test_a_kept_cancel_request_looks_again_only_at_what_it_waits_for() {
	local first n i more
	new_spool
	# the worker, stopped below, is not lost meanwhile
	sed -i 's/lost-timeout: .*/lost-timeout: 60s/; s/death-timeout: .*/death-timeout: 120s/' \
	    "$SPOOL/spool.yaml"
	# (rescans only: a submission taken in means a rescan was made)
	CKSPOOL_NO_INOTIFY=1 CKSPOOL_FSOP_STATS=$T/ops start_spoold
	start_worker w1 --cores 1
	# (it runs until cancelled, past the test's time limit: the steps
	# below, 4600 tasks taken in and cancelled, take longer on a slower
	# machine, and one that ended first was done, not cancelled)
	first=$(spool submit -- sleep 600) || fail "submit"
	wait_for 10 state_is "$first" running || fail "not running"
	seq 2 4600 | spool map -- true > "$T/ids" || fail "map"
	wait_for 60 taken_in 4600 || fail "map not taken in"
	# the worker does not stop its task yet: the request is kept
	kill -STOP "$WORKER_PID"
	{ echo "$first"; cat "$T/ids"; } | spool cancel 2>/dev/null
	wait_for 60 finished 4600 || fail "queued tasks not cancelled"
	for i in 1 2 3; do
		more=$(spool submit -- true) || fail "submit"
		wait_for 10 taken_in "$more" || fail "task $more not taken in"
	done
	assert_eq 1 "$(ls "$SPOOL/control" | wc -l)" "requests kept"
	kill -CONT "$WORKER_PID"
	wait_for 20 finished "$first" || fail "task $first not cancelled"
	assert_eq cancelled "$(field "$first" state)"
	wait_for 10 no_requests ||
	    fail "request not consumed: $(ls "$SPOOL/control")"
	stop_spoold
	n=$(fsop_count stat "$T"/ops.spoold.*)
	echo "spoold's stats: $n" >> "$T/report"
	[ "$n" -lt 500 ] || fail "spoold made $n stats"
}

# accepting/ holds a dropped file being accepted as ID.drop or
# ID.drop.NAME (bundle_drop_name); a stray file there whose name only
# holds ".drop" (5.dropx, 5.x.drop) is no task's, and spool status does
# not take task 5 for being submitted because of it.
test_status_takes_only_a_drop_name_for_a_dropped_file() {
	local name
	new_spool
	for name in 5.dropx 5.x.drop; do
		: > "$SPOOL/accepting/$name"
		assert_match "^5 +- +no-such-task" "$(spool status 5 | sed 1d)" \
		    "status of task 5 beside accepting/$name"
		rm "$SPOOL/accepting/$name"
	done
	for name in 5.drop 5.drop.job.sh; do
		: > "$SPOOL/accepting/$name"
		assert_match "^5 +- +submitted" "$(spool status 5 | sed 1d)" \
		    "status of task 5 beside accepting/$name"
		rm "$SPOOL/accepting/$name"
	done
}

# Finished tasks stay until their owner removes them; removing one by
# hand is allowed (spool-layout(5), tasks/): spoold and fsck do not
# need it, and the task reads as never submitted ("spool wait" refuses
# it as "spool purge" removed it: no such task, exit 2).
test_a_finished_task_removed_by_hand_reads_as_never_submitted() {
	new_spool
	start_spoold --local 1 --local-cores 1
	seq 3 | spool map -- echo > "$T/ids" || fail "map"
	spool wait $(cat "$T/ids") || fail "tasks"
	gone=$(sed -n 2p "$T/ids")
	# not before its bundle is gone: that still names it
	wait_for 10 dir_empty "$SPOOL/specs" || fail "bundle: $(ls "$SPOOL/specs")"
	rm -r "$(spool path "$gone")"
	assert_match "^$gone +- +unknown " "$(spool status "$gone" | sed 1d)" \
	    "status of the removed task"
	spool wait --timeout 10s "$gone" 2> "$T/err"
	assert_eq 2 $? "wait for the removed task"
	assert_match "no such task: $gone " "$(cat "$T/err")" "what spool wait says"
	id=$(spool submit -- echo after) || fail "submit after the removal"
	spool wait "$id" || fail "a task after the removal"
	spool fsck -q > "$T/out" 2>&1 || fail "fsck: $(cat "$T/out")"
	[ -f "$(spool path "$(sed -n 3p "$T/ids")")/result" ] ||
	    fail "another task's directory went too"
}

# Every program says the one version of ckspool (version.h), on stdout
# with status 0, and touches no spool to say it; spoold and ckworker
# also put it in their first lines, so that a log tells which version
# ran.
test_every_program_says_the_version() {
	local p opt
	for p in spool spoold ckworker spoolfs; do
		for opt in -V --version; do
			SPOOL=$T/none "$p" "$opt" > "$T/out" 2> "$T/err" ||
			    fail "$p $opt: status $?: $(cat "$T/err")"
			assert_eq "ckspool 0.1" "$(cat "$T/out")" "$p $opt"
			assert_eq "" "$(cat "$T/err")" "stderr of $p $opt"
		done
	done
	[ ! -e "$T/none" ] || fail "a --version made $T/none"
	new_spool
	start_spoold
	start_worker w1 --cores 1
	assert_match "spoold: started on .*, spool .*, ckspool 0\.1\$" \
	    "$(cat "$T/spoold.log")" "spoold's first line"
	assert_match "ckworker: registered as w1-.*, ckspool 0\.1\$" \
	    "$(cat "$T/worker-w1.log")" "the worker's"
}
