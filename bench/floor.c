/*
 * floor.c - the spawn floor: what running a command costs with nothing
 * around it, measured the way the benchmark measures ckspool.
 *
 *	floor -P P -- CMD [ARG...] < INPUTS
 *		throughput: one run per line of standard input, that line
 *		appended as the last argument (what "spool map" and
 *		"xargs -n1" run for it), P at a time; prints the wall
 *		seconds, from the first spawn (the input is read before),
 *		then on a second line the CPU seconds (user + system) the
 *		runs themselves used, from getrusage(RUSAGE_CHILDREN): what
 *		the tasks cost, to set beside the CPU of ckspool's tasks;
 *		and on a third line the CPU seconds of floor itself, from
 *		getrusage(RUSAGE_SELF): what spawning and reaping them cost
 *		the spawner, to set beside the CPU of spoold and ckworker
 *	floor -l R [-p MS] -- CMD [ARG...]
 *		latency: R runs of the command as given, one after the
 *		other (-p: each after a pause of MS ms, the spool's idle
 *		latency row beside it); prints each in ms
 *	floor -f R [-p MS] DIR
 *		the disk: R times what a durable submission asks of it, a
 *		small file created in DIR, written, fsync'ed, renamed and
 *		DIR fsync'ed, one after the other (-p: after a pause of MS
 *		ms each); prints each in ms.  The files are left in DIR.
 *
 * The throughput floor runs the very command lines ckspool runs for the
 * same input: "true 17", not "true" (coreutils' true with one argument
 * looks for --help and --version, and so sets up its locale first).
 *
 * Each run is posix_spawnp() then waitpid(), stdin from /dev/null,
 * stdout and stderr inherited.  A run that does not exit 0 is an error
 * (exit 1), so a broken floor cannot pass as a fast one.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "benchutil.h"

extern char **environ;

static pid_t
spawn(char **argv, posix_spawn_file_actions_t *fa)
{
	pid_t pid;
	int rc;

	rc = posix_spawnp(&pid, argv[0], fa, NULL, argv, environ);
	if (rc != 0) {
		fprintf(stderr, "floor: posix_spawnp: %s: %s\n", argv[0],
		    strerror(rc));
		exit(1);
	}
	return pid;
}

static void
reap(void)
{
	int status;

	while (waitpid(-1, &status, 0) < 0) {
		if (errno == EINTR)
			continue;
		fprintf(stderr, "floor: waitpid: %s\n", strerror(errno));
		exit(1);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "floor: a run failed (status 0x%x)\n", status);
		exit(1);
	}
}

static void
pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000L };

	while (ms > 0 && nanosleep(&ts, &ts) < 0)
		if (errno != EINTR)
			die("nanosleep", "pause");
}

/* One durable small file in dir (an open descriptor): what it took, ms. */
static double
flush_sample(int dir, const char *dirname, long i)
{
	static const char body[128] = "bundle: 1\n";
	char tmp[32], name[32];
	double t0 = now_s();
	int fd;

	snprintf(tmp, sizeof tmp, ".tmp.%ld", i);
	snprintf(name, sizeof name, "%ld", i);
	if ((fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0600)) < 0)
		die("open", tmp);
	if (write(fd, body, sizeof body) != (ssize_t)sizeof body)
		die("write", tmp);
	if (fsync(fd) < 0)
		die("fsync", tmp);
	if (close(fd) < 0)
		die("close", tmp);
	if (renameat(dir, tmp, dir, name) < 0)
		die("rename", tmp);
	if (fsync(dir) < 0)
		die("fsync", dirname);
	return (now_s() - t0) * 1e3;
}

/*
 * The argument vectors of every run: argv with one line of standard
 * input appended, in input order; *np gets their count.
 */
static char ***
read_runs(char **argv, long *np)
{
	char ***runs = NULL, *line = NULL;
	size_t cap = 0, argc = 0, len;
	ssize_t got;
	long n = 0;

	while (argv[argc] != NULL)
		argc++;
	while ((got = getline(&line, &len, stdin)) >= 0) {
		if (got > 0 && line[got - 1] == '\n')
			line[got - 1] = '\0';
		if ((size_t)n == cap) {
			cap = cap ? 2 * cap : 1024;
			runs = realloc(runs, cap * sizeof *runs);
			if (runs == NULL)
				goto nomem;
		}
		runs[n] = malloc((argc + 2) * sizeof **runs);
		if (runs[n] == NULL || (runs[n][argc] = strdup(line)) == NULL)
			goto nomem;
		memcpy(runs[n], argv, argc * sizeof *argv);
		runs[n++][argc + 1] = NULL;
	}
	if (ferror(stdin)) {
		fprintf(stderr, "floor: read: standard input: %s\n",
		    strerror(errno));
		exit(1);
	}
	free(line);
	*np = n;
	return runs;
nomem:
	fprintf(stderr, "floor: out of memory\n");
	exit(1);
}

static void
usage(void)
{
	fprintf(stderr, "usage: floor -P P -- CMD [ARG...] < INPUTS\n"
	    "       floor -l R [-p MS] -- CMD [ARG...]\n"
	    "       floor -f R [-p MS] DIR\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	posix_spawn_file_actions_t fa;
	char ***runs;
	long n = 0, par = 0, lat = 0, flush = 0, pause = 0, i, running = 0;
	double t0;
	int c, dir;

	while ((c = getopt(argc, argv, "+P:l:f:p:")) != -1) {
		switch (c) {
		case 'P': par = atol(optarg); break;
		case 'l': lat = atol(optarg); break;
		case 'f': flush = atol(optarg); break;
		case 'p': pause = atol(optarg); break;
		default: usage();
		}
	}
	if (optind >= argc || (par > 0) + (lat > 0) + (flush > 0) != 1 ||
	    pause < 0 || pause > 60000 || (par > 0 && pause > 0))
		usage();
	argv += optind;
	if (flush > 0) {
		if ((dir = open(argv[0], O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
			die("open", argv[0]);
		for (i = 0; i < flush; i++) {
			pause_ms(pause);
			printf("%.4f\n", flush_sample(dir, argv[0], i));
		}
		return 0;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null",
	    O_RDONLY, 0);
	if (lat > 0) {
		for (i = 0; i < lat; i++) {
			pause_ms(pause);
			t0 = now_s();
			spawn(argv, &fa);
			reap();
			printf("%.4f\n", (now_s() - t0) * 1e3);
		}
		return 0;
	}
	runs = read_runs(argv, &n);
	if (n == 0) {
		fprintf(stderr, "floor: no input lines\n");
		return 1;
	}
	t0 = now_s();
	for (i = 0; i < n; i++) {
		if (running == par) {
			reap();
			running--;
		}
		spawn(runs[i], &fa);
		running++;
	}
	while (running-- > 0)
		reap();
	printf("%.4f\n", now_s() - t0);
	printf("%.6f\n", cpu_s(RUSAGE_CHILDREN));
	printf("%.6f\n", cpu_s(RUSAGE_SELF));
	return 0;
}
