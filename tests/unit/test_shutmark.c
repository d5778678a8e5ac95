/*
 * test_shutmark.c - shutmark.c, state/shutdown in a fresh spool: no
 * file is generation 0; each write is one more than the file before
 * and names its writer; a file that is not such a record (no
 * generation, not a number, a number with more after it, one too
 * large) reads as -1 with EINVAL and generation 0, and is replaced by
 * generation 1; so does a directory in its place; a symlink is not
 * followed (ELOOP, not EINVAL), nor written over (a generation that
 * cannot be read could be higher than 1); nothing is left in tmp/.
 */
#include "unit.h"
#include "fsop.h"
#include "shutmark.h"

static struct unit_spool *
U(void **state)
{
	return *state;
}

static char *
mark_path(void **state)
{
	return xasprintf("%s/state/shutdown", U(state)->path);
}

static void
test_generations(void **state)
{
	struct spool *sp = &U(state)->sp;
	struct buf b = BUF_INIT;
	uint64_t gen = 99;
	int n = 0;

	assert_int_equal(shutmark_read(sp, &gen), 0);
	assert_int_equal(gen, 0);
	assert_int_equal(shutmark_write(sp, "host.12", &gen), 0);
	assert_int_equal(gen, 1);
	gen = 0;
	assert_int_equal(shutmark_read(sp, &gen), 0);
	assert_int_equal(gen, 1);
	assert_int_equal(shutmark_write(sp, "host.13", &gen), 0);
	assert_int_equal(gen, 2);
	assert_int_equal(shutmark_read(sp, &gen), 0);
	assert_int_equal(gen, 2);
	assert_int_equal(fsop_read_file(sp->fd[SD_STATE], "shutdown", 4096,
	    &b, NULL), 0);
	buf_putc(&b, 0);
	assert_true(unit_contains(b.p, "generation: 2\n"));
	assert_true(unit_contains(b.p, "spoold: host.13\n"));
	assert_true(unit_contains(b.p, "time: "));
	buf_free(&b);
	assert_int_equal(fsop_list(sp->fd[SD_TMP], ".", unit_count_listed,
	    &n), 0);
	assert_int_equal(n, 0);
}

static void
test_not_a_record(void **state)
{
	static const char *const bad[] = {
		"time: 1.0\n", "generation: x\n", "generation: 3x\n",
		"generation: -1\n", "generation: 99999999999999999999999\n",
		"generation:\n",
	};
	struct spool *sp = &U(state)->sp;
	char *path = mark_path(state);
	uint64_t gen;
	size_t i;
	int nfail = 0;

	for (i = 0; i < NELEM(bad); i++) {
		assert_int_equal(unit_write_file(path, bad[i], strlen(bad[i])),
		    0);
		gen = 7;
		errno = 0;
		TEXPECT(nfail, shutmark_read(sp, &gen) == -1 &&
		    errno == EINVAL && gen == 0, "row %zu: read of \"%s\"",
		    i, bad[i]);
		TEXPECT(nfail, shutmark_write(sp, "h.1", &gen) == 0 &&
		    gen == 1, "row %zu: written after \"%s\"", i, bad[i]);
	}
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0700), 0);
	errno = 0;
	TEXPECT(nfail, shutmark_read(sp, &gen) == -1 && errno == EINVAL &&
	    gen == 0, "a directory read");
	/* one that cannot be read is not "not a record": spoolfs reads
	 * it again (fuse/main.c: shut_down) */
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(symlink("/dev/null", path), 0);
	errno = 0;
	TEXPECT(nfail, shutmark_read(sp, &gen) == -1 && errno == ELOOP &&
	    gen == 0, "a symlink read: errno %d", errno);
	/* and is not written over: its generation is not known */
	errno = 0;
	TEXPECT(nfail, shutmark_write(sp, "h.1", &gen) == -1 &&
	    errno == ELOOP, "a write over a symlink: errno %d", errno);
	TEXPECT(nfail, unlink(path) == 0, "the symlink went");
	free(path);
	assert_int_equal(nfail, 0);
}

int
main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, unit_spool_setup, \
	    unit_spool_teardown)
	const struct CMUnitTest tests[] = {
		T(test_generations),
		T(test_not_a_record),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
