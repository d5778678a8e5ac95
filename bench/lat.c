/*
 * lat.c - single-task latency of ckspool as a user sees it:
 *
 *	spool wait $(spool submit -- CMD...)
 *
 * without a shell in between (a shell would add its own fork and exec
 * to every sample).
 *
 *	lat -r R [-p MS] SPOOL_BIN -- CMD [ARG...]
 *
 * Runs R times, one after the other (-p: with a pause of MS ms before
 * each, as a user who submits now and then), and prints each sample in
 * ms.
 * "spool wait" exits 0 only if the task ran and exited 0, so every
 * sample is a verified one; any failure ends the run with exit 1.
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ARGS_MAX 64

extern char **environ;

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void
die(const char *what, const char *obj, int err)
{
	fprintf(stderr, "lat: %s: %s: %s\n", what, obj, strerror(err));
	exit(1);
}

/* Run argv; with out, capture its stdout (first line) there. */
static void
run(char **argv, char *out, size_t size)
{
	posix_spawn_file_actions_t fa;
	int p[2] = { -1, -1 }, status, rc;
	size_t len = 0;
	ssize_t r;
	pid_t pid;

	posix_spawn_file_actions_init(&fa);
	if (out) {
		if (pipe(p) < 0)
			die("pipe", argv[0], errno);
		posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO);
		posix_spawn_file_actions_addclose(&fa, p[0]);
		posix_spawn_file_actions_addclose(&fa, p[1]);
	}
	rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0)
		die("posix_spawn", argv[0], rc);
	if (out) {
		close(p[1]);
		while (len + 1 < size &&
		    (r = read(p[0], out + len, size - 1 - len)) != 0) {
			if (r < 0) {
				if (errno == EINTR)
					continue;
				die("read", argv[0], errno);
			}
			len += (size_t)r;
		}
		out[len] = 0;
		out[strcspn(out, "\n")] = 0;
		close(p[0]);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid", argv[0], errno);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "lat: %s %s failed (status 0x%x)\n", argv[0],
		    argv[1], status);
		exit(1);
	}
}

int
main(int argc, char **argv)
{
	char *submit[ARGS_MAX], *wait[4], id[64];
	long reps = 0, pause_ms = 0, i;
	struct timespec ts;
	int c, n, k;
	double t0;

	while ((c = getopt(argc, argv, "+r:p:")) != -1) {
		if (c == 'r')
			reps = atol(optarg);
		else if (c == 'p')
			pause_ms = atol(optarg);
		else
			goto usage;
	}
	if (pause_ms < 0 || pause_ms > 60000)
		goto usage;
	if (reps < 1 || argc - optind < 3 || strcmp(argv[optind + 1], "--"))
		goto usage;
	n = 0;
	submit[n++] = argv[optind];
	submit[n++] = "submit";
	submit[n++] = "--";
	for (k = optind + 2; k < argc && n < ARGS_MAX - 1; k++)
		submit[n++] = argv[k];
	submit[n] = NULL;
	wait[0] = argv[optind];
	wait[1] = "wait";
	wait[2] = id;
	wait[3] = NULL;
	for (i = 0; i < reps; i++) {
		ts.tv_sec = pause_ms / 1000;
		ts.tv_nsec = pause_ms % 1000 * 1000000L;
		while (pause_ms && nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		t0 = now_ms();
		run(submit, id, sizeof id);
		if (id[0] == 0) {
			fprintf(stderr, "lat: spool submit printed no ID\n");
			return 1;
		}
		run(wait, NULL, 0);
		printf("%.4f\n", now_ms() - t0);
	}
	return 0;
usage:
	fprintf(stderr, "usage: lat -r R [-p MS] SPOOL_BIN -- CMD [ARG...]\n");
	return 2;
}
