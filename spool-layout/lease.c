/*
 * lease.c - the spoold lease; see lease.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "beatfile.h"
#include "buf.h"
#include "fsop.h"
#include "hostinfo.h"
#include "lease.h"
#include "rec.h"

#define LEASE_NAME "spoold"

void
owner_self(struct owner_info *o)
{
	memset(o, 0, sizeof *o);
	snprintf(o->host, sizeof o->host, "%s", host_name());
	snprintf(o->boot, sizeof o->boot, "%s", host_boot_id());
	o->pid = (long)getpid();
	o->pstart = host_pid_start(o->pid);
	o->started = now_unix();
	fsop_tmpname(o->nonce, sizeof o->nonce, NULL);
}

void
owner_encode(struct buf *b, const struct owner_info *o)
{
	rec_put_word(b, "host", o->host);
	rec_put_word(b, "boot", o->boot);
	rec_put_int(b, "pid", o->pid);
	rec_put_uint(b, "pstart", o->pstart);
	rec_put_double(b, "started", o->started, 3);
	rec_put_word(b, "nonce", o->nonce);
	if (o->heartbeat_ms == 0)
		return;
	rec_put_uint(b, "heartbeat", o->heartbeat_ms);
	rec_put_uint(b, "lost-timeout", o->lost_timeout_ms);
	rec_put_uint(b, "death-timeout", o->death_timeout_ms);
	rec_put_uint(b, "fsync", (uint64_t)o->fsync);
	rec_put_uint(b, "shared", (uint64_t)o->shared);
}

static void
differs(struct buf *out, int *n, const char *key, uint64_t theirs,
    uint64_t ours, const char *unit, const char *label)
{
	if (theirs == ours)
		return;
	if (unit == NULL)	/* a boolean */
		buf_printf(out, "%sdaemon: %s %s (%s: %s)", (*n)++ ? ", " : "",
		    key, theirs ? "true" : "false", label,
		    ours ? "true" : "false");
	else
		buf_printf(out, "%sdaemon: %s %" PRIu64 "%s (%s: %" PRIu64
		    "%s)", (*n)++ ? ", " : "", key, theirs, unit, label, ours,
		    unit);
}

int
owner_config_diff(const struct owner_info *o, const struct config *c,
    const char *label, struct buf *out)
{
	int n = 0;

	if (o->heartbeat_ms == 0)
		return 0;
	differs(out, &n, "heartbeat", o->heartbeat_ms, c->heartbeat_ms, " ms",
	    label);
	differs(out, &n, "lost-timeout", o->lost_timeout_ms,
	    c->lost_timeout_ms, " ms", label);
	differs(out, &n, "death-timeout", o->death_timeout_ms,
	    c->death_timeout_ms, " ms", label);
	differs(out, &n, "fsync", (uint64_t)o->fsync, (uint64_t)c->fsync,
	    NULL, label);
	differs(out, &n, "shared", (uint64_t)o->shared, (uint64_t)c->shared,
	    NULL, label);
	return n;
}

int
owner_read(int dfd, const char *name, struct owner_info *o)
{
	struct buf b = BUF_INIT;
	struct rec_reader r;
	struct rec_field f;
	char *s = NULL;
	uint64_t u;
	int64_t pid;
	int rc;

	memset(o, 0, sizeof *o);
	o->fsync = o->shared = -1;
	if (fsop_read_file(dfd, name, 4096, &b, NULL) < 0)
		return -1;
	rec_reader_init(&r, b.p, b.len);
	while ((rc = rec_next(&r, &f)) > 0) {
		free(s);
		s = NULL;
		if (rec_key_is(&f, "pid")) {
			if (rec_get_int(&r, &f, 0, INT32_MAX, &pid) == 0)
				o->pid = (long)pid;
		} else if (rec_key_is(&f, "started")) {
			(void)rec_get_double(&r, &f, &o->started);
		} else if (rec_key_is(&f, "pstart")) {
			(void)rec_get_uint(&r, &f, UINT64_MAX,
			    &o->pstart);
		} else if (rec_key_is(&f, "heartbeat")) {
			(void)rec_get_uint(&r, &f, UINT32_MAX,
			    &o->heartbeat_ms);
		} else if (rec_key_is(&f, "lost-timeout")) {
			(void)rec_get_uint(&r, &f, UINT32_MAX,
			    &o->lost_timeout_ms);
		} else if (rec_key_is(&f, "death-timeout")) {
			(void)rec_get_uint(&r, &f, UINT32_MAX,
			    &o->death_timeout_ms);
		} else if (rec_key_is(&f, "fsync")) {
			if (rec_get_uint(&r, &f, 1, &u) == 0)
				o->fsync = (int)u;
		} else if (rec_key_is(&f, "shared")) {
			if (rec_get_uint(&r, &f, 1, &u) == 0)
				o->shared = (int)u;
		} else if (rec_get_str(&r, &f, &s) == 0) {
			if (rec_key_is(&f, "host"))
				snprintf(o->host, sizeof o->host, "%s", s);
			else if (rec_key_is(&f, "boot"))
				snprintf(o->boot, sizeof o->boot, "%s", s);
			else if (rec_key_is(&f, "nonce"))
				snprintf(o->nonce, sizeof o->nonce, "%s", s);
		}
	}
	free(s);
	buf_free(&b);
	/* the daemon: keys all there, within spool.yaml's bounds, or none */
	if (!config_daemon_in_bounds("heartbeat", o->heartbeat_ms) ||
	    !config_daemon_in_bounds("lost-timeout", o->lost_timeout_ms) ||
	    !config_daemon_in_bounds("death-timeout", o->death_timeout_ms) ||
	    o->fsync < 0 || o->shared < 0) {
		o->heartbeat_ms = o->lost_timeout_ms = o->death_timeout_ms = 0;
		o->fsync = o->shared = -1;
	}
	if (rc < 0 || o->host[0] == 0) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

int
beat_read(int dfd, const char *name, uint64_t *beat)
{
	struct buf b = BUF_INIT;
	char *s, *end;

	if (beatfile_read(dfd, name, 65536, &b) < 0)
		return -1;
	s = rec_lookup(b.p, b.len, "beat");
	buf_free(&b);
	if (s == NULL) {
		errno = EINVAL;
		return -1;
	}
	*beat = strtoull(s, &end, 10);
	free(s);
	return 0;
}

static int
write_beat(struct spool *sp, int dirfd, uint64_t beat)
{
	struct buf b = BUF_INIT;
	int rc;

	rec_put_uint(&b, "beat", beat);
	rec_put_double(&b, "time", now_unix(), 3);
	rc = beatfile_write(sp->fd[SD_TMP], dirfd, "beat", &b);
	buf_free(&b);
	return rc;
}

int
lease_holder(struct spool *sp, struct owner_info *o, uint64_t *beat)
{
	char name[64];

	snprintf(name, sizeof name, "%s/owner", LEASE_NAME);
	if (owner_read(sp->fd[SD_LOCK], name, o) < 0)
		return errno == ENOENT ? 0 : -1;
	snprintf(name, sizeof name, "%s/beat", LEASE_NAME);
	if (beat_read(sp->fd[SD_LOCK], name, beat) < 0) {
		*beat = 0;
		return 2;
	}
	return 1;
}

/*
 * Another host sees a beat late by up to its attribute cache time (NFS
 * actimeo, sshfs attr_timeout: about a second, whole-second mtimes):
 * a holder on another host is watched this much longer than the lost
 * timeout before its lease is judged stale.
 */
#define LEASE_SLACK_MS	2000

/* Build the lease directory in tmp/ and try to rename it into place. */
static int
try_take(struct spool *sp, struct lease *l, const char *tmpname)
{
	struct buf b = BUF_INIT;
	struct stat st;
	int dfd = -1, rc = -1, saved;

	if (fsop_mkdir(sp->fd[SD_TMP], tmpname, 0700) < 0)
		return -1;
	if ((dfd = fsop_opendir(sp->fd[SD_TMP], tmpname)) < 0)
		goto out;
	owner_encode(&b, &l->me);
	if (fsop_publish(sp->fd[SD_TMP], dfd, "owner", b.p, b.len, 0600,
	    FSOP_DURABLE) < 0 || write_beat(sp, dfd, 0) < 0)
		goto out;
	if (fstat(dfd, &st) < 0)
		goto out;
	if (fsop_rename(sp->fd[SD_TMP], tmpname, sp->fd[SD_LOCK],
	    LEASE_NAME) < 0)
		goto out;
	l->dirfd = dfd;
	l->ino = st.st_ino;
	l->dev = st.st_dev;
	dfd = -1;
	rc = 0;
out:
	saved = errno;
	buf_free(&b);
	if (dfd >= 0)
		close(dfd);
	if (rc < 0)
		(void)fsop_rmtree(sp->fd[SD_TMP], tmpname);
	errno = saved;
	return rc;
}

static void
describe(const struct owner_info *o, uint64_t beat, char *why, size_t size)
{
	snprintf(why, size, "the spool is held by spoold pid %ld on host %s "
	    "(started %.0f, beat %" PRIu64 ")", o->pid, o->host, o->started,
	    beat);
}

/*
 * What shows that a holder on another host still beats: its beat
 * counter, read by lease_holder (rc 1); or, when the record cannot be
 * read (rc 2: one that a spoold of another version wrote, with no check
 * line), the beat file itself changing, its inode number (renamed
 * over) or its modification time (overwritten).  0 when neither can be
 * read.
 */
static uint64_t
beat_stamp(struct spool *sp, int rc, uint64_t beat)
{
	char name[64];
	struct stat st;

	if (rc != 2)
		return beat;
	snprintf(name, sizeof name, "%s/beat", LEASE_NAME);
	if (fsop_stat(sp->fd[SD_LOCK], name, &st) < 0)
		return 0;
	return ((uint64_t)st.st_ino * 1000003u ^ (uint64_t)st.st_mtim.tv_sec *
	    1000000007u ^ (uint64_t)st.st_mtim.tv_nsec) | 1ULL << 63;
}

static void
break_check(struct spool *sp, const char *gcname, const struct owner_info *judged)
{
	struct owner_info moved;
	char name[FSOP_TMPNAME_MAX + 16];

	snprintf(name, sizeof name, "%s/owner", gcname);
	if (owner_read(sp->fd[SD_GC], name, &moved) == 0 &&
	    judged->nonce[0] && strcmp(moved.nonce, judged->nonce) != 0 &&
	    fsop_rename(sp->fd[SD_GC], gcname, sp->fd[SD_LOCK], LEASE_NAME) == 0)
		return;
	(void)fsop_rmtree(sp->fd[SD_GC], gcname);
}

int
lease_acquire(struct spool *sp, struct lease *l, uint64_t wait_ms, char *why,
    size_t size)
{
	char tmpname[FSOP_TMPNAME_MAX + 8], gcname[FSOP_TMPNAME_MAX + 8];
	struct owner_info o;
	uint64_t b1, b2, s1, deadline;
	int alive, rc, rc2, round, stale = 0;

	memset(l, 0, sizeof *l);
	l->dirfd = -1;
	owner_self(&l->me);
	l->me.heartbeat_ms = sp->cfg.heartbeat_ms;
	l->me.lost_timeout_ms = sp->cfg.lost_timeout_ms;
	l->me.death_timeout_ms = sp->cfg.death_timeout_ms;
	l->me.fsync = sp->cfg.fsync;
	l->me.shared = sp->cfg.shared;
	snprintf(tmpname, sizeof tmpname, "lease.%s", l->me.nonce);
	for (round = 0; round < 16; round++) {
		if (try_take(sp, l, tmpname) == 0)
			return 0;
		/*
		 * A stale handle (NFS) that outlasted fsop's own retries
		 * (fsop_publish writes a record again, other calls are
		 * tried again by name): the attempt was undone, so take it
		 * again from the start.
		 */
		if (errno == ESTALE) {
			stale++;
			continue;
		}
		if (errno != EEXIST && errno != ENOTEMPTY) {
			snprintf(why, size, "take lease: lock/%s: %s", LEASE_NAME,
			    strerror(errno));
			return -1;
		}
		rc = lease_holder(sp, &o, &b1);
		if (rc == 0)
			continue;	/* released meanwhile */
		if (rc < 0) {
			/* Unreadable owner: judge by the beat alone. */
			memset(&o, 0, sizeof o);
			snprintf(o.host, sizeof o.host, "?");
			b1 = 0;
		}
		alive = rc > 0 ? host_pid_alive(o.host, o.boot, o.pid, o.pstart) :
		    -1;
		if (alive > 0) {
			describe(&o, b1, why, size);
			return -1;
		}
		if (alive < 0) {
			/* Another host: watch its beat with our own clock. */
			if (wait_ms == 0) {
				describe(&o, b1, why, size);
				return -1;
			}
			deadline = now_ms() + wait_ms + LEASE_SLACK_MS;
			s1 = beat_stamp(sp, rc, b1);
			while (now_ms() < deadline) {
				sleep_ms(100);
				if ((rc2 = lease_holder(sp, &o, &b2)) <= 0 ||
				    beat_stamp(sp, rc2, b2) != s1)
					break;
			}
			if (now_ms() < deadline) {
				if (lease_holder(sp, &o, &b2) > 0) {
					describe(&o, b2, why, size);
					return -1;
				}
				continue;
			}
		}
		/*
		 * Stale: break it.  Only one breaker's rename succeeds.  If
		 * what we moved is not the lease we judged (another
		 * contender broke and retook it meanwhile), put it back.
		 */
		snprintf(gcname, sizeof gcname, "lease.%s", l->me.nonce);
		if (fsop_rename(sp->fd[SD_LOCK], LEASE_NAME, sp->fd[SD_GC],
		    gcname) == 0)
			break_check(sp, gcname, &o);
	}
	if (stale == round)
		snprintf(why, size, "take lease: lock/%s: %s (%d attempts)",
		    LEASE_NAME, strerror(ESTALE), round);
	else
		snprintf(why, size, "could not take the lease after %d rounds",
		    round);
	return -1;
}

int
lease_beat(struct spool *sp, struct lease *l, char *why, size_t size)
{
	struct owner_info o;
	struct stat st;
	int gone = 0, i;

	if (fsop_stat(sp->fd[SD_LOCK], LEASE_NAME, &st) < 0) {
		if (errno != ENOENT) {
			/* ESTALE, EIO: nothing says the lease moved */
			snprintf(why, size, "stat: lock/%s: %s", LEASE_NAME,
			    strerror(errno));
			return 1;
		}
		gone = 1;
	}
	/*
	 * A lease that another spoold broke and retook has a new inode
	 * on a local filesystem; on one that numbers inodes by path
	 * (sshfs, some FUSE and NFS re-exports) only its owner file
	 * tells: read it too.  A read that fails for another reason than
	 * ENOENT says nothing either way.
	 */
	if (!gone && st.st_ino == l->ino && st.st_dev == l->dev) {
		if (owner_read(sp->fd[SD_LOCK], LEASE_NAME "/owner", &o) == 0) {
			if (strcmp(o.nonce, l->me.nonce) != 0) {
				snprintf(why, size, "lost the spool lease to "
				    "spoold pid %ld on host %s", o.pid, o.host);
				return -1;
			}
		} else if (errno == ENOENT)
			gone = 1;
	}
	if (gone || st.st_ino != l->ino || st.st_dev != l->dev) {
		/*
		 * A contender that broke it retakes it a moment later:
		 * give it that moment, so that we can say who holds it.
		 */
		for (i = 0; i < LEASE_SLACK_MS / 100 &&
		    owner_read(sp->fd[SD_LOCK], LEASE_NAME "/owner", &o) < 0;
		    i++)
			sleep_ms(100);
		if (owner_read(sp->fd[SD_LOCK], LEASE_NAME "/owner", &o) == 0) {
			/*
			 * Our own nonce: our lease is back.  A contender that
			 * broke what it judged a dead holder's lease and
			 * found ours moved instead puts it back (break_check);
			 * a beat between its two renames found it gone.
			 */
			if (strcmp(o.nonce, l->me.nonce) == 0 &&
			    fsop_stat(sp->fd[SD_LOCK], LEASE_NAME, &st) == 0) {
				l->ino = st.st_ino;
				l->dev = st.st_dev;
				goto beat;
			}
			snprintf(why, size, "lost the spool lease to spoold pid "
			    "%ld on host %s", o.pid, o.host);
		} else
			snprintf(why, size, "lost the spool lease (lock/%s is "
			    "gone)", LEASE_NAME);
		return -1;
	}
beat:
	if (write_beat(sp, l->dirfd, ++l->beat) == 0)
		return 0;
	snprintf(why, size, "write: lock/%s/beat: %s", LEASE_NAME,
	    strerror(errno));
	return 1;	/* transient: keep the lease, say so */
}

void
lease_release(struct spool *sp, struct lease *l)
{
	char gcname[FSOP_TMPNAME_MAX + 8];
	struct owner_info o;
	struct stat st;

	if (l->dirfd < 0)
		return;
	/*
	 * Ours: the same inode and, as in lease_beat, our nonce in its
	 * owner (sshfs numbers inodes by path: a lease another spoold
	 * broke and retook while this one stopped has the old number,
	 * and was removed here, the new holder then exiting too).
	 */
	if (fsop_stat(sp->fd[SD_LOCK], LEASE_NAME, &st) == 0 &&
	    st.st_ino == l->ino && st.st_dev == l->dev &&
	    owner_read(sp->fd[SD_LOCK], LEASE_NAME "/owner", &o) == 0 &&
	    strcmp(o.nonce, l->me.nonce) == 0) {
		snprintf(gcname, sizeof gcname, "lease.%s", l->me.nonce);
		if (fsop_rename(sp->fd[SD_LOCK], LEASE_NAME, sp->fd[SD_GC],
		    gcname) == 0)
			(void)fsop_rmtree(sp->fd[SD_GC], gcname);
	}
	close(l->dirfd);
	l->dirfd = -1;
}
