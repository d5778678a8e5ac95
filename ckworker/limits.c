/*
 * limits.c - binding a task to its cores, limiting its memory, and
 * stopping its whole process tree.
 *
 * Cores: the task's first process binds itself to the task's CPUs
 * (sched_setaffinity) and moves itself into the task's cgroup and
 * into the cpuset of its CPUs (cpuset.c, --cpu-limit) before it execs
 * (taskspawn.c, or identity.c for a task forked to run as its
 * submitter; limits_plan), so everything it starts inherits them.  A
 * worker that took fewer cores than its mask allows is bound to them
 * from its start (bind_worker); a task whose CPUs are all of the
 * worker's is then born bound and its process skips the call.  The
 * worker neither moves nor rebinds itself per task: in a task's cgroup,
 * even for a moment, it could be the process the kernel's OOM killer
 * takes there.  Where no cpuset can be made (no cgroup v1 cpuset
 * hierarchy that the worker may write, or --cpu-limit affinity), a task
 * may widen its own mask again: the worker says so at its start.
 *
 * Memory, by the method chosen at start (limits_init; "auto" takes the
 * first that works, in this order):
 *
 *   cgroup2   a child cgroup per task under the worker's own delegated
 *	       cgroup (cgroup.c): memory.max = the limit, memory.swap.max
 *	       0, memory.oom.group 1.  The kernel stops the task at its
 *	       limit; an oom_kill in memory.events makes the result say
 *	       memory.  Peak: memory.peak (or the largest memory.current
 *	       sampled); CPU times: the cgroup's cpu.stat (whole tree).
 *   cgroup1   the same with the v1 memory controller:
 *	       memory.limit_in_bytes (and memsw), oom_kill in
 *	       memory.oom_control, peak memory.max_usage_in_bytes.  v1
 *	       has no oom.group: when the OOM killer took one process,
 *	       the worker stops the rest at the next sample.
 *   watchdog  every sample interval, the sum of the RSS of the task's
 *	       processes (ptree.c); above the limit the tree is frozen
 *	       and killed, and the result says memory.  A task can
 *	       allocate faster than the interval: what it reaches in one
 *	       interval beyond its limit is the residual risk.  Peak: the
 *	       largest sum sampled, or the largest maxrss of the task's
 *	       processes when larger (memory_peak).
 *   none      memory is not limited (--memory-limit none).
 *
 * The method is the worker's option, else spool.yaml's (worker:
 * memory-limit, cpu-limit, gpu-limit), else auto (main.c).
 *
 * Trees: with a cgroup method a task's processes are its cgroup's,
 * including those that call setsid() or double-fork.  Otherwise the
 * worker follows the tree itself every sample interval (ptree.c).  It
 * is a child subreaper, so orphans of a task become the worker's
 * children; one whose environment names a running task (SPOOL_TASK_ID,
 * SPOOL_ATTEMPT) joins that task's tree, one that names a task that has
 * ended is killed, and one that names none is killed when no task runs
 * (it can only be a leftover of a task).
 *
 * Stopping (limits_signal): the task's process group and every process
 * of its cgroup or of its followed tree.  When the main process ends,
 * whatever is left of the task is killed (limits_reaped).
 *
 * GPUs: where NVML is there, each task's GPUs are sampled at the same
 * interval for the result's gpu_util and gpu_memory_peak.  A task's
 * cores go to the next task as soon as its main process is reaped; its
 * GPUs only once nothing of it is left (gpu_hold): a process killed on
 * a GPU gives its memory there back as it exits, and the next task
 * must not start beside it.  Left means: in its cgroup (which the
 * kernel empties of a process once its memory and files are released),
 * or, out of one, in its process group or among the worker's children
 * (as subreaper it gets every orphan) unless these are proved other
 * tasks' (ptree_none_left, ptree_task_left).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "cgroup.h"
#include "msg.h"
#include "taskspawn.h"
#include "units.h"
#include "worker.h"

const char *const limit_method_name[LM_N] = {
	"none", "watchdog", "cgroup1", "cgroup2",
};

static cpu_set_t *own_set, *one_set;	/* the worker's mask; a task's */
static int subreaper;		/* PR_SET_CHILD_SUBREAPER is in force */
static size_t set_size;

/* cgroups of ended tasks not removed yet (processes still dying) */
static char (*pending)[WDIR_ANAME_MAX];
static size_t npending;
/* cgroups of tasks reaped in this pass: removed (or kept for a next
 * task, cgroup_task_recycle) after the next start */
static struct ended {
	char	name[WDIR_ANAME_MAX];
	uint64_t limit;
	int	clean;		/* no OOM kill (failcnt 0 where the kernel counts none) */
} *ended;
static size_t nended;
/* GPUs of ended tasks kept until nothing of the task is left */
static struct held {
	char	cg[WDIR_ANAME_MAX];	/* its cgroup, "" if it had none */
	pid_t	pgid;		/* out of a cgroup: its process group */
	uint64_t id;
	uint32_t attempt;
	uint32_t gpu[TASK_GPUS_MAX];
	uint32_t ngpu;
	uint64_t since_ms;
	int	warned;
} *held;
static size_t nheld;

#define GPU_HOLD_POLL_MS	10	/* how often a kept GPU is looked at */
#define GPU_HOLD_WARN_MS	10000	/* kept longer: said once */

static int	gpu_unhold(void);

static int
by_cgroup(void)
{
	return wk.method == LM_CGROUP1 || wk.method == LM_CGROUP2;
}

static int
try_cgroup(int version, int dry, char *desc, size_t descsize,
    struct buf *notes)
{
	char where[PATH_MAX], why[768];

	if (cgroup_setup(version, dry, where, sizeof where, why,
	    sizeof why) < 0) {
		buf_printf(notes, "%scgroup%d: %s", notes->len ? "; " : "",
		    version, why);
		return -1;
	}
	snprintf(desc, descsize, "cgroup%d (%s%s)", version, dry ?
	    "would use " : "", where);
	return 0;
}

static void
at_exit(void)
{
	(void)cgroup_cleanup();
}

/* The CPUs of the worker's units idx[0..n-1] (idx NULL: the first n)
 * into one_set. */
static void
units_into_one_set(const uint32_t *idx, uint32_t n)
{
	uint32_t k, p;

	CPU_ZERO_S(set_size, one_set);
	for (k = 0; k < n; k++) {
		const struct cores_unit *u = &wk.unit[idx ? idx[k] : k];

		for (p = 0; p < u->npu; p++)
			CPU_SET_S(u->pu[p], set_size, one_set);
	}
}

/*
 * A worker that took fewer cores than its mask allows binds itself to
 * the ones it took: a task's first process is then born on its cores
 * and need not be moved there (a sched_setaffinity that moves the
 * caller waits until it runs on the other CPU), and the worker's own
 * CPU time is spent on the cores it offers, as in a batch job that
 * binds it.  Threads started before this (NVML's) keep the old mask.
 */
static void
bind_worker(void)
{
	units_into_one_set(NULL, wk.nunit);
	if (CPU_COUNT_S(set_size, one_set) == 0 ||
	    CPU_EQUAL_S(set_size, one_set, own_set))
		return;
	if (sched_setaffinity(0, set_size, one_set) < 0)
		msg_warn("sched_setaffinity: the worker to its CPUs %s: %m "
		    "(tasks are moved to theirs as they start)", wk.info.cpus);
	else
		memcpy(own_set, one_set, set_size);
}

void
limits_init(const char *method, const char *said, int dry, char *desc,
    size_t descsize)
{
	struct buf notes = BUF_INIT;
	const char *m = method ? method : "auto";
	int v2 = 0, v1 = 0, wd = 0;
	size_t len;

	if (!dry)	/* dead workers' cgroups, whatever this one makes */
		cgroup_sweep_host();
	if (strcmp(m, "auto") == 0)
		v2 = v1 = wd = 1;
	else if (strcmp(m, "cgroup") == 0)
		v2 = v1 = 1;
	else if (strcmp(m, "cgroup2") == 0)
		v2 = 1;
	else if (strcmp(m, "cgroup1") == 0)
		v1 = 1;
	else if (strcmp(m, "watchdog") == 0)
		wd = 1;		/* else none (config_limit_method) */
	if (v2 && try_cgroup(2, dry, desc, descsize, &notes) == 0)
		wk.method = LM_CGROUP2;
	else if (v1 && try_cgroup(1, dry, desc, descsize, &notes) == 0)
		wk.method = LM_CGROUP1;
	else if (wd) {
		wk.method = LM_WATCHDOG;
		snprintf(desc, descsize, "watchdog (the sum of the RSS of each "
		    "task's processes)");
	} else if (strcmp(m, "none") == 0) {
		wk.method = LM_NONE;
		snprintf(desc, descsize, "none (%s): memory is not limited",
		    said);
	} else
		msg_fatal("%s: %s", said, notes.p);
	if (notes.len && wk.method != LM_NONE) {
		len = strlen(desc);
		snprintf(desc + len, descsize - len, "; not %s", notes.p);
	}
	buf_free(&notes);
	if (own_set == NULL) {
		set_size = CPU_ALLOC_SIZE(CORES_CPU_MAX);
		if ((own_set = CPU_ALLOC(CORES_CPU_MAX)) == NULL ||
		    (one_set = CPU_ALLOC(CORES_CPU_MAX)) == NULL)
			msg_fatal("CPU_ALLOC: %m");
		if (sched_getaffinity(0, set_size, own_set) < 0)
			msg_fatal("sched_getaffinity: %m");
	}
	if (dry)
		return;
	bind_worker();
	if (by_cgroup() && atexit(at_exit) != 0)
		msg_fatal("atexit: %m");
	/* orphans of tasks come to us, not to init */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
		subreaper = 1;
	else
		msg_warn("prctl: PR_SET_CHILD_SUBREAPER: %m (processes that "
		    "leave a task's tree are found only while their parent "
		    "lives)");
}

/* j's CPUs into one_set */
static void
cpus_of(const struct job *j)
{
	units_into_one_set(j->unit, j->ncores);
}

int
limits_step_why(const struct job *j, const char *step, int e, char *why,
    size_t whysize)
{
	if (strcmp(step, "cpus") == 0)
		snprintf(why, whysize, "sched_setaffinity: CPUs %s: %s",
		    j->cpus, strerror(e));
	else if (strcmp(step, "cgroup") == 0)
		snprintf(why, whysize, "cannot enter its memory cgroup: %s",
		    strerror(e));
	else if (strcmp(step, "cpuset") == 0)
		snprintf(why, whysize, "cannot enter the cpuset of CPUs %s: %s",
		    j->cpus, strerror(e));
	else if (strcmp(step, "devices") == 0)
		snprintf(why, whysize, "cannot enter the devices cgroup of its "
		    "GPUs: %s", strerror(e));
	else
		return 0;
	return 1;
}

/* Bind pid (0: the worker) to j's CPUs; 0, or -1 with why. */
static int
bind_cpus(const struct job *j, pid_t pid, char *why, size_t whysize)
{
	cpus_of(j);
	if (sched_setaffinity(pid, set_size, one_set) < 0) {
		(void)limits_step_why(j, "cpus", errno, why, whysize);
		return -1;
	}
	return 0;
}

/*
 * What j's process does for its limits as it starts (taskspawn.c,
 * identity.c): its CPUs, and its cgroup's cgroup.procs to move itself
 * into, so that the worker neither moves nor rebinds itself.  0, or -1
 * with why.
 */
int
limits_plan(struct job *j, struct spawn_plan *p, char *why, size_t whysize)
{
	char w[512];

	cpus_of(j);
	/* born with the worker's mask: bound already when it is j's */
	p->cpus = CPU_EQUAL_S(set_size, one_set, own_set) ? NULL : one_set;
	p->cpus_size = set_size;
	p->cgroup_fd = -1;
	if (fences_plan(j, p, why, whysize) < 0)
		return -1;
	if (!by_cgroup())
		return 0;
	if (limits_prepare(j, w, sizeof w) < 0) {
		snprintf(why, whysize, "its memory cgroup: %s", w);
		return -1;
	}
	if ((p->cgroup_fd = cgroup_procs_open(j->name)) < 0) {
		(void)limits_step_why(j, "cgroup", errno, why, whysize);
		(void)cgroup_task_remove(j->name);
		j->cg = 0;
		return -1;
	}
	return 0;
}

/* j's spawn is over: followed from j->pid, or its cgroup goes. */
void
limits_spawned(struct job *j, struct spawn_plan *p)
{
	if (p->cgroup_fd >= 0)
		(void)close(p->cgroup_fd);
	p->cgroup_fd = -1;
	if (j->pid > 0)
		ptree_set(&j->tree, &j->pid, 1, !j->cg);
	else if (j->cg) {
		(void)cgroup_task_remove(j->name);
		j->cg = 0;
	}
}

/*
 * j's cgroup, where memory is limited so: made at its start, or while
 * the tasks before it run (inbox_prepare_next), so that its start costs
 * no mkdir.  0, or -1 with why.
 */
int
limits_prepare(struct job *j, char *why, size_t whysize)
{
	if (!by_cgroup() || j->cg)
		return 0;
	if (cgroup_task_create(j->name, j->mem_limit, why, whysize) < 0)
		return -1;
	j->cg = 1;
	return 0;
}

/* The spare execs: j runs as j->pid, its tree is followed from it. */
void
limits_spare_started(struct job *j)
{
	ptree_set(&j->tree, &j->pid, 1, !j->cg);
}

/*
 * The spare (spare.c): only with cgroup v1, where a move into a cgroup
 * waits for an RCU grace period after a pause.  Its cgroup is one kept
 * from an ended task (with that task's limit) or a new one without a
 * limit; the task that takes it is given its own limit, with nothing
 * written when it is the same.
 */
#define SPARE_CG	"spare"

int
limits_spare_possible(void)
{
	return wk.method == LM_CGROUP1;
}

static uint64_t spare_limit;	/* its cgroup's limit, 0 for none */

int
limits_spare_prepare(char *why, size_t whysize)
{
	if (fences_spare_prepare(why, whysize) < 0)
		return -1;
	return cgroup_spare_create(SPARE_CG, &spare_limit, why, whysize);
}

int
limits_spare_procs(void)
{
	return cgroup_procs_open(SPARE_CG);
}

int
limits_spare_take(struct job *j, pid_t pid, char *why, size_t whysize)
{
	char w[256];

	if (cgroup_task_rename(SPARE_CG, j->name) < 0) {
		snprintf(why, whysize, "cannot rename the cgroup made ahead "
		    "to %s: %s", j->name, strerror(errno));
		return -1;
	}
	j->cg = 1;
	if (cgroup_task_limit(j->name, j->mem_limit, spare_limit, w,
	    sizeof w) < 0) {
		snprintf(why, whysize, "its memory cgroup: %s", w);
		return -1;
	}
	/* its cpuset first: a mask outside the cpuset is refused */
	if (fences_spare_take(j, why, whysize) < 0)
		return -1;
	return bind_cpus(j, pid, why, whysize);
}

void
limits_spare_forget(void)
{
	(void)cgroup_task_remove(SPARE_CG);
	fences_spare_forget();
}

/* j will not start here after all: its prepared cgroup goes. */
void
limits_forget(struct job *j)
{
	if (j->cg && j->pid <= 0) {
		(void)cgroup_task_remove(j->name);
		j->cg = 0;
	}
}

void
limits_signal(struct job *j, int sig)
{
	if (j->pid <= 0)
		return;
	if (j->cg) {
		(void)kill(-j->pid, sig);
		if (sig == SIGKILL)
			(void)cgroup_task_kill(j->name);
		else
			(void)cgroup_task_signal(j->name, sig);
	} else
		(void)ptree_signal(&j->tree, j->pid, sig);
}

/*
 * Stop j for its memory; why says how, for the result and the log.  A
 * task already being stopped for another reason (in its kill grace)
 * keeps that reason but gets no more grace.
 */
static void
memory_kill(struct job *j, char *why)
{
	if (j->why_killed != RR_EXIT) {
		free(why);
		if (j->kill_at_ms)
			run_kill(j, j->why_killed, 1);
		return;
	}
	free(j->mem_why);
	j->mem_why = why;
	msg_info("task %" PRIu64 " attempt %u: %s; stopping it", j->id,
	    j->attempt, why);
	run_kill(j, RR_MEMORY, 1);
}

static char *
oom_why(const struct job *j, const struct cg_stats *st)
{
	char a[32], b[32];

	return xasprintf("memory limit of %s exceeded: the kernel's OOM "
	    "killer stopped %" PRIu64 " process%s of the task in its cgroup "
	    "(peak %s)", units_format_human(j->mem_limit, a, sizeof a),
	    st->oom_kills, st->oom_kills == 1 ? "" : "es",
	    units_format_human(j->mem_peak, b, sizeof b));
}

static void
sample_cgroup(struct job *j)
{
	pid_t *pids = xreallocarray(NULL, PTREE_MAX, sizeof *pids);
	struct cg_stats st;
	int n;

	if (cgroup_task_stats(j->name, 1, &st) == 0) {
		if (st.peak > j->mem_peak)
			j->mem_peak = st.peak;
		if (st.current > j->mem_peak)
			j->mem_peak = st.current;
		j->mem_now = st.current;
		if (st.oom_kills > 0)
			memory_kill(j, oom_why(j, &st));
	}
	if ((n = cgroup_task_pids(j->name, pids, PTREE_MAX)) >= 0)
		ptree_set(&j->tree, pids, (size_t)n, 0);
	free(pids);
}

static void
sample_tree(struct job *j, const struct psnap *s, const pid_t *extra,
    size_t nextra)
{
	char a[32], b[32];

	ptree_scan(&j->tree, s, j->pid, extra, nextra);
	j->mem_now = j->tree.rss;
	if (j->tree.peak > j->mem_peak)
		j->mem_peak = j->tree.peak;
	if (wk.method == LM_WATCHDOG && j->mem_limit &&
	    j->tree.rss > j->mem_limit)
		memory_kill(j, xasprintf("memory limit of %s exceeded: the "
		    "task's %zu process%s used %s (the sum of their resident "
		    "memory, seen by the watchdog)", units_format_human(
		    j->mem_limit, a, sizeof a), j->tree.n, j->tree.n == 1 ?
		    "" : "es", units_format_human(j->tree.rss, b, sizeof b)));
}

static int
is_main(pid_t pid)
{
	size_t i;

	for (i = 0; i < wk.njobs; i++)
		if (job_live(wk.jobs[i]) && wk.jobs[i]->pid == pid)
			return 1;
	return 0;
}

static struct job *
member_of(pid_t pid)
{
	size_t i;

	for (i = 0; i < wk.njobs; i++)
		if (job_live(wk.jobs[i]) && ptree_has(&wk.jobs[i]->tree, pid))
			return wk.jobs[i];
	return NULL;
}

struct orphan {
	struct job *j;
	pid_t	pid;
};

/*
 * Leftovers killed and not reaped yet.  One that SIGKILL does not end
 * at once (stuck in the kernel: its SIGKILL stays pending) is still
 * there at the next sample: it is passed over, not killed and said
 * again at every sample, nor its environment read again.  Unreaped,
 * its pid is not reused; limits_orphan_reaped forgets it.
 */
static pid_t *killed;
static size_t nkilled;

static size_t
killed_at(pid_t pid)
{
	size_t i;

	for (i = 0; i < nkilled && killed[i] != pid; i++)
		;
	return i;
}

static void
kill_leftover(pid_t pid)
{
	(void)kill(pid, SIGKILL);
	killed = xreallocarray(killed, nkilled + 1, sizeof *killed);
	killed[nkilled++] = pid;
}

/*
 * Children of the worker that are no task's main process are orphans
 * of tasks: attribute them by their environment, or kill leftovers.
 * Those whose environment names no task are leftovers if no other task
 * runs: reaped is a task whose main process was just reaped (it runs
 * no more; what is left of it is looked for), or NULL.
 */
static size_t
orphans(const struct psnap *s, const struct job *reaped, struct orphan **out)
{
	struct job *j;
	uint64_t id;
	uint32_t att;
	size_t i, n = 0, running = 0;
	pid_t me = getpid();

	*out = NULL;
	for (i = 0; i < wk.njobs; i++)
		running += wk.jobs[i] != reaped && job_live(wk.jobs[i]);
	for (i = 0; i < s->n; i++) {
		const struct pproc *p = &s->p[i];

		/* (a main process given up has its SIGKILL pending) */
		if (p->ppid != me || p->state == 'Z' || is_main(p->pid) ||
		    p->pid == guard_pid() ||
		    member_of(p->pid) || run_given_up(p->pid) ||
		    killed_at(p->pid) < nkilled)
			continue;
		if (ptree_task_of(p->pid, &id, &att) == 0) {
			if ((j = job_find(id, att)) != NULL && job_live(j)) {
				*out = xreallocarray(*out, n + 1, sizeof **out);
				(*out)[n].j = j;
				(*out)[n++].pid = p->pid;
				continue;
			}
			msg_info("killing process %ld, left over by task %"
			    PRIu64 " attempt %u", (long)p->pid, id, att);
			kill_leftover(p->pid);
		} else if (running == 0) {
			msg_info("killing process %ld, left over by a task",
			    (long)p->pid);
			kill_leftover(p->pid);
		} else
			msg_once("orphan", "process %ld left a task's tree "
			    "and its environment names no task: it is not "
			    "watched", (long)p->pid);
	}
	return n;
}

/*
 * Follow every task's tree (not by cgroup), or only that of a task
 * whose main process was just reaped (limits_reaped).
 */
static void
scan_trees(struct job *only)
{
	struct orphan *o;
	struct psnap s;
	pid_t *extra;
	size_t i, k, no, ne;

	if (psnap_take(&s) < 0) {
		msg_once("proc", "opendir: /proc: %m (task trees not watched)");
		return;
	}
	msg_clear("proc");
	no = orphans(&s, only, &o);
	extra = xreallocarray(NULL, no ? no : 1, sizeof *extra);
	for (i = 0; i < wk.njobs; i++) {
		struct job *j = wk.jobs[i];

		if (!job_live(j) || j->cg || (only && j != only))
			continue;
		for (k = ne = 0; k < no; k++)
			if (o[k].j == j)
				extra[ne++] = o[k].pid;
		sample_tree(j, &s, extra, ne);
	}
	free(extra);
	free(o);
	psnap_free(&s);
}

static void
sample_gpus(struct job *j)
{
	uint64_t mem, sum_mem = 0;
	unsigned util, sum_util = 0, got = 0;
	uint32_t k;

	for (k = 0; k < j->ngpu; k++)
		if (gpu_sample(wk.gpus.dev[j->gpu[k]], &util, &mem) == 0) {
			sum_util += util;
			sum_mem += mem;
			got++;
		}
	if (got == 0)
		return;
	j->gpu_util_sum += (double)sum_util / got;
	j->gpu_samples++;
	if (sum_mem > j->gpu_mem_peak)
		j->gpu_mem_peak = sum_mem;
}

static void
retry_pending(void)
{
	size_t i;

	for (i = 0; i < npending; i++) {
		(void)cgroup_task_kill(pending[i]);
		if (cgroup_task_remove(pending[i]) == 0 || errno != EBUSY) {
			memmove(&pending[i], &pending[i + 1],
			    (npending - i - 1) * sizeof *pending);
			npending--;
			i--;
		}
	}
}

/*
 * Remove the cgroups of the tasks reaped since the last call.  An empty
 * cgroup (the usual end) goes at once; one that still holds processes
 * (escaped from the process group) refuses with EBUSY and is emptied
 * first; what is still dying is tried again at every sample.
 */
void
limits_settle(void)
{
	size_t i;

	for (i = 0; i < nended; i++) {
		const char *name = ended[i].name;

		if (ended[i].clean &&
		    cgroup_task_recycle(name, ended[i].limit) == 0)
			continue;
		if (cgroup_task_remove(name) == 0 || errno != EBUSY)
			continue;
		(void)cgroup_task_kill(name);
		if (cgroup_task_remove(name) == 0)
			continue;
		pending = xreallocarray(pending, npending + 1, sizeof *pending);
		snprintf(pending[npending++], sizeof *pending, "%s", name);
	}
	nended = 0;
}

/*
 * The worker leaves without its tasks (lost, its spool gone): each is
 * killed at once.  A followed tree is scanned first, as at a task's end
 * (limits_reaped): a process that left it and came to the worker since
 * the last sample (a daemon whose parent exited) is attributed by its
 * environment and killed with it, not left to init when the worker
 * exits; with --sample-interval 30s that is 30 s of a task's daemons.
 */
void
limits_kill_all(void)
{
	size_t i;

	if (!by_cgroup())
		scan_trees(NULL);
	for (i = 0; i < wk.njobs; i++)
		if (wk.jobs[i]->state != J_PENDING)
			limits_signal(wk.jobs[i], SIGKILL);
}

int
limits_tick(void)
{
	size_t i, running = 0;
	int freed = nheld ? gpu_unhold() : 0;

	limits_settle();
	if (wk.now < wk.next_sample)
		return freed;
	wk.next_sample = wk.now + wk.sample_ms;
	retry_pending();
	for (i = 0; i < wk.njobs; i++)
		running += job_live(wk.jobs[i]);
	if (running == 0)
		return freed;
	if (!by_cgroup())
		scan_trees(NULL);
	for (i = 0; i < wk.njobs; i++) {
		struct job *j = wk.jobs[i];

		if (!job_live(j))
			continue;
		if (j->cg)
			sample_cgroup(j);
		if (j->ngpu)
			sample_gpus(j);
	}
	return freed;
}

uint64_t
limits_next(void)
{
	size_t i;

	if (nheld)	/* (a SIGCHLD may come sooner) */
		return wk.now + GPU_HOLD_POLL_MS < wk.next_sample ?
		    wk.now + GPU_HOLD_POLL_MS : wk.next_sample;
	if (npending)
		return wk.next_sample;
	for (i = 0; i < wk.njobs; i++)
		if (job_live(wk.jobs[i]))
			return wk.next_sample;
	return UINT64_MAX;
}

#define MAINS_MAX	64

/* The main processes of the running tasks but pgid's, and the guard
 * (guard.c): the worker's children known not to be pgid's task's; -1
 * if too many. */
static int
mains_but(pid_t pgid, pid_t *mains)
{
	size_t i;
	int n = 0;

	if (guard_pid() > 0)
		mains[n++] = guard_pid();
	for (i = 0; i < wk.njobs; i++) {
		if (wk.jobs[i]->pid == pgid || !job_live(wk.jobs[i]))
			continue;
		if (n == MAINS_MAX)
			return -1;
		mains[n++] = wk.jobs[i]->pid;
	}
	return n;
}

/* Nothing of the task whose main process pgid was reaped (not in a
 * cgroup) can be left (ptree.c). */
static int
none_left(pid_t pgid)
{
	pid_t mains[MAINS_MAX];
	int n;

	if (!subreaper || (n = mains_but(pgid, mains)) < 0)
		return 0;
	return ptree_none_left(pgid, mains, (size_t)n);
}

/*
 * Whether processes of a held task are left: > 0 yes, 0 none, -1
 * unknown.  Out of a cgroup: ptree_task_left, which proves what
 * none_left proves and also passes over other tasks' orphans.
 */
static int
held_left(const struct held *h)
{
	pid_t mains[MAINS_MAX];
	int n;

	if (h->cg[0])	/* and SIGKILL them again: 0 once it is empty
			 * or gone (removed or recycled: it was empty) */
		return cgroup_task_kill(h->cg);
	if ((n = mains_but(h->pgid, mains)) < 0)
		return 1;
	return ptree_task_left(h->pgid, h->id, h->attempt, mains, (size_t)n);
}

/*
 * j's main process was reaped and what was left of it killed: its GPUs
 * are free when nothing of it is left, or kept (held) until then.
 */
static void
gpu_hold(struct job *j, int was_cg)
{
	struct held h;

	if (!j->gpus_taken)
		return;
	memset(&h, 0, sizeof h);
	if (was_cg)
		snprintf(h.cg, sizeof h.cg, "%s", j->name);
	else if (!subreaper) {
		msg_once("gpu-hold", "the GPUs of a task that ended are given "
		    "again without proof that nothing of it is left (the "
		    "worker is no child subreaper)");
		res_release_gpus(j);
		return;
	}
	h.pgid = j->pid;
	h.id = j->id;
	h.attempt = j->attempt;
	if (held_left(&h) == 0) {
		res_release_gpus(j);
		return;
	}
	memcpy(h.gpu, j->gpu, j->ngpu * sizeof *j->gpu);
	h.ngpu = j->ngpu;
	/* (from its SIGKILL where it was killed: given up, it has been
	 * there since, run.c) */
	h.since_ms = j->killed_ms ? j->killed_ms : wk.now;
	j->gpus_taken = 0;	/* they are the hold's now */
	held = xreallocarray(held, nheld + 1, sizeof *held);
	held[nheld++] = h;
	msg_info("task %" PRIu64 " attempt %u: its GPUs (%s) are kept until "
	    "the processes it left are gone", j->id, j->attempt, j->gpu_ids);
}

/*
 * GPUs kept past GPU_HOLD_WARN_MS are taken as stuck: the status says
 * how many at once (spoold places no task on them, spoold(8)), and a
 * task that needs more GPUs than the rest is handed back when it comes
 * to start (res_never_fits).
 */
static void
stuck_change(uint32_t n, int more)
{
	wk.gpus_held = more ? wk.gpus_held + n : wk.gpus_held - n;
	wk.refit |= more;
	status_write();
}

/*
 * Free the GPUs of held tasks that nothing is left of; 1 if any were
 * freed or found stuck (what waits may now start or go back).
 */
static int
gpu_unhold(void)
{
	size_t i;
	int n, changed = 0;

	for (i = 0; i < nheld; i++) {
		struct held *h = &held[i];

		if ((n = held_left(h)) > 0) {
			if (!h->warned &&
			    wk.now - h->since_ms >= GPU_HOLD_WARN_MS) {
				msg_warn("task %" PRIu64 " attempt %u: "
				    "processes of it are still there %" PRIu64
				    " s after SIGKILL; its %u GPU%s stay%s kept, "
				    "and tasks that need them are handed back",
				    h->id, h->attempt,
				    (wk.now - h->since_ms) / 1000, h->ngpu,
				    h->ngpu == 1 ? "" : "s",
				    h->ngpu == 1 ? "s" : "");
				h->warned = 1;
				stuck_change(h->ngpu, 1);
				changed = 1;
			}
			continue;
		}
		if (n < 0 && h->cg[0])
			msg_warn("read: cgroup %s/cgroup.procs: %m (task %"
			    PRIu64 " attempt %u: its GPUs are given again)",
			    h->cg, h->id, h->attempt);
		else if (n < 0)
			msg_once("gpu-hold", "read: /proc/%ld/task/%ld/"
			    "children: %m (GPUs of ended tasks are given "
			    "again without proof that nothing of them is "
			    "left)", (long)getpid(), (long)getpid());
		else
			msg_info("task %" PRIu64 " attempt %u: nothing of it "
			    "left; its GPUs are free", h->id, h->attempt);
		res_gpus_free(h->gpu, h->ngpu);
		if (h->warned)
			stuck_change(h->ngpu, 0);
		held[i--] = held[--nheld];
		changed = 1;
	}
	return changed;
}

/*
 * The result's memory_peak.  A tree followed by samples (watchdog,
 * none) may have ended before the first sample, or peaked between two:
 * the largest process (maxrss of the main process and the descendants
 * it waited for, and of the orphans the worker reaped) is a lower bound
 * too, so the larger of the two is taken.  A cgroup's own peak counts
 * what the task caused (not pages cached by others), so maxrss stands
 * in only where the cgroup gave none.
 */
static uint64_t
memory_peak(const struct job *j, uint64_t maxrss, int was_cg)
{
	uint64_t low = maxrss > j->orphan_maxrss ? maxrss : j->orphan_maxrss;

	if (was_cg && j->mem_peak)
		return j->mem_peak;
	return j->mem_peak > low ? j->mem_peak : low;
}

void
limits_reaped(struct job *j, struct result *r)
{
	struct cg_stats st;
	int by_cg = 0, was_cg = j->cg, clean = 0;

	if (j->cg) {
		if (cgroup_task_stats(j->name, 0, &st) == 0) {
			clean = st.oom_kills == 0 && st.failcnt == 0 &&
			    j->why_killed != RR_MEMORY;
			if (st.peak > j->mem_peak)
				j->mem_peak = st.peak;
			if ((st.has_oom_kills ? st.oom_kills > 0 :
			    st.failcnt > 0 && r->signal == SIGKILL) &&
			    j->why_killed == RR_EXIT) {
				j->why_killed = RR_MEMORY;
				free(j->mem_why);
				j->mem_why = oom_why(j, &st);
			}
			if (st.has_cpu) {
				r->utime = st.user;
				r->stime = st.sys;
				by_cg = 1;
			}
		}
		/*
		 * Nothing of the task outlives it: its process group is
		 * killed now, its cgroup removed (or kept for a next task
		 * if the task left it clean) by limits_settle once the next
		 * task has started (before any result is committed).
		 */
		(void)kill(-j->pid, SIGKILL);
		ended = xreallocarray(ended, nended + 1, sizeof *ended);
		snprintf(ended[nended].name, sizeof ended->name, "%s", j->name);
		ended[nended].limit = j->mem_limit;
		ended[nended++].clean = clean;
		j->cg = 0;
	} else if (!none_left(j->pid)) {
		scan_trees(j);
		(void)ptree_signal(&j->tree, j->pid, SIGKILL);
	}
	gpu_hold(j, was_cg);
	if (!by_cg) {
		r->utime += j->orphan_utime;
		r->stime += j->orphan_stime;
	}
	r->memory_peak = memory_peak(j, r->maxrss, was_cg);
	r->memory_limit = j->mem_limit;
	r->memory_method = xstrdup(limit_method_name[wk.method]);
	r->cpu_method = xstrdup(cpu_method_name[wk.cpu_method]);
	if (wk.gpus.n)
		r->gpu_method = xstrdup(gpu_method_name[wk.gpu_method]);
	r->cores = j->ncores;
	if (j->cpus)
		r->cpus = xstrdup(j->cpus);
	r->gpus = j->ngpu;
	if (j->ngpu && j->gpu_ids)
		r->gpu_ids = xstrdup(j->gpu_ids);
	if (j->gpu_samples)
		r->gpu_util = j->gpu_util_sum / (double)j->gpu_samples;
	r->gpu_memory_peak = j->gpu_mem_peak;
}

void
limits_orphan_reaped(pid_t pid, const struct rusage *ru)
{
	size_t i;

	if ((i = killed_at(pid)) < nkilled)
		killed[i] = killed[--nkilled];
	for (i = 0; i < wk.njobs; i++) {
		struct job *j = wk.jobs[i];

		if (j->state == J_PENDING || !ptree_has(&j->tree, pid))
			continue;
		j->orphan_utime += (double)ru->ru_utime.tv_sec +
		    ru->ru_utime.tv_usec / 1e6;
		j->orphan_stime += (double)ru->ru_stime.tv_sec +
		    ru->ru_stime.tv_usec / 1e6;
		if ((uint64_t)ru->ru_maxrss * 1024 > j->orphan_maxrss)
			j->orphan_maxrss = (uint64_t)ru->ru_maxrss * 1024;
		return;
	}
}

void
limits_leave(void)
{
	int stuck;

	limits_settle();
	if ((stuck = cgroup_cleanup()) > 0)
		msg_warn("leaving with %d process%s of ended tasks that SIGKILL "
		    "did not end: their cgroups stay (the next worker on this "
		    "host removes them once they are empty)", stuck,
		    stuck == 1 ? "" : "es");
	else if (!by_cgroup() && (stuck = (int)(nkilled +
	    run_given_up_count())) > 0)
		msg_warn("leaving with %d process%s of ended tasks that SIGKILL "
		    "did not end (no cgroup holds them: they stay until the "
		    "kernel lets them end)", stuck,
		    stuck == 1 ? "" : "es");
	free(killed);
	killed = NULL;
	nkilled = 0;
	free(pending);
	pending = NULL;
	npending = 0;
	free(ended);
	ended = NULL;
	free(held);
	held = NULL;
	nheld = 0;
	if (own_set) {
		CPU_FREE(own_set);
		CPU_FREE(one_set);
		own_set = one_set = NULL;
	}
}
