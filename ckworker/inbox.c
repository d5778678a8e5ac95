/*
 * inbox.c - what spoold gave this worker, and starting it.
 *
 * Assignments in inbox/ are read once into memory (pending jobs), sized
 * (resources.c: cores, memory share, GPUs) and started in order of
 * priority, then ID, as soon as the worker's free cores, memory, GPUs
 * and slots hold the next one.  The order is strict: a task that does
 * not fit yet is not overtaken by smaller ones behind it, so it cannot
 * starve (spoold gives each worker only about one task ahead per slot,
 * so the cost is bounded).
 *
 * The worker's end is checked again when a task is about to start, not
 * only when spoold placed it: a task whose walltime would outlast the
 * drain (WORKER_END_MARGIN_S before the worker's end) is handed back
 * instead of started, and so is one that needs more than this worker
 * has at all, or more GPUs than it has but those kept by processes of
 * ended tasks that SIGKILL did not end (limits.c; all such pending
 * tasks at once when that happens).  A task without a walltime is
 * started whatever time is left: it is stopped and handed back if it
 * still runs at the drain.
 *
 * Claiming is the rename inbox/X -> running/X: if it fails with ENOENT,
 * spoold revoked X before it started, and it is forgotten.
 *
 * A malformed assignment is not run: it is committed at once as failed
 * (reason spawn) so that spoold does not place it again and again.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsop.h"
#include "msg.h"
#include "units.h"
#include "worker.h"

#define ASSIGN_MAX (TASK_CMD_BYTES_MAX * 2 + 65536)

struct job *
job_find(uint64_t id, uint32_t attempt)
{
	size_t i;

	for (i = 0; i < wk.njobs; i++)
		if (wk.jobs[i]->id == id && wk.jobs[i]->attempt == attempt)
			return wk.jobs[i];
	return NULL;
}

static struct job *
job_by_name(const char *name)
{
	size_t i;

	for (i = 0; i < wk.njobs; i++)
		if (strcmp(wk.jobs[i]->name, name) == 0)
			return wk.jobs[i];
	return NULL;
}

/*
 * Undo what was made for a pending job's start (inbox_prepare_next,
 * inbox_start_ready) that will not come: its work directory, output
 * files and cgroup.  Nothing of this attempt ran here; a job handed
 * back is undone before its rename, so spoold finds no attempt to keep.
 */
static void
unprepare(struct job *j)
{
	if (j->prepared) {
		run_unprepare(j);
		if (fsop_rmtree(wk.subfd[WS_WORK], j->name) < 0)
			msg_warn("remove: workers/%s/work/%s: %m", wk.wid,
			    j->name);
	}
	limits_forget(j);
}

void
job_remove(struct job *j)
{
	size_t i;

	for (i = 0; i < wk.njobs; i++)
		if (wk.jobs[i] == j) {
			memmove(&wk.jobs[i], &wk.jobs[i + 1],
			    (wk.njobs - i - 1) * sizeof *wk.jobs);
			wk.njobs--;
			break;
		}
	if (j->state == J_PENDING)
		unprepare(j);
	run_forget(j);
	if (j->hold_until_ms)
		result_free(&j->held);
	task_free(&j->spec);
	buf_free(&j->result);
	ptree_free(&j->tree);
	free(j->unit);
	free(j->cpus);
	free(j->gpu_ids);
	free(j->mem_why);
	free(j);
}

/*
 * Commit a failure without running anything (a bad assignment), the way
 * a task is claimed and its outcome committed: its work directory
 * first, then the claim (inbox/ -> running/), then its result through
 * the group commit (run_not_run), which tries again what the filesystem
 * refuses.  Once claimed, the attempt is a job of this worker until it
 * is committed: it is never left in running/ with nobody to commit it
 * (spoold would take it as claimed until the worker exits).  What is
 * refused before the claim leaves it in inbox/ for the next rescan.
 */
static void
fail_unrun(const char *name, uint64_t id, uint32_t att, const char *why)
{
	struct job *j;

	if (fsop_mkdir(wk.subfd[WS_WORK], name, 0700) < 0 && errno != EEXIST) {
		msg_once("inbox", "mkdir: workers/%s/work/%s: %m (trying "
		    "again)", wk.wid, name);
		dirstamp_reset(&wk.st_inbox);
		return;
	}
	if (fsop_rename(wk.subfd[WS_INBOX], name, wk.subfd[WS_RUNNING],
	    name) < 0) {
		if (errno == ENOENT) {	/* revoked meanwhile */
			if (fsop_rmtree(wk.subfd[WS_WORK], name) < 0)
				msg_warn("remove: workers/%s/work/%s: %m",
				    wk.wid, name);
			return;
		}
		msg_once("inbox", "claim: workers/%s/inbox/%s: %m (trying "
		    "again)", wk.wid, name);
		dirstamp_reset(&wk.st_inbox);
		return;
	}
	msg_clear("inbox");
	msg_warn("inbox/%s: %s; not run", name, why);
	j = xcalloc(1, sizeof *j);
	snprintf(j->name, sizeof j->name, "%s", name);
	j->id = id;
	j->attempt = att;
	j->state = J_RUNNING;	/* claimed; no process (pid 0) */
	j->why_killed = RR_EXIT;
	j->fail_fd = -1;
	wk.jobs = xreallocarray(wk.jobs, wk.njobs + 1, sizeof *wk.jobs);
	wk.jobs[wk.njobs++] = j;
	run_not_run(j, why);
}

static int
inbox_one(void *arg, const char *name, unsigned char type)
{
	struct buf b = BUF_INIT;
	struct job *j;
	const char *why = NULL;
	uint64_t id;
	uint32_t att, att2;

	(void)arg;
	(void)type;
	if (name[0] == '.' || job_by_name(name))
		return 0;
	if (wdir_aname_parse(name, &id, &att) < 0) {
		msg_warn("inbox/%s: not an assignment name; ignored", name);
		return 0;
	}
	if (fsop_read_file(wk.subfd[WS_INBOX], name, ASSIGN_MAX, &b, NULL) < 0) {
		if (errno == EFBIG || errno == EINVAL)
			fail_unrun(name, id, att, strerror(errno));
		else if (errno != ENOENT) {
			/* the filesystem's fault (EIO, ESTALE), not the
			 * task's: read it again at the next rescan */
			msg_once("inbox", "read: workers/%s/inbox/%s: %m "
			    "(trying again)", wk.wid, name);
			dirstamp_reset(&wk.st_inbox);
		}
		buf_free(&b);
		return 0;
	}
	msg_clear("inbox");
	j = xcalloc(1, sizeof *j);
	if (assign_decode(b.p, b.len, &j->spec, &att2, &why) < 0 ||
	    j->spec.id != id || att2 != att) {
		fail_unrun(name, id, att, why ? why : "name and content differ");
		task_free(&j->spec);	/* (decoded, when only the IDs differ) */
		free(j);
		buf_free(&b);
		return 0;
	}
	buf_free(&b);
	snprintf(j->name, sizeof j->name, "%s", name);
	j->id = id;
	j->attempt = att;
	j->state = J_PENDING;
	j->why_killed = RR_EXIT;
	j->fail_fd = -1;
	res_job_size(j);
	wk.jobs = xreallocarray(wk.jobs, wk.njobs + 1, sizeof *wk.jobs);
	wk.jobs[wk.njobs++] = j;
	msg_debug("task %" PRIu64 " attempt %u received", id, att);
	return 0;
}

void
inbox_scan(void)
{
	if (wk.draining)
		return;
	if (!wk.inbox_dirty && !(wk.rescan_due &&
	    dirstamp_changed(wk.dirfd, "inbox", &wk.st_inbox)))
		return;
	wk.inbox_dirty = 0;
	dirstamp_listed(&wk.st_inbox, fsop_list(wk.subfd[WS_INBOX], ".",
	    inbox_one, NULL), "workers/%s/inbox", wk.wid);
}

/* The pending job to start next: priority, then ID. */
static struct job *
next_pending(void)
{
	struct job *best = NULL, *j;
	size_t i;

	for (i = 0; i < wk.njobs; i++) {
		j = wk.jobs[i];
		if (j->state != J_PENDING)
			continue;
		if (best == NULL || j->spec.priority > best->spec.priority ||
		    (j->spec.priority == best->spec.priority && j->id < best->id))
			best = j;
	}
	return best;
}

/* Give j back unstarted (it cannot run here, or not in time). */
static void
refuse(struct job *j, const char *why)
{
	msg_info("task %" PRIu64 " attempt %u: %s; handing it back", j->id,
	    j->attempt, why);
	unprepare(j);
	if (fsop_rename(wk.subfd[WS_INBOX], j->name, wk.subfd[WS_RETURNED],
	    j->name) < 0 && errno != ENOENT)
		msg_warn("hand back: inbox/%s: %m", j->name);
	job_remove(j);
}

/* Why j cannot end before this worker drains, or NULL. */
static const char *
too_late(const struct job *j, char *why, size_t size)
{
	uint64_t drain, left;
	char a[32], b[32];

	if (wk.ends_ms == 0 || j->spec.walltime == 0)
		return NULL;
	drain = wk.ends_ms > WORKER_END_MARGIN_S * 1000 ?
	    wk.ends_ms - WORKER_END_MARGIN_S * 1000 : 0;
	left = drain > wk.now ? (drain - wk.now) / 1000 : 0;
	if (j->spec.walltime <= left)
		return NULL;
	snprintf(why, size, "its walltime (%s) does not end before this "
	    "worker drains (in %s)", units_format_duration(j->spec.walltime,
	    a, sizeof a), units_format_duration(left, b, sizeof b));
	return why;
}

/* Its work directory, output files (run_prepare); 0, or -1 with why. */
static int
prepare(struct job *j, char *why, size_t size)
{
	if (j->prepared)
		return 0;
	if (fsop_mkdir(wk.subfd[WS_WORK], j->name, 0700) < 0 &&
	    errno != EEXIST) {
		snprintf(why, size, "mkdir: workers/%s/work/%s: %s", wk.wid,
		    j->name, strerror(errno));
		return -1;
	}
	return run_prepare(j, why, size);
}

/* Hand back every pending job that cannot run here any more, not only
 * the next (GPUs found stuck, limits.c). */
static void
refuse_unfit(void)
{
	char why[256];
	size_t i;

	wk.refit = 0;
	for (i = 0; i < wk.njobs; i++)
		if (wk.jobs[i]->state == J_PENDING &&
		    res_never_fits(wk.jobs[i], why, sizeof why)) {
			refuse(wk.jobs[i], why);
			i--;
		}
}

void
inbox_start_ready(void)
{
	struct job *j;
	char why[256];

	if (wk.draining)
		return;
	if (wk.refit)
		refuse_unfit();
	while ((j = next_pending()) != NULL) {
		if (res_never_fits(j, why, sizeof why)) {
			refuse(j, why);
			continue;
		}
		if (too_late(j, why, sizeof why)) {
			/* its status first: this worker is not leaving
			 * (spoold: finish.c, hand_backs_drain) */
			wk.late++;
			status_write();
			refuse(j, why);
			continue;
		}
		if (!res_fits(j))
			break;
		/*
		 * Its work directory and output files first (made ahead by
		 * inbox_prepare_next, usually): if the spool's filesystem
		 * cannot make them (full, EIO, a stale handle), the task
		 * stays in inbox/ and is tried again, instead of failing for
		 * no fault of its own.
		 */
		if (prepare(j, why, sizeof why) < 0) {
			msg_once("workdir", "%s (no task starts until this "
			    "works)", why);
			break;
		}
		msg_clear("workdir");
		if (fsop_rename(wk.subfd[WS_INBOX], j->name, wk.subfd[WS_RUNNING],
		    j->name) < 0) {
			if (errno != ENOENT)
				msg_warn("claim: inbox/%s: %m", j->name);
			else
				msg_info("task %" PRIu64 " attempt %u was "
				    "revoked before it started", j->id,
				    j->attempt);
			job_remove(j);
			continue;
		}
		if (run_start(j) < 0)
			continue;	/* committed as failed */
	}
}

/*
 * While the slots are full: everything of the task that starts next
 * but its claim and its process (work directory, output files,
 * cgroup), so that what stands between one task's end and the next
 * one's start on a slot is the claim's rename and the spawn.  (Its
 * process is not forked ahead: a fork of the worker cost more CPU than
 * the spawn it saved, doc/performance-history.md.)  Only while tasks run
 * AHEAD_MIN_RUN_MS or longer (worker.h), and only with spoold on this
 * host: with spoold on another host (the spool a network filesystem
 * between them) it was measured slower, 192-222 s against 150-168 s
 * for 2,000 short tasks over sshfs (scenario 7 of make bench; ckworker(1)).
 * A failure here is silent: the start tries again and says why
 * (inbox_start_ready).
 */
void
inbox_prepare_next(void)
{
	struct job *j;
	char why[256];

	if (wk.draining || !wk.spoold_local ||
	    wk.run_mean_us < AHEAD_MIN_RUN_MS * 1000 ||
	    (j = next_pending()) == NULL || j->prepared ||
	    res_never_fits(j, why, sizeof why) || too_late(j, why, sizeof why))
		return;
	if (prepare(j, why, sizeof why) == 0)
		(void)limits_prepare(j, why, sizeof why);
}

static int
hand_back_file(void *arg, const char *name, unsigned char type)
{
	(void)arg;
	(void)type;
	if (name[0] != '.' && fsop_rename(wk.subfd[WS_INBOX], name,
	    wk.subfd[WS_RETURNED], name) < 0 && errno != ENOENT)
		msg_warn("hand back: inbox/%s: %m", name);
	return 0;
}

/* Give back everything not started (draining): read or not. */
void
inbox_hand_back_pending(void)
{
	struct job *j;
	size_t i;

	for (i = 0; i < wk.njobs; i++)
		if (wk.jobs[i]->state == J_PENDING)
			unprepare(wk.jobs[i]);
	if (fsop_list(wk.subfd[WS_INBOX], ".", hand_back_file, NULL) < 0)
		msg_warn("list: workers/%s/inbox: %m", wk.wid);
	for (i = 0; i < wk.njobs; i++) {
		j = wk.jobs[i];
		if (j->state != J_PENDING)
			continue;
		job_remove(j);
		i--;
	}
}

static int
cancel_one(void *arg, const char *name, unsigned char type)
{
	struct job *j = NULL;
	uint64_t id;
	uint32_t att;

	(void)arg;
	(void)type;
	if (name[0] == '.')
		return 0;	/* an NFS or FUSE leftover (.nfsXXXX): not ours */
	if (wdir_aname_parse(name, &id, &att) == 0 &&
	    (j = job_find(id, att)) == NULL) {
		/* not read yet (or already over): hand back if still queued */
		if (fsop_rename(wk.subfd[WS_INBOX], name, wk.subfd[WS_RETURNED],
		    name) < 0 && errno != ENOENT)
			msg_warn("hand back: inbox/%s: %m", name);
	} else if (j != NULL) {
		if (j->state == J_PENDING) {
			/* not started: hand it back; spoold knows why */
			unprepare(j);
			if (fsop_rename(wk.subfd[WS_INBOX], j->name,
			    wk.subfd[WS_RETURNED], j->name) < 0 &&
			    errno != ENOENT)
				msg_warn("hand back: inbox/%s: %m", j->name);
			job_remove(j);
		} else {
			msg_info("task %" PRIu64 " attempt %u: cancelled", id,
			    att);
			run_kill(j, RR_CANCELLED, 0);
		}
	}
	if (fsop_unlink(wk.subfd[WS_CANCEL], name) < 0 && errno != ENOENT)
		msg_warn("unlink: cancel/%s: %m", name);
	return 0;
}

void
cancel_scan(void)
{
	if (!wk.cancel_dirty && !(wk.rescan_due &&
	    dirstamp_changed(wk.dirfd, "cancel", &wk.st_cancel)))
		return;
	wk.cancel_dirty = 0;
	dirstamp_listed(&wk.st_cancel, fsop_list(wk.subfd[WS_CANCEL], ".",
	    cancel_one, NULL), "workers/%s/cancel", wk.wid);
}
