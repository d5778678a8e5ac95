# t_submit.sh - creating a spool and submitting to it, every way.
# across hosts: yes

test_init_creates_layout() {
	SPOOL=$T/s1
	out=$(spool -S "$SPOOL" init) || fail "init failed"
	assert_eq "$SPOOL" "$out" "init output"
	for d in tmp incoming accepting rejected specs tasks workers ids \
	    control requeued state lock gc log attempts; do
		[ -d "$SPOOL/$d" ] || fail "no $d/ in a new spool"
	done
	assert_eq "ckspool 1" "$(cat "$SPOOL/FORMAT")" "FORMAT"
	assert_eq 700 "$(stat -c %a "$SPOOL")" "spool mode"
	# idempotent, and $SPOOL works as well as -S
	SPOOL=$T/s1 spool init >/dev/null || fail "second init failed"
	# a non-empty directory that is not a spool is refused
	mkdir "$T/other" && touch "$T/other/data"
	if spool -S "$T/other" init 2>"$T/err"; then
		fail "init accepted a non-empty directory"
	fi
	assert_match "not empty and is not a spool" "$(cat "$T/err")"
	# opening something that is not a spool says how to make one
	if spool -S "$T/other" status 2>"$T/err"; then fail "status worked"; fi
	assert_match "not a spool .*spool -S .* init" "$(cat "$T/err")"
}

# The options before the command, short and long, as spool(1) lists
# them: help and the version go to stdout with status 0; an unknown one
# is a usage error (2), the usage on stderr and nothing on stdout.
test_top_level_options_short_and_long() {
	local opt rc
	SPOOL=$T/s1
	spool -S "$SPOOL" init > /dev/null || fail "init failed"
	for opt in -h --help help; do
		spool "$opt" > "$T/out" 2> "$T/err" || fail "spool $opt failed"
		assert_match "^usage: spool \[-S SPOOL\] COMMAND" "$(head -1 "$T/out")" \
		    "spool $opt"
		assert_eq "" "$(cat "$T/err")" "stderr of spool $opt"
	done
	for opt in -V --version; do
		assert_eq "ckspool 0.1" "$(spool "$opt")" "spool $opt"
	done
	unset SPOOL
	assert_eq 1 "$(spool --spool "$T/s1" submit -- true)" "--spool DIR"
	assert_match "submitted" "$(spool --spool="$T/s1" status 1)" "--spool=DIR"
	rc=0
	spool --bogus status > "$T/out" 2> "$T/err" || rc=$?
	assert_eq 2 "$rc" "exit status of an unknown option"
	assert_match "usage: spool" "$(cat "$T/err")" "usage after an unknown option"
	assert_eq "" "$(cat "$T/out")" "stdout after an unknown option"
}

test_open_refuses_unsafe_spool() {
	new_spool
	chmod 0777 "$SPOOL/incoming"
	if spool submit -- true 2>"$T/err"; then
		fail "submitted into a world-writable incoming/"
	fi
	assert_match "incoming: writable by everyone" "$(cat "$T/err")"
	chmod 0700 "$SPOOL/incoming"
	rmdir "$SPOOL/rejected" && ln -s /tmp "$SPOOL/rejected"
	if spool submit -- true 2>"$T/err"; then
		fail "opened a spool whose rejected/ is a symlink"
	fi
	assert_match "rejected: not a directory \(a symlink\?\)" "$(cat "$T/err")"
}

test_submit_prints_id_before_spoold_runs() {
	new_spool
	id=$(spool submit -- echo hello) || fail "submit failed"
	assert_eq 1 "$id" "first ID"
	id2=$(spool submit -- echo again)
	assert_eq 2 "$id2" "second ID"
	[ -f "$SPOOL/incoming/1.bundle" ] || fail "no incoming/1.bundle"
	assert_eq submitted "$(state_of 1)" "state before spoold"
	start_spoold --local 1
	spool wait 1 2 || fail "wait failed"
	assert_eq hello "$(task_stdout 1)"
	assert_eq again "$(task_stdout 2)"
	[ -z "$(ls "$SPOOL/incoming")" ] || fail "incoming/ not emptied"
}

# spool status of tasks from two bundles, asked in turn (each bundle is
# read once and its tasks kept: query.c): every task gets its own name,
# and its own state, submitted before spoold, queued or waiting after
test_status_of_tasks_from_two_bundles_in_turn() {
	new_spool
	printf '%s\n' x y z | spool map -n 'a-{}' -- true > "$T/a" ||
	    fail "map a"
	spool map -n 'b-{}' --after 1 -- true ::: x y z > "$T/b" || fail "map b"
	assert_eq "1 2 3 4 5 6" "$(cat "$T/a" "$T/b" | tr '\n' ' ' | sed 's/ $//')" "IDs"
	spool status 1 4 2 5 3 6 > "$T/st" || fail "status: $(cat "$T/st")"
	assert_eq "1 a-x submitted
4 b-x submitted
2 a-y submitted
5 b-y submitted
3 a-z submitted
6 b-z submitted" "$(awk 'NR > 1 { print $1, $2, $3 }' "$T/st")" "before spoold"
	start_spoold
	wait_for 10 taken_in 1 || fail "task 1 not taken in"
	wait_for 10 taken_in 4 || fail "task 4 not taken in"
	spool status 1 4 2 5 3 6 > "$T/st" || fail "status: $(cat "$T/st")"
	assert_eq "1 a-x queued
4 b-x waiting
2 a-y queued
5 b-y waiting
3 a-z queued
6 b-z waiting" "$(awk 'NR > 1 { print $1, $2, $3 }' "$T/st")" "with spoold"
}

# IDs that cannot be written where stdout goes are lost to the user:
# the submission stays made, and spool says so with status 111 instead
# of exiting 0 (a script reading its IDs from a file on a full disk).
# A stdout closed at the start (">&-") stays unwritable: no spool file
# takes its number; one closed stdin reads as empty.
test_ids_that_cannot_be_printed_are_an_error() {
	new_spool
	local rc
	spool submit -- echo full > /dev/full 2> "$T/err"
	rc=$?
	assert_eq 111 "$rc" "status with stdout on a full device"
	assert_match "^spool: .*write: stdout: No space left on device" "$(cat "$T/err")"
	[ -f "$SPOOL/incoming/1.bundle" ] || fail "the submission was not made"
	spool submit -- echo closed >&- 2> "$T/err"
	rc=$?
	assert_eq 111 "$rc" "status with stdout closed"
	assert_match "write: stdout: Bad file descriptor" "$(cat "$T/err")"
	[ -f "$SPOOL/incoming/2.bundle" ] || fail "the second submission was not made"
	# what it printed went nowhere, not into the spool
	! grep -rqx 2 "$SPOOL/incoming" "$SPOOL/ids" 2>/dev/null ||
	    fail "an ID was written into a spool file"
	# nothing printed, nothing lost: a closed stdout is no error
	spool cancel 2 >&-
	assert_eq 0 $? "status of a command that printed nothing"
	# a closed stdin is empty input, not a spool file read as one
	spool map -- echo <&- > "$T/ids"
	assert_eq 0 $? "status of map with stdin closed"
	assert_eq "" "$(cat "$T/ids")" "IDs of map with stdin closed"
	spool submit -- echo fine > "$T/id"
	assert_eq 0 $? "status of a submission that printed its ID"
	assert_eq 3 "$(cat "$T/id")"
}

# A bundle the CLI wrote (canonical, the spool owner's, private, one
# link) is accepted by moving it into specs/: the same file, no copy and
# no flush (accept.c: movable).  One that others may read is copied, so
# that specs/ holds only spoold's own private files.  Both run.
test_own_bundle_is_moved_into_specs_others_copied() {
	local ino1 ino2
	new_spool
	spool submit -- echo moved > /dev/null || fail "submit"
	spool submit -- echo copied > /dev/null || fail "submit"
	chmod 0640 "$SPOOL/incoming/2.bundle"
	ino1=$(stat -c %i "$SPOOL/incoming/1.bundle")
	ino2=$(stat -c %i "$SPOOL/incoming/2.bundle")
	start_spoold
	wait_for 10 state_is 2 queued || fail "not accepted: $(spool status 1 2)"
	assert_eq queued "$(state_of 1)" "state of 1"
	assert_eq "$ino1" "$(stat -c %i "$SPOOL/specs/1")" "specs/1 is the bundle moved"
	[ "$(stat -c %i "$SPOOL/specs/2")" != "$ino2" ] ||
	    fail "specs/2 is the group-readable bundle itself, not a copy"
	assert_eq 600 "$(stat -c %a "$SPOOL/specs/2")" "mode of the copy"
	wait_for 5 dir_empty "$SPOOL/accepting" || fail "accepting/ not emptied"
	dir_empty "$SPOOL/incoming" || fail "incoming/ not emptied"
	start_worker w --cores 1
	spool wait 1 2 || fail "tasks failed"
	assert_eq moved "$(task_stdout 1)"
	assert_eq copied "$(task_stdout 2)"
}

test_submit_options_reach_the_task() {
	new_spool
	start_spoold --local 1 --local-cores 2
	mkdir "$T/wd"
	id=$(spool submit --cores 2 --memory 64M --walltime 1:00 \
	    --priority 5 --retries 1 --name my-task --env GREETING=hola \
	    --env OTHER=x --cwd "$T/wd" -- \
	    sh -c 'echo "$GREETING $OTHER $(pwd) $SPOOL_TASK_ID $SPOOL_CORES $OMP_NUM_THREADS"')
	spool wait "$id" || fail "task failed"
	assert_eq "hola x $T/wd $id 2 2" "$(task_stdout "$id")" "task output"
	assert_eq 2 "$(spec_field "$id" cores)" cores
	assert_eq 67108864 "$(spec_field "$id" memory)" memory
	assert_eq 60 "$(spec_field "$id" walltime)" walltime
	assert_eq 5 "$(spec_field "$id" priority)" priority
	assert_eq 1 "$(spec_field "$id" retries)" retries
	assert_eq my-task "$(spec_field "$id" name)" name
	# a task asking for GPUs the only worker lacks waits, and bad
	# values are refused before any ID is used
	if spool submit --cores 0 -- true 2>"$T/err"; then fail "cores 0"; fi
	assert_match "cores must be at least 1" "$(cat "$T/err")"
	if spool submit --memory 4X -- true 2>"$T/err"; then fail "4X"; fi
	assert_match "unknown size unit" "$(cat "$T/err")"
	if spool submit --after 999 -- true 2>"$T/err"; then fail "after 999"; fi
	assert_match "no such task: 999" "$(cat "$T/err")"
	if spool submit --env 1BAD=x -- true 2>"$T/err"; then fail "env"; fi
	if spool submit --priority 5000 -- true 2>"$T/err"; then fail "prio"; fi
	next=$(spool submit -- true)
	assert_eq $((id + 1)) "$next" "refused submissions used no ID"
}

test_submit_yaml_and_script_files() {
	new_spool
	start_spoold --local 1 --local-cores 2
	cat > "$T/job.yaml" <<'EOF'
name: from-yaml
command: ["sh", "-c", "echo yaml $X $SPOOL_CORES"]
env:
  X: fortytwo
resources:
  cores: 2
  memory: 32M
retries: 1
EOF
	cat > "$T/job.sh" <<'EOF'
#!/bin/sh
#SPOOL --cores=2 --name script-job
#SPOOL --env "MSG=hello world" --walltime 5m
# an ordinary comment
echo "script: $MSG $SPOOL_CORES $(basename "$0")"
#SPOOL --name ignored-after-the-first-command
EOF
	printf 'command: echo shell string | tr a-z A-Z\n' > "$T/shell.yaml"
	y=$(spool submit "$T/job.yaml")
	s=$(spool submit "$T/job.sh")
	c=$(spool submit "$T/shell.yaml")
	# command-line options override the file's (as sbatch's do #SBATCH)
	o=$(spool submit --name overridden --cores 1 "$T/job.sh")
	spool wait "$y" "$s" "$c" "$o" || fail "a file task failed"
	assert_eq "yaml fortytwo 2" "$(task_stdout "$y")"
	assert_eq from-yaml "$(spec_field "$y" name)"
	assert_eq "script: hello world 2 script" "$(task_stdout "$s")"
	assert_eq script-job "$(spec_field "$s" name)"
	assert_eq 300 "$(spec_field "$s" walltime)"
	assert_eq "SHELL STRING" "$(task_stdout "$c")"
	assert_eq overridden "$(spec_field "$o" name)"
	assert_eq 1 "$(spec_field "$o" cores)"
	# errors name the file, the line and what is wrong
	printf '#!/bin/sh\n#SPOOL --cores=4 --frobnicate=1\ntrue\n' > "$T/bad.sh"
	if spool submit "$T/bad.sh" 2>"$T/err"; then fail "bad.sh accepted"; fi
	assert_match "bad.sh: line 2: #SPOOL --frobnicate=1: unknown option" \
	    "$(cat "$T/err")"
	printf 'command: [a]\nkores: 2\n' > "$T/bad.yaml"
	if spool submit "$T/bad.yaml" 2>"$T/err"; then fail "bad.yaml"; fi
	assert_match 'line 2, column 1: unknown key "kores"' "$(cat "$T/err")"
	# and from stdin
	id=$(printf 'command: [echo, stdin]\n' | spool submit -)
	spool wait "$id" || fail "stdin task"
	assert_eq stdin "$(task_stdout "$id")"
}

test_drop_files_with_cp() {
	new_spool
	start_spoold --local 1
	printf 'command: [echo, dropped-yaml]\n' > "$T/a.yaml"
	printf '#!/bin/sh\n#SPOOL --name drop-script\necho dropped-script\n' \
	    > "$T/b.sh"
	cp "$T/a.yaml" "$T/b.sh" "$SPOOL/incoming/"
	wait_for 20 dir_empty "$SPOOL/incoming" ||
	    fail "drops not taken: $(ls "$SPOOL/incoming")"
	wait_for 20 finished 1 || fail "task 1 did not finish"
	wait_for 20 finished 2 || fail "task 2 did not finish"
	out="$(task_stdout 1) $(task_stdout 2)"
	assert_match "dropped-yaml" "$out"
	assert_match "dropped-script" "$out"
	# the source file name is kept, and names a task by default
	names="$(spec_field 1 source) $(spec_field 2 source)"
	assert_match "a.yaml" "$names"
	assert_match "b.sh" "$names"
	assert_match "accepted incoming/a.yaml as task" "$(cat "$T/spoold.log")"
}

# A dropped file whose stat fails (EIO, ESTALE: not a file gone) is
# said, once while it lasts, and looked at again until it is taken: the
# failure was passed over in silence.  The file is held open until the
# failure is said, so that inotify does not tell it complete first.
test_a_dropped_file_whose_stat_fails_is_said_and_taken_later() {
	local id
	new_spool
	CKSPOOL_FAULT="count=all,stat-fails=late.yaml:EIO*3" start_spoold --local 1
	exec 3> "$SPOOL/incoming/late.yaml"
	printf 'command: [echo, late]\n' >&3
	wait_for 20 grep -q "stat: incoming/late.yaml: Input/output error (looking again later)" \
	    "$T/spoold.log" ||
	    { exec 3>&-; fail "the failed stat was not said: $(tail -3 "$T/spoold.log")"; }
	exec 3>&-
	wait_for 20 grep -q "accepted incoming/late.yaml as task" "$T/spoold.log" ||
	    fail "late.yaml never accepted: $(tail -3 "$T/spoold.log")"
	id=$(sed -n 's/.*accepted incoming\/late\.yaml as task //p' "$T/spoold.log")
	wait_for 20 finished "$id" || fail "task $id did not finish"
	assert_eq late "$(task_stdout "$id")"
	assert_eq 1 "$(grep -c "stat: incoming/late.yaml" "$T/spoold.log")" \
	    "times the failed stat was said"
}

# A dropped file still being written is not taken: spoold must have
# looked at it half written, and left it.  Across hosts spoold on A sees
# incoming/ through sshfs, whose cache shows a directory's change up to
# 1 s late: a check a few of its beats after the write could come
# before spoold had listed the file at all, and pass whatever spoold
# would do with it.  So a submission made after the file was written is
# waited for: the listing that took it held the half-written file.
# The settle time (60 s) is longer than the test's waits before its
# check together, so the file is not due there however slow the
# machine; a spoold restarted with a short one takes it, complete.
test_slow_writer_is_not_taken_early() {
	local writer m slow
	new_spool
	sed -i 's/settle: 1s/settle: 60s/' "$SPOOL/spool.yaml"
	start_spoold --local 1
	# a writer that pauses half way through (cp of a big file, NFS),
	# until told to go on
	( printf 'command: [echo,'
	  while [ ! -e "$T/go" ]; do sleep 0.05; done
	  printf ' slow]\n' ) > "$SPOOL/incoming/slow.yaml" &
	writer=$!
	track $writer
	wait_for 10 test -s "$SPOOL/incoming/slow.yaml" || fail "nothing written"
	m=$(spool submit -- echo marker) || fail "submit the marker"
	wait_for 20 finished "$m" || fail "the marker was not taken: $(state_of "$m")"
	[ -e "$SPOOL/incoming/slow.yaml" ] || fail "taken while being written"
	[ -z "$(ls "$SPOOL/rejected")" ] || fail "half a file was rejected"
	stop_spoold
	touch "$T/go"
	wait $writer
	sed -i 's/settle: 60s/settle: 1s/' "$SPOOL/spool.yaml"
	# (spoold reads it once, at its start; across hosts host A can
	# read its old text until its attribute cache, 1 s, runs out)
	wait_for 10 "${ON_A[@]}" grep -q "settle: 1s" "$SPOOL/spool.yaml" ||
	    fail "spool.yaml's new settle time not seen on spoold's host"
	start_spoold --local 1
	wait_for 20 grep -q "accepted incoming/slow.yaml as task" "$T/spoold.log" ||
	    fail "slow.yaml never accepted: $(tail -3 "$T/spoold.log")"
	slow=$(sed -n 's/.*accepted incoming\/slow\.yaml as task //p' "$T/spoold.log")
	wait_for 20 finished "$slow" || fail "task $slow did not finish"
	assert_eq slow "$(task_stdout "$slow")"
	[ -z "$(ls "$SPOOL/rejected")" ] || fail "rejected: $(cat "$SPOOL"/rejected/*.why)"
	# names starting with "." are never taken (the convention for
	# files being written), until renamed
	printf 'command: [echo, hidden]\n' > "$SPOOL/incoming/.tmp.yaml"
	mv "$SPOOL/incoming/.tmp.yaml" "$SPOOL/incoming/now.yaml"
	wait_for 20 finished $((slow + 1)) || fail "renamed-in file not taken"
}

# A dropped file waiting out its settle time (here one still held open:
# no close event) is looked at again when it can be taken, not listed
# over and over meanwhile: spoold once spun on incoming/ for the whole
# settle time (thousands of listings a second, 100% CPU).  Counted with
# spoold's own operation counters (CKSPOOL_FSOP_STATS): over its whole
# run here it lists a few dozen times (recovery, the rescans that find
# a directory changed); spinning, it listed thousands of times.
test_settling_file_is_not_listed_over_and_over() {
	local n
	new_spool
	CKSPOOL_FSOP_STATS=$T/ops start_spoold
	exec 3> "$SPOOL/incoming/held.yaml"
	printf 'command: [echo, held]\n' >&3
	wait_for 20 dir_empty "$SPOOL/incoming" ||
	    fail "a file held open was not taken after the settle time"
	exec 3>&-
	wait_for 10 taken_in 1 || fail "task 1 not taken in"
	assert_match "accepted incoming/held.yaml as task 1" \
	    "$(cat "$T/spoold.log")"
	stop_spoold
	n=$(awk '$1 == "list" { print $2 }' "$T"/ops.spoold.*)
	echo "spoold listed directories $n times" >> "$T/report"
	[ "$n" -le 100 ] || fail "spoold listed directories $n times"
}

# spoold remembers a dropped file that inotify saw closed as complete,
# and must forget it once the file is taken or gone: a mark left behind
# (for every bundle ever submitted, and for a file removed after its
# close) made the table grow for good, and made a later file of the same
# name taken at once, before it was complete.  spoold is stopped
# (SIGSTOP) while a file comes and goes, so that it sees the close only
# after the file is gone; the bundle submitted next is taken in the pass
# that sees the new, half-written file of the same name.
test_a_dropped_file_gone_after_its_close_is_forgotten() {
	local bundle
	new_spool
	if hosts_mode || { [ -n "${CKSPOOL_NO_INOTIFY:-}" ] &&
	    [ "$CKSPOOL_NO_INOTIFY" != 0 ]; }; then
		skip_row "the whole test" "it is about what inotify reports"
		return 0
	fi
	# (long: the half-written file must not settle meanwhile)
	sed -i 's/settle: 1s/settle: 60s/' "$SPOOL/spool.yaml"
	start_spoold
	kill -STOP "$SPOOLD_PID"
	printf 'command: [echo, first]\n' > "$SPOOL/incoming/x.yaml"
	rm "$SPOOL/incoming/x.yaml"
	kill -CONT "$SPOOLD_PID"
	bundle=$(spool submit -- echo marker) || fail "submit"
	wait_for 10 taken_in "$bundle" || fail "task $bundle not taken in"
	kill -STOP "$SPOOLD_PID"
	exec 3> "$SPOOL/incoming/x.yaml"
	printf 'command: [echo,' >&3
	kill -CONT "$SPOOLD_PID"
	bundle=$(spool submit -- echo marker) || fail "submit"
	wait_for 10 taken_in "$bundle" || fail "task $bundle not taken in"
	[ -e "$SPOOL/incoming/x.yaml" ] ||
	    fail "a half-written file was taken: $(cat "$SPOOL"/rejected/*.why 2>/dev/null)"
	printf ' second]\n' >&3
	exec 3>&-
	wait_for 10 dir_empty "$SPOOL/incoming" || fail "x.yaml not taken"
	dir_empty "$SPOOL/rejected" ||
	    fail "rejected: $(cat "$SPOOL"/rejected/*.why)"
	# spoold says so once the file has left incoming/: a moment later
	wait_for 10 grep -q "accepted incoming/x.yaml as task" "$T/spoold.log" ||
	    fail "not accepted: $(tail -3 "$T/spoold.log")"
}

# what a refusal must leave alone: everything but rejected/ and the
# daemon's own logs, journal, summary, lease and workers (names, file
# sizes, link targets)
spool_state() {
	(cd "$SPOOL" && find ids specs tasks incoming accepting tmp \
	    control requeued attempts gc \( -type f -printf '%p f %s\n' \) -o \
	    -printf '%p %y %l\n' | sort)
}

# spool_state_back BEFORE WHAT: the spool outside rejected/ is as BEFORE.
# A running spoold and its workers publish their summary and beats
# through tmp/ (a temporary file there for the moment of each write,
# over sshfs for some milliseconds), so the state is read again until it
# matches: anything the refusals left behind or changed stays, and fails.
spool_state_is() {
	[ "$(spool_state)" = "$1" ]
}
spool_state_back() {
	wait_for 10 spool_state_is "$1" ||
	    assert_eq "$1" "$(spool_state)" "$2"
}

# The table of hostile files dropped into incoming/ (DESIGN.md invariant
# 5): FILE|how it is made|what its .why must say.  Each is refused with
# one readable line, moved to rejected/, and changes nothing else: no
# task, no ID (the claim chain is as before), nothing left in incoming/.
test_malformed_submissions_are_rejected() {
	local deep table n name make expect got
	new_spool
	deep=$(printf '%.0s[' $(seq 20))1$(printf '%.0s]' $(seq 20))
	printf 'command: [true]\n' > "$T/real.yaml"
	table="syntax.yaml|printf 'command: [echo\n'|syntax.yaml: line 2, column 1: .*
typo.yaml|printf 'comand: [echo, x]\n'|typo.yaml: line 1, column 1: unknown key \"comand\" \(known: command, .*\)
unknown-res.yaml|printf 'command: [true]\nresources: {cpus: 2}\n'|unknown resource \"cpus\"
alias.yaml|printf 'a: &x [1]\nb: *x\n'|alias.yaml: line 1, column 4: YAML anchors are not allowed
alias-only.yaml|printf 'command: *x\n'|line 1, column 10: .*(alias|anchor)
bomb.yaml|printf 'a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n'|YAML anchors are not allowed
tag.yaml|printf 'command: !!python/object:os.system [true]\n'|YAML tags are not allowed
deep.yaml|printf 'command: [true]\nx: %s\n' '$deep'|deep.yaml: line 2, column 19: YAML nested deeper than 16
twodocs.yaml|printf -- '---\ncommand: [a]\n---\ncommand: [b]\n'|more than one YAML document
dup.yaml|printf 'command: [true]\ncommand: [rm, -rf, /]\n'|duplicate key \"command\"
neg.yaml|printf 'command: [true]\ncores: -3\n'|cores: negative value
zero-cores.yaml|printf 'command: [true]\ncores: 0\n'|cores must be at least 1
huge-cores.yaml|printf 'command: [true]\ncores: 100000\n'|cores: number too large
huge-mem.yaml|printf 'command: [true]\nresources: {memory: 5P}\n'|memory larger than 1 PiB
neg-mem.yaml|printf 'command: [true]\nmemory: -1G\n'|memory: .*\"-1G\"
huge-gpus.yaml|printf 'command: [true]\ngpus: 1e9\n'|gpus: trailing garbage
neg-wall.yaml|printf 'command: [true]\nwalltime: -5\n'|walltime: bad duration
long-wall.yaml|printf 'command: [true]\nwalltime: 9999-00:00:00\n'|walltime longer than a year
prio.yaml|printf 'command: [true]\npriority: 99999999999999999999\n'|priority must be an integer from -1000 to 1000
slash.yaml|printf 'command: [true]\nname: a/b\n'|name: name must be .*\"a/b\"
dotdot.yaml|printf 'command: [true]\nname: ..\n'|name: name must be .*\"\.\.\"
nl-name.yaml|printf 'command: [true]\nname: \"a\\\\nb\"\n'|name: name must be .*\"a\\\\nb\"
ctl-name.yaml|printf 'command: [true]\nname: \"a\\\\x1b[2Jb\"\n'|name: name must be .*\"a\\\\x1b\[2Jb\"
cwd.yaml|printf 'command: [true]\ncwd: ../etc\n'|cwd must be an absolute path
env.yaml|printf 'command: [true]\nenv: {\"A B\": 1}\n'|env \"A B\": env must be NAME=VALUE
nodep.yaml|printf 'command: [true]\nafter: [99999]\n'|after: no such task: 99999
self.yaml|printf 'command: [true]\nafter: [1]\n'|after: no such task: 1 .*cycle
dep.sh|printf '#!/bin/sh\n#SPOOL --after=1,99999\ntrue\n'|dep.sh: after: no such task: 1 
spool-bad.sh|printf '#!/bin/sh\n#SPOOL --cores=-1\ntrue\n'|spool-bad.sh: line 2: #SPOOL --cores=-1: negative value
spool-quote.sh|printf '#!/bin/sh\n#SPOOL --name \"x\ntrue\n'|line 2: #SPOOL --name: unbalanced quote
empty.yaml|printf ''|empty task file
notask.yaml|printf 'just some words\n'|not a task: expected a YAML mapping
huge.yaml|big|huge.yaml: file larger than 1048576 bytes
sparse.yaml|truncate -s 1G|sparse.yaml: file larger than 1048576 bytes
binary.yaml|printf 'bin\000ary'|binary.yaml: binary file
garbage.bin|head -c 4096 /dev/urandom|garbage.bin: (binary file|line [0-9]+|.*YAML|not a task)
fifo.yaml|mkfifo|fifo.yaml: not a regular file
dir.yaml|mkdir|dir.yaml: (is a directory|not a regular file)
link.yaml|ln -s /etc/passwd|link.yaml: is a symbolic link
dangling.yaml|ln -s /nonexistent|dangling.yaml: is a symbolic link
hardlink.yaml|ln '$T/real.yaml'|hardlink.yaml: has 2 hard links
nobody.yaml|chown-nobody|nobody.yaml: owned by another user \(uid 65534\)"
	id -u nobody >/dev/null || fail "no user nobody to own a file"
	if hosts_mode; then
		skip_row "hardlink.yaml" "across hosts, sshfs reports one link for every file (SFTP carries no link count): a hard link cannot be told from a file there (NFS reports link counts); doc/shared-storage.md, section 2"
		table=$(printf '%s\n' "$table" | grep -v '^hardlink\.yaml|')
	fi
	before=$(spool_state)
	n=0
	while IFS='|' read -r name make expect; do
		n=$((n + 1))
		case $make in
		mkfifo) mkfifo "$SPOOL/incoming/$name" ;;
		mkdir) mkdir "$SPOOL/incoming/$name" ;;
		big) head -c 2000000 /dev/zero | tr '\0' x \
			> "$SPOOL/incoming/$name" ;;
		truncate*) $make "$SPOOL/incoming/$name" ;;
		"ln -s "*) ln -s "${make#ln -s }" "$SPOOL/incoming/$name" ;;
		"ln "*) eval "ln ${make#ln } \"\$SPOOL/incoming/\$name\"" ;;
		chown-nobody) printf 'command: [true]\n' > "$T/$name" &&
			chown nobody "$T/$name" && mv "$T/$name" "$SPOOL/incoming/" ;;
		*) eval "$make" > "$SPOOL/incoming/$name" ;;
		esac || fail "could not make $name"
	done <<EOF
$table
EOF
	# file names a person cannot read safely: newline, tab, escape
	printf 'command: [true]\n' > "$SPOOL/incoming/new
line.yaml"
	printf 'command: [true]\n' > "$SPOOL/incoming/tab	x.yaml"
	printf 'command: [true]\n' > "$SPOOL/incoming/esc$(printf '\033')[2J.yaml"
	n=$((n + 3))
	start_spoold --local 1
	wait_for 60 rejected_at_least $n ||
	    fail "not all $n rejected: $(ls "$SPOOL/rejected")"
	while IFS='|' read -r name make expect; do
		[ -e "$SPOOL/rejected/$name.why" ] || fail "no rejected/$name.why"
		got=$(cat "$SPOOL/rejected/$name.why")
		assert_match "^$name: " "$got" "$name.why"
		assert_match "$expect" "$got" "$name.why"
		assert_eq 1 "$(wc -l < "$SPOOL/rejected/$name.why")" "$name.why lines"
		[ -e "$SPOOL/rejected/$name" ] || [ -L "$SPOOL/rejected/$name" ] ||
		    fail "rejected/$name missing"
	done <<EOF
$table
EOF
	# the odd names: one escaped line each, the file kept under a safe name
	got=$(cat "$SPOOL"/rejected/badname.*.why)
	assert_eq 3 "$(printf '%s\n' "$got" | wc -l)" "lines of the bad names' .why"
	assert_match '^new\\nline\.yaml: file name contains control characters' "$got"
	assert_match '^tab\\tx\.yaml: file name contains control' "$got"
	assert_match '^esc\\x1b\[2J\.yaml: file name contains control' "$got"
	assert_eq 3 "$(ls "$SPOOL"/rejected/badname.* | grep -vc '\.why$')" \
	    "bad names kept"
	# nothing else changed: no task, no ID claimed, incoming/ empty
	spool_state_back "$before" "spool outside rejected/"
	[ -z "$(ls "$SPOOL/incoming")" ] || fail "incoming/ not empty"
	# the daemon kept running and still takes good work, with ID 1
	id=$(spool submit -- echo still-alive)
	assert_eq 1 "$id" "first ID after the refusals"
	spool wait "$id" || fail "good task after bad ones"
	assert_eq still-alive "$(task_stdout "$id")"
	kill -0 "$SPOOLD_PID" || fail "spoold died"
	if grep -q '^line\.yaml' "$T/spoold.log"; then
		fail "a file name broke a log line"
	fi
}

# The same through "spool submit": a refused submission prints why,
# exits 2 and claims no ID (what it leaves is what was there).  Files
# named on the command line are read with the caller's own rights, so
# a symbolic link to one's own job file is fine there (doc/design.md,
# section 11).
test_bad_cli_submissions_are_refused() {
	local deep n=0 args expect rc a b l
	new_spool
	deep=$(printf '%.0s[' $(seq 20))1$(printf '%.0s]' $(seq 20))
	printf 'a: &x [1]\nb: *x\n' > "$T/alias.yaml"
	printf 'command: [true]\nx: %s\n' "$deep" > "$T/deep.yaml"
	printf 'comand: [true]\n' > "$T/typo.yaml"
	printf 'bin\000ary' > "$T/binary.yaml"
	truncate -s 1G "$T/sparse.yaml"
	printf '#!/bin/sh\n#SPOOL --after 1\ntrue\n' > "$T/self.sh"
	before=$(spool_state)
	while IFS='|' read -r args expect; do
		n=$((n + 1))
		rc=0
		eval "spool submit $args" >"$T/out" 2>"$T/err" || rc=$?
		assert_eq 2 "$rc" "exit status of: spool submit $args"
		assert_match "$expect" "$(cat "$T/err")" "spool submit $args"
		assert_eq "" "$(cat "$T/out")" "output of a refusal"
	done <<'EOF'
--bogus -- true|spool submit: (unrecognized|invalid) option
--name a/b -- true|--name a/b: name must be
--name .. -- true|--name \.\.: name must be
--name "$(printf 'a\nb')" -- true|name must be
--name "$(printf 'a\033b')" -- true|name must be
--cores -1 -- true|--cores -1: negative value
--cores 0 -- true|cores must be at least 1
--cores 1000000 -- true|number too large
--memory 2E -- true|memory
--gpus 65 -- true|--gpus 65: number too large
--walltime -1 -- true|bad duration
--priority 5000 -- true|priority must be an integer
--retries 1000 -- true|retries must be
--after 99999 -- true|after: no such task: 99999
--after 1 -- true|after: no such task: 1
--after 0 -- true|after must be a comma-separated list
--after ../1 -- true|after must be a comma-separated list
--env 'A B=1' -- true|env must be NAME=VALUE
--cwd rel/dir -- true|cwd must be an absolute path
"$T/alias.yaml"|alias.yaml: line 1, column 4: YAML anchors are not allowed
"$T/deep.yaml"|YAML nested deeper than 16
"$T/typo.yaml"|unknown key "comand"
"$T/binary.yaml"|binary file
"$T/sparse.yaml"|sparse.yaml: file larger than 1048576 bytes
"$T/self.sh"|after: no such task: 1
EOF
	spool_state_back "$before" "spool after $n refusals"
	# one's own task file through a symbolic link: read, not refused
	printf 'command: [echo, linked]\n' > "$T/good.yaml"
	ln -s "$T/good.yaml" "$T/link.yaml"
	l=$(spool submit "$T/link.yaml") || fail "a link to one's own task file"
	# a dependency cycle cannot be submitted: IDs are claimed in order and
	# a task depends only on lower ones.  A bundle edited by hand so that
	# its two tasks wait on each other is refused whole by spoold, and
	# both IDs get a rejected result (their claim exists).
	spool map -- echo ::: a b > "$T/ids" || fail "spool map"
	a=$(sed -n 1p "$T/ids")
	b=$(sed -n 2p "$T/ids")
	sed -i "s/^id: $a\$/id: $a\nafter: [$b]/; s/^id: $b\$/id: $b\nafter: [$a]/" \
	    "$SPOOL/incoming/$a.bundle"
	grep -q "^after: \[$b\]" "$SPOOL/incoming/$a.bundle" || fail "edit the bundle"
	start_spoold --local 1
	spool wait "$l" || fail "the linked task"
	assert_eq linked "$(task_stdout "$l")"
	spool wait "$a" "$b"
	assert_eq rejected "$(field "$a" state)"
	assert_eq rejected "$(field "$b" state)"
	assert_match "task $a: dependency on a task that was not submitted before" \
	    "$(field "$a" message)"
	assert_match "cycle" "$(cat "$SPOOL/rejected/$a.bundle.why")"
	[ ! -e "$SPOOL/specs/$a" ] || fail "a task of the cycle was accepted"
}

# state/summary's rejected counts refused submissions per task: each ID
# of a refused bundle (each gets a rejected result), a refused file
# without IDs once.  A refused bundle of N tasks once counted N + 1 (its
# file, then each ID).
test_a_refused_bundle_counts_its_tasks_once_in_the_summary() {
	new_spool
	spool map -- echo ::: a b c > "$T/ids" || fail "map"
	sed -i 's/^cores: 1$/cores: 0x10/' "$SPOOL"/incoming/*.bundle
	printf 'command: [echo, [nested]\n' > "$SPOOL/incoming/bad.yaml"
	start_spoold
	spool wait < "$T/ids" && fail "the tampered tasks succeeded"
	wait_for 10 test -e "$SPOOL/rejected/bad.yaml.why" ||
	    fail "bad.yaml not refused"
	stop_spoold
	assert_eq 4 "$(summary_field rejected)" \
	    "rejected in the summary (3 tasks and a file)"
}

test_tampered_bundle_is_refused_with_results() {
	new_spool
	id=$(spool submit -- echo original)
	# someone edits the CLI's bundle into something invalid
	sed -i 's/^cores: 1$/cores: 0x10/' "$SPOOL/incoming/$id.bundle"
	# and forges a bundle for IDs that were never claimed
	sed "s/^first: $id/first: 500/; s/^id: $id/id: 500/; s/0x10/1/" \
	    "$SPOOL/incoming/$id.bundle" > "$SPOOL/incoming/.f"
	mv "$SPOOL/incoming/.f" "$SPOOL/incoming/500.bundle"
	start_spoold --local 1
	spool wait "$id"
	rc=$?
	assert_eq 65 "$rc" "wait status of a rejected task"
	assert_eq rejected "$(field "$id" state)"
	assert_match "not an unsigned integer" "$(field "$id" message)"
	wait_for 10 test -e "$SPOOL/rejected/500.bundle.why" || fail "forged bundle"
	assert_match "never claimed" "$(cat "$SPOOL/rejected/500.bundle.why")"
	[ ! -e "$SPOOL/tasks/0/500" ] || fail "forged IDs got results"
	# a refused bundle's IDs have a result and no spec: not damage
	stop_spoold
	spool fsck --settled > "$T/fsck" 2>&1 || fail "fsck: $(cat "$T/fsck")"
}

# A bundle is judged a record at a time (spool-layout(5), Bundles): a
# 1 GiB sparse one, under its submitter's own claim or under none, is
# refused at its first record longer than a task record can be, and
# spoold never holds it in memory.  spoold read each whole first: 1 GiB
# of resident memory for one file that anyone who may submit can make.
test_a_huge_sparse_bundle_is_refused_without_reading_it_whole() {
	local id hwm
	new_spool
	id=$(spool submit -- true) || fail "submit"
	truncate -s 1G "$SPOOL/incoming/$id.bundle" || fail "truncate"
	truncate -s 1G "$SPOOL/incoming/.hole" &&
	    mv "$SPOOL/incoming/.hole" "$SPOOL/incoming/77.bundle" || fail "mv"
	start_spoold
	wait_for 30 test -e "$SPOOL/rejected/77.bundle.why" ||
	    fail "77.bundle not refused"
	spool wait "$id"
	assert_eq 65 $? "wait status of the claimed bundle's task"
	hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$SPOOLD_PID/status")
	[ -n "$hwm" ] && [ "$hwm" -lt 262144 ] ||
	    fail "spoold's peak resident memory: ${hwm:-?} kB"
	assert_match "^77\.bundle: line 1: record longer than 13 MiB" \
	    "$(cat "$SPOOL/rejected/77.bundle.why")" "the unclaimed one"
	assert_match "^$id\.bundle: line 6: record longer than 13 MiB" \
	    "$(cat "$SPOOL/rejected/$id.bundle.why")" "the claimed one"
	dir_empty "$SPOOL/specs" || fail "specs/: $(ls "$SPOOL/specs")"
	wait_for 10 temp_areas_empty || fail "left: $(temp_areas_list)"
}

# Bundles that spoold copies (group-readable), 40 refused at their
# first line and 40 accepted: the canonical copies it began in tmp/ for
# the refused ones are removed, and across hosts not left behind as
# sshfs's .fuse_hiddenNNN (removed after its close, the removal could
# meet the close's release on its way: libfuse issue 746; 6 to 9 of the
# 40 stayed), nor are the accepted ones' sources in accepting/.
test_copied_bundles_leave_nothing_in_the_temporary_areas() {
	local i last
	new_spool
	for i in $(seq 40); do
		last=$(spool submit -- true) || fail "submit"
	done
	chmod 0640 "$SPOOL"/incoming/*.bundle
	for i in $(seq 101 140); do
		printf 'not a bundle\n' > "$SPOOL/incoming/.b"
		chmod 0644 "$SPOOL/incoming/.b"
		mv "$SPOOL/incoming/.b" "$SPOOL/incoming/$i.bundle"
	done
	start_spoold
	wait_for 30 rejected_at_least 40 ||
	    fail "refused: $(ls "$SPOOL/rejected" | grep -c '\.why$') of 40"
	assert_match "^140\.bundle: line 1: " \
	    "$(cat "$SPOOL/rejected/140.bundle.why")" "why 140 was refused"
	wait_for 30 state_is "$last" queued ||
	    fail "task $last is $(state_of "$last")"
	wait_for 10 temp_areas_empty || fail "left: $(temp_areas_list)"
}

# spool map's largest chunk, 4096 tasks of 700 bytes (several pieces of
# the reader, bundle.h), made group-readable so that spoold copies it
# (its canonical text written to tmp/ a piece at a time) rather than
# moving it: accepted whole, specs/ holds the bytes the CLI wrote, and
# spoold finds each task's record where it indexed it: cancelled, the
# first, one in the middle and the last get their own spec from it.
test_a_largest_map_chunk_is_accepted_by_copy() {
	local b n id
	new_spool
	seq -f "%0600g" 4096 | spool map -- echo {} > "$T/ids" || fail "map"
	assert_eq 4096 "$(wc -l < "$T/ids")" "IDs printed"
	b=$(ls "$SPOOL/incoming")
	cp "$SPOOL/incoming/$b" "$T/cli.bundle"
	chmod 0640 "$SPOOL/incoming/$b"
	start_spoold
	wait_for 30 state_is "$(tail -1 "$T/ids")" queued ||
	    fail "not accepted: $(tail -3 "$T/spoold.log")"
	cmp "$T/cli.bundle" "$SPOOL/specs/${b%.bundle}" ||
	    fail "specs/${b%.bundle} is not what the CLI wrote"
	wait_for 10 temp_areas_empty || fail "left: $(temp_areas_list)"
	sed -n '1p; 2048p; 4096p' "$T/ids" | spool cancel || fail "cancel"
	for n in 1 2048 4096; do
		id=$(sed -n "${n}p" "$T/ids")
		wait_for 10 finished "$id" || fail "$id not cancelled"
		assert_eq "[\"echo\", \"$(printf '%0600d' "$n")\"]" \
		    "$(spec_field "$id" argv)" "spec of task $n of the chunk"
	done
}

# A refused file named NAME.why would land on the reason of a refused
# NAME (in a shared spool, another user's), its text in place of
# spoold's: it is kept under a made-up why.* name instead.
test_refused_file_named_why_keeps_the_other_reason() {
	local got
	new_spool
	start_spoold
	printf 'bogus: 1\n' > "$SPOOL/incoming/job.yaml"
	wait_for 20 rejected_at_least 1 || fail "job.yaml not refused"
	printf 'run this to fix it\n' > "$SPOOL/incoming/job.yaml.why"
	wait_for 20 rejected_at_least 2 || fail "job.yaml.why not refused"
	assert_match '^job\.yaml: line 1, column 1: unknown key "bogus"' \
	    "$(cat "$SPOOL/rejected/job.yaml.why")" "rejected/job.yaml.why"
	got=$(cat "$SPOOL"/rejected/why.*.why) || fail "no why.*.why"
	assert_match '^job\.yaml\.why: line 1, column 1: ' "$got" "why.*.why"
	assert_eq "run this to fix it" \
	    "$(cat $(ls -d "$SPOOL"/rejected/why.* | grep -v '\.why$'))" \
	    "the refused job.yaml.why, kept"
}

# A task may depend on at most 1024 others.  Refused, the message
# quoted the whole --after list and was cut at 2048 bytes before the
# reason: "spool: fatal: --after 4,5,6,...,53" and nothing else.
test_too_many_dependencies_are_refused_saying_so() {
	local rc=0 before
	new_spool
	before=$(spool_state)
	spool submit --after "$(seq -s, 1025)" -- true >"$T/out" 2>"$T/err" ||
	    rc=$?
	assert_eq 2 "$rc" "exit status"
	assert_match "^spool: fatal: --after 1,2,3,.*: too many dependencies \(at most 1024\)$" \
	    "$(cat "$T/err")" "the refusal"
	[ "$(wc -c < "$T/err")" -lt 200 ] ||
	    fail "the refusal quotes the whole list: $(wc -c < "$T/err") bytes"
	printf 'command: [true]\nafter: [%s]\n' "$(seq -s, 1025)" > "$T/fan.yaml"
	rc=0
	spool submit "$T/fan.yaml" >"$T/out" 2>"$T/err" || rc=$?
	assert_eq 2 "$rc" "exit status for a task file"
	assert_match "too many dependencies \(at most 1024\)" "$(cat "$T/err")" \
	    "the refusal of a task file"
	spool_state_back "$before" "spool after the refusals"
}

# One argument, a command string or one env variable longer than Linux
# takes in an execve(2) (128 KiB with its NUL) was accepted, given an
# ID, and failed at every attempt: "cannot start /usr/bin/echo:
# Argument list too long".  A task file (or a spool map input) is
# where one comes from: a shell cannot pass it to spool.
test_a_string_longer_than_execve_takes_is_refused() {
	local rc before big
	new_spool
	before=$(spool_state)
	big=$(head -c 140000 /dev/zero | tr '\0' x)
	printf 'command: ["echo", "%s"]\n' "$big" > "$T/arg.yaml"
	printf 'command: "echo %s"\n' "$big" > "$T/shell.yaml"
	printf 'command: [true]\nenv:\n  X: "%s"\n' "$big" > "$T/env.yaml"
	for f in arg shell env; do
		rc=0
		spool submit "$T/$f.yaml" >"$T/out" 2>"$T/err" || rc=$?
		assert_eq 2 "$rc" "exit status for $f.yaml"
		assert_match "longer than 128 KiB" "$(cat "$T/err")" "refusal of $f.yaml"
		assert_eq "" "$(cat "$T/out")" "output of a refusal"
	done
	rc=0
	echo "$big" | spool map -- echo >"$T/out" 2>"$T/err" || rc=$?
	assert_eq 2 "$rc" "exit status of the map"
	assert_match "input 1: .*longer than 128 KiB" "$(cat "$T/err")" "the map's refusal"
	spool_state_back "$before" "spool after the refusals"
	# the largest that execve takes runs
	start_spoold --local 1
	big=$(head -c 131071 /dev/zero | tr '\0' x)
	printf 'command: ["sh", "-c", "echo ${#1}", "sh", "%s"]\n' "$big" > "$T/max.yaml"
	id=$(spool submit "$T/max.yaml") || fail "the largest argument refused"
	spool wait "$id" || fail "the largest argument: $(field "$id" message)"
	assert_eq 131071 "$(task_stdout "$id")"
}
