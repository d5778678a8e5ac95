/*
 * scale.c - worker jobs: how many are wanted, submitting, cancelling.
 *
 * Wanted: scale/KIND, written by "spool scale" and "spool adapt":
 *	mode: fixed   jobs: N
 *	mode: adapt   minimum: A   maximum: B        (in jobs)
 * It stays in the spool, so a restarted spoold scales as before.
 *
 * Have: one record per job spoold submitted, jobs/ID:
 *	id: 1234_3  kind: gpu  backend: slurm  submitted: ...
 *	state: pending | running | gone | failed     why: "..."
 * and the workers that registered: a job's worker is named KIND@ID
 * (jobscript.h), so spoold knows which job a worker is without asking.
 *
 * Every poll-interval spoold lists the queues it has jobs in, updates
 * the states, and for each kind compares what it has (workers alive and
 * not draining, plus jobs whose worker has not registered yet: pending
 * jobs count, so nothing piles up) with what is wanted:
 *
 *  - too few: submit the difference, as one array job where the backend
 *    has them; not while backing off after failures (a job that leaves
 *    the queue before its worker registers is a failure; the delay
 *    doubles up to 10 min; after cluster: max-submit-failures in a row,
 *    none until the size is set again), and saying why in jobs/;
 *  - too many: cancel jobs that have no worker yet (newest first), then
 *    stop idle workers (drain: nothing more is placed on them, then
 *    their job is cancelled); busy workers are drained and cancelled
 *    once idle, never killed in the middle of a task; a worker younger
 *    than a quarter of cluster: scale-down-delay is not stopped (no
 *    thrashing: a job is not killed as soon as it starts).
 *
 * Adaptive: the wanted number of jobs of a kind is what its share of
 * the queued tasks (by cores, per resource shape; a shape goes to the
 * first kind that can run it, kinds without GPUs first for CPU work)
 * plus the cores busy on its workers need, within [minimum, maximum].
 * Up at once; down only when it has wanted less for cluster:
 * scale-down-delay (hysteresis).
 *
 * The local backend is handled the same way: its "jobs" are detached
 * processes running the job script, their ID is local.PID.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsop.h"
#include "jobscript.h"
#include "msg.h"
#include "rec.h"
#include "spoold.h"

#define BACKOFF_MAX_MS		(10 * 60 * 1000)
#define LIST_GRACE_MS		10000	/* a new job may not be listed yet */
#define GONE_KEEP_S		3600	/* records of ended jobs kept this long */
#define SUBMIT_MAX		1000	/* jobs submitted in one pass */

enum jstate { JS_PENDING, JS_RUNNING, JS_GONE, JS_FAILED };
static const char *const jstate_name[] = { "pending", "running", "gone",
	"failed" };

struct job {
	char	id[80];
	int	kind;
	enum jstate state;
	double	submitted;
	uint64_t seen_ms;	/* our clock: submitted or last listed */
	struct worker *w;	/* its worker, once registered */
	int	had_worker;
	int	cancelled;
	char	why[200];
	char	host[64];	/* local jobs: where they run */
};

struct want {
	int	mode;		/* 0 nothing asked, 1 fixed, 2 adapt */
	uint32_t jobs, minimum, maximum;
	uint32_t failures;	/* in a row */
	uint64_t backoff_until;
	uint64_t down_since;	/* adapt: wanted fewer since */
	int	stuck;		/* too many failures: wait for a new size */
};

static struct job **jobs;
static size_t njobs;
static struct want want[KINDS_MAX];
static struct dirstamp st_scale;
static int scale_dirty = 1;
static uint64_t next_poll;

static const struct kind *
kind_at(int i)
{
	return i >= 0 && (size_t)i < sd.sp.cfg.nkinds ? &sd.sp.cfg.kinds[i] :
	    NULL;
}

static int
kind_index(const char *name)
{
	size_t i;

	for (i = 0; i < sd.sp.cfg.nkinds; i++)
		if (strcmp(sd.sp.cfg.kinds[i].name, name) == 0)
			return (int)i;
	return -1;
}

static void
job_save(const struct job *j)
{
	struct buf b = BUF_INIT;

	rec_put_word(&b, "id", j->id);
	rec_put_word(&b, "kind", kind_at(j->kind) ? kind_at(j->kind)->name :
	    "?");
	rec_put_word(&b, "backend", kind_at(j->kind) ?
	    backend_name[kind_at(j->kind)->backend] : "?");
	rec_put_double(&b, "submitted", j->submitted, 3);
	rec_put_word(&b, "state", jstate_name[j->state]);
	if (j->had_worker)
		rec_put_uint(&b, "worker", 1);
	if (j->host[0])
		rec_put_word(&b, "host", j->host);
	if (j->why[0])
		rec_put_str(&b, "why", j->why);
	if (fsop_publish(sd.sp.fd[SD_TMP], sd.sp.fd[SD_JOBS], j->id, b.p, b.len,
	    0600, 0) < 0)
		msg_once("jobs", "write: jobs/%s: %m", j->id);
	buf_free(&b);
}

static struct job *
job_add(const char *id, int kind, double submitted)
{
	struct job *j = xcalloc(1, sizeof *j);

	snprintf(j->id, sizeof j->id, "%s", id);
	j->kind = kind;
	j->submitted = submitted;
	j->seen_ms = sd.now;
	jobs = xreallocarray(jobs, njobs + 1, sizeof *jobs);
	jobs[njobs++] = j;
	return j;
}

static struct job *
job_find(const char *id)
{
	size_t i;

	for (i = 0; i < njobs; i++)
		if (strcmp(jobs[i]->id, id) == 0)
			return jobs[i];
	return NULL;
}

static void
job_forget(size_t i)
{
	char script[sizeof jobs[0]->id + 8];

	(void)fsop_unlink(sd.sp.fd[SD_JOBS], jobs[i]->id);
	snprintf(script, sizeof script, "%s.sh", jobs[i]->id);
	(void)fsop_unlink(sd.sp.fd[SD_JOBS], script);
	free(jobs[i]);
	jobs[i] = jobs[--njobs];
}

/* ---- the wanted sizes ---- */

static int
want_one(void *arg, const char *name, unsigned char type)
{
	struct buf b = BUF_INIT;
	struct want w;
	char *mode, *v;
	int k;

	(void)arg;
	(void)type;
	if (name[0] == '.' || (k = kind_index(name)) < 0)
		return 0;
	if (fsop_read_file(sd.sp.fd[SD_SCALE], name, 4096, &b, NULL) < 0)
		return 0;
	memset(&w, 0, sizeof w);
	mode = rec_lookup(b.p, b.len, "mode");
	if (mode && strcmp(mode, "fixed") == 0)
		w.mode = 1;
	else if (mode && strcmp(mode, "adapt") == 0)
		w.mode = 2;
	free(mode);
#define NUM(key, field) if ((v = rec_lookup(b.p, b.len, key)) != NULL) { \
		w.field = (uint32_t)strtoul(v, NULL, 10); free(v); }
	NUM("jobs", jobs)
	NUM("minimum", minimum)
	NUM("maximum", maximum)
#undef NUM
	buf_free(&b);
	if (w.mode != want[k].mode || w.jobs != want[k].jobs ||
	    w.minimum != want[k].minimum || w.maximum != want[k].maximum) {
		msg_info("kind %s: %s", name, w.mode == 1 ? "fixed size" :
		    w.mode == 2 ? "adaptive" : "no size");
		want[k].mode = w.mode;
		want[k].jobs = w.jobs;
		want[k].minimum = w.minimum;
		want[k].maximum = w.maximum;
		/* a new size is a new start after failures */
		want[k].failures = 0;
		want[k].stuck = 0;
		want[k].backoff_until = 0;
	}
	return 0;
}

static void
read_wants(void)
{
	if (!scale_dirty && !(sd.rescan_due &&
	    dirstamp_changed(sd.sp.rootfd, "scale", &st_scale)))
		return;
	scale_dirty = 0;
	if (fsop_list(sd.sp.fd[SD_SCALE], ".", want_one, NULL) < 0)
		msg_warn("list: scale: %m");
}

void
scale_note(void)
{
	scale_dirty = 1;
}

/* ---- recovery ---- */

static int
job_load(void *arg, const char *name, unsigned char type)
{
	struct buf b = BUF_INIT;
	char *id, *kind, *state, *v;
	struct job *j;
	int k;

	(void)arg;
	(void)type;
	if (name[0] == '.' || strchr(name, '/') ||
	    (strlen(name) > 3 && !strcmp(name + strlen(name) - 3, ".sh")))
		return 0;
	if (fsop_read_file(sd.sp.fd[SD_JOBS], name, 65536, &b, NULL) < 0)
		return 0;
	id = rec_lookup(b.p, b.len, "id");
	kind = rec_lookup(b.p, b.len, "kind");
	state = rec_lookup(b.p, b.len, "state");
	if (id && kind && state && (k = kind_index(kind)) >= 0) {
		j = job_add(id, k, 0);
		if ((v = rec_lookup(b.p, b.len, "submitted")) != NULL) {
			j->submitted = atof(v);
			free(v);
		}
		for (j->state = JS_PENDING; j->state <= JS_FAILED; j->state++)
			if (strcmp(state, jstate_name[j->state]) == 0)
				break;
		if (j->state > JS_FAILED)
			j->state = JS_GONE;
		if ((v = rec_lookup(b.p, b.len, "worker")) != NULL) {
			j->had_worker = 1;
			free(v);
		}
		if ((v = rec_lookup(b.p, b.len, "host")) != NULL) {
			snprintf(j->host, sizeof j->host, "%s", v);
			free(v);
		}
		if ((v = rec_lookup(b.p, b.len, "why")) != NULL) {
			snprintf(j->why, sizeof j->why, "%s", v);
			free(v);
		}
	} else
		msg_warn("jobs/%s: unreadable job record; ignored", name);
	free(id);
	free(kind);
	free(state);
	buf_free(&b);
	return 0;
}

void
scale_recover(void)
{
	if (fsop_list(sd.sp.fd[SD_JOBS], ".", job_load, NULL) < 0)
		msg_warn("list: jobs: %m");
	read_wants();
	if (njobs)
		msg_info("recovered %zu job record%s", njobs,
		    njobs == 1 ? "" : "s");
}

/* ---- workers and their jobs ---- */

void
scale_worker_registered(struct worker *w)
{
	const char *at = strchr(w->info.name, '@');
	struct job *j;
	int k;

	w->kind = -1;
	w->registered_ms = sd.now;
	if (at == NULL)
		return;
	snprintf(w->job, sizeof w->job, "%s", at + 1);
	{
		char kname[KIND_NAME_MAX];

		snprintf(kname, sizeof kname, "%.*s",
		    (int)(at - w->info.name), w->info.name);
		k = kind_index(kname);
	}
	w->kind = k;
	if ((j = job_find(w->job)) != NULL) {
		j->w = w;
		if (!j->had_worker) {
			j->had_worker = 1;
			j->state = JS_RUNNING;
			job_save(j);
		}
	}
}

void
scale_worker_gone(struct worker *w)
{
	size_t i;

	for (i = 0; i < njobs; i++)
		if (jobs[i]->w == w)
			jobs[i]->w = NULL;
}

/* ---- talking to the backends ---- */

static int
local_alive(const struct job *j)
{
	long pid = strtol(j->id + 6, NULL, 10);	/* "local.PID" */

	if (strcmp(j->host, host_name()) != 0)
		return 1;	/* cannot tell from here */
	return host_pid_alive(host_name(), host_boot_id(), pid, 0) != 0;
}

static int
submit_local(const char *path, const char *logdir, char *id, size_t size,
    char *why, size_t whysize)
{
	char log[PATH_MAX];
	pid_t pid;
	int fd;

	if (snprintf(log, sizeof log, "%s/local-jobs.log", logdir) >=
	    (int)sizeof log) {
		snprintf(why, whysize, "log directory name too long");
		return -1;
	}
	if ((pid = fork()) < 0) {
		snprintf(why, whysize, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		setsid();
		fd = open("/dev/null", O_RDONLY);
		if (fd >= 0)
			dup2(fd, STDIN_FILENO);
		fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		execl("/bin/sh", "sh", path, (char *)NULL);
		_exit(127);
	}
	snprintf(id, size, "local.%ld", (long)pid);
	return 0;
}

/* Write the job script to jobs/ and submit it; the new jobs are added. */
static int
submit(int k, unsigned n)
{
	const struct kind *kd = kind_at(k);
	char why[300], id[80], name[FSOP_TMPNAME_MAX + 16], path[PATH_MAX];
	char root[PATH_MAX], logdir[PATH_MAX], eid[96];
	struct buf script = BUF_INIT;
	unsigned arr = n, i, done = 0;
	struct job *j;
	int rc = -1;

	if (realpath(sd.sp.root, root) == NULL) {
		msg_warn("realpath: %s: %m", sd.sp.root);
		return -1;
	}
	if (kd->backend == BK_LOCAL || kd->backend == BK_PBS || !kd->job_array)
		arr = 1;	/* one job at a time */
	if ((kd->log_dir ? snprintf(logdir, sizeof logdir, "%s", kd->log_dir) :
	    snprintf(logdir, sizeof logdir, "%s/log", root)) >=
	    (int)sizeof logdir) {
		msg_warn("kind %s: log directory name too long", kd->name);
		return -1;
	}
	while (done < n) {
		unsigned count = arr > 1 ? n - done : 1;

		buf_reset(&script);
		if (jobscript_render(&script, kd, root, sd.worker_path, count,
		    why, sizeof why) < 0)
			goto fail;
		snprintf(name, sizeof name, "script.");
		fsop_tmpname(name + 7, sizeof name - 7, NULL);
		strcat(name, ".sh");
		if (fsop_publish(sd.sp.fd[SD_TMP], sd.sp.fd[SD_JOBS], name,
		    script.p, script.len, 0700, FSOP_DURABLE) < 0) {
			snprintf(why, sizeof why, "write: jobs/%s: %s", name,
			    strerror(errno));
			goto fail;
		}
		if (snprintf(path, sizeof path, "%s/jobs/%s", root, name) >=
		    (int)sizeof path) {
			snprintf(why, sizeof why, "spool path too long");
			goto fail;
		}
		rc = kd->backend == BK_LOCAL ?
		    submit_local(path, logdir, id, sizeof id, why, sizeof why) :
		    batch_submit(kd->backend, path, script.p, id, sizeof id, why,
		    sizeof why);
		if (rc < 0) {
			(void)fsop_unlink(sd.sp.fd[SD_JOBS], name);
			goto fail;
		}
		for (i = 1; i <= count; i++) {
			if (count > 1)
				snprintf(eid, sizeof eid, "%s%c%u", id,
				    kd->backend == BK_SLURM ? '_' : '.', i);
			else
				snprintf(eid, sizeof eid, "%s", id);
			j = job_add(eid, k, now_unix());
			if (kd->backend == BK_LOCAL)
				snprintf(j->host, sizeof j->host, "%s",
				    host_name());
			job_save(j);
		}
		/* keep the script under the job's name, for people to read */
		{
			char keep[sizeof id + 8];

			snprintf(keep, sizeof keep, "%s.sh", id);
			(void)fsop_rename(sd.sp.fd[SD_JOBS], name,
			    sd.sp.fd[SD_JOBS], keep);
		}
		msg_info("kind %s: submitted %s%s (%u worker job%s)", kd->name,
		    backend_name[kd->backend], count > 1 ? " array" : " job",
		    count, count == 1 ? "" : "s");
		done += count;
	}
	buf_free(&script);
	want[k].failures = 0;
	return 0;
fail:
	buf_free(&script);
	want[k].failures++;
	msg_warn("kind %s: submitting a worker job failed: %s", kd->name, why);
	{
		/* a record, so that "spool workers" says why */
		char fid[96];

		snprintf(fid, sizeof fid, "failed.%" PRIu64, (uint64_t)now_ms());
		j = job_add(fid, k, now_unix());
		j->state = JS_FAILED;
		snprintf(j->why, sizeof j->why, "submission failed: %.170s", why);
		job_save(j);
	}
	return -1;
}

static void
cancel_job(struct job *j, const char *why)
{
	const struct kind *kd = kind_at(j->kind);
	char err[300];

	if (j->cancelled || j->state >= JS_GONE || kd == NULL)
		return;
	if (kd->backend == BK_LOCAL) {
		long pid = strtol(j->id + 6, NULL, 10);

		if (strcmp(j->host, host_name()) == 0 && pid > 1 &&
		    kill((pid_t)pid, SIGTERM) < 0 && errno != ESRCH)
			msg_warn("kill: job %s: %m", j->id);
	} else if (batch_cancel(kd->backend, j->id, err, sizeof err) < 0) {
		msg_warn("kind %s: cancel job %s: %s", kd->name, j->id, err);
		return;
	}
	msg_info("kind %s: cancelled job %s (%s)", kd->name, j->id, why);
	j->cancelled = 1;
}

/* The queue's view of our jobs. */
static void
poll_queues(void)
{
	int used[BK_NBACKENDS] = { 0 };
	struct batch_state *v;
	const struct kind *kd;
	char why[300];
	size_t i, k, n;
	struct job *j;
	int b;

	for (i = 0; i < njobs; i++)
		if (jobs[i]->state < JS_GONE && kind_at(jobs[i]->kind))
			used[kind_at(jobs[i]->kind)->backend] = 1;
	for (b = 0; b < BK_NBACKENDS; b++) {
		if (!used[b])
			continue;
		v = NULL;
		n = 0;
		if (b != BK_LOCAL && batch_list((enum backend)b, &v, &n, why,
		    sizeof why) < 0) {
			msg_once(backend_name[b], "listing the %s queue: %s",
			    backend_name[b], why);
			continue;
		}
		msg_clear(backend_name[b]);
		for (i = 0; i < njobs; i++) {
			j = jobs[i];
			if (j->state >= JS_GONE || (kd = kind_at(j->kind)) == NULL ||
			    (int)kd->backend != b)
				continue;
			for (k = 0; k < n; k++)
				if (strcmp(v[k].id, j->id) == 0)
					break;
			if (b == BK_LOCAL ? local_alive(j) :
			    (k < n && strcmp(v[k].state, "done") != 0)) {
				enum jstate s = b == BK_LOCAL || (k < n &&
				    strcmp(v[k].state, "running") == 0) ?
				    JS_RUNNING : JS_PENDING;

				j->seen_ms = sd.now;
				if (k < n && strcmp(v[k].state, "error") == 0) {
					snprintf(j->why, sizeof j->why, "the "
					    "batch system put it in an error "
					    "state; cancelled");
					cancel_job(j, "error state");
				}
				if (s != j->state) {
					j->state = s;
					job_save(j);
				}
				continue;
			}
			if (sd.now - j->seen_ms < LIST_GRACE_MS &&
			    j->state == JS_PENDING && !j->cancelled)
				continue;	/* maybe not listed yet */
			/* it left the queue */
			if (j->had_worker || j->cancelled) {
				j->state = JS_GONE;
			} else {
				j->state = JS_FAILED;
				if (!j->why[0])
					snprintf(j->why, sizeof j->why, "left the "
					    "queue before its worker registered "
					    "(see %s)", kd->log_dir ? kd->log_dir :
					    "the spool's log/");
				want[j->kind].failures++;
				msg_warn("kind %s: job %s %s", kd->name, j->id,
				    j->why);
			}
			job_save(j);
		}
		free(v);
	}
}

/* ---- deciding ---- */

static int
shape_fits_kind(const struct shape *s, const struct kind *kd)
{
	return s->cores <= kd->cores && s->gpus <= kd->gpus &&
	    (s->mem_mb == 0 || kd->memory == 0 ||
	    (uint64_t)s->mem_mb << 20 <= kd->memory) &&
	    (s->walltime == 0 || kd->walltime == 0 ||
	    s->walltime + WORKER_END_MARGIN_S <= kd->walltime);
}

/* Jobs each adaptive kind needs for the queued and running work. */
static void
adapt_demand(uint64_t *need_cores)
{
	const struct kind *kd;
	size_t i, k;
	int best;

	for (i = 0; i < sd.nshapes; i++) {
		const struct shape *s = &sd.shapes[i];

		if (s->live == 0)
			continue;
		best = -1;
		for (k = 0; k < sd.sp.cfg.nkinds; k++) {
			kd = &sd.sp.cfg.kinds[k];
			if (want[k].mode != 2 || !shape_fits_kind(s, kd))
				continue;
			/* CPU work goes to kinds without GPUs first */
			if (best < 0 || (s->gpus == 0 && kd->gpus == 0 &&
			    sd.sp.cfg.kinds[best].gpus > 0))
				best = (int)k;
		}
		if (best >= 0)
			need_cores[best] += (uint64_t)s->live * s->cores;
	}
	for (i = 0; i < sd.nworkers; i++)
		if (sd.workers[i] && !sd.workers[i]->gone &&
		    sd.workers[i]->kind >= 0)
			need_cores[sd.workers[i]->kind] +=
			    sd.workers[i]->cores_used;
}

static uint32_t
wanted_jobs(int k, uint32_t have, const uint64_t *need_cores)
{
	const struct kind *kd = kind_at(k);
	struct want *w = &want[k];
	uint64_t n;

	if (w->mode == 1)
		return w->jobs;
	if (w->mode != 2)
		return have;	/* nothing asked: leave it alone */
	n = (need_cores[k] + kd->cores - 1) / kd->cores;
	if (n < w->minimum)
		n = w->minimum;
	if (w->maximum && n > w->maximum)
		n = w->maximum;
	if (n >= have) {
		w->down_since = 0;
		return (uint32_t)n;
	}
	if (w->down_since == 0)
		w->down_since = sd.now;
	if (sd.now - w->down_since < sd.sp.cfg.scale_down_ms)
		return have;	/* hysteresis */
	return (uint32_t)n;
}

static void
scale_kind(int k, const uint64_t *need_cores)
{
	const struct kind *kd = kind_at(k);
	struct want *w = &want[k];
	uint32_t have = 0, target, excess;
	struct worker *wk;
	size_t i;

	/* what we have: live workers not draining, and jobs still coming */
	for (i = 0; i < sd.nworkers; i++)
		if ((wk = sd.workers[i]) && wk->kind == k && !wk->gone &&
		    !wk->draining)
			have++;
	for (i = 0; i < njobs; i++)
		if (jobs[i]->kind == k && jobs[i]->state < JS_GONE &&
		    !jobs[i]->had_worker && !jobs[i]->cancelled)
			have++;
	target = wanted_jobs(k, have, need_cores);
	if (have < target) {
		if (w->stuck)
			return;
		if (w->failures >= sd.sp.cfg.max_submit_failures) {
			msg_warn("kind %s: %u worker jobs failed in a row; not "
			    "submitting more until the size is set again (spool "
			    "scale), see \"spool workers\"", kd->name, w->failures);
			w->stuck = 1;
			return;
		}
		if (sd.now < w->backoff_until)
			return;
		if (submit(k, target - have > SUBMIT_MAX ? SUBMIT_MAX :
		    target - have) < 0 || w->failures) {
			uint64_t delay = sd.sp.cfg.poll_ms << (w->failures < 12 ?
			    w->failures : 12);

			w->backoff_until = sd.now + (delay > BACKOFF_MAX_MS ?
			    BACKOFF_MAX_MS : delay);
		}
		return;
	}
	if (have == target)
		return;
	excess = have - target;
	/* 1. jobs without a worker yet, newest first */
	for (i = njobs; i-- > 0 && excess > 0;)
		if (jobs[i]->kind == k && jobs[i]->state < JS_GONE &&
		    !jobs[i]->had_worker && !jobs[i]->cancelled) {
			cancel_job(jobs[i], "scaling down");
			excess--;
		}
	/* 2. idle workers, then busy ones (drained: cancelled when idle) */
	for (int pass = 0; pass < 2 && excess > 0; pass++)
		for (i = 0; i < sd.nworkers && excess > 0; i++) {
			wk = sd.workers[i];
			if (!wk || wk->kind != k || wk->gone || wk->draining ||
			    (pass == 0 && wk->ntasks) ||
			    sd.now - wk->registered_ms < sd.sp.cfg.scale_down_ms / 4)
				continue;
			msg_info("kind %s: draining worker %s to scale down",
			    kd->name, wk->wid);
			wk->draining = 1;
			excess--;
		}
}

/* Drained workers of ours with nothing left to do: end their jobs. */
static void
end_drained(void)
{
	struct worker *wk;
	struct job *j;
	size_t i;

	for (i = 0; i < sd.nworkers; i++) {
		wk = sd.workers[i];
		if (!wk || wk->gone || !wk->draining || wk->ntasks ||
		    wk->kind < 0 || (j = job_find(wk->job)) == NULL)
			continue;
		cancel_job(j, "drained");
	}
}

static void
forget_old(void)
{
	size_t i;

	for (i = 0; i < njobs; i++)
		if (jobs[i]->state >= JS_GONE && jobs[i]->w == NULL &&
		    now_unix() - jobs[i]->submitted > GONE_KEEP_S)
			job_forget(i--);
}

void
scale_tick(void)
{
	uint64_t need[KINDS_MAX];
	size_t k;
	int any = 0;

	read_wants();
	for (k = 0; k < sd.sp.cfg.nkinds; k++)
		any |= want[k].mode != 0;
	if (!any && njobs == 0)
		return;
	if (sd.now < next_poll && !scale_dirty)
		return;
	next_poll = sd.now + sd.sp.cfg.poll_ms;
	poll_queues();
	if (sd.shutting_down)
		return;
	memset(need, 0, sizeof need);
	adapt_demand(need);
	for (k = 0; k < sd.sp.cfg.nkinds; k++)
		if (want[k].mode)
			scale_kind((int)k, need);
	end_drained();
	forget_old();
}

uint64_t
scale_next(void)
{
	size_t k;

	for (k = 0; k < sd.sp.cfg.nkinds; k++)
		if (want[k].mode)
			return next_poll;
	return njobs ? next_poll : UINT64_MAX;
}

/* Stop: cancel every job we have out; clear the sizes if asked. */
void
scale_stop(int clear_targets)
{
	size_t i;

	for (i = 0; i < njobs; i++)
		cancel_job(jobs[i], "stopping");
	if (!clear_targets)
		return;
	for (i = 0; i < sd.sp.cfg.nkinds; i++) {
		if (want[i].mode == 0)
			continue;
		if (fsop_unlink(sd.sp.fd[SD_SCALE], sd.sp.cfg.kinds[i].name) < 0 &&
		    errno != ENOENT)
			msg_warn("unlink: scale/%s: %m", sd.sp.cfg.kinds[i].name);
		memset(&want[i], 0, sizeof want[i]);
	}
}

/* Jobs we cancelled whose workers are still up (for a clean stop). */
int
scale_active(void)
{
	size_t i;
	int n = 0;

	for (i = 0; i < njobs; i++)
		if (jobs[i]->w && !jobs[i]->w->gone)
			n++;
	return n;
}
