/*
 * taskview.c - see taskview.h.
 *
 * What is kept:
 *   - the end of the ID claim chain;
 *   - per bundle directory (incoming/, accepting/, specs/), its files
 *     sorted by name, each with the ID range it holds; the records'
 *     offsets and the tasks' dependencies are read the first time they
 *     are needed (a bundle is never rewritten, only renamed or removed);
 *   - one sorted index of those ranges, for looking up an ID;
 *   - per worker, the assignments in inbox/, running/ and done/, and
 *     one sorted index of all of them;
 *   - per shard tasks/SHARD, one byte per ID: not final, final (result
 *     not read yet), or the final state read from the result.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle.h"
#include "fsop.h"
#include "ids.h"
#include "journal.h"
#include "msg.h"
#include "result.h"
#include "taskview.h"
#include "units.h"
#include "watch.h"

const char *const tv_state_name[TV_NSTATES] = {
	"unknown", "submitted", "queued", "waiting", "placed", "running",
	"finishing", "done", "failed", "cancelled", "rejected",
};

#define FINAL_UNREAD	0xff	/* shard byte: final, result not read */
#define TV_RESULT_MAX	(1u << 20)
#define TV_WATCH_MASK	(IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE)

/* Bundle stages, later is better. */
enum { B_INCOMING, B_ACCEPTING, B_SPECS, B_NSTAGES };
static const int stage_dir[B_NSTAGES] = { SD_INCOMING, SD_ACCEPTING, SD_SPECS };

struct bfile {
	char	*name;
	uint64_t first;
	uint32_t count;
	int	stage;
	int	drop;		/* accepting/ID.drop[.NAME]: raw, no records */
	int	owed;		/* accepting/FIRST.rejected: no records */
	int	loaded;		/* off/len/deps read (or failed: loaded=-1) */
	uint64_t *off;		/* count offsets of the records */
	uint32_t *len;
	uint32_t *depidx;	/* count+1 indexes into deps; NULL: none */
	uint64_t *deps;
};

struct bdir {
	struct dirstamp st;
	struct bfile **f;	/* sorted by name */
	size_t	n;
};

struct range {
	uint64_t first;
	uint32_t count;
	int	stage;
	struct bfile *f;
};

struct pent {
	uint64_t id;
	uint32_t att;
};

struct tvworker {
	char	wid[WDIR_ID_MAX];
	struct dirstamp st[3];
	struct pent *e[3];	/* WS_INBOX, WS_RUNNING, WS_DONE */
	size_t	n[3];
	int	seen;
};

struct placement {
	uint64_t id;
	uint32_t att;
	int	sub;
	const struct tvworker *w;
};

struct shard {
	uint8_t	st[SPOOL_SHARD_SIZE];
	uint32_t nfinal;
	struct dirstamp stamp;
	int	exists;
	int	listed;		/* in the last listing of tasks/ */
	int	watched;
};

struct taskview {
	struct spool *sp;
	struct watch w;
	uint64_t end;
	struct bdir bd[B_NSTAGES];
	struct range *ranges;
	size_t	nranges;
	struct dirstamp st_workers;
	struct tvworker **workers;	/* sorted by wid */
	size_t	nworkers;
	struct placement *pl;		/* sorted by id */
	size_t	npl;
	struct dirstamp st_tasks;
	struct shard **shards;
	size_t	nshards;
	int	changed;
};

static const int subs[3] = { WS_INBOX, WS_RUNNING, WS_DONE };

static void
bfile_free(struct bfile *f)
{
	if (f == NULL)
		return;
	free(f->name);
	free(f->off);
	free(f->len);
	free(f->depidx);
	free(f->deps);
	free(f);
}

struct taskview *
taskview_new(struct spool *sp, int inotify)
{
	struct taskview *tv = xcalloc(1, sizeof *tv);

	tv->sp = sp;
	tv->end = 1;
	if (watch_open(&tv->w, inotify) < 0) {
		msg_warn("inotify: %m; rescans alone will notice changes");
		(void)watch_open(&tv->w, 0);
	}
	if (watch_enabled(&tv->w)) {
		static const int dirs[] = { SD_INCOMING, SD_ACCEPTING, SD_SPECS,
		    SD_WORKERS, SD_TASKS };
		size_t i;

		for (i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
			if (watch_add(&tv->w, sp->rootfd, spool_dir_name[dirs[i]],
			    TV_WATCH_MASK, tv) < 0)
				msg_once("taskview-watch", "inotify: watch %s/%s: "
				    "%m; rescans alone will notice changes there",
				    sp->shown, spool_dir_name[dirs[i]]);
	}
	return tv;
}

static void
worker_free(struct tvworker *w)
{
	int k;

	for (k = 0; k < 3; k++)
		free(w->e[k]);
	free(w);
}

void
taskview_free(struct taskview *tv)
{
	size_t i, k;

	if (tv == NULL)
		return;
	for (k = 0; k < B_NSTAGES; k++) {
		for (i = 0; i < tv->bd[k].n; i++)
			bfile_free(tv->bd[k].f[i]);
		free(tv->bd[k].f);
	}
	free(tv->ranges);
	for (i = 0; i < tv->nworkers; i++)
		worker_free(tv->workers[i]);
	free(tv->workers);
	free(tv->pl);
	for (i = 0; i < tv->nshards; i++)
		free(tv->shards[i]);
	free(tv->shards);
	watch_close(&tv->w);
	free(tv);
}

int
taskview_fd(const struct taskview *tv)
{
	return tv->w.fd;
}

uint64_t
taskview_end(const struct taskview *tv)
{
	return tv->end;
}

void
taskview_touch(struct taskview *tv)
{
	size_t i;
	int k;

	for (k = 0; k < B_NSTAGES; k++)
		dirstamp_reset(&tv->bd[k].st);
	dirstamp_reset(&tv->st_workers);
	for (i = 0; i < tv->nworkers; i++)
		for (k = 0; k < 3; k++)
			dirstamp_reset(&tv->workers[i]->st[k]);
	dirstamp_reset(&tv->st_tasks);
	for (i = 0; i < tv->nshards; i++)
		if (tv->shards[i])
			dirstamp_reset(&tv->shards[i]->stamp);
}

/* ---- bundles ---- */

static struct bfile *
bdir_find(const struct bdir *d, const char *name)
{
	size_t lo = 0, hi = d->n, mid;
	int c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = strcmp(d->f[mid]->name, name);
		if (c == 0)
			return d->f[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The range of the bundle stage/name: bundle_head_read's 0, or -1 and
 * errno (ENOENT gone, EINVAL not a bundle, else not read). */
static int
read_header(struct spool *sp, int stage, const char *name, uint64_t *first,
    uint32_t *count)
{
	struct bundle_hdr h;

	if (bundle_head_read(sp->fd[stage_dir[stage]], name, &h, NULL) < 0)
		return -1;
	*first = h.first;
	*count = h.count;
	return 0;
}

/* msg_once's key for the headers of a stage not read */
static const char *
header_key(int stage)
{
	static const char *const key[B_NSTAGES] = {
		"tv:incoming", "tv:accepting", "tv:specs"
	};

	return key[stage];
}

struct listctx {
	struct taskview *tv;
	int	stage;
	struct bfile **f;
	size_t	n;
	int	unread;		/* a header could not be read: list again */
};

static int
bundle_seen(void *arg, const char *name, unsigned char type)
{
	struct listctx *c = arg;
	struct bdir *d = &c->tv->bd[c->stage];
	struct bfile *f, *old;
	uint64_t first;
	uint32_t count;
	int drop = 0, owed = 0;
	char *why;

	(void)type;
	if (name[0] == '.')
		return 0;
	if ((old = bdir_find(d, name)) != NULL) {
		/* known: keep it with what was read of it */
		f = old;
		f->stage = c->stage;
		goto keep;
	}
	if (c->stage == B_INCOMING) {
		/* only CLI bundles hold IDs; dropped files get one later */
		if (!bundle_suffixed(name))
			return 0;
	}
	/* ID.drop, or ID.drop.NAME when the name fits */
	if (c->stage == B_ACCEPTING &&
	    (drop = bundle_drop_name(name, &first, NULL)) != 0) {
		if (drop < 0)
			return 0;
		count = 1;
	} else if (c->stage == B_ACCEPTING && bundle_owed_name(name)) {
		struct bundle_hdr h;

		/* only spoold's own: a member's could name others' IDs */
		if (bundle_owed_read(c->tv->sp->fd[SD_ACCEPTING], name,
		    c->tv->sp->uid, &h, &why) <= 0)
			return 0;
		free(why);
		first = h.first;
		count = h.count;
		owed = 1;
	} else if (read_header(c->tv->sp, c->stage, name, &first,
	    &count) < 0) {
		if (errno != ENOENT && errno != EINVAL) {
			msg_once(header_key(c->stage), "read: %s/%s/%s: %m",
			    c->tv->sp->shown,
			    spool_dir_name[stage_dir[c->stage]],
			    journal_q(name));
			c->unread = 1;
		}
		return 0;
	}
	f = xcalloc(1, sizeof *f);
	f->name = xstrdup(name);
	f->first = first;
	f->count = count;
	f->stage = c->stage;
	f->drop = drop;
	f->owed = owed;
keep:
	c->f = xreallocarray(c->f, c->n + 1, sizeof *c->f);
	c->f[c->n++] = f;
	return 0;
}

static int
bfile_cmp(const void *a, const void *b)
{
	const struct bfile *const *x = a, *const *y = b;

	return strcmp((*x)->name, (*y)->name);
}

/* 1 if the listing of this stage changed what the view holds. */
static int
bdir_list(struct taskview *tv, int stage)
{
	struct bdir *d = &tv->bd[stage];
	struct listctx c = { tv, stage, NULL, 0, 0 };
	size_t i, j;
	int changed = 0;
	const char *dname = spool_dir_name[stage_dir[stage]];

	if (!dirstamp_changed(tv->sp->rootfd, dname, &d->st))
		return 0;
	if (fsop_list(tv->sp->fd[stage_dir[stage]], ".", bundle_seen, &c) < 0) {
		msg_once(dname, "list: %s/%s: %m", tv->sp->shown, dname);
		free(c.f);
		dirstamp_reset(&d->st);
		return 0;
	}
	msg_clear(dname);
	if (c.unread)	/* its tasks are not in the view: list again */
		dirstamp_reset(&d->st);
	else
		msg_clear(header_key(stage));
	if (c.n)
		qsort(c.f, c.n, sizeof *c.f, bfile_cmp);
	/* free what is gone (c.f is sorted, so is d->f) */
	for (i = j = 0; i < d->n; i++) {
		while (j < c.n && strcmp(c.f[j]->name, d->f[i]->name) < 0)
			j++;
		if (j < c.n && c.f[j] == d->f[i])
			continue;
		bfile_free(d->f[i]);
		changed = 1;
	}
	if (c.n != d->n)
		changed = 1;
	free(d->f);
	d->f = c.f;
	d->n = c.n;
	return changed;
}

static int
range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	if (x->stage != y->stage)
		return x->stage - y->stage;
	/* accepting/FIRST.rejected after accepting/FIRST: it is later */
	return x->f->owed - y->f->owed;
}

static void
ranges_build(struct taskview *tv)
{
	size_t n = 0, i;
	int k;

	for (k = 0; k < B_NSTAGES; k++)
		n += tv->bd[k].n;
	free(tv->ranges);
	tv->ranges = xreallocarray(NULL, n ? n : 1, sizeof *tv->ranges);
	tv->nranges = 0;
	for (k = 0; k < B_NSTAGES; k++)
		for (i = 0; i < tv->bd[k].n; i++) {
			struct range *r = &tv->ranges[tv->nranges++];

			r->first = tv->bd[k].f[i]->first;
			r->count = tv->bd[k].f[i]->count;
			r->stage = k;
			r->f = tv->bd[k].f[i];
		}
	qsort(tv->ranges, tv->nranges, sizeof *tv->ranges, range_cmp);
}

/* The latest-stage range holding id, or NULL. */
static const struct range *
range_find(const struct taskview *tv, uint64_t id)
{
	size_t lo = 0, hi = tv->nranges, mid;
	const struct range *r;

	/* the first range starting after id */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (tv->ranges[mid].first <= id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	/* sorted by (first, stage): the one before is the latest stage */
	r = &tv->ranges[lo - 1];
	return id < r->first + r->count ? r : NULL;
}

/* Read a bundle's record offsets and dependencies; 0 or -1. */
static int
bfile_load(struct taskview *tv, struct bfile *f)
{
	struct bundle_file bf;
	struct task_spec t;
	size_t ndeps = 0, k;
	uint32_t i = 0;
	int fd, rc, anydeps = 0;

	if (f->loaded)
		return f->loaded > 0 ? 0 : -1;
	if (f->drop || f->owed) {
		f->loaded = -1;
		errno = ENOENT;
		return -1;
	}
	/* a record at a time: one in incoming/ is anyone's, up to 4 GiB */
	if ((fd = fsop_open_regular(tv->sp->fd[stage_dir[f->stage]], f->name,
	    NULL)) < 0)
		return -1;	/* renamed on since: not cached, try later */
	if ((rc = bundle_file_open(&bf, fd)) == -2)
		goto unread;
	if (rc < 0 || bf.br.hdr.first != f->first ||
	    bf.br.hdr.count != f->count)
		goto bad;
	f->off = xcalloc(f->count, sizeof *f->off);
	f->len = xcalloc(f->count, sizeof *f->len);
	f->depidx = xcalloc((size_t)f->count + 1, sizeof *f->depidx);
	while ((rc = bundle_file_next(&bf, &t)) > 0) {
		f->off[i] = bf.rec_off;
		f->len[i] = (uint32_t)bf.rec_len;
		f->depidx[i] = (uint32_t)ndeps;
		if (t.nafter) {
			anydeps = 1;
			f->deps = xreallocarray(f->deps, ndeps + t.nafter,
			    sizeof *f->deps);
			for (k = 0; k < t.nafter; k++)
				f->deps[ndeps++] = t.after[k];
		}
		task_free(&t);
		i++;
	}
	if (rc == -2)
		goto unread;
	if (rc < 0)
		goto bad;
	f->depidx[i] = (uint32_t)ndeps;
	if (!anydeps) {
		free(f->depidx);
		f->depidx = NULL;
	}
	bundle_file_close(&bf);
	(void)close(fd);
	f->loaded = 1;
	return 0;
unread:
	/* as when a read of the whole file failed: not cached, try later */
	rc = errno;
	f->loaded = 0;
	goto out;
bad:
	msg_once(f->name, "%s/%s/%s: not a readable bundle: %s", tv->sp->shown,
	    spool_dir_name[stage_dir[f->stage]], f->name,
	    bf.br.r.why ? bf.br.r.why : "header changed");
	rc = EINVAL;
	f->loaded = -1;
out:
	bundle_file_close(&bf);
	(void)close(fd);
	free(f->off);
	free(f->len);
	free(f->depidx);
	free(f->deps);
	f->off = NULL;
	f->len = NULL;
	f->depidx = NULL;
	f->deps = NULL;
	errno = rc;
	return -1;
}

/* ---- workers ---- */

static struct tvworker *
worker_find(const struct taskview *tv, const char *wid, size_t *at)
{
	size_t lo = 0, hi = tv->nworkers, mid;
	int c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = strcmp(tv->workers[mid]->wid, wid);
		if (c == 0) {
			*at = mid;
			return tv->workers[mid];
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*at = lo;
	return NULL;
}

static void
worker_watch(struct taskview *tv, struct tvworker *w)
{
	char path[WDIR_ID_MAX + 16];
	int k;

	for (k = 0; k < 3 && watch_enabled(&tv->w); k++) {
		snprintf(path, sizeof path, "%s/%s", w->wid, wdir_sub_name[subs[k]]);
		if (watch_add(&tv->w, tv->sp->fd[SD_WORKERS], path, TV_WATCH_MASK,
		    w) < 0 && errno != ENOENT)
			msg_once("taskview-watch-w", "inotify: watch %s/workers/"
			    "%s: %m; rescans alone will notice changes there",
			    tv->sp->shown, path);
	}
}

static int
worker_seen(void *arg, const char *wid, unsigned char type)
{
	struct taskview *tv = arg;
	struct tvworker *w;
	size_t at;

	(void)type;
	if (wid[0] == '.' || strlen(wid) >= WDIR_ID_MAX)
		return 0;
	if ((w = worker_find(tv, wid, &at)) == NULL) {
		w = xcalloc(1, sizeof *w);
		snprintf(w->wid, sizeof w->wid, "%s", wid);
		tv->workers = xreallocarray(tv->workers, tv->nworkers + 1,
		    sizeof *tv->workers);
		memmove(&tv->workers[at + 1], &tv->workers[at],
		    (tv->nworkers - at) * sizeof *tv->workers);
		tv->workers[at] = w;
		tv->nworkers++;
		worker_watch(tv, w);
		tv->changed = 1;
	}
	w->seen = 1;
	return 0;
}

struct pctx {
	struct pent *e;
	size_t	n;
};

static int
pent_seen(void *arg, const char *name, unsigned char type)
{
	struct pctx *c = arg;
	uint64_t id;
	uint32_t att;

	(void)type;
	if (wdir_aname_parse(name, &id, &att) < 0)
		return 0;
	c->e = xreallocarray(c->e, c->n + 1, sizeof *c->e);
	c->e[c->n].id = id;
	c->e[c->n].att = att;
	c->n++;
	return 0;
}

static int
pent_cmp(const void *a, const void *b)
{
	const struct pent *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->att < y->att ? -1 : x->att > y->att;
}

/* List what changed of one worker's inbox, running, done; 1 if changed. */
static int
worker_scan(struct taskview *tv, struct tvworker *w)
{
	char path[WDIR_ID_MAX + 16];
	struct pctx c;
	int k, changed = 0;

	for (k = 0; k < 3; k++) {
		snprintf(path, sizeof path, "%s/%s", w->wid, wdir_sub_name[subs[k]]);
		if (!dirstamp_changed(tv->sp->fd[SD_WORKERS], path, &w->st[k]))
			continue;
		c.e = NULL;
		c.n = 0;
		if (fsop_list(tv->sp->fd[SD_WORKERS], path, pent_seen, &c) < 0) {
			free(c.e);
			c.e = NULL;
			c.n = 0;	/* gone (worker removed): nothing there */
		}
		if (c.n)
			qsort(c.e, c.n, sizeof *c.e, pent_cmp);
		if (c.n != w->n[k] || (c.n && memcmp(c.e, w->e[k],
		    c.n * sizeof *c.e)))
			changed = 1;
		free(w->e[k]);
		w->e[k] = c.e;
		w->n[k] = c.n;
	}
	return changed;
}

static int
pl_cmp(const void *a, const void *b)
{
	const struct placement *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	if (x->att != y->att)
		return x->att < y->att ? -1 : 1;
	return x->sub - y->sub;
}

static void
placements_build(struct taskview *tv)
{
	size_t i, j, n = 0;
	int k;

	for (i = 0; i < tv->nworkers; i++)
		for (k = 0; k < 3; k++)
			n += tv->workers[i]->n[k];
	free(tv->pl);
	tv->pl = xreallocarray(NULL, n ? n : 1, sizeof *tv->pl);
	tv->npl = 0;
	for (i = 0; i < tv->nworkers; i++)
		for (k = 0; k < 3; k++)
			for (j = 0; j < tv->workers[i]->n[k]; j++) {
				struct placement *p = &tv->pl[tv->npl++];

				p->id = tv->workers[i]->e[k][j].id;
				p->att = tv->workers[i]->e[k][j].att;
				p->sub = subs[k];
				p->w = tv->workers[i];
			}
	qsort(tv->pl, tv->npl, sizeof *tv->pl, pl_cmp);
}

/* The best placement of id (highest attempt, latest stage), or NULL. */
static const struct placement *
placement_find(const struct taskview *tv, uint64_t id)
{
	size_t lo = 0, hi = tv->npl, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (tv->pl[mid].id <= id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && tv->pl[lo - 1].id == id ? &tv->pl[lo - 1] : NULL;
}

static int
workers_scan(struct taskview *tv)
{
	size_t i, j;
	int changed = 0;

	if (dirstamp_changed(tv->sp->rootfd, "workers", &tv->st_workers)) {
		for (i = 0; i < tv->nworkers; i++)
			tv->workers[i]->seen = 0;
		if (fsop_list(tv->sp->fd[SD_WORKERS], ".", worker_seen, tv) < 0) {
			msg_once("tv:workers", "list: %s/workers: %m", tv->sp->shown);
			dirstamp_reset(&tv->st_workers);
			for (i = 0; i < tv->nworkers; i++)
				tv->workers[i]->seen = 1;
		} else
			msg_clear("tv:workers");
		for (i = j = 0; i < tv->nworkers; i++) {
			if (tv->workers[i]->seen) {
				tv->workers[j++] = tv->workers[i];
				continue;
			}
			watch_remove(&tv->w, tv->workers[i]);
			worker_free(tv->workers[i]);
			changed = 1;
		}
		tv->nworkers = j;
	}
	for (i = 0; i < tv->nworkers; i++)
		changed |= worker_scan(tv, tv->workers[i]);
	return changed;
}

/* ---- final states ---- */

static uint64_t
shard_lo(uint64_t s)
{
	return s == 0 ? 1 : s * SPOOL_SHARD_SIZE;
}

static struct shard *
shard_get(struct taskview *tv, uint64_t s, int create)
{
	size_t n;

	if (s >= tv->nshards) {
		if (!create)
			return NULL;
		n = (size_t)s + 1;
		tv->shards = xreallocarray(tv->shards, n, sizeof *tv->shards);
		memset(&tv->shards[tv->nshards], 0,
		    (n - tv->nshards) * sizeof *tv->shards);
		tv->nshards = n;
	}
	if (tv->shards[s] == NULL && create)
		tv->shards[s] = xcalloc(1, sizeof *tv->shards[s]);
	return tv->shards[s];
}

/* Claimed IDs in shard s not yet known final. */
static uint64_t
shard_open_ids(const struct taskview *tv, uint64_t s, const struct shard *sh)
{
	uint64_t lo = shard_lo(s), hi = (s + 1) * SPOOL_SHARD_SIZE;

	if (hi > tv->end)
		hi = tv->end;
	if (hi <= lo)
		return 0;
	return hi - lo - (sh ? sh->nfinal : 0);
}

struct sctx {
	struct taskview *tv;
	uint64_t s;
	struct shard *sh;
	int	changed;
	uint8_t	seen[SPOOL_SHARD_SIZE];	/* in this listing */
};

static int
final_seen(void *arg, const char *name, unsigned char type)
{
	struct sctx *c = arg;
	uint64_t id;

	(void)type;
	if (ids_parse(name, &id) < 0 || id / SPOOL_SHARD_SIZE != c->s)
		return 0;
	c->seen[id % SPOOL_SHARD_SIZE] = 1;
	if (c->sh->st[id % SPOOL_SHARD_SIZE] == 0) {
		c->sh->st[id % SPOOL_SHARD_SIZE] = FINAL_UNREAD;
		c->sh->nfinal++;
		c->changed = 1;
	}
	return 0;
}

static int
shard_seen(void *arg, const char *name, unsigned char type)
{
	struct taskview *tv = arg;
	struct shard *sh;
	const char *why;
	uint64_t s;

	(void)type;
	if (units_parse_uint(name, TASK_ID_MAX / SPOOL_SHARD_SIZE, &s,
	    &why) < 0)
		return 0;
	sh = shard_get(tv, s, 1);
	sh->exists = 1;
	sh->listed = 1;
	return 0;
}

/*
 * Tasks that "spool purge" removed: a final task is final for good
 * otherwise.  Those of a shard gone from tasks/ (all), or those its
 * listing c no longer holds.
 */
static int
shard_forget(struct shard *sh, const uint8_t *seen)
{
	int changed = 0;
	size_t i;

	for (i = 0; i < SPOOL_SHARD_SIZE; i++)
		if (sh->st[i] != 0 && (seen == NULL || !seen[i])) {
			sh->st[i] = 0;
			sh->nfinal--;
			changed = 1;
		}
	return changed;
}

static int
shards_scan(struct taskview *tv)
{
	struct dirstamp was;
	struct sctx c;
	char name[24];
	uint64_t s;
	int changed = 0, purged = 0;

	/*
	 * tasks/ changes when a shard is made, and when "spool purge" has
	 * removed tasks (it sets tasks/'s mtime, and removes shards): then
	 * every shard is looked at again, also one whose IDs are all
	 * final, and what is gone is forgotten.  (Not when tasks/ is only
	 * listed because DIRSTAMP_FORCE rescans went by: that would stat
	 * every shard every tenth rescan.)
	 */
	was = tv->st_tasks;
	if (dirstamp_changed(tv->sp->rootfd, "tasks", &tv->st_tasks)) {
		purged = !was.valid || was.again || was.hot_until != 0 ||
		    !tv->st_tasks.valid ||
		    memcmp(&was.mtime, &tv->st_tasks.mtime, sizeof was.mtime) ||
		    memcmp(&was.ctime, &tv->st_tasks.ctime, sizeof was.ctime) ||
		    was.nlink != tv->st_tasks.nlink ||
		    was.ino != tv->st_tasks.ino;
		for (s = 0; s < tv->nshards; s++)
			if (tv->shards[s])
				tv->shards[s]->listed = 0;
		if (fsop_list(tv->sp->fd[SD_TASKS], ".", shard_seen, tv) < 0) {
			msg_once("tv:tasks", "list: %s/tasks: %m", tv->sp->shown);
			dirstamp_reset(&tv->st_tasks);
			purged = 0;	/* (what is gone is not known) */
		} else
			msg_clear("tv:tasks");
		for (s = 0; purged && s < tv->nshards; s++) {
			struct shard *sh = tv->shards[s];

			if (sh == NULL || !sh->exists || sh->listed)
				continue;
			sh->exists = 0;
			dirstamp_reset(&sh->stamp);
			changed |= shard_forget(sh, NULL);
		}
	}
	for (s = 0; s < tv->nshards; s++) {
		struct shard *sh = tv->shards[s];

		if (sh == NULL || !sh->exists)
			continue;
		snprintf(name, sizeof name, "%" PRIu64, s);
		if (shard_open_ids(tv, s, sh) == 0) {
			if (sh->watched) {
				watch_remove(&tv->w, sh);
				sh->watched = 0;
			}
			/* (none final: it is all beyond the claims) */
			if (!purged || sh->nfinal == 0)
				continue;
			/* listed when its stamp moved, not also every
			 * DIRSTAMP_FORCE times tasks/ moves (a shard made
			 * every 1000 tasks): only a purge changes it now */
			sh->stamp.rounds = 0;
		} else if (!sh->watched && watch_enabled(&tv->w)) {
			if (watch_add(&tv->w, tv->sp->fd[SD_TASKS], name,
			    TV_WATCH_MASK, sh) == 0)
				sh->watched = 1;
		}
		if (!dirstamp_changed(tv->sp->fd[SD_TASKS], name, &sh->stamp))
			continue;
		c.tv = tv;
		c.s = s;
		c.sh = sh;
		c.changed = 0;
		memset(c.seen, 0, sizeof c.seen);
		if (fsop_list(tv->sp->fd[SD_TASKS], name, final_seen, &c) < 0) {
			if (errno != ENOENT)
				msg_once(name, "list: %s/tasks/%s: %m",
				    tv->sp->shown, name);
			dirstamp_reset(&sh->stamp);
			continue;
		}
		changed |= c.changed | shard_forget(sh, c.seen);
	}
	return changed;
}

/* The final state of a task whose directory exists, from its result. */
static enum tv_state
final_read(struct taskview *tv, uint64_t id, struct shard *sh)
{
	char path[SPOOL_PATH_MAX + 16];
	struct buf b = BUF_INIT;
	struct result r;
	const char *why;
	enum tv_state st;

	spool_task_path(id, path, sizeof path);
	strcat(path, "/result");
	if (fsop_read_file(tv->sp->fd[SD_TASKS], path, TV_RESULT_MAX, &b,
	    NULL) < 0) {
		msg_once(path, "read: %s/tasks/%s: %m", tv->sp->shown, path);
		buf_free(&b);
		return TV_FAILED;	/* not cached: read again next time */
	}
	if (result_decode(b.p, b.len, &r, &why) < 0) {
		msg_once(path, "%s/tasks/%s: %s", tv->sp->shown, path, why);
		buf_free(&b);
		return TV_FAILED;
	}
	buf_free(&b);
	switch (r.state) {
	case RS_DONE: st = TV_DONE; break;
	case RS_CANCELLED: st = TV_CANCELLED; break;
	case RS_REJECTED: st = TV_REJECTED; break;
	default: st = TV_FAILED; break;
	}
	result_free(&r);
	sh->st[id % SPOOL_SHARD_SIZE] = (uint8_t)st;
	return st;
}

/* The final state of id, or TV_UNKNOWN if it is not final. */
static enum tv_state
final_state(struct taskview *tv, uint64_t id)
{
	struct shard *sh = shard_get(tv, id / SPOOL_SHARD_SIZE, 0);
	uint8_t v;

	if (sh == NULL || (v = sh->st[id % SPOOL_SHARD_SIZE]) == 0)
		return TV_UNKNOWN;
	if (v == FINAL_UNREAD)
		return final_read(tv, id, sh);
	return (enum tv_state)v;
}

static int
is_final(const struct taskview *tv, uint64_t id)
{
	uint64_t s = id / SPOOL_SHARD_SIZE;

	return s < tv->nshards && tv->shards[s] &&
	    tv->shards[s]->st[id % SPOOL_SHARD_SIZE] != 0;
}

/* ---- refresh and queries ---- */

static void
drain_events(void *arg, void *cookie, const char *name, uint32_t mask)
{
	(void)arg;
	(void)cookie;
	(void)name;
	(void)mask;
}

int
taskview_refresh(struct taskview *tv)
{
	uint64_t end;
	int k, bchanged = 0;

	tv->changed = 0;
	if (watch_read(&tv->w, drain_events, tv) < 0)
		msg_once("taskview-inotify", "read: inotify: %m");
	if (tv->w.overflow) {
		tv->w.overflow = 0;
		taskview_touch(tv);
	}
	/* the claim chain first: IDs below end are the ones that exist */
	if (ids_end(tv->sp, tv->end, &end) < 0)
		msg_once("tv:ids", "read: %s/ids: %m", tv->sp->shown);
	else {
		msg_clear("tv:ids");
		if (end != tv->end)
			tv->changed = 1;
		tv->end = end;
	}
	/* earliest stage first: a task moving on is seen at least once */
	for (k = 0; k < B_NSTAGES; k++)
		bchanged |= bdir_list(tv, k);
	if (bchanged) {
		ranges_build(tv);
		tv->changed = 1;
	}
	if (workers_scan(tv) || tv->changed) {
		placements_build(tv);
		tv->changed = 1;
	}
	if (shards_scan(tv))
		tv->changed = 1;
	return tv->changed;
}

/* A task in a specs/ bundle waits while a dependency is not final. */
static int
is_waiting(struct taskview *tv, const struct range *r, uint64_t id)
{
	struct bfile *f = r->f;
	uint32_t i, k;

	if (r->stage != B_SPECS || bfile_load(tv, f) < 0 || f->depidx == NULL)
		return 0;
	i = (uint32_t)(id - f->first);
	for (k = f->depidx[i]; k < f->depidx[i + 1]; k++)
		if (!is_final(tv, f->deps[k]))
			return 1;
	return 0;
}

int
taskview_get(struct taskview *tv, uint64_t id, struct tv_task *t)
{
	const struct placement *p;
	const struct range *r;
	enum tv_state fs;

	memset(t, 0, sizeof *t);
	t->state = TV_UNKNOWN;
	if (id == 0 || id >= tv->end)
		return 0;
	if ((fs = final_state(tv, id)) != TV_UNKNOWN) {
		t->state = fs;
		return 1;
	}
	if ((p = placement_find(tv, id)) != NULL) {
		t->state = p->sub == WS_INBOX ? TV_PLACED :
		    p->sub == WS_RUNNING ? TV_RUNNING : TV_FINISHING;
		t->attempt = p->att;
		snprintf(t->wid, sizeof t->wid, "%s", p->w->wid);
		return 1;
	}
	if ((r = range_find(tv, id)) != NULL) {
		if (r->stage != B_SPECS) {
			t->state = TV_SUBMITTED;
			t->owed = r->f->owed;
		} else
			t->state = is_waiting(tv, r, id) ? TV_WAITING : TV_QUEUED;
	}
	return 1;
}

struct heldctx {
	struct spool *sp;
	int	stage;
	const uint64_t *ids;	/* sorted */
	size_t	n;
	unsigned char *held;	/* per ID: held by a bundle */
	int	unknown;	/* which IDs a bundle holds cannot be told */
};

static int
holds_ids(void *arg, const char *name, unsigned char type)
{
	struct heldctx *c = arg;
	const char *dot = strchr(name, '.');
	uint64_t first;
	uint32_t count = 1;
	size_t lo = 0, hi = c->n, mid;
	int drop;

	(void)type;
	if (name[0] == '.')
		return 0;
	if (c->stage == B_INCOMING && !bundle_suffixed(name))
		return 0;	/* a dropped file: no ID yet */
	if (c->stage == B_ACCEPTING && dot && strcmp(dot, ".rejected") == 0) {
		c->unknown = 1;	/* results owed: IDs not read */
		return 1;
	}
	if (c->stage == B_ACCEPTING &&
	    (drop = bundle_drop_name(name, &first, NULL)) != 0) {
		if (drop < 0)	/* ID.drop[.NAME] */
			return 0;
	} else if (read_header(c->sp, c->stage, name, &first, &count) < 0) {
		/* gone on (met again further on), or which IDs it holds
		 * cannot be told */
		if (errno != ENOENT)
			c->unknown = 1;
		return c->unknown;
	}
	while (lo < hi) {	/* the first ID at first or above */
		mid = lo + (hi - lo) / 2;
		if (c->ids[mid] < first)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < c->n && c->ids[lo] - first < count; lo++)
		c->held[lo] = 1;
	return 0;
}

size_t
spool_tasks_gone(struct spool *sp, const uint64_t *ids, size_t n,
    unsigned char *gone)
{
	struct heldctx c = { sp, 0, ids, n, gone, 0 };
	char path[SPOOL_PATH_MAX];
	struct stat st;
	size_t i, ngone = 0;

	if (n == 0)
		return 0;
	memset(gone, 0, n);	/* first: held by a bundle */
	/* earliest stage first: a bundle moving on is met again */
	for (c.stage = 0; c.stage < B_NSTAGES && !c.unknown; c.stage++)
		if (fsop_list(sp->fd[stage_dir[c.stage]], ".", holds_ids,
		    &c) < 0)
			c.unknown = 1;
	if (c.unknown) {
		memset(gone, 0, n);	/* not known */
		return 0;
	}
	/* then its directory: it becomes final before its bundle goes */
	for (i = 0; i < n; i++) {
		if (gone[i]) {
			gone[i] = 0;	/* held */
			continue;
		}
		spool_task_path(ids[i], path, sizeof path);
		if (fsop_stat(sp->fd[SD_TASKS], path, &st) < 0 &&
		    errno == ENOENT) {
			gone[i] = 1;
			ngone++;
		}
	}
	return ngone;
}

int
taskview_gone(struct taskview *tv, uint64_t id)
{
	struct tv_task t;
	unsigned char gone;

	if (taskview_get(tv, id, &t) <= 0 || t.state != TV_UNKNOWN)
		return 0;
	return spool_tasks_gone(tv->sp, &id, 1, &gone) == 1;
}

struct idset {
	uint64_t *v;
	size_t	n, cap;
};

static void
idset_add(struct idset *s, uint64_t id)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->v = xreallocarray(s->v, s->cap, sizeof *s->v);
	}
	s->v[s->n++] = id;
}

static void
maybe_add(struct taskview *tv, struct idset *s, uint64_t id, enum tv_state st)
{
	struct tv_task t;

	if (taskview_get(tv, id, &t) <= 0 || t.state == TV_UNKNOWN)
		return;
	if (st == TV_NSTATES || TV_SHOWN(&t) == st)
		idset_add(s, id);
}

size_t
taskview_list(struct taskview *tv, enum tv_state st, uint64_t **ids)
{
	struct idset s = { NULL, 0, 0 };
	uint64_t sh, id;
	size_t i, j;
	uint32_t k;

	if (st == TV_UNKNOWN)
		goto out;
	if (st == TV_NSTATES || TV_FINAL(st))
		for (sh = 0; sh < tv->nshards; sh++) {
			if (tv->shards[sh] == NULL)
				continue;
			for (k = 0; k < SPOOL_SHARD_SIZE; k++)
				if (tv->shards[sh]->st[k]) {
					id = sh * SPOOL_SHARD_SIZE + k;
					if (st == TV_NSTATES)
						idset_add(&s, id);
					else
						maybe_add(tv, &s, id, st);
				}
		}
	if (st == TV_NSTATES || st == TV_PLACED || st == TV_RUNNING ||
	    st == TV_FINISHING)
		for (i = 0; i < tv->npl; i++)
			if (st != TV_NSTATES || !is_final(tv, tv->pl[i].id))
				maybe_add(tv, &s, tv->pl[i].id, st);
	/* (rejected: the IDs whose results are owed, in accepting/) */
	if (st == TV_NSTATES || st == TV_SUBMITTED || st == TV_QUEUED ||
	    st == TV_WAITING || st == TV_REJECTED)
		for (i = 0; i < tv->nranges; i++)
			for (id = tv->ranges[i].first; id < tv->ranges[i].first +
			    tv->ranges[i].count; id++)
				if (st != TV_NSTATES || !is_final(tv, id))
					maybe_add(tv, &s, id, st);
	if (s.n)
		qsort(s.v, s.n, sizeof *s.v, ids_cmp);
	for (i = j = 0; i < s.n; i++)
		if (j == 0 || s.v[j - 1] != s.v[i])
			s.v[j++] = s.v[i];
	s.n = j;
out:
	*ids = s.v ? s.v : xcalloc(1, sizeof **ids);
	return s.n;
}

int
taskview_spec(struct taskview *tv, uint64_t id, struct buf *out)
{
	char path[SPOOL_PATH_MAX + WDIR_ID_MAX + 32], an[WDIR_ANAME_MAX];
	const struct placement *p;
	const struct range *r;
	struct tv_task t;
	struct bfile *f;
	uint32_t i;
	ssize_t n;
	int fd, saved;

	buf_reset(out);
	if (taskview_get(tv, id, &t) <= 0) {
		errno = ENOENT;
		return -1;
	}
	if (TV_FINAL(t.state)) {
		spool_task_path(id, path, sizeof path);
		strcat(path, "/spec");
		return fsop_read_file(tv->sp->fd[SD_TASKS], path, TASK_FILE_MAX +
		    REC_LINE_MAX, out, NULL);
	}
	if ((p = placement_find(tv, id)) != NULL) {
		wdir_aname(id, p->att, an, sizeof an);
		snprintf(path, sizeof path, "%s/%s/%s", p->w->wid,
		    wdir_sub_name[p->sub], an);
		return fsop_read_file(tv->sp->fd[SD_WORKERS], path, TASK_FILE_MAX +
		    REC_LINE_MAX, out, NULL);
	}
	if ((r = range_find(tv, id)) == NULL) {
		errno = ENOENT;
		return -1;
	}
	f = r->f;
	if (bfile_load(tv, f) < 0) {
		if (errno != ENOENT)
			errno = ENOENT;
		return -1;
	}
	i = (uint32_t)(id - f->first);
	fd = fsop_openfile(tv->sp->fd[stage_dir[f->stage]], f->name,
	    O_RDONLY | O_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	buf_reserve(out, (size_t)f->len[i] + 1);
	n = fsop_pread(fd, out->p, f->len[i], (off_t)f->off[i]);
	saved = errno;
	close(fd);
	if (n != (ssize_t)f->len[i]) {
		errno = n < 0 ? saved : EIO;
		return -1;
	}
	out->len = (size_t)n;
	out->p[out->len] = 0;
	return 0;
}

size_t
taskview_workers(struct taskview *tv, char ***wids)
{
	size_t i;

	*wids = xcalloc(tv->nworkers + 1, sizeof **wids);
	for (i = 0; i < tv->nworkers; i++)
		(*wids)[i] = xstrdup(tv->workers[i]->wid);
	return tv->nworkers;
}
