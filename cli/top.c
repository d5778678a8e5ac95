/*
 * top.c - "spool top": a live view of the spool in the terminal.
 *
 *	spool top [--once] [--sort KEY] [--filter TEXT] [--interval D]
 *
 * Each frame is read from the files (nothing needs spoold to answer):
 * spoold's lease and state/summary (counts per state, tasks finished
 * per second over the last minute); every worker's info, status and
 * running/ directory (cores, memory and GPUs in use, heartbeat age,
 * the tasks it runs, each one's assignment read once and cached); and
 * the journal, followed with jtail (recent failures with their reason).
 *
 * The live view is plain ANSI (alternate screen, cursor home, erase to
 * end of line), so it works in any terminal and over SSH; the terminal
 * is put back as it was on q, on SIGINT/SIGTERM/SIGHUP and at exit.
 * Keys: q quit, s next sort key, r reverse, / filter by task name
 * (Enter applies, Esc cancels), c clear the filter, space refresh now.
 * With --once, or when standard output is not a terminal, one frame
 * is printed as plain text with every running task and worker.
 *
 * Memory of a running task is what it asked for (MEM-REQ); what a task
 * used is in its result and the journal once it ends.  Heartbeat ages
 * compare the worker's clock with ours.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "fsop.h"
#include "hostinfo.h"
#include "ids.h"
#include "journal.h"
#include "lease.h"
#include "msg.h"
#include "units.h"

#define FAILURES_KEPT	20
#define TAIL_BYTES	(512u << 10)	/* journal read at start, per segment */
#define ASSIGN_MAX	(4u << 20)

enum sortkey { SK_ELAPSED, SK_MEMORY, SK_CORES, SK_ID, SK_WORKER, SK_NAME,
	SK_N };
static const char *const sort_name[SK_N] = {
	"elapsed", "memory", "cores", "id", "worker", "name",
};

struct run {
	char	key[WDIR_ID_MAX + WDIR_ANAME_MAX + 2];	/* WID/ID.ATT */
	uint64_t id;
	uint32_t att;
	char	wid[WDIR_ID_MAX];
	char	*name;
	uint32_t cores;
	uint64_t memory;	/* asked for */
	uint64_t used;		/* in use at its worker's last sample */
	double	since;		/* unix time it entered running/ */
};

struct failure {
	uint64_t id;
	double	t;
	char	reason[24];
	char	how[32];
	char	msg[160];
	char	name[64];
};

struct wrow {
	char	wid[WDIR_ID_MAX];
	struct worker_info info;
	struct worker_status st;
	const char *state;
	uint32_t running;
};

/*
 * What a frame could not read, each while it lasts: a line of the
 * frame ("warning: WHY"; what failed is read again the next frame),
 * and on stderr once while it lasts, its end said, by its msg_once key
 * ("recovered: KEY"), as spool journal -f does; not on the terminal of
 * the live view, where a line would disturb the screen.
 */
enum tfail { TF_LEASE, TF_SUMMARY, TF_WORKERS, TF_WORKER, TF_JOURNAL,
	TF_N };
static const char *const tfail_key[TF_N] = {
	"lease-read", "summary-read", "workers-list", "worker-read",
	"journal-read",
};

struct top {
	struct run *runs, *old;
	size_t	nruns, nold;
	struct wrow *workers;
	size_t	nworkers;
	struct failure fail[FAILURES_KEPT];
	size_t	nfail;		/* in the ring, newest at (first + n - 1) */
	size_t	first;
	double	finished[64];	/* unix times of recent finals (ring) */
	size_t	nfin;
	uint64_t fin_total;
	struct jtail tail;
	char	why[TF_N][PATH_MAX + JOURNAL_VALUE_MAX + 128];	/* "", or
				 * why the last read of each failed */
	int	wfailed;	/* a worker's info failed in this frame */
	enum sortkey sort;
	int	reverse;
	char	filter[64];
	char	editing[64];
	int	in_filter;
	int	once;
	int	rows, cols;
};

/* ---- reading the spool ---- */

/*
 * The read of this frame that k names worked (fmt NULL), or failed:
 * why, fmt's %m the errno at the call.
 */
static void
top_fail(struct top *tp, enum tfail k, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
top_fail(struct top *tp, enum tfail k, const char *fmt, ...)
{
	int err = errno;	/* (isatty sets it) */
	int say = tp->once || !isatty(STDERR_FILENO);
	va_list ap;

	if (fmt == NULL) {
		tp->why[k][0] = 0;
		if (say)
			msg_clear(tfail_key[k]);
		return;
	}
	va_start(ap, fmt);
	errno = err;
	vsnprintf(tp->why[k], sizeof tp->why[k], fmt, ap);
	va_end(ap);
	if (say)
		msg_once(tfail_key[k], "%s", tp->why[k]);
}

static int
run_cmp(const void *a, const void *b)
{
	return strcmp(((const struct run *)a)->key,
	    ((const struct run *)b)->key);
}

struct wctx {
	struct top *tp;
	struct wrow *w;
};

/* the memory its worker saw it use at its last beat; 0 not sampled */
static void
run_used(struct run *r, const struct worker_status *st)
{
	size_t i;

	r->used = 0;
	for (i = 0; i < st->nmem; i++)
		if (st->mem[i][0] == r->id && st->mem[i][1] == r->att)
			r->used = st->mem[i][2];
}

static int
running_one(void *arg, const char *name, unsigned char type)
{
	struct wctx *c = arg;
	struct top *tp = c->tp;
	struct run key, *old, *r;
	char path[WDIR_ID_MAX + WDIR_ANAME_MAX + 16];
	struct stat st;

	(void)type;
	if (wdir_aname_parse(name, &key.id, &key.att) < 0)
		return 0;
	snprintf(key.key, sizeof key.key, "%s/%s", c->w->wid, name);
	c->w->running++;
	tp->runs = xgrowarray(tp->runs, tp->nruns, sizeof *tp->runs);
	r = &tp->runs[tp->nruns++];
	old = tp->nold ? bsearch(&key, tp->old, tp->nold, sizeof *tp->old,
	    run_cmp) : NULL;
	if (old) {		/* read once: take it over */
		*r = *old;
		old->name = NULL;
		run_used(r, &c->w->st);
		return 0;
	}
	memset(r, 0, sizeof *r);
	snprintf(r->key, sizeof r->key, "%s", key.key);
	snprintf(r->wid, sizeof r->wid, "%s", c->w->wid);
	r->id = key.id;
	r->att = key.att;
	snprintf(path, sizeof path, "%s/running/%s", c->w->wid, name);
	if (fsop_stat(cli_sp.fd[SD_WORKERS], path, &st) == 0)
		/* renamed into running/ when it started: ctime */
		r->since = (double)st.st_ctim.tv_sec + st.st_ctim.tv_nsec / 1e9;
	{
		struct buf b = BUF_INIT;
		struct task_spec t;
		const char *why;
		uint32_t att;

		task_init(&t);
		if (fsop_read_file(cli_sp.fd[SD_WORKERS], path, ASSIGN_MAX, &b,
		    NULL) == 0 && assign_decode(b.p, b.len, &t, &att,
		    &why) == 0) {
			r->name = t.name ? xstrdup(t.name) : NULL;
			r->cores = task_cores(&t);
			r->memory = t.memory;
		}
		task_free(&t);
		buf_free(&b);
	}
	run_used(r, &c->w->st);
	return 0;
}

static int
worker_one(void *arg, const char *wid, unsigned char type)
{
	struct top *tp = arg;
	char path[WDIR_ID_MAX + 16];
	struct wctx c;
	struct wrow *w;

	(void)type;
	if (wid[0] == '.')
		return 0;
	tp->workers = xgrowarray(tp->workers, tp->nworkers,
	    sizeof *tp->workers);
	w = &tp->workers[tp->nworkers];
	memset(w, 0, sizeof *w);
	snprintf(w->wid, sizeof w->wid, "%s", wid);
	snprintf(path, sizeof path, "%s/info", wid);
	if (winfo_read(cli_sp.fd[SD_WORKERS], path, &w->info) < 0) {
		/* gone: being removed; else said (the first of a frame) */
		if (errno != ENOENT && !tp->wfailed++)
			top_fail(tp, TF_WORKER, "read: %s/workers/%s/info: %m",
			    cli_sp.shown, journal_q(wid));
		return 0;
	}
	tp->nworkers++;
	w->state = wstate_name[wstate_read(cli_sp.fd[SD_WORKERS], wid, &w->st)];
	c.tp = tp;
	c.w = w;
	snprintf(path, sizeof path, "%s/running", wid);
	(void)fsop_list(cli_sp.fd[SD_WORKERS], path, running_one, &c);
	return 0;
}

static void
read_workers(struct top *tp)
{
	size_t i;

	for (i = 0; i < tp->nold; i++)
		free(tp->old[i].name);
	free(tp->old);
	tp->old = tp->runs;
	tp->nold = tp->nruns;
	if (tp->nold > 1)
		qsort(tp->old, tp->nold, sizeof *tp->old, run_cmp);
	tp->runs = NULL;
	tp->nruns = 0;
	free(tp->workers);
	tp->workers = NULL;
	tp->nworkers = 0;
	tp->wfailed = 0;
	if (fsop_list(cli_sp.fd[SD_WORKERS], ".", worker_one, tp) < 0)
		top_fail(tp, TF_WORKERS, "list: %s/workers: %m", cli_sp.shown);
	else
		top_fail(tp, TF_WORKERS, NULL);
	if (!tp->wfailed)
		top_fail(tp, TF_WORKER, NULL);
}

static void
read_journal(struct top *tp)
{
	struct jlog log = JLOG_INIT;
	char state[16], v[16];
	struct failure *f;
	const char *seg;
	size_t i;
	double d;
	int err;

	if (jtail_read(cli_sp.fd[SD_JOURNAL], &tp->tail, &log,
	    TAIL_BYTES) == 0)
		top_fail(tp, TF_JOURNAL, NULL);
	else {
		err = errno;
		seg = jtail_unread(&tp->tail);
		errno = err;
		top_fail(tp, TF_JOURNAL, "read: %s/journal%s: %m",
		    cli_sp.shown, seg);
	}
	for (i = 0; i < log.n; i++) {
		const struct jevent *e = &log.ev[i];

		if (strcmp(e->subject, "task") != 0 ||
		    strcmp(e->event, "final") != 0)
			continue;
		tp->finished[tp->nfin++ % 64] = e->t;
		tp->fin_total++;
		if (!jev_get(e, "state", state, sizeof state) ||
		    strcmp(state, "failed") != 0)
			continue;
		if (tp->nfail == FAILURES_KEPT) {
			tp->first = (tp->first + 1) % FAILURES_KEPT;
			tp->nfail--;
		}
		f = &tp->fail[(tp->first + tp->nfail++) % FAILURES_KEPT];
		memset(f, 0, sizeof *f);
		(void)ids_parse(e->id, &f->id);
		f->t = e->t;
		if (!jev_get(e, "reason", f->reason, sizeof f->reason))
			snprintf(f->reason, sizeof f->reason, "-");
		if (jev_get(e, "exit", v, sizeof v))
			snprintf(f->how, sizeof f->how, "exit %s", v);
		else if (jev_num(e, "signal", &d))
			snprintf(f->how, sizeof f->how, "signal %.0f", d);
		(void)jev_get(e, "msg", f->msg, sizeof f->msg);
	}
	jlog_free(&log);
}

/* Names of failed tasks, from their spec (once; a failure is final). */
static void
failure_names(struct top *tp)
{
	struct tview v;
	size_t i;

	for (i = 0; i < tp->nfail; i++) {
		struct failure *f = &tp->fail[(tp->first + i) % FAILURES_KEPT];

		if (f->name[0] || f->id == 0)
			continue;
		query_task(f->id, &v);
		snprintf(f->name, sizeof f->name, "%s", v.name ? v.name : "-");
		query_free(&v);
	}
}

/* ---- one frame ---- */

static enum sortkey g_sort;
static int g_reverse;
static double g_now;

static int
run_order(const void *a, const void *b)
{
	const struct run *x = a, *y = b;
	int c = 0;

	switch (g_sort) {
	case SK_ELAPSED:	/* longest running first */
		c = x->since < y->since ? -1 : x->since > y->since;
		break;
	case SK_MEMORY:		/* in use, or asked for when not sampled */
		c = (x->used ? x->used : x->memory) > (y->used ? y->used :
		    y->memory) ? -1 : (x->used ? x->used : x->memory) <
		    (y->used ? y->used : y->memory);
		break;
	case SK_CORES:
		c = x->cores > y->cores ? -1 : x->cores < y->cores;
		break;
	case SK_ID:
		break;
	case SK_WORKER:
		c = strcmp(x->wid, y->wid);
		break;
	case SK_NAME:
		c = strcmp(x->name ? x->name : "", y->name ? y->name : "");
		break;
	default:
		break;
	}
	if (c == 0)
		c = x->id < y->id ? -1 : x->id > y->id;
	return g_reverse ? -c : c;
}

static int
name_matches(const struct top *tp, const char *name)
{
	return tp->filter[0] == 0 || (name && strcasestr(name, tp->filter));
}

static char *
ago(double secs, char *out, size_t size)
{
	uint64_t s = secs > 0 ? (uint64_t)secs : 0;

	if (secs <= -1)		/* a clock ahead of ours */
		snprintf(out, size, "-");
	else if (secs < 0)	/* written after this frame began */
		snprintf(out, size, "0.0s");
	else if (secs < 60)
		snprintf(out, size, "%.1fs", secs);
	else
		units_format_duration(s, out, size);
	return out;
}

static char *
summary_get(const struct buf *b, const char *key, char *out, size_t size)
{
	char *v = b->len ? rec_lookup(b->p, b->len, key) : NULL;

	snprintf(out, size, "%s", v ? v : "-");
	free(v);
	return out;
}

/*
 * s in a column of width bytes (out has width + 1): one too long keeps
 * its start and its last tail bytes around "..".  A worker ID keeps the
 * kind and job, and the random suffix that tells the workers of a job
 * apart; a task name (map-0001 ... map-9999, sim-seed-17) keeps the end
 * that tells tasks of one run apart.
 */
#define WID_COL		26
#define WID_TAIL	9
#define NAME_COL	24	/* running tasks */
#define FNAME_COL	20	/* failures */
#define NAME_TAIL	8
static const char *
mid_cut(const char *s, size_t width, size_t tail, char *out)
{
	size_t n = strlen(s);

	if (n <= width)
		return s;
	snprintf(out, width + 1, "%.*s..%s", (int)(width - 2 - tail), s,
	    s + n - tail);
	return out;
}

/* Lines of one frame, each without a newline, into lines[]. */
struct frame {
	char	**line;
	size_t	n;
};

static void
fr_add(struct frame *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
fr_add(struct frame *f, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		msg_fatal("out of memory");
	va_end(ap);
	f->line = xgrowarray(f->line, f->n, sizeof *f->line);
	f->line[f->n++] = s;
}

static void
fr_free(struct frame *f)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		free(f->line[i]);
	free(f->line);
	f->line = NULL;
	f->n = 0;
}

static void
build_frame(struct top *tp, struct frame *f)
{
	struct buf sum = BUF_INIT;
	struct owner_info o;
	uint64_t beat, cores = 0, cused = 0, mem = 0, mused = 0;
	uint32_t gpus = 0, gused = 0;
	char a[96], b1[32], b2[32], b3[32], clock[16], rate[32], note[160];
	char c[7][32];	/* one buffer per count: all are arguments of one call */
	size_t i, shown, nmatch, budget;
	double stime = 0;
	time_t tt = (time_t)g_now;
	struct tm tm;
	int k, rc;

	(void)localtime_r(&tt, &tm);
	strftime(clock, sizeof clock, "%H:%M:%S", &tm);
	/* none before spoold's first: its counts are "-" */
	if (cli_read_summary(&sum) == 0 || errno == ENOENT)
		top_fail(tp, TF_SUMMARY, NULL);
	else
		top_fail(tp, TF_SUMMARY, "read: %s/state/summary: %m",
		    cli_sp.shown);
	if (tp->why[TF_SUMMARY][0])
		buf_reset(&sum);
	summary_get(&sum, "time", a, sizeof a);
	stime = atof(a);
	if ((rc = lease_holder(&cli_sp, &o, &beat)) < 0)
		top_fail(tp, TF_LEASE, "read: %s/lock/spoold/owner: %m",
		    cli_sp.shown);
	else
		top_fail(tp, TF_LEASE, NULL);
	if (rc > 0)
		fr_add(f, "ckspool top  %s  spoold pid %ld on %s, summary %s "
		    "old%s  %s", cli_sp.shown, o.pid, o.host, stime > 0 ?
		    ago(g_now - stime, b1, sizeof b1) : "-",
		    query_summary_note(sum.p, sum.len, &o, note, sizeof note),
		    clock);
	else
		fr_add(f, "ckspool top  %s  spoold: %s  %s", cli_sp.shown,
		    rc < 0 ? "unknown" : "not running", clock);
	fr_add(f, "tasks: waiting %s  queued %s  unfit %s  placed %s  "
	    "running %zu  done %s  failed %s  cancelled %s  rejected %s",
	    summary_get(&sum, "waiting", c[0], sizeof c[0]),
	    summary_get(&sum, "queued", c[1], sizeof c[1]),
	    summary_get(&sum, "unfit", c[6], sizeof c[6]),
	    summary_get(&sum, "placed", c[2], sizeof c[2]), tp->nruns,
	    summary_get(&sum, "done", c[3], sizeof c[3]),
	    summary_get(&sum, "failed", c[4], sizeof c[4]),
	    summary_get(&sum, "cancelled", c[5], sizeof c[5]),
	    summary_get(&sum, "rejected", a, sizeof a));
	for (i = 0; i < tp->nworkers; i++) {
		const struct wrow *w = &tp->workers[i];

		if (strcmp(w->state, "up") && strcmp(w->state, "draining") &&
		    strcmp(w->state, "gpus-held") &&
		    strcmp(w->state, "no-status"))
			continue;
		cores += w->info.cores;
		cused += w->st.cores_used;
		mem += w->info.memory;
		mused += w->st.memory_used;
		gpus += w->info.gpus;
		gused += w->st.gpus_used;
	}
	fr_add(f, "throughput: %s tasks/s over the last minute  workers: %s  "
	    "cores %" PRIu64 "/%" PRIu64 "  memory %s/%s  gpus %u/%u",
	    summary_get(&sum, "rate", rate, sizeof rate),
	    query_summary_workers(sum.p, sum.len, a, sizeof a), cused, cores,
	    units_format_human(mused, b1, sizeof b1),
	    units_format_human(mem, b2, sizeof b2), gused, gpus);
	buf_free(&sum);
	for (k = 0; k < TF_N; k++)
		if (tp->why[k][0])
			fr_add(f, "warning: %s", tp->why[k]);

	/* workers */
	fr_add(f, "%s", "");
	fr_add(f, "%-26s %-12s %-9s %7s %13s %5s %4s %6s", "WORKER", "HOST",
	    "STATE", "CORES", "MEMORY", "GPUS", "RUN", "BEAT");
	budget = tp->once ? SIZE_MAX : tp->rows > 30 ? 8 : 4;
	for (i = 0, shown = 0; i < tp->nworkers; i++) {
		const struct wrow *w = &tp->workers[i];
		char c1[24], m1[32], g1[16], wc[WID_COL + 1];

		if (shown == budget) {
			fr_add(f, "  ... %zu more workers", tp->nworkers - i);
			break;
		}
		snprintf(c1, sizeof c1, "%u/%u", w->st.cores_used, w->info.cores);
		snprintf(m1, sizeof m1, "%s/%s", units_format_human(
		    w->st.memory_used, b1, sizeof b1), units_format_human(
		    w->info.memory, b2, sizeof b2));
		snprintf(g1, sizeof g1, "%u/%u", w->st.gpus_used, w->info.gpus);
		fr_add(f, "%-26s %-12.12s %-9s %7s %13s %5s %4u %6s",
		    mid_cut(w->wid, WID_COL, WID_TAIL, wc),
		    w->info.host, w->state, c1, m1, g1, w->running,
		    w->st.time > 0 ? ago(g_now - w->st.time, b3, sizeof b3) :
		    "-");
		shown++;
	}
	if (tp->nworkers == 0)
		fr_add(f, "  no workers");

	/* running tasks */
	g_sort = tp->sort;
	g_reverse = tp->reverse;
	if (tp->nruns > 1)
		qsort(tp->runs, tp->nruns, sizeof *tp->runs, run_order);
	for (i = 0, nmatch = 0; i < tp->nruns; i++)
		nmatch += name_matches(tp, tp->runs[i].name);
	fr_add(f, "%s", "");
	fr_add(f, "RUNNING %zu  (sort: %s%s)%s%s%s", nmatch, sort_name[tp->sort],
	    tp->reverse ? ", reversed" : "", tp->filter[0] ? "  filter: \"" :
	    "", tp->filter, tp->filter[0] ? "\"" : "");
	fr_add(f, "%-10s %-24s %-26s %3s %5s %8s %8s %9s", "ID", "NAME",
	    "WORKER", "ATT", "CORES", "MEM", "MEM-REQ", "ELAPSED");
	/* the live view leaves room for the failures and the key line */
	budget = tp->once ? SIZE_MAX : tp->rows > (int)f->n + 9 ?
	    (size_t)tp->rows - f->n - 9 : 1;
	for (i = 0, shown = 0; i < tp->nruns; i++) {
		const struct run *r = &tp->runs[i];
		char wc[WID_COL + 1], nc[NAME_COL + 1];

		if (!name_matches(tp, r->name))
			continue;
		if (shown == budget) {
			fr_add(f, "  ... %zu more", nmatch - shown);
			break;
		}
		fr_add(f, "%-10" PRIu64 " %-24s %-26s %3u %5u %8s %8s %9s",
		    r->id, r->name ? mid_cut(r->name, NAME_COL, NAME_TAIL, nc) :
		    "-", mid_cut(r->wid, WID_COL, WID_TAIL, wc),
		    r->att, r->cores,
		    r->used ? units_format_human(r->used, b3, sizeof b3) : "-",
		    r->memory ? units_format_human(r->memory, b1, sizeof b1) :
		    "-", r->since > 0 ? ago(g_now - r->since, b2, sizeof b2) :
		    "-");
		shown++;
	}

	/* recent failures, newest first */
	fr_add(f, "%s", "");
	fr_add(f, "RECENT FAILURES");
	fr_add(f, "%-10s %-20s %8s %-10s %-9s %s", "ID", "NAME", "AGO",
	    "REASON", "STATUS", "MESSAGE");
	budget = tp->once ? FAILURES_KEPT : tp->rows > (int)f->n + 2 ?
	    (size_t)tp->rows - f->n - 2 : 0;
	for (i = 0, shown = 0; i < tp->nfail && shown < budget; i++) {
		const struct failure *fl = &tp->fail[(tp->first + tp->nfail -
		    1 - i) % FAILURES_KEPT];
		char nc[FNAME_COL + 1];

		if (!name_matches(tp, fl->name))
			continue;
		fr_add(f, "%-10" PRIu64 " %-20s %8s %-10s %-9s %s", fl->id,
		    mid_cut(fl->name, FNAME_COL, NAME_TAIL, nc),
		    ago(g_now - fl->t, b1, sizeof b1), fl->reason,
		    fl->how[0] ? fl->how : "-", fl->msg);
		shown++;
	}
	if (tp->nfail == 0)
		fr_add(f, "  none in the journal's recent history");
}

/* ---- the terminal ---- */

static struct termios saved_tio;
static int tio_saved, screen_on;
static volatile sig_atomic_t got_stop, got_winch;

static void
on_signal(int sig)
{
	if (sig == SIGWINCH)
		got_winch = 1;
	else
		got_stop = 1;
}

static void
term_restore(void)
{
	static const char out[] = "\033[?25h\033[?1049l";

	if (screen_on) {
		(void)!write(STDOUT_FILENO, out, sizeof out - 1);
		screen_on = 0;
	}
	if (tio_saved) {
		(void)tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tio);
		tio_saved = 0;
	}
}

static void
term_setup(struct top *tp)
{
	struct sigaction sa;
	struct termios raw;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	(void)sigaction(SIGINT, &sa, NULL);
	(void)sigaction(SIGTERM, &sa, NULL);
	(void)sigaction(SIGHUP, &sa, NULL);
	(void)sigaction(SIGWINCH, &sa, NULL);
	if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved_tio) == 0) {
		raw = saved_tio;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		if (tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0)
			tio_saved = 1;
	}
	atexit(term_restore);
	fputs("\033[?1049h\033[?25l", stdout);
	screen_on = 1;
	(void)tp;
}

static void
term_size(struct top *tp)
{
	struct winsize ws;

	tp->rows = 24;
	tp->cols = 80;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0) {
		tp->rows = ws.ws_row;
		tp->cols = ws.ws_col;
	}
}

static void
draw(struct top *tp, const struct frame *f)
{
	size_t i, n = f->n;
	char keys[160];

	if (tp->once) {
		for (i = 0; i < n; i++)
			printf("%s\n", f->line[i]);
		return;
	}
	fputs("\033[H", stdout);
	if (n > (size_t)tp->rows - 1)
		n = (size_t)tp->rows - 1;
	for (i = 0; i < n; i++)
		printf("%.*s\033[K\r\n", tp->cols, f->line[i]);
	fputs("\033[J", stdout);
	if (tp->in_filter)
		snprintf(keys, sizeof keys, "filter by name: %s_  (Enter "
		    "apply, Esc cancel)", tp->editing);
	else
		snprintf(keys, sizeof keys, "q quit  s sort (%s)  r reverse  "
		    "/ filter  c clear filter", sort_name[tp->sort]);
	printf("\033[%d;1H\033[7m%-*.*s\033[0m", tp->rows, tp->cols, tp->cols,
	    keys);
}

/* A key: 1 to quit. */
static int
on_key(struct top *tp, int c)
{
	size_t n;

	if (tp->in_filter) {
		n = strlen(tp->editing);
		if (c == '\r' || c == '\n') {
			snprintf(tp->filter, sizeof tp->filter, "%s",
			    tp->editing);
			tp->in_filter = 0;
		} else if (c == 27) {
			tp->in_filter = 0;
		} else if ((c == 127 || c == 8) && n > 0) {
			tp->editing[n - 1] = 0;
		} else if (c >= 0x20 && c < 0x7f && n + 1 < sizeof tp->editing) {
			tp->editing[n] = (char)c;
			tp->editing[n + 1] = 0;
		}
		return 0;
	}
	switch (c) {
	case 'q':
	case 'Q':
		return 1;
	case 's':
		tp->sort = (tp->sort + 1) % SK_N;
		break;
	case 'r':
		tp->reverse = !tp->reverse;
		break;
	case '/':
		tp->in_filter = 1;
		snprintf(tp->editing, sizeof tp->editing, "%s", tp->filter);
		break;
	case 'c':
		tp->filter[0] = 0;
		break;
	default:
		break;
	}
	return 0;
}

static void
top_free(struct top *tp)
{
	size_t i;

	for (i = 0; i < tp->nruns; i++)
		free(tp->runs[i].name);
	for (i = 0; i < tp->nold; i++)
		free(tp->old[i].name);
	free(tp->runs);
	free(tp->old);
	free(tp->workers);
	jtail_free(&tp->tail);
}

int
cmd_top(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "once", no_argument, NULL, '1' },
		{ "sort", required_argument, NULL, 's' },
		{ "filter", required_argument, NULL, 'f' },
		{ "interval", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct top tp;
	struct frame fr = { NULL, 0 };
	struct pollfd pfd;
	uint64_t interval = 1000, next = 0;
	const char *why;
	unsigned char key;
	int c, k, quit = 0;

	memset(&tp, 0, sizeof tp);
	while ((c = getopt_long(argc, argv, "+1s:f:i:h", opts, NULL)) != -1) {
		switch (c) {
		case '1':
			tp.once = 1;
			break;
		case 's':
			for (k = 0; k < SK_N && strcmp(sort_name[k], optarg); k++)
				;
			if (k == SK_N)
				msg_fatal_status(EXIT_USAGE, "--sort %s: one of "
				    "elapsed memory cores id worker name",
				    journal_q(optarg));
			tp.sort = (enum sortkey)k;
			break;
		case 'f':
			snprintf(tp.filter, sizeof tp.filter, "%s", optarg);
			break;
		case 'i':
			if (units_parse_ms(optarg, &interval, &why) < 0 ||
			    interval < 100)
				msg_fatal_status(EXIT_USAGE, "--interval %s: %s",
				    journal_q(optarg),
				    interval < 100 ? "at least 100ms" : why);
			break;
		case 'h':
			printf("usage: spool top [--once] [--sort KEY] [--filter "
			    "TEXT] [--interval D]\n  keys: q quit, s sort, "
			    "r reverse, / filter, c clear filter\n");
			return 0;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind != argc)
		msg_fatal_status(EXIT_USAGE, "usage: spool top [--once] "
		    "[--sort KEY] [--filter TEXT] [--interval D]");
	cli_open();
	if (!isatty(STDOUT_FILENO))
		tp.once = 1;
	if (!tp.once)
		term_setup(&tp);
	while (!quit && !got_stop) {
		if (tp.once || now_ms() >= next || got_winch) {
			got_winch = 0;
			g_now = now_unix();
			read_workers(&tp);
			read_journal(&tp);
			failure_names(&tp);
			term_size(&tp);
			build_frame(&tp, &fr);
			next = now_ms() + interval;
		}
		draw(&tp, &fr);
		if (fflush(stdout) == EOF)
			msg_fatal("write: stdout: %m");
		fr_free(&fr);
		if (tp.once)
			break;
		/* rebuilt each round: cheap, and keys show at once */
		pfd.fd = STDIN_FILENO;
		pfd.events = POLLIN;
		if (poll(&pfd, tio_saved ? 1 : 0, (int)(next > now_ms() ?
		    next - now_ms() : 0)) > 0) {
			while (read(STDIN_FILENO, &key, 1) == 1)
				if (on_key(&tp, key)) {
					quit = 1;
					break;
				}
			g_now = now_unix();
			build_frame(&tp, &fr);	/* show the change now */
			continue;
		}
		next = 0;
	}
	fr_free(&fr);	/* the frame built after the key that quits */
	term_restore();
	top_free(&tp);
	return 0;
}
