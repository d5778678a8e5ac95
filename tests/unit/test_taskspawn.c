/*
 * test_taskspawn.c - ckworker/taskspawn.c: a task's process started by
 * clone(CLONE_VM | CLONE_VFORK) sets itself up in full before it execs
 * (its own process group, the signals asked for at their defaults (the
 * others' dispositions inherited) and none blocked, stdout and stderr the given files, stdin /dev/null, its
 * cwd, its CPUs, and a write of "0" to the cgroup.procs descriptor it
 * is given), and a step that fails in the child comes back as that
 * step's name and errno, the child reaped (no zombie left), the
 * caller's memory and signal mask untouched.
 */
#include "unit.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../ckworker/taskspawn.h"

static char dir[] = "/tmp/test_taskspawn.XXXXXX";

static int
setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int
teardown(void **state)
{
	char cmd[64];

	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static int
open_file(const char *name, int flags)
{
	char path[128];
	int fd;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	fd = open(path, flags | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	return fd;
}

static char *
slurp(const char *name)
{
	static char buf[4096];
	ssize_t n;
	int fd = open_file(name, O_RDONLY);

	n = read(fd, buf, sizeof buf - 1);
	assert_true(n >= 0);
	buf[n] = 0;
	close(fd);
	return buf;
}

static int
wait_exit(pid_t pid)
{
	int st;

	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* what the probe prints, one "key value" a line */
static const char probe[] =
    "echo \"pgid $(cut -d' ' -f5 /proc/self/stat) $$\"\n"
    "echo \"cwd $(pwd)\"\n"
    "echo \"stdin $(readlink /proc/self/fd/0)\"\n"
    "echo \"ignored $(awk '/^SigIgn/ {print $2}' /proc/self/status)\"\n"
    "echo \"blocked $(awk '/^SigBlk/ {print $2}' /proc/self/status)\"\n"
    "echo \"cpus $(awk '/^Cpus_allowed_list/ {print $2}' /proc/self/status)\"\n"
    "echo \"env $PROBE\"\n"
    "echo err >&2\n";

static void
test_child_sets_itself_up_in_full(void **state)
{
	char *argv[] = { "/bin/sh", "-c", (char *)probe, NULL };
	char *env[] = { "PROBE=seen", "PATH=/usr/bin:/bin", NULL };
	char line[256], cg[16];
	const char *what = "x";
	struct spawn_plan p;
	sigset_t dfl, mask, before, after;
	cpu_set_t one;
	pid_t pid;
	int out, err, cgfd, csfd, dvfd, cpu;
	char *text, *p_ign;
	unsigned long long ign;

	(void)state;
	out = open_file("out", O_WRONLY | O_CREAT | O_TRUNC);
	err = open_file("err", O_WRONLY | O_CREAT | O_TRUNC);
	/* stands in for cgroup.procs: the child writes "0" into it */
	cgfd = open_file("procs", O_WRONLY | O_CREAT | O_TRUNC);
	/* and for its cpuset's (cpuset.c) */
	csfd = open_file("cpuset-procs", O_WRONLY | O_CREAT | O_TRUNC);
	/* and its devices cgroup's (devices.c) */
	dvfd = open_file("devices-procs", O_WRONLY | O_CREAT | O_TRUNC);
	/* SIGPIPE ignored and SIGTERM blocked here, as in the worker; and
	 * SIGINT ignored (a background job's), SIGUSR2 ignored too */
	assert_true(signal(SIGPIPE, SIG_IGN) != SIG_ERR);
	assert_true(signal(SIGINT, SIG_IGN) != SIG_ERR);
	assert_true(signal(SIGUSR2, SIG_IGN) != SIG_ERR);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	assert_int_equal(sigprocmask(SIG_BLOCK, &mask, &before), 0);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	sigaddset(&dfl, SIGINT);
	/* the last CPU this process may use */
	assert_int_equal(sched_getaffinity(0, sizeof one, &one), 0);
	for (cpu = CPU_SETSIZE - 1; cpu > 0 && !CPU_ISSET(cpu, &one); cpu--)
		;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	p = (struct spawn_plan){ .exe = "/bin/sh", .argv = argv, .env = env,
	    .cwd = dir, .out = out, .err = err, .cgroup_fd = cgfd,
	    .cpuset_fd = csfd, .devices_fd = dvfd, .extra = -1, .cpus = &one,
	    .cpus_size = sizeof one, .dfl = &dfl };
	assert_int_equal(spawn_task(&pid, &p, &what), 0);
	assert_true(pid > 0);
	assert_string_equal(what, "");
	assert_int_equal(wait_exit(pid), 0);
	/* the caller's mask is as it was */
	assert_int_equal(sigprocmask(SIG_SETMASK, NULL, &after), 0);
	assert_int_equal(sigismember(&after, SIGTERM), 1);
	assert_int_equal(sigismember(&after, SIGINT), 0);
	text = slurp("out");
	snprintf(line, sizeof line, "pgid %ld %ld\n", (long)pid, (long)pid);
	assert_non_null(strstr(text, line));
	snprintf(line, sizeof line, "cwd %s\n", dir);
	assert_non_null(strstr(text, line));
	assert_non_null(strstr(text, "stdin /dev/null\n"));
	/* those asked for at their defaults; SIGUSR2 inherited, as a spawn
	 * inherits what it is not asked to reset (SigIgn: bit sig - 1) */
	assert_non_null(p_ign = strstr(text, "ignored "));
	ign = strtoull(p_ign + 8, NULL, 16);
	assert_int_equal(ign & (1ull << (SIGPIPE - 1)), 0);
	assert_int_equal(ign & (1ull << (SIGINT - 1)), 0);
	assert_int_not_equal(ign & (1ull << (SIGUSR2 - 1)), 0);
	assert_non_null(strstr(text, "blocked 0000000000000000\n"));
	snprintf(line, sizeof line, "cpus %d\n", cpu);
	assert_non_null(strstr(text, line));
	assert_non_null(strstr(text, "env seen\n"));
	assert_string_equal(slurp("err"), "err\n");
	snprintf(cg, sizeof cg, "%s", slurp("procs"));
	assert_string_equal(cg, "0");
	snprintf(cg, sizeof cg, "%s", slurp("cpuset-procs"));
	assert_string_equal(cg, "0");
	snprintf(cg, sizeof cg, "%s", slurp("devices-procs"));
	assert_string_equal(cg, "0");
	/* nothing else to reap */
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	assert_int_equal(sigprocmask(SIG_SETMASK, &before, NULL), 0);
	assert_true(signal(SIGPIPE, SIG_DFL) != SIG_ERR);
	assert_true(signal(SIGINT, SIG_DFL) != SIG_ERR);
	assert_true(signal(SIGUSR2, SIG_DFL) != SIG_ERR);
	close(out);
	close(err);
	close(cgfd);
	close(csfd);
	close(dvfd);
}

/* A step that fails: its name and errno, the child reaped. */
static void
fails_at(const char *exe, const char *cwd, int cgroup_fd, int cpuset_fd,
    int devices_fd, const char *step, int errnum)
{
	char *argv[] = { (char *)exe, NULL };
	char *env[] = { NULL };
	const char *what = NULL;
	struct spawn_plan p;
	sigset_t dfl;
	pid_t pid = 12345;
	int out;

	out = open_file("out", O_WRONLY | O_CREAT | O_TRUNC);
	sigemptyset(&dfl);
	p = (struct spawn_plan){ .exe = exe, .argv = argv, .env = env,
	    .cwd = cwd, .out = out, .err = out, .cgroup_fd = cgroup_fd,
	    .cpuset_fd = cpuset_fd, .devices_fd = devices_fd, .extra = -1,
	    .dfl = &dfl };
	assert_int_equal(spawn_task(&pid, &p, &what), errnum);
	assert_int_equal(pid, 0);
	assert_non_null(what);
	assert_string_equal(what, step);
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);	/* reaped */
	close(out);
}

static void
test_failed_steps_are_named(void **state)
{
	char garbage[128], missing[128];
	int fd, ro;

	(void)state;
	snprintf(garbage, sizeof garbage, "%s/garbage", dir);
	fd = open(garbage, O_WRONLY | O_CREAT | O_TRUNC, 0700);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "not a program\n", 14), 14);
	close(fd);
	snprintf(missing, sizeof missing, "%s/missing", dir);
	fails_at("/nonexistent/program", dir, -1, -1, -1, "exec", ENOENT);
	fails_at(garbage, dir, -1, -1, -1, "exec", ENOEXEC);
	fails_at("/bin/true", missing, -1, -1, -1, "cwd", ENOENT);
	/* a cgroup.procs that cannot be written (opened read-only) */
	ro = open_file("out", O_RDONLY);
	fails_at("/bin/true", dir, ro, -1, -1, "cgroup", EBADF);
	fails_at("/bin/true", dir, -1, ro, -1, "cpuset", EBADF);
	fails_at("/bin/true", dir, -1, -1, ro, "devices", EBADF);
	close(ro);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_child_sets_itself_up_in_full),
		cmocka_unit_test(test_failed_steps_are_named),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
