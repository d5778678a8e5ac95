/*
 * test_taskenv.c - ckworker/taskenv.c: a task's environment is the
 * worker's, the task's NAME=value and the worker's variables set over
 * it in order (a later set of a name replaces an earlier one where it
 * stood; a set without replace keeps what is there), the worker's own
 * strings pointed to and left untouched, and lookups match whole names
 * only.
 */
#include "unit.h"

#include <stdlib.h>
#include <string.h>

#include "../../ckworker/taskenv.h"

static void
test_sets_over_the_base(void **state)
{
	char *base[] = { "PATH=/bin", "OMP_NUM_THREADS=3", "HOME=/h",
	    "NOEQUALS", "SPOOL_CORES=9", NULL };
	char *copy[sizeof base / sizeof base[0]];
	const char *mine = "GREETING=hola";
	struct taskenv e;
	size_t i;

	(void)state;
	memcpy(copy, base, sizeof base);
	taskenv_init(&e, base);
	taskenv_put(&e, mine);
	taskenv_put(&e, "HOME=/task");		/* the task's over the base */
	taskenv_put(&e, "GREETING=hej");	/* a later one wins */
	taskenv_put(&e, "=nothing");		/* no name: ignored */
	taskenv_set(&e, "SPOOL_CORES", "2", 1);
	taskenv_set(&e, "OMP_NUM_THREADS", "2", 0);	/* the base's kept */
	taskenv_set(&e, "MKL_NUM_THREADS", "2", 0);	/* none: set */
	taskenv_set(&e, "MKL_NUM_THREADS", "5", 0);	/* set: kept */
	taskenv_set(&e, "SPOOL", "/spool", 1);
	/* in the base's order, then the new names in the order set */
	static const char *const want[] = { "PATH=/bin", "OMP_NUM_THREADS=3",
	    "HOME=/task", "NOEQUALS", "SPOOL_CORES=2", "GREETING=hej",
	    "MKL_NUM_THREADS=2", "SPOOL=/spool", NULL };
	for (i = 0; want[i]; i++)
		assert_string_equal(e.v[i], want[i]);
	assert_null(e.v[i]);
	assert_int_equal(e.n, i);
	/* lookups: whole names only */
	assert_string_equal(taskenv_get(e.v, "SPOOL"), "/spool");
	assert_string_equal(taskenv_get(e.v, "HOME"), "/task");
	assert_null(taskenv_get(e.v, "SPOO"));
	assert_null(taskenv_get(e.v, "NOEQUALS"));
	assert_null(taskenv_get(e.v, "PATHX"));
	/* the base's strings are pointed to and unchanged */
	assert_ptr_equal(e.v[0], base[0]);
	assert_memory_equal(base, copy, sizeof base);
	assert_string_equal(base[4], "SPOOL_CORES=9");
	taskenv_free(&e);
	assert_null(e.v);
	taskenv_free(&e);	/* twice: nothing left to free */
}

/* Past the room made at first: the vector and the strings grow. */
static void
test_many_sets(void **state)
{
	char *base[] = { "A=1", NULL }, name[32], value[32];
	struct taskenv e;
	int i;

	(void)state;
	taskenv_init(&e, base);
	for (i = 0; i < 200; i++) {
		snprintf(name, sizeof name, "V%d", i);
		snprintf(value, sizeof value, "%d", i * 7);
		taskenv_set(&e, name, value, 1);
	}
	taskenv_set(&e, "V17", "again", 1);
	assert_int_equal(e.n, 201);
	assert_string_equal(taskenv_get(e.v, "A"), "1");
	assert_string_equal(taskenv_get(e.v, "V199"), "1393");
	assert_string_equal(taskenv_get(e.v, "V17"), "again");
	assert_string_equal(e.v[18], "V17=again");	/* where it stood */
	assert_null(e.v[201]);
	taskenv_free(&e);
}

/* An empty base, and a NULL one (no environment at all). */
static void
test_empty_base(void **state)
{
	char *none[] = { NULL };
	struct taskenv e;

	(void)state;
	taskenv_init(&e, none);
	assert_null(e.v[0]);
	assert_null(taskenv_get(e.v, "PATH"));
	taskenv_set(&e, "PATH", "/usr/bin", 0);
	assert_string_equal(e.v[0], "PATH=/usr/bin");
	taskenv_free(&e);
	taskenv_init(&e, NULL);
	assert_int_equal(e.n, 0);
	assert_null(e.v[0]);
	taskenv_free(&e);
}

/* a name unset is gone wherever it stood, the rest keep their order;
 * one that is not there changes nothing; set again, it comes last */
static void
test_unset(void **state)
{
	char *base[] = { "SPOOL_DEPS=7", "PATH=/bin", "SPOOL_TASK_NAME=outer",
	    "SPOOL_DEPS_X=1", NULL };
	struct taskenv e;

	(void)state;
	taskenv_init(&e, base);
	taskenv_unset(&e, "SPOOL_DEPS");
	taskenv_unset(&e, "SPOOL_TASK_NAME");
	taskenv_unset(&e, "SPOOL_DEP_DIRS");	/* not there */
	assert_int_equal(e.n, 2);
	assert_string_equal(e.v[0], "PATH=/bin");
	assert_string_equal(e.v[1], "SPOOL_DEPS_X=1");
	assert_null(e.v[2]);
	assert_null(taskenv_get(e.v, "SPOOL_DEPS"));
	taskenv_put(&e, "SPOOL_DEPS=mine");
	assert_string_equal(e.v[2], "SPOOL_DEPS=mine");
	assert_null(e.v[3]);
	/* the base itself is untouched */
	assert_string_equal(base[0], "SPOOL_DEPS=7");
	assert_string_equal(base[2], "SPOOL_TASK_NAME=outer");
	taskenv_free(&e);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sets_over_the_base),
		cmocka_unit_test(test_many_sets),
		cmocka_unit_test(test_empty_base),
		cmocka_unit_test(test_unset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
