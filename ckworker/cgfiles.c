/*
 * cgfiles.c - the files of the task cgroups, kept open while they live.
 *
 * With cgroup v1 a task's cgroup is used by task after task (the pool
 * of cgroup.c), and each task reads and writes the same files of it:
 * its process moves in through cgroup.procs, its end reads the peak
 * and the OOM count, the cgroup's return to the pool reads its usage
 * and resets its peak.  An open of a cgroup file costs some 7-9 us of
 * CPU on the machines of doc/performance-history.md, a pread of an open one
 * about 1 us: so each cgroup's files are opened at their first use and
 * kept until the cgroup is removed (cgfiles_drop), following it through
 * its renames (free.N, ID.ATT, spare).  The descriptors stay valid
 * across a rename of their directory.
 *
 * cgroup.procs is kept for writing only: cgroup v1 answers a second
 * read of the same open file from a list of pids it keeps for about a
 * second, so its readers (cgroup.c: is it empty, whom to kill) open it
 * afresh each time.  At most KEPT_MAX cgroups are kept (a worker with
 * more slots opens the files of the others at each use, as before);
 * a name too long for the table is not kept either.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgfiles.h"

#define KEPT_MAX	64

static struct kept {
	char	name[32];
	int	fd[CGF_N];
} kept[KEPT_MAX];
static size_t nkept;
static int rootfd = -1, version;

static const char *
file_name(enum cg_file which)
{
	static const char *const v1[CGF_N] = { "cgroup.procs",
	    "memory.usage_in_bytes", "memory.max_usage_in_bytes",
	    "memory.oom_control" };
	static const char *const v2[CGF_N] = { "cgroup.procs",
	    "memory.current", "memory.peak", "memory.events" };

	return (version == 2 ? v2 : v1)[which];
}

static struct kept *
find(const char *name)
{
	size_t i;

	for (i = 0; i < nkept; i++)
		if (strcmp(kept[i].name, name) == 0)
			return &kept[i];
	return NULL;
}

static void
close_all(struct kept *k)
{
	int i;

	for (i = 0; i < CGF_N; i++)
		if (k->fd[i] >= 0) {
			(void)close(k->fd[i]);
			k->fd[i] = -1;
		}
}

void
cgfiles_reset(int fd, int v)
{
	size_t i;

	for (i = 0; i < nkept; i++)
		close_all(&kept[i]);
	nkept = 0;
	rootfd = fd;
	version = v;
}

void
cgfiles_add(const char *name)
{
	struct kept *k;
	int i;

	if (find(name) != NULL || nkept == KEPT_MAX ||
	    strlen(name) >= sizeof k->name)
		return;
	k = &kept[nkept++];
	strcpy(k->name, name);
	for (i = 0; i < CGF_N; i++)
		k->fd[i] = -1;
}

void
cgfiles_drop(const char *name)
{
	struct kept *k = find(name);

	if (k == NULL)
		return;
	close_all(k);
	*k = kept[--nkept];
}

void
cgfiles_rename(const char *from, const char *to)
{
	struct kept *k;

	cgfiles_drop(to);	/* replaced, if it was there */
	if ((k = find(from)) == NULL)
		return;
	if (strlen(to) >= sizeof k->name) {
		cgfiles_drop(from);
		return;
	}
	strcpy(k->name, to);
}

/*
 * The descriptor for name's file: the kept one (opened now if need be),
 * or, for a cgroup not kept, one the caller closes (*own set).
 */
static int
get(const char *name, enum cg_file which, int *own)
{
	struct kept *k = find(name);
	char path[PATH_MAX];
	int fd, flags = O_RDONLY;

	*own = 0;
	if (k != NULL && k->fd[which] >= 0)
		return k->fd[which];
	if (which == CGF_PROCS)
		flags = O_WRONLY;
	else if (which == CGF_PEAK && version == 1)
		flags = O_RDWR;
	if ((size_t)snprintf(path, sizeof path, "%s/%s", name,
	    file_name(which)) >= sizeof path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = openat(rootfd, path, flags | O_CLOEXEC)) < 0)
		return -1;
	if (k != NULL)
		k->fd[which] = fd;
	else
		*own = 1;
	return fd;
}

/* Done with it; a removed cgroup's open files fail with ENODEV. */
static void
put(int fd, int own)
{
	int e = errno;

	if (own)
		(void)close(fd);
	errno = e == ENODEV ? ENOENT : e;
}

int
cgfiles_read_fd(int fd, char *buf, size_t size)
{
	size_t got = 0;
	ssize_t n = 0;

	while (got + 1 < size && (n = pread(fd, buf + got, size - 1 - got,
	    (off_t)got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		got += (size_t)n;
	}
	buf[got] = 0;
	return n < 0 ? -1 : (int)got;
}

int
cgfiles_write_fd(int fd, const char *s)
{
	size_t len = strlen(s);
	ssize_t w;

	while ((w = write(fd, s, len)) < 0 && errno == EINTR)
		;
	if (w >= 0 && (size_t)w != len)
		errno = EIO;
	return w == (ssize_t)len ? 0 : -1;
}

int
cgfiles_read_at(int dirfd, const char *path, char *buf, size_t size)
{
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC), rc, e;

	if (fd < 0)
		return -1;
	rc = cgfiles_read_fd(fd, buf, size);
	e = errno;
	(void)close(fd);
	errno = e;
	return rc;
}

int
cgfiles_write_at(int dirfd, const char *path, const char *s)
{
	int fd = openat(dirfd, path, O_WRONLY | O_CLOEXEC), rc, e;

	if (fd < 0)
		return -1;
	rc = cgfiles_write_fd(fd, s);
	e = errno;
	(void)close(fd);
	errno = e;
	return rc;
}

int
cgfiles_read(const char *name, enum cg_file which, char *buf, size_t size)
{
	int rc, own, fd = get(name, which, &own);

	if (fd < 0)
		return -1;
	rc = cgfiles_read_fd(fd, buf, size);
	put(fd, own);
	return rc;
}

int
cgfiles_write(const char *name, enum cg_file which, const char *s)
{
	int rc, own, fd = get(name, which, &own);

	if (fd < 0)
		return -1;
	rc = cgfiles_write_fd(fd, s);
	put(fd, own);
	return rc;
}

int
cgfiles_dup(const char *name, enum cg_file which)
{
	int own, fd = get(name, which, &own), d;

	if (fd < 0 || own)
		return fd;
	if ((d = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0)
		return -1;
	return d;
}
