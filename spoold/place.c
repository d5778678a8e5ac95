/*
 * place.c - put ready tasks into workers' inboxes.
 *
 * spoold alone decides placement; workers never look at the queue.  A
 * worker is given tasks a little ahead of need: up to twice its cores,
 * memory, GPUs and slots may be committed (placed or running), so that
 * when a task ends the next is already in its inbox.  A task goes only
 * to a worker whose total resources can hold it and, if the worker has
 * an end time, that it can finish before (its walltime).
 *
 * Short tasks: a worker commits its outcomes in groups (up to
 * WORKER_COMMIT_WINDOW_MS, wdir.h), so while its outcomes wait it must
 * have more than one task per slot at hand or it runs dry.  When the
 * mean wall time of the tasks a worker ran is below that window,
 * it may hold as many more per slot (and per core and memory) as end
 * in two such windows, up to PREFETCH_MAX times its capacity.  A
 * worker that spoold does not watch (worker_unwatched: on another host,
 * or no inotify) holds PREFETCH_MAX times its capacity of short tasks:
 * its next assignment comes after a rescan of spoold's that sees the
 * result, spoold's round trips to the file server for it and for every
 * other worker's tasks, and a rescan of the worker's, not within the
 * window (doc/performance.md, "Shared storage").  Long
 * tasks keep PREFETCH: a task waiting behind a long one on a busy
 * worker is what the prefetch costs.  So while a worker job spoold
 * submitted is still coming up (queued, or its worker not registered
 * yet) and its kind can run the task, nothing is placed ahead on a busy
 * worker whose tasks are not known to be short: the task waits in the
 * queue for the new worker instead of behind a long task (and adaptive
 * scaling, which counts what workers hold, does not ask for a worker
 * that would then find nothing to do).
 *
 * Workers are served in rounds, one task each per round, so a burst of
 * tasks spreads over all workers instead of filling the first; first
 * only into free capacity, then ahead: a worker that has just
 * registered gets a task before a busy one is given one to hold, and an
 * idle worker takes over a task waiting ahead on a busy one (rebalance).
 *
 * Placing is writing workers/WID/inbox/ID.ATTEMPT (the task's spec plus
 * attempt) through tmp/ and a rename.  It is not fsync'ed: after a
 * crash of this host an assignment that did not reach the disk simply
 * is not there, and the task is placed again.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fsop.h"
#include "journal.h"
#include "msg.h"
#include "spoold.h"

#define PREFETCH		2	/* commit up to 2x a worker's capacity */
/*
 * For tasks much shorter than the window.  The tasks a worker holds
 * include those that ended and wait for its commit: at 16, a one-core
 * worker running `true` (about 25 in a 30 ms window here) ran out of
 * work before its commit and stood idle through the commit's flush
 * and spoold's next placement (doc/performance-history.md).
 */
#define PREFETCH_MAX		64
#define PLACE_PER_PASS		20000

/*
 * Learn how long tasks run on w (mean of the recent ones).  A result's
 * times are to the millisecond: a task shorter than that (`true` on an
 * idle machine) counts 0 ms, and is known to be short like any other.
 */
void
worker_note_run(struct worker *w, const struct result *r)
{
	double ms = (r->end - r->start) * 1000;

	if (r->start <= 0 || ms < 0)
		return;
	w->run_ms = w->runs++ > 0 ? 0.9 * w->run_ms + 0.1 * ms : ms;
}

uint32_t
worker_gpus_usable(const struct worker *w)
{
	return w->gpus_held < w->info.gpus ? w->info.gpus - w->gpus_held : 0;
}

/*
 * Whether more bytes of memory on top of used are beyond depth times
 * a worker's memory (counted in bytes, as the worker counts them; a
 * worker's memory is what it says, so the product may not fit).
 */
static int
mem_over(uint64_t used, uint64_t more, uint64_t memory, uint32_t depth)
{
	uint64_t limit = memory > UINT64_MAX / depth ? UINT64_MAX :
	    memory * depth;

	return used > limit || more > limit - used;
}

/*
 * Whether t on top of what w holds (placed or running) is more than
 * depth times w's cores, slots and memory, or gdepth times its GPUs.
 * Depth 1: t would wait on w behind what w already holds.
 */
static int
over(const struct worker *w, const struct task *t, uint32_t depth,
    uint32_t gdepth)
{
	return w->cores_used + t->cores > depth * w->info.cores ||
	    w->ntasks + 1 > depth * w->info.slots ||
	    w->gpus_used + t->gpus > gdepth * worker_gpus_usable(w) ||
	    (t->memory && w->info.memory &&
	    mem_over(w->mem_used, t->memory, w->info.memory, depth));
}

/*
 * Tasks wait on w: what it holds (placed or running) is more than its
 * slots, cores, GPUs it can use, or memory.
 */
static int
worker_overfull(const struct worker *w)
{
	return w->ntasks > w->info.slots || w->cores_used > w->info.cores ||
	    w->gpus_used > worker_gpus_usable(w) ||
	    (w->info.memory && w->mem_used > w->info.memory);
}

/* w's tasks are known to be shorter than its group commit window. */
static int
short_tasks(const struct worker *w)
{
	return w->runs > 0 && w->run_ms < WORKER_COMMIT_WINDOW_MS;
}

/* How many times its capacity w may hold (placed or running). */
static uint32_t
prefetch(const struct worker *w)
{
	double more;

	if (!short_tasks(w))
		return PREFETCH;
	if (worker_unwatched(w))
		return PREFETCH_MAX;
	more = 2.0 * WORKER_COMMIT_WINDOW_MS /
	    (w->run_ms < 0.1 ? 0.1 : w->run_ms);
	return more + PREFETCH >= PREFETCH_MAX ? PREFETCH_MAX :
	    PREFETCH + (uint32_t)more;
}

/*
 * w could run t once it had nothing else: its size, its GPUs not held,
 * its time left (a worker whose clock is not known yet is given the
 * benefit of the doubt here; worker_fits waits for it).
 */
int
worker_could_run(const struct worker *w, const struct task *t)
{
	double left;

	if (w->gone || w->draining || w->exited)
		return 0;
	if (t->cores > w->info.cores || t->gpus > worker_gpus_usable(w) ||
	    (t->memory && w->info.memory && t->memory > w->info.memory))
		return 0;
	if (t->walltime && w->info.ends > 0 && w->clock_known) {
		/*
		 * Its end is a time in its host's clock, which may be ahead
		 * of ours or behind: turned into ours by the offset its
		 * beats show.
		 */
		left = w->info.ends - w->clock_off - now_unix() -
		    WORKER_END_MARGIN_S;
		if ((double)t->walltime > left)
			return 0;
	}
	return 1;
}

int
worker_fits(const struct worker *w, const struct task *t, int ahead)
{
	if (!worker_could_run(w, t) || over(w, t, prefetch(w), PREFETCH))
		return 0;
	/* its end waits for the offset of its first beat read */
	if (t->walltime && w->info.ends > 0 && !w->clock_known)
		return 0;
	if (over(w, t, 1, 1) && (!ahead ||
	    (!short_tasks(w) && scale_worker_coming(t))))
		return 0;	/* not yet, or kept for the worker on its way */
	return 1;
}

/* 1 placed, 0 put back (try later), -1 the task could not be read. */
static int
place_one(struct worker *w, uint64_t id, struct task *t)
{
	struct task_spec spec;
	struct buf b = BUF_INIT;
	char name[WDIR_ANAME_MAX];
	struct result r;
	uint32_t att = t->attempt + 1;
	int rc;

	/*
	 * Its requeued/ record could not be written when it was requeued
	 * (finish.c): written now, before its next attempt exists, or the
	 * task waits (as for an assignment that cannot be written).
	 */
	if ((t->flags & TF_REQUEUE_OWED) && requeued_write(id, t) < 0) {
		shape_push(id, t);
		return 0;
	}
	if ((rc = bundle_read_spec(t, id, &spec)) == -2) {
		shape_push(id, t);
		return 0;
	}
	if (rc < 0) {
		result_init(&r);
		r.id = id;
		r.state = RS_FAILED;
		r.reason = RR_SPAWN;
		r.message = (char *)"its spec in specs/ could not be read";
		r.end = now_unix();
		if (finish_final(id, t, &r, NULL) < 0) {
			/* its result not written: again at the next rescan,
			 * or it would be neither queued nor final */
			shape_push(id, t);
			return 0;
		}
		return -1;
	}
	assign_encode(&b, &spec, att, w->wid);
	wdir_aname(id, att, name, sizeof name);
	if (fsop_publish(sd.sp.fd[SD_TMP], w->subfd[WS_INBOX], name, b.p, b.len,
	    0600, 0) < 0) {
		if (msg_once("place", "write: workers/%s/inbox/%s: %m", w->wid,
		    name) == 0)
			msg_debug("place %s failed again", name);
		task_free(&spec);
		buf_free(&b);
		shape_push(id, t);
		return 0;
	}
	msg_clear("place");
	task_free(&spec);
	buf_free(&b);
	t->attempt = att;
	worker_assign(w, id, t);
	journal_task(id, "placed", "att=%u worker=%s", att, w->wid);
	return 1;
}

/*
 * An idle worker takes over a task waiting in a busy worker's inbox,
 * placed ahead behind a long task before the idle one was there (it
 * registered later, or its last task ended).  The fence of a lost
 * worker's tasks (worker_revoke_unclaimed): if the busy worker claimed
 * X meanwhile, X runs there; else it is requeued (not counted as a
 * loss) and placed again with the next attempt number.  Not from a
 * worker whose tasks are short: there the tasks ahead are its
 * prefetch.  1 if a task was moved.
 */
static int
take_over(struct worker *idle, struct worker *w)
{
	struct task *t;
	char why[WDIR_ID_MAX + 32];
	uint64_t id;
	uint32_t n;
	int rc;

	for (n = w->ntasks; n-- > 0;) {
		id = w->tasks[n];
		t = task_get(id);
		if (t == NULL || t->state != T_PLACED ||
		    (t->flags & (TF_CANCEL | TF_CLAIMED)) ||
		    !worker_fits(idle, t, 0))
			continue;
		if ((rc = worker_revoke_unclaimed(w, id, t->attempt)) <= 0) {
			/* (a failure: said here, as it is not tried again) */
			if (rc < 0)
				msg_warn("revoke: workers/%s/inbox/%" PRIu64
				    ".%u: %m", w->wid, id, t->attempt);
			t->flags |= TF_CLAIMED;	/* (or not to be tried again) */
			continue;
		}
		snprintf(why, sizeof why, "moved to idle worker %s", idle->wid);
		worker_unassign(w, id, t);
		finish_requeue(id, t, w, RQ_RETURNED, why);
		return 1;
	}
	return 0;
}

static int
rebalance(void)
{
	struct worker *idle, *w;
	size_t i, k;
	int moved = 0;

	for (i = 0; i < sd.nworkers; i++) {
		idle = sd.workers[i];
		if (idle == NULL || idle->ntasks || idle->gone ||
		    idle->draining || idle->exited)
			continue;
		for (k = 0; k < sd.nworkers; k++) {
			w = sd.workers[k];
			if (w == NULL || w == idle || !worker_overfull(w) ||
			    short_tasks(w))
				continue;
			if (take_over(idle, w)) {
				moved = 1;
				break;	/* one for each idle worker */
			}
		}
	}
	return moved;
}

/*
 * Rounds over the workers, first into free capacity, then ahead; 1 if
 * placing must stop for this pass.
 */
static int
place_rounds(size_t *placed)
{
	struct worker *w;
	struct task *t;
	uint64_t id;
	size_t i;
	int progress, ahead;

	for (ahead = 0; ahead <= 1; ahead++) {
		do {
			progress = 0;
			for (i = 0; i < sd.nworkers; i++) {
				if ((w = sd.workers[i]) == NULL ||
				    sd.c.queued == 0)
					continue;
				if (!shape_pop_best(w, ahead, &id))
					continue;
				if ((t = task_get(id)) == NULL ||
				    t->state != T_QUEUED)
					continue;
				switch (place_one(w, id, t)) {
				case 0:
					return 1;	/* cannot write: next rescan */
				case 1:
					progress = 1;
					break;
				default:
					break;
				}
				if (++*placed >= PLACE_PER_PASS) {
					sd.place_dirty = 1;	/* more next pass */
					return 1;
				}
			}
		} while (progress && sd.c.queued > 0);
	}
	return 0;
}

void
place_all(void)
{
	size_t placed = 0;

	if (!sd.place_dirty || sd.shutting_down)
		return;
	sd.place_dirty = 0;
	if (place_rounds(&placed) == 0 && rebalance())
		(void)place_rounds(&placed);
}
