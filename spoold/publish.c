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
 *	done: 5000  failed: 2  cancelled: 0  rejected: 1   (since start)
 *	requeued: 1  retried: 2
 *	workers: 4  cores: 8  busy_cores: 8
 *	rate: 41.5               tasks finished per second, last minute
 *	recovering: yes          only before recovery is over
 *	stopping: yes            only during a clean stop
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fsop.h"
#include "msg.h"
#include "spoold.h"

#define PUBLISH_EVERY_MS 250

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
	uint64_t total = 0, nworkers = 0, cores = 0, busy = 0;
	char who[96];
	size_t i;

	if (!force && (!sd.summary_dirty || sd.now < sd.next_publish))
		return;
	window_advance();
	for (i = 0; i < 60; i++)
		total += sd.finished_window[i];
	for (i = 0; i < sd.nworkers; i++)
		if (sd.workers[i] && !sd.workers[i]->gone) {
			nworkers++;
			cores += sd.workers[i]->info.cores;
			busy += sd.workers[i]->cores_used;
		}
	snprintf(who, sizeof who, "%s.%ld", host_name(), (long)getpid());
	rec_put_double(&b, "time", now_unix(), 3);
	rec_put_word(&b, "spoold", who);
	rec_put_uint(&b, "waiting", sd.c.waiting);
	rec_put_uint(&b, "queued", sd.c.queued);
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
