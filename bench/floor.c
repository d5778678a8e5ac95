/*
 * floor.c - the spawn floor: what running a command costs with nothing
 * around it, measured the way the benchmark measures ckspool.
 *
 *	floor -n N -P P -- CMD [ARG...]	throughput: N runs, P at a time;
 *					prints the wall seconds
 *	floor -l R -- CMD [ARG...]	latency: R runs one after the
 *					other; prints each in ms
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

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
usage(void)
{
	fprintf(stderr, "usage: floor -n N -P P -- CMD [ARG...]\n"
	    "       floor -l R -- CMD [ARG...]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	posix_spawn_file_actions_t fa;
	long n = 0, par = 1, lat = 0, i, running = 0;
	double t0;
	int c;

	while ((c = getopt(argc, argv, "+n:P:l:")) != -1) {
		switch (c) {
		case 'n': n = atol(optarg); break;
		case 'P': par = atol(optarg); break;
		case 'l': lat = atol(optarg); break;
		default: usage();
		}
	}
	if (optind >= argc || par < 1 || (n < 1 && lat < 1))
		usage();
	argv += optind;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null",
	    O_RDONLY, 0);
	if (lat > 0) {
		for (i = 0; i < lat; i++) {
			t0 = now_s();
			spawn(argv, &fa);
			reap();
			printf("%.4f\n", (now_s() - t0) * 1e3);
		}
		return 0;
	}
	t0 = now_s();
	for (i = 0; i < n; i++) {
		if (running == par) {
			reap();
			running--;
		}
		spawn(argv, &fa);
		running++;
	}
	while (running-- > 0)
		reap();
	printf("%.4f\n", now_s() - t0);
	return 0;
}
