#!/bin/bash
# soak.sh - thousands of tasks while spoold and workers are killed with
# SIGKILL at random moments and restarted.
#
#	BIN=/path/to/bin tests/reliability/soak.sh
#
# One spoold and SOAK_WORKERS workers (one core each) on a fresh spool;
# SOAK_TASKS tasks submitted in four "spool map" bundles while the
# killing goes on.  Every task appends "ID ATTEMPT WORKER UPTIME" to a
# log outside the spool when it starts (UPTIME: /proc/uptime, read by
# the shell itself, so no process is added to the task), then prints
# out<N>.  Every 0.1 to
# 0.7 s (at random) a victim is chosen: spoold one time in three, else
# a random worker; it gets SIGKILL and is started again at once (a
# worker under a new name).  The killing stops when every task is
# final or after SOAK_SECONDS; then everything must complete.  (A task
# placed on one killed worker after another would meet the bound on
# requeues, daemon: max-requeues, and fail with reason worker-lost, as
# designed; the soak raises the bound so that every task must finish.)
#
# Checked at the end (everything stopped, one recovery pass of spoold):
#   - every task final and done, its stdout the output of one run;
#   - "spool fsck --settled": exactly one accepted result per task,
#     nothing left in temporary areas;
#   - no attempt of a task ran twice (ID ATTEMPT unique in the log),
#     and the attempt accepted is one that ran;
#   - every re-execution (a task run more than once) is explained: each
#     run that was not accepted was on a worker that was killed after
#     the run had started (a worker is killed once: it comes back under
#     a new name; the kill's /proc/uptime is logged after the SIGKILL,
#     so a kill at or after the run's start means the worker died with
#     the run in its hands; the run's time is read by the task's shell
#     once it runs, which can be after its worker died if the kill came
#     just after the spawn: a kill up to SPAWN_LAG_MAX, 1 s, before that
#     time counts too; 20 ms was seen) or that spoold declared lost (it
#     missed its beats: its log says so); a kill more than 30 s after the run
#     began (KILL_GAP_MAX) does not explain it: a run is committed
#     within milliseconds of its end, so its outcome was lost.
# Prints the counts: tasks, kills of spoold and of workers,
# re-executions, and what explains them; then "1 passed, 0 failed" (or
# the failure and "0 passed, 1 failed").
#
# Knobs: SOAK_TASKS (default 2000), SOAK_SECONDS (default 45),
# SOAK_WORKERS (default 3), SOAK_SEED (random seed, default: the pid;
# it is printed so a run can be repeated), SOAK_KEEP=1 (keep the
# directory even when it passed).
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${BIN:?set BIN to the directory with spool, spoold and ckworker}"
. "$here/../integration/lib.sh"
ntasks=${SOAK_TASKS:-2000}
seconds=${SOAK_SECONDS:-45}
nworkers=${SOAK_WORKERS:-3}
seed=${SOAK_SEED:-$$}
RANDOM=$seed
T=$(mktemp -d "${TMPDIR:-/tmp}/ckspool-soak.XXXXXX")
SPOOL=$T/spool
export SPOOL
spool init > /dev/null || fail "spool init"
cat > "$SPOOL/spool.yaml" <<EOF
daemon:
  heartbeat: 250ms
  lost-timeout: 3s
  death-timeout: 60s
  rescan: 250ms
  settle: 1s
  max-requeues: 100
EOF
: > "$T/runs"
: > "$T/kills"
kills_spoold=0
kills_workers=0
nextw=0
declare -A wpid	# worker name -> pid

cleanup() {
	local p
	for p in ${SPOOLD_PID:-} "${wpid[@]}"; do kill -KILL "$p" 2>/dev/null; done
	pkill -KILL -f -- "$T/spool" 2>/dev/null
	pkill -KILL -f -- "$T/runs" 2>/dev/null
	return 0
}
trap cleanup EXIT

fail() {
	echo "soak: FAIL: $* (seed $seed; kept in $T)" >&2
	echo "0 passed, 1 failed"
	trap - EXIT
	cleanup
	exit 1
}

start_spoold_bg() {
	spoold >> "$T/spoold.log" 2>&1 &
	SPOOLD_PID=$!
}

start_worker_bg() {
	nextw=$((nextw + 1))
	ckworker --name "w$nextw" --cores 1 >> "$T/worker-w$nextw.log" 2>&1 &
	wpid[w$nextw]=$!
}

# the WID of worker NAME: its directory under workers/ (or its log)
wid_of() {
	sed -n 's/.*registered as \([^:]*\):.*/\1/p' "$T/worker-$1.log" | head -1
}

# workers that left by themselves (lost, or an error) are replaced
replace_dead_workers() {
	local n
	for n in "${!wpid[@]}"; do
		if ! kill -0 "${wpid[$n]}" 2>/dev/null; then
			wait "${wpid[$n]}" 2>/dev/null
			unset "wpid[$n]"
			start_worker_bg
		fi
	done
}

submit_part() {	# FROM TO
	seq "$1" "$2" | spool map -- sh -c \
	    'read up _ < /proc/uptime; echo "$SPOOL_TASK_ID $SPOOL_ATTEMPT $SPOOL_WORKER $up" >> '"$T/runs"'; echo out$1' \
	    _ {} >> "$T/ids" 2>> "$T/submit.log" || fail "spool map $1-$2"
}

all_final() {
	[ "$(ls "$SPOOL"/tasks/*/ 2>/dev/null | grep -c '^[0-9]')" -ge "$ntasks" ]
}

echo "soak: $ntasks tasks, $nworkers workers, up to ${seconds}s of kills, seed $seed"
start_spoold_bg
wait_for 10 test -s "$SPOOL/lock/spoold/owner" || fail "spoold did not start"
for _ in $(seq "$nworkers"); do start_worker_bg; done
: > "$T/ids"
quarter=$((ntasks / 4))
part=0
start=$(date +%s)
while :; do
	if [ $part -lt 4 ]; then
		from=$((part * quarter + 1))
		to=$(( part == 3 ? ntasks : (part + 1) * quarter ))
		submit_part $from $to
		part=$((part + 1))
	fi
	sleep "0.$((RANDOM % 7 + 1))"
	replace_dead_workers
	all_final && [ $part -eq 4 ] && break
	[ $(( $(date +%s) - start )) -ge "$seconds" ] && [ $part -eq 4 ] && break
	if [ $((RANDOM % 3)) -eq 0 ]; then
		kill -KILL "$SPOOLD_PID" 2>/dev/null
		wait "$SPOOLD_PID" 2>/dev/null
		read -r up _ < /proc/uptime
		echo "spoold $up" >> "$T/kills"
		kills_spoold=$((kills_spoold + 1))
		start_spoold_bg
	else
		names=("${!wpid[@]}")
		victim=${names[$((RANDOM % ${#names[@]}))]}
		w=$(wid_of "$victim")
		kill -KILL "${wpid[$victim]}" 2>/dev/null
		wait "${wpid[$victim]}" 2>/dev/null
		unset "wpid[$victim]"
		read -r up _ < /proc/uptime
		echo "worker $w $up" >> "$T/kills"
		kills_workers=$((kills_workers + 1))
		start_worker_bg
	fi
done
chaos=$(( $(date +%s) - start ))
# the rest without kills
limit=$(( 120 + ntasks / 20 ))
while ! all_final; do
	replace_dead_workers
	[ $(( $(date +%s) - start - chaos )) -lt $limit ] ||
	    fail "not every task finished $limit s after the kills stopped: $(spool status | head -3 | tr '\n' ' ')"
	sleep 0.2
done
total=$(( $(date +%s) - start ))
for n in "${!wpid[@]}"; do kill -TERM "${wpid[$n]}" 2>/dev/null; done
for n in "${!wpid[@]}"; do wait "${wpid[$n]}" 2>/dev/null; done
kill -TERM "$SPOOLD_PID"
wait "$SPOOLD_PID"
rc=$?
[ $rc -eq 0 ] || fail "spoold stopped with $rc"
# one recovery pass: what a start does
spoold >> "$T/recovery.log" 2>&1 &
rp=$!
wait_for 10 grep -q "recovered [0-9]* worker" "$T/recovery.log" || fail "recovery"
kill -TERM $rp
wait $rp || fail "recovery pass: spoold stopped with $?"
spool fsck -q --settled > "$T/fsck.out" 2>&1 ||
    fail "spool fsck --settled: $(head -5 "$T/fsck.out")"

# ---- outcomes ----
[ "$(wc -l < "$T/ids")" -eq "$ntasks" ] || fail "$(wc -l < "$T/ids") IDs for $ntasks tasks"
# accepted: ID ATTEMPT WORKER, one line per task, from the results
# (one grep over all files, through find: a glob of 60,000 results is
# too long an argument list)
find "$SPOOL/tasks" -mindepth 3 -maxdepth 3 -name result \
    -exec grep -H '^\(state\|attempt\|worker\): ' {} + |
    awk -F'[/:]' '{ id = $(NF - 3); v = $NF; sub(/^ /, "", v); k = $(NF - 1)
	f[id, k] = v; ids[id] = 1 }
	END { for (id in ids) print id, f[id, "state"], f[id, "attempt"],
	    f[id, "worker"] }' | sort -n > "$T/results"
find "$SPOOL/tasks" -mindepth 3 -maxdepth 3 -name stdout -exec grep -H '' {} + |
    awk -F'[/:]' '{ print $(NF - 2), $NF }' | sort -n > "$T/stdouts"
awk '{ print $1, "out" NR }' "$T/ids" | sort -n > "$T/expected"
[ "$(wc -l < "$T/results")" -eq "$ntasks" ] ||
    fail "$(wc -l < "$T/results") results for $ntasks tasks"
bad=$(awk '$2 != "done"' "$T/results" | head -3)
[ -z "$bad" ] || fail "not done: $bad"
cmp -s "$T/stdouts" "$T/expected" ||
    fail "outputs differ: $(diff "$T/expected" "$T/stdouts" | head -4 | tr '\n' ' ')"
awk '{ print $1, $3, $4 }' "$T/results" > "$T/accepted"
dups=$(awk '{print $1, $2}' "$T/runs" | sort | uniq -d | head -3)
[ -z "$dups" ] || fail "an attempt ran twice: $dups"
awk '{ print $1, $2, $3 }' "$T/runs" | sort > "$T/runs.sorted"
sort "$T/accepted" > "$T/accepted.sorted"
missing=$(comm -13 "$T/runs.sorted" "$T/accepted.sorted" | head -3)
[ -z "$missing" ] || fail "accepted attempts that never ran: $missing"
# the runs that were not accepted, and the workers they ran on
comm -23 "$T/runs.sorted" "$T/accepted.sorted" > "$T/extra"
reexec=$(wc -l < "$T/extra")
# each run not accepted, with the time it started and the time its
# worker was killed (- if it was not)
awk 'FNR == NR { if ($1 == "worker") kill[$2] = $3; next }
	{ k = ($3 in kill) ? kill[$3] : "-"; print $1, $2, $3, $4, k }' \
    "$T/kills" "$T/runs" | sort > "$T/runs.kills"
lost_wids=$(grep -h "lost: no heartbeat" "$T"/spoold.log 2>/dev/null |
    sed -n 's/.*worker \([^ ]*\) .*/\1/p' | sort -u)
by_kill=0
by_loss=0
gap=0
KILL_GAP_MAX=30	# seconds
SPAWN_LAG_MAX=1	# seconds
while read -r id att w; do
	read -r _ _ _ began killed < <(grep -m1 "^$id $att $w " "$T/runs.kills")
	if [ "${killed:--}" != - ]; then
		# killed, but after this run had started?
		awk -v b="$began" -v k="$killed" -v l="$SPAWN_LAG_MAX" \
		    'BEGIN { exit !(k >= b - l) }' ||
		    fail "task $id attempt $att started on $w at uptime $began, more than $SPAWN_LAG_MAX s after that worker was killed ($killed), and was not accepted"
		# a run ends and is committed within milliseconds: one whose
		# worker died long after it started had its outcome lost
		awk -v b="$began" -v k="$killed" -v m="$KILL_GAP_MAX" \
		    'BEGIN { exit !(k - b <= m) }' ||
		    fail "task $id attempt $att started on $w at uptime $began, $KILL_GAP_MAX s or more before that worker was killed ($killed), and was not accepted: its outcome was lost"
		gap=$(awk -v b="$began" -v k="$killed" -v g="$gap" \
		    'BEGIN { d = k - b; print (d > g ? d : g) }')
		by_kill=$((by_kill + 1))
	elif printf '%s\n' $lost_wids | grep -qx -- "$w"; then
		by_loss=$((by_loss + 1))
	else
		fail "task $id attempt $att ran on $w, which was neither killed nor lost, and was not accepted"
	fi
done < "$T/extra"
echo "soak: $ntasks tasks done in ${total}s (kills for ${chaos}s): $kills_spoold kills of spoold, $kills_workers of workers"
echo "soak: $reexec re-executions: $by_kill on workers killed while they ran the task (at most ${gap}s after it started), $by_loss on workers spoold declared lost (missed beats)"
echo "soak: every task accepted once (fsck --settled clean), no attempt ran twice"
trap - EXIT
cleanup
[ -n "${SOAK_KEEP:-}" ] || rm -rf "$T"
echo "1 passed, 0 failed"
