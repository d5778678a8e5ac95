/*
 * lease.h - exactly one spoold per spool, also across hosts.
 *
 * The lease is the directory lock/spoold, holding two records:
 *   owner  host, boot id, pid, start time, nonce, and the daemon: keys
 *          of spool.yaml only a restart applies, as the holder has them
 *   beat   a counter the holder increments every heartbeat
 *
 * Taking it: build tmp/lease.NONCE/ with both files, then rename it to
 * lock/spoold.  Renaming a directory onto an existing non-empty one
 * fails, on NFS too, so at most one contender wins; no flock needed.
 *
 * A lease already there is broken only when its holder is proven gone:
 * on the same host and boot, its pid is dead (immediate); otherwise its
 * beat counter did not move for lost-timeout, as timed by our own clock
 * (no comparison of clocks between hosts).  Breaking is a rename of
 * lock/spoold into gc/, which again only one contender can do.
 *
 * The holder keeps a descriptor on its own lease directory, so its
 * beats go to that directory even if someone broke the lease, and it
 * checks that lock/spoold is still that directory: if not, it has lost
 * the lease and must exit (lease_beat returns -1).  One found gone and
 * then back with our own owner record was put back by a contender
 * (lease_acquire's break_check): it is still ours.
 */
#ifndef LEASE_H
#define LEASE_H

#include <stdint.h>
#include <sys/types.h>

#include "spool.h"

struct owner_info {
	char	host[64];
	char	boot[48];
	long	pid;
	uint64_t pstart;	/* process start, ticks since boot */
	double	started;
	char	nonce[96];
	/*
	 * spoold's: the daemon: keys of spool.yaml that only its restart
	 * applies (config_diff), as it took them at its start; 0 and -1
	 * where the record has none (a worker's, an older spoold's).
	 */
	uint64_t heartbeat_ms, lost_timeout_ms, death_timeout_ms;
	int	fsync, shared;
};

struct lease {
	int	dirfd;
	ino_t	ino;
	dev_t	dev;
	uint64_t beat;
	struct owner_info me;
};

/*
 * Take the lease.  If it is held, returns -1 with a description of the
 * holder in why.  With wait_ms > 0, a holder on another host is watched
 * for that long before its lease is judged stale.
 */
int	lease_acquire(struct spool *sp, struct lease *l, uint64_t wait_ms,
	    char *why, size_t whysize);
/* Beat: 0; 1 if the lease could not be checked or the beat not
 * written (why; ESTALE, EIO: try again later); -1 if the lease
 * was lost (why says to whom): the caller must stop at once. */
int	lease_beat(struct spool *sp, struct lease *l, char *why, size_t size);
/* Remove the lease if it is still ours (inode and nonce); else leave
 * it alone. */
void	lease_release(struct spool *sp, struct lease *l);

/*
 * Read the current holder: 1 held, 0 no lease, -1 error; 2 held but
 * its beat could not be read (*beat is 0, errno says why).
 */
int	lease_holder(struct spool *sp, struct owner_info *o, uint64_t *beat);

/* owner records, shared with worker registration */
void	owner_self(struct owner_info *o);
void	owner_encode(struct buf *b, const struct owner_info *o);
int	owner_read(int dfd, const char *name, struct owner_info *o);
/*
 * The keys of o's spoold (above) that differ from c's, as "daemon:
 * heartbeat 200 ms (LABEL: 5000 ms), ..." appended to out: their
 * number, 0 if none or if o says none.
 */
int	owner_config_diff(const struct owner_info *o, const struct config *c,
	    const char *label, struct buf *out);
/* The "beat: N" counter of a record file; -1 if unreadable. */
int	beat_read(int dfd, const char *name, uint64_t *beat);

#endif
