/*
 * progress.c - the progress bar of "spool wait" and "spool gather".
 *
 * Drawn on standard error, only when it is a terminal, at most every
 * PROGRESS_MS, on one line that is rewritten ("\r", erase to end of
 * line) and erased before anything else is written to the terminal
 * and at the end, so that it never mixes with output or messages:
 *
 *   [=========>            ] 120/300 done 117 failed 3 running 8
 *   queued 172  12.3/s  ETA 15s
 *
 * done and failed count the awaited tasks that finished; running are
 * the awaited tasks in some worker's running/ directory (listed at most
 * every RUNNING_MS, and only while the bar is shown: a terminal watcher
 * pays one listing per worker a second, a script nothing); queued is
 * the rest (waiting, queued or placed).  The rate is tasks finished per
 * second since the wait began, and the ETA what is left at that rate.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"
#include "fsop.h"
#include "hostinfo.h"
#include "progress.h"
#include "units.h"

#define PROGRESS_MS	200
#define RUNNING_MS	1000

void
progress_init(struct progress *p, size_t total,
    int (*pending)(void *, uint64_t), void *arg)
{
	memset(p, 0, sizeof *p);
	p->on = total > 0 && isatty(STDERR_FILENO);
	p->total = total;
	p->pending = pending;
	p->arg = arg;
	p->start_ms = now_ms();
}

struct rctx {
	struct progress *p;
	const char *wid;
};

static int
running_one(void *arg, const char *name, unsigned char type)
{
	struct rctx *c = arg;
	uint64_t id;
	uint32_t att;

	(void)type;
	if (wdir_aname_parse(name, &id, &att) == 0 && c->p->pending(c->p->arg,
	    id))
		c->p->running++;
	return 0;
}

static int
worker_one(void *arg, const char *wid, unsigned char type)
{
	char path[WDIR_ID_MAX + 16];
	struct rctx c = { arg, wid };

	(void)type;
	if (wid[0] == '.')
		return 0;
	snprintf(path, sizeof path, "%s/running", wid);
	(void)fsop_list(cli_sp.fd[SD_WORKERS], path, running_one, &c);
	return 0;
}

void
progress_clear(struct progress *p)
{
	if (p->on && p->drawn) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		p->drawn = 0;
	}
}

void
progress_draw(struct progress *p, size_t done, size_t failed)
{
	uint64_t now = now_ms();
	size_t fin = done + failed, left = p->total - fin, queued, width, n, i;
	double secs = (double)(now - p->start_ms) / 1000.0, rate;
	char line[256], eta[32];
	struct winsize ws;
	int len;

	if (!p->on || (p->drawn && now - p->last_ms < PROGRESS_MS))
		return;
	p->last_ms = now;
	if (p->running_ms == 0 || now - p->running_ms >= RUNNING_MS) {
		p->running = 0;
		(void)fsop_list(cli_sp.fd[SD_WORKERS], ".", worker_one, p);
		p->running_ms = now;
	}
	if (p->running > left)
		p->running = left;
	queued = left - p->running;
	rate = secs > 0 ? (double)fin / secs : 0;
	if (rate > 0 && left > 0 && (double)left / rate < 60)
		snprintf(eta, sizeof eta, "%.0fs", (double)left / rate + 0.5);
	else if (rate > 0 && left > 0)
		units_format_duration((uint64_t)((double)left / rate + 0.5), eta,
		    sizeof eta);
	else
		snprintf(eta, sizeof eta, "-");
	len = snprintf(line, sizeof line, " %zu/%zu done %zu failed %zu "
	    "running %zu queued %zu  %.1f/s  ETA %s", fin, p->total, done,
	    failed, p->running, queued, rate, eta);
	width = 80;
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		width = ws.ws_col;
	fputs("\r[", stderr);
	/* the bar takes what the text leaves, 10 to 40 columns */
	n = width > (size_t)len + 13 ? width - (size_t)len - 3 : 10;
	if (n > 40)
		n = 40;
	for (i = 0; i < n; i++)
		fputc(i < n * fin / p->total ? '=' : i == n * fin / p->total ?
		    '>' : ' ', stderr);
	fprintf(stderr, "]%.*s\033[K", (int)(width > n + 3 ? width - n - 3 :
	    0), line);
	fflush(stderr);
	p->drawn = 1;
}
