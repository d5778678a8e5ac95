/*
 * test_ptree.c - ckworker/ptree.c: a task's tree followed through a
 * snapshot of /proc, here a snapshot made up in memory (no process is
 * read or signalled).  Every member is followed, however many: a task
 * of more than 4096 processes had those past the 4096th left out of
 * its memory sum and alive after its end (ptree_signal kills the
 * members only).  A member whose pid was taken by another process
 * (another start time) is not one any more.
 */
#include "unit.h"
#include "../../ckworker/ptree.h"

#define MAIN	1000
#define KIDS	5000		/* more than the 4096 once followed */
#define RSS	(1u << 20)

/*
 * A snapshot: the task's main process MAIN (if with_main) and KIDS
 * processes that called setsid (each its own session), children of
 * MAIN, or of pid 1 (the worker, say) once MAIN is gone, indexed as
 * psnap_take indexes /proc (psnap_index).  Kid k started at tick 10 + k,
 * but kid `reused`'s pid now belongs to a process started at tick 1.
 */
static void
snapshot(struct psnap *s, int with_main, long reused)
{
	long k;

	memset(s, 0, sizeof *s);
	s->p = xcalloc(KIDS + 1, sizeof *s->p);
	if (with_main)
		s->p[s->n++] = (struct pproc){ .pid = MAIN, .ppid = 1,
		    .pgid = MAIN, .sid = 1, .state = 'S', .start = 5,
		    .rss = RSS };
	for (k = 1; k <= KIDS; k++)
		s->p[s->n++] = (struct pproc){ .pid = MAIN + (pid_t)k,
		    .ppid = with_main ? MAIN : 1, .pgid = MAIN + (pid_t)k,
		    .sid = MAIN + (pid_t)k, .state = 'S',
		    .start = k == reused ? 1 : 10 + (unsigned long long)k,
		    .rss = RSS };
	psnap_index(s);
}

static void
test_every_member_followed(void **state)
{
	struct ptree t;
	struct psnap s;

	(void)state;
	memset(&t, 0, sizeof t);
	/* the main process and all its KIDS children */
	snapshot(&s, 1, 0);
	ptree_scan(&t, &s, MAIN, NULL, 0);
	psnap_free(&s);
	assert_int_equal(t.n, KIDS + 1);
	assert_int_equal(t.rss, (uint64_t)(KIDS + 1) * RSS);
	assert_true(ptree_has(&t, MAIN));
	assert_true(ptree_has(&t, MAIN + KIDS));
	assert_true(ptree_has(&t, MAIN + 4097));
	assert_false(ptree_has(&t, MAIN + KIDS + 1));
	/*
	 * The main process gone, its children with another parent (the
	 * subreaper): still members, all of them, since they were seen;
	 * but not kid 7, whose pid is now another process's.
	 */
	snapshot(&s, 0, 7);
	ptree_scan(&t, &s, 0, NULL, 0);
	psnap_free(&s);
	assert_int_equal(t.n, KIDS - 1);
	assert_int_equal(t.rss, (uint64_t)(KIDS - 1) * RSS);
	assert_int_equal(t.peak, (uint64_t)(KIDS + 1) * RSS);
	assert_false(ptree_has(&t, MAIN));
	assert_false(ptree_has(&t, MAIN + 7));
	assert_true(ptree_has(&t, MAIN + 6));
	assert_true(ptree_has(&t, MAIN + KIDS));
	ptree_free(&t);
}

/* Orphans attributed by the caller (extra) join, and theirs with them. */
static void
test_extra_members(void **state)
{
	struct ptree t;
	struct psnap s;
	pid_t extra[2] = { MAIN + KIDS, MAIN + 1 };

	(void)state;
	memset(&t, 0, sizeof t);
	snapshot(&s, 0, 0);
	ptree_scan(&t, &s, MAIN, extra, 2);	/* (MAIN is gone) */
	psnap_free(&s);
	assert_int_equal(t.n, 2);
	assert_true(ptree_has(&t, MAIN + 1));
	assert_true(ptree_has(&t, MAIN + KIDS));
	assert_false(ptree_has(&t, MAIN + 2));
	ptree_free(&t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_member_followed),
		cmocka_unit_test(test_extra_members),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
