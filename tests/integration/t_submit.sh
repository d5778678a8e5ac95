# t_submit.sh - creating a spool and submitting to it, every way.

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

test_open_refuses_unsafe_spool() {
	new_spool
	chmod 0777 "$SPOOL/incoming"
	if spool submit -- true 2>"$T/err"; then
		fail "submitted into a world-writable incoming/"
	fi
	assert_match "incoming: writable by others" "$(cat "$T/err")"
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

test_slow_writer_is_not_taken_early() {
	new_spool
	fast_config "  # long enough to outlast the writer's pause
"
	sed -i 's/settle: 1s/settle: 3s/' "$SPOOL/spool.yaml"
	start_spoold --local 1
	# a writer that pauses half way through (cp of a big file, NFS)
	( printf 'command: [echo,'; sleep 1.5; printf ' slow]\n' ) \
	    > "$SPOOL/incoming/slow.yaml" &
	writer=$!
	track $writer
	sleep 1	# sample while the writer is paused, mid-file
	[ -e "$SPOOL/incoming/slow.yaml" ] || fail "taken while being written"
	[ -z "$(ls "$SPOOL/rejected")" ] || fail "half a file was rejected"
	wait $writer
	wait_for 20 finished 1 || fail "slow.yaml never accepted"
	assert_eq slow "$(task_stdout 1)"
	[ -z "$(ls "$SPOOL/rejected")" ] || fail "rejected: $(cat "$SPOOL"/rejected/*.why)"
	# names starting with "." are never taken (the convention for
	# files being written), until renamed
	printf 'command: [echo, hidden]\n' > "$SPOOL/incoming/.tmp.yaml"
	mv "$SPOOL/incoming/.tmp.yaml" "$SPOOL/incoming/now.yaml"
	wait_for 20 finished 2 || fail "renamed-in file not taken"
}

test_malformed_submissions_are_rejected() {
	new_spool
	start_spoold --local 1
	printf 'command: [echo\n' > "$SPOOL/incoming/syntax.yaml"
	printf 'comand: [echo, x]\n' > "$SPOOL/incoming/typo.yaml"
	printf 'a: &x [1]\nb: *x\n' > "$SPOOL/incoming/alias.yaml"
	printf 'command: [true]\ncores: -3\n' > "$SPOOL/incoming/neg.yaml"
	printf '#!/bin/sh\n#SPOOL --after=1,99999\ntrue\n' > "$SPOOL/incoming/dep.sh"
	head -c 2000000 /dev/zero | tr '\0' 'x' > "$SPOOL/incoming/huge.yaml"
	printf 'bin\000ary' > "$SPOOL/incoming/binary.yaml"
	mkfifo "$SPOOL/incoming/fifo.yaml"
	ln -s /etc/passwd "$SPOOL/incoming/link.yaml"
	printf 'command: [true]\n' > "$T/real.yaml"
	ln "$T/real.yaml" "$SPOOL/incoming/hardlink.yaml"
	wait_for 30 rejected_at_least 10 ||
	    fail "not all rejected: $(ls "$SPOOL/rejected")"
	why() { cat "$SPOOL/rejected/$1.why"; }
	assert_match "syntax.yaml: line 2, column 1: .*" "$(why syntax.yaml)"
	assert_match 'typo.yaml: line 1, column 1: unknown key "comand"' "$(why typo.yaml)"
	assert_match "alias.yaml: line 1, column 4: YAML anchors are not allowed" "$(why alias.yaml)"
	assert_match "cores: negative value" "$(why neg.yaml)"
	assert_match "dep.sh: .*(not submitted before|cycle)" "$(why dep.sh)"
	assert_match "huge.yaml: file larger than" "$(why huge.yaml)"
	assert_match "binary.yaml: binary file" "$(why binary.yaml)"
	assert_match "fifo.yaml: not a regular file" "$(why fifo.yaml)"
	assert_match "link.yaml: is a symbolic link" "$(why link.yaml)"
	assert_match "hardlink.yaml: has 2 hard links" "$(why hardlink.yaml)"
	# each refused file was moved aside, one line each, no task made
	for f in syntax typo alias neg huge binary fifo link hardlink; do
		[ -e "$SPOOL/rejected/$f.yaml" ] || [ -L "$SPOOL/rejected/$f.yaml" ] ||
		    fail "rejected/$f.yaml missing"
		assert_eq 1 "$(wc -l < "$SPOOL/rejected/$f.yaml.why")" "$f.why lines"
	done
	[ -z "$(ls "$SPOOL/specs")" ] || fail "a bad file became a task"
	[ -z "$(ls "$SPOOL/incoming")" ] || fail "incoming/ not empty"
	# the daemon kept running and still takes good work
	id=$(spool submit -- echo still-alive)
	spool wait "$id" || fail "good task after bad ones"
	assert_eq still-alive "$(task_stdout "$id")"
	kill -0 "$SPOOLD_PID" || fail "spoold died"
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
}
