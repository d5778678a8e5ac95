/*
 * test_spoold_batch.c - spoold/batch.c: what spoold reads from the
 * batch systems.  The job ID in each submission command's answer, the
 * queue listings of squeue, Grid Engine's qstat -g d (running and
 * pending, plain jobs and array tasks), the qstat of PBS (Slurm's
 * wrappers' format, which a PBS server shares) and bjobs, their state
 * words, the cancel commands (one job or several in one command), and
 * the answers of a cancel that came too late.  The texts are
 * what those commands printed on Debian 12's Slurm 22.05, gridengine
 * 8.1.9 and slurm-wlm-torque (LSF: its documented format).
 */
#include "unit.h"
#include "../../spoold/batch.h"

static void
test_submit_answers(void **state)
{
	static const struct {
		enum backend b;
		const char *answer, *id;
	} rows[] = {
		{ BK_SLURM, "4211\n", "4211" },
		{ BK_SLURM, "4211;cluster2\n", "4211" },
		{ BK_SGE, "17\n", "17" },
		{ BK_SGE, "18.1-5:1\n", "18" },
		{ BK_PBS, "123.pbs-server.example\n", "123" },
		{ BK_PBS, "2\n", "2" },
		{ BK_LSF, "Job <987> is submitted to queue <normal>.\n", "987" },
	};
	char id[BATCH_ID_MAX];
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		TCHECK(batch_parse_submit(rows[i].b, rows[i].answer, id,
		    sizeof id) == 0 && strcmp(id, rows[i].id) == 0,
		    "row %zu: got %s", i, id);
	}
	assert_int_equal(batch_parse_submit(BK_SLURM, "sbatch: error\n", id,
	    sizeof id), -1);
	assert_int_equal(batch_parse_submit(BK_LSF, "", id, sizeof id), -1);
}

static void
expect(enum backend b, const char *text, const char *const *want, size_t n)
{
	struct batch_state *v;
	size_t got, i;
	char line[200];

	batch_parse_list(b, text, &v, &got);
	TCHECK(got == n, "%s: %zu jobs listed, want %zu", backend_name[b], got,
	    n);
	for (i = 0; i < n; i++) {
		snprintf(line, sizeof line, "%s %s%s%s", v[i].id, v[i].state,
		    v[i].reason[0] ? " " : "", v[i].reason);
		TCHECK(strcmp(line, want[i]) == 0, "%s row %zu: got \"%s\", want "
		    "\"%s\"", backend_name[b], i, line, want[i]);
	}
	free(v);
}

/*
 * squeue -o "%i %o": the jobs submitted from a script in the spool's
 * jobs/, by the script's name; the path may hold spaces; a script
 * elsewhere, in a subdirectory, or in a directory whose name only
 * begins like jobs/ is not one of them.
 */
static void
test_slurm_scripts(void **state)
{
	static const char text[] =
	    "40 /sp ool/jobs/script.a.1.2.3@default.sh\n"
	    "41_1 /sp ool/jobs/script.b@gpu.sh\r\n"
	    "41_2 /sp ool/jobs/script.b@gpu.sh\n"
	    "42 /sp ool/jobs2/script.c@default.sh\n"
	    "43 /sp ool/jobs/sub/script.d@default.sh\n"
	    "44 /home/u/job.sh\n"
	    "45 /sp ool/jobs/\n"
	    "no-command\n"
	    " /sp ool/jobs/script.e@default.sh\n"
	    "46 /sp ool/jobs/script.f@default.sh";
	struct batch_script *v;
	size_t n;

	(void)state;
	batch_parse_scripts(BK_SLURM, text, "/sp ool/jobs", &v, &n);
	assert_int_equal(n, 4);
	assert_string_equal(v[0].id, "40");
	assert_string_equal(v[0].name, "script.a.1.2.3@default.sh");
	assert_string_equal(v[1].id, "41_1");
	assert_string_equal(v[1].name, "script.b@gpu.sh");
	assert_string_equal(v[2].id, "41_2");
	assert_string_equal(v[3].id, "46");
	assert_string_equal(v[3].name, "script.f@default.sh");
	free(v);
	batch_parse_scripts(BK_SLURM, "", "/sp ool/jobs", &v, &n);
	assert_int_equal(n, 0);
	free(v);
	assert_true(batch_finds_scripts(BK_SLURM));
	assert_true(batch_finds_scripts(BK_SGE));
	assert_false(batch_finds_scripts(BK_PBS));
	assert_false(batch_finds_scripts(BK_LSF));
}

/*
 * qstat -j NAME: each block's job_number with its script_file (an
 * array's too: its tasks come from the listing); a block without a
 * script_file, or one whose script is elsewhere, is none of them, and
 * a script_file never goes with the job number of the block before.
 */
static void
test_sge_scripts(void **state)
{
	static const char text[] =
	    "==============================================================\n"
	    "job_number:                 127\n"
	    "exec_file:                  job_scripts/127\n"
	    "owner:                      root\n"
	    "job_name:                   ckworker\n"
	    "script_file:                /sp ool/jobs/script.a@default.sh\n"
	    "==============================================================\n"
	    "job_number:                 128\n"
	    "script_file:                /sp ool/jobs/script.b@default.sh\n"
	    "job-array tasks:            1-3:1\n"
	    "==============================================================\n"
	    "job_number:                 129\n"
	    "script_file:                /elsewhere/job.sh\n"
	    "==============================================================\n"
	    "job_number:                 130\n"
	    "==============================================================\n"
	    "script_file:                /sp ool/jobs/script.c@default.sh\n";
	struct batch_script *v;
	size_t n;

	(void)state;
	batch_parse_scripts(BK_SGE, text, "/sp ool/jobs", &v, &n);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].id, "127");
	assert_string_equal(v[0].name, "script.a@default.sh");
	assert_string_equal(v[1].id, "128");
	assert_string_equal(v[1].name, "script.b@default.sh");
	free(v);
}

static void
test_slurm_listing(void **state)
{
	static const char text[] =
	    "26_1 RUNNING None\n"
	    "26_2 PENDING Resources\n"
	    "30 COMPLETING None\n"
	    "31 PENDING (ReqNodeNotAvail)\n"
	    "32 BOOT_FAIL None\n"
	    "garbage\n";
	static const char *const want[] = {
		"26_1 running", "26_2 pending Resources", "30 running",
		"31 pending (ReqNodeNotAvail)", "32 error",
	};

	(void)state;
	expect(BK_SLURM, text, want, NELEM(want));
}

static void
test_sge_listing(void **state)
{
	static const char text[] =
	    "job-ID  prior   name       user         state submit/start at     "
	    "queue                          slots ja-task-ID \n"
	    "-------------------------------------------------------------------"
	    "----------------------------------------------\n"
	    "      1 0.50000 sgetst     root         r     11/22/2026 18:28:05 "
	    "all.q@vm                           1        \n"
	    "      2 0.50000 sgetst     root         r     11/22/2026 18:28:05 "
	    "all.q@vm                           1 1\n"
	    "      2 0.50000 sgetst     root         qw    11/22/2026 18:28:05 "
	    "                                   1 2\n"
	    "      3 0.00000 other      root         qw    11/22/2026 18:28:06 "
	    "                                   4        \n"
	    "      4 0.50000 sgetst     root         dr    11/22/2026 18:28:14 "
	    "all.q@vm                           1 3\n"
	    "      5 0.00000 broken     root         Eqw   11/22/2026 18:28:14 "
	    "                                   1        \n"
	    "      6 0.00000 held       root         hqw   11/22/2026 18:28:14 "
	    "                                   1 1\n";
	static const char *const want[] = {
		"1 running", "2.1 running", "2.2 pending", "3 pending",
		"4.3 running", "5 error", "6.1 pending",
	};

	(void)state;
	expect(BK_SGE, text, want, NELEM(want));
}

static void
test_pbs_and_lsf_listings(void **state)
{
	static const char pbs[] =
	    "Job id              Name             Username        Time Use S "
	    "Queue          \n"
	    "------------------- ---------------- --------------- -------- - "
	    "---------------\n"
	    "1                   tst              root            00:00:00 C "
	    "debug          \n"
	    "2.server            ptst             root            00:00:01 R "
	    "debug          \n"
	    "3                   ptst             root            0        Q "
	    "workq          \n";
	static const char *const pbs_want[] = {
		"1 done", "2 running", "3 pending",
	};
	static const char lsf[] =
	    "101 0 RUN\n"
	    "102 3 PEND\n"
	    "103 0 DONE\n"
	    "104 1 EXIT\n"
	    "105 0 USUSP\n";
	static const char *const lsf_want[] = {
		"101 running", "102.3 pending", "103 done", "104.1 done",
		"105 running",
	};

	(void)state;
	expect(BK_PBS, pbs, pbs_want, NELEM(pbs_want));
	expect(BK_LSF, lsf, lsf_want, NELEM(lsf_want));
}

/* A cancel that found the job already gone is not a failure. */
static void
test_gone_answers(void **state)
{
	assert_true(batch_gone_answer(BK_SLURM, "scancel: error: Kill job "
	    "error on job id 5: Invalid job id specified\n"));
	assert_true(batch_gone_answer(BK_SLURM, "scancel: error: Kill job "
	    "error on job id 5: Job/step already completing or completed\n"));
	assert_false(batch_gone_answer(BK_SLURM, "scancel: error: Unable to "
	    "contact slurm controller\n"));
	assert_true(batch_gone_answer(BK_SGE, "denied: job \"999\" does not "
	    "exist\n"));
	assert_false(batch_gone_answer(BK_SGE, "error: unable to contact "
	    "qmaster\n"));
	assert_true(batch_gone_answer(BK_PBS, "qdel: Unknown Job Id 12.srv\n"));
	assert_true(batch_gone_answer(BK_LSF, "Job <5>: Job has already "
	    "finished\n"));
	(void)state;
}

/* argv of a cancel, joined with spaces; "" for NULL (errno EINVAL) */
static void
assert_cancel(enum backend b, const char *const *ids, size_t n,
    const char *want)
{
	char line[512] = "", **argv;
	size_t i;

	errno = 0;
	argv = batch_cancel_argv(b, ids, n);
	if (argv == NULL) {
		assert_int_equal(errno, EINVAL);
		assert_string_equal("", want);
		return;
	}
	for (i = 0; argv[i]; i++) {
		if (i)
			strcat(line, " ");
		strcat(line, argv[i]);
	}
	free(argv);
	assert_string_equal(line, want);
}

/*
 * One job, as each system spells it; several in one command (a stop)
 * where the system takes a list, never a Grid Engine array task (its
 * "-t" takes one job).
 */
static void
test_cancel_commands(void **state)
{
	static const char *const one[] = { "4211" }, *const elem[] = { "18.3" },
	    *const slurm_many[] = { "4211", "4212_1", "4212_2" },
	    *const many[] = { "17", "19" }, *const mixed[] = { "17", "18.3" },
	    *const lsf_many[] = { "987", "988.2" };

	assert_cancel(BK_SLURM, one, 1, "scancel 4211");
	assert_cancel(BK_SLURM, slurm_many, 3, "scancel 4211 4212_1 4212_2");
	assert_cancel(BK_SGE, elem, 1, "qdel 18 -t 3");
	assert_cancel(BK_SGE, many, 2, "qdel 17 19");
	assert_cancel(BK_SGE, mixed, 2, "");
	assert_true(batch_cancel_together(BK_SGE, "17"));
	assert_false(batch_cancel_together(BK_SGE, "18.3"));
	assert_true(batch_cancel_together(BK_LSF, "988.2"));
	assert_cancel(BK_PBS, many, 2, "qdel 17 19");
	assert_cancel(BK_LSF, elem, 1, "bkill 18[3]");
	assert_cancel(BK_LSF, lsf_many, 2, "bkill 987 988[2]");
	assert_cancel(BK_LOCAL, one, 1, "");
	assert_cancel(BK_SLURM, one, 0, "");
	(void)state;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_submit_answers),
		cmocka_unit_test(test_slurm_listing),
		cmocka_unit_test(test_sge_listing),
		cmocka_unit_test(test_pbs_and_lsf_listings),
		cmocka_unit_test(test_gone_answers),
		cmocka_unit_test(test_slurm_scripts),
		cmocka_unit_test(test_sge_scripts),
		cmocka_unit_test(test_cancel_commands),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
