/*
 * waits.c - reads that wait for a result, and poll(2) on state files.
 *
 * Reading tasks/ID/result of an unfinished task is future.result(): the
 * read request is kept, unanswered, in a list; the loop goes on with
 * other requests.  After every refresh of the view that changed
 * something (main.c: inotify said so, or a rescan found a directory
 * stamp moved), wait_wake() answers each kept read whose task is now
 * final with the result's bytes, and one whose task is gone for good
 * with ENOENT (taskview_gone: "spool purge" removed it before the view
 * saw it end, or it was never submitted), as a read of such a task
 * fails at once: nothing would ever answer it.  Nothing polls per
 * task: the cost of waiting is the view's rescan, whatever the number
 * of readers.
 *
 * A kept read is interruptible: the kernel sends FUSE_INTERRUPT when
 * the reader gets a signal, libfuse calls on_interrupt(), and the read
 * is answered EINTR (the task is not touched; Ctrl-C cancels the read,
 * not the task).  With O_NONBLOCK the read fails with EAGAIN at once.
 *
 * poll(2)/select(2) on a state file: readable (POLLIN|POLLRDNORM|
 * POLLPRI) when the task's state differs from the one this open file
 * last read (or saw at open), so a loop of "read from offset 0, poll"
 * wakes at every change; once a final state has been read, poll
 * answers POLLIN|POLLHUP at once (no change will come).  On a result
 * file: readable when the task is final.  The kernel's poll handle is
 * kept with the open file and notified (fuse_lowlevel_notify_poll) by
 * wait_wake() when the condition holds.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "msg.h"
#include "spoolfs.h"

struct kept {
	fuse_req_t req;
	struct fh *h;
	size_t	size;
	off_t	off;
	struct kept *next, *prev;
};

static struct kept *kept;	/* reads waiting for a final result */
static struct fh *polled;	/* handles holding a poll handle */

static void
kept_unlink(struct kept *k)
{
	if (k->prev)
		k->prev->next = k->next;
	else
		kept = k->next;
	if (k->next)
		k->next->prev = k->prev;
}

static void
on_interrupt(fuse_req_t req, void *data)
{
	struct kept *k = data;

	(void)req;
	kept_unlink(k);
	fuse_reply_err(k->req, EINTR);
	free(k);
}

void
wait_serve(fuse_req_t req, struct fh *h, size_t size, off_t off)
{
	if (h->fd < 0 && (h->fd = tree_backing_open(h->nd)) < 0) {
		fuse_reply_err(req, errno == ENOENT ? EIO : errno);
		return;
	}
	reply_fd(req, h, size, off);
}

/*
 * The task of h is gone for good (purged, or never submitted): it will
 * never be final, and a read kept for it would never be answered.
 */
static int
task_gone(const struct fh *h)
{
	return fs_task_state(h->nd.n) == TV_UNKNOWN &&
	    taskview_gone(fs.tv, h->nd.n);
}

void
wait_read(fuse_req_t req, struct fh *h, size_t size, off_t off)
{
	struct kept *k;

	if (h->fd >= 0 || TV_FINAL(fs_task_state(h->nd.n))) {
		wait_serve(req, h, size, off);
		return;
	}
	if (task_gone(h)) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	if (h->flags & O_NONBLOCK) {
		fuse_reply_err(req, EAGAIN);
		return;
	}
	if (fuse_req_interrupted(req)) {
		fuse_reply_err(req, EINTR);
		return;
	}
	k = xcalloc(1, sizeof *k);
	k->req = req;
	k->h = h;
	k->size = size;
	k->off = off;
	k->next = kept;
	if (kept)
		kept->prev = k;
	kept = k;
	/* one thread: no interrupt can arrive between the check and this */
	fuse_req_interrupt_func(req, on_interrupt, k);
}

/* What poll reports for h now; 0 when the caller must wait. */
static unsigned
poll_ready(struct fh *h)
{
	enum tv_state st = fs_task_state(h->nd.n);

	if (h->nd.kind == NK_RESULT)
		return TV_FINAL(st) || h->fd >= 0 || h->lazy || task_gone(h) ?
		    POLLIN | POLLRDNORM : 0;
	/*
	 * A state file: a change of what it shows, and the end once the
	 * result is there (an owed rejection shows as rejected before:
	 * a POLLHUP then would wake a waiter for good before its result).
	 */
	if (fs_task_shown(h->nd.n) != h->seen)
		return POLLIN | POLLRDNORM | POLLPRI;
	if (TV_FINAL(st))
		return POLLIN | POLLRDNORM | POLLHUP;
	return 0;
}

static void
polled_unlink(struct fh *h)
{
	if (h->pprev)
		h->pprev->pnext = h->pnext;
	else if (polled == h)
		polled = h->pnext;
	if (h->pnext)
		h->pnext->pprev = h->pprev;
	h->pnext = h->pprev = NULL;
}

void
wait_poll(fuse_req_t req, struct fh *h, struct fuse_pollhandle *ph)
{
	unsigned ev = poll_ready(h);

	if (ph) {
		if (h->ph) {
			fuse_pollhandle_destroy(h->ph);
			polled_unlink(h);
		}
		h->ph = NULL;
		if (ev == 0) {
			h->ph = ph;
			h->pnext = polled;
			if (polled)
				polled->pprev = h;
			polled = h;
		} else
			fuse_pollhandle_destroy(ph);
	}
	fuse_reply_poll(req, ev);
}

void
wait_forget_fh(struct fh *h)
{
	if (h->ph) {
		fuse_pollhandle_destroy(h->ph);
		h->ph = NULL;
		polled_unlink(h);
	}
}

void
wait_wake(void)
{
	struct kept *k, *next;
	struct fh *h, *hnext;
	int rc;

	for (k = kept; k; k = next) {
		next = k->next;
		if (TV_FINAL(fs_task_state(k->h->nd.n)))
			rc = 0;
		else if (task_gone(k->h))
			rc = ENOENT;	/* purged before this view saw it end */
		else
			continue;
		kept_unlink(k);
		/* answered now: the interrupt function must not run */
		fuse_req_interrupt_func(k->req, NULL, NULL);
		if (rc)
			fuse_reply_err(k->req, rc);
		else
			wait_serve(k->req, k->h, k->size, k->off);
		free(k);
	}
	for (h = polled; h; h = hnext) {
		hnext = h->pnext;
		if (poll_ready(h) == 0)
			continue;
		if ((rc = fuse_lowlevel_notify_poll(h->ph)) != 0 && rc != -ENOENT)
			msg_once("notify-poll", "notify poll: %s", strerror(-rc));
		wait_forget_fh(h);
	}
}

int
wait_any(void)
{
	return kept != NULL || polled != NULL;
}

void
wait_cancel_all(int err)
{
	struct kept *k;
	struct fh *h;

	while ((k = kept) != NULL) {
		kept_unlink(k);
		fuse_req_interrupt_func(k->req, NULL, NULL);
		fuse_reply_err(k->req, err);
		free(k);
	}
	while ((h = polled) != NULL)
		wait_forget_fh(h);
}
