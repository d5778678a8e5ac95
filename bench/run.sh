#!/bin/bash
# run.sh - the benchmark ("make bench"): ckspool against the spawn floor
# and its peers, on this machine, in one run.
#
#	BIN=bin BENCH_BIN=build/bench bench/run.sh
#
# Scenarios (doc/performance.md explains each and the targets):
#   1  throughput: N `true` tasks (and `sleep 0.01`), 2 one-core slots,
#      submission to the last result; ckspool, the floor (posix_spawn two
#      at a time), xargs -P2, Work Queue, task-spooler, GNU parallel, Dask
#   2  single-task latency on an idle spool
#   3  CPU of spoold and ckworker per task (their own, not the tasks')
#   4  filesystem operations per task (CKSPOOL_FSOP_STATS)
#   5  scale: 1,000,000 tasks queued (BENCH_SCALE_N)
#
# Every ckspool run is verified before its time counts: every task's
# result must say exit 0 (and for the sleep tasks their count).  A peer
# that fails is reported as failed, not timed.
#
# Environment: BENCH_QUICK=1 a reduced run (under 3 minutes);
# BENCH_REPS (default 3); BENCH_OUT (default bench/results); BENCH_ONLY
# (a regular expression: only the runs whose name matches, e.g. ckspool).
set -u
cd "$(dirname "$0")/.."
top=$PWD
BIN=$(cd "${BIN:-bin}" && pwd)
BB=$(cd "${BENCH_BIN:-build/bench}" && pwd)
export PATH="$BIN:$PATH"
reps=${BENCH_REPS:-3}
out_dir=${BENCH_OUT:-$top/bench/results}
quick=${BENCH_QUICK:-0}
if [ "$quick" = 1 ]; then
	sizes="2000"
	sleep_n=500
	scale_n=${BENCH_SCALE_N:-100000}
	peers_at="2000"
	lat_n=30
else
	sizes="2000 10000"
	sleep_n=2000
	scale_n=${BENCH_SCALE_N:-1000000}
	peers_at="2000 10000"
	lat_n=100
fi
stamp=$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out_dir"
tsv=$out_dir/$stamp.tsv
work=$(mktemp -d "${TMPDIR:-/var/tmp}/ckspool-bench.XXXXXX")
spoold_pid=""

cleanup() {
	[ -n "$spoold_pid" ] && kill -TERM "$spoold_pid" 2>/dev/null
	[ -n "$spoold_pid" ] && wait "$spoold_pid" 2>/dev/null
	tsp_stop
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { printf '%s\n' "$*" >&2; }

record() {	# SCENARIO SYSTEM N REP VALUE UNIT
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >> "$tsv"
}

now() { printf '%s' "$EPOCHREALTIME"; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", b - a }'; }

# ---- ckspool ----

# Every run gets a spool of its own, and no spool is removed before the
# end: on ext4 without a journal (this machine's root) an inode freed in
# the last seconds is skipped by the allocator at a cost per create
# (ialloc.c: recently_deleted), so an "rm -rf" of the previous run's
# spool would slow the next run's creates for reasons of its own.
spool_up() {	# SPOOLDIR [spoold args]: a new spool and spoold, workers up
	local dir=$1
	shift
	spool -S "$dir" init > /dev/null || return 1
	spoold -S "$dir" "$@" > "$work/spoold.log" 2>&1 &
	spoold_pid=$!
	# ready when its summary shows the local workers registered
	local want=0 a
	for a in "$@"; do [ "$a" = --local ] && want=next && continue
		[ "$want" = next ] && want=$a; done
	[ "$want" = next ] && want=0
	spool -S "$dir" wait-workers "$want" --timeout 30 > /dev/null 2>&1 ||
	    wait_summary "$dir" "workers: $want " || return 1
}

spool_down() {
	[ -n "$spoold_pid" ] || return 0
	kill -TERM "$spoold_pid" 2>/dev/null
	wait "$spoold_pid" 2>/dev/null
	spoold_pid=""
}

wait_summary() {	# SPOOLDIR PATTERN: until state/summary matches (60 s)
	local i
	for i in $(seq 600); do
		grep -q -- "$2" "$1/state/summary" 2>/dev/null && return 0
		sleep 0.1
	done
	log "bench: timed out waiting for \"$2\" in $1/state/summary"
	return 1
}

cpu_ticks() {	# PID...: utime+stime of these processes (not children)
	local p t=0
	for p in "$@"; do
		[ -r "/proc/$p/stat" ] || continue
		t=$((t + $(awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$p/stat")))
	done
	echo "$t"
}

verify_results() {	# SPOOLDIR IDSFILE N: every task exited 0
	local n ok
	n=$(wc -l < "$2")
	[ "$n" -eq "$3" ] || { log "bench: $n IDs, want $3"; return 1; }
	ok=$(spool -S "$1" status $(cat "$2") 2>/dev/null |
	    awk 'NR > 1 && $3 == "done" && $(NF - 1) == 0' | wc -l)
	[ "$ok" -eq "$3" ] || { log "bench: $ok of $3 tasks done with exit 0"; return 1; }
}

ckspool_throughput() {	# N REP CMD...
	local n=$1 rep=$2 sp=$work/tp.$1.$2.$3 t0 t1 c0 c1 hz workers
	shift 2
	export CKSPOOL_FSOP_STATS=$work/ops.$n.$rep.$1
	
	spool_up "$sp" --local 2 || return 1
	workers=$(pgrep -P "$spoold_pid" | tr '\n' ' ')
	c0=$(cpu_ticks "$spoold_pid" $workers)
	t0=$(now)
	# map appends each input line as an argument: "true 17" for true;
	# for sleep the inputs are 0, so "sleep 0.01 0" sleeps 0.01 s
	case $1 in
	sleep) yes 0 | head -n "$n" ;;
	*) seq "$n" ;;
	esac | spool -S "$sp" map -- "$@" > "$work/ids" &&
	    spool -S "$sp" wait < "$work/ids" > /dev/null
	local rc=$?
	t1=$(now)
	c1=$(cpu_ticks "$spoold_pid" $workers)
	spool_down
	unset CKSPOOL_FSOP_STATS
	[ $rc -eq 0 ] && verify_results "$sp" "$work/ids" "$n" || {
		log "bench: ckspool run failed ($*, N=$n)"; return 1; }
	hz=$(getconf CLK_TCK)
	record "throughput:$*" ckspool "$n" "$rep" "$(elapsed "$t0" "$t1")" s
	record "cpu-per-task:$*" ckspool "$n" "$rep" \
	    "$(awk -v c=$((c1 - c0)) -v hz="$hz" -v n="$n" 'BEGIN { printf "%.1f", c / hz / n * 1e6 }')" us
	# operations per task, all programs together (submit to result)
	cat "$work/ops.$n.$rep.$1".* 2>/dev/null | awk -v n="$n" -v rep="$rep" \
	    -v cmd="$*" '{ s[$1] += $2 }
	    END {
		meta = s["create"] + s["rename"] + s["unlink"] + s["mkdir"] + \
		    s["rmdir"] + s["symlink"]
		printf "fsops:%s\tckspool\t%d\t%d\t%.2f\tmeta/task\n", cmd, n, rep, meta / n
		split("create rename unlink mkdir fsync syncfs list stat open", k, " ")
		for (i = 1; i in k; i++)
			printf "fsops:%s\tckspool:%s\t%d\t%d\t%.3f\tper task\n", \
			    cmd, k[i], n, rep, s[k[i]] / n
	    }' >> "$tsv"
}

ckspool_latency() {
	local sp=$work/latency
	spool_up "$sp" --local 2 || return 1
	# warm up, then the samples (lat runs "spool" without -S)
	SPOOL=$sp "$BB/lat" -r 5 "$BIN/spool" -- true > /dev/null &&
	SPOOL=$sp "$BB/lat" -r "$lat_n" "$BIN/spool" -- true > "$work/lat" || {
		spool_down; log "bench: latency run failed"; return 1; }
	spool_down
	awk '{ printf "latency\tckspool\t1\t%d\t%s\tms\n", NR, $1 }' "$work/lat" >> "$tsv"
}

# ---- the floor and the peers ----

floor_throughput() {	# N REP CMD...
	local n=$1 rep=$2 s
	shift 2
	s=$("$BB/floor" -n "$n" -P 2 -- "$@") || return 1
	record "throughput:$*" floor "$n" "$rep" "$s" s
}

floor_latency() {
	"$BB/floor" -l "$lat_n" -- true > "$work/lat" || return 1
	awk '{ printf "latency\tfloor\t1\t%d\t%s\tms\n", NR, $1 }' "$work/lat" >> "$tsv"
}

xargs_throughput() {
	local n=$1 rep=$2 t0 t1
	t0=$(now)
	seq "$n" | xargs -P2 -n1 true || return 1
	t1=$(now)
	record "throughput:true" "xargs -P2" "$n" "$rep" "$(elapsed "$t0" "$t1")" s
}

parallel_throughput() {
	local n=$1 rep=$2 t0 t1
	t0=$(now)
	seq "$n" | parallel --will-cite -j2 true > /dev/null || return 1
	t1=$(now)
	record "throughput:true" "GNU parallel -j2" "$n" "$rep" "$(elapsed "$t0" "$t1")" s
}

wq_throughput() {
	local n=$1 rep=$2 s
	s=$(cd "$work" && "$BB/wq_manager" -n "$n" -w 16 -- true 2> "$work/wq.log") || {
		tail -3 "$work/wq.log" >&2; return 1; }
	record "throughput:true" "Work Queue (window 16)" "$n" "$rep" "$s" s
}

dask_throughput() {
	local n=$1 rep=$2 s
	s=$(/usr/bin/python3 "$top/bench/dask_bench.py" "$n" true 2> "$work/dask.log") || {
		tail -3 "$work/dask.log" >&2; return 1; }
	record "throughput:true" "Dask LocalCluster" "$n" "$rep" "$s" s
}

tsp_stop() {
	[ -n "${TS_SOCKET:-}" ] && tsp -K > /dev/null 2>&1
	unset TS_SOCKET
}

tsp_throughput() {
	local n=$1 rep=$2 t0 t1 i bad
	export TS_SOCKET=$work/tsp.socket TS_MAXFINISHED=$((n + 10)) TMPDIR=$work
	tsp -K > /dev/null 2>&1
	tsp -S 2 > /dev/null
	t0=$(now)
	for i in $(seq "$n"); do tsp true > /dev/null || return 1; done
	# wait for every job (tsp -w waits for the last one submitted)
	tsp -w > /dev/null 2>&1
	while tsp -l | awk 'NR > 1 && ($2 == "running" || $2 == "queued")' | grep -q .; do
		sleep 0.01
	done
	t1=$(now)
	bad=$(tsp -l | awk 'NR > 1 && $2 == "finished" && $4 != 0' | wc -l)
	tsp_stop
	export TMPDIR=/tmp
	[ "$bad" -eq 0 ] || { log "bench: task-spooler: $bad failed"; return 1; }
	record "throughput:true" "task-spooler -S 2" "$n" "$rep" "$(elapsed "$t0" "$t1")" s
}

# ---- scale ----

rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

scale_scenario() {
	local n=$scale_n sp=$work/scale t0 t1 base rss
	log "bench: scale, $n tasks"
	spool_up "$sp" || return 1
	base=$(rss_kb "$spoold_pid")
	t0=$(now)
	seq "$n" | spool -S "$sp" map -- true > "$work/ids" || return 1
	t1=$(now)
	record scale:submit-rate ckspool "$n" 1 \
	    "$(awk -v n="$n" -v s="$(elapsed "$t0" "$t1")" 'BEGIN { printf "%.0f", n / s }')" tasks/s
	wait_summary "$sp" "queued: $n " || return 1
	rss=$(rss_kb "$spoold_pid")
	record scale:rss-per-task ckspool "$n" 1 \
	    "$(awk -v n="$n" -v d=$((rss - base)) 'BEGIN { printf "%.1f", d * 1024 / n }')" bytes
	spool_down
	t0=$(now)
	spoold -S "$sp" > "$work/spoold.log" 2>&1 &
	spoold_pid=$!
	wait_summary "$sp" "pid $spoold_pid .*" > /dev/null 2>&1
	spool -S "$sp" status 2>/dev/null | grep -q "pid $spoold_pid" || true
	until spool -S "$sp" status 2>/dev/null | grep -q "pid $spoold_pid on"; do
		kill -0 "$spoold_pid" 2>/dev/null || return 1
		sleep 0.02
	done
	t1=$(now)
	record scale:restart ckspool "$n" 1 "$(elapsed "$t0" "$t1")" s
	spool_down
}

placement_rate() {	# QUEUED: done tasks/s for the first 4000 with QUEUED waiting
	local n=$1 sp=$work/place.$1 first=4000 t0 t1
	spool_up "$sp" || return 1
	seq "$n" | spool -S "$sp" map -- true > "$work/ids" || return 1
	wait_summary "$sp" "queued: $n " || return 1
	head -n "$first" "$work/ids" > "$work/first"
	ckworker -S "$sp" --cores 1 --name b1 > "$work/w1.log" 2>&1 &
	local w1=$!
	ckworker -S "$sp" --cores 1 --name b2 > "$work/w2.log" 2>&1 &
	local w2=$!
	t0=$(now)
	spool -S "$sp" wait < "$work/first" > /dev/null
	t1=$(now)
	kill -TERM "$w1" "$w2" 2>/dev/null
	wait "$w1" "$w2" 2>/dev/null
	spool_down
	record "scale:placement-rate" ckspool "$n" 1 \
	    "$(awk -v f="$first" -v s="$(elapsed "$t0" "$t1")" 'BEGIN { printf "%.0f", f / s }')" tasks/s
}

# ---- the run ----

run_or_note() {	# WHAT COMMAND...: run it; a failure is recorded, not fatal
	local what=$1
	shift
	if [ -n "${BENCH_ONLY:-}" ] && ! printf '%s' "$what" | grep -Eq -- "$BENCH_ONLY"; then
		return 0
	fi
	if ! "$@"; then
		log "bench: $what FAILED"
		record "failed" "$what" 0 0 0 -
	fi
}

log "bench: results in $tsv (work in $work)"
printf 'scenario\tsystem\tn\trep\tvalue\tunit\n' > "$tsv"
for rep in $(seq "$reps"); do
	for n in $sizes; do
		log "bench: rep $rep, N=$n"
		run_or_note "floor N=$n" floor_throughput "$n" "$rep" true
		run_or_note "ckspool N=$n" ckspool_throughput "$n" "$rep" true
		case " $peers_at " in *" $n "*)
			run_or_note "xargs N=$n" xargs_throughput "$n" "$rep"
			run_or_note "Work Queue N=$n" wq_throughput "$n" "$rep"
			run_or_note "task-spooler N=$n" tsp_throughput "$n" "$rep"
			run_or_note "parallel N=$n" parallel_throughput "$n" "$rep"
			run_or_note "Dask N=$n" dask_throughput "$n" "$rep"
			;;
		esac
	done
	run_or_note "floor sleep" floor_throughput "$sleep_n" "$rep" sleep 0.01
	run_or_note "ckspool sleep" ckspool_throughput "$sleep_n" "$rep" sleep 0.01
done
run_or_note "floor latency" floor_latency
run_or_note "ckspool latency" ckspool_latency
run_or_note "scale" scale_scenario
run_or_note "placement 10k" placement_rate 10000
run_or_note "placement at scale" placement_rate "$scale_n"

md=$out_dir/$stamp.md
{
	echo "# ckspool benchmark, $stamp"
	echo
	echo "Machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo),"\
	    "$(uname -r), $(df -T "$work" | awk 'NR == 2 { print $2 }') under $work; quick=$quick, reps=$reps"
	echo
	"$top/bench/table.awk" "$tsv"
} > "$md"
cat "$md"
log "bench: table in $md, raw data in $tsv"
