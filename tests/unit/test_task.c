/*
 * test_task.c - task.c: task_set() for every option with its bounds
 * (cores, memory, gpus, walltime, after lists, priority -1000..1000,
 * retries 0..100, name charset, env NAME=VALUE replacing, absolute
 * cwd), task_is_option, task_validate() (command forms, "#!" scripts,
 * dependencies on later IDs, every bound), task_encode/task_decode
 * round trips, task_decode errors, and task_copy.
 */
#include "unit.h"
#include "task.h"

enum field { F_CORES, F_MEMORY, F_GPUS, F_WALLTIME, F_PRIORITY, F_RETRIES };

static int64_t
field_of(const struct task_spec *t, enum field f)
{
	switch (f) {
	case F_CORES: return t->cores;
	case F_MEMORY: return (int64_t)t->memory;
	case F_GPUS: return t->gpus;
	case F_WALLTIME: return (int64_t)t->walltime;
	case F_PRIORITY: return t->priority;
	case F_RETRIES: return t->retries;
	}
	return -1;
}

static void
test_set_numeric(void **state)
{
	static const struct {
		const char *key;
		enum field f;
		const char *value;
		int ok;
		int64_t want;
	} rows[] = {
		{ "cores",	F_CORES,	"1",		1, 1 },
		{ "cores",	F_CORES,	"4096",		1, 4096 },
		{ "cores",	F_CORES,	"4097",		0, 0 },
		{ "cores",	F_CORES,	"0",		0, 0 },
		{ "cores",	F_CORES,	"-1",		0, 0 },
		{ "cores",	F_CORES,	"1.5",		0, 0 },
		{ "cores",	F_CORES,	"",		0, 0 },
		{ "cores",	F_CORES,	"four",		0, 0 },
		{ "memory",	F_MEMORY,	"4G",		1, 4LL << 30 },
		{ "memory",	F_MEMORY,	"4GB",		1, 4000000000LL },
		{ "memory",	F_MEMORY,	"512",		1, 512 },
		{ "memory",	F_MEMORY,	"1P",		1, 1LL << 50 },
		{ "memory",	F_MEMORY,	"1025T",	0, 0 },
		{ "memory",	F_MEMORY,	"2P",		0, 0 },
		{ "memory",	F_MEMORY,	"4X",		0, 0 },
		{ "memory",	F_MEMORY,	"-1G",		0, 0 },
		{ "gpus",	F_GPUS,		"0",		1, 0 },
		{ "gpus",	F_GPUS,		"64",		1, 64 },
		{ "gpus",	F_GPUS,		"65",		0, 0 },
		{ "gpus",	F_GPUS,		"one",		0, 0 },
		{ "walltime",	F_WALLTIME,	"1:30:00",	1, 5400 },
		{ "walltime",	F_WALLTIME,	"90m",		1, 5400 },
		{ "walltime",	F_WALLTIME,	"366-00:00:00",	1, 366 * 86400 },
		{ "walltime",	F_WALLTIME,	"366-00:00:01",	0, 0 },
		{ "walltime",	F_WALLTIME,	"1:60",		0, 0 },
		{ "walltime",	F_WALLTIME,	"soon",		0, 0 },
		{ "priority",	F_PRIORITY,	"-1000",	1, -1000 },
		{ "priority",	F_PRIORITY,	"1000",		1, 1000 },
		{ "priority",	F_PRIORITY,	"0",		1, 0 },
		{ "priority",	F_PRIORITY,	"-1001",	0, 0 },
		{ "priority",	F_PRIORITY,	"1001",		0, 0 },
		{ "priority",	F_PRIORITY,	"high",		0, 0 },
		{ "retries",	F_RETRIES,	"0",		1, 0 },
		{ "retries",	F_RETRIES,	"100",		1, 100 },
		{ "retries",	F_RETRIES,	"101",		0, 0 },
		{ "retries",	F_RETRIES,	"-1",		0, 0 },
	};
	struct task_spec t;
	const char *why;
	size_t i;
	int rc;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		task_init(&t);
		/* A previous value that a refused one must leave alone. */
		if (rows[i].f == F_PRIORITY)
			t.priority = 7;
		else if (rows[i].f == F_CORES)
			t.cores = 7;
		else if (rows[i].f == F_MEMORY)
			t.memory = 7;
		else if (rows[i].f == F_GPUS)
			t.gpus = 7;
		else if (rows[i].f == F_WALLTIME)
			t.walltime = 7;
		else
			t.retries = 7;
		why = NULL;
		rc = task_set(&t, rows[i].key, rows[i].value, &why);
		if (rows[i].ok) {
			TCHECK(rc == 0, "%s=\"%s\" refused: %s", rows[i].key,
			    rows[i].value, why ? why : "");
			TCHECK(field_of(&t, rows[i].f) == rows[i].want,
			    "%s=\"%s\" gave %lld, want %lld", rows[i].key,
			    rows[i].value, (long long)field_of(&t, rows[i].f),
			    (long long)rows[i].want);
		} else {
			TCHECK(rc == -1, "%s=\"%s\" accepted", rows[i].key,
			    rows[i].value);
			TCHECK(why != NULL && *why, "%s=\"%s\": no reason",
			    rows[i].key, rows[i].value);
			TCHECK(field_of(&t, rows[i].f) == 7,
			    "%s=\"%s\" refused but changed the field",
			    rows[i].key, rows[i].value);
		}
		task_free(&t);
	}
}

static void
test_set_after(void **state)
{
	static const struct {
		const char *value;
		int ok;
		size_t n;
		uint64_t ids[3];
	} rows[] = {
		{ "1",			1, 1, { 1 } },
		{ "1,2,3",		1, 3, { 1, 2, 3 } },
		{ "1099511627775",	1, 1, { 1099511627775ULL } },
		{ "1099511627776",	0, 0, { 0 } },
		{ "0",			0, 0, { 0 } },
		{ "",			0, 0, { 0 } },
		{ "1,,2",		0, 0, { 0 } },
		{ ",1",			0, 0, { 0 } },
		{ "1,",			0, 0, { 0 } },
		{ "1, 2",		0, 0, { 0 } },
		{ "x",			0, 0, { 0 } },
		{ "-1",			0, 0, { 0 } },
		{ "123456789012345678901234567890123", 0, 0, { 0 } },
	};
	struct task_spec t;
	const char *why;
	size_t i;
	int rc;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		task_init(&t);
		why = NULL;
		rc = task_set(&t, "after", rows[i].value, &why);
		TCHECK(rc == (rows[i].ok ? 0 : -1), "after=\"%s\": rc %d",
		    rows[i].value, rc);
		if (rows[i].ok) {
			TCHECK(t.nafter == rows[i].n, "after=\"%s\": %zu IDs",
			    rows[i].value, t.nafter);
			assert_memory_equal(t.after, rows[i].ids,
			    rows[i].n * sizeof *t.after);
		} else
			TCHECK(unit_contains(why, "after") ||
			    unit_contains(why, "ID"), "after=\"%s\": why \"%s\"",
			    rows[i].value, why ? why : "");
		task_free(&t);
	}

	/* "after" adds to the list. */
	task_init(&t);
	assert_int_equal(task_set(&t, "after", "1,2", &why), 0);
	assert_int_equal(task_set(&t, "after", "5", &why), 0);
	assert_int_equal(t.nafter, 3);
	assert_int_equal(t.after[0], 1);
	assert_int_equal(t.after[1], 2);
	assert_int_equal(t.after[2], 5);
	task_free(&t);

	/* TASK_AFTER_MAX dependencies, and not one more. */
	task_init(&t);
	for (i = 1; i <= TASK_AFTER_MAX; i++) {
		char id[24];

		snprintf(id, sizeof id, "%zu", i);
		TCHECK(task_set(&t, "after", id, &why) == 0, "after %zu", i);
	}
	assert_int_equal(t.nafter, TASK_AFTER_MAX);
	assert_int_equal(task_set(&t, "after", "99999", &why), -1);
	assert_contains(why, "too many");
	task_free(&t);

	/*
	 * Tasks of the same list by index count with the IDs; claimed
	 * from 50, they join after as IDs, in their places.
	 */
	task_init(&t);
	assert_int_equal(task_set(&t, "after", "7", &why), 0);
	assert_int_equal(task_add_item(&t, 2, &why), 0);
	assert_int_equal(task_add_item(&t, 0, &why), 0);
	assert_int_equal(t.nafter_item, 2);
	for (i = 3; t.nafter + t.nafter_item < TASK_AFTER_MAX; i++)
		assert_int_equal(task_add_item(&t, (uint32_t)i, &why), 0);
	assert_int_equal(task_validate(&t, &why), -1);	/* no command */
	assert_int_equal(task_add_item(&t, 5000, &why), -1);
	assert_contains(why, "too many");
	assert_int_equal(task_set(&t, "after", "8", &why), -1);
	assert_contains(why, "too many");
	task_after_items(&t, 50);
	assert_int_equal(t.nafter, TASK_AFTER_MAX);
	assert_int_equal(t.nafter_item, 0);
	assert_int_equal(t.after[0], 7);
	assert_int_equal(t.after[1], 52);
	assert_int_equal(t.after[2], 50);
	assert_int_equal(t.after[TASK_AFTER_MAX - 1], 50 + TASK_AFTER_MAX - 1);
	task_free(&t);
}

/* a dropped file's task is named after it, where that makes a name */
static void
test_default_name(void **state)
{
	static const struct {
		const char *file;
		const char *given;
		const char *name;	/* NULL: none */
	} rows[] = {
		{ "fit.sh",		NULL,	"fit" },
		{ "job.tar.gz",		NULL,	"job.tar" },
		{ "noext",		NULL,	"noext" },
		{ ".hidden",		NULL,	NULL },	/* "" would be no name */
		{ ".hidden.yaml",	NULL,	NULL },
		{ "a b.yaml",		NULL,	NULL },
		{ "-x.sh",		NULL,	NULL },
		{ "fit.sh",		"mine",	"mine" },	/* its own name stays */
	};
	struct task_spec t;
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		task_init(&t);
		if (rows[i].given)
			t.name = xstrdup(rows[i].given);
		task_default_name(&t, rows[i].file);
		TCHECK(rows[i].name ? t.name && strcmp(t.name,
		    rows[i].name) == 0 : t.name == NULL, "%s: \"%s\"",
		    rows[i].file, t.name ? t.name : "(none)");
		task_free(&t);
	}
}

static void
test_set_name_cwd(void **state)
{
	char n128[TASK_NAME_MAX + 1], n129[TASK_NAME_MAX + 2];
	static const struct {
		const char *key;
		const char *value;
		int ok;
	} rows[] = {
		{ "name",	"job_1.a+b@c:d-e",	1 },
		{ "name",	"A",			1 },
		{ "name",	"x.",			1 },
		{ "name",	"",			0 },
		{ "name",	".hidden",		0 },
		{ "name",	"-x",			0 },
		{ "name",	"a/b",			0 },
		{ "name",	"..",			0 },
		{ "name",	"a b",			0 },
		{ "name",	"a\nb",			0 },
		{ "name",	"caf\xc3\xa9",		0 },
		{ "name",	"a$b",			0 },
		{ "cwd",	"/",			1 },
		{ "cwd",	"/tmp/work dir",	1 },
		{ "cwd",	"relative",		0 },
		{ "cwd",	"./x",			0 },
		{ "cwd",	"",			0 },
		{ "cwd",	"/a\nb",		0 },
		{ "cwd",	"/a\rb",		0 },
	};
	struct task_spec t;
	const char *why;
	size_t i;
	int rc;

	(void)state;
	memset(n128, 'n', TASK_NAME_MAX);
	n128[TASK_NAME_MAX] = 0;
	memset(n129, 'n', TASK_NAME_MAX + 1);
	n129[TASK_NAME_MAX + 1] = 0;
	for (i = 0; i < NELEM(rows); i++) {
		task_init(&t);
		rc = task_set(&t, rows[i].key, rows[i].value, &why);
		TCHECK(rc == (rows[i].ok ? 0 : -1), "%s=\"%s\": rc %d",
		    rows[i].key, rows[i].value, rc);
		if (rows[i].ok) {
			const char *got = strcmp(rows[i].key, "name") == 0 ?
			    t.name : t.cwd;

			TCHECK(got && strcmp(got, rows[i].value) == 0,
			    "%s=\"%s\" stored \"%s\"", rows[i].key,
			    rows[i].value, got ? got : "(null)");
		} else
			TCHECK(t.name == NULL && t.cwd == NULL,
			    "%s=\"%s\" refused but stored", rows[i].key,
			    rows[i].value);
		task_free(&t);
	}
	task_init(&t);
	assert_int_equal(task_set(&t, "name", n128, &why), 0);
	assert_int_equal(task_set(&t, "name", n129, &why), -1);
	assert_string_equal(t.name, n128);
	/* A second name replaces the first. */
	assert_int_equal(task_set(&t, "name", "second", &why), 0);
	assert_string_equal(t.name, "second");
	assert_int_equal(task_set(&t, "cwd", "/a", &why), 0);
	assert_int_equal(task_set(&t, "cwd", "/b", &why), 0);
	assert_string_equal(t.cwd, "/b");
	task_free(&t);
}

static void
test_set_env(void **state)
{
	static const struct {
		const char *value;
		int ok;
	} bad_rows[] = {
		{ "NOEQUALS",	0 },
		{ "=x",		0 },
		{ "1A=x",	0 },
		{ "A-B=x",	0 },
		{ "A B=x",	0 },
		{ "A.B=x",	0 },
	};
	/* Applied in order; the env that results. */
	static const char *const steps[] = {
		"A=1", "B=2", "AB=3", "A=4", "C=", "D=x=y", "B=", "_x9=ok",
	};
	static const char *const want[] = {
		"A=4", "B=", "AB=3", "C=", "D=x=y", "_x9=ok", NULL,
	};
	struct task_spec t;
	const char *why;
	size_t i;

	(void)state;
	task_init(&t);
	for (i = 0; i < NELEM(steps); i++)
		TCHECK(task_set(&t, "env", steps[i], &why) == 0, "env %s: %s",
		    steps[i], why);
	for (i = 0; want[i]; i++)
		TCHECK(t.env[i] && strcmp(t.env[i], want[i]) == 0,
		    "env[%zu] = \"%s\", want \"%s\"", i,
		    t.env[i] ? t.env[i] : "(null)", want[i]);
	TCHECK(t.env[i] == NULL, "env has extra entry \"%s\"", t.env[i]);
	for (i = 0; i < NELEM(bad_rows); i++) {
		why = NULL;
		TCHECK(task_set(&t, "env", bad_rows[i].value, &why) == -1,
		    "env \"%s\" accepted", bad_rows[i].value);
		assert_contains(why, "NAME=VALUE");
	}
	assert_int_equal(strv_len(t.env), 6);
	task_free(&t);

	/* TASK_ENV_MAX variables; replacing still works when full. */
	task_init(&t);
	for (i = 0; i < TASK_ENV_MAX; i++) {
		char kv[32];

		snprintf(kv, sizeof kv, "V%zu=%zu", i, i);
		TCHECK(task_set(&t, "env", kv, &why) == 0, "env %s", kv);
	}
	assert_int_equal(task_set(&t, "env", "ONEMORE=1", &why), -1);
	assert_contains(why, "too many");
	assert_int_equal(task_set(&t, "env", "V0=replaced", &why), 0);
	assert_string_equal(t.env[0], "V0=replaced");
	task_free(&t);
}

static void
test_set_unknown_and_is_option(void **state)
{
	static const struct {
		const char *key;
		int option;
	} rows[] = {
		{ "cores", 1 }, { "memory", 1 }, { "gpus", 1 },
		{ "walltime", 1 }, { "after", 1 }, { "priority", 1 },
		{ "retries", 1 }, { "name", 1 }, { "env", 1 }, { "cwd", 1 },
		{ "command", 0 }, { "script", 0 }, { "resources", 0 },
		{ "Cores", 0 }, { "", 0 }, { "cpus", 0 }, { "mem", 0 },
	};
	struct task_spec t;
	const char *why = NULL;
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(rows); i++)
		TCHECK(task_is_option(rows[i].key) == rows[i].option,
		    "task_is_option(\"%s\")", rows[i].key);
	task_init(&t);
	assert_int_equal(task_set(&t, "cpus", "4", &why), -1);
	assert_contains(why, "unknown option");
	task_free(&t);
}

/* ---- task_validate ---- */

enum vcase {
	V_EMPTY, V_ARGV, V_SHELL, V_SCRIPT, V_ARGV_SHELL, V_ARGV_SCRIPT,
	V_SHELL_SCRIPT, V_ARGV_EMPTYWORD, V_ARGV_NOWORDS, V_SHELL_BLANK,
	V_SCRIPT_NOSHEBANG, V_SCRIPT_SPACE_SHEBANG, V_DEP_BELOW, V_DEP_SELF,
	V_DEP_ABOVE, V_DEP_NOID, V_DEP_ZERO, V_DEP_HUGE, V_PRIO_HI, V_PRIO_LO,
	V_PRIO_EDGE, V_RETRIES, V_CORES, V_GPUS, V_MEMORY, V_WALLTIME,
	V_BADNAME, V_CWD_REL, V_CWD_CTL, V_ENV_BAD, V_ID_HUGE, V_SHELL_BIG,
	V_ARGV_MANY, V_ALL_MAX,
};

static void
build(struct task_spec *t, enum vcase c)
{
	uint64_t dep;
	size_t i;

	task_init(t);
	if (c != V_EMPTY && c != V_SHELL && c != V_SCRIPT &&
	    c != V_SHELL_SCRIPT && c != V_ARGV_NOWORDS && c != V_SHELL_BLANK &&
	    c != V_SCRIPT_NOSHEBANG && c != V_SCRIPT_SPACE_SHEBANG &&
	    c != V_SHELL_BIG && c != V_ARGV_MANY && c != V_ARGV_EMPTYWORD) {
		t->argv = strv_push(NULL, "true");
	}
	switch (c) {
	case V_SHELL: case V_ARGV_SHELL: case V_SHELL_SCRIPT:
		t->shell = xstrdup("echo hi | wc -c");
		if (c == V_SHELL_SCRIPT)
			t->script = xstrdup("#!/bin/sh\n");
		break;
	case V_SCRIPT: case V_ARGV_SCRIPT:
		t->script = xstrdup("#!/bin/sh\necho hi\n");
		break;
	case V_ARGV_EMPTYWORD:
		t->argv = strv_push(NULL, "");
		break;
	case V_ARGV_NOWORDS:
		t->argv = xcalloc(1, sizeof *t->argv);
		break;
	case V_SHELL_BLANK:
		t->shell = xstrdup(" \t\n ");
		break;
	case V_SCRIPT_NOSHEBANG:
		t->script = xstrdup("echo hi\n");
		break;
	case V_SCRIPT_SPACE_SHEBANG:
		t->script = xstrdup(" #!/bin/sh\n");
		break;
	case V_DEP_BELOW: case V_DEP_SELF: case V_DEP_ABOVE: case V_DEP_NOID:
	case V_DEP_ZERO: case V_DEP_HUGE:
		dep = c == V_DEP_BELOW ? 9 : c == V_DEP_SELF ? 10 :
		    c == V_DEP_ABOVE || c == V_DEP_NOID ? 11 :
		    c == V_DEP_ZERO ? 0 : TASK_ID_MAX + 1;
		t->id = c == V_DEP_NOID ? 0 : 10;
		t->after = xmalloc(sizeof *t->after);
		t->after[0] = dep;
		t->nafter = 1;
		break;
	case V_PRIO_HI: t->priority = 1001; break;
	case V_PRIO_LO: t->priority = -1001; break;
	case V_PRIO_EDGE: t->priority = -1000; t->retries = 100; break;
	case V_RETRIES: t->retries = 101; break;
	case V_CORES: t->cores = TASK_CORES_MAX + 1; break;
	case V_GPUS: t->gpus = TASK_GPUS_MAX + 1; break;
	case V_MEMORY: t->memory = TASK_MEMORY_MAX + 1; break;
	case V_WALLTIME: t->walltime = TASK_WALLTIME_MAX + 1; break;
	case V_BADNAME: t->name = xstrdup("a/b"); break;
	case V_CWD_REL: t->cwd = xstrdup("tmp"); break;
	case V_CWD_CTL: t->cwd = xstrdup("/tmp/\x01"); break;
	case V_ENV_BAD: t->env = strv_push(NULL, "1X=y"); break;
	case V_ID_HUGE: t->id = TASK_ID_MAX + 1; break;
	case V_SHELL_BIG:
		t->shell = xmalloc(TASK_CMD_BYTES_MAX + 2);
		memset(t->shell, 'x', TASK_CMD_BYTES_MAX + 1);
		t->shell[TASK_CMD_BYTES_MAX + 1] = 0;
		break;
	case V_ARGV_MANY:
		for (i = 0; i <= TASK_ARGV_MAX; i++)
			t->argv = strv_push(t->argv, "w");
		break;
	case V_ALL_MAX:
		t->id = TASK_ID_MAX;
		t->cores = TASK_CORES_MAX;
		t->gpus = TASK_GPUS_MAX;
		t->memory = TASK_MEMORY_MAX;
		t->walltime = TASK_WALLTIME_MAX;
		t->priority = TASK_PRIORITY_MAX;
		t->retries = TASK_RETRIES_MAX;
		t->name = xstrdup("ok.name");
		t->cwd = xstrdup("/tmp");
		t->env = strv_push(NULL, "A=1");
		t->after = xmalloc(sizeof *t->after);
		t->after[0] = TASK_ID_MAX - 1;
		t->nafter = 1;
		break;
	default:
		break;
	}
}

static void
test_validate(void **state)
{
	static const struct {
		enum vcase c;
		const char *why;	/* NULL: valid */
	} rows[] = {
		{ V_EMPTY,		"no command" },
		{ V_ARGV,		NULL },
		{ V_SHELL,		NULL },
		{ V_SCRIPT,		NULL },
		{ V_ARGV_SHELL,		"more than one" },
		{ V_ARGV_SCRIPT,	"more than one" },
		{ V_SHELL_SCRIPT,	"more than one" },
		{ V_ARGV_EMPTYWORD,	"empty command" },
		{ V_ARGV_NOWORDS,	"empty command" },
		{ V_SHELL_BLANK,	"empty command" },
		{ V_SCRIPT_NOSHEBANG,	"#!" },
		{ V_SCRIPT_SPACE_SHEBANG, "#!" },
		{ V_DEP_BELOW,		NULL },
		{ V_DEP_SELF,		"dependency" },
		{ V_DEP_ABOVE,		"dependency" },
		{ V_DEP_NOID,		NULL },	/* no ID yet: checked later */
		{ V_DEP_ZERO,		"dependency" },
		{ V_DEP_HUGE,		"dependency" },
		{ V_PRIO_HI,		"priority" },
		{ V_PRIO_LO,		"priority" },
		{ V_PRIO_EDGE,		NULL },
		{ V_RETRIES,		"retries" },
		{ V_CORES,		"out of range" },
		{ V_GPUS,		"out of range" },
		{ V_MEMORY,		"out of range" },
		{ V_WALLTIME,		"out of range" },
		{ V_BADNAME,		"name" },
		{ V_CWD_REL,		"cwd" },
		{ V_CWD_CTL,		"cwd" },
		{ V_ENV_BAD,		"env" },
		{ V_ID_HUGE,		"ID" },
		{ V_SHELL_BIG,		"larger than" },
		{ V_ARGV_MANY,		"too many" },
		{ V_ALL_MAX,		NULL },
	};
	struct task_spec t;
	const char *why;
	size_t i;
	int rc;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		build(&t, rows[i].c);
		why = NULL;
		rc = task_validate(&t, &why);
		if (rows[i].why == NULL)
			TCHECK(rc == 0, "case %d refused: %s", rows[i].c,
			    why ? why : "");
		else {
			TCHECK(rc == -1, "case %d accepted (want \"%s\")",
			    rows[i].c, rows[i].why);
			TCHECK(unit_contains(why, rows[i].why),
			    "case %d: why \"%s\", want \"%s\"", rows[i].c,
			    why ? why : "", rows[i].why);
		}
		task_free(&t);
	}
}

/* A string of n copies of c. */
static char *
filled(char c, size_t n)
{
	char *s = xmalloc(n + 1);

	memset(s, c, n);
	s[n] = 0;
	return s;
}

static void round_trip(const struct task_spec *t);

/*
 * The command and the environment are bounded as given (1 MiB each),
 * and what task_validate passes must encode into lines that
 * task_decode reads back (REC_LINE_MAX): a control byte is recorded as
 * \xHH, 4 bytes.  Ten variables of 120000 \x01 bytes each (1.2 MB
 * given, 4.8 MB recorded) were accepted, given an ID, and the bundle
 * refused by spoold; a command of 1 MiB of \x01 is recorded a few
 * bytes over 4 MiB.
 */
static void
test_validate_bounds_what_is_recorded(void **state)
{
	enum { ARGV, SHELL, SCRIPT, ENV };
	static const struct {
		int	what;
		char	fill;
		size_t	len;		/* of the variable part */
		size_t	copies;
		const char *why;	/* NULL: valid */
	} rows[] = {
		/* the reviewer's: 10 x (X0=, 120000 x \x01, NUL) */
		{ ENV,	 '\x01', 120000, 10, "environment larger than 1 MiB" },
		{ ENV,	 '\x01', 100000, 10, NULL },
		/* one of 1 MiB (X0=, NUL) */
		{ ENV,	 '\x01', (1u << 20) - 4, 1, "longer than 128 KiB" },
		{ ENV,	 '\x01', (1u << 20) - 3, 1, "larger than 1 MiB" },
		{ ENV,	 'x', (1u << 20) - 4, 1, "longer than 128 KiB" },
		/* each as long as execve takes (X0=, 128 KiB - 4, NUL):
		 * 1 MiB in all, just under 4 MiB recorded */
		{ ENV,	 '\x01', (1u << 17) - 4, 8, NULL },
		{ ENV,	 'x', (1u << 17) - 4, 1, NULL },
		{ ENV,	 'x', (1u << 17) - 3, 1, "longer than 128 KiB" },
		/* argv: ["L bytes"]: 10 + 4 L */
		{ ARGV,	 '\x01', (1u << 20) - 3, 1, "longer than 128 KiB" },
		{ ARGV,	 '\x01', (1u << 20) - 2, 1, "larger than 4 MiB" },
		{ ARGV,	 '\x01', (1u << 20) - 1, 1, "larger than 4 MiB" },
		{ ARGV,	 'x', (1u << 20) - 1, 1, "longer than 128 KiB" },
		{ ARGV,	 '\x01', (1u << 18) - 8, 4, "longer than 128 KiB" },
		/* argv: ["L bytes", ...] of 8: 7 + 8 (2 + 4 L) + 7 x 2 + 1 */
		{ ARGV,	 '\x01', (1u << 17) - 2, 8, NULL },
		{ ARGV,	 '\x01', (1u << 17) - 1, 8, "larger than 4 MiB" },
		{ ARGV,	 'x', (1u << 17) - 1, 1, NULL },
		{ ARGV,	 'x', 1u << 17, 1, "longer than 128 KiB" },
		/* shell: "L bytes": 9 + 4 L */
		{ SHELL, '\x01', (1u << 20) - 3, 1, "longer than 128 KiB" },
		{ SHELL, '\x01', (1u << 20) - 2, 1, "larger than 4 MiB" },
		{ SHELL, '\x01', 1u << 20, 1, "larger than 4 MiB" },
		{ SHELL, '"', 1u << 20, 1, "longer than 128 KiB" },
		{ SHELL, '\x01', (1u << 17) - 1, 1, NULL },
		{ SHELL, '\x01', 1u << 17, 1, "longer than 128 KiB" },
		/* script: "#!L bytes": 12 + 4 L */
		{ SCRIPT, '\x01', (1u << 20) - 3, 1, NULL },
		{ SCRIPT, '\x01', (1u << 20) - 2, 1, "larger than 4 MiB" },
	};
	struct task_spec t;
	const char *why;
	char *part, *s;
	size_t i, k;
	int rc;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		task_init(&t);
		part = filled(rows[i].fill, rows[i].len);
		for (k = 0; k < rows[i].copies; k++) {
			switch (rows[i].what) {
			case ENV:
				s = xasprintf("X%zu=%s", k, part);
				t.env = strv_push(t.env, s);
				free(s);
				break;
			case ARGV:
				t.argv = strv_push(t.argv, part);
				break;
			}
		}
		if (rows[i].what == ENV)
			t.argv = strv_push(NULL, "true");
		else if (rows[i].what == SHELL)
			t.shell = xstrdup(part);
		else if (rows[i].what == SCRIPT)
			t.script = xasprintf("#!%s", part);
		why = NULL;
		rc = task_validate(&t, &why);
		if (rows[i].why == NULL) {
			TCHECK(rc == 0, "row %zu refused: %s", i,
			    why ? why : "");
			round_trip(&t);
		} else {
			TCHECK(rc == -1, "row %zu accepted (want \"%s\")", i,
			    rows[i].why);
			TCHECK(unit_contains(why, rows[i].why),
			    "row %zu: why \"%s\", want \"%s\"", i,
			    why ? why : "", rows[i].why);
		}
		free(part);
		task_free(&t);
	}
}

/* ---- canonical form ---- */

static void
fill_full(struct task_spec *t)
{
	static const char *const argv[] = {
		"sh", "-c", "echo \"$1\"\n\tdone\\", "x", "caf\xc3\xa9", "", NULL,
	};
	size_t i;

	task_init(t);
	t->id = 42;
	t->name = xstrdup("full.job-1");
	for (i = 0; argv[i]; i++)
		t->argv = strv_push(t->argv, argv[i]);
	t->cwd = xstrdup("/scratch/user/run 1");
	t->env = strv_push(t->env, "OMP_NUM_THREADS=4");
	t->env = strv_push(t->env, "QUOTE=\"x\"");
	t->env = strv_push(t->env, "EMPTY=");
	t->cores = 4;
	t->memory = 6ULL << 30;
	t->gpus = 2;
	t->walltime = 5400;
	t->after = xreallocarray(NULL, 3, sizeof *t->after);
	t->after[0] = 1;
	t->after[1] = 7;
	t->after[2] = 41;
	t->nafter = 3;
	t->priority = -5;
	t->retries = 3;
	t->source = xstrdup("incoming/job.yaml");
	t->submitted = 1700000000.125;
	t->uid = 1000;
}

static void
assert_strv_eq(char *const *a, char *const *b)
{
	size_t i;

	if (a == NULL || b == NULL) {
		TCHECK(a == b, "one vector is NULL");
		return;
	}
	for (i = 0; a[i] && b[i]; i++)
		TCHECK(strcmp(a[i], b[i]) == 0, "item %zu: \"%s\" != \"%s\"",
		    i, a[i], b[i]);
	TCHECK(a[i] == NULL && b[i] == NULL, "lengths differ at %zu", i);
}

static void
assert_str_eq_or_null(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		TCHECK(a == b, "\"%s\" vs \"%s\"", a ? a : "(null)",
		    b ? b : "(null)");
	else
		assert_string_equal(a, b);
}

static void
assert_task_eq(const struct task_spec *a, const struct task_spec *b)
{
	assert_int_equal(a->id, b->id);
	assert_str_eq_or_null(a->name, b->name);
	assert_strv_eq(a->argv, b->argv);
	assert_str_eq_or_null(a->shell, b->shell);
	assert_str_eq_or_null(a->script, b->script);
	assert_str_eq_or_null(a->cwd, b->cwd);
	assert_strv_eq(a->env, b->env);
	assert_int_equal(task_cores(a), task_cores(b));
	assert_int_equal(a->memory, b->memory);
	assert_int_equal(a->gpus, b->gpus);
	assert_int_equal(a->walltime, b->walltime);
	assert_int_equal(a->nafter, b->nafter);
	if (a->nafter)
		assert_memory_equal(a->after, b->after,
		    a->nafter * sizeof *a->after);
	assert_int_equal(a->priority, b->priority);
	assert_int_equal(a->retries, b->retries);
	assert_str_eq_or_null(a->source, b->source);
	assert_float_equal(a->submitted, b->submitted, 0.0005);
	assert_int_equal(a->uid, b->uid);
}

static void
round_trip(const struct task_spec *t)
{
	struct buf b = BUF_INIT;
	struct rec_reader r;
	struct task_spec back;

	task_encode(&b, t);
	task_init(&back);
	rec_reader_init(&r, b.p, b.len);
	TCHECK(task_decode(&r, &back) == 0, "decode: line %d: %s\n%s",
	    r.errline, r.why ? r.why : "", b.p);
	assert_true(rec_eof(&r));
	assert_task_eq(t, &back);
	task_free(&back);
	buf_free(&b);
}

static void
test_round_trip(void **state)
{
	struct task_spec t;

	(void)state;
	fill_full(&t);
	round_trip(&t);
	task_free(&t);

	/* Shell form, everything else default. */
	task_init(&t);
	t.id = 1;
	t.shell = xstrdup("for i in 1 2; do echo \"$i\"; done | tac\n");
	round_trip(&t);
	task_free(&t);

	/* Script form with every escape and high bytes. */
	task_init(&t);
	t.id = TASK_ID_MAX;
	t.script = xstrdup("#!/bin/bash\n#SPOOL --cores=2\nprintf '\\t%s\\r\\n' "
	    "\"\x01\" \xe2\x82\xac\nexit 0\n");
	t.priority = 1000;
	t.retries = 100;
	round_trip(&t);
	task_free(&t);
}

static void
test_encode_text(void **state)
{
	struct task_spec t;
	struct buf b = BUF_INIT;

	(void)state;
	task_init(&t);
	t.id = 7;
	t.argv = strv_push(NULL, "echo");
	t.argv = strv_push(t.argv, "a b");
	t.after = xmalloc(2 * sizeof *t.after);
	t.after[0] = 3;
	t.after[1] = 5;
	t.nafter = 2;
	task_encode(&b, &t);
	/* One field a line; a record, not a separator, at the end. */
	assert_contains(b.p, "id: 7\n");
	assert_contains(b.p, "argv: [\"echo\", \"a b\"]\n");
	assert_contains(b.p, "after: [3, 5]\n");
	assert_contains(b.p, "cores: 1\n");
	assert_null(strstr(b.p, "---"));
	assert_int_equal(b.p[b.len - 1], '\n');
	buf_free(&b);
	task_free(&t);
}

static void
test_decode_errors(void **state)
{
	static const struct {
		const char *in;
		const char *why;
		int line;
	} rows[] = {
		{ "id: 1\ncolour: blue\n",	"unknown key",		2 },
		{ "id: 1\ncores: 4097\n",	"out of range",		2 },
		{ "id: 1\ncores: -1\n",		"not an unsigned",	2 },
		{ "id: 1099511627776\n",	"out of range",		1 },
		{ "id: 1\npriority: 1001\n",	"out of range",		2 },
		{ "id: 1\nretries: 101\n",	"out of range",		2 },
		{ "id: 1\ngpus: 65\n",		"out of range",		2 },
		{ "id: 1\nargv: [echo]\n",	"not a quoted string",	2 },
		{ "id: 1\nafter: [1,2]\n",	"expected",		2 },
		{ "id: 1\nname: \"a\n",		"unterminated",		2 },
		{ "id: 1\nsubmitted: soon\n",	"not a number",		2 },
		{ "id: 1\nuid: 4294967296\n",	"out of range",		2 },
		{ "id: 1\ncores: 4",		"no newline",		2 },
	};
	struct rec_reader r;
	struct task_spec t;
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		task_init(&t);
		rec_reader_init(&r, rows[i].in, strlen(rows[i].in));
		TCHECK(task_decode(&r, &t) == -1, "row %zu accepted", i);
		TCHECK(unit_contains(r.why, rows[i].why),
		    "row %zu: why \"%s\", want \"%s\"", i, r.why ? r.why : "",
		    rows[i].why);
		TCHECK(r.errline == rows[i].line, "row %zu: line %d, want %d",
		    i, r.errline, rows[i].line);
		task_free(&t);
	}
}

/* task_decode reads one record and stops at its separator. */
static void
test_decode_stops_at_separator(void **state)
{
	static const char two[] = "id: 1\nshell: \"a\"\n---\nid: 2\n"
	    "shell: \"b\"\n";
	struct rec_reader r;
	struct task_spec t;

	(void)state;
	rec_reader_init(&r, two, strlen(two));
	task_init(&t);
	assert_int_equal(task_decode(&r, &t), 0);
	assert_int_equal(t.id, 1);
	assert_string_equal(t.shell, "a");
	assert_false(rec_eof(&r));
	task_free(&t);
	assert_int_equal(task_decode(&r, &t), 0);
	assert_int_equal(t.id, 2);
	assert_string_equal(t.shell, "b");
	assert_true(rec_eof(&r));
	task_free(&t);
}

static void
test_copy_is_deep(void **state)
{
	struct task_spec a, b;
	const char *why;

	(void)state;
	fill_full(&a);
	task_copy(&b, &a);
	assert_task_eq(&a, &b);
	assert_ptr_not_equal(a.argv, b.argv);
	assert_ptr_not_equal(a.argv[0], b.argv[0]);
	assert_ptr_not_equal(a.after, b.after);
	assert_ptr_not_equal(a.env, b.env);
	task_free(&b);
	assert_int_equal(task_add_item(&a, 3, &why), 0);
	task_copy(&b, &a);
	assert_int_equal(b.nafter_item, 1);
	assert_int_equal(b.after_item[0].item, 3);
	assert_ptr_not_equal(a.after_item, b.after_item);
	b.argv[0][0] = 'X';
	b.after[0] = 99;
	assert_string_equal(a.argv[0], "sh");
	assert_int_equal(a.after[0], 1);
	task_free(&a);
	task_free(&b);	/* no double free (ASan) */
	assert_null(b.argv);
	assert_int_equal(b.nafter, 0);
}

/*
 * A task's shape as the summary lists it: an unset core count is one
 * core, the text is what spool status reads back, and what is not such
 * a text is refused.
 */
static void
test_shape_text(void **state)
{
	struct task_spec t;
	struct task_shape s, back;
	char text[128];

	(void)state;
	task_init(&t);
	t.gpus = 2;
	t.memory = 966367641600ULL;
	t.walltime = 3600;
	task_shape_of(&t, &s);
	assert_int_equal(s.cores, 1);
	task_shape_format(&s, 7, text, sizeof text);
	assert_string_equal(text, "cores=1 gpus=2 memory=966367641600 "
	    "walltime=3600 tasks=7");
	memset(&back, 0, sizeof back);
	assert_int_equal(task_shape_parse(text, &back), 0);
	assert_int_equal(back.cores, 1);
	assert_int_equal(back.gpus, 2);
	assert_true(back.memory == 966367641600ULL);
	assert_int_equal(back.walltime, 3600);
	assert_int_equal(task_shape_parse("cores=1 gpus=2", &back), -1);
	assert_int_equal(task_shape_parse("64 cores", &back), -1);
	assert_string_equal(task_shape_words(&s, text, sizeof text),
	    "1 core, 2 GPUs, memory 900G, walltime 1:00:00");
	s.cores = 64;
	s.gpus = 1;
	s.memory = s.walltime = 0;
	assert_string_equal(task_shape_words(&s, text, sizeof text),
	    "64 cores, 1 GPU, memory -, walltime -");
	task_free(&t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set_numeric),
		cmocka_unit_test(test_set_after),
		cmocka_unit_test(test_set_name_cwd),
		cmocka_unit_test(test_default_name),
		cmocka_unit_test(test_set_env),
		cmocka_unit_test(test_set_unknown_and_is_option),
		cmocka_unit_test(test_validate),
		cmocka_unit_test(test_validate_bounds_what_is_recorded),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_encode_text),
		cmocka_unit_test(test_decode_errors),
		cmocka_unit_test(test_decode_stops_at_separator),
		cmocka_unit_test(test_copy_is_deep),
		cmocka_unit_test(test_shape_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
