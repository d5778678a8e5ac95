/*
 * cluster.c - the worker pool from the command line.
 *
 *	spool job-script [--backend B] [--kind K] [--array N]
 *		the script spoold would submit (cluster.job_script())
 *	spool scale N [--jobs] [--kind K]
 *		N workers (dask-style: N / processes jobs) or N jobs
 *	spool adapt --minimum A --maximum B [--jobs] [--kind K]
 *	spool wait-workers N [--jobs] [--timeout D] [--kind K]
 *		until N workers are up, counted as "scale" counts them (a
 *		job of a kind with processes P is P workers), or N jobs
 *	spool shutdown [--no-wait] [--timeout D]
 *		cancel every worker job, clear the sizes, stop spoold; wait
 *		until it has stopped and this host's mounts of the spool
 *		have left (mounts.c), and say whether any job is left
 *	spool config show | import FILE [--backend B]
 *
 * Sizes are files, scale/KIND (see spoold/scale.c), so they survive a
 * restart of spoold and need no connection to it.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "fsop.h"
#include "hostinfo.h"
#include "jobrec.h"
#include "jobscript.h"
#include "journal.h"
#include "lease.h"
#include "msg.h"
#include "rec.h"
#include "shutmark.h"
#include "units.h"

static const struct kind *
pick_kind(const char *name)
{
	const struct kind *k = config_kind(&cli_sp.cfg, name);
	size_t i;

	if (k == NULL) {
		fprintf(stderr, "spool: no worker kind \"%s\" in %s/spool.yaml "
		    "(kinds:", name, cli_sp.shown);
		for (i = 0; i < cli_sp.cfg.nkinds; i++)
			fprintf(stderr, " %s", cli_sp.cfg.kinds[i].name);
		fprintf(stderr, ")\n");
		exit(EXIT_USAGE);
	}
	return k;
}

/* ckworker next to this spool program (as spoold finds it). */
void
cli_worker_path(char *out, size_t size)
{
	const char *env = getenv("CKWORKER");
	char self[PATH_MAX], *slash;
	ssize_t n;

	if (env && *env) {
		snprintf(out, size, "%s", env);
		return;
	}
	n = readlink("/proc/self/exe", self, sizeof self - 16);
	if (n <= 0) {
		snprintf(out, size, "ckworker");
		return;
	}
	self[n] = 0;
	if ((slash = strrchr(self, '/')) != NULL)
		strcpy(slash + 1, "ckworker");
	snprintf(out, size, "%s", self);
}

int
cmd_job_script(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "backend", required_argument, NULL, 'b' },
		{ "kind", required_argument, NULL, 'k' },
		{ "array", required_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *kname = NULL, *bname = NULL, *why;
	char root[PATH_MAX], wpath[PATH_MAX], err[300];
	struct buf b = BUF_INIT;
	struct kind k;
	uint64_t arr = 1;
	int c;

	while ((c = getopt_long(argc, argv, "+b:k:a:h", opts, NULL)) != -1) {
		switch (c) {
		case 'b': bname = optarg; break;
		case 'k': kname = optarg; break;
		case 'a':
			if (units_parse_uint(optarg, 100000, &arr, &why) < 0 ||
			    arr == 0)
				msg_fatal_status(EXIT_USAGE, "--array %s: %s",
				    journal_q(optarg),
				    arr == 0 ? "at least 1" : why);
			break;
		case 'h':
			printf("usage: spool job-script [--backend B] [--kind K] "
			    "[--array N]\n");
			return 0;
		default:
			return EXIT_USAGE;
		}
	}
	cli_open();
	k = *pick_kind(kname);
	if (bname && backend_parse(bname, &k.backend) < 0)
		msg_fatal_status(EXIT_USAGE, "--backend %s: use local, slurm, "
		    "sge, pbs or lsf", bname);
	cli_spool_realpath(root);
	cli_worker_path(wpath, sizeof wpath);
	if (jobscript_render(&b, &k, root, wpath, (unsigned)arr, err,
	    sizeof err) < 0)
		msg_fatal_status(EXIT_USAGE, "%s", err);
	fwrite(b.p, 1, b.len, stdout);
	buf_free(&b);
	return 0;
}

static void
write_size(const struct kind *k, struct buf *rec)
{
	rec_put_double(rec, "asked", now_unix(), 3);
	if (fsop_publish(cli_sp.fd[SD_TMP], cli_sp.fd[SD_SCALE], k->name, rec->p,
	    rec->len, 0600, FSOP_DURABLE) < 0)
		msg_fatal("write: %s/scale/%s: %m", cli_sp.shown, k->name);
}

/* Workers (dask's meaning: one per process) to jobs, rounded up. */
static uint64_t
to_jobs(const struct kind *k, uint64_t n, int jobs)
{
	return jobs ? n : (n + k->processes - 1) / k->processes;
}

static void
need_batch_or_local(const struct kind *k)
{
	if (!cli_sp.cfg.have_cluster)
		fprintf(stderr, "spool: note: spool.yaml has no cluster section; "
		    "kind \"%s\" runs local workers on the spoold host\n",
		    k->name);
}

int
cmd_scale(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "jobs", no_argument, NULL, 'j' },
		{ "kind", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *kname = NULL, *why;
	const struct kind *k;
	struct buf b = BUF_INIT;
	uint64_t n;
	int c, jobs = 0;

	while ((c = getopt_long(argc, argv, "jk:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': jobs = 1; break;
		case 'k': kname = optarg; break;
		case 'h':
			printf("usage: spool scale N [--jobs] [--kind K]\n");
			return 0;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind + 1 != argc)
		msg_fatal_status(EXIT_USAGE, "usage: spool scale N [--jobs] "
		    "[--kind K]");
	if (units_parse_uint(argv[optind], 100000, &n, &why) < 0)
		msg_fatal_status(EXIT_USAGE, "scale %s: %s",
		    journal_q(argv[optind]), why);
	cli_open();
	k = pick_kind(kname);
	need_batch_or_local(k);
	rec_put_word(&b, "mode", "fixed");
	rec_put_uint(&b, "jobs", to_jobs(k, n, jobs));
	write_size(k, &b);
	fprintf(stderr, "spool: kind %s: %" PRIu64 " job%s (%s backend, "
	    "%u core%s each)\n", k->name, to_jobs(k, n, jobs),
	    to_jobs(k, n, jobs) == 1 ? "" : "s", backend_name[k->backend],
	    k->cores, k->cores == 1 ? "" : "s");
	buf_free(&b);
	return 0;
}

int
cmd_adapt(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "minimum", required_argument, NULL, 'm' },
		{ "maximum", required_argument, NULL, 'M' },
		{ "jobs", no_argument, NULL, 'j' },
		{ "kind", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *kname = NULL, *why;
	uint64_t lo = 0, hi = UINT64_MAX;
	const struct kind *k;
	struct buf b = BUF_INIT;
	int c, jobs = 0;

	while ((c = getopt_long(argc, argv, "m:M:jk:h", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (units_parse_uint(optarg, 100000, &lo, &why) < 0)
				msg_fatal_status(EXIT_USAGE, "--minimum %s: %s",
				    journal_q(optarg), why);
			break;
		case 'M':
			if (units_parse_uint(optarg, 100000, &hi, &why) < 0)
				msg_fatal_status(EXIT_USAGE, "--maximum %s: %s",
				    journal_q(optarg), why);
			break;
		case 'j': jobs = 1; break;
		case 'k': kname = optarg; break;
		case 'h':
			printf("usage: spool adapt --minimum A --maximum B "
			    "[--jobs] [--kind K]\n");
			return 0;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind != argc || hi == UINT64_MAX)
		msg_fatal_status(EXIT_USAGE, "usage: spool adapt --minimum A "
		    "--maximum B [--jobs] [--kind K]");
	if (lo > hi)
		msg_fatal_status(EXIT_USAGE, "--minimum %" PRIu64 " is more "
		    "than --maximum %" PRIu64, lo, hi);
	cli_open();
	k = pick_kind(kname);
	need_batch_or_local(k);
	rec_put_word(&b, "mode", "adapt");
	rec_put_uint(&b, "minimum", to_jobs(k, lo, jobs));
	rec_put_uint(&b, "maximum", to_jobs(k, hi, jobs));
	write_size(k, &b);
	fprintf(stderr, "spool: kind %s: adaptive, %" PRIu64 " to %" PRIu64
	    " jobs\n", k->name, to_jobs(k, lo, jobs), to_jobs(k, hi, jobs));
	buf_free(&b);
	return 0;
}

struct count_ctx {
	const char *kind;	/* NULL: every worker */
	int	jobs;		/* count ckworkers, not dask workers */
	int	n;
};

/*
 * What a ckworker counts for, in "spool scale N"'s unit: its kind's
 * processes (dask workers per job); 1 for a worker of no kind.
 */
static int
weight(const struct worker_info *info)
{
	const char *at = strchr(info->name, '@');
	char kname[KIND_NAME_MAX];
	const struct kind *k;

	if (at == NULL || (size_t)(at - info->name) >= sizeof kname)
		return 1;
	snprintf(kname, sizeof kname, "%.*s", (int)(at - info->name),
	    info->name);
	k = config_kind(&cli_sp.cfg, kname);
	return k && k->processes > 1 ? (int)k->processes : 1;
}

static int
count_one(void *arg, const char *wid, unsigned char type)
{
	struct count_ctx *c = arg;
	struct worker_status st;
	struct worker_info info;
	char path[WDIR_ID_MAX + 16];
	size_t kl;

	(void)type;
	if (wid[0] == '.')
		return 0;
	snprintf(path, sizeof path, "%s/info", wid);
	if (winfo_read(cli_sp.fd[SD_WORKERS], path, &info) < 0)
		return 0;
	if (c->kind) {
		kl = strlen(c->kind);
		if (strncmp(info.name, c->kind, kl) != 0 || info.name[kl] != '@')
			return 0;
	}
	switch (wstate_read(cli_sp.fd[SD_WORKERS], wid, &st)) {
	case WST_UP:
	case WST_GPUS_HELD:	/* it runs what needs none of them */
		c->n += c->jobs ? 1 : weight(&info);
		break;
	default:
		break;
	}
	return 0;
}

int
cmd_wait_workers(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "timeout", required_argument, NULL, 'T' },
		{ "kind", required_argument, NULL, 'k' },
		{ "jobs", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct count_ctx cc = { NULL, 0, 0 };
	uint64_t n, timeout_ms = UINT64_MAX, start;	/* none: for ever */
	const char *why;
	int c;

	while ((c = getopt_long(argc, argv, "T:k:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'T':
			if (units_parse_ms(optarg, &timeout_ms, &why) < 0)
				msg_fatal_status(EXIT_USAGE, "--timeout %s: %s",
				    journal_q(optarg), why);
			break;
		case 'k': cc.kind = optarg; break;
		case 'j': cc.jobs = 1; break;
		case 'h':
			printf("usage: spool wait-workers N [--jobs] "
			    "[--timeout D] [--kind K]\n");
			return 0;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind + 1 != argc ||
	    units_parse_uint(argv[optind], 100000, &n, &why) < 0)
		msg_fatal_status(EXIT_USAGE, "usage: spool wait-workers N "
		    "[--jobs] [--timeout D] [--kind K]");
	cli_open();
	if (cc.kind)
		(void)pick_kind(cc.kind);
	start = now_ms();
	for (;;) {
		cc.n = 0;
		if (fsop_list(cli_sp.fd[SD_WORKERS], ".", count_one, &cc) < 0)
			msg_fatal("list: %s/workers: %m", cli_sp.shown);
		if ((uint64_t)cc.n >= n) {
			fprintf(stderr, "spool: %d worker%s up\n", cc.n,
			    cc.n == 1 ? "" : "s");
			return 0;
		}
		if (now_ms() - start >= timeout_ms) {	/* 0: look once */
			fprintf(stderr, "spool: timed out with %d of %" PRIu64
			    " workers up\n", cc.n, n);
			return 3;
		}
		/* workers register by a rename in workers/: a light poll */
		(void)poll(NULL, 0, 200);
	}
}

/* 1 if a spoold holds the lease and, where we can tell, is alive. */
static int
spoold_running(struct owner_info *o)
{
	uint64_t beat;
	int rc = lease_holder(&cli_sp, o, &beat);

	if (rc < 0)
		msg_fatal("read: %s/lock/spoold: %m", cli_sp.shown);
	return rc > 0 && host_pid_alive(o->host, o->boot, o->pid,
	    o->pstart) != 0;
}

struct out_ctx {
	size_t	n;
	struct jobrec *v;
};

static int
job_one(void *arg, const char *name, unsigned char type)
{
	struct out_ctx *c = arg;
	size_t l = strlen(name);

	(void)type;
	if (name[0] == '.' || (l > 3 && strcmp(name + l - 3, ".sh") == 0) ||
	    c->n >= 100000)
		return 0;
	c->v = xreallocarray(c->v, c->n + 1, sizeof *c->v);
	if (jobrec_read(cli_sp.fd[SD_JOBS], name, &c->v[c->n]) == 0)
		c->n++;
	return 0;
}

static int
by_submitted(const void *a, const void *b)
{
	const struct jobrec *x = a, *y = b;

	return x->submitted < y->submitted ? -1 : x->submitted > y->submitted;
}

static void
read_jobs(struct out_ctx *c)
{
	c->n = 0;
	c->v = NULL;
	if (fsop_list(cli_sp.fd[SD_JOBS], ".", job_one, c) < 0)
		msg_fatal("list: %s/jobs: %m", cli_sp.shown);
	if (c->n > 1)
		qsort(c->v, c->n, sizeof *c->v, by_submitted);
}

static void
age(char *out, size_t size, double t)
{
	double a = now_unix() - t;

	if (a < 0)
		a = 0;
	if (a < 120)
		snprintf(out, size, "%.0fs", a);
	else if (a < 7200)
		snprintf(out, size, "%.0fm", a / 60);
	else
		snprintf(out, size, "%.1fh", a / 3600);
}

void
cluster_print_jobs(void)
{
	struct out_ctx c;
	char a[16];
	size_t i, shown = 0;

	read_jobs(&c);
	for (i = 0; i < c.n; i++) {
		const struct jobrec *j = &c.v[i];

		if (j->state == JS_GONE)
			continue;
		if (shown++ == 0)
			printf("\n%-16s %-12s %-8s %-8s %5s %s\n", "JOB", "KIND",
			    "BACKEND", "STATE", "AGE", "WHY");
		age(a, sizeof a, j->submitted);
		printf("%-16s %-12.12s %-8s %-8s %5s %s\n", j->id, j->kind,
		    j->backend, jstate_name[j->state], a, j->why[0] ? j->why :
		    j->reason[0] ? j->reason : "-");
	}
	free(c.v);
}

/*
 * Wait until none of the n mounts of v (this host's mounts of the spool,
 * real, when the shutdown was asked) is there, until start + timeout_ms.
 * spoolfs unmounts at once when it sees state/shutdown change on this
 * host (inotify), else at its next check of the mark (spoolfs(1)).
 * 0, or 3 after naming those still mounted.
 */
static int
wait_mounts(const char *real, const struct spool_mount *v, size_t n,
    uint64_t start, uint64_t timeout_ms)
{
	struct spool_mount *now;
	ssize_t k;
	size_t i, left;

	for (;;) {
		if ((k = spool_mounts_here(real, &now)) < 0) {
			msg_warn("read: /proc/self/mountinfo: %m (not waiting "
			    "for the spool's mounts on this host)");
			return 0;
		}
		for (i = left = 0; i < n; i++)
			left += (size_t)spool_mount_in(&v[i], now, (size_t)k);
		if (left == 0 || now_ms() - start >= timeout_ms)
			break;
		spool_mounts_free(now, (size_t)k);
		(void)poll(NULL, 0, 50);
	}
	for (i = 0; i < n && left; i++)
		if (spool_mount_in(&v[i], now, (size_t)k))
			fprintf(stderr, "spool: %s is still mounted after %.0f "
			    "s\n", journal_q(v[i].path), timeout_ms / 1e3);
	spool_mounts_free(now, (size_t)k);
	if (left)
		return 3;
	fprintf(stderr, "spool: %zu mount%s of the spool on this host "
	    "unmounted\n", n, n == 1 ? "" : "s");
	return 0;
}

/* Name the job records that still say pending or running; how many. */
static size_t
jobs_left(void)
{
	struct out_ctx jc;
	size_t i, left = 0;

	read_jobs(&jc);
	for (i = 0; i < jc.n; i++)
		if (jc.v[i].state < JS_GONE) {
			fprintf(stderr, "spool: job %s (%s) may still be in the "
			    "queue\n", jc.v[i].id, jc.v[i].backend);
			left++;
		}
	free(jc.v);
	return left;
}

/*
 * No spoold to carry a shutdown out: a request nobody reads would stop
 * the next spoold at its start, so none is left.  The mounts are told
 * here (the mark spoold would have left), and the jobs are left to a
 * spoold started later, which cancels those of jobs/ at its stop.
 */
static size_t
shutdown_without_spoold(void)
{
	char who[96];
	uint64_t gen;
	size_t left;

	host_self(who, sizeof who);
	if (shutmark_write(&cli_sp, who, &gen) < 0)
		msg_fatal("update: %s/state/shutdown: %m", cli_sp.shown);
	fprintf(stderr, "spool: spoold is not running on %s: no worker job "
	    "cancelled; the spool's mounts are told to unmount "
	    "(state/shutdown, generation %" PRIu64 ")\n", cli_sp.shown, gen);
	if ((left = jobs_left()) > 0)
		fprintf(stderr, "spool: a spoold started later cancels the "
		    "jobs of %s/jobs/ when it stops\n", cli_sp.shown);
	return left;
}

int
cmd_shutdown(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "no-wait", no_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct buf b = BUF_INIT;
	char name[FSOP_TMPNAME_MAX + 16];
	uint64_t timeout_ms = 120000, start;
	struct owner_info o, now;
	struct spool_mount *mv = NULL;
	const char *why;
	char real[PATH_MAX];
	ssize_t nm = 0;
	size_t left;
	int c, wait = 1, mrc = 0, running;

	while ((c = getopt_long(argc, argv, "nT:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n': wait = 0; break;
		case 'T':
			if (units_parse_ms(optarg, &timeout_ms, &why) < 0)
				msg_fatal_status(EXIT_USAGE, "--timeout %s: %s",
				    journal_q(optarg), why);
			break;
		case 'h':
			printf("usage: spool shutdown [--no-wait] "
			    "[--timeout D]\n");
			return 0;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind != argc)
		msg_fatal_status(EXIT_USAGE, "usage: spool shutdown [--no-wait] "
		    "[--timeout D]");
	cli_open();
	running = spoold_running(&o);
	/* the mounts there now leave with this shutdown (shutmark.h) */
	if (wait) {
		cli_spool_realpath(real);
		if ((nm = spool_mounts_here(real, &mv)) < 0) {
			msg_warn("read: /proc/self/mountinfo: %m (not waiting "
			    "for the spool's mounts on this host)");
			nm = 0;
		}
	}
	start = now_ms();
	if (!running) {
		left = shutdown_without_spoold();
		goto mounts;
	}
	rec_put_word(&b, "shutdown", "yes");
	snprintf(name, sizeof name, "shutdown.");
	fsop_tmpname(name + 9, sizeof name - 9, NULL);
	if (fsop_publish(cli_sp.fd[SD_TMP], cli_sp.fd[SD_CONTROL], name, b.p,
	    b.len, 0600, FSOP_DURABLE) < 0)
		msg_fatal("write: %s/control/%s: %m", cli_sp.shown, name);
	buf_free(&b);
	fprintf(stderr, "spool: shutdown requested: spoold (pid %ld on %s) "
	    "cancels every worker job and stops\n", o.pid, o.host);
	if (!wait)
		return 0;
	/* its lease released, and on this host its process gone */
	while ((spoold_running(&now) && strcmp(now.nonce, o.nonce) == 0) ||
	    host_pid_alive(o.host, o.boot, o.pid, o.pstart) > 0) {
		if (now_ms() - start >= timeout_ms) {
			fprintf(stderr, "spool: spoold has not stopped after "
			    "%.0f s\n", timeout_ms / 1e3);
			spool_mounts_free(mv, (size_t)nm);
			return 3;
		}
		(void)poll(NULL, 0, 100);
	}
	if ((left = jobs_left()) == 0)
		fprintf(stderr, "spool: spoold stopped; no worker job left\n");
mounts:
	if (nm > 0)
		mrc = wait_mounts(real, mv, (size_t)nm, start, timeout_ms);
	spool_mounts_free(mv, (size_t)nm);
	return left ? 1 : mrc;
}

static void
show_kind(const struct kind *k)
{
	char v[64];
	size_t i;

	printf("kind %s: backend %s, %u core%s, %u process%s", k->name,
	    backend_name[k->backend], k->cores, k->cores == 1 ? "" : "s",
	    k->processes, k->processes == 1 ? "" : "es");
	if (k->memory)
		printf(", memory %s", units_format_human(k->memory, v, sizeof v));
	if (k->gpus)
		printf(", %u GPU%s", k->gpus, k->gpus == 1 ? "" : "s");
	if (k->walltime)
		printf(", walltime %s", units_format_duration(k->walltime, v,
		    sizeof v));
	if (k->queue)
		printf(", queue %s", k->queue);
	if (k->account)
		printf(", account %s", k->account);
	printf("\n  death-timeout %s", units_format_duration(
	    k->death_timeout_ms / 1000, v, sizeof v));
	printf(", idle-timeout %s", k->idle_timeout_ms ?
	    units_format_duration(k->idle_timeout_ms / 1000, v, sizeof v) :
	    "never");
	printf(", export-env %s, job-array %s\n", k->export_env ? "yes" : "no",
	    k->job_array ? "yes" : "no");
	if (k->job_name)
		printf("  name: %s\n", k->job_name);
	if (k->resource_spec)
		printf("  resource-spec: %s\n", k->resource_spec);
	if (k->pe)
		printf("  parallel-environment: %s\n", k->pe);
	if (k->local_dir)
		printf("  local-directory: %s\n", k->local_dir);
	if (k->log_dir)
		printf("  log-directory: %s\n", k->log_dir);
	if (k->shebang)
		printf("  shebang: %s\n", k->shebang);
	for (i = 0; i < LIMIT_N; i++)
		if (k->limit[i])
			printf("  %s: %s\n", limit_key[i], k->limit[i]);
	for (i = 0; k->env && k->env[i]; i++)
		printf("  env: %s\n", k->env[i]);
	for (i = 0; k->prologue && k->prologue[i]; i++)
		printf("  prologue: %s\n", k->prologue[i]);
	for (i = 0; k->extra && k->extra[i]; i++)
		printf("  job-extra-directives: %s\n", k->extra[i]);
	for (i = 0; k->skip && k->skip[i]; i++)
		printf("  job-directives-skip: %s\n", k->skip[i]);
}

/* every key of daemon:, of the cluster-wide part and of worker:, as
 * in force */
static void
show_daemon(const struct config *c)
{
	char v[64];
	int k;

	printf("daemon: heartbeat %.1fs, lost-timeout %.1fs, "
	    "death-timeout %.1fs, rescan %.1fs, fsync %s\n",
	    c->heartbeat_ms / 1e3, c->lost_timeout_ms / 1e3,
	    c->death_timeout_ms / 1e3, c->rescan_ms / 1e3,
	    c->fsync ? "on" : "off");
	printf("  settle %.1fs, max-requeues %u, shared %s, journal-size %s\n",
	    c->settle_ms / 1e3, c->max_requeues, c->shared ? "yes" : "no",
	    units_format_human(c->journal_bytes, v, sizeof v));
	printf("cluster: poll-interval %.1fs, max-submit-failures %u, "
	    "scale-down-delay %.1fs\n", c->poll_ms / 1e3,
	    c->max_submit_failures, c->scale_down_ms / 1e3);
	for (k = 0; k < LIMIT_N; k++)
		printf("%s%s %s", k ? ", " : "worker: ", limit_key[k],
		    c->worker_limit[k] ? c->worker_limit[k] : "auto");
	printf("\n");
}

/*
 * The daemon: keys only a restart of spoold applies, where the running
 * spoold's (its lease) differ from the file's: it refused a reload, or
 * was not reloaded.  Its workers follow spoold's (ckworker(1)).
 */
static void
warn_in_force(const struct config *c)
{
	struct buf b = BUF_INIT;
	struct owner_info o;
	uint64_t beat;

	if (lease_holder(&cli_sp, &o, &beat) > 0 &&
	    owner_config_diff(&o, c, "this file", &b) > 0)
		msg_warn("spoold (pid %ld on %s) runs with %s, which only its "
		    "restart applies; its workers follow it", o.pid, o.host,
		    b.p);
	buf_free(&b);
}

int
cmd_config(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "backend", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *backend = NULL;
	struct buf in = BUF_INIT, out = BUF_INIT;
	char why[300];
	size_t i;
	int c;

	/*
	 * --backend before or after the file, and as --backend=B: spool(1)
	 * writes it after, and every other command takes its options first
	 * (so getopt permutes here, no "+").
	 */
	while ((c = getopt_long(argc, argv, "b:h", opts, NULL)) != -1) {
		switch (c) {
		case 'b':
			backend = optarg;
			break;
		case 'h':
			printf("usage: spool config show\n"
			    "       spool config import JOBQUEUE.YAML "
			    "[--backend B]\n");
			return 0;
		default:
			goto usage;
		}
	}
	argc -= optind - 1;	/* argv[1] is now the subcommand */
	argv += optind - 1;
	if (argc == 2 && strcmp(argv[1], "show") == 0 && backend == NULL) {
		cli_open();
		show_daemon(&cli_sp.cfg);
		for (i = 0; i < cli_sp.cfg.nkinds; i++)
			show_kind(&cli_sp.cfg.kinds[i]);
		/* after the settings, on stderr: as spoold says at its start */
		if (fflush(stdout) != 0)
			msg_fatal("write: stdout: %m");
		config_warn_death_timeouts(&cli_sp.cfg);
		warn_in_force(&cli_sp.cfg);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "import") == 0) {
		if (fsop_read_file(AT_FDCWD, argv[2], 1 << 20, &in, NULL) < 0)
			msg_fatal_status(EXIT_USAGE, "read: %s: %m",
			    journal_q(argv[2]));
		if (config_import_jobqueue(in.p, in.len, backend, &out, why,
		    sizeof why) < 0)
			msg_fatal_status(EXIT_USAGE, "%s: %s",
			    journal_q(argv[2]), why);
		fwrite(out.p, 1, out.len, stdout);
		buf_free(&in);
		buf_free(&out);
		return 0;
	}
usage:
	fprintf(stderr, "usage: spool config show\n"
	    "       spool config import JOBQUEUE.YAML [--backend B]\n");
	return EXIT_USAGE;
}
