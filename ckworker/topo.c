/*
 * topo.c - the worker's cores as units, from the hwloc topology.
 *
 * Given the CPUs the worker may use (its affinity mask, or --cpus),
 * topo_units() builds one unit per physical core that has at least one
 * of those CPUs (the unit holds all of them), or, when the worker needs
 * more cores than there are physical cores (a batch system that counts
 * hardware threads as CPUs), one unit per hardware thread.  Each unit
 * gets the logical index of its package, NUMA node, L3 and L2 cache
 * (cores.h).  I/O devices are not discovered (they are not needed and
 * would load hwloc's PCI plugins).
 *
 * If hwloc cannot load the topology, every CPU is a unit of one flat
 * group, and the description says why; the caller logs it once.
 */
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "topo.h"

#define NO_GROUP 0x80000000u	/* level missing: the wider level's ID */

static void
flat(const int *cpus, size_t ncpus, struct topo *t, const char *why)
{
	size_t i;

	t->unit = xcalloc(ncpus ? ncpus : 1, sizeof *t->unit);
	for (i = 0; i < ncpus; i++) {
		t->unit[i].npu = 1;
		t->unit[i].pu[0] = (uint16_t)cpus[i];
	}
	t->nunit = ncpus;
	t->by_core = 0;
	t->hwloc = 0;
	snprintf(t->desc, sizeof t->desc, "no topology (%s): one unit per CPU",
	    why);
}

static uint32_t
ancestor_id(hwloc_topology_t topo, hwloc_obj_type_t type, hwloc_obj_t o,
    uint32_t wider)
{
	hwloc_obj_t a = hwloc_get_ancestor_obj_by_type(topo, type, o);

	return a ? a->logical_index : NO_GROUP | wider;
}

static uint32_t
numa_id(hwloc_topology_t topo, hwloc_obj_t o, uint32_t wider)
{
	hwloc_obj_t n = NULL;

	while ((n = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE,
	    n)) != NULL)
		if (n->cpuset && hwloc_bitmap_isincluded(o->cpuset, n->cpuset))
			return n->logical_index;
	return NO_GROUP | wider;
}

/* Add a unit for object o holding the allowed PUs of its cpuset. */
static void
add_unit(hwloc_topology_t topo, hwloc_obj_t o, hwloc_const_bitmap_t allowed,
    struct topo *t)
{
	struct cores_unit *u = &t->unit[t->nunit];
	unsigned pu;

	memset(u, 0, sizeof *u);
	hwloc_bitmap_foreach_begin(pu, o->cpuset) {
		if (hwloc_bitmap_isset(allowed, pu) && u->npu < CORES_PUS_MAX &&
		    pu < CORES_CPU_MAX)
			u->pu[u->npu++] = (uint16_t)pu;
	} hwloc_bitmap_foreach_end();
	if (u->npu == 0)
		return;
	u->group[0] = ancestor_id(topo, HWLOC_OBJ_PACKAGE, o, 0);
	u->group[1] = numa_id(topo, o, u->group[0]);
	u->group[2] = ancestor_id(topo, HWLOC_OBJ_L3CACHE, o, u->group[1]);
	u->group[3] = ancestor_id(topo, HWLOC_OBJ_L2CACHE, o, u->group[2]);
	t->nunit++;
}

static int
count_type(hwloc_topology_t topo, hwloc_obj_type_t type)
{
	int n = hwloc_get_nbobjs_by_type(topo, type);

	return n > 0 ? n : 0;
}

void
topo_units(const int *cpus, size_t ncpus, uint32_t want, struct topo *t)
{
	hwloc_topology_t topo;
	hwloc_bitmap_t allowed;
	hwloc_obj_t o = NULL;
	int ncores = 0;
	size_t i;

	memset(t, 0, sizeof *t);
	if (hwloc_topology_init(&topo) < 0) {
		flat(cpus, ncpus, t, "hwloc_topology_init failed");
		return;
	}
	(void)hwloc_topology_set_io_types_filter(topo,
	    HWLOC_TYPE_FILTER_KEEP_NONE);
	if (hwloc_topology_load(topo) < 0) {
		hwloc_topology_destroy(topo);
		flat(cpus, ncpus, t, "hwloc_topology_load failed");
		return;
	}
	allowed = hwloc_bitmap_alloc();
	for (i = 0; i < ncpus; i++)
		hwloc_bitmap_set(allowed, (unsigned)cpus[i]);
	while ((o = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_CORE, o)) != NULL)
		ncores += o->cpuset && hwloc_bitmap_intersects(o->cpuset, allowed);
	t->by_core = ncores > 0 && (uint32_t)ncores >= want;
	t->unit = xcalloc(ncpus ? ncpus : 1, sizeof *t->unit);
	while ((o = hwloc_get_next_obj_by_type(topo, t->by_core ?
	    HWLOC_OBJ_CORE : HWLOC_OBJ_PU, o)) != NULL && t->nunit < ncpus)
		if (o->cpuset)
			add_unit(topo, o, allowed, t);
	t->hwloc = 1;
	snprintf(t->desc, sizeof t->desc, "hwloc: %d package%s, %d NUMA node%s, "
	    "%d core%s, %d PU%s on the machine; one unit per %s",
	    count_type(topo, HWLOC_OBJ_PACKAGE),
	    count_type(topo, HWLOC_OBJ_PACKAGE) == 1 ? "" : "s",
	    count_type(topo, HWLOC_OBJ_NUMANODE),
	    count_type(topo, HWLOC_OBJ_NUMANODE) == 1 ? "" : "s",
	    count_type(topo, HWLOC_OBJ_CORE),
	    count_type(topo, HWLOC_OBJ_CORE) == 1 ? "" : "s",
	    count_type(topo, HWLOC_OBJ_PU),
	    count_type(topo, HWLOC_OBJ_PU) == 1 ? "" : "s",
	    t->by_core ? "core" : "hardware thread");
	hwloc_bitmap_free(allowed);
	hwloc_topology_destroy(topo);
	if (t->nunit == 0) {
		/* the allowed CPUs are not in hwloc's view (odd cgroup) */
		free(t->unit);
		flat(cpus, ncpus, t, "the allowed CPUs are outside hwloc's "
		    "topology");
	}
}

void
topo_free(struct topo *t)
{
	free(t->unit);
	memset(t, 0, sizeof *t);
}
