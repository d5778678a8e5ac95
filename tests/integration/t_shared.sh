# t_shared.sh - spool permissions (spool-layout(5), SHARED SPOOLS): a
# spool is created private; a directory writable by others is refused
# unless spool.yaml says "daemon: shared: true"; then the members of the
# spool's group submit (spool submit, or a file dropped into incoming/)
# and each task runs as its submitter, never as someone else.
#
# The shared tests are real: run as root (as CI is), they create a group
# and a user, submit as that user with runuser, run spoold and a root
# ckworker, and remove the user and group at the end.
#
# They run beside other tests: each names its group and user after its
# own process, and useradd and groupadd wait for each other's lock on
# /etc/passwd (lckpwdf).

# a private spool: every directory 0700, every file 0600, all ours
test_spool_is_created_private() {
	local bad
	new_spool
	assert_eq 700 "$(stat -c %a "$SPOOL")" "spool mode"
	bad=$(find "$SPOOL" -mindepth 1 -maxdepth 1 -type d ! -perm 0700)
	assert_eq "" "$bad" "directories not 0700"
	assert_eq 600 "$(stat -c %a "$SPOOL/FORMAT")" "FORMAT mode"
	bad=$(find "$SPOOL" ! -user "$(id -u)")
	assert_eq "" "$bad" "files of another user"
	# what the programs create later is private too
	start_spoold --local 1
	id=$(spool submit -- echo hi)
	spool wait "$id" || fail "task $id"
	# (spool.yaml is the user's own file, written here with the umask)
	bad=$(find "$SPOOL" ! -name spool.yaml \( \( -type d -perm /077 \) -o \
	    \( -type f -perm /077 \) \))
	assert_eq "" "$bad" "made readable or writable by others"
}

# group- or world-writable directories: refused by every program,
# group-writable accepted once the spool is declared shared
test_writable_spool_is_refused_unless_shared() {
	local d
	new_spool
	for d in "" /incoming /tasks /ids; do
		chmod g+w "$SPOOL$d"
		if spool status >/dev/null 2>"$T/err"; then
			fail "opened a spool whose ${d:-root} is group-writable"
		fi
		assert_match "$SPOOL$d: writable by others \(set daemon: shared: true" \
		    "$(cat "$T/err")"
		if spoold >/dev/null 2>"$T/err"; then fail "spoold started"; fi
		assert_match "writable by others" "$(cat "$T/err")"
		chmod g-w "$SPOOL$d"
	done
	chmod g+w "$SPOOL/incoming"
	fast_config "  shared: true"
	spool status >/dev/null || fail "shared spool with a group-writable incoming/"
	# the config stays the owner's alone, shared or not: it says what
	# runs in every worker job
	chmod g+w "$SPOOL/spool.yaml"
	if spool status >/dev/null 2>"$T/err"; then
		fail "opened a spool with a group-writable spool.yaml"
	fi
	assert_match "spool.yaml: writable by others than the spool's owner" \
	    "$(cat "$T/err")"
	chmod g-w "$SPOOL/spool.yaml"
	chown nobody "$SPOOL/spool.yaml"
	if spool status >/dev/null 2>"$T/err"; then
		fail "opened a spool whose spool.yaml is nobody's"
	fi
	assert_match "spool.yaml: owned by another user" "$(cat "$T/err")"
	# judged by the file that was read, not by a second lookup of its
	# name, which may find another file by then (a group-writable
	# root: a member swaps one in for the read, the owner's back for
	# the look), or none: the look failing here stands for that
	if CKSPOOL_FAULT=count=all,stat-fails=spool.yaml:ENOENT \
	    spool status >/dev/null 2>"$T/err"; then
		fail "opened a spool whose spool.yaml is nobody's once the second look at it failed"
	fi
	assert_match "spool.yaml: owned by another user" "$(cat "$T/err")"
	chown "$(id -u)" "$SPOOL/spool.yaml"
	# writable by everyone: refused even when shared
	chmod o+w "$SPOOL/incoming"
	if spool submit -- true 2>"$T/err"; then fail "world-writable incoming/"; fi
	assert_match "incoming: writable by everyone" "$(cat "$T/err")"
}

# the submitter's account, made for this test and removed after it
shared_user_up() {
	[ "$(id -u)" -eq 0 ] ||
	    fail "needs root: a shared spool's worker runs as root"
	# named by this test's own process: tests run side by side
	SH_GROUP=cksg$BASHPID
	SH_USER=cksu$BASHPID
	groupadd "$SH_GROUP" || fail "groupadd $SH_GROUP"
	useradd -M -N -g "$SH_GROUP" -d /nonexistent -s /bin/sh "$SH_USER" ||
	    { groupdel "$SH_GROUP"; fail "useradd $SH_USER"; }
	trap shared_user_down EXIT
	trap 'exit 1' TERM
	SH_UID=$(id -u "$SH_USER")
}

shared_user_down() {
	pkill -KILL -u "$SH_USER" 2>/dev/null
	userdel "$SH_USER" 2>/dev/null || userdel -f "$SH_USER"
	groupdel "$SH_GROUP" 2>/dev/null
}

as_user() {
	runuser -u "$SH_USER" -- env PATH="$PATH" SPOOL="$SPOOL" "$@"
}

# The setup spool-layout(5) describes: root's spool, group the lab's,
# group-readable, the directories submitters write group-writable and
# setgid (new entries keep the group), incoming/, tmp/, control/,
# ids/ and its claim shards sticky.
shared_spool() {
	new_spool
	fast_config "  shared: true"
	chmod 711 "$T" "$(dirname "$T")"
	chgrp -R "$SH_GROUP" "$SPOOL"
	find "$SPOOL" -type d -exec chmod 2750 {} +
	chmod 0640 "$SPOOL/FORMAT" "$SPOOL/spool.yaml"
	chmod 3770 "$SPOOL/incoming" "$SPOOL/tmp" "$SPOOL/control"
	find "$SPOOL/ids" -type d -exec chmod 3770 {} +
}

test_shared_spool_runs_each_task_as_its_submitter() {
	local a b c d out mine roots
	shared_user_up
	shared_spool
	start_spoold --local 1
	# spool submit by the user: runs as the user, with the user's
	# groups, environment and home, in a work directory it owns
	a=$(as_user spool submit -- sh -c 'id -u; id -g; echo "$USER $HOME"; cd "$SPOOL_TASK_DIR" && touch mine && stat -c %U mine') ||
	    fail "the member could not submit"
	as_user spool wait "$a" || fail "task $a: $(as_user spool status "$a")"
	out=$(as_user cat "$SPOOL/tasks/0/$a/stdout") ||
	    fail "the member cannot read its output"
	assert_eq "$SH_UID
$(getent group "$SH_GROUP" | cut -d: -f3)
$SH_USER /nonexistent
$SH_USER" "$out" "who task $a ran as"
	assert_eq "$SH_UID" "$(spec_field "$a" uid)" "uid in the spec"
	# a file the user drops into incoming/: the file's owner runs it
	as_user sh -c "umask 022; printf '#!/bin/sh\nid -un\n' > '$SPOOL/incoming/dropped.sh'" ||
	    fail "the member could not drop a file"
	wait_for 30 test -e "$SPOOL/tasks/0/2/result" || fail "dropped file"
	assert_eq done "$(field 2 state)"
	assert_eq "$SH_USER" "$(task_stdout 2)" "who the dropped task ran as"
	# root's own task in root's shared spool runs as root
	b=$(spool submit -- id -un)
	spool wait "$b" || fail "root's task"
	assert_eq root "$(task_stdout "$b")"
	# a file others could have changed is refused (umask 002 makes one)
	as_user sh -c "umask 002; printf 'command: [id]\n' > '$SPOOL/incoming/gw.yaml'"
	wait_for 30 test -e "$SPOOL/rejected/gw.yaml.why" || fail "gw.yaml taken"
	assert_match "gw.yaml: writable by others than its owner" \
	    "$(cat "$SPOOL/rejected/gw.yaml.why")"
	# a uid with no account here: accepted (it owns the file) but never run
	printf 'command: [id]\n' > "$T/ghost.yaml"
	chown 54321 "$T/ghost.yaml"
	mv "$T/ghost.yaml" "$SPOOL/incoming/"
	wait_for 30 test -e "$SPOOL/tasks/0/$((b + 1))/result" || fail "ghost.yaml"
	c=$((b + 1))
	assert_eq failed "$(field "$c" state)"
	assert_eq spawn "$(field "$c" reason)"
	assert_match "submitted by uid 54321, which has no account on this host" \
	    "$(field "$c" message)"
	kill -0 "$SPOOLD_PID" || fail "spoold died"
	# a member cancels its own tasks, not root's, and cannot stop spoold
	mine=$(as_user spool submit -- sleep 60)
	roots=$(spool submit -- sleep 60)
	wait_for 20 state_is "$roots" running || fail "root's sleeper"
	as_user spool cancel "$roots" "$mine" || fail "the member's cancel"
	as_user spool wait "$mine"
	assert_eq cancelled "$(field "$mine" state)"
	wait_for 20 grep -q "uid $SH_UID may not cancel task $roots of uid 0" \
	    "$T/spoold.log" || fail "cancel of root's task not refused"
	state_is "$roots" running || fail "root's task: $(state_of "$roots")"
	as_user spool shutdown --no-wait >/dev/null 2>&1
	wait_for 20 grep -q "shutdown asked by uid $SH_UID, not by the spool's owner; ignored" \
	    "$T/spoold.log" || fail "the member's shutdown not refused"
	kill -0 "$SPOOLD_PID" || fail "a member stopped spoold"
	spool cancel "$roots"
	spool wait "$roots"
	# a bundle whose records claim another uid than its file's owner
	stop_spoold
	d=$(as_user spool submit -- id -un) || fail "submit"
	as_user sh -c "sed 's/^uid: $SH_UID\$/uid: 0/' '$SPOOL/incoming/$d.bundle' > '$SPOOL/tmp/forged' && mv '$SPOOL/tmp/forged' '$SPOOL/incoming/$d.bundle'" ||
	    fail "the member could not rewrite its bundle"
	grep -q '^uid: 0$' "$SPOOL/incoming/$d.bundle" || fail "forge"
	start_spoold --local 1
	as_user spool wait "$d"
	assert_eq rejected "$(field "$d" state)"
	assert_match "uid 0 in the record, but the file belongs to uid $SH_UID" \
	    "$(field "$d" message)"
	[ ! -e "$SPOOL/tasks/0/$d/stdout" ] || fail "the forged task ran"
	# the spool the users shared is consistent (tasks of several owners)
	stop_spoold
	spool fsck --settled > "$T/fsck" 2>&1 || fail "fsck: $(cat "$T/fsck")"
	as_user spool status > /dev/null || fail "the member's status"
}

# spool retry in a shared spool: a member submits its own failed task
# again, which runs as the member; nobody submits another's again, root
# neither, since the new task would run as the retrier (an owner who
# retries every failed task as root would run the members' commands as
# root), and nothing is submitted then.
test_shared_spool_retry_is_the_submitters() {
	local a b n t1 t2
	shared_user_up
	shared_spool
	start_spoold --local 1
	a=$(as_user spool submit -- sh -c 'id -u; exit 3') || fail "submit a"
	b=$(spool submit -- false) || fail "submit b"
	as_user spool wait "$a" "$b" > /dev/null 2>&1
	assert_eq failed "$(field "$a" state)" "a"
	assert_eq failed "$(field "$b" state)" "b"
	t1=$(spool submit -- true) || fail "submit"
	assert_refused 1 "spool: fatal: task $a was submitted by uid $SH_UID, not by this user (uid 0): only its submitter can submit it again (it would run as this user): nothing submitted again" \
	    "root's retry of the member's task" spool retry "$a"
	assert_refused 1 "spool: fatal: task $b was submitted by uid 0, not by this user (uid $SH_UID): only its submitter can submit it again (it would run as this user): nothing submitted again" \
	    "the member's retry of root's task" as_user spool retry "$a" "$b"
	t2=$(spool submit -- true) || fail "submit"
	assert_eq $((t1 + 1)) "$t2" "the ID after two refused retries"
	# its own: submitted again, as the member's task
	n=$(as_user spool retry "$a") || fail "the member's retry"
	as_user spool wait "$n" > /dev/null 2>&1
	assert_eq "$SH_UID" "$(spec_field "$n" uid)" "uid in the new spec"
	assert_eq "$SH_UID" "$(task_stdout "$n")" "who the new task ran as"
	assert_eq 3 "$(field "$n" exit)" "its exit status"
}

# Python function tasks in a shared spool (python/ckspool.py): a
# member's call runs as the member and writes its return.pickle as the
# member, whose client unpickles it; nobody else unpickles it (that runs
# the code a pickle names), root neither: root's client refuses it, and
# so does root's task given the member's future as an argument.
test_shared_spool_python_results_are_unpickled_only_by_their_owner() {
	local py lib m r
	shared_user_up
	shared_spool
	start_spoold --local 1
	py=/usr/bin/python3
	lib=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../python" && pwd)
	m=$(as_user "$py" -c "
import sys; sys.path.insert(0, '$lib')
import ckspool
f = ckspool.Client('$SPOOL', spool='$BIN/spool', python='$py').submit(pow, 2, 10)
print(f.id, f.result(timeout=60))") || fail "the member's call"
	set -- $m
	assert_eq 1024 "$2" "the member's result, unpickled by the member"
	m=$1
	assert_eq "$SH_UID" "$(stat -c %u "$SPOOL/tasks/0/$m/return.pickle")" \
	    "the owner of its return.pickle"
	r=$("$py" -c "
import os, sys; sys.path.insert(0, '$lib')
import ckspool
c = ckspool.Client('$SPOOL', spool='$BIN/spool', python='$py')
try:
    c.future($m).result()
except PermissionError as e:
    print('refused:', e)
g = c.submit(str, c.future($m))
try:
    g.result(timeout=60)
except PermissionError as e:
    print('task refused:', e, os.stat(g.path).st_uid == 0)
" 2>&1)
	assert_eq "refused: $SPOOL/tasks/0/$m/return.pickle: owned by uid $SH_UID, not by this user (0): not unpickled
task refused: task $m: its return.pickle is not this user's: not unpickled True" \
	    "$r" "root's client, and root's task, on the member's result"
}

# A shared spool run by a user (not root): its worker cannot become
# anyone else, so it runs only that user's tasks; a task of another uid,
# or of root in a spool root does not own, fails to start with the rule
# that refused it, and is never run as the worker's user.
test_shared_spool_of_a_user_runs_only_its_tasks() {
	local own other roots
	user_own_spool shared
	own=$(as_user spool submit -- id -un) || fail "the owner's submit"
	as_user spool wait "$own" || fail "the owner's own task"
	assert_eq "$SH_USER" "$(task_stdout "$own")"
	# dropped by root: a file of uid 54321, and one of root itself
	printf 'command: [id, -un]\n' > "$T/other.yaml"
	chown 54321 "$T/other.yaml"
	mv "$T/other.yaml" "$SPOOL/incoming/"
	wait_for 30 finished $((own + 1)) || fail "other.yaml"
	other=$((own + 1))
	printf 'command: [id, -un]\n' > "$SPOOL/incoming/root.yaml"
	wait_for 30 finished $((own + 2)) || fail "root.yaml"
	roots=$((own + 2))
	assert_eq 54321 "$(spec_field "$other" uid)"
	assert_eq failed "$(field "$other" state)"
	assert_eq spawn "$(field "$other" reason)"
	assert_match "submitted by uid 54321; this worker runs as uid $SH_UID and cannot run it as its submitter" \
	    "$(field "$other" message)"
	assert_eq failed "$(field "$roots" state)"
	assert_match "submitted by root into a shared spool that root does not own" \
	    "$(field "$roots" message)"
	assert_eq "" "$(task_stdout "$other")$(task_stdout "$roots")" \
	    "output of tasks that must not run"
}

# A task run as its submitter is forked by the root worker (identity.c).
# One whose memory limit is too small for it to start fails for its
# memory, alone: its process moves itself into its cgroup, the worker
# never enters it (the kernel's OOM killer, met in the task's cgroup,
# took the largest process there: the worker itself, so that every
# worker the task was placed on died of it).  The worker's next task,
# run as the same user, runs, in its cgroup and on its CPU, in the
# cpuset of that CPU (identity.c moves it there before it becomes the
# user), which it cannot widen.
test_shared_spool_task_too_small_for_its_memory_fails_alone() {
	local a b out
	shared_user_up
	shared_spool
	start_spoold
	start_worker tiny --cores 2 --memory-limit cgroup
	a=$(as_user spool submit --memory 100K -- true) || fail "submit"
	wait_for 20 finished "$a" ||
	    fail "task $a has no result; worker: $(tail -3 "$T/worker-tiny.log")"
	kill -0 "$WORKER_PID" 2>/dev/null ||
	    fail "the worker died of task $a: $(tail -3 "$T/spoold.log")"
	assert_eq failed "$(field "$a" state)" "task $a"
	assert_eq memory "$(field "$a" reason)" "task $a's reason"
	assert_eq 1 "$(field "$a" attempt)" "task $a's attempt"
	assert_match "^memory limit of 100K exceeded" "$(field "$a" message)"
	b=$(as_user spool submit --cores 1 -- sh -c 'id -un; taskset -p -c 0-$(( $(getconf _NPROCESSORS_CONF) - 1 )) $$ >/dev/null 2>&1; grep Cpus_allowed_list /proc/self/status | cut -f2; grep memory /proc/self/cgroup; grep cpuset /proc/self/cgroup') ||
	    fail "submit"
	as_user spool wait "$b" || fail "task $b: $(as_user spool status "$b")"
	out=$(task_stdout "$b")
	assert_eq "$SH_USER" "$(echo "$out" | sed -n 1p)" "who task $b ran as"
	assert_eq "$(field "$b" cpus)" "$(echo "$out" | sed -n 2p)" \
	    "task $b's CPU"
	assert_match "/ckworker\.$WORKER_PID\.[0-9]+/$b\.1\$" \
	    "$(echo "$out" | sed -n 3p)" "task $b's memory cgroup"
	assert_match ":cpuset:/(.*/)?ckworker\.$WORKER_PID\.[0-9]+/cpus\.[0-9]+\$" \
	    "$(echo "$out" | sed -n 4p)" "task $b's cpuset"
	assert_eq cpuset "$(field "$b" cpu_method)" "task $b's cpu_method"
	note "task $b: CPU $(field "$b" cpus), $(echo "$out" | sed -n 3p)"
	assert_eq 1 "$(field "$b" attempt)" "task $b's attempt"
}

# tmp/ of a shared spool is the members' too.  spoold's sweep moves the
# earlier attempts of a final.X directory (one spoold made and did not
# rename in) to attempts/, from where they go into their task's
# directory; a final.X a member made, with a result naming another's
# task, must not be taken for one: it is removed, nothing in it moved.
test_shared_spool_member_final_dir_in_tmp_is_not_rescued() {
	local a f
	shared_user_up
	shared_spool
	start_spoold --local 1
	a=$(spool submit -- echo root-output) || fail "submit"
	spool wait "$a" || fail "task $a"
	f=final.elsewhere.1.1.abcdef
	as_user sh -c "umask 022; cd '$SPOOL/tmp' && mkdir $f $f/attempt.1 &&
	    cp '$SPOOL/tasks/0/$a/result' $f/result &&
	    echo forged > $f/attempt.1/stdout && ln -s / $f/attempt.2 &&
	    touch -d '3 days ago' $f" || fail "the member's final.X"
	stop_spoold
	start_spoold --local 1	# its start sweeps tmp/
	wait_for 20 test ! -e "$SPOOL/tmp/$f" || fail "tmp/$f kept"
	assert_eq "" "$(ls -A "$SPOOL/attempts")" "attempts/"
	[ ! -e "$SPOOL/tasks/0/$a/attempt.1" ] && [ ! -L "$SPOOL/tasks/0/$a/attempt.2" ] ||
	    fail "the member's entries moved into task $a: $(ls -l "$SPOOL/tasks/0/$a")"
	assert_match "tmp/$f: owned by uid $SH_UID, not made by spoold" \
	    "$(cat "$T/spoold.log")" "spoold's log"
}

# A member's task owns its work directory while it runs, and the owner
# of a directory can rename what is in it: the task's stdout, which
# holds what the task wrote, must be the member's, not the root
# worker's, or moved into incoming/ it is a task file of root's (run as
# root), into control/ a request of root's (cancel anyone's task).
test_shared_spool_member_output_moved_is_still_the_members() {
	local a c roots
	shared_user_up
	shared_spool
	start_spoold --local 1
	roots=$(spool submit -- sleep 60) || fail "submit"
	a=$(as_user spool submit -- sh -c 'printf "command: [id, -un]\n" &&
	    mv "$SPOOL_TASK_DIR/stdout" "$SPOOL/incoming/moved.yaml"') ||
	    fail "submit"
	as_user spool wait "$a" || fail "task $a: $(as_user spool status -l "$a")"
	wait_for 30 finished $((a + 1)) || fail "moved.yaml not taken"
	assert_eq "$SH_UID" "$(spec_field $((a + 1)) uid)" "uid of moved.yaml"
	assert_eq "$SH_USER" "$(task_stdout $((a + 1)))" "who moved.yaml ran as"
	c=$(as_user spool submit -- sh -c "printf 'cancel: [$roots]\n' &&
	    mv \"\$SPOOL_TASK_DIR/stdout\" \"\$SPOOL/control/moved\"") ||
	    fail "submit"
	as_user spool wait "$c" || fail "task $c: $(as_user spool status -l "$c")"
	wait_for 20 grep -q "uid $SH_UID may not cancel task $roots of uid 0" \
	    "$T/spoold.log" || fail "the moved cancel was not the member's"
	state_is "$roots" running || fail "root's task: $(state_of "$roots")"
	spool cancel "$roots" >/dev/null 2>&1
	spool wait "$roots" >/dev/null 2>&1
	assert_eq cancelled "$(field "$roots" state)" "root's task"
	assert_eq "$SH_UID $SH_UID" \
	    "$(stat -c %u "$SPOOL/tasks/0/$a/stderr" "$SPOOL/tasks/0/$c/stderr" | xargs)" \
	    "owner of the stderr of tasks $a and $c"
}

# A task run as its submitter enters its cwd with the submitter's
# rights, and only so: one the user may not enter fails saying that its
# cwd did, and the worker's (root's) view of the path is never looked
# at, so what the answer says is only what the user could have seen.
test_shared_spool_cwd_is_judged_with_the_submitters_rights() {
	local a b
	shared_user_up
	shared_spool
	mkdir -m 700 "$T/private" "$T/private/there"
	start_spoold --local 1
	a=$(as_user spool submit --cwd "$T/private/there" -- true) || fail "submit"
	b=$(as_user spool submit --cwd "$T/private/absent" -- true) || fail "submit"
	as_user spool wait "$a" "$b" 2>/dev/null
	assert_eq "failed spawn" "$(field "$a" state) $(field "$a" reason)" "task $a"
	assert_eq "cwd: $T/private/there: Permission denied" \
	    "$(field "$a" message)" "task $a's message"
	assert_eq "cwd: $T/private/absent: Permission denied" \
	    "$(field "$b" message)" "task $b's message"
}

# The members read ids/, so another's claim (its count and nonce) is no
# secret: a bundle a member makes under someone else's claim must not
# take those IDs (its tasks accepted under them, the claimant's own
# bundle then refused as already submitted), nor, refused, give them
# "rejected" results.  Here spoold meets both bundles at its start, the
# member's first.
test_shared_spool_bundle_under_anothers_claim_is_refused() {
	local a b
	shared_user_up
	shared_spool
	start_spoold --local 1
	a=$(spool submit -- true) && spool wait "$a" || fail "task $a"
	stop_spoold
	b=$(spool submit -- echo roots-work) || fail "submit"
	as_user sh -c "umask 077; sed -e 's/^uid: 0\$/uid: $SH_UID/' \
	    -e 's/roots-work/members-work/' '$SPOOL/incoming/$b.bundle' \
	    > '$SPOOL/tmp/forged' && mv '$SPOOL/tmp/forged' '$SPOOL/incoming/$a.bundle'" ||
	    fail "the member's bundle"
	grep -q "^first: $b\$" "$SPOOL/incoming/$a.bundle" || fail "forge"
	start_spoold --local 1
	spool wait "$b" || fail "task $b: $(spool status -l "$b")"
	assert_eq roots-work "$(task_stdout "$b")" "task $b's output"
	assert_eq 0 "$(spec_field "$b" uid)" "task $b's uid"
	wait_for 20 test -e "$SPOOL/rejected/$a.bundle.why" ||
	    fail "the member's bundle not refused"
	assert_match "IDs $b\\+1 belong to another submission \\(claimed by uid 0; this file belongs to uid $SH_UID\\)" \
	    "$(cat "$SPOOL/rejected/$a.bundle.why")" "its reason"
}

# A claim shard (ids/N/) is every member's to claim in, and sticky: a
# member cannot remove another's claim to make one of its own under the
# same name (and with it take the other's IDs).
test_shared_spool_member_cannot_remove_anothers_claim() {
	local a b
	shared_user_up
	shared_spool
	a=$(spool submit -- true) || fail "submit"
	as_user rm -f "$SPOOL/ids/0/$a" 2>/dev/null
	[ -L "$SPOOL/ids/0/$a" ] || fail "the member removed root's claim $a"
	assert_eq 3770 "$(stat -c %a "$SPOOL/ids/0")" "mode of ids/0"
	assert_eq 0 "$(stat -c %u "$SPOOL/ids/0/$a")" "owner of claim $a"
	b=$(as_user spool submit -- true) || fail "the member's submit"
	assert_eq "$SH_UID" "$(stat -c %u "$SPOOL/ids/0/$b")" "owner of claim $b"
}

# A task run as its submitter writes in its work directory while it
# runs; once it has ended the worker takes the directory back before
# it writes the result there, so the submitter cannot replace, remove
# or rename what spoold and the worker put into tasks/SHARD/ID (a
# forged result or spec, or a FIFO that "spool wait" would meet).
test_shared_spool_task_directory_is_taken_back_when_it_ends() {
	local a d
	shared_user_up
	shared_spool
	start_spoold --local 1
	a=$(as_user spool submit -- sh -c 'touch "$SPOOL_TASK_DIR/mine"') ||
	    fail "submit"
	as_user spool wait "$a" || fail "task $a"
	d=$SPOOL/tasks/0/$a
	assert_eq "0 $SH_UID" "$(stat -c %u "$d" "$d/mine" | xargs)" \
	    "owners of task $a's directory and of its own file"
	as_user rm -f "$d/result" "$d/spec" 2>/dev/null
	as_user mkfifo "$d/x" 2>/dev/null
	[ -f "$d/result" ] && [ -f "$d/spec" ] && [ ! -e "$d/x" ] ||
	    fail "the member changed task $a's directory: $(ls -l "$d")"
	assert_eq done "$(field "$a" state)"
}

# "spool purge" in a shared spool is the owner's and root's: the shards
# are theirs, a member could rename nothing out of them, and is refused
# with a reason (exit 1), its task kept; root's purge removes the
# member's task, with the files and directories the task made there.
test_shared_spool_purge_is_the_owners() {
	local a out
	shared_user_up
	shared_spool
	start_spoold --local 1
	a=$(as_user spool submit -- sh -c 'mkdir "$SPOOL_TASK_DIR/sub" &&
	    touch "$SPOOL_TASK_DIR/sub/mine"') || fail "submit"
	as_user spool wait "$a" || fail "task $a"
	wait_for 10 dir_empty "$SPOOL/specs" || fail "bundle not retired"
	out=$(as_user spool purge 2>&1)
	assert_eq 1 $? "exit status of a member's purge"
	assert_match "only the spool's owner \(uid 0\) or root may purge .*; uid $SH_UID may not" "$out"
	[ -e "$SPOOL/tasks/0/$a/sub/mine" ] || fail "the member's purge removed task $a"
	out=$(spool purge -v) || fail "purge: $out"
	assert_match "^$a
removed 1 task;" "$out"
	[ ! -e "$SPOOL/tasks/0/$a" ] || fail "task $a is still there"
	dir_empty "$SPOOL/gc" || fail "left in gc/: $(ls "$SPOOL/gc")"
}

# ids/ of a shared spool is sticky (spool-layout(5)): a member cannot
# move another's claim shard away (to make a shard of its own in its
# place) nor replace another's hint; so spoold moves the hint past the
# claims it accepts, and a member's claim walks from there, not from
# the first hint someone else left.
test_shared_spool_ids_are_sticky_and_spoold_moves_the_hint() {
	local a b c
	shared_user_up
	shared_spool
	spool submit -- true > /dev/null || fail "submit"
	a=$(spool submit -- true) || fail "submit"	# (the first makes no hint)
	as_user mv "$SPOOL/ids/0" "$SPOOL/ids/0x" 2>/dev/null
	as_user rm -f "$SPOOL/ids/hint" 2>/dev/null
	[ -d "$SPOOL/ids/0" ] && [ ! -e "$SPOOL/ids/0x" ] ||
	    fail "the member moved root's shard: $(ls -l "$SPOOL/ids")"
	assert_eq "$a" "$(readlink "$SPOOL/ids/hint")" "ids/hint"
	start_spoold --local 1
	b=$(as_user spool submit -- true) || fail "submit"
	c=$(as_user spool submit -- true) || fail "submit"
	as_user spool wait "$b" "$c" || fail "tasks $b $c"
	wait_for 20 output_is "$c" readlink "$SPOOL/ids/hint" ||
	    fail "ids/hint is $(readlink "$SPOOL/ids/hint"), not $c"
}

# Whoever makes a claim shard (ids/N/) owns it, and so may remove the
# claims in it: spoold makes the shard the next claim goes into as it
# accepts a bundle, so that a member's claim does not make it.  Here a
# claim that was never submitted (a crashed claimer's) ends the chain
# just before shard 1, root's next bundle ends it at 65536, and the
# member's claim, the first in shard 1, finds the shard spoold made.
test_shared_spool_spoold_makes_the_next_claim_shard() {
	local a b
	shared_user_up
	shared_spool
	start_spoold --local 1
	a=$(spool submit -- true) && spool wait "$a" || fail "task $a"
	ln -s "65533 crashed.claimer" "$SPOOL/ids/0/2"	# IDs 2-65534
	a=$(spool submit -- true) || fail "submit"
	assert_eq 65535 "$a" "root's ID"
	spool wait "$a" || fail "task $a"
	b=$(as_user spool submit -- true) || fail "the member's submit"
	assert_eq 65536 "$b" "the member's ID"
	as_user spool wait "$b" || fail "task $b"
	assert_eq "0 3770" "$(stat -c '%u %a' "$SPOOL/ids/1")" \
	    "owner and mode of ids/1"
}

# ... and at its start: in a new shared spool the first claim, a
# member's, finds ids/0 made by spoold.
test_shared_spool_first_claim_shard_is_spoolds() {
	local b
	shared_user_up
	shared_spool
	start_spoold --local 1
	b=$(as_user spool submit -- true) || fail "the member's submit"
	as_user spool wait "$b" || fail "task $b"
	assert_eq "0 3770" "$(stat -c '%u %a' "$SPOOL/ids/0")" \
	    "owner and mode of ids/0"
}

# spool fsck checks what keeps a member from taking another's claims in
# a shared spool (spool-layout(5), SHARED SPOOLS): ids/ and each claim
# shard the group may write are sticky, and each shard is the spool
# owner's (or root's).  ids/ and a shard of mode 2770 (a spool from
# before shards were made sticky, or one set up by hand) and a shard a
# member owns are each a problem that names the command that mends it;
# mended so, the spool is clean again.
test_shared_spool_fsck_reports_claim_dirs_a_member_could_change() {
	local rc=0 out
	shared_user_up
	shared_spool
	spool submit -- true > /dev/null || fail "submit"
	spool fsck -q > "$T/fsck" 2>&1 || fail "fsck: $(cat "$T/fsck")"
	chmod 2770 "$SPOOL/ids" "$SPOOL/ids/0"
	mkdir "$SPOOL/ids/1"
	chown "$SH_USER" "$SPOOL/ids/1"
	chmod 3770 "$SPOOL/ids/1"
	spool fsck -q > "$T/fsck" 2>&1 || rc=$?
	out=$(cat "$T/fsck")
	assert_eq 1 "$rc" "fsck's exit status ($out)"
	assert_match "^fsck: ids: group-writable but not sticky: .*\(chmod 3770 $SPOOL/ids\)\$" \
	    "$out" "fsck's output"
	assert_match "^fsck: ids/0: group-writable but not sticky: .*\(chmod 3770 $SPOOL/ids/0\)\$" \
	    "$out" "fsck's output"
	assert_match "^fsck: ids/1: owned by uid $SH_UID, .*\(chown 0 $SPOOL/ids/1\)\$" \
	    "$out" "fsck's output"
	assert_match "; 3 problems\$" "$out" "fsck's summary"
	chmod 3770 "$SPOOL/ids" "$SPOOL/ids/0"
	chown 0 "$SPOOL/ids/1"
	spool fsck -q > "$T/fsck" 2>&1 || fail "fsck once mended: $(cat "$T/fsck")"
}

# A claim shard the group cannot write (2750: the set-up's "find ...
# -exec chmod 2750" run again over a spool in use, not followed by the
# chmod 3770 of ids/ and its shards) keeps every member from claiming
# IDs in it, so from submitting at all; spool fsck said nothing of it.
# It is a problem that names the chmod that mends it.
test_shared_spool_fsck_reports_a_claim_shard_the_group_cannot_write() {
	local rc=0 out
	shared_user_up
	shared_spool
	spool submit -- true > /dev/null || fail "submit"
	as_user spool submit -- true > /dev/null || fail "a member's submit"
	find "$SPOOL" -type d -exec chmod 2750 {} +
	chmod 3770 "$SPOOL/incoming" "$SPOOL/tmp" "$SPOOL/control" "$SPOOL/ids"
	if as_user spool submit -- true > "$T/out" 2>&1; then
		fail "a member claimed IDs in a shard of mode 2750: $(cat "$T/out")"
	fi
	spool fsck -q > "$T/fsck" 2>&1 || rc=$?
	out=$(cat "$T/fsck")
	assert_eq 1 "$rc" "fsck's exit status ($out)"
	assert_match "^fsck: ids/0: not writable by the group: members cannot claim IDs in it \(chmod 3770 $SPOOL/ids/0\)\$" \
	    "$out" "fsck's output"
	assert_match "; 1 problem\$" "$out" "fsck's summary"
	chmod 3770 "$SPOOL/ids/0"
	spool fsck -q > "$T/fsck" 2>&1 || fail "fsck once mended: $(cat "$T/fsck")"
	as_user spool submit -- true > /dev/null ||
	    fail "a member's submit once mended"
}

# A member's claim refused in a shard the group cannot write (2750) is
# reported with the claim it could not make, in the shard that refused
# it: it named ids/ itself ("claim 1 task IDs: SPOOL/ids: Permission
# denied"), whose mode was right, and sent the reader to the wrong
# directory.
test_shared_spool_refused_claim_names_the_claim_that_failed() {
	shared_user_up
	shared_spool
	spool submit -- true > /dev/null || fail "submit"
	chmod 2750 "$SPOOL/ids/0"
	if as_user spool submit -- true > "$T/out" 2>&1; then
		fail "a member claimed IDs in a shard of mode 2750: $(cat "$T/out")"
	fi
	assert_eq "spool: fatal: claim 1 task IDs: $SPOOL/ids/0/2: Permission denied" \
	    "$(cat "$T/out")" "the member's error"
	chmod 3770 "$SPOOL/ids/0"
	as_user spool submit -- true > /dev/null ||
	    fail "a member's submit once mended"
}

# A task that runs as its submitter has its program looked up in PATH by
# its own process, once that is the submitter: a program in a directory
# the submitter may not search is not found, word for word as one that
# does not exist, so that the answer tells the member nothing it could
# not see itself (the root worker found it, and the exec as the member
# failed: "Permission denied").  A program the member may run, later in
# PATH, runs; one it finds and cannot exec says where it found it;
# root's own task still finds the hidden one.
test_shared_spool_program_is_looked_up_with_the_submitters_rights() {
	local a b c d r p
	shared_user_up
	shared_spool
	mkdir -m 700 "$T/private"
	mkdir -m 755 "$T/public"
	printf '#!/bin/sh\necho hidden\n' > "$T/private/hidden"
	printf '#!/bin/sh\nid -un\n' > "$T/public/visible"
	printf 'not a program\n' > "$T/public/garbage"
	chmod 755 "$T/private/hidden" "$T/public/visible" "$T/public/garbage"
	p=PATH=$T/private:$T/public:/usr/bin:/bin
	start_spoold --local 1
	a=$(as_user spool submit --env "$p" -- hidden) || fail "submit"
	b=$(as_user spool submit --env "$p" -- absent) || fail "submit"
	c=$(as_user spool submit --env "$p" -- visible) || fail "submit"
	d=$(as_user spool submit --env "$p" -- garbage) || fail "submit"
	r=$(spool submit --env "$p" -- hidden) || fail "submit"
	as_user spool wait "$a" "$b" "$c" "$d" > /dev/null 2>&1
	spool wait "$r" > /dev/null || fail "root's task $r: $(spool status -l "$r")"
	assert_eq "failed spawn" "$(field "$a" state) $(field "$a" reason)" "task $a"
	assert_eq "command not found: hidden" "$(field "$a" message)" \
	    "task $a's message"
	assert_eq "command not found: absent" "$(field "$b" message)" \
	    "task $b's message"
	assert_eq "$SH_USER" "$(task_stdout "$c")" "task $c's output"
	assert_eq "cannot start $T/public/garbage: Exec format error" \
	    "$(field "$d" message)" "task $d's message"
	assert_eq hidden "$(task_stdout "$r")" "root's task $r"
}

# user_own_spool [shared]: a spool of the test's user (shared_user_up),
# spoold and its local worker run as that user: what a worker that is
# not root meets.  Private (700), or with "shared" one of the user's
# group (2770, daemon: shared: true).
user_own_spool() {
	local shared=
	shared_user_up
	chmod 711 "$T" "$(dirname "$T")"
	SPOOL=$T/spool
	export SPOOL
	mkdir "$SPOOL" || fail "mkdir $SPOOL"
	if [ "${1:-}" = shared ]; then
		chown "$SH_USER:$SH_GROUP" "$SPOOL" && chmod 2770 "$SPOOL"
		shared="  shared: true"
	else
		chown "$SH_USER" "$SPOOL" && chmod 700 "$SPOOL"
	fi
	as_user spool init >/dev/null || fail "the user's spool init"
	as_user sh -c "umask 022; cat > '$SPOOL/spool.yaml'" <<YAML
daemon:
  heartbeat: 200ms
  lost-timeout: 2s
  rescan: 200ms
  settle: 1s
$shared
YAML
	[ -z "$shared" ] || chmod 2770 "$SPOOL/incoming"
	runuser -u "$SH_USER" -- env PATH="$PATH" SPOOL="$SPOOL" \
	    spoold --local 1 >> "$T/spoold.log" 2>&1 &
	SPOOLD_PID=$!
	track $SPOOLD_PID
	wait_for 10 test -s "$SPOOL/lock/spoold/owner" ||
	    fail "spoold did not start: $(tail -5 "$T/spoold.log")"
}

# A user's own spool (private, spoold and its worker run as the user):
# a task that takes its owner's rights from its directory (chmod 000
# "$SPOOL_TASK_DIR", or chmod -R a-w on the outputs it keeps in its
# cwd) still ends with its own outcome.  Its result could not be
# written there: the worker, not root, tried again for ever, the task
# stayed running and "spool wait" never returned.  The worker makes the
# directory 0700 again (its own); what is in it is kept.
test_private_spool_task_that_takes_its_own_rights_from_its_directory_ends() {
	local a b st
	user_own_spool
	a=$(as_user spool submit -- sh -c 'echo kept; chmod 000 "$SPOOL_TASK_DIR"') ||
	    fail "submit a"
	b=$(as_user spool submit -- sh -c 'cd "$SPOOL_TASK_DIR" && echo kept && chmod -R a-w . && exit 4') ||
	    fail "submit b"
	as_user spool wait --timeout 20 "$a"
	st=$?
	assert_eq 0 "$st" "spool wait status of task $a"
	as_user spool wait --timeout 20 "$b"
	st=$?
	assert_eq 4 "$st" "spool wait status of task $b"
	assert_eq done "$(field "$a" state)" "state of task $a"
	assert_eq 4 "$(field "$b" exit)" "exit of task $b"
	assert_eq "kept kept" "$(task_stdout "$a") $(task_stdout "$b")" \
	    "the tasks' outputs"
	assert_eq "700 700" "$(stat -c %a "$SPOOL/tasks/0/$a" "$SPOOL/tasks/0/$b" | xargs)" \
	    "modes of the tasks' directories"
	assert_match "task $a attempt 1 took its own rights from its directory \\(mode 000\\): workers/local-1-[0-9a-f]+/work/$a\\.1 made 0700 again for its result" \
	    "$(cat "$SPOOL"/log/local-1.log)" "the worker's log"
	assert_match "task $b attempt 1 took its own rights from its directory \\(mode 500\\)" \
	    "$(cat "$SPOOL"/log/local-1.log)" "the worker's log"
}

# The same spool: a task that leaves a read-only tree (chmod -R a-w on
# its outputs, a Go module cache) under a name of ckspool's in its
# directory, result or spec, still ends.  Such a tree is removed for
# the record (spool-layout(5)), but one whose directories its owner may
# not write could not be emptied by a worker or spoold that is not root
# (rm -rf fails on it too): the result was never written and the task
# stayed running; the spec never moved in.  Their mode is given back
# to be emptied.
test_private_spool_read_only_tree_under_a_name_of_ckspools_is_removed() {
	local a b st
	user_own_spool
	a=$(as_user spool submit -- sh -c 'cd "$SPOOL_TASK_DIR" && mkdir -p result/sub &&
	    echo x > result/sub/f && chmod -R a-w result && echo a') || fail "submit a"
	b=$(as_user spool submit -- sh -c 'cd "$SPOOL_TASK_DIR" && mkdir -p spec/sub &&
	    echo x > spec/sub/f && chmod -R a-w spec && echo b') || fail "submit b"
	as_user spool wait --timeout 20 "$a" "$b"
	st=$?
	assert_eq 0 "$st" "spool wait status: $(as_user spool status "$a" "$b")"
	assert_eq "a b" "$(task_stdout "$a") $(task_stdout "$b")" "the tasks' outputs"
	[ -f "$SPOOL/tasks/0/$a/result" ] && [ -f "$SPOOL/tasks/0/$b/spec" ] ||
	    fail "result or spec is not a file: $(ls -lR "$SPOOL/tasks/0")"
	assert_eq done "$(field "$a" state)" "state of task $a"
	assert_eq done "$(field "$b" state)" "state of task $b"
}
