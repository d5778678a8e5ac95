/*
 * test_place.c - how many tasks spoold gives a worker to hold
 * (spoold/place.c: worker_fits, worker_note_run), with stubs for the
 * rest of spoold that place.c calls.  Each stub that a test does not
 * expect to be called fails it.
 *
 * Covered: a worker whose tasks' length is not known yet holds up to
 * twice its capacity, and beyond its capacity only in the pass that
 * places ahead; tasks known to be shorter than the group commit window
 * let it hold more, up to 64 times its capacity, in proportion to how
 * short they are, and 64 times at once on a worker spoold does not
 * watch (another host, or no inotify); a task shorter than the
 * results' millisecond (0 ms) is short like any other (it left the
 * worker "not known yet", so a spoold whose first sample was a `true`
 * that took under 1 ms held only two such tasks per slot); the mean
 * follows the recent tasks; a result that never started does not
 * count; a worker job on its way
 * keeps tasks off a busy worker whose tasks are not known to be short,
 * but not off one whose tasks are; and a worker that is gone, draining
 * or ending before the task's walltime, or too small for the task, is
 * given nothing; its end is judged in its own host's clock, through
 * the offset its beats showed, and not before one was read; memory
 * adds up in bytes.  worker_could_run asks the same of a worker with
 * nothing taken (what counts tasks as unfit: spoold(8), "Placement"):
 * a full worker could run a task it has no room for now, and one whose
 * clock is not known yet could run a task with a walltime.
 */
#include "unit.h"
#include "../../spoold/spoold.h"

struct spoold sd;

static int coming;	/* what scale_worker_coming answers */
static int unwatched;	/* what worker_unwatched answers */

int
worker_unwatched(const struct worker *wk)
{
	(void)wk;
	return unwatched;
}

/* ---- stubs: place_all's side, not used by these tests ---- */

int
scale_worker_coming(const struct task *t)
{
	(void)t;
	return coming;
}

int
bundle_read_spec(struct task *t, uint64_t id, struct task_spec *spec)
{
	(void)t;
	(void)id;
	(void)spec;
	fail_msg("bundle_read_spec called");
	return -1;
}

int
finish_final(uint64_t id, struct task *t, const struct result *r,
    const struct task_spec *spec)
{
	(void)id;
	(void)t;
	(void)r;
	(void)spec;
	fail_msg("finish_final called");
	return -1;
}

int
requeued_write(uint64_t id, struct task *t)
{
	(void)id;
	(void)t;
	fail_msg("requeued_write called");
	return -1;
}

void
finish_requeue(uint64_t id, struct task *t, const struct worker *w,
    enum requeue_how how, const char *why)
{
	(void)id;
	(void)t;
	(void)w;
	(void)how;
	(void)why;
	fail_msg("finish_requeue called");
}

int
shape_pop_best(struct worker *w, int ahead, uint64_t *id)
{
	(void)w;
	(void)ahead;
	(void)id;
	fail_msg("shape_pop_best called");
	return 0;
}

void
shape_push(uint64_t id, struct task *t)
{
	(void)id;
	(void)t;
	fail_msg("shape_push called");
}

struct task *
task_get(uint64_t id)
{
	(void)id;
	fail_msg("task_get called");
	return NULL;
}

void
worker_assign(struct worker *w, uint64_t id, struct task *t)
{
	(void)w;
	(void)id;
	(void)t;
	fail_msg("worker_assign called");
}

void
worker_unassign(struct worker *w, uint64_t id, struct task *t)
{
	(void)w;
	(void)id;
	(void)t;
	fail_msg("worker_unassign called");
}

int
worker_revoke_unclaimed(struct worker *w, uint64_t id, uint32_t att)
{
	(void)w;
	(void)id;
	(void)att;
	fail_msg("worker_revoke_unclaimed called");
	return -1;
}

/* ---- helpers ---- */

static struct worker w;
static struct task one;	/* a task of one core */

static int
reset(void **state)
{
	(void)state;
	memset(&w, 0, sizeof w);
	w.info.cores = 1;
	w.info.slots = 1;
	w.info.memory = 1ULL << 30;
	memset(&one, 0, sizeof one);
	one.cores = 1;
	coming = 0;
	unwatched = 0;
	return 0;
}

/* A task of w ended after ms milliseconds (as its result says). */
static void
ran(double ms)
{
	struct result r;

	result_init(&r);
	r.start = 1795954818.660;
	r.end = r.start + ms / 1000;
	worker_note_run(&w, &r);
	result_free(&r);
}

/* How many one-core tasks w takes, placing ahead, from empty. */
static uint32_t
holds(void)
{
	uint32_t n = 0;

	w.ntasks = w.cores_used = 0;
	while (n < 1000 && worker_fits(&w, &one, 1)) {
		w.ntasks++;
		w.cores_used += one.cores;
		n++;
	}
	w.ntasks = w.cores_used = 0;
	return n;
}

/* ---- tests ---- */

static void
test_unknown_length_holds_twice_its_capacity(void **state)
{
	(void)state;
	assert_int_equal(holds(), 2);
	/* the first pass fills free capacity only */
	assert_true(worker_fits(&w, &one, 0));
	w.ntasks = w.cores_used = 1;
	assert_false(worker_fits(&w, &one, 0));
	assert_true(worker_fits(&w, &one, 1));
	/* two slots, two cores: four */
	w.ntasks = w.cores_used = 0;
	w.info.cores = w.info.slots = 2;
	assert_int_equal(holds(), 4);
}

static void
test_a_task_under_a_millisecond_is_short(void **state)
{
	(void)state;
	ran(0);		/* start == end in the result */
	assert_int_equal(holds(), 64);
	assert_int_equal(w.runs, 1);
}

static void
test_shorter_tasks_hold_more(void **state)
{
	(void)state;
	ran(10);	/* 2 + 2 * 30 / 10 */
	assert_int_equal(holds(), 8);
	reset(NULL);
	ran(20);	/* 2 + 2 * 30 / 20 */
	assert_int_equal(holds(), 5);
	reset(NULL);
	ran(1);		/* 2 + 60, under the cap */
	assert_int_equal(holds(), 62);
	reset(NULL);
	ran(0.5);	/* 2 + 120: the cap */
	assert_int_equal(holds(), 64);
}

static void
test_long_tasks_keep_twice(void **state)
{
	(void)state;
	ran(WORKER_COMMIT_WINDOW_MS + 1);
	assert_int_equal(holds(), 2);
	ran(5000);
	assert_int_equal(holds(), 2);
	reset(NULL);
	ran(WORKER_COMMIT_WINDOW_MS - 1);	/* 2 + 2 * 30 / 29 */
	assert_int_equal(holds(), 4);
}

/*
 * A worker spoold does not watch (another host, or no inotify) holds 64
 * short tasks a slot whatever their length: its next assignment waits
 * for two rescans and spoold's round trips, not for the commit window.
 * Not known yet, or long: twice, as any other.
 */
static void
test_an_unwatched_worker_holds_short_tasks_to_the_cap(void **state)
{
	(void)state;
	unwatched = 1;
	assert_int_equal(holds(), 2);	/* not known yet */
	ran(20);			/* watched: 2 + 2 * 30 / 20 */
	assert_int_equal(holds(), 64);
	unwatched = 0;
	assert_int_equal(holds(), 5);
	unwatched = 1;
	ran(WORKER_COMMIT_WINDOW_MS * 40);	/* the mean now long */
	assert_int_equal(holds(), 2);
	reset(NULL);
	unwatched = 1;
	w.info.cores = w.info.slots = 2;
	ran(10);
	assert_int_equal(holds(), 128);	/* 64 a slot */
}

static void
test_the_mean_follows_the_recent_tasks(void **state)
{
	int i;

	(void)state;
	ran(1000);
	for (i = 0; i < 20 && holds() == 2; i++)
		ran(0);
	/* 1000 * 0.9^n < 30 from n = 34 on: not yet after 20 */
	assert_int_equal(holds(), 2);
	for (i = 0; i < 40 && holds() == 2; i++)
		ran(0);
	assert_int_equal(w.runs, 35);
	assert_true(holds() > 2);
	/* and back when they grow long again */
	for (i = 0; i < 100 && holds() > 2; i++)
		ran(1000);
	assert_int_equal(holds(), 2);
	assert_true(i < 100);
}

static void
test_a_result_that_never_started_does_not_count(void **state)
{
	struct result r;

	(void)state;
	result_init(&r);
	r.start = 0;
	r.end = 1795954818.660;
	worker_note_run(&w, &r);
	r.start = r.end + 1;	/* ended before it started */
	worker_note_run(&w, &r);
	result_free(&r);
	assert_int_equal(w.runs, 0);
	assert_int_equal(holds(), 2);
}

static void
test_a_coming_worker_keeps_tasks_off_a_busy_one(void **state)
{
	(void)state;
	coming = 1;
	assert_int_equal(holds(), 1);	/* free capacity only */
	ran(0);
	assert_int_equal(holds(), 64);	/* short: its prefetch */
}

static void
test_workers_that_cannot_take_it(void **state)
{
	struct task big = { .cores = 2 };
	struct task gpu = { .cores = 1, .gpus = 1 };
	struct task fat = { .cores = 1, .memory = 2048ULL << 20 };
	struct task slow = { .cores = 1, .walltime = 3600 };

	(void)state;
	assert_false(worker_fits(&w, &big, 1));
	assert_false(worker_fits(&w, &gpu, 1));
	assert_false(worker_fits(&w, &fat, 1));
	w.info.ends = now_unix() + 600;
	w.clock_known = 1;
	assert_false(worker_fits(&w, &slow, 1));
	assert_true(worker_fits(&w, &one, 1));
	w.info.ends = 0;
	assert_true(worker_fits(&w, &slow, 1));
	w.draining = 1;
	assert_false(worker_fits(&w, &one, 1));
	w.draining = 0;
	w.gone = 1;
	assert_false(worker_fits(&w, &one, 1));
	w.gone = 0;
	w.exited = 1;
	assert_false(worker_fits(&w, &one, 1));
}

/*
 * Memory is counted in bytes, as the worker counts it: two tasks of
 * "8GB" fit together into the 15259 MiB of a worker of "16GB" (16 GB
 * rounded up), not one of them only (each rounded up to 7630 MiB, they
 * made 15260); a third waits, placed ahead.
 */
static void
test_memory_adds_up_in_bytes(void **state)
{
	struct task gb8 = { .cores = 1, .memory = 8000000000ULL };

	(void)state;
	w.info.cores = w.info.slots = 3;
	w.info.memory = 15259ULL << 20;
	assert_true(worker_fits(&w, &gb8, 0));
	w.ntasks = w.cores_used = 1;
	w.mem_used = gb8.memory;
	assert_true(worker_fits(&w, &gb8, 0));
	w.ntasks = w.cores_used = 2;
	w.mem_used = 2 * gb8.memory;
	assert_false(worker_fits(&w, &gb8, 0));
	assert_true(worker_fits(&w, &gb8, 1));
}

/*
 * A worker's end is a time in its host's clock: spoold moves it by the
 * offset its beats showed (clock_off, workers.c), and places a task with
 * a walltime there only once it knows that offset.
 */
static void
test_a_workers_end_is_in_its_own_clock(void **state)
{
	struct task slow = { .cores = 1, .walltime = 300 };

	(void)state;
	/* 15 min behind ours, 10 min left: its end reads 5 min ago */
	w.clock_off = -900;
	w.info.ends = now_unix() + w.clock_off + 600;
	w.clock_known = 0;
	assert_false(worker_fits(&w, &slow, 1));	/* no beat read yet */
	w.clock_known = 1;
	assert_true(worker_fits(&w, &slow, 1));
	assert_true(worker_fits(&w, &one, 1));
	/* 15 min ahead, 2 min left: its end reads 17 min from now */
	w.clock_off = 900;
	w.info.ends = now_unix() + w.clock_off + 120;
	assert_false(worker_fits(&w, &slow, 1));
}

static void
test_a_worker_could_run_what_it_has_no_room_for_now(void **state)
{
	struct task big = { .cores = 2 };
	struct task slow = { .cores = 1, .walltime = 300 };

	(void)state;
	w.ntasks = w.cores_used = 1;
	assert_false(worker_fits(&w, &one, 0));
	assert_true(worker_could_run(&w, &one));
	assert_false(worker_could_run(&w, &big));
	w.info.ends = now_unix() + 600;
	w.clock_known = 0;
	assert_false(worker_fits(&w, &slow, 1));
	assert_true(worker_could_run(&w, &slow));	/* not known yet */
	w.clock_known = 1;
	w.info.ends = now_unix() + 120;
	assert_false(worker_could_run(&w, &slow));	/* too little left */
	w.info.ends = 0;
	w.draining = 1;
	assert_false(worker_could_run(&w, &one));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(
		    test_unknown_length_holds_twice_its_capacity, reset),
		cmocka_unit_test_setup(test_a_task_under_a_millisecond_is_short,
		    reset),
		cmocka_unit_test_setup(test_shorter_tasks_hold_more, reset),
		cmocka_unit_test_setup(
		    test_an_unwatched_worker_holds_short_tasks_to_the_cap, reset),
		cmocka_unit_test_setup(test_long_tasks_keep_twice, reset),
		cmocka_unit_test_setup(test_the_mean_follows_the_recent_tasks,
		    reset),
		cmocka_unit_test_setup(
		    test_a_result_that_never_started_does_not_count, reset),
		cmocka_unit_test_setup(
		    test_a_coming_worker_keeps_tasks_off_a_busy_one, reset),
		cmocka_unit_test_setup(test_workers_that_cannot_take_it,
		    reset),
		cmocka_unit_test_setup(test_a_workers_end_is_in_its_own_clock,
		    reset),
		cmocka_unit_test_setup(test_memory_adds_up_in_bytes, reset),
		cmocka_unit_test_setup(
		    test_a_worker_could_run_what_it_has_no_room_for_now, reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
