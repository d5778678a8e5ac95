/*
 * history.c - the journal's events turned into tasks, attempts,
 * workers and counts over time; see history.h.
 *
 * One pass over the events (sorted by time); lookups by task ID,
 * (task, attempt) and worker ID through open-addressing hash tables,
 * so building is linear in the number of events: a journal of 100000
 * tasks (about 600000 events) builds in well under a second.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "ids.h"

const char *const h_outcome_name[HO_N] = {
	"done", "failed", "cancelled", "lost", "running",
};

#define RANGE_MAX	(1u << 22)	/* IDs in one checkpoint line */

/* ---- hash tables: key -> index + 1 (0 is empty) ---- */

static uint64_t
mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return k;
}

/* a table of (key, value) pairs in one array: slot i at 2i, 2i+1 */
static uint64_t *
slot_find(uint64_t *tab, size_t cap, uint64_t key)
{
	size_t i = (size_t)mix(key) & (cap - 1);

	while (tab[2 * i + 1] != 0 && tab[2 * i] != key)
		i = (i + 1) & (cap - 1);
	return &tab[2 * i];
}

static void
tab_grow(uint64_t **tab, size_t *cap, size_t n)
{
	uint64_t *old = *tab, *s;
	size_t oldcap = *cap, i;

	if (n * 2 < *cap)
		return;
	*cap = *cap ? *cap * 2 : 1024;
	*tab = xcalloc(*cap * 2, sizeof **tab);
	for (i = 0; i < oldcap; i++)
		if (old[2 * i + 1]) {
			s = slot_find(*tab, *cap, old[2 * i]);
			s[0] = old[2 * i];
			s[1] = old[2 * i + 1];
		}
	free(old);
}

static uint64_t
str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* ---- the pieces ---- */

static struct h_task *
task_at(struct history *h, uint64_t id)
{
	uint64_t *s;
	struct h_task *t;

	tab_grow(&h->task_ix, &h->task_cap, h->ntasks);
	s = slot_find(h->task_ix, h->task_cap, id);
	if (s[1])
		return &h->tasks[s[1] - 1];
	h->tasks = xgrowarray(h->tasks, h->ntasks, sizeof *h->tasks);
	t = &h->tasks[h->ntasks++];
	memset(t, 0, sizeof *t);
	t->id = id;
	t->state = t->reason = -1;
	t->exit_code = -1;
	t->wall = -1;
	t->worker = -1;
	s[0] = id;
	s[1] = h->ntasks;
	return t;
}

const struct h_task *
history_task(const struct history *h, uint64_t id)
{
	uint64_t *s;

	if (h->task_cap == 0)
		return NULL;
	s = slot_find(h->task_ix, h->task_cap, id);
	return s[1] ? &h->tasks[s[1] - 1] : NULL;
}

static uint64_t
att_key(uint64_t id, uint32_t att)
{
	return (id << 12) ^ (att & 0xfff);
}

static struct h_attempt *
attempt_at(struct history *h, uint64_t id, uint32_t att, int create)
{
	uint64_t key = att_key(id, att), *s;
	struct h_attempt *a;

	tab_grow(&h->att_ix, &h->att_cap, h->natt);
	s = slot_find(h->att_ix, h->att_cap, key);
	if (s[1])
		return &h->att[s[1] - 1];
	if (!create)
		return NULL;
	h->att = xgrowarray(h->att, h->natt, sizeof *h->att);
	a = &h->att[h->natt++];
	memset(a, 0, sizeof *a);
	a->id = id;
	a->att = att;
	a->worker = -1;
	a->outcome = HO_RUNNING;
	s[0] = key;
	s[1] = h->natt;
	return a;
}

static int32_t
worker_at(struct history *h, const char *wid)
{
	uint64_t key = str_hash(wid), *s;
	size_t i;
	struct h_worker *w;

	if (*wid == 0 || strcmp(wid, "-") == 0)
		return -1;
	tab_grow(&h->wk_ix, &h->wk_cap, h->nworkers);
	/* probe past other workers whose names hash alike */
	i = (size_t)mix(key) & (h->wk_cap - 1);
	for (;; i = (i + 1) & (h->wk_cap - 1)) {
		s = &h->wk_ix[2 * i];
		if (s[1] == 0)
			break;
		if (s[0] == key && strcmp(h->workers[s[1] - 1].wid, wid) == 0)
			return (int32_t)(s[1] - 1);
	}
	h->workers = xgrowarray(h->workers, h->nworkers, sizeof *h->workers);
	w = &h->workers[h->nworkers++];
	memset(w, 0, sizeof *w);
	w->wid = xstrdup(wid);
	s[0] = key;
	s[1] = h->nworkers;
	return (int32_t)(h->nworkers - 1);
}

/* ---- counts over time ---- */

struct clock {
	double	cur;
	double	bw;		/* bucket width, 0: a single instant */
};

static void
advance(struct history *h, struct clock *c, double t)
{
	double x, end, dt;
	size_t b;

	if (c->bw <= 0 || t <= c->cur)
		return;
	/* relative to t0: Unix times leave too few bits for bucket edges */
	x = c->cur - h->t0;
	t -= h->t0;
	while (x < t) {
		b = (size_t)(x / c->bw);
		end = (double)(b + 1) * c->bw;
		if (end <= x)		/* x sits on an edge: the next bucket */
			end = (double)(++b + 1) * c->bw;
		if (b >= H_BUCKETS - 1) {
			b = H_BUCKETS - 1;
			end = t;
		}
		if (end > t || end <= x)
			end = t;
		dt = end - x;
		h->queued[b] += dt * (double)h->hs_count[HS_QUEUED];
		h->waiting[b] += dt * (double)h->hs_count[HS_WAITING];
		h->running[b] += dt * (double)h->hs_count[HS_RUNNING];
		x = end;
	}
	c->cur = h->t0 + t;
}

static void
set_hs(struct history *h, struct h_task *t, enum h_state s)
{
	if (t->hs == HS_FINAL)	/* a late event of an earlier attempt */
		return;
	if (t->hs != HS_UNKNOWN)
		h->hs_count[t->hs]--;
	t->hs = (int8_t)s;
	if (s != HS_UNKNOWN)
		h->hs_count[s]++;
	if ((double)h->hs_count[HS_QUEUED] > h->peak_queued)
		h->peak_queued = (double)h->hs_count[HS_QUEUED];
	if ((double)h->hs_count[HS_RUNNING] > h->peak_running)
		h->peak_running = (double)h->hs_count[HS_RUNNING];
}

/* ---- events ---- */

static int
enum_of(const char *const *names, int n, const char *s)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(names[i], s) == 0)
			return i;
	return -1;
}

static uint32_t
get_u32(const struct jevent *e, const char *key)
{
	double d;

	return jev_num(e, key, &d) && d >= 0 && d < 4e9 ? (uint32_t)d : 0;
}

static uint64_t
get_u64(const struct jevent *e, const char *key)
{
	double d;

	return jev_num(e, key, &d) && d >= 0 && d < 1.8e19 ? (uint64_t)d : 0;
}

static enum h_outcome
outcome_of(const char *state, const char *reason)
{
	if (strcmp(state, "done") == 0)
		return HO_DONE;
	if (strcmp(state, "cancelled") == 0)
		return HO_CANCELLED;
	if (strcmp(reason, "worker-lost") == 0)
		return HO_LOST;
	return HO_FAILED;
}

/* An attempt's end from a finished or final event. */
static void
attempt_end(struct history *h, const struct jevent *e, uint64_t id,
    uint32_t att, const char *state, const char *reason, int create)
{
	char wid[128];
	struct h_attempt *a;
	double start = 0, end = e->t, d;
	int has_start = jev_num(e, "start", &start);

	if (jev_num(e, "end", &d) && d > 0)
		end = d;
	a = attempt_at(h, id, att, create && has_start && start > 0);
	if (a == NULL || (a->end > 0 && !create))
		return;
	if (a->end > 0)		/* already ended (worker's own event) */
		return;
	if (a->start == 0 || (has_start && start > 0 && a->start > start))
		a->start = has_start && start > 0 ? start : e->t;
	a->end = end >= a->start ? end : a->start;
	a->outcome = (uint8_t)outcome_of(state, reason);
	if (a->worker < 0 && jev_get(e, "worker", wid, sizeof wid))
		a->worker = worker_at(h, wid);
	if ((d = (double)get_u64(e, "peak")) > 0 ||
	    (d = (double)get_u64(e, "maxrss")) > 0)
		a->peak = (uint64_t)d;
	if (a->cores == 0)
		a->cores = get_u32(e, "cores");
}

static void
task_final(struct history *h, struct h_task *t, const struct jevent *e)
{
	char state[16], reason[24], msg[JOURNAL_VALUE_MAX + 1], wid[128];
	double d;
	int s;

	if (t->final_t > 0)
		return;		/* counted once */
	if (!jev_get(e, "state", state, sizeof state) ||
	    (s = enum_of(result_state_name, RS_NSTATES, state)) < 0)
		return;
	if (!jev_get(e, "reason", reason, sizeof reason))
		reason[0] = 0;
	t->final_t = e->t;
	t->state = (int8_t)s;
	t->reason = (int8_t)enum_of(result_reason_name, RR_NREASONS, reason);
	h->count[s]++;
	t->att = get_u32(e, "att");
	t->exit_code = jev_num(e, "exit", &d) ? (int)d : -1;
	t->signal = (int)get_u32(e, "signal");
	if (jev_num(e, "wall", &d))
		t->wall = d;
	t->peak = get_u64(e, "peak");
	if (t->peak == 0)
		t->peak = get_u64(e, "maxrss");
	if (jev_get(e, "msg", msg, sizeof msg)) {
		free(t->msg);
		t->msg = xstrdup(msg);
	}
	if (jev_get(e, "worker", wid, sizeof wid))
		t->worker = worker_at(h, wid);
	attempt_end(h, e, t->id, t->att, state, reason, 1);
	set_hs(h, t, HS_FINAL);
}

static enum h_state
hs_parse(const char *s)
{
	static const char *const names[HS_N] = { "unknown", "waiting",
	    "queued", "placed", "running", "finishing", "final" };
	int i = enum_of(names, HS_N, s);

	return i < 0 ? HS_UNKNOWN : (enum h_state)i;
}

static void
task_checkpoint(struct history *h, const struct jevent *e)
{
	char st[16], *dash;
	uint64_t first, last, id;
	enum h_state s;
	struct h_task *t;

	if (!jev_get(e, "state", st, sizeof st) ||
	    (s = hs_parse(st)) == HS_UNKNOWN)
		return;
	if ((dash = strchr(e->id, '-')) != NULL) {
		char a[24];

		snprintf(a, sizeof a, "%.*s", (int)(dash - e->id), e->id);
		if (ids_parse(a, &first) < 0 || ids_parse(dash + 1, &last) < 0 ||
		    last < first || last - first >= RANGE_MAX)
			return;
	} else if (ids_parse(e->id, &first) < 0)
		return;
	else
		last = first;
	for (id = first; id <= last; id++) {
		t = task_at(h, id);
		if (t->hs == HS_RUNNING && s == HS_PLACED)
			continue;	/* spoold does not tell these apart */
		set_hs(h, t, s);
	}
}

static void
task_event(struct history *h, const struct jevent *e)
{
	char v[JOURNAL_VALUE_MAX + 1], state[16], reason[24];
	struct h_attempt *a;
	struct h_task *t;
	uint64_t id;

	if (strcmp(e->event, "state") == 0) {
		task_checkpoint(h, e);
		return;
	}
	if (ids_parse(e->id, &id) < 0) {
		if (strcmp(e->event, "rejected") == 0)
			h->rejected_files++;
		return;
	}
	t = task_at(h, id);
	if (strcmp(e->event, "submitted") == 0) {
		double d;

		/* spoold writes it at acceptance; time= is the submission */
		t->submitted = jev_num(e, "time", &d) && d > 0 ? d : e->t;
		if (jev_get(e, "name", v, sizeof v)) {
			free(t->name);
			t->name = xstrdup(v);
		}
	} else if (strcmp(e->event, "accepted") == 0) {
		set_hs(h, t, jev_get(e, "state", v, sizeof v) &&
		    strcmp(v, "waiting") == 0 ? HS_WAITING : HS_QUEUED);
	} else if (strcmp(e->event, "queued") == 0) {
		set_hs(h, t, HS_QUEUED);
	} else if (strcmp(e->event, "placed") == 0) {
		set_hs(h, t, HS_PLACED);
	} else if (strcmp(e->event, "started") == 0) {
		a = attempt_at(h, id, get_u32(e, "att"), 1);
		if (a->start == 0)
			a->start = e->t;
		if (jev_get(e, "worker", v, sizeof v))
			a->worker = worker_at(h, v);
		a->cores = get_u32(e, "cores");
		set_hs(h, t, HS_RUNNING);
	} else if (strcmp(e->event, "finished") == 0) {
		if (!jev_get(e, "state", state, sizeof state))
			snprintf(state, sizeof state, "failed");
		if (!jev_get(e, "reason", reason, sizeof reason))
			reason[0] = 0;
		attempt_end(h, e, id, get_u32(e, "att"), state, reason, 1);
		set_hs(h, t, HS_FINISHING);
	} else if (strcmp(e->event, "returned") == 0) {
		a = attempt_at(h, id, get_u32(e, "att"), 0);
		if (a && a->end == 0) {
			a->end = e->t;
			a->outcome = HO_LOST;
		}
		set_hs(h, t, HS_FINISHING);
	} else if (strcmp(e->event, "requeued") == 0) {
		if (jev_get(e, "reason", reason, sizeof reason) &&
		    strcmp(reason, "retry") == 0)
			h->retried++;
		else
			h->requeued++;
		a = attempt_at(h, id, get_u32(e, "att"), 0);
		if (a && a->end == 0) {
			a->end = e->t;
			a->outcome = HO_LOST;
		}
		set_hs(h, t, HS_QUEUED);
	} else if (strcmp(e->event, "final") == 0 ||
	    strcmp(e->event, "rejected") == 0) {
		task_final(h, t, e);
	}
}

static void
worker_event(struct history *h, const struct jevent *e)
{
	int32_t i = worker_at(h, e->id);
	struct h_worker *w;
	char v[64];

	if (i < 0)
		return;
	w = &h->workers[i];
	if (strcmp(e->event, "registered") == 0 ||
	    strcmp(e->event, "state") == 0) {
		/* again after a spoold restart: it was up all along */
		if (w->up == 0 || w->down > 0) {
			w->up = e->t;
			w->down = 0;
			w->lost = 0;
		}
		if (jev_get(e, "host", v, sizeof v))
			snprintf(w->host, sizeof w->host, "%s", v);
		w->cores = get_u32(e, "cores");
		w->slots = get_u32(e, "slots");
		w->gpus = get_u32(e, "gpus");
		w->memory = get_u64(e, "memory");
	} else if (strcmp(e->event, "lost") == 0) {
		double d;

		w->down = e->t;
		/* expected=1: its batch job ended, with nothing to do */
		w->lost = !(jev_num(e, "expected", &d) && d == 1);
	} else if (strcmp(e->event, "exited") == 0) {
		if (w->down == 0)
			w->down = e->t;
	}
}

/* ---- task stream rows ---- */

static int
by_worker_start(const void *a, const void *b)
{
	const struct h_attempt *x = a, *y = b;

	if (x->worker != y->worker)
		return x->worker < y->worker ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static void
assign_rows(struct history *h)
{
	double *ends = NULL;
	size_t cap = 0, i, r, nrows;
	int32_t cur = -2;
	struct h_attempt *a;
	struct h_worker *w;

	/* the lookup by (task, attempt) is not needed any more */
	if (h->natt > 1)
		qsort(h->att, h->natt, sizeof *h->att, by_worker_start);
	nrows = 0;
	h->rows = 0;
	for (i = 0; i < h->natt; i++) {
		a = &h->att[i];
		if (a->worker != cur) {
			cur = a->worker;
			nrows = 0;
			if (cur >= 0)
				h->workers[cur].row0 = h->rows;
		}
		if (a->worker < 0)
			continue;
		w = &h->workers[a->worker];
		for (r = 0; r < nrows && ends[r] > a->start + 1e-6; r++)
			;
		if (r == nrows) {
			if (nrows == cap) {
				cap = cap ? 2 * cap : 16;
				ends = xreallocarray(ends, cap, sizeof *ends);
			}
			nrows++;
			w->rows = (uint32_t)nrows;
			h->rows++;
		}
		ends[r] = a->end;
		a->row = w->row0 + (uint32_t)r;
		w->busy_slot_s += a->end - a->start;
		w->busy_core_s += (a->end - a->start) *
		    (a->cores ? a->cores : 1);
		if (a->outcome == HO_DONE)
			w->done++;
		else if (a->outcome == HO_FAILED)
			w->failed++;
	}
	free(ends);
}

void
history_build(struct history *h, const struct jlog *log)
{
	struct clock c = { 0, 0 };
	size_t i, b;

	memset(h, 0, sizeof *h);
	if (log->n == 0)
		return;
	h->events = log->n;
	h->t0 = log->ev[0].t;
	h->t1 = log->ev[log->n - 1].t;
	c.cur = h->t0;
	c.bw = (h->t1 - h->t0) / H_BUCKETS;
	for (i = 0; i < log->n; i++) {
		const struct jevent *e = &log->ev[i];

		advance(h, &c, e->t);
		if (strcmp(e->subject, "task") == 0)
			task_event(h, e);
		else if (strcmp(e->subject, "worker") == 0)
			worker_event(h, e);
	}
	advance(h, &c, h->t1);
	for (b = 0; b < H_BUCKETS && c.bw > 0; b++) {
		h->queued[b] /= c.bw;
		h->waiting[b] /= c.bw;
		h->running[b] /= c.bw;
	}
	/* attempts still open at the end: running (or never heard of) */
	for (i = 0; i < h->natt; i++)
		if (h->att[i].end == 0) {
			h->att[i].end = h->t1 > h->att[i].start ? h->t1 :
			    h->att[i].start;
			h->att[i].outcome = HO_RUNNING;
		}
	for (i = 0; i < h->nworkers; i++)
		if (h->workers[i].up == 0 || h->workers[i].up > h->t1)
			h->workers[i].up = h->t0;
	assign_rows(h);
	free(h->att_ix);
	h->att_ix = NULL;
	h->att_cap = 0;
}

void
history_free(struct history *h)
{
	size_t i;

	for (i = 0; i < h->ntasks; i++) {
		free(h->tasks[i].name);
		free(h->tasks[i].msg);
	}
	for (i = 0; i < h->nworkers; i++)
		free(h->workers[i].wid);
	free(h->tasks);
	free(h->att);
	free(h->workers);
	free(h->task_ix);
	free(h->att_ix);
	free(h->wk_ix);
	memset(h, 0, sizeof *h);
}
