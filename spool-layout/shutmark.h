/*
 * shutmark.h - state/shutdown: the mark "spool shutdown" leaves for the
 * spool's mounts.
 *
 * DESIGN.md invariant 7: shutting a cluster down unmounts its mounts.
 * The mounts may be on any host, where nothing of the cluster runs, so
 * the spool carries the word: spoold, carrying out a "spool shutdown"
 * (not another stop: a SIGTERM is also an admin's restart), or "spool
 * shutdown" itself when no spoold runs, writes state/shutdown, a record
 * whose generation is one more than the one there before (1 the first
 * time).  spoolfs reads it when it mounts,
 * at every check that the spool still exists (FS_ALIVE_MS), and at
 * once when inotify says it was replaced (a shutdown asked on this
 * host), and unmounts itself once the generation has moved past the
 * one it mounted under; a mount made after a shutdown is not touched
 * by it.  "spool shutdown" waits for the mounts of its own host.
 * Counted, not timed: the hosts' clocks differ.
 *
 *	generation: 2
 *	time: 1764990000.123            when spoold wrote it
 *	spoold: HOST.PID                 the writer: spoold, or spool
 */
#ifndef SHUTMARK_H
#define SHUTMARK_H

#include <stdint.h>

#include "spool.h"

#define SHUTMARK_NAME	"shutdown"	/* in state/ */
#define SHUTMARK_SEEN_MS 10000	/* how often spoolfs reads it, at most */

/*
 * The generation of state/shutdown into *gen: 0 and 0 when there is no
 * such file; -1 with errno when it cannot be read (EINVAL: not such a
 * record), *gen then 0.
 */
int	shutmark_read(const struct spool *sp, uint64_t *gen);

/*
 * Write the next generation (one more than shutmark_read's; 1 over a
 * file that is not such a record) durably, with the time and who
 * (HOST.PID).  0, or -1 with errno, also when the file there cannot be
 * read (writing 1 could take the count back below a mount's); *gen is
 * the generation written.
 */
int	shutmark_write(struct spool *sp, const char *who, uint64_t *gen);

#endif
