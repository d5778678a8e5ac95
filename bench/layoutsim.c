/*
 * layoutsim.c - what a task layout's filesystem operations cost beside
 * the spawn of the task itself, with no daemon, no wake-ups between
 * processes and no cgroups: P processes each run their share of N
 * tasks ("true I", I the task's number) one after the other, and make
 * for each the operations of one layout.
 *
 *	layoutsim MODE DIR N P [FLUSH_EVERY]
 *
 * MODE:
 *   spawn    posix_spawn and wait only (what bench/floor -P does)
 *   outputs  the task's stdout and stderr created as files, in one
 *            directory: the least a spooler that keeps outputs does
 *   minimal  a directory per task made under a hidden name in its final
 *            shard, its stdout and stderr, its result written in place,
 *            one rename within the shard to its final name
 *   ckspool  ckspool's layout (spool-layout(5), "LIFECYCLE OF A TASK"),
 *            spoold's operations and the worker's in the one process:
 *            the assignment written in tmp/ and renamed into inbox/,
 *            claimed into running/ and read, the attempt's directory
 *            in work/ with stdout and stderr, the result written in
 *            place (the commit publishes it), the commit (running/ ->
 *            done/), the result read, done/X -> work/X/spec and
 *            work/X -> tasks/SHARD/ID
 *
 * With FLUSH_EVERY > 0 (minimal and ckspool), each process calls
 * syncfs every FLUSH_EVERY tasks before the task becomes final (a group
 * commit; ckspool's spoold and workers flush about every 20 tasks
 * together at N = 10,000, the table's ckspool:syncfs row).
 * Shards hold 1,000 IDs, as in a spool.  DIR must not exist; it is made
 * here and left as it is (removing it at once would slow the next
 * run's creates: doc/performance.md, "The machine").  Prints the wall
 * seconds from the first task to the last, then on a second line the
 * CPU seconds (user + system) of the P processes themselves, not of
 * their tasks: what the layout's operations and the spawns cost, to set
 * beside the CPU of spoold and ckworker.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "benchutil.h"

#define SHARD_IDS	1000
#define SHARDS_MAX	1024
#define SPEC_BYTES	140	/* a placed assignment of `true` */
#define RESULT_BYTES	266	/* a result of `true` */

extern char **environ;

enum mode { M_SPAWN, M_OUTPUTS, M_MINIMAL, M_CKSPOOL };

static int root, shards[SHARDS_MAX];
static char spec[SPEC_BYTES], result[RESULT_BYTES];
static long flush_every;

/* Make dir/name (it may exist) and open it. */
static int
subdir(int dir, const char *name)
{
	int fd;

	if (mkdirat(dir, name, 0700) < 0 && errno != EEXIST)
		die("mkdir", name);
	if ((fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		die("open", name);
	return fd;
}

static void
put(int dir, const char *name, const char *p, size_t len)
{
	int fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0600);

	if (fd < 0)
		die("create", name);
	if (write(fd, p, len) != (ssize_t)len)
		die("write", name);
	if (close(fd) < 0)
		die("close", name);
}

static void
get(int dir, const char *name)
{
	char buf[4096];
	int fd = openat(dir, name, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		die("open", name);
	if (read(fd, buf, sizeof buf) < 0)
		die("read", name);
	if (close(fd) < 0)
		die("close", name);
}

static void
move(int from, const char *a, int to, const char *b)
{
	if (renameat(from, a, to, b) < 0)
		die("rename", a);
}

static void
outputs(int dir, const char *out, const char *err, int fds[2])
{
	fds[0] = openat(dir, out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600);
	fds[1] = openat(dir, err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600);
	if (fds[0] < 0 || fds[1] < 0)
		die("create", out);
}

static void
flush(long i)
{
	if (flush_every > 0 && i % flush_every == 0 && syncfs(root) < 0)
		die("syncfs", "the directory");
}

/* Run "true I" with fds (or nothing) as its stdout and stderr. */
static void
run(long i, const int *fds)
{
	posix_spawn_file_actions_t fa;
	char arg[24], *argv[] = { "true", arg, NULL };
	int status, rc;
	pid_t pid;

	snprintf(arg, sizeof arg, "%ld", i);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null",
	    O_RDONLY, 0);
	if (fds != NULL) {
		posix_spawn_file_actions_adddup2(&fa, fds[0], STDOUT_FILENO);
		posix_spawn_file_actions_adddup2(&fa, fds[1], STDERR_FILENO);
	}
	rc = posix_spawnp(&pid, "true", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		errno = rc;
		die("posix_spawnp", "true");
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid", "true");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "layoutsim: true %ld failed (0x%x)\n", i,
		    status);
		exit(1);
	}
}

static void
task(enum mode m, long i, int w[5])
{
	char a[64], b[64], c[64];
	int shard = shards[i / SHARD_IDS], fds[2], t;

	switch (m) {
	case M_SPAWN:
		run(i, NULL);
		return;
	case M_OUTPUTS:
		snprintf(a, sizeof a, "%ld.out", i);
		snprintf(b, sizeof b, "%ld.err", i);
		outputs(w[4], a, b, fds);
		run(i, fds);
		break;
	case M_MINIMAL:
		snprintf(a, sizeof a, ".%ld", i);
		snprintf(b, sizeof b, "%ld", i);
		t = subdir(shard, a);
		outputs(t, "stdout", "stderr", fds);
		run(i, fds);
		put(t, "result", result, sizeof result);
		close(t);
		flush(i);
		move(shard, a, shard, b);
		break;
	case M_CKSPOOL:
		/* w: tmp/, inbox/, running/, done/, work/ */
		snprintf(a, sizeof a, "p.%ld", i);
		snprintf(b, sizeof b, "%ld.1", i);
		put(w[0], a, spec, sizeof spec);	/* spoold places */
		move(w[0], a, w[1], b);
		move(w[1], b, w[2], b);			/* the worker claims */
		get(w[2], b);
		t = subdir(w[4], b);
		outputs(t, "stdout", "stderr", fds);
		run(i, fds);
		put(t, "result", result, sizeof result);
		close(t);
		flush(i);
		move(w[2], b, w[3], b);			/* commits */
		snprintf(c, sizeof c, "%ld.1/result", i);
		get(w[4], c);				/* spoold collects */
		snprintf(c, sizeof c, "%ld.1/spec", i);
		move(w[3], b, w[4], c);
		snprintf(c, sizeof c, "%ld", i);
		move(w[4], b, shard, c);
		break;
	}
	if (close(fds[0]) < 0 || close(fds[1]) < 0)
		die("close", "outputs");
}

int
main(int argc, char **argv)
{
	static const char *const names[] = { "spawn", "outputs", "minimal",
	    "ckspool" };
	static const char *const subs[] = { "tmp", "inbox", "running", "done",
	    "work" };
	long n, p, k, i;
	int m, w[5], tasks, status, j, cpu[2];
	char name[32];
	double t0, s, cpu_total = 0;
	pid_t pid;

	if (argc < 5 || argc > 6)
		goto usage;
	for (m = 0; m < 4 && strcmp(argv[1], names[m]) != 0; m++)
		;
	n = atol(argv[3]);
	p = atol(argv[4]);
	flush_every = argc == 6 ? atol(argv[5]) : 0;
	if (m == 4 || n < 1 || p < 1 || p > 64 || flush_every < 0 ||
	    n / SHARD_IDS >= SHARDS_MAX)
		goto usage;
	memset(spec, 'x', sizeof spec);
	memset(result, 'y', sizeof result);
	if (mkdir(argv[2], 0700) < 0)
		die("mkdir", argv[2]);
	if ((root = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		die("open", argv[2]);
	tasks = subdir(root, "tasks");
	for (k = 0; k <= n / SHARD_IDS; k++) {
		snprintf(name, sizeof name, "%ld", k);
		shards[k] = subdir(tasks, name);
	}
	/* each process's own CPU seconds, a double each (atomic writes) */
	if (pipe(cpu) < 0)
		die("pipe", "CPU times");
	t0 = now_s();
	for (k = 0; k < p; k++) {
		if ((pid = fork()) < 0)
			die("fork", "a process");
		if (pid > 0)
			continue;
		snprintf(name, sizeof name, "w%ld", k);
		w[4] = subdir(root, name);	/* its own directories */
		for (j = 0; j < 4; j++)
			w[j] = subdir(w[4], subs[j]);
		w[4] = subdir(w[4], subs[4]);
		for (i = k; i < n; i += p)
			task((enum mode)m, i, w);
		s = cpu_s(RUSAGE_SELF);
		if (write(cpu[1], &s, sizeof s) != (ssize_t)sizeof s)
			die("write", "its CPU time");
		_exit(0);
	}
	(void)close(cpu[1]);
	for (k = 0; k < p; k++) {
		if (wait(&status) < 0)
			die("wait", "a process");
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "layoutsim: a process failed\n");
			return 1;
		}
	}
	printf("%.4f\n", now_s() - t0);
	for (k = 0; k < p; k++) {
		if (read(cpu[0], &s, sizeof s) != (ssize_t)sizeof s) {
			fprintf(stderr, "layoutsim: a process's CPU time "
			    "is missing\n");
			return 1;
		}
		cpu_total += s;
	}
	printf("%.6f\n", cpu_total);
	return 0;
usage:
	fprintf(stderr, "usage: layoutsim spawn|outputs|minimal|ckspool DIR "
	    "N P [FLUSH_EVERY]\n");
	return 2;
}
