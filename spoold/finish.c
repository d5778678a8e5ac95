/*
 * finish.c - accepting outcomes: results, retries, requeues, cancels.
 *
 * The final state of a task is the directory tasks/SHARD/ID.  It
 * appears in one rename and is never replaced: rename(2) of a directory
 * onto an existing non-empty one fails, so a task is accepted at most
 * once even if two paths race to finish it.  One that finds it there
 * already keeps it, and the task is final with the result found there
 * (final_as_found).
 *
 *  - A finished attempt: the assignment (done/ID.ATT) is renamed into
 *    the worker's work/ID.ATT directory (stdout, stderr, result) as
 *    "spec", then that directory is renamed to tasks/SHARD/ID, so that
 *    it appears with everything in it.  A crash between the two leaves
 *    a work/ID.ATT with its spec in it and no report in done/: the next
 *    start completes it (finish_recover, called by recover.c).  A
 *    second rename that fails is tried again at each rescan
 *    (accept_final, accept_halves).
 *  - A task that never ran (cancelled, its dependency failed, refused,
 *    or its worker lost too often): a directory with spec and result is
 *    built in tmp/ and renamed in.
 *
 * An attempt that is retried (exit != 0 with retries left) or handed
 * back keeps its output: its directory moves to attempts/ID.ATT and,
 * when the task becomes final, into the directory that is about to be
 * renamed to tasks/SHARD/ID, as attempt.ATT: a final task appears with
 * its earlier attempts in it ("spool wait" returns as soon as it
 * appears).  A rename that fails puts them back into attempts/.  The
 * attempt counter of such tasks is kept in requeued/ID so a restarted
 * spoold never reuses an attempt number (that number is the fence).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsop.h"
#include "journal.h"
#include "msg.h"
#include "spoold.h"

static uint64_t shard_made = UINT64_MAX;

/* tasks/SHARD exists (made once per SPOOL_SHARD_SIZE tasks, not per task) */
static int
ensure_shard(uint64_t id)
{
	char shard[24];

	if (id / SPOOL_SHARD_SIZE == shard_made)
		return 0;
	spool_task_shard(id, shard, sizeof shard);
	if (fsop_mkdir(sd.sp.fd[SD_TASKS], shard, 0700) < 0 && errno != EEXIST)
		return -1;
	shard_made = id / SPOOL_SHARD_SIZE;
	return 0;
}

/*
 * Rename odfd/oname to tasks/path, the directory of final task id, in
 * its shard.  The shard made last may have gone since (emptied and
 * removed by "spool purge", or by hand: spool-layout(5)); the rename
 * then fails with ENOENT, and did so at every rescan, the task never
 * final: the shard is made again and the rename tried once more.
 */
static int
rename_final(int odfd, const char *oname, uint64_t id, const char *path)
{
	if (ensure_shard(id) == 0 &&
	    fsop_rename(odfd, oname, sd.sp.fd[SD_TASKS], path) == 0)
		return 0;
	if (errno != ENOENT)
		return -1;
	shard_made = UINT64_MAX;
	if (ensure_shard(id) < 0)
		return -1;
	return fsop_rename(odfd, oname, sd.sp.fd[SD_TASKS], path);
}

int
finish_final_exists(uint64_t id, struct result *r)
{
	char path[SPOOL_PATH_MAX + 16];
	struct buf b = BUF_INIT;
	const char *why;
	struct stat st;

	spool_task_path(id, path, sizeof path);
	if (r == NULL)
		return fsop_stat(sd.sp.fd[SD_TASKS], path, &st) == 0;
	strcat(path, "/result");
	if (fsop_read_file(sd.sp.fd[SD_TASKS], path, RESULT_MAX, &b, NULL) < 0) {
		buf_free(&b);
		return 0;
	}
	if (result_decode(b.p, b.len, r, &why) < 0) {
		msg_warn("tasks/%s: %s", path, why);
		result_init(r);
		r->id = id;
		r->state = RS_FAILED;
	}
	buf_free(&b);
	return 1;
}

/*
 * 0, or -1 (said once until a write works): the task is then owed its
 * record, which place.c writes before its next attempt is placed.
 * Without it a restarted spoold would take the attempt number, the
 * tries and the losses from older traces (attempts/, a lost worker's
 * revoked/ until that directory goes): the bound of --retries and
 * max-requeues would start again.  lost_att, when not 0, is the
 * attempt whose loss the lost count includes (finish_loss_record).
 */
static int
requeued_record(uint64_t id, struct task *t, uint32_t lost_att)
{
	struct buf b = BUF_INIT;
	char name[24];
	int rc;

	rec_put_uint(&b, "id", id);
	rec_put_uint(&b, "attempt", t->attempt);
	rec_put_uint(&b, "tries", t->tries);
	rec_put_uint(&b, "lost", t->lost);
	if (lost_att)
		rec_put_uint(&b, "lost_attempt", lost_att);
	snprintf(name, sizeof name, "%" PRIu64, id);
	t->flags |= TF_REQUEUED;
	rc = fsop_publish(sd.sp.fd[SD_TMP], sd.sp.fd[SD_REQUEUED], name, b.p,
	    b.len, 0600, FSOP_DURABLE);
	if (rc < 0) {
		t->flags |= TF_REQUEUE_OWED;
		msg_once("requeued", "write: requeued/%s: %m (its next "
		    "attempt waits until it is written)", name);
	} else {
		t->flags &= ~TF_REQUEUE_OWED;
		msg_clear("requeued");
	}
	buf_free(&b);
	return rc;
}

int
requeued_write(uint64_t id, struct task *t)
{
	return requeued_record(id, t, 0);
}

static void
requeued_clear(uint64_t id, const struct task *t)
{
	char name[24];

	/*
	 * Written at attempt 1 too (a loss, a hand-back or a retry of the
	 * first attempt, then final before a second one: cancelled, or
	 * out of requeues): the attempt number alone does not tell.
	 */
	if (!(t->flags & TF_REQUEUED) && t->attempt <= 1)
		return;
	snprintf(name, sizeof name, "%" PRIu64, id);
	if (fsop_unlink(sd.sp.fd[SD_REQUEUED], name) < 0 && errno != ENOENT)
		msg_warn("unlink: requeued/%s: %m", name);
}

/* Where a task's earlier attempts are: attempts/ID.N (dir NULL) or
 * DIR/attempt.N, under fd; label names fd's directory in messages;
 * task: DIR is the attempt's own (its task's SPOOL_TASK_DIR). */
struct adir {
	int	fd;
	const char *dir;
	const char *label;
	int	task;
};

/*
 * An attempt's directory is its task's SPOOL_TASK_DIR, and some names
 * in it are ckspool's (spool(1)): what the task left under one that
 * spoold moves something onto is removed, with a warning, so that the
 * move can be made.  1 if removed; else 0, errno unchanged.
 */
static int
task_leftover_removed(int dfd, const char *name, const char *label,
    const char *what)
{
	int saved = errno;

	msg_warn("%s%s: %s; removed (the name is ckspool's)", label, name,
	    what);
	if (fsop_rmtree(dfd, name) < 0) {
		msg_warn("remove: %s%s: %m", label, name);
		errno = saved;
		return 0;
	}
	return 1;
}

/*
 * Move a report (FROM/ANAME) into an attempt's directory as its spec
 * (TO/SPEC, SPEC being "ANAME/spec"), the attempt being in work/ (an
 * acceptance) or attempts/ (an archived one; LABEL names it).  A
 * directory the task named spec fails the rename: it is removed and
 * the rename made again.  0, or -1 with errno the rename's.
 */
static int
spec_join(int from, const char *aname, int to, const char *spec,
    const char *label)
{
	struct stat st;
	int saved;

	if (fsop_rename(from, aname, to, spec) == 0)
		return 0;
	saved = errno;
	if (fsop_stat(to, spec, &st) < 0 || !S_ISDIR(st.st_mode)) {
		errno = saved;
		return -1;
	}
	errno = saved;
	if (!task_leftover_removed(to, spec, label,
	    "a directory the task made"))
		return -1;
	return fsop_rename(from, aname, to, spec);
}

static void
attempt_name(const struct adir *d, uint64_t id, uint32_t a, char *buf,
    size_t size)
{
	if (d->dir)
		snprintf(buf, size, "%s/attempt.%u", d->dir, a);
	else
		snprintf(buf, size, "%" PRIu64 ".%u", id, a);
}

/*
 * Move attempts 1 .. upto-1 of task id from one place to another.  Not
 * every number was kept (attempts taken back from a lost worker are
 * not): ENOENT is no error.
 */
static void
attempts_move(uint64_t id, uint32_t upto, const struct adir *from,
    const struct adir *to)
{
	char fname[SPOOL_PATH_MAX + 32], tname[SPOOL_PATH_MAX + 32];
	uint32_t a;

	for (a = 1; a < upto; a++) {
		attempt_name(from, id, a, fname, sizeof fname);
		attempt_name(to, id, a, tname, sizeof tname);
		if (fsop_rename(from->fd, fname, to->fd, tname) == 0 ||
		    errno == ENOENT)
			continue;
		/* a file, or a directory not empty, the task left there */
		if (to->task && (errno == EEXIST || errno == ENOTEMPTY ||
		    errno == ENOTDIR) && task_leftover_removed(to->fd, tname,
		    to->label, "what the task left there") &&
		    fsop_rename(from->fd, fname, to->fd, tname) == 0)
			continue;
		if (errno != ENOENT)
			msg_warn("rename: %s%s to %s%s: %m", from->label, fname,
			    to->label, tname);
	}
}

/* Bookkeeping once tasks/SHARD/ID exists. */
static void
task_became_final(uint64_t id, struct task *t, const struct result *r)
{
	int ok = r->state == RS_DONE;
	char how[160];

	count_finished(r->state);
	journal_result("final", r);
	result_how(r, how, sizeof how);
	if (t) {
		task_set_state(t, T_FINAL);
		if (!ok)
			t->flags |= TF_FAILED;
		requeued_clear(id, t);
		bundle_task_final(t);
	}
	deps_final(id, ok, how);
	if (t)
		task_release(id);	/* t may be freed: last */
}

/*
 * tasks/SHARD/ID was there already when spoold went to make it (by
 * another path: a hand, a restored backup): it is kept, and memory
 * follows it, with the result found there, so that the task's worker
 * capacity, its dependents and its bundle are not held for good.
 */
static void
final_as_found(uint64_t id, struct task *t)
{
	struct result kept;

	result_init(&kept);
	if (!finish_final_exists(id, &kept)) {
		kept.id = id;
		kept.state = RS_FAILED;	/* no result there: not done */
	}
	task_became_final(id, t, &kept);
	result_free(&kept);
}

int
finish_final(uint64_t id, struct task *t, const struct result *r,
    const struct task_spec *spec)
{
	char tmp[FSOP_TMPNAME_MAX + 8], path[SPOOL_PATH_MAX];
	struct adir archive = { sd.sp.fd[SD_ATTEMPTS], NULL, "attempts/", 0 };
	struct adir here, final;
	struct task_spec own;
	struct buf b = BUF_INIT;
	int dfd = -1, have_spec = 0, rc = -1;
	uint32_t upto;

	if (spec == NULL && t && bundle_read_spec(t, id, &own) == 0) {
		spec = &own;
		have_spec = 1;
	}
	snprintf(tmp, sizeof tmp, "final.");
	fsop_tmpname(tmp + 6, sizeof tmp - 6, NULL);
	if (fsop_mkdir(sd.sp.fd[SD_TMP], tmp, 0700) < 0 ||
	    (dfd = fsop_opendir(sd.sp.fd[SD_TMP], tmp)) < 0) {
		msg_once("final", "mkdir: tmp/%s: %m", tmp);
		goto out;
	}
	if (spec) {
		task_encode(&b, spec);
		if (fsop_publish(sd.sp.fd[SD_TMP], dfd, "spec", b.p, b.len, 0600,
		    FSOP_DURABLE) < 0) {
			msg_once("final", "write: tmp/%s/spec: %m", tmp);
			goto fail;
		}
		buf_reset(&b);
	}
	result_encode(&b, r);
	if (fsop_publish(sd.sp.fd[SD_TMP], dfd, "result", b.p, b.len, 0600,
	    FSOP_DURABLE) < 0) {
		msg_once("final", "write: tmp/%s/result: %m", tmp);
		goto fail;
	}
	spool_task_path(id, path, sizeof path);
	/* after the result: recovery finds the ID there (recover.c) */
	here = (struct adir){ sd.sp.fd[SD_TMP], tmp, "tmp/", 0 };
	final = (struct adir){ sd.sp.fd[SD_TASKS], path, "tasks/", 0 };
	upto = t ? t->attempt + 1 : 0;
	attempts_move(id, upto, &archive, &here);
	if (rename_final(sd.sp.fd[SD_TMP], tmp, id, path) < 0) {
		if (errno != EEXIST && errno != ENOTEMPTY) {
			msg_once("final", "rename: tmp/%s to tasks/%s: %m",
			    tmp, path);
			attempts_move(id, upto, &here, &archive);
			goto fail;
		}
		msg_warn("task %" PRIu64 " already has a result; keeping it",
		    id);
		attempts_move(id, upto, &here, &final);
		(void)fsop_rmtree(sd.sp.fd[SD_TMP], tmp);
		final_as_found(id, t);
		rc = 0;
		goto out;
	}
	msg_clear("final");
	msg_debug("task %" PRIu64 " %s (%s)", id, result_state_name[r->state],
	    result_reason_name[r->reason]);
	task_became_final(id, t, r);
	rc = 0;
	goto out;
fail:
	(void)fsop_rmtree(sd.sp.fd[SD_TMP], tmp);
out:
	if (dfd >= 0)
		close(dfd);
	if (have_spec)
		task_free(&own);
	buf_free(&b);
	return rc;
}

int
finish_cancel(uint64_t id, struct task *t, const char *why,
    enum result_reason reason)
{
	struct worker *w;
	struct result r;
	char name[WDIR_ANAME_MAX];
	int fd;

	if (t->state == T_PLACED) {
		/* ask the worker; its result will say "cancelled by request" */
		t->flags |= TF_CANCEL;
		if ((w = worker_by_index(t->worker)) == NULL)
			return 0;
		wdir_aname(id, t->attempt, name, sizeof name);
		fd = fsop_create(w->subfd[WS_CANCEL], name, 0600);
		if (fd >= 0)
			(void)fsop_close(fd);
		if (fd < 0 && errno != EEXIST) {
			/* not asked: the request that named it asks again */
			t->flags |= TF_CANCEL_OWED;
			msg_once("cancel", "create: workers/%s/cancel/%s: %m "
			    "(asked again at the next rescan)", w->wid, name);
			return -1;
		}
		msg_clear("cancel");
		t->flags &= ~TF_CANCEL_OWED;
		journal_task(id, "cancel", "att=%u worker=%s", t->attempt,
		    w->wid);
		return 0;
	}
	result_init(&r);
	r.id = id;
	r.attempt = t->attempt;
	r.state = RS_CANCELLED;
	r.reason = reason;
	r.message = (char *)why;
	r.end = now_unix();
	if (finish_final(id, t, &r, NULL) < 0) {
		t->flags |= TF_CANCEL_OWED;	/* (control.c asks again) */
		return -1;
	}
	return 0;
}

/*
 * Final results not written (finish_final failed: a full disk, an I/O
 * error) that nothing else would write: of a task taken back from a
 * lost worker once too often (T_WAITING, neither queued nor placed),
 * on which "spool wait" would wait for good.  finish_retry writes them
 * at each heartbeat until it can.  (Those of a refused bundle's IDs are
 * owed in accepting/, which outlives spoold: accept.c, owed_write.)
 */
struct later {
	uint64_t id;
	struct buf rec;		/* the result, encoded */
};

static struct later *later;
static size_t nlater;

void
finish_final_later(uint64_t id, const struct result *r)
{
	later = xreallocarray(later, nlater + 1, sizeof *later);
	later[nlater].id = id;
	later[nlater].rec = (struct buf)BUF_INIT;
	result_encode(&later[nlater].rec, r);
	nlater++;
}

void
finish_retry(void)
{
	struct later *v = later;
	size_t i, n = nlater;
	struct result r;
	struct task *t;
	const char *why;

	/* (taken out first: one that fails again is put back) */
	later = NULL;
	nlater = 0;
	for (i = 0; i < n; i++) {
		/* still owed: the task still waiting */
		t = task_get(v[i].id);
		if (t != NULL && t->state == T_WAITING) {
			result_init(&r);
			if (result_decode(v[i].rec.p, v[i].rec.len, &r,
			    &why) < 0)
				msg_panic("task %" PRIu64 ": its own result "
				    "record does not decode: %s", v[i].id, why);
			if (finish_final(v[i].id, t, &r, NULL) < 0)
				finish_final_later(v[i].id, &r);
			result_free(&r);
		}
		buf_free(&v[i].rec);
	}
	free(v);
}

/*
 * The record names the attempt lost (lost_attempt): until its revoke
 * is made, a restarted spoold finds that attempt still with its lost
 * worker, and takes the loss in as this one would, once (recover.c:
 * losses_settle), rather than count it a second time.
 */
int
finish_loss_record(uint64_t id, struct task *t)
{
	int rc;

	t->lost++;
	rc = requeued_record(id, t, t->attempt);
	t->lost--;	/* counted by finish_requeue, once revoked */
	return rc;
}

/*
 * End task id failed with reason worker-lost: taken back from lost
 * workers more than max-requeues times, the last time from w (that
 * result names it, its host and its batch job), or found so by a
 * restarted spoold (w NULL: recover.c).  A result that cannot be
 * written now is written at a later heartbeat (finish_retry), and is
 * owed in requeued/ID too: its lost count, past the bound, was written
 * before the last loss was taken in (finish_loss_record), so a spoold
 * stopped before it could write the result has the next one give it.
 */
void
finish_gave_up(uint64_t id, struct task *t, const struct worker *w,
    const char *why)
{
	struct result r;
	char msg[256];

	snprintf(msg, sizeof msg, "%s; requeued %u times already, giving up "
	    "(daemon: max-requeues)", why, t->lost - 1);
	result_init(&r);
	r.id = id;
	r.attempt = t->attempt;
	r.state = RS_FAILED;
	r.reason = RR_WORKER_LOST;
	r.message = msg;
	if (w) {
		r.worker = (char *)w->wid;
		r.host = (char *)w->info.host;
		r.job = w->job[0] ? (char *)w->job : NULL;
	}
	r.end = now_unix();
	/* neither queued nor placed: what finish_retry looks for */
	if (t->state != T_WAITING)
		task_set_state(t, T_WAITING);
	if (finish_final(id, t, &r, NULL) < 0)
		finish_final_later(id, &r);
}

/*
 * Requeue a task taken back from worker w, or end it failed with
 * reason worker-lost when it has been requeued after losses too often.
 * A loss (RQ_LOST) is in requeued/ID already (finish_loss_record).  An
 * assignment its lost worker never took (RQ_UNCLAIMED) is no loss: the
 * bound is there to stop a task that kills its worker, and this one
 * never ran there.  It still gets the next attempt number (the fence).
 */
void
finish_requeue(uint64_t id, struct task *t, const struct worker *w,
    enum requeue_how how, const char *why)
{
	static const char *const how_name[] = {
		[RQ_RETURNED] = "returned", [RQ_LOST] = "lost",
		[RQ_UNCLAIMED] = "unclaimed"
	};

	if (t->flags & TF_CANCEL) {
		finish_cancel(id, t, "cancelled by request", RR_CANCELLED);
		return;
	}
	if (how == RQ_LOST && ++t->lost > sd.sp.cfg.max_requeues) {
		finish_gave_up(id, t, w, why);
		return;
	}
	msg_info("task %" PRIu64 " attempt %u requeued: %s%s", id, t->attempt,
	    why, how == RQ_UNCLAIMED ? " (not started there: not counted "
	    "against max-requeues)" : "");
	journal_task(id, "requeued", "att=%u reason=%s why=%s", t->attempt,
	    how_name[how], journal_q(why));
	if (how != RQ_LOST)
		requeued_write(id, t);
	sd.c.requeued++;
	shape_push(id, t);
}

/*
 * Keep an attempt that will not be final (retried, handed back, or
 * revoked from a worker that exited): work/ANAME -> attempts/ANAME,
 * then the assignment (FROM_SUB/ANAME) into it as its spec.  No work
 * directory (never started, or moved before a crash came between the
 * two renames): the spec joins the attempt if that is in attempts/.
 * A report (done/, returned/) not moved is removed: it was taken in.
 * A revoked/ entry is no report: it stays, the fence, and goes with
 * its worker's directory (workers.c, workers_gc).
 */
void
finish_archive(struct worker *w, int from_sub, const char *aname)
{
	char spec[64];

	if (fsop_rename(w->subfd[WS_WORK], aname, sd.sp.fd[SD_ATTEMPTS],
	    aname) < 0 && errno != ENOENT) {
		if (errno != EEXIST && errno != ENOTEMPTY)
			msg_warn("rename: workers/%s/work/%s: %m", w->wid, aname);
		goto drop;
	}
	snprintf(spec, sizeof spec, "%s/spec", aname);
	if (spec_join(w->subfd[from_sub], aname, sd.sp.fd[SD_ATTEMPTS], spec,
	    "attempts/") == 0)
		return;
	if (errno != ENOENT) {
		msg_warn("rename: workers/%s/%s/%s: %m", w->wid,
		    wdir_sub_name[from_sub], aname);
		return;
	}
drop:
	if (from_sub != WS_REVOKED)
		(void)fsop_unlink(w->subfd[from_sub], aname);
}

/* An attempt directory thrown away: moved to gc/ and removed there. */
static void
to_gc(int dfd, const char *name)
{
	char gcname[WDIR_ANAME_MAX + FSOP_TMPNAME_MAX];

	snprintf(gcname, sizeof gcname, "%s.", name);
	fsop_tmpname(gcname + strlen(gcname), sizeof gcname - strlen(gcname),
	    NULL);
	if (fsop_rename(dfd, name, sd.sp.fd[SD_GC], gcname) == 0)
		(void)fsop_rmtree(sd.sp.fd[SD_GC], gcname);
}

/* work/NAME is an attempt with its spec in it: acceptance's first
 * rename was made (accept_done), the second not yet. */
static int
half_accepted(int workfd, const char *name, uint64_t *id, uint32_t *att)
{
	char spec[WDIR_ANAME_MAX + 8];
	struct stat st;

	snprintf(spec, sizeof spec, "%s/spec", name);
	return wdir_aname_parse(name, id, att) == 0 &&
	    fsop_stat(workfd, spec, &st) == 0;
}

/*
 * Deal with a report that is not for the current attempt.  One case is
 * a spool's past: a spoold from before the spec joined first (accept_done)
 * that crashed between acceptance's two renames left done/ID.ATT
 * behind a final task whose spec is missing (ENOENT: a stale handle
 * proves nothing, and the rename would replace the spec); move it in.
 * Anything else
 * (a duplicate, a stale attempt: the fence of doc/design.md, section 7,
 * step 6) is thrown away; why, when not NULL, is said at info level:
 * a worker reported work that was no longer its own.
 */
static void
discard(struct worker *w, int sub, const char *aname, uint64_t id,
    const char *why)
{
	char spec[SPOOL_PATH_MAX + 8];
	struct stat st;

	spool_task_path(id, spec, sizeof spec);
	strcat(spec, "/spec");
	if (sub == WS_DONE && finish_final_exists(id, NULL) &&
	    fsop_stat(w->subfd[WS_WORK], aname, &st) < 0 && errno == ENOENT &&
	    fsop_stat(sd.sp.fd[SD_TASKS], spec, &st) < 0 && errno == ENOENT &&
	    fsop_rename(w->subfd[sub], aname, sd.sp.fd[SD_TASKS], spec) == 0)
		return;
	to_gc(w->subfd[WS_WORK], aname);
	if (fsop_unlink(w->subfd[sub], aname) < 0 && errno != ENOENT)
		msg_warn("unlink: workers/%s/%s/%s: %m", w->wid,
		    wdir_sub_name[sub], aname);
	else if (why != NULL)	/* said once it is so */
		msg_info("stale report workers/%s/%s/%s discarded: %s",
		    w->wid, wdir_sub_name[sub], aname, why);
}

static int
read_result(struct worker *w, const char *aname, uint64_t id, uint32_t att,
    struct result *r)
{
	char path[WDIR_ANAME_MAX + 16];
	struct buf b = BUF_INIT;
	const char *why = "no result file";

	snprintf(path, sizeof path, "%s/result", aname);
	if (fsop_read_file(w->subfd[WS_WORK], path, RESULT_MAX, &b, NULL) < 0 ||
	    result_decode(b.p, b.len, r, &why) < 0 || r->id != id ||
	    r->attempt != att) {
		if (r->id != id || r->attempt != att)
			why = "result of another attempt";
		msg_warn("workers/%s/work/%s: unusable result: %s", w->wid,
		    aname, why);
		result_init(r);
		r->id = id;
		r->attempt = att;
		r->state = RS_FAILED;
		r->reason = RR_SPAWN;
		r->message = xasprintf("the worker left no readable result "
		    "(%s)", why);
		r->worker = xstrdup(w->wid);
		buf_free(&b);
		return -1;
	}
	buf_free(&b);
	return 0;
}

/*
 * The second rename of an acceptance: work/ID.ATT, its spec in it,
 * becomes tasks/SHARD/ID, and the task is final.  Where the rename
 * fails (an I/O error, a full disk), the attempt stays so, still
 * placed on w, and w->half has it tried again at each rescan
 * (accept_halves); a restart completes it too (finish_recover).
 */
static void
accept_final(struct worker *w, const char *aname, uint64_t id,
    uint32_t att, struct task *t, const struct result *r)
{
	char path[SPOOL_PATH_MAX], label[WDIR_ID_MAX + 16];
	struct adir here, final;

	spool_task_path(id, path, sizeof path);
	if (rename_final(w->subfd[WS_WORK], aname, id, path) < 0) {
		if (errno != EEXIST && errno != ENOTEMPTY) {
			msg_warn("rename: workers/%s/work/%s to tasks/%s: %m "
			    "(tried again at the next rescan)", w->wid, aname,
			    path);
			w->half = 1;
			return;
		}
		msg_warn("task %" PRIu64 " already has a result; attempt %u "
		    "discarded", id, att);
		snprintf(label, sizeof label, "workers/%s/work/", w->wid);
		here = (struct adir){ w->subfd[WS_WORK], aname, label, 1 };
		final = (struct adir){ sd.sp.fd[SD_TASKS], path, "tasks/", 0 };
		attempts_move(id, att, &here, &final);
		discard(w, WS_DONE, aname, id, NULL);	/* said above */
		worker_unassign(w, id, t);
		final_as_found(id, t);
		return;
	}
	worker_unassign(w, id, t);
	w->finished++;
	worker_note_run(w, r);
	task_became_final(id, t, r);
}

static void
accept_done(struct worker *w, const char *aname, uint64_t id, uint32_t att,
    struct task *t)
{
	char spec[WDIR_ANAME_MAX + 8], label[WDIR_ID_MAX + 16];
	struct adir archive = { sd.sp.fd[SD_ATTEMPTS], NULL, "attempts/", 0 };
	struct adir here;
	struct result r;

	(void)read_result(w, aname, id, att, &r);
	if (r.state == RS_FAILED && !(t->flags & TF_CANCEL) &&
	    t->tries < t->retries && r.reason != RR_WORKER_LOST) {
		t->tries++;
		msg_info("task %" PRIu64 " attempt %u failed (%s); retry %u "
		    "of %u", id, att, result_reason_name[r.reason], t->tries,
		    t->retries);
		journal_task(id, "requeued", "att=%u reason=retry tries=%u", att,
		    t->tries);
		finish_archive(w, WS_DONE, aname);
		worker_unassign(w, id, t);
		requeued_write(id, t);
		sd.c.retried++;
		shape_push(id, t);
		result_free(&r);
		return;
	}
	snprintf(label, sizeof label, "workers/%s/work/", w->wid);
	here = (struct adir){ w->subfd[WS_WORK], aname, label, 1 };
	attempts_move(id, att, &archive, &here);
	/* the spec joins first: tasks/SHARD/ID appears whole */
	snprintf(spec, sizeof spec, "%s/spec", aname);
	if (spec_join(w->subfd[WS_DONE], aname, w->subfd[WS_WORK], spec,
	    label) < 0) {
		/* leave done/ID.ATT for the next pass */
		msg_warn("rename: workers/%s/done/%s to work/%s: %m", w->wid,
		    aname, spec);
		attempts_move(id, att, &here, &archive);
	} else
		accept_final(w, aname, id, att, t, &r);
	result_free(&r);
}

/* An acceptance of w whose final rename failed (w->half): again. */
static int
half_again(void *arg, const char *name, unsigned char type)
{
	struct worker *w = arg;
	struct result r;
	struct task *t;
	uint64_t id;
	uint32_t att;

	(void)type;
	if (!half_accepted(w->subfd[WS_WORK], name, &id, &att))
		return 0;
	t = task_get(id);
	if (t == NULL || t->state != T_PLACED || t->attempt != att ||
	    worker_by_index(t->worker) != w)
		return 0;	/* no longer ours: recovery's (finish_recover) */
	(void)read_result(w, name, id, att, &r);
	accept_final(w, name, id, att, t, &r);
	result_free(&r);
	return 0;
}

static void
accept_halves(struct worker *w)
{
	w->half = 0;
	if (fsop_list(w->subfd[WS_WORK], ".", half_again, w) < 0) {
		msg_warn("list: workers/%s/work: %m", w->wid);
		w->half = 1;
	}
}

/*
 * Recovery (recover.c, before the specs are read): a work/ID.ATT that
 * holds its spec is an acceptance that spoold stopped between its two
 * renames (accept_done).  It is completed: renamed to tasks/SHARD/ID,
 * or, where that task is final already, thrown away.
 */
struct half_ctx {
	int	workfd;
	const char *wid;
	size_t	n;
};

static int
half_one(void *arg, const char *name, unsigned char type)
{
	struct half_ctx *c = arg;
	char path[SPOOL_PATH_MAX];
	struct result r;
	uint64_t id;
	uint32_t att;
	int rc, err = 0;

	(void)type;
	recover_beat();
	if (!half_accepted(c->workfd, name, &id, &att))
		return 0;	/* not accepted yet (or gone): not ours */
	spool_task_path(id, path, sizeof path);
	/*
	 * Until it is renamed, the task is live again (load_specs, next)
	 * and placed nowhere: its report is in here, not in done/, and it
	 * would run again under the same attempt.  So recovery waits.
	 */
	while ((rc = rename_final(c->workfd, name, id, path)) < 0 &&
	    (err = errno) != EEXIST && err != ENOTEMPTY &&
	    !recover_damage(err)) {
		msg_once("recovery-rename", "rename: workers/%s/work/%s to "
		    "tasks/%s: %m (recovery waits until it is made)", c->wid,
		    name, path);
		recover_wait();
	}
	msg_clear("recovery-rename");
	if (rc == 0) {
		msg_info("task %" PRIu64 " attempt %u: its acceptance, "
		    "interrupted, is completed", id, att);
		/* the journal's event and the count, which the crash
		 * came before */
		if (finish_final_exists(id, &r)) {
			count_finished(r.state);
			journal_result("final", &r);
			result_free(&r);
		}
		c->n++;
		return 0;
	}
	if (err != EEXIST && err != ENOTEMPTY) {
		errno = err;
		msg_warn("rename: workers/%s/work/%s to tasks/%s: %m", c->wid,
		    name, path);
		return 0;
	}
	msg_warn("task %" PRIu64 " already has a result; attempt %u "
	    "discarded", id, att);
	to_gc(c->workfd, name);
	return 0;
}

static int
half_worker(void *arg, const char *name, unsigned char type)
{
	struct half_ctx *c = arg;
	char work[WDIR_ID_MAX + 16];

	(void)type;
	if (name[0] == '.')
		return 0;
	snprintf(work, sizeof work, "%s/%s", name, wdir_sub_name[WS_WORK]);
	/* an acceptance in it not completed: its task would run again */
	while ((c->workfd = fsop_opendir(sd.sp.fd[SD_WORKERS], work)) < 0) {
		if (recover_damage(errno))
			return 0;	/* gone, or not a worker's */
		msg_once("recovery-open", "open: workers/%s: %m (recovery "
		    "waits until it can be opened)", work);
		recover_wait();
	}
	msg_clear("recovery-open");
	c->wid = name;
	snprintf(work, sizeof work, "workers/%s/%s", name,
	    wdir_sub_name[WS_WORK]);
	recover_list(c->workfd, ".", half_one, c, work);
	(void)close(c->workfd);
	return 0;
}

void
finish_recover(void)
{
	struct half_ctx c = { -1, NULL, 0 };

	recover_list(sd.sp.fd[SD_WORKERS], ".", half_worker, &c, "workers");
	if (c.n)
		msg_info("%zu interrupted acceptance%s completed", c.n,
		    c.n == 1 ? "" : "s");
}

/*
 * Hand-backs, in two steps.  The attempt number is kept in requeued/ID
 * before the report goes: a task handed back before it started (from
 * inbox/) has no work directory to keep in attempts/, and its report,
 * removed then (finish_archive), was its attempt's last trace; a
 * spoold stopped before the record placed it again under the same
 * number.  So every hand-back of a listing of returned/ is recorded
 * first (returned_record), then requeued/ is flushed once, so that no
 * report's removal can reach the disk without its record (a power loss
 * keeps a later change without an earlier one on a filesystem that
 * does not keep their order), then each is taken in (returned_take).
 * A record that cannot be written or flushed holds the hand-back (its
 * report in returned/, the task placed on w, its worker's directory
 * kept), tried again at each rescan (w->held).  A cancelled one is
 * recorded too, until its result is written (finish_cancel;
 * requeued_clear).
 */
struct returned {
	uint64_t id;
	char	aname[WDIR_ANAME_MAX];
};

struct news_ctx {
	struct worker *w;
	int	sub;
	struct returned *ret;	/* hand-backs recorded, to take in */
	size_t	nret, aret;
	int	held;		/* hand-backs held */
};

static void
returned_record(struct news_ctx *c, const char *aname, uint64_t id,
    struct task *t)
{
	struct returned *r;

	if (requeued_write(id, t) < 0) {
		c->held++;
		return;
	}
	if (c->nret == c->aret) {
		c->aret = c->aret ? 2 * c->aret : 8;
		c->ret = xreallocarray(c->ret, c->aret, sizeof *c->ret);
	}
	r = &c->ret[c->nret++];
	r->id = id;
	snprintf(r->aname, sizeof r->aname, "%s", aname);
}

/* 1 if it was handed back (requeued), 0 if cancelled. */
static int
returned_take(struct worker *w, const char *aname, uint64_t id,
    struct task *t)
{
	finish_archive(w, WS_RETURNED, aname);
	worker_unassign(w, id, t);
	if (t->flags & TF_CANCEL) {
		finish_cancel(id, t, "cancelled by request", RR_CANCELLED);
		return 0;
	}
	msg_info("task %" PRIu64 " attempt %u handed back by %s", id,
	    t->attempt, w->wid);
	journal_task(id, "requeued", "att=%u reason=returned worker=%s",
	    t->attempt, w->wid);
	sd.c.requeued++;
	shape_push(id, t);
	return 1;
}

/* The hand-backs c recorded: flushed, then taken in; how many of them
 * were handed back (not cancelled). */
static int
returned_take_all(struct news_ctx *c)
{
	size_t i;
	int n = 0;

	if (c->nret == 0)
		return 0;
	if (fsop_fsync_dir(sd.sp.fd[SD_REQUEUED], sd.sp.rootfd,
	    "requeued") < 0) {
		msg_once("requeued-sync", "fsync: requeued: %m (hand-backs "
		    "wait until their records are flushed)");
		c->held += (int)c->nret;
		c->nret = 0;
		return 0;
	}
	msg_clear("requeued-sync");
	for (i = 0; i < c->nret; i++)
		n += returned_take(c->w, c->ret[i].aname, c->ret[i].id,
		    task_get(c->ret[i].id));
	c->nret = 0;
	return n;
}

static int
news_one(void *arg, const char *name, unsigned char type)
{
	struct news_ctx *c = arg;
	struct task *t;
	char why[64];
	uint64_t id;
	uint32_t att;

	(void)type;
	if (name[0] == '.')
		return 0;	/* an NFS or FUSE leftover (.nfsXXXX): not ours */
	if (wdir_aname_parse(name, &id, &att) < 0) {
		msg_warn("workers/%s/%s/%s: not an assignment name; ignored",
		    c->w->wid, wdir_sub_name[c->sub], name);
		return 0;
	}
	t = task_get(id);
	if (t == NULL || t->state != T_PLACED || t->attempt != att ||
	    worker_by_index(t->worker) != c->w) {
		if (t == NULL || t->state == T_NONE)
			snprintf(why, sizeof why, "task %" PRIu64 " is not "
			    "live (final or unknown)", id);
		else if (t->state != T_PLACED)
			snprintf(why, sizeof why, "task %" PRIu64 " is %s",
			    id, t->state == T_FINAL ? "final" :
			    t->state == T_QUEUED ? "queued" : "waiting");
		else if (t->attempt != att)
			snprintf(why, sizeof why, "task %" PRIu64 " is at "
			    "attempt %u", id, t->attempt);
		else
			snprintf(why, sizeof why, "task %" PRIu64 " is placed "
			    "on another worker", id);
		discard(c->w, c->sub, name, id, why);
		return 0;
	}
	if (c->sub == WS_DONE)
		accept_done(c->w, name, id, att, t);
	else
		returned_record(c, name, id, t);
	return 0;
}

/*
 * Do the hand-backs of w just seen (returned taken in, held kept) mean
 * it is leaving?  Why it handed them back is in its status, written
 * before: read it now, before they are placed again.  GPUs stuck
 * (ckworker(1)): no, it takes tasks that fit the rest.  Tasks that
 * waited in its inbox until they could no longer end before its drain
 * (its status's "late" count, past those taken in before): no, it
 * takes tasks short enough.  Otherwise yes (its status may say so only
 * at its next beat, or it is a worker from before the status said it
 * first): place nothing more there.
 */
static int
hand_backs_drain(struct worker *w, uint32_t returned, uint32_t held)
{
	uint32_t late;

	if (worker_read_status(w) < 0)
		return 1;
	if (w->gpus_held)
		return 0;
	late = w->late > w->late_taken ? w->late - w->late_taken : 0;
	w->late_taken += returned < late ? returned : late;
	return returned + held > late;
}

void
finish_worker_news(struct worker *w)
{
	struct news_ctx c;
	int force = w->dirty, returned = 0;

	w->dirty = 0;
	if (w->held && sd.rescan_due) {
		force |= NEWS_RETURNED;	/* a hand-back held (returned_record) */
		w->held = 0;
	}
	if (w->half && (sd.rescan_due || (force & NEWS_DONE)))
		accept_halves(w);
	memset(&c, 0, sizeof c);
	c.w = w;
	if ((force & NEWS_DONE) || (sd.rescan_due &&
	    dirstamp_changed(w->dirfd, "done", &w->st_done))) {
		c.sub = WS_DONE;
		dirstamp_listed(&w->st_done, fsop_list(w->subfd[WS_DONE], ".",
		    news_one, &c), "workers/%s/done", w->wid);
	}
	if ((force & NEWS_RETURNED) || (sd.rescan_due &&
	    dirstamp_changed(w->dirfd, "returned", &w->st_ret))) {
		c.sub = WS_RETURNED;
		dirstamp_listed(&w->st_ret, fsop_list(w->subfd[WS_RETURNED],
		    ".", news_one, &c), "workers/%s/returned", w->wid);
		returned = returned_take_all(&c);
		free(c.ret);
	}
	if (c.held)
		w->held = 1;
	if ((returned || c.held) && !w->gone && hand_backs_drain(w,
	    (uint32_t)returned, (uint32_t)c.held)) {
		w->draining = 1;
		sd.summary_dirty = 1;
	}
}
