#!/bin/sh
# t_table.sh - bench/table.awk on a raw TSV whose table is known: the
# medians and min-max, the ratio of medians to the floor of the same
# scenario and N, the ratios by repetition, the placement rate against
# its 10k spool, the targets and the failed scenarios.  Prints one line
# per check and "N passed, N failed"; exits non-zero if any failed.
set -u
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0

check() {	# NAME WANT GOT
	if [ "$2" = "$3" ]; then
		passed=$((passed + 1))
		echo "ok: $1"
	else
		failed=$((failed + 1))
		echo "FAILED: $1"
		echo "  want: $2"
		echo "  got:  $3"
	fi
}

# the table's row of SCENARIO, SYSTEM and N
row() {
	awk -F' [|] ' -v s="| $1" -v y="$2" -v n="$3" \
	    '$1 == s && $2 == y && $3 == n' "$tmp/table"
}

t=$(printf '\t')
# scenario, system, N, repetition (or sample), value, unit: as
# bench/run.sh writes them (repetitions of a system in turn with the
# floor's; the floor's repetition 3 the fastest)
sed "s/|/$t/g" > "$tmp/tsv" <<'TSV'
scenario|system|n|rep|value|unit
throughput:true|floor|10000|1|4|s
cores-idle:true|floor|10000|1|3.5|%
throughput:true|ckspool|10000|1|5|s
cores-idle:true|ckspool|10000|1|7|%
throughput:true|xargs -P2|10000|1|4.4|s
task-cpu:true|floor|10000|1|800|us
task-cpu:true|ckspool|10000|1|700|us
throughput:true|floor|10000|2|4|s
throughput:true|ckspool|10000|2|7|s
throughput:true|xargs -P2|10000|2|4.8|s
task-cpu:true|floor|10000|2|800|us
task-cpu:true|ckspool|10000|2|840|us
throughput:true|floor|10000|3|3|s
throughput:true|ckspool|10000|3|5.5|s
task-cpu:true|floor|10000|3|600|us
task-cpu:true|ckspool|10000|3|660|us
cpu-per-task:true|floor: the spawner itself|10000|1|50|us
cpu-per-task:true|ckspool|10000|1|200|us
cpu-per-task:true|floor: the spawner itself|10000|2|40|us
cpu-per-task:true|ckspool|10000|2|180|us
cpu-per-task:true|ckspool (spoold)|10000|1|40|us
throughput:true|floor|2000|1|1|s
throughput:true|ckspool|2000|1|1.5|s
throughput:true|Dask LocalCluster|2000|2|4|s
throughput:true|floor|2000|2|1.1|s
latency|floor|1|1|0.5|ms
latency|floor|1|2|0.7|ms
latency|ckspool|1|1|2|ms
latency|ckspool|1|2|3|ms
latency|ckspool|1|3|2.5|ms
latency|ckspool|1|4|2.9|ms
latency (300 ms idle before)|floor|1|1|1.2|ms
latency (300 ms idle before)|ckspool|1|1|4.8|ms
disk: a durable small file|machine|1|1|0.5|ms
layout:true|floor: spawn alone|300|1|4|s
layout:true|ckspool's layout, no flush|300|1|5|s
layout:true|floor: spawn alone|300|2|5|s
layout:true|ckspool's layout, no flush|300|2|6|s
layout-cpu:true|floor: spawn alone|300|1|30|us
layout-cpu:true|ckspool's layout, no flush|300|1|120|us
layout-cpu:true|floor: spawn alone|300|2|25|us
layout-cpu:true|ckspool's layout, no flush|300|2|110|us
fuse:read-result|floor: direct|1|1|4|us
fuse:read-result|spoolfs|1|1|20|us
shared:throughput:true|ckspool|2000|1|11|s
shared:throughput:true|ckspool|2000|2|12|s
scale:placement-rate|ckspool|10000|1|200000|tasks/s
scale:placement-rate|ckspool|1000000|1|210000|tasks/s
failed|shared storage
TSV
bench/table.awk "$tmp/tsv" > "$tmp/table" || { echo "table.awk failed"; exit 1; }

check "the header" \
    "| scenario | system | N | median | min-max | unit | vs floor | target |" \
    "$(sed -n 1p "$tmp/table")"
check "rows in the order of their first line" \
    "throughput:true floor 10000|cores-idle:true floor 10000|throughput:true ckspool 10000" \
    "$(awk -F' [|] ' 'NR > 2 && NR < 6 { sub(/^[|] /, "", $1); printf "%s%s %s %s", (NR > 3 ? "|" : ""), $1, $2, $3 }' "$tmp/table")"
# ckspool 5, 7, 5.5 against the floor's 4, 4, 3: medians 5.5 and 4;
# by repetition 1.25, 1.75 and 1.83
check "throughput: median, min-max, ratio of medians and by repetition, target" \
    "| throughput:true | ckspool | 10000 | 5.50 | 5.00-7.00 | s | 1.38x (1.25-1.83) | <= 1.25x |" \
    "$(row throughput:true ckspool 10000)"
check "a peer's ratios" \
    "| throughput:true | xargs -P2 | 10000 | 4.60 | 4.40-4.80 | s | 1.15x (1.10-1.20) |  |" \
    "$(row throughput:true 'xargs -P2' 10000)"
check "the floor has no ratio" \
    "| throughput:true | floor | 10000 | 4.00 | 3.00-4.00 | s |  |  |" \
    "$(row throughput:true floor 10000)"
check "the tasks' CPU: values of 100 and more without decimals" \
    "| task-cpu:true | ckspool | 10000 | 700 | 660-840 | us | 0.88x (0.88-1.10) |  |" \
    "$(row task-cpu:true ckspool 10000)"
check "a share in % has no ratio" \
    "| cores-idle:true | ckspool | 10000 | 7.00 | 7.00-7.00 | % |  |  |" \
    "$(row cores-idle:true ckspool 10000)"
check "one repetition: no ratios by repetition; no target at N = 2,000" \
    "| throughput:true | ckspool | 2000 | 1.50 | 1.50-1.50 | s | 1.43x |  |" \
    "$(row throughput:true ckspool 2000)"
check "a repetition the floor has not: no pair" \
    "| throughput:true | Dask LocalCluster | 2000 | 4.00 | 4.00-4.00 | s | 3.81x |  |" \
    "$(row throughput:true 'Dask LocalCluster' 2000)"
check "samples: median of an even count, no ratios by sample" \
    "| latency | ckspool | 1 | 2.70 | 2.00-3.00 | ms | 4.50x | median <= 2 ms |" \
    "$(row latency ckspool 1)"
check "values under 1 with three decimals" \
    "| latency | floor | 1 | 0.600 | 0.500-0.700 | ms |  |  |" \
    "$(row latency floor 1)"
check "the idle latency against the floor's idle row, with no target" \
    "| latency (300 ms idle before) | ckspool | 1 | 4.80 | 4.80-4.80 | ms | 4.00x |  |" \
    "$(row 'latency (300 ms idle before)' ckspool 1)"
check "the disk's row: no floor, no ratio, no target" \
    "| disk: a durable small file | machine | 1 | 0.500 | 0.500-0.500 | ms |  |  |" \
    "$(row 'disk: a durable small file' machine 1)"
check "the layouts: ratios by repetition against their own floor" \
    "| layout:true | ckspool's layout, no flush | 300 | 5.50 | 5.00-6.00 | s | 1.22x (1.20-1.25) |  |" \
    "$(row layout:true "ckspool's layout, no flush" 300)"
# 200 and 180 against the spawner's own 50 and 40: medians 190 and 45;
# by repetition 4.00 and 4.50
check "the daemons' CPU against the spawner's own, by repetition, target" \
    "| cpu-per-task:true | ckspool | 10000 | 190 | 180-200 | us | 4.22x (4.00-4.50) | <= 50 us |" \
    "$(row cpu-per-task:true ckspool 10000)"
check "one daemon's CPU alone: no ratio, no target (the spawner is the floor of both)" \
    "| cpu-per-task:true | ckspool (spoold) | 10000 | 40.00 | 40.00-40.00 | us |  |  |" \
    "$(row cpu-per-task:true 'ckspool (spoold)' 10000)"
check "the layouts' CPU against their own spawn, by repetition" \
    "| layout-cpu:true | ckspool's layout, no flush | 300 | 115 | 110-120 | us | 4.18x (4.00-4.40) |  |" \
    "$(row layout-cpu:true "ckspool's layout, no flush" 300)"
check "a floor named \"floor: HOW\", spoolfs's target" \
    "| fuse:read-result | spoolfs | 1 | 20.00 | 20.00-20.00 | us | 5.00x | <= 2x |" \
    "$(row fuse:read-result spoolfs 1)"
check "shared storage against the local floor of its N, no pairs" \
    "| shared:throughput:true | ckspool | 2000 | 11.50 | 11.00-12.00 | s | 10.95x |  |" \
    "$(row shared:throughput:true ckspool 2000)"
check "the placement rate with 1M queued against its 10k spool" \
    "| scale:placement-rate | ckspool | 1000000 | 210000 | 210000-210000 | tasks/s | +5.0% vs 10k | within 10% of 10k |" \
    "$(row scale:placement-rate ckspool 1000000)"
check "a failed scenario" "FAILED: shared storage" \
    "$(grep '^FAILED' "$tmp/table")"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
