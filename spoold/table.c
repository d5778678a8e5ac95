/*
 * table.c - spoold's task table, ready heaps and bundle registry.
 *
 * Tasks live in pages of 4096 indexed by ID / 4096, so lookup is two
 * array accesses and IDs handed out in order fill pages densely.  Each
 * ready task sits in the heap of its resource shape; placement pops the
 * best head among the shapes that fit a worker (shape_pop_best), which
 * costs O(number of shapes), not O(queued tasks).  Cancelled tasks are
 * left in heaps and skipped when popped (lazy deletion).  A shape is
 * found by a hash of its four numbers, and is dropped once its heap is
 * found empty: tasks whose walltime or memory differ from task to task
 * would otherwise leave one shape each behind, for the life of the
 * daemon, and every placement would walk them all.
 *
 * Bundles: specs/FIRST holds the records of tasks FIRST..FIRST+COUNT-1;
 * a task keeps (bundle, offset, len) and its record is read with one
 * pread when it is placed.  A bundle file is removed once all its tasks
 * are final (their specs then live in tasks/SHARD/ID/spec), at the
 * first rescan at least RELEASE_DELAY_MS after spoold closed it
 * (bundle_removals; spoold.h says why).  A crash in between leaves a
 * bundle of final tasks, which the next start removes.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsop.h"
#include "msg.h"
#include "spoold.h"

struct task *
task_get(uint64_t id)
{
	size_t p = (size_t)(id >> PAGE_BITS);
	struct task *t;

	if (p >= sd.npages || sd.pages[p] == NULL)
		return NULL;
	t = &sd.pages[p]->t[id & (PAGE_SIZE - 1)];
	return t->state == T_NONE ? NULL : t;
}

/*
 * The one way a task changes state in memory: keeps the per-state
 * counters (waiting, queued, placed) exact.
 */
static struct shape *shape_for(const struct task *t);

void
task_set_state(struct task *t, enum tstate s)
{
	uint64_t *c[] = { NULL, &sd.c.waiting, &sd.c.queued, &sd.c.placed,
	    NULL };

	if (c[t->state])
		(*c[t->state])--;
	if (c[s])
		(*c[s])++;
	/* per shape too, for adaptive scaling (scale.c) */
	if (t->state == T_QUEUED && s != T_QUEUED)
		shape_for(t)->live--;
	else if (t->state != T_QUEUED && s == T_QUEUED)
		shape_for(t)->live++;
	t->state = (uint8_t)s;
	sd.c.changes++;
	sd.summary_dirty = 1;
}

struct task *
task_add(uint64_t id)
{
	size_t p = (size_t)(id >> PAGE_BITS), i;
	struct page *pg;
	struct task *t;

	if (p >= sd.npages) {
		size_t n = sd.npages ? sd.npages : 16;

		while (n <= p)
			n *= 2;
		sd.pages = xreallocarray(sd.pages, n, sizeof *sd.pages);
		for (i = sd.npages; i < n; i++)
			sd.pages[i] = NULL;
		sd.npages = n;
	}
	if ((pg = sd.pages[p]) == NULL) {
		pg = sd.pages[p] = xcalloc(1, sizeof *pg);
		for (i = 0; i < PAGE_SIZE; i++)
			pg->t[i].worker = -1;
	}
	t = &pg->t[id & (PAGE_SIZE - 1)];
	if (t->state != T_NONE)
		msg_panic("task %" PRIu64 " added twice", id);
	memset(t, 0, sizeof *t);
	t->worker = -1;
	task_set_state(t, T_WAITING);
	pg->used++;
	pg->live++;
	return t;
}

/* The task became final: count it out of its page; free full pages. */
void
task_release(uint64_t id)
{
	size_t p = (size_t)(id >> PAGE_BITS);
	struct page *pg = sd.pages[p];

	if (pg == NULL || pg->live == 0)
		msg_panic("task_release %" PRIu64 ": not live", id);
	if (--pg->live == 0) {
		free(pg);
		sd.pages[p] = NULL;
	}
}

/* Shapes are found by their four numbers (key: a shape or a probe). */
static size_t
shape_hash(const struct shape *key)
{
	uint64_t h = ((uint64_t)key->cores << 8 | key->gpus) *
	    0x9e3779b97f4a7c15ULL;

	h ^= (key->memory ^ (uint64_t)key->walltime << 32) *
	    0xc2b2ae3d27d4eb4fULL;
	return (size_t)(h ^ h >> 29);
}

/* The index slot of key's shape, or the empty slot where it would go. */
static size_t
shape_slot(const struct shape *key)
{
	size_t mask = sd.shape_index_cap - 1, i = shape_hash(key) & mask;
	const struct shape *s;

	while ((s = sd.shape_index[i]) != NULL && !(s->cores == key->cores &&
	    s->gpus == key->gpus && s->memory == key->memory &&
	    s->walltime == key->walltime))
		i = (i + 1) & mask;
	return i;
}

static void
shape_index_grow(void)
{
	struct shape **old = sd.shape_index;
	size_t i, oldcap = sd.shape_index_cap;

	sd.shape_index_cap = oldcap ? oldcap * 2 : 16;
	sd.shape_index = xcalloc(sd.shape_index_cap, sizeof *sd.shape_index);
	for (i = 0; i < oldcap; i++)
		if (old[i])
			sd.shape_index[shape_slot(old[i])] = old[i];
	free(old);
}

static struct shape *
shape_for(const struct task *t)
{
	struct shape key, *s;
	size_t i;

	if (2 * (sd.nshapes + 1) > sd.shape_index_cap)
		shape_index_grow();	/* at most half full */
	memset(&key, 0, sizeof key);
	key.cores = t->cores;
	key.gpus = t->gpus;
	key.memory = t->memory;
	key.walltime = t->walltime;
	i = shape_slot(&key);
	if (sd.shape_index[i])
		return sd.shape_index[i];
	s = xmalloc(sizeof *s);
	*s = key;
	sd.shape_index[i] = s;
	sd.shapes = xreallocarray(sd.shapes, sd.nshapes + 1, sizeof *sd.shapes);
	sd.shapes[sd.nshapes++] = s;
	return s;
}

/*
 * Drop sd.shapes[k], whose heap is empty (so no task of it is queued):
 * out of the index (linear probing: the entries after it that could
 * not sit in their own slot move back), then out of the list, whose
 * last entry takes its place.
 */
static void
shape_drop(size_t k)
{
	struct shape *s = sd.shapes[k];
	size_t mask = sd.shape_index_cap - 1, i, j, home;

	i = shape_slot(s);
	sd.shape_index[i] = NULL;
	for (j = (i + 1) & mask; sd.shape_index[j]; j = (j + 1) & mask) {
		home = shape_hash(sd.shape_index[j]) & mask;
		/* stays if its home lies cyclically in (i, j] */
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		sd.shape_index[i] = sd.shape_index[j];
		sd.shape_index[j] = NULL;
		i = j;
	}
	free(s->heap);
	free(s);
	sd.shapes[k] = sd.shapes[--sd.nshapes];
}

static uint64_t
heap_key(uint64_t id, int prio)
{
	return ((uint64_t)(TASK_PRIORITY_MAX - prio) << 40) | id;
}

static void
heap_push(struct shape *s, uint64_t key)
{
	size_t i, parent;

	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->heap = xreallocarray(s->heap, s->cap, sizeof *s->heap);
	}
	i = s->n++;
	while (i > 0) {
		parent = (i - 1) / 2;
		if (s->heap[parent] <= key)
			break;
		s->heap[i] = s->heap[parent];
		i = parent;
	}
	s->heap[i] = key;
}

static uint64_t
heap_pop(struct shape *s)
{
	uint64_t top = s->heap[0], last = s->heap[--s->n];
	size_t i = 0, c;

	while ((c = 2 * i + 1) < s->n) {
		if (c + 1 < s->n && s->heap[c + 1] < s->heap[c])
			c++;
		if (last <= s->heap[c])
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (s->n)
		s->heap[i] = last;
	if (s->n == 0 && s->cap > 1024) {
		free(s->heap);
		s->heap = NULL;
		s->cap = 0;
	}
	return top;
}

void
shape_push(uint64_t id, struct task *t)
{
	task_set_state(t, T_QUEUED);
	heap_push(shape_for(t), heap_key(id, t->prio));
	sd.place_dirty = 1;
}

void
shape_probe(const struct shape *s, struct task *probe)
{
	memset(probe, 0, sizeof *probe);
	probe->cores = s->cores;
	probe->gpus = s->gpus;
	probe->memory = s->memory;
	probe->walltime = s->walltime;
}

static int
shape_fits(const struct worker *w, const struct shape *s, int ahead)
{
	struct task probe;

	shape_probe(s, &probe);
	return worker_fits(w, &probe, ahead);
}

/*
 * Queued tasks that no worker could run, registered or on its way, nor
 * any kind with a size asked (spoold.h): how many, and their shapes, up
 * to max of them, in v (*nv of them; each shape's live is its count).
 * None while there is no worker (but those gone or draining) and
 * nothing is asked: that is no workers, not tasks too big, and workers
 * started by hand may be yet to come.
 */
uint64_t
shapes_unfit(const struct shape **v, size_t max, size_t *nv)
{
	struct task probe;
	uint64_t n = 0;
	size_t i, k;
	int any = 0, fits;

	*nv = 0;
	for (k = 0; k < sd.nworkers && !any; k++)
		any = sd.workers[k] && !sd.workers[k]->gone &&
		    !sd.workers[k]->draining;
	if (!any && !scale_asked())
		return 0;
	for (i = 0; i < sd.nshapes; i++) {
		if (sd.shapes[i]->live == 0)
			continue;
		shape_probe(sd.shapes[i], &probe);
		fits = scale_could_start(&probe);
		for (k = 0; k < sd.nworkers && !fits; k++)
			fits = sd.workers[k] &&
			    worker_could_run(sd.workers[k], &probe);
		if (!fits) {
			if (*nv < max)
				v[(*nv)++] = sd.shapes[i];
			n += sd.shapes[i]->live;
		}
	}
	return n;
}

/* Drop heap heads that are no longer queued (cancelled meanwhile). */
static void
shape_clean(struct shape *s)
{
	struct task *t;

	while (s->n) {
		t = task_get(s->heap[0] & ((1ULL << 40) - 1));
		if (t && t->state == T_QUEUED)
			return;
		(void)heap_pop(s);
	}
}

int
shape_pop_best(struct worker *w, int ahead, uint64_t *id)
{
	struct shape *best = NULL, *s;
	size_t i;

	for (i = 0; i < sd.nshapes; i++) {
		s = sd.shapes[i];
		shape_clean(s);
		if (s->n == 0 && s->live == 0) {
			shape_drop(i--);	/* (best is another one) */
			continue;
		}
		if (s->n == 0 || (best && best->heap[0] <= s->heap[0]))
			continue;
		if (shape_fits(w, s, ahead))
			best = s;
	}
	if (best == NULL)
		return 0;
	*id = heap_pop(best) & ((1ULL << 40) - 1);
	return 1;
}

/* Slots of bundles whose tasks are all final, for reuse. */
static uint32_t *free_slots;
static size_t nfree, free_cap;
/* Bundle files to remove, oldest first (recovery removes any left). */
struct removal {
	uint64_t first;
	uint64_t due;		/* ms (now_ms) */
};
static struct removal *removals;
static size_t rm_head, rm_n, rm_cap;

uint32_t
bundle_add_mem(uint64_t first, uint32_t count)
{
	struct bundle *b;

	if (nfree > 0) {
		b = &sd.bundles[free_slots[--nfree]];
		b->first = first;
		b->count = count;
		b->live = count;
		b->fd = -1;
		return (uint32_t)(b - sd.bundles);
	}
	if (sd.nbundles == sd.bundles_cap) {
		sd.bundles_cap = sd.bundles_cap ? sd.bundles_cap * 2 : 64;
		sd.bundles = xreallocarray(sd.bundles, sd.bundles_cap,
		    sizeof *sd.bundles);
	}
	b = &sd.bundles[sd.nbundles];
	b->first = first;
	b->count = count;
	b->live = count;
	b->fd = -1;
	return (uint32_t)sd.nbundles++;
}

static int
bundle_fd(struct bundle *b)
{
	char name[32];

	if (b->fd >= 0)
		return b->fd;
	snprintf(name, sizeof name, "%" PRIu64, b->first);
	b->fd = fsop_openfile(sd.sp.fd[SD_SPECS], name, O_RDONLY, 0);
	return b->fd;
}

int
bundle_read_spec(struct task *t, uint64_t id, struct task_spec *spec)
{
	struct bundle *b = &sd.bundles[t->bundle];
	struct rec_reader r;
	char *data;
	ssize_t n;
	int fd;

	if ((fd = bundle_fd(b)) < 0) {
		if (errno == ENOENT) {
			msg_warn("open: specs/%" PRIu64 ": %m", b->first);
			return -1;
		}
		/* ESTALE, EIO, EMFILE: not the spec's fault; try later */
		msg_once("spec", "open: specs/%" PRIu64 ": %m (trying again)",
		    b->first);
		return -2;
	}
	data = xmalloc(t->len);
	n = fsop_pread(fd, data, t->len, (off_t)t->offset);
	if (n < 0) {
		msg_once("spec", "read: specs/%" PRIu64 " at %u: %m (trying "
		    "again)", b->first, t->offset);
		free(data);
		return -2;
	}
	if (n != (ssize_t)t->len) {
		msg_warn("read: specs/%" PRIu64 " at %u: short read", b->first,
		    t->offset);
		free(data);
		return -1;
	}
	msg_clear("spec");
	task_init(spec);
	rec_reader_init(&r, data, t->len);
	if (task_decode(&r, spec) < 0 || spec->id != id) {
		msg_warn("specs/%" PRIu64 ": record of task %" PRIu64
		    " is damaged: %s", b->first, id, r.why ? r.why : "wrong id");
		task_free(spec);
		free(data);
		return -1;
	}
	free(data);
	if (b->count == 1) {	/* one-task bundles: do not hoard descriptors */
		close(b->fd);
		b->fd = -1;
	}
	return 0;
}

/* A bundle with no live task: close its file, queue its removal, free
 * its slot. */
void
bundle_release(uint32_t idx)
{
	struct bundle *b = &sd.bundles[idx];

	if (b->fd >= 0) {
		close(b->fd);
		b->fd = -1;
	}
	if (rm_head > 0 && rm_head == rm_n)
		rm_head = rm_n = 0;
	if (rm_n == rm_cap) {
		if (rm_head > 0) {	/* slide the queue down first */
			memmove(removals, removals + rm_head,
			    (rm_n - rm_head) * sizeof *removals);
			rm_n -= rm_head;
			rm_head = 0;
		}
		if (rm_n == rm_cap) {
			rm_cap = rm_cap ? rm_cap * 2 : 64;
			removals = xreallocarray(removals, rm_cap,
			    sizeof *removals);
		}
	}
	removals[rm_n].first = b->first;
	removals[rm_n].due = now_ms() + RELEASE_DELAY_MS;
	rm_n++;
	if (nfree == free_cap) {
		free_cap = free_cap ? free_cap * 2 : 64;
		free_slots = xreallocarray(free_slots, free_cap,
		    sizeof *free_slots);
	}
	free_slots[nfree++] = idx;
}

/* Is bundle first in memory with a task not final yet?  (Looked up
 * only after a failed flush: accept_respec.) */
int
bundle_live(uint64_t first)
{
	size_t i;

	for (i = 0; i < sd.nbundles; i++)
		if (sd.bundles[i].first == first && sd.bundles[i].live > 0)
			return 1;
	return 0;
}

/*
 * Remove the bundle files whose time has come (all of them when all is
 * set: spoold is stopping).  One that cannot be removed (a stale handle,
 * EIO) stops the pass and is tried again at the next one.
 */
void
bundle_removals(int all)
{
	uint64_t now = now_ms();
	size_t from = rm_head;
	char name[32];

	while (rm_head < rm_n && (all || removals[rm_head].due <= now)) {
		snprintf(name, sizeof name, "%" PRIu64, removals[rm_head].first);
		if (fsop_unlink(sd.sp.fd[SD_SPECS], name) < 0 &&
		    errno != ENOENT) {
			msg_once("bundle-rm", "unlink: specs/%s: %m (again at "
			    "the next rescan, or at the next start)", name);
			break;
		}
		rm_head++;
	}
	if (rm_head > from)
		msg_clear("bundle-rm");
}

/* A task of this bundle became final; remove the file when all are. */
void
bundle_task_final(struct task *t)
{
	struct bundle *b = &sd.bundles[t->bundle];

	if (b->live == 0)
		msg_panic("bundle %" PRIu64 ": live count underflow", b->first);
	if (--b->live == 0)
		bundle_release(t->bundle);
}
