#!/bin/bash
# run.sh - the benchmark ("make bench"): ckspool against the spawn floor
# and its peers, on this machine, in one run.
#
#	BIN=bin BENCH_BIN=build/bench bench/run.sh
#
# Scenarios (doc/performance.md explains each and the targets):
#   1  throughput: N `true` tasks (and `sleep 0.01`), 2 one-core slots,
#      submission to the last result; ckspool, the floor (posix_spawn two
#      at a time), xargs -P2, Work Queue, task-spooler, GNU parallel, Dask;
#      at the largest N also ckspool with "daemon: fsync: false"
#   2  single-task latency on an idle spool (and after 300 ms idle);
#      beside it what the disk takes for one durable small file (what a
#      submission asks of it), back to back and after 300 ms idle
#   3  CPU of spoold and ckworker per task (their own, not the tasks'),
#      against the floor's own CPU a task (spawning and reaping them);
#      beside it the tasks' own CPU, under ckspool and under the floor
#   4  filesystem operations per task (CKSPOOL_FSOP_STATS)
#   5  scale: 1,000,000 tasks queued (BENCH_SCALE_N)
#   6  FUSE: reading finished results through a spoolfs mount versus
#      directly (beside them, the same files through the least FUSE
#      filesystem, bench/fusefloor.c, with its OPEN and without one
#      (-n: the kernel asks nothing at an open), and one round trip
#      between two processes: what any FUSE mount, and any open that
#      asks another process, cost here), and submissions per second by
#      writing into submit/
#   7  shared storage: scenarios 1 (N=2000) and 2 with spoold on one
#      simulated host and the workers on another, sharing the spool only
#      through sshfs (scripts/hosts.sh; needs root)
#   and, to explain scenario 1: the filesystem operations of a task's
#   way through ckspool's layout alone, and through smaller layouts,
#   beside the spawn of `true` (bench/layoutsim.c: no daemon, no
#   wake-ups, no cgroups), their time and the CPU they cost
#
# Every ckspool run is verified before its time counts: the right number
# of IDs, and for every task a result that says done with exit 0 and the
# output it must have (empty stdout and stderr for true and sleep).  A
# peer that fails is reported as failed, not timed.
#
# Environment: BENCH_QUICK=1 a reduced run (under 3 minutes);
# BENCH_REPS (default 3); BENCH_OUT (default bench/results); BENCH_ONLY
# (a regular expression: only the runs whose name matches, e.g. ckspool);
# BENCH_SCALE_N (default 1000000); BENCH_PLACE_REPS (scenario 5's
# placement slices of each spool, default 7, BENCH_REPS in a quick run:
# the slices of one spool differ by up to 10% from one another, as
# much as the target allows between the two); BENCH_SHARED_N (scenario 7's N,
# default 2000) and BENCH_SHARED_REPS (its repetitions, default
# BENCH_REPS).  The table and the raw TSV are written
# as BENCH_OUT/STAMP.md and STAMP.tsv, and copied to latest.md and
# latest.tsv unless BENCH_ONLY made it a partial run (BENCH_LATEST=1:
# copied all the same).
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
	# 2 min 58 s with N=500 on the VM of 2026-11-26, too near the
	# 3 minutes the quick run must stay under: 300
	sizes="300"
	nofsync_at=300
	sleep_n=100
	scale_n=${BENCH_SCALE_N:-20000}
	peers_at="300"
	lat_n=20
	pause_n=5
	place_first=500
	place_reps=$reps
	fuse_n=50
	fuse_submit_n=100
	layout_n=300
	shared_n=10
	shared_lat=2
else
	sizes="2000 10000"
	nofsync_at=10000
	sleep_n=2000
	scale_n=${BENCH_SCALE_N:-1000000}
	peers_at="2000 10000"
	lat_n=100
	pause_n=30
	place_first=2000
	place_reps=$((reps > 7 ? reps : 7))
	fuse_n=500
	fuse_submit_n=1000
	layout_n=10000
	# over sshfs a task takes about 0.25 s of wall time with 2 slots
	# (doc/performance.md, scenario 7): a repetition of 2000 is some
	# 8 to 9 minutes, the longest part of the run
	shared_n=2000
	shared_lat=20
fi
shared_n=${BENCH_SHARED_N:-$shared_n}
place_reps=${BENCH_PLACE_REPS:-$place_reps}
shared_reps=${BENCH_SHARED_REPS:-$reps}
stamp=$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out_dir"
tsv=$out_dir/$stamp.tsv
work=$(mktemp -d "${TMPDIR:-/var/tmp}/ckspool-bench.XXXXXX")
spoold_pid=""
small_pid=""	# spoold of the 10,000-task spool beside the 1M one (scale)
fuse_pid="" fuse_mnt=""	# spoolfs (scenario 6; fs_up)
ffloor_pid="" ffloor_mnt=""	# bench/fusefloor beside it
ffnoopen_pid="" ffnoopen_mnt=""	# bench/fusefloor -n beside them
hosts_up=""
extra_pids=""

cleanup() {
	[ -n "$spoold_pid" ] && kill -TERM "$spoold_pid" 2>/dev/null
	[ -n "$spoold_pid" ] && wait "$spoold_pid" 2>/dev/null
	small_down
	local p
	for p in $extra_pids; do kill -TERM "$p" 2>/dev/null; done
	fuse_down
	tsp_stop
	[ -n "$hosts_up" ] && "$top/scripts/hosts.sh" down "$hosts_up" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { printf '%s\n' "$*" >&2; }

record() {	# SCENARIO SYSTEM N REP VALUE UNIT
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >> "$tsv"
}

now() { printf '%s' "$EPOCHREALTIME"; }
# The share of all CPUs' time that was idle or waiting for I/O between
# two snapshots of /proc/stat's first line (cpu_snap): for scenario 1,
# how much of the two cores a system left unused.
cpu_snap() { head -n 1 /proc/stat; }
idle_share() {	# SNAP0 SNAP1: percent
	printf '%s\n%s\n' "$1" "$2" | awk '
	    NR == 1 { for (i = 2; i <= 9; i++) a[i] = $i }
	    NR == 2 { for (i = 2; i <= 9; i++) { d = $i - a[i]; t += d
			if (i == 5 || i == 6) w += d }
		printf "%.1f", (t > 0 ? 100 * w / t : 0) }'
}
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", b - a }'; }
# N T0 T1: N a second from T0 to T1 (now's times)
rate() { awk -v n="$1" -v s="$(elapsed "$2" "$3")" 'BEGIN { printf "%.0f", n / s }'; }

# ---- ckspool ----

# Every run gets a spool of its own, and no spool is removed before the
# end: on ext4 without a journal (this machine's root) an inode freed in
# the last seconds is skipped by the allocator at a cost per create
# (ialloc.c: recently_deleted), so an "rm -rf" of the previous run's
# spool would slow the next run's creates for reasons of its own.
spool_up() {	# SPOOLDIR [spoold args]: a new spool and spoold, workers up
	local dir=$1	# (SPOOL_YAML, if set: the spool's spool.yaml)
	shift
	spool -S "$dir" init > /dev/null || return 1
	[ -z "${SPOOL_YAML:-}" ] || printf '%s' "$SPOOL_YAML" > "$dir/spool.yaml" ||
	    return 1
	spoold -S "$dir" "$@" > "$work/spoold.log" 2>&1 &
	spoold_pid=$!
	# ready when its summary shows the local workers registered
	local want=0 a
	for a in "$@"; do [ "$a" = --local ] && want=next && continue
		[ "$want" = next ] && want=$a; done
	[ "$want" = next ] && want=0
	spool -S "$dir" wait-workers "$want" --timeout 30 > /dev/null 2>&1 ||
	    wait_summary "$dir" "^workers: $want\$" || return 1
}

spool_down() {
	[ -n "$spoold_pid" ] || return 0
	kill -TERM "$spoold_pid" 2>/dev/null
	wait "$spoold_pid" 2>/dev/null
	spoold_pid=""
}

wait_summary() {	# SPOOLDIR REGEX [SECONDS]: until a line of state/summary
	# matches (state/summary is one "key: value" a line)
	local i
	for i in $(seq "$((${3:-60} * 20))"); do
		grep -Eq -- "$2" "$1/state/summary" 2>/dev/null && return 0
		sleep 0.05
	done
	log "bench: timed out waiting for /$2/ in $1/state/summary"
	return 1
}

cpu_ticks() {	# [-c] PID...: utime+stime of these processes (not
	# children); with -c, cutime+cstime: of the children they waited for
	local p t=0 f=12
	[ "$1" = -c ] && { f=14; shift; }
	for p in "$@"; do
		[ -r "/proc/$p/stat" ] || continue
		t=$((t + $(awk -v f=$f '{ sub(/^.*\) /, ""); print $f + $(f + 1) }' "/proc/$p/stat")))
	done
	echo "$t"
}

per_task_us() {	# CPU N [HZ]: microseconds a task, of CPU counted in
	# clock ticks (HZ a second: CLK_TCK unless given; 1 for seconds)
	awk -v c="$1" -v hz="${3:-$(getconf CLK_TCK)}" -v n="$2" \
	    'BEGIN { printf "%.1f", c / hz / n * 1e6 }'
}

verify_results() {	# SPOOLDIR IDSFILE N: N distinct tasks, each done with
	# exit 0 (its result record, read from the spool's files) and with
	# the output its command must give: none (true, sleep), so stdout and
	# stderr exist and are empty
	local bad
	bad=$(sort -u "$2" | awk -v dir="$1" -v want="$3" '
	    $0 !~ /^[0-9]+$/ { print "bad ID \"" $0 "\""; exit }
	    {
		n++
		d = dir "/tasks/" int($0 / 1000) "/" $0
		st = ""; ex = ""; id = ""
		while ((r = (getline line < (d "/result"))) > 0) {
			if (line ~ /^state: /) st = substr(line, 8)
			if (line ~ /^exit: /) ex = substr(line, 7)
			if (line ~ /^id: /) id = substr(line, 5)
		}
		close(d "/result")
		if (r < 0 || id != $0 || st != "done" || ex != "0") {
			print "task " $0 ": state " st ", exit " ex; exit }
		for (k = 1; k <= 2; k++) {
			f = d (k == 1 ? "/stdout" : "/stderr")
			r = (getline line < f)
			close(f)
			if (r != 0) { print "task " $0 ": " f (r < 0 ? " missing" : " not empty"); exit }
		}
	    }
	    END { if (n != want) print n " distinct IDs, want " want }')
	[ -z "$bad" ] || { log "bench: verify $1: $bad"; return 1; }
}

# The inputs of the throughput runs, one line a task.  Every system
# appends the line to the command as its last argument, as "spool map"
# does: "true 17" for true (so every system runs the same command line;
# coreutils' true with an argument sets up its locale, about 1.7 ms of
# CPU a run here, doc/performance.md), and for sleep the inputs are 0,
# so "sleep 0.01 0" sleeps 0.01 s.
task_inputs() {	# N CMD
	case $2 in
	sleep) yes 0 | head -n "$1" ;;
	*) seq "$1" ;;
	esac
}

ckspool_throughput() {	# N REP CMD... (ck_system: the system's name in
	# the table, "ckspool" if unset; another runs with SPOOL_YAML and
	# records only its time and CPU)
	local n=$1 rep=$2 sp=$work/tp.$1.$2.$3 t0 t1 c0 c1 d0 d1 k0 k1 s0 s1 workers
	local sys=${ck_system:-ckspool}
	shift 2
	local ops=$work/ops
	[ "$sys" = ckspool ] || { sp=$sp.variant; ops=$work/ops-variant; }
	export CKSPOOL_FSOP_STATS=$ops.$n.$rep.$1
	
	spool_up "$sp" --local 2 || return 1
	workers=$(pgrep -P "$spoold_pid" | tr '\n' ' ')
	c0=$(cpu_ticks "$spoold_pid" $workers)
	d0=$(cpu_ticks "$spoold_pid")
	k0=$(cpu_ticks -c $workers)
	s0=$(cpu_snap)
	t0=$(now)
	task_inputs "$n" "$1" | spool -S "$sp" map -- "$@" > "$work/ids" &&
	    spool -S "$sp" wait < "$work/ids" > /dev/null
	local rc=$?
	t1=$(now)
	s1=$(cpu_snap)
	c1=$(cpu_ticks "$spoold_pid" $workers)
	d1=$(cpu_ticks "$spoold_pid")
	k1=$(cpu_ticks -c $workers)
	spool_down
	unset CKSPOOL_FSOP_STATS
	[ $rc -eq 0 ] && verify_results "$sp" "$work/ids" "$n" || {
		log "bench: $sys run failed ($*, N=$n)"; return 1; }
	record "throughput:$*" "$sys" "$n" "$rep" "$(elapsed "$t0" "$t1")" s
	record "cores-idle:$*" "$sys" "$n" "$rep" "$(idle_share "$s0" "$s1")" %
	record "cpu-per-task:$*" "$sys" "$n" "$rep" \
	    "$(per_task_us $((c1 - c0)) "$n")" us
	# without flushes the kernel writes the run's files back later on
	# its own: done here, before the next run is timed
	[ "$sys" = ckspool ] || { sync -f "$sp"; return 0; }
	record "cpu-per-task:$*" "ckspool (spoold)" "$n" "$rep" \
	    "$(per_task_us $((d1 - d0)) "$n")" us
	record "cpu-per-task:$*" "ckspool (ckworker)" "$n" "$rep" \
	    "$(per_task_us $((c1 - c0 - d1 + d0)) "$n")" us
	# the tasks' own CPU: the processes the workers started and waited
	# for, set beside the floor's (their difference is not ckspool's)
	record "task-cpu:$*" ckspool "$n" "$rep" \
	    "$(per_task_us $((k1 - k0)) "$n")" us
	# operations per task, all programs together (submit to result)
	# (files ops.N.REP.CMD.PROGRAM.PID; PROGRAM is spool for map and wait)
	awk -v n="$n" -v rep="$rep" -v cmd="$*" '
	    { s[$1] += $2
	      prog = FILENAME; sub(/\.[0-9]+$/, "", prog); sub(/.*\./, "", prog)
	      if ($1 ~ /^(create|rename|unlink|mkdir|rmdir|symlink|fsync|syncfs|list|stat|watch)$/)
		pm[prog] += $2 }
	    END {
		# metadata operations: everything but open, read/write and
		# readlink (the data path)
		meta = s["create"] + s["rename"] + s["unlink"] + s["mkdir"] + \
		    s["rmdir"] + s["symlink"] + s["fsync"] + s["syncfs"] + \
		    s["list"] + s["stat"] + s["watch"]
		printf "fsops:%s\tckspool\t%d\t%d\t%.2f\tmeta/task\n", cmd, n, rep, meta / n
		for (p in pm)
			printf "fsops:%s\tckspool (%s)\t%d\t%d\t%.2f\tmeta/task\n", cmd, p, n, rep, pm[p] / n
		split("create rename unlink mkdir rmdir fsync syncfs list stat watch open write", k, " ")
		for (i = 1; i in k; i++)
			printf "fsops:%s\tckspool:%s\t%d\t%d\t%.3f\tper task\n", \
			    cmd, k[i], n, rep, s[k[i]] / n
	    }' "$work/ops.$n.$rep.$1".* >> "$tsv"
}

ckspool_latency() {
	local sp=$work/latency
	spool_up "$sp" --local 2 || return 1
	# warm up, then the samples (lat runs "spool" without -S)
	SPOOL=$sp "$BB/lat" -r 5 "$BIN/spool" -- true > /dev/null &&
	SPOOL=$sp "$BB/lat" -r "$lat_n" "$BIN/spool" -- true > "$work/lat" || {
		spool_down; log "bench: latency run failed"; return 1; }
	# a user who submits now and then: 300 ms idle before each
	SPOOL=$sp "$BB/lat" -r "$pause_n" -p 300 "$BIN/spool" -- true > "$work/lat.p" || {
		spool_down; log "bench: latency run failed"; return 1; }
	spool_down
	verify_all "$sp" $((lat_n + pause_n + 5)) || return 1
	awk '{ printf "latency\tckspool\t1\t%d\t%s\tms\n", NR, $1 }' "$work/lat" >> "$tsv"
	awk '{ printf "latency (300 ms idle before)\tckspool\t1\t%d\t%s\tms\n", NR, $1 }' \
	    "$work/lat.p" >> "$tsv"
	# the same without flushes ("daemon: fsync: false", as on tmpfs): what
	# the submission's two fsyncs, spoold's syncfs and the worker's cost
	# of it
	sp=$work/latency-nofsync
	SPOOL_YAML=$'daemon:\n  fsync: false\n' spool_up "$sp" --local 2 || return 1
	SPOOL=$sp "$BB/lat" -r 5 "$BIN/spool" -- true > /dev/null &&
	SPOOL=$sp "$BB/lat" -r "$lat_n" "$BIN/spool" -- true > "$work/lat.nf" &&
	SPOOL=$sp "$BB/lat" -r "$pause_n" -p 300 "$BIN/spool" -- true > "$work/lat.nfp" || {
		spool_down; log "bench: latency run without fsync failed"; return 1; }
	spool_down
	verify_all "$sp" $((lat_n + pause_n + 5)) || return 1
	awk '{ printf "latency (fsync: false)\tckspool\t1\t%d\t%s\tms\n", NR, $1 }' \
	    "$work/lat.nf" >> "$tsv"
	awk '{ printf "latency (fsync: false, 300 ms idle before)\tckspool\t1\t%d\t%s\tms\n", NR, $1 }' \
	    "$work/lat.nfp" >> "$tsv"
}

# ---- the floor and the peers ----

floor_throughput() {	# N REP CMD...
	local n=$1 rep=$2 out s0 s1
	shift 2
	s0=$(cpu_snap)
	# three lines: the wall seconds, the runs' own CPU seconds, and the
	# spawner's own (what starting and reaping them cost, the floor of
	# the daemons' CPU a task)
	out=$(task_inputs "$n" "$1" | "$BB/floor" -P 2 -- "$@") || return 1
	s1=$(cpu_snap)
	local -a l
	mapfile -t l <<< "$out"
	record "throughput:$*" floor "$n" "$rep" "${l[0]}" s
	record "cores-idle:$*" floor "$n" "$rep" "$(idle_share "$s0" "$s1")" %
	record "task-cpu:$*" floor "$n" "$rep" "$(per_task_us "${l[1]}" "$n" 1)" us
	record "cpu-per-task:$*" "floor: the spawner itself" "$n" "$rep" \
	    "$(per_task_us "${l[2]}" "$n" 1)" us
}

floor_latency() {
	"$BB/floor" -l "$lat_n" -- true > "$work/lat" || return 1
	awk '{ printf "latency\tfloor\t1\t%d\t%s\tms\n", NR, $1 }' "$work/lat" >> "$tsv"
	"$BB/floor" -l "$pause_n" -p 300 -- true > "$work/lat.p" || return 1
	awk '{ printf "latency (300 ms idle before)\tfloor\t1\t%d\t%s\tms\n", NR, $1 }' \
	    "$work/lat.p" >> "$tsv"
}

disk_flush() {	# one small file made durable (write, fsync, rename, fsync
	# of its directory: a submission's flushes), on the spools' filesystem
	# (the files stay until the end, as the spools do)
	local d=$work/flush
	mkdir -p "$d" && "$BB/floor" -f "$lat_n" "$d" > "$work/flush.b2b" &&
	    "$BB/floor" -f "$pause_n" -p 300 "$d" > "$work/flush.p" || return 1
	awk '{ printf "disk: a durable small file\tmachine\t1\t%d\t%s\tms\n", NR, $1 }' \
	    "$work/flush.b2b" >> "$tsv"
	awk '{ printf "disk: a durable small file (300 ms idle before)\tmachine\t1\t%d\t%s\tms\n", NR, $1 }' \
	    "$work/flush.p" >> "$tsv"
}

xargs_throughput() {
	local n=$1 rep=$2 t0 t1
	t0=$(now)
	task_inputs "$n" true | xargs -P2 -n1 true || return 1
	t1=$(now)
	record "throughput:true" "xargs -P2" "$n" "$rep" "$(elapsed "$t0" "$t1")" s
}

parallel_throughput() {
	local n=$1 rep=$2 t0 t1
	t0=$(now)
	# parallel runs "bash -c 'CMD I'": the path, or bash runs its builtin
	task_inputs "$n" true | parallel --will-cite -j2 "$(type -P true)" > /dev/null || return 1
	t1=$(now)
	record "throughput:true" "GNU parallel -j2" "$n" "$rep" "$(elapsed "$t0" "$t1")" s
}

wq_throughput() {
	local n=$1 rep=$2 s
	# its tasks run "sh -c 'CMD I'": the path, or sh runs its builtin
	s=$(cd "$work" && "$BB/wq_manager" -n "$n" -w 16 -- "$(type -P true)" 2> "$work/wq.log") || {
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
	for i in $(seq "$n"); do tsp true "$i" > /dev/null || return 1; done
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

wait_ready() {	# SPOOLDIR PID N: spoold PID has published its summary
	# with all N tasks queued (it took the lease and recovered them)
	local i
	for i in $(seq 1200); do
		awk -v pid="$2" -v n="$3" '
		    /^spoold: / && $2 ~ ("\\." pid "$") { p = 1 }
		    /^queued: / && $2 == n { q = 1 }
		    END { exit !(p && q) }' "$1/state/summary" 2>/dev/null && return 0
		kill -0 "$2" 2>/dev/null || { log "bench: spoold $2 exited"; return 1; }
		sleep 0.01
	done
	log "bench: spoold $2 not ready with $3 queued after 12 s"
	return 1
}

slice_rate() {	# SPOOLDIR IDSFILE SINCE: tasks a second from the first start
	# to the last end (their results' times, in ms) of these finished
	# tasks that started at SINCE or later (the workers of the slice
	# before may have run the first few): the workers' start and the
	# wait's end are not in it
	awk -v dir="$1" -v since="$3" '
	{	f = sprintf("%s/tasks/%d/%s/result", dir, int($1 / 1000), $1)
		st = en = ""
		while ((getline l < f) > 0) {
			if (l ~ /^start: /)
				st = substr(l, 8) + 0
			else if (l ~ /^end: /)
				en = substr(l, 6) + 0
		}
		close(f)
		if (st == "" || en == "" || st < since)
			next
		if (c++ == 0 || st < lo)
			lo = st
		if (en > hi)
			hi = en
	}
	END { if (c < 2 || hi <= lo) exit 1; printf "%.0f", c / (hi - lo) }' "$2"
}

placement_run() {	# SPOOLDIR N REP IDS: with N queued and no workers,
	# start two one-core workers and time the REPth slice of
	# $place_first tasks of IDS (in submission order, the order of
	# placement) from its first task's start to its last one's end
	local sp=$1 n=$2 rep=$3 w1 w2 rc rate since
	sed -n "$(((rep - 1) * place_first + 1)),$((rep * place_first))p" \
	    "$4" > "$work/first"
	since=$(printf '%.3f' "$(now)")
	ckworker -S "$sp" --cores 1 --name "b1r$rep" > "$work/w1.log" 2>&1 &
	w1=$!
	ckworker -S "$sp" --cores 1 --name "b2r$rep" > "$work/w2.log" 2>&1 &
	w2=$!
	extra_pids="$w1 $w2"
	spool -S "$sp" wait < "$work/first" > /dev/null
	rc=$?
	kill -TERM "$w1" "$w2" 2>/dev/null
	wait "$w1" "$w2" 2>/dev/null
	extra_pids=""
	[ $rc -eq 0 ] && verify_results "$sp" "$work/first" "$place_first" || return 1
	rate=$(slice_rate "$sp" "$work/first" "$since") ||
	    { log "bench: no start and end times in the slice's results"; return 1; }
	record "scale:placement-rate" ckspool "$n" "$rep" "$rate" tasks/s
}

scale_scenario() {	# submit, memory, restart, placement with them queued
	# (each repetition on a spool of its own; the last one's restarted
	# spoold then serves the placement slices)
	local n=$scale_n sp t0 t1 t2 base rss rep
	log "bench: scale, $n tasks, $reps times"
	for rep in $(seq "$reps"); do
		sp=$work/scale.$rep
		spool_up "$sp" || return 1
		base=$(rss_kb "$spoold_pid")
		t0=$(now)
		seq "$n" | spool -S "$sp" map -- true > "$work/ids" || return 1
		t1=$(now)
		[ "$(wc -l < "$work/ids")" -eq "$n" ] ||
		    { log "bench: scale: IDs missing"; return 1; }
		record scale:submit-rate ckspool "$n" "$rep" \
		    "$(rate "$n" "$t0" "$t1")" tasks/s
		wait_summary "$sp" "^queued: $n\$" 600 || return 1
		t2=$(now)
		record scale:accepted-after ckspool "$n" "$rep" "$(elapsed "$t0" "$t2")" s
		rss=$(rss_kb "$spoold_pid")
		record scale:rss-per-task ckspool "$n" "$rep" \
		    "$(awk -v n="$n" -v d=$((rss - base)) 'BEGIN { printf "%.1f", d * 1024 / n }')" bytes
		spool_down
		t0=$(now)
		spoold -S "$sp" > "$work/spoold.log" 2>&1 &
		spoold_pid=$!
		wait_ready "$sp" "$spoold_pid" "$n" || return 1
		t1=$(now)
		record scale:restart ckspool "$n" "$rep" "$(elapsed "$t0" "$t1")" s
		[ "$rep" -eq "$reps" ] || spool_down
	done
	# the placement rate against 10,000 queued: when both are run, the
	# slices of the two spools alternate, in turn first, so that each
	# pair sees the machine in one state (run a minute apart, the two
	# differed by up to 11% either way from one full run to the next)
	if selected "placement 10k"; then
		small_up || { spool_down; return 1; }
		placed_small=1
	fi
	local r
	for r in $(seq "$place_reps"); do
		if [ -n "$placed_small" ] && [ $((r % 2)) -eq 0 ]; then
			small_slice "$r" || { spool_down; return 1; }
		fi
		placement_run "$sp" "$n" "$r" "$work/ids" || { spool_down; return 1; }
		if [ -n "$placed_small" ] && [ $((r % 2)) -eq 1 ]; then
			small_slice "$r" || { spool_down; return 1; }
		fi
	done
	small_down
	spool_down
}

small_up() {	# a spool with 10,000 queued, its spoold ($small_pid) beside
	# the one spool_up started
	local n=10000 sp=$work/place
	spool -S "$sp" init > /dev/null || return 1
	spoold -S "$sp" > "$work/spoold.place.log" 2>&1 &
	small_pid=$!
	seq "$n" | spool -S "$sp" map -- true > "$work/ids.place" || return 1
	wait_summary "$sp" "^queued: $n\$"
}

small_slice() {	# REP: placement_run on the 10,000-task spool, first
	# refilled with as many tasks as the slices before took from it
	# (and the few their workers ran beyond them, or still held when
	# they left), so that every slice starts with 10,000 queued
	local sp=$work/place queued
	# the last slice's workers gone, and all they held queued again
	wait_summary "$sp" "^workers: 0\$" && wait_summary "$sp" "^placed: 0\$" ||
	    return 1
	queued=$(sed -n 's/^queued: //p' "$sp/state/summary")
	if [ "$queued" -lt 10000 ]; then
		seq "$((10000 - queued))" |
		    spool -S "$sp" map -- true >> "$work/ids.place" || return 1
		wait_summary "$sp" "^queued: 10000\$" || return 1
		log "bench: 10k spool refilled: $((10000 - queued)) tasks added"
	fi
	placement_run "$sp" 10000 "$1" "$work/ids.place"
}

small_down() {
	[ -n "$small_pid" ] || return 0
	kill -TERM "$small_pid" 2>/dev/null
	wait "$small_pid" 2>/dev/null
	small_pid=""
}

placed_small=""
placement_small() {	# the placement rate with 10,000 queued, alone
	[ -z "$placed_small" ] || return 0	# done beside the 1M one
	small_up || return 1
	local r
	for r in $(seq "$place_reps"); do
		small_slice "$r" || { small_down; return 1; }
	done
	small_down
}

# ---- latency through hyperfine (a second opinion on scenario 2) ----

hyperfine_rows() {	# JSON SCENARIO SYSTEM...: each run's time (ms) as a row,
	# one SYSTEM per command of the JSON file, in order
	local json=$1 scen=$2
	shift 2
	/usr/bin/python3 -c '
import json, sys
res = json.load(open(sys.argv[1]))["results"]
for i, r in enumerate(res):
    for k, t in enumerate(r["times"]):
        print("%s\t%s\t1\t%d\t%.4f\tms" % (sys.argv[2], sys.argv[3 + i], k + 1, t * 1e3))
' "$json" "$scen" "$@" >> "$tsv"
}

latency_hyperfine() {	# the issue's command line as written, through a
	# shell (hyperfine subtracts the shell's own start, not the $(...)
	# subshell), and the floor "true" without a shell
	local sp=$work/latency-hf
	spool_up "$sp" --local 2 || return 1
	SPOOL=$sp hyperfine --style none --shell=bash --warmup 5 --runs "$lat_n" \
	    --export-json "$work/hf-ck.json" "$BIN/spool wait \$($BIN/spool submit true)" \
	    > "$work/hf.log" 2>&1 || { spool_down; tail -3 "$work/hf.log" >&2; return 1; }
	spool_down
	verify_all "$sp" $((lat_n + 5)) || return 1
	hyperfine --style none -N --warmup 5 --runs "$lat_n" \
	    --export-json "$work/hf-floor.json" true > "$work/hf.log" 2>&1 || return 1
	hyperfine_rows "$work/hf-floor.json" "latency (hyperfine)" floor
	hyperfine_rows "$work/hf-ck.json" "latency (hyperfine)" ckspool
}

verify_all() {	# SPOOLDIR N: the spool holds N tasks, all verified
	find "$1/tasks" -mindepth 2 -maxdepth 2 -name '[0-9]*' -printf '%f\n' > "$work/all"
	verify_results "$1" "$work/all" "$2"
}

# ---- the layout's own cost (beside scenario 1) ----

layout_scenario() {	# scenario 1's `true` with nothing of ckspool but the
	# filesystem operations of each task's way (bench/layoutsim.c), two
	# processes as the two slots; every layout in turn, each repetition
	local rep row mode flush sys t
	for rep in $(seq "$reps"); do
		for row in "spawn 0 floor: spawn alone" \
		    "outputs 0 two output files a task" \
		    "minimal 20 a minimal layout, a flush every 20 tasks" \
		    "ckspool 20 ckspool's layout, a flush every 20 tasks" \
		    "ckspool 0 ckspool's layout, no flush"; do
			read -r mode flush sys <<< "$row"
			# two lines: the wall seconds, the CPU seconds of
			# the two processes themselves (not of their tasks)
			t=$("$BB/layoutsim" "$mode" "$work/layout.$rep.$mode.$flush" \
			    "$layout_n" 2 "$flush") || return 1
			record "layout:true" "$sys" "$layout_n" "$rep" "${t%%$'\n'*}" s
			record "layout-cpu:true" "$sys" "$layout_n" "$rep" \
			    "$(per_task_us "${t#*$'\n'}" "$layout_n" 1)" us
		done
	done
}

# ---- FUSE (scenario 6) ----

fs_up() {	# NAME MOUNTPOINT CMD...: CMD mounts a filesystem at MOUNTPOINT
	# in the background; NAME_pid and NAME_mnt say which, for fuse_down
	local name=$1 mnt=$2 pid
	shift 2
	mkdir -p "$mnt" || return 1
	"$@" > "$work/$name.log" 2>&1 &
	pid=$!
	printf -v "${name}_pid" %s "$pid"
	printf -v "${name}_mnt" %s "$mnt"
	mounted "$pid" "$mnt" "$work/$name.log"
}

mounted() {	# PID MOUNTPOINT LOG: until it is mounted, or PID has ended
	local i
	for i in $(seq 200); do
		mountpoint -q "$2" && return 0
		kill -0 "$1" 2>/dev/null || break
		sleep 0.05
	done
	log "bench: ${3##*/} says: $(tail -3 "$3"); $2 is not mounted"
	return 1
}

unmounted() {	# PID MOUNTPOINT: unmount it, and wait for its process
	[ -n "$1" ] || return 0
	fusermount3 -u "$2" 2>/dev/null || kill -TERM "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

fuse_down() {
	unmounted "$ffnoopen_pid" "$ffnoopen_mnt"
	ffnoopen_pid=""
	unmounted "$ffloor_pid" "$ffloor_mnt"
	ffloor_pid=""
	unmounted "$fuse_pid" "$fuse_mnt"
	fuse_pid=""
}

fuse_scenario() {
	local sp=$work/fuse mnt=$work/mnt n=$fuse_n rep id t0 t1 i
	spool_up "$sp" --local 2 || return 1
	seq "$n" | spool -S "$sp" map -- true > "$work/ids" &&
	    spool -S "$sp" wait < "$work/ids" > /dev/null &&
	    verify_results "$sp" "$work/ids" "$n" || return 1
	fs_up fuse "$mnt" spoolfs "$sp" "$mnt" -f || return 1
	awk -v d="$sp" '{ print d "/tasks/" int($1 / 1000) "/" $1 "/result" }' \
	    "$work/ids" > "$work/direct"
	awk -v m="$mnt" '{ print m "/tasks/" $1 "/result" }' "$work/ids" > "$work/viafs"
	# the first read of each result through the mount (names looked up,
	# content read from spoolfs); the repetitions below read them again
	"$BB/readlat" $(cat "$work/viafs") > "$work/lat.f" || return 1
	awk -v n="$n" '{ printf "fuse:read-result\tspoolfs, first read\t%d\t1\t%s\tms\n", n, $1 }' \
	    "$work/lat.f" >> "$tsv"
	# beside it the least FUSE filesystem (bench/fusefloor.c), the
	# spool's own files through it: what any FUSE mount costs a read
	fs_up ffloor "$work/ffmnt" "$BB/fusefloor" "$sp" "$work/ffmnt" ||
	    return 1
	sed "s|^$sp/|$work/ffmnt/|" "$work/direct" > "$work/viaff"
	"$BB/readlat" $(cat "$work/viaff") > /dev/null || return 1
	# and without OPEN: no process asked at an open or a close, the
	# page cache kept; the least any FUSE mount costs such a read
	fs_up ffnoopen "$work/ffnmnt" "$BB/fusefloor" -n "$sp" "$work/ffnmnt" ||
	    return 1
	sed "s|^$sp/|$work/ffnmnt/|" "$work/direct" > "$work/viaffn"
	"$BB/readlat" $(cat "$work/viaffn") > /dev/null || return 1
	# the same bytes all four ways, for every task
	paste "$work/direct" "$work/viafs" "$work/viaff" "$work/viaffn" |
	    while read -r a b c d; do
		cmp -s "$a" "$b" && cmp -s "$a" "$c" && cmp -s "$a" "$d" ||
		    { log "bench: $b, $c or $d differs from $a"; exit 1; }
	done || return 1
	for rep in $(seq "$reps"); do
		"$BB/readlat" $(cat "$work/direct") > "$work/lat.d" &&
		    "$BB/readlat" $(cat "$work/viafs") > "$work/lat.m" &&
		    "$BB/readlat" $(cat "$work/viaff") > "$work/lat.ff" &&
		    "$BB/readlat" $(cat "$work/viaffn") > "$work/lat.ffn" ||
		    return 1
		awk -v n="$n" -v r="$rep" '{ printf "fuse:read-result\tfloor: direct\t%d\t%d\t%s\tms\n", n, r, $1 }' \
		    "$work/lat.d" >> "$tsv"
		awk -v n="$n" -v r="$rep" '{ printf "fuse:read-result\tspoolfs\t%d\t%d\t%s\tms\n", n, r, $1 }' \
		    "$work/lat.m" >> "$tsv"
		awk -v n="$n" -v r="$rep" '{ printf "fuse:read-result\tthe least FUSE filesystem (bench/fusefloor)\t%d\t%d\t%s\tms\n", n, r, $1 }' \
		    "$work/lat.ff" >> "$tsv"
		awk -v n="$n" -v r="$rep" '{ printf "fuse:read-result\tthe least FUSE filesystem without OPEN (bench/fusefloor -n)\t%d\t%d\t%s\tms\n", n, r, $1 }' \
		    "$work/lat.ffn" >> "$tsv"
		# what one request to another process and its answer cost on
		# this machine, FUSE or not: an open through the mount is one
		"$BB/roundtrip" "$n" > "$work/lat.p" || return 1
		awk -v n="$n" -v r="$rep" '{ printf "fuse:read-result\tround trip between two processes\t%d\t%d\t%s\tms\n", n, r, $1 }' \
		    "$work/lat.p" >> "$tsv"
	done
	# as a user sees it: cat(1) of one result, process start included
	id=$(head -n 1 "$work/ids")
	hyperfine --style none -N --warmup 5 --runs "$lat_n" --export-json "$work/hf-cat.json" \
	    "cat $(head -n 1 "$work/direct")" "cat $mnt/tasks/$id/result" > "$work/hf.log" 2>&1 ||
	    { tail -3 "$work/hf.log" >&2; return 1; }
	hyperfine_rows "$work/hf-cat.json" "fuse:cat-result" "floor: direct" spoolfs
	# submitting by writing files into submit/ (shell commands; the
	# shell's redirection is one open, write, close, no process), and
	# the same with one "spool submit" process a task, for comparison;
	# the two in turn, every task waited for and verified
	local ids
	for rep in $(seq "$reps"); do
		t0=$(now)
		for i in $(seq "$fuse_submit_n"); do
			printf 'true\n' > "$mnt/submit/t${rep}_$i" || return 1
		done
		t1=$(now)
		ls "$mnt/submit" | grep -q '\.why$' &&
		    { log "bench: a submission was refused"; return 1; }
		ids=$work/ids.submit.$rep
		for i in $(seq "$fuse_submit_n"); do
			read -r id < "$mnt/submit/t${rep}_$i" && echo "$id"
		done > "$ids"
		spool -S "$sp" wait < "$ids" > /dev/null &&
		    verify_results "$sp" "$ids" "$fuse_submit_n" || return 1
		record "fuse:submit-rate" spoolfs "$fuse_submit_n" "$rep" \
		    "$(rate "$fuse_submit_n" "$t0" "$t1")" tasks/s
		# the same tasks as one YAML list written into submit/, one
		# submission (spoolfs(1)), as the Python client writes a map;
		# the list's text made before the clock starts
		ids=$work/ids.submit-list.$rep
		for i in $(seq "$fuse_submit_n"); do
			echo '- command: "true"'
		done > "$work/list.yaml"
		t0=$(now)
		cat "$work/list.yaml" > "$mnt/submit/list$rep.yaml" || return 1
		t1=$(now)
		cat "$mnt/submit/list$rep.yaml" > "$ids" || return 1
		[ "$(wc -l < "$ids")" -eq "$fuse_submit_n" ] ||
		    { log "bench: the list's receipt has $(wc -l < "$ids") IDs"; return 1; }
		spool -S "$sp" wait < "$ids" > /dev/null &&
		    verify_results "$sp" "$ids" "$fuse_submit_n" || return 1
		record "fuse:submit-rate" "spoolfs, one file of a list of the tasks" \
		    "$fuse_submit_n" "$rep" "$(rate "$fuse_submit_n" "$t0" "$t1")" tasks/s
		ids=$work/ids.spool-submit.$rep
		t0=$(now)
		for i in $(seq "$fuse_submit_n"); do
			spool -S "$sp" submit true || return 1
		done > "$ids"
		t1=$(now)
		spool -S "$sp" wait < "$ids" > /dev/null &&
		    verify_results "$sp" "$ids" "$fuse_submit_n" || return 1
		record "fuse:submit-rate" "spool submit (a process each)" "$fuse_submit_n" "$rep" \
		    "$(rate "$fuse_submit_n" "$t0" "$t1")" tasks/s
	done
	fuse_down
	spool_down
}

# ---- shared storage (scenario 7) ----

shared_scenario() {	# spoold and the CLI on host "head", two one-core
	# workers on host "node1"; each host sees the spool only through its
	# own sshfs mount (scripts/hosts.sh), so inotify tells neither about
	# the other's changes and only rescans do
	local hd=$work/hosts hs="$top/scripts/hosts.sh" sp n=$shared_n rep t0 t1 w1 w2 rescan
	[ -x "$hs" ] || { log "bench: $hs missing"; return 1; }
	"$hs" up "$hd" head node1 > "$work/hosts.log" 2>&1 ||
	    { tail -3 "$work/hosts.log" >&2; return 1; }
	hosts_up=$hd
	sp=$hd/shared/spool
	"$hs" exec "$hd" head spool -S "$sp" init > /dev/null || return 1
	"$hs" exec "$hd" head spoold -S "$sp" > "$work/spoold.log" 2>&1 &
	spoold_pid=$!
	"$hs" exec "$hd" node1 ckworker -S "$sp" --cores 1 --name s1 > "$work/w1.log" 2>&1 &
	w1=$!
	"$hs" exec "$hd" node1 ckworker -S "$sp" --cores 1 --name s2 > "$work/w2.log" 2>&1 &
	w2=$!
	extra_pids="$w1 $w2"
	wait_summary "$sp" '^workers: 2$' || return 1
	rescan=$("$hs" exec "$hd" head spool -S "$sp" config show |
	    sed -n 's/.*rescan \([0-9.]*\)s.*/\1/p')
	record "shared:rescan-max" ckspool 1 1 "$rescan" s
	for rep in $(seq "$shared_reps"); do
		# the floor of this N, unless the main loop measured it
		grep -q "^throughput:true	floor	$n	$rep	" "$tsv" ||
		    floor_throughput "$n" "$rep" true || return 1
		t0=$(now)
		seq "$n" | "$hs" exec "$hd" head spool -S "$sp" map -- true > "$work/ids" &&
		    "$hs" exec "$hd" head spool -S "$sp" wait < "$work/ids" > /dev/null || return 1
		t1=$(now)
		verify_results "$sp" "$work/ids" "$n" || return 1
		record "shared:throughput:true" ckspool "$n" "$rep" "$(elapsed "$t0" "$t1")" s
	done
	SPOOL=$sp "$hs" exec "$hd" head "$BB/lat" -r 1 "$BIN/spool" -- true > /dev/null &&
	    SPOOL=$sp "$hs" exec "$hd" head "$BB/lat" -r "$shared_lat" "$BIN/spool" -- true > "$work/lat" ||
	    { log "bench: shared latency run failed"; return 1; }
	awk '{ printf "shared:latency\tckspool\t1\t%d\t%s\tms\n", NR, $1 }' "$work/lat" >> "$tsv"
	kill -TERM "$w1" "$w2" 2>/dev/null
	wait "$w1" "$w2" 2>/dev/null
	extra_pids=""
	spool_down
	verify_all "$sp" $((shared_reps * n + 1 + shared_lat)) || return 1
	"$hs" down "$hd" > /dev/null 2>&1
	hosts_up=""
}

# ---- the run ----

selected() {	# WHAT: BENCH_ONLY (if set) selects the run named WHAT
	[ -z "${BENCH_ONLY:-}" ] || printf '%s' "$1" | grep -Eq -- "$BENCH_ONLY"
}

run_or_note() {	# WHAT COMMAND...: run it; a failure is recorded, not fatal
	local what=$1
	shift
	selected "$what" || return 0
	if ! "$@"; then
		log "bench: $what FAILED"
		record "failed" "$what" 0 0 0 -
		# what a failed scenario left running
		fuse_down
		small_down
		spool_down
	fi
}

load0=$(cut -d" " -f1-3 /proc/loadavg)
# The dentries the kernel holds before the run, and the size of its hash
# table (from the kernel's command line if it sets it, else from the
# kernel's log if it can be read): every lookup of a name (a create, a
# rename, an open) walks one chain of that table, so a table sized far
# below the dentries cached (the guest of 2026-11-28 and 29 booted with
# dhash_entries=131072, and held a million with the files of some
# 126,000 tasks kept on its disk) makes every step of a task dearer,
# for the floor's exec less than for a spool's files
# (doc/performance-history.md, "The machines before").
dentries0=$(cut -f1 /proc/sys/fs/dentry-state)
dhash=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^dhash_entries=//p')
if [ -n "$dhash" ]; then
	dhash="$dhash entries, from the kernel's command line"
else
	dhash=$(dmesg 2>/dev/null |
	    sed -n 's/.*Dentry cache hash table entries: \([0-9]*\).*/\1/p' |
	    head -n 1)
	if [ -n "$dhash" ]; then
		dhash="$dhash entries, the kernel's default size"
	else
		dhash="the kernel's default size"
	fi
fi
log "bench: results in $tsv (work in $work)"
printf 'scenario\tsystem\tn\trep\tvalue\tunit\n' > "$tsv"
for rep in $(seq "$reps"); do
	for n in $sizes; do
		log "bench: rep $rep, N=$n"
		run_or_note "floor N=$n" floor_throughput "$n" "$rep" true
		run_or_note "ckspool N=$n" ckspool_throughput "$n" "$rep" true
		# the same without flushes ("daemon: fsync: false"): what
		# making each result durable before it counts costs of it
		[ "$n" != "$nofsync_at" ] ||
		    ck_system="ckspool, fsync: false" \
		    SPOOL_YAML=$'daemon:\n  fsync: false\n' \
		    run_or_note "ckspool fsync false N=$n" ckspool_throughput \
		    "$n" "$rep" true
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
log "bench: latency"
run_or_note "floor latency" floor_latency
run_or_note "ckspool latency" ckspool_latency
run_or_note "hyperfine latency" latency_hyperfine
run_or_note "disk flush" disk_flush
run_or_note "scale" scale_scenario
run_or_note "placement 10k" placement_small
log "bench: FUSE"
run_or_note "fuse" fuse_scenario
log "bench: shared storage (sshfs)"
run_or_note "shared" shared_scenario
log "bench: the layout's own cost"
run_or_note "layout" layout_scenario

md=$out_dir/$stamp.md
{
	echo "# ckspool benchmark, $stamp"
	echo
	echo "Machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo),"\
	    "$(uname -r), $(df -T "$work" | awk 'NR == 2 { print $2 }') under $work; quick=$quick, reps=$reps, placement slices=$place_reps,"\
	    "load average before: $load0, dentries cached before: $dentries0"\
	    "(dentry hash table: $dhash)"
	echo
	"$top/bench/table.awk" "$tsv"
} > "$md"
# a partial run (BENCH_ONLY) does not replace latest.md, the table
# doc/performance.md shows, unless BENCH_LATEST=1 says it should
if [ -z "${BENCH_ONLY:-}" ] || [ "${BENCH_LATEST:-0}" = 1 ]; then
	cp "$md" "$out_dir/latest.md" && cp "$tsv" "$out_dir/latest.tsv"
	also=" (also latest.md, latest.tsv)"
else
	also=" (a partial run: latest.md left as it was)"
fi
cat "$md"
log "bench: table in $md, raw data in $tsv$also"
