/*
 * workers.c - registered workers: discovery, heartbeats, loss, cleanup.
 *
 * A worker appears as workers/WID/ (built whole in tmp/ and renamed in).
 * Its beat counter (in workers/WID/status) must move at least every
 * lost-timeout, timed by spoold's own clock, or the worker is lost.  A
 * local worker whose process spoold saw exit is lost at once.
 *
 * Losing a worker: first accept whatever it finished (done/, returned/),
 * then revoke every assignment still out: rename inbox/X or running/X
 * to revoked/X.  The worker commits a result by renaming running/X to
 * done/X; the two renames are of the same file, so either the result
 * was committed (and is accepted) or the attempt was revoked (and the
 * worker's later commit fails with ENOENT): never both.  Revoked tasks
 * are requeued with the next attempt number; only those revoked from
 * running/ count against max-requeues (take_back).  A "lost" marker tells a
 * worker that comes back that it must kill its tasks and leave.
 *
 * A worker that exited (its "exited" marker) or was lost, and has no
 * task left, has its directory moved to gc/ and removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "beatfile.h"
#include "fsop.h"
#include "journal.h"
#include "msg.h"
#include "spoold.h"

#define WORKER_NEWS_MASK (IN_MOVED_TO | IN_CREATE)

struct worker *
worker_by_index(int32_t i)
{
	if (i < 0 || (size_t)i >= sd.nworkers)
		return NULL;
	return sd.workers[i];
}

int
worker_unwatched(const struct worker *w)
{
	return !watch_enabled(&sd.watch) ||
	    strcmp(w->info.host, host_name()) != 0 ||
	    strcmp(w->info.boot, host_boot_id()) != 0;
}

int
worker_index(const struct worker *w)
{
	size_t i;

	for (i = 0; i < sd.nworkers; i++)
		if (sd.workers[i] == w)
			return (int)i;
	msg_panic("worker %s not in the table", w->wid);
}

void
worker_assign(struct worker *w, uint64_t id, struct task *t)
{
	if (w->ntasks == w->tasks_cap) {
		w->tasks_cap = w->tasks_cap ? w->tasks_cap * 2 : 16;
		w->tasks = xreallocarray(w->tasks, w->tasks_cap,
		    sizeof *w->tasks);
	}
	w->tasks[w->ntasks++] = id;
	w->cores_used += t->cores;
	w->mem_used += t->memory;
	w->gpus_used += t->gpus;
	t->worker = worker_index(w);
	t->flags &= ~TF_CLAIMED;
	task_set_state(t, T_PLACED);
}

void
worker_unassign(struct worker *w, uint64_t id, struct task *t)
{
	uint32_t i;

	for (i = 0; i < w->ntasks; i++)
		if (w->tasks[i] == id) {
			w->tasks[i] = w->tasks[--w->ntasks];
			break;
		}
	w->cores_used -= t->cores;
	w->mem_used -= t->memory;
	w->gpus_used -= t->gpus;
	t->worker = -1;
	task_set_state(t, T_WAITING);	/* the caller moves it on at once */
	sd.place_dirty = 1;	/* capacity freed */
}

static struct worker *
worker_find(const char *wid)
{
	size_t i;

	for (i = 0; i < sd.nworkers; i++)
		if (sd.workers[i] && strcmp(sd.workers[i]->wid, wid) == 0)
			return sd.workers[i];
	return NULL;
}

static int
has_marker(struct worker *w, const char *name)
{
	struct stat st;

	return fsop_stat(w->dirfd, name, &st) == 0;
}

static void
worker_free(struct worker *w)
{
	int i;

	watch_remove(&sd.watch, &w->watch_done);
	watch_remove(&sd.watch, &w->watch_ret);
	scale_worker_gone(w);
	for (i = 0; i < WS_NSUB; i++)
		if (w->subfd[i] >= 0)
			close(w->subfd[i]);
	if (w->dirfd >= 0)
		close(w->dirfd);
	free(w->tasks);
	free(w->pgroups);
	free(w);
}

static struct worker *
worker_register(const char *wid)
{
	struct worker *w = xcalloc(1, sizeof *w);
	size_t slot;
	int k;

	snprintf(w->wid, sizeof w->wid, "%s", wid);
	w->dirfd = -1;
	for (k = 0; k < WS_NSUB; k++)
		w->subfd[k] = -1;
	if ((w->dirfd = fsop_opendir(sd.sp.fd[SD_WORKERS], wid)) < 0)
		goto fail;
	if (winfo_read(w->dirfd, "info", &w->info) < 0)
		goto fail;
	for (k = 0; k < WS_NSUB; k++)
		if ((w->subfd[k] = fsop_opendir(w->dirfd, wdir_sub_name[k])) < 0)
			goto fail;
	w->beat_seen_ms = sd.now;
	w->dirty = NEWS_ALL;
	scale_worker_registered(w);
	if (has_marker(w, WDIR_DRAIN))
		w->draining = 1;	/* a spoold before this one drained it */
	if (has_marker(w, "lost"))
		w->gone = 1;
	if (has_marker(w, "exited"))
		w->exited = 1;
	for (slot = 0; slot < sd.nworkers; slot++)
		if (sd.workers[slot] == NULL)
			break;
	if (slot == sd.nworkers) {
		sd.workers = xreallocarray(sd.workers, sd.nworkers + 1,
		    sizeof *sd.workers);
		sd.workers[sd.nworkers++] = NULL;
	}
	sd.workers[slot] = w;
	w->watch_done.w = w->watch_ret.w = w;
	w->watch_done.bit = NEWS_DONE;
	w->watch_ret.bit = NEWS_RETURNED;
	if (watch_add(&sd.watch, w->dirfd, "done", WORKER_NEWS_MASK,
	    &w->watch_done) < 0 ||
	    watch_add(&sd.watch, w->dirfd, "returned", WORKER_NEWS_MASK,
	    &w->watch_ret) < 0)
		msg_once("watch", "inotify: workers/%s: %m (rescans only)", wid);
	if (!w->gone && !w->exited)
		msg_info("worker %s registered: %s, %u cores, %" PRIu64
		    " MiB, %u GPUs, pid %ld on %s", wid, w->info.name,
		    w->info.cores, w->info.memory >> 20, w->info.gpus,
		    w->info.pid, w->info.host);
	if (!w->gone && !w->exited)
		journal_worker(wid, "registered", "host=%s cores=%u memory=%"
		    PRIu64 " gpus=%u slots=%u job=%s", journal_q(w->info.host),
		    w->info.cores, w->info.memory, w->info.gpus, w->info.slots,
		    journal_q(w->info.job[0] ? w->info.job : "-"));
	sd.place_dirty = 1;
	sd.summary_dirty = 1;
	return w;
fail:
	if (errno != ENOENT)
		msg_once(wid, "register worker %s: %m (will retry)", wid);
	worker_free(w);
	return NULL;
}

/* Called from the inotify dispatch with a cookie worker_register set. */
void
workers_note(struct news_watch *n, uint32_t mask)
{
	(void)mask;
	n->w->dirty |= n->bit;
}

static int
scan_one(void *arg, const char *name, unsigned char type)
{
	(void)arg;
	(void)type;
	if (name[0] == '.')
		return 0;
	if (worker_find(name) == NULL)
		(void)worker_register(name);
	return 0;
}

void
workers_scan(void)
{
	if (!sd.workers_dirty && !(sd.rescan_due &&
	    dirstamp_changed(sd.sp.rootfd, "workers", &sd.st_workers)))
		return;
	sd.workers_dirty = 0;
	dirstamp_listed(&sd.st_workers, fsop_list(sd.sp.fd[SD_WORKERS], ".",
	    scan_one, NULL), "workers");
}

/*
 * Take back an assignment w has not claimed yet: inbox/X -> revoked/X.
 * 1 revoked; 0 not in inbox/ (claimed, or gone); -1 error (errno; the
 * caller says it: once per condition where it is tried again).
 */
int
worker_revoke_unclaimed(struct worker *w, uint64_t id, uint32_t att)
{
	char name[WDIR_ANAME_MAX];

	wdir_aname(id, att, name, sizeof name);
	if (fsop_rename(w->subfd[WS_INBOX], name, w->subfd[WS_REVOKED],
	    name) == 0)
		return 1;
	return errno == ENOENT ? 0 : -1;
}

/*
 * Is workers/WID/SUB/name not there?  In take_back's terms: 1 not there,
 * 0 there (the attempt finished), -1 cannot tell (said once: it is
 * looked at again at every check while it lasts).
 */
static int
report_absent(struct worker *w, int sub, const char *name)
{
	struct stat st;

	if (fsop_stat(w->subfd[sub], name, &st) == 0)
		return 0;
	if (errno == ENOENT || errno == ENOTDIR)
		return 1;
	msg_once("revoke-stat", "stat: workers/%s/%s/%s: %m (tried again at "
	    "the next check)", w->wid, wdir_sub_name[sub], name);
	return -1;
}

/*
 * Take back one assignment; 2 revoked from inbox/ (the worker never
 * took it), 3 revoked from running/, 1 found nowhere (nothing left to
 * fence), 0 it had finished, -1 error.  Of
 * a lost worker (lost), only a task it had taken is a loss: that is
 * counted in requeued/ID before the revoke that makes it one (and
 * after the revoke from inbox/ that proves it was not taken: the
 * worker's claim renames the same file).  Revoked, the attempt is no
 * more than a fence to a restarted spoold, which would not count the
 * loss again, and run a task given up on once more if its worker-lost
 * result was not written either.  Not written, the assignment stays
 * in running/, and the loss is taken in at a later check, or by the
 * next spoold.  Written and not revoked (spoold stopped in between),
 * the record names the attempt lost, and the next spoold, which finds
 * it still in running/, takes the loss in at its own revoke, not on
 * top of the record's count (recover.c: losses_settle).  (A loss costs
 * this one write, as before: the requeue does not write it again.)
 */
static int
take_back(struct worker *w, uint64_t id, struct task *t, int lost)
{
	char name[WDIR_ANAME_MAX], spec[WDIR_ANAME_MAX + 8];
	int rc, sub = WS_INBOX;

	wdir_aname(id, t->attempt, name, sizeof name);
	/*
	 * inbox/ first, then running/ (a claim moves it from one to the
	 * other).  One that failed there is no proof that it is not
	 * there: it would stay, claimable, beside the requeued attempt.
	 * Tried again at the next check, and so said once (doc/
	 * guarantees.md, section 5), until a revoke works again.
	 */
	if ((rc = worker_revoke_unclaimed(w, id, t->attempt)) == 1)
		rc = 2;
	else if (rc == 0) {
		if (lost && finish_loss_record(id, t) < 0)
			return -1;	/* said once; tried again */
		sub = WS_RUNNING;
		if (fsop_rename(w->subfd[WS_RUNNING], name,
		    w->subfd[WS_REVOKED], name) == 0)
			rc = 3;
		else if (errno != ENOENT)
			rc = -1;
	}
	if (rc < 0) {
		msg_once("revoke", "revoke: workers/%s/%s/%s: %m (tried again "
		    "at the next check)", w->wid, wdir_sub_name[sub], name);
		return -1;
	}
	msg_clear("revoke");
	if (rc > 0)
		return rc;	/* revoked */
	/*
	 * Its report, if it finished.  A stat that fails other than with
	 * ENOENT (EIO, ESTALE past fsop's retries) is no proof that the
	 * report is not there: requeued, the task would run again and its
	 * committed result be thrown away as stale.  Tried again at the
	 * next check, as a failed revoke is.
	 *
	 * Or accepted half way: its report joined work/NAME as its spec,
	 * and the rename to tasks/ failed (finish.c, accept_final).  That
	 * is a committed result, which accept_halves goes on trying to make
	 * final; requeued, the task would run again, and the worker's
	 * directory, with the result in it, be removed (workers_gc).
	 */
	snprintf(spec, sizeof spec, "%s/spec", name);
	if ((rc = report_absent(w, WS_DONE, name)) == 1 &&
	    (rc = report_absent(w, WS_RETURNED, name)) == 1 && w->half)
		rc = report_absent(w, WS_WORK, spec);
	if (rc >= 0)
		msg_clear("revoke-stat");
	return rc;	/* 1: nowhere, nothing left to fence */
}

/*
 * An attempt revoked from running/ of a worker that exited (its marker:
 * it writes nothing more there) keeps its work directory, in attempts/,
 * as one it handed back does: the outcome it could not commit (ckworker
 * (1), Leaving), its stdout and stderr.  A lost worker's do not: it may
 * still be writing them.  A crash between the revoke and this is made
 * good by the next start (recover.c, assignment_one).
 */
static void
keep_revoked(struct worker *w, uint64_t id, uint32_t att)
{
	char name[WDIR_ANAME_MAX];

	wdir_aname(id, att, name, sizeof name);
	finish_archive(w, WS_REVOKED, name);
}

/* Take back everything w still holds; requeue it. */
static void
revoke_all(struct worker *w, int lost, const char *why)
{
	uint64_t *ids;
	uint32_t n, i;
	struct task *t;

	w->dirty = NEWS_ALL;
	finish_worker_news(w);	/* accept what it finished first */
	n = w->ntasks;
	ids = xreallocarray(NULL, n ? n : 1, sizeof *ids);
	if (n)
		memcpy(ids, w->tasks, n * sizeof *ids);
	for (i = 0; i < n; i++) {
		if ((t = task_get(ids[i])) == NULL || t->state != T_PLACED)
			continue;
		switch (take_back(w, ids[i], t, lost)) {
		case 2:
			worker_unassign(w, ids[i], t);
			finish_requeue(ids[i], t, w, lost ? RQ_UNCLAIMED :
			    RQ_RETURNED, why);
			break;
		case 3:
			if (!lost)	/* exited: it writes nothing more */
				keep_revoked(w, ids[i], t->attempt);
			/* FALLTHROUGH */
		case 1:
			worker_unassign(w, ids[i], t);
			finish_requeue(ids[i], t, w, lost ? RQ_LOST :
			    RQ_RETURNED, why);
			break;
		case 0:
			w->dirty = NEWS_ALL;	/* its report arrived meanwhile */
			break;
		default:
			break;		/* try again next check */
		}
	}
	free(ids);
	if (w->dirty)
		finish_worker_news(w);
}

/*
 * The worker process is dead and was on this host: its tasks' process
 * groups (from its last beat) may have nobody to stop them (its guard
 * was killed too).  Kill those whose leader is still the process the
 * worker started (start time) and still runs: a leader its guard
 * killed stays a zombie until its new parent reaps it (init may take
 * seconds), and killing its group then stops nothing.
 */
static void
kill_orphans(struct worker *w)
{
	size_t i, n = 0;
	long pid;

	if (host_pid_alive(w->info.host, w->info.boot, w->info.pid,
	    w->info.pstart) != 0)
		return;
	worker_read_status(w);	/* its very last beat */
	for (i = 0; i < w->npgroups; i++) {
		pid = (long)w->pgroups[i][0];
		if (pid > 1 && host_pid_runs(pid, w->pgroups[i][1]) &&
		    kill((pid_t)-pid, SIGKILL) == 0)
			n++;
	}
	if (n)
		msg_info("killed %zu orphaned task process group%s of worker "
		    "%s", n, n == 1 ? "" : "s", w->wid);
}

static void
lose(struct worker *w, const char *why, int expected)
{
	int fd;

	if (w->gone)
		return;
	if (expected && w->ntasks == 0)
		msg_info("worker %s (%s) gone: %s", w->wid, w->info.name, why);
	else {
		msg_warn("worker %s (%s, pid %ld on %s) lost: %s; requeueing "
		    "its %u task%s", w->wid, w->info.name, w->info.pid,
		    w->info.host, why, w->ntasks, w->ntasks == 1 ? "" : "s");
		sd.c.workers_lost++;
	}
	w->gone = 1;
	journal_worker(w->wid, "lost", "why=%s expected=%d tasks=%u",
	    journal_q(why), expected && w->ntasks == 0, w->ntasks);
	kill_orphans(w);
	fd = fsop_create(w->dirfd, "lost", 0600);
	if (fd >= 0)
		(void)fsop_close(fd);
	else if (errno != EEXIST)
		msg_warn("create: workers/%s/lost: %m", w->wid);
	revoke_all(w, 1, why);
	w->beat_seen_ms = sd.now;	/* time of loss, for gc */
	sd.summary_dirty = 1;
}

void
worker_lost(struct worker *w, const char *why)
{
	lose(w, why, 0);
}

/*
 * spoold drains w (scale.c: to scale down, or its GPUs held): no task
 * is placed on it any more, and its job is cancelled once it has none.
 * Its marker says so to a restarted spoold, which goes on draining the
 * same worker instead of choosing afresh, and to "spool workers".  A
 * marker that cannot be written is said; the drain goes on regardless.
 */
void
worker_drain(struct worker *w, const char *why)
{
	int fd;

	w->draining = 1;
	journal_worker(w->wid, "draining", "why=%s", why);
	sd.summary_dirty = 1;
	if ((fd = fsop_create(w->dirfd, WDIR_DRAIN, 0644)) >= 0)
		(void)fsop_close(fd);
	else if (errno != EEXIST)
		msg_warn("create: workers/%s/%s: %m (a restarted spoold "
		    "would not know that it drains the worker)", w->wid,
		    WDIR_DRAIN);
}

/* Its exited marker says it left idle (wdir.h). */
static int
left_idle(const struct worker *w)
{
	struct buf b = BUF_INIT;
	char *why = NULL;
	int idle;

	if (fsop_read_file(w->dirfd, "exited", WDIR_EXITED_MAX, &b, NULL) < 0)
		msg_warn("read: workers/%s/exited: %m (taken as a worker that "
		    "did not leave idle)", w->wid);
	else
		why = rec_lookup(b.p, b.len, "why");
	idle = why && strcmp(why, WDIR_EXITED_IDLE) == 0;
	free(why);
	buf_free(&b);
	return idle;
}

static void
worker_exited(struct worker *w)
{
	int idle;

	if (w->exited && w->gone)
		return;
	idle = left_idle(w);
	msg_info("worker %s (%s) exited%s", w->wid, w->info.name, idle ?
	    " idle" : "");
	journal_worker(w->wid, "exited", idle ? "why=idle" : NULL);
	if (idle)
		scale_worker_left_idle(w);
	w->exited = 1;
	w->gone = 1;
	revoke_all(w, 0, "its worker exited without handing it back");
	w->beat_seen_ms = sd.now;
	sd.summary_dirty = 1;
}

/*
 * w's process has ended (a local worker, reaped by spoold, local.c): it
 * left by itself if it wrote its "exited" marker (written after its
 * hand-backs, before its exit), else it is lost.  1 if it left.
 */
int
worker_process_ended(struct worker *w, const char *why)
{
	if (w->gone)
		return w->exited;
	if (has_marker(w, "exited")) {
		worker_exited(w);
		return 1;
	}
	worker_lost(w, why);
	return 0;
}

/*
 * w's batch job has left the queue (jobs.c): the batch system has ended
 * its processes, maybe with SIGKILL (Grid Engine's qdel) so that it
 * never wrote "exited".  Once its beat is stale for a few heartbeats it
 * is lost now, not after lost-timeout (said quietly when spoold itself
 * cancelled the job and the worker had no task).
 */
void
worker_job_ended(struct worker *w, int cancelled)
{
	if (w->gone)
		return;
	if (has_marker(w, "exited")) {
		worker_exited(w);
		return;
	}
	if (sd.now - w->beat_seen_ms > 3 * sd.sp.cfg.heartbeat_ms)
		lose(w, cancelled ? "its batch job was cancelled by spoold" :
		    "its batch job has ended", cancelled);
}

/*
 * A read of w's status failed with err.  Once it has failed twice in a
 * row (a heartbeat apart), say so, once until it is read again: each
 * such read is a beat not seen, and enough of them lose the worker.
 */
static void
status_unreadable(struct worker *w, int err)
{
	if (beatfile_failed(&w->status_fails, err, err == ENOENT &&
	    !spool_alive(&sd.sp)))
		msg_warn("worker %s: read: workers/%s/status: %s; its beats "
		    "are not seen", w->wid, w->wid, beatfile_strerror(err));
}

/*
 * Read w's status: note a moving beat, draining, its process groups,
 * and GPUs it says are kept by processes of ended tasks that SIGKILL
 * did not end (ckworker(1), GPUs): place.c does not count on those.
 */
int
worker_read_status(struct worker *w)
{
	static struct worker_status st;	/* large: not on the stack */
	int err;

	if (wstatus_read(w->dirfd, "status", &st) < 0) {
		err = errno;
		status_unreadable(w, err);
		errno = err;
		return -1;
	}
	if (beatfile_read_again(&w->status_fails))
		msg_info("worker %s: its status is read again", w->wid);
	if (st.beat != w->beat) {
		w->beat = st.beat;
		w->beat_seen_ms = sd.now;
		/*
		 * Hosts' clocks differ: the end it gave in its own clock
		 * is judged against ours through this offset (place.c).
		 */
		if (st.time > 0) {
			if (!w->clock_known)
				sd.place_dirty = 1;	/* held until now */
			w->clock_off = st.time - now_unix();
			w->clock_known = 1;
		}
	}
	if (!w->late_known) {	/* hand-backs from before: not told apart */
		w->late_taken = st.late;
		w->late_known = 1;
	}
	w->late = st.late;
	if (st.draining && !w->draining) {
		/* a worker never stops draining */
		w->draining = 1;
		journal_worker(w->wid, "draining", NULL);
		sd.summary_dirty = 1;
	}
	if (st.gpus_held != w->gpus_held) {
		if (st.gpus_held)
			msg_warn("worker %s: %u of its %u GPUs %s kept by "
			    "processes of ended tasks that SIGKILL did not end; "
			    "no task is placed on %s", w->wid, st.gpus_held,
			    w->info.gpus, st.gpus_held == 1 ? "is" : "are",
			    st.gpus_held == 1 ? "it" : "them");
		else
			msg_info("worker %s: its GPUs are free again", w->wid);
		journal_worker(w->wid, "gpus-held", "n=%u", st.gpus_held);
		if (st.gpus_held < w->gpus_held)
			sd.place_dirty = 1;
		w->gpus_held = st.gpus_held;
		sd.summary_dirty = 1;
	}
	w->pgroups = xreallocarray(w->pgroups, st.npgroups ? st.npgroups : 1,
	    sizeof *w->pgroups);
	memcpy(w->pgroups, st.pgroup, st.npgroups * sizeof *w->pgroups);
	w->npgroups = st.npgroups;
	return 0;
}

void
workers_beat_check(void)
{
	struct worker *w;
	char why[192], cause[128];
	size_t i;

	for (i = 0; i < sd.nworkers; i++) {
		if ((w = sd.workers[i]) == NULL)
			continue;
		if (w->gone) {
			if (w->ntasks)
				revoke_all(w, !w->exited, "worker gone");
			continue;
		}
		if (has_marker(w, "exited")) {
			worker_exited(w);
			continue;
		}
		if (worker_read_status(w) < 0 && errno == ENOENT &&
		    !spool_alive(&sd.sp))
			continue;
		if (sd.now - w->beat_seen_ms > sd.sp.cfg.lost_timeout_ms) {
			snprintf(why, sizeof why, "no heartbeat for %.1f s%s",
			    (double)(sd.now - w->beat_seen_ms) / 1000,
			    beatfile_cause(&w->status_fails, "status", cause,
			    sizeof cause));
			worker_lost(w, why);
		}
	}
}

void
workers_gc(void)
{
	char gcname[WDIR_ID_MAX + FSOP_TMPNAME_MAX];
	struct worker *w;
	size_t i;

	for (i = 0; i < sd.nworkers; i++) {
		if ((w = sd.workers[i]) == NULL || !w->gone || w->ntasks)
			continue;
		/* give a lost worker time to see its "lost" marker */
		if (!w->exited &&
		    sd.now - w->beat_seen_ms < sd.sp.cfg.lost_timeout_ms)
			continue;
		w->dirty = NEWS_ALL;
		finish_worker_news(w);
		snprintf(gcname, sizeof gcname, "%s.", w->wid);
		fsop_tmpname(gcname + strlen(gcname),
		    sizeof gcname - strlen(gcname), NULL);
		if (fsop_rename(sd.sp.fd[SD_WORKERS], w->wid, sd.sp.fd[SD_GC],
		    gcname) < 0) {
			if (errno != ENOENT) {
				msg_warn("rename: workers/%s to gc/: %m", w->wid);
				continue;
			}
		} else if (fsop_rmtree(sd.sp.fd[SD_GC], gcname) < 0)
			msg_warn("remove: gc/%s: %m (will retry)", gcname);
		msg_debug("worker %s removed", w->wid);
		sd.workers[i] = NULL;
		worker_free(w);
	}
}
