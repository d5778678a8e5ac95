#!/bin/sh
# fuzz.sh - run every libFuzzer target for a bounded time ("make fuzz").
#
#	scripts/fuzz.sh DIR SECONDS [NAME...]
#
# DIR holds the targets built by "make fuzz" (fuzz_NAME, clang with
# -fsanitize=fuzzer,address,undefined); each runs for SECONDS on a copy
# of its seed corpus tests/fuzz/corpus/NAME/ (with tests/fuzz/NAME.dict
# as a dictionary when there is one).  New inputs it finds go to
# DIR/corpus/NAME/, never into the source tree; it is kept between runs,
# so longer runs on demand build on earlier ones:
#
#	make fuzz FUZZ_SECONDS=3600
#	scripts/fuzz.sh build/fuzz/build/fuzz 600 taskfile
#
# A crash, a sanitizer report, a leak or a timeout (one input over 10 s)
# fails the run: the input is saved as DIR/NAME-crash-* (or -leak-,
# -timeout-, -oom-), printed, and kept until the next run of that target
# for reproducing it (DIR/fuzz_NAME FILE).  Exits 0 only if every
# target ran its time without a finding.
#
# FUZZ_SEED=N fixes libFuzzer's random seed ("make check" uses 1, so
# that CI explores the same inputs first on every run and a finding
# there reproduces); unset, each run draws its own, for longer hunts.
set -u
dir=${1:?usage: fuzz.sh DIR SECONDS [NAME...]}
secs=${2:?usage: fuzz.sh DIR SECONDS [NAME...]}
shift 2
src=$(cd "$(dirname "$0")/.." && pwd)/tests/fuzz
if [ $# -eq 0 ]; then
	set --
	for f in "$src"/fuzz_*.c; do
		n=${f##*/fuzz_}
		set -- "$@" "${n%.c}"
	done
fi
# FUZZ_JOBS=N runs N targets at a time (each is one process on one CPU;
# "make check" uses the number of CPUs)
if [ "${FUZZ_JOBS:-1}" -gt 1 ] && [ $# -gt 1 ]; then
	printf '%s\n' "$@" |
	    FUZZ_JOBS=1 xargs -n 1 -P "$FUZZ_JOBS" "$0" "$dir" "$secs" ||
	    { echo "fuzz: a target failed (above)" >&2; exit 1; }
	exit 0
fi
failed=""
for name in "$@"; do
	bin=$dir/fuzz_$name
	seeds=$src/corpus/$name
	work=$dir/corpus/$name
	if [ ! -x "$bin" ]; then
		echo "fuzz: $bin: not built (make fuzz)" >&2
		failed="$failed $name"
		continue
	fi
	if [ ! -d "$seeds" ] || [ -z "$(ls "$seeds")" ]; then
		echo "fuzz: $seeds: no seed corpus" >&2
		failed="$failed $name"
		continue
	fi
	mkdir -p "$work" || exit 1
	rm -f "$dir/$name"-crash-* "$dir/$name"-leak-* "$dir/$name"-timeout-* \
	    "$dir/$name"-oom-*
	dict=""
	[ -f "$src/$name.dict" ] && dict="-dict=$src/$name.dict"
	seed=""
	[ -n "${FUZZ_SEED:-}" ] && seed="-seed=$FUZZ_SEED"
	echo "fuzz: $name for ${secs}s ($(ls "$seeds" | wc -l) seeds," \
	    "$(ls "$work" | wc -l) inputs kept from earlier runs)"
	# shellcheck disable=SC2086
	if ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 \
	    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	    "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
	    -max_len=65536 -print_final_stats=1 $dict $seed \
	    -artifact_prefix="$dir/$name-" "$work" "$seeds" \
	    > "$dir/$name.log" 2>&1; then
		grep -E '^stat::number_of_executed_units|^Done ' \
		    "$dir/$name.log" | tail -2 | sed 's/^/    /'
	else
		echo "fuzz: $name FOUND A BUG (log: $dir/$name.log):" >&2
		grep -E 'ERROR|SUMMARY|invariant|Test unit written|^    #[0-9]' \
		    "$dir/$name.log" | head -30 >&2
		for a in "$dir/$name"-crash-* "$dir/$name"-leak-* \
		    "$dir/$name"-timeout-* "$dir/$name"-oom-*; do
			[ -f "$a" ] || continue
			echo "    input $a:" >&2
			od -A d -c "$a" | head -20 >&2
		done
		failed="$failed $name"
	fi
done
if [ -n "$failed" ]; then
	echo "fuzz: failed:$failed" >&2
	exit 1
fi
echo "fuzz: no findings"
