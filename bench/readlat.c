/*
 * readlat.c - how long reading a whole small file takes, the way a
 * program reads a finished task's result: open, read to the end, close.
 *
 *	readlat FILE...		prints each file's time in ms, one a line
 *
 * Used by the FUSE scenario (bench/run.sh) to read the same results
 * directly in the spool and through a spoolfs mount, without a process
 * start in each sample (that would hide the difference).  A file that
 * cannot be read, or is empty, is an error (exit 1): a failed read can
 * never pass as a fast one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int
main(int argc, char **argv)
{
	char buf[65536];
	size_t total;
	ssize_t r;
	double t0;
	int i, fd;

	if (argc < 2) {
		fprintf(stderr, "usage: readlat FILE...\n");
		return 2;
	}
	for (i = 1; i < argc; i++) {
		total = 0;
		t0 = now_ms();
		fd = open(argv[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, "readlat: open: %s: %s\n", argv[i],
			    strerror(errno));
			return 1;
		}
		while ((r = read(fd, buf, sizeof buf)) != 0) {
			if (r < 0) {
				if (errno == EINTR)
					continue;
				fprintf(stderr, "readlat: read: %s: %s\n",
				    argv[i], strerror(errno));
				return 1;
			}
			total += (size_t)r;
		}
		if (close(fd) < 0) {
			fprintf(stderr, "readlat: close: %s: %s\n", argv[i],
			    strerror(errno));
			return 1;
		}
		printf("%.4f\n", now_ms() - t0);
		if (total == 0) {
			fprintf(stderr, "readlat: %s: empty\n", argv[i]);
			return 1;
		}
	}
	return 0;
}
