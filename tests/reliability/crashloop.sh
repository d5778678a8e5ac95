#!/bin/bash
# crashloop.sh - crash every process of a workload at each of its
# filesystem mutations in turn, and fail them with injected errors.
#
#	BIN=/path/to/bin tests/reliability/crashloop.sh [TARGET...]
#
# TARGET is spoold, ckworker or submit (default: all three).  For each
# target and N = 1, 2, 3, ... a fresh spool runs one workload (a "spool
# map" of three tasks, a dependent task, a task that fails once and is
# retried, a task file dropped into incoming/ with cp) while the target
# runs with CKSPOOL_FAULT=crash-at=N (spool-layout/fault.h): it _exits
# just before its Nth mutation.  What crashed is restarted (submit:
# run again, as a user would), and the run goes on until the workload
# is complete.  Checked after every run:
#
#   - right after the crash, with every process stopped:
#     "spool fsck" (no partial file outside temporary areas, every task
#     in exactly one state, at most one live attempt per task); for a
#     crash of spoold, also that the retried task, if final, holds its
#     failed first attempt (attempt.1/);
#   - at the end, everything stopped, and after one more start and stop
#     of spoold (a recovery: it sweeps tmp/ of dead writers):
#     "spool fsck --settled" (also: temporary areas empty, every report
#     taken in), and
#     every submitted task finished once, state done, with the output of
#     one run of it (the retried one: of a later attempt than its first,
#     and, where no worker crashed and no error was injected into spoold
#     or a worker, with its first attempt in attempt.1/).
#
# The loop for a target ends at the first N the run completes without
# reaching; N - 1 crash points were then covered.  Then the same is done
# with injected errors instead of crashes, fail-at=N:ERR for ERR in
# turn EIO, ENOSPC, EDQUOT, ESTALE (a burst beyond fsop's retries),
# EINTR (within them), and phantom-at=N (an operation done that
# reports ENOENT/EEXIST, as NFS retransmissions do): a process may die
# of an error (exit status 1 or 111, with a message) and is restarted,
# but it must never crash (signal), and nothing may be lost: every task
# must end done (a worker makes a task's output files before it claims
# it, so an error there leaves the task in its inbox, to be tried
# again; doc/guarantees.md, section 6).
#
# By default the error mode tries every third mutation (1, 4, 7, ...)
# with one ERR each, in rotation, so that each ERR meets about one
# mutation in 18; CRASH_ERROR_STRIDE=1 CRASH_ERROR_ALL=1 tries every
# ERR at every mutation (by hand: about 18 times the runs of the
# default error mode).
#
# Prints one line per target and mode (for errors, also how many
# mutations each ERR was injected at), and at the end the operations
# covered, the mutations each ERR was injected at over all targets, and
# "N passed, N failed" over the loops (one per target and mode).  Exit
# status 0 if every run held every invariant.
#
# Knobs:
#   CRASH_ERROR_STRIDE=K  with errors, try every Kth mutation (default 3)
#   CRASH_ERROR_ALL=1     with errors, try every ERR at each mutation
#                         tried (default: one ERR per mutation, in turn)
#   CRASH_MAX=N           stop each loop at N points (default: none)
#   CRASH_FROM=N          start each loop at point N (default 1)
#   CRASH_MODES="crash errors"  which modes to run
#   CRASH_KEEP=1          keep every run's directory (default: only
#                         failed ones)
#   CRASH_JOBS=J          run the loops of J targets at a time (default:
#                         the number of CPUs; 1 runs them one by one)
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${BIN:?set BIN to the directory with spool, spoold and ckworker}"
. "$here/../integration/lib.sh"
stride=${CRASH_ERROR_STRIDE:-3}
each_err=${CRASH_ERROR_ALL:-0}
case $stride in ''|*[!0-9]*|0) echo "CRASH_ERROR_STRIDE: a number from 1, not '$stride'" >&2; exit 2 ;; esac
max=${CRASH_MAX:-0}
modes=${CRASH_MODES:-crash errors}
targets=${*:-spoold ckworker submit}
base=$(mktemp -d "${TMPDIR:-/tmp}/ckspool-crash.XXXXXX")
errors="EIO ENOSPC EDQUOT ESTALE*9 EINTR*3 phantom"
CRASHED=86	# FAULT_CRASH_STATUS in spool-layout/fault.h
failures=0
total_points=0
declare -A err_points=()	# ERR -> mutations it was injected at, all targets
pids=""

fail() {	# stop this run: report, keep its directory
	echo "    FAIL ($RUN): $*" >&2
	for log in "$T"/*.log; do
		[ -f "$log" ] || continue
		echo "    --- $(basename "$log")" >&2
		tail -8 "$log" | sed 's/^/    | /' >&2
	done
	RUN_FAILED=1
	return 1
}

bg() {	# LOG FAULT CMD...: start in the background, remember the pid
	local log=$1 fault=$2
	shift 2
	if [ -n "$fault" ]; then
		CKSPOOL_FAULT=$fault "$@" >> "$T/$log" 2>&1 &
	else
		"$@" >> "$T/$log" 2>&1 &
	fi
	BG=$!
	pids="$pids $BG"
}

kill_all() {
	local p
	for p in $pids; do kill -KILL "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
	pids=""
	pkill -KILL -f -- "$T/spool" 2>/dev/null
	return 0
}

# RC: the exit status of a background process that ended (not in a
# subshell: only this shell can wait for its children)
status_of() {
	wait "$1" 2>/dev/null
	RC=$?
}

alive() {
	kill -0 "$1" 2>/dev/null
}

pause_all() {
	local p
	for p in $pids; do kill -STOP "$p" 2>/dev/null; done
}

resume_all() {
	local p
	for p in $pids; do kill -CONT "$p" 2>/dev/null; done
}

new_run() {	# TARGET MODE N
	RUN="$1 $2 $3"
	T=$base/$1.$2.$3
	mkdir -p "$T"
	SPOOL=$T/spool
	export SPOOL
	RUN_FAILED=0
	spool init > /dev/null || fail "spool init"
	# slow beats, so that the mutations of a run depend on the
	# workload rather than on its length in time
	cat > "$SPOOL/spool.yaml" <<-EOF
	daemon:
	  heartbeat: 200ms
	  lost-timeout: 600ms
	  death-timeout: 10s
	  rescan: 100ms
	  settle: 300ms
	EOF
	: > "$T/ids"
	: > "$T/expect"
}

# Run the map of three tasks; with a fault, it may fail.  Appends the
# IDs it printed to $T/ids.  Its exit status.
submit_map() {	# FAULT
	local out rc
	if [ -n "$1" ]; then
		out=$(printf '1\n2\n3\n' | CKSPOOL_FAULT=$1 spool map -- \
		    sh -c 'echo r$1' _ {} 2>> "$T/submit.log")
	else
		out=$(printf '1\n2\n3\n' | spool map -- sh -c 'echo r$1' _ {} \
		    2>> "$T/submit.log")
	fi
	rc=$?
	[ $rc -eq 0 ] && echo "$out" >> "$T/ids"
	return $rc
}

submit_rest() {
	local last dep again
	last=$(tail -1 "$T/ids")
	dep=$(spool submit --after "$last" -- echo dep 2>> "$T/submit.log") ||
	    { fail "submit --after"; return 1; }
	again=$(spool submit --retries 1 -- \
	    sh -c '[ "$SPOOL_ATTEMPT" -gt 1 ] || exit 3; echo again' \
	    2>> "$T/submit.log") || { fail "submit --retries"; return 1; }
	printf '%s\n%s\n' "$dep" "$again" >> "$T/ids"
	printf 'command: [echo, dropped]\n' > "$T/job.yaml"
	cp "$T/job.yaml" "$SPOOL/incoming/job.yaml"
}

# Complete: nothing waits to be taken in, every ID a submission printed
# is final, and the dropped file's task too (its spec names its source).  (A bundle whose tasks are
# all final may stay in specs/ when removing it failed: spoold tries
# again later, and recovery removes it; fsck --settled checks that.)
complete() {
	local id
	dir_empty "$SPOOL/incoming" && dir_empty "$SPOOL/accepting" || return 1
	while read -r id; do
		finished "$id" || return 1
	done < "$T/ids"
	grep -Eqx 'source: "?job\.yaml"?' "$SPOOL"/tasks/*/*/spec 2>/dev/null
}

# spool fsck with every process stopped (files do not move under it)
fsck_now() {	# [--settled]
	pause_all
	spool fsck -q "$@" > "$T/fsck.out" 2>&1
	local rc=$?
	resume_all
	if [ $rc -ne 0 ]; then
		fail "spool fsck $*: $(grep -v '^fsck: note' "$T/fsck.out" | head -5)"
		return 1
	fi
}

# The outputs: each token once, "r1 r2 r3" possibly twice when a
# crashed "spool map" had landed before the user ran it again.
check_outputs() {	# MAY_REPEAT_MAP
	local d tok n state seen="" dup="" missing=0
	for d in "$SPOOL"/tasks/*/*; do
		[ -d "$d" ] || continue
		state=$(sed -n 's/^state: //p' "$d/result")
		if [ "$state" != done ]; then
			fail "$(basename "$d"): state $state: $(sed -n 's/^message: //p' "$d/result")"
			return 1
		fi
		tok=$(cat "$d/stdout")
		case " $seen " in
		*" $tok "*) dup="$dup $tok" ;;
		esac
		seen="$seen $tok"
	done
	for tok in r1 r2 r3 dep again dropped; do
		n=$(printf '%s\n' $seen | grep -cx -- "$tok")
		[ "$n" -ge 1 ] || missing=$((missing + 1))
	done
	[ $missing -eq 0 ] ||
	    { fail "outputs missing: $seen"; return 1; }
	for tok in $dup; do
		case "$1:$tok" in
		yes:r[123]) ;;
		*) fail "$tok accepted twice: $seen"; return 1 ;;
		esac
	done
	# the retried task: its first attempt failed, a later one counts
	for d in "$SPOOL"/tasks/*/*; do
		[ "$(cat "$d/stdout" 2>/dev/null)" = again ] || continue
		[ "$(sed -n 's/^attempt: //p' "$d/result")" -ge 2 ] ||
		    { fail "retried task accepted at attempt $(sed -n 's/^attempt: //p' "$d/result")"; return 1; }
	done
}

# The retried task: once its directory is there, its first attempt (a
# failure, retried) is in it, not only a moment later (spool-layout(5)).
# Only where nothing can lose that attempt: no worker crashes (the
# attempt of a lost worker is not kept) and no error is injected into
# spoold or a worker (an attempt whose archiving fails is dropped).
attempts_kept() {
	local d
	[ "$KEEPS_ATTEMPTS" = yes ] || return 0
	for d in "$SPOOL"/tasks/*/*; do
		[ "$(cat "$d/stdout" 2>/dev/null)" = again ] || continue
		[ -f "$d/attempt.1/result" ] ||
		    { fail "retried task $(basename "$d") without its attempt 1: $(ls "$d" | tr '\n' ' ')"; return 1; }
	done
}

wait_complete() {	# SECONDS
	wait_for "$1" complete 2>/dev/null ||
	    fail "workload not complete after $1 s: $(spool status 2>&1 | head -3 | tr '\n' ' ')"
}

stop() {	# PID: SIGTERM, wait; RC its exit status
	kill -TERM "$1" 2>/dev/null
	status_of "$1"
}

# one more start and stop of spoold: what every start does (recovery)
recovery_pass() {
	bg recovery.log "" spoold
	wait_for 10 grep -q "recovered [0-9]* worker" "$T/recovery.log" ||
	    { fail "spoold did not recover"; return 1; }
	stop $BG
	[ $RC -eq 0 ] || { fail "recovery pass: spoold stopped with $RC"; return 1; }
}

dead_or_complete() {	# PID
	! alive "$1" || complete
}

# What happened to a process that ended by itself under FAULT.
judge_exit() {	# WHAT RC LOG
	local what=$1 rc=$2 log=$3
	if [ "$rc" -eq $CRASHED ]; then
		CRASHES=$((CRASHES + 1))
		return 0
	fi
	if [ "$rc" -ge 128 ]; then
		fail "$what died of signal $((rc - 128))"
		return 1
	fi
	if [ "$rc" -eq 0 ]; then
		fail "$what exited 0 by itself"
		return 1
	fi
	# an injected error it could not get past: it must have said so
	if ! tail -3 "$T/$log" | grep -q "$what: "; then
		fail "$what exited $rc without a message"
		return 1
	fi
	ERROR_EXITS=$((ERROR_EXITS + 1))
}

reached() {	# LOG: did the fault fire in the process writing LOG?
	grep -q "fault injection: \(crash before\|operation\)" "$T/$1" 2>/dev/null
}

# ---- one run per target ----

run_spoold() {	# FAULT
	local rc
	bg worker.log "" ckworker --name w1 --cores 2
	W=$BG
	submit_map "" || { fail "spool map"; return 1; }
	submit_rest || return 1
	bg spoold.log "$1" spoold
	S=$BG
	wait_for 30 dead_or_complete $S 2>/dev/null
	if ! alive $S; then
		status_of $S
		judge_exit spoold $RC spoold.log || return 1
		[ $RC -eq $CRASHED ] && { fsck_now && attempts_kept || return 1; }
		bg spoold.log "" spoold
		S=$BG
	fi
	wait_complete 30 || return 1
	stop $S
	if [ $RC -ne 0 ]; then	# it met the fault while stopping
		judge_exit spoold $RC spoold.log || return 1
		bg restart.log "" spoold
		S=$BG
		wait_for 10 grep -q "recovered [0-9]* worker" "$T/restart.log" ||
		    { fail "spoold did not restart"; return 1; }
		stop $S
	fi
	[ $RC -eq 0 ] || { fail "spoold stopped with $RC"; return 1; }
	stop $W
	[ $RC -eq 0 ] || { fail "worker stopped with $RC"; return 1; }
	REACHED=0
	reached spoold.log && REACHED=1
	return 0
}

run_ckworker() {	# FAULT
	local rc n=1
	bg spoold.log "" spoold
	S=$BG
	wait_for 10 test -s "$SPOOL/lock/spoold/owner" ||
	    { fail "spoold did not start"; return 1; }
	submit_map "" || { fail "spool map"; return 1; }
	submit_rest || return 1
	bg worker.log "$1" ckworker --name w1 --cores 2
	W=$BG
	while :; do
		wait_for 30 dead_or_complete $W 2>/dev/null
		alive $W && break
		status_of $W
		judge_exit ckworker $RC worker.log || return 1
		[ $RC -eq $CRASHED ] && { fsck_now || return 1; }
		n=$((n + 1))
		bg worker.log "" ckworker --name "w$n" --cores 2
		W=$BG
	done
	wait_complete 30 || return 1
	stop $W
	if [ $RC -ne 0 ]; then	# it met the fault while leaving
		judge_exit ckworker $RC worker.log || return 1
	fi
	stop $S
	[ $RC -eq 0 ] || { fail "spoold stopped with $RC"; return 1; }
	REACHED=0
	reached worker.log && REACHED=1
	return 0
}

run_submit() {	# FAULT
	local rc again=no
	bg spoold.log "" spoold
	S=$BG
	wait_for 10 test -s "$SPOOL/lock/spoold/owner" ||
	    { fail "spoold did not start"; return 1; }
	bg worker.log "" ckworker --name w1 --cores 2
	W=$BG
	submit_map "$1"
	rc=$?
	REACHED=0
	reached submit.log && REACHED=1
	if [ $rc -ne 0 ]; then
		judge_exit spool $rc submit.log || return 1
		[ "$rc" -eq $CRASHED ] && { fsck_now || return 1; }
		# the user runs it again
		submit_map "" || { fail "spool map, again"; return 1; }
		again=yes
	fi
	submit_rest || return 1
	wait_complete 30 || return 1
	MAP_AGAIN=$again
	stop $W
	[ $RC -eq 0 ] || { fail "worker stopped with $RC"; return 1; }
	stop $S
	[ $RC -eq 0 ] || { fail "spoold stopped with $RC"; return 1; }
	return 0
}

# One run of TARGET with FAULT at point N (TAG names its directory).
# 0: it held; 1: it failed (counted, its directory kept).
run_one() {	# TARGET MODE N TAG FAULT
	new_run "$1" "$2" "$3$4"
	MAP_AGAIN=no
	KEEPS_ATTEMPTS=no
	case "$1:$2" in
	spoold:crash|submit:*) KEEPS_ATTEMPTS=yes ;;
	esac
	if "run_$1" "$5"; then
		[ "$RUN_FAILED" -eq 0 ] && recovery_pass &&
		    fsck_now --settled &&
		    check_outputs "$MAP_AGAIN" && attempts_kept
	fi
	kill_all
	if [ "$RUN_FAILED" -ne 0 ]; then
		echo "    ($5; kept in $T)" >&2
		failures=$((failures + 1))
		return 1
	fi
	[ -n "${CRASH_KEEP:-}" ] || rm -rf "$T"
	return 0
}

loop() {	# TARGET MODE
	local target=$1 mode=$2 n=${CRASH_FROM:-1} fault points=0 start
	local err try reached per="" k
	local -A hits=()
	CRASHES=0
	ERROR_EXITS=0
	MODE=$mode
	start=$(date +%s)
	while :; do
		if [ "$mode" = crash ]; then
			try=crash
		elif [ "$each_err" = 1 ]; then
			try=$errors
		else
			set -- $errors
			shift $(( (n / stride) % $# ))
			try=$1
		fi
		reached=0
		for err in $try; do
			case $err in
			crash) fault="crash-at=$n" ;;
			phantom) fault="phantom-at=$n" ;;
			*) fault="fail-at=$n:$err" ;;
			esac
			k=""
			[ "$mode" = crash ] || k=".$(printf '%s' "$err" | tr -c 'A-Za-z0-9' _)"
			run_one "$target" "$mode" "$n" "$k" "$fault" || break 2
			if [ "$REACHED" -eq 1 ]; then
				reached=1
				hits[$err]=$(( ${hits[$err]:-0} + 1 ))
			elif [ "$try" = phantom ]; then
				# not the end: a phantom also stays silent when
				# no rename, mkdir, symlink, unlink or rmdir
				# succeeds from N on (N a create, a write or a
				# flush near the process's end), so it proves
				# nothing about N; the next point, another
				# error, decides
				reached=2
			fi
		done
		[ "$reached" -ne 0 ] || break
		[ "$reached" -eq 2 ] || points=$((points + 1))
		[ "$max" -gt 0 ] && [ "$n" -ge "$max" ] && break
		if [ "$mode" = crash ]; then
			n=$((n + 1))
		else
			n=$((n + stride))
		fi
	done
	total_points=$((total_points + points))
	if [ "$mode" = crash ]; then
		printf '%-8s crash:  %3d mutations crashed at, %d crashes, %3ss\n' \
		    "$target" "$points" "$CRASHES" $(( $(date +%s) - start ))
	else
		for err in $errors; do
			per="$per${per:+, }$err ${hits[$err]:-0}"
			err_points[$err]=$(( ${err_points[$err]:-0} + ${hits[$err]:-0} ))
		done
		printf '%-8s errors: %3d mutations failed (every %d, %s), %d exits on errors, %3ss\n' \
		    "$target" "$points" "$stride" \
		    "$([ "$each_err" = 1 ] && echo "every error at each" || echo "one error each, in turn")" \
		    "$ERROR_EXITS" $(( $(date +%s) - start ))
		printf '%-8s errors: injected at (mutations per error): %s\n' \
		    "$target" "$per"
	fi
}

# Both modes of one target, in a subshell of its own: its lines go to
# $base/TARGET.out, its counts to $base/TARGET.counts (read back below).
run_target() {	# TARGET
	local mode err loops=0
	for mode in $modes; do
		loop "$1" "$mode"
		loops=$((loops + 1))
	done > "$base/$1.out" 2>&1
	{
		echo "loops $loops"
		echo "failures $failures"
		echo "points $total_points"
		for err in $errors; do
			echo "err $err ${err_points[$err]:-0}"
		done
	} > "$base/$1.counts"
}

# The targets are independent (each run has its own spool and kills
# only its own processes), so up to CRASH_JOBS of them run at a time
# (default: the number of CPUs); their lines are printed in order.
jobs=${CRASH_JOBS:-$(nproc 2>/dev/null || echo 1)}
case $jobs in ''|*[!0-9]*|0) echo "CRASH_JOBS: a number from 1, not '$jobs'" >&2; exit 2 ;; esac
echo "crash loop: binaries from $BIN, targets: $targets, $jobs at a time"
running=0
for target in $targets; do
	if [ "$running" -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
	run_target "$target" &
	running=$((running + 1))
done
wait
loops=0
for target in $targets; do
	cat "$base/$target.out"
	if [ ! -f "$base/$target.counts" ]; then
		echo "$target: its loops ended without counts" >&2
		failures=$((failures + 1))
		continue
	fi
	while read -r key a b; do
		case $key in
		loops) loops=$((loops + a)) ;;
		failures) failures=$((failures + a)) ;;
		points) total_points=$((total_points + a)) ;;
		err) err_points[$a]=$(( ${err_points[$a]:-0} + b )) ;;
		esac
	done < "$base/$target.counts"
done
echo "operations covered: $total_points"
case " $modes " in
*" errors "*)
	per=""
	for err in $errors; do
		per="$per${per:+, }$err ${err_points[$err]:-0}"
	done
	echo "errors injected at (mutations per error, all targets): $per" ;;
esac
[ $failures -eq 0 ] && [ -z "${CRASH_KEEP:-}" ] && rm -rf "$base"
# one per target and mode: each passed if every run of its loop held
echo "$((loops - failures)) passed, $failures failed"
[ $failures -eq 0 ]
