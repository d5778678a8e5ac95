/*
 * publish.c - what spoold tells the world: state/summary.
 *
 * A record, written once as spoold takes the lease ("recovering: yes",
 * before recovery), then rewritten (tmp + rename) when recovery is over and
 * at most every 250 ms after, only when something changed; "spool
 * status", "spool top", the FUSE summary file and "watch cat" read it:
 *
 *	time: 1700000000.250     spoold: host.pid
 *	waiting: 0  queued: 120  placed: 8
 *	unfit: 0                 queued tasks nothing could run (below)
 *	unfit_shapes: ["cores=64 gpus=0 memory=0 walltime=0 tasks=1"]
 *	                         what they ask, only when there are some
 *	done: 5000  failed: 2  cancelled: 0  rejected: 1   (since start)
 *	requeued: 1  retried: 2
 *	workers: 4  cores: 8  busy_cores: 8
 *	workers_draining: 1  workers_gpus_held: 0   (of the workers)
 *	workers_lost: 0          (since start)
 *	rate: 41.5               tasks finished per second, last minute
 *	recovering: yes          only before recovery is over
 *	stopping: yes            only during a clean stop
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsop.h"
#include "msg.h"
#include "spoold.h"

#define PUBLISH_EVERY_MS 250
#define UNFIT	"queued tasks that fit no worker"

static uint64_t unfit;	/* as the summary has it */
/*
 * Their shapes, as the summary lists them (unfit_shapes), NULL-ended
 * (task.h: task_shape_format, which the readers parse), at most
 * UNFIT_LISTED of them, for "spool status ID" and "spool wait" to tell
 * a task that is one of them.
 */
#define UNFIT_LISTED	32
static char *unfit_shape[UNFIT_LISTED + 1];

/* What the tasks of shape s ask. */
static struct task_shape
asked(const struct shape *s)
{
	struct task_shape ts = { s->cores, s->gpus, s->memory, s->walltime };

	return ts;
}

/* Set the listed shapes to v; 1 if they changed, else 0. */
static int
unfit_list(const struct shape **v, size_t n)
{
	char text[128];
	size_t i;
	int changed = 0;

	for (i = 0; i <= UNFIT_LISTED; i++) {
		if (i < n) {
			struct task_shape ts = asked(v[i]);

			task_shape_format(&ts, v[i]->live, text, sizeof text);
		}
		if (i < n && unfit_shape[i] && strcmp(unfit_shape[i], text) == 0)
			continue;
		if (i >= n && unfit_shape[i] == NULL)
			break;
		changed = 1;
		free(unfit_shape[i]);
		unfit_shape[i] = i < n ? xstrdup(text) : NULL;
	}
	return changed;
}

/*
 * Queued tasks that no worker could run, registered or on its way, nor
 * a kind with a size asked (table.c, shapes_unfit): counted in the
 * summary with their shapes, and said once in the log with what one of
 * them asks, until there are none (a task that asks for more than any
 * worker has would otherwise wait without a word).  Looked at each time
 * the summary is due, whether or not it changed otherwise.
 */
static void
check_unfit(void)
{
	const struct shape *v[UNFIT_LISTED];
	struct task_shape one;
	char asks[128];
	size_t nv;
	uint64_t n = shapes_unfit(v, UNFIT_LISTED, &nv);

	if (unfit_list(v, nv) || n != unfit)
		sd.summary_dirty = 1;
	unfit = n;
	if (n == 0) {
		msg_clear(UNFIT);
		return;
	}
	one = asked(v[0]);
	msg_once(UNFIT, "no worker can run %" PRIu64 " queued task%s, "
	    "registered or on its way, nor a kind with a size asked: one "
	    "asks %s (the summary counts them as unfit)", n, n == 1 ? "" : "s",
	    task_shape_words(&one, asks, sizeof asks));
}

static void
window_advance(void)
{
	uint64_t sec = sd.now / 1000;

	if (sd.window_sec == 0)
		sd.window_sec = sec;
	while (sd.window_sec < sec) {
		sd.window_sec++;
		sd.finished_window[sd.window_sec % 60] = 0;
		if (sec - sd.window_sec > 60)
			sd.window_sec = sec - 60;
	}
}

void
count_finished(enum result_state st)
{
	switch (st) {
	case RS_DONE: sd.c.done++; break;
	case RS_FAILED: sd.c.failed++; break;
	case RS_CANCELLED: sd.c.cancelled++; break;
	case RS_REJECTED: sd.c.rejected++; break;
	default: break;
	}
	window_advance();
	sd.finished_window[sd.window_sec % 60]++;
	sd.summary_dirty = 1;
}

void
publish_summary(int force)
{
	struct buf b = BUF_INIT;
	uint64_t total = 0, nworkers = 0, cores = 0, busy = 0, draining = 0,
	    held = 0;
	char who[96];
	size_t i;

	if (!force && sd.now < sd.next_publish)
		return;
	check_unfit();
	if (!force && !sd.summary_dirty) {
		sd.next_publish = sd.now + PUBLISH_EVERY_MS;
		return;
	}
	window_advance();
	for (i = 0; i < 60; i++)
		total += sd.finished_window[i];
	for (i = 0; i < sd.nworkers; i++)
		if (sd.workers[i] && !sd.workers[i]->gone) {
			nworkers++;
			cores += sd.workers[i]->info.cores;
			busy += sd.workers[i]->cores_used;
			draining += sd.workers[i]->draining != 0;
			held += sd.workers[i]->gpus_held != 0;
		}
	host_self(who, sizeof who);
	rec_put_double(&b, "time", now_unix(), 3);
	rec_put_word(&b, "spoold", who);
	rec_put_uint(&b, "waiting", sd.c.waiting);
	rec_put_uint(&b, "queued", sd.c.queued);
	rec_put_uint(&b, "unfit", unfit);
	if (unfit_shape[0])
		rec_put_strv(&b, "unfit_shapes", unfit_shape);
	rec_put_uint(&b, "placed", sd.c.placed);
	rec_put_uint(&b, "done", sd.c.done);
	rec_put_uint(&b, "failed", sd.c.failed);
	rec_put_uint(&b, "cancelled", sd.c.cancelled);
	rec_put_uint(&b, "rejected", sd.c.rejected);
	rec_put_uint(&b, "requeued", sd.c.requeued);
	rec_put_uint(&b, "retried", sd.c.retried);
	rec_put_uint(&b, "workers", nworkers);
	rec_put_uint(&b, "cores", cores);
	rec_put_uint(&b, "busy_cores", busy > cores ? cores : busy);
	rec_put_uint(&b, "workers_draining", draining);
	rec_put_uint(&b, "workers_gpus_held", held);
	rec_put_uint(&b, "workers_lost", sd.c.workers_lost);
	rec_put_double(&b, "rate", (double)total / 60.0, 2);
	if (sd.recovering)
		rec_put_word(&b, "recovering", "yes");
	if (sd.shutting_down)
		rec_put_word(&b, "stopping", "yes");
	/* one that fails stays due: written again at a later pass */
	if (fsop_publish(sd.sp.fd[SD_TMP], sd.sp.fd[SD_STATE], "summary", b.p,
	    b.len, 0600, 0) < 0)
		msg_once("summary", "write: state/summary: %m");
	else {
		msg_clear("summary");
		sd.summary_dirty = 0;
	}
	buf_free(&b);
	sd.next_publish = sd.now + PUBLISH_EVERY_MS;
}
