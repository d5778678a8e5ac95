/*
 * test_cgroup.c - ckworker/cgroup.c: finding the worker's own cgroup in
 * /proc/self/cgroup text, for cgroup v2 (the "0::" line) and for the
 * v1 memory hierarchy (the line whose controllers include "memory",
 * alone or co-mounted), on the shapes Slurm, systemd, containers and
 * hybrid hosts produce, and refusing what is absent or too long.
 */
#include "unit.h"
#include "../../ckworker/cgroup.h"

static void
test_path_of(void **state)
{
	static const struct {
		const char *text;
		int version;
		const char *want;	/* NULL: absent */
	} rows[] = {
		/* pure v2, as under systemd or Slurm's cgroup/v2 */
		{ "0::/system.slice/slurmstepd.scope/job_42/step_batch/user/"
		  "task_0\n", 2, "/system.slice/slurmstepd.scope/job_42/"
		  "step_batch/user/task_0" },
		{ "0::/\n", 2, "/" },
		{ "0::/\n", 1, NULL },
		/* v1 with a hybrid v2 line, as on this test machine */
		{ "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/abc\n"
		  "3:cpuset:/\n0::/\n", 1, "/process_api/abc" },
		{ "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/abc\n"
		  "0::/\n", 2, "/" },
		/* co-mounted controllers; memory is a whole word */
		{ "5:cpu,cpuacct,memory:/slurm/uid_0/job_7/step_batch\n", 1,
		  "/slurm/uid_0/job_7/step_batch" },
		{ "5:memory_pressure:/x\n6:hugetlb:/y\n", 1, NULL },
		{ "7:blkio:/a\n", 1, NULL },
		/* no trailing newline */
		{ "4:memory:/last", 1, "/last" },
		{ "", 2, NULL },
		{ "garbage\n", 1, NULL },
	};
	char out[256];
	const char *got;
	size_t i;
	int nfail = 0;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		memset(out, 'x', sizeof out);
		got = cgroup_path_of(rows[i].text, rows[i].version, out,
		    sizeof out);
		if (rows[i].want == NULL)
			TEXPECT(nfail, got == NULL, "row %zu: found \"%s\"", i,
			    got);
		else
			TEXPECT(nfail, got && strcmp(got, rows[i].want) == 0,
			    "row %zu: \"%s\", want \"%s\"", i, got ? got :
			    "(none)", rows[i].want);
	}
	assert_int_equal(nfail, 0);
}

static void
test_path_too_long(void **state)
{
	char text[600], out[64];

	(void)state;
	memset(text, 'a', sizeof text);
	memcpy(text, "0::/", 4);
	text[sizeof text - 2] = '\n';
	text[sizeof text - 1] = 0;
	assert_null(cgroup_path_of(text, 2, out, sizeof out));
	assert_string_equal(cgroup_path_of("0::/short\n", 2, out, sizeof out),
	    "/short");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_of),
		cmocka_unit_test(test_path_too_long),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
