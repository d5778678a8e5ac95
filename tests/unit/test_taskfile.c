/*
 * test_taskfile.c - taskfile.c: task files as users write them.
 * YAML: command as a list and as a string, script, resources mapping,
 * env as a mapping and as a list, after as a list, a number and a
 * "1,2" string, top-level options.  #SPOOL scripts: --k=v and --k v,
 * shell-like quoting, directives ending at the first command line,
 * "#SPOOLX" being a comment, errors naming the line.  Hostile input:
 * aliases, anchors, tags, deep nesting, duplicate and unknown keys
 * (the message names key, line and column), NUL bytes and binary
 * garbage, empty files, a top-level list, files larger than
 * TASK_FILE_MAX, a list of more than YAMLX_NODES_MAX nodes, and a
 * script buffer that is not NUL-terminated (data, len contract).
 */
#include <sys/mman.h>

#include "unit.h"
#include "taskfile.h"
#include "yamlx.h"

/* Parse text; on failure print the formatted error. */
static int
parse(const char *text, size_t len, struct task_spec *t,
    struct taskfile_err *e)
{
	task_init(t);
	return taskfile_parse(text, len, t, e);
}

static void
parse_ok(const char *text, struct task_spec *t)
{
	struct taskfile_err e;
	char msg[400];

	if (parse(text, strlen(text), t, &e) < 0) {
		taskfile_err_format(&e, msg, sizeof msg);
		TFAIL("\"%s\": %s", text, msg);
	}
}

static void
assert_argv(char *const *v, const char *const *want)
{
	size_t i;

	TCHECK(v != NULL, "no argv");
	for (i = 0; want[i]; i++)
		TCHECK(v[i] && strcmp(v[i], want[i]) == 0,
		    "argv[%zu] = \"%s\", want \"%s\"", i, v[i] ? v[i] : "(null)",
		    want[i]);
	TCHECK(v[i] == NULL, "argv has extra \"%s\"", v[i]);
}

static void
test_yaml_command_forms(void **state)
{
	static const char *const echo[] = { "echo", "hello world", NULL };
	static const char *const one[] = { "true", NULL };
	static const char *const quoted[] = { "sh", "-c", "echo \"$X\"", NULL };
	struct task_spec t;

	(void)state;
	parse_ok("command: [echo, \"hello world\"]\n", &t);
	assert_argv(t.argv, echo);
	assert_null(t.shell);
	assert_null(t.script);
	task_free(&t);

	parse_ok("command:\n  - echo\n  - hello world\n", &t);
	assert_argv(t.argv, echo);
	task_free(&t);

	parse_ok("command: [true]\n", &t);
	assert_argv(t.argv, one);
	task_free(&t);

	parse_ok("command: ['sh', '-c', 'echo \"$X\"']\n", &t);
	assert_argv(t.argv, quoted);
	task_free(&t);

	parse_ok("command: echo hello | wc -c\n", &t);
	assert_null(t.argv);
	assert_string_equal(t.shell, "echo hello | wc -c");
	task_free(&t);

	parse_ok("command: |\n  for i in 1 2; do\n    echo $i\n  done\n", &t);
	assert_string_equal(t.shell, "for i in 1 2; do\n  echo $i\ndone\n");
	task_free(&t);

	parse_ok("script: |\n  #!/bin/sh\n  echo hi\n", &t);
	assert_null(t.argv);
	assert_null(t.shell);
	assert_string_equal(t.script, "#!/bin/sh\necho hi\n");
	task_free(&t);
}

static void
test_yaml_options(void **state)
{
	static const char text[] =
	    "# a comment\n"
	    "name: align.sample-7\n"
	    "command: [bwa, mem, ref.fa, reads.fq]\n"
	    "cwd: /scratch/me/run\n"
	    "resources:\n"
	    "  cores: 4\n"
	    "  memory: 16G\n"
	    "  gpus: 1\n"
	    "  walltime: \"1:30:00\"\n"
	    "priority: -10\n"
	    "retries: 2\n"
	    "after: [3, 5]\n";
	struct task_spec t;

	(void)state;
	parse_ok(text, &t);
	assert_string_equal(t.name, "align.sample-7");
	assert_string_equal(t.cwd, "/scratch/me/run");
	assert_int_equal(t.cores, 4);
	assert_int_equal(t.memory, 16ULL << 30);
	assert_int_equal(t.gpus, 1);
	assert_int_equal(t.walltime, 5400);
	assert_int_equal(t.priority, -10);
	assert_int_equal(t.retries, 2);
	assert_int_equal(t.nafter, 2);
	assert_int_equal(t.after[0], 3);
	assert_int_equal(t.after[1], 5);
	task_free(&t);

	/* The same resources at top level, dask-style memory. */
	parse_ok("command: [x]\ncores: 2\nmemory: 4GB\nwalltime: 90m\n"
	    "gpus: 0\n", &t);
	assert_int_equal(t.cores, 2);
	assert_int_equal(t.memory, 4000000000ULL);
	assert_int_equal(t.walltime, 5400);
	task_free(&t);
}

static void
test_yaml_after_forms(void **state)
{
	static const struct {
		const char *text;
		size_t n;
		uint64_t ids[3];
	} rows[] = {
		{ "command: [x]\nafter: [1, 2]\n",	2, { 1, 2 } },
		{ "command: [x]\nafter:\n  - 7\n",	1, { 7 } },
		{ "command: [x]\nafter: \"1,2\"\n",	2, { 1, 2 } },
		{ "command: [x]\nafter: 1,2,3\n",	3, { 1, 2, 3 } },
		{ "command: [x]\nafter: 12\n",		1, { 12 } },
		{ "command: [x]\nafter: []\n",		0, { 0 } },
	};
	struct task_spec t;
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		parse_ok(rows[i].text, &t);
		TCHECK(t.nafter == rows[i].n, "row %zu: %zu IDs", i, t.nafter);
		if (rows[i].n)
			assert_memory_equal(t.after, rows[i].ids,
			    rows[i].n * sizeof *t.after);
		task_free(&t);
	}
}

static void
test_yaml_env_forms(void **state)
{
	static const char *const want[] = {
		"A=1", "B=x y", "C=", "D=a=b", NULL,
	};
	struct task_spec t;

	(void)state;
	parse_ok("command: [x]\nenv:\n  A: 1\n  B: x y\n  C:\n  D: a=b\n", &t);
	assert_argv(t.env, want);
	task_free(&t);

	parse_ok("command: [x]\nenv: [A=1, \"B=x y\", C=, D=a=b]\n", &t);
	assert_argv(t.env, want);
	task_free(&t);

	parse_ok("command: [x]\nenv:\n  - A=0\n  - B=x y\n  - C=\n  - D=a=b\n"
	    "  - A=1\n", &t);	/* A given twice: the last wins, in place */
	assert_argv(t.env, want);
	task_free(&t);
}

/* Errors: rc -1, message substring, line, column (0: no position). */
static void
test_yaml_errors(void **state)
{
	static const struct {
		const char *text;
		const char *msg;
		int line, col;
	} rows[] = {
		/* refused YAML features */
		{ "command: &x [a]\n",
		    "anchors are not allowed", 1, 10 },
		{ "command: *x\n",
		    "aliases are not allowed", 1, 10 },
		{ "command: [a]\nname: &n x\nretries: *n\n",
		    "anchors are not allowed", 2, 7 },
		{ "command: !!str echo\n",
		    "tags are not allowed", 1, 10 },
		{ "command: !foo [a]\n",
		    "tags are not allowed", 1, 10 },
		{ "command: [a]\ncommand: [b]\n",
		    "duplicate key \"command\"", 2, 1 },
		{ "command: [a]\nenv:\n  A: 1\n  A: 2\n",
		    "duplicate key \"A\"", 4, 3 },
		{ "command: [a]\n---\ncommand: [b]\n",
		    "more than one YAML document", 2, 1 },
		/* unknown keys name the key and where it is */
		{ "command: [true]\nfoo: 1\n",
		    "unknown key \"foo\"", 2, 1 },
		{ "command: [true]\n  # c\ncores: 1\n  \nmemroy: 4G\n",
		    "unknown key \"memroy\"", 5, 1 },
		{ "{command: [true], x: 1}\n",
		    "unknown key \"x\"", 1, 19 },
		{ "command: [true]\nresources:\n  cpus: 4\n",
		    "unknown resource \"cpus\"", 3, 3 },
		/* wrong shapes and values */
		{ "- a\n- b\n",	/* taskfile_parse_list's (below) */
		    "a list of tasks is taken by spool submit and a spoolfs "
		    "mount's submit/, not here: one task file a task", 1, 1 },
		{ "hello\n",
		    "not a task", 1, 1 },
		{ "command:\n",
		    "command must be a list", 1, 9 },
		{ "command: []\n",
		    "command must be a list", 1, 10 },
		{ "command: {a: b}\n",
		    "command must be a list", 1, 10 },
		{ "command: [echo, {a: b}]\n",
		    "command words must be strings, not a mapping", 1, 17 },
		{ "command: [echo, [x]]\n",
		    "not a list", 1, 17 },
		{ "cores: lots\ncommand: [true]\n",
		    "cores: not a number", 1, 8 },
		{ "command: [x]\ncores: [1, 2]\n",
		    "cores must be a single value, not a list", 2, 8 },
		{ "command: [x]\ncores:\n",
		    "cores must be a single value, not empty", 2, 7 },
		{ "command: [x]\nmemory: 4X\n",
		    "memory: unknown size unit", 2, 9 },
		{ "command: [x]\nresources: 4\n",
		    "resources must be a mapping", 2, 12 },
		{ "command: [x]\nresources:\n  walltime: 1:60\n",
		    "walltime", 3, 13 },
		{ "command: [x]\nenv: 3\n",
		    "env must be a mapping", 2, 6 },
		{ "command: [x]\nenv:\n  1BAD: x\n",
		    "env 1BAD", 3, 3 },
		{ "command: [x]\nenv:\n  A: [x]\n",
		    "env value of A must be a string", 3, 6 },
		{ "command: [x]\nenv: [NOEQ]\n",
		    "env: env must be NAME=VALUE", 2, 7 },
		{ "command: [x]\nafter: {a: 1}\n",
		    "after must be a list", 2, 8 },
		{ "command: [x]\nafter: [1, x]\n",
		    "after: \"x\" is not a task ID (the tasks of a list may "
		    "name the tasks before them", 2, 12 },
		{ "command: [x]\nafter: [1, 2 3]\n",
		    "after: after must be", 2, 12 },
		{ "command: [x]\npriority: 1001\n",
		    "priority must be an integer from -1000 to 1000", 2, 11 },
		{ "command: [x]\nname: a/b\n",
		    "name must be", 2, 7 },
		{ "command: [x]\ncwd: relative\n",
		    "cwd must be an absolute path", 2, 6 },
		/* syntax */
		{ "command: [a\n",
		    "did not find expected", 2, 1 },
		{ "command: [true]\n  bad indent: 1\n",
		    "did not find expected key", 2, 3 },
		/* a resource at the top and under resources: one of them
		 * would be dropped, by the file's order */
		{ "command: [a]\ncores: 4\nresources:\n  cores: 8\n",
		    "cores given twice (line 2 and here)", 4, 3 },
		{ "command: [a]\nresources: {memory: 1G}\nmemory: 2G\n",
		    "memory given twice (line 2 and here)", 3, 1 },
		/* whole-task validation has no position */
		{ "name: x\n",
		    "no command", 0, 0 },
		{ "command: [a]\nscript: \"#!/bin/sh\"\n",
		    "more than one", 0, 0 },
		{ "script: echo hi\n",
		    "script does not start with #!", 0, 0 },
		{ "command: \"  \"\n",
		    "empty command", 0, 0 },
		{ "",
		    "empty task file", 0, 0 },
		{ "# nothing here\n\n",
		    "empty task file", 0, 0 },
	};
	struct taskfile_err e;
	struct task_spec t;
	size_t i;
	int rc;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		rc = parse(rows[i].text, strlen(rows[i].text), &t, &e);
		TCHECK(rc == -1, "row %zu (\"%s\") accepted", i, rows[i].text);
		TCHECK(unit_contains(e.msg, rows[i].msg),
		    "row %zu: \"%s\", want \"%s\"", i, e.msg, rows[i].msg);
		TCHECK(e.line == rows[i].line && e.col == rows[i].col,
		    "row %zu (%s): at %d:%d, want %d:%d", i, e.msg, e.line,
		    e.col, rows[i].line, rows[i].col);
		task_free(&t);
	}
}

/* The message a person reads: key, line and column in words. */
static void
test_error_format(void **state)
{
	static const struct {
		struct taskfile_err e;
		const char *want;
	} rows[] = {
		{ { 2, 1, "unknown key \"foo\"" },
		    "line 2, column 1: unknown key \"foo\"" },
		{ { 3, 0, "#SPOOL --x: unknown option" },
		    "line 3: #SPOOL --x: unknown option" },
		{ { 0, 0, "empty task file" }, "empty task file" },
	};
	static const char text[] =
	    "command: [true]\ncores: 2\nfrobnicate: yes\n";
	struct taskfile_err e;
	struct task_spec t;
	char out[400];
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		taskfile_err_format(&rows[i].e, out, sizeof out);
		TCHECK(strcmp(out, rows[i].want) == 0, "\"%s\", want \"%s\"",
		    out, rows[i].want);
	}
	/* End to end: an unknown key on line 3, column 1. */
	assert_int_equal(parse(text, strlen(text), &t, &e), -1);
	taskfile_err_format(&e, out, sizeof out);
	assert_string_equal(out, "line 3, column 1: unknown key \"frobnicate\" "
	    "(known: command, script, name, cwd, env, cores, memory, gpus, "
	    "walltime, resources, after, priority, retries)");
	task_free(&t);
}

static void
test_hostile_bytes(void **state)
{
	static const struct {
		const char *data;
		size_t len;
		const char *msg;
	} rows[] = {
		{ "command: [a]\0\n",		14, "NUL" },
		{ "\0",				1,  "NUL" },
		{ "#!/bin/sh\n\0echo\n",	16, "NUL" },
		{ "\xff\xfe\x80",		3,  "" },
		{ "command: [\xc3\x28]\n",	14, "" },
		{ "\x7f" "ELF\x02\x01\x01",	7,  "" },
	};
	struct taskfile_err e;
	struct task_spec t;
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		TCHECK(parse(rows[i].data, rows[i].len, &t, &e) == -1,
		    "row %zu accepted", i);
		TCHECK(e.msg[0] && unit_contains(e.msg, rows[i].msg),
		    "row %zu: \"%s\"", i, e.msg);
		task_free(&t);
	}
}

static void
test_limits(void **state)
{
	struct taskfile_err e;
	struct task_spec t;
	struct buf b = BUF_INIT;
	size_t i;
	int d;

	(void)state;
	/* Exactly TASK_FILE_MAX bytes is read; one more is refused. */
	buf_puts(&b, "command: [true]\n");
	while (b.len < TASK_FILE_MAX - 1)
		buf_putc(&b, '#');
	buf_putc(&b, '\n');
	assert_int_equal(b.len, TASK_FILE_MAX);
	assert_int_equal(parse(b.p, b.len, &t, &e), 0);
	task_free(&t);
	b.p[b.len - 1] = '#';
	buf_putc(&b, '\n');
	assert_int_equal(parse(b.p, b.len, &t, &e), -1);
	assert_contains(e.msg, "file larger than");
	task_free(&t);

	/* A command list of 100001 words: more than YAMLX_NODES_MAX nodes. */
	buf_reset(&b);
	buf_puts(&b, "command: [");
	for (i = 0; i <= YAMLX_NODES_MAX; i++)
		buf_puts(&b, i ? ", a" : "a");
	buf_puts(&b, "]\n");
	assert_true(b.len < TASK_FILE_MAX);
	assert_int_equal(parse(b.p, b.len, &t, &e), -1);
	assert_contains(e.msg, "more than 100000 YAML nodes");
	assert_int_equal(e.line, 1);
	task_free(&t);

	/* 4097 words: within YAML limits, over TASK_ARGV_MAX. */
	buf_reset(&b);
	buf_puts(&b, "command: [");
	for (i = 0; i <= TASK_ARGV_MAX; i++)
		buf_puts(&b, i ? ", a" : "a");
	buf_puts(&b, "]\n");
	assert_int_equal(parse(b.p, b.len, &t, &e), -1);
	assert_contains(e.msg, "more than 4096 words");
	task_free(&t);

	/* Nesting: the mapping plus 16 lists is 17 levels. */
	buf_reset(&b);
	buf_puts(&b, "command: ");
	for (d = 0; d < YAMLX_DEPTH_MAX; d++)
		buf_putc(&b, '[');
	for (d = 0; d < YAMLX_DEPTH_MAX; d++)
		buf_putc(&b, ']');
	buf_putc(&b, '\n');
	assert_int_equal(parse(b.p, b.len, &t, &e), -1);
	assert_contains(e.msg, "nested deeper than 16");
	assert_int_equal(e.line, 1);
	assert_int_equal(e.col, 10 + YAMLX_DEPTH_MAX - 1);
	task_free(&t);
	buf_free(&b);
}

/* ---- #SPOOL scripts ---- */

static void
test_script_directives(void **state)
{
	static const char text[] =
	    "#!/bin/bash\n"
	    "#SPOOL --cores=4 --memory=2G\n"
	    "#SPOOL --after 12,13\n"
	    "\n"
	    "# an ordinary comment\n"
	    "#SPOOL\t--name align-1   --walltime=1:00:00\n"
	    "#SPOOL --env \"GREETING=hello world\" --env='B=it is'\n"
	    "#SPOOL --env C=a\\ b --priority -5 --retries=1\n"
	    "#SPOOL --cwd=/tmp/x --gpus 1\n"
	    "#SPOOLX --cores=99\n"
	    "#SPOOL-not --cores=98\n"
	    "echo \"running\"\n"
	    "#SPOOL --cores=97\n";
	static const char *const env[] = {
		"GREETING=hello world", "B=it is", "C=a b", NULL,
	};
	struct task_spec t;

	(void)state;
	parse_ok(text, &t);
	assert_int_equal(t.cores, 4);
	assert_int_equal(t.memory, 2ULL << 30);
	assert_int_equal(t.nafter, 2);
	assert_int_equal(t.after[0], 12);
	assert_int_equal(t.after[1], 13);
	assert_string_equal(t.name, "align-1");
	assert_int_equal(t.walltime, 3600);
	assert_argv(t.env, env);
	assert_int_equal(t.priority, -5);
	assert_int_equal(t.retries, 1);
	assert_string_equal(t.cwd, "/tmp/x");
	assert_int_equal(t.gpus, 1);
	/* The whole file is the script, byte for byte. */
	assert_string_equal(t.script, text);
	assert_null(t.argv);
	assert_null(t.shell);
	task_free(&t);
}

static void
test_script_directives_end(void **state)
{
	static const struct {
		const char *text;
		uint32_t cores;
	} rows[] = {
		{ "#!/bin/sh\n#SPOOL --cores=2\necho hi\n#SPOOL --cores=8\n", 2 },
		{ "#!/bin/sh\n\n\n# c\n#SPOOL --cores=3\n", 3 },
		{ "#!/bin/sh\n   \n\t\n#SPOOL --cores=3\n", 3 },
		{ "#!/bin/sh\n  #SPOOL --cores=8\n", 0 },	/* a command */
		{ "#!/bin/sh\nset -e\n#SPOOL --cores=8\n", 0 },
		{ "#!/bin/sh\n#SPOOLX --cores=8\n", 0 },
		{ "#!/bin/sh\n#SPOOL_ --cores=8\n", 0 },
		{ "#!/bin/sh\n#spool --cores=8\n", 0 },
		{ "#!/bin/sh\n#SPOOL\n#SPOOL --cores=5", 5 },	/* no newline */
		{ "#!/bin/sh\n#SPOOL --cores=5\n#SPOOL --cores=6\n", 6 },
		{ "#!/bin/sh", 0 },
		{ "#!/bin/sh\n", 0 },
		/* the shebang line itself is never a directive */
		{ "#!/bin/sh #SPOOL --cores=8\n", 0 },
	};
	struct task_spec t;
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		parse_ok(rows[i].text, &t);
		TCHECK(t.cores == rows[i].cores, "row %zu: cores %u, want %u",
		    i, t.cores, rows[i].cores);
		TCHECK(t.script && strcmp(t.script, rows[i].text) == 0,
		    "row %zu: script not kept", i);
		task_free(&t);
	}
}

static void
test_script_errors(void **state)
{
	static const struct {
		const char *text;
		int line;
		const char *msg;
	} rows[] = {
		{ "#!/bin/sh\n# hi\n#SPOOL --frobnicate=1\n", 3,
		    "#SPOOL --frobnicate=1: unknown option" },
		{ "#!/bin/sh\n#SPOOL --cores=2\n\n#SPOOL --frob 1\n", 4,
		    "#SPOOL --frob: unknown option" },
		{ "#!/bin/sh\n#SPOOL --cores=zero\n", 2,
		    "#SPOOL --cores=zero: not a number" },
		{ "#!/bin/sh\n#SPOOL --cores\n", 2,
		    "option needs a value" },
		{ "#!/bin/sh\n#SPOOL cores=4\n", 2,
		    "expected an option like --cores=4" },
		{ "#!/bin/sh\n#SPOOL --\n", 2,
		    "expected an option" },
		{ "#!/bin/sh\n#SPOOL --env \"A=1\n", 2,
		    "unbalanced quote" },
		{ "#!/bin/sh\n#SPOOL --name='x\n", 2,
		    "unbalanced quote" },
		{ "#!/bin/sh\n#SPOOL --priority=2000\n", 2,
		    "priority must be" },
		{ "#!/bin/sh\n#SPOOL --after=5,x\n", 2,
		    "after must be" },
		/* the user's word quoted and escaped, unless a plain word */
		{ "#!/bin/sh\n#SPOOL --\033[31mx\n", 2,
		    "#SPOOL \"--\\x1b[31mx\": unknown option" },
		{ "#!/bin/sh\n#SPOOL --cores=4\033[2J\n", 2,
		    "#SPOOL --cores=\"4\\x1b[2J\": trailing garbage" },
		{ "#!/bin/sh\n#SPOOL --name=\"a\tb\"\n", 2,
		    "#SPOOL --name=\"a\\tb\": name must be" },
		/* "--opt value" names its value as "--opt=value" does (it
		 * named the option alone), on the line that has it */
		{ "#!/bin/sh\n#SPOOL --name x\n#SPOOL --cores -1\n", 3,
		    "#SPOOL --cores=-1: negative value" },
		{ "#!/bin/sh\n#SPOOL --name x --memory \"4\033[2J G\"\n", 2,
		    "#SPOOL --memory=\"4\\x1b[2J G\": unknown size unit" },
	};
	struct taskfile_err e;
	struct task_spec t;
	char out[400];
	size_t i;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		TCHECK(parse(rows[i].text, strlen(rows[i].text), &t, &e) == -1,
		    "row %zu accepted", i);
		TCHECK(e.line == rows[i].line && e.col == 0,
		    "row %zu: at %d:%d, want line %d", i, e.line, e.col,
		    rows[i].line);
		TCHECK(unit_contains(e.msg, rows[i].msg),
		    "row %zu: \"%s\", want \"%s\"", i, e.msg, rows[i].msg);
		taskfile_err_format(&e, out, sizeof out);
		TCHECK(strncmp(out, "line ", 5) == 0, "row %zu: \"%s\"", i, out);
		task_free(&t);
	}
}

#define A10	"aaaaaaaaaa"
#define A52	A10 A10 A10 A10 A10 "aa"
#define A80	A10 A10 A10 A10 A10 A10 A10 A10

static void
test_apply_words(void **state)
{
	static const struct {
		const char *line;
		int ok;
		const char *env0;	/* expected first env entry */
		const char *badword;	/* on error */
	} rows[] = {
		{ "--env A=1",			1, "A=1",	NULL },
		{ "--env=A=1",			1, "A=1",	NULL },
		{ "--env 'A=x y'",		1, "A=x y",	NULL },
		{ "--env \"A=x y\"",		1, "A=x y",	NULL },
		{ "--env A='x y'z",		1, "A=x yz",	NULL },
		{ "--env \"A=\\\"q\\\"\"",	1, "A=\"q\"",	NULL },
		{ "--env 'A=\\n'",		1, "A=\\n",	NULL },
		{ "--env A=x\\ y",		1, "A=x y",	NULL },
		{ "--env \"A=a\\\\b\"",		1, "A=a\\b",	NULL },
		{ "  \t ",			1, NULL,	NULL },
		{ "",				1, NULL,	NULL },
		{ "--cores=4 extra",		0, NULL,	"extra" },
		{ "--bogus=1",			0, NULL,	"--bogus=1" },
		{ "--bogus 1",			0, NULL,	"--bogus" },
		{ "--cores -1",			0, NULL,	"--cores=-1" },
		{ "--env 'A B=1'",		0, NULL,	"--env=A B=1" },
		{ "-c 4",			0, NULL,	"-c" },
		{ "--env",			0, NULL,	"--env" },
		{ "--env 'A=1",			0, NULL,	"--env" },
		/* one longer than the buffer (64 here) is cut, and says so */
		{ "--bogus=" A80,		0, NULL,	"--bogus=" A52 "..." },
		{ "--cores " A80,		0, NULL,	"--cores=" A52 "..." },
	};
	struct task_spec t;
	const char *why;
	char bad[64];
	size_t i;
	int rc;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		task_init(&t);
		why = NULL;
		rc = taskfile_apply_words(&t, rows[i].line, &why, bad, sizeof bad);
		TCHECK(rc == (rows[i].ok ? 0 : -1), "\"%s\": rc %d (%s)",
		    rows[i].line, rc, why ? why : "");
		if (rows[i].ok && rows[i].env0)
			TCHECK(t.env && strcmp(t.env[0], rows[i].env0) == 0,
			    "\"%s\": env \"%s\", want \"%s\"", rows[i].line,
			    t.env ? t.env[0] : "(none)", rows[i].env0);
		if (rows[i].ok)
			TCHECK(bad[0] == 0, "\"%s\": badword \"%s\"",
			    rows[i].line, bad);
		else {
			TCHECK(why != NULL, "\"%s\": no reason", rows[i].line);
			TCHECK(strcmp(bad, rows[i].badword) == 0,
			    "\"%s\": badword \"%s\", want \"%s\"", rows[i].line,
			    bad, rows[i].badword);
		}
		task_free(&t);
	}
}

/*
 * A word of a #SPOOL line is at most 4095 characters.  A longer one (a
 * long --after list, say) is refused as too long, with the bound and
 * the option it belongs to, not as an unbalanced quote; and a bad word
 * after good ones is named itself, not the option before it.
 */
static void
test_script_word_too_long(void **state)
{
	static const struct {
		const char *before;	/* the line before the word */
		const char *head;	/* the word's start */
		const char *fill;	/* repeated to len characters */
		size_t len;		/* of the word; 0: the head alone */
		const char *msg;	/* NULL: accepted */
	} rows[] = {
		{ "#SPOOL --after ", "", "10000,", 5000,
		    "#SPOOL --after: word too long (at most 4095 characters" },
		{ "#SPOOL ", "--after=", "10000,", 5000,
		    "#SPOOL --after: word too long (at most 4095 characters" },
		{ "#SPOOL --name=x ", "--after=", "10000,", 5000,
		    "#SPOOL --after: word too long (at most 4095 characters" },
		{ "#SPOOL ", "--env=A=", "x", 4095, NULL },
		{ "#SPOOL ", "--env=A=", "x", 4096,
		    "#SPOOL --env: word too long" },
		{ "#SPOOL --name=x ", "--cores=\"4", "", 0,
		    "#SPOOL --cores: unbalanced quote" },
	};
	struct taskfile_err e;
	struct task_spec t;
	struct buf b = BUF_INIT;
	size_t i, start;
	int rc;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		buf_reset(&b);
		buf_puts(&b, "#!/bin/sh\n");
		buf_puts(&b, rows[i].before);
		start = b.len;
		buf_puts(&b, rows[i].head);
		while (b.len - start < rows[i].len)
			buf_puts(&b, rows[i].fill);
		if (rows[i].len)
			b.len = start + rows[i].len;
		buf_puts(&b, "\ntrue\n");
		rc = parse(b.p, b.len, &t, &e);
		if (rows[i].msg == NULL)
			TCHECK(rc == 0, "row %zu: %s", i, e.msg);
		else {
			TCHECK(rc == -1, "row %zu accepted", i);
			TCHECK(e.line == 2, "row %zu: line %d", i, e.line);
			TCHECK(unit_contains(e.msg, rows[i].msg),
			    "row %zu: \"%s\", want \"%s\"", i, e.msg,
			    rows[i].msg);
		}
		task_free(&t);
	}
	buf_free(&b);
}

/* A list of tasks: each item a task file's mapping, validated as one. */
static void
test_list(void **state)
{
	static const char list[] = "---\n"
	    "- command: [echo, a]\n"
	    "  cores: 2\n"
	    "- {command: \"echo b\", after: [7, 9], env: [X=1]}\n"
	    "- script: \"#!/bin/sh\\necho c\\n\"\n"
	    "  resources: {memory: 1G}\n";
	static const char bad[] = "- command: [a]\n- command: [b]\n"
	    "  walltime: soon\n";
	struct taskfile_err e;
	struct task_spec *t;
	struct buf b = BUF_INIT;
	size_t n, i;

	(void)state;
	TCHECK(taskfile_parse_list(list, sizeof list - 1, &t, &n, &e) == 0,
	    "%s", e.msg);
	assert_int_equal(n, 3);
	assert_string_equal(t[0].argv[1], "a");
	assert_int_equal(t[0].cores, 2);
	assert_string_equal(t[1].shell, "echo b");
	assert_int_equal(t[1].nafter, 2);
	assert_int_equal(t[1].after[1], 9);
	assert_string_equal(t[1].env[0], "X=1");
	assert_string_equal(t[2].script, "#!/bin/sh\necho c\n");
	assert_int_equal(t[2].memory, 1ULL << 30);
	task_free_array(t, n);

	/* a file of one task, YAML or script: a list of one */
	TCHECK(taskfile_parse_list("command: [x]\n", 13, &t, &n, &e) == 0,
	    "%s", e.msg);
	assert_int_equal(n, 1);
	assert_string_equal(t[0].argv[0], "x");
	task_free_array(t, n);
	TCHECK(taskfile_parse_list("#!/bin/sh\n#SPOOL --gpus 1\n", 26, &t,
	    &n, &e) == 0, "%s", e.msg);
	assert_int_equal(n, 1);
	assert_int_equal(t[0].gpus, 1);
	task_free_array(t, n);

	/* all or nothing, the item named with its line */
	assert_int_equal(taskfile_parse_list(bad, sizeof bad - 1, &t, &n,
	    &e), -1);
	assert_null(t);
	assert_int_equal(n, 0);
	assert_int_equal(e.line, 3);
	assert_contains(e.msg, "task 2 of the list: walltime");
	assert_contains(e.msg, "\"soon\"");
	/* a message cut to fit with its prefix, not overrun */
	buf_puts(&b, "- command: [a]\n- command: [b]\n  ");
	for (i = 0; i < 300; i++)
		buf_putc(&b, 'k');
	buf_puts(&b, ": 1\n");
	assert_int_equal(taskfile_parse_list(b.p, b.len, &t, &n, &e), -1);
	assert_contains(e.msg, "task 2 of the list: unknown key \"kkk");
	assert_true(strlen(e.msg) < sizeof e.msg);

	/*
	 * after: names the tasks before, each one so named (their indexes
	 * until IDs are claimed), beside IDs; a name is said once
	 */
	buf_reset(&b);
	buf_puts(&b, "- {name: part, command: [p, 1]}\n"
	    "- {name: other, command: [o]}\n"
	    "- {name: part, command: [p, 2], after: [other]}\n"
	    "- command: [merge]\n"
	    "  after: [part, 3, part, \"other\"]\n"
	    "- {name: last, command: [l], after: part}\n");
	TCHECK(taskfile_parse_list(b.p, b.len, &t, &n, &e) == 0, "%s", e.msg);
	assert_int_equal(n, 5);
	assert_int_equal(t[0].nafter_item, 0);
	assert_int_equal(t[2].nafter_item, 1);
	assert_int_equal(t[2].after_item[0].item, 1);
	assert_int_equal(t[3].nafter, 1);
	assert_int_equal(t[3].after[0], 3);
	assert_int_equal(t[3].nafter_item, 3);
	assert_int_equal(t[3].after_item[0].item, 0);
	assert_int_equal(t[3].after_item[1].item, 2);
	assert_int_equal(t[3].after_item[2].item, 1);
	assert_int_equal(t[4].nafter_item, 2);
	/*
	 * the list's IDs claimed from 100: the named tasks' IDs join after
	 * in the order of the words ($SPOOL_DEPS), IDs given among them
	 */
	task_after_items(&t[3], 100);
	assert_int_equal(t[3].nafter_item, 0);
	assert_null(t[3].after_item);
	assert_int_equal(t[3].nafter, 4);
	assert_int_equal(t[3].after[0], 100);
	assert_int_equal(t[3].after[1], 102);
	assert_int_equal(t[3].after[2], 3);
	assert_int_equal(t[3].after[3], 101);
	task_after_items(&t[4], 100);
	assert_int_equal(t[4].nafter, 2);
	assert_int_equal(t[4].after[0], 100);
	assert_int_equal(t[4].after[1], 102);
	task_free_array(t, n);
	/* a name no task before has (itself, one after, none) is refused */
	static const struct {
		const char *text;
		int line, col;
		const char *msg;
	} names[] = {
		{ "- {name: a, command: [x], after: [a]}\n", 1, 35,
		    "task 1 of the list: after: no task before this one in the "
		    "list is named \"a\"" },
		{ "- {command: [x], after: [b]}\n- {name: b, command: [y]}\n",
		    1, 26, "task 1 of the list: after: no task before" },
		{ "- {name: a, command: [x]}\n- command: [y]\n  after: [A]\n",
		    3, 11, "task 2 of the list: after: no task before this one "
		    "in the list is named \"A\"" },
		{ "- {name: a, command: [x]}\n- {command: [y], after: {a: 1}}\n",
		    2, 25, "after must be a list of task IDs or of names" },
	};
	for (i = 0; i < NELEM(names); i++) {
		TCHECK(taskfile_parse_list(names[i].text, strlen(names[i].text),
		    &t, &n, &e) == -1, "row %zu taken", i);
		assert_null(t);
		TCHECK(e.line == names[i].line && e.col == names[i].col,
		    "row %zu: line %d, column %d", i, e.line, e.col);
		TCHECK(unit_contains(e.msg, names[i].msg), "row %zu: \"%s\"",
		    i, e.msg);
	}
	/* 1,024 dependencies in all, IDs and names together */
	buf_reset(&b);
	for (i = 0; i < 1000; i++)
		buf_puts(&b, "- {name: p, command: [x]}\n");
	buf_puts(&b, "- command: [y]\n  after: [p");
	for (i = 0; i < 24; i++)
		buf_printf(&b, ", %zu", i + 1);
	buf_puts(&b, "]\n");
	TCHECK(taskfile_parse_list(b.p, b.len, &t, &n, &e) == 0, "%s", e.msg);
	assert_int_equal(t[1000].nafter + t[1000].nafter_item, 1024);
	task_free_array(t, n);
	b.len -= 2;
	buf_puts(&b, ", 25]\n");
	assert_int_equal(taskfile_parse_list(b.p, b.len, &t, &n, &e), -1);
	assert_contains(e.msg, "task 1001 of the list: after: too many "
	    "dependencies (at most 1024)");
	/* a name of 1,025 tasks is more than one task may come after */
	buf_reset(&b);
	for (i = 0; i < 1025; i++)
		buf_puts(&b, "- {name: p, command: [x]}\n");
	buf_puts(&b, "- {command: [y], after: [p]}\n");
	assert_int_equal(taskfile_parse_list(b.p, b.len, &t, &n, &e), -1);
	assert_int_equal(e.line, 1026);
	assert_contains(e.msg, "task 1026 of the list: after: too many "
	    "dependencies (at most 1024)");
	/* TASKFILE_AFTER_MAX dependencies a list: 1,024 tasks named p and
	 * 512 tasks after them all are taken; one ID more is refused */
	buf_reset(&b);
	for (i = 0; i < 1024; i++)
		buf_puts(&b, "- {name: p, command: [x]}\n");
	for (i = 0; i < TASKFILE_AFTER_MAX / 1024; i++)
		buf_puts(&b, "- {command: [y], after: [p]}\n");
	TCHECK(taskfile_parse_list(b.p, b.len, &t, &n, &e) == 0, "%s", e.msg);
	assert_int_equal(n, 1536);
	assert_int_equal(t[1535].nafter_item, 1024);
	task_free_array(t, n);
	buf_puts(&b, "- {command: [y], after: [1]}\n");
	assert_int_equal(taskfile_parse_list(b.p, b.len, &t, &n, &e), -1);
	assert_null(t);
	assert_int_equal(e.line, 1537);
	assert_string_equal(e.msg, "task 1537 of the list: after: the tasks of "
	    "the list up to this one have 524289 dependencies in all (at "
	    "most 524288 a list)");

	/* at most TASKFILE_LIST_MAX items */
	buf_reset(&b);
	for (i = 0; i <= TASKFILE_LIST_MAX; i++)
		buf_puts(&b, "- {command: x}\n");
	assert_int_equal(taskfile_parse_list(b.p, b.len, &t, &n, &e), -1);
	assert_contains(e.msg, "a list of 10001 tasks (1 to 10000)");
	b.len -= strlen("- {command: x}\n");
	TCHECK(taskfile_parse_list(b.p, b.len, &t, &n, &e) == 0, "%s", e.msg);
	assert_int_equal(n, TASKFILE_LIST_MAX);
	task_free_array(t, n);
	buf_free(&b);
}

/*
 * taskfile_parse takes (data, len): the data need not be NUL-terminated.
 * Put the file at the very end of a page followed by an inaccessible
 * page, so that reading one byte past len faults.
 */
static void
test_unterminated_buffer(void **state)
{
	static const char *const rows[] = {
		"command: [true]\n",
		"command: [true]",
		"#!/bin/sh\n#SPOOL --cores=2\n",
		"#!/bin/sh\n#SPOOL --cores=2",
		"#!/bin/sh\necho hi",
		"#!/bin/sh\n#SPOOL --cores=2\n  ",	/* blank last line */
		"#!/bin/sh\n\t",
	};
	long pg = sysconf(_SC_PAGESIZE);
	struct taskfile_err e;
	struct task_spec t;
	char *m, *data;
	size_t i, n;

	(void)state;
	m = mmap(NULL, (size_t)(2 * pg), PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(m != MAP_FAILED);
	assert_int_equal(mprotect(m + pg, (size_t)pg, PROT_NONE), 0);
	for (i = 0; i < NELEM(rows); i++) {
		n = strlen(rows[i]);
		data = m + pg - n;
		memcpy(data, rows[i], n);
		/* A fault here ends the test: say which row it was. */
		print_message("unterminated buffer, row %zu\n", i);
		TCHECK(parse(data, n, &t, &e) == 0, "row %zu: %s", i, e.msg);
		task_free(&t);
	}
	munmap(m, (size_t)(2 * pg));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_yaml_command_forms),
		cmocka_unit_test(test_yaml_options),
		cmocka_unit_test(test_yaml_after_forms),
		cmocka_unit_test(test_yaml_env_forms),
		cmocka_unit_test(test_yaml_errors),
		cmocka_unit_test(test_error_format),
		cmocka_unit_test(test_hostile_bytes),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_script_directives),
		cmocka_unit_test(test_script_directives_end),
		cmocka_unit_test(test_script_errors),
		cmocka_unit_test(test_apply_words),
		cmocka_unit_test(test_script_word_too_long),
		cmocka_unit_test(test_unterminated_buffer),
		cmocka_unit_test(test_list),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
