/*
 * cpuset.c - tasks fenced to their CPUs by cpuset cgroups (cgroup v1),
 * one per set of CPUs (fence.c).
 *
 * A task's first process binds itself to the task's CPUs
 * (sched_setaffinity, limits.c), but a task may call sched_setaffinity
 * as well and widen its mask to every CPU of its cpuset: the machine's,
 * or the batch job's, where it would run on the cores of the worker's
 * other tasks.  In a cpuset cgroup of its CPUs it cannot: the kernel
 * cuts any mask asked to the cpuset's CPUs (and refuses one outside
 * them with EINVAL), and what the task starts inherits the cpuset.
 *
 * A set is a CPU list, written to cpuset.cpus; each cpuset needs memory
 * nodes too, written first (v1 takes no process into a cpuset without
 * both): BASE's (cpuset.effective_mems).  Rewriting the spare's
 * cpuset.cpus costs about 0.3 ms and moves the spare onto the CPUs.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cgfiles.h"
#include "cpuset.h"

#define MEMS_MAX	4096	/* the text of cpuset.effective_mems */

static char mems[MEMS_MAX];	/* BASE's memory nodes */

static int
apply(struct fence *f, const char *dir, const char *cpus, int fresh,
    char *why, size_t whysize)
{
	char path[PATH_MAX + 32], shown[PATH_MAX + 64];
	const char *file = "cpuset.effective_mems", *val = "";

	if (fresh && mems[0] == 0) {
		snprintf(path, sizeof path, "%s/%s", f->base, file);
		if (cgfiles_read_at(-1, path, mems, sizeof mems) <= 0) {
			snprintf(why, whysize, "read: %s: %s", path, errno ?
			    strerror(errno) : "empty");
			return -1;
		}
		mems[strcspn(mems, "\n")] = 0;
	}
	file = "cpuset.mems";
	snprintf(path, sizeof path, "%s/%s", dir, file);
	if (fresh && cgfiles_write_at(f->rootfd, path, val = mems) < 0)
		goto fail;
	file = "cpuset.cpus";
	snprintf(path, sizeof path, "%s/%s", dir, file);
	if (cgfiles_write_at(f->rootfd, path, val = cpus) < 0)
		goto fail;
	return 0;
fail:
	snprintf(why, whysize, "write: %s: \"%s\": %s", fence_path(f, path,
	    shown, sizeof shown), val, strerror(errno));
	return -1;
}

struct fence cpuset_fence = { .ctl = "cpuset", .prefix = "cpus",
	.apply = apply, .rootfd = -1 };

int
cpuset_setup(const char *cpus, int dry, char *where, size_t wsize,
    char *why, size_t whysize)
{
	return fence_setup(&cpuset_fence, cpus, dry, where, wsize, why,
	    whysize);
}
