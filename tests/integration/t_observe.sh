# t_observe.sh - seeing the work: the event journal (read by awk and by
# Python's shlex), spool journal, spool top --once and live (keys, q,
# the terminal given back), spool report (structure, counts matching the
# journal, rendering in headless Chromium, 100000 tasks aggregated),
# rotation that keeps the current state, the progress bar of wait.

here_observe=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# every line of the merged journal has the documented shape
journal_well_formed() {
	spool journal | awk '
	    $1 !~ /^[0-9]+\.[0-9][0-9][0-9]$/ || NF < 5 ||
	    $3 !~ /^(task|worker|job|spoold)$/ { print "bad: " $0; bad = 1 }
	    END { exit bad }'
}

# count of "task ID EVENT" lines, for an event, optionally with a field
jcount() {	# EVENT [REGEX]
	spool journal | awk -v ev="$1" -v re="${2:-}" \
	    '$3 == "task" && $5 == ev && (re == "" || $0 ~ re) { n++ }
	     END { print n + 0 }'
}

# a value of the report: <td id="ID">VALUE</td>
report_value() {	# FILE ID
	sed -n "s/.*id=\"$2\">\\([^<]*\\)<.*/\\1/p" "$1" | head -1 |
	    awk '{ print $1 }'
}

# A run with every kind of event: done, failed, retried, a dependency,
# a cancel, a refused file; three local workers writing at once.
observed_run() {
	new_spool
	start_spoold --local 3
	seq 1 60 | spool map --name 'sq-{#}' -- sh -c 'echo $(( $1 * $1 ))' \
	    _ {} > "$T/ids" || fail "map"
	FAIL=$(spool submit --name breaks -- sh -c 'echo oops >&2; exit 4')
	RETRY=$(spool submit --name flaky --retries 1 -- sh -c 'exit 9')
	DEP=$(spool submit --name after-fail-free --after "$(head -1 "$T/ids")" \
	    -- true)
	SLOW=$(spool submit --name sleeper -- sleep 60)
	echo 'argv: [unclosed' > "$SPOOL/incoming/typo.yaml"
	wait_for 20 state_is "$SLOW" running || fail "sleeper not running"
	spool cancel "$SLOW" 2>/dev/null
	cat "$T/ids" > "$T/all"
	printf '%s\n' "$FAIL" "$RETRY" "$DEP" "$SLOW" >> "$T/all"
	spool wait < "$T/all" 2>/dev/null
	wait_for 20 rejected_at_least 1 || fail "typo.yaml not refused"
	stop_spoold	# writes the rest of spoold's journal
}

test_journal_records_every_state_change() {
	observed_run
	journal_well_formed || fail "malformed journal lines"
	n=$(wc -l < "$T/all")
	for ev in submitted accepted placed started finished final; do
		c=$(jcount "$ev")
		[ "$c" -ge "$n" ] || fail "$ev: $c lines for $n tasks"
	done
	# exactly one outcome per task, whatever the attempts
	assert_eq "$n" "$(spool journal |
	    awk '$3 == "task" && $5 == "final" { print $4 }' | sort -u |
	    wc -l)" "tasks with a final event"
	assert_eq "$n" "$(jcount final)" "final events"
	assert_eq 61 "$(jcount final 'state=done')" "done"
	assert_eq 2 "$(jcount final 'state=failed')" "failed"
	assert_eq 1 "$(jcount final 'state=cancelled')" "cancelled"
	assert_match "reason=exit .*exit=4 .*msg=\"exited with status 4\"" \
	    "$(spool journal --task "$FAIL" | grep ' final ')" "failure detail"
	assert_eq 1 "$(jcount requeued 'reason=retry')" "retry"
	assert_eq 2 "$(spool journal --task "$RETRY" | grep -c ' started ')" \
	    "attempts of the retried task"
	assert_match "task $SLOW cancel att=1 worker=local-" \
	    "$(spool journal --task "$SLOW")" "cancel request"
	assert_match "task - rejected file=typo.yaml why=" \
	    "$(spool journal)" "refused file"
	# workers: three registered (by spoold) and their own exit
	assert_eq 3 "$(spool journal | awk '$3 == "worker" &&
	    $5 == "registered"' | wc -l)" "registered workers"
	assert_eq 3 "$(spool journal | awk '$3 == "worker" &&
	    $5 == "exit"' | wc -l)" "workers' exit"
	assert_match "spoold - start pid=$SPOOLD_PID" "$(spool journal)"
	assert_match "spoold - stop" "$(spool journal | tail -5)"
	# one writer per file: spoold and each worker have their own
	assert_eq 4 "$(ls "$SPOOL/journal" | wc -l)" "segments"
	# a worker's events carry its own host and worker ID
	w=$(spool journal --task "$DEP" | awk '$5 == "started" {
	    sub("worker=", "", $7); print $7 }')
	assert_match "^local-[0-9]-[0-9a-f]+$" "$w" "worker of $DEP"
	assert_match " $w registered" "$(spool journal --worker "$w")"
	# in time order
	spool journal | awk '$1 < last { print "out of order: " $0; bad = 1 }
	    { last = $1 } END { exit bad }' || fail "not sorted by time"
	assert_eq 5 "$(spool journal -n 5 | wc -l)" "-n 5"
}

# spool journal -n N reads only the end of each segment (four times more
# until it has N), yet prints the end of the whole merge: here one
# writer's long lines span the last 3 s and the other's short ones the
# 1,000 s before, so the first read holds the other's old events beside
# too few of the first's, which must not be taken for the last ones.
test_journal_last_n_is_the_end_of_the_whole_merge() {
	local n long
	new_spool
	long=$(printf '%0300d' 0)
	awk -v long="$long" 'BEGIN { for (i = 1; i <= 3000; i++)
	    printf "%.3f h task %d placed msg=%s\n", 2000 + i * 0.001, i, long }' \
	    > "$SPOOL/journal/0000000000001.spoold.h.1.0000000a"
	awk 'BEGIN { for (i = 1; i <= 3000; i++)
	    printf "%.3f h task %d started\n", 1000 + i * 0.334, i }' \
	    > "$SPOOL/journal/0000000000002.ckworker.h.2.0000000b"
	spool journal > "$T/all" || fail "spool journal"
	assert_eq 6000 "$(wc -l < "$T/all")" "events"
	for n in 1 10 500 2000 5999 6000 10000; do
		spool journal -n "$n" > "$T/last" || fail "spool journal -n $n"
		tail -n "$n" "$T/all" | cmp -s - "$T/last" ||
		    fail "-n $n is not the end of the merge: $(tail -n "$n" "$T/all" |
		    diff - "$T/last" | head -4)"
	done
	# with a filter: the last that match, however far back
	assert_eq "$(spool journal --task 2999 | tail -n 1)" \
	    "$(spool journal --task 2999 -n 1)" "--task 2999 -n 1"
	assert_eq "$(grep ' task 5 ' "$T/all")" "$(spool journal --task 5 -n 2)" \
	    "--task 5 -n 2"
}

# The worker and batch job events observed_run does not cause: a worker
# draining with a task running, a worker lost with a task, and a batch
# job (the local backend: no batch system needed) submitted, started,
# cancelled at shutdown and ended.
test_journal_records_worker_and_job_events() {
	new_spool
	printf 'cluster:\n  backend: local\n  name: loc\n  cores: 1\n  poll-interval: 200ms\n' \
	    >> "$SPOOL/spool.yaml"
	start_spoold
	start_worker patient --cores 1 --grace 30s
	pat=$WORKER_PID
	pwid=$(worker_wid patient)
	id=$(spool submit -- sh -c "while [ ! -e '$T/go' ]; do sleep 0.05; done")
	wait_for 20 state_is "$id" running || fail "not running"
	kill -TERM "$pat"
	wait_for 20 journal_matches " worker $pwid draining\$" ||
	    fail "spoold did not journal the drain: $(spool journal --worker "$pwid")"
	touch "$T/go"
	spool wait "$id" || fail "task $id was not allowed to finish"
	wait_for 20 not_running "$pat" || fail "patient worker stayed"
	# killed with a task: lost, the task requeued
	start_worker doomed --cores 1
	dwid=$(worker_wid doomed)
	id2=$(spool submit -- sh -c "while [ ! -e '$T/go2' ]; do sleep 0.05; done")
	wait_for 20 state_is "$id2" running || fail "task $id2 not running"
	kill -KILL "$WORKER_PID"
	wait_for 20 journal_matches " worker $dwid lost " || fail "worker not lost"
	# a batch job's worker runs the requeued task
	spool scale 1 2>/dev/null || fail "scale"
	spool wait-workers 1 --timeout 30s >/dev/null || fail "no job worker"
	touch "$T/go2"
	spool wait "$id2" || fail "task $id2 failed"
	job=$(ls "$SPOOL/jobs" | grep -v '\.sh$' | head -1)
	[ -n "$job" ] || fail "no job record"
	spool shutdown > "$T/out" 2>&1 || fail "shutdown: $(cat "$T/out")"
	wait_for 20 not_running "$SPOOLD_PID" || fail "spoold still running"
	journal_well_formed || fail "malformed journal lines"
	j=$(spool journal --worker "$pwid")
	assert_match " worker $pwid registered host=[^ ]+ cores=1 " "$j" "registered"
	assert_match " worker $pwid drain why=signal" "$j" "worker's drain"
	assert_match " worker $pwid draining" "$j" "spoold saw it draining"
	assert_match " worker $pwid exit why=signal" "$j" "worker's exit"
	assert_match " worker $pwid exited" "$j" "spoold saw it exit"
	j=$(spool journal --worker "$dwid")
	assert_match " worker $dwid lost why=\"?no heartbeat.* expected=0 tasks=1" \
	    "$j" "lost"
	assert_match " task $id2 requeued att=1 reason=lost" \
	    "$(spool journal --task "$id2")" "requeued after the loss"
	assert_match " task $id2 final att=2 state=done" \
	    "$(spool journal --task "$id2")" "second attempt"
	j=$(spool journal | awk -v j="$job" '$3 == "job" && $4 == j')
	assert_match " job $job submitted kind=default backend=local workers=1" \
	    "$j" "job submitted"
	assert_match " job $job started" "$j" "job started"
	assert_match " job $job ended " "$j" "job ended"
	assert_match " worker [^ ]+ registered .*job=$job" "$(spool journal)" \
	    "the job's worker names its job"
}

test_journal_is_read_by_grep_and_awk() {
	observed_run
	# a quoted value keeps its spaces; awk splits the fixed fields
	line=$(spool journal --task "$FAIL" | grep ' final ')
	assert_eq "task $FAIL final" "$(echo "$line" | awk '{ print $3, $4, $5 }')"
	assert_match 'msg="exited with status 4"' "$line"
	# the raw segments hold the same lines as the merged view
	assert_eq "$(spool journal | wc -l)" "$(cat "$SPOOL"/journal/* | wc -l)" \
	    "merged = sum of segments"
}

# spool-layout(5): "Python reads a line with shlex.split(line), which
# keeps quoted values whole".  Every line, merged and raw, read so: the
# fixed fields are awk's $1 to $5, the rest KEY=VALUE, and quoted values
# (spaces, \" and \\ in them) come back as written.
test_journal_is_read_by_python() {
	command -v python3 >/dev/null || fail "python3 is missing"
	new_spool
	start_spoold --local 1
	FAIL=$(spool submit --name breaks -- sh -c 'echo oops >&2; exit 4')
	OK=$(spool submit --name fine -- true)
	printf 'argv: [true]\n' > "$SPOOL/incoming/my task\\ \"1\".yaml"
	spool wait "$FAIL" "$OK" 2>/dev/null
	wait_for 20 rejected_at_least 1 || fail "the file was not refused"
	stop_spoold
	spool journal > "$T/merged" || fail "spool journal"
	cat "$SPOOL"/journal/* > "$T/raw"
	python3 - "$T/merged" "$T/raw" "$FAIL" "$OK" > "$T/py.out" 2>&1 <<'PY' ||
import re, shlex, sys

merged, raw, fail_id, ok_id = sys.argv[1:5]
bad = []
events = {}
for path in (merged, raw):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines[-1] == "":
        lines.pop()
    for line in lines:
        fields = shlex.split(line)
        if len(fields) < 5 or fields[:5] != line.split(" ")[:5]:
            bad.append("fixed fields: " + line)
            continue
        t, host, subject, ident, event = fields[:5]
        if not re.fullmatch(r"[0-9]+\.[0-9]{3}", t) or not host or \
           subject not in ("task", "worker", "job", "spoold") or \
           not re.fullmatch(r"[a-z][a-z-]*", event):
            bad.append("shape: " + line)
        kv = {}
        for field in fields[5:]:
            key, eq, value = field.partition("=")
            if not eq or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
                bad.append("not KEY=VALUE: %r in %s" % (field, line))
            kv[key] = value
        if path == merged:
            events.setdefault((subject, ident), []).append((event, kv))

def only(subject, ident, event):
    got = [kv for ev, kv in events.get((subject, ident), []) if ev == event]
    if len(got) != 1:
        bad.append("%s %s: %d %s events" % (subject, ident, len(got), event))
        return {}
    return got[0]

f = only("task", fail_id, "final")
if (f.get("state"), f.get("exit"), f.get("msg")) != \
        ("failed", "4", "exited with status 4"):
    bad.append("final of %s: %r" % (fail_id, f))
if abs(float(f.get("end", 0)) - float(f.get("start", 0)) -
       float(f.get("wall", -1))) > 0.0015:
    bad.append("wall is not end - start: %r" % f)
if only("task", ok_id, "final").get("state") != "done":
    bad.append("final of %s" % ok_id)
if only("task", fail_id, "submitted").get("name") != "breaks":
    bad.append("name of %s" % fail_id)
r = only("task", "-", "rejected")
if r.get("file") != 'my task\\ "1".yaml' or \
        'unknown key "argv"' not in r.get("why", ""):
    bad.append("rejected: %r" % r)
print("\n".join(bad) if bad else "read %d subjects" % len(events))
sys.exit(1 if bad else 0)
PY
	    fail "python: $(head -20 "$T/py.out")"
	assert_match "^read [0-9]+ subjects$" "$(cat "$T/py.out")"
}

# spool top --once shows every REGEX given
top_has() {
	local out re
	out=$(spool top --once) || return 1
	for re in "$@"; do
		printf '%s' "$out" | grep -Eq -- "$re" || return 1
	done
}

# A worker ID longer than top's column keeps its start and its end, the
# random suffix that tells a job's workers apart, around "..", in the
# workers and in the running tasks (it was cut at 26 characters, the
# suffix lost: two workers of one job looked the same).  So does a task
# name, running (24) or failed (20): its end tells the tasks of a sweep
# apart (cut at their end, they all looked the same).
test_top_cuts_long_ids_and_names_in_their_middle() {
	local wid cut id f
	new_spool
	start_spoold
	start_worker a-rather-long-worker-name@1234567_12
	wid=$(worker_wid a-rather-long-worker-name@1234567_12)
	cut="${wid:0:15}..${wid: -9}"
	assert_eq 26 "${#cut}" "the width of the cut ID"
	assert_match '^a-rather-long-w\.\.12-[0-9a-f]{6}$' "$cut" "the cut ID"
	f=$(spool submit --name a-parameter-sweep-that-failed-0042 -- false) ||
	    fail "submit"
	spool wait "$f" 2>/dev/null
	id=$(spool submit --name a-long-parameter-sweep-run-0017 -- sleep 600) ||
	    fail "submit"
	wait_for 20 state_is "$id" running || fail "not running: $(state_of "$id")"
	wait_for 10 top_has "^$cut +[^ ]+ +up " \
	    "^$id +a-long-paramet\.\.run-0017 +$cut +1 " \
	    "^$f +a-paramete\.\.led-0042 .* exit " ||
	    fail "top: $(spool top --once)"
	assert_match "^$wid " "$(spool workers)" "spool workers (in full)"
	spool cancel "$id" >/dev/null || fail "cancel"
}

test_top_once_shows_a_known_spool() {
	new_spool
	start_spoold --local 1 --local-cores 2
	f=$(spool submit --name doomed -- sh -c 'exit 3')
	spool wait "$f" 2>/dev/null
	# a refused file: "rejected" must differ from "waiting" (top once
	# printed the same buffer for both)
	echo 'argv: [unclosed' > "$SPOOL/incoming/typo.yaml"
	wait_for 20 rejected_at_least 1 || fail "typo.yaml not refused"
	# long-one holds about 60 MB: top shows what it uses beside what
	# it asked for.  Both run until cancelled at the end (their sleeps
	# outlast the test's time limit), running at every check
	r=$(spool submit --name long-one --memory 300M -- \
	    perl -e '$x = "x" x 60_000_000; sleep 600')
	r2=$(spool submit --name other -- sleep 600)
	wait_for 20 state_is "$r" running || fail "not running"
	wait_for 20 state_is "$r2" running || fail "not running"
	# the journal is written at most every 100 ms, spoold's summary every
	# 250 ms, a worker's status every heartbeat, a task's memory every
	# sample (once perl holds its 60 MB): wait until top has them
	wait_for 10 top_has "tasks: waiting 0  queued 0  unfit 0  placed 2  running 2  done 0  failed 1  cancelled 0  rejected 1" \
	    "local-1-[0-9a-f]+ +[^ ]+ +up +2/2 .* 0/0 +2 +[0-9.]+s" \
	    "$f +doomed .* exit +exit 3 +exited with status 3" \
	    "$r +long-one +local-1-[0-9a-f]+ +1 +1 +(5[0-9]|[6-9][0-9]|[12][0-9][0-9])(\.[0-9]+)?M +300M " ||
	    fail "top: $(spool top --once)"
	out=$(spool top --once)
	assert_match "^ckspool top  $SPOOL  spoold pid $SPOOLD_PID on " "$out"
	assert_match "tasks: waiting 0  queued 0  unfit 0  placed 2  running 2  done 0  failed 1  cancelled 0  rejected 1\$" \
	    "$out" "counts"
	assert_match "throughput: [0-9.]+ tasks/s over the last minute  workers: 1" \
	    "$out" "throughput"
	assert_match "local-1-[0-9a-f]+ +[^ ]+ +up +2/2 .* 0/0 +2 +[0-9.]+s" \
	    "$out" "worker row"
	assert_match "RUNNING 2  \\(sort: elapsed\\)" "$out"
	assert_match "$r +long-one +local-1-[0-9a-f]+ +1 +1 +[0-9.]+M +300M +[0-9.]+s" \
	    "$out" "running row"
	used=$(echo "$out" | awk -v r="$r" '$1 == r { print $6 }')
	echo "$used" | awk '{ v = $1 + 0 } /M$/ && v >= 50 && v < 300 { ok = 1 } END { exit !ok }' ||
	    fail "memory in use by long-one: $used (about 60M expected)"
	# the other task's memory is small: sorting by memory puts long-one first
	out=$(spool top --once --sort memory)
	[ "$(echo "$out" | grep -n 'long-one' | cut -d: -f1)" -lt \
	    "$(echo "$out" | grep -n ' other ' | cut -d: -f1)" ] ||
	    fail "sort by memory: $out"
	assert_match "$f +doomed .* exit +exit 3 +exited with status 3" "$out" \
	    "failure row"
	# filter by name, sort by name
	out=$(spool top --once --filter LONG)
	assert_match "RUNNING 1 .*filter: \"LONG\"" "$out"
	assert_no_match "other" "$out" "filtered out"
	out=$(spool top --once --sort name)
	assert_match "sort: name" "$out"
	[ "$(echo "$out" | grep -n 'long-one' | cut -d: -f1)" -lt \
	    "$(echo "$out" | grep -n ' other ' | cut -d: -f1)" ] ||
	    fail "sort by name: $out"
	spool top --once --sort nonsense 2>"$T/err"
	assert_eq 2 $? "bad sort key"
	# not a terminal: one frame even without --once
	assert_match "RUNNING 2" "$(spool top | cat)"
	spool cancel "$r" "$r2" 2>/dev/null
}

# the summary names the spoold that runs the spool, and says
# "recovering" only before its recovery is over, "stopping" only while it
# stops
summary_names() {	# PID
	summary_field spoold | grep -q "\.$1\$" && summary_settled
}

# A spoold with nothing to do published no summary at its start, so
# after a restart on an idle spool state/summary (and "spool status",
# "spool top", spoolfs's /summary) kept the last spoold's, "stopping: yes".
test_summary_names_a_new_spoold_with_nothing_to_do() {
	local first
	new_spool
	start_spoold
	wait_for 10 summary_names "$SPOOLD_PID" ||
	    fail "no summary of the first spoold: $(cat "$SPOOL/state/summary" 2>&1)"
	first=$SPOOLD_PID
	stop_spoold
	assert_eq yes "$(summary_field stopping)" "the stopped spoold's summary"
	cp "$SPOOL/state/summary" "$T/old-summary"
	start_spoold
	[ "$SPOOLD_PID" != "$first" ] || fail "the same pid twice"
	wait_for 10 summary_names "$SPOOLD_PID" ||
	    fail "the summary is not the new spoold's: $(cat "$SPOOL/state/summary")"
	assert_eq 0 "$(summary_field queued)" "queued"
	assert_match "^spoold: pid $SPOOLD_PID on [^,]+, summary [0-9.]+ s old\$" \
	    "$(spool status | head -1)"
	assert_match "^ckspool top  $SPOOL  spoold pid $SPOOLD_PID on [^,]+, summary [^ ]+ old  " \
	    "$(spool top --once)"
	# the last spoold's summary, as a new one sees it before it has
	# published (put back by hand: this spoold, idle, writes no other)
	cp "$T/old-summary" "$SPOOL/state/summary.new" &&
	    mv "$SPOOL/state/summary.new" "$SPOOL/state/summary"
	assert_match "^spoold: pid $SPOOLD_PID on [^,]+, summary [0-9.]+ s old, left by spoold [^ ]+\.$first\$" \
	    "$(spool status | head -1)"
	assert_match "^ckspool top  $SPOOL  spoold pid $SPOOLD_PID on [^,]+, summary [^ ]+ old, left by spoold [^ ]+\.$first  " \
	    "$(spool top --once)"
}

# spoold publishes a summary as soon as it holds the lease, before its
# recovery (a second or more on a large spool), so that "spool status"
# and "spool top" name it and say "recovering" instead of showing the
# last spoold's.  Stopped there by an injected crash: recovery's first
# step removes temporary files left for a day, and spoold crashes just
# before it removes the one put there.
test_summary_says_recovering_until_recovery_is_over() {
	local pid rc
	new_spool
	: > "$SPOOL/tmp/stale-left-behind"
	touch -d '2 days ago' "$SPOOL/tmp/stale-left-behind"
	CKSPOOL_FAULT=crash-on=stale-left start_spoold
	pid=$SPOOLD_PID
	wait_for 10 not_running "$pid" || fail "spoold did not crash"
	wait "$pid"
	rc=$?
	assert_eq 86 "$rc" "spoold's exit status (the injected crash)"
	assert_match "crash before operation [0-9]+ \(unlink stale-left-behind\)" \
	    "$(cat "$T/spoold.log")"
	summary_field spoold | grep -q "\.$pid\$" ||
	    fail "the summary does not name the crashed spoold: $(cat "$SPOOL/state/summary" 2>&1)"
	assert_eq yes "$(summary_field recovering)" "recovering"
	assert_match "^spoold: pid $pid on [^,]+, summary [0-9.]+ s old, recovering\$" \
	    "$(spool status | head -1)"
	assert_match "^ckspool top  $SPOOL  spoold pid $pid on [^,]+, summary [^ ]+ old, recovering  " \
	    "$(spool top --once)"
	# the next one recovers, and then says so
	start_spoold
	wait_for 10 summary_names "$SPOOLD_PID" ||
	    fail "no summary after recovery: $(cat "$SPOOL/state/summary")"
	[ ! -e "$SPOOL/tmp/stale-left-behind" ] || fail "the stale file is still there"
	assert_match "^spoold: pid $SPOOLD_PID on [^,]+, summary [0-9.]+ s old\$" \
	    "$(spool status | head -1)"
}

test_report_counts_match_the_journal() {
	observed_run
	spool report -o "$T/r.html" 2>"$T/err" || fail "report: $(cat "$T/err")"
	assert_match "wrote $T/r.html \\([0-9]+ KiB\\): 64 tasks" "$(cat "$T/err")"
	h="$T/r.html"
	assert_eq 64 "$(report_value "$h" n-tasks)" "tasks"
	assert_eq "$(jcount final 'state=done')" "$(report_value "$h" n-done)" done
	assert_eq "$(jcount final 'state=failed')" \
	    "$(report_value "$h" n-failed)" failed
	assert_eq "$(jcount final 'state=cancelled')" \
	    "$(report_value "$h" n-cancelled)" cancelled
	assert_eq "$(jcount started)" "$(report_value "$h" n-attempts)" attempts
	assert_eq 1 "$(report_value "$h" n-retried)" retried
	assert_eq 3 "$(report_value "$h" n-workers)" workers
	assert_eq 0 "$(report_value "$h" n-open)" "not finished"
	# every section, drawn per attempt (small run)
	for id in summary task-stream queue running hist-runtime hist-memory \
	    slowest failed failures-by-reason workers; do
		grep -q "id=\"$id\"" "$h" || fail "no element $id"
	done
	assert_match 'data-aggregated="no"' "$(cat "$h")"
	assert_eq "$(jcount started)" "$(grep -c '<rect class="bar ' "$h")" \
	    "one bar per attempt"
	assert_match "<tr class=\"failed-task\" data-id=\"$FAIL\"><td>$FAIL</td><td>breaks</td>" \
	    "$(cat "$h")" "failed table"
	assert_match "exited with status 4" "$(grep "data-id=\"$FAIL\"" "$h")"
	assert_eq 3 "$(grep -c '<tr class="worker">' "$h")" "worker rows"
	# self-contained: no script, no external resource
	assert_no_match "<script" "$(cat "$h")" "script"
	assert_no_match "(src|href)=" "$(cat "$h")" "external reference"
	assert_no_match "url\\(" "$(cat "$h")" "CSS url()"
	# -o - writes the page to stdout
	assert_match "^<!DOCTYPE html>" "$(spool report -o - | head -1)"
}

test_report_renders_in_chromium() {
	observed_run
	command -v chromium >/dev/null ||
	    fail "chromium is not installed (scripts/install-deps.sh build test)"
	spool report -o "$T/r.html" 2>/dev/null || fail "report"
	# a real browser parses and lays out the page: its DOM after
	# parsing, and a screenshot of it
	timeout 120 chromium --headless --no-sandbox --disable-gpu \
	    --user-data-dir="$T/chrome" --dump-dom "file://$T/r.html" \
	    > "$T/dom.html" 2>"$T/chrome.err" ||
	    fail "chromium --dump-dom: $(tail -3 "$T/chrome.err")"
	for id in summary task-stream queue running hist-runtime hist-memory \
	    slowest failed workers; do
		grep -q "id=\"$id\"" "$T/dom.html" ||
		    fail "chromium's DOM has no element $id"
	done
	assert_eq "$(jcount started)" "$(grep -c '<rect class="bar ' "$T/dom.html")" \
	    "bars in the DOM"
	assert_match "<td id=\"n-done\">61</td>" "$(cat "$T/dom.html")"
	timeout 120 chromium --headless --no-sandbox --disable-gpu \
	    --user-data-dir="$T/chrome" --hide-scrollbars \
	    --window-size=1100,1600 --screenshot="$T/shot.png" \
	    "file://$T/r.html" >/dev/null 2>>"$T/chrome.err" ||
	    fail "chromium --screenshot: $(tail -3 "$T/chrome.err")"
	[ "$(head -c 8 "$T/shot.png" | od -An -c | tr -d ' ')" = \
	    '211PNG\r\n032\n' ] || fail "no PNG screenshot"
	[ "$(wc -c < "$T/shot.png")" -gt 20000 ] || fail "an empty screenshot"
}

test_report_aggregates_100000_tasks() {
	new_spool
	awk -v N=100000 -v W=16 -v S=8 -v DIR="$SPOOL/journal" \
	    -v T0=1795300000 -f "$here_observe/journal-gen.awk" ||
	    fail "generator"
	spool report -o "$T/big.html" 2>"$T/err" || fail "report: $(cat "$T/err")"
	note "$(cat "$T/err")"
	h="$T/big.html"
	assert_eq 100000 "$(report_value "$h" n-tasks)" tasks
	assert_eq "$(cat "$SPOOL"/journal/* | awk '$5 == "final" &&
	    /state=failed/ && $2 == "login1"' | wc -l)" \
	    "$(report_value "$h" n-failed)" failed
	assert_eq 98114 "$(report_value "$h" n-done)" done
	assert_match 'data-aggregated="yes"' "$(cat "$h")"
	assert_eq 0 "$(grep -c '<rect class="bar ' "$h")" "no per-attempt bars"
	# bounded: tables cut, page small
	[ "$(wc -c < "$h")" -lt 1500000 ] || fail "report too large: $(wc -c < "$h")"
	assert_eq 20 "$(grep -c '<tr><td>[0-9]' "$h")" "slowest table"
	assert_eq 50 "$(grep -c '<tr class="failed-task"' "$h")" "failed rows"
	assert_match "The most recent failures" "$(cat "$h")"
	# and a real browser opens it whole: every section in its DOM (the
	# time it took is reported, not asserted)
	command -v chromium >/dev/null ||
	    fail "chromium is not installed (scripts/install-deps.sh build test)"
	t0=$(date +%s%N)
	timeout 120 chromium --headless --no-sandbox --disable-gpu \
	    --user-data-dir="$T/chrome" --dump-dom "file://$h" \
	    > "$T/big-dom.html" 2>"$T/chrome.err" ||
	    fail "chromium --dump-dom: $(tail -3 "$T/chrome.err")"
	echo "chromium parsed and laid out the $(( $(wc -c < "$h") / 1024 )) KiB page in $(( ($(date +%s%N) - t0) / 1000000 )) ms (with its own start)" >> "$T/report"
	for id in summary task-stream queue running hist-runtime hist-memory \
	    slowest failed workers; do
		grep -q "id=\"$id\"" "$T/big-dom.html" ||
		    fail "chromium's DOM of the 100,000-task report has no element $id"
	done
	assert_match "<td id=\"n-done\">98114</td>" "$(cat "$T/big-dom.html")"
}

test_rotation_keeps_the_current_state() {
	new_spool
	fast_config "  journal-size: 1M"
	# 3 MiB of history by a writer that is gone, written long ago
	old="$SPOOL/journal/1700000000000.ckworker.gone.1.deadbeef"
	awk 'BEGIN { for (i = 0; i < 30000; i++)
	    printf "1700000000.%03d gone task %d finished att=1 state=done reason=exit pad=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n",
	    i % 1000, i + 1000000 }' > "$old"
	touch -d '2 days ago' "$old"
	stuck=$(spool submit --name needs-gpu --gpus 1 -- true)
	start_spoold --local 1
	ok=$(spool submit -- true)
	spool wait "$ok" || fail "task"
	wait_for 20 sh -c "[ ! -e '$old' ]" || fail "old segment kept"
	wait_for 10 journal_matches 'spoold - checkpoint' ||
	    fail "no checkpoint"
	# a checkpoint line names one ID or a range FIRST-LAST (the other
	# task may still be queued when spoold writes it)
	spool journal | awk -v id="$stuck" '$3 == "task" && $5 == "state" &&
	    $6 == "state=queued" { n = split($4, r, "-");
	    if (id >= r[1] && id <= r[n]) f = 1 } END { exit !f }' ||
	    fail "the queued task is not in the checkpoint: $(spool journal |
	    grep ' state ')"
	total=$(cat "$SPOOL"/journal/* | wc -c)
	[ "$total" -le $((1 << 20)) ] || fail "journal still $total bytes"
	grep -q "journal: .* old segment removed" "$T/spoold.log" ||
	    fail "not logged: $(grep journal "$T/spoold.log")"
	# the report still knows the task is waiting (once the journal has
	# the other one's outcome: spoold writes at most every 100 ms)
	wait_for 10 sh -c "spool journal --task $ok | grep -q ' final '" ||
	    fail "no final event for $ok"
	spool report -o "$T/r.html" 2>/dev/null
	assert_eq 1 "$(report_value "$T/r.html" n-open)" "open tasks"
	# the spool itself is untouched: the task is still queued
	assert_eq queued "$(state_of "$stuck")"
}

# Many small segments (a worker's is well under a kilobyte, and every
# worker job writes one) are bounded by their number, not only by
# journal-size: spoold keeps at most 10,000 (spool-layout(5), "Bounds
# and compaction") and says which bound it enforced.
test_rotation_bounds_the_number_of_segments() {
	new_spool
	# 10,050 segments of workers gone long ago: a few hundred KiB
	(cd "$SPOOL/journal" && awk 'BEGIN { for (i = 1; i <= 10050; i++) {
	    f = sprintf("%013d.ckworker.gone.%d.%08x", 1700000000000 + i,
	        i, i)
	    printf "1700000000.000 gone worker w%d-abcdef exit\n", i > f
	    close(f) } }')
	touch -d '2 days ago' "$SPOOL"/journal/*
	start_spoold
	wait_for 20 grep -q "journal: .* old segments removed" "$T/spoold.log" ||
	    fail "no rotation: $(grep journal "$T/spoold.log")"
	assert_match "journal: [0-9]+ segments, over the 10000 kept: checkpoint written, [0-9]+ old segments removed" \
	    "$(grep "journal: " "$T/spoold.log")" "rotation message"
	assert_no_match "over journal-size" "$(cat "$T/spoold.log")"
	[ "$(ls "$SPOOL/journal" | wc -l)" -le 10000 ] ||
	    fail "$(ls "$SPOOL/journal" | wc -l) segments left"
}

# spool journal -f and spool top follow a journal of thousands of
# segments (spoold lets it grow to 10,000 before it rotates): every pass
# merges the listing with the segments known in one walk (it searched
# them one by one for every name, seconds of CPU a pass; how fast is
# measured by hand, doc/observability.md).  The follower still prints
# every event once, old ones in order, and what spoold and a new
# worker append while it runs; top counts the failure.
test_journal_follow_reads_thousands_of_segments() {
	local now
	new_spool
	now=$(date +%s)
	# 5,000 segments of workers gone, one event each, in name order
	(cd "$SPOOL/journal" && awk -v now="$now" 'BEGIN {
	    for (i = 1; i <= 5000; i++) {
	        f = sprintf("%d000.ckworker.gone.%d.%08x", now - 6000 + i, i, i)
	        printf "%d.000 gone worker w%d-abcdef exit\n", now - 6000 + i,
	            i > f
	        close(f) } }')
	spool journal > "$T/old" || fail "spool journal"
	assert_eq 5000 "$(wc -l < "$T/old")" "events of the old segments"
	spool journal -f > "$T/followed" 2> "$T/follow.err" &
	track $!
	wait_for 20 sh -c "[ \$(wc -l < '$T/followed') -ge 5000 ]" ||
	    fail "-f printed $(wc -l < "$T/followed") of 5000 old events"
	start_spoold --local 1
	f=$(spool submit --name doomed -- sh -c 'exit 3')
	spool wait "$f" 2>/dev/null
	wait_for 10 sh -c "grep -q ' task $f final ' '$T/followed'" ||
	    fail "-f did not print the final event of $f"
	wait_for 10 top_has "failed 1" "$f +doomed .* exit +exit 3" ||
	    fail "top: $(spool top --once)"
	stop_spoold
	# every event once: what -f printed is the whole merge
	spool journal | sort > "$T/all"
	wait_for 10 sh -c "sort '$T/followed' | cmp -s - '$T/all'" ||
	    fail "-f and the merge differ: $(sort "$T/followed" |
	    diff - "$T/all" | head -5)"
	head -5000 "$T/followed" | cmp -s - "$T/old" ||
	    fail "the old events, in order, first"
	assert_eq "" "$(cat "$T/follow.err")" "-f's errors"
}

# spool journal -f stats only the segments that may grow (each writer's
# newest) and lists journal/ only when its mtime changed (every segment
# was stat'd every pass).  It still prints what a writer appends to a
# segment that was there when it started, the last lines a writer
# writes to a segment before it begins the next, the next one, and a
# new writer's segment, each writer's events in their order.
test_journal_follow_sees_old_and_new_segments() {
	local now a1 a2 a3 b
	new_spool
	now=$(date +%s)
	a1="$SPOOL/journal/$((now - 100))000.ckworker.ha.7.0000000a"
	a2="$SPOOL/journal/$((now - 50))000.ckworker.ha.7.0000000a"
	a3="$SPOOL/journal/$((now - 1))000.ckworker.ha.7.0000000a"
	b="$SPOOL/journal/$((now - 1))000.spoold.hb.9.0000000b"
	echo "$((now - 100)).000 ha task 1 started" > "$a1"
	echo "$((now - 50)).000 ha task 2 started" > "$a2"
	# a listing is trusted once the directory's mtime is past (settled)
	touch -d "@$((now - 60))" "$SPOOL/journal"
	spool journal -f > "$T/followed" 2> "$T/follow.err" &
	track $!
	wait_for 10 grep -q ' task 2 started$' "$T/followed" ||
	    fail "-f printed: $(cat "$T/followed")"
	echo "$now.100 ha task 2 finished" >> "$a2"
	wait_for 10 grep -q ' task 2 finished$' "$T/followed" ||
	    fail "an append to a segment there at the start: $(cat "$T/followed")"
	# ha's last line to a2, then a3; then a new writer
	echo "$now.200 ha task 3 started" >> "$a2"
	echo "$now.300 ha task 3 finished" > "$a3"
	wait_for 10 grep -q ' task 3 finished$' "$T/followed" ||
	    fail "a new segment: $(cat "$T/followed")"
	echo "$now.400 hb task 4 placed" > "$b"
	wait_for 10 grep -q ' task 4 placed$' "$T/followed" ||
	    fail "a new writer's segment: $(cat "$T/followed")"
	echo "$now.500 ha task 4 started" >> "$a3"
	wait_for 10 grep -q ' task 4 started$' "$T/followed" ||
	    fail "an append to the new segment: $(cat "$T/followed")"
	assert_eq "1 started
2 started
2 finished
3 started
3 finished
4 started" "$(awk '$2 == "ha" { print $4, $5 }' "$T/followed")" \
	    "ha's events, once each, in order"
	assert_eq "" "$(cat "$T/follow.err")" "-f's errors"
}

test_wait_shows_progress_only_on_a_terminal() {
	new_spool
	start_spoold --local 2
	ids=$(seq 1 20 | spool map -- sh -c 'sleep 0.05; echo out-$1
	    [ $1 -ne 5 ]' _ {} |
	    tr '\n' ' ')
	command -v script >/dev/null || fail "script(1) is missing (bsdutils)"
	# a terminal: script(1) gives the command a pty
	script -qec "spool wait $ids" /dev/null > "$T/tty.out"
	tr '\r' '\n' < "$T/tty.out" > "$T/tty.lines"
	assert_match "^\\[[=> ]+\\] [0-9]+/20 done [0-9]+ failed [0-9]+ running [0-9]+ queued [0-9]+ +[0-9.]+/s +ETA " \
	    "$(cat "$T/tty.lines")" "progress bar"
	grep -q "task 5 failed: exit: exited with status 1" "$T/tty.lines" ||
	    fail "failure message"
	# the bar is erased at the end: the last thing written is "erase line"
	assert_match "$(printf '\033')\\[K\$" "$(tail -c 20 "$T/tty.out" | tr -d '\r\n')" \
	    "bar erased"
	# not a terminal: only the failure, no bar
	spool wait $ids 2>"$T/err"
	assert_eq 1 $? "status"
	assert_eq "spool: task 5 failed: exit: exited with status 1" "$(cat "$T/err")"
	# gather on a terminal: output lines are whole, the bar never in them
	script -qec "spool gather $ids" /dev/null > "$T/g.out"
	tr '\r' '\n' < "$T/g.out" | sed "s/$(printf '\033')\\[K//g" > "$T/g.lines"
	assert_eq 20 "$(grep -c '^out-[0-9]*$' "$T/g.lines")" "whole output lines"
	assert_eq 0 "$(grep -c 'out-[0-9]*.*done [0-9]' "$T/g.lines")" \
	    "bar mixed into output"
}

test_top_live_view_takes_keys_and_restores_the_terminal() {
	new_spool
	start_spoold --local 1
	id=$(spool submit --name findme -- sleep 60) || fail "submit"
	command -v script >/dev/null || fail "script(1) is missing (bsdutils)"
	# top reads the spool once a second: the task runs before it starts
	wait_for 20 state_is "$id" running || fail "the task is not running"
	# keys typed at once: next sort key, then filter by "find"; SIGINT
	# (from timeout) ends it, as ^C would
	printf 's/find\r' | script -qec "timeout --foreground -s INT 3 spool top" \
	    /dev/null > "$T/top.tty"
	tr '\r' '\n' < "$T/top.tty" > "$T/top.lines"
	grep -q "$(printf '\033')\\[?1049h" "$T/top.tty" || fail "no alternate screen"
	grep -q 'RUNNING 1  (sort: memory)  filter: "find"' "$T/top.lines" ||
	    fail "keys not taken: $(grep -a RUNNING "$T/top.lines" | tail -2)"
	grep -q "findme" "$T/top.lines" || fail "the task is not shown"
	# the terminal is given back: cursor shown, main screen restored
	assert_match "$(printf '\033')\\[\\?25h$(printf '\033')\\[\\?1049l\$" \
	    "$(tail -c 30 "$T/top.tty" | tr -d '\r\n')" "terminal restored"
	# q quits by itself (status 0, not timeout's 124 after its SIGINT),
	# and the terminal's modes are as before (no raw mode, echo back)
	printf 's/find\rq' | script -qec "stty -g > '$T/stty.before'; \
	    timeout --foreground -s INT 60 spool top; echo \$? > '$T/top.rc'; \
	    stty -g > '$T/stty.after'" /dev/null > "$T/q.tty"
	assert_eq 0 "$(cat "$T/top.rc")" "spool top status after q"
	tr '\r' '\n' < "$T/q.tty" > "$T/q.lines"
	grep -q 'RUNNING 1' "$T/q.lines" || fail "no frame was drawn before q"
	assert_match "$(printf '\033')\\[\\?25h$(printf '\033')\\[\\?1049l\$" \
	    "$(tail -c 30 "$T/q.tty" | tr -d '\r\n')" "terminal restored after q"
	[ -s "$T/stty.before" ] || fail "stty -g printed nothing"
	assert_eq "$(cat "$T/stty.before")" "$(cat "$T/stty.after")" \
	    "terminal modes after q"
}

# the last frame of spool top's live view in FILE (script's output) is
# whole (its key line drawn), matches the ERE WANT and shows no warning
top_frame_recovered() {	# FILE WANT
	awk -v want="$2" 'BEGIN { RS = "\033\\[H" } { last = $0 }
	    END { exit !(last ~ /q quit/ && last ~ want &&
	    last !~ /warning: /) }' "$1"
}

# spool top's live view under script(1) (a terminal wide enough for the
# spool's path), its stderr to a file, with CKSPOOL_FAULT=FAULT: the
# screen says "warning: WHY" (an ERE), then a frame matches the ERE
# WANT with no warning, then q; stderr said WHY once, and its end
# ("recovered: KEY") once.
top_live_fails() {	# FAULT WHY WANT KEY
	local pid
	command -v script >/dev/null || fail "script(1) is missing (bsdutils)"
	mkfifo "$T/keys"
	CKSPOOL_FAULT="$1" script -qec \
	    "stty cols 400 rows 40; spool top --interval 100ms 2> '$T/live.err'" /dev/null \
	    < "$T/keys" > "$T/top.tty" &
	pid=$!
	track $pid
	exec 3> "$T/keys"
	wait_for 10 grep -qE "warning: $2" "$T/top.tty" ||
	    fail "the failure is not on the screen: $(cat "$T/live.err")"
	wait_for 10 top_frame_recovered "$T/top.tty" "$3" ||
	    fail "the failure stays on the screen: $(tail -c 600 "$T/top.tty" | tr '\r\033' '\n^')"
	printf q >&3
	exec 3>&-
	wait_for 10 not_running "$pid" || fail "top did not quit"
	assert_eq 1 "$(grep -cE "^spool: warning: $2\$" "$T/live.err")" \
	    "warnings in: $(cat "$T/live.err")"
	assert_eq 1 "$(grep -c "^spool: recovered: $4\$" "$T/live.err")" \
	    "its end in: $(cat "$T/live.err")"
}

# spool top says a journal read that fails while it fails, and no more
# once a read works: a line of its frame (the live view's screen, and
# --once's text), and on stderr, where it is not the live view's
# terminal, a warning once and then its end, as spool journal -f does
# (it said it once a run, and never that it was over).
test_top_says_a_journal_read_failure_while_it_lasts() {
	local now a
	new_spool
	now=$(date +%s)
	a="$((now - 100))000.ckworker.ha.7.0000000a"
	echo "$((now - 100)).000 ha task 7 final state=failed reason=exit exit=3" \
	    > "$SPOOL/journal/$a"
	CKSPOOL_FAULT="read-fails=$((now - 100)):EIO" spool top --once \
	    > "$T/once" 2> "$T/once.err" || fail "top --once: $(cat "$T/once.err")"
	assert_match "^warning: read: $SPOOL/journal/$a: (Input/output error|I/O error)\$" \
	    "$(cat "$T/once")" "--once's frame"
	assert_eq 1 "$(grep -cE "^spool: warning: read: $SPOOL/journal/$a: (Input/output error|I/O error)\$" \
	    "$T/once.err")" "--once's warnings in: $(cat "$T/once.err")"
	# the live view: three frames fail, the next reads; q when it shows
	top_live_fails "read-fails=$((now - 100)):EIO*3" \
	    "read: $SPOOL/journal/$a: (Input/output error|I/O error)" '\n7 ' \
	    journal-read
}

# The other reads of a frame of spool top that fail (the listing of
# workers/, state/summary, spoold's lease, a worker's info) are said as
# a journal read that fails is: a line of the frame while it lasts, and
# on stderr, where it is not the live view's terminal, once and then its
# end (the listing of workers/ was said on stderr every frame, over the
# live view's screen; the others were passed over: counts of "-",
# "spoold: not running", a worker left out).
test_top_says_a_failed_read_of_the_spool_while_it_lasts() {
	local eio='(Input/output error|I/O error)'
	new_spool
	mkdir "$SPOOL/workers/w1"
	printf 'host: ha\ncores: 4\n' > "$SPOOL/workers/w1/info"
	CKSPOOL_FAULT="count=all,list-fails=workers:EIO,open-fails=summary:EIO,open-fails=spoold/owner:EIO" \
	    spool top --once > "$T/once" 2> "$T/once.err" ||
	    fail "top --once: $(cat "$T/once.err")"
	assert_match "^warning: list: $SPOOL/workers: $eio\$" "$(cat "$T/once")" \
	    "--once's frame"
	assert_match "^warning: read: $SPOOL/state/summary: $eio\$" \
	    "$(cat "$T/once")" "--once's frame"
	assert_match "^warning: read: $SPOOL/lock/spoold/owner: $eio\$" \
	    "$(cat "$T/once")" "--once's frame"
	assert_match "spoold: unknown" "$(head -1 "$T/once")" "--once's first line"
	assert_eq 3 "$(grep -cE "^spool: warning: (list|read): $SPOOL/(workers|state/summary|lock/spoold/owner): $eio\$" \
	    "$T/once.err")" "--once's warnings in: $(cat "$T/once.err")"
	CKSPOOL_FAULT="count=all,open-fails=w1/info:EIO" spool top --once \
	    > "$T/once" 2> "$T/once.err" || fail "top --once: $(cat "$T/once.err")"
	assert_match "^warning: read: $SPOOL/workers/w1/info: $eio\$" \
	    "$(cat "$T/once")" "--once's frame"
	assert_eq 1 "$(grep -cE "^spool: warning: read: $SPOOL/workers/w1/info: $eio\$" \
	    "$T/once.err")" "--once's warnings in: $(cat "$T/once.err")"
	# the live view: three listings fail, the next works; q when the
	# worker shows again
	top_live_fails "count=all,list-fails=workers:EIO*3" \
	    "list: $SPOOL/workers: $eio" '\nw1 ' workers-list
}

# A journal file whose read fails (EIO, as on NFS) is reported by its
# name, and the events of the others are printed: once, spool journal
# exits 111 (what it printed lacks events); with -f it is read again
# the next pass, its events printed then, the failure said once.
# journal_file_unread WORD: the failure is CKSPOOL_FAULT's WORD (fault.h)
# of the older of two segments.
journal_file_unread() {
	local now a b rc=0 word=$1
	new_spool
	now=$(date +%s)
	a="$((now - 100))000.ckworker.ha.7.0000000a"
	b="$((now - 50))000.spoold.hb.9.0000000b"
	echo "$((now - 100)).000 ha task 1 started" > "$SPOOL/journal/$a"
	echo "$((now - 50)).000 hb task 2 placed" > "$SPOOL/journal/$b"
	CKSPOOL_FAULT="$word=$((now - 100)):EIO" spool journal \
	    > "$T/out" 2> "$T/err" || rc=$?
	assert_eq 111 "$rc" "exit status of a journal with a file unread"
	assert_eq "2 placed" "$(awk '{ print $4, $5 }' "$T/out")" \
	    "events printed"
	assert_match "^spool: warning: read: $SPOOL/journal/$a: (Input/output error|I/O error)\$" \
	    "$(grep -v 'fault injection' "$T/err")" "the report"
	CKSPOOL_FAULT="$word=$((now - 100)):EIO*2" spool journal -f \
	    > "$T/followed" 2> "$T/follow.err" &
	track $!
	wait_for 10 grep -q ' task 1 started$' "$T/followed" ||
	    fail "-f did not read the file again: $(cat "$T/followed"; cat "$T/follow.err")"
	assert_eq 1 "$(grep -cE "read: $SPOOL/journal/$a: (Input/output error|I/O error)\$" \
	    "$T/follow.err")" "reports of the failure in: $(cat "$T/follow.err")"
	assert_eq "2 placed
1 started" "$(awk '{ print $4, $5 }' "$T/followed")" "events followed"
}

# spool journal -n N -f: a journal file whose first read (of its end
# only) fails is read again the next time as it would have been, its end
# only, and of its events only the last N printed (it was read whole: a
# passing failure printed all the file's old events instead of N); what
# is written later is printed as ever.
test_journal_last_n_reads_the_end_of_a_file_it_could_not_read() {
	local now a b
	new_spool
	now=$(date +%s)
	a="$((now - 5000))000.ckworker.ha.7.0000000a"
	b="$((now - 50))000.spoold.hb.9.0000000b"
	# 3000 events, about 90 KiB: more than -n's first read of a file
	awk -v now="$now" 'BEGIN { for (i = 1; i <= 3000; i++)
	    printf "%d.000 ha task %d started\n", now - 4000 + i, i }' \
	    > "$SPOOL/journal/$a"
	echo "$((now - 50)).000 hb task 1 placed" > "$SPOOL/journal/$b"
	CKSPOOL_FAULT="read-fails=$((now - 5000)):EIO" spool journal -n 5 -f \
	    > "$T/followed" 2> "$T/follow.err" &
	track $!
	wait_for 10 grep -q ' task 3000 started$' "$T/followed" ||
	    fail "-f did not read the file again: $(tail -3 "$T/followed"; cat "$T/follow.err")"
	echo "$now.000 hb task 2 placed" >> "$SPOOL/journal/$b"
	wait_for 10 grep -q ' task 2 placed$' "$T/followed" ||
	    fail "-f did not print a new event: $(tail -3 "$T/followed")"
	assert_eq 7 "$(wc -l < "$T/followed")" "lines printed"
	assert_eq "1 placed
2996 started
2997 started
2998 started
2999 started
3000 started
2 placed" "$(awk '{ print $4, $5 }' "$T/followed")" "events followed"
	assert_eq 1 "$(grep -cE "read: $SPOOL/journal/$a: (Input/output error|I/O error)\$" \
	    "$T/follow.err")" "reports of the failure in: $(cat "$T/follow.err")"
}

test_journal_read_that_fails_is_reported_and_read_again() {
	journal_file_unread read-fails
}

# The same for a file whose stat fails (EIO, ESTALE on NFS), as one
# whose read fails (jtail_read passed it over in silence, spool journal
# exited 0 without its events, -f read it later without a word).
test_journal_stat_that_fails_is_reported_and_read_again() {
	journal_file_unread count=all,stat-fails
}

# spool metrics: spoold's summary in the Prometheus text format, every
# metric labelled with the spool's real path (its quote and backslash
# escaped); each name has one HELP and one TYPE line before its samples;
# with no spoold only ckspool_up 0 and the summary's age; -o replaces
# the file by a rename (a scrape never reads half of it), mode 0644.
# The workers by what they are doing, for an alert: draining (here a
# worker told to leave, its --grace letting its task run on), and lost
# (a worker killed with SIGKILL), from spoold's summary; spool status
# and spool top show the same counts.
test_metrics_count_draining_and_lost_workers() {
	local a wid label
	new_spool
	fast_config
	label='spool="'"$SPOOL"'"'
	start_spoold
	start_worker killed --cores 1
	kill -KILL "$WORKER_PID"
	wait_for 20 grep -q "worker $(worker_wid killed) (killed, .*) lost" \
	    "$T/spoold.log" || fail "no loss: $(tail -3 "$T/spoold.log")"
	start_worker short --cores 1 --grace 60s
	wid=$(worker_wid short)
	a=$(spool submit -- sh -c "until [ -e '$T/go' ]; do sleep 0.05; done") ||
	    fail "submit"
	wait_for 20 state_is "$a" running || fail "task $a is $(state_of "$a")"
	kill -TERM "$WORKER_PID"
	wait_for 20 grep -q "^draining: 1" "$SPOOL/workers/$wid/status" ||
	    fail "no drain: $(cat "$SPOOL/workers/$wid/status")"
	wait_for 10 summary_is workers_draining 1 ||
	    fail "summary: $(cat "$SPOOL/state/summary")"
	state_is "$a" running || fail "task $a is $(state_of "$a")"
	spool metrics > "$T/m" || fail "spool metrics"
	assert_eq "ckspool_workers{$label} 1
ckspool_workers_draining{$label} 1
ckspool_workers_gpus_held{$label} 0
ckspool_workers_lost_total{$label} 1" \
	    "$(grep '^ckspool_workers' "$T/m")" "the workers' metrics"
	assert_eq "# TYPE ckspool_workers_lost_total counter" \
	    "$(grep '^# TYPE ckspool_workers_lost_total' "$T/m")" "a counter"
	# and spool status and top, from the same summary
	assert_match "  workers: 1 \(1 draining, 0 gpus-held, 1 lost\)  cores: " \
	    "$(spool status | sed -n 2p)" "spool status"
	assert_match "  workers: 1 \(1 draining, 0 gpus-held, 1 lost\)  cores " \
	    "$(spool top --once | grep '^throughput:')" "spool top"
	touch "$T/go"
	spool wait "$a" || fail "task $a"
	wait_for 20 summary_is workers 0 || fail "summary: $(cat "$SPOOL/state/summary")"
	assert_eq "ckspool_workers{$label} 0
ckspool_workers_draining{$label} 0
ckspool_workers_gpus_held{$label} 0
ckspool_workers_lost_total{$label} 1" \
	    "$(spool metrics | grep '^ckspool_workers')" "once it left"
	assert_match "  workers: 0 \(0 draining, 0 gpus-held, 1 lost\)  cores: " \
	    "$(spool status | sed -n 2p)" "spool status once it left"
}

test_metrics_are_the_summary_in_prometheus_text() {
	local a b f dir label ino
	dir="$T/lab \"x\" \\ y"
	mkdir -p "$dir" || fail "mkdir"
	SPOOL="$dir/spool"
	export SPOOL
	spool init > /dev/null || fail "spool init"
	fast_config
	label='spool="'"$T"'/lab \"x\" \\ y/spool"'
	start_spoold --local 1
	a=$(spool submit -- true) || fail "submit"
	b=$(spool submit -- true) || fail "submit"
	f=$(spool submit -- false) || fail "submit"
	spool wait "$a" "$b" "$f" 2>/dev/null
	wait_for 10 summary_is failed 1 || fail "summary: $(cat "$SPOOL/state/summary")"
	wait_for 10 summary_is done 2 || fail "summary: $(cat "$SPOOL/state/summary")"
	spool metrics > "$T/m" || fail "spool metrics"
	assert_eq "ckspool_up{$label} 1" "$(grep '^ckspool_up' "$T/m")" "up"
	assert_eq "ckspool_tasks_ended_total{$label,state=\"done\"} 2
ckspool_tasks_ended_total{$label,state=\"failed\"} 1
ckspool_tasks_ended_total{$label,state=\"cancelled\"} 0
ckspool_tasks_ended_total{$label,state=\"rejected\"} 0" \
	    "$(grep '^ckspool_tasks_ended_total' "$T/m")" "tasks ended"
	assert_eq "ckspool_workers{$label} 1" "$(grep '^ckspool_workers{' "$T/m")" \
	    "workers"
	assert_eq "ckspool_tasks{$label,state=\"queued\"} 0" \
	    "$(grep '^ckspool_tasks{.*queued' "$T/m")" "queued"
	assert_match "^ckspool_summary_age_seconds\{.*\} [0-9]+\.[0-9]{3}\$" \
	    "$(grep '^ckspool_summary_age_seconds' "$T/m")" "summary age"
	# the text format: each line a comment or NAME{LABELS} VALUE, and
	# each name's HELP and TYPE once, before its first sample
	awk '
	    /^# (HELP|TYPE) / { if (seen[$3 " " $2]++) { print "twice: " $0; bad = 1 }
		if ($2 == "TYPE" && $4 !~ /^(gauge|counter)$/) { print; bad = 1 }
		head[$3] = 1; next }
	    /^[a-z_]+\{([a-z]+="([^"\\]|\\.)*",?)+\} [0-9.]+$/ {
		n = $0; sub(/\{.*/, "", n)
		if (!head[n]) { print "no HELP/TYPE before: " $0; bad = 1 }
		next }
	    { print "not the text format: " $0; bad = 1 }
	    END { exit bad }' "$T/m" > "$T/awk" || fail "$(cat "$T/awk")"
	assert_eq 13 "$(grep -c "^# TYPE" "$T/m")" "metric names"
	# a value of the summary that is no number is left out, said once,
	# and breaks no line; its name's HELP and TYPE still come before the
	# rest of its samples (spoold stopped meanwhile: it keeps the lease
	# and writes no summary)
	kill -STOP "$SPOOLD_PID"
	cp "$SPOOL/state/summary" "$T/summary"
	sed -i 's/^waiting: .*/waiting: "1\\n# TYPE x gauge"/' "$SPOOL/state/summary"
	spool metrics > "$T/m2" 2> "$T/err" || fail "metrics of a bad summary"
	cp "$T/summary" "$SPOOL/state/summary"
	kill -CONT "$SPOOLD_PID"
	assert_eq 1 "$(wc -l < "$T/err")" "lines on stderr"
	assert_match '^spool: warning: ".*/spool"/state/summary: waiting: not a number: "1\\n# TYPE x gauge"$' \
	    "$(cat "$T/err")" "the bad value said"
	assert_eq "$(grep -v -e age -e 'state="waiting"' "$T/m")" "$(grep -v age "$T/m2")" \
	    "the metrics but the bad one (the first of its name: its HELP and TYPE stay)"
	# -o: the same text, by a rename, readable by the collector's user
	spool metrics -o "$T/ckspool.prom" || fail "metrics -o"
	ino=$(stat -c %i "$T/ckspool.prom")
	assert_eq 644 "$(stat -c %a "$T/ckspool.prom")" "the file's mode"
	assert_eq "$(grep -v age "$T/m")" "$(grep -v age "$T/ckspool.prom")" \
	    "-o writes what stdout shows"
	spool metrics -o "$T/ckspool.prom" || fail "metrics -o again"
	[ "$(stat -c %i "$T/ckspool.prom")" != "$ino" ] ||
	    fail "the file was rewritten in place, not replaced"
	assert_eq "ckspool.prom" "$(ls "$T" | grep prom)" "files beside it"
	# no spoold: up 0 and the summary's age, no counts of the past
	stop_spoold
	spool metrics > "$T/m" || fail "spool metrics without spoold"
	assert_eq "ckspool_up{$label} 0" "$(grep '^ckspool_up' "$T/m")" "up"
	assert_eq "ckspool_up ckspool_summary_age_seconds" \
	    "$(grep -v '^#' "$T/m" | sed 's/{.*//' | paste -sd' ')" \
	    "what is written without spoold"
	spool metrics extra 2> "$T/err"
	assert_eq 2 $? "an argument: exit status"
}
