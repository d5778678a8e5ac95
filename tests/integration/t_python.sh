# t_python.sh - the notebook client (python/ckspool.py): its unittest
# suite (tests/python/test_ckspool.py) against real spoold --local and
# spoolfs processes, on a spool directory and on a mount.  The suite
# makes its own spools under $T (as TMPDIR); an EXIT trap lazily
# unmounts whatever spoolfs mount it may have left there.

py_cleanup() {
	local m
	for m in $(awk -v t="$T" 'index($2, t) == 1 && $3 == "fuse.spoolfs" \
	    { print $2 }' /proc/mounts); do
		fusermount3 -u -z "$m"
	done
	return 0
}

py_suite() {	# CLASS
	local dir
	dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../python" && pwd)
	trap py_cleanup EXIT
	if ! (cd "$dir" && TMPDIR=$T exec python3 -m unittest -v \
	    "test_ckspool.$1") > "$T/unittest.log" 2>&1 < /dev/null; then
		tail -60 "$T/unittest.log" >&2
		fail "python client tests ($1) failed"
	fi
	grep -q "^OK" "$T/unittest.log" || fail "no OK: $(tail -5 "$T/unittest.log")"
	note "$(grep -E '^Ran [0-9]+ tests' "$T/unittest.log")"
}

test_python_client_on_a_spool_directory() {
	py_suite DirectTests
}

test_python_client_on_a_mount() {
	py_suite MountTests
}

test_python_client_says_a_mount_shut_down() {
	py_suite ShutdownTests
}

test_python_client_worker_states() {
	py_suite WorkerStateTests
}

test_python_client_scales_and_shuts_the_cluster_down() {
	py_suite ClusterControlTests
}

test_python_client_counts_workers_as_spool_wait_workers() {
	py_suite WorkerCountTests
}

test_python_client_waits_per_change_not_per_future() {
	py_suite WaitCostTests
}

test_python_client_map_refused_after_a_chunk() {
	py_suite MapRefusalTests
}

test_python_client_futures_as_concurrent_futures() {
	py_suite FutureSemanticsTests
}

test_python_client_refusal_reads_as_the_refusal() {
	py_suite RefusalTests
}

test_python_client_interrupted_submit_through_a_mount() {
	py_suite MountSubmitTests
}

test_python_client_cancel_through_a_mount_before_the_task_is_seen() {
	py_suite MountCancelTests
}

test_python_client_looks_again_at_unfit_tasks_not_yet_accepted() {
	py_suite UnfitLookTests
}
