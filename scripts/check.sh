#!/bin/sh
# check.sh - the whole test suite ("make check"; CI runs it via .ci/run).
#
#   1. build with gcc into bin/ and with clang into build/clang
#      (-Wall -Wextra -Werror: no warning under either compiler)
#   2. unit tests (cmocka); the benchmark's table (tests/bench/t_table.sh:
#      bench/table.awk on a TSV whose table is known); the pid file
#      helper of the batch systems' scripts (tests/scripts/t_pidfile.sh:
#      a stale pid file never gets another process signalled); make
#      install into a temporary DESTDIR, a task run from the installed
#      tree alone, the systemd unit verified and its ExecStart run, a
#      rotation by the logrotate file, make uninstall
#      (tests/scripts/t_install.sh); the
#      parsers' libFuzzer targets, 20 s each (make fuzz; a crash or
#      sanitizer finding fails the step)
#   3. integration tests with real spoold/ckworker processes, each of
#      them once in each of three ways: with inotify disabled (rescans
#      only, as on a filesystem shared between hosts), with the
#      binaries built with AddressSanitizer and UndefinedBehaviorSanitizer
#      (inotify on), and, for the files marked "# across hosts: yes"
#      (t_run.sh, t_crash.sh, t_reliability.sh, t_submit.sh), with
#      spoold and the workers on simulated hosts sharing the spool only
#      through sshfs (CKSPOOL_HOSTS=1, scripts/hosts.sh).  Each mode is
#      run once, not also with a plain build with inotify: that run
#      would repeat the sanitized one's paths and push the suite past
#      30 minutes on 2 cores.  In each mode tests run three times as
#      many at a time as there are CPUs (run.sh JOBS; those that must
#      run alone, alone): a test mostly waits for its processes and
#      their timeouts, and with 4 at a time on 2 CPUs the CPUs were
#      still 62-69% idle, with 6 at a time 37-46% (vmstat, 5 s
#      samples).  On the 2-core VM of 2026-12-07 (437 tests), 6 at a
#      time against 4: inotify disabled 436 s instead of 558, sanitized
#      463 s instead of 553, across hosts (169 tests) 229 s instead of
#      277.  On the VM of 2026-12-06 (413 tests), 4 at
#      a time against 2: inotify disabled 557 s instead of 835,
#      sanitized 532 s instead of 818 (on the VM of 2026-11-26, 127
#      tests, 2 at a time against 1: 418 s instead of 592, across
#      hosts 195 s instead of 326, sanitized 466 s instead of 634).
#   4. with the gcc build, the crash loop (spoold, ckworker and spool
#      map crashed at each of their filesystem mutations, then failed
#      with injected errors: tests/reliability/crashloop.sh, its three
#      targets two at a time: 265 s instead of 428-442 one by one on
#      the 2-core VM) and the
#      kill -9 soak (4000 tasks, 90 s of SIGKILLs:
#      tests/reliability/soak.sh), each bounded by a time limit
#   5. the unit tests again under the sanitizers
#   6. worker jobs on real batch systems, with the gcc build, once:
#      a single-node Slurm with its PBS wrappers, then Grid Engine
#      (scripts/batch-check.sh brings each up, swapping the packages
#      that conflict, runs t_slurm.sh + t_pbs.sh or t_sge.sh, stops it)
#
# Prints one line per step and "N passed, N failed" over the steps;
# exits non-zero if any step failed.  Runs every step even after a
# failure, so one run shows everything that is wrong.
set -u
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
itjobs=$((jobs * 3))	# integration tests at a time (point 3 above)
passed=0
failed=0
failures=""

step() {	# NAME COMMAND...
	name=$1
	shift
	echo "==== $name"
	start=$(date +%s)
	if "$@"; then
		passed=$((passed + 1))
		echo "==== $name: ok ($(( $(date +%s) - start )) s)"
	else
		failed=$((failed + 1))
		failures="$failures
  $name"
		echo "==== $name: FAILED ($(( $(date +%s) - start )) s)"
	fi
}

bounded() {	# SECONDS COMMAND...: fail clearly past the limit
	limit=$1
	shift
	timeout -k 30 "$limit" "$@"
	rc=$?
	[ $rc -eq 124 ] && echo "timed out after $limit s: $*"
	return $rc
}

san_env() {
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 "$@"
}

step "build (gcc)" make -s -j"$jobs" all
step "build (clang)" make -s -j"$jobs" O=build/clang CC=clang all
step "unit tests" make -s -j"$jobs" unit
step "benchmark table (bench/table.awk)" tests/bench/t_table.sh
step "daemons by pid file (scripts/pidfile.sh)" tests/scripts/t_pidfile.sh
step "make install, a task from the installed tree, make uninstall" \
    bounded 300 tests/scripts/t_install.sh
step "fuzz the parsers (libFuzzer, 20 s per target)" \
    env FUZZ_SEED=1 FUZZ_JOBS="$jobs" make -s fuzz FUZZ_SECONDS=20
step "integration tests, inotify disabled" \
    env JOBS="$itjobs" CKSPOOL_NO_INOTIFY=1 BIN="$PWD/bin" tests/integration/run.sh
step "integration tests across hosts (spoold on A, workers on B, sshfs)" \
    env JOBS="$itjobs" CKSPOOL_HOSTS=1 BIN="$PWD/bin" tests/integration/run.sh
step "crash loop: spoold, ckworker, spool map (tests/reliability)" \
    bounded 900 env BIN="$PWD/bin" tests/reliability/crashloop.sh
step "kill -9 soak: 4000 tasks, 90 s of kills (tests/reliability)" \
    bounded 600 env BIN="$PWD/bin" SOAK_TASKS=4000 SOAK_SECONDS=90 \
    tests/reliability/soak.sh
step "batch systems: Slurm and its PBS wrappers" \
    env BIN="$PWD/bin" scripts/batch-check.sh slurm
step "batch systems: Grid Engine" \
    env BIN="$PWD/bin" scripts/batch-check.sh sge
step "build (ASan+UBSan)" make -s -j"$jobs" O=build/asan SAN=1 all
step "unit tests (ASan+UBSan)" san_env make -s -j"$jobs" O=build/asan SAN=1 unit
step "integration tests (ASan+UBSan, inotify on)" \
    san_env env JOBS="$itjobs" BIN="$PWD/build/asan/bin" tests/integration/run.sh

echo
[ -n "$failures" ] && echo "failed steps:$failures"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
