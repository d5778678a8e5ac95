/*
 * flusher.c - the group commit's flush, in a thread of its own.
 *
 * A worker's commit is: the results written, one syncfs(2) of the
 * spool's filesystem, then each running/ID.ATT renamed into done/
 * (run.c).  The syncfs waits for the disk, 3-5 ms a commit on the
 * machines of doc/performance-history.md, and a worker that waited for it in
 * its one loop could neither reap an ended task nor start the next one
 * meanwhile: with short tasks its slots stood idle for a tenth of the
 * time.  So the syncfs runs here, in a thread that does nothing else.
 * The loop asks for a flush (a byte on one pipe), goes on running
 * tasks, and polls the other pipe, where the thread answers with the
 * errno of the syncfs (0: done); only then does it rename the results
 * that flush covered.  One flush is in flight at a time.
 *
 * The thread takes no signal (it starts with all of them blocked, so
 * the worker's signalfd gets them all) and touches nothing but its
 * three descriptors: the flush's count and fault injection
 * (fsop_barrier_begin, fsop_barrier_end) and everything else stay in
 * the main thread.  If reading its pipe ever failed, the thread would
 * answer with the negative errno and end; the worker then stops
 * (msg_fatal): it could not commit any more.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fault.h"
#include "flusher.h"
#include "fsop.h"
#include "msg.h"

static int req[2] = { -1, -1 }, rep[2] = { -1, -1 }, fsfd = -1, busy;
static unsigned long delay_ms;	/* fault injection: slow-sync=MS */
static const char *hold;	/* fault injection: sync-holds=PATH */

static void *
flusher(void *arg)
{
	ssize_t n;
	char c;
	int err;

	(void)arg;
	for (;;) {
		while ((n = read(req[0], &c, 1)) < 0 && errno == EINTR)
			;
		if (n == 0)
			return NULL;	/* the worker is leaving */
		if (n > 0)
			fault_sync_delay(delay_ms, hold);
		err = n < 0 ? -errno : syncfs(fsfd) < 0 ? errno : 0;
		while (write(rep[1], &err, sizeof err) < 0 && errno == EINTR)
			;
		if (err < 0)
			return NULL;
	}
}

int
flusher_start(int fd, char *why, size_t whysize)
{
	sigset_t all, old;
	pthread_t t;
	int e;

	if (pipe2(req, O_CLOEXEC) < 0 || pipe2(rep, O_CLOEXEC) < 0) {
		snprintf(why, whysize, "pipe: %s", strerror(errno));
		return -1;
	}
	fsfd = fd;
	delay_ms = fault_sync_delay_ms();	/* read here, not in the thread */
	hold = fault_sync_hold();
	sigfillset(&all);
	if ((e = pthread_sigmask(SIG_SETMASK, &all, &old)) == 0) {
		e = pthread_create(&t, NULL, flusher, NULL);
		(void)pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (e == 0)
		e = pthread_detach(t);
	if (e != 0) {
		snprintf(why, whysize, "start the flush thread: %s",
		    strerror(e));
		return -1;
	}
	return 0;
}

int
flusher_fd(void)
{
	return rep[0];
}

int
flusher_busy(void)
{
	return busy;
}

int
flusher_begin(void)
{
	char c = 0;
	int rc;

	if ((rc = fsop_barrier_begin()) <= 0)
		return rc;
	while (write(req[1], &c, 1) < 0)
		if (errno != EINTR)
			return fsop_barrier_end(errno);
	busy = 1;
	return 1;
}

int
flusher_end(void)
{
	ssize_t n;
	int err;

	while ((n = read(rep[0], &err, sizeof err)) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof err)
		msg_fatal("read: the flush thread's pipe: %s", n < 0 ?
		    strerror(errno) : "short read");
	busy = 0;
	if (err < 0)
		msg_fatal("the flush thread ended: read: its pipe: %s",
		    strerror(-err));
	return fsop_barrier_end(err);
}
