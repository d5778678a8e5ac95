/*
 * journal.c - "spool journal": the event journal, merged by time.
 *
 *	spool journal [-n N] [--task ID] [--worker WID] [-f]
 *
 * Prints the events of every segment of SPOOL/journal/ in time order,
 * one line each, in the journal's own format (spool-layout(5)), so
 * that grep and awk work on the merged history.  --task keeps the
 * events of one task (including checkpoint lines whose range holds
 * it), --worker those of one worker and of the tasks it ran; -n the
 * last N; -f goes on printing events as they are written (about every
 * half second), until interrupted.
 */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ids.h"
#include "journal.h"
#include "msg.h"
#include "units.h"

#define FOLLOW_MS	500
#define LAST_BYTES_MIN	(64u << 10)	/* -n: first read, of each segment's end */
#define LAST_LINE_BYTES	256		/* -n: a line's bytes, as first guessed */

struct jfilter {
	int	has_task;
	uint64_t task;
	const char *worker;
};

static int
id_holds(const char *id, uint64_t want)
{
	const char *dash = strchr(id, '-');
	char a[24];
	uint64_t first, last;

	if (dash == NULL)
		return ids_parse(id, &first) == 0 && first == want;
	snprintf(a, sizeof a, "%.*s", (int)(dash - id), id);
	return ids_parse(a, &first) == 0 && ids_parse(dash + 1, &last) == 0 &&
	    first <= want && want <= last;
}

static int
matches(const struct jevent *e, const struct jfilter *f)
{
	char w[128];

	if (f->has_task && !(strcmp(e->subject, "task") == 0 &&
	    id_holds(e->id, f->task)))
		return 0;
	if (f->worker && !(strcmp(e->subject, "worker") == 0 &&
	    strcmp(e->id, f->worker) == 0) && !(jev_get(e, "worker", w,
	    sizeof w) && strcmp(w, f->worker) == 0))
		return 0;
	return 1;
}

/*
 * What was appended to the journal since the last read (at first, at
 * most bytes of each segment's end: jtail_read).  A listing or a file
 * that could not be read is reported (once while it lasts) and read
 * again the next time; unread is set.
 */
static void
read_journal(struct jtail *t, struct jlog *log, size_t bytes, int *unread)
{
	if (jtail_read(cli_sp.fd[SD_JOURNAL], t, log, bytes) == 0) {
		msg_clear("journal-read");
		return;
	}
	*unread = 1;
	msg_once("journal-read", "read: %s/journal%s: %m", cli_sp.shown,
	    jtail_unread(t));
}

/*
 * The first of the last LAST events of log that match and are newer
 * than cut: its index; *shown: how many there are.
 */
static size_t
last_from(const struct jlog *log, uint64_t last, const struct jfilter *f,
    double cut, uint64_t *shown)
{
	size_t i;

	for (i = log->n, *shown = 0; i > 0 && *shown < last &&
	    log->ev[i - 1].t > cut; i--)
		if (matches(&log->ev[i - 1], f))
			(*shown)++;
	return i;
}

/*
 * -n LAST: read the end of each segment only, enough for the LAST
 * events that match among those newer than anything left unread
 * (jtail_cut); until there are that many, read again four times as much
 * (in the end, everything).  The first of them to print: its index in
 * log.
 */
static size_t
read_last(struct jtail *t, struct jlog *log, uint64_t last,
    const struct jfilter *f, int *unread)
{
	size_t bytes = LAST_BYTES_MIN, i;
	uint64_t shown;
	double cut;

	if (last > LAST_BYTES_MIN / LAST_LINE_BYTES)
		bytes = last < SIZE_MAX / LAST_LINE_BYTES ?
		    (size_t)last * LAST_LINE_BYTES : SIZE_MAX;
	for (;;) {
		read_journal(t, log, bytes, unread);
		cut = jtail_cut(t);
		i = last_from(log, last, f, cut, &shown);
		if (shown == last || cut == -HUGE_VAL)
			return i;
		jlog_free(log);
		jtail_free(t);
		bytes = bytes < SIZE_MAX / 4 ? bytes * 4 : SIZE_MAX;
	}
}

static void
print_event(const struct jevent *e)
{
	printf("%.3f %s %s %s %s%s%s\n", e->t, e->host, e->subject, e->id,
	    e->event, *e->kv ? " " : "", e->kv);
}

/* The events of log from the index from on that match. */
static void
print_from(const struct jlog *log, size_t from, const struct jfilter *f)
{
	size_t i;

	for (i = from; i < log->n; i++)
		if (matches(&log->ev[i], f))
			print_event(&log->ev[i]);
}

int
cmd_journal(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "task", required_argument, NULL, 'T' },
		{ "worker", required_argument, NULL, 'w' },
		{ "follow", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct jfilter f = { 0, 0, NULL };
	struct jtail t = JTAIL_INIT;
	struct jlog log = JLOG_INIT, late = JLOG_INIT;
	uint64_t last = 0, v, shown;
	const char *why;
	size_t from;
	int c, follow = 0, has_last = 0, unread = 0;

	while ((c = getopt_long(argc, argv, "+n:T:w:fh", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (units_parse_uint(optarg, UINT64_MAX / 2, &last,
			    &why) < 0)
				msg_fatal_status(EXIT_USAGE, "-n %s: %s",
				    journal_q(optarg), why);
			has_last = 1;
			break;
		case 'T':
			if (ids_parse(optarg, &v) < 0)
				msg_fatal_status(EXIT_USAGE, "--task %s: not a "
				    "task ID", journal_q(optarg));
			f.has_task = 1;
			f.task = v;
			break;
		case 'w':
			f.worker = optarg;
			break;
		case 'f':
			follow = 1;
			break;
		case 'h':
			printf("usage: spool journal [-n N] [--task ID] "
			    "[--worker WID] [-f]\n");
			return 0;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind != argc)
		msg_fatal_status(EXIT_USAGE, "usage: spool journal [-n N] "
		    "[--task ID] [--worker WID] [-f]");
	cli_open();
	for (;;) {
		/* -n: the last N that match, of the first read only */
		from = 0;
		if (has_last) {
			from = read_last(&t, &log, last, &f, &unread);
			has_last = 0;
			/* a segment whose first read failed: its end is
			 * read later, and only its last N printed */
			t.late = &late;
		} else
			read_journal(&t, &log, SIZE_MAX, &unread);
		print_from(&late, last_from(&late, last, &f, -HUGE_VAL,
		    &shown), &f);
		print_from(&log, from, &f);
		jlog_free(&late);
		jlog_free(&log);
		if (fflush(stdout) == EOF)
			msg_fatal("write: stdout: %m");
		if (!follow)
			break;
		(void)poll(NULL, 0, FOLLOW_MS);
	}
	jtail_free(&t);
	/* what it printed may lack events: not a clean end */
	return unread ? EXIT_TEMPFAIL : 0;
}
