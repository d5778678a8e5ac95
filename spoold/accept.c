/*
 * accept.c - take submissions from incoming/ (Postfix's pickup).
 *
 * Two kinds of files arrive:
 *
 *  - FIRST.bundle, written by "spool submit"/"spool map" through tmp/
 *    and a rename, so complete when seen.  Its IDs were claimed by the
 *    CLI (ids.h); the claim must exist with the bundle's nonce.
 *  - anything else not starting with ".": a task file a user dropped
 *    (cp job.sh SPOOL/incoming/).  It is taken once complete: when
 *    inotify saw it closed after writing or moved in (same host), or
 *    when its size and mtime have not changed for the settle time as
 *    measured by our own clock (any host).  Names starting with "." are
 *    left alone (the usual convention for files still being written).
 *
 * Every file is treated as hostile: opened with O_NOFOLLOW|O_NONBLOCK,
 * refused unless a regular file with one link, owned by the spool
 * owner (in a shared spool: by anyone, but writable only by its owner),
 * and within size bounds; parsed, validated, and re-written in
 * canonical form.  A bundle is read a piece at a time (bundle_file) and
 * its canonical form written to tmp/ as it is made, so that judging
 * one (up to 4 GiB) takes memory for a record or two, not for the
 * file.  Its owner is the submitter: a dropped file's tasks
 * get its uid, and a bundle whose records name another uid is refused
 * (tasks of a shared spool run as their uid, ckworker/identity.c).
 * Acceptance is three steps, each safe to repeat after a crash
 * (accept_recover):
 *
 *	rename incoming/NAME -> accepting/FIRST (or accepting/ID.drop.NAME,
 *	       which keeps the file's name for the task's name and source
 *	       when recovery finishes the acceptance; ID.drop if too long)
 *	write  specs/FIRST (the canonical bundle; tmp + fsync + rename)
 *	unlink accepting/...  (after the group commit made specs/ durable)
 *
 * except that a bundle already in canonical form, owned by the spool
 * owner, private to it and with one link (what the CLI and spoolfs
 * write) is accepted in one step, rename incoming/NAME -> specs/FIRST
 * (movable()): no copy and no flush on the way from a submission to its
 * placement.
 *
 * A source goes only after a flush that succeeded, this spoold's, came
 * after its spec was written (also one that recovery found written).
 * A flush that fails may have lost what it covered, and the next one
 * would not say so (Linux reports a writeback error once): so the specs
 * of the sources still waiting are written again from those sources
 * (accept_respec), and only a flush after that lets the sources go.
 *
 * A refused file is renamed to rejected/NAME with rejected/NAME.why
 * holding one line: what was wrong and where.  Nothing else changes; a
 * refused user file never consumes an ID.  A refused bundle's IDs get a
 * "rejected" result each, so that "spool wait" on them returns.  They
 * are owed in the files, not only in memory: accepting/FIRST.rejected
 * (owed_write) says so from before the rename to rejected/ until every
 * result is written and flushed, and each start and rescan writes what
 * it still owes (owed_pay).  So a start reads only those markers, never
 * rejected/ and its history.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle.h"
#include "fsop.h"
#include "ids.h"
#include "journal.h"
#include "msg.h"
#include "observe.h"
#include "rec.h"
#include "spoold.h"
#include "taskfile.h"

#define ACCEPT_FILES_PER_PASS 256

struct drop {
	char	*name;
	off_t	size;
	struct timespec mtime;
	uint64_t first_seen;
	int	complete;	/* inotify saw it finished */
	int	seen;		/* still present in the last listing */
	/* the ID claimed for it at a try whose rename to accepting/
	 * failed: the next try uses it, rather than claim one more */
	int	claimed;
	struct ids_claim claim;
};

static struct drop *drops;
static size_t ndrops;

/* accepting/ entries to unlink after the next group commit */
static char **cleanup;
static size_t ncleanup;
/* an acceptance failed half way (accepting/ -> specs/): finish it later */
static int accepting_retry;
/* a flush failed while sources waited in cleanup: their specs are
 * written again from them (accept_respec) before any goes */
static int respec;

static struct drop *
drop_find(const char *name, int create)
{
	size_t i;

	for (i = 0; i < ndrops; i++)
		if (strcmp(drops[i].name, name) == 0)
			return &drops[i];
	if (!create)
		return NULL;
	drops = xreallocarray(drops, ndrops + 1, sizeof *drops);
	memset(&drops[ndrops], 0, sizeof *drops);
	drops[ndrops].name = xstrdup(name);
	drops[ndrops].first_seen = sd.now;
	return &drops[ndrops++];
}

static void
drop_forget(const char *name)
{
	size_t i;

	for (i = 0; i < ndrops; i++)
		if (strcmp(drops[i].name, name) == 0) {
			free(drops[i].name);
			drops[i] = drops[--ndrops];
			return;
		}
}

static int
is_bundle_name(const char *name, uint64_t *first)
{
	size_t n = strlen(name), sl = strlen(BUNDLE_SUFFIX);
	char digits[24];

	if (n <= sl || n - sl >= sizeof digits ||
	    strcmp(name + n - sl, BUNDLE_SUFFIX) != 0)
		return 0;
	memcpy(digits, name, n - sl);
	digits[n - sl] = 0;
	if (strspn(digits, "0123456789") != n - sl)
		return 0;
	return ids_parse(digits, first) == 0;
}

/*
 * Bundles (FIRST.bundle) are renamed in complete and taken without a
 * drop entry: one made for them would be left behind, one per bundle.
 */
void
accept_note(const char *name, uint32_t mask)
{
	uint64_t first;

	if (name[0] && name[0] != '.' &&
	    (mask & (IN_CLOSE_WRITE | IN_MOVED_TO)) &&
	    !is_bundle_name(name, &first)) {
		struct drop *d = drop_find(name, 1);

		d->complete = 1;
	}
	sd.incoming_dirty = 1;
}

/* Has s a control byte (a newline, an escape sequence ...)? */
static int
has_ctl(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 1;
	return 0;
}

/*
 * Move incoming/name to rejected/ with a .why file holding one line,
 * "NAME: why" (control bytes of either escaped).  Logs once.  A name
 * too long for the suffix, or holding control bytes, is kept under a
 * made-up name; the .why line still shows the original.  So is a name
 * ending in ".why": as itself it would replace the reason given for
 * another refused file (in a shared spool, another user's) with its
 * own text.
 */
static void
reject_file(int fromfd, const char *from, const char *name, const char *why)
{
	char whyname[NAME_MAX + 8], alt[NAME_MAX + 1];
	struct buf b = BUF_INIT;
	const char *dest = name;

	buf_put_printable(&b, name);
	buf_puts(&b, ": ");
	buf_put_printable(&b, why);
	msg_warn("rejected %s", b.p);
	buf_putc(&b, '\n');
	journal_event("task", NULL, "rejected", "file=%s why=%s",
	    journal_q(name), journal_q(why));
	if (strlen(name) > NAME_MAX - 16) {
		fsop_tmpname(alt, sizeof alt, "long.");
		dest = alt;
	} else if (has_ctl(name)) {
		fsop_tmpname(alt, sizeof alt, "badname.");
		dest = alt;
	} else if (strlen(name) >= 4 &&
	    strcmp(name + strlen(name) - 4, ".why") == 0) {
		fsop_tmpname(alt, sizeof alt, "why.");
		dest = alt;
	}
	snprintf(whyname, sizeof whyname, "%s.why", dest);
	if (fsop_publish(sd.sp.fd[SD_TMP], sd.sp.fd[SD_REJECTED], whyname, b.p,
	    b.len, 0600, 0) < 0)
		msg_warn("write: rejected/%s: %m", whyname);
	if (fsop_rename(fromfd, from, sd.sp.fd[SD_REJECTED], dest) < 0) {
		fsop_tmpname(alt, sizeof alt, "rejected.");
		if (fsop_rename(fromfd, from, sd.sp.fd[SD_REJECTED], alt) < 0 &&
		    errno != ENOENT)
			msg_warn("rename: %s to rejected/: %m", from);
	}
	buf_free(&b);
	sd.c.rejected++;
	sd.summary_dirty = 1;
}

/*
 * Why opening or reading a submitted file of at most max bytes failed
 * (errno): -1 and a reason (for the .why file), or -2 (maybe
 * transient: leave it).
 */
static int
open_why(size_t max, char *why, size_t size)
{
	switch (errno) {
	case ELOOP:
		snprintf(why, size, "is a symbolic link; submit the file "
		    "itself");
		break;
	case EINVAL:
		snprintf(why, size, "not a regular file (a FIFO, device or "
		    "directory)");
		break;
	case EFBIG:
		snprintf(why, size, "file larger than %zu bytes", max);
		break;
	case EISDIR:
		snprintf(why, size, "is a directory");
		break;
	default:
		snprintf(why, size, "cannot read: %s", strerror(errno));
		return -2;
	}
	return -1;
}

/* Refuse a submitted file by its owner and links: 0, or -1 with why. */
static int
stat_why(const struct stat *st, char *why, size_t size)
{
	const char *reason;

	if (st->st_nlink != 1) {
		snprintf(why, size, "has %lu hard links; submit a file with "
		    "exactly one", (unsigned long)st->st_nlink);
		return -1;
	}
	if (spool_check_submission(&sd.sp, st, &reason) < 0) {
		snprintf(why, size, "%s (uid %u)", reason, (unsigned)st->st_uid);
		return -1;
	}
	return 0;
}

/*
 * Read a submitted file with every check a hostile file deserves.
 * Returns 0, or -1 with a reason (for the .why file) in why, or -2
 * (maybe transient).
 */
static int
read_untrusted(int dfd, const char *name, size_t max, struct buf *b,
    struct stat *st, char *why, size_t size)
{
	if (fsop_read_file(dfd, name, max, b, st) < 0)
		return open_why(max, why, size);
	return stat_why(st, why, size);
}

/*
 * Open a submitted bundle, to be read a piece at a time, with the same
 * checks: a descriptor, or -1 or -2 as read_untrusted.
 */
static int
open_untrusted(int dfd, const char *name, struct stat *st, char *why,
    size_t size)
{
	int fd, rc;

	if ((fd = fsop_open_regular(dfd, name, st)) < 0)
		return open_why(BUNDLE_BYTES_MAX, why, size);
	if ((uint64_t)st->st_size > BUNDLE_BYTES_MAX) {
		errno = EFBIG;
		rc = open_why(BUNDLE_BYTES_MAX, why, size);
	} else if ((rc = stat_why(st, why, size)) == 0)
		return fd;
	(void)close(fd);
	return rc;
}

/* Add an accepted task to memory. */
static void
accept_task(uint32_t bidx, const struct task_spec *t, size_t off, size_t len)
{
	struct task *mt = task_add(t->id);

	mt->bundle = bidx;
	mt->offset = (uint32_t)off;
	mt->len = (uint32_t)len;
	mt->prio = (int16_t)t->priority;
	mt->cores = (uint16_t)task_cores(t);
	mt->gpus = (uint8_t)t->gpus;
	mt->memory = t->memory;
	mt->walltime = (uint32_t)t->walltime;
	mt->retries = (uint16_t)t->retries;
	deps_add(t->id, mt, t);
}

/*
 * Canonical bundle text, written to a file in tmp/ as it is made (a
 * megabyte at a time), so that it never is in memory whole.  A failure
 * to write it is kept (err) and told when it is committed: the
 * acceptance is then finished later from accepting/, as one whose
 * specs/ file could not be written.
 */
struct canon {
	int	fd;		/* -1: none */
	int	err;		/* errno of a failure, or 0 */
	char	tmp[FSOP_TMPNAME_MAX];	/* its name in tmp/, "" if none */
	struct buf b;		/* not written yet */
};

#define CANON_INIT { -1, 0, "", BUF_INIT }
#define CANON_FLUSH (1u << 20)

static void
canon_open(struct canon *c)
{
	c->err = 0;
	c->b.len = 0;
	fsop_tmpname(c->tmp, sizeof c->tmp, NULL);
	/* (read back by accept_index once it is specs/FIRST) */
	if ((c->fd = fsop_openfile(sd.sp.fd[SD_TMP], c->tmp,
	    O_RDWR | O_CREAT | O_EXCL, 0600)) < 0) {
		c->err = errno;
		c->tmp[0] = 0;
	}
}

static void
canon_flush(struct canon *c)
{
	if (c->fd >= 0 && c->err == 0 && c->b.len &&
	    fsop_write(c->fd, c->b.p, c->b.len) < 0)
		c->err = errno;
	c->b.len = 0;
}

/*
 * Remove the file if it was not committed, and forget it.  Removed
 * while still open, then closed: on a FUSE mount built on high-level
 * libfuse (sshfs) a file removed while open is hidden as .fuse_hiddenNNN
 * until the release of its close removes it, but one removed just after
 * its close can meet that release on its way, and before libfuse 3.15
 * the hidden file then stays for good (libfuse issue 746; spoold.h):
 * across hosts 6 to 9 refused copies in 40 stayed.  On NFS the removal
 * is a silly rename that the close undoes; locally nothing is left.
 */
static void
canon_discard(struct canon *c)
{
	if (c->tmp[0] && fsop_unlink(sd.sp.fd[SD_TMP], c->tmp) < 0 &&
	    errno != ENOENT)
		msg_warn("unlink: tmp/%s: %m", c->tmp);
	c->tmp[0] = 0;
	if (c->fd >= 0)
		(void)close(c->fd);
	c->fd = -1;
	buf_free(&c->b);
}

/*
 * Parse and validate the bundle in fd a record at a time; with out
 * open, write it canonically there.  *canonical: the file is already
 * byte for byte what spoold would write.  0, or -1 with why
 * (line-prefixed), or -2 (a read failed; errno).
 */
static int
bundle_check(int fd, uid_t owner, struct bundle_hdr *hdr, struct canon *out,
    int *canonical, char *why, size_t size)
{
	struct bundle_file bf;
	struct buf rec = BUF_INIT;
	struct task_spec t;
	const char *reason;
	uint64_t canon_end = 0;
	int rc;

	memset(hdr, 0, sizeof *hdr);
	*canonical = 0;
	if ((rc = bundle_file_open(&bf, fd)) == 0) {
		*hdr = bf.br.hdr;	/* known even if a record is bad */
		bundle_begin(&rec, hdr->first, hdr->count, hdr->nonce);
		*canonical = bf.hdr_len == rec.len + 4 &&
		    memcmp(bf.win.p, rec.p, rec.len) == 0;
		canon_end = rec.len;
		if (out->fd >= 0)
			buf_append(&out->b, rec.p, rec.len);
	}
	while (rc == 0 && (rc = bundle_file_next(&bf, &t)) > 0) {
		if (task_validate(&t, &reason) < 0)
			snprintf(why, size, "task %" PRIu64 ": %s", t.id, reason);
		/* the submitter is whoever wrote the file: tasks run as it */
		else if (t.uid != (uint32_t)owner)
			snprintf(why, size, "task %" PRIu64 ": uid %u in the "
			    "record, but the file belongs to uid %u", t.id,
			    (unsigned)t.uid, (unsigned)owner);
		else {
			buf_reset(&rec);
			task_encode(&rec, &t);
			rc = 0;
		}
		task_free(&t);
		if (rc > 0) {
			rc = -3;	/* why is said */
			break;
		}
		/* canonical: each record where and as spoold writes it */
		*canonical = *canonical && bf.rec_off == canon_end + 4 &&
		    bf.rec_len == rec.len && memcmp(bf.rec, rec.p, rec.len) == 0;
		canon_end = bf.rec_off + bf.rec_len;
		if (out->fd >= 0) {
			rec_put_sep(&out->b);
			buf_append(&out->b, rec.p, rec.len);
			if (out->b.len >= CANON_FLUSH)
				canon_flush(out);
		}
	}
	if (rc == 0) {
		*canonical = *canonical && bf.end == canon_end;
		canon_flush(out);
	} else if (rc == -2)
		snprintf(why, size, "cannot read: %s", strerror(errno));
	else if (rc == -1)
		snprintf(why, size, "line %d: %s", bf.br.r.errline, bf.br.r.why);
	else
		rc = -1;
	bundle_file_close(&bf);
	buf_free(&rec);
	return rc;
}

/*
 * The claim must be the one this bundle was made under, and in a
 * shared spool its maker the bundle's owner: the members read ids/, so
 * a count and nonce are no secret, and a bundle of one member's made
 * under another's claim would take the other's IDs (its own tasks
 * accepted under them, the other's bundle then refused as already
 * submitted) or, refused, give them "rejected" results.
 */
static int
claim_check(const struct bundle_hdr *h, uid_t owner, char *why, size_t size)
{
	struct ids_claim c;
	uid_t maker;
	int rc = ids_read(&sd.sp, h->first, &c);

	if (rc < 0) {
		snprintf(why, size, "cannot read ID claim %" PRIu64 ": %s",
		    h->first, strerror(errno));
		return -2;
	}
	if (rc == 0) {
		snprintf(why, size, "IDs %" PRIu64 "-%" PRIu64 " were never "
		    "claimed", h->first, h->first + h->count - 1);
		return -1;
	}
	if (c.count != h->count || strcmp(c.nonce, h->nonce) != 0) {
		snprintf(why, size, "IDs %" PRIu64 "+%u belong to another "
		    "submission", h->first, h->count);
		return -1;
	}
	if (!sd.sp.cfg.shared)
		return 0;
	if ((rc = ids_owner(&sd.sp, h->first, &maker)) <= 0) {
		snprintf(why, size, "cannot read ID claim %" PRIu64 ": %s",
		    h->first, strerror(rc < 0 ? errno : ENOENT));
		return -2;
	}
	if (maker != owner) {
		snprintf(why, size, "IDs %" PRIu64 "+%u belong to another "
		    "submission (claimed by uid %u; this file belongs to uid "
		    "%u)", h->first, h->count, (unsigned)maker,
		    (unsigned)owner);
		return -1;
	}
	return 0;
}

static int
already_known(uint64_t first)
{
	char name[32];
	struct stat st;

	/* live: its first task is in memory; otherwise it is final */
	if (task_get(first))
		return 1;
	spool_task_path(first, name, sizeof name);
	return fsop_stat(sd.sp.fd[SD_TASKS], name, &st) == 0;
}

/*
 * Give each ID of a refused bundle that has no outcome yet a "rejected"
 * result; how many it owed.  *left: how many could not be written now
 * (a full disk, an I/O error; said once by finish_final): its marker
 * stays, and they are tried again (owed_settle).
 */
static uint64_t
reject_ids(const struct bundle_hdr *h, const char *why, uint64_t *left)
{
	struct result r;
	uint64_t id, n = 0;

	*left = 0;
	for (id = h->first; id < h->first + h->count; id++) {
		if (task_get(id) || finish_final_exists(id, NULL))
			continue;
		result_init(&r);
		r.id = id;
		r.state = RS_REJECTED;
		r.reason = RR_REJECTED;
		r.message = (char *)why;
		r.end = now_unix();
		if (finish_final(id, NULL, &r, NULL) < 0)
			(*left)++;
		n++;
	}
	return n;
}

/* accepting/NAME goes after the next group commit (accept_cleanup). */
static void
cleanup_add(const char *name)
{
	cleanup = xreallocarray(cleanup, ncleanup + 1, sizeof *cleanup);
	cleanup[ncleanup++] = xstrdup(name);
}

/*
 * Before a refused bundle goes to rejected/, where no start looks,
 * record the results its IDs are owed: accepting/FIRST.rejected with
 * their range and the reason, flushed with its directory entry (the
 * rename that follows must not reach the disk without it).  0, or -1
 * (said; the bundle is left where it is, and refused again later).
 */
static int
owed_write(const struct bundle_hdr *h, const char *why, char *name,
    size_t size)
{
	struct buf b = BUF_INIT;
	int rc;

	snprintf(name, size, "%" PRIu64 BUNDLE_OWED_SUFFIX, h->first);
	rec_put_uint(&b, "first", h->first);
	rec_put_uint(&b, "count", h->count);
	rec_put_str(&b, "why", why);
	rc = fsop_publish(sd.sp.fd[SD_TMP], sd.sp.fd[SD_ACCEPTING], name, b.p,
	    b.len, 0600, FSOP_DURABLE);
	if (rc < 0)
		msg_once("owed", "write: accepting/%s: %m (retrying)", name);
	else if ((rc = fsop_fsync_dir(sd.sp.fd[SD_ACCEPTING], sd.sp.rootfd,
	    spool_dir_name[SD_ACCEPTING])) < 0)
		msg_once("owed", "fsync: accepting: %m (retrying)");
	else
		msg_clear("owed");
	buf_free(&b);
	return rc;
}

/*
 * The results of marker NAME are all written (left 0): it goes once a
 * group commit made them durable.  Else accept_recover writes the rest
 * at a later rescan, and a start does if this spoold stops first.
 */
static void
owed_settle(const char *name, uint64_t left)
{
	if (left == 0)
		cleanup_add(name);
	else
		accepting_retry = 1;
}

/*
 * Index the tasks of a canonical bundle, specs/FIRST open as fd, as
 * bundle number bidx: a record at a time, as it was judged.
 *
 * done NULL: a new acceptance, whose read failing is fatal (the start
 * after reads it whole from specs/).  Else recovery's: a task already
 * final is not indexed (its slot's live count goes down), the first
 * *done records were indexed by an earlier call that a failed read
 * stopped half way and are passed over, not indexed twice (task_add,
 * deps_add and the live count would be), and *done counts the records
 * dealt with; -1 (errno) when a read fails, for the caller to call
 * again with the same bidx and done.  0 otherwise.  A record that does
 * not decode is a panic for a new acceptance, damage at recovery.
 */
int
accept_index(uint32_t bidx, int fd, uint32_t *done)
{
	struct bundle_file bf;
	struct task_spec t;
	char task[40];
	uint32_t n = 0;
	int rc, err;

	/*
	 * The slot is released where its live count reaches 0, here or in
	 * bundle_task_final (accept_task may cancel the task: its
	 * dependency failed), and nowhere else: released twice, it would
	 * be given to two bundles at once.
	 */
	if ((rc = bundle_file_open(&bf, fd)) == 0)
		while ((rc = bundle_file_next(&bf, &t)) > 0) {
			if (done == NULL) {
				accept_task(bidx, &t, (size_t)bf.rec_off,
				    bf.rec_len);
				observe_accepted(&t);
			} else if (n++ >= *done) {
				recover_beat();		/* a stat a task */
				if (!finish_final_exists(t.id, NULL))
					accept_task(bidx, &t, (size_t)bf.rec_off,
					    bf.rec_len);
				else if (--sd.bundles[bidx].live == 0)
					bundle_release(bidx);
				*done = n;
			}
			task_free(&t);
		}
	/*
	 * A record that does not decode: in a bundle just written (its
	 * text judged by bundle_check, then written by spoold or moved
	 * in unchanged) it is spoold's own bug; in one read back at
	 * recovery it is damage (a disk, a hand), which stops spoold as
	 * a header that does not decode does (load_spec).
	 */
	if (rc == -1 && done == NULL)
		msg_panic("own bundle %" PRIu64 " unreadable: line %d: %s",
		    sd.bundles[bidx].first, bf.br.r.errline, bf.br.r.why);
	if (rc == -1) {
		/* (past its count: no task of the bundle is named) */
		task[0] = 0;
		if (bf.br.seen < bf.br.hdr.count)
			snprintf(task, sizeof task, " (task %" PRIu64 ")",
			    bf.br.hdr.first + bf.br.seen);
		recover_stop_damaged("specs/%" PRIu64 ": line %d%s: %s",
		    sd.bundles[bidx].first, bf.br.r.errline, task,
		    bf.br.r.why);
	}
	err = errno;
	bundle_file_close(&bf);
	if (rc == 0)
		return 0;
	errno = err;
	/*
	 * A read that fails half way leaves part of the bundle indexed: a
	 * new acceptance starts again, when recovery reads it from specs/.
	 */
	if (done == NULL)
		msg_fatal("read: specs/%" PRIu64 ": %m", sd.bundles[bidx].first);
	return -1;
}

/*
 * Canonical bundle text written to out becomes specs/FIRST (flushed,
 * renamed): 0, or -1 (said; the caller's source stays in accepting/).
 */
static int
spec_write(uint64_t first, struct canon *out)
{
	char name[32];

	snprintf(name, sizeof name, "%" PRIu64, first);
	canon_flush(out);
	if (out->err)
		errno = out->err;
	if (out->err || fsop_fsync(out->fd) < 0 ||
	    fsop_rename(sd.sp.fd[SD_TMP], out->tmp, sd.sp.fd[SD_SPECS],
	    name) < 0) {
		msg_once("specs", "write: specs/%s: %m (retrying)", name);
		accepting_retry = 1;
		return -1;
	}
	out->tmp[0] = 0;	/* specs/name now */
	msg_clear("specs");
	return 0;
}

/*
 * Commit canonical bundle text written to out: specs/FIRST, then
 * memory.  The caller has already moved the source into
 * accepting/srcname, and discards out after.
 */
static int
commit_bundle(const struct bundle_hdr *h, struct canon *out,
    const char *srcname)
{
	if (spec_write(h->first, out) < 0)
		return -1;
	(void)accept_index(bundle_add_mem(h->first, h->count), out->fd,
	    NULL);
	cleanup_add(srcname);
	msg_debug("accepted %u task%s %" PRIu64 "%s", h->count,
	    h->count == 1 ? "" : "s", h->first, h->count > 1 ? "+" : "");
	sd.summary_dirty = 1;
	return 0;
}

/*
 * A bundle that is already canonical and the spool owner's own, as
 * spool submit, spool map and spoolfs write them, is accepted by moving
 * it, incoming/NAME -> specs/FIRST: its writer made it durable (file
 * and directory) before printing the IDs, so there is nothing to copy
 * or flush, and at every instant it is in incoming/ or in specs/, where
 * recovery finds it.  Anything else (another owner's file, one that
 * others may write or that has other links, or text that is not byte
 * for byte what spoold would write) is copied and flushed instead
 * (commit_bundle), so that specs/ holds only what spoold validated, in
 * files no one else can change.
 */
static int
movable(const struct stat *st)
{
	return S_ISREG(st->st_mode) && st->st_uid == geteuid() &&
	    (st->st_mode & 077) == 0 && st->st_nlink == 1;
}

/*
 * Accept the bundle open as fd, incoming/origin or (from_recovery)
 * accepting/origin.  One that may be moved is judged without writing
 * anything; if it is not canonical after all (a bundle written by
 * hand), it is judged again, written this time.
 */
static int
accept_bundle(int fd, const struct stat *st, const char *origin,
    int from_recovery)
{
	struct canon out = CANON_INIT;
	struct bundle_hdr h;
	char why[512], acc[32], claimwhy[256], owed[40];
	uint64_t left;
	int rc = -1, c, owes, canonical, move = !from_recovery && movable(st);

	if (!move)
		canon_open(&out);
	c = bundle_check(fd, st->st_uid, &h, &out, &canonical, why,
	    sizeof why);
	if (c == 0 && move && !canonical) {
		move = 0;
		canon_open(&out);
		c = bundle_check(fd, st->st_uid, &h, &out, &canonical, why,
		    sizeof why);
	}
	if (c == -2) {
		msg_warn("read: %s/%s: %s", from_recovery ? "accepting" :
		    "incoming", origin, why);
		if (from_recovery)
			accepting_retry = 1;
		goto out;	/* maybe transient: again later */
	}
	if (c < 0)
		goto refuse;
	if ((c = claim_check(&h, st->st_uid, why, sizeof why)) == -2) {
		msg_warn("%s: %s", origin, why);
		goto out;	/* transient: try again later */
	}
	if (c < 0)
		goto refuse;
	if (!from_recovery && already_known(h.first)) {
		snprintf(why, sizeof why, "IDs %" PRIu64 "+%u were already "
		    "submitted", h.first, h.count);
		memset(&h, 0, sizeof h);	/* do not touch their results */
		goto refuse;
	}
	snprintf(acc, sizeof acc, "%" PRIu64, h.first);
	if (move) {
		if (fsop_rename(sd.sp.fd[SD_INCOMING], origin,
		    sd.sp.fd[SD_SPECS], acc) < 0) {
			if (errno != ENOENT)
				msg_once("bundle-rename", "rename: incoming/%s "
				    "to specs/%s: %m (retrying)", origin, acc);
			goto out;
		}
		msg_clear("bundle-rename");
		(void)accept_index(bundle_add_mem(h.first, h.count), fd, NULL);
		msg_debug("accepted %u task%s %" PRIu64 "%s (moved)", h.count,
		    h.count == 1 ? "" : "s", h.first, h.count > 1 ? "+" : "");
		sd.summary_dirty = 1;
		rc = 0;
		goto out;
	}
	if (!from_recovery && fsop_rename(sd.sp.fd[SD_INCOMING], origin,
	    sd.sp.fd[SD_ACCEPTING], acc) < 0) {
		if (errno != ENOENT)
			msg_once("bundle-rename", "rename: incoming/%s to "
			    "accepting/%s: %m (retrying)", origin, acc);
		goto out;
	}
	if (!from_recovery)
		msg_clear("bundle-rename");
	rc = commit_bundle(&h, &out, acc);
	goto out;
refuse:
	/*
	 * Results only for IDs that really are this submission's.  One
	 * whose claim cannot be read now is left for later, as above:
	 * refused without its results, its IDs would never get one.
	 */
	owes = 0;
	if (h.count && (c = claim_check(&h, st->st_uid, claimwhy,
	    sizeof claimwhy)) == -2) {
		msg_warn("%s: %s (refused once it can be read)", origin,
		    claimwhy);
		if (from_recovery)
			accepting_retry = 1;
		goto out;
	}
	owes = h.count && c == 0;
	if (owes && owed_write(&h, why, owed, sizeof owed) < 0) {
		if (from_recovery)
			accepting_retry = 1;
		goto out;
	}
	if (from_recovery)
		reject_file(sd.sp.fd[SD_ACCEPTING], origin, origin, why);
	else
		reject_file(sd.sp.fd[SD_INCOMING], origin, origin, why);
	if (owes) {
		/* each counts as rejected (count_finished), in place of the
		 * file reject_file counted: refusals are counted per task */
		if (reject_ids(&h, why, &left) > 0)
			sd.c.rejected--;
		owed_settle(owed, left);
	}
out:
	/*
	 * A shared spool's ids/ is sticky: a member's claim cannot move a
	 * hint another made, so spoold, which may, moves it past every
	 * claim it accepts, and no claimer walks far.  It also makes the
	 * shard the next claim goes into, so that its owner, who could
	 * remove the claims in it, is not a member.
	 */
	if (rc == 0 && sd.sp.cfg.shared && !from_recovery) {
		ids_hint(&sd.sp, h.first);
		if (ids_shard_make(&sd.sp, h.first + h.count) < 0)
			msg_once("shard", "mkdir: ids/%" PRIu64 ": %m",
			    (h.first + h.count) / IDS_SHARD);
		else
			msg_clear("shard");
	}
	canon_discard(&out);
	return rc;
}

static void
take_bundle(const char *name)
{
	char why[256];
	struct stat st;
	int fd;

	fd = open_untrusted(sd.sp.fd[SD_INCOMING], name, &st, why, sizeof why);
	if (fd == -1)
		reject_file(sd.sp.fd[SD_INCOMING], name, name, why);
	else if (fd >= 0) {
		(void)accept_bundle(fd, &st, name, 0);
		(void)close(fd);
	} else if (errno != ENOENT)
		msg_warn("read: incoming/%s: %s", name, why);
}

/*
 * Parse a dropped file dfd/name, submitted as origname; 0 and *t, -1
 * with why, -2 transient.
 */
static int
parse_drop(int dfd, const char *name, const char *origname,
    struct task_spec *t, char *why, size_t size)
{
	struct taskfile_err te;
	struct buf b = BUF_INIT;
	char reason[300];
	struct stat st;
	int rc;

	task_init(t);
	rc = read_untrusted(dfd, name, TASK_FILE_MAX, &b, &st, why, size);
	if (rc < 0) {
		buf_free(&b);
		return rc;
	}
	if (taskfile_parse(b.p, b.len, t, &te) < 0) {
		taskfile_err_format(&te, reason, sizeof reason);
		snprintf(why, size, "%s", reason);
		task_free(t);
		buf_free(&b);
		return -1;
	}
	buf_free(&b);
	task_default_name(t, origname);
	t->source = xstrdup(origname);
	t->uid = (uint32_t)st.st_uid;
	t->submitted = now_unix();
	return 0;
}

/* Encode a one-task bundle and commit it. */
static int
commit_single(struct task_spec *t, const char *nonce, const char *accname)
{
	struct canon out = CANON_INIT;
	struct bundle_hdr h;
	int rc;

	memset(&h, 0, sizeof h);
	h.first = t->id;
	h.count = 1;
	snprintf(h.nonce, sizeof h.nonce, "%s", nonce);
	canon_open(&out);
	bundle_begin(&out.b, t->id, 1, nonce);
	bundle_add(&out.b, t);
	rc = commit_bundle(&h, &out, accname);
	canon_discard(&out);
	return rc;
}

/* Refuse a dependency on an ID not claimed yet: 0, -1 why, -2 error. */
static int
drop_deps_check(const struct task_spec *t, char *why, size_t size)
{
	uint64_t end;
	size_t i;

	if (t->nafter == 0)
		return 0;
	if (ids_end(&sd.sp, 0, &end) < 0) {
		snprintf(why, size, "read: ids: %s (retrying)", strerror(errno));
		return -2;
	}
	for (i = 0; i < t->nafter; i++)
		if (t->after[i] >= end) {
			snprintf(why, size, "after: no such task: %" PRIu64 " (a "
			    "task can only depend on tasks submitted before it, "
			    "so dependencies never form a cycle)", t->after[i]);
			return -1;
		}
	return 0;
}

/* Every dependency of t is below start (an ID claimed earlier for it). */
static int
deps_below(const struct task_spec *t, uint64_t start)
{
	size_t i;

	for (i = 0; i < t->nafter; i++)
		if (t->after[i] >= start)
			return 0;
	return 1;
}

static void
take_drop(const char *name)
{
	struct task_spec t;
	struct ids_claim c;
	struct drop *d;
	char why[512], acc[NAME_MAX + 1];
	const char *reason;
	int rc;

	if (has_ctl(name)) {
		/* it would end up in logs, listings and the task's source */
		reject_file(sd.sp.fd[SD_INCOMING], name, name, "file name "
		    "contains control characters (a newline, tab or escape); "
		    "rename it");
		drop_forget(name);
		return;
	}
	rc = parse_drop(sd.sp.fd[SD_INCOMING], name, name, &t, why, sizeof why);
	if (rc == -2) {
		if (errno != ENOENT)
			msg_warn("read: incoming/%s: %s", name, why);
		return;
	}
	if (rc < 0) {
		reject_file(sd.sp.fd[SD_INCOMING], name, name, why);
		drop_forget(name);
		return;
	}
	/*
	 * A dependency must name an ID below the task's own.  Every ID
	 * from the chain's end on is unclaimed and the task's own ID will
	 * be one of them, so a dependency there is refused before claiming
	 * (a refused file uses no ID); one below it is then always below
	 * the ID claimed next.
	 */
	if ((rc = drop_deps_check(&t, why, sizeof why)) != 0) {
		if (rc == -1) {
			reject_file(sd.sp.fd[SD_INCOMING], name, name, why);
			drop_forget(name);
		} else
			msg_once("ids-end", "incoming/%s: %s", name, why);
		task_free(&t);
		return;
	}
	msg_clear("ids-end");
	d = drop_find(name, 1);
	if (d->claimed && deps_below(&t, d->claim.start))
		c = d->claim;
	else if (ids_claim(&sd.sp, 1, &c) < 0) {
		msg_warn("claim an ID for incoming/%s: %s: %m", name, c.where);
		task_free(&t);
		return;
	}
	t.id = c.start;
	if (task_validate(&t, &reason) < 0)
		msg_panic("incoming/%s: task %" PRIu64 " invalid after "
		    "validation: %s", name, t.id, reason);
	if (strlen(name) + 32 < sizeof acc)
		snprintf(acc, sizeof acc, "%" PRIu64 ".drop.%s", t.id, name);
	else
		snprintf(acc, sizeof acc, "%" PRIu64 ".drop", t.id);
	if (fsop_rename(sd.sp.fd[SD_INCOMING], name, sd.sp.fd[SD_ACCEPTING],
	    acc) < 0) {
		/* (d: no drop was added or forgotten since drop_find) */
		d->claim = c;
		d->claimed = 1;
		msg_once("drop-rename", "rename: incoming/%s to accepting/%s: "
		    "%m (retrying)", name, acc);
		task_free(&t);
		return;
	}
	msg_clear("drop-rename");
	drop_forget(name);
	if (commit_single(&t, c.nonce, acc) == 0)
		msg_info("accepted incoming/%s as task %" PRIu64, name, t.id);
	task_free(&t);
}

/*
 * Is a dropped file complete?  Decide by inotify or by settling.  Not
 * yet: *due is when to look at it again.
 */
static int
drop_ready(const char *name, uint64_t *due)
{
	struct drop *d = drop_find(name, 1);
	struct stat st;

	d->seen = 1;
	if (d->complete)
		return 1;
	*due = sd.now + sd.sp.cfg.settle_ms;
	if (fsop_stat(sd.sp.fd[SD_INCOMING], name, &st) < 0) {
		/* gone since the listing: nothing to say; else (EIO, ESTALE)
		 * said, and looked at again a settle time later */
		if (errno != ENOENT)
			msg_once("drop-stat", "stat: incoming/%s: %m (looking "
			    "again later)", journal_q(name));
		return 0;
	}
	msg_clear("drop-stat");
	if (st.st_size != d->size || st.st_mtim.tv_sec != d->mtime.tv_sec ||
	    st.st_mtim.tv_nsec != d->mtime.tv_nsec) {
		d->size = st.st_size;
		d->mtime = st.st_mtim;
		d->first_seen = sd.now;
		return sd.sp.cfg.settle_ms == 0;
	}
	*due = d->first_seen + sd.sp.cfg.settle_ms;
	return sd.now >= *due;
}

/*
 * Write specs/FIRST again from its source accepting/name, as it was
 * written when accepted (a dropped file's "submitted" is the time of
 * this writing): 0, or -1 (said).  Not for a bundle whose tasks are all
 * final (its spec is on its way out, and nothing reads it again).
 */
static int
respec_one(const char *name)
{
	struct canon out = CANON_INIT;
	struct bundle_hdr h;
	struct task_spec t;
	struct ids_claim c;
	struct stat st;
	char why[512], specname[32];
	const char *orig;
	uint64_t id;
	int rc, canonical, fd, drop;

	/* FIRST, or ID.drop or ID.drop.NAME (recover_one) */
	if ((drop = bundle_drop_name(name, &id, &orig)) < 0 ||
	    (drop == 0 && ids_parse(name, &id) < 0) || !bundle_live(id))
		return 0;
	snprintf(specname, sizeof specname, "%" PRIu64, id);
	if (drop) {
		rc = parse_drop(sd.sp.fd[SD_ACCEPTING], name,
		    orig ? orig : name, &t, why, sizeof why);
		if (rc == 0 && (rc = ids_read(&sd.sp, id, &c)) <= 0) {
			task_free(&t);
			snprintf(why, sizeof why, rc == 0 ? "its ID claim is "
			    "gone" : "read: ids: %s", strerror(errno));
			rc = -1;
		}
		if (rc < 0) {
			msg_warn("write again: specs/%s: accepting/%s: %s "
			    "(retrying)", specname, name, why);
			return -1;
		}
		t.id = id;
		canon_open(&out);
		bundle_begin(&out.b, id, 1, c.nonce);
		bundle_add(&out.b, &t);
		task_free(&t);
	} else {
		if ((fd = open_untrusted(sd.sp.fd[SD_ACCEPTING], name, &st,
		    why, sizeof why)) < 0) {
			msg_warn("write again: specs/%s: accepting/%s: %s "
			    "(retrying)", specname, name, why);
			return -1;
		}
		canon_open(&out);
		rc = bundle_check(fd, st.st_uid, &h, &out, &canonical, why,
		    sizeof why);
		(void)close(fd);
		if (rc < 0) {
			msg_warn("write again: specs/%s: accepting/%s: %s "
			    "(retrying)", specname, name, why);
			canon_discard(&out);
			return -1;
		}
	}
	rc = spec_write(id, &out);
	canon_discard(&out);
	return rc;
}

/*
 * A flush failed while sources waited for it (accept_flush_failed):
 * write their specs again, from the sources, so that the next flush
 * that succeeds covers them whatever the failed one lost.  Work
 * bounded by the sources waiting; none while flushes succeed.
 */
static void
accept_respec(void)
{
	size_t i;
	int failed = 0;

	if (!respec)
		return;
	for (i = 0; i < ncleanup; i++)
		if (!bundle_owed_name(cleanup[i]) &&
		    respec_one(cleanup[i]) < 0)
			failed = 1;
	respec = failed;	/* else again at the next pass */
}

void
accept_flush_failed(void)
{
	if (ncleanup)
		respec = 1;
}

/* Not a dot file (fsop_list_names' keep) */
static int
undotted(const char *name)
{
	return name[0] != '.';
}

static int
name_cmp(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	size_t lx = strlen(x), ly = strlen(y);

	/* numeric names in numeric order: FIFO for bundles */
	return lx != ly ? (lx < ly ? -1 : 1) : strcmp(x, y);
}

void
accept_scan(void)
{
	struct fsop_names ns;
	uint64_t first, due;
	size_t i, taken = 0;
	int cut = 0, rc;

	accept_respec();
	if (accepting_retry && sd.rescan_due) {
		accepting_retry = 0;
		accept_recover();
	}
	/*
	 * A file settling (written without a close event inotify saw, or
	 * by another host) changes neither the directory nor its stamp:
	 * it is looked at again at its settle deadline (incoming_due, in
	 * the main loop's poll timeout) and at the rescans meanwhile (a
	 * writer that goes on restarts its settle time), not at every
	 * pass, which was a busy loop listing incoming/ for the whole
	 * settle time.
	 */
	if (!sd.incoming_dirty && !(sd.incoming_due && (sd.rescan_due ||
	    sd.now >= sd.incoming_due)) && !(sd.rescan_due &&
	    dirstamp_changed(sd.sp.rootfd, "incoming", &sd.st_incoming)))
		return;
	sd.incoming_dirty = 0;
	sd.incoming_due = 0;
	/* (the flag was cleared for it too: a failed one is made again at
	 * the next rescan through the stamp) */
	rc = fsop_list_names(sd.sp.fd[SD_INCOMING], ".", undotted, name_cmp,
	    &ns);
	dirstamp_listed(&sd.st_incoming, rc, "incoming");
	if (rc < 0)
		return;
	for (i = 0; i < ndrops; i++)
		drops[i].seen = 0;
	for (i = 0; i < ns.n; i++) {
		if (taken >= ACCEPT_FILES_PER_PASS) {
			sd.incoming_dirty = 1;	/* more next pass */
			cut = 1;
			break;
		}
		if (is_bundle_name(ns.v[i], &first)) {
			take_bundle(ns.v[i]);
			taken++;
		} else if (drop_ready(ns.v[i], &due)) {
			take_drop(ns.v[i]);
			taken++;
		} else if (sd.incoming_due == 0 || due < sd.incoming_due)
			sd.incoming_due = due;
	}
	/*
	 * Forget files that went away, settled or not: a file removed
	 * after inotify saw it closed would keep its entry (and its
	 * "complete", for a later file of that name) for good.  Only
	 * after a listing walked to its end: names past a cut were not
	 * looked at.
	 */
	for (i = 0; i < ndrops && !cut; i++)
		if (!drops[i].seen) {
			free(drops[i].name);
			drops[i--] = drops[--ndrops];
		}
	fsop_names_free(&ns);
}

/* Are sources waiting in accepting/ for the barrier before removal? */
int
accept_cleanup_pending(void)
{
	return ncleanup > 0;
}

/*
 * After a group commit that succeeded: the accepted sources can go,
 * unless a flush failed since their specs were (last) written.
 */
void
accept_cleanup(void)
{
	size_t i;

	if (respec)
		return;		/* accept_respec first, then a flush */
	for (i = 0; i < ncleanup; i++) {
		if (fsop_unlink(sd.sp.fd[SD_ACCEPTING], cleanup[i]) < 0 &&
		    errno != ENOENT) {
			msg_warn("unlink: accepting/%s: %m (retrying)",
			    cleanup[i]);
			accepting_retry = 1;
		}
		free(cleanup[i]);
	}
	ncleanup = 0;
}

/*
 * accepting/NAME, a marker of owed_write: write the results it says are
 * owed.  One that is not spoold's own (in a shared spool, a member's)
 * is refused as any unexpected file there: it could name IDs of others.
 */
static void
owed_pay(const char *name)
{
	struct bundle_hdr h;
	char *why;
	uint64_t left;
	int rc;

	rc = bundle_owed_read(sd.sp.fd[SD_ACCEPTING], name, geteuid(), &h,
	    &why);
	if (rc < 0) {
		if (errno != ENOENT) {	/* maybe transient: again later */
			msg_warn("read: accepting/%s: %m", name);
			accepting_retry = 1;
		}
		return;
	}
	if (rc == 0) {
		reject_file(sd.sp.fd[SD_ACCEPTING], name, name,
		    "unexpected file in accepting/");
		return;
	}
	(void)reject_ids(&h, why, &left);
	owed_settle(name, left);
	free(why);
}

/*
 * accepting/name became a spec (or final results) before: it goes
 * after the next flush, as an acceptance's source does, not at once.
 * That spec may have been written in this run and not flushed yet (a
 * rescan after an acceptance failed, a flush that failed), or by a
 * spoold that stopped before its flush.  Once in the list: rescans
 * meet it again while flushes fail.
 */
static void
recovered(const char *name)
{
	size_t i;

	for (i = 0; i < ncleanup; i++)
		if (strcmp(cleanup[i], name) == 0)
			return;
	cleanup_add(name);
	fsop_dirty();	/* a flush comes even if this run wrote nothing */
}

/* Finish acceptances a crash interrupted. */
static int
recover_one(void *arg, const char *name, unsigned char type)
{
	struct task_spec t;
	struct ids_claim c;
	char why[512], specname[32];
	const char *orig;
	struct stat st;
	uint64_t id;
	int rc, fd;

	(void)arg;
	(void)type;
	recover_beat();
	if (bundle_owed_name(name)) {
		owed_pay(name);
		return 0;
	}
	/* ID.drop, or ID.drop.NAME: a dropped file, submitted as NAME */
	if ((rc = bundle_drop_name(name, &id, &orig)) != 0) {
		if (rc < 0)
			goto foreign;
		if (orig == NULL)
			orig = name;
		snprintf(specname, sizeof specname, "%" PRIu64, id);
		if (fsop_stat(sd.sp.fd[SD_SPECS], specname, &st) == 0 ||
		    finish_final_exists(id, NULL)) {
			recovered(name);
			return 0;
		}
		rc = parse_drop(sd.sp.fd[SD_ACCEPTING], name, orig, &t, why,
		    sizeof why);
		if (rc == -1) {
			reject_file(sd.sp.fd[SD_ACCEPTING], name, orig, why);
			return 0;
		}
		if (rc == 0 && (rc = ids_read(&sd.sp, id, &c)) == 0) {
			task_free(&t);
			reject_file(sd.sp.fd[SD_ACCEPTING], name, orig,
			    "its ID claim is gone");
			return 0;
		}
		if (rc < 0) {	/* maybe transient: again later */
			if (rc == -1)
				task_free(&t);
			msg_warn("read: accepting/%s: %m", name);
			accepting_retry = 1;
			return 0;
		}
		t.id = id;
		(void)commit_single(&t, c.nonce, name);
		task_free(&t);
		return 0;
	}
	if (ids_parse(name, &id) < 0)
		goto foreign;
	if (fsop_stat(sd.sp.fd[SD_SPECS], name, &st) == 0 ||
	    finish_final_exists(id, NULL)) {
		recovered(name);
		return 0;
	}
	fd = open_untrusted(sd.sp.fd[SD_ACCEPTING], name, &st, why,
	    sizeof why);
	if (fd == -1)
		reject_file(sd.sp.fd[SD_ACCEPTING], name, name, why);
	else if (fd >= 0) {
		(void)accept_bundle(fd, &st, name, 1);
		(void)close(fd);
	} else {	/* maybe transient: again later */
		msg_warn("read: accepting/%s: %s", name, why);
		accepting_retry = 1;
	}
	return 0;
foreign:
	reject_file(sd.sp.fd[SD_ACCEPTING], name, name,
	    "unexpected file in accepting/");
	return 0;
}

void
accept_recover(void)
{
	if (fsop_list(sd.sp.fd[SD_ACCEPTING], ".", recover_one, NULL) < 0) {
		msg_warn("list: accepting: %m (retrying)");
		accepting_retry = 1;	/* what it holds is finished later */
	}
}
