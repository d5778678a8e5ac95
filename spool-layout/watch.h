/*
 * watch.h - noticing changes: inotify as a hint, rescans as the truth.
 *
 * inotify only sees changes made on this host (DESIGN.md invariant 2),
 * so every directory a program waits on is also rescanned.  A rescan is
 * cheap: dirstamp_changed() stats the directory and reports a change
 * when its mtime, ctime, size, link count or inode moved; only then is
 * it listed.  To survive timestamp granularity (two changes in one
 * tick, one before and one after our listing), a directory found
 * changed is listed once more on the next rescan even if its stamp
 * then looks the same, and every directory is listed at least every
 * DIRSTAMP_FORCE rescans whatever its stamp says.
 *
 * Coarse timestamps.  Some network filesystems give whole seconds (sshfs:
 * SFTP carries no nanoseconds; NFS servers on some filesystems): a
 * second change within the same second as the one we saw leaves the
 * stamp as it was, and "once more on the next rescan" (20 ms later)
 * comes too early to see it, so it would wait for DIRSTAMP_FORCE
 * rescans (6 to 10 s at a 1 s rescan interval; measured on sshfs).  A
 * directory seen changed whose mtime and ctime both have no fraction
 * of a second is therefore listed at every rescan for
 * DIRSTAMP_COARSE_MS after that (by our monotonic clock), and once
 * more at the first rescan after: that listing comes after the end of
 * the second of the change we saw, so it sees every change made in
 * that second, and later ones move the stamp.
 *
 * The raw inotify API is used, not libinotifytools: that library keeps
 * one global instance and exposes no descriptor, so it cannot share a
 * poll() loop with signals, timers and child processes.
 *
 * Set CKSPOOL_NO_INOTIFY=1 (or call watch_open(w, 0)) to run on rescans
 * alone, as on a shared filesystem written by other hosts.
 */
#ifndef WATCH_H
#define WATCH_H

#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#define DIRSTAMP_FORCE 10
#define DIRSTAMP_COARSE_MS 1000	/* the coarsest timestamp handled */

struct dirstamp {
	struct timespec mtime;
	struct timespec ctime;
	off_t	size;
	nlink_t	nlink;
	ino_t	ino;
	int	again;		/* list once more next time */
	uint64_t hot_until;	/* coarse stamps: list at every rescan until */
	unsigned rounds;	/* rescans since the last listing */
	int	valid;
	int	failing;	/* its last listing failed (said once) */
};

/* 1 if dfd/name should be listed now (also when it cannot be stat'ed). */
int	dirstamp_changed(int dfd, const char *name, struct dirstamp *s);
void	dirstamp_reset(struct dirstamp *s);
/*
 * After the listing dirstamp_changed() (or a hint) asked for: rc is
 * fsop_list's, errno its error.  dirstamp_changed() took the stamp for
 * that listing, so a failed one would wait for the rescan that forces
 * one (DIRSTAMP_FORCE rescans later): it forgets the stamp instead, so
 * the next rescan lists the directory again, and says the failure once
 * ("list: PATH: strerror (tried again at the next rescan)"); the first
 * listing to succeed after says "recovered: list-PATH".  path is a
 * printf format: the directory as the user knows it ("workers/w1/done").
 */
void	dirstamp_listed(struct dirstamp *s, int rc, const char *path, ...)
	    __attribute__((format(printf, 3, 4)));

struct watch_entry;

struct watch {
	int	fd;		/* inotify descriptor, -1 when disabled */
	struct watch_entry *e;
	size_t	n;
	int	overflow;	/* events were lost: rescan everything */
};

/* enabled=-1: from the environment (CKSPOOL_NO_INOTIFY). */
int	watch_open(struct watch *w, int enabled);
void	watch_close(struct watch *w);
int	watch_enabled(const struct watch *w);

/*
 * Watch dfd/name for entries created, moved in or out, or deleted, and
 * for the directory's own deletion.  cookie is handed back with each
 * event.  Failure to watch is not fatal (rescans still see changes);
 * it returns -1 and the caller may log it once.
 */
int	watch_add(struct watch *w, int dfd, const char *name, uint32_t mask,
	    void *cookie);
/* Stop every watch registered with this cookie. */
void	watch_remove(struct watch *w, void *cookie);

typedef void (*watch_fn)(void *arg, void *cookie, const char *name,
	    uint32_t mask);
/* Drain pending events (non-blocking); 0 or -1 on read error. */
int	watch_read(struct watch *w, watch_fn fn, void *arg);

#endif
