/*
 * cores.h - choosing cores for a task, and CPU lists.
 *
 * A worker's cores are "units": a physical core with all the hardware
 * threads (PUs) the worker may use on it, or a single PU (topo.h says
 * which).  Each unit carries the IDs of the topology groups it belongs
 * to, widest first: package, NUMA node, L3 cache, L2 cache.  IDs are
 * unique within a level.
 *
 * cores_pick() chooses n free units for a task, as close together as
 * possible:
 *
 *   1. from the narrowest level to the widest, look for groups with at
 *      least n free units; among them take the best fit, the group with
 *      the fewest free units (ties: the one whose enclosing groups have
 *      the fewest free units, then the lowest position), so that big
 *      free groups stay whole for big tasks;
 *   2. in that group, take the first n free units in topology order;
 *   3. if no package holds n free units, take whole packages' free
 *      units, the packages with the most free units first.
 *
 * It is pure (no hwloc, no system calls), so it is unit-tested with
 * made-up topologies (tests/unit/test_cores.c).
 *
 * CPU lists are the kernel's format ("0-3,8,10-11"), as in
 * /proc/self/status Cpus_allowed_list and Slurm's and cgroup's cpusets.
 */
#ifndef CORES_H
#define CORES_H

#include <stddef.h>
#include <stdint.h>

#define CORES_LEVELS	4	/* package, NUMA node, L3, L2 */
#define CORES_PUS_MAX	8	/* hardware threads of one unit (SMT8) */
#define CORES_CPU_MAX	8192	/* CPU numbers are below this */

struct cores_unit {
	uint32_t group[CORES_LEVELS];	/* widest first */
	uint16_t npu;
	uint16_t pu[CORES_PUS_MAX];	/* OS CPU numbers */
};

/*
 * Choose n units that are free (busy[i] == 0) among u[0..nu-1] and
 * write their indices, ascending, to out[0..n-1].  0, or -1 when fewer
 * than n are free (out is then untouched).
 */
int	cores_pick(const struct cores_unit *u, size_t nu,
	    const unsigned char *busy, uint32_t n, uint32_t *out);

/*
 * Parse a CPU list into a sorted array of distinct CPU numbers below
 * CORES_CPU_MAX.  Returns the count (at least 1), or -1 with a static
 * reason in *why.  *cpus is allocated (free it).
 */
int	cpulist_parse(const char *s, int **cpus, const char **why);
/* Format sorted distinct CPU numbers as a list ("0-3,8"); "" for none. */
char	*cpulist_format(const int *cpus, size_t n);

#endif
