/*
 * test_spoolfs.c - spoolfs's pure modules: inode numbers (fuse/ino.c)
 * round-trip for every kind of node at the edges of their ranges and
 * refuse what has no number; what a text written into /submit is
 * (fuse/subform.c: script, YAML or shell commands) and what it parses
 * to, with the reason and line of the text as written when refused;
 * whether a /proc/PID/stat line says its process is dying of a signal
 * (subform_killed), whatever its command name holds.
 */
#include "unit.h"
#include "../../fuse/ino.h"
#include "../../fuse/subform.h"
#include "taskview.h"

static void
test_ino_round_trip(void **state)
{
	static const struct {
		enum nkind kind;
		uint64_t n;
	} rows[] = {
		{ NK_ROOT, 0 }, { NK_SUBMIT, 0 }, { NK_TASKS, 0 },
		{ NK_WORKERS, 0 }, { NK_SUMMARY, 0 },
		{ NK_STATEDIR, TV_SUBMITTED }, { NK_STATEDIR, TV_REJECTED },
		{ NK_TASK, 1 }, { NK_SPEC, 1 }, { NK_STATE, 42 },
		{ NK_RESULT, 999 }, { NK_STDOUT, 1000 }, { NK_STDERR, 1001 },
		{ NK_CONTROL, TASK_ID_MAX }, { NK_LINK, TASK_ID_MAX },
		{ NK_TASK, TASK_ID_MAX },
		{ NK_WORKER, 0 }, { NK_WINFO, 7 }, { NK_WSTATUS, 123456 },
		{ NK_WSTATE, INO_WORKERS_MAX - 1 },
		{ NK_SUBENT, 0 }, { NK_SUBENT, 1 }, { NK_SUBENT, 1ULL << 40 },
		{ NK_PASS, 0 }, { NK_PASS, 12345 }, { NK_PASS, INO_PASS_MASK },
	};
	uint64_t seen[NELEM(rows)];
	struct node nd;
	size_t i, j;
	int nfail = 0;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		seen[i] = ino_of(rows[i].kind, rows[i].n);
		TEXPECT(nfail, seen[i] != 0, "row %zu: no inode number", i);
		nd = ino_node(seen[i]);
		TEXPECT(nfail, nd.kind == rows[i].kind && (nd.n == rows[i].n ||
		    rows[i].kind < NK_STATEDIR), "row %zu: kind %d n %llu came "
		    "back as kind %d n %llu", i, rows[i].kind,
		    (unsigned long long)rows[i].n, nd.kind,
		    (unsigned long long)nd.n);
		for (j = 0; j < i; j++)
			TEXPECT(nfail, seen[j] != seen[i], "rows %zu and %zu "
			    "share inode %llu", j, i,
			    (unsigned long long)seen[i]);
	}
	assert_int_equal(ino_of(NK_ROOT, 0), 1);	/* FUSE_ROOT_ID */
	assert_int_equal(nfail, 0);
}

static void
test_ino_refused(void **state)
{
	static const struct {
		enum nkind kind;
		uint64_t n;
	} none[] = {
		{ NK_TASK, 0 }, { NK_SPEC, TASK_ID_MAX + 1 },
		{ NK_STATEDIR, TV_UNKNOWN }, { NK_STATEDIR, TV_NSTATES },
		{ NK_WORKER, INO_WORKERS_MAX }, { NK_PASS, INO_PASS_MASK + 1 },
		{ NK_NONE, 0 },
	};
	static const uint64_t bad[] = {
		0, 6, 15, 16 + TV_UNKNOWN, 16 + TV_NSTATES, 255,
		INO_TASK_BASE,				/* task 0 */
		INO_TASK_BASE + 16 + 9,			/* no kind 9 */
		INO_TASK_BASE + 16 + 15,
	};
	size_t i;
	int nfail = 0;

	(void)state;
	for (i = 0; i < NELEM(none); i++)
		TEXPECT(nfail, ino_of(none[i].kind, none[i].n) == 0,
		    "row %zu has a number", i);
	for (i = 0; i < NELEM(bad); i++)
		TEXPECT(nfail, ino_node(bad[i]).kind == NK_NONE,
		    "inode %llu decodes to kind %d", (unsigned long long)bad[i],
		    ino_node(bad[i]).kind);
	assert_int_equal(nfail, 0);
}

static void
test_subform_kind(void **state)
{
	static const struct {
		const char *text;
		enum subform kind;
	} rows[] = {
		{ "#!/bin/sh\necho hi\n", SUBFORM_SCRIPT },
		{ "#!/usr/bin/env python3\n", SUBFORM_SCRIPT },
		{ "sleep 1\n", SUBFORM_SHELL },
		{ "sleep 1", SUBFORM_SHELL },
		{ "echo a: b\n", SUBFORM_SHELL },
		{ "for i in 1 2; do echo $i; done\n", SUBFORM_SHELL },
		{ "# a comment\n\nmake -j4\n", SUBFORM_SHELL },
		{ "#SPOOL --cores 2\nmake\n", SUBFORM_SHELL },
		{ "ls\n", SUBFORM_SHELL },
		{ "command: [sleep, 1]\n", SUBFORM_YAML },
		{ "  command: x\n", SUBFORM_YAML },
		{ "# job\ncommand: \"echo hi\"\ncores: 2\n", SUBFORM_YAML },
		{ "---\ncommand: x\n", SUBFORM_YAML },
		{ "{command: [true]}\n", SUBFORM_YAML },
		{ "name:\n", SUBFORM_YAML },
		{ "comand: [sleep, 1]\n", SUBFORM_YAML },	/* a typo: YAML */
		{ "", SUBFORM_YAML },			/* the parser says why */
		{ "\n# only comments\n", SUBFORM_YAML },
	};
	size_t i;
	int nfail = 0;

	(void)state;
	for (i = 0; i < NELEM(rows); i++)
		TEXPECT(nfail, subform_kind(rows[i].text, strlen(rows[i].text)) ==
		    rows[i].kind, "row %zu \"%s\": %s, expected %s", i,
		    rows[i].text, subform_name[subform_kind(rows[i].text,
		    strlen(rows[i].text))], subform_name[rows[i].kind]);
	assert_int_equal(nfail, 0);
}

static void
test_subform_parse(void **state)
{
	const char *shell = "#SPOOL --cores 3\nsleep 1\n";
	const char *yaml = "command: [echo, hi]\nmemory: 2G\n";
	const char *script = "#!/bin/bash\necho x\n";
	const char *list = "# two tasks\n- command: [echo, one]\n"
	    "- {command: \"echo two\", name: second, cores: 2}\n";
	struct task_spec *t;
	char why[256];
	size_t n;
	int rc;

	(void)state;
	/* shell: a /bin/sh script of the text, #SPOOL directives honoured */
	rc = subform_parse(shell, strlen(shell), &t, &n, why, sizeof why);
	TCHECK(rc == 0, "%s", why);
	assert_int_equal(n, 1);
	assert_non_null(t[0].script);
	assert_string_equal(t[0].script,
	    "#!/bin/sh\n#SPOOL --cores 3\nsleep 1\n");
	assert_int_equal(t[0].cores, 3);
	task_free_array(t, n);

	rc = subform_parse(yaml, strlen(yaml), &t, &n, why, sizeof why);
	TCHECK(rc == 0, "%s", why);
	assert_int_equal(n, 1);
	assert_string_equal(t[0].argv[0], "echo");
	assert_string_equal(t[0].argv[1], "hi");
	assert_int_equal(t[0].memory, 2ULL << 30);
	task_free_array(t, n);

	rc = subform_parse(script, strlen(script), &t, &n, why, sizeof why);
	TCHECK(rc == 0, "%s", why);
	assert_int_equal(n, 1);
	assert_string_equal(t[0].script, "#!/bin/bash\necho x\n");
	task_free_array(t, n);

	/* a YAML list: a task an item, in order */
	assert_int_equal(subform_kind(list, strlen(list)), SUBFORM_YAML);
	rc = subform_parse(list, strlen(list), &t, &n, why, sizeof why);
	TCHECK(rc == 0, "%s", why);
	assert_int_equal(n, 2);
	assert_string_equal(t[0].argv[0], "echo");
	assert_string_equal(t[0].argv[1], "one");
	assert_null(t[0].name);
	assert_string_equal(t[1].shell, "echo two");
	assert_string_equal(t[1].name, "second");
	assert_int_equal(t[1].cores, 2);
	task_free_array(t, n);
}

static void
test_subform_refused(void **state)
{
	static const struct {
		const char *text;
		const char *why;
	} rows[] = {
		{ "", "empty task file" },
		{ "comand: [sleep, 1]\n", "unknown key \"comand\"" },
		{ "command: [sleep, 1\n", "line 2" },
		{ "cores: 2\n", "no command" },
		/* the shell form counts lines as written, not with #! */
		{ "#SPOOL --cores lots\nsleep 1\n", "line 1: #SPOOL --cores" },
		{ "# x\n#SPOOL --bogus 1\nsleep 1\n", "line 2: #SPOOL --bogus" },
		{ "echo \001\000x\n", "NUL" },
		/* a list: all or nothing, the item named */
		{ "- command: [a]\n- cores: 2\n",
		    "line 2, column 3: task 2 of the list: no command" },
		{ "- command: [a]\n- [b]\n", "line 2, column 3: task 2 of "
		    "the list: a task must be a YAML mapping (command: ...), "
		    "not a list" },
		{ "- {command: [a], bogus: 1}\n", "line 1, column 18: task 1 "
		    "of the list: unknown key \"bogus\"" },
		{ "---\n[]\n", "line 2, column 1: a list of 0 tasks (1 to 10000)" },
	};
	struct task_spec *t;
	char why[256];
	size_t i, len, n;
	int nfail = 0;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		len = strlen(rows[i].text);
		if (strcmp(rows[i].why, "NUL") == 0)
			len = 8;
		why[0] = 0;
		TEXPECT(nfail, subform_parse(rows[i].text, len, &t, &n, why,
		    sizeof why) < 0, "row %zu accepted", i);
		TEXPECT(nfail, strstr(why, rows[i].why) != NULL,
		    "row %zu: \"%s\" does not say \"%s\"", i, why, rows[i].why);
		TEXPECT(nfail, t == NULL && n == 0, "row %zu: tasks kept", i);
	}
	assert_int_equal(nfail, 0);
}

static void
test_subform_size_bound(void **state)
{
	size_t len = TASK_FILE_MAX + 1;
	char *big = xmalloc(len), why[256];
	struct task_spec *t;
	size_t n;

	(void)state;
	memset(big, 'x', len);
	assert_int_equal(subform_parse(big, len, &t, &n, why, sizeof why), -1);
	assert_contains(why, "larger than");
	assert_null(t);
	free(big);
}

/* A /proc/PID/stat line: comm, flags (field 9), exit_code (52), and
 * only the first nfields fields (52 on Linux 3.5 and later). */
static void
stat_line(char *out, size_t size, const char *comm, unsigned flags,
    int code, int nfields)
{
	size_t n;
	int f;

	n = (size_t)snprintf(out, size, "4321 (%s) S", comm);
	for (f = 4; f <= nfields && n < size; f++)
		n += (size_t)snprintf(out + n, size - n, " %d",
		    f == 9 ? (int)flags : f == 52 ? code : f == 6 ? -1 : f);
	if (n < size)
		snprintf(out + n, size - n, "\n");
}

static void
test_subform_killed(void **state)
{
	static const struct {
		const char *comm;
		unsigned flags;
		int code;
		int nfields;
		int sig;
	} rows[] = {
		{ "python3", 0x400104, 9, 52, 9 },	/* SIGKILL, exiting */
		{ "gen.sh", 0x400104, 2, 52, 2 },	/* Ctrl-C */
		{ "a.out", 0x400104, 0x8b, 52, 11 },	/* SIGSEGV, core */
		{ "python3", 0x400104, 0, 52, 0 },	/* exit(0) */
		{ "python3", 0x400104, 3 << 8, 52, 0 },	/* exit(3) */
		{ "python3", 0x400100, 9, 52, 0 },	/* not exiting */
		{ "python3", 0x400104, 9, 51, 0 },	/* no exit_code field */
		/* the command name is the process's own: anything */
		{ ") S 1 2 3 4 5 6 0x4", 0x400104, 9, 52, 9 },
		{ "x) (y", 0x400104, 15, 52, 15 },
		{ "a b", 0x400000, 15, 52, 0 },
	};
	char line[1024];
	size_t i;
	int nfail = 0, got;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		stat_line(line, sizeof line, rows[i].comm, rows[i].flags,
		    rows[i].code, rows[i].nfields);
		got = subform_killed(line);
		TEXPECT(nfail, got == rows[i].sig, "row %zu: %d, expected %d "
		    "(%s)", i, got, rows[i].sig, line);
	}
	assert_int_equal(subform_killed(""), 0);
	assert_int_equal(subform_killed("4321 (x"), 0);
	assert_int_equal(subform_killed("4321 (x)"), 0);
	assert_int_equal(nfail, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ino_round_trip),
		cmocka_unit_test(test_ino_refused),
		cmocka_unit_test(test_subform_kind),
		cmocka_unit_test(test_subform_parse),
		cmocka_unit_test(test_subform_refused),
		cmocka_unit_test(test_subform_size_bound),
		cmocka_unit_test(test_subform_killed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
