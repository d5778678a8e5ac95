/*
 * report.c - "spool report": a performance report of the spool's
 * journal as one self-contained HTML file.
 *
 *	spool report [-o FILE.html] [--title TEXT]
 *
 * The page is HTML with inline CSS and inline SVG: no script, no
 * external asset, readable in any browser and mailable as one file.
 * Sections (each with an id, which the tests check): summary (counts
 * matching the journal), task-stream (one row per worker slot, one bar
 * per attempt coloured by outcome), queue (queued, waiting and running
 * over time), hist-runtime and hist-memory (histograms with
 * logarithmic bins), slowest and failed (tables), workers
 * (utilisation).
 *
 * Large journals are aggregated, not drawn one by one, so the page
 * stays small and fast to open: above STREAM_BARS_MAX attempts the task
 * stream draws, per row and per time column, one cell whose colour is
 * the outcome that used most of it and whose opacity is how busy the
 * row was; above STREAM_ROWS_MAX slots the rows are the workers; the
 * curves are time-weighted means over H_BUCKETS intervals; the tables
 * are cut at a fixed length and say how many were left out.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "history.h"
#include "hostinfo.h"
#include "msg.h"
#include "units.h"
#include "version.h"

#define STREAM_BARS_MAX	3000	/* attempts drawn one by one */
#define STREAM_ROWS_MAX	240	/* slot rows; above: one row per worker */
#define STREAM_COLS	500	/* time columns when aggregated */
#define SLOWEST_MAX	20
#define FAILED_MAX	50
#define WORKERS_MAX	200
#define HIST_BINS_MAX	40

/* plot geometry (SVG user units) */
#define W		1000
#define LEFT		170
#define RIGHT		20
#define PW		(W - LEFT - RIGHT)

static const char *const outcome_color[HO_N] = {
	"#2ca02c", "#d62728", "#9a9a9a", "#ff7f0e", "#1f77b4",
};

static void
esc(struct buf *b, const char *s)
{
	for (; s && *s; s++)
		switch (*s) {
		case '&': buf_puts(b, "&amp;"); break;
		case '<': buf_puts(b, "&lt;"); break;
		case '>': buf_puts(b, "&gt;"); break;
		case '"': buf_puts(b, "&quot;"); break;
		case '\'': buf_puts(b, "&#39;"); break;
		default:
			if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t')
				buf_putc(b, '?');
			else
				buf_putc(b, *s);
		}
}

static char *
fmt_dur(double s, char *out, size_t size)
{
	if (s < 0)
		snprintf(out, size, "-");
	else if (s < 0.001)
		snprintf(out, size, "%.0f\xc2\xb5s", s * 1e6);
	else if (s < 1)
		snprintf(out, size, "%.0fms", s * 1e3);
	else if (s < 60)
		snprintf(out, size, "%.2fs", s);
	else if (s < 3600)
		snprintf(out, size, "%dm%02ds", (int)s / 60, (int)s % 60);
	else if (s < 86400 * 3)
		snprintf(out, size, "%dh%02dm", (int)s / 3600, (int)s / 60 % 60);
	else
		snprintf(out, size, "%dd%02dh", (int)(s / 86400),
		    (int)(s / 3600) % 24);
	return out;
}

static char *
fmt_time(double t, char *out, size_t size)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (localtime_r(&tt, &tm) == NULL ||
	    strftime(out, size, "%Y-%m-%d %H:%M:%S %Z", &tm) == 0)
		snprintf(out, size, "%.0f", t);
	return out;
}

/* A round step (1, 2, 5 times a power of ten) near span/n. */
static double
nice_step(double span, int n)
{
	double raw = span / n, p, f;

	if (raw <= 0)
		return 1;
	p = pow(10, floor(log10(raw)));
	f = raw / p;
	return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

/* A round step in seconds for a time axis. */
static double
time_step(double span)
{
	static const double steps[] = { 0.001, 0.002, 0.005, 0.01, 0.02,
	    0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900,
	    1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800 };
	size_t i;

	for (i = 0; i < sizeof steps / sizeof steps[0]; i++)
		if (span / steps[i] <= 10)
			return steps[i];
	return nice_step(span, 8);
}

static void
time_axis(struct buf *b, double span, double y, double height)
{
	double step = time_step(span), x;
	char lab[32];
	int i;

	buf_printf(b, "<g class=\"axis\"><line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" "
	    "y2=\"%.1f\"/>", LEFT, y, LEFT + PW, y);
	for (i = 0; i * step <= span * 1.0001 && i < 40; i++) {
		x = LEFT + (span > 0 ? i * step / span * PW : 0);
		buf_printf(b, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" "
		    "x2=\"%.1f\" y2=\"%.1f\"/><text x=\"%.1f\" y=\"%.1f\" "
		    "text-anchor=\"middle\">%s</text>", x, y - height, x, y, x,
		    y + 14, i ? fmt_dur(i * step, lab, sizeof lab) : "0");
	}
	buf_puts(b, "</g>");
}

/* ---- summary ---- */

static void
kv_row(struct buf *b, const char *key, const char *id, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
kv_row(struct buf *b, const char *key, const char *id, const char *fmt, ...)
{
	char v[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(v, sizeof v, fmt, ap);
	va_end(ap);
	buf_printf(b, "<tr><th>%s</th><td", key);
	if (id)
		buf_printf(b, " id=\"%s\"", id);
	buf_puts(b, ">");
	esc(b, v);
	buf_puts(b, "</td></tr>\n");
}

static void
summary(struct buf *b, const struct history *h, const struct jlog *log)
{
	char t0[64], t1[64], d[32];
	double span = h->t1 - h->t0;
	uint64_t fin = h->count[RS_DONE] + h->count[RS_FAILED] +
	    h->count[RS_CANCELLED] + h->count[RS_REJECTED];

	buf_puts(b, "<section id=\"summary\"><h2>Summary</h2>\n"
	    "<table class=\"kv\">\n");
	kv_row(b, "from", NULL, "%s", fmt_time(h->t0, t0, sizeof t0));
	kv_row(b, "to", NULL, "%s (%s)", fmt_time(h->t1, t1, sizeof t1),
	    fmt_dur(span, d, sizeof d));
	kv_row(b, "tasks in the journal", "n-tasks", "%zu", h->ntasks);
	kv_row(b, "done", "n-done", "%" PRIu64, h->count[RS_DONE]);
	kv_row(b, "failed", "n-failed", "%" PRIu64, h->count[RS_FAILED]);
	kv_row(b, "cancelled", "n-cancelled", "%" PRIu64,
	    h->count[RS_CANCELLED]);
	kv_row(b, "rejected", "n-rejected", "%" PRIu64 " (and %" PRIu64
	    " refused files)", h->count[RS_REJECTED], h->rejected_files);
	kv_row(b, "not finished", "n-open", "%" PRIu64,
	    (uint64_t)h->ntasks - fin);
	kv_row(b, "attempts", "n-attempts", "%zu", h->natt);
	kv_row(b, "retried after a failure", "n-retried", "%" PRIu64,
	    h->retried);
	kv_row(b, "requeued (worker lost, handed back)", "n-requeued",
	    "%" PRIu64, h->requeued);
	kv_row(b, "workers", "n-workers", "%zu", h->nworkers);
	kv_row(b, "throughput", NULL, "%.2f tasks/s (finished / span)",
	    span > 0 ? (double)fin / span : 0.0);
	kv_row(b, "peak queued / running", NULL, "%.0f / %.0f",
	    h->peak_queued, h->peak_running);
	kv_row(b, "journal", "journal-info", "%zu events in %zu segments "
	    "(%.1f MiB); %zu torn and %zu malformed lines skipped", log->n,
	    log->segments, (double)log->bytes / 1048576.0, log->torn,
	    log->bad);
	buf_puts(b, "</table></section>\n");
}

/* ---- task stream ---- */

static void
stream_bars(struct buf *b, const struct history *h, double rowh, double top)
{
	const struct h_attempt *a;
	const struct h_task *t;
	double span = h->t1 - h->t0, x, w;
	char d[32];
	size_t i;

	for (i = 0; i < h->natt; i++) {
		a = &h->att[i];
		if (a->worker < 0)
			continue;
		x = LEFT + (a->start - h->t0) / span * PW;
		w = (a->end - a->start) / span * PW;
		if (w < 0.5)
			w = 0.5;
		t = history_task(h, a->id);
		buf_printf(b, "<rect class=\"bar o-%s\" x=\"%.2f\" y=\"%.2f\" "
		    "width=\"%.2f\" height=\"%.2f\"><title>task %" PRIu64,
		    h_outcome_name[a->outcome], x, top + a->row * rowh, w,
		    rowh > 3 ? rowh - 1 : rowh, a->id);
		if (t && t->name) {
			buf_puts(b, " (");
			esc(b, t->name);
			buf_puts(b, ")");
		}
		buf_printf(b, " attempt %u on ", a->att);
		esc(b, h->workers[a->worker].wid);
		buf_printf(b, ": %s, %s</title></rect>\n",
		    fmt_dur(a->end - a->start, d, sizeof d),
		    h_outcome_name[a->outcome]);
	}
}

/* Aggregated: busy time per (row, column, outcome). */
static void
stream_cells(struct buf *b, const struct history *h, int per_worker,
    size_t nrows, double rowh, double top)
{
	double span = h->t1 - h->t0, cw = span / STREAM_COLS, cap, tot, lo,
	    hi, *busy;
	size_t i, r, c, c0, c1, k, best, run;
	const struct h_attempt *a;
	int q, prevq;

	busy = xcalloc(nrows * STREAM_COLS * HO_N, sizeof *busy);
	for (i = 0; i < h->natt; i++) {
		a = &h->att[i];
		if (a->worker < 0)
			continue;
		r = per_worker ? (size_t)a->worker : a->row;
		c0 = (size_t)((a->start - h->t0) / cw);
		c1 = (size_t)((a->end - h->t0) / cw);
		if (c0 >= STREAM_COLS)
			c0 = STREAM_COLS - 1;
		if (c1 >= STREAM_COLS)
			c1 = STREAM_COLS - 1;
		for (c = c0; c <= c1; c++) {
			lo = h->t0 + c * cw;
			hi = lo + cw;
			lo = a->start > lo ? a->start : lo;
			hi = a->end < hi ? a->end : hi;
			busy[(r * STREAM_COLS + c) * HO_N + a->outcome] +=
			    hi > lo ? hi - lo : 0;
		}
	}
	for (r = 0; r < nrows; r++) {
		cap = cw * (per_worker ? (h->workers[r].rows ?
		    h->workers[r].rows : 1) : 1);
		prevq = 0;
		best = 0;
		run = 0;
		for (c = 0; c <= STREAM_COLS; c++) {
			size_t bo = 0;

			q = 0;
			if (c < STREAM_COLS) {
				double *v = &busy[(r * STREAM_COLS + c) * HO_N];

				for (tot = 0, k = 0; k < HO_N; k++) {
					tot += v[k];
					if (v[k] > v[bo])
						bo = k;
				}
				/* failures show even when a minority */
				if (v[HO_FAILED] > 0.25 * tot)
					bo = HO_FAILED;
				q = tot <= 0.02 * cap ? 0 :
				    (int)ceil(tot / cap * 4 - 1e-9);
				if (q > 4)
					q = 4;
			}
			if (c > 0 && (q != prevq || bo != best) && prevq > 0)
				buf_printf(b, "<rect class=\"cell o-%s\" "
				    "x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
				    "height=\"%.2f\" fill-opacity=\"%.2f\"/>\n",
				    h_outcome_name[best], LEFT + (double)run *
				    PW / STREAM_COLS, top + (double)r * rowh,
				    (double)(c - run) * PW / STREAM_COLS,
				    rowh > 3 ? rowh - 1 : rowh, prevq / 4.0);
			if (c == 0 || q != prevq || bo != best) {
				run = c;
				prevq = q;
				best = bo;
			}
		}
	}
	free(busy);
}

static void
task_stream(struct buf *b, const struct history *h)
{
	int per_worker = h->rows > STREAM_ROWS_MAX;
	int bars = !per_worker && h->natt <= STREAM_BARS_MAX;
	size_t nrows = per_worker ? h->nworkers : h->rows, i;
	double rowh, top = 10, height, span = h->t1 - h->t0;
	size_t k;

	buf_printf(b, "<section id=\"stream\"><h2>Task stream</h2>\n<p>One row "
	    "per %s, one %s; time from the first event.  %s</p>\n",
	    per_worker ? "worker (its slots together)" : "worker slot",
	    bars ? "bar per task attempt (hover for details)" :
	    "cell per time interval, coloured by the outcome that used most "
	    "of it, darker when busier", bars ? "" : "The journal holds too "
	    "many attempts to draw one by one: they are aggregated.");
	rowh = nrows ? 480.0 / (double)nrows : 14;
	if (rowh > 16)
		rowh = 16;
	if (rowh < 1)
		rowh = 1;
	height = top + nrows * rowh + 30;
	buf_printf(b, "<svg id=\"task-stream\" class=\"chart\" "
	    "data-aggregated=\"%s\" data-rows=\"%zu\" data-attempts=\"%zu\" "
	    "viewBox=\"0 0 %d %.0f\" width=\"%d\" height=\"%.0f\" "
	    "xmlns=\"http://www.w3.org/2000/svg\">\n", bars ? "no" : "yes",
	    nrows, h->natt, W, height, W, height);
	/* row labels: a worker's name at its first row */
	for (i = 0; i < h->nworkers; i++) {
		const struct h_worker *w = &h->workers[i];
		double y = top + (per_worker ? (double)i : (double)w->row0) *
		    rowh;

		if (!per_worker && w->rows == 0)
			continue;
		if (rowh >= 8 || (per_worker ? 1 : w->rows) * rowh >= 8) {
			buf_printf(b, "<text class=\"rowlabel\" x=\"%d\" "
			    "y=\"%.1f\" text-anchor=\"end\">", LEFT - 6,
			    y + (rowh < 12 ? 8 : rowh - 3));
			esc(b, w->wid);
			buf_puts(b, "</text>\n");
		}
		if (i > 0)
			buf_printf(b, "<line class=\"sep\" x1=\"%d\" y1=\"%.1f\" "
			    "x2=\"%d\" y2=\"%.1f\"/>\n", LEFT - 150, y,
			    LEFT + PW, y);
	}
	if (span > 0 && nrows > 0) {
		if (bars)
			stream_bars(b, h, rowh, top);
		else
			stream_cells(b, h, per_worker, nrows, rowh, top);
	}
	time_axis(b, span, top + nrows * rowh + 2, nrows * rowh);
	buf_puts(b, "</svg>\n<p class=\"legend\">");
	for (k = 0; k < HO_N; k++)
		buf_printf(b, "<span><i style=\"background:%s\"></i>%s</span> ",
		    outcome_color[k], h_outcome_name[k]);
	buf_puts(b, "</p></section>\n");
}

/* ---- queue over time ---- */

static double curve_span;	/* the time shown by the curves */

static void
series(struct buf *b, const double *v, double ymax, double top, double ph,
    const char *cls)
{
	size_t i;

	buf_printf(b, "<polyline class=\"%s\" points=\"", cls);
	for (i = 0; i < H_BUCKETS; i++)
		buf_printf(b, "%.1f,%.1f ", LEFT + ((double)i + 0.5) * PW /
		    H_BUCKETS, top + ph - (ymax > 0 ? v[i] / ymax * ph : 0));
	buf_puts(b, "\"/>\n");
}

/* One chart of curves sharing a y axis. */
static void
curves(struct buf *b, const char *id, const double *const *v,
    const char *const *cls, int n)
{
	double ymax = 0, step, top = 10, ph = 150, y;
	size_t i;
	int k;

	for (k = 0; k < n; k++)
		for (i = 0; i < H_BUCKETS; i++)
			if (v[k][i] > ymax)
				ymax = v[k][i];
	step = nice_step(ymax > 0 ? ymax : 1, 4);
	ymax = ceil((ymax > 0 ? ymax : 1) / step) * step;
	buf_printf(b, "<svg id=\"%s\" class=\"chart\" viewBox=\"0 0 %d "
	    "%.0f\" width=\"%d\" height=\"%.0f\" xmlns=\"http://www.w3.org/"
	    "2000/svg\">\n<g class=\"axis\">", id, W, top + ph + 30, W,
	    top + ph + 30);
	for (k = 0; k * step <= ymax * 1.0001; k++) {
		y = top + ph - k * step / ymax * ph;
		buf_printf(b, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" "
		    "x2=\"%d\" y2=\"%.1f\"/><text x=\"%d\" y=\"%.1f\" "
		    "text-anchor=\"end\">%g</text>", LEFT, y, LEFT + PW, y,
		    LEFT - 6, y + 4, k * step);
	}
	buf_puts(b, "</g>\n");
	for (k = 0; k < n && curve_span > 0; k++)
		series(b, v[k], ymax, top, ph, cls[k]);
	time_axis(b, curve_span, top + ph, ph);
	buf_puts(b, "</svg>\n");
}

static void
queue_chart(struct buf *b, const struct history *h)
{
	const double *q[2] = { h->waiting, h->queued }, *r[1] = { h->running };
	const char *qc[2] = { "s-waiting", "s-queued" }, *rc[1] = {
	    "s-running" };

	curve_span = h->t1 - h->t0;
	buf_printf(b, "<section id=\"queue-section\"><h2>Queue and running "
	    "over time</h2>\n<p>Tasks queued (ready, waiting for a worker) "
	    "and waiting (for dependencies), then tasks running; each point is "
	    "the mean over 1/%d of the time shown.</p>\n", H_BUCKETS);
	curves(b, "queue", q, qc, 2);
	buf_puts(b, "<p class=\"legend\"><span><i class=\"s-queued\"></i>"
	    "queued</span> <span><i class=\"s-waiting\"></i>waiting</span>"
	    "</p>\n");
	curves(b, "running", r, rc, 1);
	buf_puts(b, "<p class=\"legend\"><span><i class=\"s-running\"></i>"
	    "running</span></p></section>\n");
}

/* ---- histograms ---- */

struct hist {
	double	lo;		/* lower edge of bin 0 */
	double	factor;		/* each bin's upper edge: lower * factor */
	int	nbins;
	uint64_t n[HIST_BINS_MAX];
	uint64_t total;
};

static void
hist_fill(struct hist *hs, const double *v, size_t n, double factor,
    double floor_v)
{
	double mn = 0, mx = 0;
	size_t i;
	int k;

	memset(hs, 0, sizeof *hs);
	hs->factor = factor;
	for (i = 0; i < n; i++) {
		double x = v[i] < floor_v ? floor_v : v[i];

		if (i == 0 || x < mn)
			mn = x;
		if (i == 0 || x > mx)
			mx = x;
	}
	if (n == 0)
		return;
	/* bins on powers of the factor, so edges are round numbers */
	hs->lo = pow(factor, floor(log(mn) / log(factor) + 1e-9));
	hs->nbins = (int)floor(log(mx / hs->lo) / log(factor) + 1e-9) + 1;
	if (hs->nbins > HIST_BINS_MAX) {
		hs->lo = mx / pow(factor, HIST_BINS_MAX - 1) / factor;
		hs->nbins = HIST_BINS_MAX;
	}
	for (i = 0; i < n; i++) {
		double x = v[i] < floor_v ? floor_v : v[i];

		k = (int)floor(log(x / hs->lo) / log(factor) + 1e-9);
		if (k < 0)
			k = 0;
		if (k >= hs->nbins)
			k = hs->nbins - 1;
		hs->n[k]++;
		hs->total++;
	}
}

static void
hist_svg(struct buf *b, const struct hist *hs, const char *id,
    const char *title, int bytes)
{
	double top = 10, ph = 160, pw = 440, left = 50, bw, x, hgt;
	uint64_t mx = 0;
	char lab[32];
	int k;

	for (k = 0; k < hs->nbins; k++)
		if (hs->n[k] > mx)
			mx = hs->n[k];
	buf_printf(b, "<figure><figcaption>%s (%" PRIu64 " attempts)"
	    "</figcaption><svg id=\"%s\" class=\"chart hist\" data-total=\""
	    "%" PRIu64 "\" viewBox=\"0 0 500 %.0f\" width=\"500\" "
	    "height=\"%.0f\" xmlns=\"http://www.w3.org/2000/svg\">\n", title,
	    hs->total, id, hs->total, top + ph + 40, top + ph + 40);
	if (hs->nbins == 0) {
		buf_printf(b, "<text x=\"250\" y=\"90\" text-anchor=\"middle\">"
		    "no data</text></svg></figure>\n");
		return;
	}
	bw = pw / hs->nbins;
	for (k = 0; k < hs->nbins; k++) {
		double lo = hs->lo * pow(hs->factor, k);

		hgt = mx ? (double)hs->n[k] / (double)mx * ph : 0;
		x = left + k * bw;
		buf_printf(b, "<rect class=\"hbar\" x=\"%.1f\" y=\"%.1f\" "
		    "width=\"%.1f\" height=\"%.1f\"><title>", x + 1,
		    top + ph - hgt, bw - 2 > 1 ? bw - 2 : 1, hgt);
		if (bytes) {
			buf_printf(b, "%s", units_format_human((uint64_t)lo, lab,
			    sizeof lab));
			buf_printf(b, " to %s: ", units_format_human((uint64_t)(lo
			    * hs->factor), lab, sizeof lab));
		} else {
			buf_printf(b, "%s", fmt_dur(lo, lab, sizeof lab));
			buf_printf(b, " to %s: ", fmt_dur(lo * hs->factor, lab,
			    sizeof lab));
		}
		buf_printf(b, "%" PRIu64 "</title></rect>", hs->n[k]);
		if (hs->n[k] && bw >= 14)
			buf_printf(b, "<text class=\"small\" x=\"%.1f\" y=\"%.1f\" "
			    "text-anchor=\"middle\">%" PRIu64 "</text>",
			    x + bw / 2, top + ph - hgt - 3, hs->n[k]);
		if (k % ((hs->nbins + 7) / 8) == 0) {
			if (bytes)
				units_format_human((uint64_t)lo, lab, sizeof lab);
			else
				fmt_dur(lo, lab, sizeof lab);
			buf_printf(b, "<text class=\"small\" x=\"%.1f\" "
			    "y=\"%.1f\" text-anchor=\"middle\">%s</text>", x,
			    top + ph + 14, lab);
		}
		buf_puts(b, "\n");
	}
	buf_printf(b, "<line class=\"axisline\" x1=\"%.0f\" y1=\"%.0f\" "
	    "x2=\"%.0f\" y2=\"%.0f\"/>", left, top + ph, left + pw, top + ph);
	buf_printf(b, "<text class=\"small\" x=\"%.0f\" y=\"%.0f\" "
	    "text-anchor=\"end\">%" PRIu64 "</text></svg></figure>\n",
	    left - 4, top + 8, mx);
}

static void
histograms(struct buf *b, const struct history *h)
{
	double *wall = xreallocarray(NULL, h->natt + 1, sizeof *wall);
	double *mem = xreallocarray(NULL, h->natt + 1, sizeof *mem);
	size_t i, nw = 0, nm = 0;
	struct hist hs;

	for (i = 0; i < h->natt; i++) {
		const struct h_attempt *a = &h->att[i];

		if (a->outcome == HO_DONE || a->outcome == HO_FAILED) {
			wall[nw++] = a->end - a->start;
			if (a->peak)
				mem[nm++] = (double)a->peak;
		}
	}
	buf_puts(b, "<section id=\"histograms\"><h2>Run time and peak memory"
	    "</h2>\n<p>Attempts that ran to an end (done or failed); bins grow "
	    "by a constant factor.  Peak memory is the whole task's peak where "
	    "the worker measured it, else the largest process's maximum "
	    "resident set.</p>\n<div class=\"row\">");
	hist_fill(&hs, wall, nw, 2, 0.001);
	hist_svg(b, &hs, "hist-runtime", "Run time", 0);
	hist_fill(&hs, mem, nm, 2, 4096);
	hist_svg(b, &hs, "hist-memory", "Peak memory", 1);
	buf_puts(b, "</div></section>\n");
	free(wall);
	free(mem);
}

/* ---- tables ---- */

static const struct history *sort_h;

static int
by_wall_desc(const void *a, const void *b)
{
	const struct h_attempt *x = &sort_h->att[*(const size_t *)a];
	const struct h_attempt *y = &sort_h->att[*(const size_t *)b];
	double dx = x->end - x->start, dy = y->end - y->start;

	return dx > dy ? -1 : dx < dy ? 1 : x->id < y->id ? -1 : x->id > y->id;
}

static int
by_final_desc(const void *a, const void *b)
{
	const struct h_task *x = &sort_h->tasks[*(const size_t *)a];
	const struct h_task *y = &sort_h->tasks[*(const size_t *)b];

	return x->final_t > y->final_t ? -1 : x->final_t < y->final_t ? 1 :
	    x->id < y->id ? -1 : x->id > y->id;
}

static void
name_cell(struct buf *b, const struct h_task *t)
{
	buf_puts(b, "<td>");
	esc(b, t && t->name ? t->name : "-");
	buf_puts(b, "</td>");
}

static void
slowest(struct buf *b, const struct history *h)
{
	size_t *ix = xreallocarray(NULL, h->natt + 1, sizeof *ix), n = 0, i;
	char d[32], m[32];

	for (i = 0; i < h->natt; i++)
		if (h->att[i].outcome == HO_DONE ||
		    h->att[i].outcome == HO_FAILED)
			ix[n++] = i;
	sort_h = h;
	qsort(ix, n, sizeof *ix, by_wall_desc);
	buf_puts(b, "<section id=\"slow\"><h2>Slowest tasks</h2>\n<table "
	    "id=\"slowest\"><thead><tr><th>task</th><th>name</th>"
	    "<th>attempt</th><th>worker</th><th>run time</th><th>peak memory"
	    "</th><th>outcome</th></tr></thead><tbody>\n");
	for (i = 0; i < n && i < SLOWEST_MAX; i++) {
		const struct h_attempt *a = &h->att[ix[i]];

		buf_printf(b, "<tr><td>%" PRIu64 "</td>", a->id);
		name_cell(b, history_task(h, a->id));
		buf_printf(b, "<td>%u</td><td>", a->att);
		esc(b, a->worker >= 0 ? h->workers[a->worker].wid : "-");
		buf_printf(b, "</td><td class=\"num\">%s</td><td class=\"num\">"
		    "%s</td><td class=\"o-%s\">%s</td></tr>\n",
		    fmt_dur(a->end - a->start, d, sizeof d), a->peak ?
		    units_format_human(a->peak, m, sizeof m) : "-",
		    h_outcome_name[a->outcome], h_outcome_name[a->outcome]);
	}
	buf_puts(b, "</tbody></table></section>\n");
	free(ix);
}

static void
failed(struct buf *b, const struct history *h)
{
	size_t *ix = xreallocarray(NULL, h->ntasks + 1, sizeof *ix), n = 0, i;
	uint64_t byreason[RR_NREASONS + 1] = { 0 };
	char d[32], how[32];
	int k;

	for (i = 0; i < h->ntasks; i++)
		if (h->tasks[i].final_t > 0 && h->tasks[i].state == RS_FAILED) {
			ix[n++] = i;
			k = h->tasks[i].reason;
			byreason[k >= 0 ? k : RR_NREASONS]++;
		}
	sort_h = h;
	qsort(ix, n, sizeof *ix, by_final_desc);
	buf_printf(b, "<section id=\"fail\"><h2>Failed tasks</h2>\n");
	buf_puts(b, "<table id=\"failures-by-reason\" class=\"kv\"><thead><tr>"
	    "<th>reason</th><th>tasks</th></tr></thead><tbody>\n");
	for (k = 0; k <= RR_NREASONS; k++)
		if (byreason[k])
			buf_printf(b, "<tr><th>%s</th><td class=\"num\">%" PRIu64
			    "</td></tr>\n", k < RR_NREASONS ?
			    result_reason_name[k] : "unknown", byreason[k]);
	buf_puts(b, "</tbody></table>\n");
	buf_printf(b, "<p>%s</p>\n<table id=\"failed\"><thead><tr><th>task"
	    "</th><th>name</th><th>attempt</th><th>worker</th><th>ended</th>"
	    "<th>reason</th><th>status</th><th>message</th></tr></thead>"
	    "<tbody>\n", n == 0 ? "No task failed." : n > FAILED_MAX ?
	    "The most recent failures; the others are in the journal "
	    "(spool journal | grep ' final .*state=failed')." :
	    "Every failed task, the most recent first.");
	for (i = 0; i < n && i < FAILED_MAX; i++) {
		const struct h_task *t = &h->tasks[ix[i]];

		if (t->exit_code >= 0)
			snprintf(how, sizeof how, "exit %d", t->exit_code);
		else if (t->signal)
			snprintf(how, sizeof how, "signal %d", t->signal);
		else
			snprintf(how, sizeof how, "-");
		buf_printf(b, "<tr class=\"failed-task\" data-id=\"%" PRIu64
		    "\"><td>%" PRIu64 "</td>", t->id, t->id);
		name_cell(b, t);
		buf_printf(b, "<td>%u</td><td>", t->att);
		esc(b, t->worker >= 0 ? h->workers[t->worker].wid : "-");
		buf_printf(b, "</td><td>+%s</td><td>%s</td><td>%s</td><td>",
		    fmt_dur(t->final_t - h->t0, d, sizeof d), t->reason >= 0 ?
		    result_reason_name[t->reason] : "-", how);
		esc(b, t->msg ? t->msg : "");
		buf_puts(b, "</td></tr>\n");
	}
	buf_puts(b, "</tbody></table></section>\n");
	free(ix);
}

static int
by_busy_desc(const void *a, const void *b)
{
	const struct h_worker *x = &sort_h->workers[*(const size_t *)a];
	const struct h_worker *y = &sort_h->workers[*(const size_t *)b];

	return x->busy_slot_s > y->busy_slot_s ? -1 :
	    x->busy_slot_s < y->busy_slot_s ? 1 : strcmp(x->wid, y->wid);
}

static void
workers(struct buf *b, const struct history *h)
{
	size_t *ix = xreallocarray(NULL, h->nworkers + 1, sizeof *ix), i;
	char d[32], m[32];

	for (i = 0; i < h->nworkers; i++)
		ix[i] = i;
	sort_h = h;
	qsort(ix, h->nworkers, sizeof *ix, by_busy_desc);
	buf_puts(b, "<section id=\"util\"><h2>Workers</h2>\n<p>Utilisation: "
	    "the time its task slots were busy over the time it was up "
	    "(registered to lost or exited, or the end of the journal), "
	    "times its slots; cores: the same weighted by the cores each "
	    "task had.</p>\n<table id=\"workers\"><thead><tr><th>worker</th>"
	    "<th>host</th><th>cores</th><th>slots</th><th>memory</th>"
	    "<th>up</th><th>done</th><th>failed</th><th>slots busy</th>"
	    "<th>cores busy</th></tr></thead><tbody>\n");
	for (i = 0; i < h->nworkers && i < WORKERS_MAX; i++) {
		const struct h_worker *w = &h->workers[ix[i]];
		double up = (w->down > 0 ? w->down : h->t1) - w->up;
		uint32_t slots = w->slots ? w->slots : w->rows ? w->rows : 1;
		double us = up > 0 ? w->busy_slot_s / (up * slots) : 0;
		double uc = up > 0 && w->cores ? w->busy_core_s /
		    (up * w->cores) : -1;

		if (us > 1)
			us = 1;
		if (uc > 1)
			uc = 1;
		buf_puts(b, "<tr class=\"worker\"><td>");
		esc(b, w->wid);
		buf_puts(b, "</td><td>");
		esc(b, w->host[0] ? w->host : "-");
		buf_printf(b, "</td><td class=\"num\">%u</td><td class=\"num\">"
		    "%u</td><td class=\"num\">%s</td><td class=\"num\">%s%s</td>"
		    "<td class=\"num\">%" PRIu64 "</td><td class=\"num\">%" PRIu64
		    "</td><td><span class=\"meter\"><span style=\"width:%.0f%%\">"
		    "</span></span> %.0f%%</td><td>", w->cores, slots,
		    w->memory ? units_format_human(w->memory, m, sizeof m) : "-",
		    fmt_dur(up, d, sizeof d), w->lost ? " (lost)" : "", w->done,
		    w->failed, us * 100, us * 100);
		if (uc >= 0)
			buf_printf(b, "<span class=\"meter\"><span style=\""
			    "width:%.0f%%\"></span></span> %.0f%%", uc * 100,
			    uc * 100);
		else
			buf_puts(b, "-");
		buf_puts(b, "</td></tr>\n");
	}
	buf_puts(b, "</tbody></table>\n");
	if (h->nworkers > WORKERS_MAX)
		buf_printf(b, "<p>%zu more workers, less busy, not shown.</p>\n",
		    h->nworkers - WORKERS_MAX);
	buf_puts(b, "</section>\n");
	free(ix);
}

static const char css[] =
    "body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',Roboto,"
    "'DejaVu Sans',sans-serif;margin:24px auto;max-width:1040px;"
    "color:#222;padding:0 12px}"
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 6px;"
    "border-bottom:1px solid #ddd;padding-bottom:3px}"
    "p{margin:4px 0 8px;color:#444}"
    "table{border-collapse:collapse;margin:6px 0;font-size:13px}"
    "th,td{padding:3px 8px;text-align:left;border-bottom:1px solid #eee;"
    "vertical-align:top}thead th{background:#f4f4f4}"
    "table.kv th{font-weight:normal;color:#555}td.num{text-align:right;"
    "font-variant-numeric:tabular-nums}"
    "tbody tr:nth-child(even){background:#fafafa}"
    "svg.chart{display:block;max-width:100%;height:auto;background:#fff}"
    "svg text{font-size:11px;fill:#444}svg .small{font-size:10px}"
    ".axis line,.axisline{stroke:#999;stroke-width:1}"
    ".axis line.grid{stroke:#eee}line.sep{stroke:#ddd}"
    "polyline{fill:none;stroke-width:1.6}"
    "polyline.s-queued{stroke:#ff7f0e}polyline.s-running{stroke:#1f77b4}"
    "polyline.s-waiting{stroke:#9467bd;stroke-dasharray:4 2}"
    ".hbar{fill:#4c78a8}"
    ".o-done{fill:#2ca02c;color:#2ca02c}.o-failed{fill:#d62728;"
    "color:#d62728}.o-cancelled{fill:#9a9a9a;color:#777}"
    ".o-lost{fill:#ff7f0e;color:#c60}.o-running{fill:#1f77b4;color:#1f77b4}"
    ".legend span{margin-right:14px;font-size:12px}"
    ".legend i{display:inline-block;width:12px;height:10px;margin-right:4px;"
    "vertical-align:middle}"
    ".legend i.s-queued{background:#ff7f0e}.legend i.s-running{"
    "background:#1f77b4}.legend i.s-waiting{background:#9467bd}"
    ".row{display:flex;flex-wrap:wrap;gap:16px}"
    "figure{margin:0}figcaption{font-size:13px;color:#444}"
    ".meter{display:inline-block;width:80px;height:9px;background:#eee;"
    "vertical-align:middle}.meter span{display:block;height:9px;"
    "background:#4c78a8}"
    "footer{margin-top:28px;color:#777;font-size:12px}";

static void
report_render(struct buf *b, const struct history *h, const struct jlog *log,
    const char *spool, const char *title)
{
	char now[64];

	buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta "
	    "charset=\"utf-8\"><meta name=\"viewport\" content=\"width="
	    "device-width\"><title>");
	esc(b, title);
	buf_printf(b, "</title><style>%s</style></head>\n<body>\n<header>"
	    "<h1>", css);
	esc(b, title);
	buf_puts(b, "</h1><p>spool <code>");
	esc(b, spool);
	buf_printf(b, "</code>, generated %s by spool report from the "
	    "journal.  Times of worker events are the workers' clocks.</p>"
	    "</header>\n", fmt_time(now_unix(), now, sizeof now));
	summary(b, h, log);
	if (h->events == 0)
		buf_puts(b, "<p id=\"empty\">The journal is empty: nothing has "
		    "happened in this spool yet.</p>\n");
	task_stream(b, h);
	queue_chart(b, h);
	histograms(b, h);
	slowest(b, h);
	failed(b, h);
	workers(b, h);
	buf_puts(b, "<footer>ckspool " CKSPOOL_VERSION " &mdash; see spool(1), \"spool report"
	    "\".</footer>\n</body></html>\n");
}

int
cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "title", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *out = "spool-report.html", *title = NULL;
	struct jlog log = JLOG_INIT;
	struct history h;
	struct buf b = BUF_INIT, tb = BUF_INIT;
	FILE *f;
	int c;

	while ((c = getopt_long(argc, argv, "+o:t:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 't':
			title = optarg;
			break;
		case 'h':
			printf("usage: spool report [-o FILE.html] [--title TEXT]"
			    "\n  (-o - writes to standard output; default "
			    "spool-report.html)\n");
			return 0;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind != argc)
		msg_fatal_status(EXIT_USAGE, "usage: spool report [-o FILE.html] "
		    "[--title TEXT]");
	cli_open();
	if (journal_load(cli_sp.fd[SD_JOURNAL], &log) < 0)
		msg_warn("read: %s/journal: %m (the report leaves it out)",
		    cli_sp.shown);
	history_build(&h, &log);
	if (title == NULL) {
		buf_printf(&tb, "ckspool report: %s", cli_sp.root);
		title = tb.p;
	}
	report_render(&b, &h, &log, cli_sp.root, title);
	if (strcmp(out, "-") == 0) {
		if (fwrite(b.p, 1, b.len, stdout) != b.len || fflush(stdout))
			msg_fatal("write: stdout: %m");
	} else {
		if ((f = fopen(out, "w")) == NULL)
			msg_fatal("open: %s: %m", out);
		if (fwrite(b.p, 1, b.len, f) != b.len || fflush(f) != 0) {
			(void)fclose(f);
			msg_fatal("write: %s: %m", out);
		}
		if (fclose(f) != 0)
			msg_fatal("write: %s: %m", out);
		fprintf(stderr, "spool: wrote %s (%zu KiB): %zu tasks, %zu "
		    "attempts, %zu workers, %zu events\n", out,
		    (b.len + 1023) / 1024, h.ntasks, h.natt, h.nworkers, log.n);
	}
	history_free(&h);
	jlog_free(&log);
	buf_free(&b);
	buf_free(&tb);
	return 0;
}
