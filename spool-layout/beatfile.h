/*
 * beatfile.h - the records rewritten at every heartbeat: lock/spoold/beat
 * and workers/WID/status.
 *
 * They are overwritten in place, not renamed over: on a FUSE mount
 * (sshfs) built on libfuse before 3.15, a rename onto a file that
 * another process on the same host has just closed can leave the old
 * file behind for good as ".fuse_hiddenNNN" (libfuse issue 746), a few
 * per hundred beats while a reader polls.  An overwrite needs no new
 * block either, so the beats go on while the filesystem is full.
 *
 * A reader may meet a record half overwritten.  Each record therefore
 * ends with a line "check: XXXXXXXX", a hash of everything before it;
 * beatfile_read reads again while the check does not match, and fails
 * with EAGAIN after BEATFILE_TRIES reads that never matched.  The file
 * is never cut (a shorter record is padded with a line "pad: ...."), so
 * a writer killed between two calls cannot leave a new record's start
 * over an old one's tail.
 */
#ifndef BEATFILE_H
#define BEATFILE_H

#include <stddef.h>

#include "buf.h"

#define BEATFILE_TRIES	5

/*
 * Append the check line to the record in b (a pad line before it when
 * the record is shorter than the file) and write it over dfd/name in one
 * write(2), never cutting the file; if there is no such file yet,
 * create it (fsop_publish through tmpdfd).  0, or -1 with errno set.
 */
int	beatfile_write(int tmpdfd, int dfd, const char *name, struct buf *b);
/*
 * Read dfd/name (at most max bytes) into out, without its check line;
 * on failure nothing is left to free in out.
 */
int	beatfile_read(int dfd, const char *name, size_t max, struct buf *out);
/* 0 if the record p[0..len) ends with a check line that matches it. */
int	beatfile_check(const char *p, size_t len);
/*
 * Why a heartbeat record could not be read, in words, from the errno of
 * a failed read (beatfile_read's, or EINVAL from its caller's parse).
 */
const char *beatfile_strerror(int err);

/*
 * A reader's failed reads of one heartbeat record in a row (spoold of a
 * worker's status, a worker of spoold's beat): each is a beat not seen.
 * The second in a row, a heartbeat after the first, is reported, once
 * until a read succeeds.  Zero-initialised: nothing failed.
 */
struct beatfile_fails {
	int	n;	/* failed reads in a row */
	int	err;	/* errno of the failure reported, 0 if none */
};

/*
 * A read failed with err: 1 if the caller is to report it now (then it
 * counts as reported).  quiet: count it, but report nothing yet.
 */
int	beatfile_failed(struct beatfile_fails *f, int err, int quiet);
/* A read succeeded, or a new count starts: 1 if a failure was reported. */
int	beatfile_read_again(struct beatfile_fails *f);
/* " (its WHAT: WHY)" for the failure reported, "" if none; in out. */
const char *beatfile_cause(const struct beatfile_fails *f, const char *what,
	    char *out, size_t size);

#endif
