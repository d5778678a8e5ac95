# t_hosts.sh - spoold and workers on different simulated hosts that share
# the spool only through a network filesystem.
#
# scripts/hosts.sh gives each host its own network, UTS (hostname) and
# mount namespace, and its own sshfs mount of one directory served by a
# private sshd: a change made on one host raises no inotify event on
# another, as on NFS, so everything here runs on rescans.  The spool is
# $T/h/shared/spool on every host; outside the hosts (where the checks
# below look) the same path is the server's real directory.
#
# Needs root and openssh-server, sshfs, iproute2 (install-deps.sh test):
# without them every test fails (hosts.sh says what is missing).

# hosts_up HOST...: bring up HOSTs under $T/h, create the spool from the
# first one, fast timings (lib.sh: fast_config).  Everything is taken
# down when the test ends, however it ends.
hosts_up() {
	HOSTS_SH=$(cd "$here/../../scripts" && pwd)/hosts.sh
	H=$T/h
	trap hosts_down EXIT
	trap 'exit 143' TERM INT
	"$HOSTS_SH" up "$H" "$@" >> "$T/hosts.log" 2>&1 ||
	    fail "hosts.sh up $*: $(tail -5 "$T/hosts.log")"
	SPOOL=$H/shared/spool
	export SPOOL
	on "$1" spool init > /dev/null || fail "spool init on $1"
	fast_config "${HOSTS_CONFIG:-}"
}

hosts_down() {
	"$HOSTS_SH" down "$H" >> "$T/hosts.log" 2>&1 ||
	    echo "    hosts.sh down failed: $(tail -3 "$T/hosts.log")" >&2
}

on() {	# HOST CMD...: run CMD on HOST
	local h=$1
	shift
	"$HOSTS_SH" exec "$H" "$h" "$@"
}

# on_spoold HOST [ARGS]: spoold on HOST, logging to $T/spoold.log; waits
# until it holds the lease.  Sets SPOOLD_PID.
on_spoold() {
	local h=$1
	shift
	"$HOSTS_SH" exec "$H" "$h" spoold "$@" >> "$T/spoold.log" 2>&1 &
	SPOOLD_PID=$!
	track $SPOOLD_PID
	wait_for 20 grep -q "^host: $h\$" "$SPOOL/lock/spoold/owner" ||
	    fail "spoold on $h did not take the lease: $(tail -5 "$T/spoold.log")"
}

# on_worker HOST NAME [ARGS]: a ckworker on HOST; waits until spoold has
# seen it.  Sets WORKER_PID.
on_worker() {
	local h=$1 name=$2
	shift 2
	"$HOSTS_SH" exec "$H" "$h" ckworker --name "$name" "$@" \
	    >> "$T/worker-$name.log" 2>&1 &
	WORKER_PID=$!
	track $WORKER_PID
	wait_for 20 grep -q "worker $name-[0-9a-f]* registered:.* on $h\$" \
	    "$T/spoold.log" ||
	    fail "worker $name on $h not registered: $(tail -5 "$T/worker-$name.log")"
}

# a line for run.sh to print under the test's "ok" line
report() {
	echo "$*" >> "$T/report"
	note "$*"
}

ms_now() {
	echo $(( $(date +%s%N) / 1000000 ))
}

# min median max of the numbers on stdin
stats3() {
	sort -n | awk '{ v[NR] = $1 } END { printf "min %d median %d max %d", v[1], v[int((NR + 1) / 2)], v[NR] }'
}

# python3 on the host given: watch DIR with inotify for changes (create,
# delete, move, modify, attributes, close after writing; not the open and
# read of its own listing), say "ready", wait (bounded) until NAME is
# listed in DIR, then print how many bytes of events came.
inotify_probe() {	# HOST DIR NAME OUT
	on "$1" python3 -c '
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(os.O_NONBLOCK)
if fd < 0 or libc.inotify_add_watch(fd, sys.argv[1].encode(), 0x3ce) < 0:
    sys.exit("inotify: " + os.strerror(ctypes.get_errno()))
print("ready", flush=True)
deadline = time.monotonic() + 30
while sys.argv[2] not in os.listdir(sys.argv[1]):
    if time.monotonic() > deadline:
        sys.exit("never listed: " + sys.argv[2])
    time.sleep(0.05)
try:
    n = len(os.read(fd, 65536))
except BlockingIOError:
    n = 0
print("visible, event bytes:", n, flush=True)
' "$2" "$3" > "$4" 2>&1 &
	track $!
	wait_for 20 grep -q ready "$4" || fail "inotify probe on $1: $(cat "$4")"
}

test_hosts_no_inotify_event_across_hosts() {
	hosts_up A B
	mkdir "$H/shared/probe" || fail "mkdir probe"
	# made on B, seen on A by listing: no event on A
	inotify_probe A "$H/shared/probe" fromB "$T/probe1"
	on B touch "$H/shared/probe/fromB" || fail "touch on B"
	wait_for 30 grep -q visible "$T/probe1" || fail "probe: $(cat "$T/probe1")"
	assert_eq "visible, event bytes: 0" "$(tail -1 "$T/probe1")" \
	    "inotify on A after a change on B"
	# the same made on A itself: an event (the probe can see one)
	inotify_probe A "$H/shared/probe" fromA "$T/probe2"
	on A touch "$H/shared/probe/fromA" || fail "touch on A"
	wait_for 30 grep -q visible "$T/probe2" || fail "probe: $(cat "$T/probe2")"
	assert_match "event bytes: [1-9]" "$(tail -1 "$T/probe2")" \
	    "inotify on A after a change on A"
	# each host has its own name and its own mount
	assert_eq B "$(on B hostname)" "hostname on B"
	assert_match "fuse.sshfs" "$(on B findmnt -n -o FSTYPE "$H/shared")" \
	    "B's view of the share"
}

test_hosts_workload_map_deps_cancel() {
	hosts_up A B C
	# No worker is lost here and the log must say no warning: across
	# sshfs a beat shows up to attr_timeout (1 s) late, so fast_config's
	# 2 s left one second for a loaded machine (a run beside another
	# test found worker wb lost 2 s after it registered)
	sed -i 's/^  lost-timeout: .*/  lost-timeout: 6s/' "$SPOOL/spool.yaml"
	on_spoold A
	on_worker B wb --cores 2
	on_worker C wc --cores 2
	# two maps at once from two hosts: their ID claims race on sshfs
	seq 1 12 | on B spool map -- sh -c 'echo "r$1 $(hostname)"' _ {} \
	    > "$T/ids.b" &
	mb=$!
	seq 13 24 | on C spool map -- sh -c 'echo "r$1 $(hostname)"' _ {} \
	    > "$T/ids.c" || fail "map on C"
	wait $mb || fail "map on B"
	cat "$T/ids.b" "$T/ids.c" > "$T/ids"
	assert_eq 24 "$(sort -u "$T/ids" | wc -l)" "distinct IDs of two maps"
	last=$(sort -n "$T/ids" | tail -1)
	after=$(paste -sd, "$T/ids")
	# a task after all of them, reading their outputs by path
	dep=$(on C spool submit --after "$after" -- sh -c \
	    'IFS=:; for d in $SPOOL_DEP_DIRS; do cat "$d/stdout"; done | wc -l') ||
	    fail "submit with dependencies"
	# a long task cancelled from another host than the one it runs on
	long=$(on A spool submit -- sleep 300) || fail "submit long"
	wait_for 30 state_is "$long" running || fail "long task not running"
	on B spool cancel "$long" || fail "cancel on B"
	on C spool wait < "$T/ids" || fail "map tasks failed: $(spool status)"
	on B spool wait "$dep" || fail "dependent task failed"
	wait_for 30 finished "$long" || fail "cancelled task not final"
	assert_eq cancelled "$(field "$long" state)" "state of the cancelled task"
	n=0
	for id in $(cat "$T/ids.b" "$T/ids.c"); do
		n=$((n + 1))
		out=$(task_stdout "$id")
		assert_match "^r$n [BC]\$" "$out" "output of task $id"
		assert_eq "${out#* }" "$(field "$id" host)" "host of task $id"
	done
	assert_eq 24 "$(task_stdout "$dep" | tr -d ' ')" "outputs seen by the dependent"
	[ "$last" -lt "$dep" ] || fail "dependent's ID $dep not after $last"
	cut -d' ' -f2 < <(for id in $(cat "$T/ids"); do task_stdout "$id"; done) |
	    sort -u > "$T/hosts"
	assert_eq "B C" "$(paste -sd' ' "$T/hosts")" "hosts the map ran on"
	on C spool fsck -q || fail "fsck: $(on C spool fsck)"
	assert_no_match "warning|fatal" "$(cat "$T/spoold.log")" "spoold's log"
	assert_no_match "fatal" "$(cat "$T"/worker-*.log)" "workers' logs"
	# the journal: one file per writer, the workers' written on B and C
	# through their sshfs mounts, spoold's on A; read on A they merge,
	# every map task started once on the host its result names, and
	# accepted by spoold on A, no line torn or lost
	wait_for 10 journal_has 24 started "$T/ids" ||
	    fail "started events: $(journal_of started "$T/ids" | wc -l) of 24"
	journal_of started "$T/ids" > "$T/started"
	while read -r id host; do
		assert_eq "$(field "$id" host)" "$host" "journal host of task $id"
	done < "$T/started"
	assert_eq "24 A" "$(journal_of final "$T/ids" | awk '{ print $2 }' |
	    sort | uniq -c | awk '{ print $1, $2 }')" "final events, by host"
	on A spool journal > /dev/null 2> "$T/journal.err" || fail "spool journal"
	assert_eq "" "$(cat "$T/journal.err")" "spool journal's complaints"
}

# journal_of EVENT IDSFILE: "ID HOST" of the EVENT lines of those tasks,
# as spool journal on host A merges them.
journal_of() {
	on A spool journal 2>/dev/null | awk -v ev="$1" \
	    'FNR == NR { want[$1] = 1; next }
	    $3 == "task" && ($4 in want) && $5 == ev { print $4, $2 }' \
	    "$2" - | sort -n
}

journal_has() {	# N EVENT IDSFILE
	[ "$(journal_of "$2" "$3" | wc -l)" -eq "$1" ]
}

# submit -> done as a user on a third host sees it, spoold and the worker
# each on their own host: everything crosses sshfs and nothing but the
# rescans notices it.  The figures are printed (run.sh shows them) and
# written down in doc/shared-storage.md; nothing is asserted about them.
test_hosts_latency_submit_to_done() {
	HOSTS_CONFIG="" hosts_up A B C
	# the default rescan interval, not fast_config's
	sed -i 's/^  rescan: .*/  rescan: 1s/' "$SPOOL/spool.yaml"
	rescan=$(sed -n 's/^  rescan: //p' "$SPOOL/spool.yaml")
	on_spoold A
	on_worker B wb --cores 1
	: > "$T/warm"
	for i in 1 2 3 4 5 6; do
		t0=$(ms_now)
		id=$(on C spool submit -- true) || fail "submit $i"
		on C spool wait "$id" || fail "task $id failed"
		echo $(( $(ms_now) - t0 )) >> "$T/warm"
	done
	: > "$T/idle"
	for i in 1 2 3; do
		# The gap is the experiment, not a wait for something: it
		# lets every rescan interval grow to its bound (doubling
		# from 10-20 ms up to $rescan) before the next submission.
		sleep 4
		t0=$(ms_now)
		id=$(on C spool submit -- true) || fail "submit idle $i"
		on C spool wait "$id" || fail "task $id failed"
		echo $(( $(ms_now) - t0 )) >> "$T/idle"
	done
	assert_eq B "$(field "$id" host)" "host of the last task"
	report "submit->done over sshfs (spoold on A, worker on B, submit+wait" \
	    "on C; rescan $rescan): back to back: $(stats3 < "$T/warm") ms;" \
	    "after 4 s idle: $(stats3 < "$T/idle") ms"
}

test_hosts_two_spoolds_one_wins() {
	hosts_up A B
	for round in 1 2 3; do
		: > "$T/sa.$round"
		: > "$T/sb.$round"
		"$HOSTS_SH" exec "$H" A spoold >> "$T/sa.$round" 2>&1 &
		pa=$!
		"$HOSTS_SH" exec "$H" B spoold >> "$T/sb.$round" 2>&1 &
		pb=$!
		track $pa
		track $pb
		# exactly one exits, non-zero, naming the other as holder
		wait_for 30 sh -c "! kill -0 $pa 2>/dev/null || ! kill -0 $pb 2>/dev/null" ||
		    fail "round $round: neither spoold gave up; A said: $(tail -3 "$T/sa.$round"); B said: $(tail -3 "$T/sb.$round"); lease: $(cat "$SPOOL/lock/spoold/owner" 2>&1)"
		if kill -0 $pa 2>/dev/null; then
			win=A wpid=$pa lose=B lpid=$pb
		else
			win=B wpid=$pb lose=A lpid=$pa
		fi
		rc=0
		wait $lpid || rc=$?
		[ $rc -ne 0 ] || fail "round $round: the losing spoold exited 0"
		kill -0 $wpid 2>/dev/null || fail "round $round: both spoolds exited"
		grep -q "^host: $win\$" "$SPOOL/lock/spoold/owner" ||
		    fail "round $round: lease not held by $win: $(cat "$SPOOL/lock/spoold/owner")"
		holder_pid=$(sed -n 's/^pid: //p' "$SPOOL/lock/spoold/owner")
		lost_log=$(cat "$T/s$(echo $lose | tr AB ab).$round")
		# it said so at once, or (when it took a lease it judged
		# stale and was then found alive) at its next heartbeat
		assert_match "(held by|lost the spool lease to) spoold pid $holder_pid on host $win" \
		    "$lost_log" "round $round: what the spoold on $lose said"
		note "round $round: $win won, $lose: $lost_log (exit $rc)"
		kill -TERM $wpid
		wait $wpid
		wait_for 20 sh -c "[ ! -e '$SPOOL/lock/spoold' ]" ||
		    fail "round $round: the lease was not released"
		# and both hosts see it gone before the next round: sshfs
		# keeps a name and its file's attributes for up to 1 s
		# (entry_timeout, attr_timeout) and, unlike an NFS client,
		# does not look again at open, so a spoold started at once
		# could read the last round's owner from its cache
		for h in A B; do
			wait_for 20 on $h sh -c "[ ! -e '$SPOOL/lock/spoold' ]" ||
			    fail "round $round: host $h still sees the lease"
		done
	done
}

# A spoold whose stop outlasts lost-timeout (here every syncfs takes
# 5 s: a slow file server) can have its lease broken and taken by a
# spoold on another host meanwhile.  Its stop went on with the workers'
# last reports and then released "its" lease: lock/spoold had the inode
# number it had taken (sshfs numbers inodes by path), so it renamed the
# new holder's lease to gc/ and removed it, and the new spoold, finding
# its lease gone, exited too: nobody ran the spool.  B is started until
# it takes the lease (one started before A's last beat sees it and
# leaves: A is alive).
test_hosts_a_stopping_spoold_leaves_a_taken_over_lease_alone() {
	hosts_up A B
	CKSPOOL_FAULT=slow-sync=5000 on_spoold A
	pa=$SPOOLD_PID
	kill -TERM "$pa"
	# (it takes the signal once its pass's flush is over; a B started
	# before that would break the lease while A still loops, and A's
	# next heartbeat would find it lost, as it should)
	wait_for 20 grep -q "stopping (SIGTERM)" "$T/spoold.log" ||
	    fail "A did not take SIGTERM"
	for try in 1 2 3 4 5 6 7 8; do
		"$HOSTS_SH" exec "$H" B spoold >> "$T/spoold-b.log" 2>&1 &
		pb=$!
		track $pb
		wait_for 20 sh -c "grep -q '^host: B\$' '$SPOOL/lock/spoold/owner' ||
		    ! kill -0 $pb 2>/dev/null" || fail "B neither took the lease nor left"
		grep -q '^host: B$' "$SPOOL/lock/spoold/owner" && break
	done
	grep -q '^host: B$' "$SPOOL/lock/spoold/owner" ||
	    fail "B never took the lease: $(tail -3 "$T/spoold-b.log")"
	wait_for 30 not_running "$pa" || fail "A did not stop"
	# B still holds the lease, and beats it
	b=$(spoold_beat)
	wait_for 10 beat_past $((b + 2)) ||
	    fail "B's lease is gone: $(tail -3 "$T/spoold-b.log"); A: $(tail -3 "$T/spoold.log")"
	! not_running "$pb" || fail "B left: $(tail -3 "$T/spoold-b.log")"
	grep -q '^host: B$' "$SPOOL/lock/spoold/owner" || fail "lease not B's"
	assert_match "lost the spool lease to spoold pid [0-9]+ on host B" \
	    "$(cat "$T/spoold.log")" "what A said"
}

# A host that hangs (every process of it stopped) past the lost-worker
# timeout: its tasks run again elsewhere; when it resumes, its attempt
# is not accepted and its task is killed.
test_hosts_frozen_worker_host() {
	hosts_up A B C
	on_spoold A
	on_worker B wb --cores 1
	wb=$WORKER_PID
	id=$(on A spool submit -- sh -c \
	    'if [ $(hostname) = B ]; then echo $$ > "$1"; exec sleep 300; fi; echo "ran on $(hostname) attempt $SPOOL_ATTEMPT"' \
	    _ "$H/shared/pid.B") ||
	    fail "submit"
	wait_for 30 test -s "$H/shared/pid.B" || fail "task did not start on B"
	task_pid=$(cat "$H/shared/pid.B")
	"$HOSTS_SH" freeze "$H" B || fail "freeze B"
	on_worker C wc --cores 1
	wait_for 30 grep -q "worker wb-.* lost: no heartbeat" "$T/spoold.log" ||
	    fail "B not declared lost"
	on C spool wait "$id" || fail "task failed after B was lost"
	assert_eq "ran on C attempt 2" "$(task_stdout "$id")"
	assert_eq C "$(field "$id" host)"
	not_running "$task_pid" && fail "B's task ended while B was frozen"
	"$HOSTS_SH" thaw "$H" B || fail "thaw B"
	# B's worker sees it was given up: kills its task and leaves
	wait_for 60 not_running "$wb" || fail "B's worker did not leave"
	wait_for 30 not_running "$task_pid" || fail "B's stale task still runs"
	assert_eq 2 "$(field "$id" attempt)" "accepted attempt"
	assert_eq "ran on C attempt 2" "$(task_stdout "$id")" "output after B came back"
	assert_match "killing|revoked|lost" "$(cat "$T/worker-wb.log")" "B's log"
	on C spool fsck -q || fail "fsck: $(on C spool fsck)"
}

# A host whose processes all die at once (kill -9, as a node that
# crashes): its task runs again elsewhere after the lost-worker timeout.
test_hosts_crashed_worker_host() {
	hosts_up A B C
	on_spoold A
	on_worker B wb --cores 1
	id=$(on A spool submit -- sh -c \
	    'if [ $(hostname) = B ]; then echo $$ > "$1"; exec sleep 300; fi; echo "ran on $(hostname) attempt $SPOOL_ATTEMPT"' \
	    _ "$H/shared/pid.B") ||
	    fail "submit"
	wait_for 30 test -s "$H/shared/pid.B" || fail "task did not start on B"
	"$HOSTS_SH" crash "$H" B || fail "crash B"
	assert_eq "" "$("$HOSTS_SH" pids "$H" B)" "processes left on B"
	on_worker C wc --cores 1
	on C spool wait "$id" || fail "task failed after B crashed"
	assert_eq "ran on C attempt 2" "$(task_stdout "$id")"
	assert_match "worker wb-.* lost: no heartbeat" "$(cat "$T/spoold.log")"
	on C spool fsck -q || fail "fsck: $(on C spool fsck)"
}

# A host cut off the network: its mount fails, the worker cannot beat or
# commit.  Its task's result (finished meanwhile) is refused when it
# comes back; the task ran again on C.
test_hosts_cut_worker_host() {
	hosts_up A B C
	on_spoold A
	on_worker B wb --cores 1
	wb=$WORKER_PID
	# on B the task runs until told ($T/go.B: outside the shared
	# directory, so B sees it while cut off), however long B takes
	# to be cut: a task that ended on its own before the cut had its
	# result committed on B, attempt 1
	id=$(on A spool submit -- sh -c \
	    'echo "ran on $(hostname) attempt $SPOOL_ATTEMPT"; if [ $(hostname) = B ]; then echo $$ > "$1"; while [ ! -e "$2" ]; do sleep 0.1; done; fi' \
	    _ "$H/shared/pid.B" "$T/go.B") ||
	    fail "submit"
	wait_for 30 test -s "$H/shared/pid.B" || fail "task did not start on B"
	task_pid=$(cat "$H/shared/pid.B")
	"$HOSTS_SH" cut "$H" B || fail "cut B"
	on_worker C wc --cores 1
	wait_for 60 grep -q "worker wb-.* lost: no heartbeat" "$T/spoold.log" ||
	    fail "B not declared lost"
	on C spool wait "$id" || fail "task failed after B was lost"
	assert_eq "ran on C attempt 2" "$(task_stdout "$id")"
	# B's task ends now, cut off: its result cannot be committed
	kill -0 "$task_pid" 2>/dev/null || fail "B's task ended before it was told"
	touch "$T/go.B"
	wait_for 30 not_running "$task_pid" || fail "B's task still runs"
	"$HOSTS_SH" heal "$H" B || fail "heal B"
	wait_for 90 not_running "$wb" ||
	    fail "B's worker did not leave after the network came back"
	assert_eq 2 "$(field "$id" attempt)" "accepted attempt"
	assert_eq C "$(field "$id" host)" "host of the accepted attempt"
	assert_eq "ran on C attempt 2" "$(task_stdout "$id")" "output after B came back"
	on C spool fsck -q || fail "fsck: $(on C spool fsck)"
}

# Silly-renamed files (.nfsXXXX on NFS, .fuse_hiddenXXXX on sshfs) in
# the spool's directories and stale file handles: retried, never fatal.
test_hosts_leftovers_and_stale_handles() {
	hosts_up A B
	# stale handles: sshfs never returns ESTALE (it works by path), so
	# they are injected, several per process, each fewer than
	# FSOP_ESTALE_TRIES in a row; busy-nfs: leftovers cannot be unlinked
	CKSPOOL_FAULT="fail-at=3:ESTALE*3,fail-at=12:ESTALE*3,fail-at=30:ESTALE*3,fail-at=60:ESTALE*3,busy-nfs" \
	    on_spoold A
	CKSPOOL_FAULT="fail-at=2:ESTALE*3,fail-at=10:ESTALE*3,fail-at=25:ESTALE*3,busy-nfs" \
	    on_worker B wb --cores 2
	wid=$(worker_wid wb) || fail "no worker directory"
	# a real one: a file unlinked on B while B holds it open
	on B sh -c 'exec 9> "$1/x"; rm "$1/x"; exec sleep 300' _ \
	    "$SPOOL/workers/$wid/done" &
	track $!
	wait_for 20 sh -c "ls -A '$SPOOL/workers/$wid/done' | grep -q '^\.fuse_hidden'" ||
	    fail "no .fuse_hidden file: $(ls -A "$SPOOL/workers/$wid/done")"
	# and NFS's, wherever a host may leave them
	for d in incoming tmp gc control "workers/$wid/done" \
	    "workers/$wid/returned" "workers/$wid/cancel" "workers/$wid/inbox"; do
		echo x > "$SPOOL/$d/.nfs00000000deadbeef00000001" ||
		    fail "leftover in $d"
	done
	seq 1 20 | on B spool map -- sh -c 'echo r$1' _ {} > "$T/ids" ||
	    fail "map"
	on A spool wait < "$T/ids" || fail "tasks failed: $(spool status)"
	n=0
	while read -r id; do
		n=$((n + 1))
		assert_eq "r$n" "$(task_stdout "$id")" "output of task $id"
	done < "$T/ids"
	kill -0 "$SPOOLD_PID" || fail "spoold died"
	kill -0 "$WORKER_PID" || fail "worker died"
	assert_match "fault injection is on" "$(cat "$T/spoold.log")" "spoold's fault note"
	assert_no_match "fatal" "$(cat "$T/spoold.log" "$T/worker-wb.log")" "logs"
	# the leftovers are the host's business: still there, untouched
	[ -e "$SPOOL/incoming/.nfs00000000deadbeef00000001" ] ||
	    fail "a leftover in incoming/ was removed"
	# and the worker leaves normally
	kill -TERM "$WORKER_PID"
	wait_for 30 not_running "$WORKER_PID" || fail "worker did not stop"
	wait "$WORKER_PID" || fail "worker exited $?: $(tail -5 "$T/worker-wb.log")"
}

# spoold, its local worker and two readers (spool status in a loop, as
# on a login node, and cat) all on host A's one sshfs mount.  The
# heartbeat records are overwritten in place (beatfile.h): a rename onto a file the reader
# had just closed left it behind as .fuse_hiddenNNN (libfuse before
# 3.15), 16 in lock/spoold/ and 7 in the worker's directory in 100
# beats here before.  The reader must also never fail on a record it met
# half written.
test_hosts_beats_leave_no_hidden_files_on_one_mount() {
	hosts_up A
	on_spoold A --local 1 --local-cores 1
	wait_for 20 worker_registered local-1 || fail "no local worker"
	on A sh -c 'while :; do
		spool status > /dev/null 2> "$1.err" || { cat "$1.err" >> "$1"; }
	done' _ "$T/reader" &
	track $!
	on A sh -c 'while :; do cat "$1"/lock/spoold/beat "$1"/workers/*/status
	    > /dev/null 2>&1; done' _ "$SPOOL" &
	track $!
	b0=$(spoold_beat)
	id=$(on A spool submit -- sh -c 'echo during') || fail "submit"
	on A spool wait "$id" || fail "the task failed"
	assert_eq during "$(task_stdout "$id")" "output of the task"
	wait_for 60 beat_past $((b0 + 100)) ||
	    fail "spoold's beat did not pass $((b0 + 100)): $(spoold_beat)"
	wid=$(worker_wid local-1) || fail "no worker directory"
	worker_beat_past "$wid" 50 ||
	    fail "the worker beat $(worker_beat "$wid") times"
	hidden=$(find "$SPOOL/lock" "$SPOOL/workers" -name '.fuse_hidden*')
	[ -z "$hidden" ] || fail "left as .fuse_hidden: $(echo "$hidden" |
	    sed "s|$SPOOL/||; s|/[^/]*\$||" | sort | uniq -c | tr '\n' ' ')"
	[ ! -s "$T/reader" ] || fail "spool status failed: $(head -3 "$T/reader")"
	assert_no_match "warning|lost" "$(cat "$T/spoold.log")" "spoold's log"
}

# Requests dropped into control/ from the file server (a login node):
# spoold on A reads each through its sshfs mount and removes it.  Removed
# at once after its read, before the release of spoold's close had come
# through, a request stayed for good as control/.fuse_hiddenNNN (libfuse
# before 3.15): 6 of 40 in a census, 4, 5 and 7 of these 100 in three
# runs before.  Unknown requests and cancels of a task already final
# are the quick ones; the last request, "spool shutdown", is removed as
# spoold stops.
test_hosts_requests_leave_no_hidden_files() {
	hosts_up A
	on_spoold A --local 1 --local-cores 1
	id=$(spool submit -- true) || fail "submit"
	wait_for 20 finished "$id" || fail "task $id did not end"
	for i in $(seq 1 80); do
		echo "tick: $i" > "$T/tick"
		mv "$T/tick" "$SPOOL/control/tick.$i"
	done
	for i in $(seq 1 20); do
		spool cancel "$id" 2> /dev/null || fail "spool cancel"
	done
	wait_for 30 no_requests || fail "requests left: $(ls "$SPOOL/control" | wc -l)"
	# a hidden file not removed at its release is there for good
	wait_for 5 dir_empty "$SPOOL/control" ||
	    fail "left as .fuse_hidden: $(ls -A "$SPOOL/control" | wc -l) in control/"
	assert_eq 80 "$(grep -c 'unknown request; ignored' "$T/spoold.log")" \
	    "unknown requests said"
	on A spool shutdown > /dev/null 2>&1 || fail "spool shutdown"
	wait_for 10 not_running "$SPOOLD_PID" || fail "spoold did not stop"
	wait_for 5 dir_empty "$SPOOL/control" ||
	    fail "left in control/: $(ls -A "$SPOOL/control")"
	assert_eq done "$(field "$id" state)" "task $id state"
}

# mount_on HOST: spoolfs -f on HOST mounts the spool on $T/mnt (mnt),
# seen only there; waits until it is.  Sets fs, its pid.
mount_on() {
	mnt=$T/mnt
	mkdir -p "$mnt"
	"$HOSTS_SH" exec "$H" "$1" spoolfs "$SPOOL" "$mnt" -f >> "$T/spoolfs.log" 2>&1 &
	fs=$!
	track $fs
	wait_for 20 on "$1" awk -v m="$mnt" '$2 == m && $3 == "fuse.spoolfs" { f = 1 } END { exit !f }' /proc/mounts ||
	    fail "spoolfs did not mount on $1: $(tail -5 "$T/spoolfs.log")"
}

# "spool shutdown" on A unmounts a mount of the spool on B (DESIGN.md
# invariant 7), which learns it from state/shutdown through sshfs, with
# no inotify: within its 10 s check
test_hosts_spool_shutdown_unmounts_a_mount_on_another_host() {
	hosts_up A B
	on_spoold A
	mount_on B
	on A spool shutdown > "$T/out" 2>&1 || fail "shutdown: $(cat "$T/out")"
	wait_for 30 not_running $fs || fail "spoolfs on B stayed after spool shutdown on A"
	wait $fs || fail "spoolfs exited $?: $(tail -5 "$T/spoolfs.log")"
	assert_match "was shut down \(spool shutdown: state/shutdown, generation 1\); unmounting" \
	    "$(cat "$T/spoolfs.log")"
	on B awk -v m="$mnt" '$2 == m { f = 1 } END { exit !f }' /proc/mounts &&
	    fail "still mounted on B"
	return 0
}

# spoolfs on the login host A, the worker on B: a read of a result
# through the mount blocks and is released when B's worker has finished
# the task (seen by rescans of the sshfs mount, never by inotify)
test_hosts_spoolfs_sees_other_hosts_work() {
	hosts_up A B
	on_spoold A
	on_worker B wb --cores 1
	mount_on A
	# the mount is A's alone: the main namespace does not see it
	awk -v m="$mnt" '$2 == m { f = 1 } END { exit !f }' /proc/mounts &&
	    fail "A's mount leaked into the main namespace"
	on A sh -c "echo 'while [ ! -e $T/go ]; do sleep 0.05; done; hostname; echo from B' > '$mnt/submit/t'" ||
	    fail "submitting by writing on A failed"
	id=$(on A cat "$mnt/submit/t") || fail "no receipt"
	assert_match '^[0-9]+$' "$id" "receipt"
	# future.result(): blocks on A until B is done
	timeout 60 "$HOSTS_SH" exec "$H" A cat "$mnt/tasks/$id/result" > "$T/result" &
	reader=$!
	wait_for 20 state_is "$id" running || fail "task never ran on B"
	kill -0 $reader 2>/dev/null || fail "the read returned before the task ended"
	touch "$T/go"
	wait $reader || fail "blocking read of the result failed"
	assert_match "^host: B$" "$(cat "$T/result")" "result read through A's mount"
	assert_match "^reason: exit$" "$(cat "$T/result")"
	assert_eq "B
from B" "$(on A cat "$mnt/tasks/$id/stdout")" "stdout through the mount"
	assert_eq done "$(on A cat "$mnt/tasks/$id/state")"
	on A fusermount3 -u "$mnt" || fail "fusermount3 -u on A"
	wait_for 20 not_running $fs || fail "spoolfs did not exit"
}

# The notebook client on a login host C that shares the spool with
# spoold's host A and the worker's host B only through sshfs: a map of
# Python calls, futures as arguments, a failure, as_completed and a
# cancel (tests/python/cluster_client.py login-host), on the spool
# directory and then on a spoolfs mount made on C.  Every wait there
# ends on rescans.
test_hosts_python_client_on_a_login_host() {
	local py
	py=$(cd "$here/../python" && pwd)/cluster_client.py
	hosts_up A B C
	sed -i 's/^  lost-timeout: .*/  lost-timeout: 6s/' "$SPOOL/spool.yaml"
	on_spoold A
	on_worker B wb --cores 2
	on C python3 "$py" login-host "$SPOOL" B "$(command -v spool)" "$T" \
	    > "$T/direct.out" 2>&1 < /dev/null ||
	    fail "the client on the spool directory: $(tail -15 "$T/direct.out")"
	assert_eq 12 "$(grep -c '^ok: ' "$T/direct.out")" \
	    "checks passed on the spool directory"
	mount_on C
	on C python3 "$py" login-host "$mnt" B "$(command -v spool)" "$T" \
	    > "$T/mount.out" 2>&1 < /dev/null ||
	    fail "the client on a mount: $(tail -15 "$T/mount.out")"
	assert_eq 12 "$(grep -c '^ok: ' "$T/mount.out")" \
	    "checks passed on the mount"
	assert_no_match "warning|fatal" "$(cat "$T/spoold.log")" "spoold's log"
	on C fusermount3 -u "$mnt" || fail "fusermount3 -u on C"
	wait_for 20 not_running $fs || fail "spoolfs did not exit"
}

# A FUSE mount made outside the hosts before they came up (another
# test's spoolfs, running beside this one) ends when it is unmounted
# there: the namespaces of the hosts and of their sshd start as copies
# of the caller's, whose mounts are private, and a copy kept there held
# the mount's connection open, so spoolfs went on until the hosts went
# down (test_fuse_hammer's "spoolfs did not exit", seen when a test
# across hosts started during it).  hosts.sh detaches such copies.
test_hosts_a_host_keeps_no_copy_of_the_callers_fuse_mounts() {
	local own=$T/own mnt=$T/mnt
	env SPOOL="$own" spool init > /dev/null || fail "spool init $own"
	mkdir -p "$mnt"
	spoolfs "$own" "$mnt" -f >> "$T/spoolfs.log" 2>&1 &
	fs=$!
	track $fs
	wait_for 10 awk -v m="$mnt" '$2 == m { f = 1 } END { exit !f }' /proc/mounts ||
	    fail "spoolfs did not mount: $(tail -5 "$T/spoolfs.log")"
	hosts_up A B
	on A awk -v m="$mnt" '$2 == m { f = 1 } END { exit !f }' /proc/mounts &&
	    fail "host A has a copy of the caller's mount $mnt"
	sshd=$(cat "$H/.hosts/server/sshd.pid") || fail "no sshd pid file"
	awk -v m="$mnt" '$2 == m { f = 1 } END { exit !f }' "/proc/$sshd/mounts" &&
	    fail "the hosts' sshd has a copy of the caller's mount $mnt"
	fusermount3 -u "$mnt" || fail "fusermount3 -u $mnt"
	wait_for 10 not_running $fs ||
	    fail "spoolfs outlived its unmount while the hosts are up"
	wait $fs || fail "spoolfs exited $?: $(tail -5 "$T/spoolfs.log")"
	# the hosts still share the spool through their own mounts
	on B sh -c "echo from-B > '$H/shared/b'" || fail "writing on B"
	assert_eq from-B "$(on A cat "$H/shared/b")" "B's file read on A"
}
