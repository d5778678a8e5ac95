/*
 * wait.c - "spool wait" and "spool gather": waiting on futures.
 *
 * A task is finished when tasks/SHARD/ID exists (it appears in one
 * rename, with its result and output inside).  Waiting is noticing
 * that: inotify on tasks/ and on the shards of the awaited IDs names
 * the finished task directly when it finishes on this host; a rescan,
 * whose interval starts at 10 ms and doubles to daemon: rescan, stats
 * the shards whose directory stamp moved and catches the rest (tasks
 * finished by a spoold on another host).  No busy polling.
 *
 * Short waits use no inotify at all: for the first QUICK_MS the shards
 * are stat'ed (a stat each) after pauses of a sixteenth of the time
 * waited so far, from QUICK_STEP_MIN_US up to QUICK_STEP_MAX_US (about
 * 50 rounds in all), so a task that finishes in that time is seen at
 * most a sixteenth of the time waited after (0.1 ms in the first 1.6
 * ms), not half a step of 1 ms on average; only then is the inotify
 * instance made.  Closing an inotify instance waits for the kernel to
 * retire its watches (an SRCU grace period: 0.1 ms, at times 7 ms and
 * more, measured), which "spool wait" on a task of a few milliseconds
 * paid at every exit.
 *
 *	spool wait [--timeout D] [--no-task-status] [ID...]
 *		(IDs from stdin if none, or for "-")
 *		exit 0 if all succeeded, else the status of the first
 *		failed one in the order given (see result_exit_status),
 *		or 1 with --no-task-status, which no status of spool's
 *		own can be mistaken for; 3 on timeout; each failure is
 *		reported on stderr; 2 for an ID never claimed or whose
 *		task was purged (check_gone).
 *	spool gather [--timeout D] [--no-task-status] [ID...]
 *		the same, and prints each task's stdout, in the order
 *		given, as soon as it and all before it are finished;
 *		111, whatever the tasks' statuses, if one that is a
 *		regular file could not be opened or read whole (said;
 *		the others are printed): an output with a part missing
 *		is never a success.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "fsop.h"
#include "hostinfo.h"
#include "ids.h"
#include "journal.h"
#include "msg.h"
#include "progress.h"
#include "taskview.h"
#include "units.h"
#include "watch.h"

#define EXIT_TIMEOUT	3
#define EXIT_TASK_FAILED 1	/* --no-task-status: a task did not succeed */
#define RESCAN_MIN_MS	10
#define QUICK_MS	25	/* first, stat after each pause of... */
#define QUICK_STEP_MIN_US 100	/* ... the time waited / 16 within these */
#define QUICK_STEP_MAX_US 1000	/* ... and make the inotify instance after */
#define DIRECT_MAX	4	/* pending in a shard: looked up, not listed */
#define UNFIT_EVERY_MS	1000	/* spoold's unfit shapes looked at */

struct shard {
	uint64_t num;
	size_t	n;		/* awaited IDs in it still pending */
	struct dirstamp st;
	int	watched;
	int	unwatchable;	/* its watch failed: try again on a change */
	int	dirty;		/* list it: something changed, name unknown */
};

struct idref {
	uint64_t id;
	size_t	i;		/* index into ids[] */
};

struct waiter {
	uint64_t *ids;
	size_t	n;
	int	*status;	/* -1 pending, else exit status */
	size_t	pending;
	struct idref *byid;	/* ids[] sorted by ID, for names seen */
	struct shard *shards;
	size_t	nshards;
	uint64_t *seen;		/* IDs inotify named since the last pass */
	size_t	nseen, capseen;
	struct watch watch;
	int	armed;		/* the inotify instance was made */
	int	tasks_dirty;	/* tasks/ changed, which shard unknown */
	int	gone_check;	/* look for IDs purged (check_gone) */
	struct dirstamp tasks_st;	/* tasks/'s: a purge touches it */
	size_t	printed;	/* gather: next index to print */
	int	gather;
	int	unread;		/* gather: an output not printed whole */
	size_t	failed;		/* finished, not done */
	struct progress prog;	/* on a terminal (progress.c) */
	uint64_t next_unfit;	/* look for unfit tasks (unfit_check) */
	int	unfit_said;
};

static struct shard *
shard_get(struct waiter *w, uint64_t num)
{
	size_t i;

	for (i = 0; i < w->nshards; i++)
		if (w->shards[i].num == num)
			return &w->shards[i];
	w->shards = xreallocarray(w->shards, w->nshards + 1,
	    sizeof *w->shards);
	memset(&w->shards[w->nshards], 0, sizeof *w->shards);
	w->shards[w->nshards].num = num;
	w->shards[w->nshards].dirty = 1;
	return &w->shards[w->nshards++];
}

static int
idref_cmp(const void *a, const void *b)
{
	const struct idref *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id ? 1 :
	    x->i < y->i ? -1 : x->i > y->i;
}

static void
report_failure(uint64_t id, const struct result *r)
{
	fprintf(stderr, "spool: task %" PRIu64 " %s: %s%s%s\n", id,
	    result_state_name[r->state], result_reason_name[r->reason],
	    r->message ? ": " : "", r->message ? r->message : "");
}

/* Print task id's stdout: 0, or -1 if it could not be read (said). */
static int
print_stdout(uint64_t id)
{
	char path[SPOOL_PATH_MAX + 16], chunk[65536];
	off_t off = 0;
	ssize_t n;
	int fd;

	spool_task_path(id, path, sizeof path);
	strcat(path, "/stdout");
	/* the task may have made its stdout a FIFO: not waited on */
	fd = fsop_open_regular(cli_sp.fd[SD_TASKS], path, NULL);
	if (fd < 0) {
		if (errno == EINVAL)
			msg_warn("read: tasks/%s: not a regular file, not "
			    "printed", path);
		else if (errno != ENOENT) {
			msg_warn("open: tasks/%s: %m", path);
			return -1;
		}
		return 0;
	}
	while ((n = fsop_pread(fd, chunk, sizeof chunk, off)) > 0) {
		if (fwrite(chunk, 1, (size_t)n, stdout) != (size_t)n)
			msg_fatal("write: stdout: %m");
		off += n;
	}
	if (n < 0)
		msg_warn("read: tasks/%s: %m", path);
	close(fd);
	return n < 0 ? -1 : 0;
}

/*
 * ID index i may have finished: check it.  A result that is there but
 * cannot be read (said once: cli_read_result) is read again at the next
 * rescan, its shard's stamp forgotten: nothing need change in the shard
 * for the read to work again (an NFS server's EIO that passes), and the
 * stamp alone would have waited for such a change, or for ever.
 */
static void
check_one(struct waiter *w, size_t i)
{
	struct result r;
	int rc;

	if (w->status[i] >= 0)
		return;
	if ((rc = cli_read_result(w->ids[i], &r)) < 0)
		dirstamp_reset(&shard_get(w, w->ids[i] /
		    SPOOL_SHARD_SIZE)->st);
	if (rc <= 0)
		return;
	w->status[i] = result_exit_status(&r);
	if (w->status[i] != 0) {
		progress_clear(&w->prog);
		report_failure(w->ids[i], &r);
		w->failed++;
	}
	result_free(&r);
	w->pending--;
	shard_get(w, w->ids[i] / SPOOL_SHARD_SIZE)->n--;
}

/* The first index of byid whose ID is id or more. */
static size_t
byid_from(const struct waiter *w, uint64_t id)
{
	size_t lo = 0, hi = w->n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (w->byid[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Is id awaited and not finished?  (for the progress bar) */
static int
awaited_pending(void *arg, uint64_t id)
{
	struct waiter *w = arg;
	size_t lo;

	for (lo = byid_from(w, id); lo < w->n && w->byid[lo].id == id; lo++)
		if (w->status[w->byid[lo].i] < 0)
			return 1;
	return 0;
}

/* Task id appeared in tasks/SHARD: check every index awaiting it. */
static void
check_id(struct waiter *w, uint64_t id)
{
	size_t lo;

	for (lo = byid_from(w, id); lo < w->n && w->byid[lo].id == id; lo++)
		check_one(w, w->byid[lo].i);
}

static int
listed_one(void *arg, const char *name, unsigned char type)
{
	uint64_t id;

	(void)type;
	if (ids_parse(name, &id) == 0)
		check_id(arg, id);
	return 0;
}

/*
 * Something changed in the shard and we do not know what: list it and
 * check the awaited IDs it holds (one listing, then one read per task
 * found finished; never a read per task still pending).  A shard that
 * holds at most DIRECT_MAX awaited tasks still pending has them looked
 * up instead (a read each, which fails while the task runs): a full
 * shard is 1,000 names, 0.5 ms to list and check here and several
 * READDIR replies on NFS, for the one task "spool wait ID" waits on.
 */
static void
check_shard(struct waiter *w, struct shard *s)
{
	uint64_t first = s->num * SPOOL_SHARD_SIZE;
	char name[24];
	size_t lo;

	s->dirty = 0;
	if (s->n <= DIRECT_MAX) {
		for (lo = byid_from(w, first); lo < w->n && s->n > 0 &&
		    w->byid[lo].id < first + SPOOL_SHARD_SIZE; lo++)
			check_one(w, w->byid[lo].i);
		return;
	}
	snprintf(name, sizeof name, "%" PRIu64, s->num);
	if (fsop_list(cli_sp.fd[SD_TASKS], name, listed_one, w) < 0 &&
	    errno != ENOENT)
		msg_warn("list: tasks/%s: %m", name);
}

/*
 * Watch the shards still awaited.  A shard that does not exist yet
 * (its first task not final) fails its watch; it is tried again when
 * the watch on tasks/ names it (or names nothing: an overflow) or when
 * a rescan's stat found it (a shard made on another host), not at
 * every pass of the loop.
 */
static void
watch_shards(struct waiter *w)
{
	struct shard *s;
	char name[24];
	size_t i;

	if (!watch_enabled(&w->watch))
		return;
	for (i = 0; i < w->nshards; i++) {
		s = &w->shards[i];
		if (s->watched || s->n == 0 ||
		    (s->unwatchable && !w->tasks_dirty && !s->st.valid))
			continue;
		snprintf(name, sizeof name, "%" PRIu64, s->num);
		if (watch_add(&w->watch, cli_sp.fd[SD_TASKS], name,
		    IN_MOVED_TO | IN_CREATE, s) == 0) {
			s->watched = 1;
			s->dirty = 1;	/* may have raced the watch */
		} else
			s->unwatchable = 1;
	}
	w->tasks_dirty = 0;
}

static void
on_event(void *arg, void *cookie, const char *name, uint32_t mask)
{
	struct waiter *w = arg;
	const char *why;
	uint64_t id;
	size_t i;

	if (cookie == NULL || (cookie == &w->tasks_dirty &&
	    (mask & IN_ATTRIB))) {
		w->gone_check = 1;	/* a purge touched tasks/, or overflow */
		if (cookie != NULL)
			return;
	}
	if (cookie == NULL || cookie == &w->tasks_dirty) {
		if (cookie != NULL && name != NULL &&
		    units_parse_uint(name, UINT64_MAX, &id, &why) == 0) {
			for (i = 0; i < w->nshards; i++)
				if (w->shards[i].num == id)
					w->shards[i].unwatchable = 0;
		} else
			w->tasks_dirty = 1;	/* which shard: unknown */
		for (i = 0; i < w->nshards; i++)
			w->shards[i].dirty = 1;
		return;
	}
	if (name == NULL || ids_parse(name, &id) < 0) {
		((struct shard *)cookie)->dirty = 1;
		return;
	}
	if (w->nseen == w->capseen) {
		w->capseen = w->capseen ? 2 * w->capseen : 64;
		w->seen = xreallocarray(w->seen, w->capseen, sizeof *w->seen);
	}
	w->seen[w->nseen++] = id;
}

static void
flush_gather(struct waiter *w)
{
	if (w->printed < w->n && w->status[w->printed] >= 0)
		progress_clear(&w->prog);
	while (w->printed < w->n && w->status[w->printed] >= 0) {
		if (print_stdout(w->ids[w->printed]) < 0)
			w->unread = 1;
		w->printed++;
	}
	if (fflush(stdout) == EOF)
		msg_fatal("write: stdout: %m");
}

/* Make the inotify instance; what changed before is found by a listing. */
static void
watch_arm(struct waiter *w)
{
	size_t i;

	w->armed = 1;
	if (watch_open(&w->watch, -1) == 0 && watch_enabled(&w->watch))
		(void)watch_add(&w->watch, cli_sp.rootfd, "tasks", IN_CREATE |
		    IN_MOVED_TO | IN_ATTRIB, &w->tasks_dirty);
	for (i = 0; i < w->nshards; i++)
		w->shards[i].dirty = 1;
	/* purged before the watch: the stamp first, a later purge moves it */
	(void)dirstamp_changed(cli_sp.rootfd, "tasks", &w->tasks_st);
	w->gone_check = 1;
}

/*
 * A purge removes final tasks (cli/purge.c), then touches tasks/: an ID
 * still pending may be gone for good, and would be waited on for ever.
 * Look (spool_tasks_gone: three listings, whatever the number of IDs)
 * and refuse the first one gone, in the order given, as an ID never
 * claimed is refused.  Not before QUICK_MS: a task that ends quickly
 * costs nothing more.
 */
static void
check_gone(struct waiter *w)
{
	uint64_t *ids, *p;
	unsigned char *gone;
	size_t i, n = 0;

	w->gone_check = 0;
	if (w->pending == 0)
		return;
	ids = xreallocarray(NULL, w->pending, sizeof *ids);
	for (i = 0; i < w->n; i++)
		if (w->status[w->byid[i].i] < 0 &&
		    (n == 0 || ids[n - 1] != w->byid[i].id))
			ids[n++] = w->byid[i].id;
	gone = xmalloc(n);
	if (spool_tasks_gone(&cli_sp, ids, n, gone) > 0)
		for (i = 0; i < w->n; i++) {
			if (w->status[i] >= 0)
				continue;
			p = bsearch(&w->ids[i], ids, n, sizeof *ids, ids_cmp);
			if (p != NULL && gone[p - ids]) {
				progress_clear(&w->prog);
				msg_fatal_status(EXIT_USAGE, "no such task: %"
				    PRIu64 " (removed by spool purge?)",
				    w->ids[i]);
			}
		}
	free(gone);
	free(ids);
}

/*
 * A task waited on that no worker can run, registered or on its way,
 * nor a kind with a size asked, would be waited on for ever without a
 * word: when spoold's summary lists shapes of such tasks (and others
 * than when looked before), the pending IDs are looked up (query.c)
 * and the first one queued with such a shape is said, once, with how
 * many there are; the wait goes on (a worker that fits may come).
 */
static void
unfit_check(struct waiter *w)
{
	struct tview v;
	uint64_t first = 0;
	size_t i, n = 0;
	char asks[128], more[48] = "";

	if (!query_unfit_reload())
		return;
	query_reset();
	for (i = 0; i < w->n; i++) {
		if (w->status[w->byid[i].i] >= 0 ||
		    (i > 0 && w->byid[i - 1].id == w->byid[i].id))
			continue;
		query_task(w->byid[i].id, &v);
		if (v.unfit && n++ == 0) {
			first = v.id;
			task_shape_words(&v.ask, asks, sizeof asks);
		}
		query_free(&v);
	}
	if (n == 0)
		return;
	if (n > 1)
		snprintf(more, sizeof more, " (one of %zu waited on)", n);
	progress_clear(&w->prog);
	msg_warn("task %" PRIu64 "%s is queued, and no worker can run it, "
	    "registered or on its way, nor a kind with a size asked: it asks "
	    "%s; waiting all the same (spool status %" PRIu64 ")", first,
	    more, asks, first);
	w->unfit_said = 1;
}

/*
 * Before the inotify instance (see QUICK_MS): pause a sixteenth of the
 * time waited since start_us, within QUICK_STEP_MIN_US..MAX_US.
 */
static void
quick_pause(uint64_t start_us)
{
	uint64_t step = (now_us() - start_us) / 16;
	struct timespec ts;

	if (step < QUICK_STEP_MIN_US)
		step = QUICK_STEP_MIN_US;
	if (step > QUICK_STEP_MAX_US)
		step = QUICK_STEP_MAX_US;
	ts.tv_sec = 0;
	ts.tv_nsec = (long)step * 1000;
	if (nanosleep(&ts, NULL) < 0 && errno != EINTR)
		msg_fatal("nanosleep: %m");
}

/*
 * No --timeout: waits for ever.  Not 0, which is a timeout (check once),
 * as is a duration under 1 ms that units_parse_ms rounds to 0.
 */
#define NO_TIMEOUT	UINT64_MAX

static int
wait_all(struct waiter *w, uint64_t timeout_ms)
{
	struct pollfd pfd;
	uint64_t start_us = now_us(), start = start_us / 1000;
	uint64_t next_rescan = start, rescan_ms;
	uint64_t end, now;
	size_t i, before;
	char name[24];
	int t, rescan;

	rescan_ms = RESCAN_MIN_MS;
	for (;;) {
		now = now_ms();
		rescan = now >= next_rescan;
		before = w->pending;
		for (i = 0; i < w->nseen; i++)
			check_id(w, w->seen[i]);
		w->nseen = 0;
		for (i = 0; i < w->nshards; i++) {
			struct shard *s = &w->shards[i];

			if (s->n == 0)
				continue;
			snprintf(name, sizeof name, "%" PRIu64, s->num);
			if (s->dirty || (rescan &&
			    dirstamp_changed(cli_sp.fd[SD_TASKS], name, &s->st)))
				check_shard(w, s);
		}
		watch_shards(w);
		if (w->armed && rescan &&
		    dirstamp_changed(cli_sp.rootfd, "tasks", &w->tasks_st))
			w->gone_check = 1;	/* a purge on another host */
		if (w->gone_check)
			check_gone(w);
		if (w->armed && !w->unfit_said && now >= w->next_unfit) {
			w->next_unfit = now + UNFIT_EVERY_MS;
			unfit_check(w);
		}
		if (w->gather)
			flush_gather(w);
		progress_draw(&w->prog, w->n - w->pending - w->failed,
		    w->failed);
		if (w->pending == 0)
			return 0;
		if (!w->armed && now >= start + QUICK_MS) {
			watch_arm(w);
			continue;
		}
		if (now - start >= timeout_ms) {
			if (!w->armed)
				check_gone(w);	/* gone, not late */
			return -1;
		}
		if (!w->armed) {
			quick_pause(start_us);
			continue;
		} else if (now >= next_rescan) {
			rescan_ms = w->pending != before ? RESCAN_MIN_MS :
			    rescan_ms * 2;
			if (rescan_ms > cli_sp.cfg.rescan_ms)
				rescan_ms = cli_sp.cfg.rescan_ms;
			next_rescan = now + rescan_ms;
		}
		end = next_rescan;
		if (end - start > timeout_ms)
			end = start + timeout_ms;
		t = end > now ? (int)(end - now) : 0;
		/* a shard just watched may have changed before its watch */
		for (i = 0; i < w->nshards; i++)
			if (w->shards[i].dirty && w->shards[i].n)
				t = 0;
		pfd.fd = w->watch.fd;
		pfd.events = POLLIN;
		if (poll(&pfd, w->watch.fd >= 0 ? 1 : 0, t) < 0 && errno != EINTR)
			msg_fatal("poll: %m");
		if (watch_read(&w->watch, on_event, w) < 0)
			msg_warn("read: inotify: %m");
	}
}

static int
run_wait(int argc, char **argv, int gather)
{
	static const struct option opts[] = {
		{ "timeout", required_argument, NULL, 'T' },
		{ "no-task-status", no_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct waiter w;
	uint64_t timeout_ms = NO_TIMEOUT, end;
	const char *why;
	size_t i;
	int c, rc, task_status = 1;

	while ((c = getopt_long(argc, argv, "+T:h", opts, NULL)) != -1) {
		switch (c) {
		case 'T':
			if (units_parse_ms(optarg, &timeout_ms, &why) < 0)
				msg_fatal_status(EXIT_USAGE, "--timeout %s: %s",
				    journal_q(optarg), why);
			break;
		case 'N':
			task_status = 0;
			break;
		case 'h':
			printf("usage: spool %s [--timeout D] "
			    "[--no-task-status] [ID...]\n",
			    gather ? "gather" : "wait");
			return 0;
		default:
			return EXIT_USAGE;
		}
	}
	cli_open();
	memset(&w, 0, sizeof w);
	w.gather = gather;
	w.ids = cli_read_ids(argc - optind, argv + optind, &w.n);
	w.status = xreallocarray(NULL, w.n ? w.n : 1, sizeof *w.status);
	if (w.n && ids_end(&cli_sp, 0, &end) < 0)
		msg_fatal("read: %s/ids: %m", cli_sp.shown);
	for (i = 0; i < w.n; i++) {
		if (w.ids[i] >= end)
			msg_fatal_status(EXIT_USAGE, "no such task: %" PRIu64,
			    w.ids[i]);
		w.status[i] = -1;
		shard_get(&w, w.ids[i] / SPOOL_SHARD_SIZE)->n++;
	}
	w.pending = w.n;
	w.byid = xreallocarray(NULL, w.n ? w.n : 1, sizeof *w.byid);
	for (i = 0; i < w.n; i++) {
		w.byid[i].id = w.ids[i];
		w.byid[i].i = i;
	}
	qsort(w.byid, w.n, sizeof *w.byid, idref_cmp);
	progress_init(&w.prog, w.n, awaited_pending, &w);
	(void)watch_open(&w.watch, 0);	/* none yet: see QUICK_MS */
	rc = wait_all(&w, timeout_ms);
	progress_clear(&w.prog);
	if (rc < 0) {
		msg_warn("timed out with %zu of %zu task%s unfinished",
		    w.pending, w.n, w.n == 1 ? "" : "s");
		rc = EXIT_TIMEOUT;
	} else {
		for (i = 0; i < w.n && rc == 0; i++)
			rc = w.status[i];
		if (rc && !task_status)
			rc = EXIT_TASK_FAILED;
	}
	if (w.unread)	/* what it printed lacks a part: not a clean end */
		rc = EXIT_TEMPFAIL;
	free(w.shards);
	free(w.byid);
	free(w.seen);
	free(w.ids);
	free(w.status);
	watch_close(&w.watch);
	return rc;
}

int
cmd_wait(int argc, char **argv)
{
	return run_wait(argc, argv, 0);
}

int
cmd_gather(int argc, char **argv)
{
	return run_wait(argc, argv, 1);
}

int
cli_read_result(uint64_t id, struct result *r)
{
	char path[SPOOL_PATH_MAX + 16];
	struct buf b = BUF_INIT;
	const char *why;
	char key[32];

	spool_task_path(id, path, sizeof path);
	strcat(path, "/result");
	/* said once while it lasts: spool wait reads it again */
	snprintf(key, sizeof key, "result %" PRIu64, id);
	if (fsop_read_file(cli_sp.fd[SD_TASKS], path, 1 << 20, &b, NULL) < 0) {
		buf_free(&b);
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		msg_once(key, "read: tasks/%s: %m", path);
		return -1;
	}
	if (result_decode(b.p, b.len, r, &why) < 0) {
		msg_once(key, "tasks/%s: %s", path, why);
		buf_free(&b);
		return -1;
	}
	buf_free(&b);
	msg_clear(key);
	return 1;
}
