/*
 * cpuset.h - tasks fenced to their CPUs by cpuset cgroups (cgroup v1).
 * See cpuset.c.
 */
#ifndef CPUSET_H
#define CPUSET_H

#include <stddef.h>

/*
 * Find the worker's own cpuset cgroup, remove those of dead workers,
 * and create BASE/ckworker.PID.START for the CPUs cpus (a CPU list,
 * "0-3,8").  dry: only check that it would work and leave nothing.
 * 0 with the directory in where, or -1 with the reason in why.
 */
int	cpuset_setup(const char *cpus, int dry, char *where, size_t wsize,
	    char *why, size_t whysize);

/*
 * The cgroup.procs of the cpuset of exactly the CPUs cpus, made the
 * first time and kept open: a task's process writes "0" to it to move
 * itself in (taskspawn.c, identity.c).  The caller does not close it.
 * -1 with why.
 */
int	cpuset_procs(const char *cpus, char *why, size_t whysize);

/*
 * The spare (spare.c): a cpuset of its own, made ahead with the CPUs
 * of the last task started, whose cgroup.procs path goes into path;
 * taken by a task of CPUs cpus (rewritten if they differ; from then on
 * it is that set's); forgotten when the spare goes.  0, or -1 with why.
 */
int	cpuset_spare(char *path, size_t size, char *why, size_t whysize);
int	cpuset_spare_take(const char *cpus, char *why, size_t whysize);
void	cpuset_spare_forget(void);

/* Leaving: kill what is left in the worker's cpusets and remove them. */
void	cpuset_cleanup(void);

#endif
