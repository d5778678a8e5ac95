/*
 * test_config.c - config.c, SPOOL/spool.yaml: the defaults, every
 * "daemon" key with its units and bounds, unknown keys (the message
 * names file, line, column and key), bad values with their position,
 * lost-timeout below twice the heartbeat, documents that hold no
 * settings, and config_load from a directory (missing file, a file, a
 * symlink planted in its place).
 */
#include "unit.h"
#include "config.h"

enum cfield {
	C_FSYNC, C_HEARTBEAT, C_LOST, C_DEATH, C_RESCAN, C_SETTLE, C_REQUEUES,
	C_SHARED,
};

static uint64_t
cfield(const struct config *c, enum cfield f)
{
	switch (f) {
	case C_FSYNC: return (uint64_t)c->fsync;
	case C_HEARTBEAT: return c->heartbeat_ms;
	case C_LOST: return c->lost_timeout_ms;
	case C_DEATH: return c->death_timeout_ms;
	case C_RESCAN: return c->rescan_ms;
	case C_SETTLE: return c->settle_ms;
	case C_REQUEUES: return c->max_requeues;
	case C_SHARED: return (uint64_t)c->shared;
	}
	return ~0ULL;
}

static void
assert_defaults(const struct config *c)
{
	assert_int_equal(c->fsync, 1);
	assert_int_equal(c->heartbeat_ms, 2000);
	assert_int_equal(c->lost_timeout_ms, 30000);
	assert_int_equal(c->death_timeout_ms, 60000);
	assert_int_equal(c->rescan_ms, 1000);
	assert_int_equal(c->settle_ms, 2000);
	assert_int_equal(c->max_requeues, 3);
	assert_int_equal(c->shared, 0);
}

static int
parse(struct config *c, const char *text, char *why, size_t size)
{
	why[0] = 0;
	return config_parse(c, text, strlen(text), why, size);
}

static void
test_defaults(void **state)
{
	static const char *const empty[] = {
		"", "\n", "# nothing\n", "daemon: {}\n",
	};
	struct config c;
	char why[300];
	size_t i;

	(void)state;
	memset(&c, 0xa5, sizeof c);
	config_defaults(&c);
	assert_defaults(&c);
	for (i = 0; i < NELEM(empty); i++) {
		memset(&c, 0xa5, sizeof c);
		TCHECK(parse(&c, empty[i], why, sizeof why) == 0, "row %zu: %s",
		    i, why);
		assert_defaults(&c);
		config_free(&c);
	}
}

/*
 * A file with a document marker and only comments holds no settings
 * (people keep commented-out examples): it means the defaults.
 */
static void
test_commented_out_document(void **state)
{
	static const char text[] =
	    "---\n"
	    "# daemon:\n"
	    "#   fsync: false\n";
	struct config c;
	char why[300];

	(void)state;
	TCHECK(parse(&c, text, why, sizeof why) == 0, "refused: %s", why);
	assert_defaults(&c);
	config_free(&c);
}

static void
test_every_key(void **state)
{
	static const struct {
		const char *key;
		const char *value;
		enum cfield f;
		uint64_t want;
	} rows[] = {
		{ "fsync",		"false",	C_FSYNC,	0 },
		{ "fsync",		"no",		C_FSYNC,	0 },
		{ "fsync",		"off",		C_FSYNC,	0 },
		{ "fsync",		"true",		C_FSYNC,	1 },
		{ "fsync",		"yes",		C_FSYNC,	1 },
		{ "fsync",		"on",		C_FSYNC,	1 },
		{ "heartbeat",		"500ms",	C_HEARTBEAT,	500 },
		{ "heartbeat",		"10ms",		C_HEARTBEAT,	10 },
		{ "heartbeat",		"1.5s",		C_HEARTBEAT,	1500 },
		{ "heartbeat",		"3",		C_HEARTBEAT,	3000 },
		{ "lost-timeout",	"1m",		C_LOST,		60000 },
		{ "lost-timeout",	"1-00:00:00",	C_LOST,		86400000 },
		{ "death-timeout",	"2m",		C_DEATH,	120000 },
		{ "death-timeout",	"1:30",		C_DEATH,	90000 },
		{ "death-timeout",	"100ms",	C_DEATH,	100 },
		{ "rescan",		"0.5s",		C_RESCAN,	500 },
		{ "rescan",		"10m",		C_RESCAN,	600000 },
		{ "settle",		"0",		C_SETTLE,	0 },
		{ "settle",		"250ms",	C_SETTLE,	250 },
		{ "max-requeues",	"0",		C_REQUEUES,	0 },
		{ "max-requeues",	"100",		C_REQUEUES,	100 },
		{ "shared",		"true",		C_SHARED,	1 },
		{ "shared",		"false",	C_SHARED,	0 },
	};
	struct config c;
	char text[200], why[300];
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		snprintf(text, sizeof text, "daemon:\n  %s: %s\n", rows[i].key,
		    rows[i].value);
		TCHECK(parse(&c, text, why, sizeof why) == 0, "%s: %s: %s",
		    rows[i].key, rows[i].value, why);
		TCHECK(cfield(&c, rows[i].f) == rows[i].want,
		    "%s: %s gave %llu, want %llu", rows[i].key, rows[i].value,
		    (unsigned long long)cfield(&c, rows[i].f),
		    (unsigned long long)rows[i].want);
		config_free(&c);
	}
}

static void
test_all_keys_together(void **state)
{
	static const char text[] =
	    "daemon:\n"
	    "  fsync: false\n"
	    "  heartbeat: 1s\n"
	    "  lost-timeout: 10s\n"
	    "  death-timeout: 20s\n"
	    "  rescan: 200ms\n"
	    "  settle: 1s\n"
	    "  max-requeues: 7\n"
	    "  shared: yes\n";
	struct config c;
	char why[300];

	(void)state;
	TCHECK(parse(&c, text, why, sizeof why) == 0, "%s", why);
	assert_int_equal(c.fsync, 0);
	assert_int_equal(c.heartbeat_ms, 1000);
	assert_int_equal(c.lost_timeout_ms, 10000);
	assert_int_equal(c.death_timeout_ms, 20000);
	assert_int_equal(c.rescan_ms, 200);
	assert_int_equal(c.settle_ms, 1000);
	assert_int_equal(c.max_requeues, 7);
	assert_int_equal(c.shared, 1);
	config_free(&c);
}

/* Errors: the exact message a person sees. */
static void
test_errors(void **state)
{
	static const struct {
		const char *text;
		const char *want;	/* whole message, or its start */
		int prefix;
	} rows[] = {
		{ "daemon:\n  heartbeet: 2s\n",
		    "spool.yaml: line 2, column 3: unknown key \"heartbeet\" "
		    "in \"daemon\" (see spool-layout(5))", 0 },
		{ "deamon:\n  fsync: true\n",
		    "spool.yaml: line 1, column 1: unknown key \"deamon\" "
		    "(known: daemon, cluster)", 0 },
		{ "daemon:\n  fsync: true\ncores: 4\n",
		    "spool.yaml: line 3, column 1: unknown key \"cores\" "
		    "(known: daemon, cluster)", 0 },
		{ "daemon:\n  heartbeat: soon\n",
		    "spool.yaml: line 2, column 14: key \"heartbeat\": bad "
		    "duration", 1 },
		{ "daemon:\n  heartbeat: 5ms\n",
		    "spool.yaml: line 2, column 14: key \"heartbeat\": value "
		    "out of range", 0 },
		{ "daemon:\n  rescan: 11m\n",
		    "spool.yaml: line 2, column 11: key \"rescan\": value out "
		    "of range", 0 },
		{ "daemon:\n  lost-timeout: 50ms\n",
		    "spool.yaml: line 2, column 17: key \"lost-timeout\": value "
		    "out of range", 0 },
		{ "daemon:\n  death-timeout: 2d\n",
		    "spool.yaml: line 2, column 18: key \"death-timeout\": value "
		    "out of range", 0 },
		{ "daemon:\n  max-requeues: 101\n",
		    "spool.yaml: line 2, column 17: key \"max-requeues\": number "
		    "too large", 0 },
		{ "daemon:\n  max-requeues: -1\n",
		    "spool.yaml: line 2, column 17: key \"max-requeues\": "
		    "negative value", 0 },
		{ "daemon:\n  fsync: maybe\n",
		    "spool.yaml: line 2, column 10: key \"fsync\": expected true "
		    "or false", 0 },
		{ "daemon:\n  fsync: 1\n",
		    "spool.yaml: line 2, column 10: key \"fsync\": expected true "
		    "or false", 0 },
		{ "daemon:\n  shared:\n",
		    "spool.yaml: line 2, column 10: key \"shared\": expected a "
		    "single value", 0 },
		{ "daemon:\n  settle: [1s]\n",
		    "spool.yaml: line 2, column 11: key \"settle\": expected a "
		    "single value", 0 },
		{ "daemon: 5\n",
		    "spool.yaml: line 1, column 9: \"daemon\" must be a mapping",
		    0 },
		{ "- daemon\n",
		    "spool.yaml: line 1, column 1: the file must be a mapping", 0 },
		{ "daemon:\n  fsync: true\n  fsync: false\n",
		    "spool.yaml: line 3, column 3: duplicate key \"fsync\"", 0 },
		{ "daemon:\n  heartbeat: &h 1s\n",
		    "spool.yaml: line 2, column 14: YAML anchors are not allowed",
		    0 },
		{ "daemon:\n  heartbeat: 10s\n  lost-timeout: 15s\n",
		    "lost-timeout must be at least twice the heartbeat", 2 },
		{ "daemon:\n  heartbeat: 20s\n",	/* default lost 30s */
		    "lost-timeout must be at least twice the heartbeat", 2 },
	};
	struct config c;
	char why[300];
	size_t i;
	int ok;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		TCHECK(parse(&c, rows[i].text, why, sizeof why) == -1,
		    "row %zu accepted", i);
		if (rows[i].prefix == 0)
			ok = strcmp(why, rows[i].want) == 0;
		else if (rows[i].prefix == 1)
			ok = strncmp(why, rows[i].want, strlen(rows[i].want)) == 0;
		else
			ok = unit_contains(why, rows[i].want) &&
			    strncmp(why, "spool.yaml: ", 12) == 0;
		TCHECK(ok, "row %zu:\n  got  \"%s\"\n  want \"%s\"", i, why,
		    rows[i].want);
	}
}

/* The boundary of the lost-timeout rule is allowed. */
static void
test_lost_timeout_boundary(void **state)
{
	struct config c;
	char why[300];

	(void)state;
	assert_int_equal(parse(&c, "daemon:\n  heartbeat: 10s\n"
	    "  lost-timeout: 20s\n", why, sizeof why), 0);
	assert_int_equal(c.lost_timeout_ms, 20000);
	config_free(&c);
	assert_int_equal(parse(&c, "daemon:\n  heartbeat: 10s\n"
	    "  lost-timeout: 19999ms\n", why, sizeof why), -1);
	/* Order of keys does not matter. */
	assert_int_equal(parse(&c, "daemon:\n  lost-timeout: 20s\n"
	    "  heartbeat: 10s\n", why, sizeof why), 0);
	config_free(&c);
}

static void
test_load(void **state)
{
	static const char good[] = "daemon:\n  settle: 5s\n";
	static const char bad[] = "daemon:\n  settle: x\n";
	struct config c;
	char *dir, *path, why[300];
	int dfd;

	(void)state;
	dir = unit_tmpdir();
	assert_non_null(dir);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);

	/* No file: defaults. */
	memset(&c, 0, sizeof c);
	assert_int_equal(config_load(&c, dfd, why, sizeof why), 0);
	assert_defaults(&c);
	config_free(&c);

	/* A file. */
	path = xasprintf("%s/%s", dir, CONFIG_FILE);
	assert_int_equal(unit_write_file(path, good, strlen(good)), 0);
	assert_int_equal(config_load(&c, dfd, why, sizeof why), 0);
	assert_int_equal(c.settle_ms, 5000);
	assert_int_equal(c.heartbeat_ms, 2000);
	config_free(&c);

	/* A bad file names itself. */
	assert_int_equal(unit_write_file(path, bad, strlen(bad)), 0);
	assert_int_equal(config_load(&c, dfd, why, sizeof why), -1);
	assert_contains(why, "spool.yaml: line 2, column 11");

	/* A symlink in its place is refused, not followed. */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink("/etc/hostname", path), 0);
	why[0] = 0;
	assert_int_equal(config_load(&c, dfd, why, sizeof why), -1);
	assert_contains(why, "spool.yaml");

	/* So is a directory. */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(config_load(&c, dfd, why, sizeof why), -1);

	close(dfd);
	unit_rmrf(dir);
	free(path);
	free(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_commented_out_document),
		cmocka_unit_test(test_every_key),
		cmocka_unit_test(test_all_keys_together),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_lost_timeout_boundary),
		cmocka_unit_test(test_load),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
