/*
 * roundtrip.c - how long one process takes to ask another and have the
 * answer: a byte written into a pipe, read by the other process, and
 * written back through a second pipe.  This is the least a FUSE request
 * costs the process that makes it (the request wakes spoolfs's thread,
 * the reply wakes the reader), with nothing of FUSE or spoolfs in it.
 *
 *	roundtrip N		prints N round trips in ms, one a line
 *
 * Used by the FUSE scenario (bench/run.sh) beside the reads of a result
 * through the mount: neither process is bound to a CPU, as neither the
 * reader nor spoolfs is.  The first 100 round trips are not printed
 * (the two processes start and fault their pages in).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WARMUP	100

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* one byte through fd; 0, or -1 with errno (0 when the other end closed) */
static int
put(int fd)
{
	char c = 'x';
	ssize_t r;

	while ((r = write(fd, &c, 1)) < 0 && errno == EINTR)
		;
	return r == 1 ? 0 : -1;
}

static int
get(int fd)
{
	char c;
	ssize_t r;

	while ((r = read(fd, &c, 1)) < 0 && errno == EINTR)
		;
	if (r == 0)
		errno = 0;
	return r == 1 ? 0 : -1;
}

int
main(int argc, char **argv)
{
	int ask[2], answer[2], i, n, st;
	double t0;
	pid_t pid;
	char *end;

	if (argc != 2 || (n = (int)strtol(argv[1], &end, 10)) <= 0 || *end) {
		fprintf(stderr, "usage: roundtrip N\n");
		return 2;
	}
	if (pipe(ask) < 0 || pipe(answer) < 0) {
		fprintf(stderr, "roundtrip: pipe: %s\n", strerror(errno));
		return 1;
	}
	if ((pid = fork()) < 0) {
		fprintf(stderr, "roundtrip: fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0) {		/* the answering side, until the asker closes */
		close(ask[1]);
		close(answer[0]);
		while (get(ask[0]) == 0)
			if (put(answer[1]) < 0)
				_exit(1);
		_exit(errno ? 1 : 0);
	}
	close(ask[0]);
	close(answer[1]);
	for (i = 0; i < WARMUP + n; i++) {
		t0 = now_ms();
		if (put(ask[1]) < 0 || get(answer[0]) < 0) {
			fprintf(stderr, "roundtrip: pipe to %ld: %s\n",
			    (long)pid, errno ? strerror(errno) :
			    "the other process is gone");
			return 1;
		}
		if (i >= WARMUP)
			printf("%.4f\n", now_ms() - t0);
	}
	close(ask[1]);
	if (waitpid(pid, &st, 0) < 0) {
		fprintf(stderr, "roundtrip: waitpid: %s\n", strerror(errno));
		return 1;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "roundtrip: the answering process failed\n");
		return 1;
	}
	return 0;
}
