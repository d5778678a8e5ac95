#!/bin/bash
# run.sh - the integration test runner.
#
#	BIN=/path/to/bin tests/integration/run.sh [PATTERN]
#
# Runs every test_* function of every tests/integration/t_*.sh (or only
# those whose name matches PATTERN), each in its own subshell with a
# fresh $T directory and spool, real spoold and ckworker processes, and
# a per-test time limit.  Prints one line per test and at the end:
#
#	N passed, N failed
#
# Environment: CKSPOOL_NO_INOTIFY=1 runs everything on rescans alone.
# CKSPOOL_HOSTS=1 runs the files whose header says "# across hosts: yes"
# with spoold on simulated host A and workers on host B, sharing the
# spool only through sshfs (lib.sh: new_spool, scripts/hosts.sh).
# JOBS=N runs up to N tests at a time (default 1; "make check" uses
# three times the number of CPUs): most of a test's time is waiting for
# processes and timeouts, not CPU.  Files whose header says
# "# parallel: no" run alone, before the others, and so does every test
# on a batch system (one cluster).  Tests across hosts run side by side
# too: each has its own simulated hosts, whose namespaces, links and
# addresses are private to it (hosts.sh).
# Each test's line is printed when it ends.
# TEST_TIMEOUT (seconds, default 120) bounds each test.  A test that
# returns 0 still fails if bash reported an error in the code of this
# directory's files while it ran (a command not found, a syntax error,
# "[" given a word for a number): such an error does not end the test,
# and would otherwise pass unseen.  Lines a test
# leaves in $T/report (measured figures) are printed under its "ok" line.
#
# A file whose header says "# needs: WORD..." (t_slurm.sh: slurm) tests
# against a real batch system: it runs only when CKSPOOL_BATCH names
# one of its words, and then only such files run (scripts/batch-check.sh
# does this in "make check", with the batch system up).  Otherwise it is
# named as not run here, and counted neither way.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${BIN:?set BIN to the directory with spool, spoold and ckworker}"
export BIN
pattern=${1:-}
limit=${TEST_TIMEOUT:-120}
base=$(mktemp -d "${TMPDIR:-/tmp}/ckspool-it.XXXXXX")
passed=0
failed=0
failures=""

# the tracked processes of test directory $1 (lib.sh: track) that are
# still the processes tracked: a pid whose start time changed is
# another process's now, maybe another test's runner
tracked_alive() {
	local pid start
	[ -f "$1/pids" ] || return 0
	. "$here/lib.sh"	# proc_start (called in $(...): run.sh keeps none of it)
	tac "$1/pids" | while read -r pid start; do
		[ -n "$start" ] && [ "$(proc_start "$pid")" = "$start" ] &&
		    echo "$pid"
	done
}

cleanup_test() {	# kill what a test started, children first
	local pids pid
	pids=$(tracked_alive "$1")
	for pid in $pids; do kill -TERM "$pid" 2>/dev/null; done
	for pid in $pids; do
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$pid" 2>/dev/null
	done
	# directories the test made immutable (lib.sh: immutable), so that
	# its directory can be removed however the test ended
	[ -f "$1/immutable" ] && xargs -d '\n' chattr -i < "$1/immutable" 2>/dev/null
	# workers started by a spoold of this test (their spool is under $1)
	pkill -KILL -f -- "-S $1/" 2>/dev/null
	pkill -KILL -f -- "$1/spool" 2>/dev/null
	pkill -KILL -f -- "$1/h/shared/spool" 2>/dev/null
	# the simulated hosts of CKSPOOL_HOSTS mode, however the test ended
	if [ -n "${CKSPOOL_HOSTS:-}" ] && [ -d "$1/h" ]; then
		"$here/../../scripts/hosts.sh" down "$1/h" >> "$1/hosts.log" 2>&1
	fi
	return 0
}

# shell_errors OUTPUT: print the errors bash reported in the code of
# this directory's files (a mistyped command, a test on a word that is
# not a number...), which do not end a test by themselves; false when
# there are none.  Job reports ("line N: PID Killed ...") are not errors.
shell_errors() {
	awk -v dir="$here/" '
	    index($0, dir) == 1 &&
	    substr($0, length(dir) + 1) ~ /^[a-z_]+\.sh: line [0-9]+: .*(command not found|syntax error|unbound variable|bad substitution|integer expression expected|unary operator expected|binary operator expected|too many arguments|ambiguous redirect)/ {
		print; n++
	    }
	    END { exit n == 0 }' "$1"
}

# run_one TEST FILE (in the background): run TEST of FILE in $base/TEST
# under the time limit, clean up after it, and leave its verdict in
# $T/verdict ("RC SECONDS"), written last.
run_one() {
	local t=$1 file=$2 T="$base/$1" start tpid watchdog rc
	mkdir -p "$T"
	start=$(date +%s)
	(
		export T
		cd "$T" || exit 1
		. "$here/lib.sh"
		. "$file"
		"$t"
	) >> "$T/output" 2>&1 &
	tpid=$!
	# the watchdog takes its sleep with it when killed: a sleep left
	# behind would hold run.sh's output open for the whole limit.
	# At the limit the test and the commands it runs get SIGTERM
	# (a test with a TERM trap runs it only once its foreground
	# command ends: a "spool wait" with nothing to wait for would
	# hold it for ever), and SIGKILL 10 s later.
	( trap 'kill $s 2>/dev/null; exit 0' TERM
	  sleep "$limit" & s=$!
	  wait $s && kill -TERM $tpid 2>/dev/null || exit 0
	  echo "    FAIL: time limit of ${limit}s exceeded" >> "$T/output"
	  pkill -TERM -P $tpid 2>/dev/null
	  sleep 10 & s=$!
	  wait $s && { pkill -KILL -P $tpid; kill -KILL $tpid; } 2>/dev/null
	  exit 0 ) &
	watchdog=$!
	wait $tpid
	rc=$?
	kill $watchdog 2>/dev/null
	wait $watchdog 2>/dev/null
	if [ $rc -eq 0 ] && shell_errors "$T/output" > "$T/shell-errors"; then
		{ echo "    FAIL: bash reported an error in the test's own code:"
		  sed 's/^/      /' "$T/shell-errors"; } >> "$T/output"
		rc=1
	fi
	cleanup_test "$T"
	echo "$rc $(( $(date +%s) - start ))" > "$T/verdict.tmp" &&
	    mv "$T/verdict.tmp" "$T/verdict"
}

# report TEST RC SECONDS: its line, and what it said if it failed
report() {
	local t=$1 rc=$2 secs=$3 T="$base/$1" log
	if [ "$rc" -eq 0 ]; then
		passed=$((passed + 1))
		printf 'ok   %-50s %3ss\n' "$t" "$secs"
		[ -f "$T/report" ] && sed 's/^/     : /' "$T/report"
	else
		failed=$((failed + 1))
		failures="$failures $t"
		printf 'FAIL %-50s %3ss\n' "$t" "$secs"
		sed 's/^/     | /' "$T/output" | tail -40
		for log in "$T"/spoold.log "$T"/spool/log/*.log "$T"/worker-*.log; do
			[ -f "$log" ] || continue
			echo "     | --- $(basename "$log") (last lines)"
			tail -15 "$log" | sed 's/^/     | /'
		done
	fi
}

count() { echo $#; }

# start_one TEST:t_FILE.sh: run that test in the background, running
start_one() {
	run_one "${1%%:*}" "$here/${1#*:}" &
	running="$running ${1%%:*}:$!"
}

# reap_one: wait until a running test ends; report every test that has
# (a run_one that died before its verdict counts as a failure)
reap_one() {
	local e t pid left=""
	wait -n 2>/dev/null
	for e in $running; do
		t=${e%:*}
		pid=${e##*:}
		if [ -f "$base/$t/verdict" ]; then
			wait "$pid" 2>/dev/null
			report "$t" $(cat "$base/$t/verdict")
		elif ! kill -0 "$pid" 2>/dev/null; then
			# (bash reaps its children as they end: one that
			# wrote its verdict after the test above and ended
			# before kill -0 is not one that died)
			wait "$pid" 2>/dev/null
			if [ -f "$base/$t/verdict" ]; then
				report "$t" $(cat "$base/$t/verdict")
			else
				echo "    FAIL: the runner of this test died" >> "$base/$t/output"
				report "$t" 1 0
			fi
		else
			left="$left $e"
		fi
	done
	running=$left
}

# JOBS (default 1) tests at a time; the files whose header says
# "# parallel: no" (they measure the host's CPUs, cgroups or memory) run
# alone, first, and so does everything on a batch system (one cluster
# for all).  (Run where they come, the alone tests would wait for every
# test in flight to end first, cores idle meanwhile.)  Simulated hosts
# need no such care: the namespaces and links of a test's hosts are
# named after its directory (hosts.sh), and their addresses exist only
# inside those namespaces.
jobs=${JOBS:-1}
running=""
[ -n "${CKSPOOL_BATCH:-}" ] && jobs=1

mode=inotify
[ -n "${CKSPOOL_NO_INOTIFY:-}" ] && [ "${CKSPOOL_NO_INOTIFY}" != 0 ] && mode="no-inotify"
[ -n "${CKSPOOL_HOSTS:-}" ] && [ "${CKSPOOL_HOSTS}" != 0 ] && mode="across hosts"

echo "integration tests ($mode), binaries from $BIN"
alone_tests=""		# "TEST:t_FILE.sh" words, in order
side_tests=""
for file in "$here"/t_*.sh; do
	needs=$(sed -n 's/^# needs: *//p' "$file" | head -1)
	if [ -n "$needs" ]; then
		run_it=no
		for n in $needs; do
			case " ${CKSPOOL_BATCH:-} " in *" $n "*) run_it=yes ;; esac
		done
		if [ $run_it = no ]; then
			echo "not run here: $(basename "$file") (needs $needs: CKSPOOL_BATCH=\"$needs\", or scripts/batch-check.sh)"
			continue
		fi
	elif [ -n "${CKSPOOL_BATCH:-}" ]; then
		continue
	fi
	# across hosts, only the files whose header says they can run so
	# (the others use local tmpfs mounts, cgroups, uids or own hosts)
	if [ -n "${CKSPOOL_HOSTS:-}" ] && [ "${CKSPOOL_HOSTS}" != 0 ] &&
	    ! grep -q '^# across hosts: yes' "$file"; then
		echo "not run across hosts: $(basename "$file")"
		continue
	fi
	tests=$(bash -c ". '$here/lib.sh'; . '$file'; declare -F" | awk '{print $3}' | grep '^test_' || true)
	alone=no
	grep -q '^# parallel: no' "$file" && alone=yes
	for t in $tests; do
		[ -n "$pattern" ] && ! printf '%s' "$t" | grep -Eq -- "$pattern" && continue
		if [ $alone = yes ]; then
			alone_tests="$alone_tests $t:${file##*/}"
		else
			side_tests="$side_tests $t:${file##*/}"
		fi
	done
done
for e in $alone_tests; do
	start_one "$e"
	while [ -n "$running" ]; do reap_one; done
done
for e in $side_tests; do
	while [ $(count $running) -ge "$jobs" ]; do reap_one; done
	start_one "$e"
done
while [ -n "$running" ]; do reap_one; done
[ $failed -eq 0 ] && rm -rf "$base"
[ -n "$failures" ] && echo "failed:$failures"
echo "$passed passed, $failed failed"
if [ -n "${CKSPOOL_BATCH:-}" ] && [ $((passed + failed)) -eq 0 ]; then
	echo "no test needs \"$CKSPOOL_BATCH\": nothing was tested"
	exit 1
fi
[ $failed -eq 0 ]
