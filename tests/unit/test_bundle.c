/*
 * test_bundle.c - bundle.c: a bundle of several tasks written with
 * bundle_begin/bundle_add and read back with bundle_open/bundle_next,
 * with rec_off/rec_len pointing exactly at each task's record (the
 * slice alone decodes to the same task), headers missing fields or
 * with bad values, a count that does not match the records either
 * way, and IDs out of sequence; and the same read from a file a piece
 * at a time (bundle_file), with offsets into the file, and a hole of a
 * gigabyte refused having read a record's worth of it.
 */
#include "unit.h"
#include "bundle.h"

static void
make_task(struct task_spec *t, uint64_t id, int variant)
{
	task_init(t);
	t->id = id;
	switch (variant % 3) {
	case 0:
		t->argv = strv_push(NULL, "echo");
		t->argv = strv_push(t->argv, "line1\nline2 \"q\" ---");
		t->cores = 2;
		t->memory = 1ULL << 30;
		break;
	case 1:
		t->shell = xstrdup("echo ---\n---\necho done\n");
		t->name = xstrdup("second");
		t->priority = -3;
		t->after = xmalloc(sizeof *t->after);
		t->after[0] = id - 1;
		t->nafter = 1;
		break;
	default:
		t->script = xstrdup("#!/bin/sh\n# ---\nexit 3\n");
		t->env = strv_push(NULL, "A=---");
		t->walltime = 60;
		t->retries = 4;
		break;
	}
	t->submitted = 1700000000.5 + (double)variant;
	t->uid = 1000;
}

/* Compare by canonical text: every field, exactly. */
static void
assert_same_task(const struct task_spec *a, const struct task_spec *b)
{
	struct buf ea = BUF_INIT, eb = BUF_INIT;

	task_encode(&ea, a);
	task_encode(&eb, b);
	TCHECK(strcmp(ea.p, eb.p) == 0, "tasks differ:\n%s---\n%s", ea.p, eb.p);
	buf_free(&ea);
	buf_free(&eb);
}

static void
test_round_trip_and_slices(void **state)
{
	enum { N = 5, FIRST = 1000 };
	struct task_spec in[N], out, again;
	struct bundle_reader br;
	struct rec_reader r;
	struct buf b = BUF_INIT;
	const char *slice;
	size_t i;

	(void)state;
	bundle_begin(&b, FIRST, N, "host.123.1.9f3a0c1e");
	for (i = 0; i < N; i++) {
		make_task(&in[i], FIRST + i, (int)i);
		bundle_add(&b, &in[i]);
	}
	assert_int_equal(bundle_open(&br, b.p, b.len), 0);
	assert_int_equal(br.hdr.first, FIRST);
	assert_int_equal(br.hdr.count, N);
	assert_string_equal(br.hdr.nonce, "host.123.1.9f3a0c1e");

	for (i = 0; i < N; i++) {
		TCHECK(bundle_next(&br, &out) == 1, "task %zu: %s", i,
		    br.r.why ? br.r.why : "");
		assert_same_task(&in[i], &out);

		/* The slice is the record: starts at "id:", no separator. */
		TCHECK(br.rec_off + br.rec_len <= b.len, "slice %zu out of "
		    "bounds", i);
		slice = b.p + br.rec_off;
		TCHECK(strncmp(slice, "id: ", 4) == 0, "slice %zu starts "
		    "\"%.10s\"", i, slice);
		TCHECK(br.rec_len > 0 && slice[br.rec_len - 1] == '\n',
		    "slice %zu does not end a line", i);
		TCHECK(br.rec_off >= 4 && memcmp(slice - 4, "---\n", 4) == 0,
		    "slice %zu is not preceded by the separator", i);
		if (i + 1 < N)
			TCHECK(memcmp(slice + br.rec_len, "---\n", 4) == 0,
			    "slice %zu is not followed by the separator", i);
		else
			TCHECK(br.rec_off + br.rec_len == b.len,
			    "last slice does not end the data");

		/* The slice alone decodes to the same task. */
		task_init(&again);
		rec_reader_init(&r, slice, br.rec_len);
		TCHECK(task_decode(&r, &again) == 0, "slice %zu: line %d: %s",
		    i, r.errline, r.why ? r.why : "");
		assert_true(rec_eof(&r));
		assert_same_task(&in[i], &again);
		task_free(&again);
		task_free(&out);
	}
	assert_int_equal(bundle_next(&br, &out), 0);
	task_free(&out);
	for (i = 0; i < N; i++)
		task_free(&in[i]);
	buf_free(&b);
}

/* One task, no nonce: the header has no nonce line. */
static void
test_single_no_nonce(void **state)
{
	struct bundle_reader br;
	struct task_spec t, out;
	struct buf b = BUF_INIT;

	(void)state;
	bundle_begin(&b, 7, 1, NULL);
	assert_null(strstr(b.p, "nonce"));
	make_task(&t, 7, 0);
	bundle_add(&b, &t);
	assert_int_equal(bundle_open(&br, b.p, b.len), 0);
	assert_string_equal(br.hdr.nonce, "");
	assert_int_equal(bundle_next(&br, &out), 1);
	assert_int_equal(out.id, 7);
	assert_int_equal(br.rec_off + br.rec_len, b.len);
	task_free(&out);
	assert_int_equal(bundle_next(&br, &out), 0);
	task_free(&out);
	task_free(&t);
	buf_free(&b);
}

static void
test_header_errors(void **state)
{
	static const struct {
		const char *text;
		const char *why;
	} rows[] = {
		{ "first: 1\ncount: 1\n---\nid: 1\nshell: \"x\"\n",
		    "header incomplete" },
		{ "bundle: 1\ncount: 1\n---\nid: 1\nshell: \"x\"\n",
		    "header incomplete" },
		{ "bundle: 1\nfirst: 1\n---\nid: 1\nshell: \"x\"\n",
		    "header incomplete" },
		{ "bundle: 1\nfirst: 0\ncount: 1\n---\n",
		    "header incomplete" },
		{ "bundle: 1\nfirst: 1\ncount: 0\n---\n",
		    "header incomplete" },
		{ "", "header incomplete" },
		{ "bundle: 2\nfirst: 1\ncount: 1\n---\n",
		    "version" },
		{ "bundle: 1\nfirst: 1\ncount: 1\ncolour: red\n---\n",
		    "unknown key" },
		{ "bundle: 1\nfirst: x\ncount: 1\n---\n",
		    "not an unsigned" },
		{ "bundle: 1\nfirst: 1\ncount: 1048577\n---\n",
		    "out of range" },
		{ "bundle: 1\nfirst: 1099511627775\ncount: 2\n---\n",
		    "IDs out of range" },
		{ "bundle: 1\nfirst: 1\ncount: 1\nnonce: \"a b\\x00\"\n---\n",
		    "NUL" },
		{ "bundle: 1\nfirst: 1\ncount: 1",
		    "no newline" },
	};
	struct bundle_reader br;
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		TCHECK(bundle_open(&br, rows[i].text, strlen(rows[i].text)) == -1,
		    "row %zu accepted", i);
		TCHECK(unit_contains(br.r.why, rows[i].why),
		    "row %zu: \"%s\", want \"%s\"", i, br.r.why ? br.r.why : "",
		    rows[i].why);
	}
}

static void
test_nonce_too_long(void **state)
{
	struct bundle_reader br;
	struct buf b = BUF_INIT;
	char nonce[200];

	(void)state;
	memset(nonce, 'n', sizeof nonce - 1);
	nonce[sizeof nonce - 1] = 0;
	bundle_begin(&b, 1, 1, nonce);
	assert_int_equal(bundle_open(&br, b.p, b.len), -1);
	assert_contains(br.r.why, "nonce too long");
	buf_free(&b);
}

/*
 * Build a bundle whose header says first/count but whose records have
 * the given IDs; read it and return what the k-th bundle_next says.
 */
static int
read_all(uint64_t first, uint32_t count, const uint64_t *ids, size_t n,
    int *failed_at, const char **why)
{
	struct bundle_reader br;
	struct task_spec t;
	struct buf b = BUF_INIT;
	size_t i;
	int rc = 0, k;

	bundle_begin(&b, first, count, NULL);
	for (i = 0; i < n; i++) {
		make_task(&t, ids[i], 0);
		bundle_add(&b, &t);
		task_free(&t);
	}
	*failed_at = -1;
	*why = NULL;
	if (bundle_open(&br, b.p, b.len) < 0) {
		buf_free(&b);
		return -2;
	}
	for (k = 0; (rc = bundle_next(&br, &t)) == 1; k++)
		task_free(&t);
	task_free(&t);
	if (rc < 0) {
		*failed_at = k;
		*why = br.r.why;	/* static strings */
	}
	buf_free(&b);
	return rc;
}

static void
test_count_and_sequence(void **state)
{
	static const uint64_t seq3[] = { 10, 11, 12 };
	static const uint64_t gap[] = { 10, 12, 13 };
	static const uint64_t dup[] = { 10, 10, 11 };
	static const uint64_t back[] = { 10, 11, 9 };
	static const uint64_t off[] = { 11, 12, 13 };
	static const struct {
		uint32_t count;
		const uint64_t *ids;
		size_t n;
		int rc;
		int failed_at;	/* which bundle_next failed */
		const char *why;
	} rows[] = {
		{ 3, seq3, 3,  0, -1, NULL },
		{ 3, seq3, 2, -1,  2, "fewer tasks than its count" },
		{ 3, seq3, 0, -1,  0, "fewer tasks than its count" },
		{ 2, seq3, 3, -1,  2, "more tasks than its count" },
		{ 1, seq3, 3, -1,  1, "more tasks than its count" },
		{ 3, gap,  3, -1,  1, "out of sequence" },
		{ 3, dup,  3, -1,  1, "out of sequence" },
		{ 3, back, 3, -1,  2, "out of sequence" },
		{ 3, off,  3, -1,  0, "out of sequence" },
	};
	const char *why;
	size_t i;
	int rc, at;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		rc = read_all(10, rows[i].count, rows[i].ids, rows[i].n, &at,
		    &why);
		TCHECK(rc == rows[i].rc, "row %zu: rc %d, want %d (%s)", i, rc,
		    rows[i].rc, why ? why : "");
		TCHECK(at == rows[i].failed_at, "row %zu: failed at %d, want %d",
		    i, at, rows[i].failed_at);
		if (rows[i].why)
			TCHECK(unit_contains(why, rows[i].why),
			    "row %zu: \"%s\", want \"%s\"", i, why ? why : "",
			    rows[i].why);
	}
}

/* A bad task record inside a bundle is an error with its line. */
static void
test_bad_record(void **state)
{
	static const char text[] =
	    "bundle: 1\nfirst: 5\ncount: 2\n---\n"
	    "id: 5\nshell: \"a\"\n---\n"
	    "id: 6\nshell: \"b\"\ncolour: red\n";
	struct bundle_reader br;
	struct task_spec t;

	(void)state;
	assert_int_equal(bundle_open(&br, text, strlen(text)), 0);
	assert_int_equal(bundle_next(&br, &t), 1);
	task_free(&t);
	assert_int_equal(bundle_next(&br, &t), -1);
	assert_contains(br.r.why, "unknown key");
	assert_int_equal(br.r.errline, 10);
	task_free(&t);
}

/*
 * bundle.h: rec_len is the record's length "without the separator".
 * A last record (no separator after it) whose last line happens to end
 * in "---" must keep those bytes.
 */
static void
test_last_record_ending_in_dashes(void **state)
{
	static const char text[] =
	    "bundle: 1\nfirst: 5\ncount: 1\n---\n"
	    "id: 5\nshell: \"a\"\nsource: x---\n";
	struct bundle_reader br;
	struct task_spec t, again;
	struct rec_reader r;
	int rc, ok;

	(void)state;
	assert_int_equal(bundle_open(&br, text, strlen(text)), 0);
	assert_int_equal(bundle_next(&br, &t), 1);
	ok = t.source != NULL && strcmp(t.source, "x---") == 0;
	task_free(&t);
	assert_true(ok);
	task_init(&again);
	rec_reader_init(&r, text + br.rec_off, br.rec_len);
	rc = task_decode(&r, &again);
	task_free(&again);
	TCHECK(br.rec_off + br.rec_len == strlen(text),
	    "slice [%zu, +%zu) ends %zu bytes before the record does",
	    br.rec_off, br.rec_len,
	    strlen(text) - (br.rec_off + br.rec_len));
	TCHECK(rc == 0, "the slice does not decode: %s", r.why ? r.why : "");
}

/* A temporary file holding data, then len bytes long (a hole after). */
static int
file_of(const char *data, size_t n, off_t len)
{
	FILE *f = tmpfile();
	int fd;

	assert_non_null(f);
	fd = dup(fileno(f));
	fclose(f);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, n), (ssize_t)n);
	assert_int_equal(ftruncate(fd, len), 0);
	return fd;
}

/*
 * Records spanning several pieces: each comes whole, rec_off/rec_len
 * point at it in the file (read back with pread), and the end is the
 * file's length.
 */
static void
test_file_records_across_pieces(void **state)
{
	enum { N = 3000, FIRST = 40 };
	struct task_spec t;
	struct bundle_file bf;
	struct buf b = BUF_INIT, enc = BUF_INIT;
	char pad[3001], *got;
	size_t i, hdr;
	int fd;

	(void)state;
	memset(pad, 'x', sizeof pad - 1);
	pad[sizeof pad - 1] = 0;
	bundle_begin(&b, FIRST, N, "host.1.1.ab");
	hdr = b.len + 4;
	for (i = 0; i < N; i++) {
		make_task(&t, FIRST + i, (int)i);
		pad[i * 7 % 3000] = 0;	/* records of many lengths */
		t.cwd = xasprintf("/%s", pad);
		pad[i * 7 % 3000] = 'x';
		bundle_add(&b, &t);
		task_free(&t);
	}
	assert_true(b.len > 3 * BUNDLE_READ_CHUNK);
	fd = file_of(b.p, b.len, (off_t)b.len);
	assert_int_equal(bundle_file_open(&bf, fd), 0);
	assert_int_equal(bf.br.hdr.first, FIRST);
	assert_int_equal(bf.br.hdr.count, N);
	assert_int_equal(bf.hdr_len, hdr);
	for (i = 0; i < N; i++) {
		TCHECK(bundle_file_next(&bf, &t) == 1, "task %zu: line %d: %s",
		    i, bf.br.r.errline, bf.br.r.why ? bf.br.r.why : "");
		assert_int_equal(t.id, FIRST + i);
		buf_reset(&enc);
		task_encode(&enc, &t);
		task_free(&t);
		TCHECK(bf.rec_len == enc.len && memcmp(bf.rec, enc.p,
		    enc.len) == 0, "task %zu: the record given is not its own",
		    i);
		got = xmalloc(bf.rec_len);
		assert_int_equal(pread(fd, got, bf.rec_len, (off_t)bf.rec_off),
		    (ssize_t)bf.rec_len);
		TCHECK(memcmp(got, enc.p, enc.len) == 0, "task %zu: the file "
		    "at %llu is not its record", i,
		    (unsigned long long)bf.rec_off);
		free(got);
	}
	assert_int_equal(bundle_file_next(&bf, &t), 0);
	task_free(&t);
	assert_int_equal(bf.end, b.len);
	/* what is held: a piece and a record, not the file */
	TCHECK(bf.win.cap <= 4 * BUNDLE_READ_CHUNK, "window of %zu bytes",
	    bf.win.cap);
	bundle_file_close(&bf);
	close(fd);
	buf_free(&b);
	buf_free(&enc);
}

/*
 * A gigabyte of hole, in place of the header or after a task's first
 * line: refused as a record no task has, with at most a record and a
 * piece of it read into memory (a whole read took a gigabyte).
 */
static void
test_file_hole_refused_reading_a_record(void **state)
{
	static const char head[] = "bundle: 1\nfirst: 1\ncount: 1\n---\n"
	    "id: 1\n";
	struct bundle_file bf;
	struct task_spec t;
	int fd;

	(void)state;
	fd = file_of("", 0, 1 << 30);
	assert_int_equal(bundle_file_open(&bf, fd), -1);
	assert_string_equal(bf.br.r.why, "record longer than 13 MiB (no task "
	    "record is)");
	assert_int_equal(bf.br.r.errline, 1);
	TCHECK(bf.win.cap <= 2 * BUNDLE_RECORD_MAX, "window of %zu bytes",
	    bf.win.cap);
	bundle_file_close(&bf);
	close(fd);

	fd = file_of(head, strlen(head), 1 << 30);
	assert_int_equal(bundle_file_open(&bf, fd), 0);
	assert_int_equal(bundle_file_next(&bf, &t), -1);
	task_free(&t);
	assert_string_equal(bf.br.r.why, "record longer than 13 MiB (no task "
	    "record is)");
	assert_int_equal(bf.br.r.errline, 5);
	TCHECK(bf.win.cap <= 2 * BUNDLE_RECORD_MAX, "window of %zu bytes",
	    bf.win.cap);
	bundle_file_close(&bf);
	close(fd);
}

/* accepting/'s names of dropped files: ID.drop, ID.drop.NAME */
static void
test_drop_names(void **state)
{
	const char *orig = "x";
	uint64_t id = 0;

	(void)state;
	assert_int_equal(bundle_drop_name("12.drop", &id, &orig), 1);
	assert_int_equal(id, 12);
	assert_null(orig);
	assert_int_equal(bundle_drop_name("7.drop.job.yaml", &id, &orig), 1);
	assert_int_equal(id, 7);
	assert_string_equal(orig, "job.yaml");
	assert_int_equal(bundle_drop_name("8.drop.", &id, &orig), 1);
	assert_null(orig);
	assert_int_equal(bundle_drop_name("x.drop", &id, NULL), -1);
	assert_int_equal(bundle_drop_name("0.drop", &id, NULL), -1);
	assert_int_equal(bundle_drop_name("9.dropped", &id, NULL), 0);
	assert_int_equal(bundle_drop_name("9.rejected", &id, NULL), 0);
	assert_int_equal(bundle_drop_name("9", &id, NULL), 0);
	assert_int_equal(bundle_drop_name("9.x.drop", &id, NULL), 0);
	/* incoming/: a CLI's bundle, or a dropped file */
	assert_int_equal(bundle_suffixed("12.bundle"), 1);
	assert_int_equal(bundle_suffixed(".bundle"), 0);
	assert_int_equal(bundle_suffixed("job.yaml"), 0);
	assert_int_equal(bundle_suffixed("12.bundle.x"), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_and_slices),
		cmocka_unit_test(test_single_no_nonce),
		cmocka_unit_test(test_header_errors),
		cmocka_unit_test(test_nonce_too_long),
		cmocka_unit_test(test_count_and_sequence),
		cmocka_unit_test(test_bad_record),
		cmocka_unit_test(test_last_record_ending_in_dashes),
		cmocka_unit_test(test_file_records_across_pieces),
		cmocka_unit_test(test_file_hole_refused_reading_a_record),
		cmocka_unit_test(test_drop_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
