#!/bin/sh
# check.sh - the whole test suite ("make check"; CI runs it via .ci/run).
#
#   1. build with gcc into bin/ and with clang into build/clang
#      (-Wall -Wextra -Werror: no warning under either compiler)
#   2. unit tests (cmocka); the parsers' libFuzzer targets, 20 s each
#      (make fuzz; a crash or sanitizer finding fails the step)
#   3. integration tests with real spoold/ckworker processes
#   4. the same integration tests with inotify disabled (rescans only,
#      as on a filesystem shared between hosts)
#   5. unit and integration tests again, built with AddressSanitizer
#      and UndefinedBehaviorSanitizer
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

san_env() {
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 "$@"
}

step "build (gcc)" make -s -j"$jobs" all
step "build (clang)" make -s -j"$jobs" O=build/clang CC=clang all
step "unit tests" make -s -j"$jobs" unit
step "fuzz the parsers (libFuzzer, 20 s per target)" \
    make -s fuzz FUZZ_SECONDS=20
step "integration tests" env BIN="$PWD/bin" tests/integration/run.sh
step "integration tests, inotify disabled" \
    env CKSPOOL_NO_INOTIFY=1 BIN="$PWD/bin" tests/integration/run.sh
step "batch systems: Slurm and its PBS wrappers" \
    env BIN="$PWD/bin" scripts/batch-check.sh slurm
step "batch systems: Grid Engine" \
    env BIN="$PWD/bin" scripts/batch-check.sh sge
step "build (ASan+UBSan)" make -s -j"$jobs" O=build/asan SAN=1 all
step "unit tests (ASan+UBSan)" san_env make -s -j"$jobs" O=build/asan SAN=1 unit
step "integration tests (ASan+UBSan)" \
    san_env env BIN="$PWD/build/asan/bin" tests/integration/run.sh

echo
[ -n "$failures" ] && echo "failed steps:$failures"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
