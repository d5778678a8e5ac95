# t_purge.sh - removing final tasks: "spool purge" (spool(1)), and a
# shard removed under a running spoold (spool-layout(5), tasks/).

# A shard may go while spoold runs (emptied by a purge, or removed by
# hand as spool-layout(5) allows): spoold, which makes a shard once and
# remembered it made, failed the rename of every later task of that
# shard into it (ENOENT, at every rescan), and the task never ended.
test_shard_removed_under_spoold_is_made_again() {
	local a b
	new_spool
	start_spoold --local 1
	a=$(spool submit -- true) || fail "submit"
	spool wait "$a" || fail "task $a"
	rm -r "$SPOOL/tasks/0"
	b=$(spool submit -- echo again) || fail "submit"
	spool wait --timeout 20 "$b" ||
	    fail "task $b did not end: $(grep -m1 'rename' "$T/spoold.log")"
	assert_eq again "$(task_stdout "$b")"
}
