#!/bin/sh
# demo.sh - a real workload through ckspool on the local backend.
#
#   1. create a spool, start spoold with its own local workers
#      (spoold --local 2: like Dask's LocalCluster)
#   2. a map over 300 inputs (a checksum of each), gathered in order
#   3. a small dependency graph: split -> 3 counts in parallel -> merge,
#      where each step reads its dependencies' outputs by path
#   4. Python functions as a notebook submits them (python/ckspool.py):
#      a map of a function defined in the script, and sum() of the
#      futures, which waits for them and gets their values
#   5. a summary, then a clean shutdown (SIGTERM: workers stop, no
#      process left behind)
#   6. the performance report of the run, from the event journal
#      (spool report; DEMO_REPORT=FILE.html keeps it there)
#
# DEMO_SPOOL=DIR keeps the spool there (default: a temporary directory,
# removed at the end).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
PATH="$here/bin:$PATH"
export PATH

keep=${DEMO_SPOOL:-}
if [ -n "$keep" ]; then
	SPOOL=$keep
else
	SPOOL=$(mktemp -d "${TMPDIR:-/tmp}/ckspool-demo.XXXXXX")/spool
fi
export SPOOL
log=$(dirname "$SPOOL")/spoold.log

stop() {
	if [ -n "${spoold_pid:-}" ] && kill -0 "$spoold_pid" 2>/dev/null; then
		kill -TERM "$spoold_pid"
		wait "$spoold_pid" || true
	fi
}
trap stop EXIT INT TERM

echo "== spool $SPOOL"
spool init >/dev/null
spoold --local 2 >"$log" 2>&1 &
spoold_pid=$!
n=0
until [ -s "$SPOOL/lock/spoold/owner" ]; do
	n=$((n + 1))
	[ $n -lt 100 ] || { cat "$log"; exit 1; }
	sleep 0.1
done
# the lease comes before the workers register: wait for both, or the
# list below says "no workers"
spool wait-workers --timeout 10 2 || { cat "$log"; exit 1; }
spool workers

echo
echo "== map: the sha256 of 300 inputs, gathered in input order"
start=$(date +%s%N)
seq 1 300 | spool map -- sh -c 'printf "%s %s\n" "$1" "$(printf %s "$1" | sha256sum | cut -c1-16)"' _ {} > "$(dirname "$SPOOL")/ids"
spool gather < "$(dirname "$SPOOL")/ids" > "$(dirname "$SPOOL")/out"
end=$(date +%s%N)
head -3 "$(dirname "$SPOOL")/out"
echo "..."
tail -2 "$(dirname "$SPOOL")/out"
lines=$(wc -l < "$(dirname "$SPOOL")/out")
echo "$lines results in $(( (end - start) / 1000000 )) ms"
[ "$lines" -eq 300 ] || { echo "demo: expected 300 results" >&2; exit 1; }

echo
echo "== a dependency graph: split -> 3 counts -> merge"
words=$(dirname "$SPOOL")/words
seq 1 3000 | sed 's/$/ alpha beta gamma/' > "$words"
# files a task writes in $SPOOL_TASK_DIR end up in its directory,
# $(spool path ID): that is how the counts find the parts
split=$(spool submit --name split -- sh -c \
    "cd \"\$SPOOL_TASK_DIR\" && split -n l/3 '$words' part. && ls part.*")
count=""
for i in 1 2 3; do
	c=$(spool submit --name "count-$i" --after "$split" -- sh -c \
	    "d=\$(spool path $split); wc -w < \"\$d/\$(sed -n ${i}p \"\$d/stdout\")\"")
	count="$count${count:+,}$c"
done
merge=$(spool submit --name merge --after "$count" -- sh -c \
    'for d in $(echo "$SPOOL_DEP_DIRS" | tr : " "); do cat "$d/stdout"; done | awk "{ s += \$1 } END { print \"total words:\", s }"')
spool wait "$merge"
echo "split=$split counts=$count merge=$merge"
spool gather "$merge"
spool status "$split" $(echo "$count" | tr , ' ') "$merge"

echo
echo "== Python functions, as a notebook submits them (python/ckspool.py)"
PYTHONPATH="$here/python${PYTHONPATH:+:$PYTHONPATH}" python3 - <<'EOF'
from ckspool import Client

client = Client()                       # the spool of $SPOOL


def square(x):
    return x * x


squares = client.map(square, range(10))  # 10 tasks
total = client.submit(sum, squares)      # waits for them, gets their values
print("sum of the squares of 0..9:", total.result(timeout=60))
EOF

echo
echo "== summary"
n=0
until grep -q '^done: 316$' "$SPOOL/state/summary" 2>/dev/null; do
	n=$((n + 1))
	[ $n -lt 50 ] || break
	sleep 0.1
done
spool status | head -3

echo
echo "== shutdown"
stop
spoold_pid=""
if pgrep -f -- "ckworker -S $SPOOL " >/dev/null; then
	echo "demo: workers left running" >&2
	exit 1
fi
echo "spoold stopped; no worker left running"

echo
echo "== the performance report of this run (spool report)"
report=${DEMO_REPORT:-$(dirname "$SPOOL")/report.html}
spool report -o "$report"
if [ -n "${DEMO_REPORT:-}$keep" ]; then
	echo "open $report in a browser"
fi
if [ -z "$keep" ]; then
	rm -rf "$(dirname "$SPOOL")"
fi
