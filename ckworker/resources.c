/*
 * resources.c - what this worker may use, and what each task gets.
 *
 * Discovery (res_setup), once at start; each item from the first source
 * that gives it:
 *
 *   batch job  --batch KIND, else detected from the environment
 *		(batch.c): its kind, job ID (--job overrides), CPU count,
 *		memory and end time
 *   CPUs       --cpus LIST (which must lie in the affinity mask), else
 *		the process's affinity mask: a batch system that binds
 *		its jobs (Slurm's task/affinity or cgroup cpusets) has
 *		narrowed it already
 *   cores      --cores N, else the batch system's count for this node
 *		(SLURM_CPUS_ON_NODE, NSLOTS, NCPUS, LSB_MCPU_HOSTS ...),
 *		else the physical cores among those CPUs
 *   units      hwloc's topology of those CPUs (topo.c): one unit per
 *		physical core, or per hardware thread when the worker
 *		offers more cores than there are physical ones.  A
 *		worker that offers fewer cores than it sees takes them
 *		through the host's claim file (cpuclaim.c), so that
 *		workers of this user on one host get disjoint cores.  A
 *		worker that offers more cores than there are units says
 *		so and shares units between its cores (oversubscribed).
 *   processes  --processes P: P task slots; a task gets at least
 *		cores/P cores (dask-jobqueue's cores/processes split)
 *		and their memory (memory/P only where P divides the
 *		cores: warned about); default: one slot per core
 *   memory     --memory, else the batch system's (SLURM_MEM_PER_NODE,
 *		SLURM_MEM_PER_CPU x CPUs), else the limit of the
 *		worker's own cgroup or its ancestors, else the machine's
 *		physical memory (not hwloc's NUMA figure, which can be
 *		wrong); a figure above the cgroup's limit is warned about
 *   GPUs       gpu.c (--gpu-ids, --gpus, CUDA_VISIBLE_DEVICES, NVML,
 *		CUDA runtime)
 *   end        --walltime, else the batch system's end time
 *   method     limits.c
 *
 * Per task (res_job_size, when it is read from the inbox): cores =
 * max(its request, cores/processes); memory = its request, or, when it
 * asks for none, its share of the worker's memory, memory x cores it
 * gets / worker's cores (rounded down), which is reserved and enforced
 * like a request, so the limits of running tasks never add up to more
 * than the worker has; GPUs = its request.  res_take picks its cores
 * with cores_pick (close together: same L2, L3, NUMA node, package
 * where possible) and its GPUs (the lowest free indices).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "batch.h"
#include "cgroup.h"
#include "cpuclaim.h"
#include "msg.h"
#include "topo.h"
#include "units.h"
#include "worker.h"

#define REPLICA_SHIFT	16	/* oversubscribed copies of the topology */

/* The CPUs of the process's affinity mask, sorted. */
static size_t
affinity_cpus(int **out)
{
	cpu_set_t *set = CPU_ALLOC(CORES_CPU_MAX);
	size_t size = CPU_ALLOC_SIZE(CORES_CPU_MAX), n = 0;
	int c;

	if (set == NULL)
		msg_fatal("CPU_ALLOC: %m");
	*out = xreallocarray(NULL, CORES_CPU_MAX, sizeof **out);
	if (sched_getaffinity(0, size, set) < 0)
		msg_fatal("sched_getaffinity: %m");
	for (c = 0; c < CORES_CPU_MAX; c++)
		if (CPU_ISSET_S((size_t)c, size, set))
			(*out)[n++] = c;
	CPU_FREE(set);
	return n;
}

static int
has_cpu(const int *cpus, size_t n, int c)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (cpus[i] == c)
			return 1;
	return 0;
}

static int
int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

static int
u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The CPUs of units u[0..n-1], sorted and distinct, as a list. */
static char *
units_cpulist(const struct cores_unit *u, const uint32_t *idx, size_t n)
{
	int *c = xreallocarray(NULL, n * CORES_PUS_MAX + 1, sizeof *c);
	size_t i, k, m = 0, d = 0;
	char *s;

	for (i = 0; i < n; i++) {
		const struct cores_unit *x = idx ? &u[idx[i]] : &u[i];

		for (k = 0; k < x->npu; k++)
			c[m++] = x->pu[k];
	}
	qsort(c, m, sizeof *c, int_cmp);
	for (i = 0; i < m; i++)
		if (d == 0 || c[d - 1] != c[i])
			c[d++] = c[i];
	s = cpulist_format(c, d);
	free(c);
	return s;
}

static uint32_t
u32_min(uint64_t a, uint64_t b)
{
	return (uint32_t)(a < b ? a : b);
}

/*
 * Choose the worker's cores among the topology's units: claimed on the
 * host when it needs no more than there are, else all of them shared
 * round-robin (each copy of the topology a separate group, so that one
 * task's cores are still distinct CPUs where possible).
 */
static void
choose_units(const struct topo *t, uint32_t want, struct buf *log)
{
	uint32_t *pick, k, l;
	char why[256];
	int got;

	wk.unit = xcalloc(want, sizeof *wk.unit);
	wk.unit_busy = xcalloc(want, 1);
	wk.nunit = want;
	if (want > t->nunit) {
		buf_printf(log, "oversubscribed: %u cores offered on %zu "
		    "unit%s: tasks share them; ", want, t->nunit,
		    t->nunit == 1 ? "" : "s");
		msg_warn("--cores %u, but only %zu %s%s can be used: tasks "
		    "will share them", want, t->nunit, t->by_core ? "core" :
		    "CPU", t->nunit == 1 ? "" : "s");
		for (k = 0; k < want; k++) {
			wk.unit[k] = t->unit[k % t->nunit];
			for (l = 0; l < CORES_LEVELS; l++)
				wk.unit[k].group[l] += (k / (uint32_t)t->nunit) <<
				    REPLICA_SHIFT;
		}
		return;
	}
	pick = xcalloc(want, sizeof *pick);
	got = cpuclaim_take(t->unit, t->nunit, want, pick, why, sizeof why);
	if (got < 0)
		msg_warn("cannot agree on cores with other workers on this "
		    "host (%s): taking the first %u", why, want);
	else if ((uint32_t)got < want)
		msg_warn("%s: tasks of different workers will share cores",
		    why);
	if (got >= 0 && (uint32_t)got < want)
		buf_printf(log, "%s; ", why);
	/* keep topology order, as cores_pick expects */
	qsort(pick, want, sizeof *pick, u32_cmp);
	for (k = 0; k < want; k++)
		wk.unit[k] = t->unit[pick[k]];
	free(pick);
}

static char *
fmt_size(uint64_t v, char *b, size_t n)
{
	return units_format_human(v, b, n);
}

static void
line(int print, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* One "key: value" line: stdout for --print-resources, else the log. */
static void
line(int print, const char *key, const char *fmt, ...)
{
	va_list ap;
	char *v;

	va_start(ap, fmt);
	if (vasprintf(&v, fmt, ap) < 0)
		msg_fatal("vasprintf: %m");
	va_end(ap);
	if (print)
		printf("%s: %s\n", key, v);
	else
		msg_info("%s: %s", key, v);
	free(v);
}

void
res_setup(const struct res_opts *o, int print)
{
	struct buf note = BUF_INIT;
	struct batch b;
	struct topo t;
	char mfrom[PATH_MAX + 16], cgfrom[PATH_MAX], why[512], desc[1024];
	char s1[32], s2[32];
	const char *cores_from, *mem_from, *w;
	int *allowed = NULL, *list = NULL;
	size_t nallowed, i;
	uint64_t cglimit, left;
	uint32_t want, rest;
	int n;
	char *cpus;

	/* the batch job: its end is asked only when no --walltime */
	batch_detect(o->batch, o->walltime_s == 0, o->batch_timeout_ms, &b);
	snprintf(wk.info.job, sizeof wk.info.job, "%s", o->job ? o->job :
	    b.job);
	snprintf(wk.info.backend, sizeof wk.info.backend, "%s",
	    b.kind[0] ? b.kind : "local");
	if (b.kind[0])
		line(print, "batch", "%s job %s", b.kind, b.job[0] ? b.job :
		    "(no job ID in the environment)");
	else
		line(print, "batch", "none (%s)", o->batch &&
		    strcmp(o->batch, "none") == 0 ? "--batch none" :
		    "no batch system in the environment");
	if (o->job)
		line(print, "job", "%s (--job)", o->job);

	/* CPUs */
	nallowed = affinity_cpus(&allowed);
	if (nallowed == 0)
		msg_fatal("the affinity mask holds no CPU");
	if (o->cpus) {
		if ((n = cpulist_parse(o->cpus, &list, &w)) < 0)
			msg_fatal_status(EXIT_USAGE, "--cpus %s: %s", o->cpus, w);
		for (i = 0; i < (size_t)n; i++)
			if (!has_cpu(allowed, nallowed, list[i])) {
				cpus = cpulist_format(allowed, nallowed);
				msg_fatal_status(EXIT_USAGE, "--cpus %s: CPU %d is "
				    "not in this process's affinity mask (%s)",
				    o->cpus, list[i], cpus);
			}
		free(allowed);
		allowed = list;
		nallowed = (size_t)n;
	}

	/* cores: how many, then which */
	if (o->cores > 0) {
		want = (uint32_t)o->cores;
		cores_from = "--cores";
	} else if (b.cpus) {
		want = b.cpus;
		cores_from = b.cpus_from;
	} else {
		want = 0;
		cores_from = o->cpus ? "--cpus" : "the affinity mask";
	}
	topo_units(allowed, nallowed, want, &t);
	if (want == 0)
		want = u32_min(t.nunit, TASK_CORES_MAX);
	if (want > TASK_CORES_MAX)
		msg_fatal_status(EXIT_USAGE, "%u cores (%s): at most %d",
		    want, cores_from, TASK_CORES_MAX);
	cpus = cpulist_format(allowed, nallowed);
	line(print, "cpus", "%s (%s)", cpus, o->cpus ? "--cpus" :
	    "the affinity mask");
	free(cpus);
	line(print, "topology", "%s", t.desc);
	choose_units(&t, want, &note);
	wk.info.cores = want;
	cpus = units_cpulist(wk.unit, NULL, wk.nunit);
	snprintf(wk.info.cpus, sizeof wk.info.cpus, "%s", cpus);
	line(print, "cores", "%u (%s) on CPUs %s%s%.*s", want, cores_from, cpus,
	    note.len ? "; " : "", note.len > 2 ? (int)note.len - 2 : 0,
	    note.p ? note.p : "");
	free(cpus);
	topo_free(&t);
	free(allowed);
	buf_free(&note);

	/* task slots */
	if (o->processes > 0) {
		if ((uint64_t)o->processes > want)
			msg_fatal_status(EXIT_USAGE, "--processes %ld: more than "
			    "the %u cores", o->processes, want);
		wk.info.slots = (uint32_t)o->processes;
	} else
		wk.info.slots = want;
	wk.task_cores = want / wk.info.slots;
	wk.info.task_cores = wk.task_cores;
	line(print, "processes", "%u task slot%s of at least %u core%s%s",
	    wk.info.slots, wk.info.slots == 1 ? "" : "s", wk.task_cores,
	    wk.task_cores == 1 ? "" : "s", o->processes > 0 ? " (--processes)" :
	    "");

	/* memory */
	cglimit = cgroup_memory_limit(cgfrom, sizeof cgfrom);
	if (o->memory) {
		/*
		 * Rounded up to a whole MiB, as a batch system grants a job
		 * its memory (the job script asks for this, rounded up) and
		 * as spoold counts it (a task's request rounded up): "4GB"
		 * is no whole MiB, and a task asking for the 4GB its worker
		 * was given would fit no worker in spoold's reckoning.
		 */
		wk.info.memory = units_mib_up(o->memory) < 1ULL << 44 ?
		    units_mib_up(o->memory) << 20 : o->memory;
		mem_from = "--memory";
	} else if (b.memory) {
		wk.info.memory = b.memory;
		mem_from = b.memory_from;
	} else if (cglimit) {
		wk.info.memory = cglimit;
		snprintf(mfrom, sizeof mfrom, "the limit in %s", cgfrom);
		mem_from = mfrom;
	} else {
		long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

		if (pages <= 0 || size <= 0)
			msg_fatal("sysconf: physical memory unknown: give "
			    "--memory");
		wk.info.memory = (uint64_t)pages * (uint64_t)size;
		mem_from = "the machine's physical memory";
	}
	line(print, "memory", "%s (%s)", fmt_size(wk.info.memory, s1, sizeof s1),
	    mem_from);
	if (cglimit && wk.info.memory > cglimit)
		msg_warn("memory %s (%s) is more than the limit of the "
		    "worker's cgroup, %s (%s): tasks may be killed together by "
		    "the batch system before their own limits stop them",
		    fmt_size(wk.info.memory, s1, sizeof s1), mem_from,
		    fmt_size(cglimit, s2, sizeof s2), cgfrom);
	/*
	 * Memory follows cores (res_job_size): a task that asks for none
	 * gets memory x its cores / the worker's cores.  Where P does not
	 * divide the cores that is less than memory/P, and the rest goes
	 * with the cores left over to tasks that ask for more: said here,
	 * so that a dask-style user does not expect memory/P.
	 */
	if ((rest = want % wk.info.slots) != 0)
		msg_warn("--processes %u does not divide %u cores: each task "
		    "gets at least %u core%s and, asking for no memory, %s "
		    "(memory x its cores / %u cores, not memory / %u); the "
		    "other %u %s memory serve%s tasks that ask for more",
		    wk.info.slots, want, wk.task_cores,
		    wk.task_cores == 1 ? "" : "s",
		    fmt_size(wk.info.memory / want * wk.task_cores, s1,
		    sizeof s1), want, wk.info.slots, rest,
		    rest == 1 ? "core and its" : "cores and their",
		    rest == 1 ? "s" : "");

	/* GPUs */
	if (gpu_discover(o->gpu_ids, o->gpus, &wk.gpus, why, sizeof why) < 0)
		msg_fatal_status(EXIT_USAGE, "%s", why);
	wk.info.gpus = (uint32_t)wk.gpus.n;
	cpus = xstrdup("");
	for (i = 0; i < wk.gpus.n; i++) {
		char *nx = xasprintf("%s%s%s", cpus, i ? "," : "",
		    wk.gpus.id[i]);

		free(cpus);
		cpus = nx;
	}
	snprintf(wk.info.gpu_ids, sizeof wk.info.gpu_ids, "%s", cpus);
	line(print, "gpus", "%zu%s%s (%s)", wk.gpus.n, wk.gpus.n ? ": " : "",
	    cpus, wk.gpus.source);
	free(cpus);
	if (wk.gpus.probe[0])
		line(print, "gpu probe", "%s", wk.gpus.probe);

	/* memory limits */
	limits_init(o->limit[LIMIT_MEMORY], o->limit_said[LIMIT_MEMORY],
	    print, desc, sizeof desc);
	snprintf(wk.info.memory_method, sizeof wk.info.memory_method, "%s",
	    limit_method_name[wk.method]);
	line(print, "memory limits", "%s", desc);
	limits_cpu_init(o->limit[LIMIT_CPU], o->limit_said[LIMIT_CPU], print,
	    desc, sizeof desc);
	snprintf(wk.info.cpu_method, sizeof wk.info.cpu_method, "%s",
	    cpu_method_name[wk.cpu_method]);
	line(print, "cpu limits", "%s", desc);
	limits_gpu_init(o->limit[LIMIT_GPU], o->limit_said[LIMIT_GPU], print,
	    desc, sizeof desc);
	if (wk.gpus.n)
		snprintf(wk.info.gpu_method, sizeof wk.info.gpu_method, "%s",
		    gpu_method_name[wk.gpu_method]);
	line(print, "gpu limits", "%s", desc);
	wk.sample_ms = o->sample_ms ? o->sample_ms :
	    wk.method == LM_CGROUP1 || wk.method == LM_CGROUP2 ? 1000 : 100;
	line(print, "sample interval", "%" PRIu64 "ms%s", wk.sample_ms,
	    o->sample_ms ? " (--sample-interval)" : "");

	/* the end */
	wk.info.started = now_unix();
	if (o->walltime_s) {
		wk.info.ends = wk.info.started + (double)o->walltime_s;
		wk.ends_ms = now_ms() + o->walltime_s * 1000;
		line(print, "ends", "in %s (--walltime)", units_format_duration(
		    o->walltime_s, s1, sizeof s1));
	} else if (b.ends > wk.info.started) {
		left = (uint64_t)(b.ends - wk.info.started);
		wk.info.ends = b.ends;
		wk.ends_ms = now_ms() + left * 1000;
		line(print, "ends", "in %s (%s)", units_format_duration(left, s1,
		    sizeof s1), b.ends_from);
	} else if (b.kind[0] && b.ends > 0) {
		msg_warn("batch job %s ended already (%s)", b.job, b.ends_from);
		wk.info.ends = b.ends;
		wk.ends_ms = now_ms();
		line(print, "ends", "now (%s)", b.ends_from);
	} else if (b.kind[0]) {
		line(print, "ends", "%s", b.ends_from);
		if (strncmp(b.ends_from, "none", 4) != 0 && !print)
			msg_warn("the end of batch job %s is %s: this worker "
			    "will not drain before it; give --walltime", b.job,
			    b.ends_from);
	} else
		line(print, "ends", "never (no --walltime, no batch job)");
	if (print) {
		fflush(stdout);
		limits_leave();
		exit(ferror(stdout) ? EXIT_TEMPFAIL : 0);
	}
}

void
res_job_size(struct job *j)
{
	uint64_t cores = wk.info.cores ? wk.info.cores : 1;

	j->ncores = task_cores(&j->spec);
	if (j->ncores < wk.task_cores)
		j->ncores = wk.task_cores;
	j->ngpu = j->spec.gpus;
	if (j->spec.memory)
		j->mem_res = j->spec.memory;
	else	/* its share: memory x its cores / the worker's */
		j->mem_res = wk.info.memory / cores * j->ncores;
	j->mem_limit = wk.method == LM_NONE ? 0 : j->mem_res;
}

const char *
res_never_fits(const struct job *j, char *why, size_t size)
{
	char a[32], b[32];

	if (j->ncores > wk.nunit)
		snprintf(why, size, "it needs %u core%s, this worker has %zu",
		    j->ncores, j->ncores == 1 ? "" : "s", wk.nunit);
	else if (j->ngpu > wk.gpus.n)
		snprintf(why, size, "it needs %u GPU%s, this worker has %zu",
		    j->ngpu, j->ngpu == 1 ? "" : "s", wk.gpus.n);
	else if (j->ngpu > wk.gpus.n - wk.gpus_held)
		snprintf(why, size, "it needs %u GPU%s, %u of this worker's "
		    "%zu %s kept by processes of ended tasks that SIGKILL "
		    "did not end", j->ngpu, j->ngpu == 1 ? "" : "s",
		    wk.gpus_held, wk.gpus.n, wk.gpus_held == 1 ? "is" : "are");
	else if (j->mem_res > wk.info.memory)
		snprintf(why, size, "it needs %s of memory, this worker has %s",
		    units_format_human(j->mem_res, a, sizeof a),
		    units_format_human(wk.info.memory, b, sizeof b));
	else
		return NULL;
	return why;
}

int
res_fits(const struct job *j)
{
	if (wk.slots_used + 1 > wk.info.slots)
		return 0;
	if (wk.cores_used + j->ncores > wk.nunit)
		return 0;
	if (wk.gpus_used + j->ngpu > wk.gpus.n)
		return 0;
	if (wk.mem_used + j->mem_res > wk.info.memory)
		return 0;
	return 1;
}

void
res_take(struct job *j)
{
	uint32_t k, g;
	size_t i;

	if (j->taken)
		return;
	j->unit = xcalloc(j->ncores ? j->ncores : 1, sizeof *j->unit);
	if (cores_pick(wk.unit, wk.nunit, wk.unit_busy, j->ncores, j->unit) < 0)
		msg_panic("task %" PRIu64 ": %u cores do not fit, yet "
		    "res_fits said they do", j->id, j->ncores);
	for (k = 0; k < j->ncores; k++)
		wk.unit_busy[j->unit[k]] = 1;
	j->cpus = units_cpulist(wk.unit, j->unit, j->ncores);
	j->gpu_ids = xstrdup("");
	for (i = 0, g = 0; i < wk.gpus.n && g < j->ngpu; i++) {
		char *nx;

		if (wk.gpus.busy[i])
			continue;
		wk.gpus.busy[i] = 1;
		j->gpu[g++] = (uint32_t)i;
		nx = xasprintf("%s%s%s", j->gpu_ids, g > 1 ? "," : "",
		    wk.gpus.id[i]);
		free(j->gpu_ids);
		j->gpu_ids = nx;
	}
	if (g < j->ngpu)
		msg_panic("task %" PRIu64 ": %u GPUs do not fit, yet res_fits "
		    "said they do", j->id, j->ngpu);
	wk.cores_used += j->ncores;
	wk.gpus_used += j->ngpu;
	wk.mem_used += j->mem_res;
	wk.slots_used++;
	j->taken = 1;
	j->gpus_taken = j->ngpu > 0;
}

void
res_release_slot(struct job *j)
{
	uint32_t k;

	if (!j->taken)
		return;
	for (k = 0; k < j->ncores; k++)
		wk.unit_busy[j->unit[k]] = 0;
	wk.cores_used -= j->ncores;
	wk.mem_used -= j->mem_res;
	wk.slots_used--;
	j->taken = 0;
}

void
res_gpus_free(const uint32_t *gpu, uint32_t n)
{
	uint32_t k;

	for (k = 0; k < n; k++)
		wk.gpus.busy[gpu[k]] = 0;
	wk.gpus_used -= n;
}

void
res_release_gpus(struct job *j)
{
	if (!j->gpus_taken)
		return;
	res_gpus_free(j->gpu, j->ngpu);
	j->gpus_taken = 0;
}

void
res_release(struct job *j)
{
	res_release_slot(j);
	res_release_gpus(j);
}
