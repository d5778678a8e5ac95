/*
 * test_taskview.c - taskview.c: the state of every task, read from the
 * files as a task moves through them (incoming bundle, specs/,
 * inbox/, running/, done/, tasks/SHARD/ID), built here by hand with
 * the library's own encoders; the later stage wins, the highest
 * attempt wins, a stale done/ entry behind a final task does not count;
 * waiting while a dependency is not final; final states read from the
 * result (done, failed, cancelled, rejected); claimed IDs not seen
 * anywhere are unknown and not listed, unclaimed ones do not exist;
 * records from the bundle, the assignment and the final spec; files
 * that are not bundles are ignored; a task is taken for gone (purged)
 * only when it is nowhere on disk; and a refresh of an unchanged
 * spool lists no directory (only stats).
 */
#include "unit.h"
#include "bundle.h"
#include "fsop.h"
#include "ids.h"
#include "result.h"
#include "submit.h"
#include "taskview.h"
#include "wdir.h"

#define WID "w1-abc123"

static void
submit_n(struct spool *sp, size_t n, uint64_t dep, uint64_t *first)
{
	struct task_spec t[8];
	char why[256];
	size_t i;

	assert_true(n <= NELEM(t));
	for (i = 0; i < n; i++) {
		task_init(&t[i]);
		t[i].argv = strv_push(NULL, "true");
		if (dep) {
			t[i].after = xmalloc(sizeof *t[i].after);
			t[i].after[0] = dep;
			t[i].nafter = 1;
		}
	}
	TCHECK(submit_tasks(sp, t, n, 0, why, sizeof why) == 0, "%s", why);
	*first = t[0].id;
	for (i = 0; i < n; i++)
		task_free(&t[i]);
}

static void
path_write(const char *root, const char *rel, const char *data)
{
	char *p = xasprintf("%s/%s", root, rel);

	TCHECK(unit_write_file(p, data, strlen(data)) == 0, "write %s: %s", p,
	    strerror(errno));
	free(p);
}

static void
path_mkdir(const char *root, const char *rel)
{
	char *p = xasprintf("%s/%s", root, rel);

	TCHECK(mkdir(p, 0700) == 0 || errno == EEXIST, "mkdir %s: %s", p,
	    strerror(errno));
	free(p);
}

static void
path_rename(const char *root, const char *from, const char *to)
{
	char *a = xasprintf("%s/%s", root, from), *b = xasprintf("%s/%s", root,
	    to);

	TCHECK(rename(a, b) == 0, "rename %s %s: %s", a, b, strerror(errno));
	free(a);
	free(b);
}

static void
path_unlink(const char *root, const char *rel)
{
	char *p = xasprintf("%s/%s", root, rel);

	TCHECK(unlink(p) == 0, "unlink %s: %s", p, strerror(errno));
	free(p);
}

/* An assignment of id, attempt att, into workers/WID/SUB/. */
static void
assign(struct unit_spool *u, uint64_t id, uint32_t att, const char *sub)
{
	struct task_spec t;
	struct buf b = BUF_INIT;
	char rel[256];

	task_init(&t);
	t.id = id;
	t.argv = strv_push(NULL, "true");
	assign_encode(&b, &t, att, WID);
	snprintf(rel, sizeof rel, "workers/%s/%s/%llu.%u", WID, sub,
	    (unsigned long long)id, att);
	path_write(u->path, rel, b.p);
	buf_free(&b);
	task_free(&t);
}

/* The final directory tasks/SHARD/ID with a result in state st. */
static void
finish(struct unit_spool *u, uint64_t id, enum result_state st)
{
	struct result r;
	struct buf b = BUF_INIT;
	char rel[128];

	result_init(&r);
	r.id = id;
	r.attempt = 1;
	r.state = st;
	r.reason = st == RS_DONE ? RR_EXIT : st == RS_CANCELLED ?
	    RR_CANCELLED : st == RS_REJECTED ? RR_REJECTED : RR_SIGNAL;
	result_encode(&b, &r);
	snprintf(rel, sizeof rel, "tasks/%llu", (unsigned long long)(id / 1000));
	path_mkdir(u->path, rel);
	snprintf(rel, sizeof rel, "tasks/%llu/%llu", (unsigned long long)
	    (id / 1000), (unsigned long long)id);
	path_mkdir(u->path, rel);
	strcat(rel, "/result");
	path_write(u->path, rel, b.p);
	rel[strlen(rel) - 6] = 0;
	strcat(rel, "spec");
	path_write(u->path, rel, "id: 1\nfinal: yes\n");
	buf_free(&b);
}

static enum tv_state
state(struct taskview *tv, uint64_t id)
{
	struct tv_task t;

	if (taskview_get(tv, id, &t) <= 0)
		return TV_NSTATES;	/* no such ID */
	return t.state;
}

static void
expect(struct taskview *tv, uint64_t id, enum tv_state want)
{
	enum tv_state got = state(tv, id);

	TCHECK(got == want, "task %llu: %s, expected %s",
	    (unsigned long long)id, got == TV_NSTATES ? "no such task" :
	    tv_state_name[got], want == TV_NSTATES ? "no such task" :
	    tv_state_name[want]);
}

static void
expect_list(struct taskview *tv, enum tv_state st, const uint64_t *want,
    size_t n)
{
	uint64_t *ids;
	size_t got = taskview_list(tv, st, &ids), i;

	TCHECK(got == n, "%s: %zu tasks listed, expected %zu",
	    st == TV_NSTATES ? "all" : tv_state_name[st], got, n);
	for (i = 0; i < n; i++)
		TCHECK(ids[i] == want[i], "%s: item %zu is %llu, expected %llu",
		    st == TV_NSTATES ? "all" : tv_state_name[st], i,
		    (unsigned long long)ids[i], (unsigned long long)want[i]);
	free(ids);
}

static void
test_lifecycle(void **state_)
{
	struct unit_spool *u = *state_;
	struct taskview *tv = taskview_new(&u->sp, 0);
	struct buf spec = BUF_INIT;
	struct tv_task t;
	uint64_t first;
	char from[64], to[64];

	assert_int_equal(taskview_refresh(tv), 0);
	expect(tv, 1, TV_NSTATES);

	/* 1, 2, then 3, which depends on 1 */
	submit_n(&u->sp, 2, 0, &first);
	assert_int_equal(first, 1);
	submit_n(&u->sp, 1, 1, &first);
	assert_int_equal(first, 3);
	assert_int_equal(taskview_refresh(tv), 1);
	assert_int_equal(taskview_end(tv), 4);
	expect(tv, 1, TV_SUBMITTED);
	expect(tv, 3, TV_SUBMITTED);
	expect(tv, 4, TV_NSTATES);
	expect_list(tv, TV_SUBMITTED, (uint64_t[]){ 1, 2, 3 }, 3);
	assert_int_equal(taskview_spec(tv, 2, &spec), 0);
	assert_contains(spec.p, "id: 2\n");
	assert_contains(spec.p, "argv: [\"true\"]");

	/* accepted: specs/FIRST (spoold's name for a bundle) */
	path_rename(u->path, "incoming/1.bundle", "specs/1");
	path_rename(u->path, "incoming/3.bundle", "specs/3");
	assert_int_equal(taskview_refresh(tv), 1);
	expect(tv, 1, TV_QUEUED);
	expect(tv, 2, TV_QUEUED);
	expect(tv, 3, TV_WAITING);
	expect_list(tv, TV_WAITING, (uint64_t[]){ 3 }, 1);

	/* 1 placed, running, finishing on the worker */
	path_mkdir(u->path, "workers/" WID);
	path_mkdir(u->path, "workers/" WID "/inbox");
	path_mkdir(u->path, "workers/" WID "/running");
	path_mkdir(u->path, "workers/" WID "/done");
	assign(u, 1, 1, "inbox");
	assert_int_equal(taskview_refresh(tv), 1);
	assert_int_equal(taskview_get(tv, 1, &t), 1);
	assert_int_equal(t.state, TV_PLACED);
	assert_int_equal(t.attempt, 1);
	assert_string_equal(t.wid, WID);
	assert_int_equal(taskview_spec(tv, 1, &spec), 0);
	assert_contains(spec.p, "worker: " WID);
	path_rename(u->path, "workers/" WID "/inbox/1.1",
	    "workers/" WID "/running/1.1");
	taskview_refresh(tv);
	expect(tv, 1, TV_RUNNING);
	expect_list(tv, TV_RUNNING, (uint64_t[]){ 1 }, 1);
	expect_list(tv, TV_QUEUED, (uint64_t[]){ 2 }, 1);
	path_rename(u->path, "workers/" WID "/running/1.1",
	    "workers/" WID "/done/1.1");
	taskview_refresh(tv);
	expect(tv, 1, TV_FINISHING);

	/* final; the done/ entry is still there (crash between renames) */
	finish(u, 1, RS_DONE);
	assert_int_equal(taskview_refresh(tv), 1);
	expect(tv, 1, TV_DONE);
	expect(tv, 3, TV_QUEUED);	/* its dependency is final */
	expect_list(tv, TV_DONE, (uint64_t[]){ 1 }, 1);
	expect_list(tv, TV_FINISHING, NULL, 0);
	assert_int_equal(taskview_spec(tv, 1, &spec), 0);
	assert_contains(spec.p, "final: yes");

	/* 2 retried: attempt 1 done, attempt 2 running: attempt 2 counts */
	assign(u, 2, 1, "done");
	assign(u, 2, 2, "running");
	taskview_refresh(tv);
	assert_int_equal(taskview_get(tv, 2, &t), 1);
	assert_int_equal(t.state, TV_RUNNING);
	assert_int_equal(t.attempt, 2);

	/* every final state, read from the result */
	snprintf(from, sizeof from, "workers/%s/done/2.1", WID);
	path_unlink(u->path, from);
	snprintf(to, sizeof to, "workers/%s/running/2.2", WID);
	path_unlink(u->path, to);
	finish(u, 2, RS_FAILED);
	finish(u, 3, RS_CANCELLED);
	taskview_refresh(tv);
	expect(tv, 2, TV_FAILED);
	expect(tv, 3, TV_CANCELLED);
	expect_list(tv, TV_NSTATES, (uint64_t[]){ 1, 2, 3 }, 3);
	expect_list(tv, TV_FAILED, (uint64_t[]){ 2 }, 1);
	expect_list(tv, TV_CANCELLED, (uint64_t[]){ 3 }, 1);
	buf_free(&spec);
	taskview_free(tv);
}

static void
test_unknown_drop_and_junk(void **state_)
{
	struct unit_spool *u = *state_;
	struct taskview *tv;
	struct buf spec = BUF_INIT;
	struct ids_claim c;
	uint64_t first;

	submit_n(&u->sp, 1, 0, &first);
	/* a claim whose bundle never came: unknown, not listed */
	assert_int_equal(ids_claim(&u->sp, 2, &c), 0);
	assert_int_equal(c.start, 2);
	/* a dropped file taken by spoold as ID 4: accepting/4.drop */
	assert_int_equal(ids_claim(&u->sp, 1, &c), 0);
	path_write(u->path, "accepting/4.drop", "command: [true]\n");
	/* things that are not bundles */
	path_write(u->path, "incoming/job.yaml", "command: [true]\n");
	path_write(u->path, "specs/junk", "not a bundle\n");
	path_write(u->path, "incoming/.9.bundle", "bundle: 1\n");
	finish(u, 5000, RS_REJECTED);	/* beyond the claims: ignored */

	tv = taskview_new(&u->sp, 0);
	taskview_refresh(tv);
	assert_int_equal(taskview_end(tv), 5);
	expect(tv, 1, TV_SUBMITTED);
	expect(tv, 2, TV_UNKNOWN);
	expect(tv, 3, TV_UNKNOWN);
	expect(tv, 4, TV_SUBMITTED);
	expect(tv, 5000, TV_NSTATES);
	expect_list(tv, TV_NSTATES, (uint64_t[]){ 1, 4 }, 2);
	expect_list(tv, TV_UNKNOWN, NULL, 0);
	/* a dropped file has no record until it is accepted */
	assert_int_equal(taskview_spec(tv, 4, &spec), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(taskview_spec(tv, 2, &spec), -1);
	assert_int_equal(errno, ENOENT);

	finish(u, 4, RS_REJECTED);
	taskview_refresh(tv);
	expect(tv, 4, TV_REJECTED);
	buf_free(&spec);
	taskview_free(tv);
}

/*
 * A task "spool purge" removed is forgotten, also in a shard whose IDs
 * were all final and that no refresh looked at any more: the purge
 * sets tasks/'s mtime when it is done, and then every shard is read
 * again.
 */
static void
test_purged_tasks_are_forgotten(void **state_)
{
	struct unit_spool *u = *state_;
	struct taskview *tv = taskview_new(&u->sp, 0);
	uint64_t first;
	int i;

	submit_n(&u->sp, 3, 0, &first);
	path_rename(u->path, "incoming/1.bundle", "specs/1");
	finish(u, 1, RS_DONE);
	finish(u, 2, RS_FAILED);
	finish(u, 3, RS_DONE);
	path_unlink(u->path, "specs/1");
	for (i = 0; i < 3; i++)
		taskview_refresh(tv);
	expect_list(tv, TV_NSTATES, (uint64_t[]){ 1, 2, 3 }, 3);
	/* what spool purge does: into gc/, removed there; tasks/ touched */
	path_rename(u->path, "tasks/0/1", "gc/task.1.x");
	path_rename(u->path, "tasks/0/2", "gc/task.2.x");
	assert_int_equal(fsop_touch(u->sp.fd[SD_TASKS]), 0);
	assert_int_equal(taskview_refresh(tv), 1);
	expect(tv, 1, TV_UNKNOWN);
	expect(tv, 2, TV_UNKNOWN);
	expect(tv, 3, TV_DONE);
	expect_list(tv, TV_NSTATES, (uint64_t[]){ 3 }, 1);
	expect_list(tv, TV_FAILED, NULL, 0);
	taskview_free(tv);
}

/*
 * taskview_gone: a purged task is gone; one final, unclaimed or not
 * unknown is not; nor one the view has not seen move on (a bundle that
 * holds it, a dropped file being accepted, its final directory back),
 * nor any while accepting/ holds an owed refusal or a bundle whose
 * header cannot be read: looked at on disk, not in the view.
 */
static void
test_gone_only_when_nowhere(void **state_)
{
	struct unit_spool *u = *state_;
	struct taskview *tv = taskview_new(&u->sp, 0);
	struct buf b = BUF_INIT;
	struct task_spec t;
	uint64_t first;
	int i;

	submit_n(&u->sp, 3, 0, &first);
	taskview_refresh(tv);
	assert_int_equal(taskview_gone(tv, 1), 0);	/* submitted */
	path_rename(u->path, "incoming/1.bundle", "specs/1");
	finish(u, 1, RS_DONE);
	finish(u, 2, RS_FAILED);
	finish(u, 3, RS_DONE);
	path_unlink(u->path, "specs/1");
	for (i = 0; i < 3; i++)
		taskview_refresh(tv);
	path_rename(u->path, "tasks/0/1", "gc/task.1.x");
	path_rename(u->path, "tasks/0/2", "gc/task.2.x");
	assert_int_equal(fsop_touch(u->sp.fd[SD_TASKS]), 0);
	taskview_refresh(tv);
	expect(tv, 1, TV_UNKNOWN);
	assert_int_equal(taskview_gone(tv, 1), 1);
	assert_int_equal(taskview_gone(tv, 2), 1);
	assert_int_equal(taskview_gone(tv, 3), 0);	/* done */
	assert_int_equal(taskview_gone(tv, 4), 0);	/* not claimed */
	/* what results spoold owes: which IDs is not read */
	path_write(u->path, "accepting/9.rejected", "first: 9\ncount: 1\n"
	    "why: x\n");
	assert_int_equal(taskview_gone(tv, 1), 0);
	path_unlink(u->path, "accepting/9.rejected");
	/* a bundle whose header cannot be read */
	path_write(u->path, "specs/50", "not a bundle\n");
	assert_int_equal(taskview_gone(tv, 1), 0);
	path_unlink(u->path, "specs/50");
	assert_int_equal(taskview_gone(tv, 1), 1);
	/* moves the view has not seen (no refresh): a bundle holding 1,
	 * a dropped file accepted as 2, 1's final directory back */
	task_init(&t);
	t.id = 1;
	t.argv = strv_push(NULL, "true");
	bundle_begin(&b, 1, 1, NULL);
	bundle_add(&b, &t);
	path_write(u->path, "accepting/1", b.p);
	assert_int_equal(taskview_gone(tv, 1), 0);
	assert_int_equal(taskview_gone(tv, 2), 1);
	path_unlink(u->path, "accepting/1");
	path_write(u->path, "accepting/2.drop.x.yaml", "command: true\n");
	assert_int_equal(taskview_gone(tv, 2), 0);
	path_rename(u->path, "gc/task.1.x", "tasks/0/1");
	assert_int_equal(taskview_gone(tv, 1), 0);
	expect(tv, 1, TV_UNKNOWN);	/* (the view itself as it was) */
	task_free(&t);
	buf_free(&b);
	taskview_free(tv);
}

/* A refresh of a spool where nothing changed lists nothing. */
static void
test_idle_refresh_lists_nothing(void **state_)
{
	struct unit_spool *u = *state_;
	struct taskview *tv = taskview_new(&u->sp, 0);
	unsigned long lists, stats;
	uint64_t first;
	int i;

	submit_n(&u->sp, 3, 0, &first);
	path_rename(u->path, "incoming/1.bundle", "specs/1");
	path_mkdir(u->path, "workers/" WID);
	path_mkdir(u->path, "workers/" WID "/inbox");
	path_mkdir(u->path, "workers/" WID "/running");
	path_mkdir(u->path, "workers/" WID "/done");
	assign(u, 2, 1, "running");
	finish(u, 1, RS_DONE);
	/* settle: a changed directory is listed once more on the next */
	for (i = 0; i < 3; i++)
		taskview_refresh(tv);
	lists = fsop_count[FSOP_LIST];
	stats = fsop_count[FSOP_STAT];
	assert_int_equal(taskview_refresh(tv), 0);
	assert_int_equal(fsop_count[FSOP_LIST], lists);
	TCHECK(fsop_count[FSOP_STAT] > stats, "no directory was stat'ed");
	expect(tv, 1, TV_DONE);
	expect(tv, 2, TV_RUNNING);
	expect(tv, 3, TV_QUEUED);

	/* a change made behind its back (no inotify) is seen by a rescan */
	finish(u, 3, RS_DONE);
	assert_int_equal(taskview_refresh(tv), 1);
	expect(tv, 3, TV_DONE);

	/* forgetting the stamps lists everything again, same answers */
	taskview_touch(tv);
	lists = fsop_count[FSOP_LIST];
	taskview_refresh(tv);
	TCHECK(fsop_count[FSOP_LIST] > lists, "touch did not relist");
	expect(tv, 2, TV_RUNNING);
	taskview_free(tv);
}

static void
test_workers_listed(void **state_)
{
	struct unit_spool *u = *state_;
	struct taskview *tv = taskview_new(&u->sp, 0);
	char **wids;

	path_mkdir(u->path, "workers/b-2");
	path_mkdir(u->path, "workers/a-1");
	path_mkdir(u->path, "workers/.tmp");
	taskview_refresh(tv);
	assert_int_equal(taskview_workers(tv, &wids), 2);
	assert_string_equal(wids[0], "a-1");
	assert_string_equal(wids[1], "b-2");
	assert_null(wids[2]);
	strv_free(wids);
	path_rename(u->path, "workers/a-1", "gc/a-1");
	assert_int_equal(taskview_refresh(tv), 1);
	assert_int_equal(taskview_workers(tv, &wids), 1);
	assert_string_equal(wids[0], "b-2");
	strv_free(wids);
	taskview_free(tv);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_lifecycle,
		    unit_spool_setup, unit_spool_teardown),
		cmocka_unit_test_setup_teardown(test_unknown_drop_and_junk,
		    unit_spool_setup, unit_spool_teardown),
		cmocka_unit_test_setup_teardown(test_purged_tasks_are_forgotten,
		    unit_spool_setup, unit_spool_teardown),
		cmocka_unit_test_setup_teardown(test_gone_only_when_nowhere,
		    unit_spool_setup, unit_spool_teardown),
		cmocka_unit_test_setup_teardown(test_idle_refresh_lists_nothing,
		    unit_spool_setup, unit_spool_teardown),
		cmocka_unit_test_setup_teardown(test_workers_listed,
		    unit_spool_setup, unit_spool_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
