/*
 * cpuset.h - tasks fenced to their CPUs by cpuset cgroups (cgroup v1).
 * See cpuset.c.
 */
#ifndef CPUSET_H
#define CPUSET_H

#include "fence.h"

/* Its sets' keys are CPU lists, as the tasks' ("0-3,8"). */
extern struct fence cpuset_fence;

/* fence_setup for the worker's CPUs cpus (a CPU list). */
int	cpuset_setup(const char *cpus, int dry, char *where, size_t wsize,
	    char *why, size_t whysize);

#endif
