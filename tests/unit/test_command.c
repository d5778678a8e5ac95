/*
 * test_command.c - command.c: running an outside command with a time
 * limit.  Output and error captured apart, input on stdin, the working
 * directory and environment given, exit status and signal, a command
 * that cannot be started (not found, bad directory) as a start failure
 * with its reason, the tick called while it runs, the time limit
 * killing the whole process group, the
 * output bound, and the words command_why() finds for a failure (the
 * command's own line with its control bytes escaped).
 */
#include "unit.h"
#include "command.h"
#include "hostinfo.h"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>

static int
run(struct command *c, struct buf *out, struct buf *err, char *why,
    size_t size)
{
	why[0] = 0;
	return command_run(c, out, err, why, size);
}

static void
test_output_input_status(void **state)
{
	char *argv[] = { "sh", "-c", "cat; echo to-err >&2; exit 3", NULL };
	struct command c = COMMAND_INIT;
	struct buf out = BUF_INIT, err = BUF_INIT;
	char why[300];

	(void)state;
	c.argv = argv;
	c.input = "hello\nworld\n";
	c.limit_ms = 10000;
	assert_int_equal(run(&c, &out, &err, why, sizeof why), 0);
	assert_string_equal(out.p, "hello\nworld\n");
	assert_string_equal(err.p, "to-err\n");
	assert_false(command_ok(&c));
	assert_true(WIFEXITED(c.status));
	assert_int_equal(WEXITSTATUS(c.status), 3);
	command_why(&c, &out, &err, why, sizeof why);
	assert_string_equal(why, "sh: to-err");
	/* err NULL: stderr goes nowhere; no input: stdin is empty */
	argv[2] = "cat; echo x >&2; echo done";
	c.input = NULL;
	assert_int_equal(run(&c, &out, NULL, why, sizeof why), 0);
	assert_string_equal(out.p, "done\n");
	assert_true(command_ok(&c));
	buf_free(&out);
	buf_free(&err);
}

static void
test_cwd_and_environment(void **state)
{
	char *argv[] = { "sh", "-c", "pwd; echo \"[$CK_A] [$HOME]\"", NULL };
	char *envp[] = { "CK_A=a b", "PATH=/usr/bin:/bin", NULL };
	struct command c = COMMAND_INIT;
	struct buf out = BUF_INIT;
	char why[300];

	(void)state;
	c.argv = argv;
	c.cwd = "/tmp";
	c.envp = envp;
	assert_int_equal(run(&c, &out, NULL, why, sizeof why), 0);
	assert_string_equal(out.p, "/tmp\n[a b] []\n");
	buf_free(&out);
}

/*
 * Not started: a reason, not an exit status to guess from.  A command's
 * name and directory that are not plain words are quoted and escaped in
 * it (msg.h: names in messages; they were printed raw, an escape
 * sequence and all).
 */
static void
test_start_failures(void **state)
{
	char *missing[] = { "ckspool-no-such-command", NULL };
	char *odd[] = { "ckspool-no\033[2Jsuch", NULL };
	char *sh[] = { "sh", "-c", "true", NULL };
	struct command c = COMMAND_INIT;
	struct buf out = BUF_INIT;
	char why[300];

	(void)state;
	c.argv = missing;
	assert_int_equal(run(&c, &out, NULL, why, sizeof why), -1);
	assert_int_equal(errno, ENOENT);
	assert_string_equal(why, "ckspool-no-such-command: exec: No such file "
	    "or directory");
	c.argv = odd;
	assert_int_equal(run(&c, &out, NULL, why, sizeof why), -1);
	assert_string_equal(why, "\"ckspool-no\\x1b[2Jsuch\": exec: No such "
	    "file or directory");
	c.argv = sh;
	c.cwd = "/nonexistent/dir";
	assert_int_equal(run(&c, &out, NULL, why, sizeof why), -1);
	assert_string_equal(why, "sh: chdir: /nonexistent/dir: No such file or "
	    "directory");
	c.cwd = "/nonexistent/a\nb";
	assert_int_equal(run(&c, &out, NULL, why, sizeof why), -1);
	assert_string_equal(why, "sh: chdir: \"/nonexistent/a\\nb\": No such "
	    "file or directory");
	c.argv = odd;
	c.status = 4 << 8;	/* exited 4, said nothing */
	command_why(&c, NULL, NULL, why, sizeof why);
	assert_string_equal(why, "\"ckspool-no\\x1b[2Jsuch\": exit status 4");
	buf_free(&out);
}

/*
 * tick is called while the command runs: here the command waits for a
 * file that the third tick makes, so it ends only if ticks come.
 */
static char tick_file[64];
static int ticks;

static void
tick_third_makes_the_file(void)
{
	FILE *f;

	if (++ticks == 3 && (f = fopen(tick_file, "w")) != NULL)
		fclose(f);
}

static void
test_tick_while_it_runs(void **state)
{
	char *argv[] = { "sh", "-c",
	    "while [ ! -e \"$0\" ]; do sleep 0.02; done; echo seen",
	    tick_file, NULL };
	struct command c = COMMAND_INIT;
	struct buf out = BUF_INIT;
	char why[300];

	(void)state;
	snprintf(tick_file, sizeof tick_file, "/tmp/test_command.%ld",
	    (long)getpid());
	(void)unlink(tick_file);
	ticks = 0;
	c.argv = argv;
	c.limit_ms = 20000;
	c.tick = tick_third_makes_the_file;
	c.tick_ms = 50;
	assert_int_equal(run(&c, &out, NULL, why, sizeof why), 0);
	assert_true(command_ok(&c));
	assert_string_equal(out.p, "seen\n");
	assert_true(ticks >= 3);
	/* tick_ms 0: never called */
	ticks = 10;
	c.tick_ms = 0;
	argv[2] = "echo again";
	assert_int_equal(run(&c, &out, NULL, why, sizeof why), 0);
	assert_int_equal(ticks, 10);
	assert_int_equal(unlink(tick_file), 0);
	buf_free(&out);
}

/* The limit kills the command and what it started, and says so. */
static void
test_time_limit_kills_the_group(void **state)
{
	char *argv[] = { "sh", "-c", "sleep 60 & echo $!; sleep 61", NULL };
	struct command c = COMMAND_INIT;
	struct buf out = BUF_INIT;
	const struct timespec tick = { 0, 10000000 };
	char why[300];
	long child;
	int i;

	(void)state;
	c.argv = argv;
	c.limit_ms = 300;
	assert_int_equal(run(&c, &out, NULL, why, sizeof why), -1);
	assert_int_equal(errno, ETIMEDOUT);
	assert_string_equal(why, "sh: no answer in 0.3 s; killed");
	child = strtol(out.p, NULL, 10);
	assert_true(child > 1);
	/*
	 * the background sleep was in the group: gone (or a zombie of
	 * init) once the kernel has delivered the SIGKILL, which a loaded
	 * machine may take a moment to do: poll, bounded at 10 s
	 */
	for (i = 0; i < 1000; i++) {
		if (kill((pid_t)child, 0) < 0 ||
		    host_pid_alive(host_name(), host_boot_id(), child, 0) == 0)
			break;
		nanosleep(&tick, NULL);
	}
	assert_true(i < 1000);
	buf_free(&out);
}

static void
test_output_is_bounded(void **state)
{
	char *argv[] = { "sh", "-c", "head -c 6000000 /dev/zero", NULL };
	struct command c = COMMAND_INIT;
	struct buf out = BUF_INIT;
	char why[300];

	(void)state;
	c.argv = argv;
	c.limit_ms = 20000;
	assert_int_equal(run(&c, &out, NULL, why, sizeof why), 0);
	assert_true(command_ok(&c));	/* it was never blocked */
	assert_true(out.len >= COMMAND_OUTPUT_MAX);
	assert_true(out.len < COMMAND_OUTPUT_MAX + 8192);
	buf_free(&out);
}

static void
test_why(void **state)
{
	static const struct {
		const char *script;
		const char *want;
	} rows[] = {
		{ "echo 'sh: error: invalid partition' >&2; exit 1",
		    "sh: error: invalid partition" },	/* it names itself */
		{ "echo; echo '  second line' >&2; exit 1", "sh: second line" },
		{ "echo only-out; exit 2", "sh: only-out" },
		{ "exit 4", "sh: exit status 4" },
		{ "kill -9 $$", "sh: killed by signal 9" },
		/* control bytes of the output are escaped (msg.h): they
		 * were copied raw into the message, an escape and all */
		{ "printf 'sh: error: \\033[31mred\\033[0m\\n' >&2; exit 1",
		    "sh: error: \\x1b[31mred\\x1b[0m" },
		{ "printf 'bad\\tjob \\033]0;title\\007\\r\\n'; exit 1",
		    "sh: bad\\tjob \\x1b]0;title\\x07\\x0d" },
	};
	char *argv[] = { "sh", "-c", NULL, NULL };
	struct command c = COMMAND_INIT;
	struct buf out = BUF_INIT, err = BUF_INIT;
	char why[300];
	size_t i;

	(void)state;
	c.argv = argv;
	for (i = 0; i < NELEM(rows); i++) {
		argv[2] = (char *)rows[i].script;
		TCHECK(run(&c, &out, &err, why, sizeof why) == 0, "row %zu: %s",
		    i, why);
		command_why(&c, &out, &err, why, sizeof why);
		TCHECK(strcmp(why, rows[i].want) == 0, "row %zu: got \"%s\"",
		    i, why);
	}
	buf_free(&out);
	buf_free(&err);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_output_input_status),
		cmocka_unit_test(test_cwd_and_environment),
		cmocka_unit_test(test_start_failures),
		cmocka_unit_test(test_tick_while_it_runs),
		cmocka_unit_test(test_time_limit_kills_the_group),
		cmocka_unit_test(test_output_is_bounded),
		cmocka_unit_test(test_why),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
