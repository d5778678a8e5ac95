/*
 * test_rec.c - rec.c, the canonical record format: encode/decode round
 * trips (integers, words, quoted strings with every escape, bytes >=
 * 0x80, lists of strings and of IDs, doubles, "---" separators), the
 * exact text written, hostile input (every error with its reason and
 * line), the length bounds, the lengths computed before writing, and
 * rec_lookup.
 */
#include <math.h>

#include "unit.h"
#include "rec.h"

/* Read the one field of a one-line record. */
static void
one_field(const char *text, struct rec_reader *r, struct rec_field *f)
{
	rec_reader_init(r, text, strlen(text));
	TCHECK(rec_next(r, f) == 1, "\"%s\": %s", text, r->why ? r->why : "");
}

static void
test_int_round_trip(void **state)
{
	static const int64_t rows[] = {
		INT64_MIN, -1000, -1, 0, 1, 42, INT64_MAX,
	};
	struct rec_reader r;
	struct rec_field f;
	struct buf b = BUF_INIT;
	char want[64];
	int64_t v;
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		buf_reset(&b);
		rec_put_int(&b, "n", rows[i]);
		snprintf(want, sizeof want, "n: %lld\n", (long long)rows[i]);
		TCHECK(strcmp(b.p, want) == 0, "encoded \"%s\"", b.p);
		one_field(b.p, &r, &f);
		TCHECK(rec_get_int(&r, &f, INT64_MIN, INT64_MAX, &v) == 0 &&
		    v == rows[i], "%lld does not round trip", (long long)rows[i]);
	}
	buf_free(&b);
}

static void
test_uint_double_round_trip(void **state)
{
	static const uint64_t urows[] = { 0, 1, 1099511627775ULL, UINT64_MAX };
	static const struct {
		double in;
		int dec;
		const char *text;
	} drows[] = {
		{ 1.5,			3, "d: 1.500\n" },
		{ 0,			3, "d: 0.000\n" },
		{ -2.25,		2, "d: -2.25\n" },
		{ 1700000000.125,	3, "d: 1700000000.125\n" },
		{ INFINITY,		3, "d: 0.000\n" },	/* inf: 0 */
		{ 1e300,		3, "d: 0.000\n" },	/* out of range: 0 */
	};
	struct rec_reader r;
	struct rec_field f;
	struct buf b = BUF_INIT;
	uint64_t u;
	double d;
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(urows); i++) {
		buf_reset(&b);
		rec_put_uint(&b, "u", urows[i]);
		one_field(b.p, &r, &f);
		TCHECK(rec_get_uint(&r, &f, UINT64_MAX, &u) == 0 &&
		    u == urows[i], "%llu does not round trip",
		    (unsigned long long)urows[i]);
	}
	for (i = 0; i < NELEM(drows); i++) {
		buf_reset(&b);
		rec_put_double(&b, "d", drows[i].in, drows[i].dec);
		TCHECK(strcmp(b.p, drows[i].text) == 0, "double %g: \"%s\"",
		    drows[i].in, b.p);
		one_field(b.p, &r, &f);
		TCHECK(rec_get_double(&r, &f, &d) == 0, "double \"%s\"", b.p);
		if (drows[i].in == drows[i].in && drows[i].in - drows[i].in == 0)
			assert_float_equal(d, drows[i].in, 1e-9);
	}
	buf_free(&b);
}

/*
 * A number with decimals is written as printf's "%.*f" writes it, digit
 * for digit (rec.c makes it with integers where that cannot differ):
 * random values of every size the records hold, both signs, 0 to 9
 * decimals, and values on or next to a rounding boundary (k / 2000 at 3
 * decimals, halves at 0 decimals, which printf rounds to even).
 */
static void
test_double_text_as_printf(void **state)
{
	static const double sizes[] = { 1e-6, 1, 1e3, 1e6, 2e9, 1e12, 9e14 };
	struct buf b = BUF_INIT;
	char want[128];
	double v;
	long i;
	int dec;

	(void)state;
	srand48(7);
	for (i = 0; i < 300000; i++) {
		switch (i % 4) {
		case 0:
		case 1:
			v = (drand48() - 0.5) * sizes[lrand48() % NELEM(sizes)];
			dec = (int)(lrand48() % 10);
			break;
		case 2:		/* halfway at 3 decimals, or one ulp off */
			v = (double)(lrand48() % 4000000000L) / 2000;
			if (lrand48() % 3)	/* about one ulp either way */
				v += (lrand48() % 2 ? v : -v) * 0x1p-52;
			dec = 3;
			break;
		default:	/* halves at 0 decimals; 1700000000.xxx5 */
			v = lrand48() % 2 ? (double)(lrand48() % 1000) + 0.5 :
			    1700000000 + (double)(lrand48() % 1000) / 1000 +
			    0.0005;
			dec = lrand48() % 2 ? 0 : 3;
			break;
		}
		if (lrand48() % 2)
			v = -v;
		buf_reset(&b);
		rec_put_double(&b, "d", v, dec);
		snprintf(want, sizeof want, "d: %.*f\n", dec, v);
		TCHECK(strcmp(b.p, want) == 0, "%.17g at %d decimals: \"%s\", "
		    "printf \"%s\"", v, dec, b.p, want);
	}
	buf_reset(&b);
	rec_put_double(&b, "d", -0.0, 3);
	assert_string_equal(b.p, "d: -0.000\n");
	buf_reset(&b);
	rec_put_double(&b, "d", 2.5, 0);
	assert_string_equal(b.p, "d: 2\n");
	buf_free(&b);
}

/* The lengths computed before writing are what is written. */
static void
test_quoted_lengths_as_written(void **state)
{
	char one[2] = { 0, 0 }, mixed[600], *v[4];
	struct buf b = BUF_INIT;
	int c, i;

	(void)state;
	for (c = 1; c < 256; c++) {	/* every byte alone */
		one[0] = (char)c;
		buf_reset(&b);
		rec_quote(&b, one);
		TCHECK(rec_quoted_len(one) == b.len, "byte 0x%02x: %zu, "
		    "written %zu", c, rec_quoted_len(one), b.len);
	}
	for (i = 0; i < (int)sizeof mixed - 1; i++)	/* every byte, twice */
		mixed[i] = (char)(i % 255 + 1);
	mixed[i] = 0;
	buf_reset(&b);
	rec_quote(&b, mixed);
	assert_int_equal(rec_quoted_len(mixed), b.len);
	buf_reset(&b);
	rec_quote(&b, "");
	assert_int_equal(rec_quoted_len(""), b.len);
	v[0] = mixed;
	v[1] = "";
	v[2] = "a\"b";
	v[3] = NULL;
	for (i = 0; i <= 3; i++) {	/* lists of 3, 2, 1 and 0 strings */
		buf_reset(&b);
		rec_put_strv(&b, "argv", v + (3 - i));
		TCHECK(rec_strv_line_len("argv", v + (3 - i)) + 1 == b.len,
		    "%d strings: %zu, written %zu (with its newline)", i,
		    rec_strv_line_len("argv", v + (3 - i)), b.len);
	}
	buf_free(&b);
}

static void
test_word_encoding(void **state)
{
	static const struct {
		const char *in;
		const char *text;	/* what rec_put_word writes */
	} rows[] = {
		{ "done",		"w: done\n" },
		{ "node7-3fa2",		"w: node7-3fa2\n" },
		{ "a/b@c+d:e.f_g",	"w: a/b@c+d:e.f_g\n" },
		{ "123",		"w: 123\n" },
		{ "-x",			"w: \"-x\"\n" },	/* YAML syntax */
		{ ":x",			"w: \":x\"\n" },
		{ "",			"w: \"\"\n" },
		{ "a b",		"w: \"a b\"\n" },
		{ "[x]",		"w: \"[x]\"\n" },
		{ "caf\xc3\xa9",	"w: \"caf\xc3\xa9\"\n" },
	};
	struct rec_reader r;
	struct rec_field f;
	struct buf b = BUF_INIT;
	char *s;
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		buf_reset(&b);
		rec_put_word(&b, "w", rows[i].in);
		TCHECK(strcmp(b.p, rows[i].text) == 0,
		    "word \"%s\" written as \"%s\", want \"%s\"", rows[i].in,
		    b.p, rows[i].text);
		one_field(b.p, &r, &f);
		s = NULL;
		TCHECK(rec_get_str(&r, &f, &s) == 0 && strcmp(s, rows[i].in) == 0,
		    "word \"%s\" read back as \"%s\"", rows[i].in, s ? s : "");
		free(s);
	}
	buf_free(&b);
}

static void
test_quote_exact_text(void **state)
{
	static const struct {
		const char *in;
		const char *quoted;
	} rows[] = {
		{ "",			"\"\"" },
		{ "plain",		"\"plain\"" },
		{ "a\nb",		"\"a\\nb\"" },
		{ "\t\r",		"\"\\t\\r\"" },
		{ "say \"hi\"",		"\"say \\\"hi\\\"\"" },
		{ "back\\slash",	"\"back\\\\slash\"" },
		{ "\x01\x1f\x7f",	"\"\\x01\\x1f\\x7f\"" },
		{ "\xc3\xa9\xff\x80",	"\"\xc3\xa9\xff\x80\"" },	/* raw */
	};
	struct buf b = BUF_INIT;
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		buf_reset(&b);
		rec_quote(&b, rows[i].in);
		TCHECK(strcmp(b.p, rows[i].quoted) == 0,
		    "row %zu quoted as %s, want %s", i, b.p, rows[i].quoted);
	}
	buf_free(&b);
}

static void
test_string_round_trip(void **state)
{
	static const char *const rows[] = {
		"",
		"hello",
		"line1\nline2\n",
		"tab\there\rcr",
		"quote \" and backslash \\ and both \\\"",
		"\x01\x02\x1b[0m\x7f",
		"caf\xc3\xa9 \xe2\x82\xac \xff\x80\xfe",
		"#!/bin/sh\necho \"$HOME\" | tr a-z A-Z\n",
		"---",
		"key: value",
	};
	struct rec_reader r;
	struct rec_field f;
	struct buf b = BUF_INIT;
	char all[256], *s;
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		buf_reset(&b);
		rec_put_str(&b, "s", rows[i]);
		TCHECK(memchr(b.p, '\n', b.len) == b.p + b.len - 1,
		    "row %zu: encoded text is not one line", i);
		one_field(b.p, &r, &f);
		s = NULL;
		TCHECK(rec_get_str(&r, &f, &s) == 0, "row %zu: %s", i, r.why);
		TCHECK(strcmp(s, rows[i]) == 0, "row %zu: read back \"%s\"", i, s);
		free(s);
	}
	/* Every byte value but NUL. */
	for (i = 1; i < 256; i++)
		all[i - 1] = (char)i;
	all[255] = 0;
	buf_reset(&b);
	rec_put_str(&b, "s", all);
	one_field(b.p, &r, &f);
	assert_int_equal(rec_get_str(&r, &f, &s), 0);
	assert_int_equal(strlen(s), 255);
	assert_memory_equal(s, all, 256);
	free(s);
	buf_free(&b);
}

static void
test_strv_round_trip(void **state)
{
	static const char *const v0[] = { NULL };
	static const char *const v1[] = { "", NULL };
	static const char *const v2[] = { "echo", "hi", NULL };
	static const char *const v3[] = {
		"a, b", "]", "[\"x\"]", "\n", "\"", "\\", "caf\xc3\xa9", ", ",
		NULL,
	};
	static const struct {
		const char *const *v;
		const char *text;	/* NULL: not checked */
	} rows[] = {
		{ v0, "l: []\n" },
		{ v1, "l: [\"\"]\n" },
		{ v2, "l: [\"echo\", \"hi\"]\n" },
		{ v3, NULL },
	};
	struct rec_reader r;
	struct rec_field f;
	struct buf b = BUF_INIT;
	char **out;
	size_t i, j;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		buf_reset(&b);
		rec_put_strv(&b, "l", (char *const *)rows[i].v);
		if (rows[i].text)
			TCHECK(strcmp(b.p, rows[i].text) == 0, "row %zu: \"%s\"",
			    i, b.p);
		one_field(b.p, &r, &f);
		out = NULL;
		TCHECK(rec_get_strv(&r, &f, &out) == 0, "row %zu: %s", i, r.why);
		TCHECK(out != NULL, "row %zu: no vector", i);
		for (j = 0; rows[i].v[j]; j++)
			TCHECK(out[j] && strcmp(out[j], rows[i].v[j]) == 0,
			    "row %zu item %zu: \"%s\"", i, j, out[j] ? out[j] :
			    "(missing)");
		TCHECK(out[j] == NULL, "row %zu: extra items", i);
		strv_free(out);
	}
	/* A NULL vector is written as the empty list. */
	buf_reset(&b);
	rec_put_strv(&b, "l", NULL);
	assert_string_equal(b.p, "l: []\n");
	buf_free(&b);
}

static void
test_idv_round_trip(void **state)
{
	static const uint64_t v3[] = { 1, 2, 1099511627775ULL, UINT64_MAX };
	static const struct {
		const uint64_t *v;
		size_t n;
		const char *text;
	} rows[] = {
		{ NULL,	0, "a: []\n" },
		{ v3,	1, "a: [1]\n" },
		{ v3,	4, "a: [1, 2, 1099511627775, 18446744073709551615]\n" },
	};
	struct rec_reader r;
	struct rec_field f;
	struct buf b = BUF_INIT;
	uint64_t *out;
	size_t i, n;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		buf_reset(&b);
		rec_put_idv(&b, "a", rows[i].v, rows[i].n);
		TCHECK(strcmp(b.p, rows[i].text) == 0, "row %zu: \"%s\"", i, b.p);
		one_field(b.p, &r, &f);
		out = NULL;
		n = 99;
		TCHECK(rec_get_idv(&r, &f, &out, &n) == 0, "row %zu: %s", i,
		    r.why);
		TCHECK(n == rows[i].n, "row %zu: %zu items", i, n);
		if (n)
			assert_memory_equal(out, rows[i].v, n * sizeof *out);
		free(out);
	}
	buf_free(&b);
}

static void
test_separators(void **state)
{
	struct buf b = BUF_INIT;
	struct rec_reader r;
	struct rec_field f;
	int64_t v;

	(void)state;
	rec_put_int(&b, "a", 1);
	rec_put_int(&b, "b", 2);
	rec_put_sep(&b);
	rec_put_int(&b, "a", 3);
	rec_put_sep(&b);
	rec_put_sep(&b);
	rec_put_int(&b, "c", 4);
	assert_string_equal(b.p, "a: 1\nb: 2\n---\na: 3\n---\n---\nc: 4\n");

	rec_reader_init(&r, b.p, b.len);
	/* record 1 */
	assert_int_equal(rec_next(&r, &f), 1);
	assert_true(rec_key_is(&f, "a"));
	assert_false(rec_key_is(&f, "ab"));
	assert_false(rec_key_is(&f, ""));
	assert_int_equal(f.line, 1);
	assert_int_equal(rec_next(&r, &f), 1);
	assert_true(rec_key_is(&f, "b"));
	assert_int_equal(rec_next(&r, &f), 0);
	assert_false(rec_eof(&r));
	/* record 2 */
	assert_int_equal(rec_next(&r, &f), 1);
	assert_int_equal(rec_get_int(&r, &f, 0, 10, &v), 0);
	assert_int_equal(v, 3);
	assert_int_equal(f.line, 4);
	assert_int_equal(rec_next(&r, &f), 0);
	/* record 3 is empty */
	assert_int_equal(rec_next(&r, &f), 0);
	/* record 4 */
	assert_int_equal(rec_next(&r, &f), 1);
	assert_true(rec_key_is(&f, "c"));
	assert_int_equal(f.line, 7);
	assert_int_equal(rec_next(&r, &f), 0);
	assert_true(rec_eof(&r));
	assert_int_equal(rec_next(&r, &f), 0);
	buf_free(&b);
}

/* Line-level errors: rec_next() says -1, why and the line. */
static void
test_hostile_lines(void **state)
{
	static char longkey[64];
	static const struct {
		const char *in;
		size_t len;		/* 0: strlen(in) */
		int fields_ok;		/* rec_next == 1 this many times */
		const char *why;
		int errline;
	} rows[] = {
		{ "a: 1", 0,              0, "no newline",                 1 },
		{ "a: 1\nb: 2", 0,        1, "no newline",                 2 },
		{ "A: 1\n", 0,            0, "does not start with a key",  1 },
		{ "1a: 1\n", 0,           0, "does not start with a key",  1 },
		{ "_a: 1\n", 0,           0, "does not start with a key",  1 },
		{ ": 1\n", 0,             0, "does not start with a key",  1 },
		{ "\n", 0,                0, "does not start with a key",  1 },
		{ " a: 1\n", 0,           0, "does not start with a key",  1 },
		{ "a:1\n", 0,             0, "key: value",                 1 },
		{ "a\n", 0,               0, "key: value",                 1 },
		{ "a b: 1\n", 0,          0, "key: value",                 1 },
		{ "a: \n", 0,             0, "empty value",                1 },
		{ "a: 1\n--- \n", 0,      1, "does not start with a key",  2 },
		{ "a: 1\n\0: 1\n", 10,    1, "does not start with a key",  2 },
		{ NULL /* longkey */, 0,  0, "key too long",               1 },
	};
	struct rec_reader r;
	struct rec_field f;
	size_t i, len;
	int k, rc;

	(void)state;
	memset(longkey, 'k', REC_KEY_MAX + 1);
	memcpy(longkey + REC_KEY_MAX + 1, ": 1\n", 5);
	for (i = 0; i < NELEM(rows); i++) {
		const char *in = rows[i].in ? rows[i].in : longkey;

		len = rows[i].len ? rows[i].len : strlen(in);
		rec_reader_init(&r, in, len);
		for (k = 0; k < rows[i].fields_ok; k++)
			TCHECK(rec_next(&r, &f) == 1, "row %zu field %d", i, k);
		rc = rec_next(&r, &f);
		TCHECK(rc == -1, "row %zu (\"%s\"): rec_next = %d", i, in, rc);
		TCHECK(unit_contains(r.why, rows[i].why),
		    "row %zu: why \"%s\", want \"%s\"", i, r.why ? r.why : "",
		    rows[i].why);
		TCHECK(r.errline == rows[i].errline, "row %zu: line %d, want %d",
		    i, r.errline, rows[i].errline);
	}
	/* A key of exactly REC_KEY_MAX characters is fine. */
	memcpy(longkey + REC_KEY_MAX, ": 1\n", 5);
	rec_reader_init(&r, longkey, strlen(longkey));
	assert_int_equal(rec_next(&r, &f), 1);
	assert_int_equal(f.keylen, REC_KEY_MAX);
}

/* Value-level errors: the decoder says -1, why and the field's line. */
static void
test_hostile_values(void **state)
{
	enum { STR, STRV, IDV, INT, UINT, DBL };
	static const struct {
		int kind;
		const char *in;		/* the value, on line 2 */
		const char *why;
	} rows[] = {
		{ STR,	"\"abc",		"unterminated string" },
		{ STR,	"\"abc\\",		"unterminated escape" },
		{ STR,	"\"a\\qb\"",		"unknown escape" },
		{ STR,	"\"\\x0\"",		"bad \\x escape" },
		{ STR,	"\"\\xg0\"",		"bad \\x escape" },
		{ STR,	"\"\\x\"",		"bad \\x escape" },
		{ STR,	"\"\\x00\"",		"NUL" },
		{ STR,	"\"abc\"x",		"garbage after string" },
		{ STR,	"\"abc\" ",		"garbage after string" },
		{ STR,	"\"a\"\"b\"",		"garbage after string" },
		{ STR,	"\"a\tb\"",		"raw control byte" },
		{ STR,	"\"a\x01" "b\"",	"raw control byte" },
		{ STR,	"\"a\x7f" "b\"",	"raw control byte" },
		{ STR,	"foo bar",		"bad character in word" },
		{ STR,	"[\"a\"]",		"bad character in word" },
		{ STRV,	"[\"a\", \"b\"",	"expected a [list]" },
		{ STRV,	"\"a\"",		"expected a [list]" },
		{ STRV,	"[",			"expected a [list]" },
		{ STRV,	"[\"a\" \"b\"]",	"expected \", \"" },
		{ STRV,	"[\"a\",\"b\"]",	"expected \", \"" },
		{ STRV,	"[\"a\", ]",		"expected \", \"" },
		{ STRV,	"[\"a\",]",		"expected \", \"" },
		{ STRV,	"[a]",			"not a quoted string" },
		{ STRV,	"[\"a\", b]",		"not a quoted string" },
		{ STRV,	"[\"\\x00\"]",		"NUL" },
		{ STRV,	"[\"a]",		"unterminated string" },
		{ IDV,	"[1, 2",		"expected a [list]" },
		{ IDV,	"[1,2]",		"expected \", \"" },
		{ IDV,	"[1, ]",		"expected \", \"" },
		{ IDV,	"[1, x]",		"not a number" },
		{ IDV,	"[-1]",			"not a number" },
		{ IDV,	"[1, 99999999999999999999]", "not a number" },
		{ IDV,	"[\"1\"]",		"not a number" },
		{ INT,	"12a",			"not an integer" },
		{ INT,	"+5",			"not an integer" },
		{ INT,	"0x10",			"not an integer" },
		{ INT,	"-",			"not an integer" },
		{ INT,	"99999999999999999999",	"not an integer" },
		{ INT,	"11",			"out of range" },
		{ UINT,	"-1",			"not an unsigned integer" },
		{ UINT,	"18446744073709551616",	"not an unsigned integer" },
		{ UINT,	"1.5",			"not an unsigned integer" },
		{ DBL,	"nan",			"not a number" },
		{ DBL,	"1e999",		"not a number" },
		{ DBL,	"1.2.3",		"not a number" },
		{ DBL,	"1e15",			"number out of range" },
		{ DBL,	"-2e300",		"number out of range" },
	};
	struct rec_reader r;
	struct rec_field f;
	char text[256], *s, **v;
	uint64_t *ids, u;
	int64_t iv;
	double d;
	size_t i, n;
	int rc = 0;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		snprintf(text, sizeof text, "ok: 1\nv: %s\n", rows[i].in);
		rec_reader_init(&r, text, strlen(text));
		TCHECK(rec_next(&r, &f) == 1 && rec_next(&r, &f) == 1,
		    "row %zu: %s", i, r.why ? r.why : "");
		s = NULL;
		v = NULL;
		ids = NULL;
		switch (rows[i].kind) {
		case STR: rc = rec_get_str(&r, &f, &s); break;
		case STRV: rc = rec_get_strv(&r, &f, &v); break;
		case IDV: rc = rec_get_idv(&r, &f, &ids, &n); break;
		case INT: rc = rec_get_int(&r, &f, -10, 10, &iv); break;
		case UINT: rc = rec_get_uint(&r, &f, UINT64_MAX, &u); break;
		case DBL: rc = rec_get_double(&r, &f, &d); break;
		}
		TCHECK(rc == -1, "row %zu (%s): accepted", i, rows[i].in);
		TCHECK(unit_contains(r.why, rows[i].why),
		    "row %zu (%s): why \"%s\", want \"%s\"", i, rows[i].in,
		    r.why ? r.why : "", rows[i].why);
		TCHECK(r.errline == 2, "row %zu: line %d", i, r.errline);
		free(s);
		strv_free(v);
		free(ids);
	}
}

static void
test_bounds(void **state)
{
	struct rec_reader r;
	struct rec_field f;
	struct buf b = BUF_INIT;
	uint64_t *ids = NULL;
	char **v = NULL;
	size_t i, n;

	(void)state;
	/* A line longer than REC_LINE_MAX. */
	buf_puts(&b, "s: \"");
	for (i = 0; i < REC_LINE_MAX; i++)
		buf_putc(&b, 'x');
	buf_puts(&b, "\"\n");
	rec_reader_init(&r, b.p, b.len);
	assert_int_equal(rec_next(&r, &f), -1);
	assert_contains(r.why, "too long");

	/* Exactly REC_LIST_MAX IDs are fine, one more is not. */
	buf_reset(&b);
	buf_puts(&b, "a: [");
	for (i = 0; i < REC_LIST_MAX; i++)
		buf_puts(&b, i ? ", 1" : "1");
	buf_puts(&b, "]\n");
	one_field(b.p, &r, &f);
	assert_int_equal(rec_get_idv(&r, &f, &ids, &n), 0);
	assert_int_equal(n, REC_LIST_MAX);
	free(ids);
	b.len -= 2;
	buf_puts(&b, ", 1]\n");
	one_field(b.p, &r, &f);
	assert_int_equal(rec_get_idv(&r, &f, &ids, &n), -1);
	assert_contains(r.why, "list too long");

	buf_reset(&b);
	buf_puts(&b, "l: [");
	for (i = 0; i <= REC_LIST_MAX; i++)
		buf_puts(&b, i ? ", \"\"" : "\"\"");
	buf_puts(&b, "]\n");
	one_field(b.p, &r, &f);
	assert_int_equal(rec_get_strv(&r, &f, &v), -1);
	assert_contains(r.why, "list too long");
	buf_free(&b);
}

static void
test_lookup(void **state)
{
	static const char data[] =
	    "beat2: 5\n"
	    "beat: 7\n"
	    "name: \"a\\tb\"\n"
	    "beat: 9\n"
	    "host: node7\n";
	static const struct {
		const char *data;
		const char *key;
		const char *want;	/* NULL: not found */
	} rows[] = {
		{ data,			"beat",	"7" },	/* first one wins */
		{ data,			"beat2", "5" },
		{ data,			"name",	"a\tb" },
		{ data,			"host",	"node7" },
		{ data,			"bea",	NULL },
		{ data,			"missing", NULL },
		{ "a: \"bad\\q\"\n",	"a",	NULL },	/* bad value */
		{ "Bad line\nb: 1\n",	"b",	NULL },	/* error before it */
		{ "b: 1",		"b",	NULL },	/* no newline */
		{ "",			"b",	NULL },
	};
	char *s;
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		s = rec_lookup(rows[i].data, strlen(rows[i].data), rows[i].key);
		if (rows[i].want == NULL)
			TCHECK(s == NULL, "row %zu: found \"%s\"", i, s);
		else
			TCHECK(s && strcmp(s, rows[i].want) == 0,
			    "row %zu: \"%s\", want \"%s\"", i, s ? s : "(null)",
			    rows[i].want);
		free(s);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_int_round_trip),
		cmocka_unit_test(test_uint_double_round_trip),
		cmocka_unit_test(test_double_text_as_printf),
		cmocka_unit_test(test_word_encoding),
		cmocka_unit_test(test_quote_exact_text),
		cmocka_unit_test(test_quoted_lengths_as_written),
		cmocka_unit_test(test_string_round_trip),
		cmocka_unit_test(test_strv_round_trip),
		cmocka_unit_test(test_idv_round_trip),
		cmocka_unit_test(test_separators),
		cmocka_unit_test(test_hostile_lines),
		cmocka_unit_test(test_hostile_values),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_lookup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
