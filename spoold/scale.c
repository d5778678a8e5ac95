/*
 * scale.c - how many worker jobs each kind should have, and getting
 * there.  The jobs themselves are jobs.c's.
 *
 * Wanted: scale/KIND, written by "spool scale" and "spool adapt":
 *	mode: fixed   jobs: N                   asked: TIME
 *	mode: adapt   minimum: A   maximum: B   asked: TIME   (in jobs)
 * It stays in the spool, so a restarted spoold scales as before; a new
 * "asked" time (the same size asked again) is a fresh start after
 * failures.
 *
 * Every cluster: poll-interval (and every STOP_POLL_MS after submitting a
 * job, and while a job it cancelled is still listed) spoold lists the
 * queues it has jobs in
 * (jobs_poll), then for each kind compares what it has, the workers
 * alive and not draining plus the jobs whose worker has not registered
 * yet (pending jobs count: nothing piles up), with what is wanted:
 *
 *  - too few: submit the difference, as array jobs where the backend
 *    has them; not while backing off after failures (a job that left
 *    the queue before its worker registered, or a failed submission:
 *    the delay doubles from the poll interval up to BACKOFF_MAX_MS;
 *    after cluster: max-submit-failures in a row, none until the size
 *    is asked again; a job whose worker registers ends the row), and
 *    saying why in jobs/ ("spool workers"); a fixed kind does not
 *    replace a worker that left after its idle timeout (its exited
 *    marker says so; its job's record keeps when, across a restart)
 *    while no queued task could run on the kind (queued_demand, the
 *    shapes as adaptive counts them): an idle pool gives its jobs back
 *    instead of churning them every idle-timeout, and work queued or a
 *    new "asked" brings it back to its size;
 *  - too many: cancel jobs that have no worker yet (newest first),
 *    then drain idle workers, then busy ones: a draining worker gets
 *    nothing more and its job is cancelled once it has no task left,
 *    so no task is killed to scale down.  A worker younger than a
 *    quarter of cluster: scale-down-delay is left alone, so a job is
 *    not cancelled as soon as it starts; an idle one that young is
 *    waited for, never replaced by draining a busy one.
 *
 * A worker of a kind with GPUs whose GPUs are all stuck (its status:
 * kept by processes of ended tasks that SIGKILL did not end, ckworker(1))
 * can do none of its kind's work: it is drained (its job cancelled once
 * it has no task left) and not counted, so another job is asked for.
 *
 * Between two polls, queued work asks for the jobs it needs within
 * SOON_MS (scale_soon), as Dask's adaptive interval does, not a
 * poll-interval later: an adaptive kind's share of it, and a fixed pool
 * whose workers left idle back to its size.  Without listing the
 * queues, counting the jobs as the last listing left them plus those
 * submitted since (one that left the queue meanwhile still counts until
 * the next listing, so this never asks for more than a poll would), and
 * up only.
 *
 * Adaptive: a kind's wanted number of jobs is what its share of the
 * queued tasks (per resource shape; a shape goes to the first adaptive
 * kind that can run it, kinds without GPUs first for work that needs
 * none, so a GPU backlog asks for GPU workers) plus the work committed
 * on its workers need, in the scarcest of cores, GPUs and memory a job
 * of the kind offers (struct demand), within [minimum, maximum].
 * Stuck GPUs of a worker that still counts are counted as taken.
 * Up at once; down only after wanting fewer for scale-down-delay
 * (hysteresis).  Queued tasks that no kind asked for and no worker can
 * run are counted by table.c (shapes_unfit) for the summary.
 *
 * Stopping (spool shutdown, SIGTERM): every job is cancelled and the
 * queues are listed every STOP_POLL_MS until none of our jobs is in
 * them and no worker of ours is alive (spoold's stop waits for this,
 * up to its grace).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fsop.h"
#include "jobs.h"
#include "journal.h"
#include "msg.h"
#include "rec.h"
#include "spoold.h"
#include "units.h"

#define BACKOFF_MAX_MS		(10 * 60 * 1000)
#define SUBMIT_MAX		1000	/* jobs submitted in one pass */
#define STOP_POLL_MS		1000
#define SOON_MS			1000	/* scale_soon: new work's jobs asked */
#define SCALE_MAX		100000

enum { W_NONE, W_FIXED, W_ADAPT };

struct want {
	int	mode;
	uint32_t jobs, minimum, maximum;
	double	asked;
	uint32_t failures;	/* in a row */
	uint32_t run;		/* of failures: one more at each new count */
	uint64_t backoff_until;
	uint64_t down_since;	/* adapt: wanted fewer since */
	uint64_t said;		/* adapt: the wanted jobs last logged, plus 1 */
	double	work_seen;	/* fixed: a pass last saw work queued for it */
	uint32_t said_idle;	/* fixed: the idle leavers last logged */
	int	stuck;		/* too many failures: wait for a new size */
};

static struct want want[KINDS_MAX];
static struct dirstamp st_scale;
static int scale_dirty = 1;
static int wants_changed;	/* read_wants: a size asked or taken away */
static uint64_t next_poll;
static uint64_t next_soon;	/* scale_soon */

static const struct kind *
kind_at(int i)
{
	return i >= 0 && (size_t)i < sd.sp.cfg.nkinds ? &sd.sp.cfg.kinds[i] :
	    NULL;
}

/* ---- the wanted sizes ---- */

static uint32_t
num(const struct buf *b, const char *key)
{
	char *v = rec_lookup(b->p, b->len, key);
	unsigned long n = v ? strtoul(v, NULL, 10) : 0;

	free(v);
	return n > SCALE_MAX ? SCALE_MAX : (uint32_t)n;
}

/* No size asked: a new count of failures too. */
static void
want_clear(size_t k)
{
	uint32_t run = want[k].run + 1;

	memset(&want[k], 0, sizeof want[k]);
	want[k].run = run;
}

static int
want_one(void *arg, const char *name, unsigned char type)
{
	struct buf b = BUF_INIT;
	struct want w;
	char *v;
	size_t k;

	(void)arg;
	(void)type;
	if (name[0] == '.')
		return 0;
	for (k = 0; k < sd.sp.cfg.nkinds; k++)
		if (strcmp(sd.sp.cfg.kinds[k].name, name) == 0)
			break;
	if (k == sd.sp.cfg.nkinds) {
		msg_once(name, "scale/%s: no such worker kind in spool.yaml; "
		    "ignored", name);
		return 0;
	}
	if (fsop_read_file(sd.sp.fd[SD_SCALE], name, 4096, &b, NULL) < 0) {
		if (errno != ENOENT)
			msg_warn("read: scale/%s: %m", name);
		buf_free(&b);
		return 0;
	}
	memset(&w, 0, sizeof w);
	v = rec_lookup(b.p, b.len, "mode");
	w.mode = v && !strcmp(v, "fixed") ? W_FIXED : v && !strcmp(v, "adapt") ?
	    W_ADAPT : W_NONE;
	free(v);
	w.jobs = num(&b, "jobs");
	w.minimum = num(&b, "minimum");
	w.maximum = num(&b, "maximum");
	if ((v = rec_lookup(b.p, b.len, "asked")) != NULL) {
		w.asked = strtod(v, NULL);
		free(v);
	}
	buf_free(&b);
	if (w.mode != want[k].mode || w.jobs != want[k].jobs ||
	    w.minimum != want[k].minimum || w.maximum != want[k].maximum ||
	    w.asked != want[k].asked) {
		if (w.mode == W_FIXED)
			msg_info("kind %s: %u job%s asked", name, w.jobs,
			    w.jobs == 1 ? "" : "s");
		else if (w.mode == W_ADAPT)
			msg_info("kind %s: adaptive, %u to %u jobs", name,
			    w.minimum, w.maximum);
		w.failures = 0;	/* a new size is a new start */
		w.run = want[k].run + 1;
		w.stuck = 0;
		w.backoff_until = 0;
		w.down_since = 0;
		want[k] = w;
		wants_changed = 1;
	}
	return 0;
}

static void
read_wants(void)
{
	size_t k;

	if (!scale_dirty && !(sd.rescan_due &&
	    dirstamp_changed(sd.sp.rootfd, "scale", &st_scale)))
		return;
	scale_dirty = 0;
	/* a size removed by hand is no size */
	for (k = 0; k < sd.sp.cfg.nkinds; k++) {
		struct stat st;

		if (want[k].mode != W_NONE && fsop_stat(sd.sp.fd[SD_SCALE],
		    sd.sp.cfg.kinds[k].name, &st) < 0 && errno == ENOENT) {
			msg_info("kind %s: no size asked any more",
			    sd.sp.cfg.kinds[k].name);
			want_clear(k);
			wants_changed = 1;
		}
	}
	dirstamp_listed(&st_scale, fsop_list(sd.sp.fd[SD_SCALE], ".", want_one,
	    NULL), "scale");
	/*
	 * A size asked, or taken away: act on it now.  Not at every
	 * listing: scale/ is listed again every DIRSTAMP_FORCE rescans
	 * whatever its stamp says, and each was a listing of the queues,
	 * every few seconds whatever poll-interval asked.
	 */
	if (wants_changed)
		next_poll = 0;
	wants_changed = 0;
}

void
scale_note(void)
{
	scale_dirty = 1;
}

/* After a submission or a cancel: list the queue again within 1 s. */
void
scale_poll_soon(void)
{
	if (next_poll > sd.now + STOP_POLL_MS)
		next_poll = sd.now + STOP_POLL_MS;
}

/* The job records are loaded: a worker's job without one has none. */
static int jobs_loaded;

static void link_job(struct worker *w);

void
scale_recover(void)
{
	size_t i;

	jobs_recover();
	jobs_loaded = 1;
	/*
	 * The workers were recovered first, before any job was known: link
	 * each live one to its job now (a local job of another host is
	 * judged by its worker alone, see jobs.c poll_elsewhere).
	 */
	for (i = 0; i < sd.nworkers; i++)
		if (sd.workers[i] && !sd.workers[i]->gone)
			link_job(sd.workers[i]);
	read_wants();
}

void
scale_job_failed(int k)
{
	if (k >= 0 && (size_t)k < sd.sp.cfg.nkinds)
		want[k].failures++;
}

uint32_t
scale_failure_run(int k)
{
	return k >= 0 && (size_t)k < sd.sp.cfg.nkinds ? want[k].run : 0;
}

/*
 * The failure counted for a submission (scale_up) is taken back: the
 * batch system took its job all the same.  A kind that stopped
 * submitting on that count (stuck) submits again; the backoff stays.
 * Only from the count it was counted in (run): once the count started
 * again, the failures in it are others'.
 */
void
scale_submission_taken(int k, uint32_t run)
{
	struct want *w;

	if (k < 0 || (size_t)k >= sd.sp.cfg.nkinds || want[k].run != run)
		return;
	w = &want[k];
	if (w->failures > 0)
		w->failures--;
	if (w->stuck && w->failures < sd.sp.cfg.max_submit_failures) {
		w->stuck = 0;
		msg_info("kind %s: a submission counted as failed had its "
		    "job taken: submitting again (%u failure%s in a row)",
		    kind_at(k)->name, w->failures, w->failures == 1 ? "" :
		    "s");
	}
}

/* ---- workers and their jobs ---- */

void
scale_worker_registered(struct worker *w)
{
	const char *at = strchr(w->info.name, '@');
	char kname[KIND_NAME_MAX];
	size_t k;

	w->kind = -1;
	w->registered_ms = sd.now;
	if (at == NULL)
		return;
	snprintf(w->job, sizeof w->job, "%s", at + 1);
	snprintf(kname, sizeof kname, "%.*s", (int)(at - w->info.name),
	    w->info.name);
	for (k = 0; k < sd.sp.cfg.nkinds; k++)
		if (strcmp(sd.sp.cfg.kinds[k].name, kname) == 0)
			w->kind = (int)k;
	link_job(w);
}

/* w (its kind and job known) and its job's record, if it has one. */
static void
link_job(struct worker *w)
{
	struct job *j;

	if (w->job[0] == 0)
		return;
	j = jobs_find(w->job);
	/*
	 * A job with no record, if the worker says it runs in it (--job,
	 * as the job script starts it; not a worker merely named so by
	 * hand); only once the records are loaded: see scale_recover.
	 */
	if (j == NULL && jobs_loaded && w->kind >= 0 && !w->gone &&
	    strcmp(w->info.job, w->job) == 0)
		j = jobs_adopt(w->job, w->kind);
	if (j != NULL && !w->gone) {
		j->w = w;
		/*
		 * A job of ours came up: the failures before it were not
		 * in a row with those after (max-submit-failures), and
		 * the next submission need not wait for them.
		 */
		if (j->kind >= 0 && !j->r.had_worker) {
			want[j->kind].failures = 0;
			want[j->kind].run++;
			want[j->kind].backoff_until = 0;
		}
		if (!j->r.had_worker || j->r.state != JS_RUNNING) {
			/* its worker may come before the listing says so */
			if (j->r.state != JS_RUNNING)
				journal_job(j->r.id, "started", NULL);
			j->r.had_worker = 1;
			j->r.state = JS_RUNNING;
			j->r.reason[0] = 0;
			jobs_save(j);
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

/*
 * w left after its idle timeout: its job's record says when (once: a
 * restarted spoold sees the marker again), so that a fixed pool does
 * not replace it while no work waits, across a restart too.
 */
void
scale_worker_left_idle(const struct worker *w)
{
	struct job *j;

	if (w->job[0] == 0 || (j = jobs_find(w->job)) == NULL || j->r.idle > 0)
		return;
	j->r.idle = now_unix();
	jobs_save(j);
}

/* ---- deciding ---- */

/*
 * The bytes of memory a job of kd is granted: its memory in whole MiB,
 * rounded up (the job script asks for that, and its worker has that:
 * ckworker rounds --memory up), so "4GB" is 3815 MiB, and a task of
 * "4GB" fits.  Tasks are counted in bytes, as the worker counts them.
 */
static uint64_t
kind_memory(const struct kind *kd)
{
	return units_mib_up(kd->memory) << 20;	/* (at most 1 PiB) */
}

static int
task_fits_kind(const struct task *t, const struct kind *kd)
{
	return t->cores <= kd->cores && t->gpus <= kd->gpus &&
	    (t->memory == 0 || kd->memory == 0 ||
	    t->memory <= kind_memory(kd)) &&
	    (t->walltime == 0 || kd->walltime == 0 ||
	    t->walltime + WORKER_END_MARGIN_S <= kd->walltime);
}

/*
 * A worker job spoold submitted whose worker has not registered yet
 * (queued, or started and still coming up) is of a kind that can run t
 * (place.c: no task is placed ahead on a busy worker while one is).
 */
int
scale_worker_coming(const struct task *t)
{
	const struct job *j;
	size_t i;

	for (i = 0; i < njobs; i++) {
		j = jobs[i];
		if (j == NULL || j->w != NULL || j->r.had_worker ||
		    j->cancelled || j->error || j->kind < 0 ||
		    (j->r.state != JS_PENDING && j->r.state != JS_RUNNING))
			continue;
		if (task_fits_kind(t, kind_at(j->kind)))
			return 1;
	}
	return 0;
}

/* A kind has a size asked (not 0). */
static int
kind_asked(size_t k)
{
	return want[k].mode != W_NONE && (want[k].mode == W_FIXED ?
	    want[k].jobs : want[k].maximum) > 0;
}

int
scale_asked(void)
{
	size_t k;

	for (k = 0; k < sd.sp.cfg.nkinds; k++)
		if (kind_asked(k))
			return 1;
	return jobs_outstanding() > 0;
}

int
scale_could_start(const struct task *t)
{
	size_t k;

	for (k = 0; k < sd.sp.cfg.nkinds; k++)
		if (kind_asked(k) && task_fits_kind(t, &sd.sp.cfg.kinds[k]))
			return 1;
	return scale_worker_coming(t);
}

/*
 * What an adaptive kind's queued and committed work needs, in each
 * resource its jobs are sized by: the kind needs as many jobs as the
 * scarcest of them asks for (a GPU pool of 32 cores and 4 GPUs a job
 * needs 2 jobs for 8 queued one-core one-GPU tasks, not 1).
 */
struct demand {
	uint64_t cores;
	uint64_t gpus;
	uint64_t memory;	/* bytes, of tasks that ask for memory */
	uint64_t tasks;		/* each takes a slot: "processes" a job */
};

static void
demand_add(struct demand *d, uint64_t n, uint64_t cores, uint64_t gpus,
    uint64_t memory)
{
	d->cores += n * cores;
	d->gpus += n * gpus;
	/* (bytes of up to 1 PiB a task: a sum that big is "too much") */
	memory = n && memory > UINT64_MAX / n ? UINT64_MAX : n * memory;
	d->memory = memory > UINT64_MAX - d->memory ? UINT64_MAX :
	    d->memory + memory;
}

/*
 * The queued tasks, per resource shape, added to the demand of the
 * first kind of the mode that can run them (kinds without GPUs first
 * for work that needs none); 0 if no kind has the mode, else 1.  (What
 * no kind can run is counted by shapes_unfit, table.c.)
 */
static int
queued_demand(struct demand *need, int mode)
{
	const struct kind *kd;
	struct task probe;
	size_t i, k;
	int best, any = 0;

	for (k = 0; k < sd.sp.cfg.nkinds; k++)
		any |= want[k].mode == mode;
	if (!any)
		return 0;
	for (i = 0; i < sd.nshapes; i++) {
		const struct shape *s = sd.shapes[i];

		if (s->live == 0)
			continue;
		shape_probe(s, &probe);
		best = -1;
		for (k = 0; k < sd.sp.cfg.nkinds; k++) {
			kd = &sd.sp.cfg.kinds[k];
			if (want[k].mode != mode || !task_fits_kind(&probe, kd))
				continue;
			if (best < 0 || (s->gpus == 0 && kd->gpus == 0 &&
			    sd.sp.cfg.kinds[best].gpus > 0))
				best = (int)k;
		}
		if (best >= 0) {
			demand_add(&need[best], s->live, s->cores, s->gpus,
			    s->memory);
			need[best].tasks += s->live;
		}
	}
	return 1;
}

static void
adapt_demand(struct demand *need)
{
	const struct worker *wk;
	size_t i;

	if (!queued_demand(need, W_ADAPT))
		return;
	/*
	 * Committed work, and the GPUs of a worker that stay kept by
	 * processes SIGKILL did not end (they are capacity the pool does
	 * not have; a worker with all of them stuck is drained already).
	 */
	for (i = 0; i < sd.nworkers; i++) {
		if ((wk = sd.workers[i]) == NULL || wk->gone || wk->kind < 0)
			continue;
		demand_add(&need[wk->kind], 1, wk->cores_used, wk->gpus_used +
		    (wk->draining ? 0 : wk->gpus_held), wk->mem_used);
		need[wk->kind].tasks += wk->ntasks;
	}
}

static uint64_t
jobs_for(uint64_t need, uint64_t per_job)
{
	/* (not need + per_job - 1: bytes of memory may add up to the top) */
	return per_job ? need / per_job + (need % per_job != 0) : 0;
}

/*
 * Say what an adaptive kind wants whenever that changes, and why: the
 * jobs its work needs and which resource asks for the most (an admin
 * reading why a GPU pool grew sees "by GPUs"), within its bounds.
 */
static void
say_want(int k, const struct demand *d, uint64_t need, uint64_t n,
    const char *by)
{
	const struct kind *kd = kind_at(k);
	struct want *w = &want[k];

	if (w->said == n + 1)
		return;
	w->said = n + 1;
	msg_info("kind %s: adaptive: wants %" PRIu64 " job%s: queued and "
	    "running work needs %" PRIu64 " by %s (%" PRIu64 " core%s, %"
	    PRIu64 " GPU%s, %" PRIu64 " MiB asked; a job has %u, %u, %" PRIu64
	    "), bounds %u-%u", kd->name, n, n == 1 ? "" : "s", need, by,
	    d->cores, d->cores == 1 ? "" : "s", d->gpus,
	    d->gpus == 1 ? "" : "s", units_mib_up(d->memory), kd->cores,
	    kd->gpus, units_mib_up(kd->memory), w->minimum, w->maximum);
}

/*
 * j's worker left idle (its record says when), and its kind is a fixed
 * pool that has seen no work queued for it since, nor a size asked
 * again: the job is not replaced, and its record is kept (a restarted
 * spoold counts it too).
 */
int
scale_job_released(const struct job *j)
{
	const struct want *w;

	if (j->kind < 0 || (size_t)j->kind >= sd.sp.cfg.nkinds ||
	    j->r.idle <= 0)
		return 0;
	w = &want[j->kind];
	return w->mode == W_FIXED && j->r.idle > w->asked &&
	    j->r.idle > w->work_seen;
}

/* A pass saw queued work that a fixed kind can run: it fills up again. */
static void
fixed_work_seen(void)
{
	struct demand queued[KINDS_MAX];
	size_t k;

	memset(queued, 0, sizeof queued);
	if (!queued_demand(queued, W_FIXED))
		return;
	for (k = 0; k < sd.sp.cfg.nkinds; k++)
		if (want[k].mode == W_FIXED && queued[k].tasks)
			want[k].work_seen = now_unix();
}

/*
 * A fixed pool holds its N jobs while there is work; a worker that
 * left idle is not replaced until work is queued for the kind (or the
 * size is asked again), so that an idle pool gives its allocations
 * back instead of churning jobs every idle-timeout.  Never fewer than
 * it has: this only holds back submissions.
 */
static uint32_t
fixed_jobs(int k, uint32_t have)
{
	struct want *w = &want[k];
	uint32_t idle = 0;
	size_t i;

	for (i = 0; i < njobs; i++)
		if (jobs[i]->kind == k && scale_job_released(jobs[i]))
			idle++;
	if (idle != w->said_idle) {
		w->said_idle = idle;
		if (idle && have < w->jobs)
			msg_info("kind %s: %u worker%s left idle and no work is "
			    "queued for the kind: not replaced until some is",
			    kind_at(k)->name, idle, idle == 1 ? "" : "s");
	}
	if (have >= w->jobs)
		return w->jobs;
	return have + idle >= w->jobs ? have : w->jobs - idle;
}

static uint32_t
wanted_jobs(int k, uint32_t have, const struct demand *need, int up_only)
{
	const struct kind *kd = kind_at(k);
	struct want *w = &want[k];
	const char *by = "cores";
	uint64_t raw, n, g, m;

	if (w->mode == W_FIXED)
		return fixed_jobs(k, have);
	raw = jobs_for(need[k].cores, kd->cores);
	if ((g = jobs_for(need[k].gpus, kd->gpus)) > raw) {
		raw = g;
		by = "GPUs";
	}
	if ((m = jobs_for(need[k].memory, kind_memory(kd))) > raw) {
		raw = m;
		by = "memory";
	}
	/*
	 * processes P: P slots a job, each task in one with at least
	 * cores/P cores, so one-core tasks fill a job by its slots long
	 * before its cores add up (with P 1, a slot per core: the cores
	 * above count them).
	 */
	if (kd->processes > 1 &&
	    (m = jobs_for(need[k].tasks, kd->processes)) > raw) {
		raw = m;
		by = "slots";
	}
	n = raw < w->minimum ? w->minimum : raw;
	if (n > w->maximum)
		n = w->maximum;
	say_want(k, &need[k], raw, n, by);
	if (n >= have) {
		w->down_since = 0;
		return (uint32_t)n;
	}
	if (up_only)
		return have;	/* fewer is the polls' to judge */
	if (w->down_since == 0)
		w->down_since = sd.now;
	if (sd.now - w->down_since < sd.sp.cfg.scale_down_ms)
		return have;	/* hysteresis */
	return (uint32_t)n;
}

static void
scale_up(int k, uint32_t n)
{
	const struct kind *kd = kind_at(k);
	struct want *w = &want[k];
	uint64_t delay;

	if (w->stuck || sd.now < w->backoff_until)
		return;
	if (w->failures >= sd.sp.cfg.max_submit_failures) {
		msg_warn("kind %s: %u worker jobs failed in a row; not "
		    "submitting more until a size is asked again (spool scale "
		    "or adapt); \"spool workers\" says why", kd->name,
		    w->failures);
		w->stuck = 1;
		return;
	}
	if (jobs_submit(k, n > SUBMIT_MAX ? SUBMIT_MAX : n) < 0)
		w->failures++;
	else if (w->failures == 0)
		return;
	delay = sd.sp.cfg.poll_ms << (w->failures < 12 ? w->failures : 12);
	w->backoff_until = sd.now + (delay > BACKOFF_MAX_MS ? BACKOFF_MAX_MS :
	    delay);
}

/*
 * Step 1 of a scale-down: cancel up to excess jobs of kind k that have
 * no worker yet, newest first, in one command a batch system
 * (jobs_cancel_these): an adaptive pool whose burst of work ended
 * before its jobs started drops them all at once.  A job whose cancel
 * failed does not count: an older one is tried in its stead.  What is
 * left of the excess.
 */
static uint32_t
cancel_pending(int k, uint32_t excess)
{
	struct job **v = NULL;
	size_t i = njobs, n;

	while (excess > 0 && i > 0) {
		for (n = 0; i > 0 && n < excess;) {
			i--;
			if (jobs[i]->kind != k || jobs[i]->r.state >= JS_GONE ||
			    jobs[i]->r.had_worker || jobs[i]->cancelled)
				continue;
			if (v == NULL)
				v = xcalloc(njobs, sizeof *v);
			v[n++] = jobs[i];
		}
		jobs_cancel_these(v, n, "scaling down");
		while (n-- > 0)
			if (v[n]->cancelled)
				excess--;
	}
	free(v);
	return excess;
}

static void
scale_down(int k, uint32_t excess)
{
	const struct kind *kd = kind_at(k);
	struct worker *wk;
	size_t i;
	int pass;

	excess = cancel_pending(k, excess);
	/*
	 * 2. idle workers, then busy ones: drained, cancelled when idle.
	 * An idle worker too young to drain still counts against the
	 * excess: it is drained once old enough, never a busy one in its
	 * stead.
	 */
	for (pass = 0; pass < 2 && excess > 0; pass++)
		for (i = 0; i < sd.nworkers && excess > 0; i++) {
			wk = sd.workers[i];
			if (!wk || wk->kind != k || wk->gone || wk->draining ||
			    (pass == 0 && wk->ntasks) ||
			    (pass == 1 && !wk->ntasks))
				continue;
			if (sd.now - wk->registered_ms <
			    sd.sp.cfg.scale_down_ms / 4) {
				if (pass == 0)
					excess--;	/* later, not a busy one */
				continue;
			}
			msg_info("kind %s: draining worker %s (%s) to scale "
			    "down", kd->name, wk->wid, wk->ntasks ? "busy" :
			    "idle");
			worker_drain(wk, "scale-down");
			excess--;
		}
}

/*
 * A scaled worker of a kind with GPUs whose GPUs are all stuck can do
 * none of its kind's work: drain it, so that it is not counted and its
 * job ends once it has no task left.
 */
static void
drain_if_gpus_stuck(struct worker *wk)
{
	const struct kind *kd;

	if (wk->gone || wk->draining || wk->kind < 0 ||
	    want[wk->kind].mode == W_NONE)
		return;
	kd = kind_at(wk->kind);
	if (kd->gpus == 0 || wk->info.gpus == 0 || worker_gpus_usable(wk) > 0)
		return;
	msg_warn("kind %s: draining worker %s: its %u GPU%s %s kept by "
	    "processes of ended tasks that SIGKILL did not end; asking for "
	    "another worker instead", kd->name, wk->wid, wk->info.gpus,
	    wk->info.gpus == 1 ? "" : "s", wk->info.gpus == 1 ? "is" : "are");
	worker_drain(wk, "gpus-held");
}

static void
scale_kind(int k, const struct demand *need, int up_only)
{
	uint32_t have = 0, target;
	struct worker *wk;
	size_t i;

	for (i = 0; i < sd.nworkers; i++) {
		if ((wk = sd.workers[i]) == NULL || wk->kind != k || wk->gone ||
		    wk->draining)
			continue;
		have++;
	}
	/* (a job in an error state will never run, cancelled or not yet) */
	for (i = 0; i < njobs; i++)
		if (jobs[i]->kind == k && jobs[i]->r.state < JS_GONE &&
		    !jobs[i]->r.had_worker && !jobs[i]->cancelled &&
		    !jobs[i]->error)
			have++;
	target = wanted_jobs(k, have, need, up_only);
	if (have < target)
		scale_up(k, target - have);
	else if (have > target && !up_only)
		scale_down(k, have - target);
}

/*
 * Drained workers of our jobs with nothing left to do: end the jobs,
 * together (jobs_cancel_these).  A job with several workers (an
 * allocation's) goes in once.
 */
static void
end_drained(void)
{
	struct worker *wk;
	struct job *j, **v = NULL;
	size_t i, k, n = 0;

	for (i = 0; i < sd.nworkers; i++) {
		wk = sd.workers[i];
		if (!wk || wk->gone || !wk->draining || wk->ntasks ||
		    wk->job[0] == 0 || (j = jobs_find(wk->job)) == NULL ||
		    j->cancelled || j->r.state >= JS_GONE)
			continue;
		/* (most passes have none: no allocation then) */
		if (v == NULL)
			v = xcalloc(njobs, sizeof *v);
		for (k = 0; k < n && v[k] != j; k++)
			;
		if (k == n)
			v[n++] = j;
	}
	if (v == NULL)
		return;
	jobs_cancel_these(v, n, "drained");
	free(v);
}

/* Work queued and a size asked: scale_soon has something to judge. */
static int
soon_pending(void)
{
	size_t k;

	if (sd.c.queued == 0 || sd.shutting_down)
		return 0;
	for (k = 0; k < sd.sp.cfg.nkinds; k++)
		if (want[k].mode != W_NONE)
			return 1;
	return 0;
}

/* Between polls: the jobs queued work needs, asked for soon (above). */
static void
scale_soon(void)
{
	struct demand need[KINDS_MAX];
	size_t k;

	if (sd.now < next_soon || !soon_pending())
		return;
	next_soon = sd.now + SOON_MS;
	memset(need, 0, sizeof need);
	adapt_demand(need);
	fixed_work_seen();
	for (k = 0; k < sd.sp.cfg.nkinds; k++)
		if (want[k].mode != W_NONE)
			scale_kind((int)k, need, 1);
}

void
scale_tick(void)
{
	struct demand need[KINDS_MAX];
	size_t k;
	int any = 0;

	read_wants();
	for (k = 0; k < sd.sp.cfg.nkinds; k++)
		any |= want[k].mode != W_NONE;
	if (!any && jobs_outstanding() == 0) {
		/* the records of ended jobs still go in their time */
		jobs_forget_old();
		return;
	}
	if (sd.now < next_poll) {
		scale_soon();
		return;
	}
	next_poll = sd.now + (sd.shutting_down && sd.sp.cfg.poll_ms >
	    STOP_POLL_MS ? STOP_POLL_MS : sd.sp.cfg.poll_ms);
	next_soon = sd.now + SOON_MS;
	jobs_poll();
	for (k = 0; k < njobs; k++) {
		if (jobs[k]->r.state >= JS_GONE && jobs[k]->w)
			worker_job_ended(jobs[k]->w, jobs[k]->cancelled);
		if (jobs[k]->r.state < JS_GONE && jobs[k]->cancelled)
			scale_poll_soon();	/* until it has left */
	}
	if (sd.shutting_down) {
		/* jobs that were pending when the stop began */
		jobs_cancel_all("stopping");
		return;
	}
	for (k = 0; k < sd.nworkers; k++)
		if (sd.workers[k])
			drain_if_gpus_stuck(sd.workers[k]);
	memset(need, 0, sizeof need);
	adapt_demand(need);
	fixed_work_seen();
	for (k = 0; k < sd.sp.cfg.nkinds; k++)
		if (want[k].mode != W_NONE)
			scale_kind((int)k, need, 0);
	end_drained();
	jobs_forget_old();
}

uint64_t
scale_next(void)
{
	size_t k;

	if (soon_pending() && next_soon < next_poll)
		return next_soon;
	for (k = 0; k < sd.sp.cfg.nkinds; k++)
		if (want[k].mode != W_NONE)
			return next_poll;
	return jobs_outstanding() ? next_poll : UINT64_MAX;
}

/* Stop: cancel every job we have out; forget the sizes if asked. */
void
scale_stop(int clear_sizes)
{
	size_t i;

	jobs_cancel_all("stopping");
	next_poll = 0;
	if (!clear_sizes)
		return;
	for (i = 0; i < sd.sp.cfg.nkinds; i++) {
		if (fsop_unlink(sd.sp.fd[SD_SCALE], sd.sp.cfg.kinds[i].name) < 0 &&
		    errno != ENOENT)
			msg_warn("unlink: scale/%s: %m", sd.sp.cfg.kinds[i].name);
		want_clear(i);
	}
}

size_t
scale_active(void)
{
	return jobs_outstanding();
}
