/*
 * cpuclaim.c - workers on one host take disjoint cores.
 *
 * A worker that offers fewer cores than it may use (spoold --local
 * starts several on one machine; an SGE or LSF job whose slots are not
 * bound to CPUs sees the whole machine) must choose which ones, and two
 * workers of the same user on the same host must not choose the same.
 * They agree through one host-local file, /dev/shm/ckspool-cpus.UID
 * (/tmp when there is no /dev/shm): a worker holds an open file
 * description lock (F_OFD_SETLK) on byte N of it for each CPU N it
 * took.  The kernel drops the locks when the worker exits, however it
 * exits, so nothing needs to be cleaned up, and a lock is never stale.
 * The descriptor is close-on-exec, so tasks do not inherit the locks.
 *
 * This is not the spool (it is per host, on a local filesystem where
 * locks work), so it does not go through fsop.h.
 *
 * CPUs are chosen with cores_pick() among the units no other worker
 * holds.  If there are not enough, the rest are taken among the units
 * others hold, from a unit chosen by the worker's pid onwards (so that
 * workers that must share do not all share the first ones), and the
 * caller says loudly that they are shared.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "cpuclaim.h"

static int lockfd = -1;

static int
lock_pu(int fd, int cmd, short type, unsigned pu)
{
	struct flock fl;

	memset(&fl, 0, sizeof fl);
	fl.l_type = type;
	fl.l_whence = SEEK_SET;
	fl.l_start = (off_t)pu;
	fl.l_len = 1;
	fl.l_pid = 0;
	if (fcntl(fd, cmd, &fl) < 0)
		return -1;
	return cmd == F_OFD_GETLK ? fl.l_type != F_UNLCK : 0;
}

static int
open_lockfile(char *path, size_t size, char *why, size_t whysize)
{
	struct stat st;
	const char *dir = "/dev/shm";
	int fd;

	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		dir = "/tmp";
	snprintf(path, size, "%s/ckspool-cpus.%u", dir, (unsigned)getuid());
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(why, whysize, "open: %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || st.st_uid != getuid() ||
	    !S_ISREG(st.st_mode)) {
		snprintf(why, whysize, "%s: not a regular file of ours", path);
		close(fd);
		return -1;
	}
	return fd;
}

/* Lock every PU of unit i; 0, or -1 if another process holds one. */
static int
take_unit(const struct cores_unit *u)
{
	uint16_t k, m;

	for (k = 0; k < u->npu; k++)
		if (lock_pu(lockfd, F_OFD_SETLK, F_WRLCK, u->pu[k]) < 0) {
			for (m = 0; m < k; m++)
				(void)lock_pu(lockfd, F_OFD_SETLK, F_UNLCK,
				    u->pu[m]);
			return -1;
		}
	return 0;
}

int
cpuclaim_take(const struct cores_unit *u, size_t nu, uint32_t n,
    uint32_t *out, char *why, size_t whysize)
{
	unsigned char *busy = xcalloc(nu ? nu : 1, 1);
	uint32_t *pick = xcalloc(n ? n : 1, sizeof *pick);
	char path[128];
	uint32_t got = 0, want, k;
	size_t i, nfree, start, step;
	uint16_t p;
	int rc;

	why[0] = 0;
	if (lockfd < 0 && (lockfd = open_lockfile(path, sizeof path, why,
	    whysize)) < 0) {
		/* cannot coordinate: take the first ones, the caller warns */
		for (k = 0; k < n && k < nu; k++)
			out[k] = k;
		free(busy);
		free(pick);
		return -1;
	}
	for (i = 0; i < nu; i++)
		for (p = 0; p < u[i].npu && !busy[i]; p++)
			if ((rc = lock_pu(lockfd, F_OFD_GETLK, F_WRLCK,
			    u[i].pu[p])) != 0)
				busy[i] = 1;	/* held, or cannot tell */
	/* take what is free, as close together as possible */
	while (got < n) {
		for (i = 0, nfree = 0; i < nu; i++)
			nfree += !busy[i];
		want = n - got < nfree ? n - got : (uint32_t)nfree;
		if (want == 0 || cores_pick(u, nu, busy, want, pick) < 0)
			break;
		for (k = 0; k < want; k++) {
			busy[pick[k]] = 1;
			if (take_unit(&u[pick[k]]) == 0)
				out[got++] = pick[k];
		}
	}
	rc = (int)got;
	if (got < n) {
		/*
		 * Not enough: share units that others hold.  Which others
		 * share is unknown, so each worker starts at a unit of its
		 * own (its pid) rather than all piling onto the first.
		 */
		for (i = 0; i < nu; i++)
			busy[i] = 0;
		for (k = 0; k < got; k++)
			busy[out[k]] = 1;
		start = (size_t)getpid() % nu;
		for (k = 0, step = 0; got + k < n && step < nu; step++) {
			i = (start + step) % nu;
			if (!busy[i]) {
				busy[i] = 1;
				out[got + k++] = (uint32_t)i;
			}
		}
		snprintf(why, whysize, "only %d of the %u cores are not taken "
		    "by other workers of this user on this host", rc, n);
	}
	free(busy);
	free(pick);
	return rc;
}
