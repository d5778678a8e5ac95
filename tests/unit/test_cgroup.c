/*
 * test_cgroup.c - ckworker/cgroup.c: finding the worker's own cgroup in
 * /proc/self/cgroup text, for cgroup v2 (the "0::" line) and for the
 * v1 memory hierarchy (the line whose controllers include "memory",
 * alone or co-mounted; or "cpuset", for cpuset.c), on the shapes Slurm,
 * systemd, containers and hybrid hosts produce, and refusing what is absent or too long; and
 * the v1 pool of ended tasks' cgroups (on plain files standing in for
 * cgroupfs): a cgroup with an OOM kill counted is not kept; the
 * warning, once, when swap is not accounted on a host with swap; and
 * the guard's kill of a dead worker's cgroups, every level of them,
 * but the caller.
 */
#include <signal.h>
#include <sys/wait.h>

#include "unit.h"
#include "../../ckworker/cgroup.h"

static void
test_path_of(void **state)
{
	static const struct {
		const char *text;
		int version;
		const char *want;	/* NULL: absent */
		const char *ctl;	/* v1's controller; NULL: memory */
	} rows[] = {
		/* pure v2, as under systemd or Slurm's cgroup/v2 */
		{ "0::/system.slice/slurmstepd.scope/job_42/step_batch/user/"
		  "task_0\n", 2, "/system.slice/slurmstepd.scope/job_42/"
		  "step_batch/user/task_0", NULL },
		{ "0::/\n", 2, "/", NULL },
		{ "0::/\n", 1, NULL, NULL },
		/* v1 with a hybrid v2 line, as on this test machine */
		{ "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/abc\n"
		  "3:cpuset:/\n0::/\n", 1, "/process_api/abc", NULL },
		{ "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/abc\n"
		  "0::/\n", 2, "/", NULL },
		/* co-mounted controllers; memory is a whole word */
		{ "5:cpu,cpuacct,memory:/slurm/uid_0/job_7/step_batch\n", 1,
		  "/slurm/uid_0/job_7/step_batch", NULL },
		{ "5:memory_pressure:/x\n6:hugetlb:/y\n", 1, NULL, NULL },
		{ "7:blkio:/a\n", 1, NULL, NULL },
		/* no trailing newline */
		{ "4:memory:/last", 1, "/last", NULL },
		{ "", 2, NULL, NULL },
		{ "garbage\n", 1, NULL, NULL },
		/* the cpuset hierarchy (cpuset.c), alone or co-mounted */
		{ "9:name=systemd:/\n4:memory:/process_api/abc\n"
		  "3:cpuset:/\n0::/\n", 1, "/", "cpuset" },
		{ "4:cpuset,cpu,cpuacct:/slurm/uid_0/job_7/step_0\n", 1,
		  "/slurm/uid_0/job_7/step_0", "cpuset" },
		{ "4:memory:/m\n", 1, NULL, "cpuset" },
		{ "0::/x\n", 2, "/x", "cpuset" },
	};
	char out[256];
	const char *got;
	size_t i;
	int nfail = 0;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		memset(out, 'x', sizeof out);
		got = cgroup_path_of(rows[i].text, rows[i].version,
		    rows[i].ctl ? rows[i].ctl : "memory", out, sizeof out);
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
	assert_null(cgroup_path_of(text, 2, "memory", out, sizeof out));
	assert_string_equal(cgroup_path_of("0::/short\n", 2, "memory", out,
	    sizeof out),
	    "/short");
}

/* One file of a fake cgroup, dir/name/file. */
static void
fake_file(const char *dir, const char *name, const char *file,
    const char *text)
{
	char *path = xasprintf("%s/%s/%s", dir, name, file);

	assert_int_equal(unit_write_file(path, text, strlen(text)), 0);
	free(path);
}

/* A v1 task cgroup dir/name, as cgroupfs shows one its task left. */
static void
fake_cgroup(const char *dir, const char *name, const char *oom_control)
{
	char *path = xasprintf("%s/%s", dir, name);

	assert_int_equal(mkdir(path, 0755), 0);
	free(path);
	fake_file(dir, name, "cgroup.procs", "");
	fake_file(dir, name, "memory.usage_in_bytes", "4096\n");
	fake_file(dir, name, "memory.max_usage_in_bytes", "1048576\n");
	fake_file(dir, name, "memory.oom_control", oom_control);
}

/*
 * A task's cgroup joins the pool only if no OOM kill is counted in it
 * now: one counted after the task's stats were read (the rest of its
 * group killed at the limit) would be the next task's, killed at its
 * first sample.  (It once checked only the processes and the usage.)
 */
static void
test_recycle_refuses_an_oom_kill(void **state)
{
	struct unit_dir *f = *state;
	struct stat st;
	char why[128];

	assert_int_equal(cgroup_fake_root(f->dir, 1), 0);
	fake_cgroup(f->dir, "1.1", "oom_kill_disable 0\nunder_oom 0\n"
	    "oom_kill 1\n");
	assert_int_equal(cgroup_task_recycle("1.1", 1 << 30), -1);
	assert_int_equal(fstatat(f->dfd, "1.1", &st, 0), 0);	/* not taken */

	fake_cgroup(f->dir, "2.1", "oom_kill_disable 0\nunder_oom 0\n"
	    "oom_kill 0\n");
	assert_int_equal(cgroup_task_recycle("2.1", 1 << 30), 0);
	assert_int_equal(fstatat(f->dfd, "free.0", &st, 0), 0);	/* pooled */
	/* and taken by the next task with that limit */
	assert_int_equal(cgroup_task_create("3.1", 1 << 30, why, sizeof why), 0);
	assert_int_equal(fstatat(f->dfd, "3.1", &st, 0), 0);
	assert_int_equal(fstatat(f->dfd, "free.0", &st, 0), -1);
}

/*
 * Swap not accounted (no memory.swap.max, v2; no memory.memsw.*, v1)
 * on a host with swap: a task can swap past its memory limit.  That is
 * said once, at start; a host without swap, or a kernel with the knob,
 * stays quiet.  (It once wrote nothing and said nothing.)
 */
static void
test_swap_not_accounted_said_once(void **state)
{
	struct unit_dir *f = *state;
	char *path = xasprintf("%s/memory.swap.max", f->dir);

	assert_int_equal(cgroup_fake_root(f->dir, 2), 0);
	assert_int_equal(cgroup_swap_check(0), 0);		/* no swap */
	assert_int_equal(unit_write_file(path, "max\n", 4), 0);
	assert_int_equal(cgroup_swap_check(1 << 30), 0);	/* the knob */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(cgroup_swap_check(1 << 30), 1);	/* said */
	assert_int_equal(cgroup_swap_check(UINT64_MAX), 0);	/* once */
	free(path);
}

/* A child that waits to be killed. */
static pid_t
sleeper(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

static void
procs_file(const char *dir, const char *sub, const char *text)
{
	char *d = xasprintf("%s/%s", dir, sub);
	char *path = xasprintf("%s/cgroup.procs", d);

	(void)mkdir(d, 0700);
	assert_int_equal(unit_write_file(path, text, strlen(text)), 0);
	free(path);
	free(d);
}

/*
 * The guard (ckworker/guard.c) kills everything in a dead worker's
 * cgroups: each task's, those below them, the worker's own leaf, where
 * the guard itself lives (v2) and is passed over.  It counts the
 * processes it found.  (Before the guard nothing did this until the
 * next worker on the host swept them.)
 */
static void
test_kill_tree_kills_every_level_but_the_caller(void **state)
{
	struct unit_dir *f = *state;
	pid_t a = sleeper(), b = sleeper();
	char *text;
	int st;

	text = xasprintf("%ld\n", (long)getpid());
	procs_file(f->dir, ".", "");
	procs_file(f->dir, "worker", text);	/* the guard's leaf */
	free(text);
	text = xasprintf("%ld\n", (long)a);
	procs_file(f->dir, "1.1", text);
	free(text);
	text = xasprintf("%ld\n", (long)b);
	procs_file(f->dir, "1.1/sub", text);
	free(text);
	procs_file(f->dir, "free.0", "");
	assert_int_equal(cgroup_kill_tree(f->dir), 2);
	assert_int_equal(waitpid(a, &st, 0), a);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	assert_int_equal(waitpid(b, &st, 0), b);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	/* emptied (the kernel's files would be): nothing found */
	procs_file(f->dir, "1.1", "");
	procs_file(f->dir, "1.1/sub", "");
	assert_int_equal(cgroup_kill_tree(f->dir), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_of),
		cmocka_unit_test(test_path_too_long),
		cmocka_unit_test_setup_teardown(test_recycle_refuses_an_oom_kill,
		    unit_dir_setup, unit_dir_teardown),
		cmocka_unit_test_setup_teardown(test_swap_not_accounted_said_once,
		    unit_dir_setup, unit_dir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_kill_tree_kills_every_level_but_the_caller,
		    unit_dir_setup, unit_dir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
