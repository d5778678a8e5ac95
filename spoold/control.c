/*
 * control.c - requests to spoold, files in control/.
 *
 *   control/cancel.NONCE   record "cancel: [ID, ...]"
 *   control/shutdown.NONCE record "shutdown: yes": cancel every worker
 *                          job, clear the sizes asked (scale/), stop
 *
 * Written by "spool cancel" through tmp/ and a rename.  A request is
 * removed once every ID in it is final (do_cancel).  An ID spoold does
 * not know yet (its submission not accepted yet), or a task its worker
 * is stopping, keeps the request for later passes (which look only at
 * the IDs it still waits for), for up to CONTROL_KEEP_MS
 * from when this spoold first saw it, by its own monotonic clock: the
 * file's mtime is the file server's clock (or a touch), which can be
 * far from ours on shared storage.  A restarted spoold starts counting
 * again.  One whose cancel could not be written (the task's result, or
 * its worker's cancel/ file: a full disk, an I/O error) stays, whatever
 * its age, and is carried out at later passes until it is.  One that
 * could not be read (an I/O error, a stale handle) is read again at the
 * next rescan, and one that could not be removed is removed then.
 * A request dealt with is removed at the first pass at least
 * RELEASE_DELAY_MS after it was read (spoold.h: removed sooner, on
 * sshfs 6 requests in 40 stayed for good as .fuse_hiddenNNN), and at
 * the latest when spoold stops (control_removals).
 *
 * Cancelling a queued or waiting task makes it final at once; a placed
 * or running one is asked to stop through its worker (cancel/ID.ATT)
 * and becomes final with the worker's report ("reason: cancelled").
 *
 * Who may ask: in a private spool only its owner (a request of anyone
 * else is ignored, and said so in the log).  In a shared spool the
 * owner and root may ask anything; a member (the owner of the request
 * file) may cancel its own tasks only, and may not shut spoold down.
 * A request's name is its writer's choice: the log quotes it
 * (journal_q), so that a newline in it cannot make a line of its own.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fsop.h"
#include "journal.h"
#include "msg.h"
#include "rec.h"
#include "spoold.h"

#define CONTROL_MAX	(16u << 20)
#define CONTROL_KEEP_MS	(10 * 60 * 1000)

/* May a request of uid cancel task t (ID id)?  Says why not once. */
static int
may_cancel(uid_t uid, struct task *t, uint64_t id, const char *name)
{
	struct task_spec spec;
	uint32_t owner;

	if (uid == sd.sp.uid || uid == 0)
		return 1;
	if (bundle_read_spec(t, id, &spec) < 0) {
		msg_warn("control/%s: task %" PRIu64 ": its spec cannot be "
		    "read to check who submitted it; not cancelled",
		    journal_q(name), id);
		return 0;
	}
	owner = spec.uid;
	task_free(&spec);
	if (owner == (uint32_t)uid)
		return 1;
	msg_warn("control/%s: uid %u may not cancel task %" PRIu64 " of uid "
	    "%u; not cancelled", journal_q(name), (unsigned)uid, id,
	    (unsigned)owner);
	return 0;
}

/*
 * Deal with the IDs of a request; those it must still wait for are
 * moved to the front of ids, and their number returned (0: resolved).
 * An ID is resolved when its task is final (or not this requester's
 * to cancel).  A cancel that could not be written (TF_CANCEL_OWED: the
 * task's result, or its worker's cancel/ID.ATT; a full disk, an I/O
 * error) is tried again, without saying again that it was requested,
 * and *again set: the request is then kept whatever its age.  A
 * placed task asked to stop is not final until its worker
 * reports, and the request stays until then: that the task is being
 * cancelled is otherwise known only in spoold's memory (TF_CANCEL),
 * and a restarted spoold would take its worker's hand-back for a plain
 * one and place it again.  Read again, the request tells the new
 * spoold.
 */
static size_t
do_cancel(uint64_t *ids, size_t n, uid_t uid, const char *name, int *again)
{
	struct task *t;
	size_t i, left = 0;

	for (i = 0; i < n; i++) {
		if ((t = task_get(ids[i])) != NULL) {
			if (t->state == T_FINAL)
				continue;
			if ((t->flags & (TF_CANCEL | TF_CANCEL_OWED)) ==
			    TF_CANCEL) {
				ids[left++] = ids[i];	/* its worker was asked */
				continue;
			}
			/* (owed: not written; again, said once) */
			if (!(t->flags & TF_CANCEL) &&
			    !may_cancel(uid, t, ids[i], name))
				continue;
			if (!(t->flags & (TF_CANCEL | TF_CANCEL_OWED)))
				msg_info("task %" PRIu64 ": cancel requested",
				    ids[i]);
			if (finish_cancel(ids[i], t, "cancelled by request",
			    RR_CANCELLED) < 0)
				*again = 1;
			/* (a final task's page may be freed: look again) */
			if ((t = task_get(ids[i])) != NULL &&
			    t->state != T_FINAL)
				ids[left++] = ids[i];
		} else if (!finish_final_exists(ids[i], NULL))
			ids[left++] = ids[i];
	}
	return left;
}

/* some request is looked at again at the next rescan: it waits for an
 * ID, or could not be read or removed (control/ may not change again) */
static int pending;

/*
 * Requests kept for IDs not resolved yet, when they were first seen
 * (now_ms), and those IDs: a later pass looks at these, not at the
 * whole file again (a cancel of a large map stays while its placed
 * tasks are being stopped).  Few: a list is searched.  An entry whose
 * file was not listed in the last full pass (removed by hand) is
 * forgotten then.
 */
static struct kept {
	char	*name;
	uint64_t first_ms;
	unsigned pass;
	uid_t	uid;		/* the request's owner */
	int	again;		/* a cancel of it could not be written */
	uint64_t unlink_ms;	/* dealt with, removed from then on
				 * (now_ms); 0: not dealt with */
	uint64_t *left;		/* its IDs not resolved yet */
	size_t	nleft;
} *kept;
static size_t nkept, kept_cap;
static unsigned pass_no;

static struct kept *
kept_find(const char *name)
{
	size_t i;

	for (i = 0; i < nkept; i++)
		if (strcmp(kept[i].name, name) == 0) {
			kept[i].pass = pass_no;
			return &kept[i];
		}
	return NULL;
}

/* The entry of request name, made (first seen now) if there is none. */
static struct kept *
kept_get(const char *name)
{
	struct kept *k = kept_find(name);

	if (k)
		return k;
	if (nkept == kept_cap) {
		kept_cap = kept_cap ? 2 * kept_cap : 8;
		kept = xreallocarray(kept, kept_cap, sizeof *kept);
	}
	k = &kept[nkept++];
	memset(k, 0, sizeof *k);
	k->name = xstrdup(name);
	k->first_ms = now_ms();
	k->pass = pass_no;
	return k;
}

/* Forget entry k (the last one takes its place). */
static void
kept_drop(struct kept *k)
{
	free(k->name);
	free(k->left);
	*k = kept[--nkept];
}

/* Forget the entries of requests that are gone, those not listed in
 * this pass. */
static void
kept_forget(void)
{
	size_t i = 0;

	while (i < nkept)
		if (kept[i].pass != pass_no)
			kept_drop(&kept[i]);
		else
			i++;
}

/*
 * Keep request name (of uid) for a later pass, with the n IDs of left
 * (its entry takes left over) it waits for, unless none or it is older
 * than CONTROL_KEEP_MS: 1 if kept.  Its age is since we first saw it,
 * by our monotonic clock, not by its mtime: on shared storage that is
 * the file server's clock, and one 10 minutes behind ours dropped the
 * request at once.  One with a cancel not written (again) is kept
 * whatever its age: its task exists, and would run.
 */
static int
kept_keep(const char *name, uid_t uid, uint64_t *left, size_t n, int again)
{
	struct kept *k = kept_get(name);

	if (k->left != left) {
		free(k->left);
		k->left = left;
	}
	k->nleft = n;
	k->uid = uid;
	k->again = again;
	if (n == 0 || (!again && now_ms() - k->first_ms >= CONTROL_KEEP_MS))
		return 0;
	pending = 1;
	return 1;
}

/* Remove request k, dealt with, and forget it: 0; -1, one that cannot
 * be removed is tried again at the next rescan. */
static int
kept_remove(struct kept *k)
{
	if (fsop_unlink(sd.sp.fd[SD_CONTROL], k->name) < 0 &&
	    errno != ENOENT) {
		msg_once("control-unlink", "unlink: control/%s: %m (tried "
		    "again at the next rescan)", journal_q(k->name));
		pending = 1;
		return -1;
	}
	msg_clear("control-unlink");
	kept_drop(k);
	return 0;
}

static int
control_one(void *arg, const char *name, unsigned char type)
{
	struct buf b = BUF_INIT;
	struct rec_reader r;
	struct rec_field f;
	struct stat st;
	struct kept *k;
	const char *why = NULL;
	uint64_t *ids = NULL, *left = NULL;
	size_t n = 0, nleft = 0;
	int rc, again = 0;

	(void)arg;
	(void)type;
	if (name[0] == '.')
		return 0;
	/* dealt with: not read, carried out or reported again */
	if ((k = kept_find(name)) != NULL && k->unlink_ms)
		goto drop;
	/* read before: what it still waits for, not the whole file again */
	if (k != NULL && k->nleft > 0) {
		n = do_cancel(k->left, k->nleft, k->uid, name, &again);
		if (kept_keep(name, k->uid, k->left, n, again))
			return 0;
		goto drop;
	}
	if (fsop_read_file(sd.sp.fd[SD_CONTROL], name, CONTROL_MAX, &b,
	    &st) < 0) {
		/*
		 * Not a request file (a symbolic link, not a regular file,
		 * too large) or not one spoold may read (a member's file
		 * of mode 0600, spoold not root): removed, as before.
		 * Anything else (EIO, a stale handle past fsop's retries)
		 * may pass, and removed unread its cancels were lost: read
		 * again at the next rescan, as control/ itself may not
		 * change again.
		 */
		if (errno != ENOENT && errno != ELOOP && errno != EINVAL &&
		    errno != EFBIG && errno != EACCES && errno != EPERM) {
			msg_once("control-read", "read: control/%s: %m (tried "
			    "again at the next rescan)", journal_q(name));
			buf_free(&b);
			pending = 1;
			return 0;
		}
		if (errno != ENOENT)
			msg_warn("read: control/%s: %m", journal_q(name));
		buf_free(&b);
		goto drop;
	}
	msg_clear("control-read");
	if (spool_check_submission(&sd.sp, &st, &why) < 0) {
		msg_warn("control/%s: %s (uid %u); ignored", journal_q(name),
		    why, (unsigned)st.st_uid);
		goto drop;
	}
	rec_reader_init(&r, b.p, b.len);
	while ((rc = rec_next(&r, &f)) > 0) {
		if (rec_key_is(&f, "cancel")) {
			if (rec_get_idv(&r, &f, &ids, &n) < 0)
				break;
			n = do_cancel(ids, n, st.st_uid, name, &again);
			left = xreallocarray(left, nleft + n + 1, sizeof *left);
			memcpy(left + nleft, ids, n * sizeof *ids);
			nleft += n;
			free(ids);
			ids = NULL;
		} else if (rec_key_is(&f, "shutdown")) {
			if (st.st_uid != sd.sp.uid && st.st_uid != 0) {
				msg_warn("control/%s: shutdown asked by uid %u, "
				    "not by the spool's owner; ignored",
				    journal_q(name), (unsigned)st.st_uid);
				continue;
			}
			msg_info("control/%s: shutdown requested",
			    journal_q(name));
			spoold_stop("spool shutdown", 1);
		} else {
			r.why = "unknown request";
			break;
		}
	}
	buf_free(&b);
	if (r.why) {
		msg_warn("control/%s: line %d: %s; ignored", journal_q(name),
		    r.errline ? r.errline : f.line, r.why);
		free(left);
		goto drop;
	}
	if (nleft == 0)
		free(left);
	else if (kept_keep(name, st.st_uid, left, nleft, again))
		return 0;	/* keep for a later pass */
drop:
	k = kept_get(name);
	if (k->unlink_ms == 0)	/* from now on removed, and only that */
		k->unlink_ms = now_ms() + RELEASE_DELAY_MS;
	if (now_ms() < k->unlink_ms)
		pending = 1;
	else
		(void)kept_remove(k);
	return 0;
}

void
control_scan(void)
{
	int rc;

	if (!sd.control_dirty && !(sd.rescan_due && (pending ||
	    dirstamp_changed(sd.sp.rootfd, "control", &sd.st_control))))
		return;
	sd.control_dirty = 0;
	pending = 0;
	pass_no++;
	rc = fsop_list(sd.sp.fd[SD_CONTROL], ".", control_one, NULL);
	dirstamp_listed(&sd.st_control, rc, "control");
	if (rc == 0)
		kept_forget();
}

/*
 * spoold stops: remove the requests dealt with, once the last of them
 * was read RELEASE_DELAY_MS ago ("spool shutdown"'s own is one).  The
 * others stay for the next spoold.
 */
void
control_removals(void)
{
	uint64_t last = 0, now = now_ms();
	size_t i;

	for (i = 0; i < nkept; i++)
		if (kept[i].unlink_ms > last)
			last = kept[i].unlink_ms;
	if (last > now)
		sleep_ms(last - now);
	i = 0;
	while (i < nkept)
		if (kept[i].unlink_ms == 0 || kept_remove(&kept[i]) < 0)
			i++;
}
