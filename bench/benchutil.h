/*
 * benchutil.h - the few helpers the benchmark's stand-alone programs
 * share (floor, layoutsim, fusefloor, wq_manager): each is built from
 * its one .c file, so these are static inline, and a program that does
 * not call one costs nothing.  Needs _GNU_SOURCE (the Makefile sets it)
 * for program_invocation_short_name.
 */
#ifndef BENCHUTIL_H
#define BENCHUTIL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/* "PROGRAM: what: obj: strerror(errno)", then exit 1. */
static inline void
die(const char *what, const char *obj)
{
	fprintf(stderr, "%s: %s: %s: %s\n", program_invocation_short_name,
	    what, obj, strerror(errno));
	exit(1);
}

/* Seconds on the monotonic clock. */
static inline double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* User + system CPU seconds of who (RUSAGE_SELF or RUSAGE_CHILDREN). */
static inline double
cpu_s(int who)
{
	struct rusage ru;

	if (getrusage(who, &ru) < 0)
		die("getrusage", who == RUSAGE_SELF ? "itself" : "its children");
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	    (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

#endif
