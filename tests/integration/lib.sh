# lib.sh - helpers for the integration tests (sourced by run.sh).
#
# Every test is a shell function test_NAME in a tests/integration/t_*.sh
# file.  run.sh runs each one in its own subshell with a fresh directory
# $T and spool $SPOOL, and kills whatever the test started when it
# ends.  A test fails by calling fail (or by a failing check); waiting is
# always for a condition (wait_for), never a bare sleep.  Likewise a task
# that must still run (or not be done yet) at a later step of the test
# runs until told, not for a while: it waits for a file the test
# creates (while [ ! -e $T/go ]; do sleep 0.1; done), or, if it is to be
# stopped (cancelled, killed, handed back), sleeps past the test's time
# limit (sleep 600).  A task that sleeps a second outlasts the steps
# after it only on a machine fast enough.
#
# Timings are shortened through the spool's spool.yaml (see fast_config):
# heartbeat 200 ms, lost-timeout 2 s, rescan 200 ms, settle 1 s.

: "${BIN:?BIN must point at the built programs}"
PATH="$BIN:$PATH"
export PATH

fail() {
	echo "    FAIL: $*" >&2
	exit 1
}

note() {
	echo "    $*" >&2
}

# wait_for SECONDS CMD...: poll CMD every 50 ms until it succeeds.
wait_for() {
	local limit=$1 start now
	shift
	start=$(date +%s%N)
	while ! "$@" >/dev/null 2>&1; do
		now=$(date +%s%N)
		if [ $(( (now - start) / 1000000 )) -ge $((limit * 1000)) ]; then
			echo "    FAIL: timed out after ${limit}s waiting for: $*" >&2
			return 1
		fi
		sleep 0.05
	done
}

# output_is WANT CMD...: CMD prints WANT.  For wait_for, which runs its
# command again and again: `wait_for 10 test "$(stat ...)" = N` would
# compare what the $(...) printed once, when wait_for was called
output_is() {
	local want=$1
	shift
	[ "$("$@" 2>/dev/null)" = "$want" ]
}

# skip_row WHAT WHY: leave out a row of a test's table that cannot hold
# here (across hosts, say), and say so: run.sh prints the line under the
# test's "ok", so what was not tested is never taken for tested.
skip_row() {
	echo "SKIPPED $1: $2" >> "$T/report"
	note "SKIPPED $1: $2"
}

assert_eq() {	# EXPECTED ACTUAL [WHAT]
	[ "$1" = "$2" ] || fail "${3:-value}: expected '$1', got '$2'"
}

assert_match() {	# REGEX TEXT [WHAT]
	printf '%s' "$2" | grep -Eq -- "$1" ||
		fail "${3:-text} does not match /$1/: $(excerpt "$2")"
}

# TEXT's first 5 lines, and its last 10 where it is longer (a log's
# end is where a failure's cause is)
excerpt() {
	local n
	n=$(printf '%s\n' "$1" | wc -l)
	if [ "$n" -le 15 ]; then
		printf '%s' "$1"
	else
		printf '%s\n' "$1" | head -5
		echo "[... $((n - 15)) lines ...]"
		printf '%s\n' "$1" | tail -10
	fi
}

assert_no_match() {	# REGEX TEXT [WHAT]
	if printf '%s' "$2" | grep -Eq -- "$1"; then
		fail "${3:-text} unexpectedly matches /$1/"
	fi
}

# assert_refused STATUS MESSAGE WHAT CMD...: CMD exits STATUS, its
# standard error is MESSAGE and its standard output empty
assert_refused() {
	local status=$1 msg=$2 what=$3 rc
	shift 3
	"$@" > "$T/refused.out" 2> "$T/refused.err"
	rc=$?
	assert_eq "$status" "$rc" "$what: exit status"
	assert_eq "$msg" "$(cat "$T/refused.err")" "$what"
	assert_eq "" "$(cat "$T/refused.out")" "$what: stdout"
}

fast_config() {
	cat > "$SPOOL/spool.yaml" <<EOF
daemon:
  heartbeat: 200ms
  lost-timeout: 2s
  death-timeout: 5s
  rescan: 200ms
  settle: 1s
  max-requeues: 3
${1:-}
EOF
}

# CKSPOOL_HOSTS=1 (run.sh; a step of scripts/check.sh): the spool is a
# directory that simulated hosts share only through sshfs
# (scripts/hosts.sh): start_spoold runs spoold on host A, start_worker
# runs ckworker on host B, and the test itself (the spool CLI and its
# checks) works on the file server's own directory, like a login node
# that exports it.  No host sees another's changes through inotify.
hosts_mode() {
	[ -n "${CKSPOOL_HOSTS:-}" ] && [ "$CKSPOOL_HOSTS" != 0 ]
}
HOSTS_SH=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../scripts" && pwd)/hosts.sh
ON_A=()
ON_B=()
SPOOLD_HOST=$(hostname -s)

new_spool() {
	if hosts_mode; then
		H=$T/h
		"$HOSTS_SH" up "$H" A B >> "$T/hosts.log" 2>&1 ||
		    fail "hosts.sh up: $(tail -5 "$T/hosts.log")"
		ON_A=("$HOSTS_SH" exec "$H" A)
		ON_B=("$HOSTS_SH" exec "$H" B)
		SPOOLD_HOST=A
		SPOOL=$H/shared/spool
	else
		SPOOL=$T/spool
	fi
	export SPOOL
	spool init >/dev/null || fail "spool init"
	fast_config
}

# Processes started here are killed when the test ends (run.sh), each
# only while it is the process tracked: its start time (field 22 of
# /proc/PID/stat) is kept beside its pid, for PIDs are used again (here
# pid_max is 32768, and make check starts far more processes than that).
track() {
	echo "$1 $(proc_start "$1")" >> "$T/pids"
}

# the start time of process $1, in clock ticks since boot; "" if none
proc_start() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	s=${s##*) }
	set -- $s
	echo "${20:-}"
}

# start_spoold [ARGS]: start spoold and wait until it holds the lease.
start_spoold() {
	"${ON_A[@]}" spoold "$@" >> "$T/spoold.log" 2>&1 &
	SPOOLD_PID=$!
	track $SPOOLD_PID
	wait_for 10 test -s "$SPOOL/lock/spoold/owner" ||
		fail "spoold did not start: $(tail -5 "$T/spoold.log")"
}

# start_worker NAME [ARGS]: start a ckworker, wait until registered.
# Sets WORKER_PID.
start_worker() {
	local name=$1
	shift
	"${ON_B[@]}" ckworker --name "$name" "$@" >> "$T/worker-$name.log" 2>&1 &
	WORKER_PID=$!
	track $WORKER_PID
	wait_for 10 worker_registered "$name" ||
		fail "worker $name did not register: $(tail -5 "$T/worker-$name.log")"
}

worker_registered() {
	ls "$SPOOL/workers" 2>/dev/null | grep -q "^$1-"
}

# the WID of the live worker named NAME
worker_wid() {
	local d
	for d in "$SPOOL"/workers/"$1"-*; do
		[ -e "$d/exited" ] || [ -e "$d/lost" ] || { basename "$d"; return 0; }
	done
	return 1
}

stop_spoold() {
	kill -TERM "$SPOOLD_PID" 2>/dev/null
	wait_for 30 not_running "$SPOOLD_PID" || fail "spoold did not stop"
}

not_running() {
	! kill -0 "$1" 2>/dev/null || [ "$(ps -o stat= -p "$1" 2>/dev/null | cut -c1)" = Z ]
}

# field ID KEY: a field of a finished task's result
field() {
	sed -n "s/^$2: //p" "$SPOOL/tasks/$(( $1 / 1000 ))/$1/result" 2>/dev/null |
	    sed 's/^"\(.*\)"$/\1/'
}

# immutable DIR: chattr +i DIR, remembered so that the harness makes it
# mutable again whatever becomes of the test (run.sh: cleanup_test)
immutable() {
	echo "$1" >> "$T/immutable"
	chattr +i "$1"
}

# spec_field ID KEY: a field of a finished task's spec (in its
# directory from the moment it appears: spoold/finish.c)
spec_field() {
	sed -n "s/^$2: //p" "$SPOOL/tasks/$(( $1 / 1000 ))/$1/spec" 2>/dev/null |
	    sed 's/^"\(.*\)"$/\1/'
}

finished() {
	[ -e "$SPOOL/tasks/$(( $1 / 1000 ))/$1/result" ]
}

task_stdout() {
	cat "$SPOOL/tasks/$(( $1 / 1000 ))/$1/stdout"
}

state_of() {
	spool status "$1" | awk 'NR == 2 { print $3 }'
}

state_is() {	# ID STATE
	[ "$(state_of "$1")" = "$2" ]
}

# spoold has seen the submission (it is no longer in incoming/)
taken_in() {	# ID
	local s
	s=$(state_of "$1")
	[ -n "$s" ] && [ "$s" != submitted ]
}

# A bundle of one task ($id, "echo never") that spoold refuses (a record
# naming uid 4242, not the file's owner), under a spoold whose results
# cannot be written: the refusal decided and durable (accepting/
# ID.rejected), its "rejected" result owed.
refuse_with_its_result_owed() {
	id=$(spool submit -- echo never) || fail "submit"
	sed -i 's/^uid: .*/uid: 4242/' "$SPOOL/incoming/$id.bundle"
	CKSPOOL_FAULT="fail-on=final.:EIO*1000000" start_spoold
	wait_for 10 test -e "$SPOOL/accepting/$id.rejected" ||
	    fail "no owed result: $(tail -3 "$T/spoold.log")"
	wait_for 10 grep -q "mkdir: tmp/final\..*Input/output error" "$T/spoold.log" ||
	    fail "the injected error was not met: $(tail -3 "$T/spoold.log")"
}

# lost_task_running [MAX_REQUEUES [FAULT]]: a task ($id) of max-requeues
# MAX_REQUEUES (default 0) running on worker w1, under a spoold started
# with CKSPOOL_FAULT=FAULT (default: its results cannot be written, an
# I/O error): each run its attempt number on a line of $T/runs; its
# process, orphaned when w1 is killed, ends when told ($T/stop).
lost_task_running() {
	new_spool
	sed -i "s/max-requeues: 3/max-requeues: ${1:-0}/" "$SPOOL/spool.yaml"
	CKSPOOL_FAULT=${2:-fail-on=final.:EIO*1000000} start_spoold
	start_worker w1 --cores 1
	id=$(spool submit -- sh -c "echo \$SPOOL_ATTEMPT >> '$T/runs'; while [ ! -e '$T/stop' ]; do sleep 0.1; done") ||
	    fail "submit"
	wait_for 10 state_is "$id" running || fail "task $id is $(state_of "$id")"
	# running is said at the spawn: the line may come later, and a
	# worker killed before it would kill the task with no line written
	wait_for 10 test -s "$T/runs" || fail "task $id wrote no line in runs"
}

# Rescans, counted by what spoold takes at one (it has no inotify here),
# never by time: spoold takes each of these at a rescan after the one
# that took the one before.
tick_control() {	# N: a request, ignored ("unknown request") and removed
	echo "tick: $1" > "$T/tick"
	mv "$T/tick" "$SPOOL/control/tick.$1"
	wait_for 10 test ! -e "$SPOOL/control/tick.$1" ||
	    fail "control/tick.$1 was not taken: $(tail -3 "$T/spoold.log")"
}

# (at least N: with a failed listing made again at the next rescan,
# the K a fault fails come one a rescan, without waiting for a change)
failed_listings_reach() {	# DIR N: injected failures of listings of DIR
	[ "$(grep -c "fault injection: .*(list $1) fails" "$T/spoold.log")" -ge "$2" ]
}

summary_is() {	# KEY VALUE
	[ "$(summary_field "$1")" = "$2" ]
}

workers_match() {	# REGEX
	spool workers | grep -Eq -- "$1"
}

summary_field() {
	sed -n "s/^$1: //p" "$SPOOL/state/summary" 2>/dev/null
}

# the summary is a running spoold's, its recovery over: not the last
# spoold's ("stopping"), which a new one replaces at its start, nor the
# one it publishes then ("recovering", nothing recovered yet counted)
summary_settled() {
	[ -s "$SPOOL/state/summary" ] &&
	    [ -z "$(summary_field stopping)$(summary_field recovering)" ]
}

# the beat counters: spoold's (its lease) and a worker's (its status),
# read raw (a file not there yet, or met while being overwritten, gives
# no number: the comparison is false, quietly, until a later read)
spoold_beat() {
	sed -n 's/^beat: //p' "$SPOOL/lock/spoold/beat" 2>/dev/null
}

beat_past() {	# N
	[ "$(spoold_beat)" -gt "$1" ] 2>/dev/null
}

worker_beat() {	# WID
	sed -n 's/^beat: //p' "$SPOOL/workers/$1/status" 2>/dev/null
}

worker_beat_past() {	# WID N
	[ "$(worker_beat "$1")" -gt "$2" ] 2>/dev/null
}

# kill_guard PID: SIGKILL worker PID's guard (ckworker(1), "The
# guard"), as a "pkill -9 ckworker" would with the worker, for a test
# of what a dead worker leaves when nothing of it is left to stop it
kill_guard() {
	local g
	g=$(pgrep -P "$1" -f -- "--guard$") || fail "worker $1 has no guard"
	kill -KILL "$g"
	wait_for 10 not_running "$g" || fail "the guard $g stayed"
}

# no process whose command line has PATTERN (pgrep -f) followed by a
# space or its end: "sleep 61" is not "sleep 611" of another test that
# runs beside this one (run.sh JOBS).  Called directly, so no "sh -c"
# whose own command line would match.
no_proc() {
	! pgrep -f -- "$1( |\$)" >/dev/null
}

dir_empty() {
	[ -z "$(ls -A "$1" 2>/dev/null)" ]
}

# control/ holds no request: spoold takes only names that do not begin
# with "." (a file removed while its host still has it open is the
# filesystem's own .fuse_hidden* on sshfs, .nfs* on NFS: not a request)
no_requests() {
	[ -z "$(ls "$SPOOL/control" 2>/dev/null)" ]
}

# a line of the merged journal (spool journal) matches the ERE; spoold
# writes its journal at most every 100 ms, so wait for it (wait_for)
journal_matches() {
	spool journal | grep -Eq -- "$1"
}

# at least N files ending in .why in rejected/
rejected_at_least() {
	[ "$(ls "$SPOOL/rejected" | grep -c '\.why$')" -ge "$1" ]
}

# every temporary area of the spool is empty (nothing left behind)
temp_areas_empty() {
	dir_empty "$SPOOL/tmp" && dir_empty "$SPOOL/accepting" &&
	    dir_empty "$SPOOL/gc"
}

# what the temporary areas hold, dot files included (for a failure)
temp_areas_list() {
	ls -A "$SPOOL/tmp" "$SPOOL/accepting" "$SPOOL/gc" 2>&1 | tr '\n' ' '
}

# A process that SIGKILL cannot end, for tests of what is left of a
# task: one stuck in the kernel, here a read through a FUSE mount whose
# daemon is stopped once it has taken the read (the kernel then waits
# for its answer whatever the signal).  stuck_setup mounts (spoolfs -d,
# at $T/mnt) a second spool that nobody works for, holding one task
# whose result never comes, and writes $T/stick.sh: a task that leaves
# behind (setsid) a reader of that result, its pid in $T/left, and
# ends once $T/go exists; and $T/stick-main.sh: a task whose main
# process is itself that reader (its pid in $T/main.ID, see
# stuck_main).  STUCK_FS is spoolfs's pid; an EXIT trap continues it,
# so the readers end with the test whatever happens.
stuck_setup() {
	local s2=$T/spool2 mnt=$T/mnt q
	spool -S "$s2" init > /dev/null || fail "spool init"
	spoold -S "$s2" >> "$T/spoold2.log" 2>&1 &
	track $!
	wait_for 10 test -s "$s2/lock/spoold/owner" || fail "the second spoold"
	q=$(spool -S "$s2" submit true) || fail "submit"
	mkdir "$mnt"
	spoolfs "$s2" "$mnt" -f -d >> "$T/spoolfs.log" 2>&1 &
	STUCK_FS=$!
	track $STUCK_FS
	trap "kill -CONT $STUCK_FS 2>/dev/null; fusermount3 -u -z '$mnt' 2>/dev/null" EXIT
	wait_for 10 test -e "$mnt/tasks/$q/result" ||
	    fail "spoolfs: $(tail -5 "$T/spoolfs.log")"
	cat > "$T/stick.sh" <<EOF
#!/bin/sh
( setsid cat "$mnt/tasks/$q/result" > /dev/null 2>&1 < /dev/null & echo \$! > "$T/left.tmp"; mv "$T/left.tmp" "$T/left" )
while [ ! -e "$T/go" ]; do sleep 0.05; done
EOF
	cat > "$T/stick-main.sh" <<EOF
#!/bin/sh
echo \$\$ > "$T/main.tmp.\$SPOOL_TASK_ID"
mv "$T/main.tmp.\$SPOOL_TASK_ID" "$T/main.\$SPOOL_TASK_ID"
exec cat "$mnt/tasks/$q/result"
EOF
	chmod +x "$T/stick.sh" "$T/stick-main.sh"
}

# stuck_main TASK: TASK (running $T/stick-main.sh) has its read in
# spoolfs's hands; its main process's pid is in STUCK_MAIN.  Stopping
# spoolfs (kill -STOP "$STUCK_FS") then leaves it in state D once it
# is signalled: SIGKILL does not end it until spoolfs goes on.
stuck_main() {
	wait_for 20 test -s "$T/main.$1" || fail "task $1 did not start"
	STUCK_MAIN=$(cat "$T/main.$1")
	wait_for 10 grep -Eq "opcode: READ \(15\), .*pid: $STUCK_MAIN\$" "$T/spoolfs.log" ||
	    fail "spoolfs took no read of $STUCK_MAIN: $(tail -5 "$T/spoolfs.log")"
}

# stuck_now TASK: once TASK's reader is in spoolfs's hands, stop spoolfs
# and let TASK end; when it has, its reader is stuck (state D) and its
# pid is in STUCK_PID.  stuck_end lets it end.
stuck_now() {
	wait_for 20 test -s "$T/left" || fail "task $1 left nothing behind"
	STUCK_PID=$(cat "$T/left")
	wait_for 10 grep -Eq "opcode: READ \(15\), .*pid: $STUCK_PID\$" "$T/spoolfs.log" ||
	    fail "spoolfs took no read of $STUCK_PID: $(tail -5 "$T/spoolfs.log")"
	kill -STOP "$STUCK_FS"
	touch "$T/go"
	spool wait "$1" || fail "task $1 failed"
	wait_for 10 uninterruptible "$STUCK_PID" ||
	    fail "$1's leftover is not stuck: $(cat "/proc/$STUCK_PID/stat" 2>&1)"
}

stuck_end() {
	kill -CONT "$STUCK_FS"
	wait_for 20 not_running "$STUCK_PID" ||
	    fail "$STUCK_PID still there after spoolfs went on"
}

proc_sleeping() {	# PID: blocked in the kernel, not running
	[ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" = S ]
}

# PID is in state D (uninterruptible: SIGKILL waits for the kernel)
uninterruptible() {
	[ "$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null)" = D ]
}

# how many operations of KIND a program made (CKSPOOL_FSOP_STATS files)
fsop_count() {	# KIND FILE...
	local kind=$1
	shift
	awk -v k="$kind" '$1 == k { s += $2 } END { print s + 0 }' "$@"
}
