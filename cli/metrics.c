/*
 * metrics.c - "spool metrics": the spool's counts in the Prometheus
 * text format, for node_exporter's textfile collector (or any scraper
 * of such a file).
 *
 *	spool metrics [-o FILE]
 *
 * What "spool status" shows without IDs, from the same files: the
 * lease (is a spoold holding the spool) and spoold's summary
 * (state/summary: the tasks not final by state, the ends since spoold
 * started, the workers and their cores, the rate).  Every metric has
 * the label spool="REAL PATH", so that one collector can take the
 * files of several spools.  With no spoold holding the lease only
 * ckspool_up (0) and the summary's age are written: the counts of a
 * summary nobody updates would be taken for the present.
 *
 * -o FILE writes a temporary file in FILE's directory and renames it
 * onto FILE (mode 0644: the collector runs as another user), so that a
 * scrape never reads half of it; the collector takes only names ending
 * in ".prom", and the temporary name does not.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "fsop.h"
#include "hostinfo.h"
#include "journal.h"
#include "lease.h"
#include "msg.h"

struct metric {
	const char *key;	/* in state/summary */
	const char *name;
	const char *type, *help;	/* the first of its name's rows only */
	const char *state;	/* the label state="...", or NULL */
};

static const struct metric metrics[] = {
	{ "waiting", "ckspool_tasks", "gauge", "Tasks not final, by state "
	    "(unfit: queued tasks no worker or kind can run; placed: on a "
	    "worker, running or about to).", "waiting" },
	{ "queued", "ckspool_tasks", NULL, NULL, "queued" },
	{ "unfit", "ckspool_tasks", NULL, NULL, "unfit" },
	{ "placed", "ckspool_tasks", NULL, NULL, "placed" },
	{ "done", "ckspool_tasks_ended_total", "counter", "Tasks ended since "
	    "spoold started, by final state.", "done" },
	{ "failed", "ckspool_tasks_ended_total", NULL, NULL, "failed" },
	{ "cancelled", "ckspool_tasks_ended_total", NULL, NULL, "cancelled" },
	{ "rejected", "ckspool_tasks_ended_total", NULL, NULL, "rejected" },
	{ "requeued", "ckspool_requeued_total", "counter", "Attempts requeued "
	    "since spoold started (lost workers, hand-backs).", NULL },
	{ "retried", "ckspool_retried_total", "counter", "Failed attempts run "
	    "again for --retries since spoold started.", NULL },
	{ "workers", "ckspool_workers", "gauge", "Workers registered.", NULL },
	{ "cores", "ckspool_cores", "gauge", "Cores of the workers.", NULL },
	{ "busy_cores", "ckspool_busy_cores", "gauge", "Cores given to "
	    "running tasks.", NULL },
	{ "rate", "ckspool_task_rate", "gauge", "Tasks ended per second over "
	    "the last minute.", NULL },
	{ "workers_draining", "ckspool_workers_draining", "gauge", "Workers "
	    "draining (counted in ckspool_workers): no task is placed on "
	    "them, and they leave once idle.", NULL },
	{ "workers_gpus_held", "ckspool_workers_gpus_held", "gauge", "Workers "
	    "some of whose GPUs are kept by processes of ended tasks that "
	    "SIGKILL did not end.", NULL },
	{ "workers_lost", "ckspool_workers_lost_total", "counter", "Workers "
	    "lost since spoold started: their beat stopped or their process "
	    "died, unasked or with tasks to requeue.", NULL },
};

/* s as a label value: backslash, double quote and newline escaped */
static void
put_label(struct buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			buf_putc(b, '\\');
		if (*s == '\n') {
			buf_puts(b, "\\n");
			continue;
		}
		buf_putc(b, *s);
	}
}

static void
put_head(struct buf *b, const char *name, const char *type,
    const char *help)
{
	buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void
put_value(struct buf *b, const char *name, const char *spool,
    const char *state, const char *value)
{
	buf_printf(b, "%s{spool=\"", name);
	put_label(b, spool);
	if (state)
		buf_printf(b, "\",state=\"%s", state);
	buf_printf(b, "\"} %s\n", value);
}

/* The exposition of the spool whose real path is spool, into b. */
static void
expose(struct buf *b, const char *spool)
{
	const struct metric *group = NULL, *said = NULL;
	struct buf sum = BUF_INIT;
	struct owner_info o;
	uint64_t beat;
	char *v, *end, age[32];
	double t;
	size_t i;
	int held, have;

	held = lease_holder(&cli_sp, &o, &beat) > 0;
	have = cli_read_summary(&sum) == 0;
	if (!have && errno != ENOENT)
		msg_warn("read: %s/state/summary: %m", cli_sp.shown);
	put_head(b, "ckspool_up", "gauge", "1 if a spoold holds the spool's "
	    "lease, else 0.");
	put_value(b, "ckspool_up", spool, NULL, held ? "1" : "0");
	if (have && (v = rec_lookup(sum.p, sum.len, "time")) != NULL) {
		t = strtod(v, &end);
		if (*v != 0 && *end == 0) {
			snprintf(age, sizeof age, "%.3f", now_unix() - t);
			put_head(b, "ckspool_summary_age_seconds", "gauge",
			    "Seconds since spoold last wrote its summary "
			    "(state/summary).");
			put_value(b, "ckspool_summary_age_seconds", spool, NULL,
			    age);
		} else
			msg_warn("%s/state/summary: time: not a number: %s",
			    cli_sp.shown, journal_q(v));
		free(v);
	}
	for (i = 0; held && have && i < sizeof metrics / sizeof *metrics;
	    i++) {
		if (metrics[i].type)
			group = &metrics[i];
		if ((v = rec_lookup(sum.p, sum.len, metrics[i].key)) == NULL)
			continue;
		/* a number, or the line would break the file */
		if (*v == 0 || (strtod(v, &end), *end != 0)) {
			msg_warn("%s/state/summary: %s: not a number: %s",
			    cli_sp.shown, metrics[i].key, journal_q(v));
			free(v);
			continue;
		}
		/* its name's HELP and TYPE before its first sample */
		if (said != group) {
			put_head(b, group->name, group->type, group->help);
			said = group;
		}
		put_value(b, metrics[i].name, spool, metrics[i].state, v);
		free(v);
	}
	buf_free(&sum);
}

/* Write data to path through a temporary file beside it, or exit. */
static void
write_file(const char *path, const struct buf *data)
{
	char dir[PATH_MAX], base[PATH_MAX];
	int dfd;

	if (strlen(path) >= sizeof dir)
		msg_fatal_status(EXIT_USAGE, "-o: path too long");
	strcpy(dir, path);
	strcpy(base, path);
	if ((dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		msg_fatal("open: %s: %m", dir);
	if (fsop_publish(dfd, dfd, basename(base), data->p, data->len, 0644,
	    0) < 0)
		msg_fatal("write: %s: %m", path);
	(void)close(dfd);
}

int
cmd_metrics(int argc, char **argv)
{
	char root[PATH_MAX];
	struct buf b = BUF_INIT;
	const char *out = NULL;
	int c;

	optind = 1;
	while ((c = getopt(argc, argv, "+o:h")) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'h':
			printf("usage: spool metrics [-o FILE]   (the spool's counts "
			    "in the Prometheus text format)\n");
			return 0;
		default:
			fprintf(stderr, "usage: spool metrics [-o FILE]\n");
			return EXIT_USAGE;
		}
	}
	if (optind < argc)
		msg_fatal_status(EXIT_USAGE, "metrics: unexpected argument: %s",
		    argv[optind]);
	cli_open();
	cli_spool_realpath(root);
	expose(&b, root);
	if (out != NULL)
		write_file(out, &b);
	else if (fwrite(b.p, 1, b.len, stdout) != b.len || fflush(stdout) != 0)
		msg_fatal("write: standard output: %m");
	buf_free(&b);
	return 0;
}
