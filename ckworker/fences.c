/*
 * fences.c - which of a task's resources are fenced by a cgroup beside
 * the binding it is given (limits.c): its CPUs by a cpuset (cpuset.c,
 * --cpu-limit or spool.yaml's cpu-limit) and its GPUs by a devices
 * cgroup (devices.c, --gpu-limit, gpu-limit), each where the worker can
 * make them.  What cannot be
 * fenced is said once, at the start: a task may then widen its CPU
 * mask, or open other tasks' GPUs.
 *
 * A task's first process moves itself into its sets before it execs
 * (fences_plan: the descriptors for taskspawn.c and identity.c); the
 * spare moves itself ahead into sets of its own, given the task's as
 * it takes it (fences_spare_*).
 */
#include <errno.h>
#include <limits.h>
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

static void
at_exit(void)
{
	fence_cleanup(&cpuset_fence);
	fence_cleanup(&devices_fence);
}

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
 * none: config_limit_method; rc 0: made in where; else why), describe
 * what is in force into desc, and where the fence is not made, stop if
 * it was asked for by name (where: said), else say so (not dry).  1 if
 * it is in force.
 */
static int
settle(const struct fence_kind *k, const char *m, const char *said, int rc,
    const char *where, const char *why, int dry, char *desc,
    size_t descsize)
{
	int asked = strcmp(m, "auto") != 0;

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

	snprintf(why, sizeof why, "%s", said);	/* (none: why it is not) */
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
	snprintf(why, sizeof why, "%s", said);	/* (none: why it is not) */
	if (strcmp(m, gpu_kind.none) != 0 &&
	    (rc = gpus_known(why, sizeof why)) == 0)
		rc = devices_setup(wk.gpus.minor, wk.gpus.n, dry, where,
		    sizeof where, why, sizeof why);
	if (settle(&gpu_kind, m, said, rc, where, why, dry, desc, descsize))
		wk.gpu_method = GM_DEVICES;
}

/* j's key in the devices fence */
static const char *
gpu_key(const struct job *j, char *key, size_t size)
{
	devices_key(j->gpu, j->ngpu, key, size);
	return key;
}

static const char *
cpu_key(const struct job *j)
{
	return j->cpus ? j->cpus : wk.info.cpus;
}

int
fences_plan(const struct job *j, struct spawn_plan *p, char *why,
    size_t whysize)
{
	char w[512], key[KEY_MAX];

	p->cpuset_fd = p->devices_fd = -1;
	if (wk.cpu_method == CM_CPUSET && (p->cpuset_fd = fence_procs(
	    &cpuset_fence, cpu_key(j), w, sizeof w)) < 0) {
		snprintf(why, whysize, "its cpuset: %s", w);
		return -1;
	}
	if (wk.gpu_method == GM_DEVICES && (p->devices_fd = fence_procs(
	    &devices_fence, gpu_key(j, key, sizeof key), w, sizeof w)) < 0) {
		snprintf(why, whysize, "its devices cgroup: %s", w);
		return -1;
	}
	return 0;
}

/* the spare's sets' cgroup.procs, "" for none */
static char spare_path[2][PATH_MAX];

int
fences_spare_prepare(char *why, size_t whysize)
{
	char w[512];

	spare_path[0][0] = spare_path[1][0] = 0;
	if (wk.cpu_method == CM_CPUSET && fence_spare(&cpuset_fence,
	    spare_path[0], sizeof spare_path[0], w, sizeof w) < 0) {
		snprintf(why, whysize, "its cpuset: %s", w);
		return -1;
	}
	if (wk.gpu_method == GM_DEVICES && fence_spare(&devices_fence,
	    spare_path[1], sizeof spare_path[1], w, sizeof w) < 0) {
		snprintf(why, whysize, "its devices cgroup: %s", w);
		return -1;
	}
	return 0;
}

size_t
fences_spare_paths(const char *out[2])
{
	size_t n = 0, i;

	for (i = 0; i < 2; i++)
		if (spare_path[i][0])
			out[n++] = spare_path[i];
	return n;
}

int
fences_spare_take(const struct job *j, char *why, size_t whysize)
{
	char w[512], key[KEY_MAX];

	if (spare_path[0][0] && fence_spare_take(&cpuset_fence, cpu_key(j),
	    w, sizeof w) < 0) {
		snprintf(why, whysize, "its cpuset: %s", w);
		return -1;
	}
	spare_path[0][0] = 0;
	if (spare_path[1][0] && fence_spare_take(&devices_fence,
	    gpu_key(j, key, sizeof key), w, sizeof w) < 0) {
		snprintf(why, whysize, "its devices cgroup: %s", w);
		return -1;
	}
	spare_path[1][0] = 0;
	return 0;
}

void
fences_spare_forget(void)
{
	fence_spare_forget(&cpuset_fence);
	fence_spare_forget(&devices_fence);
	spare_path[0][0] = spare_path[1][0] = 0;
}
