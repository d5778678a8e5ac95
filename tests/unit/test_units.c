/*
 * test_units.c - units.c: sizes ("4G", "4GB", "1.5G", bare bytes) and
 * durations (Slurm forms and "90m"/"1h30m") as users write them, the
 * millisecond form of config values, plain integers, and the three
 * formatters (with parse(format(x)) == x round trips).
 */
#include "unit.h"
#include "units.h"

#define KiB (1ULL << 10)
#define MiB (1ULL << 20)
#define GiB (1ULL << 30)
#define TiB (1ULL << 40)
#define PiB (1ULL << 50)

static void
test_size_accepts(void **state)
{
	static const struct {
		const char *in;
		uint64_t want;
	} rows[] = {
		{ "4G",		4 * GiB },
		{ "4g",		4 * GiB },
		{ "4GiB",	4 * GiB },
		{ "4 G",	4 * GiB },	/* spool(1): a blank before the unit */
		{ "4 GiB",	4 * GiB },
		{ "1.5 g",	GiB + GiB / 2 },
		{ "4 GB",	4000000000ULL },
		{ "10 B",	10 },
		{ "4gib",	4 * GiB },
		{ "512M",	512 * MiB },
		{ "512MiB",	512 * MiB },
		{ "4GB",	4000000000ULL },
		{ "4gb",	4000000000ULL },
		{ "1.5G",	GiB + GiB / 2 },
		{ "0.5M",	MiB / 2 },
		{ "100K",	100 * KiB },
		{ "100KB",	100000 },
		{ "2T",		2 * TiB },
		{ "2TB",	2000000000000ULL },
		{ "1P",		PiB },
		{ "1PB",	1000000000000000ULL },
		{ "1048576",	1048576 },
		{ "0",		0 },
		{ "10B",	10 },	/* B is bytes, not bits */
		{ "16383P",	16383 * PiB },
		{ "18446744073709551609", UINT64_MAX - 6 },
	};
	const char *why;
	uint64_t v;
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		v = 12345;
		why = NULL;
		TCHECK(units_parse_size(rows[i].in, &v, &why) == 0,
		    "size \"%s\" refused: %s", rows[i].in, why ? why : "?");
		TCHECK(v == rows[i].want, "size \"%s\" = %llu, want %llu",
		    rows[i].in, (unsigned long long)v,
		    (unsigned long long)rows[i].want);
	}
}

static void
test_size_rejects(void **state)
{
	static const char *const rows[] = {
		"",
		"-1",
		"-1G",
		"4X",
		"4GG",
		"G",
		"1.5",			/* fractional bytes */
		"1.5B",
		".5G",
		"4.G",
		" 4G",
		"4G ",
		"4 ",			/* a blank with no unit after it */
		"4 G ",
		"4\tG",			/* a blank is a space */
		"4 .5G",
		"+4G",
		"0x10",
		"1e9",
		"18446744073709551616",	/* 2^64 */
		"99999999999999999999K",
		"16384P",		/* exactly 2^64 */
		"16777216T",		/* 2^64 */
		"18446744073709.9GB",	/* fraction carries past 2^64 */
	};
	const char *why;
	uint64_t v;
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		why = NULL;
		v = 777;
		TCHECK(units_parse_size(rows[i], &v, &why) == -1,
		    "size \"%s\" accepted as %llu", rows[i],
		    (unsigned long long)v);
		TCHECK(why != NULL && *why, "size \"%s\": no reason", rows[i]);
	}
	why = NULL;
	assert_int_equal(units_parse_size(NULL, &v, &why), -1);
	assert_non_null(why);
}

static void
test_duration_accepts(void **state)
{
	static const struct {
		const char *in;
		uint64_t want;
	} rows[] = {
		{ "1:30:00",	5400 },
		{ "90m",	5400 },
		{ "1-00:00:00",	86400 },
		{ "30:00",	1800 },
		{ "45",		45 },
		{ "0",		0 },
		{ "2h",		7200 },
		{ "1h30m",	5400 },
		{ "90s",	90 },
		{ "1d",		86400 },
		{ "1d2h3m4s",	86400 + 7200 + 180 + 4 },
		{ "1-12",	86400 + 12 * 3600 },
		{ "1-12:30",	86400 + 12 * 3600 + 30 * 60 },
		{ "2-03:04:05",	2 * 86400 + 3 * 3600 + 4 * 60 + 5 },
		{ "00:00:01",	1 },
		{ "0:59",	59 },
		{ "99:99:99",	99 * 3600 + 99 * 60 + 99 },	/* SGE habit */
	};
	const char *why;
	uint64_t v;
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		v = 12345;
		why = NULL;
		TCHECK(units_parse_duration(rows[i].in, &v, &why) == 0,
		    "duration \"%s\" refused: %s", rows[i].in, why ? why : "?");
		TCHECK(v == rows[i].want, "duration \"%s\" = %llu, want %llu",
		    rows[i].in, (unsigned long long)v,
		    (unsigned long long)rows[i].want);
	}
}

static void
test_duration_rejects(void **state)
{
	static const char *const rows[] = {
		"",
		"abc",
		"garbage",
		"1:60",
		"1-2:60",
		"1-2:3:60",
		"-5",
		"-1:00",
		"-1-00:00:00",
		"1:2:3:4",
		"1:",
		":30",
		"1::2",
		"1-",
		"1-2-3",
		"1h30",
		"h",
		"1x",
		"1.5h",
		"1h 30m",
		" 45",
		"45 ",
		"99999999999",		/* too many digits */
	};
	const char *why;
	uint64_t v;
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		why = NULL;
		v = 777;
		TCHECK(units_parse_duration(rows[i], &v, &why) == -1,
		    "duration \"%s\" accepted as %llu", rows[i],
		    (unsigned long long)v);
		TCHECK(why != NULL && *why, "duration \"%s\": no reason",
		    rows[i]);
	}
}

/*
 * units.h: durations "reject ... overflow".  Sums of "9999999999d"
 * terms: two are fine; 25000 add up to about 2.2e19 seconds, more than
 * 2^64; and 21350 x 9999999999d + 3982355951d + 28816s is 2^64 + 3600
 * seconds, which wraps to exactly one hour if the sum is not checked.
 */
static void
test_duration_rejects_sum_overflow(void **state)
{
	static const char term[] = "9999999999d";
	static const struct {
		size_t terms;
		const char *tail;
		int ok;
		uint64_t want;
	} rows[] = {
		{ 2,		"",			1, 2 * 9999999999ULL * 86400 },
		{ 25000,	"",			0, 0 },
		{ 21350,	"3982355951d28816s",	0, 0 },
	};
	const char *why = NULL;
	struct buf b = BUF_INIT;
	uint64_t v[NELEM(rows)];
	int rc[NELEM(rows)], nfail = 0;
	size_t i, k;

	(void)state;
	for (k = 0; k < NELEM(rows); k++) {
		buf_reset(&b);
		for (i = 0; i < rows[k].terms; i++)
			buf_puts(&b, term);
		buf_puts(&b, rows[k].tail);
		v[k] = 0;
		rc[k] = units_parse_duration(b.p, &v[k], &why);
	}
	buf_free(&b);
	for (k = 0; k < NELEM(rows); k++) {
		if (rows[k].ok)
			TEXPECT(nfail, rc[k] == 0 && v[k] == rows[k].want,
			    "%zu x %s%s: rc %d, %llu", rows[k].terms, term,
			    rows[k].tail, rc[k], (unsigned long long)v[k]);
		else
			TEXPECT(nfail, rc[k] == -1, "%zu x %s%s (more than "
			    "2^64 seconds) was accepted as %llu seconds",
			    rows[k].terms, term, rows[k].tail,
			    (unsigned long long)v[k]);
	}
	assert_int_equal(nfail, 0);
}

static void
test_parse_ms(void **state)
{
	static const struct {
		const char *in;
		int ok;
		uint64_t want;
	} rows[] = {
		{ "250ms",	1, 250 },
		{ "0ms",	1, 0 },
		{ "1.5s",	1, 1500 },
		{ "1.5",	1, 1500 },
		{ "0.5s",	1, 500 },
		{ "0.001s",	1, 1 },
		{ "2s",		1, 2000 },
		{ "2",		1, 2000 },
		{ "1m",		1, 60000 },
		{ "1:00",	1, 60000 },
		{ "1h",		1, 3600000 },
		{ "",		0, 0 },
		{ "-1s",	0, 0 },
		{ "-250ms",	0, 0 },
		{ "ms",		0, 0 },
		{ "1.5ms",	0, 0 },
		{ "1.5m",	0, 0 },
		{ ".5s",	0, 0 },
		{ "abc",	0, 0 },
		{ "99999999999999ms", 0, 0 },	/* beyond any task */
	};
	const char *why;
	uint64_t v;
	size_t i;
	int rc;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		v = 777;
		why = NULL;
		rc = units_parse_ms(rows[i].in, &v, &why);
		if (rows[i].ok) {
			TCHECK(rc == 0, "ms \"%s\" refused: %s", rows[i].in,
			    why ? why : "?");
			TCHECK(v == rows[i].want, "ms \"%s\" = %llu, want %llu",
			    rows[i].in, (unsigned long long)v,
			    (unsigned long long)rows[i].want);
		} else {
			TCHECK(rc == -1, "ms \"%s\" accepted as %llu",
			    rows[i].in, (unsigned long long)v);
			TCHECK(why != NULL, "ms \"%s\": no reason", rows[i].in);
		}
	}
}

static void
test_parse_uint_int(void **state)
{
	static const struct {
		const char *in;
		uint64_t max;
		int ok;
		uint64_t want;
	} urows[] = {
		{ "0",		10,	1, 0 },
		{ "10",		10,	1, 10 },
		{ "11",		10,	0, 0 },
		{ "18446744073709551609", UINT64_MAX, 1, UINT64_MAX - 6 },
		{ "18446744073709551616", UINT64_MAX, 0, 0 },
		{ "-1",		10,	0, 0 },
		{ "",		10,	0, 0 },
		{ "1x",		10,	0, 0 },
		{ "x",		10,	0, 0 },
	};
	static const struct {
		const char *in;
		int64_t min, max;
		int ok;
		int64_t want;
	} irows[] = {
		{ "-1000",	-1000, 1000,	1, -1000 },
		{ "1000",	-1000, 1000,	1, 1000 },
		{ "-1001",	-1000, 1000,	0, 0 },
		{ "1001",	-1000, 1000,	0, 0 },
		{ "0",		-1000, 1000,	1, 0 },
		{ "--1",	-1000, 1000,	0, 0 },
		{ "-",		-1000, 1000,	0, 0 },
		{ "-9223372036854775807", INT64_MIN + 1, INT64_MAX, 1,
		    INT64_MIN + 1 },
		{ "9223372036854775808", INT64_MIN, INT64_MAX, 0, 0 },
	};
	const char *why;
	uint64_t u;
	int64_t s;
	size_t i;
	int rc;

	(void)state;
	for (i = 0; i < NELEM(urows); i++) {
		u = 777;
		rc = units_parse_uint(urows[i].in, urows[i].max, &u, &why);
		TCHECK(rc == (urows[i].ok ? 0 : -1), "uint \"%s\" rc %d",
		    urows[i].in, rc);
		if (urows[i].ok)
			TCHECK(u == urows[i].want, "uint \"%s\" = %llu",
			    urows[i].in, (unsigned long long)u);
	}
	for (i = 0; i < NELEM(irows); i++) {
		s = 777;
		rc = units_parse_int(irows[i].in, irows[i].min, irows[i].max,
		    &s, &why);
		TCHECK(rc == (irows[i].ok ? 0 : -1), "int \"%s\" rc %d",
		    irows[i].in, rc);
		if (irows[i].ok)
			TCHECK(s == irows[i].want, "int \"%s\" = %lld",
			    irows[i].in, (long long)s);
	}
}

/* units.h: "4G", "1536M", "1000": exact, shortest binary unit. */
static void
test_format_size(void **state)
{
	static const struct {
		uint64_t in;
		const char *want;
	} rows[] = {
		{ 4 * GiB,	"4G" },
		{ 1536 * MiB,	"1536M" },
		{ 1000,		"1000" },
		{ 1023,		"1023" },
		{ KiB,		"1K" },
		{ 3 * KiB,	"3K" },
		{ 2 * TiB,	"2T" },
		{ PiB,		"1P" },
		{ 1024 * PiB,	"1024P" },
	};
	char out[32];
	size_t i;
	int nfail = 0;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		units_format_size(rows[i].in, out, sizeof out);
		TEXPECT(nfail, strcmp(out, rows[i].want) == 0,
		    "format_size(%llu) = \"%s\", want \"%s\"",
		    (unsigned long long)rows[i].in, out, rows[i].want);
	}
	assert_int_equal(nfail, 0);
}

/* units.h: whole MiB rounded up, without overflow at the top. */
static void
test_mib_up(void **state)
{
	(void)state;
	assert_int_equal(units_mib_up(0), 0);
	assert_int_equal(units_mib_up(1), 1);
	assert_int_equal(units_mib_up(MiB), 1);
	assert_int_equal(units_mib_up(MiB + 1), 2);
	assert_int_equal(units_mib_up(4000000000ULL), 3815);	/* 4GB */
	assert_int_equal(units_mib_up(4 * GiB), 4096);
	assert_int_equal(units_mib_up(UINT64_MAX), 1ULL << 44);
}

static void
test_format_size_round_trip(void **state)
{
	static const uint64_t rows[] = {
		0, 1, 1000, 1023, 1024, 1025, 4 * GiB, 1536 * MiB, 3 * TiB + 1,
		PiB, 1024 * PiB, 5 * PiB + 7 * KiB, UINT64_MAX >> 1,
	};
	const char *why;
	char out[32];
	uint64_t v;
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		units_format_size(rows[i], out, sizeof out);
		TCHECK(units_parse_size(out, &v, &why) == 0 && v == rows[i],
		    "%llu -> \"%s\" does not parse back",
		    (unsigned long long)rows[i], out);
	}
}

static void
test_format_human(void **state)
{
	static const struct {
		uint64_t in;
		const char *want;
	} rows[] = {
		{ 0,			"0B" },
		{ 512,			"512B" },
		{ 1023,			"1023B" },
		{ KiB,			"1K" },
		{ KiB + KiB / 2,	"1.5K" },
		{ 512 * MiB,		"512M" },
		{ 23 * GiB + GiB / 2,	"23.5G" },
		{ 150 * GiB + GiB / 4,	"150G" },	/* >= 100: no decimal */
		{ 2 * TiB,		"2T" },
		{ 1536 * PiB,		"1536P" },
	};
	char out[32];
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		units_format_human(rows[i].in, out, sizeof out);
		TCHECK(strcmp(out, rows[i].want) == 0,
		    "format_human(%llu) = \"%s\", want \"%s\"",
		    (unsigned long long)rows[i].in, out, rows[i].want);
	}
}

static void
test_format_duration(void **state)
{
	static const struct {
		uint64_t in;
		const char *want;
	} rows[] = {
		{ 0,		"0" },
		{ 45,		"45" },
		{ 90,		"1:30" },
		{ 3599,		"59:59" },
		{ 3600,		"1:00:00" },
		{ 5400,		"1:30:00" },
		{ 86399,	"23:59:59" },
		{ 86400,	"1-00:00:00" },
		{ 172800,	"2-00:00:00" },
		{ 90061,	"1-01:01:01" },
	};
	const char *why;
	char out[40];
	uint64_t v;
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		units_format_duration(rows[i].in, out, sizeof out);
		TCHECK(strcmp(out, rows[i].want) == 0,
		    "format_duration(%llu) = \"%s\", want \"%s\"",
		    (unsigned long long)rows[i].in, out, rows[i].want);
		TCHECK(units_parse_duration(out, &v, &why) == 0 &&
		    v == rows[i].in, "\"%s\" does not parse back to %llu",
		    out, (unsigned long long)rows[i].in);
	}
	/* Every second of the first two days survives the round trip. */
	for (v = 0; v < 2 * 86400 + 5; v += 7) {
		uint64_t back = ~0ULL;

		units_format_duration(v, out, sizeof out);
		TCHECK(units_parse_duration(out, &back, &why) == 0 && back == v,
		    "%llu -> \"%s\" -> %llu", (unsigned long long)v, out,
		    (unsigned long long)back);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_size_accepts),
		cmocka_unit_test(test_size_rejects),
		cmocka_unit_test(test_duration_accepts),
		cmocka_unit_test(test_duration_rejects),
		cmocka_unit_test(test_duration_rejects_sum_overflow),
		cmocka_unit_test(test_parse_ms),
		cmocka_unit_test(test_parse_uint_int),
		cmocka_unit_test(test_format_size),
		cmocka_unit_test(test_mib_up),
		cmocka_unit_test(test_format_size_round_trip),
		cmocka_unit_test(test_format_human),
		cmocka_unit_test(test_format_duration),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
