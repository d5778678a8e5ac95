/*
 * test_deps.c - spoold's dependency resolution (spoold/deps.c) on its
 * real task table and ready heaps (spoold/table.c), with stubs for the
 * rest of spoold that record what they were asked to do: finish_cancel
 * (marks the task final and failed, then reports it to deps_final as
 * finish.c does), finish_final_exists (results "on disk" set per test),
 * worker_fits, worker_could_run, scale_asked and scale_could_start (by
 * cores alone: a worker's, and a kind's asked, set per test), and the
 * global sd.
 *
 * Covered: a task without dependencies is queued at once; a task
 * waiting on two dependencies is queued only when both end well, in
 * either order; a failed dependency cancels its dependents with a
 * reason naming it (once, however many of its dependencies fail);
 * dependencies already final, known only from their result, or not
 * yet submitted (and never submitted: deps_check_holes); a chain of
 * 100000 tasks cancelled entirely when its first fails (a work list,
 * no recursion); a dependency listed twice counting once; fan-out; and
 * the dependency map keeping every entry through growth and deletions
 * of many distinct keys; and shapes found again by their numbers and
 * dropped once empty; queued tasks no worker or kind could run counted
 * by shape (shapes_unfit).  Each test uses its own range of IDs, because
 * the map in deps.c lives for the whole process.
 */
#include "unit.h"
#include "../../spoold/spoold.h"

struct spoold sd;

/* ---- stubs ---- */

struct cancel_call {
	uint64_t id;
	enum result_reason reason;
	char	why[96];
};

static struct cancel_call *cancels;
static size_t ncancels, cancels_cap;
static unsigned long fits_calls;

struct disk_result {
	uint64_t id;
	enum result_state state;
	enum result_reason reason;
};

static struct disk_result disk[16];
static size_t ndisk;

int
finish_cancel(uint64_t id, struct task *t, const char *why,
    enum result_reason reason)
{
	struct cancel_call *c;

	if (ncancels == cancels_cap) {
		cancels_cap = cancels_cap ? cancels_cap * 2 : 1024;
		cancels = xreallocarray(cancels, cancels_cap, sizeof *cancels);
	}
	c = &cancels[ncancels++];
	c->id = id;
	c->reason = reason;
	snprintf(c->why, sizeof c->why, "%s", why);
	/* What finish_final -> task_became_final does. */
	task_set_state(t, T_FINAL);
	t->flags |= TF_FAILED;
	deps_final(id, 0, "cancelled (dependency)");
	return 0;
}

int
finish_final_exists(uint64_t id, struct result *r)
{
	size_t i;

	for (i = 0; i < ndisk; i++)
		if (disk[i].id == id) {
			if (r) {
				result_init(r);
				r->id = id;
				r->state = disk[i].state;
				r->reason = disk[i].reason;
			}
			return 1;
		}
	return 0;
}

int
worker_fits(const struct worker *w, const struct task *t, int ahead)
{
	(void)w;
	(void)t;
	(void)ahead;
	fits_calls++;
	return 1;
}

/* a worker could run a task of its cores or fewer (not gone) */
int
worker_could_run(const struct worker *w, const struct task *t)
{
	return !w->gone && t->cores <= w->info.cores;
}

static int kind_asked;		/* a kind has a size asked, */
static uint16_t kind_cores;	/* of jobs of these cores */

int
scale_asked(void)
{
	return kind_asked;
}

int
scale_could_start(const struct task *t)
{
	return kind_asked && t->cores <= kind_cores;
}

/* ---- helpers ---- */

static int
reset(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sd.npages; i++)
		free(sd.pages[i]);
	free(sd.pages);
	for (i = 0; i < sd.nshapes; i++) {
		free(sd.shapes[i]->heap);
		free(sd.shapes[i]);
	}
	free(sd.shapes);
	free(sd.shape_index);
	memset(&sd, 0, sizeof sd);
	free(cancels);
	cancels = NULL;
	ncancels = cancels_cap = 0;
	ndisk = 0;
	fits_calls = 0;
	kind_asked = 0;
	kind_cores = 0;
	return 0;
}

/* Accept task id with these dependencies (n of them). */
static struct task *
add(uint64_t id, const uint64_t *after, size_t n)
{
	struct task_spec spec;
	struct task *t;

	task_init(&spec);
	spec.id = id;
	if (n) {
		spec.after = xreallocarray(NULL, n, sizeof *spec.after);
		memcpy(spec.after, after, n * sizeof *spec.after);
		spec.nafter = n;
	}
	t = task_add(id);
	deps_add(id, t, &spec);
	task_free(&spec);
	return t;
}

static struct task *
add0(uint64_t id)
{
	return add(id, NULL, 0);
}

static struct task *
add1(uint64_t id, uint64_t dep)
{
	return add(id, &dep, 1);
}

/* A task ends: as finish.c reports it. */
static void
finish(uint64_t id, int ok, const char *how)
{
	struct task *t = task_get(id);

	TCHECK(t != NULL, "task %llu unknown", (unsigned long long)id);
	task_set_state(t, T_FINAL);
	if (!ok)
		t->flags |= TF_FAILED;
	deps_final(id, ok, how);
}

static int
state_of(uint64_t id)
{
	struct task *t = task_get(id);

	return t ? t->state : T_NONE;
}

static const struct cancel_call *
cancel_of(uint64_t id)
{
	size_t i;

	for (i = 0; i < ncancels; i++)
		if (cancels[i].id == id)
			return &cancels[i];
	return NULL;
}

static size_t
cancels_for(uint64_t id)
{
	size_t i, n = 0;

	for (i = 0; i < ncancels; i++)
		n += cancels[i].id == id;
	return n;
}

static size_t
heap_total(void)
{
	size_t i, n = 0;

	for (i = 0; i < sd.nshapes; i++)
		n += sd.shapes[i]->n;
	return n;
}

#define assert_state(id, st) do {					\
	int s_ = state_of(id);						\
	if (s_ != (st))							\
		TFAIL("task %llu: state %d, want %s (%d)",		\
		    (unsigned long long)(id), s_, #st, (st));		\
} while (0)

/* ---- tests ---- */

static void
test_no_deps_is_queued(void **state)
{
	struct task *t;

	(void)state;
	t = add0(1);
	assert_state(1, T_QUEUED);
	assert_int_equal(t->ndeps, 0);
	assert_false(t->flags & TF_DEPS);
	assert_int_equal(sd.c.queued, 1);
	assert_int_equal(sd.c.waiting, 0);
	assert_int_equal(heap_total(), 1);
	assert_int_equal(ncancels, 0);
	assert_true(sd.place_dirty);
}

static void
test_two_deps(void **state)
{
	static const uint64_t deps[] = { 100, 101 };
	struct task *t;
	int order;

	(void)state;
	for (order = 0; order < 2; order++) {
		uint64_t base = 100 + 10 * (uint64_t)order;
		uint64_t d[2] = { deps[0] + 10 * (uint64_t)order,
		    deps[1] + 10 * (uint64_t)order };

		add0(d[0]);
		add0(d[1]);
		t = add(base + 2, d, 2);
		assert_state(base + 2, T_WAITING);
		assert_int_equal(t->ndeps, 2);
		assert_true(t->flags & TF_DEPS);
		assert_int_equal(sd.c.waiting, 1);

		finish(d[order], 1, "done (exit)");
		assert_state(base + 2, T_WAITING);
		assert_int_equal(t->ndeps, 1);
		finish(d[1 - order], 1, "done (exit)");
		assert_state(base + 2, T_QUEUED);
		assert_int_equal(t->ndeps, 0);
		assert_int_equal(sd.c.waiting, 0);
		assert_int_equal(ncancels, 0);
	}
	/* A dependency that is finished again (stale news) changes nothing. */
	finish(100, 1, "done (exit)");
	assert_state(102, T_QUEUED);
}

static void
test_failed_dep_cancels(void **state)
{
	const struct cancel_call *c;

	(void)state;
	add0(200);
	add1(201, 200);
	add1(202, 200);
	finish(200, 0, "failed (exit 3)");
	assert_state(201, T_FINAL);
	assert_state(202, T_FINAL);
	c = cancel_of(201);
	assert_non_null(c);
	assert_int_equal(c->reason, RR_DEPENDENCY);
	assert_string_equal(c->why, "dependency 200 failed (exit 3)");
	assert_string_equal(cancel_of(202)->why, "dependency 200 failed (exit 3)");
	assert_int_equal(ncancels, 2);
	assert_int_equal(sd.c.waiting, 0);
}

/* Two dependencies: one fails, the other ends later either way. */
static void
test_one_of_two_fails(void **state)
{
	static const struct {
		int second_ok;
	} rows[] = { { 1 }, { 0 } };
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		uint64_t base = 300 + 10 * i, d[2] = { base, base + 1 };
		char want[64];

		add0(d[0]);
		add0(d[1]);
		add(base + 2, d, 2);
		finish(d[1], 0, "failed (memory)");
		assert_state(base + 2, T_FINAL);
		snprintf(want, sizeof want, "dependency %llu failed (memory)",
		    (unsigned long long)d[1]);
		assert_string_equal(cancel_of(base + 2)->why, want);
		finish(d[0], rows[i].second_ok, "failed (exit 1)");
		TCHECK(cancels_for(base + 2) == 1, "row %zu: cancelled %zu "
		    "times", i, cancels_for(base + 2));
		assert_state(base + 2, T_FINAL);
	}
	assert_int_equal(heap_total(), 4);	/* only the four dependencies */
}

/* Cancelling cascades: the grandchild's reason names its own parent. */
static void
test_cascade_reasons(void **state)
{
	(void)state;
	add0(400);
	add1(401, 400);
	add1(402, 401);
	add1(403, 402);
	finish(400, 0, "cancelled (cancelled)");
	assert_string_equal(cancel_of(401)->why,
	    "dependency 400 cancelled (cancelled)");
	assert_string_equal(cancel_of(402)->why,
	    "dependency 401 cancelled (dependency)");
	assert_string_equal(cancel_of(403)->why,
	    "dependency 402 cancelled (dependency)");
	assert_int_equal(ncancels, 3);
}

/* Dependencies already final when the dependent is accepted. */
static void
test_dep_already_final(void **state)
{
	(void)state;
	add0(500);
	add0(501);
	finish(500, 1, "done (exit)");
	finish(501, 0, "failed (exit 2)");

	add1(502, 500);
	assert_state(502, T_QUEUED);
	add1(503, 501);
	assert_state(503, T_FINAL);
	assert_int_equal(cancel_of(503)->reason, RR_DEPENDENCY);
	assert_string_equal(cancel_of(503)->why,
	    "dependency 501 did not succeed");
	/* One good and one bad: cancelled, naming the bad one. */
	{
		uint64_t d[2] = { 500, 501 };

		add(504, d, 2);
		assert_state(504, T_FINAL);
		assert_contains(cancel_of(504)->why, "dependency 501");
	}
}

/* Dependencies known only from their result on disk. */
static void
test_dep_result_on_disk(void **state)
{
	(void)state;
	disk[ndisk++] = (struct disk_result){ 600, RS_DONE, RR_EXIT };
	disk[ndisk++] = (struct disk_result){ 601, RS_FAILED, RR_WALLTIME };
	disk[ndisk++] = (struct disk_result){ 602, RS_REJECTED, RR_REJECTED };

	add1(610, 600);
	assert_state(610, T_QUEUED);
	add1(611, 601);
	assert_state(611, T_FINAL);
	assert_string_equal(cancel_of(611)->why,
	    "dependency 601 failed (walltime)");
	add1(612, 602);
	assert_string_equal(cancel_of(612)->why,
	    "dependency 602 rejected (rejected)");
}

/* Claimed but not accepted yet: wait; accepted later and done: run. */
static void
test_dep_not_yet_submitted(void **state)
{
	struct task *t;

	(void)state;
	t = add1(710, 700);
	assert_state(710, T_WAITING);
	assert_int_equal(t->ndeps, 1);
	add0(700);			/* its submission arrives */
	assert_state(710, T_WAITING);
	finish(700, 1, "done (exit)");
	assert_state(710, T_QUEUED);
}

/* Never submitted: after DEPS_HOLE_MS, dependents are cancelled. */
static void
test_dep_never_submitted(void **state)
{
	(void)state;
	sd.now = 1000000;
	add1(810, 800);
	add1(811, 801);
	disk[ndisk++] = (struct disk_result){ 801, RS_DONE, RR_EXIT };

	sd.now += 60 * 1000;		/* a minute: still waiting */
	deps_check_holes();
	assert_state(810, T_WAITING);
	assert_state(811, T_WAITING);
	assert_int_equal(ncancels, 0);

	sd.now += 5 * 60 * 1000;	/* past the hole timeout */
	deps_check_holes();
	assert_state(810, T_FINAL);
	assert_contains(cancel_of(810)->why, "dependency 800 was never "
	    "submitted");
	/* 801 turned out to have a result (done): its dependent runs. */
	assert_state(811, T_QUEUED);
	assert_int_equal(ncancels, 1);
}

static void
test_duplicate_dep_counts_once(void **state)
{
	static const uint64_t twice[] = { 900, 900 };
	static const uint64_t thrice[] = { 901, 900, 901, 900, 901 };
	struct task *t;
	size_t before;

	(void)state;
	add0(900);
	add0(901);
	t = add(910, twice, 2);
	assert_int_equal(t->ndeps, 1);
	t = add(911, thrice, 5);
	assert_int_equal(t->ndeps, 2);
	before = heap_total();
	finish(900, 1, "done (exit)");
	assert_state(910, T_QUEUED);
	assert_state(911, T_WAITING);
	assert_int_equal(task_get(911)->ndeps, 1);
	finish(901, 1, "done (exit)");
	assert_state(911, T_QUEUED);
	assert_int_equal(heap_total(), before + 2);	/* each queued once */

	/* Listed twice and failing: cancelled once. */
	add0(920);
	add(921, (const uint64_t[]){ 920, 920 }, 2);
	finish(920, 0, "failed (exit 1)");
	assert_int_equal(cancels_for(921), 1);
}

static void
test_fan_out(void **state)
{
	enum { N = 3000, DEP = 1000, FIRST = 1001 };
	size_t i;

	(void)state;
	add0(DEP);
	for (i = 0; i < N; i++)
		add1(FIRST + i, DEP);
	assert_int_equal(sd.c.waiting, N);
	finish(DEP, 0, "failed (signal)");
	assert_int_equal(ncancels, N);
	for (i = 0; i < N; i++)
		assert_state(FIRST + i, T_FINAL);
	assert_int_equal(sd.c.waiting, 0);
}

/* 100000 tasks, each after the one before; the first fails. */
static void
test_long_chain_cancelled(void **state)
{
	enum { N = 100000 };
	const uint64_t base = 1000000;
	char want[96];
	size_t i;

	(void)state;
	add0(base);
	for (i = 1; i < N; i++)
		add1(base + i, base + i - 1);
	assert_int_equal(sd.c.waiting, N - 1);
	finish(base, 0, "failed (exit 1)");
	assert_int_equal(ncancels, N - 1);
	assert_int_equal(sd.c.waiting, 0);
	for (i = 1; i < N; i++) {
		const struct cancel_call *c = &cancels[i - 1];

		TCHECK(c->id == base + i, "cancel %zu was for %llu", i - 1,
		    (unsigned long long)c->id);
		snprintf(want, sizeof want, "dependency %llu %s",
		    (unsigned long long)(base + i - 1),
		    i == 1 ? "failed (exit 1)" : "cancelled (dependency)");
		TCHECK(strcmp(c->why, want) == 0, "task %llu: \"%s\", want "
		    "\"%s\"", (unsigned long long)c->id, c->why, want);
		TCHECK(c->reason == RR_DEPENDENCY, "task %llu: reason %d",
		    (unsigned long long)c->id, c->reason);
		if (state_of(base + i) != T_FINAL)
			TFAIL("task %llu not final", (unsigned long long)(base + i));
	}
}

/* The same chain, ending well: each link is queued in turn. */
static void
test_long_chain_done(void **state)
{
	enum { N = 20000 };
	const uint64_t base = 2000000;
	size_t i;

	(void)state;
	add0(base);
	for (i = 1; i < N; i++)
		add1(base + i, base + i - 1);
	for (i = 0; i + 1 < N; i++) {
		finish(base + i, 1, "done (exit)");
		if (state_of(base + i + 1) != T_QUEUED)
			TFAIL("link %zu not queued", i + 1);
		if (i + 2 < N && state_of(base + i + 2) != T_WAITING)
			TFAIL("link %zu queued early", i + 2);
	}
	assert_int_equal(ncancels, 0);
}

/*
 * Many distinct keys: the map grows many times, and entries are
 * deleted in a scrambled order (backward-shift deletion must keep
 * every other entry findable).
 */
static void
test_map_survives_growth(void **state)
{
	enum { K = 6000 };
	const uint64_t dbase = 3000000, tbase = 3100000;
	unsigned char *done = xcalloc(K, 1);
	size_t i, j, step;

	(void)state;
	for (i = 0; i < K; i++)
		add0(dbase + i);
	/* Two dependents per key for the even keys, one for the odd. */
	for (i = 0; i < K; i++) {
		add1(tbase + 2 * i, dbase + i);
		if (i % 2 == 0)
			add1(tbase + 2 * i + 1, dbase + i);
	}
	for (step = 0; step < K; step++) {
		i = (step * 4099) % K;	/* 4099 is prime, K is not a multiple */
		finish(dbase + i, 1, "done (exit)");
		done[i] = 1;
		if (state_of(tbase + 2 * i) != T_QUEUED)
			TFAIL("step %zu: dependent of key %zu not queued", step, i);
		if (i % 2 == 0 && state_of(tbase + 2 * i + 1) != T_QUEUED)
			TFAIL("step %zu: 2nd dependent of key %zu not queued",
			    step, i);
		if (step % 500 == 0)
			for (j = 0; j < K; j++)
				if (state_of(tbase + 2 * j) !=
				    (done[j] ? T_QUEUED : T_WAITING))
					TFAIL("step %zu: key %zu in the wrong "
					    "state", step, j);
	}
	for (j = 0; j < K; j++)
		assert_int_equal(done[j], 1);
	assert_int_equal(sd.c.waiting, 0);
	assert_int_equal(ncancels, 0);
	free(done);
}

/* The ready heaps give priority first, then FIFO (table.c). */
static void
test_queue_order(void **state)
{
	static const struct {
		uint64_t id;
		int16_t prio;
	} in[] = {
		{ 4000, 0 }, { 4001, 5 }, { 4002, 0 }, { 4003, -3 }, { 4004, 5 },
		{ 4005, 1000 }, { 4006, -1000 },
	};
	static const uint64_t want[] = {
		4005, 4001, 4004, 4000, 4002, 4003, 4006,
	};
	struct worker w;
	uint64_t id;
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(in); i++) {
		struct task *t = task_add(in[i].id);
		struct task_spec spec;

		t->prio = in[i].prio;
		task_init(&spec);
		deps_add(in[i].id, t, &spec);
	}
	memset(&w, 0, sizeof w);
	for (i = 0; i < NELEM(want); i++) {
		TCHECK(shape_pop_best(&w, 1, &id) == 1, "pop %zu: empty", i);
		TCHECK(id == want[i], "pop %zu: %llu, want %llu", i,
		    (unsigned long long)id, (unsigned long long)want[i]);
	}
	assert_int_equal(shape_pop_best(&w, 1, &id), 0);
	assert_true(fits_calls > 0);
}

/* Queue task id, with no dependencies, of these cores and walltime. */
static void
add_shaped(uint64_t id, uint16_t cores, uint32_t walltime)
{
	struct task *t = task_add(id);
	struct task_spec spec;

	t->cores = cores;
	t->walltime = walltime;
	task_init(&spec);
	deps_add(id, t, &spec);
}

/*
 * Tasks of many shapes (a walltime each): one shape each, found again
 * by later tasks of the same shape (through the index, also after
 * shapes around them were dropped), and dropped once found empty, so
 * that shapes do not pile up for the life of the daemon.  The order of
 * the pops stays the ID order across shapes.
 */
static void
test_shapes_found_and_dropped(void **state)
{
	struct worker w;
	uint64_t id, want = 5000, live;
	size_t i;

	(void)state;
	memset(&w, 0, sizeof w);
	for (i = 0; i < 2000; i++)	/* two tasks a shape */
		add_shaped(5000 + i, 0, 1 + i % 1000);
	assert_int_equal(sd.nshapes, 1000);
	for (i = 0, live = 0; i < sd.nshapes; i++) {
		TCHECK(sd.shapes[i]->live == 2, "shape %u s: %llu queued",
		    sd.shapes[i]->walltime,
		    (unsigned long long)sd.shapes[i]->live);
		live += sd.shapes[i]->live;
	}
	assert_int_equal(live, 2000);
	for (i = 0; i < 1500; i++, want++) {	/* shapes 1-500 emptied */
		TCHECK(shape_pop_best(&w, 1, &id) == 1 && id == want,
		    "pop %zu: %llu, want %llu", i, (unsigned long long)id,
		    (unsigned long long)want);
		task_set_state(task_get(id), T_PLACED);
	}
	/* the empty ones were dropped as found; 500's by the next pop */
	assert_int_equal(sd.nshapes, 501);
	for (i = 0; i < 1000; i++)	/* every shape again */
		add_shaped(8000 + i, 0, 1 + i % 1000);
	assert_int_equal(sd.nshapes, 1000);
	assert_int_equal(heap_total(), 1500);
	for (i = 0; i < 1500; i++) {
		want = i < 500 ? 6500 + i : 8000 + (i - 500);
		TCHECK(shape_pop_best(&w, 1, &id) == 1 && id == want,
		    "pop %zu: %llu, want %llu", 1500 + i,
		    (unsigned long long)id, (unsigned long long)want);
		task_set_state(task_get(id), T_PLACED);
	}
	assert_int_equal(shape_pop_best(&w, 1, &id), 0);
	assert_int_equal(sd.nshapes, 0);
	assert_int_equal(sd.c.queued, 0);
}

/*
 * Queued tasks no worker could run, registered or on its way, nor a
 * kind with a size asked: none while there is neither a worker nor a
 * size asked (workers started by hand may come); counted by shape
 * against the workers that are not gone and the kinds asked, with the
 * shapes of them, up to as many as asked; a task placed no longer
 * counts.
 */
static void
test_unfit_shapes(void **state)
{
	struct worker small, big, *ws[2] = { &small, &big };
	const struct shape *v[4];
	size_t nv;
	uint64_t i;

	(void)state;
	for (i = 0; i < 3; i++)
		add_shaped(9000 + i, 1, 0);
	add_shaped(9003, 4, 0);
	add_shaped(9004, 4, 0);
	add_shaped(9005, 8, 0);
	nv = 9;
	assert_int_equal(shapes_unfit(v, 4, &nv), 0);	/* nothing at all */
	assert_int_equal(nv, 0);
	memset(&small, 0, sizeof small);
	memset(&big, 0, sizeof big);
	small.info.cores = 2;
	big.info.cores = 4;
	big.gone = 1;
	sd.workers = ws;
	sd.nworkers = 1;
	assert_int_equal(shapes_unfit(v, 4, &nv), 3);
	assert_int_equal(nv, 2);			/* 4 cores, 8 cores */
	assert_int_equal(v[0]->cores + v[1]->cores, 12);
	assert_int_equal(v[0]->live + v[1]->live, 3);
	assert_int_equal(v[0]->cores == 4 ? v[0]->live : v[1]->live, 2);
	assert_int_equal(shapes_unfit(v, 1, &nv), 3);	/* one listed */
	assert_int_equal(nv, 1);
	sd.nworkers = 2;				/* a gone one: no help */
	assert_int_equal(shapes_unfit(v, 4, &nv), 3);
	small.draining = 1;		/* nothing but gone and draining */
	assert_int_equal(shapes_unfit(v, 4, &nv), 0);
	assert_int_equal(nv, 0);
	small.draining = 0;
	big.gone = 0;
	assert_int_equal(shapes_unfit(v, 4, &nv), 1);
	assert_int_equal(nv, 1);
	assert_int_equal(v[0]->cores, 8);
	assert_int_equal(v[0]->live, 1);
	kind_asked = 1;
	kind_cores = 4;					/* asked, too small */
	assert_int_equal(shapes_unfit(v, 4, &nv), 1);
	kind_cores = 8;
	assert_int_equal(shapes_unfit(v, 4, &nv), 0);
	kind_cores = 4;
	sd.nworkers = 0;		/* no worker, a kind asked: it counts */
	assert_int_equal(shapes_unfit(v, 4, &nv), 1);
	task_set_state(task_get(9005), T_PLACED);
	assert_int_equal(shapes_unfit(v, 4, &nv), 0);
	assert_int_equal(nv, 0);
	sd.workers = NULL;
}

int
main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, reset, reset)
	const struct CMUnitTest tests[] = {
		T(test_no_deps_is_queued),
		T(test_two_deps),
		T(test_failed_dep_cancels),
		T(test_one_of_two_fails),
		T(test_cascade_reasons),
		T(test_dep_already_final),
		T(test_dep_result_on_disk),
		T(test_dep_not_yet_submitted),
		T(test_dep_never_submitted),
		T(test_duplicate_dep_counts_once),
		T(test_fan_out),
		T(test_long_chain_cancelled),
		T(test_long_chain_done),
		T(test_map_survives_growth),
		T(test_queue_order),
		T(test_shapes_found_and_dropped),
		T(test_unfit_shapes),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
