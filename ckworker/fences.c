/*
 * fences.c - which of a task's resources are fenced by a cgroup beside
 * the binding it is given (limits.c): its CPUs by a cpuset (cpuset.c,
 * --cpu-limit or spool.yaml's cpu-limit) and its GPUs by a devices
 * cgroup (devices.c, --gpu-limit or gpu-limit), each where the worker
 * can make them.  What cannot be fenced is said once, at the start: a
 * task may then widen its CPU mask, or open other tasks' GPUs.
 *
 * A task's first process moves itself into its sets before it execs
 * (fences_plan: the descriptors for taskspawn.c and identity.c); the
 * spare moves itself ahead into sets of its own, given the task's as
 * it takes it (fences_spare_*).  Every such step goes through use[],
 * one row a fence: a third would be one row more.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpuset.h"
#include "devices.h"
#include "msg.h"
#include "taskspawn.h"
#include "worker.h"

const char *const cpu_method_name[CM_N] = { "affinity", "cpuset" };
const char *const gpu_method_name[GM_N] = { "env", "devices" };

#define KEY_MAX	(TASK_GPUS_MAX * 11)	/* "0,1,...": a GPU set's key */

static void at_exit(void);

static void
fenced(int dry)
{
	static int registered;

	if (!dry && !registered++ && atexit(at_exit) != 0)
		msg_fatal("atexit: %m");
}

/* What a fence is called, and what is said where it is not made. */
struct fence_kind {
	const char *fence, *none;	/* the methods: "cpuset", "affinity" */
	const char *alone;	/* in force without it */
	const char *warning;	/* said at the start without it */
	const char *not;	/* before why: "no cpuset" */
};

static const struct fence_kind cpu_kind = { "cpuset", "affinity",
	"affinity (a task may widen its CPU mask)", "tasks are kept on their "
	"CPUs by sched_setaffinity only, and a task may widen its mask to "
	"other tasks' CPUs", "cpuset" };
static const struct fence_kind gpu_kind = { "devices", "env",
	"env (CUDA_VISIBLE_DEVICES alone: a task may open other tasks' GPUs)",
	"tasks are given their GPUs by CUDA_VISIBLE_DEVICES only, and a task "
	"may open other tasks' GPUs", "devices cgroup" };

/*
 * After the setup of k's fence for METHOD m (one of auto, the fence,
 * none: config_limit_method; rc 0: made in where; else why, or for
 * none where it was asked for: said), describe what is in force into
 * desc, and where the fence is not made, stop if it was asked for by
 * name, else say so (not dry).  1 if it is in force.
 */
static int
settle(const struct fence_kind *k, const char *m, const char *said, int rc,
    const char *where, const char *why, int dry, char *desc,
    size_t descsize)
{
	int asked = strcmp(m, "auto") != 0;

	if (strcmp(m, k->none) == 0)
		why = said;

	if (rc == 0) {
		snprintf(desc, descsize, "%s (%s%s)", k->fence, dry ?
		    "would use " : "", where);
		fenced(dry);
		return 1;
	}
	if (strcmp(m, k->fence) == 0)
		msg_fatal("%s: %s", said, why);
	snprintf(desc, descsize, "%s; %s%s%s%s", k->alone, asked ? "" :
	    "not ", asked ? "" : k->fence, asked ? "" : ": ", why);
	if (!dry)
		msg_warn("%s (%s%s%s%s)", k->warning, asked ? "" : "no ",
		    asked ? "" : k->not, asked ? "" : ": ", why);
	return 0;
}

void
limits_cpu_init(const char *method, const char *said, int dry, char *desc,
    size_t descsize)
{
	const char *m = method ? method : "auto";
	char where[PATH_MAX], why[768];
	int rc = -1;

	if (strcmp(m, cpu_kind.none) != 0)
		rc = cpuset_setup(wk.info.cpus, dry, where, sizeof where, why,
		    sizeof why);
	wk.cpu_method = settle(&cpu_kind, m, said, rc, where, why, dry, desc,
	    descsize) ? CM_CPUSET : CM_AFFINITY;
}

/*
 * 0 if every GPU's device number and UUID are known, else -1 with why.
 * The UUID: CUDA numbers only the GPUs a process may open, so in a
 * devices cgroup a task's GPU is no longer the index the worker knows
 * it by, and the task is given its GPUs by UUID (run.c).
 */
static int
gpus_known(char *why, size_t whysize)
{
	size_t i;

	for (i = 0; i < wk.gpus.n; i++)
		if (wk.gpus.minor == NULL || wk.gpus.minor[i] < 0 ||
		    wk.gpus.uuid == NULL || wk.gpus.uuid[i][0] == 0) {
			snprintf(why, whysize, "GPU %s: its device file's "
			    "number or its UUID is not known (NVML gives them)",
			    wk.gpus.id[i]);
			return -1;
		}
	return 0;
}

void
limits_gpu_init(const char *method, const char *said, int dry, char *desc,
    size_t descsize)
{
	const char *m = method ? method : "auto";
	char where[PATH_MAX], why[768];
	int rc = -1;

	wk.gpu_method = GM_ENV;
	if (wk.gpus.n == 0) {
		snprintf(desc, descsize, "none (no GPUs)");
		return;
	}
	if (strcmp(m, gpu_kind.none) != 0 &&
	    (rc = gpus_known(why, sizeof why)) == 0)
		rc = devices_setup(wk.gpus.minor, wk.gpus.n, dry, where,
		    sizeof where, why, sizeof why);
	if (settle(&gpu_kind, m, said, rc, where, why, dry, desc, descsize))
		wk.gpu_method = GM_DEVICES;
}

/* j's key in the cpuset fence: its CPUs */
static const char *
cpu_key(const struct job *j, char *key, size_t size)
{
	(void)key;
	(void)size;
	return j->cpus ? j->cpus : wk.info.cpus;
}

/* j's key in the devices fence: its GPUs */
static const char *
gpu_key(const struct job *j, char *key, size_t size)
{
	devices_key(j->gpu, j->ngpu, key, size);
	return key;
}

static int
cpu_fenced(void)
{
	return wk.cpu_method == CM_CPUSET;
}

static int
gpu_fenced(void)
{
	return wk.gpu_method == GM_DEVICES;
}

/* Each fence: whether it is in force, a task's key in it, what it is
 * called in messages, and its descriptor in a spawn plan. */
static const struct fence_use {
	struct fence *f;
	int	(*fenced)(void);
	const char *(*key)(const struct job *, char *, size_t);
	const char *words;
	size_t	plan_fd;
} use[] = {
	{ &cpuset_fence, cpu_fenced, cpu_key, "its cpuset",
	    offsetof(struct spawn_plan, cpuset_fd) },
	{ &devices_fence, gpu_fenced, gpu_key, "its devices cgroup",
	    offsetof(struct spawn_plan, devices_fd) },
};
#define NUSE	(sizeof use / sizeof *use)

int
fences_plan(const struct job *j, struct spawn_plan *p, char *why,
    size_t whysize)
{
	char w[512], key[KEY_MAX];
	size_t i;
	int *fd;

	for (i = 0; i < NUSE; i++)
		*(int *)((char *)p + use[i].plan_fd) = -1;
	for (i = 0; i < NUSE; i++) {
		fd = (int *)((char *)p + use[i].plan_fd);
		if (use[i].fenced() && (*fd = fence_procs(use[i].f,
		    use[i].key(j, key, sizeof key), w, sizeof w)) < 0) {
			snprintf(why, whysize, "%s: %s", use[i].words, w);
			return -1;
		}
	}
	return 0;
}

/* the spare's sets' cgroup.procs, by use[], "" for none */
static char spare_path[NUSE][PATH_MAX];

int
fences_spare_prepare(char *why, size_t whysize)
{
	char w[512];
	size_t i;

	for (i = 0; i < NUSE; i++)
		spare_path[i][0] = 0;
	for (i = 0; i < NUSE; i++)
		if (use[i].fenced() && fence_spare(use[i].f, spare_path[i],
		    sizeof spare_path[i], w, sizeof w) < 0) {
			snprintf(why, whysize, "%s: %s", use[i].words, w);
			return -1;
		}
	return 0;
}

size_t
fences_spare_paths(const char *out[NUSE])
{
	size_t n = 0, i;

	for (i = 0; i < NUSE; i++)
		if (spare_path[i][0])
			out[n++] = spare_path[i];
	return n;
}

int
fences_spare_take(const struct job *j, char *why, size_t whysize)
{
	char w[512], key[KEY_MAX];
	size_t i;

	for (i = 0; i < NUSE; i++) {
		if (spare_path[i][0] && fence_spare_take(use[i].f,
		    use[i].key(j, key, sizeof key), w, sizeof w) < 0) {
			snprintf(why, whysize, "%s: %s", use[i].words, w);
			return -1;
		}
		spare_path[i][0] = 0;
	}
	return 0;
}

void
fences_spare_forget(void)
{
	size_t i;

	for (i = 0; i < NUSE; i++) {
		fence_spare_forget(use[i].f);
		spare_path[i][0] = 0;
	}
}

static void
at_exit(void)
{
	size_t i;

	for (i = 0; i < NUSE; i++)
		fence_cleanup(use[i].f);
}
