/*
 * test_batch.c - ckworker/batch.c: the parsers of the batch systems'
 * answers about a job's time (squeue %L, qstat -j h_rt, bjobs
 * time_left, qstat -f walltime), and what batch_detect() reads from the
 * environment of a Slurm, SGE, PBS or LSF job (kind, job ID as people
 * and the job scripts see it, CPUs, memory, end time from
 * SLURM_JOB_END_TIME, and START_TIME on a node whose clock is behind
 * the controller's) without asking the batch system anything.
 */
#include "unit.h"
#include <sys/wait.h>
#include "../../ckworker/batch.h"
#include "hostinfo.h"

static void
test_slurm_time_left(void **state)
{
	static const struct {
		const char *in;
		int rc;
		uint64_t want;
	} rows[] = {
		{ "1-02:03:04\n", 1, 86400 + 2 * 3600 + 3 * 60 + 4 },
		{ "2:03:04", 1, 2 * 3600 + 3 * 60 + 4 },
		{ "  59:58 \n", 1, 59 * 60 + 58 },
		{ "0:05", 1, 5 },
		{ "UNLIMITED\n", 0, 0 },
		{ "NOT_SET", 0, 0 },
		{ "INVALID", -1, 0 },
		{ "", -1, 0 },
		{ "garbage 12", -1, 0 },
	};
	uint64_t v;
	size_t i;
	int rc;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		v = 777;
		rc = batch_slurm_left(rows[i].in, &v);
		TCHECK(rc == rows[i].rc, "\"%s\": rc %d, want %d", rows[i].in, rc,
		    rows[i].rc);
		if (rc > 0)
			TCHECK(v == rows[i].want, "\"%s\": %llu, want %llu",
			    rows[i].in, (unsigned long long)v,
			    (unsigned long long)rows[i].want);
	}
}

static void
test_sge_h_rt(void **state)
{
	static const struct {
		const char *in;
		int rc;
		uint64_t want;
	} rows[] = {
		{ "job_number:                 17\n"
		  "hard resource_list:         h_rt=3600,h_vmem=2G\n"
		  "owner:                      alice\n", 1, 3600 },
		{ "hard resource_list:         h_vmem=2G,h_rt=1:30:00\n", 1,
		  5400 },
		{ "hard resource_list:         h_vmem=2G\n", 0, 0 },
		{ "job_number: 17\nowner: bob\n", 0, 0 },
		{ "hard resource_list:         xh_rt=5,h_rt=bad\n", -1, 0 },
		{ "hard resource_list:         s_h_rt=5\n", 0, 0 },
	};
	uint64_t v;
	size_t i;
	int rc;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		v = 777;
		rc = batch_sge_h_rt(rows[i].in, &v);
		TCHECK(rc == rows[i].rc, "row %zu: rc %d, want %d", i, rc,
		    rows[i].rc);
		if (rc > 0)
			TCHECK(v == rows[i].want, "row %zu: %llu, want %llu", i,
			    (unsigned long long)v,
			    (unsigned long long)rows[i].want);
	}
}

static void
test_lsf_time_left(void **state)
{
	static const struct {
		const char *in;
		int rc;
		uint64_t want;
	} rows[] = {
		{ "0:59 L\n", 1, 59 * 60 },
		{ "12:30", 1, 12 * 3600 + 30 * 60 },
		{ "-\n", 0, 0 },
		{ "", 0, 0 },
		{ "1:75 L", -1, 0 },
		{ "soon", -1, 0 },
		{ "3:", -1, 0 },
	};
	uint64_t v;
	size_t i;
	int rc;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		v = 777;
		rc = batch_lsf_left(rows[i].in, &v);
		TCHECK(rc == rows[i].rc, "\"%s\": rc %d, want %d", rows[i].in, rc,
		    rows[i].rc);
		if (rc > 0)
			TCHECK(v == rows[i].want, "\"%s\": %llu, want %llu",
			    rows[i].in, (unsigned long long)v,
			    (unsigned long long)rows[i].want);
	}
}

static void
test_pbs_walltime(void **state)
{
	const char *f =
	    "Job Id: 123.server\n"
	    "    Job_Name = ckworker\n"
	    "    resources_used.walltime = 00:10:00\n"
	    "    Resource_List.ncpus = 4\n"
	    "    Resource_List.walltime = 02:00:00\n";
	uint64_t limit = 0, used = 9;

	(void)state;
	assert_int_equal(batch_pbs_walltime(f, &limit, &used), 1);
	assert_int_equal(limit, 7200);
	assert_int_equal(used, 600);
	used = 9;
	assert_int_equal(batch_pbs_walltime(
	    "    Resource_List.walltime = 3600\n", &limit, &used), 1);
	assert_int_equal(limit, 3600);
	assert_int_equal(used, 0);
	assert_int_equal(batch_pbs_walltime("    Job_Name = x\n", &limit,
	    &used), 0);
	assert_int_equal(batch_pbs_walltime(
	    "    Resource_List.walltime = forever\n", &limit, &used), -1);
}

/* Every variable any batch system sets, so each row starts clean. */
static const char *const batch_vars[] = {
	"SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID",
	"SLURM_CPUS_ON_NODE", "SLURM_MEM_PER_NODE", "SLURM_MEM_PER_CPU",
	"SLURM_JOB_END_TIME", "SLURM_JOB_START_TIME", "PBS_JOBID", "PBS_ARRAY_INDEX", "NCPUS",
	"PBS_NUM_PPN", "PBS_NP", "LSB_JOBID", "LSB_JOBINDEX",
	"LSB_MCPU_HOSTS", "LSB_DJOB_NUMPROC", "JOB_ID", "SGE_TASK_ID",
	"SGE_ROOT", "NSLOTS", NULL,
};

static void
env_clear(void)
{
	int i;

	for (i = 0; batch_vars[i]; i++)
		unsetenv(batch_vars[i]);
}

/* "NAME=VALUE NAME=VALUE" */
static void
env_load(const char *s)
{
	char *copy = xstrdup(s), *tok, *save = NULL, *eq;

	env_clear();
	for (tok = strtok_r(copy, " ", &save); tok;
	    tok = strtok_r(NULL, " ", &save)) {
		eq = strchr(tok, '=');
		*eq = 0;
		setenv(tok, eq + 1, 1);
	}
	free(copy);
}

static void
test_detect_from_environment(void **state)
{
	static const struct {
		const char *env;
		const char *force;
		const char *kind, *job, *qid;
		uint32_t cpus;
		uint64_t memory;
	} rows[] = {
		{ "", NULL, "", "", "", 0, 0 },
		{ "SLURM_JOB_ID=4242 SLURM_CPUS_ON_NODE=8 SLURM_MEM_PER_NODE=16000",
		  NULL, "slurm", "4242", "4242", 8, 16000ULL << 20 },
		{ "SLURM_JOB_ID=4250 SLURM_ARRAY_JOB_ID=4242 "
		  "SLURM_ARRAY_TASK_ID=3 SLURM_CPUS_ON_NODE=2 "
		  "SLURM_MEM_PER_CPU=1024", NULL, "slurm", "4242_3", "4250", 2,
		  2048ULL << 20 },
		{ "SLURM_JOB_ID=1 SLURM_MEM_PER_NODE=2097152", NULL, "slurm",
		  "1", "1", 0, 2097152ULL << 20 },	/* 2 TiB */
		{ "JOB_ID=17 SGE_ROOT=/var/lib/gridengine NSLOTS=4 "
		  "SGE_TASK_ID=undefined", NULL, "sge", "17", "17", 4, 0 },
		{ "JOB_ID=17 NSLOTS=4 SGE_TASK_ID=5", NULL, "sge", "17.5", "17",
		  4, 0 },
		{ "JOB_ID=17", NULL, "", "", "", 0, 0 },	/* not SGE's */
		{ "PBS_JOBID=123.server NCPUS=6", NULL, "pbs", "123",
		  "123.server", 6, 0 },
		{ "PBS_JOBID=123[2].server PBS_ARRAY_INDEX=2 PBS_NUM_PPN=3",
		  NULL, "pbs", "123.2..2", "123[2].server", 3, 0 },
		{ "LSB_JOBID=77 LSB_JOBINDEX=0 LSB_DJOB_NUMPROC=5", NULL, "lsf",
		  "77", "77", 5, 0 },
		{ "LSB_JOBID=77 LSB_JOBINDEX=4", NULL, "lsf", "77.4", "77[4]", 0,
		  0 },
		{ "SLURM_JOB_ID=9 SLURM_CPUS_ON_NODE=8", "none", "", "", "", 0,
		  0 },
		{ "SLURM_JOB_ID=9 JOB_ID=3 NSLOTS=2", "sge", "sge", "3", "3", 2,
		  0 },
		{ "SLURM_JOB_ID=9/../x", NULL, "slurm", "9....x", "9/../x", 0,
		  0 },
	};
	struct batch b;
	size_t i;
	int nfail = 0;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		env_load(rows[i].env);
		batch_detect(rows[i].force, 0, 1000, &b);
		TEXPECT(nfail, strcmp(b.kind, rows[i].kind) == 0,
		    "row %zu: kind \"%s\", want \"%s\"", i, b.kind, rows[i].kind);
		TEXPECT(nfail, strcmp(b.job, rows[i].job) == 0,
		    "row %zu: job \"%s\", want \"%s\"", i, b.job, rows[i].job);
		TEXPECT(nfail, strcmp(b.qid, rows[i].qid) == 0,
		    "row %zu: query id \"%s\", want \"%s\"", i, b.qid,
		    rows[i].qid);
		TEXPECT(nfail, b.cpus == rows[i].cpus,
		    "row %zu: %u CPUs, want %u", i, b.cpus, rows[i].cpus);
		TEXPECT(nfail, b.memory == rows[i].memory,
		    "row %zu: memory %llu, want %llu", i,
		    (unsigned long long)b.memory,
		    (unsigned long long)rows[i].memory);
		TEXPECT(nfail, b.ends == 0, "row %zu: an end without asking", i);
	}
	env_clear();
	assert_int_equal(nfail, 0);
}

/* The end from SLURM_JOB_END_TIME, without running squeue. */
static void
test_detect_slurm_end_time(void **state)
{
	struct batch b;
	char v[32], *path = xstrdup(getenv("PATH") ? getenv("PATH") : "");
	double end = now_unix() + 3600;

	(void)state;
	snprintf(v, sizeof v, "%.0f", end);
	env_load("SLURM_JOB_ID=5");
	setenv("SLURM_JOB_END_TIME", v, 1);
	batch_detect(NULL, 1, 1000, &b);
	assert_string_equal(b.kind, "slurm");
	assert_true(b.ends > end - 1 && b.ends < end + 1);
	assert_string_equal(b.ends_from, "SLURM_JOB_END_TIME");
	/* a query that cannot run says why, and leaves the end unknown */
	env_load("LSB_JOBID=5");
	setenv("PATH", "/nonexistent", 1);
	batch_detect(NULL, 1, 1000, &b);
	assert_true(b.ends == 0);
	assert_contains(b.ends_from, "unknown (");
	assert_contains(b.ends_from, "bjobs");
	setenv("PATH", path, 1);
	free(path);
	env_load("PBS_JOBID=");
	batch_detect("pbs", 1, 1000, &b);
	assert_contains(b.ends_from, "no job ID");
	env_clear();
}

/*
 * The node's clock 1 hour behind the controller's, whose times the
 * variables are: a job of 2 hours that started just now.  END alone
 * says 3 hours from now by our clock, and Slurm would kill the job an
 * hour before the worker drained; END - START counted from the job
 * script's start is 2 hours.  In a child that is its own session
 * leader, as a batch job script is, so that the job's start is now.
 */
static void
test_detect_slurm_end_on_a_node_behind(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	if ((pid = fork()) == 0) {
		struct batch b;
		char v[32];
		double ctl = now_unix() + 3600, want = now_unix() + 7200;

		if (setsid() < 0)
			_exit(2);
		env_load("SLURM_JOB_ID=5");
		snprintf(v, sizeof v, "%.0f", ctl);
		setenv("SLURM_JOB_START_TIME", v, 1);
		snprintf(v, sizeof v, "%.0f", ctl + 7200);
		setenv("SLURM_JOB_END_TIME", v, 1);
		batch_detect(NULL, 1, 1000, &b);
		if (b.ends < want - 5 || b.ends > want + 5) {
			fprintf(stderr, "ends in %.0f s (%s), want 7200\n",
			    b.ends - now_unix(), b.ends_from);
			_exit(1);
		}
		/* the earlier of the two: a clock ahead keeps END */
		snprintf(v, sizeof v, "%.0f", now_unix() - 3600);
		setenv("SLURM_JOB_START_TIME", v, 1);
		snprintf(v, sizeof v, "%.0f", now_unix() + 3600);
		setenv("SLURM_JOB_END_TIME", v, 1);
		batch_detect(NULL, 1, 1000, &b);
		if (strcmp(b.ends_from, "SLURM_JOB_END_TIME") != 0) {
			fprintf(stderr, "ahead: %s\n", b.ends_from);
			_exit(1);
		}
		_exit(0);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slurm_time_left),
		cmocka_unit_test(test_sge_h_rt),
		cmocka_unit_test(test_lsf_time_left),
		cmocka_unit_test(test_pbs_walltime),
		cmocka_unit_test(test_detect_from_environment),
		cmocka_unit_test(test_detect_slurm_end_time),
		cmocka_unit_test(test_detect_slurm_end_on_a_node_behind),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
