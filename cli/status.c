/*
 * status.c - "spool status", "spool workers", "spool path",
 * "spool cancel".
 *
 *	spool status                 spoold, counts, the running tasks
 *	spool status [-l] ID...      one line per task (-l: every field)
 *	spool workers                one line per worker
 *	spool path ID...             the directory a task's files end in
 *	spool cancel ID...           ask spoold to cancel (IDs or stdin)
 *
 * A task's line ends with its accounting, as sacct shows it: WALL
 * (elapsed; for a running task, since it moved into running/, the
 * ctime of workers/W/running/ID.ATT as spool top reads it), CPU (user
 * plus system), PEAK (memory_peak) and HOST (before the result, the
 * host of the worker that holds it, from workers/W/info).  The columns
 * before them, those scripts read (ID NAME STATE ATT WORKER EXIT
 * REASON), keep their places.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "fsop.h"
#include "hostinfo.h"
#include "lease.h"
#include "msg.h"
#include "units.h"

static void
row_header(void)
{
	printf("%-10s %-20s %-12s %4s %-24s %5s %-11s %9s %9s %6s %s\n",
	    "ID", "NAME", "STATE", "ATT", "WORKER", "EXIT", "REASON", "WALL",
	    "CPU", "PEAK", "HOST");
}

/* "0.012s", "42.3s" under a minute, then "1:30", "1:30:00", "2-00:00:00" */
static char *
seconds_format(double s, char *out, size_t size)
{
	if (s < 0)
		s = 0;
	if (s < 10)
		snprintf(out, size, "%.3fs", s);
	else if (s < 60)
		snprintf(out, size, "%.1fs", s);
	else
		units_format_duration((uint64_t)s, out, size);
	return out;
}

/* How long a running task has run: since its rename into running/. */
static int
running_since(const struct tview *v, double *since)
{
	char aname[WDIR_ANAME_MAX], path[WDIR_ID_MAX + WDIR_ANAME_MAX + 16];
	struct stat st;

	if (strcmp(v->state, "running") != 0 || v->worker[0] == 0)
		return -1;
	wdir_aname(v->id, v->attempt, aname, sizeof aname);
	snprintf(path, sizeof path, "%s/running/%s", v->worker, aname);
	if (fsop_stat(cli_sp.fd[SD_WORKERS], path, &st) < 0)
		return -1;	/* it moved on meanwhile */
	*since = (double)st.st_ctim.tv_sec + st.st_ctim.tv_nsec / 1e9;
	return 0;
}

/* The host of a worker (the last one asked is kept: rows of one
 * worker's tasks cost one read). */
static const char *
worker_host(const char *wid)
{
	static char last[WDIR_ID_MAX];
	static char host[sizeof ((struct worker_info *)0)->host];
	char path[WDIR_ID_MAX + 16];
	struct worker_info info;

	if (wid[0] == 0)
		return "-";
	if (strcmp(wid, last) == 0)
		return host[0] ? host : "-";
	snprintf(last, sizeof last, "%s", wid);
	snprintf(path, sizeof path, "%s/info", wid);
	if (winfo_read(cli_sp.fd[SD_WORKERS], path, &info) < 0)
		host[0] = 0;	/* removed meanwhile */
	else
		snprintf(host, sizeof host, "%s", info.host);
	return host[0] ? host : "-";
}

static void
row(const struct tview *v)
{
	char exitbuf[16] = "-", wall[32] = "-", cpu[32] = "-", peak[32] = "-";
	const char *reason = "-", *host = "-";
	double since;

	if (v->has_result) {
		const struct result *r = &v->r;

		if (r->exit_code >= 0)
			snprintf(exitbuf, sizeof exitbuf, "%d", r->exit_code);
		else if (r->signal)
			snprintf(exitbuf, sizeof exitbuf, "s%d", r->signal);
		reason = result_reason_name[r->reason];
		if (r->start > 0) {
			seconds_format(r->end - r->start, wall, sizeof wall);
			seconds_format(r->utime + r->stime, cpu, sizeof cpu);
		}
		if (r->memory_peak)
			units_format_human(r->memory_peak, peak, sizeof peak);
		if (r->host)
			host = r->host;
	} else {
		if (v->unfit)
			reason = "unfit";
		if (running_since(v, &since) == 0)
			seconds_format(now_unix() - since, wall, sizeof wall);
		host = worker_host(v->worker);
	}
	/* a worker's ID in full: one of a job is often longer than 24 */
	printf("%-10" PRIu64 " %-20.20s %-12s %4u %-24s %5s %-11s %9s "
	    "%9s %6s %s\n", v->id, v->name ? v->name : "-", v->state,
	    v->attempt, v->worker[0] ? v->worker : "-", exitbuf, reason, wall,
	    cpu, peak, host);
}

/* "after: ID (STATE), ...": what a task not final waits for, and how
 * far each is (query_task reads each afresh: v is a copy). */
static void
after_line(const struct tview *v)
{
	struct tview d;
	size_t i;

	printf("after:");
	for (i = 0; i < v->nafter; i++) {
		query_task(v->after[i], &d);
		printf("%s %" PRIu64 " (%s)", i ? "," : "", v->after[i],
		    d.state);
		query_free(&d);
	}
	printf("\n");
}

static void
long_form(const struct tview *v)
{
	char b1[128];

	printf("id: %" PRIu64 "\nstate: %s\n", v->id, v->state);
	if (v->name)
		printf("name: %s\n", v->name);
	if (v->attempt)
		printf("attempt: %u\n", v->attempt);
	if (v->worker[0])
		printf("worker: %s\n", v->worker);
	if (!v->has_result && v->has_ask)
		printf("asks: %s\n", task_shape_words(&v->ask, b1, sizeof b1));
	if (v->nafter)
		after_line(v);
	if (v->unfit)
		printf("reason: unfit\nmessage: no worker can run it, registered "
		    "or on its way, nor a kind with a size asked\n");
	if (v->has_result) {
		const struct result *r = &v->r;

		printf("reason: %s\n", result_reason_name[r->reason]);
		if (r->exit_code >= 0)
			printf("exit: %d\n", r->exit_code);
		if (r->signal)
			printf("signal: %d\n", r->signal);
		if (r->message)
			printf("message: %s\n", r->message);
		if (r->host)
			printf("host: %s\n", r->host);
		if (r->job)
			printf("job: %s\n", r->job);
		/* as the result records them: seconds since the epoch */
		if (r->start > 0) {
			rec_format_double(b1, sizeof b1, r->start, 3);
			printf("start: %s\n", b1);
		}
		if (r->end > 0) {
			rec_format_double(b1, sizeof b1, r->end, 3);
			printf("end: %s\n", b1);
		}
		if (r->start > 0) {
			printf("wall: %.3f s\nutime: %.3f s\nstime: %.3f s\n",
			    r->end - r->start, r->utime, r->stime);
			printf("maxrss: %s\n", units_format_human(r->maxrss, b1,
			    sizeof b1));
		}
		if (r->memory_peak)
			printf("memory_peak: %s\n", units_format_human(
			    r->memory_peak, b1, sizeof b1));
		if (r->memory_limit || r->memory_method)
			printf("memory_limit: %s%s%s%s\n", r->memory_limit ?
			    units_format_human(r->memory_limit, b1, sizeof b1) :
			    "none", r->memory_method ? " (" : "",
			    r->memory_method ? r->memory_method : "",
			    r->memory_method ? ")" : "");
		if (r->cores)
			printf("cores: %u\n", r->cores);
		if (r->cpus)
			printf("cpus: %s%s%s%s\n", r->cpus, r->cpu_method ?
			    " (" : "", r->cpu_method ? r->cpu_method : "",
			    r->cpu_method ? ")" : "");
		if (r->gpus)
			printf("gpus: %u%s%s%s%s%s\n", r->gpus, r->gpu_ids ?
			    " " : "", r->gpu_ids ? r->gpu_ids : "",
			    r->gpu_method ? " (" : "", r->gpu_method ?
			    r->gpu_method : "", r->gpu_method ? ")" : "");
		if (r->gpus && r->gpu_util >= 0)
			printf("gpu_util: %.1f%%\ngpu_memory_peak: %s\n",
			    r->gpu_util, units_format_human(r->gpu_memory_peak,
			    b1, sizeof b1));
	}
	printf("dir: %s/tasks/%" PRIu64 "/%" PRIu64 "\n", cli_sp.root,
	    v->id / SPOOL_SHARD_SIZE, v->id);
}

static void
show_spoold(void)
{
	struct owner_info o;
	uint64_t beat;
	char *summary_time, note[160];
	struct buf b = BUF_INIT;
	int rc = lease_holder(&cli_sp, &o, &beat);

	if (rc <= 0) {
		printf("spoold: not running\n");
		return;
	}
	printf("spoold: pid %ld on %s", o.pid, o.host);
	if (cli_read_summary(&b) == 0 &&
	    (summary_time = rec_lookup(b.p, b.len, "time"))) {
		printf(", summary %.1f s old%s", now_unix() - atof(summary_time),
		    query_summary_note(b.p, b.len, &o, note, sizeof note));
		free(summary_time);
	}
	printf("\n");
	buf_free(&b);
}

static void
show_summary(void)
{
	static const char *const keys[] = { "waiting", "queued", "unfit",
	    "placed", "done", "failed", "cancelled", "rejected", "requeued",
	    "retried", "workers", "cores", "busy_cores", "rate", NULL };
	struct buf b = BUF_INIT;
	char *v, w[96];
	int i;

	if (cli_read_summary(&b) < 0) {
		buf_free(&b);
		return;
	}
	for (i = 0; keys[i]; i++) {
		if (strcmp(keys[i], "workers") == 0) {
			printf("  workers: %s", query_summary_workers(b.p,
			    b.len, w, sizeof w));
			continue;
		}
		v = rec_lookup(b.p, b.len, keys[i]);
		printf("%s%s: %s", i ? "  " : "", keys[i], v ? v : "?");
		free(v);
	}
	printf("\n  (done, failed, cancelled, rejected, lost: since spoold "
	    "started; rate: tasks/s over the last minute; unfit: queued "
	    "tasks no worker or kind can run)\n");
	buf_free(&b);
}

int
cmd_status(int argc, char **argv)
{
	struct tview v;
	uint64_t *ids;
	size_t n, i;
	int c, lng = 0;

	while ((c = getopt(argc, argv, "+lh")) != -1) {
		switch (c) {
		case 'l':
			lng = 1;
			break;
		case 'h':
			printf("usage: spool status [-l] [ID... | -]   (- reads "
			    "IDs from stdin)\n");
			return 0;
		default:
			return EXIT_USAGE;
		}
	}
	cli_open();
	if (optind == argc) {
		show_spoold();
		show_summary();
		n = query_active(&ids);
		if (n) {
			printf("\n");
			row_header();
		}
		for (i = 0; i < n; i++) {
			query_task(ids[i], &v);
			row(&v);
			query_free(&v);
		}
		free(ids);
		return 0;
	}
	ids = cli_read_ids(argc - optind, argv + optind, &n);
	if (!lng)
		row_header();
	for (i = 0; i < n; i++) {
		query_task(ids[i], &v);
		if (lng) {
			if (i)
				printf("---\n");
			long_form(&v);
		} else
			row(&v);
		query_free(&v);
	}
	free(ids);
	return 0;
}

static int
worker_row(void *arg, const char *wid, unsigned char type)
{
	struct worker_status st;
	struct worker_info info;
	char path[WDIR_ID_MAX + 16], mem[32], used[32], beat[32], lim[64];
	const char *state;
	int *count = arg;

	(void)type;
	if (wid[0] == '.')
		return 0;
	snprintf(path, sizeof path, "%s/info", wid);
	if (winfo_read(cli_sp.fd[SD_WORKERS], path, &info) < 0)
		return 0;
	state = wstate_name[wstate_read(cli_sp.fd[SD_WORKERS], wid, &st)];
	if (*count == 0)
		printf("%-24s %-12s %-10s %5s %9s %4s %7s %9s %6s %-22s %s\n",
		    "WORKER", "HOST", "STATE", "CORES", "MEMORY", "GPUS",
		    "RUNNING", "MEM-USED", "BEAT", "LIMITS", "JOB");
	(*count)++;
	if (st.time > 0)
		snprintf(beat, sizeof beat, "%.1fs", now_unix() - st.time);
	else
		snprintf(beat, sizeof beat, "-");
	/* how it keeps tasks to their memory, CPUs, GPUs ("-": not said,
	 * an older worker's, or no GPUs) */
	snprintf(lim, sizeof lim, "%s/%s/%s", info.memory_method[0] ?
	    info.memory_method : "-", info.cpu_method[0] ? info.cpu_method :
	    "-", info.gpu_method[0] ? info.gpu_method : "-");
	printf("%-24s %-12.12s %-10s %2u/%-2u %9s %2u/%-1u %7u %9s %6s %-22s "
	    "%s\n", wid, info.host, state, st.cores_used, info.cores,
	    units_format_human(info.memory, mem, sizeof mem), st.gpus_used,
	    info.gpus, st.running, units_format_human(st.memory_used, used,
	    sizeof used), beat, lim, info.job[0] ? info.job :
	    strchr(info.name, '@') ? strchr(info.name, '@') + 1 : "-");
	return 0;
}

int
cmd_workers(int argc, char **argv)
{
	int count = 0;

	(void)argv;
	if (argc > 1) {
		printf("usage: spool workers\n");
		return EXIT_USAGE;
	}
	cli_open();
	if (fsop_list(cli_sp.fd[SD_WORKERS], ".", worker_row, &count) < 0)
		msg_fatal("list: %s/workers: %m", cli_sp.shown);
	if (count == 0)
		printf("no workers\n");
	cluster_print_jobs();	/* batch jobs spoold submitted (cluster.c) */
	return 0;
}

int
cmd_path(int argc, char **argv)
{
	char root[PATH_MAX];
	uint64_t *ids;
	size_t n, i;

	cli_open();
	cli_spool_realpath(root);
	ids = cli_read_ids(argc - 1, argv + 1, &n);
	for (i = 0; i < n; i++)
		printf("%s/tasks/%" PRIu64 "/%" PRIu64 "\n", root,
		    ids[i] / SPOOL_SHARD_SIZE, ids[i]);
	free(ids);
	return 0;
}

int
cmd_cancel(int argc, char **argv)
{
	struct buf b = BUF_INIT;
	char name[FSOP_TMPNAME_MAX + 8];
	uint64_t *ids;
	size_t n;

	if (argc > 1 && strcmp(argv[1], "-h") == 0) {
		printf("usage: spool cancel [ID...]   (IDs from stdin if none)\n");
		return 0;
	}
	cli_open();
	ids = cli_read_ids(argc - 1, argv + 1, &n);
	if (n == 0)
		msg_fatal_status(EXIT_USAGE, "no task IDs to cancel");
	rec_put_idv(&b, "cancel", ids, n);
	snprintf(name, sizeof name, "cancel.");
	fsop_tmpname(name + 7, sizeof name - 7, NULL);
	if (fsop_publish(cli_sp.fd[SD_TMP], cli_sp.fd[SD_CONTROL], name, b.p,
	    b.len, 0600, FSOP_DURABLE) < 0)
		msg_fatal("write: %s/control/%s: %m", cli_sp.shown, name);
	fprintf(stderr, "spool: cancel requested for %zu task%s\n", n,
	    n == 1 ? "" : "s");
	buf_free(&b);
	free(ids);
	return 0;
}
