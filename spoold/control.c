/*
 * control.c - requests to spoold, files in control/.
 *
 *   control/cancel.NONCE   record "cancel: [ID, ...]"
 *   control/shutdown.NONCE record "shutdown: yes": cancel every worker
 *                          job, clear the sizes asked (scale/), stop
 *
 * Written by "spool cancel" through tmp/ and a rename.  A request is
 * removed once every ID in it is dealt with: cancelled, or already
 * final.  An ID spoold does not know yet (its submission not accepted
 * yet) keeps the request for later passes, for up to CONTROL_KEEP_MS.
 *
 * Cancelling a queued or waiting task makes it final at once; a placed
 * or running one is asked to stop through its worker (cancel/ID.ATT)
 * and becomes final with the worker's report ("reason: cancelled").
 *
 * Who may ask: in a private spool only its owner (a request of anyone
 * else is ignored, and said so in the log).  In a shared spool the
 * owner and root may ask anything; a member (the owner of the request
 * file) may cancel its own tasks only, and may not shut spoold down.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fsop.h"
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
		    "read to check who submitted it; not cancelled", name, id);
		return 0;
	}
	owner = spec.uid;
	task_free(&spec);
	if (owner == (uint32_t)uid)
		return 1;
	msg_warn("control/%s: uid %u may not cancel task %" PRIu64 " of uid "
	    "%u; not cancelled", name, (unsigned)uid, id, (unsigned)owner);
	return 0;
}

/* 1 if every ID of the request is resolved. */
static int
do_cancel(const uint64_t *ids, size_t n, uid_t uid, const char *name)
{
	struct task *t;
	size_t i;
	int resolved = 1;

	for (i = 0; i < n; i++) {
		if ((t = task_get(ids[i])) != NULL) {
			if (t->state == T_FINAL || (t->flags & TF_CANCEL))
				continue;
			if (!may_cancel(uid, t, ids[i], name))
				continue;
			msg_info("task %" PRIu64 ": cancel requested", ids[i]);
			finish_cancel(ids[i], t, "cancelled by request",
			    RR_CANCELLED);
		} else if (!finish_final_exists(ids[i], NULL))
			resolved = 0;
	}
	return resolved;
}

static int pending;	/* some request waits for an unknown ID */

static int
control_one(void *arg, const char *name, unsigned char type)
{
	struct buf b = BUF_INIT;
	struct rec_reader r;
	struct rec_field f;
	struct stat st;
	const char *why = NULL;
	uint64_t *ids = NULL;
	size_t n = 0;
	int resolved = 1, rc;
	double age;

	(void)arg;
	(void)type;
	if (name[0] == '.')
		return 0;
	if (fsop_read_file(sd.sp.fd[SD_CONTROL], name, CONTROL_MAX, &b,
	    &st) < 0) {
		if (errno != ENOENT)
			msg_warn("read: control/%s: %m", name);
		goto drop;
	}
	if (spool_check_submission(&sd.sp, &st, &why) < 0) {
		msg_warn("control/%s: %s (uid %u); ignored", name, why,
		    (unsigned)st.st_uid);
		goto drop;
	}
	rec_reader_init(&r, b.p, b.len);
	while ((rc = rec_next(&r, &f)) > 0) {
		if (rec_key_is(&f, "cancel")) {
			if (rec_get_idv(&r, &f, &ids, &n) < 0)
				break;
			resolved &= do_cancel(ids, n, st.st_uid, name);
			free(ids);
			ids = NULL;
		} else if (rec_key_is(&f, "shutdown")) {
			if (st.st_uid != sd.sp.uid && st.st_uid != 0) {
				msg_warn("control/%s: shutdown asked by uid %u, "
				    "not by the spool's owner; ignored", name,
				    (unsigned)st.st_uid);
				continue;
			}
			msg_info("control/%s: shutdown requested", name);
			spoold_stop("spool shutdown", 1);
		} else {
			r.why = "unknown request";
			break;
		}
	}
	if (r.why) {
		msg_warn("control/%s: line %d: %s; ignored", name, r.errline ?
		    r.errline : f.line, r.why);
		goto drop;
	}
	/*
	 * Its age by its mtime; one ahead of our clock (another host's
	 * clock, a touch) is age 0: a negative double converted to an
	 * unsigned number is undefined, and was huge, dropping it at once.
	 */
	age = now_unix() - (double)st.st_mtime;
	if (age < 0)
		age = 0;
	if (!resolved && age * 1000 < CONTROL_KEEP_MS) {
		buf_free(&b);
		pending = 1;
		return 0;	/* keep for a later pass */
	}
drop:
	buf_free(&b);
	if (fsop_unlink(sd.sp.fd[SD_CONTROL], name) < 0 && errno != ENOENT)
		msg_warn("unlink: control/%s: %m", name);
	return 0;
}

void
control_scan(void)
{
	if (!sd.control_dirty && !(sd.rescan_due && (pending ||
	    dirstamp_changed(sd.sp.rootfd, "control", &sd.st_control))))
		return;
	sd.control_dirty = 0;
	pending = 0;
	if (fsop_list(sd.sp.fd[SD_CONTROL], ".", control_one, NULL) < 0)
		msg_warn("list: control: %m");
}
