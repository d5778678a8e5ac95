/*
 * observe.c - spoold's side of the event journal; see observe.h, and
 * journal.h for the format.
 *
 * The events themselves are one-line calls where the state changes
 * (accept.c, place.c, finish.c, workers.c, deps.c, jobs.c); this file
 * holds what needs more than a line:
 *
 *  - observe_start/observe_stop: the journal is opened once spoold
 *    holds the lease (a spoold that loses the race writes nothing) and
 *    written out at a clean stop (and at exit, journal.c);
 *  - observe_tick, once per pass: journal_flush (at most one write per
 *    JOURNAL_FLUSH_MS), and every CHECK_MS (first at start) the size of
 *    the journal.  Above daemon: journal-size, spoold writes a
 *    checkpoint into a new segment: the state of every task it holds
 *    (waiting and queued tasks as ranges of IDs, placed tasks one by
 *    one with attempt and worker) and of every worker, so that the
 *    journal that remains describes the present completely; then it
 *    removes the oldest closed segments written before the checkpoint
 *    until the journal is 3/4 of the bound (journal_rotate).  The
 *    spool directories are the truth and are never touched.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "journal.h"
#include "msg.h"
#include "observe.h"
#include "rec.h"
#include "spoold.h"

#define CHECK_MS	60000

static uint64_t next_check;

void
observe_start(void)
{
	if (journal_open(&sd.sp, "spoold") < 0) {
		msg_warn("journal: %s/%s: %m (no event journal)", sd.sp.shown,
		    JOURNAL_DIR);
		return;
	}
	journal_event("spoold", NULL, "start", "pid=%ld", (long)getpid());
	next_check = 0;
}

void
observe_stop(void)
{
	journal_event("spoold", NULL, "stop", NULL);
	journal_close();
}

void
observe_accepted(const struct task_spec *t)
{
	const struct task *mt = task_get(t->id);
	char when[64];

	rec_format_double(when, sizeof when, t->submitted, 3);
	journal_task(t->id, "submitted", "time=%s name=%s uid=%u cores=%u "
	    "memory=%" PRIu64 " gpus=%u after=%zu", when,
	    journal_q(t->name ? t->name : "-"), t->uid, task_cores(t),
	    t->memory, t->gpus, t->nafter);
	journal_task(t->id, "accepted", "state=%s", mt && mt->state ==
	    T_WAITING ? "waiting" : "queued");
}

static const char *
state_word(const struct task *t)
{
	return t->state == T_WAITING ? "waiting" : t->state == T_QUEUED ?
	    "queued" : "placed";
}

/* Emit the pending range [first, last] of unplaced tasks in one state. */
static void
range_flush(uint64_t first, uint64_t last, const char *state)
{
	char ids[48];

	if (state == NULL)
		return;
	if (first == last)
		snprintf(ids, sizeof ids, "%" PRIu64, first);
	else
		snprintf(ids, sizeof ids, "%" PRIu64 "-%" PRIu64, first, last);
	journal_event("task", ids, "state", "state=%s", state);
}

static void
checkpoint(void)
{
	const char *rstate = NULL;
	uint64_t rfirst = 0, rlast = 0, id;
	struct worker *w;
	struct task *t;
	size_t p, i;

	journal_event("spoold", NULL, "checkpoint", "waiting=%" PRIu64
	    " queued=%" PRIu64 " placed=%" PRIu64 " workers=%zu", sd.c.waiting,
	    sd.c.queued, sd.c.placed, sd.nworkers);
	for (i = 0; i < sd.nworkers; i++)
		if ((w = sd.workers[i]) != NULL && !w->gone)
			journal_worker(w->wid, "state", "host=%s cores=%u memory="
			    "%" PRIu64 " gpus=%u slots=%u draining=%d",
			    journal_q(w->info.host), w->info.cores,
			    w->info.memory, w->info.gpus, w->info.slots,
			    w->draining);
	for (p = 0; p < sd.npages; p++) {
		if (sd.pages[p] == NULL)
			continue;
		for (i = 0; i < PAGE_SIZE; i++) {
			t = &sd.pages[p]->t[i];
			if (t->state == T_NONE || t->state == T_FINAL)
				continue;
			id = ((uint64_t)p << PAGE_BITS) | i;
			if (t->state == T_PLACED) {
				w = worker_by_index(t->worker);
				journal_task(id, "state", "state=placed att=%u "
				    "worker=%s", t->attempt, w ? w->wid : "-");
				continue;
			}
			if (rstate && rstate == state_word(t) &&
			    id == rlast + 1) {
				rlast = id;
				continue;
			}
			range_flush(rfirst, rlast, rstate);
			rstate = state_word(t);
			rfirst = rlast = id;
		}
	}
	range_flush(rfirst, rlast, rstate);
}

void
observe_tick(void)
{
	struct jseg_info *v;
	uint64_t total = 0, left;
	size_t removed;
	ssize_t n, i;
	double before;

	journal_flush(0);
	if (!journal_is_open() || sd.now < next_check)
		return;
	next_check = sd.now + CHECK_MS;
	if ((n = journal_segments(sd.sp.fd[SD_JOURNAL], now_unix(), &v)) < 0) {
		msg_once("journal-size", "journal: list: %s/%s: %m", sd.sp.shown,
		    JOURNAL_DIR);
		return;
	}
	for (i = 0; i < n; i++)
		total += v[i].bytes;
	free(v);
	if (total <= sd.sp.cfg.journal_bytes &&
	    (size_t)n <= JOURNAL_SEGMENTS_KEEP)
		return;
	before = now_unix();
	journal_new_segment();
	checkpoint();
	journal_flush(1);
	if (journal_rotate(sd.sp.fd[SD_JOURNAL], sd.sp.cfg.journal_bytes / 4 * 3,
	    before, &removed, &left) < 0) {
		msg_once("journal-size", "journal: remove: %s/%s: %m",
		    sd.sp.shown, JOURNAL_DIR);
		return;
	}
	msg_clear("journal-size");
	/* say which bound it was: many small segments are not many bytes */
	if (total > sd.sp.cfg.journal_bytes)
		msg_info("journal: %" PRIu64 " bytes over journal-size: "
		    "checkpoint written, %zu old segment%s removed, %" PRIu64
		    " bytes left", total, removed, removed == 1 ? "" : "s",
		    left);
	else
		msg_info("journal: %zd segments, over the %d kept: checkpoint "
		    "written, %zu old segment%s removed, %" PRIu64 " bytes "
		    "left", n, JOURNAL_SEGMENTS_KEEP, removed,
		    removed == 1 ? "" : "s", left);
	if (left > sd.sp.cfg.journal_bytes)
		msg_once("journal-full", "journal: still %" PRIu64 " bytes after "
		    "rotation: the rest is in segments still being written",
		    left);
	else
		msg_clear("journal-full");
}
