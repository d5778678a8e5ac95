/*
 * test_journal.c - journal.c: the line format (a table of lines and
 * what a reader makes of them), values that need quoting, the round
 * trip writer -> segment -> reader, the writer's flush policy, a torn
 * last line, a forked child that must not write its parent's events,
 * several processes appending at once (no torn, lost, duplicated or
 * reordered lines), following segments as they grow (jtail) and
 * where a first read of their ends leaves events unread (jtail_cut), and
 * rotation (which segments are closed, which are removed).
 */
#include <errno.h>
#include <math.h>
#include <sys/wait.h>

#include "fsop.h"
#include "hostinfo.h"
#include "journal.h"
#include "msg.h"
#include "unit.h"

static struct unit_spool *
spool_of(void **state)
{
	return *state;
}

static int
jdir(struct unit_spool *u)
{
	return u->sp.fd[SD_JOURNAL];
}

static void
load(struct unit_spool *u, struct jlog *log)
{
	memset(log, 0, sizeof *log);
	assert_int_equal(journal_load(jdir(u), log), 0);
}

static size_t
count_files(struct unit_spool *u)
{
	struct jseg_info *v;
	ssize_t n = journal_segments(jdir(u), now_unix(), &v);

	assert_true(n >= 0);
	free(v);
	return (size_t)n;
}

/* ---- the line format ---- */

static void
test_parse_table(void **state)
{
	static const struct {
		const char *line;
		int	ok;
		double	t;
		const char *host, *subject, *id, *event, *kv;
	} rows[] = {
		{ "1795309223.158 node7 task 42 started att=1 worker=w-1", 1,
		    1795309223.158, "node7", "task", "42", "started",
		    "att=1 worker=w-1" },
		{ "1.000 h spoold - start", 1, 1.0, "h", "spoold", "-", "start",
		    "" },
		{ "12 h worker node1-abc lost why=\"no beat for 30 s\"", 1, 12,
		    "h", "worker", "node1-abc", "lost",
		    "why=\"no beat for 30 s\"" },
		{ "1.5 h task 1-4096 state state=queued", 1, 1.5, "h", "task",
		    "1-4096", "state", "state=queued" },
		{ "", 0, 0, NULL, NULL, NULL, NULL, NULL },
		{ "1.0 h task 4", 0, 0, NULL, NULL, NULL, NULL, NULL },
		{ "x.0 h task 4 placed", 0, 0, NULL, NULL, NULL, NULL, NULL },
		{ "-1 h task 4 placed", 0, 0, NULL, NULL, NULL, NULL, NULL },
		{ "1.0  h task 4 placed", 0, 0, NULL, NULL, NULL, NULL, NULL },
		{ "1.0 h task 4 pla\"ced", 0, 0, NULL, NULL, NULL, NULL, NULL },
	};
	struct jevent e;
	size_t i;
	int nfail = 0;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		char *copy = xstrdup(rows[i].line);
		int rc = journal_parse_line(copy, &e);

		TEXPECT(nfail, (rc == 0) == rows[i].ok, "row %zu: rc %d", i, rc);
		if (rc == 0 && rows[i].ok) {
			TEXPECT(nfail, e.t == rows[i].t, "row %zu: t %f", i, e.t);
			TEXPECT(nfail, strcmp(e.host, rows[i].host) == 0 &&
			    strcmp(e.subject, rows[i].subject) == 0 &&
			    strcmp(e.id, rows[i].id) == 0 &&
			    strcmp(e.event, rows[i].event) == 0 &&
			    strcmp(e.kv, rows[i].kv) == 0,
			    "row %zu: %s|%s|%s|%s|%s", i, e.host, e.subject,
			    e.id, e.event, e.kv);
		}
		if (rc < 0)	/* a refused line is left as it was */
			TEXPECT(nfail, strcmp(copy, rows[i].line) == 0,
			    "row %zu changed: %s", i, copy);
		free(copy);
	}
	assert_int_equal(nfail, 0);
}

static void
test_values_quote_and_decode(void **state)
{
	static const struct {
		const char *in;
		const char *encoded;	/* NULL: just round-trip */
	} rows[] = {
		{ "node7-3fa2c1", "node7-3fa2c1" },
		{ "exit", "exit" },
		{ "", "\"\"" },
		{ "exited with status 1", "\"exited with status 1\"" },
		{ "say \"hi\"\\now", "\"say \\\"hi\\\"\\\\now\"" },
		{ "two\nlines\tand\x01", "\"two\\nlines\\tand\\x01\"" },
		{ "key=value", "\"key=value\"" },
		{ "caf\xc3\xa9", NULL },
	};
	char line[JOURNAL_LINE_MAX], out[JOURNAL_VALUE_MAX + 1];
	struct jevent e;
	size_t i;
	int nfail = 0;

	(void)state;
	for (i = 0; i < NELEM(rows); i++) {
		const char *q = journal_q(rows[i].in);

		if (rows[i].encoded)
			TEXPECT(nfail, strcmp(q, rows[i].encoded) == 0,
			    "row %zu: %s", i, q);
		snprintf(line, sizeof line, "1.0 h task 1 finished a=1 msg=%s "
		    "z=2", q);
		assert_int_equal(journal_parse_line(line, &e), 0);
		TEXPECT(nfail, jev_get(&e, "msg", out, sizeof out) == 1 &&
		    strcmp(out, rows[i].in) == 0, "row %zu: decoded %s", i,
		    out);
		TEXPECT(nfail, jev_get(&e, "z", out, sizeof out) == 1 &&
		    strcmp(out, "2") == 0, "row %zu: field after it: %s", i,
		    out);
	}
	assert_int_equal(nfail, 0);
}

static void
test_long_values_are_cut(void **state)
{
	char big[5000], out[JOURNAL_VALUE_MAX + 1];
	char line[JOURNAL_LINE_MAX + 64];
	struct jevent e;
	const char *q;

	(void)state;
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = 0;
	big[10] = ' ';
	q = journal_q(big);
	assert_true(strlen(q) <= JOURNAL_VALUE_MAX);
	snprintf(line, sizeof line, "1.0 h task 1 failed msg=%s", q);
	assert_int_equal(journal_parse_line(line, &e), 0);
	assert_int_equal(jev_get(&e, "msg", out, sizeof out), 1);
	assert_int_equal(strncmp(out, big, strlen(out)), 0);
	assert_true(strlen(out) > JOURNAL_VALUE_MAX / 2);
	/* control bytes quadruple: still within the bound */
	memset(big, '\001', 3000);
	big[3000] = 0;
	assert_true(strlen(journal_q(big)) <= JOURNAL_VALUE_MAX);
}

/*
 * msg_q, for messages: always quoted, escaped as journal_q, cut at
 * MSG_Q_MAX with "..." after the quote (a control byte is not split).
 */
static void
test_msg_q(void **state)
{
	char big[400];

	(void)state;
	assert_string_equal(msg_q("n-b/c"), "\"n-b/c\"");
	assert_string_equal(msg_q("b\nc\x1b[2J\"\\"),
	    "\"b\\nc\\x1b[2J\\\"\\\\\"");
	assert_string_equal(msg_q(NULL), "\"\"");
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = 0;
	assert_int_equal(strlen(msg_q(big)), MSG_Q_MAX + 3);
	assert_string_equal(msg_q(big) + MSG_Q_MAX - 1, "\"...");
	memset(big, '\001', sizeof big - 1);
	assert_int_equal(strlen(msg_q(big)), 2 + 4 * ((MSG_Q_MAX - 2) / 4) +
	    3);
}

static void
test_numbers(void **state)
{
	char line[] = "2.5 h task 7 finished wall=1.250 exit=3 name=x1 "
	    "msg=\"1 2\"";
	struct jevent e;
	double d;

	(void)state;
	assert_int_equal(journal_parse_line(line, &e), 0);
	assert_int_equal(jev_num(&e, "wall", &d), 1);
	assert_true(d == 1.25);
	assert_int_equal(jev_num(&e, "exit", &d), 1);
	assert_true(d == 3);
	assert_int_equal(jev_num(&e, "name", &d), 0);
	assert_int_equal(jev_num(&e, "msg", &d), 0);
	assert_int_equal(jev_num(&e, "nothing", &d), 0);
	/* a key is matched whole, not as the end of another */
	assert_int_equal(jev_num(&e, "all", &d), 0);
}

/* ---- writing ---- */

static void
test_round_trip(void **state)
{
	struct unit_spool *u = spool_of(state);
	struct result r;
	struct jlog log;
	struct buf raw = BUF_INIT;
	char v[256], want[512];
	size_t n;

	assert_int_equal(journal_open(&u->sp, "spoold"), 0);
	assert_true(journal_is_open());
	journal_task(42, "placed", "att=%u worker=%s", 1u, "w-1");
	journal_worker("w-1", "lost", "why=%s", journal_q("no beat for 2 s"));
	journal_job("123.sched", "submitted", "kind=default");
	journal_event("spoold", NULL, "checkpoint", NULL);
	result_init(&r);
	r.id = 42;
	r.attempt = 1;
	r.state = RS_FAILED;
	r.reason = RR_EXIT;
	r.exit_code = 3;
	r.start = 100.0;
	r.end = 101.5;
	r.maxrss = 1 << 20;
	r.worker = xstrdup("w-1");
	r.message = xstrdup("exited with status 3");
	journal_result("final", &r);
	result_free(&r);
	/* nothing is written before a flush: no file yet */
	assert_int_equal(count_files(u), 0);
	assert_string_equal(journal_segment_name(), "");
	journal_flush(1);
	assert_int_equal(count_files(u), 1);
	assert_true(strstr(journal_segment_name(), ".spoold.") != NULL);
	/* the first line as written: seconds, 3 decimals, then the words */
	assert_int_equal(fsop_read_file(jdir(u), journal_segment_name(),
	    1 << 20, &raw, NULL), 0);
	snprintf(want, sizeof want, " %s task 42 placed att=1 worker=w-1\n",
	    host_name());
	n = strspn(raw.p, "0123456789");
	assert_true(n >= 10 && raw.p[n] == '.');
	assert_int_equal(strspn(raw.p + n + 1, "0123456789"), 3);
	assert_memory_equal(raw.p + n + 4, want, strlen(want));
	buf_free(&raw);
	journal_close();
	assert_false(journal_is_open());
	journal_task(43, "placed", NULL);	/* dropped after close */

	load(u, &log);
	assert_int_equal(log.n, 5);
	assert_int_equal(log.bad, 0);
	assert_int_equal(log.torn, 0);
	assert_string_equal(log.ev[0].subject, "task");
	assert_string_equal(log.ev[0].id, "42");
	assert_string_equal(log.ev[0].event, "placed");
	assert_string_equal(log.ev[0].host, host_name());
	assert_true(log.ev[0].t > 1.6e9 && log.ev[0].t <= now_unix());
	assert_int_equal(jev_get(&log.ev[1], "why", v, sizeof v), 1);
	assert_string_equal(v, "no beat for 2 s");
	assert_string_equal(log.ev[2].subject, "job");
	assert_string_equal(log.ev[2].id, "123.sched");
	assert_string_equal(log.ev[3].id, "-");
	assert_string_equal(log.ev[4].event, "final");
	assert_int_equal(jev_get(&log.ev[4], "state", v, sizeof v), 1);
	assert_string_equal(v, "failed");
	assert_int_equal(jev_get(&log.ev[4], "msg", v, sizeof v), 1);
	assert_string_equal(v, "exited with status 3");
	assert_int_equal(jev_get(&log.ev[4], "wall", v, sizeof v), 1);
	assert_string_equal(v, "1.500");
	assert_int_equal(jev_get(&log.ev[4], "maxrss", v, sizeof v), 1);
	assert_string_equal(v, "1048576");
	jlog_free(&log);
}

/* Every field of a result's line, in its order and spelling. */
static void
test_result_line_has_every_field(void **state)
{
	struct unit_spool *u = spool_of(state);
	struct result r;
	struct jlog log;

	assert_int_equal(journal_open(&u->sp, "ckworker"), 0);
	result_init(&r);
	r.id = 7;
	r.attempt = 2;
	r.state = RS_FAILED;
	r.reason = RR_EXIT;
	r.exit_code = 3;
	r.signal = 9;
	r.start = 100.0;
	r.end = 101.5;
	r.utime = 0.25;
	r.stime = 0.125;
	r.maxrss = 1 << 20;
	r.memory_peak = 2 << 20;
	r.cores = 4;
	r.gpus = 1;
	r.worker = xstrdup("w-1");
	r.host = xstrdup("node 7");
	r.message = xstrdup("exited with status 3");
	journal_result("finished", &r);
	r.exit_code = -1;	/* did not exit: no exit=, and nothing else */
	r.signal = 0;
	r.start = 0;
	r.maxrss = r.memory_peak = 0;
	r.cores = r.gpus = 0;
	free(r.worker);
	free(r.host);
	free(r.message);
	r.worker = r.host = r.message = NULL;
	journal_result("final", &r);
	result_free(&r);
	journal_close();
	load(u, &log);
	assert_int_equal(log.n, 2);
	assert_int_equal(log.bad, 0);
	assert_string_equal(log.ev[0].kv, "att=2 state=failed reason=exit "
	    "worker=w-1 host=\"node 7\" exit=3 signal=9 start=100.000 "
	    "end=101.500 wall=1.500 utime=0.250 stime=0.125 maxrss=1048576 "
	    "peak=2097152 cores=4 gpus=1 msg=\"exited with status 3\"");
	assert_string_equal(log.ev[1].kv, "att=2 state=failed reason=exit");
	jlog_free(&log);
}

static void
test_overlong_line_is_cut(void **state)
{
	struct unit_spool *u = spool_of(state);
	char big[3 * JOURNAL_LINE_MAX];
	struct jlog log;
	char v[32];

	memset(big, 'b', sizeof big - 1);
	big[sizeof big - 1] = 0;
	assert_int_equal(journal_open(&u->sp, "spoold"), 0);
	journal_task(9, "placed", "a=%s b=%s z=1", journal_q("x y"), big);
	journal_close();
	load(u, &log);
	assert_int_equal(log.n, 1);
	assert_int_equal(log.bad, 0);
	assert_true(log.bytes <= JOURNAL_LINE_MAX);
	assert_int_equal(jev_get(&log.ev[0], "a", v, sizeof v), 1);
	assert_string_equal(v, "x y");
	assert_int_equal(jev_get(&log.ev[0], "cut", v, sizeof v), 1);
	assert_string_equal(v, "1");
	assert_int_equal(jev_get(&log.ev[0], "z", v, sizeof v), 0);
	jlog_free(&log);
}

static void
test_flush_is_paced(void **state)
{
	struct unit_spool *u = spool_of(state);
	struct jlog log;
	uint64_t writes;

	assert_int_equal(journal_open(&u->sp, "ckworker"), 0);
	journal_task(1, "started", NULL);
	journal_flush(1);
	writes = fsop_count[FSOP_WRITE];
	/* within JOURNAL_FLUSH_MS of a write, a flush waits */
	journal_task(1, "finished", NULL);
	journal_flush(0);
	journal_flush(0);
	assert_true(fsop_count[FSOP_WRITE] == writes ||
	    /* a very slow machine: the interval passed meanwhile */
	    fsop_count[FSOP_WRITE] == writes + 1);
	journal_close();	/* and close writes the rest */
	load(u, &log);
	assert_int_equal(log.n, 2);
	jlog_free(&log);
}

static void
test_torn_last_line_is_skipped(void **state)
{
	struct unit_spool *u = spool_of(state);
	static const char text[] =
	    "1.000 h task 1 placed att=1\n"
	    "2.000 h task 1 started att=1\n"
	    "garbage\n"
	    "3.000 h task 1 finis";
	char *path = xasprintf("%s/journal/0000000000001.ckworker.h.1."
	    "00000000", u->path);
	struct jlog log;

	assert_int_equal(unit_write_file(path, text, sizeof text - 1), 0);
	free(path);
	load(u, &log);
	assert_int_equal(log.n, 2);
	assert_int_equal(log.torn, 1);
	assert_int_equal(log.bad, 1);
	assert_int_equal(log.segments, 1);
	jlog_free(&log);
}

static void
test_forked_child_does_not_write(void **state)
{
	struct unit_spool *u = spool_of(state);
	struct jlog log;
	int status;
	pid_t pid;

	assert_int_equal(journal_open(&u->sp, "ckworker"), 0);
	journal_task(5, "started", NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		journal_task(6, "started", NULL);	/* ignored */
		exit(0);	/* atexit: must not write the parent's line */
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	journal_close();
	load(u, &log);
	assert_int_equal(log.n, 1);
	assert_string_equal(log.ev[0].id, "5");
	jlog_free(&log);
}

/* ---- several writers at once ---- */

#define WRITERS	6
#define EVENTS	4000

static void
writer_child(struct unit_spool *u, int k)
{
	int i;

	/* a small journal: segments of 64 KiB, so each writer rotates */
	u->sp.cfg.journal_bytes = 1u << 20;
	if (journal_open(&u->sp, "ckworker") < 0)
		_exit(1);
	for (i = 0; i < EVENTS; i++) {
		journal_task((uint64_t)i + 1, "finished", "writer=%d seq=%d "
		    "msg=%s", k, i, journal_q("a message with spaces, long "
		    "enough to make the lines of different writers interleave "
		    "if they could"));
		if (i % 7 == 0)
			journal_flush(i % 21 == 0);
	}
	exit(0);	/* the rest is written at exit */
}

static void
test_concurrent_writers(void **state)
{
	struct unit_spool *u = spool_of(state);
	int next[WRITERS] = { 0 }, status, k, nfail = 0;
	pid_t pids[WRITERS];
	struct jlog log;
	size_t i;
	char v[32];

	for (k = 0; k < WRITERS; k++) {
		pids[k] = fork();
		assert_true(pids[k] >= 0);
		if (pids[k] == 0)
			writer_child(u, k);
	}
	for (k = 0; k < WRITERS; k++) {
		assert_int_equal(waitpid(pids[k], &status, 0), pids[k]);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	load(u, &log);
	assert_int_equal(log.bad, 0);
	assert_int_equal(log.torn, 0);
	assert_int_equal(log.n, WRITERS * EVENTS);
	/* several segments per writer, one writer per segment */
	assert_true(log.segments > WRITERS);
	for (i = 0; i < log.n; i++) {
		double w, s;

		if (!jev_num(&log.ev[i], "writer", &w) ||
		    !jev_num(&log.ev[i], "seq", &s) || w < 0 || w >= WRITERS) {
			TEXPECT(nfail, 0, "line %zu: %s", i, log.ev[i].kv);
			continue;
		}
		/* in time order, each writer's lines come in its order */
		TEXPECT(nfail, (int)s == next[(int)w], "writer %d: seq %d "
		    "after %d", (int)w, (int)s, next[(int)w] - 1);
		next[(int)w] = (int)s + 1;
		if (jev_get(&log.ev[i], "msg", v, sizeof v) != 1)
			TEXPECT(nfail, 0, "line %zu has no msg", i);
	}
	for (k = 0; k < WRITERS; k++)
		TEXPECT(nfail, next[k] == EVENTS, "writer %d: %d events", k,
		    next[k]);
	assert_int_equal(nfail, 0);
	jlog_free(&log);
}

/* ---- following ---- */

static void
append(struct unit_spool *u, const char *name, const char *text)
{
	char *path = xasprintf("%s/journal/%s", u->path, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	free(path);
}

static void
test_tail_reads_only_new_complete_lines(void **state)
{
	struct unit_spool *u = spool_of(state);
	const char *a = "0000000000001.spoold.h.1.0000000a";
	const char *b = "0000000000002.ckworker.h.2.0000000b";
	struct jtail t = JTAIL_INIT;
	struct jlog log = JLOG_INIT;

	append(u, a, "1.000 h task 1 placed\n2.000 h task 2 placed\n");
	/* first read: only the last 30 bytes, whole lines from there */
	assert_int_equal(jtail_read(jdir(u), &t, &log, 30), 0);
	assert_int_equal(log.n, 1);
	assert_string_equal(log.ev[0].id, "2");
	jlog_free(&log);
	append(u, a, "3.000 h task 3 placed\n4.000 h task 4 pl");
	append(u, b, "2.500 h task 1 started\n");
	assert_int_equal(jtail_read(jdir(u), &t, &log, 30), 0);
	assert_int_equal(log.n, 2);
	assert_string_equal(log.ev[0].id, "1");	/* sorted by time */
	assert_string_equal(log.ev[1].id, "3");
	jlog_free(&log);
	append(u, a, "aced\n");
	assert_int_equal(jtail_read(jdir(u), &t, &log, 30), 0);
	assert_int_equal(log.n, 1);
	assert_string_equal(log.ev[0].id, "4");
	assert_string_equal(log.ev[0].event, "placed");
	jlog_free(&log);
	assert_int_equal(jtail_read(jdir(u), &t, &log, 30), 0);
	assert_int_equal(log.n, 0);
	jlog_free(&log);
	jtail_free(&t);
}

/*
 * A pass whose listing fails changes nothing: the next one reads only
 * what was appended since the last pass that listed (a failed listing
 * used to forget every segment, and the next pass read them again from
 * their start).
 */
static void
test_tail_listing_failure_forgets_nothing(void **state)
{
	struct unit_spool *u = spool_of(state);
	const char *a = "0000000000001.spoold.h.1.0000000a";
	struct jtail t = JTAIL_INIT;
	struct jlog log = JLOG_INIT;

	append(u, a, "1.000 h task 1 placed\n");
	assert_int_equal(jtail_read(jdir(u), &t, &log, 1000), 0);
	assert_int_equal(log.n, 1);
	jlog_free(&log);
	assert_int_equal(jtail_read(-1, &t, &log, 1000), -1);
	assert_int_equal(errno, EBADF);
	assert_int_equal(log.n, 0);
	append(u, a, "2.000 h task 2 placed\n");
	assert_int_equal(jtail_read(jdir(u), &t, &log, 1000), 0);
	assert_int_equal(log.n, 1);
	assert_string_equal(log.ev[0].id, "2");
	jlog_free(&log);
	jtail_free(&t);
}

/*
 * jtail_cut: the latest first event of the segments read only in part
 * (a first read of their end); +HUGE_VAL when such a part held no whole
 * line; -HUGE_VAL when every segment was read whole.
 */
static void
test_tail_cut_is_the_latest_start_of_a_partial_read(void **state)
{
	struct unit_spool *u = spool_of(state);
	const char *a = "0000000000001.spoold.h.1.0000000a";
	const char *b = "0000000000002.ckworker.h.2.0000000b";
	const char *c = "0000000000003.ckworker.h.3.0000000c";
	struct jtail t = JTAIL_INIT;
	struct jlog log = JLOG_INIT;

	append(u, a, "1.000 h task 1 placed\n2.000 h task 2 placed\n");
	append(u, b, "1.500 h task 1 started\n");
	/* all whole */
	assert_int_equal(jtail_read(jdir(u), &t, &log, 1000), 0);
	assert_int_equal(log.n, 3);
	assert_true(jtail_cut(&t) == -HUGE_VAL);
	jlog_free(&log);
	jtail_free(&t);
	/* a read from its second line on, b whole */
	assert_int_equal(jtail_read(jdir(u), &t, &log, 30), 0);
	assert_int_equal(log.n, 2);
	assert_true(jtail_cut(&t) == 2.0);
	jlog_free(&log);
	/* later reads add what was appended; the cut stays */
	append(u, a, "3.000 h task 3 placed\n");
	assert_int_equal(jtail_read(jdir(u), &t, &log, 30), 0);
	assert_int_equal(log.n, 1);
	assert_true(jtail_cut(&t) == 2.0);
	jlog_free(&log);
	jtail_free(&t);
	/* c's last 30 bytes hold no whole line: nothing of it is known */
	append(u, c, "0.100 h task 5 started with=a-long-line-of-values\n");
	assert_int_equal(jtail_read(jdir(u), &t, &log, 30), 0);
	assert_true(jtail_cut(&t) == HUGE_VAL);
	jlog_free(&log);
	jtail_free(&t);
}

/* Set the mtime of journal/NAME ("." for journal/) ago seconds back. */
static void
age(struct unit_spool *u, const char *name, double ago)
{
	struct timespec ts[2];
	double t = now_unix() - ago;

	ts[0].tv_sec = ts[1].tv_sec = (time_t)t;
	ts[0].tv_nsec = ts[1].tv_nsec = 0;
	assert_int_equal(utimensat(jdir(u), name, ts, 0), 0);
}

/* The stats and listings of one pass, which must read want events. */
static void
pass(struct unit_spool *u, struct jtail *t, size_t want,
    unsigned long stats, unsigned long lists)
{
	unsigned long s0 = fsop_count[FSOP_STAT], l0 = fsop_count[FSOP_LIST];
	struct jlog log = JLOG_INIT;

	assert_int_equal(jtail_read(jdir(u), t, &log, 1000), 0);
	assert_int_equal(log.n, want);
	assert_int_equal(fsop_count[FSOP_STAT] - s0, stats);
	assert_int_equal(fsop_count[FSOP_LIST] - l0, lists);
	jlog_free(&log);
}

/*
 * A pass costs what may have changed: a stat of the directory and of
 * each writer's newest segment written in the last JOURNAL_IDLE_S, a
 * listing only when the directory changed; a writer's older segment is
 * read once more after its successor is listed, and then no more until
 * the full pass every JTAIL_FULL_EVERY passes, which reads whatever was
 * appended against the rules.  (Every pass stat'd every segment: 10,000
 * stats a pass at 10,000 segments.)
 */
static void
test_tail_pass_costs_what_changed(void **state)
{
	struct unit_spool *u = spool_of(state);
	const char *w1 = "0000000000001.ckworker.h.2.0000000b";
	const char *w2 = "0000000000002.ckworker.h.2.0000000b";
	const char *w3 = "0000000000003.ckworker.h.2.0000000b";
	const char *idle = "0000000000001.ckworker.h.3.0000000c";
	const char *live = "0000000000001.spoold.h.1.0000000a";
	struct jtail t = JTAIL_INIT;
	unsigned i;

	append(u, w1, "1.000 h task 1 started\n");
	append(u, w2, "2.000 h task 2 started\n");
	append(u, idle, "1.000 h task 3 started\n");
	append(u, live, "1.000 h task 1 placed\n");
	age(u, idle, JOURNAL_IDLE_S + 60);
	age(u, ".", 60);
	/* the first pass: everything (the directory and 4 segments) */
	pass(u, &t, 4, 5, 1);
	/* then the newest two of writers still writing, no listing */
	pass(u, &t, 0, 3, 0);
	append(u, live, "3.000 h task 2 placed\n");
	pass(u, &t, 1, 3, 0);
	/* h.2 begins w3 after its last line to w2: both are read */
	append(u, w2, "4.000 h task 2 finished\n");
	append(u, w3, "5.000 h task 4 started\n");
	pass(u, &t, 2, 4, 1);
	age(u, ".", 60);
	pass(u, &t, 0, 3, 1);	/* (listed: the directory's mtime changed) */
	pass(u, &t, 0, 3, 0);
	/* appended against the rules: seen by the next full pass */
	append(u, w1, "6.000 h task 1 finished\n");
	append(u, idle, "6.000 h task 3 finished\n");
	age(u, idle, JOURNAL_IDLE_S + 60);
	for (i = (t.passes + 1) % JTAIL_FULL_EVERY; i != 0;
	    i = (i + 1) % JTAIL_FULL_EVERY)
		pass(u, &t, 0, 3, 0);
	pass(u, &t, 2, 6, 1);
	pass(u, &t, 0, 3, 0);
	jtail_free(&t);
}

static const char *op_fails;	/* a segment whose fail_kind fails: EIO */
static enum fsop_kind fail_kind;

static int
fail_op(enum fsop_kind kind, const char *name)
{
	return kind == fail_kind && op_fails &&
	    strcmp(name, op_fails) == 0 ? EIO : 0;
}

/*
 * A segment whose stat failed (EIO, ESTALE on NFS) is not taken for
 * idle: the next pass tries again and reads it (it was taken for a
 * segment last written in 1970, closed until the next full pass).  The
 * pass says so, as for a read that fails: -1, the segment named by
 * jtail_unread (it returned 0, the failure passed over in silence).
 */
static void
test_tail_failed_stat_is_tried_again(void **state)
{
	struct unit_spool *u = spool_of(state);
	const char *a = "0000000000001.spoold.h.1.0000000a";
	struct jtail t = JTAIL_INIT;
	struct jlog log = JLOG_INIT;
	int rc, e;

	append(u, a, "1.000 h task 1 placed\n");
	op_fails = a;
	fail_kind = FSOP_STAT;
	fsop_fault_hook = fail_op;
	errno = 0;
	rc = jtail_read(jdir(u), &t, &log, 1000);
	e = errno;
	fsop_fault_hook = NULL;
	assert_int_equal(rc, -1);
	assert_int_equal(e, EIO);
	assert_string_equal(jtail_unread(&t),
	    "/0000000000001.spoold.h.1.0000000a");
	assert_int_equal(log.n, 0);
	jlog_free(&log);
	assert_int_equal(jtail_read(jdir(u), &t, &log, 1000), 0);
	assert_int_equal(log.n, 1);
	assert_string_equal(jtail_unread(&t), "");
	jlog_free(&log);
	jtail_free(&t);
}

/*
 * A segment whose first read, of its end only, failed (its stat or its
 * open) is read the next pass as the first would have: its end, from
 * the first whole line there, not whole (spool journal -n 5 -f and top
 * printed a whole segment's old events after a passing failure), nor
 * from a line's middle.  Those events go to t->late where it is set
 * (spool journal -n prints the last N of them); what is appended later
 * goes to the log.  A segment not read at all is not in jtail_cut.
 */
static void
test_tail_failed_first_read_reads_the_end_again(void **state)
{
	struct unit_spool *u = spool_of(state);
	const char *a = "0000000000001.spoold.h.1.0000000a";
	const enum fsop_kind kinds[] = { FSOP_STAT, FSOP_OPEN };
	struct jlog log = JLOG_INIT, late = JLOG_INIT;
	struct jlog *got;
	struct jtail t = JTAIL_INIT;
	size_t k;
	int rc, e;

	/* 22 bytes a line: the last 30 bytes are the end of task 2's */
	append(u, a, "1.000 h task 1 placed\n2.000 h task 2 placed\n"
	    "3.000 h task 3 placed\n");
	for (k = 0; k < 2; k++) {
		op_fails = a;
		fail_kind = kinds[k];
		fsop_fault_hook = fail_op;
		rc = jtail_read(jdir(u), &t, &log, 30);
		e = errno;
		fsop_fault_hook = NULL;
		assert_int_equal(rc, -1);
		assert_int_equal(e, EIO);
		assert_int_equal(log.n, 0);
		assert_true(jtail_cut(&t) == -HUGE_VAL);
		/* the next pass, as spool journal's: SIZE_MAX; late: only
		 * in the second round */
		t.late = k ? &late : NULL;
		got = k ? &late : &log;
		assert_int_equal(jtail_read(jdir(u), &t, &log, SIZE_MAX), 0);
		assert_int_equal(got->n, 1);
		assert_string_equal(got->ev[0].id, "3");
		assert_int_equal(log.bad + late.bad, 0);
		assert_int_equal(log.n + late.n, 1);
		jlog_free(&log);
		jlog_free(&late);
		jtail_free(&t);
	}
	/* the pass after: what is appended, whole, in the log */
	t.late = &late;
	assert_int_equal(jtail_read(jdir(u), &t, &log, 30), 0);
	jlog_free(&log);
	append(u, a, "4.000 h task 4 placed\n");
	assert_int_equal(jtail_read(jdir(u), &t, &log, 30), 0);
	assert_int_equal(log.n, 1);
	assert_string_equal(log.ev[0].id, "4");
	assert_int_equal(late.n, 0);
	jlog_free(&log);
	jtail_free(&t);
}

/* ---- rotation ---- */

static void
make_seg(struct unit_spool *u, const char *name, size_t bytes, double age)
{
	char *path = xasprintf("%s/journal/%s", u->path, name);
	char *text = xmalloc(bytes);
	struct timespec ts[2];
	double mt = now_unix() - age;

	memset(text, 'x', bytes);
	text[bytes - 1] = '\n';
	assert_int_equal(unit_write_file(path, text, bytes), 0);
	ts[0].tv_sec = ts[1].tv_sec = (time_t)mt;
	ts[0].tv_nsec = ts[1].tv_nsec = 0;
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
	free(text);
	free(path);
}

static int
exists(struct unit_spool *u, const char *name)
{
	struct stat st;

	return fstatat(jdir(u), name, &st, 0) == 0;
}

static void
test_rotation_removes_oldest_closed(void **state)
{
	struct unit_spool *u = spool_of(state);
	/* writer A: three segments, the newest written just now (open);
	   writer B: one segment, idle for longer than JOURNAL_IDLE_S;
	   writer C: one recent segment (open) */
	static const struct {
		const char *name;
		double	age;
		int	closed;
		int	removed;	/* keep 3000 bytes, before now - 50 */
	} rows[] = {
		{ "1000000000000.spoold.h.1.aaaaaaaa", 500, 1, 1 },
		{ "1000000000001.ckworker.h.2.bbbbbbbb", JOURNAL_IDLE_S + 100, 1,
		    1 },
		{ "1000000000002.spoold.h.1.aaaaaaaa", 100, 1, 1 },
		{ "1000000000003.ckworker.h.3.cccccccc", 10, 0, 0 },
		{ "1000000000004.spoold.h.1.aaaaaaaa", 40, 1, 0 },
		{ "1000000000005.spoold.h.1.aaaaaaaa", 0, 0, 0 },
	};
	struct jseg_info *v;
	size_t i, removed;
	uint64_t left;
	ssize_t n;
	int nfail = 0;

	for (i = 0; i < NELEM(rows); i++)
		make_seg(u, rows[i].name, 1000, rows[i].age);
	make_seg(u, "not-a-segment", 5000, 9999);	/* left alone */
	n = journal_segments(jdir(u), now_unix(), &v);
	assert_int_equal(n, (ssize_t)NELEM(rows));
	for (i = 0; i < NELEM(rows); i++) {
		TEXPECT(nfail, strcmp(v[i].name, rows[i].name) == 0,
		    "order %zu: %s", i, v[i].name);
		TEXPECT(nfail, v[i].closed == rows[i].closed, "%s: closed %d",
		    v[i].name, v[i].closed);
		TEXPECT(nfail, v[i].bytes == 1000, "%s: bytes", v[i].name);
	}
	free(v);
	assert_int_equal(nfail, 0);
	/* keep 3000 bytes; nothing written after now - 50 may go (the
	   segment of 40 s ago is closed, but newer than the checkpoint) */
	assert_int_equal(journal_rotate(jdir(u), 3000, now_unix() - 50,
	    &removed, &left), 0);
	assert_int_equal(removed, 3);
	assert_int_equal(left, 3000);
	for (i = 0; i < NELEM(rows); i++)
		TEXPECT(nfail, exists(u, rows[i].name) == !rows[i].removed,
		    "%s", rows[i].name);
	assert_true(exists(u, "not-a-segment"));
	/* under the bound: nothing more goes */
	assert_int_equal(journal_rotate(jdir(u), 3000, now_unix(), &removed,
	    &left), 0);
	assert_int_equal(removed, 0);
	assert_int_equal(nfail, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_table),
		cmocka_unit_test(test_values_quote_and_decode),
		cmocka_unit_test(test_long_values_are_cut),
		cmocka_unit_test(test_msg_q),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test_setup_teardown(test_round_trip,
		    unit_spool_setup, unit_spool_teardown),
		cmocka_unit_test_setup_teardown(test_result_line_has_every_field,
		    unit_spool_setup, unit_spool_teardown),
		cmocka_unit_test_setup_teardown(test_overlong_line_is_cut,
		    unit_spool_setup, unit_spool_teardown),
		cmocka_unit_test_setup_teardown(test_flush_is_paced,
		    unit_spool_setup, unit_spool_teardown),
		cmocka_unit_test_setup_teardown(test_torn_last_line_is_skipped,
		    unit_spool_setup, unit_spool_teardown),
		cmocka_unit_test_setup_teardown(test_forked_child_does_not_write,
		    unit_spool_setup, unit_spool_teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_writers,
		    unit_spool_setup, unit_spool_teardown),
		cmocka_unit_test_setup_teardown(
		    test_tail_reads_only_new_complete_lines,
		    unit_spool_setup, unit_spool_teardown),
		cmocka_unit_test_setup_teardown(
		    test_tail_listing_failure_forgets_nothing,
		    unit_spool_setup, unit_spool_teardown),
		cmocka_unit_test_setup_teardown(
		    test_tail_pass_costs_what_changed,
		    unit_spool_setup, unit_spool_teardown),
		cmocka_unit_test_setup_teardown(
		    test_tail_failed_stat_is_tried_again,
		    unit_spool_setup, unit_spool_teardown),
		cmocka_unit_test_setup_teardown(
		    test_tail_failed_first_read_reads_the_end_again,
		    unit_spool_setup, unit_spool_teardown),
		cmocka_unit_test_setup_teardown(
		    test_tail_cut_is_the_latest_start_of_a_partial_read,
		    unit_spool_setup, unit_spool_teardown),
		cmocka_unit_test_setup_teardown(
		    test_rotation_removes_oldest_closed,
		    unit_spool_setup, unit_spool_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
