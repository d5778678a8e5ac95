/*
 * test_watch.c - watch.c: dirstamp_changed() as a table of steps (what
 * we do to the directory, what it must answer): a change after a file
 * is created, renamed in or removed; "list once more" on the call after
 * a change even when nothing changed again; then quiet; a forced
 * listing every DIRSTAMP_FORCE calls; a directory that cannot be
 * stat'ed or is replaced.  Also the inotify hint: an event with the
 * right cookie and name for a file created in a watched directory.
 *
 * The directory's times are first set far in the past, so that every
 * change made by a step moves them whatever the timestamp granularity.
 */
#include <sys/inotify.h>

#include "fsop.h"
#include "unit.h"
#include "watch.h"

static int
fx_setup(void **state)
{
	struct unit_dir *f;

	if (unit_dir_setup(state) < 0)
		return -1;
	f = *state;
	return mkdirat(f->dfd, "d", 0700);
}

/* Set d's times to 2001 so that the next change is a visible one. */
static void
age(struct unit_dir *f)
{
	struct timespec ts[2] = { { 1000000000, 0 }, { 1000000000, 0 } };

	assert_int_equal(utimensat(f->dfd, "d", ts, AT_SYMLINK_NOFOLLOW), 0);
}

enum act { NOTHING, CREATE, CREATE2, RENAME_IN, REMOVE, TOUCH_FILE, AGE };

static void
act(struct unit_dir *f, enum act a)
{
	char path[4200];

	switch (a) {
	case NOTHING:
		break;
	case CREATE:
		snprintf(path, sizeof path, "%s/d/f1", f->dir);
		assert_int_equal(unit_write_file(path, "x", 1), 0);
		break;
	case CREATE2:
		snprintf(path, sizeof path, "%s/d/f2", f->dir);
		assert_int_equal(unit_write_file(path, "x", 1), 0);
		break;
	case RENAME_IN:
		snprintf(path, sizeof path, "%s/outside", f->dir);
		assert_int_equal(unit_write_file(path, "x", 1), 0);
		assert_int_equal(renameat(f->dfd, "outside", f->dfd, "d/f3"), 0);
		break;
	case REMOVE:
		assert_int_equal(unlinkat(f->dfd, "d/f1", 0), 0);
		break;
	case TOUCH_FILE:	/* a file's content, not the directory */
		snprintf(path, sizeof path, "%s/d/f2", f->dir);
		assert_int_equal(unit_write_file(path, "yy", 2), 0);
		break;
	case AGE:
		age(f);
		break;
	}
}

static void
test_dirstamp_steps(void **state)
{
	static const struct {
		enum act a;
		int want;
		const char *why;
	} steps[] = {
		{ AGE,		1, "never seen: list" },
		{ NOTHING,	1, "list once more after a change" },
		{ NOTHING,	0, "quiet" },
		{ NOTHING,	0, "quiet" },
		{ AGE,		1, "times moved" },
		{ NOTHING,	1, "once more" },
		{ CREATE,	1, "file created" },
		{ NOTHING,	1, "once more after the create" },
		{ NOTHING,	0, "quiet" },
		{ AGE,		1, "aged" },
		{ NOTHING,	1, "once more" },
		{ NOTHING,	0, "quiet" },
		{ CREATE2,	1, "second file created" },
		{ NOTHING,	1, "once more" },
		{ AGE,		1, "aged" },
		{ NOTHING,	1, "once more" },
		{ NOTHING,	0, "quiet" },
		{ TOUCH_FILE,	0, "a file's content is not a listing change" },
		{ RENAME_IN,	1, "renamed in" },
		{ NOTHING,	1, "once more" },
		{ AGE,		1, "aged" },
		{ NOTHING,	1, "once more" },
		{ NOTHING,	0, "quiet" },
		{ REMOVE,	1, "removed" },
		{ NOTHING,	1, "once more" },
		{ NOTHING,	0, "quiet" },
	};
	struct unit_dir *f = *state;
	struct dirstamp s;
	size_t i;
	int got;

	dirstamp_reset(&s);
	for (i = 0; i < NELEM(steps); i++) {
		act(f, steps[i].a);
		got = dirstamp_changed(f->dfd, "d", &s);
		TCHECK(got == steps[i].want, "step %zu (%s): %d, want %d", i,
		    steps[i].why, got, steps[i].want);
	}
}

/* Every DIRSTAMP_FORCE-th quiet call lists anyway. */
static void
test_dirstamp_force(void **state)
{
	struct unit_dir *f = *state;
	struct dirstamp s;
	int round, i, got;

	age(f);
	dirstamp_reset(&s);
	assert_int_equal(dirstamp_changed(f->dfd, "d", &s), 1);
	assert_int_equal(dirstamp_changed(f->dfd, "d", &s), 1);	/* again */
	for (round = 0; round < 3; round++) {
		for (i = 1; i < DIRSTAMP_FORCE; i++) {
			got = dirstamp_changed(f->dfd, "d", &s);
			TCHECK(got == 0, "round %d call %d: %d", round, i, got);
		}
		got = dirstamp_changed(f->dfd, "d", &s);
		TCHECK(got == 1, "round %d: no forced listing after %d calls",
		    round, DIRSTAMP_FORCE);
	}
	/* A real change restarts the count. */
	for (i = 1; i < DIRSTAMP_FORCE / 2; i++)
		assert_int_equal(dirstamp_changed(f->dfd, "d", &s), 0);
	act(f, CREATE);
	assert_int_equal(dirstamp_changed(f->dfd, "d", &s), 1);
	assert_int_equal(dirstamp_changed(f->dfd, "d", &s), 1);
	for (i = 1; i < DIRSTAMP_FORCE; i++)
		assert_int_equal(dirstamp_changed(f->dfd, "d", &s), 0);
	assert_int_equal(dirstamp_changed(f->dfd, "d", &s), 1);
}

static void
test_dirstamp_missing_or_replaced(void **state)
{
	struct unit_dir *f = *state;
	struct timespec ts[2] = { { 1000000000, 0 }, { 1000000000, 0 } };
	struct dirstamp s;

	age(f);
	dirstamp_reset(&s);
	assert_int_equal(dirstamp_changed(f->dfd, "d", &s), 1);
	assert_int_equal(dirstamp_changed(f->dfd, "d", &s), 1);
	assert_int_equal(dirstamp_changed(f->dfd, "d", &s), 0);

	/* Gone: list (the caller finds out why), every time. */
	assert_int_equal(renameat(f->dfd, "d", f->dfd, "old"), 0);
	assert_int_equal(dirstamp_changed(f->dfd, "d", &s), 1);
	assert_int_equal(dirstamp_changed(f->dfd, "d", &s), 1);

	/* Back, but another directory with the same old times. */
	assert_int_equal(mkdirat(f->dfd, "d", 0700), 0);
	assert_int_equal(utimensat(f->dfd, "d", ts, 0), 0);
	assert_int_equal(dirstamp_changed(f->dfd, "d", &s), 1);
	assert_int_equal(dirstamp_changed(f->dfd, "d", &s), 1);
	assert_int_equal(dirstamp_changed(f->dfd, "d", &s), 0);

	/* Swapped for the old one: the inode differs. */
	assert_int_equal(renameat(f->dfd, "d", f->dfd, "new"), 0);
	assert_int_equal(renameat(f->dfd, "old", f->dfd, "d"), 0);
	assert_int_equal(utimensat(f->dfd, "d", ts, 0), 0);
	assert_int_equal(dirstamp_changed(f->dfd, "d", &s), 1);
}

struct ev {
	int	n;
	void	*cookie;
	char	name[64];
	uint32_t mask;
};

static void
on_event(void *arg, void *cookie, const char *name, uint32_t mask)
{
	struct ev *e = arg;

	if (e->n++ == 0) {
		e->cookie = cookie;
		snprintf(e->name, sizeof e->name, "%s", name);
		e->mask = mask;
	}
}

static void
test_inotify_hint(void **state)
{
	struct unit_dir *f = *state;
	struct watch w;
	struct ev e;
	unsigned long before;
	int cookie;
	char path[4200];

	assert_int_equal(watch_open(&w, 0), 0);
	assert_false(watch_enabled(&w));
	assert_int_equal(watch_add(&w, f->dfd, "d", IN_CREATE, &cookie), 0);
	memset(&e, 0, sizeof e);
	assert_int_equal(watch_read(&w, on_event, &e), 0);
	assert_int_equal(e.n, 0);
	watch_close(&w);

	if (watch_open(&w, 1) < 0) {
		print_message("inotify unavailable: %s\n", strerror(errno));
		skip();
	}
	assert_true(watch_enabled(&w));
	/* Each try to add a watch is counted, one that fails too. */
	before = fsop_count[FSOP_WATCH];
	assert_int_equal(watch_add(&w, f->dfd, "absent", IN_CREATE, &cookie),
	    -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(watch_add(&w, f->dfd, "d", IN_CREATE | IN_MOVED_TO,
	    &cookie), 0);
	assert_int_equal(fsop_count[FSOP_WATCH] - before, 2);
	memset(&e, 0, sizeof e);
	assert_int_equal(watch_read(&w, on_event, &e), 0);
	assert_int_equal(e.n, 0);	/* nothing yet */

	/* The event is queued by the time the create returns. */
	snprintf(path, sizeof path, "%s/d/new", f->dir);
	assert_int_equal(unit_write_file(path, "x", 1), 0);
	assert_int_equal(watch_read(&w, on_event, &e), 0);
	assert_int_equal(e.n, 1);
	assert_ptr_equal(e.cookie, &cookie);
	assert_string_equal(e.name, "new");
	assert_true(e.mask & IN_CREATE);

	/* After watch_remove, no more events for that cookie. */
	watch_remove(&w, &cookie);
	snprintf(path, sizeof path, "%s/d/newer", f->dir);
	assert_int_equal(unit_write_file(path, "x", 1), 0);
	memset(&e, 0, sizeof e);
	assert_int_equal(watch_read(&w, on_event, &e), 0);
	assert_int_equal(e.n, 0);
	watch_close(&w);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, unit_dir_teardown)
	const struct CMUnitTest tests[] = {
		T(test_dirstamp_steps),
		T(test_dirstamp_force),
		T(test_dirstamp_missing_or_replaced),
		T(test_inotify_hint),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
