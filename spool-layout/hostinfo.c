/*
 * hostinfo.c - see hostinfo.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hostinfo.h"

const char *
host_name(void)
{
	static char name[64];
	char *dot;

	if (name[0])
		return name;
	if (gethostname(name, sizeof name - 1) != 0 || name[0] == 0)
		strcpy(name, "localhost");
	name[sizeof name - 1] = 0;
	if ((dot = strchr(name, '.')) != NULL)
		*dot = 0;
	return name;
}

void
host_self(char *out, size_t size)
{
	snprintf(out, size, "%s.%ld", host_name(), (long)getpid());
}

const char *
host_boot_id(void)
{
	static char id[48];
	ssize_t n;
	int fd;

	if (id[0])
		return id;
	strcpy(id, "unknown");
	fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, id, sizeof id - 1);
		if (n > 0) {
			id[n] = 0;
			id[strcspn(id, "\n")] = 0;
		} else
			strcpy(id, "unknown");
		close(fd);
	}
	return id;
}

const char *
host_proc_stat(long pid, char *buf, size_t size, uid_t *uid)
{
	char path[64], *rp;
	struct stat st;
	size_t got = 0;
	ssize_t n;
	int fd, err;

	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	if (uid && fstat(fd, &st) < 0)
		goto fail;
	while (got + 1 < size && (n = read(fd, buf + got,
	    size - 1 - got)) != 0) {
		if (n < 0 && errno != EINTR)
			goto fail;
		if (n > 0)
			got += (size_t)n;
	}
	(void)close(fd);
	buf[got] = 0;
	if ((rp = strrchr(buf, ')')) == NULL || rp[1] != ' ') {
		errno = EPROTO;
		return NULL;
	}
	if (uid)
		*uid = st.st_uid;
	return rp + 2;
fail:
	err = errno;
	(void)close(fd);
	errno = err;
	return NULL;
}

/* State letter and start time of pid from /proc; -1 if no such pid. */
static int
proc_stat(long pid, char *state, unsigned long long *start)
{
	char buf[1024];
	const char *p;
	int field;

	if ((p = host_proc_stat(pid, buf, sizeof buf, NULL)) == NULL)
		return -1;
	*state = *p;
	for (field = 3; field < 22 && p; field++)
		if ((p = strchr(p, ' ')) != NULL)
			p++;
	*start = p ? strtoull(p, NULL, 10) : 0;
	return 0;
}

unsigned long long
host_pid_start(long pid)
{
	unsigned long long start;
	char state;

	return proc_stat(pid, &state, &start) == 0 ? start : 0;
}

int
host_pid_runs(long pid, unsigned long long start)
{
	unsigned long long got;
	char state;

	return start != 0 && proc_stat(pid, &state, &got) == 0 &&
	    got == start && state != 'Z' && state != 'X';
}

int
host_pid_alive(const char *host, const char *boot, long pid,
    unsigned long long pstart)
{
	unsigned long long start;
	char state;

	if (strcmp(host, host_name()) != 0)
		return -1;
	if (strcmp(boot, host_boot_id()) != 0)
		return -1;	/* rebooted since, or another host of that name */
	if (pid <= 0)
		return -1;
	if (proc_stat(pid, &state, &start) < 0) {
		if (kill((pid_t)pid, 0) == 0 || errno == EPERM)
			return 1;	/* no /proc: trust kill() */
		return errno == ESRCH ? 0 : -1;
	}
	if (state == 'Z' || state == 'X')
		return 0;
	if (pstart && start != pstart)
		return 0;
	return 1;
}

uint64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

uint64_t
now_ms(void)
{
	return now_us() / 1000;
}

/* Sleep ms milliseconds, less if a signal comes. */
void
sleep_ms(uint64_t ms)
{
	(void)poll(NULL, 0, (int)ms);
}

double
now_unix(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
