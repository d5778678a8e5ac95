/*
 * topo.h - the worker's cores as units (cores.h), from hwloc.  See topo.c.
 */
#ifndef TOPO_H
#define TOPO_H

#include <stddef.h>
#include <stdint.h>

#include "cores.h"

struct topo {
	struct cores_unit *unit;
	size_t	nunit;
	int	by_core;	/* units are cores (else hardware threads) */
	int	hwloc;		/* built from hwloc (else flat) */
	char	desc[256];	/* what was found, for the log */
};

/*
 * Units for the allowed CPUs (sorted, distinct); want is how many
 * cores the worker offers (physical cores are units if there are at
 * least that many).
 */
void	topo_units(const int *cpus, size_t ncpus, uint32_t want,
	    struct topo *t);
void	topo_free(struct topo *t);

#endif
