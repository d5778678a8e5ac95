/*
 * test_wdir.c - wdir.c's worker status record: encode/read round trip
 * of every field, gpus_held written only when there are stuck GPUs and
 * read as 0 from a status without it (a worker of before), unknown keys
 * ignored (the record can grow), a status at its longest read whole,
 * and a malformed record refused; the state of a worker that its
 * directory shows (wstate_read); a final task's spec read back
 * (final_spec_decode).  The
 * status is a heartbeat record (beatfile.h): written here as the
 * worker writes it, with its check line.
 */
#include "unit.h"
#include "beatfile.h"
#include "wdir.h"

static void
write_at(struct unit_dir *f, const char *name, const char *text)
{
	char *path = xasprintf("%s/%s", f->dir, name);

	assert_int_equal(unit_write_file(path, text, strlen(text)), 0);
	free(path);
}

/* text, with its check line, as the heartbeat record dfd/name */
static void
beat_at(struct unit_dir *f, const char *name, const char *text)
{
	struct buf b = BUF_INIT;

	buf_puts(&b, text);
	assert_int_equal(beatfile_write(f->dfd, f->dfd, name, &b), 0);
	buf_free(&b);
}

/* Encode s into the file "status" of f's directory; the text. */
static char *
encode_to(struct unit_dir *f, const struct worker_status *s)
{
	struct buf b = BUF_INIT;
	char *text;

	wstatus_encode(&b, s);
	text = xasprintf("%.*s", (int)b.len, b.p);
	beat_at(f, "status", text);
	buf_free(&b);
	return text;
}

static void
test_status_round_trip(void **state)
{
	static struct worker_status s, r;	/* large: not on the stack */
	struct unit_dir *f = *state;
	char *text;

	memset(&s, 0, sizeof s);
	s.beat = 4242;
	s.time = 1700000000.125;
	s.running = 3;
	s.cores_used = 5;
	s.memory_used = 6442450944ULL;
	s.gpus_used = 2;
	s.gpus_held = 1;
	s.draining = 1;
	s.npgroups = 2;
	s.pgroup[0][0] = 1234;
	s.pgroup[0][1] = 99887766;
	s.pgroup[1][0] = 1240;
	s.pgroup[1][1] = 99887799;
	s.nmem = 1;
	s.mem[0][0] = 17;
	s.mem[0][1] = 2;
	s.mem[0][2] = 1048576;
	text = encode_to(f, &s);
	assert_contains(text, "gpus_held: 1\n");
	assert_int_equal(wstatus_read(f->dfd, "status", &r), 0);
	assert_int_equal(r.beat, 4242);
	assert_true(r.time > 1700000000.12 && r.time < 1700000000.13);
	assert_int_equal(r.running, 3);
	assert_int_equal(r.cores_used, 5);
	assert_int_equal(r.memory_used, 6442450944ULL);
	assert_int_equal(r.gpus_used, 2);
	assert_int_equal(r.gpus_held, 1);
	assert_int_equal(r.draining, 1);
	assert_int_equal(r.npgroups, 2);
	assert_int_equal(r.pgroup[1][0], 1240);
	assert_int_equal(r.pgroup[1][1], 99887799);
	assert_int_equal(r.nmem, 1);
	assert_int_equal(r.mem[0][2], 1048576);
	free(text);
}

/*
 * A status at its longest: every process group and memory slot used,
 * every number at its widest.  Its readers take it whole (with a limit
 * of 64 KiB, as before, spoold refused it and took the worker for lost).
 */
static void
test_status_longest_read_whole(void **state)
{
	static struct worker_status s, r;
	struct unit_dir *f = *state;
	struct stat st;
	char *text;
	size_t i;

	memset(&s, 0, sizeof s);
	s.beat = UINT64_MAX;
	s.running = UINT32_MAX;
	s.memory_used = UINT64_MAX;
	s.npgroups = WDIR_PGROUPS_MAX;
	for (i = 0; i < s.npgroups; i++) {
		s.pgroup[i][0] = UINT64_MAX - i;
		s.pgroup[i][1] = UINT64_MAX - 2 * i;
	}
	s.nmem = WDIR_TASKMEM_MAX;
	for (i = 0; i < s.nmem; i++) {
		s.mem[i][0] = UINT64_MAX - i;
		s.mem[i][1] = UINT32_MAX;
		s.mem[i][2] = UINT64_MAX - 3 * i;
	}
	text = encode_to(f, &s);
	assert_int_equal(fstatat(f->dfd, "status", &st, 0), 0);
	assert_true(st.st_size > 65536);
	assert_true(st.st_size <= WSTATUS_BYTES_MAX);
	assert_int_equal(wstatus_read(f->dfd, "status", &r), 0);
	assert_int_equal(r.beat, UINT64_MAX);
	assert_int_equal(r.npgroups, WDIR_PGROUPS_MAX);
	assert_int_equal(r.nmem, WDIR_TASKMEM_MAX);
	for (i = 0; i < s.npgroups; i++) {
		assert_int_equal(r.pgroup[i][0], s.pgroup[i][0]);
		assert_int_equal(r.pgroup[i][1], s.pgroup[i][1]);
	}
	for (i = 0; i < s.nmem; i++)
		assert_memory_equal(r.mem[i], s.mem[i], sizeof r.mem[i]);
	free(text);
}

/* No stuck GPU: the key is not written, and reads as 0. */
static void
test_status_gpus_held_only_when_stuck(void **state)
{
	static struct worker_status s, r;
	struct unit_dir *f = *state;
	char *text;

	memset(&s, 0, sizeof s);
	s.beat = 1;
	s.gpus_used = 1;
	text = encode_to(f, &s);
	assert_false(unit_contains(text, "gpus_held"));
	r.gpus_held = 7;
	assert_int_equal(wstatus_read(f->dfd, "status", &r), 0);
	assert_int_equal(r.gpus_held, 0);
	assert_int_equal(r.gpus_used, 1);
	free(text);
}

/* A status of a worker of before (no gpus_held), and keys this reader
 * does not know, as a later worker may write. */
static void
test_status_old_and_new_keys(void **state)
{
	static struct worker_status r;
	struct unit_dir *f = *state;

	beat_at(f, "old", "beat: 9\ntime: 1700000000.5\nrunning: 1\n"
	    "cores_used: 1\nmemory_used: 0\ngpus_used: 1\ndraining: 0\n");
	assert_int_equal(wstatus_read(f->dfd, "old", &r), 0);
	assert_int_equal(r.beat, 9);
	assert_int_equal(r.gpus_used, 1);
	assert_int_equal(r.gpus_held, 0);
	beat_at(f, "new", "beat: 10\ngpus_used: 2\ngpus_held: 2\n"
	    "something_later: [1, 2]\nanother: \"text\"\n");
	assert_int_equal(wstatus_read(f->dfd, "new", &r), 0);
	assert_int_equal(r.beat, 10);
	assert_int_equal(r.gpus_held, 2);
}

static void
test_status_malformed_refused(void **state)
{
	static struct worker_status r;
	struct unit_dir *f = *state;

	beat_at(f, "bad", "beat: 3\ngpus_held 1\n");
	errno = 0;
	assert_int_equal(wstatus_read(f->dfd, "bad", &r), -1);
	assert_int_equal(errno, EINVAL);
	/* a well-formed record without its check line: not taken */
	write_at(f, "unchecked", "beat: 3\nrunning: 1\n");
	errno = 0;
	assert_int_equal(wstatus_read(f->dfd, "unchecked", &r), -1);
	assert_int_equal(errno, EAGAIN);
	errno = 0;
	assert_int_equal(wstatus_read(f->dfd, "missing", &r), -1);
	assert_int_equal(errno, ENOENT);
}

/*
 * A worker's state as "spool workers", "spool wait-workers" and
 * spoolfs all say it (wstate_read): lost and exited before anything its
 * status says, no-status when it cannot be read, draining by the
 * worker's word or by spoold's marker (before gpus-held: a worker whose
 * GPUs are stuck is drained to be replaced, spoold(8)).
 */
static void
test_worker_state(void **state)
{
	static struct worker_status r;
	struct unit_dir *f = *state;
	char *d = xasprintf("%s/w", f->dir);

	assert_int_equal(mkdir(d, 0700), 0);
	r.beat = 5;
	assert_int_equal(wstate_read(f->dfd, "w", &r), WST_NO_STATUS);
	assert_int_equal(r.beat, 0);	/* zeroed */
	beat_at(f, "w/status", "beat: 3\nrunning: 1\ndraining: 0\n");
	assert_int_equal(wstate_read(f->dfd, "w", &r), WST_UP);
	assert_int_equal(r.running, 1);
	beat_at(f, "w/status", "beat: 4\ngpus_held: 1\ndraining: 0\n");
	assert_int_equal(wstate_read(f->dfd, "w", &r), WST_GPUS_HELD);
	write_at(f, "w/drain", "");
	assert_int_equal(wstate_read(f->dfd, "w", &r), WST_DRAINING);
	assert_int_equal(r.gpus_held, 1);
	assert_int_equal(unlinkat(f->dfd, "w/drain", 0), 0);
	beat_at(f, "w/status", "beat: 5\ndraining: 1\n");
	assert_int_equal(wstate_read(f->dfd, "w", &r), WST_DRAINING);
	write_at(f, "w/status", "beat: 6\n");	/* no check line */
	assert_int_equal(wstate_read(f->dfd, "w", &r), WST_NO_STATUS);
	write_at(f, "w/lost", "");
	assert_int_equal(wstate_read(f->dfd, "w", &r), WST_LOST);
	beat_at(f, "w/status", "beat: 7\nrunning: 2\n");
	write_at(f, "w/exited", "why: idle\n");
	assert_int_equal(wstate_read(f->dfd, "w", &r), WST_EXITED);
	assert_int_equal(r.running, 2);	/* read all the same */
	assert_string_equal(wstate_name[WST_GPUS_HELD], "gpus-held");
	assert_string_equal(wstate_name[WST_NO_STATUS], "no-status");
	assert_int_equal(wstate_read(f->dfd, "nosuch", &r), WST_NO_STATUS);
	free(d);
}

/*
 * A final task's spec: an assignment (with its attempt, worker and
 * placed) and a spec read from a bundle (no attempt) both decode; a key
 * of neither, or an attempt that is no number, is refused with its
 * line.
 */
static void
test_final_spec(void **state)
{
	struct task_spec t;
	struct buf b = BUF_INIT;
	const char *why = NULL, *bad[] = {
		"id: 7\nargv: [\"true\"]\nfrobnicate: 1\n",
		"id: 7\nargv: [\"true\"]\nattempt: two\n",
		"id: 7\nargv: \"true\n",
	};
	const int bad_line[] = { 3, 3, 2 };
	uint32_t attempt = 99;
	size_t i;
	int line = 0;

	(void)state;
	task_init(&t);
	t.id = 7;
	t.argv = xreallocarray(NULL, 3, sizeof *t.argv);
	t.argv[0] = xstrdup("echo");
	t.argv[1] = xstrdup("hi");
	t.argv[2] = NULL;
	t.memory = 1 << 20;
	assign_encode(&b, &t, 3, "w1-abcdef");
	task_free(&t);
	assert_int_equal(final_spec_decode(b.p, b.len, &t, &attempt, &why,
	    &line), 0);
	assert_int_equal(attempt, 3);
	assert_int_equal(t.id, 7);
	assert_string_equal(t.argv[1], "hi");
	assert_int_equal(t.memory, 1 << 20);
	task_free(&t);
	buf_free(&b);
	/* from a bundle: no attempt */
	buf_puts(&b, "id: 8\nshell: \"echo x\"\n");
	assert_int_equal(final_spec_decode(b.p, b.len, &t, &attempt, &why,
	    &line), 0);
	assert_int_equal(attempt, 0);
	assert_string_equal(t.shell, "echo x");
	task_free(&t);
	buf_free(&b);
	for (i = 0; i < sizeof bad / sizeof *bad; i++) {
		why = NULL;
		line = 0;
		assert_int_equal(final_spec_decode(bad[i], strlen(bad[i]), &t,
		    &attempt, &why, &line), -1);
		assert_non_null(why);
		assert_int_equal(line, bad_line[i]);
	}
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, unit_dir_setup, \
    unit_dir_teardown)
	const struct CMUnitTest tests[] = {
		T(test_status_round_trip),
		T(test_status_longest_read_whole),
		T(test_status_gpus_held_only_when_stuck),
		T(test_status_old_and_new_keys),
		T(test_status_malformed_refused),
		T(test_worker_state),
		cmocka_unit_test(test_final_spec),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
