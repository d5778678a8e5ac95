/*
 * clockshift.c - LD_PRELOAD'ed into one program of a test, moves its
 * wall clock (CLOCK_REALTIME) by CLOCKSHIFT_S seconds (may be negative):
 * a host whose clock is ahead of the others or behind, which one machine
 * cannot otherwise give to one process (time namespaces move only the
 * monotonic and boot clocks).  Only clock_gettime, which is what
 * hostinfo.c's now_unix calls.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

int clock_gettime(clockid_t clock, struct timespec *ts);

int
clock_gettime(clockid_t clock, struct timespec *ts)
{
	static int (*real)(clockid_t, struct timespec *);
	const char *shift;
	int rc;

	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "clock_gettime");
	if (real == NULL)
		return -1;
	rc = real(clock, ts);
	if (rc == 0 && (clock == CLOCK_REALTIME ||
	    clock == CLOCK_REALTIME_COARSE) &&
	    (shift = getenv("CLOCKSHIFT_S")) != NULL)
		ts->tv_sec += atol(shift);
	return rc;
}
