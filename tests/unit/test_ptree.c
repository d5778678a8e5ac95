/*
 * test_ptree.c - ckworker/ptree.c: a task's tree followed through a
 * snapshot of /proc, here a snapshot made up in memory (no process is
 * read or signalled).  Every member is followed, however many: a task
 * of more than 4096 processes had those past the 4096th left out of
 * its memory sum and alive after its end (ptree_signal kills the
 * members only).  A member whose pid was taken by another process
 * (another start time) is not one any more.  And what the worker reads
 * of a task's main process that it gives up (run.c: give_up), here of
 * a real child: how it waits and what wait4 would have said of it.
 */
#include "unit.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

#define HOG	(16u << 20)	/* bytes the child touches */

/* CPU seconds of this process so far */
static double
cpu_now(void)
{
	struct timespec ts;

	assert_int_equal(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts), 0);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * A live child that used CPU and memory, then waits in pause(): its
 * state and its usage as wait4 would give them; once it is reaped,
 * both say why they cannot.
 */
static void
test_live_process_wait_and_usage(void **state)
{
	struct rusage ru;
	char how[128], want[96], c = 0;
	int fd[2], status, tries;
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(fd), 0);
	if ((pid = fork()) == 0) {
		char *p = malloc(HOG);
		double t0 = cpu_now();

		memset(p, 1, HOG);
		while (cpu_now() - t0 < 0.1)
			;
		(void)!write(fd[1], p, 1);
		for (;;)
			pause();
	}
	assert_true(pid > 0);
	assert_int_equal(read(fd[0], &c, 1), 1);
	/* (from its write to its pause: running, then sleeping) */
	for (tries = 0; tries < 1000 && ptree_kernel_wait(pid, how,
	    sizeof how) != 'S'; tries++)
		(void)nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	assert_int_equal(ptree_kernel_wait(pid, how, sizeof how), 'S');
	assert_true(strncmp(how, "state S", 7) == 0);
	assert_int_equal(ptree_usage(pid, &ru), 0);
	assert_true(ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec +
	    ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec >= 50000);
	assert_true(ru.ru_maxrss >= (long)(HOG >> 10));
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(ptree_kernel_wait(pid, how, sizeof how), 0);
	snprintf(want, sizeof want, "state unknown: /proc/%ld/stat: %s",
	    (long)pid, strerror(ENOENT));
	assert_string_equal(how, want);
	assert_int_equal(ptree_usage(pid, &ru), -1);
	assert_int_equal(errno, ENOENT);
	close(fd[0]);
	close(fd[1]);
}

/*
 * ptree_env_has (the guard's look for what left a task's group): an
 * entry of a child's environment as exec gave it, whole: not a prefix,
 * nor another value; a zombie's environment cannot be read (ESRCH),
 * nor a reaped child's (ENOENT).
 */
static void
test_environment_entry(void **state)
{
	char *const argv[] = { (char *)"sleep", (char *)"30", NULL };
	char *const envp[] = { (char *)"A=1",
	    (char *)"SPOOL_WORKER=w1-abc", (char *)"B=2", NULL };
	int status, tries;
	pid_t pid;

	(void)state;
	if ((pid = fork()) == 0) {
		execve("/bin/sleep", argv, envp);
		_exit(127);
	}
	assert_true(pid > 0);
	/* (the fork's copy of ours until the exec) */
	for (tries = 0; tries < 2000 &&
	    ptree_env_has(pid, "SPOOL_WORKER=w1-abc") != 1; tries++)
		(void)nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	assert_int_equal(ptree_env_has(pid, "SPOOL_WORKER=w1-abc"), 1);
	assert_int_equal(ptree_env_has(pid, "B=2"), 1);
	assert_int_equal(ptree_env_has(pid, "SPOOL_WORKER=w1-ab"), 0);
	assert_int_equal(ptree_env_has(pid, "SPOOL_WORKER=w1-abcd"), 0);
	assert_int_equal(ptree_env_has(pid, "SPOOL_WORKER="), 0);
	assert_int_equal(ptree_env_has(pid, "A=2"), 0);
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitid(P_PID, (id_t)pid, &(siginfo_t){ 0 },
	    WEXITED | WNOWAIT), 0);
	errno = 0;
	assert_int_equal(ptree_env_has(pid, "SPOOL_WORKER=w1-abc"), -1);
	assert_int_equal(errno, ESRCH);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(ptree_env_has(pid, "SPOOL_WORKER=w1-abc"), -1);
	assert_int_equal(errno, ENOENT);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_member_followed),
		cmocka_unit_test(test_extra_members),
		cmocka_unit_test(test_live_process_wait_and_usage),
		cmocka_unit_test(test_environment_entry),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
